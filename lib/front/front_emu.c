/* The emulated NIC as a provider of the verbs front end: lib/verbs' objects, one to one. */
#include <errno.h>
#include <stdlib.h>

#include "roce_front.h"


struct emu_dev {
	struct roce_front f;
	struct roce_device *dev;
};

struct emu_pd {
	struct roce_front_pd f;
	struct roce_pd *pd;
};

struct emu_mr {
	struct roce_front_mr f;
	struct roce_mr *mr;
};

struct emu_cq {
	struct roce_front_cq f;
	struct roce_cq *cq;
};

struct emu_qp {
	struct roce_front_qp f;
	struct roce_qp *qp;
};

struct emu_ah {
	struct roce_front_ah f;
	struct roce_ah *ah;
};

#define EMU_CHAIN_MAX 64		/* UD sends re-addressed on the stack at once */

static struct emu_dev *to_edev(struct roce_front *f) { return container_of(f, struct emu_dev, f); }
static struct emu_pd *to_epd(struct roce_front_pd *f) { return container_of(f, struct emu_pd, f); }
static struct emu_mr *to_emr(struct roce_front_mr *f) { return container_of(f, struct emu_mr, f); }
static struct emu_cq *to_ecq(struct roce_front_cq *f) { return container_of(f, struct emu_cq, f); }
static struct emu_qp *to_eqp(struct roce_front_qp *f) { return container_of(f, struct emu_qp, f); }
static struct emu_ah *to_eah(struct roce_front_ah *f) { return container_of(f, struct emu_ah, f); }

static struct roce_front_pd *emu_alloc_pd(struct roce_front *dev)
{
	struct emu_pd *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->pd = roce_alloc_pd(to_edev(dev)->dev);
	if (p->pd == NULL) {
		free(p);
		return NULL;
	}
	p->f.dev = dev;
	return &p->f;
}

static int emu_dealloc_pd(struct roce_front_pd *pd)
{
	int rc = roce_dealloc_pd(to_epd(pd)->pd);

	if (rc == 0)
		free(to_epd(pd));
	return rc;
}

static struct roce_front_mr *emu_reg_mr(struct roce_front_pd *pd, void *addr, size_t len,
					unsigned int access)
{
	struct emu_mr *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->mr = roce_reg_mr(to_epd(pd)->pd, addr, len, access);
	if (m->mr == NULL) {
		free(m);
		return NULL;
	}
	m->f.dev = pd->dev;
	m->f.lkey = roce_mr_lkey(m->mr);
	m->f.rkey = roce_mr_rkey(m->mr);
	return &m->f;
}

static int emu_dereg_mr(struct roce_front_mr *mr)
{
	int rc = roce_dereg_mr(to_emr(mr)->mr);

	if (rc == 0)
		free(to_emr(mr));
	return rc;
}

static struct roce_front_cq *emu_create_cq(struct roce_front *dev, int cqe)
{
	struct emu_cq *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->cq = roce_create_cq(to_edev(dev)->dev, cqe);
	if (c->cq == NULL) {
		free(c);
		return NULL;
	}
	c->f.dev = dev;
	return &c->f;
}

static int emu_destroy_cq(struct roce_front_cq *cq)
{
	int rc = roce_destroy_cq(to_ecq(cq)->cq);

	if (rc == 0)
		free(to_ecq(cq));
	return rc;
}

static struct roce_front_qp *emu_create_qp(struct roce_front_pd *pd, struct roce_front_cq *scq,
					   struct roce_front_cq *rcq, enum roce_qp_type type,
					   struct roce_qp_cap *cap)
{
	struct roce_qp_init_attr init = {
		.send_cq = to_ecq(scq)->cq,
		.recv_cq = to_ecq(rcq)->cq,
		.cap = *cap,
		.qp_type = type,
	};
	struct emu_qp *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->qp = roce_create_qp(to_epd(pd)->pd, &init);
	if (q->qp == NULL) {
		free(q);
		return NULL;
	}
	*cap = init.cap;
	q->f.dev = pd->dev;
	q->f.qp_num = roce_qp_num(q->qp);
	q->f.type = type;
	return &q->f;
}

static int emu_modify_qp(struct roce_front_qp *qp, const struct roce_qp_attr *attr,
			 unsigned int mask)
{
	return roce_modify_qp(to_eqp(qp)->qp, attr, mask);
}

static int emu_destroy_qp(struct roce_front_qp *qp)
{
	int rc = roce_destroy_qp(to_eqp(qp)->qp);

	if (rc == 0)
		free(to_eqp(qp));
	return rc;
}

static struct roce_front_ah *emu_create_ah(struct roce_front_pd *pd,
					  const struct roce_ah_attr *attr)
{
	struct emu_ah *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->ah = roce_create_ah(to_epd(pd)->pd, attr);
	if (a->ah == NULL) {
		free(a);
		return NULL;
	}
	a->f.dev = pd->dev;
	return &a->f;
}

static int emu_destroy_ah(struct roce_front_ah *ah)
{
	int rc = roce_destroy_ah(to_eah(ah)->ah);

	if (rc == 0)
		free(to_eah(ah));
	return rc;
}

static int emu_post_send(struct roce_front_qp *qp, const struct roce_send_wr *wr)
{
	struct roce_send_wr ud[EMU_CHAIN_MAX];
	const struct roce_send_wr *w = wr;
	int n = 0;

	if (wr == NULL)
		return 0;
	if (qp->type != ROCE_QPT_UD)
		return roce_post_send(to_eqp(qp)->qp, wr, NULL);
	/* UD: the chain again, each send with the emulated NIC's own AH */
	for (; w != NULL; w = w->next) {
		if (n == EMU_CHAIN_MAX)
			return -EINVAL;
		ud[n] = *w;
		ud[n].next = NULL;
		if (w->wr.ud.ah != NULL)
			ud[n].wr.ud.ah = to_eah(roce_front_wr_ah(w))->ah;
		if (n > 0)
			ud[n - 1].next = &ud[n];
		n++;
	}
	return roce_post_send(to_eqp(qp)->qp, ud, NULL);
}

static int emu_post_recv(struct roce_front_qp *qp, const struct roce_recv_wr *wr)
{
	return roce_post_recv(to_eqp(qp)->qp, wr, NULL);
}

static int emu_poll_cq(struct roce_front_cq *cq, int num, struct roce_wc *wc)
{
	return roce_poll_cq(to_ecq(cq)->cq, num, wc);
}

static void emu_close(struct roce_front *dev)
{
	free(to_edev(dev));
}

static const struct roce_front_ops emu_ops = {
	.alloc_pd = emu_alloc_pd,
	.dealloc_pd = emu_dealloc_pd,
	.reg_mr = emu_reg_mr,
	.dereg_mr = emu_dereg_mr,
	.create_cq = emu_create_cq,
	.destroy_cq = emu_destroy_cq,
	.create_qp = emu_create_qp,
	.modify_qp = emu_modify_qp,
	.destroy_qp = emu_destroy_qp,
	.create_ah = emu_create_ah,
	.destroy_ah = emu_destroy_ah,
	.post_send = emu_post_send,
	.post_recv = emu_post_recv,
	.poll_cq = emu_poll_cq,
	.close = emu_close,
};

struct roce_front *roce_front_emulated(struct roce_device *dev)
{
	struct emu_dev *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->f.ops = &emu_ops;
	d->f.kind = "emulated";
	d->dev = dev;
	return &d->f;
}
