/* ECN: RED marking of ECT frames with CE at an egress queue (RFC 3168, DCQCN's CP). */
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "fab_private.h"

#define ECN_MASK 0x3		/* the ECN field: low 2 bits of the TOS / traffic class */
#define ECN_CE 0x3		/* congestion experienced */

/*
 * RED on the instantaneous queue: below kmin never, kmin..kmax with probability rising
 * linearly to pmax, above kmax always. @p qbytes is the queue as the frame leaves it (the frame
 * included). The engine's RNG is drawn only between kmin and kmax, so a run is deterministic
 * per seed. Not-ECT frames are never marked. The ICRC masks the TOS / traffic class, so marking
 * keeps it valid; the IPv4 checksum is updated (RFC 1624).
 */
void fab_ecn_mark(struct roce_switch *sw, struct rte_mbuf *m, const struct roce_prio_conf *pc,
		  uint64_t qbytes, struct roce_switch_qstats *st)
{
	uint8_t *l3, ecn;

	if (qbytes <= pc->kmin)
		return;
	if (qbytes <= pc->kmax) {
		double p = pc->kmax == pc->kmin ? pc->pmax :
			   pc->pmax * (double)(qbytes - pc->kmin) / (double)(pc->kmax - pc->kmin);

		if (!(roce_engine_rand01(sw->eng) < p))
			return;
	}
	l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, sw_meta(m)->l3_off);
	if ((l3[0] >> 4) == 4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;
		uint16_t old = (uint16_t)(ip->version_ihl << 8 | ip->type_of_service);

		ecn = ip->type_of_service & ECN_MASK;
		if (ecn == 0 || ecn == ECN_CE)
			return;
		ip->type_of_service |= ECN_CE;
		ip->hdr_checksum = fab_csum_update16(ip->hdr_checksum, old,
			(uint16_t)(ip->version_ihl << 8 | ip->type_of_service));
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)l3;
		uint32_t vtc = rte_be_to_cpu_32(ip->vtc_flow);

		ecn = (vtc >> 20) & ECN_MASK;
		if (ecn == 0 || ecn == ECN_CE)
			return;
		ip->vtc_flow = rte_cpu_to_be_32(vtc | (uint32_t)ECN_CE << 20);
	}
	st->ecn_marked++;
}
