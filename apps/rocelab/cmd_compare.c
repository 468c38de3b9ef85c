/*
 * rocelab compare: one perftest workload on a real RDMA device and on the emulated NIC set up
 * from what the device reported, side by side.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_perf.h"
#include "roce_front.h"
#include "roce_ibdev.h"
#include "roce_io.h"
#include "roce_perf.h"
#include "roce_report.h"
#include "rocelab.h"

#define CMP_MAX_ROWS 32			/* -a: 2 B .. 8 MiB */
#define CMP_CAL_ITERS 1000		/* write_lat 2 B round trips that calibrate the delay */

static const char usage[] =
	"usage: rocelab compare TEST --ibdev DEV [-x GID_INDEX] [-i PORT] [options] [--out DIR]\n"
	"       rocelab compare completions --ibdev DEV [-x GID_INDEX] [-i PORT]\n"
	"\n"
	"Run perftest's TEST on a real RDMA device (both ends in this process, in loopback\n"
	"through it) and on the emulated NIC in virtual time, set up from what the device\n"
	"reported: the link rate from its speed x width, the path MTU, and a one-way delay that\n"
	"makes the emulator's 2-byte write_lat what the device's is. Prints one table with both\n"
	"rows and their ratio (docs/devices.md).\n"
	"\n"
	"  TEST                  write_bw, read_bw, send_bw, atomic_bw, write_lat, read_lat,\n"
	"                        send_lat\n"
	"  --ibdev DEV, -d DEV   the device (`rocelab devices` lists them)\n"
	"  -x GID_INDEX, -i PORT its RoCE v2 GID and its port, as rocelab perf --ibdev\n"
	"  -s SIZE, -n ITERS, -a, --all-max N, -c RC|UC|UD, -q QPS, -t DEPTH, -m MTU\n"
	"                        perftest's, for both runs\n"
	"  --out DIR             also write DIR/report.html: the table, both curves (-a), the\n"
	"                        set-up (created if missing)\n"
	"\n"
	"completions: one scripted list of work requests (every opcode, inline, immediate,\n"
	"unsignaled; bad rkey, out of bounds, no access right; RNR retries exhausted; a SEND\n"
	"longer than the receive; a QP moved to ERR with receives posted), each case on fresh\n"
	"RC QPs on the device and on the emulator; every completion of both sides compared,\n"
	"each difference listed with what the IBA specification says.\n";

static const struct option long_opts[] = {
	{ "ibdev", required_argument, NULL, 'd' },
	{ "ib-dev", required_argument, NULL, 'd' },
	{ "gid-index", required_argument, NULL, 'x' },
	{ "ib-port", required_argument, NULL, 'i' },
	{ "size", required_argument, NULL, 's' },
	{ "iters", required_argument, NULL, 'n' },
	{ "all", no_argument, NULL, 'a' },
	{ "all-max", required_argument, NULL, 'M' },
	{ "connection", required_argument, NULL, 'c' },
	{ "qp", required_argument, NULL, 'q' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "out", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One size's figures from each side. */
struct cmp_row {
	uint32_t size;
	struct roce_perf_result dev, emu;
};

struct cmp {
	struct roce_perf_conf conf;	/* the workload, as both run it */
	struct roce_perf_live live;	/* the device */
	bool all;
	uint32_t all_max;
	struct cmp_row rows[CMP_MAX_ROWS];
	uint32_t nrows;
	double dev_sec, emu_sec;	/* wall-clock seconds each half took */
};

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -a's rows before the last, from the client half. */
static void dev_row(void *arg, const struct roce_perf_result *res)
{
	struct cmp *c = arg;

	if (c->nrows < CMP_MAX_ROWS)
		c->rows[c->nrows++].dev = *res;
}

/* The device's client half: its rows into c->rows. */
static int dev_client(void *arg, const struct roce_perf_live *client)
{
	struct cmp *c = arg;
	struct roce_perf_live lv = *client;
	struct roce_perf_live_ctx *ctx;
	struct roce_perf_result res;
	char err[256];
	int rc;

	lv.row = dev_row;
	lv.row_arg = c;
	ctx = roce_perf_live_open(&c->conf, &lv, err, sizeof(err));
	if (ctx == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		return EXIT_FAILURE;
	}
	rc = roce_perf_live_run(ctx, &res, err, sizeof(err));
	roce_perf_live_close(ctx);
	if (rc != 0) {
		fprintf(stderr, "rocelab compare: %s: %s\n", c->live.ibdev, err);
		return EXIT_FAILURE;
	}
	if (res.errors != 0) {
		fprintf(stderr, "rocelab compare: %s: %llu completion(s) with errors, first: %s\n",
			c->live.ibdev, (unsigned long long)res.errors,
			roce_wc_status_name(res.first_error));
		return EXIT_FAILURE;
	}
	if (c->nrows < CMP_MAX_ROWS)
		c->rows[c->nrows++].dev = res;
	return 0;
}

/* The device's half: @p conf's workload in loopback. @return an exit status */
static int run_device(struct cmp *c, const struct roce_perf_conf *conf)
{
	struct roce_perf_conf saved = c->conf;
	char err[256];
	int rc;

	c->conf = *conf;
	rc = roce_perf_loopback(&c->conf, &c->live, dev_client, c, err, sizeof(err));
	c->conf = saved;
	if (rc < 0) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		return rc == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	return rc;
}

/*
 * The emulator's one-way delay: the device's 2-byte write_lat, less the emulator's own at no
 * delay (its serialisation and NIC time at the device's rate).
 */
static int calibrate(struct cmp *c, double *dev_lat, roce_time_t *delay)
{
	struct roce_perf_conf lat;
	struct roce_perf_result res;
	struct roce_perf_live live = c->live;
	uint32_t nrows = c->nrows;
	int rc;

	roce_perf_defaults(&lat, ROCE_PERF_WRITE_LAT);
	lat.iters = CMP_CAL_ITERS;
	lat.mtu = c->conf.mtu;
	lat.rate_bps = c->conf.rate_bps;
	c->live.all = false;	/* one size, 2 bytes, whatever the workload sweeps */
	rc = run_device(c, &lat);
	c->live = live;
	if (rc != 0)
		return rc;
	*dev_lat = c->rows[nrows].dev.lat_typical;
	c->nrows = nrows;
	lat.delay = 0;
	if (roce_perf_run(&lat, &res) != 0) {
		fprintf(stderr, "rocelab compare: the emulator's calibration run failed\n");
		return EXIT_FAILURE;
	}
	*delay = *dev_lat > res.lat_typical ?
		 (roce_time_t)((*dev_lat - res.lat_typical) * (double)ROCE_US) : 0;
	return 0;
}

/* The emulator's half: every size the device ran, in virtual time. */
static int run_emulator(struct cmp *c)
{
	uint32_t psn[2][ROCE_PERF_MAX_QP];
	struct roce_perf_conf conf = c->conf;

	for (uint32_t r = 0; r < c->nrows; r++) {
		conf.size = c->rows[r].dev.size ? c->rows[r].dev.size : c->conf.size;
		if (roce_perf_run(&conf, &c->rows[r].emu) != 0) {
			fprintf(stderr, "rocelab compare: the emulator's run of %u bytes failed\n",
				conf.size);
			return EXIT_FAILURE;
		}
		c->rows[r].size = conf.size;
		memcpy(psn, c->rows[r].emu.next_psn, sizeof(psn));
		conf.resume_psn = psn;	/* -a: one QP pair for every size, as perftest */
	}
	return 0;
}

static double ratio(double emu, double dev)
{
	return dev > 0 ? emu / dev : NAN;
}

/* The side-by-side table: bandwidth tests by BW average and message rate, latency by t_typical. */
static struct roce_table *make_table(const struct cmp *c)
{
	static const char *const bw_cols[] = {
		"#bytes", "device Gb/s", "emulator Gb/s", "emu/dev", "device Mpps", "emulator Mpps",
		"emu/dev",
	};
	static const char *const lat_cols[] = {
		"#bytes", "device t_typical us", "emulator t_typical us", "emu/dev",
		"device t_avg us", "emulator t_avg us", "emu/dev",
	};
	bool lat = roce_perf_is_lat(c->conf.test);
	struct roce_table *t = roce_table_create(lat ? "latency: the device and the emulator" :
						 "bandwidth: the device and the emulator", 7,
						 lat ? lat_cols : bw_cols);

	if (t == NULL)
		return NULL;
	for (uint32_t r = 0; r < c->nrows; r++) {
		const struct roce_perf_result *d = &c->rows[r].dev, *e = &c->rows[r].emu;
		double dv[2] = { lat ? d->lat_typical : d->bw_avg_gbps, lat ? d->lat_avg : d->msg_rate_mpps };
		double ev[2] = { lat ? e->lat_typical : e->bw_avg_gbps, lat ? e->lat_avg : e->msg_rate_mpps };

		roce_table_add(t, "%u", c->rows[r].size);
		for (int k = 0; k < 2; k++) {
			roce_table_add(t, lat || k == 0 ? "%.3f" : "%.5f", dv[k]);
			roce_table_add(t, lat || k == 0 ? "%.3f" : "%.5f", ev[k]);
			roce_table_add(t, "%.3f", ratio(ev[k], dv[k]));
		}
	}
	return t;
}

static int write_report(const struct cmp *c, const struct roce_table *t, const char *setup,
			const char *dir)
{
	bool lat = roce_perf_is_lat(c->conf.test);
	struct roce_report *rep;
	char path[4096], title[160];
	int rc;

	if (rocelab_mkdir_p(dir) != 0) {
		fprintf(stderr, "rocelab compare: --out %s: %s\n", dir, strerror(errno));
		return EXIT_FAILURE;
	}
	snprintf(title, sizeof(title), "rocelab compare: %s on %s and on the emulator",
		 roce_perf_test_name(c->conf.test), c->live.ibdev);
	rep = roce_report_create(title);
	if (rep == NULL)
		return EXIT_FAILURE;
	roce_report_heading(rep, "Set-up");
	roce_report_text(rep, setup);
	roce_report_heading(rep, "Side by side");
	roce_report_table(rep, t);
	if (c->nrows > 1) {
		double x[CMP_MAX_ROWS], yd[CMP_MAX_ROWS], ye[CMP_MAX_ROWS];
		struct roce_chart *ch = roce_chart_create(ROCE_CHART_LINE, lat ?
							  "t_typical by message size" :
							  "BW average by message size",
							  "message size (bytes)",
							  lat ? "t_typical (µs)" : "BW average (Gb/s)");

		for (uint32_t r = 0; r < c->nrows; r++) {
			x[r] = c->rows[r].size;
			yd[r] = lat ? c->rows[r].dev.lat_typical : c->rows[r].dev.bw_avg_gbps;
			ye[r] = lat ? c->rows[r].emu.lat_typical : c->rows[r].emu.bw_avg_gbps;
		}
		if (ch != NULL) {
			roce_chart_xlog(ch);
			roce_chart_series(ch, c->live.ibdev, x, yd, c->nrows);
			roce_chart_series(ch, "emulator", x, ye, c->nrows);
			roce_report_chart(rep, ch);
		}
	}
	roce_report_heading(rep, "Frames");
	roce_report_text(rep, "Not captured. A device's frames can be captured only where the "
			 "kernel sees them (libpcap on the device's network interface, for a software "
			 "device); a NIC that offloads RoCE shows the kernel none, and the kernel's "
			 "soft-RoCE sends a loopback run's frames to itself without its interface.");
	snprintf(path, sizeof(path), "%s/report.html", dir);
	rc = roce_report_write(rep, path);
	roce_report_destroy(rep);
	if (rc != 0) {
		fprintf(stderr, "rocelab compare: %s: %s\n", path, strerror(-rc));
		return EXIT_FAILURE;
	}
	printf("wrote %s\n", path);
	return 0;
}

/* The completion script on the device (both QPs on it, one thread) and on the emulator. */
static int run_completions(struct cmp *c)
{
	const struct roce_ibdev_info *info;
	const struct roce_ibdev_port *port;
	const struct roce_ibdev_gid *g;
	struct roce_ibdev *dev;
	struct roce_front *front;
	struct roce_wcs_env denv = { 0 }, eenv;
	struct roce_wcs_emu *emu;
	uint32_t n = roce_wcs_count(), differ = 0;
	uint8_t pn = c->live.ib_port ? c->live.ib_port : 1;
	char err[256];
	int rc = EXIT_FAILURE;

	dev = roce_ibdev_open(c->live.ibdev, err, sizeof(err));
	if (dev == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		return EXIT_FAILURE;
	}
	info = roce_ibdev_info(dev);
	if (pn > info->n_ports) {
		fprintf(stderr, "rocelab compare: %s has %u port(s): no port %u (-i)\n", info->name,
			info->n_ports, pn);
		roce_ibdev_close(dev);
		return EXIT_USAGE;
	}
	port = &info->ports[pn - 1];
	if (!port->ethernet || port->state != 4 /* PORT_ACTIVE */ || port->active_mtu == 0) {
		fprintf(stderr, "rocelab compare: %s port %u is %s%s\n", info->name, pn,
			port->ethernet ? roce_ibdev_port_state_name(port->state) : "InfiniBand",
			port->ethernet ? ", not PORT_ACTIVE: is its network interface up?" :
			", not RoCE");
		roce_ibdev_close(dev);
		return EXIT_FAILURE;
	}
	g = roce_ibdev_gid_pick(port, c->live.gid_index, false, err, sizeof(err));
	if (g == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		roce_ibdev_close(dev);
		return EXIT_USAGE;
	}
	front = roce_front_ibdev(dev, pn, g->index);
	if (front == NULL) {
		fprintf(stderr, "rocelab compare: %s: %s\n", info->name, strerror(errno));
		roce_ibdev_close(dev);
		return EXIT_FAILURE;
	}
	/* both QPs on the device, each reaching the other at the device's own address */
	denv.dev = denv.peer = front;
	denv.mtu = roce_mtu_from_bytes(port->active_mtu);
	denv.to_peer.ip_ver = roce_gid_is_ipv4(g->gid) ? 4 : 6;
	memcpy(denv.to_peer.dip.b, roce_gid_is_ipv4(g->gid) ? &g->gid[12] : g->gid,
	       roce_gid_is_ipv4(g->gid) ? 4 : 16);
	denv.to_dev = denv.to_peer;
	if (rocelab_eal_start() != 0)
		goto out;
	emu = roce_wcs_emulated(denv.mtu, (uint64_t)(port->lanes * port->lane_gbps * 1e9) ?
				(uint64_t)(port->lanes * port->lane_gbps * 1e9) : 100000000000ull,
				ROCE_US, &eenv);
	if (emu == NULL) {
		fprintf(stderr, "rocelab compare: cannot set the emulated hosts up: %s\n",
			strerror(errno));
		goto out;
	}
	printf(" completions: %u cases, each on fresh RC QPs; on %s port %u (GID %u) and on the "
	       "emulator\n\n", n, info->name, pn, g->index);
	printf(" %-14s  %-40s  %-40s  %s\n", "case", info->name, "emulator", "");
	for (uint32_t i = 0; i < n; i++) {
		struct roce_wcs_case d, e;
		char ds[200] = "", es[200] = "", one[48];
		bool same;

		roce_wcs_run(&denv, i, &d);
		roce_wcs_run(&eenv, i, &e);
		for (uint32_t k = 0; k < d.n; k++)
			snprintf(ds + strlen(ds), sizeof(ds) - strlen(ds), "%s%s", k ? " " : "",
				 roce_wcs_format(&d.comp[k], one, sizeof(one)));
		for (uint32_t k = 0; k < e.n; k++)
			snprintf(es + strlen(es), sizeof(es) - strlen(es), "%s%s", k ? " " : "",
				 roce_wcs_format(&e.comp[k], one, sizeof(one)));
		if (d.rc != 0)
			snprintf(ds, sizeof(ds), "(%s)", d.err);
		if (e.rc != 0)
			snprintf(es, sizeof(es), "(%s)", e.err);
		same = d.rc == 0 && e.rc == 0 && strcmp(ds, es) == 0;
		differ += !same;
		printf(" %-14s  %-40s  %-40s  %s\n", d.name, ds[0] ? ds : "-", es[0] ? es : "-",
		       same ? "same" : "DIFFERS");
		if (!same)
			printf(" %-14s  %s; IBA: %s\n", "", d.what, d.iba);
	}
	printf("\n %u of %u cases differ\n", differ, n);
	rc = EXIT_SUCCESS;
	roce_wcs_emulated_free(emu);
out:
	roce_front_close(front);
	roce_ibdev_close(dev);
	return rc;
}

static bool parse_u32(const char *what, const char *arg, uint32_t lo, uint32_t hi, uint32_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || x < lo || x > hi) {
		rocelab_usage_error("compare", "%s '%s': expected a whole number from %u to %u", what,
				    arg, lo, hi);
		return false;
	}
	*v = (uint32_t)x;
	return true;
}

static int run(int argc, char **argv)
{
	struct cmp *c;
	const char *out = NULL;
	const struct roce_ibdev_info *info;
	const struct roce_ibdev_port *port;
	struct roce_ibdev *dev;
	struct roce_table *t;
	char err[256], setup[1024];
	double dev_lat = 0, t0;
	roce_time_t delay = 0;
	uint32_t v;
	int test, opt, rc;
	bool size_set = false, other_opts = false;

	if (argc < 2 || argv[1][0] == '-')
		return rocelab_usage_error("compare", "no TEST given (write_bw, read_bw, send_bw, "
					   "atomic_bw, write_lat, read_lat, send_lat or "
					   "completions)");
	test = strcmp(argv[1], "completions") == 0 ? ROCE_PERF_SEND_LAT :
	       roce_perf_test_by_name(argv[1]);
	if (test < 0)
		return rocelab_usage_error("compare", "'%s' is not a test (write_bw, read_bw, "
					   "send_bw, atomic_bw, write_lat, read_lat, send_lat or "
					   "completions)", argv[1]);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return EXIT_FAILURE;
	roce_perf_defaults(&c->conf, (enum roce_perf_test)test);
	c->live.timeout = 30;
	c->live.gid_index = -1;
	c->live.hello_timeout = ROCE_PERF_HELLO_TIMEOUT;
	optind = 2;
	opterr = 0;
	rc = EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, ":d:x:i:s:n:ac:q:t:m:o:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			c->live.ibdev = optarg;
			break;
		case 'x':
			if (!parse_u32("-x", optarg, 0, 255, &v))
				goto done;
			c->live.gid_index = (int)v;
			break;
		case 'i':
			if (!parse_u32("-i", optarg, 1, 255, &v))
				goto done;
			c->live.ib_port = (uint8_t)v;
			break;
		case 's':
			other_opts = true;
			if (!parse_u32("-s", optarg, 1, 1u << 23, &c->conf.size))
				goto done;
			size_set = true;
			break;
		case 'n':
			other_opts = true;
			if (!parse_u32("-n", optarg, 5, 100000000, &v))
				goto done;
			c->conf.iters = v;
			break;
		case 'a':
			other_opts = true;
			c->all = true;
			break;
		case 'M':
			other_opts = true;
			if (!parse_u32("--all-max", optarg, 2, ROCE_PERF_ALL_MAX, &c->all_max))
				goto done;
			break;
		case 'c':
			other_opts = true;
			if (strcmp(optarg, "RC") == 0)
				c->conf.qp_type = ROCE_QPT_RC;
			else if (strcmp(optarg, "UC") == 0)
				c->conf.qp_type = ROCE_QPT_UC;
			else if (strcmp(optarg, "UD") == 0)
				c->conf.qp_type = ROCE_QPT_UD;
			else {
				rocelab_usage_error("compare", "-c '%s': expected RC, UC or UD", optarg);
				goto done;
			}
			break;
		case 'q':
			other_opts = true;
			if (!parse_u32("-q", optarg, 1, ROCE_PERF_MAX_QP, &c->conf.nqp))
				goto done;
			break;
		case 't':
			other_opts = true;
			if (!parse_u32("-t", optarg, 1, 16384, &c->conf.tx_depth))
				goto done;
			break;
		case 'm':
			other_opts = true;
			if (!parse_u32("-m", optarg, 256, 4096, &v))
				goto done;
			if (roce_mtu_from_bytes(v) == 0) {
				rocelab_usage_error("compare", "-m %u: expected 256, 512, 1024, 2048 or "
						    "4096", v);
				goto done;
			}
			c->conf.mtu = roce_mtu_from_bytes(v);
			c->live.mtu_set = true;
			break;
		case 'o':
			other_opts = true;
			out = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			rc = EXIT_SUCCESS;
			goto done;
		case ':':
			rocelab_usage_error("compare", "option '%s' needs a value", argv[optind - 1]);
			goto done;
		default:
			rocelab_usage_error("compare", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if (optind < argc) {
		rocelab_usage_error("compare", "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (c->live.ibdev == NULL) {
		rocelab_usage_error("compare", "no device: --ibdev DEV (`rocelab devices` lists them)");
		goto done;
	}
	if (out != NULL && rocelab_mkdir_p(out) != 0) {	/* before minutes of runs, not after */
		fprintf(stderr, "rocelab compare: --out %s: %s\n", out, strerror(errno));
		rc = EXIT_FAILURE;
		goto done;
	}
	if (c->all_max != 0 && !c->all) {
		rocelab_usage_error("compare", "--all-max goes with -a");
		goto done;
	}
	if (strcmp(argv[1], "completions") == 0) {
		if (other_opts) {
			rocelab_usage_error("compare", "completions takes --ibdev, -x and -i only");
			goto done;
		}
		rc = run_completions(c);
		goto done;
	}
	c->live.all = c->all;
	c->live.all_max = c->all_max;
	if (c->all && !size_set)
		c->conf.size = c->conf.test == ROCE_PERF_ATOMIC_BW ? 8 : 2;
	if (roce_perf_check(&c->conf, err, sizeof(err)) != 0 ||
	    roce_perf_live_check(&c->conf, &c->live, err, sizeof(err)) != 0) {
		rocelab_usage_error("compare", "%s", err);
		goto done;
	}

	/* what the device reports sets the emulator up */
	dev = roce_ibdev_open(c->live.ibdev, err, sizeof(err));
	if (dev == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		rc = EXIT_FAILURE;
		goto done;
	}
	info = roce_ibdev_info(dev);
	if ((c->live.ib_port ? c->live.ib_port : 1) > info->n_ports) {
		fprintf(stderr, "rocelab compare: %s has %u port(s): no port %u (-i)\n", info->name,
			info->n_ports, c->live.ib_port);
		roce_ibdev_close(dev);
		rc = EXIT_USAGE;
		goto done;
	}
	port = &info->ports[(c->live.ib_port ? c->live.ib_port : 1) - 1];
	c->conf.rate_bps = (uint64_t)(port->lanes * port->lane_gbps * 1e9);
	if (c->conf.rate_bps == 0)
		c->conf.rate_bps = 100000000000ull;
	if (!c->live.mtu_set || roce_mtu_bytes(c->conf.mtu) > port->active_mtu)
		c->conf.mtu = roce_mtu_from_bytes(port->active_mtu);
	roce_ibdev_close(dev);
	if (rocelab_eal_start() != 0) {
		rc = EXIT_FAILURE;
		goto done;
	}

	t0 = now_sec();
	rc = calibrate(c, &dev_lat, &delay);
	if (rc != 0)
		goto done;
	c->conf.delay = delay;
	rc = run_device(c, &c->conf);
	c->dev_sec = now_sec() - t0;
	if (rc != 0)
		goto done;
	t0 = now_sec();
	rc = run_emulator(c);
	c->emu_sec = now_sec() - t0;
	if (rc != 0)
		goto done;

	snprintf(setup, sizeof(setup), "%s port %u, path MTU %u, %.1f Gb/s (speed x width). The "
		 "emulator: the same rate and MTU, a one-way delay of %.2f us, which makes its 2-byte "
		 "write_lat the device's %.2f us. %s over %s, %u QP(s), %llu iterations a size. "
		 "The device's half took %.2f s of wall-clock time (its calibration included), the "
		 "emulator's %.2f s.", c->live.ibdev, c->live.ib_port ? c->live.ib_port : 1,
		 roce_mtu_bytes(c->conf.mtu), (double)c->conf.rate_bps / 1e9,
		 (double)delay / ROCE_US, dev_lat, roce_perf_test_name(c->conf.test),
		 c->conf.qp_type == ROCE_QPT_UD ? "UD" : c->conf.qp_type == ROCE_QPT_UC ? "UC" : "RC",
		 c->conf.nqp, (unsigned long long)c->conf.iters, c->dev_sec, c->emu_sec);
	t = make_table(c);
	if (t == NULL) {
		rc = EXIT_FAILURE;
		goto done;
	}
	printf(" %s\n\n", setup);
	roce_table_print(t, stdout);
	rc = out != NULL ? write_report(c, t, setup, out) : EXIT_SUCCESS;
	roce_table_destroy(t);
done:
	free(c);
	return rc;
}

const struct rocelab_cmd cmd_compare = {
	.name = "compare",
	.summary = "one perftest workload on a real RDMA device and on the emulator, side by side",
	.usage = usage,
	.run = run,
	.needs_eal = false,	/* run() starts it after the device's checks */
};
