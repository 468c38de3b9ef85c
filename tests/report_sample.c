/* Writes a sample report and standalone SVGs for tests/diff_report_xml.py: every chart kind, long series, NaN gaps, empty data, hostile text. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_report.h"

#define HOSTILE "<b>&amp; \"quoted\" 'single' </b> ]]> \x01 \xff"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* xorshift64: a fixed sequence, so the report is the same bytes every run */
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static int write_svg(const struct roce_chart *c, const char *dir, const char *name)
{
	char path[4096];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	ret = roce_chart_write_svg(c, f);
	return fclose(f) != 0 ? -1 : ret;
}

int main(int argc, char **argv)
{
	static const char *const cat_cpu[] = { "RDMA WRITE", "RDMA READ", "kernel TCP" };
	static const char *const cat_loss[] = { "0%", "0.01%", "0.1%", "1%" };
	static const char *const hdr[] = { "<case", "goodput (Gb/s)", "p99 (µs)", "<note" };
	enum { N = 200000 };
	double *t = malloc(N * sizeof(double)), *a = malloc(N * sizeof(double));
	double *b = malloc(N * sizeof(double)), *q = malloc(N * sizeof(double));
	double *pause = malloc(N * sizeof(double));
	struct roce_report *r;
	struct roce_chart *c;
	struct roce_table *tab;
	char path[4096];
	int ret;

	if (argc != 2 || t == NULL || a == NULL || b == NULL || q == NULL || pause == NULL) {
		fprintf(stderr, "usage: report_sample OUTDIR\n");
		return 2;
	}
	for (int i = 0; i < N; i++) {
		t[i] = i * 0.05;					/* µs */
		a[i] = 40e9 + 8e9 * sin(i / 9000.0) + 1e9 * uniform();
		b[i] = 45e9 - 8e9 * sin(i / 9000.0) + 1e9 * uniform();
		if (i % 50000 == 25000)
			a[i] = 95e9;					/* one-sample spike */
		if (i > 120000 && i < 126000)
			b[i] = NAN;					/* flow idle: gap */
		q[i] = fmax(0, 60e3 * sin(i / 4000.0) + 20e3 * uniform());
		pause[i] = q[i] > 50e3;
	}

	r = roce_report_create("rocelab sample report " HOSTILE);
	roce_report_text(r, "Two flows share a 100 Gb/s link.\n\nSecond paragraph " HOSTILE);

	roce_report_heading(r, "Summary");
	tab = roce_table_create("Goodput per case " HOSTILE, 4, hdr);
	roce_table_add(tab, "lossless (PFC)");
	roce_table_add(tab, "%.1f", 92.3);
	roce_table_add(tab, "%.1f", 4.2);
	roce_table_add(tab, "a, b");
	roce_table_add(tab, "lossy " HOSTILE);
	roce_table_add(tab, "%.1f", 61.0);
	roce_table_add(tab, "%.1f", 812.5);
	roce_table_add(tab, "retransmits");
	roce_table_note(tab, "Goodput: payload delivered in order. " HOSTILE);
	roce_report_table(r, tab);
	roce_table_destroy(tab);

	roce_report_heading(r, "Time series");
	c = roce_chart_create(ROCE_CHART_LINE, "Per-flow throughput " HOSTILE, "time (µs)",
			      "throughput (b/s)");
	roce_chart_series(c, "flow 1", t, a, N);
	roce_chart_series(c, "flow 2 " HOSTILE, t, b, N);
	roce_chart_highlight(c, 1);
	roce_chart_caption(c, "Both flows; flow 2 stands out. " HOSTILE);
	if (write_svg(c, argv[1], "line.svg") != 0)
		return 1;
	roce_report_chart(r, c);

	roce_report_row(r);
	c = roce_chart_create(ROCE_CHART_STEP, "Egress queue depth", "time (µs)", "queue (bytes)");
	roce_chart_series(c, "port 3 prio 3", t, q, N);
	roce_report_chart(r, c);
	c = roce_chart_create(ROCE_CHART_STEP, "PFC pause state", "time (µs)", "paused");
	roce_chart_series(c, "prio 3", t, pause, N);
	roce_chart_yrange(c, 0, 1);
	roce_report_chart(r, c);

	roce_report_heading(r, "Comparisons");
	roce_report_row(r);
	c = roce_chart_create(ROCE_CHART_BAR, "CPU copies per message", NULL, "copies");
	roce_chart_categories(c, cat_cpu, 3);
	roce_chart_series(c, "sender", NULL, (const double[]){ 0, 0, 1 }, 3);
	roce_chart_series(c, "receiver", NULL, (const double[]){ 0, 0, 1 }, 3);
	roce_report_chart(r, c);
	c = roce_chart_create(ROCE_CHART_BAR, "Goodput under loss " HOSTILE, "loss rate",
			      "goodput (b/s)");
	roce_chart_categories(c, cat_loss, 4);
	roce_chart_series(c, "lossless (PFC)", NULL, (const double[]){ 92e9, 92e9, 91.8e9, 91.5e9 }, 4);
	roce_chart_series(c, "lossy (go-back-N)", NULL, (const double[]){ 92e9, 88e9, 61e9, 9.5e9 }, 4);
	roce_chart_series(c, "lossy + DCQCN", NULL, (const double[]){ 90e9, 86e9, NAN, 12e9 }, 4);
	roce_chart_missing_label(c, "n/a " HOSTILE);
	roce_chart_caption(c, "A missing bar says so. " HOSTILE);
	if (write_svg(c, argv[1], "bar.svg") != 0)
		return 1;
	roce_report_chart(r, c);

	roce_report_heading(r, "Edge cases");
	roce_report_row(r);
	c = roce_chart_create(ROCE_CHART_LINE, "No data at all", "time (s)", "rate");
	roce_chart_series(c, "empty", NULL, NULL, 0);
	if (write_svg(c, argv[1], "empty.svg") != 0)
		return 1;
	roce_report_chart(r, c);
	c = roce_chart_create(ROCE_CHART_BAR, "No categories", NULL, NULL);
	roce_report_chart(r, c);

	snprintf(path, sizeof(path), "%s/report.html", argv[1]);
	ret = roce_report_write(r, path);
	roce_report_destroy(r);
	free(t);
	free(a);
	free(b);
	free(q);
	free(pause);
	if (ret != 0) {
		fprintf(stderr, "report_sample: %s: %s\n", path, strerror(-ret));
		return 1;
	}
	return 0;
}
