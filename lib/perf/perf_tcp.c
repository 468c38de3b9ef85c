/* The kernel TCP path's four copies, really performed and timed (see roce_tcpmodel.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roce_common.h"
#include "roce_tcpmodel.h"

#define TCP_SOCKBUF (4u << 20)		/* socket buffers: 4 MiB, as net.ipv4.tcp_wmem's max */
#define TCP_RING_SLOTS 1024		/* NIC rings: 1024 descriptors of one segment each */
#define TCP_HDR 66			/* Ethernet 14 + IPv4 20 + TCP 32 (with timestamps) */

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* RFC 1071 Internet checksum of @p len bytes, folded, as csum_partial computes it on send. */
static uint16_t inet_csum(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		sum += (w & 0xffffffffu) + (w >> 32);
	}
	for (; i + 2 <= len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (i < len)
		sum += (uint32_t)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int roce_tcp_model_run(const struct roce_tcp_model_conf *conf, struct roce_tcp_model_result *res)
{
	uint32_t wsize = conf->write_size ? conf->write_size : 65536;
	uint32_t mss = conf->mss ? conf->mss : 1448;
	uint32_t gro = conf->gro_segments ? conf->gro_segments : 16;
	uint8_t *app_tx, *app_rx, *sk_tx, *tx_ring, *rx_ring;
	uint32_t slot = mss + TCP_HDR;
	uint64_t off = 0;
	volatile uint16_t csum_sink = 0;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->stage_name[0] = "send(): user -> socket buffer (CPU, with checksum)";
	res->stage_name[1] = "NIC: socket buffer -> TX ring (DMA)";
	res->stage_name[2] = "NIC: wire -> RX ring socket buffer (DMA)";
	res->stage_name[3] = "recv(): socket buffer -> user (CPU)";
	if (conf->bytes == 0 || mss == 0 || mss > 9000 || wsize > TCP_SOCKBUF)
		return -EINVAL;
	app_tx = malloc(conf->bytes);
	app_rx = malloc(conf->bytes);
	sk_tx = malloc(TCP_SOCKBUF);
	tx_ring = malloc((size_t)TCP_RING_SLOTS * slot);
	rx_ring = malloc((size_t)TCP_RING_SLOTS * slot);
	if (app_tx == NULL || app_rx == NULL || sk_tx == NULL || tx_ring == NULL ||
	    rx_ring == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < conf->bytes; i++)
		app_tx[i] = (uint8_t)(i * 31 + 7);
	/*
	 * Touch every page before timing (not with zeros: the compiler may turn malloc + memset 0
	 * into calloc, which leaves fresh pages untouched and bills their faults to the copies).
	 */
	memset(app_rx, 0xa5, conf->bytes);
	memset(sk_tx, 0xa5, TCP_SOCKBUF);
	memset(tx_ring, 0xa5, (size_t)TCP_RING_SLOTS * slot);
	memset(rx_ring, 0xa5, (size_t)TCP_RING_SLOTS * slot);

	while (off < conf->bytes) {
		uint32_t len = (uint32_t)ROCE_MIN((uint64_t)wsize, conf->bytes - off);
		uint32_t sk_off = (uint32_t)(off % (TCP_SOCKBUF - wsize + 1));
		uint32_t nseg = (len + mss - 1) / mss;
		double t;

		/* copy 1: send() copies into the socket buffer and checksums each segment */
		t = cpu_now();
		memcpy(sk_tx + sk_off, app_tx + off, len);
		for (uint32_t s = 0; s < nseg; s++)
			csum_sink ^= inet_csum(sk_tx + sk_off + s * mss, ROCE_MIN(mss, len - s * mss));
		res->stage_sec[0] += cpu_now() - t;
		res->syscalls++;

		/* copy 2: the NIC takes each segment, headers in front, into its TX ring */
		t = cpu_now();
		for (uint32_t s = 0; s < nseg; s++) {
			uint8_t *d = tx_ring + (size_t)((res->segments + s) % TCP_RING_SLOTS) * slot;
			uint32_t seg = ROCE_MIN(mss, len - s * mss);

			memset(d, 0x45, TCP_HDR);
			memcpy(d + TCP_HDR, sk_tx + sk_off + s * mss, seg);
		}
		res->stage_sec[1] += cpu_now() - t;

		/* the wire; copy 3: the receiving NIC writes each frame into a socket buffer of its RX ring */
		t = cpu_now();
		for (uint32_t s = 0; s < nseg; s++) {
			size_t at = (size_t)((res->segments + s) % TCP_RING_SLOTS) * slot;

			memcpy(rx_ring + at, tx_ring + at, ROCE_MIN(mss, len - s * mss) + TCP_HDR);
		}
		res->stage_sec[2] += cpu_now() - t;

		/* copy 4: recv() copies the payloads out to the user */
		t = cpu_now();
		for (uint32_t s = 0; s < nseg; s++) {
			size_t at = (size_t)((res->segments + s) % TCP_RING_SLOTS) * slot;

			memcpy(app_rx + off + s * mss, rx_ring + at + TCP_HDR, ROCE_MIN(mss, len - s * mss));
		}
		res->stage_sec[3] += cpu_now() - t;
		res->segments += nseg;
		res->syscalls++;
		off += len;
	}
	res->interrupts = (res->segments + gro - 1) / gro;
	res->bytes = conf->bytes;
	res->bytes_copied = ROCE_TCP_COPIES * conf->bytes;
	for (int i = 0; i < ROCE_TCP_COPIES; i++)
		res->cpu_sec += res->stage_sec[i];
	if (memcmp(app_tx, app_rx, conf->bytes) != 0)
		rc = -EIO;
	(void)csum_sink;
out:
	free(app_tx);
	free(app_rx);
	free(sk_tx);
	free(tx_ring);
	free(rx_ring);
	return rc;
}
