/* Text forms of a parsed frame: addresses and the one-line summary used by dissect and demo. */
#include <arpa/inet.h>
#include <stdio.h>

#include "roce_wire.h"

char *roce_ip_ntop(const struct roce_ip_addr *addr, uint8_t ip_ver, char *out, size_t size)
{
	if (inet_ntop(ip_ver == 4 ? AF_INET : AF_INET6, addr->b, out, (socklen_t)size) == NULL)
		snprintf(out, size, "?");
	return out;
}

#define PUT ROCE_PUT

static size_t print_ext(char *out, size_t size, size_t len, const struct roce_pkt *pkt)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;

	if (mask & ROCE_F_DETH)
		PUT(" deth qkey 0x%08x srcqp 0x%06x", pkt->deth.qkey, pkt->deth.srcqp);
	if (mask & ROCE_F_FETH)
		PUT(" feth 0x%08x", pkt->feth);
	if (mask & ROCE_F_RETH)
		PUT(" reth va 0x%016llx rkey 0x%08x dmalen %u", (unsigned long long)pkt->reth.va,
		    pkt->reth.rkey, pkt->reth.dmalen);
	if (mask & ROCE_F_ATMETH)
		PUT(" atomiceth va 0x%016llx rkey 0x%08x swap 0x%llx cmp 0x%llx",
		    (unsigned long long)pkt->atmeth.va, pkt->atmeth.rkey,
		    (unsigned long long)pkt->atmeth.swap, (unsigned long long)pkt->atmeth.cmp);
	if (mask & ROCE_F_AETH) {
		PUT(" aeth %s", roce_aeth_name(pkt->aeth.syndrome));
		if (roce_aeth_kind(pkt->aeth.syndrome) == ROCE_AETH_RNR_NAK)
			PUT(" timer %u", pkt->aeth.syndrome & 0x1f);
		PUT(" msn %u", pkt->aeth.msn);
	}
	if (mask & ROCE_F_ATMACK)
		PUT(" orig 0x%llx", (unsigned long long)pkt->atmack_orig);
	if (mask & ROCE_F_IMMDT)
		PUT(" imm 0x%08x", pkt->immdt);
	if (mask & ROCE_F_IETH)
		PUT(" ieth rkey 0x%08x", pkt->ieth_rkey);
	return len;
}

int roce_pkt_snprint(char *out, size_t size, const struct roce_pkt *pkt)
{
	char src[64], dst[64];
	size_t len = 0;

	if (size > 0)
		out[0] = '\0';
	if (pkt->kind == ROCE_KIND_PFC) {
		PUT("PFC cev 0x%02x quanta", pkt->pfc_cev);
		for (int i = 0; i < 8; i++)
			PUT("%c%u", i == 0 ? ' ' : ',', pkt->quanta[i]);
		return (int)len;
	}
	if (pkt->kind == ROCE_KIND_PAUSE) {
		PUT("PAUSE quanta %u", pkt->quanta[0]);
		return (int)len;
	}
	if (pkt->kind == ROCE_KIND_OTHER) {
		if (pkt->ip_ver != 0)
			PUT("IPv%u %s > %s, not RoCE", pkt->ip_ver,
			    roce_ip_ntop(&pkt->src, pkt->ip_ver, src, sizeof(src)),
			    roce_ip_ntop(&pkt->dst, pkt->ip_ver, dst, sizeof(dst)));
		else
			PUT("ethertype 0x%04x, not RoCE", pkt->ethertype);
		if (pkt->err != ROCE_WERR_OK && pkt->err != ROCE_WERR_NOT_ROCE)
			PUT(" [%s]", roce_wire_strerror(pkt->err));
		return (int)len;
	}
	for (int i = 0; i < pkt->nvlan; i++)
		PUT("vlan %u pcp %u, ", pkt->vlan[i].vid, pkt->vlan[i].pcp);
	roce_ip_ntop(&pkt->src, pkt->ip_ver, src, sizeof(src));
	roce_ip_ntop(&pkt->dst, pkt->ip_ver, dst, sizeof(dst));
	if (pkt->kind == ROCE_KIND_ROCEV2)
		PUT("%s.%u > %s.%u", src, pkt->sport, dst, pkt->dport);
	else
		PUT("RoCEv1 %s > %s", src, dst);
	if (pkt->ecn != 0)
		PUT(" ecn %s", pkt->ecn == 3 ? "CE" : pkt->ecn == 2 ? "ECT0" : "ECT1");
	if (pkt->bth_off == 0) {	/* stopped before the BTH */
		PUT(" [%s]", roce_wire_strerror(pkt->err));
		return (int)len;
	}
	if (roce_opcode[pkt->opcode].name != NULL)
		PUT(" %s", roce_opcode[pkt->opcode].name);
	else
		PUT(" opcode 0x%02x", pkt->opcode);
	PUT(" qp 0x%06x psn %u", pkt->dqpn, pkt->psn);
	if (pkt->ackreq)
		PUT(" ackreq");
	if (pkt->se)
		PUT(" se");
	if (pkt->becn)
		PUT(" becn");
	len = print_ext(out, size, len, pkt);
	if (roce_opcode[pkt->opcode].mask & ROCE_F_PAYLOAD || pkt->payload_len != 0)
		PUT(" len %u", pkt->payload_len);
	if (pkt->err == ROCE_WERR_ICRC_MISMATCH)
		PUT(" icrc BAD (expected 0x%08x)", pkt->icrc_calc);
	else if (pkt->err != ROCE_WERR_OK)
		PUT(" [%s]", roce_wire_strerror(pkt->err));
	else if (pkt->icrc_ok)
		PUT(" icrc ok");
	return (int)len;
}
