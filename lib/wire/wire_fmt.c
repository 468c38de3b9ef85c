/* Text formatting without printf (roce_fmt.h): numbers, addresses and the bounded copy. */
#include <arpa/inet.h>
#include <stdio.h>

#include "roce_fmt.h"
#include "roce_wire.h"

const char roce_fmt_digits2[200] =
	"00010203040506070809" "10111213141516171819" "20212223242526272829"
	"30313233343536373839" "40414243444546474849" "50515253545556575859"
	"60616263646566676869" "70717273747576777879" "80818283848586878889"
	"90919293949596979899";

char *roce_ip_ntop(const struct roce_ip_addr *addr, uint8_t ip_ver, char *out, size_t size)
{
	if (inet_ntop(ip_ver == 4 ? AF_INET : AF_INET6, addr->b, out, (socklen_t)size) == NULL)
		snprintf(out, size, "?");
	return out;
}

void roce_fmt_cut(struct roce_fmt *f, const char *s, size_t n)
{
	if (f->len + 1 < f->size) {
		size_t room = f->size - 1 - f->len;

		memmove(f->buf + f->len, s, n < room ? n : room);
	}
	f->len += n;
}

/* Number of decimal digits of @p v (1 for 0): log10 from the bit length, then one compare. */
static unsigned int ndigits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned int t = ((64u - (unsigned int)__builtin_clzll(v | 1)) * 1233u) >> 12; /* 1233/4096 ~ log10(2) */

	return t + ((v | 1) >= pow10[t]);
}

/* Digits of @p v ending before @p end; 32-bit arithmetic where the value allows (most do). */
static void digits_back(char *end, uint64_t v, unsigned int n)
{
	if (v <= UINT32_MAX) {
		uint32_t w = (uint32_t)v;

		for (; n >= 2; n -= 2, w /= 100, end -= 2)
			memcpy(end - 2, roce_fmt_digits2 + 2 * (w % 100), 2);
		if (n == 1)
			end[-1] = (char)('0' + w);
		return;
	}
	roce_fmt_digits_back(end, v, n);
}

void roce_fmt_dec_width(struct roce_fmt *f, uint64_t v, unsigned int width, char fill)
{
	unsigned int nd = ndigits(v);
	unsigned int n = nd > width ? nd : width;
	char *p = roce_fmt_reserve(f, 20);

	memset(p, fill, n - nd);
	digits_back(p + n, v, nd);
	roce_fmt_commit(f, p, n);
}

void roce_fmt_dec(struct roce_fmt *f, uint64_t v)
{
	unsigned int n;
	char *p;

	if (v < 10) {		/* flags and small fields: a third of all numbers printed */
		roce_fmt_char(f, (char)('0' + v));
		return;
	}
	n = ndigits(v);
	p = roce_fmt_reserve(f, 20);

	digits_back(p + n, v, n);
	roce_fmt_commit(f, p, n);
}

void roce_fmt_hex(struct roce_fmt *f, uint64_t v, unsigned int digits)
{
	unsigned int n = (64u - (unsigned int)__builtin_clzll(v | 1) + 3) / 4;
	char *p = roce_fmt_reserve(f, 16);

	if (n < digits)
		n = digits;
	for (unsigned int i = n; i > 0; i--, v >>= 4)
		p[i - 1] = "0123456789abcdef"[v & 0xf];
	roce_fmt_commit(f, p, n);
}

void roce_fmt_ip(struct roce_fmt *f, const struct roce_ip_addr *addr, uint8_t ip_ver)
{
	char *p = roce_fmt_reserve(f, ROCE_FMT_FIELD_MAX);
	char *q = p;

	if (ip_ver != 4) {
		/* IPv6 is rare and RFC 5952 is subtle: libc's inet_ntop() writes it */
		roce_ip_ntop(addr, ip_ver, p, ROCE_FMT_FIELD_MAX);
		roce_fmt_commit(f, p, strlen(p));
		return;
	}
	for (int i = 0; i < 4; i++) {
		unsigned int b = addr->b[i];
		unsigned int nd = b >= 100 ? 3 : b >= 10 ? 2 : 1;

		roce_fmt_digits_back(q + nd, b, nd);
		q += nd;
		*q++ = '.';
	}
	roce_fmt_commit(f, p, (size_t)(q - p - 1));
}

void roce_fmt_mac(struct roce_fmt *f, const uint8_t mac[6])
{
	char *p = roce_fmt_reserve(f, 17);

	for (int i = 0; i < 6; i++) {
		p[3 * i] = "0123456789abcdef"[mac[i] >> 4];
		p[3 * i + 1] = "0123456789abcdef"[mac[i] & 0xf];
		if (i < 5)
			p[3 * i + 2] = ':';
	}
	roce_fmt_commit(f, p, 17);
}

