/*
 * A real RDMA device as a provider of the verbs front end, through rdma-core's libibverbs as
 * lib/io/io_ibdev.c loaded it. lib/verbs' values equal libibverbs' (checked below), so the
 * work requests and completions are translated field by field, never looked up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_ibverbs.h"
#include "roce_front.h"

#ifdef ROCELAB_HAVE_IBVERBS


#define IBV_CHAIN_MAX 64		/* WRs of one post translated on the stack */
#define IBV_POLL_MAX 64			/* completions translated at once */
#define IBV_HOP_LIMIT 0xff		/* perftest's: the GRH's hop limit, RoCE v2's TTL */

_Static_assert(sizeof(struct roce_sge) == sizeof(struct ibv_sge) &&
	       offsetof(struct roce_sge, length) == offsetof(struct ibv_sge, length) &&
	       offsetof(struct roce_sge, lkey) == offsetof(struct ibv_sge, lkey),
	       "a roce_sge is an ibv_sge");
_Static_assert(sizeof(struct roce_qp_cap) == sizeof(struct ibv_qp_cap) &&
	       offsetof(struct roce_qp_cap, max_inline_data) ==
	       offsetof(struct ibv_qp_cap, max_inline_data), "a roce_qp_cap is an ibv_qp_cap");
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(ROCE_QP_STATE, IBV_QP_STATE) &&
	       SAME(ROCE_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS) &&
	       SAME(ROCE_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX) && SAME(ROCE_QP_PORT, IBV_QP_PORT) &&
	       SAME(ROCE_QP_QKEY, IBV_QP_QKEY) && SAME(ROCE_QP_AV, IBV_QP_AV) &&
	       SAME(ROCE_QP_PATH_MTU, IBV_QP_PATH_MTU) && SAME(ROCE_QP_TIMEOUT, IBV_QP_TIMEOUT) &&
	       SAME(ROCE_QP_RETRY_CNT, IBV_QP_RETRY_CNT) && SAME(ROCE_QP_RNR_RETRY, IBV_QP_RNR_RETRY) &&
	       SAME(ROCE_QP_RQ_PSN, IBV_QP_RQ_PSN) && SAME(ROCE_QP_SQ_PSN, IBV_QP_SQ_PSN) &&
	       SAME(ROCE_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC) &&
	       SAME(ROCE_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC) &&
	       SAME(ROCE_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER) && SAME(ROCE_QP_CAP, IBV_QP_CAP) &&
	       SAME(ROCE_QP_DEST_QPN, IBV_QP_DEST_QPN), "QP attribute masks are libibverbs'");
_Static_assert(SAME(ROCE_QPT_RC, IBV_QPT_RC) && SAME(ROCE_QPT_UC, IBV_QPT_UC) &&
	       SAME(ROCE_QPT_UD, IBV_QPT_UD) && SAME(ROCE_QPS_RTS, IBV_QPS_RTS) &&
	       SAME(ROCE_QPS_ERR, IBV_QPS_ERR) && SAME(ROCE_MTU_4096, IBV_MTU_4096),
	       "QP types, states and MTUs are libibverbs'");
_Static_assert(SAME(ROCE_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE) && SAME(ROCE_WR_SEND, IBV_WR_SEND) &&
	       SAME(ROCE_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM) &&
	       SAME(ROCE_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM) &&
	       SAME(ROCE_WR_RDMA_READ, IBV_WR_RDMA_READ) &&
	       SAME(ROCE_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP) &&
	       SAME(ROCE_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD) &&
	       SAME(ROCE_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV) &&
	       SAME(ROCE_SEND_SIGNALED, IBV_SEND_SIGNALED) && SAME(ROCE_SEND_INLINE, IBV_SEND_INLINE) &&
	       SAME(ROCE_SEND_FENCE, IBV_SEND_FENCE) && SAME(ROCE_SEND_SOLICITED, IBV_SEND_SOLICITED),
	       "send opcodes and flags are libibverbs'");
_Static_assert(SAME(ROCE_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR) &&
	       SAME(ROCE_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR) &&
	       SAME(ROCE_WC_RECV, IBV_WC_RECV) && SAME(ROCE_WC_FETCH_ADD, IBV_WC_FETCH_ADD) &&
	       SAME(ROCE_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM) &&
	       SAME(ROCE_WC_GRH, IBV_WC_GRH) && SAME(ROCE_WC_WITH_IMM, IBV_WC_WITH_IMM) &&
	       SAME(ROCE_WC_WITH_INV, IBV_WC_WITH_INV), "completions are libibverbs'");
_Static_assert(SAME(ROCE_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE) &&
	       SAME(ROCE_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE) &&
	       SAME(ROCE_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ) &&
	       SAME(ROCE_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC), "access flags are libibverbs'");
#undef SAME

struct ibvf_dev {
	struct roce_front f;
	struct ibv_context *ctx;
	uint8_t port;			/* every QP's */
	uint8_t gid_index;		/* the source GID of every address vector */
};

struct ibvf_pd {
	struct roce_front_pd f;
	struct ibv_pd *pd;
};

struct ibvf_mr {
	struct roce_front_mr f;
	struct ibv_mr *mr;
};

struct ibvf_cq {
	struct roce_front_cq f;
	struct ibv_cq *cq;
};

struct ibvf_qp {
	struct roce_front_qp f;
	struct ibv_qp *qp;
};

struct ibvf_ah {
	struct roce_front_ah f;
	struct ibv_ah *ah;
};

static struct ibvf_dev *to_idev(struct roce_front *f) { return container_of(f, struct ibvf_dev, f); }
static struct ibvf_pd *to_ipd(struct roce_front_pd *f)
{
	return container_of(f, struct ibvf_pd, f);
}
static struct ibvf_mr *to_imr(struct roce_front_mr *f)
{
	return container_of(f, struct ibvf_mr, f);
}
static struct ibvf_cq *to_icq(struct roce_front_cq *f)
{
	return container_of(f, struct ibvf_cq, f);
}
static struct ibvf_qp *to_iqp(struct roce_front_qp *f)
{
	return container_of(f, struct ibvf_qp, f);
}
static struct ibvf_ah *to_iah(struct roce_front_ah *f)
{
	return container_of(f, struct ibvf_ah, f);
}

/* libibverbs' destroy calls return a positive errno (or -1 with errno): ours, -errno. */
static int neg(int rc)
{
	return rc == 0 ? 0 : rc > 0 ? -rc : errno ? -errno : -EIO;
}

static struct roce_front_pd *ibvf_alloc_pd(struct roce_front *dev)
{
	struct ibvf_pd *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->pd = roce_ibv.alloc_pd(to_idev(dev)->ctx);
	if (p->pd == NULL) {
		free(p);
		return NULL;
	}
	p->f.dev = dev;
	return &p->f;
}

static int ibvf_dealloc_pd(struct roce_front_pd *pd)
{
	int rc = neg(roce_ibv.dealloc_pd(to_ipd(pd)->pd));

	if (rc == 0)
		free(to_ipd(pd));
	return rc;
}

static struct roce_front_mr *ibvf_reg_mr(struct roce_front_pd *pd, void *addr, size_t len,
					      unsigned int access)
{
	struct ibvf_mr *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	/* what ibv_reg_mr() itself calls: the buffer's address is its I/O address */
	m->mr = roce_ibv.reg_mr_iova2(to_ipd(pd)->pd, addr, len, (uintptr_t)addr, access);
	if (m->mr == NULL) {
		free(m);
		return NULL;
	}
	m->f.dev = pd->dev;
	m->f.lkey = m->mr->lkey;
	m->f.rkey = m->mr->rkey;
	return &m->f;
}

static int ibvf_dereg_mr(struct roce_front_mr *mr)
{
	int rc = neg(roce_ibv.dereg_mr(to_imr(mr)->mr));

	if (rc == 0)
		free(to_imr(mr));
	return rc;
}

static struct roce_front_cq *ibvf_create_cq(struct roce_front *dev, int cqe)
{
	struct ibvf_cq *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->cq = roce_ibv.create_cq(to_idev(dev)->ctx, cqe, NULL, NULL, 0);
	if (c->cq == NULL) {
		free(c);
		return NULL;
	}
	c->f.dev = dev;
	return &c->f;
}

static int ibvf_destroy_cq(struct roce_front_cq *cq)
{
	int rc = neg(roce_ibv.destroy_cq(to_icq(cq)->cq));

	if (rc == 0)
		free(to_icq(cq));
	return rc;
}

static struct roce_front_qp *ibvf_create_qp(struct roce_front_pd *pd,
						 struct roce_front_cq *scq,
						 struct roce_front_cq *rcq, enum roce_qp_type type,
						 struct roce_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.send_cq = to_icq(scq)->cq,
		.recv_cq = to_icq(rcq)->cq,
		.qp_type = (enum ibv_qp_type)type,
	};
	struct ibvf_qp *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	memcpy(&init.cap, cap, sizeof(init.cap));
	q->qp = roce_ibv.create_qp(to_ipd(pd)->pd, &init);
	if (q->qp == NULL) {
		free(q);
		return NULL;
	}
	memcpy(cap, &init.cap, sizeof(*cap));
	q->f.dev = pd->dev;
	q->f.qp_num = q->qp->qp_num;
	q->f.type = type;
	return &q->f;
}

/* An address vector: RoCE v2 always has a GRH, from the device's GID at its index. */
static void to_ibv_ah(const struct ibvf_dev *d, const struct roce_ah_attr *a, struct ibv_ah_attr *o)
{
	memset(o, 0, sizeof(*o));
	o->is_global = 1;
	o->port_num = d->port;
	o->sl = a->sl;
	o->grh.sgid_index = d->gid_index;
	o->grh.hop_limit = a->hop_limit ? a->hop_limit : IBV_HOP_LIMIT;
	o->grh.traffic_class = a->traffic_class;
	o->grh.flow_label = a->flow_label;
	if (a->ip_ver == 6) {
		memcpy(o->grh.dgid.raw, a->dip.b, 16);
	} else {
		o->grh.dgid.raw[10] = 0xff;
		o->grh.dgid.raw[11] = 0xff;
		memcpy(&o->grh.dgid.raw[12], a->dip.b, 4);
	}
}

static int ibvf_modify_qp(struct roce_front_qp *qp, const struct roce_qp_attr *attr,
			       unsigned int mask)
{
	const struct ibvf_dev *d = to_idev(qp->dev);
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = (enum ibv_qp_state)attr->qp_state;
	a.cur_qp_state = (enum ibv_qp_state)attr->cur_qp_state;
	a.path_mtu = (enum ibv_mtu)attr->path_mtu;
	a.qkey = attr->qkey;
	a.rq_psn = attr->rq_psn;
	a.sq_psn = attr->sq_psn;
	a.dest_qp_num = attr->dest_qp_num;
	a.qp_access_flags = attr->qp_access_flags;
	memcpy(&a.cap, &attr->cap, sizeof(a.cap));
	if (mask & ROCE_QP_AV)
		to_ibv_ah(d, &attr->ah_attr, &a.ah_attr);
	a.pkey_index = attr->pkey_index;
	a.port_num = d->port;		/* the port the front end was opened on */
	a.max_rd_atomic = attr->max_rd_atomic;
	a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a.min_rnr_timer = attr->min_rnr_timer;
	a.timeout = attr->timeout;
	a.retry_cnt = attr->retry_cnt;
	a.rnr_retry = attr->rnr_retry;
	return neg(roce_ibv.modify_qp(to_iqp(qp)->qp, &a, (int)mask));
}

static int ibvf_destroy_qp(struct roce_front_qp *qp)
{
	int rc = neg(roce_ibv.destroy_qp(to_iqp(qp)->qp));

	if (rc == 0)
		free(to_iqp(qp));
	return rc;
}

static struct roce_front_ah *ibvf_create_ah(struct roce_front_pd *pd,
						 const struct roce_ah_attr *attr)
{
	struct ibvf_ah *h = calloc(1, sizeof(*h));
	struct ibv_ah_attr a;

	if (h == NULL)
		return NULL;
	to_ibv_ah(to_idev(pd->dev), attr, &a);
	h->ah = roce_ibv.create_ah(to_ipd(pd)->pd, &a);
	if (h->ah == NULL) {
		free(h);
		return NULL;
	}
	h->f.dev = pd->dev;
	return &h->f;
}

static int ibvf_destroy_ah(struct roce_front_ah *ah)
{
	int rc = neg(roce_ibv.destroy_ah(to_iah(ah)->ah));

	if (rc == 0)
		free(to_iah(ah));
	return rc;
}

static int ibvf_post_send(struct roce_front_qp *qp, const struct roce_send_wr *wr)
{
	struct ibv_send_wr w[IBV_CHAIN_MAX], *bad;
	int n = 0;

	if (wr == NULL)
		return 0;
	for (; wr != NULL; wr = wr->next, n++) {
		struct ibv_send_wr *o = &w[n];

		if (n == IBV_CHAIN_MAX)
			return -EINVAL;
		*o = (struct ibv_send_wr){ .wr_id = wr->wr_id };
		o->sg_list = (struct ibv_sge *)(void *)wr->sg_list;
		o->num_sge = wr->num_sge;
		o->opcode = (enum ibv_wr_opcode)wr->opcode;
		o->send_flags = wr->send_flags;
		o->imm_data = htonl(wr->imm_data);	/* verbs: in network order */
		switch (wr->opcode) {
		case ROCE_WR_ATOMIC_CMP_AND_SWP:
		case ROCE_WR_ATOMIC_FETCH_AND_ADD:
			o->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
			o->wr.atomic.compare_add = wr->wr.atomic.compare_add;
			o->wr.atomic.swap = wr->wr.atomic.swap;
			o->wr.atomic.rkey = wr->wr.atomic.rkey;
			break;
		case ROCE_WR_SEND_WITH_INV:
			o->invalidate_rkey = wr->invalidate_rkey;
			break;
		default:
			if (qp->type == ROCE_QPT_UD) {
				o->wr.ud.ah = wr->wr.ud.ah ? to_iah(roce_front_wr_ah(wr))->ah : NULL;
				o->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
				o->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
			} else {
				o->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
				o->wr.rdma.rkey = wr->wr.rdma.rkey;
			}
			break;
		}
		if (n > 0)
			w[n - 1].next = o;
	}
	return neg(ibv_post_send(to_iqp(qp)->qp, w, &bad));
}

static int ibvf_post_recv(struct roce_front_qp *qp, const struct roce_recv_wr *wr)
{
	struct ibv_recv_wr w[IBV_CHAIN_MAX], *bad;
	int n = 0;

	if (wr == NULL)
		return 0;
	for (; wr != NULL; wr = wr->next, n++) {
		if (n == IBV_CHAIN_MAX)
			return -EINVAL;
		w[n].wr_id = wr->wr_id;
		w[n].next = NULL;
		w[n].sg_list = (struct ibv_sge *)(void *)wr->sg_list;
		w[n].num_sge = wr->num_sge;
		if (n > 0)
			w[n - 1].next = &w[n];
	}
	return neg(ibv_post_recv(to_iqp(qp)->qp, w, &bad));
}

static int ibvf_poll_cq(struct roce_front_cq *cq, int num, struct roce_wc *wc)
{
	struct ibv_wc w[IBV_POLL_MAX];
	int n = ibv_poll_cq(to_icq(cq)->cq, num < IBV_POLL_MAX ? num : IBV_POLL_MAX, w);

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++) {
		wc[i] = (struct roce_wc){
			.wr_id = w[i].wr_id,
			.status = (enum roce_wc_status)w[i].status,
			.opcode = (enum roce_wc_opcode)w[i].opcode,
			.vendor_err = w[i].vendor_err,
			.byte_len = w[i].byte_len,
			.imm_data = (w[i].wc_flags & IBV_WC_WITH_INV) ? w[i].invalidated_rkey :
				    ntohl(w[i].imm_data),
			.qp_num = w[i].qp_num,
			.src_qp = w[i].src_qp,
			.wc_flags = w[i].wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV),
			.sl = w[i].sl,
		};
	}
	return n;
}

static void ibvf_close(struct roce_front *dev)
{
	free(to_idev(dev));
}

static const struct roce_front_ops ibvf_ops = {
	.alloc_pd = ibvf_alloc_pd,
	.dealloc_pd = ibvf_dealloc_pd,
	.reg_mr = ibvf_reg_mr,
	.dereg_mr = ibvf_dereg_mr,
	.create_cq = ibvf_create_cq,
	.destroy_cq = ibvf_destroy_cq,
	.create_qp = ibvf_create_qp,
	.modify_qp = ibvf_modify_qp,
	.destroy_qp = ibvf_destroy_qp,
	.create_ah = ibvf_create_ah,
	.destroy_ah = ibvf_destroy_ah,
	.post_send = ibvf_post_send,
	.post_recv = ibvf_post_recv,
	.poll_cq = ibvf_poll_cq,
	.close = ibvf_close,
};

struct roce_front *roce_front_ibdev(struct roce_ibdev *dev, uint8_t port, uint32_t gid_index)
{
	struct ibvf_dev *d;

	if (gid_index > UINT8_MAX) {	/* an address vector's sgid_index is 8 bits */
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->f.ops = &ibvf_ops;
	d->f.kind = "libibverbs";
	d->ctx = roce_ibdev_context(dev);
	d->port = port;
	d->gid_index = (uint8_t)gid_index;
	return &d->f;
}

#else /* !ROCELAB_HAVE_IBVERBS */

struct roce_front *roce_front_ibdev(struct roce_ibdev *dev, uint8_t port, uint32_t gid_index)
{
	(void)dev;
	(void)port;
	(void)gid_index;
	errno = ENOTSUP;
	return NULL;
}

#endif /* ROCELAB_HAVE_IBVERBS */
