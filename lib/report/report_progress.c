/* A one-line progress bar, drawn only on a terminal and at most ten times a second. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "report_private.h"

#define PROGRESS_PERIOD_NS 100000000LL	/* redraw at most every 100 ms */

struct roce_progress {
	FILE *f;		/* the terminal */
	char *label;		/* text before the bar */
	double total;		/* done at 100%; <= 0: unknown */
	double done;		/* latest value */
	bool active;		/* f is a terminal */
	bool drawn;		/* a line is on screen: clear it at the end */
	long long start_ns;	/* when it started */
	long long next_ns;	/* earliest next redraw */
};

/* The coarse clock (a few ns through the vDSO, tick resolution): plenty for 100 ms. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int term_width(FILE *f)
{
	struct winsize ws;

	if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

static void draw(struct roce_progress *p, long long now)
{
	double secs = (double)(now - p->start_ns) / 1e9;
	int width = term_width(p->f);
	char tail[64], num[32];
	int bar;

	if (p->total > 0) {
		double frac = p->done / p->total;

		frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
		if (frac > 0.01 && frac < 1)
			snprintf(tail, sizeof(tail), " %3d%%  %.1f s left", (int)(frac * 100),
				 secs / frac - secs);
		else
			snprintf(tail, sizeof(tail), " %3d%%", (int)(frac * 100));
		bar = width - (int)strlen(p->label) - (int)strlen(tail) - 4;
		bar = bar > 50 ? 50 : bar;
		fprintf(p->f, "\r%s [", p->label);
		if (bar >= 10) {
			int fill = (int)(frac * bar);

			for (int i = 0; i < bar; i++)
				fputc(i < fill ? '=' : i == fill ? '>' : ' ', p->f);
		}
		fprintf(p->f, "]%s\033[K", tail);
	} else {
		fprintf(p->f, "\r%s %s  %.1f s\033[K", p->label, roce_si(p->done, num, sizeof(num)), secs);
	}
	fflush(p->f);
	p->drawn = true;
}

struct roce_progress *roce_progress_start(FILE *f, const char *label, double total)
{
	struct roce_progress *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->label = report_strdup(label);
	if (p->label == NULL) {
		free(p);
		return NULL;
	}
	p->f = f;
	p->total = total;
	p->active = f != NULL && isatty(fileno(f));
	p->start_ns = now_ns();
	p->next_ns = p->start_ns;	/* the first update draws */
	return p;
}

void roce_progress_update(struct roce_progress *p, double done)
{
	long long now;

	if (p == NULL || !p->active)
		return;
	p->done = done;
	now = now_ns();
	if (now < p->next_ns)
		return;
	p->next_ns = now + PROGRESS_PERIOD_NS;
	draw(p, now);
}

void roce_progress_finish(struct roce_progress *p)
{
	if (p == NULL)
		return;
	if (p->drawn) {
		fputs("\r\033[K", p->f);
		fflush(p->f);
	}
	free(p->label);
	free(p);
}
