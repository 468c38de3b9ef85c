/* lib/fabric: a shared-buffer Ethernet switch with 8 priorities, PFC, ECN marking and ECMP. */
#ifndef ROCE_SWITCH_H
#define ROCE_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_engine.h"
#include "roce_verbs.h"

#define ROCE_NPRIO 8			/* 802.1p priorities, PFC classes */
#define ROCE_SWITCH_MAX_PORTS 128

enum roce_pfc_mode {
	ROCE_PFC_STATIC,		/* XOFF at a fixed ingress byte count */
	ROCE_PFC_DYNAMIC,		/* XOFF at alpha x the free shared buffer (Broadcom/ns-3 style) */
};

/* Policy of one priority, the same on every port of a switch. */
struct roce_prio_conf {
	bool lossless;			/* PFC: pause the upstream instead of dropping */
	bool strict;			/* served before every DWRR priority (higher number first) */
	uint32_t weight;		/* DWRR weight among non-strict priorities; 0: 1 */
	bool ecn;			/* RED-mark ECT frames with CE at this priority's egress queue */
	uint64_t kmin;			/* bytes of egress queue where marking starts */
	uint64_t kmax;			/* bytes where the probability reaches pmax; above, every frame */
	double pmax;			/* marking probability at kmax */
};

struct roce_switch_conf {
	const char *name;		/* "sw0": for counters, traces and deadlock reports */
	uint16_t nports;		/* 1..ROCE_SWITCH_MAX_PORTS */
	uint64_t buffer;		/* shared buffer, bytes, for all ports */
	uint32_t cell;			/* buffer cell: a frame is charged its length rounded
					 * up to whole cells, as a switch's memory manager
					 * does (Tomahawk: 254 B); 0: exact bytes */
	uint64_t reserved;		/* guaranteed bytes per ingress port and priority, before the shared pool */
	enum roce_pfc_mode pfc_mode;
	uint64_t xoff;			/* static: shared bytes an ingress (port, priority) may hold before XOFF */
	double alpha;			/* dynamic: XOFF when those bytes exceed alpha x free shared buffer */
	uint64_t xon_delta;		/* XON once the bytes fall this far below the XOFF point */
	uint64_t headroom;		/* per ingress (port, lossless priority); 0: sized from the port's link */
	uint16_t pfc_quanta;		/* quanta in XOFF frames (x 512 bit times); 0: 0xffff */
	uint64_t pfc_rate_bps;		/* rate pause quanta are timed at, sent and received: the
					 * port's physical speed when the link is a shaper slower
					 * than the wire (rocelab switch); 0: the link's rate */
	roce_time_t watchdog;		/* PFC watchdog: an egress queue paused by its peer while
					 * holding frames this long has them all dropped
					 * (drop_watchdog), freeing the upstream; 0: off */
	uint8_t dscp_prio[64];		/* IP DSCP -> priority */
	bool trust_pcp;			/* classify 802.1Q-tagged frames by their PCP instead */
	struct roce_prio_conf prio[ROCE_NPRIO];
	uint8_t mac[6];			/* port i's MAC (source of its PFC frames) is mac + i */
	uint32_t ecmp_seed;		/* mixed into the 5-tuple hash */
};

/**
 * Defaults of a 100G data-centre switch as the ns-3 HPCC configurations set it (docs/fabric.md
 * cites each): 32 MB buffer (HPCC's run.py: 16 MB per 50G of host rate; Tomahawk 2 has 42 MB
 * for 64x100G), 4 KiB reserved per (port, priority), dynamic PFC with alpha 1/8, XON 3 KiB
 * below the XOFF point, headroom sized from each link, quanta 0xffff, no watchdog; priority
 * = DSCP >> 3; priority 3 lossless with ECN at Kmin 400 KB, Kmax 1600 KB, Pmax 0.2; priorities
 * 6 and 7 strict (CNPs use DSCP 48), the rest DWRR with weight 1.
 */
void roce_switch_defaults(struct roce_switch_conf *conf);

struct roce_switch;

/** @return the switch, or NULL with errno set (EINVAL: a bad conf; ENOMEM) */
struct roce_switch *roce_switch_create(struct roce_engine *eng, const struct roce_switch_conf *conf);

/** Free the switch and every frame it holds. Destroy it after its links. NULL is a no-op. */
void roce_switch_destroy(struct roce_switch *sw);

/** conf.name, as copied at creation. */
const char *roce_switch_name(const struct roce_switch *sw);

/**
 * The endpoint to give roce_link_create() for port @p port; for a bad @p sw or @p port its
 * pull and rx are NULL, which roce_link_create() refuses (EINVAL).
 */
struct roce_link_end roce_switch_port_end(struct roce_switch *sw, uint16_t port);

/**
 * Port @p port sends through direction @p dir of @p link. @p peer / @p peer_port name the switch
 * at the other end (NULL for a host), for deadlock detection. Headroom (conf.headroom 0) is
 * sized here from the link's rate, delay and MTU (roce_link_pfc_headroom(), the formula of
 * docs/fabric.md), and again by roce_switch_port_resize() after the link's rate changes.
 * @return 0; -EINVAL (bad port or direction, port already attached, or the buffer too small for
 *         the reserved space and every headroom)
 */
int roce_switch_attach(struct roce_switch *sw, uint16_t port, struct roce_link *link, int dir,
		       struct roce_switch *peer, uint16_t peer_port);

/**
 * Headroom of one (port, lossless priority) of @p port in bytes: conf.headroom, or the size
 * computed when the port was attached or last resized (0 before).
 */
uint64_t roce_switch_headroom(const struct roce_switch *sw, uint16_t port);

/**
 * Size @p port's headroom again from its link (after roce_link_set_rate(), as a switch's
 * buffer manager does when a port's speed changes); the shared pool gives or takes the
 * difference. Bytes held now stay: a smaller headroom or pool only refuses new frames until
 * they drain. A fixed conf.headroom is left alone.
 * @return 0; -EINVAL (bad or unattached port); -ENOSPC (the buffer cannot hold the new
 *         headroom: the old size is kept)
 */
int roce_switch_port_resize(struct roce_switch *sw, uint16_t port);

/**
 * Frames for destinations in @p dst / @p plen leave by @p port (longest prefix wins). Adding
 * the same prefix with several ports makes an ECMP group: a flow's 5-tuple hash picks one.
 * @return 0; -EINVAL, -ENOSPC
 */
int roce_switch_add_route(struct roce_switch *sw, uint8_t ip_ver, const struct roce_ip_addr *dst,
			  uint8_t plen, uint16_t port);

/**
 * Frames for @p dst / @p plen leave by @p port only from now on: the prefix's route (an ECMP
 * group too) is replaced, or added (a host that moved to another port, as a bridge relearns).
 * @return 0; -EINVAL, -ENOSPC
 */
int roce_switch_set_route(struct roce_switch *sw, uint8_t ip_ver, const struct roce_ip_addr *dst,
			  uint8_t plen, uint16_t port);

/*
 * Counters of one (port, priority); "rx" is the ingress side, "tx" the egress side. Buffer
 * admission drops (drop_tail, drop_headroom) count at the ingress (port, priority) that was
 * refused; drop_watchdog at the egress queue that was drained. Conservation, summed over a
 * switch: rx_frames == tx_frames + drop_tail + drop_headroom + drop_watchdog + qframes, plus the
 * port-wide drop_no_route and drop_ttl (those frames were classified, then dropped).
 */
struct roce_switch_qstats {
	uint64_t rx_frames, rx_bytes;	/* arrived on this port at this priority */
	uint64_t tx_frames, tx_bytes;	/* left this port at this priority */
	uint64_t drop_tail;		/* lossy: shared buffer or queue limit reached */
	uint64_t drop_headroom;		/* lossless: arrived with the headroom full */
	uint64_t drop_watchdog;		/* dropped by the PFC watchdog */
	uint64_t ecn_marked;		/* CE set on egress */
	uint64_t pause_tx;		/* XOFF frames sent for this ingress priority */
	uint64_t resume_tx;		/* XON (quanta 0) frames sent */
	uint64_t pause_rx;		/* XOFF frames received for this egress priority */
	uint64_t resume_rx;		/* XON frames received */
	roce_time_t paused_time;	/* egress time spent paused by the peer */
	uint64_t max_qbytes;		/* deepest egress queue seen */
	uint64_t qbytes;		/* now: egress queue bytes */
	uint64_t qframes;		/* now: egress queue frames */
	uint64_t ingress_bytes;		/* now: bytes held that arrived on this (port, priority) */
	uint64_t headroom_bytes;	/* now: of those, bytes in this (port, priority)'s headroom */
	bool xoff;			/* now: we are pausing the upstream at this priority */
	bool paused;			/* now: the peer is pausing our egress at this priority */
};

/* Port-wide counters. */
struct roce_switch_pstats {
	uint64_t rx_frames, tx_frames;	/* every frame in and out, PFC frames included */
	uint64_t drop_no_route;		/* no route for the destination */
	uint64_t drop_malformed;	/* not IPv4/IPv6 or truncated */
	uint64_t drop_ttl;		/* IPv4 TTL / IPv6 hop limit was 0 or 1 */
	uint64_t pfc_rx, pfc_tx;	/* PFC frames */
};

/** Copy the counters of (@p port, @p prio) into @p st; zeros for a bad port or priority. */
void roce_switch_qstats(const struct roce_switch *sw, uint16_t port, int prio,
			struct roce_switch_qstats *st);

/** Copy @p port's port-wide counters into @p st; zeros for a bad port. */
void roce_switch_pstats(const struct roce_switch *sw, uint16_t port,
			struct roce_switch_pstats *st);

/** Bytes of the shared buffer in use now, and the most ever in use. */
uint64_t roce_switch_buffer_used(const struct roce_switch *sw, uint64_t *max_used);

/**
 * Whether roce_switch_create() would take @p conf. @return 0, or -EINVAL with @p why naming the
 * setting at fault ("buffer 0 B leaves nothing to share beyond the reserved ...")
 */
int roce_switch_conf_check(const struct roce_switch_conf *conf, char *why, size_t len);

/** When the PFC watchdog first dropped a stuck queue's frames; 0 when it never has. */
roce_time_t roce_switch_watchdog_first(const struct roce_switch *sw);

/**
 * One line per XOFF/XON sent, pause/resume received, drop and watchdog action to @p f (borrowed;
 * NULL stops), e.g. "12.300 us sw0 p2/3 xoff (13824 B shared, 0 B headroom)": time, switch,
 * port/priority, event.
 */
void roce_switch_set_trace(struct roce_switch *sw, FILE *f);

/**
 * Look for a cyclic buffer dependency among @p n switches: a cycle of egress queues each paused
 * by a peer whose ingress is full of frames waiting on the next queue of the cycle.
 * @param report  receives "sw0 p1 prio 3 -> sw1 p0 prio 3 -> sw0 p1 prio 3"
 * @return 1 (a deadlock, reported), 0 (none)
 */
int roce_switch_find_deadlock(struct roce_switch *const *sw, int n, char *report, size_t len);

#endif /* ROCE_SWITCH_H */
