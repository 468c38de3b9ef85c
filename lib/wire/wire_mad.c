/* Decoding of MADs on QP1: the common header and the communication manager's messages. */
#include <errno.h>
#include <string.h>

#include "roce_mad.h"

/* Offsets of a CM message's fields from the start of the MAD (IBA 12.6, tables 100-112). */
#define CM_OFF 24			/* the message follows the common header */
#define REQ_SID (CM_OFF + 8)
#define REQ_GUID (CM_OFF + 16)
#define REQ_QKEY (CM_OFF + 28)
#define REQ_QPN (CM_OFF + 32)
#define REQ_PSN (CM_OFF + 44)
#define REQ_PARAMS_END (CM_OFF + 52)	/* after max CM retries, SRQ, extended transport */
#define REQ_PATH (CM_OFF + 52)
#define REQ_PATH_LEN 44
#define REQ_PRIV (CM_OFF + 140)
#define REP_QKEY (CM_OFF + 8)
#define REP_QPN (CM_OFF + 12)
#define REP_PSN (CM_OFF + 20)
#define REP_PARAMS (CM_OFF + 24)
#define REP_PRIV (CM_OFF + 36)
#define REJ_PARAMS (CM_OFF + 8)
#define REJ_PRIV (CM_OFF + 84)
#define MRA_PARAMS (CM_OFF + 8)
#define MRA_PRIV (CM_OFF + 10)
#define DREQ_QPN (CM_OFF + 8)
#define DREQ_PRIV (CM_OFF + 12)
#define RTU_PRIV (CM_OFF + 8)		/* RTU and DREP */
#define SIDR_REQ_PKEY (CM_OFF + 4)
#define SIDR_REQ_SID (CM_OFF + 8)
#define SIDR_REQ_PRIV (CM_OFF + 16)
#define SIDR_REP_STATUS (CM_OFF + 4)
#define SIDR_REP_QPN (CM_OFF + 8)
#define SIDR_REP_SID (CM_OFF + 12)
#define SIDR_REP_QKEY (CM_OFF + 20)
#define SIDR_REP_PRIV (CM_OFF + 96)

/* The MAD's bytes and how many the frame holds: every read goes through has(). */
struct mad_buf {
	const uint8_t *p;
	uint32_t len;
};

static bool has(const struct mad_buf *b, uint32_t off, uint32_t n)
{
	return off + n <= b->len;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | be24(p + 1);
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* Local and remote communication IDs, the first 8 bytes of most messages. */
static void cm_ids(const struct mad_buf *b, struct roce_mad *m, bool remote)
{
	if (has(b, CM_OFF, 4)) {
		m->lcid = be32(b->p + CM_OFF);
		m->have |= ROCE_MAD_HAVE_LCID;
	}
	if (remote && has(b, CM_OFF + 4, 4)) {
		m->rcid = be32(b->p + CM_OFF + 4);
		m->have |= ROCE_MAD_HAVE_RCID;
	}
}

static void cm_priv(const struct mad_buf *b, struct roce_mad *m, uint32_t off)
{
	if (b->len > off) {
		m->priv = b->p + off;
		m->priv_len = b->len - off;
	}
}

/* rdma_cm's header: version, IP version, source port, source and destination address. */
static void req_ipcm(const struct mad_buf *b, struct roce_mad *m)
{
	const uint8_t *h = b->p + REQ_PRIV;
	uint16_t ps, port;
	uint8_t ipv;

	if (!(m->have & ROCE_MAD_HAVE_SID) || !roce_cm_sid_ip(m->service_id, &ps, &port) ||
	    !has(b, REQ_PRIV, ROCE_IPCM_HDR_LEN))
		return;
	ipv = h[1] >> 4;
	if (ipv != 4 && ipv != 6)
		return;
	m->ipcm.version = h[0];
	m->ipcm.ip_ver = ipv;
	m->ipcm.sport = be16(h + 2);
	/* an IPv4 address is the last 4 of the 16 bytes */
	if (ipv == 4) {
		memcpy(m->ipcm.src.b, h + 16, 4);
		memcpy(m->ipcm.dst.b, h + 32, 4);
	} else {
		memcpy(m->ipcm.src.b, h + 4, 16);
		memcpy(m->ipcm.dst.b, h + 20, 16);
	}
	m->have |= ROCE_MAD_HAVE_IPCM;
}

static void req_path(const uint8_t *p, struct roce_cm_path *path)
{
	path->local_lid = be16(p);
	path->remote_lid = be16(p + 2);
	memcpy(path->local_gid.b, p + 4, 16);
	memcpy(path->remote_gid.b, p + 20, 16);
	path->flow_label = be32(p + 36) >> 12;
	path->packet_rate = p[39] & 0x3f;
	path->tclass = p[40];
	path->hop_limit = p[41];
	path->sl = p[42] >> 4;
	path->subnet_local = p[42] >> 3 & 1;
	path->ack_timeout = p[43] >> 3;
}

static void dec_req(const struct mad_buf *b, struct roce_mad *m)
{
	const uint8_t *p = b->p;

	cm_ids(b, m, false);
	if (has(b, REQ_SID, 8)) {
		m->service_id = be64(p + REQ_SID);
		m->have |= ROCE_MAD_HAVE_SID;
	}
	if (has(b, REQ_QKEY, 8)) {
		m->qkey = be32(p + REQ_QKEY);
		m->qpn = be24(p + REQ_QPN);
		m->have |= ROCE_MAD_HAVE_QPN;
	}
	if (has(b, REQ_PSN, 3)) {
		m->start_psn = be24(p + REQ_PSN);
		m->have |= ROCE_MAD_HAVE_PSN;
	}
	if (has(b, CM_OFF, REQ_PARAMS_END - CM_OFF)) {
		m->ca_guid = be64(p + REQ_GUID);
		m->resp_res = p[REQ_QPN + 3];
		m->init_depth = p[CM_OFF + 39];
		m->remote_cm_timeout = p[CM_OFF + 43] >> 3;
		m->transport = p[CM_OFF + 43] >> 1 & 3;
		m->e2e_flow_ctrl = p[CM_OFF + 43] & 1;
		m->local_cm_timeout = p[REQ_PSN + 3] >> 3;
		m->retry_count = p[REQ_PSN + 3] & 7;
		m->pkey = be16(p + CM_OFF + 48);
		m->path_mtu = p[CM_OFF + 50] >> 4;
		m->rnr_retry_count = p[CM_OFF + 50] & 7;
		m->max_cm_retries = p[CM_OFF + 51] >> 4;
		m->srq = p[CM_OFF + 51] >> 3 & 1;
		m->have |= ROCE_MAD_HAVE_REQ;
	}
	if (has(b, REQ_PATH, REQ_PATH_LEN)) {
		req_path(p + REQ_PATH, &m->path);
		m->have |= ROCE_MAD_HAVE_PATH;
	}
	cm_priv(b, m, REQ_PRIV);
	req_ipcm(b, m);
}

static void dec_rep(const struct mad_buf *b, struct roce_mad *m)
{
	const uint8_t *p = b->p;

	cm_ids(b, m, true);
	if (has(b, REP_QKEY, 8)) {
		m->qkey = be32(p + REP_QKEY);
		m->qpn = be24(p + REP_QPN);
		m->have |= ROCE_MAD_HAVE_QPN;
	}
	if (has(b, REP_PSN, 3)) {
		m->start_psn = be24(p + REP_PSN);
		m->have |= ROCE_MAD_HAVE_PSN;
	}
	if (has(b, REP_PARAMS, REP_PRIV - REP_PARAMS)) {
		m->resp_res = p[REP_PARAMS];
		m->init_depth = p[REP_PARAMS + 1];
		m->target_ack_delay = p[REP_PARAMS + 2] >> 3;
		m->failover = p[REP_PARAMS + 2] >> 1 & 3;
		m->e2e_flow_ctrl = p[REP_PARAMS + 2] & 1;
		m->rnr_retry_count = p[REP_PARAMS + 3] >> 5;
		m->srq = p[REP_PARAMS + 3] >> 4 & 1;
		m->ca_guid = be64(p + REP_PARAMS + 4);
		m->have |= ROCE_MAD_HAVE_REP;
	}
	cm_priv(b, m, REP_PRIV);
}

static void dec_rej(const struct mad_buf *b, struct roce_mad *m)
{
	cm_ids(b, m, true);
	if (has(b, REJ_PARAMS, 4)) {
		m->msg = b->p[REJ_PARAMS] >> 6;
		m->rej_info_len = b->p[REJ_PARAMS + 1] >> 1;
		m->reason = be16(b->p + REJ_PARAMS + 2);
		m->have |= ROCE_MAD_HAVE_REJ;
	}
	cm_priv(b, m, REJ_PRIV);
}

static void dec_mra(const struct mad_buf *b, struct roce_mad *m)
{
	cm_ids(b, m, true);
	if (has(b, MRA_PARAMS, 2)) {
		m->msg = b->p[MRA_PARAMS] >> 6;
		m->service_timeout = b->p[MRA_PARAMS + 1] >> 3;
		m->have |= ROCE_MAD_HAVE_MRA;
	}
	cm_priv(b, m, MRA_PRIV);
}

static void dec_dreq(const struct mad_buf *b, struct roce_mad *m)
{
	cm_ids(b, m, true);
	if (has(b, DREQ_QPN, 3)) {
		m->qpn = be24(b->p + DREQ_QPN);
		m->have |= ROCE_MAD_HAVE_QPN;
	}
	cm_priv(b, m, DREQ_PRIV);
}

static void dec_rtu(const struct mad_buf *b, struct roce_mad *m)
{
	cm_ids(b, m, true);
	cm_priv(b, m, RTU_PRIV);
}

static void dec_sidr_req(const struct mad_buf *b, struct roce_mad *m)
{
	cm_ids(b, m, false);
	if (has(b, SIDR_REQ_PKEY, 2)) {
		m->pkey = be16(b->p + SIDR_REQ_PKEY);
		m->have |= ROCE_MAD_HAVE_SIDR;
	}
	if (has(b, SIDR_REQ_SID, 8)) {
		m->service_id = be64(b->p + SIDR_REQ_SID);
		m->have |= ROCE_MAD_HAVE_SID;
	}
	cm_priv(b, m, SIDR_REQ_PRIV);
}

static void dec_sidr_rep(const struct mad_buf *b, struct roce_mad *m)
{
	cm_ids(b, m, false);
	if (has(b, SIDR_REP_QPN, 3)) {
		m->qpn = be24(b->p + SIDR_REP_QPN);
		m->have |= ROCE_MAD_HAVE_QPN;
	}
	if (has(b, SIDR_REP_SID, 8)) {
		m->service_id = be64(b->p + SIDR_REP_SID);
		m->have |= ROCE_MAD_HAVE_SID;
	}
	if (has(b, SIDR_REP_QKEY, 4)) {
		m->sidr_status = b->p[SIDR_REP_STATUS];
		m->qkey = be32(b->p + SIDR_REP_QKEY);
		m->have |= ROCE_MAD_HAVE_SIDR;
	}
	cm_priv(b, m, SIDR_REP_PRIV);
}

/* One row per CM attribute: its name and how its fields are read (NULL: by name only). */
struct cm_attr_info {
	const char *name;
	void (*decode)(const struct mad_buf *b, struct roce_mad *m);
};

static const struct cm_attr_info cm_attr[] = {
	[ROCE_CM_ATTR_CLASS_PORT_INFO] = { "ClassPortInfo", NULL },
	[ROCE_CM_ATTR_REQ] = { "REQ", dec_req },
	[ROCE_CM_ATTR_MRA] = { "MRA", dec_mra },
	[ROCE_CM_ATTR_REJ] = { "REJ", dec_rej },
	[ROCE_CM_ATTR_REP] = { "REP", dec_rep },
	[ROCE_CM_ATTR_RTU] = { "RTU", dec_rtu },
	[ROCE_CM_ATTR_DREQ] = { "DREQ", dec_dreq },
	[ROCE_CM_ATTR_DREP] = { "DREP", dec_rtu },	/* the same layout as the RTU's */
	[ROCE_CM_ATTR_SIDR_REQ] = { "SIDR_REQ", dec_sidr_req },
	[ROCE_CM_ATTR_SIDR_REP] = { "SIDR_REP", dec_sidr_rep },
	[ROCE_CM_ATTR_LAP] = { "LAP", NULL },
	[ROCE_CM_ATTR_APR] = { "APR", NULL },
};

/* IBA 12.6.7.2 table 103; the names are the spec's, shortened. */
static const char *const rej_name[] = {
	[1] = "no-qp",
	[2] = "no-eec",
	[3] = "no-resources",
	[4] = "timeout",
	[5] = "unsupported-request",
	[6] = "invalid-comm-id",
	[7] = "invalid-comm-instance",
	[8] = "invalid-service-id",
	[9] = "invalid-transport-type",
	[10] = "stale-connection",
	[11] = "rdc-not-exist",
	[12] = "primary-gid-rejected",
	[13] = "primary-lid-rejected",
	[14] = "invalid-primary-sl",
	[15] = "invalid-primary-tclass",
	[16] = "invalid-primary-hop-limit",
	[17] = "invalid-primary-rate",
	[18] = "alternate-gid-rejected",
	[19] = "alternate-lid-rejected",
	[20] = "invalid-alternate-sl",
	[21] = "invalid-alternate-tclass",
	[22] = "invalid-alternate-hop-limit",
	[23] = "invalid-alternate-rate",
	[24] = "port-cm-redirect",
	[25] = "port-redirect",
	[26] = "invalid-path-mtu",
	[27] = "insufficient-responder-resources",
	[28] = "consumer-reject",
	[29] = "invalid-rnr-retry",
	[30] = "duplicate-local-comm-id",
	[31] = "unsupported-class-version",
	[32] = "invalid-primary-flow-label",
	[33] = "invalid-alternate-flow-label",
	[35] = "vendor-option-not-supported",
};

/* IBA 13.4.5 table 147: methods, with the response bit (0x80) where it is part of the name. */
static const struct {
	uint8_t method;
	const char *name;
} method_name[] = {
	{ 0x01, "Get" }, { 0x02, "Set" }, { 0x03, "Send" }, { 0x05, "Trap" },
	{ 0x06, "Report" }, { 0x07, "TrapRepress" }, { 0x81, "GetResp" }, { 0x86, "ReportResp" },
};

const char *roce_cm_attr_name(uint16_t attr_id)
{
	return attr_id < ROCE_DIM(cm_attr) ? cm_attr[attr_id].name : NULL;
}

const char *roce_cm_rej_name(uint16_t reason)
{
	return reason < ROCE_DIM(rej_name) ? rej_name[reason] : NULL;
}

const char *roce_mad_method_name(uint8_t method)
{
	for (size_t i = 0; i < ROCE_DIM(method_name); i++)
		if (method_name[i].method == method)
			return method_name[i].name;
	return NULL;
}

bool roce_cm_sid_ip(uint64_t service_id, uint16_t *ps, uint16_t *port)
{
	/* rdma_cm: (RDMA_IB_IP_PS_MASK prefix 0x0000000001000000) | port space << 16 | port */
	if ((service_id & ~0xffffffull) != 0x0000000001000000ull)
		return false;
	*ps = (uint16_t)(service_id >> 16);
	*port = (uint16_t)service_id;
	return true;
}

const char *roce_cm_ps_name(uint16_t ps)
{
	switch (ps) {
	case 0x0106: return "tcp";
	case 0x0111: return "udp";
	case 0x013f: return "ib";
	default: return NULL;
	}
}

int roce_mad_parse(const uint8_t *buf, uint32_t len, struct roce_mad *mad)
{
	struct mad_buf b = { buf, len < ROCE_MAD_LEN ? len : ROCE_MAD_LEN };
	const struct cm_attr_info *info;

	memset(mad, 0, sizeof(*mad));
	mad->len = b.len;
	mad->short_mad = len < ROCE_MAD_LEN;
	if (!has(&b, 0, ROCE_MAD_HDR_LEN))
		return -EINVAL;
	mad->base_version = buf[0];
	mad->mgmt_class = buf[1];
	mad->class_version = buf[2];
	mad->method = buf[3];
	mad->status = be16(buf + 4);
	mad->class_specific = be16(buf + 6);
	mad->tid = be64(buf + 8);
	mad->attr_id = be16(buf + 16);
	mad->attr_mod = be32(buf + 20);
	mad->have = ROCE_MAD_HAVE_HDR;
	if (mad->mgmt_class != ROCE_MAD_CLASS_CM || mad->attr_id >= ROCE_DIM(cm_attr))
		return 0;
	info = &cm_attr[mad->attr_id];
	if (info->decode != NULL)
		info->decode(&b, mad);
	return 0;
}

bool roce_pkt_is_mad(const struct roce_pkt *pkt)
{
	return (pkt->kind == ROCE_KIND_ROCEV2 || pkt->kind == ROCE_KIND_ROCEV1) &&
	       pkt->bth_off != 0 && pkt->opcode == ROCE_OP_UD_SEND_ONLY &&
	       pkt->dqpn == ROCE_GSI_QPN && pkt->payload != NULL &&
	       (pkt->err == ROCE_WERR_OK || pkt->err == ROCE_WERR_ICRC_MISMATCH);
}

int roce_pkt_mad(const struct roce_pkt *pkt, struct roce_mad *mad)
{
	uint32_t n;

	if (!roce_pkt_is_mad(pkt)) {
		memset(mad, 0, sizeof(*mad));
		return -ENOENT;
	}
	n = pkt->payload_len;
	/* a capture's snaplen leaves only what the frame holds past the headers */
	if (pkt->truncated)
		n = pkt->len > pkt->payload_off ? ROCE_MIN(pkt->len - pkt->payload_off, n) : 0;
	return roce_mad_parse(pkt->payload, n, mad);
}
