/* The one-line, tcpdump-like summary of a parsed frame, used by dissect and demo. */
#include <errno.h>

#include "roce_fmt.h"
#include "roce_mad.h"
#include "roce_wire.h"

static void fmt_ext(struct roce_fmt *f, const struct roce_pkt *pkt)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;

	if (mask & ROCE_F_RDETH)
		roce_fmt_label_hex(f, " rdeth eecnxt 0x", pkt->rdeth_eecnxt, 6);
	if (mask & ROCE_F_DETH) {
		roce_fmt_label_hex(f, " deth qkey 0x", pkt->deth.qkey, 8);
		roce_fmt_label_hex(f, " srcqp 0x", pkt->deth.srcqp, 6);
	}
	if (mask & ROCE_F_XRCETH)
		roce_fmt_label_hex(f, " xrceth srq 0x", pkt->xrc_srqn, 6);
	if (mask & ROCE_F_FETH)
		roce_fmt_label_hex(f, " feth 0x", pkt->feth, 8);
	if (mask & ROCE_F_RETH) {
		roce_fmt_label_hex(f, " reth va 0x", pkt->reth.va, 16);
		roce_fmt_label_hex(f, " rkey 0x", pkt->reth.rkey, 8);
		roce_fmt_label_dec(f, " dmalen ", pkt->reth.dmalen);
	}
	if (mask & ROCE_F_ATMETH) {
		roce_fmt_label_hex(f, " atomiceth va 0x", pkt->atmeth.va, 16);
		roce_fmt_label_hex(f, " rkey 0x", pkt->atmeth.rkey, 8);
		roce_fmt_label_hex(f, " swap 0x", pkt->atmeth.swap, 1);
		roce_fmt_label_hex(f, " cmp 0x", pkt->atmeth.cmp, 1);
	}
	if (mask & ROCE_F_AETH) {
		roce_fmt_str(f, " aeth ");
		roce_fmt_str(f, roce_aeth_name(pkt->aeth.syndrome));
		if (roce_aeth_kind(pkt->aeth.syndrome) == ROCE_AETH_RNR_NAK)
			roce_fmt_label_dec(f, " timer ", pkt->aeth.syndrome & 0x1f);
		roce_fmt_label_dec(f, " msn ", pkt->aeth.msn);
	}
	if (mask & ROCE_F_ATMACK)
		roce_fmt_label_hex(f, " orig 0x", pkt->atmack_orig, 1);
	if (mask & ROCE_F_IMMDT)
		roce_fmt_label_hex(f, " imm 0x", pkt->immdt, 8);
	if (mask & ROCE_F_IETH)
		roce_fmt_label_hex(f, " ieth rkey 0x", pkt->ieth_rkey, 8);
}

void roce_fmt_mad(struct roce_fmt *f, const struct roce_mad *m)
{
	const char *name;
	uint16_t ps, port;

	if (!(m->have & ROCE_MAD_HAVE_HDR)) {
		roce_fmt_str(f, "[short-mad]");
		return;
	}
	if (m->mgmt_class != ROCE_MAD_CLASS_CM) {
		roce_fmt_label_hex(f, "class 0x", m->mgmt_class, 2);
		roce_fmt_label_hex(f, " attr 0x", m->attr_id, 4);
	} else if ((name = roce_cm_attr_name(m->attr_id)) != NULL) {
		roce_fmt_str(f, name);
	} else {
		roce_fmt_label_hex(f, "attr 0x", m->attr_id, 4);
	}
	if (m->have & ROCE_MAD_HAVE_LCID)
		roce_fmt_label_hex(f, m->attr_id >= ROCE_CM_ATTR_SIDR_REQ ? " reqid 0x" : " lcid 0x",
				   m->lcid, 8);
	if (m->have & ROCE_MAD_HAVE_RCID)
		roce_fmt_label_hex(f, " rcid 0x", m->rcid, 8);
	if (m->have & ROCE_MAD_HAVE_SID) {
		roce_fmt_label_hex(f, " sid 0x", m->service_id, 16);
		if (roce_cm_sid_ip(m->service_id, &ps, &port)) {
			name = roce_cm_ps_name(ps);
			if (name != NULL)
				roce_fmt_label_str(f, " (", name);
			else
				roce_fmt_label_hex(f, " (ps 0x", ps, 4);
			roce_fmt_label_dec(f, " port ", port);
			roce_fmt_char(f, ')');
		}
	}
	if (m->have & ROCE_MAD_HAVE_QPN)
		roce_fmt_label_hex(f, m->attr_id == ROCE_CM_ATTR_DREQ ? " rqpn 0x" : " qpn 0x", m->qpn, 6);
	if (m->have & ROCE_MAD_HAVE_PSN)
		roce_fmt_label_dec(f, " psn ", m->start_psn);
	if (m->have & ROCE_MAD_HAVE_REJ) {
		name = roce_cm_rej_name(m->reason);
		roce_fmt_label_str(f, " reason ", name != NULL ? name : "unknown");
		roce_fmt_label_dec(f, " (", m->reason);
		roce_fmt_char(f, ')');
	}
	if (m->short_mad)
		roce_fmt_str(f, " [short-mad]");
}

/* " cm REQ lcid 0x... sid 0x... qpn 0x... psn N": what identifies a CM message and its connection */
static void fmt_mad(struct roce_fmt *f, const struct roce_pkt *pkt)
{
	struct roce_mad m;

	if (roce_pkt_mad(pkt, &m) == -ENOENT)
		return;
	roce_fmt_str(f, m.have & ROCE_MAD_HAVE_HDR && m.mgmt_class == ROCE_MAD_CLASS_CM ? " cm " :
									 " mad ");
	roce_fmt_mad(f, &m);
}

static void fmt_error(struct roce_fmt *f, enum roce_wire_err err)
{
	roce_fmt_str(f, " [");
	roce_fmt_str(f, roce_wire_strerror(err));
	roce_fmt_char(f, ']');
}

/* "vlan 100 pcp 3, " for each tag decoded, outer first */
static void fmt_vlans(struct roce_fmt *f, const struct roce_pkt *pkt)
{
	for (int i = 0; i < pkt->nvlan; i++) {
		roce_fmt_label_dec(f, "vlan ", pkt->vlan[i].vid);
		roce_fmt_label_dec(f, " pcp ", pkt->vlan[i].pcp);
		roce_fmt_str(f, ", ");
	}
}

void roce_fmt_pkt(struct roce_fmt *f, const struct roce_pkt *pkt)
{
	if (pkt->kind == ROCE_KIND_PFC) {
		roce_fmt_label_hex(f, "PFC cev 0x", pkt->pfc_cev, 2);
		roce_fmt_str(f, " quanta");
		for (int i = 0; i < 8; i++) {
			roce_fmt_char(f, i == 0 ? ' ' : ',');
			roce_fmt_dec(f, pkt->quanta[i]);
		}
		return;
	}
	if (pkt->kind == ROCE_KIND_PAUSE) {
		roce_fmt_label_dec(f, "PAUSE quanta ", pkt->quanta[0]);
		return;
	}
	if (pkt->kind == ROCE_KIND_OTHER) {
		if (pkt->err == ROCE_WERR_TOO_MANY_VLANS) {
			/* what is behind the tags is unknown: RoCE perhaps (tshark decodes on) */
			fmt_vlans(f, pkt);
			roce_fmt_label_hex(f, "tpid 0x", pkt->ethertype, 4);
			roce_fmt_str(f, ": more VLAN tags than rocelab decodes");
			fmt_error(f, pkt->err);
			return;
		}
		if (pkt->ip_ver != 0) {
			roce_fmt_label_dec(f, "IPv", pkt->ip_ver);
			roce_fmt_char(f, ' ');
			roce_fmt_ip(f, &pkt->src, pkt->ip_ver);
			roce_fmt_str(f, " > ");
			roce_fmt_ip(f, &pkt->dst, pkt->ip_ver);
			roce_fmt_str(f, ", not RoCE");
		} else {
			roce_fmt_label_hex(f, "ethertype 0x", pkt->ethertype, 4);
			roce_fmt_str(f, ", not RoCE");
		}
		if (pkt->err != ROCE_WERR_OK && pkt->err != ROCE_WERR_NOT_ROCE)
			fmt_error(f, pkt->err);
		return;
	}
	fmt_vlans(f, pkt);
	if (pkt->kind == ROCE_KIND_ROCEV2) {
		roce_fmt_ip(f, &pkt->src, pkt->ip_ver);
		roce_fmt_label_dec(f, ".", pkt->sport);
		roce_fmt_str(f, " > ");
		roce_fmt_ip(f, &pkt->dst, pkt->ip_ver);
		roce_fmt_label_dec(f, ".", pkt->dport);
	} else {
		roce_fmt_str(f, "RoCEv1 ");
		roce_fmt_ip(f, &pkt->src, pkt->ip_ver);
		roce_fmt_str(f, " > ");
		roce_fmt_ip(f, &pkt->dst, pkt->ip_ver);
	}
	if (pkt->ecn != 0) {
		roce_fmt_str(f, " ecn ");
		roce_fmt_str(f, pkt->ecn == 3 ? "CE" : pkt->ecn == 2 ? "ECT0" : "ECT1");
	}
	if (pkt->bth_off == 0) {	/* stopped before the BTH */
		fmt_error(f, pkt->err);
		return;
	}
	if (roce_opcode[pkt->opcode].name != NULL) {
		roce_fmt_char(f, ' ');
		roce_fmt_str(f, roce_opcode[pkt->opcode].name);
	} else {
		roce_fmt_label_hex(f, " opcode 0x", pkt->opcode, 2);
	}
	roce_fmt_label_hex(f, " qp 0x", pkt->dqpn, 6);
	roce_fmt_label_dec(f, " psn ", pkt->psn);
	if (pkt->ackreq)
		roce_fmt_str(f, " ackreq");
	if (pkt->se)
		roce_fmt_str(f, " se");
	if (pkt->becn)
		roce_fmt_str(f, " becn");
	/*
	 * A frame cut inside its extended headers, or of another version, has none decoded; a
	 * bad pad count leaves the payload's length unknown (not 0): no len then.
	 */
	if (pkt->err != ROCE_WERR_TRUNCATED && pkt->err != ROCE_WERR_BAD_TVER) {
		fmt_ext(f, pkt);
		if (pkt->err != ROCE_WERR_BAD_PAD &&
		    (roce_opcode[pkt->opcode].mask & ROCE_F_PAYLOAD || pkt->payload_len != 0))
			roce_fmt_label_dec(f, " len ", pkt->payload_len);
		fmt_mad(f, pkt);
	}
	if (pkt->err == ROCE_WERR_ICRC_MISMATCH) {
		/* the 4 bytes in wire order, as tshark and scapy print an ICRC */
		roce_fmt_label_hex(f, " icrc BAD (expected 0x", __builtin_bswap32(pkt->icrc_calc), 8);
		roce_fmt_char(f, ')');
	} else if (pkt->err != ROCE_WERR_OK) {
		fmt_error(f, pkt->err);
	} else if (pkt->truncated) {
		roce_fmt_str(f, " icrc not captured");
	} else if (pkt->icrc_ok) {
		roce_fmt_str(f, " icrc ok");
	} else if (roce_pkt_ipv6_ext(pkt)) {
		roce_fmt_str(f, " icrc not checked");	/* see parse_transport() */
	}
}

int roce_pkt_snprint(char *out, size_t size, const struct roce_pkt *pkt)
{
	struct roce_fmt f;

	roce_fmt_init(&f, out, size);
	roce_fmt_pkt(&f, pkt);
	return roce_fmt_end(&f);
}
