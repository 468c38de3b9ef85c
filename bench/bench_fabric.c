/*
 * bench_fabric: how fast the fabric emulation runs, in events and packet-hops per wall-clock
 * second and in simulated time per wall-clock time, for three fabrics at 100G:
 *   2-host     one RDMA WRITE stream on one link
 *   incast     8:1 into one port of a star, DCQCN on, 10 ms of virtual time
 *   leafspine     128 hosts (8 leaves x 16, 8 spines), a permutation of long writes, 1 ms,
 *                 PMTU 4096
 *   leafspine-1k  the same at PMTU 1024: the packet size of the published ns-3 runs (HPCC and
 *                 ConWeave send 1000-byte payloads), to set beside their hours
 * Beside them, the floor of any simulator that carries real frames: one memcpy of every frame
 * per hop (the same bytes, measured in the same run).
 *   bench_fabric [--quick] [--ms N] [--discard] [CASE...]
 *     CASE       2-host, incast, leafspine, leafspine-1k (default: all four)
 *     --quick    the leaf-spines for 0.2 ms
 *     --ms N     the leaf-spines for N ms of virtual time (--ms 100: the ns-3 figures' 0.1 s)
 *     --discard  the scenarios' payload = discard: the targets drop the bytes that arrive
 *                (frames as before; ns-3 carries no payload at all)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include "bench_common.h"
#include "roce_fabric.h"
#include "roce_io.h"
#include "roce_verbs.h"

struct bench_case {
	const char *name;
	const char *text;
};

static const char two_host[] =
	"[scenario]\nname = 2-host\nmtu = 4096\nsample = 0\n"
	"[topology]\nkind = custom\n[host.a]\n[host.b]\n[link.ab]\na = a\nb = b\n"
	"[flow.w]\nsrc = a\ndst = b\nsize = 1M\ncount = 2000\ndepth = 16\n";

static const char incast[] =
	"[scenario]\nname = incast\nmtu = 1024\nduration = 10ms\nsample = 100us\n"
	"[topology]\nkind = star\nhosts = 9\n[nic]\ncc = dcqcn\n"
	"[pattern.in]\nkind = incast\nhosts = h1..h8\ndst = h0\nsize = 64K\ncount = 0\ndepth = 16\n";

/* the leaf-spine texts are generated: 128 flows h_i -> h_(i+64) */
static char leafspine[16384], leafspine_1k[16384];

static void make_leafspine(char *text, size_t cap, const char *name, double ms, unsigned int mtu)
{
	size_t n = (size_t)snprintf(text, cap,
		"[scenario]\nname = %s\nmtu = %u\nduration = %gms\nsample = 100us\n"
		"[topology]\nkind = leafspine\nleaves = 8\nspines = 8\nhosts_per_leaf = 16\n"
		"[nic]\ncc = dcqcn\n[capture]\nlinks = none\n", name, mtu, ms);

	for (int i = 0; i < 128 && n < cap; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "[flow.f%d]\nsrc = h%d\ndst = h%d\nsize = 256K\ncount = 0\ndepth = 4\n",
				      i, i, (i + 64) % 128);
}

/* One memcpy per frame-hop of @p bytes in 1100-byte frames: the floor. */
static double memcpy_floor(uint64_t hops, uint64_t bytes_per_hop)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	uint64_t n = hops > 2000000 ? 2000000 : hops;
	double t0 = bench_now(), dt;

	for (uint64_t i = 0; i < n; i++) {
		size_t off = (i * 4096) & ((1 << 20) - 16384);

		memcpy(dst + off, src + off, bytes_per_hop);
		bench_sink += dst[off];
	}
	dt = bench_now() - t0;
	return (double)n / dt;
}

/*
 * The bytes' floor: what each data frame of a case costs however the events around it are
 * handled. The sender builds it into an mbuf as the NIC does (no capture looks, so no ICRC): a
 * payload of ROCE_ZC_MIN bytes or more by reference (roce_wire_tmpl_build_mbuf_zc(), as the
 * fabric's sources are registered), a shorter one copied in (roce_wire_tmpl_build_mbuf_partial());
 * and the receiver copies the payload into its buffer (unless @p discard), over buffers as large
 * as the case's flows' (walked in order, as the flows walk them), in the same run.
 * @return frames per second
 */
static double bytes_floor(uint32_t payload, size_t buf_len, bool discard)
{
	static struct rte_mempool *mp, *segs;
	static struct rte_mbuf *trailer[4];
	uint8_t *src = malloc(buf_len), *dst = malloc(buf_len);
	size_t span = buf_len - buf_len % payload, off = 0;
	bool zc = payload >= ROCE_ZC_MIN;
	uint32_t n = 200000;
	struct roce_wire_tmpl t;
	struct rte_mbuf *m;
	struct roce_pkt pkt;
	double t0, dt;

	if (mp == NULL)
		mp = rte_pktmbuf_pool_create("bench_floor", 63, 0, 0,
					     RTE_PKTMBUF_HEADROOM + ROCE_TMPL_HDR_MAX + 4096 + 64,
					     SOCKET_ID_ANY);
	if (segs == NULL) {
		segs = rte_pktmbuf_pool_create("bench_floor_seg", 63, 0, 0, 64, SOCKET_ID_ANY);
		for (uint32_t pad = 0; pad < 4 && segs != NULL; pad++)
			trailer[pad] = roce_wire_zc_trailer(segs, pad);
	}
	m = mp != NULL ? rte_pktmbuf_alloc(mp) : NULL;
	if (src == NULL || dst == NULL || span == 0 || m == NULL || segs == NULL ||
	    trailer[3] == NULL) {
		rte_pktmbuf_free(m);
		free(src);
		free(dst);
		return 0;
	}
	memset(src, 0x5a, buf_len);
	memset(dst, 0, buf_len);
	roce_pkt_init(&pkt, ROCE_KIND_ROCEV2, ROCE_OP_RC_RDMA_WRITE_MIDDLE);
	pkt.dqpn = 0x11;
	pkt.payload_len = payload;
	pkt.payload = src;
	if (roce_wire_tmpl_init(&t, &pkt) != 0) {
		rte_pktmbuf_free(m);
		free(src);
		free(dst);
		return 0;
	}
	t0 = bench_now();
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *seg;
		const uint8_t *p;
		int len;

		pkt.psn = i & ROCE_PSN_MASK;
		pkt.payload = src + off;
		seg = zc ? rte_pktmbuf_alloc(segs) : NULL;
		if (seg != NULL && roce_wire_tmpl_build_mbuf_zc(&t, &pkt, m, seg, trailer) > 0) {
			p = rte_pktmbuf_mtod(m->next, const uint8_t *);
		} else {
			rte_pktmbuf_free(seg);
			rte_pktmbuf_reset(m);
			len = roce_wire_tmpl_build_mbuf_partial(&t, &pkt, m);
			p = rte_pktmbuf_mtod_offset(m, const uint8_t *, len - ROCE_ICRC_LEN - payload);
		}
		if (!discard)
			memcpy(dst + off, p, payload);
		else
			bench_sink += p[0];
		if (m->next != NULL)
			rte_pktmbuf_free(m->next);
		rte_pktmbuf_reset(m);
		off += payload;
		if (off == span)
			off = 0;
	}
	dt = bench_now() - t0;
	bench_sink += dst[buf_len / 2];
	rte_pktmbuf_free(m);
	free(src);
	free(dst);
	return n / dt;
}

/* A long run shows how far it has got, on a terminal only (stderr: the figures stay clean). */
static void show_progress(void *arg, roce_time_t now, roce_time_t end)
{
	const char *name = arg;

	fprintf(stderr, "\r%-12s %7.2f of %.2f ms simulated", name, (double)now / ROCE_MS,
		(double)end / ROCE_MS);
}

static int run_case(const struct bench_case *bc, bool discard)
{
	static const char *const set_discard[] = { "scenario.payload=discard" };
	struct roce_run_conf rc = { 0 };
	char err[512];
	struct roce_scenario *sc = roce_scenario_parse(bc->name, bc->text, set_discard, discard,
						       err, sizeof(err));
	struct roce_fabric *fab;
	uint64_t events, hops, bytes = 0, frames = 0, footprint = 0;
	uint32_t payload = 1024;
	int corrupt = 0;
	double t0, c0, wall, cpu, sim;
	struct rusage ru0, ru1;

	if (sc == NULL) {
		fprintf(stderr, "bench_fabric: %s\n", err);
		return -1;
	}
	fab = roce_fabric_create(sc, err, sizeof(err));
	if (fab == NULL) {
		fprintf(stderr, "bench_fabric: %s\n", err);
		roce_scenario_destroy(sc);
		return -1;
	}
	getrusage(RUSAGE_SELF, &ru0);
	t0 = bench_now();
	c0 = bench_cpu_now();
	if (isatty(STDERR_FILENO) && sc->duration >= 10 * ROCE_MS) {
		rc.progress = show_progress;
		rc.progress_arg = (void *)bc->name;
	}
	roce_fabric_run(fab, &rc);
	wall = bench_now() - t0;
	cpu = bench_cpu_now() - c0;
	getrusage(RUSAGE_SELF, &ru1);
	if (rc.progress != NULL)
		fprintf(stderr, "\r%60s\r", "");
	roce_fabric_work(fab, &events, &hops);
	for (int l = 0; l < sc->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats st;

			roce_link_stats(roce_fabric_link(fab, l), d, &st);
			bytes += st.tx_bytes;
		}
	for (int f = 0; f < sc->nflows; f++) {
		const struct roce_sc_flow *fl = &sc->flow[f];
		uint32_t pmtu = roce_mtu_bytes(fl->mtu ? fl->mtu : sc->mtu);
		struct roce_flow_result r;

		roce_fabric_flow_result(fab, f, &r);
		corrupt += !r.data_ok;
		frames += r.messages * ((fl->size + pmtu - 1) / pmtu);
		footprint += fl->size;
		payload = pmtu;
	}
	if (corrupt != 0) {
		/* a figure for a run that delivered the wrong bytes would be no figure at all */
		fprintf(stderr, "bench_fabric: %s: %d flows' targets do not hold their sources' bytes\n",
			bc->name, corrupt);
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
		return -1;
	}
	sim = (double)roce_fabric_now(fab) / ROCE_SEC;
	/* per CPU second too: on a shared machine the wall clock measures the others' load */
	printf("%-12s %4d hosts %3d sw  %7.3f ms sim in %6.3f s wall (%6.3f s CPU)  "
	       "%5.2f M events/s  %5.2f M hops/s wall, %5.2f per CPU s  sim/wall %.1e  "
	       "| memcpy floor %6.2f M hops/s, bytes' floor %5.2f | %llu hops, %.2f events a hop, "
	       "%ld page faults (%.3f s in the kernel)%s\n",
	       bc->name, sc->nhosts, sc->nswitches, sim * 1e3, wall, cpu,
	       (double)events / wall / 1e6, (double)hops / wall / 1e6, (double)hops / cpu / 1e6,
	       sim / wall, memcpy_floor(hops, hops ? bytes / hops : 1024) / 1e6,
	       frames ? (double)hops / (frames / bytes_floor(payload, footprint, discard)) / 1e6 :
	       0.0,
	       (unsigned long long)hops, hops ? (double)events / hops : 0.0,
	       ru1.ru_minflt - ru0.ru_minflt,
	       (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
	       (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6,
	       discard ? ", payloads discarded" : "");
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return 0;
}

int main(int argc, char **argv)
{
	const struct bench_case cases[] = {
		{ "2-host", two_host },
		{ "incast", incast },
		{ "leafspine", leafspine },
		{ "leafspine-1k", leafspine_1k },
	};
	bool wanted[ROCE_DIM(cases)] = { false }, any = false, discard = false;
	double ms = 1.0;

	for (int a = 1; a < argc; a++) {
		size_t i = 0;

		if (strcmp(argv[a], "--quick") == 0) {
			ms = 0.2;
			continue;
		}
		if (strcmp(argv[a], "--discard") == 0) {
			discard = true;
			continue;
		}
		if (strcmp(argv[a], "--ms") == 0) {
			char *end = NULL;

			ms = a + 1 < argc ? strtod(argv[a + 1], &end) : 0;
			if (end == NULL || *end != '\0' || !(ms > 0 && ms <= 10000)) {
				fprintf(stderr, "bench_fabric: --ms needs a time in ms, above 0 and "
					"at most 10000\n");
				return EXIT_FAILURE;
			}
			a++;
			continue;
		}
		while (i < ROCE_DIM(cases) && strcmp(argv[a], cases[i].name) != 0)
			i++;
		if (i == ROCE_DIM(cases)) {
			fprintf(stderr, "bench_fabric: unknown case '%s' (2-host, incast, leafspine, "
				"leafspine-1k)\n", argv[a]);
			return EXIT_FAILURE;
		}
		wanted[i] = any = true;
	}
	if (roce_eal_init(NULL) != 0)
		return EXIT_FAILURE;
	make_leafspine(leafspine, sizeof(leafspine), "leafspine", ms, 4096);
	make_leafspine(leafspine_1k, sizeof(leafspine_1k), "leafspine-1k", ms, 1024);
	printf("bench_fabric: wall-clock speed of the fabric emulation (one core, virtual time)\n");
	for (size_t i = 0; i < ROCE_DIM(cases); i++)
		if ((wanted[i] || !any) && run_case(&cases[i], discard) != 0)
			return EXIT_FAILURE;
	printf("published: ns-3 (HPCC/ConWeave lineage, 1000-byte payloads) takes hours for 0.1 s of a "
	       "128-host fabric on 8 cores (ConWeave README); Parsimon reports 11-27 h for 5 s of a "
	       "large fabric.\n");
	return EXIT_SUCCESS;
}
