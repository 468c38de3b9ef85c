/*
 * Packet-hops per second through emulated switches on one core in virtual time (an 8:1 incast
 * into one port, lossless with PFC; a 2-switch line), beside two peers measured in the same
 * run over the same frames: a bare rte_ring enqueue+dequeue of the mbufs, and a memcpy of
 * their bytes (what a store-and-forward copy would cost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "bench_common.h"
#include "roce_engine.h"
#include "roce_io.h"
#include "roce_switch.h"
#include "roce_wire.h"

#define GBPS 1000000000ull
#define PAYLOAD 1024			/* RDMA WRITE MIDDLE: 1082-byte frames */
#define NH 9				/* hosts */

/* A host that clones one template frame at line rate and honours PFC; as a sink it frees. */
struct bhost {
	struct roce_engine *eng;	/* clock, pool */
	struct roce_link *link;		/* to its switch */
	struct rte_mbuf *tmpl;		/* the frame it sends, built once */
	uint64_t to_send;		/* frames left */
	uint64_t rx;			/* frames received */
	roce_time_t paused_until;	/* PFC, priority 3 */
	struct roce_timer wake;		/* pause end */
};

static struct bhost hosts[NH];

static struct rte_mbuf *bh_pull(void *owner)
{
	struct bhost *h = owner;
	struct rte_mbuf *m;

	if (h->to_send == 0)
		return NULL;
	if (roce_engine_now(h->eng) < h->paused_until) {
		roce_timer_arm(h->eng, &h->wake, h->paused_until);
		return NULL;
	}
	m = roce_engine_mbuf(h->eng);
	if (m == NULL)
		return NULL;
	memcpy(rte_pktmbuf_append(m, h->tmpl->data_len), rte_pktmbuf_mtod(h->tmpl, void *),
	       h->tmpl->data_len);
	h->to_send--;
	return m;
}

static void bh_rx(void *owner, struct rte_mbuf *m)
{
	struct bhost *h = owner;
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);

	if (b[12] == 0x88 && b[13] == 0x08) {	/* PFC: quanta of priority 3 */
		uint16_t q = (uint16_t)(b[14 + 4 + 6] << 8 | b[14 + 4 + 7]);

		h->paused_until = q == 0 ? 0 : roce_engine_now(h->eng) +
			(roce_time_t)q * 512 * 10;	/* 100G: 10 ps per bit */
		roce_link_kick(h->link, 1);
	} else {
		h->rx++;
	}
	rte_pktmbuf_free(m);
}

static void bh_wake(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct bhost *h = arg;

	(void)eng;
	(void)t;
	roce_link_kick(h->link, 1);
}

static struct rte_mbuf *template(struct roce_engine *eng, uint8_t src, uint8_t dst)
{
	struct rte_mbuf *m = roce_engine_mbuf(eng);
	struct roce_pkt pkt;

	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_MIDDLE);
	pkt.src.b[3] = src;
	pkt.dst.b[3] = dst;
	pkt.dscp = 24;
	pkt.ecn = 2;
	pkt.payload_len = PAYLOAD;
	roce_wire_build_mbuf(&pkt, 0, m);
	return m;
}

/* CPU time of this thread: on a shared machine, wall time also counts other jobs' turns. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
	double wall;			/* seconds */
	double cpu;			/* seconds of CPU */
	roce_time_t sim;		/* virtual time simulated */
	uint64_t hops;			/* frames forwarded, summed over switches */
	uint64_t events;		/* timers fired */
	uint64_t delivered;		/* frames at the sink */
};

static uint64_t switch_tx(const struct roce_switch *sw, uint16_t nports)
{
	struct roce_switch_qstats q;
	uint64_t n = 0;

	for (uint16_t p = 0; p < nports; p++)
		for (int prio = 0; prio < ROCE_NPRIO; prio++) {
			roce_switch_qstats(sw, p, prio, &q);
			n += q.tx_frames;
		}
	return n;
}

/* @p nsw switches in a line (1 or 2); @p nsend senders on the first, the sink on the last. */
static struct result run(int nsw, int nsend, uint64_t frames)
{
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .nb_mbufs = 16384,
				       .mbuf_data = 2048 + RTE_PKTMBUF_HEADROOM, .name = "bsw" };
	struct roce_link_conf lc = { .rate_bps = 100 * GBPS, .delay = ROCE_US };
	struct roce_engine *eng = roce_engine_create(&ec);
	struct roce_switch *sw[2];
	struct roce_link *links[NH + 1];
	struct roce_switch_conf c;
	struct roce_engine_stats es;
	struct result r = { 0 };
	int nl = 0, i, sink = nsend;
	uint16_t np = (uint16_t)(nsend + 1);
	double t0, c0;

	roce_switch_defaults(&c);
	c.nports = np;
	for (i = 0; i < nsw; i++) {
		sw[i] = roce_switch_create(eng, &c);
		if (sw[i] == NULL)
			exit(1);
	}
	for (i = 0; i <= nsend; i++) {
		struct roce_switch *s = i == sink ? sw[nsw - 1] : sw[0];
		uint16_t port = (uint16_t)(i == sink && nsw == 2 ? 0 : i);
		struct roce_link_end a = roce_switch_port_end(s, port);
		struct roce_link_end b = { .owner = &hosts[i], .pull = bh_pull, .rx = bh_rx };
		struct roce_ip_addr dst = { { 10, 0, 0, (uint8_t)(nsend + 1) } };

		memset(&hosts[i], 0, sizeof(hosts[i]));
		hosts[i].eng = eng;
		hosts[i].tmpl = template(eng, (uint8_t)(i + 1), (uint8_t)(nsend + 1));
		roce_timer_init(&hosts[i].wake, bh_wake, &hosts[i]);
		links[nl] = roce_link_create(eng, &lc, &a, &b);
		hosts[i].link = links[nl];
		roce_switch_attach(s, port, links[nl++], 0, NULL, 0);
		if (i == sink) {
			roce_switch_add_route(s, 4, &dst, 32, port);
			if (nsw == 2)
				roce_switch_add_route(sw[0], 4, &dst, 32, (uint16_t)nsend);
		}
	}
	if (nsw == 2) {
		struct roce_link_end a = roce_switch_port_end(sw[0], (uint16_t)nsend);
		struct roce_link_end b = roce_switch_port_end(sw[1], 1);

		links[nl] = roce_link_create(eng, &lc, &a, &b);
		roce_switch_attach(sw[0], (uint16_t)nsend, links[nl], 0, sw[1], 1);
		roce_switch_attach(sw[1], 1, links[nl++], 1, sw[0], (uint16_t)nsend);
	}
	for (i = 0; i < nsend; i++) {
		hosts[i].to_send = frames / (uint64_t)nsend;
		roce_link_kick(hosts[i].link, 1);
	}
	t0 = bench_now();
	c0 = cpu_now();
	roce_engine_run(eng, ROCE_TIME_NEVER);
	r.cpu = cpu_now() - c0;
	r.wall = bench_now() - t0;
	r.sim = roce_engine_now(eng);
	roce_engine_stats(eng, &es);
	r.events = es.timers_fired;
	r.delivered = hosts[sink].rx;
	for (i = 0; i < nsw; i++)
		r.hops += switch_tx(sw[i], np);
	for (i = 0; i < nl; i++)
		roce_link_destroy(links[i]);
	for (i = 0; i < nsw; i++)
		roce_switch_destroy(sw[i]);
	for (i = 0; i <= nsend; i++)
		rte_pktmbuf_free(hosts[i].tmpl);
	roce_engine_destroy(eng);
	return r;
}

/* Peer: enqueue + dequeue of the same number of mbufs through one rte_ring, one at a time. */
static double ring_rate(uint64_t n)
{
	struct rte_ring *r = rte_ring_create("bsw_ring", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	void *obj = &n, *out = NULL;
	double t0, t;

	if (r == NULL)
		return 0;
	t0 = cpu_now();
	for (uint64_t i = 0; i < n; i++) {
		rte_ring_enqueue(r, obj);
		rte_ring_dequeue(r, &out);
		bench_sink += (uintptr_t)out;
	}
	t = cpu_now() - t0;
	rte_ring_free(r);
	return (double)n / t;
}

/* Peer: one memcpy of a 1082-byte frame per hop. */
static double memcpy_rate(uint64_t n)
{
	static uint8_t src[2048], dst[2048];
	double t0, t;

	memset(src, 0x5a, sizeof(src));
	t0 = cpu_now();
	for (uint64_t i = 0; i < n; i++) {
		src[i & 1023] = (uint8_t)i;
		memcpy(dst, src, 1082);
		bench_sink += dst[i & 1023];
	}
	t = cpu_now() - t0;
	return (double)n / t;
}

static void report(const char *what, struct result r)
{
	printf("%-26s %8lu hops  wall %6.3f s cpu %6.3f s  %5.2f M hops/cpu-s  %5.2f M events/cpu-s  "
	       "sim %.2f ms = %.2f ms per cpu-s  delivered %lu\n", what, (unsigned long)r.hops, r.wall,
	       r.cpu, (double)r.hops / r.cpu / 1e6, (double)r.events / r.cpu / 1e6,
	       (double)r.sim / ROCE_MS, (double)r.sim / ROCE_MS / r.cpu, (unsigned long)r.delivered);
}

int main(int argc, char **argv)
{
	uint64_t frames = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;

	if (roce_eal_init(NULL) != 0)
		return 1;
	printf("switch hops, one core, virtual time, 100G links 1 us, %u-byte frames, PFC on\n",
	       PAYLOAD + 58);
	report("8:1 incast, 1 switch", run(1, 8, frames));
	report("1 host, 2-switch line", run(2, 1, frames / 2));
	printf("%-30s %6.2f M ops/cpu-s (rte_ring SP/SC enqueue + dequeue of one mbuf)\n",
	       "  peer: rte_ring", ring_rate(frames * 10) / 1e6);
	printf("%-30s %6.2f M ops/cpu-s (memcpy of one 1082-byte frame)\n", "  peer: memcpy",
	       memcpy_rate(frames * 10) / 1e6);
	return 0;
}
