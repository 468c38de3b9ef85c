/*
 * libFuzzer target: any bytes through roce_wire_parse(), the one-line print and a rebuild, and
 * through the transport's roce_wire_parse_rx(), which must agree with the full parse, and its
 * roce_wire_parse_rx_chain() over the bytes cut into three segments; as
 * dissect reads a capture (ROCE_PARSE_CAPTURE), through its three formats (a UD SEND to QP1
 * reaches the MAD decoder there, its ICRC right or wrong); and the bytes as a MAD by themselves.
 */
#include <stdio.h>
#include <stdlib.h>

#include "roce_fmt.h"
#include "roce_io.h"
#include "roce_mad.h"
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

	/* the chain's cuts: anywhere, as the input's last bytes say */
	why = check_parse_rx(data, (uint32_t)size,
			     size >= 4 ? (uint32_t)data[size - 1] | (uint32_t)data[size - 2] << 8 |
					 (uint32_t)data[size - 3] << 16 | (uint32_t)data[size - 4] << 24 :
					 0);
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

	/*
	 * As a capture: the same verdict for a frame that was whole and had no IPv6 extension
	 * headers; the input may equally be a snaplen's cut of a longer frame.
	 */
	{
		static char out[16384];
		struct roce_pcap_frame f = { .data = data, .caplen = (uint32_t)size,
					     .wirelen = (uint32_t)size };
		struct roce_pkt cap;
		int rc3 = roce_wire_parse(data, (uint32_t)size, ROCE_PARSE_CAPTURE, &cap);

		why = check_decode(data, (uint32_t)size, rc3, &cap, true);
		if (why != NULL)
			fail("decode as a capture", why);
		if (rc == 0 && (rc3 != 0 || cap.truncated))
			fail("decode as a capture", "refuses or cuts a frame the plain parse took");
		if (rc3 == 0 && !cap.truncated) {
			why = check_rebuild(&cap, scratch, sizeof(scratch));
			if (why != NULL)
				fail("rebuild as a capture", why);
		}
		n = roce_pkt_snprint(text, sizeof(text), &cap);
		if (n < 0 || (size_t)n >= sizeof(text))
			fail("snprint as a capture", "bad length");
		if (roce_dissect_line(out, sizeof(out), &f, &cap) >= (int)sizeof(out) ||
		    roce_dissect_jsonl(out, sizeof(out), &f, &cap) >= (int)sizeof(out) ||
		    roce_dissect_verbose(out, sizeof(out), &f, &cap) >= (int)sizeof(out))
			fail("dissect formats", "output cut");
	}

	/* The bytes as a UD payload on QP1: decoded as far as they go, never past them. */
	{
		struct roce_mad mad;
		struct roce_fmt f;
		int rc4 = roce_mad_parse(data, (uint32_t)size, &mad);

		if ((rc4 == 0) != (size >= ROCE_MAD_HDR_LEN) || mad.len > size ||
		    (mad.priv != NULL && mad.priv + mad.priv_len > data + size))
			fail("MAD", "decoded beyond the bytes or refused a whole header");
		roce_fmt_init(&f, text, sizeof(text));
		roce_fmt_mad(&f, &mad);
		n = roce_fmt_end(&f);
		if (n < 0 || (size_t)n >= sizeof(text))
			fail("MAD", "one-line form cut");
	}
	return 0;
}
