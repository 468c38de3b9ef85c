/* The opcode table: every RC, UC, RD, UD and XRC opcode of IBA 9.2 table 38, and the RoCEv2 CNP. */
#include <errno.h>
#include <strings.h>

#include "roce_wire.h"

/* Size of an extended header if the mask has it. */
#define SZ(m, f, n) (((m) & ROCE_F_##f) ? (n) : 0)

/*
 * Offsets after the BTH, in wire order: RDETH DETH XRCETH FETH RETH AtomicETH AETH AtomicAckETH
 * ImmDt IETH.
 */
#define O_RDETH(m) 0
#define O_DETH(m) (O_RDETH(m) + SZ(m, RDETH, ROCE_RDETH_LEN))
#define O_XRCETH(m) (O_DETH(m) + SZ(m, DETH, ROCE_DETH_LEN))
#define O_FETH(m) (O_XRCETH(m) + SZ(m, XRCETH, ROCE_XRCETH_LEN))
#define O_RETH(m) (O_FETH(m) + SZ(m, FETH, ROCE_FETH_LEN))
#define O_ATMETH(m) (O_RETH(m) + SZ(m, RETH, ROCE_RETH_LEN))
#define O_AETH(m) (O_ATMETH(m) + SZ(m, ATMETH, ROCE_ATMETH_LEN))
#define O_ATMACK(m) (O_AETH(m) + SZ(m, AETH, ROCE_AETH_LEN))
#define O_IMMDT(m) (O_ATMACK(m) + SZ(m, ATMACK, ROCE_ATMACK_LEN))
#define O_IETH(m) (O_IMMDT(m) + SZ(m, IMMDT, ROCE_IMMDT_LEN))
#define O_END(m) (O_IETH(m) + SZ(m, IETH, ROCE_IETH_LEN))

#define OP(code, m) [ROCE_OP_##code] = { \
	.name = #code, \
	.mask = (m), \
	.hdr_len = ROCE_BTH_LEN + O_END(m) + SZ(m, CNP, ROCE_CNP_PAD_LEN), \
	.ext_off = { \
		[ROCE_EXT_RDETH] = O_RDETH(m), [ROCE_EXT_DETH] = O_DETH(m), \
		[ROCE_EXT_XRCETH] = O_XRCETH(m), [ROCE_EXT_FETH] = O_FETH(m), \
		[ROCE_EXT_RETH] = O_RETH(m), [ROCE_EXT_ATMETH] = O_ATMETH(m), \
		[ROCE_EXT_AETH] = O_AETH(m), [ROCE_EXT_ATMACK] = O_ATMACK(m), \
		[ROCE_EXT_IMMDT] = O_IMMDT(m), [ROCE_EXT_IETH] = O_IETH(m), \
	}, \
}

#define F(x) ROCE_F_##x
#define RC_REQ (F(RC) | F(REQ))
#define RC_RESP (F(RC) | F(RESP))
#define UC_REQ (F(UC) | F(REQ))
#define SEND_P (F(SEND) | F(PAYLOAD))
#define WRITE_P (F(WRITE) | F(PAYLOAD))
#define READ_P (F(READ) | F(PAYLOAD) | RC_RESP)
/* RD: every packet carries the RDETH, every request the DETH too (IBA 9.2 table 38) */
#define RD_REQ (F(RD) | F(REQ) | F(RDETH) | F(DETH))
#define RD_RESP (F(RD) | F(RESP) | F(RDETH))
#define RD_READ_P (F(READ) | F(PAYLOAD) | RD_RESP)
/* XRC: RC's packets, with the XRCETH in every request (IBA 9.2, 1.2 and later) */
#define XRC_REQ (F(XRC) | F(REQ) | F(XRCETH))
#define XRC_RESP (F(XRC) | F(RESP))
#define XRC_READ_P (F(READ) | F(PAYLOAD) | XRC_RESP)

const struct roce_opcode_info roce_opcode[256] = {
	OP(RC_SEND_FIRST, RC_REQ | SEND_P | F(FIRST)),
	OP(RC_SEND_MIDDLE, RC_REQ | SEND_P | F(MIDDLE)),
	OP(RC_SEND_LAST, RC_REQ | SEND_P | F(LAST)),
	OP(RC_SEND_LAST_WITH_IMMEDIATE, RC_REQ | SEND_P | F(LAST) | F(IMMDT)),
	OP(RC_SEND_ONLY, RC_REQ | SEND_P | F(ONLY)),
	OP(RC_SEND_ONLY_WITH_IMMEDIATE, RC_REQ | SEND_P | F(ONLY) | F(IMMDT)),
	OP(RC_RDMA_WRITE_FIRST, RC_REQ | WRITE_P | F(FIRST) | F(RETH)),
	OP(RC_RDMA_WRITE_MIDDLE, RC_REQ | WRITE_P | F(MIDDLE)),
	OP(RC_RDMA_WRITE_LAST, RC_REQ | WRITE_P | F(LAST)),
	OP(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, RC_REQ | WRITE_P | F(LAST) | F(IMMDT)),
	OP(RC_RDMA_WRITE_ONLY, RC_REQ | WRITE_P | F(ONLY) | F(RETH)),
	OP(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_REQ | WRITE_P | F(ONLY) | F(RETH) | F(IMMDT)),
	OP(RC_RDMA_READ_REQUEST, RC_REQ | F(READ) | F(ONLY) | F(RETH)),
	OP(RC_RDMA_READ_RESPONSE_FIRST, READ_P | F(FIRST) | F(AETH)),
	OP(RC_RDMA_READ_RESPONSE_MIDDLE, READ_P | F(MIDDLE)),
	OP(RC_RDMA_READ_RESPONSE_LAST, READ_P | F(LAST) | F(AETH)),
	OP(RC_RDMA_READ_RESPONSE_ONLY, READ_P | F(ONLY) | F(AETH)),
	OP(RC_ACKNOWLEDGE, RC_RESP | F(ACK) | F(ONLY) | F(AETH)),
	OP(RC_ATOMIC_ACKNOWLEDGE, RC_RESP | F(ACK) | F(ATOMIC) | F(ONLY) | F(AETH) | F(ATMACK)),
	OP(RC_COMPARE_SWAP, RC_REQ | F(ATOMIC) | F(ONLY) | F(ATMETH)),
	OP(RC_FETCH_ADD, RC_REQ | F(ATOMIC) | F(ONLY) | F(ATMETH)),
	OP(RC_SEND_LAST_WITH_INVALIDATE, RC_REQ | SEND_P | F(LAST) | F(IETH)),
	OP(RC_SEND_ONLY_WITH_INVALIDATE, RC_REQ | SEND_P | F(ONLY) | F(IETH)),
	OP(RC_FLUSH, RC_REQ | F(FLUSH) | F(ONLY) | F(FETH) | F(RETH)),
	OP(RC_ATOMIC_WRITE, RC_REQ | WRITE_P | F(PAYLOAD_FIXED) | F(ONLY) | F(RETH)),

	OP(UC_SEND_FIRST, UC_REQ | SEND_P | F(FIRST)),
	OP(UC_SEND_MIDDLE, UC_REQ | SEND_P | F(MIDDLE)),
	OP(UC_SEND_LAST, UC_REQ | SEND_P | F(LAST)),
	OP(UC_SEND_LAST_WITH_IMMEDIATE, UC_REQ | SEND_P | F(LAST) | F(IMMDT)),
	OP(UC_SEND_ONLY, UC_REQ | SEND_P | F(ONLY)),
	OP(UC_SEND_ONLY_WITH_IMMEDIATE, UC_REQ | SEND_P | F(ONLY) | F(IMMDT)),
	OP(UC_RDMA_WRITE_FIRST, UC_REQ | WRITE_P | F(FIRST) | F(RETH)),
	OP(UC_RDMA_WRITE_MIDDLE, UC_REQ | WRITE_P | F(MIDDLE)),
	OP(UC_RDMA_WRITE_LAST, UC_REQ | WRITE_P | F(LAST)),
	OP(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, UC_REQ | WRITE_P | F(LAST) | F(IMMDT)),
	OP(UC_RDMA_WRITE_ONLY, UC_REQ | WRITE_P | F(ONLY) | F(RETH)),
	OP(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, UC_REQ | WRITE_P | F(ONLY) | F(RETH) | F(IMMDT)),

	OP(RD_SEND_FIRST, RD_REQ | SEND_P | F(FIRST)),
	OP(RD_SEND_MIDDLE, RD_REQ | SEND_P | F(MIDDLE)),
	OP(RD_SEND_LAST, RD_REQ | SEND_P | F(LAST)),
	OP(RD_SEND_LAST_WITH_IMMEDIATE, RD_REQ | SEND_P | F(LAST) | F(IMMDT)),
	OP(RD_SEND_ONLY, RD_REQ | SEND_P | F(ONLY)),
	OP(RD_SEND_ONLY_WITH_IMMEDIATE, RD_REQ | SEND_P | F(ONLY) | F(IMMDT)),
	OP(RD_RDMA_WRITE_FIRST, RD_REQ | WRITE_P | F(FIRST) | F(RETH)),
	OP(RD_RDMA_WRITE_MIDDLE, RD_REQ | WRITE_P | F(MIDDLE)),
	OP(RD_RDMA_WRITE_LAST, RD_REQ | WRITE_P | F(LAST)),
	OP(RD_RDMA_WRITE_LAST_WITH_IMMEDIATE, RD_REQ | WRITE_P | F(LAST) | F(IMMDT)),
	OP(RD_RDMA_WRITE_ONLY, RD_REQ | WRITE_P | F(ONLY) | F(RETH)),
	OP(RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RD_REQ | WRITE_P | F(ONLY) | F(RETH) | F(IMMDT)),
	OP(RD_RDMA_READ_REQUEST, RD_REQ | F(READ) | F(ONLY) | F(RETH)),
	OP(RD_RDMA_READ_RESPONSE_FIRST, RD_READ_P | F(FIRST) | F(AETH)),
	OP(RD_RDMA_READ_RESPONSE_MIDDLE, RD_READ_P | F(MIDDLE)),
	OP(RD_RDMA_READ_RESPONSE_LAST, RD_READ_P | F(LAST) | F(AETH)),
	OP(RD_RDMA_READ_RESPONSE_ONLY, RD_READ_P | F(ONLY) | F(AETH)),
	OP(RD_ACKNOWLEDGE, RD_RESP | F(ACK) | F(ONLY) | F(AETH)),
	OP(RD_ATOMIC_ACKNOWLEDGE, RD_RESP | F(ACK) | F(ATOMIC) | F(ONLY) | F(AETH) | F(ATMACK)),
	OP(RD_COMPARE_SWAP, RD_REQ | F(ATOMIC) | F(ONLY) | F(ATMETH)),
	OP(RD_FETCH_ADD, RD_REQ | F(ATOMIC) | F(ONLY) | F(ATMETH)),
	OP(RD_RESYNC, RD_REQ | F(ONLY)),

	OP(UD_SEND_ONLY, F(UD) | F(REQ) | SEND_P | F(ONLY) | F(DETH)),
	OP(UD_SEND_ONLY_WITH_IMMEDIATE, F(UD) | F(REQ) | SEND_P | F(ONLY) | F(DETH) | F(IMMDT)),

	OP(CNP, F(CNP)),

	OP(XRC_SEND_FIRST, XRC_REQ | SEND_P | F(FIRST)),
	OP(XRC_SEND_MIDDLE, XRC_REQ | SEND_P | F(MIDDLE)),
	OP(XRC_SEND_LAST, XRC_REQ | SEND_P | F(LAST)),
	OP(XRC_SEND_LAST_WITH_IMMEDIATE, XRC_REQ | SEND_P | F(LAST) | F(IMMDT)),
	OP(XRC_SEND_ONLY, XRC_REQ | SEND_P | F(ONLY)),
	OP(XRC_SEND_ONLY_WITH_IMMEDIATE, XRC_REQ | SEND_P | F(ONLY) | F(IMMDT)),
	OP(XRC_RDMA_WRITE_FIRST, XRC_REQ | WRITE_P | F(FIRST) | F(RETH)),
	OP(XRC_RDMA_WRITE_MIDDLE, XRC_REQ | WRITE_P | F(MIDDLE)),
	OP(XRC_RDMA_WRITE_LAST, XRC_REQ | WRITE_P | F(LAST)),
	OP(XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE, XRC_REQ | WRITE_P | F(LAST) | F(IMMDT)),
	OP(XRC_RDMA_WRITE_ONLY, XRC_REQ | WRITE_P | F(ONLY) | F(RETH)),
	OP(XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, XRC_REQ | WRITE_P | F(ONLY) | F(RETH) | F(IMMDT)),
	OP(XRC_RDMA_READ_REQUEST, XRC_REQ | F(READ) | F(ONLY) | F(RETH)),
	OP(XRC_RDMA_READ_RESPONSE_FIRST, XRC_READ_P | F(FIRST) | F(AETH)),
	OP(XRC_RDMA_READ_RESPONSE_MIDDLE, XRC_READ_P | F(MIDDLE)),
	OP(XRC_RDMA_READ_RESPONSE_LAST, XRC_READ_P | F(LAST) | F(AETH)),
	OP(XRC_RDMA_READ_RESPONSE_ONLY, XRC_READ_P | F(ONLY) | F(AETH)),
	OP(XRC_ACKNOWLEDGE, XRC_RESP | F(ACK) | F(ONLY) | F(AETH)),
	OP(XRC_ATOMIC_ACKNOWLEDGE, XRC_RESP | F(ACK) | F(ATOMIC) | F(ONLY) | F(AETH) | F(ATMACK)),
	OP(XRC_COMPARE_SWAP, XRC_REQ | F(ATOMIC) | F(ONLY) | F(ATMETH)),
	OP(XRC_FETCH_ADD, XRC_REQ | F(ATOMIC) | F(ONLY) | F(ATMETH)),
	OP(XRC_SEND_LAST_WITH_INVALIDATE, XRC_REQ | SEND_P | F(LAST) | F(IETH)),
	OP(XRC_SEND_ONLY_WITH_INVALIDATE, XRC_REQ | SEND_P | F(ONLY) | F(IETH)),
};

int roce_opcode_by_name(const char *name)
{
	for (unsigned int i = 0; i < ROCE_DIM(roce_opcode); i++)
		if (roce_opcode[i].name != NULL && strcasecmp(roce_opcode[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *roce_aeth_name(uint8_t syndrome)
{
	static const char *const nak[] = {
		[ROCE_NAK_PSN_SEQ_ERR] = "NAK_PSN_SEQ_ERR",
		[ROCE_NAK_INVALID_REQ] = "NAK_INVALID_REQ",
		[ROCE_NAK_REM_ACCESS] = "NAK_REM_ACCESS_ERR",
		[ROCE_NAK_REM_OP_ERR] = "NAK_REM_OP_ERR",
		[ROCE_NAK_INVALID_RD_REQ] = "NAK_INVALID_RD_REQ",
	};
	uint8_t value = syndrome & 0x1f;

	switch (roce_aeth_kind(syndrome)) {
	case ROCE_AETH_ACK:
		return "ACK";
	case ROCE_AETH_RNR_NAK:
		return "RNR_NAK";
	case ROCE_AETH_NAK:
		return value < ROCE_DIM(nak) ? nak[value] : "NAK_RESERVED";
	default:
		return "RESERVED";
	}
}

uint64_t roce_rnr_timer_ns(uint8_t code)
{
	/* IBA 9.7.5.2.8 table 45, in units of 0.01 ms (code 12 = 0.64 ms, 0 = 655.36 ms). */
	static const uint32_t ms100[32] = {
		65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
		16384, 24576, 32768, 49152,
	};

	return (uint64_t)ms100[code & 0x1f] * 10000;
}

const char *roce_kind_name(enum roce_kind kind)
{
	static const char *const names[] = {
		[ROCE_KIND_OTHER] = "other",
		[ROCE_KIND_ROCEV2] = "rocev2",
		[ROCE_KIND_ROCEV1] = "rocev1",
		[ROCE_KIND_PFC] = "pfc",
		[ROCE_KIND_PAUSE] = "pause",
	};

	return (unsigned int)kind < ROCE_DIM(names) ? names[kind] : "?";
}

const char *roce_wire_strerror(enum roce_wire_err err)
{
	static const char *const names[] = {
		[ROCE_WERR_OK] = "ok",
		[ROCE_WERR_TRUNCATED] = "truncated",
		[ROCE_WERR_NOT_ROCE] = "not-roce",
		[ROCE_WERR_TOO_MANY_VLANS] = "too-many-vlans",
		[ROCE_WERR_BAD_IP_VERSION] = "bad-ip-version",
		[ROCE_WERR_BAD_IP_HDR_LEN] = "bad-ip-header-length",
		[ROCE_WERR_BAD_IP_LEN] = "bad-ip-length",
		[ROCE_WERR_BAD_IP_CSUM] = "bad-ip-checksum",
		[ROCE_WERR_IP_FRAGMENT] = "ip-fragment",
		[ROCE_WERR_BAD_UDP_LEN] = "bad-udp-length",
		[ROCE_WERR_BAD_GRH] = "bad-grh",
		[ROCE_WERR_UNKNOWN_OPCODE] = "unknown-opcode",
		[ROCE_WERR_BAD_TVER] = "bad-tver",
		[ROCE_WERR_BAD_PAD] = "bad-pad",
		[ROCE_WERR_BAD_PAYLOAD_LEN] = "bad-payload-length",
		[ROCE_WERR_ICRC_MISMATCH] = "icrc-mismatch",
		[ROCE_WERR_BAD_MAC_CTRL] = "bad-mac-control",
	};
	ROCE_STATIC_ASSERT(ROCE_DIM(names) == ROCE_WERR_NUM);

	return (unsigned int)err < ROCE_DIM(names) ? names[err] : "?";
}
