/* Replay out of a port: a capture's frames at its own timing (scaled) or at top speed, rewritten. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mbuf.h>

#include "roce_capture.h"
#include "roce_engine.h"
#include "roce_io.h"
#include "roce_replay.h"
#include "roce_report.h"

#define REPLAY_BURST 32				/* frames per rte_eth_tx_burst */
#define REPLAY_GIVE_UP (1 * ROCE_SEC)		/* a TX queue refusing for this long: drop */
#define REPLAY_RX_DRAIN (20 * ROCE_MS)		/* keep receiving after the last frame (capture) */

struct replay {
	const struct roce_replay_port_conf *conf;
	struct roce_replay_port_stats *st;
	struct roce_engine *eng;		/* wall clock, mbuf pool, the port's poller */
	struct roce_port *port;
	struct rte_mbuf *burst[REPLAY_BURST];	/* frames due, not sent yet */
	uint32_t len[REPLAY_BURST];		/* their lengths (an mbuf sent may be freed at once) */
	uint16_t nburst;
	roce_time_t first_sent, last_sent;	/* engine time of the first and last frame */
	bool any_sent;
};

/* Run the port's poller (receive, capture) until engine time @p until, sparing the CPU on long waits. */
static void wait_until(struct replay *r, roce_time_t until)
{
	for (;;) {
		roce_time_t now = roce_engine_now(r->eng);

		roce_engine_run(r->eng, now);	/* one iteration: the poller runs once */
		if (now >= until || (r->conf->stop != NULL && *r->conf->stop))
			return;
		if (until - now > 20 * ROCE_MS) {
			/* sleep most of a long gap; wake early: a loaded machine oversleeps */
			roce_time_t nap = ROCE_MIN(until - now - 10 * ROCE_MS, 100 * ROCE_MS);
			struct timespec ts = { 0, (long)(nap / ROCE_NS) };

			nanosleep(&ts, NULL);
		} else if (until - now > 200 * ROCE_US) {
			sched_yield();	/* a shared machine: precision is what the scheduler allows */
		}
	}
}

/* Send the frames gathered, retrying a full TX queue; what is refused for too long is dropped. */
static void flush(struct replay *r)
{
	roce_time_t stuck_since = 0;
	uint16_t sent = 0, s;

	while (sent < r->nburst) {
		s = roce_port_tx_burst(r->port, r->burst + sent, (uint16_t)(r->nburst - sent));
		for (uint16_t i = sent; i < sent + s; i++)
			r->st->bytes += r->len[i];
		sent = (uint16_t)(sent + s);
		if (sent == r->nburst)
			break;
		if (s != 0) {
			stuck_since = 0;
			continue;
		}
		r->st->retries++;
		if (stuck_since == 0) {
			stuck_since = roce_engine_now(r->eng);
		} else if (roce_engine_now(r->eng) - stuck_since > REPLAY_GIVE_UP ||
			   (r->conf->stop != NULL && *r->conf->stop)) {
			r->st->dropped += (uint64_t)(r->nburst - sent);
			rte_pktmbuf_free_bulk(r->burst + sent, (unsigned int)(r->nburst - sent));
			break;
		}
		roce_engine_run(r->eng, roce_engine_now(r->eng));	/* receive meanwhile */
		sched_yield();
	}
	if (sent != 0) {
		r->last_sent = roce_engine_now(r->eng);
		if (!r->any_sent) {
			r->first_sent = r->last_sent;
			r->any_sent = true;
		}
	}
	r->st->frames += sent;
	r->nburst = 0;
}

/* One pass over the capture. @return 0, or -errno with @p err filled */
static int one_pass(struct replay *r, struct roce_progress *prog, uint64_t *done, char *err,
		    size_t errlen)
{
	const struct roce_replay_port_conf *conf = r->conf;
	struct roce_pcap_reader *rd;
	struct roce_pcap_frame f;
	uint64_t first_ts = 0;
	roce_time_t start = 0;
	bool first = true;
	int rc;

	rd = roce_pcap_open(conf->path, NULL, err, errlen);
	if (rd == NULL)
		return -EINVAL;
	while ((rc = roce_pcap_next(rd, &f)) == 1) {
		struct rte_mbuf *m;
		uint8_t *data;

		if (conf->stop != NULL && *conf->stop)
			break;
		if (first) {
			first_ts = f.ts_ns;
			start = roce_engine_now(r->eng);
			first = false;
		}
		if (!conf->topspeed) {
			uint64_t rel = f.ts_ns > first_ts ? f.ts_ns - first_ts : 0;
			roce_time_t due = start + (roce_time_t)((double)rel * ROCE_NS / conf->speed);

			if (rel > 0 && (double)rel / 1e9 > r->st->capture_seconds)
				r->st->capture_seconds = (double)rel / 1e9;
			if (roce_engine_now(r->eng) < due) {
				flush(r);
				wait_until(r, due);
			}
		}
		if (f.caplen < f.wirelen)
			r->st->truncated++;
		m = roce_engine_mbuf(r->eng);
		if (m == NULL) {	/* frames in flight hold the pool: send them first */
			flush(r);
			wait_until(r, roce_engine_now(r->eng) + 10 * ROCE_US);
			m = roce_engine_mbuf(r->eng);
		}
		if (m == NULL || f.caplen < 14 || f.caplen > UINT16_MAX ||
		    (data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)f.caplen)) == NULL) {
			r->st->too_big++;
			rte_pktmbuf_free(m);
			continue;
		}
		memcpy(data, f.data, f.caplen);
		if (conf->rw != NULL) {
			unsigned int did = roce_rewrite_frame(conf->rw, data, f.caplen);

			if (did & (ROCE_RW_DID_MAC | ROCE_RW_DID_IP | ROCE_RW_DID_QPN))
				r->st->rewritten++;
			if (did & ROCE_RW_NOT_ROCE)
				r->st->not_roce++;
			if ((did & ROCE_RW_BAD_ICRC_KEPT) && (did & ROCE_RW_DID_ICRC))
				r->st->bad_icrc_kept++;
		}
		r->len[r->nburst] = f.caplen;
		r->burst[r->nburst++] = m;
		if (r->nburst == REPLAY_BURST)
			flush(r);
		roce_progress_update(prog, (double)++*done);
	}
	flush(r);
	if (rc < 0) {
		snprintf(err, errlen, "%s", roce_pcap_error(rd));
		roce_pcap_close(rd);
		return rc == -ENOTSUP ? -EINVAL : rc;
	}
	roce_pcap_close(rd);
	return 0;
}

/* Frames in one pass, for the progress line (0 if the count fails: the line shows a counter). */
static uint64_t count_frames(const char *path)
{
	struct roce_pcap_reader *rd;
	struct roce_pcap_frame f;
	uint64_t n = 0;
	char err[256];

	rd = roce_pcap_open(path, NULL, err, sizeof(err));
	if (rd == NULL)
		return 0;
	while (roce_pcap_next(rd, &f) == 1)
		n++;
	roce_pcap_close(rd);
	return n;
}

int roce_replay_port(const struct roce_replay_port_conf *conf, struct roce_replay_port_stats *st,
		     char *err, size_t errlen)
{
	struct roce_engine_conf ec = { .clock = ROCE_CLOCK_WALL, .nb_mbufs = 8192,
				       .name = "replay" };
	struct roce_port_conf pc = { .devargs = conf->devargs };
	struct roce_progress *prog = NULL;
	struct roce_pcap_reader *rd;
	struct replay r = { .conf = conf, .st = st };
	uint64_t per_pass, done = 0;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	/* a capture that cannot be read is refused before the port is touched */
	rd = roce_pcap_open(conf->path, NULL, err, errlen);
	if (rd == NULL)
		return -EINVAL;
	if (roce_pcap_linktype(rd) != 1) {
		snprintf(err, errlen, "%s: link type %d is not Ethernet", conf->path,
			 roce_pcap_linktype(rd));
		roce_pcap_close(rd);
		return -EINVAL;
	}
	roce_pcap_close(rd);
	r.eng = roce_engine_create(&ec);
	if (r.eng == NULL) {
		snprintf(err, errlen, "cannot create the engine: %s", strerror(errno));
		return -ENOMEM;
	}
	r.port = roce_port_open(r.eng, &pc, err, errlen);
	if (r.port == NULL) {
		roce_engine_destroy(r.eng);
		return -EINVAL;
	}
	if (conf->cap != NULL)
		roce_port_set_capture(r.port, conf->cap);
	if (conf->progress != NULL) {
		per_pass = count_frames(conf->path);
		prog = roce_progress_start(conf->progress, "replay",
					   conf->loops ? (double)(per_pass * conf->loops) : 0);
	}
	for (uint64_t l = 0; conf->loops == 0 || l < conf->loops; l++) {
		rc = one_pass(&r, prog, &done, err, errlen);
		if (rc != 0 || (conf->stop != NULL && *conf->stop))
			break;
		st->loops_done++;
	}
	roce_progress_finish(prog);
	st->stopped = conf->stop != NULL && *conf->stop;
	if (r.any_sent)
		st->seconds = (double)(r.last_sent - r.first_sent) / (double)ROCE_SEC;
	if (conf->cap != NULL)
		wait_until(&r, roce_engine_now(r.eng) + REPLAY_RX_DRAIN);
	roce_port_close(r.port);
	roce_engine_destroy(r.eng);
	return rc;
}
