/* Frames built with ICRC per second, one core, beside the CRC-only and memcpy-only limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_net_crc.h>

#include "bench_common.h"
#include "roce_io.h"
#include "roce_wire.h"

#define MIN_SECONDS 0.15	/* per measurement; three rounds, interleaved */

static uint8_t src[9000], out[10000], copy[10000];

/* Calls per second of @p fn over at least MIN_SECONDS. */
#define RATE(expr) ({ \
	uint64_t n_ = 0, batch_ = 1024; \
	double t0_ = bench_now(), t_; \
	do { \
		for (uint64_t i_ = 0; i_ < batch_; i_++, n_++) { \
			expr; \
		} \
		t_ = bench_now() - t0_; \
	} while (t_ < MIN_SECONDS); \
	(double)n_ / t_; \
})

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 64, 1024, 4096 };
	struct roce_pkt pkt;

	(void)argc;
	(void)argv;
	if (roce_eal_init(NULL) != 0)
		return 1;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7);
	printf("bench_build: RC_SEND_ONLY over IPv4, one core, CRC path %s; medians of 3 interleaved rounds\n",
	       roce_crc_path());
	printf("%-8s %6s %14s %14s %14s %14s\n", "payload", "frame", "build Mfr/s", "build+pat Mfr/s",
	       "crc-only Mfr/s", "memcpy Mfr/s");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		double build, pattern, crc, mcp;
		int len;

		roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
		pkt.dqpn = 0x11;
		pkt.payload_len = sizes[s];
		pkt.payload = src;
		len = roce_wire_build(&pkt, 0, out, sizeof(out));
		memcpy(copy, out, (size_t)len);
		/* rounds interleave the four so that load changes hit them alike; medians of 3 */
		double r[4][3];

		for (int k = 0; k < 3; k++) {
			/* payload copied from memory, as from a registered MR */
			pkt.payload = src;
			r[0][k] = RATE(pkt.psn = (uint32_t)n_ & ROCE_PSN_MASK;
				       bench_sink += (uint64_t)roce_wire_build(&pkt, 0, out, sizeof(out)));
			/* payload generated: roce_wire_build()'s incrementing pattern */
			pkt.payload = NULL;
			r[1][k] = RATE(pkt.psn = (uint32_t)n_ & ROCE_PSN_MASK;
				       bench_sink += (uint64_t)roce_wire_build(&pkt, 0, out, sizeof(out)));
			/* limits: one CRC-32 (rte_net_crc) over the frame's bytes; one copy of the frame */
			r[2][k] = RATE(copy[40] = (uint8_t)n_;
				       bench_sink += rte_net_crc_calc(copy + 14, (uint32_t)len - 14,
								      RTE_NET_CRC32_ETH));
			r[3][k] = RATE(copy[40] = (uint8_t)n_; memcpy(out, copy, (size_t)len);
				       bench_sink += out[40]);
		}
		build = bench_median3(r[0][0], r[0][1], r[0][2]);
		pattern = bench_median3(r[1][0], r[1][1], r[1][2]);
		crc = bench_median3(r[2][0], r[2][1], r[2][2]);
		mcp = bench_median3(r[3][0], r[3][1], r[3][2]);
		printf("%-8u %6d %14.2f %14.2f %14.2f %14.2f\n", sizes[s], len, build / 1e6,
		       pattern / 1e6, crc / 1e6, mcp / 1e6);
	}
	return 0;
}
