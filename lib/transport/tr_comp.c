/* Completer: ACKs, NAKs, READ responses and atomic ACKs retire WQEs; timers drive retries. */
#include <string.h>

#include <rte_mbuf.h>

#include "tr_private.h"

static bool wqe_rd_atomic(const struct verbs_send_wqe *wqe)
{
	return wqe->wr.opcode == ROCE_WR_RDMA_READ || wqe->wr.opcode == ROCE_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->wr.opcode == ROCE_WR_ATOMIC_FETCH_AND_ADD;
}

static enum roce_wc_opcode wc_opcode(enum roce_wr_opcode op)
{
	switch (op) {
	case ROCE_WR_RDMA_WRITE:
	case ROCE_WR_RDMA_WRITE_WITH_IMM:
		return ROCE_WC_RDMA_WRITE;
	case ROCE_WR_RDMA_READ:
		return ROCE_WC_RDMA_READ;
	case ROCE_WR_ATOMIC_CMP_AND_SWP:
		return ROCE_WC_COMP_SWAP;
	case ROCE_WR_ATOMIC_FETCH_AND_ADD:
		return ROCE_WC_FETCH_ADD;
	default:
		return ROCE_WC_SEND;
	}
}

/* A completion could not be delivered: the CQ overflowed, which is fatal for the QP. */
void tr_cq_lost(struct tr_qp *qp)
{
	TR_CNT(qp->vqp.dev, CQ_OVERFLOW);
	tr_trace(qp, "CQ overflow: completion lost");
	if (qp->vqp.state != ROCE_QPS_ERR)
		verbs_qp_set_state(&qp->vqp, ROCE_QPS_ERR);
}

/* Retire DONE WQEs in posting order, with a CQE for the signaled ones and every error. */
TR_HOT void comp_retire(struct tr_qp *qp)
{
	while (qp->vqp.sq_head != qp->req.next_new) {
		struct verbs_send_wqe *wqe = verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head);

		if (wqe->state != WQE_DONE)
			break;
		qp->vqp.sq_head++;
		if (wqe->signaled || wqe->status != ROCE_WC_SUCCESS) {
			struct roce_wc *wc = verbs_cq_reserve(qp->vqp.scq);

			if (wc == NULL) {
				tr_cq_lost(qp);
				return;
			}
			*wc = (struct roce_wc){
				.wr_id = wqe->wr.wr_id,
				.status = wqe->status,
				.opcode = wc_opcode(wqe->wr.opcode),
				.byte_len = wqe->length,
				.qp_num = qp->vqp.qpn,
			};
			verbs_cq_commit(qp->vqp.scq);
		}
	}
}

/* tr_comp_done(), inline for the completer's loop over what an ACK covers. */
TR_HOT void comp_done(struct tr_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status)
{
	if (wqe->state == WQE_DONE)
		return;
	if (qp->vqp.type == ROCE_QPT_RC && wqe_rd_atomic(wqe) && qp->req.rd_atomic > 0)
		qp->req.rd_atomic--;
	wqe->state = WQE_DONE;
	wqe->status = status;
	comp_retire(qp);
}

void tr_comp_done(struct tr_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status)
{
	comp_done(qp, wqe, status);
}

/* Fail @p wqe with @p status and put the QP in ERR, which flushes the rest. */
void tr_qp_error(struct tr_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status)
{
	tr_trace(qp, "wqe %llu completes with %s", (unsigned long long)wqe->wr.wr_id,
		 roce_wc_status_name(status));
	if (status == ROCE_WC_RETRY_EXC_ERR)
		TR_CNT(qp->vqp.dev, RETRY_EXCEEDED);
	else if (status == ROCE_WC_RNR_RETRY_EXC_ERR)
		TR_CNT(qp->vqp.dev, RNR_RETRY_EXCEEDED);
	tr_comp_done(qp, wqe, status);
	if (qp->vqp.state != ROCE_QPS_ERR)
		verbs_qp_set_state(&qp->vqp, ROCE_QPS_ERR);
}

/* ERR: every WQE still queued completes with WR_FLUSH_ERR (IBA 10.3.1.2), sends and receives. */
void tr_qp_flush(struct tr_qp *qp)
{
	struct verbs_recv_wqe *rw;

	qp->req.next_new = qp->vqp.sq_tail;
	qp->req.wqe = qp->vqp.sq_tail;
	for (uint32_t i = qp->vqp.sq_head; i != qp->vqp.sq_tail; i++) {
		struct verbs_send_wqe *wqe = verbs_sq_wqe(&qp->vqp, i);

		if (wqe->state != WQE_DONE) {
			wqe->state = WQE_DONE;
			wqe->status = ROCE_WC_WR_FLUSH_ERR;
		}
	}
	comp_retire(qp);
	if (qp->resp.in_msg && qp->resp.wqe != NULL && (roce_opcode[qp->resp.msg_opcode].mask &
							 ROCE_F_SEND)) {
		tr_recv_complete(qp, qp->resp.wqe, ROCE_WC_WR_FLUSH_ERR, ROCE_WC_RECV, 0, 0, 0, 0);
		qp->resp.in_msg = false;
	}
	if (qp->resp.wqe_held) {
		tr_recv_complete(qp, qp->resp.wqe, ROCE_WC_WR_FLUSH_ERR, ROCE_WC_RECV, 0, 0, 0, 0);
		qp->resp.wqe_held = false;
	}
	if (qp->vqp.srq != NULL)
		return;
	while ((rw = verbs_rq_peek(&qp->vqp.rq)) != NULL) {
		tr_recv_complete(qp, rw, ROCE_WC_WR_FLUSH_ERR, ROCE_WC_RECV, 0, 0, 0, 0);
		verbs_rq_pop(&qp->vqp.rq);
	}
}

static bool comp_outstanding(const struct tr_qp *qp)
{
	return qp->vqp.sq_head != qp->req.next_new;
}

static roce_time_t ack_timeout(const struct tr_qp *qp)
{
	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout */
	return (4096 * ROCE_NS) << qp->vqp.attr.timeout;
}

void tr_comp_arm_ack_timer(struct tr_qp *qp)
{
	if (qp->vqp.attr.timeout == 0 || roce_timer_armed(&qp->comp.ack_timer) || qp->comp.rnr_wait)
		return;
	roce_timer_arm(qp->vqp.dev->eng, &qp->comp.ack_timer,
		       roce_engine_now(qp->vqp.dev->eng) + ack_timeout(qp));
}

/*
 * The ACK timer starts again from now: what a cancel and tr_comp_arm_ack_timer() do, but on
 * every ACK the timer is only postponed (the engine moves it when its old expiry comes).
 */
static void comp_restart_ack_timer(struct tr_qp *qp)
{
	struct roce_engine *eng = qp->vqp.dev->eng;

	if (qp->vqp.attr.timeout == 0 || qp->comp.rnr_wait)
		roce_timer_cancel(eng, &qp->comp.ack_timer);
	else
		roce_timer_postpone(eng, &qp->comp.ack_timer, roce_engine_now(eng) + ack_timeout(qp));
}

/* Progress was made: the retry budget is whole again and the timer restarts. */
static void comp_progress(struct tr_qp *qp)
{
	qp->comp.retry_pending = false;
	qp->comp.retry_cnt = qp->vqp.attr.retry_cnt;
	qp->comp.rnr_retry = qp->vqp.attr.rnr_retry;
	if (comp_outstanding(qp))
		comp_restart_ack_timer(qp);
	else
		roce_timer_cancel(qp->vqp.dev->eng, &qp->comp.ack_timer);
}

/*
 * Resend from @p psn, if the retry budget allows; else fail the oldest WQE. Responses already
 * in flight behind a loss all show the same gap: only the first starts a retry (as rxe's
 * started_retry); a timeout always does.
 */
static void comp_retry(struct tr_qp *qp, uint32_t psn, const char *why, bool timeout)
{
	struct verbs_send_wqe *oldest = verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head);

	if (qp->comp.retry_pending && !timeout)
		return;
	if (qp->comp.retry_cnt == 0) {
		tr_trace(qp, "%s at psn %u: retry_cnt exhausted", why, psn);
		tr_qp_error(qp, oldest, ROCE_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_cnt--;
	qp->comp.retry_pending = true;
	tr_trace(qp, "%s: go back to psn %u (%u retries left)", why, psn, qp->comp.retry_cnt);
	if (oldest->wr.opcode == ROCE_WR_RDMA_READ && qp->comp.read_offset != 0)
		TR_CNT(qp->vqp.dev, READ_RETRIES);
	tr_req_rewind(qp, psn);
	comp_restart_ack_timer(qp);
}

static void ack_timer_fired(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct tr_qp *qp = arg;

	(void)eng;
	(void)t;
	if (qp->vqp.state != ROCE_QPS_RTS && qp->vqp.state != ROCE_QPS_SQD)
		return;
	if (!comp_outstanding(qp))
		return;
	qp->st.timeouts++;
	TR_CNT(qp->vqp.dev, TIMEOUTS);
	comp_retry(qp, qp->comp.psn, "local ACK timeout", true);
}

static void rnr_timer_fired(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct tr_qp *qp = arg;

	(void)eng;
	(void)t;
	qp->comp.rnr_wait = false;
	if (qp->vqp.state != ROCE_QPS_RTS)
		return;
	tr_trace(qp, "RNR wait over: resending from psn %u", qp->req.psn);
	tr_comp_arm_ack_timer(qp);
	tr_qp_kick(qp);
}

void tr_timers_init(struct tr_qp *qp)
{
	roce_timer_init(&qp->comp.ack_timer, ack_timer_fired, qp);
	roce_timer_init(&qp->comp.rnr_timer, rnr_timer_fired, qp);
}

void tr_timers_cancel(struct tr_qp *qp)
{
	if (qp->comp.ack_timer.fn != NULL) {
		roce_timer_cancel(qp->vqp.dev->eng, &qp->comp.ack_timer);
		roce_timer_cancel(qp->vqp.dev->eng, &qp->comp.rnr_timer);
	}
	qp->comp.rnr_wait = false;
}

/*
 * Retire every WQE wholly before @p psn (inclusive when @p inclusive): SENDs and WRITEs are
 * implicitly acknowledged; an unanswered READ or atomic there means its response was lost
 * (an implied NAK, IBA 9.7.5.2.x): resend from it. @return false if a retry was started.
 */
static bool comp_implied_ack(struct tr_qp *qp, uint32_t psn, bool inclusive)
{
	while (comp_outstanding(qp)) {
		struct verbs_send_wqe *wqe = verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head);
		int32_t d = roce_psn_diff(wqe->last_psn, psn);

		if (d > 0 || (d == 0 && !inclusive))
			break;
		if (wqe_rd_atomic(wqe)) {
			TR_CNT(qp->vqp.dev, IMPLIED_NAK);
			comp_retry(qp, qp->comp.psn, "implied NAK (READ/atomic unanswered)", false);
			return false;
		}
		qp->comp.psn = (wqe->last_psn + 1) & ROCE_PSN_MASK;
		if (roce_unlikely(wqe->state == WQE_DONE)) {
			comp_done(qp, wqe, ROCE_WC_SUCCESS);
			continue;
		}
		/*
		 * comp_done() for a WQE at the head that is neither a READ nor an atomic: it
		 * retires at once, without comp_retire() looking it up again; the DONE WQEs
		 * behind it (if any) then go as comp_retire() would take them.
		 */
		wqe->state = WQE_DONE;
		wqe->status = ROCE_WC_SUCCESS;
		qp->vqp.sq_head++;
		if (wqe->signaled) {
			struct roce_wc *wc = verbs_cq_reserve(qp->vqp.scq);

			if (wc == NULL) {
				tr_cq_lost(qp);
				continue;
			}
			*wc = (struct roce_wc){
				.wr_id = wqe->wr.wr_id,
				.status = ROCE_WC_SUCCESS,
				.opcode = wc_opcode(wqe->wr.opcode),
				.byte_len = wqe->length,
				.qp_num = qp->vqp.qpn,
			};
			verbs_cq_commit(qp->vqp.scq);
		}
		if (qp->vqp.sq_head != qp->req.next_new &&
		    roce_unlikely(verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head)->state == WQE_DONE))
			comp_retire(qp);
	}
	/* a late ACK may cover what the requester was about to resend: skip it */
	if ((int32_t)(qp->req.wqe - qp->vqp.sq_head) < 0) {
		qp->req.wqe = qp->vqp.sq_head;
		qp->req.psn = qp->comp.psn;
		qp->req.offset = 0;
	}
	return true;
}

static enum roce_wc_status nak_status(uint8_t code)
{
	switch (code) {
	case ROCE_NAK_INVALID_REQ:
		return ROCE_WC_REM_INV_REQ_ERR;
	case ROCE_NAK_REM_ACCESS:
		return ROCE_WC_REM_ACCESS_ERR;
	case ROCE_NAK_INVALID_RD_REQ:
		return ROCE_WC_REM_INV_RD_REQ_ERR;
	default:
		return ROCE_WC_REM_OP_ERR;
	}
}

/* Is @p psn one the requester has sent and not yet seen answered? */
static bool psn_outstanding(const struct tr_qp *qp, uint32_t psn)
{
	return roce_psn_diff(psn, qp->comp.psn) >= 0 && roce_psn_diff(psn, qp->req.psn_hw) < 0;
}

static void comp_aeth(struct tr_qp *qp, const struct roce_pkt *pkt)
{
	uint8_t syn = pkt->aeth.syndrome;
	uint32_t psn = pkt->psn;

	switch (roce_aeth_kind(syn)) {
	case ROCE_AETH_ACK:
		TR_CNT(qp->vqp.dev, ACKS_RCVD);
		if (!psn_outstanding(qp, psn)) {
			/* duplicate or stale ACK: nothing to do */
			TR_CNT(qp->vqp.dev, GHOST_ACK);
			return;
		}
		if (!comp_implied_ack(qp, psn, true))
			return;
		/* part of a multi-packet message acknowledged: keep the resend point */
		if (roce_psn_diff(psn, qp->comp.psn) >= 0)
			qp->comp.psn = (psn + 1) & ROCE_PSN_MASK;
		comp_progress(qp);
		tr_qp_kick(qp);	/* the window moved */
		return;
	case ROCE_AETH_RNR_NAK:
		qp->st.rnr_naks_rcvd++;
		TR_CNT(qp->vqp.dev, RNR_NAK_RCVD);
		if (!psn_outstanding(qp, psn) || !comp_implied_ack(qp, psn, false))
			return;
		qp->comp.psn = psn;
		if (qp->comp.rnr_retry == 0) {
			tr_trace(qp, "RNR NAK psn %u: rnr_retry exhausted", psn);
			tr_qp_error(qp, verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head),
				    ROCE_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->comp.rnr_retry != 7)	/* 7: retry forever */
			qp->comp.rnr_retry--;
		tr_trace(qp, "RNR NAK psn %u: waiting %llu us", psn,
			 (unsigned long long)(roce_rnr_timer_ns(syn & 0x1f) / 1000));
		qp->comp.rnr_wait = true;
		tr_req_rewind(qp, psn);
		roce_timer_cancel(qp->vqp.dev->eng, &qp->comp.ack_timer);
		roce_timer_arm(qp->vqp.dev->eng, &qp->comp.rnr_timer,
			       roce_engine_now(qp->vqp.dev->eng) +
			       roce_rnr_timer_ns(syn & 0x1f) * ROCE_NS);
		return;
	case ROCE_AETH_NAK:
		if ((syn & 0x1f) == ROCE_NAK_PSN_SEQ_ERR) {
			bool progress = roce_psn_diff(psn, qp->comp.psn) > 0;

			qp->st.seq_naks_rcvd++;
			TR_CNT(qp->vqp.dev, SEQ_NAK_RCVD);
			/* IBA 9.7.5.1.2: a sequence NAK acknowledges everything before its PSN */
			if (!psn_outstanding(qp, psn) || !comp_implied_ack(qp, psn, false))
				return;
			/*
			 * It got further than the last answer: forward progress, so a new loss
			 * with the whole retry budget (as an ACK's, and rxe's reset_retry_counters)
			 */
			if (progress) {
				qp->comp.retry_pending = false;
				qp->comp.retry_cnt = qp->vqp.attr.retry_cnt;
				qp->comp.rnr_retry = qp->vqp.attr.rnr_retry;
			}
			qp->comp.psn = psn;
			comp_retry(qp, psn, "NAK sequence error", false);
			return;
		}
		TR_CNT(qp->vqp.dev, ERR_NAK_RCVD);
		if (!psn_outstanding(qp, psn) || !comp_implied_ack(qp, psn, false))
			return;
		if (comp_outstanding(qp))
			tr_qp_error(qp, verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head),
				    nak_status(syn & 0x1f));
		return;
	default:
		TR_CNT(qp->vqp.dev, GHOST_ACK);
	}
}

/* READ response or atomic ACK for the oldest outstanding WQE. */
static void comp_data(struct tr_qp *qp, const struct roce_pkt *pkt, uint32_t mask)
{
	struct verbs_send_wqe *wqe;
	int32_t d;

	if (!psn_outstanding(qp, pkt->psn)) {
		TR_CNT(qp->vqp.dev, GHOST_ACK);
		return;
	}
	/* everything before this response is acknowledged by it */
	if (!comp_implied_ack(qp, pkt->psn, false) || !comp_outstanding(qp))
		return;
	wqe = verbs_sq_wqe(&qp->vqp, qp->vqp.sq_head);
	if (roce_psn_diff(pkt->psn, wqe->first_psn) < 0 ||
	    roce_psn_diff(pkt->psn, wqe->last_psn) > 0 ||
	    ((mask & ROCE_F_READ) ? wqe->wr.opcode != ROCE_WR_RDMA_READ : !wqe_rd_atomic(wqe) ||
	     wqe->wr.opcode == ROCE_WR_RDMA_READ)) {
		tr_qp_error(qp, wqe, ROCE_WC_BAD_RESP_ERR);
		return;
	}
	d = roce_psn_diff(pkt->psn, qp->comp.psn);
	if (d > 0) {
		/* responses were lost: ask again for the rest (partial READ retry) */
		comp_retry(qp, qp->comp.psn, "READ response gap", false);
		return;
	}
	if (d < 0)
		return;	/* duplicate response */

	if (mask & ROCE_F_ATOMIC) {
		uint64_t orig = pkt->atmack_orig;

		verbs_sge_place(wqe->sge, (uint32_t)wqe->wr.num_sge, 0, (const uint8_t *)&orig, 8,
				wqe->discard);
		qp->comp.psn = (pkt->psn + 1) & ROCE_PSN_MASK;
		tr_comp_done(qp, wqe, ROCE_WC_SUCCESS);
	} else {
		if (qp->comp.read_offset + pkt->payload_len > wqe->length ||
		    (!(mask & ROCE_F_LAST) && pkt->payload_len != qp->vqp.mtu)) {
			tr_qp_error(qp, wqe, ROCE_WC_BAD_RESP_ERR);
			return;
		}
		verbs_sge_place(wqe->sge, (uint32_t)wqe->wr.num_sge, qp->comp.read_offset,
				pkt->payload, pkt->payload_len, wqe->discard);
		qp->comp.read_offset += pkt->payload_len;
		qp->st.rx_bytes += pkt->payload_len;
		qp->comp.psn = (pkt->psn + 1) & ROCE_PSN_MASK;
		if (mask & ROCE_F_LAST) {
			if (qp->comp.read_offset != wqe->length) {
				tr_qp_error(qp, wqe, ROCE_WC_BAD_RESP_ERR);
				return;
			}
			qp->comp.read_offset = 0;
			tr_comp_done(qp, wqe, ROCE_WC_SUCCESS);
		}
	}
	comp_progress(qp);
	tr_qp_kick(qp);
}

void tr_comp_rx(struct tr_qp *qp, const struct roce_pkt *pkt)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;

	if (qp->vqp.type != ROCE_QPT_RC || qp->vqp.state == ROCE_QPS_ERR)
		return;
	if (mask & (ROCE_F_READ | ROCE_F_ATOMIC))
		comp_data(qp, pkt, mask);
	else
		comp_aeth(qp, pkt);
}
