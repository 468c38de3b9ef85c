/* rocelab fixup: recompute the IPv4 checksums and ICRCs of an edited capture. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocelab.h"
#include "roce_file.h"
#include "roce_io.h"
#include "roce_wire.h"

#define DLT_EN10MB_NUM 1

static const char usage[] =
	"usage: rocelab fixup [--force] IN OUT\n"
	"\n"
	"Copy capture IN to OUT (pcap, nanosecond timestamps), recomputing the IPv4 header\n"
	"checksum and the ICRC of every RoCEv2 and RoCEv1 frame, for example after editing TTLs,\n"
	"DSCPs or PSNs with a hex editor or tcprewrite. Lengths are not changed. Other frames are\n"
	"copied as they are; timestamps are kept. \"-\" is standard input or output.\n"
	"\n"
	"OUT is written beside and renamed over when done. An existing OUT must be a pcap or pcapng\n"
	"capture (or empty): --force replaces any other regular file; a link, FIFO, device,\n"
	"directory, read-only file, or IN itself, never.\n"
	"\n"
	"Exit status: 0 done; 1 IN could not be read or broke off (the frames before the break are\n"
	"written), or OUT could not be written or was refused (then it is as it was); 2 bad\n"
	"arguments.\n";

static uint8_t frame[262144];

static int run(int argc, char **argv)
{
	uint64_t frames = 0, fixed = 0, csums = 0, icrcs = 0;
	struct roce_pcap_writer *w;
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	const char *in, *out, *arg[2];
	char err[512];
	int rc, narg = 0, ret = 0;

	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0)
			roce_out_force = true;
		else if (argv[i][0] == '-' && argv[i][1] != '\0')	/* "-" alone is stdin/stdout */
			return rocelab_usage_error(argv[0], "unknown option '%s'", argv[i]);
		else if (narg++ < 2)
			arg[narg - 1] = argv[i];
	}
	if (narg != 2)
		return rocelab_usage_error(argv[0], "expected IN and OUT, got %d argument%s", narg,
					   narg == 1 ? "" : "s");
	in = arg[0];
	out = arg[1];
	if ((strcmp(in, out) == 0 && strcmp(in, "-") != 0) || rocelab_same_file(in, out))
		return rocelab_usage_error(argv[0], "IN '%s' and OUT '%s' are the same file: write "
					   "to another", in, out);
	r = roce_pcap_open(in, NULL, err, sizeof(err));
	if (r == NULL) {
		fprintf(stderr, "rocelab fixup: %s\n", err);
		return EXIT_FAILURE;
	}
	if (roce_pcap_linktype(r) != DLT_EN10MB_NUM) {
		fprintf(stderr, "rocelab fixup: %s: link type %d is not Ethernet; nothing to fix\n", in,
			roce_pcap_linktype(r));
		roce_pcap_close(r);
		return EXIT_FAILURE;
	}
	w = roce_pcap_create(out, err, sizeof(err));
	if (w == NULL) {
		rocelab_out_error(argv[0], NULL, err, errno);
		roce_pcap_close(r);
		return EXIT_FAILURE;
	}
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		uint32_t len = f.caplen < sizeof(frame) ? f.caplen : (uint32_t)sizeof(frame);
		int changed;

		memcpy(frame, f.data, len);
		frames++;
		changed = roce_wire_fixup(frame, len);
		if (changed > 0) {
			fixed++;
			csums += (changed & ROCE_FIXUP_IP_CSUM) != 0;
			icrcs += (changed & ROCE_FIXUP_ICRC) != 0;
		}
		if (roce_pcap_write(w, f.ts_ns, frame, len) != 0) {
			fprintf(stderr, "rocelab fixup: %s: write failed\n", out);
			ret = EXIT_FAILURE;
			break;
		}
	}
	if (ret == 0 && roce_pcap_flush_writer(w) != 0) {
		fprintf(stderr, "rocelab fixup: %s: write failed\n", out);
		ret = EXIT_FAILURE;
	}
	if (ret != 0) {
		roce_pcap_discard_writer(w);	/* a full disk: OUT stays as it was */
	} else if (roce_pcap_close_writer(w) != 0) {
		fprintf(stderr, "rocelab fixup: %s: write failed\n", out);
		ret = EXIT_FAILURE;
	}
	if (rc < 0 && ret == 0) {
		/* one line: what broke, and what was kept of it */
		fprintf(stderr, "rocelab fixup: %s; the %llu frame%s before it written to %s\n",
			roce_pcap_error(r), (unsigned long long)frames, frames == 1 ? "" : "s", out);
		ret = EXIT_FAILURE;
	}
	roce_pcap_close(r);
	if (ret != 0)
		return ret;
	fprintf(stderr, "rocelab fixup: %llu frames, %llu fixed (%llu IPv4 checksums, %llu ICRCs)\n",
		(unsigned long long)frames, (unsigned long long)fixed, (unsigned long long)csums,
		(unsigned long long)icrcs);
	return ret;
}

const struct rocelab_cmd cmd_fixup = {
	.name = "fixup",
	.summary = "recompute the IPv4 checksums and ICRCs of an edited capture",
	.usage = usage,
	.run = run,
	.needs_eal = false,
};
