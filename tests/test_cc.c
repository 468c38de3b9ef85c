/* Check suite 'cc': PFC honoured at the NIC, ECN and CNPs, the rate limiter and DCQCN. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_engine.h"
#include "roce_io.h"
#include "roce_transport.h"
#include "roce_verbs.h"
#include "roce_wire.h"

#define BUF_SIZE (8u << 20)		/* each host's registered buffer */
#define CQ_DEPTH 1024
#define RATE 100000000000ull		/* every link and port: 100 Gb/s */
#define DELAY (1000 * ROCE_NS)		/* every link's propagation delay */
#define MAX_TIME (2 * ROCE_SEC)		/* no test needs more virtual time than this */
#define MB_QLEN 8192			/* middlebox queue per direction (a power of two) */
#define MAX_REC 200000			/* frames the middlebox remembers */
#define LINE 1e11			/* RATE as a double, for the DCQCN references */
#define A0 (1023.0 / 1024)		/* initial_alpha_value default */
#define G (1019.0 / 1024)		/* dce_tcp_g default */

/* One emulated host. */
struct host {
	struct roce_device *dev;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	struct roce_mr *mr;
	uint8_t *buf;
	struct roce_ip_addr ip;
	uint8_t mac[6];
};

/* A frame the middlebox saw arrive. */
struct rec {
	roce_time_t t;			/* arrival at the middlebox */
	roce_time_t start;		/* when its sender started putting it on the wire */
	int dir;			/* 0: from host 0, 1: from host 1 */
	enum roce_kind kind;
	uint8_t opcode, dscp, ecn;
	uint32_t dqpn, psn, len;
};

/* A FIFO of frames with a front door for injected ones. */
struct mb_q {
	struct rte_mbuf *m[MB_QLEN];
	uint32_t head, tail;		/* free-running */
};

/*
 * The fixture: host 0 -- link 0 -- middlebox -- link 1 -- host 1. The middlebox forwards both
 * ways, logs every frame, CE-marks ECT data from host 0 inside a time window, and injects
 * frames (PFC, CNP) toward host 0.
 */
static struct {
	struct roce_engine *eng;
	struct roce_link *link[2];
	struct host h[2];
	struct mb_q q[2];		/* 0: toward host 0 (link 0 dir 1), 1: toward host 1 (link 1 dir 0) */
	struct rec *log;
	size_t nlog;
	roce_time_t mark_from, mark_until; /* CE-mark ECT requests from host 0 arriving in [from, until) */
	uint64_t marked;		/* frames marked */
	struct rte_mbuf *inj;		/* the last injected frame, until it is pulled */
	roce_time_t inj_pull;		/* when it was pulled */
	uint32_t inj_len;		/* its length */
} fx;

static roce_time_t ser(uint32_t len)
{
	unsigned __int128 ps = (unsigned __int128)roce_wire_bytes(len) * 8 * ROCE_SEC;

	return (roce_time_t)((ps + RATE - 1) / RATE);
}

static bool step(void);

/* Run until the last injected frame has reached host 0 (and been handled); its arrival time. */
static roce_time_t deliver(void)
{
	roce_time_t t;

	while (fx.inj != NULL)
		ck_assert(step());
	t = fx.inj_pull + ser(fx.inj_len) + DELAY;
	roce_engine_run(fx.eng, t);
	return t;
}

static void q_push(struct mb_q *q, struct rte_mbuf *m)
{
	ck_assert_uint_lt(q->tail - q->head, MB_QLEN);
	q->m[q->tail++ & (MB_QLEN - 1)] = m;
}

static void q_push_front(struct mb_q *q, struct rte_mbuf *m)
{
	ck_assert_uint_lt(q->tail - q->head, MB_QLEN);
	q->m[--q->head & (MB_QLEN - 1)] = m;
}

static struct rte_mbuf *q_pop(struct mb_q *q)
{
	return q->head == q->tail ? NULL : q->m[q->head++ & (MB_QLEN - 1)];
}

static void mb_log(int dir, struct rte_mbuf *m)
{
	struct roce_pkt p;
	struct rec *r;
	roce_time_t now = roce_engine_now(fx.eng);

	ck_assert_uint_lt(fx.nlog, MAX_REC);
	r = &fx.log[fx.nlog++];
	memset(r, 0, sizeof(*r));
	r->t = now;
	r->dir = dir;
	r->len = rte_pktmbuf_pkt_len(m);
	r->start = now - DELAY - ser(r->len);
	(void)roce_wire_parse(rte_pktmbuf_mtod(m, const uint8_t *), r->len, ROCE_PARSE_NO_ICRC, &p);
	r->kind = p.kind;
	r->opcode = p.opcode;
	r->dscp = p.dscp;
	r->ecn = p.ecn;
	r->dqpn = p.dqpn;
	r->psn = p.psn;
}

/* Set CE in an ECT request's IPv4 header (no VLAN) and repair the checksum. */
static void mb_mark(struct rte_mbuf *m)
{
	uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);
	const struct rec *r = &fx.log[fx.nlog - 1];
	roce_time_t now = roce_engine_now(fx.eng);

	if (r->kind != ROCE_KIND_ROCEV2 || !(roce_opcode[r->opcode].mask & ROCE_F_REQ) ||
	    (b[15] & 3) == 0 || now < fx.mark_from || now >= fx.mark_until)
		return;
	b[15] |= 3;
	ck_assert_int_ge(roce_wire_fixup(b, rte_pktmbuf_data_len(m)), 0);
	fx.marked++;
}

static void port0_rx(void *owner, struct rte_mbuf *m)
{
	(void)owner;
	mb_log(0, m);
	mb_mark(m);
	q_push(&fx.q[1], m);
	roce_link_kick(fx.link[1], 0);
}

static void port1_rx(void *owner, struct rte_mbuf *m)
{
	(void)owner;
	mb_log(1, m);
	q_push(&fx.q[0], m);
	roce_link_kick(fx.link[0], 1);
}

static struct rte_mbuf *port0_pull(void *owner)
{
	struct rte_mbuf *m = q_pop(&fx.q[0]);

	(void)owner;
	if (m != NULL && m == fx.inj) {
		fx.inj = NULL;
		fx.inj_pull = roce_engine_now(fx.eng);
		fx.inj_len = rte_pktmbuf_pkt_len(m);
	}
	return m;
}

static struct rte_mbuf *port1_pull(void *owner)
{
	(void)owner;
	return q_pop(&fx.q[1]);
}

/* Put @p p at the front of the queue toward host 0, now. */
static void inject(const struct roce_pkt *p)
{
	struct rte_mbuf *m = roce_engine_mbuf(fx.eng);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_gt(roce_wire_build_mbuf(p, 0, m), 0);
	ck_assert_ptr_null(fx.inj);
	fx.inj = m;
	q_push_front(&fx.q[0], m);
	roce_link_kick(fx.link[0], 1);
}

/* An 802.1Qbb frame pausing priority @p prio for @p quanta (0: XON). */
static void inject_pfc(int prio, uint16_t quanta)
{
	struct roce_pkt p;

	roce_pkt_init(&p, ROCE_KIND_PFC, 0);
	p.pfc_cev = (uint16_t)(1u << prio);
	p.quanta[prio] = quanta;
	inject(&p);
}

/* A CNP for host 0's QP @p qpn, as host 1's NIC would send it. */
static void inject_cnp(uint32_t qpn)
{
	struct roce_pkt p;

	roce_pkt_init(&p, ROCE_KIND_ROCEV2, ROCE_OP_CNP);
	memcpy(p.smac, fx.h[1].mac, 6);
	memcpy(p.dmac, fx.h[0].mac, 6);
	p.src = fx.h[1].ip;
	p.dst = fx.h[0].ip;
	p.dscp = 48;
	p.dqpn = qpn;
	inject(&p);
}

static void host_init(int i)
{
	struct host *h = &fx.h[i];
	struct roce_device_conf dc = { 0 };
	char name[16];

	snprintf(name, sizeof(name), "rocelab%d", i);
	h->mac[0] = 0x02;
	h->mac[5] = (uint8_t)(i + 1);
	h->ip.b[0] = 10;
	h->ip.b[3] = (uint8_t)(i + 1);
	memcpy(dc.mac, h->mac, 6);
	dc.ip[0] = h->ip;
	dc.ip_ver[0] = 4;
	dc.name = name;
	dc.speed_bps = RATE;
	h->dev = roce_device_create(fx.eng, &dc);
	ck_assert_ptr_nonnull(h->dev);
	h->pd = roce_alloc_pd(h->dev);
	h->scq = roce_create_cq(h->dev, CQ_DEPTH);
	h->rcq = roce_create_cq(h->dev, CQ_DEPTH);
	h->buf = aligned_alloc(4096, BUF_SIZE);
	ck_assert(h->pd && h->scq && h->rcq && h->buf);
	memset(h->buf, 0, BUF_SIZE);
	h->mr = roce_reg_mr(h->pd, h->buf, BUF_SIZE, ROCE_ACCESS_LOCAL_WRITE |
			    ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(h->mr);
	if (getenv("TEST_TRACE") != NULL)
		roce_device_set_trace(h->dev, stderr);
}

static void fx_setup(void)
{
	static unsigned int nth;
	char name[32];
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .nb_mbufs = 8192,
				       .mbuf_data = 4096 + 256, .name = name };
	struct roce_link_conf lc = { .rate_bps = RATE, .delay = DELAY, .mtu = 9000 };
	struct roce_link_end a, b;
	struct roce_link_end p0 = { .owner = &fx.q[0], .pull = port0_pull, .rx = port0_rx };
	struct roce_link_end p1 = { .owner = &fx.q[1], .pull = port1_pull, .rx = port1_rx };

	snprintf(name, sizeof(name), "tcc%u", nth++);
	ck_assert_int_eq(roce_eal_init(NULL), 0);
	memset(&fx, 0, sizeof(fx));
	fx.log = calloc(MAX_REC, sizeof(*fx.log));
	ck_assert_ptr_nonnull(fx.log);
	fx.eng = roce_engine_create(&ec);
	ck_assert_ptr_nonnull(fx.eng);
	host_init(0);
	host_init(1);
	a = roce_device_link_end(fx.h[0].dev);
	b = roce_device_link_end(fx.h[1].dev);
	fx.link[0] = roce_link_create(fx.eng, &lc, &a, &p0);
	fx.link[1] = roce_link_create(fx.eng, &lc, &p1, &b);
	ck_assert(fx.link[0] && fx.link[1]);
	roce_device_attach(fx.h[0].dev, fx.link[0], 0);
	roce_device_attach(fx.h[1].dev, fx.link[1], 1);
}

static void fx_teardown(struct roce_qp **qps, int n)
{
	struct rte_mbuf *m;

	for (int i = 0; i < n; i++)
		ck_assert_int_eq(roce_destroy_qp(qps[i]), 0);
	roce_link_destroy(fx.link[0]);
	roce_link_destroy(fx.link[1]);
	for (int i = 0; i < 2; i++) {
		struct host *h = &fx.h[i];

		while ((m = q_pop(&fx.q[i])) != NULL)
			rte_pktmbuf_free(m);
		ck_assert_int_eq(roce_dereg_mr(h->mr), 0);
		ck_assert_int_eq(roce_destroy_cq(h->scq), 0);
		ck_assert_int_eq(roce_destroy_cq(h->rcq), 0);
		ck_assert_int_eq(roce_dealloc_pd(h->pd), 0);
		ck_assert_int_eq(roce_device_destroy(h->dev), 0);
		free(h->buf);
	}
	roce_engine_destroy(fx.eng);
	free(fx.log);
}

static struct roce_qp *mk_qp(int h)
{
	struct roce_qp_init_attr init = {
		.send_cq = fx.h[h].scq, .recv_cq = fx.h[h].rcq, .qp_type = ROCE_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 256, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct roce_qp *qp = roce_create_qp(fx.h[h].pd, &init);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

/* RESET -> RTS of @p qp on host @p h toward @p peer, its traffic marked with @p dscp. */
static void bring_up(struct roce_qp *qp, int h, struct roce_qp *peer, uint8_t dscp)
{
	struct roce_qp_attr a = { 0 };
	struct host *other = &fx.h[1 - h];

	a.qp_state = ROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ;
	ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
					ROCE_QP_ACCESS_FLAGS), 0);
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = ROCE_MTU_4096;
	a.dest_qp_num = roce_qp_num(peer);
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.dip = other->ip;
	a.ah_attr.ip_ver = 4;
	a.ah_attr.traffic_class = (uint8_t)(dscp << 2);
	memcpy(a.ah_attr.dmac, other->mac, 6);
	ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
					ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN |
					ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER), 0);
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
					ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY |
					ROCE_QP_MAX_QP_RD_ATOMIC), 0);
}

static void connect_pair(struct roce_qp **q, uint8_t dscp)
{
	q[0] = mk_qp(0);
	q[1] = mk_qp(1);
	bring_up(q[0], 0, q[1], dscp);
	bring_up(q[1], 1, q[0], dscp);
}

static uint64_t cnt(int h, const char *name)
{
	uint64_t v = roce_device_counter_by_name(fx.h[h].dev, name);

	ck_assert_msg(v != UINT64_MAX, "no counter %s", name);
	return v;
}

/* Host 0 WRITEs @p len bytes at @p off into host 1 (same offset), signaled. */
static void post_write(struct roce_qp *qp, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct roce_sge sge = { .addr = (uintptr_t)(fx.h[0].buf + off), .length = len,
				.lkey = roce_mr_lkey(fx.h[0].mr) };
	struct roce_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = ROCE_WR_RDMA_WRITE,
		.send_flags = ROCE_SEND_SIGNALED,
	};

	for (uint32_t i = 0; i < len; i++)
		fx.h[0].buf[off + i] = (uint8_t)(i * 7 + off + wr_id);
	wr.wr.rdma.remote_addr = (uintptr_t)(fx.h[1].buf + off);
	wr.wr.rdma.rkey = roce_mr_rkey(fx.h[1].mr);
	ck_assert_int_eq(roce_post_send(qp, &wr, NULL), 0);
}

static bool step(void)
{
	roce_time_t next = roce_engine_next(fx.eng);

	if (next == ROCE_TIME_NEVER || next > MAX_TIME)
		return false;
	roce_engine_run(fx.eng, next);
	return true;
}

/* Run until host 0's send CQ has @p n successful completions; then the data must match. */
static void wait_writes(int n, uint32_t off, uint32_t len)
{
	struct roce_wc wc[16];
	int got = 0;

	while (got < n) {
		int r = roce_poll_cq(fx.h[0].scq, 16, wc);

		ck_assert_int_ge(r, 0);
		for (int i = 0; i < r; i++)
			ck_assert_msg(wc[i].status == ROCE_WC_SUCCESS, "wr %llu: %s",
				      (unsigned long long)wc[i].wr_id,
				      roce_wc_status_name(wc[i].status));
		got += r;
		if (got < n)
			ck_assert_msg(step(), "ran out of events with %d of %d completions", got, n);
	}
	ck_assert_int_eq(memcmp(fx.h[0].buf + off, fx.h[1].buf + off, len), 0);
}

static void run_until(roce_time_t t)
{
	roce_engine_run(fx.eng, t);
}

static bool is_data(const struct rec *r, int dir)
{
	return r->dir == dir && r->kind == ROCE_KIND_ROCEV2 && (roce_opcode[r->opcode].mask & ROCE_F_REQ);
}

/* ---- PFC ---- */

/*
 * A PFC frame for priority 3 with quanta Q stops host 0's priority-3 data for exactly
 * Q x 512 bit times from its arrival: no frame starts inside, the next one starts at its end.
 */
START_TEST(test_pfc_pause_exact)
{
	struct roce_qp *q[2];
	const uint16_t quanta = 1000;
	roce_time_t t1, end;
	size_t first = SIZE_MAX;

	fx_setup();
	connect_pair(q, 26);		/* DSCP 26 -> priority 3 */
	post_write(q[0], 1, 0, 2u << 20);
	run_until(20 * ROCE_US);
	inject_pfc(3, quanta);
	t1 = deliver();
	end = t1 + (roce_time_t)quanta * 512 * ROCE_SEC / RATE;
	ck_assert_uint_eq(end - t1, 5120 * ROCE_NS);	/* 1000 x 512 bits at 100G */
	wait_writes(1, 0, 2u << 20);
	for (size_t i = 0; i < fx.nlog; i++) {
		const struct rec *r = &fx.log[i];

		if (!is_data(r, 0))
			continue;
		ck_assert_uint_eq(r->dscp, 26);
		ck_assert_msg(r->start <= t1 || r->start >= end, "frame psn %u started at %llu ps, "
			      "inside the pause [%llu, %llu)", r->psn, (unsigned long long)r->start,
			      (unsigned long long)t1, (unsigned long long)end);
		if (r->start > t1 && first == SIZE_MAX)
			first = i;
	}
	ck_assert(first != SIZE_MAX);
	ck_assert_uint_eq(fx.log[first].start, end);
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause"), 1);
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause_duration_ns"), 5120);
	ck_assert_uint_eq(cnt(0, "rx_prio0_pause"), 0);
	fx_teardown(q, 2);
}
END_TEST

/* XON (quanta 0) ends a long pause at once: data resumes when it arrives. */
START_TEST(test_pfc_xon)
{
	struct roce_qp *q[2];
	roce_time_t t1, t2;
	size_t first = SIZE_MAX;

	fx_setup();
	connect_pair(q, 26);
	post_write(q[0], 1, 0, 1u << 20);
	run_until(10 * ROCE_US);
	inject_pfc(3, 0xffff);		/* 335 us */
	t1 = deliver();
	run_until(30 * ROCE_US);
	/* the pause's time still ahead is not counted: a run that ends here was paused this long */
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause_duration_ns"), (30 * ROCE_US - t1) / ROCE_NS);
	inject_pfc(3, 0);
	t2 = deliver();
	wait_writes(1, 0, 1u << 20);
	for (size_t i = 0; i < fx.nlog; i++) {
		if (!is_data(&fx.log[i], 0) || fx.log[i].start <= t1)
			continue;
		if (first == SIZE_MAX)
			first = i;
	}
	ck_assert(first != SIZE_MAX);
	ck_assert_uint_eq(fx.log[first].start, t2);
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause"), 2);
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause_duration_ns"), (t2 - t1) / ROCE_NS);
	fx_teardown(q, 2);
}
END_TEST

/* A paused priority does not stop another: priority 0 keeps the wire busy during the pause. */
START_TEST(test_pfc_other_prio_sends)
{
	struct roce_qp *a[2], *b[2];
	const uint16_t quanta = 2000;
	roce_time_t t1, end;
	uint32_t qpn3;
	int n0 = 0, n3 = 0;

	fx_setup();
	connect_pair(a, 26);		/* priority 3 */
	connect_pair(b, 0);		/* priority 0 */
	qpn3 = roce_qp_num(a[1]);
	post_write(a[0], 1, 0, 1u << 20);
	post_write(b[0], 2, 2u << 20, 1u << 20);
	run_until(20 * ROCE_US);
	inject_pfc(3, quanta);
	t1 = deliver();
	end = t1 + (roce_time_t)quanta * 5120;
	run_until(end);
	for (size_t i = 0; i < fx.nlog; i++) {
		const struct rec *r = &fx.log[i];

		if (!is_data(r, 0) || r->start <= t1 || r->start >= end)
			continue;
		if (r->dqpn == qpn3)
			n3++;
		else
			n0++;
	}
	ck_assert_int_eq(n3, 0);
	/* 10.24 us of priority 0 alone: about 30 frames of 4 KiB at 100G */
	ck_assert_int_ge(n0, 25);
	wait_writes(2, 0, 1u << 20);
	ck_assert_int_eq(memcmp(fx.h[0].buf + (2u << 20), fx.h[1].buf + (2u << 20), 1u << 20), 0);
	fx_teardown((struct roce_qp *[]){ a[0], a[1], b[0], b[1] }, 4);
}
END_TEST

/* A priority without PFC enabled is not paused; the frame is still counted. */
START_TEST(test_pfc_not_enabled)
{
	struct roce_qp *q[2];
	struct roce_nic_qos qos;
	roce_time_t t1, prev = 0, gap = 0;

	fx_setup();
	roce_nic_qos_defaults(&qos);
	qos.pfc_enable = (uint8_t)~(1u << 3);
	ck_assert_int_eq(roce_device_set_qos(fx.h[0].dev, &qos), 0);
	connect_pair(q, 26);
	post_write(q[0], 1, 0, 1u << 20);
	run_until(20 * ROCE_US);
	inject_pfc(3, 0xffff);
	t1 = deliver();
	wait_writes(1, 0, 1u << 20);
	for (size_t i = 0; i < fx.nlog; i++) {
		const struct rec *r = &fx.log[i];

		if (!is_data(r, 0))
			continue;
		if (prev != 0 && r->start > t1 && r->start - prev > gap)
			gap = r->start - prev;
		prev = r->start;
	}
	ck_assert_uint_le(gap, ser(4096 + 100));
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause"), 1);
	ck_assert_uint_eq(cnt(0, "rx_prio3_pause_duration_ns"), 0);
	fx_teardown(q, 2);
}
END_TEST

/* ---- ECN, CNPs ---- */

/* Without congestion control nothing changes: no ECT, line rate; with DCQCN, data is ECT(0). */
START_TEST(test_ect_marking)
{
	struct roce_qp *q[2], *c[2];
	char err[128];
	int ect_data = 0, data = 0, acks = 0;

	fx_setup();
	connect_pair(q, 26);
	ck_assert_uint_eq(roce_qp_rate(q[0]), RATE);
	post_write(q[0], 1, 0, 64u << 10);
	wait_writes(1, 0, 64u << 10);
	for (size_t i = 0; i < fx.nlog; i++)
		ck_assert_uint_eq(fx.log[i].ecn, 0);
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", NULL, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_device_set_cc(fx.h[1].dev, "dcqcn", NULL, 0, err, sizeof(err)), 0);
	connect_pair(c, 26);
	ck_assert_uint_eq(roce_qp_rate(c[0]), RATE);
	fx.nlog = 0;
	post_write(c[0], 2, 0, 64u << 10);
	wait_writes(1, 0, 64u << 10);
	for (size_t i = 0; i < fx.nlog; i++) {
		const struct rec *r = &fx.log[i];

		if (is_data(r, 0)) {
			data++;
			ect_data += r->ecn == 2;
		} else if (r->kind == ROCE_KIND_ROCEV2 && (roce_opcode[r->opcode].mask & ROCE_F_ACK)) {
			acks++;
			ck_assert_uint_eq(r->ecn, 0);
		}
	}
	ck_assert_int_eq(data, 16);
	ck_assert_int_eq(ect_data, data);
	ck_assert_int_gt(acks, 0);
	fx_teardown((struct roce_qp *[]){ q[0], q[1], c[0], c[1] }, 4);
}
END_TEST

/*
 * CE-marked data makes host 1 send CNPs to host 0's QP: DSCP 48, not ECT, at most one per
 * 4 us; host 0 handles them and slows down; the transfer still completes intact.
 */
START_TEST(test_cnp_interval)
{
	struct roce_qp *q[2];
	const char *kv[] = { "rpg_min_rate=5000" };
	char err[128];
	roce_time_t prev = 0;
	int ncnp = 0;
	uint64_t min_rate = RATE;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", kv, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_device_set_cc(fx.h[1].dev, "dcqcn", NULL, 0, err, sizeof(err)), 0);
	connect_pair(q, 26);
	fx.mark_from = 5 * ROCE_US;
	fx.mark_until = 45 * ROCE_US;
	post_write(q[0], 1, 0, 4u << 20);
	while (roce_engine_now(fx.eng) < 60 * ROCE_US && step())
		min_rate = ROCE_MIN(min_rate, roce_qp_rate(q[0]));
	wait_writes(1, 0, 4u << 20);
	for (size_t i = 0; i < fx.nlog; i++) {
		const struct rec *r = &fx.log[i];

		if (r->dir != 1 || r->kind != ROCE_KIND_ROCEV2 || r->opcode != ROCE_OP_CNP)
			continue;
		ck_assert_uint_eq(r->dqpn, roce_qp_num(q[0]));
		ck_assert_uint_eq(r->dscp, 48);
		ck_assert_uint_eq(r->ecn, 0);
		if (ncnp++ > 0)
			ck_assert_uint_ge(r->start - prev, 4 * ROCE_US);
		prev = r->start;
	}
	ck_assert_uint_gt(fx.marked, 20);
	/* marks over ~40 us: at most one CNP per 4 us, and the first mark gets one */
	ck_assert_int_ge(ncnp, 5);
	ck_assert_int_le(ncnp, 11);
	ck_assert_uint_eq(cnt(1, "np_ecn_marked_roce_packets"), fx.marked);
	ck_assert_uint_eq(cnt(1, "np_cnp_sent"), (uint64_t)ncnp);
	ck_assert_uint_eq(cnt(0, "rp_cnp_handled"), (uint64_t)ncnp);
	ck_assert_uint_lt(min_rate, RATE / 2);
	ck_assert_uint_ge(min_rate, 5000000000ull);
	fx_teardown(q, 2);
}
END_TEST

/* ---- DCQCN ---- */

/* Rc after a decrease: Rc (1 - alpha/2), kept above half and above the floor (defaults). */
static double dec(double rc, double alpha)
{
	return fmax(rc * (1 - alpha / 2), rc * 0.5);
}

static double state(struct roce_qp *qp, const char *name)
{
	double v;

	ck_assert_int_eq(roce_qp_cc_state(qp, name, &v), 0);
	return v;
}

/*
 * The first CNP cuts Rc to line x (1 - a0/2) at once. A second CNP 1.5 us later waits for
 * rate_reduce_monitor_period (4 us) and then cuts with alpha updated once per microsecond:
 * decayed for the periods without a CNP, raised for the one that had it.
 */
START_TEST(test_dcqcn_decrease)
{
	struct roce_qp *q[2];
	char err[128];
	roce_time_t tc1, tc2;
	double rc1, alpha, rc2;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", NULL, 0, err, sizeof(err)), 0);
	connect_pair(q, 26);
	post_write(q[0], 1, 0, 4u << 20);
	run_until(10 * ROCE_US);
	inject_cnp(roce_qp_num(q[0]));
	tc1 = deliver();
	rc1 = dec(LINE, A0);
	ck_assert_uint_eq(cnt(0, "rp_cnp_handled"), 1);
	ck_assert_double_eq_tol((double)roce_qp_rate(q[0]), rc1, 1.0);
	ck_assert_double_eq_tol(state(q[0], "rt"), LINE, 1.0);
	ck_assert_double_eq_tol(state(q[0], "alpha"), A0, 1e-12);

	run_until(tc1 + 500 * ROCE_NS);	/* arrives ~1.5 us after the first */
	inject_cnp(roce_qp_num(q[0]));
	tc2 = deliver();
	ck_assert_uint_ge(tc2 - tc1, 1 * ROCE_US);
	ck_assert_uint_lt(tc2 - tc1, 2 * ROCE_US);
	ck_assert_uint_eq(cnt(0, "rp_cnp_handled"), 2);
	run_until(tc1 + 4 * ROCE_US - 1);
	ck_assert_double_eq_tol((double)roce_qp_rate(q[0]), rc1, 1.0);
	run_until(tc1 + 4 * ROCE_US);
	/* periods ending at tc1+1 (no CNP), tc1+2 (the CNP), tc1+3, tc1+4 (none) */
	alpha = A0 * G;
	alpha = G * alpha + (1 - G);
	alpha = alpha * G * G;
	rc2 = dec(rc1, alpha);
	ck_assert_double_eq_tol(state(q[0], "alpha"), alpha, 1e-12);
	ck_assert_double_eq_tol((double)roce_qp_rate(q[0]), rc2, 1.0);
	/* no timer increase in between, clamp_tgt_rate 0: the target stays */
	ck_assert_double_eq_tol(state(q[0], "rt"), LINE, 1.0);
	wait_writes(1, 0, 4u << 20);
	fx_teardown(q, 2);
}
END_TEST

/* The increase the reference applies for stages (t, b) after one of them advanced. */
static void ref_increase(double *rc, double *rt, uint32_t t, uint32_t b, uint32_t f, double ai,
			 double hai)
{
	uint32_t hi = t > b ? t : b, lo = t < b ? t : b;

	if (hi > f && lo <= f)
		*rt += ai;
	else if (hi > f)
		*rt += (lo - f) * hai;
	*rt = fmin(*rt, LINE);
	*rc = (*rt + *rc) / 2;
	if (*rt - *rc < 1e6)
		*rc = *rt;
}

/*
 * An idle QP recovers on the timer alone: with no byte counter (the default), F fast recovery
 * steps, one additive increase of the target, then hyper increase (i x R_HAI at the i-th),
 * one step per rpg_time_reset, to line rate in the number of periods the formulas give; then
 * its timer stops. The reference takes the byte stage as one behind the timer stage.
 */
START_TEST(test_dcqcn_timer_recovery)
{
	struct roce_qp *q[2];
	const char *kv[] = { "rpg_time_reset=10", "rpg_threshold=3", "rpg_ai_rate=4000",
			     "clamp_tgt_rate=1" };
	char err[128];
	roce_time_t tc1, tc2;
	double rc, rt, alpha;
	uint32_t periods = 0;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", kv, 4, err, sizeof(err)), 0);
	connect_pair(q, 26);
	run_until(5 * ROCE_US);
	inject_cnp(roce_qp_num(q[0]));
	tc1 = deliver();
	run_until(tc1 + 5 * ROCE_US);
	inject_cnp(roce_qp_num(q[0]));	/* after the 4 us monitor period: cut at once */
	tc2 = deliver();
	/* reference: first cut, then alpha over 5 whole periods (none with a CNP), clamp: Rt = Rc */
	rc = dec(LINE, A0);
	alpha = A0 * pow(G, (double)((tc2 - tc1) / ROCE_US));
	rt = rc;
	rc = dec(rc, alpha);
	ck_assert_double_eq_tol((double)roce_qp_rate(q[0]), rc, 1.0);
	ck_assert_double_eq_tol(state(q[0], "rt"), rt, 1.0);
	while (rc < LINE) {
		periods++;
		ref_increase(&rc, &rt, periods, periods - 1, 3, 4e9, 5e7);
		run_until(tc2 + periods * 10 * ROCE_US);
		if (rc < LINE)
			ck_assert_uint_eq((uint32_t)state(q[0], "time_stage"), periods);
		ck_assert_double_eq_tol((double)roce_qp_rate(q[0]), rc, 1.0);
		ck_assert_double_eq_tol(state(q[0], "rt"), rt, 1.0);
		ck_assert_uint_lt(periods, 1000);
	}
	/* 3 fast recovery steps, 4 Gb/s once, then 50, 100, 150 ... Mb/s for the rest */
	ck_assert_uint_ge(periods, 3 + 1 + 10);
	ck_assert_uint_eq(roce_qp_rate(q[0]), RATE);
	ck_assert(state(q[0], "active") == 0);
	ck_assert_uint_eq(roce_engine_next(fx.eng), ROCE_TIME_NEVER);	/* no timer left */
	fx_teardown(q, 2);
}
END_TEST

/*
 * While sending, the byte counter (every rpg_byte_reset bytes) raises the rate between timer
 * periods; once both counters pass F the target grows by stage x R_HAI. Every increase follows
 * the reference, the flow gets back to line rate, and the data arrives intact.
 */
START_TEST(test_dcqcn_byte_counter_hyper)
{
	struct roce_qp *q[2];
	const char *kv[] = { "rpg_time_reset=20", "rpg_byte_reset=16384", "rpg_threshold=1",
			     "rpg_ai_rate=500", "rpg_hai_rate=2000", "clamp_tgt_rate=1" };
	char err[128];
	int n_fr = 0, n_ai = 0, n_hai = 0, by_bytes = 0;
	bool started = false;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", kv, 6, err, sizeof(err)), 0);
	connect_pair(q, 26);
	post_write(q[0], 1, 0, 8u << 20);
	run_until(10 * ROCE_US);
	inject_cnp(roce_qp_num(q[0]));
	deliver();
	run_until(15 * ROCE_US);
	inject_cnp(roce_qp_num(q[0]));	/* clamp: Rt below line, so AI/HAI show */
	deliver();
	ck_assert_double_lt(state(q[0], "rt"), LINE);
	for (;;) {
		double rc = state(q[0], "rc"), rt = state(q[0], "rt");
		uint32_t t = (uint32_t)state(q[0], "time_stage"), b = (uint32_t)state(q[0], "byte_stage");
		uint32_t t2, b2, hi, lo;
		double erc = rc, ert = rt;

		if (state(q[0], "active") == 0)
			break;
		ck_assert(step());
		if (state(q[0], "active") != 0) {
			t2 = (uint32_t)state(q[0], "time_stage");
			b2 = (uint32_t)state(q[0], "byte_stage");
		} else {
			/* back at line: the last step's stages are gone; only check the result */
			ck_assert_uint_eq(roce_qp_rate(q[0]), RATE);
			break;
		}
		if (t2 == t && b2 == b)
			continue;
		ck_assert_msg((t2 == t + 1 && b2 == b) || (t2 == t && b2 == b + 1),
			      "stages %u/%u -> %u/%u in one step", t, b, t2, b2);
		started = true;
		by_bytes += b2 == b + 1;
		ref_increase(&erc, &ert, t2, b2, 1, 5e8, 2e9);
		hi = t2 > b2 ? t2 : b2;
		lo = t2 < b2 ? t2 : b2;
		n_fr += hi <= 1;
		n_ai += hi > 1 && lo <= 1;
		n_hai += lo > 1;
		ck_assert_double_eq_tol(state(q[0], "rt"), ert, 1.0);
		ck_assert_double_eq_tol(state(q[0], "rc"), erc, 1.0);
	}
	ck_assert(started);
	ck_assert_int_ge(n_fr, 1);
	ck_assert_int_ge(n_ai, 1);
	ck_assert_int_ge(n_hai, 1);
	ck_assert_int_gt(by_bytes, 0);
	wait_writes(1, 0, 8u << 20);
	fx_teardown(q, 2);
}
END_TEST

/*
 * The rate limiter spaces data frames: at a constant rate R (no increase in sight), each frame
 * starts wire_bits / R after the previous one.
 */
START_TEST(test_rate_limiter_spacing)
{
	struct roce_qp *q[2];
	const char *kv[] = { "rpg_time_reset=1000000", "rpg_byte_reset=0" };
	char err[128];
	roce_time_t tc1;
	uint64_t rate;
	int checked = 0;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", kv, 2, err, sizeof(err)), 0);
	connect_pair(q, 26);
	post_write(q[0], 1, 0, 2u << 20);
	run_until(10 * ROCE_US);
	inject_cnp(roce_qp_num(q[0]));
	tc1 = deliver();
	rate = roce_qp_rate(q[0]);
	ck_assert_uint_lt(rate, RATE / 2 + RATE / 1000);
	wait_writes(1, 0, 2u << 20);
	ck_assert_uint_eq(roce_qp_rate(q[0]), rate);
	for (size_t i = 1; i < fx.nlog; i++) {
		const struct rec *r = &fx.log[i], *p = NULL;

		if (!is_data(r, 0) || r->start < tc1 + 2 * ROCE_US)
			continue;
		for (size_t j = i; j-- > 0;)
			if (is_data(&fx.log[j], 0)) {
				p = &fx.log[j];
				break;
			}
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(r->start - p->start,
				  (roce_time_t)roce_wire_bytes(p->len) * 8 * ROCE_SEC / rate);
		checked++;
	}
	ck_assert_int_gt(checked, 200);
	fx_teardown(q, 2);
}
END_TEST

/* ---- configuration ---- */

START_TEST(test_cc_config_errors)
{
	const char *bad_key[] = { "rpg_ai=5" };
	const char *bad_val[] = { "rpg_ai_rate=fast" };
	const char *range[] = { "dce_tcp_g=2000" };
	const char *nokv[] = { "rpg_ai_rate" };
	const char *good[] = { "rpg_ai_rate=10", "dce_tcp_rtt=55" };
	const char *const *names = roce_cc_names();
	struct roce_nic_qos qos;
	char err[128], *text = NULL;
	size_t len = 0;
	int lines = 0;
	FILE *f;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", bad_key, 1, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "dcqcn: unknown parameter 'rpg_ai'");
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", bad_val, 1, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "rpg_ai_rate=fast"));
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", range, 1, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "[0, 1023]"));
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", nokv, 1, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "cubic", NULL, 0, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'cubic'"));
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", good, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "none", NULL, 0, err, sizeof(err)), 0);
	ck_assert_str_eq(names[0], "none");
	ck_assert_str_eq(names[1], "dcqcn");
	ck_assert_ptr_null(names[2]);
	f = open_memstream(&text, &len);
	roce_cc_describe("dcqcn", f);
	fclose(f);
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	ck_assert_int_eq(lines, 15);
	ck_assert_ptr_nonnull(strstr(text, "rpg_time_reset"));
	ck_assert_ptr_nonnull(strstr(text, "rpg_min_rate"));
	free(text);
	roce_nic_qos_defaults(&qos);
	ck_assert_uint_eq(qos.dscp_prio[26], 3);
	ck_assert_uint_eq(qos.dscp_prio[48], 6);
	ck_assert_uint_eq(qos.pfc_enable, 0xff);
	ck_assert(!qos.ecn);
	ck_assert_uint_eq(qos.cnp_interval, 4 * ROCE_US);
	ck_assert_uint_eq(qos.cnp_dscp, 48);
	qos.dscp_prio[5] = 8;
	ck_assert_int_eq(roce_device_set_qos(fx.h[0].dev, &qos), -EINVAL);
	fx_teardown(NULL, 0);
}
END_TEST

static Suite *cc_suite(void)
{
	Suite *s = suite_create("cc");
	TCase *pfc = tcase_create("pfc"), *ecn = tcase_create("ecn"), *dcqcn = tcase_create("dcqcn");
	TCase *conf = tcase_create("config");

	tcase_set_timeout(pfc, 120);
	tcase_set_timeout(ecn, 120);
	tcase_set_timeout(dcqcn, 120);
	tcase_add_test(pfc, test_pfc_pause_exact);
	tcase_add_test(pfc, test_pfc_xon);
	tcase_add_test(pfc, test_pfc_other_prio_sends);
	tcase_add_test(pfc, test_pfc_not_enabled);
	tcase_add_test(ecn, test_ect_marking);
	tcase_add_test(ecn, test_cnp_interval);
	tcase_add_test(dcqcn, test_dcqcn_decrease);
	tcase_add_test(dcqcn, test_dcqcn_timer_recovery);
	tcase_add_test(dcqcn, test_dcqcn_byte_counter_hyper);
	tcase_add_test(dcqcn, test_rate_limiter_spacing);
	tcase_add_test(conf, test_cc_config_errors);
	suite_add_tcase(s, pfc);
	suite_add_tcase(s, ecn);
	suite_add_tcase(s, dcqcn);
	suite_add_tcase(s, conf);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cc_suite());
	int failed;

	if (roce_eal_init(NULL) != 0)
		return 77;
	if (getenv("CK_FORK") == NULL)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
