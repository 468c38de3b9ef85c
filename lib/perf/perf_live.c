/*
 * perftest's tests in real time, one side a process (or a thread): the emulated host on a DPDK
 * port, or a real RDMA device through rdma-core, both through the verbs front end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_private.h"
#include "roce_front.h"
#include "roce_ibdev.h"
#include "roce_io.h"
#include "roce_perf.h"
#include "roce_transport.h"

#define LIVE_MAX_QP 64			/* as roce_perf_check() allows */
#define LIVE_CQ_BATCH 64		/* completions polled at once */
#define LIVE_SLOT_ALIGN 64		/* slot size multiple */
#define LIVE_TAIL_PAD 16384		/* after the slots: perftest peers step their remote address
					 * through a cycle buffer (4 KiB) past the first message */
#define LIVE_RESOLVE_SEC 5		/* ARP resolution of the peer */
#define LIVE_SALT_CLIENT 0xc11e47ull	/* data pattern of the client's buffer */
#define LIVE_SALT_SERVER 0x5e7e7ull	/* data pattern of the server's buffer */
#define LIVE_BAD_RKEY 0x5a5a0000u	/* --bad-rkey: XORed into the rkeys we advertise and use */
#define LIVE_STALL_CHECK 4096		/* loop iterations between two looks at the clock */
#define LIVE_YIELD_AFTER 64		/* idle loop iterations before sched_yield() */
#define LIVE_YIELD_AFTER_DEV 1024	/* ... on a real device (no engine to run): about 100 us */
#define LIVE_WATCH 256			/* looks at a latency test's stamp byte between two polls
					 * of a real device's CQ */
#define LIVE_LINGER (10 * ROCE_MS)	/* before closing: ACKs our NIC still owes the peer leave */
#define LIVE_SETTLE (20 * ROCE_MS)	/* UC/UD server: frames still in the port after the client's
					 * last TCP message (nothing acknowledges them) */

struct roce_perf_live_ctx {
	struct roce_perf_conf conf;	/* the user's, with the path MTU agreed with the peer */
	struct roce_perf_live live;	/* the port and the peer */
	bool server;			/* no PEER given */
	/* the emulated NIC (none on a real device) */
	struct roce_engine *eng;	/* wall clock */
	struct roce_port *port;		/* the ethdev */
	struct roce_device *dev;	/* the emulated NIC */
	struct roce_link *link;		/* NIC <-> port: rate = port speed, no delay */
	struct roce_pcap_writer *pcap;	/* --pcap, on the model link */
	/* or a real device */
	struct roce_ibdev *ibdev;	/* through libibverbs */
	struct timespec t_base;		/* its time, CLOCK_MONOTONIC's, starts here */
	char ibname[80];		/* "rxe0 port 1", for messages */
	/* the workload's objects, whoever provides them */
	struct roce_front *front;
	struct roce_front_pd *pd;
	struct roce_front_cq *scq, *rcq;
	struct roce_front_qp *qp[LIVE_MAX_QP];
	struct roce_front_mr *mr;
	struct roce_front_ah *ah;	/* UD: to the peer */
	uint32_t rbuf_off;		/* where a received message starts in its slot (UD: after
					 * the 40-byte GRH) */
	uint8_t *buf;			/* nqp * nslots * slot bytes (-b: twice), then LIVE_TAIL_PAD */
	size_t buf_len;			/* mapped */
	uint32_t nslots, slot;		/* buffer slots per QP, bytes per slot */
	uint32_t max_size;		/* the largest message: -s, or -a's largest */
	uint64_t rx_base;		/* offset of the slots the peer targets (-b: past ours, so
					 * what we send is not what the peer writes; else 0) */
	uint8_t mac[6];			/* ours: the port's */
	uint8_t peer_mac[6];		/* resolved by ARP */
	struct roce_ip_addr peer_ip;	/* from the peer's GID */
	uint64_t speed_bps;		/* port speed */
	uint32_t port_mtu;		/* port L3 MTU */
	int sink;			/* UDP 4791 socket keeping the kernel from answering ICMP, or -1 */
	struct perf_oob oob;		/* perftest's exchange */
	struct perf_key me[LIVE_MAX_QP], peer[LIVE_MAX_QP]; /* key messages (pingpong: the same
					 * fields from its address message, QP 0) */
	struct roce_perf_result *res;	/* during run */
	uint64_t received;		/* send_bw server: receives completed */
	uint64_t lost;			/* of this size's messages, UC/UD ones that never came */
	uint64_t recv_seq[LIVE_MAX_QP];	/* send_bw server: receives per QP, for the slot they hit */
	roce_time_t recv_first, recv_last; /* send_bw server: times of the first and last receive */
	double *lat;			/* latency samples, us */
	uint64_t nlat;
	struct perf_tally tally;	/* the peak's samples */
	uint32_t quiet;			/* loop iterations in a row in which nothing happened */
	struct {
		uint32_t spins;		/* bandwidth waits */
		uint64_t seen;		/* completions at the last look */
		roce_time_t since;	/* ... when they last moved */
	} stall;			/* a bandwidth test's stall check */
	char *err;			/* during run: where failures are described */
	size_t errlen;
};

/* ---- the data pattern both sides know (--verify) ---- */

static uint64_t pat_word(uint64_t salt, uint64_t word)
{
	uint64_t x = word * 0x9e3779b97f4a7c15ull ^ salt;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static uint8_t pat_byte(uint64_t salt, uint64_t off)
{
	return (uint8_t)(pat_word(salt, off >> 3) >> ((off & 7) * 8));
}

static void pat_fill(uint8_t *p, size_t len, uint64_t salt)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = pat_word(salt, i >> 3);

		memcpy(p + i, &w, ROCE_MIN(8, len - i));
	}
}

/*
 * Index of the first byte of [off, off + len) of @p p that differs from the pattern the peer
 * (or we) had at [src, src + len), or -1.
 */
static int64_t pat_check(const uint8_t *p, uint64_t off, uint64_t len, uint64_t salt, uint64_t src)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[off + i] != pat_byte(salt, src + i))
			return (int64_t)i;
	return -1;
}

static uint64_t my_salt(const struct roce_perf_live_ctx *c)
{
	return c->server ? LIVE_SALT_SERVER : LIVE_SALT_CLIENT;
}

static uint64_t peer_salt(const struct roce_perf_live_ctx *c)
{
	return c->server ? LIVE_SALT_CLIENT : LIVE_SALT_SERVER;
}

static uint64_t slot_off(const struct roce_perf_live_ctx *c, uint32_t q, uint32_t s)
{
	return ((uint64_t)q * c->nslots + s % c->nslots) * c->slot;
}

/* Whether the received message at @p dst starts as the peer's slot at @p src does (16 bytes). */
static bool slot_matches(const struct roce_perf_live_ctx *c, uint64_t dst, uint64_t src)
{
	for (uint32_t b = 0; b < ROCE_MIN(c->conf.size, 16u); b++)
		if (c->buf[dst + b] != pat_byte(peer_salt(c), src + b))
			return false;
	return true;
}

/*
 * Every message sent was received: RC's promise. UC and UD lose a message a frame of which was
 * lost, without a resend: those are counted as lost (the ones received were checked byte by byte).
 */
static void check_count(struct roce_perf_live_ctx *c)
{
	uint64_t want = c->conf.iters * c->conf.nqp;

	if (c->conf.qp_type != ROCE_QPT_RC && c->received + c->lost < want) {
		c->res->lost_msgs += want - c->received - c->lost;	/* the last ones */
		c->lost = want - c->received;
	}
	if (c->received + c->lost != want)
		perf_verify_fail(c->res, "%llu of %llu messages received", c->received, want);
}

/* ---- engine, time ---- */

/*
 * One engine loop iteration: due timers and the port's poller. After LIVE_YIELD_AFTER
 * iterations in which no timer fired, give the CPU away once: on a machine whose cores are
 * shared (the peer process among them) a busy poller otherwise holds its core for a whole time
 * slice while the frame it waits for sits in the peer's queue.
 */
static void live_step(struct roce_perf_live_ctx *c)
{
	/*
	 * A real device works on its own: only give the CPU away, less often, for a turn is then
	 * a mere poll (and a latency test's watch of its stamp byte): every 64 would put a system
	 * call in most round trips, and in a VM that costs as much as a fifth of one
	 */
	if (c->eng == NULL) {
		if (++c->quiet >= LIVE_YIELD_AFTER_DEV) {
			c->quiet = 0;
			sched_yield();
		}
		return;
	}
	if (roce_engine_run(c->eng, 0) != 0)
		c->quiet = 0;
	else if (++c->quiet >= LIVE_YIELD_AFTER) {
		c->quiet = 0;
		sched_yield();
	}
}

static void live_idle(void *arg)
{
	live_step(arg);
}

/* What a wait for the peer's TCP message runs: the engine, or on a device nothing (it blocks). */
static perf_idle_fn oob_idle(const struct roce_perf_live_ctx *c)
{
	return c->eng != NULL ? live_idle : NULL;
}

/* The peer's frames so far (any RoCE frame the port took in): while they come, it lives. */
static uint64_t live_heard(void *arg)
{
	const struct roce_perf_live_ctx *c = arg;
	struct roce_port_stats ps;

	roce_port_stats(c->port, &ps);
	return ps.rx_roce;
}

/* Now: the engine's wall clock, or CLOCK_MONOTONIC on a real device. */
static roce_time_t live_now(const struct roce_perf_live_ctx *c)
{
	struct timespec ts;

	if (c->eng != NULL)
		return roce_engine_now(c->eng);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* from the run's start, as the engine's wall clock: 2^64 ps is 213 days of it */
	return ((roce_time_t)(ts.tv_sec - c->t_base.tv_sec) * ROCE_SEC +
		(roce_time_t)ts.tv_nsec * ROCE_NS) - (roce_time_t)c->t_base.tv_nsec * ROCE_NS;
}

static double now_sec(const struct roce_perf_live_ctx *c)
{
	return (double)live_now(c) / ROCE_SEC;
}

#define LIVE_ERR(c, rc, ...) \
	do { \
		snprintf((c)->err, (c)->errlen, __VA_ARGS__); \
		return (rc); \
	} while (0)

/* ---- set-up ---- */

static bool needs_reads(enum roce_perf_test t)
{
	return t == ROCE_PERF_READ_BW || t == ROCE_PERF_READ_LAT || t == ROCE_PERF_ATOMIC_BW;
}

/* The largest IB MTU whose RoCEv2 packets fit an L3 MTU of @p l3 (as rxe: IP, UDP, BTH, RETH, ICRC). */
static enum roce_mtu mtu_for_port(uint32_t l3)
{
	enum roce_mtu m = ROCE_MTU_4096;

	while (m > ROCE_MTU_256 && roce_mtu_bytes(m) + 20 + 8 + 12 + 28 + 4 > l3)
		m--;
	return m;
}

/* RESET -> INIT: receives can be posted from here on (the pingpong posts them first). */
static int init_qp(struct roce_perf_live_ctx *c, uint32_t q)
{
	struct roce_qp_attr a;
	unsigned int mask = perf_qp_init_attr(c->conf.qp_type,
					      c->live.xchg != ROCE_PERF_XCHG_PINGPONG, &a);

	return roce_front_modify_qp(c->qp[q], &a, mask);
}

/* The emulated NIC on the port, through the front end. */
static int emulated_create(struct roce_perf_live_ctx *c)
{
	const struct roce_perf_conf *conf = &c->conf;
	struct roce_device_conf dc = { 0 };

	memcpy(dc.mac, c->mac, 6);
	dc.ip[0] = c->live.ip;
	dc.ip_ver[0] = c->live.ip_ver;
	dc.name = "rocelab0";
	dc.speed_bps = c->speed_bps;
	dc.max_mtu = conf->mtu;
	c->dev = roce_device_create(c->eng, &dc);
	if (c->dev == NULL)
		return -ENOMEM;
	if (perf_device_congestion(c->dev, conf) != 0)
		return -EINVAL;
	if (conf->trace != NULL)
		roce_device_set_trace(c->dev, conf->trace);
	c->front = roce_front_emulated(c->dev);
	return c->front != NULL ? 0 : -ENOMEM;
}

/*
 * A verb the provider refused: one line naming it and its errno. @return -errno; a device's
 * refusal -EIO, whatever its errno (which the line gives): not a bad option of ours
 */
static int refused(struct roce_perf_live_ctx *c, const char *verb)
{
	int e = errno ? errno : EIO;

	snprintf(c->err, c->errlen, "%s: %s%s failed: %s (errno %d)",
		 c->ibdev != NULL ? c->ibname : "rocelab0", c->ibdev != NULL ? "ibv_" : "roce_",
		 verb, strerror(e), e);
	return c->ibdev != NULL ? -EIO : -e;
}

/* The workload's PD, CQs, buffer, MR and QPs (in INIT), on c->front. */
static int host_create(struct roce_perf_live_ctx *c)
{
	const struct roce_perf_conf *conf = &c->conf;
	size_t len;
	int rc;

	c->pd = roce_front_alloc_pd(c->front);
	if (c->pd == NULL)
		return refused(c, "alloc_pd");
	c->scq = roce_front_create_cq(c->front, (int)(conf->nqp * (conf->tx_depth + 1) + 16));
	if (c->scq == NULL)
		return refused(c, "create_cq");
	c->rcq = roce_front_create_cq(c->front, (int)(conf->nqp * (conf->rx_depth + 1) + 16));
	if (c->rcq == NULL)
		return refused(c, "create_cq");
	len = (size_t)conf->nqp * c->nslots * c->slot * (c->live.duplex ? 2 : 1) + LIVE_TAIL_PAD;
	c->buf_len = (len + 4095) & ~(size_t)4095;
	c->buf = mmap(NULL, c->buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->buf == MAP_FAILED) {
		c->buf = NULL;
		LIVE_ERR(c, -ENOMEM, "cannot map %zu bytes of buffers: %s", c->buf_len,
			 strerror(errno));
	}
	pat_fill(c->buf, c->buf_len, my_salt(c));
	/* write_lat polls the last byte of slot 0 for stamps 1, 2, ...: it must not hold one yet
	 * (-a: at any size's last byte) */
	if (conf->test == ROCE_PERF_WRITE_LAT)
		memset(c->buf + slot_off(c, 0, 0), 0, c->slot);
	c->mr = roce_front_reg_mr(c->pd, c->buf, c->buf_len, ROCE_ACCESS_LOCAL_WRITE |
				  ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
				  ROCE_ACCESS_REMOTE_ATOMIC);
	if (c->mr == NULL)
		return refused(c, "reg_mr");
	for (uint32_t q = 0; q < conf->nqp; q++) {
		struct roce_qp_cap cap;

		perf_qp_cap(conf, &cap);
		c->qp[q] = roce_front_create_qp(c->pd, c->scq, c->rcq, conf->qp_type, &cap);
		if (c->qp[q] == NULL)
			return refused(c, "create_qp");
		rc = init_qp(c, q);
		if (rc != 0) {
			errno = -rc;
			return refused(c, "modify_qp (to INIT)");
		}
	}
	return 0;
}

/* Our key messages: QPN, a random PSN (or --psn), the buffer of each QP, our GID. */
static void make_keys(struct roce_perf_live_ctx *c)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);

	for (uint32_t q = 0; q < c->conf.nqp; q++) {
		struct perf_key *k = &c->me[q];

		memset(k, 0, sizeof(*k));
		k->out_reads = needs_reads(c->conf.test) ? (uint16_t)c->conf.max_rd_atomic : 1;
		k->qpn = c->qp[q]->qp_num;
		k->psn = c->conf.first_psn ? c->conf.first_psn :
			 (uint32_t)pat_word(seed, q) & 0xffffff;
		k->rkey = c->mr->rkey ^ (c->live.bad_rkey ? LIVE_BAD_RKEY : 0);
		k->vaddr = (uintptr_t)c->buf + c->rx_base + slot_off(c, q, 0);
		if (c->live.ip_ver == 6) {
			memcpy(k->gid, c->live.ip.b, 16);	/* RoCEv2: the GID is the address */
		} else {
			k->gid[10] = 0xff;
			k->gid[11] = 0xff;
			memcpy(&k->gid[12], c->live.ip.b, 4);
		}
	}
}

static int resolve_peer(struct roce_perf_live_ctx *c)
{
	double end = now_sec(c) + LIVE_RESOLVE_SEC;
	char ip[64];
	int rc;

	if (c->port == NULL)
		return 0;	/* a real device resolves the peer's MAC itself */
	while ((rc = roce_port_resolve(c->port, &c->peer_ip, c->live.ip_ver, c->peer_mac)) == -EAGAIN &&
	       now_sec(c) < end)
		live_step(c);
	if (rc != 0)
		LIVE_ERR(c, -EHOSTUNREACH, "no %s from the peer's address %s on %s within %d s",
			 c->live.ip_ver == 6 ? "neighbour advertisement" : "ARP reply",
			 roce_ip_ntop(&c->peer_ip, c->live.ip_ver, ip, sizeof(ip)), roce_port_name(c->port),
			 LIVE_RESOLVE_SEC);
	return 0;
}

/*
 * INIT -> RTR -> RTS toward the peer's QP @p q, with the attributes perftest (or
 * ibv_*_pingpong, which differ only in max_rd_atomic 1 and no remote access) sets per QP type.
 */
static int connect_qp(struct roce_perf_live_ctx *c, uint32_t q)
{
	const struct roce_perf_conf *conf = &c->conf;
	const struct perf_key *rk = &c->peer[q];
	bool pp = c->live.xchg == ROCE_PERF_XCHG_PINGPONG;
	struct perf_qp_path path = {
		.dest_qpn = rk->qpn,
		.rq_psn = rk->psn,
		.sq_psn = c->me[q].psn,
		.max_dest_rd_atomic = pp ? 1 : (uint8_t)c->me[q].out_reads,
		/* the peer's out_reads, within what our requester can track */
		.max_rd_atomic = pp ? 1 : (uint8_t)ROCE_MAX(1, ROCE_MIN(rk->out_reads,
									conf->max_rd_atomic)),
		.ah = {
			.dip = c->peer_ip,
			.ip_ver = c->live.ip_ver,
			.sl = c->live.sl,
			.traffic_class = conf->tos,
		},
	};
	struct roce_qp_attr a;
	unsigned int mask;
	int rc;

	memcpy(path.ah.dmac, c->peer_mac, 6);
	mask = perf_qp_rtr_attr(conf, &path, &a);
	rc = roce_front_modify_qp(c->qp[q], &a, mask);
	if (rc != 0)
		return rc;
	mask = perf_qp_rts_attr(conf, &path, &a);
	rc = roce_front_modify_qp(c->qp[q], &a, mask);
	if (rc != 0)
		return rc;
	if (conf->qp_type == ROCE_QPT_UD && c->ah == NULL) {
		c->ah = roce_front_create_ah(c->pd, &path.ah);
		if (c->ah == NULL)
			return -errno;
	}
	return 0;
}

/*
 * The peer's GID is its address: IPv4-mapped if ours is IPv4, an IPv6 address if ours is
 * (perftest checks that both are of one kind too).
 */
static int peer_address(struct roce_perf_live_ctx *c)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[16];
	bool v4 = memcmp(c->peer[0].gid, mapped, 12) == 0;

	if (memcmp(c->peer[0].gid, zero, 16) == 0)
		LIVE_ERR(c, -EPROTO, "the peer sent no GID: on RoCE it needs one (ibv_*_pingpong: "
			 "-g GIDINDEX, e.g. -g 1 for ::ffff:a.b.c.d on rxe)");
	if (v4 != (c->live.ip_ver == 4))
		LIVE_ERR(c, -EPROTO, "the peer's GID is %s, ours (--ip) is %s: pick the peer's GID "
			 "index of the same kind (perftest -x, ibv_*_pingpong -g)",
			 v4 ? "IPv4-mapped" : "an IPv6 address", v4 ? "IPv6" : "IPv4");
	memset(&c->peer_ip, 0, sizeof(c->peer_ip));
	if (v4)
		memcpy(c->peer_ip.b, &c->peer[0].gid[12], 4);
	else
		memcpy(c->peer_ip.b, c->peer[0].gid, 16);
	for (uint32_t q = 1; q < c->conf.nqp; q++)
		if (memcmp(c->peer[q].gid, c->peer[0].gid, 16) != 0)
			LIVE_ERR(c, -EPROTO, "the peer's QPs carry different GIDs");
	return 0;
}

static int oob_check(struct roce_perf_live_ctx *c, int rc)
{
	if (rc != 0)
		snprintf(c->err, c->errlen, "%s exchange with %s: %s",
			 c->live.xchg == ROCE_PERF_XCHG_PINGPONG ? "ibv_*_pingpong" : "perftest",
			 c->oob.peer, c->oob.err);
	return rc;
}

static int post_recv(struct roce_perf_live_ctx *c, uint32_t q, uint32_t s);

static int connect_all(struct roce_perf_live_ctx *c)
{
	int rc;

	if ((rc = peer_address(c)) != 0 || (rc = resolve_peer(c)) != 0)
		return rc;
	for (uint32_t q = 0; q < c->conf.nqp; q++) {
		rc = connect_qp(c, q);
		if (rc != 0)
			LIVE_ERR(c, -EPROTO, "connecting QP %u to the peer's QP 0x%06x failed (%s)", q,
				 c->peer[q].qpn, strerror(-rc));
	}
	return 0;
}

/* Receives for a send_lat test or a pingpong: all into slot 0 of QP 0, as perftest's. */
static int post_lat_recvs(struct roce_perf_live_ctx *c)
{
	for (uint32_t i = 0; i < c->conf.rx_depth; i++)
		if (post_recv(c, 0, 0) != 0)
			LIVE_ERR(c, -ENOMEM, "cannot post %u receives", c->conf.rx_depth);
	return 0;
}

/*
 * ibv_*_pingpong (rdma-core's libibverbs/examples): the client writes its address, reads the
 * server's and writes "done"; the server reads, connects its QP, then answers. Receives are
 * posted before, as the pingpong posts rx_depth of them before it exchanges anything.
 */
static int exchange_pingpong(struct roce_perf_live_ctx *c)
{
	struct perf_pp_dest mine = { .qpn = c->me[0].qpn, .psn = c->me[0].psn }, theirs;
	int rc;

	memcpy(mine.gid, c->me[0].gid, 16);
	if ((rc = post_lat_recvs(c)) != 0)
		return rc;
	/* the server's read only: the client's answer comes after the server's ARP (connect_all) */
	perf_oob_deadline(&c->oob, c->server ? c->live.hello_timeout : 0);
	rc = c->server ? perf_pp_server_read(&c->oob, &theirs) :
	     perf_pp_client(&c->oob, &mine, &theirs);
	perf_oob_deadline(&c->oob, 0);
	if (rc != 0)
		return oob_check(c, rc);
	memset(&c->peer[0], 0, sizeof(c->peer[0]));
	c->peer[0].lid = theirs.lid;
	c->peer[0].qpn = theirs.qpn;
	c->peer[0].psn = theirs.psn;
	memcpy(c->peer[0].gid, theirs.gid, 16);
	if ((rc = connect_all(c)) != 0)
		return rc;
	if (c->server && (rc = perf_pp_server_reply(&c->oob, &mine)) != 0)
		return oob_check(c, rc);
	return 0;
}

/*
 * perftest 6.06's connection sequence (shared/tools/rxe-vm/README.md): versions, then the key
 * messages in the order each test uses, with the QPs connected in between.
 */
static int exchange_and_connect(struct roce_perf_live_ctx *c)
{
	uint32_t n = c->conf.nqp;
	bool lat = roce_perf_is_lat(c->conf.test);
	uint8_t peer_mtu;
	int rc;

	if (c->live.xchg == ROCE_PERF_XCHG_PINGPONG)
		return exchange_pingpong(c);
	/* a real peer sends its opening at once: one that stalls in it is cut off early, so
	 * that a half-open connection holds a --serve-forever host for seconds, not minutes */
	perf_oob_deadline(&c->oob, c->live.hello_timeout);
	rc = perf_oob_hello(&c->oob, (uint8_t)c->conf.mtu, &peer_mtu);
	if (rc != 0)
		return oob_check(c, rc);
	if (peer_mtu < c->conf.mtu)
		c->conf.mtu = (enum roce_mtu)peer_mtu;	/* each side uses the smaller MTU */
	if (c->conf.qp_type == ROCE_QPT_UD && c->conf.size > roce_mtu_bytes(c->conf.mtu))
		LIVE_ERR(c, -EPROTO, "a UD message of %u bytes exceeds the path MTU of %u agreed "
			 "with the peer", c->conf.size, roce_mtu_bytes(c->conf.mtu));
	if (lat && (rc = perf_oob_keys(&c->oob, c->me, c->peer, 1)) != 0)
		return oob_check(c, rc);
	if ((rc = perf_oob_keys(&c->oob, c->me, c->peer, n)) != 0)
		return oob_check(c, rc);
	perf_oob_deadline(&c->oob, 0);	/* from here each side may wait on the other's ARP */
	if ((rc = connect_all(c)) != 0)
		return rc;
	if (c->conf.test == ROCE_PERF_SEND_BW) {
		/* ib_send_bw: keys x 1, keys x N; the final keys x 1 follows posting receives */
		if ((rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0 ||
		    (rc = perf_oob_keys(&c->oob, c->me, NULL, n)) != 0)
			return oob_check(c, rc);
		return 0;
	}
	/* ib_send_lat: as ib_write_lat; its receives are posted before the last (sync) step */
	if (c->conf.test == ROCE_PERF_SEND_LAT && (rc = post_lat_recvs(c)) != 0)
		return rc;
	if ((rc = perf_oob_keys(&c->oob, c->me, NULL, n)) != 0 ||
	    (rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
		return oob_check(c, rc);
	return 0;
}

static bool impaired(const struct roce_link_impair *m)
{
	return m->loss > 0 || m->corrupt > 0 || m->dup > 0 || m->reorder > 0 || m->jitter > 0 ||
	       m->drop_nth > 0 || m->drop_psn_on || m->drop_acks_until > 0;
}

/* What a real device cannot take from rocelab: the emulated NIC's own features. */
static int ibdev_check(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		       char *err, size_t errlen)
{
	const char *what = conf->pcap != NULL ? "--pcap (capture on its netdev: tcpdump -i IFACE "
						 "udp port 4791)" :
			   conf->cc != NULL || conf->ecn ? "--cc and --ecn (the device's own)" :
			   conf->trace != NULL ? "--trace" :
			   live->bad_rkey ? "--bad-rkey" :
			   live->rate_bps != 0 ? "--rate (a device runs at its own)" :
			   impaired(&conf->impair) || impaired(&conf->impair_back) ?
			   "--loss, --drop-psn, --drop-nth" : NULL;

	if (what == NULL)
		return 0;
	snprintf(err, errlen, "%s: the emulated NIC's, not with --ibdev", what);
	return -EINVAL;
}

/* -a and -b: which tests and exchanges take them (perftest's own limits, and ours); what a
 * real device cannot take. */
int roce_perf_live_check(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
			 char *err, size_t errlen)
{
	uint32_t max = live->all_max ? live->all_max : ROCE_PERF_ALL_MAX;

	if (live->ibdev != NULL && ibdev_check(conf, live, err, errlen) != 0)
		return -EINVAL;
	if (!live->all && !live->duplex)
		return 0;
	if (live->xchg != ROCE_PERF_XCHG_PERFTEST) {
		snprintf(err, errlen, "%s: not with the ibv_*_pingpong exchange",
			 live->all ? "-a" : "-b");
		return -EINVAL;
	}
	if (live->duplex && roce_perf_is_lat(conf->test)) {
		snprintf(err, errlen, "-b is for the bandwidth tests (write_bw, read_bw, send_bw, "
			 "atomic_bw)");
		return -EINVAL;
	}
	if (live->all && conf->test == ROCE_PERF_ATOMIC_BW) {
		snprintf(err, errlen, "-a: atomic_bw has one size (8 bytes)");
		return -EINVAL;
	}
	if (live->all && conf->duration > 0) {
		snprintf(err, errlen, "-a runs -n iterations per size: not with -D");
		return -EINVAL;
	}
	if (live->all && (max < 2 || max > ROCE_PERF_ALL_MAX || (max & (max - 1)) != 0)) {
		snprintf(err, errlen, "--all-max %u: expected a power of two from 2 to %u", max,
			 ROCE_PERF_ALL_MAX);
		return -EINVAL;
	}
	if (live->duplex && live->bad_rkey) {
		snprintf(err, errlen, "--bad-rkey: not with -b");
		return -EINVAL;
	}
	return 0;
}

/*
 * A real device's port, through the front end: the GID perftest would pick (or -x's), which
 * gives our address; the port's speed and its active MTU, which caps the path MTU.
 */
static int ibdev_open(struct roce_perf_live_ctx *c)
{
	const struct roce_ibdev_info *info;
	const struct roce_ibdev_port *port;
	const struct roce_ibdev_gid *g;
	uint8_t pn = c->live.ib_port ? c->live.ib_port : 1;

	c->ibdev = roce_ibdev_open(c->live.ibdev, c->err, c->errlen);
	if (c->ibdev == NULL)
		return -errno;
	info = roce_ibdev_info(c->ibdev);
	if (pn > info->n_ports)
		LIVE_ERR(c, -EINVAL, "%s has %u port(s): no port %u (-i)", info->name,
			 info->n_ports, pn);
	port = &info->ports[pn - 1];
	snprintf(c->ibname, sizeof(c->ibname), "%s port %u", info->name, pn);
	if (!port->ethernet)
		LIVE_ERR(c, -EINVAL, "%s is InfiniBand, not RoCE: rocelab speaks RoCE v2", c->ibname);
	if (port->state != 4)	/* IBV_PORT_ACTIVE */
		LIVE_ERR(c, -ENETDOWN, "%s is %s, not PORT_ACTIVE: is its network interface up?",
			 c->ibname, roce_ibdev_port_state_name(port->state));
	if (port->active_mtu == 0)
		LIVE_ERR(c, -EIO, "%s reports no active MTU", c->ibname);
	g = roce_ibdev_gid_pick(port, c->live.gid_index, c->live.ip_ver == 6, c->err, c->errlen);
	if (g == NULL)
		return -EINVAL;
	memset(&c->live.ip, 0, sizeof(c->live.ip));
	if (roce_gid_is_ipv4(g->gid)) {
		c->live.ip_ver = 4;
		memcpy(c->live.ip.b, &g->gid[12], 4);
	} else {
		c->live.ip_ver = 6;
		memcpy(c->live.ip.b, g->gid, 16);
	}
	c->live.gid_index = (int)g->index;
	c->speed_bps = (uint64_t)(port->lanes * port->lane_gbps * 1e9);
	clock_gettime(CLOCK_MONOTONIC, &c->t_base);
	c->port_mtu = port->active_mtu;
	if (!c->live.mtu_set || roce_mtu_bytes(c->conf.mtu) > port->active_mtu)
		c->conf.mtu = roce_mtu_from_bytes(port->active_mtu);
	c->front = roce_front_ibdev(c->ibdev, pn, g->index);
	if (c->front == NULL)
		LIVE_ERR(c, -errno, "%s: %s", c->ibname, strerror(errno));
	return 0;
}

/* Keep the kernel from answering our peer's RoCE frames with ICMP port unreachable. */
static int udp_sink(const struct roce_ip_addr *ip, uint8_t ip_ver)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(4791) };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons(4791) };
	int small = 4096;
	int fd = socket(ip_ver == 6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0)
		return -1;
	memcpy(&sa.sin_addr, ip->b, 4);
	memcpy(&sa6.sin6_addr, ip->b, 16);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	/* fails (harmlessly) when the address is not the kernel's: then it drops them silently */
	rc = ip_ver == 6 ? bind(fd, (struct sockaddr *)&sa6, sizeof(sa6)) :
	     bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The emulated NIC on a DPDK port: the engine, the port, the NIC and the link between them,
 * and the workload's objects. @return 0; -1 with errno set and c->err filled
 */
static int emulated_open(struct roce_perf_live_ctx *c, const struct roce_engine_conf *ec,
			 const struct roce_port_conf *pc)
{
	const struct roce_perf_conf *conf = &c->conf;
	struct roce_link_end dev_end, port_end;
	struct roce_link_conf lc = { 0 };
	bool up;
	int rc;

	c->eng = roce_engine_create(ec);
	if (c->eng == NULL) {
		snprintf(c->err, c->errlen, "cannot create the engine and its mbuf pool");
		return -1;
	}
	c->port = roce_port_open(c->eng, pc, c->err, c->errlen);
	if (c->port == NULL)
		return -1;
	roce_port_mac(c->port, c->mac);
	if (roce_port_link(c->port, &up, &c->speed_bps) != 0 || c->speed_bps == 0)
		c->speed_bps = 100000000000ull;
	if (c->live.rate_bps != 0)
		c->speed_bps = c->live.rate_bps;
	c->port_mtu = roce_port_mtu(c->port);
	if (!c->live.mtu_set || c->conf.mtu > mtu_for_port(c->port_mtu))
		c->conf.mtu = mtu_for_port(c->port_mtu);
	rc = roce_port_add_addr(c->port, &c->live.ip, c->live.ip_ver);
	if (rc == 0)
		rc = emulated_create(c);
	if (rc == 0)
		rc = host_create(c);
	if (rc != 0) {
		if (c->err[0] == '\0')	/* else a verb named what it refused */
			snprintf(c->err, c->errlen, "cannot create the emulated host: %s",
				 strerror(-rc));
		errno = -rc;
		return -1;
	}
	dev_end = roce_device_link_end(c->dev);
	dev_end = roce_port_gate(c->port, &dev_end);	/* the NIC waits for TX room */
	port_end = roce_port_link_end(c->port);
	lc.rate_bps = c->speed_bps;
	lc.mtu = c->port_mtu;
	c->link = roce_link_create(c->eng, &lc, &dev_end, &port_end);
	if (c->link == NULL) {
		snprintf(c->err, c->errlen, "cannot create the link to the port");
		return -1;
	}
	roce_device_attach(c->dev, c->link, 0);
	roce_port_attach(c->port, c->link, 1);
	/*
	 * --loss, --drop-psn, --drop-nth act on the frames this process sends: the client's are
	 * virtual time's client->server direction, the server's its server->client one.
	 */
	roce_link_set_impair(c->link, 0, c->server ? &c->conf.impair_back : &c->conf.impair);
	if (conf->pcap != NULL) {
		c->pcap = roce_pcap_create_snap(conf->pcap, conf->snaplen, c->err, c->errlen);
		if (c->pcap == NULL)
			return -1;
		roce_link_set_tap(c->link, c->pcap);
	}
	c->sink = udp_sink(&c->live.ip, c->live.ip_ver);
	return 0;
}

struct roce_perf_live_ctx *roce_perf_live_open(const struct roce_perf_conf *conf,
					       const struct roce_perf_live *live,
					       char *err, size_t errlen)
{
	struct roce_engine_conf ec = {
		.clock = ROCE_CLOCK_WALL,
		.seed = conf->seed,
		.nb_mbufs = 8192,
		.name = "live",
	};
	struct roce_port_conf pc = { .devargs = live->dev };
	struct roce_perf_live_ctx *c;
	int rc;

	if (roce_perf_check(conf, err, errlen) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (live->ibdev == NULL && live->ip_ver != 4 && live->ip_ver != 6) {
		snprintf(err, errlen, "no address given (--ip: IPv4 or IPv6)");
		errno = EINVAL;
		return NULL;
	}
	if (live->xchg == ROCE_PERF_XCHG_PINGPONG && (conf->test != ROCE_PERF_SEND_LAT ||
						      conf->nqp != 1)) {
		snprintf(err, errlen, "the ibv_*_pingpong exchange runs a send ping-pong on one QP");
		errno = EINVAL;
		return NULL;
	}
	if (roce_perf_live_check(conf, live, err, errlen) != 0) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->conf = *conf;
	c->live = *live;
	c->server = live->peer == NULL;
	c->sink = -1;
	c->oob.fd = -1;
	c->err = err;
	c->errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	c->rbuf_off = conf->qp_type == ROCE_QPT_UD ? ROCE_GRH_LEN : 0;
	c->max_size = live->all ? (live->all_max ? live->all_max : ROCE_PERF_ALL_MAX) : conf->size;
	if (live->all && conf->qp_type == ROCE_QPT_UD)	/* its sizes end at the path MTU */
		c->max_size = ROCE_MIN(c->max_size, roce_mtu_bytes(ROCE_MTU_4096));
	c->slot = (ROCE_MAX(c->max_size, 8u) + c->rbuf_off + LIVE_SLOT_ALIGN - 1) &
		  ~(LIVE_SLOT_ALIGN - 1u);
	/* as in virtual time: one buffer per QP, a slot per outstanding send under --verify */
	c->nslots = roce_perf_is_lat(conf->test) ? 2 : !conf->verify ? 1 :
		    ROCE_MAX(1u, ROCE_MIN(ROCE_MAX(conf->tx_depth, conf->rx_depth),
					  (uint32_t)((64u << 20) / c->slot)));
	c->rx_base = live->duplex ? (uint64_t)conf->nqp * c->nslots * c->slot : 0;

	if (live->ibdev != NULL) {
		rc = ibdev_open(c);
		if (rc == 0)
			rc = host_create(c);
		if (rc != 0) {
			errno = -rc;
			goto err_close;
		}
	} else if (emulated_open(c, &ec, &pc) != 0) {
		goto err_close;
	}
	make_keys(c);

	c->oob.idle = oob_idle(c);
	c->oob.idle_arg = c;
	c->oob.heard = c->port != NULL ? live_heard : NULL;	/* a device's frames: unseen */
	c->oob.silence = live->timeout;
	c->oob.stop = live->stop;
	c->oob.listening = live->listening;
	c->oob.listening_arg = live->listening_arg;
	rc = perf_oob_open(&c->oob, c->server, live->peer,
			   live->tcp_port ? live->tcp_port : ROCE_PERF_TCP_PORT,
			   live->wait_forever ? 0 : live->timeout);
	if (rc != 0) {
		snprintf(err, errlen, "%s", c->oob.err);
		errno = -rc;
		goto err_close;
	}
	c->oob.timeout = live->timeout;	/* a peer that speaks another test stops sending */
	rc = exchange_and_connect(c);
	if (rc != 0) {
		errno = -rc;
		goto err_close;
	}
	return c;

err_close:
	rc = errno;
	roce_perf_live_close(c);
	errno = rc ? rc : EIO;
	return NULL;
}

/* perftest's "local address" line, or ibv_*_pingpong's (@p pp). */
static void key_line(const struct perf_key *k, bool pp, char *out, size_t size)
{
	char ip[64];

	if (pp) {
		inet_ntop(AF_INET6, k->gid, ip, sizeof(ip));
		snprintf(out, size, "LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", k->lid, k->qpn,
			 k->psn, ip);
		return;
	}
	inet_ntop(AF_INET6, k->gid, ip, sizeof(ip));	/* ::ffff:a.b.c.d for IPv4 */
	snprintf(out, size, "LID 0x%04x QPN 0x%06x PSN 0x%06x RKey 0x%08x VAddr 0x%016llx GID %s",
		 k->lid, k->qpn, k->psn, k->rkey, (unsigned long long)k->vaddr, ip);
}

void roce_perf_live_info(const struct roce_perf_live_ctx *c, struct roce_perf_live_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->port, sizeof(info->port), "%s",
		 c->port != NULL ? roce_port_name(c->port) : c->ibname);
	info->speed_bps = c->speed_bps;
	info->port_mtu = c->port_mtu;
	info->mtu = roce_mtu_bytes(c->conf.mtu);
	key_line(&c->me[0], c->live.xchg == ROCE_PERF_XCHG_PINGPONG, info->local,
		 sizeof(info->local));
	key_line(&c->peer[0], c->live.xchg == ROCE_PERF_XCHG_PINGPONG, info->remote,
		 sizeof(info->remote));
	snprintf(info->peer_version, sizeof(info->peer_version), "%.2f", c->oob.peer_version);
}

/* ---- the tests ---- */

static uint32_t qp_index(const struct roce_perf_live_ctx *c, uint32_t qpn)
{
	for (uint32_t q = 0; q < c->conf.nqp; q++)
		if (c->qp[q]->qp_num == qpn)
			return q;
	return 0;
}

static int post_recv(struct roce_perf_live_ctx *c, uint32_t q, uint32_t s)
{
	struct roce_sge sge = {
		.addr = (uintptr_t)c->buf + c->rx_base + slot_off(c, q, s),
		.length = c->slot,
		.lkey = c->mr->lkey,
	};
	struct roce_recv_wr wr = { .wr_id = (uint64_t)q << 32 | s, .sg_list = &sge, .num_sge = 1 };

	return roce_front_post_recv(c->qp[q], &wr);
}

/* A receive in every slot of every QP (send_bw's receiving side). */
static int post_all_recvs(struct roce_perf_live_ctx *c)
{
	for (uint32_t q = 0; q < c->conf.nqp; q++)
		for (uint32_t s = 0; s < c->conf.rx_depth; s++)
			if (post_recv(c, q, s) != 0)
				LIVE_ERR(c, -ENOMEM, "cannot post receives");
	return 0;
}

/* Iteration @p i of QP @p q: from slot i % nslots to the peer's same slot (write_lat: 1 -> 0). */
static int post_send(struct roce_perf_live_ctx *c, uint32_t q, uint64_t i, bool signaled)
{
	const struct roce_perf_conf *conf = &c->conf;
	bool lat = conf->test == ROCE_PERF_WRITE_LAT || conf->test == ROCE_PERF_SEND_LAT;
	uint32_t s = (uint32_t)(i % c->nslots);
	struct roce_sge sge = {
		.addr = (uintptr_t)c->buf + slot_off(c, q, lat ? 1 : s),
		.length = conf->size,
		.lkey = c->mr->lkey,
	};
	struct perf_target t = {
		.remote = c->peer[q].vaddr + (lat ? 0 : (uint64_t)s * c->slot),
		.atomic = c->peer[q].vaddr,
		.rkey = c->peer[q].rkey ^ (c->live.bad_rkey ? LIVE_BAD_RKEY : 0),
		.ah = c->ah != NULL ? roce_front_ud_ah(c->ah) : NULL,
		.remote_qpn = c->peer[q].qpn,
	};
	struct roce_send_wr wr;

	perf_wr_fill(conf, i, signaled, &t, &sge, &wr);
	if (wr.opcode == ROCE_WR_RDMA_READ && conf->verify)
		memset(c->buf + slot_off(c, q, s), 0, conf->size);	/* the peer's bytes, not ours */
	return roce_front_post_send(c->qp[q], &wr);
}

/* Data a completed client operation @p wr_id on QP @p q must have moved. */
static void verify_op(struct roce_perf_live_ctx *c, uint32_t q, uint64_t wr_id)
{
	uint64_t off = slot_off(c, q, (uint32_t)(wr_id % c->nslots));
	int64_t bad;

	if (c->conf.test != ROCE_PERF_READ_BW)
		return;	/* WRITE and SEND data is checked where it lands, by the server */
	/* what the peer holds where it told us to read: its own pattern there */
	bad = pat_check(c->buf, off, c->conf.size, peer_salt(c), c->rx_base + off);
	if (bad >= 0)
		perf_verify_fail(c->res, "READ %llu: byte %llu differs from the peer's", wr_id,
				 (unsigned long long)bad);
}

static bool recv_poll(struct roce_perf_live_ctx *c);

/* ---- the loops' backend: a side in real time, the emulated NIC's or a device's ---- */

static struct roce_perf_live_ctx *bw_ctx(struct perf_bw *b)
{
	return b->arg;
}

static roce_time_t bw_now(struct perf_bw *b)
{
	return live_now(bw_ctx(b));
}

static int bw_post(struct perf_bw *b, uint32_t q, uint64_t i, bool signaled)
{
	return post_send(bw_ctx(b), q, i, signaled);
}

static int bw_poll(struct perf_bw *b, int num, struct roce_wc *wc)
{
	return roce_front_poll_cq(bw_ctx(b)->scq, num, wc);
}

static uint32_t bw_qp_index(struct perf_bw *b, uint32_t qpn)
{
	return qp_index(bw_ctx(b), qpn);
}

static void bw_sent(struct perf_bw *b, uint32_t q, uint64_t wr_id)
{
	verify_op(bw_ctx(b), q, wr_id);
}

/* -b send_bw: the peer sends as much to us meanwhile (perftest's run_iter_bi) */
static bool bw_receive(struct perf_bw *b)
{
	return recv_poll(bw_ctx(b));
}

static bool bw_received_all(struct perf_bw *b)
{
	return bw_ctx(b)->received >= b->conf->iters * b->conf->nqp;
}

/* The engine's turn (or the CPU given away); no completion for --timeout is a failure. */
static int bw_wait(struct perf_bw *b, bool polled)
{
	struct roce_perf_live_ctx *c = bw_ctx(b);
	roce_time_t now;

	(void)polled;
	live_step(c);
	if (++c->stall.spins % LIVE_STALL_CHECK != 0)
		return 0;
	now = live_now(c);
	if (b->total + c->received != c->stall.seen) {
		c->stall.seen = b->total + c->received;
		c->stall.since = now;
	} else if (c->live.timeout > 0 &&
		   now - c->stall.since > (roce_time_t)(c->live.timeout * ROCE_SEC)) {
		LIVE_ERR(c, -ETIMEDOUT, "no completion for %.0f s (%llu of %llu done)",
			 c->live.timeout, (unsigned long long)b->total,
			 (unsigned long long)(b->conf->iters * b->conf->nqp));
	}
	return 0;
}

static const struct perf_bw_ops bw_ops = {
	.now = bw_now,
	.post = bw_post,
	.poll = bw_poll,
	.qp_index = bw_qp_index,
	.wait = bw_wait,
};

/* The client's side of a bandwidth test (and, -b, each side's). */
static int client_bw(struct roce_perf_live_ctx *c)
{
	struct perf_bw_ops ops = bw_ops;
	struct perf_bw b = {
		.conf = &c->conf, .ops = &ops, .arg = c, .res = c->res, .tally = &c->tally,
	};

	if (c->conf.verify && c->conf.test == ROCE_PERF_READ_BW)
		ops.sent = bw_sent;	/* WRITE and SEND data is checked where it lands */
	if (c->live.duplex && c->conf.test == ROCE_PERF_SEND_BW) {
		ops.receive = bw_receive;
		ops.received_all = bw_received_all;
	}
	c->stall.spins = 0;
	c->stall.seen = 0;
	c->stall.since = live_now(c);
	return perf_bw_loop(&b);
}

/*
 * A send_bw receiver: count (and check) the receives completed so far, and post them again.
 * @return whether there were any
 */
static bool recv_poll(struct roce_perf_live_ctx *c)
{
	struct roce_wc wc[LIVE_CQ_BATCH];
	bool polled = false;
	int n;

	while ((n = roce_front_poll_cq(c->rcq, LIVE_CQ_BATCH, wc)) > 0) {
		polled = true;
		for (int i = 0; i < n; i++) {
			uint32_t q = (uint32_t)(wc[i].wr_id >> 32), s = (uint32_t)wc[i].wr_id;
			uint64_t k = c->recv_seq[q]++;

			if (!perf_wc_ok(c->res, wc[i].status))
				continue;
			if (c->received++ == 0)
				c->recv_first = live_now(c);
			c->recv_last = live_now(c);
			if (c->conf.verify) {
				/* the k-th message of QP q came from the peer's slot k % nslots */
				uint64_t src = slot_off(c, q, (uint32_t)(k % c->nslots));
				uint64_t dst = c->rx_base + slot_off(c, q, s) + c->rbuf_off;
				int64_t bad = -1;

				/* UC and UD drop a message a frame of which was lost, and do not
				 * resend: this may be a later one (whose slot says which) */
				if (c->conf.qp_type != ROCE_QPT_RC &&
				    !slot_matches(c, dst, src)) {
					for (uint32_t d = 1; d < c->nslots; d++) {
						uint64_t later = slot_off(c, q, (uint32_t)((k + d) %
											  c->nslots));

						if (slot_matches(c, dst, later)) {
							c->lost += d;
							c->res->lost_msgs += d;
							c->recv_seq[q] += d;
							k += d;
							src = later;
							break;
						}
					}
				}

				/* UD: the GRH's 40 bytes count, as in verbs */
				if (wc[i].byte_len != c->conf.size + c->rbuf_off)
					perf_verify_fail(c->res,
							 "receive of %llu bytes, expected %llu",
							 wc[i].byte_len,
							 c->conf.size + c->rbuf_off);
				for (uint32_t b = 0; b < c->conf.size && bad < 0; b++)
					if (c->buf[dst + b] != pat_byte(peer_salt(c), src + b))
						bad = b;
				if (bad >= 0)
					perf_verify_fail(c->res, "message %llu: byte %llu differs "
							 "from the peer's", k,
							 (unsigned long long)bad);
			}
			post_recv(c, q, s);
		}
	}
	return polled;
}

/* The server of a send_bw test, while it waits for the client's next message: receive. */
static void server_recv_idle(void *arg)
{
	struct roce_perf_live_ctx *c = arg;

	live_step(c);
	recv_poll(c);
}

/*
 * After a WRITE test the slots the peer targets must hold the bytes of its own slots: those of
 * the @p done WRITEs its report says completed (a peer that failed part way reports fewer, and
 * the slots it never wrote are not the mismatch its failure would otherwise look like).
 */
static void verify_writes(struct roce_perf_live_ctx *c, uint64_t done)
{
	uint64_t used = ROCE_MIN((uint64_t)c->nslots, c->conf.duration > 0 ? c->nslots :
				 ROCE_MIN(done, c->conf.iters));

	for (uint32_t q = 0; q < c->conf.nqp; q++) {
		for (uint32_t s = 0; s < used; s++) {
			uint64_t off = slot_off(c, q, s);
			int64_t bad = pat_check(c->buf, c->rx_base + off, c->conf.size,
						peer_salt(c), off);

			if (bad >= 0) {
				perf_verify_fail(c->res,
						 "WRITE slot %llu: byte %llu differs from the peer's",
						 s, (unsigned long long)bad);
				return;
			}
		}
	}
}

/*
 * A wait's stall check: whether @p limit has passed since the first check (*@p start, 0 before
 * it). The clock is read here, every LIVE_STALL_CHECK turns, never as the wait begins: on a
 * machine whose clock costs a microsecond (a VM on HPET), a read there would lengthen every
 * round trip of a latency test.
 */
static bool stalled(const struct roce_perf_live_ctx *c, roce_time_t *start, roce_time_t limit)
{
	roce_time_t now = live_now(c);

	if (*start == 0)
		*start = now;
	return now - *start > limit;
}

/* The peer's WRITE of round trip @p i: its slot 1 (the last byte is the stamp). */
static void verify_lat(struct roce_perf_live_ctx *c, uint64_t i, const uint8_t *dst)
{
	uint64_t src = slot_off(c, 0, 1);

	if (!c->conf.verify)
		return;
	for (uint32_t b = 0; b + 1 < c->conf.size; b++) {
		if (dst[b] != pat_byte(peer_salt(c), src + b)) {
			perf_verify_fail(c->res, "round trip %llu: byte %llu differs from the "
					 "peer's", i, b);
			return;
		}
	}
}

static struct roce_perf_live_ctx *lat_ctx(struct perf_lat *l)
{
	return l->arg;
}

static roce_time_t lat_now(struct perf_lat *l)
{
	return live_now(lat_ctx(l));
}

static int lat_post(struct perf_lat *l, uint64_t i)
{
	return post_send(lat_ctx(l), 0, i, true);
}

static int lat_poll(struct perf_lat *l, bool recv, struct roce_wc *wc)
{
	struct roce_perf_live_ctx *c = lat_ctx(l);

	return roce_front_poll_cq(recv ? c->rcq : c->scq, 1, wc);
}

static int lat_repost(struct perf_lat *l)
{
	return post_recv(lat_ctx(l), 0, 0);
}

/* --verify: the peer's message of this round trip, or the READ's bytes. */
static void lat_arrived(struct perf_lat *l)
{
	struct roce_perf_live_ctx *c = lat_ctx(l);
	uint8_t *dst = c->buf + slot_off(c, 0, 0);
	int64_t bad;

	switch (c->conf.test) {
	case ROCE_PERF_WRITE_LAT:
		verify_lat(c, l->i, dst);
		break;
	case ROCE_PERF_SEND_LAT:
		dst += c->rbuf_off;
		if (l->byte_len != c->conf.size + c->rbuf_off)
			perf_verify_fail(c->res, "message %llu: %llu bytes received", l->i,
					 l->byte_len);
		verify_lat(c, l->i, dst);
		memset(dst, 0, c->conf.size);	/* the next message must bring its bytes again */
		break;
	default:
		bad = pat_check(c->buf, slot_off(c, 0, 0), c->conf.size, peer_salt(c),
				slot_off(c, 0, 0));
		if (bad >= 0)
			perf_verify_fail(c->res, "READ %llu: byte %llu differs", l->i,
					 (unsigned long long)bad);
		break;
	}
}

static const struct perf_lat_ops lat_ops = {
	.now = lat_now,
	.post = lat_post,
	.poll = lat_poll,
	.repost = lat_repost,
};

/*
 * This side of ib_write_lat (the server writes first), ib_send_lat or an ibv_*_pingpong (the
 * client sends first), or ib_read_lat's client, one size, run by perf_work.c's loop; here,
 * its waits. A side that makes no move for --timeout has stalled (its last sends' completions:
 * at least a second, as a lost ACK is resent).
 */
static int run_lat(struct roce_perf_live_ctx *c)
{
	const struct roce_perf_conf *conf = &c->conf;
	struct perf_lat_ops ops = lat_ops;
	struct perf_lat l = {
		.conf = conf, .ops = &ops, .arg = c, .res = c->res, .lat = c->lat,
		.first = conf->test == ROCE_PERF_WRITE_LAT ? c->server : !c->server,
		.stamp = c->buf + slot_off(c, 0, 1) + conf->size - 1,
		.watch = c->buf + slot_off(c, 0, 0) + conf->size - 1,
	};
	bool watch = c->eng == NULL && conf->test == ROCE_PERF_WRITE_LAT;
	roce_time_t start = 0;	/* read at the first stall check: not on the round trip's path */
	uint64_t steps = 0;
	uint32_t spins = 0;
	int rc;

	if (conf->verify)
		ops.arrived = lat_arrived;
	perf_lat_start(&l);
	while ((rc = perf_lat_run(&l)) == PERF_LAT_BUSY) {
		double secs = l.state == PERF_LAT_TAIL ? ROCE_MAX(c->live.timeout, 1.0) :
			      c->live.timeout;

		/* a device writes the stamp on its own: watch it alone for a while, as perftest
		 * does, rather than every turn between a poll and the next */
		for (uint32_t k = 0; watch && l.state == PERF_LAT_WAIT && k < LIVE_WATCH &&
		     *l.watch != l.want; k++)
			;
		live_step(c);
		if (l.steps != steps) {
			steps = l.steps;
			spins = 0;
			start = 0;
		} else if (++spins % LIVE_STALL_CHECK == 0 && secs > 0 &&
			   stalled(c, &start, (roce_time_t)(secs * ROCE_SEC))) {
			c->nlat = l.nlat;
			LIVE_ERR(c, -ETIMEDOUT, "no %s for %.0f s (round trip %llu of %llu)",
				 perf_lat_awaits(&l), secs, (unsigned long long)l.i + 1,
				 (unsigned long long)conf->iters);
		}
	}
	c->nlat = l.nlat;
	if (rc < 0)
		LIVE_ERR(c, rc, "%s", l.err);
	if (conf->test == ROCE_PERF_WRITE_LAT)	/* -a: the next size carries this byte as data */
		*l.stamp = pat_byte(my_salt(c), slot_off(c, 0, 1) + conf->size - 1);
	if (conf->test == ROCE_PERF_SEND_LAT)
		c->res->wall_sec = (double)(l.t_end - l.t_first) / ROCE_SEC;
	return 0;
}

/* UC and UD have no ACKs: let frames still in the port reach the QP before the checks. */
static void settle(struct roce_perf_live_ctx *c, void (*step)(void *))
{
	roce_time_t end;

	if (c->conf.qp_type == ROCE_QPT_RC)
		return;
	end = live_now(c) + LIVE_SETTLE;
	while (live_now(c) < end)
		step(c);
}

static void fill_from_report(struct roce_perf_live_ctx *c, const struct perf_report *r)
{
	const double mb = 1048576.0 * 8 / 1e9;	/* perftest's MB/s (2^20) in Gb/s */

	c->res->size = (uint32_t)r->size;
	c->res->iters = r->iters;
	c->res->bw_peak_gbps = r->bw_peak * mb;
	c->res->bw_avg_gbps = r->bw_avg * mb;
	c->res->msg_rate_mpps = r->msg_rate;
}

/* send_bw's receiver: its row, from the receives of this size, over its own time. */
static void recv_row(struct roce_perf_live_ctx *c)
{
	const struct roce_perf_conf *conf = &c->conf;

	c->res->iters = c->received / conf->nqp;
	c->res->size = conf->size;
	c->res->bw_avg_gbps = c->res->bw_peak_gbps = c->res->msg_rate_mpps = 0;
	if (c->recv_last > c->recv_first) {
		double sec = (double)(c->recv_last - c->recv_first) / ROCE_SEC;

		c->res->bw_avg_gbps = (double)(c->received - 1) * conf->size * 8 / sec / 1e9;
		c->res->bw_peak_gbps = c->res->bw_avg_gbps;
		c->res->msg_rate_mpps = (double)(c->received - 1) / sec / 1e6;
	}
	if (conf->verify && conf->duration == 0)
		check_count(c);
}

/* Our row in perftest's report units. */
static void to_report(const struct roce_perf_live_ctx *c, struct perf_report *r)
{
	const double mb = 1e9 / 8 / 1048576.0;

	memset(r, 0, sizeof(*r));
	r->size = c->conf.size;
	r->iters = c->res->iters;
	r->bw_peak = c->res->bw_peak_gbps * mb;
	r->bw_avg = c->res->bw_avg_gbps * mb;
	r->msg_rate = c->res->msg_rate_mpps;
}

/* The next message size: -a doubles it up to its largest; 0 once done. */
static uint32_t next_size(const struct roce_perf_live_ctx *c, uint32_t size)
{
	uint32_t last = c->max_size;

	if (!c->live.all)
		return 0;
	if (c->conf.qp_type == ROCE_QPT_UD)	/* perftest: UD's sizes end at the path MTU */
		last = ROCE_MIN(last, roce_mtu_bytes(c->conf.mtu));
	return size < last ? size * 2 : 0;
}

static uint32_t first_size(const struct roce_perf_live_ctx *c)
{
	return c->live.all ? 2 : c->conf.size;
}

/* A new size: its own figures and counters; errors and verify failures add up. */
static void start_size(struct roce_perf_live_ctx *c, uint32_t size)
{
	c->conf.size = size;
	c->nlat = 0;
	c->received = 0;
	c->lost = 0;
	c->recv_first = c->recv_last = 0;
	memset(c->recv_seq, 0, sizeof(c->recv_seq));
	c->res->size = size;
	c->res->iters = 0;
	c->res->bw_peak_gbps = c->res->bw_avg_gbps = c->res->msg_rate_mpps = 0;
	c->res->lat_min = c->res->lat_max = c->res->lat_typical = c->res->lat_avg = 0;
	c->res->lat_stdev = c->res->lat_p99 = c->res->lat_p999 = 0;
}

/* Every row of -a but the last goes to the caller now; the last is what run returns. */
static void size_done(struct roce_perf_live_ctx *c, uint32_t size)
{
	if (next_size(c, size) != 0 && c->live.row != NULL)
		c->live.row(c->live.row_arg, c->res);
}

/* send_bw's receiver before it answers the client's end-of-size step: the last receives. */
static void recv_drain(void *arg)
{
	struct roce_perf_live_ctx *c = arg;

	settle(c, server_recv_idle);
	recv_poll(c);
}

/*
 * -b: both sides run the test toward each other, then exchange reports; each prints its own
 * size and iterations with the sum of both sides' figures (perftest's print_full_bw_report).
 * write/read/atomic (write_bw.c): sync, run, [-a: sync], reports. send (send_bw.c, receives
 * posted before): sync, run both ways, reports, [-a: sync].
 */
static int run_bw_duplex(struct roce_perf_live_ctx *c)
{
	const double mb = 1048576.0 * 8 / 1e9;	/* perftest's MB/s (2^20) in Gb/s */
	bool send = c->conf.test == ROCE_PERF_SEND_BW;
	struct perf_report mine, theirs;
	int rc;

	if (send && (rc = post_all_recvs(c)) != 0)
		return rc;
	for (uint32_t size = first_size(c); size != 0; size = next_size(c, size)) {
		start_size(c, size);
		if ((rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
			return oob_check(c, rc);
		if ((rc = client_bw(c)) != 0)
			return rc;
		if (!send && c->live.all && (rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
			return oob_check(c, rc);
		to_report(c, &mine);
		/* the peer's requests were all answered once it reports (its test is over) */
		if ((rc = perf_oob_report(&c->oob, &mine, &theirs)) != 0)
			return oob_check(c, rc);
		settle(c, send ? server_recv_idle : live_idle);
		if (send)
			recv_poll(c);
		if (c->conf.verify && c->conf.test == ROCE_PERF_WRITE_BW)
			verify_writes(c, theirs.iters);
		if (c->conf.verify && send && c->conf.duration == 0)
			check_count(c);
		c->res->peer_bw_peak_gbps = theirs.bw_peak * mb;
		c->res->peer_bw_avg_gbps = theirs.bw_avg * mb;
		c->res->peer_msg_rate_mpps = theirs.msg_rate;
		c->res->bw_peak_gbps += c->res->peer_bw_peak_gbps;
		c->res->bw_avg_gbps += c->res->peer_bw_avg_gbps;
		c->res->msg_rate_mpps += c->res->peer_msg_rate_mpps;
		size_done(c, size);
		if (send && c->live.all && (rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
			return oob_check(c, rc);
		if (c->res->errors != 0)
			break;
	}
	return oob_check(c, perf_oob_finish(&c->oob, c->me));
}

/*
 * send_bw -a (send_bw.c's RUN_ALL): for each size, a sync after the receives are posted, the
 * client's sends, each side's own row, and a sync that ends the size. The server counts what
 * arrives until the client's end-of-size step, and the last ones before it answers.
 */
static int run_send_all(struct roce_perf_live_ctx *c)
{
	int rc = 0;

	if (c->server && (rc = post_all_recvs(c)) != 0)
		return rc;
	for (uint32_t size = first_size(c); size != 0; size = next_size(c, size)) {
		start_size(c, size);
		if ((rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
			return oob_check(c, rc);
		if (c->server) {
			c->oob.idle = server_recv_idle;
			c->oob.before_reply = recv_drain;
			rc = perf_oob_keys(&c->oob, c->me, NULL, 1);
			c->oob.idle = oob_idle(c);
			c->oob.before_reply = NULL;
			if (rc != 0)
				return oob_check(c, rc);
			recv_row(c);
		} else {
			if ((rc = client_bw(c)) != 0)
				return rc;
			if ((rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
				return oob_check(c, rc);
		}
		size_done(c, size);
		if (c->res->errors != 0)
			break;
	}
	return oob_check(c, perf_oob_finish(&c->oob, c->me));
}

static int run_bw(struct roce_perf_live_ctx *c)
{
	const struct roce_perf_conf *conf = &c->conf;
	struct perf_report mine = { 0 }, theirs = { 0 };
	int rc;

	if (c->live.duplex)
		return run_bw_duplex(c);
	if (conf->test == ROCE_PERF_SEND_BW && c->live.all)
		return run_send_all(c);
	if (conf->test == ROCE_PERF_SEND_BW) {
		if (c->server && (rc = post_all_recvs(c)) != 0)
			return rc;
		if ((rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
			return oob_check(c, rc);
		if (c->server) {
			/* receive until the client says it is done (perftest has no report here) */
			c->oob.idle = server_recv_idle;
			rc = perf_oob_finish(&c->oob, c->me);
			c->oob.idle = oob_idle(c);
			settle(c, server_recv_idle);
			recv_row(c);
			return oob_check(c, rc);
		}
		rc = client_bw(c);
		if (rc != 0)
			return rc;
		return oob_check(c, perf_oob_finish(&c->oob, c->me));
	}
	/* -a (write_bw.c, read_bw.c): the client runs every size; the server only waits */
	if (!c->server) {
		for (uint32_t size = first_size(c); size != 0; size = next_size(c, size)) {
			start_size(c, size);
			if ((rc = client_bw(c)) != 0)
				return rc;
			size_done(c, size);
			if (c->res->errors != 0)
				break;
		}
	}
	/* end of test: the server has been serving the client's traffic while it waited here */
	if ((rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
		return oob_check(c, rc);
	if (!c->server)
		to_report(c, &mine);
	if ((rc = perf_oob_report(&c->oob, &mine, &theirs)) != 0)
		return oob_check(c, rc);
	if (c->server) {
		fill_from_report(c, &theirs);
		settle(c, live_idle);
		/* -a: the client's last (largest) size is the one its report names */
		if (theirs.size >= 1 && theirs.size <= c->max_size)
			c->conf.size = (uint32_t)theirs.size;
		if (conf->verify && conf->test == ROCE_PERF_WRITE_BW)
			verify_writes(c, theirs.iters);
	}
	return oob_check(c, perf_oob_finish(&c->oob, c->me));
}

/* One size's latency row, from its samples. */
static void lat_row(struct roce_perf_live_ctx *c)
{
	struct roce_perf_result *res = c->res;
	uint64_t want;

	res->iters = c->server && c->conf.test == ROCE_PERF_READ_LAT ? 0 : c->nlat;
	perf_lat_stats(c->lat, c->nlat, res);
	/* write_lat's client times the round trips between its writes, one fewer than it made */
	want = (c->conf.test == ROCE_PERF_WRITE_LAT && !c->server) ||
	       (c->conf.test == ROCE_PERF_SEND_LAT && c->server) ? c->conf.iters - 1 : c->conf.iters;
	if (c->conf.verify && (!c->server || c->conf.test != ROCE_PERF_READ_LAT) &&
	    c->nlat != want && res->errors == 0)
		perf_verify_fail(c->res, "%llu of %llu round trips completed", c->nlat, want);
}

/*
 * The latency tests, every size of -a in turn (write_lat.c, read_lat.c, send_lat.c): write_lat
 * runs the sizes back to back (the stamps restart at 1 in each, at its last byte), read_lat's
 * client alone runs them, send_lat syncs before each size (the first sync is the connection's
 * last step).
 */
static int run_lat_sizes(struct roce_perf_live_ctx *c)
{
	int rc = 0;

	if (c->server && c->conf.test == ROCE_PERF_READ_LAT)
		return 0;	/* it serves the READs while it waits for the client's close */
	for (uint32_t size = first_size(c); size != 0; size = next_size(c, size)) {
		start_size(c, size);
		if (size != first_size(c) && c->conf.test == ROCE_PERF_SEND_LAT &&
		    (rc = perf_oob_keys(&c->oob, c->me, NULL, 1)) != 0)
			return oob_check(c, rc);
		rc = run_lat(c);
		lat_row(c);
		if (rc != 0)
			return rc;
		size_done(c, size);
		if (c->res->errors != 0)
			break;
	}
	return 0;
}

static int live_run(struct roce_perf_live_ctx *c, struct roce_perf_result *res, char *err,
		    size_t errlen)
{
	int rc;

	memset(res, 0, sizeof(*res));
	res->size = c->conf.size;
	c->res = res;
	c->err = err;
	c->errlen = errlen;
	/* a bandwidth or read_lat server waits in a read for the whole of the client's test
	 * (-b: both sides run theirs, and a read waits for the peer's end as long as a test) */
	if (c->server && c->conf.test != ROCE_PERF_WRITE_LAT && c->conf.test != ROCE_PERF_SEND_LAT &&
	    !c->live.duplex)
		c->oob.timeout = 0;
	if (!roce_perf_is_lat(c->conf.test))
		return run_bw(c);
	c->lat = calloc(c->conf.iters, sizeof(*c->lat));
	if (c->lat == NULL)
		LIVE_ERR(c, -ENOMEM, "out of memory for %llu latency samples",
			 (unsigned long long)c->conf.iters);
	rc = run_lat_sizes(c);
	if (c->conf.test == ROCE_PERF_WRITE_LAT)
		perf_oob_close(&c->oob);	/* ib_write_lat has no closing exchange */
	else if (c->live.xchg == ROCE_PERF_XCHG_PERFTEST && (rc == 0 || (c->server &&
		 c->conf.test == ROCE_PERF_READ_LAT)))
		/* ib_send_lat and ib_read_lat close as the bandwidth tests (the read_lat server
		 * serves the READs meanwhile); the pingpong closed after its exchange */
		rc = oob_check(c, perf_oob_finish(&c->oob, c->me));
	return rc;
}

int roce_perf_live_run(struct roce_perf_live_ctx *c, struct roce_perf_result *res,
		       char *err, size_t errlen)
{
	int rc = live_run(c, res, err, errlen);

	/* what the run's last step queued (an ACK, say) leaves now, within the port's figures */
	if (c->port != NULL)
		roce_port_flush(c->port);
	return rc;
}

void roce_perf_live_stats(const struct roce_perf_live_ctx *c, struct roce_perf_live_stats *st)
{
	struct roce_port_stats ps;
	struct roce_link_stats ls;

	memset(st, 0, sizeof(*st));
	if (c->port == NULL)
		return;		/* a real device: its own counters (rdma statistic) */
	roce_port_stats(c->port, &ps);
	st->tx_frames = ps.opackets;
	st->rx_frames = ps.ipackets;
	st->tx_bytes = ps.obytes;
	st->rx_bytes = ps.ibytes;
	st->rx_roce = ps.rx_roce;
	st->rx_other = ps.rx_other;
	st->tx_dropped = ps.tx_dropped + ps.oerrors;
	st->tx_held = ps.tx_held;
	st->rx_dropped = ps.rx_queue_full + ps.imissed;
	st->icrc_errors = roce_device_counter_by_name(c->dev, "rx_icrc_errors");
	st->access_naks_sent = roce_device_counter_by_name(c->dev, "remote_access_nak_sent");
	st->naks_rcvd = roce_device_counter_by_name(c->dev, "fatal_nak_rcvd");
	st->retransmits = roce_device_counter_by_name(c->dev, "retransmits");
	st->out_of_sequence = roce_device_counter_by_name(c->dev, "out_of_sequence");
	st->ecn_ce_rcvd = roce_device_counter_by_name(c->dev, "np_ecn_marked_roce_packets");
	st->cnp_sent = roce_device_counter_by_name(c->dev, "np_cnp_sent");
	st->cnp_rcvd = roce_device_counter_by_name(c->dev, "rp_cnp_handled");
	roce_link_stats(c->link, 0, &ls);
	st->impaired = ls.dropped;
}

void roce_perf_live_close(struct roce_perf_live_ctx *c)
{
	if (c == NULL)
		return;
	perf_oob_close(&c->oob);
	if (c->eng != NULL && c->link != NULL) {
		/* the ACK of the peer's last message may still be on the link: let it out */
		roce_time_t end = roce_engine_now(c->eng) + LIVE_LINGER;

		while (live_now(c) < end)
			live_step(c);
	}
	if (c->sink >= 0)
		close(c->sink);
	for (uint32_t q = 0; q < LIVE_MAX_QP; q++)
		roce_front_destroy_qp(c->qp[q]);
	roce_front_destroy_ah(c->ah);
	roce_front_dereg_mr(c->mr);
	roce_front_destroy_cq(c->scq);
	roce_front_destroy_cq(c->rcq);
	roce_front_dealloc_pd(c->pd);
	roce_front_close(c->front);
	roce_ibdev_close(c->ibdev);
	/* the link before the port and the NIC: it may hold frames in flight */
	roce_link_destroy(c->link);
	roce_device_destroy(c->dev);
	roce_port_close(c->port);
	roce_pcap_close_writer(c->pcap);
	if (c->buf != NULL)
		munmap(c->buf, c->buf_len);
	roce_engine_destroy(c->eng);
	free(c->lat);
	free(c);
}
