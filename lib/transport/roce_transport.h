/* lib/transport: the emulated NIC: device creation, its port, counters and event trace. */
#ifndef ROCE_TRANSPORT_H
#define ROCE_TRANSPORT_H

#include <stdint.h>
#include <stdio.h>

#include "roce_engine.h"
#include "roce_verbs.h"

/**
 * Create an emulated RoCE device (a NIC with one port) whose transport runs on @p eng.
 * @return the device, or NULL with errno set
 */
struct roce_device *roce_device_create(struct roce_engine *eng, const struct roce_device_conf *conf);

/** Destroy: -EBUSY while PDs, CQs, QPs, SRQs or AHs exist; NULL: 0. */
int roce_device_destroy(struct roce_device *dev);

/** The endpoint to give roce_link_create() for this device's port. */
struct roce_link_end roce_device_link_end(struct roce_device *dev);

/** Send through direction @p dir of @p link (the direction whose sender is this device). */
void roce_device_attach(struct roce_device *dev, struct roce_link *link, int dir);

/** Number of device counters; their names and values, in a fixed order (ethtool -S style). */
int roce_device_ncounters(void);
const char *roce_device_counter_name(int i);
uint64_t roce_device_counter(const struct roce_device *dev, int i);

/** Value of the counter called @p name, or UINT64_MAX if there is none. */
uint64_t roce_device_counter_by_name(const struct roce_device *dev, const char *name);

/**
 * Frames in the receive buffer of the device's host interface now: taken from the port
 * (rx_frames) but not yet written to host memory. 0 without a host interface (conf.host_bps).
 */
uint32_t roce_device_rx_held(const struct roce_device *dev);

void roce_qp_stats(const struct roce_qp *qp, struct roce_qp_stats *st);

/* What a QP's requester is waiting on (roce_qp_wait()). */
enum roce_qp_wait_kind {
	ROCE_QP_WAIT_IDLE,	/* no work request outstanding */
	ROCE_QP_WAIT_ERROR,	/* the QP is in the error state */
	ROCE_QP_WAIT_RNR,	/* an RNR NAK: it resends when its RNR timer fires (until) */
	ROCE_QP_WAIT_PAUSED,	/* a request to send, its priority PFC-paused at the NIC (until) */
	ROCE_QP_WAIT_RATE,	/* a request to send, held by its rate limiter (until; rate_bps) */
	ROCE_QP_WAIT_SEND,	/* a request to send, its turn on the port not come yet */
	ROCE_QP_WAIT_ACK,	/* sent what it may: ACKs or responses; its ACK timeout at until */
};

struct roce_qp_wait {
	enum roce_qp_wait_kind kind;
	roce_time_t until;	/* when that wait ends at the latest; ROCE_TIME_NEVER: no timer
				 * ends it (ACK: the timeout is off) */
	uint64_t rate_bps;	/* its rate limit now; 0: none (line rate) */
	uint8_t retries_left;	/* ACK timeouts and sequence NAKs it may still resend on */
};

/**
 * What @p qp's requester waits on now, the first that applies in the order of enum
 * roce_qp_wait_kind. For reports (why a flow makes no progress), not for the data path.
 * @param w  receives it
 */
void roce_qp_wait(const struct roce_qp *qp, struct roce_qp_wait *w);

/**
 * Write one line per transport decision (retry, NAK, RNR wait, timeout, error, flush) to @p f,
 * with the engine time: "   12.345678 us rocelab0 qp 0x11 timeout psn 42 retry 6 left".
 * NULL turns the trace off.
 */
void roce_device_set_trace(struct roce_device *dev, FILE *f);

/* ---- priorities, PFC, ECN and congestion control (tr_nic.c, tr_cc.c) ---- */

#define ROCE_NIC_NPRIO 8		/* 802.1p priorities, PFC classes */

/* How the NIC classifies its traffic and takes part in congestion control. */
struct roce_nic_qos {
	uint8_t dscp_prio[64];		/* DSCP -> priority; default dscp >> 3 (ConnectX "trust dscp") */
	uint8_t pfc_enable;		/* bit i: honour PFC pauses for priority i (default 0xff) */
	bool ecn;			/* mark data ECT(0) and act as notification point (CNPs on CE);
					 * also on while a congestion control algorithm that needs ECN
					 * (dcqcn) is set; default false */
	roce_time_t cnp_interval;	/* at most one CNP per QP per interval; default 4 us */
	uint8_t cnp_dscp;		/* DSCP of CNPs (their priority through dscp_prio); default 48 */
};

/** Fill @p qos with the defaults above (what a device starts with). */
void roce_nic_qos_defaults(struct roce_nic_qos *qos);

/**
 * Set the device's classification, PFC and ECN policy (copied); it applies from the next frame.
 * @return 0; -EINVAL (a priority above 7, a DSCP above 63)
 */
int roce_device_set_qos(struct roce_device *dev, const struct roce_nic_qos *qos);

/** The device's policy now. */
void roce_device_qos(const struct roce_device *dev, struct roce_nic_qos *qos);

/**
 * Congestion control for QPs connected (moved to RTR) after the call: "none" or one of
 * roce_cc_names(). QPs already connected keep what they have.
 * @param kv     @p nkv "key=value" strings overriding the algorithm's defaults (borrowed)
 * @param err    receives one line naming the bad algorithm, key or value, e.g.
 *               "dcqcn: unknown parameter 'rpg_ai'"; may be NULL
 * @return 0; -EINVAL (unknown algorithm, unknown key, bad or out-of-range value); -ENOMEM
 */
int roce_device_set_cc(struct roce_device *dev, const char *algo, const char *const *kv, int nkv,
		       char *err, size_t errlen);

/** Check what roce_device_set_cc() would refuse, without a device. @return 0, -EINVAL, -ENOMEM */
int roce_cc_check(const char *algo, const char *const *kv, int nkv, char *err, size_t errlen);

/** The NULL-terminated list of congestion control algorithms ("none" included). */
const char *const *roce_cc_names(void);

/** Write @p algo's parameters to @p f, one per line: name, default, unit, meaning, source. */
void roce_cc_describe(const char *algo, FILE *f);

/** The QP's current reaction point rate in b/s: the port's line rate without congestion control. */
uint64_t roce_qp_rate(const struct roce_qp *qp);

/**
 * Read one variable of the QP's congestion control state by name (dcqcn: "rc", "rt" in b/s,
 * "alpha", "time_stage", "byte_stage", "active").
 * @return 0; -ENOENT (no such variable, or no congestion control on the QP)
 */
int roce_qp_cc_state(const struct roce_qp *qp, const char *name, double *val);

#endif /* ROCE_TRANSPORT_H */
