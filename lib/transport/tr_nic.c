/* The emulated NIC: device set-up, the transmit arbiter over QPs, receive demux, the trace. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rocelab_config.h"
#include "tr_private.h"

static void hook_state_changed(struct roce_qp *vqp, enum roce_qp_state old);
/*
 * The link asks as a frame starts whether a pull at the frame's @p end would find nothing to
 * send. It would if no CNP waits, no pause holds a priority (settling one is a change) and each
 * QP on the arbiter's list is held by its rate limiter past @p end with no response to give:
 * that pull would only arm the wake timer for the first of them to be free, so it is armed now
 * instead and the link leaves out the frame's end event (a rate-limited sender's frame costs
 * two events rather than three). Whatever gives the NIC a frame to send sooner kicks the link
 * (a post, a response, a CNP, a faster rate); a slower rate leaves the wake early, where it
 * pulls nothing and re-arms for the new time, as a wake armed at the frame's end would have.
 */
#define NIC_QUIET_SCAN 8	/* QPs listed beyond this: not worth a look (the end event stays) */

static bool nic_quiet(void *owner, roce_time_t end)
{
	struct roce_device *dev = owner;
	struct tr_nic *nic = tr_nic(dev);
	roce_time_t wake = ROCE_TIME_NEVER;
	unsigned int n = 0;

	if (nic->cnp_head != nic->cnp_tail || nic->paused != 0 || nic->pfc_due)
		return false;
	for (const struct tr_qp *qp = nic->tx_head; qp != NULL; qp = qp->tx_next) {
		if (++n > NIC_QUIET_SCAN || qp->cc.rate == 0 || qp->cc.tx_allowed_at <= end ||
		    qp->resp.res_active != 0 || qp->resp.ack != RESP_ACK_NONE)
			return false;
		wake = ROCE_MIN(wake, qp->cc.tx_allowed_at);
	}
	if (wake != ROCE_TIME_NEVER && (!roce_timer_armed(&nic->wake) || nic->wake.when > wake))
		roce_timer_arm(dev->eng, &nic->wake, wake);
	return true;
}

static void hook_destroy(struct roce_qp *vqp);
static void nic_wake_fired(struct roce_engine *eng, struct roce_timer *t, void *arg);
static void nic_dma_done(struct roce_engine *eng, struct roce_timer *t, void *arg);

#define NIC_HOST_RX_BUFFER (256u << 10)	/* host_rx_buffer's default: a ConnectX port's share */

static void hook_init(struct roce_qp *vqp);
static int hook_modify(struct roce_qp *vqp, const struct roce_qp_attr *attr, unsigned int mask);
static void hook_reset(struct roce_qp *vqp);
static void hook_query(const struct roce_qp *vqp, struct roce_qp_attr *attr);
static void hook_kick(struct roce_qp *vqp);

static const struct verbs_ops tr_ops = {
	.qp_size = sizeof(struct tr_qp),
	.qp_init = hook_init,
	.qp_modify = hook_modify,
	.qp_reset = hook_reset,
	.qp_query = hook_query,
	.qp_kick = hook_kick,
	.qp_state_changed = hook_state_changed,
	.qp_destroy = hook_destroy,
};

struct roce_device *roce_device_create(struct roce_engine *eng, const struct roce_device_conf *conf)
{
	struct roce_device *dev;
	struct tr_nic *nic;

	/* on a line of its own: what a pull reads is its first line */
	if (posix_memalign((void **)&nic, RTE_CACHE_LINE_SIZE, sizeof(*nic)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	memset(nic, 0, sizeof(*nic));
	dev = &nic->vdev;
	dev->conf = *conf;
	if (dev->conf.max_mtu == 0)
		dev->conf.max_mtu = ROCE_MTU_4096;
	if (dev->conf.speed_bps == 0)
		dev->conf.speed_bps = 100000000000ull;
	if (dev->conf.qpn_base == 0)
		dev->conf.qpn_base = 0x11;
	snprintf(dev->name, sizeof(dev->name), "%s", conf->name != NULL ? conf->name : "rocelab0");
	dev->conf.name = dev->name;
	dev->eng = eng;
	dev->attr = (struct roce_device_attr){
		.fw_ver = "rocelab " ROCELAB_VERSION,
		.node_guid = (uint64_t)conf->mac[0] << 56 | (uint64_t)conf->mac[1] << 48 |
			     (uint64_t)conf->mac[2] << 40 | 0xfffe000000ull |
			     (uint64_t)conf->mac[3] << 16 | (uint64_t)conf->mac[4] << 8 | conf->mac[5],
		.max_mr_size = 1ull << 40,
		.max_qp = VERBS_MAX_QP,
		.max_qp_wr = VERBS_MAX_WR,
		.max_sge = VERBS_MAX_SGE,
		.max_cq = VERBS_MAX_QP,
		.max_cqe = VERBS_MAX_CQE,
		.max_mr = VERBS_MAX_MR - 1,
		.max_pd = VERBS_MAX_QP,
		.max_srq = VERBS_MAX_QP,
		.max_srq_wr = VERBS_MAX_WR,
		.max_inline_data = VERBS_MAX_INLINE,
		.max_qp_rd_atom = VERBS_MAX_RD_ATOMIC,
		.max_qp_init_rd_atom = VERBS_MAX_RD_ATOMIC,
		.phys_port_cnt = 1,
	};
	dev->port = (struct roce_port_attr){
		.state = ROCE_PORT_ACTIVE,
		.max_mtu = dev->conf.max_mtu,
		.active_mtu = dev->conf.max_mtu,
		.gid_tbl_len = 5,
		.speed_bps = dev->conf.speed_bps,
	};
	roce_nic_qos_defaults(&nic->qos);
	roce_timer_init(&nic->wake, nic_wake_fired, dev);
	roce_timer_init(&nic->dma_done, nic_dma_done, dev);
	nic->pfc_rate = UINT64_MAX;	/* PFC thresholds not worked out yet */
	if (dev->conf.host_bps != 0 && dev->conf.host_rx_buffer == 0)
		dev->conf.host_rx_buffer = NIC_HOST_RX_BUFFER;
	nic->host_if = dev->conf.host_bps != 0;
	dev->ops = &tr_ops;
	return dev;
}

int roce_device_destroy(struct roce_device *dev)
{
	struct tr_nic *nic;

	if (dev == NULL)
		return 0;
	if (dev->npd || dev->ncq || dev->nqp || dev->nsrq || dev->nah || dev->nmr)
		return -EBUSY;
	nic = tr_nic(dev);
	roce_timer_cancel(dev->eng, &nic->wake);
	roce_timer_cancel(dev->eng, &nic->dma_done);
	for (; nic->dma_len != 0; nic->dma_len--, nic->dma_head++)
		rte_pktmbuf_free(nic->dma[nic->dma_head & (nic->dma_cap - 1)].m);
	free(nic->dma);
	while (nic->cnp_head != nic->cnp_tail)
		rte_pktmbuf_free(nic->cnp[nic->cnp_head++ & (TR_CNP_QUEUE - 1)]);
	tr_cc_free_all(nic);
	free(dev->qp);
	free(dev->mr);
	free(nic);
	return 0;
}

void roce_device_attach(struct roce_device *dev, struct roce_link *link, int dir)
{
	tr_nic(dev)->link = link;
	tr_nic(dev)->dir = dir;
}

void roce_device_set_trace(struct roce_device *dev, FILE *f)
{
	tr_nic(dev)->trace = f;
}

uint32_t roce_device_rx_held(const struct roce_device *dev)
{
	return tr_nic(dev)->dma_len;
}

void tr_trace(struct tr_qp *qp, const char *fmt, ...)
{
	FILE *f = tr_nic(qp->vqp.dev)->trace;
	va_list ap;

	if (f == NULL)
		return;
	fprintf(f, "%14.6f us %s qp 0x%06x ", (double)roce_engine_now(qp->vqp.dev->eng) / ROCE_US,
		qp->vqp.dev->name, qp->vqp.qpn);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static const char *const counter_name[] = {
	[ROCE_CNT_RX_FRAMES] = "rx_frames",
	[ROCE_CNT_TX_FRAMES] = "tx_frames",
	[ROCE_CNT_RX_ICRC_ERR] = "rx_icrc_errors",
	[ROCE_CNT_RX_MALFORMED] = "rx_malformed",
	[ROCE_CNT_RX_NO_QP] = "rx_no_qp",
	[ROCE_CNT_RX_BAD_STATE] = "rx_bad_qp_state",
	[ROCE_CNT_RX_QKEY_ERR] = "rx_qkey_violations",
	[ROCE_CNT_RX_OPCODE_ERR] = "rx_opcode_errors",
	[ROCE_CNT_DUPLICATE] = "duplicate_request",
	[ROCE_CNT_OUT_OF_SEQUENCE] = "out_of_sequence",
	[ROCE_CNT_SEQ_NAK_SENT] = "seq_nak_sent",
	[ROCE_CNT_SEQ_NAK_RCVD] = "packet_seq_err",
	[ROCE_CNT_RNR_NAK_SENT] = "rnr_nak_sent",
	[ROCE_CNT_RNR_NAK_RCVD] = "rnr_nak_retry_err",
	[ROCE_CNT_ACCESS_NAK_SENT] = "remote_access_nak_sent",
	[ROCE_CNT_INV_REQ_NAK_SENT] = "remote_invalid_req_nak_sent",
	[ROCE_CNT_OP_ERR_NAK_SENT] = "remote_op_err_nak_sent",
	[ROCE_CNT_ERR_NAK_RCVD] = "fatal_nak_rcvd",
	[ROCE_CNT_ACKS_SENT] = "ack_sent",
	[ROCE_CNT_ACKS_RCVD] = "ack_rcvd",
	[ROCE_CNT_IMPLIED_NAK] = "implied_nak_seq_err",
	[ROCE_CNT_GHOST_ACK] = "ghost_ack",
	[ROCE_CNT_RETRANSMITS] = "retransmits",
	[ROCE_CNT_TIMEOUTS] = "local_ack_timeout_err",
	[ROCE_CNT_RETRY_EXCEEDED] = "retry_exceeded_err",
	[ROCE_CNT_RNR_RETRY_EXCEEDED] = "rnr_retry_exceeded_err",
	[ROCE_CNT_READ_RETRIES] = "read_retries",
	[ROCE_CNT_DUP_READ] = "duplicate_read",
	[ROCE_CNT_DUP_ATOMIC] = "duplicate_atomic",
	[ROCE_CNT_DUP_DROPPED] = "duplicate_dropped",
	[ROCE_CNT_CQ_OVERFLOW] = "cq_overflow",
	[ROCE_CNT_CNP_SENT] = "np_cnp_sent",
	[ROCE_CNT_CNP_RCVD] = "rp_cnp_handled",
	[ROCE_CNT_ECN_CE_RCVD] = "np_ecn_marked_roce_packets",
	[ROCE_CNT_TX_NO_MBUF] = "tx_no_mbuf",
	[ROCE_CNT_CNP_IGNORED] = "rp_cnp_ignored",
	[ROCE_CNT_CNP_DROPPED] = "np_cnp_dropped",
	[ROCE_CNT_RX_PRIO0_PAUSE] = "rx_prio0_pause",
	[ROCE_CNT_RX_PRIO1_PAUSE] = "rx_prio1_pause",
	[ROCE_CNT_RX_PRIO2_PAUSE] = "rx_prio2_pause",
	[ROCE_CNT_RX_PRIO3_PAUSE] = "rx_prio3_pause",
	[ROCE_CNT_RX_PRIO4_PAUSE] = "rx_prio4_pause",
	[ROCE_CNT_RX_PRIO5_PAUSE] = "rx_prio5_pause",
	[ROCE_CNT_RX_PRIO6_PAUSE] = "rx_prio6_pause",
	[ROCE_CNT_RX_PRIO7_PAUSE] = "rx_prio7_pause",
	[ROCE_CNT_RX_PRIO0_PAUSE_NS] = "rx_prio0_pause_duration_ns",
	[ROCE_CNT_RX_PRIO1_PAUSE_NS] = "rx_prio1_pause_duration_ns",
	[ROCE_CNT_RX_PRIO2_PAUSE_NS] = "rx_prio2_pause_duration_ns",
	[ROCE_CNT_RX_PRIO3_PAUSE_NS] = "rx_prio3_pause_duration_ns",
	[ROCE_CNT_RX_PRIO4_PAUSE_NS] = "rx_prio4_pause_duration_ns",
	[ROCE_CNT_RX_PRIO5_PAUSE_NS] = "rx_prio5_pause_duration_ns",
	[ROCE_CNT_RX_PRIO6_PAUSE_NS] = "rx_prio6_pause_duration_ns",
	[ROCE_CNT_RX_PRIO7_PAUSE_NS] = "rx_prio7_pause_duration_ns",
	[ROCE_CNT_RX_OUT_OF_BUFFER] = "rx_out_of_buffer",
	[ROCE_CNT_TX_PFC] = "tx_pfc_frames",
};
ROCE_STATIC_ASSERT(ROCE_DIM(counter_name) == ROCE_CNT_NUM);

const char *roce_counter_name(enum roce_dev_counter c)
{
	return (unsigned int)c < ROCE_CNT_NUM ? counter_name[c] : "?";
}

int roce_device_ncounters(void)
{
	return ROCE_CNT_NUM;
}

const char *roce_device_counter_name(int i)
{
	return roce_counter_name((enum roce_dev_counter)i);
}

/*
 * Counter @p i as of now. A PFC frame pauses a priority until a time ahead, and its whole
 * length is counted when it arrives (nic_pfc_rx); the part still ahead has not been paused
 * yet, and at the end of a run it never will be.
 */
static uint64_t counter_now(const struct roce_device *dev, int i)
{
	const struct tr_nic *nic = tr_nic(dev);
	roce_time_t now, until;
	int prio = i - ROCE_CNT_RX_PRIO0_PAUSE_NS;

	if (prio < 0 || prio >= ROCE_NIC_NPRIO)
		return nic->cnt[i];
	now = roce_engine_now(dev->eng);
	until = nic->paused_until[prio];
	return (nic->pause_ps[prio] - (until > now ? until - now : 0)) / ROCE_NS;
}

uint64_t roce_device_counter(const struct roce_device *dev, int i)
{
	return i >= 0 && i < ROCE_CNT_NUM ? counter_now(dev, i) : 0;
}

uint64_t roce_device_counter_by_name(const struct roce_device *dev, const char *name)
{
	for (int i = 0; i < ROCE_CNT_NUM; i++)
		if (strcmp(roce_counter_name((enum roce_dev_counter)i), name) == 0)
			return counter_now(dev, i);
	return UINT64_MAX;
}

void roce_qp_stats(const struct roce_qp *vqp, struct roce_qp_stats *st)
{
	const struct tr_qp *qp = to_tqp_const(vqp);

	*st = qp->st;
}

void roce_qp_wait(const struct roce_qp *vqp, struct roce_qp_wait *w)
{
	const struct tr_qp *qp = to_tqp_const(vqp);
	const struct tr_nic *nic = tr_nic(qp->vqp.dev);
	roce_time_t now = roce_engine_now(qp->vqp.dev->eng);
	uint8_t prio = tr_qp_prio(nic, qp);

	*w = (struct roce_qp_wait){
		.kind = ROCE_QP_WAIT_ACK,
		.until = roce_timer_expiry(&qp->comp.ack_timer),
		.rate_bps = qp->cc.rate,
		.retries_left = qp->comp.retry_cnt,
	};
	if (qp->vqp.state == ROCE_QPS_ERR) {
		w->kind = ROCE_QP_WAIT_ERROR;
		w->until = ROCE_TIME_NEVER;
	} else if (qp->vqp.sq_head == qp->vqp.sq_tail) {
		w->kind = ROCE_QP_WAIT_IDLE;
		w->until = ROCE_TIME_NEVER;
	} else if (qp->comp.rnr_wait) {
		w->kind = ROCE_QP_WAIT_RNR;
		w->until = roce_timer_expiry(&qp->comp.rnr_timer);
	} else if (!tr_req_ready(qp)) {
		return;		/* waiting for answers */
	} else if ((nic->qos.pfc_enable >> prio & 1) && nic->paused_until[prio] > now) {
		w->kind = ROCE_QP_WAIT_PAUSED;
		w->until = nic->paused_until[prio];
	} else if (qp->cc.rate != 0 && qp->cc.tx_allowed_at > now) {
		w->kind = ROCE_QP_WAIT_RATE;
		w->until = qp->cc.tx_allowed_at;
	} else {
		w->kind = ROCE_QP_WAIT_SEND;
		w->until = ROCE_TIME_NEVER;
	}
}

/* ---- transmit ---- */

/* Put @p qp on the arbiter's list (if not already there) and wake the link. */
void tr_qp_kick(struct tr_qp *qp)
{
	struct tr_nic *nic = tr_nic(qp->vqp.dev);

	if (qp->vqp.state == ROCE_QPS_ERR) {
		tr_qp_flush(qp);
		return;
	}
	if (!qp->tx_listed) {
		qp->tx_listed = true;
		qp->tx_next = NULL;
		if (nic->tx_tail != NULL)
			nic->tx_tail->tx_next = qp;
		else
			nic->tx_head = qp;
		nic->tx_tail = qp;
	}
	if (nic->link != NULL)
		roce_link_kick(nic->link, nic->dir);
}

static void tx_unlist_head(struct tr_nic *nic)
{
	struct tr_qp *qp = nic->tx_head;

	nic->tx_head = qp->tx_next;
	if (nic->tx_head == NULL)
		nic->tx_tail = NULL;
	qp->tx_listed = false;
	qp->tx_next = NULL;
}

/* Clear the bits of pauses that have ended by @p now; the priorities still paused. */
static uint8_t nic_paused_now(struct tr_nic *nic, roce_time_t now)
{
	uint8_t m = nic->paused;

	for (int i = 0; i < ROCE_NIC_NPRIO; i++)
		if ((m >> i & 1) && nic->paused_until[i] <= now)
			m &= (uint8_t)~(1u << i);
	nic->paused = m;
	return m;
}

/* A data packet of @p qp is leaving now: space the next one at the QP's rate, feed the algorithm. */
static void nic_cc_sent(struct tr_qp *qp, const struct rte_mbuf *m, roce_time_t now)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);

	qp->cc.last_tx = now;
	qp->cc.last_bits = roce_wire_bytes(len) * 8;
	if (qp->cc.rate != 0)
		qp->cc.tx_allowed_at = now + qp->cc.last_bits * ROCE_SEC / qp->cc.rate;
	qp->cc.conf->ops->on_tx(qp, len);
}

static void nic_wake_fired(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct tr_nic *nic = tr_nic(arg);

	RTE_SET_USED(eng);
	RTE_SET_USED(t);
	if (nic->link != NULL)
		roce_link_kick(nic->link, nic->dir);
}

/*
 * @p m leaves. Its ICRC is left for whoever looks at its bytes (roce_wire_icrc_partial: a capture
 * tap, a corrupting link, a DPDK port), and the receiving NIC takes it as good unless something
 * on the way wrote to them (ICRC offload, both ways).
 */
static inline struct rte_mbuf *nic_tx(struct roce_device *dev, struct rte_mbuf *m)
{
	TR_CNT(dev, TX_FRAMES);
	m->ol_flags |= roce_wire_icrc_good;
	return m;
}

/* Time the host interface takes to move @p len bytes one way, ps, rounded up. */
static inline roce_time_t host_time(const struct roce_device *dev, uint32_t len)
{
	unsigned __int128 bits_ps = (unsigned __int128)len * 8 * ROCE_SEC;

	return (roce_time_t)((bits_ps + dev->conf.host_bps - 1) / dev->conf.host_bps);
}

/* A QP's frame leaves: with a host interface, it was read from memory first (nic_pull waits). */
static inline struct rte_mbuf *nic_tx_qp(struct roce_device *dev, struct rte_mbuf *m,
					 roce_time_t now)
{
	struct tr_nic *nic = tr_nic(dev);

	if (nic->host_if)
		nic->dma_rd_free = ROCE_MAX(now, nic->dma_rd_free) +
				   host_time(dev, rte_pktmbuf_pkt_len(m));
	return nic_tx(dev, m);
}

/* PFC quanta of the XOFFs the device sends, and the time they last at its link's rate. */
#define NIC_PFC_QUANTA 0xffff

static roce_time_t pfc_quanta_time(const struct tr_nic *nic)
{
	uint64_t rate = nic->link != NULL ? roce_link_rate(nic->link) : 0;
	unsigned __int128 ps = (unsigned __int128)NIC_PFC_QUANTA * ROCE_PFC_QUANTUM_BITS * ROCE_SEC;

	return rate ? (roce_time_t)(ps / rate) : 0;
}

/* The PFC frame due (nic->pfc_due): XOFF for conf.host_pfc's priorities, or XON. */
static struct rte_mbuf *nic_pfc_frame(struct roce_device *dev)
{
	struct tr_nic *nic = tr_nic(dev);
	struct rte_mbuf *m = roce_engine_mbuf(dev->eng);
	struct roce_pkt pkt;

	if (m == NULL) {
		TR_CNT(dev, TX_NO_MBUF);
		return NULL;
	}
	roce_pkt_init(&pkt, ROCE_KIND_PFC, 0);
	memcpy(pkt.smac, dev->conf.mac, 6);
	pkt.pfc_cev = dev->conf.host_pfc;
	for (int i = 0; i < ROCE_NIC_NPRIO; i++)
		if (nic->pfc_xoff && (dev->conf.host_pfc >> i & 1))
			pkt.quanta[i] = NIC_PFC_QUANTA;
	if (roce_wire_build_mbuf(&pkt, 0, m) < 0) {
		rte_pktmbuf_free(m);	/* cannot happen: a PFC frame fits any mbuf */
		return NULL;
	}
	nic->pfc_due = false;
	if (nic->pfc_xoff)	/* again at half the quanta, if the buffer is still that full */
		nic->pfc_refresh_at = roce_engine_now(dev->eng) + pfc_quanta_time(nic) / 2;
	TR_CNT(dev, TX_PFC);
	TR_CNT(dev, TX_FRAMES);
	return m;
}

/*
 * XON this many of the link's largest frames (on the wire) below XOFF: enough hysteresis that
 * the pause does not flap on every frame written, small enough that the link resumes before
 * the buffer drains.
 */
#define NIC_XON_FRAMES 2

/*
 * With conf.host_pfc: XOFF when the bytes waiting for the host interface pass the buffer less
 * the link's PFC headroom (the switch's formula: what still arrives once we decide), refreshed
 * while they stay above the XON point, XON below it.
 */
static void nic_pfc_update(struct roce_device *dev, uint64_t held)
{
	struct tr_nic *nic = tr_nic(dev);
	uint64_t rate;

	if (roce_unlikely(nic->link == NULL))	/* not attached: no one to pause */
		return;
	rate = roce_link_rate(nic->link);
	if (roce_unlikely(rate != nic->pfc_rate)) {	/* once, and after a rate change */
		uint64_t hdrm = roce_link_pfc_headroom(nic->link);
		uint64_t gap = NIC_XON_FRAMES * roce_wire_bytes(roce_link_max_frame(nic->link));
		uint64_t buf = dev->conf.host_rx_buffer;

		nic->pfc_rate = rate;
		/* a buffer too small for its headroom still pauses, halfway, rather than never */
		nic->pfc_xoff_at = buf > 2 * hdrm ? buf - hdrm : buf / 2;
		/*
		 * A buffer too small for the gap resumes at half the XOFF point, never at 0: held
		 * bytes cannot fall below 0, and the link would stay paused for good.
		 */
		nic->pfc_xon_at = nic->pfc_xoff_at > 2 * gap ? nic->pfc_xoff_at - gap :
				  nic->pfc_xoff_at / 2;
	}
	if (!nic->pfc_xoff && held > nic->pfc_xoff_at) {
		nic->pfc_xoff = true;
		nic->pfc_due = true;
	} else if (nic->pfc_xoff && held < nic->pfc_xon_at) {
		nic->pfc_xoff = false;
		nic->pfc_due = true;
	} else if (nic->pfc_xoff && roce_engine_now(dev->eng) >= nic->pfc_refresh_at) {
		nic->pfc_due = true;
	} else {
		return;
	}
	roce_link_kick(nic->link, nic->dir);
}

/*
 * The link's wire is idle: the next frame. CNPs go first; then round robin over QPs, each
 * giving a response before a request. A QP whose priority is paused by PFC sends nothing, and
 * one whose rate limiter holds it sends no request; both stay listed, and the NIC's one wake
 * timer kicks the link when the earliest of them may send again.
 */
static struct rte_mbuf *nic_pull(void *owner)
{
	struct roce_device *dev = owner;
	struct tr_nic *nic = tr_nic(dev);
	/* the clock is read only when a pause or a rate limit needs it (not for most frames) */
	roce_time_t now = ROCE_TIME_NEVER, wake = ROCE_TIME_NEVER;
	uint8_t paused = 0;
	struct tr_qp *stop = NULL;

	if (roce_unlikely(nic->pfc_due)) {
		struct rte_mbuf *pfc = nic_pfc_frame(dev);

		if (pfc != NULL)
			return pfc;
	}
	if (nic->paused != 0) {
		now = roce_engine_now(dev->eng);
		paused = nic_paused_now(nic, now);
	}
	/* the host interface is still reading the last frame: nothing from a QP before it ends */
	if (nic->host_if) {
		now = roce_engine_now(dev->eng);
		if (now < nic->dma_rd_free && nic->tx_head != NULL) {
			stop = nic->tx_head;
			wake = nic->dma_rd_free;
		}
	}

	if (nic->cnp_head != nic->cnp_tail) {
		uint8_t prio = nic->qos.dscp_prio[nic->qos.cnp_dscp];

		if (!(paused >> prio & 1)) {
			return nic_tx(dev, nic->cnp[nic->cnp_head++ & (TR_CNP_QUEUE - 1)]);
		}
		wake = nic->paused_until[prio];
	}
	while (nic->tx_head != NULL && nic->tx_head != stop) {
		struct tr_qp *qp = nic->tx_head;
		struct rte_mbuf *m = NULL;
		bool blocked = false;
		uint8_t prio;

		if (paused != 0 && (paused >> (prio = tr_qp_prio(nic, qp)) & 1)) {
			blocked = true;
			wake = ROCE_MIN(wake, nic->paused_until[prio]);
		} else {
			/* tr_resp_next() has nothing to give without these: no call then */
			if (qp->resp.res_active != 0 || qp->resp.ack != RESP_ACK_NONE)
				m = tr_resp_next(qp);
			if (m == NULL && qp->cc.rate != 0 && now == ROCE_TIME_NEVER)
				now = roce_engine_now(dev->eng);
			if (m == NULL && qp->cc.rate != 0 && now < qp->cc.tx_allowed_at) {
				blocked = true;
				wake = ROCE_MIN(wake, qp->cc.tx_allowed_at);
			} else if (m == NULL) {
				m = tr_req_next(qp);
				if (m != NULL && qp->cc.conf != NULL) {
					if (now == ROCE_TIME_NEVER)
						now = roce_engine_now(dev->eng);
					nic_cc_sent(qp, m, now);
				}
			}
		}
		if (m != NULL && qp->tx_next == NULL) {
			/* alone on the list: the back of the line is where it is */
			return nic_tx_qp(dev, m, now);
		}
		tx_unlist_head(nic);
		if (m == NULL && !blocked)
			continue;
		/* back of the line: it may have more */
		qp->tx_listed = true;
		if (nic->tx_tail != NULL)
			nic->tx_tail->tx_next = qp;
		else
			nic->tx_head = qp;
		nic->tx_tail = qp;
		if (m != NULL) {
			return nic_tx_qp(dev, m, now);
		}
		if (stop == NULL)
			stop = qp;
	}
	if (wake != ROCE_TIME_NEVER && (!roce_timer_armed(&nic->wake) || nic->wake.when > wake))
		roce_timer_arm(dev->eng, &nic->wake, wake);
	return NULL;
}

/* ---- the provider's share of the QP verbs (verbs_ops) ---- */

/* A QP was created (in RESET, its transport state zeroed). */
static void hook_init(struct roce_qp *vqp)
{
	struct tr_qp *qp = to_tqp(vqp);

	/* a per-QP entropy port in the dynamic range, as rxe and ConnectX derive one */
	qp->sport = (uint16_t)(0xc000 | ((qp->vqp.qpn * 0x9e3779b1u) >> 18));
	qp->hdr_gen = 1;
}

/* roce_modify_qp(): what the attributes in @p mask set in the transport. */
static int hook_modify(struct roce_qp *vqp, const struct roce_qp_attr *attr, unsigned int mask)
{
	struct tr_qp *qp = to_tqp(vqp);

	if (mask & ROCE_QP_MAX_DEST_RD_ATOMIC) {
		uint32_t n = attr->max_dest_rd_atomic ? attr->max_dest_rd_atomic : 1;
		struct tr_resource *res = calloc(n, sizeof(*res));

		if (res == NULL)
			return -ENOMEM;
		free(qp->resp.res);
		qp->resp.res = res;
		qp->resp.res_size = n;
		qp->resp.res_tail = 0;
	}
	if (mask & ROCE_QP_RQ_PSN)
		qp->resp.epsn = attr->rq_psn;
	if (mask & ROCE_QP_SQ_PSN) {
		qp->req.psn = attr->sq_psn;
		qp->req.psn_hw = attr->sq_psn;	/* nothing sent yet: no PSN below it is a retransmit */
		qp->comp.psn = attr->sq_psn;
	}
	if (mask & ROCE_QP_AV) {
		if (attr->ah_attr.sport != 0)
			qp->sport = attr->ah_attr.sport;
		tr_qp_hdr_changed(qp);
	}
	if (mask & ROCE_QP_RETRY_CNT)
		qp->comp.retry_cnt = attr->retry_cnt;
	if (mask & ROCE_QP_RNR_RETRY)
		qp->comp.rnr_retry = attr->rnr_retry;
	return 0;
}

/* Back to RESET: forget all transport state. */
static void hook_reset(struct roce_qp *vqp)
{
	struct tr_qp *qp = to_tqp(vqp);

	memset(&qp->req, 0, sizeof(qp->req));
	qp->comp.read_offset = 0;
	qp->comp.rnr_wait = false;
	qp->resp.in_msg = false;
	qp->resp.wqe_held = false;
	qp->resp.ack = RESP_ACK_NONE;
	qp->resp.seq_nak_sent = qp->resp.rnr_nak_sent = false;
	qp->resp.msn = 0;
	qp->resp.res_tail = 0;
	if (qp->resp.res != NULL)
		memset(qp->resp.res, 0, qp->resp.res_size * sizeof(*qp->resp.res));
}

/* roce_query_qp(): the PSNs as they are now. */
static void hook_query(const struct roce_qp *vqp, struct roce_qp_attr *attr)
{
	const struct tr_qp *qp = to_tqp_const(vqp);

	attr->sq_psn = qp->req.psn;
	attr->rq_psn = qp->resp.epsn;
}

/* The SQ has new work, or (ERR) receives to flush. */
static void hook_kick(struct roce_qp *vqp)
{
	tr_qp_kick(to_tqp(vqp));
}

static void hook_destroy(struct roce_qp *vqp)
{
	struct tr_qp *qp = to_tqp(vqp);
	struct tr_nic *nic = tr_nic(qp->vqp.dev);
	struct tr_qp **pp = &nic->tx_head;

	tr_timers_cancel(qp);
	tr_cc_stop(qp);
	nic->tx_tail = NULL;
	while (*pp != NULL) {
		if (*pp == qp)
			*pp = qp->tx_next;
		else
			nic->tx_tail = *pp, pp = &(*pp)->tx_next;
	}
	free(qp->resp.res);
	free(qp->resp.wqe);
}

static void hook_state_changed(struct roce_qp *vqp, enum roce_qp_state old)
{
	struct tr_qp *qp = to_tqp(vqp);

	if (old == ROCE_QPS_RESET)
		tr_timers_init(qp);
	if (qp->vqp.state == ROCE_QPS_RTR && old == ROCE_QPS_INIT)
		tr_cc_connect(qp);
	if (qp->vqp.state == ROCE_QPS_ERR || qp->vqp.state == ROCE_QPS_RESET)
		tr_cc_stop(qp);
	if (qp->vqp.state == ROCE_QPS_ERR) {
		tr_timers_cancel(qp);
		tr_trace(qp, "state %s -> ERR: flushing", roce_qp_state_name(old));
		tr_qp_flush(qp);
	} else if (qp->vqp.state == ROCE_QPS_RESET) {
		tr_timers_cancel(qp);
	} else if (qp->vqp.state == ROCE_QPS_RTS) {
		tr_qp_kick(qp);
	} else if (qp->vqp.state == ROCE_QPS_SQD && old == ROCE_QPS_RTS) {
		tr_req_drain(qp);
	}
}

/* Addresses and BTH defaults of a packet @p qp sends to @p av / @p dqpn. */
void tr_pkt_init(struct tr_qp *qp, struct roce_pkt *pkt, uint8_t opcode,
		 const struct roce_ah_attr *av, uint32_t dqpn)
{
	const struct roce_device_conf *conf = &qp->vqp.dev->conf;

	tr_zero(pkt, offsetof(struct roce_pkt, payload));
	pkt->kind = ROCE_KIND_ROCEV2;
	memcpy(pkt->dmac, av->dmac, 6);
	memcpy(pkt->smac, conf->mac, 6);
	pkt->ip_ver = av->ip_ver;
	pkt->dscp = av->traffic_class >> 2;
	pkt->ecn = av->traffic_class & 3;
	if (pkt->ecn == 0 && tr_nic_ecn(tr_nic(qp->vqp.dev)) &&
	    !(roce_opcode[opcode].mask & ROCE_F_ACK))
		pkt->ecn = 2;	/* ECT(0) on data, so switches may mark CE (RFC 3168) */
	pkt->ttl = av->hop_limit ? av->hop_limit : 64;
	pkt->ip_df = true;
	pkt->flow_label = av->flow_label;
	for (int i = 0; i < 4; i++) {
		if (conf->ip_ver[i] == av->ip_ver) {
			pkt->src = conf->ip[i];
			break;
		}
	}
	pkt->dst = av->dip;
	pkt->sport = qp->sport;
	pkt->dport = ROCE_UDP_PORT;
	pkt->opcode = opcode;
	pkt->pkey = 0xffff;
	pkt->dqpn = dqpn;
	pkt->payload = NULL;
	pkt->payload_len = 0;
}

/* tr_pkt_init_conn()'s first packet after a change: the whole packet, and the template rebuilt. */
const struct roce_wire_tmpl *tr_pkt_init_conn_new(struct tr_qp *qp, struct roce_pkt *pkt,
						  uint8_t opcode, unsigned int i)
{
	tr_pkt_init(qp, pkt, opcode, &qp->vqp.attr.ah_attr, qp->vqp.attr.dest_qp_num);
	(void)roce_wire_tmpl_init(&qp->tx_tmpl[i], pkt);
	qp->tx_tmpl_gen[i] = qp->hdr_gen;
	return &qp->tx_tmpl[i];
}

/* The headers of every QP of @p dev are built from something else now (ECN policy). */
void tr_nic_hdr_changed(struct roce_device *dev)
{
	for (uint32_t i = 0; i < dev->qp_cap; i++)
		if (dev->qp[i] != NULL)
			tr_qp_hdr_changed(to_tqp(dev->qp[i]));
}

/* tr_pkt_build()'s payload spans SGEs: gather it into the NIC's scratch buffer. */
void tr_pkt_gather(struct tr_qp *qp, struct roce_pkt *pkt, const struct roce_sge *sge,
		   uint32_t nsge, uint32_t offset)
{
	uint8_t *buf = tr_nic(qp->vqp.dev)->scratch;

	verbs_sge_copy(sge, nsge, offset, buf, pkt->payload_len, false);
	pkt->payload = buf;
}

/* tr_pkt_build() without a template: whichever of the QP's last two sets matches, or a new one. */
const struct roce_wire_tmpl *tr_pkt_tmpl_pick(struct tr_qp *qp, const struct roce_pkt *pkt)
{
	const struct roce_wire_tmpl *tmpl;

	/* the last two sets of headers are kept: most packets only patch them */
	tmpl = &qp->tx_tmpl[0];
	if (!roce_wire_tmpl_match(tmpl, pkt)) {
		tmpl = &qp->tx_tmpl[1];
		if (!roce_wire_tmpl_match(tmpl, pkt)) {
			struct roce_wire_tmpl *t = &qp->tx_tmpl[qp->tx_tmpl_next];

			qp->tx_tmpl_gen[qp->tx_tmpl_next] = 0;
			qp->tx_tmpl_next ^= 1;
			(void)roce_wire_tmpl_init(t, pkt);
			tmpl = t;
		}
	}
	return tmpl;
}

/*
 * tr_pkt_build()'s frame with its payload by reference (roce_wire_tmpl_build_mbuf_zc()), or,
 * when the engine has no segments for it, copied as any other.
 */
int tr_pkt_build_zc(struct tr_qp *qp, const struct roce_pkt *pkt,
		    const struct roce_wire_tmpl *tmpl, struct rte_mbuf *m)
{
	struct rte_mbuf *const *trailer;
	struct rte_mbuf *seg;
	int rc;

	seg = roce_engine_zc_seg(qp->vqp.dev->eng, &trailer);
	if (seg != NULL) {
		rc = roce_wire_tmpl_build_mbuf_zc(tmpl, pkt, m, seg, trailer);
		if (rc >= 0)
			return rc;
		rte_pktmbuf_free(seg);
		rte_pktmbuf_reset(m);
	}
	return roce_wire_tmpl_build_mbuf_partial(tmpl, pkt, m);
}

/* tr_pkt_build() could not write the frame: the mbuf goes back, counted as for want of one. */
void tr_pkt_build_failed(struct tr_qp *qp, struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
	TR_CNT(qp->vqp.dev, TX_NO_MBUF);
}

/* ---- receive ---- */

static bool opcode_fits_qp(const struct tr_qp *qp, uint32_t mask)
{
	switch (qp->vqp.type) {
	case ROCE_QPT_RC:
		return mask & ROCE_F_RC;
	case ROCE_QPT_UC:
		return mask & ROCE_F_UC;
	default:
		return mask & ROCE_F_UD;
	}
}

/*
 * IEEE 802.1Qbb: a PFC frame stops our transmission at each enabled priority for quanta x 512
 * bit times at the link's rate, counted from now (a later frame replaces the time left);
 * quanta 0 (XON) resumes at once.
 */
static void nic_pfc_rx(struct roce_device *dev, const struct roce_pkt *pkt)
{
	struct tr_nic *nic = tr_nic(dev);
	roce_time_t now = roce_engine_now(dev->eng);
	uint64_t rate = nic->link != NULL ? roce_link_rate(nic->link) : dev->port.speed_bps;

	for (int i = 0; i < ROCE_NIC_NPRIO; i++) {
		unsigned __int128 ps;
		roce_time_t until, old = nic->paused_until[i];

		if (!(pkt->pfc_cev >> i & 1))
			continue;
		nic->cnt[ROCE_CNT_RX_PRIO0_PAUSE + i]++;
		if (!(nic->qos.pfc_enable >> i & 1))
			continue;
		ps = (unsigned __int128)pkt->quanta[i] * ROCE_PFC_QUANTUM_BITS * ROCE_SEC;
		until = now + (roce_time_t)((ps + rate - 1) / rate);
		/* paused time: the part of the old pause still ahead is replaced by the new one */
		nic->pause_ps[i] += until - now - (old > now ? old - now : 0);
		nic->paused_until[i] = until;
		if (until > now)
			nic->paused |= (uint8_t)(1u << i);
	}
	/* a pause may have ended early (XON): let the arbiter look again */
	if (nic->link != NULL)
		roce_link_kick(nic->link, nic->dir);
}

/*
 * Notification point: answer a CE-marked packet for @p qp with a CNP to its sender's QP, at
 * most one per qos.cnp_interval per QP. CNPs go out before any other frame.
 */
static void nic_np(struct tr_qp *qp, const struct roce_pkt *pkt)
{
	struct roce_device *dev = qp->vqp.dev;
	struct tr_nic *nic = tr_nic(dev);
	roce_time_t now = roce_engine_now(dev->eng);
	struct roce_pkt cnp;
	struct rte_mbuf *m;

	if (qp->cc.cnp_sent && now - qp->cc.last_cnp < nic->qos.cnp_interval)
		return;
	if (nic->cnp_tail - nic->cnp_head >= TR_CNP_QUEUE) {
		TR_CNT(dev, CNP_DROPPED);
		return;
	}
	roce_pkt_init(&cnp, ROCE_KIND_ROCEV2, ROCE_OP_CNP);	/* sets BECN (Annex A17.9.3) */
	memcpy(cnp.dmac, pkt->smac, 6);
	memcpy(cnp.smac, dev->conf.mac, 6);
	cnp.ip_ver = pkt->ip_ver;
	cnp.src = pkt->dst;
	cnp.dst = pkt->src;
	cnp.dscp = nic->qos.cnp_dscp;
	cnp.ecn = 0;
	cnp.ip_df = true;
	cnp.sport = qp->sport;
	cnp.dqpn = qp->vqp.type == ROCE_QPT_UD ? pkt->deth.srcqp : qp->vqp.attr.dest_qp_num;
	cnp.payload_len = 0;
	m = roce_engine_mbuf(dev->eng);
	if (m == NULL || roce_wire_build_mbuf(&cnp, 0, m) < 0) {
		rte_pktmbuf_free(m);
		TR_CNT(dev, TX_NO_MBUF);
		return;
	}
	qp->cc.cnp_sent = true;
	qp->cc.last_cnp = now;
	nic->cnp[nic->cnp_tail++ & (TR_CNP_QUEUE - 1)] = m;
	TR_CNT(dev, CNP_SENT);
	tr_trace(qp, "CE-marked psn %u: CNP to qp 0x%06x", pkt->psn, cnp.dqpn);
	if (nic->link != NULL)
		roce_link_kick(nic->link, nic->dir);
}

static void nic_rx_frame(struct roce_device *dev, struct rte_mbuf *m)
{
	struct roce_pkt pkt;
	struct tr_qp *qp;
	unsigned int flags;
	uint32_t mask;
	int rc;

	/* a frame a NIC of this process built and nothing has written since: ICRC offload */
	flags = (m->ol_flags & roce_wire_icrc_good) ? ROCE_PARSE_ICRC_CHECKED : 0;
	rc = -EAGAIN;
	if (roce_unlikely(m->nb_segs != 1)) {
		struct rte_mbuf *flat;

		/* its payload by reference (ROCE_ACCESS_ZERO_COPY) is read where it is */
		rc = roce_wire_parse_rx_chain(m, flags, &pkt);
		if (rc == -EAGAIN) {
			flat = rte_pktmbuf_copy(m, roce_engine_pool(dev->eng), 0, UINT32_MAX);
			rte_pktmbuf_free(m);
			if (flat == NULL || flat->nb_segs != 1) {
				rte_pktmbuf_free(flat);
				TR_CNT(dev, RX_MALFORMED);
				return;
			}
			m = flat;
		}
	}
	if (rc == -EAGAIN)
		rc = roce_wire_parse_rx(rte_pktmbuf_mtod(m, const uint8_t *),
					rte_pktmbuf_data_len(m), flags, &pkt);
	if (rc == 0 && pkt.kind == ROCE_KIND_PFC) {
		nic_pfc_rx(dev, &pkt);
		goto out;
	}
	if (rc != 0 || pkt.kind != ROCE_KIND_ROCEV2) {
		if (pkt.err == ROCE_WERR_ICRC_MISMATCH)
			TR_CNT(dev, RX_ICRC_ERR);
		else if (pkt.kind == ROCE_KIND_ROCEV2 || pkt.kind == ROCE_KIND_ROCEV1)
			TR_CNT(dev, RX_MALFORMED);
		goto out;
	}
	if (pkt.ecn == 3)
		TR_CNT(dev, ECN_CE_RCVD);
	mask = roce_opcode[pkt.opcode].mask;
	qp = tr_qp_lookup(dev, pkt.dqpn);
	if (mask & ROCE_F_CNP) {
		/* reaction point */
		if (qp != NULL && qp->cc.conf != NULL) {
			TR_CNT(dev, CNP_RCVD);
			qp->cc.conf->ops->on_cnp(qp);
		} else {
			TR_CNT(dev, CNP_IGNORED);
		}
		goto out;
	}
	if (qp == NULL) {
		TR_CNT(dev, RX_NO_QP);
		goto out;
	}
	if (!opcode_fits_qp(qp, mask)) {
		TR_CNT(dev, RX_OPCODE_ERR);
		goto out;
	}
	if (qp->vqp.state != ROCE_QPS_RTR && qp->vqp.state != ROCE_QPS_RTS &&
	    qp->vqp.state != ROCE_QPS_SQD) {
		TR_CNT(dev, RX_BAD_STATE);
		goto out;
	}
	qp->st.rx_pkts++;
	if (pkt.ecn == 3 && tr_nic_ecn(tr_nic(dev)))
		nic_np(qp, &pkt);
	if (mask & ROCE_F_REQ)
		tr_resp_rx(qp, &pkt);
	else if (qp->vqp.state != ROCE_QPS_RTR)
		tr_comp_rx(qp, &pkt);
	else
		TR_CNT(dev, RX_BAD_STATE);
out:
	roce_wire_zc_free(m);	/* most frames by reference end here */
}

/*
 * Where a frame's BTH would be, at a glance (one 802.1Q tag at most, IPv4 without options):
 * its offset, or 0 if the frame is not IP. @p type gets the Ethertype (0: too short for one).
 */
static uint32_t glance_bth(const struct rte_mbuf *m, uint16_t *type)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l3 = RTE_ETHER_HDR_LEN;

	*type = 0;
	if (len < RTE_ETHER_HDR_LEN)
		return 0;
	*type = (uint16_t)(b[12] << 8 | b[13]);
	if (*type == RTE_ETHER_TYPE_VLAN && len >= RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN) {
		l3 += RTE_VLAN_HLEN;
		*type = (uint16_t)(b[l3 - 2] << 8 | b[l3 - 1]);
	}
	return *type == RTE_ETHER_TYPE_IPV4 ? l3 + 20 + 8 :
	       *type == RTE_ETHER_TYPE_IPV6 ? l3 + 40 + 8 : 0;
}

/* Is @p m for the host (written to memory), rather than for the NIC itself (PFC, a CNP)? */
static bool rx_for_host(const struct rte_mbuf *m)
{
	uint16_t type;
	uint32_t bth = glance_bth(m, &type);

	if (type == ROCE_ETHERTYPE_MAC_CTRL)
		return false;
	return bth == 0 || rte_pktmbuf_data_len(m) <= bth ||
	       rte_pktmbuf_mtod(m, const uint8_t *)[bth] != ROCE_OP_CNP;
}

/* Bytes received and not yet written to host memory at @p now. */
static uint64_t dma_held(struct roce_device *dev, roce_time_t now)
{
	const struct tr_nic *nic = tr_nic(dev);

	if (nic->dma_wr_free <= now)
		return 0;
	return (uint64_t)((unsigned __int128)(nic->dma_wr_free - now) * dev->conf.host_bps /
			  (8 * ROCE_SEC));
}

/* Frames whose write to host memory has ended go up, in order; the timer follows the next. */
static void nic_dma_done(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct roce_device *dev = arg;
	struct tr_nic *nic = tr_nic(dev);
	roce_time_t now = roce_engine_now(eng);

	RTE_SET_USED(t);
	while (nic->dma_len != 0 && nic->dma[nic->dma_head & (nic->dma_cap - 1)].done <= now) {
		struct rte_mbuf *m = nic->dma[nic->dma_head & (nic->dma_cap - 1)].m;

		nic->dma_head++;
		nic->dma_len--;
		nic_rx_frame(dev, m);
	}
	if (nic->dma_len != 0)
		roce_timer_arm(eng, &nic->dma_done, nic->dma[nic->dma_head & (nic->dma_cap - 1)].done);
	if (dev->conf.host_pfc != 0)
		nic_pfc_update(dev, dma_held(dev, now));
}

static int dma_grow(struct tr_nic *nic)
{
	uint32_t cap = nic->dma_cap ? nic->dma_cap * 2 : 64;
	struct tr_dma *d = malloc(cap * sizeof(*d));

	if (d == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < nic->dma_len; i++)
		d[i] = nic->dma[(nic->dma_head + i) & (nic->dma_cap - 1)];
	free(nic->dma);
	nic->dma = d;
	nic->dma_cap = cap;
	nic->dma_head = 0;
	return 0;
}

/*
 * A frame arrived at a device with a host interface: the NIC's own frames (PFC, CNPs) act at
 * once, as the NIC's pipeline takes them before any DMA; the others wait for their write to
 * memory behind the frames before them, in a buffer of conf.host_rx_buffer bytes, and are
 * dropped when it cannot take them (rx_out_of_buffer), or paused (nic_pfc_update).
 */
static void nic_rx_host(struct roce_device *dev, struct rte_mbuf *m)
{
	struct tr_nic *nic = tr_nic(dev);
	roce_time_t now = roce_engine_now(dev->eng), start;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint64_t held;

	if (!rx_for_host(m)) {
		nic_rx_frame(dev, m);
		return;
	}
	held = dma_held(dev, now);
	if (held + len > dev->conf.host_rx_buffer ||
	    (nic->dma_len == nic->dma_cap && dma_grow(nic) != 0)) {
		TR_CNT(dev, RX_OUT_OF_BUFFER);
		rte_pktmbuf_free(m);
		return;
	}
	start = ROCE_MAX(now, nic->dma_wr_free);
	nic->dma_wr_free = start + host_time(dev, len);
	nic->dma[(nic->dma_head + nic->dma_len++) & (nic->dma_cap - 1)] =
		(struct tr_dma){ .m = m, .done = nic->dma_wr_free };
	if (nic->dma_len == 1)
		roce_timer_arm(dev->eng, &nic->dma_done, nic->dma_wr_free);
	if (dev->conf.host_pfc != 0)
		nic_pfc_update(dev, held + len);
}

static void nic_rx(void *owner, struct rte_mbuf *m)
{
	struct roce_device *dev = owner;

	/* at the port, as rx_packets_phy: frames still in the host buffer or dropped there too */
	TR_CNT(dev, RX_FRAMES);
	if (dev->conf.host_bps != 0)
		nic_rx_host(dev, m);
	else
		nic_rx_frame(dev, m);
}

/*
 * The link's look ahead (roce_link_end.peek): the payload segment's mbuf and the QP that
 * nic_rx() will read for @p m. A wrong glance (IPv4 options) only fetches the wrong lines.
 */
static void nic_peek(void *owner, const struct rte_mbuf *m)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct tr_qp *qp;
	uint16_t type;
	uint32_t bth = glance_bth(m, &type);

	if (m->nb_segs == 3) {
		/*
		 * a payload by reference: the parse reads its segment, the free the segment's
		 * mempool header too, for the IOVA that rte_pktmbuf_detach() restores (the
		 * trailer is shared and stays in the cache)
		 */
		const struct rte_mbuf *seg = m->next;

		rte_prefetch0(seg);
		rte_prefetch0(&seg->next);
		rte_prefetch0((const char *)seg - RTE_CACHE_LINE_SIZE);
	}
	if (bth == 0 || m->data_len < bth + ROCE_BTH_LEN)
		return;
	qp = tr_qp_lookup(owner, (uint32_t)b[bth + 5] << 16 | b[bth + 6] << 8 | b[bth + 7]);
	if (qp == NULL)
		return;
	rte_prefetch0(qp);
	rte_prefetch0(roce_opcode[b[bth]].mask & ROCE_F_REQ ? (const void *)&qp->resp :
			(const void *)&qp->comp);
}

struct roce_link_end roce_device_link_end(struct roce_device *dev)
{
	return (struct roce_link_end){ .owner = dev, .pull = nic_pull, .rx = nic_rx,
				       .quiet = nic_quiet, .icrc_partial = true, .peek = nic_peek };
}

/* ---- priorities and ECN policy ---- */

void roce_nic_qos_defaults(struct roce_nic_qos *qos)
{
	memset(qos, 0, sizeof(*qos));
	for (int i = 0; i < 64; i++)
		qos->dscp_prio[i] = (uint8_t)(i >> 3);	/* ConnectX "trust dscp" default map */
	qos->pfc_enable = 0xff;
	qos->ecn = false;
	qos->cnp_interval = 4 * ROCE_US;	/* ConnectX MIN_TIME_BETWEEN_CNPS (mlxconfig): 4 us */
	qos->cnp_dscp = 48;			/* ConnectX CNP_DSCP (mlxconfig): 48 */
}

int roce_device_set_qos(struct roce_device *dev, const struct roce_nic_qos *qos)
{
	struct tr_nic *nic = tr_nic(dev);

	for (int i = 0; i < 64; i++)
		if (qos->dscp_prio[i] >= ROCE_NIC_NPRIO)
			return -EINVAL;
	if (qos->cnp_dscp > 63)
		return -EINVAL;
	nic->qos = *qos;
	tr_nic_hdr_changed(dev);
	if (nic->link != NULL)
		roce_link_kick(nic->link, nic->dir);
	return 0;
}

void roce_device_qos(const struct roce_device *dev, struct roce_nic_qos *qos)
{
	*qos = tr_nic(dev)->qos;
}
