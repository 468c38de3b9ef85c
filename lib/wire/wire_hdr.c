/* Parse Ethernet/802.1Q/IPv4|IPv6/UDP/BTH and RoCEv1 frames in place, without allocating. */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_wire.h"
#include "wire_private.h"

#define ETHERTYPE_QINQ 0x88a8
#define ETHERTYPE_QINQ_OLD 0x9100
#define IPPROTO_UDP_NUM 17
#define GRH_NEXT_HDR_BTH 0x1b	/* IBA 8.3.1: IBA transport */
#define IPV6_EXT_HOPOPTS 0	/* RFC 8200 4.3 */
#define IPV6_EXT_ROUTING 43	/* RFC 8200 4.4 */
#define IPV6_EXT_FRAGMENT 44	/* RFC 8200 4.5 */
#define IPV6_EXT_DSTOPTS 60	/* RFC 8200 4.6 */
#define IPV6_EXT_MIN_LEN 8	/* every extension header; the fragment header exactly */
#define IPV6_EXT_MAX 8		/* extension headers walked before giving up: not RoCE */

static int fail(struct roce_pkt *pkt, enum roce_wire_err err)
{
	pkt->err = err;
	return -EINVAL;
}

/* IPv4 header at @p off; sets l4_off and the end of the IP datagram. */
static int parse_ipv4(const uint8_t *buf, uint32_t len, uint32_t off, unsigned int flags,
		      struct roce_pkt *pkt, uint32_t *end)
{
	const uint8_t *ip = buf + off;
	uint32_t ihl, total;
	uint16_t frag;

	if (len < off + IPV4_HDR_LEN)
		return fail(pkt, ROCE_WERR_TRUNCATED);
	if (ip[0] >> 4 != 4)
		return fail(pkt, ROCE_WERR_BAD_IP_VERSION);
	pkt->ip_ver = 4;
	pkt->dscp = ip[1] >> 2;
	pkt->ecn = ip[1] & 3;
	pkt->ip_id = rd16(ip + 4);
	frag = rd16(ip + 6);
	pkt->ip_df = (frag & 0x4000) != 0;
	pkt->ttl = ip[8];
	pkt->ip_csum = rd16(ip + 10);
	memcpy(pkt->src.b, ip + 12, 4);
	memcpy(pkt->dst.b, ip + 16, 4);
	ihl = (ip[0] & 0xfu) * 4;
	if (ihl < IPV4_HDR_LEN)
		return fail(pkt, ROCE_WERR_BAD_IP_HDR_LEN);
	if (len < off + ihl)
		return fail(pkt, ROCE_WERR_TRUNCATED);
	total = rd16(ip + 2);
	if (total < ihl)
		return fail(pkt, ROCE_WERR_BAD_IP_LEN);
	if (ip[9] != IPPROTO_UDP_NUM)
		return fail(pkt, ROCE_WERR_NOT_ROCE);
	if ((frag & 0x1fff) != 0)
		return fail(pkt, ROCE_WERR_NOT_ROCE);	/* a later fragment: no UDP header */
	pkt->l4_off = (uint16_t)(off + ihl);
	if (len < off + ihl + UDP_HDR_LEN)
		return fail(pkt, len < off + total ? ROCE_WERR_TRUNCATED : ROCE_WERR_NOT_ROCE);
	if (rd16(ip + ihl + 2) != ROCE_UDP_PORT)
		return fail(pkt, ROCE_WERR_NOT_ROCE);
	if (len < off + total) {
		if (!(flags & ROCE_PARSE_CAPTURE))
			return fail(pkt, ROCE_WERR_TRUNCATED);
		pkt->truncated = true;	/* a snaplen: the rest was on the wire */
	}
	if (frag & 0x2000)
		return fail(pkt, ROCE_WERR_IP_FRAGMENT);
	if (wire_ipv4_sum(ip, ihl, false) != 0xffff)
		return fail(pkt, ROCE_WERR_BAD_IP_CSUM);
	*end = off + total;
	return 0;
}

/*
 * The IPv6 extension headers from @p *l4 on, until UDP (ROCE_PARSE_CAPTURE only, see
 * roce_wire_parse()): hop-by-hop, routing and destination options by their length byte, and a
 * fragment header that holds the whole datagram (offset 0, no more fragments, RFC 6946).
 * @p *nh is the Next Header of the fixed header on entry, of the last one walked on return.
 */
static int walk_ipv6_ext(const uint8_t *buf, uint32_t len, uint32_t ip_end, uint8_t *nh,
			 uint32_t *l4, struct roce_pkt *pkt)
{
	for (int n = 0; *nh != IPPROTO_UDP_NUM; n++) {
		const uint8_t *h = buf + *l4;
		uint32_t hlen;

		if (n == IPV6_EXT_MAX || (*nh != IPV6_EXT_HOPOPTS && *nh != IPV6_EXT_ROUTING &&
					  *nh != IPV6_EXT_DSTOPTS && *nh != IPV6_EXT_FRAGMENT))
			return fail(pkt, ROCE_WERR_NOT_ROCE);
		hlen = IPV6_EXT_MIN_LEN;
		if (ip_end < *l4 + hlen)
			return fail(pkt, ROCE_WERR_BAD_IP_LEN);
		if (len < *l4 + hlen)
			return fail(pkt, ROCE_WERR_TRUNCATED);
		if (*nh == IPV6_EXT_FRAGMENT) {
			if ((rd16(h + 2) & 0xfff8) != 0)
				return fail(pkt, ROCE_WERR_NOT_ROCE);	/* no UDP header in it */
			if (h[3] & 1)
				return fail(pkt, ROCE_WERR_IP_FRAGMENT);
		} else {
			hlen = (h[1] + 1u) * 8;		/* RFC 8200 4.3: in 8-octet units */
			if (ip_end < *l4 + hlen)
				return fail(pkt, ROCE_WERR_BAD_IP_LEN);
		}
		*nh = h[0];
		*l4 += hlen;
	}
	return 0;
}

static int parse_ipv6(const uint8_t *buf, uint32_t len, uint32_t off, unsigned int flags,
		      struct roce_pkt *pkt, uint32_t *end)
{
	const uint8_t *ip = buf + off;
	uint32_t vtc_flow, plen, l4, ip_end;
	uint8_t nh;
	int rc;

	if (len < off + IPV6_HDR_LEN)
		return fail(pkt, ROCE_WERR_TRUNCATED);
	vtc_flow = rd32(ip);
	if (vtc_flow >> 28 != 6)
		return fail(pkt, ROCE_WERR_BAD_IP_VERSION);
	pkt->ip_ver = 6;
	pkt->dscp = (uint8_t)(vtc_flow >> 22) & 0x3f;
	pkt->ecn = (vtc_flow >> 20) & 3;
	pkt->flow_label = vtc_flow & 0xfffff;
	pkt->ttl = ip[7];
	memcpy(pkt->src.b, ip + 8, 16);
	memcpy(pkt->dst.b, ip + 24, 16);
	plen = rd16(ip + 4);
	ip_end = off + IPV6_HDR_LEN + plen;
	nh = ip[6];
	l4 = off + IPV6_HDR_LEN;
	if (nh != IPPROTO_UDP_NUM && (flags & ROCE_PARSE_CAPTURE)) {
		rc = walk_ipv6_ext(buf, len, ip_end, &nh, &l4, pkt);
		if (rc != 0)
			return rc;
	}
	if (nh != IPPROTO_UDP_NUM)
		return fail(pkt, ROCE_WERR_NOT_ROCE);
	pkt->l4_off = (uint16_t)l4;
	if (len < l4 + UDP_HDR_LEN)
		return fail(pkt, len < ip_end ? ROCE_WERR_TRUNCATED : ROCE_WERR_NOT_ROCE);
	if (rd16(buf + l4 + 2) != ROCE_UDP_PORT)
		return fail(pkt, ROCE_WERR_NOT_ROCE);
	if (len < ip_end) {
		if (!(flags & ROCE_PARSE_CAPTURE))
			return fail(pkt, ROCE_WERR_TRUNCATED);
		pkt->truncated = true;
	}
	*end = ip_end;
	return 0;
}

/* RoCEv1: a 40-byte GRH straight after the Ethernet header, then the BTH. */
static int parse_grh(const uint8_t *buf, uint32_t len, uint32_t off, unsigned int flags,
		     struct roce_pkt *pkt, uint32_t *end)
{
	const uint8_t *grh = buf + off;
	uint32_t vtc_flow;

	pkt->kind = ROCE_KIND_ROCEV1;
	if (len < off + ROCE_GRH_LEN)
		return fail(pkt, ROCE_WERR_TRUNCATED);
	vtc_flow = rd32(grh);
	pkt->ip_ver = 6;
	pkt->dscp = (uint8_t)(vtc_flow >> 22) & 0x3f;
	pkt->ecn = (vtc_flow >> 20) & 3;
	pkt->flow_label = vtc_flow & 0xfffff;
	pkt->ttl = grh[7];
	memcpy(pkt->src.b, grh + 8, 16);
	memcpy(pkt->dst.b, grh + 24, 16);
	if (vtc_flow >> 28 != 6 || grh[6] != GRH_NEXT_HDR_BTH)
		return fail(pkt, ROCE_WERR_BAD_GRH);
	if (len < off + ROCE_GRH_LEN + rd16(grh + 4)) {
		if (!(flags & ROCE_PARSE_CAPTURE))
			return fail(pkt, ROCE_WERR_TRUNCATED);
		pkt->truncated = true;
	}
	*end = off + ROCE_GRH_LEN + rd16(grh + 4);
	pkt->bth_off = (uint16_t)(off + ROCE_GRH_LEN);
	return 0;
}

/* The extended headers but the RETH, the one an RDMA WRITE's first or only packet carries. */
#define EXT_NOT_RETH (ROCE_F_RDETH | ROCE_F_DETH | ROCE_F_XRCETH | ROCE_F_FETH | ROCE_F_ATMETH | \
		      ROCE_F_AETH | ROCE_F_ATMACK | ROCE_F_IMMDT | ROCE_F_IETH)

/* Inlined: roce_wire_parse_rx() runs it for every frame; the RETH first, the rest if any. */
static inline __attribute__((always_inline)) void parse_ext(const uint8_t *h,
							   const struct roce_opcode_info *info,
							   struct roce_pkt *pkt)
{
	uint32_t mask = info->mask;	/* read once: the stores to pkt may alias the table */
	const uint8_t *p;

	if (mask & ROCE_F_RETH) {
		p = h + info->ext_off[ROCE_EXT_RETH];
		pkt->reth.va = rd64(p);
		pkt->reth.rkey = rd32(p + 8);
		pkt->reth.dmalen = rd32(p + 12);
	}
	if (!(mask & EXT_NOT_RETH))
		return;
	if (mask & ROCE_F_RDETH)
		pkt->rdeth_eecnxt = rd24(h + info->ext_off[ROCE_EXT_RDETH] + 1);
	if (mask & ROCE_F_DETH) {
		p = h + info->ext_off[ROCE_EXT_DETH];
		pkt->deth.qkey = rd32(p);
		pkt->deth.srcqp = rd24(p + 5);
	}
	if (mask & ROCE_F_XRCETH)
		pkt->xrc_srqn = rd24(h + info->ext_off[ROCE_EXT_XRCETH] + 1);
	if (mask & ROCE_F_FETH)
		pkt->feth = rd32(h + info->ext_off[ROCE_EXT_FETH]);
	if (mask & ROCE_F_ATMETH) {
		p = h + info->ext_off[ROCE_EXT_ATMETH];
		pkt->atmeth.va = rd64(p);
		pkt->atmeth.rkey = rd32(p + 8);
		pkt->atmeth.swap = rd64(p + 12);
		pkt->atmeth.cmp = rd64(p + 20);
	}
	if (mask & ROCE_F_AETH) {
		p = h + info->ext_off[ROCE_EXT_AETH];
		pkt->aeth.syndrome = p[0];
		pkt->aeth.msn = rd24(p + 1);
	}
	if (mask & ROCE_F_ATMACK)
		pkt->atmack_orig = rd64(h + info->ext_off[ROCE_EXT_ATMACK]);
	if (mask & ROCE_F_IMMDT)
		pkt->immdt = rd32(h + info->ext_off[ROCE_EXT_IMMDT]);
	if (mask & ROCE_F_IETH)
		pkt->ieth_rkey = rd32(h + info->ext_off[ROCE_EXT_IETH]);
}

/*
 * BTH, extended headers, payload, pad and ICRC between bth_off and @p end; @p len bytes are in
 * @p buf, fewer than @p end when pkt->truncated.
 */
static int parse_transport(const uint8_t *buf, uint32_t len, uint32_t end, unsigned int flags,
			   struct roce_pkt *pkt)
{
	const uint8_t *bth = buf + pkt->bth_off;
	const struct roce_opcode_info *info;
	uint32_t body;

	if (end < (uint32_t)pkt->bth_off + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    len < (uint32_t)pkt->bth_off + ROCE_BTH_LEN) {
		pkt->bth_off = 0;	/* no BTH decoded */
		return fail(pkt, ROCE_WERR_TRUNCATED);
	}
	pkt->opcode = bth[0];
	pkt->se = bth[1] >> 7;
	pkt->mig = (bth[1] >> 6) & 1;
	pkt->pad = (bth[1] >> 4) & 3;
	pkt->tver = bth[1] & 0xf;
	pkt->pkey = rd16(bth + 2);
	pkt->fecn = bth[4] >> 7;
	pkt->becn = (bth[4] >> 6) & 1;
	pkt->resv6 = bth[4] & 0x3f;
	pkt->dqpn = rd24(bth + 5);
	pkt->ackreq = bth[8] >> 7;
	pkt->resv7 = bth[8] & 0x7f;
	pkt->psn = rd24(bth + 9);
	if (!pkt->truncated)
		pkt->icrc = rd32le(buf + end - ROCE_ICRC_LEN);

	info = &roce_opcode[pkt->opcode];
	if (info->name == NULL)
		return fail(pkt, ROCE_WERR_UNKNOWN_OPCODE);
	if (pkt->tver != 0)
		return fail(pkt, ROCE_WERR_BAD_TVER);
	if (end < (uint32_t)pkt->bth_off + info->hdr_len + ROCE_ICRC_LEN ||
	    len < (uint32_t)pkt->bth_off + info->hdr_len)
		return fail(pkt, ROCE_WERR_TRUNCATED);
	parse_ext(bth + ROCE_BTH_LEN, info, pkt);

	pkt->payload_off = (uint16_t)(pkt->bth_off + info->hdr_len);
	pkt->frame = buf;
	pkt->payload = buf + pkt->payload_off;
	body = end - ROCE_ICRC_LEN - pkt->payload_off;
	if (pkt->pad > body || (pkt->pad != 0 && !(info->mask & ROCE_F_PAYLOAD)))
		return fail(pkt, ROCE_WERR_BAD_PAD);
	pkt->payload_len = body - pkt->pad;
	if ((!(info->mask & ROCE_F_PAYLOAD) && body != 0) ||
	    ((info->mask & ROCE_F_PAYLOAD_FIXED) && pkt->payload_len != 8))
		return fail(pkt, ROCE_WERR_BAD_PAYLOAD_LEN);

	/*
	 * No verdict on an ICRC not captured, nor behind IPv6 extension headers: the masks of
	 * IBA Annex A17.3.3 are for the fixed header, and Linux rxe hashes 40 bytes of IPv6 then
	 * UDP, so which bytes such a sender covered is not known here.
	 */
	if ((flags & ROCE_PARSE_NO_ICRC) || pkt->truncated || roce_pkt_ipv6_ext(pkt))
		return 0;
	if (flags & ROCE_PARSE_ICRC_CHECKED) {
		pkt->icrc_calc = pkt->icrc;	/* vouched for: see roce_wire_icrc_good */
		pkt->icrc_ok = true;
		return 0;
	}
	pkt->icrc_calc = wire_icrc(buf, pkt->l3_off, pkt->bth_off, end - ROCE_ICRC_LEN,
				   pkt->ip_ver == 4, pkt->kind == ROCE_KIND_ROCEV2);
	pkt->icrc_ok = pkt->icrc_calc == pkt->icrc;
	if (!pkt->icrc_ok) {
		pkt->err = ROCE_WERR_ICRC_MISMATCH;
		return -EBADMSG;
	}
	return 0;
}

int roce_wire_parse(const uint8_t *buf, uint32_t len, unsigned int flags, struct roce_pkt *pkt)
{
	uint32_t off = ETHER_HDR_LEN;
	uint32_t end = 0;
	uint16_t et;
	int rc;

	memset(pkt, 0, sizeof(*pkt));
	pkt->len = len;
	if (len < ETHER_HDR_LEN)
		return fail(pkt, ROCE_WERR_TRUNCATED);
	memcpy(pkt->dmac, buf, 6);
	memcpy(pkt->smac, buf + 6, 6);
	et = rd16(buf + 12);
	while (et == ETHERTYPE_VLAN || et == ETHERTYPE_QINQ || et == ETHERTYPE_QINQ_OLD) {
		uint16_t tci;

		/* where it stops on a tag: the type field it read (that tag's TPID), not 0 */
		pkt->ethertype = et;
		if (pkt->nvlan == ROCE_MAX_VLANS)
			return fail(pkt, ROCE_WERR_TOO_MANY_VLANS);
		if (len < off + VLAN_TAG_LEN)
			return fail(pkt, ROCE_WERR_TRUNCATED);
		tci = rd16(buf + off);
		pkt->vlan[pkt->nvlan].tpid = et;
		pkt->vlan[pkt->nvlan].pcp = tci >> 13;
		pkt->vlan[pkt->nvlan].dei = (tci >> 12) & 1;
		pkt->vlan[pkt->nvlan].vid = tci & 0xfff;
		pkt->nvlan++;
		et = rd16(buf + off + 2);
		off += VLAN_TAG_LEN;
	}
	pkt->ethertype = et;
	pkt->l3_off = (uint16_t)off;

	switch (et) {
	case ETHERTYPE_IPV4:
		rc = parse_ipv4(buf, len, off, flags, pkt, &end);
		break;
	case ETHERTYPE_IPV6:
		rc = parse_ipv6(buf, len, off, flags, pkt, &end);
		break;
	case ROCE_ETHERTYPE_V1:
		rc = parse_grh(buf, len, off, flags, pkt, &end);
		if (rc == 0)
			return parse_transport(buf, len, end, flags, pkt);
		return rc;
	case ROCE_ETHERTYPE_MAC_CTRL:
		return wire_parse_mac_ctrl(buf, len, off, pkt);
	default:
		return fail(pkt, ROCE_WERR_NOT_ROCE);
	}
	if (rc != 0)
		return rc;

	/* IP and UDP 4791 are in place: from here on it is RoCEv2. */
	pkt->kind = ROCE_KIND_ROCEV2;
	{
		const uint8_t *udp = buf + pkt->l4_off;
		uint32_t ulen = rd16(udp + 4);

		pkt->sport = rd16(udp);
		pkt->dport = rd16(udp + 2);
		pkt->udp_csum = rd16(udp + 6);
		if (ulen != end - pkt->l4_off)
			return fail(pkt, ROCE_WERR_BAD_UDP_LEN);
	}
	pkt->bth_off = (uint16_t)(pkt->l4_off + UDP_HDR_LEN);
	return parse_transport(buf, len, end, flags, pkt);
}

/*
 * The header checksum of a 20-byte IPv4 header @p ip whose first byte is 0x45 is right: the
 * one's-complement sum of its 16-bit words, checksum included, is 0xffff (RFC 1071). That is
 * their integer sum being a multiple of 0xffff, and not 0 (0x45 is in it); since 2^16 = 1 mod
 * 0xffff, the sum of its 32-bit words in memory order is that sum times 2^8 mod 0xffff, which
 * is 0 exactly when the sum is: five adds and a test of divisibility, no fold.
 */
static inline uint64_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline bool ipv4_hdr20_ok(const uint8_t *ip)
{
	return (ld32(ip) + ld32(ip + 4) + ld32(ip + 8) + ld32(ip + 12) + ld32(ip + 16)) % 0xffff == 0;
}

/* A UDP header to port 4791 at @p l4, its length to @p end, room in it for a BTH and an ICRC. */
static inline bool rx_udp_ok(const uint8_t *buf, uint32_t l4, uint32_t end)
{
	return end >= l4 + UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN &&
	       rd16(buf + l4 + 2) == ROCE_UDP_PORT && rd16(buf + l4 + 4) == end - l4;
}

/*
 * The untagged IPv4 or IPv6 header of a frame @p roce_wire_parse_rx() takes on its fast path:
 * every check of parse_ipv4()/parse_ipv6() and of the UDP length passes, with no IPv4 options
 * and no fragment bits. Checked before anything is stored, and the bytes read before the
 * stores, which may alias them. @return the end of the datagram, or 0 (let roce_wire_parse()
 * decide)
 */
static inline __attribute__((always_inline)) uint32_t rx_ip(const uint8_t *buf, uint32_t len,
							     struct roce_pkt *pkt)
{
	const uint8_t *ip = buf + ETHER_HDR_LEN;
	uint32_t end, l4, vtc;
	uint16_t sport;
	uint8_t ttl;

	switch (rd16(buf + 12)) {
	case ETHERTYPE_IPV4:
		end = ETHER_HDR_LEN + rd16(ip + 2);
		l4 = ETHER_HDR_LEN + IPV4_HDR_LEN;
		if (ip[0] != 0x45 || ip[9] != IPPROTO_UDP_NUM || (rd16(ip + 6) & 0x3fff) != 0 ||
		    end > len || !ipv4_hdr20_ok(ip) || !rx_udp_ok(buf, l4, end))
			return 0;
		vtc = ip[1];
		ttl = ip[8];
		sport = rd16(buf + l4);
		pkt->ip_ver = 4;
		pkt->dscp = (uint8_t)(vtc >> 2);
		pkt->ecn = vtc & 3;
		pkt->ttl = ttl;
		memcpy(pkt->src.b, ip + 12, 4);
		memcpy(pkt->dst.b, ip + 16, 4);
		memset(pkt->src.b + 4, 0, 12);
		memset(pkt->dst.b + 4, 0, 12);
		break;
	case ETHERTYPE_IPV6:
		end = ETHER_HDR_LEN + IPV6_HDR_LEN + rd16(ip + 4);
		l4 = ETHER_HDR_LEN + IPV6_HDR_LEN;
		if (ip[0] >> 4 != 6 || ip[6] != IPPROTO_UDP_NUM || end > len ||
		    !rx_udp_ok(buf, l4, end))
			return 0;
		vtc = rd32(ip);
		ttl = ip[7];
		sport = rd16(buf + l4);
		pkt->ip_ver = 6;
		pkt->dscp = (uint8_t)(vtc >> 22) & 0x3f;
		pkt->ecn = (vtc >> 20) & 3;
		pkt->ttl = ttl;
		memcpy(pkt->src.b, ip + 8, 16);
		memcpy(pkt->dst.b, ip + 24, 16);
		break;
	default:
		return 0;
	}
	pkt->l3_off = ETHER_HDR_LEN;
	pkt->l4_off = (uint16_t)l4;
	pkt->bth_off = (uint16_t)(l4 + UDP_HDR_LEN);
	pkt->sport = sport;
	pkt->dport = ROCE_UDP_PORT;
	return end;
}

/*
 * roce_wire_parse_rx(), on @p buf alone (@p chain NULL, a constant) or on the frame @p chain
 * whose first segment @p buf holds the headers, the second the payload and the third the pad
 * and the ICRC (roce_wire_tmpl_build_mbuf_zc()). @return as roce_wire_parse_rx(), or
 * -EAGAIN: not the fast path's shape, let roce_wire_parse() decide; -EBADMSG: the ICRC, checked
 * (not for @p chain), is wrong: let roce_wire_parse() check it again and say so
 */
static inline __attribute__((always_inline)) int parse_rx(const uint8_t *buf, uint32_t len,
							   const struct rte_mbuf *chain,
							   unsigned int flags, struct roce_pkt *pkt)
{
	const struct roce_opcode_info *info;
	uint32_t end, body, bth_off, payload_off, pad, mask, icrc, b1;
	const uint8_t *bth, *payload;
	uint64_t b0;

	/* the smallest RoCEv2 frame: Ethernet, IPv4, UDP, BTH, ICRC */
	if (len < ETHER_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return -EAGAIN;
	/* a chain: the first segment holds up to the BTH, whose offset the EtherType gives */
	if (chain != NULL &&
	    (!(flags & ROCE_PARSE_ICRC_CHECKED) || chain->data_len < ETHER_HDR_LEN ||
	     chain->data_len < ETHER_HDR_LEN + UDP_HDR_LEN + ROCE_BTH_LEN +
			       (rd16(buf + 12) == ETHERTYPE_IPV6 ? IPV6_HDR_LEN : IPV4_HDR_LEN)))
		return -EAGAIN;
	end = rx_ip(buf, len, pkt);
	if (end == 0)
		return -EAGAIN;
	/* the rest is checked, and the bytes read, before the stores (which may alias them) */
	bth_off = pkt->bth_off;
	bth = buf + bth_off;
	/* the BTH as two big-endian words: bytes 0-7 (opcode to dest QP) and 8-11 (AckReq, PSN) */
	b0 = rd64(bth);
	b1 = rd32(bth + 8);
	info = &roce_opcode[b0 >> 56];
	mask = info->mask;
	payload_off = bth_off + info->hdr_len;
	if (info->name == NULL || (b0 >> 48 & 0xf) != 0 || end < payload_off + ROCE_ICRC_LEN)
		return -EAGAIN;
	pad = b0 >> 52 & 3;
	body = end - ROCE_ICRC_LEN - payload_off;
	if (pad > body || (!(mask & ROCE_F_PAYLOAD) && body != 0) ||
	    ((mask & ROCE_F_PAYLOAD_FIXED) && body - pad != 8))
		return -EAGAIN;
	if (chain == NULL) {
		payload = buf + payload_off;
		icrc = rd32le(buf + end - ROCE_ICRC_LEN);
	} else {
		/*
		 * the three segments end where the headers, the payload and the frame do: the
		 * third holds the rest (pkt_len is the sum of the data_len), left untouched, for
		 * its ICRC, vouched for, is perhaps not even written yet (roce_wire_icrc_partial)
		 */
		const struct rte_mbuf *p = chain->next;

		if (chain->nb_segs != 3 || chain->data_len != payload_off || len != end ||
		    p == NULL || p->data_len != body - pad)
			return -EAGAIN;
		payload = rte_pktmbuf_mtod(p, const uint8_t *);
		icrc = 0;
		/* but the frame is freed soon: the third mbuf's lines on their way meanwhile */
		if (p->next != NULL) {
			rte_prefetch0(p->next);
			rte_prefetch0(&p->next->next);
		}
	}
	pkt->opcode = (uint8_t)(b0 >> 56);
	pkt->se = b0 >> 55 & 1;
	pkt->pad = (uint8_t)pad;
	pkt->becn = b0 >> 30 & 1;
	pkt->dqpn = b0 & 0xffffff;
	pkt->ackreq = b1 >> 31;
	pkt->psn = b1 & 0xffffff;
	pkt->payload_off = (uint16_t)payload_off;
	parse_ext(bth + ROCE_BTH_LEN, info, pkt);
	pkt->frame = buf;
	pkt->payload = payload;
	pkt->payload_len = body - pad;
	pkt->icrc = icrc;
	if (flags & ROCE_PARSE_ICRC_CHECKED) {
		pkt->icrc_calc = icrc;		/* the sender's, on bytes nothing has written since */
	} else {
		/* rx_ip() took only the two shapes wire_icrc_v4/_v6 read in place */
		pkt->icrc_calc = (pkt->ip_ver == 4 ? wire_icrc_v4 : wire_icrc_v6)
				 (buf + ETHER_HDR_LEN - 8, end - ROCE_ICRC_LEN - ETHER_HDR_LEN + 8);
		if (pkt->icrc_calc != icrc)
			return -EBADMSG;	/* a bad frame: in full */
	}
	pkt->icrc_ok = true;
	pkt->kind = ROCE_KIND_ROCEV2;
	pkt->err = ROCE_WERR_OK;
	pkt->len = len;
	memcpy(pkt->dmac, buf, 6);
	memcpy(pkt->smac, buf + 6, 6);
	pkt->nvlan = 0;
	return 0;
}

int roce_wire_parse_rx(const uint8_t *buf, uint32_t len, unsigned int flags, struct roce_pkt *pkt)
{
	int rc = parse_rx(buf, len, NULL, flags, pkt);

	if (rc == -EAGAIN)
		return roce_wire_parse(buf, len, flags & ROCE_PARSE_ICRC_CHECKED, pkt);
	return rc == -EBADMSG ? roce_wire_parse(buf, len, 0, pkt) : rc;
}

int roce_wire_parse_rx_chain(const struct rte_mbuf *m, unsigned int flags, struct roce_pkt *pkt)
{
	return parse_rx(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_pkt_len(m), m, flags, pkt);
}
