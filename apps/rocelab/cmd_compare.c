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
#include <unistd.h>

#include "cmd_perf.h"
#include "roce_capture.h"
#include "roce_front.h"
#include "roce_ibdev.h"
#include "roce_io.h"
#include "roce_pattern.h"
#include "roce_perf.h"
#include "roce_report.h"
#include "rocelab.h"

#define CMP_MAX_ROWS 32			/* -a: 2 B .. 8 MiB */
#define CMP_CAL_ITERS 1000		/* write_lat 2 B round trips that calibrate the delay */
#define CMP_SNAPLEN 128			/* bytes kept of each frame: its headers, as tcpdump -s */
#define CMP_SHOWN 16			/* frames of each run side by side on the terminal */
#define CMP_SHOWN_HTML 64		/* ... and in report.html */
#define CMP_COL 70			/* characters of a frame's column on the terminal */
#define CMP_DIFFS 5			/* differing messages listed */
#define RXE_VENDOR_ID 0xffffff		/* the kernel's soft-RoCE (rdma_rxe's rxe_param.h) */

enum { OPT_TIMEOUT = 256 };

static const char usage[] =
	"usage: rocelab compare TEST --ibdev DEV [-x GID_INDEX] [-i PORT] [options] [--out DIR]\n"
	"                       [PEER]\n"
	"       rocelab compare completions --ibdev DEV [-x GID_INDEX] [-i PORT]\n"
	"\n"
	"Run perftest's TEST on a real RDMA device (both ends in this process, in loopback\n"
	"through it; or, given PEER, as the client of a server there) and on the emulated NIC in\n"
	"virtual time, set up from what the device reported: the link rate from its speed x\n"
	"width, the path MTU, and a one-way delay that makes the emulator's 2-byte write_lat what\n"
	"the device's is in loopback. Prints one table with both rows and their ratio; the frames\n"
	"of both runs side by side where the device's can be captured (libpcap on its network\n"
	"interface), and their packet pattern compared message by message (docs/devices.md).\n"
	"\n"
	"  TEST                  write_bw, read_bw, send_bw, atomic_bw, write_lat, read_lat,\n"
	"                        send_lat\n"
	"  PEER                  the device's half is the client of perftest's exchange with a\n"
	"                        server there (perftest, rocelab perf --ibdev, rocelab emulated\n"
	"                        on a DPDK port), so that its frames cross its interface\n"
	"  --ibdev DEV, -d DEV   the device (`rocelab devices` lists them)\n"
	"  -x GID_INDEX, -i PORT its RoCE v2 GID and its port, as rocelab perf --ibdev\n"
	"  -s SIZE, -n ITERS, -a, --all-max N, -c RC|UC|UD, -q QPS, -t DEPTH, -m MTU\n"
	"                        perftest's, for both runs\n"
	"  -p PORT               PEER's TCP port (default 18515)\n"
	"  --timeout S           give up after S s without the peer or progress (default 30)\n"
	"  --out DIR             also write DIR/report.html (the set-up, the table, both curves\n"
	"                        with -a, the frames, the pattern), DIR/device.pcap (the\n"
	"                        device's frames, as captured) and DIR/emulator.pcap (the\n"
	"                        emulator's); the first 128 bytes of each frame (created if\n"
	"                        missing)\n"
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
	{ "port", required_argument, NULL, 'p' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "out", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One size's figures from each side. */
struct cmp_row {
	uint32_t size;
	struct roce_perf_result dev, emu;
};

/* The frames of both runs: where they go, what the device's capture saw. */
struct cmp_frames {
	char dir[4096];			/* --out DIR, or a directory of our own */
	bool tmp;			/* @dir is ours: removed at the end */
	char dev_path[4200];		/* DIR/device.pcap */
	char emu_path[4200];		/* DIR/emulator.pcap */
	struct roce_pcap_writer *dev_w;	/* the device's capture file, while open */
	struct roce_pcap_writer *emu_w;	/* the emulator's */
	char netdev[16];		/* the device's network interface; "" none */
	char addr[64];			/* its GID's address, the capture's filter */
	bool soft;			/* the kernel's soft-RoCE */
	struct roce_ifcap *ifcap;	/* the capture, while the device's half runs */
	bool captured;			/* it ran */
	struct roce_ifcap_stats st;	/* what it saw */
	uint64_t emu_frames;		/* frames the emulator's runs wrote */
	char note[400];			/* the frames line, when there are none to show */
};

struct cmp {
	struct roce_perf_conf conf;	/* the workload, as both run it */
	struct roce_perf_live live;	/* the device */
	const char *peer;		/* PEER: the device's half is its client; NULL: loopback */
	bool all;
	uint32_t all_max;
	struct cmp_row rows[CMP_MAX_ROWS];
	uint32_t nrows;
	double dev_sec, emu_sec;	/* wall-clock seconds each half took */
	struct cmp_frames fr;
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
		int e = errno;

		fprintf(stderr, "rocelab compare: %s\n", err);
		return e == EINVAL ? EXIT_USAGE : EXIT_FAILURE;	/* PEER that is not a name */
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

/*
 * The device's half: @p conf's workload, in loopback or, @p to_peer, as the client of PEER.
 * @return an exit status
 */
static int run_device(struct cmp *c, const struct roce_perf_conf *conf, bool to_peer)
{
	struct roce_perf_conf saved = c->conf;
	struct roce_perf_live lv = c->live;
	char err[256];
	int rc;

	c->conf = *conf;
	if (to_peer) {
		lv.peer = c->peer;
		rc = dev_client(c, &lv);
	} else {
		lv.peer = NULL;
		lv.tcp_port = 0;	/* -p is PEER's: the two halves find a free port */
		rc = roce_perf_loopback(&c->conf, &lv, dev_client, c, err, sizeof(err));
	}
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
	rc = run_device(c, &lat, false);	/* in loopback: PEER serves one test, TEST */
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

	conf.pcap_writer = c->fr.emu_w;
	conf.snaplen = CMP_SNAPLEN;
	for (uint32_t r = 0; r < c->nrows; r++) {
		conf.size = c->rows[r].dev.size ? c->rows[r].dev.size : c->conf.size;
		if (r != 0 && c->fr.emu_w != NULL)	/* the next size after the last, as perf -a */
			roce_pcap_writer_resume(c->fr.emu_w, ROCE_MS / ROCE_NS);
		if (roce_perf_run(&conf, &c->rows[r].emu) != 0) {
			fprintf(stderr, "rocelab compare: the emulator's run of %u bytes failed\n",
				conf.size);
			return EXIT_FAILURE;
		}
		c->rows[r].size = conf.size;
		c->fr.emu_frames += c->rows[r].emu.frames;
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

/* ---- the frames of both runs ---- */

/*
 * Where the captures go: --out DIR, or a directory of our own removed at the end. The files are
 * opened now, before minutes of runs, so that one that cannot be written is said first.
 * @return an exit status
 */
static int frames_open(struct cmp *c, const char *out)
{
	struct cmp_frames *fr = &c->fr;
	const char *tmp = getenv("TMPDIR");
	char err[256];

	if (out != NULL) {
		snprintf(fr->dir, sizeof(fr->dir), "%s", out);
	} else {
		snprintf(fr->dir, sizeof(fr->dir), "%s/rocelab-compare-XXXXXX",
			 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
		if (mkdtemp(fr->dir) == NULL) {
			fprintf(stderr, "rocelab compare: %s: %s\n", fr->dir, strerror(errno));
			return EXIT_FAILURE;
		}
		fr->tmp = true;
	}
	snprintf(fr->dev_path, sizeof(fr->dev_path), "%s/device.pcap", fr->dir);
	snprintf(fr->emu_path, sizeof(fr->emu_path), "%s/emulator.pcap", fr->dir);
	fr->dev_w = roce_pcap_create_snap(fr->dev_path, CMP_SNAPLEN, err, sizeof(err));
	if (fr->dev_w == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		return EXIT_FAILURE;
	}
	fr->emu_w = roce_pcap_create_snap(fr->emu_path, CMP_SNAPLEN, err, sizeof(err));
	if (fr->emu_w == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		return EXIT_FAILURE;
	}
	return 0;
}

/* Capture the device's interface while its half runs; where it cannot, say why and go on. */
static void frames_start(struct cmp *c)
{
	struct cmp_frames *fr = &c->fr;
	char bpf[128], err[256];

	if (fr->netdev[0] == '\0') {
		snprintf(fr->note, sizeof(fr->note), "frames: not captured: %s's GID %s belongs to "
			 "no network interface", c->live.ibdev, fr->addr);
		return;
	}
	/* the device's own RoCE frames: not the exchange's TCP, nor another address's RoCE */
	snprintf(bpf, sizeof(bpf), "udp port %u and host %s", ROCE_UDP_PORT, fr->addr);
	fr->ifcap = roce_ifcap_start(fr->netdev, bpf, CMP_SNAPLEN, fr->dev_w, err, sizeof(err));
	if (fr->ifcap == NULL)
		snprintf(fr->note, sizeof(fr->note), "frames: not captured: %s", err);
}

/* Stop the capture; where it saw nothing, say why. */
static void frames_stop(struct cmp *c)
{
	struct cmp_frames *fr = &c->fr;

	if (fr->ifcap == NULL)
		return;
	/* a frame it could not write fails the file's close, which says so */
	(void)roce_ifcap_stop(fr->ifcap, &fr->st);
	fr->ifcap = NULL;
	fr->captured = true;
	if (fr->st.roce != 0)
		return;
	if (fr->soft && c->peer == NULL)
		/* rxe_net.c: a packet to one of its own GIDs never reaches the interface */
		snprintf(fr->note, sizeof(fr->note), "frames: none reached %s: %s loops its own "
			 "traffic back inside the driver; give PEER to see them", fr->netdev,
			 c->live.ibdev);
	else if (fr->soft)
		snprintf(fr->note, sizeof(fr->note), "frames: none of %s's reached %s (is PEER "
			 "this host?)", c->live.ibdev, fr->netdev);
	else
		snprintf(fr->note, sizeof(fr->note), "frames: none reached %s: %s offloads RoCE, and "
			 "such a NIC never shows the kernel its frames (a switch's mirror port would)",
			 fr->netdev, c->live.ibdev);
}

/* Close a capture file under its name, or say in one line why it cannot be. */
static int close_capture(struct roce_pcap_writer *w, const char *path)
{
	int e;

	if (w == NULL)
		return 0;
	if (roce_pcap_flush_writer(w) != 0) {
		e = roce_pcap_writer_fault(w, NULL);
		fprintf(stderr, "rocelab compare: %s: %s\n", path, strerror(e ? e : EIO));
		roce_pcap_discard_writer(w);	/* the name keeps what it held */
		return EXIT_FAILURE;
	}
	if (roce_pcap_close_writer(w) != 0) {
		fprintf(stderr, "rocelab compare: %s: not written\n", path);
		return EXIT_FAILURE;
	}
	return 0;
}

/*
 * Close the files once both runs are done. The device's is dropped when there was no capture:
 * an empty file would say it saw nothing. @return an exit status
 */
static int frames_close(struct cmp *c)
{
	struct cmp_frames *fr = &c->fr;
	int rc;

	if (!fr->captured)
		roce_pcap_discard_writer(fr->dev_w);
	rc = fr->captured ? close_capture(fr->dev_w, fr->dev_path) : 0;
	fr->dev_w = NULL;
	if (rc == 0)
		rc = close_capture(fr->emu_w, fr->emu_path);
	else
		roce_pcap_discard_writer(fr->emu_w);
	fr->emu_w = NULL;
	return rc;
}

/* Whatever is left: files not closed are dropped, a directory of our own removed. */
static void frames_cleanup(struct cmp *c)
{
	struct cmp_frames *fr = &c->fr;

	roce_ifcap_stop(fr->ifcap, NULL);
	roce_pcap_discard_writer(fr->dev_w);
	roce_pcap_discard_writer(fr->emu_w);
	if (fr->tmp) {
		unlink(fr->dev_path);
		unlink(fr->emu_path);
		rmdir(fr->dir);
	}
}

/* The first frames of a capture, as the dissector prints them. */
struct shown {
	uint32_t n;				/* frames read, up to CMP_SHOWN_HTML */
	double us[CMP_SHOWN_HTML];		/* time from the first frame */
	char dir[CMP_SHOWN_HTML];		/* '>' from the side that sent first, '<' to it */
	char text[CMP_SHOWN_HTML][256];		/* the dissector's line */
};

static int read_shown(const char *path, struct shown *sh)
{
	struct roce_ip_addr first = { { 0 } };
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	uint64_t t0 = 0;
	char err[256];
	int rc = 0;

	sh->n = 0;
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	if (r == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		return -1;
	}
	while (sh->n < CMP_SHOWN_HTML && (rc = roce_pcap_next(r, &f)) == 1) {
		uint32_t i = sh->n++;

		/* cut to the headers: the ICRC cannot be checked, the lengths are the IP header's */
		roce_wire_parse(f.data, f.caplen, ROCE_PARSE_CAPTURE | ROCE_PARSE_NO_ICRC, &pkt);
		if (i == 0) {
			first = pkt.src;
			t0 = f.ts_ns;
		}
		sh->us[i] = (double)(f.ts_ns - t0) / 1e3;
		/* ">": from the side that sent first (the requester, or the client of a _lat) */
		sh->dir[i] = memcmp(&pkt.src, &first, sizeof(first)) == 0 ? '>' : '<';
		roce_pkt_snprint(sh->text[i], sizeof(sh->text[i]), &pkt);
	}
	if (rc < 0)
		fprintf(stderr, "rocelab compare: %s\n", roce_pcap_error(r));
	roce_pcap_close(r);
	return rc < 0 ? -1 : 0;
}

/*
 * A frame's line on the terminal: without its addresses (the same on every line) and without
 * the ICRC's status (both runs are cut before it), cut to a column.
 */
static void column(const struct shown *sh, uint32_t i, char *out, size_t size)
{
	static const char no_icrc[] = " icrc not captured";
	const char *p;
	size_t len;

	if (i >= sh->n) {
		out[0] = '\0';
		return;
	}
	p = strstr(sh->text[i], " > ");
	p = p != NULL ? strchr(p + 3, ' ') : NULL;
	snprintf(out, size, "%c %s", sh->dir[i], p != NULL ? p + 1 : sh->text[i]);
	len = strlen(out);
	if (len >= sizeof(no_icrc) - 1 && strcmp(out + len - (sizeof(no_icrc) - 1), no_icrc) == 0)
		out[len - (sizeof(no_icrc) - 1)] = '\0';
	if (strlen(out) > CMP_COL)
		strcpy(out + CMP_COL - 3, "...");
}

/* What the frames and pattern sections hold, for the terminal and report.html alike. */
struct cmp_show {
	char line[600];			/* the frames line */
	struct roce_table *frames;	/* side by side (report.html), or NULL */
	char *pattern;			/* roce_pattern_print()'s lines, or NULL */
	size_t pattern_len;
};

/*
 * Both runs' first frames side by side, and their packet patterns compared. Differences are
 * findings, not failures. @return 0, or -1 with one line on stderr (a file that cannot be read)
 */
static int show_frames(const struct cmp *c, const char *out, struct cmp_show *sh)
{
	static struct shown dev, emu;
	char dev_us[80], dev_col[80];
	const char *cols[] = { "#", dev_us, dev_col, "emulator µs", "<emulator" };
	const struct cmp_frames *fr = &c->fr;
	const char *names[2] = { c->live.ibdev, "emulator" };
	struct roce_pattern *pd, *pe;
	struct roce_pattern_cmp cmp;
	char err[256], a[256], b[256];
	FILE *f;

	if (fr->note[0] != '\0') {
		snprintf(sh->line, sizeof(sh->line), "%s", fr->note);
		printf("\n %s\n", sh->line);
		return 0;
	}
	if (read_shown(fr->dev_path, &dev) != 0 || read_shown(fr->emu_path, &emu) != 0)
		return -1;
	snprintf(sh->line, sizeof(sh->line), "frames: %llu RoCE frames captured on %s during %s's "
		 "run (%llu lost by the capture), %llu written by the emulator's; ",
		 (unsigned long long)fr->st.roce, fr->netdev, c->live.ibdev,
		 (unsigned long long)fr->st.dropped, (unsigned long long)fr->emu_frames);
	if (out != NULL)
		snprintf(sh->line + strlen(sh->line), sizeof(sh->line) - strlen(sh->line),
			 "%s/device.pcap and %s/emulator.pcap hold them (the first %u bytes of "
			 "each)", out, out, CMP_SNAPLEN);
	else
		snprintf(sh->line + strlen(sh->line), sizeof(sh->line) - strlen(sh->line),
			 "--out DIR keeps them");
	printf("\n %s. The first %u of each, \">\" from the side that sent first:\n\n", sh->line,
	       CMP_SHOWN);
	snprintf(a, sizeof(a), "%s (%s)", c->live.ibdev, fr->netdev);
	printf(" %4s  %-*s  %s\n", "#", CMP_COL, a, "emulator");
	for (uint32_t i = 0; i < CMP_SHOWN && i < ROCE_MAX(dev.n, emu.n); i++) {
		column(&dev, i, a, sizeof(a));
		column(&emu, i, b, sizeof(b));
		printf(" %4u  %-*s  %s\n", i + 1, CMP_COL, a, b);
	}
	snprintf(dev_us, sizeof(dev_us), "%s µs", c->live.ibdev);
	snprintf(dev_col, sizeof(dev_col), "<%s (%s)", c->live.ibdev, fr->netdev);
	sh->frames = roce_table_create("the first frames of each run, and their time from the "
				       "first (µs)", 5, cols);
	for (uint32_t i = 0; sh->frames != NULL && i < ROCE_MAX(dev.n, emu.n); i++) {
		roce_table_add(sh->frames, "%u", i + 1);
		if (i < dev.n)
			roce_table_add(sh->frames, "%.3f", dev.us[i]);
		else
			roce_table_add(sh->frames, "-");
		roce_table_add(sh->frames, "%s", i < dev.n ? dev.text[i] : "");
		if (i < emu.n)
			roce_table_add(sh->frames, "%.3f", emu.us[i]);
		else
			roce_table_add(sh->frames, "-");
		roce_table_add(sh->frames, "%s", i < emu.n ? emu.text[i] : "");
	}

	pd = roce_pattern_read(fr->dev_path, err, sizeof(err));
	pe = pd != NULL ? roce_pattern_read(fr->emu_path, err, sizeof(err)) : NULL;
	if (pe == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		roce_pattern_destroy(pd);
		return -1;
	}
	roce_pattern_compare(pd, pe, &cmp);
	roce_pattern_destroy(pd);
	roce_pattern_destroy(pe);
	printf("\n");
	roce_pattern_print(&cmp, names, CMP_DIFFS, stdout);
	f = open_memstream(&sh->pattern, &sh->pattern_len);
	if (f != NULL) {
		roce_pattern_print(&cmp, names, CMP_DIFFS, f);
		fclose(f);
	}
	return 0;
}

static int write_report(const struct cmp *c, const struct roce_table *t, const char *setup,
			const char *dir, const struct cmp_show *sh)
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
	roce_report_text(rep, sh->line);
	if (sh->frames != NULL)
		roce_report_table(rep, sh->frames);
	if (sh->pattern != NULL) {
		const char *items[64];
		size_t n = 0;

		/* one item a line, the heading line apart */
		for (char *l = strtok(sh->pattern, "\n"); l != NULL && n < ROCE_DIM(items);
		     l = strtok(NULL, "\n"))
			items[n++] = l + strspn(l, " ");
		roce_report_heading(rep, "Packet pattern");
		if (n > 0)
			roce_report_list(rep, items[0], items + 1, n - 1);
	}
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

static bool parse_seconds(const char *what, const char *arg, double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(x >= 0 && x <= 86400)) {
		rocelab_usage_error("compare", "%s '%s': expected seconds from 0 to 86400", what,
				    arg);
		return false;
	}
	*v = x;
	return true;
}

static int run(int argc, char **argv)
{
	struct cmp *c;
	const char *out = NULL;
	const struct roce_ibdev_info *info;
	const struct roce_ibdev_port *port;
	const struct roce_ibdev_gid *g;
	struct roce_ibdev *dev;
	struct roce_table *t;
	struct cmp_show show = { .line = "" };
	char err[256], setup[1536];
	double dev_lat = 0, t0;
	roce_time_t delay = 0;
	uint32_t v;
	int test, opt, rc;
	bool size_set = false, other_opts = false, port_set = false;

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
	while ((opt = getopt_long(argc, argv, ":d:x:i:s:n:ac:q:t:m:p:o:h", long_opts, NULL)) != -1) {
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
		case 'p':
			other_opts = true;
			if (!parse_u32("-p", optarg, 1, 65535, &v))
				goto done;
			c->live.tcp_port = (uint16_t)v;
			port_set = true;
			break;
		case OPT_TIMEOUT:
			other_opts = true;
			if (!parse_seconds("--timeout", optarg, &c->live.timeout))
				goto done;
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
	if (optind < argc)
		c->peer = argv[optind++];
	if (optind < argc) {
		rocelab_usage_error("compare", "unexpected argument '%s' (one PEER at most)",
				    argv[optind]);
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
	if (port_set && c->peer == NULL) {
		rocelab_usage_error("compare", "-p is PEER's port: give PEER (without it, both ends "
				    "run in this process)");
		goto done;
	}
	if (strcmp(argv[1], "completions") == 0) {
		if (c->peer != NULL) {
			rocelab_usage_error("compare", "completions runs both QPs on the device: no "
					    "PEER ('%s')", c->peer);
			goto done;
		}
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
	/* the GID the run takes, as it takes it: its interface and address are the capture's */
	g = roce_ibdev_gid_pick(port, c->live.gid_index, c->live.ip_ver == 6, err, sizeof(err));
	if (g == NULL) {
		fprintf(stderr, "rocelab compare: %s\n", err);
		roce_ibdev_close(dev);
		rc = EXIT_USAGE;
		goto done;
	}
	snprintf(c->fr.netdev, sizeof(c->fr.netdev), "%s", g->netdev);
	roce_gid_text(g->gid, c->fr.addr, sizeof(c->fr.addr));
	c->fr.soft = info->vendor_id == RXE_VENDOR_ID;
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

	rc = frames_open(c, out);
	if (rc != 0)
		goto done;

	/*
	 * PEER's server is waiting for us (rocelab's gives up after its --timeout): its run goes
	 * first, and a PEER that does not answer is said at once. The calibration is in loopback.
	 */
	t0 = now_sec();
	if (c->peer == NULL)
		rc = calibrate(c, &dev_lat, &delay);
	if (rc == 0) {
		frames_start(c);
		rc = run_device(c, &c->conf, c->peer != NULL);
		frames_stop(c);
	}
	if (rc == 0 && c->peer != NULL)
		rc = calibrate(c, &dev_lat, &delay);
	c->dev_sec = now_sec() - t0;
	if (rc != 0)
		goto done;
	c->conf.delay = delay;
	if (c->fr.st.roce == 0 && out == NULL) {	/* nothing to set the emulator's beside */
		roce_pcap_discard_writer(c->fr.emu_w);
		c->fr.emu_w = NULL;
	}
	t0 = now_sec();
	rc = run_emulator(c);
	c->emu_sec = now_sec() - t0;
	if (rc != 0)
		goto done;
	rc = frames_close(c);
	if (rc != 0)
		goto done;

	snprintf(setup, sizeof(setup), "%s port %u, path MTU %u, %.1f Gb/s (speed x width). The "
		 "emulator: the same rate and MTU, a one-way delay of %.2f us, which makes its 2-byte "
		 "write_lat the device's %.2f us in loopback. %s over %s, %u QP(s), %llu iterations "
		 "a size, %s%s. The device's half took %.2f s of wall-clock time (its calibration "
		 "included), the emulator's %.2f s.", c->live.ibdev,
		 c->live.ib_port ? c->live.ib_port : 1, roce_mtu_bytes(c->conf.mtu),
		 (double)c->conf.rate_bps / 1e9, (double)delay / ROCE_US, dev_lat,
		 roce_perf_test_name(c->conf.test),
		 c->conf.qp_type == ROCE_QPT_UD ? "UD" : c->conf.qp_type == ROCE_QPT_UC ? "UC" : "RC",
		 c->conf.nqp, (unsigned long long)c->conf.iters,
		 c->peer != NULL ? "on the device as the client of a server at " :
		 "both ends on the device", c->peer != NULL ? c->peer : "", c->dev_sec, c->emu_sec);
	t = make_table(c);
	if (t == NULL) {
		rc = EXIT_FAILURE;
		goto done;
	}
	printf(" %s\n\n", setup);
	roce_table_print(t, stdout);
	rc = show_frames(c, out, &show) != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	if (rc == EXIT_SUCCESS && out != NULL)
		rc = write_report(c, t, setup, out, &show);
	roce_table_destroy(t);
	roce_table_destroy(show.frames);
	free(show.pattern);
done:
	frames_cleanup(c);
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
