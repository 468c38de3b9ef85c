/* The I/O floor for dissect: a plain libpcap read loop that decodes nothing. */
#include <pcap/pcap.h>
#include <stdio.h>

#include "bench_common.h"

int main(int argc, char **argv)
{
	static char buf[1 << 18];
	char err[PCAP_ERRBUF_SIZE];
	FILE *fp;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0, bytes = 0;
	double t0;
	pcap_t *p;

	if (argc != 2) {
		fprintf(stderr, "usage: pcap_floor FILE\n");
		return 2;
	}
	t0 = bench_now();
	/* the same reading as rocelab's (lib/io/io_pcap.c): a 256 KiB stdio buffer under libpcap */
	fp = fopen(argv[1], "rb");
	if (fp == NULL) {
		perror(argv[1]);
		return 1;
	}
	setvbuf(fp, buf, _IOFBF, sizeof(buf));
	p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, err);
	if (p == NULL) {
		fprintf(stderr, "pcap_floor: %s\n", err);
		return 1;
	}
	while (pcap_next_ex(p, &h, &data) == 1) {
		n++;
		bytes += h->caplen + data[h->caplen - 1];
	}
	pcap_close(p);
	bench_sink = bytes;
	printf("%llu frames in %.4f s\n", (unsigned long long)n, bench_now() - t0);
	return 0;
}
