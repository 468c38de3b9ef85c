/* What a run leaves: tables per flow, per port and priority and for the fabric; time series as CSV; charts. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_private.h"
#include "roce_report.h"

static const char *const flow_ops[] = { "write", "read", "send" };	/* enum roce_flow_op */

/* 65536 -> "64 KiB", 1500 -> "1500 B": message sizes as perftest users think of them. */
const char *fab_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB" };
	int u = 0;
	double x = (double)v;

	while (u < 3 && x >= 1024 && fmod(x, 1024) == 0) {
		x /= 1024;
		u++;
	}
	fab_name(buf, len, "%.0f %s", x, unit[u]);
	return buf;
}

/*
 * How long a flow must have gone without delivering (stalled) or without completing (slow)
 * to be called so: a tenth of the run, or twice its slowest message's time, whichever is
 * longer.
 */
static roce_time_t flow_quiet(const struct roce_fabric *fab, const struct roce_flow_result *r)
{
	roce_time_t quiet = (roce_time_t)(2 * r->lat_max_us * ROCE_US);

	return ROCE_MAX(quiet, roce_fabric_now(fab) / 10);
}

/*
 * Since when the flow has delivered nothing to its target: its last sample with a delivery, or
 * its first post if later. Without sampling, deliveries are not tracked: its last completion.
 */
static roce_time_t flow_silent_since(const struct roce_flow_result *r)
{
	roce_time_t at = r->rx_tracked ? r->rx_at : r->last_done;

	return ROCE_MAX(at, r->first_post);
}

/*
 * done; running (still delivering at the end); slow (still delivering, but no message completed
 * in the quiet window, flow_quiet(), after one did); stalled (nothing delivered in that
 * window); waiting (its start, or the end of the flow it follows, still to come); not started
 * (nothing posted, nothing to wait for); error; corrupt.
 */
static const char *flow_status(const struct roce_fabric *fab, const struct roce_flow_result *r)
{
	roce_time_t now = roce_fabric_now(fab), quiet = flow_quiet(fab, r);

	if (r->errors != 0)
		return "error";
	if (!r->data_ok)
		return "corrupt";
	if (r->done)
		return "done";
	if (r->posted == 0)
		return r->waiting ? "waiting" : "not started";
	if (flow_silent_since(r) + quiet < now)
		return "stalled";
	if (r->messages != 0 && r->last_done + quiet < now)
		return "slow";
	return "running";
}

static const char *const flow_hdr[] = {
	"<flow", "<path", "<op", "messages", "FCT (us)", "goodput (Gb/s)", "p50 (us)",
	"p99 (us)", "retransmits", "timeouts", "<status",
};

/* Flow @p i's row. */
static void flow_row(struct roce_table *t, const struct roce_fabric *fab, int i)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	const struct roce_sc_flow *f = &sc->flow[i];
	struct roce_flow_result r;
	char size[32];

	roce_fabric_flow_result(fab, i, &r);
	roce_table_add(t, "%s", f->name);
	roce_table_add(t, "%s -> %s", sc->host[f->src].name, sc->host[f->dst].name);
	roce_table_add(t, "%s %s", flow_ops[f->op], fab_bytes(f->size, size, sizeof(size)));
	if (f->count != 0)
		roce_table_add(t, "%" PRIu64 "/%" PRIu64, r.messages, f->count);
	else
		roce_table_add(t, "%" PRIu64, r.messages);
	if (r.messages == 0) {
		/* nothing completed: no time, rate or latency to give (not zero) */
		for (int k = 0; k < 4; k++)
			roce_table_add(t, "-");
	} else {
		/* a flow still going has no completion time yet: its goodput is so far */
		if (r.done)
			roce_table_add(t, "%.1f", (double)(r.last_done - r.first_post) / ROCE_US);
		else
			roce_table_add(t, "-");
		roce_table_add(t, "%.2f", r.goodput_gbps);
		roce_table_add(t, "%.1f", r.lat_p50_us);
		roce_table_add(t, "%.1f", r.lat_p99_us);
	}
	roce_table_add(t, "%" PRIu64, r.retransmits);
	roce_table_add(t, "%" PRIu64, r.timeouts);
	roce_table_add(t, "%s", flow_status(fab, &r));
}

struct roce_table *roce_fabric_flow_table(const struct roce_fabric *fab)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_table *t = roce_table_create("Flows", (int)ROCE_DIM(flow_hdr), flow_hdr);

	if (t == NULL)
		return NULL;
	for (int i = 0; i < sc->nflows; i++)
		flow_row(t, fab, i);
	return t;
}

/* Flow statuses that stand out, most serious first, and how the findings say them. */
static const char *const flow_trouble[][2] = {
	{ "error", "ended in error" },
	{ "corrupt", "delivered bytes that differ from those sent, a rocelab bug to report "
	  "with the scenario" },
	{ "stalled", "stalled" }, { "not started", "never started" }, { "slow", "slow" },
};

/* A flow's place among the worst: trouble first (flow_trouble's order), then the slowest. */
struct flow_rank {
	int flow, trouble;	/* its index; 0 error .. 4 slow, 5 running, waiting or done */
	roce_time_t fct;	/* first post to last completion */
};

static int flow_rank_cmp(const void *a, const void *b)
{
	const struct flow_rank *x = a, *y = b;

	if (x->trouble != y->trouble)
		return x->trouble < y->trouble ? -1 : 1;
	if (x->fct != y->fct)
		return x->fct > y->fct ? -1 : 1;
	return x->flow < y->flow ? -1 : x->flow > y->flow;
}

struct roce_table *roce_fabric_flow_table_worst(const struct roce_fabric *fab, int n)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct flow_rank *rk = calloc((size_t)sc->nflows + 1, sizeof(*rk));
	struct roce_table *t;
	char title[160];

	if (rk == NULL)
		return NULL;
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;
		const char *st;

		roce_fabric_flow_result(fab, i, &r);
		st = flow_status(fab, &r);
		rk[i].flow = i;
		rk[i].trouble = (int)ROCE_DIM(flow_trouble);
		for (int k = 0; k < (int)ROCE_DIM(flow_trouble); k++)
			if (strcmp(st, flow_trouble[k][0]) == 0)
				rk[i].trouble = k;
		rk[i].fct = r.last_done > r.first_post ? r.last_done - r.first_post : 0;
	}
	qsort(rk, (size_t)sc->nflows, sizeof(*rk), flow_rank_cmp);
	n = ROCE_MIN(n, sc->nflows);
	snprintf(title, sizeof(title), "Flows: %d of %d, any in trouble first, then the slowest "
		 "(all in flows.csv and report.html)", n, sc->nflows);
	t = roce_table_create(title, (int)ROCE_DIM(flow_hdr), flow_hdr);
	for (int i = 0; t != NULL && i < n; i++)
		flow_row(t, fab, rk[i].flow);
	free(rk);
	return t;
}

/* ---- flow completion times ---- */

#define FCT_MAX_KINDS 6		/* more kinds of flow than this: by size, in decades */

/*
 * Finished flows of one kind (op, message size, count; or a decade of bytes moved, or all
 * flows): their FCTs in µs, sorted.
 */
struct fct_kind {
	enum roce_flow_op op;	/* an exact kind: the flows' op, message size and count */
	uint64_t size, count;
	int decade;		/* -1: an exact kind; else flows moving 10^(lo+d) bytes or more,
				 * under 10 times that (the last bin open) */
	double *fct;		/* the FCTs (µs), sorted */
	size_t n;		/* how many */
};

struct fct_set {
	struct fct_kind kind[FCT_MAX_KINDS];	/* the kinds some flow finished in, in order */
	int nkinds;		/* kinds in kind[] */
	struct fct_kind all;	/* every finished flow */
	int lo;			/* decades: the smallest finished flow's bytes' */
	size_t flows;		/* in the scenario */
};

static void fct_set_free(struct fct_set *fs)
{
	for (int k = 0; k < fs->nkinds; k++)
		free(fs->kind[k].fct);
	free(fs->all.fct);
}

/* 10^@p a bytes: "1 KB", "100 MB" (decimal, as flow-size bins are given). */
static const char *pow10_bytes(int a, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KB", "MB", "GB", "TB", "PB", "EB" };
	static const char *const lead[] = { "1", "10", "100" };

	fab_name(buf, len, "%s %s", lead[a % 3], unit[ROCE_MIN(a / 3, 6)]);
	return buf;
}

static const char *fct_kind_name(const struct fct_set *fs, const struct fct_kind *k, char *buf,
				 size_t len)
{
	char a[32], b[32];

	if (k == &fs->all)
		return "all flows";
	if (k->decade == FCT_MAX_KINDS - 1)	/* the last bin is open */
		fab_name(buf, len, "%s or more", pow10_bytes(fs->lo + k->decade, a, sizeof(a)));
	else if (k->decade >= 0)
		fab_name(buf, len, "%s - %s", pow10_bytes(fs->lo + k->decade, a, sizeof(a)),
			 pow10_bytes(fs->lo + k->decade + 1, b, sizeof(b)));
	else if (k->count != 0)
		fab_name(buf, len, "%s %s x %" PRIu64, flow_ops[k->op],
			 fab_bytes(k->size, a, sizeof(a)), k->count);
	else
		fab_name(buf, len, "%s %s", flow_ops[k->op], fab_bytes(k->size, a, sizeof(a)));
	return buf;
}

/* floor(log10(@p bytes)); 0 for 0 */
static int decade_of(uint64_t bytes)
{
	int d = 0;

	for (; bytes >= 10; bytes /= 10)
		d++;
	return d;
}

/* The bin of a flow that moved @p bytes: its decade from decade @p lo on, the last bin open. */
static int fct_bin(uint64_t bytes, int lo)
{
	int d = decade_of(bytes) - lo;

	return d < 0 ? 0 : ROCE_MIN(d, FCT_MAX_KINDS - 1);
}

static int fct_kind_cmp(const void *a, const void *b)
{
	const struct fct_kind *x = a, *y = b;

	if (x->decade != y->decade)
		return x->decade < y->decade ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->count < y->count ? -1 : x->count > y->count;
}

/* A finished flow: which, the bytes it moved, its FCT in µs. */
struct fct_done {
	int flow;		/* in the scenario */
	uint64_t bytes;		/* payload it moved */
	double us;		/* its FCT */
};

/* The exact kind @p f is in @p fs, or -1. */
static int fct_find(const struct fct_set *fs, const struct roce_sc_flow *f)
{
	for (int k = 0; k < fs->nkinds; k++)
		if (fs->kind[k].op == f->op && fs->kind[k].size == f->size &&
		    fs->kind[k].count == f->count)
			return k;
	return -1;
}

/*
 * Sort the finished flows @p done into kinds: exact kinds while there are at most
 * FCT_MAX_KINDS of them, else decades of bytes moved from the smallest's (ns-3's way of
 * binning a flow trace), the last decade open.
 */
static void fct_kinds(const struct roce_scenario *sc, const struct fct_done *done, size_t n,
		      struct fct_set *fs)
{
	uint64_t least = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		const struct roce_sc_flow *f = &sc->flow[done[i].flow];

		least = ROCE_MIN(least, done[i].bytes);
		if (fs->nkinds > FCT_MAX_KINDS || fct_find(fs, f) >= 0)
			continue;
		if (fs->nkinds < FCT_MAX_KINDS)
			fs->kind[fs->nkinds] = (struct fct_kind){ .op = f->op, .size = f->size,
								  .count = f->count, .decade = -1 };
		fs->nkinds++;	/* FCT_MAX_KINDS + 1: too many */
	}
	if (fs->nkinds <= FCT_MAX_KINDS)
		return;
	fs->lo = decade_of(least);
	for (int d = 0; d < FCT_MAX_KINDS; d++)
		fs->kind[d] = (struct fct_kind){ .decade = d };
	fs->nkinds = FCT_MAX_KINDS;
}

/*
 * Gather the FCTs of the flows that finished, by kind (fct_kinds()), each kind's sorted.
 * @return 0 (fs->all.n may be below ROCE_FCT_MIN_FLOWS), -ENOMEM (fs freed)
 */
static int fct_gather(const struct roce_fabric *fab, struct fct_set *fs)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct fct_done *done = malloc(ROCE_MAX(sc->nflows, 1) * sizeof(*done));
	size_t n = 0;
	bool exact;

	memset(fs, 0, sizeof(*fs));
	fs->flows = (size_t)sc->nflows;
	if (done == NULL)
		return -ENOMEM;
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;

		roce_fabric_flow_result(fab, i, &r);
		if (r.done && r.last_done > r.first_post)
			done[n++] = (struct fct_done){ .flow = i, .bytes = r.bytes,
						       .us = (double)(r.last_done - r.first_post) /
							     ROCE_US };
	}
	fct_kinds(sc, done, n, fs);
	exact = fs->nkinds == 0 || fs->kind[0].decade < 0;
	fs->all.decade = -1;
	fs->all.fct = malloc(ROCE_MAX(n, 1) * sizeof(double));
	for (int k = 0; k < fs->nkinds; k++)
		fs->kind[k].fct = malloc(ROCE_MAX(n, 1) * sizeof(double));
	for (int k = 0; k < fs->nkinds; k++)
		if (fs->kind[k].fct == NULL || fs->all.fct == NULL) {
			fct_set_free(fs);
			free(done);
			return -ENOMEM;
		}
	for (size_t i = 0; i < n; i++) {
		int k = exact ? fct_find(fs, &sc->flow[done[i].flow]) :
				fct_bin(done[i].bytes, fs->lo);

		fs->all.fct[fs->all.n++] = done[i].us;
		fs->kind[k].fct[fs->kind[k].n++] = done[i].us;
	}
	free(done);
	/* decades no flow falls in out, the rest in order */
	for (int k = 0; k < fs->nkinds; k++)
		if (fs->kind[k].n == 0) {
			free(fs->kind[k].fct);
			fs->kind[k--] = fs->kind[--fs->nkinds];
		}
	qsort(fs->kind, (size_t)fs->nkinds, sizeof(fs->kind[0]), fct_kind_cmp);
	qsort(fs->all.fct, fs->all.n, sizeof(double), fab_cmp_double);
	for (int k = 0; k < fs->nkinds; k++)
		qsort(fs->kind[k].fct, fs->kind[k].n, sizeof(double), fab_cmp_double);
	return 0;
}

/* Gather, or set errno (ENODATA: too few finished; ENOMEM) and @return false. */
static bool fct_ready(const struct roce_fabric *fab, struct fct_set *fs)
{
	if (fct_gather(fab, fs) != 0) {
		errno = ENOMEM;
		return false;
	}
	if (fs->all.n < ROCE_FCT_MIN_FLOWS) {
		fct_set_free(fs);
		errno = ENODATA;
		return false;
	}
	return true;
}

static void fct_row(struct roce_table *t, const struct fct_set *fs, const struct fct_kind *k)
{
	const double *v = k->fct;
	double p50 = fab_pct(v, k->n, 0.5);
	char name[96];

	roce_table_add(t, "%s", fct_kind_name(fs, k, name, sizeof(name)));
	roce_table_add(t, "%zu", k->n);
	roce_table_add(t, "%.1f", v[0]);
	roce_table_add(t, "%.1f", p50);
	roce_table_add(t, "%.1f", fab_pct(v, k->n, 0.9));
	roce_table_add(t, "%.1f", fab_pct(v, k->n, 0.99));
	roce_table_add(t, "%.1f", v[k->n - 1]);
	roce_table_add(t, "%.2f", p50 > 0 ? fab_pct(v, k->n, 0.99) / p50 : 0);
}

struct roce_table *roce_fabric_fct_table(const struct roce_fabric *fab)
{
	static const char *const hdr[] = {
		"<flows", "finished", "min (us)", "p50 (us)", "p90 (us)", "p99 (us)", "max (us)",
		"p99 / p50",
	};
	struct roce_table *t;
	struct fct_set fs;
	char title[128];

	if (!fct_ready(fab, &fs))
		return NULL;
	snprintf(title, sizeof(title), "Flow completion times (%zu of %zu flows finished)",
		 fs.all.n, fs.flows);
	t = roce_table_create(title, (int)ROCE_DIM(hdr), hdr);
	if (t != NULL) {
		for (int k = 0; k < fs.nkinds; k++)
			fct_row(t, &fs, &fs.kind[k]);
		if (fs.nkinds != 1)
			fct_row(t, &fs, &fs.all);
		if (fs.nkinds > 0 && fs.kind[0].decade >= 0) {
			snprintf(title, sizeof(title), "more than %d kinds of flow (op, size, "
				 "count): grouped by the bytes each flow moved", FCT_MAX_KINDS);
			roce_table_note(t, title);
		}
		if (fs.all.n < fs.flows)
			roce_table_note(t, "flows that did not finish are not counted: see their "
					"status in the flow table");
	}
	fct_set_free(&fs);
	if (t == NULL)
		errno = ENOMEM;
	return t;
}

/* A kind's ECDF as a step curve: 0 before the first FCT, then (i + 1) / n from the i-th. */
static int fct_curve(struct roce_chart *c, const struct fct_set *fs, const struct fct_kind *k)
{
	double *x = malloc((k->n + 1) * sizeof(double)), *y = malloc((k->n + 1) * sizeof(double));
	char name[96];
	int rc = -ENOMEM;

	if (x != NULL && y != NULL) {
		x[0] = k->fct[0];
		y[0] = 0;
		for (size_t i = 0; i < k->n; i++) {
			x[i + 1] = k->fct[i];
			y[i + 1] = (double)(i + 1) / (double)k->n;
		}
		rc = roce_chart_series(c, fct_kind_name(fs, k, name, sizeof(name)), x, y, k->n + 1);
	}
	free(x);
	free(y);
	return rc;
}

struct roce_chart *roce_fabric_fct_chart(const struct roce_fabric *fab)
{
	struct roce_chart *c;
	struct fct_set fs;
	int rc = 0;

	if (!fct_ready(fab, &fs))
		return NULL;
	c = roce_chart_create(ROCE_CHART_STEP, "Flow completion times (finished flows)", "FCT (us)",
			      "share done by then");
	if (c != NULL && fs.all.fct[fs.all.n - 1] > 10 * fs.all.fct[0])
		roce_chart_xlog(c);	/* spread over decades: small flows get their share */
	if (c != NULL) {
		for (int k = 0; k < fs.nkinds && rc == 0; k++)
			rc = fct_curve(c, &fs, &fs.kind[k]);
		if (rc == 0 && fs.nkinds != 1)
			rc = fct_curve(c, &fs, &fs.all);
		if (rc != 0) {
			roce_chart_destroy(c);
			c = NULL;
		}
	}
	fct_set_free(&fs);
	if (c == NULL)
		errno = ENOMEM;
	return c;
}

/* The node at the other end of switch @p s's port @p p. */
static const char *peer_name(const struct roce_fabric *fab, int s, int p, char *buf, size_t len)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	int node = sc->nhosts + s;

	for (int l = 0; l < sc->nlinks; l++) {
		for (int side = 0; side < 2; side++) {
			int me = side == 0 ? sc->link[l].a : sc->link[l].b;
			int other = side == 0 ? sc->link[l].b : sc->link[l].a;
			int op = roce_fabric_link_port(fab, l, 1 - side);

			if (me != node || roce_fabric_link_port(fab, l, side) != p)
				continue;
			if (op < 0)
				fab_name(buf, len, "%s", roce_scenario_node_name(sc, other));
			else
				fab_name(buf, len, "%s p%d", roce_scenario_node_name(sc, other), op);
			return buf;
		}
	}
	return "?";
}

static const char *const port_hdr[] = {
	"<port", "<to", "prio", "rx frames", "tx frames", "drops", "ECN marks",
	"pause tx", "pause rx", "paused (us)", "max queue (KB)",
};

/* One switch port and priority that saw traffic, its counters read. */
struct port_row {
	int sw, port, prio;
	uint64_t drops;
	struct roce_switch_qstats q;
};

/* The port table's rows: every switch port and priority that saw traffic, in order. */
static struct port_row *port_rows(const struct roce_fabric *fab, int *n)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct port_row *rows = NULL;
	int cap = 0;

	*n = 0;
	for (int s = 0; s < sc->nswitches; s++)
		cap += sc->sw[s].conf.nports * ROCE_NPRIO;
	rows = calloc((size_t)cap + 1, sizeof(*rows));
	if (rows == NULL)
		return NULL;
	for (int s = 0; s < sc->nswitches; s++)
		for (int p = 0; p < sc->sw[s].conf.nports; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct port_row *r = &rows[*n];

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio,
						   &r->q);
				r->drops = r->q.drop_tail + r->q.drop_headroom + r->q.drop_watchdog;
				if (r->q.rx_frames + r->q.tx_frames + r->drops + r->q.pause_tx +
				    r->q.pause_rx == 0)
					continue;
				r->sw = s;
				r->port = p;
				r->prio = prio;
				(*n)++;
			}
	return rows;
}

static void port_row_add(struct roce_table *t, const struct roce_fabric *fab,
			 const struct port_row *r)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	char peer[80];

	roce_table_add(t, "%s p%d", sc->sw[r->sw].name, r->port);
	roce_table_add(t, "%s", peer_name(fab, r->sw, r->port, peer, sizeof(peer)));
	roce_table_add(t, "%d", r->prio);
	roce_table_add(t, "%" PRIu64, r->q.rx_frames);
	roce_table_add(t, "%" PRIu64, r->q.tx_frames);
	roce_table_add(t, "%" PRIu64, r->drops);
	roce_table_add(t, "%" PRIu64, r->q.ecn_marked);
	roce_table_add(t, "%" PRIu64, r->q.pause_tx);
	roce_table_add(t, "%" PRIu64, r->q.pause_rx);
	roce_table_add(t, "%.1f", (double)r->q.paused_time / ROCE_US);
	roce_table_add(t, "%.1f", (double)r->q.max_qbytes / 1000);
}

struct roce_table *roce_fabric_port_table(const struct roce_fabric *fab)
{
	struct roce_table *t = roce_table_create("Switch ports, per priority (active ones)",
						 (int)ROCE_DIM(port_hdr), port_hdr);
	int n;
	struct port_row *rows = t != NULL ? port_rows(fab, &n) : NULL;

	if (rows == NULL) {
		roce_table_destroy(t);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		port_row_add(t, fab, &rows[i]);
	if (n == 0)
		roce_table_note(t, "no switch carried traffic");
	free(rows);
	return t;
}

/* Drops first, then pauses sent and received, paused time, ECN marks, the deepest queue. */
static int port_row_cmp(const void *a, const void *b)
{
	const struct port_row *x = a, *y = b;
	const uint64_t kx[] = { x->drops, x->q.pause_tx + x->q.pause_rx, x->q.paused_time,
				x->q.ecn_marked, x->q.max_qbytes };
	const uint64_t ky[] = { y->drops, y->q.pause_tx + y->q.pause_rx, y->q.paused_time,
				y->q.ecn_marked, y->q.max_qbytes };

	for (size_t k = 0; k < ROCE_DIM(kx); k++)
		if (kx[k] != ky[k])
			return kx[k] > ky[k] ? -1 : 1;
	if (x->sw != y->sw)
		return x->sw - y->sw;
	return x->port != y->port ? x->port - y->port : x->prio - y->prio;
}

struct roce_table *roce_fabric_port_table_worst(const struct roce_fabric *fab, int n)
{
	int rows_n;
	struct port_row *rows = port_rows(fab, &rows_n);
	struct roce_table *t;
	char title[200];

	if (rows == NULL)
		return NULL;
	qsort(rows, (size_t)rows_n, sizeof(*rows), port_row_cmp);
	snprintf(title, sizeof(title), "Switch ports, per priority: %d of %d, drops first, then "
		 "pauses, ECN marks and the deepest queues (all in ports.csv and report.html)",
		 ROCE_MIN(n, rows_n), rows_n);
	t = roce_table_create(title, (int)ROCE_DIM(port_hdr), port_hdr);
	for (int i = 0; t != NULL && i < ROCE_MIN(n, rows_n); i++)
		port_row_add(t, fab, &rows[i]);
	free(rows);
	return t;
}

/* Sum a device counter over all hosts; UINT64_MAX if the devices have no such counter. */
static uint64_t host_counter(const struct roce_fabric *fab, const char *name)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	uint64_t sum = 0;

	for (int h = 0; h < sc->nhosts; h++) {
		uint64_t v = roce_device_counter_by_name(roce_fabric_device(fab, h), name);

		if (v == UINT64_MAX)
			return UINT64_MAX;
		sum += v;
	}
	return sum;
}

/* The PFC frames all NICs received (XOFF and XON), summed over the priorities they name. */
static uint64_t nic_pauses_rx(const struct roce_fabric *fab)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	uint64_t sum = 0;

	for (int prio = 0; prio < ROCE_NPRIO; prio++) {
		char name[32];

		snprintf(name, sizeof(name), "rx_prio%d_pause", prio);
		for (int h = 0; h < sc->nhosts; h++)
			sum += roce_device_counter_by_name(roce_fabric_device(fab, h), name);
	}
	return sum;
}

/* Does some host's NIC have a host interface rate ([nic] or [host.NAME] pcie)? */
static bool host_interfaces(const struct roce_scenario *sc)
{
	for (int h = 0; h < sc->nhosts; h++)
		if (sc->host[h].pcie_bps != 0)
			return true;
	return sc->pcie_bps != 0;
}

/* "64: TTL expiry 40, tail 24" (the causes that dropped anything, in enum order), or "0". */
static const char *drop_causes(const struct roce_fabric_balance *b, char *buf, size_t len)
{
	size_t used;

	snprintf(buf, len, "%" PRIu64, roce_fabric_balance_dropped(b));
	for (int c = 0, n = 0; c < ROCE_DROP_NUM; c++) {
		if (b->dropped[c] == 0)
			continue;
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s %" PRIu64, n++ == 0 ? ": " : ", ",
			 roce_drop_cause_name[c], b->dropped[c]);
	}
	return buf;
}

/* ---- what stands out ---- */

#define FINDING_PAUSED 0.10	/* a sender paused this share of the run is worth a line */
#define FINDING_UNFAIR 2.0	/* a pattern's fastest flow this many times its slowest: a line */
#define FINDING_KINDS 15	/* stopped short; deadlock; error, corrupt, stalled, not started,
				 * slow; resends; switch buffer drops, switch forwarding drops,
				 * link, NIC buffer and NIC discards; pauses; shares: each one at
				 * most */
ROCE_STATIC_ASSERT(FINDING_KINDS <= ROCE_FINDINGS_MAX);

static void finding(struct roce_findings *fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void finding(struct roce_findings *fd, const char *fmt, ...)
{
	va_list ap;

	if (fd->n == ROCE_FINDINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(fd->text[fd->n++], sizeof(fd->text[0]), fmt, ap);
	va_end(ap);
}

/* "a, b, c, d, ...": the first four names of the flows with status @p st. */
static int flow_names(const struct roce_fabric *fab, const char *st, char *names, size_t len)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	int n = 0;

	names[0] = '\0';
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;
		size_t used = strlen(names);

		roce_fabric_flow_result(fab, i, &r);
		if (strcmp(flow_status(fab, &r), st) != 0)
			continue;
		if (n < 4)
			snprintf(names + used, len - used, "%s%s", n ? ", " : "", sc->flow[i].name);
		else if (n == 4)
			snprintf(names + used, len - used, ", ...");
		n++;
	}
	return n;
}

/* Line rate of host @p h's link; 0 if it has none. */
static uint64_t host_rate(const struct roce_fabric *fab, int h)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);

	for (int l = 0; l < sc->nlinks; l++)
		if (sc->link[l].a == h || sc->link[l].b == h)
			return roce_link_rate(roce_fabric_link(fab, l));
	return 0;
}

/* What stalled flows' requesters wait on, by kind: how many, the soonest end, the lowest rate. */
struct wait_tally {
	int n[ROCE_QP_WAIT_ACK + 1];
	roce_time_t soonest[ROCE_QP_WAIT_ACK + 1];
	uint64_t rate;		/* lowest rate limit of those held by it */
	uint8_t retries;	/* retries left, of the one flow waiting for ACKs */
};

/* "waiting for ACKs, its ACK timeout due in 3300 us (7 retries left)"; plural with a count. */
static void wait_words(const struct wait_tally *wt, roce_time_t now, int flows, char *buf,
		       size_t len)
{
	static const char *const one[] = {
		[ROCE_QP_WAIT_RNR] = "waiting on an RNR NAK's timer",
		[ROCE_QP_WAIT_PAUSED] = "paused by PFC at its NIC",
		[ROCE_QP_WAIT_RATE] = "held by its rate limiter",
		[ROCE_QP_WAIT_SEND] = "a packet waiting for its port",
		[ROCE_QP_WAIT_ACK] = "waiting for ACKs",
	};
	static const char *const many[] = {
		[ROCE_QP_WAIT_RNR] = "waiting on RNR NAK timers",
		[ROCE_QP_WAIT_PAUSED] = "paused by PFC at their NIC",
		[ROCE_QP_WAIT_RATE] = "held by their rate limiters",
		[ROCE_QP_WAIT_SEND] = "with a packet waiting for their port",
		[ROCE_QP_WAIT_ACK] = "waiting for ACKs",
	};
	size_t used = 0;

	buf[0] = '\0';
	for (int k = ROCE_QP_WAIT_RNR; k <= ROCE_QP_WAIT_ACK && used < len; k++) {
		double in = wt->soonest[k] > now && wt->soonest[k] != ROCE_TIME_NEVER ?
			    (double)(wt->soonest[k] - now) / ROCE_US : 0;
		char more[96] = "";

		if (wt->n[k] == 0)
			continue;
		if (k == ROCE_QP_WAIT_RATE)
			snprintf(more, sizeof(more), " at %.3g Gb/s", (double)wt->rate / 1e9);
		else if (k == ROCE_QP_WAIT_ACK && wt->soonest[k] == ROCE_TIME_NEVER)
			snprintf(more, sizeof(more), ", no ACK timeout set");
		else if (k == ROCE_QP_WAIT_ACK && flows == 1)
			snprintf(more, sizeof(more), ", its ACK timeout due in %.0f us (%u retries "
				 "left)", in, wt->retries);
		else if (k == ROCE_QP_WAIT_ACK)
			snprintf(more, sizeof(more), ", the first ACK timeout due in %.0f us", in);
		else if (k == ROCE_QP_WAIT_RNR)
			snprintf(more, sizeof(more), ", due in %.0f us", in);
		if (flows == 1)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", one[k], more);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%d %s%s",
						 used ? ", " : "", wt->n[k], many[k], more);
	}
}

/*
 * Stalled flows: how long they delivered nothing (the shortest of them: true of all) and what
 * they wait on. "1 of 6 flows stalled (a): nothing delivered in its last 19680 us; waiting for
 * ACKs, its ACK timeout due in 47400 us (7 retries left): see the flow table".
 */
static void stalled_finding(const struct roce_fabric *fab, struct roce_findings *fd)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	roce_time_t now = roce_fabric_now(fab), silent = ROCE_TIME_NEVER;
	struct wait_tally wt;
	char names[160], why[240];
	bool tracked = true;
	int n = flow_names(fab, "stalled", names, sizeof(names));

	if (n == 0)
		return;
	memset(&wt, 0, sizeof(wt));
	for (int k = 0; k <= ROCE_QP_WAIT_ACK; k++)
		wt.soonest[k] = ROCE_TIME_NEVER;
	wt.rate = UINT64_MAX;
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;
		int k;

		roce_fabric_flow_result(fab, i, &r);
		if (strcmp(flow_status(fab, &r), "stalled") != 0)
			continue;
		silent = ROCE_MIN(silent, now - flow_silent_since(&r));
		tracked = tracked && r.rx_tracked;
		k = (int)r.wait.kind;
		wt.n[k]++;
		wt.soonest[k] = ROCE_MIN(wt.soonest[k], r.wait.until);
		if (k == ROCE_QP_WAIT_RATE)
			wt.rate = ROCE_MIN(wt.rate, r.wait.rate_bps);
		wt.retries = r.wait.retries_left;
	}
	wait_words(&wt, now, n, why, sizeof(why));
	finding(fd, "%d of %d flows stalled (%s): %s in %s last %.0f us%s%s%s: see the flow table",
		n, sc->nflows, names, tracked ? "nothing delivered" : "no message completed",
		n == 1 ? "its" : "their", (double)silent / ROCE_US,
		tracked ? "" : " (sampling is off: deliveries are not tracked)",
		why[0] ? "; " : "", why);
}

/*
 * Slow flows: still delivering, no message completed lately. "1 of 240 flows slow (a2a.15-6):
 * still delivering, but no message completed in its last 722 us (its slowest took 356 us); its
 * dcqcn rate fell to 0.27 Gb/s since its last completion: see the flow table".
 */
static void slow_finding(const struct roce_fabric *fab, struct roce_findings *fd)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	roce_time_t now = roce_fabric_now(fab), quiet = ROCE_TIME_NEVER;
	double slowest = 0, rate = 0;
	char names[160], cut[160] = "";
	int n = flow_names(fab, "slow", names, sizeof(names)), limited = 0;

	if (n == 0)
		return;
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;

		roce_fabric_flow_result(fab, i, &r);
		if (strcmp(flow_status(fab, &r), "slow") != 0)
			continue;
		quiet = ROCE_MIN(quiet, now - r.last_done);
		slowest = ROCE_MAX(slowest, r.lat_max_us);
		/* a rate limit below the line rate held it since its last completion */
		if (r.rate_min_gbps > 0 &&
		    r.rate_min_gbps * 1e9 < 0.99 * (double)host_rate(fab, sc->flow[i].src)) {
			rate = limited++ ? ROCE_MIN(rate, r.rate_min_gbps) : r.rate_min_gbps;
		}
	}
	if (limited == n && n == 1)
		snprintf(cut, sizeof(cut), "; its %s rate fell to %.3g Gb/s since its last "
			 "completion", sc->cc, rate);
	else if (limited != 0)
		snprintf(cut, sizeof(cut), "; %d of them had their %s rate cut, to %.3g Gb/s at "
			 "the lowest", limited, sc->cc, rate);
	finding(fd, "%d of %d flows slow (%s): still delivering, but no message completed in %s "
		"last %.0f us (%s slowest took %.0f us)%s: see the flow table", n, sc->nflows, names,
		n == 1 ? "its" : "their", (double)quiet / ROCE_US, n == 1 ? "its" : "the",
		slowest, cut);
}

/*
 * Flows in trouble, one finding per status (flow_trouble's order): "2 of 6 flows ended in
 * error (a, b)"; then what was resent.
 */
static void flow_findings(const struct roce_fabric *fab, struct roce_findings *fd)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	uint64_t resent = 0, timeouts = 0;
	int resent_flows = 0;

	for (size_t b = 0; b < ROCE_DIM(flow_trouble); b++) {
		char names[160];
		int n;

		if (strcmp(flow_trouble[b][0], "stalled") == 0) {
			stalled_finding(fab, fd);
			continue;
		}
		if (strcmp(flow_trouble[b][0], "slow") == 0) {
			slow_finding(fab, fd);
			continue;
		}
		n = flow_names(fab, flow_trouble[b][0], names, sizeof(names));
		if (n != 0)
			finding(fd, "%d of %d flows %s (%s): see the flow table", n, sc->nflows,
				flow_trouble[b][1], names);
	}
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;

		roce_fabric_flow_result(fab, i, &r);
		resent += r.retransmits;
		timeouts += r.timeouts;
		resent_flows += r.retransmits != 0;
	}
	if (resent != 0)
		finding(fd, "%" PRIu64 " frames resent (go-back-N) by %d flow%s; %" PRIu64
			" ACK timeout%s", resent, resent_flows, resent_flows == 1 ? "" : "s",
			timeouts, timeouts == 1 ? "" : "s");
}

/*
 * The switch port with the most frames dropped by @p cause (TTL, no route, malformed: counted
 * per port): "sw1 p0" into @p where, the node it faces ("sw0") into @p from.
 * @return that port's count
 */
static uint64_t port_drops_worst(const struct roce_fabric *fab, enum roce_drop_cause cause,
				 char *where, size_t len, char *from, size_t flen)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	uint64_t worst = 0;

	for (int s = 0; s < sc->nswitches; s++)
		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_pstats ps;
			char peer[64];
			uint64_t d;

			roce_switch_pstats(roce_fabric_switch(fab, s), (uint16_t)p, &ps);
			d = cause == ROCE_DROP_TTL ? ps.drop_ttl :
			    cause == ROCE_DROP_NO_ROUTE ? ps.drop_no_route : ps.drop_malformed;
			if (d > worst) {
				worst = d;
				fab_name(where, len, "%s p%d", sc->sw[s].name, p);
				fab_name(from, flen, "%s", peer_name(fab, s, p, peer, sizeof(peer)));
				from[strcspn(from, " ")] = '\0';	/* the node, not its port */
			}
		}
	return worst;
}

/*
 * Frames lost: in switches' buffers by reason; frames switches could not forward (TTL, no
 * route, malformed), each cause explained; on links by cause; in NICs' receive buffers; and
 * frames NICs discarded on arrival (ICRC, no QP, ...).
 */
static void loss_findings(const struct roce_fabric *fab, struct roce_findings *fd)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	uint64_t tail = 0, hdrm = 0, wd = 0, worst = 0, nic;
	struct roce_fabric_balance b;
	char where[96] = "", text[400] = "";
	size_t used;

	(void)roce_fabric_balance(fab, &b);
	for (int s = 0; s < sc->nswitches; s++)
		for (int p = 0; p < sc->sw[s].conf.nports; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;
				uint64_t d;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				d = q.drop_tail + q.drop_headroom + q.drop_watchdog;
				tail += q.drop_tail;
				hdrm += q.drop_headroom;
				wd += q.drop_watchdog;
				if (d > worst) {
					worst = d;
					fab_name(where, sizeof(where), "%s p%d prio %d", sc->sw[s].name,
						 p, prio);
				}
			}
	if (tail + hdrm + wd != 0)
		finding(fd, "switches dropped %" PRIu64 " frames (tail %" PRIu64 ", headroom %"
			PRIu64 ", watchdog %" PRIu64 "), most at %s (%" PRIu64 ")",
			tail + hdrm + wd, tail, hdrm, wd, where, worst);
	/* frames a switch took in and could not forward: one sentence, a clause per cause */
	for (int c = ROCE_DROP_TTL; c <= ROCE_DROP_MALFORMED; c++) {
		char from[64];
		uint64_t most;

		if (b.dropped[c] == 0)
			continue;
		most = port_drops_worst(fab, c, where, sizeof(where), from, sizeof(from));
		used = strlen(text);
		snprintf(text + used, sizeof(text) - used, "%s%s: %" PRIu64 " frames, most at %s (%"
			 PRIu64 ") from %s", used == 0 ? "" : "; ", roce_drop_cause_name[c],
			 b.dropped[c], where, most, from);
		used = strlen(text);
		if (c == ROCE_DROP_TTL)
			/* a frame's TTL (64 from a NIC) does not run out on a fabric's few hops */
			snprintf(text + used, sizeof(text) - used, ": a routing loop through %.*s and "
				 "%s, the frames going round it until their IP TTL reached 1 (see "
				 "the `route.` keys of those switches)", (int)strcspn(where, " "),
				 where, from);
		else
			snprintf(text + used, sizeof(text) - used, ": %s", c == ROCE_DROP_NO_ROUTE ?
				 "no route to their destination" : "not IP, or cut short");
	}
	if (text[0] != '\0')
		finding(fd, "switches dropped frames they could not forward: %s", text);
	text[0] = '\0';
	for (int c = ROCE_DROP_LINK_LOSS; c <= ROCE_DROP_LINK_MTU; c++) {
		static const char *const why[] = {
			[ROCE_DROP_LINK_LOSS] = "loss impairment or drop rule",
			[ROCE_DROP_LINK_DOWN] = "sent while the link was down, or on it when it went "
						"down",
			[ROCE_DROP_LINK_MTU] = "longer than the link's MTU",
		};

		if (b.dropped[c] == 0)
			continue;
		used = strlen(text);
		snprintf(text + used, sizeof(text) - used, "%s%s %" PRIu64 " (%s)", used == 0 ? "" :
			 ", ", roce_drop_cause_name[c], b.dropped[c], why[c]);
	}
	if (text[0] != '\0')
		finding(fd, "links lost %" PRIu64 " frames: %s", b.dropped[ROCE_DROP_LINK_LOSS] +
			b.dropped[ROCE_DROP_LINK_DOWN] + b.dropped[ROCE_DROP_LINK_MTU], text);
	nic = host_counter(fab, "rx_out_of_buffer");
	if (nic != 0 && nic != UINT64_MAX)
		finding(fd, "NICs dropped %" PRIu64 " frames their host interface could not take "
			"(`rx_out_of_buffer`): no switch counts them", nic);
	text[0] = '\0';
	if (b.dropped[ROCE_DROP_NIC_ICRC] != 0)
		snprintf(text, sizeof(text), "ICRC error %" PRIu64 " (bits flipped on the way: a "
			 "link's `corrupt`; the sender resends them)", b.dropped[ROCE_DROP_NIC_ICRC]);
	used = strlen(text);
	if (b.dropped[ROCE_DROP_NIC_DISCARD] != 0)
		snprintf(text + used, sizeof(text) - used, "%sother %" PRIu64 " (malformed, no such "
			 "QP, wrong QP state, opcode or Q_Key: see counters.txt)", used == 0 ? "" :
			 ", ", b.dropped[ROCE_DROP_NIC_DISCARD]);
	if (text[0] != '\0')
		finding(fd, "NICs discarded %" PRIu64 " frames on arrival: %s",
			b.dropped[ROCE_DROP_NIC_ICRC] + b.dropped[ROCE_DROP_NIC_DISCARD], text);
}

/* The sending queues PFC paused longest (switch egresses, NICs), over FINDING_PAUSED of the run. */
static void pause_findings(const struct roce_fabric *fab, struct roce_findings *fd)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	double run = (double)roce_fabric_now(fab), top[3] = { 0 };
	char name[3][96] = { "" }, list[400] = "";
	int more = 0;

	if (run <= 0)
		return;
	for (int node = 0; node < sc->nhosts + sc->nswitches; node++) {
		int s = node - sc->nhosts, nq = s < 0 ? ROCE_NPRIO : sc->sw[s].conf.nports * ROCE_NPRIO;

		for (int k = 0; k < nq; k++) {
			double paused;
			char who[96];

			if (s < 0) {
				char c[40];

				snprintf(c, sizeof(c), "rx_prio%d_pause_duration_ns", k);
				paused = (double)roce_device_counter_by_name(
					roce_fabric_device(fab, node), c) * ROCE_NS;
				fab_name(who, sizeof(who), "%s prio %d", sc->host[node].name, k);
			} else {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)(k / ROCE_NPRIO),
						   k % ROCE_NPRIO, &q);
				paused = (double)q.paused_time;
				fab_name(who, sizeof(who), "%s p%d prio %d", sc->sw[s].name,
					 k / ROCE_NPRIO, k % ROCE_NPRIO);
			}
			paused = ROCE_MIN(paused, run);	/* a pause may reach past the end */
			if (paused < FINDING_PAUSED * run)
				continue;
			more++;
			for (int i = 0; i < 3; i++) {
				if (paused <= top[i])
					continue;
				for (int j = 2; j > i; j--) {
					top[j] = top[j - 1];
					memcpy(name[j], name[j - 1], sizeof(name[j]));
				}
				top[i] = paused;
				memcpy(name[i], who, sizeof(name[i]));
				break;
			}
		}
	}
	if (more == 0)
		return;
	for (int i = 0; i < 3 && top[i] > 0; i++) {
		size_t used = strlen(list);

		snprintf(list + used, sizeof(list) - used, "%s%s %.0f%%", i ? ", " : "", name[i],
			 100 * top[i] / run);
	}
	finding(fd, "PFC paused %d sending queue%s (switch egress or NIC, per priority) for more "
		"than %.0f%% of the run: %s%s", more, more == 1 ? "" : "s", 100 * FINDING_PAUSED,
		list, more > 3 ? ", ..." : "");
}

/* Is @p b of @p a's pattern (@p plen: the length of its name), and alike: a fair comparison? */
static bool same_share(const struct roce_sc_flow *a, const struct roce_sc_flow *b, size_t plen)
{
	return b->from_pattern && b->after < 0 && strncmp(a->name, b->name, plen) == 0 &&
	       b->name[plen] == '.' && b->op == a->op && b->size == a->size &&
	       b->count == a->count && b->start == a->start && b->nqp == a->nqp &&
	       b->depth == a->depth;
}

/*
 * The pattern whose flows got the most unequal shares, if its fastest had more than
 * FINDING_UNFAIR times the goodput of its slowest: flows of one incast, all-to-all or
 * permutation (the same messages, started together), 4 or more that completed a message. On a
 * leaf-spine that is ECMP hashing flows onto shared uplinks; in an incast with PFC alone, the
 * victims of head-of-line blocking. An all-reduce's steps wait for one another: not compared.
 */
static void share_findings(const struct roce_fabric *fab, struct roce_findings *fd)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	double worst = FINDING_UNFAIR, lo_g = 0, hi_g = 0;
	int lo_f = -1, hi_f = -1, n_f = 0;

	for (int i = 0; i < sc->nflows; i++) {
		const struct roce_sc_flow *f = &sc->flow[i];
		size_t plen = strcspn(f->name, ".");
		double lo = 0, hi = 0;
		int lo_i = -1, hi_i = -1, n = 0, j;
		bool coll = false;

		for (int c = 0; c < sc->ncoll; c++)
			coll |= i >= sc->coll[c].first_flow &&
				i < sc->coll[c].first_flow + sc->coll[c].nflows;
		/* a pattern's flows are consecutive: start at its first */
		if (coll || !same_share(f, f, plen) ||
		    (i > 0 && same_share(f, &sc->flow[i - 1], plen)))
			continue;
		for (j = i; j < sc->nflows && same_share(f, &sc->flow[j], plen); j++) {
			struct roce_flow_result r;

			roce_fabric_flow_result(fab, j, &r);
			if (r.messages == 0 || r.goodput_gbps <= 0)
				continue;
			if (lo_i < 0 || r.goodput_gbps < lo)
				lo = r.goodput_gbps, lo_i = j;
			if (hi_i < 0 || r.goodput_gbps > hi)
				hi = r.goodput_gbps, hi_i = j;
			n++;
		}
		if (n >= 4 && hi > worst * lo) {
			worst = hi / lo;
			lo_g = lo, hi_g = hi, lo_f = lo_i, hi_f = hi_i, n_f = n;
		}
		i = j - 1;
	}
	if (n_f != 0)
		finding(fd, "unequal shares: %d flows of [pattern.%.*s] ran at %.1f to %.1f Gb/s "
			"of goodput (%s the slowest, %s the fastest): see the flow table", n_f,
			(int)strcspn(sc->flow[lo_f].name, "."), sc->flow[lo_f].name, lo_g, hi_g,
			sc->flow[lo_f].name, sc->flow[hi_f].name);
}

/* When a switch's PFC watchdog first dropped frames; 0: never. */
static roce_time_t watchdog_first(const struct roce_fabric *fab)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	roce_time_t wd = 0;

	for (int s = 0; s < sc->nswitches; s++) {
		roce_time_t t = roce_switch_watchdog_first(roce_fabric_switch(fab, s));

		if (t != 0 && (wd == 0 || t < wd))
			wd = t;
	}
	return wd;
}

void roce_fabric_findings(const struct roce_fabric *fab, struct roce_findings *fd)
{
	char dl[300], names[160];
	int waiting = flow_names(fab, "waiting", names, sizeof(names));

	memset(fd, 0, sizeof(*fd));
	if (roce_fabric_cut(fab))
		finding(fd, "the run was stopped at %.1f us, before its end (scenario.duration = "
			"%.1f us) and before every flow was done: everything here covers the run up "
			"to then", (double)roce_fabric_now(fab) / ROCE_US,
			(double)roce_fabric_scenario(fab)->duration / ROCE_US);
	if (roce_fabric_deadlock(fab, dl, sizeof(dl))) {
		bool now;
		uint32_t n = roce_fabric_deadlocks(fab, NULL, &now);
		const char *by = watchdog_first(fab) != 0 ? "the PFC watchdog broke it" : "it broke";

		if (n == 1 && now)
			finding(fd, "PFC deadlock %s: a cycle of paused queues, nothing in it moves "
				"again (unless a PFC watchdog breaks it)", dl);
		else if (n == 1)
			finding(fd, "PFC deadlock %s: a cycle of paused queues; %s and it did not "
				"form again", dl, by);
		else
			finding(fd, "PFC deadlock %s: a cycle of paused queues; %s, and the same "
				"routes made it again: %u times in all%s", dl, by, n,
				now ? ", and stuck at the end of the run" : "");
	}
	flow_findings(fab, fd);
	loss_findings(fab, fd);
	pause_findings(fab, fd);
	share_findings(fab, fd);
	if (fd->n == 0 && waiting != 0)
		finding(fd, "nothing: every flow that started finished or ran to the end (%d more "
			"wait for their start, or for the flow they follow), no frame was dropped or "
			"lost, and PFC paused no sending queue for more than %.0f%% of the run",
			waiting, 100 * FINDING_PAUSED);
	else if (fd->n == 0)
		finding(fd, "nothing: every flow finished or ran to the end, no frame was dropped "
			"or lost, and PFC paused no sending queue for more than %.0f%% of the run",
			100 * FINDING_PAUSED);
	else if (fd->n == 1 && roce_fabric_cut(fab))
		finding(fd, "nothing else: no flow failed, no frame was dropped or lost, and PFC "
			"paused no sending queue for more than %.0f%% of the run", 100 * FINDING_PAUSED);
}

struct roce_table *roce_fabric_summary_table(const struct roce_fabric *fab, double wall_sec)
{
	static const char *const hdr[] = { "<what", "value" };
	static const char *const counters[][2] = {
		{ "np_cnp_sent", "CNPs sent (notification points)" },
		{ "rp_cnp_handled", "CNPs handled (reaction points)" },
		{ "np_ecn_marked_roce_packets", "CE-marked packets received" },
	};
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_table *t = roce_table_create("Fabric", 2, hdr);
	uint64_t events, hops, drops = 0, pauses = 0, marks = 0, link_drops = 0;
	struct roce_fabric_balance bal;
	char dl[300], causes[ROCE_DROP_NUM * 48];	/* every cause: name and a 20-digit count */

	if (t == NULL)
		return NULL;
	roce_fabric_work(fab, &events, &hops);
	for (int s = 0; s < sc->nswitches; s++)
		for (int p = 0; p < sc->sw[s].conf.nports; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				pauses += q.pause_tx;
				marks += q.ecn_marked;
			}
	(void)roce_fabric_balance(fab, &bal);	/* a mismatch: the row below shows it */
	for (int c = ROCE_DROP_TAIL; c <= ROCE_DROP_MALFORMED; c++)
		drops += bal.dropped[c];
	for (int c = ROCE_DROP_LINK_LOSS; c <= ROCE_DROP_LINK_MTU; c++)
		link_drops += bal.dropped[c];
	roce_table_add(t, "virtual time");
	roce_table_add(t, "%.1f us", (double)roce_fabric_now(fab) / ROCE_US);
	if (sc->discard) {
		roce_table_add(t, "payloads at the targets");
		roce_table_add(t, "discarded, not checked (payload = discard)");
	}
	roce_table_add(t, "frames delivered by links (hops)");
	roce_table_add(t, "%" PRIu64, hops);
	roce_table_add(t, "switch drops");
	roce_table_add(t, "%" PRIu64, drops);
	roce_table_add(t, "link losses (impairments, down, MTU)");
	roce_table_add(t, "%" PRIu64, link_drops);
	/* every drop, switch, link and NIC, by cause; then where all the frames went */
	roce_table_add(t, "frames dropped, by cause");
	roce_table_add(t, "%s", drop_causes(&bal, causes, sizeof(causes)));
	roce_table_add(t, "frames sent = delivered + dropped + in flight");
	roce_table_add(t, "%" PRIu64 " = %" PRIu64 " + %" PRIu64 " + %" PRIu64 "%s",
		       roce_fabric_balance_sent(&bal), bal.delivered + bal.switch_taken,
		       roce_fabric_balance_dropped(&bal), roce_fabric_balance_in_flight(&bal),
		       roce_fabric_balance_ok(&bal) ? "" : " (does not add up: a bug)");
	roce_table_add(t, "PFC XOFF sent by switches (per priority)");
	roce_table_add(t, "%" PRIu64, pauses);
	roce_table_add(t, "ECN marks");
	roce_table_add(t, "%" PRIu64, marks);
	for (size_t i = 0; i < ROCE_DIM(counters); i++) {
		uint64_t v = host_counter(fab, counters[i][0]);

		if (v == UINT64_MAX)
			continue;
		roce_table_add(t, "%s", counters[i][1]);
		roce_table_add(t, "%" PRIu64, v);
	}
	roce_table_add(t, "PFC XOFF/XON received by NICs (per priority)");
	roce_table_add(t, "%" PRIu64, nic_pauses_rx(fab));
	if (host_interfaces(sc)) {
		/* a NIC behind a slow host interface pauses its switch port: no switch counts it */
		roce_table_add(t, "PFC frames sent by NICs (host interface)");
		roce_table_add(t, "%" PRIu64, host_counter(fab, "tx_pfc_frames"));
		/* drops no switch or link counts: only the receiving NICs' counters show them */
		roce_table_add(t, "NIC receive-buffer drops (host interface)");
		roce_table_add(t, "%" PRIu64, host_counter(fab, "rx_out_of_buffer"));
	}
	for (int c = 0; c < sc->ncoll; c++) {
		const struct roce_sc_collective *co = &sc->coll[c];
		roce_time_t first = ROCE_TIME_NEVER, last = 0;
		bool done = true;

		for (int f = co->first_flow; f < co->first_flow + co->nflows; f++) {
			struct roce_flow_result r;

			roce_fabric_flow_result(fab, f, &r);
			first = ROCE_MIN(first, r.first_post);
			last = ROCE_MAX(last, r.last_done);
			done &= r.done;
		}
		roce_table_add(t, "all-reduce %s (%s over %d hosts)", co->name,
			       fab_bytes(co->size, dl, sizeof(dl)), co->nhosts);
		if (!done || last <= first) {
			roce_table_add(t, "did not finish");
		} else {
			double sec = (double)(last - first) / ROCE_SEC;
			double algbw = (double)co->size * 8 / sec / 1e9;

			/* NCCL's bus bandwidth: what each link carried, comparable to line rate */
			roce_table_add(t, "%.3f ms, busbw %.1f Gb/s", sec * 1e3,
				       algbw * 2 * (co->nhosts - 1) / co->nhosts);
		}
	}
	roce_table_add(t, "PFC deadlock");
	if (roce_fabric_deadlock(fab, dl, sizeof(dl))) {
		uint32_t n = roce_fabric_deadlocks(fab, NULL, NULL);

		if (n > 1)
			roce_table_add(t, "%s (formed %u times)", dl, n);
		else
			roce_table_add(t, "%s", dl);
	} else
		roce_table_add(t, "none");
	if (wall_sec > 0) {
		roce_table_add(t, "engine events");
		roce_table_add(t, "%" PRIu64 " (%.2f M/s wall-clock)", events, (double)events / wall_sec / 1e6);
		roce_table_add(t, "packet-hops per wall-clock second");
		roce_table_add(t, "%.2f M", (double)hops / wall_sec / 1e6);
		roce_table_add(t, "simulated time per wall-clock second");
		roce_table_add(t, "%.3g", (double)roce_fabric_now(fab) / ROCE_SEC / wall_sec);
	}
	return t;
}

int roce_fabric_write_metrics(const struct roce_fabric *fab, FILE *f)
{
	static const struct {
		enum roce_series_kind kind;
		const char *name;
	} kinds[] = {
		{ ROCE_SERIES_FLOW_GBPS, "flow_goodput_gbps" },
		{ ROCE_SERIES_RATE_GBPS, "flow_rp_rate_gbps" },
		{ ROCE_SERIES_QUEUE_KB, "queue_kb" },
		{ ROCE_SERIES_PAUSED, "paused_pct" },
		{ ROCE_SERIES_PORT_GBPS, "port_tx_gbps" },
	};

	fprintf(f, "time_us,metric,object,value\n");
	for (size_t k = 0; k < ROCE_DIM(kinds); k++) {
		int n = roce_fabric_nseries(fab, kinds[k].kind);

		for (int i = 0; i < n; i++) {
			struct roce_series s;

			roce_fabric_series(fab, kinds[k].kind, i, &s);
			for (size_t j = 0; j < s.n; j++)
				fprintf(f, "%.3f,%s,%s,%.6g\n", s.t_us[j], kinds[k].name, s.name, s.v[j]);
		}
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}

/*
 * What happened at a known time, on a time-series chart: the scenario's scheduled link changes,
 * the deadlock found, the PFC watchdog's first drop.
 */
static void fab_chart_marks(const struct roce_fabric *fab, struct roce_chart *c)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	roce_time_t wd = 0, dl_at[ROCE_FABRIC_DEADLOCKS_KEPT];
	char label[128];
	uint32_t dl;

	for (int i = 0; i < sc->nevents; i++) {
		const struct roce_sc_event *e = &sc->event[i];
		const char *link = sc->link[e->link].name;

		switch (e->kind) {
		case ROCE_SC_EV_RATE:
			snprintf(label, sizeof(label), "%s to %gG", link, (double)e->rate_bps / 1e9);
			break;
		case ROCE_SC_EV_DOWN:
			snprintf(label, sizeof(label), "%s down", link);
			break;
		case ROCE_SC_EV_UP:
			snprintf(label, sizeof(label), "%s up", link);
			break;
		case ROCE_SC_EV_LOSS:
			snprintf(label, sizeof(label), "%s loss %g", link, e->loss);
			break;
		}
		roce_chart_mark(c, (double)e->at / ROCE_US, label);
	}
	dl = roce_fabric_deadlocks(fab, dl_at, NULL);
	for (uint32_t i = 0; i < ROCE_MIN(dl, (uint32_t)ROCE_FABRIC_DEADLOCKS_KEPT); i++)
		roce_chart_mark(c, (double)dl_at[i] / ROCE_US, i == 0 ? "deadlock found" :
				"deadlock again");
	wd = watchdog_first(fab);
	if (wd != 0)
		roce_chart_mark(c, (double)wd / ROCE_US, "PFC watchdog drops");
}

/* The time axis of a run's charts, shared by all of them. */
struct time_axis {
	double end;		/* the run's end (us) */
	double last;		/* the last time anything changed (us); 0: never */
	double shown;		/* where the axis stops: end, or a step past last */
};

/*
 * The last time anything a chart shows changed: a sample that differs from the one before in
 * any of the run's series, a scheduled event, a deadlock found, the watchdog's first drop.
 */
static double last_change_us(const struct roce_fabric *fab)
{
	static const enum roce_series_kind kinds[] = {
		ROCE_SERIES_FLOW_GBPS, ROCE_SERIES_QUEUE_KB, ROCE_SERIES_PAUSED,
		ROCE_SERIES_RATE_GBPS, ROCE_SERIES_PORT_GBPS,
	};
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	roce_time_t dl_at[ROCE_FABRIC_DEADLOCKS_KEPT];
	uint32_t dl = roce_fabric_deadlocks(fab, dl_at, NULL);
	double last = 0;

	for (size_t k = 0; k < ROCE_DIM(kinds); k++) {
		int n = roce_fabric_nseries(fab, kinds[k]);

		for (int i = 0; i < n; i++) {
			struct roce_series s;

			roce_fabric_series(fab, kinds[k], i, &s);
			for (size_t j = s.n; j-- > 1 && s.t_us[j] > last;) {
				double a = s.v[j - 1], b = s.v[j];

				if (a != b && !(isnan(a) && isnan(b))) {
					last = s.t_us[j];
					break;
				}
			}
		}
	}
	for (int i = 0; i < sc->nevents; i++)
		last = ROCE_MAX(last, (double)sc->event[i].at / ROCE_US);
	for (uint32_t i = 0; i < ROCE_MIN(dl, (uint32_t)ROCE_FABRIC_DEADLOCKS_KEPT); i++)
		last = ROCE_MAX(last, (double)dl_at[i] / ROCE_US);
	return ROCE_MAX(last, (double)watchdog_first(fab) / ROCE_US);
}

/*
 * The axis: the whole run, unless nothing changed in its second half (a PFC deadlock stops
 * everything at 340 us of a 20 ms run, and the charts would be a sliver at the left edge): then
 * it stops at a round time half as far again past the last change.
 */
static void time_axis(const struct roce_fabric *fab, struct time_axis *ax)
{
	struct roce_ticks t;

	ax->end = (double)roce_fabric_now(fab) / ROCE_US;
	ax->last = last_change_us(fab);
	ax->shown = ax->end;
	if (ax->last > 0 && ax->last < ax->end / 2 &&
	    roce_ticks(0, ax->last * 1.5, 5, true, &t) == 0 && t.hi < ax->end)
		ax->shown = t.hi;
}

/* Append to the caption @p cap (of @p len bytes) a sentence in the format @p fmt. */
static void caption_add(char *cap, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void caption_add(char *cap, size_t len, const char *fmt, ...)
{
	size_t used = strlen(cap);
	va_list ap;

	if (used != 0 && used + 1 < len) {
		cap[used++] = ' ';
		cap[used] = '\0';
	}
	va_start(ap, fmt);
	vsnprintf(cap + used, len - used, fmt, ap);
	va_end(ap);
}

/* The run's marks, the axis, and the caption (with why the axis stops early, when it does). */
static void chart_finish(const struct roce_fabric *fab, struct roce_chart *c,
			 const struct time_axis *ax, char *cap, size_t len)
{
	fab_chart_marks(fab, c);
	if (ax->shown < ax->end) {
		roce_chart_xrange(c, 0, ax->shown);
		caption_add(cap, len, "The time axis stops at %.0f us of the run's %.0f us: nothing "
			    "changes after %.0f us, every line stays flat to the end.", ax->shown,
			    ax->end, ax->last);
	}
	if (cap[0] != '\0')
		roce_chart_caption(c, cap);
}

bool fab_flow_stands_out(const struct roce_scenario *sc, int f)
{
	if (sc->flow[f].from_pattern)
		return false;
	for (int i = 0; i < sc->nflows; i++)
		if (sc->flow[i].from_pattern)
			return true;
	return false;
}

struct ranked {
	double v;
	int i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i - y->i;
}

/*
 * Mark @p max more of the @p n items not yet @p used, spread over their values @p v: ranked by
 * value, the lowest, the highest and evenly by rank between (one: the highest).
 */
static int pick_spread(const double *v, int n, int max, bool *used)
{
	struct ranked *r = calloc((size_t)n + 1, sizeof(*r));
	size_t m = 0;

	if (r == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (!used[i])
			r[m++] = (struct ranked){ .v = v[i], .i = i };
	qsort(r, m, sizeof(*r), cmp_ranked);
	if (max == 1 && m != 0)
		used[r[m - 1].i] = true;
	else if (max > 1 && m != 0)
		for (size_t k = 0, steps = (size_t)max - 1; k <= steps && k < m; k++)
			used[r[m <= (size_t)max ? k : (k * (m - 1) + steps / 2) / steps].i] = true;
	free(r);
	return 0;
}

/*
 * @p max of the @p n flows' goodput series that together cover the run: each in turn the one
 * whose span (its first to its last sample with goodput) covers the most samples no flow picked
 * covers, ties to the one that moved more bytes, then the first. The highest peaks would not
 * do: flows at line rate tie, and the first won (an all-reduce's first ring steps, then a flat
 * line to the end). Once the run is covered, the rest spread over the bytes the flows moved
 * (pick_spread()): the flows that all ran the whole run (a permutation on a leaf-spine) show
 * the slowest beside the fastest. O(max (n + samples) + n log n).
 */
static int pick_covering(const struct roce_fabric *fab, int n, int max, bool *used)
{
	size_t len = 0;
	long *first = calloc((size_t)n + 1, sizeof(*first)), *last = NULL, *pre = NULL;
	double *sum = calloc((size_t)n + 1, sizeof(*sum));
	bool *covered = NULL;
	int ret = -ENOMEM;

	if (first == NULL || sum == NULL)
		goto out;
	last = calloc((size_t)n + 1, sizeof(*last));
	for (int i = 0; i < n; i++) {
		struct roce_series s;

		roce_fabric_series(fab, ROCE_SERIES_FLOW_GBPS, i, &s);
		len = ROCE_MAX(len, s.n);
	}
	covered = calloc(len + 1, sizeof(*covered));
	pre = calloc(len + 1, sizeof(*pre));
	if (last == NULL || covered == NULL || pre == NULL)
		goto out;
	for (int i = 0; i < n; i++) {
		struct roce_series s;

		roce_fabric_series(fab, ROCE_SERIES_FLOW_GBPS, i, &s);
		first[i] = -1;
		for (size_t j = 0; j < s.n; j++)
			if (s.v[j] > 0) {
				if (first[i] < 0)
					first[i] = (long)j;
				last[i] = (long)j;
				sum[i] += s.v[j];
			}
	}
	for (int k = 0; k < ROCE_MIN(n, max); k++) {
		long best_gain = -1;
		int best = -1;

		for (size_t j = 0; j < len; j++)	/* pre[j]: uncovered samples before j */
			pre[j + 1] = pre[j] + !covered[j];
		for (int i = 0; i < n; i++) {
			long gain = first[i] < 0 ? 0 : pre[last[i] + 1] - pre[first[i]];

			if (used[i])
				continue;
			if (gain > best_gain || (gain == best_gain && sum[i] > sum[best])) {
				best = i;
				best_gain = gain;
			}
		}
		if (best_gain == 0) {
			ret = pick_spread(sum, n, ROCE_MIN(n, max) - k, used);
			goto out;
		}
		used[best] = true;
		for (long j = first[best]; j >= 0 && j <= last[best]; j++)
			covered[j] = true;
	}
	ret = 0;
out:
	free(first);
	free(last);
	free(pre);
	free(sum);
	free(covered);
	return ret;
}

/*
 * Up to @p max series of @p kind as one chart, with the run's marks, on the run's time axis:
 * flows, for goodput, picked to cover the run, reaction-point rates spread over their means,
 * other series by the highest peaks; the legend
 * says how many were left out. Queues of 1 MB and more are drawn in MB (ticks of "12k" KB read
 * badly). A flow the scenario names on its own among a pattern's (a victim) stands out.
 */
static struct roce_chart *series_chart(const struct roce_fabric *fab, enum roce_series_kind kind,
				       int ck, const char *title, const char *ylabel, int max,
				       const struct time_axis *ax)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_chart *c = NULL;
	int n = roce_fabric_nseries(fab, kind);
	double *peak = calloc((size_t)n + 1, sizeof(double));
	double *mean = calloc((size_t)n + 1, sizeof(double));
	bool *used = calloc((size_t)n + 1, sizeof(bool));
	bool flows = kind == ROCE_SERIES_FLOW_GBPS || kind == ROCE_SERIES_RATE_GBPS;
	bool cover = kind == ROCE_SERIES_FLOW_GBPS && n > max + 1;
	bool spread = kind == ROCE_SERIES_RATE_GBPS && n > max + 1;
	double top = 0, scale = 1, *v = NULL;
	const char *kb = ylabel != NULL ? strstr(ylabel, "KB") : NULL;
	char mb[64], cap[600] = "";
	size_t vlen = 0, drawn = 0;

	if (peak == NULL || mean == NULL || used == NULL)
		goto out;
	if (n == max + 1)	/* one more line, rather than a note that one is not drawn */
		max = n;
	for (int i = 0; i < n; i++) {
		struct roce_series s;

		roce_fabric_series(fab, kind, i, &s);
		for (size_t j = 0; j < s.n; j++) {
			peak[i] = ROCE_MAX(peak[i], s.v[j]);
			mean[i] += s.v[j] / (double)s.n;
		}
		top = ROCE_MAX(top, peak[i]);
		vlen = ROCE_MAX(vlen, s.n);
	}
	if (kind == ROCE_SERIES_QUEUE_KB && top >= 1000 && kb != NULL) {
		scale = 1e-3;
		snprintf(mb, sizeof(mb), "%.*sMB%s", (int)(kb - ylabel), ylabel, kb + 2);
		ylabel = mb;
		v = malloc((vlen + 1) * sizeof(*v));
		if (v == NULL)
			goto out;
	}
	c = roce_chart_create((enum roce_chart_kind)ck, title, "time (us)", ylabel);
	if (c == NULL)
		goto out;
	if (cover || spread) {
		if ((cover ? pick_covering(fab, n, max, used) :
		     pick_spread(mean, n, max, used)) != 0) {
			roce_chart_destroy(c);
			c = NULL;
			goto out;
		}
	} else {
		for (int k = 0; k < ROCE_MIN(n, max); k++) {
			int best = -1;

			for (int i = 0; i < n; i++)
				if (!used[i] && (best < 0 || peak[i] > peak[best]))
					best = i;
			used[best] = true;
		}
	}
	for (int i = 0; i < n; i++) {	/* in their own order, so colours follow names */
		struct roce_series s;

		if (!used[i])
			continue;
		roce_fabric_series(fab, kind, i, &s);
		for (size_t j = 0; v != NULL && j < s.n; j++)
			v[j] = s.v[j] * scale;
		roce_chart_series(c, s.name, s.t_us, v != NULL ? v : s.v, s.n);
		if (flows && fab_flow_stands_out(sc, i))
			roce_chart_highlight(c, drawn);
		drawn++;
	}
	if (cover) {
		char note[64];

		snprintf(note, sizeof(note), "+ %d more flows, not drawn", n - max);
		roce_chart_legend_note(c, note);
		caption_add(cap, sizeof(cap), "%d of the %d flows, picked to span the whole run: "
			    "each in turn the flow whose time with goodput covers the most of the run "
			    "no flow picked before covers, ties to the one that moved more bytes; "
			    "once the run is covered, the rest spread over the bytes the flows "
			    "moved, from the fewest to the most. The flow table lists every flow.",
			    max, n);
	} else if (spread) {
		char note[64];

		snprintf(note, sizeof(note), "+ %d more flows, not drawn", n - max);
		roce_chart_legend_note(c, note);
		caption_add(cap, sizeof(cap), "%d of the %d flows, spread over their mean rates: "
			    "ranked by mean, the lowest, the highest and evenly between.", max, n);
	} else if (n > max) {
		char note[64];

		snprintf(note, sizeof(note), "+ %d more with peaks no higher, not drawn", n - max);
		roce_chart_legend_note(c, note);
	}
	chart_finish(fab, c, ax, cap, sizeof(cap));
out:
	free(v);
	free(peak);
	free(mean);
	free(used);
	return c;
}

struct roce_chart *fab_series_chart(const struct roce_fabric *fab, enum roce_series_kind kind,
				    int ck, const char *title, const char *ylabel, int max)
{
	struct time_axis ax;

	time_axis(fab, &ax);
	return series_chart(fab, kind, ck, title, ylabel, max, &ax);
}

/* Did congestion control ever move a flow's rate (a sample unlike its first)? */
static bool rates_moved(const struct roce_fabric *fab)
{
	int n = roce_fabric_nseries(fab, ROCE_SERIES_RATE_GBPS);

	for (int i = 0; i < n; i++) {
		struct roce_series se;

		roce_fabric_series(fab, ROCE_SERIES_RATE_GBPS, i, &se);
		for (size_t k = 1; k < se.n; k++)
			if (se.v[k] != se.v[0])
				return true;
	}
	return false;
}

/*
 * The goodput of each sending host, its flows summed: when there are more flows than lines,
 * and no more senders. Every flow of the run is in it (an all-reduce's 112 flows are 8 hosts
 * sending step after step), where a pick of flows leaves out part of the run. NULL (errno
 * ENOENT) when there are more senders than @p max lines.
 */
static struct roce_chart *sender_chart(const struct roce_fabric *fab, int max,
				       const struct time_axis *ax)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	int *nf = calloc((size_t)sc->nhosts + 1, sizeof(*nf)), senders = 0, lo = 0, hi = 0;
	double *sum = NULL;
	struct roce_chart *c = NULL;
	struct roce_series s0;
	char cap[600] = "", name[64];

	if (nf == NULL)
		goto out;
	for (int i = 0; i < sc->nflows; i++)
		senders += nf[sc->flow[i].src]++ == 0;
	if (senders > max) {
		errno = ENOENT;
		goto out;
	}
	roce_fabric_series(fab, ROCE_SERIES_FLOW_GBPS, 0, &s0);
	sum = malloc((s0.n + 1) * sizeof(*sum));
	c = roce_chart_create(ROCE_CHART_LINE, "Goodput per sending host (its flows summed)",
			      "time (us)", "Gb/s");
	if (sum == NULL || c == NULL) {
		roce_chart_destroy(c);
		c = NULL;
		goto out;
	}
	for (int h = 0; h < sc->nhosts; h++) {
		if (nf[h] == 0)
			continue;
		lo = lo == 0 ? nf[h] : ROCE_MIN(lo, nf[h]);
		hi = ROCE_MAX(hi, nf[h]);
		memset(sum, 0, s0.n * sizeof(*sum));
		for (int i = 0; i < sc->nflows; i++) {
			struct roce_series s;

			if (sc->flow[i].src != h)
				continue;
			roce_fabric_series(fab, ROCE_SERIES_FLOW_GBPS, i, &s);
			for (size_t j = 0; j < ROCE_MIN(s.n, s0.n); j++)
				sum[j] += s.v[j];
		}
		fab_name(name, sizeof(name), "%s (%d flow%s)", sc->host[h].name, nf[h],
			 nf[h] == 1 ? "" : "s");
		roce_chart_series(c, name, s0.t_us, sum, s0.n);
	}
	if (lo == hi)
		caption_add(cap, sizeof(cap), "%d flows, too many for a line each: a line per "
			    "sending host sums the goodput of its %d flows, so the chart spans the "
			    "whole run. The flow table lists every flow.", sc->nflows, lo);
	else
		caption_add(cap, sizeof(cap), "%d flows, too many for a line each: a line per "
			    "sending host sums the goodput of its %d to %d flows, so the chart spans "
			    "the whole run. The flow table lists every flow.", sc->nflows, lo, hi);
	chart_finish(fab, c, ax, cap, sizeof(cap));
out:
	free(nf);
	free(sum);
	return c;
}

void roce_fabric_add_charts(const struct roce_fabric *fab, struct roce_report *r)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_chart *c = NULL;
	struct time_axis ax;

	time_axis(fab, &ax);
	roce_report_row(r);
	if (sc->nflows > FAB_CHART_FLOWS)
		c = sender_chart(fab, FAB_CHART_FLOWS, &ax);
	if (c == NULL)
		c = series_chart(fab, ROCE_SERIES_FLOW_GBPS, ROCE_CHART_LINE, "Goodput per flow",
				 "Gb/s", FAB_CHART_FLOWS, &ax);
	roce_report_chart(r, c);
	/* no empty frame where there is no queue: a line under the charts says why */
	if (roce_fabric_nseries(fab, ROCE_SERIES_QUEUE_KB) > 0)
		roce_report_chart(r, series_chart(fab, ROCE_SERIES_QUEUE_KB, ROCE_CHART_STEP,
						  "Deepest switch egress queues (all priorities of "
						  "a port)", "queue (KB)", 8, &ax));
	if (roce_fabric_nseries(fab, ROCE_SERIES_PAUSED) > 0)
		roce_report_chart(r, series_chart(fab, ROCE_SERIES_PAUSED, ROCE_CHART_LINE,
						  "Paused by PFC: switch ports and NICs",
						  "% of each interval", 8, &ax));
	if (strcmp(sc->cc, "none") != 0 && rates_moved(fab))
		roce_report_chart(r, series_chart(fab, ROCE_SERIES_RATE_GBPS, ROCE_CHART_LINE,
						  "Reaction-point rate per flow (its QPs' mean)",
						  "Gb/s", FAB_CHART_FLOWS, &ax));
	else if (strcmp(sc->cc, "none") != 0) {
		char text[192];

		snprintf(text, sizeof(text), "No reaction-point rate chart: %s never lowered a "
			 "flow's rate (no CNP reached a sender), so every flow kept its line rate.",
			 sc->cc);
		roce_report_text(r, text);
	}
	if (roce_fabric_nseries(fab, ROCE_SERIES_QUEUE_KB) == 0)
		roce_report_text(r, sc->nswitches == 0 ?
				 "No switch queue chart: this fabric has no switch, its hosts are "
				 "linked directly." :
				 "No switch queue chart: no switch egress queue held a frame at any "
				 "sample.");
}

/*
 * One (port, priority)'s switch counters, "     rx_prio3_frames: 12" as `ethtool -S` lists
 * them, in the NIC's naming (mlx5: rx_prio3_pause): rx_ the ingress side, tx_ the egress.
 * Zeros only with @p zeros. rocelab run's counters.txt and rocelab switch print the same names.
 */
void fab_print_qstats(FILE *f, int prio, const struct roce_switch_qstats *q, bool zeros)
{
	const struct { const char *dir, *name; uint64_t v; } row[] = {
		{ "rx", "frames", q->rx_frames }, { "rx", "bytes", q->rx_bytes },
		{ "tx", "frames", q->tx_frames }, { "tx", "bytes", q->tx_bytes },
		{ "rx", "drop_tail", q->drop_tail }, { "rx", "drop_headroom", q->drop_headroom },
		{ "tx", "drop_watchdog", q->drop_watchdog }, { "tx", "ecn_marked", q->ecn_marked },
		{ "tx", "pause", q->pause_tx }, { "tx", "resume", q->resume_tx },
		{ "rx", "pause", q->pause_rx }, { "rx", "resume", q->resume_rx },
		{ "rx", "pause_duration_ns", q->paused_time / ROCE_NS },
		{ "tx", "max_queue_bytes", q->max_qbytes }, { "tx", "queue_bytes", q->qbytes },
	};

	for (size_t i = 0; i < ROCE_DIM(row); i++)
		if (zeros || row[i].v != 0)
			fprintf(f, "     %s_prio%d_%s: %" PRIu64 "\n", row[i].dir, prio, row[i].name,
				row[i].v);
}

int roce_fabric_write_counters(const struct roce_fabric *fab, FILE *f)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);

	fprintf(f, "# every non-zero counter at the end of the run, as `ethtool -S` lists them\n");
	for (int h = 0; h < sc->nhosts; h++) {
		const struct roce_device *dev = roce_fabric_device(fab, h);

		fprintf(f, "%s:\n", sc->host[h].name);
		for (int i = 0; i < roce_device_ncounters(); i++) {
			uint64_t v = roce_device_counter(dev, i);

			if (v != 0)
				fprintf(f, "     %s: %" PRIu64 "\n", roce_device_counter_name(i), v);
		}
	}
	for (int s = 0; s < sc->nswitches; s++) {
		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_pstats ps;
			char peer[80];

			roce_switch_pstats(roce_fabric_switch(fab, s), (uint16_t)p, &ps);
			fprintf(f, "%s p%d (to %s):\n", sc->sw[s].name, p, peer_name(fab, s, p, peer, sizeof(peer)));
#define PUT(name, v) do { if ((v) != 0) fprintf(f, "     %s: %" PRIu64 "\n", name, (uint64_t)(v)); } while (0)
			PUT("rx_frames", ps.rx_frames);
			PUT("tx_frames", ps.tx_frames);
			PUT("rx_pfc_frames", ps.pfc_rx);
			PUT("tx_pfc_frames", ps.pfc_tx);
			PUT("rx_drop_no_route", ps.drop_no_route);
			PUT("rx_drop_malformed", ps.drop_malformed);
			PUT("rx_drop_ttl", ps.drop_ttl);
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				fab_print_qstats(f, prio, &q, false);
			}
#undef PUT
		}
	}
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
