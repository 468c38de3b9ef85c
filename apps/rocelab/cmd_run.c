/* rocelab run SCENARIO: build the scenario's fabric, run its workload, print and write the results. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rocelab.h"
#include "roce_file.h"
#include "roce_fabric.h"
#include "roce_report.h"

#define MAX_SET 64
#define FLOWS_SHOWN 20		/* more flows than this: the terminal shows FLOWS_WORST of them */
#define FLOWS_WORST 10
#define PORTS_SHOWN 40		/* more port rows than this: the terminal shows PORTS_WORST */
#define PORTS_WORST 12
#define SLICE_WALL_MIN 0.02	/* s of wall clock a slice of the run aims at, at least ... */
#define SLICE_WALL_MAX 0.1	/* ... and at most: a signal is seen within about that */
#define SLICE_MIN (10 * ROCE_US) /* virtual time a slice: 10 us x 2^k, so a stop is at a round time */

static const char usage[] =
	"usage: rocelab run SCENARIO [--out DIR] [--seed N] [--set SECTION.KEY=VALUE]...\n"
	"                  [--trace FILE] [--quiet]\n"
	"\n"
	"Build the fabric a scenario file describes (docs/scenarios.md; or a built-in one:\n"
	"demo-zerocopy, demo-lossy, demo-incast, demo-degrade), run its workload in virtual\n"
	"time, print per-flow, per-port and fabric tables, and write into DIR:\n"
	"  capture.pcap  frames of the tapped links ([capture] links), virtual timestamps\n"
	"  metrics.csv   time series: flow goodput, reaction-point rates, queue depths, pauses\n"
	"  counters.txt  every non-zero NIC and switch counter, per port and priority\n"
	"  flows.csv, ports.csv  the tables\n"
	"  report.html   all of it in one self-contained page with charts\n"
	"\n"
	"  --out DIR      where to write (default: rocelab-out); created if missing\n"
	"  --seed N       the engine's seed (same seed, same bytes in every file)\n"
	"  --set S.K=V    override a key, e.g. --set flow.a.size=1M --set nic.cc=dcqcn\n"
	"  --trace FILE   a line per transport and switch event out of the ordinary: loss\n"
	"                 recovery, NAKs, RNR waits, CNPs, DCQCN cuts, PFC XOFF/XON, drops,\n"
	"                 errors ('-': stdout; a run with none of them writes an empty file)\n"
	"  --quiet        no progress bar and no tables\n"
	"\n"
	"SIGINT (Ctrl-C) or SIGTERM stops the run where it is and writes every file for the\n"
	"time run so far; a second one kills it. While the files are written, the first\n"
	"lets them finish, whole; a second stops at once and removes the file it was writing\n"
	"and those still to come, so that every file left is whole (stderr names them).\n"
	"Exit status: 0 done, 1 an error (the frames not adding up too: sent = delivered +\n"
	"dropped + in flight), 2 bad arguments, 128+N stopped by signal N (130 for Ctrl-C).\n";

static const struct option long_opts[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "seed", required_argument, NULL, 's' },
	{ "set", required_argument, NULL, 'S' },
	{ "trace", required_argument, NULL, 't' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void progress(void *arg, roce_time_t now, roce_time_t end)
{
	(void)end;
	roce_progress_update(arg, (double)now / ROCE_US);
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * SIGINT and SIGTERM, from the start of the run to the last file written. During the run the
 * first one stops it at the end of its slice and a second kills the process, as before. Once
 * the run is over, what is left is writing DIR: the first signal then lets the files be
 * finished (each whole: a cut metrics.csv misleads more than a missing one), and a second one
 * stops at once. That stop removes the file being written and those not written yet: every
 * file left in DIR is whole and of this run, not the remains of an earlier run into DIR
 * beside this one's. The handler only uses async-signal-safe calls (write, unlink, _exit).
 */
static volatile sig_atomic_t stop_signal;	/* the first signal of the run, 0: none */
static volatile sig_atomic_t writing;		/* the run is over: DIR is being written */
static volatile sig_atomic_t write_signal;	/* the first signal while writing, 0: none */

#define OUT_FILES 5				/* report() writes these, in this order */
static const char *const out_name[OUT_FILES] = {
	"report.html", "flows.csv", "ports.csv", "metrics.csv", "counters.txt",
};
static char out_path[OUT_FILES][4096];		/* DIR/NAME of each, set before the run */
static const char *out_dir;
static volatile sig_atomic_t out_next;		/* the file being written (or next), 0..OUT_FILES */
static char out_tmp[4096];			/* its temporary file (roce_out), while out_tmp_set */
static volatile sig_atomic_t out_tmp_set;

static void say(const char *s)
{
	ssize_t n = write(STDERR_FILENO, s, strlen(s));

	(void)n;	/* nothing to do about a stderr that cannot be written */
}

static void on_signal(int sig)
{
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";

	if (!writing) {
		if (stop_signal == 0) {
			stop_signal = sig;
			return;
		}
		signal(sig, SIG_DFL);	/* a run that will not stop: the second one kills */
		raise(sig);
		return;
	}
	if (out_next == OUT_FILES) {
		/* every file written: nothing is left to finish */
		say("rocelab run: stopped by ");
		say(name);
		say(": every file in ");
		say(out_dir);
		say(" is whole\n");
		_exit(128 + sig);
	}
	if (stop_signal == 0 && write_signal == 0) {
		write_signal = sig;
		say("rocelab run: interrupted while writing ");
		say(out_dir);
		say(": finishing the files (interrupt again to stop now)\n");
		return;
	}
	/* the second: stop now, leaving only whole files of this run */
	if (out_tmp_set)
		unlink(out_tmp);
	for (int i = out_next; i < OUT_FILES; i++)
		unlink(out_path[i]);
	say("rocelab run: stopped by a second ");
	say(name);
	say(" while writing ");
	say(out_dir);
	say(": removed the unfinished ");
	say(out_name[out_next]);
	say(" and left out");
	for (int i = out_next + 1; i < OUT_FILES; i++) {
		say(" ");
		say(out_name[i]);
	}
	if (out_next + 1 == OUT_FILES)
		say(" nothing else");
	say("; whole: capture.pcap");
	for (int i = 0; i < out_next; i++) {
		say(", ");
		say(out_name[i]);
	}
	say("\n");
	_exit(128 + sig);
}

/*
 * Run the workload in slices of virtual time of about SLICE_WALL_MIN..MAX wall-clock seconds
 * each, looking for a signal between them. Virtual-time runs tile (docs/engine.md), so the
 * slices change no result: a run sliced ends as one run to the end would. @p cut is set when a
 * signal ended it before its end (a signal after the last flow finished cuts nothing).
 * @return 0, or roce_fabric_start's / roce_fabric_finish's error
 */
static int run_sliced(struct roce_fabric *fab, const struct roce_run_conf *rc, bool *cut)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	roce_time_t slice = SLICE_MIN;
	int ret = roce_fabric_start(fab, rc);

	if (ret != 0)
		return ret;
	for (;;) {
		roce_time_t now = roce_fabric_now(fab);
		double w0 = wall_now(), dw;

		if (!roce_fabric_advance(fab, slice < sc->duration - now ? now + slice : sc->duration))
			break;
		if (stop_signal != 0) {
			*cut = true;
			break;
		}
		dw = wall_now() - w0;
		if (dw < SLICE_WALL_MIN && slice < sc->duration)
			slice *= 2;
		else if (dw > SLICE_WALL_MAX && slice > SLICE_MIN)
			slice /= 2;
	}
	return roce_fabric_finish(fab);
}

/* What goes into one file of DIR. */
struct out_file {
	const char *name;
	const struct roce_table *table;		/* a CSV of it, or: */
	struct roce_report *report;		/* the page, or: */
	int (*write)(const struct roce_fabric *fab, FILE *f);	/* metrics, counters */
};

/*
 * Write DIR/NAME. A file that cannot be written whole (a full disk) is removed rather than left
 * cut, and named on stderr with the reason. @return 0 or -errno
 */
static int write_out(const char *dir, const struct out_file *o, const struct roce_fabric *fab)
{
	char path[4096], err[512];
	struct roce_out out;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, o->name);
	for (int i = 0; i < OUT_FILES; i++)
		if (strcmp(o->name, out_name[i]) == 0)
			out_next = i;	/* a second signal from now on removes this one */
	/* beside PATH, renamed over it: never over a link or a FIFO (roce_file.h) */
	rc = roce_out_open(&out, path, 0, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "rocelab run: %s\n", err);
		return rc;
	}
	snprintf(out_tmp, sizeof(out_tmp), "%s", out.tmp);
	out_tmp_set = 1;
	f = out.f;
	errno = 0;
	rc = o->table != NULL ? roce_table_write_csv(o->table, f) :
	     o->report != NULL ? roce_report_write_stream(o->report, f) : o->write(fab, f);
	if (rc == -EIO && errno != 0)
		rc = -errno;	/* the reason the stream gave: ENOSPC, ... */
	if (rc != 0) {
		roce_out_discard(&out);
		out_tmp_set = 0;
		fprintf(stderr, "rocelab run: %s: %s (not written)\n", path, strerror(-rc));
		return rc;
	}
	rc = roce_out_commit(&out, err, sizeof(err));
	out_tmp_set = 0;
	if (rc != 0)
		fprintf(stderr, "rocelab run: %s\n", err);
	return rc;
}

/*
 * Every file of DIR (report()'s and the capture), checked before the run rather than refused
 * after it (roce_file.h). @return 0, or -errno with one line on stderr
 */
static int check_outputs(const char *dir)
{
	static const char *const names[] = {
		"capture.pcap", "report.html", "flows.csv", "ports.csv", "metrics.csv", "counters.txt",
	};
	char path[4096], err[512];

	for (size_t i = 0; i < ROCE_DIM(names); i++) {
		int rc;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = roce_out_check(path, i == 0 ? ROCE_OUT_PCAP : 0, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "rocelab run: %s\n", err);
			return rc;
		}
	}
	return 0;
}

/* A finding on the terminal: its `code` without the backquotes report.html turns into markup. */
static void print_plain(const char *text)
{
	for (; *text != '\0'; text++)
		if (*text != '`')
			putchar(*text);
	putchar('\n');
}

/* Everything after the run: tables on stdout, files in @p dir. */
static int report(struct roce_fabric *fab, const char *dir, double wall, bool quiet)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_table *flows = roce_fabric_flow_table(fab);
	/* many flows: the terminal shows the worst few, the files all of them */
	struct roce_table *shown = sc->nflows > FLOWS_SHOWN ?
				   roce_fabric_flow_table_worst(fab, FLOWS_WORST) : NULL;
	struct roce_table *ports = roce_fabric_port_table(fab);
	struct roce_table *ports_shown = ports != NULL && roce_table_rows(ports) > PORTS_SHOWN ?
					 roce_fabric_port_table_worst(fab, PORTS_WORST) : NULL;
	struct roce_table *summary = roce_fabric_summary_table(fab, wall);
	/* the report's copy leaves the wall clock out: the same seed gives the same page */
	struct roce_table *summary_rep = roce_fabric_summary_table(fab, 0);
	struct roce_table *fct = roce_fabric_fct_table(fab);
	bool fct_ok = fct != NULL || errno == ENODATA;		/* ENODATA: too few finished */
	struct roce_report *rep = roce_report_create(sc->name);
	const char *found[ROCE_FINDINGS_MAX];
	struct roce_findings fd;
	char text[512];
	int rc = -ENOMEM;

	if (flows == NULL || ports == NULL || summary == NULL || summary_rep == NULL || !fct_ok ||
	    rep == NULL || (sc->nflows > FLOWS_SHOWN && shown == NULL) ||
	    (roce_table_rows(ports) > PORTS_SHOWN && ports_shown == NULL)) {
		fprintf(stderr, "rocelab run: building the results: %s\n", strerror(ENOMEM));
		goto out;
	}
	if (!quiet) {
		roce_table_print(shown != NULL ? shown : flows, stdout);
		putchar('\n');
		if (fct != NULL) {
			roce_table_print(fct, stdout);
			putchar('\n');
		}
		roce_table_print(ports_shown != NULL ? ports_shown : ports, stdout);
		putchar('\n');
		roce_table_print(summary, stdout);
	}
	roce_fabric_findings(fab, &fd);
	for (int i = 0; i < fd.n; i++) {
		found[i] = fd.text[i];
		if (!quiet) {
			printf("%s- ", i == 0 ? "\nWhat stands out\n" : "");
			print_plain(fd.text[i]);
		}
	}
	snprintf(text, sizeof(text), "Scenario %s (%s): %d host%s, %d switch%s, %d link%s, "
		 "%d flow%s; seed %llu; %.1f us of virtual time.", sc->name, sc->file,
		 sc->nhosts, sc->nhosts == 1 ? "" : "s", sc->nswitches, sc->nswitches == 1 ? "" : "es",
		 sc->nlinks, sc->nlinks == 1 ? "" : "s", sc->nflows, sc->nflows == 1 ? "" : "s",
		 (unsigned long long)sc->seed, (double)roce_fabric_now(fab) / ROCE_US);
	roce_report_text(rep, text);
	roce_report_list(rep, "What stands out", found, (size_t)fd.n);
	roce_report_heading(rep, "Time series");
	if (sc->sample == 0)
		roce_report_text(rep, "None: sampling is off (scenario.sample = 0).");
	else
		roce_fabric_add_charts(fab, rep);
	roce_report_heading(rep, "Flows");
	if (fct != NULL) {
		roce_report_chart(rep, roce_fabric_fct_chart(fab));
		roce_report_table(rep, fct);
	}
	roce_report_table(rep, flows);
	roce_report_heading(rep, "Switch ports");
	roce_report_table(rep, ports);
	roce_report_heading(rep, "Fabric");
	roce_report_table(rep, summary_rep);
	{
		/* each file on its own: one that does not fit does not take the others along */
		const struct out_file out[] = {
			{ .name = "report.html", .report = rep },
			{ .name = "flows.csv", .table = flows },
			{ .name = "ports.csv", .table = ports },
			{ .name = "metrics.csv", .write = roce_fabric_write_metrics },
			{ .name = "counters.txt", .write = roce_fabric_write_counters },
		};

		ROCE_STATIC_ASSERT(ROCE_DIM(out) == OUT_FILES);
		/* the tables and the trace go now: a second signal leaves by _exit() */
		fflush(NULL);
		rc = 0;
		for (size_t i = 0; i < ROCE_DIM(out); i++) {
			int e = write_out(dir, &out[i], fab);

			if (rc == 0)
				rc = e;
		}
		out_next = OUT_FILES;
	}
	if (rc == 0 && !quiet)
		printf("\nwrote %s/{report.html, metrics.csv, counters.txt, flows.csv, ports.csv, "
		       "capture.pcap}\n", dir);
out:
	roce_table_destroy(flows);
	roce_table_destroy(shown);
	roce_table_destroy(ports);
	roce_table_destroy(ports_shown);
	roce_table_destroy(summary);
	roce_table_destroy(summary_rep);
	roce_table_destroy(fct);
	roce_report_destroy(rep);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *set[MAX_SET + 1], *dir = "rocelab-out", *trace_path = NULL;
	char seedset[64] = "", err[512], path[4096];
	struct roce_run_conf rc = { 0 };
	struct roce_scenario *sc;
	struct stat st;
	bool found, builtin;
	struct roce_fabric *fab;
	struct roce_progress *prog = NULL;
	/* SA_RESTART: a signal while a file is written interrupts no write() */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct sigaction old_int, old_term;
	sigset_t oldmask;
	bool cut = false, balanced;
	struct roce_fabric_balance bal;
	int run_rc;
	const char *cap_err;
	int cap_errno;
	struct roce_out trace_out;	/* --trace FILE */
	FILE *trace = NULL;
	bool quiet = false;
	int nset = 0, opt, ret = EXIT_FAILURE;
	double t0;

	optind = 1;
	opterr = 0;	/* one line of our own names the bad option */
	while ((opt = getopt_long(argc, argv, "o:s:S:t:qh", long_opts, NULL)) != -1) {
		uint64_t v;

		switch (opt) {
		case 'o':
			if (optarg[0] == '\0')
				return rocelab_usage_error(argv[0], "--out needs a directory name");
			dir = optarg;
			break;
		case 's':
			if (rocelab_parse_uint(optarg, UINT64_MAX, &v) != 0)
				return rocelab_usage_error(argv[0], "--seed wants a whole number from "
							   "0, got '%s'", optarg);
			/* the last --seed wins; it joins the overrides once parsing is done */
			snprintf(seedset, sizeof(seedset), "scenario.seed=%llu", (unsigned long long)v);
			break;
		case 'S':
			if (strchr(optarg, '=') == NULL || strchr(optarg, '.') == NULL)
				return rocelab_usage_error(argv[0], "--set wants SECTION.KEY=VALUE, got '%s'", optarg);
			if (nset == MAX_SET)
				return rocelab_usage_error(argv[0], "more than %d overrides", MAX_SET);
			set[nset++] = optarg;
			break;
		case 't':
			trace_path = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_SUCCESS;
		default:
			return rocelab_usage_error(argv[0], "unknown option or missing value: '%s'",
						   argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return rocelab_usage_error(argv[0], optind >= argc ? "needs a scenario file" :
					   "takes one scenario file");
	if (trace_path != NULL && rocelab_same_file(argv[optind], trace_path))
		return rocelab_usage_error(argv[0], "--trace '%s' is the scenario file: write to "
					   "another file", trace_path);
	if (seedset[0] != '\0') {
		for (int i = 0; i < nset; i++)
			if (strncmp(set[i], "scenario.seed=", 14) == 0)
				return rocelab_usage_error(argv[0], "--seed and --set scenario.seed "
							   "both set the seed: give one");
		if (nset == MAX_SET)
			return rocelab_usage_error(argv[0], "more than %d overrides", MAX_SET);
		set[nset++] = seedset;
	}
	/*
	 * A name that is not a file may be a built-in scenario ("demo-incast"), even where a
	 * directory has its name: an earlier run's --out, most likely.
	 */
	found = stat(argv[optind], &st) == 0;
	builtin = (!found || S_ISDIR(st.st_mode)) && roce_scenario_builtin(argv[optind]) != NULL;
	if (builtin)
		sc = roce_scenario_parse(argv[optind], roce_scenario_builtin(argv[optind]), set, nset,
					 err, sizeof(err));
	else
		sc = roce_scenario_load(argv[optind], set, nset, err, sizeof(err));
	if (sc == NULL && !found && !builtin && strchr(argv[optind], '/') == NULL) {
		fprintf(stderr, "rocelab run: %s, and no built-in scenario has that name (", err);
		for (const struct roce_embedded *e = roce_scenarios_builtin; e->name != NULL; e++)
			fprintf(stderr, "%s%.*s", e == roce_scenarios_builtin ? "" : ", ",
				(int)strcspn(e->name, "."), e->name);
		fprintf(stderr, ")\n");
		return EXIT_FAILURE;
	}
	if (sc == NULL) {
		fprintf(stderr, "rocelab run: %s\n", err);
		return EXIT_FAILURE;
	}
	if (rocelab_mkdir_p(dir) != 0) {
		fprintf(stderr, "rocelab run: cannot create %s: %s\n", dir, strerror(errno));
		goto out_sc;
	}
	if (check_outputs(dir) != 0)
		goto out_sc;
	if (trace_path != NULL) {
		if (roce_out_open(&trace_out, trace_path, 0, err, sizeof(err)) != 0) {
			fprintf(stderr, "rocelab run: --trace: %s\n", err);
			goto out_sc;
		}
		trace = trace_out.f;
	}
	fab = roce_fabric_create(sc, err, sizeof(err));
	if (fab == NULL) {
		fprintf(stderr, "rocelab run: %s: %s\n", sc->file, err);
		goto out_trace;
	}
	snprintf(path, sizeof(path), "%s/capture.pcap", dir);
	rc.pcap = path;
	rc.trace = trace;
	if (!quiet) {
		prog = roce_progress_start(stderr, sc->name, (double)sc->duration / ROCE_US);
		rc.progress = progress;
		rc.progress_arg = prog;
	}
	t0 = wall_now();
	out_dir = dir;
	for (int i = 0; i < OUT_FILES; i++)
		snprintf(out_path[i], sizeof(out_path[i]), "%s/%s", dir, out_name[i]);
	out_next = 0;
	stop_signal = write_signal = writing = 0;
	/*
	 * Ours until every file is written: a shell starts a background job with SIGINT
	 * ignored, and putting that back after the run would ignore the signals of the writing
	 */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);	/* one handler at a time: the second waits */
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	run_rc = run_sliced(fab, &rc, &cut);
	sigprocmask(SIG_BLOCK, &sa.sa_mask, &oldmask);
	writing = 1;
	if (!cut && stop_signal != 0) {
		/* it came as the run ended and cut nothing: the writing's first signal */
		write_signal = stop_signal;
		stop_signal = 0;
		fprintf(stderr, "rocelab run: interrupted while writing %s: finishing the files "
			"(interrupt again to stop now)\n", dir);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	roce_progress_finish(prog);
	/* a capture cut short (a full disk) loses its tail, not the run's other files */
	cap_err = roce_fabric_capture_error(fab, &cap_errno);
	/* frames sent = delivered + dropped + in flight, or rocelab lost count of some: a bug */
	balanced = roce_fabric_balance(fab, &bal);
	if (!balanced)
		fprintf(stderr, "rocelab run: %s: internal error: the frames do not add up: %s "
			"(a bug in rocelab; the files are written to look into it)\n", sc->file,
			roce_fabric_balance_text(&bal, err, sizeof(err)));
	if (cap_err != NULL)
		fprintf(stderr, "rocelab run: %s%s\n", cap_err, cap_errno != ENOSPC ? "" :
			"; --set capture.snaplen=128 keeps only the headers");
	else if (run_rc != 0 && !(run_rc == -EPROTO && !balanced)) {
		fprintf(stderr, "rocelab run: %s: the run failed: %s\n", sc->file,
			run_rc == -EIO ? "the capture could not be written" : strerror(-run_rc));
		goto out_fab;
	}
	if (cut)	/* the findings say it too, in the tables' words */
		fprintf(stderr, "rocelab run: stopped by %s at %.1f us of the scenario's %.1f us\n",
			stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
			(double)roce_fabric_now(fab) / ROCE_US, (double)sc->duration / ROCE_US);
	if (report(fab, dir, wall_now() - t0, quiet) == 0 && cap_err == NULL && balanced)
		ret = cut ? 128 + stop_signal : EXIT_SUCCESS;
	if (write_signal != 0) {
		/* the run was done, but asked to stop: it did, once the files were whole */
		fprintf(stderr, "rocelab run: %s: %s\n", dir, ret == EXIT_SUCCESS ?
			"every file written whole after the interrupt" :
			"the files were finished after the interrupt (an error above)");
		if (ret == EXIT_SUCCESS)
			ret = 128 + write_signal;
	}
out_fab:
	roce_fabric_destroy(fab);
out_trace:
	if (trace != NULL && roce_out_commit(&trace_out, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocelab run: --trace: %s\n", err);
		ret = EXIT_FAILURE;
	}
out_sc:
	if (writing) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		writing = 0;
	}
	roce_scenario_destroy(sc);
	return ret;
}

const struct rocelab_cmd cmd_run = {
	.name = "run",
	.summary = "run a scenario: fabric, workload, tables, capture, metrics, report.html",
	.usage = usage,
	.run = run,
	.needs_eal = true,
};
