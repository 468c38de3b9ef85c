/* ICRC GB/s beside raw rte_net_crc over the same bytes (the limit) and memcpy (for reference). */
#include <stdio.h>
#include <string.h>

#include <rte_net_crc.h>

#include "bench_common.h"
#include "roce_io.h"
#include "roce_wire.h"

#define MIN_SECONDS 0.4

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
	printf("bench_icrc: CRC path %s; GB/s over the bytes the ICRC covers (IP header to payload end)\n",
	       roce_crc_path());
	printf("%-8s %7s %12s %12s %8s %12s\n", "payload", "bytes", "icrc GB/s", "crc32 GB/s",
	       "ratio", "memcpy GB/s");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t end, covered;
		double icrc, crc, mcp;
		int len;

		roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
		pkt.payload_len = sizes[s];
		len = roce_wire_build(&pkt, 0, frame, sizeof(frame));
		roce_wire_parse(frame, (uint32_t)len, 0, &pkt);
		end = (uint32_t)len - ROCE_ICRC_LEN;
		covered = end - pkt.l3_off;
		icrc = RATE(frame[60] = (uint8_t)n_;
			    bench_sink += roce_icrc_calc(frame, &pkt, end));
		crc = RATE(frame[60] = (uint8_t)n_;
			   bench_sink += rte_net_crc_calc(frame + pkt.l3_off, covered, RTE_NET_CRC32_ETH));
		mcp = RATE(frame[60] = (uint8_t)n_; memcpy(dst, frame + pkt.l3_off, covered);
			   bench_sink += dst[50]);
		printf("%-8u %7u %12.2f %12.2f %7.0f%% %12.2f\n", sizes[s], covered,
		       icrc * covered / 1e9, crc * covered / 1e9, 100.0 * icrc / crc,
		       mcp * covered / 1e9);
	}
	return 0;
}
