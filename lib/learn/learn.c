/* lib/learn: the list of lessons and what they share (printing, the page, the files). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn_private.h"

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

static FILE *open_out(const struct roce_learn_conf *conf, const char *file, char *path, size_t size)
{
	FILE *f;

	if (conf->out_dir == NULL)
		return NULL;
	snprintf(path, size, "%s/%s", conf->out_dir, file);
	f = fopen(path, "w");
	if (f == NULL)
		fprintf(stderr, "rocelab learn: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static void close_out(FILE *f, const char *path)
{
	if (fclose(f) != 0)
		fprintf(stderr, "rocelab learn: cannot write %s: %s\n", path, strerror(errno));
}

void learn_chart(const struct roce_learn_conf *conf, struct roce_report *rep, struct roce_chart *c,
		 const char *file)
{
	char path[4096];
	FILE *f;

	if (c != NULL && (f = open_out(conf, file, path, sizeof(path))) != NULL) {
		roce_chart_write_svg(c, f);
		close_out(f, path);
	}
	roce_report_chart(rep, c);
}

void learn_write_file(const struct roce_learn_conf *conf, const char *file, const char *text)
{
	char path[4096];
	FILE *f = open_out(conf, file, path, sizeof(path));

	if (f != NULL) {
		fputs(text, f);
		close_out(f, path);
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
	rc = l->run(conf, rep, err, errlen);
	if (rc == 0 && conf->out_dir != NULL) {
		snprintf(path, sizeof(path), "%s/%s.html", conf->out_dir, l->name);
		rc = roce_report_write(rep, path);
		if (rc != 0)
			snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		else if (conf->out != NULL)
			fprintf(conf->out, "The page, with its pictures: %s\n\n", path);
	}
	roce_report_destroy(rep);
	return rc;
}
