/* lib/io: the edges of rocelab: DPDK EAL set-up, pcap files, ports. */
#ifndef ROCE_IO_H
#define ROCE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;

/**
 * Initialise DPDK's EAL once for the process, the one place rocelab does so. Defaults:
 * --no-huge -m512 --no-pci --no-shconf --no-telemetry --force-max-simd-bitwidth=512, warning-level
 * logs, so it needs neither root nor hugepages and processes never share state. (DPDK 22.11
 * refuses --in-memory together with --no-huge.) @p user_args (may be NULL) are split on blanks
 * and appended; a user option that conflicts with a default drops that default (--huge-* or
 * --socket-mem: --no-huge and -m512; -m: -m512; -a/--allow/-b/--block: --no-pci; --file-prefix/--proc-type:
 * --no-shconf; --telemetry: --no-telemetry). Then selects the fastest CRC-32 path and logs which
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
 * Read the next frame that passes the filter.
 * @return 1 with @p f filled; 0 at the end of the file; -EBADMSG if the file is truncated or
 *         corrupt (roce_pcap_error() names the frame where it broke; the frames before it were
 *         returned normally); -ENOTSUP if the link type is not Ethernet
 */
int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_frame *f);

/** The last error as one line, naming the file and the frame. */
const char *roce_pcap_error(const struct roce_pcap_reader *r);

/** Link type of the capture (DLT_*). */
int roce_pcap_linktype(const struct roce_pcap_reader *r);

/** Close; NULL is a no-op. */
void roce_pcap_close(struct roce_pcap_reader *r);

/**
 * Create a pcap file (LINKTYPE_ETHERNET, nanosecond resolution, snaplen 65535).
 * @param path  file name; "-" writes standard output
 * @return a writer, or NULL with errno set and @p err filled
 */
struct roce_pcap_writer *roce_pcap_create(const char *path, char *err, size_t errlen);

/** Append one frame. @return 0 or -EIO */
int roce_pcap_write(struct roce_pcap_writer *w, uint64_t ts_ns, const uint8_t *data, uint32_t len);

/** Append one frame held in a (possibly chained) mbuf. @return 0 or -EIO */
int roce_pcap_write_mbuf(struct roce_pcap_writer *w, uint64_t ts_ns, const struct rte_mbuf *m);

/** Flush and close; NULL is a no-op. @return 0 or -EIO if a write failed on the way */
int roce_pcap_close_writer(struct roce_pcap_writer *w);

#endif /* ROCE_IO_H */
