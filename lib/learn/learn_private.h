/* lib/learn internals: what every lesson uses to print and draw. */
#ifndef LEARN_PRIVATE_H
#define LEARN_PRIVATE_H

#include "roce_common.h"
#include "roce_learn.h"
#include "roce_report.h"

extern const struct roce_lesson roce_lesson_encap;
extern const struct roce_lesson roce_lesson_verbs;
extern const struct roce_lesson roce_lesson_bdp;
extern const struct roce_lesson roce_lesson_loss;
extern const struct roce_lesson roce_lesson_baseline;
extern const struct roce_lesson roce_lesson_gpudirect;

/** A paragraph: to conf->out (wrapped as given) and to the page. */
void learn_text(const struct roce_learn_conf *conf, struct roce_report *rep, const char *text);

/** A section heading: to conf->out and to the page. */
void learn_heading(const struct roce_learn_conf *conf, struct roce_report *rep, const char *text);

/** A table: printed to conf->out and copied into the page (the caller keeps @p t). */
void learn_table(const struct roce_learn_conf *conf, struct roce_report *rep,
		 const struct roce_table *t);

/** A chart: written to out_dir/@p file as SVG (if out_dir) and given to the page (owned). */
void learn_chart(const struct roce_learn_conf *conf, struct roce_report *rep, struct roce_chart *c,
		 const char *file);

/** Write @p text to out_dir/@p file (if out_dir); a failure is reported on stderr. */
void learn_write_file(const struct roce_learn_conf *conf, const char *file, const char *text);

/** A whole row: @p fmt's output split at tabs into cells. */
void learn_row(struct roce_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int learn_nomem(char *err, size_t errlen);

#endif /* LEARN_PRIVATE_H */
