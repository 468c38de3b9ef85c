/* rocelab perf TEST: perftest's command line and report, on two emulated hosts in virtual time. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd_perf.h"
#include "rocelab.h"
#include "rocelab_config.h"
#include "roce_capture.h"
#include "roce_file.h"
#include "roce_io.h"
#include "roce_perf.h"
#include "roce_transport.h"

#define RESULT_LINE "---------------------------------------------------------------------------------------\n"

static const char usage[] =
	"usage: rocelab perf TEST [options]\n"
	"\n"
	"TEST: write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat\n"
	"      (real time also: rc_pingpong uc_pingpong ud_pingpong, below)\n"
	"Runs perftest's ib_TEST between two emulated hosts joined by a model link, in virtual\n"
	"time; the figures are emulated ones. perftest's options:\n"
	"  -s, --size N          message size (default 65536 for bw, 2 for lat)\n"
	"  -a, --all             every size from 2 to 2^23 (atomics: 8)\n"
	"  -b, --bidirectional   both sides send (real time, bandwidth tests); each side\n"
	"                        reports its own size and iterations with both sides' rates\n"
	"                        summed, as perftest -b\n"
	"  -n, --iters N         iterations per QP, at least 5 as perftest's (default 5000 bw,\n"
	"                        1000 lat)\n"
	"  -D, --duration S      run S seconds of virtual time instead of -n\n"
	"  -q, --qp N            QPs (default 1)\n"
	"  -m, --mtu N           256, 512, 1024, 2048 or 4096 (default 4096)\n"
	"  -c, --connection T    RC, UC or UD (default RC)\n"
	"  -t, --tx-depth N      outstanding sends per QP (default 128 bw, 1 lat)\n"
	"  -r, --rx-depth N      posted receives per QP (default 512)\n"
	"  -u, --qp-timeout N    local ACK timeout exponent: 4.096us*2^N (default 14)\n"
	"  -I, --inline_size N   send messages up to N bytes inline\n"
	"  -A, --atomic_type T   CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
	"  -Q, --cq-mod N        one signaled completion every N sends (default 1)\n"
	"  -o, --outs N          outstanding READs/atomics (default 16)\n"
	"  --report_gbits        report Gb/s instead of MB/s\n"
	"  -N, --noPeak          no peak bandwidth: its column reads 0, as perftest's\n"
	"  -l, --post_list N     N requests per post (bandwidth tests; -n a multiple of N; the\n"
	"                        CQ moderation becomes N unless -Q, which must divide N)\n"
	"  -T, --tos N           IP traffic class byte (DSCP << 2 | ECN, 0-255) of the data\n"
	"                        and its answers; the DSCP picks the priority (docs/transport.md)\n"
	"  -S, --sl N            service level 0-15: kept in the address vector, but a RoCEv2\n"
	"                        frame has no LRH to carry it (the priority comes from -T)\n"
	"  --out_json            also write the set-up and the last row as perftest's JSON to\n"
	"                        perftest_out.json, or to --out_json_file FILE\n"
	"  --report-both         with -b, also this side's and the peer's rows apart (perftest's\n"
	"                        \"Local results\" and \"Remote results\")\n"
	"  --ipv6                perftest's IPv6 GID: in real time, --ip must be IPv6 (the GID\n"
	"                        is --ip's address)\n"
	"  -h, --help            this text;  -V, --version  perftest's version rocelab speaks\n"
	"  (--cpu_util: not measured; rocelab's own cost is on its 'emulator:' line)\n"
	"  (-R, --rdma_cm: perftest's rdma_cm connection set-up, not supported yet)\n"
	"rocelab's own:\n"
	"  --loss P              drop each frame with probability P (both directions)\n"
	"  --drop-psn N          drop the first request carrying PSN N, once\n"
	"  --drop-nth N          drop the Nth frame from the client\n"
	"  --seed N              RNG seed (default 1); same seed, same run\n"
	"  --rate R              link rate, e.g. 100G, 25G, 400M (default 100G)\n"
	"  --delay NS            propagation delay in ns (default 500)\n"
	"  --psn N               first PSN of both sides (e.g. 16777000 to cross the wrap)\n"
	"  --retry-cnt N         retries on timeout/NAK, 0-7 (default 7)\n"
	"  --rnr-retry N         RNR retries, 0-7, 7 = forever (default 7)\n"
	"  --min-rnr-timer N     the wait an RNR NAK asks for, IBA's code 0-31: 1 = 0.01 ms,\n"
	"                        12 = 0.64 ms (default), 31 = 491.52 ms, 0 = 655.36 ms\n"
	"  --recv-delay T        send_bw: the server posts each receive again T (10us, 1ms)\n"
	"                        after it completes, a slow consumer; with few receives (-r)\n"
	"                        the sender meets RNR NAKs and waits (virtual time only)\n"
	"  --pcap FILE           write every frame to FILE\n"
	"  --force               let --pcap or --capture replace a file that is not a capture\n"
	"  --snaplen N           --pcap and --capture keep the first N bytes of each frame\n"
	"                        (14-65535; 128 keeps every header), as tcpdump -s\n"
	"  --trace               print every retry, NAK and timer decision on stderr\n"
	"  --verify              check every byte and completion; exit 1 on any mismatch\n"
	"  --cc ALGO             congestion control on both hosts: none or dcqcn\n"
	"  --cc-param KEY=VALUE  override one of its parameters (repeatable; 'help' lists them)\n"
	"  --ecn                 mark data ECT(0) and answer CE with CNPs, even without --cc\n"
	"\n"
	"Real time, two processes (docs/live.md), used as perftest is:\n"
	"  rocelab perf TEST --dev DEVARGS --ip ADDR [options]          the server\n"
	"  rocelab perf TEST --dev DEVARGS --ip ADDR [options] PEER     the client (PEER: the\n"
	"                                                               server's TCP address)\n"
	"  --dev DEVARGS         DPDK port: net_af_packet0,iface=veth0, net_tap0,iface=t0,\n"
	"                        net_memif0,..., or a PCI address (with --eal '-a ADDR')\n"
	"  --ip ADDR             the emulated host's IPv4 or IPv6 address (its RoCEv2 GID)\n"
	"  -p, --port N          perftest's TCP exchange port (default 18515)\n"
	"  --capture FILE        write every frame the port sends and receives (pcap, ns)\n"
	"  --timeout S           give up after S s without a peer or progress (default 30;\n"
	"                        0: the server waits for a client forever)\n"
	"  -F                    perftest's; accepted and changes nothing\n"
	"  --serve-forever       host mode (server): serve clients one after another until\n"
	"                        SIGINT or SIGTERM; a failed client does not end it\n"
	"  --hello-timeout S     a connected peer must send the exchange's opening (version,\n"
	"                        system data, MTU, first keys) within S s (default 5; 0: only\n"
	"                        --timeout per message): a stalled client frees a host soon\n"
	"  --all-max N           -a's largest size, a power of two from 2 to 8388608 (default);\n"
	"                        in virtual time, with rocelab peers, or as a perftest\n"
	"                        write_bw/read_bw/read_lat server, which follows the client's\n"
	"                        sizes (perftest's own -a always ends at 8388608; UD ends at the\n"
	"                        path MTU)\n"
	"  --bad-rkey            fault injection: advertise a wrong rkey and use a wrong one in\n"
	"                        RDMA requests; a responder answers NAK remote access error\n"
	"  The MTU follows the port's unless -m is given; --rate sets the emulated NIC's line\n"
	"  rate (default: the port's speed); -D counts wall-clock seconds.\n"
	"\n"
	"A real RDMA device through rdma-core (docs/devices.md), as perftest runs on it:\n"
	"  rocelab perf TEST --ibdev DEV [-x GID_INDEX] [-i PORT] [options]    both ends, in\n"
	"                        this process, in loopback through the device\n"
	"  rocelab perf TEST --ibdev DEV --server [options]       the server, for any client\n"
	"  rocelab perf TEST --ibdev DEV [options] PEER           the client of any server\n"
	"  --ibdev DEV, -d DEV   the device (rxe0, mlx5_0: `rocelab devices` lists them)\n"
	"  -x GID_INDEX          its RoCE v2 GID; default: perftest's choice (the first RoCE v2\n"
	"                        IPv4 one; with --ipv6, IPv6)\n"
	"  -i PORT               its port (default 1)\n"
	"  --server              wait for a client instead of running both ends\n"
	"  The peer may be perftest, rocelab on a device, or rocelab emulated (--dev).\n"
	"\n"
	"ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong (rdma-core's examples), real time only:\n"
	"  rocelab perf rc_pingpong|uc_pingpong|ud_pingpong --dev DEVARGS --ip ADDR [PEER]\n"
	"  with their options -p -s -n -m -r -l (SL); -d DEV, -i 1, -g IDX and -e are accepted\n"
	"  and change nothing (the emulated host has one port and one GID, --ip's, and polls).\n";

enum {
	OPT_LOSS = 256, OPT_GBITS, OPT_CAPTURE, OPT_DROP_PSN, OPT_DROP_NTH, OPT_SEED, OPT_RATE, OPT_DELAY, OPT_PSN,
	OPT_RETRY, OPT_RNR, OPT_PCAP, OPT_SNAPLEN, OPT_TRACE, OPT_VERIFY, OPT_CC, OPT_CC_PARAM, OPT_ECN,
	OPT_DEV, OPT_IP, OPT_TIMEOUT, OPT_ODP, OPT_TS, OPT_BAD_RKEY, OPT_SERVE, OPT_ALL_MAX,
	OPT_RECV_DELAY, OPT_MIN_RNR, OPT_FORCE, OPT_HELLO_TIMEOUT, OPT_SL, OPT_POST_LIST,
	OPT_OUT_JSON, OPT_OUT_JSON_FILE, OPT_REPORT_BOTH, OPT_CPU_UTIL, OPT_IPV6, OPT_IBDEV,
	OPT_SERVER,
};

#define MAX_CC_PARAMS 32

static const struct option long_opts[] = {
	{ "size", required_argument, NULL, 's' },
	{ "all", no_argument, NULL, 'a' },
	{ "bidirectional", no_argument, NULL, 'b' },
	{ "all-max", required_argument, NULL, OPT_ALL_MAX },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "qp", required_argument, NULL, 'q' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "connection", required_argument, NULL, 'c' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "rx-depth", required_argument, NULL, 'r' },
	{ "qp-timeout", required_argument, NULL, 'u' },
	{ "inline_size", required_argument, NULL, 'I' },
	{ "atomic_type", required_argument, NULL, 'A' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "outs", required_argument, NULL, 'o' },
	{ "report_gbits", no_argument, NULL, OPT_GBITS },
	{ "rdma_cm", no_argument, NULL, 'R' },
	{ "loss", required_argument, NULL, OPT_LOSS },
	{ "drop-psn", required_argument, NULL, OPT_DROP_PSN },
	{ "drop-nth", required_argument, NULL, OPT_DROP_NTH },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "psn", required_argument, NULL, OPT_PSN },
	{ "retry-cnt", required_argument, NULL, OPT_RETRY },
	{ "rnr-retry", required_argument, NULL, OPT_RNR },
	{ "min-rnr-timer", required_argument, NULL, OPT_MIN_RNR },
	{ "recv-delay", required_argument, NULL, OPT_RECV_DELAY },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "snaplen", required_argument, NULL, OPT_SNAPLEN },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "cc-param", required_argument, NULL, OPT_CC_PARAM },
	{ "ecn", no_argument, NULL, OPT_ECN },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "ibdev", required_argument, NULL, OPT_IBDEV },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "port", required_argument, NULL, 'p' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "bad-rkey", no_argument, NULL, OPT_BAD_RKEY },
	{ "serve-forever", no_argument, NULL, OPT_SERVE },
	{ "hello-timeout", required_argument, NULL, OPT_HELLO_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "noPeak", no_argument, NULL, 'N' },
	{ "tos", required_argument, NULL, 'T' },
	{ "post_list", required_argument, NULL, OPT_POST_LIST },
	{ "out_json", no_argument, NULL, OPT_OUT_JSON },
	{ "out_json_file", required_argument, NULL, OPT_OUT_JSON_FILE },
	{ "report-both", no_argument, NULL, OPT_REPORT_BOTH },
	{ "cpu_util", no_argument, NULL, OPT_CPU_UTIL },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	/* ibv_*_pingpong's own */
	{ "ib-dev", required_argument, NULL, 'd' },
	{ "gid-index", required_argument, NULL, 'x' },
	{ "CPU-freq", no_argument, NULL, 'F' },
	{ "ib-port", required_argument, NULL, 'i' },
	{ "gid-idx", required_argument, NULL, 'g' },
	{ "sl", required_argument, NULL, OPT_SL },	/* perftest's -S, the pingpong's -l */
	{ "events", no_argument, NULL, 'e' },
	{ "odp", no_argument, NULL, OPT_ODP },
	{ "ts", no_argument, NULL, OPT_TS },
	{ NULL, 0, NULL, 0 },
};

/* A whole number in [lo, hi]; false (and a message) otherwise. */
static bool parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;

	if (rocelab_parse_uint(s, hi, &v) != 0 || v < lo) {
		rocelab_usage_error("perf", "%s '%s': expected a whole number from %llu to %llu",
				    opt, s, (unsigned long long)lo, (unsigned long long)hi);
		return false;
	}
	*out = v;
	return true;
}

static bool parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi)) {
		rocelab_usage_error("perf", "%s '%s': expected a number from %g to %g", opt, s, lo, hi);
		return false;
	}
	*out = v;
	return true;
}

/* "10us", "1.5ms", "800ns", "0": a time of at most 10 s. */
static bool parse_time(const char *opt, const char *s, roce_time_t *out)
{
	static const struct { const char *name; double ps; } units[] = {
		{ "ns", 1e3 }, { "us", 1e6 }, { "ms", 1e9 }, { "s", 1e12 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno == 0 && end != s && v == 0 && *end == '\0') {
		*out = 0;
		return true;
	}
	for (size_t i = 0; errno == 0 && end != s && i < ROCE_DIM(units); i++) {
		if (strcmp(end, units[i].name) == 0 && v >= 0 && v * units[i].ps <= 1e13) {
			*out = (roce_time_t)llround(v * units[i].ps);
			return true;
		}
	}
	rocelab_usage_error("perf", "%s '%s': expected a time such as 10us, 1.5ms or 800ns (at "
			    "most 10s)", opt, s);
	return false;
}

/* "100G", "25g", "400M", "1e9": bits per second. */
void perf_print_header(const struct roce_perf_conf *c, bool gbits, bool duplex,
		       const char *device, const char *link)
{
	static const char *const title[] = {
		[ROCE_PERF_WRITE_BW] = "RDMA_Write BW Test", [ROCE_PERF_READ_BW] = "RDMA_Read BW Test",
		[ROCE_PERF_SEND_BW] = "Send BW Test", [ROCE_PERF_ATOMIC_BW] = "Atomic BW Test",
		[ROCE_PERF_WRITE_LAT] = "RDMA_Write Latency Test",
		[ROCE_PERF_READ_LAT] = "RDMA_Read Latency Test",
		[ROCE_PERF_SEND_LAT] = "Send Latency Test",
	};
	const char *conn = c->qp_type == ROCE_QPT_RC ? "RC" : c->qp_type == ROCE_QPT_UC ? "UC" : "UD";

	printf(RESULT_LINE);
	/* perftest -b: "RDMA_Write Bidirectional BW Test" */
	if (duplex)
		printf("                    %.*s Bidirectional%s\n", (int)(strlen(title[c->test]) - 8),
		       title[c->test], title[c->test] + strlen(title[c->test]) - 8);
	else
		printf("                    %s\n", title[c->test]);
	printf(" Dual-port       : OFF\t\tDevice         : %s\n", device);
	printf(" Number of qps   : %u\t\tTransport type : IB\n", c->nqp);
	printf(" Connection type : %s\t\tUsing SRQ      : OFF\n", conn);
	printf(" TX depth        : %u\n", c->tx_depth);
	if (c->post_list > 1)
		printf(" Post List       : %u\n", c->post_list);
	if (!roce_perf_is_lat(c->test))
		printf(" CQ Moderation   : %u\n", c->cq_mod);
	printf(" Mtu             : %u[B]\n", roce_mtu_bytes(c->mtu));
	printf(" Link type       : Ethernet (%s)\n", link);
	printf(" GID index       : 1\n");
	printf(" Max inline data : %u[B]\n", c->inline_size);
	printf(" rdma_cm QPs\t : OFF\n");
	printf(" Data ex. method : Ethernet\n");
	if (c->tos != 0)
		printf(" TOS             : %u\n", c->tos);
	printf(RESULT_LINE);
	if (roce_perf_is_lat(c->test))
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		       "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
		       gbits ? "Gb/sec" : "MB/sec", gbits ? "Gb/sec" : "MB/sec");
}

int perf_print_failures(const struct roce_perf_result *r)
{
	if (r->errors != 0)
		fprintf(stderr, "rocelab perf: %llu completion(s) with errors, first: %s (%s)\n",
			(unsigned long long)r->errors, roce_wc_status_name(r->first_error),
			roce_wc_status_str(r->first_error));
	if (r->verify_failures != 0)
		fprintf(stderr, "rocelab perf: --verify: %llu mismatch(es); first: %s\n",
			(unsigned long long)r->verify_failures, r->verify_msg);
	return r->errors != 0 || r->verify_failures != 0 ? -1 : 0;
}

void perf_print_result(const struct roce_perf_conf *c, const struct roce_perf_result *r,
		       bool gbits)
{
	if (roce_perf_is_lat(c->test)) {
		printf(" %-7u %-10llu     %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t"
		       "%-7.2f\t\t%-7.2f \t\t%-7.2f\n", r->size, (unsigned long long)r->iters,
		       r->lat_min, r->lat_max, r->lat_typical, r->lat_avg, r->lat_stdev, r->lat_p99,
		       r->lat_p999);
	} else {
		double k = gbits ? 1 : 1e9 / 8 / 1048576;	/* perftest's MB is 2^20 bytes */

		printf(" %-7u    %-10llu       %-7.2f            %-7.2f\t\t   %-7.6f\n", r->size,
		       (unsigned long long)r->iters, c->no_peak ? 0 : r->bw_peak_gbps * k,
		       r->bw_avg_gbps * k, r->msg_rate_mpps);
	}
}

/* @p s as a JSON string's contents. */
static void json_str(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

int perf_write_json(const char *path, const struct roce_perf_conf *c,
		    const struct roce_perf_result *r, bool gbits, bool duplex, const char *device)
{
	static const char *const verb[] = {
		[ROCE_PERF_WRITE_BW] = "RDMA_Write", [ROCE_PERF_READ_BW] = "RDMA_Read",
		[ROCE_PERF_SEND_BW] = "Send", [ROCE_PERF_ATOMIC_BW] = "Atomic",
		[ROCE_PERF_WRITE_LAT] = "RDMA_Write", [ROCE_PERF_READ_LAT] = "RDMA_Read",
		[ROCE_PERF_SEND_LAT] = "Send",
	};
	bool lat = roce_perf_is_lat(c->test);
	double k = gbits ? 1 : 1e9 / 8 / 1048576;
	struct roce_out out;
	char err[512];
	FILE *f;

	/* beside PATH, renamed over it: never over a link, a FIFO or a device (roce_file.h) */
	if (roce_out_open(&out, path, 0, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocelab perf: --out_json: %s\n", err);
		return -1;
	}
	f = out.f;
	/* perftest 6.x's write_test_info_to_file() and write_{bw,lat}_report_to_file() */
	fprintf(f, "{\n\"test_info\": {\n\"test\": \"%s_%s%s%s%sTest\",\n", verb[c->test],
		c->test == ROCE_PERF_ATOMIC_BW ? (c->cmp_swap ? "CMP_AND_SWAP_" : "FETCH_AND_ADD_") :
		"", duplex ? "Bidirectional_" : "", c->post_list > 1 ? "Post_List_" : "",
		lat ? "Latency_" : "BW_");
	fprintf(f, "\"Dual_port\": \"OFF\",\n\"Device\": \"");
	json_str(f, device);
	fprintf(f, "\",\n\"Number_of_qps\": %u,\n\"Transport_type\": \"IB\",\n", c->nqp);
	fprintf(f, "\"Connection_type\": \"%s\",\n\"Using_SRQ\": \"OFF\",\n",
		c->qp_type == ROCE_QPT_RC ? "RC" : c->qp_type == ROCE_QPT_UC ? "UC" : "UD");
	fprintf(f, "\"TX_depth\": %u,\n", c->tx_depth);
	if (c->post_list > 1)
		fprintf(f, "\"Post_List\": %u,\n", c->post_list);
	if (!lat)
		fprintf(f, "\"CQ_Moderation\": %u,\n", c->cq_mod);
	fprintf(f, "\"Mtu\": %u,\n\"Link_type\": \"Ethernet\",\n\"GID_index\": 1,\n",
		roce_mtu_bytes(c->mtu));
	fprintf(f, "\"Max_inline_data\": %u,\n", c->inline_size);
	if (c->test == ROCE_PERF_READ_BW || c->test == ROCE_PERF_READ_LAT ||
	    c->test == ROCE_PERF_ATOMIC_BW)
		fprintf(f, "\"Outstand_reads\": %u,\n", c->max_rd_atomic);
	fprintf(f, "\"rdma_cm_QPs\": \"OFF\",\n\"Data_ex_method\": \"Ethernet\"");
	if (c->tos != 0)
		fprintf(f, ",\n\"TOS\": %u", c->tos);
	fprintf(f, "\n},\n\"results\": {\n");
	if (lat)
		fprintf(f, "\"MsgSize\": %u,\n\"n_iterations\": %llu,\n\"t_min\": %.2f,\n"
			"\"t_max\": %.2f,\n\"t_typical\": %.2f,\n\"t_avg\": %.2f,\n\"t_stdev\": %.2f,\n"
			"\"percentile_99\": %.2f,\n\"percentile_99.9\": %.2f\n", r->size,
			(unsigned long long)r->iters, r->lat_min, r->lat_max, r->lat_typical,
			r->lat_avg, r->lat_stdev, r->lat_p99, r->lat_p999);
	else
		fprintf(f, "\"MsgSize\": %u,\n\"n_iterations\": %llu,\n\"BW_peak\": %.2f,\n"
			"\"BW_average\": %.2f,\n\"MsgRate\": %.6f\n", r->size,
			(unsigned long long)r->iters, c->no_peak ? 0 : r->bw_peak_gbps * k,
			r->bw_avg_gbps * k, r->msg_rate_mpps);
	fprintf(f, "}\n}\n");
	if (roce_out_commit(&out, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocelab perf: --out_json: %s\n", err);
		return -1;
	}
	return 0;
}

static void print_emulator(const struct roce_perf_result *r)
{
	double wall = r->wall_sec > 0 ? r->wall_sec : 1e-9;

	printf(" emulator: %.2f Gb/s wall-clock, %.2f M frames/s (%.3f s virtual in %.3f s wall)\n",
	       (double)r->wire_bytes * 8 / wall / 1e9, (double)r->frames / wall / 1e6,
	       r->virtual_sec, r->wall_sec);
	if (r->dropped || r->retransmits || r->timeouts || r->seq_naks || r->rnr_naks)
		printf(" transport: %llu frames lost, %llu retransmitted, %llu sequence NAKs, "
		       "%llu RNR NAKs, %llu timeouts\n", (unsigned long long)r->dropped,
		       (unsigned long long)r->retransmits, (unsigned long long)r->seq_naks,
		       (unsigned long long)r->rnr_naks, (unsigned long long)r->timeouts);
}

/* ibv_*_pingpong as tests of their own: a send ping-pong with the pingpong's exchange. */
static const struct {
	const char *name;
	enum roce_qp_type qp_type;
} pingpongs[] = {
	{ "rc_pingpong", ROCE_QPT_RC },
	{ "uc_pingpong", ROCE_QPT_UC },
	{ "ud_pingpong", ROCE_QPT_UD },
};

/* The pingpong's defaults: 4096 B (UD 2048), 1000 iterations, 500 receives, MTU 1024. */
static void pingpong_defaults(struct roce_perf_conf *conf, struct roce_perf_live *live,
			      enum roce_qp_type qp_type)
{
	roce_perf_defaults(conf, ROCE_PERF_SEND_LAT);
	conf->qp_type = qp_type;
	conf->size = qp_type == ROCE_QPT_UD ? 2048 : 4096;
	conf->iters = 1000;
	conf->rx_depth = 500;
	conf->mtu = ROCE_MTU_1024;
	live->xchg = ROCE_PERF_XCHG_PINGPONG;
	live->mtu_set = true;	/* no MTU is exchanged: both sides must use the same */
}

/* Options of perftest that ibv_*_pingpong does not have (or has with another meaning). */
static bool perftest_only(int opt)
{
	return (opt > 0 && opt < 256 && strchr("abDqctuIAQoRNSTV", opt) != NULL) || opt == OPT_PSN ||
	       opt == OPT_CC || opt == OPT_CC_PARAM || opt == OPT_ECN || opt == OPT_LOSS ||
	       opt == OPT_DROP_PSN || opt == OPT_DROP_NTH || opt == OPT_DELAY || opt == OPT_ALL_MAX ||
	       opt == OPT_POST_LIST || opt == OPT_OUT_JSON || opt == OPT_OUT_JSON_FILE ||
	       opt == OPT_REPORT_BOTH || opt == OPT_CPU_UTIL || opt == OPT_IPV6;
}

/*
 * The test in virtual time, at one size or (-a) at each: one capture holds them all, each size's
 * frames 1 ms after the last one's.
 */
static int perf_virtual(struct roce_perf_conf *conf, bool all, uint32_t all_max,
			const struct perf_report_opts *rep)
{
	static const char device[] = "rocelab0 (emulated, virtual time)";
	bool gbits = rep->gbits;
	uint32_t psn[2][ROCE_PERF_MAX_QP];
	struct roce_perf_result res;
	char link[96], err[512];
	int status = 0;

	if (conf->pcap != NULL) {
		conf->pcap_writer = roce_pcap_create_snap(conf->pcap, conf->snaplen, err, sizeof(err));
		if (conf->pcap_writer == NULL) {
			rocelab_out_error("perf", NULL, err, errno);
			return EXIT_FAILURE;
		}
	}
	snprintf(link, sizeof(link), "model link %.0f Gb/s, %.0f ns", (double)conf->rate_bps / 1e9,
		 (double)conf->delay / ROCE_NS);
	perf_print_header(conf, gbits, false, device, link);
	for (uint32_t size = all ? 2 : conf->size; ; size *= 2) {
		int rc;

		if (all)
			conf->size = conf->test == ROCE_PERF_ATOMIC_BW ? 8 : size;
		if (all && conf->qp_type == ROCE_QPT_UD && size > roce_mtu_bytes(conf->mtu))
			break;
		rc = roce_perf_run(conf, &res);
		if (rc != 0) {
			fflush(stdout);
			fprintf(stderr, "rocelab perf: %s of %u bytes x %u QPs could not run: %s%s\n",
				roce_perf_test_name(conf->test), conf->size, conf->nqp,
				strerror(-rc), rc == -ENOMEM ? " (the buffers of every QP are "
				"allocated up front: fewer QPs or smaller messages)" : "");
			roce_pcap_close_writer(conf->pcap_writer);
			return rc == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
		}
		perf_print_result(conf, &res, gbits);
		fflush(stdout);
		if (perf_print_failures(&res) != 0)
			status = EXIT_FAILURE;
		if (!all || conf->test == ROCE_PERF_ATOMIC_BW || size >= all_max || status != 0)
			break;
		if (conf->pcap_writer != NULL)
			roce_pcap_writer_resume(conf->pcap_writer, ROCE_MS / ROCE_NS);
		/* the next size on the same QPs, as perftest: their PSNs go on, so a capture of
		 * the sizes reads as one flow per QP, not as resends */
		memcpy(psn, res.next_psn, sizeof(psn));
		conf->resume_psn = psn;
	}
	conf->resume_psn = NULL;
	if (rep->json != NULL && perf_write_json(rep->json, conf, &res, gbits, false, device) != 0)
		status = EXIT_FAILURE;
	printf(RESULT_LINE);
	print_emulator(&res);
	if (conf->verify && status == 0)
		printf(" verify: every byte and every completion checked: OK\n");
	if (conf->pcap_writer != NULL) {
		uint64_t at;
		int e;

		roce_pcap_flush_writer(conf->pcap_writer);
		e = roce_pcap_writer_fault(conf->pcap_writer, &at);
		if (e != 0) {
			fflush(stdout);
			fprintf(stderr, "rocelab perf: %s: %s: the capture is cut at or before %.3f us "
				"of virtual time%s\n", conf->pcap, strerror(e), (double)at / 1e3,
				e == ENOSPC ? "; --snaplen 128 keeps only the headers" : "");
			status = EXIT_FAILURE;
		}
		roce_pcap_close_writer(conf->pcap_writer);
		conf->pcap_writer = NULL;
	}
	return status;
}

static int run(int argc, char **argv)
{
	struct roce_perf_conf conf;
	bool all = false, size_set = false;
	const char *cc_params[MAX_CC_PARAMS];
	struct roce_perf_live live = { .timeout = 30, .gid_index = -1 };
	const char *dash_d = NULL;
	uint64_t v;
	double d;
	int test, opt, ncc = 0;
	bool pp = false, serve = false, cq_mod_set = false, ipv6 = false, server = false, real;
	const char *capture = NULL;
	struct perf_report_opts rep = { .gbits = false };

	if (argc < 2 || argv[1][0] == '-')
		return rocelab_usage_error("perf", "no TEST given (write_bw, read_bw, send_bw, "
					   "atomic_bw, write_lat, read_lat, send_lat, rc_pingpong, "
					   "uc_pingpong or ud_pingpong)");
	test = roce_perf_test_by_name(argv[1]);
	for (size_t i = 0; i < ROCE_DIM(pingpongs); i++) {
		if (strcmp(argv[1], pingpongs[i].name) == 0) {
			pingpong_defaults(&conf, &live, pingpongs[i].qp_type);
			test = ROCE_PERF_SEND_LAT;
			pp = true;
		}
	}
	if (test < 0)
		return rocelab_usage_error("perf", "'%s' is not a test (write_bw, read_bw, send_bw, "
					   "atomic_bw, write_lat, read_lat, send_lat, rc_pingpong, "
					   "uc_pingpong or ud_pingpong)", argv[1]);
	if (!pp)
		roce_perf_defaults(&conf, (enum roce_perf_test)test);
	optind = 2;
	opterr = 0;
	live.hello_timeout = ROCE_PERF_HELLO_TIMEOUT;
	while ((opt = getopt_long(argc, argv, pp ? ":p:d:i:s:m:r:n:l:eg:oth" :
				  ":s:abn:D:q:m:c:t:r:u:I:A:Q:o:Rp:d:i:x:FhVNS:T:l:", long_opts,
				  NULL)) != -1) {
		if (pp && (opt == 'o' || opt == 't' || opt == OPT_ODP || opt == OPT_TS))
			return rocelab_usage_error("perf", "'%s' (%s) is not emulated",
						   argv[optind - 1], opt == 't' || opt == OPT_TS ?
						   "completion timestamps" : "on-demand paging");
		if (pp && perftest_only(opt))
			return rocelab_usage_error("perf", "'%s' is not an option of %s",
						   argv[optind - 1], argv[1]);
		if (!pp && opt > 0 && opt < 256 && strchr("ge", opt) != NULL)
			return rocelab_usage_error("perf", "'%s' is an ibv_*_pingpong option, not "
						   "one of %s", argv[optind - 1], argv[1]);
		switch (opt) {
		case 's':
			if (!parse_u64("-s", optarg, 0, 1u << 30, &v))
				return EXIT_USAGE;
			conf.size = (uint32_t)v;
			size_set = true;
			break;
		case 'a':
			all = true;
			break;
		case 'b':
			live.duplex = true;
			break;
		case OPT_ALL_MAX:
			if (!parse_u64("--all-max", optarg, 2, ROCE_PERF_ALL_MAX, &v))
				return EXIT_USAGE;
			if ((v & (v - 1)) != 0)
				return rocelab_usage_error("perf", "--all-max '%s': expected a power of "
							   "two from 2 to %u", optarg, ROCE_PERF_ALL_MAX);
			live.all_max = (uint32_t)v;
			break;
		case 'n':
			/* perftest (MIN_ITER): "Iteration num should be between 5 and ..."; the
			 * pingpongs take any count */
			if (!pp && rocelab_parse_uint(optarg, 1000000000, &v) == 0 && v < 5)
				return rocelab_usage_error("perf", "-n '%s': perftest runs at least 5 "
							   "iterations (\"Iteration num should be "
							   "between 5 and ...\")", optarg);
			if (!parse_u64("-n", optarg, pp ? 1 : 5, 1000000000, &conf.iters))
				return EXIT_USAGE;
			break;
		case 'D':
			if (!parse_double("-D", optarg, 1e-9, 3600, &conf.duration))
				return EXIT_USAGE;
			break;
		case 'q':
			if (!parse_u64("-q", optarg, 1, 64, &v))
				return EXIT_USAGE;
			conf.nqp = (uint32_t)v;
			break;
		case 'm':
			if (!parse_u64("-m", optarg, 256, 4096, &v))
				return EXIT_USAGE;
			conf.mtu = roce_mtu_from_bytes((uint32_t)v);
			live.mtu_set = true;
			if (conf.mtu == 0)
				return rocelab_usage_error("perf", "-m '%s': expected 256, 512, 1024, "
							   "2048 or 4096", optarg);
			break;
		case 'c':
			if (strcasecmp(optarg, "RC") == 0)
				conf.qp_type = ROCE_QPT_RC;
			else if (strcasecmp(optarg, "UC") == 0)
				conf.qp_type = ROCE_QPT_UC;
			else if (strcasecmp(optarg, "UD") == 0)
				conf.qp_type = ROCE_QPT_UD;
			else
				return rocelab_usage_error("perf", "-c '%s': expected RC, UC or UD", optarg);
			break;
		case 't':
			if (!parse_u64("-t", optarg, 1, 16384, &v))
				return EXIT_USAGE;
			conf.tx_depth = (uint32_t)v;
			break;
		case 'r':
			if (!parse_u64("-r", optarg, 1, 16384, &v))
				return EXIT_USAGE;
			conf.rx_depth = (uint32_t)v;
			break;
		case 'u':
			if (!parse_u64("-u", optarg, 0, 31, &v))
				return EXIT_USAGE;
			conf.timeout = (uint8_t)v;
			break;
		case 'I':
			if (!parse_u64("-I", optarg, 0, 1024, &v))
				return EXIT_USAGE;
			conf.inline_size = (uint32_t)v;
			break;
		case 'A':
			if (strcasecmp(optarg, "CMP_AND_SWAP") == 0)
				conf.cmp_swap = true;
			else if (strcasecmp(optarg, "FETCH_AND_ADD") == 0)
				conf.cmp_swap = false;
			else
				return rocelab_usage_error("perf", "-A '%s': expected CMP_AND_SWAP or "
							   "FETCH_AND_ADD", optarg);
			break;
		case 'Q':
			if (!parse_u64("-Q", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			conf.cq_mod = (uint32_t)v;
			cq_mod_set = true;
			break;
		case 'o':
			if (!parse_u64("-o", optarg, 1, 128, &v))
				return EXIT_USAGE;
			conf.max_rd_atomic = (uint32_t)v;
			break;
		case OPT_GBITS:
			rep.gbits = true;
			break;
		case 'R':	/* perftest's -R; rocelab's -R meant --report_gbits until 3 Dec 2026 */
			return rocelab_usage_error("perf", "-R/--rdma_cm (connecting through rdma_cm) "
						   "is not supported yet: rocelab connects through "
						   "perftest's TCP exchange (docs/live.md); for Gb/s, "
						   "--report_gbits");
		case OPT_LOSS:
			if (!parse_double("--loss", optarg, 0, 1, &d))
				return EXIT_USAGE;
			conf.impair.loss = conf.impair_back.loss = d;
			break;
		case OPT_DROP_PSN:
			if (!parse_u64("--drop-psn", optarg, 0, 0xffffff, &v))
				return EXIT_USAGE;
			conf.impair.drop_psn = (uint32_t)v;
			conf.impair.drop_psn_on = true;
			break;
		case OPT_DROP_NTH:
			if (!parse_u64("--drop-nth", optarg, 1, UINT64_MAX, &conf.impair.drop_nth))
				return EXIT_USAGE;
			break;
		case OPT_SEED:
			if (!parse_u64("--seed", optarg, 0, UINT64_MAX, &conf.seed))
				return EXIT_USAGE;
			break;
		case OPT_RATE:
			if (!rocelab_parse_rate("perf", optarg, &conf.rate_bps))
				return EXIT_USAGE;
			live.rate_bps = conf.rate_bps;
			break;
		case OPT_DELAY:
			if (!parse_u64("--delay", optarg, 0, 1000000000, &v))
				return EXIT_USAGE;
			conf.delay = v * ROCE_NS;
			break;
		case OPT_MIN_RNR:
			if (!parse_u64("--min-rnr-timer", optarg, 0, 31, &v))
				return EXIT_USAGE;
			conf.min_rnr_timer = (uint8_t)v;
			break;
		case OPT_RECV_DELAY:
			if (!parse_time("--recv-delay", optarg, &conf.recv_delay))
				return EXIT_USAGE;
			break;
		case OPT_PSN:
			if (!parse_u64("--psn", optarg, 0, 0xffffff, &v))
				return EXIT_USAGE;
			conf.first_psn = (uint32_t)v;
			break;
		case OPT_RETRY:
			if (!parse_u64("--retry-cnt", optarg, 0, 7, &v))
				return EXIT_USAGE;
			conf.retry_cnt = (uint8_t)v;
			break;
		case OPT_RNR:
			if (!parse_u64("--rnr-retry", optarg, 0, 7, &v))
				return EXIT_USAGE;
			conf.rnr_retry = (uint8_t)v;
			break;
		case OPT_PCAP:
			conf.pcap = optarg;
			break;
		case OPT_FORCE:
			roce_out_force = true;
			break;
		case OPT_SNAPLEN:
			if (!parse_u64("--snaplen", optarg, 14, 65535, &v))
				return EXIT_USAGE;
			conf.snaplen = (uint32_t)v;
			break;
		case OPT_TRACE:
			conf.trace = stderr;
			break;
		case OPT_VERIFY:
			conf.verify = true;
			break;
		case OPT_CC:
			conf.cc = optarg;
			break;
		case OPT_CC_PARAM:
			if (strcmp(optarg, "help") == 0) {
				roce_cc_describe(conf.cc != NULL ? conf.cc : "dcqcn", stdout);
				return EXIT_SUCCESS;
			}
			if (ncc >= MAX_CC_PARAMS)
				return rocelab_usage_error("perf", "--cc-param: at most %d", MAX_CC_PARAMS);
			cc_params[ncc++] = optarg;
			conf.cc_params = cc_params;
			conf.ncc_params = ncc;
			break;
		case OPT_ECN:
			conf.ecn = true;
			break;
		case OPT_DEV:
			live.dev = optarg;
			break;
		case OPT_CAPTURE:	/* created once every argument is known good */
			capture = optarg;
			break;
		case OPT_IP:
			memset(&live.ip, 0, sizeof(live.ip));
			if (inet_pton(AF_INET, optarg, live.ip.b) == 1)
				live.ip_ver = 4;
			else if (inet_pton(AF_INET6, optarg, live.ip.b) == 1)
				live.ip_ver = 6;
			else
				return rocelab_usage_error("perf", "--ip '%s': expected an IPv4 or IPv6 "
							   "address", optarg);
			break;
		case 'p':
			if (!parse_u64("-p", optarg, 1, 65535, &v))
				return EXIT_USAGE;
			live.tcp_port = (uint16_t)v;
			break;
		case OPT_TIMEOUT:
			if (!parse_double("--timeout", optarg, 0, 86400, &live.timeout))
				return EXIT_USAGE;
			break;
		case OPT_BAD_RKEY:
			live.bad_rkey = true;
			break;
		case OPT_SERVE:
			serve = true;
			break;
		case 'x':	/* perftest's GID index (a real device's; the emulated host has one) */
			if (pp)
				return rocelab_usage_error("perf", "'%s' is a perftest option, not one "
							   "of %s", argv[optind - 1], argv[1]);
			if (!parse_u64("-x", optarg, 0, 255, &v))
				return EXIT_USAGE;
			live.gid_index = (int)v;
			break;
		case 'F':	/* perftest: do not fail on a CPU frequency warning */
			if (pp)
				return rocelab_usage_error("perf", "'%s' is a perftest option, not one "
							   "of %s", argv[optind - 1], argv[1]);
			break;
		case 'd':	/* perftest's device: a real one, unless --dev gives the port */
			dash_d = optarg;
			break;
		case OPT_IBDEV:
			live.ibdev = optarg;
			break;
		case OPT_SERVER:
			server = true;
			break;
		case 'g':	/* its GID index: the emulated host has one GID, --ip's */
		case 'e':	/* sleep on CQ events: rocelab polls */
			break;
		case 'i':
			if (!parse_u64("-i", optarg, 1, 255, &v))
				return EXIT_USAGE;
			live.ib_port = (uint8_t)v;
			break;
		case 'l':
			if (!pp) {	/* perftest's -l: --post_list */
				if (!parse_u64("-l", optarg, 1, 16384, &v))
					return EXIT_USAGE;
				conf.post_list = (uint32_t)v;
				break;
			}
			/* the pingpong's -l is the SL */
			/* fall through */
		case OPT_SL:
		case 'S':
			if (!parse_u64(opt == 'S' ? "-S" : opt == 'l' ? "-l" : "--sl", optarg, 0, 15, &v))
				return EXIT_USAGE;
			live.sl = (uint8_t)v;	/* RoCEv2 has no LRH: no SL on the wire */
			break;
		case OPT_POST_LIST:
			if (!parse_u64("--post_list", optarg, 1, 16384, &v))
				return EXIT_USAGE;
			conf.post_list = (uint32_t)v;
			break;
		case 'T':
			if (!parse_u64("-T", optarg, 0, 255, &v))
				return EXIT_USAGE;
			conf.tos = (uint8_t)v;
			break;
		case 'N':
			conf.no_peak = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_SUCCESS;
		case 'V':	/* perftest: "Version: 6.06"; rocelab speaks that version's exchange */
			printf("Version: %s (rocelab %s)\n", ROCE_PERF_VERSION, ROCELAB_VERSION);
			return EXIT_SUCCESS;
		case OPT_HELLO_TIMEOUT:
			if (!parse_double("--hello-timeout", optarg, 0, 86400, &live.hello_timeout))
				return EXIT_USAGE;
			break;
		case OPT_OUT_JSON:
			rep.json = PERF_JSON_FILE;
			break;
		case OPT_OUT_JSON_FILE:
			rep.json_file = optarg;
			break;
		case OPT_REPORT_BOTH:
			rep.both = true;
			break;
		case OPT_IPV6:
			ipv6 = true;
			break;
		case OPT_CPU_UTIL:
			return rocelab_usage_error("perf", "--cpu_util: rocelab does not measure CPU "
						   "utilisation (perftest's reads the whole machine's "
						   "/proc/stat; the emulator's own cost is on its "
						   "'emulator:' line)");
		case OPT_ODP:
		case OPT_TS:
			return rocelab_usage_error("perf", "unknown option '%s'", argv[optind - 1]);
		case ':':
			return rocelab_usage_error("perf", "option '%s' needs a value", argv[optind - 1]);
		default:
			return rocelab_usage_error("perf", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (rep.json_file != NULL && rep.json == NULL)
		return rocelab_usage_error("perf", "--out_json_file goes with --out_json");
	if (rep.json_file != NULL)
		rep.json = rep.json_file;
	if (rep.json != NULL) {
		char jerr[512];
		int jrc = roce_out_check(rep.json, 0, jerr, sizeof(jerr));

		/* refused before the run, not after it */
		if (jrc != 0) {
			rocelab_out_error("perf", "--out_json", jerr, -jrc);
			return EXIT_FAILURE;
		}
	}
	if (conf.post_list > 1) {
		/* perftest's rules (force_dependecies()) */
		if (roce_perf_is_lat(conf.test))
			return rocelab_usage_error("perf", "-l/--post_list: post lists are for the "
						   "bandwidth tests (perftest: \"Post list is supported "
						   "in BW tests only\")");
		if (conf.duration == 0 && conf.iters % conf.post_list != 0)
			return rocelab_usage_error("perf", "-n %llu is not a multiple of the post "
						   "list size %u (perftest: \"Number of iterations must "
						   "be a multiple of post list size\")",
						   (unsigned long long)conf.iters, conf.post_list);
		if (cq_mod_set && conf.post_list % conf.cq_mod != 0)
			return rocelab_usage_error("perf", "-l %u is not a multiple of -Q %u "
						   "(perftest: \"Post list size must be a multiple of "
						   "CQ moderation\")", conf.post_list, conf.cq_mod);
		if (!cq_mod_set)
			conf.cq_mod = conf.post_list;	/* perftest: CQ moderation = post list */
	}
	if (live.ibdev == NULL && live.dev == NULL && !pp)
		live.ibdev = dash_d;	/* as perftest's -d: the device */
	if (live.ibdev != NULL && live.dev != NULL)
		return rocelab_usage_error("perf", "--ibdev and --dev: one or the other (a real "
					   "device, or the emulated host on a DPDK port)");
	if (live.ibdev != NULL && pp)
		return rocelab_usage_error("perf", "%s on a real device: run rdma-core's own "
					   "ibv_%s", argv[1], argv[1]);
	real = live.dev != NULL || live.ibdev != NULL;
	if (optind < argc && real && optind + 1 == argc)
		live.peer = argv[optind++];
	if (optind < argc)
		return rocelab_usage_error("perf", "unexpected argument '%s' (the two sides run in "
					   "this process; a PEER comes with --dev or --ibdev)",
					   argv[optind]);
	if (live.ibdev == NULL && live.gid_index >= 0)
		return rocelab_usage_error("perf", "-x picks a real device's GID: give --ibdev (the "
					   "emulated host's GID is --ip's address)");
	if (live.ibdev == NULL && live.ib_port > 1)
		return rocelab_usage_error("perf", "-i %u: the emulated host has one port",
					   live.ib_port);
	if (server && (live.ibdev == NULL || live.peer != NULL))
		return rocelab_usage_error("perf", "--server goes with --ibdev and no PEER (with "
					   "--dev, no PEER already means the server)");
	if (live.ibdev != NULL && live.ip_ver != 0)
		return rocelab_usage_error("perf", "--ip: a real device's address is its GID's "
					   "(-x)");
	if (live.ibdev != NULL && ipv6)
		live.ip_ver = 6;	/* the GID perftest would pick: the first IPv6 one */
	else if ((live.dev != NULL) != (live.ip_ver != 0))
		return rocelab_usage_error("perf", "--dev and --ip go together: the port and the "
					   "emulated host's address on it");
	if (ipv6 && !real)
		return rocelab_usage_error("perf", "--ipv6: in virtual time the emulated hosts have "
					   "IPv4 GIDs; in real time --ip takes an IPv6 address");
	if (ipv6 && live.ip_ver != 6 && live.ibdev == NULL)
		return rocelab_usage_error("perf", "--ipv6: --ip is IPv4, and the emulated host's "
					   "GID is --ip's address: give an IPv6 one");
	if (live.all_max != 0 && !all)
		return rocelab_usage_error("perf", "--all-max goes with -a");
	if (conf.recv_delay > 0 && real)
		return rocelab_usage_error("perf", "--recv-delay runs in virtual time only (the "
					   "application's pace is the real one in real time)");
	if (live.duplex && !real)
		return rocelab_usage_error("perf", "-b runs in real time only: give --dev and --ip "
					   "(docs/live.md), or --ibdev");
	live.all = real && all;
	if (real) {
		char err[160];

		if (roce_perf_live_check(&conf, &live, err, sizeof(err)) != 0)
			return rocelab_usage_error("perf", "%s", err);
	}
	if (all && !size_set)	/* -a starts at 2 bytes (UD: the default 64 KiB exceeds the MTU) */
		conf.size = conf.test == ROCE_PERF_ATOMIC_BW ? 8 : 2;
	if (conf.test == ROCE_PERF_ATOMIC_BW && size_set && conf.size != 8)
		return rocelab_usage_error("perf", "-s %u: atomics are 8 bytes", conf.size);

	{
		char err[160];

		if (roce_perf_check(&conf, err, sizeof(err)) != 0)
			return rocelab_usage_error("perf", "%s", err);
	}
	if (live.bad_rkey && (live.dev == NULL || pp || conf.test == ROCE_PERF_SEND_BW ||
			      conf.test == ROCE_PERF_SEND_LAT))
		return rocelab_usage_error("perf", "--bad-rkey needs --dev and a test that uses "
					   "rkeys (write, read or atomic)");
	if (serve && (!real || live.peer != NULL))
		return rocelab_usage_error("perf", "--serve-forever is for a server: --dev and --ip "
					   "(or --ibdev), no PEER");
	if (pp && live.dev == NULL)
		return rocelab_usage_error("perf", "%s runs in real time only: give --dev and --ip "
					   "(docs/live.md)", argv[1]);
	/* a real device needs no DPDK: everything else runs on the EAL's mbufs and ports */
	if (live.ibdev == NULL && rocelab_eal_start() != 0)
		return EXIT_FAILURE;
	if (conf.snaplen != 0 && conf.pcap == NULL && capture == NULL)
		return rocelab_usage_error("perf", "--snaplen goes with --pcap or --capture");
	if (capture != NULL) {
		char cerr[512];
		int rc;

		if (live.dev == NULL)
			return rocelab_usage_error("perf", "--capture is the real port's capture: "
						   "give --dev (in virtual time, --pcap FILE)");
		rc = roce_capture_all_ports(capture, conf.snaplen, cerr, sizeof(cerr));
		if (rc == -EBUSY)
			return rocelab_usage_error("perf", "--capture: %s", cerr);
		if (rc != 0) {	/* refused, or cannot be created: as --pcap's */
			rocelab_out_error("perf", "--capture", cerr, -rc);
			return EXIT_FAILURE;
		}
	}
	if (live.ibdev != NULL && live.peer == NULL && !server && !serve)
		return perf_loopback_main(&conf, &live, &rep);
	if (real)
		return serve ? perf_live_serve(&conf, &live, &rep) : perf_live_main(&conf, &live, &rep);
	return perf_virtual(&conf, all, live.all_max ? live.all_max : ROCE_PERF_ALL_MAX, &rep);
}

const struct rocelab_cmd cmd_perf = {
	.name = "perf",
	.summary = "perftest's tests (write_bw, read_lat, ...) on two emulated hosts",
	.usage = usage,
	.run = run,
	.needs_eal = false,	/* run() starts it, but for --ibdev */
};
