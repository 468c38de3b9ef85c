/* lib/transport internals: the requester, responder and completer and what they share. */
#ifndef TR_PRIVATE_H
#define TR_PRIVATE_H

#include <stdio.h>

#include "roce_transport.h"
#include "verbs_private.h"

#define TR_MAX_PKT_PER_ACK 64		/* ask for an ACK at least this often (as rxe) */
#define TR_MAX_INFLIGHT_PSN 8192	/* requester window in packets */

/* The NIC behind a device: its port and transmit scheduling. */
struct tr_nic {
	struct roce_device *dev;
	struct roce_link *link;		/* where frames go */
	int dir;			/* this device's sending direction on it */
	struct roce_qp *tx_head;	/* QPs with something to send, round robin */
	struct roce_qp *tx_tail;
	FILE *trace;			/* event trace, or NULL */
	uint8_t scratch[16384];		/* gather buffer for payloads spanning SGEs */
};

static inline struct tr_nic *tr_nic(const struct roce_device *dev)
{
	return dev->nic;
}

/* tr_nic.c */
void tr_qp_kick(struct roce_qp *qp);
void tr_trace(struct roce_qp *qp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tr_pkt_init(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t opcode,
		 const struct roce_ah_attr *av, uint32_t dqpn);
struct rte_mbuf *tr_pkt_build(struct roce_qp *qp, struct roce_pkt *pkt,
			      const struct roce_sge *sge, uint32_t nsge, uint32_t offset);

/* tr_req.c */
struct rte_mbuf *tr_req_next(struct roce_qp *qp);
void tr_req_rewind(struct roce_qp *qp, uint32_t psn);

/* tr_resp.c */
void tr_resp_rx(struct roce_qp *qp, const struct roce_pkt *pkt);
struct rte_mbuf *tr_resp_next(struct roce_qp *qp);

/* tr_comp.c */
void tr_comp_rx(struct roce_qp *qp, const struct roce_pkt *pkt);
void tr_comp_done(struct roce_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status);
void tr_comp_arm_ack_timer(struct roce_qp *qp);
void tr_qp_error(struct roce_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status);
void tr_qp_flush(struct roce_qp *qp);
void tr_recv_complete(struct roce_qp *qp, struct verbs_recv_wqe *wqe, enum roce_wc_status status,
		      enum roce_wc_opcode opcode, uint32_t byte_len, unsigned int flags,
		      uint32_t imm, uint32_t src_qp);
void tr_timers_init(struct roce_qp *qp);
void tr_timers_cancel(struct roce_qp *qp);

/* Message position of a packet in a message of @p npkts, numbered from 0. */
static inline bool tr_first(uint32_t i)
{
	return i == 0;
}

static inline bool tr_last(uint32_t i, uint32_t npkts)
{
	return i + 1 >= npkts;
}

static inline uint32_t tr_npkts(uint32_t len, uint32_t mtu)
{
	return len == 0 ? 1 : (len + mtu - 1) / mtu;
}

#endif /* TR_PRIVATE_H */
