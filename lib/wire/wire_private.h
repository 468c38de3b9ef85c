/* lib/wire internals shared between its files; not part of the API. */
#ifndef WIRE_PRIVATE_H
#define WIRE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "roce_wire.h"

#define ETHER_HDR_LEN 14
#define VLAN_TAG_LEN 4
#define IPV4_HDR_LEN 20
#define IPV6_HDR_LEN 40
#define UDP_HDR_LEN 8
#define ETHER_MIN_FRAME 60	/* without FCS */
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

static inline uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wr24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

static inline void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)(v >> 32));
	wr32(p + 4, (uint32_t)v);
}

static inline void wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * RFC 1071 one's-complement sum of an IPv4 header of @p ihl bytes, folded to 16 bits; with
 * @p skip_csum the checksum field counts as zero. A good header sums to 0xffff with its checksum;
 * the checksum to store is the complement of the sum without it.
 */
static inline uint16_t wire_ipv4_sum(const uint8_t *ip, uint32_t ihl, bool skip_csum)
{
	uint64_t sum = 0;	/* of native 32-bit words: RFC 1071 sums in either byte order */
	uint32_t w;
	uint16_t c;

	for (uint32_t i = 0; i + 4 <= ihl; i += 4) {
		memcpy(&w, ip + i, 4);
		sum += w;
	}
	if (skip_csum) {
		memcpy(&c, ip + 10, 2);
		sum -= (uint64_t)c << (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 16 : 0);
	}
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	c = (uint16_t)sum;
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap16(c) : c;
}

/*
 * ICRC over a frame whose L3 header starts at @p l3_off and BTH at @p bth_off, up to @p end
 * (the ICRC's offset). @p ipv4: the L3 header is IPv4 (else IPv6 or GRH); @p udp: RoCEv2.
 */
uint32_t wire_icrc(const uint8_t *buf, uint32_t l3_off, uint32_t bth_off, uint32_t end,
		   bool ipv4, bool udp);

/*
 * The ICRC's view of a frame's headers, written to @p out: 8 bytes of ones for the LRH, the IP
 * (or GRH), UDP and BTH headers with their variant fields set to ones, then the bytes from the
 * BTH's end to @p upto (extended headers) as they are. Returns its length, at most
 * WIRE_CRC_PRE_MAX.
 */
uint32_t wire_icrc_headers(const uint8_t *buf, uint32_t l3_off, uint32_t bth_off, uint32_t upto,
			   bool ipv4, bool udp, uint8_t *out);

/* x^(8n) mod P (CRC-32), reflected: what appending n zero bytes multiplies a CRC by. */
uint32_t wire_x8n_mod_p(uint32_t n);

/*
 * Tables generated at build time (gen_crc_tables.py), bit-reflected: wire_xpow8[n] is
 * x^(8n) mod P for every frame up to 16 KiB, wire_reduce_x32[k][v] is (v << 8k) x^32 mod P.
 */
#define WIRE_XPOW8_LEN 16384
extern const uint32_t wire_xpow8[WIRE_XPOW8_LEN];
extern const uint32_t wire_reduce_x32[4][256];

/*
 * CRC-32 continued over @p len more bytes, zlib's convention: wire_crc32(0, A) is the CRC-32 of
 * A, and wire_crc32(wire_crc32(0, A), B) that of A || B. Carry-less multiplication where the
 * CPU has it (wire_crc.c), else rte_net_crc and a combine.
 */
uint32_t wire_crc32(uint32_t crc, const uint8_t *data, uint32_t len);

#define WIRE_CRC_PRE_MAX 128	/* longest @p pre of wire_crc32_copy() */

/*
 * The same over @p pre (up to WIRE_CRC_PRE_MAX bytes) then @p src, copying src to @p dst (no
 * overlap; NULL: no copy) on the way: one pass over the bytes, one reduction for both parts.
 */
uint32_t wire_crc32_copy(uint32_t crc, const uint8_t *pre, uint32_t pre_len, uint8_t *dst,
			 const uint8_t *src, uint32_t len);

#define WIRE_ICRC_MASK_MAX 128	/* length of a mask of wire_crc32_masked() */

/*
 * CRC-32 (initial value and result complemented, as wire_crc32(0, ...)) of @p len bytes at
 * @p p whose first @p mask_len bytes are ORed with @p mask: the ICRC of a frame read in place.
 * @p mask is WIRE_ICRC_MASK_MAX bytes, zero past @p mask_len; mask_len is a multiple of 16 and
 * at most @p len. Reads no byte outside p[0, len).
 */
uint32_t wire_crc32_masked(const uint8_t *p, uint32_t len, const uint8_t *mask, uint32_t mask_len);

/* The ICRC's masks for IPv4/UDP, IPv6/UDP and the GRH, from 8 bytes before the L3 header. */
extern const uint8_t wire_icrc_mask_v4[WIRE_ICRC_MASK_MAX];
extern const uint8_t wire_icrc_mask_v6[WIRE_ICRC_MASK_MAX];
extern const uint8_t wire_icrc_mask_v1[WIRE_ICRC_MASK_MAX];

typedef uint32_t (*wire_icrc_fn)(const uint8_t *p, uint32_t len);

/*
 * wire_crc32_masked() with the mask of a RoCEv2 frame over IPv4 without options (_v4,
 * @p len >= 48) or over IPv6 (_v6, @p len >= 64): the ICRC of the @p len bytes from @p p, 8
 * bytes before the IP header, to the ICRC field. Set by wire_crc_fold_select() to the path it
 * chose, specialised for the shape: no per-frame choice of mask, path or loop shape.
 */
extern wire_icrc_fn wire_icrc_v4;
extern wire_icrc_fn wire_icrc_v6;

/* wire_crc32() runs on PCLMULQDQ (not on the rte_net_crc fallback). */
bool wire_crc_fold_usable(void);

/* Let wire_crc32() use 128-, 256- and 512-bit SIMD where the CPU has it, as the EAL allows. */
void wire_crc_fold_select(bool simd128, bool simd256, bool simd512);

/* wire_crc32() folds 32 or 64 bytes per instruction (VPCLMULQDQ). */
bool wire_crc_fold_wide(void);

/* MAC control (PAUSE, PFC) body at @p off; wire_pfc.c. */
int wire_parse_mac_ctrl(const uint8_t *buf, uint32_t len, uint32_t off, struct roce_pkt *pkt);
int wire_build_mac_ctrl(const struct roce_pkt *pkt, uint8_t *buf, uint32_t off, uint32_t size);

#endif /* WIRE_PRIVATE_H */
