/*
 * A perftest QP's life before its first work request, written once for every mode: created
 * with perftest's capabilities, RESET -> INIT, then RTR and RTS with the masks perftest's
 * ctx_modify_qp_to_{init,rtr,rts} give each connection type.
 */
#include <errno.h>

#include "perf_private.h"

struct roce_qp *perf_qp_create(struct roce_pd *pd, struct roce_cq *scq, struct roce_cq *rcq,
			       const struct roce_perf_conf *conf)
{
	struct roce_qp_init_attr init = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = conf->qp_type,
		.cap = {
			.max_send_wr = conf->tx_depth + 1,
			.max_recv_wr = conf->rx_depth + 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = conf->inline_size,
		},
	};

	return roce_create_qp(pd, &init);
}

int perf_qp_init(struct roce_qp *qp, enum roce_qp_type type, bool remote_access)
{
	struct roce_qp_attr a = { 0 };
	bool ud = type == ROCE_QPT_UD;

	a.qp_state = ROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = PERF_QKEY;
	a.qp_access_flags = remote_access ? ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
					    ROCE_ACCESS_REMOTE_ATOMIC : 0;
	return roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
			      (ud ? ROCE_QP_QKEY : ROCE_QP_ACCESS_FLAGS));
}

int perf_qp_connect(struct roce_qp *qp, const struct roce_perf_conf *conf,
		    const struct perf_qp_path *path)
{
	struct roce_qp_attr a = { 0 };
	bool ud = conf->qp_type == ROCE_QPT_UD, uc = conf->qp_type == ROCE_QPT_UC;
	int rc;

	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = conf->mtu;
	a.dest_qp_num = path->dest_qpn;
	a.rq_psn = path->rq_psn;
	a.max_dest_rd_atomic = path->max_dest_rd_atomic;
	a.min_rnr_timer = conf->min_rnr_timer;
	a.ah_attr = path->ah;
	if (ud)
		rc = roce_modify_qp(qp, &a, ROCE_QP_STATE);
	else if (uc)
		rc = roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				    ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN);
	else
		rc = roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				    ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
				    ROCE_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;

	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = path->sq_psn;
	a.timeout = conf->timeout;
	a.retry_cnt = conf->retry_cnt;
	a.rnr_retry = conf->rnr_retry;
	a.max_rd_atomic = path->max_rd_atomic;
	if (ud || uc)
		return roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN);
	return roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
			      ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC);
}
