/*
 * lib/io: live capture of DPDK ports to pcap, DPDK pdump for dpdk-dumpcap, and capture of a
 * kernel network interface through libpcap (a real RDMA device's frames, where the kernel sees
 * them).
 */
#ifndef ROCE_CAPTURE_H
#define ROCE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct roce_pcap_writer;
struct roce_port;
struct roce_capture;

/* Counters of a capture. */
struct roce_capture_stats {
	uint64_t rx_frames;	/* frames received by the ports, written */
	uint64_t tx_frames;	/* frames the ports' TX queues accepted, written */
	uint64_t bytes;		/* bytes written (frame bytes, no pcap headers) */
	uint64_t errors;	/* frames that could not be written */
};

/**
 * Create a capture file (pcap, nanosecond timestamps, Ethernet). Every frame a port attached
 * to it receives or sends is written with its wall-clock time (CLOCK_REALTIME).
 * @param path     file name; "-" is standard output. Refused if it is not a regular, writable
 *                 capture or empty file (roce_file.h)
 * @param snaplen  bytes kept of each frame (tcpdump -s); 0: all of it
 * @param err      receives one line naming the file and the reason
 * @return the capture, or NULL with errno set
 */
struct roce_capture *roce_capture_open(const char *path, uint32_t snaplen, char *err,
				       size_t errlen);

/**
 * Flush, close and put the file under its name (it is written beside it until then); NULL is
 * a no-op. @return 0, or -EIO if a write failed on the way
 */
int roce_capture_close(struct roce_capture *cap);

/** Close and remove the file: its name keeps what it held before. NULL is a no-op. */
void roce_capture_discard(struct roce_capture *cap);

/** Read the counters. */
void roce_capture_stats(const struct roce_capture *cap, struct roce_capture_stats *st);

/**
 * Capture every port opened from now on into @p path (the ports of commands that open them
 * inside the library, e.g. rocelab perf --dev). The file is closed at exit.
 * @return 0; -errno with @p err filled (the file cannot be created); -EBUSY (already set)
 */
int roce_capture_all_ports(const char *path, uint32_t snaplen, char *err, size_t errlen);

/** The capture set by roce_capture_all_ports(), or NULL. */
struct roce_capture *roce_capture_default(void);

/* ---- hooks for io_port.c ---- */

/** Write @p n received frames (borrowed). */
void roce_capture_rx(struct roce_capture *cap, struct rte_mbuf *const *pkts, uint16_t n);

/**
 * rte_eth_tx_burst() on @p port_id queue 0, writing the frames the queue accepted: they are
 * held (a reference) across the call, so a driver that frees them at once does not matter.
 * @return the number accepted, as rte_eth_tx_burst()
 */
uint16_t roce_capture_tx_burst(struct roce_capture *cap, uint16_t port_id, struct rte_mbuf **pkts,
			       uint16_t n);

/* ---- port functions for replay and capture (io_port.c) ---- */

/** Capture the port's frames into @p cap (borrowed; NULL stops). */
void roce_port_set_capture(struct roce_port *port, struct roce_capture *cap);

/**
 * Send frames now, bypassing the link: rte_eth_tx_burst() (through the capture, if any). The
 * caller keeps the frames not accepted (retry or free them).
 * @return the number accepted
 */
uint16_t roce_port_tx_burst(struct roce_port *port, struct rte_mbuf **pkts, uint16_t n);

/* ---- pdump (io_capture.c) ---- */

/**
 * Start DPDK's pdump server (rte_pdump_init) so that dpdk-dumpcap / dpdk-pdump, run as
 * secondary processes with the same --file-prefix, can capture this process's ports.
 * Needs an EAL with a shared configuration on hugepages: roce_eal_init() does both and
 * calls this when its arguments hold "--pdump" (rocelab --eal --pdump ...).
 * @return 0; -ENOTSUP (EAL started with --no-shconf or --in-memory); -errno from pdump
 */
int roce_pdump_enable(void);

/* ---- a kernel network interface, through libpcap (io_ifcap.c) ---- */

struct roce_ifcap;

/* Counters of an interface capture. */
struct roce_ifcap_stats {
	uint64_t frames;		/* frames the filter passed, written */
	uint64_t roce;			/* of them, RoCE v2 frames with a whole BTH */
	uint64_t dropped;		/* frames the kernel dropped: no room in the capture buffer */
	uint64_t errors;		/* frames that could not be written */
};

/**
 * Capture what interface @p ifname sends and receives, in a thread of its own, into @p w until
 * roce_ifcap_stop(): libpcap in immediate mode, so that a frame that crossed the interface
 * before roce_ifcap_stop() is called is in @p w when it returns. Needs CAP_NET_RAW, as
 * tcpdump does.
 * @param bpf      libpcap filter ("udp port 4791"), or NULL: every frame
 * @param snaplen  bytes the kernel hands over of each frame; 0: all of it (@p w may keep fewer)
 * @param w        the file; borrowed, written by the capture's thread alone until
 *                 roce_ifcap_stop() returns, and closed by the caller
 * @param err      receives one line naming the interface and the reason
 * @return the capture, or NULL with errno set: EPERM (no CAP_NET_RAW: @p err says so),
 *         ENODEV (no such interface, or it is down), ENOTSUP (not an Ethernet interface),
 *         EINVAL (a bad filter), EIO (libpcap's other faults)
 */
struct roce_ifcap *roce_ifcap_start(const char *ifname, const char *bpf, uint32_t snaplen,
				    struct roce_pcap_writer *w, char *err, size_t errlen);

/**
 * Stop: the frames the interface has handed over are written, the thread joined and @p st (may
 * be NULL) filled. The file is the caller's to close. NULL is a no-op (returns 0).
 * @return 0, or -EIO if a frame could not be written (the file holds those before it)
 */
int roce_ifcap_stop(struct roce_ifcap *cap, struct roce_ifcap_stats *st);

#endif /* ROCE_CAPTURE_H */
