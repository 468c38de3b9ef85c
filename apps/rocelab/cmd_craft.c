/* rocelab craft: write frames described by key=value text (arguments or a file) to a pcap. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocelab.h"
#include "roce_file.h"
#include "roce_io.h"
#include "roce_wire.h"

#define FRAME_MAX 65536

static const char usage[] =
	"usage: rocelab craft [-o OUT.pcap] [--count N] [--psn-step] [--ts-step NS] [--force]\n"
	"                     (FRAME... | -f FILE)\n"
	"\n"
	"Write RoCEv2, RoCEv1, PFC and PAUSE frames described as key=value words to a pcap\n"
	"(nanosecond timestamps: frame i at i * NS ns, NS = 1000 unless --ts-step).\n"
	"\n"
	"  -o OUT.pcap    output file; \"-\" is standard output (the default when it is not a terminal)\n"
	"  -f FILE        one frame per line; '#' starts a comment; \"-\" reads standard input\n"
	"  --count N      write each frame N times (default 1)\n"
	"  --psn-step     add 1 to the PSN of each repetition\n"
	"  --ts-step NS   nanoseconds between frames (default 1000)\n"
	"  --force        replace OUT even if it is a file that is not a pcap or pcapng capture\n"
	"                 (never a link, FIFO, device, directory or read-only file)\n"
	"\n"
	"A FRAME argument that holds blanks is one frame; consecutive single key=value arguments\n"
	"make one frame; ';' also ends a frame. Keys (defaults: rocev2 RC_SEND_ONLY 10.0.0.1 >\n"
	"10.0.0.2, TTL 64, pkey 0xffff, correct checksums and ICRC):\n"
	"  kind=rocev2|rocev1|pfc|pause   op=NAME|NUM (IBTA opcode name, e.g. RC_RDMA_WRITE_FIRST)\n"
	"  dmac= smac=MAC   vlan=VID [pcp= dei= tpid=] (up to 2 tags, outer first)\n"
	"  src= dst=IPv4|IPv6 (the version follows the addresses)   dscp= ecn=not-ect|ect1|ect0|ce\n"
	"  ttl= id= df= ipcsum= (IPv4; ipcsum keeps a wrong checksum)   flow= (IPv6/GRH)\n"
	"  sport= dport= udpcsum=\n"
	"  BTH: qp= psn= se= mig= pad= (explicit pad) tver= pkey= fecn= becn= resv6= ackreq= resv7=\n"
	"  DETH: qkey= srcqp=   RETH: va= rkey= dmalen=   AtomicETH: va= rkey= swap= cmp=\n"
	"  AETH: syndrome= msn=   AtomicAckETH: orig=   ImmDt: imm=   IETH: ieth=   FETH: feth=\n"
	"  len=BYTES pattern=inc|random|0xNN seed=N   payload=HEX   icrc=ok|bad|0xVALUE\n"
	"  PFC: cev=0xNN quanta=q0,...,q7   PAUSE: quanta=N\n"
	"Numbers are decimal or 0x hex.\n"
	"\n"
	"example: rocelab craft -o w.pcap 'op=RC_RDMA_WRITE_FIRST qp=0x11 psn=100 va=0x1000\n"
	"         rkey=0x55 dmalen=8192 len=1024 ecn=ce' 'op=RC_ACKNOWLEDGE qp=0x11 psn=100'\n"
	"\n"
	"Exit status: 0 written; 1 a bad line in FILE, an I/O error or OUT refused (OUT is left as\n"
	"it was); 2 bad arguments.\n";

struct craft_opts {
	const char *out;	/* output path */
	const char *file;	/* -f FILE, or NULL */
	uint64_t count;		/* repetitions of each frame */
	bool psn_step;		/* PSN + 1 per repetition */
	uint64_t ts_step;	/* ns between frames */
};

struct craft_state {
	const struct craft_opts *o;
	struct roce_pcap_writer *w;
	uint64_t frames;	/* written so far */
};

static struct roce_desc desc;		/* 64 KiB: not on the stack */
static uint8_t frame[FRAME_MAX];


/*
 * Write one descriptor line @p count times; @p where names it in messages ("FILE:3" or
 * "frame 2"). Returns 1 (written), 0 (blank line), -EINVAL (bad line), -EIO.
 */
static int craft_line(struct craft_state *st, const char *line, const char *where)
{
	char err[512];
	int rc, len;

	rc = roce_desc_parse(line, &desc, err, sizeof(err));
	if (rc <= 0) {
		if (rc < 0)
			fprintf(stderr, "rocelab craft: %s: %s\n", where, err);
		return rc;
	}
	for (uint64_t i = 0; i < st->o->count; i++) {
		len = roce_desc_build(&desc, frame, sizeof(frame));
		if (len < 0) {
			fprintf(stderr, "rocelab craft: %s: %s\n", where, len == -ENOSPC || len == -EINVAL ?
				"the frame would be longer than 65535 bytes" : strerror(-len));
			return -EINVAL;
		}
		if (roce_pcap_write(st->w, st->frames * st->o->ts_step, frame, (uint32_t)len) != 0) {
			fprintf(stderr, "rocelab craft: %s: write failed\n", st->o->out);
			return -EIO;
		}
		st->frames++;
		if (st->o->psn_step)
			desc.pkt.psn = (desc.pkt.psn + 1) & ROCE_PSN_MASK;
	}
	return 1;
}

static int craft_file(struct craft_state *st)
{
	const char *path = st->o->file;
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char *line = NULL, where[512];
	size_t cap = 0;
	unsigned long n = 0;
	ssize_t len;
	int rc = 0;

	if (f == NULL) {
		fprintf(stderr, "rocelab craft: %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		n++;
		snprintf(where, sizeof(where), "%s:%lu", path, n);
		if (memchr(line, '\0', (size_t)len) != NULL) {
			/* the text after it would be dropped unseen: a binary file, or a stray NUL */
			fprintf(stderr, "rocelab craft: %s: a NUL byte in the line (not a text file?)\n",
				where);
			rc = -EINVAL;
			break;
		}
		rc = craft_line(st, line, where);
		if (rc < 0)
			break;
		rc = 0;
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "rocelab craft: %s: %s\n", path, strerror(errno));
		rc = -EIO;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* The frames given as arguments; see the usage text for how they split into frames. */
static int craft_args(struct craft_state *st, int argc, char **argv)
{
	size_t total = 1;
	char *buf, *p, where[32];
	int nframe = 0, rc = 0;

	for (int i = 0; i < argc; i++)
		total += strlen(argv[i]) + 1;
	buf = malloc(total);
	if (buf == NULL)
		return -ENOMEM;
	/* One string, ';' between frames. */
	p = buf;
	for (int i = 0; i < argc; i++) {
		bool whole = strpbrk(argv[i], " \t") != NULL;

		if (whole && p != buf && p[-1] != ';')
			*p++ = ';';
		p = stpcpy(p, argv[i]);
		*p++ = whole ? ';' : ' ';
	}
	*p = '\0';
	for (char *save = NULL, *fr = strtok_r(buf, ";", &save); fr != NULL;
	     fr = strtok_r(NULL, ";", &save)) {
		snprintf(where, sizeof(where), "frame %d", ++nframe);
		rc = craft_line(st, fr, where);
		if (rc < 0)
			break;
		rc = 0;
	}
	free(buf);
	return rc;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "psn-step", no_argument, NULL, 'p' },
		{ "ts-step", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct craft_opts o = { .out = NULL, .count = 1, .ts_step = 1000 };
	struct craft_state st = { .o = &o };
	char err[512];
	int opt, rc, wrc;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:f:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o.out = optarg;
			break;
		case 'f':
			o.file = optarg;
			break;
		case 'c':
			if (rocelab_parse_uint(optarg, UINT32_MAX, &o.count) != 0 || o.count == 0)
				return rocelab_usage_error(argv[0], "--count '%s': expected a number 1..%u",
							   optarg, UINT32_MAX);
			break;
		case 'p':
			o.psn_step = true;
			break;
		case 't':
			if (rocelab_parse_uint(optarg, UINT32_MAX, &o.ts_step) != 0)
				return rocelab_usage_error(argv[0], "--ts-step '%s': expected nanoseconds",
							   optarg);
			break;
		case 'F':
			roce_out_force = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			if (optopt != 0)
				return rocelab_usage_error(argv[0], "option -%c needs a value or is unknown",
							   optopt);
			return rocelab_usage_error(argv[0], "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o.file != NULL && optind < argc)
		return rocelab_usage_error(argv[0], "give frames as arguments or with -f FILE, not both");
	if (o.file == NULL && optind == argc)
		return rocelab_usage_error(argv[0], "no frames: give FRAME arguments or -f FILE");
	if (o.out == NULL) {
		if (isatty(STDOUT_FILENO))
			return rocelab_usage_error(argv[0], "give -o OUT.pcap (standard output is a terminal)");
		o.out = "-";
	}

	/* Check the argument frames before creating the file: a typo leaves nothing behind. */
	if (o.file == NULL) {
		for (int i = optind; i < argc; i++)
			if (strchr(argv[i], '=') == NULL && strcmp(argv[i], ";") != 0)
				return rocelab_usage_error(argv[0], "'%s' is not a key=value word",
							   argv[i]);
	}
	if (o.file != NULL && rocelab_same_file(o.file, o.out))
		return rocelab_usage_error(argv[0], "-o '%s' is the frame file: write to another file",
					   o.out);
	/* the writer writes beside OUT and renames over it at close: an error, or a frame
	 * refused, discards it and leaves OUT as it was */
	st.w = roce_pcap_create(o.out, err, sizeof(err));
	if (st.w == NULL) {
		rocelab_out_error(argv[0], NULL, err, errno);
		return EXIT_FAILURE;
	}
	rc = o.file != NULL ? craft_file(&st) : craft_args(&st, argc - optind, argv + optind);
	if (rc == 0 && roce_pcap_flush_writer(st.w) != 0) {
		fprintf(stderr, "rocelab craft: %s: write failed\n", o.out);
		rc = -EIO;
	}
	if (rc != 0) {
		roce_pcap_discard_writer(st.w);
		return o.file == NULL && rc == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	wrc = roce_pcap_close_writer(st.w);
	if (wrc != 0) {
		fprintf(stderr, "rocelab craft: %s: write failed\n", o.out);
		return EXIT_FAILURE;
	}
	if (strcmp(o.out, "-") != 0)
		fprintf(stderr, "rocelab craft: wrote %llu frame%s to %s\n",
			(unsigned long long)st.frames, st.frames == 1 ? "" : "s", o.out);
	return 0;
}

const struct rocelab_cmd cmd_craft = {
	.name = "craft",
	.summary = "write frames described as key=value text to a pcap",
	.usage = usage,
	.run = run,
	.needs_eal = false,
};
