/* rocelab perf: the report both modes print (cmd_perf.c) and the live mode (cmd_perf_live.c). */
#ifndef ROCELAB_CMD_PERF_H
#define ROCELAB_CMD_PERF_H

#include <stdbool.h>

#include "roce_perf.h"

#define PERF_JSON_FILE "perftest_out.json"	/* perftest's --out_json default */

/* How the results are reported: perftest's report options. */
struct perf_report_opts {
	bool gbits;			/* --report_gbits */
	bool both;			/* --report-both: -b's local and remote rows as well */
	const char *json;		/* --out_json: the file (--out_json_file), or NULL */
	const char *json_file;		/* --out_json_file as given */
};

/**
 * perftest's banner and column titles; @p device and @p link fill their lines, @p duplex (-b)
 * names the test bidirectional as perftest does.
 */
void perf_print_header(const struct roce_perf_conf *c, bool gbits, bool duplex,
		       const char *device, const char *link);

/** One result row, in perftest's columns. */
void perf_print_result(const struct roce_perf_conf *c, const struct roce_perf_result *r,
		       bool gbits);

/**
 * To stderr, a line each: the completions with errors (count, the first one's status) and the
 * --verify mismatches (count, the first in words). @return 0 when there were none, else -1
 */
int perf_print_failures(const struct roce_perf_result *r);

/**
 * perftest's --out_json file: the test's set-up and its last row, as perftest 6.x writes them.
 * @return 0; -1 with one line on stderr (the file could not be written)
 */
int perf_write_json(const char *path, const struct roce_perf_conf *c,
		    const struct roce_perf_result *r, bool gbits, bool duplex, const char *device);

/** Run @p conf in real time on a port (a server, or a client when live->peer is set). @return exit status */
int perf_live_main(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		   const struct perf_report_opts *rep);

/**
 * Host mode: serve one client after another with perf_live_main() until SIGINT or SIGTERM
 * (a second one kills). @return EXIT_SUCCESS once interrupted, whatever clients failed
 */
int perf_live_serve(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		    const struct perf_report_opts *rep);

/**
 * rocelab perf --ibdev DEV without PEER: the server half in a thread, the client here, both on
 * the device, joined by perftest's exchange on the loopback interface; prints as perf_live_main().
 */
int perf_loopback_main(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		       const struct perf_report_opts *rep);

#endif /* ROCELAB_CMD_PERF_H */
