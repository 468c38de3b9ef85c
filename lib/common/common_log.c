/* The one log sink of the library: stderr, one line per message. */
#include "roce_common.h"

enum roce_log_level roce_log_threshold = ROCE_LOG_WARN;

void roce_log(enum roce_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[ROCE_LOG_ERR] = "error: ",
		[ROCE_LOG_WARN] = "warning: ",
		[ROCE_LOG_INFO] = "",
		[ROCE_LOG_DEBUG] = "debug: ",
	};
	va_list ap;

	fprintf(stderr, "rocelab: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
