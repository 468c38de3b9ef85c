/* What `rocelab dissect` prints for one frame: the jsonl contract and the verbose listing. */
#include <stdio.h>
#include <time.h>

#include "roce_io.h"
#include "roce_wire.h"

#define PUT ROCE_PUT

typedef unsigned long long ull;

/* Which parts of a frame roce_wire_parse() got through, from its kind, err and offsets. */
struct decoded {
	bool udp;		/* UDP ports are valid */
	bool bth;		/* BTH fields are valid */
	bool ext;		/* extended headers are valid */
	bool payload;		/* payload_len is valid */
	bool icrc_checked;	/* icrc_ok is meaningful */
};

static struct decoded what_decoded(const struct roce_pkt *pkt)
{
	struct decoded d = { false, false, false, false, false };
	bool roce = pkt->kind == ROCE_KIND_ROCEV2 || pkt->kind == ROCE_KIND_ROCEV1;

	d.udp = pkt->kind == ROCE_KIND_ROCEV2;
	if (!roce || pkt->bth_off == 0)
		return d;
	/* parse_transport() clears bth_off when the BTH is not whole; BAD_UDP_LEN stops before it */
	d.bth = pkt->err != ROCE_WERR_BAD_UDP_LEN;
	if (!d.bth)
		return d;
	d.ext = pkt->err != ROCE_WERR_UNKNOWN_OPCODE && pkt->err != ROCE_WERR_BAD_TVER &&
		pkt->err != ROCE_WERR_TRUNCATED;
	d.payload = d.ext && pkt->err != ROCE_WERR_BAD_PAD;
	d.icrc_checked = pkt->err == ROCE_WERR_ICRC_MISMATCH ||
			 (pkt->err == ROCE_WERR_OK && (pkt->icrc_ok || pkt->icrc_calc != 0));
	return d;
}

static void mac_str(const uint8_t *m, char *out)
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

int roce_dissect_jsonl(char *out, size_t size, const struct roce_pcap_frame *f,
		       const struct roce_pkt *pkt)
{
	struct decoded d = what_decoded(pkt);
	const struct roce_opcode_info *info = &roce_opcode[pkt->opcode];
	char src[64], dst[64];
	size_t len = 0;

	if (size > 0)
		out[0] = '\0';
	PUT("{\"n\":%llu,\"ts_ns\":%llu,\"len\":%u,\"kind\":\"%s\"", (ull)f->n, (ull)f->ts_ns,
	    f->wirelen, roce_kind_name(pkt->kind));
	if (pkt->nvlan > 0) {
		PUT(",\"vlan\":[");
		for (int i = 0; i < pkt->nvlan; i++)
			PUT("%s{\"pcp\":%u,\"vid\":%u}", i ? "," : "", pkt->vlan[i].pcp,
			    pkt->vlan[i].vid);
		PUT("]");
	}
	if (pkt->ip_ver != 0) {
		roce_ip_ntop(&pkt->src, pkt->ip_ver, src, sizeof(src));
		roce_ip_ntop(&pkt->dst, pkt->ip_ver, dst, sizeof(dst));
		PUT(",\"ip\":{\"ver\":%u,\"src\":\"%s\",\"dst\":\"%s\",\"dscp\":%u,\"ecn\":%u,\"ttl\":%u}",
		    pkt->ip_ver, src, dst, pkt->dscp, pkt->ecn, pkt->ttl);
	}
	if (d.udp)
		PUT(",\"udp\":{\"sport\":%u,\"dport\":%u}", pkt->sport, pkt->dport);
	if (d.bth) {
		PUT(",\"bth\":{\"opcode\":%u", pkt->opcode);
		if (info->name != NULL)
			PUT(",\"op\":\"%s\"", info->name);
		PUT(",\"se\":%u,\"m\":%u,\"pad\":%u,\"tver\":%u,\"pkey\":%u,\"fecn\":%u,\"becn\":%u,"
		    "\"dqpn\":%u,\"ackreq\":%u,\"psn\":%u}",
		    pkt->se, pkt->mig, pkt->pad, pkt->tver, pkt->pkey, pkt->fecn, pkt->becn,
		    pkt->dqpn, pkt->ackreq, pkt->psn);
	}
	if (d.ext) {
		if (info->mask & ROCE_F_RETH)
			PUT(",\"reth\":{\"va\":%llu,\"rkey\":%u,\"dmalen\":%u}", (ull)pkt->reth.va,
			    pkt->reth.rkey, pkt->reth.dmalen);
		if (info->mask & ROCE_F_AETH)
			PUT(",\"aeth\":{\"syndrome\":%u,\"msn\":%u}", pkt->aeth.syndrome,
			    pkt->aeth.msn);
		if (info->mask & ROCE_F_ATMETH)
			PUT(",\"atomiceth\":{\"va\":%llu,\"rkey\":%u,\"swap\":%llu,\"cmp\":%llu}",
			    (ull)pkt->atmeth.va, pkt->atmeth.rkey, (ull)pkt->atmeth.swap,
			    (ull)pkt->atmeth.cmp);
		if (info->mask & ROCE_F_ATMACK)
			PUT(",\"atomicacketh\":{\"orig\":%llu}", (ull)pkt->atmack_orig);
		if (info->mask & ROCE_F_IMMDT)
			PUT(",\"immdt\":%u", pkt->immdt);
		if (info->mask & ROCE_F_IETH)
			PUT(",\"ieth\":%u", pkt->ieth_rkey);
		if (info->mask & ROCE_F_DETH)
			PUT(",\"deth\":{\"qkey\":%u,\"srcqp\":%u}", pkt->deth.qkey, pkt->deth.srcqp);
	}
	if (d.payload)
		PUT(",\"payload_len\":%u", pkt->payload_len);
	if (d.bth)
		PUT(",\"icrc\":%u", pkt->icrc);
	if (d.icrc_checked)
		PUT(",\"icrc_ok\":%s", pkt->icrc_ok ? "true" : "false");
	if (pkt->kind == ROCE_KIND_PFC && pkt->err == ROCE_WERR_OK) {
		PUT(",\"pfc\":{\"cev\":%u,\"quanta\":[", pkt->pfc_cev);
		for (int i = 0; i < 8; i++)
			PUT("%s%u", i ? "," : "", pkt->quanta[i]);
		PUT("]}");
	}
	if (pkt->kind == ROCE_KIND_PAUSE && pkt->err == ROCE_WERR_OK)
		PUT(",\"pause\":{\"quanta\":%u}", pkt->quanta[0]);
	/* a frame that is simply not RoCE is not a fault */
	if (pkt->err != ROCE_WERR_OK && pkt->err != ROCE_WERR_NOT_ROCE)
		PUT(",\"error\":\"%s\"", roce_wire_strerror(pkt->err));
	PUT("}\n");
	return (int)len;
}

char *roce_dissect_time(uint64_t ts_ns, char *out, size_t size)
{
	uint64_t s = ts_ns / 1000000000ull;

	snprintf(out, size, "%02u:%02u:%02u.%09u", (unsigned int)(s / 3600 % 24),
		 (unsigned int)(s / 60 % 60), (unsigned int)(s % 60),
		 (unsigned int)(ts_ns % 1000000000ull));
	return out;
}

static const char *const ecn_name[4] = { "Not-ECT", "ECT(1)", "ECT(0)", "CE" };

static size_t verbose_ext(char *out, size_t size, size_t len, const struct roce_pkt *pkt)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;

	if (mask & ROCE_F_DETH)
		PUT("  deth: qkey 0x%08x srcqp 0x%06x\n", pkt->deth.qkey, pkt->deth.srcqp);
	if (mask & ROCE_F_FETH)
		PUT("  feth: 0x%08x\n", pkt->feth);
	if (mask & ROCE_F_RETH)
		PUT("  reth: va 0x%016llx rkey 0x%08x dmalen %u\n", (ull)pkt->reth.va,
		    pkt->reth.rkey, pkt->reth.dmalen);
	if (mask & ROCE_F_ATMETH)
		PUT("  atomiceth: va 0x%016llx rkey 0x%08x swap/add 0x%016llx cmp 0x%016llx\n",
		    (ull)pkt->atmeth.va, pkt->atmeth.rkey, (ull)pkt->atmeth.swap,
		    (ull)pkt->atmeth.cmp);
	if (mask & ROCE_F_AETH) {
		PUT("  aeth: syndrome 0x%02x (%s", pkt->aeth.syndrome,
		    roce_aeth_name(pkt->aeth.syndrome));
		if (roce_aeth_kind(pkt->aeth.syndrome) == ROCE_AETH_RNR_NAK)
			PUT(", timer %u = %llu ns", pkt->aeth.syndrome & 0x1f,
			    (ull)roce_rnr_timer_ns(pkt->aeth.syndrome & 0x1f));
		else if (roce_aeth_kind(pkt->aeth.syndrome) == ROCE_AETH_ACK)
			PUT(", credits %u", pkt->aeth.syndrome & 0x1f);
		PUT(") msn %u\n", pkt->aeth.msn);
	}
	if (mask & ROCE_F_ATMACK)
		PUT("  atomicacketh: orig 0x%016llx\n", (ull)pkt->atmack_orig);
	if (mask & ROCE_F_IMMDT)
		PUT("  immdt: 0x%08x\n", pkt->immdt);
	if (mask & ROCE_F_IETH)
		PUT("  ieth: rkey 0x%08x\n", pkt->ieth_rkey);
	return len;
}

int roce_dissect_verbose(char *out, size_t size, const struct roce_pcap_frame *f,
			 const struct roce_pkt *pkt)
{
	struct decoded d = what_decoded(pkt);
	const struct roce_opcode_info *info = &roce_opcode[pkt->opcode];
	char a[64], b[64], t[32];
	size_t len = 0;

	if (size > 0)
		out[0] = '\0';
	PUT("frame %llu: %s (%llu.%09llu) %u bytes on wire, %u captured, %s\n", (ull)f->n,
	    roce_dissect_time(f->ts_ns, t, sizeof(t)), (ull)(f->ts_ns / 1000000000ull),
	    (ull)(f->ts_ns % 1000000000ull), f->wirelen, f->caplen, roce_kind_name(pkt->kind));
	if (pkt->len >= 14) {
		mac_str(pkt->dmac, a);
		mac_str(pkt->smac, b);
		PUT("  eth: dst %s src %s type 0x%04x\n", a, b, pkt->ethertype);
	}
	for (int i = 0; i < pkt->nvlan; i++)
		PUT("  vlan[%d]: tpid 0x%04x pcp %u dei %u vid %u\n", i, pkt->vlan[i].tpid,
		    pkt->vlan[i].pcp, pkt->vlan[i].dei, pkt->vlan[i].vid);
	if (pkt->ip_ver != 0) {
		roce_ip_ntop(&pkt->src, pkt->ip_ver, a, sizeof(a));
		roce_ip_ntop(&pkt->dst, pkt->ip_ver, b, sizeof(b));
		if (pkt->kind == ROCE_KIND_ROCEV1)
			PUT("  grh: sgid %s dgid %s tclass 0x%02x (dscp %u ecn %s) flow 0x%05x hoplimit %u\n",
			    a, b, pkt->dscp << 2 | pkt->ecn, pkt->dscp, ecn_name[pkt->ecn & 3],
			    pkt->flow_label, pkt->ttl);
		else if (pkt->ip_ver == 4)
			PUT("  ipv4: src %s dst %s dscp %u ecn %s ttl %u id 0x%04x df %u csum 0x%04x\n",
			    a, b, pkt->dscp, ecn_name[pkt->ecn & 3], pkt->ttl, pkt->ip_id, pkt->ip_df,
			    pkt->ip_csum);
		else
			PUT("  ipv6: src %s dst %s dscp %u ecn %s hlim %u flow 0x%05x\n", a, b,
			    pkt->dscp, ecn_name[pkt->ecn & 3], pkt->ttl, pkt->flow_label);
	}
	if (d.udp)
		PUT("  udp: sport %u dport %u csum 0x%04x\n", pkt->sport, pkt->dport, pkt->udp_csum);
	if (d.bth) {
		PUT("  bth: opcode 0x%02x (%s) se %u m %u pad %u tver %u pkey 0x%04x fecn %u becn %u "
		    "resv6 0x%02x dqpn 0x%06x ackreq %u resv7 0x%02x psn %u\n",
		    pkt->opcode, info->name != NULL ? info->name : "unknown", pkt->se, pkt->mig,
		    pkt->pad, pkt->tver, pkt->pkey, pkt->fecn, pkt->becn, pkt->resv6, pkt->dqpn,
		    pkt->ackreq, pkt->resv7, pkt->psn);
	}
	if (d.ext)
		len = verbose_ext(out, size, len, pkt);
	if (d.payload)
		PUT("  payload: %u bytes at offset %u, pad %u\n", pkt->payload_len, pkt->payload_off,
		    pkt->pad);
	if (d.bth) {
		if (d.icrc_checked && pkt->icrc_ok)
			PUT("  icrc: 0x%08x ok\n", pkt->icrc);
		else if (d.icrc_checked)
			PUT("  icrc: 0x%08x BAD (expected 0x%08x)\n", pkt->icrc, pkt->icrc_calc);
		else
			PUT("  icrc: 0x%08x (not checked)\n", pkt->icrc);
	}
	if (pkt->kind == ROCE_KIND_PFC && pkt->err == ROCE_WERR_OK) {
		PUT("  pfc: cev 0x%04x", pkt->pfc_cev);
		for (int i = 0; i < 8; i++)
			PUT(" p%d %s%u", i, pkt->pfc_cev & (1u << i) ? "" : "(off) ", pkt->quanta[i]);
		PUT("\n");
	}
	if (pkt->kind == ROCE_KIND_PAUSE && pkt->err == ROCE_WERR_OK)
		PUT("  pause: quanta %u\n", pkt->quanta[0]);
	if (pkt->err != ROCE_WERR_OK && pkt->err != ROCE_WERR_NOT_ROCE)
		PUT("  error: %s\n", roce_wire_strerror(pkt->err));
	return (int)len;
}
