/* Requester: turns send WQEs into request packets: segmentation, PSNs, AckReq, limits, retries. */
#include <string.h>

#include <rte_mbuf.h>

#include "tr_private.h"

static bool wqe_is_rd_atomic(const struct verbs_send_wqe *wqe)
{
	return wqe->wr.opcode == ROCE_WR_RDMA_READ || wqe->wr.opcode == ROCE_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->wr.opcode == ROCE_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * RC opcode of a WQE's packet by work request opcode and position, [op][first][last] (IBA 9.2
 * table 38). A table, not a switch: it is looked up for every packet. UC opcodes are RC's +
 * 0x20 (post_send lets UC have only SENDs and WRITEs); UD has its own two.
 */
#define OPS(first, middle, last, only) { { middle, last }, { first, only } }
static const uint8_t req_op_rc[ROCE_WR_SEND_WITH_INV + 1][2][2] = {
	[ROCE_WR_RDMA_WRITE] = OPS(ROCE_OP_RC_RDMA_WRITE_FIRST, ROCE_OP_RC_RDMA_WRITE_MIDDLE,
				   ROCE_OP_RC_RDMA_WRITE_LAST, ROCE_OP_RC_RDMA_WRITE_ONLY),
	[ROCE_WR_RDMA_WRITE_WITH_IMM] = OPS(ROCE_OP_RC_RDMA_WRITE_FIRST,
					    ROCE_OP_RC_RDMA_WRITE_MIDDLE,
					    ROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
					    ROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE),
	[ROCE_WR_SEND] = OPS(ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE, ROCE_OP_RC_SEND_LAST,
			     ROCE_OP_RC_SEND_ONLY),
	[ROCE_WR_SEND_WITH_IMM] = OPS(ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE,
				      ROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE,
				      ROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE),
	[ROCE_WR_SEND_WITH_INV] = OPS(ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE,
				      ROCE_OP_RC_SEND_LAST_WITH_INVALIDATE,
				      ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE),
	/* one request whatever the response count */
	[ROCE_WR_RDMA_READ] = OPS(ROCE_OP_RC_RDMA_READ_REQUEST, ROCE_OP_RC_RDMA_READ_REQUEST,
				  ROCE_OP_RC_RDMA_READ_REQUEST, ROCE_OP_RC_RDMA_READ_REQUEST),
	[ROCE_WR_ATOMIC_CMP_AND_SWP] = OPS(ROCE_OP_RC_COMPARE_SWAP, ROCE_OP_RC_COMPARE_SWAP,
					   ROCE_OP_RC_COMPARE_SWAP, ROCE_OP_RC_COMPARE_SWAP),
	[ROCE_WR_ATOMIC_FETCH_AND_ADD] = OPS(ROCE_OP_RC_FETCH_ADD, ROCE_OP_RC_FETCH_ADD,
					     ROCE_OP_RC_FETCH_ADD, ROCE_OP_RC_FETCH_ADD),
};
#undef OPS

/* Opcode of packet @p i of @p n of a WQE, for RC, UC or UD. */
static inline uint8_t req_opcode(const struct tr_qp *qp, const struct verbs_send_wqe *wqe,
				 uint32_t i, uint32_t n)
{
	if (qp->vqp.type == ROCE_QPT_UD)
		return wqe->wr.opcode == ROCE_WR_SEND_WITH_IMM ?
		       ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE : ROCE_OP_UD_SEND_ONLY;
	return (uint8_t)(req_op_rc[wqe->wr.opcode][tr_first(i)][tr_last(i, n)] +
			 (qp->vqp.type == ROCE_QPT_UC ? 0x20 : 0));
}

/* First visit of a WQE: check it, give it its PSNs. false: it cannot start yet (or failed). */
static bool req_start(struct tr_qp *qp, struct verbs_send_wqe *wqe)
{
	bool rd_atomic = wqe_is_rd_atomic(wqe);
	unsigned int access = rd_atomic ? ROCE_ACCESS_LOCAL_WRITE : 0;
	int rc;

	if (qp->vqp.type == ROCE_QPT_RC) {
		/* IBA 10.8.3.3: a fenced WQE waits for every earlier READ and atomic */
		if ((wqe->wr.send_flags & ROCE_SEND_FENCE) && qp->req.rd_atomic > 0)
			return false;
		if (rd_atomic && qp->req.rd_atomic >= ROCE_MAX(qp->vqp.attr.max_rd_atomic, 1))
			return false;
	}
	rc = wqe->inline_data != NULL && (wqe->wr.send_flags & ROCE_SEND_INLINE) ? 0 :
	     verbs_sge_check(qp->vqp.pd, wqe->sge, (uint32_t)wqe->wr.num_sge, access,
			     &wqe->discard);
	if (rc == 0 && (wqe->wr.opcode == ROCE_WR_ATOMIC_CMP_AND_SWP ||
			wqe->wr.opcode == ROCE_WR_ATOMIC_FETCH_AND_ADD) && wqe->length != 8)
		rc = -EINVAL;
	if (rc == 0 && qp->vqp.type == ROCE_QPT_UD && wqe->length > qp->vqp.mtu)
		rc = -EMSGSIZE;
	if (rc != 0) {
		enum roce_wc_status st = rc == -EMSGSIZE || (rc == -EINVAL && rd_atomic) ?
					 ROCE_WC_LOC_LEN_ERR : ROCE_WC_LOC_PROT_ERR;

		tr_trace(qp, "wqe %llu: local check failed: %s", (unsigned long long)wqe->wr.wr_id,
			 roce_wc_status_name(st));
		qp->req.next_new++;
		qp->req.wqe++;
		tr_qp_error(qp, wqe, st);
		return false;
	}
	wqe->first_psn = qp->req.psn;
	wqe->npsn = rd_atomic && wqe->wr.opcode != ROCE_WR_RDMA_READ ? 1 :
		    tr_npkts(wqe->length, qp->vqp.mtu);
	wqe->last_psn = (wqe->first_psn + wqe->npsn - 1) & ROCE_PSN_MASK;
	if (rd_atomic)
		qp->req.rd_atomic++;
	qp->req.next_new++;
	return true;
}

/* Is an ACK due for a message shorter than a PMTU? (ack_wanted(), below, says when.) */
static inline bool ack_due_short(const struct tr_qp *qp)
{
	const struct tr_req *req = &qp->req;

	return req->noack_pkts >= TR_ACK_COALESCE || req->noack_bytes >= qp->vqp.mtu ||
	       req->wqe + 1 == qp->vqp.sq_tail ||
	       (qp->vqp.state != ROCE_QPS_RTS && req->wqe + 1 == req->next_new);
}

/*
 * Does the last packet of @p wqe ask for an ACK? Always, for a message of a PMTU or more, a
 * READ or an atomic (as rxe). A shorter message asks only when nothing is queued behind it
 * (the send queue drains, or SQD starts no further message), or when TR_ACK_COALESCE packets
 * or a PMTU of payload went without an ACK request: while the queue stays busy, one ACK then
 * covers several small messages (IBA 9.7.5.1.3: an ACK acknowledges every earlier PSN). A
 * completion is thus held back by at most the wire time of less than two PMTUs of payload and
 * 16 headers, and the queue's last message always asks, so nothing waits for the ACK timeout.
 */
static bool ack_wanted(const struct tr_qp *qp, const struct verbs_send_wqe *wqe)
{
	return wqe->length >= qp->vqp.mtu || wqe_is_rd_atomic(wqe) || ack_due_short(qp);
}

/* @p n packets from req->psn are on their way: the PSN moves on, a resend is counted. */
static inline void req_advance(struct tr_qp *qp, uint32_t n)
{
	struct tr_req *req = &qp->req;

	if (roce_psn_diff(req->psn, req->psn_hw) < 0) {
		qp->st.retransmits++;
		TR_CNT(qp->vqp.dev, RETRANSMITS);
	}
	req->psn = (req->psn + n) & ROCE_PSN_MASK;
	if (roce_psn_diff(req->psn, req->psn_hw) > 0)
		req->psn_hw = req->psn;
}

/*
 * tr_req_next() for the commonest case, a WQE starting now that fits in one packet of less
 * than a PMTU on an RC QP (a WRITE or a SEND, neither inline nor fenced, its SGEs valid): what
 * req_start() and the general path do for it, without their tests on the QP's type, the
 * opcode's kind, the packet's position or the message's length. The caller has checked the QP
 * may send.
 */
static struct rte_mbuf *req_next_short(struct tr_qp *qp, struct verbs_send_wqe *wqe)
{
	struct tr_req *req = &qp->req;
	const struct roce_wire_tmpl *tmpl;
	struct roce_pkt pkt;
	struct rte_mbuf *m;
	uint32_t len = wqe->length;
	uint32_t psn = req->psn;

	wqe->first_psn = psn;
	wqe->npsn = 1;
	wqe->last_psn = psn;
	req->next_new++;

	tmpl = tr_pkt_init_conn_req(qp, &pkt, req_op_rc[wqe->wr.opcode][1][1]);
	pkt.psn = psn;
	pkt.reth.va = wqe->wr.wr.rdma.remote_addr;
	pkt.reth.rkey = wqe->wr.wr.rdma.rkey;
	pkt.reth.dmalen = len;
	pkt.immdt = wqe->wr.imm_data;
	pkt.ieth_rkey = wqe->wr.invalidate_rkey;
	pkt.payload_len = len;
	if (wqe->wr.send_flags & ROCE_SEND_SOLICITED)
		pkt.se = true;
	/* ack_wanted() for a message shorter than a PMTU, neither a READ nor an atomic */
	req->noack_pkts++;
	req->noack_bytes += len;
	if (ack_due_short(qp)) {
		pkt.ackreq = true;
		req->noack_pkts = 0;
		req->noack_bytes = 0;
	}
	m = tr_pkt_build(qp, &pkt, tmpl, wqe->sge, (uint32_t)wqe->wr.num_sge, 0, wqe->zc);
	if (m == NULL)
		return NULL;

	req_advance(qp, 1);
	wqe->state = WQE_PENDING;
	req->wqe++;
	if (!roce_timer_armed(&qp->comp.ack_timer))
		tr_comp_arm_ack_timer(qp);
	return m;
}

/*
 * The checks before any WQE is looked at: the state lets requests out (SQD, IBA 10.3.1:
 * messages already started are finished, retries included; no new one), no RNR wait, work
 * queued, and (RC) the window of PSNs in flight open.
 */
static inline bool req_may_send(const struct tr_qp *qp)
{
	const struct tr_req *req = &qp->req;

	if ((qp->vqp.state != ROCE_QPS_RTS &&
	     (qp->vqp.state != ROCE_QPS_SQD || req->wqe == req->next_new)) ||
	    qp->comp.rnr_wait || req->wqe == qp->vqp.sq_tail)
		return false;
	return qp->vqp.type != ROCE_QPT_RC ||
	       roce_psn_diff(req->psn, qp->comp.psn) < TR_MAX_INFLIGHT_PSN;
}

/*
 * Would tr_req_next() build a request now, were the port free: one to send or resend, the
 * window open, an RNR wait over, a new WQE's fence and READ/atomic limits met? For reports
 * (roce_qp_wait); it changes nothing, so a WQE that fails its local checks counts as ready.
 */
bool tr_req_ready(const struct tr_qp *qp)
{
	const struct tr_req *req = &qp->req;
	const struct verbs_send_wqe *wqe;

	if (!req_may_send(qp))
		return false;
	if (qp->vqp.type != ROCE_QPT_RC || req->wqe != req->next_new)
		return true;
	wqe = &qp->vqp.sq[req->wqe & qp->vqp.sq_mask];
	if ((wqe->wr.send_flags & ROCE_SEND_FENCE) && req->rd_atomic > 0)
		return false;
	return !wqe_is_rd_atomic(wqe) || req->rd_atomic < ROCE_MAX(qp->vqp.attr.max_rd_atomic, 1);
}

/* The next request packet of @p qp, or NULL if it has none to send now. */
struct rte_mbuf *tr_req_next(struct tr_qp *qp)
{
	struct tr_req *req = &qp->req;
	struct verbs_send_wqe *wqe;
	const struct roce_wire_tmpl *tmpl = NULL;
	struct roce_pkt pkt;
	struct rte_mbuf *m;
	uint32_t idx, len, n;
	uint8_t opcode;

	if (!req_may_send(qp))
		return NULL;
	wqe = verbs_sq_wqe(&qp->vqp, req->wqe);
	if (qp->vqp.type == ROCE_QPT_RC && req->wqe == req->next_new && req->offset == 0 &&
	    wqe->length < qp->vqp.mtu &&
	    !(wqe->wr.send_flags & (ROCE_SEND_INLINE | ROCE_SEND_FENCE)) &&
	    (wqe->wr.opcode < ROCE_WR_RDMA_READ || wqe->wr.opcode == ROCE_WR_SEND_WITH_INV) &&
	    verbs_sge_check(qp->vqp.pd, wqe->sge, (uint32_t)wqe->wr.num_sge, 0, NULL) == 0)
		return req_next_short(qp, wqe);
	if (req->wqe == req->next_new && !req_start(qp, wqe))
		return NULL;

	idx = roce_psn_diff(req->psn, wqe->first_psn) >= 0 ?
	      (uint32_t)roce_psn_diff(req->psn, wqe->first_psn) : 0;
	opcode = req_opcode(qp, wqe, idx, wqe->npsn);
	if (qp->vqp.type == ROCE_QPT_UD)
		tr_pkt_init(qp, &pkt, opcode, &wqe->av, wqe->wr.wr.ud.remote_qpn);
	else
		tmpl = tr_pkt_init_conn_req(qp, &pkt, opcode);
	pkt.psn = req->psn;

	switch (wqe->wr.opcode) {
	case ROCE_WR_RDMA_READ:
		/* a retry asks only for what has not arrived (partial READ retry) */
		pkt.reth.va = wqe->wr.wr.rdma.remote_addr + req->offset;
		pkt.reth.rkey = wqe->wr.wr.rdma.rkey;
		pkt.reth.dmalen = wqe->length - req->offset;
		n = wqe->npsn - idx;
		len = 0;
		break;
	case ROCE_WR_ATOMIC_CMP_AND_SWP:
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
		pkt.atmeth.va = wqe->wr.wr.atomic.remote_addr;
		pkt.atmeth.rkey = wqe->wr.wr.atomic.rkey;
		pkt.atmeth.swap = wqe->wr.opcode == ROCE_WR_ATOMIC_CMP_AND_SWP ?
				  wqe->wr.wr.atomic.swap : wqe->wr.wr.atomic.compare_add;
		pkt.atmeth.cmp = wqe->wr.wr.atomic.compare_add;
		n = 1;
		len = 0;
		break;
	default:
		len = ROCE_MIN(qp->vqp.mtu, wqe->length - req->offset);
		n = 1;
		pkt.reth.va = wqe->wr.wr.rdma.remote_addr;
		pkt.reth.rkey = wqe->wr.wr.rdma.rkey;
		pkt.reth.dmalen = wqe->length;
		pkt.immdt = wqe->wr.imm_data;
		pkt.ieth_rkey = wqe->wr.invalidate_rkey;
		if (qp->vqp.type == ROCE_QPT_UD) {
			pkt.deth.qkey = (wqe->wr.wr.ud.remote_qkey & 0x80000000u) ?
					qp->vqp.attr.qkey : wqe->wr.wr.ud.remote_qkey;
			pkt.deth.srcqp = qp->vqp.qpn;
		}
		break;
	}
	pkt.payload_len = len;
	if (tr_last(idx, wqe->npsn) && (wqe->wr.send_flags & ROCE_SEND_SOLICITED))
		pkt.se = true;
	if (qp->vqp.type == ROCE_QPT_RC) {
		bool last = tr_last(idx + n - 1, wqe->npsn);

		req->noack_pkts++;
		req->noack_bytes += len;
		if (req->noack_pkts >= TR_MAX_PKT_PER_ACK || (last && ack_wanted(qp, wqe))) {
			pkt.ackreq = true;
			req->noack_pkts = 0;
			req->noack_bytes = 0;
		}
	}
	if (wqe->wr.send_flags & ROCE_SEND_INLINE) {
		pkt.payload = wqe->inline_data + req->offset;
		m = tr_pkt_build(qp, &pkt, tmpl, NULL, 0, 0, false);
	} else {
		m = tr_pkt_build(qp, &pkt, tmpl, wqe->sge, (uint32_t)wqe->wr.num_sge, req->offset,
				 wqe->zc);
	}
	if (m == NULL)
		return NULL;

	req_advance(qp, n);
	req->offset += len;
	if (tr_last(idx + n - 1, wqe->npsn)) {
		wqe->state = WQE_PENDING;
		req->wqe++;
		req->offset = 0;
		/* UC and UD have no ACKs: a WQE is done once it is on the wire */
		if (qp->vqp.type != ROCE_QPT_RC)
			tr_comp_done(qp, wqe, ROCE_WC_SUCCESS);
	}
	/* (the timer is already running for all but the first of a burst: no call then) */
	if (qp->vqp.type == ROCE_QPT_RC && !roce_timer_armed(&qp->comp.ack_timer))
		tr_comp_arm_ack_timer(qp);
	return m;
}

/* Go back to @p psn: the WQE holding it and everything after it are sent again (go-back-N). */
void tr_req_rewind(struct tr_qp *qp, uint32_t psn)
{
	struct tr_req *req = &qp->req;

	for (uint32_t i = qp->vqp.sq_head; i != req->next_new; i++) {
		struct verbs_send_wqe *wqe = verbs_sq_wqe(&qp->vqp, i);

		if (wqe->state == WQE_DONE)
			continue;
		if (roce_psn_diff(psn, wqe->last_psn) > 0)
			continue;
		if (roce_psn_diff(psn, wqe->first_psn) < 0)
			psn = wqe->first_psn;
		req->wqe = i;
		req->psn = psn;
		if (wqe->wr.opcode == ROCE_WR_RDMA_READ)
			req->offset = qp->comp.read_offset;
		else
			req->offset = (uint32_t)roce_psn_diff(psn, wqe->first_psn) * qp->vqp.mtu;
		for (uint32_t j = i; j != req->next_new; j++)
			if (verbs_sq_wqe(&qp->vqp, j)->state == WQE_PENDING)
				verbs_sq_wqe(&qp->vqp, j)->state = WQE_POSTED;
		req->noack_pkts = 0;
		req->noack_bytes = 0;
		tr_qp_kick(qp);
		return;
	}
}

/*
 * The QP stops starting messages (SQD): if the last one sent did not ask for an ACK because
 * another WQE was queued behind it, send its last packet again, asking, rather than leave its
 * completion to the local ACK timeout.
 */
void tr_req_drain(struct tr_qp *qp)
{
	struct tr_req *req = &qp->req;

	if (qp->vqp.type == ROCE_QPT_RC && req->noack_pkts != 0 && req->psn == req->psn_hw &&
	    req->wqe == req->next_new && qp->vqp.sq_head != req->next_new)
		tr_req_rewind(qp, (req->psn - 1) & ROCE_PSN_MASK);
}
