/* Reports: headings, text, tables and charts gathered and written as one self-contained HTML page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocelab_config.h"
#include "report_private.h"

enum item_kind {
	ITEM_HEADING,	/* <h2>, ends a row */
	ITEM_TEXT,	/* paragraphs */
	ITEM_TABLE,	/* a copied table */
	ITEM_CHART,	/* an owned chart */
	ITEM_ROW,	/* following charts side by side */
};

struct report_item {
	enum item_kind kind;		/* what this is */
	char *text;			/* heading or paragraph text */
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

void roce_report_row(struct roce_report *r)
{
	push(r, (struct report_item){ .kind = ITEM_ROW });
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
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
	"caption{text-align:left;font-weight:600;padding:0 0 .4rem}\n"
	"th,td{padding:.35rem .9rem;text-align:right;white-space:nowrap}\n"
	"th{border-bottom:2px solid var(--fg);font-weight:600}\n"
	"td{border-bottom:1px solid var(--rule)}\n"
	"tbody tr:nth-child(even){background:var(--band)}\n"
	".l{text-align:left}\n"
	".note{color:var(--muted);font-size:.85rem;margin:.3rem 0}\n"
	"figure{margin:1rem 0 1.5rem}\n"
	"svg.chart{display:block;width:100%;height:auto;max-width:880px}\n"
	".row{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:1.5rem}\n"
	".row figure{margin:0}\n"
	"footer{margin-top:3rem;color:var(--muted);font-size:.8rem}\n"
	"@media print{body{max-width:none;padding:0}h2{break-after:avoid}figure,.table{break-inside:avoid}}\n";

static void paragraphs(FILE *f, const char *text)
{
	const char *p = text;

	while (*p != '\0') {
		const char *end = strstr(p, "\n\n");
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		char *part = strndup(p, len);

		if (part != NULL && part[0] != '\0') {
			fputs("<p>", f);
			report_xml_puts(f, part);
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

		if (row && (it->kind == ITEM_HEADING || it->kind == ITEM_ROW)) {
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
			fputs("</figure>\n", f);
			ret = ret ? ret : err;
			break;
		}
		case ITEM_ROW:
			fputs("<div class=\"row\">\n", f);
			row = true;
			break;
		}
	}
	if (row)
		fputs("</div>\n", f);
	fputs("</main>\n<footer>Generated by rocelab " ROCELAB_VERSION
	      ". Self-contained: charts are inline SVG; hover a bar or a line for its values.</footer>\n"
	      "</body>\n</html>\n", f);
	if (ret == 0 && r->lost)
		ret = -ENOMEM;
	if (ret == 0 && ferror(f))
		ret = -EIO;
	return ret;
}

int roce_report_write(struct roce_report *r, const char *path)
{
	bool std = strcmp(path, "-") == 0;
	FILE *f = std ? stdout : fopen(path, "w");
	int ret;

	if (f == NULL)
		return -errno;
	ret = roce_report_write_stream(r, f);
	if (std) {
		if (fflush(f) != 0 && ret == 0)
			ret = -errno;
	} else if (fclose(f) != 0 && ret == 0) {
		ret = -errno;
	}
	return ret;
}
