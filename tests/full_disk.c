/*
 * LD_PRELOAD shim for tests: a full disk for the files whose name matches $ROCELAB_FULL_DISK
 * (an fnmatch(3) pattern on the last path component). rocelab opens every output with
 * fdopen() (lib/common/common_file.c) and refuses to write into /dev/full, so the files to
 * fill get a stream whose every write fails with ENOSPC, as /dev/full's would.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t full_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	(void)buf;
	(void)size;
	errno = ENOSPC;
	return -1;
}

static int full_close(void *cookie)
{
	return close((int)(intptr_t)cookie);
}

FILE *fdopen(int fd, const char *mode)
{
	static FILE *(*real)(int, const char *);
	const char *pat = getenv("ROCELAB_FULL_DISK");
	cookie_io_functions_t io = { .write = full_write, .close = full_close };
	char link[64], path[4096];
	const char *base;
	ssize_t n;

	if (real == NULL)
		real = (FILE *(*)(int, const char *))dlsym(RTLD_NEXT, "fdopen");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = pat != NULL ? readlink(link, path, sizeof(path) - 1) : -1;
	if (n <= 0)
		return real(fd, mode);
	path[n] = '\0';
	base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	if (fnmatch(pat, base, 0) != 0)
		return real(fd, mode);
	return fopencookie((void *)(intptr_t)fd, mode, io);
}
