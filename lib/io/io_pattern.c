/* A capture's packet pattern: its frames grouped into messages per flow, and two compared. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "roce_common.h"
#include "roce_io.h"
#include "roce_pattern.h"
#include "roce_wire.h"

#define FLOWS_MAX 4096u		/* flows kept apart; frames of more are counted as other */
#define READ_SPAN 65536		/* PSNs a READ's responses may run past its request (8 MiB
				 * at a 256-byte MTU is 32768 packets) */
#define SUMMARY_BPS 100000000000ull /* the summary's link speed: only its pause time uses it */

/* The messages of one direction of a flow, requests or responses. */
struct stream {
	bool started;			/* a packet has been seen */
	uint32_t last_psn;		/* the PSN of the newest packet */
	int64_t last_off;		/* its offset from the first */
	int64_t next;			/* one past the highest offset seen: below it, a resend */
	struct roce_pattern_msg *msg;	/* the messages, in order */
	uint64_t n, cap;		/* in use, allocated */
	struct roce_pattern_msg cur;	/* the message its packets are building */
	bool open;			/* @cur has a packet */
};

/* An ACK or NAK of a flow (the AETH without data). */
struct ack {
	int64_t psn;			/* its PSN, from the first of the requests it answers */
	uint8_t syndrome;		/* AETH syndrome */
};

/* One flow: the frames of one source, destination and destination QP. */
struct flow {
	uint8_t ip_ver;			/* 4 or 6 */
	struct roce_ip_addr src, dst;	/* addresses, as in struct roce_pkt */
	uint32_t qpn;			/* destination QP */
	struct stream req;		/* requests the flow carries */
	struct stream resp;		/* READ responses and atomic ACKs it carries */
	struct ack *ack;		/* ACKs and NAKs it carries, in order */
	uint64_t nack, ack_cap;		/* in use, allocated */
	int32_t peer;			/* the flow whose requests its responses answer; -1 */
	uint32_t peer_tried;		/* flows there were when it was last looked for */
	bool answered;			/* another flow's responses answer its requests */
};

struct roce_pattern {
	struct roce_summary *sum;	/* the dissector's flow summary of the same frames */
	struct flow *flows;		/* in order of first appearance */
	uint32_t nflows, cap;		/* in use, allocated */
	uint32_t last;			/* the flow of the last frame, tried first */
	struct roce_pattern_side side;	/* counters, completed by pattern_finish() */
	bool finished;			/* open messages closed, ACKs counted */
};

struct roce_pattern *roce_pattern_create(void)
{
	struct roce_pattern *p = calloc(1, sizeof(*p));

	if (p == NULL)
		goto err;
	p->sum = roce_summary_create(SUMMARY_BPS);
	if (p->sum == NULL)
		goto err_free;
	return p;

err_free:
	free(p);
err:
	errno = ENOMEM;
	return NULL;
}

void roce_pattern_destroy(struct roce_pattern *p)
{
	if (p == NULL)
		return;
	for (uint32_t i = 0; i < p->nflows; i++) {
		free(p->flows[i].req.msg);
		free(p->flows[i].resp.msg);
		free(p->flows[i].ack);
	}
	free(p->flows);
	roce_summary_destroy(p->sum);
	free(p);
}

/* Room for one more element in an array that doubles. */
static int grow(void **arr, uint64_t n, uint64_t *cap, size_t elem)
{
	uint64_t c = *cap ? *cap * 2 : 64;
	void *a;

	if (n < *cap)
		return 0;
	a = realloc(*arr, c * elem);
	if (a == NULL)
		return -ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

static bool same_flow(const struct flow *fl, const struct roce_pkt *pkt)
{
	return fl->qpn == pkt->dqpn && fl->ip_ver == pkt->ip_ver &&
	       memcmp(&fl->src, &pkt->src, sizeof(fl->src)) == 0 &&
	       memcmp(&fl->dst, &pkt->dst, sizeof(fl->dst)) == 0;
}

/* The frame's flow, made if new; NULL when there is no room. Few flows: a search will do. */
static struct flow *flow_get(struct roce_pattern *p, const struct roce_pkt *pkt)
{
	struct flow *fl;
	uint64_t cap = p->cap;

	if (p->last < p->nflows && same_flow(&p->flows[p->last], pkt))
		return &p->flows[p->last];
	for (uint32_t i = 0; i < p->nflows; i++)
		if (same_flow(&p->flows[i], pkt)) {
			p->last = i;
			return &p->flows[i];
		}
	if (p->nflows == FLOWS_MAX ||
	    grow((void **)&p->flows, p->nflows, &cap, sizeof(*p->flows)) != 0)
		return NULL;
	p->cap = (uint32_t)cap;
	fl = &p->flows[p->nflows];
	memset(fl, 0, sizeof(*fl));
	fl->ip_ver = pkt->ip_ver;
	fl->src = pkt->src;
	fl->dst = pkt->dst;
	fl->qpn = pkt->dqpn;
	fl->peer = -1;
	p->last = p->nflows++;
	return fl;
}

/* @p psn as an offset from the first PSN of @p st, near its newest (PSNs wrap at 2^24). */
static int64_t psn_off(const struct stream *st, uint32_t psn)
{
	return st->last_off + roce_psn_diff(psn, st->last_psn);
}

static int stream_close(struct stream *st, bool whole)
{
	st->open = false;
	st->cur.whole = whole;
	if (grow((void **)&st->msg, st->n, &st->cap, sizeof(*st->msg)) != 0)
		return -ENOMEM;
	st->msg[st->n++] = st->cur;
	return 0;
}

/* A packet of a message: FIRST (or ONLY) starts one, LAST (or ONLY) ends it. */
static int stream_packet(struct stream *st, const struct roce_pkt *pkt, uint32_t mask, int64_t off,
			 uint32_t size)
{
	int rc;

	/* a MIDDLE or LAST with no FIRST before it (lost, or before the capture) starts one too */
	if ((mask & ROCE_F_FIRST) || !st->open) {
		if (st->open && (rc = stream_close(st, false)) != 0)
			return rc;
		memset(&st->cur, 0, sizeof(st->cur));
		st->cur.op = pkt->opcode;
		st->cur.psn = off;
		st->open = true;
	}
	st->cur.pkts++;
	st->cur.size += size;
	st->cur.last_op = pkt->opcode;
	st->cur.ackreq = pkt->ackreq;
	return (mask & ROCE_F_LAST) ? stream_close(st, true) : 0;
}

static int add_request(struct flow *fl, const struct roce_pkt *pkt, uint32_t mask)
{
	struct stream *st = &fl->req;
	int64_t off;

	if (!st->started) {
		st->started = true;
		st->last_psn = pkt->psn;
	}
	off = psn_off(st, pkt->psn);
	if (off < st->next)
		return 0;	/* sent again: the message is its first copy (the summary counts it) */
	st->last_psn = pkt->psn;
	st->last_off = off;
	st->next = off + 1;
	/* IBA 9.7.4.1.3: a READ request's RETH asks for its length, it carries none */
	return stream_packet(st, pkt, mask, off, (mask & ROCE_F_READ) ? pkt->reth.dmalen :
			     pkt->payload_len);
}

/*
 * The flow whose requests @p fl's responses answer: the reverse direction (a response carries
 * the requester's QPN), with @p psn in its requests' range, preferring one no other flow
 * answers (perftest -q gives QPs between the same hosts the same PSNs). Looked for again only
 * when flows were added, never per frame.
 */
static struct flow *peer_of(struct roce_pattern *p, struct flow *fl, uint32_t psn)
{
	int32_t best = -1;

	if (fl->peer >= 0)
		return &p->flows[fl->peer];
	if (fl->peer_tried == p->nflows)
		return NULL;
	fl->peer_tried = p->nflows;
	for (uint32_t i = 0; i < p->nflows; i++) {
		const struct flow *c = &p->flows[i];
		int64_t off;

		if (c == fl || !c->req.started || c->ip_ver != fl->ip_ver ||
		    memcmp(&c->src, &fl->dst, sizeof(c->src)) != 0 ||
		    memcmp(&c->dst, &fl->src, sizeof(c->dst)) != 0)
			continue;
		off = psn_off(&c->req, psn);
		if (off < 0 || off >= c->req.next + READ_SPAN)
			continue;
		if (best < 0 || (p->flows[best].answered && !c->answered))
			best = (int32_t)i;
	}
	if (best < 0)
		return NULL;
	fl->peer = best;
	p->flows[best].answered = true;
	return &p->flows[best];
}

static int add_response(struct roce_pattern *p, struct flow *fl, const struct roce_pkt *pkt,
			uint32_t mask)
{
	struct flow *req = peer_of(p, fl, pkt->psn);
	struct stream *st = &fl->resp;
	int64_t off;

	if (req == NULL) {
		p->side.other++;	/* it answers requests the capture does not hold */
		return 0;
	}
	off = psn_off(&req->req, pkt->psn);
	if ((mask & ROCE_F_ACK) && !(mask & ROCE_F_ATOMIC)) {
		if (grow((void **)&fl->ack, fl->nack, &fl->ack_cap, sizeof(*fl->ack)) != 0)
			return -ENOMEM;
		fl->ack[fl->nack++] = (struct ack){ .psn = off, .syndrome = pkt->aeth.syndrome };
		return 0;
	}
	if (st->started && off < st->next)
		return 0;	/* a response sent again */
	st->started = true;
	st->next = off + 1;
	return stream_packet(st, pkt, mask, off, pkt->payload_len);
}

int roce_pattern_add(struct roce_pattern *p, const struct roce_pcap_frame *f,
		     const struct roce_pkt *pkt)
{
	uint32_t mask;
	struct flow *fl;
	int rc;

	if (pkt->kind != ROCE_KIND_ROCEV2 && pkt->kind != ROCE_KIND_ROCEV1)
		return 0;
	p->side.frames++;
	(void)roce_summary_add(p->sum, f, pkt);	/* out of memory: its totals still count */
	/* a message needs the BTH and the opcode's headers (a snaplen leaves them) */
	if (pkt->bth_off == 0 || pkt->err != ROCE_WERR_OK) {
		p->side.other++;
		return 0;
	}
	mask = roce_opcode[pkt->opcode].mask;
	if (!(mask & (ROCE_F_REQ | ROCE_F_RESP))) {
		p->side.other++;	/* a CNP */
		return 0;
	}
	fl = flow_get(p, pkt);
	if (fl == NULL) {
		p->side.other++;
		return -ENOMEM;
	}
	rc = (mask & ROCE_F_REQ) ? add_request(fl, pkt, mask) : add_response(p, fl, pkt, mask);
	if (rc != 0)
		p->side.other++;
	return rc;
}

struct roce_pattern *roce_pattern_read(const char *path, char *err, size_t errlen)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_frame f;
	struct roce_pattern *p;
	struct roce_pkt pkt;
	int rc, e;

	r = roce_pcap_open(path, NULL, err, errlen);
	if (r == NULL)
		return NULL;
	p = roce_pattern_create();
	if (p == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		e = ENOMEM;
		goto err_close;
	}
	while ((rc = roce_pcap_next(r, &f)) == 1) {
		roce_wire_parse(f.data, f.caplen, ROCE_PARSE_CAPTURE | ROCE_PARSE_NO_ICRC, &pkt);
		if (roce_pattern_add(p, &f, &pkt) != 0) {
			snprintf(err, errlen, "%s: out of memory at frame %" PRIu64, path, f.n);
			e = ENOMEM;
			goto err_destroy;
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", roce_pcap_error(r));
		e = -rc;
		goto err_destroy;
	}
	roce_pcap_close(r);
	return p;

err_destroy:
	roce_pattern_destroy(p);
err_close:
	roce_pcap_close(r);
	errno = e;
	return NULL;
}

/* The last PSN of a message (an approximation where packets of it were not captured). */
static int64_t msg_end(const struct roce_pattern_msg *m)
{
	return m->psn + (m->pkts ? m->pkts - 1 : 0);
}

/*
 * Close the messages still open and count what each ACK covers: an ACK, every message of the
 * requests it answers up to its PSN not covered yet; a NAK, those before it (IBA 9.7.5.1.2:
 * a NAK implicitly acknowledges the packets before the one it names). Only ACKs go into the
 * histogram: coalescing is a choice of the responder's, a NAK is not.
 */
static void pattern_finish(struct roce_pattern *p)
{
	const struct roce_flow_stats *tot;

	if (p->finished)
		return;
	p->finished = true;
	for (uint32_t i = 0; i < p->nflows; i++) {
		struct flow *fl = &p->flows[i];

		if (fl->req.open && stream_close(&fl->req, false) != 0)
			p->side.other++;
		if (fl->resp.open && stream_close(&fl->resp, false) != 0)
			p->side.other++;
	}
	for (uint32_t i = 0; i < p->nflows; i++) {
		const struct flow *fl = &p->flows[i];
		const struct stream *req;
		uint64_t k = 0;

		p->side.flows++;
		p->side.req_flows += fl->req.n != 0;
		p->side.requests += fl->req.n;
		p->side.responses += fl->resp.n;
		if (fl->peer < 0)
			continue;
		req = &p->flows[fl->peer].req;
		for (uint64_t a = 0; a < fl->nack; a++) {
			bool ack = roce_aeth_kind(fl->ack[a].syndrome) == ROCE_AETH_ACK;
			uint64_t covered = 0;

			while (k < req->n && (msg_end(&req->msg[k]) < fl->ack[a].psn ||
					      (ack && msg_end(&req->msg[k]) == fl->ack[a].psn))) {
				k++;
				covered++;
			}
			if (!ack)
				continue;
			p->side.acks++;
			p->side.acked += covered;
			p->side.ack_hist[ROCE_MIN(covered, (uint64_t)ROCE_PATTERN_HIST - 1)]++;
		}
	}
	/* the dissector's own counts of what it takes care to tell apart */
	tot = roce_summary_totals(p->sum);
	p->side.resent = tot->retrans;
	for (int n = 0; n < ROCE_SUM_NAK_NUM; n++)
		p->side.naks += tot->nak[n];
}

static unsigned int msg_diff(const struct roce_pattern_msg *a, const struct roce_pattern_msg *b)
{
	unsigned int f = 0;

	if (a->op != b->op || a->last_op != b->last_op || a->pkts != b->pkts || a->whole != b->whole)
		f |= ROCE_PATTERN_OPCODES;
	if (a->size != b->size)
		f |= ROCE_PATTERN_SIZE;
	if (a->psn != b->psn)
		f |= ROCE_PATTERN_PSN;
	if (a->ackreq != b->ackreq)
		f |= ROCE_PATTERN_ACKREQ;
	return f;
}

/* Message by message, by place in the flow. */
static void compare_streams(struct roce_pattern_cmp *c, enum roce_pattern_role role, uint32_t qp,
			    const struct stream *a, const struct stream *b)
{
	uint64_t na = a != NULL ? a->n : 0, nb = b != NULL ? b->n : 0;

	for (uint64_t i = 0; i < ROCE_MAX(na, nb); i++) {
		const struct roce_pattern_msg *ma = i < na ? &a->msg[i] : NULL;
		const struct roce_pattern_msg *mb = i < nb ? &b->msg[i] : NULL;
		unsigned int fields;
		struct roce_pattern_diff *d;

		if (ma == NULL || mb == NULL) {
			fields = ROCE_PATTERN_MISSING;
			c->missing[role]++;
		} else {
			fields = msg_diff(ma, mb);
			c->compared[role]++;
			c->same[role] += fields == 0;
			for (int bit = 0; bit < ROCE_PATTERN_NFIELDS; bit++)
				c->field[bit] += (fields >> bit) & 1;
		}
		if (fields == 0 || c->ndiff == ROCE_PATTERN_DIFFS)
			continue;
		d = &c->diff[c->ndiff++];
		d->role = role;
		d->qp = qp;
		d->index = i + 1;
		d->fields = fields;
		if (ma != NULL)
			d->m[0] = *ma;
		if (mb != NULL)
			d->m[1] = *mb;
	}
}

/* The @p k-th flow carrying requests, and the flow answering it (either may be NULL). */
static const struct flow *req_flow(const struct roce_pattern *p, uint32_t k,
				   const struct flow **answer)
{
	*answer = NULL;
	for (uint32_t i = 0; i < p->nflows; i++) {
		if (p->flows[i].req.n == 0 || k-- != 0)
			continue;
		for (uint32_t j = 0; j < p->nflows; j++)
			if (p->flows[j].peer == (int32_t)i)
				*answer = &p->flows[j];
		return &p->flows[i];
	}
	return NULL;
}

void roce_pattern_compare(struct roce_pattern *a, struct roce_pattern *b,
			  struct roce_pattern_cmp *out)
{
	uint32_t n;

	memset(out, 0, sizeof(*out));
	pattern_finish(a);
	pattern_finish(b);
	out->side[0] = a->side;
	out->side[1] = b->side;
	n = ROCE_MAX(a->side.req_flows, b->side.req_flows);
	for (uint32_t k = 0; k < n; k++) {
		const struct flow *ansa, *ansb;
		const struct flow *fa = req_flow(a, k, &ansa), *fb = req_flow(b, k, &ansb);

		compare_streams(out, ROCE_PATTERN_REQ, k + 1, fa ? &fa->req : NULL,
				fb ? &fb->req : NULL);
		compare_streams(out, ROCE_PATTERN_RESP, k + 1, ansa ? &ansa->resp : NULL,
				ansb ? &ansb->resp : NULL);
	}
	out->acks_same = a->side.acks == b->side.acks && a->side.naks == b->side.naks &&
			 memcmp(a->side.ack_hist, b->side.ack_hist, sizeof(a->side.ack_hist)) == 0;
}

char *roce_pattern_msg_text(const struct roce_pattern_msg *m, char *out, size_t size)
{
	const char *first = roce_opcode[m->op].name, *last = roce_opcode[m->last_op].name;
	size_t len;

	if (first == NULL)
		first = "?";
	if (m->pkts > 1 && last != NULL) {
		/* RC_RDMA_WRITE_FIRST..LAST_WITH_IMMEDIATE: the last without what they share */
		size_t k = 0, cut = 0;

		for (; first[k] != '\0' && first[k] == last[k]; k++)
			if (first[k] == '_')
				cut = k + 1;
		snprintf(out, size, "%s..%s x%" PRIu32, first, last + cut, m->pkts);
	} else {
		snprintf(out, size, "%s", first);
	}
	len = strlen(out);
	snprintf(out + len, size - len, " %" PRIu32 " B psn %+" PRId64 "%s%s", m->size, m->psn,
		 m->ackreq ? " ackreq" : "", m->whole ? "" : " (its last packet not seen)");
	return out;
}

/* "1.00 each (1:100)": the ACKs of a side, by messages covered. */
static void ack_text(const struct roce_pattern_side *s, char *out, size_t size)
{
	size_t len;

	if (s->acks == 0) {
		snprintf(out, size, "no ACKs");
		return;
	}
	snprintf(out, size, "%" PRIu64 " ACK%s, %.2f message%s each (", s->acks,
		 s->acks == 1 ? "" : "s", (double)s->acked / (double)s->acks,
		 s->acked == s->acks ? "" : "s");
	for (int i = 0, any = 0; i < ROCE_PATTERN_HIST; i++) {
		if (s->ack_hist[i] == 0)
			continue;
		len = strlen(out);
		snprintf(out + len, size - len, "%s%d%s:%" PRIu64, any++ ? " " : "", i,
			 i == ROCE_PATTERN_HIST - 1 ? "+" : "", s->ack_hist[i]);
	}
	len = strlen(out);
	snprintf(out + len, size - len, ")");
}

static const char *const field_name[ROCE_PATTERN_NFIELDS] = {
	"opcodes", "size", "PSN", "AckReq",
};

int roce_pattern_print(const struct roce_pattern_cmp *c, const char *const name[2],
		       unsigned int max_diffs, FILE *out)
{
	static const char *const role_name[ROCE_PATTERN_NROLES] = { "messages", "responses" };
	const struct roce_pattern_side *s = c->side;
	char at[2][200], ma[160], mb[160];

	fprintf(out, " packet pattern: the messages of each flow, flows matched by role and QP "
		"order, PSNs counted from each flow's first\n");
	for (int r = 0; r < ROCE_PATTERN_NROLES; r++) {
		uint64_t n0 = r == ROCE_PATTERN_REQ ? s[0].requests : s[0].responses;
		uint64_t n1 = r == ROCE_PATTERN_REQ ? s[1].requests : s[1].responses;

		if (r == ROCE_PATTERN_RESP && n0 == 0 && n1 == 0)
			continue;
		fprintf(out, " %s: %" PRIu64 " compared, %" PRIu64 " same, %" PRIu64 " differ",
			role_name[r], c->compared[r], c->same[r], c->compared[r] - c->same[r]);
		if (c->missing[r] != 0)
			fprintf(out, ", %" PRIu64 " on one side only", c->missing[r]);
		fprintf(out, " (%s %" PRIu64 ", %s %" PRIu64 "%s)\n", name[0], n0, name[1], n1,
			r == ROCE_PATTERN_RESP ? ": READ responses and atomic ACKs" : "");
	}
	if (c->field[0] + c->field[1] + c->field[2] + c->field[3] != 0) {
		fprintf(out, " differing in:");
		for (int f = 0; f < ROCE_PATTERN_NFIELDS; f++)
			fprintf(out, "%s %s %" PRIu64, f ? "," : "", field_name[f], c->field[f]);
		fprintf(out, " (messages)\n");
	}
	ack_text(&s[0], at[0], sizeof(at[0]));
	ack_text(&s[1], at[1], sizeof(at[1]));
	fprintf(out, " ACK coalescing %s: %s %s; %s %s\n", c->acks_same ? "the same" : "differs",
		name[0], at[0], name[1], at[1]);
	if (s[0].naks || s[1].naks || s[0].resent || s[1].resent)
		fprintf(out, " NAKs and packets sent again: %s %" PRIu64 " and %" PRIu64 ", %s %"
			PRIu64 " and %" PRIu64 "\n", name[0], s[0].naks, s[0].resent, name[1],
			s[1].naks, s[1].resent);
	if (c->ndiff != 0 && max_diffs != 0)
		fprintf(out, " first differences:\n");
	for (uint32_t i = 0; i < c->ndiff && i < max_diffs; i++) {
		const struct roce_pattern_diff *d = &c->diff[i];
		const char *what = d->role == ROCE_PATTERN_REQ ? "message" : "response";

		if (d->fields & ROCE_PATTERN_MISSING) {
			int k = d->m[0].pkts != 0 ? 0 : 1;

			fprintf(out, "  QP %" PRIu32 " %s %" PRIu64 ": only %s has it: %s\n", d->qp,
				what, d->index, name[k],
				roce_pattern_msg_text(&d->m[k], ma, sizeof(ma)));
			continue;
		}
		fprintf(out, "  QP %" PRIu32 " %s %" PRIu64 ":", d->qp, what, d->index);
		for (int f = 0, any = 0; f < ROCE_PATTERN_NFIELDS; f++)
			if (d->fields & (1u << f))
				fprintf(out, "%s %s", any++ ? "," : "", field_name[f]);
		fprintf(out, ": %s %s | %s %s\n", name[0],
			roce_pattern_msg_text(&d->m[0], ma, sizeof(ma)), name[1],
			roce_pattern_msg_text(&d->m[1], mb, sizeof(mb)));
	}
	fflush(out);
	return ferror(out) ? -EIO : 0;
}
