/*
 * Emulated RC WRITE goodput and message rate on one core in virtual time, beside the ceiling
 * the payload path cannot beat, measured in the same run over the same frame sizes: the copies
 * a frame's payload takes. A frame under ROCE_ZC_MIN bytes is copied twice (sender MR -> frame,
 * frame -> receiver MR); a longer one once, from the sender's MR into the receiver's, since
 * perf's source is registered ROCE_ACCESS_ZERO_COPY. No ICRC: the NICs leave it to whoever
 * looks (ICRC offload, docs/engine.md), and nothing captures here. Each figure is given per
 * wall-clock second and per second of CPU time the thread got: on a shared machine the second
 * is the emulator's speed, the first also the machine's load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "roce_io.h"
#include "roce_perf.h"
#include "roce_wire.h"

/*
 * Bytes per second of the payload copies of MTU-sized frames, the emulator's ceiling: per
 * wall-clock second (returned) and per CPU second (@p per_cpu).
 */
static double copy_ceiling(uint32_t mtu, double *per_cpu)
{
	uint32_t msg = 65536, frames = msg / mtu;
	uint8_t *src = aligned_alloc(64, msg), *dst = aligned_alloc(64, msg);
	uint8_t frame[4096 + 128];
	struct roce_pkt pkt;
	double t0, c0, t;
	uint64_t n = 0;
	int len;

	memset(src, 0x5a, msg);
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_MIDDLE);
	pkt.payload_len = mtu;
	pkt.payload = src;
	len = roce_wire_build(&pkt, 0, frame, sizeof(frame));
	t0 = bench_now();
	c0 = bench_cpu_now();
	do {
		for (uint32_t i = 0; i < frames; i++) {
			if (mtu >= ROCE_ZC_MIN) {
				memcpy(dst + (size_t)i * mtu, src + (size_t)i * mtu, mtu);
			} else {
				memcpy(frame + len - 4 - mtu, src + (size_t)i * mtu, mtu);
				memcpy(dst + (size_t)i * mtu, frame + len - 4 - mtu, mtu);
			}
		}
		bench_sink += dst[msg / 2];
		n += msg;
		t = bench_now() - t0;
	} while (t < 0.5);
	*per_cpu = (double)n / (bench_cpu_now() - c0);
	free(src);
	free(dst);
	return (double)n / t;
}

static void run(const char *what, enum roce_perf_test test, uint32_t size, enum roce_mtu mtu,
		uint64_t iters)
{
	struct roce_perf_conf conf;
	struct roce_perf_result res;

	roce_perf_defaults(&conf, test);
	conf.size = size;
	conf.mtu = mtu;
	conf.iters = iters;
	if (roce_perf_run(&conf, &res) != 0 || res.errors != 0) {
		printf("%-34s failed\n", what);
		return;
	}
	printf("%-34s %8.2f Gb/s goodput  %6.2f M msg/s  %6.2f M frames/s  (virtual %.0f Gb/s)\n",
	       what, (double)res.iters * size * 8 / res.wall_sec / 1e9,
	       (double)res.iters / res.wall_sec / 1e6, (double)res.frames / res.wall_sec / 1e6,
	       res.bw_avg_gbps);
	printf("%-34s %8.2f Gb/s goodput  %6.2f M msg/s  %6.2f M frames/s  (%.0f%% of the wall time)\n",
	       "  per CPU second", (double)res.iters * size * 8 / res.cpu_sec / 1e9,
	       (double)res.iters / res.cpu_sec / 1e6, (double)res.frames / res.cpu_sec / 1e6,
	       100 * res.cpu_sec / res.wall_sec);
}

int main(void)
{
	if (roce_eal_init(NULL) != 0)
		return 1;
	printf("emulated RC WRITE, one core, virtual time, payload really moved\n");
	for (enum roce_mtu m = ROCE_MTU_1024; m <= ROCE_MTU_4096; m += 2) {
		char what[64];
		double wall, cpu;

		snprintf(what, sizeof(what), "write_bw 64 KiB, PMTU %u", roce_mtu_bytes(m));
		run(what, ROCE_PERF_WRITE_BW, 65536, m, 20000);
		wall = copy_ceiling(roce_mtu_bytes(m), &cpu);
		printf("%-34s %8.2f Gb/s (%s memcpy per %u-byte frame), %.2f Gb/s per CPU second\n",
		       "  ceiling, same run", wall * 8 / 1e9,
		       roce_mtu_bytes(m) >= ROCE_ZC_MIN ? "1 x" : "2 x", roce_mtu_bytes(m),
		       cpu * 8 / 1e9);
	}
	run("write_bw 64 B (small messages)", ROCE_PERF_WRITE_BW, 64, ROCE_MTU_4096, 1000000);
	run("send_bw 64 B (small messages)", ROCE_PERF_SEND_BW, 64, ROCE_MTU_4096, 1000000);
	{
		struct roce_perf_conf conf;
		struct roce_perf_result res;

		roce_perf_defaults(&conf, ROCE_PERF_WRITE_LAT);
		conf.iters = 100000;
		if (roce_perf_run(&conf, &res) == 0)
			printf("%-34s %8.3f us wall-clock per round trip, %.3f us CPU (virtual %.2f us one-way)\n",
			       "write_lat 2 B", res.wall_sec / (double)res.iters * 1e6,
			       res.cpu_sec / (double)res.iters * 1e6, res.lat_typical);
	}
	return 0;
}
