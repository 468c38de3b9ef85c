/* libFuzzer target: rewrite rules from text, then any bytes through roce_rewrite_frame(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_replay.h"
#include "roce_wire.h"

static void fail(const char *why)
{
	fprintf(stderr, "fuzz_rewrite: %s\n", why);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: up to 5 NUL-terminated rule texts (one per field: src-mac, dst-mac, src-ip, dst-ip,
 * qpn), then the frame. The frame is rewritten in a heap copy of exactly its size (ASan sees
 * over-reads and over-writes); what the rewrite reports must agree with the frame it left.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_rewrite rw;
	struct roce_pkt before, after;
	size_t off = 0;
	unsigned int did;
	char err[256];
	uint8_t *frame;
	int rc_before, rc_after;

	memset(&rw, 0, sizeof(rw));
	for (int f = 0; f < ROCE_RW_NFIELDS && off < size; f++) {
		const uint8_t *nul = memchr(data + off, 0, size - off);
		char spec[80];
		size_t len;

		if (nul == NULL)
			break;
		len = (size_t)(nul - (data + off));
		if (len < sizeof(spec)) {
			memcpy(spec, data + off, len + 1);
			if (roce_rewrite_add(&rw, (enum roce_rw_field)f, spec, err, sizeof(err)) != 0 &&
			    (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL))
				fail("a refused rule without a message");
		}
		off += len + 1;
	}
	if (size - off > UINT16_MAX)
		return 0;
	frame = malloc(size - off ? size - off : 1);
	if (frame == NULL)
		return 0;
	memcpy(frame, data + off, size - off);
	rc_before = roce_wire_parse(frame, (uint32_t)(size - off), 0, &before);
	did = roce_rewrite_frame(&rw, frame, (uint32_t)(size - off));
	rc_after = roce_wire_parse(frame, (uint32_t)(size - off), 0, &after);
	/* a whole RoCEv2 frame keeps its verdict: a right ICRC stays right, a wrong one wrong */
	if (before.kind == ROCE_KIND_ROCEV2 && (rc_before == 0 || rc_before == -EBADMSG) &&
	    rc_after != rc_before)
		fail("the rewrite changed the frame's ICRC or checksum verdict");
	if ((did & ROCE_RW_DID_ICRC) && !(did & (ROCE_RW_DID_IP | ROCE_RW_DID_QPN)))
		fail("ICRC redone without an IP or QPN change");
	free(frame);
	return 0;
}
