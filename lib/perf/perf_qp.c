/*
 * A perftest QP's life, written once for every mode and every provider: created with
 * perftest's capabilities, RESET -> INIT, then RTR and RTS with the masks perftest's
 * ctx_modify_qp_to_{init,rtr,rts} give each connection type; and the request each test posts.
 */
#include <errno.h>

#include "perf_private.h"

void perf_qp_cap(const struct roce_perf_conf *conf, struct roce_qp_cap *cap)
{
	*cap = (struct roce_qp_cap){
		.max_send_wr = conf->tx_depth + 1,
		.max_recv_wr = conf->rx_depth + 1,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.max_inline_data = conf->inline_size,
	};
}

unsigned int perf_qp_init_attr(enum roce_qp_type type, bool remote_access, struct roce_qp_attr *a)
{
	*a = (struct roce_qp_attr){
		.qp_state = ROCE_QPS_INIT,
		.port_num = 1,
		.qkey = PERF_QKEY,
		.qp_access_flags = remote_access ? ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
				   ROCE_ACCESS_REMOTE_ATOMIC : 0,
	};
	return ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
	       (type == ROCE_QPT_UD ? ROCE_QP_QKEY : ROCE_QP_ACCESS_FLAGS);
}

unsigned int perf_qp_rtr_attr(const struct roce_perf_conf *conf, const struct perf_qp_path *path,
			      struct roce_qp_attr *a)
{
	*a = (struct roce_qp_attr){
		.qp_state = ROCE_QPS_RTR,
		.path_mtu = conf->mtu,
		.dest_qp_num = path->dest_qpn,
		.rq_psn = path->rq_psn,
		.max_dest_rd_atomic = path->max_dest_rd_atomic,
		.min_rnr_timer = conf->min_rnr_timer,
		.ah_attr = path->ah,
	};
	if (conf->qp_type == ROCE_QPT_UD)
		return ROCE_QP_STATE;
	if (conf->qp_type == ROCE_QPT_UC)
		return ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN |
		       ROCE_QP_RQ_PSN;
	return ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN |
	       ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER;
}

unsigned int perf_qp_rts_attr(const struct roce_perf_conf *conf, const struct perf_qp_path *path,
			      struct roce_qp_attr *a)
{
	*a = (struct roce_qp_attr){
		.qp_state = ROCE_QPS_RTS,
		.sq_psn = path->sq_psn,
		.timeout = conf->timeout,
		.retry_cnt = conf->retry_cnt,
		.rnr_retry = conf->rnr_retry,
		.max_rd_atomic = path->max_rd_atomic,
	};
	if (conf->qp_type != ROCE_QPT_RC)
		return ROCE_QP_STATE | ROCE_QP_SQ_PSN;
	return ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT |
	       ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC;
}

struct roce_qp *perf_qp_create(struct roce_pd *pd, struct roce_cq *scq, struct roce_cq *rcq,
			       const struct roce_perf_conf *conf)
{
	struct roce_qp_init_attr init = { .send_cq = scq, .recv_cq = rcq, .qp_type = conf->qp_type };

	perf_qp_cap(conf, &init.cap);
	return roce_create_qp(pd, &init);
}

int perf_qp_init(struct roce_qp *qp, enum roce_qp_type type, bool remote_access)
{
	struct roce_qp_attr a;
	unsigned int mask = perf_qp_init_attr(type, remote_access, &a);

	return roce_modify_qp(qp, &a, mask);
}

int perf_qp_connect(struct roce_qp *qp, const struct roce_perf_conf *conf,
		    const struct perf_qp_path *path)
{
	struct roce_qp_attr a;
	unsigned int mask = perf_qp_rtr_attr(conf, path, &a);
	int rc = roce_modify_qp(qp, &a, mask);

	if (rc != 0)
		return rc;
	mask = perf_qp_rts_attr(conf, path, &a);
	return roce_modify_qp(qp, &a, mask);
}

void perf_wr_fill(const struct roce_perf_conf *conf, uint64_t i, bool signaled,
		  const struct perf_target *t, struct roce_sge *sge, struct roce_send_wr *wr)
{
	*wr = (struct roce_send_wr){
		.wr_id = i,
		.sg_list = sge,
		.num_sge = 1,
		.send_flags = signaled ? ROCE_SEND_SIGNALED : 0,
	};
	if (conf->inline_size != 0 && conf->size <= conf->inline_size)
		wr->send_flags |= ROCE_SEND_INLINE;
	switch (conf->test) {
	case ROCE_PERF_WRITE_BW:
	case ROCE_PERF_WRITE_LAT:
		wr->opcode = ROCE_WR_RDMA_WRITE;
		wr->wr.rdma.remote_addr = t->remote;
		wr->wr.rdma.rkey = t->rkey;
		break;
	case ROCE_PERF_READ_BW:
	case ROCE_PERF_READ_LAT:
		wr->opcode = ROCE_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = t->remote;
		wr->wr.rdma.rkey = t->rkey;
		wr->send_flags &= ~(unsigned int)ROCE_SEND_INLINE;	/* nothing to carry */
		break;
	case ROCE_PERF_ATOMIC_BW:
		/* every QP adds to one counter at the peer: each add must land exactly once */
		wr->opcode = conf->cmp_swap ? ROCE_WR_ATOMIC_CMP_AND_SWP :
			     ROCE_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = t->atomic;
		wr->wr.atomic.rkey = t->rkey;
		wr->wr.atomic.compare_add = PERF_ATOMIC_ADD;
		wr->wr.atomic.swap = i;
		sge->length = 8;
		break;
	default:
		wr->opcode = ROCE_WR_SEND;
		if (conf->qp_type == ROCE_QPT_UD) {
			wr->wr.ud.ah = t->ah;
			wr->wr.ud.remote_qpn = t->remote_qpn;
			wr->wr.ud.remote_qkey = PERF_QKEY;
		}
		break;
	}
}
