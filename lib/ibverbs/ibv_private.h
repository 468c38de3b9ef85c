/*
 * rocelab's libibverbs.so.1: rdma-core's verbs API, over the emulated NIC (lib/nic).
 *
 * Each verbs object embeds libibverbs' own (struct ibv_qp in struct ibvr_qp, ...), as an
 * rdma-core provider's do, and the data path reaches it through struct ibv_context's ops.
 * Control calls are commands the NIC's thread runs; post_send, post_recv and poll_cq touch
 * only rings in memory.
 */
#ifndef IBV_PRIVATE_H
#define IBV_PRIVATE_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "roce_nic.h"
#include "roce_verbs.h"

#define IBVR_DEV_NAME "rocelab0"
#define IBVR_GIDS 1			/* GID table: the address --ip gave */

/* A lock for a queue that two threads of the program may use at once. */
struct ibvr_lock {
	atomic_flag held;
};

static inline void ibvr_lock(struct ibvr_lock *l)
{
	while (atomic_flag_test_and_set_explicit(&l->held, memory_order_acquire))
		;
}

static inline void ibvr_unlock(struct ibvr_lock *l)
{
	atomic_flag_clear_explicit(&l->held, memory_order_release);
}

struct ibvr_context {
	struct verbs_context vctx;	/* vctx.context is what the program holds */
	struct roce_nic *nic;
};

struct ibvr_pd {
	struct ibv_pd ibv;
	struct roce_pd *pd;
};

struct ibvr_mr {
	struct ibv_mr ibv;
	struct roce_mr *mr;
};

#define IBVR_EVENTS 1024		/* events a completion channel holds unread */

struct ibvr_channel {
	struct ibv_comp_channel ibv;	/* ibv.fd: an eventfd, one count per event */
	pthread_mutex_t lock;
	struct ibvr_cq *ev[IBVR_EVENTS];	/* events not yet read, oldest first */
	uint32_t ev_head, ev_tail;
	int ncq;			/* CQs that use it */
};

struct ibvr_cq {
	struct ibv_cq ibv;
	struct roce_nic_cq ncq;
	struct ibvr_lock lock;
	struct ibvr_channel *channel;
	uint32_t empty_polls;		/* polls in a row that found nothing */
};

#define IBVR_POLLS_BEFORE_WAIT 16	/* empty polls in a row, then poll_cq sleeps ... */
#define IBVR_CQ_WAIT_NS 100000		/* ... until a completion, at most this long */

struct ibvr_srq {
	struct ibv_srq ibv;
	struct roce_srq *srq;
	struct roce_nic_wq rq;
	struct ibvr_lock lock;
	uint32_t max_sge;
};

struct ibvr_qp {
	struct ibv_qp ibv;
	struct roce_qp *qp;
	struct roce_nic_wq sq, rq;
	struct ibvr_lock sq_lock, rq_lock;
	struct ibvr_srq *srq;
	struct ibv_qp_cap cap;		/* what was granted */
	bool sq_sig_all;
};

struct ibvr_ah {
	struct ibv_ah ibv;
	struct roce_ah *ah;
};

#define ibvr_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#define to_ictx(c) ibvr_of(ibvr_of(c, struct verbs_context, context), struct ibvr_context, vctx)
#define to_ipd(p) ibvr_of(p, struct ibvr_pd, ibv)
#define to_imr(m) ibvr_of(m, struct ibvr_mr, ibv)
#define to_icq(c) ibvr_of(c, struct ibvr_cq, ibv)
#define to_isrq(s) ibvr_of(s, struct ibvr_srq, ibv)
#define to_iqp(q) ibvr_of(q, struct ibvr_qp, ibv)
#define to_iah(a) ibvr_of(a, struct ibvr_ah, ibv)
#define to_ichan(c) ibvr_of(c, struct ibvr_channel, ibv)

/*
 * The library's one line for the program's user: "rocelab0: ..." on stderr, each distinct
 * complaint once (a program that retries a refused call in a loop does not flood).
 */
void ibvr_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** False (errno EIO, one line) in a child that fork() made: the NIC stayed with the parent. */
bool ibvr_usable(void);

/* ibv_data.c: the data path, as ibv_context's ops */
int ibvr_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int ibvr_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int ibvr_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int ibvr_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int ibvr_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void ibvr_cq_event(void *arg);

/* ibv_verbs.c: ibv_create_qp_ex's op */
struct ibv_qp *ibvr_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *ex);

#endif /* IBV_PRIVATE_H */
