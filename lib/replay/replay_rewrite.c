/* Rewriting of replayed frames: MACs, IP addresses and destination QPs, checksums and ICRC redone. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_replay.h"

static const char *const field_name[ROCE_RW_NFIELDS] = {
	[ROCE_RW_SMAC] = "--src-mac",
	[ROCE_RW_DMAC] = "--dst-mac",
	[ROCE_RW_SIP] = "--src-ip",
	[ROCE_RW_DIP] = "--dst-ip",
	[ROCE_RW_QPN] = "--qpn",
};

static bool parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char end;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &end) != 6 || strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return true;
}

/* @return the IP version of @p s, 0 if it is no address */
static uint8_t parse_ip(const char *s, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 6;
	return 0;
}

static bool parse_qpn(const char *s, uint8_t q[3])
{
	uint64_t v;

	if (roce_parse_uint(s, ROCE_QPN_MASK, &v) != 0)
		return false;
	q[0] = (uint8_t)(v >> 16);
	q[1] = (uint8_t)(v >> 8);
	q[2] = (uint8_t)v;
	return true;
}

static int parse_value(enum roce_rw_field f, const char *s, uint8_t out[16], uint8_t *ver)
{
	switch (f) {
	case ROCE_RW_SMAC:
	case ROCE_RW_DMAC:
		return parse_mac(s, out) ? 0 : -EINVAL;
	case ROCE_RW_SIP:
	case ROCE_RW_DIP:
		*ver = parse_ip(s, out);
		return *ver ? 0 : -EINVAL;
	default:
		return parse_qpn(s, out) ? 0 : -EINVAL;
	}
}

int roce_rewrite_add(struct roce_rewrite *rw, enum roce_rw_field f, const char *spec,
		     char *err, size_t errlen)
{
	static const char *const expect[ROCE_RW_NFIELDS] = {
		[ROCE_RW_SMAC] = "[OLD=]NEW, MACs as aa:bb:cc:dd:ee:ff",
		[ROCE_RW_DMAC] = "[OLD=]NEW, MACs as aa:bb:cc:dd:ee:ff",
		[ROCE_RW_SIP] = "[OLD=]NEW, IPv4 or IPv6 addresses",
		[ROCE_RW_DIP] = "[OLD=]NEW, IPv4 or IPv6 addresses",
		[ROCE_RW_QPN] = "OLD=NEW, QP numbers up to 0xffffff",
	};
	struct roce_rw_rule r = { 0 };
	const char *eq, *to_s;
	char from_s[64];
	uint8_t ver_to = 0;

	if ((unsigned int)f >= ROCE_RW_NFIELDS || spec == NULL)
		return -EINVAL;
	if (rw->n[f] == ROCE_RW_MAX) {
		snprintf(err, errlen, "%s: at most %d rules", field_name[f], ROCE_RW_MAX);
		return -ENOSPC;
	}
	eq = strchr(spec, '=');
	if (eq == NULL && f == ROCE_RW_QPN)
		goto bad;
	r.any = eq == NULL;
	to_s = eq == NULL ? spec : eq + 1;
	if (parse_value(f, to_s, r.to, &ver_to) != 0)
		goto bad;
	r.ip_ver = ver_to;
	if (eq != NULL) {
		uint8_t ver_from = 0;

		if ((size_t)(eq - spec) >= sizeof(from_s))
			goto bad;
		memcpy(from_s, spec, (size_t)(eq - spec));
		from_s[eq - spec] = '\0';
		if (parse_value(f, from_s, r.from, &ver_from) != 0)
			goto bad;
		if (ver_from != ver_to) {
			snprintf(err, errlen, "%s '%s': OLD and NEW are not of one IP version",
				 field_name[f], spec);
			return -EINVAL;
		}
	}
	rw->rule[f][rw->n[f]++] = r;
	return 0;
bad:
	snprintf(err, errlen, "%s '%s': expected %s", field_name[f], spec, expect[f]);
	return -EINVAL;
}

bool roce_rewrite_touches_roce(const struct roce_rewrite *rw)
{
	return rw->n[ROCE_RW_SIP] || rw->n[ROCE_RW_DIP] || rw->n[ROCE_RW_QPN];
}

/* Apply the first matching rule of @p f to the @p len bytes at @p p; @return true if changed */
static bool apply(const struct roce_rewrite *rw, enum roce_rw_field f, uint8_t *p, size_t len,
		  uint8_t ip_ver)
{
	for (unsigned int i = 0; i < rw->n[f]; i++) {
		const struct roce_rw_rule *r = &rw->rule[f][i];

		if (r->ip_ver != ip_ver)
			continue;
		if (!r->any && memcmp(r->from, p, len) != 0)
			continue;
		if (memcmp(p, r->to, len) == 0)
			return false;
		memcpy(p, r->to, len);
		return true;
	}
	return false;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One's complement sum of @p len bytes (big-endian words), not folded. */
static uint32_t sum16(const uint8_t *p, uint32_t len, uint32_t sum)
{
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += rd16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The right IPv4 header checksum of @p ip (its checksum field counted as zero). */
static uint16_t ipv4_csum(const uint8_t *ip)
{
	uint32_t hl = (uint32_t)(ip[0] & 0xf) * 4;

	return (uint16_t)~fold(sum16(ip, 10, 0) + sum16(ip + 12, hl - 12, 0));
}

/*
 * The right UDP checksum of the datagram at @p udp (its checksum field counted as zero), with
 * the IPv4 or IPv6 pseudo-header; 0 becomes 0xffff (RFC 768).
 */
static uint16_t udp_csum(const uint8_t *ip, uint8_t ip_ver, const uint8_t *udp)
{
	uint32_t ulen = rd16(udp + 4), sum = 0;
	uint16_t c;

	if (ip_ver == 4)
		sum = sum16(ip + 12, 8, 0);
	else
		sum = sum16(ip + 8, 32, 0);
	sum += 17 + ulen;
	sum = sum16(udp, 6, sum);
	sum = sum16(udp + 8, ulen - 8, sum);
	c = (uint16_t)~fold(sum);
	return c == 0 ? 0xffff : c;
}

static uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

unsigned int roce_rewrite_frame(const struct roce_rewrite *rw, uint8_t *buf, uint32_t len)
{
	unsigned int did = 0;
	uint16_t ip_delta = 0, udp_old = 0, udp_delta = 0;
	uint32_t icrc_delta, end, ulen;
	struct roce_pkt pkt;
	uint8_t *ip, *udp;
	bool ip_csum_fixed = false;
	int rc;

	if (len >= 12) {
		if (apply(rw, ROCE_RW_DMAC, buf, 6, 0))
			did |= ROCE_RW_DID_MAC;
		if (apply(rw, ROCE_RW_SMAC, buf + 6, 6, 0))
			did |= ROCE_RW_DID_MAC;
	}
	if (!roce_rewrite_touches_roce(rw))
		return did;

	rc = roce_wire_parse(buf, len, ROCE_PARSE_NO_ICRC, &pkt);
	if (rc != 0 && pkt.err == ROCE_WERR_BAD_IP_CSUM) {
		/* parse again with the checksum made right; the fault is put back at the end */
		ip = buf + pkt.l3_off;
		ip_delta = rd16(ip + 10) ^ ipv4_csum(ip);
		wr16(ip + 10, ipv4_csum(ip));
		ip_csum_fixed = true;
		rc = roce_wire_parse(buf, len, ROCE_PARSE_NO_ICRC, &pkt);
	}
	if (rc != 0 || pkt.kind != ROCE_KIND_ROCEV2) {
		if (ip_csum_fixed)
			wr16(buf + pkt.l3_off + 10, (uint16_t)(rd16(buf + pkt.l3_off + 10) ^ ip_delta));
		return did | ROCE_RW_NOT_ROCE;
	}
	ip = buf + pkt.l3_off;
	udp = buf + pkt.l4_off;
	ulen = rd16(udp + 4);
	/* the ICRC ends the IP datagram, before any Ethernet pad */
	end = pkt.l3_off + (pkt.ip_ver == 4 ? rd16(ip + 2) : 40u + rd16(ip + 4));
	icrc_delta = rd32le(buf + end - ROCE_ICRC_LEN) ^ roce_icrc_calc(buf, &pkt, end - ROCE_ICRC_LEN);
	if (rd16(udp + 6) != 0 && ulen >= 8 && pkt.l4_off + ulen <= len) {
		udp_old = rd16(udp + 6);
		udp_delta = udp_old ^ udp_csum(ip, pkt.ip_ver, udp);
	}

	if (apply(rw, ROCE_RW_SIP, ip + (pkt.ip_ver == 4 ? 12 : 8), pkt.ip_ver == 4 ? 4 : 16,
		  pkt.ip_ver))
		did |= ROCE_RW_DID_IP;
	if (apply(rw, ROCE_RW_DIP, ip + (pkt.ip_ver == 4 ? 16 : 24), pkt.ip_ver == 4 ? 4 : 16,
		  pkt.ip_ver))
		did |= ROCE_RW_DID_IP;
	if (apply(rw, ROCE_RW_QPN, buf + pkt.bth_off + 5, 3, 0))
		did |= ROCE_RW_DID_QPN;

	if (pkt.ip_ver == 4 && (did & ROCE_RW_DID_IP))
		wr16(ip + 10, (uint16_t)(ipv4_csum(ip) ^ ip_delta));
	else if (ip_csum_fixed)
		wr16(ip + 10, (uint16_t)(rd16(ip + 10) ^ ip_delta));
	if (did & (ROCE_RW_DID_IP | ROCE_RW_DID_QPN)) {
		wr32le(buf + end - ROCE_ICRC_LEN,
		       roce_icrc_calc(buf, &pkt, end - ROCE_ICRC_LEN) ^ icrc_delta);
		did |= ROCE_RW_DID_ICRC;
		/* the UDP checksum covers the BTH and the ICRC: redo it last */
		if (udp_old != 0)
			wr16(udp + 6, (uint16_t)(udp_csum(ip, pkt.ip_ver, udp) ^ udp_delta));
	}
	if (icrc_delta != 0)
		did |= ROCE_RW_BAD_ICRC_KEPT;
	return did;
}
