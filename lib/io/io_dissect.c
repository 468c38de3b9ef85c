/* What `rocelab dissect` prints for one frame: the one-line form, the jsonl contract, the verbose listing. */
#include <errno.h>
#include <stdio.h>

#include "roce_fmt.h"
#include "roce_io.h"
#include "roce_mad.h"
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

/* ,"ipcm":{"ver":0,"ip":4,"sport":58046,"src":"192.0.2.3","dst":"192.0.2.2"} */
static void jsonl_ipcm(struct roce_fmt *c, const struct roce_cm_ipcm *h)
{
	roce_fmt_label_dec(c, ",\"ipcm\":{\"ver\":", h->version);
	roce_fmt_label_dec(c, ",\"ip\":", h->ip_ver);
	roce_fmt_label_dec(c, ",\"sport\":", h->sport);
	roce_fmt_str(c, ",\"src\":\"");
	roce_fmt_ip(c, &h->src, h->ip_ver);
	roce_fmt_str(c, "\",\"dst\":\"");
	roce_fmt_ip(c, &h->dst, h->ip_ver);
	roce_fmt_str(c, "\"}");
}

/* ,"mad":{...} and, for the CM class, ,"cm":{...}: the fields decoded, by roce_mad.have */
static void jsonl_mad(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	struct roce_mad m;
	const char *name;
	uint16_t ps, port;

	if (roce_pkt_mad(pkt, &m) == -ENOENT)
		return;
	roce_fmt_label_dec(c, ",\"mad\":{\"len\":", m.len);
	if (m.have & ROCE_MAD_HAVE_HDR) {
		roce_fmt_label_dec(c, ",\"base\":", m.base_version);
		roce_fmt_label_dec(c, ",\"class\":", m.mgmt_class);
		roce_fmt_label_dec(c, ",\"class_ver\":", m.class_version);
		roce_fmt_label_dec(c, ",\"method\":", m.method);
		roce_fmt_label_dec(c, ",\"status\":", m.status);
		roce_fmt_label_dec(c, ",\"tid\":", m.tid);
		roce_fmt_label_dec(c, ",\"attr\":", m.attr_id);
		roce_fmt_label_dec(c, ",\"attr_mod\":", m.attr_mod);
	}
	if (m.short_mad)
		roce_fmt_str(c, ",\"short\":true");
	roce_fmt_char(c, '}');
	if (!(m.have & ROCE_MAD_HAVE_HDR) || m.mgmt_class != ROCE_MAD_CLASS_CM)
		return;
	name = roce_cm_attr_name(m.attr_id);
	roce_fmt_label_str(c, ",\"cm\":{\"msg\":\"", name != NULL ? name : "unknown");
	roce_fmt_char(c, '"');
	if (m.have & ROCE_MAD_HAVE_LCID)
		roce_fmt_label_dec(c, ",\"lcid\":", m.lcid);
	if (m.have & ROCE_MAD_HAVE_RCID)
		roce_fmt_label_dec(c, ",\"rcid\":", m.rcid);
	if (m.have & ROCE_MAD_HAVE_SID) {
		roce_fmt_label_dec(c, ",\"sid\":", m.service_id);
		if (roce_cm_sid_ip(m.service_id, &ps, &port)) {
			roce_fmt_label_dec(c, ",\"ps\":", ps);
			roce_fmt_label_dec(c, ",\"port\":", port);
		}
	}
	if (m.have & ROCE_MAD_HAVE_QPN)
		roce_fmt_label_dec(c, ",\"qpn\":", m.qpn);
	if (m.have & ROCE_MAD_HAVE_PSN)
		roce_fmt_label_dec(c, ",\"psn\":", m.start_psn);
	if (m.have & ROCE_MAD_HAVE_REJ) {
		roce_fmt_label_dec(c, ",\"msg_rej\":", m.msg);
		roce_fmt_label_dec(c, ",\"reason\":", m.reason);
	}
	if (m.have & ROCE_MAD_HAVE_IPCM)
		jsonl_ipcm(c, &m.ipcm);
	roce_fmt_char(c, '}');
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
	if (d.payload)
		jsonl_mad(&c, pkt);
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

/* "  mad: ...", "  cm: ...", and for a REQ "  cm req: ...", "  cm path: ...", "  ipcm: ..." */
static void verbose_mad(struct roce_fmt *c, const struct roce_pkt *pkt)
{
	const struct roce_cm_path *p;
	struct roce_mad m;
	const char *name;

	if (roce_pkt_mad(pkt, &m) == -ENOENT)
		return;
	if (!(m.have & ROCE_MAD_HAVE_HDR)) {
		roce_fmt_label_dec(c, "  mad: ", m.len);
		roce_fmt_str(c, " of 256 bytes captured, short of its header\n");
		return;
	}
	roce_fmt_label_dec(c, "  mad: base ", m.base_version);
	roce_fmt_label_hex(c, " class 0x", m.mgmt_class, 2);
	roce_fmt_label_dec(c, " version ", m.class_version);
	roce_fmt_label_hex(c, " method 0x", m.method, 2);
	name = roce_mad_method_name(m.method);
	if (name != NULL) {
		roce_fmt_label_str(c, " (", name);
		roce_fmt_char(c, ')');
	}
	roce_fmt_label_hex(c, " status 0x", m.status, 4);
	roce_fmt_label_hex(c, " class-specific 0x", m.class_specific, 4);
	roce_fmt_label_hex(c, " tid 0x", m.tid, 16);
	roce_fmt_label_hex(c, " attr 0x", m.attr_id, 4);
	roce_fmt_label_hex(c, " mod 0x", m.attr_mod, 8);
	if (m.short_mad)
		roce_fmt_label_dec(c, " (", m.len);
	roce_fmt_str(c, m.short_mad ? " of 256 bytes captured)\n" : "\n");
	if (m.mgmt_class != ROCE_MAD_CLASS_CM)
		return;
	roce_fmt_str(c, "  cm: ");
	roce_fmt_mad(c, &m);
	if (m.have & (ROCE_MAD_HAVE_REQ | ROCE_MAD_HAVE_REP | ROCE_MAD_HAVE_SIDR) ||
	    (m.have & ROCE_MAD_HAVE_QPN && m.attr_id != ROCE_CM_ATTR_DREQ))
		roce_fmt_label_hex(c, " qkey 0x", m.qkey, 8);
	if (m.have & (ROCE_MAD_HAVE_REQ | ROCE_MAD_HAVE_REP))
		roce_fmt_label_hex(c, " guid 0x", m.ca_guid, 16);
	if (m.have & ROCE_MAD_HAVE_MRA) {
		roce_fmt_label_dec(c, " msg ", m.msg);
		roce_fmt_label_dec(c, " service-timeout ", m.service_timeout);
	}
	if (m.have & ROCE_MAD_HAVE_REJ) {
		roce_fmt_label_dec(c, " msg ", m.msg);
		roce_fmt_label_dec(c, " info-len ", m.rej_info_len);
	}
	if (m.have & ROCE_MAD_HAVE_SIDR) {
		if (m.attr_id == ROCE_CM_ATTR_SIDR_REQ)
			roce_fmt_label_hex(c, " pkey 0x", m.pkey, 4);
		else
			roce_fmt_label_dec(c, " status ", m.sidr_status);
	}
	if (m.priv != NULL)
		roce_fmt_label_dec(c, " private ", m.priv_len);
	roce_fmt_char(c, '\n');
	if (m.have & (ROCE_MAD_HAVE_REQ | ROCE_MAD_HAVE_REP)) {
		roce_fmt_label_dec(c, "  cm params: resp-res ", m.resp_res);
		roce_fmt_label_dec(c, " init-depth ", m.init_depth);
		roce_fmt_label_dec(c, " e2e ", m.e2e_flow_ctrl);
		roce_fmt_label_dec(c, " rnr-retry ", m.rnr_retry_count);
		roce_fmt_label_dec(c, " srq ", m.srq);
		if (m.have & ROCE_MAD_HAVE_REP) {
			roce_fmt_label_dec(c, " target-ack-delay ", m.target_ack_delay);
			roce_fmt_label_dec(c, " failover ", m.failover);
		} else {
			roce_fmt_label_dec(c, " remote-cm-timeout ", m.remote_cm_timeout);
			roce_fmt_label_dec(c, " local-cm-timeout ", m.local_cm_timeout);
			roce_fmt_label_dec(c, " transport ", m.transport);
			roce_fmt_label_dec(c, " retry ", m.retry_count);
			roce_fmt_label_hex(c, " pkey 0x", m.pkey, 4);
			roce_fmt_label_dec(c, " mtu ", m.path_mtu);
			roce_fmt_label_dec(c, " max-cm-retries ", m.max_cm_retries);
		}
		roce_fmt_char(c, '\n');
	}
	if (m.have & ROCE_MAD_HAVE_PATH) {
		p = &m.path;
		roce_fmt_label_hex(c, "  cm path: lid 0x", p->local_lid, 4);
		roce_fmt_label_hex(c, " > 0x", p->remote_lid, 4);
		roce_fmt_str(c, " gid ");
		roce_fmt_ip(c, &p->local_gid, 6);
		roce_fmt_str(c, " > ");
		roce_fmt_ip(c, &p->remote_gid, 6);
		roce_fmt_label_hex(c, " flow 0x", p->flow_label, 5);
		roce_fmt_label_dec(c, " rate ", p->packet_rate);
		roce_fmt_label_hex(c, " tclass 0x", p->tclass, 2);
		roce_fmt_label_dec(c, " hoplimit ", p->hop_limit);
		roce_fmt_label_dec(c, " sl ", p->sl);
		roce_fmt_label_dec(c, " subnet-local ", p->subnet_local);
		roce_fmt_label_dec(c, " ack-timeout ", p->ack_timeout);
		roce_fmt_char(c, '\n');
	}
	if (m.have & ROCE_MAD_HAVE_IPCM) {
		roce_fmt_label_hex(c, "  ipcm: version 0x", m.ipcm.version, 2);
		roce_fmt_label_dec(c, " ip ", m.ipcm.ip_ver);
		roce_fmt_str(c, " src ");
		roce_fmt_ip(c, &m.ipcm.src, m.ipcm.ip_ver);
		roce_fmt_label_dec(c, ".", m.ipcm.sport);
		roce_fmt_str(c, " dst ");
		roce_fmt_ip(c, &m.ipcm.dst, m.ipcm.ip_ver);
		roce_fmt_label_dec(c, ".", (uint16_t)m.service_id);
		roce_fmt_char(c, '\n');
	}
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
		verbose_mad(&c, pkt);
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
