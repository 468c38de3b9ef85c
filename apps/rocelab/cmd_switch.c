/* rocelab switch: the fabric switch between DPDK ports in real time. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocelab.h"
#include "roce_file.h"
#include "roce_io.h"
#include "roce_live.h"

static const char usage[] =
	"usage: rocelab switch --port DEVARGS --port DEVARGS [...] [options]\n"
	"\n"
	"The fabric switch (docs/fabric.md) between DPDK ports in real time (docs/live.md): egress\n"
	"queues per priority at --rate, a shared buffer, PFC XOFF/XON sent as 802.1Qbb frames and\n"
	"received ones honoured, RED/ECN marking, strict and DWRR scheduling, for the RoCEv2\n"
	"traffic of any endpoints. IP frames to addresses learned as sources on a port (or\n"
	"--route) cross the switch; ARP, neighbour discovery, broadcast, multicast and unknown\n"
	"destinations are flooded to the other ports, as a learning bridge does. MACs are kept;\n"
	"the IP TTL is decremented; TCP/UDP checksums left to offload by the sender are completed.\n"
	"\n"
	"  --port DEVARGS        a port: net_af_packet0,iface=veth0, net_memif0,role=server,...,\n"
	"                        net_tap0,iface=t0, a PCI address; 2 to 16 of them, numbered from 0\n"
	"  --rate RATE           egress rate of every port: 100G, 2.5G, 400M (default: each port's\n"
	"                        link speed)\n"
	"  --set KEY=VALUE       a switch setting with the keys of a scenario's [switch] and\n"
	"                        [priority.N] sections: buffer=12M (default), cell=1536\n"
	"                        (default: buffer / 8192), headroom=2M (default), reserved=4K,\n"
	"                        pfc=dynamic|static|off, xoff=256K, alpha=0.125, xon_delta=3K,\n"
	"                        quanta=65535, watchdog=10ms,\n"
	"                        trust_pcp=yes, priority.N.lossless=yes, priority.N.ecn=yes,\n"
	"                        priority.N.kmin=100K, .kmax=400K, .pmax=0.2, .strict, .weight;\n"
	"                        priority = DSCP >> 3; by default priority 3 is lossless with ECN\n"
	"  --route PREFIX=PORT   frames for PREFIX (10.0.0.0/24, 2001:db8::/64, an address) leave\n"
	"                        by PORT; repeatable\n"
	"  --loss P              drop each RoCE frame arriving with probability P (0..1)\n"
	"  --drop-psn N          drop the first RoCE request with PSN N (once); repeatable\n"
	"  --capture FILE        write every frame every port receives and sends (pcap, ns)\n"
	"  --snaplen N           --capture keeps the first N bytes of each frame (14-65535;\n"
	"                        128 keeps every header), as tcpdump -s\n"
	"  --force               let --capture replace a file that is not a capture\n"
	"  --duration S          stop after S seconds (default: at SIGINT or SIGTERM)\n"
	"  --seed N              the RNG of --loss and ECN marking (default 1)\n"
	"\n"
	"At the end it prints each port's counters as ethtool -S does: frames and bytes, flooded,\n"
	"learned, drops by reason, PFC frames and pauses sent and received, ECN marks, the\n"
	"deepest queue, per priority that saw traffic.\n"
	"\n"
	"Exit status: 0 stopped by a signal or --duration; 1 a port failed; 2 bad arguments.\n";

enum {
	OPT_PORT = 256, OPT_RATE, OPT_SET, OPT_ROUTE, OPT_LOSS, OPT_DROP_PSN, OPT_CAPTURE, OPT_SNAPLEN,
	OPT_DURATION, OPT_SEED, OPT_FORCE,
};

static const struct option long_opts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "set", required_argument, NULL, OPT_SET },
	{ "route", required_argument, NULL, OPT_ROUTE },
	{ "loss", required_argument, NULL, OPT_LOSS },
	{ "drop-psn", required_argument, NULL, OPT_DROP_PSN },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "snaplen", required_argument, NULL, OPT_SNAPLEN },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ NULL, 0, NULL, 0 },
};

/* A --route, parsed. */
struct route_arg {
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t plen;			/* prefix length (an address alone: 32 or 128) */
	struct roce_ip_addr dst;	/* the prefix */
	uint16_t port;			/* egress port index */
	const char *text;		/* as given, for messages */
};

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

/* "PREFIX[/LEN]=PORT" */
static bool parse_route(const char *s, struct route_arg *r)
{
	char buf[128], *eq, *slash;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	eq = strrchr(buf, '=');
	if (eq == NULL || rocelab_parse_uint(eq + 1, ROCE_LIVE_MAX_PORTS - 1, &v) != 0)
		return false;
	*eq = '\0';
	r->port = (uint16_t)v;
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	memset(&r->dst, 0, sizeof(r->dst));
	if (inet_pton(AF_INET, buf, r->dst.b) == 1)
		r->ip_ver = 4;
	else if (inet_pton(AF_INET6, buf, r->dst.b) == 1)
		r->ip_ver = 6;
	else
		return false;
	r->plen = r->ip_ver == 4 ? 32 : 128;
	if (slash != NULL) {
		if (rocelab_parse_uint(slash + 1, r->plen, &v) != 0)
			return false;
		r->plen = (uint8_t)v;
	}
	r->text = s;
	return true;
}

static int run(int argc, char **argv)
{
	const char *ports[ROCE_LIVE_MAX_PORTS];
	const char **sets = calloc((size_t)argc, sizeof(*sets));
	struct route_arg routes[ROCE_LIVE_MAX_ROUTES];
	uint32_t psns[ROCE_LIVE_MAX_DROP_PSN];
	struct roce_live_conf conf = { .devargs = ports, .seed = 1 };
	struct roce_live_switch *ls;
	struct sigaction sa;
	roce_time_t duration = ROCE_TIME_NEVER;
	int nsets = 0, nroutes = 0, opt, e, rc = EXIT_USAGE;
	char err[512];
	double d;
	uint64_t v;

	if (sets == NULL)
		return EXIT_FAILURE;
	roce_live_defaults(&conf.sw);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PORT:
			if (conf.nports == ROCE_LIVE_MAX_PORTS) {
				rocelab_usage_error("switch", "at most %d --port", ROCE_LIVE_MAX_PORTS);
				goto out;
			}
			ports[conf.nports++] = optarg;
			break;
		case OPT_RATE:
			if (!rocelab_parse_rate("switch", optarg, &conf.rate_bps))
				goto out;
			break;
		case OPT_SET:
			sets[nsets++] = optarg;
			break;
		case OPT_ROUTE:
			if (nroutes == ROCE_LIVE_MAX_ROUTES) {
				rocelab_usage_error("switch", "at most %d --route", ROCE_LIVE_MAX_ROUTES);
				goto out;
			}
			if (!parse_route(optarg, &routes[nroutes])) {
				rocelab_usage_error("switch", "--route '%s': expected PREFIX[/LEN]=PORT, "
						    "e.g. 10.0.0.0/24=1 or 2001:db8::/64=0", optarg);
				goto out;
			}
			nroutes++;
			break;
		case OPT_LOSS:
			if (!parse_double(optarg, 0, 1, &conf.loss)) {
				rocelab_usage_error("switch", "--loss '%s': expected a probability from "
						    "0 to 1", optarg);
				goto out;
			}
			break;
		case OPT_DROP_PSN:
			if (conf.ndrop_psn == ROCE_LIVE_MAX_DROP_PSN ||
			    rocelab_parse_uint(optarg, 0xffffff, &v) != 0) {
				rocelab_usage_error("switch", "--drop-psn '%s': expected a PSN from 0 "
						    "to 0xffffff (at most %d of them)", optarg,
						    ROCE_LIVE_MAX_DROP_PSN);
				goto out;
			}
			psns[conf.ndrop_psn++] = (uint32_t)v;
			break;
		case OPT_CAPTURE:
			conf.capture = optarg;
			break;
		case OPT_FORCE:
			roce_out_force = true;
			break;
		case OPT_SNAPLEN:
			if (rocelab_parse_uint(optarg, 65535, &v) != 0 || v < 14) {
				rocelab_usage_error("switch", "--snaplen '%s': expected bytes from 14 "
						    "to 65535", optarg);
				goto out;
			}
			conf.snaplen = (uint32_t)v;
			break;
		case OPT_DURATION:
			if (!parse_double(optarg, 0.001, 1e7, &d)) {
				rocelab_usage_error("switch", "--duration '%s': expected seconds "
						    "(0.001 to 1e7)", optarg);
				goto out;
			}
			duration = (roce_time_t)(d * (double)ROCE_SEC);
			break;
		case OPT_SEED:
			if (rocelab_parse_uint(optarg, UINT64_MAX, &conf.seed) != 0) {
				rocelab_usage_error("switch", "--seed '%s': expected a whole number",
						    optarg);
				goto out;
			}
			break;
		default:
			rocelab_usage_error("switch", "unknown or incomplete option '%s'",
					    argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		rocelab_usage_error("switch", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (conf.snaplen != 0 && conf.capture == NULL) {
		rocelab_usage_error("switch", "--snaplen goes with --capture");
		goto out;
	}
	if (conf.nports < 2) {
		rocelab_usage_error("switch", "give at least two ports (--port DEVARGS, twice)");
		goto out;
	}
	for (int i = 0; i < conf.nports; i++)
		for (int j = 0; j < i; j++) {
			size_t a = strcspn(ports[i], ","), b = strcspn(ports[j], ",");

			/* the device name before its arguments: one device is one port */
			if (a == b && strncmp(ports[i], ports[j], a) == 0) {
				rocelab_usage_error("switch", "--port '%.*s' is given twice (ports %d "
						    "and %d)", (int)a, ports[i], j, i);
				goto out;
			}
		}
	for (int i = 0; i < nroutes; i++) {
		if (routes[i].port >= conf.nports) {
			rocelab_usage_error("switch", "--route '%s': there is no port %u (ports 0 to %d)",
					    routes[i].text, routes[i].port, conf.nports - 1);
			goto out;
		}
		for (int j = 0; j < i; j++)
			if (routes[j].ip_ver == routes[i].ip_ver && routes[j].plen == routes[i].plen &&
			    memcmp(&routes[j].dst, &routes[i].dst, sizeof(routes[i].dst)) == 0 &&
			    routes[j].port != routes[i].port) {
				rocelab_usage_error("switch", "--route '%s' and '%s' send one prefix to "
						    "two ports", routes[j].text, routes[i].text);
				goto out;
			}
	}
	if (roce_live_set(&conf.sw, sets, nsets, err, sizeof(err)) != 0) {
		rocelab_usage_error("switch", "%s", err);
		goto out;
	}
	conf.drop_psn = psns;
	ls = roce_live_open(&conf, err, sizeof(err));
	if (ls == NULL) {
		/*
		 * a port that cannot be probed is a bad --port: a usage error; a --capture
		 * refused (the line starts with its name) may point to --force
		 */
		e = errno;
		rocelab_out_error("switch", NULL, err, conf.capture != NULL &&
				  strncmp(err, conf.capture, strlen(conf.capture)) == 0 ? e : 0);
		rc = e == EINVAL ? EXIT_USAGE : EXIT_FAILURE;
		goto out;
	}
	for (int i = 0; i < nroutes; i++) {
		if (roce_live_add_route(ls, routes[i].ip_ver, &routes[i].dst, routes[i].plen,
					routes[i].port) != 0) {
			rocelab_usage_error("switch", "--route '%s': cannot be added", routes[i].text);
			roce_live_close(ls);
			goto out;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("rocelab switch: %d ports, forwarding until %s\n", conf.nports,
	       duration == ROCE_TIME_NEVER ? "SIGINT or SIGTERM" : "--duration");
	fflush(stdout);
	roce_live_run(ls, duration, &stop_flag);
	printf("rocelab switch: stopped (%s)\n", stop_flag ? "signal" : "--duration");
	roce_live_print(ls, stdout);
	fflush(stdout);
	roce_live_close(ls);
	rc = 0;
out:
	free(sets);
	return rc;
}

const struct rocelab_cmd cmd_switch = {
	.name = "switch",
	.summary = "the fabric switch between DPDK ports in real time (PFC, ECN, queues)",
	.usage = usage,
	.run = run,
	.needs_eal = true,
};
