/* lib/io: the edges of rocelab: DPDK EAL set-up, pcap files, ports. */
#ifndef ROCE_IO_H
#define ROCE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rte_mbuf;

/**
 * Initialise DPDK's EAL once for the process, the one place rocelab does so. Defaults:
 * --no-huge -m512 --no-pci --no-shconf --no-telemetry --force-max-simd-bitwidth=512, warning-level
 * logs, so it needs neither root nor hugepages and processes never share state. (DPDK 22.11
 * refuses --in-memory together with --no-huge.) @p user_args (may be NULL) are split on blanks
 * and appended; a user option that conflicts with a default drops that default (--huge-* or
 * --socket-mem: --no-huge and -m512; -m: -m512; -a/--allow/-b/--block: --no-pci; --file-prefix/--proc-type:
 * --no-shconf; --telemetry: --no-telemetry). "--pdump" (rocelab's, not DPDK's) drops --no-huge,
 * -m2048 and --no-shconf, adds --file-prefix=rocelab-PID and starts pdump (roce_capture.h).
 * Then selects the fastest CRC-32 path and logs which
 * it took.
 * @return 0; 0 again on later calls; -EINVAL (EAL refused the arguments, message logged)
 */
int roce_eal_init(const char *user_args);

/** True once roce_eal_init() has succeeded. */
bool roce_eal_ready(void);

/* ---- pcap files (io_pcap.c), through libpcap ---- */

struct roce_pcap_reader;
struct roce_pcap_writer;

/* One frame read from a capture; data is borrowed until the next roce_pcap_next(). */
struct roce_pcap_frame {
	uint64_t n;		/* frame number in the file, counting from 1 (before filtering) */
	uint64_t ts_ns;		/* timestamp, ns since the epoch (microsecond files scaled up) */
	uint32_t caplen;	/* bytes captured, in @data */
	uint32_t wirelen;	/* length on the wire */
	const uint8_t *data;	/* frame bytes, starting at the Ethernet header */
};

/**
 * Open a pcap or pcapng file for reading, with nanosecond timestamps. Only DLT_EN10MB frames are
 * returned; a file of another link type opens, and every read reports it (-ENOTSUP).
 * @param path  file name; "-" reads standard input
 * @param bpf   a libpcap filter expression applied to each frame, or NULL
 * @param err   receives a one-line message on failure (file name and reason)
 * @return a reader, or NULL with errno set (ENOENT, EINVAL for a bad file or filter, ...)
 */
struct roce_pcap_reader *roce_pcap_open(const char *path, const char *bpf, char *err, size_t errlen);

/**
 * Check a libpcap filter expression against Ethernet frames, without a file: for a command to
 * refuse a typo before it opens anything. @return 0, or -EINVAL with @p err set (libpcap's reason)
 */
int roce_bpf_check(const char *bpf, char *err, size_t errlen);

/**
 * Read the next frame that passes the filter.
 * @return 1 with @p f filled; 0 at the end of the file; -EBADMSG if the file is truncated or
 *         corrupt (roce_pcap_error() names the frame where it broke; the frames before it were
 *         returned normally); -ENOTSUP if the link type is not Ethernet
 */
int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_frame *f);

/** The last error as one line, naming the file and the frame. */
const char *roce_pcap_error(const struct roce_pcap_reader *r);

/**
 * Frames read so far, those the filter left out included, and in @p first_ns the first one's
 * timestamp (0 before any).
 */
uint64_t roce_pcap_frames_read(const struct roce_pcap_reader *r, uint64_t *first_ns);

/** Link type of the capture (DLT_*). */
int roce_pcap_linktype(const struct roce_pcap_reader *r);

/** Close; NULL is a no-op. */
void roce_pcap_close(struct roce_pcap_reader *r);

/**
 * Create a pcap file (LINKTYPE_ETHERNET, nanosecond resolution, snaplen 65535). The frames go
 * to a file beside @p path, renamed over it at roce_pcap_close_writer(); an existing @p path
 * that is not a regular, writable capture (or empty) file is refused (roce_file.h).
 * @param path  file name; "-" writes standard output
 * @return a writer, or NULL with errno set and @p err filled (-EEXIST: not a capture, see
 *         roce_out_force)
 */
struct roce_pcap_writer *roce_pcap_create(const char *path, char *err, size_t errlen);

/**
 * The same, keeping only the first @p snaplen bytes of each frame (as tcpdump -s does; the
 * record still gives the frame's length). @p snaplen 0 or above 65535: 65535.
 */
struct roce_pcap_writer *roce_pcap_create_snap(const char *path, uint32_t snaplen, char *err,
					       size_t errlen);

/** Append one frame. @return 0 or -EIO */
int roce_pcap_write(struct roce_pcap_writer *w, uint64_t ts_ns, const uint8_t *data, uint32_t len);

/**
 * Append a frame another capture already cut (libpcap's, a file's): f->caplen bytes of f->data,
 * cut again to the writer's snaplen, recorded with its length on the wire, f->wirelen, and its
 * time f->ts_ns. @p f is borrowed. @return 0 or -EIO
 */
int roce_pcap_write_frame(struct roce_pcap_writer *w, const struct roce_pcap_frame *f);

/**
 * Append one frame held in a (possibly chained) mbuf, its ICRC written first if it was left for
 * later (roce_wire_icrc_settle()). @return 0 or -EIO
 */
int roce_pcap_write_mbuf(struct roce_pcap_writer *w, uint64_t ts_ns, struct rte_mbuf *m);

/** Write out what is buffered. @return 0 or -EIO (this or an earlier write failed) */
int roce_pcap_flush_writer(struct roce_pcap_writer *w);

/**
 * Let the frames written from now on, whose times start again from 0 (the next run of a series
 * in virtual time), follow the last one written, @p gap_ns after it.
 */
void roce_pcap_writer_resume(struct roce_pcap_writer *w, uint64_t gap_ns);

/**
 * Why the file ends early: the errno of the first write that failed (ENOSPC, EIO, ...), with in
 * @p ts_ns (may be NULL) the time of the frame being written or flushed then: the file is cut at
 * or before it (stdio buffers frames), and none after it is written. 0 if none failed.
 */
int roce_pcap_writer_fault(const struct roce_pcap_writer *w, uint64_t *ts_ns);

/**
 * Flush, close and rename the file over its name; NULL is a no-op. A file cut by a failed write
 * keeps its frames before the cut. @return 0 or -EIO if a write failed on the way, or the name
 * became something that is not replaced (logged)
 */
int roce_pcap_close_writer(struct roce_pcap_writer *w);

/** Close and remove the file: its name keeps what it held before. NULL is a no-op. */
void roce_pcap_discard_writer(struct roce_pcap_writer *w);

/* ---- dissection output (io_dissect.c) and capture summaries (io_summary.c) ---- */

#include "roce_wire.h"

/**
 * The default one-line form of a frame and its newline: frame number (6 wide), UTC time of day,
 * then roce_pkt_snprint()'s summary.
 * @param f    the frame as read (number, time); borrowed
 * @param pkt  the result of roce_wire_parse() on f->data; borrowed
 * @return the length snprintf() would have written (output cut at @p size)
 */
int roce_dissect_line(char *out, size_t size, const struct roce_pcap_frame *f,
		      const struct roce_pkt *pkt);

/**
 * One frame as one JSON object and a newline, the contract of docs/dissect.md: n, ts_ns, len,
 * kind, then each header that was decoded (a header's key is absent when it is absent), and
 * error when parsing stopped on a fault. Integers are JSON numbers.
 * @param f    the frame as read (number, time, wire length); borrowed
 * @param pkt  the result of roce_wire_parse() on f->data; borrowed
 * @return the length snprintf() would have written (output cut at @p size)
 */
int roce_dissect_jsonl(char *out, size_t size, const struct roce_pcap_frame *f,
		       const struct roce_pkt *pkt);

/**
 * Every field of every decoded header, one header per line (first line: frame number, time
 * and lengths), each line ending in a newline.
 * @return the length snprintf() would have written (output cut at @p size)
 */
int roce_dissect_verbose(char *out, size_t size, const struct roce_pcap_frame *f,
			 const struct roce_pkt *pkt);

/**
 * "HH:MM:SS.nnnnnnnnn" (UTC time of day) of a timestamp, as the default one-line output shows it.
 * @return @p out
 */
char *roce_dissect_time(uint64_t ts_ns, char *out, size_t size);

/* NAK kinds counted per flow; AETH NAK codes (IBA 9.7.5.2.4) and the RNR NAK. */
enum roce_sum_nak {
	ROCE_SUM_NAK_SEQ,	/* NAK PSN sequence error */
	ROCE_SUM_NAK_RNR,	/* RNR NAK */
	ROCE_SUM_NAK_ACCESS,	/* NAK remote access error */
	ROCE_SUM_NAK_OP,	/* NAK remote operational error */
	ROCE_SUM_NAK_INV,	/* NAK invalid request or invalid RD request */
	ROCE_SUM_NAK_RSVD,	/* a syndrome IBA reserves: 0x40-0x5f, NAK codes 5-31 */
	ROCE_SUM_NAK_NUM,
};

/* One row of a summary: the frames of one flow (source, destination, destination QP). */
struct roce_flow_stats {
	uint8_t ip_ver;			/* 4 or 6 (RoCEv1: 6, the GIDs) */
	struct roce_ip_addr src;	/* source address, as in struct roce_pkt */
	struct roce_ip_addr dst;	/* destination address */
	uint32_t qpn;			/* destination QP of the flow's frames */
	const char *type;		/* "RC", "UC", "UD" or "CNP" (only CNPs seen) */
	uint64_t frames;		/* frames, all opcodes, with or without faults */
	uint64_t bytes;			/* their wire lengths */
	uint64_t payload;		/* payload bytes (without pad and ICRC) */
	uint64_t goodput_payload;	/* payload bytes of first copies (retransmissions left out) */
	uint64_t first_ns, last_ns;	/* time of the first and the last frame */
	bool has_psn;			/* psn_first/psn_last are valid */
	uint32_t psn_first;		/* PSN of the first request (or, without requests, response) */
	uint32_t psn_last;		/* highest PSN (modulo 2^24) of the same stream */
	uint64_t psn_gaps;		/* times a request PSN jumped past the next expected one */
	uint64_t psn_missing;		/* PSNs skipped by those jumps */
	uint64_t retrans;		/* request (or READ response) packets whose PSN was seen before */
	uint64_t nak[ROCE_SUM_NAK_NUM];	/* NAKs carried by this flow, by kind */
	uint64_t ecn_ce;		/* frames marked ECN CE */
	uint64_t cnp;			/* CNPs in this flow (they throttle the reverse direction) */
	uint64_t icrc_err;		/* frames whose ICRC did not match */
	uint64_t errors;		/* frames with another parse fault after the BTH */
	uint64_t open;			/* RC requests with no response covering them at the end */
	uint64_t hop_copies;		/* frames seen again at a later hop (a lower TTL): not counted */
};

/* PFC/PAUSE totals of a summary. */
struct roce_pause_stats {
	uint64_t pfc_frames[8];		/* PFC frames with the priority's class-enable bit set */
	uint64_t pfc_xon[8];		/* of those, quanta 0 (resume) */
	uint64_t paused_ns[8];		/* time paused per priority, at the summary's link speed */
	uint64_t pause_frames;		/* 802.3x PAUSE frames */
	uint64_t pause_ns;		/* time paused by them */
};

/* The CM messages a summary times, the index of roce_cm_conn_stats.first_ns[] and count[]. */
enum roce_sum_cm_msg {
	ROCE_SUM_CM_REQ,
	ROCE_SUM_CM_MRA,
	ROCE_SUM_CM_REJ,
	ROCE_SUM_CM_REP,
	ROCE_SUM_CM_RTU,
	ROCE_SUM_CM_DREQ,
	ROCE_SUM_CM_DREP,
	ROCE_SUM_CM_NUM,
};

/*
 * One connection the communication manager set up or tore down in a capture: the two sides
 * (address and communication ID), what the REQ and REP said, and when each message was seen.
 * The first side is the REQ's sender, or whichever side the capture saw first.
 */
struct roce_cm_conn_stats {
	uint8_t ip_ver;			/* 4 or 6 */
	struct roce_ip_addr addr[2];	/* each side's address */
	uint32_t id[2];			/* each side's local communication ID; [1] 0 until known */
	bool has_req;			/* the REQ was captured: side 0 is the active side */
	uint64_t service_id;		/* the REQ's, if has_req */
	uint32_t qpn[2];		/* each side's QPN, from the REQ and the REP (0: not seen) */
	uint32_t psn[2];		/* each side's starting PSN */
	uint64_t first_ns[ROCE_SUM_CM_NUM];	/* each message's first copy, by enum roce_sum_cm_msg */
	uint32_t count[ROCE_SUM_CM_NUM];	/* copies of each (resends; a DREQ from both sides) */
	uint16_t rej_reason;		/* the first REJ's reason */
};

struct roce_summary;

/**
 * Create an empty summary.
 * @param link_bps  link speed used to turn pause quanta (512 bit times) into time, e.g. 100e9
 * @return a summary, or NULL with errno set (EINVAL: link_bps 0; ENOMEM)
 */
struct roce_summary *roce_summary_create(uint64_t link_bps);

/**
 * Account one frame. Allocates only when a new flow appears (never per frame).
 * @param f    the frame (time, wire length); borrowed
 * @param pkt  its parse; borrowed
 * @return 0; -ENOMEM if a new flow could not be stored (the frame is counted in the totals only)
 */
int roce_summary_add(struct roce_summary *s, const struct roce_pcap_frame *f,
		     const struct roce_pkt *pkt);

/**
 * The whole file the frames came from, when a filter kept some out: its frame count and first
 * timestamp. Times are then counted from the file's first frame, and the frames line says how
 * many were left out.
 */
void roce_summary_set_file(struct roce_summary *s, uint64_t frames, uint64_t first_ns);

/** Number of flows so far. */
unsigned int roce_summary_nflows(const struct roce_summary *s);

/**
 * Flow @p i in order of first appearance, with its final values (open requests resolved).
 * @return a pointer valid until the next roce_summary_add() or destroy; NULL if out of range
 */
const struct roce_flow_stats *roce_summary_flow(struct roce_summary *s, unsigned int i);

/** The totals row: sums of every flow (addresses zero, type "all"). */
const struct roce_flow_stats *roce_summary_totals(struct roce_summary *s);

/** Number of CM connections so far (a UD SEND to QP 1 carrying a CM message opens one). */
unsigned int roce_summary_nconns(const struct roce_summary *s);

/**
 * CM connection @p i in order of first message.
 * @return a pointer valid until the next roce_summary_add() or destroy; NULL if out of range
 */
const struct roce_cm_conn_stats *roce_summary_conn(const struct roce_summary *s, unsigned int i);

/** PFC and PAUSE figures. */
const struct roce_pause_stats *roce_summary_pause(const struct roce_summary *s);

/**
 * Print the summary as a text table (docs/dissect.md): one row per flow, the totals row, then
 * the PFC/PAUSE figures, the count of frames that were not RoCE and the CM connections.
 * @return 0 or -EIO
 */
int roce_summary_print(struct roce_summary *s, FILE *out);

/** Destroy; NULL is a no-op. */
void roce_summary_destroy(struct roce_summary *s);

/* ---- DPDK ports (io_port.c) ---- */

#include "roce_engine.h"

/*
 * A real Ethernet port (any ethdev: net_af_packet, net_tap, net_memif, net_ring, a PCI NIC)
 * with one RX and one TX queue, seen by the rest of rocelab as the far end of a model link:
 * frames the link delivers to the port's roce_link_end leave with rte_eth_tx_burst, and an
 * engine poller (wall-clock mode) receives bursts and hands the RoCE ones (UDP 4791, PFC and
 * PAUSE frames) to the link through the same endpoint's pull queue. The port answers ARP for
 * the addresses given to roce_port_add_addr() and resolves peers' MACs, so the emulated NIC
 * behind the link needs no change to run on a wire.
 */
struct roce_port;

struct roce_port_conf {
	const char *devargs;	/* "net_af_packet0,iface=veth0", "0000:01:00.0", ...: what rte_dev_probe() takes */
	uint16_t nb_rxd;	/* RX descriptors; 0: 1024 */
	uint16_t nb_txd;	/* TX descriptors; 0: 1024 */
	bool no_promisc;	/* leave promiscuous mode off (default on: the port's MAC may be a borrowed one) */
	bool bridge;		/* a switch port: every received frame goes to the link whole, and
				 * no ARP or ND is answered */
};

/* Counters of a port: the ethdev's own, then the port's decisions. */
struct roce_port_stats {
	uint64_t ipackets;	/* ethdev: frames received */
	uint64_t opackets;	/* ethdev: frames sent */
	uint64_t ibytes;	/* ethdev: bytes received */
	uint64_t obytes;	/* ethdev: bytes sent */
	uint64_t imissed;	/* ethdev: frames the hardware dropped (RX queue full) */
	uint64_t ierrors;	/* ethdev: bad frames received */
	uint64_t oerrors;	/* ethdev: failed transmissions */
	uint64_t rx_roce;	/* RoCE, PFC and PAUSE frames handed to the link */
	uint64_t rx_arp;	/* ARP frames received */
	uint64_t rx_other;	/* frames for someone else, or neither RoCE nor ARP: dropped */
	uint64_t rx_queue_full;	/* RoCE frames dropped because the link had not pulled enough */
	uint64_t tx_frames;	/* frames handed to rte_eth_tx_burst and accepted */
	uint64_t tx_dropped;	/* frames the TX queue refused even after retrying, or whose
				   ICRC found no mbuf to be written in (roce_wire_icrc_fill()) */
	uint64_t tx_held;	/* times a gated sender was held back (roce_port_gate) */
	uint64_t arp_replies;	/* ARP replies sent for our addresses */
	uint64_t arp_requests;	/* ARP requests sent to resolve peers */
	uint64_t rx_nd;		/* IPv6 neighbour solicitations and advertisements received */
	uint64_t nd_replies;	/* neighbour advertisements sent for our addresses */
	uint64_t nd_requests;	/* neighbour solicitations sent to resolve peers */
	uint64_t os_rx_packets;	/* frames the kernel interface behind the port received since the
				 * port started (af_packet, tap), 0 without one: above ipackets,
				 * the rest were lost in the socket's ring (af_packet reports no
				 * imissed) or are still in it */
};

/**
 * Probe @p conf->devargs (rte_dev_probe; an already probed device is reused), configure one
 * RX queue (mbufs from @p eng's pool) and one TX queue, start it, and register a poller on
 * @p eng. Needs roce_eal_init(); run @p eng in ROCE_CLOCK_WALL mode.
 * @param err  receives one line naming the devargs and what failed
 * @return the port, or NULL with errno set (EINVAL: bad devargs or unknown driver; ENODEV: the
 *         probe made no ethdev; EIO: configuration failed; ENOMEM)
 */
struct roce_port *roce_port_open(struct roce_engine *eng, const struct roce_port_conf *conf,
				 char *err, size_t errlen);

/** Stop, close and unplug the port, unregister its poller, free queued frames. NULL is a no-op. */
void roce_port_close(struct roce_port *port);

/** The ethdev's name ("net_af_packet0"). */
const char *roce_port_name(const struct roce_port *port);

/** The port's MAC address. */
void roce_port_mac(const struct roce_port *port, uint8_t mac[6]);

/**
 * Link state and speed. An ethdev that reports no speed (or an unknown one) gets @p speed_bps 0.
 * @return 0 or -errno from the ethdev
 */
int roce_port_link(const struct roce_port *port, bool *up, uint64_t *speed_bps);

/**
 * The port's L3 MTU: the kernel interface's MTU for ethdevs backed by one (af_packet, tap),
 * whose ethdev MTU is a fixed 1500 whatever the interface allows; 9000 for memif, whose
 * frames are bounded only by its chainable buffers (give it bsize=8192 for 4 KiB frames in
 * one buffer); else the ethdev's MTU.
 */
uint32_t roce_port_mtu(const struct roce_port *port);

/** Set the ethdev's MTU. @return 0 or -errno (-EINVAL: above what the driver allows) */
int roce_port_set_mtu(struct roce_port *port, uint32_t mtu);

/** Read the counters. @return 0 or -errno from the ethdev */
int roce_port_stats(const struct roce_port *port, struct roce_port_stats *st);

/** Frames the port has received and sent, by its own counters (cheap): a poll loop's sign of work. */
uint64_t roce_port_frames(const struct roce_port *port);

/**
 * Answer ARP requests (IPv4) or neighbour solicitations (IPv6, RFC 4861) for @p ip with the
 * port's MAC; up to 4 addresses of each family. DAD probes are not answered.
 * @return 0; -ENOSPC (four already); -EAFNOSUPPORT (@p ip_ver neither 4 nor 6)
 */
int roce_port_add_addr(struct roce_port *port, const struct roce_ip_addr *ip, uint8_t ip_ver);

/**
 * The MAC of @p ip, from the port's cache (filled by ARP replies or neighbour advertisements,
 * and by requests the peer sent us). On a miss, send an ARP request or a neighbour
 * solicitation from our first address of that family (at most one per 100 ms per address)
 * and return -EAGAIN: run the engine and ask again.
 * @return 0 with @p mac filled; -EAGAIN; -EAFNOSUPPORT; -EADDRNOTAVAIL (no address of that
 *         family added yet)
 */
int roce_port_resolve(struct roce_port *port, const struct roce_ip_addr *ip, uint8_t ip_ver,
		      uint8_t mac[6]);

/** The endpoint to give roce_link_create() for this port (the far end of an emulated NIC). */
struct roce_link_end roce_port_link_end(struct roce_port *port);

/**
 * Backpressure from the device's TX queue to the sender on the other end of the port's link
 * (an emulated NIC, a switch port): the returned endpoint stands for @p sender and offers its
 * frames to the link only while the port's transmit buffer has room, as a NIC's DMA stops when
 * its send ring is full. Without it, a device slower than the speed it reports (memif,
 * af_packet) drops what it cannot take. The port kicks the link when room comes back. A device
 * whose link is down for 10 ms of holding, or that takes nothing for a second, is treated as
 * gone: the sender runs again and the port drops (tx_dropped) what does not fit.
 * Give the result to roce_link_create() in place of @p sender (copied; one sender per port).
 */
struct roce_link_end roce_port_gate(struct roce_port *port, const struct roce_link_end *sender);

/**
 * The link and direction the gated sender sends on, when it is not the port's own link (a
 * switch feeds the port through a link of its own; roce_port_attach() names the other one).
 * Default: the port's link, in the direction opposite to the port's.
 */
void roce_port_gate_link(struct roce_port *port, struct roce_link *link, int dir);

/** Send received RoCE frames through direction @p dir of @p link (the port's sending direction). */
void roce_port_attach(struct roce_port *port, struct roce_link *link, int dir);

/** Push buffered TX frames to the ethdev now (the poller does it on every engine iteration). */
void roce_port_flush(struct roce_port *port);

#endif /* ROCE_IO_H */
