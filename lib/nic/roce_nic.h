/*
 * lib/nic: the emulated NIC as hardware, beside a program rather than inside its calls.
 *
 * A NIC here is the engine, a DPDK port, the emulated RoCE device and the link between them,
 * run by a thread of its own in wall-clock time. A program reaches it as it reaches an RNIC:
 * - control (create a QP, modify it, register memory, ...) through a command interface: the
 *   command runs on the NIC's thread and the caller waits for its answer;
 * - work requests through queues in memory, one ring per send queue, receive queue and SRQ:
 *   the program writes a WQE into a ring and rings the NIC's doorbell;
 * - completions through a ring per CQ that the program polls, and an event callback when the
 *   program armed the CQ (a completion channel).
 * Each ring has one producer and one consumer: the program produces WQEs and consumes
 * completions, the NIC's thread the reverse. The engine and everything of the device stays
 * the NIC thread's alone, so the engine runs as it does in `perf --dev`: single-threaded.
 */
#ifndef ROCE_NIC_H
#define ROCE_NIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_verbs.h"
#include "roce_wire.h"

struct roce_nic;

/* Where the NIC's frames go, and how it is set up. */
struct roce_nic_conf {
	const char *devargs;		/* DPDK port: what --dev takes */
	struct roce_ip_addr ip;		/* the port's address, the device's GID 0 */
	uint8_t ip_ver;			/* 4 or 6 */
	const char *capture;		/* pcap file of the frames between device and port, or NULL */
	const char *eal_args;		/* extra DPDK EAL arguments, or NULL */
	uint64_t rate_bps;		/* the link's rate; 0: the port's */
	const char *name;		/* device name; NULL: "rocelab0" */
};

/* A work queue's ring: slots of @stride bytes, written by one thread and read by another. */
struct roce_nic_ring {
	_Atomic uint32_t head;		/* next slot the producer writes */
	uint8_t pad0[60];
	_Atomic uint32_t tail;		/* next slot the consumer reads */
	uint8_t pad1[60];
	uint32_t mask;			/* slots - 1; slots is a power of two */
	uint32_t stride;		/* bytes per slot */
	uint8_t *slot;
};

#define ROCE_NIC_MAX_SGE 16		/* scatter/gather entries per WQE */
#define ROCE_NIC_MAX_INLINE 256		/* inline bytes per send WQE */

/* A send WQE as the program writes it: the WR, its SGEs, and the copy of inline data. */
struct roce_nic_swqe {
	struct roce_send_wr wr;		/* wr.sg_list: set by the NIC; wr.next unused */
	struct roce_sge sge[ROCE_NIC_MAX_SGE];
	uint8_t inl[ROCE_NIC_MAX_INLINE]; /* ROCE_SEND_INLINE: the data; sge[0] points here */
};

struct roce_nic_rwqe {
	struct roce_recv_wr wr;
	struct roce_sge sge[ROCE_NIC_MAX_SGE];
};

/* Send queue, receive queue or SRQ of the program, drained by the NIC into the device's. */
struct roce_nic_wq {
	struct roce_nic_ring ring;
	struct roce_qp *qp;		/* send or receive queue of this QP ... */
	struct roce_srq *srq;		/* ... or this SRQ */
	bool send;
	struct roce_nic_wq *next;	/* the NIC's list */
};

typedef void (*roce_nic_event_fn)(void *arg);

/* A completion ring: the device's CQ, moved by the NIC to where the program polls it. */
struct roce_nic_cq {
	struct roce_nic_ring ring;	/* of struct roce_wc */
	_Atomic uint32_t armed;		/* the program asked for an event (ibv_req_notify_cq) */
	_Atomic int32_t error;		/* -EOVERFLOW once the device's CQ overflowed */
	struct roce_cq *cq;
	roce_nic_event_fn event;	/* called on the NIC's thread when an armed CQ gets one */
	void *event_arg;
	bool pending;			/* the device's CQ has completions to move: queued */
	struct roce_nic_cq *pend_next;	/* the NIC's queue of CQs with completions to move */
	struct roce_nic *nic;
	struct roce_nic_cq *next;	/* the NIC's list */
};

/**
 * Bring the NIC up: DPDK's EAL (once per process), the port, the device, the link, and the
 * thread that runs them. @return the NIC; NULL with errno set and @p err filled (one line)
 */
struct roce_nic *roce_nic_start(const struct roce_nic_conf *conf, char *err, size_t errlen);

/** Stop the thread, let the last frames out, close the port and the capture. NULL: no-op. */
void roce_nic_stop(struct roce_nic *nic);

typedef int (*roce_nic_cmd_fn)(struct roce_nic *nic, void *arg);

/**
 * Run @p fn on the NIC's thread and wait for it: the command interface. @p fn may use
 * roce_nic_device() and the calls below marked "in a command".
 * @return what @p fn returned; -ESHUTDOWN once the NIC stopped
 */
int roce_nic_exec(struct roce_nic *nic, roce_nic_cmd_fn fn, void *arg);

/** The device (in a command, or for what does not change: its name, its attributes). */
struct roce_device *roce_nic_device(struct roce_nic *nic);

/** The port's MAC, MTU (L3 bytes) and link rate in b/s, as found at start. */
void roce_nic_port(const struct roce_nic *nic, uint8_t mac[6], uint32_t *mtu, uint64_t *bps);

/**
 * In a command: the MAC of @p ip, resolved by ARP or ND on the port while the NIC keeps
 * running. @return 0; -EHOSTUNREACH (no answer within 3 s)
 */
int roce_nic_resolve(struct roce_nic *nic, const struct roce_ip_addr *ip, uint8_t ip_ver,
		     uint8_t mac[6]);

/**
 * A ring of @p slots (rounded up to a power of two) slots of @p stride bytes.
 * @return 0; -ENOMEM
 */
int roce_nic_ring_init(struct roce_nic_ring *r, uint32_t slots, uint32_t stride);
void roce_nic_ring_free(struct roce_nic_ring *r);

/** In a command: the NIC drains @p wq from now on (until roce_nic_wq_detach()). */
void roce_nic_wq_attach(struct roce_nic *nic, struct roce_nic_wq *wq);
void roce_nic_wq_detach(struct roce_nic *nic, struct roce_nic_wq *wq);

/** In a command: the NIC moves @p cq's completions to its ring from now on. */
void roce_nic_cq_attach(struct roce_nic *nic, struct roce_nic_cq *cq);
void roce_nic_cq_detach(struct roce_nic *nic, struct roce_nic_cq *cq);

/* ---- the program's side: no lock, no system call ---- */

/** The slot the producer writes next, or NULL when the ring is full. */
static inline void *roce_nic_ring_prod(struct roce_nic_ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask)
		return NULL;
	return r->slot + (size_t)(h & r->mask) * r->stride;
}

/** Publish the slot written. */
static inline void roce_nic_ring_push(struct roce_nic_ring *r)
{
	atomic_store_explicit(&r->head, atomic_load_explicit(&r->head, memory_order_relaxed) + 1,
			      memory_order_release);
}

/** The slot the consumer reads next, or NULL when the ring is empty. */
static inline void *roce_nic_ring_cons(struct roce_nic_ring *r)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t == atomic_load_explicit(&r->head, memory_order_acquire))
		return NULL;
	return r->slot + (size_t)(t & r->mask) * r->stride;
}

/** Give the slot read back. */
static inline void roce_nic_ring_pop(struct roce_nic_ring *r)
{
	atomic_store_explicit(&r->tail, atomic_load_explicit(&r->tail, memory_order_relaxed) + 1,
			      memory_order_release);
}

/**
 * The program found @p cq empty: sleep until the NIC moves a completion into any CQ ring, at
 * most @p ns nanoseconds. On a machine with fewer cores than busy threads, a program that
 * polls an empty CQ in a loop holds the core the NIC needs to make the completion it waits for.
 */
void roce_nic_cq_wait(struct roce_nic_cq *cq, long ns);

/** Tell the NIC that queues have new WQEs. */
void roce_nic_doorbell(struct roce_nic *nic);

/**
 * Ask for an event on @p cq's next completion (one event, then disarmed). A completion already
 * in the ring when the CQ is armed gives no event: poll after arming, as with verbs.
 */
static inline void roce_nic_cq_arm(struct roce_nic_cq *cq)
{
	atomic_store_explicit(&cq->armed, 1, memory_order_seq_cst);
}

#endif /* ROCE_NIC_H */
