/* The engine's timer queue: a hierarchical timing wheel; the due timers in exact order. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eng_private.h"

/*
 * Why a wheel: bench/bench_engine measured it against a binary heap of pointers and a 4-ary
 * heap with inline keys, under the engine's pattern (pop, re-arm later, push another timer a
 * little later); docs/engine.md has the figures. Arming, moving and cancelling are O(1); each
 * timer cascades down at most once per level it crosses; only the timers due by the current
 * tick are ordered (a sorted run while few, a heap beyond), which keeps (when, seq) order exact
 * and runs deterministic.
 */

ROCE_STATIC_ASSERT(offsetof(struct roce_timer, seq) == offsetof(struct roce_timer, when) + 8);
ROCE_STATIC_ASSERT(offsetof(struct roce_engine, fired_seq) == offsetof(struct roce_engine, now) + 8);

static inline bool t_less(const struct roce_timer *a, const struct roce_timer *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

/* ---- the ready heap: timers due at or before the current tick, when too many for a run ---- */

/*
 * The helpers of arm and pop are forced inline: every frame arms and pops two timers, and the
 * calls between them cost more than the few loop turns of a heap of a handful of timers.
 */
#define ENG_HOT static inline __attribute__((always_inline))

/*
 * While a timer fires, the root of the heap is a hole (eng_timer_run): its two subtrees are
 * heaps, the first timer armed into the ready heap fills the hole with one sift down (the
 * fired timer re-armed, usually: a link's next arrival or next frame) instead of a sift down
 * to pop and a sift up to push, and anything else stops below the hole.
 */
ENG_HOT void ready_up(struct eng_wheel *w, uint32_t i, struct roce_timer *t)
{
	uint32_t top = w->hole ? 2 : 0;	/* with a hole, 1 and 2 are roots */

	while (i > top) {
		uint32_t p = (i - 1) / 2;

		if (!t_less(t, w->ready[p]))
			break;
		w->ready[i] = w->ready[p];
		w->ready[i]->slot = i;
		i = p;
	}
	w->ready[i] = t;
	t->slot = i;
}

ENG_HOT void ready_down(struct eng_wheel *w, uint32_t i, struct roce_timer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= w->ready_len)
			break;
		if (c + 1 < w->ready_len && t_less(w->ready[c + 1], w->ready[c]))
			c++;
		if (!t_less(w->ready[c], t))
			break;
		w->ready[i] = w->ready[c];
		w->ready[i]->slot = i;
		i = c;
	}
	w->ready[i] = t;
	t->slot = i;
}

static int ready_grow(struct eng_wheel *w, uint32_t cap)
{
	struct roce_timer **r = realloc(w->ready, cap * sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	w->ready = r;
	w->ready_cap = cap;
	return 0;
}

ENG_HOT void ready_push(struct roce_engine *eng, struct roce_timer *t)
{
	struct eng_wheel *w = &eng->wheel;

	/* Amortised growth, never per packet: only past the most timers ever due in one tick. */
	if (roce_unlikely(w->ready_len == w->ready_cap) && ready_grow(w, w->ready_cap * 2) != 0) {
		ROCE_LOG(ERR, "%s: out of memory for %u due timers", eng->name, w->ready_cap * 2);
		abort();
	}
	ready_up(w, w->ready_len++, t);
}

/* The heap is empty: due timers are a sorted run again, from the middle of the array. */
ENG_HOT void heap_to_run(struct eng_wheel *w)
{
	w->sorted = true;
	w->head = w->ready_cap / 2;
}

/*
 * Take the root out (no hole open): the last timer, nearly always one of the latest, takes its
 * place. Bottom-up (Floyd): the empty root walks down to a leaf along the earlier child, one
 * compare a level, and the last timer sifts up from there, rarely more than a level; a sift
 * down would compare it with the earlier child at every level as well.
 */
ENG_HOT void ready_pop_root(struct eng_wheel *w)
{
	struct roce_timer **r = w->ready;
	uint32_t n = --w->ready_len, i = 0;
	struct roce_timer *last;

	if (n == 0) {
		heap_to_run(w);
		return;
	}
	last = r[n];
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && t_less(r[c + 1], r[c]))
			c++;
		r[i] = r[c];
		r[i]->slot = i;
		i = c;
	}
	ready_up(w, i, last);
}

/* ---- the sorted run: the due timers while there are few ---- */

/*
 * While at most ENG_W_RUN_MAX timers are due, @ready holds them sorted, earliest first, in
 * ready[head .. head + ready_len): popping is head++, and the run drifts up the array by one
 * slot an event until it meets an end and is moved back to the middle (every few hundred
 * events, a few dozen pointers).
 */
static __attribute__((noinline)) void run_recentre(struct eng_wheel *w)
{
	uint32_t to = (w->ready_cap - w->ready_len) / 2;

	memmove(&w->ready[to], &w->ready[w->head], w->ready_len * sizeof(w->ready[0]));
	w->head = to;
}

/*
 * Insert @p t in order, from the nearer end: the timers before it move one slot down, or
 * those after it one slot up, whichever side the middle timer says is shorter. A link's
 * re-arm lands a few frames behind the earliest or a few before the latest; a heap sifted it
 * from the root most of its height, two compares a level. The timers of a run do not hold
 * their index (ENG_W_IN_RUN; run_remove() searches): a move is a memmove of pointers, with no
 * store into each moved timer's line.
 */
ENG_HOT void run_insert(struct eng_wheel *w, struct roce_timer *t)
{
	struct roce_timer **r = w->ready;
	uint32_t n = w->ready_len, p;

	if (n == 0 || !t_less(t, r[w->head + n / 2])) {
		if (roce_unlikely(w->head + n == w->ready_cap))
			run_recentre(w);
		/* the later ones move up; stops at the middle timer at the latest */
		for (p = w->head + n; n != 0 && t_less(t, r[p - 1]); p--)
			r[p] = r[p - 1];
	} else {
		if (roce_unlikely(w->head == 0))
			run_recentre(w);
		/* the earlier ones move down; stops before the middle timer */
		for (p = --w->head; t_less(r[p + 1], t); p++)
			r[p] = r[p + 1];
	}
	r[p] = t;
	t->slot = ENG_W_IN_RUN;
	w->ready_len = n + 1;
}

/* Where @p t (in the run) is: the run is sorted and (when, seq) is unique. */
static uint32_t run_find(const struct eng_wheel *w, const struct roce_timer *t)
{
	uint32_t lo = w->head, hi = w->head + w->ready_len;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t_less(w->ready[mid], t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void run_remove(struct eng_wheel *w, struct roce_timer *t)
{
	struct roce_timer **r = w->ready;
	uint32_t p = run_find(w, t), end = w->head + --w->ready_len;

	if (p - w->head < end - p) {
		/* the earlier ones move up */
		memmove(&r[w->head + 1], &r[w->head], (p - w->head) * sizeof(*r));
		w->head++;
	} else {
		memmove(&r[p], &r[p + 1], (end - p) * sizeof(*r));
	}
}

/* The run is full: move it to the array's start, which makes it a heap (sorted is heap-ordered). */
static __attribute__((noinline)) void run_to_heap(struct eng_wheel *w)
{
	uint32_t i;

	memmove(&w->ready[0], &w->ready[w->head], w->ready_len * sizeof(w->ready[0]));
	for (i = 0; i < w->ready_len; i++)
		w->ready[i]->slot = i;
	w->head = 0;
	w->sorted = false;
}

/* The due timers are (or are about to become) too many for a run: into the heap. */
static __attribute__((noinline)) void heap_add(struct roce_engine *eng, struct roce_timer *t)
{
	struct eng_wheel *w = &eng->wheel;

	if (w->sorted)
		run_to_heap(w);
	if (w->hole) {
		w->hole = false;
		ready_down(w, 0, t);
	} else {
		ready_push(eng, t);
	}
}

/* Put @p t, due by the current tick, among the due timers. */
ENG_HOT void ready_add(struct roce_engine *eng, struct roce_timer *t)
{
	struct eng_wheel *w = &eng->wheel;

	if (roce_likely(w->sorted && w->ready_len < ENG_W_RUN_MAX))
		run_insert(w, t);
	else
		heap_add(eng, t);
}

/* Take the earliest out: the run's head, or the heap's root. */
ENG_HOT void ready_pop(struct eng_wheel *w)
{
	if (w->sorted) {
		w->head++;
		w->ready_len--;
	} else {
		ready_pop_root(w);
	}
}

/* Nothing was armed into the hole: close it as a pop would have. */
static inline void fill_hole(struct eng_wheel *w)
{
	w->hole = false;
	ready_pop_root(w);
}

static void ready_remove(struct eng_wheel *w, struct roce_timer *t)
{
	uint32_t i = t->slot;
	struct roce_timer *last;

	if (w->sorted) {
		run_remove(w, t);
		return;
	}
	last = w->ready[--w->ready_len];
	if (w->ready_len == 0)
		heap_to_run(w);	/* w->hole is false: the hole counts in ready_len */
	if (i == w->ready_len)
		return;
	if (t_less(last, t))
		ready_up(w, i, last);
	else
		ready_down(w, i, last);
}

/* ---- the wheel ---- */

ENG_HOT void wheel_insert(struct roce_engine *eng, struct roce_timer *t)
{
	struct eng_wheel *w = &eng->wheel;
	uint64_t tick = t->when >> ENG_W_GRAN, diff;
	unsigned int lvl, s;

	/* Due by the current tick (wall clock, or a peek advanced the wheel): exact order. */
	if (tick <= w->cur) {
		ready_add(eng, t);
		return;
	}
	diff = tick ^ w->cur;
	lvl = (63 - __builtin_clzll(diff)) / ENG_W_BITS;
	s = (tick >> (ENG_W_BITS * lvl)) & (ENG_W_SLOTS - 1);
	t->slot = ENG_W_IN_WHEEL | (lvl * ENG_W_SLOTS + s);
	t->prev = NULL;
	t->next = w->slot[lvl][s];
	if (t->next)
		t->next->prev = t;
	w->slot[lvl][s] = t;
	w->occ[lvl] |= 1ull << s;
}

static void wheel_remove(struct eng_wheel *w, struct roce_timer *t)
{
	unsigned int pos, lvl, s;

	if (!(t->slot & ENG_W_IN_WHEEL)) {
		ready_remove(w, t);
		return;
	}
	pos = t->slot & ~ENG_W_IN_WHEEL;
	lvl = pos / ENG_W_SLOTS;
	s = pos % ENG_W_SLOTS;
	if (t->prev)
		t->prev->next = t->next;
	else
		w->slot[lvl][s] = t->next;
	if (t->next)
		t->next->prev = t->prev;
	if (w->slot[lvl][s] == NULL)
		w->occ[lvl] &= ~(1ull << s);
}

/*
 * Append @p t to the run: it is due no earlier than every timer of the run but those of its
 * own sub-slot (wheel_advance()), so it moves down past a few at most.
 */
ENG_HOT void run_append(struct eng_wheel *w, struct roce_timer *t)
{
	struct roce_timer **r = w->ready;
	uint32_t p;

	if (roce_unlikely(w->head + w->ready_len == w->ready_cap))
		run_recentre(w);
	for (p = w->head + w->ready_len; p > w->head && t_less(t, r[p - 1]); p--)
		r[p] = r[p - 1];
	r[p] = t;
	t->slot = ENG_W_IN_RUN;
	w->ready_len++;
}

/*
 * Take the next non-empty slot of the lowest level that has one. A slot of few timers (the
 * common case: a link's next arrival a microsecond out lands on level 1 with a few dozen
 * others) goes to the due timers whole and the current tick moves to the slot's last tick:
 * one insert each, instead of a cascade through level 0 and a second advance. The slot's
 * timers are first spread over its 64 sub-slots (the ticks of the level below), chained
 * through their next pointers, and taken sub-slot by sub-slot: each is appended to the run
 * behind the earlier sub-slots' timers, which orders a slot by a bucket pass and a few
 * compares a timer, where inserting them as listed cost a walk through half the run each. A
 * crowded slot is re-inserted with the current tick at its earliest timer, so the heap stays
 * small: the earliest go to the due timers at once, the others land lower. (Stopping at the
 * slot's start instead would send the earliest down one level at a time.) Every other timer
 * is in a later slot of this level or in a higher level, so it stays due after the new
 * current tick.
 * @return false if the wheel is empty
 */
static bool wheel_advance(struct roce_engine *eng)
{
	struct eng_wheel *w = &eng->wheel;
	unsigned int lvl;

	for (lvl = 0; lvl < ENG_W_LEVELS; lvl++) {
		unsigned int idx = (w->cur >> (ENG_W_BITS * lvl)) & (ENG_W_SLOTS - 1);
		unsigned int sub = lvl == 0 ? 0 : ENG_W_BITS * (lvl - 1), s, n = 0;
		uint64_t mask = idx == ENG_W_SLOTS - 1 ? 0 : w->occ[lvl] & (~0ull << (idx + 1));
		struct roce_timer *t, *next, *bucket[ENG_W_SLOTS];
		uint64_t occ = 0, first = UINT64_MAX, b_mask;

		if (!mask)
			continue;
		s = __builtin_ctzll(mask);
		t = w->slot[lvl][s];
		w->slot[lvl][s] = NULL;
		w->occ[lvl] &= ~(1ull << s);
		for (; t; t = next, n++) {
			/* level 0: one tick, one bucket */
			unsigned int b = lvl == 0 ? 0 : ((t->when >> ENG_W_GRAN) >> sub) & (ENG_W_SLOTS - 1);

			next = t->next;
			if (!(occ & (1ull << b))) {
				occ |= 1ull << b;
				bucket[b] = NULL;
			}
			t->next = bucket[b];
			bucket[b] = t;
		}
		if (n <= ENG_W_DUMP) {
			/* the whole slot is due next: the current tick moves to its end */
			t = bucket[__builtin_ctzll(occ)];
			w->cur = (t->when >> ENG_W_GRAN) | ((1ull << (ENG_W_BITS * lvl)) - 1);
			for (b_mask = occ; b_mask; b_mask &= b_mask - 1)
				for (t = bucket[__builtin_ctzll(b_mask)]; t; t = next) {
					next = t->next;
					if (roce_likely(w->sorted && w->ready_len < ENG_W_RUN_MAX))
						run_append(&eng->wheel, t);
					else
						ready_add(eng, t);
				}
			return true;
		}
		for (t = bucket[__builtin_ctzll(occ)]; t; t = t->next)
			if ((t->when >> ENG_W_GRAN) < first)
				first = t->when >> ENG_W_GRAN;
		w->cur = first;
		for (b_mask = occ; b_mask; b_mask &= b_mask - 1)
			for (t = bucket[__builtin_ctzll(b_mask)]; t; t = next) {
				next = t->next;
				wheel_insert(eng, t);
			}
		return true;
	}
	return false;
}

int eng_timer_init(struct roce_engine *eng, uint32_t cap)
{
	struct eng_wheel *w = &eng->wheel;
	int ret;

	memset(w, 0, sizeof(*w));
	ret = ready_grow(w, cap > 4 * ENG_W_RUN_MAX ? cap : 4 * ENG_W_RUN_MAX);
	heap_to_run(w);
	return ret;
}

void eng_timer_fini(struct roce_engine *eng)
{
	struct eng_wheel *w = &eng->wheel;
	struct roce_timer *t;
	unsigned int lvl, s;
	uint32_t i;

	if (w->hole)
		fill_hole(w);
	for (i = 0; i < w->ready_len; i++) {
		struct roce_timer *t = w->ready[w->head + i];

		t->slot = ROCE_TIMER_IDLE;
		t->later = 0;
	}
	for (lvl = 0; lvl < ENG_W_LEVELS; lvl++)
		for (s = 0; s < ENG_W_SLOTS; s++)
			for (t = w->slot[lvl][s]; t; t = t->next) {
				t->slot = ROCE_TIMER_IDLE;
				t->later = 0;
			}
	free(w->ready);
	memset(w, 0, sizeof(*w));
}

/* The earliest timer is a postponed one: move it to its new expiry, unfired, and look again. */
static __attribute__((noinline)) struct roce_timer *peek_postponed(struct roce_engine *eng)
{
	struct eng_wheel *w = &eng->wheel;
	struct roce_timer *t = w->ready[w->head];

	ready_pop(w);
	t->when = t->later;
	t->seq = t->later_seq;
	t->later = 0;
	wheel_insert(eng, t);
	return eng_timer_peek(eng);
}

static inline struct roce_timer *peek(struct roce_engine *eng)
{
	struct eng_wheel *w = &eng->wheel;

	if (roce_unlikely(w->hole))	/* a callback looks at the queue */
		fill_hole(w);
	while (w->ready_len == 0)
		if (!wheel_advance(eng))
			return NULL;
	if (roce_unlikely(w->ready[w->head]->later != 0))
		return peek_postponed(eng);
	return w->ready[w->head];
}

static inline struct roce_timer *pop(struct roce_engine *eng)
{
	struct eng_wheel *w = &eng->wheel;
	struct roce_timer *top = w->ready[w->head];

	ready_pop(w);
	w->count--;
	top->slot = ROCE_TIMER_IDLE;
	return top;
}

struct roce_timer *eng_timer_peek(struct roce_engine *eng)
{
	return peek(eng);
}

struct roce_timer *eng_timer_pop(struct roce_engine *eng)
{
	return pop(eng);
}

/* The run loop's one call an event: peek and pop together. */
struct roce_timer *eng_timer_pop_due(struct roce_engine *eng, roce_time_t until)
{
	struct roce_timer *t = peek(eng);

	if (t == NULL || t->when > until)
		return NULL;
	return pop(eng);
}

void eng_timer_run(struct roce_engine *eng, roce_time_t until)
{
	struct eng_wheel *w = &eng->wheel;
	struct roce_timer *t;

	while (!eng->stop && (t = peek(eng)) != NULL && t->when <= until) {
		/* pop(); a heap leaves the root empty for the callback's first arm to fill */
		if (w->sorted) {
			w->head++;
			w->ready_len--;
			if (eng_lookahead(eng) && w->ready_len != 0)
				eng_link_lookahead(w->ready[w->head],
						   w->ready_len > 1 ? w->ready[w->head + 1] : NULL);
		} else {
			w->hole = true;
		}
		w->count--;
		t->slot = ROCE_TIMER_IDLE;
		/* now = t->when, fired_seq = t->seq: one 16-byte move */
		memcpy((char *)eng + offsetof(struct roce_engine, now),
		       (const char *)t + offsetof(struct roce_timer, when), 2 * sizeof(uint64_t));
		eng->stats.timers_fired++;
		t->fn(eng, t, t->arg);
	}
	if (w->hole)
		fill_hole(w);
	/* every timer due by @until fired: so did all of now's (now <= until: the run tiles time) */
	if (!eng->stop && until >= eng->now)
		eng->fired_seq = UINT64_MAX;
}

void roce_timer_init(struct roce_timer *t, roce_timer_fn fn, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	t->slot = ROCE_TIMER_IDLE;
}

void roce_timer_arm(struct roce_engine *eng, struct roce_timer *t, roce_time_t when)
{
	roce_time_t now = eng_now(eng);

	if (when < now)
		when = now;
	eng->stats.timers_armed++;
	if (roce_timer_armed(t)) {
		wheel_remove(&eng->wheel, t);
		t->later = 0;
	} else if (++eng->wheel.count > eng->stats.max_pending) {
		eng->stats.max_pending = eng->wheel.count;
	}
	t->when = when;
	t->seq = eng->seq++;
	wheel_insert(eng, t);
}

void eng_timer_arm_seq(struct roce_engine *eng, struct roce_timer *t, roce_time_t when,
		       uint64_t seq)
{
	eng->stats.timers_armed++;
	if (++eng->wheel.count > eng->stats.max_pending)
		eng->stats.max_pending = eng->wheel.count;
	t->when = when;
	t->seq = seq;
	wheel_insert(eng, t);
}

void roce_timer_postpone(struct roce_engine *eng, struct roce_timer *t, roce_time_t when)
{
	/*
	 * Taking the arm number now gives the timer the (when, seq) that roce_timer_arm() would
	 * have given it, so ties at @when fire in the same order; the stats count an arm too.
	 */
	if (roce_timer_armed(t) && when >= t->when && when > eng_now(eng)) {
		eng->stats.timers_armed++;
		t->later = when;
		t->later_seq = eng->seq++;
		return;
	}
	roce_timer_arm(eng, t, when);
}

void roce_timer_cancel(struct roce_engine *eng, struct roce_timer *t)
{
	if (!roce_timer_armed(t))
		return;
	wheel_remove(&eng->wheel, t);
	eng->wheel.count--;
	t->slot = ROCE_TIMER_IDLE;
	t->later = 0;
}
