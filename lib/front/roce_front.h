/*
 * lib/front: the verbs front end. One API for a workload's PD, MR, CQ, QP and AH, whoever
 * provides them: the emulated NIC (in virtual time or in real time on a DPDK port) or a real
 * RDMA device through rdma-core's libibverbs.
 *
 * Its vocabulary is lib/verbs' (struct roce_send_wr, struct roce_wc, ...), whose values equal
 * libibverbs' own. Each provider embeds the front end's objects in its own and is reached
 * through an ops table, as rdma-core's providers are. The front end owns none of a provider's
 * state, and keeps no time: running the emulated NIC's engine stays with whoever owns it.
 */
#ifndef ROCE_FRONT_H
#define ROCE_FRONT_H

#include <stddef.h>
#include <stdint.h>

#include "roce_verbs.h"

struct roce_ibdev;

struct roce_front;

/* The front end's part of each object; a provider's own embeds it. */
struct roce_front_pd {
	struct roce_front *dev;		/* whose */
};

struct roce_front_mr {
	struct roce_front *dev;
	uint32_t lkey, rkey;		/* its keys */
};

struct roce_front_cq {
	struct roce_front *dev;
};

struct roce_front_qp {
	struct roce_front *dev;
	uint32_t qp_num;		/* its number on the wire */
	enum roce_qp_type type;		/* RC, UC or UD */
};

struct roce_front_ah {
	struct roce_front *dev;
};

/* What a provider does; every call returns as lib/verbs' do: NULL with errno set, or 0 / -errno. */
struct roce_front_ops {
	struct roce_front_pd *(*alloc_pd)(struct roce_front *dev);
	int (*dealloc_pd)(struct roce_front_pd *pd);
	struct roce_front_mr *(*reg_mr)(struct roce_front_pd *pd, void *addr, size_t len,
					unsigned int access);
	int (*dereg_mr)(struct roce_front_mr *mr);
	struct roce_front_cq *(*create_cq)(struct roce_front *dev, int cqe);
	int (*destroy_cq)(struct roce_front_cq *cq);
	struct roce_front_qp *(*create_qp)(struct roce_front_pd *pd, struct roce_front_cq *scq,
					   struct roce_front_cq *rcq, enum roce_qp_type type,
					   struct roce_qp_cap *cap);
	int (*modify_qp)(struct roce_front_qp *qp, const struct roce_qp_attr *attr,
			 unsigned int mask);
	int (*destroy_qp)(struct roce_front_qp *qp);
	struct roce_front_ah *(*create_ah)(struct roce_front_pd *pd, const struct roce_ah_attr *attr);
	int (*destroy_ah)(struct roce_front_ah *ah);
	int (*post_send)(struct roce_front_qp *qp, const struct roce_send_wr *wr);
	int (*post_recv)(struct roce_front_qp *qp, const struct roce_recv_wr *wr);
	int (*poll_cq)(struct roce_front_cq *cq, int num, struct roce_wc *wc);
	void (*close)(struct roce_front *dev);
};

/* A device as the front end sees it. */
struct roce_front {
	const struct roce_front_ops *ops;
	const char *kind;		/* "emulated", "libibverbs" */
};

/**
 * The emulated NIC @p dev through the front end; it stays the caller's (roce_front_close()
 * frees only the front end's part). @return NULL with errno ENOMEM
 */
struct roce_front *roce_front_emulated(struct roce_device *dev);

/**
 * Real device @p dev (roce_ibdev_open()) through libibverbs, its port @p port and the GID at
 * @p gid_index as every QP's source address; it stays the caller's. @return NULL with errno
 * ENOTSUP (built without rdma-core's headers) or ENOMEM
 */
struct roce_front *roce_front_ibdev(struct roce_ibdev *dev, uint8_t port, uint32_t gid_index);

/** Free the front end of a device whose objects are all destroyed (NULL: nothing). */
static inline void roce_front_close(struct roce_front *dev)
{
	if (dev != NULL)
		dev->ops->close(dev);
}

/*
 * A UD send's address handle travels in wr.ud.ah as the front end's: set it with this, and a
 * provider reads it back with roce_front_wr_ah().
 */
static inline struct roce_ah *roce_front_ud_ah(struct roce_front_ah *ah)
{
	return (struct roce_ah *)(void *)ah;
}

static inline struct roce_front_ah *roce_front_wr_ah(const struct roce_send_wr *wr)
{
	return (struct roce_front_ah *)(void *)wr->wr.ud.ah;
}

/*
 * The verbs, as lib/verbs' (roce_verbs.h) and libibverbs' namesakes: objects are created NULL
 * with errno set on failure; destroying NULL is a no-op; the others return 0 or -errno.
 */
static inline struct roce_front_pd *roce_front_alloc_pd(struct roce_front *dev)
{
	return dev->ops->alloc_pd(dev);
}

static inline int roce_front_dealloc_pd(struct roce_front_pd *pd)
{
	return pd == NULL ? 0 : pd->dev->ops->dealloc_pd(pd);
}

static inline struct roce_front_mr *roce_front_reg_mr(struct roce_front_pd *pd, void *addr,
						      size_t len, unsigned int access)
{
	return pd->dev->ops->reg_mr(pd, addr, len, access);
}

static inline int roce_front_dereg_mr(struct roce_front_mr *mr)
{
	return mr == NULL ? 0 : mr->dev->ops->dereg_mr(mr);
}

static inline struct roce_front_cq *roce_front_create_cq(struct roce_front *dev, int cqe)
{
	return dev->ops->create_cq(dev, cqe);
}

static inline int roce_front_destroy_cq(struct roce_front_cq *cq)
{
	return cq == NULL ? 0 : cq->dev->ops->destroy_cq(cq);
}

/** A QP of @p type; @p cap: in, what is asked; out, what was granted. */
static inline struct roce_front_qp *roce_front_create_qp(struct roce_front_pd *pd,
							 struct roce_front_cq *scq,
							 struct roce_front_cq *rcq,
							 enum roce_qp_type type,
							 struct roce_qp_cap *cap)
{
	return pd->dev->ops->create_qp(pd, scq, rcq, type, cap);
}

static inline int roce_front_modify_qp(struct roce_front_qp *qp, const struct roce_qp_attr *attr,
				       unsigned int mask)
{
	return qp->dev->ops->modify_qp(qp, attr, mask);
}

static inline int roce_front_destroy_qp(struct roce_front_qp *qp)
{
	return qp == NULL ? 0 : qp->dev->ops->destroy_qp(qp);
}

static inline struct roce_front_ah *roce_front_create_ah(struct roce_front_pd *pd,
							 const struct roce_ah_attr *attr)
{
	return pd->dev->ops->create_ah(pd, attr);
}

static inline int roce_front_destroy_ah(struct roce_front_ah *ah)
{
	return ah == NULL ? 0 : ah->dev->ops->destroy_ah(ah);
}

/**
 * Post one WR or a chain (wr->next; NULL: nothing). @return 0; -errno (ENOMEM: the queue is
 * full; EINVAL: a bad WR, or a chain longer than a provider takes at once, 64)
 */
static inline int roce_front_post_send(struct roce_front_qp *qp, const struct roce_send_wr *wr)
{
	return qp->dev->ops->post_send(qp, wr);
}

static inline int roce_front_post_recv(struct roce_front_qp *qp, const struct roce_recv_wr *wr)
{
	return qp->dev->ops->post_recv(qp, wr);
}

/** @return completions taken (0..@p num), or < 0 on an error of the CQ */
static inline int roce_front_poll_cq(struct roce_front_cq *cq, int num, struct roce_wc *wc)
{
	return cq->dev->ops->poll_cq(cq, num, wc);
}

#endif /* ROCE_FRONT_H */
