/* The engine's timer queue: a 4-ary min-heap keyed by (expiry, arm sequence), chosen by bench_engine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eng_private.h"

/*
 * Why a 4-ary heap with the expiry beside the pointer: bench/bench_engine measured it against
 * a binary heap of pointers and a hierarchical timing wheel (docs/engine.md has the figures).
 * The four children of a node share one cache line, so a sift touches half the lines a binary
 * heap does, and comparing keys in place avoids a cache miss per level on the timers themselves.
 */
#define HEAP_D 4		/* children per node */
#define HEAP_ALIGN_PAD 3	/* entries before heap[1] so each child group starts a cache line */

static inline bool ent_less(const struct eng_heap_ent *a, const struct eng_heap_ent *b)
{
	return a->when < b->when || (a->when == b->when && a->t->seq < b->t->seq);
}

static inline void heap_put(struct roce_engine *eng, uint32_t i, struct eng_heap_ent e)
{
	eng->heap[i] = e;
	e.t->slot = i;
}

static void sift_up(struct roce_engine *eng, uint32_t i, struct eng_heap_ent e)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / HEAP_D;

		if (!ent_less(&e, &eng->heap[parent]))
			break;
		heap_put(eng, i, eng->heap[parent]);
		i = parent;
	}
	heap_put(eng, i, e);
}

static void sift_down(struct roce_engine *eng, uint32_t i, struct eng_heap_ent e)
{
	const uint32_t len = eng->heap_len;

	for (;;) {
		uint32_t first = i * HEAP_D + 1, best, c, end;

		if (first >= len)
			break;
		end = ROCE_MIN(first + HEAP_D, len);
		best = first;
		for (c = first + 1; c < end; c++)
			if (ent_less(&eng->heap[c], &eng->heap[best]))
				best = c;
		if (!ent_less(&eng->heap[best], &e))
			break;
		heap_put(eng, i, eng->heap[best]);
		i = best;
	}
	heap_put(eng, i, e);
}

static int heap_grow(struct roce_engine *eng, uint32_t cap)
{
	struct eng_heap_ent *mem;

	if (posix_memalign((void **)&mem, 64, (size_t)(cap + HEAP_ALIGN_PAD) * sizeof(*mem)) != 0)
		return -ENOMEM;
	if (eng->heap_len)
		memcpy(mem + HEAP_ALIGN_PAD, eng->heap, eng->heap_len * sizeof(*mem));
	free(eng->heap_mem);
	eng->heap_mem = mem;
	eng->heap = mem + HEAP_ALIGN_PAD;
	eng->heap_cap = cap;
	return 0;
}

int eng_timer_init(struct roce_engine *eng, uint32_t cap)
{
	eng->heap_mem = NULL;
	eng->heap = NULL;
	eng->heap_len = 0;
	return heap_grow(eng, cap ? cap : 1024);
}

void eng_timer_fini(struct roce_engine *eng)
{
	uint32_t i;

	for (i = 0; i < eng->heap_len; i++)
		eng->heap[i].t->slot = ROCE_TIMER_IDLE;
	eng->heap_len = 0;
	free(eng->heap_mem);
	eng->heap_mem = NULL;
	eng->heap = NULL;
}

struct roce_timer *eng_timer_pop(struct roce_engine *eng)
{
	struct roce_timer *top = eng->heap[0].t;

	eng->heap_len--;
	if (eng->heap_len)
		sift_down(eng, 0, eng->heap[eng->heap_len]);
	top->slot = ROCE_TIMER_IDLE;
	return top;
}

void roce_timer_init(struct roce_timer *t, roce_timer_fn fn, void *arg)
{
	t->when = 0;
	t->seq = 0;
	t->fn = fn;
	t->arg = arg;
	t->slot = ROCE_TIMER_IDLE;
}

void roce_timer_arm(struct roce_engine *eng, struct roce_timer *t, roce_time_t when)
{
	roce_time_t now = roce_engine_now(eng);
	struct eng_heap_ent e;

	if (when < now)
		when = now;
	eng->stats.timers_armed++;
	if (roce_timer_armed(t)) {
		roce_time_t old = t->when;

		/* A new seq makes the key larger at equal time: moving later (the common case: a
		 * retransmit timer pushed back) sifts down, earlier sifts up. */
		t->when = when;
		t->seq = eng->seq++;
		e = (struct eng_heap_ent){ .when = when, .t = t };
		if (when >= old)
			sift_down(eng, t->slot, e);
		else
			sift_up(eng, t->slot, e);
		return;
	}
	if (roce_unlikely(eng->heap_len == eng->heap_cap)) {
		/* Amortised growth, never per packet: the heap only grows past its largest size. */
		if (heap_grow(eng, eng->heap_cap * 2) != 0) {
			ROCE_LOG(ERR, "%s: out of memory for %u timers", eng->name, eng->heap_cap * 2);
			abort();
		}
	}
	t->when = when;
	t->seq = eng->seq++;
	e = (struct eng_heap_ent){ .when = when, .t = t };
	sift_up(eng, eng->heap_len++, e);
	if (eng->heap_len > eng->stats.max_pending)
		eng->stats.max_pending = eng->heap_len;
}

void roce_timer_cancel(struct roce_engine *eng, struct roce_timer *t)
{
	uint32_t i = t->slot;
	struct eng_heap_ent last;

	if (i == ROCE_TIMER_IDLE)
		return;
	t->slot = ROCE_TIMER_IDLE;
	eng->heap_len--;
	if (i == eng->heap_len)
		return;
	last = eng->heap[eng->heap_len];
	if (ent_less(&last, &eng->heap[i]))
		sift_up(eng, i, last);
	else
		sift_down(eng, i, last);
}
