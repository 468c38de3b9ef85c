/* Tables: cells collected row-major, printed aligned on a terminal, as CSV, or as HTML. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "roce_common.h"
#include "report_private.h"

struct roce_table {
	char *title;		/* caption; "" when none */
	int ncols;		/* columns */
	char **headers;		/* ncols names, '<' stripped */
	bool *left;		/* ncols flags: left-aligned (text) column */
	char **cells;		/* ncells texts, row-major; NULL: lost to ENOMEM, shown empty */
	size_t ncells;		/* cells added */
	size_t cap;		/* room in cells[] */
	char **notes;		/* footnotes, in order */
	size_t nnotes;		/* footnotes added */
	size_t notes_cap;	/* room in notes[] */
};

struct roce_table *roce_table_create(const char *title, int ncols, const char *const *headers)
{
	struct roce_table *t;

	if (ncols < 1) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto err;
	t->ncols = ncols;
	t->title = report_strdup(title);
	t->headers = calloc((size_t)ncols, sizeof(*t->headers));
	t->left = calloc((size_t)ncols, sizeof(*t->left));
	if (t->title == NULL || t->headers == NULL || t->left == NULL)
		goto err_free_table;
	for (int i = 0; i < ncols; i++) {
		const char *h = headers != NULL && headers[i] != NULL ? headers[i] : "";

		t->left[i] = h[0] == '<';
		t->headers[i] = report_strdup(h + t->left[i]);
		if (t->headers[i] == NULL)
			goto err_free_table;
	}
	return t;

err_free_table:
	roce_table_destroy(t);
err:
	errno = ENOMEM;
	return NULL;
}

void roce_table_destroy(struct roce_table *t)
{
	if (t == NULL)
		return;
	for (int i = 0; t->headers != NULL && i < t->ncols; i++)
		free(t->headers[i]);
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->headers);
	free(t->left);
	free(t->cells);
	free(t->notes);
	free(t->title);
	free(t);
}

static int grow(void *arrayp, size_t *cap, size_t need)
{
	void **array = arrayp;
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*array, ncap * sizeof(char *));
	if (p == NULL)
		return -ENOMEM;
	*array = p;
	*cap = ncap;
	return 0;
}

int roce_table_add(struct roce_table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (grow(&t->cells, &t->cap, t->ncells + 1) < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	t->cells[t->ncells++] = n < 0 ? NULL : s;
	return n < 0 ? -ENOMEM : 0;
}

void roce_table_note(struct roce_table *t, const char *text)
{
	char *s = report_strdup(text);

	if (s == NULL || grow(&t->notes, &t->notes_cap, t->nnotes + 1) < 0) {
		free(s);
		return;
	}
	t->notes[t->nnotes++] = s;
}

size_t roce_table_rows(const struct roce_table *t)
{
	return (t->ncells + (size_t)t->ncols - 1) / (size_t)t->ncols;
}

static const char *cell(const struct roce_table *t, size_t row, int col)
{
	size_t i = row * (size_t)t->ncols + (size_t)col;

	return i < t->ncells && t->cells[i] != NULL ? t->cells[i] : "";
}

/* One line of @p texts padded to @p width; left columns padded after, others before; no trailing blanks. */
static void print_line(const struct roce_table *t, FILE *f, const char *const *texts,
		       const size_t *width)
{
	size_t len = 0;
	char *line = NULL;
	FILE *m = open_memstream(&line, &len);

	if (m == NULL)
		return;
	for (int c = 0; c < t->ncols; c++) {
		size_t pad = width[c] - report_utf8_len(texts[c]);

		if (c > 0)
			fputs("  ", m);
		if (!t->left[c])
			fprintf(m, "%*s", (int)pad, "");
		fputs(texts[c], m);
		if (t->left[c])
			fprintf(m, "%*s", (int)pad, "");
	}
	if (fclose(m) != 0) {
		free(line);
		return;
	}
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = '\0';
	fprintf(f, "%s\n", line);
	free(line);
}

void roce_table_print(const struct roce_table *t, FILE *f)
{
	size_t rows = roce_table_rows(t);
	size_t *width = calloc((size_t)t->ncols, sizeof(*width));
	const char **texts = calloc((size_t)t->ncols, sizeof(*texts));
	char **rules = calloc((size_t)t->ncols, sizeof(*rules));

	if (width == NULL || texts == NULL || rules == NULL)
		goto out;
	for (int c = 0; c < t->ncols; c++) {
		width[c] = report_utf8_len(t->headers[c]);
		for (size_t r = 0; r < rows; r++)
			width[c] = ROCE_MAX(width[c], report_utf8_len(cell(t, r, c)));
		rules[c] = malloc(width[c] + 1);
		if (rules[c] == NULL)
			goto out;
		memset(rules[c], '-', width[c]);
		rules[c][width[c]] = '\0';
	}
	if (t->title[0] != '\0')
		fprintf(f, "%s\n", t->title);
	print_line(t, f, (const char *const *)t->headers, width);
	print_line(t, f, (const char *const *)rules, width);
	for (size_t r = 0; r < rows; r++) {
		for (int c = 0; c < t->ncols; c++)
			texts[c] = cell(t, r, c);
		print_line(t, f, texts, width);
	}
	for (size_t i = 0; i < t->nnotes; i++)
		fprintf(f, "%s\n", t->notes[i]);
out:
	for (int c = 0; rules != NULL && c < t->ncols; c++)
		free(rules[c]);
	free(rules);
	free(texts);
	free(width);
}

static void csv_field(FILE *f, const char *s)
{
	size_t len = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") != NULL ||
		     (len > 0 && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t'));

	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int roce_table_write_csv(const struct roce_table *t, FILE *f)
{
	size_t rows = roce_table_rows(t);

	for (int c = 0; c < t->ncols; c++) {
		if (c > 0)
			fputc(',', f);
		csv_field(f, t->headers[c]);
	}
	fputc('\n', f);
	for (size_t r = 0; r < rows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const char *v = cell(t, r, c);

			if (c > 0)
				fputc(',', f);
			if (strcmp(v, "-") != 0)	/* "-", no value: an empty field */
				csv_field(f, v);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

struct roce_table *report_table_copy(const struct roce_table *t)
{
	struct roce_table *n = roce_table_create(t->title, t->ncols, NULL);
	char *hdr;

	if (n == NULL)
		return NULL;
	for (int c = 0; c < t->ncols; c++) {
		hdr = report_strdup(t->headers[c]);
		if (hdr == NULL)
			goto err_free_copy;
		free(n->headers[c]);
		n->headers[c] = hdr;
		n->left[c] = t->left[c];
	}
	for (size_t i = 0; i < t->ncells; i++)
		if (roce_table_add(n, "%s", t->cells[i] != NULL ? t->cells[i] : "") < 0)
			goto err_free_copy;
	for (size_t i = 0; i < t->nnotes; i++) {
		roce_table_note(n, t->notes[i]);
		if (n->nnotes != i + 1)
			goto err_free_copy;
	}
	return n;

err_free_copy:
	roce_table_destroy(n);
	errno = ENOMEM;
	return NULL;
}

void report_table_html(const struct roce_table *t, FILE *f)
{
	size_t rows = roce_table_rows(t);

	fputs("<div class=\"table\"><table>\n", f);
	if (t->title[0] != '\0') {
		fputs("<caption>", f);
		report_xml_puts(f, t->title);
		fputs("</caption>\n", f);
	}
	fputs("<thead><tr>", f);
	for (int c = 0; c < t->ncols; c++) {
		fprintf(f, "<th%s>", t->left[c] ? " class=\"l\"" : "");
		report_xml_puts(f, t->headers[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t r = 0; r < rows; r++) {
		fputs("<tr>", f);
		for (int c = 0; c < t->ncols; c++) {
			fprintf(f, "<td%s>", t->left[c] ? " class=\"l\"" : "");
			report_xml_puts(f, cell(t, r, c));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	for (size_t i = 0; i < t->nnotes; i++) {
		const char *s = t->notes[i];

		/* blanks that indent a note on a terminal would collapse: it goes on, indented */
		if (i > 0 && (*s == ' ' || *s == '\t')) {
			s += strspn(s, " \t");
			fputs("<p class=\"note more\">", f);
		} else {
			fputs("<p class=\"note\">", f);
		}
		report_xml_puts(f, s);
		fputs("</p>\n", f);
	}
	fputs("</div>\n", f);
}
