/* Charts: line, step and grouped bar charts drawn as SVG, with nice ticks and per-column reduction. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roce_common.h"
#include "report_private.h"

/* Okabe-Ito order for lines on white: blue, vermillion, bluish green, reddish purple, orange, sky blue, yellow, black. */
const char *const report_palette[8] = {
	"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
};

/*
 * An edge drawn under a line of the palette's colour, or NULL: the yellow has 1.3:1 against
 * white and a 2-px line of it washes out on a projector (an FCT chart's "all flows" was drawn
 * in it). Darkening it would bring it to the orange's lightness, and the two apart only by hue,
 * which a colour-blind reader cannot see; a dark edge keeps the yellow and outlines it.
 */
static const char *const palette_edge[8] = { [6] = "#8C8100" };

struct chart_series {
	char *name;		/* legend and tooltip text */
	double *x;		/* n x values (NULL for bars) */
	double *y;		/* n y values */
	size_t n;		/* points (line/step) or categories (bar) */
	bool highlight;		/* roce_chart_highlight(): its own colour, wider, drawn on top */
};

struct chart_mark {
	double x;		/* on the x axis, as the series' x (log10 of it on a log axis) */
	char *label;		/* "" when none */
};

struct roce_chart {
	enum roce_chart_kind kind;	/* line, step or bar */
	char *title;			/* above the plot; "" when none */
	char *xlabel;			/* under the x axis, with its unit */
	char *ylabel;			/* beside the y axis, with its unit */
	struct chart_series *series;	/* nseries series, in drawing order */
	size_t nseries;			/* series added */
	char *legend_note;		/* after the legend's entries; NULL when none */
	char *caption;			/* under the picture: what is drawn and why; NULL when none */
	char *missing;			/* printed where a bar is missing; NULL when nothing is */
	struct chart_mark *marks;	/* nmarks vertical marks, in the order added */
	size_t nmarks;
	char **cats;			/* ncats bar category names */
	size_t ncats;			/* named categories */
	bool yfixed;			/* ymin..ymax set by roce_chart_yrange() */
	double ymin, ymax;		/* fixed y axis */
	bool xfixed;			/* xmin..xmax set by roce_chart_xrange() */
	double xmin, xmax;		/* fixed x axis */
	bool xlog;			/* roce_chart_xlog(): x held as log10, ticks at decades */
	bool ylog;			/* roce_chart_ylog(): the same for y */
};

/* Picture geometry, in SVG user units (px at 100%). */
#define CHART_W 640.0		/* viewBox width: about 1:1 when two charts share a row */
#define CHART_H 380.0		/* viewBox height without extra legend rows */
#define CHART_FONT 13.0		/* text size: readable on a projector at half a page */
#define CHAR_W 7.5		/* average glyph width at CHART_FONT, for layout estimates */
#define LEGEND_ROW 20.0		/* height of one legend row */

char *report_strdup(const char *s)
{
	return strdup(s != NULL ? s : "");
}

struct roce_chart *roce_chart_create(enum roce_chart_kind kind, const char *title,
				     const char *xlabel, const char *ylabel)
{
	struct roce_chart *c;

	if (kind != ROCE_CHART_LINE && kind != ROCE_CHART_STEP && kind != ROCE_CHART_BAR) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->kind = kind;
	c->title = report_strdup(title);
	c->xlabel = report_strdup(xlabel);
	c->ylabel = report_strdup(ylabel);
	if (c->title == NULL || c->xlabel == NULL || c->ylabel == NULL) {
		roce_chart_destroy(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

static void free_cats(struct roce_chart *c)
{
	for (size_t i = 0; i < c->ncats; i++)
		free(c->cats[i]);
	free(c->cats);
	c->cats = NULL;
	c->ncats = 0;
}

void roce_chart_destroy(struct roce_chart *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nseries; i++) {
		free(c->series[i].name);
		free(c->series[i].x);
		free(c->series[i].y);
	}
	free(c->series);
	for (size_t i = 0; i < c->nmarks; i++)
		free(c->marks[i].label);
	free(c->marks);
	free(c->legend_note);
	free(c->caption);
	free(c->missing);
	free_cats(c);
	free(c->title);
	free(c->xlabel);
	free(c->ylabel);
	free(c);
}

int roce_chart_series(struct roce_chart *c, const char *name, const double *x, const double *y,
		      size_t n)
{
	struct chart_series s = { .n = n }, *p;
	bool bar = c->kind == ROCE_CHART_BAR;
	char defname[32];

	if (n > 0 && y == NULL)
		return -EINVAL;
	if (name == NULL) {
		snprintf(defname, sizeof(defname), "series %zu", c->nseries + 1);
		name = defname;
	}
	s.name = report_strdup(name);
	s.y = malloc((n ? n : 1) * sizeof(double));
	s.x = bar ? NULL : malloc((n ? n : 1) * sizeof(double));
	p = realloc(c->series, (c->nseries + 1) * sizeof(*p));
	if (p != NULL)
		c->series = p;
	if (s.name == NULL || s.y == NULL || (!bar && s.x == NULL) || p == NULL)
		goto err_free_series;
	if (n > 0)
		memcpy(s.y, y, n * sizeof(double));
	for (size_t i = 0; !bar && i < n; i++)
		s.x[i] = x != NULL ? x[i] : (double)i;
	for (size_t i = 0; !bar && c->xlog && i < n; i++)
		s.x[i] = s.x[i] > 0 ? log10(s.x[i]) : NAN;	/* no place on the axis: a break */
	for (size_t i = 0; !bar && c->ylog && i < n; i++)
		s.y[i] = s.y[i] > 0 ? log10(s.y[i]) : NAN;
	c->series[c->nseries++] = s;
	return 0;

err_free_series:
	free(s.name);
	free(s.x);
	free(s.y);
	return -ENOMEM;
}

/* Replace *@p slot by a copy of @p text. */
static int set_text(char **slot, const char *text)
{
	char *t = report_strdup(text);

	if (t == NULL)
		return -ENOMEM;
	free(*slot);
	*slot = t;
	return 0;
}

int roce_chart_legend_note(struct roce_chart *c, const char *text)
{
	return set_text(&c->legend_note, text);
}

int roce_chart_caption(struct roce_chart *c, const char *text)
{
	return set_text(&c->caption, text);
}

const char *report_chart_caption(const struct roce_chart *c)
{
	return c->caption != NULL && c->caption[0] ? c->caption : NULL;
}

int roce_chart_missing_label(struct roce_chart *c, const char *text)
{
	return set_text(&c->missing, text);
}

int roce_chart_highlight(struct roce_chart *c, size_t i)
{
	if (i >= c->nseries)
		return -EINVAL;
	c->series[i].highlight = true;
	return 0;
}

/*
 * The palette slot of series @p s; *@p dashed when the slot is used a second time. Highlighted
 * series take the first slots, each its own; the others the slots after them in turn, so a
 * ninth line repeats the colour of another plain one (dashed), never a highlighted one's.
 */
static size_t series_slot(const struct roce_chart *c, size_t s, bool *dashed)
{
	size_t np = ROCE_DIM(report_palette), h = 0, k = 0;

	for (size_t i = 0; i < c->nseries; i++)
		h += c->series[i].highlight;
	if (h == 0 || h >= np) {
		*dashed = s >= np;
		return s % np;
	}
	for (size_t i = 0; i < s; i++)
		k += c->series[i].highlight == c->series[s].highlight;
	if (c->series[s].highlight) {
		*dashed = false;
		return k;
	}
	*dashed = k >= np - h;
	return h + k % (np - h);
}

int roce_chart_mark(struct roce_chart *c, double x, const char *label)
{
	struct chart_mark *p;
	char *l;

	if (c->kind == ROCE_CHART_BAR)
		return 0;
	l = report_strdup(label);
	p = realloc(c->marks, (c->nmarks + 1) * sizeof(*p));
	if (p != NULL)
		c->marks = p;
	if (l == NULL || p == NULL) {
		free(l);
		return -ENOMEM;
	}
	if (c->xlog)
		x = x > 0 ? log10(x) : NAN;
	c->marks[c->nmarks++] = (struct chart_mark){ .x = x, .label = l };
	return 0;
}

int roce_chart_categories(struct roce_chart *c, const char *const *names, size_t n)
{
	char **cats;

	if (n > 0 && names == NULL)
		return -EINVAL;
	cats = calloc(n ? n : 1, sizeof(*cats));
	if (cats == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cats[i] = report_strdup(names[i]);
		if (cats[i] == NULL) {
			while (i-- > 0)
				free(cats[i]);
			free(cats);
			return -ENOMEM;
		}
	}
	free_cats(c);
	c->cats = cats;
	c->ncats = n;
	return 0;
}

void roce_chart_yrange(struct roce_chart *c, double min, double max)
{
	if (!(min < max) || !isfinite(min) || !isfinite(max))
		return;
	c->yfixed = true;
	c->ymin = min;
	c->ymax = max;
}

void roce_chart_xrange(struct roce_chart *c, double min, double max)
{
	if (!(min < max) || !isfinite(min) || !isfinite(max))
		return;
	c->xfixed = true;
	c->xmin = min;
	c->xmax = max;
}

void roce_chart_xlog(struct roce_chart *c)
{
	if (c->kind != ROCE_CHART_BAR && c->nseries == 0)
		c->xlog = true;
}

void roce_chart_ylog(struct roce_chart *c)
{
	if (c->kind != ROCE_CHART_BAR && c->nseries == 0)
		c->ylog = true;
}

/* ---- numbers ---- */

/* SI prefixes from 10^-9 to 10^12, indexed by (exponent + 9) / 3. */
static const char *const si_prefix[] = { "n", "\xc2\xb5", "m", "", "k", "M", "G", "T" };

static double pow10i(int k)
{
	return k >= 0 ? pow(10.0, k) : 1.0 / pow(10.0, -k);	/* 1/10^k rounds to the literal 1e-k */
}

char *roce_si(double v, char *out, size_t size)
{
	double a = fabs(v), mant;
	int e3, digits;
	char num[64];
	char *dot;

	if (isnan(v)) {
		snprintf(out, size, "nan");
		return out;
	}
	if (isinf(v)) {
		snprintf(out, size, "%sinf", v < 0 ? "-" : "");
		return out;
	}
	if (a == 0) {
		snprintf(out, size, "0");
		return out;
	}
	e3 = (int)floor(log10(a) / 3) * 3;
	for (int pass = 0; pass < 2; pass++) {
		if (e3 < -9 || e3 > 12) {
			snprintf(out, size, "%.3g", v);
			return out;
		}
		mant = v / pow10i(e3);
		digits = 2 - (int)floor(log10(fabs(mant)));
		digits = digits < 0 ? 0 : digits > 2 ? 2 : digits;
		snprintf(num, sizeof(num), "%.*f", digits, mant);
		if (fabs(strtod(num, NULL)) < 1000)
			break;
		e3 += 3;	/* rounded up to 1000: 999.96 → 1.00k */
	}
	dot = strchr(num, '.');
	if (dot != NULL) {
		char *end = num + strlen(num);

		while (end > dot && (end[-1] == '0' || end[-1] == '.'))
			*--end = '\0';
	}
	snprintf(out, size, "%s%s", num, si_prefix[(e3 + 9) / 3]);
	return out;
}

int roce_ticks(double lo, double hi, int max_intervals, bool widen, struct roce_ticks *t)
{
	static const double mult[] = { 1, 2, 5 };
	double range, step = 0, m;
	long long i0, i1;
	int k, e3;

	if (!isfinite(lo) || !isfinite(hi) || lo > hi)
		return -EINVAL;
	max_intervals = max_intervals < 2 ? 2 : ROCE_MIN(max_intervals, ROCE_TICKS_MAX - 1);
	if (lo == hi) {
		if (lo == 0) {
			hi = 1;
		} else {
			double d = fabs(lo) / 2;

			lo -= d;
			hi += d;
		}
	}
	range = hi - lo;
	if (!isfinite(range))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	k = (int)floor(log10(range / max_intervals)) - 1;
	for (bool found = false; !found; k++) {
		for (size_t j = 0; j < ROCE_DIM(mult) && !found; j++) {
			double n;

			step = mult[j] * pow10i(k);
			if (widen)
				n = ceil(hi / step - 1e-9) - floor(lo / step + 1e-9);
			else
				n = floor(range / step + 1e-9);
			found = n <= max_intervals;
		}
	}
	t->step = step;
	if (fabs(lo / step) > 1e12 || fabs(hi / step) > 1e12) {
		/* a narrow range far from zero: integer tick indices would lose precision */
		t->n = 2;
		t->v[0] = t->lo = lo;
		t->v[1] = t->hi = hi;
		t->step = range;
	} else {
		i0 = widen ? (long long)floor(lo / step + 1e-9) : (long long)ceil(lo / step - 1e-9);
		i1 = widen ? (long long)ceil(hi / step - 1e-9) : (long long)floor(hi / step + 1e-9);
		for (long long i = i0; i <= i1 && t->n < ROCE_TICKS_MAX; i++)
			t->v[t->n++] = (double)i * step + 0.0;	/* + 0.0: no -0 */
		t->lo = widen ? t->v[0] : lo;
		t->hi = widen ? t->v[t->n - 1] : hi;
	}
	/* one prefix for the axis, from its largest magnitude */
	m = ROCE_MAX(fabs(t->lo), fabs(t->hi));
	e3 = m > 0 ? (int)floor(log10(m) / 3) * 3 : 0;
	e3 = e3 < -9 ? -9 : e3 > 12 ? 12 : e3;
	if (e3 == 3 && m < 10000 && t->step >= 1)
		e3 = 0;		/* 0, 200, .., 1200 reads better than 0, 0.2k, .., 1.2k */
	t->scale = pow10i(e3);
	t->decimals = (int)ceil(-log10(t->step / t->scale) - 1e-9);
	t->decimals = t->decimals < 0 ? 0 : t->decimals > 9 ? 9 : t->decimals;
	return 0;
}

char *roce_ticks_label(const struct roce_ticks *t, double v, char *out, size_t size)
{
	int e3 = (int)lround(log10(t->scale));

	if (fabs(v) < t->step * 1e-6) {
		snprintf(out, size, "0");
		return out;
	}
	snprintf(out, size, "%.*f%s", t->decimals, v / t->scale, si_prefix[(e3 + 9) / 3]);
	return out;
}

/* ---- reduction ---- */

struct reduce_group {
	size_t idx[4];		/* first, min, max, last */
	bool any;		/* holds at least one point */
};

struct reduce_out {
	const double *x, *y;	/* input */
	double *ox, *oy;	/* output */
	size_t n, cap;		/* written, room */
};

static void emit(struct reduce_out *o, double x, double y)
{
	if (o->n < o->cap) {
		o->ox[o->n] = x;
		o->oy[o->n] = y;
		o->n++;
	}
}

static void flush(struct reduce_out *o, struct reduce_group *g)
{
	size_t *v = g->idx;

	if (!g->any)
		return;
	for (int i = 1; i < 4; i++)		/* sort the four indices: original order */
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			size_t tmp = v[j];

			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	for (int i = 0; i < 4; i++)
		if (i == 0 || v[i] != v[i - 1])
			emit(o, o->x[v[i]], o->y[v[i]]);
	g->any = false;
}

static void add(struct reduce_group *g, const double *y, size_t i)
{
	if (!g->any) {
		g->idx[0] = g->idx[1] = g->idx[2] = g->idx[3] = i;
		g->any = true;
		return;
	}
	if (y[i] < y[g->idx[1]])
		g->idx[1] = i;
	if (y[i] > y[g->idx[2]])
		g->idx[2] = i;
	g->idx[3] = i;
}

size_t roce_chart_reduce(const double *x, const double *y, size_t n, double x0, double x1,
			 unsigned int columns, double *ox, double *oy)
{
	struct reduce_out o = { .x = x, .y = y, .ox = ox, .oy = oy };
	struct reduce_group g = { .any = false };
	double span = x1 - x0;
	long long col = -1;
	bool broke = false;

	columns = columns ? columns : 1;
	o.cap = ROCE_MIN(n, (size_t)columns * 9);
	for (size_t i = 0; i < n; i++) {
		bool finite = isfinite(x[i]) && isfinite(y[i]);

		if (isfinite(x[i])) {
			double f = span > 0 ? (x[i] - x0) / span * columns : 0;
			long long c = f < 0 ? 0 : f >= columns ? (long long)columns - 1 : (long long)f;

			if (c != col) {
				flush(&o, &g);
				col = c;
				broke = false;
			}
		}
		if (finite) {
			add(&g, y, i);
		} else if (!broke && col >= 0) {
			flush(&o, &g);
			if (o.n > 0 && !isnan(o.oy[o.n - 1]))
				emit(&o, x[i], NAN);
			broke = true;	/* later gaps in this column are ignored: bounded output */
		}
	}
	flush(&o, &g);
	return o.n;
}

/* ---- SVG ---- */

struct frame {
	double w, h;		/* picture */
	double l, t, r, b;	/* plot area edges */
	double legend_y;	/* baseline of the first legend row */
	struct roce_ticks xt;	/* x ticks (line/step) */
	struct roce_ticks yt;	/* y ticks */
	bool data;		/* anything to draw */
	size_t ncats;		/* bar categories */
	double cat_rot;		/* bar category labels: rotated when too wide */
};

/* A coordinate with at most one decimal, no "-0", no ".0". */
static void put_num(FILE *f, double v)
{
	char buf[32];
	size_t len;

	v = v < -1e5 ? -1e5 : v > 1e5 ? 1e5 : v;
	v = round(v * 10) / 10;
	if (v == 0)
		v = 0;
	len = (size_t)snprintf(buf, sizeof(buf), "%.1f", v);
	if (len > 2 && strcmp(buf + len - 2, ".0") == 0)
		buf[len - 2] = '\0';
	fputs(buf, f);
}

/* A legend swatch's line, 18 px from (@p x, @p y): @p width px of @p colour, @p extra attributes. */
static void swatch_line(FILE *f, double x, double y, const char *colour, int width,
			const char *extra)
{
	fprintf(f, "<line x1=\"");
	put_num(f, x);
	fprintf(f, "\" x2=\"");
	put_num(f, x + 18);
	fprintf(f, "\" y1=\"");
	put_num(f, y);
	fprintf(f, "\" y2=\"");
	put_num(f, y);
	fprintf(f, "\" stroke=\"%s\" stroke-width=\"%d\"%s/>", colour, width, extra);
}

static double px(const struct frame *fr, double x)
{
	return fr->l + (x - fr->xt.lo) / (fr->xt.hi - fr->xt.lo) * (fr->r - fr->l);
}

static double py(const struct frame *fr, double y)
{
	return fr->b - (y - fr->yt.lo) / (fr->yt.hi - fr->yt.lo) * (fr->b - fr->t);
}

static double text_w(const char *s)
{
	return (double)report_utf8_len(s) * CHAR_W;
}

/*
 * @p s cut to @p max characters, the last one an ellipsis, into @p out (4 * max + 4 bytes):
 * long titles and names must not run off the picture; tooltips keep them whole.
 */
static const char *clip(const char *s, size_t max, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, bytes;

	if (report_utf8_len(s) <= max)
		return s;
	while (*p != '\0' && n + 1 < max) {
		p++;
		while ((*p & 0xc0) == 0x80)	/* continuation bytes of the same character */
			p++;
		n++;
	}
	bytes = (size_t)(p - (const unsigned char *)s);
	if (bytes + 4 > size)
		return s;
	memcpy(out, s, bytes);
	memcpy(out + bytes, "\xe2\x80\xa6", 4);	/* U+2026 and the NUL */
	return out;
}

static void text_at(FILE *f, double x, double y, const char *attrs, const char *s)
{
	fputs("<text x=\"", f);
	put_num(f, x);
	fputs("\" y=\"", f);
	put_num(f, y);
	fprintf(f, "\"%s%s>", attrs[0] ? " " : "", attrs);
	report_xml_puts(f, s);
	fputs("</text>\n", f);
}

#define LEGEND_MAX 48		/* characters of a series name in the legend */
#define TITLE_MAX 58		/* characters of the title that fit the width */

/*
 * The series drawn last over series @p i along its whole length, or -1: within 0.6% of the y
 * axis's span (about a line's width) at the same x at every point. A line drawn exactly under
 * another cannot be seen, so its legend entry says so, or the legend lies.
 */
static long drawn_under(const struct roce_chart *c, size_t i)
{
	const struct chart_series *a = &c->series[i];
	double lo = INFINITY, hi = -INFINITY, tol;

	if (c->kind == ROCE_CHART_BAR || a->n == 0)
		return -1;
	for (size_t s = 0; s < c->nseries; s++)
		for (size_t k = 0; k < c->series[s].n; k++)
			if (isfinite(c->series[s].y[k])) {
				lo = ROCE_MIN(lo, c->series[s].y[k]);
				hi = ROCE_MAX(hi, c->series[s].y[k]);
			}
	if (c->yfixed && !c->ylog) {
		lo = c->ymin;
		hi = c->ymax;
	} else if (!c->ylog) {	/* the axis holds 0 */
		lo = ROCE_MIN(lo, 0);
		hi = ROCE_MAX(hi, 0);
	}
	tol = 0.006 * ROCE_MAX(hi - lo, c->ylog ? 1 : 1e-300);
	for (size_t j = c->nseries; j-- > i + 1;) {
		const struct chart_series *b = &c->series[j];
		bool same = b->n == a->n;

		for (size_t k = 0; same && k < a->n; k++) {
			bool fa = isfinite(a->y[k]) && isfinite(a->x[k]);
			bool fb = isfinite(b->y[k]) && isfinite(b->x[k]);

			same = fa == fb && (!fa || (a->x[k] == b->x[k] &&
						    fabs(a->y[k] - b->y[k]) <= tol));
		}
		if (same)
			return (long)j;
	}
	return -1;
}

/* The legend entry of series @p i, clipped: its name, and the series it is drawn under. */
static const char *legend_name(const struct roce_chart *c, size_t i, char *out, size_t size)
{
	long j = drawn_under(c, i);
	char a[4 * LEGEND_MAX + 4], b[4 * LEGEND_MAX + 4];

	if (j < 0)
		return clip(c->series[i].name, LEGEND_MAX, out, size);
	snprintf(out, size, "%s (under %s)", clip(c->series[i].name, LEGEND_MAX / 2, a, sizeof(a)),
		 clip(c->series[j].name, LEGEND_MAX / 2, b, sizeof(b)));
	return out;
}

/* Lay out legend rows from x = 16; returns the number of rows. */
static int legend_rows(const struct roce_chart *c, double width)
{
	double x = 16;
	int rows = 1;

	char buf[8 * LEGEND_MAX + 32];

	for (size_t i = 0; i < c->nseries; i++) {
		double w = 24 + text_w(legend_name(c, i, buf, sizeof(buf))) + 16;

		if (x + w > width - 16 && x > 16) {
			rows++;
			x = 16;
		}
		x += w;
	}
	if (c->legend_note != NULL && c->legend_note[0] &&
	    x + text_w(clip(c->legend_note, LEGEND_MAX, buf, sizeof(buf))) > width - 16 && x > 16)
		rows++;
	return rows;
}

static void legend(FILE *f, const struct roce_chart *c, const struct frame *fr)
{
	double x = 16, y = fr->legend_y;

	fputs("<g class=\"legend\">\n", f);
	for (size_t i = 0; i < c->nseries; i++) {
		bool dashed;
		size_t slot = series_slot(c, i, &dashed);
		const char *col = report_palette[slot];
		char buf[8 * LEGEND_MAX + 32];
		const char *name = legend_name(c, i, buf, sizeof(buf));
		double w = 24 + text_w(name) + 16;

		if (x + w > fr->w - 16 && x > 16) {
			x = 16;
			y += LEGEND_ROW;
		}
		if (c->kind == ROCE_CHART_BAR) {
			fprintf(f, "<rect x=\"");
			put_num(f, x);
			fprintf(f, "\" y=\"");
			put_num(f, y - 10);
			fprintf(f, "\" width=\"14\" height=\"12\" rx=\"2\" fill=\"%s\"/>", col);
		} else {
			const char *edge = palette_edge[slot];
			int wide = c->series[i].highlight;

			if (edge != NULL)	/* under the swatch, as under the line */
				swatch_line(f, x, y - 4, edge, 5 + wide, "");
			swatch_line(f, x, y - 4, col, 3 + wide, dashed ?
				    " stroke-dasharray=\"6 3\"" : "");
		}
		fprintf(f, "<text x=\"");
		put_num(f, x + 24);
		fprintf(f, "\" y=\"");
		put_num(f, y);
		fprintf(f, "\">");
		report_xml_puts(f, name);
		fprintf(f, "</text>\n");
		x += w;
	}
	if (c->legend_note != NULL && c->legend_note[0]) {
		char buf[4 * LEGEND_MAX + 4];
		const char *note = clip(c->legend_note, LEGEND_MAX, buf, sizeof(buf));

		if (x + text_w(note) > fr->w - 16 && x > 16) {
			x = 16;
			y += LEGEND_ROW;
		}
		text_at(f, x, y, "fill=\"#666\" font-style=\"italic\"", note);
	}
	fputs("</g>\n", f);
}

/* Data ranges of a chart; false when there is nothing finite to draw. */
static bool data_range(const struct roce_chart *c, size_t ncats, double *xlo, double *xhi,
		       double *ylo, double *yhi)
{
	bool any = false;

	*xlo = *ylo = INFINITY;
	*xhi = *yhi = -INFINITY;
	for (size_t s = 0; s < c->nseries; s++) {
		const struct chart_series *se = &c->series[s];

		for (size_t i = 0; i < se->n; i++) {
			if (!isfinite(se->y[i]))
				continue;
			if (c->kind == ROCE_CHART_BAR) {
				if (i >= ncats)
					continue;
			} else {
				if (!isfinite(se->x[i]))
					continue;
				*xlo = ROCE_MIN(*xlo, se->x[i]);
				*xhi = ROCE_MAX(*xhi, se->x[i]);
			}
			*ylo = ROCE_MIN(*ylo, se->y[i]);
			*yhi = ROCE_MAX(*yhi, se->y[i]);
			any = true;
		}
	}
	return any;
}

/* A log10 axis: whole decades around [lo, hi], at most ROCE_TICKS_MAX of them. */
static void decade_ticks(double lo, double hi, struct roce_ticks *t)
{
	memset(t, 0, sizeof(*t));
	if (!isfinite(lo) || !isfinite(hi) || lo > hi)
		lo = hi = 0;	/* cannot happen from data (log10 of x > 0): one decade */
	t->lo = floor(lo);
	t->hi = ROCE_MAX(ceil(hi), t->lo + 1);
	if (t->hi - t->lo > ROCE_TICKS_MAX - 1)
		t->hi = t->lo + ROCE_TICKS_MAX - 1;
	t->step = 1;
	t->scale = 1;
	for (double v = t->lo; v <= t->hi && t->n < ROCE_TICKS_MAX; v++)
		t->v[t->n++] = v;
}

/* The label of decade @p v of a log axis, 10^v: "1m", "0.01", "0.1", "1", "10", "1k" ... "100G". */
static const char *decade_label(double v, char *buf, size_t len)
{
	int e = (int)v, k = e >= 0 ? e / 3 : -((2 - e) / 3);	/* floor(e / 3) */

	if (k < -3 || k > 4)
		snprintf(buf, len, "1e%d", e);
	else if (e == -1 || e == -2)	/* as a linear axis labels them: not "100m" */
		snprintf(buf, len, "%s", e == -1 ? "0.1" : "0.01");
	else
		snprintf(buf, len, "%s%s", (const char *const[]){ "1", "10", "100" }[e - 3 * k],
			 si_prefix[k + 3]);
	return buf;
}

static const char *ytick_label(const struct roce_chart *c, const struct frame *fr, int i,
			       char *buf, size_t len)
{
	return c->ylog ? decade_label(fr->yt.v[i], buf, len) :
	       roce_ticks_label(&fr->yt, fr->yt.v[i], buf, len);
}

/*
 * The width of one bar and the gap inside its slot, for a plot @p plot_w wide: the bars of a
 * category fill 60% of its share (80% with several series). A bar of 26 px or more carries its
 * value printed over it.
 */
static double bar_width(const struct roce_chart *c, size_t ncats, double plot_w, double *gap)
{
	double gw = plot_w / (double)(ncats ? ncats : 1);
	double bw = gw * (c->nseries == 1 ? 0.6 : 0.8) / (double)(c->nseries ? c->nseries : 1);

	*gap = bw > 8 ? 2 : 0;
	return bw;
}

#define BAR_VALUE_W 26		/* narrowest bar that carries its value */

static double ytick_width(const struct roce_chart *c, const struct frame *fr)
{
	double yw = 0;
	char buf[64];

	for (int i = 0; i < fr->yt.n; i++)
		yw = ROCE_MAX(yw, text_w(ytick_label(c, fr, i, buf, sizeof(buf))));
	return yw;
}

static void layout(const struct roce_chart *c, struct frame *fr)
{
	double xlo, xhi, ylo, yhi, yw = 0, catw = 0;
	int rows = c->nseries > 0 ? legend_rows(c, CHART_W) : 0;
	char buf[64];

	memset(fr, 0, sizeof(*fr));
	fr->w = CHART_W;
	fr->ncats = c->ncats;
	for (size_t s = 0; c->kind == ROCE_CHART_BAR && c->ncats == 0 && s < c->nseries; s++)
		fr->ncats = ROCE_MAX(fr->ncats, c->series[s].n);
	fr->data = data_range(c, fr->ncats, &xlo, &xhi, &ylo, &yhi);
	if (!fr->data)
		rows = 0;
	fr->legend_y = 54;
	fr->t = rows > 0 ? fr->legend_y + (rows - 1) * LEGEND_ROW + 18 : 48;
	fr->h = CHART_H + (rows > 1 ? (rows - 1) * LEGEND_ROW : 0);
	fr->b = fr->h - 56;
	fr->r = fr->w - 24;
	if (!fr->data) {
		fr->l = 24;
		return;
	}
	if (c->ylog) {
		/* a fixed range from 0 has no place on a log axis: the data's range then */
		bool fix = c->yfixed && c->ymin > 0;

		decade_ticks(fix ? log10(c->ymin) : ylo, fix ? log10(c->ymax) : yhi, &fr->yt);
	} else if (c->yfixed) {
		roce_ticks(c->ymin, c->ymax, 6, false, &fr->yt);
	} else {
		/* bars, throughput, queue depth: 0 belongs on the axis */
		roce_ticks(ROCE_MIN(ylo, 0), ROCE_MAX(yhi, 0), 6, true, &fr->yt);
		/*
		 * a bar's value is printed over it: room for it under the legend; bars too
		 * narrow for a value need none (an axis of goodput to 120 on a 100G link)
		 */
		if (c->kind == ROCE_CHART_BAR && yhi > 0) {
			double room = 18 / (fr->b - fr->t) * (fr->yt.hi - fr->yt.lo), gap;
			double l = 16 + (c->ylabel[0] ? 22 : 0) + ytick_width(c, fr) + 8;
			double bw = bar_width(c, fr->ncats, fr->r - l, &gap);

			if (fr->yt.hi - yhi < room && bw - gap >= BAR_VALUE_W)
				roce_ticks(ROCE_MIN(ylo, 0), yhi + room, 6, true, &fr->yt);
		}
	}
	yw = ytick_width(c, fr);
	fr->l = 16 + (c->ylabel[0] ? 22 : 0) + yw + 8;
	if (c->kind == ROCE_CHART_BAR) {
		for (size_t i = 0; i < fr->ncats; i++) {
			const char *name = i < c->ncats ? c->cats[i] : NULL;

			if (name == NULL) {
				snprintf(buf, sizeof(buf), "%zu", i + 1);
				name = buf;
			}
			catw = ROCE_MAX(catw, text_w(name));
		}
		if (catw > (fr->r - fr->l) / (double)fr->ncats - 8) {
			fr->cat_rot = -30;
			fr->b = fr->h - ROCE_MIN(catw, 200) * 0.5 - 50;
		}
		return;
	}
	if (c->xfixed && (!c->xlog || c->xmin > 0)) {
		xlo = c->xlog ? log10(c->xmin) : c->xmin;
		xhi = c->xlog ? log10(c->xmax) : c->xmax;
	}
	if (c->xlog) {
		decade_ticks(xlo, xhi, &fr->xt);
	} else {
		int nx = (int)((fr->r - fr->l) / 90);

		roce_ticks(xlo, xhi, nx, false, &fr->xt);
		/*
		 * The axis starts at a tick, so its left end is labelled: data from 1857.9 us
		 * (the first flow done) starts the axis at 1800, and the first rise of the curve
		 * is not drawn on the y axis, hidden by it. The right end stays at the data's end
		 * (a run's last sample). A wider range can take a coarser step: again until the
		 * start is on a tick of the step that labels it.
		 */
		for (int k = 0; !c->xfixed && k < 4 && fr->xt.n > 0 && fr->xt.v[0] > xlo; k++) {
			double lo = floor(xlo / fr->xt.step + 1e-9) * fr->xt.step;

			roce_ticks(lo, xhi, nx, false, &fr->xt);
			xlo = lo;
		}
	}
}

static void hline(FILE *f, double x1, double x2, double y, const char *cls)
{
	fputs("<line x1=\"", f);
	put_num(f, x1);
	fputs("\" x2=\"", f);
	put_num(f, x2);
	fputs("\" y1=\"", f);
	put_num(f, y);
	fputs("\" y2=\"", f);
	put_num(f, y);
	fprintf(f, "\" class=\"%s\"/>\n", cls);
}

static void vline(FILE *f, double x, double y1, double y2, const char *cls)
{
	fputs("<line x1=\"", f);
	put_num(f, x);
	fputs("\" x2=\"", f);
	put_num(f, x);
	fputs("\" y1=\"", f);
	put_num(f, y1);
	fputs("\" y2=\"", f);
	put_num(f, y2);
	fprintf(f, "\" class=\"%s\"/>\n", cls);
}

/* Grid, ticks and labels of both axes (x ticks only for line/step). */
static void axes(FILE *f, const struct roce_chart *c, const struct frame *fr)
{
	char buf[64];

	for (int i = 0; i < fr->yt.n; i++) {
		double y = py(fr, fr->yt.v[i]);

		hline(f, fr->l, fr->r, y, !c->ylog && fr->yt.v[i] == 0 ? "zero" : "grid");
		text_at(f, fr->l - 8, y + 4, "text-anchor=\"end\" class=\"tick\"",
			ytick_label(c, fr, i, buf, sizeof(buf)));
	}
	if (c->kind != ROCE_CHART_BAR) {
		for (int i = 0; i < fr->xt.n; i++) {
			double x = px(fr, fr->xt.v[i]);

			vline(f, x, fr->t, fr->b, "grid");
			vline(f, x, fr->b, fr->b + 5, "axis");
			text_at(f, x, fr->b + 20, "text-anchor=\"middle\" class=\"tick\"",
				c->xlog ? decade_label(fr->xt.v[i], buf, sizeof(buf)) :
				roce_ticks_label(&fr->xt, fr->xt.v[i], buf, sizeof(buf)));
		}
	}
	vline(f, fr->l, fr->t, fr->b, "axis");
	hline(f, fr->l, fr->r, fr->b, "axis");
	if (c->xlabel[0]) {
		text_at(f, (fr->l + fr->r) / 2, fr->h - 14, "text-anchor=\"middle\" class=\"label\"",
			c->xlabel);
	}
	if (c->ylabel[0]) {
		double cy = (fr->t + fr->b) / 2;

		fputs("<text transform=\"translate(22,", f);
		put_num(f, cy);
		fputs(") rotate(-90)\" text-anchor=\"middle\" class=\"label\">", f);
		report_xml_puts(f, c->ylabel);
		fputs("</text>\n", f);
	}
}

/* Tooltip of a line series: name, point count, range of y. */
static void series_title(FILE *f, const struct roce_chart *c, const struct chart_series *s)
{
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	size_t n = 0;
	char a[32], b[32], m[32];

	for (size_t i = 0; i < s->n; i++)
		if (isfinite(s->y[i]) && isfinite(s->x[i])) {
			double y = c->ylog ? pow(10, s->y[i]) : s->y[i];	/* as given */

			lo = ROCE_MIN(lo, y);
			hi = ROCE_MAX(hi, y);
			sum += y;
			n++;
		}
	fputs("<title>", f);
	report_xml_puts(f, s->name);
	if (n > 0)
		fprintf(f, ": %zu points, min %s, mean %s, max %s", n, roce_si(lo, a, sizeof(a)),
			roce_si(sum / (double)n, m, sizeof(m)), roce_si(hi, b, sizeof(b)));
	fputs("</title>", f);
}

/* The d of a reduced series' path: moves at the start and after each break. */
static void path_data(FILE *f, const struct roce_chart *c, const struct frame *fr,
		      const double *ox, const double *oy, size_t n)
{
	bool pen = false;

	for (size_t i = 0; i < n; i++) {
		if (isnan(oy[i])) {
			pen = false;
			continue;
		}
		if (!pen) {
			fputc('M', f);
			put_num(f, px(fr, ox[i]));
			fputc(',', f);
			put_num(f, py(fr, oy[i]));
			pen = true;
		} else if (c->kind == ROCE_CHART_STEP) {
			fputc('H', f);
			put_num(f, px(fr, ox[i]));
			fputc('V', f);
			put_num(f, py(fr, oy[i]));
		} else {
			fputc('L', f);
			put_num(f, px(fr, ox[i]));
			fputc(',', f);
			put_num(f, py(fr, oy[i]));
		}
	}
}

static int lines(FILE *f, const struct roce_chart *c, const struct frame *fr, const char *id)
{
	unsigned int cols = (unsigned int)(fr->r - fr->l);
	double *ox = NULL, *oy = NULL;

	/* highlighted series last: drawn over the others */
	for (size_t k = 0; k < 2 * c->nseries; k++) {
		size_t s = k % c->nseries;
		const struct chart_series *se = &c->series[s];
		bool dashed;
		size_t slot = series_slot(c, s, &dashed);
		const char *col = report_palette[slot];
		const char *edge = palette_edge[slot];
		const char *dash = dashed ? " stroke-dasharray=\"6 3\"" : "";
		size_t cap = ROCE_MIN(se->n, (size_t)cols * 9), n;
		double *nx, *ny;

		if (se->n == 0 || se->highlight != (k >= c->nseries))
			continue;
		nx = realloc(ox, cap * sizeof(double));
		if (nx != NULL)
			ox = nx;
		ny = realloc(oy, cap * sizeof(double));
		if (ny != NULL)
			oy = ny;
		if (nx == NULL || ny == NULL) {
			free(ox);
			free(oy);
			return -ENOMEM;
		}
		n = roce_chart_reduce(se->x, se->y, se->n, fr->xt.lo, fr->xt.hi, cols, ox, oy);
		fprintf(f, "<g clip-path=\"url(#%s-clip)\" class=\"series%s\" data-name=\"", id,
			se->highlight ? " hi" : "");
		report_xml_puts(f, se->name);
		fprintf(f, "\" data-color=\"%s\">", col);
		series_title(f, c, se);
		fputc('\n', f);
		if (edge != NULL) {	/* the first path: the hover script reads its d, the same */
			fprintf(f, "<path fill=\"none\" stroke=\"%s\" class=\"edge\"%s d=\"", edge, dash);
			path_data(f, c, fr, ox, oy, n);
			fputs("\"/>\n", f);
		}
		fprintf(f, "<path fill=\"none\" stroke=\"%s\"%s d=\"", col, dash);
		path_data(f, c, fr, ox, oy, n);
		fputs("\"/>\n", f);
		/* points with no neighbour draw no line: mark them */
		for (size_t i = 0; i < n; i++) {
			bool prev = i > 0 && !isnan(oy[i - 1]), next = i + 1 < n && !isnan(oy[i + 1]);

			if (isnan(oy[i]) || prev || next)
				continue;
			fputs("<circle cx=\"", f);
			put_num(f, px(fr, ox[i]));
			fputs("\" cy=\"", f);
			put_num(f, py(fr, oy[i]));
			fprintf(f, "\" r=\"3\" fill=\"%s\"/>\n", col);
		}
		fputs("</g>\n", f);
	}
	free(ox);
	free(oy);
	return 0;
}

/*
 * A bar's value as printed on it: plain from 0.01 to 1000 ("0.52" on an axis in us, where
 * "520m" would read as milli-microseconds), with an SI prefix beyond ("12.5k", "3.2G").
 */
static char *bar_value(double v, char *out, size_t size)
{
	double a = fabs(v);

	if (a == 0 || (a >= 0.01 && a < 1000))
		snprintf(out, size, "%.3g", v);
	else
		roce_si(v, out, size);
	return out;
}

/*
 * The missing-bar label where a bar would stand on the baseline @p y0, @p w wide: across the
 * slot when it fits, else up it.
 */
static void missing_bar(FILE *f, const struct roce_chart *c, double x, double y0, double w)
{
	char buf[4 * LEGEND_MAX + 4];
	const char *label = clip(c->missing, 24, buf, sizeof(buf));

	if (text_w(label) * 11 / CHART_FONT <= w + 4) {
		text_at(f, x, y0 - 6, "text-anchor=\"middle\" class=\"missing\"", label);
		return;
	}
	fputs("<text transform=\"translate(", f);
	put_num(f, x + 4);
	fputc(',', f);
	put_num(f, y0 - 6);
	fputs(") rotate(-90)\" class=\"missing\">", f);
	report_xml_puts(f, label);
	fputs("</text>\n", f);
}

static void bars(FILE *f, const struct roce_chart *c, const struct frame *fr)
{
	double gw = (fr->r - fr->l) / (double)fr->ncats, gap;
	double bw = bar_width(c, fr->ncats, fr->r - fr->l, &gap);
	double area = bw * (double)c->nseries;
	double y0 = py(fr, ROCE_MAX(fr->yt.lo, ROCE_MIN(0, fr->yt.hi)));
	char cat[32], val[32];
	bool dashed;

	for (size_t i = 0; i < fr->ncats; i++) {
		const char *name = i < c->ncats ? c->cats[i] : NULL;
		double gx = fr->l + gw * (double)i;
		bool any = false;

		if (name == NULL) {
			snprintf(cat, sizeof(cat), "%zu", i + 1);
			name = cat;
		}
		for (size_t s = 0; s < c->nseries; s++)
			any |= i < c->series[s].n && isfinite(c->series[s].y[i]);
		for (size_t s = 0; s < c->nseries; s++) {
			const struct chart_series *se = &c->series[s];
			double v, x, y, top, h;

			x = gx + (gw - area) / 2 + bw * (double)s + gap / 2;
			if (i >= se->n || !isfinite(se->y[i])) {
				if (any && c->missing != NULL && c->missing[0])
					missing_bar(f, c, x + (bw - gap) / 2, y0, bw - gap);
				continue;
			}
			v = se->y[i];
			y = py(fr, v);
			y = ROCE_MAX(fr->t, ROCE_MIN(fr->b, y));
			top = ROCE_MIN(y, y0);
			h = fabs(y - y0);
			fputs("<rect x=\"", f);
			put_num(f, x);
			fputs("\" y=\"", f);
			put_num(f, top);
			fputs("\" width=\"", f);
			put_num(f, bw - gap);
			fputs("\" height=\"", f);
			put_num(f, h);
			fprintf(f, "\" fill=\"%s\"><title>", report_palette[series_slot(c, s, &dashed)]);
			report_xml_puts(f, se->name);
			fputs(" \xe2\x80\x94 ", f);	/* em dash */
			report_xml_puts(f, name);
			fprintf(f, ": %s (%.6g)</title></rect>\n", bar_value(v, val, sizeof(val)), v);
			if (bw - gap >= BAR_VALUE_W)
				text_at(f, x + (bw - gap) / 2, v >= 0 ? top - 5 : top + h + 14,
					"text-anchor=\"middle\" class=\"value\"", val);
		}
		if (fr->cat_rot != 0) {
			fputs("<text transform=\"translate(", f);
			put_num(f, gx + gw / 2);
			fputs(",", f);
			put_num(f, fr->b + 16);
			fputs(") rotate(-30)\" text-anchor=\"end\" class=\"tick\">", f);
			report_xml_puts(f, name);
			fputs("</text>\n", f);
		} else {
			text_at(f, gx + gw / 2, fr->b + 20, "text-anchor=\"middle\" class=\"tick\"", name);
		}
	}
}

#define MARK_ROWS 3		/* label rows that marks close together take in turn */

/*
 * Whether a line/step series passes through the box [x0, x1] x [y0, y1] (pixels): each
 * segment counts as its bounding box, which holds a step's corner and a line's slope.
 */
static bool data_in_box(const struct roce_chart *c, const struct frame *fr, double x0, double x1,
			double y0, double y1)
{
	for (size_t s = 0; s < c->nseries; s++) {
		const struct chart_series *se = &c->series[s];
		double ax = NAN, ay = NAN;

		for (size_t i = 0; i < se->n; i++) {
			double bx = px(fr, se->x[i]), by;

			by = ROCE_MAX(fr->t, ROCE_MIN(fr->b, py(fr, se->y[i])));	/* clipped */
			if (!isfinite(bx) || !isfinite(by)) {
				ax = ay = NAN;
				continue;
			}
			if (isnan(ax)) {
				ax = bx;
				ay = by;
			}
			if (ROCE_MAX(ax, bx) >= x0 && ROCE_MIN(ax, bx) <= x1 &&
			    ROCE_MAX(ay, by) >= y0 && ROCE_MIN(ay, by) <= y1)
				return true;
			ax = bx;
			ay = by;
		}
	}
	return false;
}

/*
 * The chart's marks: dashed lines, each label in a row at the top of the plot or, where the
 * data runs along the top there (a queue that fills after a link slows), at its bottom; right
 * of its line or else left of it. It takes the first place, top before bottom, where it crosses
 * neither the data nor the label before it in that row. When there is none, the top row that
 * clears the labels, right of the line unless that runs past the plot's right edge.
 */
static void marks(FILE *f, const struct roce_chart *c, const struct frame *fr)
{
	double end[2][MARK_ROWS];	/* [top, bottom][row]: right end of the last label there */

	for (int i = 0; i < MARK_ROWS; i++)
		end[0][i] = end[1][i] = -INFINITY;
	for (size_t i = 0; i < c->nmarks; i++) {
		const struct chart_mark *m = &c->marks[i];
		char buf[4 * LEGEND_MAX + 4];
		const char *label = clip(m->label, LEGEND_MAX, buf, sizeof(buf));
		double x, w = text_w(label) * 0.85, lx = 0, ly = 0;
		bool left = false;
		int row = -1, side = 0;

		if (!isfinite(m->x) || m->x < fr->xt.lo || m->x > fr->xt.hi)
			continue;
		x = px(fr, m->x);
		fputs("<g class=\"mark\">", f);
		if (label[0]) {
			fputs("<title>", f);
			report_xml_puts(f, m->label);
			fputs("</title>", f);
		}
		fputs("<line x1=\"", f);
		put_num(f, x);
		fputs("\" x2=\"", f);
		put_num(f, x);
		fputs("\" y1=\"", f);
		put_num(f, fr->t);
		fputs("\" y2=\"", f);
		put_num(f, fr->b);
		fputs("\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>\n", f);
		if (label[0]) {
			for (int r = 0; r < MARK_ROWS && row < 0; r++)
				for (int sd = 0; sd < 2 && row < 0; sd++)
					for (int lf = 0; lf < 2 && row < 0; lf++) {
						/* baseline; the glyphs reach 11 px above it, 3 below */
						double y = sd == 0 ? fr->t + 14 + 15 * r :
							   fr->b - 6 - 15 * r;

						lx = lf ? x - 4 - w : x + 4;
						if (lx < fr->l || lx + w > fr->r || lx < end[sd][r] + 6 ||
						    data_in_box(c, fr, lx - 2, lx + w + 2, y - 12, y + 4))
							continue;
						row = r;
						side = sd;
						left = lf;
						ly = y;
					}
			if (row < 0) {	/* data everywhere: clear the labels at least */
				left = x + 4 + w > fr->r;
				lx = left ? x - 4 - w : x + 4;
				row = 0;
				while (row < MARK_ROWS - 1 && lx < end[0][row] + 6)
					row++;
				ly = fr->t + 14 + 15 * row;
			}
			end[side][row] = lx + w;
			text_at(f, left ? x - 4 : x + 4, ly,
				left ? "text-anchor=\"end\" class=\"marklabel\"" :
				"class=\"marklabel\"", label);
		}
		fputs("</g>\n", f);
	}
}

/*
 * The series of a line/step chart in a group that tells the page's hover script how to map
 * pixels back to values: data-x "x0 x1 left right", data-y "y0 y1 bottom top".
 */
static int plot(FILE *f, const struct roce_chart *c, const struct frame *fr, const char *id)
{
	int ret;

	fprintf(f, "<g class=\"plot\" data-kind=\"%s\" data-x=\"%.9g %.9g ",
		c->kind == ROCE_CHART_STEP ? "step" : "line", fr->xt.lo, fr->xt.hi);
	put_num(f, fr->l);
	fputc(' ', f);
	put_num(f, fr->r);
	fprintf(f, "\" data-y=\"%.9g %.9g ", fr->yt.lo, fr->yt.hi);
	put_num(f, fr->b);
	fputc(' ', f);
	put_num(f, fr->t);
	fputs("\" data-xlabel=\"", f);
	report_xml_puts(f, c->xlabel);
	fprintf(f, "\"%s%s>\n", c->xlog ? " data-xlog=\"1\"" : "",
		c->ylog ? " data-ylog=\"1\"" : "");
	ret = lines(f, c, fr, id);
	fputs("</g>\n", f);
	return ret;
}

int report_chart_svg(const struct roce_chart *c, FILE *f, const char *id, bool standalone)
{
	struct frame fr;
	int ret = 0;

	layout(c, &fr);
	if (standalone)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ", f);
	put_num(f, fr.w);
	fputc(' ', f);
	put_num(f, fr.h);
	fputc('"', f);
	if (standalone) {
		fputs(" width=\"", f);
		put_num(f, fr.w);
		fputs("\" height=\"", f);
		put_num(f, fr.h);
		fputc('"', f);
	}
	fprintf(f, " class=\"chart\" role=\"img\" aria-labelledby=\"%s-title\""
		" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif\""
		" font-size=\"%g\">\n", id, CHART_FONT);
	fprintf(f, "<title id=\"%s-title\">", id);
	report_xml_puts(f, c->title);
	fputs("</title>\n", f);
	if (standalone && report_chart_caption(c) != NULL) {	/* a page sets it under the picture */
		fputs("<desc>", f);
		report_xml_puts(f, c->caption);
		fputs("</desc>\n", f);
	}
	/* classes are scoped to this picture so several can share a page */
	fprintf(f, "<style>"
		"#%s .grid{stroke:#e4e4e4;stroke-width:1}"
		"#%s .zero{stroke:#888;stroke-width:1}"
		"#%s .axis{stroke:#444;stroke-width:1}"
		"#%s .tick{fill:#444}"
		"#%s .label{fill:#222;font-size:14px}"
		"#%s .value{fill:#222;font-size:12px}"
		"#%s .series path{stroke-width:2;stroke-linejoin:round;stroke-linecap:round}"
		"#%s .series path.edge{stroke-width:4}"
		"#%s .series.hi path{stroke-width:3.5}"
		"#%s .series.hi path.edge{stroke-width:5.5}"
		"#%s .nodata{fill:#777;font-size:16px;font-style:italic}"
		"#%s .missing{fill:#555;font-size:11px;font-style:italic}"
		"#%s .marklabel{fill:#333;font-size:11px;paint-order:stroke;stroke:#fff;"
		"stroke-width:3px}"
		"</style>\n", id, id, id, id, id, id, id, id, id, id, id, id, id);
	fprintf(f, "<g id=\"%s\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", id);
	if (c->title[0]) {
		char buf[4 * TITLE_MAX + 4];

		text_at(f, 16, 28, "font-size=\"18\" font-weight=\"600\" fill=\"#111\"",
			clip(c->title, TITLE_MAX, buf, sizeof(buf)));
	}
	if (!fr.data) {
		fputs("<rect x=\"", f);
		put_num(f, fr.l);
		fputs("\" y=\"", f);
		put_num(f, fr.t);
		fputs("\" width=\"", f);
		put_num(f, fr.r - fr.l);
		fputs("\" height=\"", f);
		put_num(f, fr.b - fr.t);
		fputs("\" fill=\"#fafafa\" stroke=\"#ddd\"/>\n", f);
		text_at(f, (fr.l + fr.r) / 2, (fr.t + fr.b) / 2, "text-anchor=\"middle\" class=\"nodata\"",
			"no data");
	} else {
		legend(f, c, &fr);
		fprintf(f, "<clipPath id=\"%s-clip\"><rect x=\"", id);
		put_num(f, fr.l);
		fputs("\" y=\"", f);
		put_num(f, fr.t - 2);
		fputs("\" width=\"", f);
		put_num(f, fr.r - fr.l + 2);
		fputs("\" height=\"", f);
		put_num(f, fr.b - fr.t + 4);
		fputs("\"/></clipPath>\n", f);
		axes(f, c, &fr);
		if (c->kind == ROCE_CHART_BAR)
			bars(f, c, &fr);
		else {
			ret = plot(f, c, &fr, id);
			marks(f, c, &fr);
		}
	}
	fputs("</g>\n</svg>\n", f);
	if (ret == 0 && ferror(f))
		ret = -EIO;
	return ret;
}

int roce_chart_write_svg(const struct roce_chart *c, FILE *f)
{
	return report_chart_svg(c, f, "chart", true);
}
