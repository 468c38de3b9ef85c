/*
 * Loopback on a real device: both halves of a perftest run in one process, the server half in a
 * thread, joined by perftest's exchange on 127.0.0.1, as `rocelab perf` runs both ends of the
 * emulated NIC in one process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roce_perf.h"

/* The server half, in its own thread. */
struct loop_server {
	const struct roce_perf_conf *conf;	/* the workload, as the client's */
	struct roce_perf_live live;		/* the client's, as a server */
	pthread_mutex_t lock;			/* over @ready and @rc until ready */
	pthread_cond_t cond;			/* signalled once ready */
	bool ready;				/* listening, or failed before it could */
	volatile int stop;			/* the client half failed: stop waiting for it */
	char err[256];				/* why it failed */
	int rc;					/* 0, or -errno */
};

static void server_ready(void *arg)
{
	struct loop_server *ls = arg;

	pthread_mutex_lock(&ls->lock);
	ls->ready = true;
	pthread_cond_signal(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
}

static void *server_main(void *arg)
{
	struct loop_server *ls = arg;
	struct roce_perf_live_ctx *ctx;
	struct roce_perf_result res;
	int rc;

	ls->live.listening = server_ready;
	ls->live.listening_arg = ls;
	ls->live.stop = &ls->stop;
	ctx = roce_perf_live_open(ls->conf, &ls->live, ls->err, sizeof(ls->err));
	if (ctx == NULL) {
		rc = -errno;
		pthread_mutex_lock(&ls->lock);
		ls->rc = rc;
		pthread_mutex_unlock(&ls->lock);
		server_ready(ls);
		return NULL;
	}
	rc = roce_perf_live_run(ctx, &res, ls->err, sizeof(ls->err));
	roce_perf_live_close(ctx);
	pthread_mutex_lock(&ls->lock);
	ls->rc = rc;
	pthread_mutex_unlock(&ls->lock);
	return NULL;
}

/* A TCP port nobody listens on now, for the two halves' exchange; 0 if none. */
static uint16_t free_tcp_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint16_t port = 0;

	if (fd < 0)
		return 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

int roce_perf_loopback(const struct roce_perf_conf *conf, const struct roce_perf_live *live,
		       roce_perf_client_fn client, void *arg, char *err, size_t errlen)
{
	struct loop_server ls = {
		.conf = conf,
		.live = *live,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	struct roce_perf_live cl = *live;
	pthread_t tid;
	int rc;

	if (live->ibdev == NULL) {
		snprintf(err, errlen, "loopback is for a real device (--ibdev)");
		return -EINVAL;
	}
	if (live->tcp_port == 0)
		cl.tcp_port = free_tcp_port();
	ls.live.tcp_port = cl.tcp_port;
	ls.live.peer = NULL;
	ls.live.row = NULL;
	cl.peer = "127.0.0.1";
	/*
	 * The server half sets the device up first and listens; only then does the client start,
	 * so that what the device refuses is said once, by the server half.
	 */
	rc = pthread_create(&tid, NULL, server_main, &ls);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the server half: %s", strerror(rc));
		return -rc;
	}
	pthread_mutex_lock(&ls.lock);
	while (!ls.ready)
		pthread_cond_wait(&ls.cond, &ls.lock);
	rc = ls.rc;
	pthread_mutex_unlock(&ls.lock);
	if (rc != 0) {
		pthread_join(tid, NULL);
		snprintf(err, errlen, "%s", ls.err);
		return rc;
	}
	rc = client(arg, &cl);
	if (rc != 0)
		ls.stop = 1;	/* it may wait for a client that never came */
	pthread_join(tid, NULL);
	if (ls.rc != 0 && rc == 0) {
		snprintf(err, errlen, "the server half: %s", ls.err);
		return -EIO;
	}
	return rc;
}
