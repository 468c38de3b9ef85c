/* Check suite 'wire': lib/wire's codec against known answers, bitwise references and itself. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <rte_mbuf.h>
#include <rte_net_crc.h>

#include "roce_fmt.h"
#include "roce_io.h"
#include "roce_mad.h"
#include "roce_wire.h"
#include "wire_check.h"
#include "wire_private.h"

#ifndef SHARED_PCAP
#define SHARED_PCAP "../shared/pcap"
#endif

#define MAX_FRAME 9216			/* largest frame the tests build */

/*
 * ck_assert_msg() for hot loops: Check records the location of every passing assertion with a
 * write(2), which would dominate a million-iteration loop; this one costs nothing until it fails.
 */
#define REQUIRE(cond, ...) \
	do { \
		if (!(cond)) \
			ck_abort_msg("Assertion '" #cond "' failed: " __VA_ARGS__); \
	} while (0)

/* ---- helpers: PRNG, guard page ---- */

static uint64_t seed = 0x726f63656c6162ull;	/* "rocelab"; ROCE_TEST_SEED overrides */

/* splitmix64: a seeded, repeatable stream. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rnd(s) % n);
}

static void rnd_bytes(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(s);
}

/* Memory whose last usable byte is followed by a PROT_NONE page: any over-read faults. */
struct guard {
	uint8_t *map;		/* the whole mapping */
	size_t data_len;	/* bytes before the guard page */
	size_t map_len;
};

static void guard_init(struct guard *g, size_t max)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	g->data_len = (max + page - 1) / page * page;
	g->map_len = g->data_len + page;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(g->map, MAP_FAILED);
	ck_assert_int_eq(mprotect(g->map + g->data_len, page, PROT_NONE), 0);
}

/* Copy @p len bytes so that they end exactly at the guard page. */
static const uint8_t *guard_put(struct guard *g, const uint8_t *src, uint32_t len)
{
	uint8_t *dst = g->map + g->data_len - len;

	REQUIRE(len <= g->data_len, "%u bytes in a %zu-byte guard area", len, g->data_len);
	memmove(dst, src, len);
	return dst;
}

static void guard_fini(struct guard *g)
{
	munmap(g->map, g->map_len);
}

/* The valid opcodes of the table, in order: what the loop tests iterate over. */
static uint8_t valid_ops[256];
static int n_valid_ops;

static void collect_opcodes(void)
{
	n_valid_ops = 0;
	for (int i = 0; i < 256; i++)
		if (roce_opcode[i].name != NULL)
			valid_ops[n_valid_ops++] = (uint8_t)i;
}

/* A descriptor with every field the opcode carries set from the PRNG. */
static void random_pkt(uint64_t *s, struct roce_pkt *pkt, enum roce_kind kind, uint8_t opcode,
		       uint8_t ip_ver, uint8_t nvlan)
{
	static const uint16_t tpids[] = { 0x8100, 0x88a8, 0x9100 };

	roce_pkt_init(pkt, kind, opcode);
	rnd_bytes(s, pkt->dmac, 6);
	rnd_bytes(s, pkt->smac, 6);
	pkt->nvlan = nvlan;
	for (int i = 0; i < nvlan; i++) {
		pkt->vlan[i].tpid = tpids[rnd_below(s, ROCE_DIM(tpids))];
		pkt->vlan[i].pcp = (uint8_t)rnd_below(s, 8);
		pkt->vlan[i].dei = (uint8_t)rnd_below(s, 2);
		pkt->vlan[i].vid = (uint16_t)rnd_below(s, 4096);
	}
	if (kind == ROCE_KIND_PFC || kind == ROCE_KIND_PAUSE) {
		pkt->pfc_cev = kind == ROCE_KIND_PFC ? (uint16_t)rnd_below(s, 256) : 0;
		for (int i = 0; i < 8; i++)
			pkt->quanta[i] = (uint16_t)rnd(s);
		return;
	}
	pkt->ip_ver = kind == ROCE_KIND_ROCEV1 ? 6 : ip_ver;
	pkt->dscp = (uint8_t)rnd_below(s, 64);
	pkt->ecn = (uint8_t)rnd_below(s, 4);
	pkt->ttl = (uint8_t)rnd(s);
	pkt->ip_id = (uint16_t)rnd(s);
	pkt->ip_df = rnd_below(s, 2);
	pkt->flow_label = rnd_below(s, 1u << 20);
	memset(&pkt->src, 0, sizeof(pkt->src));
	memset(&pkt->dst, 0, sizeof(pkt->dst));
	rnd_bytes(s, pkt->src.b, pkt->ip_ver == 4 ? 4 : 16);
	rnd_bytes(s, pkt->dst.b, pkt->ip_ver == 4 ? 4 : 16);
	pkt->sport = (uint16_t)rnd(s);
	pkt->udp_csum = (uint16_t)rnd(s);
	pkt->se = rnd_below(s, 2);
	pkt->mig = rnd_below(s, 2);
	pkt->pkey = (uint16_t)rnd(s);
	pkt->fecn = rnd_below(s, 2);
	pkt->becn = rnd_below(s, 2);
	pkt->resv6 = (uint8_t)rnd_below(s, 64);
	pkt->dqpn = (uint32_t)rnd(s) & ROCE_QPN_MASK;
	pkt->ackreq = rnd_below(s, 2);
	pkt->resv7 = (uint8_t)rnd_below(s, 128);
	pkt->psn = (uint32_t)rnd(s) & ROCE_PSN_MASK;
	pkt->rdeth_eecnxt = (uint32_t)rnd(s) & 0xffffff;
	pkt->deth.qkey = (uint32_t)rnd(s);
	pkt->deth.srcqp = (uint32_t)rnd(s) & ROCE_QPN_MASK;
	pkt->xrc_srqn = (uint32_t)rnd(s) & 0xffffff;
	pkt->feth = (uint32_t)rnd(s);
	pkt->reth.va = rnd(s);
	pkt->reth.rkey = (uint32_t)rnd(s);
	pkt->reth.dmalen = (uint32_t)rnd(s);
	pkt->atmeth.va = rnd(s);
	pkt->atmeth.rkey = (uint32_t)rnd(s);
	pkt->atmeth.swap = rnd(s);
	pkt->atmeth.cmp = rnd(s);
	pkt->aeth.syndrome = (uint8_t)rnd(s);
	pkt->aeth.msn = (uint32_t)rnd(s) & 0xffffff;
	pkt->atmack_orig = rnd(s);
	pkt->immdt = (uint32_t)rnd(s);
	pkt->ieth_rkey = (uint32_t)rnd(s);
}

/* Payload lengths a round trip covers: 0..9 (every pad), odd sizes, an MTU, a jumbo. */
static const uint32_t rt_lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 63, 255, 1024, 1027, 4096, 9000 };

static uint32_t payload_len_for(uint8_t opcode, uint32_t want)
{
	uint32_t mask = roce_opcode[opcode].mask;

	if (!(mask & ROCE_F_PAYLOAD))
		return 0;
	if (mask & ROCE_F_PAYLOAD_FIXED)
		return 8;	/* ATOMIC_WRITE: exactly 8 bytes */
	return want;
}

/* scapy test/contrib/roce.uts "RoCE layer": UC SEND Only over IPv4, built by scapy from the uts
 * field values; the uts asserts IP checksum 0xb4d5 and ICRC 0x78f353f3 (bytes 78 f3 53 f3).
 * (../shared/pcap/vectors/secdev_scapy__roce_uts_uc_send_only_ipv4_icrc78f353f3.pcap, frame 1; xxd). */
static const uint8_t kat_scapy_ipv4[78] = {
	0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22,
	0x08, 0x00, 0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11,
	0xb4, 0xd5, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2, 0x24, 0x60, 0xff, 0xff, 0x00, 0x00,
	0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10, 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89,
	0x35, 0xd9, 0x0e, 0x9a, 0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50,
	0x00, 0x00, 0x78, 0xf3, 0x53, 0xf3,
};

/* scapy roce.uts "RoCE over IPv6": the same BTH and payload over IPv6 (TC 226, flow 0x1face,
 * hop limit 255); the uts asserts ICRC 0x3e5b743b (bytes 3e 5b 74 3b).
 * (../shared/pcap/vectors/secdev_scapy__roce_uts_uc_send_only_ipv6_icrc3e5b743b.pcap, frame 1; xxd). */
static const uint8_t kat_scapy_ipv6[98] = {
	0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22,
	0x86, 0xdd, 0x6e, 0x21, 0xfa, 0xce, 0x00, 0x2c, 0x11, 0xff, 0x20, 0x22,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x23, 0x20, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x10, 0x24, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c,
	0xe7, 0xc5, 0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf,
	0x17, 0x10, 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9, 0x0e, 0x9a,
	0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50, 0x00, 0x00, 0x3e, 0x5b,
	0x74, 0x3b,
};

/* ConnectX RC ACK rebuilt from the field-by-field dissection in E. Aksoy, "RDMA AI Cluster
 * Training Guide" (frame 1 of the aksoy vectors pcap): ICRC bytes 8d 64 38 3d.
 * (../shared/pcap/vectors/aksoy_rdma_guide__reconstructed_connectx_ack_and_cnp.pcap, frame 1; xxd). */
static const uint8_t kat_cx_ack[62] = {
	0x00, 0x50, 0x56, 0xaf, 0x39, 0xdc, 0x00, 0x50, 0x56, 0xaf, 0x0d, 0xec,
	0x08, 0x00, 0x45, 0x02, 0x00, 0x30, 0x36, 0x31, 0x40, 0x00, 0x40, 0x11,
	0x8e, 0x50, 0xc0, 0xa8, 0xfa, 0x72, 0xc0, 0xa8, 0xfa, 0x75, 0xcf, 0x21,
	0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x40, 0xff, 0xff, 0x00, 0x00,
	0x0d, 0x1e, 0x00, 0x46, 0x6f, 0x1e, 0x00, 0x0e, 0x6f, 0x02, 0x8d, 0x64,
	0x38, 0x3d,
};

/* ConnectX CNP from the same guide (frame 2): UDP source port 0, TOS 0xc2, ICRC bytes b0 08 1c 7f.
 * (../shared/pcap/vectors/aksoy_rdma_guide__reconstructed_connectx_ack_and_cnp.pcap, frame 2; xxd). */
static const uint8_t kat_cx_cnp[74] = {
	0x00, 0x50, 0x56, 0xaf, 0x39, 0xdc, 0x00, 0x50, 0x56, 0xaf, 0x0d, 0xec,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0xb8, 0xc5, 0x40, 0x00, 0x40, 0x11,
	0x0a, 0xf0, 0xc0, 0xa8, 0xfa, 0x72, 0xc0, 0xa8, 0xfa, 0x75, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x0d, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x08,
	0x1c, 0x7f,
};

/* A CNP captured on a ConnectX-4 Lx, hexdump from scapy roce.uts "RoCE CNP captured on
 * ConnectX-4 Lx"; the uts asserts icrc == 0x82fd002a (bytes 82 fd 00 2a).
 * (../shared/pcap/real/secdev_scapy__roce_uts_cnp_connectx4lx.pcap, frame 1; xxd). */
static const uint8_t kat_cx4lx_cnp[74] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

/* RoCEv1 RC RDMA WRITE Only (pad 3), hexdump from scapy roce.uts "RoCE v1 RC RDMA WRITE ONLY":
 * ICRC bytes e3 d8 56 bb.
 * (../shared/pcap/real/secdev_scapy__roce_uts_rocev1_write_only_and_ack.pcap, frame 1; xxd). */
static const uint8_t kat_v1_write[94] = {
	0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8, 0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8,
	0x89, 0x15, 0x60, 0x20, 0x00, 0x00, 0x00, 0x28, 0x1b, 0x40, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x0f, 0x00,
	0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0x0f, 0x00, 0x00, 0x02, 0x0a, 0x70, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x0a, 0x80, 0xa7, 0x88, 0xbc, 0x00, 0x00, 0x55, 0xd4, 0xc0, 0x72,
	0x60, 0x00, 0x00, 0x00, 0x47, 0xb3, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
	0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xe3, 0xd8, 0x56, 0xbb,
};

/* RoCEv1 RC ACKNOWLEDGE, hexdump from scapy roce.uts "RoCE v1 RC ACKNOWLEDGE": ICRC bytes
 * 25 f0 c0 38.
 * (../shared/pcap/real/secdev_scapy__roce_uts_rocev1_write_only_and_ack.pcap, frame 2; xxd). */
static const uint8_t kat_v1_ack[74] = {
	0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8, 0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8,
	0x89, 0x15, 0x60, 0x20, 0x00, 0x00, 0x00, 0x14, 0x1b, 0x40, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x0f, 0x00,
	0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0x0f, 0x00, 0x00, 0x02, 0x11, 0x40, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x09, 0x00, 0xa7, 0x88, 0xc0, 0x00, 0x00, 0x00, 0x05, 0x25, 0xf0,
	0xc0, 0x38,
};

/* ---- round trip: every opcode x IPv4/IPv6/RoCEv1 x 0/1/2 VLANs x payload lengths ---- */

struct encap {
	enum roce_kind kind;
	uint8_t ip_ver;
	uint8_t nvlan;
};

static const struct encap encaps[] = {
	{ ROCE_KIND_ROCEV2, 4, 0 }, { ROCE_KIND_ROCEV2, 4, 1 }, { ROCE_KIND_ROCEV2, 4, 2 },
	{ ROCE_KIND_ROCEV2, 6, 0 }, { ROCE_KIND_ROCEV2, 6, 1 }, { ROCE_KIND_ROCEV2, 6, 2 },
	{ ROCE_KIND_ROCEV1, 6, 0 }, { ROCE_KIND_ROCEV1, 6, 1 },
};

START_TEST(test_roundtrip)
{
	static uint8_t payload[9000], pattern[9000], frame[MAX_FRAME];
	uint8_t opcode = valid_ops[_i];
	const char *name = roce_opcode[opcode].name;
	uint64_t s = seed ^ ((uint64_t)opcode << 32);
	struct guard g;
	int cases = 0;

	for (uint32_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)i;
	guard_init(&g, MAX_FRAME);
	for (unsigned int e = 0; e < ROCE_DIM(encaps); e++) {
		for (unsigned int l = 0; l < ROCE_DIM(rt_lens); l++) {
			struct roce_pkt pkt, got;
			const uint8_t *p;
			unsigned int flags = 0;
			const char *why;
			int n, rc;

			if (l > 0 && payload_len_for(opcode, rt_lens[l]) ==
				     payload_len_for(opcode, rt_lens[l - 1]))
				continue;	/* no payload or a fixed one: one length is enough */
			random_pkt(&s, &pkt, encaps[e].kind, opcode, encaps[e].ip_ver, encaps[e].nvlan);
			pkt.payload_len = payload_len_for(opcode, rt_lens[l]);
			rnd_bytes(&s, payload, pkt.payload_len);
			pkt.payload = (l & 1) ? NULL : payload;	/* NULL: the incrementing pattern */
			if ((roce_opcode[opcode].mask & ROCE_F_PAYLOAD) && rnd_below(&s, 4) == 0) {
				flags |= ROCE_BUILD_KEEP_PAD;	/* a pad count the sender chose */
				pkt.pad = (uint8_t)rnd_below(&s, 4);
			} else {
				pkt.pad = (uint8_t)((4 - (pkt.payload_len & 3)) & 3);
			}

			n = roce_wire_build(&pkt, flags, frame, sizeof(frame));
			ck_assert_int_gt(n, 0);
			ck_assert_int_eq(n, roce_wire_frame_len(&pkt, flags));
			p = guard_put(&g, frame, (uint32_t)n);
			rc = roce_wire_parse(p, (uint32_t)n, 0, &got);
			ck_assert_msg(rc == 0, "%s encap %u len %u: rc %d (%s)", name, e, pkt.payload_len,
				      rc, roce_wire_strerror(got.err));
			ck_assert(got.icrc_ok);
			ck_assert_uint_eq(got.icrc, ref_icrc(p, &got, (uint32_t)n - 4));
			ck_assert_uint_eq(got.len, (uint32_t)n);
			if (pkt.payload == NULL)
				pkt.payload = pattern;
			why = pkt_cmp(&pkt, &got);
			ck_assert_msg(why == NULL, "%s encap %u len %u: field %s differs", name, e,
				      pkt.payload_len, why);
			why = check_decode(p, (uint32_t)n, rc, &got, true);
			ck_assert_msg(why == NULL, "%s encap %u: %s", name, e, why);

			/* The same frame with a deliberately wrong ICRC: decoded, but -EBADMSG. */
			n = roce_wire_build(&pkt, flags | ROCE_BUILD_BAD_ICRC, frame, sizeof(frame));
			p = guard_put(&g, frame, (uint32_t)n);
			rc = roce_wire_parse(p, (uint32_t)n, 0, &got);
			ck_assert_int_eq(rc, -EBADMSG);
			ck_assert_int_eq(got.err, ROCE_WERR_ICRC_MISMATCH);
			ck_assert_uint_eq(got.icrc, ~got.icrc_calc);
			ck_assert_ptr_null(pkt_cmp(&pkt, &got));
			ck_assert_int_eq(roce_wire_parse(p, (uint32_t)n, ROCE_PARSE_NO_ICRC, &got), 0);
			cases++;
		}
	}
	ck_assert_int_gt(cases, 0);
	guard_fini(&g);
}
END_TEST

/* ---- known-answer ICRCs, with their provenance ---- */

struct kat {
	const char *name;
	const uint8_t *bytes;
	uint32_t len;
	enum roce_kind kind;
	uint8_t opcode;
	uint32_t dqpn;
	uint32_t psn;
	uint8_t pad;
	uint32_t icrc;		/* the 4 stored bytes read little-endian (tshark/scapy print them big-endian) */
};

#define KAT(a) #a, a, sizeof(a)
static const struct kat kats[] = {
	/* scapy/tshark display 0x78f353f3 */
	{ KAT(kat_scapy_ipv4), ROCE_KIND_ROCEV2, ROCE_OP_UC_SEND_ONLY, 211, 13571856, 2, 0xf353f378 },
	/* 0x3e5b743b */
	{ KAT(kat_scapy_ipv6), ROCE_KIND_ROCEV2, ROCE_OP_UC_SEND_ONLY, 211, 13571856, 2, 0x3b745b3e },
	/* 0x8d64383d */
	{ KAT(kat_cx_ack), ROCE_KIND_ROCEV2, ROCE_OP_RC_ACKNOWLEDGE, 0x000d1e, 4615966, 0, 0x3d38648d },
	/* 0xb0081c7f */
	{ KAT(kat_cx_cnp), ROCE_KIND_ROCEV2, ROCE_OP_CNP, 0x000d1e, 0, 0, 0x7f1c08b0 },
	/* 0x82fd002a */
	{ KAT(kat_cx4lx_cnp), ROCE_KIND_ROCEV2, ROCE_OP_CNP, 0x000118, 0, 0, 0x2a00fd82 },
	/* e3 d8 56 bb */
	{ KAT(kat_v1_write), ROCE_KIND_ROCEV1, ROCE_OP_RC_RDMA_WRITE_ONLY, 0x10a, 0xa788bc, 3, 0xbb56d8e3 },
	/* 25 f0 c0 38 */
	{ KAT(kat_v1_ack), ROCE_KIND_ROCEV1, ROCE_OP_RC_ACKNOWLEDGE, 0x109, 0xa788c0, 0, 0x38c0f025 },
};

/*
 * Header templates (roce_wire_tmpl_*): for every opcode, over IPv4 and IPv6, every length, a
 * frame built from a template is byte for byte the one roce_wire_build() writes, whether the
 * template was made from this packet or from another one to the same destination.
 */
START_TEST(test_template)
{
	static uint8_t payload[9000], want[MAX_FRAME], got[MAX_FRAME];
	uint8_t opcode = valid_ops[_i];
	uint64_t s = seed ^ ((uint64_t)opcode << 32) ^ 0x746d706cull;
	struct roce_wire_tmpl t = { 0 };

	for (uint8_t ip_ver = 4; ip_ver <= 6; ip_ver += 2) {
		struct roce_pkt pkt, other;

		random_pkt(&s, &pkt, ROCE_KIND_ROCEV2, opcode, ip_ver, 0);
		ck_assert(!roce_wire_tmpl_match(&t, &pkt));
		ck_assert_int_eq(roce_wire_tmpl_init(&t, &pkt), 0);
		ck_assert(roce_wire_tmpl_match(&t, &pkt));
		for (unsigned int l = 0; l < ROCE_DIM(rt_lens); l++) {
			int n, m;

			/* same headers, another BTH, extended headers and payload */
			random_pkt(&s, &other, ROCE_KIND_ROCEV2, opcode, ip_ver, 0);
			memcpy(&other.dmac, &pkt.dmac, 6);
			memcpy(&other.smac, &pkt.smac, 6);
			other.dscp = pkt.dscp, other.ecn = pkt.ecn, other.ttl = pkt.ttl;
			other.ip_id = pkt.ip_id, other.ip_df = pkt.ip_df, other.flow_label = pkt.flow_label;
			other.src = pkt.src, other.dst = pkt.dst;
			other.sport = pkt.sport, other.udp_csum = pkt.udp_csum;
			REQUIRE(roce_wire_tmpl_match(&t, &other), "%s", roce_opcode[opcode].name);
			other.payload_len = payload_len_for(opcode, rt_lens[l]);
			rnd_bytes(&s, payload, other.payload_len);
			other.payload = (l & 1) ? NULL : payload;
			n = roce_wire_build(&other, 0, want, sizeof(want));
			m = roce_wire_tmpl_build(&t, &other, got, sizeof(got));
			REQUIRE(n > 0 && m == n, "%s IPv%u len %u: %d vs %d", roce_opcode[opcode].name,
				ip_ver, other.payload_len, m, n);
			REQUIRE(memcmp(want, got, (size_t)n) == 0, "%s IPv%u len %u: bytes differ",
				roce_opcode[opcode].name, ip_ver, other.payload_len);
			REQUIRE(roce_wire_tmpl_build(&t, &other, got, (uint32_t)n - 1) == -ENOSPC, "%s",
				roce_opcode[opcode].name);
		}
		/* every short payload copied from memory (the template copies up to 64 bytes inline) */
		for (uint32_t len = 0; len <= 80 && (roce_opcode[opcode].mask & ROCE_F_PAYLOAD); len++) {
			int n, m;

			other = pkt;
			other.payload_len = payload_len_for(opcode, len);
			rnd_bytes(&s, payload, other.payload_len);
			other.payload = payload;
			n = roce_wire_build(&other, 0, want, sizeof(want));
			m = roce_wire_tmpl_build(&t, &other, got, sizeof(got));
			REQUIRE(n > 0 && m == n && memcmp(want, got, (size_t)n) == 0,
				"%s IPv%u payload %u from memory", roce_opcode[opcode].name, ip_ver,
				other.payload_len);
		}
		/* any header field changed: the template no longer fits */
		other = pkt;
		other.ttl++;
		ck_assert(!roce_wire_tmpl_match(&t, &other));
		other = pkt;
		other.dst.b[3]++;
		ck_assert(!roce_wire_tmpl_match(&t, &other));
	}
	{
		struct roce_pkt pkt;

		random_pkt(&s, &pkt, ROCE_KIND_ROCEV2, opcode, 4, 1);
		ck_assert_int_eq(roce_wire_tmpl_init(&t, &pkt), -EINVAL);	/* VLAN: not kept */
		ck_assert(!roce_wire_tmpl_match(&t, &pkt));
		random_pkt(&s, &pkt, ROCE_KIND_ROCEV1, opcode, 6, 0);
		ck_assert_int_eq(roce_wire_tmpl_init(&t, &pkt), -EINVAL);
	}
}
END_TEST

/*
 * Zero copy (roce_wire_tmpl_build_mbuf_zc()): for every opcode with a payload, over IPv4 and
 * IPv6, each pad, a frame whose payload is carried by reference has the bytes of the copied
 * frame once its ICRC is filled in; roce_wire_parse_rx_chain() reads it as roce_wire_parse_rx()
 * reads the copy, its payload where it lies; and nothing writes the payload, which is mapped
 * read-only here: a write would kill the test. The frames share the trailer of their pad until
 * the ICRC is written, which gives a frame its own and leaves the shared one zero; with no
 * segment left for that, the frame stays as it was, its ICRC still to write.
 */
START_TEST(test_zero_copy_chain)
{
	static uint8_t want[MAX_FRAME], got[MAX_FRAME];
	static const uint32_t lens[] = { 1, 2, 3, 4, 1027, 4093, 4096, 9000 };
	static const uint8_t zero[8];
	struct rte_mbuf *trailer[4], *hoard[16];
	struct rte_mempool *mp, *segs;
	uint64_t s = seed ^ 0x7a63ull;
	unsigned int nhoard = 0;
	size_t map = 16384;
	uint8_t *src;
	int frames = 0;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	ck_assert_int_eq(roce_wire_icrc_flags_register(), 0);
	mp = rte_pktmbuf_pool_create("tw_zc", 16, 0, 0, MAX_FRAME + 256, SOCKET_ID_ANY);
	segs = rte_pktmbuf_pool_create("tw_zc_seg", 16, 0, 0, 64, SOCKET_ID_ANY);
	src = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mp != NULL && segs != NULL && src != MAP_FAILED);
	rnd_bytes(&s, src, map);
	ck_assert_int_eq(mprotect(src, map, PROT_READ), 0);
	for (uint32_t pad = 0; pad < 4; pad++) {
		trailer[pad] = roce_wire_zc_trailer(segs, pad);
		ck_assert(trailer[pad] != NULL && trailer[pad]->data_len == pad + 4);
	}
	ck_assert(roce_wire_zc_trailer(segs, 4) == NULL);

	for (int i = 0; i < n_valid_ops; i++) {
		uint8_t opcode = valid_ops[i];
		unsigned int mask = roce_opcode[opcode].mask;

		if (!(mask & ROCE_F_PAYLOAD) || (mask & ROCE_F_PAYLOAD_FIXED))
			continue;
		for (uint8_t ip_ver = 4; ip_ver <= 6; ip_ver += 2) {
			for (unsigned int l = 0; l < ROCE_DIM(lens); l++) {
				struct rte_mbuf *flat = rte_pktmbuf_alloc(mp), *zc = rte_pktmbuf_alloc(mp);
				struct rte_mbuf *seg = rte_pktmbuf_alloc(segs), *tail, *zc2, *seg2;
				uint32_t pad = -lens[l] & 3;
				struct roce_pkt pkt, a, b;
				struct roce_wire_tmpl t = { 0 };
				int n;

				ck_assert(flat && zc && seg);
				/* what a segment held before: the ICRC is written over it, the pad too */
				memset(seg->buf_addr, 0xa5, seg->buf_len);
				random_pkt(&s, &pkt, ROCE_KIND_ROCEV2, opcode, ip_ver, 0);
				pkt.payload_len = lens[l];
				pkt.payload = src + rnd_below(&s, (uint32_t)(map - lens[l]));
				ck_assert_int_eq(roce_wire_tmpl_init(&t, &pkt), 0);
				n = roce_wire_build(&pkt, 0, want, sizeof(want));
				ck_assert_int_gt(n, 0);
				ck_assert_int_eq(roce_wire_tmpl_build_mbuf_partial(&t, &pkt, flat), n);
				ck_assert_int_eq(roce_wire_tmpl_build_mbuf_zc(&t, &pkt, zc, seg, trailer), n);
				REQUIRE(zc->nb_segs == 3 && rte_pktmbuf_pkt_len(zc) == (uint32_t)n &&
					rte_pktmbuf_mtod(zc->next, const uint8_t *) == pkt.payload &&
					zc->next->next == trailer[pad] &&
					rte_mbuf_refcnt_read(trailer[pad]) == 2,
					"%s IPv%u len %u: not a chain over the payload and the trailer",
					roce_opcode[opcode].name, ip_ver, lens[l]);
				/* a second frame shares it; freed, it gives back its reference */
				zc2 = rte_pktmbuf_alloc(mp);
				seg2 = rte_pktmbuf_alloc(segs);
				ck_assert(zc2 != NULL && seg2 != NULL);
				ck_assert_int_eq(roce_wire_tmpl_build_mbuf_zc(&t, &pkt, zc2, seg2,
									      trailer), n);
				ck_assert_uint_eq(rte_mbuf_refcnt_read(trailer[pad]), 3);
				roce_wire_zc_free(zc2);
				ck_assert_uint_eq(rte_mbuf_refcnt_read(trailer[pad]), 2);
				ck_assert_uint_eq(trailer[pad]->data_len, pad + 4);
				if (nhoard == 0) {
					/* no segment for a trailer of its own: nothing written */
					while (nhoard < ROCE_DIM(hoard) &&
					       (hoard[nhoard] = rte_pktmbuf_alloc(segs)) != NULL)
						nhoard++;
					ck_assert_uint_eq(rte_mempool_avail_count(segs), 0);
					ck_assert_int_eq(roce_wire_icrc_settle(zc), -ENOBUFS);
					ck_assert(zc->next->next == trailer[pad] &&
						  (zc->ol_flags & roce_wire_icrc_partial));
					while (nhoard > 0)
						rte_pktmbuf_free(hoard[--nhoard]);
					nhoard = 1;
				}
				ck_assert_int_eq(roce_wire_icrc_settle(flat), 0);
				ck_assert_int_eq(roce_wire_icrc_settle(zc), 0);
				tail = zc->next->next;
				REQUIRE(tail != trailer[pad] && tail->data_len == pad + 4 &&
					rte_mbuf_refcnt_read(trailer[pad]) == 1 &&
					memcmp(rte_pktmbuf_mtod(trailer[pad], uint8_t *), zero,
					       pad + 4) == 0,
					"%s IPv%u len %u: the ICRC written into the shared trailer",
					roce_opcode[opcode].name, ip_ver, lens[l]);
				ck_assert_ptr_eq(rte_pktmbuf_read(zc, 0, (uint32_t)n, got), got);
				REQUIRE(memcmp(rte_pktmbuf_mtod(flat, uint8_t *), want, (size_t)n) == 0 &&
					memcmp(got, want, (size_t)n) == 0, "%s IPv%u len %u: bytes differ",
					roce_opcode[opcode].name, ip_ver, lens[l]);

				memset(&a, 0, sizeof(a));
				memset(&b, 0, sizeof(b));
				ck_assert_int_eq(roce_wire_parse_rx(want, (uint32_t)n, 0, &a), 0);
				ck_assert_int_eq(roce_wire_parse_rx_chain(zc, ROCE_PARSE_ICRC_CHECKED, &b), 0);
				REQUIRE(b.payload == pkt.payload && b.payload_len == a.payload_len &&
					b.psn == a.psn && b.opcode == a.opcode && b.dqpn == a.dqpn &&
					b.pad == a.pad && b.icrc == 0 && b.icrc_calc == 0 && b.icrc_ok &&
					b.reth.va == a.reth.va && b.immdt == a.immdt &&
					memcmp(&b.src, &a.src, sizeof(a.src)) == 0,
					"%s IPv%u len %u: the chain parses otherwise",
					roce_opcode[opcode].name, ip_ver, lens[l]);
				/* its ICRC not vouched for, or any segment's length off: not the chain's shape */
				ck_assert_int_eq(roce_wire_parse_rx_chain(zc, 0, &b), -EAGAIN);
				ck_assert_int_eq(roce_wire_parse_rx_chain(flat, ROCE_PARSE_ICRC_CHECKED, &b),
						 -EAGAIN);
				zc->next->next->data_len++;
				zc->pkt_len++;
				ck_assert_int_eq(roce_wire_parse_rx_chain(zc, ROCE_PARSE_ICRC_CHECKED, &b),
						 -EAGAIN);
				rte_pktmbuf_free(flat);
				roce_wire_zc_free(zc);	/* its own trailer now: as rte_pktmbuf_free() */
				frames++;
			}
		}
	}
	ck_assert_int_gt(frames, 100);
	/* every segment went back, its external buffer let go; the trailers only are out */
	ck_assert_uint_eq(rte_mempool_avail_count(segs), 16 - 4);
	ck_assert_uint_eq(rte_mempool_avail_count(mp), 16);
	for (uint32_t pad = 0; pad < 4; pad++) {
		ck_assert_uint_eq(rte_mbuf_refcnt_read(trailer[pad]), 1);
		rte_pktmbuf_free(trailer[pad]);
	}
	munmap(src, map);
	rte_mempool_free(segs);
	rte_mempool_free(mp);
}
END_TEST

START_TEST(test_kat_icrc)
{
	const struct kat *k = &kats[_i];
	static uint8_t frame[MAX_FRAME], copy[MAX_FRAME];
	struct roce_pkt pkt;
	const uint8_t *p;
	struct guard g;
	int rc, n;

	guard_init(&g, MAX_FRAME);
	p = guard_put(&g, k->bytes, k->len);
	rc = roce_wire_parse(p, k->len, 0, &pkt);
	ck_assert_msg(rc == 0, "%s: rc %d (%s)", k->name, rc, roce_wire_strerror(pkt.err));
	ck_assert_int_eq(pkt.kind, k->kind);
	ck_assert_uint_eq(pkt.opcode, k->opcode);
	ck_assert_uint_eq(pkt.dqpn, k->dqpn);
	ck_assert_uint_eq(pkt.psn, k->psn);
	ck_assert_uint_eq(pkt.pad, k->pad);
	ck_assert(pkt.icrc_ok);
	ck_assert_uint_eq(pkt.icrc, k->icrc);
	ck_assert_uint_eq(pkt.icrc_calc, k->icrc);
	ck_assert_uint_eq(roce_icrc_calc(p, &pkt, k->len - 4), k->icrc);
	ck_assert_uint_eq(ref_icrc(p, &pkt, k->len - 4), k->icrc);
	ck_assert_ptr_null(check_decode(p, k->len, rc, &pkt, true));

	/* Building the decoded descriptor gives back the exact bytes, checksums and ICRC included. */
	n = roce_wire_build(&pkt, ROCE_BUILD_KEEP_PAD, frame, sizeof(frame));
	ck_assert_int_eq(n, (int)k->len);
	ck_assert_msg(memcmp(frame, k->bytes, k->len) == 0, "%s: rebuilt bytes differ", k->name);

	/* Any flipped bit outside the variant fields breaks the ICRC. */
	memcpy(copy, k->bytes, k->len);
	copy[k->len - 5] ^= 0x01;
	p = guard_put(&g, copy, k->len);
	ck_assert_int_eq(roce_wire_parse(p, k->len, 0, &pkt), -EBADMSG);
	ck_assert_int_eq(pkt.err, ROCE_WERR_ICRC_MISMATCH);
	guard_fini(&g);
}
END_TEST

/* Header fields the vectors' sources state, beyond the BTH. */
START_TEST(test_kat_fields)
{
	struct roce_pkt pkt;

	/* scapy roce.uts: IP checksum 0xb4d5, UDP checksum 0xaca2, MigReq, ECN 1 */
	ck_assert_int_eq(roce_wire_parse(kat_scapy_ipv4, sizeof(kat_scapy_ipv4), 0, &pkt), 0);
	ck_assert_uint_eq(pkt.ip_csum, 0xb4d5);
	ck_assert_uint_eq(pkt.udp_csum, 0xaca2);
	ck_assert(pkt.mig);
	ck_assert_uint_eq(pkt.payload_len, 18);
	/* IPv6: TC 226 (DSCP 56, ECN 2), flow label 0x1face, hop limit 255, UDP checksum 0xe7c5 */
	ck_assert_int_eq(roce_wire_parse(kat_scapy_ipv6, sizeof(kat_scapy_ipv6), 0, &pkt), 0);
	ck_assert_uint_eq(pkt.dscp, 56);
	ck_assert_uint_eq(pkt.ecn, 2);
	ck_assert_uint_eq(pkt.flow_label, 0x1face);
	ck_assert_uint_eq(pkt.ttl, 255);
	ck_assert_uint_eq(pkt.udp_csum, 0xe7c5);
	/* Aksoy's ACK: IP ID 13873 with DF, MigReq, MSN 945922, syndrome 0 */
	ck_assert_int_eq(roce_wire_parse(kat_cx_ack, sizeof(kat_cx_ack), 0, &pkt), 0);
	ck_assert_uint_eq(pkt.ip_id, 13873);
	ck_assert(pkt.ip_df);
	ck_assert(pkt.mig);
	ck_assert_uint_eq(pkt.aeth.msn, 945922);
	ck_assert_uint_eq(pkt.aeth.syndrome, 0);
	/* ConnectX-4 Lx CNP: TOS 0xc2, UDP source port 0, BECN set */
	ck_assert_int_eq(roce_wire_parse(kat_cx4lx_cnp, sizeof(kat_cx4lx_cnp), 0, &pkt), 0);
	ck_assert_uint_eq(pkt.dscp, 48);
	ck_assert_uint_eq(pkt.ecn, 2);
	ck_assert_uint_eq(pkt.sport, 0);
	ck_assert(pkt.becn);
	ck_assert_uint_eq(pkt.payload_len, 0);
	/* RoCEv1 WRITE Only: RETH va 0x000055d4c0726000 rkey 0x47b3 dmalen 5, AckReq */
	ck_assert_int_eq(roce_wire_parse(kat_v1_write, sizeof(kat_v1_write), 0, &pkt), 0);
	ck_assert_uint_eq(pkt.reth.va, 0x000055d4c0726000ull);
	ck_assert_uint_eq(pkt.reth.rkey, 0x47b3);
	ck_assert_uint_eq(pkt.reth.dmalen, 5);
	ck_assert_uint_eq(pkt.payload_len, 5);
	ck_assert(pkt.ackreq);
	/* RoCEv1 ACK: AETH syndrome 0, MSN 5 */
	ck_assert_int_eq(roce_wire_parse(kat_v1_ack, sizeof(kat_v1_ack), 0, &pkt), 0);
	ck_assert_uint_eq(pkt.aeth.msn, 5);
}
END_TEST

/* ---- every RoCE frame of every shared capture parses with a correct ICRC ---- */

/* RoCE frames per file as SOURCES.md in each folder states them (tshark 4.0.17 counts). */
static const struct {
	const char *file;
	unsigned int rocev2, rocev1;
} capture_counts[] = {
	{ "real/montybeatnik_rdma-roce-lab__roce_capture_read-write-ecn.pcap", 12, 0 },
	{ "real/montybeatnik_rdma-roce-lab__test.pcap", 12, 0 },
	{ "real/oferby_proxy__roce.pcap", 105, 0 },
	{ "real/secdev_scapy__roce_uts_cnp_connectx4lx.pcap", 1, 0 },
	{ "real/secdev_scapy__roce_uts_rocev1_write_only_and_ack.pcap", 0, 2 },
	{ "vectors/aksoy_rdma_guide__reconstructed_connectx_ack_and_cnp.pcap", 2, 0 },
	{ "vectors/secdev_scapy__roce_uts_uc_send_only_ipv4_icrc78f353f3.pcap", 1, 0 },
	{ "vectors/secdev_scapy__roce_uts_uc_send_only_ipv6_icrc3e5b743b.pcap", 1, 0 },
	{ "rxe/ibv_rc_pingpong.pcap", 208, 0 },
	{ "rxe/ibv_uc_pingpong.pcap", 160, 0 },
	{ "rxe/ibv_ud_pingpong.pcap", 40, 0 },
	{ "rxe/rc_atomic_fetch_add.pcap", 100, 0 },
	{ "rxe/rc_imm_write_send.pcap", 14, 0 },
	{ "rxe/rc_nak_inv_req_no_atomic.pcap", 2, 0 },
	{ "rxe/rc_nak_inv_req_no_write.pcap", 2, 0 },
	{ "rxe/rc_nak_rem_access_bad_rkey.pcap", 2, 0 },
	{ "rxe/rc_read_bw.pcap", 250, 0 },
	{ "rxe/rc_read_bw_loss_req.pcap", 154, 0 },
	{ "rxe/rc_read_lat.pcap", 40, 0 },
	{ "rxe/rc_send_bw.pcap", 250, 0 },
	{ "rxe/rc_send_bw_loss_req.pcap", 378, 0 },
	{ "rxe/rc_send_bw_rnr.pcap", 433, 0 },
	{ "rxe/rc_write_bw.pcap", 250, 0 },
	{ "rxe/rc_write_bw_loss_ack.pcap", 198, 0 },
	{ "rxe/rc_write_bw_loss_req.pcap", 251, 0 },
	{ "rxe/rc_write_bw_pmtu4096.pcap", 100, 0 },
	{ "rxe/rc_write_lat.pcap", 82, 0 },
	{ "rxe/rc_write_lat_loss.pcap", 209, 0 },
	{ "rxe/rping.pcap", 65, 0 },
	{ "rxe/rping_ipv6.pcap", 65, 0 },
	{ "rxe/rstream_write_imm.pcap", 138, 0 },
	{ "rxe/uc_send_bw.pcap", 200, 0 },
	{ "rxe/ud_send_bw.pcap", 50, 0 },
};

static bool shared_pcap_present(void)
{
	struct stat st;

	return stat(SHARED_PCAP, &st) == 0 && S_ISDIR(st.st_mode);
}

START_TEST(test_captures)
{
	const char *file = capture_counts[_i].file;
	static uint8_t scratch[70000];
	unsigned int n2 = 0, n1 = 0, frames = 0;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	char path[512], err[512];
	struct guard g;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", SHARED_PCAP, file);
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	guard_init(&g, 65536);
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		struct roce_pkt pkt;
		const uint8_t *p = guard_put(&g, f.data, f.caplen);
		const char *why;
		int prc = roce_wire_parse(p, f.caplen, 0, &pkt);

		frames++;
		why = check_decode(p, f.caplen, prc, &pkt, true);
		ck_assert_msg(why == NULL, "%s frame %llu: %s", file, (unsigned long long)f.n, why);
		if (pkt.kind == ROCE_KIND_ROCEV2 || pkt.kind == ROCE_KIND_ROCEV1) {
			ck_assert_msg(prc == 0 && pkt.icrc_ok, "%s frame %llu: rc %d %s", file,
				      (unsigned long long)f.n, prc, roce_wire_strerror(pkt.err));
			why = check_rebuild(&pkt, scratch, sizeof(scratch));
			ck_assert_msg(why == NULL, "%s frame %llu: rebuild: %s", file,
				      (unsigned long long)f.n, why);
			if (pkt.kind == ROCE_KIND_ROCEV2)
				n2++;
			else
				n1++;
		} else {
			/* ARP, TCP, ICMPv6, other UDP: refused as not RoCE, nothing else */
			ck_assert_msg(pkt.err == ROCE_WERR_NOT_ROCE, "%s frame %llu: %s", file,
				      (unsigned long long)f.n, roce_wire_strerror(pkt.err));
		}
	}
	ck_assert_msg(rc == 0, "%s: %s", file, roce_pcap_error(r));
	ck_assert_uint_gt(frames, 0);
	ck_assert_uint_eq(n2, capture_counts[_i].rocev2);
	ck_assert_uint_eq(n1, capture_counts[_i].rocev1);
	roce_pcap_close(r);
	guard_fini(&g);
}
END_TEST

/* Every .pcap in the shared folders is listed above, so a new capture gets checked too. */
START_TEST(test_captures_listed)
{
	static const char *const dirs[] = { "real", "rxe", "vectors" };

	for (unsigned int d = 0; d < ROCE_DIM(dirs); d++) {
		char path[512];
		struct dirent *de;
		DIR *dir;

		snprintf(path, sizeof(path), "%s/%s", SHARED_PCAP, dirs[d]);
		dir = opendir(path);
		if (dir == NULL)
			continue;
		while ((de = readdir(dir)) != NULL) {
			size_t l = strlen(de->d_name);
			bool found = false;
			char rel[512];

			if (l < 5 || strcmp(de->d_name + l - 5, ".pcap") != 0)
				continue;
			snprintf(rel, sizeof(rel), "%s/%s", dirs[d], de->d_name);
			if (strcmp(rel, "real/srinivaskoritala_rdma-softroce-demo__infiniband.pcap") == 0)
				continue;	/* native InfiniBand over ERF: no Ethernet, nothing to parse */
			for (unsigned int i = 0; i < ROCE_DIM(capture_counts); i++)
				found |= strcmp(capture_counts[i].file, rel) == 0;
			ck_assert_msg(found, "%s is not in capture_counts[]", rel);
		}
		closedir(dir);
	}
}
END_TEST

/* ---- CRC-32 and its combine step against the bitwise definition ---- */

static void check_crc_lengths(uint64_t *s, int rounds)
{
	static uint8_t buf[70000];

	rnd_bytes(s, buf, sizeof(buf));
	ck_assert_uint_eq(roce_crc32("123456789", 9), 0xcbf43926u);	/* the CRC-32 check value */
	for (uint32_t len = 0; len <= 256; len++)
		REQUIRE(roce_crc32(buf + (len & 7), len) == ref_crc32(buf + (len & 7), len), "len %u", len);
	for (int i = 0; i < rounds; i++) {
		uint32_t len = rnd_below(s, i < rounds / 2 ? 2048 : (uint32_t)sizeof(buf) - 16);
		uint32_t off = rnd_below(s, 16);

		REQUIRE(roce_crc32(buf + off, len) == ref_crc32(buf + off, len),
			      "crc32 of %u bytes at offset %u", len, off);
	}
}

START_TEST(test_crc32)
{
	uint64_t s = seed ^ 0xc4c;

	check_crc_lengths(&s, 400);
}
END_TEST

START_TEST(test_crc32_combine)
{
	static uint8_t buf[70000];
	uint64_t s = seed ^ 0xc0b;

	rnd_bytes(&s, buf, sizeof(buf));
	ck_assert_uint_eq(roce_crc32_combine(ref_crc32(buf, 10), 0, 0), ref_crc32(buf, 10));
	for (int i = 0; i < 300; i++) {
		/* B lengths beyond 16384 take the square-and-multiply path */
		uint32_t total = rnd_below(&s, i % 3 == 0 ? (uint32_t)sizeof(buf) : 4096);
		uint32_t split = rnd_below(&s, total + 1);
		uint32_t a = ref_crc32(buf, split);
		uint32_t b = ref_crc32(buf + split, total - split);

		REQUIRE(roce_crc32_combine(a, b, total - split) == ref_crc32(buf, total),
			      "combine at %u of %u", split, total);
	}
	/* exactly at the end of the x^8n table and one past it */
	for (uint32_t lb = 16383; lb <= 16385; lb++)
		ck_assert_uint_eq(roce_crc32_combine(ref_crc32(buf, 100), ref_crc32(buf + 100, lb), lb),
				  ref_crc32(buf, 100 + lb));
}
END_TEST

/*
 * The folding CRC (wire_crc.c) on each of its paths (64- and 32-byte VPCLMULQDQ, 16-byte
 * PCLMULQDQ, rte_net_crc + combine; a path the CPU lacks falls back to the next) against the bitwise CRC: a prefix of every length it takes, then bytes
 * copied on the way, continued from a CRC as zlib does; every copied byte lands, none beside.
 */
START_TEST(test_crc32_fold_paths)
{
	static const bool paths[4][3] = { { true, true, true }, { true, true, false },
					  { true, false, false }, { false, false, false } };
	static uint8_t buf[9000], dst[9100];
	uint64_t s = seed ^ 0xf01d;

	rnd_bytes(&s, buf, sizeof(buf));
	for (int p = 0; p < 4; p++) {
		wire_crc_fold_select(paths[p][0], paths[p][1], paths[p][2]);
		for (int i = 0; i < 1500; i++) {
			uint32_t pre = i < 300 ? (uint32_t)i % (WIRE_CRC_PRE_MAX + 1) :
				       rnd_below(&s, WIRE_CRC_PRE_MAX + 1);
			uint32_t len = i < 300 ? (uint32_t)i : rnd_below(&s, 8192);
			uint32_t split = rnd_below(&s, pre + 1);
			uint32_t want = ref_crc32(buf, pre + len);
			uint32_t crc = wire_crc32(0, buf, split);

			memset(dst, 0xa5, sizeof(dst));
			crc = wire_crc32_copy(crc, buf + split, pre - split, dst + 7, buf + pre, len);
			REQUIRE(crc == want, "path %d: prefix %u (split %u), %u bytes", p, pre, split,
				len);
			REQUIRE(memcmp(dst + 7, buf + pre, len) == 0 && dst[6] == 0xa5 &&
				dst[7 + len] == 0xa5, "path %d: copy of %u bytes", p, len);
			REQUIRE(wire_crc32(0, buf + pre, len) == ref_crc32(buf + pre, len),
				"path %d: %u bytes", p, len);
		}
	}
	roce_crc_select_fastest();
}
END_TEST

/*
 * The ICRC read in place (wire_crc32_masked() with the masks of wire_icrc.c) on each fold path
 * against the bitwise reference: every encapsulation, payloads of every length up to 300 bytes
 * and longer ones, random values in every field the ICRC masks, frames ending at a guard page.
 */
START_TEST(test_icrc_in_place_paths)
{
	static const bool paths[4][3] = { { true, true, true }, { true, true, false },
					  { true, false, false }, { false, false, false } };
	static const struct { enum roce_kind kind; uint8_t ip_ver, opcode; } shapes[] = {
		{ ROCE_KIND_ROCEV2, 4, ROCE_OP_RC_SEND_ONLY },
		{ ROCE_KIND_ROCEV2, 6, ROCE_OP_RC_SEND_ONLY },
		{ ROCE_KIND_ROCEV1, 6, ROCE_OP_RC_SEND_ONLY },
		{ ROCE_KIND_ROCEV2, 4, ROCE_OP_RC_ACKNOWLEDGE },
		{ ROCE_KIND_ROCEV2, 6, ROCE_OP_RC_RDMA_WRITE_FIRST },
		{ ROCE_KIND_ROCEV1, 6, ROCE_OP_UD_SEND_ONLY },
	};
	static uint8_t frame[MAX_FRAME];
	uint64_t s = seed ^ 0x1c7c;
	struct guard g;

	guard_init(&g, MAX_FRAME);
	for (int p = 0; p < 4; p++) {
		wire_crc_fold_select(paths[p][0], paths[p][1], paths[p][2]);
		for (unsigned int sh = 0; sh < ROCE_DIM(shapes); sh++) {
			bool payload = roce_opcode[shapes[sh].opcode].mask & ROCE_F_PAYLOAD;

			for (uint32_t i = 0; i < (payload ? 340u : 4u); i++) {
				uint32_t plen = !payload ? 0 : i < 300 ? i : rnd_below(&s, 8000);
				struct roce_pkt pkt;
				const uint8_t *q;
				int n;

				random_pkt(&s, &pkt, shapes[sh].kind, shapes[sh].opcode,
					   shapes[sh].ip_ver, (uint8_t)(i % 3));
				pkt.payload_len = plen;
				n = roce_wire_build(&pkt, 0, frame, sizeof(frame));
				REQUIRE(n > 0, "build %d", n);
				ck_assert_int_eq(roce_wire_parse(frame, (uint32_t)n, ROCE_PARSE_NO_ICRC,
								 &pkt), 0);
				/* the UDP checksum and BTH byte 4 are masked too: any value */
				if (pkt.kind == ROCE_KIND_ROCEV2)
					rnd_bytes(&s, frame + pkt.bth_off - 2, 2);
				frame[pkt.bth_off + 4] = (uint8_t)rnd(&s);
				q = guard_put(&g, frame, (uint32_t)n);
				REQUIRE(roce_icrc_calc(q, &pkt, (uint32_t)n - ROCE_ICRC_LEN) ==
					ref_icrc(q, &pkt, (uint32_t)n - ROCE_ICRC_LEN),
					"path %d, shape %u, %u VLANs, payload %u", p, sh, i % 3, plen);
			}
		}
	}
	roce_crc_select_fastest();
	guard_fini(&g);
}
END_TEST

/*
 * roce_fmt.h's number and address helpers against snprintf() and inet_ntop(): edge values and
 * random ones, every width, and buffers of every size up to the text's (snprintf's cut).
 */
static void check_fmt(const char *want, void (*put)(struct roce_fmt *, const void *), const void *arg)
{
	char buf[80];
	size_t len = strlen(want);

	for (size_t size = 0; size <= len + 1; size++) {
		struct roce_fmt f;
		int n;

		memset(buf, 0x5a, sizeof(buf));
		roce_fmt_init(&f, buf, size);
		put(&f, arg);
		n = roce_fmt_end(&f);
		REQUIRE(n == (int)len, "'%s': length %d in %zu bytes", want, n, size);
		REQUIRE(size == 0 || (strncmp(buf, want, size - 1) == 0 && buf[ROCE_MIN(size - 1, len)] == 0),
			"'%s' in %zu bytes: '%.*s'", want, size, (int)size, buf);
		REQUIRE((unsigned char)buf[size] == 0x5a, "'%s': written beyond %zu bytes", want, size);
	}
}

struct fmt_num { uint64_t v; unsigned int digits; };

static void put_hex(struct roce_fmt *f, const void *arg)
{
	const struct fmt_num *a = arg;

	roce_fmt_char(f, '<');	/* not at the buffer's start */
	roce_fmt_hex(f, a->v, a->digits);
}

static void put_dec(struct roce_fmt *f, const void *arg)
{
	const struct fmt_num *a = arg;

	roce_fmt_char(f, '<');
	roce_fmt_dec(f, a->v);
	roce_fmt_dec_width(f, a->v, a->digits, ' ');
}

static void put_ip(struct roce_fmt *f, const void *arg)
{
	roce_fmt_char(f, '<');
	roce_fmt_ip(f, arg, 4);
}

START_TEST(test_fmt_numbers)
{
	uint64_t s = seed ^ 0xf3a7;

	for (int i = 0; i < 3000; i++) {
		int bits = i % 65;
		struct fmt_num a = { .v = i < 130 ? (i < 65 ? 0 : ~0ull) ^ (bits ? 1ull << (bits - 1) : 0) :
					  rnd(&s) >> rnd_below(&s, 64),
				     .digits = 1 + (unsigned int)rnd_below(&s, 16) };
		struct roce_ip_addr ip = { .b = { (uint8_t)i, (uint8_t)(i >> 8), (uint8_t)rnd(&s),
						  (uint8_t)(255 - i) } };
		char want[80], addr[INET_ADDRSTRLEN];

		snprintf(want, sizeof(want), "<%0*llx", (int)a.digits, (unsigned long long)a.v);
		check_fmt(want, put_hex, &a);
		snprintf(want, sizeof(want), "<%llu%*llu", (unsigned long long)a.v, (int)a.digits,
			 (unsigned long long)a.v);
		check_fmt(want, put_dec, &a);
		inet_ntop(AF_INET, ip.b, addr, sizeof(addr));
		snprintf(want, sizeof(want), "<%s", addr);
		check_fmt(want, put_ip, &ip);
	}
}
END_TEST

/* With the EAL up, each SIMD path lib/wire may select agrees with the bitwise CRC too. */
START_TEST(test_crc32_eal_paths)
{
	uint64_t s = seed ^ 0xea1;
	const char *path;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	path = roce_crc_path();
	ck_assert(strcmp(path, "avx512") == 0 || strcmp(path, "avx2-vpclmulqdq") == 0 ||
		  strcmp(path, "sse42") == 0 || strcmp(path, "scalar") == 0);
	fprintf(stderr, "test_wire: CRC-32 path after EAL init: %s\n", path);
	check_crc_lengths(&s, 400);
	/* and each of rte_net_crc's paths this CPU can run (it falls back to scalar otherwise) */
	rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
	check_crc_lengths(&s, 100);
	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
	check_crc_lengths(&s, 100);
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	check_crc_lengths(&s, 100);
	roce_crc_select_fastest();
	for (unsigned int k = 0; k < ROCE_DIM(kats); k++) {
		struct roce_pkt pkt;

		ck_assert_int_eq(roce_wire_parse(kats[k].bytes, kats[k].len, 0, &pkt), 0);
		ck_assert_uint_eq(pkt.icrc_calc, kats[k].icrc);
	}
}
END_TEST

/* ---- every roce_wire_err reached by a crafted input ---- */

static uint32_t build_frame(uint8_t *buf, enum roce_kind kind, uint8_t opcode, uint8_t ip_ver,
			    uint8_t nvlan, uint32_t payload_len)
{
	struct roce_pkt pkt;
	int n;

	roce_pkt_init(&pkt, kind, opcode);
	if (kind == ROCE_KIND_ROCEV2)
		pkt.ip_ver = ip_ver;
	pkt.nvlan = nvlan;
	pkt.payload_len = payload_len;
	n = roce_wire_build(&pkt, 0, buf, MAX_FRAME);
	ck_assert_int_gt(n, 0);
	return (uint32_t)n;
}

static void fix_ipv4_csum(uint8_t *ip)
{
	uint32_t ihl = (ip[0] & 0xfu) * 4, sum = 0;

	ip[10] = ip[11] = 0;
	for (uint32_t i = 0; i < ihl; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

#define L3 14			/* IP header of a frame without VLAN tags */
#define L4 (L3 + 20)		/* UDP header over IPv4 */
#define BTH4 (L4 + 8)		/* BTH over IPv4 */

static uint32_t mk_ok(uint8_t *b)
{
	return build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY, 4, 0, 16);
}

static uint32_t mk_truncated(uint8_t *b)
{
	mk_ok(b);
	return 13;	/* ends inside the Ethernet header */
}

static uint32_t mk_not_roce(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[12] = 0x08, b[13] = 0x06;	/* ARP */
	return n;
}

static uint32_t mk_too_many_vlans(uint8_t *b)
{
	uint32_t n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY, 4, 2, 16);

	memmove(b + 16, b + 12, n - 12);	/* a third tag in front of the two */
	b[12] = 0x81, b[13] = 0x00, b[14] = 0x00, b[15] = 0x07;
	return n + 4;
}

static uint32_t mk_bad_ip_version(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[L3] = 0x65;	/* Ethertype IPv4, version 6 */
	return n;
}

static uint32_t mk_bad_ip_hdr_len(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[L3] = 0x44;	/* IHL 4 */
	return n;
}

static uint32_t mk_bad_ip_len(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[L3 + 2] = 0, b[L3 + 3] = 19;	/* total length below the header length */
	fix_ipv4_csum(b + L3);
	return n;
}

static uint32_t mk_bad_ip_csum(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[L3 + 10] ^= 0x5a;
	return n;
}

static uint32_t mk_ip_fragment(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[L3 + 6] |= 0x20;	/* more fragments */
	fix_ipv4_csum(b + L3);
	return n;
}

static uint32_t mk_bad_udp_len(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[L4 + 5] += 4;
	return n;
}

static uint32_t mk_bad_grh(uint8_t *b)
{
	uint32_t n = build_frame(b, ROCE_KIND_ROCEV1, ROCE_OP_RC_SEND_ONLY, 6, 0, 16);

	b[L3 + 6] = 17;	/* GRH next header UDP instead of 0x1b (IBA transport) */
	return n;
}

static uint32_t mk_unknown_opcode(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[BTH4] = 0x15;	/* reserved in IBA table 38 */
	return n;
}

static uint32_t mk_bad_tver(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[BTH4 + 1] |= 0x01;
	return n;
}

static uint32_t mk_bad_pad(uint8_t *b)
{
	uint32_t n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_ACKNOWLEDGE, 4, 0, 0);

	b[BTH4 + 1] |= 0x10;	/* pad 1 on an opcode without a payload */
	return n;
}

static uint32_t mk_bad_payload_len(uint8_t *b)
{
	uint32_t n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY, 4, 0, 8);

	b[BTH4] = ROCE_OP_RC_ACKNOWLEDGE;	/* 4 bytes after the AETH, where none may be */
	return n;
}

static uint32_t mk_icrc_mismatch(uint8_t *b)
{
	uint32_t n = mk_ok(b);

	b[n - 1] ^= 0x80;
	return n;
}

static uint32_t mk_bad_mac_ctrl(uint8_t *b)
{
	uint32_t n = build_frame(b, ROCE_KIND_PFC, 0, 0, 0, 0);

	b[L3] = 0x00, b[L3 + 1] = 0x02;	/* MAC control opcode 2 (GATE, 802.3 annex 31A): not ours */
	return n;
}

struct fault {
	uint32_t (*make)(uint8_t *buf);		/* writes the input, returns its length */
	int rc;					/* what roce_wire_parse() must return */
};

/* Indexed by the error each input must produce; a new error code without an input fails. */
static const struct fault faults[] = {
	[ROCE_WERR_OK] = { mk_ok, 0 },
	[ROCE_WERR_TRUNCATED] = { mk_truncated, -EINVAL },
	[ROCE_WERR_NOT_ROCE] = { mk_not_roce, -EINVAL },
	[ROCE_WERR_TOO_MANY_VLANS] = { mk_too_many_vlans, -EINVAL },
	[ROCE_WERR_BAD_IP_VERSION] = { mk_bad_ip_version, -EINVAL },
	[ROCE_WERR_BAD_IP_HDR_LEN] = { mk_bad_ip_hdr_len, -EINVAL },
	[ROCE_WERR_BAD_IP_LEN] = { mk_bad_ip_len, -EINVAL },
	[ROCE_WERR_BAD_IP_CSUM] = { mk_bad_ip_csum, -EINVAL },
	[ROCE_WERR_IP_FRAGMENT] = { mk_ip_fragment, -EINVAL },
	[ROCE_WERR_BAD_UDP_LEN] = { mk_bad_udp_len, -EINVAL },
	[ROCE_WERR_BAD_GRH] = { mk_bad_grh, -EINVAL },
	[ROCE_WERR_UNKNOWN_OPCODE] = { mk_unknown_opcode, -EINVAL },
	[ROCE_WERR_BAD_TVER] = { mk_bad_tver, -EINVAL },
	[ROCE_WERR_BAD_PAD] = { mk_bad_pad, -EINVAL },
	[ROCE_WERR_BAD_PAYLOAD_LEN] = { mk_bad_payload_len, -EINVAL },
	[ROCE_WERR_ICRC_MISMATCH] = { mk_icrc_mismatch, -EBADMSG },
	[ROCE_WERR_BAD_MAC_CTRL] = { mk_bad_mac_ctrl, -EINVAL },
};
ROCE_STATIC_ASSERT(ROCE_DIM(faults) == ROCE_WERR_NUM);

START_TEST(test_fault)
{
	static uint8_t buf[MAX_FRAME];
	enum roce_wire_err want = (enum roce_wire_err)_i;
	struct roce_pkt pkt;
	const uint8_t *p;
	struct guard g;
	uint32_t n;
	int rc;

	ck_assert_msg(faults[want].make != NULL, "no input reaches error %d (%s)", want,
		      roce_wire_strerror(want));
	n = faults[want].make(buf);
	guard_init(&g, MAX_FRAME);
	p = guard_put(&g, buf, n);
	rc = roce_wire_parse(p, n, 0, &pkt);
	ck_assert_msg(pkt.err == want, "want %s, got %s", roce_wire_strerror(want),
		      roce_wire_strerror(pkt.err));
	ck_assert_int_eq(rc, faults[want].rc);
	ck_assert_str_ne(roce_wire_strerror(pkt.err), "?");
	ck_assert_ptr_null(check_decode(p, n, rc, &pkt, true));
	if (want == ROCE_WERR_NOT_ROCE)
		ck_assert_int_eq(pkt.kind, ROCE_KIND_OTHER);
	/* Without the ICRC, the same fault (the ICRC one disappears). */
	rc = roce_wire_parse(p, n, ROCE_PARSE_NO_ICRC, &pkt);
	ck_assert_int_eq(pkt.err, want == ROCE_WERR_ICRC_MISMATCH ? ROCE_WERR_OK : want);
	guard_fini(&g);
}
END_TEST

/* Other roads to the same faults. */
START_TEST(test_fault_more)
{
	static uint8_t b[MAX_FRAME];
	struct roce_pkt pkt;
	uint32_t n;

	/* pad 3 with no payload byte to take it from */
	n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY, 4, 0, 0);
	b[BTH4 + 1] |= 0x30;
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_BAD_PAD);
	/* ATOMIC_WRITE carries exactly 8 bytes: 16 are refused (same headers as WRITE_ONLY) */
	n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_ONLY, 4, 0, 16);
	b[BTH4] = ROCE_OP_RC_ATOMIC_WRITE;
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_BAD_PAYLOAD_LEN);
	/* a later IPv4 fragment has no UDP header: not RoCE */
	n = mk_ok(b);
	b[L3 + 7] = 0x10;
	fix_ipv4_csum(b + L3);
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_NOT_ROCE);
	/* UDP to another port */
	n = mk_ok(b);
	b[L4 + 3] ^= 1;
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_NOT_ROCE);
	/* IPv6 total length beyond the frame */
	n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY, 6, 0, 16);
	b[L3 + 5] += 1;
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_TRUNCATED);
	/* IPv4 options are tolerated, and the ICRC covers them */
	{
		static uint8_t o[MAX_FRAME];

		n = mk_ok(b);
		memcpy(o, b, L4);
		memset(o + L4, 1, 4);			/* four NOP options */
		memcpy(o + L4 + 4, b + L4, n - L4);
		o[L3] = 0x46;
		o[L3 + 3] += 4;
		fix_ipv4_csum(o + L3);
		ck_assert_int_eq(roce_wire_parse(o, n + 4, ROCE_PARSE_NO_ICRC, &pkt), 0);
		ck_assert_uint_eq(pkt.l4_off, L4 + 4);
		ck_assert_uint_eq(pkt.payload_len, 16);
		o[n + 4 - 4] = (uint8_t)ref_icrc(o, &pkt, n);
		o[n + 4 - 3] = (uint8_t)(ref_icrc(o, &pkt, n) >> 8);
		o[n + 4 - 2] = (uint8_t)(ref_icrc(o, &pkt, n) >> 16);
		o[n + 4 - 1] = (uint8_t)(ref_icrc(o, &pkt, n) >> 24);
		ck_assert_int_eq(roce_wire_parse(o, n + 4, 0, &pkt), 0);
		ck_assert(pkt.icrc_ok);
	}
}
END_TEST

/* A descriptor whose payload length would wrap the 32-bit frame length is refused, not built. */
START_TEST(test_build_huge_payload)
{
	static uint8_t buf[MAX_FRAME];
	struct roce_pkt pkt;

	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
	pkt.payload_len = UINT32_MAX - 40;	/* headers + this + pad wrap to 18 bytes */
	ck_assert_int_eq(roce_wire_frame_len(&pkt, 0), -EINVAL);
	ck_assert_int_eq(roce_wire_build(&pkt, 0, buf, sizeof(buf)), -EINVAL);
	pkt.payload_len = 65536;
	ck_assert_int_eq(roce_wire_frame_len(&pkt, 0), -EINVAL);
	/* 58 bytes of headers and ICRC + payload + pad: the largest frame is 65534 bytes */
	pkt.payload_len = 65476;
	ck_assert_int_eq(roce_wire_frame_len(&pkt, 0), 65534);
	pkt.payload_len = 65477;	/* pad 3: 65538 bytes */
	ck_assert_int_eq(roce_wire_frame_len(&pkt, 0), -EINVAL);
}
END_TEST

START_TEST(test_fault_names)
{
	for (int a = 0; a < ROCE_WERR_NUM; a++) {
		ck_assert_str_ne(roce_wire_strerror((enum roce_wire_err)a), "?");
		for (int b = a + 1; b < ROCE_WERR_NUM; b++)
			ck_assert_str_ne(roce_wire_strerror((enum roce_wire_err)a),
					 roce_wire_strerror((enum roce_wire_err)b));
	}
	ck_assert_str_eq(roce_wire_strerror(ROCE_WERR_NUM), "?");
	ck_assert_str_eq(roce_wire_strerror((enum roce_wire_err)-1), "?");
	ck_assert_str_eq(roce_kind_name((enum roce_kind)99), "?");
}
END_TEST

/* ---- parser input ending at a guard page: every truncation of several frames ---- */

static uint32_t base_frames(uint8_t (*out)[MAX_FRAME], uint32_t *lens, int max)
{
	uint64_t s = seed ^ 0x6a7d;
	int n = 0;

	/* One of each kind, opcode family and encapsulation; payloads keep their pad. */
	for (int i = 0; i < n_valid_ops && n < max; i++) {
		for (unsigned int e = 0; e < ROCE_DIM(encaps) && n < max; e += 3) {
			struct roce_pkt pkt;
			int len;

			random_pkt(&s, &pkt, encaps[e].kind, valid_ops[i], encaps[e].ip_ver,
				   encaps[e].nvlan);
			pkt.payload_len = payload_len_for(valid_ops[i], rnd_below(&s, 70));
			len = roce_wire_build(&pkt, 0, out[n], MAX_FRAME);
			ck_assert_int_gt(len, 0);
			lens[n++] = (uint32_t)len;
		}
	}
	for (int k = ROCE_KIND_PFC; k <= ROCE_KIND_PAUSE && n < max; k++) {
		for (uint8_t v = 0; v <= 2 && n < max; v++) {
			struct roce_pkt pkt;
			int len;

			random_pkt(&s, &pkt, (enum roce_kind)k, 0, 0, v);
			len = roce_wire_build(&pkt, 0, out[n], MAX_FRAME);
			ck_assert_int_gt(len, 0);
			lens[n++] = (uint32_t)len;
		}
	}
	for (unsigned int k = 0; k < ROCE_DIM(kats) && n < max; k++) {
		memcpy(out[n], kats[k].bytes, kats[k].len);
		lens[n++] = kats[k].len;
	}
	return (uint32_t)n;
}

#define MAX_BASES 160
static uint8_t bases[MAX_BASES][MAX_FRAME];
static uint32_t base_lens[MAX_BASES];
static uint32_t n_bases;

static void bases_setup(void)
{
	if (n_bases == 0)
		n_bases = base_frames(bases, base_lens, MAX_BASES);
}

START_TEST(test_guard_truncations)
{
	struct guard g;

	guard_init(&g, MAX_FRAME);
	for (uint32_t b = 0; b < n_bases; b++) {
		struct roce_pkt full;
		uint32_t need;

		ck_assert_int_eq(roce_wire_parse(bases[b], base_lens[b], 0, &full), 0);
		/* PFC and PAUSE need only their body; everything else every byte */
		need = full.kind == ROCE_KIND_PFC ? full.l3_off + 20u :
		       full.kind == ROCE_KIND_PAUSE ? full.l3_off + 4u : base_lens[b];
		for (uint32_t t = 0; t <= base_lens[b]; t++) {
			const uint8_t *p = guard_put(&g, bases[b], t);
			struct roce_pkt pkt;
			int rc = roce_wire_parse(p, t, 0, &pkt);
			const char *why = check_decode(p, t, rc, &pkt, true);

			REQUIRE(why == NULL, "base %u cut at %u: %s", b, t, why);
			why = check_parse_rx(p, t, t * 2654435761u);
			REQUIRE(why == NULL, "base %u cut at %u: %s", b, t, why);
			if (t >= need) {
				REQUIRE(rc == 0, "base %u cut at %u: %s", b, t,
					      roce_wire_strerror(pkt.err));
			} else {
				REQUIRE(rc == -EINVAL && pkt.err == ROCE_WERR_TRUNCATED,
					      "base %u cut at %u of %u: rc %d %s", b, t, base_lens[b],
					      rc, roce_wire_strerror(pkt.err));
			}
		}
		/* Ethernet padding after the datagram is ignored */
		for (uint32_t x = 1; x <= 16; x++) {
			static uint8_t padded[MAX_FRAME + 16];
			struct roce_pkt pkt;
			const uint8_t *p;

			memcpy(padded, bases[b], base_lens[b]);
			memset(padded + base_lens[b], 0xa5, x);
			p = guard_put(&g, padded, base_lens[b] + x);
			REQUIRE(roce_wire_parse(p, base_lens[b] + x, 0, &pkt) == 0, "base %u + %u", b, x);
			REQUIRE(pkt_cmp(&full, &pkt) == NULL, "base %u + %u", b, x);
			REQUIRE(check_parse_rx(p, base_lens[b] + x, x * 40503u) == NULL, "base %u + %u", b, x);
		}
	}
	guard_fini(&g);
}
END_TEST

/* ---- 10^6 random mutations of valid frames: no crash, a consistent decode or a named error ---- */

#define MUTATION_CHUNKS 10
#define WORK_MAX (MAX_FRAME + 64)

static long mutations_total(void)
{
	const char *env = getenv("ROCE_TEST_MUTATIONS");

	return env != NULL ? strtol(env, NULL, 0) : 1000000;
}

/* One random edit; biased towards the bytes that steer the parser (lengths, types, BTH). */
static void mutate(uint64_t *s, uint8_t *w, uint32_t *len, uint32_t l3)
{
	static const uint16_t steer[] = { 12, 13, 16, 17 };	/* Ethertypes, first VLAN TCI */
	uint32_t pos;

	switch (rnd_below(s, 7)) {
	case 0:		/* flip a bit */
		if (*len > 0) {
			pos = rnd_below(s, *len);
			w[pos] ^= (uint8_t)(1u << rnd_below(s, 8));
		}
		break;
	case 1:		/* set a byte */
		if (*len > 0)
			w[rnd_below(s, *len)] = (uint8_t)rnd(s);
		break;
	case 2:		/* truncate */
		*len = rnd_below(s, *len + 1);
		break;
	case 3:		/* extend with random bytes */
		pos = 1 + rnd_below(s, 64);
		if (*len + pos <= WORK_MAX) {
			rnd_bytes(s, w + *len, pos);
			*len += pos;
		}
		break;
	case 4:		/* a header byte near L3/L4/BTH: version, lengths, protocol, opcode, pad */
		pos = l3 + rnd_below(s, 72);
		if (pos < *len)
			w[pos] = (uint8_t)rnd(s);
		break;
	case 5:		/* an Ethertype or tag byte */
		pos = steer[rnd_below(s, ROCE_DIM(steer))];
		if (pos < *len)
			w[pos] = (uint8_t)rnd(s);
		break;
	default:	/* another valid opcode in the BTH (over IPv4 or IPv6 without options) */
		pos = l3 + (w[l3] >> 4 == 4 ? 28 : 48);
		if (pos < *len && n_valid_ops > 0)
			w[pos] = valid_ops[rnd_below(s, (uint32_t)n_valid_ops)];
		break;
	}
}

START_TEST(test_mutations)
{
	static uint8_t work[WORK_MAX], scratch[70000];
	long total = mutations_total(), per = total / MUTATION_CHUNKS, fixed_ok = 0, decoded = 0;
	uint64_t s = seed ^ (0x77u + (uint64_t)_i * 0x1000193u);
	struct guard g;
	char text[512];

	guard_init(&g, WORK_MAX);
	for (long it = 0; it < per; it++) {
		uint32_t b = rnd_below(&s, n_bases), len = base_lens[b], l3;
		unsigned int flags = rnd_below(&s, 4) == 0 ? 0 : ROCE_PARSE_NO_ICRC;
		struct roce_pkt pkt;
		const uint8_t *p;
		const char *why;
		int n, rc, nmut = 1 + (int)rnd_below(&s, 3);

		memcpy(work, bases[b], len);
		{
			struct roce_pkt base;

			roce_wire_parse(bases[b], base_lens[b], ROCE_PARSE_NO_ICRC, &base);
			l3 = base.l3_off;
		}
		for (int m = 0; m < nmut; m++)
			mutate(&s, work, &len, l3);
		/* Half the time repair the IPv4 checksum so the edit reaches the layers above. */
		if (rnd_below(&s, 2) && len >= l3 + 20 && work[l3] >> 4 == 4 &&
		    len >= l3 + (work[l3] & 0xfu) * 4 && (work[l3] & 0xfu) >= 5)
			fix_ipv4_csum(work + l3);

		p = guard_put(&g, work, len);
		rc = roce_wire_parse(p, len, flags, &pkt);
		why = check_decode(p, len, rc, &pkt, !(flags & ROCE_PARSE_NO_ICRC));
		REQUIRE(why == NULL, "iteration %ld (base %u, len %u): %s", it, b, len, why);
		why = check_parse_rx(p, len, (uint32_t)rnd(&s));
		REQUIRE(why == NULL, "iteration %ld (base %u, len %u): %s", it, b, len, why);
		roce_pkt_snprint(text, rnd_below(&s, 40), &pkt);	/* a short buffer cuts cleanly */
		n = roce_pkt_snprint(text, sizeof(text), &pkt);
		REQUIRE(n > 0 && n < (int)sizeof(text) && strlen(text) == (size_t)n, "snprint %d", n);
		if (rc != 0)
			continue;
		decoded++;
		why = check_rebuild(&pkt, scratch, sizeof(scratch));
		REQUIRE(why == NULL, "iteration %ld: rebuild: %s", it, why);

		/* A frame that decodes without its ICRC decodes with it once the ICRC is repaired. */
		if ((flags & ROCE_PARSE_NO_ICRC) &&
		    (pkt.kind == ROCE_KIND_ROCEV2 || pkt.kind == ROCE_KIND_ROCEV1)) {
			uint32_t end = chk_ip_end(p, &pkt) - ROCE_ICRC_LEN;
			uint32_t icrc = ref_icrc(p, &pkt, end);

			for (int k = 0; k < 4; k++)
				work[end + k] = (uint8_t)(icrc >> (8 * k));
			p = guard_put(&g, work, len);
			rc = roce_wire_parse(p, len, 0, &pkt);
			REQUIRE(rc == 0 && pkt.icrc_ok, "iteration %ld: repaired ICRC: %s", it,
				      roce_wire_strerror(pkt.err));
			why = check_parse_rx(p, len, (uint32_t)rnd(&s));
			REQUIRE(why == NULL, "iteration %ld: repaired ICRC: %s", it, why);
			fixed_ok++;
		}
	}
	/* The mutations must reach deep: some frames still decode, some after an ICRC repair. */
	ck_assert_int_gt(decoded, per / 100);
	ck_assert_int_gt(fixed_ok, per / 1000);
	guard_fini(&g);
}
END_TEST

/* ---- PFC and PAUSE with known quanta ---- */

START_TEST(test_pfc_pause)
{
	/* IEEE 802.1Qbb 36.1.3 / 802.3 annex 31D: DA 01-80-C2-00-00-01, Ethertype 88-08, opcode
	 * 01-01, class-enable vector, eight pause times; zero padding to the 60-byte minimum. */
	static const uint8_t pfc_want[60] = {
		0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0x08, 0x01, 0x01, 0x00, 0x09, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
		0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	};
	/* IEEE 802.3 annex 31B: opcode 00-01, one pause time */
	static const uint8_t pause_want[60] = {
		0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0x08, 0x00, 0x01, 0xff, 0xff,
	};
	uint8_t buf[128];
	struct roce_pkt pkt, got;

	roce_pkt_init(&pkt, ROCE_KIND_PFC, 0);
	pkt.pfc_cev = 0x0009;		/* priorities 0 and 3 */
	pkt.quanta[0] = 0xffff;
	pkt.quanta[3] = 0x1234;
	pkt.quanta[7] = 1;
	ck_assert_int_eq(roce_wire_build(&pkt, 0, buf, sizeof(buf)), 60);
	ck_assert_mem_eq(buf, pfc_want, 60);
	ck_assert_int_eq(roce_wire_parse(buf, 60, 0, &got), 0);
	ck_assert_int_eq(got.kind, ROCE_KIND_PFC);
	ck_assert_uint_eq(got.pfc_cev, 9);
	ck_assert_uint_eq(got.quanta[0], 0xffff);
	ck_assert_uint_eq(got.quanta[3], 0x1234);
	ck_assert_uint_eq(got.quanta[7], 1);
	ck_assert_ptr_null(pkt_cmp(&pkt, &got));
	ck_assert_int_eq(roce_wire_build(&pkt, 0, buf, 59), -ENOSPC);

	roce_pkt_init(&pkt, ROCE_KIND_PAUSE, 0);
	pkt.quanta[0] = 0xffff;
	ck_assert_int_eq(roce_wire_build(&pkt, 0, buf, sizeof(buf)), 60);
	ck_assert_mem_eq(buf, pause_want, 60);
	ck_assert_int_eq(roce_wire_parse(buf, 60, 0, &got), 0);
	ck_assert_int_eq(got.kind, ROCE_KIND_PAUSE);
	ck_assert_uint_eq(got.quanta[0], 0xffff);

	/* a PFC frame behind a VLAN tag */
	roce_pkt_init(&pkt, ROCE_KIND_PFC, 0);
	pkt.nvlan = 1;
	pkt.vlan[0].tpid = 0x8100;
	pkt.vlan[0].vid = 100;
	pkt.vlan[0].pcp = 7;
	pkt.quanta[5] = 77;
	pkt.pfc_cev = 1u << 5;
	ck_assert_int_eq(roce_wire_build(&pkt, 0, buf, sizeof(buf)), 60);
	ck_assert_int_eq(roce_wire_parse(buf, 60, 0, &got), 0);
	ck_assert_ptr_null(pkt_cmp(&pkt, &got));
}
END_TEST

/* ---- the small tables: RNR timer, PSN arithmetic, AETH names, opcode names ---- */

START_TEST(test_rnr_timer)
{
	/* IBA 9.7.5.2.8 table 45 */
	ck_assert_uint_eq(roce_rnr_timer_ns(0), 655360000ull);	/* 655.36 ms */
	ck_assert_uint_eq(roce_rnr_timer_ns(1), 10000ull);	/* 0.01 ms */
	ck_assert_uint_eq(roce_rnr_timer_ns(12), 640000ull);	/* 0.64 ms */
	ck_assert_uint_eq(roce_rnr_timer_ns(14), 1280000ull);	/* 1.28 ms */
	ck_assert_uint_eq(roce_rnr_timer_ns(18), 5120000ull);	/* 5.12 ms */
	ck_assert_uint_eq(roce_rnr_timer_ns(31), 491520000ull);	/* 491.52 ms */
	for (uint8_t c = 2; c < 32; c++)
		ck_assert_uint_gt(roce_rnr_timer_ns(c), roce_rnr_timer_ns(c - 1));
}
END_TEST

START_TEST(test_psn_diff)
{
	ck_assert_int_eq(roce_psn_diff(5, 3), 2);
	ck_assert_int_eq(roce_psn_diff(3, 5), -2);
	ck_assert_int_eq(roce_psn_diff(0, 0xffffff), 1);	/* across the 2^24 wrap */
	ck_assert_int_eq(roce_psn_diff(0xffffff, 0), -1);
	ck_assert_int_eq(roce_psn_diff(0x000010, 0xfffff0), 0x20);
	ck_assert_int_eq(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	ck_assert_int_eq(roce_psn_diff(0x800000, 0), -0x800000);
	ck_assert_int_eq(roce_psn_diff(0x1000005, 5), 0);	/* bits above 24 are ignored */
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(roce_aeth_name(0x1f), "ACK");
	ck_assert_str_eq(roce_aeth_name(0x2c), "RNR_NAK");
	ck_assert_str_eq(roce_aeth_name(0x60), "NAK_PSN_SEQ_ERR");
	ck_assert_str_eq(roce_aeth_name(0x61), "NAK_INVALID_REQ");
	ck_assert_str_eq(roce_aeth_name(0x62), "NAK_REM_ACCESS_ERR");
	ck_assert_str_eq(roce_aeth_name(0x63), "NAK_REM_OP_ERR");
	ck_assert_int_eq(roce_opcode_by_name("rc_send_only"), ROCE_OP_RC_SEND_ONLY);
	ck_assert_int_eq(roce_opcode_by_name("CNP"), ROCE_OP_CNP);
	ck_assert_int_eq(roce_opcode_by_name("RC_BOGUS"), -1);
	for (int i = 0; i < n_valid_ops; i++)
		ck_assert_int_eq(roce_opcode_by_name(roce_opcode[valid_ops[i]].name), valid_ops[i]);
	/*
	 * IBA 9.2 table 38: 23 RC + 2 (IBA 1.5: FLUSH, ATOMIC_WRITE) + 12 UC + 22 RD + 2 UD
	 * + 23 XRC, and the CNP
	 */
	ck_assert_int_eq(n_valid_ops, 85);
	ck_assert_int_eq(roce_opcode_by_name("XRC_SEND_FIRST"), ROCE_OP_XRC_SEND_FIRST);
	ck_assert_int_eq(roce_opcode_by_name("RD_RESYNC"), ROCE_OP_RD_RESYNC);
	ck_assert_ptr_null(roce_opcode[0x56].name);	/* reserved in the RD range */
	ck_assert_ptr_null(roce_opcode[0xb5].name);	/* reserved in the XRC range */
}
END_TEST

/*
 * A snaplen (tcpdump -s, editcap -s) keeps the first bytes of each frame: with
 * ROCE_PARSE_CAPTURE every header that fits is decoded as in the whole frame, the lengths come
 * from the IP header, and no ICRC verdict is given. Every base frame cut at every length, at
 * the end of a guard page.
 */
START_TEST(test_guard_snaplen)
{
	struct guard g;
	uint32_t cut_after_ext = 0, cut_in_ext = 0;

	guard_init(&g, MAX_FRAME);
	for (uint32_t b = 0; b < n_bases; b++) {
		struct roce_pkt full;

		ck_assert_int_eq(roce_wire_parse(bases[b], base_lens[b], 0, &full), 0);
		if (full.kind != ROCE_KIND_ROCEV2 && full.kind != ROCE_KIND_ROCEV1)
			continue;
		for (uint32_t t = 0; t < base_lens[b]; t++) {
			const uint8_t *p = guard_put(&g, bases[b], t);
			struct roce_pkt pkt;
			int rc = roce_wire_parse(p, t, ROCE_PARSE_CAPTURE, &pkt);
			const char *why = check_decode(p, t, rc, &pkt, true);

			REQUIRE(why == NULL, "base %u cut at %u: %s", b, t, why);
			if (t >= full.payload_off) {
				/* every header captured: the frame as it was on the wire */
				REQUIRE(rc == 0 && pkt.truncated, "base %u cut at %u: rc %d %s", b, t,
					rc, roce_wire_strerror(pkt.err));
				REQUIRE(pkt.payload == p + full.payload_off &&
					memcmp(pkt.payload, full.payload, ROCE_MIN(t - full.payload_off,
					       full.payload_len)) == 0, "base %u cut at %u", b, t);
				pkt.payload = NULL;	/* only part of it is there: not compared */
				REQUIRE(pkt_cmp(&full, &pkt) == NULL, "base %u cut at %u: %s", b, t,
					pkt_cmp(&full, &pkt));
				REQUIRE(pkt.payload_len == full.payload_len && !pkt.icrc_ok &&
					pkt.icrc_calc == 0, "base %u cut at %u", b, t);
				cut_after_ext++;
			} else if (t >= full.bth_off + (uint32_t)ROCE_BTH_LEN) {
				/* inside the extended headers: the BTH, and a fault */
				REQUIRE(rc == -EINVAL && pkt.err == ROCE_WERR_TRUNCATED && pkt.truncated &&
					pkt.bth_off == full.bth_off && pkt.opcode == full.opcode &&
					pkt.dqpn == full.dqpn && pkt.psn == full.psn,
					"base %u cut at %u: rc %d %s", b, t, rc, roce_wire_strerror(pkt.err));
				cut_in_ext++;
			} else {
				REQUIRE(rc == -EINVAL && pkt.err == ROCE_WERR_TRUNCATED && pkt.bth_off == 0,
					"base %u cut at %u: rc %d %s", b, t, rc, roce_wire_strerror(pkt.err));
			}
			/* without the flag, as before: cut is cut */
			REQUIRE(roce_wire_parse(p, t, 0, &pkt) == -EINVAL &&
				pkt.err == ROCE_WERR_TRUNCATED && !pkt.truncated, "base %u at %u", b, t);
		}
	}
	ck_assert_uint_gt(cut_after_ext, 0);
	ck_assert_uint_gt(cut_in_ext, 0);
	guard_fini(&g);
}
END_TEST

/* Insert @p ext (a chain of IPv6 extension headers, @p nh first) between IPv6 and UDP. */
static uint32_t add_ipv6_ext(uint8_t *b, uint32_t n, const uint8_t *ext, uint32_t ext_len)
{
	uint32_t plen = (uint32_t)(b[L3 + 4] << 8 | b[L3 + 5]) + ext_len;

	memmove(b + L3 + 40 + ext_len, b + L3 + 40, n - L3 - 40);
	memcpy(b + L3 + 40, ext, ext_len);
	b[L3 + 4] = (uint8_t)(plen >> 8);
	b[L3 + 5] = (uint8_t)plen;
	return n + ext_len;
}

/*
 * RoCEv2 behind IPv6 extension headers (hop-by-hop, destination options, an atomic fragment
 * header: RFC 8200 4.3-4.6, RFC 6946) is decoded with ROCE_PARSE_CAPTURE, its ICRC not judged;
 * fragments, loops and lengths beyond the datagram are refused.
 */
START_TEST(test_ipv6_ext)
{
	/* hop-by-hop (PadN) -> destination options (16 bytes) -> fragment (offset 0, M 0) -> UDP */
	static const uint8_t chain[32] = {
		60, 0, 1, 4, 0, 0, 0, 0,
		44, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		17, 0, 0, 0, 0x12, 0x34, 0x56, 0x78,
	};
	static uint8_t frame[MAX_FRAME], b[MAX_FRAME + 256];
	struct roce_pkt full, pkt;
	uint32_t n = build_frame(frame, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_FIRST, 6, 0, 32);
	uint32_t m;
	char text[512];
	struct guard g;
	const uint8_t *p;

	ck_assert_int_eq(roce_wire_parse(frame, n, 0, &full), 0);
	memcpy(b, frame, n);
	b[L3 + 6] = 0;		/* next header: hop-by-hop */
	m = add_ipv6_ext(b, n, chain, sizeof(chain));
	guard_init(&g, MAX_FRAME + 256);
	p = guard_put(&g, b, m);
	ck_assert_int_eq(roce_wire_parse(p, m, ROCE_PARSE_CAPTURE, &pkt), 0);
	ck_assert_ptr_null(check_decode(p, m, 0, &pkt, true));
	ck_assert_ptr_null(pkt_cmp(&full, &pkt));
	ck_assert_uint_eq(pkt.l4_off, L3 + 40 + sizeof(chain));
	ck_assert(roce_pkt_ipv6_ext(&pkt) && !pkt.icrc_ok && pkt.icrc_calc == 0);
	ck_assert_uint_eq(pkt.icrc, full.icrc);
	roce_pkt_snprint(text, sizeof(text), &pkt);
	ck_assert_msg(strstr(text, " icrc not checked") != NULL, "%s", text);
	/* not without the flag: a receiving NIC cannot check its ICRC */
	ck_assert_int_eq(roce_wire_parse(p, m, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_NOT_ROCE);
	/* cut inside the chain */
	for (uint32_t t = L3 + 40; t < L3 + 40 + sizeof(chain) + 8; t++) {
		p = guard_put(&g, b, t);
		ck_assert_int_eq(roce_wire_parse(p, t, ROCE_PARSE_CAPTURE, &pkt), -EINVAL);
		ck_assert_int_eq(pkt.err, ROCE_WERR_TRUNCATED);
	}

	/* a first fragment with more to come: RoCEv2 never fragments */
	memcpy(b, frame, n);
	b[L3 + 6] = 44;
	m = add_ipv6_ext(b, n, (const uint8_t[]){ 17, 0, 0, 1, 0, 0, 0, 1 }, 8);
	ck_assert_int_eq(roce_wire_parse(b, m, ROCE_PARSE_CAPTURE, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_IP_FRAGMENT);
	/* a later fragment holds no UDP header */
	b[L3 + 40 + 3] = 8;
	ck_assert_int_eq(roce_wire_parse(b, m, ROCE_PARSE_CAPTURE, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_NOT_ROCE);

	/* a header longer than the datagram */
	memcpy(b, frame, n);
	b[L3 + 6] = 0;
	m = add_ipv6_ext(b, n, (const uint8_t[]){ 17, 200, 1, 4, 0, 0, 0, 0 }, 8);
	ck_assert_int_eq(roce_wire_parse(b, m, ROCE_PARSE_CAPTURE, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_BAD_IP_LEN);

	/* nine destination options headers: the walk stops at eight */
	memcpy(b, frame, n);
	b[L3 + 6] = 60;
	m = n;
	for (int i = 0; i < 9; i++)
		m = add_ipv6_ext(b, m, (const uint8_t[]){ (uint8_t)(i == 0 ? 17 : 60), 0, 1, 4,
							  0, 0, 0, 0 }, 8);
	ck_assert_int_eq(roce_wire_parse(b, m, ROCE_PARSE_CAPTURE, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_NOT_ROCE);
	m = n + 8 * 8;	/* eight are walked */
	memcpy(b, frame, n);
	b[L3 + 6] = 60;
	for (int i = 0; i < 8; i++)
		add_ipv6_ext(b, n + 8u * (uint32_t)i, (const uint8_t[]){ (uint8_t)(i == 0 ? 17 : 60),
							  0, 1, 4, 0, 0, 0, 0 }, 8);
	ck_assert_int_eq(roce_wire_parse(b, m, ROCE_PARSE_CAPTURE, &pkt), 0);
	guard_fini(&g);
}
END_TEST

/*
 * XRC and RD frames written byte by byte in Python (no scapy here: struct.pack, the ICRC with
 * zlib.crc32 over the masked headers of IBA A17.3.3), one XRC RDMA WRITE First (XRCETH SRQ
 * 0x123456, RETH) and one RD SEND Only with Immediate (RDETH EE context 0xabcdef, DETH, ImmDt).
 * tshark 4.0.17 prints the RD one's ICRC as 0xfba27045, its bytes in wire order.
 */
static const uint8_t vec_xrc_write_first[82] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x44, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
	0x26, 0xa6, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x30, 0x00, 0x00, 0xa6, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x12, 0x00, 0x00, 0x00, 0x64, 0x00, 0x12, 0x34, 0x56, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x22, 0x22, 0x00, 0x00,
	0x00, 0x40, 0x01, 0x02, 0x03, 0x04, 0x76, 0xcb, 0xb9, 0x49,
};

static const uint8_t vec_rd_send_only_imm[78] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x40, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
	0x26, 0xaa, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00, 0x45, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x11, 0x00, 0x00, 0x00, 0xc8, 0x00, 0xab, 0xcd, 0xef, 0x11, 0x22,
	0x33, 0x44, 0x00, 0x55, 0x66, 0x77, 0xca, 0xfe, 0xf0, 0x0d, 0x05, 0x06,
	0x07, 0x08, 0xfb, 0xa2, 0x70, 0x45,
};

START_TEST(test_xrc_rd_vectors)
{
	uint8_t bad[sizeof(vec_rd_send_only_imm)];
	struct roce_pkt pkt;
	char text[512];

	ck_assert_int_eq(roce_wire_parse(vec_xrc_write_first, sizeof(vec_xrc_write_first), 0, &pkt), 0);
	ck_assert_int_eq(pkt.opcode, ROCE_OP_XRC_RDMA_WRITE_FIRST);
	ck_assert_uint_eq(pkt.xrc_srqn, 0x123456);
	ck_assert_uint_eq(pkt.reth.va, 0x1000);
	ck_assert_uint_eq(pkt.reth.rkey, 0x2222);
	ck_assert_uint_eq(pkt.reth.dmalen, 64);
	ck_assert_uint_eq(pkt.payload_len, 4);
	ck_assert(pkt.icrc_ok);
	roce_pkt_snprint(text, sizeof(text), &pkt);
	ck_assert_str_eq(text, "10.0.0.1.49152 > 10.0.0.2.4791 XRC_RDMA_WRITE_FIRST qp 0x000012 psn 100 "
			 "xrceth srq 0x123456 reth va 0x0000000000001000 rkey 0x00002222 dmalen 64 len 4 "
			 "icrc ok");

	ck_assert_int_eq(roce_wire_parse(vec_rd_send_only_imm, sizeof(vec_rd_send_only_imm), 0, &pkt), 0);
	ck_assert_int_eq(pkt.opcode, ROCE_OP_RD_SEND_ONLY_WITH_IMMEDIATE);
	ck_assert_uint_eq(pkt.rdeth_eecnxt, 0xabcdef);
	ck_assert_uint_eq(pkt.deth.qkey, 0x11223344);
	ck_assert_uint_eq(pkt.deth.srcqp, 0x556677);
	ck_assert_uint_eq(pkt.immdt, 0xcafef00d);
	ck_assert_uint_eq(pkt.payload_len, 4);
	ck_assert(pkt.icrc_ok);

	/* a bad ICRC: the one expected is printed in wire order, as tshark prints ICRCs */
	memcpy(bad, vec_rd_send_only_imm, sizeof(bad));
	bad[sizeof(bad) - 1] ^= 1;
	ck_assert_int_eq(roce_wire_parse(bad, sizeof(bad), 0, &pkt), -EBADMSG);
	roce_pkt_snprint(text, sizeof(text), &pkt);
	ck_assert_msg(strstr(text, " icrc BAD (expected 0xfba27045)") != NULL, "%s", text);
}
END_TEST

/*
 * An RC_SEND_ONLY under three tags (802.1ad 100, 802.1Q 200, 802.1Q 300): rocelab craft's
 * frame with the tags put in after the MACs; tshark 4.0 decodes the three tags, IPv4 and
 * "RRoCE RC Send Only QP=0x000000".
 */
static const uint8_t vec_three_tags[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0xc8, 0x81, 0x00, 0x01, 0x2c,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0xaf, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
	0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x53, 0xbe,
	0xbe, 0xf9,
};

/* The one-line text of a frame parsing stopped on says nothing untrue about the rest. */
START_TEST(test_print_stopped)
{
	static uint8_t b[MAX_FRAME];
	struct roce_pkt pkt;
	char text[512];
	uint32_t n;

	/* a third tag: its TPID and what is wrong, not "ethertype 0x0000, not RoCE" */
	ck_assert_int_eq(roce_wire_parse(vec_three_tags, sizeof(vec_three_tags), 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_TOO_MANY_VLANS);
	ck_assert_uint_eq(pkt.ethertype, 0x8100);
	roce_pkt_snprint(text, sizeof(text), &pkt);
	ck_assert_str_eq(text, "vlan 100 pcp 0, vlan 200 pcp 0, tpid 0x8100: more VLAN tags than "
			 "rocelab decodes [too-many-vlans]");

	/* BTH TVer 1: no extended headers and no payload length decoded, so none shown */
	n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_ONLY, 4, 0, 100);
	b[BTH4 + 1] |= 0x01;
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_BAD_TVER);
	roce_pkt_snprint(text, sizeof(text), &pkt);
	ck_assert_msg(strstr(text, " len ") == NULL && strstr(text, "reth") == NULL, "%s", text);
	ck_assert_msg(strstr(text, "[bad-tver]") != NULL, "%s", text);

	/* pad 3 with 2 bytes after the headers: the payload's length is not known, nor 0 */
	n = build_frame(b, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY, 4, 0, 0);
	memmove(b + n + 2 - ROCE_ICRC_LEN, b + n - ROCE_ICRC_LEN, ROCE_ICRC_LEN);
	n += 2;
	b[L3 + 3] += 2;
	fix_ipv4_csum(b + L3);
	b[L4 + 5] += 2;
	b[BTH4 + 1] |= 0x30;
	ck_assert_int_eq(roce_wire_parse(b, n, 0, &pkt), -EINVAL);
	ck_assert_int_eq(pkt.err, ROCE_WERR_BAD_PAD);
	roce_pkt_snprint(text, sizeof(text), &pkt);
	ck_assert_msg(strstr(text, " len ") == NULL, "%s", text);
	ck_assert_msg(strstr(text, "[bad-pad]") != NULL, "%s", text);
}
END_TEST

/* ---- the suite ---- */

/* ---- MADs on QP1 and the CM's messages ---- */

/* rping's REQ: the UD payload of frame 4 of ../shared/pcap/rxe/rping.pcap (Linux 6.1 rdma_cm). */
static const uint8_t mad_req_rping[] = {
	0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x39, 0xd2, 0x31, 0x34,
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x34, 0x31, 0xd2, 0x39, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x1c, 0x06, 0x50, 0x54, 0x00, 0xff, 0xfe, 0xc0, 0x00, 0x03,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0xa0, 0x7d, 0xfe, 0x8f, 0xa7, 0xff, 0xff, 0x37, 0xf0, 0xff, 0xff, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xc0, 0x00, 0x02, 0x03,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xc0, 0x00, 0x02, 0x02,
	0xb9, 0x10, 0x80, 0x00, 0x00, 0x40, 0x00, 0x98, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0xe2, 0xbe, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* The 256-byte MAD of @head, zero after it. */
static void mad_fill(uint8_t mad[ROCE_MAD_LEN], const uint8_t *head, size_t n)
{
	memset(mad, 0, ROCE_MAD_LEN);
	memcpy(mad, head, n);
}

static void mad_line(const struct roce_mad *m, char *out, size_t size)
{
	struct roce_fmt f;

	roce_fmt_init(&f, out, size);
	roce_fmt_mad(&f, m);
	roce_fmt_end(&f);
}

START_TEST(test_mad_req)
{
	uint8_t mad[ROCE_MAD_LEN];
	struct roce_mad m;
	char line[256], ip[64];

	mad_fill(mad, mad_req_rping, sizeof(mad_req_rping));
	ck_assert_int_eq(roce_mad_parse(mad, sizeof(mad), &m), 0);
	ck_assert_uint_eq(m.have, ROCE_MAD_HAVE_HDR | ROCE_MAD_HAVE_LCID | ROCE_MAD_HAVE_SID |
			  ROCE_MAD_HAVE_QPN | ROCE_MAD_HAVE_PSN | ROCE_MAD_HAVE_REQ |
			  ROCE_MAD_HAVE_PATH | ROCE_MAD_HAVE_IPCM);
	ck_assert(!m.short_mad);
	ck_assert_uint_eq(m.mgmt_class, ROCE_MAD_CLASS_CM);
	ck_assert_uint_eq(m.class_version, 2);
	ck_assert_uint_eq(m.method, 0x03);
	ck_assert_uint_eq(m.tid, 0x0000000239d23134ull);
	ck_assert_uint_eq(m.attr_id, ROCE_CM_ATTR_REQ);
	ck_assert_uint_eq(m.lcid, 0x3431d239);
	ck_assert_uint_eq(m.service_id, 0x0000000001061c06ull);
	ck_assert_uint_eq(m.ca_guid, 0x505400fffec00003ull);
	ck_assert_uint_eq(m.qpn, 0x11);
	ck_assert_uint_eq(m.start_psn, 0x7dfe8f);
	ck_assert_uint_eq(m.resp_res, 1);
	ck_assert_uint_eq(m.init_depth, 1);
	ck_assert_uint_eq(m.remote_cm_timeout, 20);
	ck_assert_uint_eq(m.local_cm_timeout, 20);
	ck_assert_uint_eq(m.retry_count, 7);
	ck_assert_uint_eq(m.rnr_retry_count, 7);
	ck_assert_uint_eq(m.pkey, 0xffff);
	ck_assert_uint_eq(m.path_mtu, 3);
	ck_assert_uint_eq(m.max_cm_retries, 15);
	ck_assert_uint_eq(m.path.local_lid, 0xffff);
	ck_assert_uint_eq(m.path.hop_limit, 64);
	ck_assert_uint_eq(m.path.ack_timeout, 19);
	ck_assert_str_eq(roce_ip_ntop(&m.path.local_gid, 6, ip, sizeof(ip)), "::ffff:192.0.2.3");
	ck_assert_uint_eq(m.ipcm.ip_ver, 4);
	ck_assert_uint_eq(m.ipcm.sport, 0xe2be);
	ck_assert_str_eq(roce_ip_ntop(&m.ipcm.src, 4, ip, sizeof(ip)), "192.0.2.3");
	ck_assert_str_eq(roce_ip_ntop(&m.ipcm.dst, 4, ip, sizeof(ip)), "192.0.2.2");
	ck_assert_ptr_eq(m.priv, mad + 164);
	ck_assert_uint_eq(m.priv_len, 92);
	mad_line(&m, line, sizeof(line));
	ck_assert_str_eq(line, "REQ lcid 0x3431d239 sid 0x0000000001061c06 (tcp port 7174) "
			       "qpn 0x000011 psn 8257167");
}
END_TEST

/* A REJ as rdma_cm answers a REQ nobody listens for (crafted after IBA 12.6.7). */
START_TEST(test_mad_rej)
{
	static const uint8_t rej[] = {
		0x01, 0x07, 0x02, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x39, 0xd2, 0x31, 0x34,
		0x00, 0x12, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0x34, 0x31, 0xd2, 0x39,	/* lcid 0 (none yet), rcid the REQ's */
		0x00, 0x00, 0x00, 28,			/* REQ rejected, no ARI, consumer reject */
	};
	uint8_t mad[ROCE_MAD_LEN];
	struct roce_mad m;
	char line[256];

	mad_fill(mad, rej, sizeof(rej));
	ck_assert_int_eq(roce_mad_parse(mad, sizeof(mad), &m), 0);
	ck_assert_uint_eq(m.have, ROCE_MAD_HAVE_HDR | ROCE_MAD_HAVE_LCID | ROCE_MAD_HAVE_RCID |
			  ROCE_MAD_HAVE_REJ);
	ck_assert_uint_eq(m.reason, ROCE_CM_REJ_CONSUMER);
	ck_assert_uint_eq(m.msg, 0);
	ck_assert_uint_eq(m.priv_len, ROCE_MAD_LEN - 24 - 84);
	mad_line(&m, line, sizeof(line));
	ck_assert_str_eq(line, "REJ lcid 0x00000000 rcid 0x3431d239 reason consumer-reject (28)");

	/* an unknown reason, another class, an unknown attribute: named by number */
	mad[24 + 11] = 99;
	ck_assert_int_eq(roce_mad_parse(mad, sizeof(mad), &m), 0);
	mad_line(&m, line, sizeof(line));
	ck_assert_str_eq(line, "REJ lcid 0x00000000 rcid 0x3431d239 reason unknown (99)");
	mad[17] = 0x77;
	ck_assert_int_eq(roce_mad_parse(mad, sizeof(mad), &m), 0);
	ck_assert_uint_eq(m.have, ROCE_MAD_HAVE_HDR);
	mad_line(&m, line, sizeof(line));
	ck_assert_str_eq(line, "attr 0x0077");
	mad[1] = 0x04;
	ck_assert_int_eq(roce_mad_parse(mad, sizeof(mad), &m), 0);
	mad_line(&m, line, sizeof(line));
	ck_assert_str_eq(line, "class 0x04 attr 0x0077");
}
END_TEST

/*
 * rping's REQ and each other attribute cut at every length, at the end of a guard page:
 * nothing is read past the cut, a part is decoded exactly when its bytes are all there.
 */
START_TEST(test_mad_truncated)
{
	static const uint16_t attrs[] = { ROCE_CM_ATTR_REQ, ROCE_CM_ATTR_MRA, ROCE_CM_ATTR_REJ,
					  ROCE_CM_ATTR_REP, ROCE_CM_ATTR_RTU, ROCE_CM_ATTR_DREQ,
					  ROCE_CM_ATTR_DREP, ROCE_CM_ATTR_SIDR_REQ,
					  ROCE_CM_ATTR_SIDR_REP, ROCE_CM_ATTR_LAP };
	uint8_t mad[ROCE_MAD_LEN];
	struct guard g;
	char line[512];

	guard_init(&g, ROCE_MAD_LEN);
	for (size_t a = 0; a < ROCE_DIM(attrs); a++) {
		mad_fill(mad, mad_req_rping, sizeof(mad_req_rping));
		mad[16] = (uint8_t)(attrs[a] >> 8);
		mad[17] = (uint8_t)attrs[a];
		for (uint32_t t = 0; t <= ROCE_MAD_LEN; t++) {
			const uint8_t *p = guard_put(&g, mad, t);
			struct roce_mad m;
			int rc = roce_mad_parse(p, t, &m);

			REQUIRE(rc == (t < ROCE_MAD_HDR_LEN ? -EINVAL : 0), "attr %#x cut at %u: rc %d",
				attrs[a], t, rc);
			REQUIRE(m.len == t && m.short_mad == (t < ROCE_MAD_LEN), "attr %#x cut at %u",
				attrs[a], t);
			REQUIRE(!(m.have & ROCE_MAD_HAVE_LCID) == (t < 28 || attrs[a] == ROCE_CM_ATTR_LAP),
				"attr %#x cut at %u: lcid", attrs[a], t);
			REQUIRE(m.priv == NULL || (m.priv > p && m.priv + m.priv_len == p + t),
				"attr %#x cut at %u: private data beyond the cut", attrs[a], t);
			if (attrs[a] == ROCE_CM_ATTR_REQ) {
				REQUIRE(!(m.have & ROCE_MAD_HAVE_QPN) == (t < 24 + 36), "REQ cut at %u", t);
				REQUIRE(!(m.have & ROCE_MAD_HAVE_PSN) == (t < 24 + 47), "REQ cut at %u", t);
				REQUIRE(!(m.have & ROCE_MAD_HAVE_PATH) == (t < 24 + 96), "REQ cut at %u", t);
				REQUIRE(!(m.have & ROCE_MAD_HAVE_IPCM) == (t < 24 + 176), "REQ cut at %u",
					t);
			}
			mad_line(&m, line, sizeof(line));
			REQUIRE(strstr(line, "[short-mad]") != NULL || t == ROCE_MAD_LEN,
				"attr %#x cut at %u: not marked short: %s", attrs[a], t, line);
		}
	}
	guard_fini(&g);
}
END_TEST

/* A MAD in a frame: a UD SEND Only to QP1, whole, cut by a snaplen, and to another QP. */
START_TEST(test_mad_frame)
{
	uint8_t mad[ROCE_MAD_LEN], frame[MAX_FRAME];
	struct roce_pkt pkt, rx;
	struct roce_mad m;
	char line[1024];
	int n;

	mad_fill(mad, mad_req_rping, sizeof(mad_req_rping));
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_UD_SEND_ONLY);
	pkt.dqpn = ROCE_GSI_QPN;
	pkt.deth.qkey = ROCE_GSI_QKEY;
	pkt.deth.srcqp = ROCE_GSI_QPN;
	pkt.payload = mad;
	pkt.payload_len = sizeof(mad);
	n = roce_wire_build(&pkt, 0, frame, sizeof(frame));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(roce_wire_parse(frame, (uint32_t)n, 0, &rx), 0);
	ck_assert(roce_pkt_is_mad(&rx));
	ck_assert_int_eq(roce_pkt_mad(&rx, &m), 0);
	ck_assert_uint_eq(m.lcid, 0x3431d239);
	roce_pkt_snprint(line, sizeof(line), &rx);
	ck_assert_msg(strstr(line, " len 256 cm REQ lcid 0x3431d239 sid 0x0000000001061c06 (tcp port "
				   "7174) qpn 0x000011 psn 8257167 icrc ok") != NULL, "%s", line);

	/* a snaplen of 100 bytes leaves 38 of the MAD: the header and the local ID */
	ck_assert_int_eq(roce_wire_parse(frame, 100, ROCE_PARSE_CAPTURE, &rx), 0);
	ck_assert(rx.truncated);
	ck_assert_int_eq(roce_pkt_mad(&rx, &m), 0);
	ck_assert_uint_eq(m.len, 100 - rx.payload_off);
	ck_assert_uint_eq(m.have, ROCE_MAD_HAVE_HDR | ROCE_MAD_HAVE_LCID);
	roce_pkt_snprint(line, sizeof(line), &rx);
	ck_assert_msg(strstr(line, " cm REQ lcid 0x3431d239 [short-mad] icrc not captured") != NULL,
		      "%s", line);

	/* the same payload to QP 2 is data, not a MAD */
	pkt.dqpn = 2;
	n = roce_wire_build(&pkt, 0, frame, sizeof(frame));
	ck_assert_int_eq(roce_wire_parse(frame, (uint32_t)n, 0, &rx), 0);
	ck_assert(!roce_pkt_is_mad(&rx));
	ck_assert_int_eq(roce_pkt_mad(&rx, &m), -ENOENT);
	roce_pkt_snprint(line, sizeof(line), &rx);
	ck_assert_msg(strstr(line, " cm ") == NULL, "%s", line);
}
END_TEST

START_TEST(test_mad_names)
{
	uint16_t ps, port;

	ck_assert_str_eq(roce_cm_attr_name(ROCE_CM_ATTR_REQ), "REQ");
	ck_assert_str_eq(roce_cm_attr_name(ROCE_CM_ATTR_DREP), "DREP");
	ck_assert_str_eq(roce_cm_attr_name(ROCE_CM_ATTR_APR), "APR");
	ck_assert_ptr_null(roce_cm_attr_name(0x0002));
	ck_assert_ptr_null(roce_cm_attr_name(0xffff));
	ck_assert_str_eq(roce_cm_rej_name(ROCE_CM_REJ_CONSUMER), "consumer-reject");
	ck_assert_str_eq(roce_cm_rej_name(ROCE_CM_REJ_TIMEOUT), "timeout");
	ck_assert_ptr_null(roce_cm_rej_name(0));
	ck_assert_ptr_null(roce_cm_rej_name(34));
	ck_assert_ptr_null(roce_cm_rej_name(1000));
	ck_assert_str_eq(roce_mad_method_name(0x03), "Send");
	ck_assert_ptr_null(roce_mad_method_name(0x7f));
	ck_assert(roce_cm_sid_ip(0x0000000001061c06ull, &ps, &port));
	ck_assert_uint_eq(ps, 0x0106);
	ck_assert_uint_eq(port, 7174);
	ck_assert_str_eq(roce_cm_ps_name(ps), "tcp");
	ck_assert(roce_cm_sid_ip(0x000000000111ffffull, &ps, &port));
	ck_assert_str_eq(roce_cm_ps_name(ps), "udp");
	ck_assert(!roce_cm_sid_ip(0x1000000001061c06ull, &ps, &port));
	ck_assert(!roce_cm_sid_ip(0x0000000002061c06ull, &ps, &port));
}
END_TEST

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc;

	tc = tcase_create("roundtrip");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_roundtrip, 0, n_valid_ops);
	suite_add_tcase(s, tc);

	tc = tcase_create("template");
	tcase_add_loop_test(tc, test_template, 0, n_valid_ops);
	tcase_add_test(tc, test_zero_copy_chain);
	suite_add_tcase(s, tc);

	tc = tcase_create("known_answers");
	tcase_add_loop_test(tc, test_kat_icrc, 0, ROCE_DIM(kats));
	tcase_add_test(tc, test_kat_fields);
	suite_add_tcase(s, tc);

	if (shared_pcap_present()) {
		tc = tcase_create("shared_captures");
		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, test_captures, 0, ROCE_DIM(capture_counts));
		tcase_add_test(tc, test_captures_listed);
		suite_add_tcase(s, tc);
	} else {
		fprintf(stderr, "test_wire: %s not found: shared capture cases skipped\n", SHARED_PCAP);
	}

	tc = tcase_create("crc32");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_crc32);
	tcase_add_test(tc, test_crc32_combine);
	tcase_add_test(tc, test_crc32_fold_paths);
	tcase_add_test(tc, test_icrc_in_place_paths);
	tcase_add_test(tc, test_fmt_numbers);
	tcase_add_test(tc, test_crc32_eal_paths);
	suite_add_tcase(s, tc);

	tc = tcase_create("faults");
	tcase_add_loop_test(tc, test_fault, 0, ROCE_WERR_NUM);
	tcase_add_test(tc, test_fault_more);
	tcase_add_test(tc, test_fault_names);
	tcase_add_test(tc, test_build_huge_payload);
	suite_add_tcase(s, tc);

	tc = tcase_create("guard_page");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, bases_setup, NULL);
	tcase_add_test(tc, test_guard_truncations);
	tcase_add_test(tc, test_guard_snaplen);
	suite_add_tcase(s, tc);

	tc = tcase_create("capture");
	tcase_add_test(tc, test_ipv6_ext);
	tcase_add_test(tc, test_xrc_rd_vectors);
	tcase_add_test(tc, test_print_stopped);
	suite_add_tcase(s, tc);

	tc = tcase_create("mutations");
	tcase_set_timeout(tc, 240);
	tcase_add_unchecked_fixture(tc, bases_setup, NULL);
	tcase_add_loop_test(tc, test_mutations, 0, MUTATION_CHUNKS);
	suite_add_tcase(s, tc);

	tc = tcase_create("mac_control_and_tables");
	tcase_add_test(tc, test_pfc_pause);
	tcase_add_test(tc, test_rnr_timer);
	tcase_add_test(tc, test_psn_diff);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("mad");
	tcase_add_test(tc, test_mad_req);
	tcase_add_test(tc, test_mad_rej);
	tcase_add_test(tc, test_mad_truncated);
	tcase_add_test(tc, test_mad_frame);
	tcase_add_test(tc, test_mad_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *env = getenv("ROCE_TEST_SEED");
	SRunner *sr;
	int failed;

	if (env != NULL)
		seed = strtoull(env, NULL, 0);
	printf("test_wire: seed 0x%llx (ROCE_TEST_SEED), %ld mutations (ROCE_TEST_MUTATIONS)\n",
	       (unsigned long long)seed, mutations_total());
	fflush(stdout);
	collect_opcodes();
	/*
	 * lib/wire needs no EAL, so most cases run without one (test_crc32_eal_paths brings it up
	 * in its own process). Without the EAL, rte_net_crc settles on its scalar path at the first
	 * call and logs why; make that call here, once, rather than in every forked case.
	 */
	(void)roce_crc32("", 0);
	printf("test_wire: CRC-32 path %s\n", roce_crc_path());
	sr = srunner_create(wire_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
