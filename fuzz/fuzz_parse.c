/*
 * libFuzzer target: any bytes through roce_wire_parse(), the one-line print and a rebuild, and
 * through the transport's roce_wire_parse_rx(), which must agree with the full parse.
 */
#include <stdio.h>
#include <stdlib.h>

#include "roce_wire.h"
#include "wire_check.h"

static void fail(const char *what, const char *why)
{
	fprintf(stderr, "fuzz_parse: %s: %s\n", what, why);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t scratch[70000];
	struct roce_pkt pkt;
	char text[1024];
	const char *why;
	int rc, n;

	if (size > UINT32_MAX)
		return 0;
	/* libFuzzer hands the input in a heap block of exactly @size bytes: ASan sees over-reads. */
	rc = roce_wire_parse(data, (uint32_t)size, 0, &pkt);
	why = check_decode(data, (uint32_t)size, rc, &pkt, true);
	if (why != NULL)
		fail("decode", why);
	n = roce_pkt_snprint(text, sizeof(text), &pkt);
	if (n < 0 || (size_t)n >= sizeof(text) || text[n] != '\0')
		fail("snprint", "bad length or terminator");
	roce_pkt_snprint(text, (size_t)(size % 16), &pkt);	/* a short buffer cuts cleanly */
	if (rc == 0) {
		why = check_rebuild(&pkt, scratch, sizeof(scratch));
		if (why != NULL)
			fail("rebuild", why);
	}

	why = check_parse_rx(data, (uint32_t)size);
	if (why != NULL)
		fail("receive parse", why);

	/* Without the ICRC every verdict is the same, except an ICRC mismatch that disappears. */
	{
		struct roce_pkt fast;
		int rc2 = roce_wire_parse(data, (uint32_t)size, ROCE_PARSE_NO_ICRC, &fast);

		why = check_decode(data, (uint32_t)size, rc2, &fast, false);
		if (why != NULL)
			fail("decode without ICRC", why);
		if (fast.err != (pkt.err == ROCE_WERR_ICRC_MISMATCH ? ROCE_WERR_OK : pkt.err))
			fail("decode without ICRC", "another verdict than with the ICRC");
	}
	return 0;
}
