/* rocelab replay: a capture out of a DPDK port, or its requests into an emulated responder. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocelab.h"
#include "roce_capture.h"
#include "roce_file.h"
#include "roce_io.h"
#include "roce_replay.h"

static const char usage[] =
	"usage: rocelab replay FILE.pcap --dev DEVARGS [options]     out of a port\n"
	"       rocelab replay FILE.pcap --responder [options]        into an emulated responder\n"
	"\n"
	"Out of a port (docs/replay.md), as tcpreplay:\n"
	"  --dev DEVARGS         DPDK port: net_af_packet0,iface=veth0, net_tap0,iface=t0,\n"
	"                        net_pcap0,tx_pcap=out.pcap, net_ring0, a PCI address\n"
	"  --speed X             play X times as fast as captured (default 1; 0.5: half speed);\n"
	"                        --multiplier is the same\n"
	"  --topspeed, -t        as fast as the port takes frames\n"
	"  --loop N              play the capture N times (default 1; 0: until interrupted)\n"
	"  --src-mac [OLD=]NEW   rewrite Ethernet sources (all, or only OLD); repeatable\n"
	"  --dst-mac [OLD=]NEW   rewrite Ethernet destinations\n"
	"  --src-ip [OLD=]NEW    rewrite RoCEv2 source addresses (IPv4 or IPv6)\n"
	"  --dst-ip [OLD=]NEW    rewrite RoCEv2 destination addresses\n"
	"  --qpn OLD=NEW         rewrite the BTH destination QP\n"
	"                        IP checksum, UDP checksum (if not 0) and ICRC are recomputed; a\n"
	"                        frame whose ICRC was wrong in FILE stays wrong the same way\n"
	"  --capture FILE        write every frame the port sends and receives (pcap, ns)\n"
	"  --snaplen N           --capture keeps the first N bytes of each frame (14-65535)\n"
	"  --force               let --capture or --pcap replace a file that is not a capture\n"
	"  dpdk-dumpcap can attach with rocelab --eal --pdump replay ... (hugepages; docs/live.md)\n"
	"\n"
	"Into an emulated responder: the RC requests of one responder QP are fed, at their\n"
	"capture times in virtual time, to a rocelab host set up from the capture (QPN, PSN, MTU,\n"
	"memory from the RETHs, rights from the NAKs), and its answers compared with the\n"
	"capture's, frame by frame (opcode, PSN, AETH syndrome and MSN, payload length, payload\n"
	"bytes where known from replayed WRITEs, atomic original values).\n"
	"  --responder           this mode\n"
	"  --responder-ip ADDR   the responder's address (default: destination of the first RC\n"
	"                        request)\n"
	"  --mtu BYTES           path MTU (default: inferred from the capture)\n"
	"  --pcap OUT            write rocelab's answers (with the requests fed) to OUT\n"
	"  -v, --verbose         print every pair, not only those that differ\n"
	"\n"
	"Exit status: 0 done (responder: every response matched); 1 a mismatch, an unreadable\n"
	"or truncated capture, or a port that failed; 2 bad arguments.\n";

enum {
	OPT_DEV = 256, OPT_SPEED, OPT_LOOP, OPT_SMAC, OPT_DMAC, OPT_SIP, OPT_DIP, OPT_QPN,
	OPT_CAPTURE, OPT_RESPONDER, OPT_RESPONDER_IP, OPT_MTU, OPT_PCAP, OPT_FORCE,
	OPT_SNAPLEN,
};

static const struct option long_opts[] = {
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "speed", required_argument, NULL, OPT_SPEED },
	{ "multiplier", required_argument, NULL, OPT_SPEED },
	{ "topspeed", no_argument, NULL, 't' },
	{ "loop", required_argument, NULL, OPT_LOOP },
	{ "src-mac", required_argument, NULL, OPT_SMAC },
	{ "dst-mac", required_argument, NULL, OPT_DMAC },
	{ "src-ip", required_argument, NULL, OPT_SIP },
	{ "dst-ip", required_argument, NULL, OPT_DIP },
	{ "qpn", required_argument, NULL, OPT_QPN },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "snaplen", required_argument, NULL, OPT_SNAPLEN },
	{ "responder", no_argument, NULL, OPT_RESPONDER },
	{ "responder-ip", required_argument, NULL, OPT_RESPONDER_IP },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int run_port(const struct roce_replay_port_conf *conf, const char *capture,
		    uint32_t snaplen)
{
	struct roce_replay_port_stats st;
	struct roce_capture *cap = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[512];
	int rc, status = EXIT_SUCCESS;
	struct roce_replay_port_conf c = *conf;

	if (capture != NULL) {
		cap = roce_capture_open(capture, snaplen, err, sizeof(err));
		if (cap == NULL) {
			rocelab_out_error("replay", "--capture", err, errno);
			return EXIT_FAILURE;
		}
		c.cap = cap;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	c.stop = &stop_flag;
	c.progress = isatty(STDERR_FILENO) ? stderr : NULL;
	rc = roce_replay_port(&c, &st, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "rocelab replay: %s\n", err);
		status = EXIT_FAILURE;
	}
	if (rc == 0 || rc == -EBADMSG) {
		double s = st.seconds;

		printf("replay: %llu frames, %llu bytes sent in %.3f s (%llu pass%s%s): ",
		       (unsigned long long)st.frames, (unsigned long long)st.bytes, s,
		       (unsigned long long)st.loops_done, st.loops_done == 1 ? "" : "es",
		       st.stopped ? ", interrupted" : "");
		if (s > 0)
			printf("%.0f frames/s, %.3f Mb/s", (double)st.frames / s,
			       (double)st.bytes * 8 / s / 1e6);
		else
			printf("rate n/a");
		printf("; %llu dropped (TX queue full after %llu retries)",
		       (unsigned long long)st.dropped, (unsigned long long)st.retries);
		if (conf->rw != NULL)
			printf("; %llu rewritten, %llu not RoCEv2, %llu with a wrong ICRC kept wrong",
			       (unsigned long long)st.rewritten, (unsigned long long)st.not_roce,
			       (unsigned long long)st.bad_icrc_kept);
		if (st.truncated)
			printf("; %llu captured truncated", (unsigned long long)st.truncated);
		if (st.too_big)
			printf("; %llu too big or too short, skipped", (unsigned long long)st.too_big);
		printf("\n");
	}
	if (cap != NULL) {
		struct roce_capture_stats cs;

		roce_capture_stats(cap, &cs);
		if (rc != 0 && cs.tx_frames == 0 && cs.rx_frames == 0) {
			/* the port never ran: no empty capture left behind to mistake for a result,
			 * and a file of that name stays as it was */
			roce_capture_discard(cap);
			return status;
		}
		printf("capture: %s: %llu frames sent, %llu received\n", capture,
		       (unsigned long long)cs.tx_frames, (unsigned long long)cs.rx_frames);
		if (roce_capture_close(cap) != 0) {
			fprintf(stderr, "rocelab replay: --capture: %s: write failed\n", capture);
			status = EXIT_FAILURE;
		}
	}
	return status;
}

static int run_responder(const struct roce_replay_resp_conf *conf)
{
	struct roce_replay_resp_result res;
	char err[512];
	int rc;

	rc = roce_replay_responder(conf, &res, err, sizeof(err));
	if (rc != 0) {
		rocelab_out_error("replay", NULL, err, -rc);	/* -EEXIST: --pcap refused */
		return EXIT_FAILURE;
	}
	return res.differing || res.missing || res.extra ? EXIT_FAILURE : EXIT_SUCCESS;
}

static bool parse_speed(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v <= 0 || v > 1e6)
		return false;
	*out = v;
	return true;
}

static int run(int argc, char **argv)
{
	static const enum roce_rw_field rw_field[] = {
		[OPT_SMAC - OPT_SMAC] = ROCE_RW_SMAC, [OPT_DMAC - OPT_SMAC] = ROCE_RW_DMAC,
		[OPT_SIP - OPT_SMAC] = ROCE_RW_SIP, [OPT_DIP - OPT_SMAC] = ROCE_RW_DIP,
		[OPT_QPN - OPT_SMAC] = ROCE_RW_QPN,
	};
	static struct roce_rewrite rw;
	struct roce_replay_port_conf pc = { .speed = 1, .loops = 1 };
	struct roce_replay_resp_conf rc_conf = { .out = stdout };
	const char *capture = NULL;
	uint32_t snaplen = 0;
	bool responder = false, any_rw = false, port_opt = false;
	char err[256];
	uint64_t v;
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":tvh", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_DEV:
			pc.devargs = optarg;
			break;
		case OPT_SPEED:
			if (!parse_speed(optarg, &pc.speed))
				return rocelab_usage_error("replay", "--speed '%s': expected a number "
							   "above 0 (2: twice as fast)", optarg);
			port_opt = true;
			break;
		case 't':
			pc.topspeed = true;
			port_opt = true;
			break;
		case OPT_LOOP:
			if (rocelab_parse_uint(optarg, UINT32_MAX, &v) != 0)
				return rocelab_usage_error("replay", "--loop '%s': expected a count "
							   "(0: until interrupted)", optarg);
			pc.loops = v;
			port_opt = true;
			break;
		case OPT_SMAC:
		case OPT_DMAC:
		case OPT_SIP:
		case OPT_DIP:
		case OPT_QPN:
			if (roce_rewrite_add(&rw, rw_field[opt - OPT_SMAC], optarg, err,
					     sizeof(err)) != 0)
				return rocelab_usage_error("replay", "%s", err);
			any_rw = true;
			break;
		case OPT_CAPTURE:
			capture = optarg;
			port_opt = true;
			break;
		case OPT_SNAPLEN:
			if (rocelab_parse_uint(optarg, 65535, &v) != 0 || v < 14)
				return rocelab_usage_error("replay", "--snaplen '%s': expected bytes "
							   "from 14 to 65535", optarg);
			snaplen = (uint32_t)v;
			port_opt = true;
			break;
		case OPT_RESPONDER:
			responder = true;
			break;
		case OPT_RESPONDER_IP:
			if (inet_pton(AF_INET, optarg, rc_conf.responder.b) == 1)
				rc_conf.responder_ver = 4;
			else if (inet_pton(AF_INET6, optarg, rc_conf.responder.b) == 1)
				rc_conf.responder_ver = 6;
			else
				return rocelab_usage_error("replay", "--responder-ip '%s': expected an "
							   "IPv4 or IPv6 address", optarg);
			rc_conf.has_responder = true;
			break;
		case OPT_MTU:
			if (rocelab_parse_uint(optarg, 4096, &v) != 0 ||
			    (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096))
				return rocelab_usage_error("replay", "--mtu '%s': expected 256, 512, "
							   "1024, 2048 or 4096", optarg);
			rc_conf.mtu = (uint32_t)v;
			break;
		case OPT_PCAP:
			rc_conf.out_pcap = optarg;
			break;
		case OPT_FORCE:
			roce_out_force = true;
			break;
		case 'v':
			rc_conf.verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return rocelab_usage_error("replay", "option '%s' needs a value", argv[optind - 1]);
		default:
			return rocelab_usage_error("replay", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return rocelab_usage_error("replay", "no capture file given");
	if (optind + 1 < argc)
		return rocelab_usage_error("replay", "one capture file, not '%s' too", argv[optind + 1]);
	if (responder) {
		if (pc.devargs != NULL || port_opt || any_rw)
			return rocelab_usage_error("replay", "--responder runs in virtual time: no "
						   "--dev, timing, rewrite or --capture");
		rc_conf.path = argv[optind];
		if (rc_conf.out_pcap != NULL && rocelab_same_file(rc_conf.path, rc_conf.out_pcap))
			return rocelab_usage_error("replay", "--pcap '%s' is the capture being "
						   "replayed: write to another file",
						   rc_conf.out_pcap);
		return run_responder(&rc_conf);
	}
	if (rc_conf.has_responder || rc_conf.mtu || rc_conf.out_pcap || rc_conf.verbose)
		return rocelab_usage_error("replay", "--responder-ip, --mtu, --pcap and -v go with "
					   "--responder");
	if (pc.devargs == NULL)
		return rocelab_usage_error("replay", "give --dev DEVARGS (out of a port) or "
					   "--responder");
	if (pc.topspeed && pc.speed != 1)
		return rocelab_usage_error("replay", "--speed and --topspeed exclude each other");
	pc.path = argv[optind];
	if (capture != NULL && (strcmp(capture, pc.path) == 0 ||
				rocelab_same_file(pc.path, capture)))
		return rocelab_usage_error("replay", "--capture '%s' is the capture being replayed: "
					   "write to another file", capture);
	if (snaplen != 0 && capture == NULL)
		return rocelab_usage_error("replay", "--snaplen goes with --capture");
	pc.rw = any_rw ? &rw : NULL;
	return run_port(&pc, capture, snaplen);
}

const struct rocelab_cmd cmd_replay = {
	.name = "replay",
	.summary = "play a capture out of a DPDK port, or into an emulated responder",
	.usage = usage,
	.run = run,
	.needs_eal = true,
};
