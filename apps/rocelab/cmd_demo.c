/* rocelab demo: the embedded tour, four steps measured side by side (lib/fabric/fab_demo.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocelab.h"
#include "roce_fabric.h"

static const char usage[] =
	"usage: rocelab demo [--out DIR] [--seed N] [--quick]\n"
	"\n"
	"A tour in four steps, each run in rocelab's emulated fabric and measured side by side:\n"
	"  1. zero copy: an RDMA WRITE against a kernel TCP path model that does its four copies\n"
	"  2. lossless against lossy: the same transfer with PFC, and without it at 1e-5 to 1e-3 loss\n"
	"  3. an 8:1 incast with a victim flow: PFC alone against PFC with ECN and DCQCN\n"
	"  4. troubleshooting a link degraded from 100G to 40G, from the switch counters\n"
	"Tables go to the terminal; report.html (charts and tables) and the captures of each\n"
	"step go to DIR. The scenarios are built in: `rocelab run demo-incast` runs one alone.\n"
	"\n"
	"  --out DIR   where to write (default: rocelab-demo); created if missing\n"
	"  --seed N    the engine's seed (default 1)\n"
	"  --quick     smaller transfers\n";

static const struct option long_opts[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "seed", required_argument, NULL, 's' },
	{ "quick", no_argument, NULL, 'k' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int run(int argc, char **argv)
{
	struct roce_demo_conf conf = { .out_dir = "rocelab-demo", .out = stdout, .seed = 1 };
	struct roce_demo_result res;
	char err[512];
	int opt;

	optind = 1;
	opterr = 0;	/* one line of our own names the bad option */
	while ((opt = getopt_long(argc, argv, "o:s:kh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (optarg[0] == '\0')
				return rocelab_usage_error(argv[0], "--out needs a directory name");
			conf.out_dir = optarg;
			break;
		case 's':
			if (rocelab_parse_uint(optarg, UINT64_MAX, &conf.seed) != 0)
				return rocelab_usage_error(argv[0], "--seed wants a whole number from "
							   "0, got '%s'", optarg);
			break;
		case 'k':
			conf.quick = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_SUCCESS;
		default:
			return rocelab_usage_error(argv[0], "unknown option or missing value: '%s'",
						   argv[optind - 1]);
		}
	}
	if (optind != argc)
		return rocelab_usage_error(argv[0], "takes no arguments, got '%s'", argv[optind]);
	if (rocelab_mkdir_p(conf.out_dir) != 0) {
		fprintf(stderr, "rocelab demo: cannot create %s: %s\n", conf.out_dir, strerror(errno));
		return EXIT_FAILURE;
	}
	printf("rocelab demo: RDMA over Converged Ethernet, run and measured in four steps\n\n");
	if (roce_demo_run(&conf, &res, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocelab demo: %s\n", err);
		return EXIT_FAILURE;
	}
	printf("The charts and these tables: %s/report.html (open it in a browser).\n"
	       "The frames of every step: %s/*.pcap (rocelab dissect, Wireshark).\n",
	       conf.out_dir, conf.out_dir);
	return EXIT_SUCCESS;
}

const struct rocelab_cmd cmd_demo = {
	.name = "demo",
	.summary = "the tour: zero copy, lossless vs lossy, incast with PFC vs DCQCN, a degraded link",
	.usage = usage,
	.run = run,
	.needs_eal = true,
};
