/*
 * The data path: a post writes WQEs into the queue's ring and rings the NIC's doorbell; a poll
 * takes completions from the CQ's ring. Neither runs the NIC: its thread does that.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ibv_private.h"

/* Opcodes each QP type posts (libibverbs' numbers are lib/verbs'). */
static bool opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return t == IBV_QPT_RC;
	default:
		return false;
	}
}

/* One send WR into its slot; @return 0 or an errno for ibv_post_send. */
static int fill_swqe(struct ibvr_qp *q, const struct ibv_send_wr *wr, struct roce_nic_swqe *w)
{
	struct roce_send_wr *o = &w->wr;

	if (!opcode_ok(q->ibv.qp_type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	o->wr_id = wr->wr_id;
	o->opcode = (enum roce_wr_opcode)wr->opcode;
	o->send_flags = wr->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					  IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	if (q->sq_sig_all)
		o->send_flags |= ROCE_SEND_SIGNALED;
	o->imm_data = wr->opcode == IBV_WR_SEND_WITH_INV ? 0 : ntohl(wr->imm_data);
	o->invalidate_rkey = wr->opcode == IBV_WR_SEND_WITH_INV ? wr->invalidate_rkey : 0;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint32_t len = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > q->cap.max_inline_data - len)
				return EINVAL;
			memcpy(w->inl + len, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->sge[0] = (struct roce_sge){ .addr = (uintptr_t)w->inl, .length = len };
		o->num_sge = 1;
	} else {
		if ((uint32_t)wr->num_sge > q->cap.max_send_sge)
			return EINVAL;
		for (int i = 0; i < wr->num_sge; i++)
			w->sge[i] = (struct roce_sge){ .addr = wr->sg_list[i].addr,
						       .length = wr->sg_list[i].length,
						       .lkey = wr->sg_list[i].lkey };
		o->num_sge = wr->num_sge;
	}
	switch (q->ibv.qp_type) {
	case IBV_QPT_UD:
		if (wr->wr.ud.ah == NULL)
			return EINVAL;
		o->wr.ud.ah = to_iah(wr->wr.ud.ah)->ah;
		o->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		o->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		break;
	default:
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			o->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
			o->wr.atomic.compare_add = wr->wr.atomic.compare_add;
			o->wr.atomic.swap = wr->wr.atomic.swap;
			o->wr.atomic.rkey = wr->wr.atomic.rkey;
		} else {
			o->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
			o->wr.rdma.rkey = wr->wr.rdma.rkey;
		}
		break;
	}
	return 0;
}

int ibvr_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibvr_qp *q = to_iqp(qp);
	struct roce_nic *nic = to_ictx(qp->context)->nic;
	int rc = 0;

	if (!ibvr_usable()) {
		*bad = wr;
		return EIO;
	}
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD && qp->state != IBV_QPS_SQE &&
	    qp->state != IBV_QPS_ERR) {
		*bad = wr;
		return EINVAL;
	}
	ibvr_lock(&q->sq_lock);
	for (; wr != NULL; wr = wr->next) {
		struct roce_nic_swqe *w = roce_nic_ring_prod(&q->sq.ring);

		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		rc = fill_swqe(q, wr, w);
		if (rc != 0)
			break;
		roce_nic_ring_push(&q->sq.ring);
	}
	ibvr_unlock(&q->sq_lock);
	roce_nic_doorbell(nic);
	if (rc != 0)
		*bad = wr;
	return rc;
}

/* Receive WRs into @p ring; @return 0 or an errno. */
static int post_rq(struct roce_nic *nic, struct roce_nic_ring *ring, uint32_t max_sge,
		   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int rc = 0;

	for (; wr != NULL; wr = wr->next) {
		struct roce_nic_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			rc = EINVAL;
			break;
		}
		w = roce_nic_ring_prod(ring);
		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		w->wr.wr_id = wr->wr_id;
		w->wr.num_sge = wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++)
			w->sge[i] = (struct roce_sge){ .addr = wr->sg_list[i].addr,
						       .length = wr->sg_list[i].length,
						       .lkey = wr->sg_list[i].lkey };
		roce_nic_ring_push(ring);
	}
	roce_nic_doorbell(nic);
	if (rc != 0)
		*bad = wr;
	return rc;
}

int ibvr_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct ibvr_qp *q = to_iqp(qp);
	int rc;

	if (!ibvr_usable()) {
		*bad = wr;
		return EIO;
	}
	if (q->srq != NULL || qp->state == IBV_QPS_RESET) {
		*bad = wr;
		return EINVAL;
	}
	ibvr_lock(&q->rq_lock);
	rc = post_rq(to_ictx(qp->context)->nic, &q->rq.ring, q->cap.max_recv_sge, wr, bad);
	ibvr_unlock(&q->rq_lock);
	return rc;
}

int ibvr_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct ibvr_srq *s = to_isrq(srq);
	int rc;

	if (!ibvr_usable()) {
		*bad = wr;
		return EIO;
	}
	ibvr_lock(&s->lock);
	rc = post_rq(to_ictx(srq->context)->nic, &s->rq.ring, s->max_sge, wr, bad);
	ibvr_unlock(&s->lock);
	return rc;
}

int ibvr_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	struct ibvr_cq *c = to_icq(cq);
	int n = 0;

	if (!ibvr_usable())
		return -1;
	ibvr_lock(&c->lock);
	while (n < num) {
		const struct roce_wc *w = roce_nic_ring_cons(&c->ncq.ring);
		struct ibv_wc *o = &wc[n];

		if (w == NULL)
			break;
		o->wr_id = w->wr_id;
		o->status = (enum ibv_wc_status)w->status;
		o->opcode = (enum ibv_wc_opcode)w->opcode;
		o->vendor_err = w->vendor_err;
		o->byte_len = w->byte_len;
		if (w->wc_flags & ROCE_WC_WITH_INV)
			o->invalidated_rkey = w->imm_data;
		else
			o->imm_data = htonl(w->imm_data);	/* verbs: in network order */
		o->qp_num = w->qp_num;
		o->src_qp = w->src_qp;
		o->wc_flags = w->wc_flags;
		o->pkey_index = 0;
		o->slid = 0;
		o->sl = w->sl;
		o->dlid_path_bits = 0;
		roce_nic_ring_pop(&c->ncq.ring);
		n++;
	}
	/*
	 * A program that polls an empty CQ in a loop holds a core the NIC's thread may need to
	 * make the completion it waits for: after a few empty polls, sleep until the NIC moves
	 * one (into any CQ: the program may poll several) or a short while passes.
	 */
	if (n == 0 && ++c->empty_polls >= IBVR_POLLS_BEFORE_WAIT) {
		c->empty_polls = 0;
		ibvr_unlock(&c->lock);
		roce_nic_cq_wait(&c->ncq, IBVR_CQ_WAIT_NS);
	} else {
		if (n != 0)
			c->empty_polls = 0;
		ibvr_unlock(&c->lock);
	}
	if (n == 0 && atomic_load_explicit(&c->ncq.error, memory_order_acquire) != 0)
		return -1;	/* the CQ overflowed: completions were lost */
	return n;
}

int ibvr_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)solicited_only;	/* every completion raises the event, as rxe's */
	if (cq->channel == NULL)
		return EINVAL;
	roce_nic_cq_arm(&to_icq(cq)->ncq);
	return 0;
}

/* On the NIC's thread: an armed CQ got a completion; its channel's fd becomes readable. */
void ibvr_cq_event(void *arg)
{
	struct ibvr_cq *c = arg;
	struct ibvr_channel *ch = c->channel;
	uint64_t one = 1;

	pthread_mutex_lock(&ch->lock);
	if (ch->ev_tail - ch->ev_head == IBVR_EVENTS) {
		pthread_mutex_unlock(&ch->lock);
		ibvr_say("completion channel fd %d: %d events unread, later ones dropped",
			 ch->ibv.fd, IBVR_EVENTS);
		return;
	}
	ch->ev[ch->ev_tail++ % IBVR_EVENTS] = c;
	pthread_mutex_unlock(&ch->lock);
	if (write(ch->ibv.fd, &one, sizeof(one)) != sizeof(one))
		ibvr_say("cannot signal completion channel fd %d: %s", ch->ibv.fd, strerror(errno));
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct ibvr_channel *ch = to_ichan(channel);
	struct ibvr_cq *c;
	uint64_t n;

	if (!ibvr_usable())
		return -1;
	/* EFD_SEMAPHORE: one read, one event; blocks unless the program made the fd non-blocking */
	if (read(channel->fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	pthread_mutex_lock(&ch->lock);
	c = ch->ev[ch->ev_head++ % IBVR_EVENTS];
	pthread_mutex_unlock(&ch->lock);
	*cq = &c->ibv;
	*cq_context = c->ibv.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
