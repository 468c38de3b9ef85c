/* DCQCN's reaction point (Zhu et al., SIGCOMM 2015) with ConnectX's parameters and defaults. */
#include <math.h>
#include <string.h>

#include "tr_private.h"

/* Parameters, in the order of dcqcn_params[]. */
enum {
	P_TIME_RESET,		/* T: timer period of rate increases */
	P_BYTE_RESET,		/* B: bytes between rate increases; 0: no byte counter */
	P_THRESHOLD,		/* F: fast recovery steps */
	P_AI_RATE,		/* R_AI */
	P_HAI_RATE,		/* R_HAI */
	P_GD,			/* rate decrease factor: Rc *= 1 - alpha * 2^(10 - gd) */
	P_MIN_DEC_FAC,		/* a decrease keeps at least this % of the rate */
	P_MIN_RATE,		/* floor */
	P_MAX_RATE,		/* ceiling; 0: line rate */
	P_G,			/* alpha gain, in 1/1024 */
	P_ALPHA_PERIOD,		/* alpha update period */
	P_REDUCE_PERIOD,	/* at most one decrease per period */
	P_INITIAL_ALPHA,	/* alpha on the first CNP, in 1/1024 */
	P_CLAMP_TGT,		/* every decrease sets Rt = Rc */
	P_FIRST_CNP_RATE,	/* rate on the first CNP; 0: decrease as usual */
	P_NUM,
};

#define CX "ConnectX-4+ firmware default (mlxconfig)"

/*
 * Defaults: ConnectX firmware (an mlxconfig -q dump of a ConnectX-4 Lx, and NVIDIA's "DCQCN CC
 * Parameters" page), except the byte counter, off as in ns-3 HPCC's DCQCN (run.py --cc dcqcn):
 * ConnectX's 32767 B makes flows neither converge nor share fairly here (docs/transport.md).
 */
static const struct tr_cc_param dcqcn_params[P_NUM] = {
	[P_TIME_RESET] = { "rpg_time_reset", 300, 1, 1e7, "us",
			   "timer T between rate increases; " CX "; ns-3 HPCC DCQCN RP_TIMER 300" },
	[P_BYTE_RESET] = { "rpg_byte_reset", 0, 0, 1e12, "bytes",
			   "byte counter B between rate increases, 0 off (the timer stage alone "
			   "drives increases); ns-3 HPCC (no byte counter); ConnectX 32767 does "
			   "not converge with clamp_tgt_rate 0 (docs/transport.md)" },
	[P_THRESHOLD] = { "rpg_threshold", 1, 1, 1000, "steps",
			  "F, fast recovery steps before additive increase; " CX "; "
			  "ns-3 HPCC FAST_RECOVERY_TIMES 1" },
	[P_AI_RATE] = { "rpg_ai_rate", 5, 0, 1e6, "Mb/s",
			"R_AI, additive increase of the target rate; " CX "; "
			"ns-3 HPCC DCQCN RATE_AI 20 at 100G" },
	[P_HAI_RATE] = { "rpg_hai_rate", 50, 0, 1e6, "Mb/s",
			 "R_HAI, hyper increase step (times the stage); " CX "; "
			 "ns-3 HPCC DCQCN RATE_HAI 200 at 100G" },
	[P_GD] = { "rpg_gd", 11, 1, 20, "log2",
		   "decrease Rc *= 1 - alpha * 2^(10 - gd): 11 gives the paper's alpha/2; " CX },
	[P_MIN_DEC_FAC] = { "rpg_min_dec_fac", 50, 0, 100, "%",
			    "one decrease keeps at least this share of the rate; " CX },
	[P_MIN_RATE] = { "rpg_min_rate", 1, 0.001, 1e6, "Mb/s",
			 "rate floor; " CX "; ns-3 HPCC DCQCN MIN_RATE 1000" },
	[P_MAX_RATE] = { "rpg_max_rate", 0, 0, 1e7, "Mb/s", "rate ceiling, 0 line rate; " CX },
	[P_G] = { "dce_tcp_g", 1019, 0, 1023, "1/1024",
		  "alpha = g*alpha + (1-g)*cnp each period, g = value/1024; " CX "; "
		  "ns-3 HPCC EWMA_GAIN 1/256 (value 1020)" },
	[P_ALPHA_PERIOD] = { "dce_tcp_rtt", 1, 0.001, 1e6, "us",
			     "alpha update period; " CX "; ns-3 HPCC ALPHA_RESUME_INTERVAL 1" },
	[P_REDUCE_PERIOD] = { "rate_reduce_monitor_period", 4, 0, 1e6, "us",
			      "at most one rate decrease per period; " CX "; "
			      "ns-3 HPCC RATE_DECREASE_INTERVAL 4" },
	[P_INITIAL_ALPHA] = { "initial_alpha_value", 1023, 0, 1024, "1/1024",
			      "alpha on a flow's first CNP; " CX },
	[P_CLAMP_TGT] = { "clamp_tgt_rate", 0, 0, 1, "bool",
			  "1: every decrease sets Rt = Rc (the paper); 0: only the first one and "
			  "those after a timer increase; " CX ", ns-3 HPCC CLAMP_TARGET_RATE 0" },
	[P_FIRST_CNP_RATE] = { "rate_to_set_on_first_cnp", 0, 0, 1e7, "Mb/s",
			       "Rc = Rt = this on a flow's first CNP, 0 decrease as usual; " CX },
};

static const char *const dcqcn_state_names[] = {
	"rc", "rt", "alpha", "time_stage", "byte_stage", "active", NULL,
};

/* Per-QP state, in qp->cc.priv. */
struct dcqcn {
	double rc;			/* current rate, b/s */
	double rt;			/* target rate, b/s */
	double alpha;			/* congestion estimate, 0..1 */
	roce_time_t alpha_epoch;	/* start of the current alpha period */
	roce_time_t last_dec;		/* time of the last decrease */
	roce_time_t next_inc;		/* next timer increase; NEVER while idle */
	roce_time_t dec_at;		/* a decrease held back by the reduce period; NEVER: none */
	uint64_t bytes;			/* sent since the last byte-counter event */
	uint32_t t_stage;		/* timer increases since the last decrease */
	uint32_t b_stage;		/* byte-counter increases since the last decrease */
	bool active;			/* below the ceiling: the flow is being controlled */
	bool cnp_in_period;		/* a CNP arrived in the current alpha period */
	bool time_inc;			/* a timer increase happened since the last decrease */
};
ROCE_STATIC_ASSERT(sizeof(struct dcqcn) <= sizeof(((struct tr_qp_cc *)0)->priv));

static inline struct dcqcn *st(struct tr_qp *qp)
{
	return (struct dcqcn *)qp->cc.priv;
}

static inline const double *par(const struct tr_qp *qp)
{
	return qp->cc.conf->p;
}

static double max_rate(const struct tr_qp *qp)
{
	double line = (double)tr_cc_line_rate(qp), cap = par(qp)[P_MAX_RATE] * 1e6;

	return cap > 0 && cap < line ? cap : line;
}

static roce_time_t us(double v)
{
	return (roce_time_t)llround(v * (double)ROCE_US);
}

/*
 * Alpha is updated once per dce_tcp_rtt: up if a CNP arrived in the period, down otherwise
 * (ConnectX). Computed when needed rather than by a timer: the periods ended since the epoch.
 */
static void alpha_catch_up(const double *p, struct dcqcn *s, roce_time_t now)
{
	roce_time_t k = ROCE_MAX(us(p[P_ALPHA_PERIOD]), 1);
	uint64_t n = (now - s->alpha_epoch) / k;
	double g = p[P_G] / 1024;

	if (!s->active || now < s->alpha_epoch || n == 0)
		return;
	s->alpha = g * s->alpha + (s->cnp_in_period ? 1 - g : 0);
	if (n > 1)
		s->alpha *= pow(g, (double)(n - 1));
	s->cnp_in_period = false;
	s->alpha_epoch += n * k;
}

static void rearm(struct tr_qp *qp)
{
	struct dcqcn *s = st(qp);

	tr_cc_arm(qp, ROCE_MIN(s->next_inc, s->dec_at));
}

static void dcqcn_init(struct tr_qp *qp)
{
	struct dcqcn *s = st(qp);

	memset(s, 0, sizeof(*s));
	s->rc = s->rt = max_rate(qp);
	s->next_inc = s->dec_at = ROCE_TIME_NEVER;
	tr_cc_set_rate(qp, (uint64_t)s->rc);
}

/* Paper 3.1 rate decrease: Rt = Rc, Rc = Rc (1 - alpha/2); timer and byte counter restart. */
static void decrease(struct tr_qp *qp, roce_time_t now)
{
	const double *p = par(qp);
	struct dcqcn *s = st(qp);
	bool first = !s->active;
	double floor;

	alpha_catch_up(p, s, now);
	if (first) {
		s->active = true;
		s->alpha = p[P_INITIAL_ALPHA] / 1024;
		s->alpha_epoch = now;
		s->cnp_in_period = false;
		s->rc = s->rt = max_rate(qp);
	}
	if (first && p[P_FIRST_CNP_RATE] > 0) {
		s->rc = s->rt = ROCE_MIN(p[P_FIRST_CNP_RATE] * 1e6, max_rate(qp));
	} else {
		if (first || p[P_CLAMP_TGT] != 0 || s->time_inc)
			s->rt = s->rc;
		floor = s->rc * p[P_MIN_DEC_FAC] / 100;
		s->rc *= 1 - s->alpha * ldexp(1.0, 10 - (int)p[P_GD]);
		s->rc = ROCE_MAX(s->rc, floor);
	}
	s->rc = ROCE_MAX(s->rc, p[P_MIN_RATE] * 1e6);
	s->t_stage = s->b_stage = 0;
	s->bytes = 0;
	s->time_inc = false;
	s->last_dec = now;
	s->dec_at = ROCE_TIME_NEVER;
	s->next_inc = now + us(p[P_TIME_RESET]);
	tr_trace(qp, "DCQCN rate decrease: rc %.3f Gb/s, rt %.3f Gb/s, alpha %.4f", s->rc / 1e9,
		 s->rt / 1e9, s->alpha);
	tr_cc_set_rate(qp, (uint64_t)s->rc);
}

/*
 * Paper 3.1 rate increase, on a timer or byte-counter event (its stage already counted):
 * fast recovery while both stages are at most F, additive increase while one is, hyper
 * increase (i = min stage - F) once both are beyond F. Rates have a 1 Mb/s resolution: Rc
 * within 1 Mb/s of Rt takes Rt, and the flow is idle again once Rc reaches the ceiling.
 */
static void increase(struct tr_qp *qp)
{
	const double *p = par(qp);
	struct dcqcn *s = st(qp);
	uint32_t f = (uint32_t)p[P_THRESHOLD];
	uint32_t hi = ROCE_MAX(s->t_stage, s->b_stage), lo = ROCE_MIN(s->t_stage, s->b_stage);
	double top = max_rate(qp);

	/*
	 * No byte counter: the timer stage alone picks the phase, as in ns-3 HPCC's
	 * RateIncEventMlx: F fast recovery steps, one additive step, then hyper increase.
	 */
	if (p[P_BYTE_RESET] == 0) {
		hi = s->t_stage;
		lo = s->t_stage - 1;
	}

	if (hi > f && lo <= f)
		s->rt += p[P_AI_RATE] * 1e6;
	else if (hi > f)
		s->rt += (double)(lo - f) * p[P_HAI_RATE] * 1e6;
	s->rt = ROCE_MIN(s->rt, top);
	s->rc = (s->rt + s->rc) / 2;
	if (s->rt - s->rc < 1e6)
		s->rc = s->rt;
	if (s->rc >= top) {
		s->rc = s->rt = top;
		s->active = false;
		s->next_inc = ROCE_TIME_NEVER;
		tr_trace(qp, "DCQCN back at %.3f Gb/s", top / 1e9);
	}
	tr_cc_set_rate(qp, (uint64_t)s->rc);
}

static void dcqcn_on_cnp(struct tr_qp *qp)
{
	const double *p = par(qp);
	struct dcqcn *s = st(qp);
	roce_time_t now = roce_engine_now(qp->vqp.dev->eng);

	if (s->active) {
		alpha_catch_up(p, s, now);
		s->cnp_in_period = true;
	}
	if (!s->active || now - s->last_dec >= us(p[P_REDUCE_PERIOD]))
		decrease(qp, now);
	else if (s->dec_at == ROCE_TIME_NEVER)
		s->dec_at = s->last_dec + us(p[P_REDUCE_PERIOD]);
	rearm(qp);
}

static void dcqcn_on_tx(struct tr_qp *qp, uint32_t bytes)
{
	const double *p = par(qp);
	struct dcqcn *s = st(qp);
	uint64_t b = (uint64_t)p[P_BYTE_RESET];

	if (!s->active || b == 0)
		return;
	s->bytes += bytes;
	while (s->active && s->bytes >= b) {
		s->bytes -= b;
		s->b_stage++;
		increase(qp);
	}
	rearm(qp);
}

static void dcqcn_timer(struct tr_qp *qp)
{
	const double *p = par(qp);
	struct dcqcn *s = st(qp);
	roce_time_t now = roce_engine_now(qp->vqp.dev->eng);

	if (s->dec_at <= now) {
		decrease(qp, now);
	} else if (s->next_inc <= now) {
		s->t_stage++;
		s->time_inc = true;
		s->next_inc = now + us(p[P_TIME_RESET]);
		increase(qp);
	}
	rearm(qp);
}

static uint64_t dcqcn_rate(const struct tr_qp *qp)
{
	return (uint64_t)((const struct dcqcn *)qp->cc.priv)->rc;
}

static double dcqcn_state(const struct tr_qp *qp, int i)
{
	struct dcqcn s = *(const struct dcqcn *)qp->cc.priv;

	alpha_catch_up(par(qp), &s, roce_engine_now(qp->vqp.dev->eng));
	switch (i) {
	case 0:
		return s.rc;
	case 1:
		return s.rt;
	case 2:
		return s.alpha;
	case 3:
		return s.t_stage;
	case 4:
		return s.b_stage;
	default:
		return s.active;
	}
}

const struct tr_cc_ops tr_dcqcn_ops = {
	.name = "dcqcn",
	.needs_ecn = true,
	.params = dcqcn_params,
	.nparams = P_NUM,
	.state_names = dcqcn_state_names,
	.init = dcqcn_init,
	.on_cnp = dcqcn_on_cnp,
	.on_tx = dcqcn_on_tx,
	.timer = dcqcn_timer,
	.rate = dcqcn_rate,
	.state = dcqcn_state,
};
