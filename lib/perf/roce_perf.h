/* lib/perf: perftest's tests (ib_write_bw, ib_read_lat, ...) between two emulated hosts. */
#ifndef ROCE_PERF_H
#define ROCE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roce_engine.h"
#include "roce_verbs.h"

enum roce_perf_test {
	ROCE_PERF_WRITE_BW,
	ROCE_PERF_READ_BW,
	ROCE_PERF_SEND_BW,
	ROCE_PERF_ATOMIC_BW,
	ROCE_PERF_WRITE_LAT,
	ROCE_PERF_READ_LAT,
	ROCE_PERF_SEND_LAT,
	ROCE_PERF_NUM_TESTS,
};

/** "write_bw", ...; and back (-1 if unknown). */
const char *roce_perf_test_name(enum roce_perf_test t);
int roce_perf_test_by_name(const char *name);

static inline bool roce_perf_is_lat(enum roce_perf_test t)
{
	return t >= ROCE_PERF_WRITE_LAT;
}

#define ROCE_PERF_MAX_QP 64		/* -q */

struct roce_perf_conf {
	enum roce_perf_test test;
	uint32_t size;			/* -s: message size in bytes */
	uint64_t iters;			/* -n: iterations per size */
	double duration;		/* -D: seconds of virtual time instead of iterations; 0: off */
	uint32_t nqp;			/* -q: QPs */
	enum roce_mtu mtu;		/* -m */
	enum roce_qp_type qp_type;	/* -c RC|UC|UD */
	uint32_t tx_depth;		/* -t: outstanding sends per QP */
	uint32_t rx_depth;		/* -r: posted receives per QP */
	uint8_t timeout;		/* -u: local ACK timeout exponent */
	uint8_t retry_cnt;		/* retries on timeout/sequence NAK */
	uint8_t rnr_retry;		/* retries on RNR NAK, 7 forever */
	uint8_t min_rnr_timer;		/* RNR NAK timer code the server advertises */
	roce_time_t recv_delay;		/* send_bw: the server posts each receive again this long
					 * after it completes (a slow consumer); 0: at once */
	uint32_t inline_size;		/* -I: inline up to this size */
	bool cmp_swap;			/* -A CMP_AND_SWAP (default FETCH_AND_ADD) */
	uint32_t cq_mod;		/* --cq-mod: one signaled send per cq_mod (bw tests) */
	uint32_t max_rd_atomic;		/* -o: outstanding READs/atomics */
	uint64_t rate_bps;		/* link rate */
	roce_time_t delay;		/* link propagation delay */
	struct roce_link_impair impair;	/* client->server direction */
	struct roce_link_impair impair_back; /* server->client direction */
	uint64_t seed;			/* engine RNG */
	const char *pcap;		/* write every frame here, or NULL */
	uint32_t snaplen;		/* bytes of each frame written; 0: all */
	struct roce_pcap_writer *pcap_writer; /* instead of pcap: an open one (borrowed) */
	bool verify;			/* check data and completions; fail on any mismatch */
	uint32_t first_psn;		/* both sides' starting PSN (e.g. near 2^24 to test the wrap) */
	/* or, if set, each host's QPs start sending at these PSNs: a run picking up where the
	 * last left off (-a: perftest keeps one QP pair for every size) */
	const uint32_t (*resume_psn)[ROCE_PERF_MAX_QP];
	FILE *trace;			/* transport event trace, or NULL */
	const char *cc;			/* both hosts' congestion control ("dcqcn"), or NULL: none */
	const char *const *cc_params;	/* ncc_params "key=value" overrides (borrowed) */
	int ncc_params;
	bool ecn;			/* ECT marking and CNPs even without congestion control */
	uint8_t tos;			/* -T: the IP traffic class byte (DSCP << 2 | ECN) of the data
					 * and its answers, perftest's GRH traffic class */
	uint32_t post_list;		/* -l: requests per post (perftest's post list); 0 or 1: one */
	bool no_peak;			/* -N: no peak bandwidth (its column reads 0, as perftest's) */
};

/** perftest's defaults for @p test (size 65536 bw / 2 lat, 5000 / 1000 iterations, ...). */
void roce_perf_defaults(struct roce_perf_conf *conf, enum roce_perf_test test);

struct roce_perf_result {
	uint32_t size;			/* #bytes */
	uint64_t iters;			/* #iterations completed */
	double bw_peak_gbps;		/* best window of tx_depth completions */
	double bw_avg_gbps;		/* bytes * 8 / elapsed virtual time */
	double msg_rate_mpps;		/* messages per virtual microsecond */
	double peer_bw_peak_gbps;	/* -b: the peer's own share of the three figures above */
	double peer_bw_avg_gbps;	/* (perftest's --report-both "Remote results"); 0 without */
	double peer_msg_rate_mpps;
	double lat_min, lat_max, lat_typical, lat_avg, lat_stdev, lat_p99, lat_p999; /* usec */
	double virtual_sec;		/* virtual time the test took */
	double wall_sec;		/* wall-clock time it took */
	double cpu_sec;			/* CPU time the running thread got meanwhile (a loaded machine) */
	uint64_t frames;		/* frames on the wire, both ways */
	uint64_t wire_bytes;		/* their bytes */
	uint64_t errors;		/* completions with an error status */
	enum roce_wc_status first_error; /* the first one's status */
	uint64_t verify_failures;	/* data or completion mismatches found by --verify */
	char verify_msg[160];		/* the first mismatch, in words */
	uint64_t retransmits;		/* request packets resent (both hosts) */
	uint64_t timeouts;		/* local ACK timeouts */
	uint64_t seq_naks;		/* sequence NAKs received */
	uint64_t rnr_naks;		/* RNR NAKs received */
	uint64_t dropped;		/* frames the link lost */
	uint64_t lost_msgs;		/* UC/UD messages that never arrived (not resent: not a
					 * --verify failure; the ones that did are checked) */
	uint32_t next_psn[2][ROCE_PERF_MAX_QP]; /* each host's QPs' next send PSN at the end */
};

/**
 * Check a configuration before running it.
 * @param err  receives one line naming the bad value ("UC has no READ or atomics")
 * @return 0 or -EINVAL
 */
int roce_perf_check(const struct roce_perf_conf *conf, char *err, size_t errlen);

/**
 * Run one test at conf->size between two hosts joined by a model link, in virtual time.
 * Needs roce_eal_init().
 * @return 0 (see res->errors and res->verify_failures); -EINVAL for a bad configuration (a
 *         message names it on stderr), -ENOMEM, -EIO (the pcap could not be written)
 */
int roce_perf_run(const struct roce_perf_conf *conf, struct roce_perf_result *res);

/* ---- real time, two processes (perf_live.c): perftest's own usage ---- */

#define ROCE_PERF_TCP_PORT 18515	/* perftest's default out-of-band port */
#define ROCE_PERF_VERSION "6.06"	/* the perftest version whose exchange rocelab speaks */
#define ROCE_PERF_HELLO_TIMEOUT 5	/* seconds for the exchange's opening (--hello-timeout) */

/* The out-of-band exchange a live run speaks on its TCP port. */
enum roce_perf_xchg {
	ROCE_PERF_XCHG_PERFTEST,	/* perftest 6.06's (ib_write_bw, ib_send_lat, ...) */
	ROCE_PERF_XCHG_PINGPONG,	/* ibv_{rc,uc,ud}_pingpong's: one "LID:QPN:PSN:GID" each
					 * way, then "done"; runs conf->test ROCE_PERF_SEND_LAT */
};

#define ROCE_PERF_ALL_MAX (1u << 23)	/* -a: perftest's largest size */

/* A result row of a live run that is not its last (-a: every size but the largest). */
typedef void (*roce_perf_row_fn)(void *arg, const struct roce_perf_result *res);

/* Where a live run's emulated host sits and whom it talks to. */
struct roce_perf_live {
	enum roce_perf_xchg xchg;	/* which peer program's exchange */
	const char *dev;		/* --dev: DPDK devargs of the port ("net_af_packet0,iface=veth0") */
	struct roce_ip_addr ip;		/* --ip: the emulated host's address (its RoCEv2 GID) */
	uint8_t ip_ver;			/* 4 or 6 (--ibdev: 6 picks an IPv6 GID, else IPv4) */
	const char *ibdev;		/* --ibdev: a real RDMA device ("rxe0") instead of @dev */
	uint8_t ib_port;		/* -i: its port; 0: 1 */
	int gid_index;			/* -x: its GID (RoCE v2); -1: perftest's choice */
	const char *peer;		/* client: the server's host name or address (TCP); NULL: server */
	uint16_t tcp_port;		/* perftest's exchange; 0: 18515 */
	double timeout;			/* seconds: server waiting for a client (0: forever), client
					 * retrying its connection, any side waiting for progress */
	bool mtu_set;			/* conf->mtu was chosen by the user; else the port's MTU decides */
	uint64_t rate_bps;		/* the emulated NIC's line rate (its link to the port); 0: the
					 * port's speed */
	uint8_t sl;			/* perftest's -S, pingpong's -l: the address vector's SL */
	double hello_timeout;		/* seconds a connected peer has for the exchange's opening
					 * (versions, system data, MTU, the first keys; a pingpong
					 * server: the client's address); 0: @timeout per message */
	bool wait_forever;		/* server: wait for a client without @timeout (host mode) */
	const volatile int *stop;	/* server: non-zero ends the wait for a client (errno
					 * EINTR), e.g. set by a signal handler; may be NULL */
	bool bad_rkey;			/* fault injection: the rkey we advertise and the rkey our
					 * RDMA requests carry are both wrong, so a responder (the
					 * peer's or ours) answers NAK remote access error */
	bool all;			/* -a: every size from 2 to @all_max (UD: to the path MTU),
					 * bandwidth tests but atomic_bw, in perftest's lock-step */
	uint32_t all_max;		/* -a's largest size, a power of two; 0: ROCE_PERF_ALL_MAX */
	bool duplex;			/* -b: both sides send, each reports the sum of both
					 * (bandwidth tests) */
	roce_perf_row_fn row;		/* -a: called with each size's row but the last, which
					 * roce_perf_live_run() returns; may be NULL */
	void *row_arg;			/* passed to @row */
	void (*listening)(void *arg);	/* server: called once its port is open and it waits for
					 * the client (perftest's banner); may be NULL */
	void *listening_arg;		/* passed to @listening */
};

/* What a live run found out, for its report. */
struct roce_perf_live_info {
	char port[96];			/* the ethdev's name, or the device's and its port */
	uint64_t speed_bps;		/* its link speed (the model link's rate) */
	uint32_t port_mtu;		/* its L3 MTU */
	uint32_t mtu;			/* the IB path MTU agreed with the peer, bytes */
	char local[200];		/* perftest's "local address" line */
	char remote[200];		/* perftest's "remote address" line */
	char peer_version[17];		/* what the peer announced */
};

/* Port counters of a live run, both directions. */
struct roce_perf_live_stats {
	uint64_t tx_frames, rx_frames;	/* through the ethdev */
	uint64_t tx_bytes, rx_bytes;	/* their bytes */
	uint64_t rx_roce;		/* frames handed to the emulated NIC */
	uint64_t rx_other;		/* frames that were not ours (the kernel's TCP, ...) */
	uint64_t tx_dropped;		/* refused by the TX queue */
	uint64_t tx_held;		/* times the NIC waited for room in the TX queue */
	uint64_t rx_dropped;		/* RoCE frames the link's queue could not hold, plus imissed */
	uint64_t icrc_errors;		/* frames the NIC dropped for a bad ICRC (truncated by a port) */
	uint64_t access_naks_sent;	/* NAK remote access error sent by our responder */
	uint64_t naks_rcvd;		/* NAKs (access, invalid request, operational) received */
	uint64_t retransmits;		/* requests (or READ responses) sent again */
	uint64_t out_of_sequence;	/* requests received past a gap (a frame lost on the way) */
	uint64_t impaired;		/* frames we sent that --loss, --drop-psn, --drop-nth dropped */
	uint64_t ecn_ce_rcvd;		/* CE-marked RoCE frames received (a switch marked them) */
	uint64_t cnp_sent, cnp_rcvd;	/* DCQCN notification point / reaction point */
};

struct roce_perf_live_ctx;

/**
 * Check the options only a live run has against the test (-a, -b, --all-max).
 * @param err  receives one line naming the bad combination
 * @return 0 or -EINVAL
 */
int roce_perf_live_check(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
			 char *err, size_t errlen);

/**
 * Open the port, create the emulated host (MAC = the port's), connect to the peer through
 * perftest's exchange (or ibv_*_pingpong's, live->xchg) and bring the QPs to RTS. Needs
 * roce_eal_init().
 * @param err  receives one line naming what failed (the port, the connection, the peer)
 * @return a context, or NULL with errno set (EINVAL: bad configuration; ENODEV, EIO: the port;
 *         ECONNREFUSED, ETIMEDOUT, ECONNRESET, EHOSTUNREACH: the peer; EPROTO: the peer's
 *         messages, or QP attributes it asked for that cannot be set; EINTR: *live->stop
 *         was set while waiting for a client)
 */
struct roce_perf_live_ctx *roce_perf_live_open(const struct roce_perf_conf *conf,
					       const struct roce_perf_live *live,
					       char *err, size_t errlen);

/** What the set-up found (port, MTU, addresses). */
void roce_perf_live_info(const struct roce_perf_live_ctx *ctx, struct roce_perf_live_info *info);

/**
 * Run the test in real time. The client measures; the server of a bandwidth test reports the
 * client's figures, which it receives at the end, as perftest does (send_bw's server: its
 * own; -b: each side its own figures plus the peer's). With live->all each size but the last
 * goes to live->row, and @p res holds the last; errors and verify failures add up over sizes. --verify checks data with
 * a pattern both rocelab sides know (so it needs rocelab on both ends) and every completion.
 * @return 0 (see res->errors and res->verify_failures); -errno with @p err filled when the
 *         peer or the exchange failed
 */
int roce_perf_live_run(struct roce_perf_live_ctx *ctx, struct roce_perf_result *res,
		       char *err, size_t errlen);

/** Port counters so far. */
void roce_perf_live_stats(const struct roce_perf_live_ctx *ctx, struct roce_perf_live_stats *st);

/** Tear everything down; NULL is a no-op. */
void roce_perf_live_close(struct roce_perf_live_ctx *ctx);

/* The client half of a loopback run, given its side of the exchange (peer 127.0.0.1). */
typedef int (*roce_perf_client_fn)(void *arg, const struct roce_perf_live *client);

/**
 * Both ends on the real device live->ibdev in this process: the server half of @p conf in a
 * thread (set up, listening), then @p client here, joined by perftest's exchange on a free TCP
 * port of 127.0.0.1 (live->tcp_port if set). The server half's report is not kept.
 * @return @p client's return, >= 0, when the server half ran through; -errno with @p err
 *         filled when it failed (before the client started: EINVAL a bad option, ENODEV,
 *         ENETDOWN, EIO what the device refused; after: EIO)
 */
int roce_perf_loopback(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		       roce_perf_client_fn client, void *arg, char *err, size_t errlen);

/* ---- the completion script (perf_wcs.c): one list of work requests on any provider ---- */

#define ROCE_WCS_MAX 8			/* completions a case keeps, both sides */

/* One completion, the fields a comparison looks at. */
struct roce_wcs_comp {
	char side;			/* 'A' the requester, 'B' the responder */
	uint64_t wr_id;
	enum roce_wc_status status;
	enum roce_wc_opcode opcode;	/* defined when status is success */
	uint32_t byte_len;
	uint32_t imm_data;
	unsigned int wc_flags;
};

/* One case and what came of it: A's completions in order, then B's. */
struct roce_wcs_case {
	const char *name;		/* "send", "bad_rkey", ... */
	const char *what;		/* what it posts, in words */
	const char *iba;		/* what the IBA specification says comes of it */
	struct roce_wcs_comp comp[ROCE_WCS_MAX];
	uint32_t n;
	int rc;				/* 0; -errno when it could not be set up or posted */
	char err[120];			/* then, why */
};

/* Where the script runs: the provider of each side and how each reaches the other. */
struct roce_wcs_env {
	struct roce_front *dev, *peer;	/* A's and B's (may be the same device) */
	struct roce_ah_attr to_peer, to_dev;
	enum roce_mtu mtu;
	bool (*progress)(void *arg);	/* run the provider while waiting: false when nothing is
					 * left to happen; NULL: a device, which runs on its own */
	void *arg;
};

/** How many cases the script has. */
uint32_t roce_wcs_count(void);

/** Run case @p i on fresh QPs, in @p env. Fills @p out (out->rc says whether it ran). */
void roce_wcs_run(const struct roce_wcs_env *env, uint32_t i, struct roce_wcs_case *out);

/** "A:RECV/64/imm", "B:LOC_LEN_ERR": one completion, as compared. @return @p out */
char *roce_wcs_format(const struct roce_wcs_comp *c, char *out, size_t size);

struct roce_wcs_emu;

/**
 * Two emulated hosts in virtual time on a model link (@p rate_bps, one-way @p delay) for the
 * script; fills @p env. Needs roce_eal_init(). @return NULL with errno set
 */
struct roce_wcs_emu *roce_wcs_emulated(enum roce_mtu mtu, uint64_t rate_bps, roce_time_t delay,
				       struct roce_wcs_env *env);

void roce_wcs_emulated_free(struct roce_wcs_emu *e);

#endif /* ROCE_PERF_H */
