/* lib/wire: management datagrams on QP1 and the communication manager's messages in them. */
#ifndef ROCE_MAD_H
#define ROCE_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_wire.h"

#define ROCE_GSI_QPN 1			/* IBA 3.5.9: QP1, the general services interface */
#define ROCE_GSI_QKEY 0x80010000u	/* IBA 13.5.3.3: QP1's well-known Q_Key */
#define ROCE_MAD_LEN 256		/* IBA 13.4.2: every MAD is 256 bytes */
#define ROCE_MAD_HDR_LEN 24		/* the common MAD header, IBA 13.4.2 figure 146 */
#define ROCE_MAD_CLASS_CM 0x07		/* management class of the communication manager */
#define ROCE_IPCM_HDR_LEN 36		/* the RDMA IP CM header opening a REQ's private data */

/* CM attribute IDs, IBA 12.6 table 99. */
enum roce_cm_attr {
	ROCE_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	ROCE_CM_ATTR_REQ = 0x0010,
	ROCE_CM_ATTR_MRA = 0x0011,
	ROCE_CM_ATTR_REJ = 0x0012,
	ROCE_CM_ATTR_REP = 0x0013,
	ROCE_CM_ATTR_RTU = 0x0014,
	ROCE_CM_ATTR_DREQ = 0x0015,
	ROCE_CM_ATTR_DREP = 0x0016,
	ROCE_CM_ATTR_SIDR_REQ = 0x0017,
	ROCE_CM_ATTR_SIDR_REP = 0x0018,
	ROCE_CM_ATTR_LAP = 0x0019,
	ROCE_CM_ATTR_APR = 0x001a,
};

/* REJ reason codes, IBA 12.6.7.2 table 103 (rdma_cm sends 28 when nobody listens). */
enum roce_cm_rej_reason {
	ROCE_CM_REJ_NO_QP = 1,
	ROCE_CM_REJ_TIMEOUT = 4,
	ROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	ROCE_CM_REJ_STALE_CONN = 10,
	ROCE_CM_REJ_CONSUMER = 28,
};

/* Which parts of a struct roce_mad were decoded: a part whose bytes are not all there is not. */
enum roce_mad_have {
	ROCE_MAD_HAVE_HDR = 1u << 0,	/* the common header */
	ROCE_MAD_HAVE_LCID = 1u << 1,	/* lcid (SIDR: the request ID) */
	ROCE_MAD_HAVE_RCID = 1u << 2,	/* rcid */
	ROCE_MAD_HAVE_SID = 1u << 3,	/* service_id (REQ, SIDR_REQ, SIDR_REP) */
	ROCE_MAD_HAVE_QPN = 1u << 4,	/* qpn (REQ, REP, DREQ, SIDR_REP), qkey with it */
	ROCE_MAD_HAVE_PSN = 1u << 5,	/* start_psn (REQ, REP) */
	ROCE_MAD_HAVE_REQ = 1u << 6,	/* the REQ's channel parameters: guid ... max_cm_retries */
	ROCE_MAD_HAVE_PATH = 1u << 7,	/* the REQ's primary path */
	ROCE_MAD_HAVE_REP = 1u << 8,	/* the REP's parameters: resp_res ... srq, guid */
	ROCE_MAD_HAVE_REJ = 1u << 9,	/* msg, rej_info_len, reason */
	ROCE_MAD_HAVE_MRA = 1u << 10,	/* msg, service_timeout */
	ROCE_MAD_HAVE_SIDR = 1u << 11,	/* SIDR_REQ: pkey; SIDR_REP: status, qkey */
	ROCE_MAD_HAVE_IPCM = 1u << 12,	/* the RDMA IP CM header of a REQ (ipcm) */
};

/* A REQ's primary path, IBA 12.6.5 table 100. */
struct roce_cm_path {
	uint16_t local_lid;		/* 0xffff on RoCE */
	uint16_t remote_lid;
	struct roce_ip_addr local_gid;	/* the sender's GID, 16 bytes (RoCEv2: ::ffff:a.b.c.d or IPv6) */
	struct roce_ip_addr remote_gid;
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t tclass;			/* traffic class */
	uint8_t hop_limit;
	uint8_t sl;			/* service level, 4 bits */
	bool subnet_local;
	uint8_t ack_timeout;		/* local ACK timeout, 5 bits: 4.096 us * 2^n */
};

/* The RDMA IP CM header at the start of a REQ's private data (rdma_cm's cma_hdr). */
struct roce_cm_ipcm {
	uint8_t version;		/* major in the high nibble, minor in the low; 0 */
	uint8_t ip_ver;			/* 4 or 6 */
	uint16_t sport;			/* the active side's port */
	struct roce_ip_addr src;	/* IPv4 in the first 4 bytes, as everywhere in lib/wire */
	struct roce_ip_addr dst;
};

/*
 * A decoded MAD: the common header and, for the CM class, the fields of its message. A field
 * is valid only when @have has its part's bit; the rest are 0.
 */
struct roce_mad {
	uint32_t have;			/* enum roce_mad_have bits */
	uint32_t len;			/* bytes of the MAD the frame holds, at most ROCE_MAD_LEN */
	bool short_mad;			/* the frame holds less than ROCE_MAD_LEN bytes of it */

	/* common header, IBA 13.4.2 */
	uint8_t base_version;		/* 1 */
	uint8_t mgmt_class;		/* ROCE_MAD_CLASS_CM, ... */
	uint8_t class_version;		/* 2 for the CM */
	uint8_t method;			/* R bit and method: 0x03 Send, 0x81 GetResp, ... */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;			/* transaction ID */
	uint16_t attr_id;		/* enum roce_cm_attr for the CM */
	uint32_t attr_mod;		/* attribute modifier */

	/* CM messages, IBA 12.6 */
	uint32_t lcid;			/* local communication ID; SIDR: request ID */
	uint32_t rcid;			/* remote communication ID */
	uint64_t service_id;
	uint64_t ca_guid;		/* local CA GUID */
	uint32_t qkey;			/* local Q_Key (REQ, REP, SIDR_REP) */
	uint32_t qpn;			/* local QPN; DREQ: remote QPN/EECN; SIDR_REP: QPN */
	uint32_t start_psn;		/* starting PSN, 24 bits */
	uint8_t resp_res;		/* responder resources */
	uint8_t init_depth;		/* initiator depth */
	uint8_t remote_cm_timeout;	/* REQ: remote CM response timeout, 5 bits */
	uint8_t local_cm_timeout;	/* REQ: local CM response timeout, 5 bits */
	uint8_t transport;		/* REQ: transport service type (0 RC, 1 UC, 3 XRC) */
	bool e2e_flow_ctrl;		/* end-to-end flow control */
	uint8_t retry_count;		/* REQ: 3 bits */
	uint8_t rnr_retry_count;	/* REQ, REP: 3 bits */
	uint16_t pkey;			/* REQ, SIDR_REQ: partition key */
	uint8_t path_mtu;		/* REQ: 1 = 256 ... 5 = 4096 */
	uint8_t max_cm_retries;		/* REQ: 4 bits */
	bool srq;			/* REQ, REP: the QP has an SRQ */
	struct roce_cm_path path;	/* REQ: primary path */
	uint8_t target_ack_delay;	/* REP: 5 bits */
	uint8_t failover;		/* REP: failover accepted, 2 bits */
	uint8_t msg;			/* REJ: message rejected, MRA: message MRAed (0 REQ, 1 REP, 2 LAP) */
	uint8_t rej_info_len;		/* REJ: additional rejection information length */
	uint16_t reason;		/* REJ: enum roce_cm_rej_reason */
	uint8_t service_timeout;	/* MRA: 5 bits */
	uint8_t sidr_status;		/* SIDR_REP: 0 = QP valid */
	struct roce_cm_ipcm ipcm;	/* REQ to an RDMA IP CM service ID: the IP CM header */
	const uint8_t *priv;		/* private data, into the frame; NULL if not reached */
	uint32_t priv_len;		/* its bytes in the frame (may be fewer than the message has) */
};

/**
 * Does @p pkt carry a MAD to the GSI: a UD SEND Only (RoCEv2 or v1) to QP 1 parsed through its
 * headers (no fault, or only a wrong ICRC)? A capture's snaplen may have cut its payload.
 * @param pkt  the result of roce_wire_parse(); borrowed
 */
bool roce_pkt_is_mad(const struct roce_pkt *pkt);

/**
 * Decode a MAD without copying: the common header and, for the CM class, every field of its
 * message that @p len bytes hold. A short or malformed MAD is decoded as far as it goes
 * (mad->have, mad->short_mad); nothing past @p len is read.
 * @param buf  the UD payload; borrowed: mad->priv points into it
 * @return 0; -EINVAL if @p len is shorter than the common header (mad->have is then 0)
 */
int roce_mad_parse(const uint8_t *buf, uint32_t len, struct roce_mad *mad);

/**
 * roce_mad_parse() of a parsed frame's payload, as much of it as the frame holds.
 * @return 0; -ENOENT if roce_pkt_is_mad() is false; -EINVAL as roce_mad_parse()
 */
int roce_pkt_mad(const struct roce_pkt *pkt, struct roce_mad *mad);

/** "REQ", "REP", "DREQ", ... for a CM attribute ID; NULL if unknown. */
const char *roce_cm_attr_name(uint16_t attr_id);

/** "consumer-reject", "timeout", ... for a REJ reason; NULL if unknown. */
const char *roce_cm_rej_name(uint16_t reason);

/** "Send", "GetResp", ... for a MAD method byte; NULL if unknown. */
const char *roce_mad_method_name(uint8_t method);

/**
 * Is @p service_id an RDMA IP CM service ID, 0x0000000001PPNNNN (port space 0x01PP, port
 * NNNN)? Then @p ps gets the port space (0x0106 TCP, 0x0111 UDP, 0x013f IB) and @p port the port.
 */
bool roce_cm_sid_ip(uint64_t service_id, uint16_t *ps, uint16_t *port);

/** "tcp", "udp", "ib" for an RDMA IP CM port space; NULL if unknown. */
const char *roce_cm_ps_name(uint16_t ps);

#endif /* ROCE_MAD_H */
