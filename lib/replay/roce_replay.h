/* lib/replay: captures played back, out of a port (rewritten) or into an emulated responder. */
#ifndef ROCE_REPLAY_H
#define ROCE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_wire.h"

/* ---- frame rewriting (replay_rewrite.c) ---- */

#define ROCE_RW_MAX 8			/* rules per field */

/* Which header field a rewrite rule changes. */
enum roce_rw_field {
	ROCE_RW_SMAC,			/* Ethernet source */
	ROCE_RW_DMAC,			/* Ethernet destination */
	ROCE_RW_SIP,			/* IPv4/IPv6 source (RoCEv2 frames) */
	ROCE_RW_DIP,			/* IPv4/IPv6 destination (RoCEv2 frames) */
	ROCE_RW_QPN,			/* BTH destination QP (RoCEv2 frames) */
	ROCE_RW_NFIELDS,
};

/* One rule: every value (any) or one value (from) becomes @to. */
struct roce_rw_rule {
	bool any;			/* match every value (of the same IP version) */
	uint8_t ip_ver;			/* IP rules: 4 or 6 (from and to have the same) */
	uint8_t from[16];		/* MAC (6), IPv4 (4), IPv6 (16) or QPN (3, big-endian) */
	uint8_t to[16];			/* the new value, same layout */
};

/* Every rule given; zeroed: no rewriting. */
struct roce_rewrite {
	struct roce_rw_rule rule[ROCE_RW_NFIELDS][ROCE_RW_MAX];	/* by field, in the order given */
	unsigned int n[ROCE_RW_NFIELDS];			/* rules per field */
};

/**
 * Add a rule from the text of an option: "NEW" (MACs, IPs: every value becomes NEW) or
 * "OLD=NEW" (only OLD does). MACs are aa:bb:cc:dd:ee:ff, IPs dotted quads or IPv6 text (OLD and
 * NEW of one version), QPNs numbers up to 0xffffff and always OLD=NEW. The first rule that
 * matches a field's value applies.
 * @param err  receives one line naming the value and what was expected
 * @return 0; -EINVAL (bad text); -ENOSPC (more than ROCE_RW_MAX rules for the field)
 */
int roce_rewrite_add(struct roce_rewrite *rw, enum roce_rw_field field, const char *spec,
		     char *err, size_t errlen);

/** True when @p rw has rules for IPs or QPNs (fields that the ICRC covers). */
bool roce_rewrite_touches_roce(const struct roce_rewrite *rw);

/* What roce_rewrite_frame() did; bits of its return value. */
#define ROCE_RW_DID_MAC 0x1u		/* a MAC changed */
#define ROCE_RW_DID_IP 0x2u		/* an address changed (IP checksum redone) */
#define ROCE_RW_DID_QPN 0x4u		/* the BTH destination QP changed */
#define ROCE_RW_DID_ICRC 0x8u		/* the ICRC was recomputed */
#define ROCE_RW_BAD_ICRC_KEPT 0x10u	/* the input ICRC was wrong; the output is wrong the same way */
#define ROCE_RW_NOT_ROCE 0x20u		/* IP/QPN rules given but the frame is not a whole RoCEv2 frame */

/**
 * Apply @p rw to one frame in place. MAC rules apply to every frame; IP and QPN rules to
 * RoCEv2 frames (IPv4 or IPv6, any VLAN tags) that parse up to their ICRC, and then the IPv4
 * header checksum, a non-zero UDP checksum and the ICRC are made right again. A checksum or
 * ICRC that was wrong in the input stays wrong by the same difference (XOR of stored and right
 * value), so a replay keeps every fault of the capture and adds none.
 * @param buf  frame bytes (Ethernet first); written
 * @return ROCE_RW_* bits (0: nothing to change)
 */
unsigned int roce_rewrite_frame(const struct roce_rewrite *rw, uint8_t *buf, uint32_t len);

/* ---- out of a DPDK port (replay_port.c) ---- */

struct roce_capture;
struct roce_progress;

/* How to replay a capture out of a port. */
struct roce_replay_port_conf {
	const char *path;		/* the capture */
	const char *devargs;		/* the port: what rte_dev_probe() takes */
	double speed;			/* time scale: 2 plays twice as fast; ignored with @topspeed */
	bool topspeed;			/* as fast as the port takes frames */
	uint64_t loops;			/* times the capture is played; 0: until stopped */
	const struct roce_rewrite *rw;	/* rewrites (borrowed), or NULL */
	struct roce_capture *cap;	/* capture what the port sends and receives, or NULL */
	volatile int *stop;		/* set (by a signal handler) to stop early; may be NULL */
	FILE *progress;			/* a progress line on this terminal; NULL: none */
};

/* What a replay did. */
struct roce_replay_port_stats {
	uint64_t frames;		/* frames the port accepted */
	uint64_t bytes;			/* their bytes (no FCS) */
	uint64_t dropped;		/* frames the TX queue still refused after 1 s of retrying */
	uint64_t retries;		/* bursts retried on a full TX queue (backpressure) */
	uint64_t rewritten;		/* frames a rewrite rule changed */
	uint64_t not_roce;		/* frames IP/QPN rules could not apply to (not whole RoCEv2) */
	uint64_t bad_icrc_kept;		/* rewritten frames whose input ICRC was already wrong */
	uint64_t truncated;		/* frames captured shorter than they were (sent as captured) */
	uint64_t too_big;		/* frames longer than an mbuf holds, or shorter than an
					 * Ethernet header: skipped */
	uint64_t loops_done;		/* whole passes over the capture */
	double seconds;			/* from the first frame sent to the last */
	double capture_seconds;		/* the capture's own span (one pass) */
	bool stopped;			/* ended by @stop */
};

/**
 * Play the frames of a capture out of a DPDK port, at the capture's timing scaled by
 * @p conf->speed or at top speed, @p conf->loops times, rewritten by @p conf->rw. A full TX
 * queue is retried (backpressure); frames still refused after a second are dropped and counted.
 * Needs roce_eal_init().
 * @param err  receives one line naming the file or device and what failed
 * @return 0; -EINVAL (bad devargs, unreadable capture, not Ethernet); -EBADMSG (the capture
 *         broke off: the frames before the break were sent); -ENOMEM
 */
int roce_replay_port(const struct roce_replay_port_conf *conf, struct roce_replay_port_stats *st,
		     char *err, size_t errlen);

/* ---- into an emulated responder (replay_resp.c) ---- */

/* How the responder comparison runs. */
struct roce_replay_resp_conf {
	const char *path;		/* the capture */
	const char *out_pcap;		/* write rocelab's answers (and the requests fed) here; NULL: no */
	bool has_responder;		/* @responder names the responder's address */
	uint8_t responder_ver;		/* its IP version */
	struct roce_ip_addr responder;	/* default: the destination of the first RC request */
	uint32_t mtu;			/* path MTU in bytes; 0: inferred from the capture */
	FILE *out;			/* the table and the summary go here */
	bool verbose;			/* print every pair, not only the differing ones */
	unsigned int max_rows;		/* differing rows printed before "..." (0: 20) */
};

/* The outcome. */
struct roce_replay_resp_result {
	uint64_t requests;		/* request frames fed to rocelab */
	uint64_t cap_responses;		/* responses in the capture */
	uint64_t our_responses;		/* responses rocelab sent */
	uint64_t matched;		/* pairs (same opcode and PSN) with every compared field equal */
	uint64_t differing;		/* pairs with some field different */
	uint64_t missing;		/* capture responses rocelab did not send */
	uint64_t extra;			/* rocelab responses the capture does not have */
	uint64_t lost;			/* of those, ones the capture shows were lost before it
					 * (its ACK MSNs skip them, or the request was resent) */
	uint64_t payload_compared;	/* payload bytes compared (known from replayed writes) */
	uint64_t credits_differ;	/* matched ACKs whose end-to-end credit counts differ */
};

/**
 * Feed the RC requests of one responder in a capture, in capture order at their capture times
 * (virtual time), to a rocelab host set up from what the capture shows (QPN, PSN, MTU, memory
 * regions from the RETHs/AtomicETHs, rights from the NAKs), and compare its responses with the
 * capture's, frame by frame (docs/replay.md).
 * @param err  receives one line on failure (the file, or what could not be inferred)
 * @return 0 (compared: look at @p res); -EINVAL (unreadable capture, no RC request in it);
 *         -ENOMEM; -EIO (@p conf->out_pcap could not be written); roce_pcap_create()'s
 *         -errno (@p conf->out_pcap refused or not created: -EEXIST not a capture)
 */
int roce_replay_responder(const struct roce_replay_resp_conf *conf,
			  struct roce_replay_resp_result *res, char *err, size_t errlen);

#endif /* ROCE_REPLAY_H */
