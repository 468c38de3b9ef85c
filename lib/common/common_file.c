/* Output files: checked before and after writing, written beside the target, renamed over it. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roce_common.h"
#include "roce_file.h"

bool roce_out_force;

/* The first four bytes of the captures libpcap reads, in either byte order. */
static const uint32_t capture_magic[] = {
	0xa1b2c3d4, 0xd4c3b2a1,	/* pcap, microseconds */
	0xa1b23c4d, 0x4d3cb2a1,	/* pcap, nanoseconds */
	0xa1b2cd34, 0x34cdb2a1,	/* pcap, Kuznetzov's patched format */
	0x0a0d0d0a,		/* pcapng section header block (a palindrome) */
};

/* What a file that is not a regular one is, for the refusal. */
static const char *kind_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	default: return "not a regular file";
	}
}

/*
 * Whether the regular file @p path starts like a capture (or is empty). Opened without
 * following a link and without blocking, and checked to be the file lstat() saw: it may have
 * been swapped since. @return 1 a capture or empty, 0 not one, -errno
 */
static int is_capture(const char *path, const struct stat *seen)
{
	uint8_t b[4];
	struct stat st;
	uint32_t m;
	ssize_t n;
	int fd, rc = 0;

	if (seen->st_size == 0)
		return 1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || st.st_dev != seen->st_dev || st.st_ino != seen->st_ino) {
		close(fd);
		return -EAGAIN;
	}
	do
		n = pread(fd, b, sizeof(b), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
	close(fd);
	if (rc != 0 || n < (ssize_t)sizeof(b))
		return rc;
	m = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	for (size_t i = 0; i < ROCE_DIM(capture_magic); i++)
		if (m == capture_magic[i])
			return 1;
	return 0;
}

/* roce_out_check(), keeping what lstat() found in @p st (st_mode 0: nothing there). */
static int check(const char *path, unsigned int flags, struct stat *st, char *err, size_t errlen)
{
	int rc;

	if (lstat(path, st) != 0) {
		rc = -errno;
		memset(st, 0, sizeof(*st));
		if (rc == -ENOENT)
			return 0;	/* absent: a missing directory is found when creating */
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (S_ISLNK(st->st_mode)) {
		snprintf(err, errlen, "%s: a symbolic link: not followed, not replaced (name the "
			 "file it points to)", path);
		return -ELOOP;
	}
	if (S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "%s: a directory: not replaced", path);
		return -EISDIR;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: %s, not a regular file: not replaced", path,
			 kind_name(st->st_mode));
		return -ENOTSUP;
	}
	/* no write bit at all stops root too, as it stops tcpdump -w run by anyone else */
	if ((st->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 ||
	    faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0) {
		snprintf(err, errlen, "%s: read-only: not replaced", path);
		return -EROFS;
	}
	if ((flags & ROCE_OUT_PCAP) != 0 && !roce_out_force) {
		rc = is_capture(path, st);
		if (rc < 0) {
			snprintf(err, errlen, "%s: cannot read it to check it is a capture: %s", path,
				 strerror(-rc));
			return rc;
		}
		if (rc == 0) {
			snprintf(err, errlen, "%s: not a pcap or pcapng capture: not replaced", path);
			return -EEXIST;
		}
	}
	return 0;
}

int roce_out_check(const char *path, unsigned int flags, char *err, size_t errlen)
{
	struct stat st;

	if (strcmp(path, "-") == 0)
		return 0;
	return check(path, flags, &st, err, errlen);
}

int roce_out_open(struct roce_out *o, const char *path, unsigned int flags, char *err,
		  size_t errlen)
{
	static unsigned int seq;	/* two outputs of one process never share a name */
	struct stat st;
	int fd = -1, rc;

	o->f = NULL;
	o->tmp[0] = '\0';
	o->flags = flags;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path)) {
		snprintf(err, errlen, "%.200s...: path too long", path);
		errno = ENAMETOOLONG;
		return -errno;
	}
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	rc = check(path, flags, &st, err, errlen);
	if (rc != 0) {
		errno = -rc;
		return rc;
	}
	/* O_EXCL: never into a file someone else made, even of that name */
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		if (snprintf(o->tmp, sizeof(o->tmp), "%s.%d.%u.partial", path, (int)getpid(),
			     seq++) >= (int)sizeof(o->tmp)) {
			snprintf(err, errlen, "%s: path too long", path);
			rc = -ENAMETOOLONG;
			goto err;
		}
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(-rc));
		goto err;
	}
	if (S_ISREG(st.st_mode)) {
		/*
		 * A file replaced keeps its permissions (and, for root, owner) as a truncating
		 * open would; not set-user/group-ID bits, which no capture should carry. Best
		 * effort: the data is what matters.
		 */
		if (fchown(fd, st.st_uid, st.st_gid) != 0) {
			/* not ours to give away: the new file is the writer's */
		}
		if (fchmod(fd, st.st_mode & 0777) != 0) {
			/* as created: 0666 less the umask */
		}
	}
	o->f = fdopen(fd, "wb");
	if (o->f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(-rc));
		close(fd);
		unlink(o->tmp);
		goto err;
	}
	return 0;

err:
	o->tmp[0] = '\0';
	errno = -rc;
	return rc;
}

int roce_out_commit(struct roce_out *o, char *err, size_t errlen)
{
	struct stat st;
	int rc = 0;

	if (o->f != NULL) {
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f))
			rc = -(errno != 0 ? errno : EIO);
		if (o->tmp[0] == '\0') {	/* standard output: flushed, left open */
			o->f = NULL;
			if (rc != 0)
				snprintf(err, errlen, "%s: %s", o->path, strerror(-rc));
			return rc;
		}
		if (fclose(o->f) != 0 && rc == 0)
			rc = -errno;
		o->f = NULL;
	}
	if (o->tmp[0] == '\0')
		return 0;
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s (not written)", o->path, strerror(-rc));
		goto err;
	}
	/* what was checked at open may have been replaced by a link or a FIFO since */
	rc = check(o->path, o->flags, &st, err, errlen);
	if (rc != 0)
		goto err;
	if (rename(o->tmp, o->path) != 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s (not written)", o->path, strerror(-rc));
		goto err;
	}
	o->tmp[0] = '\0';
	return 0;

err:
	unlink(o->tmp);
	o->tmp[0] = '\0';
	errno = -rc;
	return rc;
}

const char *roce_out_strerror(int rc)
{
	switch (rc) {
	case -ELOOP: return "a symbolic link: not followed, not replaced";
	case -ENOTSUP: return "not a regular file (a FIFO, device or socket): not replaced";
	case -EROFS: return "read-only: not replaced";
	case -EEXIST: return "not a pcap or pcapng capture: not replaced";
	default: return strerror(-rc);
	}
}

void roce_out_discard(struct roce_out *o)
{
	if (o->f != NULL && o->tmp[0] == '\0') {
		fflush(o->f);	/* standard output: what went out is out */
		o->f = NULL;
		return;
	}
	if (o->f != NULL)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0] != '\0')
		unlink(o->tmp);
	o->tmp[0] = '\0';
}
