/* Small helpers shared by every layer of rocelab: array size, static assert, logging. */
#ifndef ROCE_COMMON_H
#define ROCE_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define ROCE_DIM(a) (sizeof(a) / sizeof((a)[0]))
#define ROCE_STATIC_ASSERT(e) _Static_assert(e, #e)
#define ROCE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define ROCE_MAX(a, b) ((a) > (b) ? (a) : (b))

#define roce_likely(x) __builtin_expect(!!(x), 1)
#define roce_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * snprintf at a cursor: appends to char *out (size bytes) at size_t len, advancing len by what
 * would have been written, never past the end; the caller checks len < size for truncation.
 */
#define ROCE_PUT(...) \
	do { \
		int n_ = snprintf(out + (len < size ? len : size), len < size ? size - len : 0, \
				  __VA_ARGS__); \
		if (n_ > 0) \
			len += (size_t)n_; \
	} while (0)

/**
 * A whole number (decimal, 0x hex or 0 octal) no larger than @p max, with nothing before or
 * after it. @return 0 or -EINVAL
 */
int roce_parse_uint(const char *s, uint64_t max, uint64_t *out);

enum roce_log_level {
	ROCE_LOG_ERR,	/* something failed */
	ROCE_LOG_WARN,	/* suspicious but recoverable */
	ROCE_LOG_INFO,	/* what the tool decided (e.g. the CRC path it took) */
	ROCE_LOG_DEBUG,	/* for developers */
};

/** Messages above this level are dropped; ROCE_LOG_WARN unless changed. */
extern enum roce_log_level roce_log_threshold;

/** Print one log line to stderr, prefixed with "rocelab: ". */
void roce_log(enum roce_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ROCE_LOG(lvl, ...) \
	do { \
		if (ROCE_LOG_##lvl <= roce_log_threshold) \
			roce_log(ROCE_LOG_##lvl, __VA_ARGS__); \
	} while (0)

#endif /* ROCE_COMMON_H */
