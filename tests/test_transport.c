/* Check suite 'transport': the verbs and the RC/UC/UD transport end to end on two emulated hosts. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "roce_engine.h"
#include "roce_io.h"
#include "roce_perf.h"
#include "perf_private.h"
#include "roce_transport.h"
#include "roce_verbs.h"
#include "roce_wire.h"

#define BUF_SIZE (4u << 20)		/* each host's registered buffer */
#define CQ_DEPTH 4096
#define QKEY 0x11111111u
#define MAX_TIME (60 * ROCE_SEC)	/* no test needs more virtual time than this */
/*
 * The buffers sit at fixed addresses: RETH and AtomicETH carry virtual addresses, so a capture
 * can only be byte-identical from run to run (and process to process) if they do not move.
 */
#define BUF_BASE 0x3f0000000000ull

/* One emulated host. */
struct host {
	struct roce_device *dev;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	struct roce_mr *mr;		/* all rights, over buf */
	uint8_t *buf;			/* BUF_SIZE bytes */
	struct roce_ip_addr ip;
	uint8_t mac[6];
};

/* The fixture: an engine in virtual time, two hosts, one 100G link with 500 ns of delay. */
static struct {
	struct roce_engine *eng;
	struct roce_link *link;
	struct host h[2];
	char tap_path[64];
	struct roce_pcap_writer *tap;
} fx;

/* Connection parameters; zero means the default in conn_defaults(). */
struct conn {
	enum roce_qp_type type;
	enum roce_mtu mtu;
	uint32_t psn;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic;
	unsigned int access;		/* the responder's QP access flags */
};

static struct conn conn_defaults(enum roce_qp_type type)
{
	return (struct conn){
		.type = type, .mtu = ROCE_MTU_1024, .psn = 0x100, .timeout = 10, .retry_cnt = 7,
		.rnr_retry = 7, .min_rnr_timer = 1, .max_rd_atomic = 16,
		.access = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC,
	};
}

static uint8_t *buf_map(int i)
{
	void *want = (void *)(uintptr_t)(BUF_BASE + (uint64_t)i * BUF_SIZE * 2);
	void *p;

	munmap(want, BUF_SIZE);	/* left over by a failed test (no fork) */
	p = mmap(want, BUF_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert_msg(p == want, "cannot map the buffer at %p", want);
	return p;
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
	h->dev = roce_device_create(fx.eng, &dc);
	ck_assert_ptr_nonnull(h->dev);
	h->pd = roce_alloc_pd(h->dev);
	h->scq = roce_create_cq(h->dev, CQ_DEPTH);
	h->rcq = roce_create_cq(h->dev, CQ_DEPTH);
	h->buf = buf_map(i);
	ck_assert(h->pd && h->scq && h->rcq && h->buf);
	memset(h->buf, 0, BUF_SIZE);
	h->mr = roce_reg_mr(h->pd, h->buf, BUF_SIZE, ROCE_ACCESS_LOCAL_WRITE |
			    ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
			    ROCE_ACCESS_REMOTE_ATOMIC);
	ck_assert_ptr_nonnull(h->mr);
}

static const struct roce_link_conf fx_link_conf = {
	.rate_bps = 100000000000ull, .delay = 500 * ROCE_NS, .mtu = 9000,
};

/* The engine and both hosts, not linked. */
static void fx_hosts(uint64_t seed)
{
	static unsigned int nth;
	char name[32];
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = seed,
				       .nb_mbufs = 8192, .mbuf_data = 4096 + 256, .name = name };

	snprintf(name, sizeof(name), "ttr%u", nth++);	/* a failed test (no fork) leaks its pool */
	ck_assert_int_eq(roce_eal_init(NULL), 0);
	memset(&fx, 0, sizeof(fx));
	fx.eng = roce_engine_create(&ec);
	ck_assert_ptr_nonnull(fx.eng);
	host_init(0);
	host_init(1);
}

static void fx_setup_seed(uint64_t seed)
{
	struct roce_link_end a, b;

	fx_hosts(seed);
	a = roce_device_link_end(fx.h[0].dev);
	b = roce_device_link_end(fx.h[1].dev);
	fx.link = roce_link_create(fx.eng, &fx_link_conf, &a, &b);
	ck_assert_ptr_nonnull(fx.link);
	roce_device_attach(fx.h[0].dev, fx.link, 0);
	roce_device_attach(fx.h[1].dev, fx.link, 1);
	if (getenv("TEST_TRACE") != NULL) {
		roce_device_set_trace(fx.h[0].dev, stderr);
		roce_device_set_trace(fx.h[1].dev, stderr);
	}
}

static void fx_setup(void)
{
	fx_setup_seed(1);
}

/* Destroy everything; QPs first (the caller's list), then the hosts. */
static void fx_teardown_qps(struct roce_qp **qps, int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(roce_destroy_qp(qps[i]), 0);
	roce_link_destroy(fx.link);
	for (int i = 0; i < 2; i++) {
		struct host *h = &fx.h[i];

		ck_assert_int_eq(roce_dereg_mr(h->mr), 0);
		ck_assert_int_eq(roce_destroy_cq(h->scq), 0);
		ck_assert_int_eq(roce_destroy_cq(h->rcq), 0);
		ck_assert_int_eq(roce_dealloc_pd(h->pd), 0);
		ck_assert_int_eq(roce_device_destroy(h->dev), 0);
		munmap(h->buf, BUF_SIZE);
	}
	if (fx.tap != NULL) {
		roce_pcap_close_writer(fx.tap);
		unlink(fx.tap_path);
	}
	roce_engine_destroy(fx.eng);
}

static struct roce_qp *mk_qp_srq(int h, enum roce_qp_type type, struct roce_srq *srq,
				 struct roce_cq *scq)
{
	struct roce_qp_init_attr init = {
		.send_cq = scq != NULL ? scq : fx.h[h].scq,
		.recv_cq = fx.h[h].rcq,
		.srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = 256, .max_recv_wr = 256, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 256 },
	};
	struct roce_qp *qp = roce_create_qp(fx.h[h].pd, &init);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

static struct roce_qp *mk_qp(int h, enum roce_qp_type type)
{
	return mk_qp_srq(h, type, NULL, NULL);
}

/* RESET -> INIT -> RTR -> RTS of @p qp on host @p h, pointed at @p peer. */
static void bring_up(struct roce_qp *qp, int h, struct roce_qp *peer, const struct conn *c)
{
	struct roce_qp_attr a = { 0 };
	struct host *other = &fx.h[1 - h];
	bool ud = c->type == ROCE_QPT_UD;

	a.qp_state = ROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	a.qp_access_flags = c->access;
	ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
					(ud ? ROCE_QP_QKEY : ROCE_QP_ACCESS_FLAGS)), 0);
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = ud ? 0 : roce_qp_num(peer);
	a.rq_psn = c->psn;
	a.max_dest_rd_atomic = c->max_rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.dip = other->ip;
	a.ah_attr.ip_ver = 4;
	memcpy(a.ah_attr.dmac, other->mac, 6);
	if (ud)
		ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE), 0);
	else if (c->type == ROCE_QPT_UC)
		ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_AV |
						ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN |
						ROCE_QP_RQ_PSN), 0);
	else
		ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_AV |
						ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN |
						ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
						ROCE_QP_MIN_RNR_TIMER), 0);
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = c->psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->max_rd_atomic;
	if (c->type == ROCE_QPT_RC)
		ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN |
						ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT |
						ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC), 0);
	else
		ck_assert_int_eq(roce_modify_qp(qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN), 0);
}

/* Two connected QPs: q[0] on host 0 (the requester in most tests), q[1] on host 1. */
static void connect_pair(struct roce_qp **q, const struct conn *c)
{
	q[0] = mk_qp(0, c->type);
	q[1] = mk_qp(1, c->type);
	bring_up(q[0], 0, q[1], c);
	bring_up(q[1], 1, q[0], c);
}

static enum roce_qp_state qp_state(struct roce_qp *qp)
{
	struct roce_qp_attr a;

	roce_query_qp(qp, &a, NULL);
	return a.qp_state;
}

static uint64_t cnt(int h, const char *name)
{
	uint64_t v = roce_device_counter_by_name(fx.h[h].dev, name);

	ck_assert_msg(v != UINT64_MAX, "no counter %s", name);
	return v;
}

static uint64_t addr(int h, uint32_t off)
{
	return (uintptr_t)(fx.h[h].buf + off);
}

static void fill(int h, uint32_t off, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		fx.h[h].buf[off + i] = (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ seed);
}

/* Post one send WR with one SGE at host 0's @p loff (length @p len). */
static int post(struct roce_qp *qp, int h, enum roce_wr_opcode op, uint64_t wr_id, uint32_t loff,
		uint32_t len, uint32_t roff, unsigned int flags)
{
	struct roce_sge sge = { .addr = addr(h, loff), .length = len,
				.lkey = roce_mr_lkey(fx.h[h].mr) };
	struct roce_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = flags,
	};

	if (op == ROCE_WR_ATOMIC_CMP_AND_SWP || op == ROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = addr(1 - h, roff);
		wr.wr.atomic.rkey = roce_mr_rkey(fx.h[1 - h].mr);
	} else {
		wr.wr.rdma.remote_addr = addr(1 - h, roff);
		wr.wr.rdma.rkey = roce_mr_rkey(fx.h[1 - h].mr);
	}
	return roce_post_send(qp, &wr, NULL);
}

static int post_atomic(struct roce_qp *qp, enum roce_wr_opcode op, uint64_t wr_id, uint32_t loff,
		       uint32_t roff, uint64_t cmp_add, uint64_t swap)
{
	struct roce_sge sge = { .addr = addr(0, loff), .length = 8, .lkey = roce_mr_lkey(fx.h[0].mr) };
	struct roce_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
	};

	wr.wr.atomic.remote_addr = addr(1, roff);
	wr.wr.atomic.rkey = roce_mr_rkey(fx.h[1].mr);
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return roce_post_send(qp, &wr, NULL);
}

static int post_recv(struct roce_qp *qp, int h, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct roce_sge sge = { .addr = addr(h, off), .length = len, .lkey = roce_mr_lkey(fx.h[h].mr) };
	struct roce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return roce_post_recv(qp, &wr, NULL);
}

/* Fire the events of the next instant. false: nothing is left to happen (or the time limit). */
static bool step(void)
{
	roce_time_t next = roce_engine_next(fx.eng);

	if (next == ROCE_TIME_NEVER || next > MAX_TIME)
		return false;
	roce_engine_run(fx.eng, next);
	return true;
}

/* Run until @p cq has given @p n completions into @p wc, or nothing is left to happen. */
static int wait_wc(struct roce_cq *cq, int n, struct roce_wc *wc)
{
	int got = 0;

	for (;;) {
		int r = roce_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (got >= n || !step())
			return got;
	}
}

/* Run until nothing is left to happen (every timer idle). */
static void drain(void)
{
	while (step())
		;
}

static void run_until(roce_time_t t)
{
	roce_engine_run(fx.eng, t);
}

static void wc_ok(const struct roce_wc *wc, uint64_t wr_id, enum roce_wc_opcode op)
{
	ck_assert_msg(wc->status == ROCE_WC_SUCCESS, "wr %llu: %s",
		      (unsigned long long)wc->wr_id, roce_wc_status_name(wc->status));
	ck_assert_uint_eq(wc->wr_id, wr_id);
	ck_assert_int_eq(wc->opcode, op);
}

/* Tap the link into a temporary pcap; tap_read() gives its request/response frames back. */
static void tap_start(void)
{
	char err[256];

	snprintf(fx.tap_path, sizeof(fx.tap_path), "/tmp/test_transport_%d.pcap", (int)getpid());
	fx.tap = roce_pcap_create(fx.tap_path, err, sizeof(err));
	ck_assert_msg(fx.tap != NULL, "%s", err);
	roce_link_set_tap(fx.link, fx.tap);
}

struct tap_pkt {
	struct roce_pkt p;		/* headers (payload pointer not valid) */
	uint64_t ts_ns;			/* when it left the sender */
};

static int tap_read(struct tap_pkt *out, int max)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	char err[256];
	int n = 0;

	roce_link_set_tap(fx.link, NULL);
	ck_assert_int_eq(roce_pcap_close_writer(fx.tap), 0);
	fx.tap = NULL;
	r = roce_pcap_open(fx.tap_path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while (n < max && roce_pcap_next(r, &f) == 1) {
		ck_assert_int_eq(roce_wire_parse(f.data, f.caplen, 0, &out[n].p), 0);
		out[n].p.payload = NULL;
		out[n].ts_ns = f.ts_ns;
		n++;
	}
	roce_pcap_close(r);
	unlink(fx.tap_path);
	return n;
}

/* ---- end to end, byte-exact ---- */

/* SEND, SEND_WITH_IMM, SEND_WITH_INV: data, byte_len, flags and immediate in the receive WC. */
START_TEST(test_rc_send_family)
{
	static const enum roce_wr_opcode ops[] = { ROCE_WR_SEND, ROCE_WR_SEND_WITH_IMM,
						   ROCE_WR_SEND_WITH_INV };
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[4];

	fx_setup();
	connect_pair(q, &c);
	for (unsigned int i = 0; i < ROCE_DIM(ops); i++) {
		struct roce_sge sge = { .addr = addr(0, 0), .length = 3000,
					.lkey = roce_mr_lkey(fx.h[0].mr) };
		struct roce_send_wr wr = { .wr_id = 10 + i, .sg_list = &sge, .num_sge = 1,
					   .opcode = ops[i], .send_flags = ROCE_SEND_SIGNALED,
					   .imm_data = 0xdeadbe00 + i, .invalidate_rkey = 0x1234 };

		fill(0, 0, 3000, i);
		memset(fx.h[1].buf + 8192, 0xee, 4096);
		ck_assert_int_eq(post_recv(q[1], 1, 20 + i, 8192, 4000), 0);
		ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
		ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
		wc_ok(&wc[0], 10 + i, ROCE_WC_SEND);
		ck_assert_uint_eq(wc[0].qp_num, roce_qp_num(q[0]));
		ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, wc), 1);
		wc_ok(&wc[0], 20 + i, ROCE_WC_RECV);
		ck_assert_uint_eq(wc[0].byte_len, 3000);
		ck_assert_uint_eq(wc[0].qp_num, roce_qp_num(q[1]));
		ck_assert_mem_eq(fx.h[1].buf + 8192, fx.h[0].buf, 3000);
		ck_assert_uint_eq(fx.h[1].buf[8192 + 3000], 0xee);	/* nothing beyond */
		if (ops[i] == ROCE_WR_SEND_WITH_IMM) {
			ck_assert_uint_eq(wc[0].wc_flags, ROCE_WC_WITH_IMM);
			ck_assert_uint_eq(wc[0].imm_data, 0xdeadbe01);
		} else if (ops[i] == ROCE_WR_SEND_WITH_INV) {
			ck_assert_uint_eq(wc[0].wc_flags, ROCE_WC_WITH_INV);
			ck_assert_uint_eq(wc[0].imm_data, 0x1234);
		} else {
			ck_assert_uint_eq(wc[0].wc_flags, 0);
		}
	}
	drain();
	ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 4, wc), 0);
	ck_assert_int_eq(roce_poll_cq(fx.h[1].rcq, 4, wc), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/* RDMA_WRITE and RDMA_WRITE_WITH_IMM (which consumes a receive WQE and reports byte_len). */
START_TEST(test_rc_write)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	struct roce_sge sge = { .length = 5000 };
	struct roce_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = ROCE_WR_RDMA_WRITE_WITH_IMM,
				   .send_flags = ROCE_SEND_SIGNALED, .imm_data = 0xcafe };

	fx_setup();
	connect_pair(q, &c);
	sge.addr = addr(0, 0);
	sge.lkey = roce_mr_lkey(fx.h[0].mr);
	fill(0, 0, 5000, 3);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 1, 0, 5000, 65536, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	wc_ok(&wc[0], 1, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[1].buf + 65536, fx.h[0].buf, 5000);
	ck_assert_uint_eq(fx.h[1].buf[65536 + 5000], 0);
	ck_assert_int_eq(roce_poll_cq(fx.h[1].rcq, 2, wc), 0);	/* a WRITE is silent */

	fill(0, 0, 5000, 4);
	wr.wr.rdma.remote_addr = addr(1, 131072);
	wr.wr.rdma.rkey = roce_mr_rkey(fx.h[1].mr);
	ck_assert_int_eq(post_recv(q[1], 1, 77, 0, 16), 0);
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	wc_ok(&wc[0], 2, ROCE_WC_RDMA_WRITE);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, wc), 1);
	wc_ok(&wc[0], 77, ROCE_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(wc[0].byte_len, 5000);
	ck_assert_uint_eq(wc[0].imm_data, 0xcafe);
	ck_assert(wc[0].wc_flags & ROCE_WC_WITH_IMM);
	ck_assert_mem_eq(fx.h[1].buf + 131072, fx.h[0].buf, 5000);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * Headers follow what they are built from: the QP keeps prebuilt ones (tr_pkt_init_conn), so a
 * change of the NIC's ECN policy or of the address vector (SQD -> SQD) must show in the next
 * frame.
 */
START_TEST(test_rc_headers_follow_changes)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_SQD };
	struct roce_nic_qos qos;
	struct tap_pkt t[32];
	struct roce_qp *q[2];
	struct roce_wc wc[1];
	int n, seen = 0;

	fx_setup();
	connect_pair(q, &c);
	tap_start();
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 1, 0, 64, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);

	roce_device_qos(fx.h[0].dev, &qos);
	qos.ecn = true;
	ck_assert_int_eq(roce_device_set_qos(fx.h[0].dev, &qos), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 0, 64, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);

	ck_assert_int_eq(roce_modify_qp(q[0], &a, ROCE_QP_STATE), 0);
	drain();
	a.ah_attr.dip = fx.h[1].ip;
	a.ah_attr.ip_ver = 4;
	a.ah_attr.traffic_class = 26 << 2;
	a.ah_attr.hop_limit = 9;
	memcpy(a.ah_attr.dmac, fx.h[1].mac, 6);
	ck_assert_int_eq(roce_modify_qp(q[0], &a, ROCE_QP_AV), 0);
	a.qp_state = ROCE_QPS_RTS;
	ck_assert_int_eq(roce_modify_qp(q[0], &a, ROCE_QP_STATE), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 3, 0, 64, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	drain();

	n = tap_read(t, ROCE_DIM(t));
	for (int i = 0; i < n; i++) {
		const struct roce_pkt *p = &t[i].p;

		if (p->opcode != ROCE_OP_RC_RDMA_WRITE_ONLY)
			continue;
		ck_assert_uint_eq(p->ecn, seen == 0 ? 0 : 2);
		ck_assert_uint_eq(p->dscp, seen == 2 ? 26 : 0);
		ck_assert_uint_eq(p->ttl, seen == 2 ? 9 : 64);
		seen++;
	}
	ck_assert_int_eq(seen, 3);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * AckReq coalescing: a message with another WQE queued behind it does not ask for an ACK. If
 * the QP then stops starting messages (SQD), the message still completes at once, without a
 * local ACK timeout, and the WQE behind it waits for RTS.
 */
START_TEST(test_rc_ackreq_sqd)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	struct roce_qp_attr a = { .qp_state = ROCE_QPS_SQD };
	struct roce_sge sge[2];
	struct roce_send_wr wr[2];

	fx_setup();
	connect_pair(q, &c);
	for (int i = 0; i < 2; i++) {
		sge[i] = (struct roce_sge){ .addr = addr(0, (uint32_t)i * 64), .length = 64,
					    .lkey = roce_mr_lkey(fx.h[0].mr) };
		wr[i] = (struct roce_send_wr){ .wr_id = (uint64_t)i + 1, .sg_list = &sge[i],
					       .num_sge = 1, .opcode = ROCE_WR_RDMA_WRITE,
					       .send_flags = ROCE_SEND_SIGNALED };
		wr[i].wr.rdma.remote_addr = addr(1, 65536 + (uint32_t)i * 64);
		wr[i].wr.rdma.rkey = roce_mr_rkey(fx.h[1].mr);
	}
	wr[0].next = &wr[1];
	fill(0, 0, 128, 9);
	ck_assert_int_eq(roce_post_send(q[0], wr, NULL), 0);	/* the first leaves at once */
	ck_assert_int_eq(roce_modify_qp(q[0], &a, ROCE_QP_STATE), 0);
	run_until(roce_engine_now(fx.eng) + 100 * ROCE_US);	/* far below the ACK timeout */
	ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 2, wc), 1);
	wc_ok(&wc[0], 1, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[1].buf + 65536, fx.h[0].buf, 64);
	ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 0);
	a.qp_state = ROCE_QPS_RTS;
	ck_assert_int_eq(roce_modify_qp(q[0], &a, ROCE_QP_STATE), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	wc_ok(&wc[0], 2, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[1].buf + 65536 + 64, fx.h[0].buf + 64, 64);
	ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/* Post @p n signaled WRITEs of @p len bytes as one chain (all queued before any is sent). */
static void post_write_chain(struct roce_qp *qp, uint32_t n, uint32_t len, uint64_t wr_id)
{
	struct roce_sge sge[48];
	struct roce_send_wr wr[48];

	ck_assert_uint_le(n, 48);
	for (uint32_t i = 0; i < n; i++) {
		sge[i] = (struct roce_sge){ .addr = addr(0, i * len), .length = len,
					    .lkey = roce_mr_lkey(fx.h[0].mr) };
		wr[i] = (struct roce_send_wr){ .wr_id = wr_id + i, .sg_list = &sge[i], .num_sge = 1,
					       .opcode = ROCE_WR_RDMA_WRITE,
					       .send_flags = ROCE_SEND_SIGNALED,
					       .next = i + 1 < n ? &wr[i + 1] : NULL };
		wr[i].wr.rdma.remote_addr = addr(1, 65536 + i * len);
		wr[i].wr.rdma.rkey = roce_mr_rkey(fx.h[1].mr);
	}
	ck_assert_int_eq(roce_post_send(qp, wr, NULL), 0);
}

/*
 * AckReq (docs/transport.md): a message shorter than the PMTU (1024 here) asks only when the
 * queue drains, or when 16 packets or a PMTU of payload went without a request; a message of
 * a PMTU or more always asks. Every message completes, none through the ACK timeout.
 */
START_TEST(test_rc_ackreq_coalesce)
{
	static const struct {
		uint32_t n, len, acks;
	} chain[] = {
		{ 40, 64, 3 },		/* asks on the 16th, the 32nd (16 packets) and the last */
		{ 3, 600, 2 },		/* the 2nd (1 200 bytes without a request) and the last */
		{ 4, 1024, 4 },		/* a PMTU each: every one */
		{ 2, 3000, 2 },		/* three packets each: each last packet */
	};
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[48];
	uint64_t id = 1;

	fx_setup();
	connect_pair(q, &c);
	for (size_t k = 0; k < ROCE_DIM(chain); k++) {
		uint64_t acks = cnt(1, "ack_sent");
		int got = 0;

		fill(0, 0, chain[k].n * chain[k].len, (uint32_t)k + 20);
		post_write_chain(q[0], chain[k].n, chain[k].len, id);
		while (got < (int)chain[k].n) {
			int n = wait_wc(fx.h[0].scq, (int)chain[k].n - got, wc + got);

			ck_assert_int_gt(n, 0);
			got += n;
		}
		for (int i = 0; i < got; i++)
			wc_ok(&wc[i], id + (uint64_t)i, ROCE_WC_RDMA_WRITE);
		ck_assert_mem_eq(fx.h[1].buf + 65536, fx.h[0].buf, chain[k].n * chain[k].len);
		ck_assert_uint_eq(cnt(1, "ack_sent") - acks, chain[k].acks);
		id += chain[k].n;
	}
	ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 0);
	ck_assert_uint_eq(cnt(0, "retransmits"), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * A start PSN in the upper half of the 24-bit space (as a random sq_psn often is): moving to
 * RTS must set the requester's highest-sent PSN too, or every first transmission compares
 * below it and counts as a retransmit.
 */
START_TEST(test_rc_start_psn_not_retransmit)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[1];

	c.psn = 0xabcdef;
	fx_setup();
	connect_pair(q, &c);
	fill(0, 0, 20000, 5);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 1, 0, 20000, 65536, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	wc_ok(&wc[0], 1, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[1].buf + 65536, fx.h[0].buf, 20000);
	ck_assert_uint_eq(cnt(0, "retransmits"), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

START_TEST(test_rc_read)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;

	fx_setup();
	connect_pair(q, &c);
	fill(1, 4096, 10000, 5);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 9, 0, 10000, 4096, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 9, ROCE_WC_RDMA_READ);
	ck_assert_uint_eq(wc.byte_len, 10000);
	ck_assert_mem_eq(fx.h[0].buf, fx.h[1].buf + 4096, 10000);
	ck_assert_uint_eq(fx.h[0].buf[10000], 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/* CMP_AND_SWP equal and not equal, FETCH_AND_ADD: the original value and the memory. */
START_TEST(test_rc_atomics)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;
	uint64_t v = 1000, r;

	fx_setup();
	connect_pair(q, &c);
	memcpy(fx.h[1].buf + 64, &v, 8);
	/* not equal: memory unchanged, original returned */
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_CMP_AND_SWP, 1, 0, 64, 999, 5), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_COMP_SWAP);
	memcpy(&r, fx.h[0].buf, 8);
	ck_assert_uint_eq(r, 1000);
	memcpy(&r, fx.h[1].buf + 64, 8);
	ck_assert_uint_eq(r, 1000);
	/* equal: swapped */
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_CMP_AND_SWP, 2, 8, 64, 1000, 0x0123456789abcdefull), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 2, ROCE_WC_COMP_SWAP);
	memcpy(&r, fx.h[0].buf + 8, 8);
	ck_assert_uint_eq(r, 1000);
	memcpy(&r, fx.h[1].buf + 64, 8);
	ck_assert_uint_eq(r, 0x0123456789abcdefull);
	/* fetch and add, wrapping */
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_FETCH_AND_ADD, 3, 16, 64, ~0ull, 0), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 3, ROCE_WC_FETCH_ADD);
	memcpy(&r, fx.h[0].buf + 16, 8);
	ck_assert_uint_eq(r, 0x0123456789abcdefull);
	memcpy(&r, fx.h[1].buf + 64, 8);
	ck_assert_uint_eq(r, 0x0123456789abcdeeull);
	fx_teardown_qps(q, 2);
}
END_TEST

/* Sizes around MTU multiples (and 0), scattered over 3 SGEs on both sides, for SEND/WRITE/READ. */
static const uint32_t sizes[] = { 0, 1, 255, 1023, 1024, 1025, 2047, 2048, 2049, 3072, 4095,
				  4096, 4097, 8191, 65536 };

START_TEST(test_rc_sizes_sges)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;
	uint64_t id = 0;

	fx_setup();
	connect_pair(q, &c);
	for (unsigned int s = 0; s < ROCE_DIM(sizes); s++) {
		uint32_t len = sizes[s], a = len / 3, b = len / 2 - len / 3 + (len & 1);
		uint32_t lkey0 = roce_mr_lkey(fx.h[0].mr), lkey1 = roce_mr_lkey(fx.h[1].mr);
		/* sender: three pieces out of order in its buffer; receiver: three other pieces */
		struct roce_sge ss[3] = {
			{ addr(0, 200000), a, lkey0 }, { addr(0, 100000), b, lkey0 },
			{ addr(0, 300000), len - a - b, lkey0 },
		};
		struct roce_sge rs[3] = {
			{ addr(1, 500000), len - a, lkey1 }, { addr(1, 400000), 7, lkey1 },
			{ addr(1, 600000), a + 100, lkey1 },
		};
		struct roce_recv_wr rwr = { .wr_id = 1000 + s, .sg_list = rs, .num_sge = 3 };
		struct roce_send_wr wr = { .sg_list = ss, .num_sge = 3,
					   .send_flags = ROCE_SEND_SIGNALED };
		uint8_t *want = malloc(len + 1), *got = malloc(len + 107);

		ck_assert(want && got);
		for (int op = 0; op < 3; op++) {
			fill(0, 100000, 1u << 18, (uint32_t)(s * 3 + op));
			memcpy(want, fx.h[0].buf + 200000, a);
			memcpy(want + a, fx.h[0].buf + 100000, b);
			memcpy(want + a + b, fx.h[0].buf + 300000, len - a - b);
			memset(fx.h[1].buf + 400000, 0, 300000);
			wr.wr_id = ++id;
			if (op == 0) {
				wr.opcode = ROCE_WR_SEND;
				ck_assert_int_eq(roce_post_recv(q[1], &rwr, NULL), 0);
			} else {
				/* WRITE into 3 remote-contiguous bytes, then READ them back scattered */
				wr.opcode = ROCE_WR_RDMA_WRITE;
				wr.wr.rdma.remote_addr = addr(1, 700000);
				wr.wr.rdma.rkey = roce_mr_rkey(fx.h[1].mr);
			}
			ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
			ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
			wc_ok(&wc, id, op == 0 ? ROCE_WC_SEND : ROCE_WC_RDMA_WRITE);
			if (op == 0) {
				ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
				wc_ok(&wc, 1000 + s, ROCE_WC_RECV);
				ck_assert_uint_eq(wc.byte_len, len);
				/* gather the receive SGEs: len - a, then 7, then the rest */
				memcpy(got, fx.h[1].buf + 500000, len - a);
				memcpy(got + len - a, fx.h[1].buf + 400000, 7);
				memcpy(got + len - a + 7, fx.h[1].buf + 600000, a + 100);
				ck_assert_mem_eq(got, want, len);
			} else {
				ck_assert_mem_eq(fx.h[1].buf + 700000, want, len);
				if (op == 2) {
					memset(fx.h[0].buf + 100000, 0, 1u << 18);
					wr.opcode = ROCE_WR_RDMA_READ;
					wr.wr_id = ++id;
					ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
					ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
					wc_ok(&wc, id, ROCE_WC_RDMA_READ);
					ck_assert_uint_eq(wc.byte_len, len);
					memcpy(got, fx.h[0].buf + 200000, a);
					memcpy(got + a, fx.h[0].buf + 100000, b);
					memcpy(got + a + b, fx.h[0].buf + 300000, len - a - b);
					ck_assert_mem_eq(got, want, len);
				}
			}
		}
		free(want);
		free(got);
	}
	fx_teardown_qps(q, 2);
}
END_TEST

/* Inline sends take the data at post time: changing the buffer afterwards changes nothing. */
START_TEST(test_rc_inline)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;
	uint8_t want[200];

	fx_setup();
	connect_pair(q, &c);
	fill(0, 0, 200, 9);
	memcpy(want, fx.h[0].buf, 200);
	ck_assert_int_eq(post_recv(q[1], 1, 5, 4096, 256), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 1, 0, 200, 0,
			      ROCE_SEND_SIGNALED | ROCE_SEND_INLINE), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 0, 200, 8192,
			      ROCE_SEND_SIGNALED | ROCE_SEND_INLINE), 0);
	memset(fx.h[0].buf, 0x55, 200);
	/* too long to inline: refused */
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 3, 0, 257, 0, ROCE_SEND_INLINE), -EINVAL);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_SEND);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 2, ROCE_WC_RDMA_WRITE);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
	wc_ok(&wc, 5, ROCE_WC_RECV);
	ck_assert_mem_eq(fx.h[1].buf + 4096, want, 200);
	ck_assert_mem_eq(fx.h[1].buf + 8192, want, 200);
	fx_teardown_qps(q, 2);
}
END_TEST

/* Unsignaled WRs give no CQE; a later signaled one completes, and everything is executed. */
START_TEST(test_rc_unsignaled)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[8];

	fx_setup();
	connect_pair(q, &c);
	fill(0, 0, 8 * 1000, 11);
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, (uint64_t)i, (uint32_t)i * 1000,
				      1000, (uint32_t)i * 1000, 0), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 7, 7000, 1000, 7000, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 8, wc), 1);
	wc_ok(&wc[0], 7, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[1].buf, fx.h[0].buf, 8000);
	/* the send queue slots of the unsignaled WRs were released: a full queue's worth posts */
	for (int i = 0; i < 256; i++)
		ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 100, 0, 8, 0, 0), 0);
	drain();
	ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 8, wc), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * Fence: a fenced SEND after a READ leaves only once the READ's last response is in; without
 * the fence it follows the READ request at once.
 */
START_TEST(test_rc_fence)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	static struct tap_pkt pk[256];
	int n;

	for (int fence = 0; fence < 2; fence++) {
		int send_at = -1, last_resp = -1;

		fx_setup();
		connect_pair(q, &c);
		tap_start();
		ck_assert_int_eq(post_recv(q[1], 1, 1, 0, 64), 0);
		ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 1, 0, 16384, 0, ROCE_SEND_SIGNALED), 0);
		ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 2, 65536, 16, 0,
				      ROCE_SEND_SIGNALED | (fence ? ROCE_SEND_FENCE : 0)), 0);
		ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
		wc_ok(&wc[0], 1, ROCE_WC_RDMA_READ);
		wc_ok(&wc[1], 2, ROCE_WC_SEND);
		n = tap_read(pk, 256);
		for (int i = 0; i < n; i++) {
			if (pk[i].p.opcode == ROCE_OP_RC_SEND_ONLY)
				send_at = i;
			if (pk[i].p.opcode == ROCE_OP_RC_RDMA_READ_RESPONSE_LAST)
				last_resp = i;
		}
		ck_assert_int_ge(send_at, 0);
		ck_assert_int_ge(last_resp, 0);
		if (fence)
			ck_assert_int_gt(send_at, last_resp);
		else
			ck_assert_int_eq(send_at, 1);	/* right behind the READ request */
		fx_teardown_qps(q, 2);
	}
}
END_TEST

/* UC: SEND and WRITE arrive; the sender completes without any ACK on the wire. */
START_TEST(test_uc)
{
	struct conn c = conn_defaults(ROCE_QPT_UC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	struct roce_link_stats ls;

	fx_setup();
	connect_pair(q, &c);
	fill(0, 0, 5000, 12);
	ck_assert_int_eq(post_recv(q[1], 1, 3, 65536, 8192), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 1, 0, 5000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 0, 5000, 131072, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	wc_ok(&wc[0], 1, ROCE_WC_SEND);
	wc_ok(&wc[1], 2, ROCE_WC_RDMA_WRITE);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, wc), 1);
	wc_ok(&wc[0], 3, ROCE_WC_RECV);
	ck_assert_uint_eq(wc[0].byte_len, 5000);
	drain();
	ck_assert_mem_eq(fx.h[1].buf + 65536, fx.h[0].buf, 5000);
	ck_assert_mem_eq(fx.h[1].buf + 131072, fx.h[0].buf, 5000);
	roce_link_stats(fx.link, 1, &ls);
	ck_assert_uint_eq(ls.tx_frames, 0);
	/* UC has no READ or atomics */
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 4, 0, 8, 0, 0), -EINVAL);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_ATOMIC_FETCH_AND_ADD, 4, 0, 8, 0, 0), -EINVAL);
	fx_teardown_qps(q, 2);
}
END_TEST

/* UD messages are bounded by the port's active MTU (4096 here), not RC's 1024 default. */
START_TEST(test_ud_port_mtu)
{
	struct conn c = conn_defaults(ROCE_QPT_UD);
	struct roce_qp *q[2];
	struct roce_wc wc;
	struct roce_ah_attr aa = { .ip_ver = 4 };
	struct roce_ah *ah;
	struct roce_sge sge = { .length = 3000 };
	struct roce_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = ROCE_WR_SEND, .send_flags = ROCE_SEND_SIGNALED };

	fx_setup();
	connect_pair(q, &c);
	aa.dip = fx.h[1].ip;
	memcpy(aa.dmac, fx.h[1].mac, 6);
	ah = roce_create_ah(fx.h[0].pd, &aa);
	ck_assert_ptr_nonnull(ah);
	sge.addr = addr(0, 0);
	sge.lkey = roce_mr_lkey(fx.h[0].mr);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = roce_qp_num(q[1]);
	wr.wr.ud.remote_qkey = QKEY;
	fill(0, 0, 3000, 17);
	ck_assert_int_eq(post_recv(q[1], 1, 8, 0, 3040), 0);
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_SEND);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
	wc_ok(&wc, 8, ROCE_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 3040);
	ck_assert_mem_eq(fx.h[1].buf + 40, fx.h[0].buf, 3000);
	roce_destroy_ah(ah);
	fx_teardown_qps(q, 2);
}
END_TEST

/* UD: the 40-byte GRH area (IPv4 header in its last 20 bytes), src_qp, Q_Key check. */
START_TEST(test_ud)
{
	struct conn c = conn_defaults(ROCE_QPT_UD);
	struct roce_qp *q[2];
	struct roce_wc wc;
	struct roce_ah_attr aa = { .ip_ver = 4 };
	struct roce_ah *ah;
	struct roce_sge sge = { .length = 1000 };
	struct roce_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = ROCE_WR_SEND_WITH_IMM, .send_flags = ROCE_SEND_SIGNALED,
				   .imm_data = 0x77 };
	const uint8_t *grh;

	fx_setup();
	connect_pair(q, &c);
	aa.dip = fx.h[1].ip;
	memcpy(aa.dmac, fx.h[1].mac, 6);
	ah = roce_create_ah(fx.h[0].pd, &aa);
	ck_assert_ptr_nonnull(ah);
	sge.addr = addr(0, 0);
	sge.lkey = roce_mr_lkey(fx.h[0].mr);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = roce_qp_num(q[1]);
	wr.wr.ud.remote_qkey = QKEY;
	fill(0, 0, 1000, 13);
	memset(fx.h[1].buf, 0xaa, 2048);
	ck_assert_int_eq(post_recv(q[1], 1, 8, 0, 1040), 0);
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_SEND);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
	wc_ok(&wc, 8, ROCE_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, 1040);
	ck_assert_uint_eq(wc.src_qp, roce_qp_num(q[0]));
	ck_assert(wc.wc_flags & ROCE_WC_GRH);
	ck_assert(wc.wc_flags & ROCE_WC_WITH_IMM);
	ck_assert_uint_eq(wc.imm_data, 0x77);
	grh = fx.h[1].buf;
	ck_assert_uint_eq(grh[20], 0x45);			/* IPv4, IHL 5 */
	ck_assert_uint_eq(grh[20 + 9], 17);			/* UDP */
	ck_assert_mem_eq(grh + 20 + 12, fx.h[0].ip.b, 4);	/* source address */
	ck_assert_mem_eq(grh + 20 + 16, fx.h[1].ip.b, 4);	/* destination address */
	ck_assert_mem_eq(fx.h[1].buf + 40, fx.h[0].buf, 1000);
	ck_assert_uint_eq(fx.h[1].buf[1040], 0xaa);

	/* a wrong Q_Key is dropped and counted; the receive stays posted */
	wr.wr.ud.remote_qkey = 0x22;
	wr.wr_id = 2;
	ck_assert_int_eq(post_recv(q[1], 1, 9, 4096, 1040), 0);
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	drain();
	ck_assert_uint_eq(cnt(1, "rx_qkey_violations"), 1);
	ck_assert_int_eq(roce_poll_cq(fx.h[1].rcq, 1, &wc), 0);
	/* bigger than the port's active MTU (4096; UD has no path MTU of its own): refused locally */
	sge.length = 4097;
	wr.wr_id = 3;
	wr.wr.ud.remote_qkey = QKEY;
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 2);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 3);
	ck_assert_int_eq(wc.status, ROCE_WC_LOC_LEN_ERR);
	ck_assert_int_eq(roce_destroy_ah(ah), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/* Two QPs sharing an SRQ: receives are taken from it in order, whichever QP the SEND hits. */
START_TEST(test_srq)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[4];
	struct roce_srq *srq;
	struct roce_wc wc[4];
	struct roce_sge sge;
	struct roce_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };

	fx_setup();
	srq = roce_create_srq(fx.h[1].pd, 16, 1);
	ck_assert_ptr_nonnull(srq);
	q[0] = mk_qp(0, ROCE_QPT_RC);
	q[2] = mk_qp(0, ROCE_QPT_RC);
	q[1] = mk_qp_srq(1, ROCE_QPT_RC, srq, NULL);
	q[3] = mk_qp_srq(1, ROCE_QPT_RC, srq, NULL);
	bring_up(q[0], 0, q[1], &c);
	bring_up(q[1], 1, q[0], &c);
	bring_up(q[2], 0, q[3], &c);
	bring_up(q[3], 1, q[2], &c);
	ck_assert_int_eq(post_recv(q[1], 1, 1, 0, 64), -EINVAL);	/* it has an SRQ */
	for (int i = 0; i < 3; i++) {
		sge = (struct roce_sge){ addr(1, (uint32_t)i * 4096), 4096, roce_mr_lkey(fx.h[1].mr) };
		rwr.wr_id = 100 + (uint64_t)i;
		ck_assert_int_eq(roce_post_srq_recv(srq, &rwr, NULL), 0);
	}
	fill(0, 0, 3000, 14);
	ck_assert_int_eq(post(q[2], 0, ROCE_WR_SEND, 1, 0, 1000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, wc), 1);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 2, 1000, 2000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, wc + 1), 1);
	wc_ok(&wc[0], 100, ROCE_WC_RECV);
	ck_assert_uint_eq(wc[0].qp_num, roce_qp_num(q[3]));
	wc_ok(&wc[1], 101, ROCE_WC_RECV);
	ck_assert_uint_eq(wc[1].qp_num, roce_qp_num(q[1]));
	ck_assert_uint_eq(wc[1].byte_len, 2000);
	ck_assert_mem_eq(fx.h[1].buf, fx.h[0].buf, 1000);
	ck_assert_mem_eq(fx.h[1].buf + 4096, fx.h[0].buf + 1000, 2000);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	ck_assert_int_eq(roce_destroy_srq(srq), -EBUSY);
	ck_assert_int_eq(roce_destroy_qp(q[1]), 0);
	ck_assert_int_eq(roce_destroy_qp(q[3]), 0);
	ck_assert_int_eq(roce_destroy_srq(srq), 0);
	q[1] = q[2];
	fx_teardown_qps(q, 2);
}
END_TEST

/* ---- error paths ---- */

/* Both QPs in ERR; a later WR and the posted receives flush with WR_FLUSH_ERR. */
static void check_both_err_and_flush(struct roce_qp **q)
{
	struct roce_wc wc;

	ck_assert_int_eq(qp_state(q[0]), ROCE_QPS_ERR);
	ck_assert_int_eq(qp_state(q[1]), ROCE_QPS_ERR);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 99, 0, 8, 0, 0), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 99);
	ck_assert_int_eq(wc.status, ROCE_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(post_recv(q[1], 1, 98, 0, 8), 0);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 98);
	ck_assert_int_eq(wc.status, ROCE_WC_WR_FLUSH_ERR);
}

/*
 * The remote access failures, one per loop index: bad rkey, out of bounds, the MR's missing
 * right (NAK remote access error); the QP's missing right (NAK invalid request, as rxe answers
 * in shared/pcap/rxe/rc_nak_inv_req_no_write.pcap: the QP does not take the operation at all).
 */
enum acc_case {
	ACC_WRITE_BAD_RKEY, ACC_READ_BAD_RKEY, ACC_ATOMIC_BAD_RKEY,
	ACC_WRITE_OOB, ACC_READ_OOB, ACC_ATOMIC_OOB, ACC_WRITE_OOB_LAST_PKT,
	ACC_WRITE_NO_RIGHT, ACC_READ_NO_RIGHT, ACC_ATOMIC_NO_RIGHT,
	ACC_QP_NO_WRITE_RIGHT, ACC_QP_NO_READ_RIGHT, ACC_QP_NO_ATOMIC_RIGHT,
	ACC_NUM,
};

START_TEST(test_rc_remote_access)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[4];
	struct roce_mr *mr_local = NULL;
	struct roce_sge sge;
	struct roce_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .send_flags = ROCE_SEND_SIGNALED };
	enum acc_case k = (enum acc_case)_i;
	uint32_t rkey, len = 100;
	uint64_t raddr;

	fx_setup();
	if (k == ACC_QP_NO_WRITE_RIGHT)
		c.access = ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC;
	if (k == ACC_QP_NO_READ_RIGHT)
		c.access = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_ATOMIC;
	if (k == ACC_QP_NO_ATOMIC_RIGHT)
		c.access = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ;
	connect_pair(q, &c);
	/* a region of 64 KiB at the start of host 1's buffer, with only some rights */
	if (k >= ACC_WRITE_NO_RIGHT && k <= ACC_ATOMIC_NO_RIGHT) {
		unsigned int acc = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
				   ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC;

		acc &= ~(unsigned int)(k == ACC_WRITE_NO_RIGHT ? ROCE_ACCESS_REMOTE_WRITE :
				       k == ACC_READ_NO_RIGHT ? ROCE_ACCESS_REMOTE_READ :
				       ROCE_ACCESS_REMOTE_ATOMIC);
		mr_local = roce_reg_mr(fx.h[1].pd, fx.h[1].buf + BUF_SIZE - 65536, 65536, acc);
		ck_assert_ptr_nonnull(mr_local);
		rkey = roce_mr_rkey(mr_local);
		raddr = addr(1, BUF_SIZE - 65536);
	} else {
		rkey = roce_mr_rkey(fx.h[1].mr);
		raddr = addr(1, 0);
	}
	if (k <= ACC_ATOMIC_BAD_RKEY)
		rkey ^= 0x5a00;
	if (k == ACC_WRITE_OOB || k == ACC_READ_OOB || k == ACC_ATOMIC_OOB)
		raddr = addr(1, BUF_SIZE - 8) + 8;
	if (k == ACC_WRITE_OOB_LAST_PKT) {
		raddr = addr(1, BUF_SIZE - 3000);	/* 3001 bytes: the last byte is outside */
		len = 3001;
	}
	sge = (struct roce_sge){ addr(0, 0), len, roce_mr_lkey(fx.h[0].mr) };
	switch (k) {
	case ACC_READ_BAD_RKEY: case ACC_READ_OOB: case ACC_READ_NO_RIGHT: case ACC_QP_NO_READ_RIGHT:
		wr.opcode = ROCE_WR_RDMA_READ;
		break;
	case ACC_ATOMIC_BAD_RKEY: case ACC_ATOMIC_OOB: case ACC_ATOMIC_NO_RIGHT:
	case ACC_QP_NO_ATOMIC_RIGHT:
		wr.opcode = ROCE_WR_ATOMIC_FETCH_AND_ADD;
		sge.length = 8;
		break;
	default:
		wr.opcode = ROCE_WR_RDMA_WRITE;
	}
	if (wr.opcode == ROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	fill(0, 0, 4096, 1);
	ck_assert_int_eq(post_recv(q[1], 1, 50, 0, 64), 0);	/* flushed when q[1] errs */
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	wr.wr_id = 2;					/* a second WR behind it: flushed */
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 1);
	ck_assert_msg(wc[0].status == (k >= ACC_QP_NO_WRITE_RIGHT ? ROCE_WC_REM_INV_REQ_ERR :
				       ROCE_WC_REM_ACCESS_ERR), "case %d: %s", k,
		      roce_wc_status_name(wc[0].status));
	ck_assert_uint_eq(wc[1].wr_id, 2);
	ck_assert_int_eq(wc[1].status, ROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(cnt(1, k >= ACC_QP_NO_WRITE_RIGHT ? "remote_invalid_req_nak_sent" :
			      "remote_access_nak_sent"), 1);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, wc), 1);
	ck_assert_uint_eq(wc[0].wr_id, 50);
	ck_assert_int_eq(wc[0].status, ROCE_WC_WR_FLUSH_ERR);
	/* nothing was written outside: the MR's neighbour bytes are still 0 */
	if (k == ACC_WRITE_OOB_LAST_PKT)
		ck_assert_uint_eq(fx.h[1].buf[BUF_SIZE - 3000], 0);
	check_both_err_and_flush(q);
	if (mr_local != NULL)
		ck_assert_int_eq(roce_dereg_mr(mr_local), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * The device's MR and QP tables grow as they fill: keys and QP numbers are handed out as
 * before, entries survive each growth, and a key past the table (never registered) or of a
 * deregistered region is refused.
 */
START_TEST(test_verbs_tables)
{
	enum { NMR = 100, NQP = 40 };
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_mr *mr[NMR];
	struct roce_qp *q[2], *qp[NQP];
	struct roce_wc wc[2];
	struct roce_sge sge;
	struct roce_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = ROCE_WR_RDMA_WRITE, .send_flags = ROCE_SEND_SIGNALED };
	uint32_t first;

	fx_setup();
	connect_pair(q, &c);
	/* 100 regions of 4 KiB on host 1: the table passes 16, 32, 64 and 128 entries */
	for (int i = 0; i < NMR; i++) {
		mr[i] = roce_reg_mr(fx.h[1].pd, fx.h[1].buf + (size_t)i * 4096, 4096,
				    ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE);
		ck_assert_ptr_nonnull(mr[i]);
		ck_assert_uint_eq(roce_mr_rkey(mr[i]) >> 8, (roce_mr_rkey(fx.h[1].mr) >> 8) + 1 + i);
	}
	for (int i = 10; i < 20; i++)
		ck_assert_int_eq(roce_dereg_mr(mr[i]), 0);
	/* the next index after the last one, not a freed one */
	mr[10] = roce_reg_mr(fx.h[1].pd, fx.h[1].buf + 10 * 4096, 4096,
			     ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(mr[10]);
	ck_assert_uint_eq(roce_mr_rkey(mr[10]) >> 8, (roce_mr_rkey(mr[NMR - 1]) >> 8) + 1);

	/* 40 more QPs on host 0: numbers in a row across the QP table's growths */
	first = roce_qp_num(q[0]);
	for (int i = 0; i < NQP; i++) {
		qp[i] = mk_qp_srq(0, ROCE_QPT_RC, NULL, NULL);
		ck_assert_uint_eq(roce_qp_num(qp[i]), first + 1 + (uint32_t)i);
	}

	/* WRITEs through the first region and the last: both entries outlived the growths */
	fill(0, 0, 4096, 9);
	sge = (struct roce_sge){ addr(0, 0), 4096, roce_mr_lkey(fx.h[0].mr) };
	for (int i = 0; i < NMR; i += NMR - 1) {
		wr.wr.rdma.remote_addr = addr(1, (uint32_t)i * 4096);
		wr.wr.rdma.rkey = roce_mr_rkey(mr[i]);
		ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
		ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
		wc_ok(&wc[0], 1, ROCE_WC_RDMA_WRITE);
		ck_assert_mem_eq(fx.h[1].buf + (size_t)i * 4096, fx.h[0].buf, 4096);
	}

	/* a key whose index is past the table: refused (the QP pair is then in error) */
	wr.wr_id = 2;
	wr.wr.rdma.rkey = 4000u << 8 | (roce_mr_rkey(mr[0]) & 0xff);
	wr.wr.rdma.remote_addr = addr(1, 0);
	ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	ck_assert_uint_eq(wc[0].wr_id, 2);
	ck_assert_int_eq(wc[0].status, ROCE_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(cnt(1, "remote_access_nak_sent"), 1);

	for (int i = 0; i < NQP; i++)
		ck_assert_int_eq(roce_destroy_qp(qp[i]), 0);
	for (int i = 0; i < NMR; i++)
		if (i < 11 || i >= 20)
			ck_assert_int_eq(roce_dereg_mr(mr[i]), 0);
	fx_teardown_qps(q, 2);
}
END_TEST

/* A misaligned atomic: NAK invalid request, REM_INV_REQ_ERR, memory untouched. */
START_TEST(test_rc_atomic_misaligned)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;

	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 68, 5, 0), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	ck_assert_int_eq(wc.status, ROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(cnt(1, "remote_invalid_req_nak_sent"), 1);
	for (int i = 60; i < 80; i++)
		ck_assert_uint_eq(fx.h[1].buf[i], 0);
	check_both_err_and_flush(q);
	fx_teardown_qps(q, 2);
}
END_TEST

/* A SEND longer than the receive buffer: LOC_LEN_ERR there, REM_INV_REQ_ERR at the sender. */
START_TEST(test_rc_recv_too_small)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;

	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(post_recv(q[1], 1, 7, 0, 2000), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 1, 0, 3000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_int_eq(wc.status, ROCE_WC_LOC_LEN_ERR);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 1);
	ck_assert_int_eq(wc.status, ROCE_WC_REM_INV_REQ_ERR);
	check_both_err_and_flush(q);
	fx_teardown_qps(q, 2);
}
END_TEST

/* No receive and rnr_retry 0: RNR_RETRY_EXC_ERR after one RNR NAK. */
START_TEST(test_rc_rnr_exceeded)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];

	c.rnr_retry = 0;
	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 1, 0, 100, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 2, 0, 100, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	ck_assert_int_eq(wc[0].status, ROCE_WC_RNR_RETRY_EXC_ERR);
	ck_assert_int_eq(wc[1].status, ROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(cnt(1, "rnr_nak_sent"), 1);
	ck_assert_uint_eq(cnt(0, "rnr_nak_retry_err"), 1);
	ck_assert_uint_eq(cnt(0, "rnr_retry_exceeded_err"), 1);
	ck_assert_int_eq(qp_state(q[0]), ROCE_QPS_ERR);
	/* an RNR NAK is not fatal for the responder */
	ck_assert_int_eq(qp_state(q[1]), ROCE_QPS_RTS);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * rnr_retry 3, min_rnr_timer 12 (0.64 ms): the receive is posted after two RNR waits, the third
 * retry succeeds; each wait lasts 0.64 ms of virtual time from the NAK's arrival.
 */
START_TEST(test_rc_rnr_recovers)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;
	static struct tap_pkt pk[64];
	uint64_t nak_ts[8], send_ts[8];
	int n, nn = 0, ns = 0;

	c.rnr_retry = 3;
	c.min_rnr_timer = 12;
	ck_assert_uint_eq(roce_rnr_timer_ns(12), 640000);
	fx_setup();
	connect_pair(q, &c);
	tap_start();
	fill(0, 0, 100, 3);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 1, 0, 100, 0, ROCE_SEND_SIGNALED), 0);
	run_until(1500 * ROCE_US);	/* NAKs at ~0, ~0.64 and ~1.28 ms */
	ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 1, &wc), 0);
	ck_assert_int_eq(post_recv(q[1], 1, 4, 4096, 128), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_SEND);
	ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
	wc_ok(&wc, 4, ROCE_WC_RECV);
	ck_assert_mem_eq(fx.h[1].buf + 4096, fx.h[0].buf, 100);
	ck_assert_uint_eq(cnt(1, "rnr_nak_sent"), 3);
	ck_assert_uint_eq(cnt(0, "rnr_retry_exceeded_err"), 0);
	n = tap_read(pk, 64);
	for (int i = 0; i < n; i++) {
		if (pk[i].p.opcode == ROCE_OP_RC_SEND_ONLY && ns < 8)
			send_ts[ns++] = pk[i].ts_ns;
		if (pk[i].p.opcode == ROCE_OP_RC_ACKNOWLEDGE &&
		    roce_aeth_kind(pk[i].p.aeth.syndrome) == ROCE_AETH_RNR_NAK && nn < 8) {
			ck_assert_uint_eq(pk[i].p.aeth.syndrome & 0x1f, 12);	/* the timer code */
			nak_ts[nn++] = pk[i].ts_ns;
		}
	}
	ck_assert_int_eq(ns, 4);
	ck_assert_int_eq(nn, 3);
	for (int i = 0; i < 3; i++) {
		uint64_t wait = send_ts[i + 1] - nak_ts[i];

		/* 640 us after the NAK left, plus its flight (a few ns + 500 ns), no more */
		ck_assert_msg(wait >= 640000 && wait <= 641000, "RNR wait %d: %llu ns", i,
			      (unsigned long long)wait);
	}
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * retry_cnt 3, timeout 10 (4.194 ms): every ACK dropped for longer than 4 timeouts gives
 * RETRY_EXC_ERR after exactly 3 retries; dropped for 2.5 timeouts the WRITE completes.
 */
START_TEST(test_rc_retry_cnt)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	roce_time_t to = (4096 * ROCE_NS) << 10;
	bool exceed = _i == 0;
	struct roce_link_impair imp = { .drop_acks_from = 0,
					.drop_acks_until = exceed ? 5 * to : 5 * to / 2 };

	c.retry_cnt = 3;
	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	fill(0, 0, 3000, 2);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 1, 0, 3000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 0, 3000, 8192, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	if (exceed) {
		ck_assert_int_eq(wc[0].status, ROCE_WC_RETRY_EXC_ERR);
		ck_assert_int_eq(wc[1].status, ROCE_WC_WR_FLUSH_ERR);
		/* the first timeout and 3 retries' timeouts; each retry resends both WRITEs */
		ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 4);
		ck_assert_uint_eq(cnt(0, "retransmits"), 3 * 6);
		ck_assert_uint_eq(cnt(0, "retry_exceeded_err"), 1);
		ck_assert_int_eq(qp_state(q[0]), ROCE_QPS_ERR);
		/* failed at the 4th timeout, 4 * to after the send */
		ck_assert_uint_ge(roce_engine_now(fx.eng), 4 * to);
		ck_assert_uint_lt(roce_engine_now(fx.eng), 4 * to + 100 * ROCE_US);
	} else {
		wc_ok(&wc[0], 1, ROCE_WC_RDMA_WRITE);
		wc_ok(&wc[1], 2, ROCE_WC_RDMA_WRITE);
		ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 3);
		ck_assert_uint_eq(cnt(0, "retry_exceeded_err"), 0);
		ck_assert_mem_eq(fx.h[1].buf + 8192, fx.h[0].buf, 3000);
		/* the responder saw the resent WRITEs as duplicates and did not execute them twice */
		ck_assert_uint_ge(cnt(1, "duplicate_request"), 6);
	}
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * roce_qp_wait() says what a requester waits on: nothing; an RNR NAK's timer (min_rnr_timer 12:
 * 640 us after the NAK arrived); ACKs, with its ACK timeout's expiry and the retries left (the
 * ACKs dropped for 1.5 timeouts: after the first timeout one retry fewer, a timeout ahead).
 */
START_TEST(test_rc_wait)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	roce_time_t to = (4096 * ROCE_NS) << c.timeout, t0;
	struct roce_link_impair imp = { 0 };
	struct roce_qp_wait w;
	struct roce_qp *q[2];
	struct roce_wc wc;

	c.min_rnr_timer = 12;
	fx_setup();
	connect_pair(q, &c);
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_IDLE);
	ck_assert_uint_eq(w.until, ROCE_TIME_NEVER);

	/* a SEND with no receive posted: the RNR NAK, then its timer */
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 1, 0, 100, 0, ROCE_SEND_SIGNALED), 0);
	while (cnt(0, "rnr_nak_retry_err") == 0)
		ck_assert(step());
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_RNR);
	ck_assert_uint_eq(w.until, roce_engine_now(fx.eng) + 640 * ROCE_US);
	ck_assert_int_eq(post_recv(q[1], 1, 4, 4096, 128), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_SEND);
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_IDLE);

	/* a WRITE whose ACKs are lost: the ACK timer, then a retry fewer */
	t0 = roce_engine_now(fx.eng);
	imp.drop_acks_from = t0;
	imp.drop_acks_until = t0 + 3 * to / 2;
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 0, 3000, 0, ROCE_SEND_SIGNALED), 0);
	run_until(t0 + 50 * ROCE_US);
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_ACK);
	ck_assert_uint_eq(w.retries_left, c.retry_cnt);
	ck_assert_uint_ge(w.until, t0 + to);		/* armed when the WRITE left */
	ck_assert_uint_lt(w.until, t0 + to + ROCE_US);
	run_until(t0 + to + 50 * ROCE_US);
	ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 1);
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_ACK);
	ck_assert_uint_eq(w.retries_left, c.retry_cnt - 1);
	ck_assert_uint_ge(w.until, t0 + 2 * to);	/* re-armed by the retry */
	ck_assert_uint_lt(w.until, t0 + 2 * to + ROCE_US);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 2, ROCE_WC_RDMA_WRITE);
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_IDLE);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * A requester held by its rate limiter: DCQCN capped at 1 Gb/s (rpg_max_rate) spaces a WRITE's
 * packets by their time at that rate; roce_qp_wait() gives the rate and when the next may go.
 */
START_TEST(test_rc_wait_rate)
{
	const char *kv[] = { "rpg_max_rate=1000" };
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp_stats st;
	struct roce_qp_wait w;
	struct roce_qp *q[2];
	struct roce_wc wc;
	char err[128];
	roce_time_t t0;

	fx_setup();
	ck_assert_int_eq(roce_device_set_cc(fx.h[0].dev, "dcqcn", kv, 1, err, sizeof(err)), 0);
	connect_pair(q, &c);
	t0 = roce_engine_now(fx.eng);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 1, 0, 8192, 0, ROCE_SEND_SIGNALED), 0);
	do {
		ck_assert(step());
		roce_qp_stats(q[0], &st);
	} while (st.tx_pkts == 0);
	roce_qp_wait(q[0], &w);
	ck_assert_int_eq(w.kind, ROCE_QP_WAIT_RATE);
	ck_assert_uint_eq(w.rate_bps, 1000000000);
	/*
	 * the first packet left at once: 1024 bytes, RETH, BTH, ICRC, UDP, IPv4, Ethernet, FCS,
	 * preamble and gap are 1122 bytes on the wire, 8.976 us at 1 Gb/s
	 */
	ck_assert_uint_gt(w.until, roce_engine_now(fx.eng));
	ck_assert_uint_eq(w.until, t0 + 8976 * ROCE_NS);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_RDMA_WRITE);
	fx_teardown_qps(q, 2);
}
END_TEST

/* Implied NAK: the READ response is lost, the later WRITE's ACK arrives: the READ is resent. */
START_TEST(test_rc_implied_nak)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	struct roce_link_impair imp = { .drop_nth = 1 };	/* host 1's first frame: the READ response */

	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	fill(1, 0, 500, 6);
	fill(0, 4096, 500, 7);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 1, 0, 500, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 4096, 500, 4096, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	wc_ok(&wc[0], 1, ROCE_WC_RDMA_READ);
	wc_ok(&wc[1], 2, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[0].buf, fx.h[1].buf, 500);
	ck_assert_mem_eq(fx.h[1].buf + 4096, fx.h[0].buf + 4096, 500);
	ck_assert_uint_eq(cnt(0, "implied_nak_seq_err"), 1);
	ck_assert_uint_eq(cnt(0, "local_ack_timeout_err"), 0);	/* no need to wait for a timeout */
	ck_assert_uint_ge(cnt(0, "retransmits"), 1);
	fx_teardown_qps(q, 2);
}
END_TEST

/* Every frame duplicated both ways: ghost ACKs ignored, duplicates answered, atomics once. */
START_TEST(test_rc_duplicates)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[8];
	struct roce_link_impair imp = { .dup = 1.0 };
	uint64_t v;

	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 0, &imp), 0);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	fill(0, 0, 3000, 8);
	fill(1, 8192, 3000, 9);
	ck_assert_int_eq(post_recv(q[1], 1, 1, 65536, 4096), 0);
	ck_assert_int_eq(post_recv(q[1], 1, 2, 65536 + 4096, 4096), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 1, 0, 3000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, 2, 0, 3000, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_FETCH_AND_ADD, 3, 16384, 32768, 5, 0), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 4, 4096, 3000, 8192, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_FETCH_AND_ADD, 5, 16392, 32768, 7, 0), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 5, wc), 5);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(wc[i].status, ROCE_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i + 1);
	}
	drain();
	ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 8, wc), 0);
	ck_assert_int_eq(roce_poll_cq(fx.h[1].rcq, 8, wc), 1);	/* one receive used, once */
	wc_ok(&wc[0], 1, ROCE_WC_RECV);
	memcpy(&v, fx.h[1].buf + 32768, 8);
	ck_assert_uint_eq(v, 12);
	memcpy(&v, fx.h[0].buf + 16384, 8);
	ck_assert_uint_eq(v, 0);
	memcpy(&v, fx.h[0].buf + 16392, 8);
	ck_assert_uint_eq(v, 5);
	ck_assert_mem_eq(fx.h[0].buf + 4096, fx.h[1].buf + 8192, 3000);
	ck_assert_uint_gt(cnt(0, "ghost_ack"), 0);
	ck_assert_uint_gt(cnt(1, "duplicate_request"), 0);
	ck_assert_uint_eq(cnt(1, "duplicate_atomic"), 2);
	ck_assert_uint_eq(cnt(0, "retry_exceeded_err"), 0);
	ck_assert_int_eq(qp_state(q[0]), ROCE_QPS_RTS);
	ck_assert_int_eq(qp_state(q[1]), ROCE_QPS_RTS);
	fx_teardown_qps(q, 2);
}
END_TEST

/* A middle READ response lost: the re-issued READ asks only for the rest (PSN, VA, length). */
START_TEST(test_rc_partial_read_retry)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc;
	struct roce_link_impair imp = { .drop_nth = 4 };	/* the 4th of 8 responses */
	static struct tap_pkt pk[64];
	int n, nreq = 0;

	fx_setup();
	connect_pair(q, &c);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	tap_start();
	fill(1, 0, 8192, 10);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 1, 0, 8192, 0, ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
	wc_ok(&wc, 1, ROCE_WC_RDMA_READ);
	ck_assert_mem_eq(fx.h[0].buf, fx.h[1].buf, 8192);
	ck_assert_uint_eq(cnt(0, "read_retries"), 1);
	n = tap_read(pk, 64);
	for (int i = 0; i < n; i++) {
		if (pk[i].p.opcode != ROCE_OP_RC_RDMA_READ_REQUEST)
			continue;
		if (nreq++ == 0) {
			ck_assert_uint_eq(pk[i].p.psn, c.psn);
			ck_assert_uint_eq(pk[i].p.reth.dmalen, 8192);
		} else {
			ck_assert_uint_eq(pk[i].p.psn, c.psn + 3);
			ck_assert_uint_eq(pk[i].p.reth.va, addr(1, 3 * 1024));
			ck_assert_uint_eq(pk[i].p.reth.dmalen, 5 * 1024);
		}
	}
	ck_assert_int_eq(nreq, 2);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * A lost Atomic ACK, then a lost READ response, each with a WRITE behind: the answers to the
 * resent atomic and to the re-issued READ carry the responder's MSN as it is when they are
 * resent (the WRITE behind counted), not the MSN of the first answer, as rxe's do
 * (pcap/rxe/rc_atomic_fetch_add_loss_ack.pcap: MSN 30 on every answer to a resent atomic). The
 * atomic is executed once and its saved result resent (IBA 9.4.5). The re-issued READ is
 * answered as a READ of its own: FIRST at the PSN it asks for (docs/fidelity.md; rxe continues
 * with MIDDLE).
 */
START_TEST(test_rc_duplicate_msn)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[2];
	struct roce_link_impair first = { .drop_nth = 1 }, second = { .drop_nth = 2 };
	static struct tap_pkt pk[64];
	const uint32_t pa = c.psn, pr = c.psn + 3;	/* the atomic's PSN, the READ's */
	uint64_t v = 40, r;
	int n, acks = 0, first_at_retry = 0, lasts = 0;

	fx_setup();
	connect_pair(q, &c);
	tap_start();
	memcpy(fx.h[1].buf + 64, &v, 8);
	fill(0, 8192, 2048, 12);
	fill(1, 16384, 3000, 13);

	/* MSN 1: the atomic, whose ACK is lost; MSN 2: the WRITE behind it */
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &first), 0);
	ck_assert_int_eq(post_atomic(q[0], ROCE_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 64, 2, 0), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 2, 8192, 2048, 8192,
			      ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	wc_ok(&wc[0], 1, ROCE_WC_FETCH_ADD);
	wc_ok(&wc[1], 2, ROCE_WC_RDMA_WRITE);
	memcpy(&r, fx.h[0].buf, 8);
	ck_assert_uint_eq(r, 40);
	memcpy(&r, fx.h[1].buf + 64, 8);
	ck_assert_uint_eq(r, 42);		/* executed once */

	/* MSN 3: a READ of three packets, the MIDDLE lost; MSN 4: the WRITE behind it */
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &second), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, 3, 32768, 3000, 16384,
			      ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, 4, 8192, 2048, 12288,
			      ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
	wc_ok(&wc[0], 3, ROCE_WC_RDMA_READ);
	wc_ok(&wc[1], 4, ROCE_WC_RDMA_WRITE);
	ck_assert_mem_eq(fx.h[0].buf + 32768, fx.h[1].buf + 16384, 3000);
	ck_assert_uint_eq(cnt(0, "read_retries"), 1);
	ck_assert_uint_eq(cnt(1, "duplicate_atomic"), 1);
	ck_assert_uint_eq(cnt(1, "duplicate_read"), 1);

	/* the tap sees what the responder sent, the dropped frames too */
	n = tap_read(pk, 64);
	for (int i = 0; i < n; i++) {
		const struct roce_pkt *p = &pk[i].p;

		if (p->opcode == ROCE_OP_RC_ATOMIC_ACKNOWLEDGE) {
			/* the first answer, lost, then the resent one */
			ck_assert_uint_eq(p->psn, pa);
			ck_assert_uint_eq(p->atmack_orig, 40);	/* the saved result */
			ck_assert_uint_eq(p->aeth.msn, acks == 0 ? 1 : 2);
			acks++;
		} else if (p->opcode == ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST && p->psn == pr + 1) {
			ck_assert_uint_eq(p->aeth.msn, 4);
			first_at_retry++;
		} else if (p->opcode == ROCE_OP_RC_RDMA_READ_RESPONSE_LAST) {
			ck_assert_uint_eq(p->psn, pr + 2);
			ck_assert_uint_eq(p->aeth.msn, lasts == 0 ? 3 : 4);
			lasts++;
		}
	}
	ck_assert_int_eq(acks, 2);
	ck_assert_int_eq(first_at_retry, 1);
	ck_assert_int_eq(lasts, 2);
	fx_teardown_qps(q, 2);
}
END_TEST

/* ---- a requester made of frames: requests that rocelab's own requester never sends ---- */

/* In host 0's place on the link: sends the frames queued, keeps the headers of host 1's. */
static struct {
	struct rte_mbuf *out[8];	/* frames to send */
	unsigned int head, tail;
	struct roce_pkt got[32];	/* host 1's frames (payload pointers not valid) */
	int ngot;
} fr;

static struct rte_mbuf *fr_pull(void *owner)
{
	(void)owner;
	return fr.head == fr.tail ? NULL : fr.out[fr.head++ % ROCE_DIM(fr.out)];
}

static void fr_rx(void *owner, struct rte_mbuf *m)
{
	(void)owner;
	ck_assert_int_lt(fr.ngot, (int)ROCE_DIM(fr.got));
	ck_assert_int_eq(roce_wire_parse(rte_pktmbuf_mtod(m, const uint8_t *),
					 rte_pktmbuf_data_len(m), 0, &fr.got[fr.ngot]), 0);
	fr.got[fr.ngot++].payload = NULL;
	rte_pktmbuf_free(m);
}

/* The hosts, host 1 linked to the frames of fr (host 0 is there for its QPN and addresses). */
static void fx_setup_frames(void)
{
	struct roce_link_end a = { .pull = fr_pull, .rx = fr_rx }, b;

	memset(&fr, 0, sizeof(fr));
	fx_hosts(1);
	b = roce_device_link_end(fx.h[1].dev);
	fx.link = roce_link_create(fx.eng, &fx_link_conf, &a, &b);
	ck_assert_ptr_nonnull(fx.link);
	roce_device_attach(fx.h[1].dev, fx.link, 1);
}

/* Send host 1's QP @p dst a READ (or, @p atomic, a Fetch&Add) as host 0; run 10 us. */
static void fr_request(struct roce_qp *dst, bool atomic, uint32_t psn, uint64_t va,
		       uint32_t rkey, uint32_t len)
{
	struct rte_mbuf *m = roce_engine_mbuf(fx.eng);
	struct roce_pkt p;

	ck_assert_ptr_nonnull(m);
	roce_pkt_init(&p, ROCE_KIND_ROCEV2, atomic ? ROCE_OP_RC_FETCH_ADD :
		      ROCE_OP_RC_RDMA_READ_REQUEST);
	memcpy(p.smac, fx.h[0].mac, 6);
	memcpy(p.dmac, fx.h[1].mac, 6);
	p.ip_ver = 4;
	p.src = fx.h[0].ip;
	p.dst = fx.h[1].ip;
	p.dqpn = roce_qp_num(dst);
	p.psn = psn;
	p.ackreq = true;
	if (atomic) {
		p.atmeth.va = va;
		p.atmeth.rkey = rkey;
		p.atmeth.swap = 1;
	} else {
		p.reth.va = va;
		p.reth.rkey = rkey;
		p.reth.dmalen = len;
	}
	ck_assert_int_gt(roce_wire_build_mbuf(&p, 0, m), 0);
	fr.out[fr.tail++ % ROCE_DIM(fr.out)] = m;
	roce_link_kick(fx.link, 0);
	run_until(roce_engine_now(fx.eng) + 10 * ROCE_US);
}

/*
 * Duplicates of a READ that are not the READ answered at their PSN: other bytes, more bytes or
 * PSNs than it had, another key, an atomic. Each is dropped (rxe and hfi1 drop them too): a
 * duplicate is answered without the checks of a new request, and another range would read
 * memory nobody granted. The re-issue of its rest, as a requester sends it, is answered.
 */
START_TEST(test_rc_duplicate_read_range)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	const uint32_t p0 = c.psn, off = 4096;	/* the READ: PSNs p0..p0+2, from off */
	uint32_t rkey, at[3] = { 0 };

	fx_setup_frames();
	connect_pair(q, &c);
	rkey = roce_mr_rkey(fx.h[1].mr);
	fill(1, off, 3000, 14);
	fr_request(q[1], false, p0, addr(1, off), rkey, 3000);
	fr_request(q[1], false, p0 + 1, addr(1, off + 1024), rkey, 1976);	/* the rest */
	fr_request(q[1], false, p0 + 1, addr(1, off + (1u << 20)), rkey, 1976);
	fr_request(q[1], false, p0 + 1, addr(1, off + 1024), rkey, 3000);
	fr_request(q[1], false, p0 + 2, addr(1, off - 1024), rkey, 952);
	fr_request(q[1], false, p0 + 1, addr(1, off + 1024), rkey ^ 0x100, 1976);
	fr_request(q[1], true, p0 + 1, addr(1, off + 1024), rkey, 8);
	drain();
	for (int i = 0; i < fr.ngot; i++) {
		uint32_t d = fr.got[i].psn - p0;

		ck_assert_msg(d < 3 && (roce_opcode[fr.got[i].opcode].mask & ROCE_F_READ),
			      "%s psn %u", roce_opcode[fr.got[i].opcode].name, fr.got[i].psn);
		at[d]++;
	}
	/* the READ, then its rest: FIRST at p0 + 1, LAST */
	ck_assert_uint_eq(at[0], 1);
	ck_assert_uint_eq(at[1], 2);
	ck_assert_uint_eq(at[2], 2);
	ck_assert_uint_eq(cnt(1, "duplicate_request"), 6);
	ck_assert_uint_eq(cnt(1, "duplicate_read"), 1);
	ck_assert_uint_eq(cnt(1, "duplicate_dropped"), 5);
	ck_assert_int_eq(qp_state(q[1]), ROCE_QPS_RTS);
	fx_teardown_qps(q, 2);
}
END_TEST

/*
 * READ responses late, not lost (a responder off its core, a queue): the requester times out and
 * re-issues READs while the first answers are still on their way, completes a READ from them, and
 * issues the next, which takes the responder's slot of one it is still replaying (one slot: each
 * READ takes the slot of the one before). The responder gives the slot up (the requester is done
 * with it: it has no more READs out than slots) and never answers the new READ with a NAK invalid
 * request. Several seeds: the jitter reorders; seed 3 NAKed the 7th READ when slots were kept.
 */
START_TEST(test_rc_read_late_responses)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_wc wc[64];
	struct roce_link_impair imp = { .jitter = 10 * ROCE_US };	/* timeout 2: 16 us */
	const int n = 64, len = 65536;

	c.timeout = 2;
	c.max_rd_atomic = 1;
	fx_setup_seed((uint64_t)_i + 1);
	connect_pair(q, &c);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	fill(1, 0, (uint32_t)(n * len), 11);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_READ, (uint64_t)i + 1, (uint32_t)(i * len),
				      (uint32_t)len, (uint32_t)(i * len), ROCE_SEND_SIGNALED), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, n, wc), n);
	for (int i = 0; i < n; i++)
		wc_ok(&wc[i], (uint64_t)i + 1, ROCE_WC_RDMA_READ);
	ck_assert_mem_eq(fx.h[0].buf, fx.h[1].buf, (size_t)(n * len));
	ck_assert_uint_gt(cnt(1, "duplicate_read"), 0);	/* the case arose */
	ck_assert_uint_eq(cnt(1, "remote_invalid_req_nak_sent"), 0);
	ck_assert_int_eq(qp_state(q[1]), ROCE_QPS_RTS);
	fx_teardown_qps(q, 2);
}
END_TEST

/* CQ of depth 2, 4 signaled WRITEs: poll gives 2, then -EOVERFLOW; the QP is in ERR. */
START_TEST(test_cq_overflow)
{
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct roce_cq *small;
	struct roce_wc wc[4];
	int n, r;

	fx_setup();
	small = roce_create_cq(fx.h[0].dev, 2);
	ck_assert_ptr_nonnull(small);
	q[0] = mk_qp_srq(0, ROCE_QPT_RC, NULL, small);
	q[1] = mk_qp(1, ROCE_QPT_RC);
	bring_up(q[0], 0, q[1], &c);
	bring_up(q[1], 1, q[0], &c);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(post(q[0], 0, ROCE_WR_RDMA_WRITE, (uint64_t)i, 0, 64, 0,
				      ROCE_SEND_SIGNALED), 0);
	drain();
	n = roce_poll_cq(small, 4, wc);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(wc[0].wr_id, 0);
	ck_assert_uint_eq(wc[1].wr_id, 1);
	r = roce_poll_cq(small, 4, wc);
	ck_assert_int_eq(r, -EOVERFLOW);
	ck_assert_int_eq(qp_state(q[0]), ROCE_QPS_ERR);
	ck_assert_uint_ge(cnt(0, "cq_overflow"), 1);
	ck_assert_int_eq(roce_destroy_qp(q[0]), 0);
	ck_assert_int_eq(roce_destroy_cq(small), 0);
	fx_teardown_qps(q + 1, 1);
}
END_TEST

/* State machine: bad transitions, missing and extra attributes are -EINVAL and change nothing. */
START_TEST(test_qp_state_machine)
{
	struct roce_qp *rc, *ud;
	struct roce_qp_attr a = { 0 };
	unsigned int init_mask = ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT | ROCE_QP_ACCESS_FLAGS;
	unsigned int rtr_mask = ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU | ROCE_QP_DEST_QPN |
				ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER;
	unsigned int rts_mask = ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT |
				ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC;

	fx_setup();
	rc = mk_qp(0, ROCE_QPT_RC);
	ud = mk_qp(0, ROCE_QPT_UD);
	a.port_num = 1;
	a.path_mtu = ROCE_MTU_1024;
	a.ah_attr.ip_ver = 4;
	a.dest_qp_num = 0x12;
	a.max_dest_rd_atomic = 4;
	a.max_rd_atomic = 4;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	/* posting in RESET */
	ck_assert_int_eq(post(rc, 0, ROCE_WR_SEND, 1, 0, 8, 0, 0), -EINVAL);
	ck_assert_int_eq(post_recv(rc, 0, 1, 0, 8), -EINVAL);
	/* RESET -> RTR / RTS: no such transition */
	a.qp_state = ROCE_QPS_RTR;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rtr_mask), -EINVAL);
	a.qp_state = ROCE_QPS_RTS;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rts_mask), -EINVAL);
	ck_assert_int_eq(qp_state(rc), ROCE_QPS_RESET);
	/* RESET -> INIT: ACCESS_FLAGS missing; SQ_PSN extra; UD needs QKEY, not ACCESS_FLAGS */
	a.qp_state = ROCE_QPS_INIT;
	ck_assert_int_eq(roce_modify_qp(rc, &a, init_mask & ~(unsigned int)ROCE_QP_ACCESS_FLAGS), -EINVAL);
	ck_assert_int_eq(roce_modify_qp(rc, &a, init_mask | ROCE_QP_SQ_PSN), -EINVAL);
	ck_assert_int_eq(roce_modify_qp(ud, &a, init_mask), -EINVAL);
	ck_assert_int_eq(roce_modify_qp(ud, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
					ROCE_QP_QKEY), 0);
	ck_assert_int_eq(qp_state(rc), ROCE_QPS_RESET);
	/* a bad value: port 2 */
	a.port_num = 2;
	ck_assert_int_eq(roce_modify_qp(rc, &a, init_mask), -EINVAL);
	a.port_num = 1;
	ck_assert_int_eq(roce_modify_qp(rc, &a, init_mask), 0);
	ck_assert_int_eq(qp_state(rc), ROCE_QPS_INIT);
	/* INIT: receives allowed, sends not */
	ck_assert_int_eq(post_recv(rc, 0, 1, 0, 8), 0);
	ck_assert_int_eq(post(rc, 0, ROCE_WR_SEND, 1, 0, 8, 0, 0), -EINVAL);
	/* INIT -> RTS: no; INIT -> RTR without DEST_QPN, or with TIMEOUT: no */
	a.qp_state = ROCE_QPS_RTS;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rts_mask), -EINVAL);
	a.qp_state = ROCE_QPS_RTR;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rtr_mask & ~(unsigned int)ROCE_QP_DEST_QPN), -EINVAL);
	ck_assert_int_eq(roce_modify_qp(rc, &a, rtr_mask | ROCE_QP_TIMEOUT), -EINVAL);
	/* a bad value: the MTU above the port's, a 25-bit PSN */
	a.path_mtu = 6;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rtr_mask), -EINVAL);
	a.path_mtu = ROCE_MTU_1024;
	a.rq_psn = 1u << 24;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rtr_mask), -EINVAL);
	a.rq_psn = 0;
	ck_assert_int_eq(qp_state(rc), ROCE_QPS_INIT);
	ck_assert_int_eq(roce_modify_qp(rc, &a, rtr_mask), 0);
	ck_assert_int_eq(post(rc, 0, ROCE_WR_SEND, 1, 0, 8, 0, 0), -EINVAL);	/* RTR */
	/* RTR -> RTS without RETRY_CNT; with PATH_MTU (not allowed there) */
	a.qp_state = ROCE_QPS_RTS;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rts_mask & ~(unsigned int)ROCE_QP_RETRY_CNT), -EINVAL);
	ck_assert_int_eq(roce_modify_qp(rc, &a, rts_mask | ROCE_QP_PATH_MTU), -EINVAL);
	a.retry_cnt = 8;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rts_mask), -EINVAL);
	a.retry_cnt = 7;
	ck_assert_int_eq(roce_modify_qp(rc, &a, rts_mask), 0);
	ck_assert_int_eq(qp_state(rc), ROCE_QPS_RTS);
	/* CUR_STATE must match */
	a.cur_qp_state = ROCE_QPS_RTR;
	ck_assert_int_eq(roce_modify_qp(rc, &a, ROCE_QP_STATE | ROCE_QP_CUR_STATE), -EINVAL);
	/* RTS -> ERR: posted and later WRs flush */
	a.qp_state = ROCE_QPS_ERR;
	ck_assert_int_eq(roce_modify_qp(rc, &a, ROCE_QP_STATE), 0);
	{
		struct roce_wc wc[2];

		ck_assert_int_eq(roce_poll_cq(fx.h[0].rcq, 2, wc), 1);
		ck_assert_int_eq(wc[0].status, ROCE_WC_WR_FLUSH_ERR);
		ck_assert_int_eq(post(rc, 0, ROCE_WR_SEND, 5, 0, 8, 0, ROCE_SEND_SIGNALED), 0);
		ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 2, wc), 1);
		ck_assert_uint_eq(wc[0].wr_id, 5);
		ck_assert_int_eq(wc[0].status, ROCE_WC_WR_FLUSH_ERR);
	}
	/* ERR -> RTS: no; ERR -> RESET -> INIT: yes */
	a.qp_state = ROCE_QPS_RTS;
	ck_assert_int_eq(roce_modify_qp(rc, &a, ROCE_QP_STATE), -EINVAL);
	a.qp_state = ROCE_QPS_RESET;
	ck_assert_int_eq(roce_modify_qp(rc, &a, ROCE_QP_STATE), 0);
	a.qp_state = ROCE_QPS_INIT;
	ck_assert_int_eq(roce_modify_qp(rc, &a, init_mask), 0);
	{
		struct roce_qp *q[2] = { rc, ud };

		fx_teardown_qps(q, 2);
	}
}
END_TEST

/* ---- loss: randomized operations, exactly once, byte-exact ---- */

#define L_DEPTH 16			/* WRs outstanding */
#define L_SLOT 65536			/* bytes per slot: the largest message */
#define L_ATOM_OFF (L_DEPTH * L_SLOT * 2)	/* host 1: the atomic words */
#define L_RET_OFF (L_ATOM_OFF + 64)	/* host 0: atomic return words, one per slot */

enum l_op { L_WRITE, L_READ, L_SEND, L_FADD, L_CAS, L_NOPS };

struct l_msg {
	enum l_op op;
	uint32_t len;
	uint64_t expect;		/* atomics: the original value to be returned */
};

/*
 * @p nmsg random messages over RC with @p loss each way, starting at PSN @p psn. Host 0 sends
 * from slot s (i % L_DEPTH) of its first half; WRITEs land in host 1's slot s, READs read it;
 * SENDs land in receive buffers in host 1's second half.
 */
static void loss_run(double loss, uint64_t seed, uint32_t psn, uint32_t nmsg, enum roce_mtu mtu,
		     const char *pcap, const struct roce_link_impair *extra)
{
	static const struct roce_link_impair none;
	struct roce_pcap_writer *w = NULL;
	struct conn c = conn_defaults(ROCE_QPT_RC);
	struct roce_qp *q[2];
	struct l_msg *m = calloc(nmsg, sizeof(*m));
	uint32_t *send_fifo = calloc(nmsg, sizeof(*send_fifo));
	uint32_t posted = 0, done = 0, sends = 0, recvd = 0;
	uint64_t fadd = 0, cas = 0, sum = 0, rng = seed * 0x9e3779b97f4a7c15ull + 1;
	struct roce_link_impair imp = extra != NULL ? *extra : none;
	struct roce_wc wc[32];
	uint32_t lkey0, rkey1;

	ck_assert(m && send_fifo);
	imp.loss = loss;
	c.psn = psn;
	c.mtu = mtu;
	c.timeout = 8;
	fx_setup_seed(seed);
	connect_pair(q, &c);
	lkey0 = roce_mr_lkey(fx.h[0].mr);
	rkey1 = roce_mr_rkey(fx.h[1].mr);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 0, &imp), 0);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 1, &imp), 0);
	if (pcap != NULL) {
		char err[256];

		w = roce_pcap_create(pcap, err, sizeof(err));
		ck_assert_msg(w != NULL, "%s", err);
		roce_link_set_tap(fx.link, w);
	}
	for (uint32_t r = 0; r < L_DEPTH; r++)
		ck_assert_int_eq(post_recv(q[1], 1, r, L_DEPTH * L_SLOT + r * L_SLOT, L_SLOT), 0);
	while (done < nmsg) {
		while (posted < nmsg && posted - done < L_DEPTH) {
			uint32_t i = posted, s = i % L_DEPTH;
			struct l_msg *x = &m[i];
			struct roce_sge sge = { addr(0, s * L_SLOT), 0, lkey0 };
			struct roce_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
						   .send_flags = ROCE_SEND_SIGNALED };

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			x->op = (enum l_op)(rng % L_NOPS);
			/* mostly small messages, some up to 64 KiB, some exactly 0 */
			x->len = (rng >> 8) % 4 == 0 ? (uint32_t)(rng >> 16) % (L_SLOT + 1) :
				 (uint32_t)(rng >> 16) % 3000;
			if ((rng >> 40) % 16 == 0)
				x->len = 0;
			sge.length = x->len;
			switch (x->op) {
			case L_WRITE:
				fill(0, s * L_SLOT, x->len, i);
				wr.opcode = ROCE_WR_RDMA_WRITE;
				wr.wr.rdma.remote_addr = addr(1, s * L_SLOT);
				wr.wr.rdma.rkey = rkey1;
				break;
			case L_READ:
				fill(1, s * L_SLOT, x->len, i);
				memset(fx.h[0].buf + s * L_SLOT, 0, x->len);
				wr.opcode = ROCE_WR_RDMA_READ;
				wr.wr.rdma.remote_addr = addr(1, s * L_SLOT);
				wr.wr.rdma.rkey = rkey1;
				break;
			case L_SEND:
				fill(0, s * L_SLOT, x->len, i);
				wr.opcode = ROCE_WR_SEND;
				send_fifo[sends++] = i;
				break;
			case L_FADD:
				x->len = 8;
				sge.addr = addr(0, L_RET_OFF + s * 8);
				sge.length = 8;
				wr.opcode = ROCE_WR_ATOMIC_FETCH_AND_ADD;
				wr.wr.atomic.remote_addr = addr(1, L_ATOM_OFF);
				wr.wr.atomic.rkey = rkey1;
				wr.wr.atomic.compare_add = rng >> 20;
				x->expect = fadd;
				fadd += rng >> 20;
				sum += rng >> 20;
				break;
			default:
				x->len = 8;
				sge.addr = addr(0, L_RET_OFF + s * 8);
				sge.length = 8;
				wr.opcode = ROCE_WR_ATOMIC_CMP_AND_SWP;
				wr.wr.atomic.remote_addr = addr(1, L_ATOM_OFF + 8);
				wr.wr.atomic.rkey = rkey1;
				/* every other CAS is meant to fail the compare */
				wr.wr.atomic.compare_add = (i & 1) ? cas + 1 : cas;
				wr.wr.atomic.swap = i + 1000;
				x->expect = cas;
				if (!(i & 1))
					cas = i + 1000;
				break;
			}
			ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
			posted++;
		}
		/* receives first: a SEND's receive completes before its sender's completion */
		int n = roce_poll_cq(fx.h[1].rcq, 32, wc);

		ck_assert_int_ge(n, 0);
		for (int k = 0; k < n; k++) {
			uint32_t i = send_fifo[recvd++], r = (uint32_t)wc[k].wr_id;

			ck_assert_msg(wc[k].status == ROCE_WC_SUCCESS, "recv: %s",
				      roce_wc_status_name(wc[k].status));
			ck_assert_uint_eq(wc[k].byte_len, m[i].len);
			ck_assert_msg(memcmp(fx.h[1].buf + L_DEPTH * L_SLOT + r * L_SLOT,
					     fx.h[0].buf + (i % L_DEPTH) * L_SLOT, m[i].len) == 0,
				      "SEND %u: data differs", i);
			ck_assert_int_eq(post_recv(q[1], 1, r, L_DEPTH * L_SLOT + r * L_SLOT, L_SLOT), 0);
		}
		n = roce_poll_cq(fx.h[0].scq, 32, wc);
		ck_assert_int_ge(n, 0);
		for (int k = 0; k < n; k++) {
			uint32_t i = done, s = i % L_DEPTH;
			uint64_t orig;

			ck_assert_msg(wc[k].status == ROCE_WC_SUCCESS, "msg %u (op %d len %u): %s", i,
				      m[i].op, m[i].len, roce_wc_status_name(wc[k].status));
			ck_assert_uint_eq(wc[k].wr_id, i);	/* in order, exactly once */
			switch (m[i].op) {
			case L_WRITE:
			case L_READ:
				ck_assert_msg(memcmp(fx.h[0].buf + s * L_SLOT, fx.h[1].buf + s * L_SLOT,
						     m[i].len) == 0, "msg %u (op %d len %u): data differs",
					      i, m[i].op, m[i].len);
				break;
			case L_SEND:
				ck_assert_uint_lt(i, nmsg);
				break;
			default:
				memcpy(&orig, fx.h[0].buf + L_RET_OFF + s * 8, 8);
				ck_assert_msg(orig == m[i].expect, "atomic %u returned %llu, not %llu",
					      i, (unsigned long long)orig,
					      (unsigned long long)m[i].expect);
			}
			done++;
		}
		if (done < nmsg)
			ck_assert_msg(step(), "stalled after %u of %u messages", done, nmsg);
	}
	drain();
	ck_assert_int_eq(recvd, sends);
	ck_assert_int_eq(roce_poll_cq(fx.h[0].scq, 32, wc), 0);
	ck_assert_int_eq(roce_poll_cq(fx.h[1].rcq, 32, wc), 0);
	{
		uint64_t v;

		memcpy(&v, fx.h[1].buf + L_ATOM_OFF, 8);
		ck_assert_uint_eq(v, sum);		/* each add executed exactly once */
		memcpy(&v, fx.h[1].buf + L_ATOM_OFF + 8, 8);
		ck_assert_uint_eq(v, cas);
	}
	if (loss > 0)
		ck_assert_uint_gt(cnt(0, "retransmits"), 0);
	if (imp.corrupt > 0) {
		/*
		 * Every frame a link corrupted is caught by the receiving NIC's ICRC check (a bit
		 * flipped after the BTH always changes the CRC): none slips through the senders'
		 * ICRC offload, whose flag the corruption clears.
		 */
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats ls;

			roce_link_stats(fx.link, d, &ls);
			ck_assert_uint_gt(ls.corrupted, 0);
			ck_assert_uint_eq(cnt(1 - d, "rx_icrc_errors"), ls.corrupted);
		}
	}
	if (w != NULL) {
		roce_link_set_tap(fx.link, NULL);
		ck_assert_int_eq(roce_pcap_close_writer(w), 0);
	}
	free(m);
	free(send_fifo);
	fx_teardown_qps(q, 2);
}

static const double losses[] = { 0.001, 0.01, 0.05 };

START_TEST(test_rc_loss)
{
	loss_run(losses[_i], 100 + (uint64_t)_i, 0x100, 3000, ROCE_MTU_4096, NULL, NULL);
}
END_TEST

START_TEST(test_rc_loss_mtu1024)
{
	loss_run(_i == 0 ? 0.01 : 0.05, 7, 0x100, 1500, ROCE_MTU_1024, NULL, NULL);
}
END_TEST

/* Loss with duplication, reordering and jitter on top. */
START_TEST(test_rc_loss_dup_reorder)
{
	struct roce_link_impair extra = { .dup = 0.01, .reorder = 0.01, .jitter = 2 * ROCE_US };

	loss_run(0.01, 8, 0xffff00, 1500, ROCE_MTU_1024, NULL, &extra);
}
END_TEST

/* Corruption: the receivers drop exactly the corrupted frames; go-back-N recovers each. */
START_TEST(test_rc_corrupt)
{
	struct roce_link_impair extra = { .corrupt = 0.02 };

	loss_run(0, 9, 0x100, 1500, ROCE_MTU_1024, NULL, &extra);
}
END_TEST

/* A signaled send WR of one SGE (@p len bytes at @p local, key @p lkey), to @p remote. */
static int post_sge(struct roce_qp *qp, enum roce_wr_opcode op, uint64_t wr_id,
		    const uint8_t *local, uint32_t lkey, uint32_t len, uint64_t remote, uint32_t rkey)
{
	struct roce_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = lkey };
	struct roce_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = ROCE_SEND_SIGNALED,
	};

	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	return roce_post_send(qp, &wr, NULL);
}

/*
 * Discarding regions (ROCE_ACCESS_DISCARD): WRITEs into one, READ responses into one and the
 * part of a SEND that falls in one are checked and completed as usual, and dropped. The
 * regions are mapped read-only: a byte stored there would kill the test. What lands in
 * ordinary memory beside them (the rest of the SEND) is placed, and a WRITE past the region's
 * end is still refused.
 */
START_TEST(test_rc_discard)
{
	static const uint32_t lens[] = { 3 * 4096 + 5, 4096, 1, 10001 };
	struct conn c = conn_defaults(ROCE_QPT_RC);
	const size_t map = 1 << 20;
	struct roce_qp_stats st;
	struct roce_mr *dmr[2];
	struct roce_wc wc[4];
	struct roce_qp *q[2];
	uint8_t *sink[2];
	uint64_t w = 0;

	c.mtu = ROCE_MTU_4096;
	fx_setup_seed(22);
	connect_pair(q, &c);
	for (int h = 0; h < 2; h++) {
		sink[h] = mmap(NULL, map, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ck_assert(sink[h] != MAP_FAILED);
		dmr[h] = roce_reg_mr(fx.h[h].pd, sink[h], map, ROCE_ACCESS_LOCAL_WRITE |
				     ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_ATOMIC |
				     ROCE_ACCESS_DISCARD);
		ck_assert_ptr_nonnull(dmr[h]);
	}
	fill(0, 0, 65536, 3);
	fill(1, 0, 65536, 5);
	for (unsigned int i = 0; i < ROCE_DIM(lens); i++) {
		/* host 0 WRITEs into host 1's sink, and READs host 1's buffer into its own sink */
		ck_assert_int_eq(post_sge(q[0], ROCE_WR_RDMA_WRITE, w++, fx.h[0].buf,
					  roce_mr_lkey(fx.h[0].mr), lens[i],
					  (uintptr_t)sink[1] + 64 * i, roce_mr_rkey(dmr[1])), 0);
		ck_assert_int_eq(post_sge(q[0], ROCE_WR_RDMA_READ, w++, sink[0] + 64 * i,
					  roce_mr_lkey(dmr[0]), lens[i], addr(1, 0),
					  roce_mr_rkey(fx.h[1].mr)), 0);
		ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
		wc_ok(&wc[0], w - 2, ROCE_WC_RDMA_WRITE);
		wc_ok(&wc[1], w - 1, ROCE_WC_RDMA_READ);
	}
	/* every byte was received and counted, though none was stored */
	roce_qp_stats(q[1], &st);
	ck_assert_uint_eq(st.rx_bytes, 3 * 4096 + 5 + 4096 + 1 + 10001);
	roce_qp_stats(q[0], &st);
	ck_assert_uint_eq(st.rx_bytes, 3 * 4096 + 5 + 4096 + 1 + 10001);

	/* a SEND into two SGEs: 5000 bytes into the sink (dropped), the rest into host 0's */
	{
		struct roce_sge sge[2] = {
			{ .addr = (uintptr_t)sink[0], .length = 5000,
			  .lkey = roce_mr_lkey(dmr[0]) },
			{ .addr = addr(0, 200000), .length = 20000,
			  .lkey = roce_mr_lkey(fx.h[0].mr) },
		};
		struct roce_recv_wr rwr = { .wr_id = 90, .sg_list = sge, .num_sge = 2 };

		memset(fx.h[0].buf + 200000, 0, 20000);
		ck_assert_int_eq(roce_post_recv(q[0], &rwr, NULL), 0);
	}
	ck_assert_int_eq(post_sge(q[1], ROCE_WR_SEND, 91, fx.h[1].buf, roce_mr_lkey(fx.h[1].mr),
				  15000, 0, 0), 0);
	ck_assert_int_eq(wait_wc(fx.h[1].scq, 1, wc), 1);
	wc_ok(&wc[0], 91, ROCE_WC_SEND);
	ck_assert_int_eq(wait_wc(fx.h[0].rcq, 1, wc), 1);
	wc_ok(&wc[0], 90, ROCE_WC_RECV);
	ck_assert_uint_eq(wc[0].byte_len, 15000);
	ck_assert_mem_eq(fx.h[0].buf + 200000, fx.h[1].buf + 5000, 10000);
	ck_assert_uint_eq(fx.h[0].buf[210000], 0);

	/*
	 * atomics: a FETCH_AND_ADD on host 1's sink, its original value into host 0's sink, reads
	 * the sink's 0 and writes nothing; a second, into ordinary memory, finds 0 again
	 */
	for (int k = 0; k < 2; k++) {
		struct roce_sge sge = {
			.addr = k == 0 ? (uintptr_t)sink[0] + 4096 : addr(0, 300000), .length = 8,
			.lkey = roce_mr_lkey(k == 0 ? dmr[0] : fx.h[0].mr),
		};
		struct roce_send_wr wr = {
			.wr_id = 95 + (uint64_t)k, .sg_list = &sge, .num_sge = 1,
			.opcode = ROCE_WR_ATOMIC_FETCH_AND_ADD, .send_flags = ROCE_SEND_SIGNALED,
		};

		memset(fx.h[0].buf + 300000, 0xee, 8);
		wr.wr.atomic.remote_addr = (uintptr_t)sink[1] + 8192;
		wr.wr.atomic.rkey = roce_mr_rkey(dmr[1]);
		wr.wr.atomic.compare_add = 5;
		ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
		ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
		wc_ok(&wc[0], 95 + (uint64_t)k, ROCE_WC_FETCH_ADD);
	}
	ck_assert_mem_eq(fx.h[0].buf + 300000, (uint8_t[8]){ 0 }, 8);

	/* the region's bounds still hold: a WRITE running past its end is a remote access error */
	ck_assert_int_eq(post_sge(q[0], ROCE_WR_RDMA_WRITE, 92, fx.h[0].buf,
				  roce_mr_lkey(fx.h[0].mr), 8192, (uintptr_t)sink[1] + map - 4096,
				  roce_mr_rkey(dmr[1])), 0);
	ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, wc), 1);
	ck_assert_uint_eq(wc[0].wr_id, 92);
	ck_assert_int_eq(wc[0].status, ROCE_WC_REM_ACCESS_ERR);
	drain();
	for (int h = 0; h < 2; h++)
		ck_assert_int_eq(roce_dereg_mr(dmr[h]), 0);
	fx_teardown_qps(q, 2);
	munmap(sink[0], map);
	munmap(sink[1], map);
}
END_TEST

/*
 * Zero copy: WRITEs and a SEND from, and READs of, memory registered with ROCE_ACCESS_ZERO_COPY
 * travel by reference over a link that corrupts and drops frames and is captured. The data
 * arrives whole, every corrupted frame is caught by its ICRC, and nothing writes the sources:
 * they are mapped read-only, so a write (a corrupted bit, an ICRC) would kill the test.
 */
START_TEST(test_rc_zero_copy)
{
	static const uint32_t lens[] = { 3 * 4096 + 5, 65536, 10001, 5 * 2048 + 1, 4096 };
	struct roce_link_impair imp = { .corrupt = 0.05, .loss = 0.005 };
	struct conn c = conn_defaults(ROCE_QPT_RC);
	const size_t map = 1 << 20;
	struct roce_engine_stats es;
	struct tap_pkt *tp;
	struct roce_mr *zmr[2];
	struct roce_wc wc[8];
	struct roce_qp *q[2];
	uint8_t *src[2];
	uint32_t off = 0;
	uint64_t w = 0;

	c.mtu = ROCE_MTU_4096;
	c.timeout = 8;
	fx_setup_seed(21);
	connect_pair(q, &c);
	for (int h = 0; h < 2; h++) {
		src[h] = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ck_assert(src[h] != MAP_FAILED);
		for (size_t i = 0; i < map; i++)
			src[h][i] = (uint8_t)(i * 131u + (i >> 9) + 17u * (unsigned int)h);
		ck_assert_int_eq(mprotect(src[h], map, PROT_READ), 0);
		zmr[h] = roce_reg_mr(fx.h[h].pd, src[h], map, ROCE_ACCESS_REMOTE_READ |
				     ROCE_ACCESS_ZERO_COPY);
		ck_assert_ptr_nonnull(zmr[h]);
		ck_assert_int_eq(roce_link_set_impair(fx.link, h, &imp), 0);
	}
	tap_start();
	for (int round = 0; round < 4; round++) {
		for (unsigned int i = 0; i < ROCE_DIM(lens); i++) {
			/* host 0 WRITEs its source to host 1, and READs host 1's into its own buffer */
			ck_assert_int_eq(post_sge(q[0], ROCE_WR_RDMA_WRITE, w++, src[0] + off,
						  roce_mr_lkey(zmr[0]), lens[i], addr(1, off),
						  roce_mr_rkey(fx.h[1].mr)), 0);
			ck_assert_int_eq(post_sge(q[0], ROCE_WR_RDMA_READ, w++, fx.h[0].buf + off,
						  roce_mr_lkey(fx.h[0].mr), lens[i],
						  (uintptr_t)src[1] + off, roce_mr_rkey(zmr[1])), 0);
			ck_assert_int_eq(wait_wc(fx.h[0].scq, 2, wc), 2);
			wc_ok(&wc[0], w - 2, ROCE_WC_RDMA_WRITE);
			wc_ok(&wc[1], w - 1, ROCE_WC_RDMA_READ);
			ck_assert_msg(memcmp(fx.h[1].buf + off, src[0] + off, lens[i]) == 0,
				      "WRITE of %u bytes at %u differs", lens[i], off);
			ck_assert_msg(memcmp(fx.h[0].buf + off, src[1] + off, lens[i]) == 0,
				      "READ of %u bytes at %u differs", lens[i], off);
			off += lens[i] + 7;
		}
	}
	/* and a SEND from host 1's source into a receive on host 0 */
	ck_assert_int_eq(post_recv(q[0], 0, 77, 0, 65536), 0);
	ck_assert_int_eq(post_sge(q[1], ROCE_WR_SEND, 78, src[1] + 3, roce_mr_lkey(zmr[1]),
				  50000, 0, 0), 0);
	ck_assert_int_eq(wait_wc(fx.h[1].scq, 1, wc), 1);
	wc_ok(&wc[0], 78, ROCE_WC_SEND);
	ck_assert_int_eq(wait_wc(fx.h[0].rcq, 1, wc), 1);
	ck_assert_uint_eq(wc[0].byte_len, 50000);
	ck_assert_mem_eq(fx.h[0].buf, src[1] + 3, 50000);
	drain();
	/* every frame captured has its ICRC, computed over the payload where it lies */
	tp = malloc(sizeof(*tp) * 20000);
	ck_assert_ptr_nonnull(tp);
	ck_assert_int_gt(tap_read(tp, 20000), 200);
	free(tp);

	roce_engine_stats(fx.eng, &es);
	ck_assert_uint_gt(es.zc_frames, 100);
	for (int d = 0; d < 2; d++) {
		struct roce_link_stats ls;

		roce_link_stats(fx.link, d, &ls);
		ck_assert_uint_gt(ls.corrupted, 0);
		ck_assert_uint_eq(cnt(1 - d, "rx_icrc_errors"), ls.corrupted);
	}
	ck_assert_int_eq(roce_dereg_mr(zmr[0]), 0);
	ck_assert_int_eq(roce_dereg_mr(zmr[1]), 0);
	fx_teardown_qps(q, 2);
	munmap(src[0], map);
	munmap(src[1], map);
}
END_TEST

/*
 * UD SENDs from zero-copy memory: the payload travels by reference, apart from the headers, and
 * the receiver's 40-byte GRH area must still hold the frame's IPv4 header (it was read from
 * where the payload lay: garbage, or a crash, with the payload elsewhere).
 */
START_TEST(test_ud_zero_copy)
{
	struct conn c = conn_defaults(ROCE_QPT_UD);
	struct roce_ah_attr aa = { .ip_ver = 4 };
	const size_t map = 1 << 16;
	struct roce_engine_stats es;
	struct roce_mr *zmr;
	struct roce_qp *q[2];
	struct roce_wc wc;
	struct roce_ah *ah;
	uint8_t *src;

	fx_setup();
	connect_pair(q, &c);
	src = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(src != MAP_FAILED);
	for (size_t i = 0; i < map; i++)
		src[i] = (uint8_t)(i * 37u + 11u);
	zmr = roce_reg_mr(fx.h[0].pd, src, map, ROCE_ACCESS_ZERO_COPY);
	ck_assert_ptr_nonnull(zmr);
	aa.dip = fx.h[1].ip;
	memcpy(aa.dmac, fx.h[1].mac, 6);
	ah = roce_create_ah(fx.h[0].pd, &aa);
	ck_assert_ptr_nonnull(ah);
	for (uint32_t i = 0; i < 64; i++) {
		struct roce_sge sge = { .addr = (uintptr_t)src + i * 1024, .length = 1024,
					.lkey = roce_mr_lkey(zmr) };
		struct roce_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					   .opcode = ROCE_WR_SEND, .send_flags = ROCE_SEND_SIGNALED };
		const uint8_t *grh = fx.h[1].buf;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = roce_qp_num(q[1]);
		wr.wr.ud.remote_qkey = QKEY;
		memset(fx.h[1].buf, 0xaa, 2048);
		ck_assert_int_eq(post_recv(q[1], 1, i, 0, 1064), 0);
		ck_assert_int_eq(roce_post_send(q[0], &wr, NULL), 0);
		ck_assert_int_eq(wait_wc(fx.h[0].scq, 1, &wc), 1);
		wc_ok(&wc, i, ROCE_WC_SEND);
		ck_assert_int_eq(wait_wc(fx.h[1].rcq, 1, &wc), 1);
		wc_ok(&wc, i, ROCE_WC_RECV);
		ck_assert_uint_eq(wc.byte_len, 1064);
		ck_assert_mem_eq(grh, (uint8_t[20]){ 0 }, 20);
		ck_assert_uint_eq(grh[20], 0x45);			/* IPv4, IHL 5 */
		ck_assert_uint_eq(grh[20 + 9], 17);			/* UDP */
		ck_assert_mem_eq(grh + 20 + 12, fx.h[0].ip.b, 4);	/* source address */
		ck_assert_mem_eq(grh + 20 + 16, fx.h[1].ip.b, 4);	/* destination address */
		ck_assert_mem_eq(fx.h[1].buf + 40, src + i * 1024, 1024);
	}
	roce_engine_stats(fx.eng, &es);
	ck_assert_uint_ge(es.zc_frames, 64);
	roce_destroy_ah(ah);
	ck_assert_int_eq(roce_dereg_mr(zmr), 0);
	fx_teardown_qps(q, 2);
	munmap(src, map);
}
END_TEST

/* PSN wrap: start at 0xfffff0; multi-packet messages cross 2^24, without and with loss. */
START_TEST(test_rc_psn_wrap)
{
	loss_run(_i == 0 ? 0 : 0.02, 33, 0xfffff0, 600, ROCE_MTU_1024, NULL, NULL);
}
END_TEST

/* UC under loss: sends complete; each received message is whole and correct, or absent. */
START_TEST(test_uc_loss)
{
	struct conn c = conn_defaults(ROCE_QPT_UC);
	struct roce_qp *q[2];
	struct roce_link_impair imp = { .loss = 0.01 };
	struct roce_wc wc[32];
	uint32_t nmsg = 2000, posted = 0, done = 0, got = 0, prev = 0;
	const uint32_t slot = 8192;

	fx_setup_seed(5);
	connect_pair(q, &c);
	ck_assert_int_eq(roce_link_set_impair(fx.link, 0, &imp), 0);
	for (uint32_t r = 0; r < 64; r++)
		ck_assert_int_eq(post_recv(q[1], 1, r, r * slot, slot), 0);
	for (;;) {	/* until nothing is left to happen: late receives are checked too */
		while (posted < nmsg && posted - done < 16) {
			uint32_t s = posted % 16, len = 8 + (posted * 977) % 6000;

			fill(0, 1048576 + s * slot, len, posted);
			memcpy(fx.h[0].buf + 1048576 + s * slot, &posted, 4);	/* the message id */
			memcpy(fx.h[0].buf + 1048576 + s * slot + 4, &len, 4);
			ck_assert_int_eq(post(q[0], 0, ROCE_WR_SEND, posted, 1048576 + s * slot, len, 0,
					      ROCE_SEND_SIGNALED), 0);
			posted++;
		}
		int n = roce_poll_cq(fx.h[0].scq, 32, wc);

		for (int k = 0; k < n; k++) {
			ck_assert_int_eq(wc[k].status, ROCE_WC_SUCCESS);
			ck_assert_uint_eq(wc[k].wr_id, done);
			done++;
		}
		n = roce_poll_cq(fx.h[1].rcq, 32, wc);
		for (int k = 0; k < n; k++) {
			uint8_t *b = fx.h[1].buf + wc[k].wr_id * slot;
			uint32_t id, len;
			uint8_t *want;

			ck_assert_int_eq(wc[k].status, ROCE_WC_SUCCESS);
			memcpy(&id, b, 4);
			memcpy(&len, b + 4, 4);
			ck_assert_uint_eq(len, wc[k].byte_len);
			ck_assert_uint_lt(id, nmsg);
			ck_assert(got == 0 || id > prev);	/* in order, never twice */
			want = malloc(len);
			for (uint32_t j = 8; j < len; j++)
				want[j] = (uint8_t)((j * 131u + id * 7u + (j >> 8)) ^ id);
			ck_assert_msg(memcmp(b + 8, want + 8, len - 8) == 0, "UC message %u corrupt", id);
			free(want);
			prev = id;
			got++;
			ck_assert_int_eq(post_recv(q[1], 1, wc[k].wr_id, (uint32_t)wc[k].wr_id * slot,
						   slot), 0);
		}
		if (!step())
			break;
	}
	drain();
	ck_assert_uint_eq(done, nmsg);
	/* most messages arrive; the lost ones are simply absent */
	ck_assert_uint_gt(got, nmsg * 8 / 10);
	ck_assert_uint_lt(got, nmsg);
	/* no receive WQE was lost with a broken message: all 64 are still posted, and flush */
	{
		struct roce_qp_attr a = { .qp_state = ROCE_QPS_ERR };
		int n, flushed = 0;

		ck_assert_int_eq(roce_modify_qp(q[1], &a, ROCE_QP_STATE), 0);
		while ((n = roce_poll_cq(fx.h[1].rcq, 32, wc)) > 0)
			for (int k = 0; k < n; k++, flushed++)
				ck_assert_int_eq(wc[k].status, ROCE_WC_WR_FLUSH_ERR);
		ck_assert_int_eq(flushed, 64);
	}
	fx_teardown_qps(q, 2);
}
END_TEST

/* ---- determinism ---- */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	b = malloc(*len + 1);
	ck_assert_uint_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/* The randomized RC workload under 1% loss, twice with one seed and once with another. */
START_TEST(test_determinism)
{
	char p[3][64];
	uint8_t *b[3];
	size_t len[3];

	for (int i = 0; i < 3; i++) {
		snprintf(p[i], sizeof(p[i]), "/tmp/test_transport_det%d_%d.pcap", i, (int)getpid());
		loss_run(0.01, i == 2 ? 43 : 42, 0x100, 300, ROCE_MTU_1024, p[i], NULL);
		b[i] = slurp(p[i], &len[i]);
		unlink(p[i]);
	}
	ck_assert_uint_gt(len[0], 100000);
	ck_assert_uint_eq(len[0], len[1]);
	ck_assert(memcmp(b[0], b[1], len[0]) == 0);
	ck_assert(len[0] != len[2] || memcmp(b[0], b[2], len[0]) != 0);
	for (int i = 0; i < 3; i++)
		free(b[i]);
}
END_TEST

static void perf_pcap(const char *path, uint64_t seed, enum roce_perf_test t)
{
	struct roce_perf_conf conf;
	struct roce_perf_result res;

	roce_perf_defaults(&conf, t);
	conf.iters = 300;
	conf.size = 8192;
	conf.impair.loss = 0.01;
	conf.impair_back.loss = 0.01;
	conf.seed = seed;
	conf.verify = true;
	conf.pcap = path;
	ck_assert_int_eq(roce_perf_run(&conf, &res), 0);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_msg(res.verify_failures == 0, "%s", res.verify_msg);
	ck_assert_uint_gt(res.retransmits, 0);
}

/*
 * Two captures byte for byte, timestamps included (lib/perf maps host memory at fixed
 * addresses, so even RETH addresses and ICRCs repeat).
 * @return the number of frames, or -1 at the first difference
 */
static long pcap_cmp(const char *a, const char *b)
{
	struct roce_pcap_reader *ra = roce_pcap_open(a, NULL, NULL, 0);
	struct roce_pcap_reader *rb = roce_pcap_open(b, NULL, NULL, 0);
	struct roce_pcap_frame fa, fb;
	long n = 0;
	int ka, kb;

	ck_assert(ra != NULL && rb != NULL);
	for (;;) {
		struct roce_pkt pkt;
		uint8_t x[9216], y[9216];

		ka = roce_pcap_next(ra, &fa);
		kb = roce_pcap_next(rb, &fb);
		if (ka != 1 || kb != 1)
			break;
		if (fa.ts_ns != fb.ts_ns || fa.caplen != fb.caplen || fa.caplen > sizeof(x)) {
			n = -1;
			break;
		}
		memcpy(x, fa.data, fa.caplen);
		memcpy(y, fb.data, fb.caplen);
		ck_assert_int_eq(roce_wire_parse(fa.data, fa.caplen, 0, &pkt), 0);
		if (memcmp(x, y, fa.caplen) != 0) {
			n = -1;
			break;
		}
		n++;
	}
	if (n >= 0 && ka != kb)
		n = -1;
	roce_pcap_close(ra);
	roce_pcap_close(rb);
	return n;
}

/* rocelab perf under loss: same seed, same frames at the same times; another seed differs. */
START_TEST(test_perf_determinism)
{
	static const enum roce_perf_test tests[] = { ROCE_PERF_WRITE_BW, ROCE_PERF_READ_BW };
	char p[3][64];

	for (int i = 0; i < 3; i++) {
		snprintf(p[i], sizeof(p[i]), "/tmp/test_transport_perf%d_%d.pcap", i, (int)getpid());
		perf_pcap(p[i], i == 2 ? 43 : 42, tests[_i]);
	}
	ck_assert_int_gt(pcap_cmp(p[0], p[1]), 300);
	ck_assert_int_eq(pcap_cmp(p[0], p[2]), -1);
	for (int i = 0; i < 3; i++)
		unlink(p[i]);
}
END_TEST

/*
 * One message outstanding (-t 1): the loop posts the next only after polling a completion, when
 * the engine has nothing left to do. Every iteration completes, and goodput is one message per
 * round trip, far under the line rate.
 */
START_TEST(test_perf_depth_one)
{
	static const enum roce_perf_test tests[] = { ROCE_PERF_WRITE_BW, ROCE_PERF_READ_BW,
						     ROCE_PERF_SEND_BW, ROCE_PERF_ATOMIC_BW };
	struct roce_perf_conf conf;
	struct roce_perf_result res;

	roce_perf_defaults(&conf, tests[_i]);
	conf.tx_depth = 1;
	conf.iters = 20;
	conf.verify = true;
	conf.delay = 5 * ROCE_US;
	ck_assert_int_eq(roce_perf_run(&conf, &res), 0);
	ck_assert_uint_eq(res.iters, 20);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_msg(res.verify_failures == 0, "%s", res.verify_msg);
	/* one message per round trip of at least 10 us */
	ck_assert_double_le(res.bw_avg_gbps, conf.size * 8 / 10e-6 / 1e9);
	ck_assert_double_ge(res.virtual_sec, 20 * 10e-6);

	conf.iters = 1;
	conf.duration = 0.0005;
	ck_assert_int_eq(roce_perf_run(&conf, &res), 0);
	ck_assert_uint_gt(res.iters, 5);
}
END_TEST

/*
 * send_bw against a slow consumer: 4 receives, each posted again 10 us after it completes. The
 * server can take at most 4 messages per 10 us (13.1 Gb/s of 4 KiB), so the sender outruns it,
 * meets RNR NAKs and waits the advertised timer (code 1: 10 us) before each resend; every
 * message still arrives whole. The same run with the receives posted at once has no RNR NAK.
 */
START_TEST(test_perf_recv_delay)
{
	struct roce_perf_conf conf;
	struct roce_perf_result res;
	char err[160];

	roce_perf_defaults(&conf, ROCE_PERF_SEND_BW);
	conf.size = 4096;
	conf.iters = 400;
	conf.rx_depth = 4;
	conf.min_rnr_timer = 1;
	conf.verify = true;
	ck_assert_int_eq(roce_perf_run(&conf, &res), 0);
	ck_assert_uint_eq(res.rnr_naks, 0);
	ck_assert_double_gt(res.bw_avg_gbps, 80);

	conf.recv_delay = 10 * ROCE_US;
	ck_assert_int_eq(roce_perf_check(&conf, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_perf_run(&conf, &res), 0);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_msg(res.verify_failures == 0, "%s", res.verify_msg);
	ck_assert_uint_eq(res.iters, 400);
	ck_assert_uint_gt(res.rnr_naks, 10);
	ck_assert_double_le(res.bw_avg_gbps, 4 * 4096 * 8 / 10e-6 / 1e9);
	ck_assert_double_ge(res.virtual_sec, (double)res.rnr_naks * 10e-6);

	/* a receive delay means nothing to a test without receives */
	roce_perf_defaults(&conf, ROCE_PERF_WRITE_BW);
	conf.recv_delay = ROCE_US;
	ck_assert_int_eq(roce_perf_check(&conf, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "send_bw"));
}
END_TEST

/* ---- the host interface: PFC from a NIC whose receive buffer fills ---- */

#define HP_LEN 4000		/* the sender's frames: IPv4, not RoCE, written to memory all the same */

/*
 * The far end of a NIC with a host interface: it sends back to back until the NIC's first
 * XOFF arrives, honours it at once, and notes when that XOFF and the XON after it arrive.
 */
static struct {
	struct roce_engine *eng;	/* pool and clock */
	struct roce_device *dev;	/* the NIC */
	struct roce_link *link;		/* between them */
	uint32_t sent;			/* frames pulled */
	roce_time_t xoff_rx, xon_rx;	/* arrival of the first XOFF, of the first XON after it */
	uint64_t nic_rx, link_rx;	/* at the XOFF: the NIC's rx_frames, the link's deliveries */
} hp;

static struct rte_mbuf *hp_pull(void *owner)
{
	struct rte_mbuf *m;
	uint8_t *d;

	(void)owner;
	if (hp.xoff_rx != 0)
		return NULL;
	m = roce_engine_mbuf(hp.eng);
	ck_assert_ptr_nonnull(m);
	d = (uint8_t *)rte_pktmbuf_append(m, HP_LEN);
	ck_assert_ptr_nonnull(d);
	memset(d, 0, HP_LEN);
	d[12] = 0x08;	/* IPv4: for the host (no QP takes it once written) */
	hp.sent++;
	return m;
}

static void hp_rx(void *owner, struct rte_mbuf *m)
{
	roce_time_t now = roce_engine_now(hp.eng);
	struct roce_pkt pkt;

	(void)owner;
	ck_assert_int_eq(roce_wire_parse(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, 0, &pkt), 0);
	ck_assert_int_eq(pkt.kind, ROCE_KIND_PFC);
	ck_assert_uint_eq(pkt.pfc_cev, 1u << 3);
	if (pkt.quanta[3] != 0 && hp.xoff_rx == 0) {
		struct roce_link_stats st;

		hp.xoff_rx = now;
		roce_link_stats(hp.link, 0, &st);
		hp.link_rx = st.rx_frames;
		hp.nic_rx = roce_device_counter_by_name(hp.dev, "rx_frames");
	}
	else if (pkt.quanta[3] == 0 && hp.xoff_rx != 0 && hp.xon_rx == 0)
		hp.xon_rx = now;
	rte_pktmbuf_free(m);
}

/* @p bytes at @p bps, ps rounded up, as the link and the host interface time them. */
static roce_time_t hp_time(uint64_t bytes, uint64_t bps)
{
	return (roce_time_t)(((unsigned __int128)bytes * 8 * ROCE_SEC + bps - 1) / bps);
}

/* Bytes a host interface of @p bps has still to write @p ps before its writes end. */
static uint64_t hp_bytes(roce_time_t ps, uint64_t bps)
{
	return (uint64_t)((unsigned __int128)ps * bps / (8 * ROCE_SEC));
}

/*
 * A 100G NIC writing at 57.6 Gb/s pauses its link at the link's PFC headroom below its buffer
 * (roce_link_pfc_headroom(), the switch's formula; half the buffer if it is smaller than two
 * headrooms) and resumes it two of the link's largest frames (on the wire) below that, or at
 * half that point if it is below two such gaps. The
 * sender's frames arrive every s ps and are written every w > s, back to back, so before
 * frame k arrives k·(w − s) ps of writes are queued. The XOFF leaves as the frame that crossed
 * the threshold arrives and the XON as the write that went under it ends; their arrival times
 * tell which, and the bytes held then must be just past the thresholds.
 */
START_TEST(test_host_pfc_thresholds)
{
	/* the last is smaller than two of the gap between XOFF and XON: XON at half the XOFF */
	static const uint32_t buffers[] = { 256u << 10, 128u << 10, 32u << 10 };
	const uint64_t rate = 100000000000ull, host_bps = 57600000000ull, buf = buffers[_i];
	const roce_time_t d = ROCE_US;
	const roce_time_t s = hp_time(roce_wire_bytes(HP_LEN), rate), w = hp_time(HP_LEN, host_bps);
	const roce_time_t p = hp_time(roce_wire_bytes(ROCE_PFC_FRAME_LEN), rate);
	char name[32];
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .nb_mbufs = 1024,
				       .mbuf_data = HP_LEN + 256, .name = name };
	struct roce_link_conf lc = { .rate_bps = rate, .delay = d };	/* no MTU: jumbo frames */
	struct roce_device_conf dc = { .name = "hp", .speed_bps = rate, .host_bps = host_bps,
				       .host_rx_buffer = (uint32_t)buf, .host_pfc = 1u << 3 };
	struct roce_link_end a = { .pull = hp_pull, .rx = hp_rx }, b;
	uint64_t hdrm, xoff, xon, gap;
	roce_time_t a0 = s + d, end, c;
	struct roce_device *dev;
	struct roce_link *link;
	uint32_t k;

	snprintf(name, sizeof(name), "thp%d", _i);
	memset(&hp, 0, sizeof(hp));
	hp.eng = roce_engine_create(&ec);
	ck_assert_ptr_nonnull(hp.eng);
	dev = roce_device_create(hp.eng, &dc);
	ck_assert_ptr_nonnull(dev);
	b = roce_device_link_end(dev);
	link = roce_link_create(hp.eng, &lc, &a, &b);
	ck_assert_ptr_nonnull(link);
	hp.dev = dev;
	hp.link = link;
	roce_device_attach(dev, link, 1);
	roce_link_kick(link, 0);
	roce_engine_run(hp.eng, ROCE_MS);
	/* rx_frames counts at the port: frames waiting to be written too (rx_packets_phy) */
	ck_assert_uint_gt(hp.link_rx, 0);
	ck_assert_uint_eq(hp.nic_rx, hp.link_rx);
	ck_assert_uint_eq(roce_device_counter_by_name(dev, "rx_frames"), hp.sent);

	hdrm = roce_link_pfc_headroom(link);
	xoff = buf > 2 * hdrm ? buf - hdrm : buf / 2;
	gap = 2 * roce_wire_bytes(roce_link_max_frame(link));
	xon = xoff > 2 * gap ? xoff - gap : xoff / 2;
	ck_assert_msg(hp.xoff_rx != 0 && hp.xon_rx > hp.xoff_rx, "XOFF at %" PRIu64 " ps, XON at %"
		      PRIu64, hp.xoff_rx, hp.xon_rx);
	ck_assert_uint_eq(roce_device_counter_by_name(dev, "tx_pfc_frames"), 2);
	ck_assert_uint_eq(roce_device_counter_by_name(dev, "rx_out_of_buffer"), 0);

	/* XOFF: frame k arrived at (k + 1)·s + d, its XOFF p + d later */
	ck_assert_uint_eq((hp.xoff_rx - p - 2 * d) % s, 0);
	k = (uint32_t)((hp.xoff_rx - p - 2 * d) / s) - 1;
	ck_assert_msg(hp_bytes(k * (w - s), host_bps) + HP_LEN > xoff &&
		      hp_bytes((k - 1) * (w - s), host_bps) + HP_LEN <= xoff,
		      "XOFF as frame %u arrived, %" PRIu64 " B held; threshold %" PRIu64, k,
		      hp_bytes(k * (w - s), host_bps), xoff);

	/* XON: the writes of all the frames sent end at a0 + sent·w; one ended p + d before it */
	end = a0 + hp.sent * w;
	c = hp.xon_rx - p - d;
	ck_assert_uint_eq((c - a0) % w, 0);
	ck_assert_msg(hp_bytes(end - c, host_bps) < xon && hp_bytes(end - c + w, host_bps) >= xon,
		      "XON with %" PRIu64 " B held; threshold %" PRIu64, hp_bytes(end - c, host_bps),
		      xon);

	roce_link_destroy(link);
	ck_assert_int_eq(roce_device_destroy(dev), 0);
	roce_engine_destroy(hp.eng);
}
END_TEST

/*
 * perftest's exchange parsers on a peer's bytes. The first two are fuzz_exchange's first finding
 * (7 Dec 2026): a message whose ':' after the last number is missing made sscanf count its
 * conversions with %n unset, and the parser read on from an uninitialised offset.
 */
START_TEST(test_exchange_parsers)
{
	/* fuzz/crashes/exchange-crash-9f9e2b30...: a pingpong address without its third ':' */
	static const char pp_cut[] = "0000:0000:0000ffff0a4d0002";
	/* a key message without the ':' after the VAddr; then one as perftest 6.06 writes it */
	static const char key_cut[] = "0000:0010:000011:5397dd:00000100:00007f1a77e39000";
	static const char key_ok[] = "0000:0010:000011:5397dd:00000100:00007f1a77e39000:00:00:00:"
				     "00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:";
	struct perf_pp_dest d;
	struct perf_key k, k2;
	char packed[PERF_KEY_MSG], text[16];
	double v;
	uint8_t mtu;

	memset(&k, 0, sizeof(k));	/* compared whole below, padding included */
	memset(&k2, 0, sizeof(k2));
	ck_assert_int_eq(perf_pp_parse(pp_cut, sizeof(pp_cut), &d), -EPROTO);
	ck_assert_int_eq(perf_key_parse(key_cut, sizeof(key_cut), &k), -EPROTO);
	/* sscanf's %x would take a sign: "-1" is not a 24-bit QPN */
	ck_assert_int_eq(perf_key_parse("0000:0010:-1:5397dd:00000100:00007f1a77e39000:00:00:00:"
					"00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:", 104, &k),
			 -EPROTO);
	ck_assert_int_eq(perf_key_parse(key_ok, sizeof(key_ok), &k), 0);
	ck_assert_uint_eq(k.qpn, 0x11);
	ck_assert_uint_eq(k.vaddr, 0x7f1a77e39000ull);
	ck_assert_uint_eq(k.gid[15], 2);
	perf_key_pack(&k, packed);
	ck_assert_str_eq(packed, key_ok);
	ck_assert_int_eq(perf_key_parse(packed, sizeof(packed), &k2), 0);
	ck_assert_int_eq(memcmp(&k, &k2, sizeof(k)), 0);

	ck_assert_int_eq(perf_version_parse("6.06\0\0\0\0\0\0\0\0\0\0\0", 16, &v), 0);
	ck_assert(v > 6.05 && v < 6.07);
	ck_assert_int_eq(perf_version_parse("5.69", 4, &v), -EPROTO);
	ck_assert_int_eq(perf_version_parse("nan", 3, &v), -EPROTO);
	ck_assert_int_eq(perf_version_parse("1e999", 5, &v), -EPROTO);
	ck_assert_int_eq(perf_version_parse("GET / HTTP/1.1\r\n", 16, &v), -EPROTO);
	ck_assert_int_eq(perf_mtu_parse("5", 2, &mtu), 0);
	ck_assert_uint_eq(mtu, 5);
	ck_assert_int_eq(perf_mtu_parse("6", 2, &mtu), -EPROTO);
	ck_assert_int_eq(perf_mtu_parse("5A", 2, &mtu), -EPROTO);

	/* a peer's bytes in a message: escaped, cut to fit, terminated */
	ck_assert_str_eq(perf_oob_printable("a\r\n\x1b", 4, text, sizeof(text)), "a\\x0d\\x0a...");
	ck_assert_str_eq(perf_oob_printable("6.06\0junk", 9, text, sizeof(text)), "6.06");
	ck_assert_str_eq(perf_oob_printable("\\", 1, text, sizeof(text)), "\\x5c");
}
END_TEST

/*
 * The completion script (perf_wcs.c, what `rocelab compare completions` runs on a device too)
 * on the emulated NIC: every case's completions, both sides in order, as the IBA has them.
 */
START_TEST(test_completion_script)
{
	static const struct {
		const char *name, *want;
	} want[] = {
		{ "send", "A:SEND B:RECV/64" },
		{ "send_imm", "A:SEND B:RECV/64/imm" },
		{ "send_inline", "A:SEND B:RECV/32" },
		{ "write", "A:RDMA_WRITE" },
		{ "write_imm", "A:RDMA_WRITE B:RECV_RDMA_WITH_IMM/64/imm" },
		{ "read", "A:RDMA_READ/64" },
		{ "fetch_add", "A:FETCH_ADD/8" },
		{ "cmp_swap", "A:COMP_SWAP/8" },
		{ "unsignaled", "A:SEND B:RECV/64 B:RECV/64" },
		{ "bad_rkey", "A:REM_ACCESS_ERR" },
		{ "out_of_bounds", "A:REM_ACCESS_ERR" },
		{ "no_access", "A:REM_INV_REQ_ERR" },	/* as rxe: rc_nak_inv_req_no_write.pcap */
		{ "rnr_exhausted", "A:RNR_RETRY_EXC_ERR" },
		{ "send_too_long", "A:REM_INV_REQ_ERR B:LOC_LEN_ERR" },
		{ "qp_error", "A:WR_FLUSH_ERR A:WR_FLUSH_ERR" },
	};
	struct roce_wcs_env env;
	struct roce_wcs_emu *emu = roce_wcs_emulated(ROCE_MTU_1024, 10000000000ull, ROCE_US, &env);

	ck_assert_ptr_nonnull(emu);
	ck_assert_uint_eq(roce_wcs_count(), sizeof(want) / sizeof(want[0]));
	for (uint32_t i = 0; i < roce_wcs_count(); i++) {
		struct roce_wcs_case c;
		char got[256] = "", one[48];

		roce_wcs_run(&env, i, &c);
		ck_assert_msg(c.rc == 0, "%s: %s", c.name, c.err);
		for (uint32_t k = 0; k < c.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? " " : "",
				 roce_wcs_format(&c.comp[k], one, sizeof(one)));
		ck_assert_str_eq(c.name, want[i].name);
		ck_assert_msg(strcmp(got, want[i].want) == 0, "%s: %s, expected %s", c.name, got,
			      want[i].want);
	}
	roce_wcs_emulated_free(emu);
}
END_TEST

static Suite *transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("end_to_end");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rc_send_family);
	tcase_add_test(tc, test_rc_write);
	tcase_add_test(tc, test_verbs_tables);
	tcase_add_test(tc, test_rc_headers_follow_changes);
	tcase_add_test(tc, test_rc_ackreq_sqd);
	tcase_add_test(tc, test_rc_ackreq_coalesce);
	tcase_add_test(tc, test_rc_start_psn_not_retransmit);
	tcase_add_test(tc, test_rc_read);
	tcase_add_test(tc, test_rc_atomics);
	tcase_add_test(tc, test_rc_sizes_sges);
	tcase_add_test(tc, test_rc_inline);
	tcase_add_test(tc, test_rc_unsignaled);
	tcase_add_test(tc, test_rc_fence);
	tcase_add_test(tc, test_uc);
	tcase_add_test(tc, test_ud);
	tcase_add_test(tc, test_ud_port_mtu);
	tcase_add_test(tc, test_srq);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_rc_remote_access, 0, ACC_NUM);
	tcase_add_test(tc, test_rc_atomic_misaligned);
	tcase_add_test(tc, test_rc_recv_too_small);
	tcase_add_test(tc, test_rc_rnr_exceeded);
	tcase_add_test(tc, test_rc_rnr_recovers);
	tcase_add_loop_test(tc, test_rc_retry_cnt, 0, 2);
	tcase_add_test(tc, test_rc_wait);
	tcase_add_test(tc, test_rc_wait_rate);
	tcase_add_test(tc, test_rc_implied_nak);
	tcase_add_test(tc, test_rc_duplicates);
	tcase_add_test(tc, test_rc_partial_read_retry);
	tcase_add_test(tc, test_rc_duplicate_msn);
	tcase_add_test(tc, test_rc_duplicate_read_range);
	tcase_add_loop_test(tc, test_rc_read_late_responses, 0, 8);
	tcase_add_test(tc, test_cq_overflow);
	tcase_add_test(tc, test_qp_state_machine);
	suite_add_tcase(s, tc);

	tc = tcase_create("loss");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_rc_loss, 0, (int)ROCE_DIM(losses));
	tcase_add_loop_test(tc, test_rc_loss_mtu1024, 0, 2);
	tcase_add_test(tc, test_rc_loss_dup_reorder);
	tcase_add_test(tc, test_rc_corrupt);
	tcase_add_test(tc, test_rc_zero_copy);
	tcase_add_test(tc, test_ud_zero_copy);
	tcase_add_test(tc, test_rc_discard);
	tcase_add_loop_test(tc, test_rc_psn_wrap, 0, 2);
	tcase_add_test(tc, test_uc_loss);
	tcase_add_test(tc, test_determinism);
	tcase_add_loop_test(tc, test_perf_determinism, 0, 2);
	tcase_add_loop_test(tc, test_perf_depth_one, 0, 4);
	tcase_add_test(tc, test_perf_recv_delay);
	suite_add_tcase(s, tc);

	tc = tcase_create("host_interface");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_host_pfc_thresholds, 0, 3);
	suite_add_tcase(s, tc);

	tc = tcase_create("exchange");
	tcase_add_test(tc, test_exchange_parsers);
	suite_add_tcase(s, tc);

	tc = tcase_create("completion_script");
	tcase_add_test(tc, test_completion_script);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(transport_suite());
	int failed;

	/* once, before Check forks: every test inherits the initialised EAL */
	if (roce_eal_init(NULL) != 0)
		return EXIT_FAILURE;
	/* forking a process with the EAL's memory costs ~0.7 s a test; CK_FORK=yes restores it */
	if (getenv("CK_FORK") == NULL)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
