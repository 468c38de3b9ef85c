/*
 * lib/learn: the lessons RDMA is taught with, run and measured (`rocelab learn`).
 *
 * Each lesson measures something with the rest of rocelab (frames built by lib/wire, transfers
 * run by lib/perf between two emulated hosts in virtual time), prints a table and writes a page
 * with its pictures. The measurement functions below are public so that tests can check what a
 * lesson claims.
 */
#ifndef ROCE_LEARN_H
#define ROCE_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_report.h"

struct roce_learn_conf {
	FILE *out;		/* text and tables; NULL: none */
	const char *out_dir;	/* NAME.html (and NAME-*.svg) go here; NULL: no files */
	bool quick;		/* fewer points and shorter runs */
	uint64_t seed;		/* the engine's seed for runs with loss */
};

struct roce_lesson {
	const char *name;	/* "bdp" */
	const char *title;	/* the page's title */
	const char *summary;	/* one line for the list */
	/* Measure, print to conf->out, and add sections to @p rep. @return 0 or -errno, @p err set */
	int (*run)(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
		   size_t errlen);
};

/** The lessons, in teaching order; @return how many. */
size_t roce_lessons(const struct roce_lesson *const **list);

/** The lesson called @p name, or NULL. */
const struct roce_lesson *roce_lesson_find(const char *name);

/**
 * Run @p l: its tables to conf->out and, with conf->out_dir, its page to out_dir/NAME.html.
 * @return 0 or -errno with one line in @p err
 */
int roce_learn_run(const struct roce_lesson *l, const struct roce_learn_conf *conf, char *err,
		   size_t errlen);

/**
 * Write out_dir/index.html: the lessons of @p l (@p n of them), each a link to its page, and
 * the ideas taught by `rocelab demo` and `rocelab run`.
 * @return 0 or -errno with one line in @p err
 */
int roce_learn_index(const struct roce_lesson *const *l, size_t n,
		     const struct roce_learn_conf *conf, char *err, size_t errlen);

/* ---- encap: InfiniBand, RoCEv1 and RoCEv2 around the same RDMA WRITE ---- */

enum roce_encap {
	ROCE_ENCAP_IB,		/* native InfiniBand: LRH/BTH/RETH/payload/ICRC/VCRC */
	ROCE_ENCAP_V1,		/* RoCEv1: Ethernet/GRH/BTH... (Ethertype 0x8915) */
	ROCE_ENCAP_V2_IP4,	/* RoCEv2: Ethernet/IPv4/UDP 4791/BTH... */
	ROCE_ENCAP_V2_IP6,	/* RoCEv2 over IPv6 */
	ROCE_ENCAP_V2_VLAN,	/* RoCEv2 over IPv4 with an 802.1Q tag (PCP for PFC) */
	ROCE_ENCAP_NUM,
};

/* One header (or payload) of a packet, in wire order. */
struct roce_encap_layer {
	const char *name;	/* "Eth", "IPv4", "UDP", "BTH", "RETH", "payload", "ICRC", ... */
	uint32_t bytes;
};

#define ROCE_ENCAP_MAX_LAYERS 12

struct roce_encap_frame {
	const char *name;		/* "RoCEv2 / IPv4" */
	int nlayers;
	struct roce_encap_layer layer[ROCE_ENCAP_MAX_LAYERS];
	uint32_t packet_bytes;		/* IB: LRH to VCRC; Ethernet: destination MAC to FCS */
	uint32_t wire_bytes;		/* plus preamble, SFD and inter-frame gap (Ethernet) */
	uint32_t payload;		/* the message bytes carried */
	double efficiency;		/* payload / wire_bytes */
};

/**
 * Lay out an RDMA WRITE Only of @p payload bytes in encapsulation @p e. The Ethernet ones are
 * built by lib/wire and parsed back, so the layer sizes are those of real frames; InfiniBand's
 * come from the IBTA's header sizes (lib/wire builds no LRH).
 * @return 0, -EINVAL (bad @p e, or a payload over 4096)
 */
int roce_learn_encap(enum roce_encap e, uint32_t payload, struct roce_encap_frame *f);

/* ---- transfers measured with lib/perf ---- */

struct roce_learn_point {
	double x;		/* what was varied */
	double gbps;		/* goodput, Gb/s */
	double usec;		/* latency (typical), µs; or virtual time the run took */
	uint64_t retransmits;	/* request packets resent */
	uint64_t timeouts;	/* local ACK timeouts */
	uint64_t rnr_naks;	/* RNR NAKs */
	uint64_t lost;		/* frames the link dropped */
};

/**
 * Go-back-N under loss: RC WRITE goodput (64 KiB messages, 100G) at each loss probability
 * @p loss[i] over a link of one-way delay @p delay_ns, for @p vsec seconds of virtual time.
 * @return 0 or -errno
 */
int roce_learn_loss(const double *loss, size_t n, uint32_t delay_ns, double vsec, uint64_t seed,
		    struct roce_learn_point *pts);

/**
 * Bandwidth-delay product: RC WRITE goodput at 100G over a link of one-way delay @p delay_ns
 * with @p depth[i] messages of @p size bytes outstanding (x: the bytes in flight).
 * @return 0 or -errno
 */
int roce_learn_bdp(const uint32_t *depth, size_t n, uint32_t size, uint32_t delay_ns, double vsec,
		   struct roce_learn_point *pts);

/* ---- GPUDirect RDMA: the host's PCIe paths ---- */

/* A PCIe link as the lesson models it; the defaults are a Gen4 x16 slot. */
struct roce_pcie {
	unsigned int gen;	/* 3, 4 or 5: 8, 16 or 32 GT/s per lane, 128b/130b encoded */
	unsigned int lanes;	/* 1 to 16 */
	unsigned int mps;	/* max payload size of a TLP, bytes (128 to 4096) */
	double copy_us;		/* fixed cost of one synchronous GPU<->host copy call, us */
};

/** Bytes a TLP carries beside its payload: header 16, sequence 2, LCRC 4, framing 2. */
#define ROCE_PCIE_TLP_OVERHEAD 24

/** The link's data rate in GB/s after encoding and TLP overheads; 0 for a bad @p p. */
double roce_pcie_gbytes(const struct roce_pcie *p);

/* One message size, three ways from GPU memory on one host to GPU memory on the other. */
struct roce_learn_gpu_point {
	uint32_t size;			/* message bytes */
	double rdma_lat_us;		/* measured: write_lat's typical latency at @p size */
	double rdma_gbps;		/* measured: write_bw's goodput at @p size */
	double copy_us;			/* modelled: one GPU<->host copy of @p size */
	double staged_lat_us;		/* copy to host, RDMA WRITE, copy to GPU */
	double gdr_lat_us;		/* GPUDirect RDMA: the NIC reads and writes GPU memory */
	double staged_gbps;		/* one bounce buffer: copy, send, copy, one after another */
	double pipelined_gbps;		/* bounce buffers in chunks, the three stages overlapped */
	double gdr_gbps;
};

/** The chunk of the pipelined staged path (bytes). */
#define ROCE_LEARN_GPU_CHUNK (512u << 10)

/**
 * GPU to GPU over RDMA with and without GPUDirect, at each of @p sizes: the RDMA part measured
 * between two emulated hosts (100G, 500 ns apart), the copies over @p pcie modelled.
 * @return 0 or -errno
 */
int roce_learn_gpudirect(const struct roce_pcie *pcie, const uint32_t *sizes, size_t n,
			 struct roce_learn_gpu_point *pts);

#endif /* ROCE_LEARN_H */
