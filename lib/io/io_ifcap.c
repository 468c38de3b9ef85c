/* A kernel network interface's frames to a pcap, through libpcap, in a thread of their own. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "roce_capture.h"
#include "roce_common.h"
#include "roce_io.h"
#include "roce_wire.h"

#define IFCAP_BUFFER (8u << 20)	/* the kernel's ring: holds a burst at a device's full rate */
#define IFCAP_POLL_MS 50	/* how soon the thread sees roce_ifcap_stop() while idle */
#define IFCAP_SNAP_ALL 262144	/* libpcap's own "whole frame" */

struct roce_ifcap {
	pcap_t *p;			/* the live handle */
	struct roce_pcap_writer *w;	/* the file (the caller's) */
	pthread_t thread;		/* reads @p into @w */
	int fd;				/* @p's selectable descriptor */
	bool nano;			/* @p gives nanoseconds (else microseconds) */
	int stop;			/* set by roce_ifcap_stop(); read with __atomic */
	struct roce_ifcap_stats st;	/* counters, the thread's until it is joined */
};

static void on_frame(u_char *arg, const struct pcap_pkthdr *h, const u_char *data)
{
	struct roce_ifcap *cap = (struct roce_ifcap *)arg;
	struct roce_pcap_frame f = {
		.ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull +
			 (uint64_t)h->ts.tv_usec * (cap->nano ? 1 : 1000),
		.caplen = h->caplen,
		.wirelen = h->len,
		.data = data,
	};
	struct roce_pkt pkt;

	cap->st.frames++;
	/* a snaplen cuts the payload, not the headers: what is left is decoded */
	roce_wire_parse(data, h->caplen, ROCE_PARSE_CAPTURE | ROCE_PARSE_NO_ICRC, &pkt);
	if (pkt.kind == ROCE_KIND_ROCEV2 && pkt.bth_off != 0)
		cap->st.roce++;
	if (roce_pcap_write_frame(cap->w, &f) != 0)
		cap->st.errors++;
}

static void *ifcap_main(void *arg)
{
	struct roce_ifcap *cap = arg;
	struct pollfd pfd = { .fd = cap->fd, .events = POLLIN };

	while (!__atomic_load_n(&cap->stop, __ATOMIC_ACQUIRE)) {
		(void)poll(&pfd, 1, IFCAP_POLL_MS);
		if (pcap_dispatch(cap->p, -1, on_frame, (u_char *)cap) < 0)
			break;
	}
	/*
	 * What the kernel handed over before the stop: a frame the interface sent or received is
	 * in the ring before the program that caused it can see its run end
	 */
	while (pcap_dispatch(cap->p, -1, on_frame, (u_char *)cap) > 0)
		;
	return NULL;
}

/* libpcap's activation errors, as errno and one line. */
static int activate_error(pcap_t *p, int rc, const char *ifname, char *err, size_t errlen)
{
	switch (rc) {
	case PCAP_ERROR_PERM_DENIED:
		snprintf(err, errlen, "capture on %s needs CAP_NET_RAW (run as root, or `setcap "
			 "cap_net_raw+ep` on rocelab)", ifname);
		return EPERM;
	case PCAP_ERROR_NO_SUCH_DEVICE:
		snprintf(err, errlen, "capture on %s: no such network interface", ifname);
		return ENODEV;
	case PCAP_ERROR_IFACE_NOT_UP:
		snprintf(err, errlen, "capture on %s: the interface is down", ifname);
		return ENODEV;
	default:
		snprintf(err, errlen, "capture on %s: %s", ifname,
			 rc == PCAP_ERROR ? pcap_geterr(p) : pcap_statustostr(rc));
		return EIO;
	}
}

struct roce_ifcap *roce_ifcap_start(const char *ifname, const char *bpf, uint32_t snaplen,
				    struct roce_pcap_writer *w, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct bpf_program prog;
	struct roce_ifcap *cap;
	int rc, e;

	cap = calloc(1, sizeof(*cap));
	if (cap == NULL) {
		snprintf(err, errlen, "capture on %s: out of memory", ifname);
		errno = ENOMEM;
		return NULL;
	}
	cap->p = pcap_create(ifname, ebuf);
	if (cap->p == NULL) {
		snprintf(err, errlen, "capture on %s: %s", ifname, ebuf);
		e = ENODEV;
		goto err_free;
	}
	/* the interface's own frames only: no promiscuous mode */
	pcap_set_snaplen(cap->p, snaplen != 0 ? (int)snaplen : IFCAP_SNAP_ALL);
	pcap_set_promisc(cap->p, 0);
	pcap_set_immediate_mode(cap->p, 1);
	pcap_set_buffer_size(cap->p, IFCAP_BUFFER);
	pcap_set_tstamp_precision(cap->p, PCAP_TSTAMP_PRECISION_NANO);
	rc = pcap_activate(cap->p);
	if (rc < 0) {
		e = activate_error(cap->p, rc, ifname, err, errlen);
		goto err_close;
	}
	if (pcap_datalink(cap->p) != DLT_EN10MB) {
		snprintf(err, errlen, "capture on %s: not an Ethernet interface (link type %s)", ifname,
			 pcap_datalink_val_to_name(pcap_datalink(cap->p)) ?: "unknown");
		e = ENOTSUP;
		goto err_close;
	}
	if (bpf != NULL) {
		if (pcap_compile(cap->p, &prog, bpf, 1, PCAP_NETMASK_UNKNOWN) != 0) {
			snprintf(err, errlen, "capture on %s: filter '%s': %s", ifname, bpf,
				 pcap_geterr(cap->p));
			e = EINVAL;
			goto err_close;
		}
		rc = pcap_setfilter(cap->p, &prog);
		pcap_freecode(&prog);
		if (rc != 0) {
			snprintf(err, errlen, "capture on %s: filter '%s': %s", ifname, bpf,
				 pcap_geterr(cap->p));
			e = EINVAL;
			goto err_close;
		}
	}
	if (pcap_setnonblock(cap->p, 1, ebuf) != 0) {
		snprintf(err, errlen, "capture on %s: %s", ifname, ebuf);
		e = EIO;
		goto err_close;
	}
	cap->fd = pcap_get_selectable_fd(cap->p);
	cap->nano = pcap_get_tstamp_precision(cap->p) == PCAP_TSTAMP_PRECISION_NANO;
	cap->w = w;
	rc = pthread_create(&cap->thread, NULL, ifcap_main, cap);
	if (rc != 0) {
		snprintf(err, errlen, "capture on %s: cannot start its thread: %s", ifname,
			 strerror(rc));
		e = rc;
		goto err_close;
	}
	return cap;

err_close:
	pcap_close(cap->p);
err_free:
	free(cap);
	errno = e;
	return NULL;
}

int roce_ifcap_stop(struct roce_ifcap *cap, struct roce_ifcap_stats *st)
{
	struct pcap_stat ps;
	int rc;

	if (cap == NULL)
		return 0;
	__atomic_store_n(&cap->stop, 1, __ATOMIC_RELEASE);
	pthread_join(cap->thread, NULL);
	if (pcap_stats(cap->p, &ps) == 0)
		cap->st.dropped = ps.ps_drop;
	pcap_close(cap->p);
	rc = cap->st.errors != 0 ? -EIO : 0;
	if (st != NULL)
		*st = cap->st;
	free(cap);
	return rc;
}
