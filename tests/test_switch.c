/*
 * Check suite 'switch': forwarding with valid ICRCs, ECMP spread, conservation, 8:1 incast with
 * and without enough PFC headroom, PFC frames and pause timing, RED marking, a 3-switch ring
 * deadlock and the watchdog that breaks it, determinism.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_jhash.h>
#include <rte_mbuf.h>

#include "roce_engine.h"
#include "roce_io.h"
#include "roce_live.h"
#include "roce_switch.h"
#include "roce_wire.h"

#define GBPS 1000000000ull
#define MAXFLOWS 64		/* flows per test host */
#define MAXREC 32768		/* frames a sink records */
#define MAXPFC 4096		/* PFC frames a host records */
#define NHOSTS 12

/* ---- a test host: a frame generator that honours PFC, and a sink that checks every frame ---- */

struct host {
	struct roce_engine *eng;	/* clock, pool */
	struct roce_link *link;		/* to its switch */
	int dir;			/* direction it sends in */
	uint8_t ip_ver;			/* 4 or 6 */
	struct roce_ip_addr addr;	/* its address */

	/* generator */
	struct roce_ip_addr dst;	/* destination of every flow */
	uint32_t nflows;		/* flows, told apart by UDP source port */
	uint32_t next_flow;		/* round robin */
	uint64_t to_send;		/* frames left */
	uint64_t rate_bps;		/* 0: as fast as the link pulls */
	roce_time_t next_at;		/* rate limit: earliest next frame */
	uint32_t payload;		/* bytes per frame */
	uint8_t dscp, ecn, ttl;		/* IP header of its frames */
	int pcp;			/* >= 0: one 802.1Q tag with this PCP */
	uint64_t sent;			/* frames generated */
	struct roce_timer wake;		/* kicks the link at rate or pause end */

	/* PFC */
	roce_time_t paused_until[ROCE_NPRIO]; /* honoured like a NIC */
	bool pfc_pending;		/* a PFC frame to send next */
	uint16_t pfc_cev, pfc_quanta;	/* its contents (one priority's quanta) */
	roce_time_t pfc_sent_at;	/* when the last one was pulled */
	struct roce_timer pfc_timer;	/* sends the scheduled PFC frame */
	roce_time_t storm_every;	/* re-send the XOFF this often (a PFC storm); 0: once */
	roce_time_t storm_until;	/* storm end */

	/* sink */
	uint64_t rx;			/* RoCE frames received, ICRC and IP checksum right */
	uint64_t rx_bad;		/* frames that failed to parse */
	uint64_t rx_ce;			/* received with CE */
	uint64_t rx_flow[MAXFLOWS];	/* per flow (sport - 49152) */
	uint8_t rx_ttl;			/* TTL of the last one */
	roce_time_t rx_at[MAXREC];	/* arrival times */
	uint8_t rx_ecn[MAXREC];		/* their ECN fields */
	uint32_t npfc;			/* PFC frames received */
	struct { roce_time_t at; struct roce_pkt pkt; } pfc[MAXPFC]; /* PFC frames, parsed */
};

static struct host H[NHOSTS];	/* big: static */

static roce_time_t ser_ps(uint32_t len, uint64_t rate)
{
	return (roce_time_t)(((unsigned __int128)roce_wire_bytes(len) * 8 * ROCE_SEC + rate - 1) / rate);
}

static void host_kick(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct host *h = arg;

	(void)eng;
	(void)t;
	roce_link_kick(h->link, h->dir);
}

static struct rte_mbuf *host_pfc(struct host *h)
{
	struct rte_mbuf *m = roce_engine_mbuf(h->eng);
	struct roce_pkt pkt;
	int i;

	ck_assert_ptr_nonnull(m);
	roce_pkt_init(&pkt, ROCE_KIND_PFC, 0);
	pkt.pfc_cev = h->pfc_cev;
	for (i = 0; i < ROCE_NPRIO; i++)
		if (h->pfc_cev & (1u << i))
			pkt.quanta[i] = h->pfc_quanta;
	ck_assert_int_eq(roce_wire_build_mbuf(&pkt, 0, m), 60);
	return m;
}

static struct rte_mbuf *host_pull(void *owner)
{
	struct host *h = owner;
	roce_time_t now = roce_engine_now(h->eng);
	struct rte_mbuf *m;
	struct roce_pkt pkt;
	uint32_t f;
	int prio = h->dscp >> 3;

	if (h->pfc_pending) {
		h->pfc_pending = false;
		h->pfc_sent_at = now;
		if (h->storm_every && now + h->storm_every < h->storm_until)
			roce_timer_arm(h->eng, &h->pfc_timer, now + h->storm_every);
		return host_pfc(h);
	}
	if (h->to_send == 0)
		return NULL;
	if (now < h->paused_until[prio]) {
		roce_timer_arm(h->eng, &h->wake, h->paused_until[prio]);
		return NULL;
	}
	if (h->rate_bps && now < h->next_at) {
		roce_timer_arm(h->eng, &h->wake, h->next_at);
		return NULL;
	}
	m = roce_engine_mbuf(h->eng);
	ck_assert_ptr_nonnull(m);
	f = h->next_flow++ % h->nflows;
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_MIDDLE);
	pkt.ip_ver = h->ip_ver;
	pkt.src = h->addr;
	pkt.dst = h->dst;
	pkt.sport = (uint16_t)(49152 + f);
	pkt.dscp = h->dscp;
	pkt.ecn = h->ecn;
	pkt.ttl = h->ttl ? h->ttl : 64;
	if (h->pcp >= 0) {
		pkt.nvlan = 1;
		pkt.vlan[0].tpid = 0x8100;
		pkt.vlan[0].pcp = (uint8_t)h->pcp;
		pkt.vlan[0].vid = 10;
	}
	pkt.dqpn = 0x100 + f;
	pkt.psn = (uint32_t)h->sent & ROCE_PSN_MASK;
	pkt.payload_len = h->payload;
	ck_assert_int_gt(roce_wire_build_mbuf(&pkt, 0, m), 0);
	h->sent++;
	h->to_send--;
	if (h->rate_bps)
		h->next_at = now + ser_ps(rte_pktmbuf_pkt_len(m), h->rate_bps);
	return m;
}

static void host_rx(void *owner, struct rte_mbuf *m)
{
	struct host *h = owner;
	roce_time_t now = roce_engine_now(h->eng);
	struct roce_pkt pkt;
	int rc = roce_wire_parse(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, 0, &pkt);
	int i;

	if (rc == 0 && pkt.kind == ROCE_KIND_PFC) {
		if (h->npfc < MAXPFC) {
			h->pfc[h->npfc].at = now;
			h->pfc[h->npfc].pkt = pkt;
		}
		h->npfc++;
		for (i = 0; i < ROCE_NPRIO; i++) {
			if (!(pkt.pfc_cev & (1u << i)))
				continue;
			h->paused_until[i] = pkt.quanta[i] == 0 ? 0 :
				now + (roce_time_t)((unsigned __int128)pkt.quanta[i] * 512 * ROCE_SEC /
						    roce_link_rate(h->link));
		}
		roce_link_kick(h->link, h->dir);
	} else if (rc == 0 && pkt.kind == ROCE_KIND_ROCEV2 && pkt.icrc_ok) {
		if (h->rx < MAXREC) {
			h->rx_at[h->rx] = now;
			h->rx_ecn[h->rx] = pkt.ecn;
		}
		h->rx++;
		h->rx_ce += pkt.ecn == 3;
		h->rx_ttl = pkt.ttl;
		if (pkt.sport >= 49152 && pkt.sport < 49152 + MAXFLOWS)
			h->rx_flow[pkt.sport - 49152]++;
	} else {
		h->rx_bad++;
	}
	rte_pktmbuf_free(m);
}

static void host_send_pfc(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct host *h = arg;

	(void)eng;
	(void)t;
	h->pfc_pending = true;
	roce_link_kick(h->link, h->dir);
}

/* Send one PFC frame for @p prio at @p when; with @p every, repeat it until @p until. */
static void host_pfc_at(struct host *h, roce_time_t when, int prio, uint16_t quanta,
			roce_time_t every, roce_time_t until)
{
	h->pfc_cev = (uint16_t)(1u << prio);
	h->pfc_quanta = quanta;
	h->storm_every = every;
	h->storm_until = until;
	roce_timer_arm(h->eng, &h->pfc_timer, when);
}

static struct roce_ip_addr ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	struct roce_ip_addr x = { { a, b, c, d } };

	return x;
}

static void host_init(struct host *h, struct roce_engine *eng, struct roce_ip_addr addr)
{
	memset(h, 0, sizeof(*h));
	h->eng = eng;
	h->ip_ver = 4;
	h->addr = addr;
	h->nflows = 1;
	h->payload = 1024;
	h->dscp = 24;		/* priority 3 */
	h->ecn = 2;		/* ECT(0) */
	h->pcp = -1;
	roce_timer_init(&h->wake, host_kick, h);
	roce_timer_init(&h->pfc_timer, host_send_pfc, h);
}

static void host_start(struct host *h, struct roce_ip_addr dst, uint64_t frames)
{
	h->dst = dst;
	h->to_send = frames;
	roce_link_kick(h->link, h->dir);
}

/* ---- fixtures ---- */

static struct roce_engine *mk_engine(uint64_t seed)
{
	static unsigned int nth;
	char name[32];
	struct roce_engine_conf conf = { .clock = ROCE_CLOCK_VIRTUAL, .seed = seed,
					 .nb_mbufs = 32768, .mbuf_data = 2048 + RTE_PKTMBUF_HEADROOM,
					 .name = name };
	struct roce_engine *eng;

	snprintf(name, sizeof(name), "tsw%u", nth++);
	ck_assert_int_eq(roce_eal_init(NULL), 0);
	eng = roce_engine_create(&conf);
	ck_assert_ptr_nonnull(eng);
	return eng;
}

#define MAXLINKS 16
static struct roce_link *links[MAXLINKS];
static int nlinks;

/* Host @p h on port @p port of @p sw. */
static void connect_host(struct roce_engine *eng, struct roce_switch *sw, uint16_t port,
			 struct host *h, uint64_t rate, roce_time_t delay)
{
	struct roce_link_conf lc = { .rate_bps = rate, .delay = delay };
	struct roce_link_end a = roce_switch_port_end(sw, port);
	struct roce_link_end b = { .owner = h, .pull = host_pull, .rx = host_rx };
	struct roce_link *l = roce_link_create(eng, &lc, &a, &b);

	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(roce_switch_attach(sw, port, l, 0, NULL, 0), 0);
	h->link = l;
	h->dir = 1;
	ck_assert_int_lt(nlinks, MAXLINKS);
	links[nlinks++] = l;
}

static void connect_sw(struct roce_engine *eng, struct roce_switch *s0, uint16_t p0,
		       struct roce_switch *s1, uint16_t p1, uint64_t rate, roce_time_t delay)
{
	struct roce_link_conf lc = { .rate_bps = rate, .delay = delay };
	struct roce_link_end a = roce_switch_port_end(s0, p0);
	struct roce_link_end b = roce_switch_port_end(s1, p1);
	struct roce_link *l = roce_link_create(eng, &lc, &a, &b);

	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(roce_switch_attach(s0, p0, l, 0, s1, p1), 0);
	ck_assert_int_eq(roce_switch_attach(s1, p1, l, 1, s0, p0), 0);
	ck_assert_int_lt(nlinks, MAXLINKS);
	links[nlinks++] = l;
}

static void teardown(struct roce_engine *eng, struct roce_switch **sw, int n)
{
	int i;

	for (i = 0; i < nlinks; i++)
		roce_link_destroy(links[i]);
	nlinks = 0;
	for (i = 0; i < n; i++)
		roce_switch_destroy(sw[i]);
	roce_engine_destroy(eng);
}

static void route32(struct roce_switch *sw, struct roce_ip_addr a, uint16_t port)
{
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &a, 32, port), 0);
}

/* Sum of the switch's counters; checks the conservation identity of roce_switch.h. */
struct totals {
	uint64_t rx, tx, drop_tail, drop_hdrm, drop_wd, drop_other, queued, marked;
	uint64_t pause_tx, resume_tx, pause_rx;
};

static struct totals sw_totals(const struct roce_switch *sw, uint16_t nports)
{
	struct roce_switch_qstats q;
	struct roce_switch_pstats p;
	struct totals t = { 0 };
	uint16_t i;
	int prio;

	for (i = 0; i < nports; i++) {
		for (prio = 0; prio < ROCE_NPRIO; prio++) {
			roce_switch_qstats(sw, i, prio, &q);
			t.rx += q.rx_frames;
			t.tx += q.tx_frames;
			t.drop_tail += q.drop_tail;
			t.drop_hdrm += q.drop_headroom;
			t.drop_wd += q.drop_watchdog;
			t.queued += q.qframes;
			t.marked += q.ecn_marked;
			t.pause_tx += q.pause_tx;
			t.resume_tx += q.resume_tx;
			t.pause_rx += q.pause_rx;
		}
		roce_switch_pstats(sw, i, &p);
		t.drop_other += p.drop_no_route + p.drop_ttl;
	}
	ck_assert_uint_eq(t.rx, t.tx + t.drop_tail + t.drop_hdrm + t.drop_wd + t.drop_other +
			  t.queued);
	return t;
}

static uint64_t in_flight(void)
{
	struct roce_link_stats s;
	uint64_t n = 0;
	int i, d;

	for (i = 0; i < nlinks; i++)
		for (d = 0; d < 2; d++) {
			roce_link_stats(links[i], d, &s);
			n += s.in_flight;
		}
	return n;
}

/* ---- forwarding ---- */

START_TEST(test_forward)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_pstats ps;
	struct roce_switch_qstats qs;
	struct roce_ip_addr a6 = { { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 } };
	struct roce_ip_addr b6 = a6, c6 = a6, d6 = a6;
	struct roce_ip_addr net = ip4(10, 0, 1, 0);

	roce_switch_defaults(&c);
	c.nports = 3;
	c.name = "sw0";
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	ck_assert_str_eq(roce_switch_name(sw), "sw0");
	b6.b[15] = 2;
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 0, 1, 7));
	host_init(&H[2], eng, a6);
	H[2].ip_ver = 6;
	connect_host(eng, sw, 0, &H[0], 100 * GBPS, ROCE_US);
	connect_host(eng, sw, 1, &H[1], 100 * GBPS, ROCE_US);
	connect_host(eng, sw, 2, &H[2], 100 * GBPS, ROCE_US);
	ck_assert_int_eq(roce_switch_attach(sw, 1, links[0], 0, NULL, 0), -EINVAL); /* attached */
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 33, 1), -EINVAL);
	ck_assert_int_eq(roce_switch_add_route(sw, 5, &net, 8, 1), -EINVAL);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 8, 9), -EINVAL);
	/* a /24 wins over a /8 that points elsewhere; /0 catches the rest */
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 8, 2), 0);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 24, 1), 0);
	ck_assert_int_eq(roce_switch_add_route(sw, 6, &b6, 128, 2), 0);
	ck_assert_int_eq(roce_switch_add_route(sw, 6, &a6, 64, 0), 0);

	host_start(&H[0], ip4(10, 0, 1, 7), 100);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, 100);
	ck_assert_uint_eq(H[1].rx_bad, 0);	/* IP checksum and ICRC both right */
	ck_assert_uint_eq(H[1].rx_ttl, 63);

	/* IPv6: hop limit decremented, ICRC still right */
	H[2].ttl = 9;
	host_start(&H[2], b6, 10);		/* to itself through the switch: /128 wins */
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[2].rx, 10);
	ck_assert_uint_eq(H[2].rx_ttl, 8);
	ck_assert_uint_eq(H[2].rx_bad, 0);

	/* TTL 1 and no route: dropped and counted */
	H[0].ttl = 1;
	host_start(&H[0], ip4(10, 0, 1, 7), 3);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	H[0].ttl = 64;
	host_start(&H[0], ip4(11, 0, 0, 1), 4);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	roce_switch_pstats(sw, 0, &ps);
	ck_assert_uint_eq(ps.drop_ttl, 3);
	ck_assert_uint_eq(ps.drop_no_route, 4);
	ck_assert_uint_eq(ps.rx_frames, 107);
	roce_switch_qstats(sw, 0, 3, &qs);
	ck_assert_uint_eq(qs.rx_frames, 107);
	roce_switch_qstats(sw, 1, 3, &qs);
	ck_assert_uint_eq(qs.tx_frames, 100);
	ck_assert_uint_eq(qs.qbytes, 0);
	ck_assert_uint_gt(qs.max_qbytes, 0);
	ck_assert_uint_eq(H[1].rx, 100);
	ck_assert_uint_eq(roce_switch_buffer_used(sw, NULL), 0);

	/*
	 * Host routes are found by address: a second /128 beside b6 in the same /64 (the two
	 * differ only in their last eight bytes), added after lookups, takes its own frames and
	 * leaves b6 its own; an address of that /64 with no /128 of its own still takes the /64.
	 */
	c6.b[15] = 3;
	d6.b[15] = 9;
	ck_assert_int_eq(roce_switch_add_route(sw, 6, &c6, 128, 1), 0);
	host_start(&H[2], c6, 5);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, 105);
	host_start(&H[2], b6, 6);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[2].rx, 16);
	host_start(&H[2], d6, 7);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[0].rx, 7);
	ck_assert_uint_eq(H[1].rx, 105);
	ck_assert_uint_eq(H[2].rx, 16);
	sw_totals(sw, 3);
	teardown(eng, &sw, 1);
}
END_TEST

START_TEST(test_errors)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_link_end e;

	roce_switch_defaults(&c);
	c.nports = 0;
	errno = 0;
	ck_assert_ptr_null(roce_switch_create(eng, &c));
	ck_assert_int_eq(errno, EINVAL);
	c.nports = ROCE_SWITCH_MAX_PORTS + 1;
	ck_assert_ptr_null(roce_switch_create(eng, &c));
	c.nports = 4;
	c.buffer = 4 * 8 * c.reserved;		/* nothing left to share */
	ck_assert_ptr_null(roce_switch_create(eng, &c));
	roce_switch_defaults(&c);
	c.prio[3].kmax = c.prio[3].kmin - 1;
	ck_assert_ptr_null(roce_switch_create(eng, &c));
	ck_assert_ptr_null(roce_switch_create(NULL, &c));
	e = roce_switch_port_end(NULL, 0);
	ck_assert_ptr_null(e.pull);
	roce_switch_destroy(NULL);
	ck_assert_int_eq(roce_switch_find_deadlock(NULL, 0, NULL, 0), 0);
	roce_engine_destroy(eng);
}
END_TEST

/* ---- classification and scheduling ---- */

START_TEST(test_classify)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_qstats qs;

	roce_switch_defaults(&c);
	c.trust_pcp = true;
	c.dscp_prio[46] = 5;			/* EF */
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 0, 0, 2));
	connect_host(eng, sw, 0, &H[0], 100 * GBPS, ROCE_US);
	connect_host(eng, sw, 1, &H[1], 100 * GBPS, ROCE_US);
	route32(sw, H[1].addr, 1);
	H[0].pcp = 2;				/* tagged: the PCP wins over DSCP 24 */
	host_start(&H[0], H[1].addr, 5);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	H[0].pcp = -1;				/* untagged: DSCP */
	H[0].dscp = 46;
	host_start(&H[0], H[1].addr, 7);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	roce_switch_qstats(sw, 0, 2, &qs);
	ck_assert_uint_eq(qs.rx_frames, 5);
	roce_switch_qstats(sw, 1, 2, &qs);
	ck_assert_uint_eq(qs.tx_frames, 5);
	roce_switch_qstats(sw, 0, 5, &qs);
	ck_assert_uint_eq(qs.rx_frames, 7);
	roce_switch_qstats(sw, 0, 3, &qs);
	ck_assert_uint_eq(qs.rx_frames, 0);
	ck_assert_uint_eq(H[1].rx, 12);
	ck_assert_uint_eq(H[1].rx_bad, 0);
	teardown(eng, &sw, 1);
}
END_TEST

/*
 * Three senders at line rate into one port: priority 6 (strict) at 30G gets all it sends;
 * priorities 0 and 1 (DWRR, weights 1 and 3) share the other 70G 1:3.
 */
START_TEST(test_scheduling)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_qstats q0, q1, q6;
	double share;
	int i;

	roce_switch_defaults(&c);
	c.nports = 4;
	c.prio[1].weight = 3;
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	for (i = 0; i < 4; i++) {
		host_init(&H[i], eng, ip4(10, 0, 0, (uint8_t)(i + 1)));
		connect_host(eng, sw, (uint16_t)i, &H[i], 100 * GBPS, ROCE_US);
		route32(sw, H[i].addr, (uint16_t)i);
	}
	H[0].dscp = 0;
	H[1].dscp = 8;
	H[2].dscp = 48;
	H[2].rate_bps = 30 * GBPS;
	for (i = 0; i < 3; i++)
		host_start(&H[i], H[3].addr, 100000);
	roce_engine_run(eng, 2 * ROCE_MS);
	roce_switch_qstats(sw, 3, 0, &q0);
	roce_switch_qstats(sw, 3, 1, &q1);
	roce_switch_qstats(sw, 3, 6, &q6);
	ck_assert_uint_gt(q0.qframes, 0);	/* both DWRR queues stayed backlogged */
	ck_assert_uint_gt(q1.qframes, 0);
	ck_assert_uint_le(q6.max_qbytes, 2 * 1082);	/* strict: never waits behind them */
	ck_assert_uint_le(H[2].sent - q6.tx_frames, 6);	/* the rest on the 1 us wire */
	share = (double)q1.tx_bytes / (double)(q0.tx_bytes + q1.tx_bytes);
	ck_assert_msg(share > 0.74 && share < 0.76, "weight-3 share %.4f", share);
	/* 70G left over: the DWRR pair got it all */
	ck_assert_uint_gt((q0.tx_bytes + q1.tx_bytes + q6.tx_bytes) * 8 * 1000, 97 * GBPS * 2);
	teardown(eng, &sw, 1);
}
END_TEST

/* ---- ECMP ---- */

/* A 3-port switch: a sender 10.0.0.1 on port 0, two receivers 10.1.0.1 and .2 on 1 and 2. */
static struct roce_switch *ecmp_switch(struct roce_engine *eng, uint32_t seed)
{
	struct roce_switch_conf c;
	struct roce_switch *sw;

	roce_switch_defaults(&c);
	c.nports = 3;
	c.ecmp_seed = seed;
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 1, 0, 1));
	host_init(&H[2], eng, ip4(10, 1, 0, 2));
	for (uint16_t i = 0; i < 3; i++)
		connect_host(eng, sw, i, &H[i], 100 * GBPS, ROCE_US);
	return sw;
}

/* The member of an ECMP group of @p n that a UDP/4791 flow takes, from its 5-tuple alone. */
static uint32_t ecmp_member(uint32_t seed, struct roce_ip_addr src, struct roce_ip_addr dst,
			    uint16_t sport, uint32_t n)
{
	uint32_t key[10];

	memcpy(key, src.b, 16);
	memcpy(key + 4, dst.b, 16);
	key[8] = (uint32_t)sport << 16 | ROCE_UDP_PORT;
	key[9] = 17;		/* UDP */
	return rte_jhash_32b(key, 10, seed) % n;
}

static void ecmp_run(uint32_t seed, uint64_t per_path[2], uint32_t path_of[MAXFLOWS])
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch *sw;
	struct roce_ip_addr net = ip4(10, 1, 0, 0);
	uint32_t f;

	sw = ecmp_switch(eng, seed);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 16, 1), 0);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 16, 2), 0);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 16, 2), 0);	/* no duplicate */
	H[0].nflows = MAXFLOWS;
	H[0].payload = 64;
	host_start(&H[0], ip4(10, 1, 2, 3), 20 * MAXFLOWS);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	per_path[0] = H[1].rx;
	per_path[1] = H[2].rx;
	ck_assert_uint_eq(H[1].rx + H[2].rx, 20 * MAXFLOWS);
	for (f = 0; f < MAXFLOWS; f++) {
		/* one flow, one path: all its 20 frames on one side */
		ck_assert_msg((H[1].rx_flow[f] == 20 && H[2].rx_flow[f] == 0) ||
			      (H[1].rx_flow[f] == 0 && H[2].rx_flow[f] == 20),
			      "flow %u split %lu/%lu", f, H[1].rx_flow[f], H[2].rx_flow[f]);
		path_of[f] = H[2].rx_flow[f] != 0;
		/*
		 * ... the member that rte_jhash of its 5-tuple and the seed names (docs/fabric.md),
		 * though its frames take turns with 63 others' through the switch's flow cache
		 */
		ck_assert_uint_eq(path_of[f], ecmp_member(seed, ip4(10, 0, 0, 1), ip4(10, 1, 2, 3),
							  (uint16_t)(49152 + f), 2));
	}
	teardown(eng, &sw, 1);
}

START_TEST(test_ecmp)
{
	uint64_t pp[2], pp2[2];
	uint32_t a[MAXFLOWS], b[MAXFLOWS], f, moved = 0;

	ecmp_run(0, pp, a);
	/* 64 flows over 2 paths: both used, neither with more than 3/4 */
	ck_assert_uint_gt(pp[0], 20 * MAXFLOWS / 4);
	ck_assert_uint_gt(pp[1], 20 * MAXFLOWS / 4);
	ecmp_run(12345, pp2, b);
	for (f = 0; f < MAXFLOWS; f++)
		moved += a[f] != b[f];
	ck_assert_uint_gt(moved, 0);		/* the seed changes the hash */
}
END_TEST

/*
 * Twice as many host routes as the route cache has slots (1 024): destinations that share a
 * slot take turns in it, and every frame still leaves by its own route, whatever the slot
 * function makes of the addresses (they differ in their low eleven bits and in the upper ones).
 */
START_TEST(test_route_cache)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	int i, round;

	roce_switch_defaults(&c);
	c.nports = 3;
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 9, 0, 1));
	host_init(&H[2], eng, ip4(10, 9, 0, 2));
	for (i = 0; i < 3; i++)
		connect_host(eng, sw, (uint16_t)i, &H[i], 100 * GBPS, ROCE_US);
	for (i = 0; i < 2048; i++)
		route32(sw, ip4((uint8_t)(10 + (i >> 10)), (uint8_t)(i >> 8), (uint8_t)i, 1),
			(uint16_t)(1 + (i & 1)));
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 2048; i++) {
			int k = (i * 7 + round) % 2048;

			host_start(&H[0], ip4((uint8_t)(10 + (k >> 10)), (uint8_t)(k >> 8),
					      (uint8_t)k, 1), 1);
			roce_engine_run(eng, ROCE_TIME_NEVER);
		}
	}
	ck_assert_uint_eq(H[1].rx, 2048);
	ck_assert_uint_eq(H[2].rx, 2048);
	ck_assert_uint_eq(H[1].rx_bad + H[2].rx_bad, 0);
	sw_totals(sw, 3);
	teardown(eng, &sw, 1);
}
END_TEST

/* A host that moves: set_route replaces a prefix's ECMP group by one port, or adds it. */
START_TEST(test_set_route)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch *sw = ecmp_switch(eng, 0);
	struct roce_ip_addr net = ip4(10, 1, 0, 0), host = ip4(10, 2, 0, 9);

	ck_assert_int_eq(roce_switch_set_route(sw, 4, &net, 33, 1), -EINVAL);
	ck_assert_int_eq(roce_switch_set_route(sw, 4, &net, 16, 3), -EINVAL);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 16, 1), 0);
	ck_assert_int_eq(roce_switch_add_route(sw, 4, &net, 16, 2), 0);
	H[0].nflows = MAXFLOWS;
	H[0].payload = 64;
	host_start(&H[0], ip4(10, 1, 2, 3), 4 * MAXFLOWS);	/* warms the route cache */
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_gt(H[1].rx, 0);
	ck_assert_uint_gt(H[2].rx, 0);
	/* the group becomes port 2 alone: no flow reaches port 1 any more, cached or not */
	ck_assert_int_eq(roce_switch_set_route(sw, 4, &net, 16, 2), 0);
	H[1].rx = H[2].rx = 0;
	host_start(&H[0], ip4(10, 1, 2, 3), 4 * MAXFLOWS);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, 0);
	ck_assert_uint_eq(H[2].rx, 4 * MAXFLOWS);
	/* a prefix not there yet is added */
	ck_assert_int_eq(roce_switch_set_route(sw, 4, &host, 32, 1), 0);
	host_start(&H[0], host, 5);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, 5);
	teardown(eng, &sw, 1);
}
END_TEST

/* ---- N:1 incast into one port ---- */

struct incast_res {
	uint64_t sent, delivered, bad;
	struct totals t;
	uint64_t hdrm;			/* headroom the switch used per (port, prio) */
	uint64_t max_used;
	uint64_t npfc;			/* PFC frames at the senders */
};

static struct roce_switch *incast_sw;

/* 8 senders at line rate to one sink, priority 3, lossless; buffer small enough for PFC. */
static struct incast_res incast(uint64_t seed, uint64_t headroom, uint16_t quanta, uint64_t frames,
				bool ecn, FILE *trace)
{
	struct roce_engine *eng = mk_engine(seed);
	struct roce_switch_conf c;
	struct incast_res r = { 0 };
	const int n = 8;
	int i;

	roce_switch_defaults(&c);
	c.nports = n + 1;
	c.buffer = 2 << 20;
	c.headroom = headroom;
	c.pfc_quanta = quanta;
	c.prio[3].ecn = ecn;
	c.prio[3].kmin = 20000;
	c.prio[3].kmax = 200000;
	incast_sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(incast_sw);
	roce_switch_set_trace(incast_sw, trace);
	for (i = 0; i <= n; i++) {
		host_init(&H[i], eng, ip4(10, 0, 0, (uint8_t)(i + 1)));
		connect_host(eng, incast_sw, (uint16_t)i, &H[i], 100 * GBPS, 2 * ROCE_US);
		route32(incast_sw, H[i].addr, (uint16_t)i);
	}
	for (i = 0; i < n; i++)
		host_start(&H[i], H[n].addr, frames);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	for (i = 0; i < n; i++) {
		r.sent += H[i].sent;
		r.npfc += H[i].npfc;
	}
	r.delivered = H[n].rx;
	r.bad = H[n].rx_bad;
	r.t = sw_totals(incast_sw, (uint16_t)(n + 1));
	r.hdrm = roce_switch_headroom(incast_sw, 0);
	roce_switch_buffer_used(incast_sw, &r.max_used);
	ck_assert_uint_eq(roce_switch_buffer_used(incast_sw, NULL), 0);
	teardown(eng, &incast_sw, 1);
	return r;
}

/* 2:1 of 64-byte payloads into port 0 with buffer cells of @p cell bytes (0: exact bytes). */
static void cells_run(uint32_t cell, uint64_t *max_used, uint64_t *max_qbytes, uint64_t *frame_len)
{
	struct roce_engine *eng = mk_engine(3);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_qstats q;

	roce_switch_defaults(&c);
	c.nports = 3;
	c.cell = cell;
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	for (int i = 0; i < 3; i++) {
		host_init(&H[i], eng, ip4(10, 0, 0, (uint8_t)(i + 1)));
		H[i].payload = 64;
		connect_host(eng, sw, (uint16_t)i, &H[i], 100 * GBPS, ROCE_US);
		route32(sw, H[i].addr, (uint16_t)i);
	}
	host_start(&H[1], H[0].addr, 300);
	host_start(&H[2], H[0].addr, 300);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[0].rx, 600);
	roce_switch_qstats(sw, 0, 3, &q);
	*max_qbytes = q.max_qbytes;
	*frame_len = q.tx_bytes / q.tx_frames;
	ck_assert_uint_eq(q.tx_bytes % q.tx_frames, 0);		/* one frame size */
	ck_assert_uint_eq(roce_switch_buffer_used(sw, max_used), 0);	/* all released */
	teardown(eng, &sw, 1);
}

/* A frame takes whole cells of the buffer, and gives them all back. */
START_TEST(test_buffer_cells)
{
	uint64_t used0, q0, len0, used1, q1, len1;

	cells_run(0, &used0, &q0, &len0);
	cells_run(512, &used1, &q1, &len1);
	ck_assert_uint_lt(len0, 512);
	ck_assert_uint_gt(q0, 4 * len0);		/* a queue did build */
	ck_assert_uint_eq(used0, q0);			/* bytes: the buffer holds the queue */
	ck_assert_uint_eq(q1, q0);			/* the same frames, at the same times */
	ck_assert_uint_eq(used1, q1 / len1 * 512);	/* cells: 512 bytes a frame */
}
END_TEST

START_TEST(test_incast_headroom_sized)
{
	struct incast_res r = incast(1, 0, 0xffff, 3000, false, NULL);

	/* 2 x 2 us x 100G / 8 + 2 jumbo frames + PFC frame + 394 quanta (100G response) */
	ck_assert_uint_eq(r.hdrm, 50000 + 2 * (9234 + 24) + 84 + 394 * 64);
	ck_assert_uint_eq(r.sent, 8 * 3000);
	ck_assert_uint_gt(r.t.pause_tx, 0);	/* PFC did act */
	ck_assert_uint_eq(r.t.drop_hdrm, 0);
	ck_assert_uint_eq(r.t.drop_tail, 0);
	ck_assert_uint_eq(r.delivered, r.sent);
	ck_assert_uint_eq(r.bad, 0);
	ck_assert_uint_le(r.max_used, 2 << 20);
}
END_TEST

/*
 * A port's speed changes (100G -> 40G -> 100G over 2 us of cable, jumbo MTU): its headroom is
 * sized again (the same formula as test_incast_headroom_sized, at 40G: 20 000 B in flight and
 * 118 quanta), and the shared pool takes or gives the difference for each lossless priority.
 * A fixed headroom stays; a buffer too small for the larger size keeps the old one.
 */
START_TEST(test_headroom_resize)
{
	const uint64_t h100 = 50000 + 2 * (9234 + 24) + 84 + 394 * 64;
	const uint64_t h40 = 20000 + 2 * (9234 + 24) + 84 + 118 * 64;
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw[3];
	struct host h[3];
	uint64_t nlossless = 0, reserved;

	memset(h, 0, sizeof(h));
	roce_switch_defaults(&c);
	c.nports = 2;
	for (int prio = 0; prio < ROCE_NPRIO; prio++)
		nlossless += c.prio[prio].lossless;
	ck_assert_uint_gt(nlossless, 0);
	reserved = (uint64_t)c.nports * ROCE_NPRIO * c.reserved;

	sw[0] = roce_switch_create(eng, &c);
	connect_host(eng, sw[0], 0, &h[0], 100 * GBPS, 2 * ROCE_US);
	ck_assert_uint_eq(roce_switch_headroom(sw[0], 0), h100);
	ck_assert_int_eq(roce_link_set_rate(h[0].link, 40 * GBPS), 0);
	ck_assert_int_eq(roce_switch_port_resize(sw[0], 0), 0);
	ck_assert_uint_eq(roce_switch_headroom(sw[0], 0), h40);
	ck_assert_int_eq(roce_link_set_rate(h[0].link, 100 * GBPS), 0);
	ck_assert_int_eq(roce_switch_port_resize(sw[0], 0), 0);
	ck_assert_uint_eq(roce_switch_headroom(sw[0], 0), h100);
	ck_assert_int_eq(roce_switch_port_resize(sw[0], 1), -EINVAL);	/* not attached */
	ck_assert_int_eq(roce_switch_port_resize(NULL, 0), -EINVAL);

	/* a fixed headroom is the operator's: left alone */
	c.headroom = 64 << 10;
	sw[1] = roce_switch_create(eng, &c);
	connect_host(eng, sw[1], 0, &h[1], 40 * GBPS, 2 * ROCE_US);
	ck_assert_int_eq(roce_link_set_rate(h[1].link, 100 * GBPS), 0);
	ck_assert_int_eq(roce_switch_port_resize(sw[1], 0), 0);
	ck_assert_uint_eq(roce_switch_headroom(sw[1], 0), 64 << 10);

	/* room for the 40G headroom only: the 100G one is refused, the 40G one kept */
	c.headroom = 0;
	c.buffer = reserved + nlossless * h40 + 1000;
	sw[2] = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw[2]);
	connect_host(eng, sw[2], 0, &h[2], 40 * GBPS, 2 * ROCE_US);
	ck_assert_int_eq(roce_link_set_rate(h[2].link, 100 * GBPS), 0);
	ck_assert_int_eq(roce_switch_port_resize(sw[2], 0), -ENOSPC);
	ck_assert_uint_eq(roce_switch_headroom(sw[2], 0), h40);
	teardown(eng, sw, 3);
}
END_TEST

START_TEST(test_incast_headroom_small)
{
	/* one MTU of headroom: less than the round trip of the pause */
	struct incast_res r = incast(1, 4096, 0xffff, 3000, false, NULL);

	ck_assert_uint_eq(r.hdrm, 4096);
	ck_assert_uint_gt(r.t.pause_tx, 0);
	ck_assert_uint_gt(r.t.drop_hdrm, 0);
	ck_assert_uint_eq(r.delivered + r.t.drop_hdrm, r.sent);
}
END_TEST

/* The PFC frames the senders got: 802.1Qbb, priority 3 only, our quanta or 0, from port i's MAC. */
START_TEST(test_pfc_frames)
{
	const uint16_t quanta = 0x0400;		/* 4096 ns at 100G: refreshed every 2 us */
	char *buf = NULL;
	size_t blen = 0;
	FILE *tr = open_memstream(&buf, &blen);
	struct incast_res r;
	uint32_t i, k, nxoff = 0, nxon = 0;

	ck_assert_ptr_nonnull(tr);
	r = incast(1, 0, quanta, 3000, false, tr);
	fclose(tr);
	ck_assert_ptr_nonnull(strstr(buf, " xoff ("));
	ck_assert_ptr_nonnull(strstr(buf, " xon"));
	free(buf);
	ck_assert_uint_eq(r.t.drop_hdrm, 0);
	ck_assert_uint_eq(r.delivered, r.sent);
	ck_assert_uint_eq(r.npfc, r.t.pause_tx + r.t.resume_tx);	/* one priority per frame */
	for (i = 0; i < 8; i++) {
		ck_assert_uint_le(H[i].npfc, MAXPFC);
		for (k = 0; k < H[i].npfc; k++) {
			const struct roce_pkt *p = &H[i].pfc[k].pkt;

			ck_assert_int_eq(p->kind, ROCE_KIND_PFC);
			ck_assert_uint_eq(p->pfc_cev, 1u << 3);
			ck_assert_uint_eq(p->dmac[0], 0x01);
			ck_assert_uint_eq(p->dmac[5], 0x01);
			ck_assert_uint_eq(p->smac[5], i);	/* conf.mac + port */
			ck_assert(p->quanta[3] == quanta || p->quanta[3] == 0);
			if (p->quanta[3]) {
				nxoff++;
				/* a refresh arrives before the last XOFF's pause ran out */
				if (k > 0 && H[i].pfc[k - 1].pkt.quanta[3])
					ck_assert_uint_lt(H[i].pfc[k].at - H[i].pfc[k - 1].at,
							  (roce_time_t)quanta * 512 * 10);
			} else {
				nxon++;
			}
		}
	}
	ck_assert_uint_eq(nxoff, r.t.pause_tx);
	ck_assert_uint_eq(nxon, r.t.resume_tx);
	ck_assert_uint_gt(nxoff, nxon);		/* refreshes while congested */
}
END_TEST

/* ---- honouring PFC: the switch's egress pauses for quanta x 512 bit times ---- */

START_TEST(test_pause_timing)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_qstats qs;
	const roce_time_t d = ROCE_US, q = 1000, pause = q * 512 * 10;	/* 5.12 us at 100G */
	roce_time_t tp, first_after = 0, ser;
	uint64_t i;

	roce_switch_defaults(&c);
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 0, 0, 2));
	connect_host(eng, sw, 0, &H[0], 100 * GBPS, d);
	connect_host(eng, sw, 1, &H[1], 100 * GBPS, d);
	route32(sw, H[1].addr, 1);
	host_pfc_at(&H[1], 20 * ROCE_US, 3, (uint16_t)q, 0, 0);
	host_start(&H[0], H[1].addr, 2000);
	roce_engine_run(eng, 100 * ROCE_US);
	ck_assert_uint_eq(H[1].pfc_sent_at, 20 * ROCE_US);
	roce_switch_qstats(sw, 1, 3, &qs);
	ck_assert_uint_eq(qs.pause_rx, 1);
	ck_assert_uint_eq(qs.paused_time, pause);
	ck_assert(!qs.paused);
	/* the PFC frame reaches the switch at tp; the next frame it starts leaves at tp + pause */
	tp = 20 * ROCE_US + ser_ps(60, 100 * GBPS) + d;
	ser = ser_ps(1082, 100 * GBPS);
	for (i = 0; i < H[1].rx && i < MAXREC; i++) {
		if (H[1].rx_at[i] > tp + ser + d) {
			first_after = H[1].rx_at[i];
			break;
		}
	}
	ck_assert_uint_eq(first_after, tp + pause + ser + d);
	/* XON resumes at once */
	host_pfc_at(&H[1], roce_engine_now(eng), 3, 0xffff, 0, 0);
	roce_engine_run(eng, roce_engine_now(eng) + 10 * ROCE_US);
	roce_switch_qstats(sw, 1, 3, &qs);
	ck_assert(qs.paused);
	host_pfc_at(&H[1], roce_engine_now(eng), 3, 0, 0, 0);
	roce_engine_run(eng, roce_engine_now(eng) + 10 * ROCE_US);
	roce_switch_qstats(sw, 1, 3, &qs);
	ck_assert(!qs.paused);
	ck_assert_uint_eq(qs.pause_rx, 2);
	ck_assert_uint_eq(qs.resume_rx, 1);
	ck_assert_uint_eq(qs.paused_time, pause + 10 * ROCE_US);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, 2000);
	teardown(eng, &sw, 1);
}
END_TEST

/*
 * rocelab switch shapes a 10G port's egress with a slower link: pause quanta must still be
 * timed at the wire's rate (pfc_rate_bps), or a peer's 1000 quanta would stop the queue 10x
 * longer than the peer meant.
 */
START_TEST(test_pause_rate)
{
	struct roce_engine *eng = mk_engine(1);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_qstats qs;
	const uint16_t q = 1000;

	roce_switch_defaults(&c);
	c.pfc_rate_bps = 10 * GBPS;
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 0, 0, 2));
	connect_host(eng, sw, 0, &H[0], GBPS, ROCE_US);
	connect_host(eng, sw, 1, &H[1], GBPS, ROCE_US);
	route32(sw, H[1].addr, 1);
	host_pfc_at(&H[1], 20 * ROCE_US, 3, q, 0, 0);
	host_start(&H[0], H[1].addr, 200);
	roce_engine_run(eng, 500 * ROCE_US);
	roce_switch_qstats(sw, 1, 3, &qs);
	ck_assert_uint_eq(qs.pause_rx, 1);
	/* 1000 x 512 bit times at 10 Gb/s: 51.2 us (at the link's 1 Gb/s it would be 512 us) */
	ck_assert_uint_eq(qs.paused_time, (roce_time_t)q * 512 * 100);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, 200);
	teardown(eng, &sw, 1);
}
END_TEST

/* rocelab switch --set: a scenario's [switch] and [priority.N] keys, and one line for a bad one. */
START_TEST(test_live_set)
{
	const char *good[] = { "priority.0.lossless=yes", "pfc=static", "xoff=128K",
			       "switch.buffer=24M", "priority.3.kmin=100K" };
	const char *bad_key[] = { "bogus=1" }, *bad_val[] = { "headroom=lots" };
	struct roce_switch_conf c;
	char err[256];

	roce_live_defaults(&c);
	ck_assert_uint_eq(c.buffer, 12u << 20);
	ck_assert_uint_eq(c.headroom, 2u << 20);
	ck_assert_int_eq(roce_live_set(&c, good, 5, err, sizeof(err)), 0);
	ck_assert(c.prio[0].lossless && c.prio[3].lossless);
	ck_assert_int_eq(c.pfc_mode, ROCE_PFC_STATIC);
	ck_assert_uint_eq(c.xoff, 128 * 1024);
	ck_assert_uint_eq(c.buffer, 24u << 20);
	ck_assert_uint_eq(c.headroom, 2u << 20);	/* the live default survives other settings */
	ck_assert_uint_eq(c.prio[3].kmin, 100 * 1024);
	ck_assert_int_eq(roce_live_set(&c, bad_key, 1, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bogus"));
	ck_assert_int_eq(roce_live_set(&c, bad_val, 1, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "lots"));
}
END_TEST

/* ---- ECN: RED at a held queue depth ---- */

/*
 * Hold the egress queue at @p depth frames: the sink pauses the switch, the sender (same rate as
 * the sink's link) fills the queue, then the sink resumes it; from then on a frame arrives for
 * each one that leaves. @return the fraction of the first @p n frames marked.
 */
static double red_fraction(uint32_t depth, uint64_t kmin, uint64_t kmax, double pmax, uint32_t n,
			   uint32_t *flen)
{
	struct roce_engine *eng = mk_engine(7);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct roce_switch_qstats qs;
	roce_time_t ser, txon;
	uint64_t i, marked = 0;

	roce_switch_defaults(&c);
	c.prio[0].ecn = true;			/* lossy: PFC stays out of it */
	c.prio[0].kmin = kmin;
	c.prio[0].kmax = kmax;
	c.prio[0].pmax = pmax;
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	host_init(&H[0], eng, ip4(10, 0, 0, 1));
	host_init(&H[1], eng, ip4(10, 0, 0, 2));
	H[0].dscp = 0;
	connect_host(eng, sw, 0, &H[0], 100 * GBPS, ROCE_US);
	connect_host(eng, sw, 1, &H[1], 100 * GBPS, ROCE_US);
	route32(sw, H[1].addr, 1);
	host_pfc_at(&H[1], 0, 0, 0xffff, 0, 0);
	host_start(&H[0], H[1].addr, n + depth);
	ser = ser_ps(1024 + 14 + 20 + 8 + 12 + 4, 100 * GBPS);
	/*
	 * The pause reaches the switch before the first frame; frame k arrives at d + (k+1) ser.
	 * The XON arrives half-way between frames depth-1 and depth: from then on frames arrive
	 * half-way between departures, so each leaving frame sees exactly @p depth frames.
	 */
	txon = depth * ser + ser / 2 - ser_ps(60, 100 * GBPS);
	roce_engine_run(eng, txon);
	host_pfc_at(&H[1], txon, 0, 0, 0, 0);
	roce_engine_run(eng, ROCE_US + depth * ser + ser / 2 - 1);
	roce_switch_qstats(sw, 1, 0, &qs);
	ck_assert_uint_eq(qs.qframes, depth);
	*flen = (uint32_t)(qs.qbytes / depth);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	ck_assert_uint_eq(H[1].rx, n + depth);
	for (i = 0; i < n; i++)
		marked += H[1].rx_ecn[i] == 3;
	roce_switch_qstats(sw, 1, 0, &qs);
	ck_assert_uint_le(qs.max_qbytes, (uint64_t)(depth + 2) * *flen);
	teardown(eng, &sw, 1);
	return (double)marked / n;
}

START_TEST(test_ecn_red)
{
	const uint32_t n = 20000;
	uint32_t len = 1082;		/* RDMA_WRITE_MIDDLE, 1024 B payload, IPv4 */
	uint64_t kmin = 20 * len, kmax = 220 * len;
	double f, lo, hi;

	/* depth 120 frames: the dequeued frame sees 120 or 121 frames (itself included) */
	f = red_fraction(120, kmin, kmax, 0.8, n, &len);
	ck_assert_uint_eq(len, 1082);
	lo = 0.8 * (120.0 * len - kmin) / (kmax - kmin);
	hi = 0.8 * (121.0 * len - kmin) / (kmax - kmin);
	ck_assert_msg(f > lo - 0.02 && f < hi + 0.02, "marked %.4f, RED says %.4f..%.4f", f, lo, hi);

	f = red_fraction(60, kmin, kmax, 0.8, n, &len);
	lo = 0.8 * (60.0 * len - kmin) / (kmax - kmin);
	hi = 0.8 * (61.0 * len - kmin) / (kmax - kmin);
	ck_assert_msg(f > lo - 0.02 && f < hi + 0.02, "marked %.4f, RED says %.4f..%.4f", f, lo, hi);

	ck_assert(red_fraction(10, kmin, kmax, 0.8, 2000, &len) == 0.0);	/* below kmin */
	ck_assert(red_fraction(240, kmin, kmax, 0.8, 2000, &len) == 1.0);	/* above kmax */
}
END_TEST

/* ---- conservation under lossy overload ---- */

START_TEST(test_conservation)
{
	struct roce_engine *eng = mk_engine(3);
	struct roce_switch_conf c;
	struct roce_switch *sw;
	struct totals t;
	uint64_t sent, got;
	int i, step;

	roce_switch_defaults(&c);
	c.nports = 5;
	c.buffer = 256 * 1024;
	c.prio[3].lossless = false;		/* every priority lossy: no headroom set aside */
	sw = roce_switch_create(eng, &c);
	ck_assert_ptr_nonnull(sw);
	for (i = 0; i < 5; i++) {
		host_init(&H[i], eng, ip4(10, 0, 0, (uint8_t)(i + 1)));
		H[i].dscp = (uint8_t)(8 * (i % 3));	/* priorities 0, 1, 2: lossy */
		H[i].payload = 256 + 512 * (uint32_t)i;
		connect_host(eng, sw, (uint16_t)i, &H[i], (i == 4 ? 40 : 100) * GBPS, ROCE_US);
		route32(sw, H[i].addr, (uint16_t)i);
	}
	for (i = 0; i < 4; i++)
		host_start(&H[i], H[4].addr, 5000);
	/* at every step: sent = delivered + dropped + queued + on the wire */
	for (step = 1; step <= 40; step++) {
		roce_engine_run(eng, (roce_time_t)step * 10 * ROCE_US);
		t = sw_totals(sw, 5);
		for (sent = 0, i = 0; i < 4; i++)
			sent += H[i].sent;
		got = H[4].rx;
		ck_assert_uint_eq(sent, got + t.drop_tail + t.drop_hdrm + t.drop_wd + t.drop_other +
				  t.queued + in_flight());
	}
	roce_engine_run(eng, ROCE_TIME_NEVER);
	t = sw_totals(sw, 5);
	ck_assert_uint_gt(t.drop_tail, 0);	/* 400G into 40G with 256 KB */
	ck_assert_uint_eq(t.queued, 0);
	ck_assert_uint_eq(20000, H[4].rx + t.drop_tail);
	ck_assert_uint_eq(H[4].rx_bad, 0);
	teardown(eng, &sw, 1);
}
END_TEST

/* ---- a 3-switch ring: cyclic buffer dependency ---- */

/*
 * sw_i: port 0 host i, port 1 to sw_(i+1), port 2 from sw_(i-1). Host i sends to host i+2,
 * two hops clockwise, so every ring link carries a host's flow and a transit flow: the classic
 * cyclic buffer dependency of Hu et al. (HotNets'16).
 */
static void ring(roce_time_t watchdog, char *report, size_t rlen, int *found, uint64_t prog[2],
		 uint64_t *wd_drops)
{
	struct roce_engine *eng = mk_engine(5);
	struct roce_switch_conf c;
	struct roce_switch *sw[3];
	struct totals t;
	int i, j;

	roce_switch_defaults(&c);
	c.nports = 3;
	c.buffer = 1 << 20;
	c.pfc_mode = ROCE_PFC_STATIC;
	c.xoff = 40000;
	c.watchdog = watchdog;
	for (i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "sw%d", i);
		c.name = name;
		sw[i] = roce_switch_create(eng, &c);
		ck_assert_ptr_nonnull(sw[i]);
		if (getenv("TEST_TRACE") != NULL)
			roce_switch_set_trace(sw[i], stderr);
	}
	for (i = 0; i < 3; i++) {
		host_init(&H[i], eng, ip4(10, 0, 0, (uint8_t)(i + 1)));
		connect_host(eng, sw[i], 0, &H[i], 100 * GBPS, ROCE_US);
		connect_sw(eng, sw[i], 1, sw[(i + 1) % 3], 2, 100 * GBPS, ROCE_US);
	}
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			route32(sw[i], H[j].addr, i == j ? 0 : 1);
	for (i = 0; i < 3; i++) {
		H[i].nflows = 4;
		host_start(&H[i], H[(i + 2) % 3].addr, 1000000);
		/* each sink pauses its switch for 100 us: the ring fills behind it */
		host_pfc_at(&H[i], 10 * ROCE_US, 3, 0xffff, 50 * ROCE_US, 110 * ROCE_US);
	}
	roce_engine_run(eng, 1 * ROCE_MS);
	*found = roce_switch_find_deadlock(sw, 3, report, rlen);
	prog[0] = H[0].rx + H[1].rx + H[2].rx;
	roce_engine_run(eng, 2 * ROCE_MS);
	prog[1] = H[0].rx + H[1].rx + H[2].rx;
	*wd_drops = 0;
	for (i = 0; i < 3; i++) {
		t = sw_totals(sw[i], 3);
		*wd_drops += t.drop_wd;
		ck_assert_uint_eq(t.drop_hdrm, 0);
	}
	for (i = 0; i < 3; i++)
		H[i].to_send = 0;
	teardown(eng, sw, 3);
}

START_TEST(test_deadlock)
{
	char rep[256];
	uint64_t prog[2], wd;
	int found;

	ring(0, rep, sizeof(rep), &found, prog, &wd);
	ck_assert_msg(found == 1, "no deadlock found");
	ck_assert_ptr_nonnull(strstr(rep, "sw0 p1 prio 3"));
	ck_assert_ptr_nonnull(strstr(rep, "sw1 p1 prio 3"));
	ck_assert_ptr_nonnull(strstr(rep, "sw2 p1 prio 3"));
	ck_assert_ptr_nonnull(strstr(rep, " -> "));
	ck_assert_uint_eq(prog[0], prog[1]);	/* stuck: nothing delivered for 1 ms */
	ck_assert_uint_eq(wd, 0);

	/* the watchdog drains the stuck queues: traffic moves again */
	ring(200 * ROCE_US, rep, sizeof(rep), &found, prog, &wd);
	ck_assert_uint_gt(wd, 0);
	ck_assert_uint_gt(prog[1], prog[0]);
}
END_TEST

/* ---- determinism ---- */

START_TEST(test_determinism)
{
	struct incast_res a = incast(42, 0, 0x0800, 2000, true, NULL);
	struct incast_res b = incast(42, 0, 0x0800, 2000, true, NULL);

	ck_assert_uint_gt(a.t.marked, 0);	/* the RNG was drawn */
	ck_assert_uint_gt(a.t.pause_tx, 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
}
END_TEST

static Suite *switch_suite(void)
{
	Suite *s = suite_create("switch");
	TCase *tc = tcase_create("switch");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_forward);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_headroom_resize);
	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_scheduling);
	tcase_add_test(tc, test_ecmp);
	tcase_add_test(tc, test_set_route);
	tcase_add_test(tc, test_route_cache);
	tcase_add_test(tc, test_buffer_cells);
	tcase_add_test(tc, test_incast_headroom_sized);
	tcase_add_test(tc, test_incast_headroom_small);
	tcase_add_test(tc, test_pfc_frames);
	tcase_add_test(tc, test_pause_timing);
	tcase_add_test(tc, test_pause_rate);
	tcase_add_test(tc, test_live_set);
	tcase_add_test(tc, test_ecn_red);
	tcase_add_test(tc, test_conservation);
	tcase_add_test(tc, test_deadlock);
	tcase_add_test(tc, test_determinism);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(switch_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
