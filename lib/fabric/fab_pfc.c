/* Priority flow control: XOFF/XON thresholds, 802.1Qbb frames both ways, watchdog, deadlocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fab_private.h"
#include "roce_wire.h"

/* Time @p quanta pause quanta last at @p rate_bps, rounded up. */
static roce_time_t quanta_time(uint32_t quanta, uint64_t rate_bps)
{
	unsigned __int128 ps = (unsigned __int128)quanta * ROCE_PFC_QUANTUM_BITS * ROCE_SEC;

	return (roce_time_t)((ps + rate_bps - 1) / rate_bps);
}

/* The rate pause quanta of port @p p are timed at: the wire's, which a shaping link may hide. */
static uint64_t pause_rate(const struct sw_port *p)
{
	return p->sw->conf.pfc_rate_bps ? p->sw->conf.pfc_rate_bps : roce_link_rate(p->link);
}

/* ---- sending PFC ---- */

static void arm_refresh(struct sw_port *p)
{
	struct roce_switch *sw = p->sw;
	roce_time_t t;

	if (roce_timer_armed(&p->pfc_refresh) || p->link == NULL)
		return;
	/* half the pause we ask for: a refresh delayed behind a max frame still arrives in time */
	t = quanta_time(sw->conf.pfc_quanta, pause_rate(p)) / 2;
	roce_timer_arm(sw->eng, &p->pfc_refresh, roce_engine_now(sw->eng) + (t ? t : 1));
}

void fab_pfc_xoff_test(struct sw_port *p, int prio)
{
	struct roce_switch *sw = p->sw;
	struct sw_ingress *in = &p->in[prio];

	if (!sw->conf.prio[prio].lossless || in->xoff)
		return;
	if (in->hdrm == 0 && (in->shared == 0 || in->shared < fab_threshold(sw)))
		return;
	in->xoff = true;
	p->pfc_xoff |= (uint8_t)(1u << prio);
	p->pfc_xon &= (uint8_t)~(1u << prio);
	fab_trace(sw, p->id, prio, "xoff (%lu B shared, %lu B headroom)",
		  (unsigned long)in->shared, (unsigned long)in->hdrm);
	arm_refresh(p);
	fab_kick(p);
}

static bool should_resume(const struct roce_switch *sw, const struct sw_ingress *in)
{
	return in->hdrm == 0 &&
	       (in->shared == 0 || in->shared + sw->conf.xon_delta <= fab_threshold(sw));
}

void fab_pfc_xon_test(struct sw_port *p, int prio)
{
	struct roce_switch *sw = p->sw;
	struct sw_ingress *in = &p->in[prio];

	if (!in->xoff || !should_resume(sw, in))
		return;
	in->xoff = false;
	p->pfc_xon |= (uint8_t)(1u << prio);
	p->pfc_xoff &= (uint8_t)~(1u << prio);
	fab_trace(sw, p->id, prio, "xon");
	fab_kick(p);
}

/* While a priority stays congested, ask again before the upstream's pause runs out. */
static void on_refresh(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct sw_port *p = arg;
	bool any = false;
	int prio;

	RTE_SET_USED(eng);
	RTE_SET_USED(t);
	for (prio = 0; prio < ROCE_NPRIO; prio++) {
		if (!p->in[prio].xoff)
			continue;
		fab_pfc_check_xon(p, prio);
		if (p->in[prio].xoff) {
			p->pfc_xoff |= (uint8_t)(1u << prio);
			any = true;
		}
	}
	if (any) {
		arm_refresh(p);
		fab_kick(p);
	}
}

/* The PFC frame the port owes: XOFF with conf quanta, XON with 0; NULL if no mbuf (retried). */
struct rte_mbuf *fab_pfc_frame(struct sw_port *p)
{
	struct roce_switch *sw = p->sw;
	struct rte_mbuf *m = roce_engine_mbuf(sw->eng);
	uint64_t mac = 0;
	struct roce_pkt pkt;
	int i;

	if (m == NULL)
		return NULL;
	roce_pkt_init(&pkt, ROCE_KIND_PFC, 0);
	for (i = 0; i < 6; i++)
		mac = mac << 8 | sw->conf.mac[i];
	mac += p->id;
	for (i = 5; i >= 0; i--, mac >>= 8)
		pkt.smac[i] = (uint8_t)mac;
	pkt.pfc_cev = p->pfc_xoff | p->pfc_xon;
	for (i = 0; i < ROCE_NPRIO; i++) {
		if (p->pfc_xoff & (1u << i)) {
			pkt.quanta[i] = sw->conf.pfc_quanta;
			p->st[i].pause_tx++;
		} else if (p->pfc_xon & (1u << i)) {
			p->st[i].resume_tx++;
		}
	}
	p->pfc_xoff = p->pfc_xon = 0;
	if (roce_wire_build_mbuf(&pkt, 0, m) < 0) {
		rte_pktmbuf_free(m);	/* cannot happen: a PFC frame fits any mbuf */
		return NULL;
	}
	return m;
}

/* ---- honouring the peer's PFC ---- */

static void arm_pause_end(struct sw_port *p)
{
	roce_time_t first = ROCE_TIME_NEVER;
	int prio;

	for (prio = 0; prio < ROCE_NPRIO; prio++)
		if (p->q[prio].paused && p->q[prio].paused_until < first)
			first = p->q[prio].paused_until;
	if (first == ROCE_TIME_NEVER)
		roce_timer_cancel(p->sw->eng, &p->pause_end);
	else
		roce_timer_arm(p->sw->eng, &p->pause_end, first);
}

static void pause_stop(struct sw_queue *q, roce_time_t at)
{
	q->port->st[q->prio].paused_time += at - q->pause_start;
	q->paused = false;
	q->port->qpaused &= (uint8_t)~(1u << q->prio);
	fab_wd_update(q);
}

/* Close the pauses that ran out by @p now. */
void fab_pause_settle(struct sw_port *p, roce_time_t now)
{
	/* the paused queues only, lowest priority first as before */
	for (unsigned int bits = p->qpaused; bits; bits &= bits - 1) {
		struct sw_queue *q = &p->q[__builtin_ctz(bits)];

		if (q->paused_until <= now)
			pause_stop(q, q->paused_until);
	}
}

static void on_pause_end(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct sw_port *p = arg;

	RTE_SET_USED(t);
	fab_pause_settle(p, roce_engine_now(eng));
	arm_pause_end(p);
	fab_kick(p);
}

/* IEEE 802.1Qbb 36.1.3: quanta x 512 bit times at the port's rate; 0 resumes at once. */
static void pause_apply(struct sw_port *p, int prio, uint16_t quanta, roce_time_t now)
{
	struct sw_queue *q = &p->q[prio];
	struct roce_switch_qstats *st = &p->st[prio];

	if (quanta == 0) {
		st->resume_rx++;
		if (q->paused) {
			pause_stop(q, now);
			fab_trace(p->sw, p->id, prio, "resumed by peer");
		}
		return;
	}
	st->pause_rx++;
	if (!q->paused) {
		q->paused = true;
		p->qpaused |= (uint8_t)(1u << prio);
		q->pause_start = now;
		fab_trace(p->sw, p->id, prio, "paused by peer (%u quanta)", quanta);
	}
	q->paused_until = now + quanta_time(quanta, pause_rate(p));
	fab_wd_update(q);
}

void fab_pfc_rx(struct sw_port *p, const struct roce_pkt *pkt)
{
	roce_time_t now = roce_engine_now(p->sw->eng);
	int prio;

	if (p->link == NULL)
		return;
	fab_pause_settle(p, now);
	for (prio = 0; prio < ROCE_NPRIO; prio++) {
		if (pkt->kind == ROCE_KIND_PAUSE)
			pause_apply(p, prio, pkt->quanta[0], now);	/* 802.3x: every priority */
		else if (pkt->pfc_cev & (1u << prio))
			pause_apply(p, prio, pkt->quanta[prio], now);
	}
	arm_pause_end(p);
	fab_kick(p);
}

/* ---- the PFC watchdog ---- */

/* fab_wd_update() for a queue that is paused or has its watchdog armed. */
void fab_wd_set(struct sw_queue *q)
{
	struct roce_switch *sw = q->port->sw;
	bool stuck = q->paused && q->len != 0;

	if (sw->conf.watchdog == 0)
		return;
	if (stuck && !roce_timer_armed(&q->wd))
		roce_timer_arm(sw->eng, &q->wd, roce_engine_now(sw->eng) + sw->conf.watchdog);
	else if (!stuck)
		roce_timer_cancel(sw->eng, &q->wd);
	q->watched = roce_timer_armed(&q->wd);
}

/*
 * Paused with frames for conf.watchdog: drop every frame of the queue (as switches' PFC
 * watchdogs do, e.g. SONiC's "drop" action), which frees the ingress buffers upstream of a
 * deadlock; frames that arrive later queue again and get the same treatment.
 */
static void on_watchdog(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct sw_queue *q = arg;
	struct sw_port *p = q->port;
	struct roce_switch *sw = p->sw;
	uint32_t n = 0;

	RTE_SET_USED(t);
	q->watched = false;
	fab_pause_settle(p, roce_engine_now(eng));
	if (!q->paused || q->len == 0)
		return;
	while (q->len) {
		struct rte_mbuf *m = fab_queue_pop(p, q);
		struct sw_meta *meta = sw_meta(m);

		fab_release(sw, m);
		fab_pfc_check_xon(&sw->port[meta->in_port], meta->prio);
		p->st[q->prio].drop_watchdog++;
		rte_pktmbuf_free(m);
		n++;
	}
	q->deficit = 0;
	if (sw->wd_first == 0)
		sw->wd_first = roce_engine_now(eng);
	fab_trace(sw, p->id, q->prio, "watchdog: dropped %u frames", n);
}

void fab_pfc_init(struct sw_port *p)
{
	int prio;

	roce_timer_init(&p->pfc_refresh, on_refresh, p);
	roce_timer_init(&p->pause_end, on_pause_end, p);
	for (prio = 0; prio < ROCE_NPRIO; prio++)
		roce_timer_init(&p->q[prio].wd, on_watchdog, &p->q[prio]);
}

void fab_pfc_fini(struct sw_port *p)
{
	struct roce_engine *eng = p->sw->eng;
	int prio;

	roce_timer_cancel(eng, &p->pfc_refresh);
	roce_timer_cancel(eng, &p->pause_end);
	for (prio = 0; prio < ROCE_NPRIO; prio++) {
		roce_timer_cancel(eng, &p->q[prio].wd);
		p->q[prio].watched = false;
	}
}

/* ---- deadlock detection ---- */

/* A node of the wait-for graph: egress queue (switch, port, priority). */
struct wf_node {
	uint64_t from[ROCE_SWITCH_MAX_PORTS / 64];	/* ingress ports its frames arrived on */
	bool blocked;		/* paused by the peer, with frames */
	uint8_t color;		/* DFS: 0 new, 1 on the stack, 2 done */
};

struct wf_graph {
	struct roce_switch *const *sw;	/* the switches */
	int n;				/* how many */
	uint32_t *base;			/* first node of each switch */
	struct wf_node *node;		/* every (switch, port, priority) */
};

static int sw_index(const struct wf_graph *g, const struct roce_switch *s)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->sw[i] == s)
			return i;
	return -1;
}

static void node_decode(const struct wf_graph *g, uint32_t id, int *si, uint16_t *port, int *prio)
{
	int i = g->n - 1;

	while (g->base[i] > id)
		i--;
	*si = i;
	*port = (uint16_t)((id - g->base[i]) / ROCE_NPRIO);
	*prio = (int)((id - g->base[i]) % ROCE_NPRIO);
}

/* The @p k-th possible successor of @p id, or UINT32_MAX when there are no more (@p k past). */
static uint32_t node_next(const struct wf_graph *g, uint32_t id, uint32_t *k)
{
	const struct sw_port *p;
	uint16_t port, pp;
	int si, prio, yi;

	node_decode(g, id, &si, &port, &prio);
	p = &g->sw[si]->port[port];
	if (p->peer == NULL || (yi = sw_index(g, p->peer)) < 0)
		return UINT32_MAX;
	pp = p->peer_port;
	while (*k < p->peer->conf.nports) {
		uint32_t next = g->base[yi] + *k * ROCE_NPRIO + (uint32_t)prio;
		const struct wf_node *nd = &g->node[next];

		(*k)++;
		if (nd->blocked && (nd->from[pp / 64] & (1ull << (pp % 64))))
			return next;
	}
	return UINT32_MAX;
}

static size_t print_node(const struct wf_graph *g, uint32_t id, char *out, size_t len,
			 size_t size)
{
	uint16_t port;
	int si, prio;

	node_decode(g, id, &si, &port, &prio);
	ROCE_PUT("%s%s p%u prio %d", len ? " -> " : "", g->sw[si]->name, port, prio);
	return len;
}

/* Iterative DFS from @p root; on a back edge, write the cycle. @return 1 found, 0 not */
static int dfs(struct wf_graph *g, uint32_t root, uint32_t *stk, uint32_t *kk, char *out,
	       size_t size)
{
	uint32_t top = 0;

	stk[0] = root;
	kk[0] = 0;
	g->node[root].color = 1;
	for (;;) {
		uint32_t id = stk[top], next = node_next(g, id, &kk[top]);

		if (next == UINT32_MAX) {
			g->node[id].color = 2;
			if (top == 0)
				return 0;
			top--;
			continue;
		}
		if (g->node[next].color == 1) {
			size_t len = 0;
			uint32_t i = top;

			while (stk[i] != next)
				i--;
			for (; i <= top; i++)
				len = print_node(g, stk[i], out, len, size);
			print_node(g, next, out, len, size);
			return 1;
		}
		if (g->node[next].color == 0) {
			g->node[next].color = 1;
			stk[++top] = next;
			kk[top] = 0;
		}
	}
}

int roce_switch_find_deadlock(struct roce_switch *const *sw, int n, char *report, size_t len)
{
	struct wf_graph g = { .sw = sw, .n = n };
	uint32_t total = 0, id, *stk = NULL, *kk = NULL, i;
	int si, found = 0, prio;
	char dummy[1];

	if (report == NULL || len == 0) {
		report = dummy;
		len = sizeof(dummy);
	}
	report[0] = '\0';
	if (sw == NULL || n <= 0)
		return 0;
	g.base = calloc((size_t)n, sizeof(*g.base));
	if (g.base == NULL)
		return 0;
	for (si = 0; si < n; si++) {
		g.base[si] = total;
		total += (uint32_t)sw[si]->conf.nports * ROCE_NPRIO;
	}
	g.node = calloc(total, sizeof(*g.node));
	stk = malloc(total * sizeof(*stk));
	kk = malloc(total * sizeof(*kk));
	if (g.node == NULL || stk == NULL || kk == NULL)
		goto out;
	for (si = 0; si < n; si++) {
		struct roce_switch *s = sw[si];
		uint16_t port;

		for (port = 0; port < s->conf.nports; port++) {
			struct sw_port *p = &s->port[port];

			fab_pause_settle(p, roce_engine_now(s->eng));
			for (prio = 0; prio < ROCE_NPRIO; prio++) {
				struct sw_queue *q = &p->q[prio];
				struct wf_node *nd = &g.node[g.base[si] + port * ROCE_NPRIO + prio];

				nd->blocked = q->paused && q->len != 0;
				for (i = 0; nd->blocked && i < q->len; i++) {
					uint16_t from = sw_meta(q->ring[(q->head + i) &
								  (q->cap - 1)])->in_port;

					nd->from[from / 64] |= 1ull << (from % 64);
				}
			}
		}
	}
	for (id = 0; id < total && !found; id++)
		if (g.node[id].blocked && g.node[id].color == 0)
			found = dfs(&g, id, stk, kk, report, len);
out:
	free(kk);
	free(stk);
	free(g.node);
	free(g.base);
	return found;
}
