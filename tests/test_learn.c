/* Check suite 'learn': what the lessons claim, checked against the spec and the physics. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roce_io.h"
#include "roce_learn.h"

/*
 * Header sizes from the specifications, not from lib/wire: Ethernet 14, 802.1Q 4, IPv4 20,
 * IPv6 40, UDP 8, GRH 40, LRH 8, BTH 12, RETH 16, ICRC 4, VCRC 2, FCS 4; payload padded to 4.
 */
static uint32_t spec_packet(enum roce_encap e, uint32_t payload)
{
	uint32_t ib = 12 + 16 + payload + (4 - payload % 4) % 4 + 4;

	switch (e) {
	case ROCE_ENCAP_IB:
		return 8 + ib + 2;
	case ROCE_ENCAP_V1:
		return 14 + 40 + ib + 4;
	case ROCE_ENCAP_V2_IP4:
		return 14 + 20 + 8 + ib + 4;
	case ROCE_ENCAP_V2_IP6:
		return 14 + 40 + 8 + ib + 4;
	case ROCE_ENCAP_V2_VLAN:
		return 14 + 4 + 20 + 8 + ib + 4;
	default:
		return 0;
	}
}

START_TEST(test_encap_sizes)
{
	for (int e = 0; e < ROCE_ENCAP_NUM; e++) {
		for (uint32_t p = 0; p <= 4096; p += p < 16 ? 1 : 61) {
			struct roce_encap_frame f;
			uint32_t sum = 0;

			ck_assert_int_eq(roce_learn_encap((enum roce_encap)e, p, &f), 0);
			ck_assert_msg(f.packet_bytes == spec_packet((enum roce_encap)e, p),
				      "%s, %u B: %u bytes, the spec says %u", f.name, p, f.packet_bytes,
				      spec_packet((enum roce_encap)e, p));
			for (int k = 0; k < f.nlayers; k++)
				sum += f.layer[k].bytes;
			ck_assert_uint_eq(sum, f.packet_bytes);
			ck_assert_uint_eq(f.wire_bytes, f.packet_bytes + (e == ROCE_ENCAP_IB ? 0 : 20));
			ck_assert_double_eq_tol(f.efficiency, (double)p / f.wire_bytes, 1e-12);
		}
	}
	{
		struct roce_encap_frame f;

		ck_assert_int_eq(roce_learn_encap(ROCE_ENCAP_NUM, 64, &f), -EINVAL);
		ck_assert_int_eq(roce_learn_encap(ROCE_ENCAP_IB, 4097, &f), -EINVAL);
	}
}
END_TEST

/*
 * Below the bandwidth-delay product goodput is the window over the round trip; well above it,
 * the line. 100G, 5 us each way: RTT a little over 10 us, BDP about 125 KB.
 */
START_TEST(test_bdp)
{
	static const uint32_t depth[] = { 1, 8, 64 };
	struct roce_learn_point p[3];

	ck_assert_int_eq(roce_learn_bdp(depth, 3, 4096, 5000, 0.0005, p), 0);
	for (int i = 0; i < 2; i++) {
		double bound = p[i].x * 8 / 10e-6 / 1e9;	/* in flight over the cable's RTT */

		ck_assert_msg(p[i].gbps <= bound && p[i].gbps > 0.85 * bound,
			      "%g bytes in flight: %.2f Gb/s, window/RTT %.2f", p[i].x, p[i].gbps,
			      bound);
	}
	ck_assert_double_gt(p[2].gbps, 95);
	ck_assert_double_lt(p[2].gbps, 100);
}
END_TEST

/* Go-back-N: no loss, no resends; 1e-3 costs more the longer the path; 1e-2 collapses it. */
START_TEST(test_loss)
{
	static const double loss[] = { 0, 1e-3, 1e-2 };
	struct roce_learn_point near[3], far[3];

	ck_assert_int_eq(roce_learn_loss(loss, 3, 500, 0.002, 1, near), 0);
	ck_assert_int_eq(roce_learn_loss(loss, 3, 25000, 0.002, 1, far), 0);
	ck_assert_uint_eq(near[0].retransmits + near[0].lost + far[0].lost, 0);
	ck_assert_double_gt(near[0].gbps, 95);
	ck_assert_uint_gt(far[1].lost, 0);
	/* each loss resends the window in flight behind it: more frames on a longer path */
	ck_assert_uint_gt(far[1].retransmits, far[1].lost);
	ck_assert_double_gt((double)far[1].retransmits / far[1].lost,
			    (double)near[1].retransmits / near[1].lost);
	ck_assert_double_lt(far[1].gbps, near[1].gbps);
	ck_assert_double_lt(near[2].gbps, near[0].gbps / 2);
	ck_assert_uint_gt(near[2].timeouts + far[2].timeouts, 0);
}
END_TEST

/*
 * GPUDirect: the PCIe rate from its encoding and TLP overheads; GPUDirect's latency is the RDMA
 * WRITE's, the staged path's is two copies more; pipelining only pays with more than one chunk.
 */
START_TEST(test_gpudirect)
{
	static const uint32_t sizes[] = { 64, 4u << 20 };
	const struct roce_pcie gen4 = { .gen = 4, .lanes = 16, .mps = 256, .copy_us = 5 };
	const struct roce_pcie gen3x8 = { .gen = 3, .lanes = 8, .mps = 256 };
	const struct roce_pcie bad = { .gen = 2, .lanes = 16, .mps = 256 };
	struct roce_learn_gpu_point p[2];

	/* 16 GT/s x 16 lanes x 128/130 / 8 = 31.51 GB/s; x 256 / 280 = 28.81 GB/s */
	ck_assert_double_eq_tol(roce_pcie_gbytes(&gen4), 28.807, 0.001);
	ck_assert_double_lt(roce_pcie_gbytes(&gen3x8) * 8, 100);	/* too slow for 100G */
	ck_assert_double_eq(roce_pcie_gbytes(&bad), 0);
	ck_assert_int_eq(roce_learn_gpudirect(&bad, sizes, 2, p), -EINVAL);

	ck_assert_int_eq(roce_learn_gpudirect(&gen4, sizes, 2, p), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(p[i].size, sizes[i]);
		ck_assert_double_gt(p[i].rdma_lat_us, 0);
		ck_assert_double_eq(p[i].gdr_lat_us, p[i].rdma_lat_us);
		ck_assert_double_eq_tol(p[i].copy_us, 5 + sizes[i] / 28.807e3, 0.01);
		ck_assert_double_eq_tol(p[i].staged_lat_us - p[i].gdr_lat_us, 2 * p[i].copy_us,
					1e-9);
		ck_assert_double_eq(p[i].gdr_gbps, p[i].rdma_gbps);
		ck_assert_double_lt(p[i].staged_gbps, p[i].gdr_gbps);
		ck_assert_double_le(p[i].pipelined_gbps, p[i].gdr_gbps);
	}
	/* one chunk: no overlap to gain */
	ck_assert_double_eq_tol(p[0].pipelined_gbps, p[0].staged_gbps, 1e-9);
	/* 8 chunks of 512 KiB: the copies hide behind the transfers */
	ck_assert_double_gt(p[1].pipelined_gbps, 1.5 * p[1].staged_gbps);
	ck_assert_double_gt(p[1].gdr_gbps, 95);
}
END_TEST

/* Every lesson runs (quick) and writes its page with pictures in it. */
START_TEST(test_lessons_run)
{
	const struct roce_lesson *const *l;
	size_t n = roce_lessons(&l);
	char dir[64], path[128], err[256];
	struct roce_learn_conf conf = { .quick = true, .seed = 1 };

	snprintf(dir, sizeof(dir), "/tmp/test_learn_%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	conf.out_dir = dir;
	ck_assert_uint_ge(n, 5);
	ck_assert_ptr_null(roce_lesson_find("nonesuch"));
	for (size_t i = 0; i < n; i++) {
		char buf[1 << 16];
		FILE *f;
		size_t len;

		ck_assert_ptr_eq(roce_lesson_find(l[i]->name), l[i]);
		ck_assert_msg(roce_learn_run(l[i], &conf, err, sizeof(err)) == 0, "%s: %s",
			      l[i]->name, err);
		snprintf(path, sizeof(path), "%s/%s.html", dir, l[i]->name);
		f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		ck_assert_msg(strstr(buf, "<svg") != NULL, "%s has no picture", path);
		ck_assert_msg(strstr(buf, "<table") != NULL, "%s has no table", path);
	}
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

static Suite *learn_suite(void)
{
	Suite *s = suite_create("learn");
	TCase *tc = tcase_create("lessons");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_encap_sizes);
	tcase_add_test(tc, test_bdp);
	tcase_add_test(tc, test_loss);
	tcase_add_test(tc, test_gpudirect);
	tcase_add_test(tc, test_lessons_run);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(learn_suite());
	int failed;

	if (roce_eal_init(NULL) != 0)
		return EXIT_FAILURE;
	if (getenv("CK_FORK") == NULL)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
