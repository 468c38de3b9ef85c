/* lib/fabric: fabrics of hosts, switches and links, built from scenarios, run with workloads. */
#ifndef ROCE_FABRIC_H
#define ROCE_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_engine.h"
#include "roce_switch.h"
#include "roce_transport.h"
#include "roce_verbs.h"

/* ---- scenarios: what to build and run ---- */

#define ROCE_SC_NAME 32
#define ROCE_SC_MAX_CC_KV 32

enum roce_flow_op {
	ROCE_FLOW_WRITE,
	ROCE_FLOW_READ,
	ROCE_FLOW_SEND,
};

struct roce_sc_host {
	char name[ROCE_SC_NAME];
	uint8_t ip_ver;			/* 4 or 6 */
	struct roce_ip_addr ip;
	uint8_t mac[6];
	uint64_t pcie_bps;		/* [host.NAME] pcie: its NIC's host interface; 0: [nic]'s */
	uint64_t rx_buffer;		/* [host.NAME] rx_buffer; 0: [nic]'s */
};

struct roce_sc_switch {
	char name[ROCE_SC_NAME];
	struct roce_switch_conf conf;	/* nports is filled in from the links */
};

/* A node is a host (0 .. nhosts-1) or a switch (nhosts + i). */
struct roce_sc_link {
	char name[2 * ROCE_SC_NAME + 2]; /* "h3-sw0" */
	int a, b;			/* nodes; direction 0 sends a -> b */
	struct roce_link_conf conf;
	struct roce_link_impair impair[2]; /* per direction */
	bool tap;			/* capture both directions */
};

struct roce_sc_flow {
	char name[ROCE_SC_NAME];
	int src, dst;			/* hosts: the requester and the responder */
	enum roce_flow_op op;
	uint64_t size;			/* bytes per message */
	uint64_t count;			/* messages; 0: no limit */
	roce_time_t duration;		/* post for this long after the first post; 0: no limit */
	uint32_t nqp;			/* QPs, messages spread round robin */
	uint32_t depth;			/* messages outstanding per QP */
	roce_time_t start;		/* first post, or delay after @after completes */
	int after;			/* flow index this one waits for, or -1 */
	uint8_t dscp;			/* traffic class of its packets */
	enum roce_mtu mtu;		/* path MTU; 0: the scenario's */
	bool from_pattern;		/* made by a [pattern.*] (a trace's too), not a [flow.*] */
};

enum roce_sc_event_kind {
	ROCE_SC_EV_RATE,		/* change a link's rate */
	ROCE_SC_EV_DOWN,
	ROCE_SC_EV_UP,
	ROCE_SC_EV_LOSS,		/* set a link's loss probability (both directions) */
};

struct roce_sc_event {
	char name[ROCE_SC_NAME];
	roce_time_t at;
	int link;
	enum roce_sc_event_kind kind;
	uint64_t rate_bps;
	double loss;
};

/* A static route that overrides the shortest paths: at @sw, traffic to host @dst goes to @via. */
struct roce_sc_route {
	int sw, dst, via;		/* nodes */
};

/* A collective made of flows (a ring all-reduce): reported as a whole. */
struct roce_sc_collective {
	char name[ROCE_SC_NAME];
	int first_flow, nflows;		/* its flows, consecutive */
	int nhosts;
	uint64_t size;			/* bytes reduced */
};

struct roce_scenario {
	char name[64];
	char file[256];			/* where it was read from, for messages */
	uint64_t seed;
	roce_time_t duration;		/* stop here at the latest */
	roce_time_t sample;		/* metrics interval; 0: none */
	enum roce_mtu mtu;		/* path MTU of the flows */
	uint8_t timeout;		/* local ACK timeout exponent of the QPs */
	uint8_t retry_cnt;
	int nhosts, nswitches, nlinks, nflows, nevents, nroutes;
	struct roce_sc_host *host;
	struct roce_sc_switch *sw;
	struct roce_sc_link *link;
	struct roce_sc_flow *flow;
	struct roce_sc_event *event;
	struct roce_sc_route *route;
	struct roce_sc_collective *coll;
	int ncoll;
	struct roce_nic_qos qos;	/* every host's NIC */
	uint64_t pcie_bps;		/* every host's NIC's host interface, b/s; 0: unlimited */
	uint64_t rx_buffer;		/* ...and its receive buffer, bytes; 0: the device's default */
	char cc[16];			/* congestion control of every host: "none", "dcqcn" */
	char *cc_kv[ROCE_SC_MAX_CC_KV];	/* "key=value" overrides */
	int ncc_kv;
	bool deadlock_check;		/* look for PFC deadlocks at each sample */
	uint32_t snaplen;		/* bytes of each frame the capture keeps; 0: all */
	bool discard;			/* payload = discard: the flows' targets drop the bytes
					 * that arrive (ROCE_ACCESS_DISCARD), nothing to check */
};

/** An empty scenario with the defaults (seed 1, 1 s at most, PMTU 1024, no CC). */
struct roce_scenario *roce_scenario_create(void);
void roce_scenario_destroy(struct roce_scenario *sc);

/**
 * Read a scenario from an INI file (docs/scenarios.md). @p set holds "section.key=value"
 * overrides applied as if they were in the file.
 * @return the scenario, or NULL with one line in @p err naming file:line and what is wrong
 */
struct roce_scenario *roce_scenario_load(const char *path, const char *const *set, int nset,
					 char *err, size_t errlen);

/** The same from text in memory (@p name stands in for the file name in messages). */
struct roce_scenario *roce_scenario_parse(const char *name, const char *text,
					  const char *const *set, int nset, char *err, size_t errlen);

/* Scenarios built into the binary (the demo-*.ini of scenarios/): name and text. */
struct roce_embedded {
	const char *name;
	const char *text;
};
extern const struct roce_embedded roce_scenarios_builtin[]; /* ends with { NULL, NULL } */

/** The built-in scenario called @p name, with or without ".ini", or NULL. */
const char *roce_scenario_builtin(const char *name);

/** Node @p node's name. */
const char *roce_scenario_node_name(const struct roce_scenario *sc, int node);

/* ---- running a scenario ---- */

struct roce_fabric;

struct roce_run_conf {
	const char *pcap;		/* capture of the tapped links, or NULL */
	FILE *trace;			/* transport and switch event trace, or NULL */
	void (*progress)(void *arg, roce_time_t now, roce_time_t end); /* called at each sample */
	void *progress_arg;
};

/**
 * Build the fabric of @p sc (borrowed: keep it until roce_fabric_destroy). Needs roce_eal_init().
 * @return the fabric, or NULL with @p err saying why
 */
struct roce_fabric *roce_fabric_create(const struct roce_scenario *sc, char *err, size_t errlen);
void roce_fabric_destroy(struct roce_fabric *fab);

/**
 * Run the workload until every flow is done or sc->duration: roce_fabric_start(), then
 * roce_fabric_advance() to the end, then roce_fabric_finish().
 * @return 0; -EIO (the capture could not be written), -ENOMEM, -EPROTO (the frames do not
 *         add up: roce_fabric_balance())
 */
int roce_fabric_run(struct roce_fabric *fab, const struct roce_run_conf *rc);

/** Open the capture, start sampling (@p rc is kept until finish). @return 0, -EIO, -EALREADY */
int roce_fabric_start(struct roce_fabric *fab, const struct roce_run_conf *rc);

/** Run to @p until (at most sc->duration). @return true while work remains before the end */
bool roce_fabric_advance(struct roce_fabric *fab, roce_time_t until);

/**
 * Whether the run stopped short: flows still to do and the scenario's duration not reached
 * (a caller that stopped advancing, as rocelab run on SIGINT)
 */
bool roce_fabric_cut(const struct roce_fabric *fab);

/**
 * Take the last sample, close the capture, and check that every frame of the run is accounted
 * for (roce_fabric_balance()). @return 0, -EIO (the capture could not be written whole:
 * roce_fabric_capture_error() says why and where; everything else of the run is there),
 * -ENOMEM, -EPROTO (the frames do not add up: a bug; the results are all there to look at)
 */
int roce_fabric_finish(struct roce_fabric *fab);

/**
 * Why the capture ended early (file: reason: virtual time), or NULL: it is whole.
 * @param errnum  if not NULL, receives the write's errno (ENOSPC: a full disk), or 0
 */
const char *roce_fabric_capture_error(const struct roce_fabric *fab, int *errnum);

/**
 * After a run whose flows all ended: let every frame still queued or in flight arrive, for
 * at most @p max of virtual time, with sampling stopped.
 * @return mbufs still in use (0 when the fabric is empty and nothing leaked)
 */
uint64_t roce_fabric_drain(struct roce_fabric *fab, roce_time_t max);

/* Results of one flow. */
struct roce_flow_result {
	uint64_t messages;		/* completed */
	uint64_t posted;		/* posted (completed or still outstanding) */
	uint64_t bytes;			/* their payload */
	uint64_t errors;		/* completions with an error status */
	roce_time_t first_post, last_done; /* FCT = last_done - first_post */
	double goodput_gbps;		/* bytes * 8 / FCT */
	double lat_p50_us, lat_p99_us, lat_max_us; /* per message, post to completion */
	uint64_t retransmits, timeouts, seq_naks;
	double app_sec;			/* time spent in its application code (posting, polling; TSC) */
	bool done;			/* every message completed */
	bool data_ok;			/* true until a message completes; then: the target's
					 * bytes are the source's (else status "corrupt") */
	bool discarded;			/* the scenario's payload = discard: the target drops
					 * the bytes, data_ok checks nothing */
	bool waiting;			/* nothing posted yet: its start time, or the end of the
					 * flow it follows, is still to come */
	bool rx_tracked;		/* the samples tracked its deliveries (sampling is on) */
	roce_time_t rx_at;		/* the last sample that found payload delivered to its
					 * target since the one before: nothing arrived after it
					 * (0: nothing found); with rx_tracked only */
	double rate_min_gbps;		/* lowest rate limit of its QPs sampled since its last
					 * completion (or start); 0: none sampled */
	struct roce_qp_wait wait;	/* what its first busy requester QP waits on now */
};

/* The fabric as it stands (after a run). */
roce_time_t roce_fabric_now(const struct roce_fabric *fab);
const struct roce_scenario *roce_fabric_scenario(const struct roce_fabric *fab);
void roce_fabric_flow_result(const struct roce_fabric *fab, int flow, struct roce_flow_result *r);
/** Flow @p flow's requester QP @p q (of its [flow] qps), or NULL: none (not set up yet). */
struct roce_qp *roce_fabric_flow_qp(const struct roce_fabric *fab, int flow, uint32_t q);
struct roce_switch *roce_fabric_switch(const struct roce_fabric *fab, int i);
struct roce_device *roce_fabric_device(const struct roce_fabric *fab, int host);
struct roce_link *roce_fabric_link(const struct roce_fabric *fab, int i);
/** The switch port a link's end @p side (0: a, 1: b) is attached to, or -1 for a host. */
int roce_fabric_link_port(const struct roce_fabric *fab, int link, int side);
/** Set when a deadlock was found during the run (report in @p buf). */
bool roce_fabric_deadlock(const struct roce_fabric *fab, char *buf, size_t len);
#define ROCE_FABRIC_DEADLOCKS_KEPT 8
/**
 * How many times a deadlock formed (found at a sample after one without it: a PFC watchdog
 * breaks one, and the same routes can make it again).
 * @param at   NULL, or receives the times of the first ROCE_FABRIC_DEADLOCKS_KEPT formations
 * @param now  NULL, or receives whether the last sample found one
 */
uint32_t roce_fabric_deadlocks(const struct roce_fabric *fab, roce_time_t *at, bool *now);
/** Engine events fired, and frame hops (frames delivered by all links) of the run. */
void roce_fabric_work(const struct roce_fabric *fab, uint64_t *events, uint64_t *hops);

/*
 * Every place a frame can end other than its destination, one cause each. The switch causes
 * are its counters (roce_switch_qstats / roce_switch_pstats), the link causes the links'
 * (roce_link_stats), the NIC causes the devices' counters of the same names.
 */
enum roce_drop_cause {
	ROCE_DROP_TAIL,			/* switch: lossy class, buffer or queue full (drop_tail) */
	ROCE_DROP_HEADROOM,		/* switch: lossless class, headroom full (drop_headroom) */
	ROCE_DROP_WATCHDOG,		/* switch: a stuck queue drained by the PFC watchdog */
	ROCE_DROP_TTL,			/* switch: IP TTL / hop limit expired (drop_ttl) */
	ROCE_DROP_NO_ROUTE,		/* switch: no route to the destination (drop_no_route) */
	ROCE_DROP_MALFORMED,		/* switch: not IP, or truncated (drop_malformed) */
	ROCE_DROP_LINK_LOSS,		/* link: loss impairment or drop rule, or no mbuf (dropped) */
	ROCE_DROP_LINK_DOWN,		/* link: sent while down, or in flight when it went down */
	ROCE_DROP_LINK_MTU,		/* link: L3 length above the link's MTU (mtu_drops) */
	ROCE_DROP_NIC_BUFFER,		/* NIC: host interface receive buffer full (rx_out_of_buffer) */
	ROCE_DROP_NIC_ICRC,		/* NIC: ICRC mismatch, a corrupted frame (rx_icrc_errors) */
	ROCE_DROP_NIC_DISCARD,		/* NIC: malformed, no such QP, wrong opcode, QP state or Q_Key */
	ROCE_DROP_NUM,
};

/** Short name of each cause ("TTL expiry", "tail", ...), for tables and findings. */
extern const char *const roce_drop_cause_name[ROCE_DROP_NUM];

/*
 * Where the frames of a run went. A frame is counted once where it starts: put on its port by
 * a NIC (data, ACKs, CNPs, its PFC frames) or by a switch as its own (PFC), or copied by a link
 * (duplication impairment); and once where it ends: handed to a NIC's transport, taken by a
 * switch as a PFC frame it acts on, or dropped (by cause); or it is still in flight: on a
 * link, in a switch's egress queue, or in a NIC's receive buffer. A frame a switch forwards
 * neither starts nor ends there. Frames a NIC never sent (no mbuf, a full CNP queue) are not
 * frames yet and count nowhere.
 */
struct roce_fabric_balance {
	uint64_t nic_sent;		/* frames NICs put on their ports (tx_frames) */
	uint64_t switch_sent;		/* PFC frames switches sent (pfc_tx) */
	uint64_t duplicated;		/* copies links delivered besides the original */
	uint64_t delivered;		/* frames NICs took in: rx_frames less the NIC drops and
					 * the frames still in their receive buffers */
	uint64_t switch_taken;		/* PFC frames switches received and acted on (pfc_rx) */
	uint64_t dropped[ROCE_DROP_NUM]; /* by cause */
	uint64_t in_links;		/* on a wire or propagating (roce_link_stats.in_flight) */
	uint64_t in_switches;		/* in switch egress queues */
	uint64_t in_nics;		/* in NICs' receive buffers (roce_device_rx_held()) */
};

/**
 * Count where every frame of the run went, from the switches', links' and NICs' counters.
 * @param b  receives the counts
 * @return true when they add up: sent (NICs + switches + link copies) == delivered + taken
 *         by switches + dropped + in flight; false is a bug in the accounting of some frame
 */
bool roce_fabric_balance(const struct roce_fabric *fab, struct roce_fabric_balance *b);

/** The sums of @p b: frames sent (all three sources), dropped (all causes), in flight. */
uint64_t roce_fabric_balance_sent(const struct roce_fabric_balance *b);
uint64_t roce_fabric_balance_dropped(const struct roce_fabric_balance *b);
uint64_t roce_fabric_balance_in_flight(const struct roce_fabric_balance *b);

/** Whether the counts of @p b add up (roce_fabric_balance()'s result for them). */
bool roce_fabric_balance_ok(const struct roce_fabric_balance *b);

/**
 * One line: "sent S = delivered D + taken by switches P + dropped X + in flight F", with the
 * difference when the sides differ. @return @p buf
 */
const char *roce_fabric_balance_text(const struct roce_fabric_balance *b, char *buf, size_t len);

/* Time series gathered at every sample (for reports): one per flow, and per watched queue. */
struct roce_series {
	char name[64];
	size_t n;
	const double *t_us;		/* sample times */
	const double *v;		/* values */
};
enum roce_series_kind {
	ROCE_SERIES_FLOW_GBPS,		/* per flow: goodput over the interval */
	ROCE_SERIES_QUEUE_KB,		/* per busy switch egress queue: depth */
	ROCE_SERIES_PAUSED,		/* per switch port and NIC ever paused: % of each interval */
	ROCE_SERIES_RATE_GBPS,		/* per flow: its QPs' mean congestion-control rate */
	ROCE_SERIES_PORT_GBPS,		/* per switch port that sent anything: tx throughput */
};
/** Number of series of @p kind; series @p i of it. */
int roce_fabric_nseries(const struct roce_fabric *fab, enum roce_series_kind kind);
void roce_fabric_series(const struct roce_fabric *fab, enum roce_series_kind kind, int i,
			struct roce_series *s);

/* ---- results as tables, CSV and charts (fab_report.c; lib/report) ---- */

struct roce_chart;
struct roce_table;
struct roce_report;

/** Per flow: path, messages, FCT, goodput, latency percentiles, retransmits, status. */
struct roce_table *roce_fabric_flow_table(const struct roce_fabric *fab);

/**
 * The same rows for @p n flows only: those in trouble first (error, corrupt, stalled, not
 * started, slow), then the slowest to complete. For a terminal, when there are many.
 */
struct roce_table *roce_fabric_flow_table_worst(const struct roce_fabric *fab, int n);

/** Flows that finish are summarised once at least this many have (a table is enough below). */
#define ROCE_FCT_MIN_FLOWS 8

/**
 * The spread of flow completion times over the flows that finished, per kind of flow (op,
 * message size and count: "write 64 KiB x 4") and over all: min, p50, p90, p99, max. NULL
 * with errno ENODATA when fewer than ROCE_FCT_MIN_FLOWS finished, ENOMEM on failure.
 */
struct roce_table *roce_fabric_fct_table(const struct roce_fabric *fab);

/** The same flows' completion times as a distribution (ECDF), one curve per kind; NULL as above. */
struct roce_chart *roce_fabric_fct_chart(const struct roce_fabric *fab);

/** What stands out in a run, most serious first, one sentence each (`rocelab run`'s findings). */
#define ROCE_FINDINGS_MAX 16
struct roce_findings {
	int n;					/* findings in text[] */
	char text[ROCE_FINDINGS_MAX][400];	/* each a sentence; `code` in backquotes */
};

/**
 * Fill @p fd: a PFC deadlock; flows that ended in error, delivered bytes other than those
 * sent, stalled (for how long, waiting on what), never started or slow; frames resent;
 * frames dropped by switches (by reason, and where most), lost on links or dropped in NICs'
 * receive buffers; the sending queues PFC paused longest (over 10% of the run). When none
 * applies, one finding says so.
 */
void roce_fabric_findings(const struct roce_fabric *fab, struct roce_findings *fd);

/** Per switch port and priority that saw traffic: frames, drops, ECN marks, pauses, max queue. */
struct roce_table *roce_fabric_port_table(const struct roce_fabric *fab);

/**
 * The same rows for @p n ports and priorities only: the most drops first, then pauses sent and
 * received, paused time, ECN marks and the deepest queue. For a terminal, when there are many.
 */
struct roce_table *roce_fabric_port_table_worst(const struct roce_fabric *fab, int n);

/** Fabric-wide: drops, pauses, marks, CNPs, deadlock; with @p wall_sec > 0, the engine's speed. */
struct roce_table *roce_fabric_summary_table(const struct roce_fabric *fab, double wall_sec);

/** Every time series as CSV rows "time_us,metric,object,value". @return 0, -EIO */
int roce_fabric_write_metrics(const struct roce_fabric *fab, FILE *f);

/** Every non-zero host and switch counter, by name, per port and priority (ethtool -S style). */
int roce_fabric_write_counters(const struct roce_fabric *fab, FILE *f);

/** Charts of the time series (goodput, queues, pauses, CC rates) into @p r. */
void roce_fabric_add_charts(const struct roce_fabric *fab, struct roce_report *r);

/* ---- rocelab demo (fab_demo.c) ---- */

struct roce_demo_conf {
	const char *out_dir;		/* report.html and the captures go here; NULL: nowhere */
	FILE *out;			/* the tables, as they come; NULL: quiet */
	uint64_t seed;
	bool quick;			/* smaller transfers and a shorter sweep (tests) */
};

/* The figures each step measured (what the tables show). */
struct roce_demo_result {
	/* 1: zero copy */
	uint64_t bytes;
	double tcp_host_cpu_sec;	/* the TCP model's CPU copies (1 and 4) */
	double tcp_all_copies_sec;	/* all four */
	double rdma_app_sec;		/* RDMA: the application's time (posting, polling) */
	double rdma_gbps;
	/* 2: lossless against lossy */
	double lossless_gbps, lossy_gbps; /* lossless, and 1e-4 (median of the runs) */
	uint64_t lossy_retransmits;	/* at 1e-4: packets resent, a run on average */
	/* 3: incast */
	double victim_pfc_gbps, victim_dcqcn_gbps;
	double jain_pfc, jain_dcqcn;	/* fairness of the incast flows */
	uint64_t pauses_pfc, pauses_dcqcn;
	double maxq_pfc_kb, maxq_dcqcn_kb; /* the queue to the incast receiver */
	/* 4: a degraded link */
	char degraded_port[64];		/* the port the counters blame */
	double degrade_before_gbps, degrade_after_gbps;
	uint64_t degrade_pauses;
};

/**
 * Run the four steps (zero copy, lossless vs lossy, incast PFC vs DCQCN, a degraded link),
 * printing tables to conf->out and writing report.html and the captures into conf->out_dir
 * (which must exist). Needs roce_eal_init().
 * @return 0; -errno with @p err saying what failed
 */
int roce_demo_run(const struct roce_demo_conf *conf, struct roce_demo_result *res, char *err,
		  size_t errlen);

#endif /* ROCE_FABRIC_H */
