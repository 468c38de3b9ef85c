/*
 * Lesson: GPUDirect RDMA. A message goes from GPU memory on one host to GPU memory on another,
 * staged through host memory (a copy over PCIe on each side around the RDMA WRITE) or read and
 * written by the NICs in GPU memory directly. The RDMA WRITEs are measured between two emulated
 * hosts (lib/perf, virtual time); the GPU<->host copies are modelled from the PCIe link's rate,
 * since rocelab has no GPU: the model and its assumptions are printed beside the figures.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roce_perf.h"
#include "learn_private.h"

double roce_pcie_gbytes(const struct roce_pcie *p)
{
	double gts;

	switch (p->gen) {
	case 3: gts = 8; break;
	case 4: gts = 16; break;
	case 5: gts = 32; break;
	default: return 0;
	}
	if (p->lanes < 1 || p->lanes > 16 || p->mps < 128 || p->mps > 4096)
		return 0;
	/* GT/s per lane, 128b/130b, 8 bits a byte; then the share of each TLP that is payload */
	return gts * p->lanes * 128.0 / 130.0 / 8.0 * p->mps / (p->mps + ROCE_PCIE_TLP_OVERHEAD);
}

/* One GPU<->host copy of @p bytes, us: the call's fixed cost and the bytes at the link's rate. */
static double copy_us(const struct roce_pcie *p, double bytes, double gbytes)
{
	return p->copy_us + bytes / (gbytes * 1e3);
}

static int measure(enum roce_perf_test test, uint32_t size, struct roce_perf_result *r)
{
	struct roce_perf_conf c;
	uint64_t iters = (64ull << 20) / size;
	char why[256];

	roce_perf_defaults(&c, test);
	c.size = size;
	if (test == ROCE_PERF_WRITE_BW)
		c.iters = iters < 20 ? 20 : iters > 2000 ? 2000 : iters;
	else
		c.iters = 50;
	if (roce_perf_check(&c, why, sizeof(why)) != 0)
		return -EINVAL;
	return roce_perf_run(&c, r);
}

int roce_learn_gpudirect(const struct roce_pcie *pcie, const uint32_t *sizes, size_t n,
			 struct roce_learn_gpu_point *pts)
{
	double gb = roce_pcie_gbytes(pcie);

	if (gb <= 0 || pcie->copy_us < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct roce_learn_gpu_point *p = &pts[i];
		struct roce_perf_result lat, bw;
		double s = sizes[i], chunk, nchunks, stage, t_rdma;
		int rc;

		if (sizes[i] == 0)
			return -EINVAL;
		rc = measure(ROCE_PERF_WRITE_LAT, sizes[i], &lat);
		if (rc == 0)
			rc = measure(ROCE_PERF_WRITE_BW, sizes[i], &bw);
		if (rc != 0)
			return rc;
		memset(p, 0, sizeof(*p));
		p->size = sizes[i];
		p->rdma_lat_us = lat.lat_typical;
		p->rdma_gbps = bw.bw_avg_gbps;
		p->copy_us = copy_us(pcie, s, gb);
		p->gdr_lat_us = p->rdma_lat_us;
		p->staged_lat_us = p->copy_us + p->rdma_lat_us + p->copy_us;
		p->gdr_gbps = p->rdma_gbps;
		/* bits / us = Mb/s; / 1e3 = Gb/s */
		t_rdma = s * 8 / (p->rdma_gbps * 1e3);
		p->staged_gbps = s * 8 / (2 * p->copy_us + t_rdma) / 1e3;
		/*
		 * Chunks through double buffers, three stages (copy out, send, copy in): the first
		 * chunk passes all three, each later one leaves a slowest stage after the one
		 * before it. One chunk is the staged path's time.
		 */
		chunk = fmin(s, ROCE_LEARN_GPU_CHUNK);
		nchunks = ceil(s / chunk);
		t_rdma = chunk * 8 / (p->rdma_gbps * 1e3);
		stage = fmax(copy_us(pcie, chunk, gb), t_rdma);
		p->pipelined_gbps = s * 8 / (2 * copy_us(pcie, chunk, gb) + t_rdma +
					     (nchunks - 1) * stage) / 1e3;
	}
	return 0;
}

/* The two data paths, boxes and arrows, as an SVG (caller frees). */
static char *paths_svg(void)
{
	static const struct {
		const char *title;
		const char *box[7];
		const char *arrow[6];
	} row[] = {
		{ "Without GPUDirect: staged through host memory",
		  { "GPU memory", "host memory", "NIC", "", "NIC", "host memory", "GPU memory" },
		  { "1 copy (PCIe)", "2 DMA (PCIe)", "wire", "wire", "3 DMA (PCIe)",
		    "4 copy (PCIe)" } },
		{ "GPUDirect RDMA: the NIC reads and writes GPU memory",
		  { "GPU memory", "", "NIC", "", "NIC", "", "GPU memory" },
		  { "1 DMA, peer to peer (PCIe)", "", "wire", "wire", "",
		    "2 DMA, peer to peer (PCIe)" } },
	};
	const int bw = 92, gap = 18, step = bw + gap, row_h = 90;
	size_t cap = 8192, len = 0;
	char *s = malloc(cap);

	if (s == NULL)
		return NULL;
#define OUT(...) len += (size_t)snprintf(s + len, len < cap ? cap - len : 0, __VA_ARGS__)
	OUT("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "font-family=\"sans-serif\" font-size=\"12\">\n"
	    /* a file of its own: white under it, as the charts, not a dark viewer's background */
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", 7 * step + 10,
	    2 * row_h + 20);
	OUT("<defs><marker id=\"gpu-arrow\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" "
	    "refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#444\"/></marker>"
	    "</defs>\n");
	for (size_t r = 0; r < ROCE_DIM(row); r++) {
		int y = 10 + (int)r * row_h, prev = -1;

		OUT("<text x=\"0\" y=\"%d\" font-weight=\"bold\">%s</text>\n", y + 12, row[r].title);
		for (int b = 0; b < 7; b++) {
			int x = b * step;

			if (row[r].box[b][0] == '\0' && b != 3)
				continue;
			if (b == 3)	/* the network between the hosts */
				OUT("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"36\" fill=\"#eee\"/>"
				    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">Ethernet</text>\n",
				    x, y + 24, bw, x + bw / 2, y + 46);
			else
				OUT("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"36\" rx=\"4\" "
				    "fill=\"%s\" stroke=\"#333\"/><text x=\"%d\" y=\"%d\" "
				    "text-anchor=\"middle\">%s</text>\n",
				    x, y + 24, bw, strcmp(row[r].box[b], "NIC") == 0 ? "#cde" :
				    strncmp(row[r].box[b], "GPU", 3) == 0 ? "#cec" : "#fdb",
				    x + bw / 2, y + 46, row[r].box[b]);
			if (prev >= 0) {
				const char *label = row[r].arrow[b - 1];

				if (label[0] == '\0')
					label = row[r].arrow[prev];
				OUT("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\" "
				    "marker-end=\"url(#gpu-arrow)\"/><text x=\"%d\" y=\"%d\" "
				    "text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
				    prev * step + bw, y + 42, x - 2, y + 42,
				    (prev * step + bw + x) / 2, y + 76, label);
			}
			prev = b;
		}
	}
	OUT("</svg>\n");
#undef OUT
	if (len >= cap) {
		free(s);
		return NULL;
	}
	return s;
}

/*
 * A rate for the table: one decimal from 1 Gb/s up, two significant digits below, so that
 * 8 bytes staged through host memory read 0.0061 Gb/s, not a "0.0" that says nothing moved.
 */
static const char *gbps_cell(double v, char *buf, size_t size)
{
	snprintf(buf, size, v >= 1 ? "%.1f" : "%.2g", v);
	return buf;
}

static int run_gpudirect(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
			 size_t errlen)
{
	static const uint32_t sizes_all[] = { 8, 64, 512, 4096, 32768, 262144, 1u << 20, 4u << 20,
					      16u << 20 };
	static const uint32_t sizes_quick[] = { 64, 4096, 262144, 4u << 20 };
	static const char *const head[] = { "message", "RDMA WRITE (us)", "one copy (us)",
					    "staged (us)", "GPUDirect (us)", "staged (Gb/s)",
					    "pipelined (Gb/s)", "GPUDirect (Gb/s)" };
	static const char *const cost_head[] = { "<path", "DMA transfers of each byte, per host",
						 "host-memory passes per host", "copy calls per message",
						 "latency, smallest message (us)" };
	static const char *const slot_head[] = { "<NIC slot", "GB/s after overheads", "Gb/s",
						 "100G NIC", "200G NIC", "400G NIC" };
	static const struct roce_pcie slots[] = {
		{ 3, 8, 256, 0 }, { 3, 16, 256, 0 }, { 4, 8, 256, 0 }, { 4, 16, 256, 0 },
		{ 5, 16, 256, 0 },
	};
	const struct roce_pcie pcie = { .gen = 4, .lanes = 16, .mps = 256, .copy_us = 5 };
	const uint32_t *sizes = conf->quick ? sizes_quick : sizes_all;
	size_t n = conf->quick ? ROCE_DIM(sizes_quick) : ROCE_DIM(sizes_all);
	struct roce_learn_gpu_point pts[ROCE_DIM(sizes_all)];
	double x[ROCE_DIM(sizes_all)], y[4][ROCE_DIM(sizes_all)];
	struct roce_table *t;
	struct roce_chart *c;
	char text[1024], *svg;
	size_t k4 = 0;
	int rc;

	snprintf(text, sizeof(text),
		 "Training jobs keep their data in GPU memory. Without GPUDirect RDMA the NIC "
		 "cannot reach it: the sender copies each message over PCIe into a host buffer "
		 "(cudaMemcpy), the NIC sends it from there, and the receiver copies it from its "
		 "host buffer up to its GPU. With GPUDirect RDMA (the nvidia-peermem module "
		 "registers GPU memory as an MR) the NIC reads and writes GPU memory peer to peer "
		 "over PCIe: no host memory, no copies, no CPU. The RDMA WRITEs below are measured "
		 "between two emulated hosts at 100G, 500 ns apart (write_lat, write_bw); the copies "
		 "are modelled: a PCIe Gen%u x%u link, %u-byte TLPs (%.1f GB/s after encoding and "
		 "TLP overheads), and an assumed %.0f us per synchronous copy call (launch and "
		 "synchronisation; measure yours with CUDA's bandwidthTest).",
		 pcie.gen, pcie.lanes, pcie.mps, roce_pcie_gbytes(&pcie), pcie.copy_us);
	learn_text(conf, rep, text);
	svg = paths_svg();
	if (svg == NULL)
		return learn_nomem(err, errlen);
	roce_report_svg(rep, svg);
	learn_write_file(conf, "gpudirect-paths.svg", svg);
	free(svg);

	rc = roce_learn_gpudirect(&pcie, sizes, n, pts);
	if (rc != 0) {
		snprintf(err, errlen, "write_lat/write_bw: %s", strerror(-rc));
		return rc;
	}
	t = roce_table_create("GPU memory to GPU memory, one message", ROCE_DIM(head), head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct roce_learn_gpu_point *p = &pts[i];

		char g[3][32];

		learn_row(t, "%u\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s", p->size, p->rdma_lat_us,
			  p->copy_us, p->staged_lat_us, p->gdr_lat_us,
			  gbps_cell(p->staged_gbps, g[0], sizeof(g[0])),
			  gbps_cell(p->pipelined_gbps, g[1], sizeof(g[1])),
			  gbps_cell(p->gdr_gbps, g[2], sizeof(g[2])));
		x[i] = p->size;
		y[0][i] = p->staged_lat_us;
		y[1][i] = p->gdr_lat_us;
		y[2][i] = p->staged_gbps;
		y[3][i] = p->pipelined_gbps;
	}
	while (k4 + 1 < n && pts[k4].size < 4096)	/* the example: 4 KiB, or the next size */
		k4++;
	snprintf(text, sizeof(text),
		 "staged = one copy + the RDMA WRITE + one copy; staged Gb/s: one bounce buffer, "
		 "copy, send and copy one after another; pipelined: %u KiB chunks through double "
		 "buffers, the slowest stage sets the pace; GPUDirect: the RDMA WRITE alone (the "
		 "NIC's PCIe reads of GPU memory are as fast as of host memory here), its Gb/s "
		 "write_bw's, 128 messages in flight. The staged Gb/s send one message at a time, "
		 "so at small sizes their gap to GPUDirect is the copies' fixed cost and the queue "
		 "depth together; one GPUDirect WRITE at a time moves a message in its latency "
		 "column (%u B in %.2f us: %.0f Gb/s)",
		 ROCE_LEARN_GPU_CHUNK >> 10, pts[k4].size, pts[k4].gdr_lat_us,
		 pts[k4].gdr_lat_us > 0 ? pts[k4].size * 8 / pts[k4].gdr_lat_us / 1e3 : 0);
	roce_table_note(t, text);
	learn_table(conf, rep, t);
	roce_table_destroy(t);

	roce_report_row(rep);
	c = roce_chart_create(ROCE_CHART_LINE, "Latency, GPU to GPU", "message size (bytes)",
			      "latency (us)");
	if (c != NULL) {
		roce_chart_xlog(c);
		roce_chart_ylog(c);
		roce_chart_series(c, "staged through host memory", x, y[0], n);
		roce_chart_series(c, "GPUDirect RDMA", x, y[1], n);
	}
	learn_chart(conf, rep, c, "gpudirect-lat.svg");
	for (size_t i = 0; i < n; i++)
		y[1][i] = pts[i].gdr_gbps;
	c = roce_chart_create(ROCE_CHART_LINE, "Bandwidth, GPU to GPU", "message size (bytes)",
			      "Gb/s");
	if (c != NULL) {
		roce_chart_xlog(c);
		roce_chart_series(c, "staged, one buffer", x, y[2], n);
		roce_chart_series(c, "staged, pipelined", x, y[3], n);
		roce_chart_series(c, "GPUDirect RDMA", x, y[1], n);
	}
	learn_chart(conf, rep, c, "gpudirect-bw.svg");

	t = roce_table_create("What each byte costs the hosts", ROCE_DIM(cost_head), cost_head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	/* pts[0] is the smallest message: the latency the copies' fixed cost dominates */
	learn_row(t, "staged through host memory\t2 (GPU copy engine, NIC)\t2 (written by one "
		  "DMA, read by another)\t2\t%.2f", pts[0].staged_lat_us);
	learn_row(t, "GPUDirect RDMA\t1 (NIC, peer to peer)\t0\t0\t%.2f", pts[0].gdr_lat_us);
	snprintf(text, sizeof(text), "latency of the smallest message (%u bytes): the two copy calls' fixed cost "
		 "(%.0f us each) dwarfs the network's", pts[0].size, pcie.copy_us);
	roce_table_note(t, text);
	learn_table(conf, rep, t);
	roce_table_destroy(t);

	learn_text(conf, rep,
		   "The NIC's own slot matters as much: every byte it sends or receives crosses its "
		   "PCIe link once, with or without GPUDirect. A NIC in a slot slower than its port "
		   "never reaches line rate, and nothing on the network shows why.");
	t = roce_table_create("Which PCIe slot a NIC needs (256-byte TLPs)", ROCE_DIM(slot_head),
			      slot_head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (size_t i = 0; i < ROCE_DIM(slots); i++) {
		double gbps = roce_pcie_gbytes(&slots[i]) * 8;

		learn_row(t, "Gen%u x%u\t%.1f\t%.0f\t%s\t%s\t%s", slots[i].gen, slots[i].lanes,
			  gbps / 8, gbps, gbps >= 100 ? "enough" : "too slow",
			  gbps >= 200 ? "enough" : "too slow", gbps >= 400 ? "enough" : "too slow");
	}
	roce_table_note(t, "a NIC's DMA also carries descriptors, completions and doorbells, so "
			   "a slot just above the port's rate is tight in practice");
	learn_table(conf, rep, t);
	roce_table_destroy(t);
	return 0;
}

const struct roce_lesson roce_lesson_gpudirect = {
	.name = "gpudirect",
	.title = "GPUDirect RDMA: GPU to GPU without the host's memory",
	.summary = "staged copies through host memory against the NIC reaching GPU memory directly",
	.run = run_gpudirect,
};
