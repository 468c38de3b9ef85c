/* Build RoCEv2/RoCEv1/PFC/PAUSE frames from a struct roce_pkt, with checksums and ICRC. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "roce_wire.h"
#include "wire_private.h"

/*
 * Payloads up to this long are copied, then the ICRC read in place (wire_icrc()); longer ones
 * are hashed while they are copied (wire_crc32_copy()), which saves a pass over them but pays
 * for a masked copy of the headers and a merge.
 */
#define BUILD_COPY_THEN_ICRC_MAX 256


static const uint8_t pfc_dmac[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 }; /* 802.1Qbb */

void roce_pkt_init(struct roce_pkt *pkt, enum roce_kind kind, uint8_t opcode)
{
	static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };

	memset(pkt, 0, sizeof(*pkt));
	pkt->kind = kind;
	memcpy(pkt->smac, src_mac, 6);
	memcpy(pkt->dmac, kind == ROCE_KIND_PFC || kind == ROCE_KIND_PAUSE ? pfc_dmac : dst_mac, 6);
	pkt->ip_ver = kind == ROCE_KIND_ROCEV1 ? 6 : 4;
	pkt->ttl = 64;
	pkt->ip_df = true;
	pkt->src.b[0] = 10, pkt->src.b[3] = 1;
	pkt->dst.b[0] = 10, pkt->dst.b[3] = 2;
	if (kind == ROCE_KIND_ROCEV1) {
		/* IPv4-mapped GIDs, as RoCE stacks derive them from IPv4 addresses */
		memset(pkt->src.b, 0, 16);
		memset(pkt->dst.b, 0, 16);
		pkt->src.b[10] = pkt->src.b[11] = pkt->dst.b[10] = pkt->dst.b[11] = 0xff;
		pkt->src.b[12] = pkt->dst.b[12] = 10;
		pkt->src.b[15] = 1;
		pkt->dst.b[15] = 2;
	}
	pkt->sport = 49152;
	pkt->dport = ROCE_UDP_PORT;
	pkt->opcode = opcode;
	pkt->pkey = 0xffff;
	if (opcode == ROCE_OP_CNP)
		pkt->becn = true;
	if (roce_opcode[opcode].mask & ROCE_F_UD)
		pkt->deth.srcqp = 1;
	if (roce_opcode[opcode].mask & ROCE_F_AETH)
		pkt->aeth.syndrome = 0x1f;	/* ACK, no end-to-end credits */
}

/* Bytes between the BTH and the payload, and whether a payload and pad go after them. */
static uint32_t ext_len(uint8_t opcode)
{
	const struct roce_opcode_info *info = &roce_opcode[opcode];

	return info->name != NULL ? info->hdr_len : ROCE_BTH_LEN;
}

static uint32_t pad_of(const struct roce_pkt *pkt, unsigned int flags)
{
	if (flags & ROCE_BUILD_KEEP_PAD)
		return pkt->pad & 3;
	return (4 - (pkt->payload_len & 3)) & 3;
}

static uint32_t l2_len(const struct roce_pkt *pkt)
{
	return ETHER_HDR_LEN + VLAN_TAG_LEN * pkt->nvlan;
}

static uint32_t l3_len(const struct roce_pkt *pkt)
{
	switch (pkt->kind) {
	case ROCE_KIND_ROCEV2:
		return (pkt->ip_ver == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN) + UDP_HDR_LEN;
	case ROCE_KIND_ROCEV1:
		return ROCE_GRH_LEN;
	default:
		return 0;
	}
}

int roce_wire_frame_len(const struct roce_pkt *pkt, unsigned int flags)
{
	uint32_t len;

	if (pkt->nvlan > ROCE_MAX_VLANS)
		return -EINVAL;
	if (pkt->kind == ROCE_KIND_PFC || pkt->kind == ROCE_KIND_PAUSE)
		return ETHER_MIN_FRAME;	/* both bodies fit in the minimum frame */
	if (pkt->kind != ROCE_KIND_ROCEV2 && pkt->kind != ROCE_KIND_ROCEV1)
		return -EINVAL;
	if (pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver != 4 && pkt->ip_ver != 6)
		return -EINVAL;
	if (pkt->payload_len > UINT16_MAX)
		return -EINVAL;	/* and the 32-bit sum below cannot wrap to a small length */
	len = l2_len(pkt) + l3_len(pkt) + ext_len(pkt->opcode) + pkt->payload_len +
	      pad_of(pkt, flags) + ROCE_ICRC_LEN;
	if (len > UINT16_MAX)
		return -EINVAL;
	return (int)len;
}

/* What build_ext() writes besides the RETH: the other extended headers, a CNP's pad. */
#define BUILD_EXT_NOT_RETH (ROCE_F_RDETH | ROCE_F_DETH | ROCE_F_XRCETH | ROCE_F_FETH | \
			    ROCE_F_ATMETH | ROCE_F_AETH | ROCE_F_ATMACK | ROCE_F_IMMDT | \
			    ROCE_F_IETH | ROCE_F_CNP)

/* Inlined: the template path (roce_wire_tmpl_build) runs it for every frame a QP sends. */
static inline __attribute__((always_inline)) void build_ext(const struct roce_pkt *pkt, uint8_t *h)
{
	const struct roce_opcode_info *info = &roce_opcode[pkt->opcode];
	uint8_t *p;

	if (info->name == NULL)
		return;
	if (info->mask & ROCE_F_RETH) {
		p = h + info->ext_off[ROCE_EXT_RETH];
		wr64(p, pkt->reth.va);
		wr32(p + 8, pkt->reth.rkey);
		wr32(p + 12, pkt->reth.dmalen);
	}
	/* the RETH (RDMA WRITE, READ request) alone, or none: one test for the others */
	if (!(info->mask & BUILD_EXT_NOT_RETH))
		return;
	if (info->mask & ROCE_F_RDETH) {
		p = h + info->ext_off[ROCE_EXT_RDETH];
		p[0] = 0;
		wr24(p + 1, pkt->rdeth_eecnxt);
	}
	if (info->mask & ROCE_F_DETH) {
		p = h + info->ext_off[ROCE_EXT_DETH];
		wr32(p, pkt->deth.qkey);
		p[4] = 0;
		wr24(p + 5, pkt->deth.srcqp);
	}
	if (info->mask & ROCE_F_XRCETH) {
		p = h + info->ext_off[ROCE_EXT_XRCETH];
		p[0] = 0;
		wr24(p + 1, pkt->xrc_srqn);
	}
	if (info->mask & ROCE_F_FETH)
		wr32(h + info->ext_off[ROCE_EXT_FETH], pkt->feth);
	if (info->mask & ROCE_F_ATMETH) {
		p = h + info->ext_off[ROCE_EXT_ATMETH];
		wr64(p, pkt->atmeth.va);
		wr32(p + 8, pkt->atmeth.rkey);
		wr64(p + 12, pkt->atmeth.swap);
		wr64(p + 20, pkt->atmeth.cmp);
	}
	if (info->mask & ROCE_F_AETH) {
		p = h + info->ext_off[ROCE_EXT_AETH];
		p[0] = pkt->aeth.syndrome;
		wr24(p + 1, pkt->aeth.msn);
	}
	if (info->mask & ROCE_F_ATMACK)
		wr64(h + info->ext_off[ROCE_EXT_ATMACK], pkt->atmack_orig);
	if (info->mask & ROCE_F_IMMDT)
		wr32(h + info->ext_off[ROCE_EXT_IMMDT], pkt->immdt);
	if (info->mask & ROCE_F_IETH)
		wr32(h + info->ext_off[ROCE_EXT_IETH], pkt->ieth_rkey);
	if (info->mask & ROCE_F_CNP)
		memset(h, 0, ROCE_CNP_PAD_LEN);
}

static inline __attribute__((always_inline)) void build_bth(const struct roce_pkt *pkt, uint8_t pad,
								 uint8_t *bth)
{
	bth[0] = pkt->opcode;
	bth[1] = (uint8_t)(pkt->se << 7 | pkt->mig << 6 | pad << 4 | (pkt->tver & 0xf));
	wr16(bth + 2, pkt->pkey);
	bth[4] = (uint8_t)(pkt->fecn << 7 | pkt->becn << 6 | (pkt->resv6 & 0x3f));
	wr24(bth + 5, pkt->dqpn);
	bth[8] = (uint8_t)(pkt->ackreq << 7 | (pkt->resv7 & 0x7f));
	wr24(bth + 9, pkt->psn);
}

/*
 * The header checksum of a 20-byte IPv4 header just written at @p ip, its checksum field left
 * out. The bytes are read back one by one: the CPU forwards them from the byte stores that
 * wrote them, where a wider load straight after narrow stores stalls until they retire.
 */
static uint16_t ipv4_csum(const uint8_t *ip)
{
	uint32_t sum = 0;

	for (int i = 0; i < IPV4_HDR_LEN; i += 2)
		if (i != 10)
			sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* IPv4/IPv6 + UDP, or the GRH; @p l4_len counts from the UDP header (or BTH) to the end. */
static void build_l3(const struct roce_pkt *pkt, unsigned int flags, uint32_t l4_len, uint8_t *p)
{
	uint32_t tc = (uint32_t)(pkt->dscp << 2 | (pkt->ecn & 3));

	if (pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver == 4) {
		p[0] = 0x45;
		p[1] = (uint8_t)tc;
		wr16(p + 2, (uint16_t)(IPV4_HDR_LEN + l4_len));
		wr16(p + 4, pkt->ip_id);
		wr16(p + 6, pkt->ip_df ? 0x4000 : 0);
		p[8] = pkt->ttl;
		p[9] = 17;
		memcpy(p + 12, pkt->src.b, 4);
		memcpy(p + 16, pkt->dst.b, 4);
		wr16(p + 10, (flags & ROCE_BUILD_KEEP_IP_CSUM) ? pkt->ip_csum : ipv4_csum(p));
		p += IPV4_HDR_LEN;
	} else {
		wr32(p, 6u << 28 | (tc & 0xff) << 20 | (pkt->flow_label & 0xfffff));
		wr16(p + 4, (uint16_t)l4_len);
		p[6] = pkt->kind == ROCE_KIND_ROCEV2 ? 17 : 0x1b;
		p[7] = pkt->ttl;
		memcpy(p + 8, pkt->src.b, 16);
		memcpy(p + 24, pkt->dst.b, 16);
		p += IPV6_HDR_LEN;
	}
	if (pkt->kind == ROCE_KIND_ROCEV2) {
		wr16(p, pkt->sport);
		wr16(p + 2, pkt->dport);
		wr16(p + 4, (uint16_t)l4_len);
		wr16(p + 6, pkt->udp_csum);
	}
}

/*
 * memcpy() of a small payload without the call: up to 64 bytes as four 16-byte moves (or two
 * 8-byte, two 4-byte ones) that overlap where @p n is not their sum, longer ones by memcpy().
 */
static inline __attribute__((always_inline)) void copy_payload(uint8_t *d, const uint8_t *s,
								uint32_t n)
{
	if (n > 64) {
		memcpy(d, s, n);
	} else if (n >= 32) {
		memcpy(d, s, 16);
		memcpy(d + 16, s + 16, 16);
		memcpy(d + n - 32, s + n - 32, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		for (uint32_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/* The default payload: byte i is i mod 256, copied from one ramp rather than stored byte by byte. */
static void fill_ramp(uint8_t *p, uint32_t len)
{
	static const uint8_t ramp[256] = {
#define R4(n) (n), (n) + 1, (n) + 2, (n) + 3
#define R16(n) R4(n), R4((n) + 4), R4((n) + 8), R4((n) + 12)
#define R64(n) R16(n), R16((n) + 16), R16((n) + 32), R16((n) + 48)
		R64(0), R64(64), R64(128), R64(192),
#undef R64
#undef R16
#undef R4
	};
	uint32_t off = 0;

	for (; off + sizeof(ramp) <= len; off += sizeof(ramp))
		memcpy(p + off, ramp, sizeof(ramp));
	memcpy(p + off, ramp, len - off);
}

int roce_wire_build(const struct roce_pkt *pkt, unsigned int flags, uint8_t *buf, uint32_t size)
{
	int len = roce_wire_frame_len(pkt, flags);
	bool ipv4 = pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver == 4;
	bool udp = pkt->kind == ROCE_KIND_ROCEV2;
	uint32_t off, l3_off, bth_off, icrc_off, pad;
	uint8_t *p;
	uint32_t icrc;

	if (len < 0)
		return len;
	if ((uint32_t)len > size)
		return -ENOSPC;

	memcpy(buf, pkt->dmac, 6);
	memcpy(buf + 6, pkt->smac, 6);
	off = 12;
	for (int i = 0; i < pkt->nvlan; i++) {
		wr16(buf + off, pkt->vlan[i].tpid ? pkt->vlan[i].tpid : ETHERTYPE_VLAN);
		wr16(buf + off + 2, (uint16_t)((pkt->vlan[i].pcp & 7) << 13 |
					       (pkt->vlan[i].dei & 1) << 12 | (pkt->vlan[i].vid & 0xfff)));
		off += VLAN_TAG_LEN;
	}
	if (pkt->kind == ROCE_KIND_PFC || pkt->kind == ROCE_KIND_PAUSE) {
		wr16(buf + off, ROCE_ETHERTYPE_MAC_CTRL);
		return wire_build_mac_ctrl(pkt, buf, off + 2, size);
	}
	wr16(buf + off, pkt->kind == ROCE_KIND_ROCEV1 ? ROCE_ETHERTYPE_V1 :
			pkt->ip_ver == 4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6);
	l3_off = off + 2;
	bth_off = l3_off + l3_len(pkt);
	icrc_off = (uint32_t)len - ROCE_ICRC_LEN;
	pad = pad_of(pkt, flags);

	build_l3(pkt, flags, (uint32_t)len - (pkt->kind == ROCE_KIND_ROCEV2 ? bth_off - UDP_HDR_LEN :
							   bth_off), buf + l3_off);
	build_bth(pkt, (uint8_t)pad, buf + bth_off);
	build_ext(pkt, buf + bth_off + ROCE_BTH_LEN);

	p = buf + bth_off + ext_len(pkt->opcode);
	if (pkt->payload != NULL && !(flags & ROCE_BUILD_KEEP_ICRC) &&
	    pkt->payload_len > BUILD_COPY_THEN_ICRC_MAX) {
		/* hash the payload while copying it in: one pass over it, not two */
		uint8_t hdr[WIRE_CRC_PRE_MAX];
		uint32_t hlen = wire_icrc_headers(buf, l3_off, bth_off, (uint32_t)(p - buf), ipv4,
						  udp, hdr);

		icrc = wire_crc32_copy(0, hdr, hlen, p, pkt->payload, pkt->payload_len);
		memset(p + pkt->payload_len, 0, pad);
		if (pad != 0)
			icrc = wire_crc32(icrc, p + pkt->payload_len, pad);
	} else {
		if (pkt->payload != NULL)
			memcpy(p, pkt->payload, pkt->payload_len);
		else
			fill_ramp(p, pkt->payload_len);
		memset(p + pkt->payload_len, 0, pad);
		icrc = (flags & ROCE_BUILD_KEEP_ICRC) ? pkt->icrc :
		       wire_icrc(buf, l3_off, bth_off, icrc_off, ipv4, udp);
	}
	if (flags & ROCE_BUILD_BAD_ICRC && !(flags & ROCE_BUILD_KEEP_ICRC))
		icrc = ~icrc;
	wr32le(buf + icrc_off, icrc);
	return len;
}

uint64_t roce_wire_icrc_good;
uint64_t roce_wire_icrc_partial;

static int dynflag(const char *name, uint64_t *flag)
{
	struct rte_mbuf_dynflag desc = { .flags = 0 };
	int bit;

	if (*flag != 0)
		return 0;
	snprintf(desc.name, sizeof(desc.name), "%s", name);
	bit = rte_mbuf_dynflag_register(&desc);
	if (bit < 0)
		return -rte_errno;
	*flag = 1ull << bit;
	return 0;
}

int roce_wire_icrc_flags_register(void)
{
	int rc = dynflag("rocelab_dynflag_icrc_good", &roce_wire_icrc_good);

	return rc != 0 ? rc : dynflag("rocelab_dynflag_icrc_partial", &roce_wire_icrc_partial);
}

/* Write @p n bytes at byte @p off of the frame @p m, across its segments but into none external. */
static void chain_write(struct rte_mbuf *m, uint32_t off, const uint8_t *src, uint32_t n)
{
	for (struct rte_mbuf *s = m; s != NULL && n != 0; s = s->next) {
		uint32_t k;

		if (off >= s->data_len) {
			off -= s->data_len;
			continue;
		}
		k = ROCE_MIN(n, s->data_len - off);
		if (!RTE_MBUF_HAS_EXTBUF(s))
			memcpy(rte_pktmbuf_mtod_offset(s, uint8_t *, off), src, k);
		src += k;
		n -= k;
		off = 0;
	}
}

const uint8_t *roce_wire_mbuf_bytes(const struct rte_mbuf *m)
{
	static __thread uint8_t flat[UINT16_MAX + 1];

	if (m->nb_segs == 1)
		return rte_pktmbuf_mtod(m, const uint8_t *);
	if (rte_pktmbuf_pkt_len(m) > sizeof(flat))
		return NULL;
	return rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), flat);
}

/*
 * The last segment of the chain @p m, made the frame's own if other frames share it (a
 * trailer of roce_wire_tmpl_build_mbuf_zc(), or a segment with clones): a copy from its pool
 * takes its place. @return 0, or -ENOBUFS if the pool is empty (nothing changed)
 */
static int chain_own_tail(struct rte_mbuf *m)
{
	struct rte_mbuf *prev = m, *tail = m->next, *own;

	while (tail->next != NULL) {
		prev = tail;
		tail = tail->next;
	}
	if (rte_mbuf_refcnt_read(tail) == 1 && RTE_MBUF_DIRECT(tail))
		return 0;
	own = rte_pktmbuf_alloc(tail->pool);
	if (own == NULL)
		return -ENOBUFS;
	own->data_off = 0;
	if (rte_pktmbuf_tailroom(own) < tail->data_len) {
		rte_pktmbuf_free(own);
		return -ENOBUFS;
	}
	memcpy(rte_pktmbuf_append(own, tail->data_len), rte_pktmbuf_mtod(tail, void *),
		   tail->data_len);
	prev->next = own;
	rte_pktmbuf_free_seg(tail);	/* a reference fewer: the others keep it */
	return 0;
}

/*
 * The ICRC of the frame @p buf of @p len bytes (roce_wire_icrc_fill()'s frames) in @p icrc.
 * @return the offset of its place in the frame, or -1 if the frame is not RoCEv2
 */
static int frame_icrc(const uint8_t *buf, uint32_t len, uint8_t icrc[4])
{
	struct roce_pkt pkt;
	uint32_t end;

	/* a template frame, RoCEv2, its payload perhaps by reference; a switch may have tagged it */
	if (buf == NULL || roce_wire_parse(buf, len, ROCE_PARSE_NO_ICRC, &pkt) != 0 ||
	    pkt.kind != ROCE_KIND_ROCEV2)
		return -1;
	end = pkt.payload_off + pkt.payload_len + pkt.pad;
	wr32le(icrc, roce_icrc_calc(buf, &pkt, end));
	return (int)end;
}

void roce_wire_icrc_put(uint8_t *frame, uint32_t len)
{
	uint8_t icrc[4];
	int end = frame_icrc(frame, len, icrc);

	if (end >= 0)
		memcpy(frame + end, icrc, 4);
}

int roce_wire_icrc_fill(struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint8_t icrc[4];
	int end;

	if (m->nb_segs != 1 && chain_own_tail(m) != 0)
		return -ENOBUFS;
	m->ol_flags &= ~roce_wire_icrc_partial;
	if (m->nb_segs == 1) {
		roce_wire_icrc_put(rte_pktmbuf_mtod(m, uint8_t *), len);
		return 0;
	}
	end = frame_icrc(roce_wire_mbuf_bytes(m), len, icrc);
	if (end >= 0)
		chain_write(m, (uint32_t)end, icrc, 4);
	return 0;
}

int roce_wire_build_mbuf(const struct roce_pkt *pkt, unsigned int flags, struct rte_mbuf *m)
{
	int len = roce_wire_frame_len(pkt, flags);
	uint8_t *dst;

	if (len < 0)
		return len;
	dst = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (dst == NULL)
		return -ENOSPC;
	return roce_wire_build(pkt, flags, dst, (uint32_t)len);
}

/* ---- header templates ---- */

/* a[0..n) == b[0..n) for the small fixed sizes of addresses, without a call to memcmp */
static inline bool eq_mac(const uint8_t *a, const uint8_t *b)
{
	uint32_t a4, b4;
	uint16_t a2, b2;

	memcpy(&a4, a, 4);
	memcpy(&b4, b, 4);
	memcpy(&a2, a + 4, 2);
	memcpy(&b2, b + 4, 2);
	return ((a4 ^ b4) | (uint32_t)(a2 ^ b2)) == 0;
}

static inline bool eq_ip(const struct roce_ip_addr *a, const struct roce_ip_addr *b)
{
	uint64_t a0, a1, b0, b1;

	memcpy(&a0, a->b, 8);
	memcpy(&a1, a->b + 8, 8);
	memcpy(&b0, b->b, 8);
	memcpy(&b1, b->b + 8, 8);
	return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

bool roce_wire_tmpl_match(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt)
{
	const struct roce_pkt *k = &t->key;

	return t->valid && pkt->kind == ROCE_KIND_ROCEV2 && pkt->nvlan == 0 &&
	       pkt->ip_ver == k->ip_ver && pkt->dscp == k->dscp && pkt->ecn == k->ecn &&
	       pkt->ttl == k->ttl && pkt->ip_id == k->ip_id && pkt->ip_df == k->ip_df &&
	       pkt->flow_label == k->flow_label && pkt->sport == k->sport &&
	       pkt->dport == k->dport && pkt->udp_csum == k->udp_csum &&
	       eq_mac(pkt->dmac, k->dmac) && eq_mac(pkt->smac, k->smac) &&
	       eq_ip(&pkt->src, &k->src) && eq_ip(&pkt->dst, &k->dst);
}

int roce_wire_tmpl_init(struct roce_wire_tmpl *t, const struct roce_pkt *pkt)
{
	uint8_t frame[ROCE_TMPL_HDR_MAX + ROCE_BTH_LEN + ROCE_ICRC_LEN];	/* no extended header */
	struct roce_pkt hdr = *pkt;
	int len;

	t->valid = false;
	if (pkt->kind != ROCE_KIND_ROCEV2 || pkt->nvlan != 0)
		return -EINVAL;
	/* the same headers in front of a bare BTH: only the lengths and checksum differ */
	hdr.opcode = ROCE_OP_RC_SEND_ONLY;
	hdr.payload = NULL;
	hdr.payload_len = 0;
	len = roce_wire_build(&hdr, 0, frame, sizeof(frame));
	if (len < 0)
		return len;
	t->l3_off = ETHER_HDR_LEN;
	t->bth_off = (uint16_t)(ETHER_HDR_LEN + l3_len(pkt));
	t->ip_ver = pkt->ip_ver;
	memcpy(t->hdr, frame, t->bth_off);
	if (t->ip_ver == 4) {
		uint8_t *ip = t->hdr + t->l3_off;

		wr16(ip + 2, 0);
		t->ip_sum = wire_ipv4_sum(ip, IPV4_HDR_LEN, true);
	}
	t->key = *pkt;
	t->valid = true;
	return 0;
}

/* Frame length for @p pkt from @p t, or -EINVAL. */
static int tmpl_frame_len(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt)
{
	uint32_t len;

	if (pkt->payload_len > UINT16_MAX)
		return -EINVAL;
	len = t->bth_off + ext_len(pkt->opcode) + pkt->payload_len + pad_of(pkt, 0) + ROCE_ICRC_LEN;
	return len > UINT16_MAX ? -EINVAL : (int)len;
}

/*
 * Write the headers of the frame of @p len bytes (tmpl_frame_len()) for @p pkt from @p t, whose
 * IP header is IPv4 if @p v4 (a constant: one copy of this per shape, every offset known), into
 * @p buf: everything before the payload. A template is untagged (roce_wire_tmpl_init()): its IP
 * header starts at ETHER_HDR_LEN.
 */
static inline __attribute__((always_inline)) void tmpl_write_hdr(const struct roce_wire_tmpl *t,
								   const struct roce_pkt *pkt,
								   uint8_t *buf, uint32_t len,
								   uint32_t pad, bool v4)
{
	const uint32_t bth_off = ETHER_HDR_LEN + (v4 ? IPV4_HDR_LEN : IPV6_HDR_LEN) + UDP_HDR_LEN;
	/* the lengths count from the UDP header to the end (roce_wire_build's l4_len) */
	uint32_t l4_len = len - (bth_off - UDP_HDR_LEN);
	uint8_t *ip = buf + ETHER_HDR_LEN;

	memcpy(buf, t->hdr, bth_off);	/* a constant length: inlined moves, not a call */
	if (v4) {
		uint32_t sum = t->ip_sum + IPV4_HDR_LEN + l4_len;

		/* RFC 1071: the sum is order-free, so the length is added to the rest's */
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		wr16(ip + 2, (uint16_t)(IPV4_HDR_LEN + l4_len));
		wr16(ip + 10, (uint16_t)~sum);
	} else {
		wr16(ip + 4, (uint16_t)l4_len);
	}
	wr16(buf + bth_off - UDP_HDR_LEN + 4, (uint16_t)l4_len);
	build_bth(pkt, (uint8_t)pad, buf + bth_off);
	build_ext(pkt, buf + bth_off + ROCE_BTH_LEN);
}

/*
 * Write the whole frame: tmpl_write_hdr(), the payload, and the ICRC if @p icrc (a constant too;
 * else the trailer is zero, roce_wire_icrc_partial). The packet's fields are read into locals
 * first: the byte stores to @p buf may alias them.
 */
static inline __attribute__((always_inline)) int tmpl_write(const struct roce_wire_tmpl *t,
							      const struct roce_pkt *pkt, uint8_t *buf,
							      uint32_t len, bool v4, bool icrc)
{
	const uint8_t *payload = pkt->payload;
	uint32_t payload_len = pkt->payload_len, pad = pad_of(pkt, 0);
	uint32_t icrc_off = len - ROCE_ICRC_LEN;
	uint8_t *ip = buf + ETHER_HDR_LEN, *p;

	tmpl_write_hdr(t, pkt, buf, len, pad, v4);
	p = buf + icrc_off - pad - payload_len;
	if (payload != NULL)
		copy_payload(p, payload, payload_len);
	else
		fill_ramp(p, payload_len);
	memset(p + payload_len, 0, pad);
	/* the ICRC from 8 bytes before the IP header: the template's two shapes, in place */
	wr32le(buf + icrc_off, !icrc ? 0 : (v4 ? wire_icrc_v4 : wire_icrc_v6)(ip - 8,
									      icrc_off - ETHER_HDR_LEN + 8));
	return (int)len;
}

int roce_wire_tmpl_build(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt, uint8_t *buf,
			 uint32_t size)
{
	int len = tmpl_frame_len(t, pkt);

	if (len < 0)
		return len;
	if ((uint32_t)len > size)
		return -ENOSPC;
	return t->ip_ver == 4 ? tmpl_write(t, pkt, buf, (uint32_t)len, true, true) :
				tmpl_write(t, pkt, buf, (uint32_t)len, false, true);
}

/*
 * Start the frame of @p len bytes in the empty mbuf @p m where its payload lands on a cache line:
 * the sender's copy into the frame and the receiver's out of it, into a buffer at a page offset,
 * then move whole lines, with no store split across two (a 4 KiB payload both ways: 153 -> 136 ns
 * on Zen 5). The headroom left is 65 to 128 bytes.
 */
static inline void align_payload(struct rte_mbuf *m, const struct roce_pkt *pkt, int len)
{
	uintptr_t at = (uintptr_t)m->buf_addr + m->data_off +
		       (uint32_t)len - ROCE_ICRC_LEN - pad_of(pkt, 0) - pkt->payload_len;

	if (m->data_len == 0 && m->data_off >= 64 + 63)
		m->data_off = (uint16_t)(m->data_off - (at & 63));
}

/* The frame into the empty mbuf @p m, with its ICRC or (@p icrc false, a constant) without. */
static inline __attribute__((always_inline)) int tmpl_build_mbuf(const struct roce_wire_tmpl *t,
								   const struct roce_pkt *pkt,
								   struct rte_mbuf *m, bool icrc)
{
	int len = tmpl_frame_len(t, pkt);
	uint8_t *dst;

	if (len < 0)
		return len;
	align_payload(m, pkt, len);
	dst = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (dst == NULL)
		return -ENOSPC;
	if (!icrc)
		m->ol_flags |= roce_wire_icrc_partial;
	return t->ip_ver == 4 ? tmpl_write(t, pkt, dst, (uint32_t)len, true, icrc) :
				tmpl_write(t, pkt, dst, (uint32_t)len, false, icrc);
}

int roce_wire_tmpl_build_mbuf(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt,
			      struct rte_mbuf *m)
{
	return tmpl_build_mbuf(t, pkt, m, true);
}

/* The bytes an external segment points at belong to someone else: nothing is done at its end. */
static void zc_free_nothing(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

static int zc_shinfo_off = INT_MIN;	/* INT_MIN: not registered yet; -1: no room */

/*
 * Where the external segment @p m keeps the shared info of the bytes it points at: a dynamic
 * field in its second cache line, which its free reads anyway (next, pool), rather than its data
 * room, a line more to touch at each build and each free; the data room if no field is left.
 */
static struct rte_mbuf_ext_shared_info *zc_shinfo(struct rte_mbuf *m)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "rocelab_dynfield_zc_shinfo",
		.size = sizeof(struct rte_mbuf_ext_shared_info),
		.align = __alignof__(struct rte_mbuf_ext_shared_info),
	};
	int off = __atomic_load_n(&zc_shinfo_off, __ATOMIC_RELAXED);

	if (roce_unlikely(off < 0)) {
		if (off == INT_MIN) {
			/* the same offset to every thread that gets here first */
			off = rte_mbuf_dynfield_register(&desc);
			__atomic_store_n(&zc_shinfo_off, off < 0 ? -1 : off, __ATOMIC_RELAXED);
		}
		if (off < 0)
			return m->buf_len >= sizeof(struct rte_mbuf_ext_shared_info) ? m->buf_addr : NULL;
	}
	return RTE_MBUF_DYNFIELD(m, off, struct rte_mbuf_ext_shared_info *);
}

struct rte_mbuf *roce_wire_zc_trailer(struct rte_mempool *mp, uint32_t pad)
{
	struct rte_mbuf *m;
	uint8_t *p;

	if (pad > 3 || (m = rte_pktmbuf_alloc(mp)) == NULL)
		return NULL;
	m->data_off = 0;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(pad + ROCE_ICRC_LEN));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p, 0, pad + ROCE_ICRC_LEN);
	return m;
}

int roce_wire_tmpl_build_mbuf_zc(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt,
				 struct rte_mbuf *m, struct rte_mbuf *ext,
				 struct rte_mbuf *const trailer[4])
{
	struct rte_mbuf_ext_shared_info *sh;
	uint32_t pad = pad_of(pkt, 0), hdr_len;
	int len = tmpl_frame_len(t, pkt);
	struct rte_mbuf *tail;
	uint8_t *dst;

	if (len < 0)
		return len;
	tail = trailer[pad];
	if (pkt->payload == NULL || pkt->payload_len == 0 || roce_wire_icrc_partial == 0 ||
	    m->data_len != 0 || tail->data_len != pad + ROCE_ICRC_LEN || tail->next != NULL)
		return -EINVAL;
	sh = zc_shinfo(ext);
	if (sh == NULL)
		return -EINVAL;
	hdr_len = (uint32_t)len - ROCE_ICRC_LEN - pad - pkt->payload_len;
	dst = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)hdr_len);
	if (dst == NULL)
		return -ENOSPC;
	if (t->ip_ver == 4)
		tmpl_write_hdr(t, pkt, dst, (uint32_t)len, pad, true);
	else
		tmpl_write_hdr(t, pkt, dst, (uint32_t)len, pad, false);

	/* the payload */
	sh->free_cb = zc_free_nothing;
	sh->fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(sh, 1);
	rte_pktmbuf_attach_extbuf(ext, (void *)(uintptr_t)pkt->payload, RTE_BAD_IOVA,
				  (uint16_t)pkt->payload_len, sh);
	ext->data_len = (uint16_t)pkt->payload_len;

	/*
	 * the pad and the ICRC: a trailer the engine's frames share, whose lines stay in the cache
	 * (a reference more: its frames are the thread's own, so no atomic, which alone cost the
	 * 2-host case 6%); roce_wire_icrc_fill() gives the frame one of its own to write
	 */
	rte_mbuf_refcnt_set(tail, (uint16_t)(rte_mbuf_refcnt_read(tail) + 1));

	m->next = ext;
	ext->next = tail;
	m->nb_segs = 3;
	m->pkt_len = (uint32_t)len;
	m->ol_flags |= roce_wire_icrc_partial;
	return len;
}

void roce_wire_zc_free(struct rte_mbuf *m)
{
	struct rte_mbuf *seg, *tail;
	uint16_t ref;

	if (m->nb_segs == 3 && (seg = m->next) != NULL && (tail = seg->next) != NULL &&
	    tail->next == NULL && (ref = rte_mbuf_refcnt_read(tail)) > 1) {
		/* the reference to the shared trailer, dropped as it was taken: no atomic */
		rte_mbuf_refcnt_set(tail, (uint16_t)(ref - 1));
		seg->next = NULL;
		m->nb_segs = 2;
		m->pkt_len -= tail->data_len;
	}
	rte_pktmbuf_free(m);
}

int roce_wire_tmpl_build_mbuf_partial(const struct roce_wire_tmpl *t, const struct roce_pkt *pkt,
				      struct rte_mbuf *m)
{
	/* no flag to say the ICRC is missing: then nothing would write it */
	return roce_likely(roce_wire_icrc_partial != 0) ? tmpl_build_mbuf(t, pkt, m, false) :
							   tmpl_build_mbuf(t, pkt, m, true);
}
