/* Congestion control: the algorithm table, parameters by key=value, binding to QPs, rate limiter glue. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tr_private.h"

/* Every algorithm; "none" is the absence of one. */
static const struct tr_cc_ops *const cc_algos[] = {
	&tr_dcqcn_ops,
};

static const char *const cc_names[] = { "none", "dcqcn", NULL };
ROCE_STATIC_ASSERT(ROCE_DIM(cc_names) == ROCE_DIM(cc_algos) + 2);

const char *const *roce_cc_names(void)
{
	return cc_names;
}

static const struct tr_cc_ops *cc_find(const char *name)
{
	for (size_t i = 0; i < ROCE_DIM(cc_algos); i++)
		if (strcmp(cc_algos[i]->name, name) == 0)
			return cc_algos[i];
	return NULL;
}

static int cc_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int cc_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Apply one "key=value" to @p conf. */
static int cc_set_kv(struct tr_cc_conf *conf, const char *kv, char *err, size_t errlen)
{
	const struct tr_cc_ops *ops = conf->ops;
	const char *eq = strchr(kv, '=');
	size_t klen;
	char *end;
	double v;

	if (eq == NULL)
		return cc_err(err, errlen, "%s: '%s' is not key=value", ops->name, kv);
	klen = (size_t)(eq - kv);
	for (int i = 0; i < ops->nparams; i++) {
		const struct tr_cc_param *p = &ops->params[i];

		if (strlen(p->name) != klen || strncmp(p->name, kv, klen) != 0)
			continue;
		errno = 0;
		v = strtod(eq + 1, &end);
		if (eq[1] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < p->min ||
		    v > p->max)
			return cc_err(err, errlen, "%s: %s: expected a number in [%g, %g] (%s)",
				      ops->name, kv, p->min, p->max, p->unit);
		conf->p[i] = v;
		return 0;
	}
	return cc_err(err, errlen, "%s: unknown parameter '%.*s'", ops->name, (int)klen, kv);
}

int roce_cc_check(const char *algo, const char *const *kv, int nkv, char *err, size_t errlen)
{
	const struct tr_cc_ops *ops;
	struct tr_cc_conf *conf;
	int rc = 0;

	if (algo == NULL || strcmp(algo, "none") == 0)
		return nkv > 0 ? cc_err(err, errlen, "none: takes no parameters ('%s')", kv[0]) : 0;
	ops = cc_find(algo);
	if (ops == NULL)
		return cc_err(err, errlen, "unknown congestion control '%s' (none, dcqcn)", algo);
	conf = calloc(1, sizeof(*conf) + (size_t)ops->nparams * sizeof(conf->p[0]));
	if (conf == NULL)
		return -ENOMEM;
	conf->ops = ops;
	for (int i = 0; i < nkv && rc == 0; i++)
		rc = cc_set_kv(conf, kv[i], err, errlen);
	free(conf);
	return rc;
}

int roce_device_set_cc(struct roce_device *dev, const char *algo, const char *const *kv, int nkv,
		       char *err, size_t errlen)
{
	struct tr_nic *nic = tr_nic(dev);
	const struct tr_cc_ops *ops;
	struct tr_cc_conf *conf;
	int rc;

	if (algo == NULL || strcmp(algo, "none") == 0) {
		if (nkv > 0)
			return cc_err(err, errlen, "none: takes no parameters ('%s')", kv[0]);
		nic->cc = NULL;
		tr_nic_hdr_changed(dev);	/* ECN marking may go with it */
		return 0;
	}
	ops = cc_find(algo);
	if (ops == NULL)
		return cc_err(err, errlen, "unknown congestion control '%s' (none, dcqcn)", algo);
	conf = calloc(1, sizeof(*conf) + (size_t)ops->nparams * sizeof(conf->p[0]));
	if (conf == NULL)
		return -ENOMEM;
	conf->ops = ops;
	for (int i = 0; i < ops->nparams; i++)
		conf->p[i] = ops->params[i].def;
	for (int i = 0; i < nkv; i++) {
		rc = cc_set_kv(conf, kv[i], err, errlen);
		if (rc != 0) {
			free(conf);
			return rc;
		}
	}
	conf->older = nic->cc_all;
	nic->cc_all = conf;
	nic->cc = conf;
	tr_nic_hdr_changed(dev);	/* ECN marking may come with it */
	return 0;
}

void roce_cc_describe(const char *algo, FILE *f)
{
	const struct tr_cc_ops *ops = algo != NULL ? cc_find(algo) : NULL;

	if (ops == NULL) {
		fprintf(f, "%s: no congestion control (QPs send at line rate)\n",
			algo != NULL ? algo : "none");
		return;
	}
	for (int i = 0; i < ops->nparams; i++) {
		const struct tr_cc_param *p = &ops->params[i];

		fprintf(f, "%-28s %10g %-7s %s\n", p->name, p->def, p->unit, p->help);
	}
}

void tr_cc_free_all(struct tr_nic *nic)
{
	while (nic->cc_all != NULL) {
		struct tr_cc_conf *c = nic->cc_all;

		nic->cc_all = c->older;
		free(c);
	}
	nic->cc = NULL;
}

static void cc_timer_fired(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct tr_qp *qp = arg;

	(void)eng;
	(void)t;
	qp->cc.conf->ops->timer(qp);
}

/* The QP is connecting (INIT -> RTR): it takes the device's algorithm of the moment. */
void tr_cc_connect(struct tr_qp *qp)
{
	tr_cc_stop(qp);
	memset(&qp->cc, 0, sizeof(qp->cc));
	qp->cc.conf = tr_nic(qp->vqp.dev)->cc;
	if (qp->cc.conf == NULL)
		return;
	roce_timer_init(&qp->cc.timer, cc_timer_fired, qp);
	qp->cc.conf->ops->init(qp);
}

/* The QP leaves the connected states or is destroyed: no more timer, no rate limit. */
void tr_cc_stop(struct tr_qp *qp)
{
	if (qp->cc.conf == NULL)
		return;
	roce_timer_cancel(qp->vqp.dev->eng, &qp->cc.timer);
	qp->cc.conf = NULL;
	qp->cc.rate = 0;
}

uint64_t tr_cc_line_rate(const struct tr_qp *qp)
{
	return qp->vqp.dev->port.speed_bps;
}

/*
 * The algorithm changed the QP's rate: a data packet may leave last_bits / rate after the last
 * one. At line rate or above the limiter is off. A faster rate may free the QP earlier than the
 * NIC's wake timer says: let the arbiter look again.
 */
void tr_cc_set_rate(struct tr_qp *qp, uint64_t bps)
{
	uint64_t rate = bps >= tr_cc_line_rate(qp) ? 0 : ROCE_MAX(bps, 1);
	uint64_t old = qp->cc.rate;
	struct tr_nic *nic = tr_nic(qp->vqp.dev);

	if (rate == old)
		return;
	qp->cc.rate = rate;
	qp->cc.tx_allowed_at = rate != 0 ? qp->cc.last_tx + qp->cc.last_bits * ROCE_SEC / rate : 0;
	if ((rate == 0 || (old != 0 && rate > old)) && qp->tx_listed && nic->link != NULL)
		roce_link_kick(nic->link, nic->dir);
}

/* Arm the QP's one congestion timer at @p when (ROCE_TIME_NEVER: disarm). */
void tr_cc_arm(struct tr_qp *qp, roce_time_t when)
{
	if (when == ROCE_TIME_NEVER)
		roce_timer_cancel(qp->vqp.dev->eng, &qp->cc.timer);
	else if (!roce_timer_armed(&qp->cc.timer) || qp->cc.timer.when != when)
		roce_timer_arm(qp->vqp.dev->eng, &qp->cc.timer, when);
}

uint64_t roce_qp_rate(const struct roce_qp *vqp)
{
	const struct tr_qp *qp = to_tqp_const(vqp);

	return qp->cc.conf != NULL ? qp->cc.conf->ops->rate(qp) : tr_cc_line_rate(qp);
}

int roce_qp_cc_state(const struct roce_qp *vqp, const char *name, double *val)
{
	const struct tr_qp *qp = to_tqp_const(vqp);
	const struct tr_cc_ops *ops;

	if (qp->cc.conf == NULL)
		return -ENOENT;
	ops = qp->cc.conf->ops;
	for (int i = 0; ops->state_names[i] != NULL; i++) {
		if (strcmp(ops->state_names[i], name) == 0) {
			*val = ops->state(qp, i);
			return 0;
		}
	}
	return -ENOENT;
}
