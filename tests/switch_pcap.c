/*
 * Capture an 8:1 incast through one switch, for tests/diff_tshark_pfc.py: every link tapped, so
 * the file holds the senders' frames, the forwarded ones (TTL 63) and the switch's PFC frames.
 *   switch_pcap OUT.pcap     prints "pause_tx N resume_tx N quanta Q" and exits 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_engine.h"
#include "roce_io.h"
#include "roce_switch.h"
#include "roce_wire.h"

#define N 8			/* senders */
#define FRAMES 300		/* per sender */
#define QUANTA 0x0400		/* 4096 ns at 100G */
#define GBPS 1000000000ull

/* A sender that builds RC RDMA WRITE MIDDLE frames and honours PFC; the sink frees. */
struct host {
	struct roce_engine *eng;	/* clock, pool */
	struct roce_link *link;		/* to the switch (it sends in direction 1) */
	uint8_t id;			/* 10.0.0.(id + 1) */
	uint32_t left;			/* frames to send */
	roce_time_t paused_until;	/* priority 3 */
	struct roce_timer wake;		/* pause end */
};

static struct host hosts[N + 1];

static struct rte_mbuf *pull(void *owner)
{
	struct host *h = owner;
	struct rte_mbuf *m;
	struct roce_pkt pkt;

	if (h->left == 0)
		return NULL;
	if (roce_engine_now(h->eng) < h->paused_until) {
		roce_timer_arm(h->eng, &h->wake, h->paused_until);
		return NULL;
	}
	m = roce_engine_mbuf(h->eng);
	if (m == NULL)
		return NULL;
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_MIDDLE);
	pkt.src.b[3] = (uint8_t)(h->id + 1);
	pkt.dst.b[3] = N + 1;
	pkt.sport = (uint16_t)(49152 + h->id);
	pkt.dscp = 24;
	pkt.ecn = 2;
	pkt.dqpn = 0x100u + h->id;
	pkt.psn = FRAMES - h->left;
	pkt.payload_len = 1024;
	if (roce_wire_build_mbuf(&pkt, 0, m) < 0)
		exit(1);
	h->left--;
	return m;
}

static void rx(void *owner, struct rte_mbuf *m)
{
	struct host *h = owner;
	struct roce_pkt pkt;

	if (roce_wire_parse(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, ROCE_PARSE_NO_ICRC,
			    &pkt) == 0 && pkt.kind == ROCE_KIND_PFC && (pkt.pfc_cev & 8)) {
		h->paused_until = pkt.quanta[3] == 0 ? 0 : roce_engine_now(h->eng) +
				  (roce_time_t)pkt.quanta[3] * 512 * 10;	/* 100G */
		roce_link_kick(h->link, 1);
	}
	rte_pktmbuf_free(m);
}

static void wake(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct host *h = arg;

	(void)eng;
	(void)t;
	roce_link_kick(h->link, 1);
}

int main(int argc, char **argv)
{
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .nb_mbufs = 8192,
				       .mbuf_data = 2048 + RTE_PKTMBUF_HEADROOM, .name = "swpcap" };
	struct roce_link_conf lc = { .rate_bps = 100 * GBPS, .delay = ROCE_US };
	struct roce_link *links[N + 1];
	struct roce_switch_qstats qs;
	struct roce_pcap_writer *w;
	struct roce_switch_conf c;
	struct roce_engine *eng;
	struct roce_switch *sw;
	uint64_t ptx = 0, rtx = 0;
	char err[256];
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: switch_pcap OUT.pcap\n");
		return 2;
	}
	if (roce_eal_init(NULL) != 0 || (eng = roce_engine_create(&ec)) == NULL)
		return 1;
	w = roce_pcap_create(argv[1], err, sizeof(err));
	if (w == NULL) {
		fprintf(stderr, "switch_pcap: %s\n", err);
		return 1;
	}
	roce_switch_defaults(&c);
	c.nports = N + 1;
	c.buffer = 2 << 20;
	c.pfc_quanta = QUANTA;
	sw = roce_switch_create(eng, &c);
	if (sw == NULL)
		return 1;
	for (i = 0; i <= N; i++) {
		struct roce_link_end a = roce_switch_port_end(sw, (uint16_t)i);
		struct roce_link_end b = { .owner = &hosts[i], .pull = pull, .rx = rx };
		struct roce_ip_addr dst = { { 10, 0, 0, (uint8_t)(i + 1) } };

		hosts[i].eng = eng;
		hosts[i].id = (uint8_t)i;
		hosts[i].left = i < N ? FRAMES : 0;
		roce_timer_init(&hosts[i].wake, wake, &hosts[i]);
		links[i] = roce_link_create(eng, &lc, &a, &b);
		if (links[i] == NULL || roce_switch_attach(sw, (uint16_t)i, links[i], 0, NULL, 0) ||
		    roce_switch_add_route(sw, 4, &dst, 32, (uint16_t)i))
			return 1;
		hosts[i].link = links[i];
		roce_link_set_tap(links[i], w);
	}
	for (i = 0; i < N; i++)
		roce_link_kick(links[i], 1);
	roce_engine_run(eng, ROCE_TIME_NEVER);
	for (i = 0; i <= N; i++) {
		roce_switch_qstats(sw, (uint16_t)i, 3, &qs);
		ptx += qs.pause_tx;
		rtx += qs.resume_tx;
	}
	printf("pause_tx %lu resume_tx %lu quanta %u frames %u\n", (unsigned long)ptx,
	       (unsigned long)rtx, QUANTA, N * FRAMES);
	for (i = 0; i <= N; i++)
		roce_link_destroy(links[i]);
	roce_switch_destroy(sw);
	roce_engine_destroy(eng);
	return roce_pcap_close_writer(w) == 0 ? 0 : 1;
}
