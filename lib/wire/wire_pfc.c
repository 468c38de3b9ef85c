/* IEEE 802.3x PAUSE and 802.1Qbb priority flow control frames (MAC control, Ethertype 0x8808). */
#include <errno.h>
#include <string.h>

#include "roce_wire.h"
#include "wire_private.h"

/* 802.1Qbb 36.1.3: opcode, class-enable vector, then eight 2-byte pause times. */
#define PFC_BODY_LEN (2 + 2 + 8 * 2)
#define PAUSE_BODY_LEN (2 + 2)

int wire_parse_mac_ctrl(const uint8_t *buf, uint32_t len, uint32_t off, struct roce_pkt *pkt)
{
	uint16_t op;

	if (len < off + 2) {
		pkt->err = ROCE_WERR_TRUNCATED;
		return -EINVAL;
	}
	op = rd16(buf + off);
	if (op == ROCE_MAC_CTRL_PFC) {
		pkt->kind = ROCE_KIND_PFC;
		if (len < off + PFC_BODY_LEN) {
			pkt->err = ROCE_WERR_TRUNCATED;
			return -EINVAL;
		}
		pkt->pfc_cev = rd16(buf + off + 2);
		for (int i = 0; i < 8; i++)
			pkt->quanta[i] = rd16(buf + off + 4 + 2 * i);
		return 0;
	}
	if (op == ROCE_MAC_CTRL_PAUSE) {
		pkt->kind = ROCE_KIND_PAUSE;
		if (len < off + PAUSE_BODY_LEN) {
			pkt->err = ROCE_WERR_TRUNCATED;
			return -EINVAL;
		}
		pkt->quanta[0] = rd16(buf + off + 2);
		return 0;
	}
	pkt->err = ROCE_WERR_BAD_MAC_CTRL;
	return -EINVAL;
}

int wire_build_mac_ctrl(const struct roce_pkt *pkt, uint8_t *buf, uint32_t off, uint32_t size)
{
	uint32_t end = off + (pkt->kind == ROCE_KIND_PFC ? PFC_BODY_LEN : PAUSE_BODY_LEN);
	uint32_t len = end < ETHER_MIN_FRAME ? ETHER_MIN_FRAME : end;

	if (len > size)
		return -ENOSPC;
	if (pkt->kind == ROCE_KIND_PFC) {
		wr16(buf + off, ROCE_MAC_CTRL_PFC);
		wr16(buf + off + 2, pkt->pfc_cev);
		for (int i = 0; i < 8; i++)
			wr16(buf + off + 4 + 2 * i, pkt->quanta[i]);
	} else {
		wr16(buf + off, ROCE_MAC_CTRL_PAUSE);
		wr16(buf + off + 2, pkt->quanta[0]);
	}
	memset(buf + end, 0, len - end);	/* 802.3 minimum frame: reserved zeros */
	return (int)len;
}
