/* Check suite for the text frame descriptors (wire_desc.c) and roce_wire_fixup() (wire_fixup.c). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_wire.h"

static struct roce_desc desc, desc2;	/* 64 KiB each: kept off the stack */
static uint8_t frame[70000], frame2[70000];
static char text[200000], err[512];

/* Parse @p line, build it, parse the bytes back; the frame length. */
static int craft(const char *line, struct roce_pkt *out, int want_parse_rc)
{
	int rc = roce_desc_parse(line, &desc, err, sizeof(err));
	int len;

	ck_assert_msg(rc == 1, "'%s' -> %d: %s", line, rc, err);
	len = roce_desc_build(&desc, frame, sizeof(frame));
	ck_assert_msg(len > 0, "'%s': build %d", line, len);
	rc = roce_wire_parse(frame, (uint32_t)len, 0, out);
	ck_assert_msg(rc == want_parse_rc, "'%s': parse %d (%s)", line, rc,
		      roce_wire_strerror(out->err));
	return len;
}

START_TEST(brief_example)
{
	struct roce_pkt p;

	craft("op=RC_RDMA_WRITE_FIRST src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=100 ackreq=1 va=0x1000 "
	      "rkey=0x55 dmalen=8192 len=1024 pattern=0xab vlan=100 pcp=3 dscp=26 ecn=ce ttl=64 "
	      "sport=49152 icrc=bad", &p, -EBADMSG);
	ck_assert_int_eq(p.kind, ROCE_KIND_ROCEV2);
	ck_assert_int_eq(p.opcode, ROCE_OP_RC_RDMA_WRITE_FIRST);
	ck_assert_int_eq(p.ip_ver, 4);
	ck_assert_mem_eq(p.src.b, "\x0a\x00\x00\x01", 4);
	ck_assert_mem_eq(p.dst.b, "\x0a\x00\x00\x02", 4);
	ck_assert_uint_eq(p.dqpn, 0x11);
	ck_assert_uint_eq(p.psn, 100);
	ck_assert(p.ackreq);
	ck_assert_uint_eq(p.reth.va, 0x1000);
	ck_assert_uint_eq(p.reth.rkey, 0x55);
	ck_assert_uint_eq(p.reth.dmalen, 8192);
	ck_assert_uint_eq(p.payload_len, 1024);
	for (int i = 0; i < 1024; i++)
		ck_assert_uint_eq(p.payload[i], 0xab);
	ck_assert_uint_eq(p.nvlan, 1);
	ck_assert_uint_eq(p.vlan[0].vid, 100);
	ck_assert_uint_eq(p.vlan[0].pcp, 3);
	ck_assert_uint_eq(p.dscp, 26);
	ck_assert_uint_eq(p.ecn, 3);
	ck_assert_uint_eq(p.ttl, 64);
	ck_assert_uint_eq(p.sport, 49152);
	ck_assert_int_eq(p.err, ROCE_WERR_ICRC_MISMATCH);
	ck_assert_uint_eq(p.icrc, ~p.icrc_calc);
}
END_TEST

/* Every header field of struct roce_pkt that a descriptor sets, checked after build and parse. */
START_TEST(every_field_v4)
{
	struct roce_pkt p;

	craft("op=RC_SEND_ONLY_WITH_IMMEDIATE dmac=aa:bb:cc:dd:ee:ff smac=02:11:22:33:44:55 "
	      "vlan=10 pcp=1 dei=1 tpid=0x88a8 vlan=20 pcp=7 src=192.168.1.1 dst=192.168.1.2 "
	      "dscp=63 ecn=ect0 ttl=3 id=0x1234 df=0 sport=1000 dport=4791 udpcsum=0xbeef "
	      "qp=0xffffff psn=16777215 se=1 mig=1 tver=0 pkey=0x7fff fecn=1 becn=1 resv6=0x2a "
	      "ackreq=1 resv7=0x55 imm=0xdeadbeef len=5 pad=3 payload=0102030405", &p, 0);
	ck_assert_mem_eq(p.dmac, "\xaa\xbb\xcc\xdd\xee\xff", 6);
	ck_assert_mem_eq(p.smac, "\x02\x11\x22\x33\x44\x55", 6);
	ck_assert_uint_eq(p.nvlan, 2);
	ck_assert_uint_eq(p.vlan[0].tpid, 0x88a8);
	ck_assert_uint_eq(p.vlan[0].vid, 10);
	ck_assert_uint_eq(p.vlan[0].pcp, 1);
	ck_assert_uint_eq(p.vlan[0].dei, 1);
	ck_assert_uint_eq(p.vlan[1].tpid, 0x8100);
	ck_assert_uint_eq(p.vlan[1].vid, 20);
	ck_assert_uint_eq(p.vlan[1].pcp, 7);
	ck_assert_mem_eq(p.src.b, "\xc0\xa8\x01\x01", 4);
	ck_assert_uint_eq(p.dscp, 63);
	ck_assert_uint_eq(p.ecn, 2);
	ck_assert_uint_eq(p.ttl, 3);
	ck_assert_uint_eq(p.ip_id, 0x1234);
	ck_assert(!p.ip_df);
	ck_assert_uint_eq(p.sport, 1000);
	ck_assert_uint_eq(p.dport, 4791);
	ck_assert_uint_eq(p.udp_csum, 0xbeef);
	ck_assert_uint_eq(p.dqpn, 0xffffff);
	ck_assert_uint_eq(p.psn, 0xffffff);
	ck_assert(p.se && p.mig && p.fecn && p.becn && p.ackreq);
	ck_assert_uint_eq(p.pkey, 0x7fff);
	ck_assert_uint_eq(p.resv6, 0x2a);
	ck_assert_uint_eq(p.resv7, 0x55);
	ck_assert_uint_eq(p.immdt, 0xdeadbeef);
	ck_assert_uint_eq(p.pad, 3);
	ck_assert_uint_eq(p.payload_len, 5);
	ck_assert_mem_eq(p.payload, "\x01\x02\x03\x04\x05", 5);
	ck_assert(p.icrc_ok);
}
END_TEST

START_TEST(every_ext_header)
{
	struct roce_pkt p;

	craft("op=UD_SEND_ONLY qkey=0x80010000 srcqp=0xabcdef len=3", &p, 0);
	ck_assert_uint_eq(p.deth.qkey, 0x80010000);
	ck_assert_uint_eq(p.deth.srcqp, 0xabcdef);
	ck_assert_uint_eq(p.pad, 1);
	craft("op=RC_COMPARE_SWAP va=0x1122334455667788 rkey=0x99 swap=0xa cmp=0xb", &p, 0);
	ck_assert_uint_eq(p.atmeth.va, 0x1122334455667788ull);
	ck_assert_uint_eq(p.atmeth.rkey, 0x99);
	ck_assert_uint_eq(p.atmeth.swap, 0xa);
	ck_assert_uint_eq(p.atmeth.cmp, 0xb);
	craft("op=RC_ATOMIC_ACKNOWLEDGE syndrome=0x60 msn=77 orig=0xfeedface", &p, 0);
	ck_assert_uint_eq(p.aeth.syndrome, 0x60);
	ck_assert_uint_eq(p.aeth.msn, 77);
	ck_assert_uint_eq(p.atmack_orig, 0xfeedface);
	craft("op=RC_SEND_ONLY_WITH_INVALIDATE ieth=0x4242", &p, 0);
	ck_assert_uint_eq(p.ieth_rkey, 0x4242);
	craft("op=RC_FLUSH feth=0x12 va=0x100 rkey=7 dmalen=64", &p, 0);
	ck_assert_uint_eq(p.feth, 0x12);
	ck_assert_uint_eq(p.reth.va, 0x100);
	craft("op=CNP becn=1 qp=5", &p, 0);
	ck_assert(p.becn);
	craft("op=RC_SEND_ONLY len=4 icrc=0x12345678", &p, -EBADMSG);
	ck_assert_uint_eq(p.icrc, rte_bswap32(0x12345678));	/* stored 12 34 56 78 */
	craft("op=RC_SEND_ONLY len=40 pattern=random seed=7", &p, 0);
	ck_assert_uint_eq(p.payload_len, 40);
}
END_TEST

START_TEST(ipv6_v1_pfc_pause)
{
	struct roce_pkt p;
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 9 };

	craft("op=RC_SEND_ONLY src=fe80::1 dst=fe80::2 flow=0xabcde dscp=10 ecn=1 ttl=9 len=8", &p, 0);
	ck_assert_int_eq(p.ip_ver, 6);
	ck_assert_uint_eq(p.flow_label, 0xabcde);
	ck_assert_uint_eq(p.dscp, 10);
	ck_assert_uint_eq(p.ecn, 1);
	ck_assert_uint_eq(p.ttl, 9);
	ck_assert_uint_eq(p.dst.b[15], 2);
	craft("kind=rocev1 op=RC_SEND_ONLY src=10.0.0.9 flow=0x11 len=8", &p, 0);
	ck_assert_int_eq(p.kind, ROCE_KIND_ROCEV1);
	ck_assert_mem_eq(p.src.b, gid, 16);
	ck_assert_uint_eq(p.flow_label, 0x11);
	craft("kind=pfc cev=0x08 quanta=0,0,0,65535,0,0,0,1 vlan=5 pcp=3", &p, 0);
	ck_assert_int_eq(p.kind, ROCE_KIND_PFC);
	ck_assert_uint_eq(p.pfc_cev, 8);
	ck_assert_uint_eq(p.quanta[3], 65535);
	ck_assert_uint_eq(p.quanta[7], 1);
	craft("kind=pause quanta=100", &p, 0);
	ck_assert_int_eq(p.kind, ROCE_KIND_PAUSE);
	ck_assert_uint_eq(p.quanta[0], 100);
}
END_TEST

START_TEST(blank_and_comment)
{
	ck_assert_int_eq(roce_desc_parse("", &desc, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_desc_parse("   \t", &desc, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_desc_parse("# op=RC_SEND_ONLY", &desc, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_desc_parse("op=RC_SEND_ONLY psn=3 # trailing", &desc, err, sizeof(err)),
			 1);
	ck_assert_uint_eq(desc.pkt.psn, 3);
}
END_TEST

/* Each bad line, and a piece of the message it must give. */
static const struct {
	const char *line;
	const char *msg;
} bad_lines[] = {
	{ "psn=0x1000000", "'psn=0x1000000': psn is 24 bits" },
	{ "psn=abc", "'psn=abc': psn expects a number" },
	{ "psn=-1", "'psn=-1'" },
	{ "qp=0x1000000", "qp is 24 bits" },
	{ "foo=1", "unknown key 'foo'" },
	{ "psn", "'psn': expected key=value" },
	{ "=3", "expected key=value" },
	{ "op=RC_NOPE", "'op=RC_NOPE': op expects an IBTA opcode name" },
	{ "op=256", "op is an opcode name or a number 0..255" },
	{ "kind=rocev3", "kind is rocev2, rocev1, pfc or pause" },
	{ "kind=pfc op=RC_SEND_ONLY", "op= does not apply to pfc frames" },
	{ "op=RC_SEND_ONLY op=RC_SEND_ONLY", "op given twice" },
	{ "psn=1 psn=2", "'psn=2': psn given twice" },
	{ "dmac=1:2:3", "dmac expects a MAC address" },
	{ "src=10.0.0.300", "src expects an IPv4" },
	{ "src=fe80::1", "needs an IPv6 dst too" },
	{ "src=fe80::1 dst=10.0.0.1", "src is IPv6 but dst is IPv4" },
	{ "src=fe80::1 dst=fe80::2 id=3", "'id=3': id is an IPv4 field" },
	{ "flow=1", "'flow=1': flow is an IPv6 field" },
	{ "dscp=64", "dscp is 6 bits" },
	{ "ecn=maybe", "ecn is not-ect, ect1, ect0, ce or 0..3" },
	{ "ttl=256", "ttl is 8 bits" },
	{ "df=2", "df is 1 bit" },
	{ "pcp=3", "'pcp=3': pcp belongs to a VLAN tag" },
	{ "vlan=4096", "vlan is 12 bits" },
	{ "vlan=1 vlan=2 vlan=3", "'vlan=3': at most 2 vlan= tags" },
	{ "pad=4", "pad is 2 bits" },
	{ "tver=16", "tver is 4 bits" },
	{ "resv6=64", "resv6 is 6 bits" },
	{ "resv7=128", "resv7 is 7 bits" },
	{ "va=1", "'va=1': RC_SEND_ONLY has no RETH or AtomicETH, so no va" },
	{ "op=RC_SEND_ONLY qkey=1", "RC_SEND_ONLY has no DETH" },
	{ "op=RC_ACKNOWLEDGE syndrome=0x100", "syndrome is 8 bits" },
	{ "op=RC_ACKNOWLEDGE msn=0x1000000", "msn is 24 bits" },
	{ "op=UD_SEND_ONLY srcqp=0x1000000", "srcqp is 24 bits" },
	{ "len=65536", "len is the payload length in bytes, 0..65535" },
	{ "pattern=zebra", "pattern is inc, random or a byte value" },
	{ "pattern=0x100", "pattern is inc, random or a byte value" },
	{ "seed=3", "seed= needs pattern=random" },
	{ "payload=abc", "payload expects an even number of hex digits" },
	{ "payload=zz", "payload expects hex digits, found 'z'" },
	{ "payload=00 pattern=1", "payload= and pattern= exclude each other" },
	{ "payload=00 len=2", "payload= holds 1 bytes but len=2" },
	{ "icrc=maybe", "icrc is ok, bad or a 32-bit value" },
	{ "icrc=0x100000000", "icrc is ok, bad or a 32-bit value" },
	{ "kind=pfc quanta=1,2", "quanta of a pfc frame is 8 comma-separated numbers" },
	{ "kind=pfc quanta=1,2,3,4,5,6,7,8,9", "quanta of a pfc frame is 8" },
	{ "kind=pause quanta=1,2", "quanta of a pause frame is one number" },
	{ "kind=pause psn=1", "'psn=1': psn is not a field of pause frames" },
	{ "kind=pfc cev=0x10000", "cev is 16 bits" },
	{ "quanta=1", "quanta is not a field of rocev2 frames" },
	{ "kind=rocev1 sport=1", "sport is not a field of rocev1 frames" },
};

START_TEST(bad_line)
{
	int rc = roce_desc_parse(bad_lines[_i].line, &desc, err, sizeof(err));

	ck_assert_msg(rc == -EINVAL, "'%s' -> %d", bad_lines[_i].line, rc);
	ck_assert_msg(strstr(err, bad_lines[_i].msg) != NULL, "'%s': message '%s' lacks '%s'",
		      bad_lines[_i].line, err, bad_lines[_i].msg);
	ck_assert_msg(strchr(err, '\n') == NULL, "message is one line: '%s'", err);
}
END_TEST

/* A small error buffer truncates the message and never overruns. */
START_TEST(short_err_buffer)
{
	char small[8];

	memset(small, 'x', sizeof(small));
	ck_assert_int_eq(roce_desc_parse("foo=1", &desc, small, sizeof(small)), -EINVAL);
	ck_assert_uint_lt(strlen(small), sizeof(small));
	ck_assert_int_eq(roce_desc_parse("foo=1", &desc, NULL, 0), -EINVAL);
}
END_TEST

/* Give every field an unusual value, build, parse, print, parse the line, build: same bytes. */
static void round_trip(uint8_t op, unsigned int variant)
{
	struct roce_pkt in, p, p2;
	int len, len2, rc;

	roce_pkt_init(&in, variant == 2 ? ROCE_KIND_ROCEV1 : ROCE_KIND_ROCEV2, op);
	if (variant == 1) {
		in.ip_ver = 6;
		memset(in.src.b, 0x20, 16);
		memset(in.dst.b, 0x30, 16);
		in.flow_label = 0x12345;
		in.nvlan = 2;
		in.vlan[0].tpid = 0x88a8;
		in.vlan[0].vid = 7;
		in.vlan[0].pcp = 5;
		in.vlan[1].vid = 8;
		in.vlan[1].dei = 1;
	} else if (variant == 0) {
		in.ip_id = 0x4321;
		in.ip_df = false;
		in.nvlan = 1;
		in.vlan[0].vid = 100;
	}
	in.dscp = 26;
	in.ecn = 3;
	in.ttl = 17;
	in.sport = 1234;
	in.dqpn = 0xabcdef;
	in.psn = 0xfedcba;
	in.se = in.mig = in.ackreq = true;
	in.pkey = 0x8001;
	in.fecn = true;
	in.resv6 = 1;
	in.resv7 = 2;
	in.deth.qkey = 0x11111111;
	in.deth.srcqp = 0x222222;
	in.reth.va = 0x3333333333333333ull;
	in.reth.rkey = 0x44444444;
	in.reth.dmalen = 0x55555;
	in.atmeth.va = 0x6666666666666666ull;
	in.atmeth.rkey = 0x77777777;
	in.atmeth.swap = 0x8888888888888888ull;
	in.atmeth.cmp = 0x9999999999999999ull;
	in.aeth.syndrome = 0x63;
	in.aeth.msn = 0xaaaaaa;
	in.atmack_orig = 0xbbbbbbbbbbbbbbbbull;
	in.immdt = 0xcccccccc;
	in.ieth_rkey = 0xdddddddd;
	in.feth = 0xeeeeeeee;
	if (roce_opcode[op].mask & ROCE_F_PAYLOAD)
		in.payload_len = (roce_opcode[op].mask & ROCE_F_PAYLOAD_FIXED) ? 8 : 13 + variant;

	len = roce_wire_build(&in, 0, frame, sizeof(frame));
	ck_assert_int_gt(len, 0);
	rc = roce_wire_parse(frame, (uint32_t)len, 0, &p);
	ck_assert_msg(rc == 0, "%s: parse %s", roce_opcode[op].name, roce_wire_strerror(p.err));
	roce_desc_snprint(text, sizeof(text), &p, 0);
	rc = roce_desc_parse(text, &desc2, err, sizeof(err));
	ck_assert_msg(rc == 1, "%s: '%s' -> %s", roce_opcode[op].name, text, err);
	len2 = roce_desc_build(&desc2, frame2, sizeof(frame2));
	ck_assert_msg(len2 == len && memcmp(frame, frame2, (size_t)len) == 0,
		      "%s: '%s' builds other bytes", roce_opcode[op].name, text);
	rc = roce_wire_parse(frame2, (uint32_t)len2, 0, &p2);
	ck_assert_int_eq(rc, 0);
}

START_TEST(print_parse_every_opcode)
{
	if (roce_opcode[_i].name == NULL)
		return;
	for (unsigned int v = 0; v < 3; v++)
		round_trip((uint8_t)_i, v);
}
END_TEST

/* The payload forms, the bad ICRC, PFC and PAUSE survive print -> parse -> build too. */
START_TEST(print_parse_payloads)
{
	static const char *const lines[] = {
		"op=RC_SEND_ONLY len=100 pattern=0x5a",
		"op=RC_SEND_ONLY len=33 pattern=random seed=99",
		"op=RC_SEND_ONLY payload=00ff00ff01",
		"op=RC_SEND_ONLY len=10 icrc=bad",
		"op=RC_SEND_ONLY len=10 pad=0",
		"op=RC_SEND_FIRST len=0 pad=2",
		"kind=pfc cev=0xff quanta=1,2,3,4,5,6,7,8 smac=02:00:00:00:00:09",
		"kind=pause quanta=65535 vlan=3 pcp=7",
		"kind=rocev1 op=RC_ACKNOWLEDGE src=fe80::1 dst=fe80::2",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct roce_pkt p;
		int len, len2, rc;

		rc = roce_desc_parse(lines[i], &desc, err, sizeof(err));
		ck_assert_msg(rc == 1, "'%s': %s", lines[i], err);
		len = roce_desc_build(&desc, frame, sizeof(frame));
		ck_assert_int_gt(len, 0);
		roce_wire_parse(frame, (uint32_t)len, 0, &p);
		roce_desc_snprint(text, sizeof(text), &p, 0);
		rc = roce_desc_parse(text, &desc2, err, sizeof(err));
		ck_assert_msg(rc == 1, "'%s' printed as '%s': %s", lines[i], text, err);
		len2 = roce_desc_build(&desc2, frame2, sizeof(frame2));
		ck_assert_msg(len2 == len && memcmp(frame, frame2, (size_t)len) == 0,
			      "'%s' printed as '%s' builds other bytes", lines[i], text);
	}
}
END_TEST

START_TEST(print_format)
{
	struct roce_pkt p;

	craft("op=RC_RDMA_WRITE_FIRST qp=0x11 psn=100 va=0x1000 rkey=0x55 dmalen=8192 len=16 ecn=ce",
	      &p, 0);
	roce_desc_snprint(text, sizeof(text), &p, 0);
	ck_assert_str_eq(text, "op=RC_RDMA_WRITE_FIRST src=10.0.0.1 dst=10.0.0.2 ecn=ce qp=0x11 "
			 "psn=100 va=0x1000 rkey=0x55 dmalen=8192 len=16");
	/* A cut output stays NUL-terminated and reports the full length. */
	ck_assert_int_eq(roce_desc_snprint(text, 10, &p, 0), (int)strlen("op=RC_RDMA_WRITE_FIRST src=10.0.0.1 dst=10.0.0.2 ecn=ce qp=0x11 psn=100 va=0x1000 rkey=0x55 dmalen=8192 len=16"));
	ck_assert_str_eq(text, "op=RC_RDM");
}
END_TEST

/* ---- roce_wire_fixup() ---- */

static int build_line(const char *line, uint8_t *buf)
{
	int len;

	ck_assert_int_eq(roce_desc_parse(line, &desc, err, sizeof(err)), 1);
	len = roce_desc_build(&desc, buf, sizeof(frame));
	ck_assert_int_gt(len, 0);
	return len;
}

START_TEST(fixup_good_frame_untouched)
{
	static const char *const lines[] = {
		"op=RC_SEND_ONLY len=100",
		"op=RC_SEND_ONLY len=100 src=fe80::1 dst=fe80::2",
		"kind=rocev1 op=RC_RDMA_WRITE_ONLY len=7",
		"op=UD_SEND_ONLY len=3 vlan=3 vlan=4",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int len = build_line(lines[i], frame);

		memcpy(frame2, frame, (size_t)len);
		ck_assert_int_eq(roce_wire_fixup(frame, (uint32_t)len), 0);
		ck_assert(memcmp(frame, frame2, (size_t)len) == 0);
	}
}
END_TEST

START_TEST(fixup_ttl_dscp_edit)
{
	/* The ICRC masks TTL and TOS (IBA A17.3.3): only the IPv4 checksum goes stale. */
	int len = build_line("op=RC_SEND_ONLY len=64 vlan=7 ttl=64 dscp=0", frame);
	int len2 = build_line("op=RC_SEND_ONLY len=64 vlan=7 ttl=5 dscp=26", frame2);
	struct roce_pkt p;
	const uint32_t ip = 14 + 4;

	ck_assert_int_eq(len, len2);
	frame[ip + 8] = 5;			/* TTL */
	frame[ip + 1] = 26 << 2;		/* DSCP */
	ck_assert_int_eq(roce_wire_parse(frame, (uint32_t)len, 0, &p), -EINVAL);
	ck_assert_int_eq(p.err, ROCE_WERR_BAD_IP_CSUM);
	ck_assert_int_eq(roce_wire_fixup(frame, (uint32_t)len), ROCE_FIXUP_IP_CSUM);
	ck_assert(memcmp(frame, frame2, (size_t)len) == 0);
	ck_assert_int_eq(roce_wire_parse(frame, (uint32_t)len, 0, &p), 0);
}
END_TEST

START_TEST(fixup_psn_and_ttl_edit)
{
	int len = build_line("op=RC_SEND_ONLY len=64 psn=1 ttl=64", frame);
	int len2 = build_line("op=RC_SEND_ONLY len=64 psn=2 ttl=9", frame2);
	uint32_t bth = 14 + 20 + 8;

	ck_assert_int_eq(len, len2);
	frame[14 + 8] = 9;
	frame[bth + 11] = 2;
	ck_assert_int_eq(roce_wire_fixup(frame, (uint32_t)len), ROCE_FIXUP_IP_CSUM | ROCE_FIXUP_ICRC);
	ck_assert(memcmp(frame, frame2, (size_t)len) == 0);
}
END_TEST

START_TEST(fixup_v6_v1_and_eth_pad)
{
	static const char *const pairs[][2] = {
		{ "op=RC_SEND_ONLY len=8 src=fe80::1 dst=fe80::2 psn=1",
		  "op=RC_SEND_ONLY len=8 src=fe80::1 dst=fe80::2 psn=7" },
		{ "kind=rocev1 op=RC_SEND_ONLY len=8 psn=1", "kind=rocev1 op=RC_SEND_ONLY len=8 psn=7" },
		{ "op=RC_ACKNOWLEDGE psn=1", "op=RC_ACKNOWLEDGE psn=7" },	/* 58 bytes: padded */
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		int len = build_line(pairs[i][0], frame);
		int len2 = build_line(pairs[i][1], frame2);
		struct roce_pkt p;

		ck_assert_int_eq(len, len2);
		roce_wire_parse(frame, (uint32_t)len, 0, &p);
		frame[p.bth_off + 11] = 7;
		/* Ethernet padding after the ICRC must not move it. */
		memset(frame + len, 0, 8);
		memset(frame2 + len, 0, 8);
		ck_assert_int_eq(roce_wire_fixup(frame, (uint32_t)len + 8), ROCE_FIXUP_ICRC);
		ck_assert_msg(memcmp(frame, frame2, (size_t)len + 8) == 0, "%s", pairs[i][0]);
	}
}
END_TEST

START_TEST(fixup_refuses_non_roce)
{
	uint8_t arp[60] = { [12] = 0x08, [13] = 0x06 };
	uint8_t copy[60];
	int len = build_line("op=RC_SEND_ONLY len=8", frame);

	memcpy(copy, arp, sizeof(arp));
	ck_assert_int_eq(roce_wire_fixup(arp, sizeof(arp)), -EINVAL);
	ck_assert(memcmp(arp, copy, sizeof(arp)) == 0);
	/* Not RoCE and a wrong checksum: a UDP frame to another port is left alone. */
	frame[14 + 20 + 3] = 53;
	frame[14 + 8] = 1;
	memcpy(frame2, frame, (size_t)len);
	ck_assert_int_eq(roce_wire_fixup(frame, (uint32_t)len), -EINVAL);
	ck_assert(memcmp(frame, frame2, (size_t)len) == 0);
	/* Cut inside the BTH: nothing to repair. */
	len = build_line("op=RC_SEND_ONLY len=8", frame);
	ck_assert_int_eq(roce_wire_fixup(frame, 14 + 20 + 8 + 4), -EINVAL);
}
END_TEST

/* roce_crc32_combine (PCLMUL or bitwise) against CRC-32 of the concatenation, short and long. */
START_TEST(crc_combine)
{
	static uint8_t buf[40000];
	static const uint32_t cuts[][2] = {
		{ 0, 1 }, { 1, 1 }, { 7, 100 }, { 60, 1024 }, { 3, 16383 }, { 5, 16384 },
		{ 100, 20000 }, { 33, 39000 },
	};

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 7));
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		uint32_t a = cuts[i][0], b = cuts[i][1];

		ck_assert_uint_eq(roce_crc32_combine(roce_crc32(buf, a), roce_crc32(buf + a, b), b),
				  roce_crc32(buf, a + b));
	}
}
END_TEST

static Suite *desc_suite(void)
{
	Suite *s = suite_create("desc");
	TCase *tc = tcase_create("descriptor");

	tcase_add_test(tc, brief_example);
	tcase_add_test(tc, every_field_v4);
	tcase_add_test(tc, every_ext_header);
	tcase_add_test(tc, ipv6_v1_pfc_pause);
	tcase_add_test(tc, blank_and_comment);
	tcase_add_loop_test(tc, bad_line, 0, (int)(sizeof(bad_lines) / sizeof(bad_lines[0])));
	tcase_add_test(tc, short_err_buffer);
	tcase_add_loop_test(tc, print_parse_every_opcode, 0, 256);
	tcase_add_test(tc, print_parse_payloads);
	tcase_add_test(tc, print_format);
	suite_add_tcase(s, tc);

	tc = tcase_create("fixup");
	tcase_add_test(tc, fixup_good_frame_untouched);
	tcase_add_test(tc, fixup_ttl_dscp_edit);
	tcase_add_test(tc, fixup_psn_and_ttl_edit);
	tcase_add_test(tc, fixup_v6_v1_and_eth_pad);
	tcase_add_test(tc, fixup_refuses_non_roce);
	tcase_add_test(tc, crc_combine);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(desc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
