/* ICRC GB/s beside raw rte_net_crc over the same bytes (the limit) and memcpy (for reference). */
#include <stdio.h>
#include <string.h>

#include <rte_net_crc.h>

#include "bench_common.h"
#include "roce_io.h"
#include "roce_wire.h"

#define MIN_SECONDS 0.15	/* per measurement; three rounds, interleaved */

static uint8_t frame[10000], dst[10000];

/* Calls per second of @p expr over at least MIN_SECONDS. */
#define RATE(expr) ({ \
	uint64_t n_ = 0; \
	double t0_ = bench_now(), t_; \
	do { \
		for (int i_ = 0; i_ < 1024; i_++, n_++) { \
			expr; \
		} \
		t_ = bench_now() - t0_; \
	} while (t_ < MIN_SECONDS); \
	(double)n_ / t_; \
})

int main(void)
{
	static const uint32_t sizes[] = { 64, 256, 1024, 4096, 8192 };
	struct roce_pkt pkt;

	if (roce_eal_init(NULL) != 0)
		return 1;
	printf("bench_icrc: CRC path %s; GB/s over the bytes the ICRC covers (IP header to payload end);\n"
	       "medians of 3 interleaved rounds (ratio: median of the per-round ratios)\n", roce_crc_path());
	printf("%-8s %7s %12s %12s %8s %12s\n", "payload", "bytes", "icrc GB/s", "crc32 GB/s",
	       "ratio", "memcpy GB/s");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t end, covered;
		double icrc, crc, mcp, r[3][3], ratio[3];
		int len;

		roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
		pkt.payload_len = sizes[s];
		len = roce_wire_build(&pkt, 0, frame, sizeof(frame));
		roce_wire_parse(frame, (uint32_t)len, 0, &pkt);
		end = (uint32_t)len - ROCE_ICRC_LEN;
		covered = end - pkt.l3_off;
		/* rounds interleave the three so that load changes hit them alike; medians of 3 */
		for (int k = 0; k < 3; k++) {
			r[0][k] = RATE(frame[60] = (uint8_t)n_;
				       bench_sink += roce_icrc_calc(frame, &pkt, end));
			r[1][k] = RATE(frame[60] = (uint8_t)n_;
				       bench_sink += rte_net_crc_calc(frame + pkt.l3_off, covered,
								      RTE_NET_CRC32_ETH));
			r[2][k] = RATE(frame[60] = (uint8_t)n_; memcpy(dst, frame + pkt.l3_off, covered);
				       bench_sink += dst[50]);
			ratio[k] = r[0][k] / r[1][k];
		}
		icrc = bench_median3(r[0][0], r[0][1], r[0][2]);
		crc = bench_median3(r[1][0], r[1][1], r[1][2]);
		mcp = bench_median3(r[2][0], r[2][1], r[2][2]);
		printf("%-8u %7u %12.2f %12.2f %7.0f%% %12.2f\n", sizes[s], covered,
		       icrc * covered / 1e9, crc * covered / 1e9, 100.0 * bench_median3(ratio[0], ratio[1], ratio[2]),
		       mcp * covered / 1e9);
	}
	return 0;
}
