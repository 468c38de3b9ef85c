/* Queue pairs: creation, the state machine with ibv_modify_qp's attribute rules, posting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "verbs_private.h"

/* One row of the transition table: required and optional attributes per QP type. */
struct qp_transition {
	bool valid;
	unsigned int req[3];	/* by type: RC, UC, UD */
	unsigned int opt[3];
};

#define S(x) ROCE_QPS_##x
#define A(x) ROCE_QP_##x

/* IBA 10.3.1 / ib_modify_qp_is_ok(): what each transition needs and allows. */
static const struct qp_transition qp_trans[ROCE_QPS_NUM][ROCE_QPS_NUM] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.req = { A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				 A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				 A(PKEY_INDEX) | A(PORT) | A(QKEY) } },
	},
	[S(INIT)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.opt = { A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				 A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				 A(PKEY_INDEX) | A(PORT) | A(QKEY) } },
		[S(RTR)] = { .valid = true,
			.req = { A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
				 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
				 A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
				 0 },
			.opt = { A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				 A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				 A(PKEY_INDEX) | A(QKEY) } },
	},
	[S(RTR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.req = { A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
				 A(MAX_QP_RD_ATOMIC),
				 A(SQ_PSN),
				 A(SQ_PSN) },
			.opt = { A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) |
				 A(PATH_MIG_STATE),
				 A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
				 A(CUR_STATE) | A(QKEY) } },
	},
	[S(RTS)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE) |
				 A(MIN_RNR_TIMER),
				 A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE),
				 A(CUR_STATE) | A(QKEY) } },
		[S(SQD)] = { .valid = true, .opt = { A(EN_SQD_ASYNC_NOTIFY), A(EN_SQD_ASYNC_NOTIFY),
						    A(EN_SQD_ASYNC_NOTIFY) } },
	},
	[S(SQD)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE) |
				 A(MIN_RNR_TIMER),
				 A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE),
				 A(CUR_STATE) | A(QKEY) } },
		[S(SQD)] = { .valid = true,
			.opt = { A(PKEY_INDEX) | A(QKEY) | A(AV) | A(ACCESS_FLAGS) | A(TIMEOUT) |
				 A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
				 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) | A(PATH_MTU),
				 A(PKEY_INDEX) | A(AV) | A(ACCESS_FLAGS) | A(PATH_MTU),
				 A(PKEY_INDEX) | A(QKEY) } },
	},
	[S(SQE)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true, .opt = { 0, A(CUR_STATE) | A(ACCESS_FLAGS),
						    A(CUR_STATE) | A(QKEY) } },
	},
	[S(ERR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
	},
};

static const char *const qp_state_name[] = {
	[ROCE_QPS_RESET] = "RESET", [ROCE_QPS_INIT] = "INIT", [ROCE_QPS_RTR] = "RTR",
	[ROCE_QPS_RTS] = "RTS", [ROCE_QPS_SQD] = "SQD", [ROCE_QPS_SQE] = "SQE",
	[ROCE_QPS_ERR] = "ERR",
};
ROCE_STATIC_ASSERT(ROCE_DIM(qp_state_name) == ROCE_QPS_NUM);

const char *roce_qp_state_name(enum roce_qp_state state)
{
	return (unsigned int)state < ROCE_QPS_NUM ? qp_state_name[state] : "?";
}

uint32_t roce_qp_num(const struct roce_qp *qp)
{
	return qp->qpn;
}

static uint32_t type_index(enum roce_qp_type t)
{
	return t == ROCE_QPT_RC ? 0 : t == ROCE_QPT_UC ? 1 : 2;
}

struct roce_qp *roce_create_qp(struct roce_pd *pd, struct roce_qp_init_attr *init)
{
	struct roce_device *dev = pd->dev;
	struct roce_qp_cap *cap = &init->cap;
	struct roce_qp *qp;
	uint32_t slot = UINT32_MAX;
	void *tab;

	if ((init->qp_type != ROCE_QPT_RC && init->qp_type != ROCE_QPT_UC &&
	     init->qp_type != ROCE_QPT_UD) || init->send_cq == NULL ||
	    (init->recv_cq == NULL && init->srq == NULL) ||
	    cap->max_send_wr > dev->attr.max_qp_wr || cap->max_recv_wr > dev->attr.max_qp_wr ||
	    cap->max_send_sge > dev->attr.max_sge || cap->max_recv_sge > dev->attr.max_sge ||
	    cap->max_inline_data > dev->attr.max_inline_data) {
		errno = EINVAL;
		return NULL;
	}
	for (uint32_t n = 0; n < dev->attr.max_qp; n++) {
		uint32_t i = (dev->qp_next + n) % dev->attr.max_qp;

		if (i >= dev->qp_cap || dev->qp[i] == NULL) {
			slot = i;
			break;
		}
	}
	if (slot == UINT32_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	tab = verbs_table_fit(dev->qp, &dev->qp_cap, slot);
	if (tab == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	dev->qp = tab;
	qp = calloc(1, dev->ops->qp_size);
	if (qp == NULL)
		return NULL;
	if (cap->max_send_wr == 0)
		cap->max_send_wr = 1;
	if (cap->max_send_sge == 0)
		cap->max_send_sge = 1;
	qp->sq_size = rte_align32pow2(cap->max_send_wr);
	qp->sq_mask = qp->sq_size - 1;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->sq_sge = calloc((size_t)qp->sq_size * cap->max_send_sge, sizeof(*qp->sq_sge));
	if (cap->max_inline_data != 0)
		qp->sq_inline = calloc(qp->sq_size, cap->max_inline_data);
	if (qp->sq == NULL || qp->sq_sge == NULL || (cap->max_inline_data && qp->sq_inline == NULL))
		goto err_free_sq;
	if (init->srq == NULL && verbs_rq_init(&qp->rq, cap->max_recv_wr, cap->max_recv_sge) != 0)
		goto err_free_sq;
	for (uint32_t i = 0; i < qp->sq_size; i++) {
		qp->sq[i].sge = &qp->sq_sge[(size_t)i * cap->max_send_sge];
		if (qp->sq_inline != NULL)
			qp->sq[i].inline_data = &qp->sq_inline[(size_t)i * cap->max_inline_data];
	}
	qp->pd = pd;
	qp->dev = dev;
	qp->qpn = dev->conf.qpn_base + slot;
	qp->type = init->qp_type;
	qp->state = ROCE_QPS_RESET;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->srq = init->srq;
	qp->sq_sig_all = init->sq_sig_all;
	qp->attr.cap = *cap;
	/* UD has no path MTU attribute: its messages are bounded by the port's active MTU */
	qp->attr.path_mtu = qp->type == ROCE_QPT_UD ? pd->dev->port.active_mtu : ROCE_MTU_1024;
	qp->mtu = roce_mtu_bytes(qp->attr.path_mtu);
	pd->refs++;
	qp->scq->refs++;
	if (qp->rcq != NULL)
		qp->rcq->refs++;
	if (qp->srq != NULL)
		qp->srq->refs++;
	dev->ops->qp_init(qp);
	dev->qp[slot] = qp;
	dev->qp_next = slot + 1;
	dev->nqp++;
	return qp;

err_free_sq:
	free(qp->sq_inline);
	free(qp->sq_sge);
	free(qp->sq);
	free(qp);
	errno = ENOMEM;
	return NULL;
}

int roce_destroy_qp(struct roce_qp *qp)
{
	struct roce_device *dev;

	if (qp == NULL)
		return 0;
	dev = qp->dev;
	dev->ops->qp_destroy(qp);
	dev->qp[qp->qpn - dev->conf.qpn_base] = NULL;
	dev->nqp--;
	qp->pd->refs--;
	qp->scq->refs--;
	if (qp->rcq != NULL)
		qp->rcq->refs--;
	if (qp->srq != NULL)
		qp->srq->refs--;
	verbs_rq_free(&qp->rq);
	free(qp->sq_inline);
	free(qp->sq_sge);
	free(qp->sq);
	free(qp);
	return 0;
}

void verbs_qp_set_state(struct roce_qp *qp, enum roce_qp_state state)
{
	enum roce_qp_state old = qp->state;

	qp->state = state;
	qp->attr.qp_state = state;
	qp->dev->ops->qp_state_changed(qp, old);
}

static int apply_attrs(struct roce_qp *qp, const struct roce_qp_attr *attr, unsigned int mask)
{
	int rc;

	if (mask & ROCE_QP_PATH_MTU) {
		if (roce_mtu_bytes(attr->path_mtu) == 0 || attr->path_mtu > qp->dev->port.active_mtu)
			return -EINVAL;
		qp->attr.path_mtu = attr->path_mtu;
		qp->mtu = roce_mtu_bytes(attr->path_mtu);
	}
	if ((mask & ROCE_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & ROCE_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & (ROCE_QP_RETRY_CNT)) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & ROCE_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & ROCE_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & ROCE_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > qp->dev->attr.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & ROCE_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic > qp->dev->attr.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & ROCE_QP_AV) && attr->ah_attr.ip_ver != 4 && attr->ah_attr.ip_ver != 6)
		return -EINVAL;
	if ((mask & (ROCE_QP_RQ_PSN)) && attr->rq_psn > ROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & (ROCE_QP_SQ_PSN)) && attr->sq_psn > ROCE_PSN_MASK)
		return -EINVAL;
	if ((mask & ROCE_QP_DEST_QPN) && attr->dest_qp_num > ROCE_QPN_MASK)
		return -EINVAL;

	rc = qp->dev->ops->qp_modify(qp, attr, mask);
	if (rc != 0)
		return rc;
	if (mask & ROCE_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & ROCE_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	if (mask & ROCE_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn;
	if (mask & ROCE_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn;
	if (mask & ROCE_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	if (mask & ROCE_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & ROCE_QP_AV)
		qp->attr.ah_attr = attr->ah_attr;
	if (mask & ROCE_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & ROCE_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & ROCE_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & ROCE_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & ROCE_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & ROCE_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & ROCE_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	return 0;
}

/* Back to RESET: empty both queues; the provider forgets its state. */
static void qp_reset(struct roce_qp *qp)
{
	qp->sq_head = qp->sq_tail = 0;
	qp->rq.head = qp->rq.tail = 0;
	qp->dev->ops->qp_reset(qp);
}

int roce_modify_qp(struct roce_qp *qp, const struct roce_qp_attr *attr, unsigned int mask)
{
	enum roce_qp_state cur = qp->state, next = cur;
	unsigned int req = 0, opt = 0, t = type_index(qp->type);
	int rc;

	if ((mask & ROCE_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	if (mask & ROCE_QP_STATE) {
		if ((unsigned int)attr->qp_state >= ROCE_QPS_NUM)
			return -EINVAL;
		next = attr->qp_state;
	}
	if (!qp_trans[cur][next].valid)
		return -EINVAL;
	req = qp_trans[cur][next].req[t];
	opt = qp_trans[cur][next].opt[t];
	mask &= ~(unsigned int)ROCE_QP_STATE;
	if ((mask & req) != req || (mask & ~(req | opt)) != 0)
		return -EINVAL;
	rc = apply_attrs(qp, attr, mask);
	if (rc != 0)
		return rc;
	if (next == ROCE_QPS_RESET && cur != ROCE_QPS_RESET)
		qp_reset(qp);
	if (next != cur)
		verbs_qp_set_state(qp, next);
	return 0;
}

int roce_query_qp(const struct roce_qp *qp, struct roce_qp_attr *attr,
		  struct roce_qp_init_attr *init)
{
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	qp->dev->ops->qp_query(qp, attr);
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->send_cq = qp->scq;
		init->recv_cq = qp->rcq;
		init->srq = qp->srq;
		init->cap = qp->attr.cap;
		init->qp_type = qp->type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

static bool opcode_valid(enum roce_qp_type type, enum roce_wr_opcode op)
{
	switch (op) {
	case ROCE_WR_SEND:
	case ROCE_WR_SEND_WITH_IMM:
		return true;
	case ROCE_WR_RDMA_WRITE:
	case ROCE_WR_RDMA_WRITE_WITH_IMM:
		return type != ROCE_QPT_UD;
	case ROCE_WR_RDMA_READ:
	case ROCE_WR_ATOMIC_CMP_AND_SWP:
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
	case ROCE_WR_SEND_WITH_INV:
		return type == ROCE_QPT_RC;
	default:
		return false;
	}
}

/* May the frames of @p sge carry its bytes by reference (ROCE_ACCESS_ZERO_COPY)? */
static bool sge_zero_copy(const struct roce_device *dev, const struct roce_sge *sge)
{
	const struct roce_mr *mr = verbs_mr_at(dev, sge->lkey);

	return mr != NULL && mr->lkey == sge->lkey && (mr->access & ROCE_ACCESS_ZERO_COPY) &&
	       sge->addr >= (uintptr_t)mr->addr && sge->addr - (uintptr_t)mr->addr <= mr->length &&
	       sge->length <= mr->length - (sge->addr - (uintptr_t)mr->addr);
}

static int post_one(struct roce_qp *qp, const struct roce_send_wr *wr)
{
	struct verbs_send_wqe *wqe;
	uint64_t length;

	if (!opcode_valid(qp->type, wr->opcode) || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->attr.cap.max_send_sge)
		return -EINVAL;
	if (qp->type == ROCE_QPT_UD && wr->wr.ud.ah == NULL)
		return -EINVAL;
	if (qp->sq_tail - qp->sq_head >= qp->attr.cap.max_send_wr)
		return -ENOMEM;
	/* the common single-SGE WR: no loop, no memcpy call */
	if (wr->num_sge == 1) {
		length = wr->sg_list[0].length;
	} else {
		length = 0;
		for (int i = 0; i < wr->num_sge; i++)
			length += wr->sg_list[i].length;
	}
	if ((wr->send_flags & ROCE_SEND_INLINE) && length > qp->attr.cap.max_inline_data)
		return -EINVAL;
	if (length > (1ull << 31))
		return -EINVAL;

	wqe = verbs_sq_wqe(qp, qp->sq_tail);
	wqe->wr = *wr;
	wqe->wr.next = NULL;
	wqe->wr.sg_list = NULL;
	wqe->length = (uint32_t)length;
	wqe->state = WQE_POSTED;
	wqe->status = ROCE_WC_SUCCESS;
	wqe->signaled = qp->sq_sig_all || (wr->send_flags & ROCE_SEND_SIGNALED);
	wqe->zc = false;
	wqe->discard = 0;
	if (wr->send_flags & ROCE_SEND_INLINE) {
		/* inline: the data is taken now, the SGEs are not looked at again */
		verbs_sge_copy(wr->sg_list, (uint32_t)wr->num_sge, 0, wqe->inline_data,
			       (uint32_t)length, false);
		wqe->wr.num_sge = 0;
	} else if (wr->num_sge == 1) {
		wqe->sge[0] = wr->sg_list[0];
		wqe->zc = sge_zero_copy(qp->dev, &wr->sg_list[0]);
	} else {
		memcpy(wqe->sge, wr->sg_list, sizeof(*wqe->sge) * (size_t)wr->num_sge);
	}
	if (qp->type == ROCE_QPT_UD)
		wqe->av = wr->wr.ud.ah->attr;
	qp->sq_tail++;
	return 0;
}

int roce_post_send(struct roce_qp *qp, const struct roce_send_wr *wr,
		   const struct roce_send_wr **bad_wr)
{
	int rc = 0;

	if (qp->state != ROCE_QPS_RTS && qp->state != ROCE_QPS_SQD && qp->state != ROCE_QPS_ERR) {
		rc = -EINVAL;
	} else {
		for (; wr != NULL; wr = wr->next) {
			rc = post_one(qp, wr);
			if (rc != 0)
				break;
		}
	}
	if (rc != 0 && bad_wr != NULL)
		*bad_wr = wr;
	qp->dev->ops->qp_kick(qp);
	return rc;
}

int roce_post_recv(struct roce_qp *qp, const struct roce_recv_wr *wr,
		   const struct roce_recv_wr **bad_wr)
{
	const struct roce_recv_wr *bad = wr;
	int rc;

	if (qp->state == ROCE_QPS_RESET || qp->srq != NULL) {
		rc = -EINVAL;
	} else {
		rc = verbs_rq_post(&qp->rq, wr, &bad);
		if (qp->state == ROCE_QPS_ERR)
			qp->dev->ops->qp_kick(qp);	/* flushes them */
	}
	if (rc != 0 && bad_wr != NULL)
		*bad_wr = bad;
	return rc;
}
