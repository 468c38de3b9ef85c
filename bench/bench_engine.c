/* Benchmark of the event queue (binary heap, 4-ary heap, timing wheel, the engine's wheel) and of a model link. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mbuf.h>

#include "roce_engine.h"
#include "roce_io.h"

/*
 * The pattern measured ("hold" model with pushes): N timers stay armed. Each event pops the
 * earliest, re-arms it a random 0.5..1.5 x MEAN later (a link's next arrival, a pacing timer),
 * and pushes one other random armed timer a little later (0..MEAN/8: a retransmit timer
 * restarted by an ACK). Every structure runs the same RNG stream and the same callback shape;
 * the engine runs through its public API (roce_timer_arm + roce_engine_run), so its figure
 * includes dispatch. Prints events/s; asserts nothing.
 */
#define MEAN (10 * ROCE_US)	/* mean re-arm distance */
#define REPS 3			/* best of */

static uint64_t rng_state = 1;

static inline uint64_t rng(void)
{
	/* xorshift64*: cheap and the same for every contender */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static inline uint64_t rearm_delta(void)
{
	return MEAN / 2 + rng() % MEAN;
}

static inline uint64_t push_delta(void)
{
	return rng() % (MEAN / 8);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A timer of the stand-alone contenders; each uses the fields it needs. */
struct btimer {
	uint64_t when;		/* expiry */
	uint64_t seq;		/* arm order */
	uint32_t slot;		/* heap index, or IDLE */
	uint32_t wl;		/* wheel: level * 64 + slot, or W_READY */
	struct btimer *next;	/* wheel slot list */
	struct btimer *prev;	/* wheel slot list */
};
#define IDLE UINT32_MAX

static inline bool bt_less(const struct btimer *a, const struct btimer *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

/* ---- binary heap of pointers: the reference ---- */

struct bheap {
	struct btimer **h;	/* heap array */
	uint32_t len;		/* entries */
};

static void bh_up(struct bheap *q, uint32_t i, struct btimer *t)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!bt_less(t, q->h[p]))
			break;
		q->h[i] = q->h[p];
		q->h[i]->slot = i;
		i = p;
	}
	q->h[i] = t;
	t->slot = i;
}

static void bh_down(struct bheap *q, uint32_t i, struct btimer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= q->len)
			break;
		if (c + 1 < q->len && bt_less(q->h[c + 1], q->h[c]))
			c++;
		if (!bt_less(q->h[c], t))
			break;
		q->h[i] = q->h[c];
		q->h[i]->slot = i;
		i = c;
	}
	q->h[i] = t;
	t->slot = i;
}

static void bh_push(struct bheap *q, struct btimer *t)
{
	bh_up(q, q->len++, t);
}

static struct btimer *bh_pop(struct bheap *q)
{
	struct btimer *top = q->h[0];

	if (--q->len)
		bh_down(q, 0, q->h[q->len]);
	top->slot = IDLE;
	return top;
}

static void bh_remove(struct bheap *q, struct btimer *t)
{
	uint32_t i = t->slot;
	struct btimer *last = q->h[--q->len];

	t->slot = IDLE;
	if (i == q->len)
		return;
	if (bt_less(last, t))
		bh_up(q, i, last);
	else
		bh_down(q, i, last);
}

/* Move an armed timer: same as the engine, a new seq, sift by direction. */
static void bh_move(struct bheap *q, struct btimer *t, uint64_t when, uint64_t seq)
{
	uint64_t old = t->when;

	t->when = when;
	t->seq = seq;
	if (when >= old)
		bh_down(q, t->slot, t);
	else
		bh_up(q, t->slot, t);
}

/* ---- 4-ary heap, expiry beside the pointer (4 children = one cache line) ---- */

struct qent {
	uint64_t when;		/* copy of t->when */
	struct btimer *t;	/* the timer; t->slot is this entry's index */
};

struct qheap {
	struct qent *mem;	/* allocation, aligned */
	struct qent *h;		/* mem + 3: h[1], h[5], ... start cache lines */
	uint32_t len;		/* entries */
};

static inline bool q_less(const struct qent *a, const struct qent *b)
{
	return a->when < b->when || (a->when == b->when && a->t->seq < b->t->seq);
}

static inline void q_put(struct qheap *q, uint32_t i, struct qent e)
{
	q->h[i] = e;
	e.t->slot = i;
}

static void q_up(struct qheap *q, uint32_t i, struct qent e)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 4;

		if (!q_less(&e, &q->h[p]))
			break;
		q_put(q, i, q->h[p]);
		i = p;
	}
	q_put(q, i, e);
}

static void q_down(struct qheap *q, uint32_t i, struct qent e)
{
	for (;;) {
		uint32_t first = 4 * i + 1, best = first, c, end;

		if (first >= q->len)
			break;
		end = first + 4 < q->len ? first + 4 : q->len;
		for (c = first + 1; c < end; c++)
			if (q_less(&q->h[c], &q->h[best]))
				best = c;
		if (!q_less(&q->h[best], &e))
			break;
		q_put(q, i, q->h[best]);
		i = best;
	}
	q_put(q, i, e);
}

static struct btimer *q_pop(struct qheap *q)
{
	struct btimer *top = q->h[0].t;

	if (--q->len)
		q_down(q, 0, q->h[q->len]);
	top->slot = IDLE;
	return top;
}

static void q_move(struct qheap *q, struct btimer *t, uint64_t when, uint64_t seq)
{
	uint64_t old = t->when;
	struct qent e = { .when = when, .t = t };

	t->when = when;
	t->seq = seq;
	if (when >= old)
		q_down(q, t->slot, e);
	else
		q_up(q, t->slot, e);
}

/* ---- hierarchical timing wheel: 9 levels of 64 slots over 1.024 ns ticks ---- */

#define W_GRAN 10		/* log2 ps per tick */
#define W_BITS 6		/* log2 slots per level */
#define W_SLOTS (1u << W_BITS)
#define W_LEVELS 9		/* 9 x 6 + 10 = 64 bits of time */
#define W_READY UINT32_MAX	/* in the ready heap: expires in the current tick */

struct wheel {
	uint64_t cur;				/* current tick */
	struct btimer *slot[W_LEVELS][W_SLOTS];	/* unsorted lists */
	uint64_t occ[W_LEVELS];			/* non-empty slots */
	struct bheap ready;			/* this tick's timers, exact (when, seq) order */
};

static void w_insert(struct wheel *w, struct btimer *t)
{
	uint64_t tick = t->when >> W_GRAN, diff = tick ^ w->cur;
	unsigned int lvl, s;

	if (diff == 0) {
		t->wl = W_READY;
		bh_push(&w->ready, t);
		return;
	}
	lvl = (63 - __builtin_clzll(diff)) / W_BITS;
	s = (tick >> (W_BITS * lvl)) & (W_SLOTS - 1);
	t->wl = lvl * W_SLOTS + s;
	t->prev = NULL;
	t->next = w->slot[lvl][s];
	if (t->next)
		t->next->prev = t;
	w->slot[lvl][s] = t;
	w->occ[lvl] |= 1ull << s;
}

static void w_remove(struct wheel *w, struct btimer *t)
{
	unsigned int lvl, s;

	if (t->wl == W_READY) {
		bh_remove(&w->ready, t);
		return;
	}
	lvl = t->wl / W_SLOTS;
	s = t->wl % W_SLOTS;
	if (t->prev)
		t->prev->next = t->next;
	else
		w->slot[lvl][s] = t->next;
	if (t->next)
		t->next->prev = t->prev;
	if (w->slot[lvl][s] == NULL)
		w->occ[lvl] &= ~(1ull << s);
}

/* Advance cur to the next non-empty slot; cascade it down. @return false if nothing is armed */
static bool w_advance(struct wheel *w)
{
	unsigned int lvl;

	for (lvl = 0; lvl < W_LEVELS; lvl++) {
		unsigned int idx = (w->cur >> (W_BITS * lvl)) & (W_SLOTS - 1), s, shift;
		uint64_t mask = idx == W_SLOTS - 1 ? 0 : w->occ[lvl] & (~0ull << (idx + 1));
		struct btimer *t, *next;

		if (!mask)
			continue;
		s = __builtin_ctzll(mask);
		shift = W_BITS * (lvl + 1);
		w->cur = (shift >= 64 ? 0 : (w->cur >> shift) << shift) | ((uint64_t)s << (W_BITS * lvl));
		t = w->slot[lvl][s];
		w->slot[lvl][s] = NULL;
		w->occ[lvl] &= ~(1ull << s);
		for (; t; t = next) {
			next = t->next;
			w_insert(w, t);
		}
		return true;
	}
	return false;
}

static struct btimer *w_pop(struct wheel *w)
{
	while (w->ready.len == 0)
		if (!w_advance(w))
			return NULL;
	return bh_pop(&w->ready);
}

/* ---- the runs ---- */

typedef void (*ev_fn)(struct btimer *t, uint64_t now);

struct run {
	struct btimer *tm;	/* the N timers */
	uint32_t n;		/* N */
	uint64_t seq;		/* arm counter */
	struct bheap bh;	/* binary heap contender */
	struct qheap qh;	/* 4-ary heap contender */
	struct wheel *w;	/* wheel contender */
};

static struct run R;

static void bh_event(struct btimer *t, uint64_t now)
{
	struct btimer *o = &R.tm[rng() % R.n];

	t->when = now + rearm_delta();
	t->seq = R.seq++;
	bh_push(&R.bh, t);
	if (o->slot != IDLE)
		bh_move(&R.bh, o, o->when + push_delta(), R.seq++);
}

static void w_event(struct btimer *t, uint64_t now)
{
	struct btimer *o = &R.tm[rng() % R.n];

	t->when = now + rearm_delta();
	t->seq = R.seq++;
	w_insert(R.w, t);
	if (o != t) {
		w_remove(R.w, o);
		o->when += push_delta();
		o->seq = R.seq++;
		w_insert(R.w, o);
	}
}

static double run_bheap(uint32_t n, uint64_t events)
{
	volatile ev_fn fn = bh_event;
	double t0, t1;
	uint64_t i;

	rng_state = 42;
	R.n = n;
	R.seq = 0;
	R.tm = calloc(n, sizeof(*R.tm));
	R.bh.h = calloc(n, sizeof(*R.bh.h));
	R.bh.len = 0;
	for (i = 0; i < n; i++) {
		R.tm[i].when = rng() % MEAN;
		R.tm[i].seq = R.seq++;
		bh_push(&R.bh, &R.tm[i]);
	}
	t0 = now_s();
	for (i = 0; i < events; i++) {
		struct btimer *t = bh_pop(&R.bh);

		fn(t, t->when);
	}
	t1 = now_s();
	free(R.bh.h);
	free(R.tm);
	return events / (t1 - t0);
}

static void q_event(struct btimer *t, uint64_t now)
{
	struct btimer *o = &R.tm[rng() % R.n];

	t->when = now + rearm_delta();
	t->seq = R.seq++;
	q_up(&R.qh, R.qh.len++, (struct qent){ .when = t->when, .t = t });
	if (o->slot != IDLE)
		q_move(&R.qh, o, o->when + push_delta(), R.seq++);
}

static double run_qheap(uint32_t n, uint64_t events)
{
	volatile ev_fn fn = q_event;
	double t0, t1;
	uint64_t i;

	rng_state = 42;
	R.n = n;
	R.seq = 0;
	R.tm = calloc(n, sizeof(*R.tm));
	if (posix_memalign((void **)&R.qh.mem, 64, (n + 4) * sizeof(struct qent)) != 0)
		exit(1);
	R.qh.h = R.qh.mem + 3;
	R.qh.len = 0;
	for (i = 0; i < n; i++) {
		R.tm[i].when = rng() % MEAN;
		R.tm[i].seq = R.seq++;
		q_up(&R.qh, R.qh.len++, (struct qent){ .when = R.tm[i].when, .t = &R.tm[i] });
	}
	t0 = now_s();
	for (i = 0; i < events; i++) {
		struct btimer *t = q_pop(&R.qh);

		fn(t, t->when);
	}
	t1 = now_s();
	free(R.qh.mem);
	free(R.tm);
	return events / (t1 - t0);
}

static double run_wheel(uint32_t n, uint64_t events)
{
	volatile ev_fn fn = w_event;
	double t0, t1;
	uint64_t i;

	rng_state = 42;
	R.n = n;
	R.seq = 0;
	R.tm = calloc(n, sizeof(*R.tm));
	R.w = calloc(1, sizeof(*R.w));
	R.w->ready.h = calloc(n, sizeof(*R.w->ready.h));
	for (i = 0; i < n; i++) {
		R.tm[i].when = rng() % MEAN;
		R.tm[i].seq = R.seq++;
		w_insert(R.w, &R.tm[i]);
	}
	t0 = now_s();
	for (i = 0; i < events; i++) {
		struct btimer *t = w_pop(R.w);

		fn(t, t->when);
	}
	t1 = now_s();
	free(R.w->ready.h);
	free(R.w);
	free(R.tm);
	return events / (t1 - t0);
}

/* The engine, through its API. */
static struct roce_timer *eng_tm;
static uint64_t eng_left;

static void eng_event(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct roce_timer *o = &eng_tm[rng() % R.n];

	(void)arg;
	roce_timer_arm(eng, t, roce_engine_now(eng) + rearm_delta());
	if (roce_timer_armed(o) && o != t)
		roce_timer_arm(eng, o, o->when + push_delta());
	if (--eng_left == 0)
		roce_engine_stop(eng);
}

static double run_engine(uint32_t n, uint64_t events)
{
	struct roce_engine_conf conf = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .nb_mbufs = 64,
					 .mbuf_data = 256, .name = "bench" };
	struct roce_engine *eng = roce_engine_create(&conf);
	double t0, t1;
	uint64_t i;

	if (eng == NULL) {
		fprintf(stderr, "bench_engine: engine: %s\n", strerror(errno));
		exit(1);
	}
	rng_state = 42;
	R.n = n;
	eng_tm = calloc(n, sizeof(*eng_tm));
	for (i = 0; i < n; i++) {
		roce_timer_init(&eng_tm[i], eng_event, NULL);
		roce_timer_arm(eng, &eng_tm[i], rng() % MEAN);
	}
	eng_left = events;
	t0 = now_s();
	roce_engine_run(eng, ROCE_TIME_NEVER);
	t1 = now_s();
	roce_engine_destroy(eng);
	free(eng_tm);
	return events / (t1 - t0);
}

static double best(double (*fn)(uint32_t, uint64_t), uint32_t n, uint64_t events)
{
	double b = 0, r;
	int i;

	for (i = 0; i < REPS; i++) {
		r = fn(n, events);
		if (r > b)
			b = r;
	}
	return b;
}

/* ---- a model link: 1000-byte frames back to back at 100 Gb/s ---- */

struct gen {
	struct roce_engine *eng;	/* pool */
	uint64_t left;			/* frames still to send */
	uint64_t rx;			/* frames received */
};

static struct rte_mbuf *gen_pull(void *owner)
{
	struct gen *g = owner;
	struct rte_mbuf *m;

	if (g->left == 0)
		return NULL;
	m = roce_engine_mbuf(g->eng);
	if (m == NULL)
		return NULL;
	g->left--;
	memset(rte_pktmbuf_append(m, 1000), 0, 14);
	return m;
}

static struct rte_mbuf *none_pull(void *owner)
{
	(void)owner;
	return NULL;
}

static void gen_rx(void *owner, struct rte_mbuf *m)
{
	((struct gen *)owner)->rx++;
	rte_pktmbuf_free(m);
}

static void bench_link(uint64_t frames)
{
	struct roce_engine_conf conf = { .seed = 1, .nb_mbufs = 4096, .mbuf_data = 2048,
					 .name = "benchlink" };
	struct roce_link_conf lc = { .rate_bps = 100000000000ull, .delay = ROCE_US, .mtu = 4200 };
	struct roce_engine *eng = roce_engine_create(&conf);
	struct gen g = { .eng = eng, .left = frames };
	struct roce_link_end a = { .owner = &g, .pull = gen_pull, .rx = gen_rx };
	struct roce_link_end b = { .owner = &g, .pull = none_pull, .rx = gen_rx };
	struct roce_link *l;
	double t0, t1;

	if (eng == NULL || (l = roce_link_create(eng, &lc, &a, &b)) == NULL) {
		fprintf(stderr, "bench_engine: link: %s\n", strerror(errno));
		exit(1);
	}
	t0 = now_s();
	roce_link_kick(l, 0);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	t1 = now_s();
	printf("link  1000-byte frames at 100G, 1 us: %.2f M frames/s wall, %.2f Gb/s emulated per "
	       "wall second (%lu delivered)\n", g.rx / (t1 - t0) / 1e6,
	       g.rx * 1000 * 8 / (t1 - t0) / 1e9, (unsigned long)g.rx);
	roce_link_destroy(l);
	roce_engine_destroy(eng);
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1000, 10000, 100000, 1000000 };
	uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	unsigned int i;

	if (roce_eal_init(NULL) != 0)
		return 1;
	printf("timer queue, hold model with pushes: >= %lu events per run, best of %d (M events/s)\n",
	       (unsigned long)events, REPS);
	printf("%10s %12s %12s %14s %14s\n", "pending", "binary heap", "4-ary heap", "timing wheel",
	       "engine (wheel)");
	for (i = 0; i < ROCE_DIM(sizes); i++) {
		/* at least 4 events per timer, so every timer has cycled through the queue */
		uint64_t ev = events > 4ull * sizes[i] ? events : 4ull * sizes[i];
		double bh = best(run_bheap, sizes[i], ev);
		double qh = best(run_qheap, sizes[i], ev);
		double wh = best(run_wheel, sizes[i], ev);
		double en = best(run_engine, sizes[i], ev);

		printf("%10u %12.2f %12.2f %14.2f %14.2f\n", sizes[i], bh / 1e6, qh / 1e6, wh / 1e6,
		       en / 1e6);
		fflush(stdout);
	}
	bench_link(events);
	return 0;
}
