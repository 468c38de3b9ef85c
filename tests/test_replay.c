/* Check suite 'replay': rewrite rules and roce_rewrite_frame() on frames built by lib/wire. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "roce_replay.h"
#include "roce_wire.h"

/* A RoCEv2 RC_SEND_ONLY with 100 bytes of payload from roce_pkt_init()'s defaults. */
static int build(uint8_t ip_ver, unsigned int flags, uint8_t *buf, uint32_t size)
{
	struct roce_pkt pkt;

	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
	if (ip_ver == 6) {
		pkt.ip_ver = 6;
		memset(pkt.src.b, 0, 16);
		memset(pkt.dst.b, 0, 16);
		pkt.src.b[0] = 0x20, pkt.src.b[15] = 1;
		pkt.dst.b[0] = 0x20, pkt.dst.b[15] = 2;
	}
	pkt.dqpn = 0x11;
	pkt.psn = 42;
	pkt.payload_len = 100;
	return roce_wire_build(&pkt, flags, buf, size);
}

static void add(struct roce_rewrite *rw, enum roce_rw_field f, const char *spec)
{
	char err[256];

	ck_assert_msg(roce_rewrite_add(rw, f, spec, err, sizeof(err)) == 0, "%s: %s", spec, err);
}

START_TEST(test_rules_refused)
{
	static const struct { enum roce_rw_field f; const char *spec; } bad[] = {
		{ ROCE_RW_QPN, "0x11" }, { ROCE_RW_QPN, "1=0x1000000" }, { ROCE_RW_QPN, "x=1" },
		{ ROCE_RW_SIP, "10.0.0.1=::1" }, { ROCE_RW_DIP, "10.0.0.300" }, { ROCE_RW_SMAC, "zz" },
		{ ROCE_RW_DMAC, "00:11:22:33:44:55:66" }, { ROCE_RW_DMAC, "=00:11:22:33:44:55" },
	};
	struct roce_rewrite rw;
	char err[256];

	memset(&rw, 0, sizeof(rw));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(roce_rewrite_add(&rw, bad[i].f, bad[i].spec, err, sizeof(err)) == -EINVAL,
			      "'%s' accepted", bad[i].spec);
		ck_assert_msg(strstr(err, bad[i].spec) != NULL, "message '%s' does not name '%s'", err,
			      bad[i].spec);
	}
	for (int i = 0; i < ROCE_RW_MAX; i++)
		add(&rw, ROCE_RW_QPN, "1=2");
	ck_assert_int_eq(roce_rewrite_add(&rw, ROCE_RW_QPN, "1=2", err, sizeof(err)), -ENOSPC);
}
END_TEST

/* IPv4 and IPv6: addresses and QPN rewritten, the frame parses with a right ICRC and checksum. */
START_TEST(test_rewrite_ip_qpn)
{
	uint8_t ver = _i ? 6 : 4;
	uint8_t buf[512], orig[512];
	struct roce_rewrite rw;
	struct roce_pkt pkt;
	unsigned int did;
	int len = build(ver, 0, buf, sizeof(buf));

	ck_assert_int_gt(len, 0);
	memcpy(orig, buf, (size_t)len);
	memset(&rw, 0, sizeof(rw));
	add(&rw, ROCE_RW_SIP, ver == 4 ? "10.0.0.1=192.168.7.1" : "2000::1=2001:db8::a");
	add(&rw, ROCE_RW_DIP, ver == 4 ? "10.0.0.9=1.2.3.4" : "2001:db8::b");	/* no match / all */
	add(&rw, ROCE_RW_QPN, "0x11=0xabcdef");
	add(&rw, ROCE_RW_DMAC, "02:00:00:00:00:99");
	did = roce_rewrite_frame(&rw, buf, (uint32_t)len);
	ck_assert_uint_eq(did & (ROCE_RW_DID_MAC | ROCE_RW_DID_IP | ROCE_RW_DID_QPN | ROCE_RW_DID_ICRC),
			  ROCE_RW_DID_MAC | ROCE_RW_DID_IP | ROCE_RW_DID_QPN | ROCE_RW_DID_ICRC);
	ck_assert_int_eq(roce_wire_parse(buf, (uint32_t)len, 0, &pkt), 0);
	ck_assert(pkt.icrc_ok);
	ck_assert_uint_eq(pkt.dqpn, 0xabcdef);
	ck_assert_uint_eq(pkt.dmac[5], 0x99);
	if (ver == 4) {
		ck_assert_uint_eq(pkt.src.b[0], 192);
		ck_assert_uint_eq(pkt.dst.b[0], 10);	/* 10.0.0.9 matched nothing */
	} else {
		ck_assert_uint_eq(pkt.src.b[15], 0xa);
		ck_assert_uint_eq(pkt.dst.b[15], 0xb);
	}
	/* rewriting back gives the original bytes */
	memset(&rw, 0, sizeof(rw));
	add(&rw, ROCE_RW_SIP, ver == 4 ? "192.168.7.1=10.0.0.1" : "2001:db8::a=2000::1");
	if (ver == 6)
		add(&rw, ROCE_RW_DIP, "2001:db8::b=2000::2");
	add(&rw, ROCE_RW_QPN, "0xabcdef=0x11");
	memcpy(buf, orig, 6);
	roce_rewrite_frame(&rw, buf, (uint32_t)len);
	ck_assert(memcmp(buf, orig, (size_t)len) == 0);
}
END_TEST

/* A wrong ICRC stays wrong by the same XOR; a frame that is not RoCE is left alone. */
START_TEST(test_bad_icrc_kept)
{
	uint8_t good[512], bad[512];
	struct roce_rewrite rw;
	struct roce_pkt pg, pb;
	int len = build(4, 0, good, sizeof(good));

	ck_assert_int_eq(build(4, ROCE_BUILD_BAD_ICRC, bad, sizeof(bad)), len);
	memset(&rw, 0, sizeof(rw));
	add(&rw, ROCE_RW_QPN, "0x11=0x12");
	ck_assert(!(roce_rewrite_frame(&rw, good, (uint32_t)len) & ROCE_RW_BAD_ICRC_KEPT));
	ck_assert(roce_rewrite_frame(&rw, bad, (uint32_t)len) & ROCE_RW_BAD_ICRC_KEPT);
	ck_assert_int_eq(roce_wire_parse(good, (uint32_t)len, 0, &pg), 0);
	ck_assert_int_eq(roce_wire_parse(bad, (uint32_t)len, 0, &pb), -EBADMSG);
	ck_assert_uint_eq(pb.icrc ^ pb.icrc_calc, ~0u);	/* ROCE_BUILD_BAD_ICRC: the complement */

	/* ARP-sized junk: MAC rules apply, IP rules do not */
	memset(good, 0x11, 60);
	add(&rw, ROCE_RW_SMAC, "02:00:00:00:00:01");
	ck_assert_uint_eq(roce_rewrite_frame(&rw, good, 60), ROCE_RW_DID_MAC | ROCE_RW_NOT_ROCE);
	ck_assert_uint_eq(good[11], 1);
	ck_assert_uint_eq(good[12], 0x11);
	/* truncated to any length: no over-read (checked under ASan by the fuzzer), nothing done */
	for (int n = 0; n < len; n++)
		roce_rewrite_frame(&rw, bad, (uint32_t)n);
}
END_TEST

static Suite *replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("rewrite");

	tcase_add_test(tc, test_rules_refused);
	tcase_add_loop_test(tc, test_rewrite_ip_qpn, 0, 2);
	tcase_add_test(tc, test_bad_icrc_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(replay_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
