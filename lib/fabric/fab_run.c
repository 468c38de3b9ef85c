/*
 * A scenario brought to life: devices on hosts, switches, links, shortest-path routes with ECMP,
 * flows driven by their completions, scheduled link events, and time series sampled on a timer.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fab_private.h"
#include "roce_io.h"

#define FAB_ARENA_BASE 0x6e0000000000ull /* host memory: fixed addresses, byte-identical captures */
#define FAB_ARENA_MAX (1ull << 40)
#define FAB_MAX_LAT 1000000		/* latency samples kept per flow */

struct fab_host {
	struct roce_device *dev;
	struct roce_pd *pd;
};

/* One QP pair of a flow: the requester on the source host, the responder on the destination. */
struct fab_qp {
	struct roce_qp *req, *resp;
	uint32_t outstanding;		/* messages posted, not completed */
	roce_time_t *post_t;		/* FIFO of their post times (RC completes in order) */
	uint32_t head;
};

struct fab_flow {
	struct roce_fabric *fab;
	const struct roce_sc_flow *f;
	int idx;
	struct roce_cq *scq, *rcq;	/* requester's send CQ, responder's receive CQ */
	struct roce_mr *smr, *dmr;
	uint8_t *sbuf, *dbuf;		/* the requester's memory, the responder's */
	bool checked, data_ok;		/* data_ok found (at checked_at): the bytes arrived as sent */
	roce_time_t checked_at;		/* memory changes only while the engine runs */
	struct fab_qp *qp;
	uint64_t posted, completed, bytes, errors;
	roce_time_t first_post, last_done;
	bool started, done;
	struct roce_timer timer;	/* start, then "completions to reap" */
	double *lat;			/* per-message latency, us */
	size_t nlat;
	uint64_t last_rx;		/* data bytes received at the last sample */
	roce_time_t rx_at;		/* the last sample that found more than the one before; 0:
					 * none did (nothing arrived, or sampling is off) */
	uint64_t rate_min;		/* lowest rate limit of its QPs at the samples since its last
					 * completion (or its start), b/s; UINT64_MAX: none sampled */
	double app_sec;			/* time in this flow's application code */
	uint64_t app_calls, app_preempted; /* windows measured, and left out */
};

struct fab_event {
	struct roce_fabric *fab;
	const struct roce_sc_event *e;
	struct roce_timer timer;
};

/* A growable array of doubles. */
struct fab_vec {
	double *v;
	size_t n, cap;
};

struct roce_fabric {
	const struct roce_scenario *sc;
	struct roce_engine *eng;
	struct fab_host *host;
	struct roce_switch **sw;
	struct roce_link **link;
	int (*port)[2];			/* per link end: its switch port, or -1 */
	int *nports;			/* per switch: ports attached so far */
	struct fab_flow *flow;
	struct fab_event *event;
	struct roce_timer sampler;
	struct roce_pcap_writer *pcap;
	char pcap_err[256];		/* why the capture ends early, or "" */
	int pcap_errno;			/* its errno, or 0 */
	FILE *trace;
	const struct roce_run_conf *rc;
	uint8_t *arena;
	size_t arena_used, arena_len;
	int flows_done;
	bool started;
	bool deadlock;			/* one was found: the first is reported */
	char deadlock_msg[256];
	roce_time_t deadlock_at;
	bool deadlock_now;		/* at the last sample */
	uint32_t deadlocks;		/* times one formed: found at a sample after one without */
	roce_time_t deadlock_t[ROCE_FABRIC_DEADLOCKS_KEPT];	/* the first formations */
	/* time series */
	struct fab_vec t;		/* sample times, us */
	struct fab_vec *flow_gbps, *flow_rate; /* per flow */
	struct fab_vec *q_kb, *q_paused, *q_gbps; /* per switch port (all switches, port-major) */
	uint64_t *q_last_tx;		/* per switch port: tx bytes at the last sample */
	char (*q_name)[64];
	int nq;
	uint64_t *q_seen;		/* per queue: max depth sampled, to pick the busy ones */
	uint64_t *q_paused_seen;
	struct fab_vec *h_paused;	/* per host: % of each interval its NIC was paused */
	bool *h_paused_seen;		/* per host: its NIC was ever paused (a series to show) */
	roce_time_t *q_last_paused;	/* per switch port and priority: paused time at the last sample */
	uint64_t *h_last_paused;	/* per host and NIC priority: paused ns at the last sample */
	int cnt_pause_ns[ROCE_NIC_NPRIO]; /* the NIC counters rx_prioN_pause_duration_ns */
	roce_time_t last_sample;
};

static int vec_push(struct fab_vec *v, double x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		double *p = realloc(v->v, cap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

/* ---- host memory ---- */

static void *arena_alloc(struct roce_fabric *fab, size_t len)
{
	size_t off = (fab->arena_used + 4095) & ~(size_t)4095;

	if (off + len > fab->arena_len)
		return NULL;
	fab->arena_used = off + len;
	return fab->arena + off;
}

static int arena_init(struct roce_fabric *fab, size_t len)
{
	void *p;

	fab->arena_len = (len + 4095) & ~(size_t)4095;
	if (fab->arena_len > FAB_ARENA_MAX)
		return -ENOMEM;
	p = mmap((void *)FAB_ARENA_BASE, fab->arena_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != MAP_FAILED && (uintptr_t)p != FAB_ARENA_BASE) {
		munmap(p, fab->arena_len);
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED)	/* taken: any address will do, minus byte-identical captures */
		p = mmap(NULL, fab->arena_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	(void)madvise(p, fab->arena_len, MADV_HUGEPAGE);
	fab->arena = p;
	return 0;
}

/* ---- building ---- */

static int build_hosts(struct roce_fabric *fab, char *err, size_t errlen)
{
	const struct roce_scenario *sc = fab->sc;
	uint8_t lossless = 0;

	/* as a fabric's NICs are set up: lossless where the switches are, if PFC is on */
	for (int s = 0; s < sc->nswitches; s++)
		for (int i = 0; i < ROCE_NPRIO; i++)
			if (sc->sw[s].conf.prio[i].lossless)
				lossless |= (uint8_t)(1u << i);
	lossless &= sc->qos.pfc_enable;
	fab->host = calloc((size_t)sc->nhosts, sizeof(*fab->host));
	if (fab->host == NULL)
		return -ENOMEM;
	for (int h = 0; h < sc->nhosts; h++) {
		const struct roce_sc_host *sh = &sc->host[h];
		struct roce_device_conf dc = { .name = sh->name };
		struct fab_host *fh = &fab->host[h];
		int rc;

		memcpy(dc.mac, sh->mac, 6);
		dc.ip[0] = sh->ip;
		dc.ip_ver[0] = sh->ip_ver;
		dc.max_mtu = ROCE_MTU_4096;
		dc.qpn_base = 0x100;
		dc.host_bps = sh->pcie_bps ? sh->pcie_bps : sc->pcie_bps;
		dc.host_rx_buffer = (uint32_t)(sh->rx_buffer ? sh->rx_buffer : sc->rx_buffer);
		dc.host_pfc = lossless;
		for (int l = 0; l < sc->nlinks; l++)
			if (sc->link[l].a == h || sc->link[l].b == h)
				dc.speed_bps = sc->link[l].conf.rate_bps;
		fh->dev = roce_device_create(fab->eng, &dc);
		if (fh->dev == NULL)
			return -ENOMEM;
		fh->pd = roce_alloc_pd(fh->dev);
		if (fh->pd == NULL)
			return -ENOMEM;
		rc = roce_device_set_qos(fh->dev, &sc->qos);
		if (rc == 0)
			rc = roce_device_set_cc(fh->dev, sc->cc, (const char *const *)sc->cc_kv,
						sc->ncc_kv, err, errlen);
		if (rc != 0)
			return rc;
		if (fab->trace != NULL)
			roce_device_set_trace(fh->dev, fab->trace);
	}
	return 0;
}

static struct roce_link_end node_end(struct roce_fabric *fab, int node, int port)
{
	const struct roce_scenario *sc = fab->sc;

	if (node < sc->nhosts)
		return roce_device_link_end(fab->host[node].dev);
	return roce_switch_port_end(fab->sw[node - sc->nhosts], (uint16_t)port);
}

static int build_fabric(struct roce_fabric *fab, char *err, size_t errlen)
{
	const struct roce_scenario *sc = fab->sc;

	fab->sw = calloc((size_t)sc->nswitches + 1, sizeof(*fab->sw));
	fab->nports = calloc((size_t)sc->nswitches + 1, sizeof(*fab->nports));
	fab->link = calloc((size_t)sc->nlinks, sizeof(*fab->link));
	fab->port = calloc((size_t)sc->nlinks, sizeof(*fab->port));
	if (fab->sw == NULL || fab->nports == NULL || fab->link == NULL || fab->port == NULL)
		return -ENOMEM;
	for (int s = 0; s < sc->nswitches; s++) {
		char why[160];

		if (roce_switch_conf_check(&sc->sw[s].conf, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "switch %s: %s", sc->sw[s].name, why);
			return -EINVAL;
		}
		fab->sw[s] = roce_switch_create(fab->eng, &sc->sw[s].conf);
		if (fab->sw[s] == NULL) {
			snprintf(err, errlen, "switch %s: %s", sc->sw[s].name, strerror(errno));
			return -EINVAL;
		}
		if (fab->trace != NULL)
			roce_switch_set_trace(fab->sw[s], fab->trace);
	}
	for (int l = 0; l < sc->nlinks; l++) {
		const struct roce_sc_link *sl = &sc->link[l];
		int ends[2] = { sl->a, sl->b };
		struct roce_link_end e[2];

		for (int side = 0; side < 2; side++) {
			int n = ends[side];

			fab->port[l][side] = n < sc->nhosts ? -1 : fab->nports[n - sc->nhosts]++;
			e[side] = node_end(fab, n, fab->port[l][side]);
		}
		fab->link[l] = roce_link_create(fab->eng, &sl->conf, &e[0], &e[1]);
		if (fab->link[l] == NULL) {
			snprintf(err, errlen, "link %s: %s", sl->name, strerror(errno));
			return -EINVAL;
		}
		for (int side = 0; side < 2; side++) {
			int n = ends[side], peer = ends[1 - side];
			struct roce_switch *psw = peer < sc->nhosts ? NULL : fab->sw[peer - sc->nhosts];

			if (sl->impair[side].loss > 0 || sl->impair[side].corrupt > 0)
				roce_link_set_impair(fab->link[l], side, &sl->impair[side]);
			if (n < sc->nhosts)
				roce_device_attach(fab->host[n].dev, fab->link[l], side);
			else if (roce_switch_attach(fab->sw[n - sc->nhosts], (uint16_t)fab->port[l][side],
						    fab->link[l], side, psw,
						    (uint16_t)(fab->port[l][1 - side] < 0 ? 0 :
							       fab->port[l][1 - side])) != 0) {
				snprintf(err, errlen, "link %s: the switch refused the port", sl->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/*
 * Shortest-path routes: for every host, a breadth-first search from it gives each switch its
 * distance; a switch forwards to every neighbour one hop closer (an ECMP group). Static routes
 * of the scenario replace the group at their switch.
 */
static int build_routes(struct roce_fabric *fab, char *err, size_t errlen)
{
	const struct roce_scenario *sc = fab->sc;
	int nn = sc->nhosts + sc->nswitches;
	int *dist = malloc((size_t)nn * sizeof(int)), *queue = malloc((size_t)nn * sizeof(int));
	/* adjacency, compressed: node n's links are adj[first[n] .. first[n + 1]) */
	int *first = calloc((size_t)nn + 1, sizeof(int));
	int *adj = malloc((size_t)(2 * sc->nlinks + 1) * sizeof(int));
	int rc = 0;

	if (dist == NULL || queue == NULL || first == NULL || adj == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int l = 0; l < sc->nlinks; l++) {
		first[sc->link[l].a + 1]++;
		first[sc->link[l].b + 1]++;
	}
	for (int n = 0; n < nn; n++)
		first[n + 1] += first[n];
	for (int n = 0, *fill = queue; n < nn; n++)
		fill[n] = first[n];
	for (int l = 0; l < sc->nlinks; l++) {
		adj[queue[sc->link[l].a]++] = l;
		adj[queue[sc->link[l].b]++] = l;
	}
	for (int h = 0; h < sc->nhosts && rc == 0; h++) {
		const struct roce_sc_host *dst = &sc->host[h];
		int qh = 0, qt = 0;
		uint8_t plen = dst->ip_ver == 4 ? 32 : 128;

		for (int i = 0; i < nn; i++)
			dist[i] = -1;
		dist[h] = 0;
		queue[qt++] = h;
		while (qh < qt) {
			int n = queue[qh++];

			for (int k = first[n]; k < first[n + 1]; k++) {
				const struct roce_sc_link *l = &sc->link[adj[k]];
				int m = l->a == n ? l->b : l->a;

				/* hosts do not forward: only the destination itself is a host on a path */
				if (dist[m] >= 0 || m < sc->nhosts)
					continue;
				dist[m] = dist[n] + 1;
				queue[qt++] = m;
			}
		}
		for (int s = 0; s < sc->nswitches && rc == 0; s++) {
			int node = sc->nhosts + s, nroutes = 0, via = -1;

			for (int r = 0; r < sc->nroutes; r++)
				if (sc->route[r].sw == node && sc->route[r].dst == h)
					via = sc->route[r].via;
			if (dist[node] < 0 && via < 0)
				continue;	/* unreachable: frames for it are dropped as no-route */
			for (int k = first[node]; k < first[node + 1] && rc == 0; k++) {
				int l = adj[k], side = sc->link[l].a == node ? 0 : 1;
				int m = side == 0 ? sc->link[l].b : sc->link[l].a;

				if (via >= 0 ? m != via : dist[m] != dist[node] - 1)
					continue;
				rc = roce_switch_add_route(fab->sw[s], dst->ip_ver, &dst->ip, plen,
							   (uint16_t)fab->port[l][side]);
				nroutes++;
			}
			if (rc == 0 && nroutes == 0) {
				snprintf(err, errlen, "switch %s: route to %s via %s: not a neighbour",
					 sc->sw[s].name, dst->name, roce_scenario_node_name(sc, via));
				rc = -EINVAL;
			}
		}
	}
	if (rc != 0 && err[0] == '\0')
		snprintf(err, errlen, "routes: %s", strerror(-rc));
out:
	free(dist);
	free(queue);
	free(first);
	free(adj);
	return rc;
}

/* ---- flows ---- */

static int connect_pair(struct roce_fabric *fab, struct fab_flow *fl, struct roce_qp *qp,
			int me, int peer, struct roce_qp *peer_qp)
{
	const struct roce_scenario *sc = fab->sc;
	const struct roce_sc_host *ph = &sc->host[peer];
	struct roce_qp_attr a = { 0 };
	int rc;

	(void)me;
	a.qp_state = ROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ;
	rc = roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
			    ROCE_QP_ACCESS_FLAGS);
	if (rc != 0)
		return rc;
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = fl->f->mtu ? fl->f->mtu : sc->mtu;
	a.dest_qp_num = roce_qp_num(peer_qp);
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.dip = ph->ip;
	a.ah_attr.ip_ver = ph->ip_ver;
	a.ah_attr.traffic_class = (uint8_t)(fl->f->dscp << 2);
	a.ah_attr.hop_limit = 64;
	memcpy(a.ah_attr.dmac, ph->mac, 6);
	rc = roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN |
			    ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = sc->timeout;
	a.retry_cnt = sc->retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
			      ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC);
}

static void flow_kick(struct roce_cq *cq, void *arg)
{
	struct fab_flow *fl = arg;

	(void)cq;
	if (fl->started && !roce_timer_armed(&fl->timer))
		roce_timer_arm(fl->fab->eng, &fl->timer, roce_engine_now(fl->fab->eng));
}

static int post_recv(struct fab_flow *fl, struct fab_qp *q)
{
	struct roce_sge sge = {
		.addr = (uintptr_t)fl->dbuf,
		.length = (uint32_t)fl->f->size,
		.lkey = roce_mr_lkey(fl->dmr),
	};
	/* its completion names the QP to post the next one on */
	struct roce_recv_wr wr = { .wr_id = (uint64_t)(q - fl->qp), .sg_list = &sge, .num_sge = 1 };

	return roce_post_recv(q->resp, &wr, NULL);
}

static int flow_post(struct fab_flow *fl, struct fab_qp *q)
{
	const struct roce_sc_flow *f = fl->f;
	struct roce_sge sge = {
		.addr = (uintptr_t)fl->sbuf,
		.length = (uint32_t)f->size,
		.lkey = roce_mr_lkey(fl->smr),
	};
	struct roce_send_wr wr = {
		.wr_id = fl->posted,
		.sg_list = &sge,
		.num_sge = 1,
		.send_flags = ROCE_SEND_SIGNALED,
	};
	roce_time_t now = roce_engine_now(fl->fab->eng);
	int rc;

	switch (f->op) {
	case ROCE_FLOW_WRITE:
		wr.opcode = ROCE_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)fl->dbuf;
		wr.wr.rdma.rkey = roce_mr_rkey(fl->dmr);
		break;
	case ROCE_FLOW_READ:
		wr.opcode = ROCE_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)fl->dbuf;
		wr.wr.rdma.rkey = roce_mr_rkey(fl->dmr);
		break;
	case ROCE_FLOW_SEND:
		wr.opcode = ROCE_WR_SEND;
		break;
	}
	rc = roce_post_send(q->req, &wr, NULL);
	if (rc != 0)
		return rc;
	if (fl->posted++ == 0)
		fl->first_post = now;
	q->post_t[(q->head + q->outstanding++) % f->depth] = now;
	return 0;
}

static void flow_finish(struct fab_flow *fl)
{
	struct roce_fabric *fab = fl->fab;

	fl->done = true;
	fab->flows_done++;
	for (int i = 0; i < fab->sc->nflows; i++) {
		struct fab_flow *w = &fab->flow[i];

		if (w->f->after == fl->idx)
			roce_timer_arm(fab->eng, &w->timer, roce_engine_now(fab->eng) + w->f->start);
	}
	if (fab->flows_done == fab->sc->nflows)
		roce_engine_stop(fab->eng);
}

/*
 * The application's own time (reaping completions, posting work) is measured with the TSC:
 * a clock_gettime per call would cost more than what it measures. A window longer than
 * FAB_PREEMPTED was interrupted by the OS (this machine runs other work), not spent by us:
 * it is left out and counted.
 */
#define FAB_PREEMPTED_US 200.0

static void flow_work(struct fab_flow *fl, roce_time_t now, struct roce_wc *wc, int nwc);

/* Does the flow post more messages: below its count, within its duration? */
static bool flow_more(const struct fab_flow *fl, roce_time_t now)
{
	const struct roce_sc_flow *f = fl->f;

	if (f->count != 0 && fl->posted >= f->count)
		return false;
	return f->duration == 0 || fl->posted == 0 || now < fl->first_post + f->duration;
}

/* Start, or reap completions and keep every QP's depth of messages outstanding. */
static void flow_timer(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct fab_flow *fl = arg;
	roce_time_t now = roce_engine_now(eng);
	struct roce_wc wc[32];
	uint64_t t0 = rte_rdtsc();
	double sec;

	(void)t;
	if (fl->done)
		return;
	fl->started = true;
	flow_work(fl, now, wc, ROCE_DIM(wc));
	sec = (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz();
	if (sec * 1e6 < FAB_PREEMPTED_US) {
		fl->app_sec += sec;
		fl->app_calls++;
	} else {
		fl->app_preempted++;
	}
}

/* The application's part: reap completions, post the next messages. */
static void flow_work(struct fab_flow *fl, roce_time_t now, struct roce_wc *wc, int nwc)
{
	const struct roce_sc_flow *f = fl->f;
	int n;

	while ((n = roce_poll_cq(fl->scq, nwc, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			struct fab_qp *q = &fl->qp[wc[i].wr_id % f->nqp];

			if (wc[i].status != ROCE_WC_SUCCESS)
				fl->errors++;
			else
				fl->bytes += f->size;
			if (fl->nlat < FAB_MAX_LAT && q->outstanding > 0)
				fl->lat[fl->nlat++] = (double)(now - q->post_t[q->head]) / ROCE_US;
			if (q->outstanding > 0) {
				q->head = (q->head + 1) % f->depth;
				q->outstanding--;
			}
			fl->completed++;
			fl->last_done = now;
			fl->rate_min = UINT64_MAX;
		}
	}
	if (n < 0)
		fl->errors++;
	if (f->op == ROCE_FLOW_SEND && fl->rcq != NULL) {
		while ((n = roce_poll_cq(fl->rcq, nwc, wc)) > 0)
			for (int i = 0; i < n; i++)
				if (wc[i].status == ROCE_WC_SUCCESS)
					post_recv(fl, &fl->qp[wc[i].wr_id % f->nqp]);
	}
	if (fl->errors != 0 || (!flow_more(fl, now) && fl->completed == fl->posted)) {
		flow_finish(fl);
		return;
	}
	/* message i goes on QP i % nqp, in order: stop at the first QP that is full */
	while (flow_more(fl, now)) {
		struct fab_qp *q = &fl->qp[fl->posted % f->nqp];

		if (q->outstanding >= f->depth)
			break;
		if (flow_post(fl, q) != 0) {
			fl->errors++;
			flow_finish(fl);
			return;
		}
	}
}

/*
 * A flow's source bytes: byte b is (b mod FAB_PATTERN) * 7 + @p seed, which tells flows apart
 * in a capture. The period is prime, so no packet (a multiple of 256 bytes) placed at another
 * packet's offset holds the same bytes: the data check sees it. One period, then doubling
 * copies of what is written (gigabytes of flows took seconds byte by byte).
 */
static void fill_pattern(uint8_t *buf, uint64_t len, uint8_t seed)
{
	uint64_t b;

	for (b = 0; b < len && b < FAB_PATTERN; b++)
		buf[b] = (uint8_t)(b * 7 + seed);
	for (; b < len; b += ROCE_MIN(b, len - b))
		memcpy(buf + b, buf, ROCE_MIN(b, len - b));	/* b is a multiple of the period */
}

static int build_flow(struct roce_fabric *fab, int i)
{
	const struct roce_sc_flow *f = &fab->sc->flow[i];
	struct fab_flow *fl = &fab->flow[i];
	struct fab_host *src = &fab->host[f->src], *dst = &fab->host[f->dst];
	int cqe = (int)(f->nqp * f->depth + 8);
	bool read = f->op == ROCE_FLOW_READ;
	unsigned int zc, discard = fab->sc->discard ? ROCE_ACCESS_DISCARD : 0;

	fl->fab = fab;
	fl->f = f;
	fl->idx = i;
	fl->rate_min = UINT64_MAX;
	roce_timer_init(&fl->timer, flow_timer, fl);
	fl->sbuf = arena_alloc(fab, f->size);
	fl->dbuf = arena_alloc(fab, f->size);
	fl->qp = calloc(f->nqp, sizeof(*fl->qp));
	fl->lat = malloc(sizeof(double) * (f->count != 0 && f->count < FAB_MAX_LAT ? f->count : FAB_MAX_LAT));
	if (fl->sbuf == NULL || fl->dbuf == NULL || fl->qp == NULL || fl->lat == NULL)
		return -ENOMEM;
	/*
	 * The bytes a message carries: the requester's for a WRITE or a SEND, the responder's for
	 * a READ. Registering memory pins it on a real host (ibv_reg_mr faults every page in):
	 * touch the target now, not one page fault per 4 KiB during the run (10 000 on the
	 * leaf-spine). A target that discards its bytes is never touched: it takes no memory.
	 */
	fill_pattern(read ? fl->dbuf : fl->sbuf, f->size, (uint8_t)i);
	if (!discard)
		memset(read ? fl->sbuf : fl->dbuf, 0, f->size);
	/*
	 * Nothing writes a flow's source (the responder's memory for a READ) while the fabric
	 * lives, so its frames carry it by reference, as a NIC's gather DMA reads it, rather than
	 * a copy each (on a virtual clock; a wall clock copies).
	 */
	zc = roce_zc_reachable(roce_mtu_bytes(f->mtu ? f->mtu : fab->sc->mtu), f->size) ?
	     ROCE_ACCESS_ZERO_COPY : 0;
	fl->smr = roce_reg_mr(src->pd, fl->sbuf, f->size, ROCE_ACCESS_LOCAL_WRITE |
			      (read ? discard : zc));
	fl->dmr = roce_reg_mr(dst->pd, fl->dbuf, f->size, ROCE_ACCESS_LOCAL_WRITE |
			      ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
			      (read ? zc : discard));
	fl->scq = roce_create_cq(src->dev, cqe);
	fl->rcq = roce_create_cq(dst->dev, cqe);
	if (fl->smr == NULL || fl->dmr == NULL || fl->scq == NULL || fl->rcq == NULL)
		return -ENOMEM;
	roce_cq_set_notify(fl->scq, flow_kick, fl);
	roce_cq_set_notify(fl->rcq, flow_kick, fl);
	for (uint32_t q = 0; q < f->nqp; q++) {
		struct roce_qp_init_attr init = {
			.send_cq = fl->scq,
			.recv_cq = fl->rcq,
			.qp_type = ROCE_QPT_RC,
			.cap = {
				.max_send_wr = f->depth,
				.max_recv_wr = f->depth,
				.max_send_sge = 1,
				.max_recv_sge = 1,
			},
		};
		struct fab_qp *fq = &fl->qp[q];

		fq->post_t = calloc(f->depth, sizeof(*fq->post_t));
		fq->req = roce_create_qp(src->pd, &init);
		init.send_cq = fl->rcq;	/* the responder sends nothing it completes */
		fq->resp = roce_create_qp(dst->pd, &init);
		if (fq->post_t == NULL || fq->req == NULL || fq->resp == NULL)
			return -ENOMEM;
	}
	for (uint32_t q = 0; q < f->nqp; q++) {
		struct fab_qp *fq = &fl->qp[q];

		if (connect_pair(fab, fl, fq->req, f->src, f->dst, fq->resp) != 0 ||
		    connect_pair(fab, fl, fq->resp, f->dst, f->src, fq->req) != 0)
			return -EINVAL;
		if (f->op == ROCE_FLOW_SEND)
			for (uint32_t d = 0; d < f->depth; d++)
				if (post_recv(fl, fq) != 0)
					return -ENOMEM;
	}
	if (f->after < 0)
		roce_timer_arm(fab->eng, &fl->timer, f->start);
	return 0;
}

/* ---- events and samples ---- */

static void event_fire(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct fab_event *ev = arg;
	struct roce_link *link = ev->fab->link[ev->e->link];

	(void)eng;
	(void)t;
	switch (ev->e->kind) {
	case ROCE_SC_EV_RATE:
		roce_link_set_rate(link, ev->e->rate_bps);
		/* the switches at either end size the port's headroom for the new rate */
		for (int side = 0; side < 2; side++) {
			int n = side ? ev->fab->sc->link[ev->e->link].b : ev->fab->sc->link[ev->e->link].a;
			int port = ev->fab->port[ev->e->link][side];

			if (port >= 0)
				(void)roce_switch_port_resize(ev->fab->sw[n - ev->fab->sc->nhosts],
							      (uint16_t)port);
		}
		break;
	case ROCE_SC_EV_DOWN:
		roce_link_set_up(link, false);
		break;
	case ROCE_SC_EV_UP:
		roce_link_set_up(link, true);
		break;
	case ROCE_SC_EV_LOSS:
		for (int d = 0; d < 2; d++) {
			struct roce_link_impair imp = ev->fab->sc->link[ev->e->link].impair[d];

			imp.loss = ev->e->loss;
			roce_link_set_impair(link, d, &imp);
		}
		break;
	}
	if (ev->fab->trace != NULL)
		fprintf(ev->fab->trace, "%14.6f us event %s on link %s\n",
			(double)roce_engine_now(eng) / ROCE_US, ev->e->name,
			ev->fab->sc->link[ev->e->link].name);
}

/* Data bytes a flow's receivers have taken in order (responders for WRITE/SEND, requesters for READ). */
static uint64_t flow_rx_bytes(const struct fab_flow *fl)
{
	uint64_t sum = 0;

	for (uint32_t q = 0; q < fl->f->nqp; q++) {
		struct roce_qp_stats st;

		roce_qp_stats(fl->f->op == ROCE_FLOW_READ ? fl->qp[q].req : fl->qp[q].resp, &st);
		sum += st.rx_bytes;
	}
	return sum;
}

/* The percentage of an interval of @p dt a queue spent paused, @p paused of it. */
static double paused_pct(roce_time_t paused, roce_time_t dt)
{
	return dt == 0 ? 0 : ROCE_MIN(100.0 * (double)paused / (double)dt, 100.0);
}

/* A flow's reaction-point rate, b/s: the mean of its QPs' (each QP is a reaction point). */
static double flow_rp_rate(const struct fab_flow *fl)
{
	double sum = 0;

	for (uint32_t q = 0; q < fl->f->nqp; q++)
		sum += (double)roce_qp_rate(fl->qp[q].req);
	return sum / fl->f->nqp;
}

static int take_sample(struct roce_fabric *fab)
{
	const struct roce_scenario *sc = fab->sc;
	roce_time_t now = roce_engine_now(fab->eng);
	double dt = (double)(now - fab->last_sample) / ROCE_SEC;
	int rc = vec_push(&fab->t, (double)now / ROCE_US), k = 0;
	/*
	 * An interval too short to measure a share of (the last sample, taken at the end whenever
	 * it falls between two: NIC pause times are whole ns) repeats the share before it.
	 */
	bool short_dt = now - fab->last_sample < ROCE_US && fab->t.n > 1;

	for (int i = 0; i < sc->nflows && rc == 0; i++) {
		struct fab_flow *fl = &fab->flow[i];
		uint64_t rx = flow_rx_bytes(fl);

		rc = vec_push(&fab->flow_gbps[i], dt > 0 ? (double)(rx - fl->last_rx) * 8 / dt / 1e9 : 0);
		if (rx != fl->last_rx)
			fl->rx_at = now;
		fl->last_rx = rx;
		if (rc == 0)
			rc = vec_push(&fab->flow_rate[i], flow_rp_rate(fl) / 1e9);
		if (fl->started && !fl->done)
			for (uint32_t q = 0; q < fl->f->nqp; q++)
				fl->rate_min = ROCE_MIN(fl->rate_min, roce_qp_rate(fl->qp[q].req));
	}
	for (int s = 0; s < sc->nswitches; s++) {
		for (int p = 0; p < sc->sw[s].conf.nports && rc == 0; p++, k++) {
			uint64_t bytes = 0, tx = 0;
			double paused = 0;

			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats st;
				roce_time_t *last = &fab->q_last_paused[k * ROCE_NPRIO + prio];

				roce_switch_qstats(fab->sw[s], (uint16_t)p, prio, &st);
				bytes += st.qbytes;
				tx += st.tx_bytes;
				paused = ROCE_MAX(paused, paused_pct(st.paused_time - *last, now -
								       fab->last_sample));
				*last = st.paused_time;
			}
			rc = vec_push(&fab->q_gbps[k], dt > 0 ? (double)(tx - fab->q_last_tx[k]) * 8 / dt / 1e9 : 0);
			fab->q_last_tx[k] = tx;
			fab->q_seen[k] = ROCE_MAX(fab->q_seen[k], bytes);
			fab->q_paused_seen[k] |= paused > 0;
			if (rc == 0)
				rc = vec_push(&fab->q_kb[k], (double)bytes / 1000);
			if (short_dt)
				paused = fab->q_paused[k].v[fab->q_paused[k].n - 1];
			if (rc == 0)
				rc = vec_push(&fab->q_paused[k], paused);
		}
	}
	for (int h = 0; h < sc->nhosts && rc == 0; h++) {
		double paused = 0;

		for (int prio = 0; prio < ROCE_NIC_NPRIO; prio++) {
			uint64_t ns, *last = &fab->h_last_paused[h * ROCE_NIC_NPRIO + prio];

			ns = roce_device_counter(fab->host[h].dev, fab->cnt_pause_ns[prio]);
			paused = ROCE_MAX(paused, paused_pct((ns - *last) * ROCE_NS,
							       now - fab->last_sample));
			*last = ns;
		}
		if (short_dt)
			paused = fab->h_paused[h].v[fab->h_paused[h].n - 1];
		fab->h_paused_seen[h] |= paused > 0;
		rc = vec_push(&fab->h_paused[h], paused);
	}
	fab->last_sample = now;
	return rc;
}

/*
 * At every sample: is there a cycle of paused queues? The first is reported with its cycle;
 * after a PFC watchdog breaks one, the same routes can make it again, and each formation counts.
 */
static void check_deadlock(struct roce_fabric *fab, roce_time_t now)
{
	char msg[sizeof(fab->deadlock_msg)];
	bool found = roce_switch_find_deadlock(fab->sw, fab->sc->nswitches, msg, sizeof(msg)) == 1;

	if (found && !fab->deadlock_now) {
		if (fab->deadlocks < ROCE_FABRIC_DEADLOCKS_KEPT)
			fab->deadlock_t[fab->deadlocks] = now;
		fab->deadlocks++;
		if (!fab->deadlock) {
			fab->deadlock = true;
			fab->deadlock_at = now;
			memcpy(fab->deadlock_msg, msg, sizeof(msg));
		}
		if (fab->trace != NULL)
			fprintf(fab->trace, "%14.6f us PFC deadlock: %s\n", (double)now / ROCE_US, msg);
	} else if (!found && fab->deadlock_now && fab->trace != NULL) {
		fprintf(fab->trace, "%14.6f us PFC deadlock broken\n", (double)now / ROCE_US);
	}
	fab->deadlock_now = found;
}

static void sampler_fire(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct roce_fabric *fab = arg;
	roce_time_t now = roce_engine_now(eng);

	if (take_sample(fab) != 0) {
		roce_engine_stop(eng);
		return;
	}
	if (fab->sc->deadlock_check && fab->sc->nswitches > 0)
		check_deadlock(fab, now);
	if (fab->rc != NULL && fab->rc->progress != NULL)
		fab->rc->progress(fab->rc->progress_arg, now, fab->sc->duration);
	if (now + fab->sc->sample <= fab->sc->duration)
		roce_timer_arm(eng, t, now + fab->sc->sample);
}

/* ---- the fabric ---- */

static size_t memory_needed(const struct roce_scenario *sc)
{
	size_t len = 0;

	for (int i = 0; i < sc->nflows; i++)
		len += 2 * ((sc->flow[i].size + 4095) & ~(size_t)4095);
	return len + 4096;
}

struct roce_fabric *roce_fabric_create(const struct roce_scenario *sc, char *err, size_t errlen)
{
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = sc->seed, .name = "fabric" };
	struct roce_fabric *fab = calloc(1, sizeof(*fab));
	uint64_t buffered = 0, outstanding = 0;
	uint32_t mtu = 256;
	int nq = 0, rc;

	err[0] = '\0';
	if (fab == NULL)
		goto err_nomem;
	fab->sc = sc;
	/* enough mbufs for every switch buffer full of MTU frames, plus the links' and hosts' */
	for (int s = 0; s < sc->nswitches; s++) {
		buffered += sc->sw[s].conf.buffer;
		nq += sc->sw[s].conf.nports;
	}
	for (int i = 0; i < sc->nflows; i++)
		mtu = ROCE_MAX(mtu, roce_mtu_bytes(sc->flow[i].mtu ? sc->flow[i].mtu : sc->mtu));
	/*
	 * Frames exist only while queued or on a wire: no more than the switches' buffers hold,
	 * and no more than the flows have outstanding; plus room for ACKs, CNPs and PFC frames.
	 */
	for (int i = 0; i < sc->nflows; i++)
		outstanding += (uint64_t)sc->flow[i].nqp * sc->flow[i].depth * sc->flow[i].size;
	ec.nb_mbufs = (uint32_t)ROCE_MIN(16384 + ROCE_MIN(buffered, outstanding) / mtu +
					 64 * (uint64_t)sc->nhosts, 1u << 20);
	ec.mbuf_data = (uint16_t)(mtu + 256 + RTE_PKTMBUF_HEADROOM);
	fab->eng = roce_engine_create(&ec);
	if (fab->eng == NULL) {
		/* sized above from the buffers and the flows: a scenario too large for this host */
		snprintf(err, errlen, "cannot allocate %u mbufs of %u bytes (%.1f GiB) for the "
			 "frames the switches' buffers and the flows can hold: %s", ec.nb_mbufs,
			 (unsigned int)ec.mbuf_data, (double)ec.nb_mbufs *
			 (ec.mbuf_data + sizeof(struct rte_mbuf)) / (1u << 30), strerror(errno));
		goto err_free;
	}
	if (arena_init(fab, memory_needed(sc)) != 0)
		goto err_nomem;
	rc = build_hosts(fab, err, errlen);
	if (rc == 0)
		rc = build_fabric(fab, err, errlen);
	if (rc == 0)
		rc = build_routes(fab, err, errlen);
	if (rc != 0)
		goto err_msg;
	fab->flow = calloc((size_t)sc->nflows, sizeof(*fab->flow));
	fab->flow_gbps = calloc((size_t)sc->nflows, sizeof(*fab->flow_gbps));
	fab->flow_rate = calloc((size_t)sc->nflows, sizeof(*fab->flow_rate));
	fab->nq = nq;
	fab->q_kb = calloc((size_t)nq + 1, sizeof(*fab->q_kb));
	fab->q_paused = calloc((size_t)nq + 1, sizeof(*fab->q_paused));
	fab->q_gbps = calloc((size_t)nq + 1, sizeof(*fab->q_gbps));
	fab->q_last_tx = calloc((size_t)nq + 1, sizeof(*fab->q_last_tx));
	fab->q_name = calloc((size_t)nq + 1, sizeof(*fab->q_name));
	fab->q_seen = calloc((size_t)nq + 1, sizeof(*fab->q_seen));
	fab->q_paused_seen = calloc((size_t)nq + 1, sizeof(*fab->q_paused_seen));
	fab->h_paused = calloc((size_t)sc->nhosts + 1, sizeof(*fab->h_paused));
	fab->h_paused_seen = calloc((size_t)sc->nhosts + 1, sizeof(*fab->h_paused_seen));
	for (int prio = 0; prio < ROCE_NIC_NPRIO; prio++) {
		char name[40];

		snprintf(name, sizeof(name), "rx_prio%d_pause_duration_ns", prio);
		fab->cnt_pause_ns[prio] = -1;	/* roce_device_counter(-1) is 0 */
		for (int i = 0; i < roce_device_ncounters(); i++)
			if (strcmp(roce_device_counter_name(i), name) == 0)
				fab->cnt_pause_ns[prio] = i;
	}
	fab->q_last_paused = calloc(((size_t)nq + 1) * ROCE_NPRIO, sizeof(*fab->q_last_paused));
	fab->h_last_paused = calloc(((size_t)sc->nhosts + 1) * ROCE_NIC_NPRIO,
				    sizeof(*fab->h_last_paused));
	fab->event = calloc((size_t)sc->nevents + 1, sizeof(*fab->event));
	if (fab->flow == NULL || fab->flow_gbps == NULL || fab->flow_rate == NULL ||
	    fab->q_kb == NULL || fab->q_paused == NULL || fab->q_gbps == NULL || fab->q_last_tx == NULL || fab->q_name == NULL ||
	    fab->q_seen == NULL || fab->q_paused_seen == NULL || fab->h_paused == NULL ||
	    fab->h_paused_seen == NULL || fab->q_last_paused == NULL ||
	    fab->h_last_paused == NULL || fab->event == NULL)
		goto err_nomem;
	/* queues are named by switch, port and what the port faces: "sw1 p0 > h0" */
	for (int l = 0; l < sc->nlinks; l++) {
		for (int side = 0; side < 2; side++) {
			int node = side == 0 ? sc->link[l].a : sc->link[l].b;
			int peer = side == 0 ? sc->link[l].b : sc->link[l].a;
			int k = fab->port[l][side];

			if (node < sc->nhosts)
				continue;
			for (int s = 0; s < node - sc->nhosts; s++)
				k += sc->sw[s].conf.nports;
			fab_name(fab->q_name[k], sizeof(fab->q_name[k]), "%s p%d > %s",
				 sc->sw[node - sc->nhosts].name, fab->port[l][side],
				 roce_scenario_node_name(sc, peer));
		}
	}
	for (int i = 0; i < sc->nflows; i++) {
		rc = build_flow(fab, i);
		if (rc != 0) {
			snprintf(err, errlen, "flow %s: %s", sc->flow[i].name,
				 rc == -ENOMEM ? "out of memory (QPs, CQs or buffers)" :
				 "could not connect its QPs");
			goto err_msg;
		}
	}
	for (int i = 0; i < sc->nevents; i++) {
		fab->event[i].fab = fab;
		fab->event[i].e = &sc->event[i];
		roce_timer_init(&fab->event[i].timer, event_fire, &fab->event[i]);
		roce_timer_arm(fab->eng, &fab->event[i].timer, sc->event[i].at);
	}
	roce_timer_init(&fab->sampler, sampler_fire, fab);
	return fab;

err_nomem:
	snprintf(err, errlen, "out of memory");
err_msg:
	if (err[0] == '\0')
		snprintf(err, errlen, "could not build the fabric");
err_free:
	roce_fabric_destroy(fab);
	return NULL;
}

void roce_fabric_destroy(struct roce_fabric *fab)
{
	const struct roce_scenario *sc;

	if (fab == NULL)
		return;
	sc = fab->sc;
	/* a scheduled event still pending (after the flows finished) leaves the wheel first */
	for (int i = 0; fab->event != NULL && i < sc->nevents; i++)
		if (fab->event[i].fab != NULL)
			roce_timer_cancel(fab->eng, &fab->event[i].timer);
	for (int i = 0; fab->flow != NULL && i < sc->nflows; i++) {
		struct fab_flow *fl = &fab->flow[i];

		if (fl->fab == NULL)
			continue;
		roce_timer_cancel(fab->eng, &fl->timer);
		for (uint32_t q = 0; fl->qp != NULL && q < fl->f->nqp; q++) {
			roce_destroy_qp(fl->qp[q].req);
			roce_destroy_qp(fl->qp[q].resp);
			free(fl->qp[q].post_t);
		}
		roce_destroy_cq(fl->scq);
		roce_destroy_cq(fl->rcq);
		roce_dereg_mr(fl->smr);
		roce_dereg_mr(fl->dmr);
		free(fl->qp);
		free(fl->lat);
	}
	for (int l = 0; fab->link != NULL && l < sc->nlinks; l++)
		roce_link_destroy(fab->link[l]);
	for (int s = 0; fab->sw != NULL && s < sc->nswitches; s++)
		roce_switch_destroy(fab->sw[s]);
	for (int h = 0; fab->host != NULL && h < sc->nhosts; h++) {
		roce_dealloc_pd(fab->host[h].pd);
		roce_device_destroy(fab->host[h].dev);
	}
	for (int i = 0; fab->flow_gbps != NULL && i < sc->nflows; i++) {
		free(fab->flow_gbps[i].v);
		free(fab->flow_rate[i].v);
	}
	for (int k = 0; fab->q_kb != NULL && k < fab->nq; k++) {
		free(fab->q_kb[k].v);
		free(fab->q_paused[k].v);
		free(fab->q_gbps[k].v);
	}
	for (int h = 0; fab->h_paused != NULL && h < sc->nhosts; h++)
		free(fab->h_paused[h].v);
	free(fab->h_paused);
	free(fab->h_paused_seen);
	free(fab->q_last_paused);
	free(fab->h_last_paused);
	free(fab->t.v);
	free(fab->flow_gbps);
	free(fab->flow_rate);
	free(fab->q_kb);
	free(fab->q_paused);
	free(fab->q_gbps);
	free(fab->q_last_tx);
	free(fab->q_name);
	free(fab->q_seen);
	free(fab->q_paused_seen);
	free(fab->event);
	free(fab->flow);
	free(fab->link);
	free(fab->port);
	free(fab->sw);
	free(fab->nports);
	free(fab->host);
	roce_engine_destroy(fab->eng);
	if (fab->arena != NULL)
		munmap(fab->arena, fab->arena_len);
	free(fab);
}

int roce_fabric_start(struct roce_fabric *fab, const struct roce_run_conf *rc)
{
	const struct roce_scenario *sc = fab->sc;
	char err[256];

	if (fab->started)
		return -EALREADY;
	fab->started = true;
	fab->rc = rc;
	fab->trace = rc != NULL ? rc->trace : NULL;
	if (fab->trace != NULL) {
		for (int h = 0; h < sc->nhosts; h++)
			roce_device_set_trace(fab->host[h].dev, fab->trace);
		for (int s = 0; s < sc->nswitches; s++)
			roce_switch_set_trace(fab->sw[s], fab->trace);
	}
	if (rc != NULL && rc->pcap != NULL) {
		fab->pcap = roce_pcap_create_snap(rc->pcap, sc->snaplen, err, sizeof(err));
		if (fab->pcap == NULL) {
			ROCE_LOG(ERR, "%s", err);
			return -EIO;
		}
		for (int l = 0; l < sc->nlinks; l++)
			if (sc->link[l].tap)
				roce_link_set_tap(fab->link[l], fab->pcap);
	}
	if (sc->sample != 0) {
		if (take_sample(fab) != 0)
			return -ENOMEM;
		roce_timer_arm(fab->eng, &fab->sampler, sc->sample);
	}
	return 0;
}

bool roce_fabric_advance(struct roce_fabric *fab, roce_time_t until)
{
	roce_time_t end = ROCE_MIN(until, fab->sc->duration);

	if (fab->flows_done < fab->sc->nflows && roce_engine_now(fab->eng) < end)
		roce_engine_run(fab->eng, end);
	return roce_fabric_cut(fab);
}

bool roce_fabric_cut(const struct roce_fabric *fab)
{
	return fab->flows_done < fab->sc->nflows && roce_engine_now(fab->eng) < fab->sc->duration;
}

const char *roce_fabric_capture_error(const struct roce_fabric *fab, int *errnum)
{
	if (errnum != NULL)
		*errnum = fab->pcap_errno;
	return fab->pcap_err[0] != '\0' ? fab->pcap_err : NULL;
}

int roce_fabric_finish(struct roce_fabric *fab)
{
	const struct roce_run_conf *rc = fab->rc;
	int ret = 0;

	roce_timer_cancel(fab->eng, &fab->sampler);
	if (fab->sc->sample != 0 && fab->last_sample < roce_engine_now(fab->eng))
		ret = take_sample(fab);
	if (fab->pcap != NULL) {
		uint64_t at;
		int e;

		for (int l = 0; l < fab->sc->nlinks; l++)
			roce_link_set_tap(fab->link[l], NULL);
		roce_pcap_flush_writer(fab->pcap);
		e = roce_pcap_writer_fault(fab->pcap, &at);
		fab->pcap_errno = e;
		if (e != 0)
			snprintf(fab->pcap_err, sizeof(fab->pcap_err), "%s: %s: the capture is "
				 "cut at or before %.3f us of virtual time", rc->pcap, strerror(e),
				 (double)at / 1e3);
		if (roce_pcap_close_writer(fab->pcap) != 0 && ret == 0)
			ret = -EIO;
		fab->pcap = NULL;
	}
	if (rc != NULL && rc->progress != NULL)
		rc->progress(rc->progress_arg, roce_engine_now(fab->eng), roce_engine_now(fab->eng));
	if (ret == 0) {
		struct roce_fabric_balance b;

		/* every frame sent is delivered, dropped for a counted cause, or still in flight */
		if (!roce_fabric_balance(fab, &b))
			ret = -EPROTO;
	}
	return ret;
}

uint64_t roce_fabric_drain(struct roce_fabric *fab, roce_time_t max)
{
	roce_timer_cancel(fab->eng, &fab->sampler);
	roce_engine_run(fab->eng, roce_engine_now(fab->eng) + max);
	return rte_mempool_in_use_count(roce_engine_pool(fab->eng));
}

int roce_fabric_run(struct roce_fabric *fab, const struct roce_run_conf *rc)
{
	int ret = roce_fabric_start(fab, rc);

	if (ret != 0)
		return ret;
	roce_fabric_advance(fab, fab->sc->duration);
	return roce_fabric_finish(fab);
}

roce_time_t roce_fabric_now(const struct roce_fabric *fab)
{
	return roce_engine_now(fab->eng);
}

const struct roce_scenario *roce_fabric_scenario(const struct roce_fabric *fab)
{
	return fab->sc;
}

int fab_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double fab_pct(const double *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	return v[(size_t)ROCE_MIN((double)(n - 1), ceil(p * (double)n) - 1 < 0 ? 0 : ceil(p * (double)n) - 1)];
}

uint8_t *fab_flow_memory(const struct roce_fabric *fab, int flow, bool responder,
			 uint64_t *len)
{
	*len = fab->flow[flow].f->size;
	return responder ? fab->flow[flow].dbuf : fab->flow[flow].sbuf;
}

struct roce_qp *roce_fabric_flow_qp(const struct roce_fabric *fab, int flow, uint32_t q)
{
	if (flow < 0 || flow >= fab->sc->nflows || fab->flow[flow].qp == NULL ||
	    q >= fab->flow[flow].f->nqp)
		return NULL;
	return fab->flow[flow].qp[q].req;
}

void roce_fabric_flow_result(const struct roce_fabric *fab, int i, struct roce_flow_result *r)
{
	struct fab_flow *fl = &fab->flow[i];
	roce_time_t fct;

	memset(r, 0, sizeof(*r));
	r->messages = fl->completed;
	r->posted = fl->posted;
	r->bytes = fl->bytes;
	r->errors = fl->errors;
	r->first_post = fl->first_post;
	r->last_done = fl->last_done;
	r->done = fl->done && fl->errors == 0;
	/*
	 * Every message of a flow carries the same bytes, so once one has completed its target
	 * holds them all, and frames still in flight can only write them again.
	 */
	r->discarded = fab->sc->discard;
	if (fl->bytes != 0 && !r->discarded &&
	    (!fl->checked || fl->checked_at != roce_fabric_now(fab))) {
		fl->checked = true;
		fl->checked_at = roce_fabric_now(fab);
		fl->data_ok = memcmp(fl->sbuf, fl->dbuf, fl->f->size) == 0;
	}
	r->data_ok = fl->bytes == 0 || r->discarded || fl->data_ok;
	/* windows the OS interrupted count at the average of the others */
	r->app_sec = fl->app_calls ? fl->app_sec * (double)(fl->app_calls + fl->app_preempted) /
				     (double)fl->app_calls : 0;
	fct = fl->last_done > fl->first_post ? fl->last_done - fl->first_post : 0;
	r->goodput_gbps = fct ? (double)fl->bytes * 8 / ((double)fct / ROCE_SEC) / 1e9 : 0;
	qsort(fl->lat, fl->nlat, sizeof(double), fab_cmp_double);
	r->lat_p50_us = fab_pct(fl->lat, fl->nlat, 0.5);
	r->lat_p99_us = fab_pct(fl->lat, fl->nlat, 0.99);
	r->lat_max_us = fl->nlat ? fl->lat[fl->nlat - 1] : 0;
	r->wait.kind = ROCE_QP_WAIT_IDLE;
	r->wait.until = ROCE_TIME_NEVER;
	for (uint32_t q = 0; q < fl->f->nqp; q++) {
		struct roce_qp_stats st;

		roce_qp_stats(fl->qp[q].req, &st);
		r->retransmits += st.retransmits;
		r->timeouts += st.timeouts;
		r->seq_naks += st.seq_naks_rcvd;
		if (r->wait.kind == ROCE_QP_WAIT_IDLE)
			roce_qp_wait(fl->qp[q].req, &r->wait);
	}
	r->rx_tracked = fab->sc->sample != 0;
	r->rx_at = fl->rx_at;
	r->rate_min_gbps = fl->rate_min != UINT64_MAX ? (double)fl->rate_min / 1e9 : 0;
	r->waiting = fl->posted == 0 && (roce_timer_armed(&fl->timer) ||
					 (fl->f->after >= 0 && !fab->flow[fl->f->after].done));
}

struct roce_switch *roce_fabric_switch(const struct roce_fabric *fab, int i)
{
	return i >= 0 && i < fab->sc->nswitches ? fab->sw[i] : NULL;
}

struct roce_device *roce_fabric_device(const struct roce_fabric *fab, int host)
{
	return host >= 0 && host < fab->sc->nhosts ? fab->host[host].dev : NULL;
}

struct roce_link *roce_fabric_link(const struct roce_fabric *fab, int i)
{
	return i >= 0 && i < fab->sc->nlinks ? fab->link[i] : NULL;
}

int roce_fabric_link_port(const struct roce_fabric *fab, int link, int side)
{
	return fab->port[link][side];
}

bool roce_fabric_deadlock(const struct roce_fabric *fab, char *buf, size_t len)
{
	if (fab->deadlock && buf != NULL)
		snprintf(buf, len, "at %.1f us: %s", (double)fab->deadlock_at / ROCE_US,
			 fab->deadlock_msg);
	return fab->deadlock;
}

uint32_t roce_fabric_deadlocks(const struct roce_fabric *fab, roce_time_t *at, bool *now)
{
	if (at != NULL)
		memcpy(at, fab->deadlock_t, sizeof(fab->deadlock_t));
	if (now != NULL)
		*now = fab->deadlock_now;
	return fab->deadlocks;
}

void roce_fabric_work(const struct roce_fabric *fab, uint64_t *events, uint64_t *hops)
{
	struct roce_engine_stats es;

	roce_engine_stats(fab->eng, &es);
	*events = es.timers_fired;
	*hops = 0;
	for (int l = 0; l < fab->sc->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats st;

			roce_link_stats(fab->link[l], d, &st);
			*hops += st.rx_frames;
		}
}

/* ---- where the frames went ---- */

const char *const roce_drop_cause_name[ROCE_DROP_NUM] = {
	[ROCE_DROP_TAIL] = "tail",
	[ROCE_DROP_HEADROOM] = "headroom",
	[ROCE_DROP_WATCHDOG] = "PFC watchdog",
	[ROCE_DROP_TTL] = "TTL expiry",
	[ROCE_DROP_NO_ROUTE] = "no route",
	[ROCE_DROP_MALFORMED] = "malformed",
	[ROCE_DROP_LINK_LOSS] = "link loss",
	[ROCE_DROP_LINK_DOWN] = "link down",
	[ROCE_DROP_LINK_MTU] = "above the MTU",
	[ROCE_DROP_NIC_BUFFER] = "NIC receive buffer",
	[ROCE_DROP_NIC_ICRC] = "NIC ICRC error",
	[ROCE_DROP_NIC_DISCARD] = "NIC discard",
};

/* The device counters of each NIC cause: a frame the NIC drops bumps exactly one of them. */
static const char *const nic_discards[] = {
	"rx_malformed", "rx_no_qp", "rx_bad_qp_state", "rx_qkey_violations", "rx_opcode_errors",
};

static uint64_t dev_counter(const struct roce_device *dev, const char *name)
{
	uint64_t v = roce_device_counter_by_name(dev, name);

	assert(v != UINT64_MAX);	/* a counter renamed: this table must follow */
	return v;
}

bool roce_fabric_balance(const struct roce_fabric *fab, struct roce_fabric_balance *b)
{
	const struct roce_scenario *sc = fab->sc;
	uint64_t nic_rx = 0;

	memset(b, 0, sizeof(*b));
	for (int s = 0; s < sc->nswitches; s++)
		for (uint16_t p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_pstats ps;

			roce_switch_pstats(fab->sw[s], p, &ps);
			b->switch_sent += ps.pfc_tx;
			b->switch_taken += ps.pfc_rx;
			b->dropped[ROCE_DROP_TTL] += ps.drop_ttl;
			b->dropped[ROCE_DROP_NO_ROUTE] += ps.drop_no_route;
			b->dropped[ROCE_DROP_MALFORMED] += ps.drop_malformed;
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(fab->sw[s], p, prio, &q);
				b->dropped[ROCE_DROP_TAIL] += q.drop_tail;
				b->dropped[ROCE_DROP_HEADROOM] += q.drop_headroom;
				b->dropped[ROCE_DROP_WATCHDOG] += q.drop_watchdog;
				b->in_switches += q.qframes;
			}
		}
	for (int l = 0; l < sc->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats st;

			roce_link_stats(fab->link[l], d, &st);
			b->duplicated += st.duplicated;
			b->dropped[ROCE_DROP_LINK_LOSS] += st.dropped;
			b->dropped[ROCE_DROP_LINK_DOWN] += st.down_drops;
			b->dropped[ROCE_DROP_LINK_MTU] += st.mtu_drops;
			b->in_links += st.in_flight;
		}
	for (int h = 0; h < sc->nhosts; h++) {
		const struct roce_device *dev = fab->host[h].dev;

		b->nic_sent += dev_counter(dev, "tx_frames");
		nic_rx += dev_counter(dev, "rx_frames");
		b->dropped[ROCE_DROP_NIC_BUFFER] += dev_counter(dev, "rx_out_of_buffer");
		b->dropped[ROCE_DROP_NIC_ICRC] += dev_counter(dev, "rx_icrc_errors");
		for (size_t i = 0; i < ROCE_DIM(nic_discards); i++)
			b->dropped[ROCE_DROP_NIC_DISCARD] += dev_counter(dev, nic_discards[i]);
		b->in_nics += roce_device_rx_held(dev);
	}
	/* what the NICs took in is what reached them less what they dropped or still hold */
	b->delivered = nic_rx - b->dropped[ROCE_DROP_NIC_BUFFER] - b->dropped[ROCE_DROP_NIC_ICRC] -
		       b->dropped[ROCE_DROP_NIC_DISCARD] - b->in_nics;
	return roce_fabric_balance_ok(b);
}

uint64_t roce_fabric_balance_sent(const struct roce_fabric_balance *b)
{
	return b->nic_sent + b->switch_sent + b->duplicated;
}

uint64_t roce_fabric_balance_dropped(const struct roce_fabric_balance *b)
{
	uint64_t n = 0;

	for (int c = 0; c < ROCE_DROP_NUM; c++)
		n += b->dropped[c];
	return n;
}

uint64_t roce_fabric_balance_in_flight(const struct roce_fabric_balance *b)
{
	return b->in_links + b->in_switches + b->in_nics;
}

bool roce_fabric_balance_ok(const struct roce_fabric_balance *b)
{
	return roce_fabric_balance_sent(b) == b->delivered + b->switch_taken +
	       roce_fabric_balance_dropped(b) + roce_fabric_balance_in_flight(b);
}

const char *roce_fabric_balance_text(const struct roce_fabric_balance *b, char *buf, size_t len)
{
	uint64_t sent = roce_fabric_balance_sent(b);
	uint64_t ends = b->delivered + b->switch_taken + roce_fabric_balance_dropped(b) +
			roce_fabric_balance_in_flight(b);
	int n;

	n = snprintf(buf, len, "sent %" PRIu64 " = delivered %" PRIu64 " + taken by switches %"
		     PRIu64 " + dropped %" PRIu64 " + in flight %" PRIu64, sent, b->delivered,
		     b->switch_taken, roce_fabric_balance_dropped(b),
		     roce_fabric_balance_in_flight(b));
	if (sent != ends && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ": %" PRIu64 " frame%s %s", sent > ends ?
			 sent - ends : ends - sent, (sent > ends ? sent - ends : ends - sent) == 1 ?
			 "" : "s", sent > ends ? "unaccounted for" : "counted twice");
	return buf;
}

/* Series of a kind that are worth showing: every flow; queues that ever held or paused. */
static int series_index(const struct roce_fabric *fab, enum roce_series_kind kind, int i)
{
	int k = 0;

	switch (kind) {
	case ROCE_SERIES_FLOW_GBPS:
	case ROCE_SERIES_RATE_GBPS:
		return i < fab->sc->nflows ? i : -1;
	case ROCE_SERIES_QUEUE_KB:
	case ROCE_SERIES_PAUSED:
	case ROCE_SERIES_PORT_GBPS:
		for (int q = 0; q < fab->nq; q++) {
			bool seen = kind == ROCE_SERIES_QUEUE_KB ? fab->q_seen[q] != 0 :
				    kind == ROCE_SERIES_PAUSED ? fab->q_paused_seen[q] != 0 :
				    fab->q_last_tx[q] != 0;

			if (seen && k++ == i)
				return q;
		}
		/* then the NICs PFC paused: index nq + host */
		for (int h = 0; kind == ROCE_SERIES_PAUSED && h < fab->sc->nhosts; h++)
			if (fab->h_paused_seen[h] && k++ == i)
				return fab->nq + h;
		return -1;
	}
	return -1;
}

int roce_fabric_nseries(const struct roce_fabric *fab, enum roce_series_kind kind)
{
	int n = 0;

	while (series_index(fab, kind, n) >= 0)
		n++;
	return n;
}

void roce_fabric_series(const struct roce_fabric *fab, enum roce_series_kind kind, int i,
			struct roce_series *s)
{
	int k = series_index(fab, kind, i);
	const struct fab_vec *v = NULL;

	memset(s, 0, sizeof(*s));
	if (k < 0)
		return;
	switch (kind) {
	case ROCE_SERIES_FLOW_GBPS:
		v = &fab->flow_gbps[k];
		snprintf(s->name, sizeof(s->name), "%s", fab->sc->flow[k].name);
		break;
	case ROCE_SERIES_RATE_GBPS:
		v = &fab->flow_rate[k];
		snprintf(s->name, sizeof(s->name), "%s", fab->sc->flow[k].name);
		break;
	case ROCE_SERIES_QUEUE_KB:
		v = &fab->q_kb[k];
		snprintf(s->name, sizeof(s->name), "%s", fab->q_name[k]);
		break;
	case ROCE_SERIES_PAUSED:
		if (k >= fab->nq) {
			v = &fab->h_paused[k - fab->nq];
			snprintf(s->name, sizeof(s->name), "%s NIC",
				 fab->sc->host[k - fab->nq].name);
			break;
		}
		v = &fab->q_paused[k];
		snprintf(s->name, sizeof(s->name), "%s", fab->q_name[k]);
		break;
	case ROCE_SERIES_PORT_GBPS:
		v = &fab->q_gbps[k];
		snprintf(s->name, sizeof(s->name), "%s", fab->q_name[k]);
		break;
	}
	s->n = v->n;
	s->t_us = fab->t.v;
	s->v = v->v;
}
