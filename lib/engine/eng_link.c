/* Model links: full-duplex wires with a rate, a delay, an MTU, impairments and a pcap tap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "eng_private.h"
#include "roce_io.h"
#include "roce_wire.h"

#define FLIGHT_INIT 256		/* initial in-flight ring size per direction (a power of two) */
#define ETH_HDR_LEN 14		/* destination, source, Ethertype */
#define VLAN_TAG_LEN 4		/* one 802.1Q tag */
#define LINK_WALL_BURST 32	/* wall clock: frames sent back to back by one late pull */
#define LINK_JUMBO_MTU 9216	/* no MTU: the largest L3 packet is a jumbo frame's */
#define GBPS 1000000000ull

/*
 * Upper bound of a receiver's reaction to PFC, in pause quanta, by line rate: IEEE 802.3
 * Annex 31B / 802.1Qbb Annex N (10G 60, 25G 80, 40G 118, 100G 394, 400G 905 quanta).
 */
static const struct { uint64_t rate; uint32_t quanta; } pfc_response[] = {
	{ 10 * GBPS, 60 }, { 25 * GBPS, 80 }, { 40 * GBPS, 118 }, { 100 * GBPS, 394 },
	{ 400 * GBPS, 905 },
};

/* A frame on the wire or propagating: it reaches the far end at @when. */
struct flight {
	struct rte_mbuf *m;	/* the frame */
	roce_time_t when;	/* arrival time */
	uint64_t txseq;		/* order it was sent in (1-based); a copy keeps its original's */
};

/*
 * One direction of a link: it pulls from @src and hands to @dst. Laid out by who reads what:
 * the sender's side of a frame (pull, serialise, count) in the first two cache lines, the
 * receiver's (the flight ring, deliver, count) in the third, its timer in the next, then what
 * only impairments and reads touch. On a large fabric a direction has left the cache between
 * two frames; each line a frame does not need is one fewer miss. The ends' callbacks are
 * copied field by field for that: a whole roce_link_end would push the receiver's counters
 * out of its line.
 */
struct link_dir {
	/* sender: what every pull reads, one line */
	struct roce_link *link;		/* back pointer */
	void *src;			/* sender: pulled when the wire is idle (roce_link_end) */
	struct rte_mbuf *(*pull)(void *owner);
	bool (*quiet)(void *owner, roce_time_t end);
	bool busy;			/* being pulled, or a frame is being serialised (tx_done armed) */
	bool lazy;			/* the last frame ends at (@idle_at, @idle_seq), tx_done unarmed */
	bool impaired;			/* some rule of @imp is on: dir_send_impaired() draws */
	uint32_t ser_len;		/* frame length of the last ser_time() (0: none yet) */
	uint64_t txseq;			/* frames sent, for reorder accounting */
	uint64_t ser_rate;		/* rate of the last ser_time() */
	roce_time_t ser_ps;		/* what it gave: most frames repeat it (no division) */
	/* sender: the next line */
	roce_time_t idle_at;		/* lazy: end of the last frame */
	uint64_t idle_seq;		/* lazy: the arm number its tx_done would have had */
	uint64_t tx_frames, tx_bytes;	/* st.tx_frames, st.tx_bytes, on read */
	roce_time_t tx_busy;		/* st.busy, on read */

	/* receiver: one line, its timer's (all a fire and an arm read of it) the next */
	void *dst __rte_cache_aligned;	/* receiver: gets arrivals (roce_link_end) */
	void (*rx)(void *owner, struct rte_mbuf *m);
	void (*peek)(void *owner, const struct rte_mbuf *m);
	struct flight *fl;		/* ring of frames in flight, sorted by arrival time */
	uint32_t fl_head;		/* index of the earliest */
	uint32_t fl_len;		/* frames in the ring */
	uint32_t fl_cap;		/* ring size, a power of two */
	bool icrc_partial;		/* roce_link_end.icrc_partial of the receiver */
	uint64_t rx_max_seq;		/* highest txseq delivered */
	uint64_t rx_frames;		/* st.rx_frames, on read */
	struct roce_timer arrive __rte_cache_aligned; /* arrival of flight[head] */

	/* end of the current frame's serialisation; on a line of its own, as @arrive: a timer's
	 * hot fields are 64 bytes, and after @arrive's 72 they straddled two lines */
	struct roce_timer tx_done __rte_cache_aligned;

	/* impairments, counters */
	struct flight held;		/* a frame held back to arrive behind the next one */
	bool has_held;			/* @held is in use */
	struct roce_link_impair imp;	/* impairments */
	uint64_t nth;			/* frames sent since roce_link_set_impair() */
	bool psn_done;			/* the drop_psn rule has fired */
	struct roce_link_stats st;	/* counters, but the hot ones above and in_flight */
} __rte_cache_aligned;
ROCE_STATIC_ASSERT(offsetof(struct link_dir, idle_at) == RTE_CACHE_LINE_SIZE);
ROCE_STATIC_ASSERT(offsetof(struct link_dir, arrive) == offsetof(struct link_dir, dst) + RTE_CACHE_LINE_SIZE);

struct roce_link {
	struct roce_engine *eng;	/* the clock and the RNG */
	struct roce_link_conf conf;	/* rate, delay, MTU */
	bool up;			/* false: frames are dropped */
	struct roce_pcap_writer *tap;	/* capture, or NULL */
	struct link_dir d[2];		/* 0: a→b, 1: b→a */
};

/* Serialisation time of @p len frame bytes, rounded up so the line rate is never exceeded. */
static inline roce_time_t ser_time(uint32_t len, uint64_t rate_bps)
{
	unsigned __int128 bits_ps = (unsigned __int128)roce_wire_bytes(len) * 8 * ROCE_SEC;

	return (roce_time_t)((bits_ps + rate_bps - 1) / rate_bps);
}

#define FL(d, i) ((d)->fl[((d)->fl_head + (i)) & ((d)->fl_cap - 1)])

static int flight_grow(struct link_dir *d)
{
	uint32_t cap = d->fl_cap * 2, i;
	struct flight *fl = malloc(cap * sizeof(*fl));

	if (fl == NULL)
		return -ENOMEM;
	for (i = 0; i < d->fl_len; i++)
		fl[i] = FL(d, i);
	free(d->fl);
	d->fl = fl;
	d->fl_cap = cap;
	d->fl_head = 0;
	return 0;
}

/* Insert in arrival order, after any frame arriving at the same time (so FIFO at equal times). */
static void flight_insert(struct link_dir *d, struct flight e)
{
	struct roce_engine *eng = d->link->eng;
	uint32_t pos;

	/* Amortised growth: the ring only grows past the most frames ever in flight. */
	if (roce_unlikely(d->fl_len == d->fl_cap) && flight_grow(d) != 0) {
		ROCE_LOG(ERR, "%s: link: out of memory for %u frames in flight", eng->name, d->fl_cap * 2);
		d->st.dropped++;
		rte_pktmbuf_free(e.m);
		return;
	}
	pos = d->fl_len;
	while (pos > 0 && FL(d, pos - 1).when > e.when) {
		FL(d, pos) = FL(d, pos - 1);
		pos--;
	}
	FL(d, pos) = e;
	d->fl_len++;
	if (pos == 0)
		roce_timer_arm(eng, &d->arrive, e.when);
}

/*
 * flight_insert() for the common case, inline: the ring has room and the frame arrives no
 * earlier than the last one in flight (always, on a wire without jitter or reordering).
 */
static inline void flight_push(struct link_dir *d, struct flight e)
{
	if (roce_likely(d->fl_len < d->fl_cap) &&
	    (d->fl_len == 0 || FL(d, d->fl_len - 1).when <= e.when)) {
		FL(d, d->fl_len) = e;
		if (d->fl_len++ == 0)
			roce_timer_arm(d->link->eng, &d->arrive, e.when);
		return;
	}
	flight_insert(d, e);
}

static void release_held(struct link_dir *d)
{
	if (d->has_held) {
		d->has_held = false;
		flight_insert(d, d->held);
	}
}

/* L3 length: the frame minus its Ethernet header and 802.1Q tags. */
static uint32_t l3_len(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_pkt_len(m), off = ETH_HDR_LEN - 2;
	uint16_t type;

	for (;;) {
		if (off + 2 > m->data_len)
			return len > off ? len - off : 0;
		type = (uint16_t)(p[off] << 8 | p[off + 1]);
		if (type != 0x8100 && type != 0x88a8)
			break;
		off += VLAN_TAG_LEN;
	}
	off += 2;
	return len > off ? len - off : 0;
}

/* Parse the headers of a RoCE frame (no ICRC). @return true if it is RoCE */
static bool parse_roce(const struct rte_mbuf *m, struct roce_pkt *pkt)
{
	const uint8_t *b = roce_wire_mbuf_bytes(m);

	return b != NULL && roce_wire_parse(b, rte_pktmbuf_pkt_len(m), ROCE_PARSE_NO_ICRC, pkt) == 0 &&
	       (pkt->kind == ROCE_KIND_ROCEV2 || pkt->kind == ROCE_KIND_ROCEV1);
}

/*
 * Flip one random bit. In a RoCE frame the bit is chosen after the BTH (extended headers,
 * payload, ICRC): a real link's FCS would drop any corrupted frame, so the point of this
 * impairment is corruption that only the end-to-end ICRC can see (a bad switch buffer).
 */
static struct rte_mbuf *corrupt_frame(struct link_dir *d, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m), lo = 0, byte;
	struct roce_engine *eng = d->link->eng;
	struct rte_mbuf *seg;
	struct roce_pkt pkt;
	uint64_t bit;

	if (len == 0)
		return m;
	if (parse_roce(m, &pkt) && pkt.bth_off && (uint32_t)pkt.bth_off + ROCE_BTH_LEN < len)
		lo = pkt.bth_off + ROCE_BTH_LEN;
	bit = (uint64_t)lo * 8 + roce_engine_rand(eng) % ((uint64_t)(len - lo) * 8);
	if (m->nb_segs != 1) {
		/* a payload by reference is the sender's memory (ROCE_ACCESS_ZERO_COPY): a copy */
		struct rte_mbuf *flat = rte_pktmbuf_copy(m, eng->pool, 0, UINT32_MAX);

		rte_pktmbuf_free(m);
		if (flat == NULL) {
			eng->stats.mbuf_alloc_fail++;
			return NULL;
		}
		m = flat;
	}
	(void)roce_wire_icrc_settle(m);	/* the bit flips in the frame as the wire has it; one piece */
	byte = (uint32_t)(bit / 8);
	for (seg = m; byte >= seg->data_len; seg = seg->next)
		byte -= seg->data_len;
	rte_pktmbuf_mtod(seg, uint8_t *)[byte] ^= (uint8_t)(1u << (bit & 7));
	m->ol_flags &= ~roce_wire_icrc_good;	/* the receiver must check this one */
	return m;
}

/* The rule-based drops: drop_nth, drop_psn, drop_acks. */
static bool rule_drop(struct link_dir *d, const struct rte_mbuf *m, roce_time_t now)
{
	const struct roce_link_impair *imp = &d->imp;
	bool psn_rule = imp->drop_psn_on && !d->psn_done;
	bool ack_rule = now >= imp->drop_acks_from && now < imp->drop_acks_until;
	struct roce_pkt pkt;
	uint32_t mask;

	if (++d->nth == imp->drop_nth)
		return true;
	if (!psn_rule && !ack_rule)
		return false;
	if (!parse_roce(m, &pkt))
		return false;
	mask = roce_opcode[pkt.opcode].mask;
	if (psn_rule && (mask & ROCE_F_REQ) && pkt.psn == (imp->drop_psn & ROCE_PSN_MASK)) {
		d->psn_done = true;
		return true;
	}
	return ack_rule && (mask & ROCE_F_ACK);
}

/*
 * A frame went on the wire at @p now and leaves it at @p end: impair it and schedule arrival.
 * A plain wire (no draws, no rules, nothing held back) takes the inline path of dir_pull().
 */
static void dir_send_impaired(struct link_dir *d, struct rte_mbuf *m, roce_time_t now,
			      roce_time_t end)
{
	struct roce_engine *eng = d->link->eng;
	const struct roce_link_impair *imp = &d->imp;
	struct flight e = { .m = m, .when = end + d->link->conf.delay, .txseq = ++d->txseq };
	struct rte_mbuf *copy = NULL;
	bool reorder;

	if (rule_drop(d, m, now) || (imp->loss > 0 && roce_engine_rand01(eng) < imp->loss)) {
		d->st.dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (imp->corrupt > 0 && roce_engine_rand01(eng) < imp->corrupt) {
		m = corrupt_frame(d, m);
		if (m == NULL) {		/* no mbuf for the copy: counted by the engine */
			d->st.dropped++;
			return;
		}
		e.m = m;
		d->st.corrupted++;
	}
	if (imp->jitter)
		e.when += imp->jitter == ROCE_TIME_NEVER ? roce_engine_rand(eng) :
			  roce_engine_rand(eng) % (imp->jitter + 1);
	if (imp->dup > 0 && roce_engine_rand01(eng) < imp->dup) {
		copy = rte_pktmbuf_copy(m, eng->pool, 0, UINT32_MAX);
		if (copy == NULL)
			eng->stats.mbuf_alloc_fail++;
	}
	reorder = imp->reorder > 0 && roce_engine_rand01(eng) < imp->reorder;

	if (d->has_held) {
		/* The held frame goes behind this one: same arrival time or later, inserted after. */
		flight_insert(d, e);
		if (d->held.when < e.when)
			d->held.when = e.when;
		release_held(d);
	} else if (reorder) {
		d->held = e;
		d->has_held = true;
	} else {
		flight_insert(d, e);
	}
	if (copy != NULL) {
		d->st.duplicated++;
		flight_insert(d, (struct flight){ .m = copy, .when = e.when, .txseq = e.txseq });
	}
}

/*
 * The wire of @p d is idle since @p start: take the sender's next frame, if any, and start
 * serialising it. In virtual time @p start is now. A wall-clock engine may get to a frame's end
 * late (a loop iteration is longer than a frame); then the next frames go back to back from
 * where the wire really went idle, up to LINK_WALL_BURST of them per call, instead of one per
 * loop iteration, so the line rate holds.
 */
static void dir_pull(struct link_dir *d, roce_time_t start)
{
	struct roce_link *l = d->link;
	struct rte_mbuf *m;
	roce_time_t ser, end;
	uint32_t len;
	bool stop;

	d->busy = true;		/* a kick from inside pull() must not recurse */
	for (unsigned int burst = 1;; burst++) {
		for (;;) {
			m = d->pull(d->src);
			if (m == NULL) {
				d->busy = false;
				/* Nothing follows the held frame: it arrives in its turn, not reordered. */
				release_held(d);
				return;
			}
			/* the L3 length is at most the frame's minus 12: parse only frames near the MTU */
			if (l->conf.mtu == 0 || rte_pktmbuf_pkt_len(m) <= l->conf.mtu + 12 ||
			    l3_len(m) <= l->conf.mtu)
				break;
			d->st.mtu_drops++;
			rte_pktmbuf_free(m);
		}
		len = rte_pktmbuf_pkt_len(m);
		if (len != d->ser_len || l->conf.rate_bps != d->ser_rate) {
			d->ser_len = len;
			d->ser_rate = l->conf.rate_bps;
			d->ser_ps = ser_time(len, l->conf.rate_bps);
		}
		ser = d->ser_ps;
		d->tx_frames++;
		d->tx_bytes += len;
		d->tx_busy += ser;
		if (l->tap != NULL)
			(void)roce_pcap_write_mbuf(l->tap, start / ROCE_NS, m);	/* settles the ICRC */
		end = start + ser;
		stop = l->eng->clock != ROCE_CLOCK_WALL || burst == LINK_WALL_BURST ||
		       end > eng_now(l->eng);
		/*
		 * Armed before the arrival: equal times fire in this order. A quiet sender (one
		 * that has nothing left and will kick when it has) would give the frame's end
		 * nothing to pull: the event is left out, its arm number taken, and a kick
		 * before that end arms it as it would have been (roce_link_kick()).
		 */
		if (stop && d->quiet != NULL && !d->impaired && d->quiet(d->src, end) &&
		    l->eng->clock == ROCE_CLOCK_VIRTUAL) {
			d->lazy = true;
			d->idle_at = end;
			d->idle_seq = eng_timer_reserve(l->eng);
			d->busy = false;
		} else if (stop) {
			roce_timer_arm(l->eng, &d->tx_done, end);
		}
		if (!l->up) {
			d->st.down_drops++;
			rte_pktmbuf_free(m);
		} else if (!d->impaired) {
			flight_push(d, (struct flight){ .m = m, .when = end + l->conf.delay,
							.txseq = ++d->txseq });
		} else {
			dir_send_impaired(d, m, start, end);
		}
		if (stop)
			return;
		start = end;
	}
}

static void on_tx_done(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	RTE_SET_USED(eng);
	dir_pull(arg, t->when);
}

static void on_arrive(struct roce_engine *eng, struct roce_timer *t, void *arg);

/*
 * The run loop's look ahead, one event in front of the event it fires: on a large fabric the
 * state a frame's hop reads (the direction, the receiving port, the frame's mbuf and headers,
 * what the headers select) has left the cache since the frame was sent, and the hop stalls on
 * each line in turn. Two events ahead, the lines found from the direction alone; one event
 * ahead, the headers' and, through roce_link_end.peek, what the receiver reads. A load here
 * that misses stalls nothing that depends on it.
 */
void eng_link_lookahead(const struct roce_timer *next, const struct roce_timer *after)
{
	const struct link_dir *d;

	if (after != NULL) {
		d = after->arg;
		if (after->fn == on_arrive) {
			if (d->fl_len != 0) {
				rte_prefetch0(d->dst);
				rte_prefetch0(FL(d, 0).m);
			}
		} else if (after->fn == on_tx_done) {
			rte_prefetch0(d->src);
			rte_prefetch0(d->link);
		}
	}
	d = next->arg;
	if (next->fn == on_arrive && d->fl_len != 0) {
		struct rte_mbuf *m = FL(d, 0).m;

		rte_prefetch0(rte_pktmbuf_mtod(m, void *));
		if (d->peek != NULL)
			d->peek(d->dst, m);
	}
}

static void on_arrive(struct roce_engine *eng, struct roce_timer *t, void *arg)
{
	struct link_dir *d = arg;
	roce_time_t now = eng_now(eng);
	struct flight e;

	/* Deliver every frame due now, in order; the receiver may send (other direction). */
	while (d->fl_len && FL(d, 0).when <= now) {
		e = FL(d, 0);
		d->fl_head = (d->fl_head + 1) & (d->fl_cap - 1);
		d->fl_len--;
		if (!d->icrc_partial && roce_unlikely(roce_wire_icrc_settle(e.m) != 0)) {
			/* no mbuf to write its ICRC in: lost as by a receiver out of buffers */
			eng->stats.mbuf_alloc_fail++;
			d->st.dropped++;
			rte_pktmbuf_free(e.m);
			continue;
		}
		if (e.txseq < d->rx_max_seq)
			d->st.reordered++;
		else
			d->rx_max_seq = e.txseq;
		d->rx_frames++;
		d->rx(d->dst, e.m);
	}
	if (d->fl_len) {
		/*
		 * The receiver reads the next frame's mbuf and headers when it arrives. On a large
		 * fabric the look ahead fetches them in time (eng_link_lookahead()), and computing
		 * the header's address here would be a demand miss on the mbuf every arrival.
		 */
		if (!eng_lookahead(eng)) {
			struct rte_mbuf *next = FL(d, 0).m;

			rte_prefetch0(next);
			rte_prefetch0(rte_pktmbuf_mtod(next, void *));
		}
		roce_timer_arm(eng, t, FL(d, 0).when);
	}
}

static bool end_ok(const struct roce_link_end *e)
{
	return e != NULL && e->pull != NULL && e->rx != NULL;
}

struct roce_link *roce_link_create(struct roce_engine *eng, const struct roce_link_conf *conf,
				   const struct roce_link_end *a, const struct roce_link_end *b)
{
	struct roce_link *l;
	int i;

	if (eng == NULL || conf == NULL || conf->rate_bps == 0 || !end_ok(a) || !end_ok(b)) {
		errno = EINVAL;
		return NULL;
	}
	l = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*l));	/* as its directions are laid out */
	if (l == NULL)
		goto err_nomem;
	memset(l, 0, sizeof(*l));
	l->eng = eng;
	l->conf = *conf;
	l->up = true;
	for (i = 0; i < 2; i++) {
		const struct roce_link_end *src = i == 0 ? a : b, *dst = i == 0 ? b : a;
		struct link_dir *d = &l->d[i];

		d->link = l;
		d->src = src->owner;
		d->pull = src->pull;
		d->quiet = src->quiet;
		d->dst = dst->owner;
		d->rx = dst->rx;
		d->peek = dst->peek;
		d->icrc_partial = dst->icrc_partial;
		roce_timer_init(&d->tx_done, on_tx_done, d);
		roce_timer_init(&d->arrive, on_arrive, d);
		d->fl_cap = FLIGHT_INIT;
		d->fl = malloc(FLIGHT_INIT * sizeof(*d->fl));
		if (d->fl == NULL)
			goto err_free_link;
	}
	eng->nlinks++;
	return l;

err_free_link:
	free(l->d[0].fl);
	free(l);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

/* Free every frame in flight (and the held one); @return how many. */
static uint64_t dir_flush(struct link_dir *d)
{
	uint64_t n = d->fl_len;

	roce_timer_cancel(d->link->eng, &d->arrive);
	while (d->fl_len) {
		rte_pktmbuf_free(FL(d, 0).m);
		d->fl_head = (d->fl_head + 1) & (d->fl_cap - 1);
		d->fl_len--;
	}
	if (d->has_held) {
		rte_pktmbuf_free(d->held.m);
		d->has_held = false;
		n++;
	}
	return n;
}

void roce_link_destroy(struct roce_link *link)
{
	int i;

	if (link == NULL)
		return;
	for (i = 0; i < 2; i++) {
		roce_timer_cancel(link->eng, &link->d[i].tx_done);
		dir_flush(&link->d[i]);
		free(link->d[i].fl);
	}
	link->eng->nlinks--;
	free(link);
}

void roce_link_prefetch_kick(const struct roce_link *link, int dir)
{
	const struct link_dir *d = &link->d[dir & 1];

	rte_prefetch0(d);
}

void roce_link_kick(struct roce_link *link, int dir)
{
	struct link_dir *d = &link->d[dir & 1];

	if (d->busy)
		return;
	if (d->lazy) {
		d->lazy = false;
		/* the frame on the wire has not ended: pull at its end, as tx_done would have */
		if (!eng_passed(link->eng, d->idle_at, d->idle_seq)) {
			d->busy = true;
			eng_timer_arm_seq(link->eng, &d->tx_done, d->idle_at, d->idle_seq);
			return;
		}
	}
	dir_pull(d, eng_now(link->eng));
}

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0;	/* false for NaN too */
}

int roce_link_set_impair(struct roce_link *link, int dir, const struct roce_link_impair *imp)
{
	static const struct roce_link_impair none;
	struct link_dir *d;

	if (dir != 0 && dir != 1)
		return -EINVAL;
	if (imp == NULL)
		imp = &none;
	if (!prob_ok(imp->loss) || !prob_ok(imp->corrupt) || !prob_ok(imp->dup) ||
	    !prob_ok(imp->reorder))
		return -EINVAL;
	d = &link->d[dir];
	d->imp = *imp;
	d->impaired = imp->loss > 0 || imp->corrupt > 0 || imp->dup > 0 || imp->reorder > 0 ||
		      imp->jitter || imp->drop_nth || imp->drop_psn_on ||
		      imp->drop_acks_until > imp->drop_acks_from || d->has_held;
	d->nth = 0;
	d->psn_done = false;
	return 0;
}

int roce_link_set_rate(struct roce_link *link, uint64_t rate_bps)
{
	if (rate_bps == 0)
		return -EINVAL;
	link->conf.rate_bps = rate_bps;
	return 0;
}

void roce_link_set_up(struct roce_link *link, bool up)
{
	int i;

	if (link->up == up)
		return;
	link->up = up;
	for (i = 0; i < 2; i++) {
		if (!up)
			link->d[i].st.down_drops += dir_flush(&link->d[i]);
		else
			roce_link_kick(link, i);
	}
}

void roce_link_set_tap(struct roce_link *link, struct roce_pcap_writer *w)
{
	link->tap = w;
}

void roce_link_stats(const struct roce_link *link, int dir, struct roce_link_stats *st)
{
	const struct link_dir *d = &link->d[dir & 1];

	*st = d->st;
	st->tx_frames = d->tx_frames;
	st->tx_bytes = d->tx_bytes;
	st->busy = d->tx_busy;
	st->rx_frames = d->rx_frames;
	st->in_flight = d->fl_len + d->has_held;
}

uint64_t roce_link_rate(const struct roce_link *link)
{
	return link->conf.rate_bps;
}

roce_time_t roce_link_delay(const struct roce_link *link)
{
	return link->conf.delay;
}

uint32_t roce_link_mtu(const struct roce_link *link)
{
	return link->conf.mtu;
}

uint32_t roce_link_max_frame(const struct roce_link *link)
{
	return (link->conf.mtu ? link->conf.mtu : LINK_JUMBO_MTU) + ETH_HDR_LEN + VLAN_TAG_LEN;
}

/*
 * What can still arrive after the XOFF decision. Our XOFF may wait behind a frame already
 * leaving (one max frame), then takes its own serialisation and the propagation delay to reach
 * the upstream; the upstream finishes the frame it is sending (one max frame) and reacts within
 * its response time; and everything it sent meanwhile is still propagating towards us (another
 * delay). All in wire bytes at the line rate, an upper bound of the buffered bytes.
 */
uint64_t roce_link_pfc_headroom(const struct roce_link *link)
{
	uint64_t rate = link->conf.rate_bps;
	uint32_t resp = pfc_response[ROCE_DIM(pfc_response) - 1].quanta;
	unsigned __int128 prop = (unsigned __int128)2 * link->conf.delay * rate;
	unsigned int i;

	for (i = 0; i < ROCE_DIM(pfc_response); i++) {
		if (rate <= pfc_response[i].rate) {
			resp = pfc_response[i].quanta;
			break;
		}
	}
	return (uint64_t)((prop + 8 * ROCE_SEC - 1) / (8 * ROCE_SEC)) +
	       2 * roce_wire_bytes(roce_link_max_frame(link)) + roce_wire_bytes(ROCE_PFC_FRAME_LEN) +
	       (uint64_t)resp * ROCE_PFC_QUANTUM_BITS / 8;
}
