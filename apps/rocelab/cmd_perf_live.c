/* rocelab perf --dev: one side of a perftest run in real time, on a DPDK port. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd_perf.h"
#include "rocelab.h"
#include "roce_transport.h"

#define RESULT_LINE "---------------------------------------------------------------------------------------\n"

int perf_live_main(const struct roce_perf_conf *conf, const struct roce_perf_live *live, bool gbits)
{
	struct roce_perf_live_info info;
	struct roce_perf_live_stats st;
	struct roce_perf_live_ctx *ctx;
	struct roce_perf_result res;
	struct roce_perf_conf shown = *conf;
	char err[256], device[160], link[160];
	int rc, status = EXIT_SUCCESS;
	bool pp = live->xchg == ROCE_PERF_XCHG_PINGPONG;

	if (live->peer == NULL && !pp) {
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
		fflush(stdout);
	}
	ctx = roce_perf_live_open(conf, live, err, sizeof(err));
	if (ctx == NULL) {
		fprintf(stderr, "rocelab perf: %s\n", err);
		return errno == EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	roce_perf_live_info(ctx, &info);
	shown.mtu = roce_mtu_from_bytes(info.mtu);
	snprintf(device, sizeof(device), "rocelab0 (emulated, real time) on %s", info.port);
	snprintf(link, sizeof(link), "%s, %g Gb/s, MTU %u; peer perftest %s", info.port,
		 (double)info.speed_bps / 1e9, info.port_mtu, info.peer_version);
	if (pp) {
		/* ibv_rc_pingpong's lines */
		printf("  local address:  %s\n", info.local);
		printf("  remote address: %s\n", info.remote);
		printf(" %s, %g Gb/s, MTU %u, IB MTU %u (not exchanged: the peer must use the same -m)\n",
		       info.port, (double)info.speed_bps / 1e9, info.port_mtu, info.mtu);
	} else {
		printf(" local address: %s\n", info.local);
		printf(" remote address: %s\n", info.remote);
		perf_print_header(&shown, gbits, device, link);
	}
	fflush(stdout);

	rc = roce_perf_live_run(ctx, &res, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "rocelab perf: %s\n", err);
		status = EXIT_FAILURE;
	}
	if (pp && rc == 0 && res.errors == 0) {
		/* every message went both ways; the time runs from the first message */
		double usec = res.wall_sec * 1e6;
		long long bytes = (long long)conf->size * (long long)conf->iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1e6,
		       usec > 0 ? (double)bytes * 8 / usec : 0);
		printf("%llu iters in %.2f seconds = %.2f usec/iter\n",
		       (unsigned long long)conf->iters, usec / 1e6, usec / (double)conf->iters);
	} else if (!pp && res.iters != 0) {
		perf_print_result(&shown, &res, gbits);
	}
	printf(RESULT_LINE);
	roce_perf_live_stats(ctx, &st);
	printf(" port: %llu frames out, %llu in (%llu RoCE, %llu not ours), %llu dropped out, "
	       "%llu dropped in, %llu ICRC errors\n", (unsigned long long)st.tx_frames,
	       (unsigned long long)st.rx_frames, (unsigned long long)st.rx_roce,
	       (unsigned long long)st.rx_other, (unsigned long long)st.tx_dropped,
	       (unsigned long long)st.rx_dropped, (unsigned long long)st.icrc_errors);
	if (st.access_naks_sent != 0 || st.naks_rcvd != 0)
		printf(" NIC: %llu NAK(s) remote access error sent, %llu error NAK(s) received\n",
		       (unsigned long long)st.access_naks_sent, (unsigned long long)st.naks_rcvd);
	if (res.errors != 0) {
		fprintf(stderr, "rocelab perf: %llu completion(s) with errors, first: %s (%s)\n",
			(unsigned long long)res.errors, roce_wc_status_name(res.first_error),
			roce_wc_status_str(res.first_error));
		status = EXIT_FAILURE;
	}
	if (res.verify_failures != 0) {
		fprintf(stderr, "rocelab perf: --verify: %llu mismatch(es); first: %s\n",
			(unsigned long long)res.verify_failures, res.verify_msg);
		status = EXIT_FAILURE;
	}
	if (conf->verify && status == EXIT_SUCCESS)
		printf(" verify: every byte and every completion checked: OK\n");
	roce_perf_live_close(ctx);
	return status;
}
