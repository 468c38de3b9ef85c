/* Independent checks of lib/wire's results, shared by test_wire.c and the fuzzers: a bitwise
 * CRC-32 and ICRC, a field-by-field comparison of two decoded frames, and the invariants every
 * parse result must satisfy. */
#ifndef WIRE_CHECK_H
#define WIRE_CHECK_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "roce_wire.h"

static inline uint16_t chk_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t chk_rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* CRC-32 (IEEE 802.3, reflected 0xedb88320) one bit at a time: the textbook definition. */
static inline uint32_t ref_crc32_update(uint32_t reg, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		reg ^= p[i];
		for (int b = 0; b < 8; b++)
			reg = (reg >> 1) ^ (0xedb88320u & -(reg & 1));
	}
	return reg;
}

static inline uint32_t ref_crc32(const void *p, size_t n)
{
	return ~ref_crc32_update(0xffffffffu, p, n);
}

/*
 * ICRC per IBA Annex A17.3.3, written from the spec without lib/wire's code: 8 bytes of ones
 * for the LRH, then the IP header (or GRH) with TOS/TC, TTL/hop limit, checksum and flow label
 * set to ones, the UDP checksum set to ones, BTH byte 4 set to ones, then the rest up to @p end.
 * Returns the CRC-32 value, i.e. the 4 stored ICRC bytes read little-endian.
 */
static inline uint32_t ref_icrc(const uint8_t *buf, const struct roce_pkt *pkt, uint32_t end)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t hdr[128];
	uint32_t hlen = pkt->bth_off + ROCE_BTH_LEN - pkt->l3_off;
	uint32_t reg;

	memcpy(hdr, buf + pkt->l3_off, hlen);
	if (pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver == 4) {
		hdr[1] = 0xff;
		hdr[8] = 0xff;
		hdr[10] = hdr[11] = 0xff;
	} else {
		hdr[0] |= 0x0f;
		hdr[1] = hdr[2] = hdr[3] = 0xff;
		hdr[7] = 0xff;
	}
	if (pkt->kind == ROCE_KIND_ROCEV2)
		hdr[pkt->l4_off - pkt->l3_off + 6] = hdr[pkt->l4_off - pkt->l3_off + 7] = 0xff;
	hdr[pkt->bth_off - pkt->l3_off + 4] = 0xff;
	reg = ref_crc32_update(0xffffffffu, ones, sizeof(ones));
	reg = ref_crc32_update(reg, hdr, hlen);
	reg = ref_crc32_update(reg, buf + pkt->bth_off + ROCE_BTH_LEN,
			       end - (pkt->bth_off + ROCE_BTH_LEN));
	return ~reg;
}

#define CHK_CMP(f) \
	do { \
		if (a->f != b->f) \
			return #f; \
	} while (0)

/* Compare the extended headers of @p a's opcode. @return NULL, or the first field that differs */
static inline const char *ext_cmp(const struct roce_pkt *a, const struct roce_pkt *b)
{
	uint32_t mask;

	mask = roce_opcode[a->opcode].mask;
	if (mask & ROCE_F_RDETH)
		CHK_CMP(rdeth_eecnxt);
	if (mask & ROCE_F_DETH) {
		CHK_CMP(deth.qkey);
		CHK_CMP(deth.srcqp);
	}
	if (mask & ROCE_F_XRCETH)
		CHK_CMP(xrc_srqn);
	if (mask & ROCE_F_FETH)
		CHK_CMP(feth);
	if (mask & ROCE_F_RETH) {
		CHK_CMP(reth.va);
		CHK_CMP(reth.rkey);
		CHK_CMP(reth.dmalen);
	}
	if (mask & ROCE_F_ATMETH) {
		CHK_CMP(atmeth.va);
		CHK_CMP(atmeth.rkey);
		CHK_CMP(atmeth.swap);
		CHK_CMP(atmeth.cmp);
	}
	if (mask & ROCE_F_AETH) {
		CHK_CMP(aeth.syndrome);
		CHK_CMP(aeth.msn);
	}
	if (mask & ROCE_F_ATMACK)
		CHK_CMP(atmack_orig);
	if (mask & ROCE_F_IMMDT)
		CHK_CMP(immdt);
	if (mask & ROCE_F_IETH)
		CHK_CMP(ieth_rkey);
	return NULL;
}

/*
 * Compare the fields two frames share (a descriptor that was built and what parsing it gave,
 * or two parses). @return NULL if equal, else the name of the first field that differs
 */
static inline const char *pkt_cmp(const struct roce_pkt *a, const struct roce_pkt *b)
{
	const char *diff;

	CHK_CMP(kind);
	if (memcmp(a->dmac, b->dmac, 6) != 0)
		return "dmac";
	if (memcmp(a->smac, b->smac, 6) != 0)
		return "smac";
	CHK_CMP(nvlan);
	for (int i = 0; i < a->nvlan && i < ROCE_MAX_VLANS; i++) {
		CHK_CMP(vlan[i].tpid);
		CHK_CMP(vlan[i].pcp);
		CHK_CMP(vlan[i].dei);
		CHK_CMP(vlan[i].vid);
	}
	if (a->kind == ROCE_KIND_PFC) {
		CHK_CMP(pfc_cev);
		for (int i = 0; i < 8; i++)
			CHK_CMP(quanta[i]);
		return NULL;
	}
	if (a->kind == ROCE_KIND_PAUSE) {
		CHK_CMP(quanta[0]);
		return NULL;
	}
	CHK_CMP(ip_ver);
	CHK_CMP(dscp);
	CHK_CMP(ecn);
	CHK_CMP(ttl);
	if (memcmp(a->src.b, b->src.b, a->ip_ver == 4 ? 4 : 16) != 0)
		return "src";
	if (memcmp(a->dst.b, b->dst.b, a->ip_ver == 4 ? 4 : 16) != 0)
		return "dst";
	if (a->kind == ROCE_KIND_ROCEV2 && a->ip_ver == 4) {
		CHK_CMP(ip_id);
		CHK_CMP(ip_df);
	} else {
		CHK_CMP(flow_label);
	}
	if (a->kind == ROCE_KIND_ROCEV2) {
		CHK_CMP(sport);
		CHK_CMP(dport);
		CHK_CMP(udp_csum);
	}
	CHK_CMP(opcode);
	CHK_CMP(se);
	CHK_CMP(mig);
	CHK_CMP(pad);
	CHK_CMP(tver);
	CHK_CMP(pkey);
	CHK_CMP(fecn);
	CHK_CMP(becn);
	CHK_CMP(resv6);
	CHK_CMP(dqpn);
	CHK_CMP(ackreq);
	CHK_CMP(resv7);
	CHK_CMP(psn);
	diff = ext_cmp(a, b);
	if (diff != NULL)
		return diff;
	CHK_CMP(payload_len);
	if (a->payload_len != 0 && a->payload != NULL && b->payload != NULL &&
	    memcmp(a->payload, b->payload, a->payload_len) != 0)
		return "payload";
	return NULL;
}

/* End of the IP datagram (or GRH payload) as the frame's own length fields define it. */
static inline uint32_t chk_ip_end(const uint8_t *buf, const struct roce_pkt *pkt)
{
	const uint8_t *l3 = buf + pkt->l3_off;

	if (pkt->kind == ROCE_KIND_ROCEV2 && pkt->ip_ver == 4)
		return pkt->l3_off + chk_rd16(l3 + 2);
	return pkt->l3_off + 40u + chk_rd16(l3 + 4);
}

/*
 * The invariants of one roce_wire_parse() result, checked against the bytes; with
 * ROCE_PARSE_CAPTURE too (a frame cut by a snaplen, IPv6 extension headers).
 * @param icrc_done  the parse computed the ICRC (no ROCE_PARSE_NO_ICRC)
 * @return NULL if they hold, else which one failed
 */
static inline const char *check_decode(const uint8_t *buf, uint32_t len, int rc,
				       const struct roce_pkt *pkt, bool icrc_done)
{
	const struct roce_opcode_info *info;
	uint32_t ip_end;

	if (rc != 0 && rc != -EINVAL && rc != -EBADMSG)
		return "rc is not 0, -EINVAL or -EBADMSG";
	if ((unsigned int)pkt->err >= ROCE_WERR_NUM)
		return "err out of range";
	if (strcmp(roce_wire_strerror(pkt->err), "?") == 0)
		return "err has no name";
	if ((unsigned int)pkt->kind > ROCE_KIND_PAUSE)
		return "kind out of range";
	if (pkt->len != len)
		return "len differs from the input length";
	if ((rc == 0) != (pkt->err == ROCE_WERR_OK))
		return "rc 0 but err set, or the reverse";
	if ((rc == -EBADMSG) != (pkt->err == ROCE_WERR_ICRC_MISMATCH))
		return "-EBADMSG without icrc-mismatch, or the reverse";
	if (pkt->nvlan > ROCE_MAX_VLANS)
		return "nvlan beyond ROCE_MAX_VLANS";
	if (rc == -EINVAL) {
		if (pkt->bth_off != 0 && (uint32_t)pkt->bth_off + ROCE_BTH_LEN > len)
			return "failed parse: BTH beyond the frame";
		return NULL;
	}

	/* A decoded frame (maybe with a bad ICRC). */
	if (pkt->l3_off != 14 + 4 * pkt->nvlan)
		return "l3_off does not follow the VLAN tags";
	if (pkt->kind == ROCE_KIND_PFC || pkt->kind == ROCE_KIND_PAUSE) {
		const uint8_t *mc = buf + pkt->l3_off;

		if (rc != 0)
			return "MAC control frame with an ICRC error";
		if (pkt->kind == ROCE_KIND_PFC) {
			if (len < pkt->l3_off + 20u || chk_rd16(mc) != ROCE_MAC_CTRL_PFC)
				return "PFC: frame too short or wrong opcode";
			if (pkt->pfc_cev != chk_rd16(mc + 2))
				return "PFC: class-enable vector";
			for (int i = 0; i < 8; i++)
				if (pkt->quanta[i] != chk_rd16(mc + 4 + 2 * i))
					return "PFC: quanta";
		} else {
			if (len < pkt->l3_off + 4u || chk_rd16(mc) != ROCE_MAC_CTRL_PAUSE)
				return "PAUSE: frame too short or wrong opcode";
			if (pkt->quanta[0] != chk_rd16(mc + 2))
				return "PAUSE: quanta";
		}
		return NULL;
	}
	if (pkt->kind != ROCE_KIND_ROCEV2 && pkt->kind != ROCE_KIND_ROCEV1)
		return "decoded frame of kind other";
	if (pkt->kind == ROCE_KIND_ROCEV2) {
		uint32_t ihl = pkt->ip_ver == 4 ? (buf[pkt->l3_off] & 0xfu) * 4 : 40;

		if (pkt->ip_ver != (buf[pkt->l3_off] >> 4))
			return "ip_ver differs from the IP header";
		if (pkt->ip_ver == 6 && buf[pkt->l3_off + 6] != 17) {
			/* extension headers: UDP is further on, never straight after */
			if (pkt->l4_off < pkt->l3_off + ihl + 8)
				return "l4_off does not follow the IPv6 extension headers";
		} else if (pkt->l4_off != pkt->l3_off + ihl) {
			return "l4_off does not follow the IP header";
		}
		if (pkt->bth_off != pkt->l4_off + 8)
			return "bth_off does not follow the UDP header";
		if (chk_rd16(buf + pkt->l4_off + 2) != ROCE_UDP_PORT)
			return "UDP destination port is not 4791";
	} else if (pkt->bth_off != pkt->l3_off + ROCE_GRH_LEN) {
		return "bth_off does not follow the GRH";
	}
	ip_end = chk_ip_end(buf, pkt);
	if (pkt->truncated != (ip_end > len))
		return "truncated, but the IP datagram fits the frame, or the reverse";
	if (pkt->kind == ROCE_KIND_ROCEV2 && chk_rd16(buf + pkt->l4_off + 4) != ip_end - pkt->l4_off)
		return "UDP length disagrees with the IP length";
	info = &roce_opcode[pkt->opcode];
	if (info->name == NULL)
		return "decoded an opcode the table does not know";
	if (pkt->opcode != buf[pkt->bth_off] || pkt->psn != roce_bth_psn(buf + pkt->bth_off) ||
	    pkt->dqpn != roce_bth_dqpn(buf + pkt->bth_off))
		return "BTH fields differ from the bytes";
	if (pkt->payload_off != pkt->bth_off + info->hdr_len)
		return "payload_off does not follow the extended headers";
	if (pkt->payload != buf + pkt->payload_off)
		return "payload does not point at payload_off";
	if ((uint32_t)pkt->payload_off + pkt->payload_len + pkt->pad + ROCE_ICRC_LEN != ip_end)
		return "payload_off + payload_len + pad + 4 != end of the IP datagram";
	if (pkt->pad != ((buf[pkt->bth_off + 1] >> 4) & 3))
		return "pad differs from the BTH";
	if (pkt->truncated || roce_pkt_ipv6_ext(pkt)) {
		if (pkt->icrc_calc != 0 || pkt->icrc_ok)
			return "an ICRC verdict on a frame cut short or with IPv6 extension headers";
		if (pkt->truncated)
			return pkt->icrc == 0 ? NULL : "icrc read from beyond the capture";
	}
	if (pkt->icrc != chk_rd32le(buf + ip_end - ROCE_ICRC_LEN))
		return "icrc is not the 4 bytes before the end, read little-endian";
	if (icrc_done && !roce_pkt_ipv6_ext(pkt)) {
		if (pkt->icrc_calc != ref_icrc(buf, pkt, ip_end - ROCE_ICRC_LEN))
			return "icrc_calc differs from the bitwise reference ICRC";
		if (pkt->icrc_ok != (pkt->icrc_calc == pkt->icrc))
			return "icrc_ok disagrees with icrc == icrc_calc";
		if (rc == 0 && !pkt->icrc_ok)
			return "rc 0 with a bad ICRC";
	}
	return NULL;
}

/*
 * Rebuild a decoded frame from its descriptor and parse it again: the fields must survive.
 * @param scratch  at least 65600 bytes
 * @return NULL, or what failed
 */
static inline const char *check_rebuild(const struct roce_pkt *pkt, uint8_t *scratch,
					uint32_t scratch_len)
{
	struct roce_pkt again;
	const char *diff;
	int n, rc;

	n = roce_wire_build(pkt, ROCE_BUILD_KEEP_PAD, scratch, scratch_len);
	if (n < 0)
		return "roce_wire_build refused a frame roce_wire_parse accepted";
	rc = roce_wire_parse(scratch, (uint32_t)n, 0, &again);
	if (rc != 0)
		return "the rebuilt frame does not parse";
	diff = pkt_cmp(pkt, &again);
	if (diff != NULL)
		return diff;
	return NULL;
}

/* The fields a receive parse gives of an untagged RoCEv2 frame: NULL, or the first that differs. */
static inline const char *rx_cmp(const struct roce_pkt *a, const struct roce_pkt *b)
{
	CHK_CMP(kind);
	CHK_CMP(len);
	CHK_CMP(nvlan);
	CHK_CMP(ip_ver);
	CHK_CMP(dscp);
	CHK_CMP(ecn);
	CHK_CMP(ttl);
	CHK_CMP(sport);
	CHK_CMP(dport);
	CHK_CMP(opcode);
	CHK_CMP(se);
	CHK_CMP(pad);
	CHK_CMP(becn);
	CHK_CMP(dqpn);
	CHK_CMP(ackreq);
	CHK_CMP(psn);
	CHK_CMP(payload);
	CHK_CMP(payload_len);
	CHK_CMP(icrc);
	CHK_CMP(icrc_calc);
	CHK_CMP(icrc_ok);
	CHK_CMP(l3_off);
	CHK_CMP(l4_off);
	CHK_CMP(bth_off);
	CHK_CMP(payload_off);
	if (memcmp(a->dmac, b->dmac, 6) != 0 || memcmp(a->smac, b->smac, 6) != 0)
		return "MAC";
	if (memcmp(&a->src, &b->src, sizeof(a->src)) != 0 ||
	    memcmp(&a->dst, &b->dst, sizeof(a->dst)) != 0)
		return "address";
	return ext_cmp(a, b);
}

/*
 * roce_wire_parse_rx(buf, len, @p flags) against roce_wire_parse(buf, len, 0): the same verdict,
 * and for a frame it accepts every field it promises the same (into a descriptor filled with
 * garbage first, so a field it forgets shows). With ROCE_PARSE_ICRC_CHECKED only a frame whose
 * ICRC is good compares (the flag's promise). @return NULL, or what differs
 */
static inline const char *check_parse_rx_flags(const uint8_t *buf, uint32_t len,
					       unsigned int flags)
{
	struct roce_pkt full, rx;
	int rc = roce_wire_parse(buf, len, 0, &full);

	if ((flags & ROCE_PARSE_ICRC_CHECKED) && rc != 0)
		return NULL;
	memset(&rx, 0xa5, sizeof(rx));
	if (roce_wire_parse_rx(buf, len, flags, &rx) != rc)
		return "parse_rx: another return value";
	if (rx.err != full.err)
		return "parse_rx: another error";
	if (rc != 0 || full.kind != ROCE_KIND_ROCEV2 || full.nvlan != 0)
		return NULL;
	return rx_cmp(&full, &rx);
}

/*
 * roce_wire_parse_rx_chain() of @p buf cut into three segments at @p cut1 and @p cut2: it takes
 * the frame only where roce_wire_parse_rx() takes it with the ICRC vouched for and the cuts fall
 * where the payload starts and ends, and then reads it the same but for the ICRC, which it
 * does not read; any other cut, or an ICRC not vouched for, is -EAGAIN.
 */
static inline const char *check_parse_rx_chain(const uint8_t *buf, uint32_t len, uint32_t cut1,
					       uint32_t cut2)
{
	struct rte_mbuf seg[3];
	struct roce_pkt rx, ch;
	int rc, rc_rx;

	if (cut1 > cut2 || cut2 > len || len > UINT16_MAX)
		return NULL;
	memset(seg, 0, sizeof(seg));
	for (int i = 0; i < 3; i++) {
		uint32_t from = i == 0 ? 0 : i == 1 ? cut1 : cut2, to = i == 0 ? cut1 : i == 1 ? cut2 : len;

		seg[i].buf_addr = (void *)(uintptr_t)(buf + from);
		seg[i].buf_len = (uint16_t)(to - from);
		seg[i].data_len = (uint16_t)(to - from);
		seg[i].next = i < 2 ? &seg[i + 1] : NULL;
	}
	seg[0].nb_segs = 3;
	seg[0].pkt_len = len;
	if (roce_wire_parse_rx_chain(&seg[0], 0, &ch) != -EAGAIN)
		return "parse_rx_chain: took a chain whose ICRC nobody vouched for";
	memset(&ch, 0xa5, sizeof(ch));
	rc = roce_wire_parse_rx_chain(&seg[0], ROCE_PARSE_ICRC_CHECKED, &ch);
	if (rc == -EAGAIN)
		return NULL;
	memset(&rx, 0xa5, sizeof(rx));
	rc_rx = roce_wire_parse_rx(buf, len, ROCE_PARSE_ICRC_CHECKED, &rx);
	if (rc != 0 || rc_rx != 0)
		return "parse_rx_chain: a verdict parse_rx does not give";
	if (rx.payload_off != cut1 || rx.payload_off + rx.payload_len != cut2 ||
	    rx.payload_off + rx.payload_len + rx.pad + ROCE_ICRC_LEN != len)
		return "parse_rx_chain: took a chain cut elsewhere than around the payload";
	if (ch.icrc != 0 || ch.icrc_calc != 0)
		return "parse_rx_chain: read the ICRC segment";
	rx.icrc = rx.icrc_calc = 0;
	return rx_cmp(&rx, &ch);
}

/*
 * check_parse_rx_flags() as a NIC without and with ICRC offload, and check_parse_rx_chain() cut
 * around the payload and at two places @p any picks.
 */
static inline const char *check_parse_rx(const uint8_t *buf, uint32_t len, uint32_t any)
{
	const char *why = check_parse_rx_flags(buf, len, 0);
	struct roce_pkt rx;

	if (why == NULL)
		why = check_parse_rx_flags(buf, len, ROCE_PARSE_ICRC_CHECKED);
	if (why == NULL && roce_wire_parse_rx(buf, len, ROCE_PARSE_ICRC_CHECKED, &rx) == 0 &&
	    rx.kind == ROCE_KIND_ROCEV2)
		why = check_parse_rx_chain(buf, len, rx.payload_off,
					   rx.payload_off + rx.payload_len);
	if (why == NULL && len != 0)
		why = check_parse_rx_chain(buf, len, any % (len + 1), (any >> 16) % (len + 1));
	return why;
}

#endif /* WIRE_CHECK_H */
