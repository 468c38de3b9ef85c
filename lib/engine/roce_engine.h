/* lib/engine: the one engine under transport and fabric: a clock, timers, mbufs, a seeded RNG, links. */
#ifndef ROCE_ENGINE_H
#define ROCE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_common.h"

struct rte_mbuf;
struct rte_mempool;
struct roce_engine;
struct roce_pcap_writer;

/*
 * Time in picoseconds: one bit at 100 Gb/s is 10 ps, so serialisation times add up without
 * rounding drift; 2^64 ps is 213 days.
 */
typedef uint64_t roce_time_t;
#define ROCE_PS 1ull
#define ROCE_NS 1000ull
#define ROCE_US (1000ull * ROCE_NS)
#define ROCE_MS (1000ull * ROCE_US)
#define ROCE_SEC (1000ull * ROCE_MS)
#define ROCE_TIME_NEVER UINT64_MAX

/* ---- timers ---- */

struct roce_timer;
typedef void (*roce_timer_fn)(struct roce_engine *eng, struct roce_timer *t, void *arg);

/*
 * A timer lives inside the object it times (a QP's retransmit timer, a link's next arrival):
 * objects re-arm their one timer rather than queueing an event per packet.
 */
struct roce_timer {
	roce_time_t when;	/* expiry, while armed */
	uint64_t seq;		/* arm order: ties at equal @when fire in arm order */
	roce_timer_fn fn;	/* called once at expiry */
	void *arg;		/* passed to @fn */
	struct roce_timer *next; /* engine's: timing-wheel slot list */
	struct roce_timer *prev; /* engine's: timing-wheel slot list */
	uint32_t slot;		/* engine's position while armed, ROCE_TIMER_IDLE otherwise */
	roce_time_t later;	/* engine's: postponed expiry, 0 if none (roce_timer_postpone) */
	uint64_t later_seq;	/* engine's: arm order of the postponed expiry */
};
#define ROCE_TIMER_IDLE UINT32_MAX

/** Prepare a timer; it starts idle. */
void roce_timer_init(struct roce_timer *t, roce_timer_fn fn, void *arg);

/** Arm (or move) @p t to fire at @p when (clamped to now if in the past). */
void roce_timer_arm(struct roce_engine *eng, struct roce_timer *t, roce_time_t when);

/**
 * Move @p t to fire at @p when, exactly as roce_timer_arm() would (same firing order among
 * timers due at @p when), but cheaply when @p t is armed for no later than @p when: the timer
 * stays where it is and the engine moves it, without firing it, when its old expiry comes.
 * For deadlines pushed back on every packet (a QP's ACK timeout).
 */
void roce_timer_postpone(struct roce_engine *eng, struct roce_timer *t, roce_time_t when);

/** Disarm @p t; idle timers are left alone. */
void roce_timer_cancel(struct roce_engine *eng, struct roce_timer *t);

static inline bool roce_timer_armed(const struct roce_timer *t)
{
	return t->slot != ROCE_TIMER_IDLE;
}

/** When @p t fires, a postponed expiry included; ROCE_TIME_NEVER while it is idle. */
static inline roce_time_t roce_timer_expiry(const struct roce_timer *t)
{
	if (!roce_timer_armed(t))
		return ROCE_TIME_NEVER;
	return t->later != 0 ? t->later : t->when;
}

/* ---- the engine ---- */

enum roce_clock {
	ROCE_CLOCK_VIRTUAL,	/* jump from event to event: deterministic, as fast as the CPU */
	ROCE_CLOCK_WALL,	/* follow the TSC; run pollers (DPDK ports) between timers */
};

struct roce_engine_conf {
	enum roce_clock clock;	/* virtual or wall-clock time */
	uint64_t seed;		/* the engine's one RNG; same seed, same run */
	uint32_t nb_mbufs;	/* mempool size; 0: 16384 */
	uint16_t mbuf_data;	/* bytes of data room per mbuf; 0: 9216 + headroom */
	const char *name;	/* for the mempool and logs; NULL: "rocelab" */
};

/**
 * Create an engine and its mbuf pool. Needs roce_eal_init() first.
 * @return the engine, or NULL with errno set (ENOMEM, EINVAL)
 */
struct roce_engine *roce_engine_create(const struct roce_engine_conf *conf);

/** Free the engine and its pool; armed timers are dropped; NULL is a no-op. */
void roce_engine_destroy(struct roce_engine *eng);

/** Current time: virtual, or ps since the engine was created (wall clock). */
roce_time_t roce_engine_now(const struct roce_engine *eng);

/**
 * Run until @p until (absolute, inclusive: a timer due at @p until fires), until no timer is
 * armed, or until roce_engine_stop().
 * Virtual clock: pops the earliest timer, sets now to its time, fires it; ties fire in arm order.
 * On return now is @p until unless the run was stopped or @p until is ROCE_TIME_NEVER (then it
 * is the last event's time); it never moves back.
 * Wall clock: fires due timers and calls the pollers in a loop; returns at @p until, on stop,
 * or when no timer is armed and no poller is registered.
 * @return the number of timers fired
 */
uint64_t roce_engine_run(struct roce_engine *eng, roce_time_t until);

/**
 * Time of the earliest armed timer, or ROCE_TIME_NEVER. roce_engine_run(eng, next) then fires
 * exactly the events of that instant: a loop can act between events (e.g. poll a CQ).
 */
roce_time_t roce_engine_next(struct roce_engine *eng);

/** Make roce_engine_run() return after the current event. */
void roce_engine_stop(struct roce_engine *eng);

typedef void (*roce_poll_fn)(struct roce_engine *eng, void *arg);

/** Register a function called on every loop iteration in wall-clock mode. @return 0, -ENOSPC */
int roce_engine_add_poller(struct roce_engine *eng, roce_poll_fn fn, void *arg);

/** Unregister the poller added with @p fn and @p arg (a port being closed). @return 0, -ENOENT */
int roce_engine_remove_poller(struct roce_engine *eng, roce_poll_fn fn, void *arg);

/** Next 64 random bits of the engine's RNG (xoshiro256**, seeded from conf.seed). */
uint64_t roce_engine_rand(struct roce_engine *eng);

/** Uniform double in [0, 1). */
double roce_engine_rand01(struct roce_engine *eng);

/** The engine's mbuf pool. */
struct rte_mempool *roce_engine_pool(struct roce_engine *eng);

/** Allocate an empty mbuf, or NULL (counted) when the pool is empty. */
struct rte_mbuf *roce_engine_mbuf(struct roce_engine *eng);

/**
 * The parts of a frame that carries its payload by reference (ROCE_ACCESS_ZERO_COPY,
 * roce_wire_tmpl_build_mbuf_zc()): an empty mbuf for the payload, from a pool of small ones
 * apart from the frames' own, and in @p trailer the engine's four shared trailers, by pad.
 * @return the mbuf; NULL, and nothing allocated, if the engine runs on the wall clock (its
 *         frames may leave the process) or the pool is empty: the caller then copies the payload
 */
struct rte_mbuf *roce_engine_zc_seg(struct roce_engine *eng, struct rte_mbuf *const **trailer);

/**
 * Make the pool of roce_engine_zc_seg() now (registering an MR with ROCE_ACCESS_ZERO_COPY
 * does), not in the middle of a run. @return whether the engine carries payloads by reference
 */
bool roce_engine_zc_prepare(struct roce_engine *eng);

/* Engine-wide counters. */
struct roce_engine_stats {
	uint64_t timers_fired;	/* events dispatched */
	uint64_t timers_armed;	/* arm calls */
	uint64_t mbuf_alloc_fail; /* pool empty */
	uint64_t zc_frames;	/* frames given segments to carry a payload by reference */
	uint32_t max_pending;	/* most timers armed at once */
};

void roce_engine_stats(const struct roce_engine *eng, struct roce_engine_stats *st);

/* ---- links ---- */

/*
 * An endpoint of a link: a NIC port or a switch port. The link pulls frames from the sending
 * endpoint when its wire is idle (so queues live in the endpoint, where PFC and schedulers act)
 * and hands arriving frames to the receiving endpoint. The endpoint owns every mbuf it pulls
 * out of, and every mbuf handed to it.
 */
struct roce_link_end {
	void *owner;		/* the port: passed to pull and rx */
	/** Next frame to send, or NULL if there is nothing to send now. */
	struct rte_mbuf *(*pull)(void *owner);
	/** A frame arrived; the callee owns @p m. */
	void (*rx)(void *owner, struct rte_mbuf *m);
	/**
	 * Optional (NULL: none), asked after each frame pulled, with the time @p end at which
	 * that frame leaves the wire: true if a pull at @p end would return NULL and change
	 * nothing (or nothing but what the endpoint has done now instead, such as arming a timer
	 * for later than @p end), and the endpoint will kick the link before that changes. The
	 * link then leaves out the end-of-frame event of a frame that nothing waits behind
	 * (virtual clock, unimpaired direction); the order of events stays as if it were there.
	 */
	bool (*quiet)(void *owner, roce_time_t end);
	/**
	 * True if rx() takes a frame whose ICRC is still to be written (roce_wire_icrc_partial)
	 * and neither reads that ICRC nor lets the frame out of the process but through a link:
	 * an emulated NIC or switch port. The link writes it for any other end.
	 */
	bool icrc_partial;
	/**
	 * Optional (NULL: none): @p m is the next frame to arrive, an event or two from now. Fetch
	 * into the cache what rx() will read for it (rte_prefetch0); change nothing.
	 */
	void (*peek)(void *owner, const struct rte_mbuf *m);
};

/* Impairments of one direction of a link; all off when zeroed. */
struct roce_link_impair {
	double loss;		/* probability a frame is dropped */
	double corrupt;		/* probability one random bit of a frame is flipped */
	double dup;		/* probability a frame is delivered twice */
	double reorder;		/* probability a frame is held back behind the next one */
	roce_time_t jitter;	/* extra delay, uniform in [0, jitter] (can reorder) */
	uint64_t drop_nth;	/* drop the Nth frame sent after roce_link_set_impair() (1-based); 0: off */
	bool drop_psn_on;	/* arm the drop_psn rule (a zeroed struct must mean "off") */
	uint32_t drop_psn;	/* drop the first RoCE request (ROCE_F_REQ) with this PSN, once */
	roce_time_t drop_acks_from; /* drop every ACK/NAK (ROCE_F_ACK) leaving in [from, until) */
	roce_time_t drop_acks_until; /* end of that window, exclusive */
};

/* Counters of one direction. */
struct roce_link_stats {
	uint64_t tx_frames;	/* frames put on the wire */
	uint64_t tx_bytes;	/* their bytes (no preamble/IFG/FCS) */
	uint64_t rx_frames;	/* delivered to the far end */
	uint64_t dropped;	/* lost by impairment (any rule), or for want of an mbuf */
	uint64_t corrupted;	/* bit flipped */
	uint64_t duplicated;	/* delivered twice */
	uint64_t reordered;	/* delivered after a later frame */
	uint64_t down_drops;	/* sent while the link was down, or in flight when it went down */
	uint64_t mtu_drops;	/* refused before the wire: L3 length above the MTU (not in tx_frames) */
	uint64_t in_flight;	/* now: serialised or propagating, not yet delivered or dropped */
	roce_time_t busy;	/* time spent serialising */
};
/*
 * Conservation, per direction, at any time:
 * tx_frames + duplicated == rx_frames + dropped + down_drops + in_flight.
 */

struct roce_link_conf {
	uint64_t rate_bps;	/* line rate, bits per second; must be > 0 */
	roce_time_t delay;	/* propagation delay */
	uint32_t mtu;		/* largest L3 packet; bigger frames are dropped and counted; 0: no limit */
};

struct roce_link;

/**
 * Create a full-duplex link between @p a and @p b (copied). Direction 0 sends a→b, 1 sends b→a.
 * A frame pulled at time T leaves the wire at T + roce_wire_bytes(len) * 8 / rate (in ps,
 * rounded up) and arrives at that time + delay (+ jitter). The link starts up, with no
 * impairments and no tap. Destroy links before their engine.
 * @return the link, or NULL with errno set (EINVAL: rate 0 or an end without pull/rx; ENOMEM)
 */
struct roce_link *roce_link_create(struct roce_engine *eng, const struct roce_link_conf *conf,
				   const struct roce_link_end *a, const struct roce_link_end *b);

/** Free; frames in flight are freed. NULL is a no-op. */
void roce_link_destroy(struct roce_link *link);

/** Fetch into the cache what a roce_link_kick() of @p dir reads (rte_prefetch0). */
void roce_link_prefetch_kick(const struct roce_link *link, int dir);

/** Tell direction @p dir that its sender has frames: pull now if the wire is idle. */
void roce_link_kick(struct roce_link *link, int dir);

/**
 * Set one direction's impairments (copied; NULL clears them). Restarts the drop_nth count and
 * re-arms the drop_psn rule. Random draws come from the engine's RNG in a fixed order (loss,
 * corruption, jitter, duplication, reordering), each only when its probability is non-zero.
 * @return 0; -EINVAL (bad @p dir, a probability outside [0, 1])
 */
int roce_link_set_impair(struct roce_link *link, int dir, const struct roce_link_impair *imp);

/**
 * Change the line rate (both directions) from the next frame on, e.g. a 100G link degrading to
 * 40G; a frame on the wire finishes at the old rate.
 * @return 0; -EINVAL (rate 0)
 */
int roce_link_set_rate(struct roce_link *link, uint64_t rate_bps);

/**
 * Bring the link down or up. Down: frames in flight are lost, and frames the senders keep
 * sending are serialised and dropped (down_drops). Up: both directions pull again.
 */
void roce_link_set_up(struct roce_link *link, bool up);

/**
 * Tap both directions into @p w (borrowed; NULL removes the tap): every frame the link pulls,
 * as it starts leaving the sender, timestamped with the engine's time in ns, before any
 * impairment touches it.
 */
void roce_link_set_tap(struct roce_link *link, struct roce_pcap_writer *w);

/** Copy direction @p dir's counters (0 or 1) into @p st. */
void roce_link_stats(const struct roce_link *link, int dir, struct roce_link_stats *st);

/** The line rate now, bits per second (after any roce_link_set_rate()). */
uint64_t roce_link_rate(const struct roce_link *link);

/** The propagation delay. */
roce_time_t roce_link_delay(const struct roce_link *link);

/** The largest L3 packet the link carries; 0: no limit. */
uint32_t roce_link_mtu(const struct roce_link *link);

/**
 * The largest frame the link carries, bytes without FCS: its MTU plus an Ethernet header and
 * one 802.1Q tag, or a 9234-byte jumbo frame (9216 L3) if it has no MTU.
 */
uint32_t roce_link_max_frame(const struct roce_link *link);

/**
 * PFC headroom a receiver of @p link needs per lossless priority, bytes (docs/fabric.md,
 * "Headroom"): what can still arrive after it decides to send XOFF, from the link's rate now,
 * its delay and its largest frame, in wire bytes. The switch sizes a port's headroom with it
 * and a NIC its XOFF point below its receive buffer, so both pause for the same link alike.
 */
uint64_t roce_link_pfc_headroom(const struct roce_link *link);

/** Bytes a frame of @p len occupies on the wire: preamble+SFD 8, FCS 4, inter-frame gap 12. */
static inline uint32_t roce_wire_bytes(uint32_t len)
{
	return (len < 60 ? 60 : len) + 24;
}

#endif /* ROCE_ENGINE_H */
