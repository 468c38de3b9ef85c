/*
 * rocelab demo: four steps, each measured side by side, printed as tables and drawn in one
 * report. The fabrics are the built-in scenarios of scenarios/ (demo-*.ini), run with
 * overrides; step 1's other side is the kernel TCP path model of lib/perf.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fab_private.h"
#include "roce_file.h"
#include "roce_report.h"
#include "roce_tcpmodel.h"

struct demo {
	const struct roce_demo_conf *conf;
	struct roce_demo_result *res;
	struct roce_report *rep;
	uint64_t seed;			/* of the next run: conf->seed, or one of a step's seeds */
	char err[512];
	char cap_err[512];		/* the first capture cut short: the tour goes on, fails last */
};

static void say(struct demo *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct demo *d, const char *fmt, ...)
{
	va_list ap;

	if (d->conf->out == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(d->conf->out, fmt, ap);
	va_end(ap);
	fflush(d->conf->out);
}

static void show(struct demo *d, struct roce_table *t)
{
	if (d->conf->out != NULL) {
		roce_table_print(t, d->conf->out);
		fputc('\n', d->conf->out);
	}
	roce_report_table(d->rep, t);
	roce_table_destroy(t);
}

/* Both the terminal and the report get the step's explanation. */
static void step(struct demo *d, const char *title, const char *text)
{
	say(d, "%s\n%s\n\n", title, text);
	roce_report_heading(d->rep, title);
	roce_report_text(d->rep, text);
}

/*
 * A run that returned @p ret: why it failed, the capture's reason first (a full disk: where to
 * go instead), else @p otherwise. @return true if only the capture failed (-EIO with a capture
 * error): the run itself is whole and the tour goes on, the first such reason kept for its end.
 */
static bool capture_failed(struct demo *d, const char *name, const struct roce_fabric *fab,
			   int ret, const char *otherwise)
{
	int e;
	const char *why = roce_fabric_capture_error(fab, &e);
	bool only = why != NULL && ret == -EIO;
	char *out = only ? d->cap_err : d->err;
	struct roce_fabric_balance b;
	char text[256];

	if (only && d->cap_err[0] != '\0')
		return true;
	if (ret == -EPROTO && !roce_fabric_balance(fab, &b)) {
		/* as rocelab run says it: a bug of ours, with the counts to look into it */
		snprintf(out, sizeof(d->err), "%s: internal error: the frames do not add up: %s",
			 name, roce_fabric_balance_text(&b, text, sizeof(text)));
		return false;
	}
	snprintf(out, sizeof(d->err), "%s: %s%s", name, why != NULL ? why : otherwise,
		 why != NULL && e == ENOSPC ? "; the demo's captures take some 400 MB "
		 "(--quick less): free some space, or give --out DIR on another disk" : "");
	return only;
}

/* Run built-in scenario @p name with overrides; the caller destroys *scp and the fabric. */
static struct roce_fabric *run_builtin(struct demo *d, const char *name, const char *const *set,
				       int nset, const char *pcap, struct roce_scenario **scp)
{
	const char *text = roce_scenario_builtin(name);
	const char *sets[16];
	char seed[48], path[4096];
	struct roce_run_conf rc = { 0 };
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	int ret;

	if (text == NULL) {
		snprintf(d->err, sizeof(d->err), "no built-in scenario %s", name);
		return NULL;
	}
	snprintf(seed, sizeof(seed), "scenario.seed=%" PRIu64, d->seed);
	sets[0] = seed;
	for (int i = 0; i < nset && i < 15; i++)
		sets[i + 1] = set[i];
	sc = roce_scenario_parse(name, text, sets, ROCE_MIN(nset, 15) + 1, d->err, sizeof(d->err));
	if (sc == NULL)
		return NULL;
	fab = roce_fabric_create(sc, d->err, sizeof(d->err));
	if (fab == NULL) {
		roce_scenario_destroy(sc);
		return NULL;
	}
	if (pcap != NULL && d->conf->out_dir != NULL) {
		snprintf(path, sizeof(path), "%s/%s", d->conf->out_dir, pcap);
		rc.pcap = path;
	}
	ret = roce_fabric_run(fab, &rc);
	if (ret != 0 && !capture_failed(d, name, fab, ret, strerror(-ret))) {
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
		return NULL;
	}
	*scp = sc;
	return fab;
}

static struct roce_chart *bars(const char *title, const char *ylabel, const char *const *cats,
			       size_t ncats, const char *series, const double *v)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_BAR, title, NULL, ylabel);

	roce_chart_categories(c, cats, ncats);
	roce_chart_series(c, series, NULL, v, ncats);
	return c;
}

/* ---- step 1: zero copy ---- */

static int step_zerocopy(struct demo *d)
{
	static const char *const hdr[] = {
		"<path", "copies of each byte", "by the host CPU", "host CPU (ms)",
		"host CPU per GiB (ms)", "cores for 100 Gb/s",
	};
	static const char *const stage_hdr[] = { "<copy", "time (ms)", "GB/s" };
	struct roce_tcp_model_conf tc = { .bytes = d->conf->quick ? 8u << 20 : 64u << 20 };
	struct roce_tcp_model_result tr;
	struct roce_scenario *sc = NULL;
	struct roce_fabric *fab;
	struct roce_flow_result fr;
	struct roce_table *t, *st;
	char count[48], title[80];
	const char *set[1];
	double tcp_cpu, gib, line_sec;
	int rc;

	step(d, "Step 1/4  Zero copy: RDMA WRITE against the kernel TCP path",
	     "The kernel TCP path moves each byte four times: send() copies it into a socket buffer "
	     "and checksums it, the NIC's DMA takes it to the wire, the receiving NIC's DMA puts it "
	     "in a socket buffer, recv() copies it out. The model below really performs all four "
	     "copies and times them. RDMA WRITE moves it twice, both by DMA and zero times by the "
	     "CPU: the NIC reads the source memory region onto the wire and the peer's NIC writes "
	     "it into the target; the host CPU only posts work requests and polls completions "
	     "(timed here as the application's time in the emulator).");
	rc = roce_tcp_model_run(&tc, &tr);
	if (rc != 0) {
		snprintf(d->err, sizeof(d->err), "TCP model: %s", strerror(-rc));
		return rc;
	}
	snprintf(count, sizeof(count), "flow.write.count=%" PRIu64, tc.bytes / 65536);
	set[0] = count;
	fab = run_builtin(d, "demo-zerocopy", set, 1, "zerocopy.pcap", &sc);
	if (fab == NULL)
		return -EINVAL;
	roce_fabric_flow_result(fab, 0, &fr);
	gib = (double)tc.bytes / (1u << 30);
	line_sec = (double)tc.bytes * 8 / 100e9;
	tcp_cpu = tr.stage_sec[0] + tr.stage_sec[3];
	snprintf(title, sizeof(title), "Moving %" PRIu64 " MiB from one host's memory to another's",
		 tc.bytes >> 20);
	t = roce_table_create(title, (int)ROCE_DIM(hdr), hdr);
	roce_table_add(t, "kernel TCP (model)");
	roce_table_add(t, "4 (2 by DMA)");
	roce_table_add(t, "2");
	roce_table_add(t, "%.2f", tcp_cpu * 1e3);
	roce_table_add(t, "%.2f", tcp_cpu * 1e3 / gib);
	roce_table_add(t, "%.2f", tcp_cpu / line_sec);
	roce_table_add(t, "RDMA WRITE (rocelab)");
	roce_table_add(t, "2 (2 by DMA)");
	roce_table_add(t, "0");
	roce_table_add(t, "%.2f", fr.app_sec * 1e3);
	roce_table_add(t, "%.2f", fr.app_sec * 1e3 / gib);
	roce_table_add(t, "%.3f", fr.app_sec / line_sec);
	roce_table_note(t, "TCP: CPU time of copies 1 and 4 only; syscalls, interrupts and protocol "
			"work add more on a real host. RDMA: its virtual-time goodput on a 100G link is "
			"under the next table.");
	show(d, t);
	st = roce_table_create("The TCP model's four copies, each timed", 3, stage_hdr);
	for (int i = 0; i < ROCE_TCP_COPIES; i++) {
		roce_table_add(st, "%d. %s", i + 1, tr.stage_name[i]);
		roce_table_add(st, "%.2f", tr.stage_sec[i] * 1e3);
		roce_table_add(st, "%.1f", (double)tc.bytes / tr.stage_sec[i] / 1e9);
	}
	roce_table_note(st, "what a Linux host would go through for the same transfer:");
	{
		char note[256];

		snprintf(note, sizeof(note), "  %" PRIu64 " send()+recv() calls, %" PRIu64
			 " TCP segments of 1448 B, %" PRIu64 " receive interrupts (16 segments each); "
			 "RDMA: %" PRIu64 " work requests, 0 system calls, %.1f Gb/s virtual goodput",
			 tr.syscalls, tr.segments, tr.interrupts, fr.messages, fr.goodput_gbps);
		roce_table_note(st, note);
	}
	show(d, st);
	{
		static const char *const cats[] = { "kernel TCP", "RDMA WRITE" };
		double cpu[2] = { tcp_cpu * 1e3 / gib, fr.app_sec * 1e3 / gib };
		struct roce_chart *c;

		roce_report_row(d->rep);
		roce_report_chart(d->rep, bars("Host CPU time per GiB moved", "ms", cats, 2,
					       "host CPU", cpu));
		c = bars("Copies of each byte", "copies", cats, 2, "by the host CPU",
			 (const double[]){ 2, 0 });
		roce_chart_series(c, "by a NIC's DMA", NULL, (const double[]){ 2, 2 }, 2);
		roce_report_chart(d->rep, c);
	}
	d->res->bytes = tc.bytes;
	d->res->tcp_host_cpu_sec = tcp_cpu;
	d->res->tcp_all_copies_sec = tr.cpu_sec;
	d->res->rdma_app_sec = fr.app_sec;
	d->res->rdma_gbps = fr.goodput_gbps;
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return 0;
}

/* ---- step 2: lossless against lossy ---- */

/*
 * Runs of each lossy rate, seeds conf->seed onwards. Whether a run pays the ACK timeout is
 * chance (a lost last packet, or a lost retransmission): one run a rate drew the cliff at 3e-4
 * for one seed and at 1e-3 for another. The median shows go-back-N's steady cost, the worst
 * run the timeout's.
 */
#define DEMO_LOSS_RUNS 5

/* What one run of demo-lossy did. */
struct loss_run {
	double gbps, fct_ms;		/* the flow's goodput and completion time */
	uint64_t lost, sent;		/* frames the links dropped, and sent */
	uint64_t retransmits, timeouts;	/* the flow's resent packets and ACK timeouts */
};

static int lossy_run(struct demo *d, const char *const *set, int nset, const char *pcap,
		     struct loss_run *lr)
{
	struct roce_scenario *sc = NULL;
	struct roce_fabric *fab = run_builtin(d, "demo-lossy", set, nset, pcap, &sc);
	struct roce_flow_result r;

	if (fab == NULL)
		return -EINVAL;
	roce_fabric_flow_result(fab, 0, &r);
	memset(lr, 0, sizeof(*lr));
	for (int l = 0; l < sc->nlinks; l++)
		for (int dir = 0; dir < 2; dir++) {
			struct roce_link_stats ls;

			roce_link_stats(roce_fabric_link(fab, l), dir, &ls);
			lr->lost += ls.dropped;
			lr->sent += ls.tx_frames;
		}
	lr->gbps = r.goodput_gbps;
	lr->fct_ms = (double)(r.last_done - r.first_post) / ROCE_MS;
	lr->retransmits = r.retransmits;
	lr->timeouts = r.timeouts;
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return 0;
}

static int step_lossy(struct demo *d)
{
	static const char *const hdr[] = {
		"<fabric", "loss", "goodput (Gb/s)", "worst run", "FCT (ms)", "lost a run (expected)",
		"resent per loss", "runs with a timeout",
	};
	static const char *const loss_names[] = { "0 (PFC)", "1e-5", "1e-4", "3e-4", "1e-3" };
	static const double loss_rates[] = { 0, 1e-5, 1e-4, 3e-4, 1e-3 };
	double median[ROCE_DIM(loss_names)], worst[ROCE_DIM(loss_names)];
	struct roce_table *t;
	char title[160];
	ROCE_STATIC_ASSERT(ROCE_DIM(loss_rates) == ROCE_DIM(loss_names));
	int nsweep = d->conf->quick ? 4 : (int)ROCE_DIM(loss_names);
	int nruns = d->conf->quick ? 3 : DEMO_LOSS_RUNS;

	step(d, "Step 2/4  Lossless against lossy: from one lost packet in 10^5 to one in 10^3",
	     "RoCE's reliable connections recover from loss with go-back-N: the receiver drops "
	     "everything after a gap and NAKs it once, the sender resends from the lost packet on, "
	     "and when nothing tells it of a loss (the last packet, its NAK or its resend lost) it "
	     "waits for the ACK timeout. That is why RoCE is run on a lossless "
	     "(PFC) network. The same 32 MiB transfer on a lossless fabric, then with PFC off and "
	     "random loss on every link: one packet in 10^5, one in 10^4 (the usual target of a "
	     "lossy fabric), three in 10^4 and one in 10^3. Which packets a link loses is chance, "
	     "so each lossy rate is run with several seeds.");
	snprintf(title, sizeof(title), "32 x 1 MiB RDMA WRITEs, PMTU 1024, 100G, 40 us round trip; "
		 "lossy rows: median of %d runs (seeds %" PRIu64 "-%" PRIu64 ")", nruns,
		 d->conf->seed, d->conf->seed + (uint64_t)nruns - 1);
	t = roce_table_create(title, (int)ROCE_DIM(hdr), hdr);
	for (int i = 0; i < nsweep; i++) {
		char loss[48];
		const char *set[2] = { "switch.pfc=off", loss };
		bool lossless = i == 0;
		int n = lossless ? 1 : nruns, timed_out = 0;
		struct loss_run lr[DEMO_LOSS_RUNS];
		double gbps[DEMO_LOSS_RUNS], fct[DEMO_LOSS_RUNS], expected = 0;
		uint64_t lost = 0, resent = 0;

		snprintf(loss, sizeof(loss), "topology.loss=%g", loss_rates[i]);
		for (int k = 0; k < n; k++) {
			const char *pcap = k != 0 ? NULL : lossless ? "lossless.pcap" :
					   i == 2 ? "lossy-1e-4.pcap" : NULL;

			d->seed = d->conf->seed + (uint64_t)k;
			/* the lossless run keeps PFC on; lossy runs turn it off */
			if (lossy_run(d, lossless ? NULL : set, lossless ? 0 : 2, pcap, &lr[k]) != 0)
				return -EINVAL;
			gbps[k] = lr[k].gbps;
			fct[k] = lr[k].fct_ms;
			lost += lr[k].lost;
			resent += lr[k].retransmits;
			/* each frame a link sends is lost with the rate's probability */
			expected += loss_rates[i] * (double)lr[k].sent;
			timed_out += lr[k].timeouts != 0;
		}
		d->seed = d->conf->seed;
		qsort(gbps, (size_t)n, sizeof(gbps[0]), fab_cmp_double);
		qsort(fct, (size_t)n, sizeof(fct[0]), fab_cmp_double);
		median[i] = gbps[n / 2];
		worst[i] = lossless ? NAN : gbps[0];	/* one run: no worst, "-" and no bar */
		roce_table_add(t, "%s", lossless ? "lossless (PFC)" : "lossy (no PFC)");
		roce_table_add(t, "%s", lossless ? "0" : loss_names[i]);
		roce_table_add(t, "%.2f", median[i]);
		if (isnan(worst[i]))
			roce_table_add(t, "-");
		else
			roce_table_add(t, "%.2f", worst[i]);
		roce_table_add(t, "%.3f", fct[n / 2]);
		if (lossless)
			roce_table_add(t, "%" PRIu64, lost);
		else
			roce_table_add(t, expected / n < 10 ? "%.1f (%.1f)" : "%.0f (%.0f)",
				       (double)lost / n, expected / n);
		if (lost != 0)
			roce_table_add(t, "%.0f", (double)resent / (double)lost);
		else
			roce_table_add(t, "-");
		if (lossless)
			roce_table_add(t, "-");
		else
			roce_table_add(t, "%d of %d", timed_out, n);
		if (i == 0)
			d->res->lossless_gbps = median[i];
		if (i == 2) {
			d->res->lossy_gbps = median[i];
			d->res->lossy_retransmits = resent / (uint64_t)n;	/* a run, as lost */
		}
	}
	roce_table_note(t, "lost: frames the links dropped (data and ACKs), beside the loss rate times "
			"the frames the links sent; each costs about a round trip of data resent "
			"(go-back-N). A lost retransmission or last packet waits for the ACK timeout "
			"(16.8 ms, five times the lossless transfer): the worst run column shows it");
	roce_table_note(t, "-: does not apply: the lossless fabric loses nothing and is run once, "
			"so it has no worst run");
	show(d, t);
	{
		struct roce_chart *c = roce_chart_create(ROCE_CHART_BAR, "Goodput against the loss rate",
							 NULL, "Gb/s");

		roce_chart_categories(c, loss_names, (size_t)nsweep);
		roce_chart_series(c, "median run", NULL, median, (size_t)nsweep);
		roce_chart_series(c, "worst run", NULL, worst, (size_t)nsweep);
		/* as the table's "-": no bar, and the gap says why rather than read as zero */
		roce_chart_missing_label(c, "n/a");
		roce_chart_legend_note(c, "n/a: lossless is run once, no worst run");
		roce_report_chart(d->rep, c);
	}
	return 0;
}

/* ---- step 3: incast, PFC against DCQCN ---- */

/* The deepest any priority's queue got on the switch port to host @p name (the exact counter). */
static uint64_t max_queue_to(const struct roce_fabric *fab, const struct roce_scenario *sc,
			     const char *name)
{
	int host = fab_host_find(sc, name);
	uint64_t maxq = 0;

	for (int l = 0; l < sc->nlinks; l++)
		for (int side = 0; side < 2; side++) {
			int node = side ? sc->link[l].b : sc->link[l].a;
			int peer = side ? sc->link[l].a : sc->link[l].b;
			int p = roce_fabric_link_port(fab, l, side);

			if (peer != host || p < 0)
				continue;
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, node - sc->nhosts),
						   (uint16_t)p, prio, &q);
				maxq = ROCE_MAX(maxq, q.max_qbytes);
			}
		}
	return maxq;
}

static double jain(const double *x, int n)
{
	double s = 0, s2 = 0;

	for (int i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 > 0 ? s * s / (n * s2) : 0;
}

/* The series of @p fab (of @p kind) whose name ends with @p name, or an empty one. */
static void find_series(const struct roce_fabric *fab, enum roce_series_kind kind,
			const char *name, struct roce_series *s)
{
	int n = roce_fabric_nseries(fab, kind);

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < n; i++) {
		size_t len = strlen(name), have;

		roce_fabric_series(fab, kind, i, s);
		have = strlen(s->name);
		if (have >= len && strcmp(s->name + have - len, name) == 0)
			return;
	}
	memset(s, 0, sizeof(*s));
}

static int step_incast(struct demo *d)
{
	static const char *const hdr[] = {
		"<congestion control", "incast (Gb/s)", "fairness", "victim during it (Gb/s)",
		"max queue to r0 (KB)", "PFC pauses", "ECN marks", "CNPs",
	};
	static const char *const cases[] = { "PFC only", "PFC + DCQCN" };
	const char *dcqcn[] = { "nic.cc=dcqcn" };
	struct roce_chart *victim = roce_chart_create(ROCE_CHART_LINE, "The victim flow v0 -> v1",
						      "time (us)", "Gb/s");
	struct roce_chart *queue = roce_chart_create(ROCE_CHART_STEP, "Queue of sw1's port to r0",
						     "time (us)", "KB");
	struct roce_chart *flows[2] = { NULL, NULL };
	double victim_gbps[2], end_us = 0;
	struct roce_table *t;

	step(d, "Step 3/4  An 8:1 incast: PFC alone against PFC with ECN and DCQCN",
	     "Eight senders write to r0 at once; a victim flow v0 -> v1 shares only the sw0 -> sw1 "
	     "uplink with four of them. With PFC alone, sw1's buffer fills, it pauses the uplink, "
	     "and the victim waits behind frames for r0 although v1 is idle: head-of-line blocking. "
	     "With DCQCN, sw1 marks packets with ECN, r0 answers with CNPs, the senders slow to their "
	     "fair share of r0's link, the queue stays short and the victim keeps the uplink.");
	t = roce_table_create("8 senders x 64 x 64 KiB into r0, with a victim flow", (int)ROCE_DIM(hdr), hdr);
	for (int c = 0; c < 2; c++) {
		struct roce_scenario *sc = NULL;
		struct roce_fabric *fab = run_builtin(d, "demo-incast", c ? dcqcn : NULL, c,
						      c ? "incast-dcqcn.pcap" : "incast-pfc.pcap", &sc);
		double incast[8];
		uint64_t bytes = 0;
		roce_time_t first = ROCE_TIME_NEVER, last = 0;
		int n = 0;
		uint64_t pauses = 0, marks = 0, maxq = 0;
		struct roce_series s;
		char title[64];

		if (fab == NULL)
			return -EINVAL;
		for (int f = 0; f < sc->nflows; f++) {
			struct roce_flow_result r;

			roce_fabric_flow_result(fab, f, &r);
			if (strcmp(sc->flow[f].name, "victim") == 0) {
				continue;
			} else if (n < 8) {
				incast[n++] = r.goodput_gbps;
				bytes += r.bytes;
				first = ROCE_MIN(first, r.first_post);
				last = ROCE_MAX(last, r.last_done);
			}
		}
		/*
		 * The victim while the incast runs (from its first post to its last completion):
		 * afterwards it has the uplink alone, whatever the congestion control did.
		 */
		find_series(fab, ROCE_SERIES_FLOW_GBPS, "victim", &s);
		{
			double sum = 0;
			int k = 0;

			for (size_t i = 0; i < s.n; i++)
				if (s.t_us[i] > (double)first / ROCE_US && s.t_us[i] <= (double)last / ROCE_US) {
					sum += s.v[i];
					k++;
				}
			victim_gbps[c] = k ? sum / k : 0;
		}
		for (int s2 = 0; s2 < sc->nswitches; s2++)
			for (int p = 0; p < sc->sw[s2].conf.nports; p++)
				for (int prio = 0; prio < ROCE_NPRIO; prio++) {
					struct roce_switch_qstats q;

					roce_switch_qstats(roce_fabric_switch(fab, s2), (uint16_t)p, prio, &q);
					pauses += q.pause_tx;
					marks += q.ecn_marked;
				}
		maxq = max_queue_to(fab, sc, "r0");
		find_series(fab, ROCE_SERIES_QUEUE_KB, "> r0", &s);
		roce_table_add(t, "%s", cases[c]);
		/* all of them together, from the first post to the last completion */
		roce_table_add(t, "%.1f", last > first ? (double)bytes * 8 / ((double)(last - first) / ROCE_SEC) / 1e9 : 0);
		roce_table_add(t, "%.3f", jain(incast, n));
		roce_table_add(t, "%.1f", victim_gbps[c]);
		roce_table_add(t, "%.1f", (double)maxq / 1000);
		roce_table_add(t, "%" PRIu64, pauses);
		roce_table_add(t, "%" PRIu64, marks);
		{
			uint64_t cnps = 0;

			for (int h = 0; h < sc->nhosts; h++) {
				uint64_t v = roce_device_counter_by_name(roce_fabric_device(fab, h),
									 "np_cnp_sent");
				cnps += v == UINT64_MAX ? 0 : v;
			}
			roce_table_add(t, "%" PRIu64, cnps);
		}
		if (s.n != 0)
			roce_chart_series(queue, cases[c], s.t_us, s.v, s.n);
		find_series(fab, ROCE_SERIES_FLOW_GBPS, "victim", &s);
		if (s.n != 0)
			roce_chart_series(victim, cases[c], s.t_us, s.v, s.n);
		snprintf(title, sizeof(title), "Goodput per flow, %s", cases[c]);
		flows[c] = roce_chart_create(ROCE_CHART_LINE, title, "time (us)", "Gb/s");
		for (int f = 0, drawn = 0; f < sc->nflows; f++) {
			find_series(fab, ROCE_SERIES_FLOW_GBPS, sc->flow[f].name, &s);
			if (s.n == 0)
				continue;
			roce_chart_series(flows[c], sc->flow[f].name, s.t_us, s.v, s.n);
			if (fab_flow_stands_out(sc, f))	/* the victim, in a colour of its own */
				roce_chart_highlight(flows[c], (size_t)drawn);
			drawn++;
		}
		end_us = ROCE_MAX(end_us, (double)roce_fabric_now(fab) / ROCE_US);
		if (c == 0) {
			d->res->victim_pfc_gbps = victim_gbps[0];
			d->res->jain_pfc = jain(incast, n);
			d->res->pauses_pfc = pauses;
			d->res->maxq_pfc_kb = (double)maxq / 1000;
		} else {
			d->res->victim_dcqcn_gbps = victim_gbps[1];
			d->res->jain_dcqcn = jain(incast, n);
			d->res->pauses_dcqcn = pauses;
			d->res->maxq_dcqcn_kb = (double)maxq / 1000;
		}
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
	}
	roce_table_note(t, "fairness: Jain's index over the eight incast flows (1 = equal shares)");
	roce_table_note(t, "after the incast the victim has the uplink alone: with PFC alone it is "
			"at line rate at once; with DCQCN its rate, cut too (it shares sw0's marked "
			"uplink), climbs back slowly (fast recovery, then 5 Mb/s a 300 us period): "
			"see its chart");
	show(d, t);
	roce_report_row(d->rep);
	roce_report_chart(d->rep, victim);
	roce_report_chart(d->rep, queue);
	/* side by side on the same axes: the line rate, and the longer run */
	for (int c = 0; c < 2; c++) {
		roce_chart_yrange(flows[c], 0, 100);
		roce_chart_xrange(flows[c], 0, end_us);
	}
	roce_report_chart(d->rep, flows[0]);
	roce_report_chart(d->rep, flows[1]);
	return 0;
}

/* ---- step 4: a degraded link ---- */

struct port_snap {
	uint64_t tx_bytes, pause_tx, pause_rx, max_q;
	roce_time_t paused;
};

static void snap(const struct roce_fabric *fab, int s, int p, struct port_snap *ps)
{
	memset(ps, 0, sizeof(*ps));
	for (int prio = 0; prio < ROCE_NPRIO; prio++) {
		struct roce_switch_qstats q;

		roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
		ps->tx_bytes += q.tx_bytes;
		ps->pause_tx += q.pause_tx;
		ps->pause_rx += q.pause_rx;
		ps->paused += q.paused_time;
		ps->max_q = ROCE_MAX(ps->max_q, q.max_qbytes);
	}
}

static int step_degrade(struct demo *d)
{
	static const char *const hdr[] = {
		"<port", "<to", "link now", "tx before (Gb/s)", "tx after (Gb/s)",
		"pauses sent", "pauses received", "max queue (KB)", "<reading",
	};
	const char *text = roce_scenario_builtin("demo-degrade");
	const char *set[1];
	char seed[48], path[4096];
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	struct roce_run_conf rc = { 0 };
	struct port_snap snaps[3][2][8];	/* at half the event time, at it, at the end */
	roce_time_t t_event, t_end;
	struct roce_table *t;
	int ret;

	step(d, "Step 4/4  Troubleshooting: a link degraded from 100G to 40G",
	     "Two hosts with 50G NICs send through the 100G link between sw0 and sw1: it runs full, "
	     "with no queue and no pause. At 1 ms it renegotiates down to 40G (a dirty optic, a bad "
	     "cable). Nothing is lost - PFC holds the senders back - so the only symptom users see "
	     "is a slower job. The switch counters, read before and after like `ethtool -S`, point "
	     "at it: the port whose throughput fell with its queue full, and the pauses spreading "
	     "upstream from it.");
	snprintf(seed, sizeof(seed), "scenario.seed=%" PRIu64, d->seed);
	set[0] = seed;
	sc = roce_scenario_parse("demo-degrade", text, set, 1, d->err, sizeof(d->err));
	if (sc == NULL)
		return -EINVAL;
	fab = roce_fabric_create(sc, d->err, sizeof(d->err));
	if (fab == NULL) {
		roce_scenario_destroy(sc);
		return -EINVAL;
	}
	if (d->conf->out_dir != NULL) {
		snprintf(path, sizeof(path), "%s/degrade.pcap", d->conf->out_dir);
		rc.pcap = path;
	}
	t_event = sc->event[0].at;
	t_end = sc->duration;
	if (roce_fabric_start(fab, &rc) != 0)
		goto err;
	/* "before" is the half-millisecond up to the change (the flow at full speed) */
	for (int k = 0; k < 3; k++) {
		roce_time_t at[3] = { t_event / 2, t_event, t_end };

		roce_fabric_advance(fab, at[k]);
		for (int s = 0; s < 2; s++)
			for (int p = 0; p < sc->sw[s].conf.nports && p < 8; p++)
				snap(fab, s, p, &snaps[k][s][p]);
	}
	ret = roce_fabric_finish(fab);
	if (ret != 0 && !capture_failed(d, "demo-degrade", fab, ret, "the run failed"))
		goto err;
	t = roce_table_create("Switch counters, before (0.5-1 ms) and after (1-2 ms) the change",
			      (int)ROCE_DIM(hdr), hdr);
	d->res->degraded_port[0] = '\0';
	for (int l = 0; l < sc->nlinks; l++) {
		for (int side = 0; side < 2; side++) {
			int node = side ? sc->link[l].b : sc->link[l].a, s = node - sc->nhosts;
			int p = roce_fabric_link_port(fab, l, side);
			const struct port_snap *s0, *s1, *s2;
			double b, a;
			uint64_t rate = roce_link_rate(roce_fabric_link(fab, l)), sent, rcvd;
			const char *reading;

			if (s < 0 || p >= 8)
				continue;
			s0 = &snaps[0][s][p];
			s1 = &snaps[1][s][p];
			s2 = &snaps[2][s][p];
			b = (double)(s1->tx_bytes - s0->tx_bytes) * 8 /
			    ((double)(t_event - t_event / 2) / ROCE_SEC) / 1e9;
			a = (double)(s2->tx_bytes - s1->tx_bytes) * 8 /
			    ((double)(t_end - t_event) / ROCE_SEC) / 1e9;
			sent = s2->pause_tx - s1->pause_tx;
			rcvd = s2->pause_rx - s1->pause_rx;
			if (b < 0.5 && a < 0.5 && sent == 0 && rcvd == 0 &&
			    s1->pause_tx == s0->pause_tx && s1->pause_rx == s0->pause_rx)
				continue;
			if (rate < sc->link[l].conf.rate_bps) {
				reading = "link below its speed: the cause";
				fab_name(d->res->degraded_port, sizeof(d->res->degraded_port), "%s p%d",
					 sc->sw[s].name, p);
				d->res->degrade_before_gbps = b;
				d->res->degrade_after_gbps = a;
			} else if (sent != 0) {
				reading = "pausing its sender: a symptom";
			} else if (rcvd != 0) {
				reading = "paused by its peer: a symptom";
			} else {
				reading = "";
			}
			roce_table_add(t, "%s p%d", sc->sw[s].name, p);
			roce_table_add(t, "%s", roce_scenario_node_name(sc, side ? sc->link[l].a : sc->link[l].b));
			roce_table_add(t, "%.0fG", (double)rate / 1e9);
			roce_table_add(t, "%.1f", b);
			roce_table_add(t, "%.1f", a);
			roce_table_add(t, "%" PRIu64 " -> %" PRIu64, s1->pause_tx - s0->pause_tx, sent);
			roce_table_add(t, "%" PRIu64 " -> %" PRIu64, s1->pause_rx - s0->pause_rx, rcvd);
			/* the deepest up to the change, and the deepest of the whole run */
			roce_table_add(t, "%.1f -> %.1f", (double)s1->max_q / 1000,
				       (double)s2->max_q / 1000);
			roce_table_add(t, "%s", reading);
			d->res->degrade_pauses += sent;
		}
	}
	roce_table_note(t, "pauses and max queue: before -> after the change; max queue before is the "
			"deepest up to the change, after the deepest of the whole run");
	show(d, t);
	roce_report_row(d->rep);
	roce_report_chart(d->rep, fab_series_chart(fab, ROCE_SERIES_PORT_GBPS, ROCE_CHART_LINE,
						   "Switch port throughput", "Gb/s", 8));
	roce_report_chart(d->rep, fab_series_chart(fab, ROCE_SERIES_QUEUE_KB, ROCE_CHART_STEP,
						   "Switch egress queues", "KB", 8));
	roce_report_chart(d->rep, fab_series_chart(fab, ROCE_SERIES_PAUSED, ROCE_CHART_LINE,
						   "Senders paused by PFC", "% of each interval",
						   8));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return 0;
err:
	if (d->err[0] == '\0')
		capture_failed(d, "demo-degrade", fab, 0, "the run failed");
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return -EIO;
}

/* Every file the tour writes into its directory. */
static const char *const demo_files[] = {
	"zerocopy.pcap", "lossless.pcap", "lossy-1e-4.pcap", "incast-pfc.pcap", "incast-dcqcn.pcap",
	"degrade.pcap", "report.html",
};

int roce_demo_run(const struct roce_demo_conf *conf, struct roce_demo_result *res, char *err,
		  size_t errlen)
{
	static int (*const steps[])(struct demo *) = {
		step_zerocopy, step_lossy, step_incast, step_degrade,
	};
	struct demo d = { .conf = conf, .res = res, .seed = conf->seed };
	char path[4096];
	int rc = 0;

	memset(res, 0, sizeof(*res));
	/* a name in DIR that will not be replaced stops the tour before it starts, not after */
	for (size_t i = 0; conf->out_dir != NULL && i < ROCE_DIM(demo_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", conf->out_dir, demo_files[i]);
		rc = roce_out_check(path, strstr(demo_files[i], ".pcap") != NULL ? ROCE_OUT_PCAP : 0,
				    err, errlen);
		if (rc != 0)
			return rc;
	}
	d.rep = roce_report_create("rocelab demo");
	if (d.rep == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	roce_report_text(d.rep, "Four steps, each measured side by side in rocelab's emulated "
			 "fabric: real RoCEv2 frames, real QPs, virtual time. Every number here "
			 "comes from the run that made this page; the captures are beside it.");
	for (size_t i = 0; i < ROCE_DIM(steps) && rc == 0; i++)
		rc = steps[i](&d);
	if (rc == 0 && conf->out_dir != NULL) {
		snprintf(path, sizeof(path), "%s/report.html", conf->out_dir);
		rc = roce_report_write(d.rep, path);
		if (rc != 0)
			fab_name(d.err, sizeof(d.err), "%s: %s", path, roce_out_strerror(rc));
	}
	if (rc == 0 && d.cap_err[0] != '\0') {	/* every step ran; a capture is cut short */
		snprintf(d.err, sizeof(d.err), "%s", d.cap_err);
		rc = -EIO;
	}
	if (rc != 0)
		snprintf(err, errlen, "%s", d.err[0] ? d.err : "failed");
	roce_report_destroy(d.rep);
	return rc;
}
