/* rocelab learn: the lessons RDMA is taught with, each run and measured (lib/learn). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocelab.h"
#include "roce_learn.h"

static const char usage[] =
	"usage: rocelab learn [LESSON ...|all] [--out DIR] [--quick] [--seed N]\n"
	"\n"
	"Lessons that run what they teach: each measures it in rocelab's emulator, prints a table\n"
	"and writes DIR/LESSON.html with its pictures (and the pictures as SVG files); with more\n"
	"than one lesson, DIR/index.html links their pages.\n"
	"Without a lesson, lists them. Also taught by running:\n"
	"  zero copy (TCP: 4 copies, 2 by CPU; RDMA: 2 DMAs) rocelab demo, step 1\n"
	"  lossless vs lossy, incast, PFC vs DCQCN            rocelab demo, steps 2 and 3\n"
	"  troubleshooting a link degraded to 40G             rocelab demo, step 4\n"
	"  PFC deadlock                                       rocelab run scenarios/pfc-deadlock.ini\n"
	"  drops from a host on the wrong DSCP                rocelab run scenarios/troubleshoot-dscp.ini\n"
"  a 100G NIC in a PCIe Gen3 x8 slot pausing its port rocelab run scenarios/troubleshoot-pcie.ini\n"
	"\n"
	"  --out DIR   where to write (default: rocelab-learn); created if missing\n"
	"  --quick     fewer points, shorter runs\n"
	"  --seed N    the engine's seed for runs with loss (default 1)\n";

static const struct option long_opts[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "quick", no_argument, NULL, 'k' },
	{ "seed", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void list(void)
{
	const struct roce_lesson *const *l;
	size_t n = roce_lessons(&l);

	puts("lessons (rocelab learn LESSON, or all):");
	for (size_t i = 0; i < n; i++)
		printf("  %-10s %s\n", l[i]->name, l[i]->summary);
}

static int run(int argc, char **argv)
{
	static const char default_dir[] = "rocelab-learn";
	struct roce_learn_conf conf = { .out = stdout, .out_dir = default_dir, .seed = 1 };
	const struct roce_lesson *const *all;
	const struct roce_lesson *pick[16];
	size_t nall = roce_lessons(&all), npick = 0;
	char err[512];
	int opt;

	optind = 1;
	opterr = 0;	/* one line of our own names the bad option */
	while ((opt = getopt_long(argc, argv, "o:ks:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (optarg[0] == '\0')
				return rocelab_usage_error(argv[0], "--out needs a directory name");
			conf.out_dir = optarg;
			break;
		case 'k':
			conf.quick = true;
			break;
		case 's':
			if (rocelab_parse_uint(optarg, UINT64_MAX, &conf.seed) != 0)
				return rocelab_usage_error(argv[0], "--seed wants a whole number from "
							   "0, got '%s'", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_SUCCESS;
		default:
			return rocelab_usage_error(argv[0], "unknown option or missing value: '%s'",
						   argv[optind - 1]);
		}
	}
	if (optind == argc) {
		if (conf.out_dir != default_dir)
			return rocelab_usage_error(argv[0], "--out given, but no lesson: name one, "
						   "or all");
		list();
		return EXIT_SUCCESS;
	}
	for (int i = optind; i < argc; i++) {
		const struct roce_lesson *l = roce_lesson_find(argv[i]);

		if (strcmp(argv[i], "all") == 0) {
			for (size_t k = 0; k < nall && npick < 16; k++)
				pick[npick++] = all[k];
			continue;
		}
		if (l == NULL)
			return rocelab_usage_error(argv[0], "no lesson '%s' (rocelab learn lists them)",
						   argv[i]);
		if (npick < 16)
			pick[npick++] = l;
	}
	/* each lesson once, in the order first named ("encap all" runs encap first) */
	for (size_t i = 0; i < npick; i++)
		for (size_t k = i + 1; k < npick; k++)
			if (pick[k] == pick[i]) {
				memmove(&pick[k], &pick[k + 1], (npick - k - 1) * sizeof(pick[0]));
				npick--;
				k--;
			}
	if (rocelab_mkdir_p(conf.out_dir) != 0) {
		fprintf(stderr, "rocelab learn: cannot create %s: %s\n", conf.out_dir, strerror(errno));
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < npick; i++) {
		if (roce_learn_run(pick[i], &conf, err, sizeof(err)) != 0) {
			fprintf(stderr, "rocelab learn %s: %s\n", pick[i]->name, err);
			return EXIT_FAILURE;
		}
	}
	/* the index links the pages there are: all of them once 'all' has run */
	if (npick > 1 && roce_learn_index(pick, npick, &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocelab learn: %s\n", err);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

const struct rocelab_cmd cmd_learn = {
	.name = "learn",
	.summary = "lessons run and measured: IB vs RoCE, verbs, BDP, loss, GPUDirect, baselines",
	.usage = usage,
	.run = run,
	.needs_eal = true,
};
