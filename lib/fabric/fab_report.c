/* What a run leaves: tables per flow, per port and priority and for the fabric; time series as CSV; charts. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fab_private.h"
#include "roce_report.h"

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
 * done, running (still making progress at the end), stalled (no completion lately: in the last
 * tenth of the run, or twice the slowest message's time, whichever is longer), ...
 */
static const char *flow_status(const struct roce_fabric *fab, const struct roce_flow_result *r)
{
	roce_time_t now = roce_fabric_now(fab);
	roce_time_t quiet = (roce_time_t)(2 * r->lat_max_us * ROCE_US);

	if (quiet < now / 10)
		quiet = now / 10;

	if (r->errors != 0)
		return "error";
	if (r->done)
		return "done";
	if (r->posted == 0)
		return "not started";
	if (r->messages == 0 || r->last_done + quiet < now)
		return "stalled";
	return "running";
}

struct roce_table *roce_fabric_flow_table(const struct roce_fabric *fab)
{
	static const char *const hdr[] = {
		"<flow", "<path", "<op", "messages", "FCT (us)", "goodput (Gb/s)", "p50 (us)",
		"p99 (us)", "retransmits", "timeouts", "<status",
	};
	static const char *const ops[] = { "write", "read", "send" };
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_table *t = roce_table_create("Flows", (int)ROCE_DIM(hdr), hdr);

	if (t == NULL)
		return NULL;
	for (int i = 0; i < sc->nflows; i++) {
		const struct roce_sc_flow *f = &sc->flow[i];
		struct roce_flow_result r;
		char size[32];

		roce_fabric_flow_result(fab, i, &r);
		roce_table_add(t, "%s", f->name);
		roce_table_add(t, "%s -> %s", sc->host[f->src].name, sc->host[f->dst].name);
		roce_table_add(t, "%s %s", ops[f->op], fab_bytes(f->size, size, sizeof(size)));
		if (f->count != 0)
			roce_table_add(t, "%" PRIu64 "/%" PRIu64, r.messages, f->count);
		else
			roce_table_add(t, "%" PRIu64, r.messages);
		roce_table_add(t, "%.1f", (double)(r.last_done - r.first_post) / ROCE_US);
		roce_table_add(t, "%.2f", r.goodput_gbps);
		roce_table_add(t, "%.1f", r.lat_p50_us);
		roce_table_add(t, "%.1f", r.lat_p99_us);
		roce_table_add(t, "%" PRIu64, r.retransmits);
		roce_table_add(t, "%" PRIu64, r.timeouts);
		roce_table_add(t, "%s", flow_status(fab, &r));
	}
	return t;
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

struct roce_table *roce_fabric_port_table(const struct roce_fabric *fab)
{
	static const char *const hdr[] = {
		"<port", "<to", "prio", "rx frames", "tx frames", "drops", "ECN marks",
		"pause tx", "pause rx", "paused (us)", "max queue (KB)",
	};
	const struct roce_scenario *sc = roce_fabric_scenario(fab);
	struct roce_table *t = roce_table_create("Switch ports, per priority (active ones)",
						 (int)ROCE_DIM(hdr), hdr);

	if (t == NULL)
		return NULL;
	for (int s = 0; s < sc->nswitches; s++) {
		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;
				uint64_t drops;
				char peer[80];

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				drops = q.drop_tail + q.drop_headroom + q.drop_watchdog;
				if (q.rx_frames + q.tx_frames + drops + q.pause_tx + q.pause_rx == 0)
					continue;
				roce_table_add(t, "%s p%d", sc->sw[s].name, p);
				roce_table_add(t, "%s", peer_name(fab, s, p, peer, sizeof(peer)));
				roce_table_add(t, "%d", prio);
				roce_table_add(t, "%" PRIu64, q.rx_frames);
				roce_table_add(t, "%" PRIu64, q.tx_frames);
				roce_table_add(t, "%" PRIu64, drops);
				roce_table_add(t, "%" PRIu64, q.ecn_marked);
				roce_table_add(t, "%" PRIu64, q.pause_tx);
				roce_table_add(t, "%" PRIu64, q.pause_rx);
				roce_table_add(t, "%.1f", (double)q.paused_time / ROCE_US);
				roce_table_add(t, "%.1f", (double)q.max_qbytes / 1000);
			}
		}
	}
	if (roce_table_rows(t) == 0)
		roce_table_note(t, "no switch carried traffic");
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
	char dl[300];

	if (t == NULL)
		return NULL;
	roce_fabric_work(fab, &events, &hops);
	for (int s = 0; s < sc->nswitches; s++)
		for (int p = 0; p < sc->sw[s].conf.nports; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				drops += q.drop_tail + q.drop_headroom + q.drop_watchdog;
				pauses += q.pause_tx;
				marks += q.ecn_marked;
			}
	for (int l = 0; l < sc->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats st;

			roce_link_stats(roce_fabric_link(fab, l), d, &st);
			link_drops += st.dropped + st.down_drops;
		}
	roce_table_add(t, "virtual time");
	roce_table_add(t, "%.1f us", (double)roce_fabric_now(fab) / ROCE_US);
	roce_table_add(t, "frames delivered by links (hops)");
	roce_table_add(t, "%" PRIu64, hops);
	roce_table_add(t, "switch drops");
	roce_table_add(t, "%" PRIu64, drops);
	roce_table_add(t, "link losses (impairments, down)");
	roce_table_add(t, "%" PRIu64, link_drops);
	roce_table_add(t, "PFC pause frames (XOFF) sent by switches");
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
	roce_table_add(t, "PFC frames received by NICs (XOFF and XON)");
	roce_table_add(t, "%" PRIu64, nic_pauses_rx(fab));
	if (host_interfaces(sc)) {
		/* a NIC behind a slow host interface pauses its switch port: no switch counts it */
		roce_table_add(t, "PFC frames sent by NICs (XOFF and XON; host interface)");
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
	if (roce_fabric_deadlock(fab, dl, sizeof(dl)))
		roce_table_add(t, "%s", dl);
	else
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
		{ ROCE_SERIES_PAUSED, "paused" },
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

/* The @p max series of @p kind with the largest peaks, as one chart. */
struct roce_chart *fab_series_chart(const struct roce_fabric *fab, enum roce_series_kind kind,
				    int ck, const char *title, const char *ylabel, int max)
{
	struct roce_chart *c = roce_chart_create((enum roce_chart_kind)ck, title, "time (us)", ylabel);
	int n = roce_fabric_nseries(fab, kind);
	double *peak = calloc((size_t)n + 1, sizeof(double));
	bool *used = calloc((size_t)n + 1, sizeof(bool));

	if (c == NULL || peak == NULL || used == NULL)
		goto out;
	for (int i = 0; i < n; i++) {
		struct roce_series s;

		roce_fabric_series(fab, kind, i, &s);
		for (size_t j = 0; j < s.n; j++)
			peak[i] = ROCE_MAX(peak[i], s.v[j]);
	}
	for (int k = 0; k < ROCE_MIN(n, max); k++) {
		int best = -1;

		for (int i = 0; i < n; i++)
			if (!used[i] && (best < 0 || peak[i] > peak[best]))
				best = i;
		used[best] = true;
	}
	for (int i = 0; i < n; i++) {	/* in their own order, so colours follow names */
		struct roce_series s;

		if (!used[i])
			continue;
		roce_fabric_series(fab, kind, i, &s);
		roce_chart_series(c, s.name, s.t_us, s.v, s.n);
	}
out:
	free(peak);
	free(used);
	return c;
}

void roce_fabric_add_charts(const struct roce_fabric *fab, struct roce_report *r)
{
	const struct roce_scenario *sc = roce_fabric_scenario(fab);

	roce_report_row(r);
	roce_report_chart(r, fab_series_chart(fab, ROCE_SERIES_FLOW_GBPS, ROCE_CHART_LINE,
					  "Goodput per flow", "Gb/s", 12));
	roce_report_chart(r, fab_series_chart(fab, ROCE_SERIES_QUEUE_KB, ROCE_CHART_STEP,
					  "Deepest switch egress queues", "queue (KB)", 8));
	if (roce_fabric_nseries(fab, ROCE_SERIES_PAUSED) > 0)
		roce_report_chart(r, fab_series_chart(fab, ROCE_SERIES_PAUSED, ROCE_CHART_STEP,
						  "Ports paused by PFC (1 = paused)", "paused", 8));
	if (strcmp(sc->cc, "none") != 0)
		roce_report_chart(r, fab_series_chart(fab, ROCE_SERIES_RATE_GBPS, ROCE_CHART_LINE,
						  "Reaction-point rate per flow (first QP)", "Gb/s", 12));
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
