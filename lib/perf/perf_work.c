/*
 * perftest's loops, once, for every backend: the emulated NIC in virtual time (perf_run.c),
 * and in real time, the emulated NIC on a DPDK port or a real device through rdma-core
 * (perf_live.c). A backend gives its verbs, its clock and its way of waiting; the loops decide
 * what to post and when, what a completion means, and what a run measures.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perf_private.h"

/* ---- bandwidth: one side posts, polls and counts ---- */

#define BW_BATCH 64			/* completions polled at once */

/* The result's iterations, bandwidth and message rate from @p b's counts and times. */
static void bw_figures(const struct perf_bw *b)
{
	const struct roce_perf_conf *conf = b->conf;
	struct roce_perf_result *r = b->res;
	double elapsed = (double)(b->t_end - b->t0) / ROCE_SEC;

	r->iters = b->total / conf->nqp;
	r->wall_sec = elapsed;
	if (elapsed <= 0)
		return;
	r->bw_avg_gbps = (double)b->total * conf->size * 8 / elapsed / 1e9;
	r->msg_rate_mpps = (double)b->total / elapsed / 1e6;
	r->bw_peak_gbps = ROCE_MAX(r->bw_avg_gbps, perf_peak_gbps(b->tally, conf->tx_depth,
								  conf->size));
}

int perf_bw_loop(struct perf_bw *b)
{
	const struct roce_perf_conf *conf = b->conf;
	const struct perf_bw_ops *ops = b->ops;
	uint64_t posted[ROCE_PERF_MAX_QP] = { 0 }, done[ROCE_PERF_MAX_QP] = { 0 };
	uint64_t want = conf->iters * conf->nqp;
	/* what the post loop reads for every message, in locals (the calls it makes may write) */
	const uint64_t tx_depth = conf->tx_depth, iters = conf->iters;
	const bool timed = conf->duration > 0, untimed = conf->duration == 0;
	const bool sig_all = conf->cq_mod == 1 || conf->verify;	/* every send signaled */
	roce_time_t deadline;
	struct roce_wc wc[BW_BATCH];
	int rc = 0;

	b->total = b->posted = 0;
	b->t0 = ops->now(b);
	b->t_end = 0;
	deadline = timed ? b->t0 + (roce_time_t)(conf->duration * ROCE_SEC) : ROCE_TIME_NEVER;
	b->tally->win_len = 0;
	perf_window(b->tally, b->t0, 0);
	for (;;) {
		bool stop = timed && ops->now(b) >= deadline;
		bool polled = false;
		int n;

		for (uint32_t q = 0; q < conf->nqp && !stop; q++) {
			while (posted[q] - done[q] < tx_depth && (timed || posted[q] < iters)) {
				bool last = untimed && posted[q] + 1 == iters;
				bool sig = last || sig_all || (posted[q] + 1) % conf->cq_mod == 0 ||
					   posted[q] - done[q] + 1 >= tx_depth;

				if (ops->post(b, q, posted[q], sig) != 0)
					break;	/* the send queue is full: its completions come first */
				posted[q]++;
				b->posted++;
			}
		}
		while ((n = ops->poll(b, BW_BATCH, wc)) > 0) {
			polled = true;
			for (int i = 0; i < n; i++) {
				uint32_t q = ops->qp_index(b, wc[i].qp_num);

				if (!perf_wc_ok(b->res, wc[i].status))
					continue;
				b->total += wc[i].wr_id + 1 - done[q];
				done[q] = wc[i].wr_id + 1;
				if (ops->sent != NULL)
					ops->sent(b, q, wc[i].wr_id);
			}
			perf_window(b->tally, ops->now(b), b->total);
		}
		if (ops->receive != NULL && ops->receive(b))
			polled = true;
		if (b->t_end == 0 && untimed && b->total >= want)
			b->t_end = ops->now(b);	/* the figures: our sends */
		if (b->res->errors != 0 || (untimed && b->total >= want &&
					    (ops->received_all == NULL || ops->received_all(b))))
			break;
		if (stop && b->total == b->posted)
			break;	/* -D: the time is up and everything posted has completed */
		rc = ops->wait(b, polled);
		if (rc != 0)
			break;	/* > 0: nothing left to happen (a stall the caller reports); < 0: said */
	}
	if (b->t_end == 0)
		b->t_end = ops->now(b);
	bw_figures(b);
	if (conf->verify && b->total != b->posted && b->res->errors == 0)
		perf_verify_fail(b->res, "%llu of %llu operations completed", b->total, b->posted);
	return rc < 0 ? rc : 0;
}

/* ---- latency: one side of a ping-pong, as far as it goes without waiting ---- */

/*
 * ib_write_lat and ib_send_lat (perftest's run_iter_lat_write() and run_iter_lat_send()): the
 * side that goes first sends, then waits for the peer's answer; the other waits, then
 * answers. ib_read_lat's client (run_iter_lat()) posts a READ and waits for it. Each side
 * times its posts, a round trip apart, reading the clock just after a WRITE's or READ's post
 * (while it is on its way) or just before a SEND's (which may wait for room); the first side
 * times its last round trip to the answer. Write i carries the stamp (char)(i + 1) in its
 * last byte, as perftest's, so the sides stay in step past 255.
 *
 * One step function per state returns the next state, LAT_WAITS to wait in this one, or
 * -errno with l->err filled.
 */
#define LAT_WAITS (-EINPROGRESS)

#define LAT_FAIL(l, rc, ...) \
	do { \
		snprintf((l)->err, sizeof((l)->err), __VA_ARGS__); \
		return (rc); \
	} while (0)

/*
 * A latency sample (kept when the side keeps them): the time since the last post, halved for
 * a ping-pong of writes or sends; the first post's time is kept instead.
 */
static void lat_sample(struct perf_lat *l, roce_time_t t)
{
	double us = (double)(t - l->t_prev) / ROCE_US;

	if (l->i == 0 && l->state != PERF_LAT_WAIT)
		l->t_first = t;
	else if (l->lat != NULL)
		l->lat[l->nlat++] = l->conf->test == ROCE_PERF_READ_LAT ? us : us / 2;
}

/* Our sends' completions so far (unsignaled ones come with the next signaled one's). */
static int lat_sends(struct perf_lat *l)
{
	struct roce_wc wc;
	int n;

	while ((n = l->ops->poll(l, false, &wc)) > 0) {
		l->sends_done = wc.wr_id + 1;
		l->steps++;
		if (!perf_wc_ok(l->res, wc.status))
			LAT_FAIL(l, -EIO, "%s %llu failed: %s",
				 l->conf->test == ROCE_PERF_WRITE_LAT ? "WRITE" :
				 l->conf->test == ROCE_PERF_SEND_LAT ? "SEND" : "READ",
				 (unsigned long long)wc.wr_id + 1, roce_wc_status_str(wc.status));
	}
	return n;
}

/* Whether this round trip's answer is in: the peer's stamp landed, its receive, our READ. */
static int lat_answered(struct perf_lat *l)
{
	struct roce_wc wc;
	int n;

	switch (l->conf->test) {
	case ROCE_PERF_WRITE_LAT:
		return *l->watch == l->want;
	case ROCE_PERF_READ_LAT:
		n = l->sends_done;
		return lat_sends(l) < 0 ? -EIO : l->sends_done > (uint64_t)n;
	default:
		n = l->ops->poll(l, true, &wc);
		if (n == 0)
			return 0;
		if (n < 0 || !perf_wc_ok(l->res, wc.status))
			LAT_FAIL(l, -EIO, "receive %llu failed: %s", (unsigned long long)l->i + 1,
				 n < 0 ? strerror(-n) : roce_wc_status_str(wc.status));
		l->byte_len = wc.byte_len;
			return 1;
	}
}

/* After our send of this round trip, or after the peer's answer: the next state. */
static enum perf_lat_state lat_turn_over(struct perf_lat *l, bool sent)
{
	if (sent == l->first)	/* the first side waits after it sent; the other sends */
		return sent ? PERF_LAT_WAIT : PERF_LAT_POST;
	if (++l->i < l->conf->iters)	/* the next round trip begins as the first did */
		return l->first ? PERF_LAT_POST : PERF_LAT_WAIT;
	if (!l->first)
		l->t_end = l->t_prev;	/* its last turn */
	return PERF_LAT_TAIL;
}

/* The send of round trip i is next: a SEND is timed now, before any wait for room. */
static int lat_post(struct perf_lat *l)
{
	if (l->conf->test == ROCE_PERF_SEND_LAT) {
		roce_time_t t = l->ops->now(l);

		lat_sample(l, t);
		l->t_prev = t;
	}
	return PERF_LAT_POSTING;
}

static int lat_posting(struct perf_lat *l)
{
	enum roce_perf_test test = l->conf->test;
	int rc;

	if (test == ROCE_PERF_WRITE_LAT)
		*l->stamp = (uint8_t)(l->i + 1);
	rc = l->ops->post(l, l->i);
	if (rc == -ENOMEM && test == ROCE_PERF_SEND_LAT) {	/* the send queue is full */
		rc = lat_sends(l);
		return rc < 0 ? rc : LAT_WAITS;
	}
	if (rc != 0)
		LAT_FAIL(l, rc, "cannot post a %s: %s", test == ROCE_PERF_WRITE_LAT ? "WRITE" :
			 test == ROCE_PERF_SEND_LAT ? "SEND" : "READ", strerror(-rc));
	l->steps++;
	if (test != ROCE_PERF_SEND_LAT) {
		roce_time_t t = l->ops->now(l);

		lat_sample(l, t);
		l->t_prev = t;
	}
	if (test == ROCE_PERF_READ_LAT)
		return PERF_LAT_WAIT;
	/*
	 * Our earlier sends' completions, every round trip: a device may grant a deeper send
	 * queue than asked, so posting need not find it full, and the send CQ must not overflow
	 */
	if ((rc = lat_sends(l)) < 0)
		return rc;
	if (l->res->errors != 0)
		return PERF_LAT_DONE;
	return lat_turn_over(l, true);
}

/* Waiting for this round trip's answer; our sends' completions meanwhile. */
static int lat_wait(struct perf_lat *l)
{
	int rc;

	l->want = (uint8_t)(l->i + 1);
	rc = lat_answered(l);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		rc = l->conf->test == ROCE_PERF_READ_LAT ? 0 : lat_sends(l);
		return rc < 0 ? rc : LAT_WAITS;
	}
	if (l->res->errors != 0)
		return PERF_LAT_DONE;	/* a READ that failed: counted among the errors */
	l->steps++;
	if (l->first && l->i + 1 == l->conf->iters) {	/* the last round trip: to the answer */
		l->t_end = l->ops->now(l);
		lat_sample(l, l->t_end);
	}
	if (l->ops->arrived != NULL)
		l->ops->arrived(l);
	if (l->conf->test == ROCE_PERF_SEND_LAT && (rc = l->ops->repost(l)) != 0)
		LAT_FAIL(l, rc, "cannot post a receive: %s", strerror(-rc));
	return lat_turn_over(l, false);
}

/*
 * Every send of this size completes (the last one's ACK) before the QP goes or, for
 * write_lat, the stamp byte becomes data again for the next size.
 */
static int lat_tail(struct perf_lat *l)
{
	int rc = lat_sends(l);

	if (rc < 0)
		return rc;
	return l->sends_done < l->conf->iters && l->res->errors == 0 ? LAT_WAITS : PERF_LAT_DONE;
}

static int (*const lat_step[])(struct perf_lat *l) = {
	[PERF_LAT_POST] = lat_post,
	[PERF_LAT_POSTING] = lat_posting,
	[PERF_LAT_WAIT] = lat_wait,
	[PERF_LAT_TAIL] = lat_tail,
};

void perf_lat_start(struct perf_lat *l)
{
	bool waits = !l->first && l->conf->test != ROCE_PERF_READ_LAT;

	l->state = waits ? PERF_LAT_WAIT : PERF_LAT_POST;
	l->i = 0;
	l->nlat = 0;
	l->sends_done = 0;
	l->steps = 0;
	l->t_prev = l->t_first = l->t_end = 0;
	l->err[0] = '\0';
}

int perf_lat_run(struct perf_lat *l)
{
	while (l->state != PERF_LAT_DONE) {
		int next = lat_step[l->state](l);

		if (next == LAT_WAITS)
			return PERF_LAT_BUSY;
		if (next < 0) {
			l->state = PERF_LAT_DONE;
			return next;
		}
		l->state = (enum perf_lat_state)next;
	}
	return 0;
}

const char *perf_lat_awaits(const struct perf_lat *l)
{
	if (l->conf->test == ROCE_PERF_READ_LAT)
		return "READ response";
	switch (l->state) {
	case PERF_LAT_WAIT:
		return l->conf->test == ROCE_PERF_WRITE_LAT ? "WRITE from the peer" :
		       "message from the peer";
	case PERF_LAT_POSTING:
		return "room in the send queue";
	case PERF_LAT_TAIL:
		return l->conf->test == ROCE_PERF_WRITE_LAT ? "acknowledgement of our last WRITE" :
		       "acknowledgement of our last SEND";
	default:
		return "progress";
	}
}
