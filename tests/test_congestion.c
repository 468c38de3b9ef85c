/* Check suite 'congestion': DCQCN in a fabric: fair shares, a held queue, the victim flow. */
#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_fabric.h"
#include "roce_io.h"

#define KMIN_KB 400.0			/* roce_switch_defaults(): priority 3's Kmin, in KB */
#define KMAX_KB 1600.0			/* and its Kmax */

static char err[512];

/*
 * N hosts h1..hN write 64 KiB messages without end into h0 through one 100G switch, with
 * DCQCN and the default parameters; the incast's hosts are split by start time into the
 * patterns "early" (h1..hE, at 0) and "late" (the rest, at @p late_start).
 */
static struct roce_fabric *incast(int n, int early, const char *late_start, const char *duration,
				  struct roce_scenario **scp)
{
	char text[1024];
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	int len;

	len = snprintf(text, sizeof(text),
		       "[scenario]\nmtu = 1024\nduration = %s\nsample = 50us\n"
		       "[topology]\nkind = star\nhosts = %d\n"
		       "[nic]\ncc = dcqcn\n"
		       "[capture]\nlinks = none\n"
		       "[pattern.early]\nkind = incast\nhosts = h1..h%d\ndst = h0\n"
		       "size = 64K\ncount = 0\ndepth = 16\n",
		       duration, n + 1, early);
	if (early < n)
		len += snprintf(text + len, sizeof(text) - (size_t)len,
				"[pattern.late]\nkind = incast\nhosts = h%d..h%d\ndst = h0\n"
				"size = 64K\ncount = 0\ndepth = 16\nstart = %s\n",
				early + 1, n, late_start);
	ck_assert_uint_lt((size_t)len, sizeof(text));
	sc = roce_scenario_parse("incast.ini", text, NULL, 0, err, sizeof(err));
	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	*scp = sc;
	return fab;
}

/* Time average over (t0, t1] us of the series of @p kind whose name ends with @p name. */
static double mean(const struct roce_fabric *fab, enum roce_series_kind kind, const char *name,
		   double t0, double t1)
{
	int n = roce_fabric_nseries(fab, kind);
	size_t want = strlen(name);

	for (int i = 0; i < n; i++) {
		struct roce_series s;
		size_t have;
		double sum = 0;
		int k = 0;

		roce_fabric_series(fab, kind, i, &s);
		have = strlen(s.name);
		if (have < want || strcmp(s.name + have - want, name) != 0)
			continue;
		for (size_t j = 0; j < s.n; j++) {
			if (s.t_us[j] > t0 && s.t_us[j] <= t1) {
				sum += s.v[j];
				k++;
			}
		}
		ck_assert_msg(k > 0, "series %s has no sample in (%g, %g] us", name, t0, t1);
		return sum / k;
	}
	ck_abort_msg("no series named ...%s", name);
	return 0;
}

/*
 * Each flow's mean goodput over (t0, t1] is within ±@p tol of the fair share (the flows'
 * total over N), the total is above 90% of line rate, and h0's queue averages between
 * @p qmin_kb and Kmax.
 */
static void check_fair(const struct roce_fabric *fab, const struct roce_scenario *sc, double t0,
		       double t1, double tol, double qmin_kb)
{
	double g[16], total = 0, fair, q;

	ck_assert_int_le(sc->nflows, 16);
	for (int f = 0; f < sc->nflows; f++) {
		g[f] = mean(fab, ROCE_SERIES_FLOW_GBPS, sc->flow[f].name, t0, t1);
		total += g[f];
	}
	fair = total / sc->nflows;
	for (int f = 0; f < sc->nflows; f++)
		ck_assert_msg(g[f] > fair * (1 - tol) && g[f] < fair * (1 + tol),
			      "%s: %.2f Gb/s, fair share %.2f (±%.0f%%)", sc->flow[f].name, g[f],
			      fair, tol * 100);
	ck_assert_msg(total > 90, "total %.2f Gb/s", total);
	q = mean(fab, ROCE_SERIES_QUEUE_KB, "> h0", t0, t1);
	ck_assert_msg(q > qmin_kb && q < KMAX_KB, "queue to h0 averages %.1f KB", q);
}

/*
 * 4 flows into one port: fair shares within ±10% over the last half, queue near Kmin..Kmax
 * (measured 22.2..23.6 Gb/s, 97 Gb/s in all, queue 226 KB).
 */
START_TEST(test_fair_4)
{
	struct roce_scenario *sc;
	struct roce_fabric *fab = incast(4, 4, NULL, "10ms", &sc);

	check_fair(fab, sc, 5000, 10000, 0.10, KMIN_KB / 2);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* The same with 8 flows (measured 10.9..11.9 Gb/s, 95.5 in all, queue 279 KB). */
START_TEST(test_fair_8)
{
	struct roce_scenario *sc;
	struct roce_fabric *fab = incast(8, 8, NULL, "10ms", &sc);

	check_fair(fab, sc, 5000, 10000, 0.10, KMIN_KB / 2);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/*
 * Two flows share the port, then two more join at 3 ms: the first two give up about half
 * their rate and the link stays full with a held queue. The late pair ends up with more
 * than the early one (about 26 against 20 Gb/s, measured): fast recovery climbs back toward
 * each flow's own target rate, which keeps the ratio it had, and the additive steps that
 * would equalise them (R_AI 5 Mb/s per 300 us) are too small to matter in milliseconds
 * (docs/transport.md, DCQCN). So this asserts ±25% of the fair share, not ±10%, and a queue
 * above Kmin/4 (measured 187 KB) rather than Kmin/2.
 */
START_TEST(test_late_joiner)
{
	struct roce_scenario *sc;
	struct roce_fabric *fab = incast(4, 2, "3ms", "15ms", &sc);
	double before[2];

	ck_assert_int_eq(sc->nflows, 4);
	for (int f = 0; f < 2; f++) {
		before[f] = mean(fab, ROCE_SERIES_FLOW_GBPS, sc->flow[f].name, 1500, 3000);
		ck_assert_msg(before[f] > 40 && before[f] < 55, "%s alone with one other: %.2f",
			      sc->flow[f].name, before[f]);
	}
	for (int f = 2; f < 4; f++)
		ck_assert_double_eq(mean(fab, ROCE_SERIES_FLOW_GBPS, sc->flow[f].name, 0, 2950),
				    0);
	check_fair(fab, sc, 9000, 15000, 0.25, KMIN_KB / 4);
	for (int f = 0; f < 2; f++)
		ck_assert_msg(mean(fab, ROCE_SERIES_FLOW_GBPS, sc->flow[f].name, 9000, 15000) <
			      before[f] * 0.6, "%s kept its rate", sc->flow[f].name);
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}
END_TEST

/* The demo's incast with a victim flow, under PFC alone or with @p set. */
struct victim_run {
	double victim_gbps;		/* the victim's mean goodput while the incast runs */
	uint64_t pauses;		/* PFC XOFF frames sent by the switches */
	double maxq_kb;			/* deepest queue to r0 */
};

static void run_victim(const char *const *set, int nset, struct victim_run *vr)
{
	const char *text = roce_scenario_builtin("demo-incast");
	struct roce_scenario *sc;
	struct roce_fabric *fab;
	struct roce_switch_qstats q;
	int nq;

	ck_assert(text != NULL);
	sc = roce_scenario_parse("demo-incast", text, set, nset, err, sizeof(err));
	ck_assert_msg(sc != NULL, "%s", err);
	fab = roce_fabric_create(sc, err, sizeof(err));
	ck_assert_msg(fab != NULL, "%s", err);
	ck_assert_int_eq(roce_fabric_run(fab, NULL), 0);
	/* the incast's 32 MiB take 2.7 ms or more at 100G: 0.3..2.5 ms is inside it in both runs */
	vr->victim_gbps = mean(fab, ROCE_SERIES_FLOW_GBPS, "victim", 300, 2500);
	vr->pauses = 0;
	vr->maxq_kb = 0;
	for (int s = 0; s < sc->nswitches; s++) {
		struct roce_switch *sw = roce_fabric_switch(fab, s);

		for (int p = 0; p < sc->sw[s].conf.nports; p++)
			for (int prio = 0; prio < ROCE_NPRIO; prio++) {
				roce_switch_qstats(sw, (uint16_t)p, prio, &q);
				vr->pauses += q.pause_tx;
			}
	}
	nq = roce_fabric_nseries(fab, ROCE_SERIES_QUEUE_KB);
	for (int i = 0; i < nq; i++) {
		struct roce_series s;

		roce_fabric_series(fab, ROCE_SERIES_QUEUE_KB, i, &s);
		if (strstr(s.name, "> r0") == NULL)
			continue;
		for (size_t j = 0; j < s.n; j++)
			vr->maxq_kb = s.v[j] > vr->maxq_kb ? s.v[j] : vr->maxq_kb;
	}
	roce_fabric_destroy(fab);
	roce_scenario_destroy(sc);
}

/*
 * PFC alone: sw1 pauses the shared uplink and the victim starves behind the incast (measured
 * 6.5 Gb/s over 0.3..2.5 ms, 93 pauses, 5.7 MB queue). With DCQCN the senders slow down
 * instead: no or few pauses, a shorter queue, and the victim gets several times more
 * (measured 24 Gb/s, 0 pauses, 2.0 MB).
 */
START_TEST(test_victim)
{
	const char *dcqcn[] = { "nic.cc=dcqcn" };
	struct victim_run pfc, cc;

	run_victim(NULL, 0, &pfc);
	run_victim(dcqcn, 1, &cc);
	ck_assert_msg(pfc.victim_gbps < 12, "PFC only: victim %.2f Gb/s", pfc.victim_gbps);
	ck_assert_msg(pfc.pauses >= 20, "PFC only: %" PRIu64 " pauses", pfc.pauses);
	ck_assert_msg(cc.victim_gbps > 16 && cc.victim_gbps > 2 * pfc.victim_gbps,
		      "DCQCN: victim %.2f Gb/s (PFC only %.2f)", cc.victim_gbps, pfc.victim_gbps);
	ck_assert_msg(cc.pauses * 4 < pfc.pauses, "DCQCN: %" PRIu64 " pauses (PFC only %" PRIu64
		      ")", cc.pauses, pfc.pauses);
	ck_assert_msg(cc.maxq_kb < pfc.maxq_kb * 0.6, "DCQCN: max queue %.1f KB (PFC only %.1f)",
		      cc.maxq_kb, pfc.maxq_kb);
}
END_TEST

static Suite *congestion_suite(void)
{
	Suite *s = suite_create("congestion");
	TCase *tc = tcase_create("dcqcn");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fair_4);
	tcase_add_test(tc, test_fair_8);
	tcase_add_test(tc, test_late_joiner);
	tcase_add_test(tc, test_victim);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(congestion_suite());
	int failed;

	if (roce_eal_init(NULL) != 0)
		return EXIT_FAILURE;
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
