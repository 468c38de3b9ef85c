/* What a perftest run counts as it goes, for every mode: errors, mismatches, the peak's samples. */
#include <stdio.h>

#include "perf_private.h"

bool perf_wc_ok(struct roce_perf_result *res, enum roce_wc_status status)
{
	if (status == ROCE_WC_SUCCESS)
		return true;
	if (res->errors++ == 0)
		res->first_error = status;
	return false;
}

void perf_verify_fail(struct roce_perf_result *res, const char *fmt, unsigned long long a,
		      unsigned long long b)
{
	if (res->verify_failures++ == 0)
		snprintf(res->verify_msg, sizeof(res->verify_msg), fmt, a, b);
}

void perf_window(struct perf_tally *t, roce_time_t now, uint64_t done)
{
	if (t->win_len < PERF_WIN) {
		t->win_t[t->win_len] = now;
		t->win_n[t->win_len++] = done;
	}
}

double perf_peak_gbps(const struct perf_tally *t, uint32_t depth, uint32_t size)
{
	double best = 0;

	for (uint32_t i = 0, j = 0; i < t->win_len; i++) {
		while (j < t->win_len && t->win_n[j] - t->win_n[i] < depth)
			j++;
		if (j < t->win_len && t->win_t[j] > t->win_t[i]) {
			double g = (double)(t->win_n[j] - t->win_n[i]) * size * 8 /
				   ((double)(t->win_t[j] - t->win_t[i]) / ROCE_SEC) / 1e9;

			if (g > best)
				best = g;
		}
	}
	return best;
}
