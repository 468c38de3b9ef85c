/* Reports: headings, text, tables and charts gathered and written as one self-contained HTML page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocelab_config.h"
#include "report_private.h"
#include "roce_file.h"

enum item_kind {
	ITEM_HEADING,	/* <h2> */
	ITEM_TEXT,	/* paragraphs */
	ITEM_TABLE,	/* a copied table */
	ITEM_CHART,	/* an owned chart */
	ITEM_ROW,	/* following charts and SVGs side by side, until another kind of item */
	ITEM_SVG,	/* a caller's <svg> element, copied */
	ITEM_LIST,	/* a titled box of items */
};

struct report_item {
	enum item_kind kind;		/* what this is */
	char *text;			/* heading or paragraph text; a list's title */
	char *list;			/* ITEM_LIST: the items, one a line */
	struct roce_table *table;	/* ITEM_TABLE */
	struct roce_chart *chart;	/* ITEM_CHART */
};

struct roce_report {
	char *title;			/* <title> and <h1> */
	struct report_item *items;	/* in page order */
	size_t nitems;			/* items added */
	size_t cap;			/* room in items[] */
	bool lost;			/* an item was dropped for lack of memory */
};

/* ---- text ---- */

/* Length of the valid UTF-8 sequence at @p s (1..4), or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned int c = s[0], need, min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		min = 0x80;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		min = 0x800;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		min = 0x10000;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (unsigned int i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the terminating NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return need + 1;
}

size_t report_utf8_len(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; n++) {
		size_t k = utf8_seq(p);

		p += k ? k : 1;
	}
	return n;
}

void report_xml_puts(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		size_t k = utf8_seq(p);

		if (k == 0 || (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')) {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD: not allowed in XML 1.0 */
			p++;
			continue;
		}
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fwrite(p, 1, k, f); break;
		}
		p += k;
	}
}

/* ---- building ---- */

struct roce_report *roce_report_create(const char *title)
{
	struct roce_report *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->title = report_strdup(title);
	if (r->title == NULL) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void roce_report_destroy(struct roce_report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nitems; i++) {
		free(r->items[i].text);
		free(r->items[i].list);
		roce_table_destroy(r->items[i].table);
		roce_chart_destroy(r->items[i].chart);
	}
	free(r->items);
	free(r->title);
	free(r);
}

/* Append @p it (its pointers now owned by the report); frees them if that fails. */
static void push(struct roce_report *r, struct report_item it)
{
	if (r->nitems == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct report_item *p = realloc(r->items, cap * sizeof(*p));

		if (p == NULL) {
			free(it.text);
			free(it.list);
			roce_table_destroy(it.table);
			roce_chart_destroy(it.chart);
			r->lost = true;
			return;
		}
		r->items = p;
		r->cap = cap;
	}
	r->items[r->nitems++] = it;
}

static void push_text(struct roce_report *r, enum item_kind kind, const char *text)
{
	struct report_item it = { .kind = kind, .text = report_strdup(text) };

	if (it.text == NULL) {
		r->lost = true;
		return;
	}
	push(r, it);
}

void roce_report_heading(struct roce_report *r, const char *text)
{
	push_text(r, ITEM_HEADING, text);
}

void roce_report_text(struct roce_report *r, const char *text)
{
	push_text(r, ITEM_TEXT, text);
}

void roce_report_table(struct roce_report *r, const struct roce_table *t)
{
	struct report_item it = { .kind = ITEM_TABLE, .table = report_table_copy(t) };

	if (it.table == NULL) {
		r->lost = true;
		return;
	}
	push(r, it);
}

void roce_report_chart(struct roce_report *r, struct roce_chart *c)
{
	if (c == NULL) {
		r->lost = true;
		return;
	}
	push(r, (struct report_item){ .kind = ITEM_CHART, .chart = c });
}

void roce_report_svg(struct roce_report *r, const char *svg)
{
	push_text(r, ITEM_SVG, svg);
}

void roce_report_row(struct roce_report *r)
{
	push(r, (struct report_item){ .kind = ITEM_ROW });
}

void roce_report_list(struct roce_report *r, const char *title, const char *const *items,
		      size_t n)
{
	struct report_item it = { .kind = ITEM_LIST, .text = report_strdup(title) };
	size_t len = 1;
	char *p;

	for (size_t i = 0; i < n; i++)
		len += strlen(items[i]) + 1;
	it.list = malloc(len);
	if (it.text == NULL || it.list == NULL) {
		free(it.text);
		free(it.list);
		r->lost = true;
		return;
	}
	p = it.list;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(items[i]);

		memcpy(p, items[i], l);
		for (size_t k = 0; k < l; k++)	/* a line is an item */
			if (p[k] == '\n')
				p[k] = ' ';
		p += l;
		*p++ = '\n';
	}
	*p = '\0';
	push(r, it);
}

/* ---- writing ---- */

/*
 * Projector-friendly: large type, high contrast, light rules, tabular figures in tables. No
 * '<' or '&' in here: the page must stay well-formed XML.
 */
static const char css[] =
	":root{--fg:#1a1a1a;--muted:#5a5a5a;--rule:#d9d9d9;--band:#f5f7fa;--accent:#0072B2}\n"
	"*{box-sizing:border-box}\n"
	"html{font-size:18px}\n"
	"body{margin:0 auto;max-width:1200px;padding:2rem 2.5rem 4rem;color:var(--fg);background:#fff;"
	"font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;"
	"line-height:1.5}\n"
	"h1{font-size:2rem;margin:0 0 .25rem;letter-spacing:-.01em}\n"
	"h2{font-size:1.4rem;margin:2.5rem 0 .75rem;padding-bottom:.3rem;"
	"border-bottom:2px solid var(--accent)}\n"
	"p{margin:.5rem 0 1rem;max-width:60rem}\n"
	".sub{color:var(--muted);margin-top:0}\n"
	".table{margin:1rem 0 1.5rem;overflow-x:auto}\n"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:.9rem}\n"
	"caption{text-align:left;font-weight:600;padding:0 0 .4rem}\n"
	"th,td{padding:.35rem .6rem;text-align:right}\n"
	/* headers wrap before a table scrolls: a wide table still fits a 1280-pixel projector */
	"th{border-bottom:2px solid var(--fg);font-weight:600;vertical-align:bottom}\n"
	"td{border-bottom:1px solid var(--rule);white-space:nowrap}\n"
	"tbody tr:nth-child(even){background:var(--band)}\n"
	".l{text-align:left}\n"
	".note{color:var(--muted);font-size:.85rem;margin:.3rem 0}\n"
	".more{margin:-.2rem 0 .3rem 1.5rem}\n"
	".box{border-left:4px solid var(--accent);background:var(--band);padding:.6rem 1.2rem;"
	"margin:1rem 0 1.5rem;max-width:60rem}\n"
	".box-title{font-weight:600;margin:0}\n"
	".box ul{margin:.3rem 0 0;padding-left:1.2rem}\n"
	"code{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.9em;"
	"background:var(--band);padding:0 .2em;border-radius:3px}\n"
	/* on the box's own band a chip of that colour is invisible and its padding reads as spaces */
	".box code{background:#fff;box-shadow:0 0 0 1px var(--rule)}\n"
	"td.l:last-child{white-space:normal}\n"
	"figure{margin:1rem 0 1.5rem}\n"
	/* a chart alone on its line: not blown up far past the two-a-row size it is drawn for */
	"svg.chart{display:block;width:100%;height:auto;max-width:720px}\n"
	"figcaption{color:var(--muted);font-size:.85rem;margin:.3rem 0 0;max-width:720px}\n"
	".row{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:1.5rem}\n"
	".row figure{margin:0}\n"
	"footer{margin-top:3rem;color:var(--muted);font-size:.8rem}\n"
	"@media print{body{max-width:none;padding:0}h2{break-after:avoid}figure,.table{break-inside:avoid}}\n";

/*
 * Hover values on line/step charts: a cursor and each series' value under the pointer, read back
 * from the drawn path (to the pixel) through the plot's data-x/data-y mapping. Bars need none:
 * their <title> tooltips carry exact values. Wrapped in CDATA: the page stays well-formed XML.
 */
static const char hover_js[] =
	"(function () {\n"
	"\tvar NS = \"http://www.w3.org/2000/svg\";\n"
	"\tfunction si(v) {\n"
	"\t\tif (!isFinite(v)) return String(v);\n"
	"\t\tif (v === 0) return \"0\";\n"
	"\t\tvar p = [\"n\", \"\\u00b5\", \"m\", \"\", \"k\", \"M\", \"G\", \"T\"];\n"
	"\t\tvar e = Math.floor(Math.log10(Math.abs(v)) / 3);\n"
	"\t\tif (e > 4 || e < -3) return v.toPrecision(3);\n"
	"\t\tvar s = (v / Math.pow(10, 3 * e)).toPrecision(3);\n"
	"\t\tif (Math.abs(parseFloat(s)) >= 1000 && e < 4) {\n"
	"\t\t\te++;\n"
	"\t\t\ts = (v / Math.pow(10, 3 * e)).toPrecision(3);\n"
	"\t\t}\n"
	"\t\treturn parseFloat(s) + p[e + 3];\n"
	"\t}\n"
	"\tfunction points(d) {\n"
	"\t\tvar t = d.match(/[MLHV]|-?[0-9.]+/g) || [], pts = [], x = 0, y = 0, i = 0;\n"
	"\t\twhile (i < t.length) {\n"
	"\t\t\tvar c = t[i++];\n"
	"\t\t\tif (c === \"M\" || c === \"L\") {\n"
	"\t\t\t\tx = +t[i++];\n"
	"\t\t\t\ty = +t[i++];\n"
	"\t\t\t\tpts.push({ x: x, y: y, start: c === \"M\" });\n"
	"\t\t\t} else if (c === \"H\") {\n"
	"\t\t\t\tx = +t[i++];\n"
	"\t\t\t\tpts.push({ x: x, y: y, start: false });\n"
	"\t\t\t} else if (c === \"V\") {\n"
	"\t\t\t\ty = +t[i++];\n"
	"\t\t\t\tpts.push({ x: x, y: y, start: false });\n"
	"\t\t\t} else {\n"
	"\t\t\t\ti++;\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t\treturn pts;\n"
	"\t}\n"
	"\t/* the value under pixel column px, or null in a gap or outside the series */\n"
	"\tfunction valueAt(pts, px, step) {\n"
	"\t\tvar lo = 0, hi = pts.length - 1, i = -1;\n"
	"\t\twhile (lo <= hi) {\n"
	"\t\t\tvar mid = (lo + hi) >> 1;\n"
	"\t\t\tif (pts[mid].x <= px) {\n"
	"\t\t\t\ti = mid;\n"
	"\t\t\t\tlo = mid + 1;\n"
	"\t\t\t} else {\n"
	"\t\t\t\thi = mid - 1;\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t\tif (i < 0) return null;\n"
	"\t\tvar a = pts[i], b = pts[i + 1];\n"
	"\t\tif (!b || b.start) return px - a.x <= 1.5 ? a.y : null;\n"
	"\t\tif (step || b.x === a.x) return a.y;\n"
	"\t\treturn a.y + (b.y - a.y) * (px - a.x) / (b.x - a.x);\n"
	"\t}\n"
	"\tfunction el(name, attrs, parent) {\n"
	"\t\tvar e = document.createElementNS(NS, name);\n"
	"\t\tfor (var k in attrs) e.setAttribute(k, attrs[k]);\n"
	"\t\tparent.appendChild(e);\n"
	"\t\treturn e;\n"
	"\t}\n"
	"\tfunction setup(svg, plot) {\n"
	"\t\tvar xs = plot.getAttribute(\"data-x\").split(\" \").map(Number);\n"
	"\t\tvar ys = plot.getAttribute(\"data-y\").split(\" \").map(Number);\n"
	"\t\tvar step = plot.getAttribute(\"data-kind\") === \"step\";\n"
	"\t\tvar xlabel = plot.getAttribute(\"data-xlabel\") || \"x\";\n"
	"\t\tvar xlog = plot.getAttribute(\"data-xlog\") === \"1\";\n"
	"\t\tvar ylog = plot.getAttribute(\"data-ylog\") === \"1\";\n"
	"\t\tvar series = [].slice.call(plot.querySelectorAll(\"g.series\")).map(function (g) {\n"
	"\t\t\tvar path = g.querySelector(\"path\");\n"
	"\t\t\treturn { name: g.getAttribute(\"data-name\"), color: g.getAttribute(\"data-color\"),\n"
	"\t\t\t\t pts: points(path ? path.getAttribute(\"d\") : \"\") };\n"
	"\t\t});\n"
	"\t\tvar hover = el(\"g\", { \"class\": \"hover\", \"pointer-events\": \"none\", visibility: \"hidden\" }, svg);\n"
	"\t\tvar cursor = el(\"line\", { y1: ys[3], y2: ys[2], stroke: \"#555\", \"stroke-dasharray\": \"3 3\" }, hover);\n"
	"\t\tvar box = el(\"rect\", { rx: 4, fill: \"#fff\", \"fill-opacity\": 0.94, stroke: \"#999\" }, hover);\n"
	"\t\tvar lines = [];\n"
	"\t\tfor (var i = 0; i <= series.length; i++)\n"
	"\t\t\tlines.push(el(\"text\", { \"font-size\": 13 }, hover));\n"
	"\t\tvar pt = svg.createSVGPoint();\n"
	"\t\tsvg.addEventListener(\"mousemove\", function (ev) {\n"
	"\t\t\tpt.x = ev.clientX;\n"
	"\t\t\tpt.y = ev.clientY;\n"
	"\t\t\tvar p = pt.matrixTransform(svg.getScreenCTM().inverse());\n"
	"\t\t\tif (p.x < xs[2] || p.x > xs[3] || p.y < ys[3] || p.y > ys[2]) {\n"
	"\t\t\t\thover.setAttribute(\"visibility\", \"hidden\");\n"
	"\t\t\t\treturn;\n"
	"\t\t\t}\n"
	"\t\t\tvar x = xs[0] + (p.x - xs[2]) / (xs[3] - xs[2]) * (xs[1] - xs[0]);\n"
	"\t\t\tcursor.setAttribute(\"x1\", p.x);\n"
	"\t\t\tcursor.setAttribute(\"x2\", p.x);\n"
	"\t\t\tlines[0].textContent = xlabel + \": \" + si(xlog ? Math.pow(10, x) : x);\n"
	"\t\t\tlines[0].setAttribute(\"font-weight\", \"600\");\n"
	"\t\t\tseries.forEach(function (s, k) {\n"
	"\t\t\t\tvar py = valueAt(s.pts, p.x, step);\n"
	"\t\t\t\tvar v = py === null ? null : ys[0] + (ys[2] - py) / (ys[2] - ys[3]) * (ys[1] - ys[0]);\n"
	"\t\t\t\tif (v !== null && ylog) v = Math.pow(10, v);\n"
	"\t\t\t\tlines[k + 1].textContent = \"\\u25a0 \" + s.name + \": \" + (v === null ? \"\\u2014\" : si(v));\n"
	"\t\t\t\tlines[k + 1].setAttribute(\"fill\", s.color);\n"
	"\t\t\t});\n"
	"\t\t\thover.setAttribute(\"visibility\", \"visible\");\n"
	"\t\t\tvar w = 0;\n"
	"\t\t\tlines.forEach(function (t) { w = Math.max(w, t.getComputedTextLength()); });\n"
	"\t\t\tvar h = 18 * lines.length + 8, bx = p.x + 12, by = Math.max(ys[3], p.y - h / 2);\n"
	"\t\t\tif (bx + w + 16 > xs[3]) bx = Math.max(4, p.x - 12 - w - 16);\n"
	"\t\t\tif (by + h > ys[2]) by = ys[2] - h;\n"
	"\t\t\tbox.setAttribute(\"x\", bx);\n"
	"\t\t\tbox.setAttribute(\"y\", by);\n"
	"\t\t\tbox.setAttribute(\"width\", w + 16);\n"
	"\t\t\tbox.setAttribute(\"height\", h);\n"
	"\t\t\tlines.forEach(function (t, k) {\n"
	"\t\t\t\tt.setAttribute(\"x\", bx + 8);\n"
	"\t\t\t\tt.setAttribute(\"y\", by + 20 + 18 * k);\n"
	"\t\t\t});\n"
	"\t\t});\n"
	"\t\tsvg.addEventListener(\"mouseleave\", function () {\n"
	"\t\t\thover.setAttribute(\"visibility\", \"hidden\");\n"
	"\t\t});\n"
	"\t}\n"
	"\t[].forEach.call(document.querySelectorAll(\"svg.chart\"), function (svg) {\n"
	"\t\tvar plot = svg.querySelector(\"g.plot[data-x]\");\n"
	"\t\tif (plot) setup(svg, plot);\n"
	"\t});\n"
	"})();\n";

/* Escaped text in which a `quoted` span (a command, a counter's name) is set as code. */
static void text_puts(FILE *f, char *s)
{
	char *open, *close;

	while ((open = strchr(s, '`')) != NULL && (close = strchr(open + 1, '`')) != NULL) {
		*open = *close = '\0';
		report_xml_puts(f, s);
		fputs("<code>", f);
		report_xml_puts(f, open + 1);
		fputs("</code>", f);
		s = close + 1;
	}
	report_xml_puts(f, s);	/* an unpaired backquote stays as it is */
}

/* text_puts() of a string the caller keeps. */
static void text_puts_const(FILE *f, const char *s)
{
	char *copy = strdup(s);

	if (copy == NULL) {
		report_xml_puts(f, s);
		return;
	}
	text_puts(f, copy);
	free(copy);
}

static void list_html(FILE *f, const char *title, const char *list)
{
	fputs("<div class=\"box\">\n<p class=\"box-title\">", f);
	report_xml_puts(f, title);
	fputs("</p>\n<ul>\n", f);
	for (const char *p = list; *p != '\0';) {
		const char *end = strchr(p, '\n');
		char *item = strndup(p, (size_t)(end - p));

		if (item != NULL) {
			fputs("<li>", f);
			text_puts(f, item);
			fputs("</li>\n", f);
		}
		free(item);
		p = end + 1;
	}
	fputs("</ul>\n</div>\n", f);
}

static void paragraphs(FILE *f, const char *text)
{
	const char *p = text;

	while (*p != '\0') {
		const char *end = strstr(p, "\n\n");
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		char *part = strndup(p, len);

		if (part != NULL && part[0] != '\0') {
			fputs("<p>", f);
			text_puts(f, part);
			fputs("</p>\n", f);
		}
		free(part);
		p += len;
		while (*p == '\n')
			p++;
	}
}

int roce_report_write_stream(struct roce_report *r, FILE *f)
{
	bool row = false;
	int nchart = 0, ret = 0;

	fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
	      "<meta name=\"generator\" content=\"rocelab " ROCELAB_VERSION "\"/>\n<title>", f);
	report_xml_puts(f, r->title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
	report_xml_puts(f, r->title);
	fputs("</h1>\n<p class=\"sub\">rocelab " ROCELAB_VERSION " \xc2\xb7 RoCEv2 packet-path emulator</p>\n"
	      "</header>\n<main>\n", f);
	for (size_t i = 0; i < r->nitems; i++) {
		const struct report_item *it = &r->items[i];

		/* a row holds pictures: anything else starts below it, full width */
		if (row && it->kind != ITEM_CHART && it->kind != ITEM_SVG) {
			fputs("</div>\n", f);
			row = false;
		}
		switch (it->kind) {
		case ITEM_HEADING:
			fputs("<h2>", f);
			report_xml_puts(f, it->text);
			fputs("</h2>\n", f);
			break;
		case ITEM_TEXT:
			paragraphs(f, it->text);
			break;
		case ITEM_TABLE:
			report_table_html(it->table, f);
			break;
		case ITEM_CHART: {
			char id[32];
			int err;

			snprintf(id, sizeof(id), "chart%d", ++nchart);
			fputs("<figure>\n", f);
			err = report_chart_svg(it->chart, f, id, false);
			if (report_chart_caption(it->chart) != NULL) {
				fputs("<figcaption>", f);
				text_puts_const(f, report_chart_caption(it->chart));
				fputs("</figcaption>\n", f);
			}
			fputs("</figure>\n", f);
			ret = ret ? ret : err;
			break;
		}
		case ITEM_SVG:
			fprintf(f, "<figure>\n%s</figure>\n", it->text);
			break;
		case ITEM_ROW:
			fputs("<div class=\"row\">\n", f);
			row = true;
			break;
		case ITEM_LIST:
			list_html(f, it->text, it->list);
			break;
		}
	}
	if (row)
		fputs("</div>\n", f);
	fputs("</main>\n<footer>Generated by rocelab " ROCELAB_VERSION
	      ". Self-contained: charts are inline SVG; hover a chart for its values.</footer>\n", f);
	if (nchart > 0)
		fprintf(f, "<script>//<![CDATA[\n%s//]]></script>\n", hover_js);
	fputs("</body>\n</html>\n", f);
	if (ret == 0 && r->lost)
		ret = -ENOMEM;
	if (ret == 0 && ferror(f))
		ret = -EIO;
	return ret;
}

int roce_report_write(struct roce_report *r, const char *path)
{
	char err[512];
	struct roce_out o;
	int ret;

	/* beside PATH, then renamed over it: never over a link or a device (roce_file.h) */
	ret = roce_out_open(&o, path, 0, err, sizeof(err));
	if (ret != 0)
		return ret;
	ret = roce_report_write_stream(r, o.f);
	if (ret != 0) {
		roce_out_discard(&o);
		return ret;
	}
	return roce_out_commit(&o, err, sizeof(err));
}
