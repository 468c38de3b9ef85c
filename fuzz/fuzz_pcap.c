/* libFuzzer target: any bytes as a capture file through roce_pcap_open/next, then the parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "roce_io.h"
#include "roce_wire.h"
#include "wire_check.h"

#define MAX_FRAMES 4096		/* a small file can claim many tiny frames; enough is enough */

static void fail(const char *why)
{
	fprintf(stderr, "fuzz_pcap: %s\n", why);
	abort();
}

static void read_all(const char *path, const char *bpf)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	char err[512];
	int rc, frames = 0;

	err[0] = '\0';
	r = roce_pcap_open(path, bpf, err, sizeof(err));
	if (r == NULL) {
		if (err[0] == '\0')
			fail("roce_pcap_open failed without a message");
		return;
	}
	while (frames < MAX_FRAMES && (rc = roce_pcap_next(r, &f)) == 1) {
		struct roce_pkt pkt;
		const char *why;
		int prc;

		frames++;
		if (f.n == 0 || f.caplen > 0x40000)
			fail("frame number 0 or an absurd caplen");
		prc = roce_wire_parse(f.data, f.caplen, 0, &pkt);
		why = check_decode(f.data, f.caplen, prc, &pkt, true);
		if (why != NULL)
			fail(why);
	}
	if (frames < MAX_FRAMES && rc < 0) {
		const char *e = roce_pcap_error(r);

		if (rc != -EBADMSG && rc != -ENOTSUP)
			fail("roce_pcap_next returned an undocumented error");
		if (e == NULL || e[0] == '\0')
			fail("a read error without a message");
	}
	roce_pcap_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = memfd_create("fuzz_pcap", 0);

	if (fd < 0)
		fail("memfd_create");
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0)
			fail("write to the memfd");
		off += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	read_all(path, NULL);
	read_all(path, "udp dst port 4791 or ether proto 0x8915");
	close(fd);
	return 0;
}
