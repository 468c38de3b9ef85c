/* rocelab dissect: print the frames of captures, one line, every field or jsonl, or a summary. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocelab.h"
#include "roce_io.h"
#include "roce_wire.h"

enum out_mode {
	OUT_LINE,		/* one tcpdump-like line per frame */
	OUT_VERBOSE,		/* every field of every header */
	OUT_JSONL,		/* the jsonl contract of docs/dissect.md */
};

struct dissect_opts {
	enum out_mode mode;	/* per-frame output */
	bool summary;		/* print the summary instead of frames */
	const char *bpf;	/* libpcap pre-filter, or NULL */
	int64_t qp;		/* keep only this destination QP, or -1 */
	int opcode;		/* keep only this opcode, or -1 */
	uint64_t link_bps;	/* for pause quanta */
	unsigned int parse_flags; /* ROCE_PARSE_* */
};

static const char usage[] =
	"usage: rocelab dissect [-v | --format=text|jsonl] [--summary] [-f BPF] [--qp N]\n"
	"                       [--opcode NAME|NUM] [--link-speed 100G] [--no-icrc] FILE...\n"
	"\n"
	"Decode every frame of pcap/pcapng captures (\"-\" reads standard input).\n"
	"\n"
	"  (default)           one line per frame: number, time, addresses, opcode, QP, PSN,\n"
	"                      extended headers, payload length, ICRC status\n"
	"  -v                  every field of every header\n"
	"  --format=jsonl      one JSON object per frame (the contract in docs/dissect.md)\n"
	"  --summary           per-flow table: frames, bytes, goodput, PSN gaps, retransmissions,\n"
	"                      NAKs, ECN-CE, CNPs, ICRC errors, open requests; PFC pause time\n"
	"  -f BPF              libpcap filter applied before decoding, e.g. 'udp port 4791'\n"
	"  --qp N              only frames to destination QP N (decimal or 0x hex)\n"
	"  --opcode NAME|NUM   only this BTH opcode, e.g. RC_SEND_ONLY or 0x04\n"
	"  --link-speed RATE   link speed for PFC/PAUSE quanta, e.g. 25G, 100G (default), 400G\n"
	"  --no-icrc           do not verify ICRCs (faster)\n"
	"\n"
	"Exit status: 0 all files read (frames that are not RoCE, a filter that keeps none and a\n"
	"capture without frames included); 1 a file could not be read, broke off (the frames\n"
	"before the break are printed first) or is of a link type that is not Ethernet or Linux\n"
	"cooked (nothing decoded; the other files are); 2 bad arguments.\n";

/* "100G", "25g", "400000M", "1e11": bits per second. */
static int parse_rate(const char *s, uint64_t *bps)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v <= 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v *= 1e3; end++; break;
	case 'm': case 'M': v *= 1e6; end++; break;
	case 'g': case 'G': v *= 1e9; end++; break;
	case 't': case 'T': v *= 1e12; end++; break;
	default: break;
	}
	if (strcmp(end, "") != 0 && strcmp(end, "bps") != 0 && strcmp(end, "b") != 0)
		return -EINVAL;
	if (v < 1e3 || v > 1e15)
		return -EINVAL;
	*bps = (uint64_t)v;
	return 0;
}


static bool keep(const struct dissect_opts *o, const struct roce_pkt *pkt)
{
	bool has_bth = (pkt->kind == ROCE_KIND_ROCEV2 || pkt->kind == ROCE_KIND_ROCEV1) &&
		       pkt->bth_off != 0;

	if (o->qp >= 0 && (!has_bth || pkt->dqpn != (uint32_t)o->qp))
		return false;
	if (o->opcode >= 0 && (!has_bth || pkt->opcode != o->opcode))
		return false;
	return true;
}

/*
 * Frames' text is formatted straight into one buffer that goes out in big writes: one
 * fwrite() per frame cost more than formatting the frame. 128 KiB stays in the cache and
 * costs 32 page faults; 1 MiB took 256 and gained nothing in fewer write() calls.
 */
#define OUT_BUF_SIZE (1u << 17)
#define FRAME_TEXT_MAX 8192	/* the most one frame's text takes; longer output is cut */

struct out_buf {
	char data[OUT_BUF_SIZE];	/* formatted frames not yet written */
	size_t used;			/* bytes of data in use */
};

/*
 * Write the buffer straight to standard output, behind whatever stdio holds (the "==>" lines):
 * through fwrite() it was copied once more into stdio's buffer, and every page of that was a
 * page fault. A failed write drops the output, as fwrite() did; SIGPIPE still ends the process.
 */
static void out_flush(struct out_buf *o)
{
	size_t done = 0;

	fflush(stdout);
	while (done < o->used) {
		ssize_t n = write(STDOUT_FILENO, o->data + done, o->used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	o->used = 0;
}

/* Room for one frame's text at the end of the buffer, writing the buffer out first if needed. */
static char *out_room(struct out_buf *o)
{
	if (OUT_BUF_SIZE - o->used < FRAME_TEXT_MAX)
		out_flush(o);
	return o->data + o->used;
}

/* Keep the @p n bytes a formatter reported at out_room(), as far as they were written. */
static void out_commit(struct out_buf *o, int n)
{
	if (n > 0)
		o->used += ROCE_MIN((size_t)n, (size_t)FRAME_TEXT_MAX - 1);
}

/* One file; returns 0, or 1 if it could not be read or broke off. */
static int dissect_file(const char *path, const struct dissect_opts *o, bool header)
{
	static struct out_buf out;
	struct roce_summary *sum = NULL;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_pkt pkt;
	char err[512];
	int rc, ret = 0;

	r = roce_pcap_open(path, o->bpf, err, sizeof(err));
	if (r == NULL) {
		fprintf(stderr, "rocelab dissect: %s\n", err);
		return 1;
	}
	if (roce_pcap_linktype(r) != 1) {	/* DLT_EN10MB, or Linux cooked read as it */
		/*
		 * Well formed, but not one frame of it can be decoded: a failure, as replay says,
		 * or a script would take a page of nothing for a capture without RoCE in it
		 */
		fprintf(stderr, "rocelab dissect: %s\n", roce_pcap_error(r));
		roce_pcap_close(r);
		return 1;
	}
	if (o->summary) {
		sum = roce_summary_create(o->link_bps);
		if (sum == NULL) {
			fprintf(stderr, "rocelab dissect: %s: out of memory\n", path);
			roce_pcap_close(r);
			return 1;
		}
	}
	if (header)
		printf("==> %s <==\n", path);
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		char *text;

		roce_wire_parse(f.data, f.caplen, o->parse_flags, &pkt);
		if (!keep(o, &pkt))
			continue;
		if (sum != NULL) {
			roce_summary_add(sum, &f, &pkt);
			continue;
		}
		text = out_room(&out);
		switch (o->mode) {
		case OUT_JSONL:
			out_commit(&out, roce_dissect_jsonl(text, FRAME_TEXT_MAX, &f, &pkt));
			break;
		case OUT_VERBOSE:
			out_commit(&out, roce_dissect_verbose(text, FRAME_TEXT_MAX, &f, &pkt));
			break;
		default:
			out_commit(&out, roce_dissect_line(text, FRAME_TEXT_MAX, &f, &pkt));
			break;
		}
	}
	out_flush(&out);
	if (sum != NULL) {
		uint64_t first_ns, n = roce_pcap_frames_read(r, &first_ns);

		roce_summary_set_file(sum, n, first_ns);
		if (roce_summary_print(sum, stdout) != 0)
			ret = 1;
		roce_summary_destroy(sum);
	}
	fflush(stdout);
	if (rc < 0) {
		fprintf(stderr, "rocelab dissect: %s\n", roce_pcap_error(r));
		ret = 1;
	}
	roce_pcap_close(r);
	return ret;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "summary", no_argument, NULL, 's' },
		{ "qp", required_argument, NULL, 'q' },
		{ "opcode", required_argument, NULL, 'o' },
		{ "link-speed", required_argument, NULL, 'l' },
		{ "no-icrc", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* a capture: what a snaplen left of a frame is decoded, and IPv6 extension headers walked */
	struct dissect_opts o = { .mode = OUT_LINE, .qp = -1, .opcode = -1,
				  .link_bps = 100000000000ull, .parse_flags = ROCE_PARSE_CAPTURE };
	static char outbuf[1 << 16];	/* stdio's: "==>" lines, the summary */
	const char *cmd = argv[0];
	bool fmt_given = false;
	int c, ret = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":vf:h", longopts, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'v':
			if (fmt_given && o.mode != OUT_VERBOSE)
				return rocelab_usage_error(cmd, "-v and --format exclude each other");
			o.mode = OUT_VERBOSE;
			fmt_given = true;
			break;
		case 'F':
			if (fmt_given && o.mode == OUT_VERBOSE)
				return rocelab_usage_error(cmd, "-v and --format exclude each other");
			if (strcmp(optarg, "text") == 0)
				o.mode = OUT_LINE;
			else if (strcmp(optarg, "jsonl") == 0)
				o.mode = OUT_JSONL;
			else
				return rocelab_usage_error(cmd, "--format '%s': expected text or jsonl",
							   optarg);
			fmt_given = true;
			break;
		case 's':
			o.summary = true;
			break;
		case 'f':
			o.bpf = optarg;
			break;
		case 'q':
			if (rocelab_parse_uint(optarg, ROCE_QPN_MASK, &v) != 0)
				return rocelab_usage_error(cmd, "--qp '%s': expected a QPN 0..0xffffff",
							   optarg);
			o.qp = (int64_t)v;
			break;
		case 'o':
			o.opcode = roce_opcode_by_name(optarg);
			if (o.opcode < 0 && rocelab_parse_uint(optarg, 255, &v) == 0)
				o.opcode = (int)v;
			if (o.opcode < 0)
				return rocelab_usage_error(cmd, "--opcode '%s': expected an IBTA name "
							   "(e.g. RC_SEND_ONLY) or a number 0..255", optarg);
			break;
		case 'l':
			if (parse_rate(optarg, &o.link_bps) != 0)
				return rocelab_usage_error(cmd, "--link-speed '%s': expected a rate such "
							   "as 25G, 100G or 400G", optarg);
			break;
		case 'n':
			o.parse_flags |= ROCE_PARSE_NO_ICRC;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return rocelab_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		default:
			return rocelab_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return rocelab_usage_error(cmd, "no capture file given");
	if (o.summary && fmt_given)
		return rocelab_usage_error(cmd, "--summary prints a table: -v and --format are for "
					   "frames");
	if (o.bpf != NULL) {
		char err[256];

		if (roce_bpf_check(o.bpf, err, sizeof(err)) != 0)
			return rocelab_usage_error(cmd, "-f '%s': %s", o.bpf, err);
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	for (int i = optind; i < argc; i++)
		ret |= dissect_file(argv[i], &o, argc - optind > 1 && o.mode != OUT_JSONL);
	return ret;
}

const struct rocelab_cmd cmd_dissect = {
	.name = "dissect",
	.summary = "decode captures: one line, every field, jsonl, or a per-flow summary",
	.usage = usage,
	.run = run,
	.needs_eal = false,
};
