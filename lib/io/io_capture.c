/* Live capture: every frame a port receives or sends, to a nanosecond pcap; and pdump's server. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>

#include "roce_capture.h"
#include "roce_common.h"
#include "roce_io.h"

struct roce_capture {
	struct roce_pcap_writer *w;	/* the file */
	struct roce_capture_stats st;	/* counters */
	int err;			/* first write error (-EIO), reported at close */
};

static struct roce_capture *all_ports;	/* roce_capture_all_ports() */

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct roce_capture *roce_capture_open(const char *path, uint32_t snaplen, char *err,
				       size_t errlen)
{
	struct roce_capture *cap = calloc(1, sizeof(*cap));

	if (cap == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	cap->w = roce_pcap_create_snap(path, snaplen, err, errlen);
	if (cap->w == NULL) {
		int e = errno;

		free(cap);
		errno = e;
		return NULL;
	}
	return cap;
}

int roce_capture_close(struct roce_capture *cap)
{
	int rc;

	if (cap == NULL)
		return 0;
	rc = roce_pcap_close_writer(cap->w);
	if (rc == 0)
		rc = cap->err;
	if (cap == all_ports)
		all_ports = NULL;
	free(cap);
	return rc;
}

void roce_capture_discard(struct roce_capture *cap)
{
	if (cap == NULL)
		return;
	roce_pcap_discard_writer(cap->w);
	if (cap == all_ports)
		all_ports = NULL;
	free(cap);
}

void roce_capture_stats(const struct roce_capture *cap, struct roce_capture_stats *st)
{
	*st = cap->st;
}

static void close_all_ports(void)
{
	roce_capture_close(all_ports);
}

int roce_capture_all_ports(const char *path, uint32_t snaplen, char *err, size_t errlen)
{
	if (all_ports != NULL) {
		snprintf(err, errlen, "%s: a capture of every port is already open", path);
		return -EBUSY;
	}
	all_ports = roce_capture_open(path, snaplen, err, errlen);
	if (all_ports == NULL)
		return -errno;
	atexit(close_all_ports);
	return 0;
}

struct roce_capture *roce_capture_default(void)
{
	return all_ports;
}

static void write_frames(struct roce_capture *cap, struct rte_mbuf *const *pkts, uint16_t n,
			 uint64_t *count)
{
	uint64_t now = wall_ns();

	for (uint16_t i = 0; i < n; i++) {
		if (roce_pcap_write_mbuf(cap->w, now, pkts[i]) != 0) {
			cap->st.errors++;
			cap->err = -EIO;
			continue;
		}
		(*count)++;
		cap->st.bytes += rte_pktmbuf_pkt_len(pkts[i]);
	}
}

void roce_capture_rx(struct roce_capture *cap, struct rte_mbuf *const *pkts, uint16_t n)
{
	write_frames(cap, pkts, n, &cap->st.rx_frames);
}

uint16_t roce_capture_tx_burst(struct roce_capture *cap, uint16_t port_id, struct rte_mbuf **pkts,
			       uint16_t n)
{
	struct rte_mbuf *held[64];
	uint16_t sent, total = 0;

	/* in chunks of what we can hold: the driver may free an accepted mbuf before it returns */
	while (total < n) {
		uint16_t k = (uint16_t)ROCE_MIN((unsigned int)(n - total), ROCE_DIM(held));

		for (uint16_t i = 0; i < k; i++) {
			held[i] = pkts[total + i];
			rte_pktmbuf_refcnt_update(held[i], 1);	/* every segment */
		}
		sent = rte_eth_tx_burst(port_id, 0, pkts + total, k);
		write_frames(cap, held, sent, &cap->st.tx_frames);
		for (uint16_t i = 0; i < k; i++)
			if (i < sent)
				rte_pktmbuf_free(held[i]);	/* our reference */
			else
				rte_pktmbuf_refcnt_update(held[i], -1);
		total = (uint16_t)(total + sent);
		if (sent < k)
			break;
	}
	return total;
}

/* ---- pdump ---- */

int roce_pdump_enable(void)
{
	int rc = rte_pdump_init();

	if (rc != 0)
		return rte_errno == ENOTSUP ? -ENOTSUP : -(rte_errno ? rte_errno : EINVAL);
	return 0;
}
