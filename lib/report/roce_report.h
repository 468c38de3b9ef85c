/* lib/report: terminal tables, SVG charts, self-contained HTML reports and a progress bar. */
#ifndef ROCE_REPORT_H
#define ROCE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- tables (report_table.c): built once, printed aligned on a terminal, added to reports ---- */

struct roce_table;

/**
 * Create an empty table.
 * @param title    printed above the table and used as the HTML caption; copied; may be NULL
 * @param ncols    number of columns, >= 1
 * @param headers  @p ncols column names, copied; a name starting with '<' makes a left-aligned
 *                 column (the '<' is not shown), other columns are right-aligned (numbers);
 *                 NULL gives empty headers
 * @return a table, or NULL with errno set (EINVAL: ncols < 1; ENOMEM)
 */
struct roce_table *roce_table_create(const char *title, int ncols, const char *const *headers);

/**
 * Append the next cell, row-major: after @p ncols cells a new row starts. A short last row is
 * printed with empty cells.
 * @return 0, -ENOMEM (the cell is lost; later output shows it empty)
 */
int roce_table_add(struct roce_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Add a footnote line printed under the table (copied; nothing happens if out of memory). A
 * note that starts with blanks continues the one before: indented as given on a terminal,
 * set indented under it in HTML.
 */
void roce_table_note(struct roce_table *t, const char *text);

/** Number of complete or started rows so far (headers not counted). */
size_t roce_table_rows(const struct roce_table *t);

/**
 * Print the title, the headers with a rule of dashes under each, then the rows, columns padded
 * to their widest cell (width counted in UTF-8 characters) and separated by two spaces; then
 * the notes. No trailing blanks.
 */
void roce_table_print(const struct roce_table *t, FILE *f);

/**
 * Write headers and rows as RFC 4180 CSV ('\n' line ends): a field holding a comma, a quote, a
 * line break or a leading/trailing blank is quoted, quotes doubled; a cell of "-" (no value) is
 * an empty field. Title and notes are not written.
 * @return 0, -EIO (the stream reported an error)
 */
int roce_table_write_csv(const struct roce_table *t, FILE *f);

/** Free a table; NULL is a no-op. */
void roce_table_destroy(struct roce_table *t);

/* ---- charts (report_chart.c): SVG, sized by viewBox so they scale to their container ---- */

enum roce_chart_kind {
	ROCE_CHART_LINE,	/* points joined by straight lines (throughput, rates) */
	ROCE_CHART_STEP,	/* a value holds until the next point (queue depth, pause state) */
	ROCE_CHART_BAR,		/* grouped bars: one group per category, one bar per series */
};

struct roce_chart;

/**
 * Create an empty chart. Put the unit in the labels ("time (µs)", "goodput (Gb/s)"): tick
 * labels carry SI prefixes of the values the caller passes (k, M, G; m, µ, n).
 * @param title, xlabel, ylabel  copied; may be NULL
 * @return a chart, or NULL with errno set (EINVAL: bad kind; ENOMEM)
 */
struct roce_chart *roce_chart_create(enum roce_chart_kind kind, const char *title,
				     const char *xlabel, const char *ylabel);

/**
 * Add a series; arrays are copied. Line/step: @p n points (x[i], y[i]), x ascending; @p x NULL
 * means x = 0, 1, ..., n-1; a NaN or infinite y (or x) breaks the line. Bar: @p x is ignored
 * (pass NULL) and y[i] is the bar of this series in category i (NaN: no bar). Series are drawn
 * in the Okabe-Ito palette in the order they are added. Long series are reduced when drawn
 * (per pixel column: first, min, max, last), never when stored. roce_chart_highlight() changes
 * the order of colours.
 * @param name  legend and tooltip text, copied; NULL gives "series N"
 * @return 0, -EINVAL (n > 0 and y NULL), -ENOMEM
 */
int roce_chart_series(struct roce_chart *c, const char *name, const double *x, const double *y,
		      size_t n);

/**
 * Name the categories of a bar chart (copied; replaces earlier names). Without names the
 * categories are numbered from 1, as many as the longest series.
 * @return 0, -EINVAL (n > 0 and names NULL), -ENOMEM
 */
int roce_chart_categories(struct roce_chart *c, const char *const *names, size_t n);

/**
 * Fix the y axis to [min, max] instead of the data range widened to nice ticks (which always
 * includes 0). Values outside are clipped. Ignored unless min < max.
 */
void roce_chart_yrange(struct roce_chart *c, double min, double max);

/** Fix the x axis of a line/step chart to [min, max] (default: the data's range). */
void roce_chart_xrange(struct roce_chart *c, double min, double max);

/**
 * A logarithmic x axis for a line/step chart, ticked at whole decades (1, 10, 100, 1k, ...):
 * for values spread over orders of magnitude, as flow completion times of mixed sizes are.
 * Call it before adding series (afterwards, and for bars, it does nothing); x <= 0 has no
 * place on the axis and breaks the line.
 */
void roce_chart_xlog(struct roce_chart *c);

/** A logarithmic y axis, as roce_chart_xlog() for x (latency from 0.5 us to 1 ms, say). */
void roce_chart_ylog(struct roce_chart *c);

/**
 * Text after the legend's last entry, in grey: "+ 120 more flows, not drawn" where a chart
 * shows a selection of the series there are. Copied; replaces an earlier note.
 * @return 0, -ENOMEM
 */
int roce_chart_legend_note(struct roce_chart *c, const char *text);

/**
 * A caption: a sentence or two under the chart saying what it shows and why (which of many
 * flows are drawn, a time axis cut short). In a report it is set under the picture (a span in
 * backquotes as code, as in roce_report_text()); a standalone SVG carries it as its <desc>.
 * Copied; replaces an earlier caption; "" removes it.
 * @return 0, -ENOMEM
 */
int roce_chart_caption(struct roce_chart *c, const char *text);

/**
 * Make series @p i (in the order added) stand out: it keeps a palette colour no other series
 * shares (the others take the colours after the highlighted ones, and repeat only among
 * themselves, dashed), and on a line/step chart it is drawn wider and over the others.
 * @return 0, -EINVAL (no such series)
 */
int roce_chart_highlight(struct roce_chart *c, size_t i);

/**
 * On a bar chart, the text printed where a bar is missing (a NaN) in a category where another
 * series has one: "n/a" where a value does not apply, so the gap does not read as zero. Say
 * why in the legend note. Copied; "" (the default) prints nothing.
 * @return 0, -ENOMEM
 */
int roce_chart_missing_label(struct roce_chart *c, const char *text);

/**
 * Mark a moment on a line/step chart's x axis: a dashed vertical line across the plot, labelled
 * at its top (a scheduled link change, a deadlock found, a watchdog firing). Marks outside the
 * drawn x range are left out; labels of marks close together are staggered. For bars, ignored.
 * @param label  copied; NULL or "" draws the line alone
 * @return 0, -ENOMEM
 */
int roce_chart_mark(struct roce_chart *c, double x, const char *label);

/**
 * Write the chart as a standalone SVG document (XML declaration, xmlns, viewBox). Always
 * writes a picture: a chart without data says "no data". All text is XML-escaped. Same chart,
 * same bytes.
 * @return 0, -EIO (the stream reported an error), -ENOMEM
 */
int roce_chart_write_svg(const struct roce_chart *c, FILE *f);

/** Free a chart; NULL is a no-op. */
void roce_chart_destroy(struct roce_chart *c);

/* ---- axis helpers, exposed for callers that label their own numbers (and for tests) ---- */

#define ROCE_TICKS_MAX 32

/* Tick marks of an axis: multiples of step, step = {1, 2, 5} x 10^k. */
struct roce_ticks {
	double lo, hi;			/* axis range (the input range, or widened to whole steps) */
	double step;			/* distance between ticks */
	int n;				/* ticks in v[] */
	double v[ROCE_TICKS_MAX];	/* tick values, ascending */
	double scale;			/* SI multiplier shared by the labels (1e3 for "k", ...) */
	int decimals;			/* digits after the point in every label */
};

/**
 * Choose "nice" ticks for [lo, hi]: the smallest step {1, 2, 5} x 10^k giving at most
 * @p max_intervals intervals. @p widen: the range is widened to whole steps (0..97 gives
 * 0, 20, .., 100); otherwise ticks fall inside [lo, hi]. lo == hi is widened around the value.
 * Also picks one SI prefix and a number of decimals for all labels of the axis.
 * @param max_intervals  2 .. ROCE_TICKS_MAX - 1 (clamped)
 * @return 0, -EINVAL (lo or hi not finite, or lo > hi)
 */
int roce_ticks(double lo, double hi, int max_intervals, bool widen, struct roce_ticks *t);

/**
 * Label of value @p v on axis @p t: "0", "20", "1.5m", "200k", "3G"; every label of an axis
 * shares the prefix and the number of decimals.
 * @return @p out
 */
char *roce_ticks_label(const struct roce_ticks *t, double v, char *out, size_t size);

/**
 * @p v with three significant digits and an SI prefix, trailing zeros dropped: 0 → "0",
 * 1234 → "1.23k", 0.0031 → "3.1m", 2.5e-6 → "2.5µ" (UTF-8), 4e10 → "40G"; beyond T or
 * below n, "%.3g"; NaN → "nan". Meant for table cells and bar labels.
 * @return @p out
 */
char *roce_si(double v, char *out, size_t size);

/**
 * Reduce a series for drawing in @p columns pixel columns spanning [x0, x1]: of each run of
 * consecutive points falling in one column, keep the first, the minimum, the maximum and the
 * last, in their original order, so spikes survive. A non-finite point breaks the line: it is
 * kept as one NaN point (at most one break per column; the finite points after it in the
 * same column form a second group). At most 9 points per column are written, so
 * @p ox / @p oy need room for min(n, 9 * columns) values.
 * @return the number of points written to @p ox, @p oy
 */
size_t roce_chart_reduce(const double *x, const double *y, size_t n, double x0, double x1,
			 unsigned int columns, double *ox, double *oy);

/* ---- reports (report_html.c): one self-contained HTML page ---- */

struct roce_report;

/**
 * Start a report: a page with no external assets (inline CSS, inline SVG, one small inline
 * script for hover values on line/step charts; no network) that is also well-formed XML. Nothing depends on time or place, so the same calls
 * give the same bytes.
 * @param title  the page title and <h1>; copied
 * @return a report, or NULL with errno set (ENOMEM)
 */
struct roce_report *roce_report_create(const char *title);

/*
 * The adders below cannot fail visibly: if memory runs out the item is dropped and
 * roce_report_write() returns -ENOMEM.
 */

/** Start a section titled @p text (an <h2>; copied). */
void roce_report_heading(struct roce_report *r, const char *text);

/**
 * A paragraph of plain text (copied, escaped; blank lines start new paragraphs). A span in
 * backquotes, `rocelab demo`, is set as code; an unpaired backquote is kept as text.
 */
void roce_report_text(struct roce_report *r, const char *text);

/** A table (deep-copied: the caller keeps and may destroy @p t). */
void roce_report_table(struct roce_report *r, const struct roce_table *t);

/** A chart; the report takes ownership of @p c and destroys it (even on failure). */
void roce_report_chart(struct roce_report *r, struct roce_chart *c);

/**
 * A picture drawn by the caller: one well-formed <svg> element (no XML declaration), copied and
 * written as it is, so the caller escapes its text.
 */
void roce_report_svg(struct roce_report *r, const char *svg);

/**
 * A box with a bold @p title over a bulleted list of @p n items (what stands out in a run, say):
 * copied and escaped, a backquoted span set as code as in roce_report_text(); a line break in an
 * item becomes a space.
 */
void roce_report_list(struct roce_report *r, const char *title, const char *const *items,
		      size_t n);

/**
 * Put the following charts and SVGs side by side (wrapping on narrow screens), until an item of
 * another kind (a heading, text, a table, a list), which goes below the row at full width.
 */
void roce_report_row(struct roce_report *r);

/**
 * Write the page.
 * @param path  file name, "-" for standard output
 * @return 0, -ENOMEM (an item was dropped earlier), or -errno of opening/writing/closing
 */
int roce_report_write(struct roce_report *r, const char *path);

/** Write the page to an open stream. @return 0, -ENOMEM, -EIO */
int roce_report_write_stream(struct roce_report *r, FILE *f);

/** Free the report and the charts it owns; NULL is a no-op. */
void roce_report_destroy(struct roce_report *r);

/* ---- progress (report_progress.c) ---- */

struct roce_progress;

/**
 * Start a progress line on @p f: "label [=====>     ]  42%  1.2 s left". It is drawn only when
 * @p f is a terminal, at most ten times a second; otherwise nothing is ever written.
 * @param total  the value of "done" at 100%; <= 0 when unknown (a counter is shown instead)
 * @return a progress object (never NULL unless out of memory; the other calls accept NULL)
 */
struct roce_progress *roce_progress_start(FILE *f, const char *label, double total);

/** Record progress; cheap enough to call per event (redraws are rate-limited). */
void roce_progress_update(struct roce_progress *p, double done);

/** Clear the line (if one was drawn) and free @p p; NULL is a no-op. */
void roce_progress_finish(struct roce_progress *p);

#endif /* ROCE_REPORT_H */
