/* Check suite 'engine': timer order and cancel, the RNG, and model links with every impairment. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "roce_engine.h"
#include "roce_io.h"
#include "roce_wire.h"

#define GBPS 1000000000ull

static struct roce_engine *mk_engine(uint64_t seed)
{
	struct roce_engine_conf conf = { .clock = ROCE_CLOCK_VIRTUAL, .seed = seed,
					 .nb_mbufs = 4096, .mbuf_data = 2048 + RTE_PKTMBUF_HEADROOM,
					 .name = "test" };
	struct roce_engine *eng;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	eng = roce_engine_create(&conf);
	ck_assert_ptr_nonnull(eng);
	return eng;
}

/* ---- timers ---- */

#define NREC 200000
static struct { uint32_t id; roce_time_t at; } rec[NREC];	/* fired timers, in order */
static uint32_t nrec;

static void record(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	ck_assert_uint_eq(roce_engine_now(eng), t->when);
	ck_assert(!roce_timer_armed(t));
	ck_assert_uint_lt(nrec, NREC);
	rec[nrec].id = (uint32_t)(uintptr_t)arg;
	rec[nrec].at = roce_engine_now(eng);
	nrec++;
}

START_TEST(test_timer_order)
{
	static const roce_time_t when[] = { 50, 10, 30, 10, 1000000000, 30, 10, 0, 5 * ROCE_SEC, 31 };
	static const uint32_t order[] = { 7, 1, 3, 6, 2, 5, 9, 0, 4, 8 };	/* by (when, arm order) */
	struct roce_engine *eng = mk_engine(1);
	struct roce_timer t[ROCE_DIM(when)];
	struct roce_engine_stats st;
	unsigned int i;

	nrec = 0;
	for (i = 0; i < ROCE_DIM(when); i++) {
		roce_timer_init(&t[i], record, (void *)(uintptr_t)i);
		ck_assert(!roce_timer_armed(&t[i]));
		roce_timer_arm(eng, &t[i], when[i]);
		ck_assert(roce_timer_armed(&t[i]));
	}
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), ROCE_DIM(when));
	ck_assert_uint_eq(nrec, ROCE_DIM(order));
	for (i = 0; i < nrec; i++) {
		ck_assert_uint_eq(rec[i].id, order[i]);
		ck_assert_uint_eq(rec[i].at, when[order[i]]);
	}
	ck_assert_uint_eq(roce_engine_now(eng), 5 * ROCE_SEC);
	roce_engine_stats(eng, &st);
	ck_assert_uint_eq(st.timers_fired, ROCE_DIM(when));
	ck_assert_uint_eq(st.timers_armed, ROCE_DIM(when));
	ck_assert_uint_eq(st.max_pending, ROCE_DIM(when));
	roce_engine_destroy(eng);
}
END_TEST

START_TEST(test_timer_cancel_rearm)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_timer a, b, c;

	nrec = 0;
	roce_timer_init(&a, record, (void *)0);
	roce_timer_init(&b, record, (void *)1);
	roce_timer_init(&c, record, (void *)2);
	roce_timer_arm(eng, &a, 10 * ROCE_NS);
	roce_timer_arm(eng, &b, 20 * ROCE_NS);
	roce_timer_arm(eng, &c, 30 * ROCE_US);
	roce_timer_arm(eng, &a, 40 * ROCE_US);	/* later */
	roce_timer_arm(eng, &c, 5 * ROCE_NS);	/* earlier */
	roce_timer_cancel(eng, &b);
	roce_timer_cancel(eng, &b);		/* idle: no-op */
	ck_assert(!roce_timer_armed(&b));

	/* run(until) stops before later timers and leaves now at until */
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_US), 1);
	ck_assert_uint_eq(roce_engine_now(eng), ROCE_US);
	ck_assert_uint_eq(rec[0].id, 2);
	ck_assert_uint_eq(rec[0].at, 5 * ROCE_NS);

	/* arming in the past clamps to now, and fires before the later timer */
	roce_timer_arm(eng, &b, 0);
	ck_assert_uint_eq(b.when, ROCE_US);
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), 2);
	ck_assert_uint_eq(nrec, 3);
	ck_assert_uint_eq(rec[1].id, 1);
	ck_assert_uint_eq(rec[1].at, ROCE_US);
	ck_assert_uint_eq(rec[2].id, 0);
	ck_assert_uint_eq(rec[2].at, 40 * ROCE_US);

	/* an empty queue returns at once; until in the past never moves time back */
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), 0);
	ck_assert_uint_eq(roce_engine_now(eng), 40 * ROCE_US);
	roce_timer_arm(eng, &a, ROCE_MS);
	ck_assert_uint_eq(roce_engine_run(eng, 0), 0);
	ck_assert_uint_eq(roce_engine_now(eng), 40 * ROCE_US);
	roce_engine_destroy(eng);
}
END_TEST

static void stop_cb(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	record(eng, t, arg);
	roce_engine_stop(eng);
}

static void record_wall(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	(void)arg;
	ck_assert_uint_ge(roce_engine_now(eng), t->when);
	nrec++;
}

START_TEST(test_timer_stop)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_timer a, b;

	nrec = 0;
	roce_timer_init(&a, stop_cb, (void *)0);
	roce_timer_init(&b, record, (void *)1);
	roce_timer_arm(eng, &a, 100);
	roce_timer_arm(eng, &b, 100);
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), 1);
	ck_assert(roce_timer_armed(&b));
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), 1);
	ck_assert_uint_eq(nrec, 2);
	roce_engine_destroy(eng);
}
END_TEST

/*
 * 10^5 random arm / re-arm / postpone / cancel / advance operations on @p n timers against a
 * reference model that sorts the armed timers by (when, arm order). Arms land up to 2^(@p arm_bits
 * - 1) ps ahead, runs advance up to 2^(@p run_bits - 1) ps.
 */
#define MODEL_N 512
struct model_t {
	bool armed;		/* reference: armed */
	roce_time_t when;	/* reference: expiry */
	uint64_t seq;		/* reference: arm order */
};

static int model_cmp(const void *a, const void *b)
{
	const struct model_t *x = *(const struct model_t *const *)a, *y = *(const struct model_t *const *)b;

	if (x->when != y->when)
		return x->when < y->when ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void random_model(unsigned int n, unsigned int arm_bits, unsigned int run_bits)
{
	struct roce_engine *eng = mk_engine(7);
	static struct roce_timer t[MODEL_N];
	static struct model_t m[MODEL_N];
	static struct model_t *due[MODEL_N];
	uint64_t seq = 0, x = 12345;
	roce_time_t now = 0;
	unsigned int op, i, ndue;

	ck_assert_uint_le(n, MODEL_N);
	nrec = 0;
	for (i = 0; i < n; i++) {
		roce_timer_init(&t[i], record, (void *)(uintptr_t)i);
		m[i].armed = false;
	}
	for (op = 0; op < 100000; op++) {
		uint64_t r;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r = x;
		i = (unsigned int)(r % n);
		switch ((r >> 20) % 8) {
		case 0: case 1: case 2: case 3: {	/* arm, move or postpone, 0..2^k ps ahead */
			unsigned int k = (unsigned int)((r >> 24) % arm_bits);
			roce_time_t when = now + ((r >> 30) & ((1ull << k) - 1));

			if ((r >> 40) % 16 == 0)
				when = now > 1000 ? now - 1000 : 0;	/* in the past: clamped */
			/* a postponed timer fires exactly as if re-armed: the model does not tell */
			if ((r >> 20) % 8 == 3)
				roce_timer_postpone(eng, &t[i], when);
			else
				roce_timer_arm(eng, &t[i], when);
			m[i] = (struct model_t){ true, when < now ? now : when, seq++ };
			break;
		}
		case 4:
			roce_timer_cancel(eng, &t[i]);
			m[i].armed = false;
			break;
		default: {				/* advance by 0..2^k ps */
			unsigned int k = (unsigned int)((r >> 24) % run_bits);
			roce_time_t until = now + ((r >> 30) & ((1ull << k) - 1));
			unsigned int j;

			ndue = 0;
			for (j = 0; j < n; j++)
				if (m[j].armed && m[j].when <= until)
					due[ndue++] = &m[j];
			qsort(due, ndue, sizeof(due[0]), model_cmp);
			nrec = 0;
			ck_assert_uint_eq(roce_engine_run(eng, until), ndue);
			ck_assert_uint_eq(nrec, ndue);
			for (j = 0; j < ndue; j++) {
				ck_assert_uint_eq(rec[j].id, (uint32_t)(due[j] - m));
				ck_assert_uint_eq(rec[j].at, due[j]->when);
				due[j]->armed = false;
			}
			now = until;
			ck_assert_uint_eq(roce_engine_now(eng), now);
			break;
		}
		}
		ck_assert_int_eq(roce_timer_armed(&t[i]), m[i].armed);
	}
	roce_engine_destroy(eng);
}

/* Times spread over every level of the wheel. */
START_TEST(test_timer_random_model)
{
	random_model(MODEL_N, 48, 40);
}
END_TEST

/*
 * Hundreds of timers due in the same nanosecond, armed, moved and cancelled in a shuffled order,
 * fired in steps: more than ENG_W_RUN_MAX are due at once, so the due timers turn from a sorted
 * run into a heap and back, and are moved and cancelled in both.
 */
#define CROWD_N 1500
static struct model_t crowd_m[CROWD_N];
static uint64_t crowd_seq;		/* arm order, test and callbacks alike */
static roce_time_t crowd_until;		/* the run being checked: re-arms go past it */
static bool crowd_rearm;

/* record(), and half the timers re-arm just past the run: into the heap's hole, often */
static void crowd_fire(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;

	record(eng, t, arg);
	if (crowd_rearm && id % 2 == 0) {
		roce_time_t when = crowd_until + 1 + id % 50;

		roce_timer_arm(eng, t, when);
		crowd_m[id] = (struct model_t){ true, when, crowd_seq++ };
	}
}

static void crowd_check(struct roce_engine *eng, struct model_t *m, roce_time_t until)
{
	static struct model_t *due[CROWD_N];
	static struct model_t copy[CROWD_N];
	unsigned int j, ndue = 0;

	crowd_until = until;
	crowd_rearm = until != ROCE_TIME_NEVER;

	for (j = 0; j < CROWD_N; j++)
		if (m[j].armed && m[j].when <= until)
			due[ndue++] = &m[j];
	qsort(due, ndue, sizeof(due[0]), model_cmp);
	for (j = 0; j < ndue; j++) {
		copy[j] = *due[j];	/* a callback may re-arm it */
		due[j]->armed = false;
	}
	nrec = 0;
	ck_assert_uint_eq(roce_engine_run(eng, until), ndue);
	ck_assert_uint_eq(nrec, ndue);
	for (j = 0; j < ndue; j++) {
		ck_assert_uint_eq(rec[j].id, (uint32_t)(due[j] - m));
		ck_assert_uint_eq(rec[j].at, copy[j].when);
	}
}

START_TEST(test_timer_crowded)
{
	struct roce_engine *eng = mk_engine(9);
	static struct roce_timer t[CROWD_N];
	struct model_t *m = crowd_m;
	uint64_t x = 777;
	roce_time_t now = 0;
	unsigned int round, op, i;

	crowd_seq = 0;
	for (i = 0; i < CROWD_N; i++) {
		roce_timer_init(&t[i], crowd_fire, (void *)(uintptr_t)i);
		m[i].armed = false;
	}
	for (round = 0; round < 40; round++) {
		for (op = 0; op < CROWD_N; op++) {
			roce_time_t when;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			i = (unsigned int)(x % CROWD_N);
			when = now + (x >> 32) % 1500;	/* this tick and the next */
			if ((x >> 20) % 5 == 0) {
				roce_timer_cancel(eng, &t[i]);
				m[i].armed = false;
			} else {
				roce_timer_arm(eng, &t[i], when);
				m[i] = (struct model_t){ true, when, crowd_seq++ };
			}
		}
		/* fire part of it, then the rest a little later, then let time pass */
		crowd_check(eng, m, now + 300);
		crowd_check(eng, m, now + 900);
		now += 1000 + round * 100;
		crowd_check(eng, m, now);
	}
	crowd_check(eng, m, ROCE_TIME_NEVER);
	ck_assert_uint_eq(roce_engine_next(eng), ROCE_TIME_NEVER);
	roce_engine_destroy(eng);
}
END_TEST

/*
 * Timers armed, moved, cancelled and peeked at from inside callbacks, where the engine leaves
 * the fired timer's heap slot empty until something is armed into it: every timer fires once,
 * in (when, seq) order, and none is left behind.
 */
#define CB_N 64
static struct roce_timer cb_t[CB_N];
static struct { roce_time_t when; uint64_t seq; uint64_t fired; bool armed; } cb_m[CB_N];
static uint64_t cb_x = 99, cb_fired, cb_arms;
static roce_time_t cb_last_when;
static uint64_t cb_last_seq;

static void cb_arm(struct roce_engine *eng, unsigned int i, roce_time_t when)
{
	roce_timer_arm(eng, &cb_t[i], when);
	cb_m[i].when = cb_t[i].when;
	cb_m[i].seq = cb_t[i].seq;
	if (!cb_m[i].armed)
		cb_arms++;
	cb_m[i].armed = true;
}

static void churn(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg, n;
	roce_time_t now = roce_engine_now(eng);

	ck_assert(cb_m[i].armed);
	ck_assert_uint_eq(t->when, cb_m[i].when);
	ck_assert(cb_fired == 0 || t->when > cb_last_when ||
		  (t->when == cb_last_when && t->seq > cb_last_seq));
	cb_last_when = t->when;
	cb_last_seq = t->seq;
	cb_m[i].armed = false;
	cb_fired++;
	if (cb_arms > 300000)
		return;
	for (n = 0; n < 3; n++) {
		uint64_t r;
		unsigned int j;

		cb_x ^= cb_x << 13, cb_x ^= cb_x >> 7, cb_x ^= cb_x << 17;
		r = cb_x;
		j = (unsigned int)(r % CB_N);
		switch ((r >> 8) % 6) {
		case 0: case 1:		/* re-arm self, often in the same 1 ns tick */
			cb_arm(eng, i, now + ((r >> 16) & ((1ull << ((r >> 40) % 24)) - 1)));
			break;
		case 2: case 3:		/* arm or move another */
			cb_arm(eng, j, now + ((r >> 16) & ((1ull << ((r >> 40) % 30)) - 1)));
			break;
		case 4:
			roce_timer_cancel(eng, &cb_t[j]);
			if (cb_m[j].armed)
				cb_arms--;
			cb_m[j].armed = false;
			break;
		default:		/* look at the queue: the earliest is still ahead */
			ck_assert_uint_ge(roce_engine_next(eng), now);
			break;
		}
	}
}

START_TEST(test_timer_arm_in_callback)
{
	struct roce_engine *eng = mk_engine(3);
	unsigned int i;

	cb_fired = cb_arms = 0;
	for (i = 0; i < CB_N; i++) {
		roce_timer_init(&cb_t[i], churn, (void *)(uintptr_t)i);
		cb_m[i].armed = false;
	}
	for (i = 0; i < CB_N; i += 2)
		cb_arm(eng, i, i * 700);
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), cb_arms);
	ck_assert_uint_eq(cb_fired, cb_arms);
	for (i = 0; i < CB_N; i++)
		ck_assert(!roce_timer_armed(&cb_t[i]));
	ck_assert_uint_eq(roce_engine_next(eng), ROCE_TIME_NEVER);
	roce_engine_destroy(eng);
}
END_TEST

START_TEST(test_rng)
{
	struct roce_engine *a = mk_engine(99), *b = mk_engine(99), *c = mk_engine(100);
	unsigned int i, same_c = 0;
	double sum = 0;

	for (i = 0; i < 10000; i++) {
		uint64_t x = roce_engine_rand(a);

		ck_assert_uint_eq(x, roce_engine_rand(b));
		same_c += x == roce_engine_rand(c);
	}
	ck_assert_uint_eq(same_c, 0);
	for (i = 0; i < 100000; i++) {
		double u = roce_engine_rand01(a);

		ck_assert(u >= 0.0 && u < 1.0);
		sum += u;
	}
	ck_assert(sum / 100000 > 0.49 && sum / 100000 < 0.51);
	roce_engine_destroy(a);
	roce_engine_destroy(b);
	roce_engine_destroy(c);
}
END_TEST

/* ---- links ---- */

#define PQ 8192
/* A test port: a queue of frames to send, and a log of what arrived. */
struct port {
	struct roce_engine *eng;	/* pool and clock */
	struct rte_mbuf *q[PQ];		/* frames to send */
	uint32_t qh, qt;		/* queue head, tail */
	uint32_t nrx;			/* frames received */
	roce_time_t rx_at[PQ];		/* arrival times of the first PQ */
	int32_t rx_id[PQ];		/* PSN (RoCE) or -1 */
	int rx_rc[PQ];			/* roce_wire_parse() result */
	uint32_t rx_len[PQ];		/* frame lengths */
	bool refill;			/* generate RC_SEND_ONLY frames forever */
	uint32_t next_psn;		/* for refill */
};

static struct rte_mbuf *port_pull(void *owner);

static void port_rx(void *owner, struct rte_mbuf *m)
{
	struct port *p = owner;
	struct roce_pkt pkt;
	uint32_t i = p->nrx++;

	if (i < PQ) {
		p->rx_at[i] = roce_engine_now(p->eng);
		p->rx_len[i] = rte_pktmbuf_pkt_len(m);
		p->rx_rc[i] = roce_wire_parse(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, 0, &pkt);
		p->rx_id[i] = p->rx_rc[i] != -EINVAL ? (int32_t)pkt.psn : -1;
	}
	rte_pktmbuf_free(m);
}

static struct rte_mbuf *raw_frame(struct roce_engine *eng, uint32_t len)
{
	struct rte_mbuf *m = roce_engine_mbuf(eng);
	uint8_t *d;

	ck_assert_ptr_nonnull(m);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	ck_assert_ptr_nonnull(d);
	memset(d, 0, len);
	d[12] = 0x08;	/* IPv4 Ethertype; the contents are not looked at */
	return m;
}

static struct rte_mbuf *roce_frame(struct roce_engine *eng, uint8_t opcode, uint32_t psn,
				   uint32_t payload)
{
	struct rte_mbuf *m = roce_engine_mbuf(eng);
	struct roce_pkt pkt;

	ck_assert_ptr_nonnull(m);
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, opcode);
	pkt.psn = psn;
	pkt.dqpn = 0x11;
	pkt.payload_len = (roce_opcode[opcode].mask & ROCE_F_PAYLOAD) ? payload : 0;
	ck_assert_int_gt(roce_wire_build_mbuf(&pkt, 0, m), 0);
	return m;
}

static void port_push(struct port *p, struct rte_mbuf *m)
{
	ck_assert_uint_lt(p->qt - p->qh, PQ);
	p->q[p->qt++ % PQ] = m;
}

static struct rte_mbuf *port_pull(void *owner)
{
	struct port *p = owner;

	if (p->qh == p->qt) {
		if (!p->refill)
			return NULL;
		return roce_frame(p->eng, ROCE_OP_RC_SEND_ONLY, p->next_psn++ & ROCE_PSN_MASK, 256);
	}
	return p->q[p->qh++ % PQ];
}

static struct port pa, pb;	/* big: static */

static struct roce_link *mk_link(struct roce_engine *eng, uint64_t rate, roce_time_t delay,
				 uint32_t mtu)
{
	struct roce_link_conf lc = { .rate_bps = rate, .delay = delay, .mtu = mtu };
	struct roce_link_end a = { .owner = &pa, .pull = port_pull, .rx = port_rx };
	struct roce_link_end b = { .owner = &pb, .pull = port_pull, .rx = port_rx };
	struct roce_link *l;

	memset(&pa, 0, sizeof(pa));
	memset(&pb, 0, sizeof(pb));
	pa.eng = pb.eng = eng;
	l = roce_link_create(eng, &lc, &a, &b);
	ck_assert_ptr_nonnull(l);
	return l;
}

static void check_conservation(const struct roce_link *l, int dir)
{
	struct roce_link_stats s;

	roce_link_stats(l, dir, &s);
	ck_assert_uint_eq(s.tx_frames + s.duplicated,
			  s.rx_frames + s.dropped + s.down_drops + s.in_flight);
}

START_TEST(test_link_timing)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_link *l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	const roce_time_t ser = (1000 + 24) * 8 * 10;	/* 10 ps per bit at 100 Gb/s */
	const roce_time_t ser40 = (1000 + 24) * 8 * 25;	/* 25 ps per bit at 40 Gb/s */
	struct roce_link_stats s;
	int i;

	ck_assert_uint_eq(roce_wire_bytes(1000), 1024);
	ck_assert_uint_eq(roce_wire_bytes(20), 84);	/* padded to the 60-byte minimum */

	port_push(&pa, raw_frame(eng, 1000));
	roce_link_kick(l, 0);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 1);
	ck_assert_uint_eq(pb.rx_at[0], ser + ROCE_US);	/* 81920 ps + 1 us */

	/* back to back: the second leaves when the first has left the wire */
	for (i = 0; i < 3; i++)
		port_push(&pa, raw_frame(eng, 1000));
	roce_link_kick(l, 0);
	roce_link_kick(l, 0);	/* busy: no effect */
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 4);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(pb.rx_at[1 + i], pb.rx_at[0] + ROCE_US + (roce_time_t)(i + 1) * ser);

	/* a rate change applies from the next frame; the frame on the wire keeps its rate */
	{
		roce_time_t t0 = roce_engine_now(eng);

		port_push(&pa, raw_frame(eng, 1000));
		port_push(&pa, raw_frame(eng, 1000));
		roce_link_kick(l, 0);
		ck_assert_int_eq(roce_link_set_rate(l, 40 * GBPS), 0);
		ck_assert_int_eq(roce_link_set_rate(l, 0), -EINVAL);
		roce_engine_run(eng, ROCE_TIME_NEVER);
		ck_assert_uint_eq(pb.nrx, 6);
		ck_assert_uint_eq(pb.rx_at[4], t0 + ser + ROCE_US);
		ck_assert_uint_eq(pb.rx_at[5], t0 + ser + ser40 + ROCE_US);
	}
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.tx_frames, 6);
	ck_assert_uint_eq(s.tx_bytes, 6000);
	ck_assert_uint_eq(s.rx_frames, 6);
	ck_assert_uint_eq(s.busy, 5 * ser + ser40);
	ck_assert_uint_eq(s.in_flight, 0);
	roce_link_stats(l, 1, &s);
	ck_assert_uint_eq(s.tx_frames, 0);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

/*
 * A sender with a quiet word: the link leaves out the end-of-frame event of a frame nothing
 * waits behind. Timers that queue frames at half-frame steps, so many land exactly on a
 * frame's end, some armed before its pull and some after, must see the same pulls at the same
 * times in the same order as with no quiet word.
 */
#define QL_N 4096
static struct { char what; uint32_t id; roce_time_t at; } ql_log[2][QL_N];
static uint32_t ql_n, ql_run;

static bool ql_is_quiet(void *owner, roce_time_t end)
{
	const struct port *p = owner;

	(void)end;
	return p->qh == p->qt;
}

static struct roce_link *ql_link;
static struct roce_timer ql_t[3];
static uint32_t ql_null[2];	/* pulls that found nothing */
static uint64_t ql_x;

static bool ql_stopped;		/* a timer stopped the run */

static void ql_note_at(char what, uint32_t id, roce_time_t at)
{
	if (ql_n < QL_N)
		ql_log[ql_run][ql_n] = (typeof(ql_log[0][0])){ what, id, at };
	ql_n++;
}

static void ql_note(char what, uint32_t id)
{
	ql_note_at(what, id, roce_engine_now(pa.eng));
}

static struct rte_mbuf *ql_pull(void *owner)
{
	struct rte_mbuf *m = port_pull(owner);

	if (m != NULL)		/* a pull that finds nothing is what quiet() saves */
		ql_note('P', 0);
	else
		ql_null[ql_run]++;
	return m;
}

static void ql_fire(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	const roce_time_t half = (1000 + 24) * 8 * 10 / 2;

	ql_note('T', id);
	ql_x = ql_x * 6364136223846793005ull + 1442695040888963407ull;
	if ((ql_x >> 40) % 3 == 0) {
		/* the kick comes from outside the run, before the rest of this instant */
		roce_engine_stop(eng);
		ql_stopped = true;
	} else if (pa.qt - pa.qh < 8) {
		port_push(&pa, raw_frame(eng, 1000));
		roce_link_kick(ql_link, 0);
		ql_note('K', id);	/* after the pull if the kick pulled at once */
	}
	if (roce_engine_now(eng) < 2000 * half)
		roce_timer_arm(eng, t, roce_engine_now(eng) + half * (2 + (ql_x >> 59) % 16));
}

START_TEST(test_link_quiet)
{
	for (ql_run = 0; ql_run < 2; ql_run++) {
		struct roce_engine *eng = mk_engine(1);
		struct roce_link_conf lc = { .rate_bps = 100 * GBPS, .delay = ROCE_US };
		struct roce_link_end a = { .owner = &pa, .pull = ql_pull, .rx = port_rx,
					   .quiet = ql_run ? ql_is_quiet : NULL };
		struct roce_link_end b = { .owner = &pb, .pull = port_pull, .rx = port_rx };
		const roce_time_t half = (1000 + 24) * 8 * 10 / 2;

		memset(&pa, 0, sizeof(pa));
		memset(&pb, 0, sizeof(pb));
		pa.eng = pb.eng = eng;
		ql_n = 0;
		ql_null[ql_run] = 0;
		ql_x = 7;
		ql_link = roce_link_create(eng, &lc, &a, &b);
		ck_assert_ptr_nonnull(ql_link);
		for (uintptr_t i = 0; i < ROCE_DIM(ql_t); i++) {
			roce_timer_init(&ql_t[i], ql_fire, (void *)i);
			roce_timer_arm(eng, &ql_t[i], half * (2 * i + 1));
		}
		/* stepped runs too: a kick between runs sees the whole instant fired */
		roce_engine_run(eng, 37 * half);
		port_push(&pa, raw_frame(eng, 1000));
		roce_link_kick(ql_link, 0);
		/* and runs stopped by a timer, with a kick from outside before the instant's rest */
		do {
			ql_stopped = false;
			roce_engine_run(eng, ROCE_TIME_NEVER);
			if (ql_stopped && pa.qt - pa.qh < 8) {
				port_push(&pa, raw_frame(eng, 1000));
				roce_link_kick(ql_link, 0);
				ql_note('X', 0);
			}
		} while (ql_stopped);
		ck_assert_uint_lt(ql_n, QL_N);
		ck_assert_uint_gt(pb.nrx, 100);
		for (uint32_t i = 0; i < pb.nrx && i < PQ; i++)
			ql_note_at('R', i, pb.rx_at[i]);
		if (ql_run == 1) {
			ck_assert_mem_eq(ql_log[0], ql_log[1], sizeof(ql_log[0]));
			ck_assert_uint_lt(ql_null[1] * 2, ql_null[0]);	/* mostly left out */
		}
		check_conservation(ql_link, 0);
		roce_link_destroy(ql_link);
		roce_engine_destroy(eng);
	}
}
END_TEST

START_TEST(test_link_full_duplex_mtu)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_link *l = mk_link(eng, 25 * GBPS, 500 * ROCE_NS, 1500);
	struct roce_link_stats s;

	port_push(&pa, raw_frame(eng, 1514));	/* L3 1500: fits */
	port_push(&pa, raw_frame(eng, 1515));	/* L3 1501: refused */
	port_push(&pa, raw_frame(eng, 64));
	port_push(&pb, raw_frame(eng, 64));
	roce_link_kick(l, 0);
	roce_link_kick(l, 1);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 2);
	ck_assert_uint_eq(pa.nrx, 1);
	/* both directions at once: the b→a frame is not delayed by a→b */
	ck_assert_uint_eq(pa.rx_at[0], (64 + 24) * 8 * 40 + 500 * ROCE_NS);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.mtu_drops, 1);
	ck_assert_uint_eq(s.tx_frames, 2);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

/*
 * A link's PFC headroom (docs/fabric.md, "Headroom"): 2·d·r/8 rounded up, two of its largest
 * frames and the PFC frame on the wire, and the 802.3 Annex 31B response time of the smallest
 * standard rate at or above the link's rate now, in 512-bit quanta (64 bytes each).
 */
START_TEST(test_link_pfc_headroom)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_link *jumbo = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	struct roce_link *l = mk_link(eng, 25 * GBPS, 500 * ROCE_NS, 4096);

	/* no MTU: a 9234-byte jumbo frame; the docs' example, which the switch tests check too */
	ck_assert_uint_eq(roce_link_max_frame(jumbo), 9216 + 14 + 4);
	ck_assert_uint_eq(roce_link_pfc_headroom(jumbo), 25000 + 2 * (9234 + 24) + 84 + 394 * 64);
	/* the rate now, and the response of the next standard rate up (30G: 40G's) */
	ck_assert_int_eq(roce_link_set_rate(jumbo, 30 * GBPS), 0);
	ck_assert_uint_eq(roce_link_pfc_headroom(jumbo), 7500 + 2 * (9234 + 24) + 84 + 118 * 64);
	ck_assert_int_eq(roce_link_set_rate(jumbo, 400 * GBPS), 0);
	ck_assert_uint_eq(roce_link_pfc_headroom(jumbo), 100000 + 2 * (9234 + 24) + 84 + 905 * 64);
	/* above the table: 400G's response, the largest there is */
	ck_assert_int_eq(roce_link_set_rate(jumbo, 800 * GBPS), 0);
	ck_assert_uint_eq(roce_link_pfc_headroom(jumbo), 200000 + 2 * (9234 + 24) + 84 + 905 * 64);
	/* an MTU: its L3 packet plus an Ethernet header and one tag */
	ck_assert_uint_eq(roce_link_max_frame(l), 4096 + 18);
	ck_assert_uint_eq(roce_link_pfc_headroom(l), 3125 + 2 * (4114 + 24) + 84 + 80 * 64);
	roce_link_destroy(l);
	roce_link_destroy(jumbo);

	/* the round trip rounds up: 2 ps at 10G are a fortieth of a byte */
	l = mk_link(eng, 10 * GBPS, 1, 1500);
	ck_assert_uint_eq(roce_link_pfc_headroom(l), 1 + 2 * (1518 + 24) + 84 + 60 * 64);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

static void run_frames(struct roce_engine *eng, struct roce_link *l, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		port_push(&pa, roce_frame(eng, ROCE_OP_RC_SEND_ONLY, i, 64));
	roce_link_kick(l, 0);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	check_conservation(l, 0);
}

START_TEST(test_link_loss)
{
	struct roce_engine *eng = mk_engine(2024);
	struct roce_link *l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	struct roce_link_impair imp = { .loss = 0.01 };
	const uint32_t n = 100000;
	struct roce_link_stats s;
	uint32_t i;

	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	imp.loss = 1.5;
	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), -EINVAL);
	ck_assert_int_eq(roce_link_set_impair(l, 2, NULL), -EINVAL);

	/* 10^5 frames in batches, conservation checked after each */
	for (i = 0; i < n / 2000; i++)
		run_frames(eng, l, 2000);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.tx_frames, n);
	ck_assert_uint_eq(s.in_flight, 0);
	/* binomial(10^5, 0.01): mean 1000, sigma 31.5; +-5 sigma */
	ck_assert_uint_ge(s.dropped, 842);
	ck_assert_uint_le(s.dropped, 1158);
	ck_assert_uint_eq(s.rx_frames, n - s.dropped);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

START_TEST(test_link_rules)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_link *l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	struct roce_link_impair imp = { .drop_nth = 5 };
	struct roce_link_stats s;
	roce_time_t t0;
	uint32_t i;

	/* drop_nth: the 5th frame (PSN 4), once */
	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	run_frames(eng, l, 10);
	ck_assert_uint_eq(pb.nrx, 9);
	for (i = 0; i < 9; i++)
		ck_assert_int_eq(pb.rx_id[i], i < 4 ? (int32_t)i : (int32_t)i + 1);

	/* drop_psn: the first request with PSN 3, not its retransmission, not an ACK with PSN 3 */
	imp = (struct roce_link_impair){ .drop_psn_on = true, .drop_psn = 3 };
	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	pb.nrx = 0;
	port_push(&pa, roce_frame(eng, ROCE_OP_RC_ACKNOWLEDGE, 3, 0));
	run_frames(eng, l, 6);
	run_frames(eng, l, 6);
	ck_assert_uint_eq(pb.nrx, 12);
	ck_assert_int_eq(pb.rx_id[0], 3);	/* the ACK */
	for (i = 1; i < 6; i++)
		ck_assert_int_eq(pb.rx_id[i], i <= 3 ? (int32_t)i - 1 : (int32_t)i);
	for (i = 6; i < 12; i++)
		ck_assert_int_eq(pb.rx_id[i], (int32_t)i - 6);

	/* drop_acks: ACKs leaving in [t0 + 10 us, t0 + 20 us) are lost, requests are not */
	t0 = roce_engine_now(eng);
	imp = (struct roce_link_impair){ .drop_acks_from = t0 + 10 * ROCE_US,
					 .drop_acks_until = t0 + 20 * ROCE_US };
	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	pb.nrx = 0;
	for (i = 0; i < 30; i++) {
		port_push(&pa, roce_frame(eng, ROCE_OP_RC_ACKNOWLEDGE, 100 + i, 0));
		port_push(&pa, roce_frame(eng, ROCE_OP_RC_SEND_ONLY, 200 + i, 64));
		roce_link_kick(l, 0);
		roce_engine_run(eng, t0 + (i + 1) * ROCE_US);
	}
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 50);
	for (i = 0; i < pb.nrx; i++) {
		int32_t id = pb.rx_id[i];

		if (id >= 100 && id < 200)
			ck_assert(id - 100 < 10 || id - 100 >= 20);	/* ACK i leaves at t0 + i us */
	}
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.dropped, 1 + 1 + 10);
	check_conservation(l, 0);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

START_TEST(test_link_corrupt)
{
	struct roce_engine *eng = mk_engine(3);
	struct roce_link *l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	struct roce_link_impair imp = { .corrupt = 1.0 };
	struct roce_link_stats s;
	uint32_t i;

	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	for (i = 0; i < 2000; i++)
		port_push(&pa, roce_frame(eng, i % 3 ? ROCE_OP_RC_SEND_ONLY : ROCE_OP_RC_ACKNOWLEDGE,
					  i, 4 + i % 200));
	roce_link_kick(l, 0);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 2000);
	for (i = 0; i < pb.nrx; i++)
		ck_assert_int_eq(pb.rx_rc[i], -EBADMSG);	/* every one caught by the ICRC */
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.corrupted, 2000);

	/* off again: clean frames */
	ck_assert_int_eq(roce_link_set_impair(l, 0, NULL), 0);
	pb.nrx = 0;
	run_frames(eng, l, 10);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(pb.rx_rc[i], 0);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

/* Frames delivered after a later-sent one, counted from the receiver's log. */
static uint64_t count_reordered(const struct port *p)
{
	int32_t max = -1;
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < p->nrx; i++) {
		if (p->rx_id[i] < max)
			n++;
		else
			max = p->rx_id[i];
	}
	return n;
}

START_TEST(test_link_dup_reorder_jitter)
{
	struct roce_engine *eng = mk_engine(5);
	struct roce_link *l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	struct roce_link_impair imp = { .dup = 0.2 };
	struct roce_link_stats s;
	uint32_t i;

	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	run_frames(eng, l, 2000);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_gt(s.duplicated, 300);
	ck_assert_uint_lt(s.duplicated, 500);
	ck_assert_uint_eq(pb.nrx, 2000 + s.duplicated);
	ck_assert_uint_eq(s.reordered, 0);
	for (i = 1; i < pb.nrx; i++)
		ck_assert_int_ge(pb.rx_id[i], pb.rx_id[i - 1]);

	/* reordering: a held frame arrives right behind the next one */
	roce_link_destroy(l);
	l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	imp = (struct roce_link_impair){ .reorder = 0.1 };
	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	run_frames(eng, l, 2000);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(pb.nrx, 2000);
	ck_assert_uint_gt(s.reordered, 120);
	ck_assert_uint_lt(s.reordered, 280);
	ck_assert_uint_eq(s.reordered, count_reordered(&pb));
	for (i = 1; i < pb.nrx; i++)	/* a frame only ever swaps with its successor */
		ck_assert_int_le(abs(pb.rx_id[i] - pb.rx_id[i - 1]), 3);

	/* jitter larger than a frame time reorders too, and the counter agrees with the log */
	roce_link_destroy(l);
	l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	imp = (struct roce_link_impair){ .jitter = 50 * ROCE_NS };
	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	run_frames(eng, l, 2000);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(pb.nrx, 2000);
	ck_assert_uint_gt(s.reordered, 0);
	ck_assert_uint_eq(s.reordered, count_reordered(&pb));
	for (i = 1; i < pb.nrx; i++)
		ck_assert_uint_ge(pb.rx_at[i], pb.rx_at[i - 1]);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

START_TEST(test_link_down)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_link *l = mk_link(eng, 100 * GBPS, 10 * ROCE_US, 0);
	struct roce_link_stats s;
	uint32_t i;

	/* 5 frames leave, the link goes down while they propagate: lost */
	for (i = 0; i < 5; i++)
		port_push(&pa, roce_frame(eng, ROCE_OP_RC_SEND_ONLY, i, 64));
	roce_link_kick(l, 0);
	roce_engine_run(eng, 2 * ROCE_US);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.in_flight, 5);
	check_conservation(l, 0);
	roce_link_set_up(l, false);
	check_conservation(l, 0);
	/* frames sent while down are dropped too */
	for (i = 5; i < 8; i++)
		port_push(&pa, roce_frame(eng, ROCE_OP_RC_SEND_ONLY, i, 64));
	roce_link_kick(l, 0);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 0);
	roce_link_stats(l, 0, &s);
	ck_assert_uint_eq(s.down_drops, 8);
	ck_assert_uint_eq(s.tx_frames, 8);
	check_conservation(l, 0);

	/* up again: queued frames are pulled at once */
	port_push(&pa, roce_frame(eng, ROCE_OP_RC_SEND_ONLY, 8, 64));
	roce_link_set_up(l, true);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(pb.nrx, 1);
	ck_assert_int_eq(pb.rx_id[0], 8);
	check_conservation(l, 0);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

/* Everything at once, checked for conservation in flight, then replayed for determinism. */
static void chaos_run(uint64_t seed, roce_time_t *at, int32_t *id, uint32_t *n)
{
	struct roce_engine *eng = mk_engine(seed);
	struct roce_link *l = mk_link(eng, 100 * GBPS, 2 * ROCE_US, 0);
	struct roce_link_impair imp = { .loss = 0.02, .corrupt = 0.02, .dup = 0.05, .reorder = 0.05,
					.jitter = 30 * ROCE_NS, .drop_nth = 17 };
	struct roce_link_stats s;
	unsigned int k;
	roce_time_t t;

	ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
	ck_assert_int_eq(roce_link_set_impair(l, 1, &imp), 0);
	pa.refill = pb.refill = true;
	roce_link_kick(l, 0);
	roce_link_kick(l, 1);
	for (k = 1, t = ROCE_US; t <= 100 * ROCE_US; k++, t += 333 * ROCE_NS) {
		roce_engine_run(eng, t);
		check_conservation(l, 0);
		check_conservation(l, 1);
		if (k == 100 || k == 150)
			roce_link_set_up(l, k == 150);	/* down for 16.65 us */
	}
	roce_link_stats(l, 0, &s);
	ck_assert_uint_gt(s.in_flight, 0);
	ck_assert_uint_gt(s.dropped, 0);
	ck_assert_uint_gt(s.duplicated, 0);
	ck_assert_uint_gt(s.reordered, 0);
	ck_assert_uint_gt(s.down_drops, 0);
	*n = ROCE_MIN(pb.nrx, PQ);
	memcpy(at, pb.rx_at, *n * sizeof(*at));
	memcpy(id, pb.rx_id, *n * sizeof(*id));
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}

START_TEST(test_link_conservation_determinism)
{
	static roce_time_t at1[PQ], at2[PQ];
	static int32_t id1[PQ], id2[PQ];
	uint32_t n1, n2;

	chaos_run(77, at1, id1, &n1);
	chaos_run(77, at2, id2, &n2);
	ck_assert_uint_gt(n1, 1000);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(at1, at2, n1 * sizeof(at1[0]));
	ck_assert_mem_eq(id1, id2, n1 * sizeof(id1[0]));
	chaos_run(78, at2, id2, &n2);
	ck_assert(n1 != n2 || memcmp(id1, id2, n1 * sizeof(id1[0])) != 0);
}
END_TEST

START_TEST(test_link_tap)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_link *l = mk_link(eng, 100 * GBPS, ROCE_US, 0);
	char path[] = "/tmp/test_engine_tapXXXXXX", err[256];
	struct roce_pcap_writer *w;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	roce_link_set_tap(l, w);
	port_push(&pa, raw_frame(eng, 1000));
	port_push(&pa, raw_frame(eng, 1000));
	port_push(&pb, raw_frame(eng, 100));
	roce_link_kick(l, 0);
	roce_engine_run(eng, ROCE_US);
	roce_link_kick(l, 1);	/* b→a leaves at 1 us */
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_int_eq(roce_pcap_close_writer(w), 0);

	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_next(r, &f), 1);
	ck_assert_uint_eq(f.ts_ns, 0);
	ck_assert_uint_eq(f.wirelen, 1000);
	ck_assert_int_eq(roce_pcap_next(r, &f), 1);
	ck_assert_uint_eq(f.ts_ns, 81);	/* 81920 ps */
	ck_assert_int_eq(roce_pcap_next(r, &f), 1);
	ck_assert_uint_eq(f.ts_ns, 1000);
	ck_assert_uint_eq(f.wirelen, 100);
	ck_assert_int_eq(roce_pcap_next(r, &f), 0);
	roce_pcap_close(r);
	unlink(path);
	close(fd);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}
END_TEST

/* ---- the ICRC left for later (roce_wire_icrc_partial) ---- */

#define IP_FRAMES 24
static uint8_t ip_ref[IP_FRAMES][2048];	/* each frame as roce_wire_tmpl_build() writes it */
static uint8_t ip_got[IP_FRAMES][2048];	/* what the far end got */
static uint32_t ip_len[IP_FRAMES], ip_nrx;

/*
 * Frame @p i: an RC SEND of a length of its own, over IPv4 or IPv6, built without its ICRC, and
 * every fourth one then 802.1Q-tagged as a switch port may; ip_ref[i] as it is with its ICRC.
 */
static struct rte_mbuf *partial_frame(struct roce_engine *eng, uint32_t i)
{
	struct rte_mbuf *m = roce_engine_mbuf(eng);
	struct roce_wire_tmpl t;
	struct roce_pkt pkt;
	uint8_t *ref = ip_ref[i];
	int len;

	ck_assert_ptr_nonnull(m);
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
	pkt.ip_ver = i & 1 ? 6 : 4;
	pkt.dqpn = 0x11;
	pkt.psn = i;
	pkt.payload_len = 1 + 61 * i;	/* every pad */
	ck_assert_int_eq(roce_wire_tmpl_init(&t, &pkt), 0);
	len = roce_wire_tmpl_build(&t, &pkt, ref, sizeof(ip_ref[i]));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(roce_wire_tmpl_build_mbuf_partial(&t, &pkt, m), len);
	ck_assert(m->ol_flags & roce_wire_icrc_partial);
	/* the payload starts a cache line, for the copies into and out of the frame */
	ck_assert_uint_eq((uintptr_t)(rte_pktmbuf_mtod(m, uint8_t *) + len - ROCE_ICRC_LEN -
				      (-pkt.payload_len & 3) - pkt.payload_len) % 64, 0);
	ck_assert_uint_ge(rte_pktmbuf_headroom(m), 64);
	if (i % 4 == 3) {
		m->vlan_tci = 0x2005;	/* PCP 1, VLAN 5 */
		ck_assert_int_eq(rte_vlan_insert(&m), 0);
		memmove(ref + 16, ref + 12, (size_t)len - 12);
		ref[12] = 0x81, ref[13] = 0x00, ref[14] = 0x20, ref[15] = 0x05;
		len += 4;
	}
	ip_len[i] = (uint32_t)len;
	return m;
}

static void keep_rx(void *owner, struct rte_mbuf *m)
{
	RTE_SET_USED(owner);
	ck_assert_uint_lt(ip_nrx, IP_FRAMES);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), ip_len[ip_nrx]);
	memcpy(ip_got[ip_nrx++], rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m));
	rte_pktmbuf_free(m);
}

/* Bits in which frame @p i as received differs from its reference. */
static uint32_t ip_bits_off(uint32_t i)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < ip_len[i]; k++)
		n += (uint32_t)__builtin_popcount(ip_got[i][k] ^ ip_ref[i][k]);
	return n;
}

/*
 * A frame sent with its ICRC left for later reaches an end that takes such frames (a NIC, a
 * switch port) as it was, trailer zero, and any other end, a capture tap or a corrupting link
 * with its ICRC written: the bytes roce_wire_tmpl_build() gives, or those with one bit flipped.
 */
START_TEST(test_link_icrc_partial)
{
	enum { PLAIN, PARTIAL, TAPPED, CORRUPT, ROUNDS };
	struct roce_engine *eng = mk_engine(1);
	char path[] = "/tmp/test_engine_icrcXXXXXX", err[256];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	for (int round = PLAIN; round < ROUNDS; round++) {
		struct roce_link_conf lc = { .rate_bps = 100 * GBPS, .delay = ROCE_US };
		struct roce_link_end a = { .owner = &pa, .pull = port_pull, .rx = port_rx };
		struct roce_link_end b = { .owner = &pb, .pull = port_pull, .rx = keep_rx,
					   .icrc_partial = round != PLAIN };
		struct roce_link_impair imp = { .corrupt = 1.0 };
		struct roce_pcap_writer *w = NULL;
		struct roce_link *l;

		memset(&pa, 0, sizeof(pa));
		memset(&pb, 0, sizeof(pb));
		pa.eng = pb.eng = eng;
		ip_nrx = 0;
		l = roce_link_create(eng, &lc, &a, &b);
		ck_assert_ptr_nonnull(l);
		if (round == TAPPED) {
			w = roce_pcap_create(path, err, sizeof(err));
			ck_assert_msg(w != NULL, "%s", err);
			roce_link_set_tap(l, w);
		}
		if (round == CORRUPT)
			ck_assert_int_eq(roce_link_set_impair(l, 0, &imp), 0);
		for (uint32_t i = 0; i < IP_FRAMES; i++)
			port_push(&pa, partial_frame(eng, i));
		roce_link_kick(l, 0);
		roce_engine_run(eng, ROCE_TIME_NEVER);
		ck_assert_uint_eq(ip_nrx, IP_FRAMES);
		for (uint32_t i = 0; i < IP_FRAMES; i++) {
			uint8_t *trailer = ip_got[i] + ip_len[i] - ROCE_ICRC_LEN;

			if (round == PARTIAL) {
				struct roce_pkt pkt;

				ck_assert(trailer[0] == 0 && trailer[1] == 0 && trailer[2] == 0 &&
					  trailer[3] == 0);
				/* a NIC takes it as it is, off the fast path too (tagged) */
				ck_assert_int_eq(roce_wire_parse_rx(ip_got[i], ip_len[i],
								    ROCE_PARSE_ICRC_CHECKED, &pkt), 0);
				ck_assert(pkt.icrc_ok && pkt.psn == i && pkt.nvlan == (i % 4 == 3));
				memcpy(trailer, ip_ref[i] + ip_len[i] - ROCE_ICRC_LEN, ROCE_ICRC_LEN);
			}
			ck_assert_uint_eq(ip_bits_off(i), (uint32_t)(round == CORRUPT));
		}
		roce_link_destroy(l);
		if (w != NULL) {
			struct roce_pcap_reader *r;
			struct roce_pcap_frame f;
			uint32_t n = 0;

			ck_assert_int_eq(roce_pcap_close_writer(w), 0);
			r = roce_pcap_open(path, NULL, err, sizeof(err));
			ck_assert_msg(r != NULL, "%s", err);
			while (roce_pcap_next(r, &f) == 1) {
				ck_assert_uint_lt(n, IP_FRAMES);
				ck_assert_uint_eq(f.caplen, ip_len[n]);
				ck_assert_mem_eq(f.data, ip_ref[n], ip_len[n]);
				n++;
			}
			ck_assert_uint_eq(n, IP_FRAMES);
			roce_pcap_close(r);
		}
	}
	unlink(path);
	close(fd);
	roce_engine_destroy(eng);
}
END_TEST

/* The look ahead's roce_link_end.peek: shown frames before they arrive, and changes nothing. */
#define PK_FRAMES 600
static struct rte_mbuf *pk_frame[PK_FRAMES];	/* sent, in order */
static bool pk_peeked[PK_FRAMES];
static uint32_t pk_calls, pk_hits;

static void pk_peek(void *owner, const struct rte_mbuf *m)
{
	uint32_t i = 0;

	ck_assert_ptr_eq(owner, &pb);
	while (i < PK_FRAMES && pk_frame[i] != m)
		i++;
	/* a frame still to arrive: the next one (a look ahead of at most two events) */
	ck_assert_uint_eq(i, pb.nrx);
	pk_peeked[i] = true;
	pk_calls++;
}

static void pk_rx(void *owner, struct rte_mbuf *m)
{
	ck_assert_ptr_eq(m, pk_frame[pb.nrx]);
	pk_hits += pk_peeked[pb.nrx];
	port_rx(owner, m);
}

static struct rte_mbuf *idle_pull(void *owner)
{
	RTE_SET_USED(owner);
	return NULL;
}

static void idle_rx(void *owner, struct rte_mbuf *m)
{
	RTE_SET_USED(owner);
	rte_pktmbuf_free(m);
}

START_TEST(test_link_peek)
{
	enum { PLAIN, PEEK, SMALL, ROUNDS };
	static roce_time_t at[ROUNDS][PK_FRAMES];
	static uint32_t len[ROUNDS][PK_FRAMES];
	struct roce_engine_stats st[ROUNDS];

	for (int round = PLAIN; round < ROUNDS; round++) {
		struct roce_engine *eng = mk_engine(1);
		struct roce_link_conf lc = { .rate_bps = 100 * GBPS, .delay = 10 * ROCE_US };
		struct roce_link_end a = { .owner = &pa, .pull = port_pull, .rx = port_rx };
		struct roce_link_end b = { .owner = &pb, .pull = port_pull, .rx = pk_rx,
					   .peek = round != PLAIN ? pk_peek : NULL };
		struct roce_link_end idle = { .owner = NULL, .pull = idle_pull, .rx = idle_rx };
		struct roce_link *l, *others[40] = { NULL };

		memset(&pa, 0, sizeof(pa));
		memset(&pb, 0, sizeof(pb));
		memset(pk_peeked, 0, sizeof(pk_peeked));
		pk_calls = pk_hits = 0;
		pa.eng = pb.eng = eng;
		l = roce_link_create(eng, &lc, &a, &b);
		ck_assert_ptr_nonnull(l);
		/* the run loop looks ahead on a fabric of 32 links or more, not on a small one */
		for (int i = 0; round != SMALL && i < (int)ROCE_DIM(others); i++) {
			others[i] = roce_link_create(eng, &lc, &idle, &idle);
			ck_assert_ptr_nonnull(others[i]);
		}
		/* some 120 frames in flight at a time, of lengths that vary */
		for (uint32_t i = 0; i < PK_FRAMES; i++) {
			pk_frame[i] = roce_frame(eng, ROCE_OP_RC_SEND_ONLY, i, 64 + (i * 37) % 1000);
			port_push(&pa, pk_frame[i]);
		}
		roce_link_kick(l, 0);
		roce_engine_run(eng, ROCE_TIME_NEVER);
		ck_assert_uint_eq(pb.nrx, PK_FRAMES);
		for (uint32_t i = 0; i < PK_FRAMES; i++) {
			ck_assert_int_eq(pb.rx_id[i], (int32_t)i);
			at[round][i] = pb.rx_at[i];
			len[round][i] = pb.rx_len[i];
		}
		/* without a peek nothing is shown; with one, most frames (a timer due next), some
		 * twice (an event armed in between) */
		if (round == PEEK) {
			ck_assert_uint_ge(pk_hits, PK_FRAMES / 2);
			ck_assert_uint_ge(pk_calls, pk_hits);
			ck_assert_uint_le(pk_calls, 2 * PK_FRAMES);
		} else {
			ck_assert_uint_eq(pk_calls, 0);
		}
		check_conservation(l, 0);
		roce_engine_stats(eng, &st[round]);
		roce_link_destroy(l);
		for (int i = 0; i < (int)ROCE_DIM(others); i++)
			roce_link_destroy(others[i]);
		roce_engine_destroy(eng);
	}
	for (int round = PEEK; round < ROUNDS; round++) {
		ck_assert_mem_eq(at[PLAIN], at[round], sizeof(at[0]));
		ck_assert_mem_eq(len[PLAIN], len[round], sizeof(len[0]));
		ck_assert_uint_eq(st[PLAIN].timers_fired, st[round].timers_fired);
	}
}
END_TEST

START_TEST(test_engine_errors)
{
	struct roce_engine_conf bad = { .clock = 7 };
	struct roce_engine *eng = mk_engine(1);
	struct roce_link_conf lc = { .rate_bps = 0 };
	struct roce_link_end e = { .owner = NULL, .pull = port_pull, .rx = port_rx };

	errno = 0;
	ck_assert_ptr_null(roce_engine_create(&bad));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(roce_link_create(eng, &lc, &e, &e));
	ck_assert_int_eq(errno, EINVAL);
	roce_engine_destroy(NULL);
	roce_link_destroy(NULL);
	ck_assert_ptr_nonnull(roce_engine_pool(eng));
	roce_engine_destroy(eng);
}
END_TEST

static int wall_polls;

static void wall_poll(struct roce_engine *eng, void *arg)
{
	(void)arg;
	if (++wall_polls == 1000000)
		roce_engine_stop(eng);
}

START_TEST(test_wall_clock)
{
	struct roce_engine_conf conf = { .clock = ROCE_CLOCK_WALL, .nb_mbufs = 64, .mbuf_data = 512 };
	struct roce_engine *eng;
	struct roce_timer t;
	roce_time_t t0;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	eng = roce_engine_create(&conf);
	ck_assert_ptr_nonnull(eng);
	nrec = 0;
	roce_timer_init(&t, record_wall, NULL);
	t0 = roce_engine_now(eng);
	roce_timer_arm(eng, &t, t0 + 200 * ROCE_US);
	ck_assert_uint_eq(roce_engine_run(eng, ROCE_TIME_NEVER), 1);	/* no poller: ends empty */
	ck_assert_uint_ge(roce_engine_now(eng), t0 + 200 * ROCE_US);
	ck_assert_int_eq(roce_engine_add_poller(eng, wall_poll, NULL), 0);
	wall_polls = 0;
	roce_engine_run(eng, roce_engine_now(eng) + ROCE_SEC);
	ck_assert_int_eq(wall_polls, 1000000);
	roce_engine_destroy(eng);
}
END_TEST

/*
 * Where an engine's frames live: a virtual-clock engine's pool is private memory (on
 * transparent huge pages), whatever the size of its mbufs, a 1 KiB MTU's as much as a jumbo
 * frame's (objects under 4 KiB used to fall back to DPDK's memory, in 4 KiB pages and bounded by
 * its -m); a wall-clock engine's frames may go to a DPDK port: DPDK's memory.
 */
START_TEST(test_pool_memory)
{
	/* 20 000 frames: enough 2 MiB chunks that two objects a 4 KiB page would fall short */
	static const uint16_t data[] = { 192, 512, 1408, 4608 };
	static struct rte_mbuf *m[20000];

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	for (unsigned int i = 0; i < ROCE_DIM(data); i++) {
		for (int wall = 0; wall < 2; wall++) {
			struct roce_engine_conf conf = {
				.clock = wall ? ROCE_CLOCK_WALL : ROCE_CLOCK_VIRTUAL,
				.nb_mbufs = ROCE_DIM(m), .mbuf_data = data[i],
			};
			struct roce_engine *eng = roce_engine_create(&conf);
			unsigned int n, dpdk = 0;

			ck_assert_ptr_nonnull(eng);
			for (n = 0; n < ROCE_DIM(m); n++) {
				m[n] = roce_engine_mbuf(eng);
				ck_assert_msg(m[n] != NULL, "data %u: mbuf %u", data[i], n);
				dpdk += rte_mem_virt2memseg(m[n], NULL) != NULL;
			}
			ck_assert_msg(dpdk == (wall ? n : 0), "data %u, %s clock: %u of %u mbufs in "
				      "DPDK's memory", data[i], wall ? "wall" : "virtual", dpdk, n);
			for (n = 0; n < ROCE_DIM(m); n++)
				rte_pktmbuf_free(m[n]);
			roce_engine_destroy(eng);
		}
	}
}
END_TEST

/*
 * Segments for payloads by reference: a virtual-clock engine hands out one a frame, counted,
 * with the same four shared trailers (pad 0-3, zero bytes and the ICRC's), until its pool (twice
 * the frames' count, the trailers' four included) is empty; a wall-clock engine, whose frames
 * may leave the process, none: its frames are copies.
 */
START_TEST(test_zc_seg)
{
	struct roce_engine_conf conf = { .clock = ROCE_CLOCK_VIRTUAL, .nb_mbufs = 8, .mbuf_data = 512 };
	struct rte_mbuf *const *trailer, *const *first = NULL;
	struct rte_mbuf *held[12];
	struct roce_engine_stats st;
	struct roce_engine *eng;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	eng = roce_engine_create(&conf);
	ck_assert_ptr_nonnull(eng);
	ck_assert(roce_engine_zc_prepare(eng));
	for (int i = 0; i < 12; i++) {
		held[i] = roce_engine_zc_seg(eng, &trailer);
		ck_assert(held[i] != NULL && held[i]->buf_len >= 24);
		if (first == NULL)
			first = trailer;
		ck_assert(trailer == first);
		for (uint32_t pad = 0; pad < 4; pad++)
			ck_assert(trailer[pad] != held[i] && trailer[pad]->data_len == pad + 4 &&
				  trailer[pad]->next == NULL);
	}
	ck_assert(roce_engine_zc_seg(eng, &trailer) == NULL);	/* 16 segments, 4 trailers */
	roce_engine_stats(eng, &st);
	ck_assert_uint_eq(st.zc_frames, 12);
	rte_pktmbuf_free(held[3]);
	held[3] = roce_engine_zc_seg(eng, &trailer);
	ck_assert(held[3] != NULL);
	for (int i = 0; i < 12; i++)
		rte_pktmbuf_free(held[i]);
	roce_engine_destroy(eng);

	conf.clock = ROCE_CLOCK_WALL;
	eng = roce_engine_create(&conf);
	ck_assert_ptr_nonnull(eng);
	ck_assert(!roce_engine_zc_prepare(eng));
	ck_assert(roce_engine_zc_seg(eng, &trailer) == NULL);
	roce_engine_stats(eng, &st);
	ck_assert_uint_eq(st.zc_frames, 0);
	roce_engine_destroy(eng);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("timers");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_timer_order);
	tcase_add_test(tc, test_timer_cancel_rearm);
	tcase_add_test(tc, test_timer_stop);
	tcase_add_test(tc, test_timer_random_model);
	tcase_add_test(tc, test_timer_crowded);
	tcase_add_test(tc, test_timer_arm_in_callback);
	tcase_add_test(tc, test_rng);
	tcase_add_test(tc, test_engine_errors);
	tcase_add_test(tc, test_wall_clock);
	tcase_add_test(tc, test_pool_memory);
	tcase_add_test(tc, test_zc_seg);
	suite_add_tcase(s, tc);

	tc = tcase_create("links");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_link_timing);
	tcase_add_test(tc, test_link_quiet);
	tcase_add_test(tc, test_link_full_duplex_mtu);
	tcase_add_test(tc, test_link_pfc_headroom);
	tcase_add_test(tc, test_link_loss);
	tcase_add_test(tc, test_link_rules);
	tcase_add_test(tc, test_link_corrupt);
	tcase_add_test(tc, test_link_dup_reorder_jitter);
	tcase_add_test(tc, test_link_down);
	tcase_add_test(tc, test_link_conservation_determinism);
	tcase_add_test(tc, test_link_tap);
	tcase_add_test(tc, test_link_icrc_partial);
	tcase_add_test(tc, test_link_peek);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(engine_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
