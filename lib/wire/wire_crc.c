/*
 * CRC-32 (IEEE 802.3) by carry-less multiplication, that can copy the bytes it hashes on the
 * way: building a frame copies the payload and hashes it in one pass instead of two.
 *
 * Polynomials are bit-reflected, as the CRC is: in a 32-bit value bit i stands for x^(31 - i),
 * in a 64-bit value for x^(63 - i), in a 16-byte block (memory order, little-endian lanes) for
 * x^(127 - i). PCLMULQDQ multiplies such values exactly, with the product landing one bit
 * lower than a 128-bit reflected value would put it; the constants below absorb that shift.
 *
 * The data is cut into 16-byte blocks, counting from the end. A prefix (the ICRC's masked
 * headers) and the data's first len % 16 bytes form the leading blocks, in a stack buffer
 * behind zero bytes, which leave the polynomial unchanged; they are folded apart from the
 * data's whole blocks and moved past them at the end. The blocks are folded (multiplied by
 * x^(8 D) mod P to move D bytes on) by four accumulators of 64 bytes (VPCLMULQDQ on AVX-512),
 * 32 bytes (VPCLMULQDQ on AVX2: AMD Zen 3, Intel Ice Lake client) or 16 bytes (PCLMULQDQ) each,
 * then merged. The 128-bit remainder R, times x^32, is reduced to 64 bits with
 * two multiplications and to 32 with Barrett's method (two more), in one register. The initial
 * value I adds I * x^(8 len) mod P, folded into the same reduction, so that no block needs it
 * spliced in. The ICRC read in place (wire_crc32_masked()) puts it in the first block instead.
 */
#include <stdalign.h>
#include <string.h>

#include <rte_net_crc.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "roce_wire.h"
#include "wire_private.h"

#define CRC32_POLY 0x04c11db7u		/* IEEE 802.3, normal order, x^32 implied */
#define CRC32_POLY_REFLECTED 0xedb88320u

/* Multipliers that move a block D bytes further: for its first and its second 8 bytes. */
struct fold_k {
	uint64_t lo;	/* x^(8D + 32) mod P, reflected, << 1 */
	uint64_t hi;	/* x^(8D - 32) mod P, reflected, << 1 */
};

static struct {
	struct fold_k k16, k32, k48, k64;	/* fold by 16, 32, 48, 64 bytes */
	struct fold_k k96, k128, k192, k256;	/* ... and by 96 to 256 (VPCLMULQDQ) */
	struct fold_k kb[7];			/* kb[n]: fold by 16 n bytes (n >= 1) */
	struct fold_k fin;			/* x^96, x^64 mod P: R x^32 to 64 bits */
	struct fold_k bar;			/* P and floor(x^64 / P), 33 bits reflected */
	bool usable;				/* fold with PCLMULQDQ (else rte_net_crc) */
	bool zmm;				/* fold 64 bytes per instruction (VPCLMULQDQ) */
	bool ymm;				/* else fold 32 (VPCLMULQDQ without AVX-512) */
} crc;

/* x^n mod P, reflected; bit by bit (set-up only). */
static uint32_t xn_mod_p(unsigned int n)
{
	uint32_t v = 0x80000000u;	/* x^0 */

	for (unsigned int i = 0; i < n; i++)
		v = (v >> 1) ^ (CRC32_POLY_REFLECTED & -(v & 1));
	return v;
}

static uint32_t reflect32(uint32_t v)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i++, v >>= 1)
		r = r << 1 | (v & 1);
	return r;
}

static struct fold_k fold_k(unsigned int bytes)
{
	return (struct fold_k){ .lo = (uint64_t)xn_mod_p(8 * bytes + 32) << 1,
				.hi = (uint64_t)xn_mod_p(8 * bytes - 32) << 1 };
}

/* floor(x^64 / P) by long division in normal order; its x^32 term is left out. */
static uint32_t barrett_mu(void)
{
	unsigned __int128 r = (unsigned __int128)1 << 64;
	uint64_t q = 0;

	for (int d = 64; d >= 32; d--) {
		if ((uint64_t)(r >> d) & 1) {
			r ^= (unsigned __int128)((uint64_t)1 << 32 | CRC32_POLY) << (d - 32);
			q |= (uint64_t)1 << (d - 32);
		}
	}
	return reflect32((uint32_t)q);
}

__attribute__((constructor)) static void crc_fold_init(void)
{
	crc.k16 = fold_k(16);
	crc.k32 = fold_k(32);
	crc.k48 = fold_k(48);
	crc.k64 = fold_k(64);
	crc.k96 = fold_k(96);
	crc.k128 = fold_k(128);
	crc.k192 = fold_k(192);
	crc.k256 = fold_k(256);
	for (unsigned int n = 1; n < ROCE_DIM(crc.kb); n++)
		crc.kb[n] = fold_k(16 * n);
	crc.fin = (struct fold_k){ .lo = (uint64_t)xn_mod_p(96) << 1,
				   .hi = (uint64_t)xn_mod_p(64) << 1 };
	/* the x^32 terms of P and of floor(x^64 / P) are their bit 0 */
	crc.bar = (struct fold_k){ .lo = (uint64_t)CRC32_POLY_REFLECTED << 1 | 1,
				   .hi = (uint64_t)barrett_mu() << 1 | 1 };
	/* which SIMD to use is set by wire_icrc.c's crc_select(), with rte_net_crc's path */
}

bool wire_crc_fold_wide(void)
{
	return crc.zmm || crc.ymm;
}

#if defined(__x86_64__)
/* VEX encodings: no SSE/AVX transition stalls beside rte_net_crc's AVX-512 code */
#define CRC_TARGET __attribute__((target("pclmul,avx")))
#define CRC_TARGET_ZMM __attribute__((target("pclmul,avx,avx512f,vpclmulqdq")))
#define CRC_TARGET_YMM __attribute__((target("pclmul,avx,avx2,vpclmulqdq")))

/* @p a moved D bytes further, D being the distance @p k was made for. */
CRC_TARGET static inline __m128i fold(__m128i a, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

CRC_TARGET static inline __m128i k_vec(struct fold_k k)
{
	return _mm_set_epi64x((long long)k.hi, (long long)k.lo);
}

/* Load the next block, storing it at @p dst on the way when copying. */
CRC_TARGET static inline __m128i load_block(const uint8_t *src, uint8_t *dst, size_t off)
{
	__m128i b = _mm_loadu_si128((const __m128i *)(src + off));

	if (dst != NULL)
		_mm_storeu_si128((__m128i *)(dst + off), b);
	return b;
}

/* fold() on the four 16-byte lanes of a 64-byte register at once. */
CRC_TARGET_ZMM static inline __m512i fold4(__m512i a, struct fold_k k)
{
	__m512i kv = _mm512_broadcast_i32x4(k_vec(k));

	return _mm512_xor_si512(_mm512_clmulepi64_epi128(a, kv, 0x00),
				_mm512_clmulepi64_epi128(a, kv, 0x11));
}

CRC_TARGET_ZMM static inline __m512i load_block4(const uint8_t *src, uint8_t *dst, size_t off)
{
	__m512i b = _mm512_loadu_si512(src + off);

	if (dst != NULL)
		_mm512_storeu_si512(dst + off, b);
	return b;
}

/*
 * The bulk of the blocks after the first, @p r, 64 bytes per register and four registers in
 * flight; returns the 16-byte remainder of everything up to @p len, which *@p off_io is set to.
 * The register's four lanes and the last 0-3 whole blocks are merged in one step, each moved
 * by its own distance, not one after the other.
 */
CRC_TARGET_ZMM static __m128i fold_zmm_from(__m512i z, uint8_t *dst, const uint8_t *src,
					    uint32_t len, uint32_t *off_io)
{
	uint32_t off = *off_io, rem;
	__m128i r;

	if (len - off >= 192) {
		__m512i z0 = z, z1 = load_block4(src, dst, off), z2 = load_block4(src, dst, off + 64);
		__m512i z3 = load_block4(src, dst, off + 128);

		for (off += 192; len - off >= 256; off += 256) {
			z0 = _mm512_xor_si512(fold4(z0, crc.k256), load_block4(src, dst, off));
			z1 = _mm512_xor_si512(fold4(z1, crc.k256), load_block4(src, dst, off + 64));
			z2 = _mm512_xor_si512(fold4(z2, crc.k256), load_block4(src, dst, off + 128));
			z3 = _mm512_xor_si512(fold4(z3, crc.k256), load_block4(src, dst, off + 192));
		}
		z = _mm512_xor_si512(_mm512_xor_si512(fold4(z0, crc.k192), fold4(z1, crc.k128)),
				     _mm512_xor_si512(fold4(z2, crc.k64), z3));
	}
	for (; len - off >= 64; off += 64)
		z = _mm512_xor_si512(fold4(z, crc.k64), load_block4(src, dst, off));
	rem = (len - off) / 16;		/* whole blocks after the register */
	*off_io = len;
	r = _mm_xor_si128(_mm_xor_si128(fold(_mm512_extracti32x4_epi32(z, 0), k_vec(crc.kb[3 + rem])),
					fold(_mm512_extracti32x4_epi32(z, 1), k_vec(crc.kb[2 + rem]))),
			  fold(_mm512_extracti32x4_epi32(z, 2), k_vec(crc.kb[1 + rem])));
	if (rem == 0)
		return _mm_xor_si128(r, _mm512_extracti32x4_epi32(z, 3));
	r = _mm_xor_si128(r, fold(_mm512_extracti32x4_epi32(z, 3), k_vec(crc.kb[rem])));
	for (uint32_t i = 0; i + 1 < rem; i++)
		r = _mm_xor_si128(r, fold(load_block(src, dst, off + 16 * i), k_vec(crc.kb[rem - 1 - i])));
	return _mm_xor_si128(r, load_block(src, dst, off + 16 * (rem - 1)));
}

/*
 * The same from a 16-byte remainder @p r of everything before *@p off_io, which must leave at
 * least 64 bytes to fold.
 */
CRC_TARGET_ZMM static __m128i fold_zmm(__m128i r, uint8_t *dst, const uint8_t *src,
				       uint32_t len, uint32_t *off_io)
{
	__m512i z = _mm512_xor_si512(_mm512_zextsi128_si512(fold(r, k_vec(crc.k16))),
				     load_block4(src, dst, *off_io));

	*off_io += 64;
	return fold_zmm_from(z, dst, src, len, off_io);
}

/* fold() on the two 16-byte lanes of a 32-byte register at once. */
CRC_TARGET_YMM static inline __m256i fold2(__m256i a, struct fold_k k)
{
	__m256i kv = _mm256_broadcastsi128_si256(k_vec(k));

	return _mm256_xor_si256(_mm256_clmulepi64_epi128(a, kv, 0x00),
				_mm256_clmulepi64_epi128(a, kv, 0x11));
}

CRC_TARGET_YMM static inline __m256i load_block2(const uint8_t *src, uint8_t *dst, size_t off)
{
	__m256i b = _mm256_loadu_si256((const __m256i *)(src + off));

	if (dst != NULL)
		_mm256_storeu_si256((__m256i *)(dst + off), b);
	return b;
}

/*
 * fold_zmm() with 32-byte registers, for CPUs with VPCLMULQDQ but not AVX-512: four registers
 * in flight, 128 bytes a round; the remainder of everything before *@p off_io is @p r, and at
 * least 32 bytes must follow it. Returns the 16-byte remainder up to @p len (*@p off_io = len).
 */
CRC_TARGET_YMM static inline __attribute__((always_inline)) __m128i
fold_ymm(__m128i r, uint8_t *dst, const uint8_t *src, uint32_t len, uint32_t *off_io)
{
	size_t off = *off_io, rem;	/* 64 bits, as in fold_more() */
	__m256i y = _mm256_xor_si256(_mm256_zextsi128_si256(fold(r, k_vec(crc.k16))),
				     load_block2(src, dst, off));
	__m128i lo, hi;

	off += 32;
	if (len - off >= 96) {
		__m256i y0 = y, y1 = load_block2(src, dst, off);
		__m256i y2 = load_block2(src, dst, off + 32), y3 = load_block2(src, dst, off + 64);

		for (off += 96; len - off >= 128; off += 128) {
			y0 = _mm256_xor_si256(fold2(y0, crc.k128), load_block2(src, dst, off));
			y1 = _mm256_xor_si256(fold2(y1, crc.k128), load_block2(src, dst, off + 32));
			y2 = _mm256_xor_si256(fold2(y2, crc.k128), load_block2(src, dst, off + 64));
			y3 = _mm256_xor_si256(fold2(y3, crc.k128), load_block2(src, dst, off + 96));
		}
		y = _mm256_xor_si256(_mm256_xor_si256(fold2(y0, crc.k96), fold2(y1, crc.k64)),
				     _mm256_xor_si256(fold2(y2, crc.k32), y3));
	}
	for (; len - off >= 32; off += 32)
		y = _mm256_xor_si256(fold2(y, crc.k32), load_block2(src, dst, off));
	rem = (len - off) / 16;		/* 0 or 1 whole block after the register */
	*off_io = len;
	lo = _mm256_castsi256_si128(y);
	hi = _mm256_extracti128_si256(y, 1);
	r = fold(lo, k_vec(crc.kb[1 + rem]));
	if (rem == 0)
		return _mm_xor_si128(r, hi);
	return _mm_xor_si128(_mm_xor_si128(r, fold(hi, k_vec(crc.kb[1]))),
			     load_block(src, dst, off));
}

/* fold_ymm() made twice: hashing in place (the ICRC, a CRC) and copying on the way. */
CRC_TARGET_YMM static __m128i fold_ymm_hash(__m128i r, const uint8_t *src, uint32_t len,
					    uint32_t *off_io)
{
	return fold_ymm(r, NULL, src, len, off_io);
}

CRC_TARGET_YMM static __m128i fold_ymm_copy(__m128i r, uint8_t *dst, const uint8_t *src,
					    uint32_t len, uint32_t *off_io)
{
	return fold_ymm(r, dst, src, len, off_io);
}

/*
 * The 16-byte remainder of @p r, the remainder of everything before @p off, followed by the
 * whole blocks of @p src from @p off to @p len (len - off a multiple of 16, maybe 0).
 */
CRC_TARGET static inline __attribute__((always_inline)) __m128i
fold_more(__m128i r, uint8_t *dst, const uint8_t *src, uint32_t off_in, uint32_t len)
{
	uint32_t done = off_in;
	size_t off;	/* 64 bits: src + off + 16 is one addressing mode, no zero-extension */

	if (crc.zmm && len - done >= 64)
		r = fold_zmm(r, dst, src, len, &done);
	else if (crc.ymm && len - done >= 32)
		r = dst == NULL ? fold_ymm_hash(r, src, len, &done) :
				  fold_ymm_copy(r, dst, src, len, &done);
	off = done;
	if (len - off >= 48 + 64) {
		/* four accumulators over consecutive blocks, each folded 64 bytes at a time */
		__m128i k64 = k_vec(crc.k64);
		__m128i a0 = r, a1 = load_block(src, dst, off), a2 = load_block(src, dst, off + 16);
		__m128i a3 = load_block(src, dst, off + 32);

		for (off += 48; len - off >= 64; off += 64) {
			a0 = _mm_xor_si128(fold(a0, k64), load_block(src, dst, off));
			a1 = _mm_xor_si128(fold(a1, k64), load_block(src, dst, off + 16));
			a2 = _mm_xor_si128(fold(a2, k64), load_block(src, dst, off + 32));
			a3 = _mm_xor_si128(fold(a3, k64), load_block(src, dst, off + 48));
		}
		r = _mm_xor_si128(_mm_xor_si128(fold(a0, k_vec(crc.k48)), fold(a1, k_vec(crc.k32))),
				  _mm_xor_si128(fold(a2, k_vec(crc.k16)), a3));
	}
	for (; off < len; off += 16)
		r = _mm_xor_si128(fold(r, k_vec(crc.k16)), load_block(src, dst, off));
	return r;
}

/* The 16-byte remainder of the whole blocks of @p src from @p off (< len) to @p len. */
CRC_TARGET static inline __attribute__((always_inline)) __m128i
fold_blocks(uint8_t *dst, const uint8_t *src, uint32_t off, uint32_t len)
{
	return fold_more(load_block(src, dst, off), dst, src, off + 16, len);
}

/*
 * ~(V mod P) for V = R(x) x^32 + @p extra, R the 16-byte remainder A(x) x^64 + B(x) of a message
 * and @p extra a 64-bit reflected value (bit n: x^(63 - n)) in bits 32..95 of its register, all
 * in one register: A x^96 comes below x^96 by x^96 mod P, the top 32 bits of that below x^64 by
 * x^64 mod P, and Barrett's method takes the 64-bit rest to 32 bits. Both steps after the first
 * work 32 bits up their lanes, where a shift left clears what a mask would.
 */
CRC_TARGET static inline uint32_t crc_final_plus(__m128i r, __m128i extra)
{
	__m128i fin = k_vec(crc.fin), bar = k_vec(crc.bar);
	__m128i u, v, q;

	/* u, bit n for x^(95 - n): A (x^96 mod P) + B x^32, below x^96 */
	u = _mm_xor_si128(_mm_clmulepi64_si128(r, fin, 0x00), _mm_srli_si128(r, 8));
	/* v, bits 32..95 for x^63..x^0: u's top 32 bits times x^64 mod P, plus its other 64 */
	v = _mm_xor_si128(_mm_clmulepi64_si128(_mm_slli_epi64(u, 32), fin, 0x10), u);
	v = _mm_xor_si128(v, extra);
	/* Barrett: q = floor(v / P) from v's top 32 bits; v - q P leaves the CRC in bits 64..95 */
	q = _mm_slli_epi64(_mm_clmulepi64_si128(_mm_srli_epi64(v, 32), bar, 0x10), 32);
	v = _mm_xor_si128(v, _mm_clmulepi64_si128(q, bar, 0x00));
	return ~(uint32_t)_mm_extract_epi32(v, 2);
}

/* ~(R(x) x^32 mod P) for the 16-byte remainder R of a message whose initial value is in it. */
CRC_TARGET static inline uint32_t crc_final(__m128i r)
{
	return crc_final_plus(r, _mm_setzero_si128());
}

/*
 * CRC of @p pre (at most WIRE_CRC_PRE_MAX bytes) followed by @p len bytes at @p src, copied to
 * @p dst on the way unless dst is NULL. @p pre and the first len % 16 bytes of src make the
 * leading blocks, behind zeros, in a buffer on the stack; the rest of src is whole blocks, read
 * in place. The two parts are folded independently and merged at the end: reading back the
 * buffer just written waits for its stores, and the blocks of src need not wait with it.
 */
CRC_TARGET static inline __attribute__((always_inline)) uint32_t
crc_fold(uint32_t crc_in, const uint8_t *pre, uint32_t pre_len, uint8_t *dst, const uint8_t *src,
	 uint32_t len)
{
	alignas(16) uint8_t lead[WIRE_CRC_PRE_MAX + 32];
	uint32_t off = len & 15, lead_len = (pre_len + off + 15) & ~15u;
	uint32_t total = pre_len + len;
	__m128i r, r_lead = _mm_setzero_si128(), init;

	if (total == 0)
		return crc_in;
	if (lead_len != 0) {
		uint8_t *at = lead + lead_len - pre_len - off;

		memset(lead, 0, sizeof(lead) - WIRE_CRC_PRE_MAX);	/* covers the zeros */
		if (pre_len != 0)	/* pre may be NULL then */
			memcpy(at, pre, pre_len);
		memcpy(at + pre_len, src, off);
		if (dst != NULL)
			memcpy(dst, src, off);
		r_lead = _mm_load_si128((const __m128i *)lead);
		for (uint32_t i = 16; i < lead_len; i += 16)
			r_lead = _mm_xor_si128(fold(r_lead, k_vec(crc.k16)),
					       _mm_load_si128((const __m128i *)(lead + i)));
	}
	if (off == len) {
		r = r_lead;
	} else {
		/* the lead moves past the blocks: by len - off bytes */
		uint32_t d = len - off;
		struct fold_k k = { (uint64_t)wire_x8n_mod_p(d + 4) << 1,
				    (uint64_t)wire_x8n_mod_p(d - 4) << 1 };

		r = fold_blocks(dst, src, off, len);
		if (lead_len != 0)
			r = _mm_xor_si128(r, fold(r_lead, k_vec(k)));
	}

	/* R(x) x^32 plus I x^(8 len), I the initial value: bit n of the product for x^(63 - n) */
	init = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)~crc_in),
				    _mm_cvtsi64_si128((long long)wire_x8n_mod_p(total) << 1), 0x00);
	return crc_final_plus(r, _mm_slli_si128(init, 4));
}

/* crc_fold() made twice: without a copy (every load's store left out) and with one. */
CRC_TARGET static uint32_t crc_fold_hash(uint32_t crc_in, const uint8_t *pre, uint32_t pre_len,
					 const uint8_t *src, uint32_t len)
{
	return crc_fold(crc_in, pre, pre_len, NULL, src, len);
}

CRC_TARGET static uint32_t crc_fold_copy(uint32_t crc_in, const uint8_t *pre, uint32_t pre_len,
					 uint8_t *dst, const uint8_t *src, uint32_t len)
{
	return crc_fold(crc_in, pre, pre_len, dst, src, len);
}

/*
 * The last @p t (1..15) bytes, ending at @p end, appended to the remainder @p r: r's first t
 * bytes move out to a block of their own (behind zeros) that is folded over the other 16, r's
 * other 16 - t bytes followed by the t new ones. No byte before end - 16 is read beyond those
 * the caller has folded already.
 */
CRC_TARGET static inline __m128i fold_tail(__m128i r, const uint8_t *end, uint32_t t)
{
	/* shuffles: sh + t moves r's first t bytes to the end, sh + 16 + t its others to the front */
	static const uint8_t sh[48] = {
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	};
	/* keep + t selects the last t bytes of a block */
	static const uint8_t keep[32] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	__m128i out = _mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)(sh + t)));
	__m128i stay = _mm_shuffle_epi8(r, _mm_loadu_si128((const __m128i *)(sh + 16 + t)));
	__m128i last = _mm_loadu_si128((const __m128i *)(end - 16));

	stay = _mm_or_si128(stay, _mm_and_si128(last, _mm_loadu_si128((const __m128i *)(keep + t))));
	return _mm_xor_si128(fold(out, k_vec(crc.k16)), stay);
}

/* crc_fold_masked()'s first 64 bytes in one register, then the whole blocks up to @p whole. */
CRC_TARGET_ZMM static __m128i fold_masked_zmm(const uint8_t *p, const uint8_t *mask, uint32_t whole,
					      uint32_t *off)
{
	/* mask arrays are WIRE_ICRC_MASK_MAX long: the bytes past mask_len are zero */
	__m512i z = _mm512_or_si512(_mm512_loadu_si512(p), _mm512_loadu_si512(mask));

	z = _mm512_xor_si512(z, _mm512_zextsi128_si512(_mm_set_epi32(0, 0, 0, -1)));
	return fold_zmm_from(z, NULL, p, whole, off);
}

/*
 * CRC-32 of @p len bytes at @p p with the first @p mask_len (a multiple of 16, at most len)
 * ORed with @p mask, read in place from the front: the masked blocks are loaded and ORed in
 * registers, the initial value XORed into the first 4 bytes, the whole blocks folded as they
 * come and the last len % 16 bytes merged by fold_tail(). Nothing is copied, no x^8n is looked up.
 * The 64-byte VPCLMULQDQ path; the others are icrc_xmm() and icrc_ymm().
 */
CRC_TARGET static uint32_t crc_fold_masked(const uint8_t *p, uint32_t len, const uint8_t *mask,
					   uint32_t mask_len)
{
	const __m128i init = _mm_set_epi32(0, 0, 0, -1);
	uint32_t off, whole = len & ~15u;
	__m128i r;

	if (crc.zmm && mask_len <= 64 && whole >= 64) {
		off = 64;
		r = fold_masked_zmm(p, mask, whole, &off);
	} else {
		r = _mm_xor_si128(_mm_or_si128(_mm_loadu_si128((const __m128i *)p),
					       _mm_loadu_si128((const __m128i *)mask)), init);
		for (off = 16; off < mask_len; off += 16)
			r = _mm_xor_si128(fold(r, k_vec(crc.k16)),
					  _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + off)),
						       _mm_loadu_si128((const __m128i *)(mask + off))));
	}
	if (off < whole)
		r = fold_more(r, NULL, p, off, whole);
	if (len != whole)
		r = fold_tail(r, p + len, len - whole);
	return crc_final(r);
}

/* Past this many bytes of whole blocks after the masked ones, icrc_xmm() takes fold_more(). */
#define ICRC_SHORT_MAX 192
ROCE_STATIC_ASSERT(ICRC_SHORT_MAX <= 6 * 32);	/* icrc_xmm()'s unrolled pairs */

static inline __attribute__((always_inline)) __m128i ld16(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/*
 * The ICRC of a longer frame from the remainder @p r of its first @p off bytes (whole blocks):
 * fold_more()'s accumulators, then the tail. Apart, so that the short frames' function stays
 * a leaf that saves no registers.
 */
CRC_TARGET static __attribute__((noinline)) uint32_t icrc_rest(__m128i r, const uint8_t *p,
							      uint32_t off, uint32_t len)
{
	uint32_t whole = len & ~15u;

	r = fold_more(r, NULL, p, off, whole);
	if (len != whole)
		r = fold_tail(r, p + len, len - whole);
	return crc_final(r);
}

/*
 * crc_fold_masked() for a frame of ICRC_SHORT_MAX bytes or so, where what is done once per
 * frame weighs as much as the blocks: one 16-byte register, the masked blocks unrolled for the
 * constant @p mask_len, two blocks a round (the remainder moves 32 bytes, the first of the two
 * 16), no call. @p len >= mask_len.
 */
CRC_TARGET static inline __attribute__((always_inline)) uint32_t
icrc_xmm(const uint8_t *p, uint32_t len, const uint8_t *mask, uint32_t mask_len)
{
	const __m128i init = _mm_set_epi32(0, 0, 0, -1);
	__m128i k16 = k_vec(crc.k16), k32 = k_vec(crc.k32);
	const uint8_t *q = p + mask_len, *end = p + (len & ~15u);
	__m128i r = _mm_xor_si128(_mm_or_si128(ld16(p), ld16(mask)), init);

	for (uint32_t off = 16; off < mask_len; off += 16)
		r = _mm_xor_si128(fold(r, k16), _mm_or_si128(ld16(p + off), ld16(mask + off)));
	if (roce_unlikely(end - q > ICRC_SHORT_MAX))
		return icrc_rest(r, p, mask_len, len);
	if ((uint32_t)(end - q) & 16) {
		r = _mm_xor_si128(fold(r, k16), ld16(q));
		q += 16;
	}
	/* the pairs of blocks left, unrolled: each case folds the pair at its distance from the end */
	switch ((uint32_t)(end - q) / 32) {
#define ICRC_PAIR(n) \
	case n: \
		r = _mm_xor_si128(_mm_xor_si128(fold(r, k32), fold(ld16(end - 32 * (n)), k16)), \
				  ld16(end - 32 * (n) + 16)); \
		__attribute__((fallthrough))
	ICRC_PAIR(6);
	ICRC_PAIR(5);
	ICRC_PAIR(4);
	ICRC_PAIR(3);
	ICRC_PAIR(2);
	ICRC_PAIR(1);
#undef ICRC_PAIR
	case 0:
		break;
	default:
		__builtin_unreachable();	/* at most ICRC_SHORT_MAX bytes left */
	}
	if (len & 15)
		r = fold_tail(r, p + len, len & 15);
	return crc_final(r);
}

/*
 * icrc_xmm() with 32-byte registers (VPCLMULQDQ on AVX2), for frames of any length: the first
 * 64 bytes, masked, in two accumulators, and when 64 more follow, those in two more; the four
 * then take 128 bytes a round (four folds in flight), are merged in one step, each moved by its
 * own distance, and the last 32 and 16 bytes follow one by one. Frames under 64 bytes of whole
 * blocks take icrc_xmm().
 */
CRC_TARGET_YMM static inline __attribute__((always_inline)) uint32_t
icrc_ymm(const uint8_t *p, uint32_t len, const uint8_t *mask, uint32_t mask_len)
{
	const __m256i init = _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, -1);
	const uint8_t *q = p + 64, *end = p + (len & ~15u);
	__m256i y0, y1, y2, y3;
	__m128i r;

	if (len < 64)
		return icrc_xmm(p, len, mask, mask_len);
	/* mask arrays are WIRE_ICRC_MASK_MAX long: the bytes past mask_len are zero */
	y0 = _mm256_xor_si256(_mm256_or_si256(_mm256_loadu_si256((const __m256i *)p),
					      _mm256_loadu_si256((const __m256i *)mask)), init);
	y1 = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + 32)),
			     _mm256_loadu_si256((const __m256i *)(mask + 32)));
	if (q + 64 <= end) {
		y2 = _mm256_loadu_si256((const __m256i *)q);
		y3 = _mm256_loadu_si256((const __m256i *)(q + 32));
		for (q += 64; q + 128 <= end; q += 128) {
			y0 = _mm256_xor_si256(fold2(y0, crc.k128),
					      _mm256_loadu_si256((const __m256i *)q));
			y1 = _mm256_xor_si256(fold2(y1, crc.k128),
					      _mm256_loadu_si256((const __m256i *)(q + 32)));
			y2 = _mm256_xor_si256(fold2(y2, crc.k128),
					      _mm256_loadu_si256((const __m256i *)(q + 64)));
			y3 = _mm256_xor_si256(fold2(y3, crc.k128),
					      _mm256_loadu_si256((const __m256i *)(q + 96)));
		}
		y0 = _mm256_xor_si256(_mm256_xor_si256(fold2(y0, crc.k96), fold2(y1, crc.k64)),
				      _mm256_xor_si256(fold2(y2, crc.k32), y3));
	} else {
		y0 = _mm256_xor_si256(fold2(y0, crc.k32), y1);
	}
	for (; q + 32 <= end; q += 32)
		y0 = _mm256_xor_si256(fold2(y0, crc.k32), _mm256_loadu_si256((const __m256i *)q));
	r = _mm_xor_si128(fold(_mm256_castsi256_si128(y0), k_vec(crc.k16)),
			  _mm256_extracti128_si256(y0, 1));
	if (q != end)
		r = _mm_xor_si128(fold(r, k_vec(crc.k16)), ld16(q));
	if (len & 15)
		r = fold_tail(r, p + len, len & 15);
	return crc_final(r);
}

/* The two shapes of a RoCEv2 frame the transport sends, on each path. */
CRC_TARGET static uint32_t icrc_v4_xmm(const uint8_t *p, uint32_t len)
{
	return icrc_xmm(p, len, wire_icrc_mask_v4, 48);
}

CRC_TARGET static uint32_t icrc_v6_xmm(const uint8_t *p, uint32_t len)
{
	return icrc_xmm(p, len, wire_icrc_mask_v6, 64);
}

CRC_TARGET_YMM static uint32_t icrc_v4_ymm(const uint8_t *p, uint32_t len)
{
	return icrc_ymm(p, len, wire_icrc_mask_v4, 48);
}

CRC_TARGET_YMM static uint32_t icrc_v6_ymm(const uint8_t *p, uint32_t len)
{
	return icrc_ymm(p, len, wire_icrc_mask_v6, 64);
}
#endif /* __x86_64__ */

/* ... on the 64-byte path and without PCLMULQDQ */
static uint32_t icrc_v4_any(const uint8_t *p, uint32_t len)
{
	return wire_crc32_masked(p, len, wire_icrc_mask_v4, 48);
}

static uint32_t icrc_v6_any(const uint8_t *p, uint32_t len)
{
	return wire_crc32_masked(p, len, wire_icrc_mask_v6, 64);
}

wire_icrc_fn wire_icrc_v4 = icrc_v4_any;
wire_icrc_fn wire_icrc_v6 = icrc_v6_any;

void wire_crc_fold_select(bool simd128, bool simd256, bool simd512)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	crc.usable = simd128 && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx");
	crc.zmm = crc.usable && simd512 && __builtin_cpu_supports("avx512f") &&
		  __builtin_cpu_supports("vpclmulqdq");
	crc.ymm = crc.usable && !crc.zmm && simd256 && __builtin_cpu_supports("avx2") &&
		  __builtin_cpu_supports("vpclmulqdq");
	/* the 64-byte path keeps crc_fold_masked(), whose first register holds the masked 64 */
	wire_icrc_v4 = crc.ymm ? icrc_v4_ymm : crc.usable && !crc.zmm ? icrc_v4_xmm : icrc_v4_any;
	wire_icrc_v6 = crc.ymm ? icrc_v6_ymm : crc.usable && !crc.zmm ? icrc_v6_xmm : icrc_v6_any;
#else
	(void)simd128;
	(void)simd256;
	(void)simd512;
#endif
}

bool wire_crc_fold_usable(void)
{
	return crc.usable;
}

uint32_t wire_crc32(uint32_t crc_in, const uint8_t *data, uint32_t len)
{
#if defined(__x86_64__)
	if (roce_likely(crc.usable))
		return crc_fold_hash(crc_in, NULL, 0, data, len);
#endif
	return roce_crc32_combine(crc_in, rte_net_crc_calc(data, len, RTE_NET_CRC32_ETH), len);
}

uint32_t wire_crc32_masked(const uint8_t *p, uint32_t len, const uint8_t *mask, uint32_t mask_len)
{
	uint8_t head[WIRE_ICRC_MASK_MAX];

#if defined(__x86_64__)
	if (roce_likely(crc.usable))
		return crc_fold_masked(p, len, mask, mask_len);
#endif
	for (uint32_t i = 0; i < mask_len; i++)
		head[i] = p[i] | mask[i];
	return wire_crc32(wire_crc32(0, head, mask_len), p + mask_len, len - mask_len);
}

uint32_t wire_crc32_copy(uint32_t crc_in, const uint8_t *pre, uint32_t pre_len, uint8_t *dst,
			 const uint8_t *src, uint32_t len)
{
#if defined(__x86_64__)
	if (roce_likely(crc.usable))
		return dst == NULL ? crc_fold_hash(crc_in, pre, pre_len, src, len) :
				     crc_fold_copy(crc_in, pre, pre_len, dst, src, len);
#endif
	if (dst != NULL)
		memcpy(dst, src, len);
	return wire_crc32(wire_crc32(crc_in, pre, pre_len), src, len);
}
