/* The RoCE invariant CRC (IBA Annex A17.3.3), on wire_crc.c's folding CRC-32; choice of the SIMD path. */
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>
#include <rte_vect.h>
#if defined(__x86_64__)
#include <wmmintrin.h>
#endif

#include "roce_wire.h"
#include "wire_private.h"

#define CRC32_POLY_REFLECTED 0xedb88320u	/* IEEE 802.3, bit-reversed */
#define ICRC_ONE_PASS_MAX 256			/* rest of the frame copied behind the headers */

static const char *crc_path_name = "portable";

/* a * b mod P, both reflected (the coefficient of x^0 in bit 31); one bit per step. */
static uint32_t gf2_mulmod_bitwise(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (int i = 0; i < 32; i++) {
		p ^= b & -(a >> 31);
		a <<= 1;
		b = (b >> 1) ^ (CRC32_POLY_REFLECTED & -(b & 1));
	}
	return p;
}

#if defined(__x86_64__)
/*
 * The same product with one carry-less multiply: clmul(a, b) << 1 holds a * b as a 64-bit
 * reflected value (bit k is x^(63-k)); its high half is already below x^32 and its low half,
 * worth L(x) * x^32, is reduced by four table reads.
 */
__attribute__((target("pclmul,sse2")))
static uint32_t gf2_mulmod_clmul(uint32_t a, uint32_t b)
{
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0);
	uint64_t c = (uint64_t)_mm_cvtsi128_si64(p) << 1;
	uint32_t lo = (uint32_t)c;

	return (uint32_t)(c >> 32) ^ wire_reduce_x32[0][lo & 0xff] ^
	       wire_reduce_x32[1][(lo >> 8) & 0xff] ^ wire_reduce_x32[2][(lo >> 16) & 0xff] ^
	       wire_reduce_x32[3][lo >> 24];
}
#endif

/* gf2_mulmod_clmul where the CPU has PCLMULQDQ, else the bitwise loop; set by mulmod_init(). */
static uint32_t (*gf2_mulmod)(uint32_t a, uint32_t b) = gf2_mulmod_bitwise;

/* The tables are built with the library (gen_crc_tables.py): nothing to compute here. */
__attribute__((constructor)) static void mulmod_init(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul"))
		gf2_mulmod = gf2_mulmod_clmul;
#endif
}

uint32_t wire_x8n_mod_p(uint32_t n)
{
	uint32_t r, sq;

	if (roce_likely(n < WIRE_XPOW8_LEN))
		return wire_xpow8[n];
	/* Square and multiply from x^(8 * 2^k). */
	r = 0x80000000u;
	sq = wire_xpow8[1];
	for (; n != 0; n >>= 1) {
		if (n & 1)
			r = gf2_mulmod(r, sq);
		sq = gf2_mulmod(sq, sq);
	}
	return r;
}

uint32_t roce_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint32_t len_b)
{
	return gf2_mulmod(wire_x8n_mod_p(len_b), crc_a) ^ crc_b;
}

uint32_t roce_crc32(const void *data, uint32_t len)
{
	return wire_crc32(0, data, len);
}

static uint16_t crc_select(void)
{
	uint16_t width = rte_vect_get_max_simd_bitwidth();

	if (width >= RTE_VECT_SIMD_512 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
	    rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0) {
		rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
		wire_crc_fold_select(true, true, true);
		crc_path_name = "avx512";
	} else if (width >= RTE_VECT_SIMD_128 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0) {
		/* rte_net_crc has no 256-bit path; ours folds 32 bytes at a time where it can */
		rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
		wire_crc_fold_select(true, width >= RTE_VECT_SIMD_256, false);
		crc_path_name = wire_crc_fold_wide() ? "avx2-vpclmulqdq" : "sse42";
	} else {
		rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
		wire_crc_fold_select(false, false, false);
		crc_path_name = "scalar";
	}
	return width;
}

/*
 * lib/wire needs no EAL: allow 512-bit SIMD before any EAL exists, so rte_net_crc takes its
 * fastest path from the first frame (left alone, it falls back to a 0.2 GB/s scalar loop and
 * says so on stderr). roce_eal_init() selects again under the user's EAL settings.
 */
__attribute__((constructor)) static void crc_init(void)
{
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	crc_select();
}

const char *roce_crc_select_fastest(void)
{
	uint16_t width = crc_select();

	ROCE_LOG(INFO, "CRC-32 path: %s (max SIMD width %u bits)", crc_path_name, width);
	return crc_path_name;
}

const char *roce_crc_path(void)
{
	return crc_path_name;
}

/*
 * Copy the invariant view of the headers from L3 to the end of the BTH into @p out, behind
 * 8 bytes of ones standing for the masked LRH; return its length.
 */
static uint32_t masked_headers(const uint8_t *buf, uint32_t l3_off, uint32_t bth_off, bool ipv4,
			       bool udp, uint8_t *out)
{
	uint32_t hlen = bth_off - l3_off + ROCE_BTH_LEN;
	uint8_t *l3 = out + 8;

	memset(out, 0xff, 8);
	memcpy(l3, buf + l3_off, hlen);
	if (ipv4) {
		l3[1] = 0xff;			/* TOS: DSCP and ECN */
		l3[8] = 0xff;			/* TTL */
		l3[10] = l3[11] = 0xff;		/* header checksum */
	} else {
		l3[0] |= 0x0f;			/* traffic class, high nibble */
		l3[1] = l3[2] = l3[3] = 0xff;	/* traffic class, low nibble; flow label */
		l3[7] = 0xff;			/* hop limit */
	}
	if (udp)
		l3[bth_off - l3_off - 2] = l3[bth_off - l3_off - 1] = 0xff; /* UDP checksum */
	l3[bth_off - l3_off + 4] = 0xff;	/* BTH: FECN, BECN, resv6 */
	return 8 + hlen;
}

uint32_t wire_icrc_headers(const uint8_t *buf, uint32_t l3_off, uint32_t bth_off, uint32_t upto,
			   bool ipv4, bool udp, uint8_t *out)
{
	uint32_t rest_off = bth_off + ROCE_BTH_LEN;
	uint32_t hlen = masked_headers(buf, l3_off, bth_off, ipv4, udp, out);
	uint32_t ext = upto > rest_off ? upto - rest_off : 0;

	memcpy(out + hlen, buf + rest_off, ext);
	return hlen + ext;
}

/*
 * The ICRC's masks over the frame from 8 bytes before the L3 header (standing for the LRH) on,
 * for the three usual shapes: each byte is ORed into the frame's, so the CRC reads the frame in
 * place. Offsets: 8 + the field's offset in the L3 header; UDP follows a 20-byte IPv4 or a
 * 40-byte IPv6 header, BTH follows UDP (or the GRH in RoCEv1).
 */
#define M_LRH [0 ... 7] = 0xff
#define M_IPV6 [8] = 0x0f, [9 ... 11] = 0xff, [15] = 0xff	/* traffic class, flow label, hop limit */
const uint8_t wire_icrc_mask_v4[WIRE_ICRC_MASK_MAX] = {
	M_LRH, [8 + 1] = 0xff, [8 + 8] = 0xff, [8 + 10 ... 8 + 11] = 0xff, /* TOS, TTL, checksum */
	[8 + 26 ... 8 + 27] = 0xff,	/* UDP checksum */
	[8 + 32] = 0xff,		/* BTH: FECN, BECN, resv6 */
};
const uint8_t wire_icrc_mask_v6[WIRE_ICRC_MASK_MAX] = {
	M_LRH, M_IPV6, [8 + 46 ... 8 + 47] = 0xff, [8 + 52] = 0xff,
};
const uint8_t wire_icrc_mask_v1[WIRE_ICRC_MASK_MAX] = {	/* GRH, then BTH */
	M_LRH, M_IPV6, [8 + 44] = 0xff,
};

uint32_t wire_icrc(const uint8_t *buf, uint32_t l3_off, uint32_t bth_off, uint32_t end,
		   bool ipv4, bool udp)
{
	uint8_t hdr[WIRE_CRC_PRE_MAX + ICRC_ONE_PASS_MAX];
	uint32_t rest_off = bth_off + ROCE_BTH_LEN;
	uint32_t rest_len = end > rest_off ? end - rest_off : 0;
	uint32_t l3_len = bth_off - l3_off;
	uint32_t hlen;

	if (roce_likely(l3_off >= 8 && end >= rest_off)) {
		/* in place: the masks cover the headers' blocks, the frame is at least that long */
		const uint8_t *p = buf + l3_off - 8;
		uint32_t len = end - l3_off + 8;

		if (ipv4 && udp && l3_len == IPV4_HDR_LEN + UDP_HDR_LEN)
			return wire_icrc_v4(p, len);
		if (!ipv4 && udp && l3_len == IPV6_HDR_LEN + UDP_HDR_LEN && len >= 64)
			return wire_icrc_v6(p, len);
		if (!ipv4 && !udp && l3_len == IPV6_HDR_LEN && len >= 64)
			return wire_crc32_masked(p, len, wire_icrc_mask_v1, 64);
	}

	/*
	 * The ICRC is the complemented CRC sent least-significant byte first, which is how an
	 * Ethernet FCS lands on the wire too: the 4 stored bytes read little-endian equal the
	 * standard CRC-32 value.
	 */
	if (rest_len <= ICRC_ONE_PASS_MAX) {
		/* short: one contiguous copy hashes faster than a prefix merged into the rest */
		hlen = wire_icrc_headers(buf, l3_off, bth_off, end, ipv4, udp, hdr);
		return wire_crc32(0, hdr, hlen);
	}
	hlen = wire_icrc_headers(buf, l3_off, bth_off, rest_off, ipv4, udp, hdr);
	return wire_crc32_copy(0, hdr, hlen, NULL, buf + rest_off, rest_len);
}

uint32_t roce_icrc_calc(const uint8_t *buf, const struct roce_pkt *pkt, uint32_t end)
{
	return wire_icrc(buf, pkt->l3_off, pkt->bth_off, end, pkt->ip_ver == 4,
			 pkt->kind == ROCE_KIND_ROCEV2);
}
