/*
 * lib/io: the packet pattern of a capture, message by message in each flow, and two patterns
 * compared: the same workload run twice (on a device and on the emulator, say) with addresses,
 * QPNs and first PSNs of their own.
 */
#ifndef ROCE_PATTERN_H
#define ROCE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_io.h"
#include "roce_wire.h"

/* One message, as its packets showed it: first copies only, a resent packet is left out. */
struct roce_pattern_msg {
	uint8_t op;			/* BTH opcode of its first packet */
	uint8_t last_op;		/* BTH opcode of its last packet */
	bool whole;			/* its last packet (LAST or ONLY) was seen */
	bool ackreq;			/* AckReq set on its last packet */
	uint32_t pkts;			/* packets */
	uint32_t size;			/* payload bytes; a READ request: the length it asks for */
	int64_t psn;			/* first PSN, counted from the first PSN of the flow's
					 * requests (a response: of the requests it answers) */
};

/* What a compared message is. */
enum roce_pattern_role {
	ROCE_PATTERN_REQ,		/* a request: SEND, WRITE, READ request, atomic */
	ROCE_PATTERN_RESP,		/* a READ response or an atomic ACK */
	ROCE_PATTERN_NROLES,
};

/* What two messages can differ in: bits of roce_pattern_diff.fields. */
enum roce_pattern_field {
	ROCE_PATTERN_OPCODES = 1u << 0,	/* first or last opcode, or the number of packets */
	ROCE_PATTERN_SIZE = 1u << 1,	/* payload bytes */
	ROCE_PATTERN_PSN = 1u << 2,	/* first PSN, from the flow's first */
	ROCE_PATTERN_ACKREQ = 1u << 3,	/* AckReq on the last packet */
	ROCE_PATTERN_MISSING = 1u << 4,	/* one side has no such message */
};
#define ROCE_PATTERN_NFIELDS 4		/* the fields above but MISSING */

#define ROCE_PATTERN_HIST 9		/* ACKs by messages each covers: 0 .. 7, 8 or more */
#define ROCE_PATTERN_DIFFS 8		/* differing messages kept: the first ones */

/* One capture's figures. */
struct roce_pattern_side {
	uint64_t frames;		/* RoCE frames read */
	uint32_t flows;			/* flows (source, destination, destination QP) */
	uint32_t req_flows;		/* of them, flows carrying requests */
	uint64_t requests;		/* request messages */
	uint64_t responses;		/* READ response and atomic ACK messages */
	uint64_t acks;			/* ACKs: AETH ACK without data */
	uint64_t naks;			/* NAKs and RNR NAKs, the dissector's summary's */
	uint64_t acked;			/* request messages the ACKs covered */
	uint64_t ack_hist[ROCE_PATTERN_HIST]; /* ACKs by how many messages each covered */
	uint64_t resent;		/* packets sent again, the dissector's summary's */
	uint64_t other;			/* RoCE frames in no message: CNPs, faults, answers to
					 * requests the capture does not hold */
};

/* A message that differs, with both sides' (a missing one is zero). */
struct roce_pattern_diff {
	enum roce_pattern_role role;
	uint32_t qp;			/* the flow: its rank by first request, from 1 */
	uint64_t index;			/* the message in the flow, from 1 */
	unsigned int fields;		/* enum roce_pattern_field bits */
	struct roce_pattern_msg m[2];
};

/* Two patterns compared. */
struct roce_pattern_cmp {
	struct roce_pattern_side side[2];
	uint64_t compared[ROCE_PATTERN_NROLES];	/* messages both sides have, by role */
	uint64_t same[ROCE_PATTERN_NROLES];	/* of them, equal in every field */
	uint64_t missing[ROCE_PATTERN_NROLES];	/* messages one side has and the other not */
	uint64_t field[ROCE_PATTERN_NFIELDS];	/* compared messages differing in each field,
						 * by bit position of enum roce_pattern_field */
	bool acks_same;			/* as many ACKs and NAKs, each covering as many messages */
	uint32_t ndiff;			/* entries of @diff */
	struct roce_pattern_diff diff[ROCE_PATTERN_DIFFS];
};

struct roce_pattern;

/** An empty pattern. @return it, or NULL with errno ENOMEM */
struct roce_pattern *roce_pattern_create(void);

/**
 * Account one frame, in capture order. Frames that are not RoCE are ignored; a snaplen may
 * have cut the payload (ROCE_PARSE_CAPTURE: lengths come from the IP header).
 * @param f    the frame (time, wire length); borrowed
 * @param pkt  its parse; borrowed
 * @return 0; -ENOMEM (the frame is counted in side.other only)
 */
int roce_pattern_add(struct roce_pattern *p, const struct roce_pcap_frame *f,
		     const struct roce_pkt *pkt);

/**
 * The pattern of a capture file (every frame, ROCE_PARSE_CAPTURE, ICRCs not checked).
 * @param err  receives one line naming the file and the fault
 * @return the pattern, or NULL with errno set (the reader's errors, EBADMSG for a file that
 *         breaks off, ENOMEM)
 */
struct roce_pattern *roce_pattern_read(const char *path, char *err, size_t errlen);

/** Destroy; NULL is a no-op. */
void roce_pattern_destroy(struct roce_pattern *p);

/**
 * Compare @p a (side 0) with @p b (side 1), after their last roce_pattern_add(). Flows are
 * matched by role and order: the k-th flow carrying requests of each, and the flows answering
 * them; messages by their place in the flow. PSNs count from each flow's first request.
 */
void roce_pattern_compare(struct roce_pattern *a, struct roce_pattern *b,
			  struct roce_pattern_cmp *out);

/**
 * A message in words: "RC_RDMA_WRITE_FIRST..LAST x4 4096 B psn +12 ackreq".
 * @return @p out
 */
char *roce_pattern_msg_text(const struct roce_pattern_msg *m, char *out, size_t size);

/**
 * The comparison as lines of text, each starting with a blank: messages compared, same and
 * differing (by field), responses, ACK coalescing of each side, NAKs and resent packets where
 * there are any, then up to @p max_diffs differing messages. @p name names each side.
 * @return 0 or -EIO
 */
int roce_pattern_print(const struct roce_pattern_cmp *c, const char *const name[2],
		       unsigned int max_diffs, FILE *out);

#endif /* ROCE_PATTERN_H */
