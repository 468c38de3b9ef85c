/* lib/io: the edges of rocelab: DPDK EAL set-up, pcap files, ports. */
#ifndef ROCE_IO_H
#define ROCE_IO_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Initialise DPDK's EAL once for the process, the one place rocelab does so. Defaults:
 * --no-huge --no-pci --no-shconf --no-telemetry --force-max-simd-bitwidth=512 and warning-level
 * logs, so it needs neither root nor hugepages and processes never share state. (DPDK 22.11
 * refuses --in-memory together with --no-huge.) @p user_args (may be NULL) are split on blanks
 * and appended; a user option that conflicts with a default drops that default (--huge-*, -m or
 * --socket-mem: --no-huge; -a/--allow/-b/--block: --no-pci; --file-prefix/--proc-type:
 * --no-shconf; --telemetry: --no-telemetry). Then selects the fastest CRC-32 path and logs which
 * it took.
 * @return 0; 0 again on later calls; -EINVAL (EAL refused the arguments, message logged)
 */
int roce_eal_init(const char *user_args);

/** True once roce_eal_init() has succeeded. */
bool roce_eal_ready(void);

#endif /* ROCE_IO_H */
