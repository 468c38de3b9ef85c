/* Responder: checks PSNs, keys and rights, executes requests, and answers them (IBA 9.7.5). */
#include <string.h>

#include <rte_mbuf.h>

#include "tr_private.h"

#define AETH_ACK_NO_CREDIT 0x1f		/* ACK, credit field "no end-to-end credits" (as rxe) */

static struct roce_mr zero_len_mr;	/* what a zero-length RETH "finds": nothing is touched */

static uint8_t nak_syndrome(enum roce_nak_code code)
{
	return (uint8_t)(ROCE_AETH_NAK << 5 | code);
}

/* Queue an ACK for @p psn; later ones overwrite it (coalescing), a NAK is not overwritten. */
static void resp_ack(struct tr_qp *qp, uint32_t psn)
{
	if (qp->resp.ack == RESP_ACK_NAK)
		return;
	qp->resp.ack = RESP_ACK_ACK;
	qp->resp.ack_psn = psn;
	tr_qp_kick(qp);
}

static void resp_nak(struct tr_qp *qp, uint32_t psn, uint8_t syndrome)
{
	qp->resp.ack = RESP_ACK_NAK;
	qp->resp.ack_psn = psn;
	qp->resp.nak_syndrome = syndrome;
	tr_qp_kick(qp);
}

/* A fatal NAK: send it, then the QP goes to ERR once it is out (IBA 9.9.2). */
static void resp_fatal(struct tr_qp *qp, uint32_t psn, enum roce_nak_code code)
{
	static const enum roce_dev_counter cnt[] = {
		[ROCE_NAK_INVALID_REQ] = ROCE_CNT_INV_REQ_NAK_SENT,
		[ROCE_NAK_REM_ACCESS] = ROCE_CNT_ACCESS_NAK_SENT,
		[ROCE_NAK_REM_OP_ERR] = ROCE_CNT_OP_ERR_NAK_SENT,
	};

	tr_nic(qp->vqp.dev)->cnt[cnt[code]]++;
	tr_trace(qp, "NAK %s psn %u", roce_aeth_name(nak_syndrome(code)), psn);
	resp_nak(qp, psn, nak_syndrome(code));
}

/* Receive completion for the WQE the responder is filling; releases it. */
TR_HOT void resp_recv_done(struct tr_qp *qp, enum roce_wc_status status, enum roce_wc_opcode op,
			   uint32_t byte_len, unsigned int flags, uint32_t imm, uint32_t src_qp)
{
	tr_recv_complete(qp, qp->resp.wqe, status, op, byte_len, flags, imm, src_qp);
	qp->resp.wqe_offset = 0;
}

/* Take the next receive WQE into resp.wqe. false: none posted. */
TR_HOT bool resp_take_wqe(struct tr_qp *qp)
{
	struct verbs_rq *rq = verbs_qp_rq(&qp->vqp);
	struct verbs_recv_wqe *w = verbs_rq_peek(rq);

	if (qp->resp.wqe_held) {
		/* the receive a broken UC SEND had: it serves this message (IBA 9.8.3, as rxe) */
		qp->resp.wqe_held = false;
		qp->resp.wqe_offset = 0;
		return true;
	}
	if (w == NULL)
		return false;
	if (qp->resp.wqe == NULL) {
		qp->resp.wqe = malloc(sizeof(*w) + VERBS_MAX_SGE * sizeof(struct roce_sge));
		if (qp->resp.wqe == NULL)
			return false;
	}
	if (w->num_sge == 1) {
		/* the usual one SGE: two 16-byte copies, not a memcpy call */
		*qp->resp.wqe = *w;
		qp->resp.wqe->sge[0] = w->sge[0];
	} else {
		memcpy(qp->resp.wqe, w, sizeof(*w) + w->num_sge * sizeof(struct roce_sge));
	}
	verbs_rq_pop(rq);
	qp->resp.wqe_offset = 0;
	return true;
}

/* UC: the message in progress is lost; a SEND's receive WQE is kept for the next message. */
static void resp_uc_abort(struct tr_qp *qp)
{
	if (qp->resp.in_msg && (roce_opcode[qp->resp.msg_opcode].mask & ROCE_F_SEND))
		qp->resp.wqe_held = true;
	qp->resp.in_msg = false;
}

/* Place a SEND payload into the current receive WQE. false: it does not fit, or bad lkey. */
TR_HOT int resp_place_send(struct tr_qp *qp, const struct roce_pkt *pkt, uint32_t hdr_extra)
{
	struct verbs_recv_wqe *w = qp->resp.wqe;
	uint32_t len = pkt->payload_len + hdr_extra, discard;

	if (qp->resp.wqe_offset + len > w->length)
		return -EMSGSIZE;
	if (verbs_sge_check(qp->vqp.pd, w->sge, w->num_sge, ROCE_ACCESS_LOCAL_WRITE, &discard) != 0)
		return -EACCES;
	if (hdr_extra != 0) {
		/* UD: the 40-byte GRH area; a RoCEv2 IPv4 header sits in its last 20 bytes */
		uint8_t grh[ROCE_GRH_LEN] = { 0 };
		const uint8_t *l3 = pkt->frame + pkt->l3_off;

		if (pkt->ip_ver == 4)
			memcpy(grh + 20, l3, 20);
		else
			memcpy(grh, l3, ROCE_GRH_LEN);
		verbs_sge_place(w->sge, w->num_sge, qp->resp.wqe_offset, grh, ROCE_GRH_LEN,
				discard);
	}
	verbs_sge_place(w->sge, w->num_sge, qp->resp.wqe_offset + hdr_extra, pkt->payload,
			pkt->payload_len, discard);
	qp->resp.wqe_offset += len;
	qp->st.rx_bytes += pkt->payload_len;
	return 0;
}

/*
 * Does the QP take remote operations of this kind at all? Without the QP's right the request
 * is invalid (NAK invalid request, as rxe answers), before any key is looked at.
 */
static inline bool resp_qp_allows(const struct tr_qp *qp, unsigned int access)
{
	return (qp->vqp.attr.qp_access_flags & access) != 0;
}

/* RETH/AtomicETH checks: key, bounds, the MR's rights. */
static inline struct roce_mr *resp_check_rkey(struct tr_qp *qp, uint32_t rkey, uint64_t va,
					      uint64_t len, unsigned int access)
{
	struct roce_mr *mr;

	if (len == 0)
		return &zero_len_mr;	/* zero-length: no key is looked at (IBA 9.4.1.1) */
	mr = verbs_mr_lookup(qp->vqp.pd, rkey, true);
	if (mr == NULL || verbs_mr_check(mr, va, len, access) != 0)
		return NULL;
	return mr;
}

static struct tr_resource *resp_find_res(struct tr_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < qp->resp.res_size; i++) {
		struct tr_resource *r = &qp->resp.res[i];

		if (r->opcode != 0 && roce_psn_diff(psn, r->first_psn) >= 0 &&
		    roce_psn_diff(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

/* A READ or atomic to answer: claim a resource slot. NULL: more outstanding than granted. */
static struct tr_resource *resp_new_res(struct tr_qp *qp)
{
	struct tr_resp *resp = &qp->resp;
	struct tr_resource *r;

	r = &resp->res[resp->res_tail % resp->res_size];
	/*
	 * The ring is full of answers still owed: the requester has more out than granted. Not
	 * so if the owed answer is a replay: the requester, which keeps no more READs and atomics
	 * out than there are slots, is done with the one this slot held (the first answer reached
	 * it after it had asked again), and the replay is for nobody (rxe reuses the slot too).
	 */
	if (r->active && !r->replay)
		return NULL;
	resp->res_tail++;
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * May the duplicate @p pkt be answered from resource @p r? An atomic must be the one executed;
 * a READ must ask for the first READ's bytes or a part of them, within its PSNs, through a key
 * that still grants them. A duplicate is not checked as a new request, so another range would
 * read memory nobody granted (rxe's duplicate_request() and hfi1's rc_rcv_error() drop such a
 * request too). @return the MR to read from (a READ), &zero_len_mr (an atomic), or NULL: drop.
 */
static struct roce_mr *resp_dup_ok(struct tr_qp *qp, const struct tr_resource *r,
				   const struct roce_pkt *pkt, uint32_t mask)
{
	uint64_t off = pkt->reth.va - r->va0;
	uint32_t len = pkt->reth.dmalen;

	if (!(mask & ROCE_F_READ))
		return pkt->opcode == r->opcode ? &zero_len_mr : NULL;
	if (r->opcode != ROCE_OP_RC_RDMA_READ_REQUEST || pkt->reth.va < r->va0 || off > r->len0 ||
	    len > r->len0 - off ||
	    tr_npkts(len, qp->vqp.mtu) > (uint32_t)roce_psn_diff(r->last_psn, pkt->psn) + 1)
		return NULL;
	return resp_check_rkey(qp, pkt->reth.rkey, pkt->reth.va, len, ROCE_ACCESS_REMOTE_READ);
}

/* A duplicate request (IBA 9.7.5.1.1 / 9.7.5.2.4): answer it again without executing twice. */
static void resp_duplicate(struct tr_qp *qp, const struct roce_pkt *pkt, uint32_t mask)
{
	struct tr_resource *r;
	struct roce_mr *mr;

	qp->st.duplicates++;
	TR_CNT(qp->vqp.dev, DUPLICATE);
	if (mask & (ROCE_F_READ | ROCE_F_ATOMIC)) {
		r = resp_find_res(qp, pkt->psn);
		if (r == NULL)
			return;		/* evicted: the requester's retry will time out */
		mr = resp_dup_ok(qp, r, pkt, mask);
		if (mr == NULL) {
			TR_CNT(qp->vqp.dev, DUP_DROPPED);
			tr_trace(qp, "duplicate %s psn %u is not the request answered there: dropped",
				 roce_opcode[pkt->opcode].name, pkt->psn);
			return;
		}
		/*
		 * The requester went back to this PSN and resends everything after it: answers
		 * still owed for later requests would only be dropped as out of order. Start over
		 * from here, in order (go-back-N on the response stream too).
		 */
		for (uint32_t i = 0; i < qp->resp.res_size; i++)
			if (roce_psn_diff(qp->resp.res[i].first_psn, r->first_psn) > 0)
				qp->resp.res[i].active = false;
		if (mask & ROCE_F_READ) {
			/* replay over the requested range: reads are idempotent */
			r->cur_psn = pkt->psn;
			r->start_psn = pkt->psn;
			r->va = pkt->reth.va;
			r->resid = pkt->reth.dmalen;
			r->mr = mr;
			TR_CNT(qp->vqp.dev, DUP_READ);
			tr_trace(qp, "duplicate READ psn %u: replaying", pkt->psn);
		} else {
			r->cur_psn = r->first_psn;	/* the atomic is not executed again */
			TR_CNT(qp->vqp.dev, DUP_ATOMIC);
			tr_trace(qp, "duplicate atomic psn %u: answering from the cache", pkt->psn);
		}
		/*
		 * The AETH reports the MSN as it is now: a duplicate completes no message, and the
		 * first answer's MSN would take back the messages completed since. rxe
		 * (prepare_ack_packet) and hfi1 (rvt_compute_aeth) put the current MSN in every
		 * AETH (pcap/rxe/rc_atomic_fetch_add_loss_ack.pcap, rc_read_bw_loss_resp.pcap).
		 */
		r->msn = qp->resp.msn;
		r->active = true;
		r->replay = true;
		qp->resp.res_active++;
		tr_qp_kick(qp);
		return;
	}
	/*
	 * SEND/WRITE: acknowledge again what has been received, for every duplicate packet and
	 * not only those asking (IBA C9-105; rxe does so, ibv_rc_pingpong.pcap frames 128-131)
	 */
	resp_ack(qp, (qp->resp.epsn - 1) & ROCE_PSN_MASK);
}

/* Read, and unless the region drops what is written to it (ROCE_ACCESS_DISCARD), write. */
static void resp_execute_atomic(const struct roce_pkt *pkt, struct tr_resource *r,
				const struct roce_mr *mr)
{
	uint64_t *p = (uint64_t *)(uintptr_t)pkt->atmeth.va;

	r->orig = *p;
	if (mr->access & ROCE_ACCESS_DISCARD)
		return;
	if (pkt->opcode == ROCE_OP_RC_COMPARE_SWAP) {
		if (r->orig == pkt->atmeth.cmp)
			*p = pkt->atmeth.swap;
	} else {
		*p = r->orig + pkt->atmeth.swap;
	}
}

/* RC and UC requests that arrived in order (inline: tr_resp_rx runs it for most packets). */
TR_HOT void resp_execute(struct tr_qp *qp, const struct roce_pkt *pkt, uint32_t mask)
{
	struct tr_resp *resp = &qp->resp;
	bool rc = qp->vqp.type == ROCE_QPT_RC;
	bool first = mask & ROCE_F_FIRST, last = mask & ROCE_F_LAST;
	int err;

	/* opcode sequence (IBA 9.7.5.1.4): FIRST/ONLY only between messages */
	if (first == resp->in_msg || (resp->in_msg && (mask & (ROCE_F_SEND | ROCE_F_WRITE)) !=
				      (roce_opcode[resp->msg_opcode].mask & (ROCE_F_SEND | ROCE_F_WRITE)))) {
		if (rc) {
			resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ);
		} else {
			resp_uc_abort(qp);	/* UC: drop the broken message */
			resp->uc_drop = !first;
		}
		return;
	}

	if (mask & ROCE_F_SEND) {
		if (first && !resp_take_wqe(qp)) {
			if (rc) {
				TR_CNT(qp->vqp.dev, RNR_NAK_SENT);
				tr_trace(qp, "RNR NAK psn %u timer %u", pkt->psn,
					 qp->vqp.attr.min_rnr_timer);
				resp->rnr_nak_sent = true;
				resp_nak(qp, pkt->psn, (uint8_t)(ROCE_AETH_RNR_NAK << 5 |
								 qp->vqp.attr.min_rnr_timer));
			}
			return;
		}
		err = resp_place_send(qp, pkt, 0);
		if (err != 0) {
			resp_recv_done(qp, err == -EMSGSIZE ? ROCE_WC_LOC_LEN_ERR : ROCE_WC_LOC_PROT_ERR,
				       ROCE_WC_RECV, 0, 0, 0, 0);
			resp->in_msg = false;
			if (rc)
				resp_fatal(qp, pkt->psn, err == -EMSGSIZE ? ROCE_NAK_INVALID_REQ :
							 ROCE_NAK_REM_OP_ERR);
			else
				resp->uc_drop = !last;
			return;
		}
		if (last) {
			unsigned int flags = 0;
			uint32_t imm = 0;

			if (mask & ROCE_F_IMMDT)
				flags |= ROCE_WC_WITH_IMM, imm = pkt->immdt;
			if (mask & ROCE_F_IETH)
				flags |= ROCE_WC_WITH_INV, imm = pkt->ieth_rkey;
			resp_recv_done(qp, ROCE_WC_SUCCESS, ROCE_WC_RECV, resp->wqe_offset, flags, imm, 0);
		}
	} else {
		/* RDMA WRITE */
		if (first) {
			bool allowed = resp_qp_allows(qp, ROCE_ACCESS_REMOTE_WRITE);

			resp->wr_mr = !allowed ? NULL :
				      resp_check_rkey(qp, pkt->reth.rkey, pkt->reth.va,
						      pkt->reth.dmalen, ROCE_ACCESS_REMOTE_WRITE);
			if (resp->wr_mr == NULL) {
				if (rc)
					resp_fatal(qp, pkt->psn, allowed ? ROCE_NAK_REM_ACCESS :
						   ROCE_NAK_INVALID_REQ);
				else
					resp->uc_drop = !last;
				return;
			}
			resp->wr_va = pkt->reth.va;
			resp->wr_resid = pkt->reth.dmalen;
			resp->wr_discard = (resp->wr_mr->access & ROCE_ACCESS_DISCARD) != 0;
			resp->wqe_offset = pkt->reth.dmalen;	/* WRITE_WITH_IMM reports it */
		}
		if (pkt->payload_len > resp->wr_resid || (last && pkt->payload_len != resp->wr_resid) ||
		    (!last && pkt->payload_len != qp->vqp.mtu)) {
			if (rc)
				resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ);
			else
				resp->in_msg = false, resp->uc_drop = !last;
			return;
		}
		if (last && (mask & ROCE_F_IMMDT)) {
			/* the immediate consumes a receive WQE: check before touching memory */
			uint32_t total = resp->wqe_offset;

			if (!resp_take_wqe(qp)) {
				if (rc) {
					TR_CNT(qp->vqp.dev, RNR_NAK_SENT);
					resp->rnr_nak_sent = true;
					resp_nak(qp, pkt->psn,
						 (uint8_t)(ROCE_AETH_RNR_NAK << 5 |
							   qp->vqp.attr.min_rnr_timer));
				}
				return;
			}
			if (!resp->wr_discard)
				memcpy((uint8_t *)(uintptr_t)resp->wr_va, pkt->payload,
				       pkt->payload_len);
			resp_recv_done(qp, ROCE_WC_SUCCESS, ROCE_WC_RECV_RDMA_WITH_IMM, total,
				       ROCE_WC_WITH_IMM, pkt->immdt, 0);
		} else if (pkt->payload_len != 0 && !resp->wr_discard) {
			memcpy((uint8_t *)(uintptr_t)resp->wr_va, pkt->payload, pkt->payload_len);
		}
		resp->wr_va += pkt->payload_len;
		resp->wr_resid -= pkt->payload_len;
		qp->st.rx_bytes += pkt->payload_len;
	}

	resp->in_msg = !last;
	if (first)
		resp->msg_opcode = pkt->opcode;
	resp->rnr_nak_sent = false;
	resp->epsn = (pkt->psn + 1) & ROCE_PSN_MASK;
	if (last)
		resp->msn = (resp->msn + 1) & 0xffffff;
	if (rc && pkt->ackreq)
		resp_ack(qp, pkt->psn);
}

static void resp_read_atomic(struct tr_qp *qp, const struct roce_pkt *pkt, uint32_t mask)
{
	struct tr_resp *resp = &qp->resp;
	struct tr_resource *r;
	struct roce_mr *mr;

	if (resp->in_msg) {
		resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	if (!resp_qp_allows(qp, (mask & ROCE_F_READ) ? ROCE_ACCESS_REMOTE_READ :
			    ROCE_ACCESS_REMOTE_ATOMIC)) {
		resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	if (mask & ROCE_F_READ) {
		mr = resp_check_rkey(qp, pkt->reth.rkey, pkt->reth.va, pkt->reth.dmalen,
				     ROCE_ACCESS_REMOTE_READ);
		if (mr == NULL) {
			resp_fatal(qp, pkt->psn, ROCE_NAK_REM_ACCESS);
			return;
		}
	} else {
		mr = resp_check_rkey(qp, pkt->atmeth.rkey, pkt->atmeth.va, 8,
				     ROCE_ACCESS_REMOTE_ATOMIC);
		if (pkt->atmeth.va & 7) {	/* IBA 9.4.5: atomics are 8-byte aligned */
			resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ);
			return;
		}
		if (mr == NULL) {
			resp_fatal(qp, pkt->psn, ROCE_NAK_REM_ACCESS);
			return;
		}
	}
	r = resp_new_res(qp);
	if (r == NULL) {
		resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	r->opcode = pkt->opcode;
	r->first_psn = pkt->psn;
	r->cur_psn = pkt->psn;
	r->start_psn = pkt->psn;
	if (mask & ROCE_F_READ) {
		uint32_t n = tr_npkts(pkt->reth.dmalen, qp->vqp.mtu);

		r->last_psn = (pkt->psn + n - 1) & ROCE_PSN_MASK;
		r->va = r->va0 = pkt->reth.va;
		r->resid = r->len0 = pkt->reth.dmalen;
		r->mr = mr;
		resp->epsn = (pkt->psn + n) & ROCE_PSN_MASK;
	} else {
		r->last_psn = pkt->psn;
		resp_execute_atomic(pkt, r, mr);
		resp->epsn = (pkt->psn + 1) & ROCE_PSN_MASK;
	}
	resp->msn = (resp->msn + 1) & 0xffffff;
	r->msn = resp->msn;
	r->active = true;
	resp->res_active++;
	tr_qp_kick(qp);
}

void tr_resp_rx(struct tr_qp *qp, const struct roce_pkt *pkt)
{
	struct tr_resp *resp = &qp->resp;
	uint32_t mask = roce_opcode[pkt->opcode].mask;
	int32_t d;

	if (resp->ack == RESP_ACK_NAK && resp->nak_syndrome >> 5 == ROCE_AETH_NAK &&
	    (resp->nak_syndrome & 0x1f) != ROCE_NAK_PSN_SEQ_ERR)
		return;		/* a fatal NAK is on its way out: nothing more is executed */

	if (qp->vqp.type == ROCE_QPT_UD) {
		unsigned int flags = ROCE_WC_GRH;
		int err;

		if (pkt->deth.qkey != qp->vqp.attr.qkey) {
			TR_CNT(qp->vqp.dev, RX_QKEY_ERR);
			return;
		}
		if (!resp_take_wqe(qp)) {
			TR_CNT(qp->vqp.dev, RX_BAD_STATE);	/* UD: no receive posted, dropped */
			return;
		}
		err = resp_place_send(qp, pkt, ROCE_GRH_LEN);
		if (mask & ROCE_F_IMMDT)
			flags |= ROCE_WC_WITH_IMM;
		resp_recv_done(qp, err == 0 ? ROCE_WC_SUCCESS : err == -EMSGSIZE ?
			       ROCE_WC_LOC_LEN_ERR : ROCE_WC_LOC_PROT_ERR, ROCE_WC_RECV,
			       err == 0 ? resp->wqe_offset : 0, flags, pkt->immdt, pkt->deth.srcqp);
		return;
	}

	d = roce_psn_diff(pkt->psn, resp->epsn);
	if (qp->vqp.type == ROCE_QPT_UC) {
		if (d != 0) {
			/* UC: a gap loses the message in progress; resynchronise on FIRST/ONLY */
			qp->st.out_of_seq++;
			TR_CNT(qp->vqp.dev, OUT_OF_SEQUENCE);
			resp_uc_abort(qp);
			resp->uc_drop = !(mask & ROCE_F_FIRST);
			if (resp->uc_drop)
				return;
			resp->epsn = pkt->psn;
		}
		if (resp->uc_drop) {
			if (!(mask & ROCE_F_FIRST)) {
				resp->epsn = (pkt->psn + 1) & ROCE_PSN_MASK;
				return;
			}
			resp->uc_drop = false;
		}
		resp_execute(qp, pkt, mask);
		if (resp->uc_drop || !resp->in_msg)
			resp->epsn = (pkt->psn + 1) & ROCE_PSN_MASK;
		return;
	}

	/* RC, IBA 9.7.5.1.1 */
	if (d > 0) {
		qp->st.out_of_seq++;
		TR_CNT(qp->vqp.dev, OUT_OF_SEQUENCE);
		if (!resp->seq_nak_sent) {
			resp->seq_nak_sent = true;
			TR_CNT(qp->vqp.dev, SEQ_NAK_SENT);
			tr_trace(qp, "out of sequence psn %u, expected %u: NAK sequence error",
				 pkt->psn, resp->epsn);
			resp_nak(qp, resp->epsn, nak_syndrome(ROCE_NAK_PSN_SEQ_ERR));
		}
		return;
	}
	if (d < 0) {
		resp_duplicate(qp, pkt, mask);
		return;
	}
	resp->seq_nak_sent = false;
	if (resp->ack == RESP_ACK_NAK && (resp->nak_syndrome >> 5) != ROCE_AETH_ACK)
		resp->ack = RESP_ACK_NONE;	/* the retry has come: the NAK is moot */
	if (mask & (ROCE_F_READ | ROCE_F_ATOMIC))
		resp_read_atomic(qp, pkt, mask);
	else
		resp_execute(qp, pkt, mask);
}

/* Build one READ response or atomic ACK for resource @p r. */
static struct rte_mbuf *resp_answer(struct tr_qp *qp, struct tr_resource *r)
{
	const struct roce_wire_tmpl *tmpl;
	struct roce_pkt pkt;
	struct rte_mbuf *m;
	uint32_t len = 0;
	uint8_t op;

	if (r->opcode == ROCE_OP_RC_RDMA_READ_REQUEST) {
		/* a (partial) replay starts a new response sequence at its own PSN */
		bool first = r->cur_psn == r->start_psn;
		bool last = r->resid <= qp->vqp.mtu;

		len = ROCE_MIN(r->resid, qp->vqp.mtu);
		op = first && last ? ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
		     first ? ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST :
		     last ? ROCE_OP_RC_RDMA_READ_RESPONSE_LAST : ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	} else {
		op = ROCE_OP_RC_ATOMIC_ACKNOWLEDGE;
	}
	tmpl = tr_pkt_init_conn(qp, &pkt, op);
	pkt.psn = r->cur_psn;
	pkt.aeth.syndrome = AETH_ACK_NO_CREDIT;
	pkt.aeth.msn = r->msn;
	pkt.atmack_orig = r->orig;
	pkt.payload_len = len;
	if (len != 0)
		pkt.payload = (const uint8_t *)(uintptr_t)r->va;
	m = tr_pkt_build(qp, &pkt, tmpl, NULL, 0, 0,
			 len != 0 && (r->mr->access & ROCE_ACCESS_ZERO_COPY));
	if (m == NULL)
		return NULL;
	r->va += len;
	r->resid -= len;
	r->cur_psn = (r->cur_psn + 1) & ROCE_PSN_MASK;
	if (r->opcode != ROCE_OP_RC_RDMA_READ_REQUEST || r->resid == 0) {
		r->active = false;
		qp->resp.res_active--;
	}
	if (op == ROCE_OP_RC_ATOMIC_ACKNOWLEDGE)
		TR_CNT(qp->vqp.dev, ACKS_SENT);
	return m;
}

static struct rte_mbuf *resp_send_ack(struct tr_qp *qp)
{
	struct tr_resp *resp = &qp->resp;
	const struct roce_wire_tmpl *tmpl;
	struct roce_pkt pkt;
	struct rte_mbuf *m;

	tmpl = tr_pkt_init_conn_at(qp, &pkt, ROCE_OP_RC_ACKNOWLEDGE, 1);	/* an ACK */
	pkt.psn = resp->ack_psn;
	pkt.aeth.syndrome = resp->ack == RESP_ACK_NAK ? resp->nak_syndrome : AETH_ACK_NO_CREDIT;
	pkt.aeth.msn = resp->msn;
	m = tr_pkt_build(qp, &pkt, tmpl, NULL, 0, 0, false);
	if (m == NULL)
		return NULL;
	if (resp->ack == RESP_ACK_ACK)
		TR_CNT(qp->vqp.dev, ACKS_SENT);
	if (resp->ack == RESP_ACK_NAK && resp->nak_syndrome >> 5 == ROCE_AETH_NAK &&
	    (resp->nak_syndrome & 0x1f) != ROCE_NAK_PSN_SEQ_ERR) {
		resp->ack = RESP_ACK_NONE;
		/* IBA 9.9.3: fatal NAK, responder errs */
		verbs_qp_set_state(&qp->vqp, ROCE_QPS_ERR);
		return m;
	}
	resp->ack = RESP_ACK_NONE;
	return m;
}

/* Next response packet: READ data and atomic ACKs first (they are older), then ACK/NAK. */
struct rte_mbuf *tr_resp_next(struct tr_qp *qp)
{
	struct tr_resp *resp = &qp->resp;

	if (qp->vqp.type != ROCE_QPT_RC ||
	    (qp->vqp.state != ROCE_QPS_RTR && qp->vqp.state != ROCE_QPS_RTS &&
	     qp->vqp.state != ROCE_QPS_SQD))
		return NULL;
	/*
	 * res_active never counts fewer than are active (a reset or a replay may leave it high):
	 * zero means there is nothing to scan for, and a scan sets it right.
	 */
	if (resp->res_active != 0) {
		struct tr_resource *oldest = NULL;
		uint32_t active = 0;

		/* answers go out in PSN order: the active resource furthest behind epsn first */
		for (uint32_t i = 0; i < resp->res_size; i++) {
			struct tr_resource *r = &resp->res[i];

			if (!r->active)
				continue;
			active++;
			if (oldest == NULL || roce_psn_diff(r->cur_psn, oldest->cur_psn) < 0)
				oldest = r;
		}
		resp->res_active = active;
		if (oldest != NULL)
			return resp_answer(qp, oldest);
	}
	if (resp->ack != RESP_ACK_NONE)
		return resp_send_ack(qp);
	return NULL;
}
