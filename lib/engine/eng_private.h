/* lib/engine internals shared by eng_core.c, eng_timer.c and eng_link.c; apps never include it. */
#ifndef ENG_PRIVATE_H
#define ENG_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_engine.h"

#define ENG_MAX_POLLERS 16	/* roce_engine_add_poller() slots */
#define ENG_NAME_LEN 32		/* engine name, for logs */

/*
 * One entry of the 4-ary timer heap: the expiry is copied beside the pointer so a sift
 * compares keys without touching the timers (4 children = one 64-byte cache line).
 */
struct eng_heap_ent {
	roce_time_t when;	/* copy of t->when */
	struct roce_timer *t;	/* the armed timer; t->slot is this entry's index */
};

/* A wall-clock poller: a DPDK port's rx/tx burst, say. */
struct eng_poller {
	roce_poll_fn fn;	/* called every loop iteration */
	void *arg;		/* passed to @fn */
};

struct roce_engine {
	enum roce_clock clock;		/* virtual or wall */
	roce_time_t now;		/* virtual clock: time of the event being dispatched */
	uint64_t seq;			/* arm counter: tie-break at equal expiry */
	bool stop;			/* roce_engine_stop() was called during run */

	struct eng_heap_ent *heap_mem;	/* allocation behind @heap (over-allocated to align) */
	struct eng_heap_ent *heap;	/* 4-ary min-heap by (when, seq), root at index 0 */
	uint32_t heap_len;		/* timers armed */
	uint32_t heap_cap;		/* entries allocated */

	uint64_t rng[4];		/* xoshiro256** state */

	uint64_t tsc_start;		/* wall clock: TSC at creation */
	uint64_t tsc_hz;		/* wall clock: TSC frequency */

	struct eng_poller pollers[ENG_MAX_POLLERS]; /* wall-clock pollers */
	unsigned int nb_pollers;	/* entries used in @pollers */

	struct rte_mempool *pool;	/* frames of this engine */
	struct roce_engine_stats stats;	/* engine-wide counters */
	char name[ENG_NAME_LEN];	/* conf.name, for logs */
};

/** Allocate the timer heap with room for @p cap timers. @return 0 or -ENOMEM */
int eng_timer_init(struct roce_engine *eng, uint32_t cap);

/** Free the heap; armed timers are forgotten (marked idle). */
void eng_timer_fini(struct roce_engine *eng);

/** Earliest armed timer, or NULL. */
static inline struct roce_timer *eng_timer_peek(const struct roce_engine *eng)
{
	return eng->heap_len ? eng->heap[0].t : NULL;
}

/** Remove the earliest timer (it must exist) and mark it idle. @return it */
struct roce_timer *eng_timer_pop(struct roce_engine *eng);

#endif /* ENG_PRIVATE_H */
