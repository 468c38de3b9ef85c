/* Helpers shared by the benchmarks: a monotonic clock, a CPU clock and a sink the optimiser cannot drop. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdint.h>
#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Median of three figures: the machine is shared, so each figure is taken three times. */
static inline double bench_median3(double a, double b, double c)
{
	if (a > b) {
		double t = a;

		a = b;
		b = t;
	}
	return c < a ? a : c > b ? b : c;
}

/* CPU time of the calling thread: what a loaded machine actually gave the benchmark. */
static inline double bench_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Results are folded in here so the measured work stays. */
static volatile uint64_t bench_sink;

#endif /* BENCH_COMMON_H */
