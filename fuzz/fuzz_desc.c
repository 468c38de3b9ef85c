/* libFuzzer target: craft's frame descriptor lines (roce_desc_parse), and their round trip. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_wire.h"

#define LINE_MAX_LEN (2 * ROCE_DESC_PAYLOAD_MAX + 4096)	/* payload=HEX and every other key */
#define FRAME_SIZE (ROCE_DESC_PAYLOAD_MAX + 512)

static struct roce_desc d1, d2;		/* 64 KiB each: not on the stack */
static uint8_t f1[FRAME_SIZE], f2[FRAME_SIZE];
static char line[LINE_MAX_LEN + 1], again[LINE_MAX_LEN + 1];

static void fail(const char *why, const char *text)
{
	fprintf(stderr, "fuzz_desc: %s: %.300s\n", why, text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: one descriptor line. A refused line must say why. A line that parses and builds must
 * give a frame the wire parser reads back; printed again with roce_desc_snprint(), that frame's
 * line must parse and build into the same bytes (the contract docs/craft.md states).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt pkt;
	char err[256];
	int rc, n1, n2;

	if (size > LINE_MAX_LEN || memchr(data, '\0', size) != NULL)
		return 0;	/* craft refuses a NUL byte before the parser sees the line */
	memcpy(line, data, size);
	line[size] = '\0';
	err[0] = '\0';
	rc = roce_desc_parse(line, &d1, err, sizeof(err));
	if (rc < 0) {
		if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL)
			fail("a refused line without a message", line);
		return 0;
	}
	if (rc == 0)
		return 0;
	n1 = roce_desc_build(&d1, f1, sizeof(f1));
	if (n1 <= 0)
		return 0;	/* e.g. a length the frame cannot hold: craft says so */
	rc = roce_wire_parse(f1, (uint32_t)n1, 0, &pkt);
	if (rc != 0 && rc != -EBADMSG)
		return 0;	/* a frame made malformed on purpose (len=, pad=, ...) */
	if (roce_desc_snprint(again, sizeof(again), &pkt, 0) >= (int)sizeof(again))
		fail("the printed line does not fit", line);
	err[0] = '\0';
	if (roce_desc_parse(again, &d2, err, sizeof(err)) != 1)
		fail(err[0] != '\0' ? err : "the printed line does not parse", again);
	n2 = roce_desc_build(&d2, f2, sizeof(f2));
	if (n2 != n1 || memcmp(f1, f2, (size_t)n1) != 0)
		fail("the printed line builds other bytes", again);
	return 0;
}
