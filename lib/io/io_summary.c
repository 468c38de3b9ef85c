/*
 * `rocelab dissect --summary`: per-flow PSN, retransmission, NAK, ECN and PFC accounting, and
 * the CM connections set up and torn down.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_common.h"
#include "roce_io.h"
#include "roce_mad.h"
#include "roce_wire.h"

#define SEEN_BITS 8192u		/* PSNs remembered behind the highest one, per stream */
#define OPEN_CAP 4096u		/* outstanding RC messages tracked per flow */
#define PMTU_MIN 256u
#define PMTU_MAX 4096u

/* Hash key of a flow, or of a port (ip_ver KEY_PORT, src = its MAC) for pause accounting. */
struct flow_key {
	uint8_t ip_ver;		/* 4, 6, or KEY_PORT */
	uint8_t zero[3];	/* always 0, so the key hashes as plain bytes */
	uint32_t qpn;		/* destination QP */
	uint8_t src[16];	/* source address */
	uint8_t dst[16];	/* destination address */
};
#define KEY_PORT 0xff

/* Open-addressing table from a key to an index in an array; 0 marks an empty slot. */
struct index_hash {
	uint32_t *slot;		/* index + 1, or 0 */
	uint32_t cap;		/* power of two */
	uint32_t used;		/* occupied slots */
};

/* One PSN sequence (a flow's requests, or its responses): range, gaps and what was seen. */
struct psn_stream {
	bool started;		/* a PSN has been seen */
	uint32_t first;		/* the first PSN */
	uint32_t next;		/* one past the highest PSN (of the highest packet's span) */
	uint32_t read_psn;	/* READ request waiting for its span to be learnt, if read_pending */
	uint32_t read_len;	/* its DMA length */
	bool read_pending;	/* next was set as if the READ spanned one PSN */
	uint64_t seen[SEEN_BITS / 64];	/* bit psn % SEEN_BITS: seen, for psn in [next-SEEN_BITS, next) */
};

/* What a PSN was, relative to the stream. */
enum psn_class {
	PSN_NEW,		/* at or beyond the next expected PSN */
	PSN_FILL,		/* behind it, never seen: the first copy of a resent packet */
	PSN_DUP,		/* seen before: a retransmission */
};

#define CE_HOPS 8		/* hops whose CE marks a flow keeps apart */

struct flow {
	struct flow_key key;		/* the hash key */
	struct roce_flow_stats st;	/* what the summary reports */
	struct psn_stream req;		/* the flow's requests (RC, UC, UD) */
	struct psn_stream resp;		/* the flow's responses (RC ACK, READ response, Atomic ACK) */
	int32_t peer;			/* the reverse flow answering our requests, -1 if unknown */
	uint32_t peer_tried;		/* number of flows when we last looked for the peer */
	bool track_open;		/* RC: unanswered messages are tracked */
	uint32_t *open;			/* ring of end PSNs of unanswered messages, NULL until one */
	uint32_t open_cap;		/* its size: doubles as needed, up to OPEN_CAP */
	uint32_t open_head;		/* oldest entry */
	uint32_t open_n;		/* entries */
	uint64_t open_lost;		/* entries dropped because the ring was full */
	uint8_t ttl;			/* IP TTL / hop limit of the flow's first frame */
	/* CE marks by hop (TTL): a switch marks on the way, so a later hop may hold more */
	struct {
		uint8_t ttl;
		uint64_t ce;
	} ce_hop[CE_HOPS];
	uint8_t nce_hops;
};

/* A port that sent PFC or PAUSE frames: when each of its pauses ends. */
struct pause_port {
	struct flow_key key;		/* first, as ih_find() compares it */
	uint64_t until[9];		/* per priority; [8]: 802.3x PAUSE */
	uint64_t frames[9];		/* its frames, per priority */
	uint64_t paused_ns[9];		/* the time its frames paused, per priority */
};

/*
 * A CM connection, found by one side's address and communication ID (a node's IDs are its
 * own: the ID alone may repeat across nodes): the REQ's sender's, or the first side seen.
 */
struct cm_conn {
	struct flow_key key;		/* ip_ver, qpn = side 0's ID, src = side 0's address */
	struct roce_cm_conn_stats st;	/* what the summary reports */
};

#define PAUSE_PORTS_SHOWN 16	/* ports listed under a priority; the rest are counted */

struct roce_summary {
	uint64_t link_bps;		/* to turn quanta into time */
	struct flow *flows;		/* in order of first appearance */
	uint32_t nflows, flows_cap;
	struct index_hash fh;		/* flow_key -> flows[] */
	struct pause_port *ports;
	uint32_t nports, ports_cap;
	struct index_hash ph;		/* port key -> ports[] */
	uint32_t pmtu;			/* path MTU learnt from FIRST/MIDDLE payloads, 0 until known */
	struct roce_flow_stats totals;	/* the totals row */
	struct roce_pause_stats pause;	/* PFC/PAUSE figures */
	uint64_t first_ns;		/* first frame of any kind: time 0 */
	uint64_t last_ns;		/* the latest frame */
	bool any;			/* a frame was added */
	uint64_t frames;		/* every frame */
	uint64_t file_frames;		/* the file's, filtered out too (roce_summary_set_file) */
	uint64_t other_frames;		/* not RoCE, PFC or PAUSE */
	uint64_t pfc_frames;		/* PFC frames */
	uint64_t bad_frames;		/* RoCE, PFC or PAUSE, broken before a flow could be told */
	uint64_t hop_copies;		/* frames of a flow seen again at a later hop (other TTL) */
	struct cm_conn *conns;		/* CM connections, in order of first message */
	uint32_t nconns, conns_cap;
	struct index_hash ch;		/* side 0's address and ID -> conns[] */
	uint64_t cm_lost;		/* CM messages not stored for want of memory */
};

/* ---- the index hash ---- */

static uint64_t key_hash(const struct flow_key *k)
{
	uint64_t w[5], h = 0x9e3779b97f4a7c15ull;

	ROCE_STATIC_ASSERT(sizeof(struct flow_key) == sizeof(w));
	memcpy(w, k, sizeof(w));
	for (int i = 0; i < 5; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static int ih_init(struct index_hash *h, uint32_t cap)
{
	h->slot = calloc(cap, sizeof(*h->slot));
	if (h->slot == NULL)
		return -ENOMEM;
	h->cap = cap;
	h->used = 0;
	return 0;
}

/* Slot of @p k: its entry, or the empty slot where it goes. */
static uint32_t *ih_find(const struct index_hash *h, const struct flow_key *k, const void *arr,
			 size_t stride)
{
	uint32_t mask = h->cap - 1;
	uint32_t i = (uint32_t)key_hash(k) & mask;

	for (;;) {
		uint32_t *s = &h->slot[i];

		if (*s == 0 ||
		    memcmp((const uint8_t *)arr + (size_t)(*s - 1) * stride, k, sizeof(*k)) == 0)
			return s;
		i = (i + 1) & mask;
	}
}

/* Double the table when half full; keys are read back from the array. */
static int ih_grow(struct index_hash *h, const void *arr, size_t stride)
{
	struct index_hash n;

	if (h->used * 2 < h->cap)
		return 0;
	if (ih_init(&n, h->cap * 2) != 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->cap; i++) {
		uint32_t v = h->slot[i];

		if (v != 0) {
			*ih_find(&n, (const struct flow_key *)((const uint8_t *)arr +
				 (size_t)(v - 1) * stride), arr, stride) = v;
			n.used++;
		}
	}
	free(h->slot);
	*h = n;
	return 0;
}

/* ---- create / destroy ---- */

struct roce_summary *roce_summary_create(uint64_t link_bps)
{
	struct roce_summary *s;

	if (link_bps == 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto err;
	s->link_bps = link_bps;
	s->totals.type = "all";
	if (ih_init(&s->fh, 64) != 0)
		goto err_free;
	if (ih_init(&s->ph, 16) != 0)
		goto err_free_fh;
	if (ih_init(&s->ch, 16) != 0)
		goto err_free_ph;
	return s;

err_free_ph:
	free(s->ph.slot);
err_free_fh:
	free(s->fh.slot);
err_free:
	free(s);
err:
	errno = ENOMEM;
	return NULL;
}

void roce_summary_destroy(struct roce_summary *s)
{
	if (s == NULL)
		return;
	for (uint32_t i = 0; i < s->nflows; i++)
		free(s->flows[i].open);
	free(s->flows);
	free(s->ports);
	free(s->fh.slot);
	free(s->ph.slot);
	free(s->conns);
	free(s->ch.slot);
	free(s);
}

/* ---- PSN streams ---- */

static bool seen_get(const struct psn_stream *ps, uint32_t psn)
{
	uint32_t b = psn % SEEN_BITS;

	return (ps->seen[b / 64] >> (b % 64)) & 1;
}

static void seen_set(struct psn_stream *ps, uint32_t psn)
{
	uint32_t b = psn % SEEN_BITS;

	ps->seen[b / 64] |= 1ull << (b % 64);
}

/* Move the window to end at @p next, forgetting the PSNs that enter it. */
static void stream_advance(struct psn_stream *ps, uint32_t next)
{
	uint32_t k = (uint32_t)roce_psn_diff(next, ps->next);

	if (k >= SEEN_BITS) {
		memset(ps->seen, 0, sizeof(ps->seen));
	} else {
		for (uint32_t p = ps->next; p != ((ps->next + k) & ROCE_PSN_MASK);
		     p = (p + 1) & ROCE_PSN_MASK) {
			uint32_t b = p % SEEN_BITS;

			ps->seen[b / 64] &= ~(1ull << (b % 64));
		}
	}
	ps->next = next & ROCE_PSN_MASK;
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
	return a == 0 ? 1 : (a + b - 1) / b;
}

/* Could a READ of @p len bytes span @p n PSNs at some legal path MTU? Returns that MTU or 0. */
#define READ_LEN_UNKNOWN UINT32_MAX	/* a READ request whose RETH a snaplen cut */

static uint32_t read_span_mtu(uint32_t len, uint32_t n)
{
	for (uint32_t mtu = PMTU_MIN; mtu <= PMTU_MAX; mtu *= 2)
		if (div_up(len, mtu) == n)
			return mtu;
	return 0;
}

/*
 * Classify a request or response PSN and update the stream; @p span is the number of PSNs the
 * packet takes (a READ request: one per response packet; 0: not known yet, the path MTU is not).
 */
static enum psn_class stream_add(struct roce_summary *s, struct flow *fl, struct psn_stream *ps,
				 uint32_t psn, uint32_t span, uint32_t read_len, bool count_gaps,
				 bool mark)
{
	int32_t d;

	if (!ps->started) {
		ps->started = true;
		ps->first = psn;
		ps->next = psn;
	}
	d = roce_psn_diff(psn, ps->next);
	if (d > 0 && ps->read_pending && ps->read_len == READ_LEN_UNKNOWN) {
		d = 0;
	} else if (d > 0 && ps->read_pending) {
		/* IBA 9.7.4.1.3: a READ takes one PSN per response packet */
		uint32_t mtu = read_span_mtu(ps->read_len,
					     (uint32_t)roce_psn_diff(psn, ps->read_psn));

		if (mtu != 0) {
			s->pmtu = mtu;
			d = 0;
		}
	}
	ps->read_pending = false;
	if (d < 0) {
		if (d > -(int32_t)SEEN_BITS && !seen_get(ps, psn)) {
			if (mark)
				seen_set(ps, psn);
			return PSN_FILL;
		}
		return PSN_DUP;
	}
	if (d > 0 && count_gaps) {
		fl->st.psn_gaps++;
		fl->st.psn_missing += (uint64_t)d;
	}
	if (span == 0) {
		ps->read_pending = true;
		ps->read_psn = psn;
		ps->read_len = read_len;
		span = 1;
	}
	stream_advance(ps, psn + span);
	if (mark)
		seen_set(ps, psn);
	return PSN_NEW;
}

/* ---- open RC messages ---- */

/*
 * Room for one more entry: the ring doubles (most flows keep a few messages open, a capture of
 * many flows would otherwise hold OPEN_CAP entries for each); false when it cannot grow.
 */
static bool open_grow(struct flow *fl)
{
	uint32_t cap = fl->open_cap ? fl->open_cap * 2 : 8, *n;

	if (fl->open_n < fl->open_cap)
		return true;
	if (cap > OPEN_CAP || (n = malloc(cap * sizeof(*n))) == NULL)
		return false;
	for (uint32_t i = 0; i < fl->open_n; i++)	/* oldest first, from 0 */
		n[i] = fl->open[(fl->open_head + i) % fl->open_cap];
	free(fl->open);
	fl->open = n;
	fl->open_cap = cap;
	fl->open_head = 0;
	return true;
}

static void open_push(struct flow *fl, uint32_t end)
{
	uint32_t i, pos, cap;

	if (!fl->track_open)
		return;
	if (!open_grow(fl)) {
		if (fl->open_cap == 0) {
			fl->open_lost++;	/* no memory even for the first: not tracked */
			return;
		}
		fl->open_head = (fl->open_head + 1) % fl->open_cap;
		fl->open_n--;
		fl->open_lost++;
	}
	cap = fl->open_cap;
	/* keep the ring sorted by PSN: a resent lost message may land behind newer ones */
	pos = fl->open_n;
	while (pos > 0) {
		uint32_t prev = fl->open[(fl->open_head + pos - 1) % cap];

		if (roce_psn_diff(prev, end) < 0)
			break;
		if (prev == end)
			return;		/* already open */
		pos--;
	}
	for (i = fl->open_n; i > pos; i--)
		fl->open[(fl->open_head + i) % cap] = fl->open[(fl->open_head + i - 1) % cap];
	fl->open[(fl->open_head + pos) % cap] = end;
	fl->open_n++;
}

/* A response with PSN @p psn answers every message ending before it (and at it if @p incl). */
static void open_answer(struct flow *fl, uint32_t psn, bool incl)
{
	while (fl->open_n > 0) {
		int32_t d = roce_psn_diff(fl->open[fl->open_head], psn);

		if (d > 0 || (d == 0 && !incl))
			break;
		fl->open_head = (fl->open_head + 1) % fl->open_cap;
		fl->open_n--;
	}
}

/*
 * The flow whose requests @p fl's responses answer: the reverse direction (the responder's
 * frames carry the requester's QPN, so the QPNs differ), RC, with the PSN in its request range,
 * and one no other response flow has claimed if there is such a one (QPs between the same two
 * hosts with the same PSNs, as perftest -q makes, would otherwise all pair with one).
 * Looked for again only when new flows have appeared, never per frame.
 */
static struct flow *find_peer(struct roce_summary *s, struct flow *fl, uint32_t psn)
{
	struct flow *best = NULL;
	bool best_taken = false;
	int32_t best_d = 0;

	if (fl->peer >= 0)
		return &s->flows[fl->peer];
	if (fl->peer_tried == s->nflows)
		return NULL;
	fl->peer_tried = s->nflows;
	for (uint32_t i = 0; i < s->nflows; i++) {
		struct flow *c = &s->flows[i];
		int32_t from_first, to_next;
		bool taken;

		if (c == fl || !c->track_open || !c->req.started || c->key.ip_ver != fl->key.ip_ver ||
		    memcmp(c->key.src, fl->key.dst, 16) != 0 || memcmp(c->key.dst, fl->key.src, 16) != 0)
			continue;
		from_first = roce_psn_diff(psn, c->req.first);
		to_next = roce_psn_diff(c->req.next, psn);
		if (from_first < 0 || to_next < 0)
			continue;
		taken = c->peer >= 0 && &s->flows[c->peer] != fl;
		if (best == NULL || (best_taken && !taken) ||
		    (best_taken == taken && to_next < best_d)) {
			best = c;
			best_taken = taken;
			best_d = to_next;
		}
	}
	if (best != NULL) {
		fl->peer = (int32_t)(best - s->flows);
		if (best->peer < 0)
			best->peer = (int32_t)(fl - s->flows);
	}
	return best;
}

/* ---- frames ---- */

/* A flow's transport by an opcode of it; a CNP says none (it names the QP it throttles). */
static const char *flow_type(uint32_t mask)
{
	return mask & ROCE_F_RC ? "RC" : mask & ROCE_F_UC ? "UC" : mask & ROCE_F_UD ? "UD" :
	       mask & ROCE_F_XRC ? "XRC" : mask & ROCE_F_RD ? "RD" : "CNP";
}

/*
 * A frame a snaplen cut inside its extended headers (dissect's capture parse): its BTH is
 * whole, their fields unknown.
 */
static bool ext_cut(const struct roce_pkt *pkt)
{
	return pkt->err == ROCE_WERR_TRUNCATED && pkt->truncated;
}

static struct flow *flow_get(struct roce_summary *s, const struct roce_pkt *pkt, uint32_t mask)
{
	struct flow_key k;
	uint32_t *slot;
	struct flow *fl;

	memset(&k, 0, sizeof(k));
	k.ip_ver = pkt->ip_ver;
	k.qpn = pkt->dqpn;
	memcpy(k.src, pkt->src.b, 16);
	memcpy(k.dst, pkt->dst.b, 16);
	slot = ih_find(&s->fh, &k, s->flows, sizeof(*s->flows));
	if (*slot != 0)
		return &s->flows[*slot - 1];

	if (s->nflows == s->flows_cap) {
		uint32_t cap = s->flows_cap ? s->flows_cap * 2 : 16;
		struct flow *n = realloc(s->flows, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		s->flows = n;
		s->flows_cap = cap;
	}
	fl = &s->flows[s->nflows];
	memset(fl, 0, sizeof(*fl));
	fl->key = k;
	fl->peer = -1;
	fl->st.ip_ver = pkt->ip_ver;
	fl->st.src = pkt->src;
	fl->st.dst = pkt->dst;
	fl->st.qpn = pkt->dqpn;
	fl->st.type = flow_type(mask);
	fl->track_open = (mask & (ROCE_F_RC | ROCE_F_XRC)) != 0;
	*slot = ++s->nflows;
	s->fh.used++;
	if (ih_grow(&s->fh, s->flows, sizeof(*s->flows)) != 0)
		return NULL;	/* table still valid at its old size: the flow stays counted */
	return &s->flows[s->nflows - 1];
}

/* A flow first seen by a CNP gets its type from its first other frame (and RC its ring). */
static void flow_set_type(struct flow *fl, uint32_t mask)
{
	if (strcmp(fl->st.type, "CNP") != 0 || (mask & ROCE_F_CNP))
		return;
	fl->st.type = flow_type(mask);
	fl->track_open = (mask & (ROCE_F_RC | ROCE_F_XRC)) != 0;
}

static void account_nak(struct flow *fl, uint8_t syndrome)
{
	switch (roce_aeth_kind(syndrome)) {
	case ROCE_AETH_RNR_NAK:
		fl->st.nak[ROCE_SUM_NAK_RNR]++;
		break;
	case ROCE_AETH_NAK:
		switch (syndrome & 0x1f) {
		case ROCE_NAK_PSN_SEQ_ERR:
			fl->st.nak[ROCE_SUM_NAK_SEQ]++;
			break;
		case ROCE_NAK_REM_ACCESS:
			fl->st.nak[ROCE_SUM_NAK_ACCESS]++;
			break;
		case ROCE_NAK_REM_OP_ERR:
			fl->st.nak[ROCE_SUM_NAK_OP]++;
			break;
		case ROCE_NAK_INVALID_REQ:
		case ROCE_NAK_INVALID_RD_REQ:
			fl->st.nak[ROCE_SUM_NAK_INV]++;
			break;
		default:
			fl->st.nak[ROCE_SUM_NAK_RSVD]++;
			break;
		}
		break;
	case ROCE_AETH_RSVD:
		fl->st.nak[ROCE_SUM_NAK_RSVD]++;
		break;
	default:
		break;
	}
}

static void add_request(struct roce_summary *s, struct flow *fl, const struct roce_pkt *pkt,
			uint32_t mask)
{
	uint32_t span = 1, read_len = 0;
	enum psn_class c;

	if (mask & (ROCE_F_FIRST | ROCE_F_MIDDLE) && !(mask & ROCE_F_LAST) && pkt->payload_len >= PMTU_MIN)
		s->pmtu = pkt->payload_len;	/* IBA 9.7.3: FIRST and MIDDLE carry exactly the PMTU */
	if ((mask & ROCE_F_READ) && ext_cut(pkt)) {
		span = 0;	/* its RETH was not captured: whatever it spans */
		read_len = READ_LEN_UNKNOWN;
	} else if ((mask & ROCE_F_READ) && pkt->reth.dmalen == 0) {
		span = 1;	/* one empty response */
	} else if (mask & ROCE_F_READ) {
		span = s->pmtu != 0 ? div_up(pkt->reth.dmalen, s->pmtu) : 0;
		read_len = pkt->reth.dmalen;
	}
	/*
	 * UD: many source QPs may send to one QPN, each with its own PSNs; RD: PSNs are an EE
	 * context's, shared by QPs. No gaps then.
	 */
	c = stream_add(s, fl, &fl->req, pkt->psn, span, read_len, !(mask & (ROCE_F_UD | ROCE_F_RD)),
		       true);
	if (c == PSN_DUP) {
		fl->st.retrans++;
		return;
	}
	fl->st.goodput_payload += pkt->payload_len;
	if (fl->track_open && (mask & ROCE_F_LAST)) {
		uint32_t n = span != 0 ? span : 1;

		open_push(fl, (pkt->psn + n - 1) & ROCE_PSN_MASK);
	}
}

static void add_response(struct roce_summary *s, struct flow *fl, const struct roce_pkt *pkt,
			 uint32_t mask)
{
	struct flow *req;
	bool incl = true;
	enum psn_class c;

	if ((mask & ROCE_F_AETH) && !ext_cut(pkt))
		account_nak(fl, pkt->aeth.syndrome);
	if (mask & ROCE_F_READ) {
		if (mask & (ROCE_F_FIRST | ROCE_F_MIDDLE) && !(mask & ROCE_F_LAST) &&
		    pkt->payload_len >= PMTU_MIN)
			s->pmtu = pkt->payload_len;
		c = stream_add(s, fl, &fl->resp, pkt->psn, 1, 0, false, true);
		if (c == PSN_DUP)
			fl->st.retrans++;
		else
			fl->st.goodput_payload += pkt->payload_len;
		incl = (mask & ROCE_F_LAST) != 0;
	} else {
		/*
		 * ACKs coalesce and repeat, and a NAK carries the PSN a READ response will reuse:
		 * they widen the range but are never a gap, a retransmission, or "seen"
		 */
		stream_add(s, fl, &fl->resp, pkt->psn, 1, 0, false, false);
		if (ext_cut(pkt) && !(mask & ROCE_F_ATMACK))
			incl = false;	/* an AETH not captured: at least what came before is answered */
		else if (mask & ROCE_F_AETH) {
			enum roce_aeth_kind k = roce_aeth_kind(pkt->aeth.syndrome);

			/* IBA 9.7.5.1.2: sequence-error and RNR NAKs answer only the PSNs before */
			if (k == ROCE_AETH_RNR_NAK ||
			    (k == ROCE_AETH_NAK && (pkt->aeth.syndrome & 0x1f) == ROCE_NAK_PSN_SEQ_ERR))
				incl = false;
		}
	}
	req = find_peer(s, fl, pkt->psn);
	if (req != NULL)
		open_answer(req, pkt->psn, incl);
}

static int add_pause(struct roce_summary *s, const struct roce_pkt *pkt, uint64_t t)
{
	struct flow_key k;
	struct pause_port *pp;
	uint32_t *slot;

	memset(&k, 0, sizeof(k));
	k.ip_ver = KEY_PORT;
	memcpy(k.src, pkt->smac, 6);
	slot = ih_find(&s->ph, &k, s->ports, sizeof(*s->ports));
	if (*slot == 0) {
		if (s->nports == s->ports_cap) {
			uint32_t cap = s->ports_cap ? s->ports_cap * 2 : 8;
			struct pause_port *n = realloc(s->ports, cap * sizeof(*n));

			if (n == NULL)
				return -ENOMEM;
			s->ports = n;
			s->ports_cap = cap;
		}
		memset(&s->ports[s->nports], 0, sizeof(*s->ports));
		memcpy(&s->ports[s->nports].key, &k, sizeof(k));
		*slot = ++s->nports;
		s->ph.used++;
		if (ih_grow(&s->ph, s->ports, sizeof(*s->ports)) != 0)
			return -ENOMEM;
	}
	pp = &s->ports[*slot - 1];
	for (int i = 0; i < 9; i++) {
		uint16_t q;
		uint64_t dur;

		if (i < 8 && (pkt->kind != ROCE_KIND_PFC || !(pkt->pfc_cev & (1u << i))))
			continue;
		if (i == 8 && pkt->kind != ROCE_KIND_PAUSE)
			continue;
		q = pkt->quanta[i == 8 ? 0 : i];
		/* IEEE 802.1Qbb 36.1.3.1: one quantum is 512 bit times; a new frame reloads the timer */
		dur = (uint64_t)((double)q * 512.0 * 1e9 / (double)s->link_bps);
		if (i < 8) {
			s->pause.pfc_frames[i]++;
			if (q == 0)
				s->pause.pfc_xon[i]++;
		} else {
			s->pause.pause_frames++;
		}
		if (pp->until[i] > t) {
			if (i < 8)
				s->pause.paused_ns[i] -= pp->until[i] - t;
			else
				s->pause.pause_ns -= pp->until[i] - t;
			pp->paused_ns[i] -= pp->until[i] - t;
		}
		pp->until[i] = t + dur;
		if (i < 8)
			s->pause.paused_ns[i] += dur;
		else
			s->pause.pause_ns += dur;
		pp->frames[i]++;
		pp->paused_ns[i] += dur;
	}
	return 0;
}

/* A frame of @p fl marked CE at the hop whose TTL is @p ttl. */
static void count_ce(struct flow *fl, uint8_t ttl)
{
	uint8_t i;

	for (i = 0; i < fl->nce_hops; i++)
		if (fl->ce_hop[i].ttl == ttl)
			break;
	if (i == CE_HOPS)
		return;		/* a path longer than any data centre's: its far hops are left out */
	if (i == fl->nce_hops) {
		fl->ce_hop[i].ttl = ttl;
		fl->ce_hop[i].ce = 0;
		fl->nce_hops++;
	}
	fl->ce_hop[i].ce++;
}

/* ---- CM connections ---- */

static void cm_key(struct flow_key *k, uint8_t ip_ver, const struct roce_ip_addr *addr, uint32_t id)
{
	memset(k, 0, sizeof(*k));
	k->ip_ver = ip_ver;
	k->qpn = id;
	memcpy(k->src, addr->b, 16);
}

static struct cm_conn *cm_find(struct roce_summary *s, const struct flow_key *k)
{
	uint32_t *slot = ih_find(&s->ch, k, s->conns, sizeof(*s->conns));

	return *slot != 0 ? &s->conns[*slot - 1] : NULL;
}

static struct cm_conn *cm_new(struct roce_summary *s, const struct flow_key *k)
{
	struct cm_conn *c;

	if (s->nconns == s->conns_cap) {
		uint32_t cap = s->conns_cap ? s->conns_cap * 2 : 8;
		struct cm_conn *n = realloc(s->conns, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		s->conns = n;
		s->conns_cap = cap;
	}
	c = &s->conns[s->nconns];
	memset(c, 0, sizeof(*c));
	c->key = *k;
	*ih_find(&s->ch, k, s->conns, sizeof(*s->conns)) = ++s->nconns;
	s->ch.used++;
	if (ih_grow(&s->ch, s->conns, sizeof(*s->conns)) != 0)
		return NULL;	/* table still valid at its old size: the connection stays */
	return c;
}

/* The summary's message index of a CM attribute; -1 for one it does not time. */
static int cm_msg(uint16_t attr_id)
{
	static const int8_t msg[] = {
		[ROCE_CM_ATTR_REQ] = ROCE_SUM_CM_REQ + 1, [ROCE_CM_ATTR_MRA] = ROCE_SUM_CM_MRA + 1,
		[ROCE_CM_ATTR_REJ] = ROCE_SUM_CM_REJ + 1, [ROCE_CM_ATTR_REP] = ROCE_SUM_CM_REP + 1,
		[ROCE_CM_ATTR_RTU] = ROCE_SUM_CM_RTU + 1, [ROCE_CM_ATTR_DREQ] = ROCE_SUM_CM_DREQ + 1,
		[ROCE_CM_ATTR_DREP] = ROCE_SUM_CM_DREP + 1,
	};

	return attr_id < ROCE_DIM(msg) ? msg[attr_id] - 1 : -1;
}

/*
 * A CM message: the connection of its sender's ID (side 0 or, once the REP named it, side 1)
 * or of the ID it answers (the receiver's); a message of neither opens a connection.
 */
static void cm_add(struct roce_summary *s, const struct roce_pkt *pkt, uint64_t t)
{
	struct roce_mad m;
	struct flow_key mine, theirs;
	struct cm_conn *c;
	int msg, side;

	if (roce_pkt_mad(pkt, &m) != 0 || m.mgmt_class != ROCE_MAD_CLASS_CM ||
	    (msg = cm_msg(m.attr_id)) < 0 || !(m.have & ROCE_MAD_HAVE_LCID))
		return;
	cm_key(&mine, pkt->ip_ver, &pkt->src, m.lcid);
	cm_key(&theirs, pkt->ip_ver, &pkt->dst, m.rcid);
	if (msg != ROCE_SUM_CM_REQ && m.have & ROCE_MAD_HAVE_RCID && m.rcid != 0 &&
	    (c = cm_find(s, &theirs)) != NULL) {
		side = 1;	/* an answer to side 0 */
	} else if ((c = cm_find(s, &mine)) != NULL) {
		side = 0;
	} else {
		/*
		 * Side 0 is the side the connection is found by: the REQ's sender, or, for a
		 * capture that missed the REQ, the receiver of a message that names it
		 * (both sides' later messages name its ID), else the sender.
		 */
		side = msg != ROCE_SUM_CM_REQ && m.have & ROCE_MAD_HAVE_RCID && m.rcid != 0;
		c = cm_new(s, side ? &theirs : &mine);
		if (c == NULL) {
			s->cm_lost++;
			return;
		}
		c->st.ip_ver = pkt->ip_ver;
		c->st.addr[0] = side ? pkt->dst : pkt->src;
		c->st.addr[1] = side ? pkt->src : pkt->dst;
		c->st.id[0] = side ? m.rcid : m.lcid;
	}
	/* a side-1 message names side 1's ID: the REP, or any of a capture without it */
	if (side == 1 && m.lcid != 0)
		c->st.id[1] = m.lcid;
	if (msg == ROCE_SUM_CM_REQ) {
		c->st.has_req = true;
		c->st.service_id = m.service_id;
	}
	if ((msg == ROCE_SUM_CM_REQ || msg == ROCE_SUM_CM_REP) && m.have & ROCE_MAD_HAVE_PSN) {
		c->st.qpn[side] = m.qpn;
		c->st.psn[side] = m.start_psn;
	}
	if (msg == ROCE_SUM_CM_REJ && c->st.count[msg] == 0 && m.have & ROCE_MAD_HAVE_REJ)
		c->st.rej_reason = m.reason;
	if (c->st.count[msg]++ == 0)
		c->st.first_ns[msg] = t;
}

unsigned int roce_summary_nconns(const struct roce_summary *s)
{
	return s->nconns;
}

const struct roce_cm_conn_stats *roce_summary_conn(const struct roce_summary *s, unsigned int i)
{
	return i < s->nconns ? &s->conns[i].st : NULL;
}

int roce_summary_add(struct roce_summary *s, const struct roce_pcap_frame *f,
		     const struct roce_pkt *pkt)
{
	const struct roce_opcode_info *info;
	struct flow *fl;

	if (!s->any) {
		s->any = true;
		s->first_ns = f->ts_ns;
	}
	s->last_ns = ROCE_MAX(s->last_ns, f->ts_ns);
	s->frames++;
	if (pkt->kind == ROCE_KIND_PFC || pkt->kind == ROCE_KIND_PAUSE) {
		if (pkt->err != ROCE_WERR_OK) {
			s->bad_frames++;
			return 0;
		}
		if (pkt->kind == ROCE_KIND_PFC)
			s->pfc_frames++;
		return add_pause(s, pkt, f->ts_ns);
	}
	if (pkt->kind == ROCE_KIND_OTHER) {
		s->other_frames++;
		return 0;
	}
	/* a flow needs the BTH; the opcode's headers too for anything past counting */
	if (pkt->bth_off == 0 || pkt->err == ROCE_WERR_UNKNOWN_OPCODE ||
	    pkt->err == ROCE_WERR_BAD_TVER || pkt->err == ROCE_WERR_BAD_UDP_LEN) {
		s->bad_frames++;
		return 0;
	}
	info = &roce_opcode[pkt->opcode];
	fl = flow_get(s, pkt, info->mask);
	if (fl == NULL) {
		s->bad_frames++;
		return -ENOMEM;
	}
	flow_set_type(fl, info->mask);
	/*
	 * A capture of several links holds a frame once per tapped hop, each time with a TTL one
	 * lower: a flow is counted at the hop where its first frame was seen, copies at others are
	 * left out (they are not retransmissions, and they are the same bytes).
	 */
	if (pkt->ecn == 3)
		count_ce(fl, pkt->ttl);
	if (fl->st.frames == 0 && fl->st.hop_copies == 0)
		fl->ttl = pkt->ttl;
	else if (pkt->ttl != fl->ttl) {
		fl->st.hop_copies++;
		s->hop_copies++;
		return 0;
	}
	if (fl->st.frames == 0)
		fl->st.first_ns = f->ts_ns;
	fl->st.frames++;
	fl->st.bytes += f->wirelen;
	fl->st.last_ns = f->ts_ns;
	if (pkt->err == ROCE_WERR_ICRC_MISMATCH) {
		fl->st.icrc_err++;	/* the receiver drops it: no PSN accounting */
		return 0;
	}
	if (pkt->err != ROCE_WERR_OK && !ext_cut(pkt)) {
		fl->st.errors++;
		return 0;
	}
	fl->st.payload += pkt->payload_len;
	if (pkt->dqpn == ROCE_GSI_QPN)
		cm_add(s, pkt, f->ts_ns);
	if (info->mask & ROCE_F_CNP)
		fl->st.cnp++;
	else if (info->mask & ROCE_F_REQ)
		add_request(s, fl, pkt, info->mask);
	else if (info->mask & ROCE_F_RESP)
		add_response(s, fl, pkt, info->mask);
	return 0;
}

/* ---- results ---- */

void roce_summary_set_file(struct roce_summary *s, uint64_t frames, uint64_t first_ns)
{
	if (frames == 0)
		return;
	s->file_frames = frames;
	s->first_ns = first_ns;
	s->any = true;
}

unsigned int roce_summary_nflows(const struct roce_summary *s)
{
	return s->nflows;
}

static void finish_flow(struct flow *fl)
{
	const struct psn_stream *ps = fl->req.started ? &fl->req : &fl->resp;

	fl->st.has_psn = ps->started;
	fl->st.psn_first = ps->first;
	fl->st.psn_last = (ps->next - 1) & ROCE_PSN_MASK;
	fl->st.open = fl->open_n + fl->open_lost;
	/*
	 * CE stays set once a switch sets it: the hop that holds the most marks is the one
	 * nearest the receiver, and its count is the flow's (each packet once, as it arrives)
	 */
	fl->st.ecn_ce = 0;
	for (uint8_t i = 0; i < fl->nce_hops; i++)
		fl->st.ecn_ce = ROCE_MAX(fl->st.ecn_ce, fl->ce_hop[i].ce);
}

const struct roce_flow_stats *roce_summary_flow(struct roce_summary *s, unsigned int i)
{
	if (i >= s->nflows)
		return NULL;
	finish_flow(&s->flows[i]);
	return &s->flows[i].st;
}

const struct roce_flow_stats *roce_summary_totals(struct roce_summary *s)
{
	struct roce_flow_stats *t = &s->totals;

	memset(t, 0, sizeof(*t));
	t->type = "all";
	for (uint32_t i = 0; i < s->nflows; i++) {
		const struct roce_flow_stats *f = roce_summary_flow(s, i);

		if (t->frames == 0 || f->first_ns < t->first_ns)
			t->first_ns = f->first_ns;
		if (f->last_ns > t->last_ns)
			t->last_ns = f->last_ns;
		t->frames += f->frames;
		t->bytes += f->bytes;
		t->payload += f->payload;
		t->goodput_payload += f->goodput_payload;
		t->psn_gaps += f->psn_gaps;
		t->psn_missing += f->psn_missing;
		t->retrans += f->retrans;
		for (int k = 0; k < ROCE_SUM_NAK_NUM; k++)
			t->nak[k] += f->nak[k];
		t->ecn_ce += f->ecn_ce;
		t->cnp += f->cnp;
		t->icrc_err += f->icrc_err;
		t->errors += f->errors;
		t->open += f->open;
		t->hop_copies += f->hop_copies;
	}
	return t;
}

const struct roce_pause_stats *roce_summary_pause(const struct roce_summary *s)
{
	return &s->pause;
}

/* Payload bits per second of first copies between the first and the last frame. */
static double goodput_bps(const struct roce_flow_stats *f)
{
	if (f->last_ns <= f->first_ns)
		return 0.0;
	return (double)f->goodput_payload * 8e9 / (double)(f->last_ns - f->first_ns);
}

static void print_row(FILE *out, const struct roce_summary *s, const struct roce_flow_stats *f)
{
	char src[64] = "*", dst[64] = "*", psn[32] = "-";

	if (f->ip_ver != 0) {
		roce_ip_ntop(&f->src, f->ip_ver, src, sizeof(src));
		roce_ip_ntop(&f->dst, f->ip_ver, dst, sizeof(dst));
	}
	if (f->has_psn)
		snprintf(psn, sizeof(psn), "%u-%u", f->psn_first, f->psn_last);
	fprintf(out, "%-4s %15s %15s %8s %7llu %10llu %10llu %11.6f %11.6f %9.3f %17s %5llu %5llu "
		"%4llu %4llu %4llu %4llu %4llu %5llu %5llu %4llu %5llu\n",
		f->type, src, dst, f->ip_ver != 0 ? "" : "*", (unsigned long long)f->frames,
		(unsigned long long)f->bytes, (unsigned long long)f->payload,
		f->frames ? (double)(f->first_ns - s->first_ns) / 1e9 : 0.0,	/* no flow: 0 */
		f->frames ? (double)(f->last_ns - s->first_ns) / 1e9 : 0.0,
		goodput_bps(f) / 1e6, psn, (unsigned long long)f->psn_gaps,
		(unsigned long long)f->retrans, (unsigned long long)f->nak[ROCE_SUM_NAK_SEQ],
		(unsigned long long)f->nak[ROCE_SUM_NAK_RNR],
		(unsigned long long)f->nak[ROCE_SUM_NAK_ACCESS],
		(unsigned long long)f->nak[ROCE_SUM_NAK_OP],
		(unsigned long long)f->nak[ROCE_SUM_NAK_INV], (unsigned long long)f->ecn_ce,
		(unsigned long long)f->cnp, (unsigned long long)f->icrc_err,
		(unsigned long long)f->open);
}

/*
 * The end of a pause line: with one sending port, nothing more; with several, their times add
 * up past the capture's length, so each port is listed with its share of that length.
 */
static void print_pause_ports(const struct roce_summary *s, FILE *out, int prio)
{
	double span = (double)(s->last_ns - s->first_ns);
	uint32_t nports = 0, shown = 0;

	for (uint32_t k = 0; k < s->nports; k++)
		nports += s->ports[k].frames[prio] != 0;
	if (nports <= 1) {
		fputc('\n', out);
		return;
	}
	fprintf(out, ", summed over %u sending ports:\n", nports);
	for (uint32_t k = 0; k < s->nports && shown < PAUSE_PORTS_SHOWN; k++) {
		const struct pause_port *pp = &s->ports[k];
		const uint8_t *m = pp->key.src;

		if (pp->frames[prio] == 0)
			continue;
		fprintf(out, "    from %02x:%02x:%02x:%02x:%02x:%02x: %llu frames, paused %.6f s",
			m[0], m[1], m[2], m[3], m[4], m[5], (unsigned long long)pp->frames[prio],
			(double)pp->paused_ns[prio] / 1e9);
		if (span > 0)
			fprintf(out, " (%.0f%% of the capture)",
				100.0 * ROCE_MIN((double)pp->paused_ns[prio], span) / span);
		fputc('\n', out);
		shown++;
	}
	if (nports > shown)
		fprintf(out, "    ... %u more ports\n", nports - shown);
}

#define STALL_MIN_NS 1000000	/* shorter silences are a capture's ordinary gaps */

/*
 * Flows that went quiet with messages unanswered, for the second half of the capture and at
 * least STALL_MIN_NS: goodput_M is their rate while they ran, so say that they stopped. A
 * deadlock, a dead path or a peer gone looks like this; a capture that just ends mid-transfer
 * does not (its flows send to the end), nor one retrying (it resends).
 */
static void print_stalled(struct roce_summary *s, FILE *out)
{
	uint64_t span = s->last_ns - s->first_ns, idle = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nflows; i++) {
		const struct roce_flow_stats *f = roce_summary_flow(s, i);

		if (f->open == 0 || f->frames == 0 || s->last_ns - f->last_ns < span / 2 ||
		    s->last_ns - f->last_ns < STALL_MIN_NS)
			continue;
		n++;
		idle = ROCE_MAX(idle, s->last_ns - f->last_ns);
	}
	if (n != 0)
		fprintf(out, "stalled: %u flow%s with unanswered messages fell silent for the second "
			"half of the capture (the longest for its last %.6f s; goodput_M is the rate "
			"while running): a PFC deadlock, a dead path or a peer gone looks like this\n",
			n, n == 1 ? "" : "s", (double)idle / 1e9);
}

static const char *const cm_msg_name[ROCE_SUM_CM_NUM] = {
	[ROCE_SUM_CM_REQ] = "REQ", [ROCE_SUM_CM_MRA] = "MRA", [ROCE_SUM_CM_REJ] = "REJ",
	[ROCE_SUM_CM_REP] = "REP", [ROCE_SUM_CM_RTU] = "RTU", [ROCE_SUM_CM_DREQ] = "DREQ",
	[ROCE_SUM_CM_DREP] = "DREP",
};

/* What became of a connection, from the messages seen. */
static const char *cm_state(const struct roce_cm_conn_stats *c)
{
	if (c->count[ROCE_SUM_CM_REJ] != 0)
		return "rejected";
	if (c->count[ROCE_SUM_CM_DREP] != 0)
		return "closed";
	if (c->count[ROCE_SUM_CM_DREQ] != 0)
		return "closing";
	if (c->count[ROCE_SUM_CM_RTU] != 0)
		return "established";
	if (c->count[ROCE_SUM_CM_REP] != 0)
		return "no RTU";
	return c->has_req ? "no REP" : "set-up not captured";
}

/*
 * "cm connections: N", then per connection its two sides (address and communication ID, QPN
 * and starting PSN when the REQ or REP gave them), the service ID, what became of it, and the
 * time of each message seen, in seconds since the file's first frame (xN: N copies).
 */
static void print_cm(const struct roce_summary *s, FILE *out)
{
	if (s->nconns == 0)
		return;
	fprintf(out, "cm connections: %u\n", s->nconns);
	for (uint32_t i = 0; i < s->nconns; i++) {
		const struct roce_cm_conn_stats *c = &s->conns[i].st;
		char a[64], b[64];
		uint16_t ps, port;

		int order[ROCE_SUM_CM_NUM];

		/* the messages in the order of their first copies (insertion sort of 7) */
		for (int k = 0; k < ROCE_SUM_CM_NUM; k++) {
			int j = k;

			for (; j > 0 && c->first_ns[order[j - 1]] > c->first_ns[k]; j--)
				order[j] = order[j - 1];
			order[j] = k;
		}
		roce_ip_ntop(&c->addr[0], c->ip_ver, a, sizeof(a));
		roce_ip_ntop(&c->addr[1], c->ip_ver, b, sizeof(b));
		fprintf(out, "  %s id 0x%08x", a, c->id[0]);
		if (c->qpn[0] != 0 || c->psn[0] != 0)
			fprintf(out, " qpn 0x%06x psn %u", c->qpn[0], c->psn[0]);
		fprintf(out, " %s %s id 0x%08x", c->has_req ? ">" : "-", b, c->id[1]);
		if (c->qpn[1] != 0 || c->psn[1] != 0)
			fprintf(out, " qpn 0x%06x psn %u", c->qpn[1], c->psn[1]);
		if (c->has_req) {
			fprintf(out, " sid 0x%016llx", (unsigned long long)c->service_id);
			if (roce_cm_sid_ip(c->service_id, &ps, &port)) {
				const char *name = roce_cm_ps_name(ps);

				if (name != NULL)
					fprintf(out, " (%s port %u)", name, port);
				else
					fprintf(out, " (ps 0x%04x port %u)", ps, port);
			}
		}
		fprintf(out, ": %s", cm_state(c));
		if (c->count[ROCE_SUM_CM_REJ] != 0) {
			const char *r = roce_cm_rej_name(c->rej_reason);

			fprintf(out, " %s (%u)", r != NULL ? r : "unknown", c->rej_reason);
		}
		fputc('\n', out);
		fputs("   ", out);
		for (int k = 0; k < ROCE_SUM_CM_NUM; k++) {
			int m = order[k];

			if (c->count[m] == 0)
				continue;
			fprintf(out, " %s %.6f", cm_msg_name[m],
				(double)(c->first_ns[m] - s->first_ns) / 1e9);
			if (c->count[m] > 1)
				fprintf(out, " x%u", c->count[m]);
		}
		fputc('\n', out);
	}
	if (s->cm_lost != 0)
		fprintf(out, "  ... %llu CM messages not counted (out of memory)\n",
			(unsigned long long)s->cm_lost);
}

int roce_summary_print(struct roce_summary *s, FILE *out)
{
	const struct roce_pause_stats *p = &s->pause;
	const struct roce_flow_stats *t;
	bool any_pfc = false;

	fprintf(out, "%-4s %15s %15s %8s %7s %10s %10s %11s %11s %9s %17s %5s %5s %4s %4s %4s %4s %4s "
		"%5s %5s %4s %5s\n", "type", "src", "dst", "qpn", "frames", "bytes", "payload",
		"first_s", "last_s", "goodput_M", "psn_range", "gaps", "retx", "nseq", "rnr", "nacc",
		"nop", "ninv", "ce", "cnp", "icrc", "open");
	for (uint32_t i = 0; i < s->nflows; i++) {
		const struct roce_flow_stats *f = roce_summary_flow(s, i);
		char src[64], dst[64], psn[32] = "-";

		roce_ip_ntop(&f->src, f->ip_ver, src, sizeof(src));
		roce_ip_ntop(&f->dst, f->ip_ver, dst, sizeof(dst));
		if (f->has_psn)
			snprintf(psn, sizeof(psn), "%u-%u", f->psn_first, f->psn_last);
		fprintf(out, "%-4s %15s %15s %#8x %7llu %10llu %10llu %11.6f %11.6f %9.3f %17s %5llu "
			"%5llu %4llu %4llu %4llu %4llu %4llu %5llu %5llu %4llu %5llu\n",
			f->type, src, dst, f->qpn, (unsigned long long)f->frames,
			(unsigned long long)f->bytes, (unsigned long long)f->payload,
			(double)(f->first_ns - s->first_ns) / 1e9,
			(double)(f->last_ns - s->first_ns) / 1e9, goodput_bps(f) / 1e6, psn,
			(unsigned long long)f->psn_gaps, (unsigned long long)f->retrans,
			(unsigned long long)f->nak[ROCE_SUM_NAK_SEQ],
			(unsigned long long)f->nak[ROCE_SUM_NAK_RNR],
			(unsigned long long)f->nak[ROCE_SUM_NAK_ACCESS],
			(unsigned long long)f->nak[ROCE_SUM_NAK_OP],
			(unsigned long long)f->nak[ROCE_SUM_NAK_INV], (unsigned long long)f->ecn_ce,
			(unsigned long long)f->cnp, (unsigned long long)f->icrc_err,
			(unsigned long long)f->open);
	}
	t = roce_summary_totals(s);
	print_row(out, s, t);
	fprintf(out, "frames: %llu total, ", (unsigned long long)ROCE_MAX(s->file_frames, s->frames));
	if (s->file_frames > s->frames)
		fprintf(out, "%llu left out by the filters, ",
			(unsigned long long)(s->file_frames - s->frames));
	fprintf(out, "%llu RoCE in %u flow%s, %llu PFC, %llu PAUSE, %llu not RoCE, "
		"%llu undecodable, %llu with other faults\n", (unsigned long long)t->frames, s->nflows, s->nflows == 1 ? "" : "s",
		(unsigned long long)s->pfc_frames,
		(unsigned long long)p->pause_frames, (unsigned long long)s->other_frames,
		(unsigned long long)s->bad_frames, (unsigned long long)t->errors);
	print_stalled(s, out);
	if (t->nak[ROCE_SUM_NAK_RSVD] != 0)
		fprintf(out, "AETHs with a reserved syndrome (0x40-0x5f, NAK codes 0x65-0x7f): %llu\n",
			(unsigned long long)t->nak[ROCE_SUM_NAK_RSVD]);
	if (s->hop_copies != 0)
		fprintf(out, "frames seen again at a later hop: %llu (the capture holds several links; "
			"each flow is counted at the hop where it was first seen, by its IP TTL)\n",
			(unsigned long long)s->hop_copies);
	print_cm(s, out);
	for (int i = 0; i < 8; i++)
		any_pfc |= p->pfc_frames[i] != 0;
	if (any_pfc || p->pause_frames != 0) {
		fprintf(out, "pause (quanta at %.0f Gb/s):\n", (double)s->link_bps / 1e9);
		for (int i = 0; i < 8; i++) {
			if (p->pfc_frames[i] == 0)
				continue;
			fprintf(out, "  pfc priority %d: %llu frames (%llu resume), paused %.6f s",
				i, (unsigned long long)p->pfc_frames[i],
				(unsigned long long)p->pfc_xon[i], (double)p->paused_ns[i] / 1e9);
			print_pause_ports(s, out, i);
		}
		if (p->pause_frames != 0) {
			fprintf(out, "  802.3x pause: %llu frames, paused %.6f s",
				(unsigned long long)p->pause_frames, (double)p->pause_ns / 1e9);
			print_pause_ports(s, out, 8);
		}
	}
	return ferror(out) ? -EIO : 0;
}
