/* DPDK ports: an ethdev as the far end of a model link, with ARP and IPv6 ND answered and resolved. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_arp.h>
#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "roce_capture.h"
#include "roce_common.h"
#include "roce_io.h"

#define PORT_BURST 32			/* frames per rx/tx burst */
#define PORT_RXQ 4096			/* received RoCE frames waiting for the link (power of two) */
#define PORT_TXBUF 256			/* frames waiting for rte_eth_tx_burst */
#define PORT_TX_TRIES 4			/* bursts tried on a full TX queue before dropping */
#define PORT_TX_HOLD (PORT_TXBUF - 2 * PORT_BURST) /* a gated sender waits above this */
#define PORT_TX_RESUME (PORT_TXBUF / 2)	/* ... and is kicked again below this */
#define PORT_HOLD_DOWN (10 * ROCE_MS)	/* held this long with the link down: drop */
#define PORT_HOLD_MAX ROCE_SEC		/* held this long at all: the device is gone, drop */
#define PORT_MAX_ADDR 4			/* addresses answered by ARP */
#define PORT_ARP_CACHE 32		/* resolved peers */
#define PORT_ARP_RETRY (100 * ROCE_MS)	/* between two requests for one address */
#define PORT_DEF_DESC 1024		/* descriptors per queue by default */
#define PORT_NO_MTU 9000		/* L3 MTU of a driver without one (memif): a jumbo frame */
#define PORT_ETHER_MAC_CONTROL 0x8808	/* IEEE 802.3 MAC control: PAUSE and PFC */
#define PORT_ND_CACHE 32		/* resolved IPv6 neighbours */
#define ND_SOLICIT 135			/* ICMPv6 neighbour solicitation (RFC 4861 4.3) */
#define ND_ADVERT 136			/* ICMPv6 neighbour advertisement (RFC 4861 4.4) */
#define ND_OPT_SRC_LL 1			/* option: source link-layer address */
#define ND_OPT_TGT_LL 2			/* option: target link-layer address */
#define ND_LEN 32			/* NS/NA: 24 bytes and one 8-byte link-layer option */
#define ND_NA_FLAGS 0x60		/* Solicited | Override */

/* One resolved (or being resolved) neighbour. */
struct arp_entry {
	uint32_t ip;			/* IPv4, network order; 0: free */
	bool valid;			/* @mac is known */
	uint8_t mac[6];			/* its MAC */
	roce_time_t asked;		/* last request sent (engine time) */
};

/* One IPv6 neighbour (RFC 4861), resolved or being resolved. */
struct nd_entry {
	uint8_t ip[16];			/* its address */
	bool used;			/* slot taken */
	bool valid;			/* @mac is known */
	uint8_t mac[6];			/* its MAC */
	roce_time_t asked;		/* last solicitation sent (engine time) */
};

struct roce_port {
	struct roce_engine *eng;	/* clock, pool, poller */
	uint16_t port_id;		/* the ethdev */
	char name[RTE_ETH_NAME_MAX_LEN]; /* its name */
	struct rte_device *rdev;	/* for rte_dev_remove() */
	struct rte_ether_addr mac;	/* its MAC */
	uint32_t if_index;		/* kernel interface behind it, or 0 */

	struct roce_link *link;		/* where received RoCE frames go */
	int dir;			/* our sending direction on it */

	struct rte_mbuf *rxq[PORT_RXQ];	/* received RoCE frames, until the link pulls them */
	uint32_t rxq_head, rxq_tail;	/* free-running: consumer, producer */
	struct rte_mbuf *txbuf[PORT_TXBUF]; /* frames to send */
	uint16_t ntx;			/* entries in @txbuf */
	struct roce_link_end sender;	/* the gated sender (roce_port_gate), or owner NULL */
	struct roce_link *gate_link;	/* its link, if not @link (roce_port_gate_link) */
	int gate_dir;			/* its direction on @gate_link */
	bool held;			/* it was refused a frame: kick the link when there is room */
	roce_time_t held_since;		/* when that began */

	uint32_t addr[PORT_MAX_ADDR];	/* our IPv4 addresses, network order */
	unsigned int naddr;		/* entries in @addr */
	struct arp_entry arp[PORT_ARP_CACHE]; /* neighbour cache */
	uint8_t addr6[PORT_MAX_ADDR][16]; /* our IPv6 addresses, answered by ND */
	unsigned int naddr6;		/* entries in @addr6 */
	struct nd_entry nd[PORT_ND_CACHE]; /* IPv6 neighbour cache */

	bool bridge;			/* conf.bridge: everything to the link */
	bool no_wire_mtu;		/* the driver has no wire MTU of its own (memif) */
	bool gated;			/* memif: its bursts hold the interrupt thread (intr_gate) */
	char *park_key;			/* memif: its devargs, to park it under at close */
	bool tx_base_due;		/* taken up from parking: @tx_base_* not read yet */
	uint64_t tx_base_frames;	/* ... what its TX queue counted before this open */
	uint64_t tx_base_bytes;
	uint64_t os_rx_base;		/* the kernel interface's rx_packets when the port started */
	struct roce_port_stats st;	/* the port's own counters (ethdev ones read on demand) */
	struct roce_capture *cap;	/* live capture (io_capture.c), or NULL */
};

static uint64_t kernel_rx_packets(uint32_t if_index);

/*
 * net_memif's control path runs in the EAL interrupt thread, and when a peer leaves it unmaps the
 * port's rings and buffers (memif_disconnect()) with nothing to stop a burst in the data thread
 * that is reading them at that moment: the process dies of SIGSEGV in eth_memif_rx() or
 * eth_memif_tx() (DPDK 22.11, and upstream since; tests/live_memif.py caught one case in eight).
 * So the data thread's bursts on a memif port hold the interrupt thread in this gate, an EAL
 * alarm of ours: a burst that finds it out calls it in (gate_acquire()) and waits until it is
 * there; it stays at most PORT_GATE_HOLD_US, then leaves when no burst is under way (a Dekker
 * pair: @held and @in_burst, both sequentially consistent), runs what it has waiting (the memif
 * handshake, a peer's leaving) and is called in again by the next burst. A data thread blocked
 * elsewhere (perftest's TCP exchange) thus holds nothing. One data thread at a time uses the
 * gate (rocelab runs its ports from one).
 *
 * Every burst waits on the interrupt thread's coming, so it must come soon: a port that sends
 * nothing for half a second lets its peer's retries run out. The EAL pins it to the main lcore's
 * core, where on a busy machine it queues behind every busy thread there; while memif ports are
 * open it may run on every core the process may. The data thread spins for it, then yields its
 * core between looks; if it is still not there after PORT_GATE_LATE_US the bursts go on ungated
 * until it comes (said once): a run on a starved machine slows down rather than fails, at the
 * risk the gate exists for, and only while the thread that would run a peer's leaving is not
 * running either.
 */
#define PORT_GATE_HOLD_US 10000		/* the interrupt thread held at most this long */
#define PORT_GATE_RETRY_US 100		/* ... then it looks this often for a gap between bursts */
#define PORT_GATE_SPIN_US 2000		/* a burst spins this long for it, then yields between looks */
#define PORT_GATE_LATE_US 20000		/* not there by then: bursts go ungated until it comes */
#define PORT_GATE_CLOSE_S 2		/* a port's set-up or close waits this long for it */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int users;		/* open memif ports */
	int held;			/* the interrupt thread waits in intr_gate() */
	int in_burst;			/* the data thread is in a burst (or a close) */
	int late;			/* called in, not there after PORT_GATE_LATE_US: ungated */
	bool pending;			/* an alarm for intr_gate() is set */
	bool stop;			/* the last port closed */
	bool broken;			/* no alarm can be set: bursts go ungated (said once) */
	bool said_late;			/* the first late coming was said */
} gate = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void timespec_add_us(struct timespec *t, long us)
{
	t->tv_nsec += us * 1000;
	t->tv_sec += t->tv_nsec / 1000000000;
	t->tv_nsec %= 1000000000;
}

/* The interrupt thread, in an alarm: held until no burst is under way and the hold is over. */
static void intr_gate(void *arg)
{
	struct timespec until;

	RTE_SET_USED(arg);
	pthread_mutex_lock(&gate.mu);
	gate.pending = false;
	__atomic_store_n(&gate.held, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&gate.late, 0, __ATOMIC_SEQ_CST);
	clock_gettime(CLOCK_REALTIME, &until);
	timespec_add_us(&until, PORT_GATE_HOLD_US);
	while (!gate.stop) {
		if (pthread_cond_timedwait(&gate.cv, &gate.mu, &until) != ETIMEDOUT)
			continue;
		__atomic_store_n(&gate.held, 0, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&gate.in_burst, __ATOMIC_SEQ_CST) == 0)
			break;
		__atomic_store_n(&gate.held, 1, __ATOMIC_SEQ_CST);	/* mid-burst: a while more */
		clock_gettime(CLOCK_REALTIME, &until);
		timespec_add_us(&until, PORT_GATE_RETRY_US);
	}
	__atomic_store_n(&gate.held, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&gate.mu);
}

/* The interrupt thread's id: the thread the EAL names so (its pthread_t is not exported). */
static pid_t intr_thread_find(void)
{
	char path[sizeof("/proc/self/task//comm") + NAME_MAX], comm[32];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (dir == NULL)
		return 0;
	while (tid == 0 && (d = readdir(dir)) != NULL) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL && strcmp(comm, "eal-intr-thread\n") == 0)
			tid = (pid_t)atoi(d->d_name);
		fclose(f);
	}
	closedir(dir);
	return tid;
}

/*
 * The first memif port opened: the interrupt thread may run on every core the data thread may,
 * not only the main lcore's (where the EAL pins it). Its priority stays the process's: a higher
 * one would preempt the data threads at each of its looks for a gap between bursts.
 */
static void intr_thread_unpin(void)
{
	cpu_set_t cpus;
	pid_t tid = intr_thread_find();

	if (tid != 0 && sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		(void)sched_setaffinity(tid, sizeof(cpus), &cpus);
}

/* Call the interrupt thread in, unless it is on its way. */
static void gate_call_in(void)
{
	pthread_mutex_lock(&gate.mu);
	if (!gate.pending && !gate.broken) {
		gate.pending = rte_eal_alarm_set(1, intr_gate, NULL) == 0;
		if (!gate.pending) {
			gate.broken = true;
			ROCE_LOG(WARN, "memif: no EAL alarm for the port gate: a peer leaving "
				 "during a burst may now crash this process");
		}
	}
	pthread_mutex_unlock(&gate.mu);
}

static void gate_said_late(uint64_t waited)
{
	if (gate.said_late)
		return;
	gate.said_late = true;
	ROCE_LOG(INFO, "memif: the EAL interrupt thread is late (%.1f ms): bursts go ungated "
		 "until it comes", (double)waited * 1e3 / (double)rte_get_tsc_hz());
}

/*
 * A burst found the interrupt thread out: call it in and wait until it is there, at most
 * @wait_us. Returns with @in_burst set, the thread held or (late, broken) not.
 */
static void __attribute__((noinline)) gate_acquire(uint64_t wait_us)
{
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t start = rte_get_tsc_cycles();
	const uint64_t spin = start + hz * PORT_GATE_SPIN_US / 1000000;
	const uint64_t deadline = start + hz / 1000000 * wait_us;

	for (;;) {
		uint64_t now = start;

		__atomic_store_n(&gate.in_burst, 0, __ATOMIC_SEQ_CST);
		gate_call_in();
		/* spin first: a sleeping data thread hands its core to whatever else is busy on
		 * it for a time slice (milliseconds), and the ports overflow meanwhile */
		while (!gate.broken && !__atomic_load_n(&gate.held, __ATOMIC_SEQ_CST)) {
			now = rte_get_tsc_cycles();
			if (now > deadline)
				break;
			if (now < spin)
				rte_pause();
			else
				sched_yield();	/* the interrupt thread may be queued on this core */
		}
		__atomic_store_n(&gate.in_burst, 1, __ATOMIC_SEQ_CST);
		if (gate.broken || __atomic_load_n(&gate.held, __ATOMIC_SEQ_CST))
			return;
		if (now > deadline) {
			__atomic_store_n(&gate.late, 1, __ATOMIC_SEQ_CST);
			gate_said_late(now - start);
			return;
		}
	}
}

/* Before a burst on a memif port: the interrupt thread held, or late (and called in). */
static inline void gate_enter(void)
{
	__atomic_store_n(&gate.in_burst, 1, __ATOMIC_SEQ_CST);
	if (roce_likely(__atomic_load_n(&gate.held, __ATOMIC_SEQ_CST)) || gate.broken)
		return;
	if (!__atomic_load_n(&gate.late, __ATOMIC_SEQ_CST))
		gate_acquire(PORT_GATE_LATE_US);
	else
		gate_call_in();		/* still on its way, or came and went while we looked */
}

/* Before a port's set-up or close: the interrupt thread held, waited for longer than a burst. */
static void gate_enter_ctl(void)
{
	__atomic_store_n(&gate.in_burst, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&gate.held, __ATOMIC_SEQ_CST) && !gate.broken)
		gate_acquire((uint64_t)PORT_GATE_CLOSE_S * 1000000);
}

static inline void gate_leave(void)
{
	__atomic_store_n(&gate.in_burst, 0, __ATOMIC_SEQ_CST);
}

static void gate_open(void)
{
	bool first;

	pthread_mutex_lock(&gate.mu);
	first = gate.users++ == 0;
	if (first)
		gate.stop = false;
	pthread_mutex_unlock(&gate.mu);
	if (first)
		intr_thread_unpin();
}

/* The last memif port closed: the interrupt thread goes free, and no alarm is left set. */
static void gate_close(void)
{
	bool last;

	pthread_mutex_lock(&gate.mu);
	last = --gate.users == 0;
	if (last) {
		gate.stop = true;
		pthread_cond_broadcast(&gate.cv);
	}
	pthread_mutex_unlock(&gate.mu);
	if (last) {
		(void)rte_eal_alarm_cancel(intr_gate, NULL);	/* waits for it to leave */
		gate.pending = false;
		__atomic_store_n(&gate.late, 0, __ATOMIC_SEQ_CST);
	}
}

/* ---- transmit ---- */

void roce_port_flush(struct roce_port *p)
{
	uint16_t sent = 0;

	for (int tries = 0; sent < p->ntx && tries < PORT_TX_TRIES; tries++)
		sent += roce_port_tx_burst(p, p->txbuf + sent, p->ntx - sent);
	if (sent < p->ntx)
		memmove(p->txbuf, p->txbuf + sent, (size_t)(p->ntx - sent) * sizeof(p->txbuf[0]));
	p->ntx -= sent;
}

/*
 * A port taken up from parking keeps its TX queue, whose counters go on from its earlier opens:
 * memif resets and reports them only while a peer is connected. They are read in the first
 * burst that finds this open's peer there, before it sends: until then memif took nothing, and
 * the peer cannot come during the burst (it comes in the interrupt thread, which the gate holds).
 */
static void __attribute__((noinline)) port_tx_base(struct roce_port *p)
{
	struct rte_eth_link link;
	struct rte_eth_stats es;

	if (rte_eth_link_get_nowait(p->port_id, &link) != 0 || !link.link_status ||
	    rte_eth_stats_get(p->port_id, &es) != 0)
		return;
	p->tx_base_frames = es.opackets;
	p->tx_base_bytes = es.obytes;
	p->tx_base_due = false;
}

uint16_t roce_port_tx_burst(struct roce_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent;

	if (p->gated) {
		gate_enter();
		if (roce_unlikely(p->tx_base_due))
			port_tx_base(p);
	}
	sent = roce_unlikely(p->cap != NULL) ? roce_capture_tx_burst(p->cap, p->port_id, pkts, n) :
					       rte_eth_tx_burst(p->port_id, 0, pkts, n);
	if (p->gated)
		gate_leave();
	p->st.tx_frames += sent;
	return sent;
}

void roce_port_set_capture(struct roce_port *p, struct roce_capture *cap)
{
	p->cap = cap;
}

/* Queue @p m for the wire; a full buffer is flushed first, and what still does not fit is dropped. */
static void port_tx(struct roce_port *p, struct rte_mbuf *m)
{
	/* leaving the process: the ICRC as the wire has it, or not at all */
	if (roce_unlikely(roce_wire_icrc_settle(m) != 0)) {
		p->st.tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (p->ntx == PORT_TXBUF)
		roce_port_flush(p);
	if (p->ntx == PORT_TXBUF) {
		p->st.tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	p->txbuf[p->ntx++] = m;
	if (p->ntx >= PORT_BURST)
		roce_port_flush(p);
}

/* The link delivered a frame the emulated NIC sent: it goes out of the port. */
static void end_rx(void *owner, struct rte_mbuf *m)
{
	port_tx(owner, m);
}

/* The link's port-to-NIC wire is idle: the next received frame, if any. */
static struct rte_mbuf *end_pull(void *owner)
{
	struct roce_port *p = owner;

	if (p->rxq_head == p->rxq_tail)
		return NULL;
	return p->rxq[p->rxq_head++ & (PORT_RXQ - 1)];
}

struct roce_link_end roce_port_link_end(struct roce_port *p)
{
	return (struct roce_link_end){ .owner = p, .pull = end_pull, .rx = end_rx };
}

static bool port_link_up(const struct roce_port *p)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(p->port_id, &link) != 0 || link.link_status;
}

/* The gated sender's pull: nothing while the transmit buffer is nearly full. */
static struct rte_mbuf *gate_pull(void *owner)
{
	struct roce_port *p = owner;

	if (p->ntx > PORT_TX_HOLD)
		roce_port_flush(p);
	if (roce_unlikely(p->ntx > PORT_TX_HOLD)) {
		roce_time_t now = roce_engine_now(p->eng);

		if (!p->held) {
			p->st.tx_held++;
			p->held = true;
			p->held_since = now;
		}
		/*
		 * A device whose link is down (memif refuses every frame while its peer is gone),
		 * or that has taken nothing for a second: its frames are dropped and counted, as a
		 * NIC's queue does on a dead link, rather than stalling the sender for ever (and,
		 * behind rocelab switch, PFC across the fabric). A peer that is only slow, or off
		 * its core for a few milliseconds, is waited for.
		 */
		if (now - p->held_since < PORT_HOLD_DOWN ||
		    (now - p->held_since < PORT_HOLD_MAX && port_link_up(p)))
			return NULL;
	} else {
		p->held = false;	/* running again (a flush above made room) */
	}
	return p->sender.pull(p->sender.owner);
}

static void gate_rx(void *owner, struct rte_mbuf *m)
{
	struct roce_port *p = owner;

	p->sender.rx(p->sender.owner, m);
}

struct roce_link_end roce_port_gate(struct roce_port *p, const struct roce_link_end *sender)
{
	p->sender = *sender;
	return (struct roce_link_end){ .owner = p, .pull = gate_pull, .rx = gate_rx };
}

void roce_port_gate_link(struct roce_port *p, struct roce_link *link, int dir)
{
	p->gate_link = link;
	p->gate_dir = dir;
}

/* Room again after a hold: the gated sender's direction pulls. */
static void gate_resume(struct roce_port *p)
{
	if (!p->held || p->ntx >= PORT_TX_RESUME)
		return;
	if (p->gate_link != NULL) {
		p->held = false;
		roce_link_kick(p->gate_link, p->gate_dir);
	} else if (p->link != NULL) {
		p->held = false;
		roce_link_kick(p->link, 1 - p->dir);
	}
}

void roce_port_attach(struct roce_port *p, struct roce_link *link, int dir)
{
	p->link = link;
	p->dir = dir;
}

/* ---- ARP (RFC 826) ---- */

static bool is_our_addr(const struct roce_port *p, uint32_t ip)
{
	for (unsigned int i = 0; i < p->naddr; i++)
		if (p->addr[i] == ip)
			return true;
	return false;
}

static struct arp_entry *arp_find(struct roce_port *p, uint32_t ip, bool create)
{
	struct arp_entry *free_e = NULL;

	for (unsigned int i = 0; i < PORT_ARP_CACHE; i++) {
		if (p->arp[i].ip == ip)
			return &p->arp[i];
		if (p->arp[i].ip == 0 && free_e == NULL)
			free_e = &p->arp[i];
	}
	if (!create)
		return NULL;
	if (free_e == NULL)
		free_e = &p->arp[ip % PORT_ARP_CACHE];	/* full: evict one */
	memset(free_e, 0, sizeof(*free_e));
	free_e->ip = ip;
	return free_e;
}

static void arp_learn(struct roce_port *p, uint32_t ip, const struct rte_ether_addr *mac)
{
	struct arp_entry *e;

	if (ip == 0 || rte_is_zero_ether_addr(mac) || !rte_is_unicast_ether_addr(mac))
		return;
	e = arp_find(p, ip, true);
	memcpy(e->mac, mac->addr_bytes, 6);
	e->valid = true;
}

/* Build and send one ARP packet (request: @p tha is ignored and the frame is broadcast). */
static void arp_send(struct roce_port *p, uint16_t op, uint32_t sip, uint32_t tip,
		     const struct rte_ether_addr *tha)
{
	struct rte_mbuf *m = roce_engine_mbuf(p->eng);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (op == RTE_ARP_OP_REQUEST)
		memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	else
		rte_ether_addr_copy(tha, &eth->dst_addr);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&p->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = sip;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	else
		rte_ether_addr_copy(tha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = tip;
	port_tx(p, m);
}

static void arp_rx(struct roce_port *p, const struct rte_arp_hdr *arp)
{
	uint32_t sip = arp->arp_data.arp_sip, tip = arp->arp_data.arp_tip;
	uint16_t op = rte_be_to_cpu_16(arp->arp_opcode);

	p->st.rx_arp++;
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		return;
	/* our own requests, seen again on a shared interface, teach nothing */
	if (rte_is_same_ether_addr(&arp->arp_data.arp_sha, &p->mac))
		return;
	/* RFC 826: update the sender if we know it or if the packet is for us */
	if (is_our_addr(p, tip) || arp_find(p, sip, false) != NULL)
		arp_learn(p, sip, &arp->arp_data.arp_sha);
	if (op == RTE_ARP_OP_REQUEST && is_our_addr(p, tip)) {
		arp_send(p, RTE_ARP_OP_REPLY, tip, sip, &arp->arp_data.arp_sha);
		p->st.arp_replies++;
	}
}

/* ---- IPv6 neighbour discovery (RFC 4861): NS answered for our addresses, peers resolved ---- */

static bool is_our_addr6(const struct roce_port *p, const uint8_t *ip)
{
	for (unsigned int i = 0; i < p->naddr6; i++)
		if (memcmp(p->addr6[i], ip, 16) == 0)
			return true;
	return false;
}

static struct nd_entry *nd_find(struct roce_port *p, const uint8_t *ip, bool create)
{
	struct nd_entry *free_e = NULL;

	for (unsigned int i = 0; i < PORT_ND_CACHE; i++) {
		if (p->nd[i].used && memcmp(p->nd[i].ip, ip, 16) == 0)
			return &p->nd[i];
		if (!p->nd[i].used && free_e == NULL)
			free_e = &p->nd[i];
	}
	if (!create)
		return NULL;
	if (free_e == NULL)
		free_e = &p->nd[ip[15] % PORT_ND_CACHE];	/* full: evict one */
	memset(free_e, 0, sizeof(*free_e));
	memcpy(free_e->ip, ip, 16);
	free_e->used = true;
	return free_e;
}

static void nd_learn(struct roce_port *p, const uint8_t *ip, const uint8_t *mac)
{
	static const uint8_t unspec[16];
	struct nd_entry *e;
	struct rte_ether_addr ea;

	memcpy(ea.addr_bytes, mac, 6);
	if (memcmp(ip, unspec, 16) == 0 || !rte_is_unicast_ether_addr(&ea) ||
	    rte_is_zero_ether_addr(&ea))
		return;
	e = nd_find(p, ip, true);
	memcpy(e->mac, mac, 6);
	e->valid = true;
}

/*
 * Send a solicitation for @p target (to its solicited-node multicast address) or an
 * advertisement of our @p target to @p dst_ip / @p dst_mac, each with our MAC as its option.
 */
static void nd_send(struct roce_port *p, uint8_t type, const uint8_t *src_ip, const uint8_t *dst_ip,
		    const struct rte_ether_addr *dst_mac, const uint8_t *target)
{
	struct rte_mbuf *m = roce_engine_mbuf(p->eng);
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip;
	uint8_t *icmp;

	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*ip) + ND_LEN);
	ip = (struct rte_ipv6_hdr *)(eth + 1);
	icmp = (uint8_t *)(ip + 1);
	rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(ND_LEN);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = 255;		/* RFC 4861 7.1.1: receivers drop anything else */
	memcpy(ip->src_addr, src_ip, 16);
	memcpy(ip->dst_addr, dst_ip, 16);
	memset(icmp, 0, ND_LEN);
	icmp[0] = type;
	if (type == ND_ADVERT)
		icmp[4] = ND_NA_FLAGS;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ND_SOLICIT ? ND_OPT_SRC_LL : ND_OPT_TGT_LL;
	icmp[25] = 1;			/* length in units of 8 bytes */
	memcpy(icmp + 26, p->mac.addr_bytes, 6);
	{
		uint16_t ck = rte_ipv6_udptcp_cksum(ip, icmp);

		memcpy(icmp + 2, &ck, 2);
	}
	port_tx(p, m);
}

/* The link-layer address option of type @p want in an NS/NA's options, or NULL. */
static const uint8_t *nd_opt_mac(const uint8_t *opt, uint32_t len, uint8_t want)
{
	while (len >= 8) {
		uint32_t olen = (uint32_t)opt[1] * 8;

		if (olen == 0 || olen > len)
			return NULL;	/* RFC 4861 4.6: a zero length is invalid */
		if (opt[0] == want && olen >= 8)
			return opt + 2;
		opt += olen;
		len -= olen;
	}
	return NULL;
}

/* An ICMPv6 NS or NA at @p off (the IPv6 header). @return false if it is neither. */
static bool nd_rx(struct roce_port *p, const struct rte_mbuf *m, uint32_t off)
{
	static const uint8_t unspec[16];
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv6_hdr *ip = (const void *)(b + off);
	const uint8_t *icmp, *target, *mac;
	uint32_t plen;

	if (off + sizeof(*ip) + 24 > m->data_len || ip->proto != IPPROTO_ICMPV6)
		return false;
	plen = rte_be_to_cpu_16(ip->payload_len);
	icmp = b + off + sizeof(*ip);
	if ((icmp[0] != ND_SOLICIT && icmp[0] != ND_ADVERT) || plen < 24 ||
	    off + sizeof(*ip) + plen > m->data_len)
		return false;
	p->st.rx_nd++;
	/* RFC 4861 7.1: hop limit 255, code 0, else not from this link: ignore */
	if (ip->hop_limits != 255 || icmp[1] != 0)
		return true;
	target = icmp + 8;
	if (icmp[0] == ND_SOLICIT) {
		struct rte_ether_addr to;

		/* a DAD probe (unspecified source): we do not defend addresses */
		if (memcmp(ip->src_addr, unspec, 16) == 0 || !is_our_addr6(p, target))
			return true;
		mac = nd_opt_mac(icmp + 24, plen - 24, ND_OPT_SRC_LL);
		memcpy(to.addr_bytes, mac != NULL ? mac : b + 6, 6);
		nd_learn(p, ip->src_addr, to.addr_bytes);
		nd_send(p, ND_ADVERT, target, ip->src_addr, &to, target);
		p->st.nd_replies++;
		return true;
	}
	mac = nd_opt_mac(icmp + 24, plen - 24, ND_OPT_TGT_LL);
	if (nd_find(p, target, false) != NULL && !is_our_addr6(p, target))
		nd_learn(p, target, mac != NULL ? mac : b + 6);
	return true;
}

int roce_port_add_addr(struct roce_port *p, const struct roce_ip_addr *ip, uint8_t ip_ver)
{
	uint32_t a;

	if (ip_ver == 6) {
		if (is_our_addr6(p, ip->b))
			return 0;
		if (p->naddr6 == PORT_MAX_ADDR)
			return -ENOSPC;
		memcpy(p->addr6[p->naddr6++], ip->b, 16);
		return 0;
	}
	if (ip_ver != 4)
		return -EAFNOSUPPORT;
	memcpy(&a, ip->b, 4);
	if (is_our_addr(p, a))
		return 0;
	if (p->naddr == PORT_MAX_ADDR)
		return -ENOSPC;
	p->addr[p->naddr++] = a;
	/* a gratuitous ARP would be polite; peers ask when they need us */
	return 0;
}

int roce_port_resolve(struct roce_port *p, const struct roce_ip_addr *ip, uint8_t ip_ver,
		      uint8_t mac[6])
{
	roce_time_t now = roce_engine_now(p->eng);
	struct arp_entry *e;
	uint32_t a;

	if (ip_ver == 6) {
		struct nd_entry *n;

		if (p->naddr6 == 0)
			return -EADDRNOTAVAIL;
		n = nd_find(p, ip->b, true);
		if (n->valid) {
			memcpy(mac, n->mac, 6);
			return 0;
		}
		if (n->asked == 0 || now - n->asked >= PORT_ARP_RETRY) {
			/* to the solicited-node address ff02::1:ffXX:XXXX, MAC 33:33:ff:XX:XX:XX */
			uint8_t dst[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
			struct rte_ether_addr dmac = { { 0x33, 0x33, 0xff } };

			memcpy(dst + 13, ip->b + 13, 3);
			memcpy(dmac.addr_bytes + 3, ip->b + 13, 3);
			n->asked = now ? now : 1;
			nd_send(p, ND_SOLICIT, p->addr6[0], dst, &dmac, ip->b);
			p->st.nd_requests++;
			roce_port_flush(p);
		}
		return -EAGAIN;
	}
	if (ip_ver != 4)
		return -EAFNOSUPPORT;
	if (p->naddr == 0)
		return -EADDRNOTAVAIL;
	memcpy(&a, ip->b, 4);
	e = arp_find(p, a, true);
	if (e->valid) {
		memcpy(mac, e->mac, 6);
		return 0;
	}
	if (e->asked == 0 || now - e->asked >= PORT_ARP_RETRY) {
		e->asked = now ? now : 1;
		arp_send(p, RTE_ARP_OP_REQUEST, p->addr[0], a, NULL);
		p->st.arp_requests++;
		roce_port_flush(p);
	}
	return -EAGAIN;
}

/* ---- receive ---- */

/*
 * Ethertype after any VLAN tags and the offset of what follows; @return 0 if truncated. RoCE
 * frames go to the link whole, tags included: lib/wire parses them.
 */
static uint16_t frame_type(const struct rte_mbuf *m, uint32_t *off)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t o = 12;
	uint16_t type;

	for (;;) {
		if (o + 2 > m->data_len)
			return 0;
		type = (uint16_t)(b[o] << 8 | b[o + 1]);
		if (type != RTE_ETHER_TYPE_VLAN && type != RTE_ETHER_TYPE_QINQ)
			break;
		o += 4;
	}
	*off = o + 2;
	return type;
}

/* UDP to port 4791 (RoCEv2), over IPv4 or IPv6. */
static bool is_rocev2(const struct rte_mbuf *m, uint16_t type, uint32_t off)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_udp_hdr *udp;
	uint32_t l4;

	if (type == RTE_ETHER_TYPE_IPV4) {
		const struct rte_ipv4_hdr *ip = (const void *)(b + off);

		if (off + sizeof(*ip) > m->data_len || ip->next_proto_id != IPPROTO_UDP)
			return false;
		l4 = off + (uint32_t)(ip->version_ihl & 0xf) * 4;
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		const struct rte_ipv6_hdr *ip = (const void *)(b + off);

		if (off + sizeof(*ip) > m->data_len || ip->proto != IPPROTO_UDP)
			return false;
		l4 = off + sizeof(*ip);
	} else {
		return false;
	}
	if (l4 + sizeof(*udp) > m->data_len)
		return false;
	udp = (const void *)(b + l4);
	return udp->dst_port == rte_cpu_to_be_16(4791);
}

/* Hand a frame to the link's port-to-NIC direction (queued until the wire is idle). */
static void to_link(struct roce_port *p, struct rte_mbuf *m)
{
	if (p->link == NULL || p->rxq_tail - p->rxq_head == PORT_RXQ) {
		p->st.rx_queue_full++;
		rte_pktmbuf_free(m);
		return;
	}
	p->rxq[p->rxq_tail++ & (PORT_RXQ - 1)] = m;
	p->st.rx_roce++;
}

static void classify(struct roce_port *p, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	bool to_us = rte_is_same_ether_addr(&eth->dst_addr, &p->mac);
	uint32_t off;
	uint16_t type;

	if (p->bridge) {
		to_link(p, m);
		return;
	}
	if (m->data_len < sizeof(*eth) || (type = frame_type(m, &off)) == 0) {
		p->st.rx_other++;
		rte_pktmbuf_free(m);
		return;
	}
	if (type == RTE_ETHER_TYPE_ARP && off + sizeof(struct rte_arp_hdr) <= m->data_len &&
	    (to_us || rte_is_broadcast_ether_addr(&eth->dst_addr))) {
		arp_rx(p, rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, off));
		rte_pktmbuf_free(m);
		return;
	}
	/* neighbour discovery comes to our MAC or to a (solicited-node) multicast address */
	if (type == RTE_ETHER_TYPE_IPV6 && (to_us || rte_is_multicast_ether_addr(&eth->dst_addr)) &&
	    nd_rx(p, m, off)) {
		rte_pktmbuf_free(m);
		return;
	}
	/* PFC and PAUSE (IEEE 802.3 Annex 31B: MAC control) go to a reserved multicast address */
	if ((to_us && is_rocev2(m, type, off)) || type == PORT_ETHER_MAC_CONTROL) {
		to_link(p, m);
		return;
	}
	p->st.rx_other++;
	rte_pktmbuf_free(m);
}

static void port_poll(struct roce_engine *eng, void *arg)
{
	struct roce_port *p = arg;
	struct rte_mbuf *pkts[PORT_BURST];
	uint32_t queued = p->rxq_tail;
	uint16_t n;

	RTE_SET_USED(eng);
	if (p->gated)
		gate_enter();
	n = rte_eth_rx_burst(p->port_id, 0, pkts, PORT_BURST);
	if (p->gated)
		gate_leave();
	if (roce_unlikely(p->cap != NULL) && n != 0)
		roce_capture_rx(p->cap, pkts, n);
	for (uint16_t i = 0; i < n; i++)
		classify(p, pkts[i]);
	if (p->rxq_tail != queued && p->link != NULL)
		roce_link_kick(p->link, p->dir);
	if (p->ntx)
		roce_port_flush(p);
	if (roce_unlikely(p->held))
		gate_resume(p);
}

/* ---- set-up ---- */

#define FAIL(e, ...) \
	do { \
		snprintf(err, errlen, __VA_ARGS__); \
		errno = (e); \
	} while (0)

/*
 * A memif port in the server role (memif's default) listens on a control socket, and DPDK 22.11
 * never closes that socket when the device goes: memif_socket_remove_device() unlinks a socket
 * file but leaves the fd open and its interrupt callback registered. On an abstract address
 * (memif's default) the leaked listener keeps the address until the process exits, so the next
 * probe of the same port fails "Address already in use": a --serve-forever host served one
 * client. Closing the fd ourselves is no cure: the EAL would go on calling the driver's callback,
 * with its freed socket, for whatever descriptor next takes that number. So a listening memif
 * port is parked at close (stopped, its listener kept) and taken up by the next open of the same
 * devargs, which gives it a new RX queue on the new engine's pool.
 *
 * A memif port in the client role is parked too (stopped, it has left its server), and a port
 * taken up keeps its TX queue, which holds nothing of the engine (memif ignores nb_tx_desc):
 * memif_tx_queue_release(), at a close or a new queue's set-up, frees the queue but not the
 * interrupt instance memif_tx_queue_setup() allocated for it, 27 KiB of the EAL's heap that a
 * --serve-forever host would lose with each client. Its counters: port_tx_base().
 */
#define PORT_PARKED 8			/* memif ports kept for a later open */

static struct parked_port {
	char *devargs;			/* what it was opened with (owned); NULL: free slot */
	uint16_t port_id;		/* its ethdev, stopped */
	struct rte_device *rdev;	/* its device, still probed */
} parked[PORT_PARKED];

/* Does this memif devargs string make a listener (role=server, the driver's default)? */
static bool memif_listens(const char *devargs)
{
	for (const char *a = strchr(devargs, ','); a != NULL; a = strchr(a + 1, ',')) {
		size_t len = strcspn(a + 1, ",");

		if ((len == 11 && strncmp(a + 1, "role=client", 11) == 0) ||
		    (len == 10 && strncmp(a + 1, "role=slave", 10) == 0))
			return false;
	}
	return true;
}

/* Take up the port parked under @p devargs, if any: @return true with p->port_id, p->rdev set. */
static bool unpark(struct roce_port *p, const char *devargs)
{
	for (unsigned int i = 0; i < PORT_PARKED; i++) {
		if (parked[i].devargs == NULL || strcmp(parked[i].devargs, devargs) != 0)
			continue;
		p->port_id = parked[i].port_id;
		p->rdev = parked[i].rdev;
		p->park_key = parked[i].devargs;
		parked[i].devargs = NULL;
		return true;
	}
	return false;
}

/* Keep a stopped listening memif port for the next open: @return false when there is no room. */
static bool park(struct roce_port *p)
{
	for (unsigned int i = 0; p->park_key != NULL && i < PORT_PARKED; i++) {
		if (parked[i].devargs != NULL)
			continue;
		parked[i].devargs = p->park_key;
		parked[i].port_id = p->port_id;
		parked[i].rdev = p->rdev;
		p->park_key = NULL;
		return true;
	}
	return false;
}

/* The ethdev a probe of @p name made: by name, then by the name of its device (a PCI address). */
static int find_port(const char *name, uint16_t *port_id)
{
	uint16_t pid;

	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	RTE_ETH_FOREACH_DEV(pid) {
		struct rte_eth_dev_info info;

		if (rte_eth_dev_info_get(pid, &info) == 0 && info.device != NULL &&
		    strcmp(rte_dev_name(info.device), name) == 0) {
			*port_id = pid;
			return 0;
		}
	}
	return -ENODEV;
}

/* rte_dev_probe() with the EAL's own lines on failure ("failed to parse device", "Failed to
 * attach device on primary process") held back: they repeat what the caller's one line says.
 * A driver's reason (its own log type) still shows; --log-level info or debug shows all. */
static int probe_quietly(const char *devargs)
{
	int level = rte_log_get_level(RTE_LOGTYPE_EAL);
	bool quiet = roce_log_threshold < ROCE_LOG_INFO && level > (int)RTE_LOG_CRIT;
	int rc;

	if (quiet)
		rte_log_set_level(RTE_LOGTYPE_EAL, RTE_LOG_CRIT);
	rc = rte_dev_probe(devargs);
	if (quiet)
		rte_log_set_level(RTE_LOGTYPE_EAL, (uint32_t)level);
	return rc;
}

/* Why rte_dev_probe() failed, in words: DPDK 22.11 returns -EFAULT when no bus recognises the
 * name (rte_devargs_parse()), and a driver's bare -1 comes back as -EPERM. */
static const char *probe_strerror(int rc, const char *name)
{
	static __thread char buf[RTE_ETH_NAME_MAX_LEN + 64];

	if (rc == -EFAULT) {
		snprintf(buf, sizeof(buf), "no driver called '%s'", name);
		return buf;
	}
	if (rc == -EPERM || rc == -1)
		return "its driver refused it";
	return rte_strerror(-rc);
}

/*
 * The kernel interface an af_packet or pcap port would bind (its iface= argument), when there
 * is none of that name: else NULL. Asked before the probe, whose driver would only log an
 * ioctl's errno on a line of its own.
 */
static const char *missing_iface(const char *devargs, char *buf, size_t size)
{
	const char *arg;

	if (strncmp(devargs, "net_af_packet", 13) != 0 && strncmp(devargs, "net_pcap", 8) != 0)
		return NULL;
	for (arg = strchr(devargs, ','); arg != NULL; arg = strchr(arg + 1, ',')) {
		size_t len = strcspn(arg + 1, ",");

		if (strncmp(arg + 1, "iface=", 6) != 0 || len - 6 >= size || len == 6)
			continue;
		snprintf(buf, size, "%.*s", (int)(len - 6), arg + 7);
		return if_nametoindex(buf) == 0 ? buf : NULL;
	}
	return NULL;
}

/*
 * The arguments each virtual device driver of DPDK 22.11 takes (its PMD_INFO_STRING "params").
 * net_ring ignores a key it does not know and net_tap creates a device under its default name,
 * so a misspelt key would go unnoticed; the others refuse it without saying which.
 */
static const struct {
	const char *driver;
	const char *keys;	/* separated by ", " */
} vdev_keys[] = {
	{ "net_af_packet", "iface, qpairs, blocksz, framesz, framecnt, qdisc_bypass" },
	{ "net_pcap",
	  "rx_pcap, tx_pcap, rx_iface, rx_iface_in, tx_iface, iface, phy_mac, infinite_rx" },
	{ "net_tap", "iface, mac, remote" },
	{ "net_tun", "iface" },
	{ "net_memif", "id, role, bsize, rsize, socket, socket-abstract, mac, zero-copy, secret" },
	{ "net_ring", "nodeaction, internal" },
	{ "net_null", "size, copy, no-rx" },
};

/* Is @p key (@p len bytes) one of the words of @p keys? */
static bool key_listed(const char *keys, const char *key, size_t len)
{
	for (const char *w = keys; *w != '\0'; w += strspn(w, ", ")) {
		size_t n = strcspn(w, ",");

		if (n == len && strncmp(w, key, len) == 0)
			return true;
		w += n;
	}
	return false;
}

/*
 * Check a device's arguments: none empty, and a virtual device's against its driver's list.
 * @return 0, or -EINVAL with @p err naming the first one that would not do.
 */
static int check_vdev_args(const char *devargs, char *err, size_t errlen)
{
	size_t i, n = ROCE_DIM(vdev_keys);
	const char *arg;

	for (i = 0; i < n; i++) {
		if (strncmp(devargs, vdev_keys[i].driver, strlen(vdev_keys[i].driver)) == 0)
			break;
	}
	for (arg = strchr(devargs, ','); arg != NULL; arg = strchr(arg, ',')) {
		size_t len = strcspn(++arg, ",=");

		if (len == 0) {	/* DPDK would say only that no driver has the name */
			snprintf(err, errlen, "%s: an empty argument (a ',' too many, or '=' "
				 "with no name before it)", devargs);
			return -EINVAL;
		}
		if (i == n || key_listed(vdev_keys[i].keys, arg, len))
			continue;
		snprintf(err, errlen, "%s: %s takes no argument '%.*s' (it takes %s)", devargs,
			 vdev_keys[i].driver, (int)len, arg, vdev_keys[i].keys);
		return -EINVAL;
	}
	return 0;
}

struct roce_port *roce_port_open(struct roce_engine *eng, const struct roce_port_conf *conf,
				 char *err, size_t errlen)
{
	struct rte_eth_conf ec = { 0 };
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = conf->nb_rxd ? conf->nb_rxd : PORT_DEF_DESC;
	uint16_t nb_txd = conf->nb_txd ? conf->nb_txd : PORT_DEF_DESC;
	char name[RTE_ETH_NAME_MAX_LEN], iface[IF_NAMESIZE];
	struct roce_port *p;
	bool probed = false, unparked = false;
	size_t len;
	int rc;

	if (conf->devargs == NULL || conf->devargs[0] == '\0') {
		FAIL(EINVAL, "no device given");
		return NULL;
	}
	len = strcspn(conf->devargs, ",");
	if (len >= sizeof(name)) {
		FAIL(EINVAL, "%s: device name too long", conf->devargs);
		return NULL;
	}
	memcpy(name, conf->devargs, len);
	name[len] = '\0';
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		FAIL(ENOMEM, "%s: out of memory", conf->devargs);
		return NULL;
	}
	p->eng = eng;
	p->bridge = conf->bridge;

	if (check_vdev_args(conf->devargs, err, errlen) != 0) {
		errno = EINVAL;
		goto err_free;
	}
	if (missing_iface(conf->devargs, iface, sizeof(iface)) != NULL &&
	    find_port(name, &p->port_id) != 0) {
		FAIL(EINVAL, "%s: no network interface called '%s' here (ip link lists them; for "
		     "one in a namespace, run rocelab in it: ip netns exec NS rocelab ...)",
		     conf->devargs, iface);
		goto err_free;
	}
	if (unpark(p, conf->devargs)) {
		/*
		 * A peer that connected to a listener while it was parked has rings set up on its
		 * old queues: drop it (a start and a stop run memif_disconnect()) before the RX
		 * queue is replaced, and keep the interrupt thread, where memif's handshake runs,
		 * off the queues until it is. A stopped client has no peer.
		 */
		probed = unparked = true;
		p->gated = true;
		p->tx_base_due = true;
		gate_open();
		gate_enter_ctl();
		if (memif_listens(conf->devargs)) {
			(void)rte_eth_dev_start(p->port_id);
			(void)rte_eth_dev_stop(p->port_id);
		}
		goto probed;
	}
	rc = probe_quietly(conf->devargs);
	if (rc == 0)
		probed = true;
	else if (rc != -EEXIST) {
		FAIL(EINVAL, "%s: cannot probe the device: %s (a vdev driver such as net_af_packet0, "
		     "net_tap0, net_memif0, net_ring0, or a PCI address allowed by --eal '-a ADDR')",
		     conf->devargs, probe_strerror(rc, name));
		goto err_free;
	}
	if (find_port(name, &p->port_id) != 0) {
		FAIL(ENODEV, "%s: the probe made no ethdev called '%s'", conf->devargs, name);
		goto err_remove;
	}
probed:
	rte_eth_dev_get_name_by_port(p->port_id, p->name);
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc != 0) {
		FAIL(EIO, "%s: cannot read the device's information: %s", p->name, rte_strerror(-rc));
		goto err_remove;
	}
	p->rdev = info.device;
	p->if_index = info.if_index;
	/* memif's ethdev MTU is DPDK's default 1500, but its frames are bounded only by its
	 * (chainable) buffers: treat it as a jumbo link */
	p->no_wire_mtu = info.driver_name != NULL && strcmp(info.driver_name, "net_memif") == 0;
	if (p->no_wire_mtu && probed && p->park_key == NULL) {
		p->park_key = strdup(conf->devargs);
		if (p->park_key == NULL) {
			FAIL(ENOMEM, "%s: out of memory", conf->devargs);
			goto err_remove;
		}
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		ec.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	rc = rte_eth_dev_configure(p->port_id, 1, 1, &ec);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(p->port_id, 0, nb_rxd, rte_eth_dev_socket_id(p->port_id),
					    NULL, roce_engine_pool(eng));
	if (rc == 0 && !unparked)	/* a parked port keeps its TX queue (see PORT_PARKED) */
		rc = rte_eth_tx_queue_setup(p->port_id, 0, nb_txd, rte_eth_dev_socket_id(p->port_id),
					    NULL);
	if (rc != 0) {
		FAIL(EIO, "%s: cannot configure one RX and one TX queue: %s", p->name,
		     rte_strerror(-rc));
		goto err_close;
	}
	if (p->gated) {	/* a parked port's RX queue is new: the interrupt thread may come */
		gate_leave();
		(void)rte_eth_stats_reset(p->port_id);	/* this open's (TX: port_tx_base()) */
	}
	p->os_rx_base = kernel_rx_packets(p->if_index);
	rc = rte_eth_dev_start(p->port_id);
	if (rc != 0) {
		FAIL(EIO, "%s: cannot start: %s", p->name, rte_strerror(-rc));
		goto err_close;
	}
	if (!conf->no_promisc)
		(void)rte_eth_promiscuous_enable(p->port_id);	/* not every driver can */
	rte_eth_macaddr_get(p->port_id, &p->mac);
	p->cap = roce_capture_default();
	rc = roce_engine_add_poller(eng, port_poll, p);
	if (rc != 0) {
		FAIL(-rc, "%s: the engine has no room for another poller", p->name);
		goto err_stop;
	}
	if (!p->gated && p->no_wire_mtu) {	/* memif; a parked one is already */
		p->gated = true;
		gate_open();
	}
	return p;

err_stop:
	rte_eth_dev_stop(p->port_id);
err_close:
	rte_eth_dev_close(p->port_id);
err_remove:
	if (probed && p->rdev != NULL)
		rte_dev_remove(p->rdev);
	if (p->gated) {	/* a parked port's, taken up */
		gate_leave();
		gate_close();
	}
err_free:
	free(p->park_key);
	free(p);
	return NULL;
}

void roce_port_close(struct roce_port *p)
{
	if (p == NULL)
		return;
	roce_engine_remove_poller(p->eng, port_poll, p);
	roce_port_flush(p);
	rte_pktmbuf_free_bulk(p->txbuf, p->ntx);
	while (p->rxq_head != p->rxq_tail)
		rte_pktmbuf_free(p->rxq[p->rxq_head++ & (PORT_RXQ - 1)]);
	/* gated: a peer's leaving cannot run memif_disconnect() beside the close's own */
	if (p->gated)
		gate_enter_ctl();
	rte_eth_dev_stop(p->port_id);
	if (!park(p)) {
		rte_eth_dev_close(p->port_id);
		if (p->rdev != NULL)
			rte_dev_remove(p->rdev);
	}
	if (p->gated) {
		gate_leave();
		gate_close();
	}
	free(p->park_key);
	free(p);
}

/* ---- attributes ---- */

const char *roce_port_name(const struct roce_port *p)
{
	return p->name;
}

void roce_port_mac(const struct roce_port *p, uint8_t mac[6])
{
	memcpy(mac, p->mac.addr_bytes, 6);
}

int roce_port_link(const struct roce_port *p, bool *up, uint64_t *speed_bps)
{
	struct rte_eth_link l;
	int rc = rte_eth_link_get_nowait(p->port_id, &l);

	if (rc != 0)
		return rc;
	*up = l.link_status == RTE_ETH_LINK_UP;
	*speed_bps = l.link_speed == RTE_ETH_SPEED_NUM_NONE ||
		     l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : (uint64_t)l.link_speed * 1000000;
	return 0;
}

/* MTU of kernel interface @p if_index, or 0. */
static uint32_t kernel_mtu(uint32_t if_index)
{
	struct ifreq ifr = { 0 };
	uint32_t mtu = 0;
	int s;

	if (if_index == 0 || if_indextoname(if_index, ifr.ifr_name) == NULL)
		return 0;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return 0;
	if (ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		mtu = (uint32_t)ifr.ifr_mtu;
	close(s);
	return mtu;
}

uint32_t roce_port_mtu(const struct roce_port *p)
{
	uint32_t mtu = kernel_mtu(p->if_index);
	uint16_t m;

	if (mtu != 0)
		return mtu;
	if (p->no_wire_mtu)
		return PORT_NO_MTU;
	return rte_eth_dev_get_mtu(p->port_id, &m) == 0 ? m : RTE_ETHER_MTU;
}

int roce_port_set_mtu(struct roce_port *p, uint32_t mtu)
{
	if (mtu > UINT16_MAX)
		return -EINVAL;
	return rte_eth_dev_set_mtu(p->port_id, (uint16_t)mtu);
}

/* rx_packets of kernel interface @p if_index (sysfs), or 0. */
static uint64_t kernel_rx_packets(uint32_t if_index)
{
	char name[IF_NAMESIZE], path[96];
	unsigned long long v = 0;
	FILE *f;

	if (if_index == 0 || if_indextoname(if_index, name) == NULL)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", name);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

uint64_t roce_port_frames(const struct roce_port *p)
{
	return p->st.rx_roce + p->st.rx_arp + p->st.rx_nd + p->st.rx_other + p->st.tx_frames;
}

int roce_port_stats(const struct roce_port *p, struct roce_port_stats *st)
{
	struct rte_eth_stats es;
	int rc = rte_eth_stats_get(p->port_id, &es);

	*st = p->st;
	st->os_rx_packets = p->if_index ? kernel_rx_packets(p->if_index) - p->os_rx_base : 0;
	if (rc != 0)
		return rc;
	st->ipackets = es.ipackets;
	st->ibytes = es.ibytes;
	if (p->tx_base_due) {		/* taken up from parking, sent nothing yet */
		st->opackets = 0;
		st->obytes = 0;
	} else {	/* this open's; below the base, memif says 0: no peer connected */
		st->opackets = es.opackets - RTE_MIN(es.opackets, p->tx_base_frames);
		st->obytes = es.obytes - RTE_MIN(es.obytes, p->tx_base_bytes);
	}
	st->imissed = es.imissed;
	st->ierrors = es.ierrors;
	st->oerrors = es.oerrors;
	return 0;
}
