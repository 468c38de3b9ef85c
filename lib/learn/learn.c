/* lib/learn: the list of lessons and what they share (printing, the page, the files). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn_private.h"
#include "roce_file.h"

static const struct roce_lesson *const lessons[] = {
	&roce_lesson_encap,
	&roce_lesson_verbs,
	&roce_lesson_bdp,
	&roce_lesson_loss,
	&roce_lesson_gpudirect,
	&roce_lesson_baseline,
};

size_t roce_lessons(const struct roce_lesson *const **list)
{
	*list = lessons;
	return ROCE_DIM(lessons);
}

const struct roce_lesson *roce_lesson_find(const char *name)
{
	for (size_t i = 0; i < ROCE_DIM(lessons); i++)
		if (strcmp(lessons[i]->name, name) == 0)
			return lessons[i];
	return NULL;
}

void learn_row(struct roce_table *t, const char *fmt, ...)
{
	char line[1024], *rest = line, *cell;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	while ((cell = strsep(&rest, "\t")) != NULL)
		roce_table_add(t, "%s", cell);
}

int learn_nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

void learn_text(const struct roce_learn_conf *conf, struct roce_report *rep, const char *text)
{
	if (conf->out != NULL)
		fprintf(conf->out, "%s\n\n", text);
	roce_report_text(rep, text);
}

void learn_heading(const struct roce_learn_conf *conf, struct roce_report *rep, const char *text)
{
	if (conf->out != NULL)
		fprintf(conf->out, "== %s\n\n", text);
	roce_report_heading(rep, text);
}

void learn_table(const struct roce_learn_conf *conf, struct roce_report *rep,
		 const struct roce_table *t)
{
	if (conf->out != NULL) {
		roce_table_print(t, conf->out);
		fputc('\n', conf->out);
	}
	roce_report_table(rep, t);
}

/*
 * The first picture of a lesson that could not be written, "PATH: reason", or "": the lesson
 * goes on, and roce_learn_run() fails with it at the end (one line, not one per picture).
 */
static char pic_err[600];

/* A picture beside the pages: written beside its name, renamed over it (roce_file.h). */
static FILE *open_out(const struct roce_learn_conf *conf, const char *file, struct roce_out *o)
{
	char path[4096], err[512];

	if (conf->out_dir == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", conf->out_dir, file);
	if (roce_out_open(o, path, 0, err, sizeof(err)) != 0) {
		if (pic_err[0] == '\0')
			snprintf(pic_err, sizeof(pic_err), "%s", err);
		return NULL;
	}
	return o->f;
}

static void close_out(struct roce_out *o)
{
	char err[512];

	if (roce_out_commit(o, err, sizeof(err)) != 0 && pic_err[0] == '\0')
		snprintf(pic_err, sizeof(pic_err), "%s", err);
}

void learn_chart(const struct roce_learn_conf *conf, struct roce_report *rep, struct roce_chart *c,
		 const char *file)
{
	struct roce_out o;
	FILE *f;

	if (c != NULL && (f = open_out(conf, file, &o)) != NULL) {
		roce_chart_write_svg(c, f);
		close_out(&o);
	}
	roce_report_chart(rep, c);
}

void learn_write_file(const struct roce_learn_conf *conf, const char *file, const char *text)
{
	struct roce_out o;
	FILE *f = open_out(conf, file, &o);

	if (f != NULL) {
		fputs(text, f);
		close_out(&o);
	}
}

int roce_learn_run(const struct roce_lesson *l, const struct roce_learn_conf *conf, char *err,
		   size_t errlen)
{
	struct roce_report *rep = roce_report_create(l->title);
	char path[4096];
	int rc;

	if (rep == NULL)
		return learn_nomem(err, errlen);
	if (conf->out != NULL)
		fprintf(conf->out, "# %s\n\n", l->title);
	pic_err[0] = '\0';
	rc = l->run(conf, rep, err, errlen);
	if (rc == 0 && pic_err[0] != '\0') {
		snprintf(err, errlen, "cannot write %s", pic_err);
		rc = -EIO;
	}
	if (rc == 0 && conf->out_dir != NULL) {
		snprintf(path, sizeof(path), "%s/%s.html", conf->out_dir, l->name);
		rc = roce_report_write(rep, path);
		if (rc != 0)
			snprintf(err, errlen, "cannot write %s: %s", path, roce_out_strerror(rc));
		else if (conf->out != NULL)
			fprintf(conf->out, "The page, with its pictures: %s\n\n", path);
	}
	roce_report_destroy(rep);
	return rc;
}

/* @p in with &, < and > escaped for XML, into @p out (truncated to @p len). */
static const char *xml_escape(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in != '\0' && o + 6 < len; in++) {
		const char *e = *in == '&' ? "&amp;" : *in == '<' ? "&lt;" : *in == '>' ? "&gt;" : NULL;

		if (e != NULL) {
			memcpy(out + o, e, strlen(e));
			o += strlen(e);
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
	return out;
}

int roce_learn_index(const struct roce_lesson *const *l, size_t n,
		     const struct roce_learn_conf *conf, char *err, size_t errlen)
{
	static const char *const head[] = { "<idea", "<run" };
	static const char *const also[][2] = {
		{ "zero copy: kernel TCP's four copies (two by the CPU) against RDMA's two DMAs", "rocelab demo (step 1)" },
		{ "why RoCE needs a lossless network, in a fabric", "rocelab demo (step 2)" },
		{ "incast, pause storms, the victim flow, PFC against DCQCN", "rocelab demo (step 3)" },
		{ "a link degraded from 100G to 40G, found in the counters", "rocelab demo (step 4)" },
		{ "PFC deadlock", "rocelab run scenarios/pfc-deadlock.ini" },
		{ "drops from a host on the wrong DSCP",
		  "rocelab run scenarios/troubleshoot-dscp.ini" },
		{ "a 100G NIC in a PCIe Gen3 x8 slot pausing its switch port",
		  "rocelab run scenarios/troubleshoot-pcie.ini" },
		{ "ECMP on a 128-host leaf-spine: a permutation that fits the fabric, at unequal "
		  "shares", "rocelab run scenarios/leafspine-128.ini" },
	};
	const int row_h = 56, width = 760;
	struct roce_report *rep = roce_report_create("rocelab learn: RDMA, run and measured");
	struct roce_table *t;
	char path[4096], a[256], b[512], *svg;
	size_t cap = 1024 + n * 1024, len = 0;
	int rc;

	if (rep == NULL || conf->out_dir == NULL) {
		roce_report_destroy(rep);
		return rep == NULL ? learn_nomem(err, errlen) : -EINVAL;
	}
	roce_report_text(rep, "Each lesson measures what it teaches with rocelab's emulator (real "
			 "frames, the real transport, virtual time) and draws it. Click one to open "
			 "its page; `rocelab learn NAME` runs it again.");
	svg = malloc(cap);
	if (svg == NULL) {
		roce_report_destroy(rep);
		return learn_nomem(err, errlen);
	}
#define OUT(...) len += (size_t)snprintf(svg + len, len < cap ? cap - len : 0, __VA_ARGS__)
	OUT("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "font-family=\"sans-serif\" font-size=\"13\">\n", width, (int)n * row_h + 4);
	for (size_t i = 0; i < n; i++) {
		int y = (int)i * row_h + 2;

		OUT("<a href=\"%s.html\"><rect x=\"1\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" "
		    "fill=\"#f4f7fb\" stroke=\"#9ab\"/><text x=\"14\" y=\"%d\" font-weight=\"bold\">"
		    "%zu. %s</text><text x=\"14\" y=\"%d\" fill=\"#345\">%s: %s</text></a>\n",
		    l[i]->name, y, width - 2, row_h - 8, y + 20, i + 1,
		    xml_escape(l[i]->title, a, sizeof(a)), y + 40, l[i]->name,
		    xml_escape(l[i]->summary, b, sizeof(b)));
	}
	OUT("</svg>\n");
#undef OUT
	if (len >= cap) {
		free(svg);
		roce_report_destroy(rep);
		return learn_nomem(err, errlen);
	}
	roce_report_svg(rep, svg);
	free(svg);
	t = roce_table_create("Also taught by running", ROCE_DIM(head), head);
	if (t == NULL) {
		roce_report_destroy(rep);
		return learn_nomem(err, errlen);
	}
	for (size_t i = 0; i < ROCE_DIM(also); i++)
		learn_row(t, "%s\t%s", also[i][0], also[i][1]);
	roce_report_table(rep, t);
	roce_table_destroy(t);
	snprintf(path, sizeof(path), "%s/index.html", conf->out_dir);
	rc = roce_report_write(rep, path);
	if (rc != 0)
		snprintf(err, errlen, "cannot write %s: %s", path, roce_out_strerror(rc));
	else if (conf->out != NULL)
		fprintf(conf->out, "The lessons' index: %s\n", path);
	roce_report_destroy(rep);
	return rc;
}
