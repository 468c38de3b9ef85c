/* The switch: ports, classification, routing and ECMP, buffer admission, egress scheduling. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "fab_private.h"
#include "roce_wire.h"

#define ETH_TYPE_OFF 12			/* Ethertype (or the first TPID) after the two MACs */
#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_QINQ 0x88a8
#define IP_PROTO_TCP 6
#define IP_PROTO_UDP 17

void roce_switch_defaults(struct roce_switch_conf *conf)
{
	static const uint8_t mac[6] = { 0x02, 0x52, 0x4f, 0x43, 0x45, 0x00 };	/* local, "RoCE" */
	int i;

	memset(conf, 0, sizeof(*conf));
	conf->name = "sw";
	conf->nports = 2;
	conf->buffer = 32ull << 20;		/* HPCC run.py at 100G: 16 MB x 100/50 */
	conf->reserved = 4096;			/* HPCC switch-mmu: reserve 4 KiB per (port, queue) */
	conf->pfc_mode = ROCE_PFC_DYNAMIC;
	conf->xoff = 256 * 1024;		/* static mode only */
	conf->alpha = 1.0 / 8;			/* HPCC third.cc: pfc_a_shift 3 */
	conf->xon_delta = 3072;			/* HPCC switch-mmu: resume_offset 3 KiB */
	conf->headroom = 0;			/* sized from each link at attach */
	conf->pfc_quanta = 0xffff;
	conf->watchdog = 0;
	for (i = 0; i < 64; i++)
		conf->dscp_prio[i] = (uint8_t)(i >> 3);
	for (i = 0; i < ROCE_NPRIO; i++)
		conf->prio[i].weight = 1;
	conf->prio[3].lossless = true;
	conf->prio[3].ecn = true;
	conf->prio[3].kmin = 400 * 1000;	/* HPCC run.py at 100G: 100 KB x 100/25 */
	conf->prio[3].kmax = 1600 * 1000;	/* 400 KB x 100/25 */
	conf->prio[3].pmax = 0.2;
	conf->prio[6].strict = true;		/* CNPs: DSCP 48 */
	conf->prio[7].strict = true;		/* network control */
	memcpy(conf->mac, mac, sizeof(mac));
}

/* ---- trace ---- */

void fab_trace(struct roce_switch *sw, uint16_t port, int prio, const char *fmt, ...)
{
	va_list ap;

	if (sw->trace == NULL)
		return;
	/* as the transport's trace (tr_trace): one file of both sorts by time, lines aligned */
	fprintf(sw->trace, "%14.6f us %s p%u/%d ", (double)roce_engine_now(sw->eng) / ROCE_US,
		sw->name, port, prio);
	va_start(ap, fmt);
	vfprintf(sw->trace, fmt, ap);
	va_end(ap);
	fputc('\n', sw->trace);
}

void roce_switch_set_trace(struct roce_switch *sw, FILE *f)
{
	sw->trace = f;
}

/* ---- egress rings ---- */

static int queue_push(struct sw_port *p, struct sw_queue *q, struct rte_mbuf *m)
{
	if (roce_unlikely(q->len == q->cap)) {
		uint32_t cap = q->cap * 2, i;
		struct rte_mbuf **ring = malloc(cap * sizeof(*ring));

		if (ring == NULL)
			return -ENOMEM;
		for (i = 0; i < q->len; i++)
			ring[i] = q->ring[(q->head + i) & (q->cap - 1)];
		free(q->ring);
		q->ring = ring;
		q->cap = cap;
		q->head = 0;
	}
	q->ring[(q->head + q->len) & (q->cap - 1)] = m;
	if (q->len++ == 0)
		p->qbusy |= (uint8_t)(1u << q->prio);
	q->bytes += sw_meta(m)->len;
	return 0;
}

static inline struct rte_mbuf *queue_head(const struct sw_queue *q)
{
	return q->ring[q->head];
}

/* ---- buffer accounting ---- */

/*
 * Admit a frame of @p frame_len bytes arriving on (@p p, @p prio): reserved space first, then
 * the shared pool up to the PFC threshold, then (lossless) the headroom. @return false: no
 * room (not charged)
 */
static bool admit(struct roce_switch *sw, struct sw_port *p, int prio, uint32_t frame_len)
{
	struct sw_ingress *in = &p->in[prio];
	uint64_t thr = fab_threshold(sw);
	uint32_t len = fab_charge(sw, frame_len);

	if (in->rsv + len <= sw->conf.reserved) {
		in->rsv += len;
	} else if (in->hdrm == 0 && in->shared + len <= thr &&
		   sw->shared_used + len <= sw->shared_size) {
		in->shared += len;
		sw->shared_used += len;
	} else if (sw->conf.prio[prio].lossless && in->hdrm + len <= p->headroom) {
		in->hdrm += len;
	} else {
		return false;
	}
	sw->used += len;
	if (sw->used > sw->max_used)
		sw->max_used = sw->used;
	return true;
}

uint64_t roce_switch_buffer_used(const struct roce_switch *sw, uint64_t *max_used)
{
	if (max_used != NULL)
		*max_used = sw->max_used;
	return sw->used;
}

roce_time_t roce_switch_watchdog_first(const struct roce_switch *sw)
{
	return sw->wd_first;
}

/* ---- classification and routing ---- */

/* What the ingress pipeline reads from a frame. */
struct sw_hdr {
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t l3_off;			/* IP header offset */
	uint8_t pcp;			/* first 802.1Q tag's PCP */
	bool tagged;			/* has an 802.1Q tag */
	uint8_t dscp;			/* DSCP */
	uint8_t ttl;			/* TTL / hop limit */
	uint8_t proto;			/* IP protocol / next header */
	uint16_t sport, dport;		/* UDP/TCP ports, else 0 */
	struct roce_ip_addr src, dst;	/* addresses */
};

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Read L2/L3/L4 from the first segment. @return 1 (IP), 0 (MAC control: pkt parsed),
 * -1 (neither, or truncated)
 */
static int read_hdr(const struct rte_mbuf *m, struct sw_hdr *h, struct roce_pkt *pkt)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = ETH_TYPE_OFF, l4;
	uint16_t type;
	int ntag = 0;

	if (len < off + 2)
		return -1;
	type = rd16(b + off);
	h->tagged = false;
	while ((type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ) && ntag < ROCE_MAX_VLANS) {
		if (len < off + 6)
			return -1;
		if (!h->tagged)
			h->pcp = b[off + 2] >> 5;
		h->tagged = true;
		off += 4;
		type = rd16(b + off);
		ntag++;
	}
	off += 2;
	if (type == ROCE_ETHERTYPE_MAC_CTRL)
		return roce_wire_parse(b, len, ROCE_PARSE_NO_ICRC, pkt) == 0 ? 0 : -1;
	h->l3_off = (uint8_t)off;
	memset(&h->src, 0, sizeof(h->src));
	memset(&h->dst, 0, sizeof(h->dst));
	if (type == ETH_TYPE_IPV4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(b + off);
		uint32_t ihl;

		if (len < off + sizeof(*ip) || (ip->version_ihl >> 4) != 4)
			return -1;
		ihl = (ip->version_ihl & 0xf) * 4u;
		if (ihl < sizeof(*ip) || len < off + ihl)
			return -1;
		h->ip_ver = 4;
		h->dscp = ip->type_of_service >> 2;
		h->ttl = ip->time_to_live;
		h->proto = ip->next_proto_id;
		memcpy(h->src.b, &ip->src_addr, 4);
		memcpy(h->dst.b, &ip->dst_addr, 4);
		l4 = off + ihl;
	} else if (type == ETH_TYPE_IPV6) {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(b + off);
		uint32_t vtc;

		if (len < off + sizeof(*ip))
			return -1;
		vtc = rte_be_to_cpu_32(ip->vtc_flow);
		if ((vtc >> 28) != 6)
			return -1;
		h->ip_ver = 6;
		h->dscp = (uint8_t)((vtc >> 22) & 0x3f);
		h->ttl = ip->hop_limits;
		h->proto = ip->proto;
		memcpy(h->src.b, ip->src_addr, 16);
		memcpy(h->dst.b, ip->dst_addr, 16);
		l4 = off + sizeof(*ip);
	} else {
		return -1;
	}
	h->sport = h->dport = 0;
	if ((h->proto == IP_PROTO_UDP || h->proto == IP_PROTO_TCP) && len >= l4 + 4) {
		h->sport = rd16(b + l4);
		h->dport = rd16(b + l4 + 2);
	}
	return 1;
}

bool fab_prefix_match(const struct roce_ip_addr *a, const struct roce_ip_addr *prefix,
		      uint8_t plen)
{
	uint8_t full = plen / 8, rest = plen % 8;

	if (memcmp(a->b, prefix->b, full) != 0)
		return false;
	return rest == 0 || ((a->b[full] ^ prefix->b[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/*
 * 5-tuple hash with the switch's seed: one flow always takes one member of a group. rte_jhash of
 * the ten words cost about 150 instructions, and a flow's frames ask for it one after another:
 * a direct-mapped cache remembers it. An entry is used only if its whole key matches, so only
 * speed depends on the cache, not which member a flow takes.
 */
static uint32_t flow_hash(struct roce_switch *sw, const struct sw_hdr *h)
{
	struct sw_flow_cache *e;
	uint32_t key[SW_FLOW_KEY];
	uint64_t w[SW_FLOW_KEY / 2], x;

	memcpy(key, h->src.b, 16);
	memcpy(key + 4, h->dst.b, 16);
	key[8] = (uint32_t)h->sport << 16 | h->dport;
	key[9] = h->proto;
	memcpy(w, key, sizeof(w));
	x = (w[0] ^ w[4]) * 0x9e3779b97f4a7c15ull ^ w[1] * 0xc2b2ae3d27d4eb4full ^
	    (w[2] ^ w[3] << 1) * 0x165667b19e3779f9ull;
	x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ull;
	e = &sw->flows[(x >> 56) & (SW_FLOW_CACHE - 1)];
	if (e->used && memcmp(e->key, key, sizeof(key)) == 0)
		return e->hash;
	memcpy(e->key, key, sizeof(key));
	e->hash = rte_jhash_32b(key, SW_FLOW_KEY, sw->conf.ecmp_seed);
	e->used = true;
	return e->hash;
}

/*
 * A multiplicative hash of an address (two 64-bit words) and its IP version, for the route
 * cache's slots and the host-route index's. Only speed depends on it (an entry is used only if
 * its address matches exactly); rte_jhash of the 16 bytes cost about 80 instructions a hop.
 */
static inline uint64_t addr_hash(uint8_t ip_ver, const uint64_t a[2])
{
	uint64_t x = (a[0] ^ ip_ver) * 0x9e3779b97f4a7c15ull;

	x ^= a[1] * 0xc2b2ae3d27d4eb4full;
	return (x ^ (x >> 29)) * 0x9e3779b97f4a7c15ull;
}

/* Slot of a host address in the host-route index. */
static inline uint32_t host_slot(const struct roce_switch *sw, uint8_t ip_ver, const uint64_t a[2])
{
	return (uint32_t)(addr_hash(ip_ver, a) >> 32) & sw->hosts_mask;
}

static bool is_host_route(const struct sw_route *r)
{
	return r->plen == (r->ip_ver == 4 ? 32 : 128);
}

/*
 * Index the host routes by address, at most half full. Without memory the scan does it all,
 * only slower.
 */
static void hosts_rebuild(struct roce_switch *sw)
{
	uint32_t n = 0, cap = 16;

	sw->hosts_dirty = false;
	free(sw->hosts);
	sw->hosts = NULL;
	for (uint32_t i = 0; i < sw->nroutes; i++)
		n += is_host_route(&sw->routes[i]);
	if (n == 0)
		return;
	while (cap < 2 * n)
		cap *= 2;
	sw->hosts = malloc(cap * sizeof(*sw->hosts));
	if (sw->hosts == NULL)
		return;
	sw->hosts_mask = cap - 1;
	memset(sw->hosts, 0xff, cap * sizeof(*sw->hosts));	/* -1: empty */
	for (uint32_t i = 0; i < sw->nroutes; i++) {
		const struct sw_route *r = &sw->routes[i];
		uint32_t k;

		if (!is_host_route(r))
			continue;
		k = host_slot(sw, r->ip_ver, r->pfx);
		while (sw->hosts[k] >= 0)
			k = (k + 1) & (cap - 1);
		sw->hosts[k] = (int32_t)i;
	}
}

/*
 * Index of the longest prefix holding @p h's destination, or -1. It runs on every route cache
 * miss, and a leaf-spine switch holds a route per host: a host route, the longest prefix there
 * is, comes from the index; then a scan of the sorted table, masked words, not
 * fab_prefix_match()'s byte compare (80 instructions a route).
 */
static int32_t route_find(struct roce_switch *sw, const struct sw_hdr *h)
{
	uint64_t a[2];

	memcpy(a, h->dst.b, sizeof(a));
	if (roce_unlikely(sw->hosts_dirty))
		hosts_rebuild(sw);
	if (sw->hosts != NULL) {
		for (uint32_t k = host_slot(sw, h->ip_ver, a); sw->hosts[k] >= 0;
		     k = (k + 1) & sw->hosts_mask) {
			const struct sw_route *r = &sw->routes[sw->hosts[k]];

			if (r->ip_ver == h->ip_ver && r->pfx[0] == a[0] && r->pfx[1] == a[1])
				return sw->hosts[k];
		}
	}
	for (uint32_t i = 0; i < sw->nroutes; i++) {
		const struct sw_route *r = &sw->routes[i];

		if (r->ip_ver == h->ip_ver && ((a[0] & r->mask[0]) ^ r->pfx[0]) == 0 &&
		    ((a[1] & r->mask[1]) ^ r->pfx[1]) == 0)
			return (int32_t)i;
	}
	return -1;
}

/*
 * Route cache slot of a destination. An IPv4 address's low bits pick it, the bits above folded
 * in: hosts numbered in order (10.0.0.1, 10.0.0.2, ...) take neighbouring slots, so a fabric's
 * destinations fill a few lines of each switch's cache rather than one line each (hashed, the
 * 128-host leaf-spine's 16 switches took 2 048 lines, and the peek missed L1 on one a hop).
 */
static uint32_t cache_slot(uint8_t ip_ver, const struct roce_ip_addr *dst)
{
	uint64_t a[2];

	if (ip_ver == 4) {
		uint32_t v4 = (uint32_t)dst->b[0] << 24 | dst->b[1] << 16 | dst->b[2] << 8 | dst->b[3];

		return (v4 ^ v4 >> 10 ^ v4 >> 20) % SW_ROUTE_CACHE;
	}
	memcpy(a, dst->b, sizeof(a));
	return (uint32_t)(addr_hash(ip_ver, a) >> 40) % SW_ROUTE_CACHE;
}

/* @return the egress port, or -1 (no route) */
static int route(struct roce_switch *sw, const struct sw_hdr *h)
{
	struct sw_route_cache *c;
	const struct sw_route *r;
	int32_t i;

	c = &sw->cache[cache_slot(h->ip_ver, &h->dst)];
	if (c->ip_ver == h->ip_ver && memcmp(c->dst.b, h->dst.b, sizeof(c->dst.b)) == 0) {
		if (c->port != SW_CACHE_GROUP)
			return c->port;
		i = c->route;
	} else {
		i = route_find(sw, h);
		sw->cache_used = true;
		c->ip_ver = h->ip_ver;
		c->dst = h->dst;
		c->route = i;
		c->port = SW_CACHE_GROUP;
		if (i >= 0 && sw->routes[i].nports == 1)
			c->port = sw->routes[i].port[0];
	}
	if (i < 0)
		return -1;
	r = &sw->routes[i];
	return r->nports == 1 ? r->port[0] : r->port[flow_hash(sw, h) % r->nports];
}

/* Check a route's arguments and give @p dst cut to @p plen bits. @return 0, -EINVAL */
static int route_prefix(const struct roce_switch *sw, uint8_t ip_ver,
			const struct roce_ip_addr *dst, uint8_t plen, uint16_t port,
			struct roce_ip_addr *pfx)
{
	if (sw == NULL || dst == NULL || port >= sw->conf.nports || (ip_ver != 4 && ip_ver != 6) ||
	    plen > (ip_ver == 4 ? 32 : 128))
		return -EINVAL;
	memset(pfx, 0, sizeof(*pfx));
	memcpy(pfx->b, dst->b, plen / 8);
	if (plen % 8)
		pfx->b[plen / 8] = dst->b[plen / 8] & (uint8_t)(0xff << (8 - plen % 8));
	return 0;
}

/* Is @p r the route of prefix @p pfx / @p plen (as route_prefix() cut it)? */
static inline bool route_is(const struct sw_route *r, uint8_t ip_ver,
			    const struct roce_ip_addr *pfx, uint8_t plen)
{
	return r->ip_ver == ip_ver && r->plen == plen && memcmp(&r->dst, pfx, sizeof(*pfx)) == 0;
}

int roce_switch_add_route(struct roce_switch *sw, uint8_t ip_ver, const struct roce_ip_addr *dst,
			  uint8_t plen, uint16_t port)
{
	struct roce_ip_addr pfx, mask;
	struct sw_route *r;
	uint32_t i, pos;

	if (route_prefix(sw, ip_ver, dst, plen, port, &pfx) != 0)
		return -EINVAL;
	if (sw->cache_used) {			/* indexes move, answers change */
		memset(sw->cache, 0, sizeof(sw->cache));
		sw->cache_used = false;
	}
	/* an ECMP group is usually built by adding its ports one after another: try that first */
	for (uint32_t k = 0; k <= sw->nroutes; k++) {
		i = k == 0 ? sw->last_route : k - 1;
		if (i >= sw->nroutes || (k != 0 && i == sw->last_route))
			continue;
		r = &sw->routes[i];
		if (!route_is(r, ip_ver, &pfx, plen))
			continue;
		for (pos = 0; pos < r->nports; pos++)
			if (r->port[pos] == port)
				return 0;	/* already a member */
		if (r->nports == SW_ECMP_MAX)
			return -ENOSPC;
		r->port[r->nports++] = port;
		sw->last_route = i;
		return 0;
	}
	if (sw->nroutes == sw->routes_cap) {
		uint32_t cap = sw->routes_cap ? sw->routes_cap * 2 : 16;
		struct sw_route *nr = realloc(sw->routes, cap * sizeof(*nr));

		if (nr == NULL)
			return -ENOSPC;
		sw->routes = nr;
		sw->routes_cap = cap;
	}
	/* longest prefix first; among equals, the order they were added */
	if (sw->nroutes == 0 || sw->routes[sw->nroutes - 1].plen >= plen)
		pos = sw->nroutes;	/* the common case: host routes added one after another */
	else
		for (pos = 0; pos < sw->nroutes && sw->routes[pos].plen >= plen; pos++)
			;
	memmove(&sw->routes[pos + 1], &sw->routes[pos], (sw->nroutes - pos) * sizeof(*r));
	r = &sw->routes[pos];
	memset(r, 0, sizeof(*r));
	r->ip_ver = ip_ver;
	r->plen = plen;
	r->dst = pfx;
	memcpy(r->pfx, pfx.b, sizeof(r->pfx));
	memset(&mask, 0, sizeof(mask));
	memset(mask.b, 0xff, plen / 8);
	if (plen % 8)
		mask.b[plen / 8] = (uint8_t)(0xff << (8 - plen % 8));
	memcpy(r->mask, mask.b, sizeof(r->mask));
	r->nports = 1;
	r->port[0] = port;
	sw->nroutes++;
	sw->last_route = pos;
	sw->hosts_dirty = true;		/* indexes from @pos on moved */
	return 0;
}

int roce_switch_set_route(struct roce_switch *sw, uint8_t ip_ver, const struct roce_ip_addr *dst,
			  uint8_t plen, uint16_t port)
{
	struct roce_ip_addr pfx;

	if (route_prefix(sw, ip_ver, dst, plen, port, &pfx) != 0)
		return -EINVAL;
	for (uint32_t i = 0; i < sw->nroutes; i++) {
		struct sw_route *r = &sw->routes[i];

		if (!route_is(r, ip_ver, &pfx, plen))
			continue;
		r->port[0] = port;
		r->nports = 1;
		if (sw->cache_used) {		/* cached answers name the old port */
			memset(sw->cache, 0, sizeof(sw->cache));
			sw->cache_used = false;
		}
		return 0;
	}
	return roce_switch_add_route(sw, ip_ver, dst, plen, port);
}

/* ---- forwarding ---- */

/*
 * Decrement the TTL / hop limit. The ICRC masks both (and the IPv4 checksum), so it stays
 * valid (IBA A17.3.3); MACs are left as the sender wrote them (docs/fabric.md).
 */
static void forward_ttl(struct rte_mbuf *m, const struct sw_hdr *h)
{
	uint8_t *l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, h->l3_off);

	if (h->ip_ver == 4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;
		uint16_t old = (uint16_t)(ip->time_to_live << 8 | ip->next_proto_id);

		ip->time_to_live--;
		ip->hdr_checksum = fab_csum_update16(ip->hdr_checksum, old, (uint16_t)(old - 0x100));
	} else {
		((struct rte_ipv6_hdr *)l3)->hop_limits--;
	}
}

static void sw_rx(void *owner, struct rte_mbuf *m)
{
	struct sw_port *p = owner, *out;
	struct roce_switch *sw = p->sw;
	struct roce_switch_qstats *st;
	struct sw_queue *q;
	struct sw_meta *meta;
	struct roce_pkt pkt;
	struct sw_hdr h;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	int rc, prio, port;

	p->rx_frames++;
	rc = read_hdr(m, &h, &pkt);
	if (rc == 0) {
		p->pst.pfc_rx++;
		fab_pfc_rx(p, &pkt);
		rte_pktmbuf_free(m);
		return;
	}
	if (rc < 0) {
		p->pst.drop_malformed++;
		rte_pktmbuf_free(m);
		return;
	}
	prio = sw->conf.trust_pcp && h.tagged ? h.pcp : sw->conf.dscp_prio[h.dscp] & 7;
	st = &p->st[prio];
	p->in[prio].rx_frames++;
	p->in[prio].rx_bytes += len;
	if (h.ttl <= 1) {
		p->pst.drop_ttl++;
		fab_trace(sw, p->id, prio, "drop ttl");
		rte_pktmbuf_free(m);
		return;
	}
	port = route(sw, &h);
	if (port < 0) {
		p->pst.drop_no_route++;
		fab_trace(sw, p->id, prio, "drop no-route");
		rte_pktmbuf_free(m);
		return;
	}
	out = &sw->port[port];
	q = &out->q[prio];
	if (!admit(sw, p, prio, len)) {
		if (sw->conf.prio[prio].lossless) {
			st->drop_headroom++;
			fab_trace(sw, p->id, prio, "drop headroom (%lu B held)",
				  (unsigned long)p->in[prio].hdrm);
		} else {
			st->drop_tail++;
			fab_trace(sw, p->id, prio, "drop tail");
		}
		rte_pktmbuf_free(m);
		fab_pfc_check_xoff(p, prio);
		return;
	}
	meta = sw_meta(m);
	m->ol_flags &= ~RTE_MBUF_F_RX_RSS_HASH;	/* the hash field holds @meta now */
	meta->in_port = p->id;
	meta->prio = (uint8_t)prio;
	meta->l3_off = h.l3_off;
	meta->len = len;
	forward_ttl(m, &h);
	if (queue_push(out, q, m) != 0) {
		fab_release(sw, m);
		st->drop_tail++;
		rte_pktmbuf_free(m);
		return;
	}
	if (q->bytes > q->max_qbytes)
		q->max_qbytes = q->bytes;
	if (q->len == 1)
		fab_wd_update(q);
	fab_pfc_check_xoff(p, prio);
	fab_kick(out);
}

/*
 * The link's look ahead (roce_link_end.peek): the lines sw_rx() will read for @p m, which its
 * headers choose. Untagged IPv4 only, the common case; for anything else the hop fetches them.
 */
static void sw_peek(void *owner, const struct rte_mbuf *m)
{
	const struct sw_port *p = owner, *out;
	const struct roce_switch *sw = p->sw;
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	struct roce_ip_addr dst = { .b = { 0 } };	/* as read_hdr() gives an IPv4 one */
	const struct sw_route_cache *c;
	const struct rte_ipv4_hdr *ip;
	int prio;

	if (m->data_len < ETH_TYPE_OFF + 2 + sizeof(*ip) || rd16(b + ETH_TYPE_OFF) != ETH_TYPE_IPV4)
		return;
	ip = (const struct rte_ipv4_hdr *)(b + ETH_TYPE_OFF + 2);
	prio = sw->conf.dscp_prio[ip->type_of_service >> 2] & 7;
	rte_prefetch0(&p->in[prio]);
	memcpy(dst.b, &ip->dst_addr, 4);
	c = &sw->cache[cache_slot(4, &dst)];
	if (c->port >= sw->conf.nports)
		return;
	out = &sw->port[c->port];
	rte_prefetch0(&out->q[prio]);
	if (out->link != NULL)
		roce_link_prefetch_kick(out->link, out->dir);
}

/* ---- egress scheduling ---- */

/*
 * DWRR among @p any, the eligible non-strict priorities (a bitmask, from the port's busy and
 * paused masks); @return the priority, or -1. A turn passes over the priorities with nothing
 * to send without touching them, and with one priority alone the rounds it would go around to
 * earn its head frame are added at once: a 4 KiB frame is three quanta, and the turn used to
 * go round all eight priorities for each.
 */
static int pick_dwrr(struct sw_port *p, unsigned int any)
{
	const struct roce_switch_conf *c = &p->sw->conf;

	if (any == 0)
		return -1;
	for (;;) {
		unsigned int ahead = any >> p->rr;
		int next = ahead ? p->rr + __builtin_ctz(ahead) : __builtin_ctz(any);
		struct sw_queue *q;
		uint32_t w;
		int64_t len, wq;

		if (next != p->rr) {	/* the turn passes on to the next eligible priority */
			p->rr = (uint8_t)next;
			p->rr_fresh = false;
		}
		q = &p->q[p->rr];
		w = c->prio[p->rr].weight ? c->prio[p->rr].weight : 1;
		wq = (int64_t)w * SW_DWRR_QUANTUM;
		if (!p->rr_fresh) {
			q->deficit += wq;
			p->rr_fresh = true;
		}
		len = (int64_t)sw_meta(queue_head(q))->len;
		if (q->deficit >= len)
			return p->rr;
		if (any == 1u << p->rr) {
			/* alone: each round would come back here and add one more quantum */
			q->deficit += (len - q->deficit + wq - 1) / wq * wq;
			return p->rr;
		}
		p->rr = (uint8_t)((p->rr + 1) % ROCE_NPRIO);
		p->rr_fresh = false;
	}
}

/* The highest eligible (frames, not paused) strict priority, else DWRR among the others. */
static int pick(struct sw_port *p)
{
	unsigned int elig = p->qbusy & ~p->qpaused, strict = elig & p->sw->strict;

	if (strict)
		return 31 - __builtin_clz(strict);
	return pick_dwrr(p, elig & ~p->sw->strict);
}

static struct rte_mbuf *sw_pull(void *owner)
{
	struct sw_port *p = owner;
	struct roce_switch *sw = p->sw;
	struct roce_switch_qstats *st;
	struct sw_queue *q;
	struct rte_mbuf *m;
	uint64_t qbytes;
	int prio;

	if (p->pfc_xoff | p->pfc_xon) {
		m = fab_pfc_frame(p);
		if (m != NULL) {
			p->tx_frames++;
			p->pst.pfc_tx++;
			return m;
		}
	}
	if (p->qpaused != 0)		/* (no pause, nothing to settle: no clock read) */
		fab_pause_settle(p, roce_engine_now(sw->eng));
	prio = pick(p);
	if (prio < 0)
		return NULL;
	q = &p->q[prio];
	st = &p->st[prio];
	qbytes = q->bytes;
	m = fab_queue_pop(p, q);
	if (!sw->conf.prio[prio].strict) {
		q->deficit -= sw_meta(m)->len;
		if (q->len == 0)
			q->deficit = 0;
	}
	if (q->len == 0) {
		fab_wd_update(q);
	} else {
		/* the next pull of this queue reads its head's mbuf (metadata included): fetch it */
		rte_prefetch0(queue_head(q));
	}
	/* (fab_ecn_mark() leaves a frame of a queue at or below K_min alone: no call then) */
	if (sw->conf.prio[prio].ecn && qbytes > sw->conf.prio[prio].kmin)
		fab_ecn_mark(sw, m, &sw->conf.prio[prio], qbytes, st);
	q->tx_frames++;
	q->tx_bytes += sw_meta(m)->len;
	p->tx_frames++;
	fab_release(sw, m);
	fab_pfc_check_xon(&sw->port[sw_meta(m)->in_port], sw_meta(m)->prio);
	return m;
}

/*
 * Nothing to pull and nothing that a pull would change: no frame queued, no PFC frame to send,
 * no pause to settle. Whatever queues a frame (sw_rx) or a PFC frame (fab_pfc.c) kicks.
 */
static bool sw_quiet(void *owner, roce_time_t end)
{
	const struct sw_port *p = owner;

	RTE_SET_USED(end);
	return (p->qbusy | p->qpaused | p->pfc_xoff | p->pfc_xon) == 0;
}

/* ---- objects ---- */

int roce_switch_conf_check(const struct roce_switch_conf *conf, char *why, size_t len)
{
	uint64_t reserved = (uint64_t)conf->nports * ROCE_NPRIO * conf->reserved;

	if (conf->nports == 0 || conf->nports > ROCE_SWITCH_MAX_PORTS) {
		snprintf(why, len, "%u ports: 1 to %d", conf->nports, ROCE_SWITCH_MAX_PORTS);
		return -EINVAL;
	}
	if (conf->buffer <= reserved) {
		snprintf(why, len, "buffer %" PRIu64 " B leaves nothing to share beyond the reserved "
			 "%" PRIu64 " B (%u ports x 8 priorities x reserved %" PRIu64 " B)",
			 conf->buffer, reserved, conf->nports, conf->reserved);
		return -EINVAL;
	}
	if (conf->pfc_mode != ROCE_PFC_DYNAMIC && conf->pfc_mode != ROCE_PFC_STATIC) {
		snprintf(why, len, "pfc mode %d: static or dynamic", (int)conf->pfc_mode);
		return -EINVAL;
	}
	if (conf->pfc_mode == ROCE_PFC_DYNAMIC && !(conf->alpha > 0)) {
		snprintf(why, len, "alpha %g: dynamic PFC thresholds need alpha above 0", conf->alpha);
		return -EINVAL;
	}
	for (int prio = 0; prio < ROCE_NPRIO; prio++) {
		const struct roce_prio_conf *pc = &conf->prio[prio];

		if (pc->ecn && pc->kmax < pc->kmin) {
			snprintf(why, len, "priority %d: kmax %" PRIu64 " B is below kmin %" PRIu64
				 " B", prio, (uint64_t)pc->kmax, (uint64_t)pc->kmin);
			return -EINVAL;
		}
		if (pc->ecn && !(pc->pmax >= 0 && pc->pmax <= 1)) {
			snprintf(why, len, "priority %d: pmax %g is not a probability", prio, pc->pmax);
			return -EINVAL;
		}
	}
	return 0;
}

struct roce_switch *roce_switch_create(struct roce_engine *eng, const struct roce_switch_conf *conf)
{
	struct roce_switch *sw;
	char why[160];
	uint16_t i;
	int prio;

	if (eng == NULL || conf == NULL || roce_switch_conf_check(conf, why, sizeof(why)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		goto err_nomem;
	/* cache-line aligned, as its queues are (a hop reads one line of each it passes) */
	sw->port = aligned_alloc(RTE_CACHE_LINE_SIZE, conf->nports * sizeof(*sw->port));
	if (sw->port == NULL)
		goto err_free_sw;
	memset(sw->port, 0, conf->nports * sizeof(*sw->port));
	sw->eng = eng;
	sw->conf = *conf;
	snprintf(sw->name, sizeof(sw->name), "%s", conf->name != NULL ? conf->name : "sw");
	sw->conf.name = sw->name;
	if (sw->conf.pfc_quanta == 0)
		sw->conf.pfc_quanta = 0xffff;
	sw->shared_size = conf->buffer - (uint64_t)conf->nports * ROCE_NPRIO * conf->reserved;
	for (prio = 0; prio < ROCE_NPRIO; prio++)
		if (conf->prio[prio].strict)
			sw->strict |= (uint8_t)(1u << prio);
	for (i = 0; i < conf->nports; i++) {
		struct sw_port *p = &sw->port[i];

		p->sw = sw;
		p->id = i;
		for (prio = 0; prio < ROCE_NPRIO; prio++) {
			struct sw_queue *q = &p->q[prio];

			q->cap = SW_QRING_INIT;
			q->ring = malloc(q->cap * sizeof(*q->ring));
			if (q->ring == NULL)
				goto err_free_rings;
			q->port = p;
			q->prio = (uint8_t)prio;
		}
		fab_pfc_init(p);
	}
	return sw;

err_free_rings:
	for (i = 0; i < conf->nports; i++)
		for (prio = 0; prio < ROCE_NPRIO; prio++)
			free(sw->port[i].q[prio].ring);
	free(sw->port);
err_free_sw:
	free(sw);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

void roce_switch_destroy(struct roce_switch *sw)
{
	uint16_t i;
	int prio;

	if (sw == NULL)
		return;
	for (i = 0; i < sw->conf.nports; i++) {
		struct sw_port *p = &sw->port[i];

		fab_pfc_fini(p);
		for (prio = 0; prio < ROCE_NPRIO; prio++) {
			struct sw_queue *q = &p->q[prio];

			while (q->len)
				rte_pktmbuf_free(fab_queue_pop(p, q));
			free(q->ring);
		}
	}
	free(sw->routes);
	free(sw->hosts);
	free(sw->port);
	free(sw);
}

const char *roce_switch_name(const struct roce_switch *sw)
{
	return sw->name;
}

struct roce_link_end roce_switch_port_end(struct roce_switch *sw, uint16_t port)
{
	struct roce_link_end e = { .owner = NULL, .pull = NULL, .rx = NULL };

	if (sw != NULL && port < sw->conf.nports) {
		e.owner = &sw->port[port];
		e.pull = sw_pull;
		e.rx = sw_rx;
		e.quiet = sw_quiet;
		e.icrc_partial = true;	/* reads headers only; rewrites masked fields only */
		e.peek = sw_peek;
	}
	return e;
}

int roce_switch_attach(struct roce_switch *sw, uint16_t port, struct roce_link *link, int dir,
		       struct roce_switch *peer, uint16_t peer_port)
{
	struct sw_port *p;
	uint64_t hdrm, nlossless = 0, total;
	int prio;

	if (sw == NULL || link == NULL || port >= sw->conf.nports || (dir != 0 && dir != 1) ||
	    (peer != NULL && peer_port >= peer->conf.nports))
		return -EINVAL;
	p = &sw->port[port];
	if (p->link != NULL)
		return -EINVAL;
	for (prio = 0; prio < ROCE_NPRIO; prio++)
		nlossless += sw->conf.prio[prio].lossless;
	hdrm = sw->conf.headroom ? sw->conf.headroom : roce_link_pfc_headroom(link);
	total = sw->hdrm_total + nlossless * hdrm;
	if (sw->conf.buffer <= (uint64_t)sw->conf.nports * ROCE_NPRIO * sw->conf.reserved + total) {
		ROCE_LOG(ERR, "%s: port %u: buffer of %lu B cannot hold the reserved space and %lu B "
			 "of headroom", sw->name, port, (unsigned long)sw->conf.buffer,
			 (unsigned long)total);
		return -EINVAL;
	}
	p->link = link;
	p->dir = dir;
	p->peer = peer;
	p->peer_port = peer_port;
	p->headroom = hdrm;
	sw->hdrm_total = total;
	sw->shared_size = sw->conf.buffer - (uint64_t)sw->conf.nports * ROCE_NPRIO *
			  sw->conf.reserved - total;
	return 0;
}

uint64_t roce_switch_headroom(const struct roce_switch *sw, uint16_t port)
{
	return port < sw->conf.nports ? sw->port[port].headroom : 0;
}

int roce_switch_port_resize(struct roce_switch *sw, uint16_t port)
{
	uint64_t hdrm, nlossless = 0, total, reserved;
	int first = -1;
	struct sw_port *p;

	if (sw == NULL || port >= sw->conf.nports || sw->port[port].link == NULL)
		return -EINVAL;
	if (sw->conf.headroom != 0)
		return 0;
	p = &sw->port[port];
	for (int prio = 0; prio < ROCE_NPRIO; prio++) {
		nlossless += sw->conf.prio[prio].lossless;
		if (sw->conf.prio[prio].lossless && first < 0)
			first = prio;
	}
	if (nlossless == 0)
		return 0;
	hdrm = roce_link_pfc_headroom(p->link);
	total = sw->hdrm_total - nlossless * p->headroom + nlossless * hdrm;
	reserved = (uint64_t)sw->conf.nports * ROCE_NPRIO * sw->conf.reserved;
	if (sw->conf.buffer <= reserved + total) {
		ROCE_LOG(WARN, "%s: port %u: buffer of %lu B cannot hold %lu B of headroom; "
			 "keeping %lu B", sw->name, port, (unsigned long)sw->conf.buffer,
			 (unsigned long)total, (unsigned long)p->headroom);
		return -ENOSPC;
	}
	fab_trace(sw, port, first, "headroom %lu -> %lu B per lossless priority",
		  (unsigned long)p->headroom, (unsigned long)hdrm);
	p->headroom = hdrm;
	sw->hdrm_total = total;
	sw->shared_size = sw->conf.buffer - reserved - total;
	return 0;
}

/* ---- counters ---- */

void roce_switch_qstats(const struct roce_switch *sw, uint16_t port, int prio,
			struct roce_switch_qstats *st)
{
	const struct sw_port *p;
	const struct sw_queue *q;
	const struct sw_ingress *in;
	roce_time_t now = roce_engine_now(sw->eng);

	memset(st, 0, sizeof(*st));
	if (port >= sw->conf.nports || prio < 0 || prio >= ROCE_NPRIO)
		return;
	p = &sw->port[port];
	q = &p->q[prio];
	in = &p->in[prio];
	*st = p->st[prio];
	st->rx_frames = in->rx_frames;
	st->rx_bytes = in->rx_bytes;
	st->tx_frames = q->tx_frames;
	st->tx_bytes = q->tx_bytes;
	st->max_qbytes = q->max_qbytes;
	st->qbytes = q->bytes;
	st->qframes = q->len;
	st->ingress_bytes = in->rsv + in->shared + in->hdrm;
	st->headroom_bytes = in->hdrm;
	st->xoff = in->xoff;
	st->paused = q->paused && now < q->paused_until;
	if (q->paused)
		st->paused_time += ROCE_MIN(now, q->paused_until) - q->pause_start;
}

void roce_switch_pstats(const struct roce_switch *sw, uint16_t port, struct roce_switch_pstats *st)
{
	if (port >= sw->conf.nports) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = sw->port[port].pst;
	st->rx_frames = sw->port[port].rx_frames;
	st->tx_frames = sw->port[port].tx_frames;
}
