/*
 * Check suite 'pattern': captures of virtual-time perftest runs (lib/perf, conf.pcap) grouped
 * into messages and compared; the changes a comparison must find are made to copies of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "roce_io.h"
#include "roce_pattern.h"
#include "roce_perf.h"
#include "roce_wire.h"

static char tmpdir[] = "/tmp/test_pattern.XXXXXX";

static void tmp_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

/* A run of @p test in virtual time into DIR/@p name, frames cut as compare cuts them. */
static void run(const char *name, enum roce_perf_test test, uint32_t size, uint64_t iters,
		uint32_t nqp, uint32_t first_psn, uint32_t snaplen, char *path, size_t pathlen)
{
	struct roce_perf_conf conf;
	struct roce_perf_result res;

	tmp_path(path, pathlen, name);
	roce_perf_defaults(&conf, test);
	conf.size = size;
	conf.iters = iters;
	conf.nqp = nqp;
	conf.first_psn = first_psn;
	conf.pcap = path;
	conf.snaplen = snaplen;
	ck_assert_int_eq(roce_perf_run(&conf, &res), 0);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_uint_eq(res.iters, iters);
}

/*
 * Copy @p in to @p out, leaving out the @p skip_ack-th ACK (from 1; 0: none) and, if
 * @p rewrite, giving every frame other addresses and QPNs (the IPv4 checksum and the ICRC
 * made right again), as another pair of hosts would have.
 */
static void copy(const char *in, const char *out, uint32_t skip_ack, bool rewrite)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_writer *w;
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	uint8_t buf[16384];
	uint32_t acks = 0;
	char err[256];
	int rc;

	r = roce_pcap_open(in, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	w = roce_pcap_create(out, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		roce_wire_parse(f.data, f.caplen, ROCE_PARSE_CAPTURE | ROCE_PARSE_NO_ICRC, &pkt);
		ck_assert_int_eq(pkt.kind, ROCE_KIND_ROCEV2);
		if (pkt.opcode == ROCE_OP_RC_ACKNOWLEDGE && ++acks == skip_ack)
			continue;
		if (rewrite) {
			ck_assert_uint_le(f.caplen, sizeof(buf));
			ck_assert_uint_eq(f.caplen, f.wirelen);	/* whole: the ICRC is redone */
			memcpy(buf, f.data, f.caplen);
			buf[pkt.l3_off + 15] ^= 0x40;	/* source and destination: 10.x */
			buf[pkt.l3_off + 19] ^= 0x40;
			buf[pkt.bth_off + 5] ^= 0x5a;	/* the destination QP */
			ck_assert_int_gt(roce_wire_fixup(buf, f.caplen), 0);
			f.data = buf;
		}
		ck_assert_int_eq(roce_pcap_write_frame(w, &f), 0);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_ge(acks, skip_ack);
	roce_pcap_close(r);
	ck_assert_int_eq(roce_pcap_close_writer(w), 0);
}

static struct roce_pattern *read_pattern(const char *path)
{
	char err[256];
	struct roce_pattern *p = roce_pattern_read(path, err, sizeof(err));

	ck_assert_msg(p != NULL, "%s", err);
	return p;
}

static void compare(const char *a, const char *b, struct roce_pattern_cmp *c)
{
	struct roce_pattern *pa = read_pattern(a), *pb = read_pattern(b);

	roce_pattern_compare(pa, pb, c);
	roce_pattern_destroy(pa);
	roce_pattern_destroy(pb);
}

/* The printed comparison, for the words a reader looks for. */
static void print(const struct roce_pattern_cmp *c, char *out, size_t size)
{
	static const char *const names[2] = { "device", "emulator" };
	FILE *f = fmemopen(out, size, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(roce_pattern_print(c, names, 8, f), 0);
	fclose(f);
}

static void assert_all_same(const struct roce_pattern_cmp *c, uint64_t reqs, uint64_t resps)
{
	ck_assert_uint_eq(c->compared[ROCE_PATTERN_REQ], reqs);
	ck_assert_uint_eq(c->same[ROCE_PATTERN_REQ], reqs);
	ck_assert_uint_eq(c->compared[ROCE_PATTERN_RESP], resps);
	ck_assert_uint_eq(c->same[ROCE_PATTERN_RESP], resps);
	ck_assert_uint_eq(c->missing[ROCE_PATTERN_REQ] + c->missing[ROCE_PATTERN_RESP], 0);
	ck_assert_uint_eq(c->ndiff, 0);
	ck_assert(c->acks_same);
}

/*
 * The same run twice: every message the same, each WRITE of two packets (8 KiB at the 4 KiB
 * MTU), every one covered by an ACK; the words compare prints.
 */
START_TEST(same_run_twice)
{
	char a[256], b[256], text[4096];
	struct roce_pattern_cmp c;
	const struct roce_pattern_side *s = &c.side[0];
	uint64_t acks = 0;

	run("a.pcap", ROCE_PERF_WRITE_BW, 8192, 50, 1, 0, 128, a, sizeof(a));
	run("b.pcap", ROCE_PERF_WRITE_BW, 8192, 50, 1, 0, 128, b, sizeof(b));
	compare(a, b, &c);
	assert_all_same(&c, 50, 0);
	ck_assert_uint_eq(s->requests, 50);
	ck_assert_uint_eq(s->req_flows, 1);
	ck_assert_uint_eq(s->flows, 2);
	ck_assert_uint_eq(s->frames, 100 + s->acks);
	ck_assert_uint_eq(s->other, 0);
	ck_assert_uint_gt(s->acks, 0);
	ck_assert_uint_eq(s->acked, 50);	/* the last ACK covers the last WRITE */
	for (int i = 0; i < ROCE_PATTERN_HIST; i++)
		acks += s->ack_hist[i];
	ck_assert_uint_eq(acks, s->acks);
	print(&c, text, sizeof(text));
	ck_assert_msg(strstr(text, " messages: 50 compared, 50 same, 0 differ (device 50, "
			      "emulator 50)\n") != NULL, "%s", text);
	ck_assert_msg(strstr(text, " ACK coalescing the same: device ") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "responses") == NULL, "%s", text);
	ck_assert_msg(strstr(text, "differences") == NULL, "%s", text);
}
END_TEST

/*
 * Other addresses, QPNs and first PSNs (one run across the 2^24 wrap): the flows are matched
 * by role and PSNs counted from each flow's first, so nothing differs.
 */
START_TEST(other_hosts_and_psns)
{
	char a[256], b[256], b2[256];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_WRITE_BW, 8192, 40, 1, 0, 0, a, sizeof(a));
	run("b.pcap", ROCE_PERF_WRITE_BW, 8192, 40, 1, 0xffffe0, 0, b, sizeof(b));
	tmp_path(b2, sizeof(b2), "b2.pcap");
	copy(b, b2, 0, true);
	compare(a, b2, &c);
	assert_all_same(&c, 40, 0);
}
END_TEST

/* One ACK fewer: the messages are the same, their coalescing is not, and it is said. */
START_TEST(ack_removed)
{
	char a[256], b[256], text[4096];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_WRITE_BW, 8192, 50, 1, 0, 128, a, sizeof(a));
	tmp_path(b, sizeof(b), "b.pcap");
	copy(a, b, 3, false);
	compare(a, b, &c);
	ck_assert_uint_eq(c.same[ROCE_PATTERN_REQ], 50);
	ck_assert(!c.acks_same);
	ck_assert_uint_eq(c.side[1].acks, c.side[0].acks - 1);
	ck_assert_uint_eq(c.side[1].acked, 50);	/* the next ACK covers what it did */
	ck_assert_mem_ne(c.side[0].ack_hist, c.side[1].ack_hist, sizeof(c.side[0].ack_hist));
	print(&c, text, sizeof(text));
	ck_assert_msg(strstr(text, " ACK coalescing differs: device ") != NULL, "%s", text);
}
END_TEST

/* Other sizes, another opcode: every message differs, in the fields that do, and is listed. */
START_TEST(size_and_opcode_differ)
{
	char a[256], b[256], text[4096];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_WRITE_BW, 8192, 30, 1, 0, 128, a, sizeof(a));
	run("b.pcap", ROCE_PERF_WRITE_BW, 4096, 30, 1, 0, 128, b, sizeof(b));
	compare(a, b, &c);
	ck_assert_uint_eq(c.compared[ROCE_PATTERN_REQ], 30);
	ck_assert_uint_eq(c.same[ROCE_PATTERN_REQ], 0);
	ck_assert_uint_eq(c.field[0], 30);	/* FIRST..LAST against ONLY */
	ck_assert_uint_eq(c.field[1], 30);	/* 8192 against 4096 */
	ck_assert_uint_eq(c.field[2], 29);	/* two PSNs a message against one: all but the first */
	ck_assert_uint_eq(c.ndiff, ROCE_PATTERN_DIFFS);
	ck_assert_uint_eq(c.diff[0].index, 1);
	ck_assert_uint_eq(c.diff[0].qp, 1);
	ck_assert_uint_eq(c.diff[0].fields, ROCE_PATTERN_OPCODES | ROCE_PATTERN_SIZE);
	print(&c, text, sizeof(text));
	ck_assert_msg(strstr(text, "  QP 1 message 1: opcodes, size: device RC_RDMA_WRITE_FIRST.."
			      "LAST x2 8192 B psn +0") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "| emulator RC_RDMA_WRITE_ONLY 4096 B psn +0") != NULL, "%s",
		      text);

	run("b.pcap", ROCE_PERF_SEND_BW, 8192, 30, 1, 0, 128, b, sizeof(b));
	compare(a, b, &c);
	ck_assert_uint_eq(c.field[0], 30);
	ck_assert_uint_eq(c.field[1] + c.field[2], 0);
}
END_TEST

/* A run with fewer iterations: the messages it lacks are named, the others the same. */
START_TEST(messages_missing)
{
	char a[256], b[256], text[4096];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_WRITE_BW, 4096, 50, 1, 0, 128, a, sizeof(a));
	run("b.pcap", ROCE_PERF_WRITE_BW, 4096, 40, 1, 0, 128, b, sizeof(b));
	compare(a, b, &c);
	ck_assert_uint_eq(c.compared[ROCE_PATTERN_REQ], 40);
	ck_assert_uint_eq(c.same[ROCE_PATTERN_REQ], 40);
	ck_assert_uint_eq(c.missing[ROCE_PATTERN_REQ], 10);
	ck_assert_uint_eq(c.diff[0].index, 41);
	ck_assert_uint_eq(c.diff[0].fields, ROCE_PATTERN_MISSING);
	print(&c, text, sizeof(text));
	ck_assert_msg(strstr(text, "10 on one side only (device 50, emulator 40)") != NULL, "%s",
		      text);
	ck_assert_msg(strstr(text, "  QP 1 message 41: only device has it: RC_RDMA_WRITE_ONLY "
			      "4096 B psn +40") != NULL, "%s", text);
}
END_TEST

/* READ: requests ask for the size (their RETH), the responses are messages of their own. */
START_TEST(read_responses)
{
	char a[256], b[256];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_READ_BW, 10000, 30, 1, 0, 128, a, sizeof(a));
	run("b.pcap", ROCE_PERF_READ_BW, 10000, 30, 1, 0x800000, 128, b, sizeof(b));
	compare(a, b, &c);
	assert_all_same(&c, 30, 30);
	ck_assert_uint_eq(c.side[0].acks, 0);
	run("b.pcap", ROCE_PERF_READ_BW, 8192, 30, 1, 0, 128, b, sizeof(b));
	compare(a, b, &c);
	ck_assert_uint_eq(c.field[1], 60);	/* every request's length, every response's bytes */
	ck_assert_uint_eq(c.same[ROCE_PATTERN_RESP], 0);
}
END_TEST

/* Two QPs: each flow with its own, matched by order. */
START_TEST(two_qps)
{
	char a[256], b[256];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_WRITE_BW, 4096, 40, 2, 0, 128, a, sizeof(a));
	run("b.pcap", ROCE_PERF_WRITE_BW, 4096, 40, 2, 100, 128, b, sizeof(b));
	compare(a, b, &c);
	ck_assert_uint_eq(c.side[0].req_flows, 2);
	assert_all_same(&c, c.side[0].requests, 0);
	ck_assert_uint_ge(c.side[0].requests, 40);
}
END_TEST

/* Latency tests send both ways: each side's requests, and the ACKs of each. */
START_TEST(both_ways)
{
	char a[256], b[256];
	struct roce_pattern_cmp c;

	run("a.pcap", ROCE_PERF_WRITE_LAT, 2, 20, 1, 0, 128, a, sizeof(a));
	run("b.pcap", ROCE_PERF_WRITE_LAT, 2, 20, 1, 7, 128, b, sizeof(b));
	compare(a, b, &c);
	ck_assert_uint_eq(c.side[0].req_flows, 2);
	assert_all_same(&c, c.side[0].requests, 0);
	ck_assert_uint_eq(c.side[0].requests, 40);
	ck_assert_uint_eq(c.side[0].acked, 40);
}
END_TEST

/* A file that is not there: one line naming it. */
START_TEST(bad_file)
{
	char err[256];

	errno = 0;
	ck_assert_ptr_null(roce_pattern_read("/nonexistent/x.pcap", err, sizeof(err)));
	ck_assert_int_ne(errno, 0);
	ck_assert_msg(strstr(err, "/nonexistent/x.pcap") != NULL, "%s", err);
	roce_pattern_destroy(NULL);
}
END_TEST

static Suite *pattern_suite(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = tcase_create("compare");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_run_twice);
	tcase_add_test(tc, other_hosts_and_psns);
	tcase_add_test(tc, ack_removed);
	tcase_add_test(tc, size_and_opcode_differ);
	tcase_add_test(tc, messages_missing);
	tcase_add_test(tc, read_responses);
	tcase_add_test(tc, two_qps);
	tcase_add_test(tc, both_ways);
	tcase_add_test(tc, bad_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	static const char *const names[] = { "a.pcap", "b.pcap", "b2.pcap" };
	SRunner *sr;
	char path[256];
	int failed;

	if (mkdtemp(tmpdir) == NULL) {
		perror("test_pattern: mkdtemp");
		return 1;
	}
	/* once, before Check forks: every case inherits the initialised EAL */
	if (roce_eal_init(NULL) != 0)
		return 1;
	sr = srunner_create(pattern_suite());
	if (getenv("CK_FORK") == NULL)
		srunner_set_fork_status(sr, CK_NOFORK);	/* forking the EAL costs ~0.7 s a case */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		tmp_path(path, sizeof(path), names[i]);
		unlink(path);
	}
	rmdir(tmpdir);
	return failed == 0 ? 0 : 1;
}
