/*
 * Check suite 'io': pcap read/write, the jsonl contract, the capture summary and the capture of
 * a kernel interface.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "roce_capture.h"
#include "roce_file.h"
#include "roce_ibdev.h"
#include "roce_io.h"
#include "roce_mad.h"
#include "roce_wire.h"

#ifndef SHARED_PCAP
#define SHARED_PCAP "../shared/pcap"
#endif

static char tmpdir[] = "/tmp/test_io.XXXXXX";

static void tmp_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

/* A RoCEv2 frame of @p op with @p psn and @p payload bytes, built by lib/wire. */
static int make_frame(uint8_t *buf, uint32_t size, uint8_t op, uint32_t psn, uint32_t payload)
{
	struct roce_pkt p;

	roce_pkt_init(&p, ROCE_KIND_ROCEV2, op);
	p.dqpn = 0x11;
	p.psn = psn;
	p.payload_len = payload;
	return roce_wire_build(&p, 0, buf, size);
}

/* Write @p n WRITE_ONLY frames with ns timestamps 1_000_000_000 + i * 1001 + 7. */
static void write_frames(const char *path, int n)
{
	struct roce_pcap_writer *w;
	uint8_t buf[2048];
	char err[256];

	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	for (int i = 0; i < n; i++) {
		int len = make_frame(buf, sizeof(buf), ROCE_OP_RC_RDMA_WRITE_ONLY, 100 + i, 64 + i);

		ck_assert_int_gt(len, 0);
		ck_assert_int_eq(roce_pcap_write(w, 1000000000ull + i * 1001ull + 7, buf,
						 (uint32_t)len), 0);
	}
	ck_assert_int_eq(roce_pcap_close_writer(w), 0);
}

/* ---- pcap ---- */

START_TEST(pcap_round_trip_ns)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	char path[256], err[256];
	int i = 0;

	tmp_path(path, sizeof(path), "rt.pcap");
	write_frames(path, 5);
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_linktype(r), DLT_EN10MB);
	while (roce_pcap_next(r, &f) == 1) {
		ck_assert_uint_eq(f.n, (uint64_t)i + 1);
		ck_assert_uint_eq(f.ts_ns, 1000000000ull + i * 1001ull + 7);	/* ns kept */
		ck_assert_uint_eq(f.caplen, f.wirelen);
		ck_assert_int_eq(roce_wire_parse(f.data, f.caplen, 0, &pkt), 0);
		ck_assert_uint_eq(pkt.psn, 100u + (uint32_t)i);
		ck_assert_uint_eq(pkt.payload_len, 64u + (uint32_t)i);
		i++;
	}
	ck_assert_int_eq(i, 5);
	ck_assert_int_eq(roce_pcap_next(r, &f), 0);
	roce_pcap_close(r);
	roce_pcap_close(NULL);
	ck_assert_int_eq(roce_pcap_close_writer(NULL), 0);
}
END_TEST

START_TEST(pcap_bpf_keeps_numbers)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	char path[256], err[256];
	int got = 0;

	tmp_path(path, sizeof(path), "bpf.pcap");
	write_frames(path, 6);
	/* frame lengths: 14+20+8+12+16(RETH)+64+i+pad+4; keep the even-numbered frames by length */
	r = roce_pcap_open(path, "len >= 140", err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while (roce_pcap_next(r, &f) == 1) {
		ck_assert_uint_ge(f.wirelen, 140);
		ck_assert_uint_ge(f.n, 2);	/* numbering counts the frames filtered out */
		got++;
	}
	ck_assert_int_gt(got, 0);
	ck_assert_int_lt(got, 6);
	roce_pcap_close(r);

	errno = 0;
	r = roce_pcap_open(path, "udp port nosuchport", err, sizeof(err));
	ck_assert_ptr_null(r);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "bad filter") != NULL, "%s", err);
}
END_TEST

START_TEST(pcap_truncated_after_good_frames)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	char path[256], err[256];
	struct stat st;
	int rc, good = 0;

	tmp_path(path, sizeof(path), "trunc.pcap");
	write_frames(path, 5);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 20), 0);	/* cut inside frame 5 */
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while ((rc = roce_pcap_next(r, &f)) == 1)
		good++;
	ck_assert_int_eq(good, 4);
	ck_assert_int_eq(rc, -EBADMSG);
	ck_assert_msg(strstr(roce_pcap_error(r), "frame 5") != NULL, "%s", roce_pcap_error(r));
	ck_assert_msg(strstr(roce_pcap_error(r), path) != NULL, "%s", roce_pcap_error(r));
	ck_assert_int_eq(roce_pcap_next(r, &f), -EBADMSG);	/* stays broken */
	roce_pcap_close(r);
}
END_TEST

START_TEST(pcap_bad_files)
{
	char path[256], err[256];
	pcap_dumper_t *d;
	pcap_t *dead;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	FILE *fp;

	errno = 0;
	ck_assert_ptr_null(roce_pcap_open("/nonexistent/x.pcap", NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/x.pcap") != NULL, "%s", err);

	tmp_path(path, sizeof(path), "garbage.pcap");
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("this is not a capture file at all\n", fp);
	fclose(fp);
	errno = 0;
	ck_assert_ptr_null(roce_pcap_open(path, NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);

	/* a raw-IP capture opens, and every read says -ENOTSUP */
	tmp_path(path, sizeof(path), "raw.pcap");
	dead = pcap_open_dead(DLT_RAW, 65535);
	d = pcap_dump_open(dead, path);
	ck_assert_ptr_nonnull(d);
	pcap_dump_close(d);
	pcap_close(dead);
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_next(r, &f), -ENOTSUP);
	ck_assert_msg(strstr(roce_pcap_error(r), "not Ethernet") != NULL, "%s", roce_pcap_error(r));
	roce_pcap_close(r);
}
END_TEST

/* ---- pcapng files, written block by block (draft-ietf-opsawg-pcapng section 4) ---- */

struct ng {
	uint8_t b[4096];	/* the file */
	size_t len;
	bool be;		/* the section's byte order */
};

static void ng_put(struct ng *g, uint32_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		g->b[g->len++] = (uint8_t)(g->be ? v >> 8 * (size - 1 - i) : v >> 8 * i);
}

/* A block of @p type around @p body (padded to 4 bytes); its trailing length is @p trail, or right. */
static void ng_block(struct ng *g, uint32_t type, const uint8_t *body, size_t n, uint32_t trail)
{
	uint32_t total = 12 + (uint32_t)(n + 3) / 4 * 4;

	ng_put(g, type, 4);
	ng_put(g, total, 4);
	memcpy(g->b + g->len, body, n);
	memset(g->b + g->len + n, 0, total - 12 - n);
	g->len += total - 12;
	ng_put(g, trail != 0 ? trail : total, 4);
}

/* A Section Header Block: byte-order magic, version 1.0, section length unknown. */
static void ng_shb(struct ng *g, bool be)
{
	struct ng body = { .be = be };

	g->be = be;
	ng_put(&body, 0x1a2b3c4d, 4);
	ng_put(&body, 1, 2);
	ng_put(&body, 0, 2);
	ng_put(&body, 0xffffffff, 4);
	ng_put(&body, 0xffffffff, 4);
	ng_block(g, 0x0a0d0d0a, body.b, body.len, 0);
}

static void ng_idb_snap(struct ng *g, uint16_t linktype, uint32_t snaplen)
{
	struct ng body = { .be = g->be };

	ng_put(&body, linktype, 2);
	ng_put(&body, 0, 2);
	ng_put(&body, snaplen, 4);
	ng_block(g, 1, body.b, body.len, 0);
}

static void ng_idb(struct ng *g, uint16_t linktype)
{
	ng_idb_snap(g, linktype, 65535);
}

/* An Enhanced Packet Block of @p n bytes on interface @p ifc (microseconds: the default). */
static void ng_epb(struct ng *g, uint32_t ifc, uint32_t ts_us, const uint8_t *data, uint32_t n)
{
	struct ng body = { .be = g->be };

	ng_put(&body, ifc, 4);
	ng_put(&body, 0, 4);
	ng_put(&body, ts_us, 4);
	ng_put(&body, n, 4);
	ng_put(&body, n, 4);
	memcpy(body.b + body.len, data, n);
	body.len += n;
	ng_block(g, 6, body.b, body.len, 0);
}

static void ng_write(const struct ng *g, const char *path)
{
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(g->b, 1, g->len, fp), g->len);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Make @p g, on a pipe, this process's stdin (a case runs in its own process). */
static void stdin_from(const struct ng *g)
{
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(write(fds[1], g->b, g->len), (ssize_t)g->len);
	close(fds[1]);
	ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	clearerr(stdin);
}

/* Open @p path (or "-" with @p g on a pipe as stdin): NULL, or a reader with no frame at all. */
static struct roce_pcap_reader *open_empty(const char *path, const struct ng *g, const char *bpf,
					   char *err, size_t errlen)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	uint64_t first;

	if (g != NULL)
		stdin_from(g);
	err[0] = '\0';
	r = roce_pcap_open(path, bpf, err, errlen);
	if (r == NULL) {
		ck_assert_msg(err[0] != '\0', "no message");
		return NULL;
	}
	ck_assert_int_eq(roce_pcap_linktype(r), DLT_EN10MB);
	ck_assert_int_eq(roce_pcap_next(r, &f), 0);
	ck_assert_int_eq(roce_pcap_next(r, &f), 0);
	ck_assert_uint_eq(roce_pcap_frames_read(r, &first), 0);
	return r;
}

/*
 * Open @p path (written from @p g first, or "-" reading @p g from a pipe), read one frame and
 * fail at the second. @return the reader, for its error
 */
static struct roce_pcap_reader *one_then_error(const char *path, const struct ng *g)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	char err[512];

	if (strcmp(path, "-") == 0)
		stdin_from(g);
	else
		ng_write(g, path);
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_next(r, &f), 1);
	ck_assert_int_eq(roce_pcap_next(r, &f), -EBADMSG);
	return r;
}

/*
 * A pcapng of sections without an interface or a packet (what tshark reads as empty, and
 * libpcap refuses: "no Interface Description Blocks") reads as an empty Ethernet capture, in
 * either byte order, from a file or a pipe; a packet without an interface, or a damaged
 * block, stays an error.
 */
START_TEST(pcap_empty_pcapng)
{
	static const uint8_t nrb_end[4] = { 0 };	/* a Name Resolution Block: opt_endofopt */
	char path[256], err[512];
	struct roce_pcap_reader *r;
	struct ng g;
	uint8_t frame[128];

	tmp_path(path, sizeof(path), "empty.pcapng");
	for (int be = 0; be <= 1; be++) {
		memset(&g, 0, sizeof(g));
		ng_shb(&g, be);
		ng_write(&g, path);
		r = open_empty(path, NULL, NULL, err, sizeof(err));
		ck_assert_msg(r != NULL, "%s", err);
		roce_pcap_close(r);
		r = open_empty(path, NULL, "udp dst port 4791", err, sizeof(err));
		ck_assert_msg(r != NULL, "%s", err);
		roce_pcap_close(r);
		/* a bad filter is still refused */
		ck_assert_ptr_null(open_empty(path, NULL, "udp port", err, sizeof(err)));
		ck_assert_msg(strstr(err, "bad filter") != NULL, "%s", err);
		/* blocks that are no interface, and a second section */
		ng_block(&g, 4, nrb_end, sizeof(nrb_end), 0);
		ng_shb(&g, !be);
		ng_write(&g, path);
		r = open_empty(path, NULL, NULL, err, sizeof(err));
		ck_assert_msg(r != NULL, "%s", err);
		roce_pcap_close(r);
	}
	/* a pipe: libpcap walked it to its end */
	memset(&g, 0, sizeof(g));
	ng_shb(&g, true);
	r = open_empty("-", &g, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	roce_pcap_close(r);

	/* a packet before any interface */
	ck_assert_int_gt(make_frame(frame, sizeof(frame), ROCE_OP_RC_SEND_ONLY, 1, 0), 0);
	memset(&g, 0, sizeof(g));
	ng_shb(&g, false);
	ng_epb(&g, 0, 1, frame, 60);
	ng_write(&g, path);
	ck_assert_ptr_null(open_empty(path, NULL, NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, path) != NULL, "%s", err);
	ck_assert_ptr_null(open_empty("-", &g, NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, "<stdin>") != NULL, "%s", err);
	/* lengths that disagree: in the section header (libpcap does not look), then later */
	memset(&g, 0, sizeof(g));
	ng_shb(&g, false);
	g.b[g.len - 4] += 4;
	ng_write(&g, path);
	ck_assert_ptr_null(open_empty(path, NULL, NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, "block at byte 0 has lengths 28 and 32") != NULL, "%s", err);
	g.b[g.len - 4] -= 4;
	ng_block(&g, 4, nrb_end, sizeof(nrb_end), 20);
	ng_write(&g, path);
	ck_assert_ptr_null(open_empty(path, NULL, NULL, err, sizeof(err)));
	ck_assert_msg(strstr(err, path) != NULL, "%s", err);
	/* and a block cut short */
	g.len -= 2;
	ng_write(&g, path);
	errno = 0;
	ck_assert_ptr_null(open_empty(path, NULL, NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, path) != NULL, "%s", err);
}
END_TEST

/*
 * A pcapng with an interface of a second link type, or of a second snapshot length: libpcap
 * stops there. The frames before it are read, then one line says what the file is and how to
 * convert it, not "corrupt".
 */
START_TEST(pcap_mixed_linktypes)
{
	char path[256], err[512];
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	uint8_t frame[128], sll[128];
	const char *e;
	struct ng g;
	int n, rc, good = 0;

	n = make_frame(frame, sizeof(frame), ROCE_OP_RC_SEND_ONLY, 1, 0);
	ck_assert_int_gt(n, 0);
	/* the same frame cooked (DLT_LINUX_SLL): packet type, ARPHRD_ETHER, address, protocol */
	memset(sll, 0, 16);
	sll[3] = 1, sll[5] = 6;
	memcpy(sll + 6, frame + 6, 6);
	memcpy(sll + 14, frame + 12, 2);
	memcpy(sll + 16, frame + 14, (size_t)n - 14);
	for (int be = 0; be <= 1; be++) {
		memset(&g, 0, sizeof(g));
		ng_shb(&g, be);
		ng_idb(&g, DLT_EN10MB);
		ng_epb(&g, 0, 1, frame, (uint32_t)n);
		ng_epb(&g, 0, 2, frame, (uint32_t)n);
		ng_idb(&g, DLT_LINUX_SLL);
		ng_epb(&g, 1, 3, sll, (uint32_t)n + 2);
		tmp_path(path, sizeof(path), "mixed.pcapng");
		ng_write(&g, path);
		good = 0;
		r = roce_pcap_open(path, NULL, err, sizeof(err));
		ck_assert_msg(r != NULL, "%s", err);
		while ((rc = roce_pcap_next(r, &f)) == 1)
			good++;
		ck_assert_int_eq(good, 2);
		ck_assert_int_eq(rc, -EBADMSG);
		e = roce_pcap_error(r);
		ck_assert_msg(strstr(e, path) != NULL && strstr(e, "frame 3: ") != NULL, "%s", e);
		ck_assert_msg(strstr(e, "link type 113 (LINUX_SLL) after one of link type 1 (EN10MB)")
			      != NULL, "%s", e);
		ck_assert_msg(strstr(e, "-F pcap") != NULL, "%s", e);
		ck_assert_msg(strstr(e, "corrupt") == NULL, "%s", e);
		ck_assert_int_eq(roce_pcap_next(r, &f), -EBADMSG);	/* stays broken */
		roce_pcap_close(r);
	}
	/* two interfaces of one link type and two snapshot lengths (dumpcap -i a -s 128 -i b) */
	memset(&g, 0, sizeof(g));
	ng_shb(&g, false);
	ng_idb_snap(&g, DLT_EN10MB, 128);
	ng_epb(&g, 0, 1, frame, (uint32_t)n);
	ng_idb_snap(&g, DLT_EN10MB, 262144);
	ng_epb(&g, 1, 2, frame, (uint32_t)n);
	r = one_then_error(path, &g);
	e = roce_pcap_error(r);
	ck_assert_msg(strstr(e, "frame 2: an interface of snapshot length 262144 after one of 128")
		      != NULL, "%s", e);
	ck_assert_msg(strstr(e, "editcap -F pcap") != NULL, "%s", e);
	ck_assert_msg(strstr(e, "corrupt") == NULL, "%s", e);
	roce_pcap_close(r);
}
END_TEST

/*
 * Two sections in two byte orders (`cat` of captures from a little- and a big-endian host): the
 * first section's frames are read, from a file or a pipe, then one line names the byte orders
 * and the conversion, not "corrupt". A block too long in one byte order is still damage.
 */
START_TEST(pcap_mixed_byte_orders)
{
	struct roce_pcap_reader *r;
	uint8_t frame[128];
	char path[256];
	const char *e;
	struct ng g;
	int n;

	n = make_frame(frame, sizeof(frame), ROCE_OP_RC_SEND_ONLY, 1, 0);
	ck_assert_int_gt(n, 0);
	tmp_path(path, sizeof(path), "orders.pcapng");
	for (int first_be = 0; first_be <= 1; first_be++) {
		memset(&g, 0, sizeof(g));
		ng_shb(&g, first_be);
		ng_idb(&g, DLT_EN10MB);
		ng_epb(&g, 0, 1, frame, (uint32_t)n);
		ng_shb(&g, !first_be);
		ng_idb(&g, DLT_EN10MB);
		ng_epb(&g, 0, 2, frame, (uint32_t)n);
		for (int pipe_in = 0; pipe_in <= 1; pipe_in++) {
			r = one_then_error(pipe_in ? "-" : path, &g);
			e = roce_pcap_error(r);
			ck_assert_msg(strstr(e, "frame 2: a pcapng section in ") != NULL, "%s", e);
			ck_assert_msg(strstr(e, first_be ? "little-endian byte order after one in "
					     "big-endian" : "big-endian byte order after one in "
					     "little-endian") != NULL, "%s", e);
			ck_assert_msg(strstr(e, "editcap -F pcapng") != NULL, "%s", e);
			ck_assert_msg(strstr(e, "corrupt") == NULL, "%s", e);
			roce_pcap_close(r);
			if (pipe_in)	/* the rest of this pipe, buffered or not, before the next */
				while (fgetc(stdin) != EOF)
					;
		}
	}
	/* one byte order, and a block whose length libpcap will not take: damage, as before */
	memset(&g, 0, sizeof(g));
	ng_shb(&g, false);
	ng_idb(&g, DLT_EN10MB);
	ng_epb(&g, 0, 1, frame, (uint32_t)n);
	ng_put(&g, 6, 4);
	ng_put(&g, 0x40000000, 4);
	ng_put(&g, 0x1a2b3c4d, 4);	/* this byte order's magic: not a new section */
	r = one_then_error(path, &g);
	e = roce_pcap_error(r);
	ck_assert_msg(strstr(e, "frame 2: file truncated or corrupt") != NULL, "%s", e);
	roce_pcap_close(r);
}
END_TEST

static bool have_shared(void)
{
	struct stat st;

	return stat(SHARED_PCAP "/rxe", &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * A capture of Linux's any device (tcpdump -i any: DLT_LINUX_SLL, or SLL2) reads as the
 * Ethernet frames it was: each frame of an rxe capture, rewritten cooked by libpcap's writer,
 * parses to the same opcode, PSN, payload and ICRC verdict, with its source MAC; a cooked
 * header cut short is a frame that is not RoCE, not a crash.
 */
START_TEST(pcap_cooked)
{
	const int types[2] = { DLT_LINUX_SLL, DLT_LINUX_SLL2 };
	char path[512], out[256], err[512];

	if (!have_shared())
		return;
	snprintf(path, sizeof(path), "%s/rxe/rc_write_bw_loss_req.pcap", SHARED_PCAP);
	for (int t = 0; t < 2; t++) {
		bool v2 = types[t] == DLT_LINUX_SLL2;
		struct roce_pcap_reader *a, *b;
		struct roce_pcap_frame f, g;
		struct roce_pkt p, q;
		pcap_t *dead = pcap_open_dead(types[t], 65535);
		pcap_dumper_t *d;
		uint64_t n = 0;
		uint8_t c[2048];

		tmp_path(out, sizeof(out), v2 ? "sll2.pcap" : "sll.pcap");
		d = pcap_dump_open(dead, out);
		ck_assert_ptr_nonnull(d);
		a = roce_pcap_open(path, NULL, err, sizeof(err));
		ck_assert_msg(a != NULL, "%s", err);
		while (roce_pcap_next(a, &f) == 1) {
			struct pcap_pkthdr h = { .caplen = f.caplen + (v2 ? 6 : 2),
						 .len = f.wirelen + (v2 ? 6 : 2) };
			uint32_t hdr = v2 ? 20 : 16;

			ck_assert_uint_le(f.caplen + 6, sizeof(c));
			memset(c, 0, hdr);
			if (v2) {
				memcpy(c, f.data + 12, 2);	/* protocol */
				c[9] = 1;			/* ARPHRD_ETHER */
				c[11] = 6;
				memcpy(c + 12, f.data + 6, 6);
			} else {
				c[3] = 1;
				c[5] = 6;
				memcpy(c + 6, f.data + 6, 6);
				memcpy(c + 14, f.data + 12, 2);
			}
			memcpy(c + hdr, f.data + 14, f.caplen - 14);
			pcap_dump((u_char *)d, &h, c);
		}
		/* a last frame shorter than the cooked header */
		{
			struct pcap_pkthdr h = { .caplen = 10, .len = 10 };

			pcap_dump((u_char *)d, &h, c);
		}
		pcap_dump_close(d);
		pcap_close(dead);
		roce_pcap_close(a);

		a = roce_pcap_open(path, NULL, err, sizeof(err));
		b = roce_pcap_open(out, NULL, err, sizeof(err));
		ck_assert_msg(b != NULL, "%s", err);
		ck_assert_int_eq(roce_pcap_linktype(b), DLT_EN10MB);
		while (roce_pcap_next(a, &f) == 1) {
			ck_assert_int_eq(roce_pcap_next(b, &g), 1);
			ck_assert_uint_eq(g.caplen, f.caplen);
			ck_assert_uint_eq(g.wirelen, f.wirelen);
			ck_assert_mem_eq(g.data + 6, f.data + 6, f.caplen - 6);	/* all but dst */
			roce_wire_parse(f.data, f.caplen, 0, &p);
			roce_wire_parse(g.data, g.caplen, 0, &q);
			ck_assert_int_eq(q.err, p.err);
			ck_assert_int_eq(q.kind, p.kind);
			if (p.bth_off != 0) {
				ck_assert_uint_eq(q.opcode, p.opcode);
				ck_assert_uint_eq(q.psn, p.psn);
				ck_assert_uint_eq(q.payload_len, p.payload_len);
				ck_assert_int_eq(q.icrc_ok, p.icrc_ok);
				n++;
			}
		}
		ck_assert_uint_eq(n, 251);	/* the capture's RoCE frames */
		ck_assert_int_eq(roce_pcap_next(b, &g), 1);	/* the short one */
		ck_assert_uint_eq(g.caplen, 14);
		roce_wire_parse(g.data, g.caplen, 0, &q);
		ck_assert_int_ne(q.kind, ROCE_KIND_ROCEV2);
		ck_assert_int_eq(roce_pcap_next(b, &g), 0);
		roce_pcap_close(a);
		roce_pcap_close(b);
	}
}
END_TEST

/* A frame split over three chained mbufs is written as one frame. */
START_TEST(pcap_mbuf_chain)
{
	struct rte_mempool *mp;
	struct rte_mbuf *m[3];
	struct roce_pcap_writer *w;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	uint8_t frame[2048];
	char path[256], err[256];
	int len, off = 0;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	mp = rte_pktmbuf_pool_create("test_io", 63, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM, 0);
	ck_assert_ptr_nonnull(mp);
	len = make_frame(frame, sizeof(frame), ROCE_OP_RC_SEND_ONLY, 7, 1000);
	ck_assert_int_gt(len, 0);
	for (int i = 0; i < 3; i++) {
		int n = i < 2 ? len / 3 : len - off;

		m[i] = rte_pktmbuf_alloc(mp);
		ck_assert_ptr_nonnull(m[i]);
		memcpy(rte_pktmbuf_append(m[i], (uint16_t)n), frame + off, (size_t)n);
		off += n;
	}
	ck_assert_int_eq(rte_pktmbuf_chain(m[0], m[1]), 0);
	ck_assert_int_eq(rte_pktmbuf_chain(m[0], m[2]), 0);
	tmp_path(path, sizeof(path), "mbuf.pcap");
	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_write_mbuf(w, 42, m[0]), 0);
	ck_assert_int_eq(roce_pcap_close_writer(w), 0);
	rte_pktmbuf_free(m[0]);

	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_next(r, &f), 1);
	ck_assert_uint_eq(f.ts_ns, 42);
	ck_assert_uint_eq(f.caplen, (uint32_t)len);
	ck_assert_mem_eq(f.data, frame, (size_t)len);
	roce_pcap_close(r);
	rte_mempool_free(mp);
}
END_TEST

/*
 * A frame whose payload is by reference and whose trailer other frames share
 * (roce_wire_tmpl_build_mbuf_zc()) is written with its ICRC: into a trailer of its own, or, with
 * no mbuf left for one, into the writer's copy, the frame itself left as it was.
 */
START_TEST(pcap_zc_frame)
{
	static uint8_t payload[1027], want[2048];
	struct rte_mbuf *trailer[4], *hoard[8], *m, *seg;
	struct rte_mempool *mp, *segs;
	struct roce_pcap_writer *w;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_wire_tmpl t;
	char path[256], err[256];
	struct roce_pkt pkt;
	unsigned int nhoard;
	int len;

	ck_assert_int_eq(roce_eal_init(NULL), 0);
	ck_assert_int_eq(roce_wire_icrc_flags_register(), 0);
	mp = rte_pktmbuf_pool_create("test_io_zc", 7, 0, 0, 256 + RTE_PKTMBUF_HEADROOM, 0);
	segs = rte_pktmbuf_pool_create("test_io_zc_seg", 8, 0, 0, 64, 0);
	ck_assert(mp != NULL && segs != NULL);
	for (uint32_t pad = 0; pad < 4; pad++)
		ck_assert_ptr_nonnull(trailer[pad] = roce_wire_zc_trailer(segs, pad));
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_SEND_ONLY);
	pkt.dqpn = 0x11;
	pkt.payload = payload;
	pkt.payload_len = sizeof(payload);
	len = roce_wire_build(&pkt, 0, want, sizeof(want));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(roce_wire_tmpl_init(&t, &pkt), 0);

	tmp_path(path, sizeof(path), "zc.pcap");
	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	for (int round = 0; round < 2; round++) {
		m = rte_pktmbuf_alloc(mp);
		seg = rte_pktmbuf_alloc(segs);
		ck_assert(m != NULL && seg != NULL);
		ck_assert_int_eq(roce_wire_tmpl_build_mbuf_zc(&t, &pkt, m, seg, trailer), len);
		nhoard = 0;
		while (round == 1 && nhoard < ROCE_DIM(hoard) &&
		       (hoard[nhoard] = rte_pktmbuf_alloc(segs)) != NULL)
			nhoard++;
		ck_assert_int_eq(roce_pcap_write_mbuf(w, 10 + (uint64_t)round, m), 0);
		if (round == 0) {
			ck_assert(m->next->next != trailer[1] && !(m->ol_flags & roce_wire_icrc_partial));
		} else {
			ck_assert_uint_eq(rte_mempool_avail_count(segs), 0);
			ck_assert(m->next->next == trailer[1] && (m->ol_flags & roce_wire_icrc_partial));
		}
		while (nhoard > 0)
			rte_pktmbuf_free(hoard[--nhoard]);
		rte_pktmbuf_free(m);
	}
	ck_assert_int_eq(roce_pcap_close_writer(w), 0);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(trailer[1]), 1);

	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(roce_pcap_next(r, &f), 1);
		ck_assert_uint_eq(f.caplen, (uint32_t)len);
		ck_assert_mem_eq(f.data, want, (size_t)len);
	}
	ck_assert_int_eq(roce_pcap_next(r, &f), 0);
	roce_pcap_close(r);
	for (uint32_t pad = 0; pad < 4; pad++)
		rte_pktmbuf_free(trailer[pad]);
	rte_mempool_free(segs);
	rte_mempool_free(mp);
}
END_TEST

/* ---- jsonl ---- */

static void jsonl_of(const uint8_t *buf, uint32_t len, uint64_t n, uint64_t ts, char *out,
		     size_t size)
{
	struct roce_pcap_frame f = { .n = n, .ts_ns = ts, .caplen = len, .wirelen = len,
				     .data = buf };
	struct roce_pkt pkt;

	roce_wire_parse(buf, len, 0, &pkt);
	roce_dissect_jsonl(out, size, &f, &pkt);
}

/*
 * The ConnectX-4 Lx CNP of scapy's roce.uts (shared/pcap/real/secdev_scapy__roce_uts_cnp_
 * connectx4lx.pcap, SOURCES.md there): the same bytes, its expected line checked by hand
 * against the uts (TOS 0xc2, BECN, dest QP 0x118, ICRC wire bytes 82 fd 00 2a).
 */
static const uint8_t cnp_cx4[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00,
	0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x82, 0xfd, 0x00, 0x2a,
};

START_TEST(jsonl_known_frames)
{
	char out[2048];
	uint8_t buf[256];
	struct roce_pkt p;
	int len;

	jsonl_of(cnp_cx4, sizeof(cnp_cx4), 1, 5, out, sizeof(out));
	ck_assert_str_eq(out,
		"{\"n\":1,\"ts_ns\":5,\"len\":74,\"kind\":\"rocev2\",\"ip\":{\"ver\":4,"
		"\"src\":\"10.0.17.1\",\"dst\":\"10.0.18.1\",\"dscp\":48,\"ecn\":2,\"ttl\":64},"
		"\"udp\":{\"sport\":0,\"dport\":4791},\"bth\":{\"opcode\":129,\"op\":\"CNP\",\"se\":0,"
		"\"m\":0,\"pad\":0,\"tver\":0,\"pkey\":65535,\"fecn\":0,\"becn\":1,\"dqpn\":280,"
		"\"ackreq\":0,\"psn\":0},\"payload_len\":0,\"icrc\":2197618730,\"icrc_ok\":true}\n");

	/* the same frame with one flipped payload-free byte (BTH PSN): ICRC error, named */
	memcpy(buf, cnp_cx4, sizeof(cnp_cx4));
	buf[53] ^= 1;
	jsonl_of(buf, sizeof(cnp_cx4), 2, 6, out, sizeof(out));
	ck_assert_msg(strstr(out, "\"psn\":1}") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\"icrc_ok\":false,\"error\":\"") != NULL, "%s", out);
	ck_assert_msg(strstr(out, roce_wire_strerror(ROCE_WERR_ICRC_MISMATCH)) != NULL, "%s", out);

	/* cut inside the IP header: kind other? no: the IP header is incomplete, so no ip key */
	jsonl_of(cnp_cx4, 20, 3, 7, out, sizeof(out));
	ck_assert_msg(strstr(out, "\"ip\"") == NULL && strstr(out, "\"bth\"") == NULL, "%s", out);
	ck_assert_msg(strstr(out, "\"error\":\"") != NULL, "%s", out);

	/* PFC with priority 3 paused and a VLAN tag: built by lib/wire */
	roce_pkt_init(&p, ROCE_KIND_PFC, 0);
	p.pfc_cev = 1u << 3;
	p.quanta[3] = 0xffff;
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	jsonl_of(buf, (uint32_t)len, 4, 8, out, sizeof(out));
	ck_assert_str_eq(out, "{\"n\":4,\"ts_ns\":8,\"len\":60,\"kind\":\"pfc\",\"pfc\":{\"cev\":8,"
			 "\"quanta\":[0,0,0,65535,0,0,0,0]}}\n");

	/* a UD SEND with immediate over IPv6 in a VLAN: DETH and ImmDt keys, no RETH/AETH */
	roce_pkt_init(&p, ROCE_KIND_ROCEV2, ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
	p.nvlan = 1;
	p.vlan[0].tpid = 0x8100;
	p.vlan[0].pcp = 3;
	p.vlan[0].vid = 100;
	p.ip_ver = 6;
	memset(p.src.b, 0, 16);
	memset(p.dst.b, 0, 16);
	p.src.b[15] = 1;
	p.dst.b[15] = 2;
	p.dqpn = 1;
	p.deth.qkey = 0x80010000;
	p.deth.srcqp = 5;
	p.immdt = 0x1e570000;
	p.payload_len = 5;
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	jsonl_of(buf, (uint32_t)len, 5, 9, out, sizeof(out));
	ck_assert_msg(strstr(out, "\"vlan\":[{\"pcp\":3,\"vid\":100}]") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\"ip\":{\"ver\":6,\"src\":\"::1\",\"dst\":\"::2\"") != NULL, "%s",
		      out);
	ck_assert_msg(strstr(out, "\"immdt\":509018112,\"deth\":{\"qkey\":2147549184,\"srcqp\":5},"
				  "\"payload_len\":5,") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "\"reth\"") == NULL && strstr(out, "\"aeth\"") == NULL, "%s", out);
	ck_assert_msg(strstr(out, "\"icrc_ok\":true}\n") != NULL, "%s", out);
}
END_TEST

/* ---- summary ---- */

/* Summarise one shared capture, optionally through a BPF filter. */
static struct roce_summary *summarise(const char *file, const char *bpf)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	char path[512], err[512];
	int rc;

	ck_assert_ptr_nonnull(s);
	snprintf(path, sizeof(path), "%s/%s", SHARED_PCAP, file);
	r = roce_pcap_open(path, bpf, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		roce_wire_parse(f.data, f.caplen, 0, &pkt);
		ck_assert_int_eq(roce_summary_add(s, &f, &pkt), 0);
	}
	ck_assert_int_eq(rc, 0);
	roce_pcap_close(r);
	return s;
}

/*
 * Expected values per rxe capture. retx (request packets whose PSN was already on the wire)
 * and gaps (request PSN beyond the next expected one) were derived independently of rocelab
 * with tshark and awk over the request opcodes (0..12, 19..31), keyed by (ip.src, destqp):
 *   tshark -n -r F -Y 'infiniband.bth.opcode < 17 || infiniband.bth.opcode > 18 and
 *       infiniband.bth.opcode < 32' -T fields -e ip.src -e infiniband.bth.destqp
 *       -e infiniband.bth.opcode -e infiniband.bth.psn -e infiniband.reth.dmalen |
 *   awk '$3<13||$3>16 { k=$1" "$2; if (seen[k" "$4]++) rt++; span=($3==12)?int(($5+1023)/1024):1;
 *        if (k in nxt) { if ($4>nxt[k]) gap++; if ($4+span>nxt[k]) nxt[k]=$4+span }
 *        else nxt[k]=$4+span } END { print rt, gap }'
 * (PMTU 1024 in these files; no PSN wraps.) NAK counts: tshark -Y infiniband.aeth -T fields
 * -e infiniband.aeth.syndrome | sort | uniq -c (0x60 seq, 0x2c RNR, 0x61 inv, 0x62 access).
 * Both agree with the "Retransmission behaviour (computed)" lines of shared/pcap/rxe/SOURCES.md.
 */
struct sum_case {
	const char *file;
	uint64_t retx, gaps, seq, rnr, access, inv, frames;
};

static const struct sum_case sum_cases[] = {
	{ "rxe/ibv_rc_pingpong.pcap", 4, 0, 0, 0, 0, 0, 208 },
	{ "rxe/rc_read_bw_loss_req.pcap", 3, 1, 1, 0, 0, 0, 154 },
	{ "rxe/rc_send_bw_loss_req.pcap", 170, 8, 8, 0, 0, 0, 378 },
	{ "rxe/rc_send_bw_rnr.pcap", 304, 0, 14, 15, 0, 0, 433 },
	{ "rxe/rc_write_bw_loss_req.pcap", 48, 4, 3, 0, 0, 0, 251 },
	{ "rxe/rc_write_bw_loss_ack.pcap", 0, 0, 0, 0, 0, 0, 198 },
	{ "rxe/rc_write_lat.pcap", 1, 0, 0, 0, 0, 0, 82 },
	{ "rxe/rc_write_lat_loss.pcap", 9, 0, 0, 0, 0, 0, 209 },
	{ "rxe/rc_read_bw.pcap", 0, 0, 0, 0, 0, 0, 250 },
	{ "rxe/rc_nak_inv_req_no_atomic.pcap", 0, 0, 0, 0, 0, 1, 2 },
	{ "rxe/rc_nak_inv_req_no_write.pcap", 0, 0, 0, 0, 0, 1, 2 },
	{ "rxe/rc_nak_rem_access_bad_rkey.pcap", 0, 0, 0, 0, 1, 0, 2 },
};

START_TEST(summary_rxe_retransmissions)
{
	const struct sum_case *c = &sum_cases[_i];
	struct roce_summary *s;
	const struct roce_flow_stats *t;

	if (!have_shared())
		return;
	s = summarise(c->file, NULL);
	t = roce_summary_totals(s);
	ck_assert_msg(t->frames == c->frames, "%s: frames %llu", c->file,
		      (unsigned long long)t->frames);
	ck_assert_msg(t->retrans == c->retx, "%s: retx %llu, want %llu", c->file,
		      (unsigned long long)t->retrans, (unsigned long long)c->retx);
	ck_assert_msg(t->psn_gaps == c->gaps, "%s: gaps %llu, want %llu", c->file,
		      (unsigned long long)t->psn_gaps, (unsigned long long)c->gaps);
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_SEQ], c->seq);
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_RNR], c->rnr);
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_ACCESS], c->access);
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_INV], c->inv);
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_OP], 0);
	ck_assert_uint_eq(t->icrc_err, 0);
	ck_assert_msg(t->open == 0, "%s: %llu requests open", c->file,
		      (unsigned long long)t->open);	/* every request was answered */
	ck_assert_uint_eq(roce_summary_nflows(s), 2);
	roce_summary_destroy(s);
}
END_TEST

/*
 * A capture of two links: every RoCE frame of rc_write_bw_loss_req followed by its copy one
 * hop on (IPv4 TTL one lower, header checksum redone). The copies are left out and counted apart: the
 * figures are those of the single link (48 retransmissions, not 48 + 251).
 */
START_TEST(summary_hop_copies)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	const struct sum_case *c = &sum_cases[4];
	const struct roce_flow_stats *t;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f, g;
	struct roce_pkt pkt;
	char path[512], err[512];
	uint8_t copy[2048];
	int rc;

	if (!have_shared())
		return;
	ck_assert_str_eq(c->file, "rxe/rc_write_bw_loss_req.pcap");
	snprintf(path, sizeof(path), "%s/%s", SHARED_PCAP, c->file);
	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		uint32_t sum = 0;

		roce_wire_parse(f.data, f.caplen, 0, &pkt);
		ck_assert_int_eq(roce_summary_add(s, &f, &pkt), 0);
		if (pkt.bth_off == 0)
			continue;		/* ARP, the TCP exchange: one link's worth */
		ck_assert(f.caplen <= sizeof(copy) && f.data[12] == 0x08 && f.data[13] == 0);
		memcpy(copy, f.data, f.caplen);
		copy[22]--;				/* TTL */
		copy[24] = copy[25] = 0;		/* IPv4 header checksum, redone */
		for (int i = 14; i < 34; i += 2)
			sum += (uint32_t)(copy[i] << 8 | copy[i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		copy[24] = (uint8_t)(~sum >> 8);
		copy[25] = (uint8_t)~sum;
		g = f;
		g.data = copy;
		g.ts_ns += 1000;
		roce_wire_parse(copy, g.caplen, 0, &pkt);
		ck_assert_int_eq(pkt.err, ROCE_WERR_OK);
		ck_assert_int_eq(roce_summary_add(s, &g, &pkt), 0);
	}
	ck_assert_int_eq(rc, 0);
	roce_pcap_close(r);
	t = roce_summary_totals(s);
	ck_assert_uint_eq(t->frames, c->frames);
	ck_assert_uint_eq(t->retrans, c->retx);
	ck_assert_uint_eq(t->psn_gaps, c->gaps);
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_SEQ], c->seq);
	ck_assert_uint_eq(t->hop_copies, c->frames);
	ck_assert_uint_eq(roce_summary_nflows(s), 2);
	roce_summary_destroy(s);
}
END_TEST

/* A CM message from @p src to @p dst as rdma_cm sends it: a UD SEND Only to QP1 (IBA 12.6). */
static void cm_frame(struct roce_summary *s, uint64_t ts, const char *src, const char *dst,
		     uint16_t attr, uint32_t lcid, uint32_t rcid, uint32_t word2)
{
	static uint8_t buf[512];
	uint8_t mad[ROCE_MAD_LEN] = { 0x01, ROCE_MAD_CLASS_CM, 0x02, 0x03 };
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	int n;

	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	for (int i = 0; i < 4; i++) {
		mad[24 + i] = (uint8_t)(lcid >> (24 - 8 * i));
		mad[28 + i] = (uint8_t)(rcid >> (24 - 8 * i));
		mad[32 + i] = (uint8_t)(word2 >> (24 - 8 * i));
	}
	if (attr == ROCE_CM_ATTR_REQ) {		/* no rcid; service ID, QPN 0x11, PSN 100 */
		memset(mad + 28, 0, 4);
		mad[36] = 0x01, mad[37] = 0x06, mad[38] = 0x1c, mad[39] = 0x06;
		mad[58] = 0x11;
		mad[70] = 100;
	} else if (attr == ROCE_CM_ATTR_REP) {	/* QPN 0x12, PSN 200 */
		mad[38] = 0x12;
		mad[46] = 200;
	}
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_UD_SEND_ONLY);
	ck_assert_int_eq(inet_pton(AF_INET, src, pkt.src.b), 1);
	ck_assert_int_eq(inet_pton(AF_INET, dst, pkt.dst.b), 1);
	pkt.dqpn = ROCE_GSI_QPN;
	pkt.deth.qkey = ROCE_GSI_QKEY;
	pkt.deth.srcqp = ROCE_GSI_QPN;
	pkt.payload = mad;
	pkt.payload_len = sizeof(mad);
	n = roce_wire_build(&pkt, 0, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	memset(&f, 0, sizeof(f));
	f.data = buf;
	f.caplen = f.wirelen = (uint32_t)n;
	f.ts_ns = ts;
	ck_assert_int_eq(roce_wire_parse(buf, (uint32_t)n, 0, &pkt), 0);
	ck_assert_int_eq(roce_summary_add(s, &f, &pkt), 0);
}

/*
 * The summary's CM connections: one set up and torn down (a REQ resent), one rejected, and
 * one whose set-up the capture missed, told apart by their IDs.
 */
START_TEST(summary_cm_connections)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	const struct roce_cm_conn_stats *c;
	static char out[8192];
	FILE *mem;

	cm_frame(s, 1000, "10.0.0.1", "10.0.0.2", ROCE_CM_ATTR_REQ, 0xa1, 0, 0);
	cm_frame(s, 2000, "10.0.0.1", "10.0.0.2", ROCE_CM_ATTR_REQ, 0xa1, 0, 0);
	cm_frame(s, 2600, "10.0.0.3", "10.0.0.2", ROCE_CM_ATTR_REQ, 0xa1, 0, 0);
	cm_frame(s, 3000, "10.0.0.2", "10.0.0.1", ROCE_CM_ATTR_REP, 0xb1, 0xa1, 0);
	cm_frame(s, 3600, "10.0.0.2", "10.0.0.3", ROCE_CM_ATTR_REJ, 0, 0xa1, 28);
	cm_frame(s, 4000, "10.0.0.1", "10.0.0.2", ROCE_CM_ATTR_RTU, 0xa1, 0xb1, 0);
	cm_frame(s, 5000, "10.0.0.2", "10.0.0.1", ROCE_CM_ATTR_DREQ, 0xb1, 0xa1, 0x11 << 8);
	cm_frame(s, 6000, "10.0.0.1", "10.0.0.2", ROCE_CM_ATTR_DREP, 0xa1, 0xb1, 0);
	cm_frame(s, 7000, "10.0.0.4", "10.0.0.5", ROCE_CM_ATTR_DREQ, 0xc1, 0xd1, 0);
	cm_frame(s, 8000, "10.0.0.5", "10.0.0.4", ROCE_CM_ATTR_DREP, 0xd1, 0xc1, 0);
	ck_assert_uint_eq(roce_summary_nconns(s), 3);

	c = roce_summary_conn(s, 0);
	ck_assert(c->has_req);
	ck_assert_uint_eq(c->id[0], 0xa1);
	ck_assert_uint_eq(c->id[1], 0xb1);
	ck_assert_uint_eq(c->service_id, 0x0000000001061c06ull);
	ck_assert_uint_eq(c->qpn[0], 0x11);
	ck_assert_uint_eq(c->psn[0], 100);
	ck_assert_uint_eq(c->qpn[1], 0x12);
	ck_assert_uint_eq(c->psn[1], 200);
	ck_assert_uint_eq(c->count[ROCE_SUM_CM_REQ], 2);
	ck_assert_uint_eq(c->first_ns[ROCE_SUM_CM_REQ], 1000);
	ck_assert_uint_eq(c->first_ns[ROCE_SUM_CM_DREP], 6000);
	ck_assert_uint_eq(c->count[ROCE_SUM_CM_REJ], 0);

	c = roce_summary_conn(s, 1);		/* the same ID from another node: another connection */
	ck_assert(c->has_req);
	ck_assert_uint_eq(c->id[0], 0xa1);
	ck_assert_uint_eq(c->count[ROCE_SUM_CM_REJ], 1);
	ck_assert_uint_eq(c->rej_reason, ROCE_CM_REJ_CONSUMER);

	c = roce_summary_conn(s, 2);		/* found by the DREQ's receiver, as the DREP is */
	ck_assert(!c->has_req);
	ck_assert_uint_eq(c->id[0], 0xd1);
	ck_assert_uint_eq(c->id[1], 0xc1);
	ck_assert_uint_eq(c->count[ROCE_SUM_CM_DREQ], 1);
	ck_assert_uint_eq(c->count[ROCE_SUM_CM_DREP], 1);
	ck_assert_ptr_null(roce_summary_conn(s, 3));

	mem = fmemopen(out, sizeof(out), "w");
	ck_assert_int_eq(roce_summary_print(s, mem), 0);
	fclose(mem);
	ck_assert_msg(strstr(out, "cm connections: 3\n"
			     "  10.0.0.1 id 0x000000a1 qpn 0x000011 psn 100 > 10.0.0.2 id 0x000000b1 "
			     "qpn 0x000012 psn 200 sid 0x0000000001061c06 (tcp port 7174): closed\n"
			     "    REQ 0.000000 x2 REP 0.000002 RTU 0.000003 DREQ 0.000004 DREP 0.000005\n"
			     "  10.0.0.3 id 0x000000a1 qpn 0x000011 psn 100 > 10.0.0.2 id 0x00000000 "
			     "sid 0x0000000001061c06 (tcp port 7174): rejected consumer-reject (28)\n"
			     "    REQ 0.000002 REJ 0.000003\n"
			     "  10.0.0.5 id 0x000000d1 - 10.0.0.4 id 0x000000c1: closed\n"
			     "    DREQ 0.000006 DREP 0.000007\n") != NULL, "%s", out);
	roce_summary_destroy(s);
}
END_TEST

/* Without the responder's frames, every request message stays open. */
START_TEST(summary_open_requests)
{
	struct roce_summary *s;
	const struct roce_flow_stats *f;

	if (!have_shared())
		return;
	/* rc_read_bw: 50 READs of 4 KiB (SOURCES.md); rc_send_bw: 50 SENDs of 4 packets */
	s = summarise("rxe/rc_read_bw.pcap", "src host 192.0.2.3");
	ck_assert_uint_eq(roce_summary_nflows(s), 1);
	f = roce_summary_flow(s, 0);
	ck_assert_uint_eq(f->open, 50);
	ck_assert_uint_eq(f->psn_gaps, 0);	/* a READ request takes 4 PSNs at PMTU 1024 */
	ck_assert_uint_eq((f->psn_last - f->psn_first + 1) & ROCE_PSN_MASK, 200);
	roce_summary_destroy(s);

	s = summarise("rxe/rc_send_bw.pcap", "src host 192.0.2.3");
	ck_assert_uint_eq(roce_summary_flow(s, 0)->open, 50);
	roce_summary_destroy(s);

	s = summarise("rxe/rc_send_bw.pcap", NULL);
	ck_assert_uint_eq(roce_summary_totals(s)->open, 0);
	ck_assert_uint_eq(roce_summary_totals(s)->payload, 50 * 4096);
	roce_summary_destroy(s);
}
END_TEST

/* Build one RC frame, parse it back and add it to @p s at time @p t (ns), at @p ttl, ECN @p ecn. */
static void sum_rc_at(struct roce_summary *s, uint8_t opcode, uint32_t psn, bool reply, uint64_t t,
		      uint8_t ttl, uint8_t ecn, uint8_t syndrome)
{
	struct roce_pcap_frame f = { .ts_ns = t };
	struct roce_pkt p, q;
	uint8_t buf[1200];
	int len;

	roce_pkt_init(&p, ROCE_KIND_ROCEV2, opcode);
	p.psn = psn;
	p.dqpn = reply ? 0x11 : 0x22;
	p.ttl = ttl;
	p.ecn = ecn;
	p.aeth.syndrome = syndrome;
	if (reply) {
		struct roce_ip_addr a = p.src;

		p.src = p.dst;
		p.dst = a;
	}
	if (roce_opcode[opcode].mask & ROCE_F_RETH)
		p.reth.dmalen = 4 * 1024;
	if (!(roce_opcode[opcode].mask & ROCE_F_AETH))
		p.payload_len = 1024;
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	roce_wire_parse(buf, (uint32_t)len, 0, &q);
	ck_assert_int_eq(q.err, ROCE_WERR_OK);
	f.data = buf;
	f.caplen = f.wirelen = (uint32_t)len;
	ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
}

static void sum_rc(struct roce_summary *s, uint8_t opcode, uint32_t psn, bool reply, uint64_t t)
{
	sum_rc_at(s, opcode, psn, reply, t, 64, 2, 0);
}

/*
 * A responder that asks for ACKs every few packets acknowledges the middle of a message
 * before the requester's first message has ended: the requests are still found for the ACKs
 * that follow, and every message is answered (open 0). rocelab's own captures do this.
 */
START_TEST(summary_open_ack_mid_message)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	uint64_t t = 0;

	ck_assert_ptr_nonnull(s);
	for (uint32_t m = 0; m < 3; m++) {	/* 3 WRITEs of 4 packets, ACK on every second */
		for (uint32_t k = 0; k < 4; k++) {
			uint32_t psn = 4 * m + k;

			sum_rc(s, k == 0 ? ROCE_OP_RC_RDMA_WRITE_FIRST : k == 3 ?
			       ROCE_OP_RC_RDMA_WRITE_LAST : ROCE_OP_RC_RDMA_WRITE_MIDDLE, psn, false,
			       t += 100);
			if (k % 2 == 1)
				sum_rc(s, ROCE_OP_RC_ACKNOWLEDGE, psn, true, t += 100);
		}
	}
	ck_assert_uint_eq(roce_summary_nflows(s), 2);
	ck_assert_uint_eq(roce_summary_totals(s)->open, 0);
	roce_summary_destroy(s);

	/* the last ACK lost: the last message stays open, the two before it are answered */
	s = roce_summary_create(100000000000ull);
	for (uint32_t psn = 0; psn < 12; psn++) {
		sum_rc(s, psn % 4 == 0 ? ROCE_OP_RC_RDMA_WRITE_FIRST : psn % 4 == 3 ?
		       ROCE_OP_RC_RDMA_WRITE_LAST : ROCE_OP_RC_RDMA_WRITE_MIDDLE, psn, false, t += 100);
		if (psn % 2 == 1 && psn < 11)
			sum_rc(s, ROCE_OP_RC_ACKNOWLEDGE, psn, true, t += 100);
	}
	ck_assert_uint_eq(roce_summary_totals(s)->open, 1);
	roce_summary_destroy(s);
}
END_TEST

/*
 * A capture of two links, the second after a switch that marks: the flow's CE count is the
 * marks at the hop that holds the most (they only accumulate), not those at its first hop.
 */
START_TEST(summary_ce_later_hop)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	const struct roce_flow_stats *f;

	ck_assert_ptr_nonnull(s);
	for (uint32_t psn = 0; psn < 10; psn++) {
		sum_rc_at(s, ROCE_OP_RC_SEND_ONLY, psn, false, 1000 * psn, 64, psn == 0 ? 3 : 2, 0);
		sum_rc_at(s, ROCE_OP_RC_SEND_ONLY, psn, false, 1000 * psn + 500, 63,
			  psn % 3 == 0 ? 3 : 2, 0);
	}
	ck_assert_uint_eq(roce_summary_nflows(s), 1);
	f = roce_summary_flow(s, 0);
	ck_assert_uint_eq(f->frames, 10);
	ck_assert_uint_eq(f->hop_copies, 10);
	ck_assert_uint_eq(f->ecn_ce, 4);	/* PSN 0, 3, 6 and 9 marked at the second hop */
	ck_assert_uint_eq(roce_summary_totals(s)->ecn_ce, 4);
	roce_summary_destroy(s);
}
END_TEST

/* NAK codes by kind: invalid request 0x61 and invalid RD request 0x64 are ninv; reserved apart. */
START_TEST(summary_nak_kinds)
{
	static const struct {
		uint8_t syndrome;
		enum roce_sum_nak kind;
	} naks[] = {
		{ 0x60, ROCE_SUM_NAK_SEQ }, { 0x61, ROCE_SUM_NAK_INV }, { 0x62, ROCE_SUM_NAK_ACCESS },
		{ 0x63, ROCE_SUM_NAK_OP }, { 0x64, ROCE_SUM_NAK_INV }, { 0x65, ROCE_SUM_NAK_RSVD },
		{ 0x7f, ROCE_SUM_NAK_RSVD }, { 0xff, ROCE_SUM_NAK_RSVD }, { 0x45, ROCE_SUM_NAK_RSVD },
		{ 0x2c, ROCE_SUM_NAK_RNR },
	};
	uint64_t want[ROCE_SUM_NAK_NUM] = { 0 };
	struct roce_summary *s = roce_summary_create(100000000000ull);

	ck_assert_ptr_nonnull(s);
	sum_rc(s, ROCE_OP_RC_SEND_ONLY, 0, false, 0);
	for (size_t i = 0; i < ROCE_DIM(naks); i++) {
		sum_rc_at(s, ROCE_OP_RC_ACKNOWLEDGE, 0, true, 100 + i, 64, 2, naks[i].syndrome);
		want[naks[i].kind]++;
	}
	for (int k = 0; k < ROCE_SUM_NAK_NUM; k++)
		ck_assert_msg(roce_summary_totals(s)->nak[k] == want[k], "kind %d: %llu, want %llu",
			      k, (unsigned long long)roce_summary_totals(s)->nak[k],
			      (unsigned long long)want[k]);
	roce_summary_destroy(s);
}
END_TEST

/* The printed summary of @p file through filter @p bpf, told of the whole file. */
static char *summary_text(const char *file, const char *bpf)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	char path[512], err[512], *text = NULL;
	uint64_t first_ns, n;
	size_t len = 0;
	FILE *out;

	snprintf(path, sizeof(path), "%s/%s", SHARED_PCAP, file);
	r = roce_pcap_open(path, bpf, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while (roce_pcap_next(r, &f) == 1) {
		roce_wire_parse(f.data, f.caplen, 0, &pkt);
		ck_assert_int_eq(roce_summary_add(s, &f, &pkt), 0);
	}
	n = roce_pcap_frames_read(r, &first_ns);
	roce_summary_set_file(s, n, first_ns);
	roce_pcap_close(r);
	out = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(roce_summary_print(s, out), 0);
	fclose(out);
	roce_summary_destroy(s);
	return text;
}

/*
 * A filter keeps frames out of the summary, not out of the file: times still count from the
 * file's first frame, so a kept flow's row reads the same, and the frames line says how many
 * were left out.
 */
START_TEST(summary_filter_keeps_time)
{
	char *all, *acks, *row, *nl;

	if (!have_shared())
		return;
	all = summary_text("rxe/rc_write_bw_loss_req.pcap", NULL);
	acks = summary_text("rxe/rc_write_bw_loss_req.pcap", "src host 192.0.2.2");
	row = strstr(acks, "\nRC ");		/* the only flow: the responder's ACKs */
	ck_assert_ptr_nonnull(row);
	nl = strchr(row + 1, '\n');
	*nl = '\0';
	ck_assert_msg(strstr(all, row) != NULL, "%s\nnot in\n%s", row + 1, all);
	ck_assert_ptr_nonnull(strstr(nl + 1, "frames: 294 total, 233 left out by the filters, 43 RoCE"));
	ck_assert_ptr_nonnull(strstr(all, "frames: 294 total, 251 RoCE"));
	free(all);
	free(acks);
}
END_TEST

/* Build one RC frame as sum_rc() does, then keep only @p caplen bytes of it, as a snaplen does. */
static void sum_rc_cut(struct roce_summary *s, uint8_t opcode, uint32_t psn, bool reply, uint64_t t,
		       uint32_t caplen)
{
	struct roce_pcap_frame f = { .ts_ns = t };
	struct roce_pkt p, q;
	uint8_t buf[1200];
	int len;

	roce_pkt_init(&p, ROCE_KIND_ROCEV2, opcode);
	p.psn = psn;
	p.dqpn = reply ? 0x11 : 0x22;
	if (reply) {
		struct roce_ip_addr a = p.src;

		p.src = p.dst;
		p.dst = a;
	}
	if (roce_opcode[opcode].mask & ROCE_F_RETH)
		p.reth.dmalen = 1024;
	if (roce_opcode[opcode].mask & ROCE_F_PAYLOAD)
		p.payload_len = 1024;
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	ck_assert_int_gt(len, (int)caplen);
	roce_wire_parse(buf, caplen, ROCE_PARSE_CAPTURE, &q);
	ck_assert(q.truncated);
	f.data = buf;
	f.caplen = caplen;
	f.wirelen = (uint32_t)len;
	ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
}

/*
 * A snaplen that cuts the extended headers (IPv4's BTH ends at byte 54; -s 60 cuts a RETH, -s 56
 * an AETH) leaves the BTH: such frames count in their flow with their PSNs, not as faults. An
 * ACK whose AETH is cut answers the messages before its PSN (it may be a sequence NAK).
 */
START_TEST(summary_snaplen_cut)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	const struct roce_flow_stats *t;

	ck_assert_ptr_nonnull(s);
	for (uint32_t psn = 0; psn < 5; psn++)
		sum_rc_cut(s, ROCE_OP_RC_RDMA_WRITE_ONLY, psn, false, 100 * psn, 60);
	sum_rc_cut(s, ROCE_OP_RC_ACKNOWLEDGE, 4, true, 600, 56);
	sum_rc_cut(s, ROCE_OP_RC_RDMA_WRITE_ONLY, 2, false, 700, 60);	/* a resend */
	ck_assert_uint_eq(roce_summary_nflows(s), 2);
	t = roce_summary_totals(s);
	ck_assert_uint_eq(t->frames, 7);
	ck_assert_uint_eq(t->errors, 0);
	ck_assert_uint_eq(t->psn_gaps, 0);
	ck_assert_uint_eq(t->retrans, 1);
	ck_assert_uint_eq(t->open, 1);		/* PSN 4's WRITE: a NAK at 4 would not answer it */
	ck_assert_uint_eq(t->nak[ROCE_SUM_NAK_SEQ], 0);
	ck_assert_uint_eq(roce_summary_flow(s, 0)->psn_last, 4);
	roce_summary_destroy(s);
}
END_TEST

/* The printed summary of @p s, to be freed. */
static char *print_text(struct roce_summary *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(roce_summary_print(s, out), 0);
	fclose(out);
	return text;
}

/*
 * A flow that stops with messages unanswered while the capture goes on (here 5 ms more of
 * another flow) is called stalled; the same silence in a capture under 1 ms is not.
 */
START_TEST(summary_stalled)
{
	for (int k = 0; k < 2; k++) {
		uint64_t end = k == 0 ? 5000000 : 900000;
		struct roce_summary *s = roce_summary_create(100000000000ull);
		char *text;

		for (uint32_t psn = 0; psn < 3; psn++)
			sum_rc(s, ROCE_OP_RC_RDMA_WRITE_ONLY, psn, false, 100 * psn);
		for (uint64_t t = 1000; t <= end; t += end / 8)
			sum_rc(s, ROCE_OP_RC_SEND_ONLY, (uint32_t)(t / 1000), true, t);
		text = print_text(s);
		if (k == 0)
			ck_assert_msg(strstr(text, "\nstalled: 1 flow with unanswered messages fell "
					    "silent for the second half of the capture (the longest "
					    "for its last 0.004376 s;") != NULL, "%s", text);
		else
			ck_assert_msg(strstr(text, "stalled") == NULL, "%s", text);
		free(text);
		roce_summary_destroy(s);
	}
}
END_TEST

/*
 * Two QPs between the same hosts with the same PSNs (perftest -q 2): the responder's ACKs carry
 * only the requester's QPN, so each ACK flow is paired with a request flow no other one has
 * claimed, and every request counts as answered.
 */
START_TEST(summary_qps_same_psns)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);
	struct roce_pcap_frame f = { 0 };
	const struct roce_flow_stats *t;
	struct roce_desc d;
	struct roce_pkt q;
	uint8_t buf[256];
	char line[160], err[128];
	int len;

	ck_assert_ptr_nonnull(s);
	for (int i = 0; i < 10; i++) {
		uint32_t qp = 0x11 + (uint32_t)(i % 2);

		if (i < 8)
			snprintf(line, sizeof(line), "op=RC_SEND_ONLY src=10.0.0.1 dst=10.0.0.2 "
				 "qp=0x%x psn=%d len=8", qp, i / 2);
		else
			snprintf(line, sizeof(line), "op=RC_ACKNOWLEDGE src=10.0.0.2 dst=10.0.0.1 "
				 "qp=0x%x psn=3 syndrome=0 msn=4", qp);
		ck_assert_msg(roce_desc_parse(line, &d, err, sizeof(err)) == 1, "%s", err);
		len = roce_desc_build(&d, buf, sizeof(buf));
		ck_assert_int_gt(len, 0);
		ck_assert_int_eq(roce_wire_parse(buf, (uint32_t)len, 0, &q), 0);
		f.ts_ns = 1000 * (uint64_t)i;
		f.wirelen = f.caplen = (uint32_t)len;
		f.data = buf;
		ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
	}
	t = roce_summary_totals(s);
	ck_assert_uint_eq(roce_summary_nflows(s), 4);
	ck_assert_msg(t->open == 0, "%llu requests open", (unsigned long long)t->open);
	ck_assert_uint_eq(t->retrans, 0);
	roce_summary_destroy(s);
}
END_TEST

/* PFC pause time: quanta of 512 bit times at the link speed; a new frame reloads the timer. */
START_TEST(summary_pfc_time)
{
	struct roce_summary *s = roce_summary_create(100000000000ull);	/* 100 Gb/s */
	const struct roce_pause_stats *ps;
	struct roce_pcap_frame f = { 0 };
	struct roce_pkt p, q;
	uint8_t buf[128];
	int len;

	ck_assert_ptr_nonnull(s);
	roce_pkt_init(&p, ROCE_KIND_PFC, 0);
	p.pfc_cev = 1u << 3;
	p.quanta[3] = 0xffff;			/* 65535 * 512 / 100e9 s = 335539 ns */
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	roce_wire_parse(buf, (uint32_t)len, 0, &q);
	f.ts_ns = 1000000;
	f.wirelen = (uint32_t)len;
	ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
	p.quanta[3] = 1000;			/* at +100 us: the rest is replaced by 5120 ns */
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	roce_wire_parse(buf, (uint32_t)len, 0, &q);
	f.ts_ns = 1100000;
	ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
	ps = roce_summary_pause(s);
	ck_assert_uint_eq(ps->pfc_frames[3], 2);
	ck_assert_uint_eq(ps->pfc_frames[0], 0);
	ck_assert_uint_eq(ps->paused_ns[3], 100000 + 5120);

	/*
	 * A second port pausing at the same time: the priority's time is the sum (past the
	 * capture's length), so each port is listed with its own and its share of the capture
	 */
	p.smac[5] = 0x77;
	p.quanta[3] = 0xffff;
	len = roce_wire_build(&p, 0, buf, sizeof(buf));
	roce_wire_parse(buf, (uint32_t)len, 0, &q);
	f.ts_ns = 1000000;
	ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
	f.ts_ns = 1335539;	/* the capture: 335539 ns */
	ck_assert_int_eq(roce_summary_add(s, &f, &q), 0);
	ck_assert_uint_eq(ps->paused_ns[3], 100000 + 5120 + 2 * 335539);
	{
		char *text = print_text(s);

		ck_assert_msg(strstr(text, "paused 0.000776 s, summed over 2 sending ports:\n"
				    "    from 02:00:00:00:00:01: 2 frames, paused 0.000105 s (31% of "
				    "the capture)\n    from 02:00:00:00:00:77: 2 frames, paused "
				    "0.000671 s (100% of the capture)\n") != NULL, "%s", text);
		free(text);
	}
	roce_summary_destroy(s);

	errno = 0;
	ck_assert_ptr_null(roce_summary_create(0));
	ck_assert_int_eq(errno, EINVAL);
	roce_summary_destroy(NULL);
}
END_TEST

/* ---- output files (lib/common/roce_file.h), as the pcap writer uses them ---- */

/* The inode, mode and size of @p path (lstat: a link is itself). */
static void snap(const char *path, struct stat *st)
{
	ck_assert_int_eq(lstat(path, st), 0);
}

static void same(const char *path, const struct stat *before)
{
	struct stat st;

	snap(path, &st);
	ck_assert_uint_eq(st.st_ino, before->st_ino);
	ck_assert_uint_eq(st.st_mode, before->st_mode);
	ck_assert_int_eq(st.st_size, before->st_size);
}

START_TEST(out_refusals)
{
	static const char text[] = "not a capture\n";
	char link[512], fifo[512], ro[512], txt[512], dir[512], err[512];
	struct roce_pcap_writer *w;
	struct stat st[5];
	FILE *f;

	tmp_path(txt, sizeof(txt), "out-notes.txt");
	tmp_path(link, sizeof(link), "out-link.pcap");
	tmp_path(fifo, sizeof(fifo), "out-fifo.pcap");
	tmp_path(ro, sizeof(ro), "out-ro.pcap");
	tmp_path(dir, sizeof(dir), "out-dir.pcap");
	f = fopen(txt, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(symlink(txt, link), 0);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	write_frames(ro, 1);
	ck_assert_int_eq(chmod(ro, 0444), 0);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snap(txt, &st[0]);
	snap(link, &st[1]);
	snap(fifo, &st[2]);
	snap(ro, &st[3]);
	snap(dir, &st[4]);

	w = roce_pcap_create(link, err, sizeof(err));
	ck_assert_ptr_null(w);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_msg(strstr(err, "symbolic link") != NULL, "%s", err);
	w = roce_pcap_create(fifo, err, sizeof(err));	/* never opened: no hang */
	ck_assert_ptr_null(w);
	ck_assert_int_eq(errno, ENOTSUP);
	w = roce_pcap_create("/dev/null", err, sizeof(err));
	ck_assert_ptr_null(w);
	ck_assert_int_eq(errno, ENOTSUP);
	w = roce_pcap_create(ro, err, sizeof(err));	/* as root too */
	ck_assert_ptr_null(w);
	ck_assert_int_eq(errno, EROFS);
	w = roce_pcap_create(dir, err, sizeof(err));
	ck_assert_ptr_null(w);
	ck_assert_int_eq(errno, EISDIR);
	w = roce_pcap_create(txt, err, sizeof(err));
	ck_assert_ptr_null(w);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_msg(strstr(err, "not a pcap") != NULL, "%s", err);
	same(txt, &st[0]);
	same(link, &st[1]);
	same(fifo, &st[2]);
	same(ro, &st[3]);
	same(dir, &st[4]);

	/* --force: a text file replaced, keeping its mode; a link still not */
	ck_assert_int_eq(chmod(txt, 0600), 0);
	roce_out_force = true;
	w = roce_pcap_create(link, err, sizeof(err));
	ck_assert_ptr_null(w);
	write_frames(txt, 2);
	roce_out_force = false;
	snap(txt, &st[0]);
	ck_assert_uint_eq(st[0].st_mode & 07777, 0600);
	ck_assert_int_gt(st[0].st_size, (off_t)sizeof(text));
	/* a capture goes over a capture */
	write_frames(txt, 1);
	unlink(link);
	unlink(fifo);
	chmod(ro, 0644);
	unlink(ro);
	rmdir(dir);
	unlink(txt);
}
END_TEST

START_TEST(out_commit_checks_again)
{
	char path[512], victim[512], err[512];
	struct roce_pcap_writer *w;
	struct roce_out o;
	struct stat st;
	uint8_t buf[256];
	int len = make_frame(buf, sizeof(buf), ROCE_OP_RC_SEND_ONLY, 1, 16);

	tmp_path(path, sizeof(path), "out-swap.pcap");
	tmp_path(victim, sizeof(victim), "out-victim");
	write_frames(victim, 1);
	snap(victim, &st);
	/* the name becomes a link while the file is written: the link and its file stay */
	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	ck_assert_int_eq(roce_pcap_write(w, 1, buf, (uint32_t)len), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(roce_pcap_close_writer(w), -EIO);
	ck_assert_int_eq(readlink(path, err, sizeof(err)), (ssize_t)strlen(victim));
	same(victim, &st);
	unlink(path);
	/* discarded: nothing under the name, nothing beside it */
	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	roce_pcap_discard_writer(w);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* a text output: any regular file is replaced, and "-" is standard output */
	ck_assert_int_eq(roce_out_open(&o, victim, 0, err, sizeof(err)), 0);
	fputs("text\n", o.f);
	ck_assert_int_eq(roce_out_commit(&o, err, sizeof(err)), 0);
	ck_assert_int_eq(roce_out_check(victim, ROCE_OUT_PCAP, err, sizeof(err)), -EEXIST);
	ck_assert_int_eq(roce_out_open(&o, "-", ROCE_OUT_PCAP, err, sizeof(err)), 0);
	ck_assert_ptr_eq(o.f, stdout);
	ck_assert_int_eq(roce_out_commit(&o, err, sizeof(err)), 0);
	unlink(victim);
}
END_TEST

/* ---- real devices (io_ibdev.c): the decoding and perftest's GID choice, no device needed ---- */

START_TEST(ibdev_decode)
{
	char text[64];
	const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 };
	const uint8_t ll[16] = { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00, 0xff, 0xfe, 0xc0, 0x00, 0x02 };

	/* ibv_devinfo's tables (rdma-core examples/devinfo.c) */
	ck_assert_uint_eq(roce_ibdev_lanes(1), 1);
	ck_assert_uint_eq(roce_ibdev_lanes(2), 4);
	ck_assert_uint_eq(roce_ibdev_lanes(4), 8);
	ck_assert_uint_eq(roce_ibdev_lanes(8), 12);
	ck_assert_uint_eq(roce_ibdev_lanes(16), 2);
	ck_assert_uint_eq(roce_ibdev_lanes(3), 0);
	ck_assert_double_eq(roce_ibdev_lane_gbps(1), 2.5);
	ck_assert_double_eq(roce_ibdev_lane_gbps(32), 25.0);
	ck_assert_double_eq(roce_ibdev_lane_gbps(64), 50.0);
	ck_assert_double_eq(roce_ibdev_lane_gbps(128), 100.0);
	ck_assert_double_eq(roce_ibdev_lane_gbps(3), 0.0);
	ck_assert_uint_eq(roce_ibdev_mtu_bytes(1), 256);
	ck_assert_uint_eq(roce_ibdev_mtu_bytes(3), 1024);
	ck_assert_uint_eq(roce_ibdev_mtu_bytes(5), 4096);
	ck_assert_uint_eq(roce_ibdev_mtu_bytes(0), 0);
	ck_assert_uint_eq(roce_ibdev_mtu_bytes(6), 0);
	ck_assert_str_eq(roce_ibdev_port_state_name(4), "PORT_ACTIVE");
	ck_assert_str_eq(roce_ibdev_port_state_name(1), "PORT_DOWN");
	ck_assert_str_eq(roce_ibdev_port_state_name(9), "invalid state");
	ck_assert(roce_gid_is_ipv4(v4));
	ck_assert(!roce_gid_is_ipv4(ll));
	ck_assert_str_eq(roce_gid_text(v4, text, sizeof(text)), "192.0.2.2");
	ck_assert_str_eq(roce_gid_text(ll, text, sizeof(text)), "fe80::5054:ff:fec0:2");
}
END_TEST

static void gid_set(struct roce_ibdev_gid *g, uint32_t index, enum roce_gid_type type, bool v4)
{
	memset(g, 0, sizeof(*g));
	g->index = index;
	g->type = type;
	if (v4) {
		g->gid[10] = g->gid[11] = 0xff;
		g->gid[12] = 10;
		g->gid[15] = (uint8_t)index;
	} else {
		g->gid[0] = 0xfe;
		g->gid[1] = 0x80;
		g->gid[15] = (uint8_t)index;
	}
}

START_TEST(ibdev_gid_pick)
{
	struct roce_ibdev_gid gids[6];
	struct roce_ibdev_port port = { .num = 1, .ethernet = true, .gid_tbl_len = 256,
					.gids = gids };
	const struct roce_ibdev_gid *g;
	char err[256];

	/* a ConnectX's table: each address once as RoCE v1 and once as v2 */
	gid_set(&gids[0], 0, ROCE_GID_ROCE_V1, false);
	gid_set(&gids[1], 1, ROCE_GID_ROCE_V2, false);
	gid_set(&gids[2], 2, ROCE_GID_ROCE_V1, true);
	gid_set(&gids[3], 3, ROCE_GID_ROCE_V2, true);
	port.n_gids = 4;
	g = roce_ibdev_gid_pick(&port, -1, false, err, sizeof(err));
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->index, 3);
	g = roce_ibdev_gid_pick(&port, -1, true, err, sizeof(err));
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->index, 1);
	g = roce_ibdev_gid_pick(&port, 1, false, err, sizeof(err));	/* -x wins */
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->index, 1);
	/* -x naming a RoCE v1 entry, or an empty slot: refused, with the RoCE v2 ones listed */
	ck_assert_ptr_null(roce_ibdev_gid_pick(&port, 2, false, err, sizeof(err)));
	ck_assert_msg(strstr(err, "GID index 2 is RoCE v1, not RoCE v2") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "3 (10.0.0.3)") != NULL, "%s", err);
	ck_assert_ptr_null(roce_ibdev_gid_pick(&port, 7, false, err, sizeof(err)));
	ck_assert_msg(strstr(err, "GID index 7 is empty") != NULL, "%s", err);
	/* rxe's: RoCE v2 only, the link-local address first */
	gid_set(&gids[0], 0, ROCE_GID_ROCE_V2, false);
	gid_set(&gids[1], 1, ROCE_GID_ROCE_V2, true);
	port.n_gids = 2;
	g = roce_ibdev_gid_pick(&port, -1, false, err, sizeof(err));
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->index, 1);
	/* no address of the family asked for */
	port.n_gids = 1;
	ck_assert_ptr_null(roce_ibdev_gid_pick(&port, -1, false, err, sizeof(err)));
	ck_assert_msg(strstr(err, "no RoCE v2 GID with an IPv4 address") != NULL, "%s", err);
	port.n_gids = 0;
	ck_assert_ptr_null(roce_ibdev_gid_pick(&port, -1, false, err, sizeof(err)));
	ck_assert_msg(strstr(err, "RoCE v2 GIDs: none") != NULL, "%s", err);
}
END_TEST

/* Without a library to load: one line naming the package; a later call says the same. */
START_TEST(ibdev_no_library)
{
	char err[256], names[64];

	setenv("ROCELAB_LIBIBVERBS", "/nonexistent/libibverbs.so.1", 1);
	ck_assert_int_lt(roce_ibdev_names(names, sizeof(names), err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "apt-get install libibverbs1") != NULL ||
		      strstr(err, "libibverbs-dev") != NULL, "%s", err);
	errno = 0;
	ck_assert_ptr_null(roce_ibdev_open("rxe0", err, sizeof(err)));
	ck_assert_int_ne(errno, 0);
	ck_assert_msg(strstr(err, "libibverbs") != NULL, "%s", err);
	unsetenv("ROCELAB_LIBIBVERBS");
}
END_TEST

/* ---- a kernel interface through libpcap ---- */

/*
 * lo in a network namespace of the test's own (Check runs each case in a child), so that no
 * one else's frames reach the capture; false where namespaces cannot be made (the host's lo
 * then: the frames are told apart by their QPN).
 */
static bool private_lo(void)
{
	struct ifreq ifr;
	bool up;
	int fd;

	if (unshare(CLONE_NEWNET) != 0)
		return false;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	up = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	up = up && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
	close(fd);
	ck_assert_msg(up, "lo cannot be brought up in a new namespace: %s", strerror(errno));
	return true;
}

#define IFCAP_QPN 0xabcde		/* the test's frames: no one else sends to this QP */
#define IFCAP_PAYLOAD 200

/*
 * Frames sent to 127.0.0.1:4791 through the kernel are in the file once roce_ifcap_stop()
 * returns, each once, in order, cut to the snaplen with their wire length kept; counted as
 * RoCE. As a user without CAP_NET_RAW: one line that says so.
 */
START_TEST(ifcap_lo)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(ROCE_UDP_PORT) };
	uint8_t dgram[ROCE_BTH_LEN + IFCAP_PAYLOAD + ROCE_ICRC_LEN];
	struct roce_ifcap_stats st;
	struct roce_pcap_writer *w;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_ifcap *cap;
	struct roce_pkt pkt;
	char path[256], err[256];
	uint32_t ours = 0;
	uint64_t last_ns = 0;
	int fd, rc;

	tmp_path(path, sizeof(path), "ifcap.pcap");
	if (geteuid() == 0)
		private_lo();
	w = roce_pcap_create_snap(path, 128, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	errno = 0;
	cap = roce_ifcap_start("lo", "udp dst port 4791", 128, w, err, sizeof(err));
	if (cap == NULL && errno == EPERM) {
		ck_assert_msg(strstr(err, "capture on lo needs CAP_NET_RAW") != NULL, "%s", err);
		roce_pcap_discard_writer(w);
		return;
	}
	ck_assert_msg(cap != NULL, "%s", err);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	/* a BTH of RC_SEND_ONLY to IFCAP_QPN, PSN i; the payload; an ICRC nobody checks */
	memset(dgram, 0, sizeof(dgram));
	dgram[0] = ROCE_OP_RC_SEND_ONLY;
	dgram[2] = dgram[3] = 0xff;
	dgram[5] = IFCAP_QPN >> 16;
	dgram[6] = (IFCAP_QPN >> 8) & 0xff;
	dgram[7] = IFCAP_QPN & 0xff;
	for (uint32_t i = 0; i < 20; i++) {
		dgram[11] = (uint8_t)i;
		ck_assert_int_eq(sendto(fd, dgram, sizeof(dgram), 0, (struct sockaddr *)&to,
					sizeof(to)), (ssize_t)sizeof(dgram));
	}
	close(fd);
	rc = roce_ifcap_stop(cap, &st);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(roce_pcap_close_writer(w), 0);
	ck_assert_uint_ge(st.frames, 20);
	ck_assert_uint_ge(st.roce, 20);
	ck_assert_uint_eq(st.errors, 0);

	r = roce_pcap_open(path, NULL, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		roce_wire_parse(f.data, f.caplen, ROCE_PARSE_CAPTURE | ROCE_PARSE_NO_ICRC, &pkt);
		ck_assert_uint_le(f.caplen, 128);
		ck_assert_uint_ge(f.ts_ns, last_ns);
		last_ns = f.ts_ns;
		if (pkt.kind != ROCE_KIND_ROCEV2 || pkt.dqpn != IFCAP_QPN)
			continue;
		ck_assert_uint_eq(pkt.psn, ours);
		ck_assert_uint_eq(pkt.opcode, ROCE_OP_RC_SEND_ONLY);
		ck_assert_uint_eq(f.wirelen, 14 + 20 + 8 + sizeof(dgram));
		ck_assert_uint_eq(pkt.payload_len, IFCAP_PAYLOAD);
		ours++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(ours, 20);
	roce_pcap_close(r);
	unlink(path);
}
END_TEST

/* What cannot be captured: one line each, the file untouched. */
START_TEST(ifcap_refusals)
{
	struct roce_pcap_writer *w;
	char path[256], err[256];

	tmp_path(path, sizeof(path), "ifcap-bad.pcap");
	w = roce_pcap_create(path, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	errno = 0;
	ck_assert_ptr_null(roce_ifcap_start("rl-nosuch0", NULL, 0, w, err, sizeof(err)));
	if (errno == EPERM) {	/* without CAP_NET_RAW nothing more can be told */
		ck_assert_msg(strstr(err, "CAP_NET_RAW") != NULL, "%s", err);
	} else {
		ck_assert_int_eq(errno, ENODEV);
		ck_assert_msg(strstr(err, "capture on rl-nosuch0: no such network interface") !=
			      NULL, "%s", err);
		errno = 0;
		ck_assert_ptr_null(roce_ifcap_start("lo", "udp port", 0, w, err, sizeof(err)));
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_msg(strstr(err, "filter 'udp port'") != NULL, "%s", err);
	}
	roce_pcap_discard_writer(w);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(roce_ifcap_stop(NULL, NULL), 0);
}
END_TEST

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc;

	tc = tcase_create("pcap");
	tcase_add_test(tc, pcap_round_trip_ns);
	tcase_add_test(tc, pcap_bpf_keeps_numbers);
	tcase_add_test(tc, pcap_truncated_after_good_frames);
	tcase_add_test(tc, pcap_bad_files);
	tcase_add_test(tc, pcap_mbuf_chain);
	tcase_add_test(tc, pcap_zc_frame);
	tcase_add_test(tc, pcap_cooked);
	tcase_add_test(tc, pcap_empty_pcapng);
	tcase_add_test(tc, pcap_mixed_linktypes);
	tcase_add_test(tc, pcap_mixed_byte_orders);
	suite_add_tcase(s, tc);

	tc = tcase_create("out");
	tcase_add_test(tc, out_refusals);
	tcase_add_test(tc, out_commit_checks_again);
	suite_add_tcase(s, tc);

	tc = tcase_create("ibdev");
	tcase_add_test(tc, ibdev_decode);
	tcase_add_test(tc, ibdev_gid_pick);
	tcase_add_test(tc, ibdev_no_library);
	suite_add_tcase(s, tc);

	tc = tcase_create("jsonl");
	tcase_add_test(tc, jsonl_known_frames);
	suite_add_tcase(s, tc);

	tc = tcase_create("ifcap");
	tcase_add_test(tc, ifcap_lo);
	tcase_add_test(tc, ifcap_refusals);
	suite_add_tcase(s, tc);

	tc = tcase_create("summary");
	tcase_add_test(tc, summary_pfc_time);
	tcase_add_test(tc, summary_qps_same_psns);
	tcase_add_test(tc, summary_cm_connections);
	suite_add_tcase(s, tc);

	if (have_shared()) {
		tc = tcase_create("summary-shared");
		tcase_set_timeout(tc, 60);
		tcase_add_loop_test(tc, summary_rxe_retransmissions, 0, (int)ROCE_DIM(sum_cases));
		tcase_add_test(tc, summary_hop_copies);
	tcase_add_test(tc, summary_open_requests);
	tcase_add_test(tc, summary_open_ack_mid_message);
	tcase_add_test(tc, summary_ce_later_hop);
	tcase_add_test(tc, summary_nak_kinds);
	tcase_add_test(tc, summary_filter_keeps_time);
	tcase_add_test(tc, summary_snaplen_cut);
	tcase_add_test(tc, summary_stalled);
		suite_add_tcase(s, tc);
	} else {
		fprintf(stderr, "test_io: %s not found: shared capture cases skipped\n", SHARED_PCAP);
	}
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (mkdtemp(tmpdir) == NULL) {
		perror("test_io: mkdtemp");
		return 1;
	}
	/* settle rte_net_crc's (scalar, pre-EAL) path once here, not in every forked case */
	(void)roce_crc32("", 0);
	sr = srunner_create(io_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* whatever the cases wrote: the directory is this run's and flat */
	{
		DIR *d = opendir(tmpdir);
		struct dirent *e;
		char path[512];

		while (d != NULL && (e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
			unlink(path);
		}
		if (d != NULL)
			closedir(d);
		rmdir(tmpdir);
	}
	return failed == 0 ? 0 : 1;
}
