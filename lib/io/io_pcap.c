/* pcap and pcapng files through libpcap: a nanosecond reader with a BPF filter, and a writer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include "roce_common.h"
#include "roce_file.h"
#include "roce_io.h"

#define PCAP_SNAPLEN 65535	/* what the writer declares; frames longer are cut */
#define WRITE_BUF_SIZE (1u << 20)	/* a capture file's stdio buffer */
/*
 * stdio buffer under libpcap: 4 KiB reads cost a syscall each; each page of the buffer costs a
 * page fault when the first read fills it (1 MiB: 256 of them, for 4x fewer reads than this)
 */
#define READ_BUF_SIZE (1u << 18)
#define ERR_LEN 1024		/* room for a path twice (see libpcap_limit()) */
#define ETH_HDR_LEN 14		/* destination, source, Ethertype */

/* pcapng (draft-ietf-opsawg-pcapng section 4): what the walk for an empty file reads */
#define PCAPNG_SHB 0x0a0d0d0au	/* Section Header Block: the same in either byte order */
#define PCAPNG_BOM 0x1a2b3c4du	/* its byte-order magic */
#define PCAPNG_SHB_MIN 28	/* block header, magic, version, section length, trailer */
#define PCAPNG_IDB 1u		/* Interface Description Block */
#define PCAPNG_PB 2u		/* obsolete Packet Block */
#define PCAPNG_SPB 3u		/* Simple Packet Block */
#define PCAPNG_EPB 6u		/* Enhanced Packet Block */
/*
 * libpcap 1.10's words for a pcapng with no interface, and for the two things its pcapng reader
 * keeps one of a file: the link type and the snapshot length of its first interface
 */
#define NO_IDB_MSG "the capture file has no Interface Description Blocks"
#define LINKTYPE_MSG_HEAD "an interface has a type "
#define LINKTYPE_MSG_TAIL " different from the type of the first interface"
#define SNAPLEN_MSG_HEAD "an interface has a snapshot length "
#define SNAPLEN_MSG_TAIL " different from the snapshot length of the first interface"
/* ... and for a block too long: what a section in the other byte order looks like to it */
#define BLOCKSIZE_MSG_HEAD "pcapng block size "

struct roce_pcap_reader {
	pcap_t *p;			/* libpcap's handle, nanosecond precision */
	struct bpf_program prog;	/* compiled filter, valid if has_prog */
	bool has_prog;			/* a filter was given */
	int linktype;			/* DLT_* of the frames returned */
	int cooked;			/* DLT_LINUX_SLL(2) of a file read as Ethernet, or 0 */
	int file_linktype;		/* DLT_* of the file's (first) interface */
	bool empty;			/* a pcapng without interfaces: no frames to read */
	bool from_stdin;		/* path "-" */
	uint8_t *eth;			/* a cooked frame as Ethernet */
	size_t eth_cap;
	int sticky;			/* once the file broke, every read returns this */
	uint64_t n;			/* frames read so far, before filtering */
	uint64_t first_ns;		/* the first one's timestamp */
	char path[256];			/* for messages */
	char err[ERR_LEN];		/* last error, one line */
	char buf[READ_BUF_SIZE];	/* the file's stdio buffer; libpcap reads through it */
};

struct roce_pcap_writer {
	pcap_t *p;			/* a dead handle that only carries the file header */
	pcap_dumper_t *d;		/* the file */
	int failed;			/* errno of the first write that failed, or 0 */
	uint64_t failed_ns;		/* the time of the first frame not written whole */
	uint64_t last_ns;		/* the time of the last frame given */
	uint64_t base_ns;		/* added to every time: roce_pcap_writer_resume() */
	uint32_t snaplen;		/* bytes kept of a frame; the rest only counted */
	char *wbuf;			/* the file's stdio buffer (glibc ignores a size alone) */
	struct roce_out out;		/* written beside the target, renamed over it at close */
	uint8_t buf[PCAP_SNAPLEN];	/* flattens chained mbufs; allocated once */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* libpcap's messages say "No such file or directory" etc.; map the common ones to errno. */
static int open_errno(const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return EINVAL;
	f = fopen(path, "rb");
	if (f == NULL)
		return errno;
	fclose(f);
	return EINVAL;	/* readable, but not a capture libpcap understands */
}

int roce_bpf_check(const char *bpf, char *err, size_t errlen)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	struct bpf_program prog;
	int rc = 0;

	if (p == NULL) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (pcap_compile(p, &prog, bpf, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		set_err(err, errlen, "%s", pcap_geterr(p));
		rc = -EINVAL;
	} else {
		pcap_freecode(&prog);
	}
	pcap_close(p);
	return rc;
}

/* A pcapng field in its section's byte order (big-endian if @p be). */
static uint16_t ng16(const uint8_t *b, bool be)
{
	return be ? (uint16_t)(b[0] << 8 | b[1]) : (uint16_t)(b[1] << 8 | b[0]);
}

static uint32_t ng32(const uint8_t *b, bool be)
{
	return be ? (uint32_t)ng16(b, true) << 16 | ng16(b + 2, true) :
		    (uint32_t)ng16(b + 2, false) << 16 | ng16(b, false);
}

/*
 * Is @p fp, from where it is, a pcapng file of sections with neither an interface nor a
 * packet, whole to its end? Each block is read by its length fields (which must agree),
 * in the byte order of the section it is in; libpcap refuses such a file, tshark reads
 * it as empty. @return true only for such a file; false with @p why set if a block is
 * damaged (which libpcap may not have seen), false with it empty for any other file
 */
static bool pcapng_walk_empty(FILE *fp, char *why, size_t whylen)
{
	uint8_t h[16], t[4];
	bool be = false;

	why[0] = '\0';
	for (bool first = true;; first = false) {
		off_t at = ftello(fp);
		size_t got = fread(h, 1, 8, fp);
		uint32_t type, len;

		if (got == 0 && !first)
			return feof(fp) && !ferror(fp);	/* a clean end between blocks */
		if (got != 8)
			goto cut;
		type = ng32(h, false);
		if (type == PCAPNG_SHB) {
			if (fread(h + 8, 1, 8, fp) != 8)
				goto cut;
			if (ng32(h + 8, false) == PCAPNG_BOM)
				be = false;
			else if (ng32(h + 8, true) == PCAPNG_BOM)
				be = true;
			else
				return false;
			/* the versions libpcap reads: 1.0, and 1.2 as 1.0 */
			if (ng16(h + 12, be) != 1 || (ng16(h + 14, be) != 0 && ng16(h + 14, be) != 2))
				return false;
		} else if (first || type == PCAPNG_IDB || type == PCAPNG_PB ||
			   type == PCAPNG_SPB || type == PCAPNG_EPB) {
			return false;
		}
		len = ng32(h + 4, be);
		if (len % 4 != 0 || len < (type == PCAPNG_SHB ? PCAPNG_SHB_MIN : 12u)) {
			snprintf(why, whylen, "the block at byte %lld has a length of %u",
				 (long long)at, len);
			return false;
		}
		/* the body not read yet, up to the trailing length */
		if (fseeko(fp, (off_t)len - (type == PCAPNG_SHB ? 16 : 8) - 4, SEEK_CUR) != 0 ||
		    fread(t, 1, 4, fp) != 4)
			goto cut;
		if (ng32(t, be) != len) {
			snprintf(why, whylen, "the block at byte %lld has lengths %u and %u",
				 (long long)at, len, ng32(t, be));
			return false;
		}
		continue;
cut:
		snprintf(why, whylen, "the block at byte %lld is cut short", (long long)at);
		return false;
	}
}

/*
 * libpcap could not open @p fp, first read at @p start (-1: a pipe): is it an empty pcapng,
 * to read as an empty Ethernet capture? Where the stream cannot go back, libpcap's own walk
 * is what there is: it says @p ebuf's words only on reaching a clean end without an interface.
 * Where it can, ours decides, and a damage libpcap did not see replaces its words in @p ebuf.
 */
static bool pcapng_empty(FILE *fp, off_t start, char *ebuf)
{
	char why[128];

	if (start < 0 || fseeko(fp, start, SEEK_SET) != 0)
		return strcmp(ebuf, NO_IDB_MSG) == 0;
	clearerr(fp);
	if (pcapng_walk_empty(fp, why, sizeof(why)))
		return true;
	if (why[0] != '\0' && strcmp(ebuf, NO_IDB_MSG) == 0)
		snprintf(ebuf, PCAP_ERRBUF_SIZE, "pcapng file damaged: %s", why);
	return false;
}

struct roce_pcap_reader *roce_pcap_open(const char *path, const char *bpf, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct roce_pcap_reader *r;
	bool from_stdin;
	off_t start;
	FILE *fp;
	int e;

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		set_err(err, errlen, "%s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	from_stdin = strcmp(path, "-") == 0;
	snprintf(r->path, sizeof(r->path), "%s", from_stdin ? "<stdin>" : path);
	fp = from_stdin ? stdin : fopen(path, "rb");
	if (fp == NULL) {
		e = errno;
		set_err(err, errlen, "%s: %s", r->path, strerror(e));
		goto err_free;
	}
	if (!from_stdin)	/* stdin outlives the reader, and so would its buffer */
		setvbuf(fp, r->buf, _IOFBF, sizeof(r->buf));
	r->from_stdin = from_stdin;
	start = ftello(fp);
	/* from here pcap_close() closes fp */
	r->p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (r->p == NULL && pcapng_empty(fp, start, ebuf)) {
		if (!from_stdin)
			fclose(fp);
		/* a handle without a file: the filter compiles against it, nothing is read */
		r->empty = true;
		r->p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, PCAP_SNAPLEN,
							   PCAP_TSTAMP_PRECISION_NANO);
		if (r->p == NULL) {
			set_err(err, errlen, "%s: out of memory", r->path);
			e = ENOMEM;
			goto err_free;
		}
	} else if (r->p == NULL) {
		if (!from_stdin)
			fclose(fp);
		e = open_errno(path);
		/* libpcap already names the file in most messages; keep ours uniform */
		set_err(err, errlen, "%s: %s", r->path, e == EINVAL ? ebuf : strerror(e));
		goto err_free;
	}
	r->linktype = pcap_datalink(r->p);
	r->file_linktype = r->linktype;
	if (r->linktype == DLT_LINUX_SLL || r->linktype == DLT_LINUX_SLL2) {
		r->cooked = r->linktype;	/* tcpdump -i any: read as Ethernet (cooked()) */
		r->linktype = DLT_EN10MB;
	}
	if (bpf != NULL && bpf[0] != '\0') {
		if (pcap_compile(r->p, &r->prog, bpf, 1, PCAP_NETMASK_UNKNOWN) != 0) {
			set_err(err, errlen, "%s: bad filter '%s': %s", r->path, bpf,
				pcap_geterr(r->p));
			e = EINVAL;
			goto err_close;
		}
		r->has_prog = true;
	}
	if (r->linktype != DLT_EN10MB) {
		const char *name = pcap_datalink_val_to_name(r->linktype);

		snprintf(r->err, sizeof(r->err), "%s: link type %d (%s) is not Ethernet: nothing decoded",
			 r->path, r->linktype, name != NULL ? name : "unknown");
		r->sticky = -ENOTSUP;
	}
	return r;

err_close:
	pcap_close(r->p);
err_free:
	free(r);
	errno = e;
	return NULL;
}

/*
 * A "cooked" frame of Linux's any device (DLT_LINUX_SLL: 16 bytes before the network layer,
 * DLT_LINUX_SLL2: 20) as an Ethernet frame, as Wireshark shows the layers above it: the source
 * address the capture kept (the sender's MAC for Ethernet devices), a destination it did not
 * keep (zero), and the protocol as the Ethertype. @return 0, or -ENOMEM
 */
static int cooked(struct roce_pcap_reader *r, struct roce_pcap_frame *f)
{
	bool v2 = r->cooked == DLT_LINUX_SLL2;
	uint32_t hdr = v2 ? 20 : 16, body = f->caplen > hdr ? f->caplen - hdr : 0;
	const uint8_t *c = f->data;
	uint8_t halen;

	if (r->eth_cap < (size_t)body + ETH_HDR_LEN) {
		size_t cap = ROCE_MAX((size_t)body + ETH_HDR_LEN, 2 * r->eth_cap);
		uint8_t *n = realloc(r->eth, cap);

		if (n == NULL)
			return -ENOMEM;
		r->eth = n;
		r->eth_cap = cap;
	}
	memset(r->eth, 0, ETH_HDR_LEN);	/* too short a header: Ethertype 0, not RoCE */
	if (f->caplen >= hdr) {
		halen = v2 ? c[11] : c[5];
		if (halen == 6)
			memcpy(r->eth + 6, c + (v2 ? 12 : 6), 6);
		memcpy(r->eth + 12, c + (v2 ? 0 : 14), 2);
		memcpy(r->eth + ETH_HDR_LEN, c + hdr, body);
	}
	f->data = r->eth;
	f->caplen = body + ETH_HDR_LEN;
	f->wirelen = (f->wirelen > hdr ? f->wirelen - hdr : 0) + ETH_HDR_LEN;
	return 0;
}

/* A link type's name, where LINKTYPE_ and DLT_ values agree (below 11, from 104 on), or "?". */
static const char *linktype_name(unsigned long lt)
{
	const char *name = lt < 11 || (lt >= 104 && lt <= INT16_MAX) ?
			   pcap_datalink_val_to_name((int)lt) : NULL;

	return name != NULL ? name : "?";
}

/* The number in libpcap's message @p msg between @p head and @p tail. @return false if not that */
static bool msg_number(const char *msg, const char *head, const char *tail, unsigned long *val)
{
	const char *num = msg + strlen(head);
	char *end;

	if (strncmp(msg, head, strlen(head)) != 0 || *num < '0' || *num > '9')
		return false;
	errno = 0;
	*val = strtoul(num, &end, 10);
	return errno == 0 && strcmp(end, tail) == 0;
}

/*
 * libpcap's error @p msg, when it is the one for an interface of a second link type or of a
 * second snapshot length: what the file is and what to do, in r->err. Such a file is whole
 * (tshark -w pcapng keeps every interface and dumpcap takes -s per interface); only libpcap's
 * reader holds one of each a file. @return true if it was one of those errors
 */
static bool libpcap_limit(struct roce_pcap_reader *r, const char *msg)
{
	const char *src = r->from_stdin ? "-" : r->path;
	unsigned long val;

	if (msg_number(msg, LINKTYPE_MSG_HEAD, LINKTYPE_MSG_TAIL, &val))
		snprintf(r->err, sizeof(r->err),
			 "%s: frame %llu: an interface of link type %lu (%s) after one of link type "
			 "%d (%s): libpcap reads one link type a file; split it first, e.g. "
			 "tshark -r %s -Y frame.interface_id==0 -F pcap -w out.pcap",
			 r->path, (unsigned long long)r->n + 1, val, linktype_name(val),
			 r->file_linktype, linktype_name((unsigned long)r->file_linktype), src);
	else if (msg_number(msg, SNAPLEN_MSG_HEAD, SNAPLEN_MSG_TAIL, &val))
		snprintf(r->err, sizeof(r->err),
			 "%s: frame %llu: an interface of snapshot length %lu after one of %d: "
			 "libpcap reads one snapshot length a file; convert it first, e.g. "
			 "editcap -F pcap %s out.pcap",
			 r->path, (unsigned long long)r->n + 1, val, pcap_snapshot(r->p), src);
	else
		return false;
	return true;
}

/*
 * libpcap's error @p msg, when it is a section in the other byte order: libpcap reads one byte
 * order a file, so it reads the new Section Header Block's length in the old one and calls the
 * block too long. The four bytes after that header (libpcap's read stopped there) are the new
 * section's byte-order magic: if they say so, r->err says what the file is and how to convert
 * it (tshark and editcap read such a file: sections are independent, and `cat a.pcapng
 * b.pcapng` of captures from two hosts makes one). @return true if it was that
 */
static bool libpcap_byte_order(struct roce_pcap_reader *r, const char *msg)
{
	bool host_be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	bool be = (pcap_is_swapped(r->p) != 0) != host_be;	/* the sections read so far */
	FILE *fp = pcap_file(r->p);
	uint8_t bom[4];

	if (strncmp(msg, BLOCKSIZE_MSG_HEAD, strlen(BLOCKSIZE_MSG_HEAD)) != 0 || fp == NULL ||
	    fread(bom, 1, sizeof(bom), fp) != sizeof(bom) || ng32(bom, !be) != PCAPNG_BOM)
		return false;
	snprintf(r->err, sizeof(r->err),
		 "%s: frame %llu: a pcapng section in %s byte order after one in %s: libpcap reads "
		 "one byte order a file; rewrite it in one first, e.g. editcap -F pcapng %s "
		 "out.pcapng", r->path, (unsigned long long)r->n + 1,
		 be ? "little-endian" : "big-endian", be ? "big-endian" : "little-endian",
		 r->from_stdin ? "-" : r->path);
	return true;
}

int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_frame *f)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;

	if (r->sticky != 0)
		return r->sticky;
	if (r->empty)
		return 0;
	for (;;) {
		rc = pcap_next_ex(r->p, &h, &data);
		if (rc == PCAP_ERROR_BREAK)
			return 0;	/* end of file */
		if (rc != 1) {
			if (!libpcap_limit(r, pcap_geterr(r->p)) &&
			    !libpcap_byte_order(r, pcap_geterr(r->p)))
				snprintf(r->err, sizeof(r->err),
					 "%s: frame %llu: file truncated or corrupt: %s", r->path,
					 (unsigned long long)r->n + 1, pcap_geterr(r->p));
			r->sticky = -EBADMSG;
			return r->sticky;
		}
		f->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
		if (r->n++ == 0)
			r->first_ns = f->ts_ns;
		if (r->has_prog && pcap_offline_filter(&r->prog, h, data) == 0)
			continue;
		f->n = r->n;
		f->caplen = h->caplen;
		f->wirelen = h->len;
		f->data = data;
		if (r->cooked != 0 && cooked(r, f) != 0) {
			snprintf(r->err, sizeof(r->err), "%s: frame %llu: out of memory", r->path,
				 (unsigned long long)r->n);
			r->sticky = -ENOMEM;
			return r->sticky;
		}
		return 1;
	}
}

const char *roce_pcap_error(const struct roce_pcap_reader *r)
{
	return r->err;
}

uint64_t roce_pcap_frames_read(const struct roce_pcap_reader *r, uint64_t *first_ns)
{
	*first_ns = r->first_ns;
	return r->n;
}

int roce_pcap_linktype(const struct roce_pcap_reader *r)
{
	return r->linktype;
}

void roce_pcap_close(struct roce_pcap_reader *r)
{
	if (r == NULL)
		return;
	if (r->has_prog)
		pcap_freecode(&r->prog);
	pcap_close(r->p);
	free(r->eth);
	free(r);
}

struct roce_pcap_writer *roce_pcap_create(const char *path, char *err, size_t errlen)
{
	return roce_pcap_create_snap(path, 0, err, errlen);
}

struct roce_pcap_writer *roce_pcap_create_snap(const char *path, uint32_t snaplen, char *err,
					       size_t errlen)
{
	struct roce_pcap_writer *w;
	FILE *fp;
	int e;

	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		set_err(err, errlen, "%s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	w->snaplen = snaplen == 0 || snaplen > PCAP_SNAPLEN ? PCAP_SNAPLEN : snaplen;
	w->p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)w->snaplen,
						   PCAP_TSTAMP_PRECISION_NANO);
	if (w->p == NULL) {
		set_err(err, errlen, "%s: libpcap cannot create a capture handle", path);
		e = ENOMEM;
		goto err_free;
	}
	if (strcmp(path, "-") == 0) {
		errno = 0;
		w->d = pcap_dump_open(w->p, path);
		if (w->d == NULL) {
			e = errno != 0 ? errno : EIO;
			set_err(err, errlen, "%s: cannot create: %s", path, pcap_geterr(w->p));
			goto err_close;
		}
		return w;
	}
	/* never over a link, a device or a file that is not a capture (roce_file.h) */
	if (roce_out_open(&w->out, path, ROCE_OUT_PCAP, err, errlen) != 0) {
		e = errno;
		goto err_close;
	}
	fp = w->out.f;
	/* a file of its own buffer: stdio's 4 KiB made a write(2) every four frames */
	w->wbuf = malloc(WRITE_BUF_SIZE);
	if (w->wbuf != NULL)
		setvbuf(fp, w->wbuf, _IOFBF, WRITE_BUF_SIZE);
	w->d = pcap_dump_fopen(w->p, fp);
	if (w->d == NULL) {
		e = errno != 0 ? errno : EIO;
		set_err(err, errlen, "%s: cannot write: %s", path, pcap_geterr(w->p));
		roce_out_discard(&w->out);
		free(w->wbuf);
		goto err_close;
	}
	return w;

err_close:
	pcap_close(w->p);
err_free:
	free(w);
	errno = e;
	return NULL;
}

static int dump(struct roce_pcap_writer *w, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
		uint32_t len)
{
	struct pcap_pkthdr h;

	w->last_ns = ts_ns;
	if (w->failed != 0)	/* the file ends at the first failure: no gap mid-file */
		return -EIO;
	ts_ns += w->base_ns;
	h.ts.tv_sec = (time_t)(ts_ns / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000ull);	/* ns: the handle is nano */
	h.caplen = caplen;
	h.len = len;
	errno = 0;
	pcap_dump((u_char *)w->d, &h, data);
	if (ferror(pcap_dump_file(w->d))) {
		w->failed = errno != 0 ? errno : EIO;
		w->failed_ns = ts_ns;
		return -EIO;
	}
	return 0;
}

int roce_pcap_write(struct roce_pcap_writer *w, uint64_t ts_ns, const uint8_t *data, uint32_t len)
{
	return dump(w, ts_ns, data, ROCE_MIN(len, w->snaplen), len);
}

int roce_pcap_write_frame(struct roce_pcap_writer *w, const struct roce_pcap_frame *f)
{
	return dump(w, f->ts_ns, f->data, ROCE_MIN(f->caplen, w->snaplen),
		    ROCE_MAX(f->wirelen, f->caplen));
}

int roce_pcap_write_mbuf(struct roce_pcap_writer *w, uint64_t ts_ns, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t caplen = ROCE_MIN(len, w->snaplen);
	uint32_t off = 0;

	if (w->failed != 0) {
		w->last_ns = ts_ns;
		return -EIO;
	}
	/* the bytes kept reach the ICRC */
	if (caplen + ROCE_ICRC_LEN > len && roce_unlikely(roce_wire_icrc_settle(m) != 0) &&
	    len <= sizeof(w->buf) && rte_pktmbuf_read(m, 0, len, w->buf) == w->buf) {
		/* no segment free to write it in the frame: it is written in the copy */
		roce_wire_icrc_put(w->buf, len);
		return dump(w, ts_ns, w->buf, caplen, len);
	}
	if (m->nb_segs == 1 || rte_pktmbuf_data_len(m) >= caplen)
		return dump(w, ts_ns, rte_pktmbuf_mtod(m, const uint8_t *), caplen, len);
	for (const struct rte_mbuf *s = m; s != NULL && off < caplen; s = s->next) {
		uint32_t n = ROCE_MIN((uint32_t)rte_pktmbuf_data_len(s), caplen - off);

		memcpy(w->buf + off, rte_pktmbuf_mtod(s, const uint8_t *), n);
		off += n;
	}
	return dump(w, ts_ns, w->buf, off, len);
}

int roce_pcap_flush_writer(struct roce_pcap_writer *w)
{
	if (w->failed == 0) {
		errno = 0;
		if (pcap_dump_flush(w->d) != 0 || ferror(pcap_dump_file(w->d))) {
			w->failed = errno != 0 ? errno : EIO;
			w->failed_ns = w->base_ns + w->last_ns;	/* somewhere in the buffer: the last */
		}
	}
	return w->failed != 0 ? -EIO : 0;
}

void roce_pcap_writer_resume(struct roce_pcap_writer *w, uint64_t gap_ns)
{
	w->base_ns += w->last_ns + gap_ns;
	w->last_ns = 0;
}

int roce_pcap_writer_fault(const struct roce_pcap_writer *w, uint64_t *ts_ns)
{
	if (ts_ns != NULL)
		*ts_ns = w->failed_ns;
	return w->failed;
}

/* Close the file; then keep it under its name (@p keep), or remove it. */
static int close_writer(struct roce_pcap_writer *w, bool keep)
{
	char err[ERR_LEN];
	int rc = 0;

	if (roce_pcap_flush_writer(w) != 0)
		rc = -EIO;
	pcap_dump_close(w->d);	/* closes the file, then its buffer can go */
	w->out.f = NULL;
	if (w->out.tmp[0] == '\0') {
		/* standard output (libpcap's own, closed above) */
	} else if (!keep) {
		roce_out_discard(&w->out);
	} else if (roce_out_commit(&w->out, err, sizeof(err)) != 0) {
		/* the name turned into a link or a FIFO while we wrote: say why it is missing */
		ROCE_LOG(ERR, "%s", err);
		rc = -EIO;
	}
	pcap_close(w->p);
	free(w->wbuf);
	free(w);
	return rc;
}

int roce_pcap_close_writer(struct roce_pcap_writer *w)
{
	/* a file cut by a write error keeps the frames before the cut (roce_pcap_writer_fault) */
	return w == NULL ? 0 : close_writer(w, true);
}

void roce_pcap_discard_writer(struct roce_pcap_writer *w)
{
	if (w != NULL)
		close_writer(w, false);
}
