/* lib/verbs: the verbs objects of an emulated RoCE device, named and numbered as in libibverbs. */
#ifndef ROCE_VERBS_H
#define ROCE_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include "roce_wire.h"

struct roce_device;
struct roce_pd;
struct roce_mr;
struct roce_cq;
struct roce_qp;
struct roce_srq;

/* Values below equal their libibverbs counterparts, so a bridge maps them one to one. */

enum roce_access_flags {
	ROCE_ACCESS_LOCAL_WRITE = 1,
	ROCE_ACCESS_REMOTE_WRITE = 1 << 1,
	ROCE_ACCESS_REMOTE_READ = 1 << 2,
	ROCE_ACCESS_REMOTE_ATOMIC = 1 << 3,
	/*
	 * rocelab's own, with no libibverbs counterpart: frames carry the region's bytes by
	 * reference, as a NIC's gather DMA reads them, instead of a copy taken when they are built.
	 * The owner promises that the bytes neither change nor go away while any frame of the
	 * engine may still hold them: until the engine is destroyed. A frame a link corrupts, or
	 * that leaves the process, is copied first. Only a virtual-clock engine honours it.
	 */
	ROCE_ACCESS_ZERO_COPY = 1 << 30,
	/*
	 * rocelab's own: nothing is ever written into the region. The bytes that arrive for it
	 * (an RDMA WRITE's, a READ response's, a received SEND's, a UD receive's GRH area, an
	 * atomic's original value) are dropped, and an atomic on it reads the region and leaves it
	 * as it is, as rdma-core's ibv_alloc_null_mr() drops writes; unlike a null MR it has an
	 * rkey, so it can be a WRITE's target. Keys, bounds, rights and lengths are checked, and
	 * completions, counters and frames are what they would be with the bytes stored. For
	 * fabrics whose runs study the network, not the data: the copy of every payload into its
	 * target is the largest single cost of a large fabric's hop (docs/performance.md).
	 */
	ROCE_ACCESS_DISCARD = 1 << 29,
};

/*
 * The smallest payload a frame carries by reference (ROCE_ACCESS_ZERO_COPY): below it, the
 * mbuf more a frame then takes costs more than the copy. 1 KiB, a common path MTU: since the
 * frames share their trailer, the 8:1 incast, whose payloads stay in cache, runs as fast
 * either way, and the 128-host leaf-spine at 1 KiB 1.3x faster with payloads discarded
 * (docs/performance.md, "Session 25"; at 2 KiB before it).
 */
#define ROCE_ZC_MIN 1024

/*
 * Can a message of @p size bytes, at a path MTU of @p mtu_bytes, have a frame of ROCE_ZC_MIN
 * or more? Only then is ROCE_ACCESS_ZERO_COPY worth the segment pool registering it makes.
 */
static inline bool roce_zc_reachable(uint32_t mtu_bytes, uint64_t size)
{
	return mtu_bytes >= ROCE_ZC_MIN && size >= ROCE_ZC_MIN;
}

enum roce_qp_type {
	ROCE_QPT_RC = 2,
	ROCE_QPT_UC = 3,
	ROCE_QPT_UD = 4,
};

enum roce_qp_state {
	ROCE_QPS_RESET,
	ROCE_QPS_INIT,
	ROCE_QPS_RTR,
	ROCE_QPS_RTS,
	ROCE_QPS_SQD,
	ROCE_QPS_SQE,
	ROCE_QPS_ERR,
	ROCE_QPS_NUM,
};

enum roce_mtu {
	ROCE_MTU_256 = 1,
	ROCE_MTU_512 = 2,
	ROCE_MTU_1024 = 3,
	ROCE_MTU_2048 = 4,
	ROCE_MTU_4096 = 5,
};

static inline uint32_t roce_mtu_bytes(enum roce_mtu mtu)
{
	return mtu >= ROCE_MTU_256 && mtu <= ROCE_MTU_4096 ? 128u << mtu : 0;
}

/** enum roce_mtu for 256..4096 bytes, or 0. */
enum roce_mtu roce_mtu_from_bytes(uint32_t bytes);

enum roce_wr_opcode {
	ROCE_WR_RDMA_WRITE = 0,
	ROCE_WR_RDMA_WRITE_WITH_IMM = 1,
	ROCE_WR_SEND = 2,
	ROCE_WR_SEND_WITH_IMM = 3,
	ROCE_WR_RDMA_READ = 4,
	ROCE_WR_ATOMIC_CMP_AND_SWP = 5,
	ROCE_WR_ATOMIC_FETCH_AND_ADD = 6,
	ROCE_WR_SEND_WITH_INV = 9,
};

enum roce_send_flags {
	ROCE_SEND_FENCE = 1,
	ROCE_SEND_SIGNALED = 1 << 1,
	ROCE_SEND_SOLICITED = 1 << 2,
	ROCE_SEND_INLINE = 1 << 3,
};

enum roce_wc_status {
	ROCE_WC_SUCCESS,
	ROCE_WC_LOC_LEN_ERR,
	ROCE_WC_LOC_QP_OP_ERR,
	ROCE_WC_LOC_EEC_OP_ERR,
	ROCE_WC_LOC_PROT_ERR,
	ROCE_WC_WR_FLUSH_ERR,
	ROCE_WC_MW_BIND_ERR,
	ROCE_WC_BAD_RESP_ERR,
	ROCE_WC_LOC_ACCESS_ERR,
	ROCE_WC_REM_INV_REQ_ERR,
	ROCE_WC_REM_ACCESS_ERR,
	ROCE_WC_REM_OP_ERR,
	ROCE_WC_RETRY_EXC_ERR,
	ROCE_WC_RNR_RETRY_EXC_ERR,
	ROCE_WC_LOC_RDD_VIOL_ERR,
	ROCE_WC_REM_INV_RD_REQ_ERR,
	ROCE_WC_REM_ABORT_ERR,
	ROCE_WC_INV_EECN_ERR,
	ROCE_WC_INV_EEC_STATE_ERR,
	ROCE_WC_FATAL_ERR,
	ROCE_WC_RESP_TIMEOUT_ERR,
	ROCE_WC_GENERAL_ERR,
	ROCE_WC_NUM,
};

/** libibverbs' text for a status ("success", "transport retry counter exceeded", ...). */
const char *roce_wc_status_str(enum roce_wc_status status);

/** The status's enum name without prefix ("SUCCESS", "RETRY_EXC_ERR", ...). */
const char *roce_wc_status_name(enum roce_wc_status status);

enum roce_wc_opcode {
	ROCE_WC_SEND = 0,
	ROCE_WC_RDMA_WRITE = 1,
	ROCE_WC_RDMA_READ = 2,
	ROCE_WC_COMP_SWAP = 3,
	ROCE_WC_FETCH_ADD = 4,
	ROCE_WC_RECV = 128,
	ROCE_WC_RECV_RDMA_WITH_IMM = 129,
};

enum roce_wc_flags {
	ROCE_WC_GRH = 1,
	ROCE_WC_WITH_IMM = 1 << 1,
	ROCE_WC_WITH_INV = 1 << 3,
};

struct roce_sge {
	uint64_t addr;		/* virtual address in this process */
	uint32_t length;	/* bytes */
	uint32_t lkey;		/* local key of the MR that covers it */
};

/* An address vector: where a QP's (or a UD send's) packets go. */
struct roce_ah_attr {
	struct roce_ip_addr dip;	/* destination IPv4 or IPv6 address (the GID) */
	uint8_t ip_ver;			/* 4 or 6 */
	uint8_t dmac[6];		/* destination MAC (resolved by the caller or ARP) */
	uint16_t sport;			/* UDP source port; 0: derived from the QPN */
	uint8_t traffic_class;		/* DSCP << 2 | ECN */
	uint8_t hop_limit;		/* TTL; 0: 64 */
	uint32_t flow_label;		/* IPv6 flow label */
	uint8_t sl;			/* service level / priority (802.1p when VLAN-tagged) */
};

struct roce_ah;

struct roce_send_wr {
	uint64_t wr_id;			/* returned in the completion */
	struct roce_send_wr *next;	/* chain, NULL-terminated */
	struct roce_sge *sg_list;
	int num_sge;
	enum roce_wr_opcode opcode;
	unsigned int send_flags;	/* enum roce_send_flags */
	uint32_t imm_data;		/* immediate data, as the 32-bit number on the wire */
	uint32_t invalidate_rkey;	/* SEND_WITH_INV */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;	/* compare (CMP_AND_SWP) or add (FETCH_AND_ADD) */
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct roce_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;	/* high bit set: use the QP's own Q_Key */
		} ud;
	} wr;
};

struct roce_recv_wr {
	uint64_t wr_id;
	struct roce_recv_wr *next;
	struct roce_sge *sg_list;
	int num_sge;
};

struct roce_wc {
	uint64_t wr_id;
	enum roce_wc_status status;
	enum roce_wc_opcode opcode;
	uint32_t vendor_err;		/* rocelab: the counter/reason behind an error */
	uint32_t byte_len;		/* bytes received (with the 40-byte GRH area on UD) */
	uint32_t imm_data;		/* with ROCE_WC_WITH_IMM; or the invalidated rkey */
	uint32_t qp_num;		/* local QP */
	uint32_t src_qp;		/* UD: the sender's QP */
	unsigned int wc_flags;		/* enum roce_wc_flags */
	uint8_t sl;			/* service level */
};

struct roce_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct roce_qp_init_attr {
	struct roce_cq *send_cq;
	struct roce_cq *recv_cq;
	struct roce_srq *srq;		/* receives come from it when set */
	struct roce_qp_cap cap;		/* in: requested; out: granted */
	enum roce_qp_type qp_type;
	bool sq_sig_all;		/* every send WR is signaled */
};

enum roce_qp_attr_mask {
	ROCE_QP_STATE = 1 << 0,
	ROCE_QP_CUR_STATE = 1 << 1,
	ROCE_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	ROCE_QP_ACCESS_FLAGS = 1 << 3,
	ROCE_QP_PKEY_INDEX = 1 << 4,
	ROCE_QP_PORT = 1 << 5,
	ROCE_QP_QKEY = 1 << 6,
	ROCE_QP_AV = 1 << 7,
	ROCE_QP_PATH_MTU = 1 << 8,
	ROCE_QP_TIMEOUT = 1 << 9,
	ROCE_QP_RETRY_CNT = 1 << 10,
	ROCE_QP_RNR_RETRY = 1 << 11,
	ROCE_QP_RQ_PSN = 1 << 12,
	ROCE_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	ROCE_QP_ALT_PATH = 1 << 14,
	ROCE_QP_MIN_RNR_TIMER = 1 << 15,
	ROCE_QP_SQ_PSN = 1 << 16,
	ROCE_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	ROCE_QP_PATH_MIG_STATE = 1 << 18,
	ROCE_QP_CAP = 1 << 19,
	ROCE_QP_DEST_QPN = 1 << 20,
};

struct roce_qp_attr {
	enum roce_qp_state qp_state;
	enum roce_qp_state cur_qp_state;
	enum roce_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;		/* first PSN expected from the peer */
	uint32_t sq_psn;		/* first PSN sent */
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;	/* remote rights granted on this QP */
	struct roce_qp_cap cap;
	struct roce_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;		/* READ/atomic requests outstanding as requester */
	uint8_t max_dest_rd_atomic;	/* ... as responder */
	uint8_t min_rnr_timer;		/* RNR NAK timer code this QP advertises */
	uint8_t timeout;		/* local ACK timeout: 4.096 us * 2^timeout; 0: infinite */
	uint8_t retry_cnt;		/* retries on timeout or sequence NAK, 0..7 */
	uint8_t rnr_retry;		/* retries on RNR NAK, 0..7; 7: forever */
};

/* Per-QP figures. */
struct roce_qp_stats {
	uint64_t tx_pkts, rx_pkts;	/* packets sent and received */
	uint64_t tx_bytes, rx_bytes;	/* payload bytes */
	uint64_t retransmits;		/* request packets resent */
	uint64_t timeouts;		/* local ACK timeouts */
	uint64_t seq_naks_rcvd;		/* NAK sequence errors received */
	uint64_t rnr_naks_rcvd;		/* RNR NAKs received */
	uint64_t duplicates;		/* duplicate requests received */
	uint64_t out_of_seq;		/* out-of-sequence requests received */
};

/* ---- device ---- */

struct roce_device_attr {
	char fw_ver[32];
	uint64_t node_guid;
	uint64_t max_mr_size;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_inline_data;
	uint8_t max_qp_rd_atom;
	uint8_t max_qp_init_rd_atom;
	uint8_t phys_port_cnt;
};

enum roce_port_state {
	ROCE_PORT_DOWN = 1,
	ROCE_PORT_ACTIVE = 4,
};

struct roce_port_attr {
	enum roce_port_state state;
	enum roce_mtu max_mtu;
	enum roce_mtu active_mtu;
	uint32_t gid_tbl_len;
	uint64_t speed_bps;		/* link speed */
};

struct roce_device_conf {
	const char *name;		/* "rocelab0" if NULL */
	uint8_t mac[6];			/* port MAC */
	struct roce_ip_addr ip[4];	/* addresses: each becomes a RoCEv2 GID */
	uint8_t ip_ver[4];		/* 4 or 6 per address; 0 ends the list */
	enum roce_mtu max_mtu;		/* 0: 4096 */
	uint64_t speed_bps;		/* 0: 100 Gb/s */
	uint32_t qpn_base;		/* first QPN handed out; 0: 0x11 as rxe */
	/*
	 * The host interface (PCIe, or the memory behind it), each direction: every frame the
	 * device sends is read from host memory, and every frame it receives written to it, at
	 * this rate (effective bits per second, after encoding and TLP overheads; a Gen3 x8
	 * slot is about 57.6 Gb/s, Gen4 x16 about 230: docs/fabric.md). Frames sent wait for
	 * the reads; frames received wait in a buffer of @host_rx_buffer bytes for the writes
	 * and are dropped when it is full (counter rx_out_of_buffer), as a NIC in too narrow a
	 * slot drops them. 0: unlimited (no wait at all).
	 */
	uint64_t host_bps;
	uint32_t host_rx_buffer;	/* bytes; 0: 256 KiB */
	/*
	 * Priorities the device keeps lossless when its receive buffer fills (with @host_bps):
	 * it sends PFC XOFF for them once the bytes not yet written pass the buffer less its
	 * link's PFC headroom (roce_link_pfc_headroom(): what the link delivers before the
	 * pause takes hold, as a switch port sizes it), refreshes it while they stay there, and
	 * XON once they fall two of the link's largest frames below. 0: it drops instead.
	 */
	uint8_t host_pfc;
};

/*
 * A device is made by its provider, which embeds it: the emulated NIC's roce_device_create()
 * and roce_device_destroy() are in roce_transport.h.
 */

const char *roce_device_name(const struct roce_device *dev);
int roce_query_device(const struct roce_device *dev, struct roce_device_attr *attr);
int roce_query_port(const struct roce_device *dev, uint8_t port, struct roce_port_attr *attr);

/**
 * GID at @p index: index 0 is the link-local IPv6 GID derived from the MAC (RoCEv1), then
 * one RoCEv2 GID per configured address (IPv4 ones IPv4-mapped, ::ffff:a.b.c.d), as rxe lists them.
 * @return 0 or -EINVAL past the table
 */
int roce_query_gid(const struct roce_device *dev, uint8_t port, int index, struct roce_ip_addr *gid);

/* ---- PD, MR ---- */

struct roce_pd *roce_alloc_pd(struct roce_device *dev);
/** -EBUSY while MRs or QPs use it. */
int roce_dealloc_pd(struct roce_pd *pd);

/**
 * Register @p length bytes at @p addr with @p access rights.
 * @return the MR, or NULL with errno (EINVAL: bad flags, e.g. REMOTE_WRITE without LOCAL_WRITE;
 *         ENOMEM: table full)
 */
struct roce_mr *roce_reg_mr(struct roce_pd *pd, void *addr, uint64_t length, unsigned int access);
int roce_dereg_mr(struct roce_mr *mr);
uint32_t roce_mr_lkey(const struct roce_mr *mr);
uint32_t roce_mr_rkey(const struct roce_mr *mr);

/* ---- CQ ---- */

/** A CQ of at least @p cqe entries. NULL with errno on failure. */
struct roce_cq *roce_create_cq(struct roce_device *dev, int cqe);
/** -EBUSY while a QP uses it. */
int roce_destroy_cq(struct roce_cq *cq);

/**
 * Take up to @p num completions, oldest first.
 * @return the number taken (0 if none); -EOVERFLOW once the CQ has overflowed (a completion
 *         was lost: the QPs that lost it are in ERR)
 */
int roce_poll_cq(struct roce_cq *cq, int num, struct roce_wc *wc);

typedef void (*roce_cq_notify_fn)(struct roce_cq *cq, void *arg);

/**
 * Call @p fn each time a completion is added to @p cq (NULL: stop), like a completion channel
 * that stays armed. It runs inside the transport: it may arm a timer, not post or poll.
 */
void roce_cq_set_notify(struct roce_cq *cq, roce_cq_notify_fn fn, void *arg);

/* ---- SRQ ---- */

struct roce_srq *roce_create_srq(struct roce_pd *pd, uint32_t max_wr, uint32_t max_sge);
int roce_destroy_srq(struct roce_srq *srq);
int roce_post_srq_recv(struct roce_srq *srq, const struct roce_recv_wr *wr,
		       const struct roce_recv_wr **bad_wr);

/* ---- AH ---- */

struct roce_ah *roce_create_ah(struct roce_pd *pd, const struct roce_ah_attr *attr);
int roce_destroy_ah(struct roce_ah *ah);

/* ---- QP ---- */

/**
 * Create a QP in RESET. @p init->cap is updated with what was granted.
 * @return the QP, or NULL with errno (EINVAL: bad type, missing CQ, caps above the device's)
 */
struct roce_qp *roce_create_qp(struct roce_pd *pd, struct roce_qp_init_attr *init);
int roce_destroy_qp(struct roce_qp *qp);
uint32_t roce_qp_num(const struct roce_qp *qp);

/**
 * Change the QP's attributes and state, as ibv_modify_qp: @p mask says which fields of @p attr
 * are set. A state change checks that the transition exists (IBA 10.3.1) and that the mask holds
 * every attribute it requires and nothing it does not allow.
 * @return 0; -EINVAL (bad transition, missing or extra attribute, bad value)
 */
int roce_modify_qp(struct roce_qp *qp, const struct roce_qp_attr *attr, unsigned int mask);
int roce_query_qp(const struct roce_qp *qp, struct roce_qp_attr *attr,
		  struct roce_qp_init_attr *init);

/**
 * Post a chain of send WRs; they are copied (and inline data with them).
 * @return 0; on error *bad_wr is the first WR not posted: -EINVAL (bad opcode for the QP type,
 *         too many SGEs, inline too long, QP state not RTS), -ENOMEM (send queue full)
 */
int roce_post_send(struct roce_qp *qp, const struct roce_send_wr *wr,
		   const struct roce_send_wr **bad_wr);

/**
 * Post receive WRs. Allowed from INIT on; in ERR they complete at once with WR_FLUSH_ERR.
 * @return 0, -EINVAL (QP in RESET, uses an SRQ, too many SGEs), -ENOMEM (queue full)
 */
int roce_post_recv(struct roce_qp *qp, const struct roce_recv_wr *wr,
		   const struct roce_recv_wr **bad_wr);

/** Name of a QP state ("RESET", "INIT", ...). */
const char *roce_qp_state_name(enum roce_qp_state state);

#endif /* ROCE_VERBS_H */
