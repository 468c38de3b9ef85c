/* lib/perf internals: perftest's out-of-band exchange and the statistics both modes share. */
#ifndef PERF_PRIVATE_H
#define PERF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roce_perf.h"
#include "roce_verbs.h"

#define PERF_KEY_MSG 108		/* a key message with a GID: 107 characters and a NUL */
#define PERF_VERSION ROCE_PERF_VERSION	/* what we announce: perftest 6.06 (Debian 12's
					 * 4.5-0.17) */

/* Called while a read waits for the peer: run the engine so ARP and RoCE keep flowing. */
typedef void (*perf_idle_fn)(void *arg);

/* One TCP connection of perftest's exchange (port 18515). */
struct perf_oob {
	int fd;				/* the connected socket */
	bool server;			/* reads first (the client writes first) */
	perf_idle_fn idle;		/* called between polls of a read that would block; may be NULL */
	void *idle_arg;			/* passed to @idle */
	perf_idle_fn listening;		/* server: called once it listens for the client; may be NULL */
	void *listening_arg;		/* passed to @listening */
	perf_idle_fn before_reply;	/* server: called once a step's message has been read, before
					 * the answer lets the client go on; may be NULL */
	double timeout;			/* seconds one read may wait for the peer; 0: forever */
	uint64_t (*heard)(void *arg);	/* frames from the peer so far (with @idle_arg); may be NULL */
	double silence;			/* a read with no timeout fails once @heard has not moved for
					 * this long (the peer gone, its link down); 0: never */
	double deadline;		/* CLOCK_MONOTONIC seconds by which every read must be
					 * done (perf_oob_deadline()); 0: none */
	const volatile int *stop;	/* non-zero ends a wait for a client (-EINTR); may be NULL */
	double peer_version;		/* from the version step */
	char peer[64];			/* the peer's TCP address, for messages ("the peer" before) */
	char err[200];			/* the last failure, in words */
};

/* One key message: what a side tells the other about one of its QPs. */
struct perf_key {
	uint16_t lid;			/* 0 on RoCE */
	uint16_t out_reads;		/* READs/atomics this side accepts */
	uint32_t qpn;			/* its QP */
	uint32_t psn;			/* its first send PSN */
	uint32_t rkey;			/* rkey of its buffer */
	uint64_t vaddr;			/* where in that buffer the peer targets */
	uint8_t gid[16];		/* its GID (::ffff:a.b.c.d for IPv4) */
	uint32_t srqn;			/* 0 (no XRC/DC) */
};

/* The client's result, sent to the server after a bandwidth test (perftest's report). */
struct perf_report {
	uint64_t size;			/* message size */
	uint64_t iters;			/* iterations */
	double bw_peak;			/* in perftest's unit: MB/s, 2^20 bytes */
	double bw_avg;			/* the same */
	double msg_rate;		/* Mpps */
};

/**
 * Server: listen on @p port (any IPv4 address) and accept one connection, waiting up to
 * @p timeout seconds (0: forever). Client: connect to @p host:@p port, retrying for up to
 * @p timeout seconds while nobody listens.
 * @return 0; -errno with o->err filled
 */
int perf_oob_open(struct perf_oob *o, bool server, const char *host, uint16_t port, double timeout);

/** Close the connection (idempotent). */
void perf_oob_close(struct perf_oob *o);

/**
 * One symmetric step of @p len bytes (ctx_xchg_data): the client writes then reads, the server
 * reads then writes; each message is one write, as perftest reads each with one read().
 * @return 0; -ECONNRESET (peer closed) or -errno, with o->err filled
 */
int perf_oob_xchg(struct perf_oob *o, const void *mine, void *theirs, size_t len);

/**
 * Version (16 bytes), then, by the peer's version, cycle buffer and cache line (4 bytes each,
 * big-endian) and the MTU (the ibv_mtu enum in ASCII, 2 bytes).
 * @return 0 with @p peer_mtu set; -EPROTO (peer older than 5.70, a bad MTU), -errno
 */
int perf_oob_hello(struct perf_oob *o, uint8_t my_mtu, uint8_t *peer_mtu);

/** @p n key messages each way (one per QP). @return 0; -EPROTO (a malformed key), -errno */
int perf_oob_keys(struct perf_oob *o, const struct perf_key *mine, struct perf_key *theirs,
		  uint32_t n);

/** The bandwidth report, both ways (the server's own values are meaningless, as perftest's). */
int perf_oob_report(struct perf_oob *o, const struct perf_report *mine, struct perf_report *theirs);

/** The closing step: one key exchange, then "done\0" written and the socket closed. */
int perf_oob_finish(struct perf_oob *o, const struct perf_key *mine);

/** Format @p k as perftest's 108-byte key message (NUL included). */
void perf_key_pack(const struct perf_key *k, char out[PERF_KEY_MSG]);

/** Parse a key message. @return 0 or -EPROTO */
int perf_key_parse(const char *msg, size_t len, struct perf_key *k);

/**
 * Bound every read from now on to @p secs seconds in all (0: lift the bound), so that a peer
 * that stalls in the middle of the exchange's opening cannot hold a server for --timeout per
 * message.
 */
void perf_oob_deadline(struct perf_oob *o, double secs);

/**
 * perftest's version message (char[16], NUL padded, "6.06"): a number from 5.70 (the oldest
 * perftest will talk to) to below 100. Borrows @p msg; reads at most 16 of its @p len bytes.
 * @return 0 with @p version set; -EPROTO (not a number, or out of that range)
 */
int perf_version_parse(const char *msg, size_t len, double *version);

/**
 * perftest's MTU message (>= 5.31): the ibv_mtu enum as one ASCII digit 1-5 and a NUL.
 * @return 0 with @p mtu set (1-5); -EPROTO
 */
int perf_mtu_parse(const char *msg, size_t len, uint8_t *mtu);

/**
 * Bytes a peer sent, for a one-line message: up to the first NUL or @p len, non-printable
 * bytes as \xNN, cut with "..." to fit @p size (>= 4). @return @p out, always terminated
 */
const char *perf_oob_printable(const void *msg, size_t len, char *out, size_t size);

/* ---- ibv_{rc,uc,ud}_pingpong's exchange (rdma-core's libibverbs/examples/pingpong) ---- */

#define PERF_PP_MSG 52			/* "LLLL:QQQQQQ:PPPPPP:" + 32 hex digits of GID + NUL */

/* What one ibv_*_pingpong side tells the other. */
struct perf_pp_dest {
	uint16_t lid;			/* 0 on RoCE */
	uint32_t qpn;			/* its QP */
	uint32_t psn;			/* its first send PSN */
	uint8_t gid[16];		/* its GID; all zero when the peer runs without -g */
};

/** Format @p d as the pingpong's 52-byte message (NUL included). */
void perf_pp_pack(const struct perf_pp_dest *d, char out[PERF_PP_MSG]);

/** Parse one. @return 0 or -EPROTO */
int perf_pp_parse(const char *msg, size_t len, struct perf_pp_dest *d);

/**
 * Client side, whole: write ours, read theirs, write "done\0", close. The client connects
 * its QP afterwards (as the pingpong does). @return 0; -EPROTO (malformed), -errno
 */
int perf_pp_client(struct perf_oob *o, const struct perf_pp_dest *mine, struct perf_pp_dest *theirs);

/** Server, first half: read the client's address (then connect the QP). */
int perf_pp_server_read(struct perf_oob *o, struct perf_pp_dest *theirs);

/** Server, second half: write ours, read the client's "done", close. */
int perf_pp_server_reply(struct perf_oob *o, const struct perf_pp_dest *mine);

/* ---- perf_qp.c: a QP's bring-up, for every mode ---- */

#define PERF_QKEY 0x11111111		/* perftest's Q_Key for UD */

/* What one side connects a QP to: from the other host, or the peer's key message. */
struct perf_qp_path {
	uint32_t dest_qpn;		/* the peer's QP */
	uint32_t rq_psn;		/* the peer's first send PSN */
	uint32_t sq_psn;		/* ours */
	uint8_t max_dest_rd_atomic;	/* READs and atomics we answer at once (our out_reads) */
	uint8_t max_rd_atomic;		/* ... we have outstanding (the peer's out_reads) */
	struct roce_ah_attr ah;		/* the peer's address; UD's AH is made from it too */
};

/** perftest's capabilities for @p conf: send/receive depth + 1, one SGE, -I inline. */
void perf_qp_cap(const struct roce_perf_conf *conf, struct roce_qp_cap *cap);

/**
 * RESET -> INIT on port 1: UD with perftest's Q_Key; RC and UC with remote WRITE, READ and
 * atomic access when @p remote_access (the ibv_*_pingpongs ask for none).
 * @return the mask of what @p a now holds
 */
unsigned int perf_qp_init_attr(enum roce_qp_type type, bool remote_access, struct roce_qp_attr *a);

/** INIT -> RTR toward @p path, with perftest's mask for conf's connection type. */
unsigned int perf_qp_rtr_attr(const struct roce_perf_conf *conf, const struct perf_qp_path *path,
			      struct roce_qp_attr *a);

/** RTR -> RTS, with perftest's mask for conf's connection type. */
unsigned int perf_qp_rts_attr(const struct roce_perf_conf *conf, const struct perf_qp_path *path,
			      struct roce_qp_attr *a);

/** The emulated NIC's QP with perf_qp_cap(). */
struct roce_qp *perf_qp_create(struct roce_pd *pd, struct roce_cq *scq, struct roce_cq *rcq,
			       const struct roce_perf_conf *conf);

/** perf_qp_init_attr() applied. @return 0 or -errno */
int perf_qp_init(struct roce_qp *qp, enum roce_qp_type type, bool remote_access);

/** perf_qp_rtr_attr(), then perf_qp_rts_attr() applied. @return 0 or -errno */
int perf_qp_connect(struct roce_qp *qp, const struct roce_perf_conf *conf,
		    const struct perf_qp_path *path);

/* ---- perf_tally.c: what a run counts as it goes, whichever mode runs it ---- */

#define PERF_WIN 4096			/* completion-count samples for the peak bandwidth */

/* Completion counts at times as a run goes, for its peak bandwidth. */
struct perf_tally {
	roce_time_t win_t[PERF_WIN];
	uint64_t win_n[PERF_WIN];
	uint32_t win_len;
};

/** Whether a completion of @p status succeeded; otherwise count it (the first one kept). */
bool perf_wc_ok(struct roce_perf_result *res, enum roce_wc_status status);

/** A --verify mismatch: count it, and keep the first in words (@p fmt takes @p a, @p b). */
void perf_verify_fail(struct roce_perf_result *res, const char *fmt, unsigned long long a,
		      unsigned long long b);

/** @p done completions at @p now (the first PERF_WIN samples are kept). */
void perf_window(struct perf_tally *t, roce_time_t now, uint64_t done);

/**
 * perftest's peak bandwidth: the best rate over a window of @p depth completions of @p size
 * bytes among the samples, in Gb/s; 0 without two samples that far apart.
 */
double perf_peak_gbps(const struct perf_tally *t, uint32_t depth, uint32_t size);

#define PERF_ATOMIC_ADD 1		/* what atomic_bw adds each time */

/* Where a test's request goes at the peer. */
struct perf_target {
	uint64_t remote;		/* a WRITE's or READ's address */
	uint64_t atomic;		/* an atomic's: the one counter every QP adds to */
	uint32_t rkey;
	struct roce_ah *ah;		/* UD: the peer's address handle (the provider's) */
	uint32_t remote_qpn;		/* UD: the peer's QP */
};

/**
 * The request iteration @p i of conf's test posts, into @p wr pointing at @p sge (set by the
 * caller: its address, conf->size bytes, the lkey; an atomic's is made 8): the opcode,
 * signaled or not, inline up to -I (never a READ), the target; wr_id and an atomic's swap @p i.
 */
void perf_wr_fill(const struct roce_perf_conf *conf, uint64_t i, bool signaled,
		  const struct perf_target *t, struct roce_sge *sge, struct roce_send_wr *wr);

/* ---- perf_work.c: perftest's loops, once, for whichever backend runs them ---- */

struct perf_bw;

/* What a backend gives the bandwidth loop; each call gets the loop, whose @arg is the backend's. */
struct perf_bw_ops {
	roce_time_t (*now)(struct perf_bw *b);
	/** Post iteration @p i of QP @p q. @return 0; -ENOMEM (queue full: poll first), -errno */
	int (*post)(struct perf_bw *b, uint32_t q, uint64_t i, bool signaled);
	/** Up to @p num completions of the sender's send CQ. @return how many, or -errno */
	int (*poll)(struct perf_bw *b, int num, struct roce_wc *wc);
	/** The index of the QP a completion names. */
	uint32_t (*qp_index)(struct perf_bw *b, uint32_t qpn);
	/** A request completed (--verify checks what it moved); may be NULL. */
	void (*sent)(struct perf_bw *b, uint32_t q, uint64_t wr_id);
	/** A receiver the loop runs too (send_bw): whether it took a completion; may be NULL. */
	bool (*receive)(struct perf_bw *b);
	/** Whether that receiver has all the loop waits for; NULL: it waits for nothing. */
	bool (*received_all)(struct perf_bw *b);
	/**
	 * Nothing left to post: let time pass until something may have happened (@p polled: a
	 * completion was just taken). @return 0; > 0 nothing ever will (the loop ends);
	 * < 0 a failure the backend has described (the loop ends with it)
	 */
	int (*wait)(struct perf_bw *b, bool polled);
};

/* One side's bandwidth test (perftest's run_iter_bw()): it posts, polls and counts. */
struct perf_bw {
	const struct roce_perf_conf *conf;
	const struct perf_bw_ops *ops;
	void *arg;			/* the backend's */
	struct roce_perf_result *res;	/* errors, verify failures, then the figures */
	struct perf_tally *tally;	/* the peak's samples */
	uint64_t total;			/* completed requests */
	uint64_t posted;		/* posted ones */
	roce_time_t t0, t_end;		/* the run's start; when the last wanted completion came */
};

/**
 * Run @p b: post while the send queues have room, poll, and wait when neither moves, until
 * conf's iterations completed (and the receiver has all), -D's time is up, or a completion
 * failed; then fill the result's figures from its counts and times. @return 0, or the wait's < 0
 */
int perf_bw_loop(struct perf_bw *b);

/* Where one side of a latency test stands. */
enum perf_lat_state {
	PERF_LAT_POST,			/* its send of round trip i is next */
	PERF_LAT_POSTING,		/* ... timed, waiting for room in the send queue */
	PERF_LAT_WAIT,			/* it waits for the peer's message of round trip i */
	PERF_LAT_TAIL,			/* all sent: it waits for its sends' completions */
	PERF_LAT_DONE,
};

#define PERF_LAT_BUSY 1			/* perf_lat_run(): waiting on the peer or the NIC */

struct perf_lat;

/* What a backend gives a latency side. */
struct perf_lat_ops {
	roce_time_t (*now)(struct perf_lat *l);
	/** Post the side's request of round trip @p i (signaled). @return 0 or -errno */
	int (*post)(struct perf_lat *l, uint64_t i);
	/** One completion of the send CQ (@p recv false) or receive CQ. @return 0, 1, -errno */
	int (*poll)(struct perf_lat *l, bool recv, struct roce_wc *wc);
	/** send_lat: post the receive just taken again. @return 0 or -errno */
	int (*repost)(struct perf_lat *l);
	/** The peer's message (or the READ) of round trip l->i arrived (--verify); may be NULL. */
	void (*arrived)(struct perf_lat *l);
};

/* One side of write_lat, send_lat or read_lat. */
struct perf_lat {
	const struct roce_perf_conf *conf;
	const struct perf_lat_ops *ops;
	void *arg;			/* the backend's */
	struct roce_perf_result *res;	/* errors */
	bool first;			/* it sends first (ib_write_lat's server, ib_send_lat's client) */
	uint8_t *stamp;			/* write_lat: the last byte of what we send */
	const volatile uint8_t *watch;	/* write_lat: the last byte of what the peer writes */
	uint8_t want;			/* ... the stamp awaited there */
	uint32_t byte_len;		/* send_lat: the last receive's length */
	double *lat;			/* samples (conf->iters room), us; NULL: none kept */
	uint64_t nlat;
	enum perf_lat_state state;
	uint64_t i;			/* round trip */
	uint64_t sends_done;		/* our requests completed */
	uint64_t steps;			/* moves so far: a wait that sees none for long is a stall */
	roce_time_t t_prev;		/* the last post's time */
	roce_time_t t_first, t_end;	/* its first post's; its last round trip's end */
	char err[160];			/* a failure, in words */
};

/** Set @p l (conf, ops, res, first, stamp, watch, lat filled in) at its first round trip. */
void perf_lat_start(struct perf_lat *l);

/**
 * Run side @p l as far as it goes without waiting. @return 0 once done; PERF_LAT_BUSY (it
 * waits: let time pass, then call again); -errno with l->err filled
 */
int perf_lat_run(struct perf_lat *l);

/** What a busy side waits for, for a stall's message ("WRITE from the peer"). */
const char *perf_lat_awaits(const struct perf_lat *l);

/* perf_run.c: statistics shared with the live mode */

/** Sort @p lat (@p n samples, us) and fill the latency columns of @p r. */
void perf_lat_stats(double *lat, uint64_t n, struct roce_perf_result *r);

/** Apply conf's --ecn and --cc to @p dev. @return 0; -EINVAL (already checked by roce_perf_check) */
int perf_device_congestion(struct roce_device *dev, const struct roce_perf_conf *conf);

#endif /* PERF_PRIVATE_H */
