/* lib/engine internals shared by eng_core.c, eng_timer.c and eng_link.c; apps never include it. */
#ifndef ENG_PRIVATE_H
#define ENG_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_engine.h"

#define ENG_MAX_POLLERS 16	/* roce_engine_add_poller() slots */
#define ENG_NAME_LEN 32		/* engine name, for logs */

/*
 * The timer queue: a hierarchical timing wheel over ps time. Ticks are 2^ENG_W_GRAN ps; level L
 * has 64 slots of 64^L ticks each. A timer due after the current tick sits, unsorted, in the slot
 * of the highest 6-bit group in which its tick differs from the current one; timers due at or
 * before the current tick sit in @ready in exact (when, seq) order, so the wheel's coarse slots
 * never change the firing order: a sorted run while at most ENG_W_RUN_MAX are due, else a binary
 * heap (until it empties).
 */
#define ENG_W_GRAN 10			/* log2 ps per tick: 1.024 ns */
#define ENG_W_BITS 6			/* log2 slots per level */
#define ENG_W_SLOTS (1u << ENG_W_BITS)	/* slots per level */
#define ENG_W_LEVELS 9			/* 9 x 6 + 10 = 64 bits of time */
#define ENG_W_DUMP 128			/* a slot of at most this many timers is due whole
					 * (16 32 64 128 256: incast 1 940 1 884 1 884 1 884 1 884,
					 * leafspine 2 134 2 123 2 111 2 103 2 112 Ir a hop) */
#define ENG_W_RUN_MAX 256		/* most due timers kept as a sorted run (32 64 128 256
					 * 512: leafspine 2 172 2 160 2 149 2 123 2 123 Ir a hop,
					 * with ENG_W_DUMP 32; incast 1 884 for all) */
#define ENG_W_IN_WHEEL 0x80000000u	/* timer->slot flag: in a wheel slot (level * 64 + slot) */
#define ENG_W_IN_RUN 0x40000000u	/* timer->slot: in the sorted run (a heap: its index) */

struct eng_wheel {
	uint64_t cur;					/* current tick */
	struct roce_timer *slot[ENG_W_LEVELS][ENG_W_SLOTS]; /* unsorted doubly-linked lists */
	uint64_t occ[ENG_W_LEVELS];			/* bit s: slot s of the level is non-empty */
	struct roce_timer **ready;	/* timers due by the current tick: run or heap */
	uint32_t ready_len;				/* timers in @ready */
	uint32_t ready_cap;				/* entries allocated */
	uint32_t head;		/* run: ready[head] is the earliest; heap: 0 */
	uint32_t count;					/* timers armed, wheel and ready */
	bool sorted;		/* @ready is a sorted run, not a heap */
	bool hole;		/* heap: ready[0] is empty: the timer being fired left it */
};

/* A wall-clock poller: a DPDK port's rx/tx burst, say. */
struct eng_poller {
	roce_poll_fn fn;	/* called every loop iteration */
	void *arg;		/* passed to @fn */
};

struct roce_engine {
	enum roce_clock clock;		/* virtual or wall */
	roce_time_t now;		/* virtual clock: time of the event being dispatched */
	uint64_t fired_seq;		/* seq of the event firing or last fired at @now; all of
					 * @now's fired: UINT64_MAX (eng_passed). Beside @now:
					 * both are copied from the timer at once (eng_timer_run) */
	uint64_t seq;			/* arm counter: tie-break at equal expiry */
	bool stop;			/* roce_engine_stop() was called during run */
	uint32_t nlinks;		/* links made and not destroyed (eng_lookahead()) */

	struct eng_wheel wheel;		/* armed timers */

	uint64_t rng[4];		/* xoshiro256** state */

	uint64_t tsc_start;		/* wall clock: TSC at creation */
	uint64_t tsc_ps_q32;		/* wall clock: ps a TSC cycle, 32.32 fixed point */

	struct eng_poller pollers[ENG_MAX_POLLERS]; /* wall-clock pollers */
	unsigned int nb_pollers;	/* entries used in @pollers */

	struct rte_mempool *pool;	/* frames of this engine */
	struct rte_mempool *seg_pool;	/* roce_engine_zc_seg(): made on first use */
	struct rte_mbuf *zc_trailer[4];	/* ... the frames' shared trailers, by pad */
	bool seg_pool_failed;		/* ... and they could not be */
	struct roce_engine_stats stats;	/* engine-wide counters */
	char name[ENG_NAME_LEN];	/* conf.name, for logs */
};

/* roce_engine_now() without the call in virtual time, where every event asks for it. */
static inline roce_time_t eng_now(const struct roce_engine *eng)
{
	return eng->clock == ROCE_CLOCK_VIRTUAL ? eng->now : roce_engine_now(eng);
}

/*
 * Virtual clock: has an event at (@p when, @p seq) fired already (or would it have, were it
 * armed)? The events of an instant fire in seq order, and a run that ends without a stop has
 * fired every event of its last instant.
 */
static inline bool eng_passed(const struct roce_engine *eng, roce_time_t when, uint64_t seq)
{
	return when < eng->now || (when == eng->now && seq <= eng->fired_seq);
}

/** Take an arm number now for a timer that may be armed later (eng_timer_arm_seq). */
static inline uint64_t eng_timer_reserve(struct roce_engine *eng)
{
	return eng->seq++;
}

/**
 * Arm idle @p t at (@p when, @p seq), @p seq from eng_timer_reserve(): it fires where a timer
 * armed when the number was taken would have. @p when must not have passed (eng_passed).
 */
void eng_timer_arm_seq(struct roce_engine *eng, struct roce_timer *t, roce_time_t when,
		       uint64_t seq);

/** Prepare the timer queue with room for @p cap timers due at once. @return 0 or -ENOMEM */
int eng_timer_init(struct roce_engine *eng, uint32_t cap);

/** Free the queue; armed timers are forgotten (marked idle). */
void eng_timer_fini(struct roce_engine *eng);

/** Earliest armed timer, or NULL; may advance the wheel (never past that timer). */
struct roce_timer *eng_timer_peek(struct roce_engine *eng);

/** Remove the earliest timer (eng_timer_peek() returned it) and mark it idle. @return it */
struct roce_timer *eng_timer_pop(struct roce_engine *eng);

/** Remove the earliest timer and mark it idle if it is due by @p until. @return it, or NULL */
struct roce_timer *eng_timer_pop_due(struct roce_engine *eng, roce_time_t until);

/**
 * Virtual clock: fire every timer due by @p until in (when, seq) order, setting now to each
 * one's time, until none is left or roce_engine_stop().
 */
void eng_timer_run(struct roce_engine *eng, roce_time_t until);

/*
 * Links from which the run loop looks ahead. Below, a fabric's state stays in the cache and
 * the look ahead's branches (what kind of timer is next) cost more than the misses it hides:
 * an 8:1 incast (9 links) ran 5% slower with it, the 128-host leaf-spine (192) 9-12% faster.
 */
#define ENG_LOOKAHEAD_LINKS 32

static inline bool eng_lookahead(const struct roce_engine *eng)
{
	return eng->nlinks >= ENG_LOOKAHEAD_LINKS;
}

/**
 * @p next fires next, @p after (or NULL) after it: fetch into the cache what their callbacks
 * will read, if they are a link's (eng_link.c).
 */
void eng_link_lookahead(const struct roce_timer *next, const struct roce_timer *after);

#endif /* ENG_PRIVATE_H */
