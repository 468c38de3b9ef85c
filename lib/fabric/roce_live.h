/* lib/fabric: the fabric switch applied between DPDK ports in real time (rocelab switch). */
#ifndef ROCE_LIVE_H
#define ROCE_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_switch.h"

#define ROCE_LIVE_MAX_PORTS 16		/* --port given at most this often */
#define ROCE_LIVE_MAX_DROP_PSN 64	/* --drop-psn values */
#define ROCE_LIVE_MAX_ROUTES 64		/* static routes */

/*
 * A live switch: each DPDK port (roce_port in bridge mode) feeds one port of a struct
 * roce_switch through an unshaped model link, and the switch sends back through a second link
 * running at the egress rate, so queues, the shared buffer, PFC (real 802.1Qbb frames out of
 * the port, received ones honoured) and ECN act on real traffic with the engine's wall clock.
 * IP frames whose destination was learned (source addresses seen on a port) or routed
 * statically go through the switch; everything else (ARP, neighbour discovery, broadcast and
 * multicast, unknown destinations) is flooded to the other ports at once, as a learning bridge
 * floods, so the endpoints' own address resolution and TCP exchanges cross it unchanged.
 */
struct roce_live_switch;

struct roce_live_conf {
	const char *const *devargs;	/* one per port, what rte_dev_probe() takes */
	int nports;			/* 2..ROCE_LIVE_MAX_PORTS */
	uint64_t rate_bps;		/* egress rate of every port; 0: each port's link speed */
	struct roce_switch_conf sw;	/* buffer, PFC, ECN, priorities (roce_live_defaults()) */
	double loss;			/* probability a RoCE frame arriving is dropped */
	const uint32_t *drop_psn;	/* drop the first RoCE request with each of these PSNs */
	int ndrop_psn;			/* entries in @drop_psn, up to ROCE_LIVE_MAX_DROP_PSN */
	const char *capture;		/* pcap of every port's RX and TX, or NULL */
	uint32_t snaplen;		/* bytes of each frame it keeps; 0: all */
	uint64_t seed;			/* the engine's RNG (loss, ECN marking) */
};

/* Counters of one live port, beyond the switch's own (struct roce_switch_pstats/qstats). */
struct roce_live_pstats {
	uint64_t rx_frames;		/* frames received from the wire */
	uint64_t to_switch;		/* of those, handed to the switch (IP with a known route, PFC) */
	uint64_t flooded;		/* of those, copied to every other port */
	uint64_t filtered;		/* of those, for a MAC learned on this same port: dropped */
	uint64_t tx_flood;		/* flooded frames sent out of this port */
	uint64_t tx_bridged;		/* frames to a learned MAC behind this port, not routed */
	uint64_t learned_ips;		/* source addresses learned on this port (routes added) */
	uint64_t moved_ips;		/* addresses learned elsewhere first, now on this port */
	uint64_t learn_full;		/* a source MAC or address that found its table full */
	uint64_t csum_completed;	/* TCP/UDP checksums completed (offloaded by the sender) */
	uint64_t drop_psn;		/* RoCE requests dropped by --drop-psn */
	uint64_t drop_loss;		/* RoCE frames dropped by --loss */
	uint64_t drop_nombuf;		/* flood copies that found no mbuf */
};

/**
 * The switch of a live fabric: roce_switch_defaults() with a 12 MiB buffer and 2 MiB of
 * headroom per (port, lossless priority), named "sw".
 */
void roce_live_defaults(struct roce_switch_conf *conf);

/**
 * Apply "key=value" settings with the keys of a scenario's [switch] and [priority.N] sections
 * (docs/scenarios.md): "buffer=12M", "pfc=static", "xoff=256K", "priority.0.lossless=yes",
 * "priority.3.kmin=100K"; a "switch." prefix is accepted too.
 * @param err  receives one line naming the setting and what was expected
 * @return 0; -EINVAL
 */
int roce_live_set(struct roce_switch_conf *conf, const char *const *set, int nset, char *err,
		  size_t errlen);

/**
 * Open every port (in bridge mode), make the switch, its links and the capture. Needs
 * roce_eal_init().
 * @param err  receives one line naming the port or value and what failed
 * @return the live switch, or NULL with errno set (EINVAL: a bad conf or devargs; ENODEV, EIO
 *         from a port; ENOMEM)
 */
struct roce_live_switch *roce_live_open(const struct roce_live_conf *conf, char *err,
					size_t errlen);

/**
 * Send frames for @p dst / @p plen out of @p port, besides the learned routes.
 * @return 0; -EINVAL (bad port, family or length); -ENOSPC
 */
int roce_live_add_route(struct roce_live_switch *ls, uint8_t ip_ver,
			const struct roce_ip_addr *dst, uint8_t plen, uint16_t port);

/**
 * Forward frames for @p duration (ROCE_TIME_NEVER: no limit) or until *@p stop becomes
 * non-zero (a signal handler sets it; may be NULL).
 * @return 0
 */
int roce_live_run(struct roce_live_switch *ls, roce_time_t duration,
		  const volatile sig_atomic_t *stop);

/** The switch inside (for its counters). */
struct roce_switch *roce_live_switch(struct roce_live_switch *ls);

/** Ports opened. */
int roce_live_nports(const struct roce_live_switch *ls);

/** Copy port @p port's live counters; zeros for a bad port. */
void roce_live_pstats(const struct roce_live_switch *ls, int port, struct roce_live_pstats *st);

/**
 * Print every port's counters as `ethtool -S` does, one "name: value" a line: the ethdev's,
 * the bridge's, the switch's port-wide ones, then per priority the ones that are not zero
 * (rx/tx, drops by reason, pauses sent and received, ECN marks, max queue).
 * @return 0 or -EIO
 */
int roce_live_print(struct roce_live_switch *ls, FILE *out);

/** Close the ports, the capture and the switch; NULL is a no-op. */
void roce_live_close(struct roce_live_switch *ls);

#endif /* ROCE_LIVE_H */
