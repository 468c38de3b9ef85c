/* Text frame descriptors: one line of key=value words to a struct roce_pkt, and back. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "roce_wire.h"
#include "wire_private.h"

#define KB(k) (1u << (k))
#define K_V2 KB(ROCE_KIND_ROCEV2)
#define K_V1 KB(ROCE_KIND_ROCEV1)
#define K_ROCE (K_V2 | K_V1)
#define K_MAC (KB(ROCE_KIND_PFC) | KB(ROCE_KIND_PAUSE))
#define K_ALL (K_ROCE | K_MAC)
#define SHOW_WORD 48		/* a word longer than this is cut short in messages */

struct desc_key;

/* Parsing state of one line. */
struct desc_ctx {
	struct roce_desc *d;
	struct roce_pkt *pkt;
	const char *word;	/* the whole key=value word, for messages */
	size_t wlen;
	const char *val;	/* the value, after '=' */
	size_t vlen;
	char *err;
	size_t errlen;
	int tag;		/* index of the last vlan= tag, -1 before the first */
	int src_ver;		/* 4 or 6 once src= is given, else 0 */
	int dst_ver;
	bool len_given;
	uint32_t len;		/* len= value */
	bool hex_given;
	uint32_t hex_len;	/* bytes given by payload= */
	bool pattern_given;
	bool seed_given;
	const char *seen_word[80];	/* per key row: the word that set it, for later checks */
	size_t seen_len[80];
};

typedef int (*desc_set_fn)(struct desc_ctx *c, const struct desc_key *k);
typedef size_t (*desc_print_fn)(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
				const struct roce_pkt *def, unsigned int flags);

/* One key of the descriptor language. */
struct desc_key {
	const char *name;	/* the key as typed */
	desc_set_fn set;	/* custom parser; NULL: an unsigned field at off/size, bits wide */
	desc_print_fn print;	/* custom printer; NULL: print the field when it is not the default */
	uint16_t off;		/* offsetof(struct roce_pkt, field) */
	uint8_t size;		/* sizeof the field: 1, 2, 4 or 8 */
	uint8_t bits;		/* width of the value */
	uint8_t kinds;		/* K_* kinds of frame that have the field */
	uint8_t ipv;		/* 4 or 6: only with that IP version; 0: either */
	uint32_t need;		/* ROCE_F_* header the opcode must carry; 0: any */
	bool hex;		/* printed in hexadecimal */
	bool always;		/* always printed */
	bool multi;		/* may appear more than once */
};

/* Blank between words: none before the first. */
#define SEP (len == 0 ? "" : " ")

#define PUT ROCE_PUT

static int bad(struct desc_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "'WORD': " then the explanation. */
static int bad(struct desc_ctx *c, const char *fmt, ...)
{
	int n = 0;
	va_list ap;

	if (c->errlen == 0)
		return -EINVAL;
	if (c->word != NULL)
		n = snprintf(c->err, c->errlen, "'%.*s%s': ", (int)ROCE_MIN(c->wlen, SHOW_WORD),
			     c->word, c->wlen > SHOW_WORD ? "..." : "");
	if (n < 0 || (size_t)n >= c->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Decimal or 0x-hexadecimal unsigned number spanning exactly @p n bytes. */
static int parse_num(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int base = 10;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -1;
	for (; i < n; i++) {
		unsigned int dig;
		char ch = s[i];

		if (ch >= '0' && ch <= '9')
			dig = (unsigned int)(ch - '0');
		else if (base == 16 && ch >= 'a' && ch <= 'f')
			dig = (unsigned int)(ch - 'a' + 10);
		else if (base == 16 && ch >= 'A' && ch <= 'F')
			dig = (unsigned int)(ch - 'A' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - dig) / base)
			return -1;
		v = v * base + dig;
	}
	*out = v;
	return 0;
}

static uint64_t max_of(unsigned int bits)
{
	return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

/* A number of @p bits bits, as key @p name. */
static int get_num(struct desc_ctx *c, const char *name, unsigned int bits, uint64_t *v)
{
	if (parse_num(c->val, c->vlen, v) != 0)
		return bad(c, "%s expects a number, decimal or 0x hex, 0..%llu", name,
			   (unsigned long long)max_of(bits));
	if (*v > max_of(bits))
		return bad(c, "%s is %u bit%s (0..%llu)", name, bits, bits == 1 ? "" : "s",
			   (unsigned long long)max_of(bits));
	return 0;
}

static void store(void *field, unsigned int size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)field = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)field = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)field = (uint32_t)v;
		break;
	default:
		*(uint64_t *)field = v;
		break;
	}
}

static uint64_t load(const void *field, unsigned int size)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)field;
	case 2:
		return *(const uint16_t *)field;
	case 4:
		return *(const uint32_t *)field;
	default:
		return *(const uint64_t *)field;
	}
}

/* Copy the value into @p buf as a C string; false if it does not fit. */
static bool val_str(const struct desc_ctx *c, char *buf, size_t size)
{
	if (c->vlen >= size)
		return false;
	memcpy(buf, c->val, c->vlen);
	buf[c->vlen] = '\0';
	return true;
}

static int set_uint(struct desc_ctx *c, const struct desc_key *k)
{
	uint64_t v;
	int rc = get_num(c, k->name, k->bits, &v);

	if (rc == 0)
		store((uint8_t *)c->pkt + k->off, k->size, v);
	return rc;
}

/* kind= and op= are applied in a first pass (they choose the defaults); nothing to do later. */
static int set_nothing(struct desc_ctx *c, const struct desc_key *k)
{
	(void)c;
	(void)k;
	return 0;
}

static int parse_kind(struct desc_ctx *c, enum roce_kind *kind)
{
	static const enum roce_kind kinds[] = {
		ROCE_KIND_ROCEV2, ROCE_KIND_ROCEV1, ROCE_KIND_PFC, ROCE_KIND_PAUSE,
	};
	char buf[16];

	if (val_str(c, buf, sizeof(buf)))
		for (size_t i = 0; i < ROCE_DIM(kinds); i++)
			if (strcasecmp(buf, roce_kind_name(kinds[i])) == 0) {
				*kind = kinds[i];
				return 0;
			}
	return bad(c, "kind is rocev2, rocev1, pfc or pause");
}

static int parse_op(struct desc_ctx *c, uint8_t *op)
{
	char buf[64];
	uint64_t v;
	int n;

	if (parse_num(c->val, c->vlen, &v) == 0) {
		if (v > 0xff)
			return bad(c, "op is an opcode name or a number 0..255");
		*op = (uint8_t)v;
		return 0;
	}
	n = val_str(c, buf, sizeof(buf)) ? roce_opcode_by_name(buf) : -1;
	if (n < 0)
		return bad(c, "op expects an IBTA opcode name (RC_SEND_ONLY, UD_SEND_ONLY, CNP, ...) or a number 0..255");
	*op = (uint8_t)n;
	return 0;
}

static int set_mac(struct desc_ctx *c, const struct desc_key *k)
{
	uint8_t *mac = (uint8_t *)c->pkt + k->off;
	unsigned int b[6];
	char buf[32], tail;

	if (!val_str(c, buf, sizeof(buf)) ||
	    sscanf(buf, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return bad(c, "%s expects a MAC address like 02:00:00:00:00:01", k->name);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int set_vlan(struct desc_ctx *c, const struct desc_key *k)
{
	struct roce_pkt *pkt = c->pkt;
	uint64_t v;
	int rc;

	if (pkt->nvlan == ROCE_MAX_VLANS)
		return bad(c, "at most %d vlan= tags", ROCE_MAX_VLANS);
	rc = get_num(c, k->name, 12, &v);
	if (rc != 0)
		return rc;
	c->tag = pkt->nvlan++;
	pkt->vlan[c->tag].tpid = 0x8100;
	pkt->vlan[c->tag].vid = (uint16_t)v;
	return 0;
}

/* pcp=, dei=, tpid=: fields of the tag the last vlan= opened. */
static int set_tag_field(struct desc_ctx *c, const struct desc_key *k)
{
	uint64_t v;
	int rc;

	if (c->tag < 0)
		return bad(c, "%s belongs to a VLAN tag: put vlan=VID before it", k->name);
	rc = get_num(c, k->name, k->bits, &v);
	if (rc != 0)
		return rc;
	if (strcmp(k->name, "pcp") == 0)
		c->pkt->vlan[c->tag].pcp = (uint8_t)v;
	else if (strcmp(k->name, "dei") == 0)
		c->pkt->vlan[c->tag].dei = (uint8_t)v;
	else
		c->pkt->vlan[c->tag].tpid = (uint16_t)v;
	return 0;
}

static int set_addr(struct desc_ctx *c, const struct desc_key *k)
{
	struct roce_ip_addr *a = (struct roce_ip_addr *)((uint8_t *)c->pkt + k->off);
	int *ver = strcmp(k->name, "src") == 0 ? &c->src_ver : &c->dst_ver;
	char buf[INET6_ADDRSTRLEN + 1];

	memset(a->b, 0, sizeof(a->b));
	if (val_str(c, buf, sizeof(buf))) {
		if (strchr(buf, ':') != NULL && inet_pton(AF_INET6, buf, a->b) == 1) {
			*ver = 6;
			return 0;
		}
		if (strchr(buf, ':') == NULL && inet_pton(AF_INET, buf, a->b) == 1) {
			*ver = 4;
			if (c->pkt->kind == ROCE_KIND_ROCEV1) {
				/* a GID: the IPv4-mapped form RoCE stacks derive */
				memmove(a->b + 12, a->b, 4);
				memset(a->b, 0, 4);
				a->b[10] = a->b[11] = 0xff;
			}
			return 0;
		}
	}
	return bad(c, "%s expects an IPv4 (10.0.0.1) or IPv6 (fe80::1) address", k->name);
}

static int set_ecn(struct desc_ctx *c, const struct desc_key *k)
{
	static const char *const names[] = { "not-ect", "ect1", "ect0", "ce" };
	char buf[16];

	(void)k;
	if (val_str(c, buf, sizeof(buf)))
		for (unsigned int i = 0; i < ROCE_DIM(names); i++)
			if (strcasecmp(buf, names[i]) == 0 || (buf[0] == '0' + (char)i && buf[1] == '\0')) {
				c->pkt->ecn = (uint8_t)i;
				return 0;
			}
	return bad(c, "ecn is not-ect, ect1, ect0, ce or 0..3");
}

static int set_ipcsum(struct desc_ctx *c, const struct desc_key *k)
{
	int rc = set_uint(c, k);

	if (rc == 0)
		c->d->flags |= ROCE_BUILD_KEEP_IP_CSUM;
	return rc;
}

static int set_pad(struct desc_ctx *c, const struct desc_key *k)
{
	int rc = set_uint(c, k);

	if (rc == 0)
		c->d->flags |= ROCE_BUILD_KEEP_PAD;
	return rc;
}

static int set_len(struct desc_ctx *c, const struct desc_key *k)
{
	uint64_t v;

	(void)k;
	if (parse_num(c->val, c->vlen, &v) != 0 || v > ROCE_DESC_PAYLOAD_MAX)
		return bad(c, "len is the payload length in bytes, 0..%u", ROCE_DESC_PAYLOAD_MAX);
	c->len = (uint32_t)v;
	c->len_given = true;
	return 0;
}

static int set_pattern(struct desc_ctx *c, const struct desc_key *k)
{
	uint64_t v;

	(void)k;
	c->pattern_given = true;
	if (c->vlen == 3 && strncasecmp(c->val, "inc", 3) == 0) {
		c->d->fill = ROCE_FILL_INC;
	} else if (c->vlen == 6 && strncasecmp(c->val, "random", 6) == 0) {
		c->d->fill = ROCE_FILL_RANDOM;
	} else if (parse_num(c->val, c->vlen, &v) == 0 && v <= 0xff) {
		c->d->fill = ROCE_FILL_BYTE;
		c->d->fill_byte = (uint8_t)v;
	} else {
		return bad(c, "pattern is inc, random or a byte value 0..255 (0xab)");
	}
	return 0;
}

static int set_seed(struct desc_ctx *c, const struct desc_key *k)
{
	(void)k;
	c->seed_given = true;
	return get_num(c, "seed", 64, &c->d->seed);
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int set_payload(struct desc_ctx *c, const struct desc_key *k)
{
	const char *s = c->val;
	size_t n = c->vlen;

	(void)k;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (n % 2 != 0 || n / 2 > ROCE_DESC_PAYLOAD_MAX)
		return bad(c, "payload expects an even number of hex digits (at most %u bytes)",
			   ROCE_DESC_PAYLOAD_MAX);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return bad(c, "payload expects hex digits, found '%c'", hi < 0 ? s[2 * i] :
				   s[2 * i + 1]);
		c->d->payload[i] = (uint8_t)(hi << 4 | lo);
	}
	c->hex_given = true;
	c->hex_len = (uint32_t)(n / 2);
	return 0;
}

static int set_icrc(struct desc_ctx *c, const struct desc_key *k)
{
	uint64_t v;

	(void)k;
	c->d->flags &= ~(ROCE_BUILD_BAD_ICRC | ROCE_BUILD_KEEP_ICRC);
	if (c->vlen == 2 && strncasecmp(c->val, "ok", 2) == 0)
		return 0;
	if (c->vlen == 3 && strncasecmp(c->val, "bad", 3) == 0) {
		c->d->flags |= ROCE_BUILD_BAD_ICRC;
		return 0;
	}
	if (parse_num(c->val, c->vlen, &v) == 0 && v <= UINT32_MAX) {
		c->d->flags |= ROCE_BUILD_KEEP_ICRC;
		c->pkt->icrc = rte_bswap32((uint32_t)v);	/* given in wire order */
		return 0;
	}
	return bad(c, "icrc is ok, bad or a 32-bit value (the stored bytes in wire order)");
}

static int set_quanta(struct desc_ctx *c, const struct desc_key *k)
{
	unsigned int want = c->pkt->kind == ROCE_KIND_PFC ? 8 : 1;
	const char *s = c->val, *end = c->val + c->vlen;
	unsigned int n = 0;

	(void)k;
	while (s <= end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *e = comma != NULL ? comma : end;
		uint64_t v;

		if (n == want || parse_num(s, (size_t)(e - s), &v) != 0 || v > 0xffff)
			goto err;
		c->pkt->quanta[n++] = (uint16_t)v;
		s = e + 1;
	}
	if (n == want)
		return 0;
err:
	if (want == 1)
		return bad(c, "quanta of a pause frame is one number 0..65535");
	return bad(c, "quanta of a pfc frame is 8 comma-separated numbers 0..65535, priority 0 first");
}

/* ---- printers of the custom keys ---- */

static size_t print_kind(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			 const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	if (pkt->kind != ROCE_KIND_ROCEV2)
		PUT("%skind=%s", SEP, roce_kind_name(pkt->kind));
	return len;
}

static size_t print_op(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
		       const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	if (roce_opcode[pkt->opcode].name != NULL)
		PUT("%sop=%s", SEP, roce_opcode[pkt->opcode].name);
	else
		PUT("%sop=0x%02x", SEP, pkt->opcode);
	return len;
}

static size_t print_mac(char *out, size_t size, size_t len, const char *name, const uint8_t *m,
			const uint8_t *def)
{
	if (memcmp(m, def, 6) != 0)
		PUT("%s%s=%02x:%02x:%02x:%02x:%02x:%02x", SEP, name, m[0], m[1], m[2], m[3], m[4], m[5]);
	return len;
}

static size_t print_dmac(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			 const struct roce_pkt *def, unsigned int flags)
{
	(void)flags;
	return print_mac(out, size, len, "dmac", pkt->dmac, def->dmac);
}

static size_t print_smac(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			 const struct roce_pkt *def, unsigned int flags)
{
	(void)flags;
	return print_mac(out, size, len, "smac", pkt->smac, def->smac);
}

static size_t print_vlan(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			 const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	for (unsigned int i = 0; i < pkt->nvlan && i < ROCE_MAX_VLANS; i++) {
		PUT("%svlan=%u", SEP, pkt->vlan[i].vid);
		if (pkt->vlan[i].pcp != 0)
			PUT("%spcp=%u", SEP, pkt->vlan[i].pcp);
		if (pkt->vlan[i].dei != 0)
			PUT("%sdei=%u", SEP, pkt->vlan[i].dei);
		if (pkt->vlan[i].tpid != 0x8100 && pkt->vlan[i].tpid != 0)
			PUT("%stpid=0x%04x", SEP, pkt->vlan[i].tpid);
	}
	return len;
}

static size_t print_none(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			 const struct roce_pkt *def, unsigned int flags)
{
	(void)out, (void)size, (void)pkt, (void)def, (void)flags;
	return len;
}

static size_t print_addr(char *out, size_t size, size_t len, const char *name,
			 const struct roce_ip_addr *a, uint8_t ip_ver)
{
	char buf[INET6_ADDRSTRLEN + 1];

	PUT("%s%s=%s", SEP, name, roce_ip_ntop(a, ip_ver, buf, sizeof(buf)));
	return len;
}

static size_t print_src(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	return print_addr(out, size, len, "src", &pkt->src, pkt->ip_ver);
}

static size_t print_dst(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	return print_addr(out, size, len, "dst", &pkt->dst, pkt->ip_ver);
}

static size_t print_ecn(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			const struct roce_pkt *def, unsigned int flags)
{
	static const char *const names[] = { "not-ect", "ect1", "ect0", "ce" };

	(void)def, (void)flags;
	if (pkt->ecn != 0)
		PUT("%secn=%s", SEP, names[pkt->ecn & 3]);
	return len;
}

static size_t print_ipcsum(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			   const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	if (pkt->err == ROCE_WERR_BAD_IP_CSUM)
		PUT("%sipcsum=0x%04x", SEP, pkt->ip_csum);
	return len;
}

static size_t print_pad(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	if (pkt->pad != ((4 - (pkt->payload_len & 3)) & 3))
		PUT("%spad=%u", SEP, pkt->pad);
	return len;
}

static size_t print_len(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	if (pkt->payload_len != 0)
		PUT("%slen=%u", SEP, pkt->payload_len);
	return len;
}

static size_t print_payload(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			    const struct roce_pkt *def, unsigned int flags)
{
	const uint8_t *p = pkt->payload;
	uint32_t n = pkt->payload_len, i;

	(void)def;
	if (p == NULL || n == 0 || (flags & ROCE_DESC_NO_PAYLOAD))
		return len;
	for (i = 0; i < n && p[i] == (uint8_t)i; i++)
		;
	if (i == n)
		return len;	/* the default incrementing pattern */
	for (i = 1; i < n && p[i] == p[0]; i++)
		;
	if (i == n) {
		PUT("%spattern=0x%02x", SEP, p[0]);
		return len;
	}
	PUT("%spayload=", SEP);
	for (i = 0; i < n; i++)
		PUT("%02x", p[i]);
	return len;
}

static size_t print_icrc(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			 const struct roce_pkt *def, unsigned int flags)
{
	(void)def, (void)flags;
	if (pkt->err == ROCE_WERR_ICRC_MISMATCH)
		PUT("%sicrc=0x%08x", SEP, rte_bswap32(pkt->icrc));
	return len;
}

static size_t print_quanta(char *out, size_t size, size_t len, const struct roce_pkt *pkt,
			   const struct roce_pkt *def, unsigned int flags)
{
	unsigned int n = pkt->kind == ROCE_KIND_PFC ? 8 : 1;

	(void)flags;
	if (memcmp(pkt->quanta, def->quanta, n * sizeof(pkt->quanta[0])) == 0)
		return len;
	for (unsigned int i = 0; i < n; i++)
		PUT("%s%u", i == 0 ? (len == 0 ? "quanta=" : " quanta=") : ",", pkt->quanta[i]);
	return len;
}

#define FIELD(f) .off = offsetof(struct roce_pkt, f), .size = sizeof(((struct roce_pkt *)0)->f)
#define UINT(n, f, b, k, ...) { .name = n, FIELD(f), .bits = b, .kinds = k, __VA_ARGS__ }
#define CUSTOM(n, s, p, k, ...) { .name = n, .set = s, .print = p, .kinds = k, __VA_ARGS__ }

/* Every key, in the order roce_desc_snprint() prints them. */
static const struct desc_key keys[] = {
	CUSTOM("kind", set_nothing, print_kind, K_ALL),
	CUSTOM("op", set_nothing, print_op, K_ROCE),
	CUSTOM("dmac", set_mac, print_dmac, K_ALL, FIELD(dmac)),
	CUSTOM("smac", set_mac, print_smac, K_ALL, FIELD(smac)),
	CUSTOM("vlan", set_vlan, print_vlan, K_ALL, .multi = true),
	CUSTOM("pcp", set_tag_field, print_none, K_ALL, .bits = 3, .multi = true),
	CUSTOM("dei", set_tag_field, print_none, K_ALL, .bits = 1, .multi = true),
	CUSTOM("tpid", set_tag_field, print_none, K_ALL, .bits = 16, .multi = true),
	CUSTOM("src", set_addr, print_src, K_ROCE, FIELD(src)),
	CUSTOM("dst", set_addr, print_dst, K_ROCE, FIELD(dst)),
	UINT("dscp", dscp, 6, K_ROCE),
	CUSTOM("ecn", set_ecn, print_ecn, K_ROCE),
	UINT("ttl", ttl, 8, K_ROCE),
	UINT("id", ip_id, 16, K_V2, .ipv = 4),
	UINT("df", ip_df, 1, K_V2, .ipv = 4),
	CUSTOM("ipcsum", set_ipcsum, print_ipcsum, K_V2, FIELD(ip_csum), .bits = 16, .ipv = 4),
	UINT("flow", flow_label, 20, K_ROCE, .ipv = 6, .hex = true),
	UINT("sport", sport, 16, K_V2),
	UINT("dport", dport, 16, K_V2),
	UINT("udpcsum", udp_csum, 16, K_V2, .hex = true),
	UINT("qp", dqpn, 24, K_ROCE, .hex = true, .always = true),
	UINT("psn", psn, 24, K_ROCE, .always = true),
	UINT("se", se, 1, K_ROCE),
	UINT("mig", mig, 1, K_ROCE),
	UINT("tver", tver, 4, K_ROCE),
	UINT("pkey", pkey, 16, K_ROCE, .hex = true),
	UINT("fecn", fecn, 1, K_ROCE),
	UINT("becn", becn, 1, K_ROCE),
	UINT("resv6", resv6, 6, K_ROCE, .hex = true),
	UINT("ackreq", ackreq, 1, K_ROCE),
	UINT("resv7", resv7, 7, K_ROCE, .hex = true),
	UINT("eecnxt", rdeth_eecnxt, 24, K_ROCE, .need = ROCE_F_RDETH, .hex = true),
	UINT("qkey", deth.qkey, 32, K_ROCE, .need = ROCE_F_DETH, .hex = true),
	UINT("srcqp", deth.srcqp, 24, K_ROCE, .need = ROCE_F_DETH, .hex = true),
	UINT("xrcsrq", xrc_srqn, 24, K_ROCE, .need = ROCE_F_XRCETH, .hex = true),
	UINT("feth", feth, 32, K_ROCE, .need = ROCE_F_FETH, .hex = true),
	UINT("va", reth.va, 64, K_ROCE, .need = ROCE_F_RETH, .hex = true),
	UINT("va", atmeth.va, 64, K_ROCE, .need = ROCE_F_ATMETH, .hex = true),
	UINT("rkey", reth.rkey, 32, K_ROCE, .need = ROCE_F_RETH, .hex = true),
	UINT("rkey", atmeth.rkey, 32, K_ROCE, .need = ROCE_F_ATMETH, .hex = true),
	UINT("dmalen", reth.dmalen, 32, K_ROCE, .need = ROCE_F_RETH),
	UINT("swap", atmeth.swap, 64, K_ROCE, .need = ROCE_F_ATMETH, .hex = true),
	UINT("cmp", atmeth.cmp, 64, K_ROCE, .need = ROCE_F_ATMETH, .hex = true),
	UINT("syndrome", aeth.syndrome, 8, K_ROCE, .need = ROCE_F_AETH, .hex = true),
	UINT("msn", aeth.msn, 24, K_ROCE, .need = ROCE_F_AETH),
	UINT("orig", atmack_orig, 64, K_ROCE, .need = ROCE_F_ATMACK, .hex = true),
	UINT("imm", immdt, 32, K_ROCE, .need = ROCE_F_IMMDT, .hex = true),
	UINT("ieth", ieth_rkey, 32, K_ROCE, .need = ROCE_F_IETH, .hex = true),
	CUSTOM("len", set_len, print_len, K_ROCE),
	CUSTOM("pad", set_pad, print_pad, K_ROCE, FIELD(pad), .bits = 2),
	CUSTOM("pattern", set_pattern, print_none, K_ROCE),
	CUSTOM("seed", set_seed, print_none, K_ROCE),
	CUSTOM("payload", set_payload, print_payload, K_ROCE),
	CUSTOM("icrc", set_icrc, print_icrc, K_ROCE),
	UINT("cev", pfc_cev, 16, KB(ROCE_KIND_PFC), .hex = true),
	CUSTOM("quanta", set_quanta, print_quanta, K_MAC),
};

ROCE_STATIC_ASSERT(ROCE_DIM(keys) <= ROCE_DIM(((struct desc_ctx *)0)->seen_word));

static const struct {
	uint32_t flag;
	const char *name;
} hdr_names[] = {
	{ ROCE_F_RDETH, "RDETH" }, { ROCE_F_DETH, "DETH" }, { ROCE_F_XRCETH, "XRCETH" },
	{ ROCE_F_FETH, "FETH" }, { ROCE_F_RETH, "RETH" },
	{ ROCE_F_ATMETH, "AtomicETH" }, { ROCE_F_AETH, "AETH" }, { ROCE_F_ATMACK, "AtomicAckETH" },
	{ ROCE_F_IMMDT, "ImmDt" }, { ROCE_F_IETH, "IETH" },
};

static const char *op_name(uint8_t op, char *buf, size_t size)
{
	if (roce_opcode[op].name != NULL)
		return roce_opcode[op].name;
	snprintf(buf, size, "opcode 0x%02x", op);
	return buf;
}

/* "unknown key" with the list of keys. */
static int unknown_key(struct desc_ctx *c, size_t klen)
{
	char list[512];
	size_t len = 0, size = sizeof(list);
	char *out = list;

	list[0] = '\0';
	for (size_t i = 0; i < ROCE_DIM(keys); i++)
		if (i == 0 || strcmp(keys[i].name, keys[i - 1].name) != 0)
			PUT("%s%s", i == 0 ? "" : " ", keys[i].name);
	return bad(c, "unknown key '%.*s'; keys are: %s", (int)ROCE_MIN(klen, SHOW_WORD), c->word,
		   list);
}

/* Apply one key=value word (second pass). */
static int apply_word(struct desc_ctx *c, size_t klen)
{
	uint32_t mask = roce_opcode[c->pkt->opcode].mask;
	const struct desc_key *k = NULL;
	uint32_t missing = 0;
	bool known = false;
	char opbuf[16];
	size_t i;

	for (i = 0; i < ROCE_DIM(keys); i++) {
		if (strlen(keys[i].name) != klen || strncmp(keys[i].name, c->word, klen) != 0)
			continue;
		known = true;
		if (!(keys[i].kinds & KB(c->pkt->kind)))
			return bad(c, "%s is not a field of %s frames", keys[i].name,
				   roce_kind_name(c->pkt->kind));
		if (keys[i].need != 0 && !(mask & keys[i].need)) {
			missing |= keys[i].need;
			continue;
		}
		k = &keys[i];
		break;
	}
	if (!known)
		return unknown_key(c, klen);
	if (k == NULL) {
		char hdrs[64];
		size_t len = 0, size = sizeof(hdrs);
		char *out = hdrs;

		hdrs[0] = '\0';
		for (size_t j = 0; j < ROCE_DIM(hdr_names); j++)
			if (missing & hdr_names[j].flag)
				PUT("%s%s", len == 0 ? "" : " or ", hdr_names[j].name);
		return bad(c, "%s has no %s, so no %.*s", op_name(c->pkt->opcode, opbuf,
			   sizeof(opbuf)), hdrs, (int)klen, c->word);
	}
	if (c->seen_word[i] != NULL && !k->multi)
		return bad(c, "%s given twice", k->name);
	c->seen_word[i] = c->word;
	c->seen_len[i] = c->wlen;
	return k->set != NULL ? k->set(c, k) : set_uint(c, k);
}

/* Split off the next blank-separated word; false at the end of the line or a '#'. */
static bool next_word(const char **s, const char **w, size_t *n)
{
	const char *p = *s;

	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (*p == '\0' || *p == '#')
		return false;
	*w = p;
	while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
		p++;
	*n = (size_t)(p - *w);
	*s = p;
	return true;
}

/* Point c->val at the value of the current word; return the key length or -EINVAL. */
static int split_word(struct desc_ctx *c)
{
	const char *eq = memchr(c->word, '=', c->wlen);

	if (eq == NULL || eq == c->word)
		return bad(c, "expected key=value");
	c->val = eq + 1;
	c->vlen = c->wlen - (size_t)(eq + 1 - c->word);
	return (int)(eq - c->word);
}

static uint64_t xorshift64s(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static void fill_payload(struct roce_desc *d)
{
	uint32_t n = d->pkt.payload_len;
	uint64_t s;

	switch (d->fill) {
	case ROCE_FILL_INC:
		for (uint32_t i = 0; i < n; i++)
			d->payload[i] = (uint8_t)i;
		break;
	case ROCE_FILL_BYTE:
		memset(d->payload, d->fill_byte, n);
		break;
	case ROCE_FILL_RANDOM:
		s = d->seed != 0 ? d->seed : 0x9e3779b97f4a7c15ull;	/* xorshift needs s != 0 */
		for (uint32_t i = 0; i < n; i += 8) {
			uint64_t r = xorshift64s(&s);

			memcpy(d->payload + i, &r, ROCE_MIN(8u, n - i));
		}
		break;
	case ROCE_FILL_HEX:
		break;
	}
}

/* Checks that need the whole line: IP versions, payload keys. */
static int finish(struct desc_ctx *c)
{
	struct roce_pkt *pkt = c->pkt;
	int ver;

	if (pkt->kind == ROCE_KIND_ROCEV2 && c->src_ver != 0 && c->dst_ver != 0 &&
	    c->src_ver != c->dst_ver) {
		c->word = NULL;
		return bad(c, "src is IPv%d but dst is IPv%d: give both of one version", c->src_ver,
			   c->dst_ver);
	}
	ver = c->src_ver != 0 ? c->src_ver : c->dst_ver != 0 ? c->dst_ver : 4;
	if (pkt->kind == ROCE_KIND_ROCEV2 && ver == 6 && (c->src_ver == 0 || c->dst_ver == 0)) {
		c->word = NULL;
		return bad(c, "an IPv6 %s needs an IPv6 %s too (the default is IPv4)",
			   c->src_ver == 0 ? "dst" : "src", c->src_ver == 0 ? "src" : "dst");
	}
	if (pkt->kind == ROCE_KIND_ROCEV2)
		pkt->ip_ver = (uint8_t)ver;
	for (size_t i = 0; i < ROCE_DIM(keys); i++) {
		if (c->seen_word[i] == NULL || keys[i].ipv == 0 || keys[i].ipv == pkt->ip_ver)
			continue;
		c->word = c->seen_word[i];
		c->wlen = c->seen_len[i];
		return bad(c, "%s is an IPv%u field, but the addresses are IPv%u", keys[i].name,
			   keys[i].ipv, pkt->ip_ver);
	}
	if (pkt->ip_ver == 6) {
		pkt->ip_df = false;	/* no such IPv6 fields: as roce_wire_parse() leaves them */
		pkt->ip_id = 0;
	}
	c->word = NULL;
	if (c->hex_given && c->pattern_given)
		return bad(c, "payload= and pattern= exclude each other");
	if (c->seed_given && c->d->fill != ROCE_FILL_RANDOM)
		return bad(c, "seed= needs pattern=random");
	if (c->hex_given && c->len_given && c->len != c->hex_len)
		return bad(c, "payload= holds %u bytes but len=%u", c->hex_len, c->len);
	if (c->hex_given) {
		c->d->fill = ROCE_FILL_HEX;
		pkt->payload_len = c->hex_len;
	} else if (c->len_given) {
		pkt->payload_len = c->len;
	}
	fill_payload(c->d);
	return 0;
}

int roce_desc_parse(const char *line, struct roce_desc *d, char *err, size_t errlen)
{
	struct desc_ctx c = { .d = d, .pkt = &d->pkt, .err = err, .errlen = errlen, .tag = -1 };
	enum roce_kind kind = ROCE_KIND_ROCEV2;
	uint8_t op = ROCE_OP_RC_SEND_ONLY;
	bool have_kind = false, have_op = false;
	const char *s = line, *w;
	size_t n;
	int klen, rc;

	if (errlen > 0)
		err[0] = '\0';
	/* First pass: kind= and op= choose the defaults everything else starts from. */
	if (!next_word(&s, &w, &n))
		return 0;
	s = line;
	while (next_word(&s, &c.word, &c.wlen)) {
		klen = split_word(&c);
		if (klen < 0)
			return klen;
		if (klen == 4 && strncmp(c.word, "kind", 4) == 0) {
			if (have_kind)
				return bad(&c, "kind given twice");
			have_kind = true;
			rc = parse_kind(&c, &kind);
		} else if (klen == 2 && strncmp(c.word, "op", 2) == 0) {
			if (have_op)
				return bad(&c, "op given twice");
			have_op = true;
			rc = parse_op(&c, &op);
		} else {
			continue;
		}
		if (rc != 0)
			return rc;
	}
	if (have_op && (kind == ROCE_KIND_PFC || kind == ROCE_KIND_PAUSE)) {
		c.word = NULL;
		return bad(&c, "op= does not apply to %s frames", roce_kind_name(kind));
	}

	memset(d, 0, offsetof(struct roce_desc, payload));
	roce_pkt_init(&d->pkt, kind, kind == ROCE_KIND_ROCEV1 || kind == ROCE_KIND_ROCEV2 ? op : 0);
	d->fill = ROCE_FILL_INC;

	s = line;
	while (next_word(&s, &c.word, &c.wlen)) {
		klen = split_word(&c);
		rc = apply_word(&c, (size_t)klen);
		if (rc != 0)
			return rc;
	}
	rc = finish(&c);
	return rc != 0 ? rc : 1;
}

int roce_desc_build(const struct roce_desc *d, uint8_t *buf, uint32_t size)
{
	struct roce_pkt pkt = d->pkt;

	pkt.payload = d->fill == ROCE_FILL_INC ? NULL : d->payload;
	return roce_wire_build(&pkt, d->flags, buf, size);
}

int roce_desc_snprint(char *out, size_t size, const struct roce_pkt *pkt, unsigned int flags)
{
	uint32_t mask = roce_opcode[pkt->opcode].mask;
	struct roce_pkt def;
	size_t len = 0;

	if (size > 0)
		out[0] = '\0';
	if (pkt->kind == ROCE_KIND_OTHER) {
		PUT("# not RoCE (ethertype 0x%04x, %s)", pkt->ethertype, roce_wire_strerror(pkt->err));
		return (int)len;
	}
	roce_pkt_init(&def, pkt->kind, pkt->opcode);
	for (size_t i = 0; i < ROCE_DIM(keys); i++) {
		const struct desc_key *k = &keys[i];
		uint64_t v;

		if (!(k->kinds & KB(pkt->kind)) || (k->need != 0 && !(mask & k->need)) ||
		    (k->ipv != 0 && k->ipv != pkt->ip_ver))
			continue;
		if (k->print != NULL) {
			len = k->print(out, size, len, pkt, &def, flags);
			continue;
		}
		v = load((const uint8_t *)pkt + k->off, k->size);
		if (!k->always && v == load((const uint8_t *)&def + k->off, k->size))
			continue;
		if (k->hex)
			PUT("%s%s=0x%llx", SEP, k->name, (unsigned long long)v);
		else
			PUT("%s%s=%llu", SEP, k->name, (unsigned long long)v);
	}
	return (int)len;
}
