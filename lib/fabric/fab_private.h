/* lib/fabric internals: the switch (fab_switch.c, fab_pfc.c, fab_ecn.c) and the scenarios; apps never include it. */
#ifndef FAB_PRIVATE_H
#define FAB_PRIVATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "roce_fabric.h"
#include "roce_switch.h"

#define SW_QRING_INIT 64		/* initial egress ring size (a power of two) */
#define SW_ECMP_MAX 64			/* ports in one ECMP group */
#define SW_DWRR_QUANTUM 1536		/* DWRR bytes per turn per unit of weight */
#define SW_NAME_LEN 32			/* conf.name, for counters and traces */

/*
 * Per-packet metadata, kept in the mbuf's hash field while a frame is in a switch. Not in a
 * dynfield: those lie in the mbuf's second cache line, which a switch hop would otherwise
 * bring in for these 8 bytes alone (the first holds the length and flags it reads anyway), and
 * on a large fabric a frame's lines have left the cache between hops. Nothing else reads the
 * hash of an emulated frame (no RSS or flow director here); an io port's receive may set it,
 * and the switch overwrites it. may_alias: the field is a union of other types.
 */
struct __attribute__((__may_alias__)) sw_meta {
	uint16_t in_port;		/* ingress port */
	uint8_t prio;			/* priority it was classified to */
	uint8_t l3_off;			/* IP header offset, for ECN marking at egress */
	uint32_t len;			/* frame bytes (the buffer charges whole cells) */
};

ROCE_STATIC_ASSERT(sizeof(struct sw_meta) == sizeof(((struct rte_mbuf *)NULL)->hash));
ROCE_STATIC_ASSERT(offsetof(struct rte_mbuf, hash) + sizeof(struct sw_meta) <= RTE_CACHE_LINE_MIN_SIZE);

static inline struct sw_meta *sw_meta(struct rte_mbuf *m)
{
	return (struct sw_meta *)&m->hash;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), when one 16-bit word of a header changes. */
static inline rte_be16_t fab_csum_update16(rte_be16_t csum, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~rte_be_to_cpu_16(csum) + (uint16_t)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return rte_cpu_to_be_16((uint16_t)~sum);
}

/*
 * One egress queue (port, priority): a FIFO ring of frames and the peer's pause state. What
 * every frame reads and writes comes first, in one cache line: on a large fabric a queue has
 * left the cache between two of its frames.
 */
struct sw_queue {
	struct rte_mbuf **ring;		/* frames, oldest at @head */
	uint32_t head;			/* index of the oldest */
	uint32_t len;			/* frames queued */
	uint32_t cap;			/* ring size, a power of two */
	uint8_t prio;			/* this queue's priority */
	bool paused;			/* the peer's pause is in force (until @paused_until) */
	bool watched;			/* @wd is armed (read without its line) */
	uint64_t bytes;			/* bytes queued */
	int64_t deficit;		/* DWRR deficit counter */
	uint64_t max_qbytes;		/* deepest it has been: st[prio].max_qbytes, on read */
	uint64_t tx_frames, tx_bytes;	/* frames sent: st[prio].tx_*, on read */
	/* cold: pauses */
	struct sw_port *port;		/* back pointer, for the watchdog */
	roce_time_t paused_until;	/* end of the peer's pause */
	roce_time_t pause_start;	/* start of the current pause interval */
	struct roce_timer wd;		/* PFC watchdog: fires when paused with frames too long */
} __rte_cache_aligned;

/* Ingress accounting of one (port, priority): where its held bytes sit in the buffer; one line. */
struct sw_ingress {
	uint64_t rsv;			/* bytes in the reserved space */
	uint64_t shared;		/* bytes in the shared pool */
	uint64_t hdrm;			/* bytes in the headroom */
	uint64_t rx_frames, rx_bytes;	/* frames arrived: st[prio].rx_*, on read */
	bool xoff;			/* we are pausing the upstream */
} __rte_cache_aligned;

/*
 * One switch port. A frame's hop reads the first line of its ingress and egress ports, one
 * sw_ingress and one sw_queue: the counters it bumps live beside them, and the rest of the
 * public counters (st, pst) are only touched by drops, pauses and reads.
 */
struct sw_port {
	struct roce_switch *sw;		/* back pointer */
	struct roce_link *link;		/* attached link, or NULL */
	int dir;			/* the direction we send in */
	uint16_t id;			/* port number */
	uint8_t qbusy;			/* bit p: q[p] holds frames (the scheduler's view) */
	uint8_t qpaused;		/* bit p: q[p].paused */
	uint8_t pfc_xoff;		/* priorities with an XOFF frame to send */
	uint8_t pfc_xon;		/* priorities with an XON frame to send */
	uint8_t rr;			/* DWRR: the priority whose turn it is */
	bool rr_fresh;			/* DWRR: it has had its quantum this turn */
	uint64_t rx_frames, tx_frames;	/* pst.rx_frames, pst.tx_frames, on read */
	struct sw_queue q[ROCE_NPRIO];	/* egress queues */
	struct sw_ingress in[ROCE_NPRIO]; /* ingress accounting */
	/* cold */
	struct roce_switch *peer;	/* switch at the other end, or NULL (a host) */
	uint16_t peer_port;		/* its port facing us */
	uint64_t headroom;		/* bytes per lossless priority */
	struct roce_timer pfc_refresh;	/* re-send XOFF before the quanta run out */
	struct roce_timer pause_end;	/* earliest end of the peer's pauses */
	struct roce_switch_qstats st[ROCE_NPRIO]; /* counters but the hot ones above; the "now"
					 * fields filled on read */
	struct roce_switch_pstats pst;	/* port-wide counters, rx/tx_frames excepted */
};

/* One route: a prefix and its ECMP group. */
struct sw_route {
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t plen;			/* prefix length */
	struct roce_ip_addr dst;	/* prefix, host bits zero */
	uint64_t pfx[2];		/* @dst as two words, for a match without a byte loop */
	uint64_t mask[2];		/* the prefix's bits, same layout */
	uint16_t nports;		/* ports in the group */
	uint16_t port[SW_ECMP_MAX];	/* egress ports */
};

/*
 * A remembered lookup: destination -> index in routes (or -1: no route), and the egress port
 * itself when the group has one, so that a hit does not read the 192-byte route.
 */
struct sw_route_cache {
	struct roce_ip_addr dst;
	uint8_t ip_ver;			/* 0: empty */
	uint16_t port;			/* the one egress port, or SW_CACHE_GROUP */
	int32_t route;
};
#define SW_CACHE_GROUP UINT16_MAX	/* no route, or an ECMP group: look at the route */
#define SW_ROUTE_CACHE 1024		/* direct-mapped by a hash of the destination */

/* A remembered ECMP hash: a flow's 5-tuple, as rte_jhash reads it, and its hash (flow_hash()). */
#define SW_FLOW_KEY 10			/* words: source, destination, ports, protocol */
struct sw_flow_cache {
	uint32_t key[SW_FLOW_KEY];
	uint32_t hash;
	bool used;			/* false: empty */
};
#define SW_FLOW_CACHE 256		/* direct-mapped by a hash of the key */

struct roce_switch {
	struct roce_engine *eng;	/* clock and RNG */
	struct roce_switch_conf conf;	/* copied; name points into @name */
	char name[SW_NAME_LEN];		/* conf.name */
	FILE *trace;			/* trace lines, or NULL */
	uint8_t strict;			/* bit p: conf.prio[p].strict */
	uint64_t hdrm_total;		/* sum of every (port, lossless priority) headroom */
	uint64_t shared_size;		/* buffer - reserved - headroom: the shared pool */
	uint64_t shared_used;		/* bytes in the shared pool */
	uint64_t used;			/* bytes held, everywhere */
	uint64_t max_used;		/* most ever held */
	roce_time_t wd_first;		/* when the PFC watchdog first dropped; 0: never */
	struct sw_route *routes;	/* sorted by prefix length, longest first */
	uint32_t nroutes;		/* routes in use */
	uint32_t routes_cap;		/* routes allocated */
	/* a fabric's switch has a route per host: remember lookups rather than scan them all */
	struct sw_route_cache cache[SW_ROUTE_CACHE];
	struct sw_flow_cache flows[SW_FLOW_CACHE]; /* ECMP hashes by 5-tuple */
	bool cache_used;		/* some entry is filled */
	/* the host routes (full-length prefixes) by address: a cache miss need not scan them */
	int32_t *hosts;			/* open addressing: index in routes, or -1; NULL: none */
	uint32_t hosts_mask;		/* slots - 1 */
	bool hosts_dirty;		/* routes were inserted (indexes moved): rebuild first */
	uint32_t last_route;		/* index of the route added or extended last */
	struct sw_port *port;		/* conf.nports ports */
};

/* fab_switch.c */
void fab_trace(struct roce_switch *sw, uint16_t port, int prio, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* What a frame of @p len bytes takes of the buffer: whole cells, or its bytes. */
static inline uint32_t fab_charge(const struct roce_switch *sw, uint32_t len)
{
	uint32_t c = sw->conf.cell;

	return c == 0 ? len : (len + c - 1) / c * c;
}

/* A frame leaves the buffer (sent or dropped at egress): headroom first, then shared, reserved. */
static inline void fab_release(struct roce_switch *sw, struct rte_mbuf *m)
{
	const struct sw_meta *meta = sw_meta(m);
	struct sw_ingress *in = &sw->port[meta->in_port].in[meta->prio];
	uint64_t len = fab_charge(sw, meta->len), n;

	n = ROCE_MIN(len, in->hdrm);
	in->hdrm -= n;
	len -= n;
	n = ROCE_MIN(len, in->shared);
	in->shared -= n;
	sw->shared_used -= n;
	len -= n;
	in->rsv -= ROCE_MIN(len, in->rsv);
	sw->used -= fab_charge(sw, meta->len);
}

/* Take the oldest frame of @p p's @p q (which holds one); inline: sw_pull() takes one a hop. */
static inline struct rte_mbuf *fab_queue_pop(struct sw_port *p, struct sw_queue *q)
{
	struct rte_mbuf *m = q->ring[q->head];

	q->head = (q->head + 1) & (q->cap - 1);
	if (--q->len == 0)
		p->qbusy &= (uint8_t)~(1u << q->prio);
	q->bytes -= sw_meta(m)->len;
	return m;
}

/* Tell @p p's link that the port may have a frame to send. */
static inline void fab_kick(struct sw_port *p)
{
	if (p->link != NULL)
		roce_link_kick(p->link, p->dir);
}

/* fab_pfc.c */
void fab_pfc_init(struct sw_port *p);
void fab_pfc_fini(struct sw_port *p);
void fab_pfc_xoff_test(struct sw_port *p, int prio);
void fab_pfc_xon_test(struct sw_port *p, int prio);

/* Shared bytes one ingress (port, priority) may hold before XOFF (and, lossy, before drops). */
static inline uint64_t fab_threshold(const struct roce_switch *sw)
{
	if (sw->conf.pfc_mode == ROCE_PFC_STATIC)
		return sw->conf.xoff;
	if (sw->shared_used >= sw->shared_size)
		return 0;	/* a port attached late shrank the pool below what is in use */
	return (uint64_t)(sw->conf.alpha * (double)(sw->shared_size - sw->shared_used));
}

/*
 * Send XOFF for (@p p, @p prio) if its ingress holds too much. Inline for the every-hop
 * answer, "no": a lossy priority, one already paused, or one with no headroom used and its
 * shared bytes below the threshold never calls fab_pfc_xoff_test().
 */
static inline void fab_pfc_check_xoff(struct sw_port *p, int prio)
{
	const struct sw_ingress *in = &p->in[prio];

	if (!p->sw->conf.prio[prio].lossless || in->xoff)
		return;
	if (in->hdrm == 0 && (in->shared == 0 || in->shared < fab_threshold(p->sw)))
		return;
	fab_pfc_xoff_test(p, prio);
}

/* Send XON for (@p p, @p prio) if it is paused and has drained (inline: most are not paused). */
static inline void fab_pfc_check_xon(struct sw_port *p, int prio)
{
	if (p->in[prio].xoff)
		fab_pfc_xon_test(p, prio);
}
struct rte_mbuf *fab_pfc_frame(struct sw_port *p);
void fab_pfc_rx(struct sw_port *p, const struct roce_pkt *pkt);
void fab_pause_settle(struct sw_port *p, roce_time_t now);
void fab_wd_set(struct sw_queue *q);

/*
 * Arm the queue's watchdog while it is paused with frames, disarm it otherwise. Inline for
 * the every-hop case, a queue neither paused nor watched: nothing to arm or cancel.
 */
static inline void fab_wd_update(struct sw_queue *q)
{
	if (q->paused || q->watched)
		fab_wd_set(q);
}

/** Do the first @p plen bits of @p a match @p prefix? (the switch's routes, rocelab switch's) */
bool fab_prefix_match(const struct roce_ip_addr *a, const struct roce_ip_addr *prefix,
		      uint8_t plen);

/* fab_ecn.c */
void fab_ecn_mark(struct roce_switch *sw, struct rte_mbuf *m, const struct roce_prio_conf *pc,
		  uint64_t qbytes, struct roce_switch_qstats *st);

/* ---- scenarios (fab_scenario.c, fab_topo.c) ---- */

/* Value parsers: 0, or -EINVAL (the caller names the key). */
int fab_parse_size(const char *s, uint64_t *out);	/* "64K", "1MB", "1500" (K = 1024) */
int fab_parse_rate(const char *s, uint64_t *out);	/* "100G", "40Gbps", "5Mbps" (bit/s) */
int fab_parse_time(const char *s, roce_time_t *out);	/* "1us", "2.5ms", "0" */
int fab_parse_prob(const char *s, double *out);		/* "1e-4", "0.5", "1%" */
int fab_parse_bool(const char *s, bool *out);		/* yes/no, on/off, true/false, 1/0 */

void fab_name(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

const char *fab_bytes(uint64_t v, char *buf, size_t len);
/* qsort() order of doubles; the nearest-rank @p p quantile of sorted @p v (0 if empty). */
int fab_cmp_double(const void *a, const void *b);
double fab_pct(const double *v, size_t n, double p);

/*
 * A flow's data (fab_run.c): byte b of the memory a message is read from is
 * (b mod FAB_PATTERN) * 7 + the flow's index.
 */
#define FAB_PATTERN 251		/* bytes; prime, so no packet matches at another's offset */

/* Flow @p flow's memory: the requester's or the responder's; its bytes in @p len (tests). */
uint8_t *fab_flow_memory(const struct roce_fabric *fab, int flow, bool responder,
			 uint64_t *len);

/*
 * Up to @p max series of @p kind as one chart (fab_report.c): flows' goodput picked to cover
 * the run, other series by their peaks; the run's marks; the time axis cut short, and the
 * caption saying so, when nothing changed in the run's second half.
 */
struct roce_chart *fab_series_chart(const struct roce_fabric *fab, enum roce_series_kind kind,
				    int chart_kind, const char *title, const char *ylabel, int max);

#define FAB_CHART_FLOWS 12	/* lines of a chart of flows: more and they cannot be told apart */

/* Whether flow @p f is one the scenario names on its own ([flow.*]) among a pattern's flows. */
bool fab_flow_stands_out(const struct roce_scenario *sc, int f);

/* Grow-by-one array helpers for the scenario's tables. */
void *fab_grow(void *base, int *n, size_t elem);

/* Node lookup by name: host or switch index in node numbering, or -1. */
int fab_node_find(const struct roce_scenario *sc, const char *name);
int fab_host_find(const struct roce_scenario *sc, const char *name);
int fab_link_find(const struct roce_scenario *sc, const char *name);

/* Topology generators (fab_topo.c): fill hosts, switches and links. 0, or -EINVAL with err. */
struct fab_topo {
	char kind[16];			/* star, dumbbell, line, ring, leafspine, fattree, custom */
	uint32_t hosts;			/* star, dumbbell, line, ring: hosts in all */
	uint32_t switches;		/* line, ring */
	uint32_t leaves, spines, hosts_per_leaf; /* leafspine */
	uint32_t k;			/* fattree */
	struct roce_link_conf host_link; /* host <-> switch */
	struct roce_link_conf fabric_link; /* switch <-> switch */
	double loss;			/* every link, both directions */
};
/* Generate @p t's hosts, switches and links; on error @p key names the [topology] key at fault. */
int fab_topo_generate(struct roce_scenario *sc, const struct fab_topo *t, const char **key,
		      char *err, size_t len);
int fab_add_host(struct roce_scenario *sc, const char *name);
int fab_add_switch(struct roce_scenario *sc, const char *name);
int fab_add_link(struct roce_scenario *sc, int a, int b, const struct roce_link_conf *conf);

/* A (port, priority)'s switch counters as `ethtool -S` lines; zeros only with @p zeros. */
void fab_print_qstats(FILE *f, int prio, const struct roce_switch_qstats *q, bool zeros);

#endif /* FAB_PRIVATE_H */
