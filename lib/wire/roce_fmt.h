/* lib/wire: text formatting into a bounded buffer without printf, for the dissectors' hot paths. */
#ifndef ROCE_FMT_H
#define ROCE_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "roce_common.h"
#include "roce_wire.h"

/*
 * A cursor over an output buffer, with snprintf()'s contract: it writes what fits, counts
 * everything, and roce_fmt_end() NUL-terminates and returns the length a large enough buffer
 * would have received. Each helper asks roce_fmt_reserve() for the most it can write; when that
 * does not fit, it writes into the cursor's scratch area and roce_fmt_commit() copies the part
 * that fits. The usual case is one bounds check per field.
 */
#define ROCE_FMT_FIELD_MAX 48	/* the most one helper writes: an IPv6 address (inet_ntop) */

struct roce_fmt {
	char *buf;		/* output; borrowed */
	size_t size;		/* bytes available in buf, the NUL included */
	size_t len;		/* bytes produced so far; beyond size - 1 the output is cut */
	char scratch[ROCE_FMT_FIELD_MAX]; /* a field that may not fit is formatted here */
};

/** "00" "01" ... "99": two decimal digits per entry. */
extern const char roce_fmt_digits2[200];

/** Start a cursor over @p size bytes at @p buf (borrowed; size may be 0). */
static inline void roce_fmt_init(struct roce_fmt *f, char *buf, size_t size)
{
	f->buf = buf;
	f->size = size;
	f->len = 0;
}

/** The slow path of appending: copy what fits of @p n bytes at @p s, count them all. */
void roce_fmt_cut(struct roce_fmt *f, const char *s, size_t n);

/** Where to write up to @p max bytes (max <= ROCE_FMT_FIELD_MAX): the buffer, or the scratch. */
static inline char *roce_fmt_reserve(struct roce_fmt *f, size_t max)
{
	return f->len + max < f->size ? f->buf + f->len : f->scratch;
}

/** Account for @p n bytes written at @p at, the pointer roce_fmt_reserve() returned. */
static inline void roce_fmt_commit(struct roce_fmt *f, const char *at, size_t n)
{
	if (at == f->scratch)
		roce_fmt_cut(f, at, n);
	else
		f->len += n;
}

/** NUL-terminate (when size > 0) and return the untruncated length, as snprintf() does. */
static inline int roce_fmt_end(struct roce_fmt *f)
{
	if (f->size > 0)
		f->buf[f->len < f->size ? f->len : f->size - 1] = '\0';
	return (int)f->len;
}

/** Append @p n bytes. */
static inline void roce_fmt_mem(struct roce_fmt *f, const char *s, size_t n)
{
	if (roce_likely(f->len + n < f->size)) {
		memcpy(f->buf + f->len, s, n);
		f->len += n;
	} else {
		roce_fmt_cut(f, s, n);
	}
}

/** Append a NUL-terminated string (for a literal the length folds to a constant). */
static inline void roce_fmt_str(struct roce_fmt *f, const char *s)
{
	roce_fmt_mem(f, s, strlen(s));
}

static inline void roce_fmt_char(struct roce_fmt *f, char c)
{
	roce_fmt_mem(f, &c, 1);
}

/* Write the @p n low decimal digits of @p v ending just before @p end, two at a time. */
static inline void roce_fmt_digits_back(char *end, uint64_t v, unsigned int n)
{
	for (; n >= 2; n -= 2) {
		memcpy(end - 2, roce_fmt_digits2 + 2 * (v % 100), 2);
		end -= 2;
		v /= 100;
	}
	if (n == 1)
		end[-1] = (char)('0' + v % 10);
}

/**
 * Append @p v in decimal, right-aligned in @p width characters filled with @p fill (' ' or '0'):
 * printf's "%u", "%6llu" (width 6, ' '), "%09u" (width 9, '0'). @p width is at most 20.
 */
void roce_fmt_dec_width(struct roce_fmt *f, uint64_t v, unsigned int width, char fill);

/** Append @p v in decimal: printf's "%u" / "%llu". */
void roce_fmt_dec(struct roce_fmt *f, uint64_t v);

/**
 * Append @p v in lower-case hex with at least @p digits digits, zero-filled, no "0x":
 * printf's "%08x" (digits 8) or "%llx" (digits 1). @p digits is at most 16.
 */
void roce_fmt_hex(struct roce_fmt *f, uint64_t v, unsigned int digits);

/*
 * A literal label then a value: the shape of nearly every field the dissectors print
 * (" psn 17", ",\"psn\":17", " qkey 0x00000001"). Always inlined, so that the label's length
 * is a constant and its copy a few moves.
 */
static inline __attribute__((always_inline)) void
roce_fmt_label_dec(struct roce_fmt *f, const char *label, uint64_t v)
{
	roce_fmt_str(f, label);
	if (v < 10)		/* flags and small fields, about half the numbers printed */
		roce_fmt_char(f, (char)('0' + v));
	else
		roce_fmt_dec(f, v);
}

static inline __attribute__((always_inline)) void
roce_fmt_label_hex(struct roce_fmt *f, const char *label, uint64_t v, unsigned int digits)
{
	roce_fmt_str(f, label);
	roce_fmt_hex(f, v, digits);
}

static inline __attribute__((always_inline)) void
roce_fmt_label_str(struct roce_fmt *f, const char *label, const char *s)
{
	roce_fmt_str(f, label);
	roce_fmt_str(f, s);
}

/** Append an address as roce_ip_ntop() writes it: dotted quad for IPv4, RFC 5952 for IPv6. */
void roce_fmt_ip(struct roce_fmt *f, const struct roce_ip_addr *addr, uint8_t ip_ver);

/** Append a MAC address as "52:54:00:c0:00:03". */
void roce_fmt_mac(struct roce_fmt *f, const uint8_t mac[6]);

/** Append the one-line summary of roce_pkt_snprint(). */
void roce_fmt_pkt(struct roce_fmt *f, const struct roce_pkt *pkt);

struct roce_mad;

/**
 * Append what identifies a MAD (roce_mad.h): "REQ lcid 0x... sid 0x... (tcp port N) qpn 0x...
 * psn N", "REJ lcid ... reason consumer-reject (28)", "class 0x01 attr 0x0011" for another
 * class; "[short-mad]" ends a MAD the frame holds less of than 256 bytes.
 */
void roce_fmt_mad(struct roce_fmt *f, const struct roce_mad *m);

#endif /* ROCE_FMT_H */
