/* Differential-test helper: writes frames rocelab builds to a pcap, and what they hold as JSON lines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_io.h"
#include "roce_wire.h"

/*
 * Usage: diff_craft OUT.pcap > expected.jsonl
 * Frame i of the pcap is line i of the output: {"n":i,"op":NAME,"kind":"rocev2",...} with the
 * headers rocelab put in it, in its own words; the scripts map them to the other tool's fields.
 * Every valid opcode x RoCEv2/IPv4, RoCEv2/IPv6, RoCEv1 x no VLAN, one VLAN, plus PFC and
 * PAUSE frames; field values come from a fixed-seed PRNG so a run is repeatable.
 */

static uint64_t rng = 0x6469666663726166ull;	/* "diffcraf" */

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void put_hex(FILE *out, const char *key, const uint8_t *p, uint32_t n)
{
	fprintf(out, ",\"%s\":\"", key);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
	fputc('"', out);
}

static void put_mac(FILE *out, const char *key, const uint8_t *m)
{
	fprintf(out, ",\"%s\":\"%02x:%02x:%02x:%02x:%02x:%02x\"", key, m[0], m[1], m[2], m[3], m[4],
		m[5]);
}

/* What the frame holds, as the JSON line the scripts read. */
static void describe(FILE *out, uint32_t n, const struct roce_pkt *pkt, const uint8_t *frame,
		     int len)
{
	char src[64], dst[64];
	uint32_t mask;

	fprintf(out, "{\"n\":%u,\"kind\":\"%s\",\"len\":%d", n, roce_kind_name(pkt->kind), len);
	put_mac(out, "dmac", pkt->dmac);
	put_mac(out, "smac", pkt->smac);
	if (pkt->nvlan)
		fprintf(out, ",\"vlan_pcp\":%u,\"vlan_dei\":%u,\"vlan_vid\":%u", pkt->vlan[0].pcp,
			pkt->vlan[0].dei, pkt->vlan[0].vid);
	if (pkt->kind == ROCE_KIND_PFC || pkt->kind == ROCE_KIND_PAUSE) {
		fprintf(out, ",\"cev\":%u,\"quanta\":[", pkt->pfc_cev);
		for (int i = 0; i < 8; i++)
			fprintf(out, "%s%u", i ? "," : "", pkt->quanta[i]);
		fprintf(out, "]}\n");
		return;
	}
	roce_ip_ntop(&pkt->src, pkt->ip_ver, src, sizeof(src));
	roce_ip_ntop(&pkt->dst, pkt->ip_ver, dst, sizeof(dst));
	fprintf(out, ",\"ip_ver\":%u,\"dscp\":%u,\"ecn\":%u,\"ttl\":%u,\"src\":\"%s\",\"dst\":\"%s\"",
		pkt->ip_ver, pkt->dscp, pkt->ecn, pkt->ttl, src, dst);
	if (pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver == 4)
		fprintf(out, ",\"ip_id\":%u,\"ip_df\":%u", pkt->ip_id, pkt->ip_df);
	else
		fprintf(out, ",\"flow_label\":%u", pkt->flow_label);
	if (pkt->kind == ROCE_KIND_ROCEV2)
		fprintf(out, ",\"sport\":%u,\"dport\":%u,\"udp_csum\":%u", pkt->sport, pkt->dport,
			pkt->udp_csum);
	fprintf(out, ",\"op\":\"%s\",\"opcode\":%u,\"se\":%u,\"m\":%u,\"pad\":%u,\"tver\":%u,"
		"\"pkey\":%u,\"fecn\":%u,\"becn\":%u,\"dqpn\":%u,\"ackreq\":%u,\"resv7\":%u,"
		"\"psn\":%u", roce_opcode[pkt->opcode].name, pkt->opcode, pkt->se, pkt->mig,
		pkt->pad, pkt->tver, pkt->pkey, pkt->fecn, pkt->becn, pkt->dqpn, pkt->ackreq,
		pkt->resv7, pkt->psn);
	mask = roce_opcode[pkt->opcode].mask;
	if (mask & ROCE_F_DETH)
		fprintf(out, ",\"deth\":{\"qkey\":%u,\"srcqp\":%u}", pkt->deth.qkey, pkt->deth.srcqp);
	if (mask & ROCE_F_RETH)
		fprintf(out, ",\"reth\":{\"va\":%" PRIu64 ",\"rkey\":%u,\"dmalen\":%u}", pkt->reth.va,
			pkt->reth.rkey, pkt->reth.dmalen);
	if (mask & ROCE_F_ATMETH)
		fprintf(out, ",\"atomiceth\":{\"va\":%" PRIu64 ",\"rkey\":%u,\"swap\":%" PRIu64
			",\"cmp\":%" PRIu64 "}", pkt->atmeth.va, pkt->atmeth.rkey, pkt->atmeth.swap,
			pkt->atmeth.cmp);
	if (mask & ROCE_F_AETH)
		fprintf(out, ",\"aeth\":{\"syndrome\":%u,\"msn\":%u}", pkt->aeth.syndrome,
			pkt->aeth.msn);
	if (mask & ROCE_F_ATMACK)
		fprintf(out, ",\"atomicacketh\":{\"orig\":%" PRIu64 "}", pkt->atmack_orig);
	if (mask & ROCE_F_IMMDT)
		fprintf(out, ",\"immdt\":%u", pkt->immdt);
	if (mask & ROCE_F_IETH)
		fprintf(out, ",\"ieth\":%u", pkt->ieth_rkey);
	fprintf(out, ",\"payload_len\":%u", pkt->payload_len);
	if (pkt->payload_len)
		put_hex(out, "payload", pkt->payload, pkt->payload_len);
	/* the ICRC as its 4 bytes on the wire, which is how tshark and scapy print it */
	put_hex(out, "icrc_bytes", frame + len - ROCE_ICRC_LEN, ROCE_ICRC_LEN);
	fprintf(out, "}\n");
}

static void randomise(struct roce_pkt *pkt, uint8_t *payload)
{
	for (int i = 0; i < 6; i++) {
		pkt->smac[i] = (uint8_t)rnd();
		pkt->dmac[i] = (uint8_t)rnd();
	}
	pkt->smac[0] &= 0xfc;	/* unicast, globally administered: nothing a dissector special-cases */
	pkt->dmac[0] &= 0xfc;
	pkt->vlan[0].pcp = (uint8_t)(rnd() & 7);
	pkt->vlan[0].dei = (uint8_t)(rnd() & 1);
	pkt->vlan[0].vid = (uint16_t)(1 + rnd() % 4094);
	pkt->dscp = (uint8_t)(rnd() & 63);
	pkt->ecn = (uint8_t)(rnd() & 3);
	pkt->ttl = (uint8_t)(1 + rnd() % 255);
	pkt->ip_id = (uint16_t)rnd();
	pkt->ip_df = rnd() & 1;
	pkt->flow_label = (uint32_t)rnd() & 0xfffff;
	if (pkt->ip_ver == 4) {
		/* 10.x.y.z: private unicast */
		pkt->src.b[0] = 10, pkt->src.b[1] = (uint8_t)rnd(), pkt->src.b[2] = (uint8_t)rnd();
		pkt->src.b[3] = (uint8_t)(1 + rnd() % 254);
		pkt->dst.b[0] = 10, pkt->dst.b[1] = (uint8_t)rnd(), pkt->dst.b[2] = (uint8_t)rnd();
		pkt->dst.b[3] = (uint8_t)(1 + rnd() % 254);
	} else if (pkt->kind == ROCE_KIND_ROCEV2) {
		/* 2001:db8::/32 (documentation) */
		pkt->src.b[0] = 0x20, pkt->src.b[1] = 0x01, pkt->src.b[2] = 0x0d, pkt->src.b[3] = 0xb8;
		pkt->dst.b[0] = 0x20, pkt->dst.b[1] = 0x01, pkt->dst.b[2] = 0x0d, pkt->dst.b[3] = 0xb8;
		for (int i = 4; i < 16; i++) {
			pkt->src.b[i] = (uint8_t)rnd();
			pkt->dst.b[i] = (uint8_t)rnd();
		}
	}
	/* UDP source port: above 49152 so no dissector claims the source port (TFTP is 69, ...) */
	pkt->sport = (uint16_t)(49152 + rnd() % 16384);
	pkt->udp_csum = 0;	/* RoCEv2 senders put 0; a random one would be a checksum error */
	pkt->se = rnd() & 1;
	pkt->mig = rnd() & 1;
	pkt->pkey = (uint16_t)rnd();
	pkt->dqpn = 2 + (uint32_t)(rnd() % 0xfffffd);	/* QP0/QP1 would be dissected as MADs */
	pkt->ackreq = rnd() & 1;
	pkt->psn = (uint32_t)rnd() & ROCE_PSN_MASK;
	pkt->deth.qkey = (uint32_t)rnd();
	pkt->deth.srcqp = (uint32_t)rnd() & ROCE_QPN_MASK;
	pkt->reth.va = rnd();
	pkt->reth.rkey = (uint32_t)rnd();
	pkt->reth.dmalen = (uint32_t)(rnd() % 65536);
	pkt->atmeth.va = rnd() & ~7ull;
	pkt->atmeth.rkey = (uint32_t)rnd();
	pkt->atmeth.swap = rnd();
	pkt->atmeth.cmp = rnd();
	/* a syndrome of each kind: ACK with credits, RNR NAK, NAK codes 0-4 */
	switch (rnd() % 3) {
	case 0:
		pkt->aeth.syndrome = (uint8_t)(rnd() & 0x1f);
		break;
	case 1:
		pkt->aeth.syndrome = (uint8_t)(0x20 | (rnd() & 0x1f));
		break;
	default:
		pkt->aeth.syndrome = (uint8_t)(0x60 | rnd() % 5);
		break;
	}
	pkt->aeth.msn = (uint32_t)rnd() & 0xffffff;
	pkt->atmack_orig = rnd();
	pkt->immdt = (uint32_t)rnd();
	pkt->ieth_rkey = (uint32_t)rnd();
	for (uint32_t i = 0; i < pkt->payload_len; i++)
		payload[i] = (uint8_t)rnd();
	pkt->payload = payload;
}

int main(int argc, char **argv)
{
	static const struct {
		enum roce_kind kind;
		uint8_t ip_ver;
	} encs[] = { { ROCE_KIND_ROCEV2, 4 }, { ROCE_KIND_ROCEV2, 6 }, { ROCE_KIND_ROCEV1, 6 } };
	static uint8_t frame[2048], payload[256];
	struct roce_pcap_writer *w;
	uint64_t ts = 1700000000ull * 1000000000ull;
	uint32_t n = 0;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: diff_craft OUT.pcap > expected.jsonl\n");
		return 2;
	}
	w = roce_pcap_create(argv[1], err, sizeof(err));
	if (w == NULL) {
		fprintf(stderr, "diff_craft: %s\n", err);
		return 1;
	}
	for (int op = 0; op < 256; op++) {
		if (roce_opcode[op].name == NULL)
			continue;
		for (unsigned int e = 0; e < sizeof(encs) / sizeof(encs[0]); e++) {
			for (uint8_t nvlan = 0; nvlan <= 1; nvlan++) {
				uint32_t mask = roce_opcode[op].mask;
				struct roce_pkt pkt;
				int len;

				roce_pkt_init(&pkt, encs[e].kind, (uint8_t)op);
				pkt.ip_ver = encs[e].ip_ver;
				pkt.nvlan = nvlan;
				pkt.payload_len = !(mask & ROCE_F_PAYLOAD) ? 0 :
						  (mask & ROCE_F_PAYLOAD_FIXED) ? 8 : (uint32_t)(rnd() % 72);
				randomise(&pkt, payload);
				len = roce_wire_build(&pkt, 0, frame, sizeof(frame));
				if (len < 0) {
					fprintf(stderr, "diff_craft: %s: build failed (%d)\n",
						roce_opcode[op].name, len);
					return 1;
				}
				pkt.pad = (uint8_t)((4 - (pkt.payload_len & 3)) & 3);
				if (roce_pcap_write(w, ts + n * 1000ull, frame, (uint32_t)len) != 0) {
					fprintf(stderr, "diff_craft: %s: write failed\n", argv[1]);
					return 1;
				}
				describe(stdout, ++n, &pkt, frame, len);
			}
		}
	}
	for (int k = ROCE_KIND_PFC; k <= ROCE_KIND_PAUSE; k++) {
		for (int i = 0; i < 4; i++) {
			struct roce_pkt pkt;
			int len;

			roce_pkt_init(&pkt, (enum roce_kind)k, 0);
			for (int j = 0; j < 6; j++)
				pkt.smac[j] = (uint8_t)rnd();
			pkt.smac[0] &= 0xfc;
			pkt.nvlan = (uint8_t)(i & 1);
			pkt.vlan[0].pcp = (uint8_t)(rnd() & 7);
			pkt.vlan[0].vid = (uint16_t)(1 + rnd() % 4094);
			pkt.pfc_cev = k == ROCE_KIND_PFC ? (uint16_t)(rnd() & 0xff) : 0;
			for (int q = 0; q < 8; q++)
				pkt.quanta[q] = k == ROCE_KIND_PFC || q == 0 ? (uint16_t)rnd() : 0;
			len = roce_wire_build(&pkt, 0, frame, sizeof(frame));
			if (len < 0 || roce_pcap_write(w, ts + n * 1000ull, frame, (uint32_t)len) != 0) {
				fprintf(stderr, "diff_craft: MAC control frame failed\n");
				return 1;
			}
			describe(stdout, ++n, &pkt, frame, len);
		}
	}
	if (roce_pcap_close_writer(w) != 0) {
		fprintf(stderr, "diff_craft: %s: write failed\n", argv[1]);
		return 1;
	}
	return 0;
}
