/* perftest's bandwidth and latency tests between two emulated hosts on a model link. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "perf_private.h"
#include "roce_io.h"
#include "roce_perf.h"
#include "roce_transport.h"

#define PERF_CQ_BATCH 64
#define PERF_SLOT_ALIGN 64
#define PERF_BUF_BASE 0x7e0000000000ull	/* where host 0's memory is mapped */
#define PERF_BUF_STRIDE (1ull << 36)		/* 64 GiB apart: host 1 follows */

static const char *const test_names[] = {
	[ROCE_PERF_WRITE_BW] = "write_bw",
	[ROCE_PERF_READ_BW] = "read_bw",
	[ROCE_PERF_SEND_BW] = "send_bw",
	[ROCE_PERF_ATOMIC_BW] = "atomic_bw",
	[ROCE_PERF_WRITE_LAT] = "write_lat",
	[ROCE_PERF_READ_LAT] = "read_lat",
	[ROCE_PERF_SEND_LAT] = "send_lat",
};
ROCE_STATIC_ASSERT(ROCE_DIM(test_names) == ROCE_PERF_NUM_TESTS);

const char *roce_perf_test_name(enum roce_perf_test t)
{
	return (unsigned int)t < ROCE_PERF_NUM_TESTS ? test_names[t] : "?";
}

int roce_perf_test_by_name(const char *name)
{
	for (int i = 0; i < ROCE_PERF_NUM_TESTS; i++)
		if (strcmp(test_names[i], name) == 0)
			return i;
	return -1;
}

void roce_perf_defaults(struct roce_perf_conf *conf, enum roce_perf_test test)
{
	memset(conf, 0, sizeof(*conf));
	conf->test = test;
	conf->size = roce_perf_is_lat(test) ? 2 : 65536;	/* perftest's defaults */
	conf->iters = roce_perf_is_lat(test) ? 1000 : 5000;
	if (test == ROCE_PERF_ATOMIC_BW)
		conf->size = 8;
	conf->nqp = 1;
	conf->mtu = ROCE_MTU_4096;
	conf->qp_type = ROCE_QPT_RC;
	conf->tx_depth = roce_perf_is_lat(test) ? 1 : 128;
	conf->rx_depth = 512;
	conf->timeout = 14;
	conf->retry_cnt = 7;
	conf->rnr_retry = 7;
	conf->min_rnr_timer = 12;
	conf->cq_mod = 1;
	conf->max_rd_atomic = 16;
	conf->rate_bps = 100000000000ull;
	conf->delay = 500 * ROCE_NS;
	conf->seed = 1;
}

/* One side of the test. */
struct perf_host {
	struct roce_device *dev;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	struct roce_qp *qp[ROCE_PERF_MAX_QP];
	uint32_t qpn[ROCE_PERF_MAX_QP];	/* their numbers */
	struct roce_mr *mr;
	uint32_t lkey, rkey;		/* mr's keys */
	struct roce_ah *ah;		/* UD: to the other host */
	uint8_t *buf;			/* nqp * nslots * slot bytes */
	size_t buf_len;			/* mapped length */
	struct roce_ip_addr ip;
	uint8_t mac[6];
};

struct perf_ctx {
	const struct roce_perf_conf *conf;
	struct roce_perf_result *res;
	struct roce_engine *eng;
	struct roce_link *link;
	struct roce_pcap_writer *pcap;
	struct perf_host host[2];	/* 0: client (requester), 1: server */
	uint32_t nslots;		/* buffer slots per QP */
	uint32_t slot;			/* bytes per slot */
	double *lat;			/* latency samples, us */
	uint64_t nlat;
	roce_time_t t_start;
	bool waiting;			/* run_to_completion() runs until a completion */
	bool wake_rx;			/* run_bw: a receive completion ends the wait too */
	struct perf_tally tally;	/* the peak's samples */
	/* run_bw with one slot a QP: each QP's WR, built once (post_send_bw) */
	struct roce_send_wr bw_wr[ROCE_PERF_MAX_QP];
	struct roce_sge bw_sge[ROCE_PERF_MAX_QP];
	/* send_bw with one slot a QP: each QP's receive WR (slot 0), built once */
	struct roce_recv_wr bw_rwr[ROCE_PERF_MAX_QP];
	struct roce_sge bw_rsge[ROCE_PERF_MAX_QP];
	/* send_bw with a receive delay: receives to post again, in the order they completed */
	struct perf_repost {
		roce_time_t due;
		uint32_t q, s;
	} *repost;
	uint32_t repost_head, repost_len, repost_cap;
	struct roce_timer repost_timer;
	/* send_bw --verify: receives polled a QP; an RC QP's k-th receive holds its k-th message */
	uint64_t rcvd[ROCE_PERF_MAX_QP];
};

static uint8_t *slot_ptr(struct perf_ctx *c, int h, uint32_t q, uint32_t s)
{
	return c->host[h].buf + ((size_t)q * c->nslots + s) * c->slot;
}

/*
 * Host memory at a fixed virtual address, so the RETH addresses (and so the ICRCs) on the wire
 * are the same on every run: the same seed gives a byte-identical capture despite ASLR.
 */
static uint8_t *host_buf_alloc(int h, size_t len, size_t *mapped)
{
	uintptr_t base = PERF_BUF_BASE + (uintptr_t)h * PERF_BUF_STRIDE;
	void *p;

	*mapped = (len + 4095) & ~(size_t)4095;
	if (*mapped > PERF_BUF_STRIDE)
		return NULL;
	p = mmap((void *)base, *mapped, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || (uintptr_t)p != base) {
		if (p != MAP_FAILED)
			munmap(p, *mapped);
		/* taken (an unusual address space): any address will do, minus determinism */
		p = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	}
	return p;
}

/* --ecn and --cc on @p dev, the same for an emulated host in virtual time and a live one. */
int perf_device_congestion(struct roce_device *dev, const struct roce_perf_conf *conf)
{
	if (conf->ecn) {
		struct roce_nic_qos qos;

		roce_nic_qos_defaults(&qos);
		qos.ecn = true;
		if (roce_device_set_qos(dev, &qos) != 0)
			return -EINVAL;
	}
	if (conf->cc != NULL &&
	    roce_device_set_cc(dev, conf->cc, conf->cc_params, conf->ncc_params, NULL, 0) != 0)
		return -EINVAL;
	return 0;
}

static int host_init(struct perf_ctx *c, int h)
{
	const struct roce_perf_conf *conf = c->conf;
	struct perf_host *p = &c->host[h];
	struct roce_device_conf dc = { 0 };
	char name[16];
	size_t len = (size_t)conf->nqp * c->nslots * c->slot;
	bool zc;

	snprintf(name, sizeof(name), "rocelab%d", h);
	p->mac[0] = 0x02;
	p->mac[5] = (uint8_t)(h + 1);
	p->ip.b[0] = 192;
	p->ip.b[2] = 2;
	p->ip.b[3] = (uint8_t)(h + 1);
	memcpy(dc.mac, p->mac, 6);
	dc.ip[0] = p->ip;
	dc.ip_ver[0] = 4;
	dc.name = name;
	dc.speed_bps = conf->rate_bps;
	dc.max_mtu = conf->mtu;	/* the port's MTU is -m's, as perf --dev has it: a UD message's limit */
	p->dev = roce_device_create(c->eng, &dc);
	if (p->dev == NULL)
		return -ENOMEM;
	if (perf_device_congestion(p->dev, conf) != 0)
		return -EINVAL;	/* roce_perf_check() has said why */
	p->pd = roce_alloc_pd(p->dev);
	p->scq = roce_create_cq(p->dev, (int)(conf->nqp * (conf->tx_depth + 1) + 16));
	p->rcq = roce_create_cq(p->dev, (int)(conf->nqp * (conf->rx_depth + 1) + 16));
	p->buf = host_buf_alloc(h, len, &p->buf_len);
	if (p->pd == NULL || p->scq == NULL || p->rcq == NULL || p->buf == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t r = roce_engine_rand(c->eng);

		memcpy(p->buf + i, &r, ROCE_MIN(8, len - i));
	}
	/*
	 * The side whose memory a bandwidth test only reads (the client's for a WRITE or a SEND,
	 * the server's for a READ; no one writes there, no stamp included) sends it by reference.
	 */
	zc = ((h == 0 && (conf->test == ROCE_PERF_WRITE_BW || conf->test == ROCE_PERF_SEND_BW)) ||
	      (h == 1 && conf->test == ROCE_PERF_READ_BW)) &&
	     roce_zc_reachable(roce_mtu_bytes(conf->mtu), conf->size);
	p->mr = roce_reg_mr(p->pd, p->buf, len, ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
			    ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC |
			    (zc ? ROCE_ACCESS_ZERO_COPY : 0));
	if (p->mr == NULL)
		return -ENOMEM;
	p->lkey = roce_mr_lkey(p->mr);
	p->rkey = roce_mr_rkey(p->mr);
	for (uint32_t q = 0; q < conf->nqp; q++) {
		p->qp[q] = perf_qp_create(p->pd, p->scq, p->rcq, conf);
		if (p->qp[q] == NULL)
			return -errno;
		p->qpn[q] = roce_qp_num(p->qp[q]);
	}
	return 0;
}

static void host_fini(struct perf_host *p)
{
	for (int q = 0; q < ROCE_PERF_MAX_QP; q++)
		roce_destroy_qp(p->qp[q]);
	roce_destroy_ah(p->ah);
	roce_dereg_mr(p->mr);
	roce_destroy_cq(p->scq);
	roce_destroy_cq(p->rcq);
	roce_dealloc_pd(p->pd);
	roce_device_destroy(p->dev);
	if (p->buf != NULL)
		munmap(p->buf, p->buf_len);
}

/* RESET -> INIT -> RTR -> RTS, pointing QP q of host h at its twin on the other host. */
static int connect_qp(struct perf_ctx *c, int h, uint32_t q)
{
	const struct roce_perf_conf *conf = c->conf;
	struct perf_host *me = &c->host[h], *peer = &c->host[1 - h];
	struct perf_qp_path path = {
		.dest_qpn = roce_qp_num(peer->qp[q]),
		.rq_psn = conf->resume_psn != NULL ? conf->resume_psn[1 - h][q] : conf->first_psn,
		.sq_psn = conf->resume_psn != NULL ? conf->resume_psn[h][q] : conf->first_psn,
		.max_dest_rd_atomic = (uint8_t)conf->max_rd_atomic,
		.max_rd_atomic = (uint8_t)conf->max_rd_atomic,
		.ah = { .dip = peer->ip, .ip_ver = 4, .traffic_class = conf->tos },
	};
	int rc;

	memcpy(path.ah.dmac, peer->mac, 6);
	rc = perf_qp_init(me->qp[q], conf->qp_type, true);
	if (rc == 0)
		rc = perf_qp_connect(me->qp[q], conf, &path);
	if (rc != 0)
		return rc;
	if (conf->qp_type == ROCE_QPT_UD && me->ah == NULL) {
		me->ah = roce_create_ah(me->pd, &path.ah);
		if (me->ah == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Slot @p s of QP @p q on host @p h: its receive WR into @p wr, pointing at @p sge. */
static void build_recv(struct perf_ctx *c, int h, uint32_t q, uint32_t s, struct roce_recv_wr *wr,
		       struct roce_sge *sge)
{
	*sge = (struct roce_sge){
		.addr = (uintptr_t)slot_ptr(c, h, q, s),
		.length = c->slot,
		.lkey = c->host[h].lkey,
	};
	*wr = (struct roce_recv_wr){ .wr_id = (uint64_t)q << 32 | s, .sg_list = sge, .num_sge = 1 };
}

static int post_recv(struct perf_ctx *c, int h, uint32_t q, uint32_t s)
{
	struct roce_recv_wr wr;
	struct roce_sge sge;

	build_recv(c, h, q, s, &wr, &sge);
	return roce_post_recv(c->host[h].qp[q], &wr, NULL);
}

/* The server posts again the receive of QP @p q, slot @p s, that it has polled. */
static void repost_recv(struct perf_ctx *c, uint32_t q, uint32_t s)
{
	if (c->nslots == 1)	/* s is 0: the WR built once */
		roce_post_recv(c->host[1].qp[q], &c->bw_rwr[q], NULL);
	else
		post_recv(c, 1, q, s);
}

/* Timer: post the receives whose delay is over, and wait for the next. */
static void repost_due(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct perf_ctx *c = arg;
	roce_time_t now = roce_engine_now(eng);

	while (c->repost_len > 0) {
		const struct perf_repost *r = &c->repost[c->repost_head];

		if (r->due > now) {
			roce_timer_arm(eng, t, r->due);
			return;
		}
		repost_recv(c, r->q, r->s);
		c->repost_head = (c->repost_head + 1) % c->repost_cap;
		c->repost_len--;
	}
}

/*
 * A receive of QP @p q, slot @p s was polled: post it again now, or after the receive delay.
 * The delay is the same for all, so the queue stays in due order. It holds at most every
 * posted receive.
 */
static void recv_done(struct perf_ctx *c, uint32_t q, uint32_t s)
{
	struct perf_repost *r;

	if (c->conf->recv_delay == 0) {
		repost_recv(c, q, s);
		return;
	}
	r = &c->repost[(c->repost_head + c->repost_len++) % c->repost_cap];
	r->due = roce_engine_now(c->eng) + c->conf->recv_delay;
	r->q = q;
	r->s = s;
	if (!roce_timer_armed(&c->repost_timer))
		roce_timer_arm(c->eng, &c->repost_timer, r->due);
}

/*
 * The WR of iteration @p i of QP @p q from host @p h, using slot i % nslots, into @p wr and
 * @p sge (@p wr points at @p sge).
 */
static void build_send(struct perf_ctx *c, int h, uint32_t q, uint64_t i, bool signaled,
		       struct roce_send_wr *wr, struct roce_sge *sge)
{
	const struct roce_perf_conf *conf = c->conf;
	struct perf_host *me = &c->host[h], *peer = &c->host[1 - h];
	uint32_t s = c->nslots == 1 ? 0 : (uint32_t)(i % c->nslots);
	/* write_lat polls slot 0 for the peer's write: it sends from slot 1 */
	uint32_t src = conf->test == ROCE_PERF_WRITE_LAT ? 1 : s;
	uint32_t dst = conf->test == ROCE_PERF_WRITE_LAT ? 0 : s;
	struct perf_target t = {
		.remote = (uintptr_t)slot_ptr(c, 1 - h, q, dst),
		.atomic = (uintptr_t)peer->buf,
		.rkey = peer->rkey,
		.ah = me->ah,
		.remote_qpn = peer->qpn[q],
	};

	*sge = (struct roce_sge){
		.addr = (uintptr_t)slot_ptr(c, h, q, src),
		.length = conf->size,
		.lkey = me->lkey,
	};
	perf_wr_fill(conf, i, signaled, &t, sge, wr);
}

/* Post iteration @p i of QP @p q from host @p h, using slot i % nslots. */
static int post_send(struct perf_ctx *c, int h, uint32_t q, uint64_t i, bool signaled)
{
	struct roce_send_wr wr;
	struct roce_sge sge;

	build_send(c, h, q, i, signaled, &wr, &sge);
	return roce_post_send(c->host[h].qp[q], &wr, NULL);
}

/*
 * run_bw's post_send() with one slot a QP (no --verify): every WR of a QP is its first with
 * another wr_id, signaled flag and (atomics) swap value, so it is built once (bw_wr, pointing
 * at bw_sge) and only those are changed in place (post_send copies the WR).
 */
static int post_send_bw(struct perf_ctx *c, uint32_t q, uint64_t i, bool signaled)
{
	struct roce_send_wr *wr = &c->bw_wr[q];

	wr->wr_id = i;
	wr->send_flags = signaled ? wr->send_flags | ROCE_SEND_SIGNALED :
			 wr->send_flags & ~(unsigned int)ROCE_SEND_SIGNALED;
	if (c->conf->test == ROCE_PERF_ATOMIC_BW)
		wr->wr.atomic.swap = i;
	return roce_post_send(c->host[0].qp[q], wr, NULL);
}

/* Advance virtual time to the next event and fire it (and all at the same instant). */
static bool step(struct perf_ctx *c)
{
	roce_time_t next = roce_engine_next(c->eng);

	if (next == ROCE_TIME_NEVER)
		return false;
	roce_engine_run(c->eng, next);
	return true;
}

static void perf_cq_notify(struct roce_cq *cq, void *arg);

/* The CQs whose completions end run_to_completion()'s wait notify (@p on) or not. */
static void perf_cq_watch(struct perf_ctx *c, bool on)
{
	roce_cq_set_notify(c->host[0].scq, on ? perf_cq_notify : NULL, on ? c : NULL);
	if (c->wake_rx)
		roce_cq_set_notify(c->host[1].rcq, on ? perf_cq_notify : NULL, on ? c : NULL);
}

/*
 * A completion while run_to_completion() waits for one: end the run after this event. The
 * CQs stop notifying until the next wait: the other completions of the instant need no call.
 */
static void perf_cq_notify(struct roce_cq *cq, void *arg)
{
	struct perf_ctx *c = arg;

	(void)cq;
	if (c->waiting) {
		c->waiting = false;
		roce_engine_stop(c->eng);
		perf_cq_watch(c, false);
	}
}

/*
 * run_bw's wait. The loop posts, polls, then waits; what it posts depends only on the
 * completions it has polled. After a poll that took some, no time passes: the next iteration
 * posts at the same instant, as perftest's loop posts right after ibv_poll_cq() (stepping to
 * the next event first would hold the new WQEs back by however long the wire stays quiet, a
 * whole round trip when one ACK completes several messages). After a poll that took none,
 * the next iterations would change nothing until a completion arrives: with -n, run until
 * host 0's send CQ (or, for send_bw, host 1's receive CQ) gets one (perf_cq_notify), and fire
 * the rest of that instant, leaving the loop in the state step() would have. With -D, one
 * instant at a time: the deadline is checked between instants.
 * @return false when nothing is left to happen
 */
static bool run_to_completion(struct perf_ctx *c, bool polled)
{
	roce_time_t now;

	if (polled)
		return true;
	if (c->conf->duration > 0)
		return step(c);
	if (roce_engine_next(c->eng) == ROCE_TIME_NEVER)
		return false;
	c->waiting = true;
	perf_cq_watch(c, true);
	roce_engine_run(c->eng, ROCE_TIME_NEVER);
	c->waiting = false;
	perf_cq_watch(c, false);
	now = roce_engine_now(c->eng);
	while (roce_engine_next(c->eng) <= now)
		roce_engine_run(c->eng, now);
	return true;
}

/* ---- the loops' backend: the emulated NIC in virtual time ---- */

static struct perf_ctx *bw_ctx(struct perf_bw *b)
{
	return b->arg;
}

static roce_time_t bw_now(struct perf_bw *b)
{
	return roce_engine_now(bw_ctx(b)->eng);
}

static int bw_post(struct perf_bw *b, uint32_t q, uint64_t i, bool signaled)
{
	struct perf_ctx *c = bw_ctx(b);

	return c->nslots == 1 ? post_send_bw(c, q, i, signaled) : post_send(c, 0, q, i, signaled);
}

static int bw_poll(struct perf_bw *b, int num, struct roce_wc *wc)
{
	return roce_poll_cq(bw_ctx(b)->host[0].scq, num, wc);
}

static uint32_t bw_qp_index(struct perf_bw *b, uint32_t qpn)
{
	struct perf_ctx *c = bw_ctx(b);
	uint32_t q = 0;

	while (q + 1 < c->conf->nqp && c->host[0].qpn[q] != qpn)
		q++;
	return q;
}

/* --verify, RC WRITE: the request's slot at the server holds the client's bytes. */
static void bw_sent(struct perf_bw *b, uint32_t q, uint64_t wr_id)
{
	struct perf_ctx *c = bw_ctx(b);
	uint32_t s = (uint32_t)(wr_id % c->nslots);

	if (memcmp(slot_ptr(c, 0, q, s), slot_ptr(c, 1, q, s), c->conf->size))
		perf_verify_fail(c->res, "iteration %llu: data differs (qp %llu)", wr_id, q);
}

/* send_bw: the server's receives, checked and posted again, in the client's loop. */
static bool bw_receive(struct perf_bw *b)
{
	struct perf_ctx *c = bw_ctx(b);
	const struct roce_perf_conf *conf = c->conf;
	uint32_t grh = conf->qp_type == ROCE_QPT_UD ? 40 : 0;
	struct roce_wc wc[PERF_CQ_BATCH];
	bool polled = false;
	int n;

	while ((n = roce_poll_cq(c->host[1].rcq, PERF_CQ_BATCH, wc)) > 0) {
		polled = true;
		for (int i = 0; i < n; i++) {
			uint32_t q = (uint32_t)(wc[i].wr_id >> 32), s = (uint32_t)wc[i].wr_id;

			if (!perf_wc_ok(c->res, wc[i].status))
				continue;
			if (conf->verify && wc[i].byte_len != conf->size + grh)
				perf_verify_fail(c->res, "receive of %llu bytes, expected %llu",
						 wc[i].byte_len, conf->size + grh);
			if (conf->verify && conf->qp_type == ROCE_QPT_RC) {
				/* receives are reposted as they complete: message k is in
				 * whichever slot the k-th receive names */
				uint64_t k = c->rcvd[q]++;

				if (memcmp(slot_ptr(c, 0, q, (uint32_t)(k % c->nslots)),
					   slot_ptr(c, 1, q, s), conf->size))
					perf_verify_fail(c->res, "message %llu: data differs (qp %llu)",
							 k, q);
			}
			recv_done(c, q, s);
		}
	}
	return polled;
}

static int bw_wait(struct perf_bw *b, bool polled)
{
	return run_to_completion(bw_ctx(b), polled) ? 0 : 1;
}

static const struct perf_bw_ops bw_ops = {
	.now = bw_now,
	.post = bw_post,
	.poll = bw_poll,
	.qp_index = bw_qp_index,
	.receive = bw_receive,
	.wait = bw_wait,
};

static int run_bw(struct perf_ctx *c)
{
	const struct roce_perf_conf *conf = c->conf;
	bool send = conf->test == ROCE_PERF_SEND_BW;
	struct perf_bw_ops ops = bw_ops;
	struct perf_bw b = { .conf = conf, .ops = &ops, .arg = c, .res = c->res, .tally = &c->tally };
	uint64_t atomic_start = 0;
	int rc;

	/*
	 * send_bw re-posts each receive it polls. With -n the loop sleeps until a completion
	 * (run_to_completion); it need not wake for every receive completion when the receives
	 * it re-posts at each send completion cannot run out before the next one. That holds for
	 * RC with rx_depth >= tx_depth: a message completes only after it arrived, so what
	 * arrives between two wake-ups was outstanding at the first (at most tx_depth per QP),
	 * and at each wake-up every receive used so far has been polled and posted again. The
	 * frames and their times are then the same; the loop runs once per send completion
	 * (one ACK may cover several messages), not once per message. UC and UD complete a
	 * send when it leaves, so more than tx_depth may be on their way: they keep waking.
	 */
	c->wake_rx = send && !(conf->qp_type == ROCE_QPT_RC && conf->rx_depth >= conf->tx_depth &&
			       conf->recv_delay == 0);
	if (!send)
		ops.receive = NULL;
	/* a send is checked where it lands: in the receive it consumed */
	if (conf->verify && conf->qp_type == ROCE_QPT_RC && !send &&
	    conf->test != ROCE_PERF_ATOMIC_BW)
		ops.sent = bw_sent;
	if (conf->test == ROCE_PERF_ATOMIC_BW)
		memcpy(&atomic_start, c->host[1].buf, 8);
	if (send && conf->recv_delay > 0) {
		c->repost_cap = conf->nqp * conf->rx_depth;
		c->repost = malloc(c->repost_cap * sizeof(*c->repost));
		if (c->repost == NULL)
			return -ENOMEM;
		roce_timer_init(&c->repost_timer, repost_due, c);
	}
	if (send)
		for (uint32_t q = 0; q < conf->nqp; q++)
			for (uint32_t s = 0; s < conf->rx_depth; s++)
				if (post_recv(c, 1, q, s % c->nslots) != 0)
					return -ENOMEM;
	for (uint32_t q = 0; q < conf->nqp && c->nslots == 1; q++) {
		build_send(c, 0, q, 0, false, &c->bw_wr[q], &c->bw_sge[q]);
		build_recv(c, 1, q, 0, &c->bw_rwr[q], &c->bw_rsge[q]);
	}
	rc = perf_bw_loop(&b);
	c->t_start = b.t0;
	roce_cq_set_notify(c->host[0].scq, NULL, NULL);
	roce_cq_set_notify(c->host[1].rcq, NULL, NULL);
	if (conf->verify && conf->test == ROCE_PERF_ATOMIC_BW && !conf->cmp_swap &&
	    c->res->errors == 0) {
		uint64_t end;

		memcpy(&end, c->host[1].buf, 8);
		if (end - atomic_start != b.total * PERF_ATOMIC_ADD)
			perf_verify_fail(c->res, "atomic counter advanced by %llu, expected %llu",
					 end - atomic_start, b.total * PERF_ATOMIC_ADD);
	}
	return rc;
}

/* One host's side of a latency test, for the loops. */
struct run_lat_side {
	struct perf_lat l;
	struct perf_ctx *c;
	int h;
};

static struct run_lat_side *lat_side(struct perf_lat *l)
{
	return container_of(l, struct run_lat_side, l);
}

static roce_time_t lat_now(struct perf_lat *l)
{
	return roce_engine_now(lat_side(l)->c->eng);
}

static int lat_post(struct perf_lat *l, uint64_t i)
{
	struct run_lat_side *side = lat_side(l);

	return post_send(side->c, side->h, 0, i, true);
}

static int lat_poll(struct perf_lat *l, bool recv, struct roce_wc *wc)
{
	struct run_lat_side *side = lat_side(l);
	struct perf_host *p = &side->c->host[side->h];

	return roce_poll_cq(recv ? p->rcq : p->scq, 1, wc);
}

static int lat_repost(struct perf_lat *l)
{
	struct run_lat_side *side = lat_side(l);

	return post_recv(side->c, side->h, 0, 0);
}

/* --verify: what arrived holds what the other host sent (a WRITE's stamp byte aside). */
static void lat_arrived(struct perf_lat *l)
{
	struct run_lat_side *side = lat_side(l);
	struct perf_ctx *c = side->c;
	uint32_t size = c->conf->size, grh = c->conf->qp_type == ROCE_QPT_UD ? 40 : 0;

	switch (c->conf->test) {
	case ROCE_PERF_WRITE_LAT:
		if (memcmp(slot_ptr(c, side->h, 0, 0), slot_ptr(c, 1 - side->h, 0, 1), size - 1))
			perf_verify_fail(c->res, "WRITE %llu: data differs (host %llu)", l->i,
					 (unsigned long long)side->h);
		break;
	case ROCE_PERF_SEND_LAT:
		if (l->byte_len != size + grh)
			perf_verify_fail(c->res, "receive of %llu bytes, expected %llu",
					 l->byte_len, size + grh);
		break;
	default:
		if (memcmp(slot_ptr(c, 0, 0, 0), slot_ptr(c, 1, 0, 0), size))
			perf_verify_fail(c->res, "READ %llu: data differs%llu", l->i, 0);
		break;
	}
}

static const struct perf_lat_ops lat_ops = {
	.now = lat_now,
	.post = lat_post,
	.poll = lat_poll,
	.repost = lat_repost,
};

/*
 * Both hosts' sides in turn, each as far as it goes, then virtual time to the next event:
 * host 0 goes first (ib_write_lat's server, ib_send_lat's and ib_read_lat's client).
 */
static int run_lat(struct perf_ctx *c)
{
	const struct roce_perf_conf *conf = c->conf;
	struct perf_lat_ops ops = lat_ops;
	struct run_lat_side side[2];
	int nsides = conf->test == ROCE_PERF_READ_LAT ? 1 : 2;
	int rc = 0;

	if (conf->verify)
		ops.arrived = lat_arrived;
	c->lat = calloc(conf->iters, sizeof(*c->lat));
	if (c->lat == NULL)
		return -ENOMEM;
	if (conf->test == ROCE_PERF_SEND_LAT)
		for (int h = 0; h < 2; h++)
			for (uint32_t s = 0; s < ROCE_MIN(conf->rx_depth, 16u); s++)
				post_recv(c, h, 0, 0);
	for (int h = 0; h < nsides; h++) {
		struct perf_lat *l = &side[h].l;

		side[h].c = c;
		side[h].h = h;
		*l = (struct perf_lat){
			.conf = conf, .ops = &ops, .res = c->res, .first = h == 0,
			.stamp = slot_ptr(c, h, 0, 1) + conf->size - 1,
			.watch = slot_ptr(c, h, 0, 0) + conf->size - 1,
			.lat = h == 0 ? c->lat : NULL,
		};
		/* no stamp before the peer's first WRITE: the random fill may end in one */
		if (conf->test == ROCE_PERF_WRITE_LAT)
			slot_ptr(c, h, 0, 0)[conf->size - 1] = 0;
		perf_lat_start(l);
	}
	c->t_start = roce_engine_now(c->eng);
	for (;;) {
		bool busy = false;

		for (int h = 0; h < nsides && rc >= 0; h++) {
			rc = perf_lat_run(&side[h].l);
			busy |= rc == PERF_LAT_BUSY;
		}
		if (rc < 0 || !busy || !step(c))
			break;	/* a failure, both sides done, or nothing left to happen */
	}
	c->nlat = side[0].l.nlat;
	c->res->iters = c->nlat;
	if (conf->verify && c->nlat != conf->iters && c->res->errors == 0)
		perf_verify_fail(c->res, "%llu of %llu round trips completed", c->nlat,
				 conf->iters);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void perf_lat_stats(double *lat, uint64_t n, struct roce_perf_result *r)
{
	double sum = 0, sq = 0;

	if (n == 0)
		return;
	qsort(lat, n, sizeof(*lat), cmp_double);
	for (uint64_t i = 0; i < n; i++)
		sum += lat[i];
	r->lat_avg = sum / (double)n;
	for (uint64_t i = 0; i < n; i++)
		sq += (lat[i] - r->lat_avg) * (lat[i] - r->lat_avg);
	r->lat_stdev = sqrt(sq / (double)n);
	r->lat_min = lat[0];
	r->lat_max = lat[n - 1];
	r->lat_typical = lat[n / 2];
	r->lat_p99 = lat[(uint64_t)((double)(n - 1) * 0.99)];
	r->lat_p999 = lat[(uint64_t)((double)(n - 1) * 0.999)];
}

/* A configuration error: one line naming the value into @err, then -EINVAL. */
#define BAD(...) \
	do { \
		snprintf(err, errlen, __VA_ARGS__); \
		return -EINVAL; \
	} while (0)

int roce_perf_check(const struct roce_perf_conf *conf, char *err, size_t errlen)
{
	uint32_t mtu = roce_mtu_bytes(conf->mtu);

	if (conf->nqp == 0 || conf->nqp > ROCE_PERF_MAX_QP)
		BAD("%u QPs: 1 to %d allowed", conf->nqp, ROCE_PERF_MAX_QP);
	if (mtu == 0)
		BAD("MTU must be 256, 512, 1024, 2048 or 4096");
	if (conf->qp_type == ROCE_QPT_UD && (conf->test != ROCE_PERF_SEND_BW &&
					     conf->test != ROCE_PERF_SEND_LAT))
		BAD("UD supports only send_bw and send_lat");
	if (conf->qp_type == ROCE_QPT_UC && (conf->test == ROCE_PERF_READ_BW ||
		conf->test == ROCE_PERF_READ_LAT || conf->test == ROCE_PERF_ATOMIC_BW))
		BAD("UC has no READ or atomics");
	if (conf->qp_type == ROCE_QPT_UD && conf->size > mtu)
		BAD("UD message of %u bytes exceeds the MTU of %u", conf->size,
				mtu);
	if (conf->size == 0 && roce_perf_is_lat(conf->test) && conf->test == ROCE_PERF_WRITE_LAT)
		BAD("write_lat needs at least 1 byte");
	if (conf->test == ROCE_PERF_ATOMIC_BW && conf->size != 8)
		BAD("atomics are 8 bytes");
	if (conf->size > (1u << 30))
		BAD("size %u above 1 GiB", conf->size);
	if (conf->tx_depth == 0 || conf->rx_depth == 0 || conf->iters == 0 || conf->cq_mod == 0)
		BAD("depths, iterations and cq_mod must be at least 1");
	if (conf->recv_delay > 0 && conf->test != ROCE_PERF_SEND_BW)
		BAD("a receive delay is for send_bw: only sends consume receives");
	if (roce_cc_check(conf->cc, conf->cc_params, conf->ncc_params, err, errlen) != 0)
		return -EINVAL;
	return 0;
}

int roce_perf_run(const struct roce_perf_conf *conf, struct roce_perf_result *res)
{
	struct roce_engine_conf ec = {
		.clock = ROCE_CLOCK_VIRTUAL,
		.seed = conf->seed,
		.nb_mbufs = 8192,
		.mbuf_data = 4096 + 256,
	};
	struct roce_link_conf lc = { .rate_bps = conf->rate_bps, .delay = conf->delay, .mtu = 9000 };
	struct roce_link_end ends[2];
	struct perf_ctx c = { .conf = conf, .res = res };
	struct timespec w0, w1, c0, c1;
	char err[256];
	int rc;

	memset(res, 0, sizeof(*res));
	res->size = conf->size;
	rc = roce_perf_check(conf, err, sizeof(err));
	if (rc != 0) {
		ROCE_LOG(ERR, "perf: %s", err);
		return rc;
	}
	c.slot = (ROCE_MAX(conf->size, 8u) + 40 + PERF_SLOT_ALIGN - 1) & ~(PERF_SLOT_ALIGN - 1u);
	/*
	 * Like perftest, every send of a QP reuses one buffer (write_lat: one to send from, one to
	 * poll); --verify gives each outstanding send a slot of its own so data can be checked.
	 */
	c.nslots = roce_perf_is_lat(conf->test) ? 2 : !conf->verify ? 1 :
		   ROCE_MAX(1u, ROCE_MIN(ROCE_MAX(conf->tx_depth, conf->rx_depth),
					 (uint32_t)((64u << 20) / c.slot)));
	c.eng = roce_engine_create(&ec);
	if (c.eng == NULL)
		return -ENOMEM;
	rc = host_init(&c, 0);
	if (rc == 0)
		rc = host_init(&c, 1);
	if (rc != 0)
		goto out;
	ends[0] = roce_device_link_end(c.host[0].dev);
	ends[1] = roce_device_link_end(c.host[1].dev);
	c.link = roce_link_create(c.eng, &lc, &ends[0], &ends[1]);
	if (c.link == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	roce_device_attach(c.host[0].dev, c.link, 0);
	roce_device_attach(c.host[1].dev, c.link, 1);
	roce_link_set_impair(c.link, 0, &conf->impair);
	roce_link_set_impair(c.link, 1, &conf->impair_back);
	if (conf->trace != NULL) {
		roce_device_set_trace(c.host[0].dev, conf->trace);
		roce_device_set_trace(c.host[1].dev, conf->trace);
	}
	if (conf->pcap_writer != NULL) {
		roce_link_set_tap(c.link, conf->pcap_writer);
	} else if (conf->pcap != NULL) {
		c.pcap = roce_pcap_create_snap(conf->pcap, conf->snaplen, err, sizeof(err));
		if (c.pcap == NULL) {
			ROCE_LOG(ERR, "%s", err);
			rc = -EIO;
			goto out;
		}
		roce_link_set_tap(c.link, c.pcap);
	}
	for (uint32_t q = 0; q < conf->nqp && rc == 0; q++) {
		rc = connect_qp(&c, 0, q);
		if (rc == 0)
			rc = connect_qp(&c, 1, q);
	}
	if (rc != 0) {
		ROCE_LOG(ERR, "perf: connecting the QPs failed (%d)", rc);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &w0);	/* the emulator's speed: the run, not the set-up */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	rc = roce_perf_is_lat(conf->test) ? run_lat(&c) : run_bw(&c);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	res->wall_sec = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
	res->cpu_sec = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	if (roce_perf_is_lat(conf->test))
		perf_lat_stats(c.lat, c.nlat, res);
	res->virtual_sec = (double)(roce_engine_now(c.eng) - c.t_start) / ROCE_SEC;
	for (int d = 0; d < 2; d++) {
		struct roce_link_stats ls;

		roce_link_stats(c.link, d, &ls);
		res->frames += ls.tx_frames;
		res->wire_bytes += ls.tx_bytes;
		res->dropped += ls.dropped;
	}
	for (int h = 0; h < 2; h++) {
		struct roce_device *dev = c.host[h].dev;

		res->retransmits += roce_device_counter_by_name(dev, "retransmits");
		res->timeouts += roce_device_counter_by_name(dev, "local_ack_timeout_err");
		res->seq_naks += roce_device_counter_by_name(dev, "packet_seq_err");
		res->rnr_naks += roce_device_counter_by_name(dev, "rnr_nak_retry_err");
		for (uint32_t q = 0; q < conf->nqp; q++) {
			struct roce_qp_attr a;
			struct roce_qp_init_attr init;

			if (roce_query_qp(c.host[h].qp[q], &a, &init) == 0)
				res->next_psn[h][q] = a.sq_psn;
		}
	}
out:
	if (c.repost != NULL) {
		roce_timer_cancel(c.eng, &c.repost_timer);
		free(c.repost);
	}
	if (c.link != NULL)
		roce_link_destroy(c.link);
	host_fini(&c.host[0]);
	host_fini(&c.host[1]);
	if (c.pcap != NULL && roce_pcap_close_writer(c.pcap) != 0 && rc == 0)
		rc = -EIO;
	roce_engine_destroy(c.eng);
	free(c.lat);
	return rc;
}
