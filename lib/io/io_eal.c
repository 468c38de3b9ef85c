/* DPDK EAL set-up in one place: no hugepages or PCI by default, the user's arguments on top. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "roce_capture.h"
#include "roce_common.h"
#include "roce_io.h"
#include "roce_wire.h"

#define MAX_EAL_ARGS 64

static bool eal_ready;

bool roce_eal_ready(void)
{
	return eal_ready;
}

static bool has_prefix(char **argv, int argc, const char *const *prefixes)
{
	for (int i = 0; i < argc; i++)
		for (const char *const *p = prefixes; *p != NULL; p++)
			if (strncmp(argv[i], *p, strlen(*p)) == 0)
				return true;
	return false;
}

int roce_eal_init(const char *user_args)
{
	static const char *const huge_opts[] = { "--huge", "--socket-mem", NULL };
	static const char *const mem_opts[] = { "-m", NULL };
	static const char *const pci_opts[] = { "-a", "--allow", "-b", "--block", NULL };
	static const char *const prefix_opts[] = { "--file-prefix", "--proc-type", NULL };
	static const char *const telemetry_opts[] = { "--telemetry", NULL };
	static const char *const core_opts[] = { "-l", "-c", "--lcores", "--main-lcore", NULL };
	char *argv[MAX_EAL_ARGS];
	char *user[MAX_EAL_ARGS];
	char *copy = NULL;
	char prefix[64];
	cpu_set_t cpus;
	bool keep_cpus;
	int argc = 0, nuser = 0;
	bool pdump = false;	/* "--pdump": rocelab's own, see roce_eal_init()'s comment */
	int rc;

	if (eal_ready)
		return 0;
	if (user_args != NULL) {
		copy = strdup(user_args);
		if (copy == NULL)
			return -ENOMEM;
		for (char *tok = strtok(copy, " \t"); tok != NULL; tok = strtok(NULL, " \t")) {
			if (nuser == MAX_EAL_ARGS - 8) {
				ROCE_LOG(ERR, "--eal: more than %d arguments", MAX_EAL_ARGS - 8);
				free(copy);
				return -EINVAL;
			}
			if (strcmp(tok, "--pdump") == 0)
				pdump = true;
			else
				user[nuser++] = tok;
		}
	}

	argv[argc++] = (char *)"rocelab";
	if (pdump && !has_prefix(user, nuser, prefix_opts)) {
		/* a shared configuration under a prefix of our own, on hugepages: a secondary
		 * (dpdk-dumpcap) maps the primary's memory from its hugepage files */
		snprintf(prefix, sizeof(prefix), "--file-prefix=rocelab-%d", (int)getpid());
		argv[argc++] = prefix;
	}
	if (!has_prefix(user, nuser, huge_opts) && !pdump)
		argv[argc++] = (char *)"--no-huge";
	if (!has_prefix(user, nuser, pci_opts))
		argv[argc++] = (char *)"--no-pci";
	/* DPDK 22.11 refuses --in-memory with --no-huge; --no-shconf keeps processes apart. */
	if (!has_prefix(user, nuser, prefix_opts) && !pdump)
		argv[argc++] = (char *)"--no-shconf";
	if (!has_prefix(user, nuser, telemetry_opts))
		argv[argc++] = (char *)"--no-telemetry";
	if (!has_prefix(user, nuser, huge_opts) && !has_prefix(user, nuser, mem_opts) && !pdump)
		/* mapped lazily: only what the mempools touch is used; fabrics need room */
		argv[argc++] = (char *)"-m2048";
	argv[argc++] = (char *)"--force-max-simd-bitwidth=512";
	if (roce_log_threshold < ROCE_LOG_DEBUG)
		argv[argc++] = (char *)"--log-level=warning";
	for (int i = 0; i < nuser; i++)
		argv[argc++] = user[i];
	argv[argc] = NULL;

	keep_cpus = !has_prefix(user, nuser, core_opts) &&
		    sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	rc = rte_eal_init(argc, argv);	/* keeps no pointer into argv, but @copy lives on anyway */
	if (rc < 0) {
		free(copy);
		ROCE_LOG(ERR, "DPDK EAL initialisation failed: %s%s", rte_strerror(rte_errno),
			 pdump ? " (--pdump needs hugepages: a mounted hugetlbfs with free pages, "
			 "docs/live.md)" : "");
		return -EINVAL;
	}
	eal_ready = true;
	/*
	 * With no core list the EAL pins the main thread to the first core, so two rocelab
	 * processes (perf's server and client, a switch between them) polling on one machine
	 * share core 0 and hand frames to each other a time slice at a time. Unless the user
	 * chose cores (-l, -c, --lcores, --main-lcore), the main thread runs where the process
	 * may.
	 */
	if (keep_cpus && sched_setaffinity(0, sizeof(cpus), &cpus) != 0)
		ROCE_LOG(WARN, "cannot restore the CPU affinity after EAL set-up: %s",
			 strerror(errno));
	if (pdump) {
		rc = roce_pdump_enable();
		if (rc != 0) {
			ROCE_LOG(ERR, "--pdump: cannot start DPDK's pdump server: %s", strerror(-rc));
			return -EINVAL;
		}
		fprintf(stderr, "rocelab: pdump on: dpdk-dumpcap --file-prefix=%s -i PORT\n",
			rte_eal_get_runtime_dir() != NULL && strrchr(rte_eal_get_runtime_dir(), '/') ?
			strrchr(rte_eal_get_runtime_dir(), '/') + 1 : "?");
	}
	roce_crc_select_fastest();
	return 0;
}
