/* Numbers typed by users (options, scenario values): whole, in range, nothing left over. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "roce_common.h"

int roce_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;		/* no sign, no blank, not empty */
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
