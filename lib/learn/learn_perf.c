/*
 * Lessons measured with transfers between two emulated hosts (lib/perf, virtual time):
 * one-sided vs two-sided verbs, the bandwidth-delay product, go-back-N under loss, and the
 * perftest baselines.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roce_perf.h"
#include "learn_private.h"

#define LINE_GBPS 100.0

/* One perftest run; -errno with @p err set if it could not run or a completion failed. */
static int run_one(const struct roce_perf_conf *c, struct roce_perf_result *r, char *err,
		   size_t errlen)
{
	char why[192];	/* shorter than the callers' err[256]: the test name fits before it */
	int rc;

	if (roce_perf_check(c, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s: %s", roce_perf_test_name(c->test), why);
		return -EINVAL;
	}
	rc = roce_perf_run(c, r);
	if (rc != 0) {
		snprintf(err, errlen, "%s of %u bytes: %s", roce_perf_test_name(c->test), c->size,
			 strerror(-rc));
		return rc;
	}
	return 0;
}

static void point(struct roce_learn_point *p, double x, const struct roce_perf_result *r)
{
	p->x = x;
	p->gbps = r->bw_avg_gbps;
	p->usec = r->lat_typical;
	p->retransmits = r->retransmits;
	p->timeouts = r->timeouts;
	p->rnr_naks = r->rnr_naks;
	p->lost = r->dropped;
}

int roce_learn_loss(const double *loss, size_t n, uint32_t delay_ns, double vsec, uint64_t seed,
		    struct roce_learn_point *pts)
{
	char err[256];

	for (size_t i = 0; i < n; i++) {
		struct roce_perf_conf c;
		struct roce_perf_result r;
		int rc;

		roce_perf_defaults(&c, ROCE_PERF_WRITE_BW);
		c.iters = 1;	/* ignored: the run lasts c.duration */
		c.duration = vsec;
		c.delay = (roce_time_t)delay_ns * ROCE_NS;
		c.impair.loss = loss[i];
		c.impair_back.loss = loss[i];
		c.seed = seed;
		rc = run_one(&c, &r, err, sizeof(err));
		if (rc != 0)
			return rc;
		point(&pts[i], loss[i], &r);
	}
	return 0;
}

int roce_learn_bdp(const uint32_t *depth, size_t n, uint32_t size, uint32_t delay_ns, double vsec,
		   struct roce_learn_point *pts)
{
	char err[256];

	for (size_t i = 0; i < n; i++) {
		struct roce_perf_conf c;
		struct roce_perf_result r;
		int rc;

		roce_perf_defaults(&c, ROCE_PERF_WRITE_BW);
		c.size = size;
		c.iters = 1;	/* ignored: the run lasts c.duration */
		c.duration = vsec;
		c.tx_depth = depth[i];
		c.delay = (roce_time_t)delay_ns * ROCE_NS;
		rc = run_one(&c, &r, err, sizeof(err));
		if (rc != 0)
			return rc;
		point(&pts[i], (double)depth[i] * size, &r);
	}
	return 0;
}

/* ---- lesson: one-sided vs two-sided ---- */

static int run_verbs(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
		     size_t errlen)
{
	static const char *const head[] = { "<verb", "<kind", "<the target's CPU",
					    "latency 64 B (us)", "latency 64 KiB (us)",
					    "goodput 64 KiB (Gb/s)", "frames a message" };
	static const struct {
		const char *name, *kind, *target;
		enum roce_perf_test lat, bw;
	} verbs[] = {
		{ "RDMA WRITE", "one-sided", "not involved: its NIC places the data",
		  ROCE_PERF_WRITE_LAT, ROCE_PERF_WRITE_BW },
		{ "RDMA READ", "one-sided", "not involved: its NIC reads the memory",
		  ROCE_PERF_READ_LAT, ROCE_PERF_READ_BW },
		{ "SEND / RECV", "two-sided", "posts a receive for every message, polls its CQ",
		  ROCE_PERF_SEND_LAT, ROCE_PERF_SEND_BW },
	};
	static const char *const names[] = { "RDMA WRITE", "RDMA READ", "SEND / RECV" };
	double lat[2][3], bw[3], frames[3];
	struct roce_table *t;
	struct roce_chart *c;

	learn_text(conf, rep,
		   "One-sided verbs (WRITE, READ) name the remote memory with an rkey and a virtual "
		   "address: the target's NIC does the work and its CPU never sees the message. "
		   "Two-sided SEND needs the target to have posted a receive buffer first (without one "
		   "its NIC answers RNR NAK and the sender waits), and the target polls a completion "
		   "for every message. A READ costs a round trip before the first byte moves. "
		   "Who sees a completion: the initiator of a WRITE or READ, when the ACK or the "
		   "response comes back (a whole round trip); the target of a WRITE, never (a WRITE "
		   "with immediate data is the exception: it consumes a posted receive, which "
		   "completes there); a SEND, at both ends. "
		   "Measured between two emulated hosts at 100G, 500 ns apart, as perftest measures.");
	for (int v = 0; v < 3; v++) {
		struct roce_perf_conf cf;
		struct roce_perf_result r;
		int rc;

		for (int k = 0; k < 2; k++) {
			roce_perf_defaults(&cf, verbs[v].lat);
			cf.size = k == 0 ? 64 : 65536;
			cf.iters = conf->quick ? 100 : 1000;
			rc = run_one(&cf, &r, err, errlen);
			if (rc != 0)
				return rc;
			lat[k][v] = r.lat_typical;
		}
		roce_perf_defaults(&cf, verbs[v].bw);
		cf.iters = conf->quick ? 200 : 2000;
		rc = run_one(&cf, &r, err, errlen);
		if (rc != 0)
			return rc;
		bw[v] = r.bw_avg_gbps;
		frames[v] = r.iters ? (double)r.frames / (double)r.iters : 0;
	}
	t = roce_table_create("One-sided and two-sided verbs", ROCE_DIM(head), head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (int v = 0; v < 3; v++)
		learn_row(t, "%s\t%s\t%s\t%.2f\t%.2f\t%.1f\t%.1f", verbs[v].name, verbs[v].kind,
			  verbs[v].target, lat[0][v], lat[1][v], bw[v], frames[v]);
	roce_table_note(t, "latency as perftest reports it: ib_read_lat times the whole round trip, "
			   "ib_write_lat and ib_send_lat half a ping-pong; frames a message: both "
			   "directions, 64 KiB at MTU 4096 (data, ACKs, READ request and responses)");
	learn_table(conf, rep, t);
	roce_table_destroy(t);

	roce_report_row(rep);
	for (int k = 0; k < 2; k++) {
		/* the bars carry the table's figures: 0.519 beside a table's 0.52 reads as faster */
		for (int v = 0; v < 3; v++)
			lat[k][v] = round(lat[k][v] * 100) / 100;
		c = roce_chart_create(ROCE_CHART_BAR, k == 0 ? "Latency, 64-byte messages" :
							      "Latency, 64 KiB messages",
				      NULL, "typical latency (us)");
		if (c != NULL) {
			roce_chart_categories(c, names, 3);
			roce_chart_series(c, "perftest's latency", NULL, lat[k], 3);
		}
		learn_chart(conf, rep, c, k == 0 ? "verbs-lat-64.svg" : "verbs-lat-64k.svg");
	}
	return 0;
}

const struct roce_lesson roce_lesson_verbs = {
	.name = "verbs",
	.title = "One-sided and two-sided verbs: WRITE, READ and SEND",
	.summary = "WRITE, READ and SEND: who works at the target, latency, frames per message",
	.run = run_verbs,
};

/* ---- lesson: bandwidth-delay product ---- */

static int run_bdp(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
		   size_t errlen)
{
	static const uint32_t depth_all[] = { 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128 };
	static const uint32_t depth_quick[] = { 1, 4, 16, 32, 64, 128 };
	static const char *const head[] = { "messages in flight", "bytes in flight", "x BDP",
					    "goodput (Gb/s)", "model (Gb/s)" };
	const uint32_t *depth = conf->quick ? depth_quick : depth_all;
	size_t n = conf->quick ? ROCE_DIM(depth_quick) : ROCE_DIM(depth_all);
	const uint32_t size = 4096, delay_ns = 5000;
	struct roce_learn_point pts[ROCE_DIM(depth_all)];
	double x[ROCE_DIM(depth_all)], y[ROCE_DIM(depth_all)], m[ROCE_DIM(depth_all)];
	double rtt_us, bdp;
	struct roce_encap_frame frame;
	struct roce_perf_conf cf;
	struct roce_perf_result r;
	struct roce_table *t;
	struct roce_chart *c;
	char text[512];
	double cap;
	int rc;

	/* the round trip, measured: a 2-byte READ is one request and one response */
	roce_perf_defaults(&cf, ROCE_PERF_READ_LAT);
	cf.iters = 100;
	cf.delay = (roce_time_t)delay_ns * ROCE_NS;
	rc = run_one(&cf, &r, err, errlen);
	if (rc != 0)
		return rc;
	rtt_us = r.lat_typical;
	if (roce_learn_encap(ROCE_ENCAP_V2_IP4, size, &frame) != 0)
		return -EINVAL;
	cap = LINE_GBPS * frame.efficiency;	/* the payload's share of the line */
	bdp = LINE_GBPS * 1e3 * rtt_us / 8;	/* bytes: Gb/s x us = kbit */
	snprintf(text, sizeof(text),
		 "A sender can only have so much data unacknowledged. If that is less than the link "
		 "rate times the round-trip time (the bandwidth-delay product), the link idles while "
		 "it waits for acknowledgements. Here: 100 Gb/s, %u us of cable each way (about %u m "
		 "of fibre), a round trip measured at %.2f us, so BDP = 100 Gb/s x %.2f us = %.0f KB. "
		 "RDMA WRITEs of %u bytes, with 1 to 128 outstanding (perftest's -t).",
		 delay_ns / 1000, delay_ns / 5, rtt_us, rtt_us, bdp / 1e3, size);
	learn_text(conf, rep, text);

	rc = roce_learn_bdp(depth, n, size, delay_ns, conf->quick ? 0.0005 : 0.002, pts);
	if (rc != 0) {
		snprintf(err, errlen, "write_bw: %s", strerror(-rc));
		return rc;
	}
	t = roce_table_create("Goodput against the data in flight", ROCE_DIM(head), head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (size_t i = 0; i < n; i++) {
		x[i] = pts[i].x / 1e3;
		y[i] = pts[i].gbps;
		m[i] = fmin(cap, pts[i].x * 8 / (rtt_us * 1e3));
		learn_row(t, "%u\t%.0f KB\t%.2f\t%.1f\t%.1f", depth[i], pts[i].x / 1e3,
			       pts[i].x / bdp, y[i], m[i]);
	}
	snprintf(text, sizeof(text), "model: bytes in flight / RTT, at most %.1f Gb/s (the payload's "
		 "share of 100G behind RoCEv2's headers, see the encap lesson): its knee is at %.0f KB "
		 "of payload in flight, the BDP's %.0f KB times that share", cap,
		 bdp / 1e3 * cap / LINE_GBPS, bdp / 1e3);
	roce_table_note(t, text);
	learn_table(conf, rep, t);
	roce_table_destroy(t);

	c = roce_chart_create(ROCE_CHART_LINE, "Goodput against bytes in flight",
			      "bytes in flight (KB)", "goodput (Gb/s)");
	if (c != NULL) {
		char label[64];

		roce_chart_series(c, "measured", x, y, n);
		roce_chart_series(c, "model: in flight / RTT", x, m, n);
		snprintf(label, sizeof(label), "BDP %.0f KB", bdp / 1e3);
		roce_chart_mark(c, bdp / 1e3, label);
		snprintf(label, sizeof(label), "knee %.0f KB", bdp / 1e3 * cap / LINE_GBPS);
		roce_chart_mark(c, bdp / 1e3 * cap / LINE_GBPS, label);
	}
	learn_chart(conf, rep, c, "bdp.svg");
	return 0;
}

const struct roce_lesson roce_lesson_bdp = {
	.name = "bdp",
	.title = "Bandwidth-delay product: how much must be in flight",
	.summary = "goodput against outstanding bytes over a 5 us link, with the BDP measured",
	.run = run_bdp,
};

/* ---- lesson: go-back-N under loss ---- */

#define LOSS_DELAYS 3	/* one-way delays of the loss lesson */
#define LOSS_RATES 6	/* its loss probabilities (--quick: 4 of them) */

/* One bar per loss rate and distance: goodput, or (@p resent) frames resent per frame lost. */
static struct roce_chart *loss_chart(const char *title, const char *ylabel,
				     const char *const *cats, size_t n,
				     struct roce_learn_point (*pts)[LOSS_RATES],
				     const uint32_t *delay,
				     bool resent)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_BAR, title,
						 "probability that a frame is lost", ylabel);
	double y[LOSS_RATES];

	if (c == NULL)
		return NULL;
	roce_chart_categories(c, cats, n);
	for (size_t d = 0; d < LOSS_DELAYS; d++) {
		char name[32];

		for (size_t i = 0; i < n; i++) {
			const struct roce_learn_point *p = &pts[d][i];

			y[i] = !resent ? p->gbps : p->lost ? (double)p->retransmits /
							     (double)p->lost : NAN;
		}
		snprintf(name, sizeof(name), "%.1f us each way", delay[d] / 1e3);
		roce_chart_series(c, name, NULL, y, n);
	}
	return c;
}

static int run_loss(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
		    size_t errlen)
{
	static const double loss_all[LOSS_RATES] = { 0, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2 };
	static const double loss_quick[] = { 0, 1e-4, 1e-3, 1e-2 };
	static const char *const cat_all[] = { "0", "1e-5", "1e-4", "1e-3", "3e-3", "1e-2" };
	static const char *const cat_quick[] = { "0", "1e-4", "1e-3", "1e-2" };
	static const uint32_t delay[LOSS_DELAYS] = { 500, 5000, 25000 };
	static const char *const head[] = { "loss", "one-way delay", "goodput (Gb/s)",
					    "frames lost", "resent", "resent per loss",
					    "ACK timeouts", "idle in timeouts" };
	const double *loss = conf->quick ? loss_quick : loss_all;
	const char *const *cats = conf->quick ? cat_quick : cat_all;
	size_t n = conf->quick ? ROCE_DIM(loss_quick) : ROCE_DIM(loss_all);
	struct roce_learn_point pts[LOSS_DELAYS][LOSS_RATES];
	const double vsec = conf->quick ? 0.1 : 1.0;
	/* perftest's -u 14: 4.096 us x 2^14 */
	const double timeout = 4.096e-6 * (double)(1u << 14);
	struct roce_table *t;
	char text[1024];

	snprintf(text, sizeof(text),
		 "RoCE's reliable transport resends with go-back-N: the receiver drops everything "
		 "after a gap and sends one sequence NAK, and the sender resends from the lost "
		 "packet on, every frame it sent in the round trip before the NAK came back. So a "
		 "loss costs more the longer the path ('resent per loss'). The receiver NAKs a gap "
		 "only once: when that NAK, or the resent packet, is lost too, nothing tells the "
		 "sender, which waits out its ACK timeout (perftest's -u 14: 4.096 us x 2^14 = "
		 "%.0f ms) with the link idle. Such double losses are rare and random, but each "
		 "costs %.0f ms: from 1e-3 on the timeouts, not the resends, set the goodput, at "
		 "any distance, and they move it between seeds (--seed). That is why RoCE is run on "
		 "a lossless (PFC) network. RDMA WRITEs of 64 KiB at 100G for %g s of virtual time "
		 "a row, each frame dropped with the given probability in both directions.",
		 timeout * 1e3, timeout * 1e3, vsec);
	learn_text(conf, rep, text);
	for (size_t d = 0; d < ROCE_DIM(delay); d++) {
		int rc = roce_learn_loss(loss, n, delay[d], vsec, conf->seed, pts[d]);

		if (rc != 0) {
			snprintf(err, errlen, "write_bw at %u ns: %s", delay[d], strerror(-rc));
			return rc;
		}
	}
	t = roce_table_create("Goodput under random loss", ROCE_DIM(head), head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (size_t i = 0; i < n; i++)
		for (size_t d = 0; d < ROCE_DIM(delay); d++) {
			const struct roce_learn_point *p = &pts[d][i];

			char per[32] = "-";	/* nothing lost: no ratio, as the chart has no bar */

			if (p->lost)
				snprintf(per, sizeof(per), "%.1f",
					 (double)p->retransmits / (double)p->lost);
			/* the loss rate named as on the charts: 1e-4, not 0.0001 */
			learn_row(t, "%s\t%.1f us\t%.2f\t%" PRIu64 "\t%" PRIu64 "\t%s\t%" PRIu64
				  "\t%.0f%%", cats[i], delay[d] / 1e3, p->gbps, p->lost,
				  p->retransmits, per, p->timeouts,
				  ROCE_MIN(100.0, 100.0 * (double)p->timeouts * timeout / vsec));
		}
	learn_table(conf, rep, t);
	roce_table_destroy(t);

	roce_report_row(rep);
	learn_chart(conf, rep, loss_chart("Goodput under loss, by one-way delay", "goodput (Gb/s)",
					  cats, n, pts, delay, false), "loss.svg");
	learn_chart(conf, rep, loss_chart("Frames resent per lost frame: one round trip's worth",
					  "frames resent per loss", cats, n, pts, delay, true),
		    "loss-resent.svg");
	learn_text(conf, rep,
		   "See it in a fabric, with PFC against none: `rocelab run demo-lossy` and step 2 "
		   "of `rocelab demo`.");
	return 0;
}

const struct roce_lesson roce_lesson_loss = {
	.name = "loss",
	.title = "Why RoCE wants a lossless network: go-back-N under loss",
	.summary = "goodput against frame loss at three distances, resends and timeouts counted",
	.run = run_loss,
};

/* ---- lesson: perftest baselines ---- */

static int run_baseline(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
			size_t errlen)
{
	static const enum roce_perf_test bw_tests[] = { ROCE_PERF_WRITE_BW, ROCE_PERF_READ_BW,
							ROCE_PERF_SEND_BW };
	static const enum roce_perf_test lat_tests[] = { ROCE_PERF_WRITE_LAT, ROCE_PERF_READ_LAT,
							 ROCE_PERF_SEND_LAT };
	static const char *const head[] = { "#bytes", "write_bw", "read_bw", "send_bw",
					    "write_lat", "read_lat", "send_lat" };
	const unsigned int max_log = conf->quick ? 16 : 23, step = conf->quick ? 2 : 1;
	double x[24], bw[3][24], lat[3][24];
	struct roce_table *t;
	struct roce_chart *c;
	size_t n = 0;

	learn_text(conf, rep,
		   "perftest's sweep (-a): every message size from 2 bytes up, bandwidth (Gb/s) and "
		   "typical latency (us), between two emulated hosts at 100G, 500 ns apart, MTU 4096. "
		   "Small messages are bound by the per-message cost, large ones by the link. The "
		   "shapes are the ones to hold a real setup against, not the small-message "
		   "latencies: the emulated NICs cost nothing, so 0.52 us here is almost all cable "
		   "(500 ns, about 100 m of fibre), where a real back-to-back 100G pair adds its NICs' "
		   "and PCIe's time and reports about 1 us or more.");
	for (unsigned int lg = 1; lg <= max_log; lg += step) {
		uint32_t size = 1u << lg;

		x[n] = size;
		for (int k = 0; k < 3; k++) {
			struct roce_perf_conf cf;
			struct roce_perf_result r;
			uint64_t iters = (64ull << 20) / size;
			int rc;

			roce_perf_defaults(&cf, bw_tests[k]);
			cf.size = size;
			cf.iters = iters < 20 ? 20 : iters > 2000 ? 2000 : iters;
			rc = run_one(&cf, &r, err, errlen);
			if (rc != 0)
				return rc;
			bw[k][n] = r.bw_avg_gbps;

			roce_perf_defaults(&cf, lat_tests[k]);
			cf.size = size;
			cf.iters = conf->quick ? 20 : 100;
			rc = run_one(&cf, &r, err, errlen);
			if (rc != 0)
				return rc;
			lat[k][n] = r.lat_typical;
		}
		n++;
	}
	t = roce_table_create("perftest -a: bandwidth (Gb/s) and typical latency (us)", ROCE_DIM(head),
			      head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (size_t i = 0; i < n; i++)
		learn_row(t, "%u\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f", (unsigned int)x[i],
			       bw[0][i], bw[1][i], bw[2][i], lat[0][i], lat[1][i], lat[2][i]);
	learn_table(conf, rep, t);
	roce_table_destroy(t);

	roce_report_row(rep);
	c = roce_chart_create(ROCE_CHART_LINE, "Bandwidth by message size", "message size (bytes)",
			      "Gb/s");
	if (c != NULL)
		roce_chart_xlog(c);
	for (int k = 0; c != NULL && k < 3; k++)
		roce_chart_series(c, roce_perf_test_name(bw_tests[k]), x, bw[k], n);
	learn_chart(conf, rep, c, "baseline-bw.svg");
	c = roce_chart_create(ROCE_CHART_LINE, "Latency by message size", "message size (bytes)",
			      "typical latency (us)");
	if (c != NULL) {
		roce_chart_xlog(c);
		roce_chart_ylog(c);	/* 0.5 us to 700 us: the small sizes' latency shows */
	}
	/* write_lat runs under send_lat: the chart's legend says so */
	for (int k = 0; c != NULL && k < 3; k++)
		roce_chart_series(c, roce_perf_test_name(lat_tests[k]), x, lat[k], n);
	learn_chart(conf, rep, c, "baseline-lat.svg");
	return 0;
}

const struct roce_lesson roce_lesson_baseline = {
	.name = "baseline",
	.title = "perftest baselines: bandwidth and latency by message size",
	.summary = "the ib_*_bw and ib_*_lat sweep (-a) to hold a real setup against",
	.run = run_baseline,
};
