/* Check suite 'fabric': scenarios (reading, errors, generators) and fabrics run end to end. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fab_private.h"
#include "roce_fabric.h"
#include "roce_io.h"
#include "roce_report.h"
#include "roce_transport.h"
#include "roce_wire.h"

static char err[512];

static struct roce_scenario *parse(const char *text)
{
	err[0] = '\0';
	return roce_scenario_parse("t.ini", text, NULL, 0, err, sizeof(err));
}

/* The scenario must be refused with a message that contains @p want. */
static void refused(const char *text, const char *want)
{
	struct roce_scenario *sc = parse(text);

	ck_assert_msg(sc == NULL, "accepted: %s", text);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
}

static const char two_hosts[] =
	"[topology]\n"
	"kind = custom\n"
	"rate = 100G\n"
	"delay = 1us\n"
	"[host.a]\n"
	"[host.b]\n"
	"[link.ab]\n"
	"a = a\n"
	"b = b\n"
	"[flow.w]\n"
	"src = a\n"
	"dst = b\n"
	"size = 64K\n"
	"count = 20\n"
	"depth = 4\n";

START_TEST(values)
{
	uint64_t v;
	roce_time_t t;
	double p;

	ck_assert_int_eq(fab_parse_size("64K", &v), 0);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(fab_parse_size("2MB", &v), 0);
	ck_assert_uint_eq(v, 2u << 20);
	ck_assert_int_eq(fab_parse_size("1.5K", &v), 0);
	ck_assert_uint_eq(v, 1536);
	ck_assert_int_eq(fab_parse_size("1.1", &v), -EINVAL);
	ck_assert_int_eq(fab_parse_size("-1", &v), -EINVAL);
	ck_assert_int_eq(fab_parse_size("12 parsecs", &v), -EINVAL);
	ck_assert_int_eq(fab_parse_rate("40Gbps", &v), 0);
	ck_assert_uint_eq(v, 40000000000ull);
	ck_assert_int_eq(fab_parse_rate("5M", &v), 0);
	ck_assert_uint_eq(v, 5000000);
	ck_assert_int_eq(fab_parse_rate("0", &v), -EINVAL);
	ck_assert_int_eq(fab_parse_time("2.5us", &t), 0);
	ck_assert_uint_eq(t, 2500 * ROCE_NS);
	ck_assert_int_eq(fab_parse_time("10", &t), -EINVAL);	/* a unit is required */
	ck_assert_int_eq(fab_parse_time("0", &t), 0);
	ck_assert_int_eq(fab_parse_prob("1e-4", &p), 0);
	ck_assert(p == 1e-4);
	ck_assert_int_eq(fab_parse_prob("5%", &p), 0);
	ck_assert(p > 0.0499 && p < 0.0501);
	ck_assert_int_eq(fab_parse_prob("1.5", &p), -EINVAL);
}
END_TEST

START_TEST(custom_topology)
{
	struct roce_scenario *sc = parse(two_hosts);

	ck_assert_msg(sc != NULL, "%s", err);
	ck_assert_int_eq(sc->nhosts, 2);
	ck_assert_int_eq(sc->nswitches, 0);
	ck_assert_int_eq(sc->nlinks, 1);
	ck_assert_str_eq(sc->link[0].name, "ab");
	ck_assert_int_eq(sc->nflows, 1);
	ck_assert_uint_eq(sc->flow[0].size, 65536);
	ck_assert_uint_eq(sc->flow[0].count, 20);
	ck_assert_int_eq(sc->flow[0].dscp, 26);	/* priority 3 by default */
	roce_scenario_destroy(sc);
}
END_TEST

START_TEST(generators)
{
	struct roce_scenario *sc;

	sc = parse("[topology]\nkind = star\nhosts = 9\n"
		   "[pattern.in]\nkind = incast\nhosts = all\ndst = h0\n");
	ck_assert_msg(sc != NULL, "%s", err);
	ck_assert_int_eq(sc->nhosts, 9);
	ck_assert_int_eq(sc->nswitches, 1);
	ck_assert_int_eq(sc->nlinks, 9);
	ck_assert_int_eq(sc->nflows, 8);	/* h1..h8 -> h0 */
	ck_assert_int_eq(sc->sw[0].conf.nports, 9);
	for (int i = 0; i < sc->nflows; i++)
		ck_assert_int_eq(sc->flow[i].dst, 0);
	roce_scenario_destroy(sc);

	sc = parse("[topology]\nkind = leafspine\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\n"
		   "[pattern.a2a]\nkind = alltoall\nhosts = h0..h3\n");
	ck_assert_msg(sc != NULL, "%s", err);
	ck_assert_int_eq(sc->nhosts, 16);
	ck_assert_int_eq(sc->nswitches, 6);
	ck_assert_int_eq(sc->nlinks, 16 + 8);
	ck_assert_int_eq(sc->nflows, 12);
	ck_assert_int_eq(sc->sw[0].conf.nports, 6);	/* leaf0: 4 hosts, 2 spines */
	ck_assert_int_eq(sc->sw[4].conf.nports, 4);	/* spine0: 4 leaves */
	roce_scenario_destroy(sc);

	sc = parse("[topology]\nkind = fattree\nk = 4\n"
		   "[pattern.ar]\nkind = allreduce\nhosts = h0..h3\nsize = 4M\n");
	ck_assert_msg(sc != NULL, "%s", err);
	ck_assert_int_eq(sc->nhosts, 16);
	ck_assert_int_eq(sc->nswitches, 20);
	ck_assert_int_eq(sc->nlinks, 48);
	/* 2(N-1) = 6 steps of 4 chunks of 1 MiB; step 1 of host 1 waits for step 0 of host 0 */
	ck_assert_int_eq(sc->nflows, 24);
	ck_assert_uint_eq(sc->flow[0].size, 1u << 20);
	ck_assert_int_eq(sc->flow[5].after, 0);
	ck_assert_int_eq(sc->flow[4].after, 3);
	ck_assert_int_eq(sc->ncoll, 1);
	ck_assert_int_eq(sc->coll[0].nflows, 24);
	ck_assert_uint_eq(sc->coll[0].size, 4u << 20);
	roce_scenario_destroy(sc);
}
END_TEST

/* Where each host of a permutation of 16 sends, and whether each sends and receives once. */
static void permutation_of(const char *extra, int *to)
{
	char text[512];
	struct roce_scenario *sc;
	int from[16] = { 0 };

	snprintf(text, sizeof(text), "[topology]\nkind = leafspine\nleaves = 4\nspines = 2\n"
		 "hosts_per_leaf = 4\n[pattern.p]\nkind = permutation\nhosts = all\n%s", extra);
	sc = parse(text);
	ck_assert_msg(sc != NULL, "%s", err);
	ck_assert_int_eq(sc->nflows, 16);
	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(sc->flow[i].src, i);
		ck_assert_int_ne(sc->flow[i].dst, i);
		from[sc->flow[i].dst]++;
		to[i] = sc->flow[i].dst;
	}
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(from[i], 1);
	roce_scenario_destroy(sc);
}

/*
 * kind = permutation: every host sends to one other and receives from one; shift = K is
 * i -> i + K, and without it the permutation follows the seed, a single cycle.
 */
START_TEST(pattern_permutation)
{
	int a[16], b[16], c[16];
	int n = 0, h = 0;

	permutation_of("shift = 5\n", a);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(a[i], (i + 5) % 16);
	permutation_of("", a);
	permutation_of("[scenario]\nseed = 1\n", b);
	permutation_of("[scenario]\nseed = 2\n", c);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_msg(memcmp(a, c, sizeof(a)) != 0, "seeds 1 and 2 give the same permutation");
	do {	/* one cycle through all 16 */
		h = a[h];
		n++;
	} while (h != 0 && n <= 16);
	ck_assert_int_eq(n, 16);
	refused("[topology]\nkind = star\nhosts = 4\n[pattern.p]\nkind = permutation\n"
		"hosts = all\nshift = 4\n", "t.ini:7: [pattern.p] shift: expected a whole number "
		"from 1 to 3 (the hosts less one), got '4'");
	refused("[topology]\nkind = star\nhosts = 4\n[pattern.p]\nkind = permutation\n"
		"hosts = h1\n", "t.ini:6: [pattern.p] hosts: a permutation needs at least 2 hosts");
	refused("[topology]\nkind = star\nhosts = 4\n[pattern.p]\nkind = incast\n"
		"hosts = all\ndst = h0\nshift = 1\n", "[pattern.p] shift: only for kind = "
		"permutation");
	/* a misspelt kind is named as such, not as a key it does not take */
	refused("[topology]\nkind = star\nhosts = 4\n[pattern.p]\nkind = permutaton\n"
		"hosts = all\nshift = 1\n", "t.ini:5: [pattern.p] kind: expected incast, "
		"alltoall, permutation, allreduce or trace, got 'permutaton'");
}
END_TEST

START_TEST(errors)
{
	refused("[flow.x]\nsrc = h0\n", "t.ini");
	refused("[topology]\nkind = star\nhosts = 3\n[flow.x]\nsrc = h0\ndst = h9\n",
		"t.ini:6: [flow.x] dst: no host called 'h9'");
	refused("[topology]\nkind = star\nhosts = 3\n[flow.x]\nsrc = h0\ndst = h1\nszie = 1K\n",
		"t.ini:7: [flow.x] szie: unknown key");
	refused("[topology]\nkind = star\nhosts = 3\n[flwo.x]\n", "t.ini:4: [flwo.x]: unknown section");
	refused("[topology]\nkind = starr\n[flow.x]\nsrc = h0\ndst = h1\n", "t.ini:2: [topology] kind: unknown topology kind 'starr'");
	refused("[topology]\nhosts = 3\nrate = 100Q\n", "t.ini:3: [topology] rate: expected a rate");
	refused("[topology]\nhosts = 3\nhosts = 4\n", "t.ini:3: [topology] hosts is set twice");
	refused("[topology]\nhosts 3\n", "t.ini:2: expected 'key = value'");
	refused("[topology]\nhosts =\n", "t.ini:2: [topology] hosts has no value");
	refused("[topology]\nhosts = 3\n[priority.9]\n", "t.ini:3: [priority.9]: unknown section");
	refused("[topology]\nhosts = 3\n[event.e]\nat = 1ms\nlink = h0-sw9\nrate = 40G\n",
		"t.ini:5: [event.e] link");
	refused("[topology]\nhosts = 3\n", "no workload");
	refused("[topology]\nhosts = 3\n[nic]\ncc = tcp\n[flow.x]\nsrc = h0\ndst = h1\n",
		"t.ini:4: [nic] cc: unknown congestion control 'tcp' (none, dcqcn)");
	refused("[scenario]\nduration = 5\n", "t.ini:2: [scenario] duration: expected a time");
	refused("[scenario]\npayload = drop\n",
		"t.ini:2: [scenario] payload: expected place or discard, got 'drop'");
}
END_TEST

/*
 * Scenarios that parse but could not run as written: refused before the run, the message naming
 * the place (each ran before, to a stall, an error or an endless sampling loop).
 */
START_TEST(errors_unrunnable)
{
	static const char star[] = "[scenario]\nduration = 2ms\n[topology]\nkind = star\n"
				   "hosts = 3\n";
	char text[512];

	snprintf(text, sizeof(text), "%s[flow.a]\nsrc = h0\ndst = h1\nafter = b\n"
		 "[flow.b]\nsrc = h1\ndst = h2\nafter = a\n", star);
	refused(text, "t.ini:9: [flow.a] after: the flows wait for each other in a cycle");
	/* one that waits for itself; one that waits for a cycle it is not on (the cycle is named) */
	snprintf(text, sizeof(text), "%s[flow.a]\nsrc = h0\ndst = h1\nafter = a\n", star);
	refused(text, "t.ini:9: [flow.a] after: no other flow called 'a'");
	snprintf(text, sizeof(text), "%s[flow.z]\nsrc = h0\ndst = h1\nafter = a\n"
		 "[flow.a]\nsrc = h0\ndst = h1\nafter = b\n[flow.b]\nsrc = h1\ndst = h2\n"
		 "after = c\n[flow.c]\nsrc = h2\ndst = h0\nafter = a\n", star);
	refused(text, "[flow.a] after: the flows wait for each other in a cycle ('a' waits for 'b', "
		"which waits, in the end, for 'a')");
	/* and chains without one: a waits for b, c for b too, b for nothing */
	snprintf(text, sizeof(text), "%s[flow.a]\nsrc = h0\ndst = h1\nafter = b\n"
		 "[flow.b]\nsrc = h1\ndst = h2\n[flow.c]\nsrc = h2\ndst = h0\nafter = b\n", star);
	{
		struct roce_scenario *sc = parse(text);

		ck_assert_msg(sc != NULL, "%s", err);
		roce_scenario_destroy(sc);
	}
	snprintf(text, sizeof(text), "%s[flow.a]\nsrc = h0\ndst = h1\nstart = 2ms\n", star);
	refused(text, "t.ini:9: [flow.a] start: 2ms is not within the run (scenario.duration = 2ms)");
	snprintf(text, sizeof(text), "%s[flow.a]\nsrc = h0\ndst = h1\n[event.e]\nat = 3ms\n"
		 "link = h0-sw0\nstate = down\n", star);
	refused(text, "t.ini:10: [event.e] at: 3ms is not within the run");
	snprintf(text, sizeof(text), "%s[flow.a]\nsrc = h0\ndst = h1\n[pattern.p]\n"
		 "kind = alltoall\nhosts = h0,h2,h0\n", star);
	refused(text, "[pattern.p] hosts: host 'h0' is listed twice");
	snprintf(text, sizeof(text), "%s[flow.p.h1]\nsrc = h1\ndst = h0\n[pattern.p]\n"
		 "kind = incast\nhosts = h1,h2\ndst = h0\n", star);
	refused(text, "two flows are called 'p.h1'");
	refused("[scenario]\nmtu = 4096\n[topology]\nkind = star\nhosts = 2\nmtu = 1500\n"
		"[flow.a]\nsrc = h0\ndst = h1\n",
		"t.ini:6: [topology] mtu: link h0-sw0's MTU of 1500 bytes is below the 4160-byte IP "
		"packets a path MTU of 4096 makes");
	refused("[scenario]\nsample = 1ps\n[topology]\nkind = star\nhosts = 2\n"
		"[flow.a]\nsrc = h0\ndst = h1\n", "t.ini:2: [scenario] sample: 1ps over a 1s run");
	refused("[topology]\nkind = custom\n[host.a]\n[host.b]\nip = fd00::2\n[switch.s]\n"
		"[link.as]\na = a\nb = s\n[link.bs]\na = b\nb = s\n[flow.f]\nsrc = a\ndst = b\n",
		"[flow.f]: 'a' has an IPv4 address and 'b' an IPv6 one");
	refused("[topology]\nkind = custom\n[host.a]\nip = 10.0.0.9\n[host.b]\nip = 10.0.0.9\n"
		"[switch.s]\n[link.as]\na = a\nb = s\n[link.bs]\na = b\nb = s\n"
		"[flow.f]\nsrc = a\ndst = b\n", "hosts 'a' and 'b' both have the address 10.0.0.9");
	refused("[topology]\nkind = custom\n[host.a]\n[host.b]\n[switch.s]\n[switch.t]\n"
		"[link.as]\na = a\nb = s\n[link.bt]\na = b\nb = t\n[flow.f]\nsrc = a\ndst = b\n",
		"[flow.f]: no links lead from 'a' to 'b'");
}
END_TEST

START_TEST(set_overrides)
{
	const char *set[] = { "flow.w.count=7", "scenario.seed=42", "nic.cc=dcqcn",
			      "nic.cc.rpg_ai_rate=10" };
	struct roce_scenario *sc = roce_scenario_parse("t.ini", two_hosts, set, 4, err, sizeof(err));
	const char *bad[] = { "flow.w.cuont=7" };
	const char *misspelt[] = { "flow.v.count=7" };

	ck_assert_msg(sc != NULL, "%s", err);
	ck_assert_uint_eq(sc->flow[0].count, 7);
	ck_assert_uint_eq(sc->seed, 42);
	ck_assert_int_eq(sc->ncc_kv, 1);
	ck_assert_str_eq(sc->cc_kv[0], "rpg_ai_rate=10");
	roce_scenario_destroy(sc);
	sc = roce_scenario_parse("t.ini", two_hosts, bad, 1, err, sizeof(err));
	ck_assert(sc == NULL);
	ck_assert_msg(strstr(err, "--set flow.w.cuont: unknown key") != NULL, "%s", err);
	/* a misspelt section name makes a new section: say so, not only what it lacks */
	sc = roce_scenario_parse("t.ini", two_hosts, misspelt, 1, err, sizeof(err));
	ck_assert(sc == NULL);
	ck_assert_msg(strstr(err, "--set flow.v: t.ini has no [flow.v], so it is a new section: ")
		      != NULL, "%s", err);
	/* a section every scenario may have, absent from the file: only the value is wrong */
	sc = roce_scenario_parse("t.ini", two_hosts, (const char *[]){ "switch.pfc=of" }, 1, err,
				 sizeof(err));
	ck_assert(sc == NULL);
	ck_assert_str_eq(err, "--set switch.pfc: expected static, dynamic or off, got 'of'");
	/* a congestion-control parameter is checked where --set (or the file's line) says */
	sc = roce_scenario_parse("t.ini", two_hosts, (const char *[]){ "nic.cc=dcqcn",
				 "nic.cc.rpg_ia_rate=1" }, 2, err, sizeof(err));
	ck_assert(sc == NULL);
	ck_assert_str_eq(err, "--set nic.cc.rpg_ia_rate: dcqcn: unknown parameter 'rpg_ia_rate'");
	/* as in a file, a key set twice is refused */
	sc = roce_scenario_parse("t.ini", two_hosts,
				 (const char *[]){ "flow.w.size=1M", "flow.w.count=2", "flow.w.size=2M" },
				 3, err, sizeof(err));
	ck_assert(sc == NULL);
	ck_assert_str_eq(err, "--set flow.w.size: set twice ('1M', then '2M')");
}
END_TEST

/* Two hosts on one link: every message completes, at close to line rate. */
START_TEST(run_direct)
{
	struct roce_scenario *sc = parse(two_hosts);
	struct roce_fabric *fab;
	struct roce_flow_result r;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	roce_fabric_flow_result(fab, 0, &r);
	ck_assert(r.done);
	ck_assert_uint_eq(r.messages, 20);
	ck_assert_uint_eq(r.bytes, 20 * 65536);
	ck_assert_uint_eq(r.retransmits, 0);
	ck_assert_msg(r.goodput_gbps > 85 && r.goodput_gbps < 100, "%.2f Gb/s", r.goodput_gbps);
	ck_assert(r.lat_p50_us > 5 && r.lat_p99_us >= r.lat_p50_us);
	ck_assert_int_eq(roce_fabric_nseries(fab, ROCE_SERIES_FLOW_GBPS), 1);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* by duration (perftest's -D): posts for 200 us, then ends when the last completes */
	{
		const char *set[] = { "flow.w.count=0", "flow.w.duration=200us" };

		sc = roce_scenario_parse("t.ini", two_hosts, set, 2, err, sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		fab = roce_fabric_create(sc, err, sizeof(err));
		ck_assert_msg(fab != NULL, "%s", err);
		ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
		roce_fabric_flow_result(fab, 0, &r);
		ck_assert(r.done);
		/* 200 us at ~98 Gb/s is ~37 messages of 64 KiB, plus the 4 in flight at the end */
		ck_assert_msg(r.messages > 30 && r.messages < 50, "%" PRIu64 " messages", r.messages);
		ck_assert(r.last_done - r.first_post > 200 * ROCE_US);
		ck_assert(roce_fabric_now(fab) < 400 * ROCE_US);
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
	}
}
END_TEST

/* Run two_hosts with @p set; the flow's result and the receiver's rx_out_of_buffer. */
static uint64_t run_two(const char **set, int nset, struct roce_flow_result *r)
{
	struct roce_scenario *sc = roce_scenario_parse("t.ini", two_hosts, set, nset, err,
						       sizeof(err));
	struct roce_fabric *fab;
	uint64_t drops;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	roce_fabric_flow_result(fab, 0, r);
	drops = roce_device_counter_by_name(roce_fabric_device(fab, 1), "rx_out_of_buffer");
	ck_assert_uint_eq(roce_device_counter_by_name(roce_fabric_device(fab, 0),
						      "rx_out_of_buffer"), 0);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return drops;
}

/*
 * The NIC's host interface (PCIe): a sender's frames leave no faster than it reads them, a
 * receiver buffers what it has not yet written and drops beyond its buffer, and a buffer big
 * enough for the whole transfer loses nothing and delivers at the interface's rate.
 */
START_TEST(host_interface)
{
	/* 1024-byte payloads in 1102-byte frames (14 + 20 + 8 + 12 + 16 RETH or 0 + 4 ICRC) */
	const char *paced[] = { "host.a.pcie=50G" };
	const char *both[] = { "nic.pcie=50G" };
	const char *narrow[] = { "host.b.pcie=25G", "flow.w.size=1M", "flow.w.depth=8",
				 "scenario.duration=300us" };
	const char *deep[] = { "host.b.pcie=25G", "host.b.rx_buffer=64M", "flow.w.size=1M",
			       "flow.w.depth=8" };
	struct roce_flow_result r;

	ck_assert_uint_eq(run_two(paced, 1, &r), 0);
	ck_assert(r.done);
	ck_assert_uint_eq(r.retransmits, 0);
	ck_assert_msg(r.goodput_gbps > 0.9 * 50 * 1024 / 1102 && r.goodput_gbps < 50.0 * 1024 / 1082,
		      "%.2f Gb/s from a 50G host interface", r.goodput_gbps);
	/* [nic] sets every host's */
	ck_assert_uint_eq(run_two(both, 1, &r), 0);
	ck_assert_msg(r.goodput_gbps < 50.0 * 1024 / 1082, "%.2f Gb/s", r.goodput_gbps);

	/* only the receiver's is narrow: 8 MiB outstanding at 100G overflow its 256 KiB buffer */
	ck_assert_uint_gt(run_two(narrow, 4, &r), 0);
	ck_assert_uint_gt(r.retransmits, 0);
	ck_assert_uint_lt(r.messages, 20);

	ck_assert_uint_eq(run_two(deep, 4, &r), 0);
	ck_assert(r.done);
	ck_assert_uint_eq(r.retransmits, 0);
	ck_assert_msg(r.goodput_gbps > 0.9 * 25 * 1024 / 1102 && r.goodput_gbps < 25.0 * 1024 / 1082,
		      "%.2f Gb/s into a 25G host interface", r.goodput_gbps);

	refused("[nic]\npcie = fast\n", "pcie: expected a rate");
	refused("[nic]\nrx_buffer = 1K\n", "rx_buffer: too small");
	/* a generated topology's host: its NIC only */
	refused("[topology]\nkind = star\nhosts = 2\n[host.h5]\npcie = 1G\n", "no host called 'h5'");
	refused("[topology]\nkind = star\nhosts = 2\n[host.h1]\nip = 10.1.1.1\n", "unknown key");
	{
		struct roce_scenario *sc = parse("[topology]\nkind = star\nhosts = 2\n[nic]\npcie = 100G\n"
						 "[host.h1]\npcie = 10G\nrx_buffer = 1M\n"
						 "[flow.f]\nsrc = h0\ndst = h1\n");

		ck_assert_msg(sc != NULL, "%s", err);
		ck_assert_uint_eq(sc->pcie_bps, 100000000000ull);
		ck_assert_uint_eq(sc->host[1].pcie_bps, 10000000000ull);
		ck_assert_uint_eq(sc->host[1].rx_buffer, 1 << 20);
		ck_assert_uint_eq(sc->host[0].pcie_bps, 0);
		roce_scenario_destroy(sc);
	}
}
END_TEST

/* Run @p sc to the end, with a capture in @p pcap and the metrics in @p csv. */
static void run_to_files(struct roce_scenario *sc, const char *pcap, const char *csv)
{
	struct roce_run_conf rc = { .pcap = pcap };
	struct roce_fabric *fab = roce_fabric_create(sc, err, sizeof(err));
	FILE *f;

	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, &rc), 0);
	f = fopen(csv, "w");
	ck_assert(f != NULL);
	ck_assert_int_eq(roce_fabric_write_metrics(fab, f), 0);
	fclose(f);
	roce_fabric_destroy(fab);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert(buf != NULL);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Do files @p pa and @p pb hold the same bytes? @p len: how many @p pa holds. */
static bool same_file(const char *pa, const char *pb, size_t *len)
{
	size_t la, lb;
	char *a = slurp(pa, &la), *b = slurp(pb, &lb);
	bool same = la == lb && memcmp(a, b, la) == 0;

	free(a);
	free(b);
	*len = la;
	return same;
}

/* The same seed gives byte-identical captures and metrics; another seed changes them. */
START_TEST(determinism)
{
	const char *set[] = { "scenario.duration=1ms", "topology.loss=1e-3" };
	const char *set2[] = { "scenario.duration=1ms", "topology.loss=1e-3", "scenario.seed=2" };
	char pcap[3][64], csv[3][64];
	char *a, *b, *c;
	size_t la, lb, lc;

	for (int i = 0; i < 3; i++) {
		struct roce_scenario *sc;

		snprintf(pcap[i], sizeof(pcap[i]), "/tmp/rocelab-fab-%d-%d.pcap", (int)getpid(), i);
		snprintf(csv[i], sizeof(csv[i]), "/tmp/rocelab-fab-%d-%d.csv", (int)getpid(), i);
		sc = roce_scenario_parse("demo-incast", roce_scenario_builtin("demo-incast"),
					 i < 2 ? set : set2, i < 2 ? 2 : 3, err, sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		run_to_files(sc, pcap[i], csv[i]);
		roce_scenario_destroy(sc);
	}
	a = slurp(pcap[0], &la);
	b = slurp(pcap[1], &lb);
	c = slurp(pcap[2], &lc);
	ck_assert_msg(la > 100000, "capture of %zu bytes", la);
	ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "same seed, different captures");
	ck_assert_msg(la != lc || memcmp(a, c, la) != 0, "another seed, the same capture");
	free(a);
	free(b);
	free(c);
	ck_assert_msg(same_file(csv[0], csv[1], &la) && la > 1000, "same seed, different metrics");
	for (int i = 0; i < 3; i++) {
		unlink(pcap[i]);
		unlink(csv[i]);
	}
}
END_TEST

/*
 * [capture] snaplen keeps the first N bytes of every frame and the frame's length, as tcpdump -s
 * does: the same frames as a whole capture, each cut where it should be, and nothing else of the
 * run changed. A snaplen below an Ethernet header is refused.
 */
START_TEST(capture_snaplen)
{
	const char *set[2][2] = { { "scenario.duration=200us", "capture.snaplen=0" },
				  { "scenario.duration=200us", "capture.snaplen=100" } };
	char pcap[2][64], csv[2][64];
	struct roce_pcap_reader *r[2];
	struct roce_pcap_frame f[2];
	uint64_t frames = 0, cut = 0;
	size_t len;

	for (int i = 0; i < 2; i++) {
		struct roce_scenario *sc;

		snprintf(pcap[i], sizeof(pcap[i]), "/tmp/rocelab-snap-%d-%d.pcap", (int)getpid(), i);
		snprintf(csv[i], sizeof(csv[i]), "/tmp/rocelab-snap-%d-%d.csv", (int)getpid(), i);
		sc = roce_scenario_parse("demo-incast", roce_scenario_builtin("demo-incast"), set[i],
					 2, err, sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		ck_assert_uint_eq(sc->snaplen, i == 0 ? 0 : 100);
		run_to_files(sc, pcap[i], csv[i]);
		roce_scenario_destroy(sc);
		r[i] = roce_pcap_open(pcap[i], NULL, err, sizeof(err));
		ck_assert_msg(r[i] != NULL, "%s", err);
	}
	for (;;) {
		int got0 = roce_pcap_next(r[0], &f[0]), got1;

		/* f[0].data stays valid: each reader has its own buffer */
		got1 = roce_pcap_next(r[1], &f[1]);
		ck_assert_int_eq(got0, got1);
		if (got0 != 1)
			break;
		frames++;
		ck_assert_uint_eq(f[0].ts_ns, f[1].ts_ns);
		ck_assert_uint_eq(f[0].wirelen, f[1].wirelen);
		ck_assert_uint_eq(f[0].caplen, f[0].wirelen);
		ck_assert_uint_eq(f[1].caplen, f[0].wirelen < 100 ? f[0].wirelen : 100);
		ck_assert(memcmp(f[0].data, f[1].data, f[1].caplen) == 0);
		cut += f[1].caplen < f[1].wirelen;
	}
	ck_assert_int_eq(roce_pcap_next(r[0], &f[0]), 0);
	ck_assert_msg(frames > 1000 && cut > frames / 2, "%" PRIu64 " frames, %" PRIu64 " cut",
		      frames, cut);
	ck_assert_msg(same_file(csv[0], csv[1], &len) && len > 1000, "snaplen changed the metrics");
	for (int i = 0; i < 2; i++) {
		roce_pcap_close(r[i]);
		unlink(pcap[i]);
		unlink(csv[i]);
	}
	refused("[topology]\nkind = star\nhosts = 2\n[capture]\nsnaplen = 8\n",
		"t.ini:5: [capture] snaplen: 8 bytes do not hold an Ethernet header");
	refused("[topology]\nkind = star\nhosts = 2\n[capture]\nsnaplen = 70000\n",
		"expected a whole number from 0 to 65535, got '70000'");
}
END_TEST

/*
 * The events the links leave out (a frame's end that a quiet switch port or a rate-limited NIC
 * would pull nothing at) change nothing else: the same run with every link direction marked
 * impaired by a rule that never fires (which keeps every end event) gives the same capture,
 * metrics and counters with more events. An 8:1 incast with DCQCN, so that most frames are
 * paced by a rate limiter.
 */
static const char paced_incast[] =
	"[scenario]\nname = paced\nmtu = 1024\nduration = 1ms\nsample = 50us\n"
	"[topology]\nkind = star\nhosts = 9\n[nic]\ncc = dcqcn\n[capture]\nlinks = all\n"
	"[pattern.in]\nkind = incast\nhosts = h1..h8\ndst = h0\nsize = 64K\ncount = 0\n"
	"depth = 16\n";

static uint64_t run_paced(bool keep_ends, const char *pcap, const char *csv)
{
	struct roce_scenario *sc = parse(paced_incast);
	struct roce_run_conf rc = { .pcap = pcap };
	struct roce_link_impair never = { .drop_nth = UINT64_MAX };
	struct roce_fabric *fab;
	uint64_t events, hops;
	FILE *f;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	for (int i = 0; keep_ends && i < sc->nlinks; i++)
		for (int d = 0; d < 2; d++)
			ck_assert_int_eq(roce_link_set_impair(roce_fabric_link(fab, i), d, &never), 0);
	ck_assert_int_eq(roce_fabric_run(fab, &rc), 0);
	f = fopen(csv, "w");
	ck_assert(f != NULL);
	ck_assert_int_eq(roce_fabric_write_metrics(fab, f), 0);
	ck_assert_int_eq(roce_fabric_write_counters(fab, f), 0);
	fclose(f);
	roce_fabric_work(fab, &events, &hops);
	ck_assert_uint_gt(hops, 10000);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
	return events;
}

START_TEST(quiet_ends)
{
	char pcap[2][64], csv[2][64];
	uint64_t events[2];
	size_t la;

	for (int i = 0; i < 2; i++) {
		snprintf(pcap[i], sizeof(pcap[i]), "/tmp/rocelab-quiet-%d-%d.pcap", (int)getpid(), i);
		snprintf(csv[i], sizeof(csv[i]), "/tmp/rocelab-quiet-%d-%d.csv", (int)getpid(), i);
		events[i] = run_paced(i == 1, pcap[i], csv[i]);
	}
	/* the NICs' paced frames leave out one event in three: well over a tenth of them all */
	ck_assert_msg(events[0] * 10 < events[1] * 9, "%" PRIu64 " events, %" PRIu64
		      " with every end event", events[0], events[1]);
	ck_assert_msg(same_file(pcap[0], pcap[1], &la), "the events left out changed the capture");
	ck_assert_msg(la > 100000, "capture of %zu bytes", la);
	ck_assert_msg(same_file(csv[0], csv[1], &la), "the events left out changed the metrics");
	for (int i = 0; i < 2; i++) {
		unlink(pcap[i]);
		unlink(csv[i]);
	}
}
END_TEST

/*
 * The flows finish before a scheduled event fires: the run ends with its timer still on the
 * wheel, and destroying the fabric must take it off before freeing it (under ASan, the unit
 * tests' second build, a use after free otherwise).
 */
START_TEST(event_after_flows)
{
	struct roce_scenario *sc = parse("[scenario]\nduration = 10ms\n[topology]\nkind = star\n"
					 "hosts = 2\n[flow.a]\nsrc = h0\ndst = h1\ncount = 2\n"
					 "[event.cut]\nat = 9ms\nlink = h0-sw0\nstate = down\n");
	struct roce_flow_result fr;
	struct roce_fabric *fab;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	roce_fabric_flow_result(fab, 0, &fr);
	ck_assert(fr.done);
	ck_assert_uint_lt(roce_fabric_now(fab), 9 * ROCE_MS);	/* ended before the event */
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* Three switches in a ring with routes the long way round: the cycle of pauses is found. */
START_TEST(deadlock)
{
	const char *set[] = { "scenario.duration=2ms" };
	struct roce_scenario *sc = roce_scenario_load(SCENARIOS "/pfc-deadlock.ini", set, 1, err,
						      sizeof(err));
	struct roce_fabric *fab;
	char report[300];

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	ck_assert(roce_fabric_deadlock(fab, report, sizeof(report)));
	ck_assert_msg(strstr(report, "sw0") && strstr(report, "sw1") && strstr(report, "sw2"),
		      "%s", report);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* the same fabric with one route the short way: no cycle */
	{
		const char *set2[] = { "scenario.duration=2ms", "switch.sw0.route.h4=sw2",
				       "switch.sw0.route.h5=sw2" };

		sc = roce_scenario_load(SCENARIOS "/pfc-deadlock.ini", set2, 3, err, sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		fab = roce_fabric_create(sc, err, sizeof(err));
		ck_assert_msg(fab != NULL, "%s", err);
		ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
		ck_assert_msg(!roce_fabric_deadlock(fab, report, sizeof(report)), "%s", report);
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
	}
}
END_TEST

/*
 * scenarios/troubleshoot-dscp.ini: the host on DSCP 0 (lossy priority 0) is the only one whose
 * frames the switch drops and who resends; on DSCP 26 like the others, nothing is dropped and
 * the four share h0's port within 10%.
 */
START_TEST(troubleshoot_dscp)
{
	const char *set[] = { "scenario.duration=2ms", "flow.late.dscp=26" };
	struct roce_switch_qstats q;
	struct roce_flow_result r[4];
	struct roce_scenario *sc;
	struct roce_fabric *fab;

	for (int fixed = 0; fixed < 2; fixed++) {
		sc = roce_scenario_load(SCENARIOS "/troubleshoot-dscp.ini", set, fixed ? 2 : 1, err,
					sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		fab = roce_fabric_create(sc, err, sizeof(err));
		ck_assert_msg(fab != NULL, "%s", err);
		ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
		for (int f = 0; f < 4; f++)
			roce_fabric_flow_result(fab, f, &r[f]);
		roce_switch_qstats(roce_fabric_switch(fab, 0), 4, 0, &q);	/* h4's port */
		if (!fixed) {
			ck_assert_uint_gt(q.drop_tail, 0);
			ck_assert_uint_gt(r[3].retransmits, q.drop_tail);	/* go-back-N */
			for (int f = 0; f < 3; f++)
				ck_assert_uint_eq(r[f].retransmits, 0);
			/* h0's port carried resent frames: the four deliver well under 100G */
			ck_assert_double_lt(r[0].goodput_gbps + r[1].goodput_gbps +
					    r[2].goodput_gbps + r[3].goodput_gbps, 85);
		} else {
			ck_assert_uint_eq(q.drop_tail + q.rx_frames, 0);	/* nothing on prio 0 */
			for (int f = 0; f < 4; f++) {
				ck_assert_uint_eq(r[f].retransmits, 0);
				ck_assert_msg(fabs(r[f].goodput_gbps - 24.5) < 2.45, "flow %d: %.2f",
					      f, r[f].goodput_gbps);
			}
		}
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
	}
}
END_TEST

/*
 * scenarios/troubleshoot-pcie.ini's claims: the slow host's NIC pauses its switch port and
 * its flow runs at the slot's rate with nothing dropped; without PFC its NIC drops what no
 * switch or link counts and the flow collapses; the right slot fixes both.
 */
START_TEST(troubleshoot_pcie)
{
	const char *sets[3][1] = { { "scenario.seed=1" }, { "nic.pfc=off" },
				   { "host.slow.pcie=230G" } };
	struct roce_flow_result fast, slow;
	struct roce_switch_qstats q;
	struct roce_scenario *sc;
	struct roce_fabric *fab;

	for (int v = 0; v < 3; v++) {
		uint64_t sw_drops = 0, nic_drops, nic_pfc;

		sc = roce_scenario_load(SCENARIOS "/troubleshoot-pcie.ini", sets[v], 1, err,
					sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		fab = roce_fabric_create(sc, err, sizeof(err));
		ck_assert_msg(fab != NULL, "%s", err);
		ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
		roce_fabric_flow_result(fab, 0, &fast);
		roce_fabric_flow_result(fab, 1, &slow);
		for (uint16_t p = 0; p < 4; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				roce_switch_qstats(roce_fabric_switch(fab, 0), p, prio, &q);
				sw_drops += q.drop_tail + q.drop_headroom + q.drop_watchdog;
			}
		roce_switch_qstats(roce_fabric_switch(fab, 0), 3, 3, &q);	/* towards slow */
		nic_drops = roce_device_counter_by_name(roce_fabric_device(fab, 3), "rx_out_of_buffer");
		nic_pfc = roce_device_counter_by_name(roce_fabric_device(fab, 3), "tx_pfc_frames");
		ck_assert_uint_eq(sw_drops, 0);
		ck_assert_msg(fast.goodput_gbps > 95, "%.2f Gb/s", fast.goodput_gbps);
		ck_assert_uint_eq(fast.retransmits, 0);
		if (v == 0) {		/* lossless: pauses, no drop, the slot's rate */
			ck_assert_uint_eq(nic_drops, 0);
			ck_assert_uint_gt(nic_pfc, 0);
			ck_assert_uint_gt(q.pause_rx, 0);
			/* every one the NIC sent reached the switch, but one still on the wire */
			ck_assert_uint_le(q.pause_rx + q.resume_rx, nic_pfc);
			ck_assert_uint_ge(q.pause_rx + q.resume_rx + 1, nic_pfc);
			ck_assert_uint_eq(slow.retransmits, 0);
			ck_assert_msg(slow.goodput_gbps > 50 && slow.goodput_gbps < 57.6, "%.2f Gb/s",
				      slow.goodput_gbps);
		} else if (v == 1) {	/* no PFC: drops in the NIC only, go-back-N's collapse */
			ck_assert_uint_eq(nic_pfc + q.pause_rx, 0);
			ck_assert_uint_gt(nic_drops, 0);
			ck_assert_uint_gt(slow.retransmits, 0);
			ck_assert_uint_lt(slow.messages, 2);
		} else {		/* the right slot */
			ck_assert_uint_eq(nic_drops + nic_pfc + q.pause_rx, 0);
			ck_assert_msg(slow.goodput_gbps > 95, "%.2f Gb/s", slow.goodput_gbps);
		}
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
	}
}
END_TEST

/*
 * Conservation: after an incast under loss has drained, every frame each switch took in was
 * sent on, consumed (PFC) or dropped with a counted reason, every link delivered or counted
 * what it lost, and no mbuf is left anywhere.
 */
START_TEST(conservation)
{
	const char *set[] = { "topology.loss=1e-3", "pattern.incast.count=16",
			      "flow.victim.count=64", "scenario.seed=5", "scenario.duration=2s" };
	struct roce_scenario *sc = roce_scenario_parse("demo-incast",
						       roce_scenario_builtin("demo-incast"), set, 5,
						       err, sizeof(err));
	struct roce_fabric *fab;
	uint64_t link_lost = 0, sw_drops = 0;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	for (int f = 0; f < sc->nflows; f++) {
		struct roce_flow_result r;

		roce_fabric_flow_result(fab, f, &r);
		ck_assert_msg(r.done, "flow %s: %" PRIu64 " messages", sc->flow[f].name, r.messages);
	}
	ck_assert_uint_eq(roce_fabric_drain(fab, 100 * ROCE_MS), 0);
	for (int s = 0; s < sc->nswitches; s++) {
		uint64_t in = 0, out = 0, drops = 0, used;

		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_pstats ps;

			roce_switch_pstats(roce_fabric_switch(fab, s), (uint16_t)p, &ps);
			in += ps.rx_frames - ps.pfc_rx;
			out += ps.tx_frames - ps.pfc_tx;
			drops += ps.drop_no_route + ps.drop_malformed + ps.drop_ttl;
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				drops += q.drop_tail + q.drop_headroom + q.drop_watchdog;
				ck_assert_uint_eq(q.qbytes, 0);
			}
		}
		ck_assert_msg(in == out + drops, "%s: %" PRIu64 " in, %" PRIu64 " out, %" PRIu64
			      " dropped", sc->sw[s].name, in, out, drops);
		ck_assert_uint_eq(roce_switch_buffer_used(roce_fabric_switch(fab, s), &used), 0);
		sw_drops += drops;
	}
	for (int l = 0; l < sc->nlinks; l++) {
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats st;

			roce_link_stats(roce_fabric_link(fab, l), d, &st);
			ck_assert_uint_eq(st.in_flight, 0);
			ck_assert_uint_eq(st.tx_frames + st.duplicated,
					  st.rx_frames + st.dropped + st.down_drops);
			link_lost += st.dropped;
		}
	}
	ck_assert_msg(link_lost > 10, "only %" PRIu64 " frames lost: the loss did not happen", link_lost);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* The demo's four claims hold in its own measurements (quick mode, no files). */
static unsigned int count_str(const char *s, const char *what)
{
	unsigned int n = 0;

	for (; (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

/* A table as CSV text (free it). */
static char *table_csv(struct roce_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(roce_table_write_csv(t, f), 0);
	fclose(f);
	roce_table_destroy(t);
	return buf;
}

/* The value of the summary table's row @p what, read back from its CSV; -1 if missing. */
static long long summary_value(const struct roce_fabric *fab, const char *what)
{
	char *buf = table_csv(roce_fabric_summary_table(fab, 1.0)), *line, *save = NULL;
	long long v = -1;

	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(what);
		const char *cell = line;

		if (*cell == '"')
			cell++;
		if (strncmp(cell, what, n) == 0 && (cell[n] == ',' || cell[n] == '"'))
			v = strtoll(strrchr(line, ',') + 1, NULL, 10);
	}
	free(buf);
	return v;
}

/*
 * The summary counts the PFC frames NICs send and receive: a NIC behind a slow host interface
 * pauses its switch port, which no switch counter shows as sent; and the frames the switches
 * send reach the NICs.
 */
/*
 * Flows that run to the end are "running": no completion time to give (FCT "-"), but their
 * goodput so far. (troubleshoot-dscp's four flows outlast 1 ms.)
 */
START_TEST(running_no_fct)
{
	const char *set[] = { "scenario.duration=1ms" };
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	char *csv, *row;
	int rows = 0;

	sc = roce_scenario_load(SCENARIOS "/troubleshoot-dscp.ini", set, 1, err, sizeof(err));
	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	csv = table_csv(roce_fabric_flow_table(fab));
	for (row = strchr(csv, '\n') + 1; *row != '\0'; row = strchr(row, '\n') + 1, rows++) {
		const char *field[11];
		int n = 0;

		/* flow,path,op,messages,FCT,goodput,p50,p99,retransmits,timeouts,status; "-" is "" */
		for (const char *c = row; n < 11 && *c != '\n'; c = strchr(c, ',') + 1) {
			field[n++] = c;
			if (strchr(c, ',') == NULL || strchr(c, ',') > strchr(c, '\n'))
				break;
		}
		ck_assert_int_eq(n, 11);
		ck_assert_msg(strncmp(field[10], "running\n", 8) == 0, "%s", row);
		ck_assert_msg(field[4][0] == ',', "a running flow has an FCT: %s", row);
		ck_assert_msg(strtod(field[5], NULL) > 1, "%s", row);
	}
	ck_assert_int_eq(rows, 4);
	free(csv);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

START_TEST(summary_nic_pfc)
{
	const char *set[] = { "scenario.duration=1ms" };
	uint64_t tx = 0, xoff = 0, xon = 0;
	struct roce_scenario *sc;
	struct roce_fabric *fab;

	sc = roce_scenario_load(SCENARIOS "/troubleshoot-pcie.ini", set, 1, err, sizeof(err));
	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	for (int h = 0; h < sc->nhosts; h++)
		tx += roce_device_counter_by_name(roce_fabric_device(fab, h), "tx_pfc_frames");
	ck_assert_uint_gt(tx, 0);
	ck_assert_int_eq(summary_value(fab, "PFC frames sent by NICs (host interface)"),
			 (long long)tx);
	ck_assert_int_eq(summary_value(fab, "PFC XOFF sent by switches (per priority)"), 0);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* the other way: a degraded link makes the switches pause the senders */
	sc = roce_scenario_load(SCENARIOS "/demo-degrade.ini", NULL, 0, err, sizeof(err));
	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	for (int s = 0; s < sc->nswitches; s++)
		for (uint16_t p = 0; p < sc->sw[s].conf.nports; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), p, prio, &q);
				xoff += q.pause_tx;
				xon += q.resume_tx;
			}
	ck_assert_uint_gt(xoff, 0);
	ck_assert_int_eq(summary_value(fab, "PFC XOFF sent by switches (per priority)"),
			 (long long)xoff);
	/* all reached a NIC, but for those still on the wire at the end (one per port) */
	ck_assert_int_le(summary_value(fab, "PFC XOFF/XON received by NICs (per priority)"),
			 (long long)(xoff + xon));
	ck_assert_int_ge(summary_value(fab, "PFC XOFF/XON received by NICs (per priority)"),
			 (long long)(xoff + xon) - sc->nhosts);
	ck_assert_int_eq(summary_value(fab, "PFC frames sent by NICs (host interface)"),
			 -1);	/* no host interface: no row */
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * The paused series of a NIC: the percentage of each interval PFC held it. In demo-degrade each 50G
 * sender gets 20G of the link once it falls to 40G: paused about 60% of the time after the
 * queue has filled (65%: an XOFF lets the frame on the wire finish, 0.7 us of each 13 us
 * XOFF-XON cycle; the switch's trace gives the same), never before the change. No switch port
 * is paused there.
 */
START_TEST(paused_series)
{
	struct roce_scenario *sc = roce_scenario_load(SCENARIOS "/demo-degrade.ini", NULL, 0, err,
						      sizeof(err));
	struct roce_fabric *fab;
	int n, nic = 0;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	n = roce_fabric_nseries(fab, ROCE_SERIES_PAUSED);
	for (int i = 0; i < n; i++) {
		struct roce_series s;
		double before = 0, after = 0;
		int na = 0;

		roce_fabric_series(fab, ROCE_SERIES_PAUSED, i, &s);
		ck_assert_msg(strcmp(s.name, "h0 NIC") == 0 || strcmp(s.name, "h1 NIC") == 0,
			      "%s paused", s.name);
		nic++;
		for (size_t k = 0; k < s.n; k++) {
			ck_assert(s.v[k] >= 0 && s.v[k] <= 100);
			if (s.t_us[k] <= 1000)
				before = ROCE_MAX(before, s.v[k]);
			else if (s.t_us[k] > 1200) {
				after += s.v[k];
				na++;
			}
		}
		ck_assert_double_eq(before, 0);
		ck_assert_int_gt(na, 0);
		after /= na;
		ck_assert_msg(after > 55 && after < 70, "%s paused %.1f%% after", s.name, after);
	}
	ck_assert_int_eq(nic, 2);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

static struct roce_fabric *run_text(const char *text, struct roce_scenario **sc)
{
	struct roce_fabric *fab;

	*sc = roce_scenario_parse("fct", text, NULL, 0, err, sizeof(err));
	ck_assert_msg(*sc != NULL, "%s", err);
	fab = roce_fabric_create(*sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	return fab;
}

/*
 * The FCT summary: per kind of flow while there are few kinds, its percentiles those of the
 * flows' own FCTs; by decades of bytes moved when there are many; none for a handful of flows.
 */
START_TEST(fct_summary)
{
	static const char *const sizes[] = { "1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M" };
	char text[4096], row[256], *csv;
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	double fct[16];
	size_t n = 0;

	/* eight senders of 64 KiB x 4 and eight of 256 KiB x 1 into one port */
	n = (size_t)snprintf(text, sizeof(text), "[scenario]\nname = fct\nduration = 5ms\n"
			     "[topology]\nkind = star\nhosts = 9\n");
	for (int i = 1; i <= 8; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "[flow.a%d]\nsrc = h%d\ndst = h0\nsize = 64K\ncount = 4\n"
				      "[flow.b%d]\nsrc = h0\ndst = h%d\nsize = 256K\ncount = 1\n",
				      i, i, i, i);
	fab = run_text(text, &sc);
	n = 0;
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;

		roce_fabric_flow_result(fab, i, &r);
		ck_assert(r.done);
		if (sc->flow[i].size == 65536)
			fct[n++] = (double)(r.last_done - r.first_post) / ROCE_US;
	}
	ck_assert_uint_eq(n, 8);
	qsort(fct, n, sizeof(double), fab_cmp_double);
	csv = table_csv(roce_fabric_fct_table(fab));
	/* nearest rank: p50 of 8 is the 4th, p90 and p99 the 8th */
	snprintf(row, sizeof(row), "\nwrite 64 KiB x 4,8,%.1f,%.1f,%.1f,%.1f,%.1f,", fct[0], fct[3],
		 fct[7], fct[7], fct[7]);
	ck_assert_msg(strstr(csv, row) != NULL, "%s not in\n%s", row, csv);
	ck_assert_ptr_nonnull(strstr(csv, "\nwrite 256 KiB x 1,8,"));
	ck_assert_ptr_nonnull(strstr(csv, "\nall flows,16,"));
	free(csv);
	/* the terminal's short table: the three slowest, slowest first */
	{
		struct roce_flow_result r;
		roce_time_t slow[3] = { 0 };
		int who[3] = { -1, -1, -1 };
		char *p;

		for (int i = 0; i < sc->nflows; i++) {
			roce_time_t f;
			int k = 3;

			roce_fabric_flow_result(fab, i, &r);
			f = r.last_done - r.first_post;
			while (k > 0 && f > slow[k - 1])
				k--;
			for (int j = 2; j > k; j--) {
				slow[j] = slow[j - 1];
				who[j] = who[j - 1];
			}
			if (k < 3) {
				slow[k] = f;
				who[k] = i;
			}
		}
		csv = table_csv(roce_fabric_flow_table_worst(fab, 3));
		p = strchr(csv, '\n') + 1;
		for (int k = 0; k < 3; k++) {
			size_t len = strlen(sc->flow[who[k]].name);

			ck_assert_msg(strncmp(p, sc->flow[who[k]].name, len) == 0 && p[len] == ',',
				      "row %d: want %s, got\n%s", k, sc->flow[who[k]].name, csv);
			p = strchr(p, '\n') + 1;
		}
		ck_assert_str_eq(p, "");
		free(csv);
	}
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* eight kinds: by decades of the bytes each flow moved, from the smallest's */
	n = (size_t)snprintf(text, sizeof(text), "[scenario]\nname = fct\nduration = 20ms\n"
			     "[topology]\nkind = star\nhosts = 9\n");
	for (int i = 1; i <= 8; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "[flow.f%d]\nsrc = h%d\ndst = h0\nsize = %s\ncount = 1\n", i,
				      i, sizes[i - 1]);
	fab = run_text(text, &sc);
	csv = table_csv(roce_fabric_fct_table(fab));
	/* 1024 4096 | 16384 65536 | 262144 | 1048576 4194304 | 16777216 */
	ck_assert_msg(strstr(csv, "\n1 KB - 10 KB,2,") && strstr(csv, "\n10 KB - 100 KB,2,") &&
		      strstr(csv, "\n100 KB - 1 MB,1,") && strstr(csv, "\n1 MB - 10 MB,2,") &&
		      strstr(csv, "\n10 MB - 100 MB,1,") && strstr(csv, "\nall flows,8,"),
		      "%s", csv);
	free(csv);
	{
		struct roce_chart *c = roce_fabric_fct_chart(fab);
		char *svg = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&svg, &len);

		ck_assert_ptr_nonnull(c);
		ck_assert_int_eq(roce_chart_write_svg(c, f), 0);
		fclose(f);
		ck_assert_ptr_nonnull(strstr(svg, "data-xlog=\"1\""));	/* FCTs over decades */
		ck_assert_uint_eq(count_str(svg, "class=\"series\""), 6);	/* 5 bins and all */
		free(svg);
		roce_chart_destroy(c);
	}
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* fewer than ROCE_FCT_MIN_FLOWS: the flow table says it all */
	fab = run_text("[scenario]\nname = fct\nduration = 1ms\n[topology]\nkind = star\n"
		       "hosts = 2\n[flow.a]\nsrc = h0\ndst = h1\nsize = 4K\ncount = 1\n", &sc);
	errno = EINVAL;
	ck_assert_ptr_null(roce_fabric_fct_table(fab));
	ck_assert_int_eq(errno, ENODATA);
	ck_assert_ptr_null(roce_fabric_fct_chart(fab));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

static struct roce_fabric *run_sets(const char *file, const char *const *set, int nset,
				    struct roce_scenario **sc)
{
	struct roce_fabric *fab;

	*sc = roce_scenario_load(file, set, nset, err, sizeof(err));
	ck_assert_msg(*sc != NULL, "%s", err);
	fab = roce_fabric_create(*sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	return fab;
}

static struct roce_fabric *run_file(const char *file, const char *set,
				    struct roce_scenario **sc)
{
	return run_sets(file, set != NULL ? &set : NULL, set != NULL, sc);
}

/* Whether some finding starts with @p start and holds @p also (NULL: anything). */
static bool found(const struct roce_findings *fd, const char *start, const char *also)
{
	for (int i = 0; i < fd->n; i++)
		if (strncmp(fd->text[i], start, strlen(start)) == 0 &&
		    (also == NULL || strstr(fd->text[i], also) != NULL))
			return true;
	return false;
}

/*
 * The same ring with a 2 ms PFC watchdog: it drops the stuck queues' frames, the cycle is broken
 * (a sample finds none), and the same routes make it again; each formation counts, the first
 * keeps its report, the watchdog's first drop is known, and the findings say so.
 */
START_TEST(deadlock_reforms)
{
	const char *set[] = { "scenario.duration=6ms", "switch.watchdog=2ms" };
	struct roce_scenario *sc = roce_scenario_load(SCENARIOS "/pfc-deadlock.ini", set, 2, err,
						      sizeof(err));
	roce_time_t at[ROCE_FABRIC_DEADLOCKS_KEPT], wd = 0;
	struct roce_findings fd;
	struct roce_fabric *fab;
	char report[300];
	uint32_t n;
	bool now;

	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	ck_assert(roce_fabric_deadlock(fab, report, sizeof(report)));
	n = roce_fabric_deadlocks(fab, at, &now);
	for (int s = 0; s < sc->nswitches; s++) {
		roce_time_t t = roce_switch_watchdog_first(roce_fabric_switch(fab, s));

		/* stuck for the watchdog's time: from when the queues stopped, which the 20 us
		 * sampler saw a little later */
		ck_assert(t == 0 || (t >= at[0] + 2 * ROCE_MS - 20 * ROCE_US &&
				     t < at[0] + 2 * ROCE_MS));
		if (t != 0 && (wd == 0 || t < wd))
			wd = t;
	}
	/* formed at 340 us, broken by the drops a little after 2.34 ms, formed again: twice at
	 * least in 6 ms, each formation after a drop */
	ck_assert_msg(n >= 2 && n <= 3, "%u formations", n);
	ck_assert_msg(strncmp(report, "at 340.0 us:", 12) == 0, "%s", report);
	ck_assert(wd != 0 && at[0] < wd && wd < at[1]);
	roce_fabric_findings(fab, &fd);
	snprintf(report, sizeof(report), "made it again: %u times in all", n);
	ck_assert_msg(found(&fd, "PFC deadlock at 340.0 us", report) &&
		      strstr(fd.text[0], "the PFC watchdog broke it") != NULL, "%s", fd.text[0]);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* What stands out: each kind of trouble named where it happens, and "nothing" when none. */
START_TEST(findings)
{
	struct roce_findings fd;
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	char want[128];
	uint64_t drops = 0;

	fab = run_file(SCENARIOS "/pfc-deadlock.ini", NULL, &sc);
	roce_fabric_findings(fab, &fd);
	ck_assert_msg(fd.n >= 3 && found(&fd, "PFC deadlock at ", "sw0 p0 prio 3 ->") &&
		      strncmp(fd.text[0], "PFC deadlock", 12) == 0, "%s", fd.text[0]);
	/* stuck since 340 us: nothing delivered in their last 19.6 ms, their NICs paused */
	ck_assert(found(&fd, "6 of 6 flows stalled (a, b, c, d, ...): nothing delivered in "
			"their last 196", "; 6 paused by PFC at their NIC: see the flow table"));
	/* the NICs in the cycle, paused from before the deadlock formed (340 us) to the end of
	 * the 20 ms: 99%, not the 100% of a pause counted past the end of the run */
	ck_assert(found(&fd, "PFC paused 9 sending queues", "prio 3 99%"));
	ck_assert(!found(&fd, "PFC paused ", "100%"));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* a lossy class tail-dropping: the count and the port */
	fab = run_file(SCENARIOS "/troubleshoot-dscp.ini", NULL, &sc);
	roce_fabric_findings(fab, &fd);
	for (uint16_t p = 0; p < sc->sw[0].conf.nports; p++)
		for (int prio = 0; prio < ROCE_NPRIO; prio++) {
			struct roce_switch_qstats q;

			roce_switch_qstats(roce_fabric_switch(fab, 0), p, prio, &q);
			drops += q.drop_tail;
		}
	ck_assert_uint_gt(drops, 0);
	snprintf(want, sizeof(want), "switches dropped %" PRIu64 " frames (tail %" PRIu64, drops,
		 drops);
	ck_assert_msg(found(&fd, want, "most at sw0 p"), "%s", fd.n ? fd.text[0] : "");
	ck_assert(found(&fd, "", "frames resent (go-back-N)"));
	ck_assert(!found(&fd, "nothing", NULL));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* drops no switch counts */
	fab = run_file(SCENARIOS "/troubleshoot-pcie.ini", "nic.pfc=off", &sc);
	roce_fabric_findings(fab, &fd);
	ck_assert(found(&fd, "NICs dropped ", "rx_out_of_buffer"));
	ck_assert(!found(&fd, "switches dropped", NULL));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* a clean run */
	fab = run_text("[scenario]\nname = fct\nduration = 1ms\n[topology]\nkind = star\n"
		       "hosts = 2\n[flow.a]\nsrc = h0\ndst = h1\nsize = 64K\ncount = 4\n", &sc);
	roce_fabric_findings(fab, &fd);
	ck_assert_int_eq(fd.n, 1);
	ck_assert(found(&fd, "nothing: ", NULL));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* How many flows of the flow table have status @p st (its CSV's last column). */
static int count_status(const struct roce_fabric *fab, const char *st)
{
	char *csv = table_csv(roce_fabric_flow_table(fab)), *line, *save = NULL;
	int n = 0;

	for (line = strtok_r(csv, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		const char *last = strrchr(line, ',');

		n += last != NULL && strcmp(last + 1, st) == 0;
	}
	free(csv);
	return n;
}

static int flow_index(const struct roce_scenario *sc, const char *name)
{
	for (int i = 0; i < sc->nflows; i++)
		if (strcmp(sc->flow[i].name, name) == 0)
			return i;
	ck_abort_msg("no flow %s", name);
	return -1;
}

/*
 * Stalled means nothing delivered; slow, still delivering but no message completed lately;
 * both after the quiet window (a tenth of the run, or twice the slowest message's time),
 * judged the same on a run cut short as on a whole one.
 */
START_TEST(stalled_or_slow)
{
	const char *ls[] = { "pattern.a2a.count=0", "scenario.duration=4470us",
			     "capture.links=none", "scenario.sample=0" };
	const char *ns3[] = { "scenario.duration=500us" };
	const char *ar[] = { "scenario.duration=300us" };
	struct roce_flow_result r;
	struct roce_findings fd;
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	roce_time_t now, quiet;
	int i;

	/*
	 * All-to-all cut at 4.47 ms: DCQCN has held a2a.15-6 near 0.27 Gb/s since 4.13 ms (the
	 * CE-marked tail of a deep queue), so its 30th message, posted at 3.65 ms, has not
	 * completed (its last completion at 3.748 ms, 721 us before the end, over twice its
	 * slowest message's 350 us) but a packet arrives every ~33 us: slow, not stalled.
	 */
	fab = run_sets(SCENARIOS "/leafspine-alltoall.ini", ls, 3, &sc);
	i = flow_index(sc, "a2a.15-6");
	roce_fabric_flow_result(fab, i, &r);
	now = roce_fabric_now(fab);
	quiet = ROCE_MAX(now / 10, (roce_time_t)(2 * r.lat_max_us * ROCE_US));
	ck_assert(r.rx_tracked && !r.done && r.messages == 29);
	ck_assert_uint_lt(r.last_done + quiet, now);		/* no completion in the window */
	ck_assert_uint_ge(r.rx_at + 40 * ROCE_US, now);	/* a delivery in the last 2 samples */
	ck_assert_msg(r.rate_min_gbps > 0.2 && r.rate_min_gbps < 0.3, "%f", r.rate_min_gbps);
	ck_assert_int_eq(count_status(fab, "slow"), 1);
	ck_assert_int_eq(count_status(fab, "stalled"), 0);
	roce_fabric_findings(fab, &fd);
	ck_assert_msg(found(&fd, "1 of 240 flows slow (a2a.15-6): still delivering, but no message "
			    "completed in its last 721 us (its slowest took 350 us); its dcqcn rate "
			    "fell to 0.265 Gb/s since its last completion: see the flow table",
			    NULL), "%s", fd.text[0]);
	ck_assert(!found(&fd, "", "stalled"));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* the same without sampling: deliveries not tracked, and the finding says so */
	fab = run_sets(SCENARIOS "/leafspine-alltoall.ini", ls, 4, &sc);
	roce_fabric_findings(fab, &fd);
	ck_assert_msg(found(&fd, "1 of 240 flows stalled (a2a.15-6): no message completed in its "
			    "last 721 us (sampling is off: deliveries are not tracked); waiting "
			    "for ACKs", NULL), "%s", fd.text[0]);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* 1 MB messages still arriving at 31 Gb/s at 500 us, none completed yet: running */
	fab = run_sets(SCENARIOS "/ns3-trace.ini", ns3, 1, &sc);
	ck_assert_int_eq(count_status(fab, "running"), 3);
	roce_fabric_findings(fab, &fd);
	ck_assert(found(&fd, "nothing: every flow finished or ran to the end", NULL));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* an all-reduce cut in its second step: the later steps wait, they are not trouble */
	fab = run_sets(SCENARIOS "/allreduce.ini", ar, 1, &sc);
	ck_assert_int_eq(count_status(fab, "waiting"), 96);
	ck_assert_int_eq(count_status(fab, "not started"), 0);
	roce_fabric_findings(fab, &fd);
	ck_assert(found(&fd, "nothing: every flow that started finished or ran to the end (96 more "
			"wait for their start, or for the flow they follow)", NULL));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/*
	 * The responder's link down at 100 us: nothing arrives after, and the requester waits for
	 * ACKs, its ACK timeout (timeout 8: 1.05 ms) fired once at ~1.15 ms, due again ~195 us
	 * after the end.
	 */
	fab = run_text("[scenario]\nname = down\nduration = 2ms\nsample = 10us\ntimeout = 8\n"
		       "[topology]\nkind = star\nhosts = 2\n[flow.a]\nsrc = h0\ndst = h1\n"
		       "size = 64K\ncount = 0\n[event.cut]\nat = 100us\nlink = h1-sw0\n"
		       "state = down\n", &sc);
	roce_fabric_flow_result(fab, 0, &r);
	ck_assert_int_eq(r.wait.kind, ROCE_QP_WAIT_ACK);
	ck_assert_int_eq(r.wait.retries_left, sc->retry_cnt - 1);
	roce_fabric_findings(fab, &fd);
	ck_assert_msg(found(&fd, "1 of 1 flows stalled (a): nothing delivered in its last 1900 us; "
			    "waiting for ACKs, its ACK timeout due in 195 us (6 retries left)",
			    NULL), "%s", fd.text[0]);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

START_TEST(demo_claims)
{
	struct roce_demo_conf conf = { .seed = 1, .quick = true };
	struct roce_demo_result r;

	ck_assert_msg(roce_demo_run(&conf, &r, err, sizeof(err)) == 0, "%s", err);
	/* 1: the TCP path's CPU copies cost more host CPU than RDMA's posting and polling */
	ck_assert_msg(r.tcp_host_cpu_sec > 2 * r.rdma_app_sec, "TCP %.6f s, RDMA %.6f s",
		      r.tcp_host_cpu_sec, r.rdma_app_sec);
	ck_assert(r.rdma_gbps > 90);
	/* 2: loss costs goodput and retransmissions; lossless has none */
	ck_assert(r.lossless_gbps > 85);
	ck_assert(r.lossy_gbps < r.lossless_gbps);
	ck_assert(r.lossy_retransmits > 0);
	/* 3: PFC alone starves the victim and pauses; DCQCN keeps the queue short */
	ck_assert_msg(r.victim_dcqcn_gbps > 2 * r.victim_pfc_gbps, "victim %.1f vs %.1f Gb/s",
		      r.victim_dcqcn_gbps, r.victim_pfc_gbps);
	ck_assert(r.pauses_pfc > 10 && r.pauses_dcqcn < r.pauses_pfc / 4);
	ck_assert(r.maxq_dcqcn_kb < r.maxq_pfc_kb);
	/* 4: the counters blame the degraded port, which runs at 40G after the change */
	ck_assert_str_eq(r.degraded_port, "sw0 p0");
	ck_assert(r.degrade_before_gbps > 90 && r.degrade_after_gbps > 35 && r.degrade_after_gbps < 41);
	ck_assert(r.degrade_pauses > 0);
}
END_TEST

/* ---- the run report's charts ---- */

/* Scenario @p file (of scenarios/, or built in) with @p set, run. */
static struct roce_fabric *run_named(const char *file, const char *const *set, int nset,
				     struct roce_scenario **sc)
{
	struct roce_fabric *fab;

	if (roce_scenario_builtin(file) != NULL)
		*sc = roce_scenario_parse(file, roce_scenario_builtin(file), set, nset, err,
					  sizeof(err));
	else
		*sc = roce_scenario_load(file, set, nset, err, sizeof(err));
	ck_assert_msg(*sc != NULL, "%s", err);
	fab = roce_fabric_create(*sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	return fab;
}

/* How many times @p needle occurs in @p s. */
static int occurrences(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The page rocelab run's "Time series" section makes of @p fab. */
static char *charts_html(const struct roce_fabric *fab)
{
	struct roce_report *r = roce_report_create("t");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	roce_fabric_add_charts(fab, r);
	ck_assert_int_eq(roce_report_write_stream(r, f), 0);
	fclose(f);
	roce_report_destroy(r);
	return buf;
}

/* The <figure> of @p html whose chart starts with title @p title (a copy), or NULL. */
static char *figure(const char *html, const char *title)
{
	char needle[160];
	const char *p, *start, *end;

	snprintf(needle, sizeof(needle), "-title\">%s", title);
	p = strstr(html, needle);
	if (p == NULL)
		return NULL;
	for (start = p; start > html && strncmp(start, "<figure>", 8) != 0; start--)
		;
	end = strstr(p, "</figure>");
	ck_assert_ptr_nonnull(end);
	return strndup(start, (size_t)(end - start));
}

/*
 * The highest value a line/step chart @p fig draws at x >= @p x_from, read back from its
 * paths through the plot's pixel mapping (data-x "x0 x1 left right", data-y "y0 y1 bottom top").
 */
static double max_drawn_after(const char *fig, double x_from)
{
	double x0, x1, l, r, y0, y1, b, t, top = -INFINITY;
	const char *p = strstr(fig, "data-x=\"");

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "data-x=\"%lf %lf %lf %lf", &x0, &x1, &l, &r), 4);
	ck_assert_int_eq(sscanf(strstr(p, "data-y=\""), "data-y=\"%lf %lf %lf %lf", &y0, &y1, &b,
				&t), 4);
	for (p = strstr(p, "<path "); p != NULL; p = strstr(p + 1, "<path ")) {
		const char *d = strstr(p, " d=\"") + 4;
		double px = 0, py = 0;

		while (*d != '"') {
			char op = *d++;
			int used = 0;

			if (op == 'M' || op == 'L')
				ck_assert_int_eq(sscanf(d, "%lf,%lf%n", &px, &py, &used), 2);
			else if (op == 'H')
				ck_assert_int_eq(sscanf(d, "%lf%n", &px, &used), 1);
			else if (op == 'V')
				ck_assert_int_eq(sscanf(d, "%lf%n", &py, &used), 1);
			else
				ck_abort_msg("path op %c", op);
			d += used;
			if (x0 + (px - l) / (r - l) * (x1 - x0) >= x_from)
				top = ROCE_MAX(top, y0 + (b - py) / (b - t) * (y1 - y0));
		}
	}
	return top;
}

/*
 * The ring all-reduce's goodput chart shows its whole run: its 112 flows are 8 hosts' 14 ring
 * steps, too many for a line each; the 12 highest peaks (ties, won by the first steps) drew a
 * flat line from 450 us to the end. Its caption says what the lines are.
 */
START_TEST(chart_allreduce_whole_run)
{
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_named(SCENARIOS "/allreduce.ini", NULL, 0, &sc);
	double end = (double)roce_fabric_now(fab) / ROCE_US;
	char *html = charts_html(fab), *fig = figure(html, "Goodput per");

	ck_assert_ptr_nonnull(fig);
	/* the last ring steps run at line rate in the run's last tenth: the chart shows it */
	ck_assert_msg(max_drawn_after(fig, 0.9 * end) > 50, "flat after %g us",
		      0.9 * end);
	ck_assert_ptr_nonnull(strstr(fig, "<figcaption>112 flows, too many for a line each: a "
				     "line per sending host"));
	ck_assert_ptr_nonnull(strstr(fig, "data-name=\"h7 (14 flows)\""));
	free(fig);
	/* DCQCN is on but no CNP ever came: no chart of 112 flat lines, one line saying so */
	ck_assert_str_eq(sc->cc, "dcqcn");
	ck_assert_ptr_null(strstr(html, "Reaction-point rate per flow"));
	ck_assert_ptr_nonnull(strstr(html, "<p>No reaction-point rate chart: dcqcn never lowered"));
	free(html);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * A fabric without a switch has no queue to chart: no empty "no data" frame, one line saying
 * why. Nor is any other chart empty.
 */
START_TEST(chart_no_switch)
{
	const char *set[] = { "flow.write.count=16" };
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_named("demo-zerocopy", set, 1, &sc);
	char *html = charts_html(fab);

	ck_assert_int_eq(sc->nswitches, 0);
	ck_assert_ptr_null(strstr(html, "no data"));
	ck_assert_ptr_null(strstr(html, "Deepest switch egress queues"));
	ck_assert_ptr_nonnull(strstr(html, "<p>No switch queue chart: this fabric has no switch"));
	ck_assert_ptr_nonnull(strstr(html, "-title\">Goodput per flow<"));
	free(html);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * The PFC deadlock stops everything at 340 us of a 20 ms run: the charts' time axis stops a
 * little after (the deadlock marked on it), not at 20 ms with the run a sliver at the left, and
 * each caption says so. With the watchdog breaking it, things happen to the end: the whole run.
 */
START_TEST(chart_deadlock_axis)
{
	const char *wd[] = { "scenario.duration=6ms", "switch.watchdog=2ms" };
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_named(SCENARIOS "/pfc-deadlock.ini", NULL, 0, &sc);
	char *html = charts_html(fab);
	int charts = 0;

	for (const char *p = strstr(html, "data-x=\""); p != NULL; p = strstr(p + 1, "data-x=\"")) {
		double x0, x1;

		ck_assert_int_eq(sscanf(p, "data-x=\"%lf %lf", &x0, &x1), 2);
		ck_assert_msg(x0 == 0 && x1 > 340 && x1 <= 1000, "axis %g to %g us", x0, x1);
		charts++;
	}
	ck_assert_int_eq(charts, 3);	/* goodput, queues, pauses */
	ck_assert_int_eq(occurrences(html, "class=\"marklabel\">deadlock found<"), 3);
	ck_assert_int_eq(occurrences(html, "<figcaption>The time axis stops at "), 3);
	ck_assert_ptr_nonnull(strstr(html, "of the run&#39;s 20000 us: nothing changes after "));
	/* nine senders paused, the chart's eight lines and one: drawn, not "+ 1 more" */
	ck_assert_int_eq(roce_fabric_nseries(fab, ROCE_SERIES_PAUSED), 9);
	ck_assert_ptr_null(strstr(html, "not drawn"));
	ck_assert_ptr_nonnull(strstr(html, "data-name=\"h4 NIC\""));
	free(html);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	fab = run_named(SCENARIOS "/pfc-deadlock.ini", wd, 2, &sc);
	html = charts_html(fab);
	ck_assert_ptr_nonnull(strstr(html, "data-x=\"0 6000 "));
	ck_assert_ptr_null(strstr(html, "The time axis stops"));
	ck_assert_ptr_nonnull(strstr(html, ">PFC watchdog drops<"));
	free(html);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * A flow with several QPs has a reaction point each: its rate series is their mean. The incast
 * is cut at 600 us, with DCQCN still holding its senders' QPs at different rates.
 */
START_TEST(rp_rate_mean_of_qps)
{
	const char *set[] = { "nic.cc=dcqcn", "pattern.incast.qps=2", "scenario.duration=600us" };
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_named("demo-incast", set, 3, &sc);
	int differ = 0;

	for (int i = 0; i < sc->nflows; i++) {
		struct roce_qp *a = roce_fabric_flow_qp(fab, i, 0), *b = roce_fabric_flow_qp(fab, i, 1);
		struct roce_series s;
		double mean;

		if (sc->flow[i].nqp != 2)
			continue;
		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(b);
		ck_assert_ptr_null(roce_fabric_flow_qp(fab, i, 2));
		roce_fabric_series(fab, ROCE_SERIES_RATE_GBPS, i, &s);
		mean = ((double)roce_qp_rate(a) + (double)roce_qp_rate(b)) / 2 / 1e9;
		ck_assert_msg(fabs(s.v[s.n - 1] - mean) < 1e-9, "%s: %g, its QPs' mean %g",
			      s.name, s.v[s.n - 1], mean);
		differ += roce_qp_rate(a) != roce_qp_rate(b);
	}
	ck_assert_int_gt(differ, 0);	/* else the mean and the first QP's would agree */
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * In the incast the victim flow (a [flow] among a pattern's) has a colour no incast flow has:
 * incast.s8, the ninth line, was the victim's blue, dashed.
 */
START_TEST(chart_victim_colour)
{
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_named("demo-incast", NULL, 0, &sc);
	char *html = charts_html(fab), *fig = figure(html, "Goodput per flow");
	const char *v, *p;
	char victim[8];
	int others = 0;

	ck_assert_ptr_nonnull(fig);
	v = strstr(fig, "data-name=\"victim\" data-color=\"");
	ck_assert_ptr_nonnull(v);
	snprintf(victim, sizeof(victim), "%.7s", v + strlen("data-name=\"victim\" data-color=\""));
	for (p = strstr(fig, "data-name=\"incast."); p != NULL; p = strstr(p + 1,
									   "data-name=\"incast.")) {
		const char *col = strstr(p, "data-color=\"") + strlen("data-color=\"");

		ck_assert_msg(strncmp(col, victim, 7) != 0, "%.30s in the victim's %s", p, victim);
		others++;
	}
	ck_assert_int_eq(others, 8);
	ck_assert_ptr_nonnull(strstr(fig, "class=\"series hi\" data-name=\"victim\""));
	ck_assert_ptr_null(strstr(html, "reaction-point rate chart"));	/* no cc: neither */
	free(fig);
	free(html);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* with DCQCN the incast's CNPs cut the rates: the chart is drawn, its lines move */
	fab = run_named("demo-incast", (const char *[]){ "nic.cc=dcqcn" }, 1, &sc);
	html = charts_html(fab);
	fig = figure(html, "Reaction-point rate per flow");
	ck_assert_ptr_nonnull(fig);
	ck_assert_ptr_null(strstr(html, "No reaction-point rate chart"));
	free(fig);
	free(html);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* The cells of the table row of @p html starting with cell @p first, into @p cell[n]. */
static void table_row(const char *html, const char *first, char cell[][32], int n)
{
	char needle[64];
	const char *p;

	snprintf(needle, sizeof(needle), "<td class=\"l\">%s</td>", first);
	p = strstr(html, needle);
	ck_assert_msg(p != NULL, "no row %s", first);
	for (int i = 0; i < n; i++) {
		p = strstr(p, "<td");
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(sscanf(strchr(p, '>') + 1, "%31[^<]", cell[i]), 1);
		p++;
	}
}

/*
 * Demo step 2's chart and table agree: each bar is the table's number (to its two decimals),
 * and where the table has "-" (the lossless fabric's worst run: it is run once) there is no bar
 * but a label saying it does not apply.
 */
START_TEST(demo_loss_chart_as_table)
{
	char dir[] = "/tmp/rocelab-demo-XXXXXX", path[256], cell[4][32], *html = NULL, *fig;
	struct roce_demo_conf conf = { .seed = 1, .quick = true, .out_dir = mkdtemp(dir) };
	static const char *const rows[][2] = {
		{ "lossless (PFC)", "0 (PFC)" }, { "lossy (no PFC)", "1e-5" },
	};
	struct roce_demo_result r;
	size_t len = 0;
	FILE *f;

	ck_assert_ptr_nonnull(conf.out_dir);
	ck_assert_msg(roce_demo_run(&conf, &r, err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "%s/report.html", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(getdelim(&html, &len, '\0', f) > 0, 1);
	fclose(f);
	fig = figure(html, "Goodput against the loss rate");
	ck_assert_ptr_nonnull(fig);
	for (size_t i = 0; i < ROCE_DIM(rows); i++) {
		char title[96];
		const char *p;
		double v;

		table_row(html, rows[i][0], cell, 4);	/* fabric, loss, goodput, worst run */
		snprintf(title, sizeof(title), "<title>median run \xe2\x80\x94 %s: ", rows[i][1]);
		p = strstr(fig, title);
		ck_assert_msg(p != NULL, "no median bar for %s", rows[i][1]);
		ck_assert_int_eq(sscanf(strchr(p + strlen(title), '(') + 1, "%lf", &v), 1);
		ck_assert_msg(fabs(v - atof(cell[2])) < 0.005, "bar %g, table %s", v, cell[2]);
		snprintf(title, sizeof(title), "<title>worst run \xe2\x80\x94 %s: ", rows[i][1]);
		p = strstr(fig, title);
		if (strcmp(cell[3], "-") == 0) {
			ck_assert_msg(p == NULL, "a worst-run bar where the table has -");
			continue;
		}
		ck_assert_msg(p != NULL, "no worst bar for %s", rows[i][1]);
		ck_assert_int_eq(sscanf(strchr(p + strlen(title), '(') + 1, "%lf", &v), 1);
		ck_assert_msg(fabs(v - atof(cell[3])) < 0.005, "bar %g, table %s", v, cell[3]);
	}
	table_row(html, "lossless (PFC)", cell, 4);
	ck_assert_str_eq(cell[3], "-");
	ck_assert_ptr_nonnull(strstr(fig, "class=\"missing\">n/a<"));
	ck_assert_ptr_nonnull(strstr(fig, ">n/a: lossless is run once, no worst run<"));
	free(fig);
	free(html);
	/* what the demo wrote: report.html and the captures */
	{
		static const char *const files[] = {
			"report.html", "zerocopy.pcap", "lossless.pcap", "lossy-1e-4.pcap",
			"incast-pfc.pcap", "incast-dcqcn.pcap", "degrade.pcap",
		};

		for (size_t i = 0; i < ROCE_DIM(files); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
			unlink(path);
		}
	}
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/*
 * What arrives is what was sent: WRITE, READ and SEND flows (two QPs for the SEND) across
 * lossy links, one of them flipping bits (frames the receiver drops on their ICRC), finish
 * with their targets holding their sources' pattern after go-back-N has resent what was lost
 * (and ACK timeouts of 67 ms have waited for lost tails: hence the long duration; the run ends
 * when the flows do). One byte changed in a target makes that flow corrupt.
 */
START_TEST(data_intact)
{
	struct roce_findings fd;
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	struct roce_flow_result r;
	uint64_t resent = 0, corrupted = 0, len;
	uint8_t *target;
	char *csv;

	fab = run_text("[scenario]\nname = intact\nduration = 2s\nmtu = 1024\n"
		       "[topology]\nkind = star\nhosts = 4\nloss = 1e-3\n"
		       "[link.h1-sw0]\ncorrupt = 2e-3\n"
		       "[flow.w]\nsrc = h1\ndst = h0\nop = write\nsize = 256K\ncount = 8\n"
		       "[flow.r]\nsrc = h2\ndst = h1\nop = read\nsize = 256K\ncount = 8\n"
		       "[flow.s]\nsrc = h3\ndst = h1\nop = send\nsize = 64K\ncount = 16\n"
		       "qps = 2\n", &sc);
	for (int i = 0; i < sc->nflows; i++) {
		bool read = sc->flow[i].op == ROCE_FLOW_READ;
		const uint8_t *from = fab_flow_memory(fab, i, read, &len);
		const uint8_t *to = fab_flow_memory(fab, i, !read, &len);

		for (uint64_t b = 0; b < len; b++)
			ck_assert_msg(from[b] == (uint8_t)(b % FAB_PATTERN * 7 + (uint64_t)i) &&
				      to[b] == from[b], "flow %s, byte %" PRIu64 ": %#x -> %#x",
				      sc->flow[i].name, b, from[b], to[b]);
	}
	/* a byte of w's target that is not the source's: w is corrupt, the others are not */
	target = fab_flow_memory(fab, 0, true, &len);
	target[len / 2] ^= 0x10;
	for (int i = 0; i < sc->nflows; i++) {
		roce_fabric_flow_result(fab, i, &r);
		ck_assert_msg(r.done && r.data_ok == (i != 0), "flow %s: done %d, data ok %d",
			      sc->flow[i].name, r.done, r.data_ok);
		resent += r.retransmits;
	}
	for (int l = 0; l < sc->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			struct roce_link_stats st;

			roce_link_stats(roce_fabric_link(fab, l), d, &st);
			corrupted += st.corrupted;
		}
	ck_assert_uint_gt(resent, 0);
	ck_assert_uint_gt(corrupted, 0);
	csv = table_csv(roce_fabric_flow_table(fab));
	ck_assert_msg(strstr(csv, "\nw,") && strstr(strstr(csv, "\nw,"), ",corrupt\n"), "%s", csv);
	free(csv);
	roce_fabric_findings(fab, &fd);
	ck_assert(found(&fd, "1 of 3 flows delivered bytes that differ", "(w)"));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * payload = discard: the same lossy, corrupting run of WRITE, READ and SEND flows as
 * data_intact gives the same capture and metrics, byte for byte, as with the payloads placed;
 * the targets are never written, and the flows are done, not corrupt, with nothing checked.
 */
START_TEST(payload_discard)
{
	static const char text[] =
		"[scenario]\nname = discard\nduration = 2s\nmtu = 1024\nsample = 100us\n"
		"[topology]\nkind = star\nhosts = 4\nloss = 1e-3\n"
		"[link.h1-sw0]\ncorrupt = 2e-3\n"
		"[flow.w]\nsrc = h1\ndst = h0\nop = write\nsize = 256K\ncount = 8\n"
		"[flow.r]\nsrc = h2\ndst = h1\nop = read\nsize = 256K\ncount = 8\n"
		"[flow.s]\nsrc = h3\ndst = h1\nop = send\nsize = 64K\ncount = 16\nqps = 2\n";
	const char *set[] = { "scenario.payload=discard" };
	char pcap[2][64], csv[2][64], *tab;
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	size_t len;

	for (int i = 0; i < 2; i++) {
		snprintf(pcap[i], sizeof(pcap[i]), "/tmp/rocelab-discard-%d-%d.pcap", (int)getpid(),
			 i);
		snprintf(csv[i], sizeof(csv[i]), "/tmp/rocelab-discard-%d-%d.csv", (int)getpid(),
			 i);
		sc = roce_scenario_parse("discard", text, set, i, err, sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		ck_assert_int_eq(sc->discard, i == 1);
		run_to_files(sc, pcap[i], csv[i]);
		roce_scenario_destroy(sc);
	}
	ck_assert_msg(same_file(pcap[0], pcap[1], &len) && len > 500000,
		      "placed and discarded payloads, different captures (%zu bytes)", len);
	ck_assert_msg(same_file(csv[0], csv[1], &len) && len > 1000,
		      "placed and discarded payloads, different metrics");
	for (int i = 0; i < 2; i++) {
		unlink(pcap[i]);
		unlink(csv[i]);
	}

	sc = roce_scenario_parse("discard", text, set, 1, err, sizeof(err));
	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	for (int i = 0; i < sc->nflows; i++) {
		bool read = sc->flow[i].op == ROCE_FLOW_READ;
		const uint8_t *from = fab_flow_memory(fab, i, read, &len);
		const uint8_t *to = fab_flow_memory(fab, i, !read, &len);
		struct roce_flow_result r;
		uint64_t b = 0;

		ck_assert_uint_eq(from[1], 7 + i);	/* the source holds its pattern */
		while (b < len && to[b] == 0)
			b++;
		ck_assert_msg(b == len, "flow %s: byte %" PRIu64 " of its target written",
			      sc->flow[i].name, b);
		roce_fabric_flow_result(fab, i, &r);
		ck_assert_msg(r.done && r.data_ok && r.discarded && r.bytes == sc->flow[i].size *
			      sc->flow[i].count, "flow %s: done %d, data ok %d, discarded %d",
			      sc->flow[i].name, r.done, r.data_ok, r.discarded);
	}
	tab = table_csv(roce_fabric_summary_table(fab, 0));
	ck_assert_msg(strstr(tab, "discarded, not checked") != NULL, "%s", tab);
	free(tab);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * The chart @p title of @p html draws 12 of @p sc's flows, the one of the lowest mean of its
 * series @p kind and the one of the highest among them, spread far enough apart to matter
 * (the highest mean at least twice the lowest); its caption holds @p says.
 */
static void drawn_span(const struct roce_fabric *fab, const struct roce_scenario *sc,
		       const char *html, const char *title, enum roce_series_kind kind,
		       const char *says)
{
	double lo = 1e9, hi = -1, drawn_lo = 1e9, drawn_hi = -1;
	char *fig = figure(html, title);
	int lines = 0;

	ck_assert_msg(fig != NULL, "no chart '%s'", title);
	ck_assert_int_eq(roce_fabric_nseries(fab, kind), sc->nflows);
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_series se;
		double mean = 0;
		char want[64];

		roce_fabric_series(fab, kind, i, &se);
		for (size_t k = 0; k < se.n; k++)
			mean += se.v[k] / (double)se.n;
		lo = ROCE_MIN(lo, mean);
		hi = ROCE_MAX(hi, mean);
		snprintf(want, sizeof(want), "data-name=\"%s\"", sc->flow[i].name);
		if (strstr(fig, want) != NULL) {
			drawn_lo = ROCE_MIN(drawn_lo, mean);
			drawn_hi = ROCE_MAX(drawn_hi, mean);
		}
	}
	for (const char *p = fig; (p = strstr(p, "class=\"series")) != NULL; p++)
		lines++;
	ck_assert_int_eq(lines, 12);
	ck_assert_msg(lo < hi / 2, "%s: means %g to %g", title, lo, hi);
	ck_assert_msg(drawn_lo == lo && drawn_hi == hi, "%s: drawn means %g to %g of %g to %g",
		      title, drawn_lo, drawn_hi, lo, hi);
	ck_assert_msg(strstr(fig, says) != NULL, "%s: caption lacks '%s'", title, says);
	free(fig);
}

/*
 * scenarios/leafspine-128.ini, the 128-host fabric of issue 4's figures, for its first 300 us:
 * 128 flows, host i to host i + 64, all under way and crossing the spines, bytes discarded and
 * the targets' memory never touched; its goodput and rate charts span the flows' means, and
 * the findings name the unequal shares ECMP gave them (and none on a single switch).
 */
START_TEST(leafspine_128)
{
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_file(SCENARIOS "/leafspine-128.ini",
					   "scenario.duration=300us", &sc);
	uint64_t len, spine_tx = 0;

	ck_assert_int_eq(sc->nhosts, 128);
	ck_assert_int_eq(sc->nswitches, 16);
	ck_assert_int_eq(sc->nflows, 128);
	ck_assert(sc->discard);
	for (int i = 0; i < sc->nflows; i++) {
		struct roce_flow_result r;
		const uint8_t *to = fab_flow_memory(fab, i, true, &len);

		ck_assert_int_eq(sc->flow[i].dst, (i + 64) % 128);
		roce_fabric_flow_result(fab, i, &r);
		ck_assert_msg(r.messages >= 1 && r.errors == 0 && r.discarded,
			      "flow %s: %" PRIu64 " messages, %" PRIu64 " errors", sc->flow[i].name,
			      r.messages, r.errors);
		ck_assert_uint_eq(to[len / 2], 0);
	}
	for (int s = 8; s < 16; s++)	/* the spines come after the leaves */
		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_qstats q;

			roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, 3, &q);
			spine_tx += q.tx_frames;
		}
	ck_assert_uint_gt(spine_tx, 128 * 64);	/* every flow's first message crossed them */

	/* the terminal's port table: 12 of the rows, those with the most ECN marks (no drops) */
	{
		char *all = table_csv(roce_fabric_port_table(fab));
		char *worst = table_csv(roce_fabric_port_table_worst(fab, 12));
		long marks_max = 0, prev = -1;
		int rows = 0;

		for (const char *p = strchr(all, '\n') + 1; *p != '\0'; p = strchr(p, '\n') + 1) {
			long v;

			ck_assert_int_eq(sscanf(p, "%*[^,],%*[^,],%*d,%*d,%*d,%*d,%ld", &v), 1);
			marks_max = v > marks_max ? v : marks_max;
		}
		for (const char *p = strchr(worst, '\n') + 1; *p != '\0'; p = strchr(p, '\n') + 1) {
			long drops, v;

			ck_assert_int_eq(sscanf(p, "%*[^,],%*[^,],%*d,%*d,%*d,%ld,%ld", &drops, &v), 2);
			ck_assert_int_eq(drops, 0);
			ck_assert_msg(prev < 0 || v <= prev, "row %d: %ld ECN marks after %ld", rows,
				      v, prev);
			ck_assert_msg(rows > 0 || v == marks_max, "first row %ld marks of %ld", v,
				      marks_max);
			prev = v;
			rows++;
		}
		ck_assert_int_eq(rows, 12);
		ck_assert_msg(marks_max > 100, "%ld", marks_max);
		free(all);
		free(worst);
	}
	/* ECMP put some flows on shared uplinks: the findings say so */
	{
		struct roce_findings fd;

		roce_fabric_findings(fab, &fd);
		ck_assert_msg(found(&fd, "unequal shares: 128 flows of [pattern.shift] ran at ",
				    "the slowest"), "%s", fd.text[0]);
	}
	/* its charts of goodput and rates: 12 of the 128 flows, the lowest mean and the highest */
	{
		char *html = charts_html(fab);

		drawn_span(fab, sc, html, "Goodput per flow", ROCE_SERIES_FLOW_GBPS,
			   "once the run is covered, the rest spread over the bytes");
		drawn_span(fab, sc, html, "Reaction-point rate per flow", ROCE_SERIES_RATE_GBPS,
			   "12 of the 128 flows, spread over their mean rates");
		free(html);
	}
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);

	/* the same permutation on one switch: no shared link, equal shares, nothing to say */
	fab = run_text("[scenario]\nname = star\nduration = 1ms\n[topology]\nkind = star\n"
		       "hosts = 8\n[pattern.p]\nkind = permutation\nhosts = all\nshift = 3\n"
		       "size = 64K\ncount = 8\n", &sc);
	{
		struct roce_findings fd;

		roce_fabric_findings(fab, &fd);
		ck_assert_msg(!found(&fd, "unequal shares", NULL) && found(&fd, "nothing: ", NULL),
			      "%s", fd.text[0]);
	}
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * The frame balance of @p fab checked element by element, from the public counters alone and
 * without roce_fabric_balance(): each link direction, each switch and each NIC conserves the
 * frames it handles, and the sums over the fabric are the balance's. @p what names the run.
 */
static void balance_by_element(const struct roce_fabric *fab, const struct roce_scenario *sc,
			       const char *what)
{
	struct roce_fabric_balance b;
	uint64_t sent = 0, ended = 0, *sw_link_tx, *sw_link_rx;
	uint64_t *nic_link_tx, *nic_link_rx;

	sw_link_tx = calloc((size_t)sc->nswitches * ROCE_SWITCH_MAX_PORTS, sizeof(uint64_t));
	sw_link_rx = calloc((size_t)sc->nswitches * ROCE_SWITCH_MAX_PORTS, sizeof(uint64_t));
	nic_link_tx = calloc((size_t)sc->nhosts, sizeof(uint64_t));
	nic_link_rx = calloc((size_t)sc->nhosts, sizeof(uint64_t));
	ck_assert(sw_link_tx != NULL && sw_link_rx != NULL && nic_link_tx != NULL &&
		  nic_link_rx != NULL);
	/* links: tx + copies = rx + lost + in flight, each direction; their ends' frames */
	for (int l = 0; l < sc->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			int src = d == 0 ? sc->link[l].a : sc->link[l].b;
			int dst = d == 0 ? sc->link[l].b : sc->link[l].a;
			int sport = roce_fabric_link_port(fab, l, d), dport = roce_fabric_link_port(fab, l, 1 - d);
			struct roce_link_stats st;

			roce_link_stats(roce_fabric_link(fab, l), d, &st);
			ck_assert_msg(st.tx_frames + st.duplicated == st.rx_frames + st.dropped +
				      st.down_drops + st.in_flight, "%s: link %s dir %d", what,
				      sc->link[l].name, d);
			sent += st.duplicated;
			ended += st.dropped + st.down_drops + st.mtu_drops + st.in_flight;
			if (src < sc->nhosts)
				nic_link_tx[src] += st.tx_frames + st.mtu_drops;
			else
				sw_link_tx[(src - sc->nhosts) * ROCE_SWITCH_MAX_PORTS + sport] +=
					st.tx_frames + st.mtu_drops;
			if (dst < sc->nhosts)
				nic_link_rx[dst] += st.rx_frames;
			else
				sw_link_rx[(dst - sc->nhosts) * ROCE_SWITCH_MAX_PORTS + dport] += st.rx_frames;
		}
	/* switches: in = forwarded or queued + dropped + PFC taken; out = forwarded + PFC sent */
	for (int s = 0; s < sc->nswitches; s++) {
		uint64_t in = 0, kept = 0;

		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_pstats ps;
			uint64_t qtx = 0;

			roce_switch_pstats(roce_fabric_switch(fab, s), (uint16_t)p, &ps);
			ck_assert_uint_eq(ps.rx_frames, sw_link_rx[s * ROCE_SWITCH_MAX_PORTS + p]);
			ck_assert_uint_eq(ps.tx_frames, sw_link_tx[s * ROCE_SWITCH_MAX_PORTS + p]);
			in += ps.rx_frames - ps.pfc_rx;
			kept += ps.drop_no_route + ps.drop_malformed + ps.drop_ttl;
			sent += ps.pfc_tx;
			ended += ps.pfc_rx + ps.drop_no_route + ps.drop_malformed + ps.drop_ttl;
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				struct roce_switch_qstats q;

				roce_switch_qstats(roce_fabric_switch(fab, s), (uint16_t)p, prio, &q);
				kept += q.tx_frames + q.drop_tail + q.drop_headroom + q.drop_watchdog +
					q.qframes;
				ended += q.drop_tail + q.drop_headroom + q.drop_watchdog + q.qframes;
				qtx += q.tx_frames;
			}
			ck_assert_uint_eq(ps.tx_frames, qtx + ps.pfc_tx);
		}
		ck_assert_msg(in == kept, "%s: %s took in %" PRIu64 " frames, accounts for %" PRIu64,
			      what, sc->sw[s].name, in, kept);
	}
	/* NICs: what they sent is what their links took; what they got, their links gave */
	for (int h = 0; h < sc->nhosts; h++) {
		const struct roce_device *dev = roce_fabric_device(fab, h);

		ck_assert_uint_eq(roce_device_counter_by_name(dev, "tx_frames"), nic_link_tx[h]);
		ck_assert_uint_eq(roce_device_counter_by_name(dev, "rx_frames"), nic_link_rx[h]);
		sent += nic_link_tx[h];
		ended += nic_link_rx[h];	/* taken in, dropped in the NIC or held there */
	}
	ck_assert_msg(sent == ended, "%s: %" PRIu64 " frames sent, %" PRIu64 " ended", what, sent,
		      ended);
	/* roce_fabric_balance() finds the same sums */
	ck_assert_msg(roce_fabric_balance(fab, &b), "%s: %s", what,
		      roce_fabric_balance_text(&b, err, sizeof(err)));
	ck_assert_uint_eq(roce_fabric_balance_sent(&b), sent);
	free(sw_link_tx);
	free(sw_link_rx);
	free(nic_link_tx);
	free(nic_link_rx);
}

/*
 * Every scenario of scenarios/, cut short: the frames add up at the end (roce_fabric_finish()
 * checks it, and returns -EPROTO if not), element by element too; and the check does fail on
 * counts that do not add up, one frame off either way.
 */
START_TEST(balance_every_scenario)
{
	struct dirent *de;
	DIR *d = opendir(SCENARIOS);
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		struct roce_fabric_balance b, bad;
		struct roce_scenario *sc;
		struct roce_fabric *fab;
		char path[512], text[256], dur[64];
		const char *set[] = { dur };
		roce_time_t t = 500 * ROCE_US;	/* ns3-trace's flows all start by then */

		if (len < 5 || strcmp(de->d_name + len - 4, ".ini") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", SCENARIOS, de->d_name);
		/* short, but past its events (demo-degrade's at 1 ms) */
		sc = roce_scenario_load(path, NULL, 0, err, sizeof(err));
		ck_assert_msg(sc != NULL, "%s", err);
		for (int e = 0; e < sc->nevents; e++)
			t = ROCE_MAX(t, sc->event[e].at + 100 * ROCE_US);
		t = ROCE_MIN(t, sc->duration);
		roce_scenario_destroy(sc);
		snprintf(dur, sizeof(dur), "scenario.duration=%" PRIu64 "ns", (uint64_t)(t / ROCE_NS));
		fab = run_sets(path, set, 1, &sc);	/* roce_fabric_run(): 0, balanced */
		balance_by_element(fab, sc, de->d_name);
		ck_assert(roce_fabric_balance(fab, &b));
		ck_assert_msg(roce_fabric_balance_sent(&b) > 0, "%s: no frame sent", de->d_name);
		ck_assert(strstr(roce_fabric_balance_text(&b, text, sizeof(text)), "unaccounted") == NULL);
		bad = b;
		bad.dropped[ROCE_DROP_TTL]++;		/* a drop counted twice */
		ck_assert(!roce_fabric_balance_ok(&bad));
		ck_assert_msg(strstr(roce_fabric_balance_text(&bad, text, sizeof(text)),
				     ": 1 frame counted twice") != NULL, "%s", text);
		bad = b;
		bad.nic_sent++;				/* a frame sent and never seen again */
		ck_assert(!roce_fabric_balance_ok(&bad));
		ck_assert_msg(strstr(roce_fabric_balance_text(&bad, text, sizeof(text)),
				     ": 1 frame unaccounted for") != NULL, "%s", text);
		roce_fabric_destroy(fab);
		roce_scenario_destroy(sc);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 12);
}
END_TEST

/*
 * A routing loop (scenarios/routing-loop.ini): frames for h2 go back and forth between sw0
 * and sw1 until their TTL runs out. The drops count in the summary, by cause, and the
 * findings say why and where; the balance holds with them.
 */
START_TEST(routing_loop)
{
	struct roce_fabric_balance b;
	struct roce_findings fd;
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_file(SCENARIOS "/routing-loop.ini", NULL, &sc);
	char *tab, want[96];
	uint64_t ttl = 0;

	for (int s = 0; s < sc->nswitches; s++)
		for (int p = 0; p < sc->sw[s].conf.nports; p++) {
			struct roce_switch_pstats ps;

			roce_switch_pstats(roce_fabric_switch(fab, s), (uint16_t)p, &ps);
			ttl += ps.drop_ttl;
		}
	ck_assert_msg(ttl > 0, "no TTL drop: the loop did not form");
	ck_assert(roce_fabric_balance(fab, &b));
	ck_assert_uint_eq(b.dropped[ROCE_DROP_TTL], ttl);
	ck_assert_uint_eq(roce_fabric_balance_dropped(&b), ttl);
	ck_assert_int_eq(summary_value(fab, "switch drops"), (long long)ttl);
	tab = table_csv(roce_fabric_summary_table(fab, 0));
	snprintf(want, sizeof(want), "\"frames dropped, by cause\",%" PRIu64 ": TTL expiry %" PRIu64,
		 ttl, ttl);
	ck_assert_msg(strstr(tab, want) != NULL, "%s", tab);
	ck_assert_msg(strstr(tab, "frames sent = delivered + dropped + in flight") != NULL, "%s", tab);
	free(tab);
	roce_fabric_findings(fab, &fd);
	ck_assert(found(&fd, "switches dropped frames they could not forward: TTL expiry: ",
			"a routing loop"));
	ck_assert(found(&fd, "switches dropped frames they could not forward: ", "from sw"));
	ck_assert(!found(&fd, "nothing", NULL));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * Drops on links and in NICs count by cause too: a link down for 200 us drops what is sent on
 * it and what was on it (link down), bit flips on the bottleneck reach the NICs, which drop
 * those frames on their ICRC (NIC ICRC error). The balance holds, the summary lists both
 * causes, the findings explain each.
 */
START_TEST(drops_links_and_nics)
{
	static const char text[] =
		"[scenario]\nduration = 1ms\nmtu = 1024\n"
		"[topology]\nkind = dumbbell\nhosts = 4\nrate = 100G\ndelay = 1us\n"
		"[link.sw0-sw1]\ncorrupt = 1e-3\n"
		"[event.cut]\nat = 300us\nlink = h1-sw0\nstate = down\n"
		"[event.back]\nat = 500us\nlink = h1-sw0\nstate = up\n"
		"[flow.a]\nsrc = h0\ndst = h2\nsize = 64K\ncount = 0\n"
		"[flow.b]\nsrc = h1\ndst = h3\nsize = 64K\ncount = 0\n";
	struct roce_fabric_balance b;
	struct roce_findings fd;
	struct roce_scenario *sc;
	struct roce_fabric *fab = run_text(text, &sc);
	char *tab;

	balance_by_element(fab, sc, "links and NICs");
	ck_assert(roce_fabric_balance(fab, &b));
	ck_assert_uint_gt(b.dropped[ROCE_DROP_LINK_DOWN], 0);
	ck_assert_uint_gt(b.dropped[ROCE_DROP_NIC_ICRC], 0);
	ck_assert_uint_eq(b.dropped[ROCE_DROP_NIC_ICRC],
			  roce_device_counter_by_name(roce_fabric_device(fab, 2), "rx_icrc_errors") +
			  roce_device_counter_by_name(roce_fabric_device(fab, 3), "rx_icrc_errors") +
			  roce_device_counter_by_name(roce_fabric_device(fab, 0), "rx_icrc_errors") +
			  roce_device_counter_by_name(roce_fabric_device(fab, 1), "rx_icrc_errors"));
	tab = table_csv(roce_fabric_summary_table(fab, 0));
	ck_assert_msg(strstr(tab, ": link down ") != NULL && strstr(tab, "NIC ICRC error ") != NULL,
		      "%s", tab);
	free(tab);
	roce_fabric_findings(fab, &fd);
	ck_assert(found(&fd, "links lost ", "link down "));
	ck_assert(found(&fd, "NICs discarded ", "ICRC error "));
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

static Suite *fabric_suite(void)
{
	Suite *s = suite_create("fabric");
	TCase *tc = tcase_create("scenario");

	tcase_add_test(tc, values);
	tcase_add_test(tc, custom_topology);
	tcase_add_test(tc, generators);
	tcase_add_test(tc, pattern_permutation);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, errors_unrunnable);
	tcase_add_test(tc, set_overrides);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, run_direct);
	tcase_add_test(tc, host_interface);
	tcase_add_test(tc, determinism);
	tcase_add_test(tc, payload_discard);
	tcase_add_test(tc, leafspine_128);
	tcase_add_test(tc, capture_snaplen);
	tcase_add_test(tc, quiet_ends);
	tcase_add_test(tc, event_after_flows);
	tcase_add_test(tc, deadlock);
	tcase_add_test(tc, deadlock_reforms);
	tcase_add_test(tc, troubleshoot_dscp);
	tcase_add_test(tc, troubleshoot_pcie);
	tcase_add_test(tc, conservation);
	tcase_add_test(tc, balance_every_scenario);
	tcase_add_test(tc, routing_loop);
	tcase_add_test(tc, drops_links_and_nics);
	tcase_add_test(tc, running_no_fct);
	tcase_add_test(tc, demo_claims);
	tcase_add_test(tc, summary_nic_pfc);
	tcase_add_test(tc, paused_series);
	tcase_add_test(tc, fct_summary);
	tcase_add_test(tc, findings);
	tcase_add_test(tc, stalled_or_slow);
	tcase_add_test(tc, data_intact);
	suite_add_tcase(s, tc);
	tc = tcase_create("charts");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, chart_allreduce_whole_run);
	tcase_add_test(tc, chart_no_switch);
	tcase_add_test(tc, chart_deadlock_axis);
	tcase_add_test(tc, chart_victim_colour);
	tcase_add_test(tc, rp_rate_mean_of_qps);
	tcase_add_test(tc, demo_loss_chart_as_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fabric_suite());
	int failed;

	if (roce_eal_init(NULL) != 0)
		return EXIT_FAILURE;
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
