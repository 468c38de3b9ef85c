/*
 * The completion script: one list of work requests, each case on a fresh pair of RC QPs, run
 * through the verbs front end on any provider, with every completion of both sides kept in
 * order, so that two providers' answers to the same requests can be set side by side.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roce_front.h"
#include "roce_perf.h"
#include "roce_transport.h"

#define WCS_BUF 4096			/* each side's registered buffer */
#define WCS_QUIET_SEC 0.1		/* a device: no new completion for this long ends a case */
#define WCS_MAX_SEC 3.0			/* ... and a case ends after this long in any case */
#define WCS_IMM 0x12345678u

enum wcs_kind {
	WCS_SEND, WCS_SEND_IMM, WCS_SEND_INLINE, WCS_WRITE, WCS_WRITE_IMM, WCS_READ, WCS_FETCH_ADD,
	WCS_CMP_SWAP, WCS_UNSIGNALED, WCS_BAD_RKEY, WCS_OUT_OF_BOUNDS, WCS_NO_ACCESS, WCS_RNR,
	WCS_SEND_TOO_LONG, WCS_QP_ERROR,
};

static const struct {
	enum wcs_kind kind;
	const char *name, *what, *iba;
} cases[] = {
	{ WCS_SEND, "send", "SEND 64 B into a 64 B receive",
	  "A: SEND success; B: RECV success, byte_len 64 (IBA 11.4.2.1)" },
	{ WCS_SEND_IMM, "send_imm", "SEND with immediate 64 B",
	  "B: RECV, byte_len 64, WITH_IMM and the immediate (IBA 9.4.1.2)" },
	{ WCS_SEND_INLINE, "send_inline", "SEND 32 B inline",
	  "as a SEND: the data is the WQE's, not the buffer's (IBA 10.8.3.1)" },
	{ WCS_WRITE, "write", "RDMA WRITE 64 B", "A: RDMA_WRITE success; B: nothing (IBA 9.4.2)" },
	{ WCS_WRITE_IMM, "write_imm", "RDMA WRITE with immediate 64 B",
	  "A: RDMA_WRITE; B: RECV_RDMA_WITH_IMM consuming a receive, WITH_IMM (IBA 9.4.2)" },
	{ WCS_READ, "read", "RDMA READ 64 B", "A: RDMA_READ, byte_len 64 (IBA 11.4.2.1)" },
	{ WCS_FETCH_ADD, "fetch_add", "atomic fetch and add",
	  "A: FETCH_ADD, byte_len 8 (IBA 9.4.5)" },
	{ WCS_CMP_SWAP, "cmp_swap", "atomic compare and swap",
	  "A: COMP_SWAP, byte_len 8 (IBA 9.4.5)" },
	{ WCS_UNSIGNALED, "unsignaled", "SEND unsignaled, then SEND signaled",
	  "A: one completion, the second's (IBA 10.8.6); B: two receives" },
	{ WCS_BAD_RKEY, "bad_rkey", "RDMA WRITE with a wrong rkey",
	  "A: REM_ACCESS_ERR, the QP to the error state (IBA 9.7.5.2.8)" },
	{ WCS_OUT_OF_BOUNDS, "out_of_bounds", "RDMA WRITE past the end of the region",
	  "A: REM_ACCESS_ERR (IBA 9.7.5.2.8)" },
	{ WCS_NO_ACCESS, "no_access", "RDMA WRITE to a QP without remote write access",
	  "A: REM_INV_REQ_ERR, or REM_ACCESS_ERR: the IBA leaves which (IBA 9.7.5.2.8)" },
	{ WCS_RNR, "rnr_exhausted", "SEND with no receive posted, rnr_retry 0",
	  "A: RNR_RETRY_EXC_ERR (IBA 9.7.5.2.8, 10.8.3.3)" },
	{ WCS_SEND_TOO_LONG, "send_too_long", "SEND 128 B into a 64 B receive",
	  "B: LOC_LEN_ERR; A: REM_INV_REQ_ERR (a remote invalid request NAK, IBA 9.7.5.2.8)" },
	{ WCS_QP_ERROR, "qp_error", "two receives posted, then the QP moved to ERR",
	  "A: both receives WR_FLUSH_ERR, in order (IBA 10.3.1)" },
};

/* One side of a case. */
struct wcs_side {
	struct roce_front *dev;
	struct roce_front_pd *pd;
	struct roce_front_cq *cq;
	struct roce_front_qp *qp;
	struct roce_front_mr *mr;
	uint8_t *buf;
};

uint32_t roce_wcs_count(void)
{
	return sizeof(cases) / sizeof(cases[0]);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void side_free(struct wcs_side *s)
{
	roce_front_destroy_qp(s->qp);
	roce_front_dereg_mr(s->mr);
	roce_front_destroy_cq(s->cq);
	roce_front_dealloc_pd(s->pd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static int side_make(struct wcs_side *s, struct roce_front *dev, unsigned int remote)
{
	struct roce_qp_cap cap = {
		.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
		.max_inline_data = 64,
	};
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_INIT, .port_num = 1, .qp_access_flags = remote,
	};

	s->dev = dev;
	s->buf = calloc(1, WCS_BUF);
	if (s->buf == NULL)
		return -ENOMEM;
	s->pd = roce_front_alloc_pd(dev);
	if (s->pd == NULL)
		return -errno;
	s->cq = roce_front_create_cq(dev, 64);
	if (s->cq == NULL)
		return -errno;
	s->mr = roce_front_reg_mr(s->pd, s->buf, WCS_BUF, ROCE_ACCESS_LOCAL_WRITE |
				  ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
				  ROCE_ACCESS_REMOTE_ATOMIC);
	if (s->mr == NULL)
		return -errno;
	s->qp = roce_front_create_qp(s->pd, s->cq, s->cq, ROCE_QPT_RC, &cap);
	if (s->qp == NULL)
		return -errno;
	return roce_front_modify_qp(s->qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
				    ROCE_QP_ACCESS_FLAGS);
}

/* INIT -> RTR -> RTS toward @p to, its QP @p dest. */
static int side_connect(struct wcs_side *s, const struct roce_ah_attr *to, uint32_t dest,
			enum roce_mtu mtu, uint8_t rnr_retry)
{
	struct roce_qp_attr a = {
		.qp_state = ROCE_QPS_RTR, .path_mtu = mtu, .dest_qp_num = dest, .rq_psn = 0,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1, .ah_attr = *to,
	};
	int rc = roce_front_modify_qp(s->qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				      ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN |
				      ROCE_QP_MAX_DEST_RD_ATOMIC | ROCE_QP_MIN_RNR_TIMER);

	if (rc != 0)
		return rc;
	a = (struct roce_qp_attr){
		.qp_state = ROCE_QPS_RTS, .sq_psn = 0, .timeout = 12, .retry_cnt = 1,
		.rnr_retry = rnr_retry, .max_rd_atomic = 1,
	};
	return roce_front_modify_qp(s->qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
				    ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY |
				    ROCE_QP_MAX_QP_RD_ATOMIC);
}

static int post_recv(struct wcs_side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct roce_sge sge = { .addr = (uintptr_t)s->buf + off, .length = len, .lkey = s->mr->lkey };
	struct roce_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };

	return roce_front_post_recv(s->qp, &wr);
}

/* The case's requests from A to B. */
static int post_case(enum wcs_kind k, struct wcs_side *a, struct wcs_side *b)
{
	struct roce_sge sge = { .addr = (uintptr_t)a->buf, .length = 64, .lkey = a->mr->lkey };
	struct roce_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .send_flags = ROCE_SEND_SIGNALED,
	};
	uint64_t raddr = (uintptr_t)b->buf + 1024;
	int rc;

	/* the RDMA cases' target: B's region, but where a case is about a wrong one */
	wr.wr.rdma.remote_addr = k == WCS_OUT_OF_BOUNDS ? (uintptr_t)b->buf + WCS_BUF - 32 : raddr;
	wr.wr.rdma.rkey = b->mr->rkey ^ (k == WCS_BAD_RKEY ? 0x5a5a0000u : 0);

	switch (k) {
	case WCS_SEND:
	case WCS_RNR:
		wr.opcode = ROCE_WR_SEND;
		break;
	case WCS_SEND_IMM:
		wr.opcode = ROCE_WR_SEND_WITH_IMM;
		wr.imm_data = WCS_IMM;
		break;
	case WCS_SEND_INLINE:
		wr.opcode = ROCE_WR_SEND;
		wr.send_flags |= ROCE_SEND_INLINE;
		sge.length = 32;
		break;
	case WCS_SEND_TOO_LONG:
		wr.opcode = ROCE_WR_SEND;
		sge.length = 128;
		break;
	case WCS_UNSIGNALED: {
		struct roce_send_wr first = wr;

		first.wr_id = 0;
		first.opcode = ROCE_WR_SEND;
		first.send_flags = 0;
		rc = roce_front_post_send(a->qp, &first);
		if (rc != 0)
			return rc;
		wr.opcode = ROCE_WR_SEND;
		break;
	}
	case WCS_WRITE:
	case WCS_NO_ACCESS:
	case WCS_BAD_RKEY:
	case WCS_OUT_OF_BOUNDS:
		wr.opcode = ROCE_WR_RDMA_WRITE;
		break;
	case WCS_WRITE_IMM:
		wr.opcode = ROCE_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = WCS_IMM;
		break;
	case WCS_READ:
		wr.opcode = ROCE_WR_RDMA_READ;
		break;
	case WCS_FETCH_ADD:
	case WCS_CMP_SWAP:
		wr.opcode = k == WCS_FETCH_ADD ? ROCE_WR_ATOMIC_FETCH_AND_ADD :
			    ROCE_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = b->mr->rkey;
		wr.wr.atomic.compare_add = k == WCS_FETCH_ADD ? 5 : 0;
		wr.wr.atomic.swap = 7;
		sge.length = 8;
		break;
	case WCS_QP_ERROR: {
		struct roce_qp_attr err = { .qp_state = ROCE_QPS_ERR };

		if ((rc = post_recv(a, 1, 0, 64)) != 0 || (rc = post_recv(a, 2, 64, 64)) != 0)
			return rc;
		return roce_front_modify_qp(a->qp, &err, ROCE_QP_STATE);
	}
	}
	return roce_front_post_send(a->qp, &wr);
}

/* Take every completion of @p s's CQ into @p out. @return how many */
static int take(struct wcs_side *s, char side, struct roce_wcs_case *out)
{
	struct roce_wc wc[8];
	int n, got = 0;

	while ((n = roce_front_poll_cq(s->cq, 8, wc)) > 0) {
		for (int i = 0; i < n; i++, got++) {
			struct roce_wcs_comp *c;

			if (out->n >= ROCE_WCS_MAX)
				continue;
			c = &out->comp[out->n++];
			c->side = side;
			c->wr_id = wc[i].wr_id;
			c->status = wc[i].status;
			c->opcode = wc[i].opcode;
			c->byte_len = wc[i].byte_len;
			c->imm_data = wc[i].imm_data;
			c->wc_flags = wc[i].wc_flags;
		}
	}
	return got;
}

void roce_wcs_run(const struct roce_wcs_env *env, uint32_t i, struct roce_wcs_case *out)
{
	enum wcs_kind k = cases[i].kind;
	struct wcs_side a = { 0 }, b = { 0 };
	unsigned int all = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
			   ROCE_ACCESS_REMOTE_ATOMIC;
	double start, last;
	int rc;

	memset(out, 0, sizeof(*out));
	out->name = cases[i].name;
	out->what = cases[i].what;
	out->iba = cases[i].iba;
	rc = side_make(&a, env->dev, all);
	if (rc == 0)
		rc = side_make(&b, env->peer, k == WCS_NO_ACCESS ? 0 : all);
	if (rc == 0)
		rc = side_connect(&a, &env->to_peer, b.qp->qp_num, env->mtu, k == WCS_RNR ? 0 : 7);
	if (rc == 0)
		rc = side_connect(&b, &env->to_dev, a.qp->qp_num, env->mtu, 7);
	if (rc != 0) {
		snprintf(out->err, sizeof(out->err), "cannot set the QPs up: %s", strerror(-rc));
		goto done;
	}
	if (k == WCS_SEND || k == WCS_SEND_IMM || k == WCS_SEND_INLINE || k == WCS_WRITE_IMM ||
	    k == WCS_SEND_TOO_LONG)
		rc = post_recv(&b, 10, 0, 64);
	else if (k == WCS_UNSIGNALED)
		rc = post_recv(&b, 10, 0, 64) ? -EIO : post_recv(&b, 11, 64, 64);
	if (rc == 0)
		rc = post_case(k, &a, &b);
	if (rc != 0) {
		snprintf(out->err, sizeof(out->err), "cannot post: %s", strerror(-rc));
		goto done;
	}
	/* until no completion has come for a while (a device) or nothing is left to happen */
	start = last = mono();
	for (;;) {
		bool more = env->progress != NULL ? env->progress(env->arg) : true;

		if (take(&a, 'A', out) + take(&b, 'B', out) > 0)
			last = mono();
		if (!more || mono() - last > WCS_QUIET_SEC || mono() - start > WCS_MAX_SEC)
			break;
	}
	/* A's completions, then B's, each side's in the order polled: what compares */
	{
		struct roce_wcs_comp sorted[ROCE_WCS_MAX];
		uint32_t m = 0;

		for (int pass = 0; pass < 2; pass++)
			for (uint32_t x = 0; x < out->n; x++)
				if ((out->comp[x].side == 'A') == (pass == 0))
					sorted[m++] = out->comp[x];
		memcpy(out->comp, sorted, m * sizeof(sorted[0]));
	}
done:
	out->rc = rc;
	side_free(&a);
	side_free(&b);
}

static const char *roce_wcs_opcode_name(enum roce_wc_opcode op)
{
	switch (op) {
	case ROCE_WC_SEND: return "SEND";
	case ROCE_WC_RDMA_WRITE: return "RDMA_WRITE";
	case ROCE_WC_RDMA_READ: return "RDMA_READ";
	case ROCE_WC_COMP_SWAP: return "COMP_SWAP";
	case ROCE_WC_FETCH_ADD: return "FETCH_ADD";
	case ROCE_WC_RECV: return "RECV";
	case ROCE_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	}
	return "?";
}

char *roce_wcs_format(const struct roce_wcs_comp *c, char *out, size_t size)
{
	/* byte_len is defined for what brings data in: receives, READs and atomics */
	bool len = c->opcode >= ROCE_WC_RECV || c->opcode == ROCE_WC_RDMA_READ ||
		   c->opcode == ROCE_WC_COMP_SWAP || c->opcode == ROCE_WC_FETCH_ADD;
	char bytes[16] = "";

	if (c->status != ROCE_WC_SUCCESS) {	/* opcode and length are undefined in an error */
		snprintf(out, size, "%c:%s", c->side, roce_wc_status_name(c->status));
		return out;
	}
	if (len)
		snprintf(bytes, sizeof(bytes), "/%u", c->byte_len);
	/* a receive's immediate is the one sent; a requester's, where a device sets the flag
	 * there at all, is undefined */
	snprintf(out, size, "%c:%s%s%s%s", c->side, roce_wcs_opcode_name(c->opcode), bytes,
		 (c->wc_flags & ROCE_WC_WITH_IMM) ? "/imm" : "",
		 (c->wc_flags & ROCE_WC_WITH_IMM) && c->opcode >= ROCE_WC_RECV &&
		 c->imm_data != WCS_IMM ? "(wrong)" : "");
	return out;
}

/* ---- the emulated NIC in virtual time: two hosts on a model link ---- */

struct roce_wcs_emu {
	struct roce_engine *eng;
	struct roce_device *dev[2];
	struct roce_link *link;
	struct roce_front *front[2];
};

/* Run the engine to its next event. @return false when nothing is left to happen */
static bool emu_progress(void *arg)
{
	struct roce_wcs_emu *e = arg;
	roce_time_t next = roce_engine_next(e->eng);

	if (next == ROCE_TIME_NEVER)
		return false;
	roce_engine_run(e->eng, next);
	return true;
}

void roce_wcs_emulated_free(struct roce_wcs_emu *e)
{
	if (e == NULL)
		return;
	for (int h = 0; h < 2; h++)
		roce_front_close(e->front[h]);
	roce_link_destroy(e->link);
	for (int h = 0; h < 2; h++)
		roce_device_destroy(e->dev[h]);
	roce_engine_destroy(e->eng);
	free(e);
}

struct roce_wcs_emu *roce_wcs_emulated(enum roce_mtu mtu, uint64_t rate_bps, roce_time_t delay,
				       struct roce_wcs_env *env)
{
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .name = "wcs" };
	struct roce_link_conf lc = { .rate_bps = rate_bps, .delay = delay, .mtu = 9000 };
	struct roce_link_end ends[2];
	struct roce_wcs_emu *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->eng = roce_engine_create(&ec);
	if (e->eng == NULL)
		goto fail;
	memset(env, 0, sizeof(*env));
	for (int h = 0; h < 2; h++) {
		struct roce_device_conf dc = { .name = h ? "rocelab1" : "rocelab0", .max_mtu = mtu,
					       .speed_bps = rate_bps };
		struct roce_ah_attr *to = h ? &env->to_dev : &env->to_peer;

		dc.mac[0] = 0x02;
		dc.mac[5] = (uint8_t)(h + 1);
		dc.ip[0].b[0] = 192;
		dc.ip[0].b[2] = 2;
		dc.ip[0].b[3] = (uint8_t)(h + 1);
		dc.ip_ver[0] = 4;
		e->dev[h] = roce_device_create(e->eng, &dc);
		if (e->dev[h] == NULL)
			goto fail;
		e->front[h] = roce_front_emulated(e->dev[h]);
		if (e->front[h] == NULL)
			goto fail;
		/* host 0 reaches host 1 and back */
		to->ip_ver = 4;
		to->dip.b[0] = 192;
		to->dip.b[2] = 2;
		to->dip.b[3] = (uint8_t)(2 - h);
		to->dmac[0] = 0x02;
		to->dmac[5] = (uint8_t)(2 - h);
		ends[h] = roce_device_link_end(e->dev[h]);
	}
	e->link = roce_link_create(e->eng, &lc, &ends[0], &ends[1]);
	if (e->link == NULL)
		goto fail;
	roce_device_attach(e->dev[0], e->link, 0);
	roce_device_attach(e->dev[1], e->link, 1);
	env->dev = e->front[0];
	env->peer = e->front[1];
	env->mtu = mtu;
	env->progress = emu_progress;
	env->arg = e;
	return e;
fail:
	roce_wcs_emulated_free(e);
	return NULL;
}
