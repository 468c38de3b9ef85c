/* perftest's out-of-band exchange over TCP (port 18515), byte-compatible with perftest 6.06. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_private.h"

#define OOB_VERSION_LEN 16	/* char version[16], NUL padded */
#define OOB_MIN_VERSION 5.70	/* perftest refuses older peers */
#define OOB_MAX_VERSION 100	/* above any perftest: not a version */
#define OOB_POLL_EVERY 256	/* idle calls between two polls of the socket */

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define OOB_FAIL(o, rc, ...) \
	do { \
		snprintf((o)->err, sizeof((o)->err), __VA_ARGS__); \
		return (rc); \
	} while (0)

/* "192.0.2.1 port 40000" (an IPv4-mapped address as IPv4), or "the peer". */
static void name_peer(struct perf_oob *o)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "";
	uint16_t port = 0;

	snprintf(o->peer, sizeof(o->peer), "the peer");
	if (getpeername(o->fd, (struct sockaddr *)&ss, &len) != 0)
		return;
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], ip, sizeof(ip));
		else
			inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		port = ntohs(s6->sin6_port);
	} else if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		port = ntohs(s4->sin_port);
	}
	if (ip[0] != '\0')
		snprintf(o->peer, sizeof(o->peer), "%s port %u", ip, port);
}

const char *perf_oob_printable(const void *msg, size_t len, char *out, size_t size)
{
	const uint8_t *p = msg;
	size_t n = 0;

	for (size_t i = 0; i < len && p[i] != '\0'; i++) {
		char c[5];
		int w = p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' ?
			snprintf(c, sizeof(c), "%c", p[i]) : snprintf(c, sizeof(c), "\\x%02x", p[i]);

		if (n + (size_t)w + 4 > size) {	/* room for "..." and the NUL */
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		memcpy(out + n, c, (size_t)w);
		n += (size_t)w;
	}
	out[n] = '\0';
	return out;
}

void perf_oob_deadline(struct perf_oob *o, double secs)
{
	o->deadline = secs > 0 ? mono() + secs : 0;
}

static void set_nodelay(int fd)
{
	int one = 1;

	/* each message must leave as one segment: perftest reads each with one read() */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int oob_accept(struct perf_oob *o, uint16_t port, double timeout)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	double end = timeout > 0 ? mono() + timeout : 0;
	int one = 1, zero = 0, ls, e;
	bool v6 = true;

	/* one socket for both families (perftest listens on IPv4 only); IPv4 alone without IPv6 */
	ls = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0) {
		v6 = false;
		ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (ls < 0)
		OOB_FAIL(o, -errno, "socket: %s", strerror(errno));
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if ((v6 ? bind(ls, (struct sockaddr *)&sa6, sizeof(sa6)) :
	     bind(ls, (struct sockaddr *)&sa, sizeof(sa))) != 0 || listen(ls, 1) != 0) {
		e = errno;
		close(ls);
		OOB_FAIL(o, -e, "cannot listen on TCP port %u: %s", port, strerror(e));
	}
	if (o->listening != NULL)
		o->listening(o->listening_arg);
	for (;;) {
		struct pollfd pfd = { .fd = ls, .events = POLLIN };
		int rc = poll(&pfd, 1, 100);

		if (rc > 0)
			break;
		if (rc < 0 && errno != EINTR) {
			e = errno;
			close(ls);
			OOB_FAIL(o, -e, "poll: %s", strerror(e));
		}
		if (end != 0 && mono() > end) {
			close(ls);
			OOB_FAIL(o, -ETIMEDOUT, "no client connected to TCP port %u within %.0f s", port,
				 timeout);
		}
		if (o->stop != NULL && *o->stop) {
			close(ls);
			OOB_FAIL(o, -EINTR, "interrupted while waiting for a client");
		}
		if (o->idle != NULL)
			o->idle(o->idle_arg);
	}
	o->fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	e = errno;
	close(ls);	/* perftest serves one client per run */
	if (o->fd < 0)
		OOB_FAIL(o, -e, "accept: %s", strerror(e));
	return 0;
}

static int oob_connect(struct perf_oob *o, const char *host, uint16_t port, double timeout)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	double end = mono() + (timeout > 0 ? timeout : 10);
	struct addrinfo *ai, *a;
	char serv[8];
	int rc, e = ECONNREFUSED;

	snprintf(serv, sizeof(serv), "%u", port);
	rc = getaddrinfo(host, serv, &hints, &ai);
	if (rc != 0)
		OOB_FAIL(o, -EINVAL, "%s: %s", host, gai_strerror(rc));
	for (;;) {
		for (a = ai; a != NULL; a = a->ai_next) {
			o->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (o->fd < 0) {
				e = errno;
				continue;
			}
			if (connect(o->fd, a->ai_addr, a->ai_addrlen) == 0) {
				freeaddrinfo(ai);
				return 0;
			}
			e = errno;
			close(o->fd);
			o->fd = -1;
		}
		if (mono() > end)
			break;
		usleep(100000);	/* the server may not listen yet */
	}
	freeaddrinfo(ai);
	OOB_FAIL(o, -e, "cannot connect to %s:%u: %s", host, port, strerror(e));
}

int perf_oob_open(struct perf_oob *o, bool server, const char *host, uint16_t port, double timeout)
{
	int rc;

	o->fd = -1;
	o->server = server;
	o->deadline = 0;
	o->err[0] = '\0';
	snprintf(o->peer, sizeof(o->peer), "the peer");
	rc = server ? oob_accept(o, port, timeout) : oob_connect(o, host, port, timeout);
	if (rc == 0) {
		set_nodelay(o->fd);
		name_peer(o);
	}
	return rc;
}

void perf_oob_close(struct perf_oob *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

static int oob_write(struct perf_oob *o, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(o->fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			OOB_FAIL(o, -errno, "TCP write: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly @p len bytes, running the idle function while nothing has arrived. */
static int oob_read(struct perf_oob *o, void *buf, size_t len)
{
	uint8_t *p = buf;
	unsigned int spins = 0;
	size_t want = len;
	double end = o->timeout > 0 ? mono() + o->timeout : 0;
	bool opening = o->deadline > 0 && (end == 0 || o->deadline < end);
	/* a wait with no end (a server's, through the client's whole test) lasts while the peer's
	 * frames keep coming: a peer whose link went down never closes the TCP connection */
	bool watch = end == 0 && !opening && o->heard != NULL && o->silence > 0;
	double heard_at = 0, look_at = 0;
	uint64_t heard = 0;

	if (opening)
		end = o->deadline;

	while (len > 0) {
		ssize_t n = recv(o->fd, p, len, MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			OOB_FAIL(o, -ECONNRESET, "the peer closed the TCP connection (%zu bytes short)",
				 len);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			OOB_FAIL(o, -errno, "TCP read: %s", strerror(errno));
		if (end != 0 && mono() > end && opening)
			OOB_FAIL(o, -ETIMEDOUT, "the peer stalled in the exchange's opening: %zu of "
				 "the %zu bytes of a message, and no more within --hello-timeout",
				 want - len, want);
		if (end != 0 && mono() > end)
			OOB_FAIL(o, -ETIMEDOUT, "the peer sent %zu of the %zu bytes expected within "
				 "%.0f s (is it running the same test, with the same options?)",
				 want - len, want, o->timeout);
		if (watch && mono() >= look_at) {
			double t = mono();
			uint64_t h = o->heard(o->idle_arg);

			if (heard_at == 0 || h != heard) {
				heard = h;
				heard_at = t;
			} else if (t - heard_at > o->silence) {
				OOB_FAIL(o, -ETIMEDOUT, "nothing from the peer for %.0f s, neither a "
					 "frame nor the end of its test (its link down? the peer gone?)",
					 o->silence);
			}
			look_at = t + 0.25;
		}
		if (o->idle != NULL) {
			/* a busy loop, as the engine's: a poll() per call would cost a syscall each */
			for (spins = 0; spins < OOB_POLL_EVERY; spins++)
				o->idle(o->idle_arg);
		} else {
			struct pollfd pfd = { .fd = o->fd, .events = POLLIN };

			(void)poll(&pfd, 1, 1000);
		}
	}
	return 0;
}

int perf_oob_xchg(struct perf_oob *o, const void *mine, void *theirs, size_t len)
{
	int rc;

	if (o->server) {
		rc = oob_read(o, theirs, len);
		if (rc == 0 && o->before_reply != NULL)
			o->before_reply(o->idle_arg);
		return rc != 0 ? rc : oob_write(o, mine, len);
	}
	rc = oob_write(o, mine, len);
	return rc != 0 ? rc : oob_read(o, theirs, len);
}

int perf_version_parse(const char *msg, size_t len, double *version)
{
	char text[OOB_VERSION_LEN + 1], *end;
	double v;

	if (len > OOB_VERSION_LEN)
		len = OOB_VERSION_LEN;
	memcpy(text, msg, len);
	text[len] = '\0';
	v = strtod(text, &end);
	/* NaN and infinities compare false: refused with the rest */
	if (end == text || !isfinite(v) || !(v >= OOB_MIN_VERSION && v < OOB_MAX_VERSION))
		return -EPROTO;
	*version = v;
	return 0;
}

int perf_mtu_parse(const char *msg, size_t len, uint8_t *mtu)
{
	if (len < 2 || msg[0] < '1' || msg[0] > '5' || msg[1] != '\0')
		return -EPROTO;
	*mtu = (uint8_t)(msg[0] - '0');
	return 0;
}

int perf_oob_hello(struct perf_oob *o, uint8_t my_mtu, uint8_t *peer_mtu)
{
	char mine[OOB_VERSION_LEN] = PERF_VERSION, theirs[OOB_VERSION_LEN];
	char mtu[2], rmtu[2], text[80];
	uint32_t v, rv;
	int rc;

	rc = perf_oob_xchg(o, mine, theirs, OOB_VERSION_LEN);
	if (rc != 0)
		return rc;
	if (perf_version_parse(theirs, sizeof(theirs), &o->peer_version) != 0)
		OOB_FAIL(o, -EPROTO, "the peer's first message '%s' is not a perftest version from "
			 "%.2f (is it perftest?)", perf_oob_printable(theirs, sizeof(theirs), text,
								   sizeof(text)), OOB_MIN_VERSION);
	/* system data (>= 5.32): cycle buffer and cache line size; we keep ours, any fits */
	v = htonl(4096);
	if ((rc = perf_oob_xchg(o, &v, &rv, 4)) != 0)
		return rc;
	v = htonl(64);
	if ((rc = perf_oob_xchg(o, &v, &rv, 4)) != 0)
		return rc;
	/* MTU (>= 5.31): the ibv_mtu enum in ASCII and a NUL */
	mtu[0] = (char)('0' + my_mtu);
	mtu[1] = '\0';
	if ((rc = perf_oob_xchg(o, mtu, rmtu, 2)) != 0)
		return rc;
	if (perf_mtu_parse(rmtu, sizeof(rmtu), peer_mtu) != 0)
		OOB_FAIL(o, -EPROTO, "the peer's MTU '%s' is not an ibv_mtu value (1-5)",
			 perf_oob_printable(rmtu, sizeof(rmtu), text, sizeof(text)));
	return 0;
}

void perf_key_pack(const struct perf_key *k, char out[PERF_KEY_MSG])
{
	int n = snprintf(out, PERF_KEY_MSG, "%04x:%04x:%06x:%06x:%08x:%016llx:", k->lid,
			 k->out_reads, k->qpn & 0xffffff, k->psn & 0xffffff, k->rkey,
			 (unsigned long long)k->vaddr);

	for (int i = 0; i < 16; i++)
		n += snprintf(out + n, (size_t)(PERF_KEY_MSG - n), "%02x:", k->gid[i]);
	snprintf(out + n, (size_t)(PERF_KEY_MSG - n), "%08x:", k->srqn);
}

/*
 * Only hex digits and colons before the NUL: sscanf's %x would take a sign, blanks or a "0x"
 * too, and a "-1" would give a QPN of 32 bits that the 24-bit field cannot carry back.
 */
static bool hex_and_colons(const char *text)
{
	return text[strspn(text, "0123456789abcdefABCDEF:")] == '\0';
}

int perf_key_parse(const char *msg, size_t len, struct perf_key *k)
{
	char text[PERF_KEY_MSG + 1];
	unsigned int f[6 + 16 + 1];
	unsigned long long vaddr;
	const char *p;
	int n = -1;

	if (len > PERF_KEY_MSG)
		len = PERF_KEY_MSG;
	memcpy(text, msg, len);
	text[len] = '\0';
	/* %n stays unset when a literal after the last conversion does not match: sscanf still
	 * counts the conversions (fuzz_exchange found p running off the buffer) */
	if (!hex_and_colons(text) ||
	    sscanf(text, "%4x:%4x:%6x:%6x:%8x:%16llx:%n", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &vaddr, &n) != 6 || n < 0)
		return -EPROTO;
	p = text + n;
	for (int i = 0; i < 17; i++) {
		int m = -1;

		if (sscanf(p, i < 16 ? "%2x:%n" : "%8x%n", &f[6 + i], &m) != 1 || m < 0)
			return -EPROTO;
		p += m;
	}
	k->lid = (uint16_t)f[0];
	k->out_reads = (uint16_t)f[1];
	k->qpn = f[2];
	k->psn = f[3];
	k->rkey = f[4];
	k->vaddr = vaddr;
	for (int i = 0; i < 16; i++)
		k->gid[i] = (uint8_t)f[6 + i];
	k->srqn = f[22];
	return 0;
}

int perf_oob_keys(struct perf_oob *o, const struct perf_key *mine, struct perf_key *theirs,
		  uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		char out[PERF_KEY_MSG], in[PERF_KEY_MSG];
		struct perf_key k;
		int rc;

		perf_key_pack(&mine[i], out);
		rc = perf_oob_xchg(o, out, in, PERF_KEY_MSG);
		if (rc != 0)
			return rc;
		if (perf_key_parse(in, sizeof(in), &k) != 0) {
			char text[120];

			OOB_FAIL(o, -EPROTO, "malformed key message '%s'",
				 perf_oob_printable(in, sizeof(in), text, sizeof(text)));
		}
		if (theirs != NULL)
			theirs[i] = k;
	}
	return 0;
}

/* A double as perftest sends it: its bytes swapped to big-endian. */
static uint64_t double_be(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return htobe64(u);
}

static double be_double(uint64_t u)
{
	double d;

	u = be64toh(u);
	memcpy(&d, &u, 8);
	return d;
}

int perf_oob_report(struct perf_oob *o, const struct perf_report *mine, struct perf_report *theirs)
{
	uint64_t v, rv;
	int rc;

	v = htobe64(mine->size);
	if ((rc = perf_oob_xchg(o, &v, &rv, 8)) != 0)
		return rc;
	theirs->size = be64toh(rv);
	v = htobe64(mine->iters);
	if ((rc = perf_oob_xchg(o, &v, &rv, 8)) != 0)
		return rc;
	theirs->iters = be64toh(rv);
	v = double_be(mine->bw_peak);
	if ((rc = perf_oob_xchg(o, &v, &rv, 8)) != 0)
		return rc;
	theirs->bw_peak = be_double(rv);
	v = double_be(mine->bw_avg);
	if ((rc = perf_oob_xchg(o, &v, &rv, 8)) != 0)
		return rc;
	theirs->bw_avg = be_double(rv);
	v = double_be(mine->msg_rate);
	if ((rc = perf_oob_xchg(o, &v, &rv, 8)) != 0)
		return rc;
	theirs->msg_rate = be_double(rv);
	return 0;
}

int perf_oob_finish(struct perf_oob *o, const struct perf_key *mine)
{
	int rc = perf_oob_keys(o, mine, NULL, 1);

	/* perftest 6.06 writes "done" and closes without reading the peer's */
	if (rc == 0)
		(void)oob_write(o, "done", 5);
	perf_oob_close(o);
	return rc;
}

/* ---- ibv_{rc,uc,ud}_pingpong's exchange (rdma-core libibverbs/examples) ---- */

void perf_pp_pack(const struct perf_pp_dest *d, char out[PERF_PP_MSG])
{
	int n = snprintf(out, PERF_PP_MSG, "%04x:%06x:%06x:", d->lid, d->qpn & 0xffffff,
			 d->psn & 0xffffff);

	/* gid_to_wire_gid(): the 16 raw bytes in order, as four big-endian words in hex */
	for (int i = 0; i < 16; i++)
		n += snprintf(out + n, (size_t)(PERF_PP_MSG - n), "%02x", d->gid[i]);
}

int perf_pp_parse(const char *msg, size_t len, struct perf_pp_dest *d)
{
	char text[PERF_PP_MSG + 1];
	unsigned int lid, qpn, psn;
	int n = -1;

	if (len > PERF_PP_MSG)
		len = PERF_PP_MSG;
	memcpy(text, msg, len);
	text[len] = '\0';
	/* n < 0: the ':' after the PSN did not match (sscanf still says 3; fuzz_exchange) */
	if (!hex_and_colons(text) || sscanf(text, "%4x:%6x:%6x:%n", &lid, &qpn, &psn, &n) != 3 ||
	    n < 0 || strlen(text + n) != 32 || strspn(text + n, "0123456789abcdefABCDEF") != 32)
		return -EPROTO;
	for (int i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(text + n + 2 * i, "%2x", &b) != 1)
			return -EPROTO;
		d->gid[i] = (uint8_t)b;
	}
	d->lid = (uint16_t)lid;
	d->qpn = qpn;
	d->psn = psn;
	return 0;
}

static int pp_read_dest(struct perf_oob *o, struct perf_pp_dest *theirs)
{
	char in[PERF_PP_MSG], text[64];
	int rc = oob_read(o, in, sizeof(in));

	if (rc != 0)
		return rc;
	if (perf_pp_parse(in, sizeof(in), theirs) != 0)
		OOB_FAIL(o, -EPROTO, "malformed ibv_*_pingpong address '%s' (expected "
			 "LID:QPN:PSN:GID; is the peer running another test?)",
			 perf_oob_printable(in, sizeof(in), text, sizeof(text)));
	return 0;
}

int perf_pp_client(struct perf_oob *o, const struct perf_pp_dest *mine, struct perf_pp_dest *theirs)
{
	char out[PERF_PP_MSG];
	int rc;

	perf_pp_pack(mine, out);
	rc = oob_write(o, out, sizeof(out));
	if (rc == 0)
		rc = pp_read_dest(o, theirs);
	/* the server waits for this before it closes; then the client connects its QP */
	if (rc == 0)
		rc = oob_write(o, "done", 5);
	perf_oob_close(o);
	return rc;
}

int perf_pp_server_read(struct perf_oob *o, struct perf_pp_dest *theirs)
{
	return pp_read_dest(o, theirs);
}

int perf_pp_server_reply(struct perf_oob *o, const struct perf_pp_dest *mine)
{
	char out[PERF_PP_MSG], done[5];
	int rc;

	perf_pp_pack(mine, out);
	rc = oob_write(o, out, sizeof(out));
	if (rc == 0)
		rc = oob_read(o, done, sizeof(done));
	if (rc == 0 && memcmp(done, "done", 5) != 0) {
		char text[24];

		snprintf(o->err, sizeof(o->err), "the client's last message is '%s', not \"done\"",
			 perf_oob_printable(done, sizeof(done), text, sizeof(text)));
		rc = -EPROTO;
	}
	perf_oob_close(o);
	return rc;
}
