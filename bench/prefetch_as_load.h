/*
 * Profiling aid, never in a normal build: callgrind's cache simulation ignores prefetch
 * instructions, so a miss that rte_prefetch0() hides still shows where the line is first
 * used, and a miss it fails to hide looks the same. Forced in front of every source file,
 * this header makes each rte_prefetch0() a one-byte load (NULL skipped): the misses a
 * prefetch takes then count where it is issued, and what is left at the use is what no
 * prefetch covers. docs/performance.md ("Session 23") has the build line.
 */
#ifndef ROCELAB_PREFETCH_AS_LOAD_H
#define ROCELAB_PREFETCH_AS_LOAD_H

#include <rte_config.h>
#include <rte_prefetch.h>

#define rte_prefetch0(p) do {						\
	const volatile char *pal_ = (const volatile char *)(p);		\
	if (pal_ != NULL)						\
		(void)*pal_;						\
} while (0)

#endif /* ROCELAB_PREFETCH_AS_LOAD_H */
