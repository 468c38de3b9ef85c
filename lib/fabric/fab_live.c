/* rocelab switch: the fabric switch between DPDK ports in real time, with a learning bridge around it. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "fab_private.h"
#include "roce_capture.h"
#include "roce_io.h"
#include "roce_live.h"
#include "roce_wire.h"

#define LIVE_MAC_TABLE 4096		/* learned MACs, open addressing (a rack has tens) */
#define LIVE_IP_TABLE 4096		/* learned source addresses, each a host route */
#define LIVE_IN_RATE 1000000000000ull	/* port -> switch: 1 Tb/s, i.e. not a bottleneck */
#define LIVE_DEF_SPEED 10000000000ull	/* a port that reports no speed: 10 Gb/s */
#define LIVE_YIELD_AFTER 64		/* idle loop iterations before sched_yield() */
#define LIVE_MBUFS 16384		/* frames in flight, held in the buffer or in rings */
#define ETH_MAC_CTRL 0x8808		/* IEEE 802.3 MAC control: PAUSE and PFC */
#define ROCEV2_PORT 4791

/* A MAC address seen as a source, and the port it came in on. */
struct mac_entry {
	uint8_t mac[6];			/* the address */
	bool used;			/* slot taken */
	uint16_t port;			/* where it was last seen */
};

/* A source IP address seen on a port (a /32 or /128 route was added for it). */
struct ip_entry {
	uint8_t ip_ver;			/* 4 or 6; 0: free */
	struct roce_ip_addr ip;		/* the address */
	uint16_t port;			/* where it was seen first */
};

/* A static route (--route), kept to tell routable destinations from floodable ones. */
struct live_route {
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t plen;			/* prefix length */
	struct roce_ip_addr dst;	/* prefix */
};

struct live_port {
	struct roce_live_switch *ls;	/* back pointer */
	uint16_t id;			/* switch port number */
	struct roce_port *port;		/* the DPDK port, in bridge mode */
	struct roce_link_end port_end;	/* its endpoint: pull = received frames, rx = transmit */
	struct roce_link_end sw_end;	/* the switch port's endpoint */
	struct roce_link *in;		/* port -> switch, unshaped */
	struct roce_link *out;		/* switch -> port, at the egress rate */
	uint64_t speed_bps;		/* the port's link speed */
	uint64_t rate_bps;		/* its egress rate */
	struct roce_live_pstats st;	/* counters */
};

struct roce_live_switch {
	struct roce_engine *eng;	/* wall clock, pool, RNG */
	struct roce_switch *sw;		/* the fabric switch */
	struct roce_capture *cap;	/* --capture, or NULL */
	int nports;			/* ports open */
	struct live_port port[ROCE_LIVE_MAX_PORTS]; /* the ports */
	struct mac_entry mac[LIVE_MAC_TABLE]; /* learned MACs, open addressing */
	struct ip_entry ip[LIVE_IP_TABLE]; /* learned source addresses, open addressing */
	struct live_route route[ROCE_LIVE_MAX_ROUTES]; /* static routes */
	int nroutes;			/* entries in @route */
	double loss;			/* conf.loss */
	uint32_t drop_psn[ROCE_LIVE_MAX_DROP_PSN]; /* conf.drop_psn */
	bool dropped[ROCE_LIVE_MAX_DROP_PSN]; /* that PSN has been dropped once */
	int ndrop_psn;			/* entries in @drop_psn */
	roce_time_t started;		/* engine time at the first roce_live_run() */
	uint64_t rx_total;		/* frames received on every port, to tell idle loops */
};

/* ---- configuration ---- */

void roce_live_defaults(struct roce_switch_conf *conf)
{
	roce_switch_defaults(conf);
	conf->buffer = 12ull << 20;
	conf->headroom = 2ull << 20;
}

int roce_live_set(struct roce_switch_conf *conf, const char *const *set, int nset, char *err,
		  size_t errlen)
{
	static const char base[] = "[scenario]\nname = rocelab switch\n[topology]\nkind = star\n"
				    "hosts = 2\n[flow.unused]\nsrc = h0\ndst = h1\n"
				    "[switch]\nbuffer = %lu\nheadroom = %lu\n";
	char text[320], (*sets)[160] = NULL;
	const char **argv = NULL;
	struct roce_scenario *sc;
	int i, rc = -EINVAL;

	if (nset == 0)
		return 0;
	sets = calloc((size_t)nset, sizeof(*sets));
	argv = calloc((size_t)nset, sizeof(*argv));
	if (sets == NULL || argv == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nset; i++) {
		const char *eq = strchr(set[i], '=');
		bool has_sec = strncmp(set[i], "switch.", 7) == 0 || strncmp(set[i], "priority.", 9) == 0;

		if (eq == NULL || eq == set[i] || strlen(set[i]) >= sizeof(sets[i]) - 8) {
			snprintf(err, errlen, "--set '%s': expected key=value (buffer=12M, "
				 "priority.3.lossless=yes, ...)", set[i]);
			goto out;
		}
		snprintf(sets[i], sizeof(sets[i]), "%s%s", has_sec ? "" : "switch.", set[i]);
		argv[i] = sets[i];
	}
	snprintf(text, sizeof(text), base, (unsigned long)conf->buffer,
		 (unsigned long)conf->headroom);
	sc = roce_scenario_parse("--set", text, argv, nset, err, errlen);
	if (sc == NULL)
		goto out;
	if (sc->nswitches < 1) {
		snprintf(err, errlen, "--set: the settings made no switch");
		roce_scenario_destroy(sc);
		goto out;
	}
	*conf = sc->sw[0].conf;
	conf->name = "sw";
	roce_scenario_destroy(sc);
	rc = 0;
out:
	free(argv);
	free(sets);
	return rc;
}

/* ---- learning ---- */

static uint32_t hash_bytes(const uint8_t *b, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The port a MAC was learned on, or -1. */
static int mac_lookup(const struct roce_live_switch *ls, const uint8_t *mac)
{
	uint32_t h = hash_bytes(mac, 6);

	for (uint32_t i = 0; i < LIVE_MAC_TABLE; i++) {
		const struct mac_entry *e = &ls->mac[(h + i) % LIVE_MAC_TABLE];

		if (!e->used)
			return -1;
		if (memcmp(e->mac, mac, 6) == 0)
			return e->port;
	}
	return -1;
}

/*
 * Remember that @p mac is behind @p port (a move updates it); a full table learns no more, and
 * counts it (learn_full) on the port the frame came in by.
 */
static void mac_learn(struct roce_live_switch *ls, const uint8_t *mac, uint16_t port)
{
	uint32_t h = hash_bytes(mac, 6);

	if (mac[0] & 1)
		return;			/* a group address is never a source */
	for (uint32_t i = 0; i < LIVE_MAC_TABLE; i++) {
		struct mac_entry *e = &ls->mac[(h + i) % LIVE_MAC_TABLE];

		if (!e->used) {
			memcpy(e->mac, mac, 6);
			e->used = true;
			e->port = port;
			return;
		}
		if (memcmp(e->mac, mac, 6) == 0) {
			e->port = port;
			return;
		}
	}
	ls->port[port].st.learn_full++;
}

static bool ip_is_unicast(uint8_t ip_ver, const struct roce_ip_addr *a)
{
	static const uint8_t zero[16];

	if (ip_ver == 4)
		return a->b[0] != 0 && a->b[0] < 224 && memcmp(a->b, "\xff\xff\xff\xff", 4) != 0;
	return a->b[0] != 0xff && memcmp(a->b, zero, 16) != 0;
}

/*
 * Learn source @p ip on @p lp: the port an address is seen on gets its host route; seen later
 * on another port (a host moved, a cable was swapped), the route follows it (moved_ips).
 */
static void ip_learn(struct roce_live_switch *ls, struct live_port *lp, uint8_t ip_ver,
		     const struct roce_ip_addr *ip)
{
	uint32_t h = hash_bytes(ip->b, 16) ^ ip_ver;
	uint8_t host = ip_ver == 4 ? 32 : 128;	/* a host route's prefix length */

	if (!ip_is_unicast(ip_ver, ip))
		return;
	for (uint32_t i = 0; i < LIVE_IP_TABLE; i++) {
		struct ip_entry *e = &ls->ip[(h + i) % LIVE_IP_TABLE];

		if (e->ip_ver == ip_ver && memcmp(e->ip.b, ip->b, 16) == 0) {
			if (e->port != lp->id &&
			    roce_switch_set_route(ls->sw, ip_ver, ip, host, lp->id) == 0) {
				e->port = lp->id;
				lp->st.moved_ips++;
			}
			return;
		}
		if (e->ip_ver == 0) {
			if (roce_switch_add_route(ls->sw, ip_ver, ip, host, lp->id) != 0)
				return;
			e->ip_ver = ip_ver;
			e->ip = *ip;
			e->port = lp->id;
			lp->st.learned_ips++;
			return;
		}
	}
	lp->st.learn_full++;
}

/* Has the switch a route for @p dst (learned or static)? */
static bool routable(const struct roce_live_switch *ls, uint8_t ip_ver,
		     const struct roce_ip_addr *dst)
{
	uint32_t h = hash_bytes(dst->b, 16) ^ ip_ver;

	for (uint32_t i = 0; i < LIVE_IP_TABLE; i++) {
		const struct ip_entry *e = &ls->ip[(h + i) % LIVE_IP_TABLE];

		if (e->ip_ver == 0)
			break;
		if (e->ip_ver == ip_ver && memcmp(e->ip.b, dst->b, 16) == 0)
			return true;
	}
	for (int i = 0; i < ls->nroutes; i++)
		if (ls->route[i].ip_ver == ip_ver &&
		    fab_prefix_match(dst, &ls->route[i].dst, ls->route[i].plen))
			return true;
	return false;
}

/* ---- the frames ---- */

/* What live_rx reads from a frame. */
struct live_hdr {
	uint16_t type;			/* Ethertype after any VLAN tags */
	uint32_t l3;			/* offset of what follows it */
	uint8_t ip_ver;			/* 4, 6, or 0: not IP */
	uint8_t proto;			/* IP protocol */
	uint32_t l4;			/* L4 offset */
	uint32_t l4_len;		/* L4 bytes, from the IP header */
	struct roce_ip_addr src, dst;	/* addresses, IPv4 in the first 4 bytes */
};

static void read_frame(const struct rte_mbuf *m, struct live_hdr *h)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len, off = 12;

	memset(h, 0, sizeof(*h));
	for (;;) {
		if (off + 2 > len)
			return;
		h->type = (uint16_t)(b[off] << 8 | b[off + 1]);
		if (h->type != RTE_ETHER_TYPE_VLAN && h->type != RTE_ETHER_TYPE_QINQ)
			break;
		off += 4;
	}
	h->l3 = off + 2;
	if (h->type == RTE_ETHER_TYPE_IPV4 && h->l3 + sizeof(struct rte_ipv4_hdr) <= len) {
		const struct rte_ipv4_hdr *ip = (const void *)(b + h->l3);
		uint32_t ihl = (ip->version_ihl & 0xf) * 4u, tot = rte_be_to_cpu_16(ip->total_length);

		if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) || tot < ihl ||
		    h->l3 + tot > len)
			return;
		h->ip_ver = 4;
		h->proto = ip->next_proto_id;
		h->l4 = h->l3 + ihl;
		h->l4_len = tot - ihl;
		memcpy(h->src.b, &ip->src_addr, 4);
		memcpy(h->dst.b, &ip->dst_addr, 4);
		/* a fragment's L4 header is not ours to check */
		if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
							   RTE_IPV4_HDR_OFFSET_MASK))
			h->proto = 0;
	} else if (h->type == RTE_ETHER_TYPE_IPV6 && h->l3 + sizeof(struct rte_ipv6_hdr) <= len) {
		const struct rte_ipv6_hdr *ip = (const void *)(b + h->l3);
		uint32_t plen = rte_be_to_cpu_16(ip->payload_len);

		if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 || h->l3 + sizeof(*ip) + plen > len)
			return;
		h->ip_ver = 6;
		h->proto = ip->proto;
		h->l4 = h->l3 + sizeof(*ip);
		h->l4_len = plen;
		memcpy(h->src.b, ip->src_addr, 16);
		memcpy(h->dst.b, ip->dst_addr, 16);
	}
}

/*
 * Complete the TCP or UDP checksum. A kernel sending through a veth leaves it to the
 * hardware (CHECKSUM_PARTIAL: only the pseudo-header sum is in the field), and af_packet
 * hands such frames over as they are; forwarded unchanged to another veth, the receiving
 * stack would drop them. So every TCP segment, and every UDP datagram with a checksum except
 * RoCEv2's (whose checksum is 0 or, over IPv6, not checked by RoCE), gets its sum computed.
 */
static void complete_csum(struct live_port *lp, struct rte_mbuf *m, const struct live_hdr *h)
{
	uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t old, sum;
	uint32_t field;

	if (h->ip_ver == 0 || m->nb_segs != 1)
		return;
	if (h->proto == IPPROTO_TCP && h->l4_len >= sizeof(struct rte_tcp_hdr)) {
		field = h->l4 + offsetof(struct rte_tcp_hdr, cksum);
	} else if (h->proto == IPPROTO_UDP && h->l4_len >= sizeof(struct rte_udp_hdr)) {
		field = h->l4 + offsetof(struct rte_udp_hdr, dgram_cksum);
		if ((b[h->l4 + 2] << 8 | b[h->l4 + 3]) == ROCEV2_PORT ||
		    (h->ip_ver == 4 && b[field] == 0 && b[field + 1] == 0))
			return;
	} else {
		return;
	}
	memcpy(&old, b + field, 2);
	memset(b + field, 0, 2);
	if (h->ip_ver == 4)
		sum = rte_ipv4_udptcp_cksum((const struct rte_ipv4_hdr *)(b + h->l3), b + h->l4);
	else
		sum = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)(b + h->l3), b + h->l4);
	memcpy(b + field, &sum, 2);
	if (sum != old)
		lp->st.csum_completed++;
}

/* --drop-psn and --loss, on RoCE frames. @return true: drop it */
static bool impair(struct roce_live_switch *ls, struct live_port *lp, const struct rte_mbuf *m)
{
	struct roce_pkt pkt;

	if (ls->loss > 0 && roce_engine_rand01(ls->eng) < ls->loss) {
		lp->st.drop_loss++;
		return true;
	}
	if (ls->ndrop_psn == 0 ||
	    roce_wire_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, ROCE_PARSE_NO_ICRC,
			    &pkt) != 0 || pkt.kind != ROCE_KIND_ROCEV2 ||
	    !(roce_opcode[pkt.opcode].mask & ROCE_F_REQ))
		return false;
	for (int i = 0; i < ls->ndrop_psn; i++) {
		if (!ls->dropped[i] && pkt.psn == ls->drop_psn[i]) {
			ls->dropped[i] = true;
			lp->st.drop_psn++;
			return true;
		}
	}
	return false;
}

/* Copy @p m to every port but @p lp (the last one gets @p m itself). */
static void flood(struct roce_live_switch *ls, struct live_port *lp, struct rte_mbuf *m)
{
	int last = -1;

	for (int i = ls->nports - 1; i >= 0; i--) {
		if (i != lp->id) {
			last = i;
			break;
		}
	}
	lp->st.flooded++;
	for (int i = 0; i < ls->nports; i++) {
		struct live_port *o = &ls->port[i];
		struct rte_mbuf *c;

		if (i == lp->id)
			continue;
		c = i == last ? m : rte_pktmbuf_copy(m, roce_engine_pool(ls->eng), 0, UINT32_MAX);
		if (c == NULL) {
			lp->st.drop_nombuf++;
			continue;
		}
		o->st.tx_flood++;
		o->port_end.rx(o->port_end.owner, c);
	}
	if (last < 0)
		rte_pktmbuf_free(m);
}

/* A frame from the wire of @p owner (a live_port): to the switch, flooded, or dropped. */
static void live_rx(void *owner, struct rte_mbuf *m)
{
	struct live_port *lp = owner;
	struct roce_live_switch *ls = lp->ls;
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	struct live_hdr h;
	int dport;

	lp->st.rx_frames++;
	ls->rx_total++;
	if (m->data_len < RTE_ETHER_HDR_LEN) {
		rte_pktmbuf_free(m);
		return;
	}
	read_frame(m, &h);
	if (h.type == ETH_MAC_CTRL) {		/* PFC / PAUSE: for the switch port itself */
		lp->st.to_switch++;
		lp->sw_end.rx(lp->sw_end.owner, m);
		return;
	}
	mac_learn(ls, b + 6, lp->id);
	/* RFC 826: an ARP packet's sender address is as good a source as an IP header's, and
	 * comes before the first IP frame (memif endpoints exchange their keys over loopback) */
	if (h.type == RTE_ETHER_TYPE_ARP && h.l3 + 28 <= m->data_len && b[h.l3 + 4] == 6 &&
	    b[h.l3 + 5] == 4) {
		struct roce_ip_addr sip = { { 0 } };

		memcpy(sip.b, b + h.l3 + 14, 4);
		ip_learn(ls, lp, 4, &sip);
	}
	if (h.ip_ver != 0) {
		ip_learn(ls, lp, h.ip_ver, &h.src);
		complete_csum(lp, m, &h);
		if (h.proto == IPPROTO_UDP && h.l4_len >= 8 &&
		    (b[h.l4 + 2] << 8 | b[h.l4 + 3]) == ROCEV2_PORT && impair(ls, lp, m)) {
			rte_pktmbuf_free(m);
			return;
		}
	}
	dport = b[0] & 1 ? -1 : mac_lookup(ls, b);
	if (dport == lp->id) {			/* both ends behind this port */
		lp->st.filtered++;
		rte_pktmbuf_free(m);
		return;
	}
	/*
	 * ICMPv6 is bridged, never routed: neighbour discovery is link-scoped and its receiver
	 * drops a message whose hop limit is not 255 (RFC 4861 7.1.2), which routing decrements.
	 */
	if (h.ip_ver != 0 && !(b[0] & 1) && !(h.ip_ver == 6 && h.proto == IPPROTO_ICMPV6) &&
	    routable(ls, h.ip_ver, &h.dst)) {
		lp->st.to_switch++;
		lp->sw_end.rx(lp->sw_end.owner, m);
		return;
	}
	if (dport >= 0) {			/* a learned MAC: only its port, as a bridge does */
		struct live_port *o = &ls->port[dport];

		o->st.tx_bridged++;
		o->port_end.rx(o->port_end.owner, m);
		return;
	}
	flood(ls, lp, m);
}

static struct rte_mbuf *pull_nothing(void *owner)
{
	RTE_SET_USED(owner);
	return NULL;
}

static void rx_discard(void *owner, struct rte_mbuf *m)
{
	RTE_SET_USED(owner);
	rte_pktmbuf_free(m);
}

/* ---- objects ---- */

#define FAIL(e, ...) \
	do { \
		snprintf(err, errlen, __VA_ARGS__); \
		errno = (e); \
	} while (0)

static int open_port(struct roce_live_switch *ls, const struct roce_live_conf *conf, int i,
		     char *err, size_t errlen)
{
	struct live_port *lp = &ls->port[i];
	struct roce_port_conf pc = { .devargs = conf->devargs[i], .bridge = true };
	struct roce_link_conf in_conf = { .rate_bps = LIVE_IN_RATE };
	struct roce_link_conf out_conf = { 0 };
	struct roce_link_end port_in, sw_in, sw_out, port_out;
	bool up;

	lp->ls = ls;
	lp->id = (uint16_t)i;
	lp->port = roce_port_open(ls->eng, &pc, err, errlen);
	if (lp->port == NULL)
		return -errno;
	if (roce_port_link(lp->port, &up, &lp->speed_bps) != 0 || lp->speed_bps == 0)
		lp->speed_bps = LIVE_DEF_SPEED;
	lp->rate_bps = conf->rate_bps ? conf->rate_bps : lp->speed_bps;
	lp->port_end = roce_port_link_end(lp->port);
	lp->sw_end = roce_switch_port_end(ls->sw, lp->id);
	port_in = (struct roce_link_end){ lp->port, lp->port_end.pull, rx_discard };
	sw_in = (struct roce_link_end){ lp, pull_nothing, live_rx };
	lp->in = roce_link_create(ls->eng, &in_conf, &port_in, &sw_in);
	/* the switch's egress waits while the device's TX queue is full, so frames stay in
	 * the switch's queues (where PFC sees them) instead of being dropped at the port */
	sw_out = roce_port_gate(lp->port, &lp->sw_end);
	port_out = (struct roce_link_end){ lp->port, pull_nothing, lp->port_end.rx };
	out_conf.rate_bps = lp->rate_bps;
	lp->out = roce_link_create(ls->eng, &out_conf, &sw_out, &port_out);
	if (lp->in == NULL || lp->out == NULL) {
		FAIL(ENOMEM, "%s: cannot create the port's links", conf->devargs[i]);
		return -ENOMEM;
	}
	roce_port_attach(lp->port, lp->in, 0);
	roce_port_gate_link(lp->port, lp->out, 0);
	if (roce_switch_attach(ls->sw, lp->id, lp->out, 0, NULL, 0) != 0) {
		FAIL(EINVAL, "%s: the switch's buffer (%lu B) cannot hold the reserved space and the "
		     "headroom of %d ports (--set buffer=... or headroom=...)", conf->devargs[i],
		     (unsigned long)conf->sw.buffer, conf->nports);
		return -EINVAL;
	}
	if (ls->cap != NULL)
		roce_port_set_capture(lp->port, ls->cap);
	return 0;
}

struct roce_live_switch *roce_live_open(const struct roce_live_conf *conf, char *err,
					size_t errlen)
{
	struct roce_engine_conf ec = {
		.clock = ROCE_CLOCK_WALL,
		.seed = conf->seed ? conf->seed : 1,
		.nb_mbufs = LIVE_MBUFS,
		.name = "switch",
	};
	struct roce_switch_conf sc = conf->sw;
	struct roce_live_switch *ls;
	uint64_t top = 0;
	int i, rc;

	if (conf->nports < 2 || conf->nports > ROCE_LIVE_MAX_PORTS) {
		FAIL(EINVAL, "a switch needs 2 to %d ports (--port), got %d", ROCE_LIVE_MAX_PORTS,
		     conf->nports);
		return NULL;
	}
	if (conf->ndrop_psn < 0 || conf->ndrop_psn > ROCE_LIVE_MAX_DROP_PSN) {
		FAIL(EINVAL, "at most %d --drop-psn", ROCE_LIVE_MAX_DROP_PSN);
		return NULL;
	}
	if (!(conf->loss >= 0 && conf->loss <= 1)) {
		FAIL(EINVAL, "--loss: a probability from 0 to 1 is expected");
		return NULL;
	}
	ls = calloc(1, sizeof(*ls));
	if (ls == NULL) {
		FAIL(ENOMEM, "out of memory");
		return NULL;
	}
	ls->loss = conf->loss;
	ls->ndrop_psn = conf->ndrop_psn;
	for (i = 0; i < conf->ndrop_psn; i++)
		ls->drop_psn[i] = conf->drop_psn[i] & ROCE_PSN_MASK;
	ls->eng = roce_engine_create(&ec);
	if (ls->eng == NULL) {
		FAIL(ENOMEM, "cannot create the engine and its mbuf pool");
		goto err_free;
	}
	if (conf->capture != NULL) {
		ls->cap = roce_capture_open(conf->capture, conf->snaplen, err, errlen);
		if (ls->cap == NULL)
			goto err_free;
	}
	sc.nports = (uint16_t)conf->nports;
	/*
	 * Every frame the buffer holds is one mbuf of a pool of LIVE_MBUFS, and the rings hold
	 * the rest: with a cell of buffer / (LIVE_MBUFS / 2) the buffer is full (PFC, drops
	 * counted where they belong) before the pool runs dry, however small the frames. Byte
	 * accounting alone let 12 MiB of 64-byte frames exhaust the pool first, and a lossless
	 * class lost frames at the port instead (rx_missed).
	 */
	if (sc.cell == 0)
		sc.cell = (uint32_t)ROCE_MIN((sc.buffer + LIVE_MBUFS / 2 - 1) / (LIVE_MBUFS / 2),
					     65536u);
	if (sc.name == NULL)
		sc.name = "sw";
	/* pause quanta are timed at the wire's speed, not at the shaped egress rate */
	if (sc.pfc_rate_bps == 0)
		sc.pfc_rate_bps = LIVE_DEF_SPEED;
	{
		char why[160];

		if (roce_switch_conf_check(&sc, why, sizeof(why)) != 0) {
			FAIL(EINVAL, "--set: %s", why);
			goto err_free;
		}
	}
	ls->sw = roce_switch_create(ls->eng, &sc);
	if (ls->sw == NULL) {
		FAIL(ENOMEM, "the switch: %s", strerror(errno));
		goto err_free;
	}
	for (i = 0; i < conf->nports; i++) {
		rc = open_port(ls, conf, i, err, errlen);
		ls->nports = i + 1;
		if (rc != 0)
			goto err_free;
		top = ROCE_MAX(top, ls->port[i].speed_bps);
	}
	ls->sw->conf.pfc_rate_bps = conf->sw.pfc_rate_bps ? conf->sw.pfc_rate_bps : top;
	return ls;

err_free:
	rc = errno;
	roce_live_close(ls);
	errno = rc;
	return NULL;
}

int roce_live_add_route(struct roce_live_switch *ls, uint8_t ip_ver,
			const struct roce_ip_addr *dst, uint8_t plen, uint16_t port)
{
	struct live_route *r;
	int rc;

	if (ls->nroutes == ROCE_LIVE_MAX_ROUTES)
		return -ENOSPC;
	if (port >= ls->nports)
		return -EINVAL;
	rc = roce_switch_add_route(ls->sw, ip_ver, dst, plen, port);
	if (rc != 0)
		return rc;
	r = &ls->route[ls->nroutes++];
	r->ip_ver = ip_ver;
	r->plen = plen;
	r->dst = *dst;
	return 0;
}

/*
 * One engine iteration at a time (due timers, every port's poller). After LIVE_YIELD_AFTER
 * iterations with no timer fired and no frame received, give the CPU away once: on a machine
 * whose cores the endpoints share, a switch spinning through its time slice holds the very
 * frames it waits for in the endpoints' queues (perf_live.c does the same).
 */
int roce_live_run(struct roce_live_switch *ls, roce_time_t duration,
		  const volatile sig_atomic_t *stop)
{
	roce_time_t now = roce_engine_now(ls->eng), end;
	uint64_t seen = ls->rx_total;
	unsigned int quiet = 0;

	if (ls->started == 0)
		ls->started = now ? now : 1;
	end = duration == ROCE_TIME_NEVER ? ROCE_TIME_NEVER : now + duration;
	while ((stop == NULL || !*stop) && roce_engine_now(ls->eng) < end) {
		if (roce_engine_run(ls->eng, 0) != 0 || ls->rx_total != seen) {
			seen = ls->rx_total;
			quiet = 0;
		} else if (++quiet >= LIVE_YIELD_AFTER) {
			quiet = 0;
			sched_yield();
		}
	}
	for (int i = 0; i < ls->nports; i++)
		roce_port_flush(ls->port[i].port);
	return 0;
}

struct roce_switch *roce_live_switch(struct roce_live_switch *ls)
{
	return ls->sw;
}

int roce_live_nports(const struct roce_live_switch *ls)
{
	return ls->nports;
}

void roce_live_pstats(const struct roce_live_switch *ls, int port, struct roce_live_pstats *st)
{
	if (port < 0 || port >= ls->nports) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = ls->port[port].st;
}

/* ---- counters ---- */

#define PUT(name, v) fprintf(out, "     %s: %lu\n", (name), (unsigned long)(v))

int roce_live_print(struct roce_live_switch *ls, FILE *out)
{
	uint64_t used, max_used;

	for (int i = 0; i < ls->nports; i++) {
		struct live_port *lp = &ls->port[i];
		struct roce_switch_pstats ps;
		struct roce_port_stats es;

		roce_port_stats(lp->port, &es);
		roce_switch_pstats(ls->sw, lp->id, &ps);
		fprintf(out, "port %d %s (link %.3g Gb/s, egress %.3g Gb/s) statistics:\n", i,
			roce_port_name(lp->port), (double)lp->speed_bps / 1e9,
			(double)lp->rate_bps / 1e9);
		PUT("rx_packets", es.ipackets);
		PUT("tx_packets", es.opackets);
		PUT("rx_bytes", es.ibytes);
		PUT("tx_bytes", es.obytes);
		PUT("rx_missed", es.imissed);
		if (es.os_rx_packets != 0)	/* af_packet: what its ring lost, it does not say */
			PUT("rx_ring_lost", es.os_rx_packets > es.ipackets ?
					    es.os_rx_packets - es.ipackets : 0);
		PUT("rx_errors", es.ierrors);
		PUT("tx_errors", es.oerrors);
		PUT("tx_dropped", es.tx_dropped);
		PUT("tx_held", es.tx_held);	/* egress waited for the device */
		PUT("rx_queue_full", es.rx_queue_full);
		PUT("rx_frames", lp->st.rx_frames);	/* what follows took them */
		PUT("to_switch", lp->st.to_switch);
		PUT("flooded", lp->st.flooded);
		PUT("tx_flood", lp->st.tx_flood);
		PUT("tx_bridged", lp->st.tx_bridged);
		PUT("filtered", lp->st.filtered);
		PUT("learned_ips", lp->st.learned_ips);
		PUT("moved_ips", lp->st.moved_ips);
		PUT("learn_full", lp->st.learn_full);
		PUT("csum_completed", lp->st.csum_completed);
		PUT("drop_psn", lp->st.drop_psn);
		PUT("drop_loss", lp->st.drop_loss);
		PUT("drop_nombuf", lp->st.drop_nombuf);
		PUT("sw_rx_frames", ps.rx_frames);
		PUT("sw_tx_frames", ps.tx_frames);
		/* the port-wide switch counters under counters.txt's names (rocelab run) */
		PUT("rx_pfc_frames", ps.pfc_rx);
		PUT("tx_pfc_frames", ps.pfc_tx);
		PUT("rx_drop_no_route", ps.drop_no_route);
		PUT("rx_drop_malformed", ps.drop_malformed);
		PUT("rx_drop_ttl", ps.drop_ttl);
		for (int prio = 0; prio < ROCE_NPRIO; prio++) {
			struct roce_switch_qstats q;

			roce_switch_qstats(ls->sw, lp->id, prio, &q);
			if (q.rx_frames | q.tx_frames | q.pause_tx | q.pause_rx | q.resume_rx)
				fab_print_qstats(out, prio, &q, true);
		}
	}
	used = roce_switch_buffer_used(ls->sw, &max_used);	/* before max_used is read */
	fprintf(out, "buffer: %lu B in use, %lu B at most (in cells of %u B)\n",
		(unsigned long)used, (unsigned long)max_used, ls->sw->conf.cell);
	for (int i = 0; i < ls->nports; i++)
		if (ls->port[i].st.learn_full != 0) {
			fprintf(out, "note: the learning tables (%d MACs, %d addresses) were full: "
				"frames to hosts not learned were flooded; give routes with "
				"--route\n", LIVE_MAC_TABLE, LIVE_IP_TABLE);
			break;
		}
	for (int i = 0; i < ls->nports; i++) {
		struct roce_port_stats es;

		roce_port_stats(ls->port[i].port, &es);
		if (es.os_rx_packets > es.ipackets)
			fprintf(out, "note: port %d lost %lu frames in its socket's ring before the "
				"switch saw them: give it a deeper ring (af_packet: framecnt=16384) "
				"or pace the senders\n", i,
				(unsigned long)(es.os_rx_packets - es.ipackets));
	}
	return ferror(out) ? -EIO : 0;
}

void roce_live_close(struct roce_live_switch *ls)
{
	if (ls == NULL)
		return;
	for (int i = 0; i < ls->nports; i++) {
		struct live_port *lp = &ls->port[i];

		roce_port_close(lp->port);	/* first: it feeds the links */
		roce_link_destroy(lp->in);
		roce_link_destroy(lp->out);
	}
	roce_switch_destroy(ls->sw);
	roce_capture_close(ls->cap);
	roce_engine_destroy(ls->eng);
	free(ls);
}
