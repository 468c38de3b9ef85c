/* libFuzzer target: the parsers of perftest's TCP exchange and of ibv_*_pingpong's, on a peer's bytes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_private.h"

static void fail(const char *why, const uint8_t *data, size_t size)
{
	char text[200];

	fprintf(stderr, "fuzz_exchange: %s: '%s'\n", why,
		perf_oob_printable(data, size, text, sizeof(text)));
	abort();
}

static bool same_key(const struct perf_key *a, const struct perf_key *b)
{
	return a->lid == b->lid && a->out_reads == b->out_reads && a->qpn == b->qpn &&
	       a->psn == b->psn && a->rkey == b->rkey && a->vaddr == b->vaddr &&
	       memcmp(a->gid, b->gid, 16) == 0 && a->srqn == b->srqn;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: what a peer sends, as one message of any length (a server reads fixed sizes: the
 * parsers get at most their message's, as the exchange gives them). Each parser either refuses
 * it or gives values its message can carry; a key or pingpong address that parses packs back
 * into a message that parses to the same values; the escaped text of any bytes fits its buffer,
 * is terminated and printable.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a heap copy of exactly @size bytes: ASan catches a read past the peer's message */
	char *msg = malloc(size ? size : 1);
	struct perf_key k, k2;
	struct perf_pp_dest d, d2;
	char key[PERF_KEY_MSG], pp[PERF_PP_MSG], text[200];
	double version;
	uint8_t mtu;

	if (msg == NULL)
		return 0;
	memcpy(msg, data, size);

	if (perf_version_parse(msg, size, &version) == 0 &&
	    !(isfinite(version) && version >= 5.70 && version < 100))
		fail("a version out of range accepted", data, size);
	if (perf_mtu_parse(msg, size, &mtu) == 0 && (mtu < 1 || mtu > 5))
		fail("an MTU outside 1-5 accepted", data, size);

	if (perf_key_parse(msg, size, &k) == 0) {
		if (k.qpn > 0xffffff || k.psn > 0xffffff)
			fail("a key with a QPN or PSN over 24 bits", data, size);
		perf_key_pack(&k, key);
		if (memchr(key, '\0', sizeof(key)) == NULL)
			fail("a packed key message without its NUL", data, size);
		if (perf_key_parse(key, sizeof(key), &k2) != 0 || !same_key(&k, &k2))
			fail("a key message that does not survive packing", data, size);
	}
	if (perf_pp_parse(msg, size, &d) == 0) {
		if (d.qpn > 0xffffff || d.psn > 0xffffff)
			fail("a pingpong address with a QPN or PSN over 24 bits", data, size);
		perf_pp_pack(&d, pp);
		if (perf_pp_parse(pp, sizeof(pp), &d2) != 0 || d.lid != d2.lid ||
		    d.qpn != d2.qpn || d.psn != d2.psn || memcmp(d.gid, d2.gid, 16) != 0)
			fail("a pingpong address that does not survive packing", data, size);
	}

	/* the messages' escaped text, at each buffer size the exchange uses and the smallest */
	for (size_t n = 4; n <= sizeof(text); n = n < 24 ? n * 2 : n + 88) {
		const char *t = perf_oob_printable(msg, size, text, n);
		size_t len = strnlen(t, n);

		if (len == n)
			fail("escaped text not terminated in its buffer", data, size);
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)t[i] < 0x20 || (unsigned char)t[i] >= 0x7f)
				fail("escaped text with a byte that is not printable", data, size);
	}
	free(msg);
	return 0;
}
