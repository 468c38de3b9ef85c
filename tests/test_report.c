/* Check suite 'report': ticks, SI labels, escaping, reduction, tables, charts, pages, progress. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "roce_common.h"
#include "roce_report.h"

/* Everything a stream received, NUL-terminated; for comparing output in memory. */
struct capture {
	FILE *f;	/* open_memstream() */
	char *buf;	/* its buffer after close */
	size_t len;	/* bytes written */
};

static void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	ck_assert_ptr_nonnull(c->f);
}

static const char *cap_close(struct capture *c)
{
	ck_assert_int_eq(fclose(c->f), 0);
	return c->buf;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + strlen(needle), needle))
		n++;
	return n;
}

/* The labels of @p t joined with commas. */
static const char *labels(const struct roce_ticks *t)
{
	static char out[512];
	size_t len = 0, size = sizeof(out);
	char buf[64];

	out[0] = '\0';
	for (int i = 0; i < t->n; i++)
		ROCE_PUT("%s%s", i ? "," : "", roce_ticks_label(t, t->v[i], buf, sizeof(buf)));
	return out;
}

/* ---- ticks ---- */

START_TEST(ticks_widened)
{
	static const struct {
		double lo, hi;
		int max;
		const char *labels;
	} cases[] = {
		{ 0, 97, 6, "0,20,40,60,80,100" },
		{ 0, 0.0031, 6, "0,1m,2m,3m,4m" },
		{ 0, 0.0031, 8, "0,0.5m,1.0m,1.5m,2.0m,2.5m,3.0m,3.5m" },
		{ -3.2, 7.9, 6, "-4,-2,0,2,4,6,8" },
		{ 0, 1.23e9, 6, "0,0.5G,1.0G,1.5G" },
		{ 0, 1150, 6, "0,200,400,600,800,1000,1200" },	/* no "0.2k" */
		{ 0, 45000, 6, "0,10k,20k,30k,40k,50k" },
		{ 0, 2.5e-6, 6, "0,0.5\xc2\xb5,1.0\xc2\xb5,1.5\xc2\xb5,2.0\xc2\xb5,2.5\xc2\xb5" },
		{ 0, 1, 6, "0,0.2,0.4,0.6,0.8,1.0" },
		{ 0, 0, 6, "0,0.2,0.4,0.6,0.8,1.0" },		/* all zero: 0..1 */
		{ 100e9, 100e9, 6, "40G,60G,80G,100G,120G,140G,160G" }, /* constant: ±50% */
	};

	for (size_t i = 0; i < ROCE_DIM(cases); i++) {
		struct roce_ticks t;

		ck_assert_int_eq(roce_ticks(cases[i].lo, cases[i].hi, cases[i].max, true, &t), 0);
		ck_assert_msg(strcmp(labels(&t), cases[i].labels) == 0, "%g..%g: got %s, want %s",
			      cases[i].lo, cases[i].hi, labels(&t), cases[i].labels);
		ck_assert_int_le(t.n - 1, cases[i].max);
		/* covers the range (to rounding: 5 * 0.5e-6 is a hair under 2.5e-6) */
		ck_assert(t.lo <= cases[i].lo + 1e-12 * fabs(cases[i].lo));
		ck_assert(t.hi >= cases[i].hi - 1e-12 * fabs(cases[i].hi));
		ck_assert_double_eq(t.lo, t.v[0]);
		ck_assert_double_eq(t.hi, t.v[t.n - 1]);
	}
}
END_TEST

START_TEST(ticks_inside)
{
	struct roce_ticks t;

	ck_assert_int_eq(roce_ticks(0.3, 9.7, 6, false, &t), 0);
	ck_assert_str_eq(labels(&t), "2,4,6,8");
	ck_assert_double_eq(t.lo, 0.3);
	ck_assert_double_eq(t.hi, 9.7);
	ck_assert_int_eq(roce_ticks(0, 9999.95, 7, false, &t), 0);
	ck_assert_str_eq(labels(&t), "0,2000,4000,6000,8000");
	ck_assert_double_eq(t.step, 2000);
	ck_assert_int_eq(roce_ticks(NAN, 1, 6, true, &t), -EINVAL);
	ck_assert_int_eq(roce_ticks(0, INFINITY, 6, true, &t), -EINVAL);
	ck_assert_int_eq(roce_ticks(2, 1, 6, true, &t), -EINVAL);
	/* a narrow range far from zero still gives ticks inside it */
	ck_assert_int_eq(roce_ticks(1e15, 1e15 + 1, 6, false, &t), 0);
	ck_assert_int_ge(t.n, 2);
}
END_TEST

/* ---- SI ---- */

START_TEST(si_format)
{
	static const struct {
		double v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 1, "1" }, { 12.5, "12.5" }, { 999, "999" }, { 1234, "1.23k" },
		{ 999.96, "1k" }, { -12345, "-12.3k" }, { 100e9, "100G" }, { 4e10, "40G" },
		{ 2.5e12, "2.5T" }, { 0.0031, "3.1m" }, { 0.5, "500m" }, { 2.5e-6, "2.5\xc2\xb5" },
		{ 7e-9, "7n" }, { 1e15, "1e+15" }, { NAN, "nan" }, { -INFINITY, "-inf" },
	};
	char buf[32];

	for (size_t i = 0; i < ROCE_DIM(cases); i++)
		ck_assert_msg(strcmp(roce_si(cases[i].v, buf, sizeof(buf)), cases[i].s) == 0,
			      "%g: got %s, want %s", cases[i].v, buf, cases[i].s);
}
END_TEST

/* ---- reduction ---- */

START_TEST(reduce_keeps_extremes)
{
	enum { N = 1000000, COLS = 500 };
	double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
	double *ox = malloc(9 * COLS * sizeof(double)), *oy = malloc(9 * COLS * sizeof(double));
	double lo[COLS], hi[COLS];
	bool seen_lo[COLS] = { false }, seen_hi[COLS] = { false };
	unsigned int seed = 7;
	size_t n;

	ck_assert(x && y && ox && oy);
	for (int c = 0; c < COLS; c++) {
		lo[c] = INFINITY;
		hi[c] = -INFINITY;
	}
	for (int i = 0; i < N; i++) {
		x[i] = (double)i / N;
		y[i] = (double)(rand_r(&seed) % 1000);
		if (i % 77777 == 5)
			y[i] = 1e6;		/* one-sample spikes */
		if (i % 99991 == 3)
			y[i] = -1e6;
	}
	for (int i = 0; i < N; i++) {
		int c = (int)(x[i] * COLS);

		lo[c] = fmin(lo[c], y[i]);
		hi[c] = fmax(hi[c], y[i]);
	}
	n = roce_chart_reduce(x, y, N, 0, 1, COLS, ox, oy);
	ck_assert_uint_le(n, 4 * COLS);
	ck_assert_uint_ge(n, 2 * COLS);
	for (size_t i = 0; i < n; i++) {
		int c = (int)(ox[i] * COLS);

		ck_assert(i == 0 || ox[i] >= ox[i - 1]);	/* original order */
		seen_lo[c] |= oy[i] == lo[c];
		seen_hi[c] |= oy[i] == hi[c];
	}
	for (int c = 0; c < COLS; c++)
		ck_assert_msg(seen_lo[c] && seen_hi[c], "column %d lost its min or max", c);
	free(x);
	free(y);
	free(ox);
	free(oy);
}
END_TEST

START_TEST(reduce_nan_breaks)
{
	enum { N = 200000, COLS = 100 };
	double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
	double *ox = malloc(9 * COLS * sizeof(double)), *oy = malloc(9 * COLS * sizeof(double));
	double sx[] = { 0, 1, 2, 3, 4, 5 }, sy[] = { 1, 2, NAN, NAN, 5, 6 };
	size_t n, gaps = 0;

	ck_assert(x && y && ox && oy);
	/* few points: kept as they are, the NaN run becomes one break */
	n = roce_chart_reduce(sx, sy, 6, 0, 5, 1000, ox, oy);
	ck_assert_uint_eq(n, 5);
	ck_assert(isnan(oy[2]));
	ck_assert_double_eq(oy[3], 5);
	/* alternating values and NaN: still bounded */
	for (int i = 0; i < N; i++) {
		x[i] = i;
		y[i] = i % 2 ? NAN : i % 1000;
	}
	n = roce_chart_reduce(x, y, N, 0, N, COLS, ox, oy);
	ck_assert_uint_le(n, 9 * COLS);
	for (size_t i = 0; i < n; i++)
		gaps += isnan(oy[i]);
	ck_assert_uint_ge(gaps, COLS - 1);
	free(x);
	free(y);
	free(ox);
	free(oy);
}
END_TEST

/* ---- charts ---- */

START_TEST(chart_million_points_bounded)
{
	enum { N = 1000000 };
	double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
	struct roce_chart *c = roce_chart_create(ROCE_CHART_LINE, "rate", "time (s)", "rate (b/s)");
	struct capture cap;
	const char *svg;

	ck_assert(x && y && c);
	for (int i = 0; i < N; i++) {
		x[i] = i * 1e-6;
		y[i] = 25e9 + 1e9 * sin(i / 1000.0);
	}
	y[N / 2] = 99e9;
	ck_assert_int_eq(roce_chart_series(c, "flow", x, y, N), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_uint_lt(cap.len, 100000);
	ck_assert_uint_le(count(svg, "L"), 4 * 720);
	ck_assert_ptr_nonnull(strstr(svg, "max 99G"));		/* the spike is in the tooltip */
	ck_assert_ptr_nonnull(strstr(svg, ">100G<"));		/* and the axis reaches it */
	ck_assert_ptr_nonnull(strstr(svg, "<title>flow: 1000000 points"));
	free(cap.buf);
	roce_chart_destroy(c);
	free(x);
	free(y);
}
END_TEST

START_TEST(chart_no_data)
{
	static const char *const cats[] = { "a", "b" };
	enum roce_chart_kind kinds[] = { ROCE_CHART_LINE, ROCE_CHART_STEP, ROCE_CHART_BAR };

	for (size_t k = 0; k < ROCE_DIM(kinds); k++) {
		for (int variant = 0; variant < 3; variant++) {
			struct roce_chart *c = roce_chart_create(kinds[k], "t", "x", "y");
			const double nan2[] = { NAN, NAN };
			struct capture cap;
			const char *svg;

			if (variant == 1)
				ck_assert_int_eq(roce_chart_series(c, "empty", NULL, NULL, 0), 0);
			if (variant == 2) {
				ck_assert_int_eq(roce_chart_categories(c, cats, 2), 0);
				ck_assert_int_eq(roce_chart_series(c, "nan", NULL, nan2, 2), 0);
			}
			cap_open(&cap);
			ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
			svg = cap_close(&cap);
			ck_assert_msg(strstr(svg, ">no data</text>") != NULL, "kind %zu variant %d", k,
				      variant);
			ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
			free(cap.buf);
			roce_chart_destroy(c);
		}
	}
	{
		struct roce_chart *c = roce_chart_create(ROCE_CHART_LINE, NULL, NULL, NULL);

		ck_assert_int_eq(roce_chart_series(c, "x", NULL, NULL, 3), -EINVAL);
		roce_chart_destroy(c);
	}
	ck_assert_ptr_null(roce_chart_create((enum roce_chart_kind)7, NULL, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(chart_escapes_text)
{
	static const char *const cats[] = { "<cat>&\"'" };
	struct roce_chart *c = roce_chart_create(ROCE_CHART_BAR, "a<b>&\"c'", "x<", "y&");
	struct capture cap;
	const char *svg;

	ck_assert_int_eq(roce_chart_categories(c, cats, 1), 0);
	ck_assert_int_eq(roce_chart_series(c, "s<1>", NULL, (const double[]){ 3 }, 1), 0);
	ck_assert_int_eq(roce_chart_series(c, "bad \xff\xfe utf8 \x01", NULL, (const double[]){ 4 }, 1), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(svg, "a&lt;b&gt;&amp;&quot;c&#39;"));
	ck_assert_ptr_nonnull(strstr(svg, "&lt;cat&gt;&amp;&quot;&#39;"));
	ck_assert_ptr_nonnull(strstr(svg, ">s&lt;1&gt;<"));
	ck_assert_ptr_nonnull(strstr(svg, "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd"));
	ck_assert_ptr_null(strstr(svg, "<b>"));
	ck_assert_ptr_null(strstr(svg, "<cat>"));
	ck_assert_ptr_null(strstr(svg, "\xff"));
	ck_assert_uint_eq(count(svg, "</title></rect>"), 2);	/* two bars, each with a tooltip */
	free(cap.buf);
	roce_chart_destroy(c);
}
END_TEST

/* Log axes: ticks at decades labelled 1, 10, 100, 1k; x <= 0 breaks the line; set late, no-op */
START_TEST(chart_xlog)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_STEP, "fct", "FCT (us)", "share");
	struct roce_chart *late = roce_chart_create(ROCE_CHART_LINE, "late", NULL, NULL);
	struct capture cap;
	const char *svg;

	roce_chart_xlog(c);
	ck_assert_int_eq(roce_chart_series(c, "s", (const double[]){ 3, 40, 0, 500, 2500 },
					   (const double[]){ 0, .25, .5, .75, 1 }, 5), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	/* 3 .. 2500: decades 1 .. 10k, data-x in log10 units */
	ck_assert_ptr_nonnull(strstr(svg, "data-x=\"0 4 "));
	ck_assert_ptr_nonnull(strstr(svg, "data-xlog=\"1\""));
	for (const char *const *l = (const char *const[]){ ">1<", ">10<", ">100<", ">1k<", ">10k<",
							  NULL }; *l != NULL; l++)
		ck_assert_msg(strstr(svg, *l) != NULL, "no tick %s", *l);
	ck_assert_ptr_null(strstr(svg, ">2000<"));	/* no linear ticks */
	ck_assert_uint_eq(count(strstr(svg, "<path fill=\"none\""), "M"), 2);	/* 0: a break */
	free(cap.buf);
	roce_chart_destroy(c);

	/* and y: 0.5 .. 700 on decades 0.1 .. 1k; the tooltip in the values given */
	c = roce_chart_create(ROCE_CHART_LINE, "lat", "size", "us");
	roce_chart_xlog(c);
	roce_chart_ylog(c);
	ck_assert_int_eq(roce_chart_series(c, "s", (const double[]){ 2, 64, 8192, 1 << 23 },
					   (const double[]){ 0.5, 0.52, 1.2, 700 }, 4), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(svg, "data-y=\"-1 3 "));
	ck_assert_ptr_nonnull(strstr(svg, "data-xlog=\"1\" data-ylog=\"1\""));
	for (const char *const *l = (const char *const[]){ ">0.1<", ">1<", ">100<", ">1k<", ">10M<",
							  NULL }; *l != NULL; l++)
		ck_assert_msg(strstr(svg, *l) != NULL, "no tick %s", *l);
	ck_assert_ptr_nonnull(strstr(svg, "min 500m"));
	ck_assert_ptr_nonnull(strstr(svg, "max 700"));
	free(cap.buf);
	roce_chart_destroy(c);

	ck_assert_int_eq(roce_chart_series(late, "s", (const double[]){ 1, 1000 },
					   (const double[]){ 1, 2 }, 2), 0);
	roce_chart_xlog(late);		/* after a series: ignored */
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(late, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_null(strstr(svg, "data-xlog"));
	free(cap.buf);
	roce_chart_destroy(late);
}
END_TEST

START_TEST(chart_palette_and_legend)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_LINE, "t", NULL, NULL);
	struct capture cap;
	const char *svg;
	char name[16];

	for (int i = 0; i < 9; i++) {	/* apart, so none is drawn under another */
		snprintf(name, sizeof(name), "flow %d", i);
		ck_assert_int_eq(roce_chart_series(c, name, NULL,
						   (const double[]){ 1 + i, 2 + i, 3 + i }, 3), 0);
	}
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	/* Okabe-Ito, in order; the 9th series repeats blue, dashed */
	ck_assert_ptr_nonnull(strstr(svg, "stroke=\"#0072B2\""));
	ck_assert_ptr_nonnull(strstr(svg, "stroke=\"#D55E00\""));
	ck_assert_ptr_nonnull(strstr(svg, "stroke=\"#009E73\""));
	ck_assert_uint_eq(count(svg, "stroke-dasharray"), 2);	/* legend + line */
	/*
	 * the yellow (1.3:1 on white) kept, for its lightness apart from the orange, and drawn
	 * over a dark edge with the same path, in the legend too; no other colour has one
	 */
	{
		const char *line = strstr(svg, "<path fill=\"none\" stroke=\"#F0E442\"");
		const char *edge = strstr(svg, "<path fill=\"none\" stroke=\"#8C8100\" class=\"edge\"");

		ck_assert_ptr_nonnull(line);
		ck_assert_ptr_nonnull(edge);
		ck_assert(edge < line);
		ck_assert_int_eq(strncmp(strstr(edge, " d=\""), strstr(line, " d=\""),
					 strcspn(strstr(line, " d=\"") + 4, "\"") + 5), 0);
		ck_assert_uint_eq(count(svg, "class=\"edge\""), 1);
		ck_assert_uint_eq(count(svg, "stroke=\"#8C8100\""), 2);	/* line + legend */
		ck_assert_ptr_nonnull(strstr(svg, "path.edge{stroke-width:4}"));
	}
	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), ">flow %d<", i);
		ck_assert_ptr_nonnull(strstr(svg, name));	/* in the legend */
	}
	free(cap.buf);
	roce_chart_destroy(c);
}
END_TEST

/*
 * A line drawn over another along its whole length hides it: the hidden one's legend entry
 * names the line on top (the last drawn of those it matches). A line that parts from the
 * others anywhere, by more than a line's width, keeps its plain name.
 */
START_TEST(chart_legend_names_hidden_lines)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_STEP, "t", "time (us)", "KB");
	const double x[] = { 0, 20, 40, 60 };
	struct capture cap;
	const char *svg;

	ck_assert_int_eq(roce_chart_series(c, "sw0 p0", x, (const double[]){ 0, 3400, 3400, 3400 },
					   4), 0);
	ck_assert_int_eq(roce_chart_series(c, "sw1 p1", x, (const double[]){ 0, 3400, 3400, 3401 },
					   4), 0);
	ck_assert_int_eq(roce_chart_series(c, "sw2 p1", x, (const double[]){ 0, 3400, 3400, 3400 },
					   4), 0);
	ck_assert_int_eq(roce_chart_series(c, "h0", x, (const double[]){ 0, 3000, 3400, 3400 }, 4),
			 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(svg, ">sw0 p0 (under sw2 p1)<"));
	ck_assert_ptr_nonnull(strstr(svg, ">sw1 p1 (under sw2 p1)<"));
	ck_assert_ptr_nonnull(strstr(svg, ">sw2 p1<"));
	ck_assert_ptr_nonnull(strstr(svg, ">h0<"));
	free(cap.buf);
	roce_chart_destroy(c);
}
END_TEST

/* The stroke colour of the first path of the series group named @p name in @p svg. */
static const char *series_colour(const char *svg, const char *name, char *out, size_t size)
{
	char needle[96];
	const char *p;

	snprintf(needle, sizeof(needle), "data-name=\"%s\" data-color=\"", name);
	p = strstr(svg, needle);
	ck_assert_msg(p != NULL, "no series %s", name);
	snprintf(out, size, "%.7s", p + strlen(needle));
	return out;
}

/*
 * A highlighted series (a victim flow among eight incast flows) keeps a colour of its own: the
 * ninth line repeats a plain series' colour, dashed, not the victim's; it is drawn over the others
 * and wider, legend swatch included.
 */
START_TEST(chart_highlight_own_colour)
{
	static const char *const names[] = {
		"victim", "incast.s1", "incast.s2", "incast.s3", "incast.s4", "incast.s5",
		"incast.s6", "incast.s7", "incast.s8",
	};
	struct roce_chart *c = roce_chart_create(ROCE_CHART_LINE, "t", "time (us)", "Gb/s");
	struct capture cap;
	const char *svg;
	char victim[8], other[8];

	for (size_t i = 0; i < ROCE_DIM(names); i++)
		ck_assert_int_eq(roce_chart_series(c, names[i], NULL,
						   (const double[]){ 1 + i, 2 + i, 3 + i }, 3), 0);
	ck_assert_int_eq(roce_chart_highlight(c, 0), 0);
	ck_assert_int_eq(roce_chart_highlight(c, ROCE_DIM(names)), -EINVAL);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	series_colour(svg, "victim", victim, sizeof(victim));
	for (size_t i = 1; i < ROCE_DIM(names); i++)
		ck_assert_msg(strcmp(series_colour(svg, names[i], other, sizeof(other)), victim) != 0,
			      "%s drawn in the victim's %s", names[i], victim);
	/* one line and one swatch in the victim's colour */
	{
		char stroke[32];

		snprintf(stroke, sizeof(stroke), "stroke=\"%s\"", victim);
		ck_assert_uint_eq(count(svg, stroke), 2);
	}
	/* the ninth plain-coloured line is dashed: its colour is the first plain one's */
	ck_assert_str_eq(series_colour(svg, "incast.s8", other, sizeof(other)),
			 series_colour(svg, "incast.s1", victim, sizeof(victim)));
	ck_assert_uint_eq(count(svg, "stroke-dasharray=\"6 3\""), 2);	/* legend + line */
	/* drawn last, wider */
	ck_assert_uint_eq(count(svg, "class=\"series hi\""), 1);
	ck_assert(strstr(svg, "class=\"series hi\"") > strstr(svg, "data-name=\"incast.s8\""));
	ck_assert_ptr_nonnull(strstr(svg, ".series.hi path{stroke-width:3.5}"));
	free(cap.buf);
	roce_chart_destroy(c);
}
END_TEST

/*
 * A caption goes under the chart in a page (escaped, code spans as in text) and into a standalone
 * SVG's <desc>. A bar that does not apply (NaN) draws no rect and, with a missing label, says so
 * where it would stand.
 */
START_TEST(chart_caption_and_missing_bar)
{
	static const char *const cats[] = { "0 (PFC)", "1e-5" };
	struct roce_chart *c = roce_chart_create(ROCE_CHART_BAR, "Goodput", NULL, "Gb/s");
	struct roce_report *r = roce_report_create("r");
	struct capture cap;
	const char *out;

	ck_assert_int_eq(roce_chart_categories(c, cats, 2), 0);
	ck_assert_int_eq(roce_chart_series(c, "median run", NULL, (const double[]){ 91.3, 91.3 },
					   2), 0);
	ck_assert_int_eq(roce_chart_series(c, "worst run", NULL, (const double[]){ NAN, 90.1 }, 2),
			 0);
	ck_assert_int_eq(roce_chart_missing_label(c, "n/a"), 0);
	ck_assert_int_eq(roce_chart_caption(c, "12 of <112> flows: `h0`"), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	out = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(out, "<desc>12 of &lt;112&gt; flows: `h0`</desc>"));
	ck_assert_uint_eq(count(out, "</title></rect>"), 3);	/* three bars, not four */
	ck_assert_uint_eq(count(out, "class=\"missing\">n/a<"), 1);
	ck_assert_ptr_null(strstr(out, "worst run \xe2\x80\x94 0 (PFC)"));
	free(cap.buf);
	roce_report_chart(r, c);
	cap_open(&cap);
	ck_assert_int_eq(roce_report_write_stream(r, cap.f), 0);
	out = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(out, "</svg>\n<figcaption>12 of &lt;112&gt; flows: "
					 "<code>h0</code></figcaption>\n</figure>"));
	ck_assert_ptr_null(strstr(out, "<desc>"));
	free(cap.buf);
	roce_report_destroy(r);
}
END_TEST

/*
 * Marks: a dashed line where x falls (on the plot's pixel scale), its label escaped; one outside
 * the axis is left out, a label at the right edge ends at its line; bars ignore them. The legend
 * note follows the entries. Bars' values: printed below the legend, however high the bars.
 */
START_TEST(chart_marks)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_LINE, "t", "time (us)", NULL);
	struct roce_chart *bar = roce_chart_create(ROCE_CHART_BAR, "b", NULL, NULL), *copies;
	struct capture cap;
	const char *svg, *p;
	double x0, x1, l, r, xm;

	ck_assert_int_eq(roce_chart_series(c, "s", (const double[]){ 0, 1000 },
					   (const double[]){ 1, 2 }, 2), 0);
	ck_assert_int_eq(roce_chart_mark(c, 250, "sw0-sw1 to 40G <"), 0);
	ck_assert_int_eq(roce_chart_mark(c, 5000, "after the end"), 0);
	ck_assert_int_eq(roce_chart_mark(c, 1000, "at the end"), 0);
	ck_assert_int_eq(roce_chart_legend_note(c, "+ 3 more, not drawn"), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_uint_eq(count(svg, "class=\"mark\""), 2);
	ck_assert_ptr_nonnull(strstr(svg, ">sw0-sw1 to 40G &lt;<"));
	ck_assert_ptr_null(strstr(svg, "after the end"));
	ck_assert_ptr_nonnull(strstr(svg, "text-anchor=\"end\" class=\"marklabel\">at the end<"));
	ck_assert_ptr_nonnull(strstr(svg, ">+ 3 more, not drawn<"));
	/* the first mark's line a quarter of the way along the plot */
	p = strstr(svg, "data-x=\"");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "data-x=\"%lf %lf %lf %lf", &x0, &x1, &l, &r), 4);
	p = strstr(svg, "<g class=\"mark\">");
	ck_assert_ptr_nonnull(p);
	p = strstr(p, "<line x1=\"");
	ck_assert_int_eq(sscanf(p, "<line x1=\"%lf", &xm), 1);
	ck_assert_msg(fabs(xm - (l + (r - l) * (250 - x0) / (x1 - x0))) < 0.11, "mark at %g", xm);
	free(cap.buf);
	roce_chart_destroy(c);

	/* a bar as high as a tick leaves its value room under the legend: the axis goes on */
	copies = roce_chart_create(ROCE_CHART_BAR, "Copies of each byte", NULL, "copies");
	ck_assert_int_eq(roce_chart_series(copies, "by the host CPU", NULL, (const double[]){ 2, 0 },
					   2), 0);
	ck_assert_int_eq(roce_chart_series(copies, "by a NIC's DMA", NULL,
					   (const double[]){ 2, 2 }, 2), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(copies, cap.f), 0);
	svg = cap_close(&cap);
	{
		double top = INFINITY, legend = 0, v;

		for (p = strstr(svg, "class=\"tick\">"); p != NULL;
		     p = strstr(p + 1, "class=\"tick\">"))
			if (sscanf(p, "class=\"tick\">%lf<", &v) == 1 && v > 2)
				break;
		ck_assert_msg(p != NULL, "no tick above the bars' 2");
		p = strstr(svg, "<g class=\"legend\">");
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(sscanf(strstr(p, "<text x=\""), "<text x=\"%*[^\"]\" y=\"%lf",
					&legend), 1);
		for (p = strstr(svg, "class=\"value\""); p != NULL;
		     p = strstr(p + 1, "class=\"value\"")) {
			const char *q = p;

			while (strncmp(q, "<text", 5) != 0)
				q--;
			ck_assert_int_eq(sscanf(q, "<text x=\"%*[^\"]\" y=\"%lf", &v), 1);
			top = ROCE_MIN(top, v);
		}
		ck_assert_msg(top - 12 > legend + 6, "a value at y %g under the legend at %g", top,
			      legend);
	}
	free(cap.buf);
	roce_chart_destroy(copies);

	/* and a bar's value label: plain below 1000 (0.52 us, not "520m"), prefixed above */
	ck_assert_int_eq(roce_chart_series(bar, "s", NULL, (const double[]){ 0.52, 2500 }, 2), 0);
	ck_assert_int_eq(roce_chart_mark(bar, 1, "x"), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(bar, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_null(strstr(svg, "class=\"mark\""));
	ck_assert_ptr_nonnull(strstr(svg, "class=\"value\">0.52<"));
	ck_assert_ptr_nonnull(strstr(svg, "class=\"value\">2.5k<"));
	free(cap.buf);
	roce_chart_destroy(bar);
}
END_TEST

/*
 * Bars too narrow to carry their values (six loss rates by three delays) need no room over
 * them: goodput of at most 98 Gb/s on a 100G link has an axis to 100, not to 120.
 */
START_TEST(chart_narrow_bars_no_headroom)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_BAR, "Goodput under loss", NULL,
						 "goodput (Gb/s)");
	const char *const cats[] = { "0", "1e-5", "1e-4", "1e-3", "3e-3", "1e-2" };
	struct capture cap;
	const char *svg, *p;
	double v, top = 0;

	ck_assert_int_eq(roce_chart_categories(c, cats, ROCE_DIM(cats)), 0);
	ck_assert_int_eq(roce_chart_series(c, "0.5 us", NULL, (const double[]){ 98, 98, 98, 65, 19, 3 },
					   6), 0);
	ck_assert_int_eq(roce_chart_series(c, "5 us", NULL, (const double[]){ 98, 98, 98, 63, 24, 2 },
					   6), 0);
	ck_assert_int_eq(roce_chart_series(c, "25 us", NULL, (const double[]){ 98, 98, 97, 62, 24, 2 },
					   6), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_null(strstr(svg, "class=\"value\""));	/* too narrow for values */
	for (p = strstr(svg, "class=\"tick\">"); p != NULL; p = strstr(p + 1, "class=\"tick\">"))
		if (sscanf(p, "class=\"tick\">%lf<", &v) == 1)
			top = ROCE_MAX(top, v);
	ck_assert_msg(top == 100, "the axis goes to %g", top);
	free(cap.buf);
	roce_chart_destroy(c);
}
END_TEST

/*
 * A linear x axis starts at a tick: flow completion times from 1857.9 to 2908.6 us start the
 * axis at 1800, labelled, so the curve's first rise is off the y axis. It still ends at the
 * data's last x (a run's end), and an axis from 0 stays as it was.
 */
START_TEST(chart_x_axis_starts_at_tick)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_STEP, "FCT", "FCT (us)", "share");
	struct capture cap;
	const char *svg;
	double x0, x1, l, r, first;

	ck_assert_int_eq(roce_chart_series(c, "flows", (const double[]){ 1857.9, 1861.1, 2908.6 },
					   (const double[]){ 0.125, 0.5, 1 }, 3), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_int_eq(sscanf(strstr(svg, "data-x=\""), "data-x=\"%lf %lf %lf %lf", &x0, &x1, &l,
				&r), 4);
	ck_assert_msg(x0 == 1800 && x1 == 2908.6, "x axis %g to %g", x0, x1);
	ck_assert_ptr_nonnull(strstr(svg, "class=\"tick\">1800<"));
	ck_assert_int_eq(sscanf(strstr(strstr(svg, "<path fill=\"none\""), " d=\"M"), " d=\"M%lf",
				&first), 1);
	ck_assert_msg(first > l + 10, "the curve starts at %g, on the y axis at %g", first, l);
	free(cap.buf);
	roce_chart_destroy(c);

	c = roce_chart_create(ROCE_CHART_LINE, "t", "time (us)", NULL);
	ck_assert_int_eq(roce_chart_series(c, "s", (const double[]){ 0, 2479.9 },
					   (const double[]){ 1, 2 }, 2), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(svg, "data-x=\"0 2479.9 "));
	free(cap.buf);
	roce_chart_destroy(c);
}
END_TEST

/* The baseline y of the mark label @p label in @p svg. */
static double mark_label_y(const char *svg, const char *label)
{
	char needle[128];
	const char *p;
	double y;

	snprintf(needle, sizeof(needle), "class=\"marklabel\">%s<", label);
	p = strstr(svg, needle);
	ck_assert_msg(p != NULL, "no mark label %s", label);
	while (p > svg && strncmp(p, "<text", 5) != 0)
		p--;
	ck_assert_int_eq(sscanf(p, "<text x=\"%*[^\"]\" y=\"%lf", &y), 1);
	return y;
}

/*
 * A mark's label stays off the data: at the top right of its line where the data runs low
 * there, left of it where the data fills the top right after the mark (a queue filling after a
 * link slowed), at the bottom where the data fills the top rows on both sides.
 */
START_TEST(chart_mark_labels_clear_data)
{
	struct roce_chart *c = roce_chart_create(ROCE_CHART_STEP, "t", "time (us)", "KB");
	struct roce_chart *full = roce_chart_create(ROCE_CHART_LINE, "t", "time (us)", "KB");
	struct capture cap;
	const char *svg, *p;
	double x0, x1, l, r, y0, y1, b, t, y, qx[101], qy[101];

	ck_assert_int_eq(roce_chart_series(c, "q", (const double[]){ 0, 500, 510, 1000 },
					   (const double[]){ 0, 0, 400, 400 }, 4), 0);
	ck_assert_int_eq(roce_chart_mark(c, 100, "early"), 0);
	ck_assert_int_eq(roce_chart_mark(c, 500, "link to 40G"), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(c, cap.f), 0);
	svg = cap_close(&cap);
	p = strstr(svg, "data-x=\"");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "data-x=\"%lf %lf %lf %lf\" data-y=\"%lf %lf %lf %lf", &x0, &x1,
				&l, &r, &y0, &y1, &b, &t), 8);
	y = mark_label_y(svg, "early");
	ck_assert_msg(y < t + 20, "'early' at y %g, plot %g..%g: not at the top", y, t, b);
	ck_assert_ptr_null(strstr(svg, "text-anchor=\"end\" class=\"marklabel\">early<"));
	y = mark_label_y(svg, "link to 40G");
	ck_assert_msg(y < t + 20, "'link to 40G' at y %g, plot %g..%g: not at the top", y, t, b);
	ck_assert_ptr_nonnull(strstr(svg, "text-anchor=\"end\" class=\"marklabel\">link to 40G<"));
	free(cap.buf);
	roce_chart_destroy(c);

	for (int i = 0; i <= 100; i++) {	/* between 300 and 400, the whole run */
		qx[i] = 10 * i;
		qy[i] = i % 2 ? 300 : 400;
	}
	ck_assert_int_eq(roce_chart_series(full, "q", qx, qy, 101), 0);
	ck_assert_int_eq(roce_chart_mark(full, 500, "link to 40G"), 0);
	cap_open(&cap);
	ck_assert_int_eq(roce_chart_write_svg(full, cap.f), 0);
	svg = cap_close(&cap);
	y = mark_label_y(svg, "link to 40G");
	ck_assert_msg(y > b - 20, "'link to 40G' at y %g, plot %g..%g: not at the bottom", y, t, b);
	free(cap.buf);
	roce_chart_destroy(full);
}
END_TEST

/* ---- tables ---- */

static struct roce_table *sample_table(void)
{
	static const char *const hdr[] = { "<case", "Gb/s", "<note" };
	struct roce_table *t = roce_table_create("Goodput", 3, hdr);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(roce_table_add(t, "lossless"), 0);
	ck_assert_int_eq(roce_table_add(t, "%.1f", 92.25), 0);
	ck_assert_int_eq(roce_table_add(t, "µs \"quoted\""), 0);
	ck_assert_int_eq(roce_table_add(t, "lossy, 1%%"), 0);
	ck_assert_int_eq(roce_table_add(t, "%d", 7), 0);
	ck_assert_int_eq(roce_table_add(t, " pad"), 0);
	ck_assert_int_eq(roce_table_add(t, "<x>&"), 0);	/* short last row */
	roce_table_note(t, "PFC on priority 3.");
	return t;
}

START_TEST(table_print_aligned)
{
	struct roce_table *t = sample_table();
	struct capture cap;

	ck_assert_uint_eq(roce_table_rows(t), 3);
	cap_open(&cap);
	roce_table_print(t, cap.f);
	ck_assert_str_eq(cap_close(&cap),
			 "Goodput\n"
			 "case       Gb/s  note\n"
			 "---------  ----  -----------\n"
			 "lossless   92.2  µs \"quoted\"\n"
			 "lossy, 1%     7   pad\n"
			 "<x>&\n"
			 "PFC on priority 3.\n");
	free(cap.buf);
	roce_table_destroy(t);
	ck_assert_ptr_null(roce_table_create("x", 0, NULL));
	ck_assert_int_eq(errno, EINVAL);
	roce_table_destroy(NULL);
}
END_TEST

START_TEST(table_csv_quoting)
{
	struct roce_table *t = sample_table();
	struct capture cap;

	cap_open(&cap);
	ck_assert_int_eq(roce_table_write_csv(t, cap.f), 0);
	ck_assert_str_eq(cap_close(&cap),
			 "case,Gb/s,note\n"
			 "lossless,92.2,\"µs \"\"quoted\"\"\"\n"
			 "\"lossy, 1%\",7,\" pad\"\n"
			 "<x>&,,\n");
	free(cap.buf);
	roce_table_destroy(t);

	/* "-", no value, is an empty field; "-1" and "--" are values */
	t = roce_table_create("x", 3, (const char *[]){ "a", "b", "c" });
	ck_assert_ptr_nonnull(t);
	roce_table_add(t, "-");
	roce_table_add(t, "-1");
	roce_table_add(t, "--");
	cap_open(&cap);
	ck_assert_int_eq(roce_table_write_csv(t, cap.f), 0);
	ck_assert_str_eq(cap_close(&cap), "a,b,c\n,-1,--\n");
	free(cap.buf);
	roce_table_destroy(t);
}
END_TEST

/* ---- reports ---- */

static struct roce_report *sample_report(void)
{
	struct roce_report *r = roce_report_create("Run <1> & \"all\"");
	struct roce_table *t = sample_table();
	struct roce_chart *c = roce_chart_create(ROCE_CHART_STEP, "pause", "time (µs)", "state");

	ck_assert(r && c);
	roce_report_text(r, "one\n\ntwo 'quoted' `a<b` and 1` left");
	roce_report_heading(r, "Tables & charts");
	roce_table_note(t, "  continued, indented");
	roce_report_table(r, t);
	roce_table_destroy(t);		/* the report holds a copy */
	roce_report_row(r);
	ck_assert_int_eq(roce_chart_series(c, "prio 3", (const double[]){ 0, 1, 2 },
					   (const double[]){ 0, 1, 0 }, 3), 0);
	roce_report_chart(r, c);
	roce_report_chart(r, roce_chart_create(ROCE_CHART_BAR, "empty", NULL, NULL));
	roce_report_heading(r, "After the row");
	roce_report_list(r, "Found <2>", (const char *const[]){ "a & `b<c`", "two\nlines" }, 2);
	return r;
}

START_TEST(report_html_content)
{
	struct roce_report *r = sample_report();
	struct capture cap;
	const char *html;

	cap_open(&cap);
	ck_assert_int_eq(roce_report_write_stream(r, cap.f), 0);
	html = cap_close(&cap);
	ck_assert_ptr_nonnull(strstr(html, "<title>Run &lt;1&gt; &amp; &quot;all&quot;</title>"));
	/* a span in backquotes is code, escaped; an unpaired backquote stays */
	ck_assert_ptr_nonnull(strstr(html, "<p>one</p>\n<p>two &#39;quoted&#39; <code>a&lt;b</code> "
					 "and 1` left</p>"));
	ck_assert_ptr_nonnull(strstr(html, "<h2>Tables &amp; charts</h2>"));
	ck_assert_ptr_nonnull(strstr(html, "<td class=\"l\">&lt;x&gt;&amp;</td>"));
	ck_assert_ptr_nonnull(strstr(html, "<th class=\"l\">case</th><th>Gb/s</th>"));
	/* a note indented on a terminal goes on under the one before, indented */
	ck_assert_ptr_nonnull(strstr(html, "<p class=\"note\">PFC on priority 3.</p>\n"
					 "<p class=\"note more\">continued, indented</p>"));
	ck_assert_uint_eq(count(html, "<div class=\"row\">"), 1);
	ck_assert_ptr_nonnull(strstr(html, "</figure>\n</div>\n<h2>After the row</h2>"));
	/* a list: its title and items escaped, code spans, an item one line */
	ck_assert_ptr_nonnull(strstr(html, "<div class=\"box\">\n<p class=\"box-title\">Found "
					 "&lt;2&gt;</p>\n<ul>\n<li>a &amp; <code>b&lt;c</code></li>\n"
					 "<li>two lines</li>\n</ul>\n</div>\n"));
	/* code in the box is set off from the box's band, not the same colour as it */
	ck_assert_ptr_nonnull(strstr(html, ".box{"));
	ck_assert_ptr_nonnull(strstr(html, "background:var(--band)"));
	ck_assert_ptr_nonnull(strstr(html, ".box code{background:#fff;"));
	ck_assert_uint_eq(count(html, "<svg "), 2);
	ck_assert_ptr_nonnull(strstr(html, "id=\"chart1-clip\""));	/* ids unique per page */
	ck_assert_ptr_nonnull(strstr(html, "id=\"chart2\""));
	ck_assert_ptr_nonnull(strstr(html, "<g class=\"plot\" data-kind=\"step\" data-x=\"0 2 "));
	/* self-contained */
	ck_assert_uint_eq(count(html, "<script"), 1);		/* the inline hover script */
	ck_assert_ptr_nonnull(strstr(html, "<script>//<![CDATA[\n"));
	ck_assert_ptr_null(strstr(html, "<link"));
	ck_assert_ptr_null(strstr(html, "src="));
	ck_assert_ptr_null(strstr(html, "url(http"));
	free(cap.buf);
	roce_report_destroy(r);
}
END_TEST

START_TEST(report_deterministic)
{
	struct capture a, b;
	struct roce_report *r1 = sample_report(), *r2 = sample_report();

	cap_open(&a);
	cap_open(&b);
	ck_assert_int_eq(roce_report_write_stream(r1, a.f), 0);
	ck_assert_int_eq(roce_report_write_stream(r2, b.f), 0);
	cap_close(&a);
	cap_close(&b);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert_int_eq(memcmp(a.buf, b.buf, a.len), 0);
	free(a.buf);
	free(b.buf);
	roce_report_destroy(r1);
	roce_report_destroy(r2);
}
END_TEST

START_TEST(report_write_errors)
{
	struct roce_report *r = roce_report_create("x");

	char path[] = "/tmp/rocelab-report-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	ck_assert_int_eq(roce_report_write(r, "/nonexistent-dir/report.html"), -ENOENT);
	/* a device is never written or replaced: /dev/null stays /dev/null */
	ck_assert_int_eq(roce_report_write(r, "/dev/null"), -ENOTSUP);
	roce_report_chart(r, NULL);	/* a failed chart_create: remembered */
	ck_assert_int_eq(roce_report_write(r, path), -ENOMEM);
	ck_assert_int_ne(access(path, F_OK), 0);	/* no half page left behind */
	roce_report_destroy(r);
	roce_report_destroy(NULL);
}
END_TEST

/* ---- progress ---- */

START_TEST(progress_silent_off_tty)
{
	FILE *f = tmpfile();
	struct roce_progress *p;

	ck_assert_ptr_nonnull(f);
	p = roce_progress_start(f, "run", 100);
	for (int i = 0; i <= 100000; i++)
		roce_progress_update(p, i / 1000.0);
	roce_progress_finish(p);
	ck_assert_int_eq(ftell(f), 0);
	fclose(f);
	roce_progress_update(NULL, 1);
	roce_progress_finish(NULL);
}
END_TEST

START_TEST(progress_draws_on_tty)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
	struct roce_progress *p;
	char buf[4096];
	size_t len;
	ssize_t n;
	FILE *f;

	ck_assert_int_ge(master, 0);
	ck_assert_int_eq(grantpt(master), 0);
	ck_assert_int_eq(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	ck_assert_int_ge(slave, 0);
	f = fdopen(slave, "w");
	ck_assert_ptr_nonnull(f);
	p = roce_progress_start(f, "scenario", 200);
	roce_progress_update(p, 100);		/* the first update draws */
	for (int i = 0; i < 1000; i++)
		roce_progress_update(p, 100);	/* rate-limited: no more lines */
	roce_progress_finish(p);
	fclose(f);
	/* the pty delivers asynchronously: read until the closing clear arrives (or 5 s pass) */
	len = 0;
	buf[0] = '\0';
	for (int tries = 0; tries < 50 && count(buf, "\r\033[K") < 1; tries++) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(master, buf + len, sizeof(buf) - 1 - len);
		ck_assert_int_gt(n, 0);
		len += (size_t)n;
		buf[len] = '\0';
	}
	ck_assert_ptr_nonnull(strstr(buf, "\rscenario ["));
	ck_assert_ptr_nonnull(strstr(buf, " 50%"));
	ck_assert_uint_eq(count(buf, "scenario"), 1);
	ck_assert_msg(strstr(buf, "\r\033[K") != NULL, "%s", buf);	/* the line is cleared at the end */
	close(master);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("axes");

	tcase_add_test(tc, ticks_widened);
	tcase_add_test(tc, ticks_inside);
	tcase_add_test(tc, si_format);
	tcase_add_test(tc, reduce_keeps_extremes);
	tcase_add_test(tc, reduce_nan_breaks);
	suite_add_tcase(s, tc);
	tc = tcase_create("charts");
	tcase_add_test(tc, chart_million_points_bounded);
	tcase_add_test(tc, chart_no_data);
	tcase_add_test(tc, chart_escapes_text);
	tcase_add_test(tc, chart_palette_and_legend);
	tcase_add_test(tc, chart_legend_names_hidden_lines);
	tcase_add_test(tc, chart_highlight_own_colour);
	tcase_add_test(tc, chart_caption_and_missing_bar);
	tcase_add_test(tc, chart_marks);
	tcase_add_test(tc, chart_narrow_bars_no_headroom);
	tcase_add_test(tc, chart_x_axis_starts_at_tick);
	tcase_add_test(tc, chart_mark_labels_clear_data);
	tcase_add_test(tc, chart_xlog);
	suite_add_tcase(s, tc);
	tc = tcase_create("tables");
	tcase_add_test(tc, table_print_aligned);
	tcase_add_test(tc, table_csv_quoting);
	suite_add_tcase(s, tc);
	tc = tcase_create("reports");
	tcase_add_test(tc, report_html_content);
	tcase_add_test(tc, report_deterministic);
	tcase_add_test(tc, report_write_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("progress");
	tcase_add_test(tc, progress_silent_off_tty);
	tcase_add_test(tc, progress_draws_on_tty);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(report_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
