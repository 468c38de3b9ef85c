/* lib/report internals shared by its files; apps never include this. */
#ifndef REPORT_PRIVATE_H
#define REPORT_PRIVATE_H

#include <stdbool.h>
#include <stdio.h>

#include "roce_report.h"

/* Okabe-Ito colours (Okabe & Ito 2008, "Color Universal Design"), most legible on white first. */
extern const char *const report_palette[8];

/** Copy of @p s, or of "" when s is NULL; NULL only when out of memory. */
char *report_strdup(const char *s);

/**
 * Write @p s XML-escaped (& < > " ' as entities); bytes that are not valid UTF-8 and control
 * characters XML 1.0 forbids become U+FFFD, so any input gives a well-formed document.
 */
void report_xml_puts(FILE *f, const char *s);

/** Characters (not bytes) of a UTF-8 string, for column widths and text-width estimates. */
size_t report_utf8_len(const char *s);

/**
 * Draw @p c as an <svg> element; @p id prefixes element ids (unique within an HTML page);
 * @p standalone adds the XML declaration and a fixed pixel size.
 * @return 0, -ENOMEM, -EIO
 */
int report_chart_svg(const struct roce_chart *c, FILE *f, const char *id, bool standalone);

/** The caption of @p c (roce_chart_caption()), or NULL when it has none. */
const char *report_chart_caption(const struct roce_chart *c);

/** Deep copy of a table, or NULL (ENOMEM). */
struct roce_table *report_table_copy(const struct roce_table *t);

/** The table as an HTML <table> (caption, thead, tbody) followed by its notes. */
void report_table_html(const struct roce_table *t, FILE *f);

#endif /* REPORT_PRIVATE_H */
