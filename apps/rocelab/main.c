/* rocelab: git-style dispatch of subcommands, global options (--eal, -q, --version). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rocelab.h"
#include "rocelab_config.h"
#include "roce_common.h"
#include "roce_io.h"

static const struct rocelab_cmd *const commands[] = {
	&cmd_demo,
	&cmd_compare,
	&cmd_devices,
	&cmd_dissect,
	&cmd_exec,
	&cmd_craft,
	&cmd_fixup,
	&cmd_learn,
	&cmd_perf,
	&cmd_run,
	&cmd_replay,
	&cmd_switch,
};

static const char global_usage[] =
	"usage: rocelab [--eal 'EAL ARGS'] [--log-level LEVEL] [--version] COMMAND [ARGS]\n"
	"\n"
	"  --eal ARGS         extra DPDK EAL arguments (default: --no-huge --no-pci --no-shconf)\n"
	"  --log-level LEVEL  error, warning (default), info or debug\n"
	"  --version          print the version and exit\n";

int rocelab_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rocelab %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'rocelab help %s')\n", cmd);
	return EXIT_USAGE;
}

bool rocelab_parse_rate(const char *cmd, const char *s, uint64_t *bps)
{
	char *end;
	double v = strtod(s, &end), mult = 1;

	if (end != s && (*end == 'G' || *end == 'g'))
		mult = 1e9, end++;
	else if (end != s && (*end == 'M' || *end == 'm'))
		mult = 1e6, end++;
	else if (end != s && (*end == 'T' || *end == 't'))
		mult = 1e12, end++;
	if (end == s || *end != '\0' || !(v > 0) || v * mult < 1e6 || v * mult > 1.6e12) {
		rocelab_usage_error(cmd, "--rate '%s': expected a rate such as 100G, 25G, 2.5G or "
				    "400M (1M to 1.6T)", s);
		return false;
	}
	*bps = (uint64_t)(v * mult);
	return true;
}

void rocelab_out_error(const char *cmd, const char *what, const char *err, int e)
{
	fprintf(stderr, "rocelab %s: %s%s%s%s\n", cmd, what != NULL ? what : "",
		what != NULL ? ": " : "", err, e == EEXIST ? " (--force replaces it)" : "");
}

bool rocelab_same_file(const char *in, const char *out)
{
	struct stat a, b;

	if (strcmp(in, "-") == 0 || strcmp(out, "-") == 0)
		return false;
	return stat(in, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int rocelab_mkdir_p(const char *dir)
{
	char buf[4096];
	struct stat st;

	if (dir[0] == '\0') {
		errno = ENOENT;		/* as mkdir("") */
		return -errno;
	}
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -errno;
	}
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return -errno;
	if (stat(buf, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;	/* a file of that name is in the way */
		return -errno;
	}
	return 0;
}

int rocelab_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	return roce_parse_uint(s, max, out);
}

static const struct rocelab_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < ROCE_DIM(commands); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static int help(const char *topic)
{
	const struct rocelab_cmd *cmd;

	if (topic == NULL) {
		fputs(global_usage, stdout);
		puts("\ncommands:");
		for (size_t i = 0; i < ROCE_DIM(commands); i++)
			printf("  %-10s %s\n", commands[i]->name, commands[i]->summary);
		puts("  help       show help for a command: rocelab help COMMAND");
		return 0;
	}
	cmd = find_command(topic);
	if (cmd == NULL) {
		fprintf(stderr, "rocelab help: no command '%s' (see 'rocelab help')\n", topic);
		return EXIT_USAGE;
	}
	fputs(cmd->usage, stdout);
	return 0;
}

static int parse_log_level(const char *s)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	for (size_t i = 0; i < ROCE_DIM(names); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *rocelab_eal_args;

int rocelab_eal_start(void)
{
	return roce_eal_init(rocelab_eal_args);
}

int main(int argc, char **argv)
{
	const char *eal_args = NULL;
	const struct rocelab_cmd *cmd;
	int i;

#ifdef ROCELAB_STATIC_DPDK
	rocelab_register_tailqs();
#endif
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("rocelab %s\n", ROCELAB_VERSION);
			return 0;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			return help(NULL);
		} else if (strcmp(argv[i], "--eal") == 0 && i + 1 < argc) {
			eal_args = argv[++i];
		} else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
			int level = parse_log_level(argv[++i]);

			if (level < 0) {
				fprintf(stderr, "rocelab: --log-level: '%s' is not error, warning, info or debug\n",
					argv[i]);
				return EXIT_USAGE;
			}
			roce_log_threshold = (enum roce_log_level)level;
		} else {
			fprintf(stderr, "rocelab: unknown option '%s' (see 'rocelab help')\n", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		fputs(global_usage, stderr);
		fputs("rocelab: no command given (see 'rocelab help')\n", stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0)
		return help(i + 1 < argc ? argv[i + 1] : NULL);
	if (strcmp(argv[i], "version") == 0) {
		printf("rocelab %s\n", ROCELAB_VERSION);
		return 0;
	}
	cmd = find_command(argv[i]);
	if (cmd == NULL) {
		fprintf(stderr, "rocelab: '%s' is not a command (see 'rocelab help')\n", argv[i]);
		return EXIT_USAGE;
	}
	if (i + 1 < argc && (strcmp(argv[i + 1], "-h") == 0 || strcmp(argv[i + 1], "--help") == 0))
		return help(cmd->name);
	rocelab_eal_args = eal_args;
	if (cmd->needs_eal && rocelab_eal_start() != 0)
		return EXIT_FAILURE;
	return cmd->run(argc - i, argv + i);
}
