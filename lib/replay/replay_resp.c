/* Replay into an emulated responder: a capture's requests fed to rocelab, its answers compared. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_engine.h"
#include "roce_io.h"
#include "roce_replay.h"
#include "roce_transport.h"
#include "roce_verbs.h"

#define RESP_MAX_REGIONS 16		/* rkeys the requests name */
#define RESP_MAX_REGION (256u << 20)	/* bytes one region may span */
#define RESP_MAX_FRAMES 200000		/* frames kept of each kind */
#define RESP_LCS_MAX 4000		/* longer sequences are paired in order, not aligned */
#define RESP_RECV_MEM (64u << 20)	/* bytes of receive buffers at most */
#define RESP_TAIL (2 * ROCE_SEC)	/* virtual time run after the last request */
#define RESP_NO_RKEY 0			/* an rkey no rocelab MR has (key index 0 is never used) */
#define RESP_SCAN 8192			/* frames looked at for a SEND's copy and its answer: more
					 * than a window of PSNs (so a hostile capture is not N^2) */

/* One RoCEv2 frame of the capture (or of rocelab), its own copy. */
struct frame {
	uint64_t n;			/* frame number in its file (rocelab: order sent) */
	uint64_t ts_ns;			/* capture time; rocelab: virtual time + capture start */
	uint32_t len;			/* bytes */
	uint8_t *data;			/* the frame */
	struct roce_pkt pkt;		/* its parse (pointers into @data) */
	bool resent;			/* rocelab: an Atomic ACK for a PSN it answered before */
};

struct frames {
	struct frame *f;
	size_t n, cap;
};

/* A memory region inferred from the requests that name one rkey. */
struct region {
	uint32_t cap_rkey;		/* the rkey in the capture */
	uint64_t lo, hi;		/* VA range the accepted requests touch */
	uint8_t *mem;			/* rocelab's memory for it */
	uint8_t *known;			/* 1 where the bytes are known (written by a replayed request) */
	struct roce_mr *mr;
};

/* A request packet that carries or continues a RETH (WRITE) or a READ, for offsets by PSN. */
struct access {
	uint32_t psn;			/* first PSN of the message (READ) or this packet's (WRITE) */
	uint32_t npkts;			/* READ: response packets */
	int region;			/* index, or -1 */
	uint64_t off;			/* offset in the region of this packet's (READ: message's) data */
	uint32_t len;			/* READ: bytes asked */
	uint8_t *known;			/* READ: which bytes were known when it was fed (copy) */
	bool atomic;			/* an atomic request: @compare_orig says if its result is known */
	bool compare_orig;		/* the 8 bytes were known before it: compare the original value */
};

struct resp_ctx {
	const struct roce_replay_resp_conf *conf;
	struct roce_replay_resp_result *res;
	struct frames req, cap_resp, our_resp;
	struct region reg[RESP_MAX_REGIONS];
	int nreg;
	struct access *acc;
	size_t nacc, acc_cap;
	struct roce_ip_addr rsp_ip, req_ip;	/* responder and requester addresses */
	uint8_t ip_ver;
	uint32_t rsp_qpn, req_qpn, first_psn, mtu;
	uint16_t sport;				/* UDP source port of the capture's responses */
	uint8_t rnr_timer;
	unsigned int access;			/* QP access flags */
	uint32_t nrecv, recv_len;
	/*
	 * The capture's responder sent RNR NAKs: it had no receive for those SENDs. Receives are
	 * then posted as the capture shows they were taken: one just before the copy of each
	 * SEND message that the capture's responder acknowledged.
	 */
	bool recv_as_captured;
	uint32_t recv_posted;			/* receives posted so far (its buffers, in turn) */
	uint32_t recv_psn;			/* the last SEND a receive was posted for */
	uint64_t t0;				/* capture time of the first request */
	/* rocelab */
	struct roce_engine *eng;
	struct roce_device *dev;
	struct roce_pd *pd;
	struct roce_cq *scq, *rcq;
	struct roce_qp *qp;
	struct roce_mr *recv_mr;
	uint8_t *recv_mem;
	struct roce_link *link;
	struct rte_mbuf *queue[64];		/* requests waiting for the link */
	unsigned int qhead, qtail;
	struct roce_pcap_writer *out;
	int out_err;
};

static int frames_add(struct frames *fs, uint64_t n, uint64_t ts, const uint8_t *data, uint32_t len)
{
	struct frame *f;

	if (fs->n == RESP_MAX_FRAMES)
		return -ENOSPC;
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 256;
		struct frame *nf = realloc(fs->f, cap * sizeof(*nf));

		if (nf == NULL)
			return -ENOMEM;
		fs->f = nf;
		fs->cap = cap;
	}
	f = &fs->f[fs->n];
	f->data = malloc(len ? len : 1);
	if (f->data == NULL)
		return -ENOMEM;
	memcpy(f->data, data, len);
	f->n = n;
	f->ts_ns = ts;
	f->len = len;
	f->resent = false;
	roce_wire_parse(f->data, len, 0, &f->pkt);
	fs->n++;
	return 0;
}

static void frames_free(struct frames *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->f[i].data);
	free(fs->f);
}

static bool same_ip(const struct roce_ip_addr *a, const struct roce_ip_addr *b, uint8_t ver)
{
	return memcmp(a->b, b->b, ver == 4 ? 4 : 16) == 0;
}

static uint32_t op_mask(const struct roce_pkt *p)
{
	return roce_opcode[p->opcode].mask;
}

/* ---- pass 1: read the capture, find the responder, keep its requests and responses ---- */

static int read_capture(struct resp_ctx *c, char *err, size_t errlen)
{
	const struct roce_replay_resp_conf *conf = c->conf;
	struct roce_pcap_reader *rd;
	struct roce_pcap_frame f;
	bool found = conf->has_responder;
	int rc;

	if (found) {
		c->rsp_ip = conf->responder;
		c->ip_ver = conf->responder_ver;
	}
	rd = roce_pcap_open(conf->path, NULL, err, errlen);
	if (rd == NULL)
		return -EINVAL;
	while ((rc = roce_pcap_next(rd, &f)) == 1) {
		struct roce_pkt p;
		uint32_t m;

		if (roce_wire_parse(f.data, f.caplen, ROCE_PARSE_NO_ICRC, &p) != 0 ||
		    p.kind != ROCE_KIND_ROCEV2)
			continue;	/* not RoCEv2, truncated, malformed: not fed */
		m = op_mask(&p);
		if (!(m & ROCE_F_RC))
			continue;
		if (!found && (m & ROCE_F_REQ)) {
			c->rsp_ip = p.dst;
			c->ip_ver = p.ip_ver;
			found = true;
		}
		if (!found || p.ip_ver != c->ip_ver)
			continue;
		if ((m & ROCE_F_REQ) && same_ip(&p.dst, &c->rsp_ip, c->ip_ver)) {
			if (c->req.n == 0 && p.dqpn < 2) {
				/* no RC QP can have it: the device would give another number */
				snprintf(err, errlen, "%s: frame %" PRIu64 ": an RC request to QP 0x%x, "
					 "a management QP (0 SMI, 1 GSI); RC QPNs start at 2",
					 conf->path, (uint64_t)f.n, p.dqpn);
				roce_pcap_close(rd);
				return -EINVAL;
			}
			if (c->req.n == 0) {
				c->rsp_qpn = p.dqpn;
				c->req_ip = p.src;
				c->first_psn = p.psn;
				c->t0 = f.ts_ns;
			}
			if (p.dqpn != c->rsp_qpn || !same_ip(&p.src, &c->req_ip, c->ip_ver))
				continue;	/* another QP: one responder QP at a time */
			rc = frames_add(&c->req, f.n, f.ts_ns, f.data, f.caplen);
		} else if ((m & ROCE_F_RESP) && c->req.n != 0 &&
			   same_ip(&p.src, &c->rsp_ip, c->ip_ver) &&
			   same_ip(&p.dst, &c->req_ip, c->ip_ver)) {
			if (c->cap_resp.n == 0) {
				c->req_qpn = p.dqpn;
				c->sport = p.sport;
			}
			if (p.dqpn != c->req_qpn)
				continue;
			rc = frames_add(&c->cap_resp, f.n, f.ts_ns, f.data, f.caplen);
		} else {
			continue;
		}
		if (rc != 0) {
			snprintf(err, errlen, "%s: %s", conf->path, rc == -ENOSPC ?
				 "more than 200000 requests or responses: too big to compare" :
				 "out of memory");
			roce_pcap_close(rd);
			return rc == -ENOSPC ? -EINVAL : rc;
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", roce_pcap_error(rd));
		roce_pcap_close(rd);
		return -EINVAL;
	}
	roce_pcap_close(rd);
	if (c->req.n == 0) {
		char a[64];

		if (conf->has_responder)
			snprintf(err, errlen, "%s: no RC request to %s", conf->path,
				 roce_ip_ntop(&c->rsp_ip, c->ip_ver, a, sizeof(a)));
		else
			snprintf(err, errlen, "%s: no RC request: nothing to replay into a responder "
				 "(UC, UD and non-RoCE captures have no responses to compare)",
				 conf->path);
		return -EINVAL;
	}
	if (c->cap_resp.n == 0)
		c->req_qpn = 0x11;	/* nothing to learn it from; the answers go there */
	return 0;
}

/* ---- pass 2: infer the responder's set-up ---- */

static const struct frame *response_for(const struct resp_ctx *c, uint32_t psn, uint32_t mask_any)
{
	for (size_t i = 0; i < c->cap_resp.n; i++) {
		const struct frame *f = &c->cap_resp.f[i];

		if (f->pkt.psn == psn && (op_mask(&f->pkt) & mask_any))
			return f;
	}
	return NULL;
}

/* Was the request with @p psn refused with NAK @p code in the capture? */
static bool naked(const struct resp_ctx *c, uint32_t psn, uint8_t code)
{
	for (size_t i = 0; i < c->cap_resp.n; i++) {
		const struct roce_pkt *p = &c->cap_resp.f[i].pkt;

		if (p->psn == psn && (op_mask(p) & ROCE_F_AETH) &&
		    roce_aeth_kind(p->aeth.syndrome) == ROCE_AETH_NAK && (p->aeth.syndrome & 0x1f) == code)
			return true;
	}
	return false;
}

static int region_of(struct resp_ctx *c, uint32_t rkey, bool create)
{
	for (int i = 0; i < c->nreg; i++)
		if (c->reg[i].cap_rkey == rkey)
			return i;
	if (!create || c->nreg == RESP_MAX_REGIONS)
		return -1;
	c->reg[c->nreg] = (struct region){ .cap_rkey = rkey, .lo = UINT64_MAX, .hi = 0 };
	return c->nreg++;
}

static uint32_t valid_mtu(uint32_t v)
{
	return v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096 ? v : 0;
}

/* Post the next of the receive buffers. @return 0 or -errno */
static int post_one_recv(struct resp_ctx *c)
{
	uint32_t n = c->recv_posted;
	struct roce_sge sge = { .addr = (uintptr_t)(c->recv_mem + (size_t)n * c->recv_len),
				.length = c->recv_len, .lkey = roce_mr_lkey(c->recv_mr) };
	struct roce_recv_wr wr = { .wr_id = n, .sg_list = &sge, .num_sge = 1 };
	const struct roce_recv_wr *bad;
	int rc = roce_post_recv(c->qp, &wr, &bad);

	if (rc == 0)
		c->recv_posted++;
	return rc;
}

static int infer(struct resp_ctx *c, char *err, size_t errlen)
{
	uint32_t exact = 0, maxp = 0, msg = 0, maxmsg = 0, sends = 0;
	uint64_t answers = 0;

	c->access = ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC;
	c->rnr_timer = 12;	/* perftest's and rdma-core's usual value, when no RNR NAK tells */
	for (size_t i = 0; i < c->cap_resp.n; i++) {
		const struct roce_pkt *p = &c->cap_resp.f[i].pkt;
		uint32_t m = op_mask(p);

		if ((m & ROCE_F_AETH) && roce_aeth_kind(p->aeth.syndrome) == ROCE_AETH_RNR_NAK) {
			c->rnr_timer = p->aeth.syndrome & 0x1f;
			c->recv_as_captured = true;
			break;
		}
	}
	for (size_t i = 0; i < c->cap_resp.n; i++) {
		const struct roce_pkt *p = &c->cap_resp.f[i].pkt;

		if ((op_mask(p) & ROCE_F_READ) && !(op_mask(p) & ROCE_F_LAST))
			exact = ROCE_MAX(exact, p->payload_len);
		maxp = ROCE_MAX(maxp, p->payload_len);
	}
	for (size_t i = 0; i < c->req.n; i++) {
		const struct roce_pkt *p = &c->req.f[i].pkt;
		uint32_t m = op_mask(p);
		uint64_t len = 0;
		int r;

		if ((m & ROCE_F_PAYLOAD) && !(m & ROCE_F_LAST))
			exact = ROCE_MAX(exact, p->payload_len);
		maxp = ROCE_MAX(maxp, p->payload_len);
		if (m & ROCE_F_SEND) {
			if (m & ROCE_F_FIRST) {
				msg = 0;
				sends++;
			}
			msg += p->payload_len;
			maxmsg = ROCE_MAX(maxmsg, msg);
		} else if ((m & ROCE_F_WRITE) && (m & ROCE_F_IMMDT)) {
			sends++;	/* a WRITE with immediate consumes a receive too */
		}
		/* a request refused as invalid takes away the QP's right for its kind (IBA 9.7.5.2.4) */
		if (naked(c, p->psn, ROCE_NAK_INVALID_REQ)) {
			if (m & ROCE_F_WRITE)
				c->access &= ~(unsigned int)ROCE_ACCESS_REMOTE_WRITE;
			else if (m & ROCE_F_READ)
				c->access &= ~(unsigned int)ROCE_ACCESS_REMOTE_READ;
			else if (m & ROCE_F_ATOMIC)
				c->access &= ~(unsigned int)ROCE_ACCESS_REMOTE_ATOMIC;
		}
		if (m & ROCE_F_RETH)
			len = p->reth.dmalen;
		else if (m & ROCE_F_ATMETH)
			len = 8;
		if (len == 0 || naked(c, p->psn, ROCE_NAK_REM_ACCESS))
			continue;
		r = region_of(c, (m & ROCE_F_RETH) ? p->reth.rkey : p->atmeth.rkey, true);
		if (r < 0) {
			snprintf(err, errlen, "%s: requests name more than %d rkeys", c->conf->path,
				 RESP_MAX_REGIONS);
			return -EINVAL;
		}
		{
			uint64_t va = (m & ROCE_F_RETH) ? p->reth.va : p->atmeth.va;

			c->reg[r].lo = ROCE_MIN(c->reg[r].lo, va);
			c->reg[r].hi = ROCE_MAX(c->reg[r].hi, va + len);
		}
	}
	for (int r = 0; r < c->nreg; r++) {
		if (c->reg[r].hi - c->reg[r].lo > RESP_MAX_REGION) {
			snprintf(err, errlen, "%s: rkey 0x%x spans %llu bytes of VA: more than %u MiB",
				 c->conf->path, c->reg[r].cap_rkey,
				 (unsigned long long)(c->reg[r].hi - c->reg[r].lo), RESP_MAX_REGION >> 20);
			return -EINVAL;
		}
	}
	if (c->conf->mtu)
		c->mtu = c->conf->mtu;
	else if (valid_mtu(exact))
		c->mtu = exact;
	else
		c->mtu = maxp <= 1024 ? 1024 : maxp <= 2048 ? 2048 : 4096;
	/* rocelab's answers are kept to compare: refuse before a READ makes more than can be */
	for (size_t i = 0; i < c->req.n; i++) {
		const struct roce_pkt *p = &c->req.f[i].pkt;

		if ((op_mask(p) & ROCE_F_READ) && (op_mask(p) & ROCE_F_RETH))
			answers += p->reth.dmalen ? (p->reth.dmalen + c->mtu - 1) / c->mtu : 1;
		else
			answers++;	/* at most an ACK */
	}
	if (answers > RESP_MAX_FRAMES) {
		snprintf(err, errlen, "%s: its READs ask for %" PRIu64 " response frames at PMTU %u: "
			 "more than %d to compare", c->conf->path, answers, c->mtu, RESP_MAX_FRAMES);
		return -EINVAL;
	}
	c->nrecv = sends + 16;
	c->recv_len = (ROCE_MAX(maxmsg, 64u) + 63) & ~63u;
	if ((uint64_t)c->nrecv * c->recv_len > RESP_RECV_MEM)
		c->nrecv = RESP_RECV_MEM / c->recv_len;
	return 0;
}

/* ---- the rocelab host and its link to the capture ---- */

static struct rte_mbuf *end_pull(void *owner)
{
	struct resp_ctx *c = owner;

	if (c->qhead == c->qtail)
		return NULL;
	return c->queue[c->qhead++ % ROCE_DIM(c->queue)];
}

static void end_rx(void *owner, struct rte_mbuf *m)
{
	struct resp_ctx *c = owner;
	uint64_t ts = c->t0 + roce_engine_now(c->eng) / ROCE_NS;
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);

	if (m->nb_segs == 1) {
		struct roce_pkt p;

		if (roce_wire_parse(d, len, ROCE_PARSE_NO_ICRC, &p) == 0 &&
		    p.kind == ROCE_KIND_ROCEV2 && (op_mask(&p) & ROCE_F_RESP)) {
			int rc = frames_add(&c->our_resp, c->our_resp.n + 1, ts, d, len);

			if (rc != 0)
				c->out_err = rc;
		}
	}
	if (c->out != NULL && roce_pcap_write_mbuf(c->out, ts, m) != 0)
		c->out_err = -EIO;
	rte_pktmbuf_free(m);
}

static int host_up(struct resp_ctx *c, char *err, size_t errlen)
{
	const struct frame *r0 = &c->req.f[0];
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_VIRTUAL, .seed = 1, .nb_mbufs = 8192,
				       .name = "replay-resp" };
	struct roce_device_conf dc = { .name = "rocelab0", .qpn_base = c->rsp_qpn };
	struct roce_link_conf lc = { .rate_bps = 100000000000ull };
	struct roce_link_end ends[2];
	struct roce_qp_init_attr init = { 0 };
	struct roce_qp_attr a = { 0 };
	int rc;

	c->eng = roce_engine_create(&ec);
	if (c->eng == NULL)
		goto nomem;
	memcpy(dc.mac, r0->pkt.dmac, 6);
	dc.ip[0] = c->rsp_ip;
	dc.ip_ver[0] = c->ip_ver;
	c->dev = roce_device_create(c->eng, &dc);
	if (c->dev == NULL)
		goto nomem;
	c->pd = roce_alloc_pd(c->dev);
	c->scq = roce_create_cq(c->dev, 64);
	c->rcq = roce_create_cq(c->dev, (int)c->nrecv + 16);
	if (c->pd == NULL || c->scq == NULL || c->rcq == NULL)
		goto nomem;
	for (int r = 0; r < c->nreg; r++) {
		struct region *g = &c->reg[r];
		uint64_t size = g->hi - g->lo;

		g->mem = calloc(1, size);
		g->known = calloc(1, size);
		if (g->mem == NULL || g->known == NULL)
			goto nomem;
		g->mr = roce_reg_mr(c->pd, g->mem, size, ROCE_ACCESS_LOCAL_WRITE |
				    ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
				    ROCE_ACCESS_REMOTE_ATOMIC);
		if (g->mr == NULL)
			goto nomem;
	}
	c->recv_mem = calloc(c->nrecv ? c->nrecv : 1, c->recv_len);
	if (c->recv_mem == NULL)
		goto nomem;
	c->recv_mr = roce_reg_mr(c->pd, c->recv_mem, (uint64_t)c->nrecv * c->recv_len,
				 ROCE_ACCESS_LOCAL_WRITE);
	if (c->recv_mr == NULL)
		goto nomem;

	init.send_cq = c->scq;
	init.recv_cq = c->rcq;
	init.qp_type = ROCE_QPT_RC;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = c->nrecv + 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	c->qp = roce_create_qp(c->pd, &init);
	if (c->qp == NULL || roce_qp_num(c->qp) != c->rsp_qpn) {
		snprintf(err, errlen, "cannot create QP 0x%x: %s", c->rsp_qpn,
			 c->qp == NULL ? strerror(errno) : "another QPN was given");
		return -ENOMEM;
	}
	a.qp_state = ROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = c->access;
	rc = roce_modify_qp(c->qp, &a, ROCE_QP_STATE | ROCE_QP_PKEY_INDEX | ROCE_QP_PORT |
			    ROCE_QP_ACCESS_FLAGS);
	a.qp_state = ROCE_QPS_RTR;
	a.path_mtu = roce_mtu_from_bytes(c->mtu);
	a.dest_qp_num = c->req_qpn;
	a.rq_psn = c->first_psn;
	a.max_dest_rd_atomic = 128;
	a.min_rnr_timer = c->rnr_timer;
	a.ah_attr.dip = c->req_ip;
	a.ah_attr.ip_ver = c->ip_ver;
	a.ah_attr.sport = c->sport;
	memcpy(a.ah_attr.dmac, r0->pkt.smac, 6);
	if (rc == 0)
		rc = roce_modify_qp(c->qp, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
				    ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
				    ROCE_QP_MIN_RNR_TIMER);
	/* RTS: the responder's own requester is never used; its ACKs go out in RTR already */
	a.qp_state = ROCE_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (rc == 0)
		rc = roce_modify_qp(c->qp, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN | ROCE_QP_TIMEOUT |
				    ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY | ROCE_QP_MAX_QP_RD_ATOMIC);
	if (rc != 0) {
		snprintf(err, errlen, "cannot connect QP 0x%x: %s", c->rsp_qpn, strerror(-rc));
		return rc;
	}
	while (!c->recv_as_captured && c->recv_posted < c->nrecv && post_one_recv(c) == 0)
		;
	ends[0] = roce_device_link_end(c->dev);
	ends[1] = (struct roce_link_end){ .owner = c, .pull = end_pull, .rx = end_rx };
	c->link = roce_link_create(c->eng, &lc, &ends[0], &ends[1]);
	if (c->link == NULL)
		goto nomem;
	roce_device_attach(c->dev, c->link, 0);
	return 0;
nomem:
	snprintf(err, errlen, "cannot set up the emulated responder: out of memory");
	return -ENOMEM;
}

static void host_down(struct resp_ctx *c)
{
	struct roce_wc wc[64];

	roce_link_destroy(c->link);
	while (c->qhead != c->qtail)
		rte_pktmbuf_free(c->queue[c->qhead++ % ROCE_DIM(c->queue)]);
	if (c->rcq != NULL)
		while (roce_poll_cq(c->rcq, 64, wc) > 0)
			;
	roce_destroy_qp(c->qp);
	for (int r = 0; r < c->nreg; r++) {
		roce_dereg_mr(c->reg[r].mr);
		free(c->reg[r].mem);
		free(c->reg[r].known);
	}
	roce_dereg_mr(c->recv_mr);
	free(c->recv_mem);
	roce_destroy_cq(c->scq);
	roce_destroy_cq(c->rcq);
	roce_dealloc_pd(c->pd);
	roce_device_destroy(c->dev);
	roce_engine_destroy(c->eng);
}

/* ---- feeding ---- */

static void wr64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static struct access *acc_add(struct resp_ctx *c)
{
	if (c->nacc == c->acc_cap) {
		size_t cap = c->acc_cap ? c->acc_cap * 2 : 256;
		struct access *n = realloc(c->acc, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		c->acc = n;
		c->acc_cap = cap;
	}
	memset(&c->acc[c->nacc], 0, sizeof(c->acc[0]));
	return &c->acc[c->nacc++];
}

/* The WRITE packet with @p psn seen before, for a MIDDLE/LAST to continue its offsets. */
static const struct access *write_before(const struct resp_ctx *c, uint32_t psn)
{
	for (size_t i = c->nacc; i-- > 0;)
		if (!c->acc[i].atomic && c->acc[i].npkts == 0 && c->acc[i].psn == psn)
			return &c->acc[i];
	return NULL;
}

static void mark_known(struct region *g, uint64_t off, const uint8_t *data, uint32_t len)
{
	uint64_t size = g->hi - g->lo;

	(void)data;
	if (off >= size)
		return;
	memset(g->known + off, 1, ROCE_MIN((uint64_t)len, size - off));
}

/*
 * Make request @p f ready for rocelab: its rkey and VA point into rocelab's MR for the region
 * (an rkey the capture refused points nowhere), the ICRC is redone (a wrong one stays wrong);
 * the region's known bytes and the accesses are recorded for the comparison.
 */
static struct rte_mbuf *prepare(struct resp_ctx *c, const struct frame *f)
{
	struct rte_mbuf *m = roce_engine_mbuf(c->eng);
	const struct roce_pkt *p = &f->pkt;
	uint32_t mask = op_mask(p), icrc_delta = 0;
	uint8_t *d;
	bool edited = false;

	if (m == NULL || (d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)f->len)) == NULL ||
	    f->len > UINT16_MAX) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, f->data, f->len);
	if (p->err == ROCE_WERR_ICRC_MISMATCH)
		icrc_delta = p->icrc ^ p->icrc_calc;
	if (mask & (ROCE_F_RETH | ROCE_F_ATMETH)) {
		bool reth = mask & ROCE_F_RETH;
		uint32_t rkey = reth ? p->reth.rkey : p->atmeth.rkey;
		uint64_t va = reth ? p->reth.va : p->atmeth.va;
		uint32_t len = reth ? p->reth.dmalen : 8;
		int r = region_of(c, rkey, false);
		uint8_t *h = d + p->bth_off + ROCE_BTH_LEN +
			     roce_opcode[p->opcode].ext_off[reth ? ROCE_EXT_RETH : ROCE_EXT_ATMETH];
		struct region *g = r >= 0 ? &c->reg[r] : NULL;
		uint64_t off = g != NULL ? va - g->lo : 0;
		struct access *a = acc_add(c);

		wr64(h, g != NULL ? (uint64_t)(uintptr_t)g->mem + off : va);
		wr32(h + 8, g != NULL ? roce_mr_rkey(g->mr) : RESP_NO_RKEY);
		edited = true;
		if (a != NULL) {
			a->psn = p->psn;
			a->region = r;
			a->off = off;
			if (mask & ROCE_F_READ) {
				a->len = len;
				a->npkts = len == 0 ? 1 : (len + c->mtu - 1) / c->mtu;
				if (g != NULL && off < g->hi - g->lo && len <= g->hi - g->lo - off &&
				    (a->known = malloc(len ? len : 1)) != NULL)
					memcpy(a->known, g->known + off, len);
			} else if (mask & ROCE_F_ATOMIC) {
				a->atomic = true;
				if (g != NULL && off + 8 <= g->hi - g->lo) {
					bool known = true;

					for (int i = 0; i < 8; i++)
						known = known && g->known[off + i];
					a->compare_orig = known;
					if (!known) {
						/* seed the value the capture's responder had there */
						const struct frame *ack = response_for(c, p->psn, ROCE_F_ATMACK);

						if (ack != NULL) {
							uint64_t v = ack->pkt.atmack_orig;

							memcpy(g->mem + off, &v, 8);
							memset(g->known + off, 1, 8);
						}
					}
				}
			} else if (g != NULL) {
				mark_known(g, off, p->payload, p->payload_len);
				a->off = off + p->payload_len;	/* where the next packet writes */
			}
		}
	} else if ((mask & ROCE_F_WRITE) && !(mask & ROCE_F_FIRST)) {
		const struct access *prev = write_before(c, (p->psn - 1) & ROCE_PSN_MASK);

		if (prev != NULL && prev->region >= 0) {
			struct access *a;
			uint64_t off = prev->off;
			int region = prev->region;

			mark_known(&c->reg[region], off, p->payload, p->payload_len);
			a = acc_add(c);
			if (a != NULL) {
				a->psn = p->psn;
				a->region = region;
				a->off = off + p->payload_len;
			}
		}
	}
	if (edited && roce_wire_fixup(d, f->len) >= 0 && icrc_delta != 0) {
		struct roce_pkt q;
		uint32_t end, v;

		/* keep a wrong ICRC wrong by the same difference */
		if (roce_wire_parse(d, f->len, ROCE_PARSE_NO_ICRC, &q) == 0) {
			end = q.payload_off + q.payload_len + q.pad;
			memcpy(&v, d + end, 4);
			v ^= icrc_delta;
			memcpy(d + end, &v, 4);
		}
	}
	return m;
}

/*
 * Whether the capture's responder took request @p i, the first packet of a SEND message, into a
 * receive: an ACK that covers its PSN answers it before the requester sent that PSN again (its
 * retry), and no RNR NAK for it does. A SEND the responder dropped (past a PSN it NAKed) is
 * answered by neither until it is resent.
 */
static bool accepted(const struct resp_ctx *c, size_t i)
{
	const struct frame *f = &c->req.f[i];
	uint64_t until = UINT64_MAX;
	size_t lo = 0, hi = c->cap_resp.n;

	for (size_t k = i + 1; k < c->req.n && k <= i + RESP_SCAN; k++) {
		if (c->req.f[k].pkt.psn == f->pkt.psn) {
			until = c->req.f[k].ts_ns;
			break;
		}
	}
	while (lo < hi) {	/* the first answer at or after the request (capture order) */
		size_t mid = lo + (hi - lo) / 2;

		if (c->cap_resp.f[mid].ts_ns < f->ts_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < c->cap_resp.n && k < lo + RESP_SCAN; k++) {
		const struct frame *r = &c->cap_resp.f[k];
		uint8_t kind;

		if (r->ts_ns >= until)
			break;
		if (!(op_mask(&r->pkt) & ROCE_F_AETH))
			continue;
		kind = roce_aeth_kind(r->pkt.aeth.syndrome);
		if (kind == ROCE_AETH_RNR_NAK && r->pkt.psn == f->pkt.psn)
			return false;
		if (kind == ROCE_AETH_ACK && roce_psn_diff(r->pkt.psn, f->pkt.psn) >= 0)
			return true;	/* in order: no RNR NAK for it can follow */
	}
	return false;
}

/* Before request @p i, the receive the capture's responder had for it (recv_as_captured). */
static void recv_as_captured(struct resp_ctx *c, size_t i)
{
	const struct roce_pkt *p = &c->req.f[i].pkt;
	uint32_t m = op_mask(p);

	if (!(m & ROCE_F_SEND) || !(m & ROCE_F_FIRST))
		return;
	if (c->recv_posted > 0 && roce_psn_diff(p->psn, c->recv_psn) <= 0)
		return;		/* its receive is posted already */
	if (!accepted(c, i))
		return;		/* RNR NAKed, or dropped: the capture's responder took it later */
	if (c->recv_posted < c->nrecv && post_one_recv(c) == 0)
		c->recv_psn = p->psn;
}

static void feed(struct resp_ctx *c)
{
	for (size_t i = 0; i < c->req.n; i++) {
		const struct frame *f = &c->req.f[i];
		roce_time_t at = (f->ts_ns - c->t0) * ROCE_NS;
		struct rte_mbuf *m;

		if (f->ts_ns < c->t0)
			at = 0;
		if (at > roce_engine_now(c->eng))
			roce_engine_run(c->eng, at);
		if (c->recv_as_captured)
			recv_as_captured(c, i);
		m = prepare(c, f);
		if (m == NULL)
			continue;
		while (c->qtail - c->qhead == ROCE_DIM(c->queue) &&
		       roce_engine_next(c->eng) != ROCE_TIME_NEVER)
			roce_engine_run(c->eng, roce_engine_next(c->eng));
		if (c->qtail - c->qhead == ROCE_DIM(c->queue)) {	/* the link stopped pulling */
			rte_pktmbuf_free(m);
			continue;
		}
		c->queue[c->qtail++ % ROCE_DIM(c->queue)] = m;
		if (c->out != NULL && roce_pcap_write_mbuf(c->out, f->ts_ns, m) != 0)
			c->out_err = -EIO;
		roce_link_kick(c->link, 1);
		c->res->requests++;
	}
	roce_engine_run(c->eng, roce_engine_now(c->eng) + RESP_TAIL);
}

/* ---- comparison ---- */

/*
 * Two READ responses with one PSN answer the same request whatever their opcodes: a READ
 * re-issued from inside a message is answered FIRST...LAST or ONLY by rocelab, MIDDLE/LAST by
 * rxe (docs/fidelity.md). Aligned, the opcodes are compared, and a difference is named.
 */
static bool same_key(const struct frame *a, const struct frame *b)
{
	if (a->pkt.psn != b->pkt.psn)
		return false;
	return a->pkt.opcode == b->pkt.opcode ||
	       ((op_mask(&a->pkt) & ROCE_F_READ) && (op_mask(&b->pkt) & ROCE_F_READ));
}

/*
 * Pairs of indices (capture, rocelab) aligned on (opcode, PSN), READ responses on the PSN
 * (same_key); -1 for a frame without a twin.
 */
static int align(const struct frames *x, const struct frames *y, long (*pairs)[2], size_t *np)
{
	size_t n = x->n, m = y->n, k = 0;
	uint16_t *t;

	if (n > RESP_LCS_MAX || m > RESP_LCS_MAX) {
		for (size_t i = 0; i < ROCE_MAX(n, m); i++) {
			pairs[k][0] = i < n ? (long)i : -1;
			pairs[k][1] = i < m ? (long)i : -1;
			k++;
		}
		*np = k;
		return 0;
	}
	t = calloc((n + 1) * (m + 1), sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
#define T(i, j) t[(size_t)(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			T(i, j) = same_key(&x->f[i], &y->f[j]) ? (uint16_t)(T(i + 1, j + 1) + 1) :
				  ROCE_MAX(T(i + 1, j), T(i, j + 1));
	for (size_t i = 0, j = 0; i < n || j < m;) {
		if (i < n && j < m && same_key(&x->f[i], &y->f[j])) {
			pairs[k][0] = (long)i++;
			pairs[k][1] = (long)j++;
		} else if (j == m || (i < n && T(i + 1, j) >= T(i, j + 1))) {
			pairs[k][0] = (long)i++;
			pairs[k][1] = -1;
		} else {
			pairs[k][0] = -1;
			pairs[k][1] = (long)j++;
		}
		k++;
	}
#undef T
	free(t);
	*np = k;
	return 0;
}

static const struct access *read_for(const struct resp_ctx *c, uint32_t psn)
{
	for (size_t i = c->nacc; i-- > 0;) {
		const struct access *a = &c->acc[i];

		if (a->npkts != 0 && roce_psn_diff(psn, a->psn) >= 0 &&
		    (uint32_t)roce_psn_diff(psn, a->psn) < a->npkts)
			return a;
	}
	return NULL;
}

static const struct access *atomic_for(const struct resp_ctx *c, uint32_t psn)
{
	for (size_t i = 0; i < c->nacc; i++)
		if (c->acc[i].atomic && c->acc[i].psn == psn)
			return &c->acc[i];
	return NULL;
}

/*
 * Same AETH syndrome? An ACK's low five bits are the end-to-end credit count (IBA 9.7.5.1.4):
 * a responder may advertise credits or not (0x1f: rxe, and rocelab), so two ACKs are the
 * same answer whatever they advertise.
 */
static bool same_syndrome(uint8_t a, uint8_t b)
{
	return a == b || (roce_aeth_kind(a) == ROCE_AETH_ACK && roce_aeth_kind(b) == ROCE_AETH_ACK);
}

/* Compare a pair; @return the number of differences, described in @p why. */
static int compare(struct resp_ctx *c, const struct frame *x, const struct frame *y, char *why,
		   size_t size)
{
	const struct roce_pkt *p = &x->pkt, *q = &y->pkt;
	uint32_t m = op_mask(p) & op_mask(q);	/* headers both have */
	size_t o = 0;
	int ndiff = 0;

#define WHY(...) \
	do { \
		if (o < size) \
			o += (size_t)snprintf(why + o, size - o, "%s", ndiff ? "; " : ""); \
		if (o < size) \
			o += (size_t)snprintf(why + o, size - o, __VA_ARGS__); \
		ndiff++; \
	} while (0)
	why[0] = '\0';
	if (p->opcode != q->opcode)
		WHY("opcode %s vs %s", roce_opcode[p->opcode].name, roce_opcode[q->opcode].name);
	if ((m & ROCE_F_AETH) && p->aeth.syndrome != q->aeth.syndrome &&
	    same_syndrome(p->aeth.syndrome, q->aeth.syndrome))
		c->res->credits_differ++;
	else if ((m & ROCE_F_AETH) && p->aeth.syndrome != q->aeth.syndrome)
		WHY("syndrome %s (0x%02x) vs %s (0x%02x)", roce_aeth_name(p->aeth.syndrome),
		    p->aeth.syndrome, roce_aeth_name(q->aeth.syndrome), q->aeth.syndrome);
	if ((m & ROCE_F_AETH) && p->aeth.msn != q->aeth.msn)
		WHY("msn %u vs %u", p->aeth.msn, q->aeth.msn);
	if (p->payload_len != q->payload_len)
		WHY("payload %u vs %u bytes", p->payload_len, q->payload_len);
	if (p->err != ROCE_WERR_OK || q->err != ROCE_WERR_OK) {
		if (p->err != q->err)
			WHY("parse %s vs %s", roce_wire_strerror(p->err), roce_wire_strerror(q->err));
	}
	if ((m & ROCE_F_READ) && p->payload_len == q->payload_len) {
		const struct access *a = read_for(c, p->psn);

		if (a != NULL && a->known != NULL) {
			uint64_t base = (uint64_t)(uint32_t)roce_psn_diff(p->psn, a->psn) * c->mtu;
			uint32_t first_bad = UINT32_MAX, nbad = 0;

			for (uint32_t i = 0; i < p->payload_len && base + i < a->len; i++) {
				if (!a->known[base + i])
					continue;
				c->res->payload_compared++;
				if (p->payload[i] != q->payload[i]) {
					nbad++;
					if (first_bad == UINT32_MAX)
						first_bad = i;
				}
			}
			if (nbad)
				WHY("%u known payload byte(s) differ, first at %u: 0x%02x vs 0x%02x",
				    nbad, first_bad, p->payload[first_bad], q->payload[first_bad]);
		}
	}
	if (m & ROCE_F_ATMACK) {
		const struct access *a = atomic_for(c, p->psn);

		/*
		 * A resent atomic's answer is compared too: rocelab's comes from its saved result,
		 * and one executed again would show the value the first execution left.
		 */
		if (a != NULL && (a->compare_orig || y->resent)) {
			c->res->payload_compared += 8;
			if (p->atmack_orig != q->atmack_orig)
				WHY("original value 0x%llx vs 0x%llx",
				    (unsigned long long)p->atmack_orig, (unsigned long long)q->atmack_orig);
		}
	}
#undef WHY
	return ndiff;
}

/*
 * lost_before_capture() for a READ response or an Atomic ACK, which no later ACK covers. The
 * evidence: the requester asked again for its PSN (a second READ whose answer holds it, the
 * atomic resent: it missed an answer), and the capture has an answer of the same kind at that
 * PSN. Or (@p tail) the capture has no response from that PSN on.
 */
static bool lost_answer(const struct resp_ctx *c, const struct roce_pkt *q, bool *tail)
{
	uint32_t kind = op_mask(q) & (ROCE_F_READ | ROCE_F_ATMACK);
	unsigned int asked = 0;
	bool answered = false;

	*tail = true;
	for (size_t i = 0; i < c->cap_resp.n; i++) {
		const struct roce_pkt *p = &c->cap_resp.f[i].pkt;

		if (roce_psn_diff(p->psn, q->psn) >= 0)
			*tail = false;
		answered |= p->psn == q->psn && (op_mask(p) & kind);
	}
	if (*tail)
		return true;
	for (size_t i = 0; i < c->req.n && asked < 2; i++) {
		const struct roce_pkt *p = &c->req.f[i].pkt;
		uint32_t m = op_mask(p);
		int32_t d = roce_psn_diff(q->psn, p->psn);

		if ((kind & ROCE_F_READ) && (m & ROCE_F_READ) && (m & ROCE_F_RETH))
			asked += d >= 0 && (uint64_t)d * c->mtu < ROCE_MAX(p->reth.dmalen, 1u);
		else if ((kind & ROCE_F_ATMACK) && (m & ROCE_F_ATOMIC))
			asked += d == 0;
	}
	return answered && asked >= 2;
}

/*
 * Is rocelab's response @p y, which the capture lacks, one that the capture's own responder
 * sent and lost before the capture point (netem on its egress)? Evidence: the capture's ACK
 * sequence numbers skip @p y's MSN (a later ACK covered it), or the requester sent the request
 * again (it never got the answer) and the capture has an answer to that PSN. Or (@p tail) the
 * capture answers nothing from that PSN on: it ends, or the QP was torn down, first.
 */
static bool lost_before_capture(const struct resp_ctx *c, const struct frame *y, bool *tail)
{
	const struct roce_pkt *q = &y->pkt;
	bool below = false, above = false, same_psn = false;
	unsigned int copies = 0;

	if (op_mask(q) & (ROCE_F_READ | ROCE_F_ATMACK))
		return lost_answer(c, q, tail);
	if (!(op_mask(q) & ROCE_F_AETH))
		return false;
	*tail = true;
	for (size_t i = 0; i < c->cap_resp.n; i++) {
		const struct roce_pkt *p = &c->cap_resp.f[i].pkt;

		if (!(op_mask(p) & ROCE_F_AETH))
			continue;
		if (roce_psn_diff(p->psn, q->psn) >= 0)
			*tail = false;
		if (p->aeth.msn == q->aeth.msn && p->psn != q->psn)
			return false;
		below |= roce_psn_diff(p->aeth.msn, q->aeth.msn) < 0;
		above |= roce_psn_diff(p->aeth.msn, q->aeth.msn) > 0;
		same_psn |= p->psn == q->psn && p->opcode == q->opcode &&
			    same_syndrome(p->aeth.syndrome, q->aeth.syndrome) &&
			    p->aeth.msn == q->aeth.msn;
	}
	for (size_t i = 0; i < c->req.n; i++)
		copies += c->req.f[i].pkt.psn == q->psn;
	if (*tail)
		return true;
	if (same_psn)
		return copies >= 2;
	return below && above && roce_aeth_kind(q->aeth.syndrome) == ROCE_AETH_ACK;
}

/* Mark rocelab's Atomic ACKs for a PSN it answered before: answers to a resent atomic. */
static int mark_resent(struct resp_ctx *c)
{
	uint8_t *seen = NULL;

	for (size_t i = 0; i < c->our_resp.n; i++) {
		struct frame *y = &c->our_resp.f[i];
		uint32_t psn = y->pkt.psn & ROCE_PSN_MASK;

		if (!(op_mask(&y->pkt) & ROCE_F_ATMACK))
			continue;
		if (seen == NULL && (seen = calloc(1, (ROCE_PSN_MASK + 1) / 8)) == NULL)
			return -ENOMEM;
		y->resent = (seen[psn >> 3] >> (psn & 7)) & 1;
		seen[psn >> 3] |= (uint8_t)(1u << (psn & 7));
	}
	free(seen);
	return 0;
}

static void print_row(FILE *out, const struct frame *x, const struct frame *y, const char *result)
{
	const struct frame *f = x != NULL ? x : y;
	char cn[24] = "-", rn[24] = "-";

	if (x != NULL)
		snprintf(cn, sizeof(cn), "#%llu", (unsigned long long)x->n);
	if (y != NULL)
		snprintf(rn, sizeof(rn), "#%llu", (unsigned long long)y->n);
	fprintf(out, " %8s %8s  %-30s %8u  %s\n", cn, rn, roce_opcode[f->pkt.opcode].name,
		f->pkt.psn, result);
}

static int report(struct resp_ctx *c)
{
	const struct roce_replay_resp_conf *conf = c->conf;
	struct roce_replay_resp_result *res = c->res;
	unsigned int max_rows = conf->max_rows ? conf->max_rows : 20, shown = 0;
	size_t np = 0;
	long (*pairs)[2];
	char a[64], b[64], why[512];
	FILE *out = conf->out;

	pairs = calloc(c->cap_resp.n + c->our_resp.n + 1, sizeof(*pairs));
	if (pairs == NULL || mark_resent(c) != 0 ||
	    align(&c->cap_resp, &c->our_resp, pairs, &np) != 0) {
		free(pairs);
		return -ENOMEM;
	}
	res->cap_responses = c->cap_resp.n;
	res->our_responses = c->our_resp.n;
	if (out != NULL) {
		fprintf(out, "replay: %s: responder %s QP 0x%06x, requester %s QP 0x%06x; path MTU %u, "
			"first PSN %u, %d memory region%s, rights%s%s%s, %u receives%s, RNR timer %u\n",
			conf->path, roce_ip_ntop(&c->rsp_ip, c->ip_ver, a, sizeof(a)), c->rsp_qpn,
			roce_ip_ntop(&c->req_ip, c->ip_ver, b, sizeof(b)), c->req_qpn, c->mtu,
			c->first_psn, c->nreg, c->nreg == 1 ? "" : "s",
			c->access & ROCE_ACCESS_REMOTE_WRITE ? " write" : "",
			c->access & ROCE_ACCESS_REMOTE_READ ? " read" : "",
			c->access & ROCE_ACCESS_REMOTE_ATOMIC ? " atomic" : "", c->nrecv,
			c->recv_as_captured ? " posted as its RNR NAKs show" : "", c->rnr_timer);
		fprintf(out, " %8s %8s  %-30s %8s  %s\n", "capture", "rocelab", "opcode", "psn",
			"result");
	}
	for (size_t k = 0; k < np; k++) {
		const struct frame *x = pairs[k][0] >= 0 ? &c->cap_resp.f[pairs[k][0]] : NULL;
		const struct frame *y = pairs[k][1] >= 0 ? &c->our_resp.f[pairs[k][1]] : NULL;
		bool bad = true, tail = false;

		if (x != NULL && y != NULL) {
			if (compare(c, x, y, why, sizeof(why)) == 0) {
				res->matched++;
				bad = false;
				snprintf(why, sizeof(why), "ok");
			} else {
				res->differing++;
				memmove(why + 9, why, strnlen(why, sizeof(why) - 10) + 1);
				memcpy(why, "differs: ", 9);
			}
		} else if (x != NULL) {
			res->missing++;
			snprintf(why, sizeof(why), "missing: rocelab sent no such response");
		} else if (lost_before_capture(c, y, &tail)) {
			res->lost++;
			bad = false;
			snprintf(why, sizeof(why), tail ? "unanswered: the capture answers nothing from "
				 "this PSN on (it ends or the QP was torn down first)" :
				 "lost: not in the capture, which skips it (responder egress loss before "
				 "the capture point)");
		} else {
			res->extra++;
			snprintf(why, sizeof(why), "extra: not in the capture");
		}
		if (out != NULL && (conf->verbose || ((bad || strncmp(why, "ok", 2) != 0) &&
						      shown < max_rows))) {
			print_row(out, x, y, why);
			shown += !conf->verbose;
		}
	}
	if (out != NULL) {
		uint64_t nbad = res->differing + res->missing + res->extra;

		if (nbad + res->lost > shown && !conf->verbose)
			fprintf(out, " ... %llu more not shown (-v shows every row)\n",
				(unsigned long long)(nbad + res->lost - shown));
		fprintf(out, "replay: %llu requests fed; responses: %llu in the capture, %llu from "
			"rocelab: %llu matched, %llu differ, %llu missing, %llu extra, %llu lost before "
			"the capture or unanswered in it; %llu payload bytes compared: %s\n",
			(unsigned long long)res->requests, (unsigned long long)res->cap_responses,
			(unsigned long long)res->our_responses, (unsigned long long)res->matched,
			(unsigned long long)res->differing, (unsigned long long)res->missing,
			(unsigned long long)res->extra, (unsigned long long)res->lost,
			(unsigned long long)res->payload_compared,
			nbad ? "MISMATCH" : "MATCH");
		if (res->credits_differ != 0)
			fprintf(out, "replay: %llu matched ACK(s) advertise other end-to-end credits "
				"than rocelab, which advertises none (0x1f, as rxe): not a difference\n",
				(unsigned long long)res->credits_differ);
	}
	free(pairs);
	return 0;
}

int roce_replay_responder(const struct roce_replay_resp_conf *conf,
			  struct roce_replay_resp_result *res, char *err, size_t errlen)
{
	struct resp_ctx *c = calloc(1, sizeof(*c));
	int rc;

	memset(res, 0, sizeof(*res));
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->conf = conf;
	c->res = res;
	rc = read_capture(c, err, errlen);
	if (rc == 0)
		rc = infer(c, err, errlen);
	if (rc == 0 && conf->out_pcap != NULL) {
		c->out = roce_pcap_create(conf->out_pcap, err, errlen);
		if (c->out == NULL)
			rc = -errno;	/* -EEXIST: not a capture, --force */
	}
	if (rc == 0)
		rc = host_up(c, err, errlen);
	if (rc == 0) {
		feed(c);
		if (c->out_err == -ENOMEM || c->out_err == -ENOSPC) {
			snprintf(err, errlen, c->out_err == -ENOMEM ?
				 "out of memory keeping rocelab's responses" :
				 "rocelab answered with more than %d frames: too many to compare",
				 RESP_MAX_FRAMES);
			rc = c->out_err;
		}
	}
	if (rc == 0 && (rc = report(c)) != 0)
		snprintf(err, errlen, "out of memory comparing the responses");
	if (c->eng != NULL)
		host_down(c);
	if (c->out != NULL && roce_pcap_close_writer(c->out) != 0 && rc == 0) {
		snprintf(err, errlen, "%s: write failed", conf->out_pcap);
		rc = -EIO;
	}
	if (rc == 0 && c->out_err == -EIO) {
		snprintf(err, errlen, "%s: write failed", conf->out_pcap);
		rc = -EIO;
	}
	for (size_t i = 0; i < c->nacc; i++)
		free(c->acc[i].known);
	free(c->acc);
	frames_free(&c->req);
	frames_free(&c->cap_resp);
	frames_free(&c->our_resp);
	free(c);
	return rc;
}
