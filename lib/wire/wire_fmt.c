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

/*
 * The 8 hex digits of @p v as 8 characters in a word, the first digit in the lowest byte (so
 * that a little-endian store writes them in order): each nibble is spread into a byte, then
 * '0' is added, and 39 more to those above 9 ('a' - '0' - 10).
 */
static inline uint64_t hex8(uint32_t v)
{
	uint64_t x = v;

	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;	/* byte i: nibble i */
	x += 0x3030303030303030ull + (((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * 39;
	return __builtin_bswap64(x);
}

static inline void store64le(char *p, uint64_t x)
{
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		x = __builtin_bswap64(x);
	memcpy(p, &x, 8);
}

void roce_fmt_hex(struct roce_fmt *f, uint64_t v, unsigned int digits)
{
	unsigned int n = (64u - (unsigned int)__builtin_clzll(v | 1) + 3) / 4;
	char *p = roce_fmt_reserve(f, 16);

	if (n < digits)
		n = digits;
	/* whole words are stored, the digits wanted shifted to their start; 16 bytes at most */
	if (n <= 8) {
		store64le(p, hex8((uint32_t)v) >> (8 * (8 - n)));
	} else {
		store64le(p, hex8((uint32_t)(v >> 32)) >> (8 * (16 - n)));
		store64le(p + n - 8, hex8((uint32_t)v));
	}
	roce_fmt_commit(f, p, n);
}

/* Each byte in decimal with its dot, in 4 bytes (NUL-padded), and that text's length. */
static const char octet_dot[256][4] = {
	"0.", "1.", "2.", "3.", "4.", "5.", "6.", "7.", "8.", "9.", "10.", "11.", "12.", "13.", "14.",
	"15.", "16.", "17.", "18.", "19.", "20.", "21.", "22.", "23.", "24.", "25.", "26.", "27.",
	"28.", "29.", "30.", "31.", "32.", "33.", "34.", "35.", "36.", "37.", "38.", "39.", "40.",
	"41.", "42.", "43.", "44.", "45.", "46.", "47.", "48.", "49.", "50.", "51.", "52.", "53.",
	"54.", "55.", "56.", "57.", "58.", "59.", "60.", "61.", "62.", "63.", "64.", "65.", "66.",
	"67.", "68.", "69.", "70.", "71.", "72.", "73.", "74.", "75.", "76.", "77.", "78.", "79.",
	"80.", "81.", "82.", "83.", "84.", "85.", "86.", "87.", "88.", "89.", "90.", "91.", "92.",
	"93.", "94.", "95.", "96.", "97.", "98.", "99.", "100.", "101.", "102.", "103.", "104.",
	"105.", "106.", "107.", "108.", "109.", "110.", "111.", "112.", "113.", "114.", "115.",
	"116.", "117.", "118.", "119.", "120.", "121.", "122.", "123.", "124.", "125.", "126.",
	"127.", "128.", "129.", "130.", "131.", "132.", "133.", "134.", "135.", "136.", "137.",
	"138.", "139.", "140.", "141.", "142.", "143.", "144.", "145.", "146.", "147.", "148.",
	"149.", "150.", "151.", "152.", "153.", "154.", "155.", "156.", "157.", "158.", "159.",
	"160.", "161.", "162.", "163.", "164.", "165.", "166.", "167.", "168.", "169.", "170.",
	"171.", "172.", "173.", "174.", "175.", "176.", "177.", "178.", "179.", "180.", "181.",
	"182.", "183.", "184.", "185.", "186.", "187.", "188.", "189.", "190.", "191.", "192.",
	"193.", "194.", "195.", "196.", "197.", "198.", "199.", "200.", "201.", "202.", "203.",
	"204.", "205.", "206.", "207.", "208.", "209.", "210.", "211.", "212.", "213.", "214.",
	"215.", "216.", "217.", "218.", "219.", "220.", "221.", "222.", "223.", "224.", "225.",
	"226.", "227.", "228.", "229.", "230.", "231.", "232.", "233.", "234.", "235.", "236.",
	"237.", "238.", "239.", "240.", "241.", "242.", "243.", "244.", "245.", "246.", "247.",
	"248.", "249.", "250.", "251.", "252.", "253.", "254.", "255.",
};
static const uint8_t octet_dot_len[256] = {
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4,
};

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
	/* 16 bytes at most: well within the reserve */
	memcpy(q, octet_dot[addr->b[0]], 4);
	q += octet_dot_len[addr->b[0]];
	memcpy(q, octet_dot[addr->b[1]], 4);
	q += octet_dot_len[addr->b[1]];
	memcpy(q, octet_dot[addr->b[2]], 4);
	q += octet_dot_len[addr->b[2]];
	memcpy(q, octet_dot[addr->b[3]], 4);
	q += octet_dot_len[addr->b[3]];
	roce_fmt_commit(f, p, (size_t)(q - p - 1));	/* without the last dot */
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

