/* lib/wire: RoCEv2 (and RoCEv1, PFC, PAUSE) frames to and from bytes, and the ICRC. */
#ifndef ROCE_WIRE_H
#define ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf_core.h>

#include "roce_common.h"

struct rte_mbuf;

#define ROCE_UDP_PORT 4791		/* IANA: RoCEv2 */
#define ROCE_ETHERTYPE_V1 0x8915	/* RoCEv1: GRH directly over Ethernet */
#define ROCE_ETHERTYPE_MAC_CTRL 0x8808	/* IEEE 802.3 MAC control (PAUSE, PFC) */
#define ROCE_MAC_CTRL_PAUSE 0x0001	/* IEEE 802.3x PAUSE opcode */
#define ROCE_MAC_CTRL_PFC 0x0101	/* IEEE 802.1Qbb PFC opcode */
#define ROCE_PFC_FRAME_LEN 60		/* a PFC or PAUSE frame (no FCS): 802.3's minimum frame */
#define ROCE_PFC_QUANTUM_BITS 512	/* IEEE 802.3 31B.2: one pause quantum, in bit times */
#define ROCE_MAX_VLANS 2		/* 802.1Q tags parsed (QinQ) */
#define ROCE_ICRC_LEN 4
#define ROCE_BTH_LEN 12
#define ROCE_GRH_LEN 40
#define ROCE_PSN_MASK 0xffffffu		/* PSNs are 24 bits */
#define ROCE_QPN_MASK 0xffffffu

/* Extended header sizes, IBA 9.3. */
#define ROCE_RDETH_LEN 4
#define ROCE_DETH_LEN 8
#define ROCE_XRCETH_LEN 4
#define ROCE_RETH_LEN 16
#define ROCE_ATMETH_LEN 28
#define ROCE_AETH_LEN 4
#define ROCE_ATMACK_LEN 8
#define ROCE_IMMDT_LEN 4
#define ROCE_IETH_LEN 4
#define ROCE_FETH_LEN 4
#define ROCE_CNP_PAD_LEN 16		/* CNP: 16 reserved bytes after the BTH */

/* BTH opcodes, IBA 9.2 table 38 (RC, UC, RD, UD, XRC) and the RoCEv2 CNP (Annex A17.9.2). */
enum roce_opcode {
	ROCE_OP_RC_SEND_FIRST = 0x00,
	ROCE_OP_RC_SEND_MIDDLE = 0x01,
	ROCE_OP_RC_SEND_LAST = 0x02,
	ROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE = 0x03,
	ROCE_OP_RC_SEND_ONLY = 0x04,
	ROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE = 0x05,
	ROCE_OP_RC_RDMA_WRITE_FIRST = 0x06,
	ROCE_OP_RC_RDMA_WRITE_MIDDLE = 0x07,
	ROCE_OP_RC_RDMA_WRITE_LAST = 0x08,
	ROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
	ROCE_OP_RC_RDMA_WRITE_ONLY = 0x0a,
	ROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0b,
	ROCE_OP_RC_RDMA_READ_REQUEST = 0x0c,
	ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST = 0x0d,
	ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE = 0x0e,
	ROCE_OP_RC_RDMA_READ_RESPONSE_LAST = 0x0f,
	ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY = 0x10,
	ROCE_OP_RC_ACKNOWLEDGE = 0x11,
	ROCE_OP_RC_ATOMIC_ACKNOWLEDGE = 0x12,
	ROCE_OP_RC_COMPARE_SWAP = 0x13,
	ROCE_OP_RC_FETCH_ADD = 0x14,
	ROCE_OP_RC_SEND_LAST_WITH_INVALIDATE = 0x16,
	ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE = 0x17,
	ROCE_OP_RC_FLUSH = 0x1c,		/* IBA 1.5 */
	ROCE_OP_RC_ATOMIC_WRITE = 0x1d,		/* IBA 1.5 */
	ROCE_OP_UC_SEND_FIRST = 0x20,
	ROCE_OP_UC_SEND_MIDDLE = 0x21,
	ROCE_OP_UC_SEND_LAST = 0x22,
	ROCE_OP_UC_SEND_LAST_WITH_IMMEDIATE = 0x23,
	ROCE_OP_UC_SEND_ONLY = 0x24,
	ROCE_OP_UC_SEND_ONLY_WITH_IMMEDIATE = 0x25,
	ROCE_OP_UC_RDMA_WRITE_FIRST = 0x26,
	ROCE_OP_UC_RDMA_WRITE_MIDDLE = 0x27,
	ROCE_OP_UC_RDMA_WRITE_LAST = 0x28,
	ROCE_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29,
	ROCE_OP_UC_RDMA_WRITE_ONLY = 0x2a,
	ROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2b,
	ROCE_OP_RD_SEND_FIRST = 0x40,
	ROCE_OP_RD_SEND_MIDDLE = 0x41,
	ROCE_OP_RD_SEND_LAST = 0x42,
	ROCE_OP_RD_SEND_LAST_WITH_IMMEDIATE = 0x43,
	ROCE_OP_RD_SEND_ONLY = 0x44,
	ROCE_OP_RD_SEND_ONLY_WITH_IMMEDIATE = 0x45,
	ROCE_OP_RD_RDMA_WRITE_FIRST = 0x46,
	ROCE_OP_RD_RDMA_WRITE_MIDDLE = 0x47,
	ROCE_OP_RD_RDMA_WRITE_LAST = 0x48,
	ROCE_OP_RD_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x49,
	ROCE_OP_RD_RDMA_WRITE_ONLY = 0x4a,
	ROCE_OP_RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x4b,
	ROCE_OP_RD_RDMA_READ_REQUEST = 0x4c,
	ROCE_OP_RD_RDMA_READ_RESPONSE_FIRST = 0x4d,
	ROCE_OP_RD_RDMA_READ_RESPONSE_MIDDLE = 0x4e,
	ROCE_OP_RD_RDMA_READ_RESPONSE_LAST = 0x4f,
	ROCE_OP_RD_RDMA_READ_RESPONSE_ONLY = 0x50,
	ROCE_OP_RD_ACKNOWLEDGE = 0x51,
	ROCE_OP_RD_ATOMIC_ACKNOWLEDGE = 0x52,
	ROCE_OP_RD_COMPARE_SWAP = 0x53,
	ROCE_OP_RD_FETCH_ADD = 0x54,
	ROCE_OP_RD_RESYNC = 0x55,
	ROCE_OP_UD_SEND_ONLY = 0x64,
	ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE = 0x65,
	ROCE_OP_CNP = 0x81,
	ROCE_OP_XRC_SEND_FIRST = 0xa0,
	ROCE_OP_XRC_SEND_MIDDLE = 0xa1,
	ROCE_OP_XRC_SEND_LAST = 0xa2,
	ROCE_OP_XRC_SEND_LAST_WITH_IMMEDIATE = 0xa3,
	ROCE_OP_XRC_SEND_ONLY = 0xa4,
	ROCE_OP_XRC_SEND_ONLY_WITH_IMMEDIATE = 0xa5,
	ROCE_OP_XRC_RDMA_WRITE_FIRST = 0xa6,
	ROCE_OP_XRC_RDMA_WRITE_MIDDLE = 0xa7,
	ROCE_OP_XRC_RDMA_WRITE_LAST = 0xa8,
	ROCE_OP_XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0xa9,
	ROCE_OP_XRC_RDMA_WRITE_ONLY = 0xaa,
	ROCE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0xab,
	ROCE_OP_XRC_RDMA_READ_REQUEST = 0xac,
	ROCE_OP_XRC_RDMA_READ_RESPONSE_FIRST = 0xad,
	ROCE_OP_XRC_RDMA_READ_RESPONSE_MIDDLE = 0xae,
	ROCE_OP_XRC_RDMA_READ_RESPONSE_LAST = 0xaf,
	ROCE_OP_XRC_RDMA_READ_RESPONSE_ONLY = 0xb0,
	ROCE_OP_XRC_ACKNOWLEDGE = 0xb1,
	ROCE_OP_XRC_ATOMIC_ACKNOWLEDGE = 0xb2,
	ROCE_OP_XRC_COMPARE_SWAP = 0xb3,
	ROCE_OP_XRC_FETCH_ADD = 0xb4,
	ROCE_OP_XRC_SEND_LAST_WITH_INVALIDATE = 0xb6,
	ROCE_OP_XRC_SEND_ONLY_WITH_INVALIDATE = 0xb7,
};

/* What an opcode carries and means; the bits of roce_opcode_info.mask. */
enum roce_op_flag {
	ROCE_F_DETH = 1u << 0,		/* Datagram ETH follows the BTH */
	ROCE_F_RETH = 1u << 1,		/* RDMA ETH */
	ROCE_F_ATMETH = 1u << 2,	/* Atomic ETH */
	ROCE_F_AETH = 1u << 3,		/* ACK ETH */
	ROCE_F_ATMACK = 1u << 4,	/* Atomic ACK ETH */
	ROCE_F_IMMDT = 1u << 5,		/* immediate data */
	ROCE_F_IETH = 1u << 6,		/* invalidate ETH */
	ROCE_F_FETH = 1u << 7,		/* flush ETH (IBA 1.5) */
	ROCE_F_PAYLOAD = 1u << 8,	/* a payload may follow the headers */
	ROCE_F_FIRST = 1u << 9,		/* first packet of a multi-packet message */
	ROCE_F_MIDDLE = 1u << 10,	/* middle packet */
	ROCE_F_LAST = 1u << 11,		/* last packet */
	ROCE_F_ONLY = ROCE_F_FIRST | ROCE_F_LAST, /* single-packet message */
	ROCE_F_REQ = 1u << 12,		/* sent by a requester */
	ROCE_F_RESP = 1u << 13,		/* sent by a responder */
	ROCE_F_SEND = 1u << 14,		/* SEND family: consumes a receive WQE */
	ROCE_F_WRITE = 1u << 15,	/* RDMA WRITE family */
	ROCE_F_READ = 1u << 16,		/* RDMA READ request or response */
	ROCE_F_ATOMIC = 1u << 17,	/* atomic request or response */
	ROCE_F_ACK = 1u << 18,		/* ACKNOWLEDGE / ATOMIC ACKNOWLEDGE */
	ROCE_F_CNP = 1u << 19,		/* congestion notification packet */
	ROCE_F_FLUSH = 1u << 20,	/* FLUSH request */
	ROCE_F_RC = 1u << 21,		/* reliable connected */
	ROCE_F_UC = 1u << 22,		/* unreliable connected */
	ROCE_F_UD = 1u << 23,		/* unreliable datagram */
	ROCE_F_PAYLOAD_FIXED = 1u << 24, /* payload has a fixed length (ATOMIC_WRITE: 8) */
	ROCE_F_RDETH = 1u << 25,	/* Reliable Datagram ETH */
	ROCE_F_XRCETH = 1u << 26,	/* XRC ETH: the XRC SRQ number */
	ROCE_F_RD = 1u << 27,		/* reliable datagram (dissected only) */
	ROCE_F_XRC = 1u << 28,		/* extended reliable connected (dissected only) */
};

/* Index into roce_opcode_info.ext_off, in on-the-wire order (IBA 9.2). */
enum roce_ext {
	ROCE_EXT_RDETH,
	ROCE_EXT_DETH,
	ROCE_EXT_XRCETH,
	ROCE_EXT_FETH,		/* precedes the RETH in FLUSH */
	ROCE_EXT_RETH,
	ROCE_EXT_ATMETH,
	ROCE_EXT_AETH,
	ROCE_EXT_ATMACK,
	ROCE_EXT_IMMDT,
	ROCE_EXT_IETH,
	ROCE_EXT_NUM,
};

/* One row of the opcode table: everything lib/wire knows of an opcode. */
struct roce_opcode_info {
	const char *name;	/* IBTA name, e.g. "RC_RDMA_WRITE_FIRST"; NULL: not a valid opcode */
	uint32_t mask;		/* enum roce_op_flag bits */
	uint8_t hdr_len;	/* BTH plus every extended header, in bytes */
	uint8_t ext_off[ROCE_EXT_NUM]; /* offset after the BTH of each extended header, by ROCE_EXT_* */
};

/** The opcode table, indexed by BTH opcode; rows with name == NULL are invalid opcodes. */
extern const struct roce_opcode_info roce_opcode[256];

/** Opcode number for an IBTA name ("RC_SEND_ONLY", case-insensitive), or -1. */
int roce_opcode_by_name(const char *name);

/* AETH syndrome, IBA 9.7.5.1.2 (table 43): 3 bits of kind, 5 of value. */
enum roce_aeth_kind {
	ROCE_AETH_ACK = 0,	/* value: credit count (31 = no end-to-end credits) */
	ROCE_AETH_RNR_NAK = 1,	/* value: RNR timer code */
	ROCE_AETH_RSVD = 2,
	ROCE_AETH_NAK = 3,	/* value: NAK code, enum roce_nak_code */
};

enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REM_ACCESS = 2,
	ROCE_NAK_REM_OP_ERR = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

static inline enum roce_aeth_kind roce_aeth_kind(uint8_t syndrome)
{
	return (enum roce_aeth_kind)((syndrome >> 5) & 3);
}

/** Printable name of an AETH syndrome: "ACK", "RNR_NAK", "NAK_PSN_SEQ_ERR", ... */
const char *roce_aeth_name(uint8_t syndrome);

/** RNR timer value in nanoseconds for a 5-bit code, IBA 9.7.5.2.8 table 45. */
uint64_t roce_rnr_timer_ns(uint8_t code);

/* What a frame is. */
enum roce_kind {
	ROCE_KIND_OTHER,	/* not RoCE and not MAC control */
	ROCE_KIND_ROCEV2,	/* IP/UDP 4791/BTH */
	ROCE_KIND_ROCEV1,	/* Ethertype 0x8915/GRH/BTH */
	ROCE_KIND_PFC,		/* 802.1Qbb priority flow control */
	ROCE_KIND_PAUSE,	/* 802.3x PAUSE */
};

/** "rocev2", "rocev1", "pfc", "pause", "other". */
const char *roce_kind_name(enum roce_kind kind);

/* Every way a frame can be refused; each has a printable name (roce_wire_strerror). */
enum roce_wire_err {
	ROCE_WERR_OK,
	ROCE_WERR_TRUNCATED,		/* frame ends inside a header */
	ROCE_WERR_NOT_ROCE,		/* well-formed, but not RoCE, PFC or PAUSE */
	ROCE_WERR_TOO_MANY_VLANS,	/* more than ROCE_MAX_VLANS 802.1Q tags */
	ROCE_WERR_BAD_IP_VERSION,	/* Ethertype and IP version disagree */
	ROCE_WERR_BAD_IP_HDR_LEN,	/* IPv4 IHL < 5 */
	ROCE_WERR_BAD_IP_LEN,		/* IP total/payload length beyond the frame or too short */
	ROCE_WERR_BAD_IP_CSUM,		/* IPv4 header checksum wrong */
	ROCE_WERR_IP_FRAGMENT,		/* fragmented IPv4: RoCEv2 never fragments */
	ROCE_WERR_BAD_UDP_LEN,		/* UDP length disagrees with the IP length */
	ROCE_WERR_BAD_GRH,		/* RoCEv1 GRH: bad version or next header */
	ROCE_WERR_UNKNOWN_OPCODE,	/* BTH opcode not in the table */
	ROCE_WERR_BAD_TVER,		/* BTH transport version not 0 */
	ROCE_WERR_BAD_PAD,		/* pad count with no room, or pad on a no-payload opcode */
	ROCE_WERR_BAD_PAYLOAD_LEN,	/* payload where the opcode allows none, or wrong fixed size */
	ROCE_WERR_ICRC_MISMATCH,	/* stored ICRC differs from the computed one */
	ROCE_WERR_BAD_MAC_CTRL,		/* MAC control frame with an unknown opcode */
	ROCE_WERR_NUM,
};

/** Printable name of a parse fault: "truncated", "icrc-mismatch", ... */
const char *roce_wire_strerror(enum roce_wire_err err);

/* An IPv4 or IPv6 address; IPv4 in the first 4 bytes. */
struct roce_ip_addr {
	uint8_t b[16];
};

/*
 * A frame's decoded headers. roce_wire_parse() fills it from bytes (host byte order,
 * pointers into the frame); roce_wire_build() reads it to write bytes.
 */
struct roce_pkt {
	enum roce_kind kind;		/* what the frame is */
	enum roce_wire_err err;		/* why parsing stopped, ROCE_WERR_OK if it did not */
	uint32_t len;			/* frame length in bytes (no FCS) */
	bool truncated;			/* ROCE_PARSE_CAPTURE: @len bytes hold less than the IP
					 * length says (a snaplen): lengths are the IP header's,
					 * the payload is not all there, the ICRC is not checked */

	/* Ethernet and 802.1Q */
	uint8_t dmac[6];		/* destination MAC */
	uint8_t smac[6];		/* source MAC */
	uint8_t nvlan;			/* number of 802.1Q tags, 0..ROCE_MAX_VLANS */
	struct {
		uint16_t tpid;		/* 0x8100 or 0x88a8 */
		uint8_t pcp;		/* priority code point */
		uint8_t dei;		/* drop eligible */
		uint16_t vid;		/* VLAN id */
	} vlan[ROCE_MAX_VLANS];
	uint16_t ethertype;		/* inner Ethertype */

	/* IPv4 / IPv6, or the RoCEv1 GRH (ip_ver 6 then) */
	uint8_t ip_ver;			/* 4 or 6; 0 if no IP header */
	uint8_t dscp;			/* DSCP, or the top 6 bits of the traffic class */
	uint8_t ecn;			/* ECN field: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE */
	uint8_t ttl;			/* TTL or hop limit */
	uint16_t ip_id;			/* IPv4 identification */
	bool ip_df;			/* IPv4 don't-fragment */
	uint16_t ip_csum;		/* IPv4 header checksum as stored */
	uint32_t flow_label;		/* IPv6 / GRH flow label */
	struct roce_ip_addr src;	/* source address */
	struct roce_ip_addr dst;	/* destination address */

	/* UDP */
	uint16_t sport;			/* source port (entropy for ECMP) */
	uint16_t dport;			/* destination port, 4791 */
	uint16_t udp_csum;		/* as stored; RoCEv2 senders mostly put 0 */

	/* BTH, IBA 9.2 */
	uint8_t opcode;
	bool se;			/* solicited event */
	bool mig;			/* MigReq */
	uint8_t pad;			/* pad count, 0..3 */
	uint8_t tver;			/* transport header version, 0 */
	uint16_t pkey;			/* partition key */
	bool fecn;			/* forward ECN (RoCEv2: unused, resv) */
	bool becn;			/* backward ECN (CNP sets it) */
	uint8_t resv6;			/* the 6 reserved bits beside FECN/BECN */
	uint32_t dqpn;			/* destination QP, 24 bits */
	bool ackreq;			/* acknowledge request */
	uint8_t resv7;			/* the 7 reserved bits before the PSN */
	uint32_t psn;			/* packet sequence number, 24 bits */

	/* Extended headers; valid when roce_opcode[opcode].mask says so */
	uint32_t rdeth_eecnxt;		/* RDETH: end-to-end context, 24 bits */
	struct {
		uint32_t qkey;
		uint32_t srcqp;		/* 24 bits */
	} deth;
	uint32_t xrc_srqn;		/* XRCETH: the XRC SRQ the message goes to, 24 bits */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t dmalen;
	} reth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap;		/* swap or add data */
		uint64_t cmp;		/* compare data */
	} atmeth;
	struct {
		uint8_t syndrome;
		uint32_t msn;		/* 24 bits */
	} aeth;
	uint64_t atmack_orig;		/* original remote data */
	uint32_t immdt;			/* immediate data, as a big-endian number */
	uint32_t ieth_rkey;		/* rkey to invalidate */
	uint32_t feth;			/* flush ETH: selectivity level and placement type */

	/* Payload and ICRC */
	const uint8_t *payload;		/* parse: into the frame; build: source bytes, NULL for a pattern */
	uint32_t payload_len;		/* without pad and ICRC */
	uint32_t icrc;			/* stored ICRC, the 4 bytes read as little-endian */
	uint32_t icrc_calc;		/* computed ICRC (parse); 0 if not computed */
	bool icrc_ok;			/* parse: stored equals computed */

	/* Offsets of the layers in the frame (parse) */
	const uint8_t *frame;		/* parse: the frame's first byte, its headers' base (a
					 * payload received by reference is elsewhere: @payload) */
	uint16_t l3_off;		/* IP header or GRH */
	uint16_t l4_off;		/* UDP header (RoCEv2); past IPv6 extension headers, if any */
	uint16_t bth_off;		/* BTH; 0 if the frame ends before a whole BTH */
	uint16_t payload_off;		/* first payload byte */

	/* MAC control */
	uint16_t pfc_cev;		/* PFC class-enable vector (bit n: priority n) */
	uint16_t quanta[8];		/* PFC quanta per priority; quanta[0] for PAUSE */
};

/* roce_wire_parse() flags */
#define ROCE_PARSE_NO_ICRC 0x1u		/* do not compute the ICRC (icrc_ok stays false) */
#define ROCE_PARSE_ICRC_CHECKED 0x2u	/* the ICRC is known good (the frame bears
					 * roce_wire_icrc_good): take it as checked,
					 * even a zero one left for later */
#define ROCE_PARSE_CAPTURE 0x4u		/* reading a capture, not receiving: decode what a
					 * snaplen left of a frame (pkt->truncated) and RoCEv2
					 * behind IPv6 extension headers; the ICRC of either is
					 * not checked (icrc_calc 0, icrc_ok false) */

/*
 * ICRC offload on a wire that never leaves the process, as a NIC's receive checksum offload
 * or Linux's CHECKSUM_UNNECESSARY on loopback and veth: the sending NIC sets this DPDK dynamic
 * mbuf flag on every frame it built (its ICRC computed, or left for later: roce_wire_icrc_partial),
 * and anything that writes a byte the ICRC covers clears it (a link's corruption impairment
 * does; a switch's TTL and ECN rewrites touch only masked fields). The receiving NIC then
 * parses with ROCE_PARSE_ICRC_CHECKED instead of computing the CRC; a frame without the flag
 * (from a real port, a replayed capture, a corrupting link) is checked in full. 0 until
 * roce_wire_icrc_flags_register() has run; mbufs from rte_pktmbuf_alloc() never bear it.
 */
extern uint64_t roce_wire_icrc_good;

/*
 * ICRC offload on transmit, as Linux's CHECKSUM_PARTIAL: a frame whose ICRC is still to be
 * written (roce_wire_tmpl_build_mbuf_partial(): its trailer is zero; _zc(): not written) bears
 * this DPDK dynamic mbuf flag, and roce_wire_icrc_good with it. Whatever reads the frame's
 * bytes, or sends them out of the process, calls roce_wire_icrc_settle() first: a link does at
 * its capture tap, before its corruption impairment, and before it hands a frame to an end
 * that does not take such frames (struct roce_link_end.icrc_partial); the pcap writer and the
 * DPDK port's transmit do too. A frame nobody looks at (NIC to switch to NIC, uncaptured)
 * never has its ICRC computed: the receiving NIC trusts it, as it trusts roce_wire_icrc_good.
 */
extern uint64_t roce_wire_icrc_partial;

/**
 * Register roce_wire_icrc_good and roce_wire_icrc_partial (once; EAL initialised).
 * @return 0 or a negative errno
 */
int roce_wire_icrc_flags_register(void);

/**
 * The bytes of the frame @p m (rte_pktmbuf_pkt_len() of them) in one piece: its own if it is one
 * segment, else a copy in a per-thread buffer that the next call overwrites; NULL if the frame
 * is over 65536 bytes.
 */
const uint8_t *roce_wire_mbuf_bytes(const struct rte_mbuf *m);

/**
 * Write the ICRC of @p m, which bears roce_wire_icrc_partial, and clear the flag. A frame whose
 * last segment other frames share (roce_wire_tmpl_build_mbuf_zc()'s trailer) first gets a copy
 * of it, from the segment's pool. @return 0, or -ENOBUFS if that pool is empty: the frame is
 * unchanged and still bears the flag
 */
int roce_wire_icrc_fill(struct rte_mbuf *m);

/**
 * roce_wire_icrc_fill() of a frame in one piece, @p len bytes at @p frame (a copy of a frame
 * that could not be filled itself).
 */
void roce_wire_icrc_put(uint8_t *frame, uint32_t len);

/** Make @p m's bytes whole: its ICRC written if it was left for later. @return as _fill() */
static inline int roce_wire_icrc_settle(struct rte_mbuf *m)
{
	if (roce_unlikely(m->ol_flags & roce_wire_icrc_partial))
		return roce_wire_icrc_fill(m);
	return 0;
}

/**
 * Parse an Ethernet/[802.1Q]/IPv4|IPv6/UDP(4791)/BTH frame, a RoCEv1 frame, a PFC or a PAUSE
 * frame, without copying or allocating.
 * @param buf    frame bytes (no FCS); borrowed: pkt->payload points into it
 * @param len    frame length
 * @param flags  ROCE_PARSE_* bits
 * @param pkt    filled with every header decoded up to the fault, if any
 * @return 0; -EINVAL for a malformed or non-RoCE frame (pkt->err tells which fault; kind
 *         stays ROCE_KIND_OTHER for ROCE_WERR_NOT_ROCE); -EBADMSG for an ICRC mismatch (the frame
 *         is otherwise decoded). With ROCE_PARSE_CAPTURE, a frame cut inside its extended
 *         headers is -EINVAL (ROCE_WERR_TRUNCATED) with the BTH decoded, and one cut after them
 *         is 0 with pkt->truncated: pkt->payload then holds only @p len - payload_off bytes.
 */
int roce_wire_parse(const uint8_t *buf, uint32_t len, unsigned int flags, struct roce_pkt *pkt);

/**
 * A receiving NIC's parse: the same return value and pkt->err as roce_wire_parse(buf, len, 0,
 * pkt) for every input, but an untagged, well-formed RoCEv2 frame with a good ICRC gets only the
 * fields a transport reads: kind, err, len, dmac, smac, nvlan, ip_ver, dscp, ecn, ttl, src, dst
 * (all 16 bytes), sport, dport, the BTH's opcode, se, pad, becn, dqpn, ackreq and psn, the
 * extended headers of the opcode, payload, payload_len, icrc, icrc_calc, icrc_ok and the offsets
 * l3_off, l4_off, bth_off, payload_off. The other fields are left as they were (no memset of
 * the whole descriptor and no decoding of what nobody reads, for the per-frame cost); any other
 * frame is decoded in full by roce_wire_parse().
 * @param buf    frame bytes (no FCS); borrowed: pkt->payload points into it
 * @param flags  0 or ROCE_PARSE_ICRC_CHECKED (then icrc_calc = icrc and icrc_ok without
 *               computing it, on the fast path or off it, as roce_wire_parse() with that flag)
 * @return as roce_wire_parse()
 */
int roce_wire_parse_rx(const uint8_t *buf, uint32_t len, unsigned int flags, struct roce_pkt *pkt);

/**
 * roce_wire_parse_rx() of a frame in three segments as roce_wire_tmpl_build_mbuf_zc() makes
 * them, whose ICRC the sender vouches for (@p flags has ROCE_PARSE_ICRC_CHECKED): pkt->payload
 * points into the second segment, and the third is not read (the frame's pkt_len and nb_segs
 * say how long it is): pkt->icrc and pkt->icrc_calc are 0, as a NIC that offloads the ICRC
 * hands up no ICRC, and the frame's is perhaps not yet written (roce_wire_icrc_partial).
 * @return as roce_wire_parse_rx(); -EAGAIN for any other frame: gather it into one segment and
 *         call roce_wire_parse_rx()
 */
int roce_wire_parse_rx_chain(const struct rte_mbuf *m, unsigned int flags, struct roce_pkt *pkt);

/** Default values for a frame to build: MACs, 10.0.0.1→10.0.0.2, TTL 64, pkey 0xffff, ... */
void roce_pkt_init(struct roce_pkt *pkt, enum roce_kind kind, uint8_t opcode);

/* roce_wire_build() flags */
#define ROCE_BUILD_BAD_ICRC 0x1u	/* store the complement of the right ICRC */
#define ROCE_BUILD_KEEP_PAD 0x2u	/* use pkt->pad as given rather than (-payload_len) & 3 */
#define ROCE_BUILD_KEEP_IP_CSUM 0x4u	/* write pkt->ip_csum rather than the right checksum */
#define ROCE_BUILD_KEEP_ICRC 0x8u	/* store pkt->icrc rather than computing it */

/**
 * Serialise @p pkt into @p buf: Ethernet, VLANs, IP (with checksum), UDP (with length), BTH,
 * the extended headers the opcode needs, the payload (pkt->payload, or an incrementing byte
 * pattern if NULL), pad and ICRC. PFC and PAUSE frames are padded to 60 bytes.
 * @param pkt   borrowed
 * @param buf   written; @p size bytes available
 * Malformed frames are built on purpose when asked (an unknown opcode gets a bare BTH, a payload
 * on an opcode without one is written): that is how craft makes test inputs.
 * @return frame length; -EINVAL (not a buildable kind, IP version not 4/6, more than
 *         ROCE_MAX_VLANS tags, frame over 65535 bytes), -ENOSPC (frame does not fit in @p size)
 */
int roce_wire_build(const struct roce_pkt *pkt, unsigned int flags, uint8_t *buf, uint32_t size);

/**
 * Like roce_wire_build(), into an empty mbuf (appends to its data).
 * @return frame length; the errors of roce_wire_build(), -ENOSPC if the mbuf is too small
 */
int roce_wire_build_mbuf(const struct roce_pkt *pkt, unsigned int flags, struct rte_mbuf *m);

/** Length of the frame roce_wire_build() would write, or -EINVAL. */
int roce_wire_frame_len(const struct roce_pkt *pkt, unsigned int flags);

#define ROCE_TMPL_HDR_MAX 64	/* Ethernet + IPv6 + UDP: the most a template holds */

/*
 * A sender's header template: the Ethernet, IP and UDP headers of a RoCEv2 frame to one
 * destination, built once by roce_wire_build(). roce_wire_tmpl_build() then writes a frame by
 * copying them, patching the lengths and the IPv4 checksum, and writing the BTH, extended
 * headers, payload, pad and ICRC: the bytes are those roce_wire_build() would write.
 */
struct roce_wire_tmpl {
	uint8_t hdr[ROCE_TMPL_HDR_MAX];	/* the headers, up to the BTH */
	uint16_t bth_off;		/* their length: offset of the BTH */
	uint16_t l3_off;		/* offset of the IP header */
	uint8_t ip_ver;			/* 4 or 6 */
	uint32_t ip_sum;		/* IPv4: header sum without total length and checksum */
	bool valid;			/* built; @key holds what from */
	struct roce_pkt key;		/* the packet it was built from (its header fields count) */
};

/**
 * Does @p t hold the headers @p pkt needs (same kind, MACs, VLANs, IP and UDP fields)?
 * @return false for an empty template or a packet roce_wire_tmpl_init() would refuse
 */
bool roce_wire_tmpl_match(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt);

/**
 * Build @p t from the header fields of @p pkt (borrowed; its BTH and payload are ignored).
 * @return 0; -EINVAL (not RoCEv2, VLAN-tagged, IP version not 4/6): use roce_wire_build()
 */
int roce_wire_tmpl_init(struct roce_wire_tmpl *t, const struct roce_pkt *pkt);

/**
 * What roce_wire_build(pkt, 0, buf, size) writes, for a @p pkt that roce_wire_tmpl_match()
 * accepts, from @p t (borrowed).
 * @return frame length; -EINVAL (payload over 65535 bytes), -ENOSPC (frame does not fit)
 */
int roce_wire_tmpl_build(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt, uint8_t *buf,
			 uint32_t size);

/** Like roce_wire_tmpl_build(), into an empty mbuf (appends to its data). */
int roce_wire_tmpl_build_mbuf(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt,
			      struct rte_mbuf *m);

/**
 * roce_wire_tmpl_build_mbuf() less the ICRC: the trailer is left zero and @p m bears
 * roce_wire_icrc_partial, so the ICRC is computed only if someone looks. Until that flag is
 * registered (roce_wire_icrc_flags_register()), the ICRC is written as roce_wire_tmpl_build_mbuf()
 * writes it.
 */
int roce_wire_tmpl_build_mbuf_partial(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt,
				      struct rte_mbuf *m);

/**
 * roce_wire_tmpl_build_mbuf_partial() without the payload copy, for a payload that does not
 * change while the frame lives (ROCE_ACCESS_ZERO_COPY): the frame is three segments, the
 * headers in @p m, the payload by reference in @p ext (an empty mbuf made external over
 * pkt->payload, as a NIC's gather DMA reads it) and the pad and the ICRC in @p trailer[pad],
 * which many frames share (roce_wire_zc_trailer(); its reference count is raised without an
 * atomic operation: the frames that share a trailer must live on one thread). Once
 * roce_wire_icrc_settle() has run, the frame has a trailer of its own and the bytes of
 * roce_wire_tmpl_build_mbuf(): until then its ICRC's four bytes are zero. Nothing may write
 * to the payload or to the shared trailer, and a clone of the frame (rte_pktmbuf_clone())
 * may not outlive it: the payload's shared info is in @p ext's dynamic field, which the
 * segment's next frame writes (copy the frame instead).
 * @return frame length; -EINVAL (no payload, a trailer not of pad + 4 bytes, or the ICRC
 *         offload flag is not registered: copy it then), -ENOSPC; on error @p m may hold part
 *         of the headers, and @p ext and the trailer are as they were
 */
int roce_wire_tmpl_build_mbuf_zc(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt,
				 struct rte_mbuf *m, struct rte_mbuf *ext,
				 struct rte_mbuf *const trailer[4]);

/**
 * rte_pktmbuf_free() of a frame of roce_wire_tmpl_build_mbuf_zc(), on the thread that built
 * it: the reference to its shared trailer is dropped without the atomic operation DPDK's free
 * uses for a segment with references (the trailer's other frames are this thread's too).
 * Any other frame is freed as rte_pktmbuf_free() frees it.
 */
void roce_wire_zc_free(struct rte_mbuf *m);

/**
 * A trailer for roce_wire_tmpl_build_mbuf_zc(): @p pad (0-3) zero bytes and the ICRC's four,
 * zero too, in an mbuf of @p mp (at least 7 bytes of room). @return it, or NULL
 */
struct rte_mbuf *roce_wire_zc_trailer(struct rte_mempool *mp, uint32_t pad);

/**
 * ICRC of a RoCEv2 or RoCEv1 frame, IBA Annex A17.3.3: CRC-32 over 8 bytes of 0xff, the IP
 * header (or GRH) and UDP header with their variant fields set to ones, the BTH with its
 * reserved byte set to ones, and the rest of the packet up to the ICRC.
 * @param buf  frame bytes; borrowed
 * @param pkt  the result of parsing @p buf (offsets and ip_ver are used)
 * @param end  offset of the ICRC field (frame length minus 4)
 * @return the ICRC as the 4 stored bytes read little-endian
 */
uint32_t roce_icrc_calc(const uint8_t *buf, const struct roce_pkt *pkt, uint32_t end);

/** CRC-32 (IEEE 802.3) of @p len bytes at @p data, through the selected implementation. */
uint32_t roce_crc32(const void *data, uint32_t len);

/** CRC-32 of A||B from crc32(A), crc32(B) and the length of B. */
uint32_t roce_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint32_t len_b);

/**
 * Pick the fastest CRC-32 path that the CPU and the EAL's max SIMD bitwidth allow; call after
 * rte_eal_init(). Without it, lib/wire uses rte_net_crc's portable path.
 * @return the name of the path taken ("avx512", "sse42", "scalar")
 */
const char *roce_crc_select_fastest(void);

/** Name of the CRC-32 path in use. */
const char *roce_crc_path(void);

/**
 * Format an address as text: dotted quad for IPv4, RFC 5952 for IPv6.
 * @return @p out
 */
char *roce_ip_ntop(const struct roce_ip_addr *addr, uint8_t ip_ver, char *out, size_t size);

/**
 * One-line, tcpdump-like summary of a parsed frame (no time or frame number): addresses,
 * opcode name, QP, PSN, the important fields of each header, payload length and ICRC status.
 * @return the length snprintf() would have written
 */
int roce_pkt_snprint(char *out, size_t size, const struct roce_pkt *pkt);

/** A RoCEv2 frame over IPv6 with extension headers before its UDP header (ROCE_PARSE_CAPTURE). */
static inline bool roce_pkt_ipv6_ext(const struct roce_pkt *pkt)
{
	return pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver == 6 && pkt->l4_off > pkt->l3_off + 40;
}

/** Frames are built in host order; these read a BTH field straight from bytes. */
static inline uint32_t roce_bth_psn(const uint8_t *bth)
{
	return ((uint32_t)bth[9] << 16) | ((uint32_t)bth[10] << 8) | bth[11];
}

static inline uint32_t roce_bth_dqpn(const uint8_t *bth)
{
	return ((uint32_t)bth[5] << 16) | ((uint32_t)bth[6] << 8) | bth[7];
}

/** PSN arithmetic modulo 2^24: a - b as a signed 24-bit distance. */
static inline int32_t roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* ---- Text frame descriptors (wire_desc.c) and checksum repair (wire_fixup.c) ---- */

/*
 * A frame described as one line of key=value words, e.g.
 *   op=RC_RDMA_WRITE_FIRST src=10.0.0.1 dst=10.0.0.2 qp=0x11 psn=100 va=0x1000 len=1024 ecn=ce
 * Keys not given keep the defaults of roce_pkt_init(). docs/craft.md lists every key.
 */

#define ROCE_DESC_PAYLOAD_MAX 65535	/* payload bytes a descriptor can hold */

/* How a descriptor's payload is filled. */
enum roce_desc_fill {
	ROCE_FILL_INC,		/* byte i is i mod 256 (roce_wire_build()'s default) */
	ROCE_FILL_BYTE,		/* every byte is desc.fill_byte */
	ROCE_FILL_RANDOM,	/* xorshift64* stream from desc.seed: the same seed, the same bytes */
	ROCE_FILL_HEX,		/* the bytes given by payload=HEX */
};

/* A parsed descriptor: the headers, the build flags and the payload bytes. */
struct roce_desc {
	struct roce_pkt pkt;		/* headers; pkt.payload is set by roce_desc_build() */
	unsigned int flags;		/* ROCE_BUILD_* implied by the line (icrc=, pad=, ipcsum=) */
	enum roce_desc_fill fill;	/* payload pattern */
	uint8_t fill_byte;		/* ROCE_FILL_BYTE */
	uint64_t seed;			/* ROCE_FILL_RANDOM */
	uint8_t payload[ROCE_DESC_PAYLOAD_MAX]; /* the payload, filled by roce_desc_parse() */
};

/**
 * Parse one descriptor line into @p d. A '#' starts a comment; a blank line describes no frame.
 * @param line  NUL-terminated text; borrowed
 * @param d     filled (roce_pkt_init() defaults, then every key in order)
 * @param err   receives one line naming the word and what was expected, e.g.
 *              "'psn=0x1000000': psn is 24 bits (0..16777215)"
 * @return 1 (a frame), 0 (blank or comment only: @p d untouched), -EINVAL (unknown key, bad value,
 *         key not valid for the kind or opcode, duplicate key)
 */
int roce_desc_parse(const char *line, struct roce_desc *d, char *err, size_t errlen);

/**
 * Build the frame a descriptor describes, with roce_wire_build() and d->flags.
 * @return frame length; the errors of roce_wire_build()
 */
int roce_desc_build(const struct roce_desc *d, uint8_t *buf, uint32_t size);

/* roce_desc_snprint() flags */
#define ROCE_DESC_NO_PAYLOAD 0x1u	/* print len= only, never payload=HEX */

/**
 * Print a parsed frame as a descriptor line that roce_desc_parse() turns back into the same
 * bytes: kind (unless rocev2), op, addresses, qp and psn always, every other field only where it
 * differs from roce_pkt_init()'s default; the payload as len= when it is the incrementing
 * pattern, pattern=0xNN when one byte repeats, else payload=HEX; icrc=0x... when the stored
 * ICRC was found wrong.
 * @param pkt  the result of roce_wire_parse(); borrowed
 * @return the length snprintf() would have written
 */
int roce_desc_snprint(char *out, size_t size, const struct roce_pkt *pkt, unsigned int flags);

/* What roce_wire_fixup() changed. */
#define ROCE_FIXUP_IP_CSUM 0x1u		/* IPv4 header checksum rewritten */
#define ROCE_FIXUP_ICRC 0x2u		/* ICRC rewritten */

/**
 * Recompute, in place, the IPv4 header checksum and the ICRC of a RoCEv2 or RoCEv1 frame (for
 * example after editing its TTL or DSCP). Lengths are left as they are.
 * @param buf  frame bytes; written
 * @return ROCE_FIXUP_* bits of what changed (0: already right); -EINVAL if the frame is not RoCE
 *         or breaks off before its BTH (nothing is written then)
 */
int roce_wire_fixup(uint8_t *buf, uint32_t len);

#endif /* ROCE_WIRE_H */
