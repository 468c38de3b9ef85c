/*
 * The device's objects: every PD, MR, CQ, SRQ, AH and QP created, changed and destroyed as a
 * command that the NIC's thread runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ibv_private.h"
#include "roce_common.h"
#include "roce_transport.h"

/* ---- PD, MR ---- */

struct pd_cmd {
	struct ibvr_pd *pd;
	struct ibvr_mr *mr;
	void *addr;
	size_t len;
	unsigned int access;
};

static int cmd_alloc_pd(struct roce_nic *nic, void *arg)
{
	struct pd_cmd *a = arg;

	a->pd->pd = roce_alloc_pd(roce_nic_device(nic));
	return a->pd->pd != NULL ? 0 : -errno;
}

static int cmd_dealloc_pd(struct roce_nic *nic, void *arg)
{
	(void)nic;
	return roce_dealloc_pd(((struct pd_cmd *)arg)->pd->pd);
}

static struct ibv_pd *ibvr_alloc_pd(struct ibv_context *context)
{
	struct pd_cmd a = { .pd = calloc(1, sizeof(struct ibvr_pd)) };
	int rc;

	if (a.pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = roce_nic_exec(to_ictx(context)->nic, cmd_alloc_pd, &a);
	if (rc != 0) {
		free(a.pd);
		errno = -rc;
		return NULL;
	}
	a.pd->ibv.context = context;
	return &a.pd->ibv;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	return ibvr_usable() ? ibvr_alloc_pd(context) : NULL;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct pd_cmd a = { .pd = to_ipd(pd) };
	int rc = roce_nic_exec(to_ictx(pd->context)->nic, cmd_dealloc_pd, &a);

	if (rc != 0)
		return -rc;
	free(a.pd);
	return 0;
}

static int cmd_reg_mr(struct roce_nic *nic, void *arg)
{
	struct pd_cmd *a = arg;

	(void)nic;
	a->mr->mr = roce_reg_mr(a->pd->pd, a->addr, a->len, a->access);
	return a->mr->mr != NULL ? 0 : -errno;
}

static int cmd_dereg_mr(struct roce_nic *nic, void *arg)
{
	(void)nic;
	return roce_dereg_mr(((struct pd_cmd *)arg)->mr->mr);
}

#define IBVR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		     IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			     unsigned int access)
{
	struct pd_cmd a = { .pd = to_ipd(pd), .addr = addr, .len = length };
	int rc;

	if (!ibvr_usable())
		return NULL;
	/* optional flags (relaxed ordering) are hints; the rest rocelab does not model */
	access &= ~(unsigned int)(IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_OPTIONAL_RANGE);
	if (access & ~(unsigned int)IBVR_ACCESS) {
		ibvr_say("reg_mr: access flags 0x%x are not modelled (memory windows, ODP, ...)",
			 access & ~(unsigned int)IBVR_ACCESS);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (iova != (uintptr_t)addr) {
		ibvr_say("reg_mr: an IOVA other than the address is not modelled");
		errno = EOPNOTSUPP;
		return NULL;
	}
	a.access = access;
	a.mr = calloc(1, sizeof(*a.mr));
	if (a.mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = roce_nic_exec(to_ictx(pd->context)->nic, cmd_reg_mr, &a);
	if (rc != 0) {
		free(a.mr);
		errno = -rc;
		return NULL;
	}
	a.mr->ibv.context = pd->context;
	a.mr->ibv.pd = pd;
	a.mr->ibv.addr = addr;
	a.mr->ibv.length = length;
	a.mr->ibv.lkey = roce_mr_lkey(a.mr->mr);
	a.mr->ibv.rkey = roce_mr_rkey(a.mr->mr);
	return &a.mr->ibv;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct pd_cmd a = { .mr = to_imr(mr) };
	int rc = roce_nic_exec(to_ictx(mr->context)->nic, cmd_dereg_mr, &a);

	if (rc != 0)
		return -rc;
	free(a.mr);
	return 0;
}

/* ---- completion channel, CQ ---- */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibvr_channel *ch;

	if (!ibvr_usable())
		return NULL;
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ibv.context = context;
	ch->ibv.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ibv.fd < 0) {
		free(ch);
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ibv;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibvr_channel *ch = to_ichan(channel);

	if (ch->ncq != 0)
		return EBUSY;
	close(ch->ibv.fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

struct cq_cmd {
	struct ibvr_cq *cq;
	int cqe;
};

static int cmd_create_cq(struct roce_nic *nic, void *arg)
{
	struct cq_cmd *a = arg;

	a->cq->ncq.cq = roce_create_cq(roce_nic_device(nic), a->cqe);
	if (a->cq->ncq.cq == NULL)
		return -errno;
	roce_nic_cq_attach(nic, &a->cq->ncq);
	return 0;
}

static int cmd_destroy_cq(struct roce_nic *nic, void *arg)
{
	struct ibvr_cq *c = ((struct cq_cmd *)arg)->cq;
	int rc;

	roce_nic_cq_detach(nic, &c->ncq);
	rc = roce_destroy_cq(c->ncq.cq);
	if (rc != 0)
		roce_nic_cq_attach(nic, &c->ncq);
	return rc;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct cq_cmd a = { .cqe = cqe };
	struct ibvr_cq *c;
	int rc;

	(void)comp_vector;
	if (!ibvr_usable())
		return NULL;
	if (cqe <= 0) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL || roce_nic_ring_init(&c->ncq.ring, (uint32_t)cqe,
					    sizeof(struct roce_wc)) != 0) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	a.cq = c;
	if (channel != NULL) {
		c->channel = to_ichan(channel);
		c->ncq.event = ibvr_cq_event;
		c->ncq.event_arg = c;
	}
	rc = roce_nic_exec(to_ictx(context)->nic, cmd_create_cq, &a);
	if (rc != 0) {
		roce_nic_ring_free(&c->ncq.ring);
		free(c);
		errno = -rc;
		return NULL;
	}
	if (c->channel != NULL)
		__atomic_add_fetch(&c->channel->ncq, 1, __ATOMIC_SEQ_CST);
	c->ibv.context = context;
	c->ibv.channel = channel;
	c->ibv.cq_context = cq_context;
	c->ibv.cqe = (int)c->ncq.ring.mask + 1;
	pthread_mutex_init(&c->ibv.mutex, NULL);
	pthread_cond_init(&c->ibv.cond, NULL);
	return &c->ibv;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct cq_cmd a = { .cq = to_icq(cq) };
	int rc = roce_nic_exec(to_ictx(cq->context)->nic, cmd_destroy_cq, &a);

	if (rc != 0)
		return -rc;
	if (a.cq->channel != NULL)
		__atomic_sub_fetch(&a.cq->channel->ncq, 1, __ATOMIC_SEQ_CST);
	roce_nic_ring_free(&a.cq->ncq.ring);
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	free(a.cq);
	return 0;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}

/* ---- SRQ ---- */

struct srq_cmd {
	struct ibvr_srq *srq;
	struct ibvr_pd *pd;
	uint32_t max_wr, max_sge;
};

static int cmd_create_srq(struct roce_nic *nic, void *arg)
{
	struct srq_cmd *a = arg;

	a->srq->srq = roce_create_srq(a->pd->pd, a->max_wr, a->max_sge);
	if (a->srq->srq == NULL)
		return -errno;
	a->srq->rq.srq = a->srq->srq;
	roce_nic_wq_attach(nic, &a->srq->rq);
	return 0;
}

static int cmd_destroy_srq(struct roce_nic *nic, void *arg)
{
	struct ibvr_srq *s = ((struct srq_cmd *)arg)->srq;
	int rc = roce_destroy_srq(s->srq);

	if (rc == 0)
		roce_nic_wq_detach(nic, &s->rq);
	return rc;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct srq_cmd a = { .pd = to_ipd(pd), .max_wr = init->attr.max_wr,
			     .max_sge = init->attr.max_sge };
	struct ibvr_srq *s;
	int rc;

	if (!ibvr_usable())
		return NULL;
	if (a.max_sge > ROCE_NIC_MAX_SGE || a.max_wr == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (a.max_sge == 0)
		a.max_sge = 1;
	s = calloc(1, sizeof(*s));
	if (s == NULL || roce_nic_ring_init(&s->rq.ring, a.max_wr,
					    sizeof(struct roce_nic_rwqe)) != 0) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	a.srq = s;
	rc = roce_nic_exec(to_ictx(pd->context)->nic, cmd_create_srq, &a);
	if (rc != 0) {
		roce_nic_ring_free(&s->rq.ring);
		free(s);
		errno = -rc;
		return NULL;
	}
	s->max_sge = a.max_sge;
	s->ibv.context = pd->context;
	s->ibv.srq_context = init->srq_context;
	s->ibv.pd = pd;
	pthread_mutex_init(&s->ibv.mutex, NULL);
	pthread_cond_init(&s->ibv.cond, NULL);
	init->attr.max_wr = s->rq.ring.mask + 1;
	return &s->ibv;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	(void)srq;
	(void)srq_attr;
	(void)srq_attr_mask;
	ibvr_say("modify_srq is not modelled (SRQ limit events, resizing)");
	return EOPNOTSUPP;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	struct ibvr_srq *s = to_isrq(srq);

	memset(srq_attr, 0, sizeof(*srq_attr));
	srq_attr->max_wr = s->rq.ring.mask + 1;
	srq_attr->max_sge = s->max_sge;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct srq_cmd a = { .srq = to_isrq(srq) };
	int rc = roce_nic_exec(to_ictx(srq->context)->nic, cmd_destroy_srq, &a);

	if (rc != 0)
		return -rc;
	roce_nic_ring_free(&a.srq->rq.ring);
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(a.srq);
	return 0;
}

/* ---- address handles ---- */

/* A verbs address vector as lib/verbs' (the MAC resolved by ARP or ND on the port). */
static int to_roce_ah(struct roce_nic *nic, const struct ibv_ah_attr *in, struct roce_ah_attr *o)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	int rc;

	memset(o, 0, sizeof(*o));
	if (!in->is_global) {
		ibvr_say("an address without a GRH (is_global 0) cannot reach a RoCE peer: give "
			 "the program the peer's GID (ibv_*_pingpong -g 0, perftest -x 0)");
		return -EINVAL;
	}
	if (in->port_num > 1)
		return -EINVAL;
	if (memcmp(in->grh.dgid.raw, v4mapped, sizeof(v4mapped)) == 0) {
		memcpy(o->dip.b, &in->grh.dgid.raw[12], 4);
		o->ip_ver = 4;
	} else {
		memcpy(o->dip.b, in->grh.dgid.raw, 16);
		o->ip_ver = 6;
	}
	o->traffic_class = in->grh.traffic_class;
	/*
	 * Linux resolves a RoCEv2 address vector itself (ib_resolve_eth_dmac) and takes the IP
	 * TTL from the route, not from the program: ibv_*_pingpong's hop_limit of 1 would not
	 * cross a router, and does on rxe and mlx5. rocelab0 does the same.
	 */
	o->hop_limit = 64;
	o->flow_label = in->grh.flow_label;
	o->sl = in->sl;
	rc = roce_nic_resolve(nic, &o->dip, o->ip_ver, o->dmac);
	if (rc != 0) {
		char ip[64];

		ibvr_say("no answer to ARP/ND for %s on the port",
			 roce_ip_ntop(&o->dip, o->ip_ver, ip, sizeof(ip)));
		return -EHOSTUNREACH;
	}
	return 0;
}

struct ah_cmd {
	struct ibvr_ah *ah;
	struct ibvr_pd *pd;
	const struct ibv_ah_attr *attr;
};

static int cmd_create_ah(struct roce_nic *nic, void *arg)
{
	struct ah_cmd *a = arg;
	struct roce_ah_attr ra;
	int rc = to_roce_ah(nic, a->attr, &ra);

	if (rc != 0)
		return rc;
	a->ah->ah = roce_create_ah(a->pd->pd, &ra);
	return a->ah->ah != NULL ? 0 : -errno;
}

static int cmd_destroy_ah(struct roce_nic *nic, void *arg)
{
	(void)nic;
	return roce_destroy_ah(((struct ah_cmd *)arg)->ah->ah);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ah_cmd a = { .pd = to_ipd(pd), .attr = attr };
	int rc;

	if (!ibvr_usable())
		return NULL;
	a.ah = calloc(1, sizeof(*a.ah));
	if (a.ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = roce_nic_exec(to_ictx(pd->context)->nic, cmd_create_ah, &a);
	if (rc != 0) {
		free(a.ah);
		errno = -rc;
		return NULL;
	}
	a.ah->ibv.context = pd->context;
	a.ah->ibv.pd = pd;
	return &a.ah->ibv;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct ah_cmd a = { .ah = to_iah(ah) };
	int rc = roce_nic_exec(to_ictx(ah->context)->nic, cmd_destroy_ah, &a);

	if (rc != 0)
		return -rc;
	free(a.ah);
	return 0;
}

/* ---- QP ---- */

struct qp_cmd {
	struct ibvr_qp *qp;
	struct roce_qp_init_attr init;
	struct roce_qp_attr attr;
	const struct ibv_qp_attr *in;
	unsigned int mask;
};

static int cmd_create_qp(struct roce_nic *nic, void *arg)
{
	struct qp_cmd *a = arg;

	a->qp->qp = roce_create_qp(to_ipd(a->qp->ibv.pd)->pd, &a->init);
	if (a->qp->qp == NULL)
		return -errno;
	a->qp->sq.qp = a->qp->qp;
	a->qp->sq.send = true;
	a->qp->rq.qp = a->qp->qp;
	roce_nic_wq_attach(nic, &a->qp->sq);
	if (a->init.srq == NULL)
		roce_nic_wq_attach(nic, &a->qp->rq);
	return 0;
}

static int cmd_destroy_qp(struct roce_nic *nic, void *arg)
{
	struct ibvr_qp *q = ((struct qp_cmd *)arg)->qp;
	int rc = roce_destroy_qp(q->qp);

	if (rc == 0) {
		roce_nic_wq_detach(nic, &q->sq);
		roce_nic_wq_detach(nic, &q->rq);
	}
	return rc;
}

static struct ibv_qp *create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	struct qp_cmd a = { 0 };
	struct ibvr_qp *q;
	uint32_t depth;
	int rc;

	if (!ibvr_usable())
		return NULL;
	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD) {
		ibvr_say("create_qp: QP type %d is not modelled (RC, UC and UD are)", init->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (init->send_cq == NULL || init->recv_cq == NULL ||
	    init->cap.max_send_sge > ROCE_NIC_MAX_SGE || init->cap.max_recv_sge > ROCE_NIC_MAX_SGE ||
	    init->cap.max_inline_data > ROCE_NIC_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a.qp = q;
	q->ibv.pd = pd;
	a.init.send_cq = to_icq(init->send_cq)->ncq.cq;
	a.init.recv_cq = to_icq(init->recv_cq)->ncq.cq;
	if (init->srq != NULL) {
		q->srq = to_isrq(init->srq);
		a.init.srq = q->srq->srq;
	}
	a.init.cap = (struct roce_qp_cap){
		.max_send_wr = ROCE_MAX(init->cap.max_send_wr, 1u),
		.max_recv_wr = ROCE_MAX(init->cap.max_recv_wr, 1u),
		.max_send_sge = ROCE_MAX(init->cap.max_send_sge, 1u),
		.max_recv_sge = ROCE_MAX(init->cap.max_recv_sge, 1u),
		.max_inline_data = init->cap.max_inline_data,
	};
	a.init.qp_type = (enum roce_qp_type)init->qp_type;
	a.init.sq_sig_all = init->sq_sig_all != 0;
	depth = a.init.cap.max_send_wr;
	if (roce_nic_ring_init(&q->sq.ring, depth, sizeof(struct roce_nic_swqe)) != 0 ||
	    roce_nic_ring_init(&q->rq.ring, init->srq != NULL ? 1 : a.init.cap.max_recv_wr,
			       sizeof(struct roce_nic_rwqe)) != 0)
		goto err_rings;
	rc = roce_nic_exec(to_ictx(pd->context)->nic, cmd_create_qp, &a);
	if (rc != 0) {
		errno = -rc;
		goto err_rings;
	}
	q->cap = (struct ibv_qp_cap){
		.max_send_wr = a.init.cap.max_send_wr,
		.max_recv_wr = init->srq != NULL ? 0 : a.init.cap.max_recv_wr,
		.max_send_sge = a.init.cap.max_send_sge,
		.max_recv_sge = a.init.cap.max_recv_sge,
		.max_inline_data = a.init.cap.max_inline_data,
	};
	init->cap = q->cap;
	q->sq_sig_all = init->sq_sig_all != 0;
	q->ibv.context = pd->context;
	q->ibv.qp_context = init->qp_context;
	q->ibv.send_cq = init->send_cq;
	q->ibv.recv_cq = init->recv_cq;
	q->ibv.srq = init->srq;
	q->ibv.qp_num = roce_qp_num(q->qp);
	q->ibv.state = IBV_QPS_RESET;
	q->ibv.qp_type = init->qp_type;
	pthread_mutex_init(&q->ibv.mutex, NULL);
	pthread_cond_init(&q->ibv.cond, NULL);
	return &q->ibv;

err_rings:
	roce_nic_ring_free(&q->sq.ring);
	roce_nic_ring_free(&q->rq.ring);
	free(q);
	if (errno == 0)
		errno = ENOMEM;
	return NULL;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	return create_qp(pd, qp_init_attr);
}

struct ibv_qp *ibvr_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *ex)
{
	struct ibv_qp_init_attr init;

	if (ex->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) {
		/* the new post-send API (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) among them */
		ibvr_say("create_qp_ex: attributes 0x%x are not modelled; ibv_post_send is",
			 ex->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (ex->pd == NULL || ex->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.qp_context = ex->qp_context;
	init.send_cq = ex->send_cq;
	init.recv_cq = ex->recv_cq;
	init.srq = ex->srq;
	init.cap = ex->cap;
	init.qp_type = ex->qp_type;
	init.sq_sig_all = ex->sq_sig_all;
	{
		struct ibv_qp *qp = create_qp(ex->pd, &init);

		ex->cap = init.cap;
		return qp;
	}
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Attributes rocelab's QPs do not have: one line, EOPNOTSUPP. */
#define IBVR_QP_UNMODELLED (IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ALT_PATH | \
			    IBV_QP_PATH_MIG_STATE | IBV_QP_RATE_LIMIT)

static int cmd_modify_qp(struct roce_nic *nic, void *arg)
{
	struct qp_cmd *a = arg;
	int rc;

	if (a->mask & IBV_QP_AV) {
		rc = to_roce_ah(nic, &a->in->ah_attr, &a->attr.ah_attr);
		if (rc != 0)
			return rc;
	}
	return roce_modify_qp(a->qp->qp, &a->attr, a->mask);
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct qp_cmd a = { .qp = to_iqp(qp), .in = attr, .mask = (unsigned int)attr_mask };
	struct roce_qp_attr *o = &a.attr;
	int rc;

	if (!ibvr_usable())
		return EIO;
	if (a.mask & IBVR_QP_UNMODELLED) {
		ibvr_say("modify_qp: attributes 0x%x are not modelled (alternate path, path "
			 "migration, SQD events, rate limit)", a.mask & IBVR_QP_UNMODELLED);
		return EOPNOTSUPP;
	}
	if ((a.mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_SQD) {
		ibvr_say("modify_qp: the SQD state is not modelled");
		return EOPNOTSUPP;
	}
	if (a.mask & ~(unsigned int)((IBV_QP_DEST_QPN << 1) - 1)) {
		ibvr_say("modify_qp: attributes 0x%x are not modelled",
			 a.mask & ~(unsigned int)((IBV_QP_DEST_QPN << 1) - 1));
		return EOPNOTSUPP;
	}
	o->qp_state = (enum roce_qp_state)attr->qp_state;
	o->cur_qp_state = (enum roce_qp_state)attr->cur_qp_state;
	o->path_mtu = (enum roce_mtu)attr->path_mtu;
	o->qkey = attr->qkey;
	o->rq_psn = attr->rq_psn;
	o->sq_psn = attr->sq_psn;
	o->dest_qp_num = attr->dest_qp_num;
	o->qp_access_flags = (unsigned int)attr->qp_access_flags;
	o->cap = (struct roce_qp_cap){ attr->cap.max_send_wr, attr->cap.max_recv_wr,
				       attr->cap.max_send_sge, attr->cap.max_recv_sge,
				       attr->cap.max_inline_data };
	o->pkey_index = attr->pkey_index;
	o->port_num = attr->port_num;
	o->max_rd_atomic = attr->max_rd_atomic;
	o->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	o->min_rnr_timer = attr->min_rnr_timer;
	o->timeout = attr->timeout;
	o->retry_cnt = attr->retry_cnt;
	o->rnr_retry = attr->rnr_retry;
	rc = roce_nic_exec(to_ictx(qp->context)->nic, cmd_modify_qp, &a);
	if (rc != 0)
		return -rc;
	if (a.mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

struct query_cmd {
	struct ibvr_qp *qp;
	struct roce_qp_attr attr;
	struct roce_qp_init_attr init;
};

static int cmd_query_qp(struct roce_nic *nic, void *arg)
{
	struct query_cmd *a = arg;

	(void)nic;
	return roce_query_qp(a->qp->qp, &a->attr, &a->init);
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct query_cmd a = { .qp = to_iqp(qp) };
	const struct roce_qp_attr *r = &a.attr;
	int rc;

	(void)attr_mask;
	if (!ibvr_usable())
		return EIO;
	rc = roce_nic_exec(to_ictx(qp->context)->nic, cmd_query_qp, &a);
	if (rc != 0)
		return -rc;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)r->qp_state;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = (enum ibv_mtu)r->path_mtu;
	attr->qkey = r->qkey;
	attr->rq_psn = r->rq_psn;
	attr->sq_psn = r->sq_psn;
	attr->dest_qp_num = r->dest_qp_num;
	attr->qp_access_flags = (int)r->qp_access_flags;
	attr->cap = a.qp->cap;
	attr->port_num = r->port_num ? r->port_num : 1;
	attr->max_rd_atomic = r->max_rd_atomic;
	attr->max_dest_rd_atomic = r->max_dest_rd_atomic;
	attr->min_rnr_timer = r->min_rnr_timer;
	attr->timeout = r->timeout;
	attr->retry_cnt = r->retry_cnt;
	attr->rnr_retry = r->rnr_retry;
	if (init_attr != NULL) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = a.qp->cap;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = a.qp->sq_sig_all;
	}
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct qp_cmd a = { .qp = to_iqp(qp) };
	int rc = roce_nic_exec(to_ictx(qp->context)->nic, cmd_destroy_qp, &a);

	if (rc != 0)
		return -rc;
	roce_nic_ring_free(&a.qp->sq.ring);
	roce_nic_ring_free(&a.qp->rq.ring);
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(a.qp);
	return 0;
}
