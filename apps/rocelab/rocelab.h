/* The rocelab CLI: one file per subcommand, each a thin layer over the library. */
#ifndef ROCELAB_APP_H
#define ROCELAB_APP_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes shared by every subcommand. */
#define EXIT_USAGE 2		/* bad flag or argument: one line on stderr says which */

struct rocelab_cmd {
	const char *name;			/* as typed after "rocelab" */
	const char *summary;			/* one line for "rocelab help" */
	const char *usage;			/* full help for "rocelab help CMD" */
	int (*run)(int argc, char **argv);	/* argv[0] is the command name */
	bool needs_eal;				/* initialise DPDK's EAL before run(); or
						 * run() calls rocelab_eal_start() when needed */
};

/* The global --eal arguments, for rocelab_eal_start(). */
extern const char *rocelab_eal_args;

/** DPDK's EAL with the global --eal arguments (roce_eal_init()). @return 0 or -EINVAL */
int rocelab_eal_start(void);

extern const struct rocelab_cmd cmd_compare;
extern const struct rocelab_cmd cmd_demo;
extern const struct rocelab_cmd cmd_devices;
extern const struct rocelab_cmd cmd_dissect;
extern const struct rocelab_cmd cmd_exec;
extern const struct rocelab_cmd cmd_craft;
extern const struct rocelab_cmd cmd_fixup;
extern const struct rocelab_cmd cmd_learn;
extern const struct rocelab_cmd cmd_perf;
extern const struct rocelab_cmd cmd_run;
extern const struct rocelab_cmd cmd_replay;
extern const struct rocelab_cmd cmd_switch;

/**
 * Create directory @p dir and its parents, as `mkdir -p`. @return 0, or -errno with errno set
 * (ENOTDIR: a file of that name is in the way)
 */
int rocelab_mkdir_p(const char *dir);

/**
 * Whether @p out names the file @p in (the same device and inode, through any path or link):
 * an output opened for writing there would truncate the input before it is read. False when
 * either is "-" or @p out does not exist yet.
 */
bool rocelab_same_file(const char *in, const char *out);

/** A whole number (decimal, 0x hex or 0 octal) no larger than @p max. @return 0 or -EINVAL */
int rocelab_parse_uint(const char *s, uint64_t max, uint64_t *out);

#ifdef ROCELAB_STATIC_DPDK
/** static_tailqs.c: register the tail queues a DPDK secondary (dpdk-dumpcap) expects. */
void rocelab_register_tailqs(void);
#endif

/**
 * Print "rocelab CMD: [WHAT: ]ERR" on stderr for an output file refused or not created
 * (roce_file.h), adding how to replace it when @p e is EEXIST (not a capture: --force).
 * @param what  the option that named the file, or NULL
 */
void rocelab_out_error(const char *cmd, const char *what, const char *err, int e);

/**
 * A link rate such as 100G, 25G, 2.5G or 400M (1M to 1.6T) into bits per second.
 * @return false, and "rocelab CMD: --rate 'S': ..." on stderr, for anything else
 */
bool rocelab_parse_rate(const char *cmd, const char *s, uint64_t *bps);

/** Print "rocelab CMD: MSG" on stderr and return EXIT_USAGE. */
int rocelab_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* ROCELAB_APP_H */
