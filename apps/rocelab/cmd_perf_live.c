/*
 * rocelab perf --dev and --ibdev: one side of a perftest run in real time, on a DPDK port or a
 * real RDMA device; or, on a device, both sides in one process.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_perf.h"
#include "rocelab.h"
#include "roce_transport.h"

#define RESULT_LINE "---------------------------------------------------------------------------------------\n"

/* What -a's rows before the last are printed with. */
struct row_print {
	const struct roce_perf_conf *shown;	/* the header's configuration */
	bool gbits;				/* --report_gbits */
};

static void print_row(void *arg, const struct roce_perf_result *res)
{
	const struct row_print *rp = arg;

	perf_print_result(rp->shown, res, rp->gbits);
	fflush(stdout);
}

/* perftest's banner, once the port is open and the server listens: not before an error */
static void print_waiting(void *arg)
{
	(void)arg;
	printf("\n************************************\n"
	       "* Waiting for client to connect... *\n"
	       "************************************\n");
	fflush(stdout);
}

/* perftest --report-both -b: this side's own row and the peer's, after their sum. */
static void print_both(const struct roce_perf_conf *shown, const struct roce_perf_result *sum,
		       bool gbits)
{
	struct roce_perf_result r = *sum;
	const char *title = gbits ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]"
				    "   MsgRate[Mpps]\n" :
				    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]"
				    "   MsgRate[Mpps]\n";

	r.bw_peak_gbps = sum->bw_peak_gbps - sum->peer_bw_peak_gbps;
	r.bw_avg_gbps = sum->bw_avg_gbps - sum->peer_bw_avg_gbps;
	r.msg_rate_mpps = sum->msg_rate_mpps - sum->peer_msg_rate_mpps;
	printf(RESULT_LINE "\n Local results: \n" RESULT_LINE "%s", title);
	perf_print_result(shown, &r, gbits);
	r.bw_peak_gbps = sum->peer_bw_peak_gbps;
	r.bw_avg_gbps = sum->peer_bw_avg_gbps;
	r.msg_rate_mpps = sum->peer_msg_rate_mpps;
	printf(RESULT_LINE "\n Remote results: \n" RESULT_LINE "%s", title);
	perf_print_result(shown, &r, gbits);
}

/*
 * One run. @p client is set once a peer connected (whatever happened next), so that host
 * mode can tell a failed client from a port it cannot open.
 */
static int run_live(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		    const struct perf_report_opts *rep, int *client)
{
	struct roce_perf_live_info info;
	struct roce_perf_live_stats st;
	struct roce_perf_live_ctx *ctx;
	struct roce_perf_result res;
	struct roce_perf_conf shown = *conf;
	bool gbits = rep->gbits;
	struct row_print rp = { .shown = &shown, .gbits = gbits };
	struct roce_perf_live lv = *live;
	char err[256], device[160], link[160];
	int rc, status = EXIT_SUCCESS;
	bool pp = live->xchg == ROCE_PERF_XCHG_PINGPONG;

	if (live->peer == NULL && !pp)
		lv.listening = print_waiting;
	lv.row = print_row;
	lv.row_arg = &rp;
	ctx = roce_perf_live_open(conf, &lv, err, sizeof(err));
	if (ctx == NULL) {
		int e = errno;

		if (e == EINTR && live->stop != NULL && *live->stop)
			return EXIT_SUCCESS;	/* host mode, interrupted between clients */
		/* the peer's faults; the others (port, socket, configuration) come before it */
		*client = e == EPROTO || e == ECONNRESET || e == ETIMEDOUT || e == EHOSTUNREACH ||
			  e == EPIPE;
		fprintf(stderr, "rocelab perf: %s\n", err);
		return e == EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	*client = 1;
	roce_perf_live_info(ctx, &info);
	shown.mtu = roce_mtu_from_bytes(info.mtu);
	if (live->ibdev != NULL)
		snprintf(device, sizeof(device), "%s (rdma-core)", info.port);
	else
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
		perf_print_header(&shown, gbits, live->duplex, device, link);
	}
	fflush(stdout);

	rc = roce_perf_live_run(ctx, &res, err, sizeof(err));
	if (rc != 0) {
		/* one line: what stopped the run, and the completions that failed with it */
		if (res.errors != 0)	/* the completions first: they failed first */
			fprintf(stderr, "rocelab perf: %llu completion(s) with errors, first: %s (%s); "
				"then %s\n", (unsigned long long)res.errors,
				roce_wc_status_name(res.first_error),
				roce_wc_status_str(res.first_error), err);
		else
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
		if (rep->both && live->duplex)
			print_both(&shown, &res, gbits);
		if (rep->json != NULL &&
		    perf_write_json(rep->json, &shown, &res, gbits, live->duplex, device) != 0)
			status = EXIT_FAILURE;
	}
	printf(RESULT_LINE);
	roce_perf_live_stats(ctx, &st);
	if (live->ibdev == NULL)
		printf(" port: %llu frames out, %llu in (%llu RoCE, %llu not ours), %llu dropped out, "
	       "%llu dropped in, %llu ICRC errors\n", (unsigned long long)st.tx_frames,
	       (unsigned long long)st.rx_frames, (unsigned long long)st.rx_roce,
	       (unsigned long long)st.rx_other, (unsigned long long)st.tx_dropped,
	       (unsigned long long)st.rx_dropped, (unsigned long long)st.icrc_errors);
	if (st.retransmits != 0 || st.out_of_sequence != 0)
		printf(" transport: %llu retransmitted, %llu received out of sequence\n",
		       (unsigned long long)st.retransmits, (unsigned long long)st.out_of_sequence);
	if (res.lost_msgs != 0)
		printf(" %s: %llu message(s) never arrived: a frame of each was lost, and %s does "
		       "not resend (those received were checked)\n",
		       conf->qp_type == ROCE_QPT_UD ? "UD" : "UC", (unsigned long long)res.lost_msgs,
		       conf->qp_type == ROCE_QPT_UD ? "UD" : "UC");
	if (st.impaired != 0)
		printf(" link: %llu frame(s) we sent dropped by --loss/--drop-psn/--drop-nth\n",
		       (unsigned long long)st.impaired);
	if (st.ecn_ce_rcvd != 0 || st.cnp_sent != 0 || st.cnp_rcvd != 0)
		printf(" ECN: %llu CE-marked frame(s) received, %llu CNP(s) sent, %llu CNP(s) "
		       "received\n", (unsigned long long)st.ecn_ce_rcvd,
		       (unsigned long long)st.cnp_sent, (unsigned long long)st.cnp_rcvd);
	if (st.tx_held != 0)
		printf(" port: the NIC waited %llu time(s) for room in the TX queue\n",
		       (unsigned long long)st.tx_held);
	if (st.access_naks_sent != 0 || st.naks_rcvd != 0)
		printf(" NIC: %llu NAK(s) remote access error sent, %llu error NAK(s) received\n",
		       (unsigned long long)st.access_naks_sent, (unsigned long long)st.naks_rcvd);
	if (rc == 0 && perf_print_failures(&res) != 0)
		status = EXIT_FAILURE;
	if (conf->verify && status == EXIT_SUCCESS)
		printf(" verify: every byte and every completion checked: OK\n");
	roce_perf_live_close(ctx);
	return status;
}

int perf_live_main(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		   const struct perf_report_opts *rep)
{
	int client;

	return run_live(conf, live, rep, &client);
}

static volatile int serve_stop;

static void on_stop(int sig)
{
	(void)sig;
	serve_stop = 1;
}

int perf_live_serve(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		    const struct perf_report_opts *rep)
{
	struct roce_perf_live one = *live;
	struct sigaction sa;
	unsigned long served = 0, failed = 0;

	/* the first signal ends the host while it waits for a client, or once the current
	 * client's test is over (bounded by --timeout); SA_RESETHAND: a second one kills */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	one.stop = &serve_stop;
	one.wait_forever = true;
	printf(" host: serving %s clients on %s until SIGINT or SIGTERM\n",
	       live->xchg == ROCE_PERF_XCHG_PINGPONG ? "ibv_*_pingpong" : "perftest",
	       live->dev != NULL ? live->dev : live->ibdev);
	fflush(stdout);
	while (!serve_stop) {
		int client = 0, rc = run_live(conf, &one, rep, &client);

		if (!client) {
			if (serve_stop)
				break;
			/* the port or the listening socket failed: it would fail again */
			printf(" host: stopped on an error; %lu client(s) served, %lu failed\n",
			       served, failed);
			return rc;
		}
		served++;
		if (rc != EXIT_SUCCESS)
			failed++;
		printf(" host: client %lu %s; %lu served, %lu failed\n", served,
		       rc == EXIT_SUCCESS ? "done" : "failed", served, failed);
		fflush(stdout);
	}
	printf(" host: stopped by a signal; %lu client(s) served, %lu failed\n", served, failed);
	return EXIT_SUCCESS;
}

/* The client half of a loopback run: printed as any client's. */
struct loop_print {
	const struct roce_perf_conf *conf;
	const struct perf_report_opts *rep;
};

static int loop_client(void *arg, const struct roce_perf_live *client)
{
	const struct loop_print *lp = arg;

	return perf_live_main(lp->conf, client, lp->rep);
}

int perf_loopback_main(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		       const struct perf_report_opts *rep)
{
	struct loop_print lp = { .conf = conf, .rep = rep };
	char err[256];
	int rc = roce_perf_loopback(conf, live, loop_client, &lp, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "rocelab perf: %s\n", err);
		return rc == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	return rc;
}
