/*
 * The emulated NIC on its own thread: a command mailbox, a doorbell, work queue rings drained
 * into the device, completions moved from the device's CQs to rings the program polls.
 *
 * A thread, not a process of its own: the device reads and writes the program's registered
 * memory as a NIC does by DMA, which a thread does with plain loads and stores; a process
 * would need the program's every buffer in shared memory, or a system call per access.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "roce_common.h"
#include "roce_engine.h"
#include "roce_io.h"
#include "roce_nic.h"
#include "roce_transport.h"

#define NIC_IDLE_TURNS 32		/* empty turns before the NIC yields its core between turns */
#define NIC_SPIN ROCE_MS		/* work within this long: the NIC polls; quiet longer: naps */
#define NIC_NAP (200 * ROCE_US)		/* the longest nap */
#define NIC_LINGER (10 * ROCE_MS)	/* at stop: frames still owed to the peer leave */
#define NIC_RESOLVE_WAIT (3 * ROCE_SEC)
#define NIC_CQ_BATCH 32

struct roce_nic {
	struct roce_nic_conf conf;
	char name[32];
	struct roce_engine *eng;
	struct roce_port *port;
	struct roce_device *dev;
	struct roce_link *link;
	struct roce_pcap_writer *pcap;
	uint8_t mac[6];
	uint32_t mtu;
	uint64_t bps;

	pthread_t thread;
	bool running;

	/* command mailbox: the program's side takes the lock, the NIC's thread checks @cmd_ready */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic uint32_t cmd_ready;
	roce_nic_cmd_fn cmd_fn;
	void *cmd_arg;
	int cmd_rc;
	bool cmd_done;
	_Atomic uint32_t stopping;

	/* doorbell: bumped by the program, compared by the NIC */
	_Atomic uint32_t doorbell;
	_Atomic uint32_t napping;	/* the NIC sleeps on the doorbell: a post wakes it */
	uint32_t doorbell_seen;
	_Atomic uint32_t moves;		/* bumped each time completions reach a CQ ring */
	_Atomic uint32_t cq_waiters;	/* program threads asleep in roce_nic_cq_wait() */
	bool backlog;			/* a ring holds WQEs the device had no room for */

	/* the NIC thread's own */
	struct roce_nic_wq *wqs;
	struct roce_nic_cq *cqs;
	struct roce_nic_cq *pend;	/* CQs with completions to move, in the order they got them */
	struct roce_nic_cq **pend_tail;
	uint32_t quiet;
	uint64_t frames_seen;		/* roce_port_frames() at the last turn */
	roce_time_t busy_at;		/* when the NIC last had work */

	/* start-up, on the NIC's thread: its outcome for roce_nic_start() */
	char *err;
	size_t errlen;
	int start_rc;
	bool started;
};

int roce_nic_ring_init(struct roce_nic_ring *r, uint32_t slots, uint32_t stride)
{
	uint32_t n = 1;

	while (n < slots)
		n <<= 1;
	memset(r, 0, sizeof(*r));
	r->slot = calloc(n, stride);
	if (r->slot == NULL)
		return -ENOMEM;
	r->mask = n - 1;
	r->stride = stride;
	return 0;
}

void roce_nic_ring_free(struct roce_nic_ring *r)
{
	free(r->slot);
	r->slot = NULL;
}

/* ---- the NIC's work ---- */

/*
 * The device's CQ got a completion (inside the transport: only note it). The CQs wait in the
 * order of their first completion, and are moved and signalled in that order: a program whose
 * send and receive CQs share a channel reads their events in the order an RNIC raises them (a
 * send's ACK came before the peer's answer to it; perftest's ib_send_lat -e depends on it).
 */
static void cq_notified(struct roce_cq *cq, void *arg)
{
	struct roce_nic_cq *c = arg;
	struct roce_nic *nic = c->nic;

	(void)cq;
	if (c->pending)
		return;
	c->pending = true;
	c->pend_next = NULL;
	*nic->pend_tail = c;
	nic->pend_tail = &c->pend_next;
}

/* Take @p c, pointed to by @p pp, off the queue of CQs with completions to move. */
static void cq_unqueue(struct roce_nic *nic, struct roce_nic_cq **pp, struct roce_nic_cq *c)
{
	*pp = c->pend_next;
	if (nic->pend_tail == &c->pend_next)
		nic->pend_tail = pp;
	c->pend_next = NULL;
}

/* Move @p c's completions to its ring; an armed CQ that got one raises its event. */
static bool cq_move(struct roce_nic_cq *c)
{
	struct roce_wc wc[NIC_CQ_BATCH];
	uint32_t room, moved = 0;
	int n;

	for (;;) {
		uint32_t h = atomic_load_explicit(&c->ring.head, memory_order_relaxed);

		room = c->ring.mask + 1 - (h - atomic_load_explicit(&c->ring.tail,
								      memory_order_acquire));
		if (room == 0)
			break;		/* the program is behind: the rest waits in the device */
		n = roce_poll_cq(c->cq, (int)ROCE_MIN(room, (uint32_t)NIC_CQ_BATCH), wc);
		if (n < 0) {
			atomic_store_explicit(&c->error, n, memory_order_release);
			break;
		}
		for (int i = 0; i < n; i++)
			memcpy(c->ring.slot + (size_t)((h + (uint32_t)i) & c->ring.mask) *
			       c->ring.stride, &wc[i], sizeof(wc[i]));
		atomic_store_explicit(&c->ring.head, h + (uint32_t)n, memory_order_release);
		moved += (uint32_t)n;
		if (n < (int)ROCE_MIN(room, (uint32_t)NIC_CQ_BATCH)) {
			c->pending = false;
			break;
		}
	}
	if (moved == 0)
		return false;
	atomic_fetch_add_explicit(&c->nic->moves, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&c->nic->cq_waiters, memory_order_seq_cst) != 0)
		syscall(SYS_futex, &c->nic->moves, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	/* pairs with the program's arm-then-poll: one of the two sees the other */
	atomic_thread_fence(memory_order_seq_cst);
	if (c->event != NULL && atomic_exchange(&c->armed, 0) != 0)
		c->event(c->event_arg);
	return true;
}

/* Post what @p wq holds to the device, as far as the device's queue takes it. */
static bool wq_drain(struct roce_nic *nic, struct roce_nic_wq *wq)
{
	bool did = false;
	void *s;

	while ((s = roce_nic_ring_cons(&wq->ring)) != NULL) {
		int rc;

		if (wq->send) {
			struct roce_nic_swqe *w = s;
			const struct roce_send_wr *bad;

			w->wr.next = NULL;
			w->wr.sg_list = w->sge;
			rc = roce_post_send(wq->qp, &w->wr, &bad);
		} else {
			struct roce_nic_rwqe *w = s;
			const struct roce_recv_wr *bad;

			w->wr.next = NULL;
			w->wr.sg_list = w->sge;
			rc = wq->srq != NULL ? roce_post_srq_recv(wq->srq, &w->wr, &bad) :
			     roce_post_recv(wq->qp, &w->wr, &bad);
		}
		if (rc == -ENOMEM) {
			nic->backlog = true;	/* the device's queue is full: the rest waits */
			break;
		}
		/* any other refusal was checked on the program's side: the WQE is dropped */
		roce_nic_ring_pop(&wq->ring);
		did = true;
	}
	return did;
}

static bool nic_turn(struct roce_nic *nic)
{
	bool did = roce_engine_run(nic->eng, 0) != 0;
	uint32_t bell = atomic_load_explicit(&nic->doorbell, memory_order_acquire);
	uint64_t frames = roce_port_frames(nic->port);

	if (frames != nic->frames_seen) {
		nic->frames_seen = frames;
		did = true;
	}

	/* a doorbell, or WQEs that waited for room in the device's queues */
	if (bell != nic->doorbell_seen || nic->backlog) {
		nic->doorbell_seen = bell;
		nic->backlog = false;
		for (struct roce_nic_wq *wq = nic->wqs; wq != NULL; wq = wq->next)
			did |= wq_drain(nic, wq);
	}
	for (struct roce_nic_cq **pp = &nic->pend, *c; (c = *pp) != NULL;) {
		did |= cq_move(c);
		if (c->pending)
			pp = &c->pend_next;	/* its ring is full: the rest waits, queued */
		else
			cq_unqueue(nic, pp, c);
	}
	return did;
}

/*
 * Between turns. While in use (work within NIC_SPIN) the NIC polls, and after NIC_IDLE_TURNS
 * empty turns it yields its core at each: a program's threads may spin (a latency test watches
 * its buffer without a call), and on a machine with fewer cores than busy threads a NIC that
 * held its core would hold up the program it serves. Quiet for longer, it naps on its doorbell:
 * a post wakes it at once, a frame from the wire waits at most NIC_NAP.
 */
static void nic_idle(struct roce_nic *nic, bool did)
{
	struct timespec ts = { 0, 0 };
	roce_time_t now, next;

	now = roce_engine_now(nic->eng);
	if (did) {
		nic->quiet = 0;
		nic->busy_at = now;
		return;
	}
	if (++nic->quiet < NIC_IDLE_TURNS)
		return;
	if (now - nic->busy_at < NIC_SPIN) {
		sched_yield();
		return;
	}
	next = roce_engine_next(nic->eng);
	if (next <= now)
		return;
	ts.tv_nsec = (long)(ROCE_MIN(NIC_NAP, next - now) / ROCE_NS);
	atomic_store_explicit(&nic->napping, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&nic->doorbell, memory_order_seq_cst) == nic->doorbell_seen &&
	    atomic_load_explicit(&nic->cmd_ready, memory_order_seq_cst) == 0)
		syscall(SYS_futex, &nic->doorbell, FUTEX_WAIT_PRIVATE, nic->doorbell_seen, &ts,
			NULL, 0);
	atomic_store_explicit(&nic->napping, 0, memory_order_relaxed);
}

static void run_command(struct roce_nic *nic)
{
	pthread_mutex_lock(&nic->lock);
	if (atomic_load(&nic->cmd_ready) != 0 && !nic->cmd_done) {
		nic->cmd_rc = nic->cmd_fn(nic, nic->cmd_arg);
		nic->cmd_done = true;
		atomic_store(&nic->cmd_ready, 0);
		pthread_cond_broadcast(&nic->cond);
	}
	pthread_mutex_unlock(&nic->lock);
}

/* ---- bring-up, on the NIC's thread (the EAL pins the thread that initialises it) ---- */

#define NIC_ERR(nic, rc, ...) \
	do { \
		snprintf((nic)->err, (nic)->errlen, __VA_ARGS__); \
		return (rc); \
	} while (0)

/* The largest IB MTU whose RoCEv2 packets fit an L3 MTU of @p l3 (IP, UDP, BTH, RETH, ICRC). */
static enum roce_mtu mtu_for_port(uint32_t l3)
{
	enum roce_mtu m = ROCE_MTU_4096;

	while (m > ROCE_MTU_256 && roce_mtu_bytes(m) + 20 + 8 + 12 + 28 + 4 > l3)
		m--;
	return m;
}

static int nic_open(struct roce_nic *nic)
{
	const struct roce_nic_conf *conf = &nic->conf;
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_WALL, .nb_mbufs = 8192, .name = "nic" };
	struct roce_port_conf pc = { .devargs = conf->devargs };
	struct roce_device_conf dc = { 0 };
	struct roce_link_end dev_end, port_end;
	struct roce_link_conf lc = { 0 };
	bool up;
	int rc;

	rc = roce_eal_init(conf->eal_args);
	if (rc != 0)
		NIC_ERR(nic, rc, "DPDK's EAL did not start (its message is above)");
	nic->eng = roce_engine_create(&ec);
	if (nic->eng == NULL)
		NIC_ERR(nic, -ENOMEM, "cannot create the engine and its mbuf pool");
	nic->port = roce_port_open(nic->eng, &pc, nic->err, nic->errlen);
	if (nic->port == NULL)
		return -ENODEV;
	roce_port_mac(nic->port, nic->mac);
	if (roce_port_link(nic->port, &up, &nic->bps) != 0 || nic->bps == 0)
		nic->bps = 100000000000ull;
	if (conf->rate_bps != 0)
		nic->bps = conf->rate_bps;
	nic->mtu = roce_port_mtu(nic->port);
	rc = roce_port_add_addr(nic->port, &conf->ip, conf->ip_ver);
	if (rc != 0)
		NIC_ERR(nic, rc, "cannot give the port its address: %s", strerror(-rc));
	memcpy(dc.mac, nic->mac, 6);
	dc.ip[0] = conf->ip;
	dc.ip_ver[0] = conf->ip_ver;
	dc.name = nic->name;
	dc.speed_bps = nic->bps;
	dc.max_mtu = mtu_for_port(nic->mtu);
	nic->dev = roce_device_create(nic->eng, &dc);
	if (nic->dev == NULL)
		NIC_ERR(nic, -ENOMEM, "cannot create the emulated device");
	dev_end = roce_device_link_end(nic->dev);
	dev_end = roce_port_gate(nic->port, &dev_end);	/* the NIC waits for TX room */
	port_end = roce_port_link_end(nic->port);
	lc.rate_bps = nic->bps;
	lc.mtu = nic->mtu;
	nic->link = roce_link_create(nic->eng, &lc, &dev_end, &port_end);
	if (nic->link == NULL)
		NIC_ERR(nic, -ENOMEM, "cannot create the link to the port");
	roce_device_attach(nic->dev, nic->link, 0);
	roce_port_attach(nic->port, nic->link, 1);
	if (conf->capture != NULL) {
		nic->pcap = roce_pcap_create_snap(conf->capture, 0, nic->err, nic->errlen);
		if (nic->pcap == NULL)
			return -EIO;
		roce_link_set_tap(nic->link, nic->pcap);
	}
	return 0;
}

static void nic_close(struct roce_nic *nic)
{
	if (nic->eng != NULL && nic->link != NULL) {
		roce_time_t end = roce_engine_now(nic->eng) + NIC_LINGER;

		while (roce_engine_now(nic->eng) < end)
			if (!nic_turn(nic))
				sched_yield();
		roce_port_flush(nic->port);
	}
	roce_link_destroy(nic->link);
	roce_device_destroy(nic->dev);
	roce_port_close(nic->port);
	roce_pcap_close_writer(nic->pcap);
	roce_engine_destroy(nic->eng);
	nic->link = NULL;
	nic->dev = NULL;
	nic->port = NULL;
	nic->pcap = NULL;
	nic->eng = NULL;
}

static void *nic_main(void *arg)
{
	struct roce_nic *nic = arg;
	int rc = nic_open(nic);

	pthread_mutex_lock(&nic->lock);
	nic->start_rc = rc;
	nic->started = true;
	pthread_cond_broadcast(&nic->cond);
	pthread_mutex_unlock(&nic->lock);
	if (rc != 0) {
		nic_close(nic);
		return NULL;
	}
	prctl(PR_SET_TIMERSLACK, 1000UL);	/* naps of microseconds, not the default 50 */
	while (atomic_load_explicit(&nic->stopping, memory_order_relaxed) == 0) {
		bool did = nic_turn(nic);

		if (atomic_load_explicit(&nic->cmd_ready, memory_order_acquire) != 0) {
			run_command(nic);
			did = true;
		}
		nic_idle(nic, did);
	}
	nic_close(nic);
	return NULL;
}

struct roce_nic *roce_nic_start(const struct roce_nic_conf *conf, char *err, size_t errlen)
{
	struct roce_nic *nic;
	int rc;

	if (conf->devargs == NULL || conf->devargs[0] == '\0') {
		snprintf(err, errlen, "no port given (--dev DEVARGS)");
		errno = EINVAL;
		return NULL;
	}
	if (conf->ip_ver != 4 && conf->ip_ver != 6) {
		snprintf(err, errlen, "no address given (--ip: IPv4 or IPv6)");
		errno = EINVAL;
		return NULL;
	}
	nic = calloc(1, sizeof(*nic));
	if (nic == NULL) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	nic->conf = *conf;
	nic->pend_tail = &nic->pend;
	snprintf(nic->name, sizeof(nic->name), "%s", conf->name != NULL ? conf->name : "rocelab0");
	nic->err = err;
	nic->errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	pthread_mutex_init(&nic->lock, NULL);
	pthread_cond_init(&nic->cond, NULL);
	rc = pthread_create(&nic->thread, NULL, nic_main, nic);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the NIC's thread: %s", strerror(rc));
		free(nic);
		errno = rc;
		return NULL;
	}
	pthread_mutex_lock(&nic->lock);
	while (!nic->started)
		pthread_cond_wait(&nic->cond, &nic->lock);
	rc = nic->start_rc;
	pthread_mutex_unlock(&nic->lock);
	if (rc != 0) {
		pthread_join(nic->thread, NULL);
		pthread_mutex_destroy(&nic->lock);
		pthread_cond_destroy(&nic->cond);
		free(nic);
		errno = -rc;
		return NULL;
	}
	nic->err = NULL;
	nic->errlen = 0;
	nic->running = true;
	return nic;
}

void roce_nic_stop(struct roce_nic *nic)
{
	if (nic == NULL)
		return;
	if (nic->running) {
		atomic_store(&nic->stopping, 1);
		pthread_join(nic->thread, NULL);
		nic->running = false;
	}
	pthread_mutex_destroy(&nic->lock);
	pthread_cond_destroy(&nic->cond);
	free(nic);
}

int roce_nic_exec(struct roce_nic *nic, roce_nic_cmd_fn fn, void *arg)
{
	int rc;

	if (!nic->running || atomic_load(&nic->stopping) != 0)
		return -ESHUTDOWN;
	if (pthread_equal(pthread_self(), nic->thread))
		return fn(nic, arg);		/* a command's own call */
	pthread_mutex_lock(&nic->lock);
	while (atomic_load(&nic->cmd_ready) != 0)	/* another thread's command */
		pthread_cond_wait(&nic->cond, &nic->lock);
	nic->cmd_fn = fn;
	nic->cmd_arg = arg;
	nic->cmd_done = false;
	atomic_store_explicit(&nic->cmd_ready, 1, memory_order_release);
	while (!nic->cmd_done)
		pthread_cond_wait(&nic->cond, &nic->lock);
	rc = nic->cmd_rc;
	nic->cmd_done = false;
	pthread_cond_broadcast(&nic->cond);
	pthread_mutex_unlock(&nic->lock);
	return rc;
}

struct roce_device *roce_nic_device(struct roce_nic *nic)
{
	return nic->dev;
}

void roce_nic_port(const struct roce_nic *nic, uint8_t mac[6], uint32_t *mtu, uint64_t *bps)
{
	memcpy(mac, nic->mac, 6);
	*mtu = nic->mtu;
	*bps = nic->bps;
}

int roce_nic_resolve(struct roce_nic *nic, const struct roce_ip_addr *ip, uint8_t ip_ver,
		     uint8_t mac[6])
{
	roce_time_t end = roce_engine_now(nic->eng) + NIC_RESOLVE_WAIT;
	int rc;

	while ((rc = roce_port_resolve(nic->port, ip, ip_ver, mac)) == -EAGAIN) {
		if (roce_engine_now(nic->eng) > end)
			return -EHOSTUNREACH;
		if (!nic_turn(nic))
			sched_yield();
	}
	return rc;
}

void roce_nic_doorbell(struct roce_nic *nic)
{
	atomic_fetch_add_explicit(&nic->doorbell, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&nic->napping, memory_order_seq_cst) != 0)
		syscall(SYS_futex, &nic->doorbell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void roce_nic_cq_wait(struct roce_nic_cq *cq, long ns)
{
	struct roce_nic *nic = cq->nic;
	struct timespec ts = { 0, ns };
	uint32_t seen;

	/* pairs with cq_move(): the ring filled before we looked, or the NIC sees us asleep */
	atomic_fetch_add_explicit(&nic->cq_waiters, 1, memory_order_seq_cst);
	seen = atomic_load_explicit(&nic->moves, memory_order_seq_cst);
	if (atomic_load_explicit(&cq->ring.head, memory_order_seq_cst) ==
	    atomic_load_explicit(&cq->ring.tail, memory_order_relaxed))
		syscall(SYS_futex, &nic->moves, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	atomic_fetch_sub_explicit(&nic->cq_waiters, 1, memory_order_relaxed);
}

void roce_nic_wq_attach(struct roce_nic *nic, struct roce_nic_wq *wq)
{
	wq->next = nic->wqs;
	nic->wqs = wq;
}

void roce_nic_wq_detach(struct roce_nic *nic, struct roce_nic_wq *wq)
{
	for (struct roce_nic_wq **p = &nic->wqs; *p != NULL; p = &(*p)->next)
		if (*p == wq) {
			*p = wq->next;
			return;
		}
}

void roce_nic_cq_attach(struct roce_nic *nic, struct roce_nic_cq *cq)
{
	cq->nic = nic;
	cq->next = nic->cqs;
	nic->cqs = cq;
	roce_cq_set_notify(cq->cq, cq_notified, cq);
}

void roce_nic_cq_detach(struct roce_nic *nic, struct roce_nic_cq *cq)
{
	roce_cq_set_notify(cq->cq, NULL, NULL);
	for (struct roce_nic_cq **p = &nic->pend; cq->pending && *p != NULL; p = &(*p)->pend_next)
		if (*p == cq) {
			cq_unqueue(nic, p, cq);
			cq->pending = false;
			break;
		}
	for (struct roce_nic_cq **p = &nic->cqs; *p != NULL; p = &(*p)->next)
		if (*p == cq) {
			*p = cq->next;
			return;
		}
}
