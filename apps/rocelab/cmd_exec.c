/* rocelab exec: an unmodified verbs program on the emulated NIC, through rocelab's libibverbs. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rocelab.h"
#include "rocelab_config.h"
#include "roce_common.h"

static const char usage[] =
	"usage: rocelab exec --dev DEVARGS --ip ADDR [--capture FILE] [--rate RATE] -- PROGRAM\n"
	"                    [ARGS...]\n"
	"\n"
	"Run PROGRAM, a dynamically linked rdma-core program (perftest's ib_*, ibv_*_pingpong, your\n"
	"own verbs code), with rocelab's libibverbs.so.1 in place of rdma-core's: its only device\n"
	"is rocelab0, the emulated NIC (docs/exec.md). The NIC runs on a thread of its own beside\n"
	"the program, on a DPDK port: its frames leave by the port to whatever is there (another\n"
	"program under rocelab exec, `rocelab switch`, `rocelab perf --dev`, the kernel's soft-RoCE,\n"
	"an RNIC). The program posts work requests into rings and polls completions from rings; the\n"
	"NIC drains the one and fills the other, and answers its peer while the program sleeps.\n"
	"\n"
	"  --dev DEVARGS         the NIC's port: net_memif0,role=server,socket=/tmp/m.sock,\n"
	"                        net_af_packet0,iface=veth0, net_tap0,iface=t0, a PCI address\n"
	"  --ip ADDR             the port's IPv4 or IPv6 address: rocelab0's GID 0 (RoCEv2)\n"
	"  --capture FILE        write every frame between the NIC and its port (pcap, ns)\n"
	"  --rate RATE           the NIC's link rate: 100G, 25G, 400M (default: the port's, or\n"
	"                        100G when it has none)\n"
	"\n"
	"The global --eal OPTIONS reach the NIC's DPDK set-up. The program's GID index is 0\n"
	"(ibv_*_pingpong -g 0, perftest -x 0); its exchange of QP numbers runs over the host's\n"
	"TCP as usual. Calls rocelab does not model fail with EOPNOTSUPP and one line naming them.\n"
	"\n"
	"Exit status: PROGRAM's; 127 PROGRAM not found; 2 bad arguments; 1 rocelab's library\n"
	"is not where it was installed.\n";

enum { OPT_DEV = 256, OPT_IP, OPT_CAPTURE, OPT_RATE };

static const struct option long_opts[] = {
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ NULL, 0, NULL, 0 },
};

static bool has_verbs_lib(const char *dir)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/libibverbs.so.1", dir);
	return access(path, R_OK) == 0;
}

/*
 * The folder of rocelab's libibverbs.so.1: $ROCELAB_VERBS_DIR, else beside this executable in
 * the build tree (build/apps/rocelab/rocelab -> build/lib/ibverbs), else where it is installed.
 */
static const char *verbs_dir(char *buf, size_t len)
{
	const char *env = getenv("ROCELAB_VERBS_DIR");
	char exe[PATH_MAX];
	ssize_t n;
	int len_out;

	if (env != NULL)
		return has_verbs_lib(env) ? env : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			len_out = snprintf(buf, len, "%s/../../lib/ibverbs", exe);
			if (len_out > 0 && (size_t)len_out < len && has_verbs_lib(buf))
				return buf;
		}
	}
	snprintf(buf, len, "%s", ROCELAB_VERBS_LIBDIR);
	return has_verbs_lib(buf) ? buf : NULL;
}

/* The memif socket a server port made: removed if the program died before closing it. */
static void remove_memif_socket(const char *devargs)
{
	const char *s = strstr(devargs, "socket=");
	char path[PATH_MAX];
	struct stat st;
	size_t n;

	if (strncmp(devargs, "net_memif", 9) != 0 || strstr(devargs, "role=server") == NULL)
		return;
	if (s == NULL) {
		snprintf(path, sizeof(path), "/run/memif.sock");	/* DPDK's default */
	} else {
		s += strlen("socket=");
		n = strcspn(s, ",");
		snprintf(path, sizeof(path), "%.*s", (int)ROCE_MIN(n, sizeof(path) - 1), s);
	}
	if (path[0] != '\0' && path[0] != '@' && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int run(int argc, char **argv)
{
	const char *dev = NULL, *ip = NULL, *capture = NULL, *dir;
	char dirbuf[PATH_MAX], libpath[PATH_MAX * 2], rate[24] = "";
	uint64_t rate_bps;
	const char *old;
	uint8_t addr[16];
	struct sigaction sa = { .sa_handler = forward };
	int opt, status;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_DEV:
			dev = optarg;
			break;
		case OPT_IP:
			if (inet_pton(AF_INET, optarg, addr) != 1 &&
			    inet_pton(AF_INET6, optarg, addr) != 1)
				return rocelab_usage_error("exec", "--ip '%s': expected an IPv4 or "
							   "IPv6 address", optarg);
			ip = optarg;
			break;
		case OPT_CAPTURE:
			capture = optarg;
			break;
		case OPT_RATE:
			if (!rocelab_parse_rate("exec", optarg, &rate_bps))
				return EXIT_USAGE;
			snprintf(rate, sizeof(rate), "%llu", (unsigned long long)rate_bps);
			break;
		default:
			return rocelab_usage_error("exec", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return rocelab_usage_error("exec", "no program given: rocelab exec --dev DEVARGS "
					   "--ip ADDR -- PROGRAM [ARGS]");
	if (dev == NULL)
		return rocelab_usage_error("exec", "no port given (--dev DEVARGS)");
	if (ip == NULL)
		return rocelab_usage_error("exec", "no address given (--ip ADDR)");
	dir = verbs_dir(dirbuf, sizeof(dirbuf));
	if (dir == NULL) {
		fprintf(stderr, "rocelab exec: rocelab's libibverbs.so.1 is in neither %s nor the "
			"build tree (set ROCELAB_VERBS_DIR)\n", ROCELAB_VERBS_LIBDIR);
		return EXIT_FAILURE;
	}
	old = getenv("LD_LIBRARY_PATH");
	snprintf(libpath, sizeof(libpath), "%s%s%s", dir, old != NULL && old[0] ? ":" : "",
		 old != NULL ? old : "");
	if (setenv("LD_LIBRARY_PATH", libpath, 1) != 0 || setenv("ROCELAB_DEV", dev, 1) != 0 ||
	    setenv("ROCELAB_IP", ip, 1) != 0 ||
	    (capture != NULL && setenv("ROCELAB_CAPTURE", capture, 1) != 0) ||
	    (rate[0] != '\0' && setenv("ROCELAB_RATE", rate, 1) != 0) ||
	    (rocelab_eal_args != NULL && setenv("ROCELAB_EAL", rocelab_eal_args, 1) != 0)) {
		fprintf(stderr, "rocelab exec: cannot set the environment: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "rocelab exec: fork: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	if (child == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "rocelab exec: %s: %s\n", argv[optind], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	/* the terminal's ^C reaches the program itself; a kill of rocelab is passed on */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "rocelab exec: waitpid: %s\n", strerror(errno));
			return EXIT_FAILURE;
		}
	remove_memif_socket(dev);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "rocelab exec: %s killed by signal %d (%s)\n", argv[optind],
			WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

const struct rocelab_cmd cmd_exec = {
	.name = "exec",
	.summary = "run an unmodified verbs program (perftest, ibv_*_pingpong) on the emulated NIC",
	.usage = usage,
	.run = run,
};
