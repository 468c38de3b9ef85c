/* Output files: written beside their target and renamed over it, never over what is not a file. */
#ifndef ROCE_FILE_H
#define ROCE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Every file rocelab writes goes through this (docs/craft.md, "Output files"): the
 * target is checked before a byte is written and again before the rename, so that
 *  - a symbolic link, FIFO, device node, socket or directory of that name is refused, never
 *    followed, opened or replaced (`-o /dev/null` as root must not replace /dev/null);
 *  - a read-only regular file is refused, as tcpdump -w's open(2) would fail on it (and root,
 *    whom open(2) would let through, gets the same answer as everyone else);
 *  - with ROCE_OUT_PCAP, a non-empty regular file that is not a pcap or pcapng capture is
 *    refused unless roce_out_force is set (a mistyped `-o notes.txt`): a capture may replace
 *    a capture, as tcpdump -w and editcap do;
 *  - the data goes to PATH.XXXXXX.partial in the same directory, renamed over PATH only at
 *    roce_out_commit(): a failed or refused write leaves PATH as it was (same bytes, inode and
 *    mode). A replaced file's permission bits are kept, as a truncating open keeps them.
 * "-" is standard output and is never checked or renamed.
 */

enum {
	ROCE_OUT_PCAP = 1u << 0,	/* a capture: an existing file must be a capture or empty */
};

/** Replace a non-empty file that is not a capture (ROCE_OUT_PCAP); set from --force. */
extern bool roce_out_force;

/* An output file being written. */
struct roce_out {
	FILE *f;		/* where to write: the temporary file, or stdout for "-"; NULL
				 * once closed (a caller whose library closes it sets NULL) */
	char path[4096];	/* the target */
	char tmp[4096];		/* the temporary file beside it; "" for stdout */
	unsigned int flags;	/* ROCE_OUT_* */
};

/**
 * Whether @p path may be written: absent, or a writable regular file (of its kind, with
 * ROCE_OUT_PCAP). Nothing is created; for an early check before a long run.
 * @param err  receives one line "PATH: reason" on refusal
 * @return 0; -ELOOP (a symbolic link), -EISDIR (a directory), -ENOTSUP (a FIFO, device or
 *         socket), -EROFS (read-only), -EEXIST (ROCE_OUT_PCAP: not a capture; roce_out_force
 *         lets it be replaced), -errno (cannot be looked at)
 */
int roce_out_check(const char *path, unsigned int flags, char *err, size_t errlen);

/**
 * Check @p path (roce_out_check()) and open a temporary file beside it for writing.
 * @return 0 with @p o->f open; roce_out_check()'s errors; -errno (the directory does not
 *         exist or is not writable, the name is too long) with @p err filled and errno set
 */
int roce_out_open(struct roce_out *o, const char *path, unsigned int flags, char *err,
		  size_t errlen);

/**
 * Close the stream (unless @p o->f is NULL: closed already) and rename the temporary file over
 * the target, checked again (it may have become something else meanwhile). On any error the temporary file is removed and the target
 * left as it was. Standard output is flushed, not closed.
 * @return 0; -errno of a failed write, flush or close; roce_out_check()'s errors, with @p err
 *         filled
 */
int roce_out_commit(struct roce_out *o, char *err, size_t errlen);

/**
 * The reason for one of roce_out_check()'s refusals as the refusal says it ("a symbolic link:
 * not followed, not replaced"), strerror() for other errors: for callers that keep only the
 * error number. @param rc  -errno
 */
const char *roce_out_strerror(int rc);

/** Close the stream and remove the temporary file: the target stays as it was. */
void roce_out_discard(struct roce_out *o);

#endif /* ROCE_FILE_H */
