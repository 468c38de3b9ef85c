/* Repair the IPv4 header checksum and the ICRC of an edited RoCE frame, in place. */
#include <errno.h>

#include "roce_wire.h"
#include "wire_private.h"

int roce_wire_fixup(uint8_t *buf, uint32_t len)
{
	struct roce_pkt pkt;
	uint32_t end, icrc;
	unsigned int changed = 0;
	uint16_t old_csum = 0;
	int rc;

	rc = roce_wire_parse(buf, len, ROCE_PARSE_NO_ICRC, &pkt);
	if (rc != 0 && pkt.err == ROCE_WERR_BAD_IP_CSUM) {
		/* The parser checked the header length, UDP port 4791 and the datagram's extent. */
		uint8_t *ip = buf + pkt.l3_off;
		old_csum = rd16(ip + 10);
		wr16(ip + 10, (uint16_t)~wire_ipv4_sum(ip, (ip[0] & 0xfu) * 4, true));
		changed |= ROCE_FIXUP_IP_CSUM;
		roce_wire_parse(buf, len, ROCE_PARSE_NO_ICRC, &pkt);
	}
	if ((pkt.kind != ROCE_KIND_ROCEV2 && pkt.kind != ROCE_KIND_ROCEV1) || pkt.bth_off == 0) {
		if (changed)	/* undo: a frame we cannot repair is left as it was */
			wr16(buf + pkt.l3_off + 10, old_csum);
		return -EINVAL;
	}
	/* The ICRC sits at the end of the IP datagram (or GRH payload), before any Ethernet pad. */
	if (pkt.kind == ROCE_KIND_ROCEV2 && pkt.ip_ver == 4)
		end = pkt.l3_off + rd16(buf + pkt.l3_off + 2);
	else
		end = pkt.l3_off + IPV6_HDR_LEN + rd16(buf + pkt.l3_off + 4);
	icrc = wire_icrc(buf, pkt.l3_off, pkt.bth_off, end - ROCE_ICRC_LEN, pkt.ip_ver == 4,
			 pkt.kind == ROCE_KIND_ROCEV2);
	if (rd32le(buf + end - ROCE_ICRC_LEN) != icrc) {
		wr32le(buf + end - ROCE_ICRC_LEN, icrc);
		changed |= ROCE_FIXUP_ICRC;
	}
	return (int)changed;
}
