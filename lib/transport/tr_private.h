/* lib/transport internals: the requester, responder and completer and what they share. */
#ifndef TR_PRIVATE_H
#define TR_PRIVATE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "roce_transport.h"
#include "verbs_private.h"

/* A per-packet helper with few callers: inlined even where gcc would not (no call, no frame). */
#define TR_HOT static inline __attribute__((always_inline))

#define TR_MAX_PKT_PER_ACK 64		/* ask for an ACK at least this often (as rxe) */
#define TR_ACK_COALESCE 16		/* sub-PMTU messages one AckReq may cover at most */
#define TR_MAX_INFLIGHT_PSN 8192	/* requester window in packets */

#define TR_CNP_QUEUE 64		/* CNPs waiting for the wire (a power of two) */

/* The NIC behind a device: its port and transmit scheduling. */
struct tr_nic {
	/* what every pull reads, in one line */
	struct roce_device *dev;
	struct roce_link *link;		/* where frames go */
	int dir;			/* this device's sending direction on it */
	bool host_if;			/* dev->conf.host_bps != 0: the host interface is modelled */
	uint8_t paused;			/* bit i: priority i may be paused (paused_until > now) */
	bool pfc_due;			/* a PFC frame (XOFF if @pfc_xoff, else XON) waits to go */
	struct roce_qp *tx_head;	/* QPs with something to send, round robin */
	struct roce_qp *tx_tail;
	uint32_t cnp_head, cnp_tail;	/* @cnp, free-running: consumer, producer */
	FILE *trace;			/* event trace, or NULL */

	/* congestion: priorities, PFC, CNPs, congestion control */
	struct roce_nic_qos qos;	/* classification and ECN policy */
	const struct tr_cc_conf *cc;	/* algorithm for QPs connected from now on; NULL: none */
	struct tr_cc_conf *cc_all;	/* every configuration set, newest first (QPs point into it) */
	roce_time_t paused_until[ROCE_NIC_NPRIO]; /* PFC: no transmission at priority i before this */
	roce_time_t pause_ps[ROCE_NIC_NPRIO]; /* paused time granted so far, ps (counter source) */
	struct roce_timer wake;		/* kicks the link when a pause or a rate limit ends */
	struct rte_mbuf *cnp[TR_CNP_QUEUE]; /* CNPs waiting, sent before any other frame */

	/* the host interface (dev->conf.host_bps; 0: none of this is used) */
	roce_time_t dma_rd_free;	/* its read side (frames sent) is busy until */
	roce_time_t dma_wr_free;	/* its write side (frames received) is busy until */
	struct tr_dma *dma;		/* received frames waiting for their write, oldest first */
	uint32_t dma_head, dma_len, dma_cap; /* ring indices; dma_cap a power of two */
	struct roce_timer dma_done;	/* the oldest one's write ends */
	bool pfc_xoff;			/* we are pausing the link's far end (dev->conf.host_pfc) */
	roce_time_t pfc_refresh_at;	/* send XOFF again from then on while still paused */
	uint64_t pfc_rate;		/* link rate the two thresholds were worked out for */
	uint64_t pfc_xoff_at, pfc_xon_at; /* bytes not yet written: XOFF above, XON below */

	uint8_t scratch[16384];		/* gather buffer for payloads spanning SGEs */
};
ROCE_STATIC_ASSERT(offsetof(struct tr_nic, trace) <= 64);

/* A received frame waiting for the host interface to write it to memory. */
struct tr_dma {
	struct rte_mbuf *m;
	roce_time_t done;		/* its write ends */
};

/* One tunable of a congestion control algorithm; values are doubles in the unit shown. */
struct tr_cc_param {
	const char *name;		/* mlx5 sysfs / mlxconfig name where one exists */
	double def;			/* default */
	double min, max;		/* accepted range */
	const char *unit;		/* "us", "bytes", "Mb/s", "1/1024", ... */
	const char *help;		/* meaning and source of the default */
};

/* A congestion control algorithm: a table of operations (tr_cc.c holds the list). */
struct tr_cc_ops {
	const char *name;		/* "dcqcn" */
	bool needs_ecn;			/* switches the device's ECN on (ECT marking, CNPs) */
	const struct tr_cc_param *params; /* nparams entries; index = position in conf->p */
	int nparams;
	const char *const *state_names;	/* NULL-terminated names for roce_qp_cc_state() */
	void (*init)(struct roce_qp *qp);	/* connect: line rate, no congestion */
	void (*on_cnp)(struct roce_qp *qp);	/* a CNP arrived for the QP */
	void (*on_tx)(struct roce_qp *qp, uint32_t bytes); /* a data packet left */
	void (*timer)(struct roce_qp *qp);	/* qp->cc.timer fired */
	uint64_t (*rate)(const struct roce_qp *qp);	/* current rate, b/s */
	double (*state)(const struct roce_qp *qp, int i); /* state variable state_names[i] */
};

/* An algorithm with its parameters, as set by roce_device_set_cc(); immutable once made. */
struct tr_cc_conf {
	const struct tr_cc_ops *ops;
	struct tr_cc_conf *older;	/* the device's previous configuration */
	double p[];			/* ops->nparams values */
};

static inline struct tr_nic *tr_nic(const struct roce_device *dev)
{
	return dev->nic;
}

/*
 * memset(p, 0, len) for a @p len of at least 16 known at compile time: 16-byte stores, the
 * last one overlapping. gcc makes a memset of a hundred-odd bytes a rep stos, which takes some
 * 30 cycles to start on the cores this runs on; a packet's headers are cleared for every frame.
 */
static inline void tr_zero(void *p, size_t len)
{
#ifdef __SSE2__
	__m128i z = _mm_setzero_si128();
	uint8_t *b = p;
	size_t i;

#pragma GCC unroll 16
	for (i = 0; i + 16 <= len; i += 16) {
		_mm_storeu_si128((__m128i *)(void *)(b + i), z);
		__asm__("" : "+x"(z));	/* z looks new: gcc cannot make this a memset */
	}
	if (i < len)
		_mm_storeu_si128((__m128i *)(void *)(b + len - 16), z);
#else
	memset(p, 0, len);
#endif
}

/* tr_nic.c */
void tr_qp_kick(struct roce_qp *qp);
void tr_trace(struct roce_qp *qp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tr_pkt_init(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t opcode,
		 const struct roce_ah_attr *av, uint32_t dqpn);
const struct roce_wire_tmpl *tr_pkt_init_conn_new(struct roce_qp *qp, struct roce_pkt *pkt,
						  uint8_t opcode, unsigned int i);
void tr_pkt_gather(struct roce_qp *qp, struct roce_pkt *pkt, const struct roce_sge *sge,
		   uint32_t nsge, uint32_t offset);
const struct roce_wire_tmpl *tr_pkt_tmpl_pick(struct roce_qp *qp, const struct roce_pkt *pkt);
void tr_pkt_build_failed(struct roce_qp *qp, struct rte_mbuf *m);
int tr_pkt_build_zc(struct roce_qp *qp, const struct roce_pkt *pkt,
		    const struct roce_wire_tmpl *tmpl, struct rte_mbuf *m);
void tr_nic_hdr_changed(struct roce_device *dev);

/*
 * Build @p pkt into a fresh mbuf, its headers from @p tmpl (from tr_pkt_init_conn()) or, if
 * NULL, from whichever of the QP's last two sets matches. The payload comes from pkt->payload
 * if set, else from @p sge (@p nsge entries) at byte @p offset, gathered if it spans entries;
 * by reference if @p zc (the SGEs lie in an MR with ROCE_ACCESS_ZERO_COPY) and the engine can.
 * Inline: every frame a QP sends is built here; the rare paths are out of line.
 */
TR_HOT struct rte_mbuf *tr_pkt_build(struct roce_qp *qp, struct roce_pkt *pkt,
				     const struct roce_wire_tmpl *tmpl, const struct roce_sge *sge,
				     uint32_t nsge, uint32_t offset, bool zc)
{
	struct rte_mbuf *m = roce_engine_mbuf(qp->dev->eng);
	int rc;

	if (roce_unlikely(m == NULL)) {
		VERBS_CNT(qp->dev, TX_NO_MBUF);
		return NULL;
	}
	if (pkt->payload == NULL && pkt->payload_len != 0) {
		uint32_t i = 0, off = offset;

		while (i < nsge && off >= sge[i].length)
			off -= sge[i++].length;
		if (i < nsge && sge[i].length - off >= pkt->payload_len) {
			pkt->payload = (const uint8_t *)(uintptr_t)sge[i].addr + off;
		} else {
			tr_pkt_gather(qp, pkt, sge, nsge, offset);
			zc = false;	/* the bytes are in the NIC's scratch buffer */
		}
	}
	if (tmpl == NULL)
		tmpl = tr_pkt_tmpl_pick(qp, pkt);
	/*
	 * A template is refused only for headers roce_wire_build() refuses too (an address
	 * vector with an IP version other than 4 or 6): tr_pkt_init_conn()'s packet, which may
	 * lack them, then fails here as it would there.
	 */
	if (zc && pkt->payload_len >= ROCE_ZC_MIN && tmpl->valid)
		rc = tr_pkt_build_zc(qp, pkt, tmpl, m);
	else
		rc = tmpl->valid ? roce_wire_tmpl_build_mbuf_partial(tmpl, pkt, m) : -EINVAL;
	if (roce_unlikely(rc < 0)) {
		tr_pkt_build_failed(qp, m);
		return NULL;
	}
	qp->st.tx_pkts++;
	qp->st.tx_bytes += pkt->payload_len;
	return m;
}

/*
 * A packet @p qp sends on its own connection (RC, UC: to its address vector and dest_qp_num):
 * what tr_pkt_init() gives, but the Ethernet, IP and UDP fields are left out when the QP's
 * template for them is current, so only the BTH and extended headers are cleared. Data and
 * ACKs each have their template (with ECN on they differ in the ECN bits); a change of the
 * address vector or of the NIC's ECN policy makes both stale (hdr_gen). Inline: it runs for
 * every frame.
 * @param i  the template: 1 for an ACK (ROCE_F_ACK in its opcode's mask), else 0
 * @return the template to give tr_pkt_build()
 */
static inline const struct roce_wire_tmpl *
tr_pkt_init_conn_at(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t opcode, unsigned int i)
{
	if (roce_unlikely(qp->tx_tmpl_gen[i] != qp->hdr_gen))
		return tr_pkt_init_conn_new(qp, pkt, opcode, i);
	tr_zero(&pkt->opcode,
		offsetof(struct roce_pkt, payload) - offsetof(struct roce_pkt, opcode));
	pkt->opcode = opcode;
	pkt->pkey = 0xffff;
	pkt->dqpn = qp->attr.dest_qp_num;
	pkt->payload = NULL;
	pkt->payload_len = 0;
	return &qp->tx_tmpl[i];
}

/* tr_pkt_init_conn_at() for a packet of any opcode: ACKs take the second template. */
static inline const struct roce_wire_tmpl *tr_pkt_init_conn(struct roce_qp *qp,
							     struct roce_pkt *pkt, uint8_t opcode)
{
	unsigned int i = (roce_opcode[opcode].mask & ROCE_F_ACK) ? 1 : 0;

	return tr_pkt_init_conn_at(qp, pkt, opcode, i);
}

/* tr_pkt_init_conn() for a request (never an ACK: the data template, without the lookup). */
static inline const struct roce_wire_tmpl *
tr_pkt_init_conn_req(struct roce_qp *qp, struct roce_pkt *pkt, uint8_t opcode)
{
	return tr_pkt_init_conn_at(qp, pkt, opcode, 0);
}

/* Priority of what @p qp sends, from its address vector's DSCP. */
static inline uint8_t tr_qp_prio(const struct tr_nic *nic, const struct roce_qp *qp)
{
	return nic->qos.dscp_prio[qp->attr.ah_attr.traffic_class >> 2];
}

/* ECN is on: data is marked ECT(0) and CE marks are answered with CNPs. */
static inline bool tr_nic_ecn(const struct tr_nic *nic)
{
	return nic->qos.ecn || (nic->cc != NULL && nic->cc->ops->needs_ecn);
}

/* tr_cc.c */
extern const struct tr_cc_ops tr_dcqcn_ops;
void tr_cc_connect(struct roce_qp *qp);
void tr_cc_stop(struct roce_qp *qp);
void tr_cc_free_all(struct tr_nic *nic);
void tr_cc_set_rate(struct roce_qp *qp, uint64_t bps);
void tr_cc_arm(struct roce_qp *qp, roce_time_t when);
uint64_t tr_cc_line_rate(const struct roce_qp *qp);

/* tr_req.c */
struct rte_mbuf *tr_req_next(struct roce_qp *qp);
bool tr_req_ready(const struct roce_qp *qp);
void tr_req_rewind(struct roce_qp *qp, uint32_t psn);
void tr_req_drain(struct roce_qp *qp);

/* tr_resp.c */
void tr_resp_rx(struct roce_qp *qp, const struct roce_pkt *pkt);
struct rte_mbuf *tr_resp_next(struct roce_qp *qp);

/* tr_comp.c */
void tr_comp_rx(struct roce_qp *qp, const struct roce_pkt *pkt);
void tr_comp_done(struct roce_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status);
void tr_comp_arm_ack_timer(struct roce_qp *qp);
void tr_qp_error(struct roce_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status);
void tr_qp_flush(struct roce_qp *qp);
void tr_cq_lost(struct roce_qp *qp);

/* A receive completion for @p wqe on the QP's receive CQ (inline: one for every SEND). */
TR_HOT void tr_recv_complete(struct roce_qp *qp, struct verbs_recv_wqe *wqe,
			     enum roce_wc_status status, enum roce_wc_opcode opcode,
			     uint32_t byte_len, unsigned int flags, uint32_t imm, uint32_t src_qp)
{
	struct roce_wc *wc = verbs_cq_reserve(qp->rcq);

	if (wc == NULL) {
		tr_cq_lost(qp);
		return;
	}
	/* field by field: gcc clears a compound literal here with a slow-starting rep stos */
	wc->wr_id = wqe->wr_id;
	wc->status = status;
	wc->opcode = opcode;
	wc->vendor_err = 0;
	wc->byte_len = byte_len;
	wc->imm_data = imm;
	wc->qp_num = qp->qpn;
	wc->src_qp = src_qp;
	wc->wc_flags = status == ROCE_WC_SUCCESS ? flags : 0;
	wc->sl = 0;
	verbs_cq_commit(qp->rcq);
}
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

/* Packets of a message of @p len bytes; @p mtu, a path MTU, is a power of two: no divide. */
static inline uint32_t tr_npkts(uint32_t len, uint32_t mtu)
{
	return len == 0 ? 1 : (len + mtu - 1) >> __builtin_ctz(mtu);
}

#endif /* TR_PRIVATE_H */
