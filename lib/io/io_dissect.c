/* What `rocelab dissect` prints for one frame: the one-line form, the jsonl contract, the verbose listing. */
#include <stdio.h>

#include "roce_fmt.h"
#include "roce_io.h"
#include "roce_wire.h"

/* Which parts of a frame roce_wire_parse() got through, from its kind, err and offsets. */
struct decoded {
	bool udp;		/* UDP ports are valid */
	bool bth;		/* BTH fields are valid */
	bool ext;		/* extended headers are valid */
	bool payload;		/* payload_len is valid */
	bool icrc;		/* the ICRC's bytes were captured */
	bool icrc_checked;	/* icrc_ok is meaningful */
};

static struct decoded what_decoded(const struct roce_pkt *pkt)
{
	struct decoded d = { false, false, false, false, false, false };
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
	d.icrc = !pkt->truncated;
	d.icrc_checked = pkt->err == ROCE_WERR_ICRC_MISMATCH ||
			 (pkt->err == ROCE_WERR_OK && (pkt->icrc_ok || pkt->icrc_calc != 0));
	return d;
}

/* "HH:MM:SS.nnnnnnnnn", the UTC time of day: every frame has one, so its digits go in pairs. */
static void fmt_time(struct roce_fmt *f, uint64_t ts_ns)
{
	uint32_t s = (uint32_t)(ts_ns / 1000000000ull % 86400);
	uint32_t ns = (uint32_t)(ts_ns % 1000000000ull);
	char *p = roce_fmt_reserve(f, 18);

	memcpy(p, roce_fmt_digits2 + 2 * (s / 3600), 2);
	p[2] = ':';
	memcpy(p + 3, roce_fmt_digits2 + 2 * (s / 60 % 60), 2);
	p[5] = ':';
	memcpy(p + 6, roce_fmt_digits2 + 2 * (s % 60), 2);
	p[8] = '.';
	p[9] = (char)('0' + ns / 100000000);
	for (int i = 4; i > 0; i--, ns /= 100)
		memcpy(p + 8 + 2 * i, roce_fmt_digits2 + 2 * (ns % 100), 2);
	roce_fmt_commit(f, p, 18);
}

int roce_dissect_line(char *out, size_t size, const struct roce_pcap_frame *f,
		      const struct roce_pkt *pkt)
{
	struct roce_fmt c;

	roce_fmt_init(&c, out, size);
	roce_fmt_dec_width(&c, f->n, 6, ' ');
	roce_fmt_char(&c, ' ');
	fmt_time(&c, f->ts_ns);
	roce_fmt_char(&c, ' ');
	roce_fmt_pkt(&c, pkt);
	roce_fmt_char(&c, '\n');
	return roce_fmt_end(&c);
}

/* ,"ip":{"ver":4,"src":"10.0.0.1","dst":"10.0.0.2","dscp":0,"ecn":3,"ttl":64} */
static void jsonl_ip(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	roce_fmt_label_dec(c, ",\"ip\":{\"ver\":", pkt->ip_ver);
	roce_fmt_str(c, ",\"src\":\"");
	roce_fmt_ip(c, &pkt->src, pkt->ip_ver);
	roce_fmt_str(c, "\",\"dst\":\"");
	roce_fmt_ip(c, &pkt->dst, pkt->ip_ver);
	roce_fmt_label_dec(c, "\",\"dscp\":", pkt->dscp);
	roce_fmt_label_dec(c, ",\"ecn\":", pkt->ecn);
	roce_fmt_label_dec(c, ",\"ttl\":", pkt->ttl);
	roce_fmt_char(c, '}');
}

static void jsonl_bth(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	const char *name = roce_opcode[pkt->opcode].name;

	roce_fmt_label_dec(c, ",\"bth\":{\"opcode\":", pkt->opcode);
	if (name != NULL) {
		roce_fmt_label_str(c, ",\"op\":\"", name);
		roce_fmt_char(c, '"');
	}
	roce_fmt_label_dec(c, ",\"se\":", pkt->se);
	roce_fmt_label_dec(c, ",\"m\":", pkt->mig);
	roce_fmt_label_dec(c, ",\"pad\":", pkt->pad);
	roce_fmt_label_dec(c, ",\"tver\":", pkt->tver);
	roce_fmt_label_dec(c, ",\"pkey\":", pkt->pkey);
	roce_fmt_label_dec(c, ",\"fecn\":", pkt->fecn);
	roce_fmt_label_dec(c, ",\"becn\":", pkt->becn);
	roce_fmt_label_dec(c, ",\"dqpn\":", pkt->dqpn);
	roce_fmt_label_dec(c, ",\"ackreq\":", pkt->ackreq);
	roce_fmt_label_dec(c, ",\"psn\":", pkt->psn);
	roce_fmt_char(c, '}');
}

/* The extended headers, in the contract's order (not wire order). */
static void jsonl_ext(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;

	if (mask & ROCE_F_RETH) {
		roce_fmt_label_dec(c, ",\"reth\":{\"va\":", pkt->reth.va);
		roce_fmt_label_dec(c, ",\"rkey\":", pkt->reth.rkey);
		roce_fmt_label_dec(c, ",\"dmalen\":", pkt->reth.dmalen);
		roce_fmt_char(c, '}');
	}
	if (mask & ROCE_F_AETH) {
		roce_fmt_label_dec(c, ",\"aeth\":{\"syndrome\":", pkt->aeth.syndrome);
		roce_fmt_label_dec(c, ",\"msn\":", pkt->aeth.msn);
		roce_fmt_char(c, '}');
	}
	if (mask & ROCE_F_ATMETH) {
		roce_fmt_label_dec(c, ",\"atomiceth\":{\"va\":", pkt->atmeth.va);
		roce_fmt_label_dec(c, ",\"rkey\":", pkt->atmeth.rkey);
		roce_fmt_label_dec(c, ",\"swap\":", pkt->atmeth.swap);
		roce_fmt_label_dec(c, ",\"cmp\":", pkt->atmeth.cmp);
		roce_fmt_char(c, '}');
	}
	if (mask & ROCE_F_ATMACK) {
		roce_fmt_label_dec(c, ",\"atomicacketh\":{\"orig\":", pkt->atmack_orig);
		roce_fmt_char(c, '}');
	}
	if (mask & ROCE_F_IMMDT)
		roce_fmt_label_dec(c, ",\"immdt\":", pkt->immdt);
	if (mask & ROCE_F_IETH)
		roce_fmt_label_dec(c, ",\"ieth\":", pkt->ieth_rkey);
	if (mask & ROCE_F_DETH) {
		roce_fmt_label_dec(c, ",\"deth\":{\"qkey\":", pkt->deth.qkey);
		roce_fmt_label_dec(c, ",\"srcqp\":", pkt->deth.srcqp);
		roce_fmt_char(c, '}');
	}
	if (mask & ROCE_F_RDETH) {
		roce_fmt_label_dec(c, ",\"rdeth\":{\"eecnxt\":", pkt->rdeth_eecnxt);
		roce_fmt_char(c, '}');
	}
	if (mask & ROCE_F_XRCETH) {
		roce_fmt_label_dec(c, ",\"xrceth\":{\"srq\":", pkt->xrc_srqn);
		roce_fmt_char(c, '}');
	}
}

int roce_dissect_jsonl(char *out, size_t size, const struct roce_pcap_frame *f,
		       const struct roce_pkt *pkt)
{
	struct decoded d = what_decoded(pkt);
	struct roce_fmt c;

	roce_fmt_init(&c, out, size);
	roce_fmt_label_dec(&c, "{\"n\":", f->n);
	roce_fmt_label_dec(&c, ",\"ts_ns\":", f->ts_ns);
	roce_fmt_label_dec(&c, ",\"len\":", f->wirelen);
	roce_fmt_label_str(&c, ",\"kind\":\"", roce_kind_name(pkt->kind));
	roce_fmt_char(&c, '"');
	if (pkt->nvlan > 0) {
		roce_fmt_str(&c, ",\"vlan\":[");
		for (int i = 0; i < pkt->nvlan; i++) {
			roce_fmt_label_dec(&c, i ? ",{\"pcp\":" : "{\"pcp\":", pkt->vlan[i].pcp);
			roce_fmt_label_dec(&c, ",\"vid\":", pkt->vlan[i].vid);
			roce_fmt_char(&c, '}');
		}
		roce_fmt_char(&c, ']');
	}
	if (pkt->ip_ver != 0)
		jsonl_ip(&c, pkt);
	if (d.udp) {
		roce_fmt_label_dec(&c, ",\"udp\":{\"sport\":", pkt->sport);
		roce_fmt_label_dec(&c, ",\"dport\":", pkt->dport);
		roce_fmt_char(&c, '}');
	}
	if (d.bth)
		jsonl_bth(&c, pkt);
	if (d.ext)
		jsonl_ext(&c, pkt);
	if (d.payload)
		roce_fmt_label_dec(&c, ",\"payload_len\":", pkt->payload_len);
	/* the stored bytes in wire order: the number tshark and scapy show */
	if (d.bth && d.icrc)
		roce_fmt_label_dec(&c, ",\"icrc\":", rte_bswap32(pkt->icrc));
	if (d.icrc_checked)
		roce_fmt_label_str(&c, ",\"icrc_ok\":", pkt->icrc_ok ? "true" : "false");
	if (pkt->truncated)
		roce_fmt_str(&c, ",\"truncated\":true");
	if (pkt->kind == ROCE_KIND_PFC && pkt->err == ROCE_WERR_OK) {
		roce_fmt_label_dec(&c, ",\"pfc\":{\"cev\":", pkt->pfc_cev);
		roce_fmt_str(&c, ",\"quanta\":[");
		for (int i = 0; i < 8; i++)
			roce_fmt_label_dec(&c, i ? "," : "", pkt->quanta[i]);
		roce_fmt_str(&c, "]}");
	}
	if (pkt->kind == ROCE_KIND_PAUSE && pkt->err == ROCE_WERR_OK) {
		roce_fmt_label_dec(&c, ",\"pause\":{\"quanta\":", pkt->quanta[0]);
		roce_fmt_char(&c, '}');
	}
	/* a frame that is simply not RoCE is not a fault */
	if (pkt->err != ROCE_WERR_OK && pkt->err != ROCE_WERR_NOT_ROCE) {
		roce_fmt_label_str(&c, ",\"error\":\"", roce_wire_strerror(pkt->err));
		roce_fmt_char(&c, '"');
	}
	roce_fmt_str(&c, "}\n");
	return roce_fmt_end(&c);
}

char *roce_dissect_time(uint64_t ts_ns, char *out, size_t size)
{
	struct roce_fmt c;

	roce_fmt_init(&c, out, size);
	fmt_time(&c, ts_ns);
	roce_fmt_end(&c);
	return out;
}

static const char *const ecn_name[4] = { "Not-ECT", "ECT(1)", "ECT(0)", "CE" };

static void verbose_ext(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;
	uint8_t syn = pkt->aeth.syndrome;

	if (mask & ROCE_F_RDETH) {
		roce_fmt_label_hex(c, "  rdeth: eecnxt 0x", pkt->rdeth_eecnxt, 6);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_DETH) {
		roce_fmt_label_hex(c, "  deth: qkey 0x", pkt->deth.qkey, 8);
		roce_fmt_label_hex(c, " srcqp 0x", pkt->deth.srcqp, 6);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_XRCETH) {
		roce_fmt_label_hex(c, "  xrceth: srq 0x", pkt->xrc_srqn, 6);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_FETH) {
		roce_fmt_label_hex(c, "  feth: 0x", pkt->feth, 8);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_RETH) {
		roce_fmt_label_hex(c, "  reth: va 0x", pkt->reth.va, 16);
		roce_fmt_label_hex(c, " rkey 0x", pkt->reth.rkey, 8);
		roce_fmt_label_dec(c, " dmalen ", pkt->reth.dmalen);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_ATMETH) {
		roce_fmt_label_hex(c, "  atomiceth: va 0x", pkt->atmeth.va, 16);
		roce_fmt_label_hex(c, " rkey 0x", pkt->atmeth.rkey, 8);
		roce_fmt_label_hex(c, " swap/add 0x", pkt->atmeth.swap, 16);
		roce_fmt_label_hex(c, " cmp 0x", pkt->atmeth.cmp, 16);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_AETH) {
		roce_fmt_label_hex(c, "  aeth: syndrome 0x", syn, 2);
		roce_fmt_label_str(c, " (", roce_aeth_name(syn));
		if (roce_aeth_kind(syn) == ROCE_AETH_RNR_NAK) {
			roce_fmt_label_dec(c, ", timer ", syn & 0x1f);
			roce_fmt_label_dec(c, " = ", roce_rnr_timer_ns(syn & 0x1f));
			roce_fmt_str(c, " ns");
		} else if (roce_aeth_kind(syn) == ROCE_AETH_ACK) {
			roce_fmt_label_dec(c, ", credits ", syn & 0x1f);
		}
		roce_fmt_label_dec(c, ") msn ", pkt->aeth.msn);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_ATMACK) {
		roce_fmt_label_hex(c, "  atomicacketh: orig 0x", pkt->atmack_orig, 16);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_IMMDT) {
		roce_fmt_label_hex(c, "  immdt: 0x", pkt->immdt, 8);
		roce_fmt_char(c, '\n');
	}
	if (mask & ROCE_F_IETH) {
		roce_fmt_label_hex(c, "  ieth: rkey 0x", pkt->ieth_rkey, 8);
		roce_fmt_char(c, '\n');
	}
}

/* "  ipv4: ...", "  ipv6: ..." or "  grh: ..." */
static void verbose_l3(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	const char *ecn = ecn_name[pkt->ecn & 3];

	if (pkt->kind == ROCE_KIND_ROCEV1) {
		roce_fmt_str(c, "  grh: sgid ");
		roce_fmt_ip(c, &pkt->src, pkt->ip_ver);
		roce_fmt_str(c, " dgid ");
		roce_fmt_ip(c, &pkt->dst, pkt->ip_ver);
		roce_fmt_label_hex(c, " tclass 0x", (unsigned int)(pkt->dscp << 2 | pkt->ecn), 2);
		roce_fmt_label_dec(c, " (dscp ", pkt->dscp);
		roce_fmt_label_str(c, " ecn ", ecn);
		roce_fmt_label_hex(c, ") flow 0x", pkt->flow_label, 5);
		roce_fmt_label_dec(c, " hoplimit ", pkt->ttl);
	} else if (pkt->ip_ver == 4) {
		roce_fmt_str(c, "  ipv4: src ");
		roce_fmt_ip(c, &pkt->src, pkt->ip_ver);
		roce_fmt_str(c, " dst ");
		roce_fmt_ip(c, &pkt->dst, pkt->ip_ver);
		roce_fmt_label_dec(c, " dscp ", pkt->dscp);
		roce_fmt_label_str(c, " ecn ", ecn);
		roce_fmt_label_dec(c, " ttl ", pkt->ttl);
		roce_fmt_label_hex(c, " id 0x", pkt->ip_id, 4);
		roce_fmt_label_dec(c, " df ", pkt->ip_df);
		roce_fmt_label_hex(c, " csum 0x", pkt->ip_csum, 4);
	} else {
		roce_fmt_str(c, "  ipv6: src ");
		roce_fmt_ip(c, &pkt->src, pkt->ip_ver);
		roce_fmt_str(c, " dst ");
		roce_fmt_ip(c, &pkt->dst, pkt->ip_ver);
		roce_fmt_label_dec(c, " dscp ", pkt->dscp);
		roce_fmt_label_str(c, " ecn ", ecn);
		roce_fmt_label_dec(c, " hlim ", pkt->ttl);
		roce_fmt_label_hex(c, " flow 0x", pkt->flow_label, 5);
		if (roce_pkt_ipv6_ext(pkt))
			roce_fmt_label_dec(c, " ext ", pkt->l4_off - pkt->l3_off - 40u);
	}
	roce_fmt_char(c, '\n');
}

static void verbose_bth(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	const char *name = roce_opcode[pkt->opcode].name;

	roce_fmt_label_hex(c, "  bth: opcode 0x", pkt->opcode, 2);
	roce_fmt_label_str(c, " (", name != NULL ? name : "unknown");
	roce_fmt_label_dec(c, ") se ", pkt->se);
	roce_fmt_label_dec(c, " m ", pkt->mig);
	roce_fmt_label_dec(c, " pad ", pkt->pad);
	roce_fmt_label_dec(c, " tver ", pkt->tver);
	roce_fmt_label_hex(c, " pkey 0x", pkt->pkey, 4);
	roce_fmt_label_dec(c, " fecn ", pkt->fecn);
	roce_fmt_label_dec(c, " becn ", pkt->becn);
	roce_fmt_label_hex(c, " resv6 0x", pkt->resv6, 2);
	roce_fmt_label_hex(c, " dqpn 0x", pkt->dqpn, 6);
	roce_fmt_label_dec(c, " ackreq ", pkt->ackreq);
	roce_fmt_label_hex(c, " resv7 0x", pkt->resv7, 2);
	roce_fmt_label_dec(c, " psn ", pkt->psn);
	roce_fmt_char(c, '\n');
}

int roce_dissect_verbose(char *out, size_t size, const struct roce_pcap_frame *f,
			 const struct roce_pkt *pkt)
{
	struct decoded d = what_decoded(pkt);
	struct roce_fmt c;

	roce_fmt_init(&c, out, size);
	roce_fmt_label_dec(&c, "frame ", f->n);
	roce_fmt_str(&c, ": ");
	fmt_time(&c, f->ts_ns);
	roce_fmt_label_dec(&c, " (", f->ts_ns / 1000000000ull);
	roce_fmt_char(&c, '.');
	roce_fmt_dec_width(&c, f->ts_ns % 1000000000ull, 9, '0');
	roce_fmt_label_dec(&c, ") ", f->wirelen);
	roce_fmt_label_dec(&c, " bytes on wire, ", f->caplen);
	roce_fmt_label_str(&c, " captured, ", roce_kind_name(pkt->kind));
	roce_fmt_char(&c, '\n');
	if (pkt->len >= 14) {
		roce_fmt_str(&c, "  eth: dst ");
		roce_fmt_mac(&c, pkt->dmac);
		roce_fmt_str(&c, " src ");
		roce_fmt_mac(&c, pkt->smac);
		roce_fmt_label_hex(&c, " type 0x", pkt->ethertype, 4);
		roce_fmt_char(&c, '\n');
	}
	for (int i = 0; i < pkt->nvlan; i++) {
		roce_fmt_label_dec(&c, "  vlan[", (unsigned int)i);
		roce_fmt_label_hex(&c, "]: tpid 0x", pkt->vlan[i].tpid, 4);
		roce_fmt_label_dec(&c, " pcp ", pkt->vlan[i].pcp);
		roce_fmt_label_dec(&c, " dei ", pkt->vlan[i].dei);
		roce_fmt_label_dec(&c, " vid ", pkt->vlan[i].vid);
		roce_fmt_char(&c, '\n');
	}
	if (pkt->ip_ver != 0)
		verbose_l3(&c, pkt);
	if (d.udp) {
		roce_fmt_label_dec(&c, "  udp: sport ", pkt->sport);
		roce_fmt_label_dec(&c, " dport ", pkt->dport);
		roce_fmt_label_hex(&c, " csum 0x", pkt->udp_csum, 4);
		roce_fmt_char(&c, '\n');
	}
	if (d.bth)
		verbose_bth(&c, pkt);
	if (d.ext)
		verbose_ext(&c, pkt);
	if (d.payload) {
		roce_fmt_label_dec(&c, "  payload: ", pkt->payload_len);
		roce_fmt_label_dec(&c, " bytes at offset ", pkt->payload_off);
		roce_fmt_label_dec(&c, ", pad ", pkt->pad);
		if (pkt->truncated)
			roce_fmt_label_dec(&c, ", captured ", pkt->len > pkt->payload_off ?
					   ROCE_MIN(pkt->len - pkt->payload_off, pkt->payload_len) : 0);
		roce_fmt_char(&c, '\n');
	}
	if (d.bth && !d.icrc) {
		roce_fmt_str(&c, "  icrc: not captured\n");
	} else if (d.bth) {
		/* the 4 bytes in wire order, as tshark and scapy print an ICRC */
		roce_fmt_label_hex(&c, "  icrc: 0x", __builtin_bswap32(pkt->icrc), 8);
		if (d.icrc_checked && pkt->icrc_ok) {
			roce_fmt_str(&c, " ok\n");
		} else if (d.icrc_checked) {
			roce_fmt_label_hex(&c, " BAD (expected 0x", __builtin_bswap32(pkt->icrc_calc), 8);
			roce_fmt_str(&c, ")\n");
		} else if (roce_pkt_ipv6_ext(pkt)) {
			roce_fmt_str(&c, " (not checked: IPv6 extension headers)\n");
		} else {
			roce_fmt_str(&c, " (not checked)\n");
		}
	}
	if (pkt->kind == ROCE_KIND_PFC && pkt->err == ROCE_WERR_OK) {
		roce_fmt_label_hex(&c, "  pfc: cev 0x", pkt->pfc_cev, 4);
		for (int i = 0; i < 8; i++) {
			roce_fmt_label_dec(&c, " p", (unsigned int)i);
			roce_fmt_str(&c, pkt->pfc_cev & (1u << i) ? " " : " (off) ");
			roce_fmt_dec(&c, pkt->quanta[i]);
		}
		roce_fmt_char(&c, '\n');
	}
	if (pkt->kind == ROCE_KIND_PAUSE && pkt->err == ROCE_WERR_OK) {
		roce_fmt_label_dec(&c, "  pause: quanta ", pkt->quanta[0]);
		roce_fmt_char(&c, '\n');
	}
	if (pkt->err != ROCE_WERR_OK && pkt->err != ROCE_WERR_NOT_ROCE) {
		roce_fmt_label_str(&c, "  error: ", roce_wire_strerror(pkt->err));
		roce_fmt_char(&c, '\n');
	}
	return roce_fmt_end(&c);
}
