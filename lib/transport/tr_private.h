/* lib/transport internals: the requester, responder and completer and what they share. */
#ifndef TR_PRIVATE_H
#define TR_PRIVATE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <rte_common.h>

#include "roce_transport.h"
#include "verbs_private.h"

/* A per-packet helper with few callers: inlined even where gcc would not (no call, no frame). */
#define TR_HOT static inline __attribute__((always_inline))

#define TR_MAX_PKT_PER_ACK 64		/* ask for an ACK at least this often (as rxe) */
#define TR_ACK_COALESCE 16		/* sub-PMTU messages one AckReq may cover at most */
#define TR_MAX_INFLIGHT_PSN 8192	/* requester window in packets */

#define TR_CNP_QUEUE 64		/* CNPs waiting for the wire (a power of two) */

/* A READ or atomic the responder owes or has answered (IBA 9.7.5.1.3: responder resources). */
struct tr_resource {
	uint8_t opcode;			/* RC_RDMA_READ_REQUEST, RC_COMPARE_SWAP or RC_FETCH_ADD */
	bool active;			/* responses still to send */
	bool replay;			/* ... again, for a duplicate request */
	uint32_t first_psn, last_psn;	/* PSNs of the answer */
	uint32_t cur_psn;		/* next response PSN to send */
	uint32_t start_psn;		/* PSN of the request being answered (original or retry) */
	uint64_t va;			/* READ: next byte to send */
	uint32_t resid;			/* READ: bytes left */
	struct roce_mr *mr;		/* READ: the region */
	uint64_t va0;			/* READ: first byte, for replays */
	uint32_t len0;			/* READ: length, for replays */
	uint64_t orig;			/* atomic: value before the operation */
	uint32_t msn;			/* MSN to report */
};

/* Requester: walks the SQ, segments, numbers packets (tr_req.c). */
struct tr_req {
	uint32_t wqe;			/* next WQE to send from (free-running index) */
	uint32_t psn;			/* next PSN */
	uint32_t offset;		/* bytes of that WQE already sent */
	uint32_t noack_pkts;		/* packets since one asked for an ACK */
	uint32_t noack_bytes;		/* payload bytes since one asked for an ACK */
	uint32_t rd_atomic;		/* READ/atomic WQEs outstanding */
	uint32_t next_new;		/* first WQE never started (PSNs not yet assigned) */
	uint32_t psn_hw;		/* first PSN never sent: below it, a send is a retransmit */
};

/* Completer: retires WQEs on ACKs and responses, runs the retry timers (tr_comp.c). */
struct tr_comp {
	uint32_t psn;			/* next response PSN expected */
	uint8_t retry_cnt;		/* retries left on timeout / sequence NAK */
	uint8_t rnr_retry;		/* retries left on RNR NAK */
	uint32_t read_offset;		/* bytes of the READ at sq_head already placed */
	struct roce_timer ack_timer;	/* local ACK timeout */
	struct roce_timer rnr_timer;	/* RNR wait */
	bool rnr_wait;			/* sending paused until rnr_timer fires */
	bool retry_pending;		/* went back already: later gaps are echoes of the same loss */
};

/* What the responder still has to send. */
enum tr_resp_ack {
	RESP_ACK_NONE,
	RESP_ACK_ACK,			/* an ACK for psn ack_psn */
	RESP_ACK_NAK,			/* a NAK with nak_syndrome for psn ack_psn */
};

/* Responder: checks and executes requests, answers them (tr_resp.c). */
struct tr_resp {
	uint32_t epsn;			/* next PSN expected */
	uint32_t msn;			/* messages completed */
	bool seq_nak_sent;		/* one sequence NAK per gap (IBA 9.7.5.1.2) */
	bool rnr_nak_sent;		/* RNR NAK sent, waiting for the retry */
	enum tr_resp_ack ack;		/* pending ACK/NAK */
	uint32_t ack_psn;		/* PSN it acknowledges */
	uint8_t nak_syndrome;		/* AETH syndrome of a pending NAK */
	/* message in progress */
	bool in_msg;			/* a multi-packet SEND/WRITE is under way */
	uint8_t msg_opcode;		/* its first opcode */
	struct verbs_recv_wqe *wqe;	/* SEND: the receive WQE being filled (copy) */
	uint32_t wqe_offset;		/* bytes placed into it */
	bool wqe_err;			/* message too long etc.: complete in error at the end */
	bool wqe_held;			/* UC: wqe is a receive kept from a broken SEND, for the next */
	struct roce_mr *wr_mr;		/* WRITE: region */
	uint64_t wr_va;			/* WRITE: next byte */
	uint32_t wr_resid;		/* WRITE: bytes left */
	bool wr_discard;		/* WRITE: the region drops bytes (ROCE_ACCESS_DISCARD) */
	bool uc_drop;			/* UC: dropping the rest of a broken message */
	/* READ/atomic resources, a ring of max_dest_rd_atomic */
	struct tr_resource *res;
	uint32_t res_size;		/* entries */
	uint32_t res_tail;		/* next slot to use (free-running) */
	uint32_t res_active;		/* at least the number of active entries (0: skip the scan) */
};

struct tr_cc_conf;

/* A QP's congestion state: notification point pacing, reaction point rate (tr_cc.c, tr_nic.c). */
struct tr_qp_cc {
	const struct tr_cc_conf *conf;	/* algorithm and parameters bound at connect; NULL: none */
	uint64_t rate;			/* rate limit of data packets, b/s; 0: none (line rate) */
	roce_time_t tx_allowed_at;	/* the next data packet may not leave before this */
	roce_time_t last_tx;		/* when the last data packet left */
	uint32_t last_bits;		/* its size on the wire, bits */
	roce_time_t last_cnp;		/* NP: when the last CNP for this QP was queued */
	bool cnp_sent;			/* NP: last_cnp is valid */
	struct roce_timer timer;	/* the algorithm's one timer */
	uint64_t priv[20];		/* the algorithm's per-QP state */
};

/*
 * The emulated NIC's QP: the verbs' QP and the transport's state, as rxe's struct rxe_qp embeds
 * the core's struct ib_qp. The core allocates it (verbs_ops.qp_size) and hands out &vqp; the
 * transport gets back here with to_tqp(), which costs nothing.
 */
struct tr_qp {
	struct roce_qp vqp;		/* the verbs' part: queues, attributes, state */
	struct tr_req req;
	struct tr_comp comp;
	struct tr_resp resp;
	struct roce_qp_stats st;	/* per-QP counters */

	/* transmit scheduling (tr_nic.c) */
	bool tx_listed;			/* on the NIC's list of QPs with work */
	uint16_t sport;			/* UDP source port */
	struct tr_qp *tx_next;		/* that list */
	struct tr_qp_cc cc;		/* rate limiter, congestion control, CNP pacing */
	struct roce_wire_tmpl tx_tmpl[2]; /* headers of the last two sets sent (tr_pkt_build): with
					   * ECN on, data (ECT(0)) and ACKs (not-ECT) differ */
	uint8_t tx_tmpl_next;		/* which of tx_tmpl a third set replaces */
	uint32_t hdr_gen;		/* bumped when what the headers are built from changes (the
					 * address vector, the NIC's ECN policy); from 1 */
	uint32_t tx_tmpl_gen[2];	/* hdr_gen tx_tmpl[i] was built at for the QP's own
					 * connection (tr_pkt_init_conn), 0: not */
};
/* the core frees what it allocated through &vqp (the kernel's INIT_RDMA_OBJ_SIZE rule) */
ROCE_STATIC_ASSERT(offsetof(struct tr_qp, vqp) == 0);

static inline struct tr_qp *to_tqp(struct roce_qp *qp)
{
	return container_of(qp, struct tr_qp, vqp);
}

static inline const struct tr_qp *to_tqp_const(const struct roce_qp *qp)
{
	return container_of(qp, const struct tr_qp, vqp);
}

/* The QP numbered @p qpn, or NULL: verbs_qp_lookup(), the same pointer (vqp at offset 0). */
static inline struct tr_qp *tr_qp_lookup(struct roce_device *dev, uint32_t qpn)
{
	struct roce_qp *qp = verbs_qp_lookup(dev, qpn);

	return qp != NULL ? to_tqp(qp) : NULL;
}

/* What @p qp's frame headers are built from changed: its header templates are stale. */
static inline void tr_qp_hdr_changed(struct tr_qp *qp)
{
	if (++qp->hdr_gen == 0)
		qp->hdr_gen = 1;	/* 0 marks a template never built */
}

#define TR_CNT(dev, c) (tr_nic(dev)->cnt[ROCE_CNT_##c]++)

/* The NIC's counters, named like an RNIC's hw_counters (roce_counter_name()). */
enum roce_dev_counter {
	ROCE_CNT_RX_FRAMES,		/* frames handed to the device */
	ROCE_CNT_TX_FRAMES,		/* frames the device put on its port */
	ROCE_CNT_RX_ICRC_ERR,		/* dropped: ICRC mismatch */
	ROCE_CNT_RX_MALFORMED,		/* dropped: not a parseable RoCE frame */
	ROCE_CNT_RX_NO_QP,		/* dropped: no such destination QP */
	ROCE_CNT_RX_BAD_STATE,		/* dropped: QP not in a state to receive */
	ROCE_CNT_RX_QKEY_ERR,		/* dropped: UD Q_Key mismatch */
	ROCE_CNT_RX_OPCODE_ERR,		/* dropped: opcode not valid for the QP type */
	ROCE_CNT_DUPLICATE,		/* duplicate requests received */
	ROCE_CNT_OUT_OF_SEQUENCE,	/* requests received ahead of the expected PSN */
	ROCE_CNT_SEQ_NAK_SENT,		/* NAK PSN sequence error sent */
	ROCE_CNT_SEQ_NAK_RCVD,		/* NAK PSN sequence error received */
	ROCE_CNT_RNR_NAK_SENT,		/* RNR NAK sent */
	ROCE_CNT_RNR_NAK_RCVD,		/* RNR NAK received */
	ROCE_CNT_ACCESS_NAK_SENT,	/* NAK remote access error sent */
	ROCE_CNT_INV_REQ_NAK_SENT,	/* NAK invalid request sent */
	ROCE_CNT_OP_ERR_NAK_SENT,	/* NAK remote operational error sent */
	ROCE_CNT_ERR_NAK_RCVD,		/* fatal NAKs received */
	ROCE_CNT_ACKS_SENT,		/* ACK / atomic ACK packets sent */
	ROCE_CNT_ACKS_RCVD,		/* ACK packets received */
	ROCE_CNT_IMPLIED_NAK,		/* ACK beyond an unanswered READ/atomic: resend */
	ROCE_CNT_GHOST_ACK,		/* ACK/response for nothing outstanding, dropped */
	ROCE_CNT_RETRANSMITS,		/* request packets sent again */
	ROCE_CNT_TIMEOUTS,		/* local ACK timeouts */
	ROCE_CNT_RETRY_EXCEEDED,	/* QPs failed on retry_cnt */
	ROCE_CNT_RNR_RETRY_EXCEEDED,	/* QPs failed on rnr_retry */
	ROCE_CNT_READ_RETRIES,		/* READ requests reissued (partial READ retry) */
	ROCE_CNT_DUP_READ,		/* duplicate READ requests replayed */
	ROCE_CNT_DUP_ATOMIC,		/* duplicate atomics answered from the cache */
	ROCE_CNT_DUP_DROPPED,		/* duplicate READs/atomics unlike the request answered */
	ROCE_CNT_CQ_OVERFLOW,		/* completions lost to a full CQ */
	ROCE_CNT_CNP_SENT,		/* congestion notifications sent */
	ROCE_CNT_CNP_RCVD,		/* congestion notifications received */
	ROCE_CNT_ECN_CE_RCVD,		/* CE-marked frames received */
	ROCE_CNT_TX_NO_MBUF,		/* packets not sent for want of an mbuf */
	/* congestion: PFC honoured and CNPs (tr_nic.c, tr_cc.c) */
	ROCE_CNT_CNP_IGNORED,		/* CNPs for no QP or a QP without congestion control */
	ROCE_CNT_CNP_DROPPED,		/* CNPs not sent: the NIC's CNP queue was full */
	ROCE_CNT_RX_PRIO0_PAUSE,		/* PFC frames received with priority 0 in the class-enable vector */
	ROCE_CNT_RX_PRIO1_PAUSE,		/* PFC frames received with priority 1 in the class-enable vector */
	ROCE_CNT_RX_PRIO2_PAUSE,		/* PFC frames received with priority 2 in the class-enable vector */
	ROCE_CNT_RX_PRIO3_PAUSE,		/* PFC frames received with priority 3 in the class-enable vector */
	ROCE_CNT_RX_PRIO4_PAUSE,		/* PFC frames received with priority 4 in the class-enable vector */
	ROCE_CNT_RX_PRIO5_PAUSE,		/* PFC frames received with priority 5 in the class-enable vector */
	ROCE_CNT_RX_PRIO6_PAUSE,		/* PFC frames received with priority 6 in the class-enable vector */
	ROCE_CNT_RX_PRIO7_PAUSE,		/* PFC frames received with priority 7 in the class-enable vector */
	ROCE_CNT_RX_PRIO0_PAUSE_NS,	/* time transmission at priority 0 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO1_PAUSE_NS,	/* time transmission at priority 1 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO2_PAUSE_NS,	/* time transmission at priority 2 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO3_PAUSE_NS,	/* time transmission at priority 3 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO4_PAUSE_NS,	/* time transmission at priority 4 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO5_PAUSE_NS,	/* time transmission at priority 5 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO6_PAUSE_NS,	/* time transmission at priority 6 was paused by PFC, ns */
	ROCE_CNT_RX_PRIO7_PAUSE_NS,	/* time transmission at priority 7 was paused by PFC, ns */
	/* the host interface (conf.host_bps; tr_nic.c) */
	ROCE_CNT_RX_OUT_OF_BUFFER,	/* dropped: the receive buffer was full of frames the host
					 * interface had not yet written to memory */
	ROCE_CNT_TX_PFC,		/* PFC frames the device sent (its receive buffer filling) */
	ROCE_CNT_NUM,
};

/** Counter name ("rx_icrc_errors", "rnr_nak_retry_err", ...). */
const char *roce_counter_name(enum roce_dev_counter c);

/*
 * The NIC behind a device: its port and transmit scheduling. It embeds the verbs' device, as
 * a provider's device embeds the core's (rdma-core's verbs_device); tr_nic() gets back here.
 */
struct tr_nic {
	/* what every pull reads, in one line */
	struct roce_link *link;		/* where frames go */
	int dir;			/* this device's sending direction on it */
	bool host_if;			/* dev->conf.host_bps != 0: the host interface is modelled */
	uint8_t paused;			/* bit i: priority i may be paused (paused_until > now) */
	bool pfc_due;			/* a PFC frame (XOFF if @pfc_xoff, else XON) waits to go */
	struct tr_qp *tx_head;	/* QPs with something to send, round robin */
	struct tr_qp *tx_tail;
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

	uint64_t cnt[ROCE_CNT_NUM];	/* counters (roce_device_counter()) */
	struct roce_device vdev;	/* the verbs' part: tables, attributes */
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
	void (*init)(struct tr_qp *qp);	/* connect: line rate, no congestion */
	void (*on_cnp)(struct tr_qp *qp);	/* a CNP arrived for the QP */
	void (*on_tx)(struct tr_qp *qp, uint32_t bytes); /* a data packet left */
	void (*timer)(struct tr_qp *qp);	/* qp->cc.timer fired */
	uint64_t (*rate)(const struct tr_qp *qp);	/* current rate, b/s */
	double (*state)(const struct tr_qp *qp, int i); /* state variable state_names[i] */
};

/* An algorithm with its parameters, as set by roce_device_set_cc(); immutable once made. */
struct tr_cc_conf {
	const struct tr_cc_ops *ops;
	struct tr_cc_conf *older;	/* the device's previous configuration */
	double p[];			/* ops->nparams values */
};

/* The NIC of @p dev: container_of, which costs nothing (every device is a NIC's). */
static inline struct tr_nic *tr_nic(const struct roce_device *dev)
{
	return (struct tr_nic *)((uintptr_t)dev - offsetof(struct tr_nic, vdev));
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
void tr_qp_kick(struct tr_qp *qp);
void tr_trace(struct tr_qp *qp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tr_pkt_init(struct tr_qp *qp, struct roce_pkt *pkt, uint8_t opcode,
		 const struct roce_ah_attr *av, uint32_t dqpn);
const struct roce_wire_tmpl *tr_pkt_init_conn_new(struct tr_qp *qp, struct roce_pkt *pkt,
						  uint8_t opcode, unsigned int i);
void tr_pkt_gather(struct tr_qp *qp, struct roce_pkt *pkt, const struct roce_sge *sge,
		   uint32_t nsge, uint32_t offset);
const struct roce_wire_tmpl *tr_pkt_tmpl_pick(struct tr_qp *qp, const struct roce_pkt *pkt);
void tr_pkt_build_failed(struct tr_qp *qp, struct rte_mbuf *m);
int tr_pkt_build_zc(struct tr_qp *qp, const struct roce_pkt *pkt,
		    const struct roce_wire_tmpl *tmpl, struct rte_mbuf *m);
void tr_nic_hdr_changed(struct roce_device *dev);

/*
 * Build @p pkt into a fresh mbuf, its headers from @p tmpl (from tr_pkt_init_conn()) or, if
 * NULL, from whichever of the QP's last two sets matches. The payload comes from pkt->payload
 * if set, else from @p sge (@p nsge entries) at byte @p offset, gathered if it spans entries;
 * by reference if @p zc (the SGEs lie in an MR with ROCE_ACCESS_ZERO_COPY) and the engine can.
 * Inline: every frame a QP sends is built here; the rare paths are out of line.
 */
TR_HOT struct rte_mbuf *tr_pkt_build(struct tr_qp *qp, struct roce_pkt *pkt,
				     const struct roce_wire_tmpl *tmpl, const struct roce_sge *sge,
				     uint32_t nsge, uint32_t offset, bool zc)
{
	struct rte_mbuf *m = roce_engine_mbuf(qp->vqp.dev->eng);
	int rc;

	if (roce_unlikely(m == NULL)) {
		TR_CNT(qp->vqp.dev, TX_NO_MBUF);
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
tr_pkt_init_conn_at(struct tr_qp *qp, struct roce_pkt *pkt, uint8_t opcode, unsigned int i)
{
	if (roce_unlikely(qp->tx_tmpl_gen[i] != qp->hdr_gen))
		return tr_pkt_init_conn_new(qp, pkt, opcode, i);
	tr_zero(&pkt->opcode,
		offsetof(struct roce_pkt, payload) - offsetof(struct roce_pkt, opcode));
	pkt->opcode = opcode;
	pkt->pkey = 0xffff;
	pkt->dqpn = qp->vqp.attr.dest_qp_num;
	pkt->payload = NULL;
	pkt->payload_len = 0;
	return &qp->tx_tmpl[i];
}

/* tr_pkt_init_conn_at() for a packet of any opcode: ACKs take the second template. */
static inline const struct roce_wire_tmpl *tr_pkt_init_conn(struct tr_qp *qp,
							     struct roce_pkt *pkt, uint8_t opcode)
{
	unsigned int i = (roce_opcode[opcode].mask & ROCE_F_ACK) ? 1 : 0;

	return tr_pkt_init_conn_at(qp, pkt, opcode, i);
}

/* tr_pkt_init_conn() for a request (never an ACK: the data template, without the lookup). */
static inline const struct roce_wire_tmpl *
tr_pkt_init_conn_req(struct tr_qp *qp, struct roce_pkt *pkt, uint8_t opcode)
{
	return tr_pkt_init_conn_at(qp, pkt, opcode, 0);
}

/* Priority of what @p qp sends, from its address vector's DSCP. */
static inline uint8_t tr_qp_prio(const struct tr_nic *nic, const struct tr_qp *qp)
{
	return nic->qos.dscp_prio[qp->vqp.attr.ah_attr.traffic_class >> 2];
}

/* ECN is on: data is marked ECT(0) and CE marks are answered with CNPs. */
static inline bool tr_nic_ecn(const struct tr_nic *nic)
{
	return nic->qos.ecn || (nic->cc != NULL && nic->cc->ops->needs_ecn);
}

/* tr_cc.c */
extern const struct tr_cc_ops tr_dcqcn_ops;
void tr_cc_connect(struct tr_qp *qp);
void tr_cc_stop(struct tr_qp *qp);
void tr_cc_free_all(struct tr_nic *nic);
void tr_cc_set_rate(struct tr_qp *qp, uint64_t bps);
void tr_cc_arm(struct tr_qp *qp, roce_time_t when);
uint64_t tr_cc_line_rate(const struct tr_qp *qp);

/* tr_req.c */
struct rte_mbuf *tr_req_next(struct tr_qp *qp);
bool tr_req_ready(const struct tr_qp *qp);
void tr_req_rewind(struct tr_qp *qp, uint32_t psn);
void tr_req_drain(struct tr_qp *qp);

/* tr_resp.c */
void tr_resp_rx(struct tr_qp *qp, const struct roce_pkt *pkt);
struct rte_mbuf *tr_resp_next(struct tr_qp *qp);

/* tr_comp.c */
void tr_comp_rx(struct tr_qp *qp, const struct roce_pkt *pkt);
void tr_comp_done(struct tr_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status);
void tr_comp_arm_ack_timer(struct tr_qp *qp);
void tr_qp_error(struct tr_qp *qp, struct verbs_send_wqe *wqe, enum roce_wc_status status);
void tr_qp_flush(struct tr_qp *qp);
void tr_cq_lost(struct tr_qp *qp);

/* A receive completion for @p wqe on the QP's receive CQ (inline: one for every SEND). */
TR_HOT void tr_recv_complete(struct tr_qp *qp, struct verbs_recv_wqe *wqe,
			     enum roce_wc_status status, enum roce_wc_opcode opcode,
			     uint32_t byte_len, unsigned int flags, uint32_t imm, uint32_t src_qp)
{
	struct roce_wc *wc = verbs_cq_reserve(qp->vqp.rcq);

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
	wc->qp_num = qp->vqp.qpn;
	wc->src_qp = src_qp;
	wc->wc_flags = status == ROCE_WC_SUCCESS ? flags : 0;
	wc->sl = 0;
	verbs_cq_commit(qp->vqp.rcq);
}
void tr_timers_init(struct tr_qp *qp);
void tr_timers_cancel(struct tr_qp *qp);

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
