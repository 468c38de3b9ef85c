/* The verbs objects' common part: the core's, read by its provider (lib/transport), not apps. */
#ifndef VERBS_PRIVATE_H
#define VERBS_PRIVATE_H

#include <errno.h>
#include <string.h>

#include "roce_engine.h"
#include "roce_verbs.h"

#define VERBS_MAX_MR 65536
#define VERBS_MAX_QP 16384
#define VERBS_MAX_WR 32768
#define VERBS_MAX_SGE 32
#define VERBS_MAX_INLINE 1024
#define VERBS_MAX_CQE (1 << 20)
#define VERBS_MAX_RD_ATOMIC 128

/*
 * The provider behind a device (the emulated NIC, lib/transport), as rdma-core's
 * verbs_context_ops and the kernel's ib_device_ops: the core checks what a call asks, keeps the
 * objects' common part and calls these for the rest. None runs per packet.
 */
struct verbs_ops {
	/* bytes of the provider's QP, which embeds struct roce_qp at offset 0 (the kernel's
	 * INIT_RDMA_OBJ_SIZE rule): the core allocates it zeroed, the provider reaches its part
	 * with container_of */
	size_t qp_size;
	void (*qp_init)(struct roce_qp *qp);		/* created, in RESET: set up its part */
	/* modify: @p mask's attributes passed the core's checks; take the provider's share of
	 * them before the core applies its own. 0, or -ENOMEM with nothing changed */
	int (*qp_modify)(struct roce_qp *qp, const struct roce_qp_attr *attr, unsigned int mask);
	void (*qp_reset)(struct roce_qp *qp);			/* back to RESET: forget it all */
	void (*qp_query)(const struct roce_qp *qp, struct roce_qp_attr *attr); /* sq_psn, rq_psn */
	void (*qp_kick)(struct roce_qp *qp);			/* the SQ has new work */
	void (*qp_state_changed)(struct roce_qp *qp, enum roce_qp_state old);
	void (*qp_destroy)(struct roce_qp *qp);			/* free the provider's part */
};

struct roce_device {
	char name[32];				/* "rocelab0" */
	struct roce_engine *eng;		/* clock, timers, mbufs */
	struct roce_device_conf conf;		/* as created */
	struct roce_device_attr attr;		/* limits */
	struct roce_port_attr port;		/* the one port */
	uint32_t npd, ncq, nqp, nmr, nsrq, nah;	/* live objects */
	/*
	 * The tables grow as they fill (verbs_table_fit()), up to VERBS_MAX_MR and max_qp: whole,
	 * they made each device 0.5 MiB and its QP table 128 KiB, two mappings of their own that
	 * start on a page, so every device's hot lines sat at the same offsets in their pages and
	 * 128 devices' fought over the same few cache sets.
	 */
	struct roce_mr **mr;			/* by key index (key >> 8), @mr_cap entries */
	uint32_t mr_cap;			/* entries in @mr; beyond: none registered */
	uint32_t mr_next;			/* next index to try */
	uint8_t key_seq;			/* low byte of keys, bumped per registration */
	struct roce_qp **qp;			/* by qpn - qpn_base, @qp_cap entries */
	uint32_t qp_cap;			/* entries in @qp; beyond: no QP */
	uint32_t qp_next;			/* next QPN offset to try */
	const struct verbs_ops *ops;		/* the provider's, set when it creates the device */
};

struct roce_pd {
	struct roce_device *dev;
	uint32_t refs;			/* MRs, QPs, SRQs, AHs using it */
};

struct roce_mr {
	struct roce_pd *pd;
	uint8_t *addr;			/* start of the region */
	uint64_t length;		/* bytes */
	unsigned int access;		/* enum roce_access_flags */
	uint32_t lkey, rkey;		/* index << 8 | sequence byte */
};

struct roce_cq {
	struct roce_device *dev;
	struct roce_wc *ring;		/* power-of-two ring */
	uint32_t mask;			/* ring size - 1 */
	uint32_t depth;			/* entries the user asked for */
	uint32_t head, tail;		/* free-running: consumer, producer */
	bool overflow;			/* a completion was lost */
	uint32_t refs;			/* QPs using it */
	roce_cq_notify_fn notify;	/* called on each new completion, or NULL */
	void *notify_arg;
};

/* A posted receive: the WR and its SGEs. */
struct verbs_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;		/* sum of the SGE lengths */
	struct roce_sge sge[];		/* num_sge entries (max_sge allocated) */
};

/* A receive queue (a QP's own or an SRQ). */
struct verbs_rq {
	uint8_t *ring;			/* size entries of stride bytes */
	uint32_t stride;		/* sizeof(verbs_recv_wqe) + max_sge SGEs */
	uint32_t size;			/* power of two */
	uint32_t max_wr, max_sge;	/* granted */
	uint32_t head, tail;		/* free-running: consumer, producer */
};

struct roce_srq {
	struct roce_pd *pd;
	struct verbs_rq rq;
	uint32_t refs;			/* QPs using it */
};

struct roce_ah {
	struct roce_pd *pd;
	struct roce_ah_attr attr;
};

enum verbs_wqe_state {
	WQE_POSTED,			/* not yet (fully) sent */
	WQE_PENDING,			/* all packets sent, waiting for the ACK or response */
	WQE_DONE,			/* completed, waiting to be retired in order */
};

/* A posted send. */
struct verbs_send_wqe {
	struct roce_send_wr wr;		/* copy; next and sg_list are not used */
	struct roce_sge *sge;		/* qp->sq_sge slot */
	uint8_t *inline_data;		/* qp->sq_inline slot, when INLINE */
	struct roce_ah_attr av;		/* UD: destination */
	uint32_t length;		/* total payload */
	uint32_t first_psn;		/* PSN of the first packet */
	uint32_t last_psn;		/* PSN of the last packet (READ: of the last response) */
	uint32_t npsn;			/* PSNs the message uses */
	enum verbs_wqe_state state;
	enum roce_wc_status status;	/* completion status once DONE */
	bool signaled;			/* generates a CQE on success */
	bool zc;			/* one SGE, inside an MR with ROCE_ACCESS_ZERO_COPY */
	uint32_t discard;		/* READ, atomic: SGEs that drop bytes (verbs_sge_check()) */
};

/* A QP's common part: what the verbs see. The provider's QP embeds it (verbs_ops.qp_size). */
struct roce_qp {
	struct roce_pd *pd;
	struct roce_device *dev;
	uint32_t qpn;
	enum roce_qp_type type;
	enum roce_qp_state state;
	struct roce_qp_attr attr;	/* as last modified */
	struct roce_cq *scq, *rcq;
	struct roce_srq *srq;
	bool sq_sig_all;
	uint32_t mtu;			/* path MTU in bytes */

	/* send queue */
	struct verbs_send_wqe *sq;	/* ring */
	struct roce_sge *sq_sge;	/* size * max_send_sge */
	uint8_t *sq_inline;		/* size * max_inline_data */
	uint32_t sq_size;		/* power of two */
	uint32_t sq_mask;		/* sq_size - 1 */
	uint32_t sq_head;		/* oldest WQE not retired (the completer's position) */
	uint32_t sq_tail;		/* next free */
	struct verbs_rq rq;		/* own receive queue (unused with an SRQ) */
};

/* Receive queue helpers, shared by QP RQs and SRQs. */
int verbs_rq_init(struct verbs_rq *rq, uint32_t max_wr, uint32_t max_sge);
void verbs_rq_free(struct verbs_rq *rq);

static inline struct verbs_recv_wqe *verbs_rq_peek(struct verbs_rq *rq)
{
	return rq->head == rq->tail ? NULL :
	       (struct verbs_recv_wqe *)(rq->ring + (size_t)(rq->head & (rq->size - 1)) * rq->stride);
}

static inline void verbs_rq_pop(struct verbs_rq *rq)
{
	rq->head++;
}

/*
 * Post @p wr's chain to @p rq (inline: a receive is posted for every SEND).
 * @return 0, or -EINVAL (too many SGEs) / -ENOMEM (full) with *@p bad the WR refused
 */
static inline int verbs_rq_post(struct verbs_rq *rq, const struct roce_recv_wr *wr,
				const struct roce_recv_wr **bad)
{
	for (; wr != NULL; wr = wr->next) {
		struct verbs_recv_wqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			*bad = wr;
			return -EINVAL;
		}
		if (rq->tail - rq->head >= rq->max_wr) {
			*bad = wr;
			return -ENOMEM;
		}
		w = (struct verbs_recv_wqe *)(rq->ring +
					      (size_t)(rq->tail & (rq->size - 1)) * rq->stride);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		if (wr->num_sge == 1) {
			w->sge[0] = wr->sg_list[0];
			w->length = wr->sg_list[0].length;
		} else {
			uint32_t length = 0;

			for (int i = 0; i < wr->num_sge; i++) {
				w->sge[i] = wr->sg_list[i];
				length += wr->sg_list[i].length;
			}
			w->length = length;
		}
		rq->tail++;
	}
	return 0;
}

/** The RQ a QP receives from: its SRQ's, or its own. */
static inline struct verbs_rq *verbs_qp_rq(struct roce_qp *qp)
{
	return qp->srq != NULL ? &qp->srq->rq : &qp->rq;
}

static inline struct verbs_send_wqe *verbs_sq_wqe(struct roce_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & qp->sq_mask];
}

/*
 * The slot the next completion of @p cq goes into, or NULL if the CQ is full (then marked
 * overflowed; the provider counts the completion lost). The caller fills every field and
 * calls verbs_cq_commit(): one write of the completion, where building it aside and copying
 * it in took two. Inline: every message completes at least once.
 */
static inline struct roce_wc *verbs_cq_reserve(struct roce_cq *cq)
{
	if (roce_unlikely(cq->tail - cq->head >= cq->depth)) {
		cq->overflow = true;
		return NULL;
	}
	return &cq->ring[cq->tail & cq->mask];
}

/*
 * The completion written into verbs_cq_reserve()'s slot is there: publish it, notify. Always
 * inlined: gcc's heuristics left it out of line on the receive path of the responder once the
 * transport's QP embedded the core's (a call and a return per receive completion).
 */
static inline __attribute__((always_inline)) void verbs_cq_commit(struct roce_cq *cq)
{
	cq->tail++;
	if (cq->notify != NULL)
		cq->notify(cq, cq->notify_arg);
}

/**
 * Table @p tab of pointers with *@p cap entries (NULL: none yet), grown if need be to hold index
 * @p idx: doubled, the new entries NULL, *@p cap updated. The limit is the caller's (a power of
 * two above @p idx, which doubling from 16 never passes).
 * @return the table, or NULL (out of memory; @p tab is unchanged)
 */
void *verbs_table_fit(void *tab, uint32_t *cap, uint32_t idx);

/** Add a completion; false (and the CQ marked overflowed) if it is full. */
bool verbs_cq_push(struct roce_cq *cq, const struct roce_wc *wc);

/* The MR in @p key's slot of @p dev's table (key >> 8), or NULL: the caller checks its keys. */
static inline struct roce_mr *verbs_mr_at(const struct roce_device *dev, uint32_t key)
{
	uint32_t i = key >> 8;

	return i < dev->mr_cap ? dev->mr[i] : NULL;
}

/*
 * The MR for @p key (lkey or rkey per @p remote) in @p pd, or NULL. Inline, as the next one:
 * every message looks up a key at both ends.
 */
static inline struct roce_mr *verbs_mr_lookup(struct roce_pd *pd, uint32_t key, bool remote)
{
	struct roce_mr *mr = verbs_mr_at(pd->dev, key);

	if (mr == NULL || mr->pd != pd || (remote ? mr->rkey : mr->lkey) != key)
		return NULL;
	return mr;
}

/**
 * Check that [va, va+len) lies in @p mr and @p access is allowed.
 * @return 0, -EFAULT (out of bounds), -EACCES (rights)
 */
static inline int verbs_mr_check(const struct roce_mr *mr, uint64_t va, uint64_t len,
				 unsigned int access)
{
	uint64_t start = (uint64_t)(uintptr_t)mr->addr;

	if (va < start || len > mr->length || va - start > mr->length - len)
		return -EFAULT;
	if ((mr->access & access) != access)
		return -EACCES;
	return 0;
}

/*
 * verbs_sge_copy() and verbs_sge_place() for any list: walks the SGEs. Into them (@p to_sge),
 * those whose bit is set in @p skip are left as they are.
 */
void verbs_sge_copy_list(const struct roce_sge *sge, uint32_t num_sge, uint32_t offset,
			 uint8_t *buf, uint32_t len, bool to_sge, uint32_t skip);

/**
 * Copy @p len bytes out of (to_sge false) or into (true) an SGE list at byte @p offset. Inline:
 * the usual case, a copy within a one-entry list, is one memcpy.
 */
static inline void verbs_sge_copy(const struct roce_sge *sge, uint32_t num_sge, uint32_t offset,
				  uint8_t *buf, uint32_t len, bool to_sge)
{
	if (num_sge == 1 && offset <= sge[0].length && len <= sge[0].length - offset) {
		uint8_t *p = (uint8_t *)(uintptr_t)sge[0].addr + offset;

		if (to_sge)
			memcpy(p, buf, len);
		else
			memcpy(buf, p, len);
		return;
	}
	verbs_sge_copy_list(sge, num_sge, offset, buf, len, to_sge, 0);
}

/* A mask of SGEs, bit i for SGE i: those in regions with ROCE_ACCESS_DISCARD. */
ROCE_STATIC_ASSERT(VERBS_MAX_SGE <= 32);

/**
 * Place @p len payload bytes into an SGE list at byte @p offset, except into the SGEs whose
 * bit is set in @p discard (verbs_sge_check()'s mask): their bytes are dropped.
 */
static inline void verbs_sge_place(const struct roce_sge *sge, uint32_t num_sge, uint32_t offset,
				   const uint8_t *buf, uint32_t len, uint32_t discard)
{
	if (num_sge == 1 && offset <= sge[0].length && len <= sge[0].length - offset) {
		if (!(discard & 1))
			memcpy((uint8_t *)(uintptr_t)sge[0].addr + offset, buf, len);
		return;
	}
	verbs_sge_copy_list(sge, num_sge, offset, (uint8_t *)(uintptr_t)buf, len, true, discard);
}

/**
 * Check every SGE's lkey, bounds and (with LOCAL_WRITE in @p access) rights. Inline: every
 * message checks its SGEs once at each end. With @p discard, also say which SGEs lie in
 * regions with ROCE_ACCESS_DISCARD (bit i for SGE i; verbs_sge_place()).
 * @return 0 or -errno
 */
static inline int verbs_sge_check(struct roce_pd *pd, const struct roce_sge *sge, uint32_t num_sge,
				  unsigned int access, uint32_t *discard)
{
	uint32_t mask = 0;

	for (uint32_t i = 0; i < num_sge; i++) {
		struct roce_mr *mr;
		int rc;

		if (sge[i].length == 0)
			continue;
		mr = verbs_mr_lookup(pd, sge[i].lkey, false);
		if (mr == NULL)
			return -EINVAL;
		rc = verbs_mr_check(mr, sge[i].addr, sge[i].length, access);
		if (rc != 0)
			return rc;
		if (mr->access & ROCE_ACCESS_DISCARD)
			mask |= 1u << i;
	}
	if (discard != NULL)
		*discard = mask;
	return 0;
}

/* The QP numbered @p qpn, or NULL; inline: every arriving frame looks its QP up. */
static inline struct roce_qp *verbs_qp_lookup(struct roce_device *dev, uint32_t qpn)
{
	uint32_t i = qpn - dev->conf.qpn_base;

	return i < dev->qp_cap ? dev->qp[i] : NULL;
}

/** Move @p qp to @p state (no checks) and tell the provider (verbs_ops.qp_state_changed). */
void verbs_qp_set_state(struct roce_qp *qp, enum roce_qp_state state);


#endif /* VERBS_PRIVATE_H */
