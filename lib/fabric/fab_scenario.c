/*
 * Scenarios: INI files read with rte_cfgfile (docs/scenarios.md). rte_cfgfile keeps no line
 * numbers, so a first pass over the text records where each section and key is, and checks the
 * syntax; every error then names file:line.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cfgfile.h>

#include "fab_private.h"

#define FAB_MAX_FILE (16 << 20)	/* scenario and flow files: more is a mistake */
#define FAB_MAX_FLOWS 1000000		/* flows from patterns and traces */
#define FAB_MAX_HOSTS 2048		/* fat-tree k=16 has 1024 */
#define FAB_MAX_SAMPLES 1000000	/* samples of the time series: each holds a value per series */

/* ---- values ---- */

/* A number followed by one of @p units (name, multiplier); @p units[0] may be "" (no unit). */
struct unit {
	const char *name;
	double mult;
};

static int parse_scaled(const char *s, const struct unit *units, double max, double *out)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || !isfinite(v) || v < 0)
		return -EINVAL;
	while (*end == ' ')
		end++;
	for (const struct unit *u = units; u->name != NULL; u++) {
		if (strcasecmp(end, u->name) == 0) {
			v *= u->mult;
			if (v > max)
				return -EINVAL;
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

int fab_parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1024.0 }, { "KB", 1024.0 }, { "KiB", 1024.0 },
		{ "M", 1048576.0 }, { "MB", 1048576.0 }, { "MiB", 1048576.0 },
		{ "G", 1073741824.0 }, { "GB", 1073741824.0 }, { "GiB", 1073741824.0 },
		{ NULL, 0 },
	};
	double v;

	if (parse_scaled(s, units, 1e15, &v) != 0 || v != floor(v))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int fab_parse_rate(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "bps", 1 },
		{ "K", 1e3 }, { "Kbps", 1e3 }, { "M", 1e6 }, { "Mbps", 1e6 },
		{ "G", 1e9 }, { "Gbps", 1e9 }, { "T", 1e12 }, { "Tbps", 1e12 },
		{ NULL, 0 },
	};
	double v;

	if (parse_scaled(s, units, 1e13, &v) != 0 || v < 1)
		return -EINVAL;
	*out = (uint64_t)llround(v);
	return 0;
}

int fab_parse_time(const char *s, roce_time_t *out)
{
	static const struct unit units[] = {
		{ "ps", 1 }, { "ns", 1e3 }, { "us", 1e6 }, { "ms", 1e9 }, { "s", 1e12 },
		{ NULL, 0 },
	};
	double v;

	if (strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	if (parse_scaled(s, units, 1e18, &v) != 0)
		return -EINVAL;
	*out = (roce_time_t)llround(v);
	return 0;
}

/* A time as a scenario writes it: "2ms", "1.5us", "10ps", in the largest unit it fills. */
static const char *time_str(roce_time_t t, char *buf, size_t len)
{
	static const struct { const char *name; double ps; } units[] = {
		{ "s", 1e12 }, { "ms", 1e9 }, { "us", 1e6 }, { "ns", 1e3 }, { "ps", 1 },
	};
	size_t i = 0;

	while (i + 1 < ROCE_DIM(units) && (double)t < units[i].ps)
		i++;
	snprintf(buf, len, "%.4g%s", (double)t / units[i].ps, units[i].name);
	return buf;
}

int fab_parse_prob(const char *s, double *out)
{
	static const struct unit units[] = { { "", 1 }, { "%", 0.01 }, { NULL, 0 } };
	double v;

	if (parse_scaled(s, units, 1.0, &v) != 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int fab_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "on", "true", "1" };
	static const char *const no[] = { "no", "off", "false", "0" };

	for (size_t i = 0; i < ROCE_DIM(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- names ---- */

/* snprintf into a fixed field, truncating quietly (names are checked for length elsewhere). */
void fab_name(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

const char *roce_scenario_node_name(const struct roce_scenario *sc, int node)
{
	if (node >= 0 && node < sc->nhosts)
		return sc->host[node].name;
	if (node >= sc->nhosts && node < sc->nhosts + sc->nswitches)
		return sc->sw[node - sc->nhosts].name;
	return "?";
}

int fab_node_find(const struct roce_scenario *sc, const char *name)
{
	for (int i = 0; i < sc->nhosts + sc->nswitches; i++)
		if (strcmp(roce_scenario_node_name(sc, i), name) == 0)
			return i;
	return -1;
}

int fab_host_find(const struct roce_scenario *sc, const char *name)
{
	int n = fab_node_find(sc, name);

	return n < sc->nhosts ? n : -1;
}

int fab_link_find(const struct roce_scenario *sc, const char *name)
{
	for (int i = 0; i < sc->nlinks; i++)
		if (strcmp(sc->link[i].name, name) == 0)
			return i;
	return -1;
}

/* ---- the scenario object ---- */

struct roce_scenario *roce_scenario_create(void)
{
	struct roce_scenario *sc = calloc(1, sizeof(*sc));

	if (sc == NULL)
		return NULL;
	snprintf(sc->name, sizeof(sc->name), "scenario");
	sc->seed = 1;
	sc->duration = ROCE_SEC;
	sc->sample = 10 * ROCE_US;
	sc->mtu = ROCE_MTU_1024;
	sc->timeout = 14;
	sc->retry_cnt = 7;
	roce_nic_qos_defaults(&sc->qos);
	snprintf(sc->cc, sizeof(sc->cc), "none");
	sc->deadlock_check = true;
	return sc;
}

void roce_scenario_destroy(struct roce_scenario *sc)
{
	if (sc == NULL)
		return;
	for (int i = 0; i < sc->ncc_kv; i++)
		free(sc->cc_kv[i]);
	free(sc->host);
	free(sc->sw);
	free(sc->link);
	free(sc->flow);
	free(sc->event);
	free(sc->route);
	free(sc->coll);
	free(sc);
}

/* ---- reading ---- */

/* Where a section or key is in the text. */
struct loc {
	char section[CFG_NAME_LEN];
	char key[CFG_NAME_LEN];		/* "" for the section header */
	int line;			/* 0: from --set */
};

struct reader {
	struct roce_scenario *sc;
	struct rte_cfgfile *cfg;
	const char *file;
	struct loc *loc;
	int nloc;
	char *err;
	size_t errlen;
	struct fab_topo topo;
	char section[CFG_NAME_LEN];	/* being read */
	struct rte_cfgfile_entry *ent;	/* its entries */
	int nent;
};

static int find_line(const struct reader *r, const char *section, const char *key)
{
	for (int i = 0; i < r->nloc; i++)
		if (strcmp(r->loc[i].section, section) == 0 && strcmp(r->loc[i].key, key) == 0)
			return r->loc[i].line;
	return -1;
}

static int fail_at(struct reader *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line: "file:line: [section] key: message" (line of the key, else of the section). */
static int fail_at(struct reader *r, const char *key, const char *fmt, ...)
{
	int line = key != NULL ? find_line(r, r->section, key) : -1;
	int sline = find_line(r, r->section, "");
	size_t n;
	va_list ap;

	if (line < 0)
		line = sline;
	/*
	 * A named section ([flow.NAME], [host.NAME], ...) only --set made: most likely a misspelt
	 * name. [switch] or [priority.3] made so is just a setting the file left at its default.
	 */
	if (line == 0 && sline == 0 && strchr(r->section, '.') != NULL &&
	    strncmp(r->section, "priority.", 9) != 0)
		n = (size_t)snprintf(r->err, r->errlen, "--set %s%s%s: %s has no [%s], so it is a "
				     "new section: ", r->section, key ? "." : "", key ? key : "",
				     r->file, r->section);
	else if (line == 0)
		n = (size_t)snprintf(r->err, r->errlen, "--set %s%s%s: ", r->section, key ? "." : "",
				     key ? key : "");
	else if (line > 0)
		n = (size_t)snprintf(r->err, r->errlen, "%s:%d: [%s]%s%s: ", r->file, line,
				     r->section, key ? " " : "", key ? key : "");
	else
		n = (size_t)snprintf(r->err, r->errlen, "%s: [%s]%s%s: ", r->file, r->section,
				     key ? " " : "", key ? key : "");
	if (n < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int add_loc(struct reader *r, const char *section, const char *key, int line)
{
	struct loc *l = fab_grow(r->loc, &r->nloc, sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	r->loc = l;
	l += r->nloc - 1;
	snprintf(l->section, sizeof(l->section), "%s", section);
	snprintf(l->key, sizeof(l->key), "%s", key);
	l->line = line;
	return 0;
}

/* The first pass: syntax, duplicates, and where everything is. */
static int scan(struct reader *r, const char *text)
{
	char section[CFG_NAME_LEN] = "";
	int lineno = 0;

	while (*text != '\0') {
		const char *nl = strchr(text, '\n');
		size_t len = nl != NULL ? (size_t)(nl - text) : strlen(text);
		char buf[512], *s, *eq;

		lineno++;
		if (len >= sizeof(buf)) {
			snprintf(r->err, r->errlen, "%s:%d: line longer than %zu characters",
				 r->file, lineno, sizeof(buf) - 1);
			return -EINVAL;
		}
		memcpy(buf, text, len);
		buf[len] = '\0';
		text += len + (nl != NULL);
		s = strchr(buf, ';');
		if (s != NULL)
			*s = '\0';
		s = trim(buf);
		if (*s == '\0' || *s == '#')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');

			if (end == NULL || end[1] != '\0' || end == s + 1) {
				snprintf(r->err, r->errlen, "%s:%d: expected '[section]', got '%s'",
					 r->file, lineno, s);
				return -EINVAL;
			}
			*end = '\0';
			snprintf(section, sizeof(section), "%s", trim(s + 1));
			if (find_line(r, section, "") >= 0) {
				snprintf(r->err, r->errlen, "%s:%d: section [%s] appears twice "
					 "(first at line %d)", r->file, lineno, section,
					 find_line(r, section, ""));
				return -EINVAL;
			}
			if (add_loc(r, section, "", lineno) != 0)
				return -ENOMEM;
			continue;
		}
		eq = strchr(s, '=');
		if (eq == NULL) {
			snprintf(r->err, r->errlen, "%s:%d: expected 'key = value', got '%s'",
				 r->file, lineno, s);
			return -EINVAL;
		}
		if (section[0] == '\0') {
			snprintf(r->err, r->errlen, "%s:%d: '%s' is outside any [section]",
				 r->file, lineno, s);
			return -EINVAL;
		}
		*eq = '\0';
		s = trim(s);
		if (*s == '\0' || strlen(s) >= CFG_NAME_LEN || strlen(trim(eq + 1)) >= CFG_VALUE_LEN) {
			snprintf(r->err, r->errlen, "%s:%d: empty or overlong key or value",
				 r->file, lineno);
			return -EINVAL;
		}
		if (*trim(eq + 1) == '\0') {
			snprintf(r->err, r->errlen, "%s:%d: [%s] %s has no value (a key left out "
				 "keeps its default)", r->file, lineno, section, s);
			return -EINVAL;
		}
		if (find_line(r, section, s) >= 0) {
			snprintf(r->err, r->errlen, "%s:%d: [%s] %s is set twice (first at line %d)",
				 r->file, lineno, section, s, find_line(r, section, s));
			return -EINVAL;
		}
		if (add_loc(r, section, s, lineno) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* rte_cfgfile reads files only: hand it the text through a memory file. */
static struct rte_cfgfile *cfg_from_text(const char *text)
{
	struct rte_cfgfile_parameters params = { .comment_character = ';' };
	struct rte_cfgfile *cfg;
	char path[64];
	int fd = memfd_create("rocelab-scenario", 0);
	size_t len = strlen(text), off = 0;

	if (fd < 0)
		return NULL;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n <= 0) {
			close(fd);
			return NULL;
		}
		off += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	cfg = rte_cfgfile_load_with_params(path, 0, &params);
	close(fd);
	return cfg;
}

/* Apply "section.key=value" overrides (the section may itself contain dots: split at the last). */
static int apply_sets(struct reader *r, const char *const *set, int nset)
{
	for (int i = 0; i < nset; i++) {
		char sec[CFG_NAME_LEN], *key, *val, buf[CFG_NAME_LEN + CFG_VALUE_LEN];

		snprintf(buf, sizeof(buf), "%s", set[i]);
		val = strchr(buf, '=');
		if (val == NULL) {
			snprintf(r->err, r->errlen, "--set '%s': expected section.key=value", set[i]);
			return -EINVAL;
		}
		*val++ = '\0';
		for (int j = 0; j < i; j++) {
			size_t len = strlen(buf);

			/* as in a file, a key set twice is refused: which one was meant? */
			if (strncmp(set[j], buf, len) == 0 && set[j][len] == '=') {
				snprintf(r->err, r->errlen, "--set %s: set twice ('%s', then '%s')", buf,
					 set[j] + len + 1, val);
				return -EINVAL;
			}
		}
		key = strrchr(buf, '.');
		/* keys with a dot of their own: [nic] cc.rpg_ai_rate, [switch.X] route.HOST */
		if (key != NULL && strncmp(buf, "nic.cc.", 7) == 0)
			key = buf + 3;
		else if (strstr(buf, ".route.") != NULL)
			key = strstr(buf, ".route.");
		if (key == NULL || key == buf || key[1] == '\0') {
			snprintf(r->err, r->errlen, "--set '%s': expected section.key=value", set[i]);
			return -EINVAL;
		}
		*key++ = '\0';
		fab_name(sec, sizeof(sec), "%s", buf);
		if (!rte_cfgfile_has_section(r->cfg, sec)) {
			if (rte_cfgfile_add_section(r->cfg, sec) != 0)
				return -ENOMEM;
			if (add_loc(r, sec, "", 0) != 0)
				return -ENOMEM;
		}
		if (rte_cfgfile_has_entry(r->cfg, sec, key)) {
			if (rte_cfgfile_set_entry(r->cfg, sec, key, val) != 0)
				return -EINVAL;
		} else {
			if (rte_cfgfile_add_entry(r->cfg, sec, key, val) != 0)
				return -ENOMEM;
		}
		for (int j = 0; j < r->nloc; j++)
			if (strcmp(r->loc[j].section, sec) == 0 && strcmp(r->loc[j].key, key) == 0)
				r->loc[j].line = 0;
		if (find_line(r, sec, key) < 0 && add_loc(r, sec, key, 0) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Load the entries of @p section into r->ent (replacing the previous section's). */
static int enter(struct reader *r, const char *section)
{
	int n = rte_cfgfile_section_num_entries(r->cfg, section);

	snprintf(r->section, sizeof(r->section), "%s", section);
	free(r->ent);
	r->ent = NULL;
	r->nent = 0;
	if (n <= 0)
		return 0;
	r->ent = calloc((size_t)n, sizeof(*r->ent));
	if (r->ent == NULL)
		return -ENOMEM;
	r->nent = rte_cfgfile_section_entries(r->cfg, section, r->ent, n);
	return r->nent < 0 ? -EINVAL : 0;
}

/* The value of @p key in the current section, or NULL. */
static const char *get(const struct reader *r, const char *key)
{
	for (int i = 0; i < r->nent; i++)
		if (strcmp(r->ent[i].name, key) == 0)
			return r->ent[i].value;
	return NULL;
}

/* Every key of the current section must be one of @p known (a NULL-terminated list). */
static int check_keys(struct reader *r, const char *const *known, const char *prefix_ok)
{
	for (int i = 0; i < r->nent; i++) {
		bool ok = prefix_ok != NULL && strncmp(r->ent[i].name, prefix_ok, strlen(prefix_ok)) == 0;
		char list[256];
		size_t n = 0;

		for (const char *const *k = known; *k != NULL && !ok; k++)
			ok = strcmp(*k, r->ent[i].name) == 0;
		if (ok)
			continue;
		list[0] = '\0';
		for (const char *const *k = known; *k != NULL && n < sizeof(list); k++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", *k);
		return fail_at(r, r->ent[i].name, "unknown key (expected %s%s%s%s)", list,
			       prefix_ok ? ", " : "", prefix_ok ? prefix_ok : "", prefix_ok ? "*" : "");
	}
	return 0;
}

/* Typed getters: absent keys leave *out alone and return 0. */
static int get_size(struct reader *r, const char *key, uint64_t *out)
{
	const char *v = get(r, key);

	if (v != NULL && fab_parse_size(v, out) != 0)
		return fail_at(r, key, "expected a size in bytes (1500, 64K, 2MB), got '%s'", v);
	return 0;
}

static int get_rate(struct reader *r, const char *key, uint64_t *out)
{
	const char *v = get(r, key);

	if (v != NULL && fab_parse_rate(v, out) != 0)
		return fail_at(r, key, "expected a rate (100G, 40Gbps, 5Mbps), got '%s'", v);
	return 0;
}

static int get_time(struct reader *r, const char *key, roce_time_t *out)
{
	const char *v = get(r, key);

	if (v != NULL && fab_parse_time(v, out) != 0)
		return fail_at(r, key, "expected a time with a unit (500ns, 1us, 2ms), got '%s'", v);
	return 0;
}

static int get_prob(struct reader *r, const char *key, double *out)
{
	const char *v = get(r, key);

	if (v != NULL && fab_parse_prob(v, out) != 0)
		return fail_at(r, key, "expected a probability from 0 to 1 (1e-4, 0.2, 5%%), got '%s'", v);
	return 0;
}

static int get_bool(struct reader *r, const char *key, bool *out)
{
	const char *v = get(r, key);

	if (v != NULL && fab_parse_bool(v, out) != 0)
		return fail_at(r, key, "expected yes or no, got '%s'", v);
	return 0;
}

static int get_uint(struct reader *r, const char *key, uint64_t max, uint64_t *out)
{
	const char *v = get(r, key);

	if (v != NULL && roce_parse_uint(v, max, out) != 0)
		return fail_at(r, key, "expected a whole number from 0 to %" PRIu64 ", got '%s'", max, v);
	return 0;
}

static int get_u32(struct reader *r, const char *key, uint32_t max, uint32_t *out)
{
	uint64_t v = *out;
	int rc = get_uint(r, key, max, &v);

	*out = (uint32_t)v;
	return rc;
}

static int get_mtu(struct reader *r, const char *key, enum roce_mtu *out)
{
	static const uint32_t sizes[] = { 256, 512, 1024, 2048, 4096 };
	const char *v = get(r, key);
	uint64_t n;

	if (v == NULL)
		return 0;
	if (roce_parse_uint(v, 4096, &n) == 0)
		for (size_t i = 0; i < ROCE_DIM(sizes); i++)
			if (n == sizes[i]) {
				*out = (enum roce_mtu)(i + 1);
				return 0;
			}
	return fail_at(r, key, "expected a path MTU of 256, 512, 1024, 2048 or 4096, got '%s'", v);
}

static int get_node(struct reader *r, const char *key, bool host_only, int *out)
{
	const char *v = get(r, key);
	int n;

	if (v == NULL)
		return fail_at(r, NULL, "'%s' is missing", key);
	n = host_only ? fab_host_find(r->sc, v) : fab_node_find(r->sc, v);
	if (n < 0)
		return fail_at(r, key, "no %s called '%s'", host_only ? "host" : "host or switch", v);
	*out = n;
	return 0;
}

/* "h1..h8", "h1,h3,h5", "all" (every host): a list of hosts. */
static int get_hosts(struct reader *r, const char *key, int **out, int *n)
{
	const char *v = get(r, key);
	char buf[CFG_VALUE_LEN], *tok, *save = NULL;

	*out = NULL;
	*n = 0;
	if (v == NULL)
		return fail_at(r, NULL, "'%s' is missing", key);
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		char *dots = strstr(tok, "..");
		int lo, hi;

		if (strcmp(tok, "all") == 0) {
			lo = 0;
			hi = r->sc->nhosts - 1;
		} else if (dots != NULL) {
			*dots = '\0';
			lo = fab_host_find(r->sc, tok);
			hi = fab_host_find(r->sc, dots + 2);
			if (lo < 0 || hi < 0 || hi < lo) {
				free(*out);
				*out = NULL;
				return fail_at(r, key, "bad host range '%s..%s'", tok, dots + 2);
			}
		} else {
			lo = hi = fab_host_find(r->sc, tok);
			if (lo < 0) {
				free(*out);
				*out = NULL;
				return fail_at(r, key, "no host called '%s'", tok);
			}
		}
		for (int h = lo; h <= hi; h++) {
			int *p;

			for (int k = 0; k < *n; k++)
				if ((*out)[k] == h) {
					free(*out);
					*out = NULL;
					return fail_at(r, key, "host '%s' is listed twice",
						       r->sc->host[h].name);
				}
			p = fab_grow(*out, n, sizeof(int));
			if (p == NULL) {
				free(*out);
				*out = NULL;
				return -ENOMEM;
			}
			*out = p;
			p[*n - 1] = h;
		}
	}
	if (*n == 0)
		return fail_at(r, key, "no hosts given");
	return 0;
}

/* ---- sections ---- */

static int read_scenario(struct reader *r)
{
	static const char *const keys[] = { "name", "seed", "duration", "sample", "mtu",
					    "timeout", "retry_cnt", "deadlock_check", "payload",
					    NULL };
	struct roce_scenario *sc = r->sc;
	const char *v;
	uint64_t t = sc->timeout, rc = sc->retry_cnt;

	if (enter(r, "scenario") != 0 || check_keys(r, keys, NULL) != 0)
		return -EINVAL;
	v = get(r, "name");
	if (v != NULL)
		fab_name(sc->name, sizeof(sc->name), "%s", v);
	if (get_uint(r, "seed", UINT64_MAX, &sc->seed) || get_time(r, "duration", &sc->duration) ||
	    get_time(r, "sample", &sc->sample) || get_mtu(r, "mtu", &sc->mtu) ||
	    get_uint(r, "timeout", 31, &t) || get_uint(r, "retry_cnt", 7, &rc) ||
	    get_bool(r, "deadlock_check", &sc->deadlock_check))
		return -EINVAL;
	sc->timeout = (uint8_t)t;
	sc->retry_cnt = (uint8_t)rc;
	v = get(r, "payload");
	if (v != NULL) {
		if (strcmp(v, "place") != 0 && strcmp(v, "discard") != 0)
			return fail_at(r, "payload", "expected place or discard, got '%s'", v);
		sc->discard = strcmp(v, "discard") == 0;
	}
	if (sc->duration == 0)
		return fail_at(r, "duration", "must be more than 0");
	if (sc->sample != 0 && sc->duration / sc->sample > FAB_MAX_SAMPLES) {
		char a[32], b[32], c[32];

		return fail_at(r, "sample", "%s over a %s run is %.3g samples, at most %d: sample "
			       "every %s or more (0: none)", time_str(sc->sample, a, sizeof(a)),
			       time_str(sc->duration, b, sizeof(b)),
			       (double)(sc->duration / sc->sample), FAB_MAX_SAMPLES,
			       time_str(sc->duration / FAB_MAX_SAMPLES + 1, c, sizeof(c)));
	}
	return 0;
}

static int read_topology(struct reader *r)
{
	static const char *const keys[] = { "kind", "hosts", "switches", "leaves", "spines",
					    "hosts_per_leaf", "k", "rate", "delay", "mtu",
					    "fabric_rate", "fabric_delay", "loss", NULL };
	struct fab_topo *t = &r->topo;
	const char *v;

	if (enter(r, "topology") != 0 || check_keys(r, keys, NULL) != 0)
		return -EINVAL;
	v = get(r, "kind");
	if (v != NULL)
		fab_name(t->kind, sizeof(t->kind), "%s", v);
	if (get_u32(r, "hosts", 4096, &t->hosts) || get_u32(r, "switches", 256, &t->switches) ||
	    get_u32(r, "leaves", 256, &t->leaves) || get_u32(r, "spines", 64, &t->spines) ||
	    get_u32(r, "hosts_per_leaf", 128, &t->hosts_per_leaf) || get_u32(r, "k", 64, &t->k) ||
	    get_rate(r, "rate", &t->host_link.rate_bps) || get_time(r, "delay", &t->host_link.delay) ||
	    get_u32(r, "mtu", 65535, &t->host_link.mtu) || get_prob(r, "loss", &t->loss))
		return -EINVAL;
	t->fabric_link = t->host_link;
	if (get_rate(r, "fabric_rate", &t->fabric_link.rate_bps) ||
	    get_time(r, "fabric_delay", &t->fabric_link.delay))
		return -EINVAL;
	if (strcmp(t->kind, "custom") != 0 && strcmp(t->kind, "leafspine") != 0 &&
	    strcmp(t->kind, "fattree") != 0 && t->hosts < 2)
		return fail_at(r, "hosts", "a %s needs at least 2 hosts", t->kind);
	return 0;
}

/* Sections named "<prefix>.<name>", in file order. */
static int sections_with(struct reader *r, const char *prefix, char (**names)[CFG_NAME_LEN])
{
	int n = rte_cfgfile_num_sections(r->cfg, prefix, strlen(prefix));
	int all = rte_cfgfile_num_sections(r->cfg, NULL, 0), k = 0;
	char **ptr;
	char (*buf)[CFG_NAME_LEN];

	*names = NULL;
	if (n <= 0)
		return 0;
	buf = calloc((size_t)all, CFG_NAME_LEN);
	ptr = calloc((size_t)all, sizeof(*ptr));
	if (buf == NULL || ptr == NULL) {
		free(buf);
		free(ptr);
		return -ENOMEM;
	}
	for (int i = 0; i < all; i++)
		ptr[i] = buf[i];
	all = rte_cfgfile_sections(r->cfg, ptr, all);
	for (int i = 0; i < all; i++)
		if (strncmp(buf[i], prefix, strlen(prefix)) == 0)
			memmove(buf[k++], buf[i], CFG_NAME_LEN);
	free(ptr);
	*names = buf;
	return k;
}

/* The "pcie" and "rx_buffer" keys of [nic] or [host.NAME]: a NIC's host interface. */
static int get_host_if(struct reader *r, uint64_t *bps, uint64_t *buf)
{
	if (get_rate(r, "pcie", bps) || get_size(r, "rx_buffer", buf))
		return -EINVAL;
	if (*buf > UINT32_MAX)
		return fail_at(r, "rx_buffer", "at most 4 GiB");
	if (*buf != 0 && *buf < 9216)
		return fail_at(r, "rx_buffer", "too small for a jumbo frame (9216 bytes at least)");
	return 0;
}

static int read_custom_nodes(struct reader *r)
{
	char (*names)[CFG_NAME_LEN];
	int n;

	n = sections_with(r, "host.", &names);
	for (int i = 0; i < n; i++) {
		static const char *const keys[] = { "ip", "pcie", "rx_buffer", NULL };
		const char *name = names[i] + 5, *v;
		int h;

		if (strcmp(r->topo.kind, "custom") != 0)
			continue;		/* a generated host's NIC: read_host_overrides() */
		if (enter(r, names[i]) != 0 || check_keys(r, keys, NULL) != 0)
			goto err;
		if (*name == '\0' || fab_node_find(r->sc, name) >= 0) {
			fail_at(r, NULL, "host name empty or used twice");
			goto err;
		}
		h = fab_add_host(r->sc, name);
		if (h < 0 || get_host_if(r, &r->sc->host[h].pcie_bps, &r->sc->host[h].rx_buffer))
			goto err;
		v = get(r, "ip");
		if (v != NULL) {
			struct roce_sc_host *hp = &r->sc->host[h];

			if (inet_pton(AF_INET, v, hp->ip.b) == 1) {
				hp->ip_ver = 4;
			} else if (inet_pton(AF_INET6, v, hp->ip.b) == 1) {
				hp->ip_ver = 6;
			} else {
				fail_at(r, "ip", "expected an IPv4 or IPv6 address, got '%s'", v);
				goto err;
			}
		}
	}
	free(names);
	n = sections_with(r, "switch.", &names);
	for (int i = 0; i < n; i++) {
		if (strcmp(r->topo.kind, "custom") != 0)
			continue;		/* overrides of generated switches: read later */
		snprintf(r->section, sizeof(r->section), "%s", names[i]);
		if (names[i][7] == '\0' || fab_node_find(r->sc, names[i] + 7) >= 0) {
			fail_at(r, NULL, "switch name empty or used twice");
			goto err;
		}
		if (fab_add_switch(r->sc, names[i] + 7) < 0)
			goto err;
	}
	free(names);
	return 0;
err:
	free(names);
	return -EINVAL;
}

static int read_links(struct reader *r)
{
	static const char *const keys[] = { "a", "b", "rate", "delay", "mtu", "loss", "corrupt",
					    "tap", NULL };
	char (*names)[CFG_NAME_LEN];
	int n = sections_with(r, "link.", &names);

	for (int i = 0; i < n; i++) {
		const char *name = names[i] + 5;
		struct roce_sc_link *l;
		int li;

		if (enter(r, names[i]) != 0 || check_keys(r, keys, NULL) != 0)
			goto err;
		if (strcmp(r->topo.kind, "custom") == 0) {
			int a = -1, b = -1;	/* set by get_node(); -O3 cannot see it through the error path */

			if (get_node(r, "a", false, &a) || get_node(r, "b", false, &b))
				goto err;
			if (a == b) {
				fail_at(r, "b", "a link needs two different ends");
				goto err;
			}
			li = fab_add_link(r->sc, a, b, &r->topo.host_link);
			if (li < 0)
				goto err;
			r->sc->link[li].impair[0].loss = r->topo.loss;
			snprintf(r->sc->link[li].name, sizeof(r->sc->link[li].name), "%s", name);
		} else {
			li = fab_link_find(r->sc, name);
			if (li < 0) {
				fail_at(r, NULL, "no link called '%s' (generated links are named "
					"like 'h0-sw0')", name);
				goto err;
			}
			if (get(r, "a") || get(r, "b")) {
				fail_at(r, get(r, "a") ? "a" : "b", "ends of generated links are fixed");
				goto err;
			}
		}
		l = &r->sc->link[li];
		if (get_rate(r, "rate", &l->conf.rate_bps) || get_time(r, "delay", &l->conf.delay) ||
		    get_u32(r, "mtu", 65535, &l->conf.mtu) || get_prob(r, "loss", &l->impair[0].loss) ||
		    get_prob(r, "corrupt", &l->impair[0].corrupt) || get_bool(r, "tap", &l->tap))
			goto err;
		l->impair[1].loss = l->impair[0].loss;
		l->impair[1].corrupt = l->impair[0].corrupt;
	}
	free(names);
	return 0;
err:
	free(names);
	return -EINVAL;
}

static const char *const switch_keys[] = {
	"buffer", "cell", "reserved", "pfc", "xoff", "alpha", "xon_delta", "headroom", "quanta",
	"watchdog", "trust_pcp", "ecmp_seed", NULL,
};

/* Switch parameters from the current section into @p c. */
static int read_switch_params(struct reader *r, struct roce_switch_conf *c)
{
	const char *v = get(r, "pfc");
	uint64_t q = c->pfc_quanta, seed = c->ecmp_seed, cell = c->cell;

	if (v != NULL) {
		if (strcmp(v, "static") == 0) {
			c->pfc_mode = ROCE_PFC_STATIC;
		} else if (strcmp(v, "dynamic") == 0) {
			c->pfc_mode = ROCE_PFC_DYNAMIC;
		} else if (strcmp(v, "off") == 0) {
			for (int p = 0; p < ROCE_NPRIO; p++)
				c->prio[p].lossless = false;
		} else {
			return fail_at(r, "pfc", "expected static, dynamic or off, got '%s'", v);
		}
	}
	v = get(r, "headroom");
	if (v != NULL && strcmp(v, "auto") == 0)
		c->headroom = 0;
	else if (get_size(r, "headroom", &c->headroom))
		return -EINVAL;
	if (get_size(r, "buffer", &c->buffer) || get_size(r, "reserved", &c->reserved) ||
	    get_size(r, "xoff", &c->xoff) || get_size(r, "xon_delta", &c->xon_delta) ||
	    get_uint(r, "quanta", 65535, &q) || get_uint(r, "cell", 65536, &cell) ||
	    get_time(r, "watchdog", &c->watchdog) ||
	    get_bool(r, "trust_pcp", &c->trust_pcp) || get_uint(r, "ecmp_seed", UINT32_MAX, &seed))
		return -EINVAL;
	v = get(r, "alpha");
	if (v != NULL) {
		char *end;

		c->alpha = strtod(v, &end);
		if (*end != '\0' || !(c->alpha > 0) || c->alpha > 64)
			return fail_at(r, "alpha", "expected a number above 0 (1/8 is 0.125), got '%s'", v);
	}
	c->pfc_quanta = (uint16_t)q;
	c->ecmp_seed = (uint32_t)seed;
	c->cell = (uint32_t)cell;
	return 0;
}

static int read_priorities(struct reader *r, struct roce_switch_conf *c)
{
	static const char *const keys[] = { "lossless", "strict", "weight", "ecn", "kmin", "kmax",
					    "pmax", NULL };

	for (int p = 0; p < ROCE_NPRIO; p++) {
		struct roce_prio_conf *pc = &c->prio[p];
		char sec[16];

		snprintf(sec, sizeof(sec), "priority.%d", p);
		if (!rte_cfgfile_has_section(r->cfg, sec))
			continue;
		if (enter(r, sec) != 0 || check_keys(r, keys, NULL) != 0)
			return -EINVAL;
		if (get_bool(r, "lossless", &pc->lossless) || get_bool(r, "strict", &pc->strict) ||
		    get_u32(r, "weight", 1000, &pc->weight) || get_bool(r, "ecn", &pc->ecn) ||
		    get_size(r, "kmin", &pc->kmin) || get_size(r, "kmax", &pc->kmax) ||
		    get_prob(r, "pmax", &pc->pmax))
			return -EINVAL;
		if (pc->kmax < pc->kmin)
			return fail_at(r, "kmax", "is below kmin");
	}
	return 0;
}

/* [host.NAME] of a generated topology: only its NIC's host interface can be set. */
static int read_host_overrides(struct reader *r)
{
	static const char *const keys[] = { "pcie", "rx_buffer", NULL };
	char (*names)[CFG_NAME_LEN];
	int n, rc = 0;

	if (strcmp(r->topo.kind, "custom") == 0)
		return 0;
	n = sections_with(r, "host.", &names);
	if (n < 0)
		return n;
	for (int i = 0; i < n && rc == 0; i++) {
		int h = fab_host_find(r->sc, names[i] + 5);

		rc = enter(r, names[i]);
		if (rc == 0 && h < 0)
			rc = fail_at(r, NULL, "no host called '%s' in this %s topology (hosts are named "
				     "h0, h1, ...)", names[i] + 5, r->topo.kind);
		if (rc == 0)
			rc = check_keys(r, keys, NULL);
		if (rc == 0)
			rc = get_host_if(r, &r->sc->host[h].pcie_bps, &r->sc->host[h].rx_buffer);
	}
	free(names);
	return rc;
}

static int read_switches(struct reader *r)
{
	struct roce_switch_conf base;
	char (*names)[CFG_NAME_LEN];
	int n;

	roce_switch_defaults(&base);
	if (enter(r, "switch") != 0 || check_keys(r, switch_keys, NULL) != 0 ||
	    read_switch_params(r, &base) != 0)
		return -EINVAL;
	if (read_priorities(r, &base) != 0)
		return -EINVAL;
	for (int i = 0; i < r->sc->nswitches; i++) {
		struct roce_sc_switch *s = &r->sc->sw[i];
		uint8_t mac[6];

		memcpy(mac, s->conf.mac, 6);
		s->conf = base;
		s->conf.name = s->name;
		memcpy(s->conf.mac, mac, 6);
	}
	/* per-switch overrides and static routes */
	n = sections_with(r, "switch.", &names);
	for (int i = 0; i < n; i++) {
		int node = fab_node_find(r->sc, names[i] + 7);

		if (enter(r, names[i]) != 0 || check_keys(r, switch_keys, "route.") != 0)
			goto err;
		if (node < r->sc->nhosts) {
			fail_at(r, NULL, "no switch called '%s'", names[i] + 7);
			goto err;
		}
		if (read_switch_params(r, &r->sc->sw[node - r->sc->nhosts].conf) != 0)
			goto err;
		for (int e = 0; e < r->nent; e++) {
			struct roce_sc_route *rt;
			int dst, via;

			if (strncmp(r->ent[e].name, "route.", 6) != 0)
				continue;
			dst = fab_host_find(r->sc, r->ent[e].name + 6);
			via = fab_node_find(r->sc, r->ent[e].value);
			if (dst < 0 || via < 0) {
				fail_at(r, r->ent[e].name, "route.HOST = NEXT-HOP needs a host and a "
					"node, got '%s' -> '%s'", r->ent[e].name + 6, r->ent[e].value);
				goto err;
			}
			rt = fab_grow(r->sc->route, &r->sc->nroutes, sizeof(*rt));
			if (rt == NULL)
				goto err;
			r->sc->route = rt;
			rt[r->sc->nroutes - 1] = (struct roce_sc_route){ node, dst, via };
		}
	}
	free(names);
	return 0;
err:
	free(names);
	return -EINVAL;
}

static int read_nic(struct reader *r)
{
	static const char *const keys[] = { "cc", "ecn", "pfc", "cnp_interval", "cnp_dscp", "pcie",
					    "rx_buffer", NULL };
	struct roce_scenario *sc = r->sc;
	const char *v;
	uint64_t dscp = sc->qos.cnp_dscp;
	bool pfc = sc->qos.pfc_enable != 0;
	char why[256];

	if (enter(r, "nic") != 0 || check_keys(r, keys, "cc.") != 0)
		return -EINVAL;
	v = get(r, "cc");
	if (v != NULL) {
		if (roce_cc_check(v, NULL, 0, why, sizeof(why)) != 0)
			return fail_at(r, "cc", "%s", why);
		fab_name(sc->cc, sizeof(sc->cc), "%s", v);
		/* DCQCN needs ECN: the reaction point only hears of congestion through CNPs */
		sc->qos.ecn = strcmp(v, "none") != 0;
	}
	if (get_bool(r, "ecn", &sc->qos.ecn) || get_time(r, "cnp_interval", &sc->qos.cnp_interval) ||
	    get_uint(r, "cnp_dscp", 63, &dscp) || get_bool(r, "pfc", &pfc) ||
	    get_host_if(r, &sc->pcie_bps, &sc->rx_buffer))
		return -EINVAL;
	sc->qos.cnp_dscp = (uint8_t)dscp;
	sc->qos.pfc_enable = pfc ? 0xff : 0;
	for (int i = 0; i < r->nent; i++) {
		char kv[CFG_NAME_LEN + CFG_VALUE_LEN];

		if (strncmp(r->ent[i].name, "cc.", 3) != 0)
			continue;
		if (sc->ncc_kv == ROCE_SC_MAX_CC_KV)
			return fail_at(r, r->ent[i].name, "too many cc.* parameters");
		snprintf(kv, sizeof(kv), "%s=%s", r->ent[i].name + 3, r->ent[i].value);
		sc->cc_kv[sc->ncc_kv] = strdup(kv);
		if (sc->cc_kv[sc->ncc_kv] == NULL)
			return -ENOMEM;
		/* checked here, where the key's line (or --set) can be named */
		sc->ncc_kv++;	/* the scenario owns it now, refused or not */
		if (roce_cc_check(sc->cc, (const char *const *)&sc->cc_kv[sc->ncc_kv - 1], 1, why,
				  sizeof(why)) != 0)
			return fail_at(r, r->ent[i].name, "%s", why);
	}
	if (roce_cc_check(sc->cc, (const char *const *)sc->cc_kv, sc->ncc_kv, why,
			  sizeof(why)) != 0)
		return fail_at(r, NULL, "%s", why);
	return 0;
}

static const char *const flow_keys[] = { "src", "dst", "op", "size", "count", "duration", "qps",
					 "depth", "start", "after", "priority", "dscp", "mtu", NULL };

/* The per-message parameters shared by [flow.*] and [pattern.*]. */
static int read_flow_params(struct reader *r, struct roce_sc_flow *f)
{
	const char *v = get(r, "op");
	uint64_t prio = 8, dscp = f->dscp;

	if (v != NULL) {
		if (strcmp(v, "write") == 0)
			f->op = ROCE_FLOW_WRITE;
		else if (strcmp(v, "read") == 0)
			f->op = ROCE_FLOW_READ;
		else if (strcmp(v, "send") == 0)
			f->op = ROCE_FLOW_SEND;
		else
			return fail_at(r, "op", "expected write, read or send, got '%s'", v);
	}
	if (get_size(r, "size", &f->size) || get_uint(r, "count", UINT32_MAX, &f->count) ||
	    get_time(r, "duration", &f->duration) ||
	    get_u32(r, "qps", 64, &f->nqp) || get_u32(r, "depth", 1024, &f->depth) ||
	    get_time(r, "start", &f->start) || get_uint(r, "priority", 7, &prio) ||
	    get_uint(r, "dscp", 63, &dscp) || get_mtu(r, "mtu", &f->mtu))
		return -EINVAL;
	if (prio < 8)
		dscp = prio << 3 | 2;	/* priority 3 -> DSCP 26, as RoCE deployments use */
	f->dscp = (uint8_t)dscp;
	if (f->size == 0 || f->size > (1u << 30))
		return fail_at(r, "size", "must be from 1 byte to 1 GiB");
	if (f->nqp == 0 || f->depth == 0)
		return fail_at(r, f->nqp == 0 ? "qps" : "depth", "must be at least 1");
	return 0;
}

/* Append a flow; NULL with the error set: too many flows, or no memory. */
static struct roce_sc_flow *add_flow(struct reader *r, const struct roce_sc_flow *tmpl)
{
	struct roce_scenario *sc = r->sc;
	struct roce_sc_flow *f;

	if (sc->nflows >= FAB_MAX_FLOWS) {
		fail_at(r, NULL, "more than %d flows (patterns and traces included)", FAB_MAX_FLOWS);
		return NULL;
	}
	f = fab_grow(sc->flow, &sc->nflows, sizeof(*f));
	if (f == NULL)
		return NULL;
	sc->flow = f;
	f += sc->nflows - 1;
	*f = *tmpl;
	return f;
}

static const struct roce_sc_flow flow_defaults = {
	.op = ROCE_FLOW_WRITE, .size = 65536, .count = 1, .nqp = 1, .depth = 1, .after = -1,
	.dscp = 26,
};

static int read_flows(struct reader *r)
{
	char (*names)[CFG_NAME_LEN];
	int n = sections_with(r, "flow.", &names);

	for (int i = 0; i < n; i++) {
		struct roce_sc_flow f = flow_defaults;

		snprintf(f.name, sizeof(f.name), "%s", names[i] + 5);
		if (enter(r, names[i]) != 0 || check_keys(r, flow_keys, NULL) != 0 ||
		    get_node(r, "src", true, &f.src) || get_node(r, "dst", true, &f.dst) ||
		    read_flow_params(r, &f) != 0)
			goto err;
		if (f.src == f.dst) {
			fail_at(r, "dst", "a flow needs two different hosts");
			goto err;
		}
		if (add_flow(r, &f) == NULL)
			goto err;
	}
	/* "after" may name any flow: resolve once all are known */
	for (int i = 0; i < n; i++) {
		const char *v;

		if (enter(r, names[i]) != 0)
			goto err;
		v = get(r, "after");
		if (v == NULL)
			continue;
		for (int j = 0; j < r->sc->nflows; j++)
			if (strcmp(r->sc->flow[j].name, v) == 0)
				r->sc->flow[i].after = j;
		if (r->sc->flow[i].after < 0 || r->sc->flow[i].after == i) {
			fail_at(r, "after", "no other flow called '%s'", v);
			goto err;
		}
	}
	free(names);
	return 0;
err:
	free(names);
	return -EINVAL;
}

/* ns-3 HPCC flow files: a count, then "src dst priority dport size start_seconds" per line. */
static int read_trace(struct reader *r, const struct roce_sc_flow *tmpl, const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long want;
	char line[256];
	int lineno = 1, base = r->sc->nflows;
	struct stat st;

	if (f == NULL)
		return fail_at(r, "file", "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > FAB_MAX_FILE) {
		fclose(f);
		return fail_at(r, "file", "'%s' is not a regular file of at most %d MiB", path,
			       FAB_MAX_FILE >> 20);
	}
	if (fgets(line, sizeof(line), f) == NULL || sscanf(line, "%llu", &want) != 1) {
		fclose(f);
		return fail_at(r, "file", "%s:1: expected the number of flows", path);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		struct roce_sc_flow fl = *tmpl;
		unsigned int src, dst, pg, dport;
		unsigned long long size;
		double start;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (sscanf(line, "%u %u %u %u %llu %lf", &src, &dst, &pg, &dport, &size, &start) != 6 ||
		    src >= (unsigned int)r->sc->nhosts || dst >= (unsigned int)r->sc->nhosts ||
		    src == dst || pg > 7 || size == 0 || size > (1u << 30) || !(start >= 0) ||
		    start * (double)ROCE_SEC >= (double)r->sc->duration) {
			fclose(f);
			return fail_at(r, "file", "%s:%d: expected 'src dst priority dport size "
				       "start' with hosts below %d and start (s) within the run's %g s",
				       path, lineno, r->sc->nhosts,
				       (double)r->sc->duration / ROCE_SEC);
		}
		fab_name(fl.name, sizeof(fl.name), "%s.%d", tmpl->name, r->sc->nflows - base);
		fl.src = (int)src;
		fl.dst = (int)dst;
		fl.dscp = (uint8_t)(pg << 3 | 2);
		fl.size = size;
		fl.count = 1;
		fl.start = tmpl->start + (roce_time_t)llround(start * (double)ROCE_SEC);
		if (add_flow(r, &fl) == NULL) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	if ((unsigned long long)(r->sc->nflows - base) != want)
		return fail_at(r, "file", "%s: says %llu flows, has %d", path, want,
			       r->sc->nflows - base);
	return 0;
}

/* splitmix64: the permutation pattern's draws, from the scenario's seed */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * kind = permutation: every host of the list sends to one other and receives from one. With
 * shift = K, host i of the list sends to host i + K (mod N), the data-centre papers' shift
 * pattern; without, to where a random cyclic permutation of the list (Sattolo's algorithm,
 * drawn from the scenario's seed) sends it.
 */
static int permutation(struct reader *r, struct roce_sc_flow *f, const char *name,
		       const int *hosts, int nh)
{
	const char *v = get(r, "shift");
	uint64_t shift = 0, x = r->sc->seed;
	int *to;

	if (nh < 2)
		return fail_at(r, "hosts", "a permutation needs at least 2 hosts");
	if (v != NULL && (roce_parse_uint(v, (uint64_t)nh - 1, &shift) != 0 || shift == 0))
		return fail_at(r, "shift", "expected a whole number from 1 to %d (the hosts less "
			       "one), got '%s'", nh - 1, v);
	to = malloc(sizeof(*to) * (size_t)nh);
	if (to == NULL)
		return fail_at(r, NULL, "out of memory");
	for (int h = 0; h < nh; h++)
		to[h] = (int)((uint64_t)h + shift) % nh;
	if (shift == 0)
		for (int h = nh - 1; h > 0; h--) {
			int j = (int)(splitmix64(&x) % (uint64_t)h), t = to[h];

			to[h] = to[j];
			to[j] = t;
		}
	for (int h = 0; h < nh; h++) {
		f->src = hosts[h];
		f->dst = hosts[to[h]];
		fab_name(f->name, sizeof(f->name), "%.20s.%s", name, r->sc->host[hosts[h]].name);
		if (add_flow(r, f) == NULL) {
			free(to);
			return -EINVAL;
		}
	}
	free(to);
	return 0;
}

#define PATTERN_KINDS "incast, alltoall, permutation, allreduce or trace"

static bool pattern_kind_known(const char *kind)
{
	static const char *const kinds[] = { "incast", "alltoall", "permutation", "allreduce",
					     "trace" };

	for (size_t i = 0; i < ROCE_DIM(kinds); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

static int read_patterns(struct reader *r)
{
	static const char *const keys[] = { "kind", "hosts", "dst", "file", "op", "size", "count",
					    "duration", "qps", "depth", "start", "priority", "dscp",
					    "mtu", "shift", NULL };
	char (*names)[CFG_NAME_LEN];
	int n = sections_with(r, "pattern.", &names);
	int *hosts = NULL, nh = 0;

	for (int i = 0; i < n; i++) {
		struct roce_sc_flow f = flow_defaults;
		const char *kind;

		f.from_pattern = true;
		snprintf(f.name, sizeof(f.name), "%s", names[i] + 8);
		if (enter(r, names[i]) != 0 || check_keys(r, keys, NULL) != 0 ||
		    read_flow_params(r, &f) != 0)
			goto err;
		kind = get(r, "kind");
		if (kind == NULL) {
			fail_at(r, NULL, "'kind' is missing (" PATTERN_KINDS ")");
			goto err;
		}
		if (!pattern_kind_known(kind)) {
			fail_at(r, "kind", "expected " PATTERN_KINDS ", got '%s'", kind);
			goto err;
		}
		if (get(r, "shift") != NULL && strcmp(kind, "permutation") != 0) {
			fail_at(r, "shift", "only for kind = permutation");
			goto err;
		}
		if (strcmp(kind, "trace") == 0) {
			if (get(r, "file") == NULL) {
				fail_at(r, NULL, "'file' is missing");
				goto err;
			}
			{
				/* a relative path is relative to the scenario file */
				const char *file = get(r, "file"), *slash = strrchr(r->file, '/');
				char path[CFG_VALUE_LEN + 256];

				if (file[0] != '/' && slash != NULL)
					fab_name(path, sizeof(path), "%.*s/%s", (int)(slash - r->file),
						 r->file, file);
				else
					fab_name(path, sizeof(path), "%s", file);
				if (read_trace(r, &f, path) != 0)
					goto err;
			}
			continue;
		}
		if (get_hosts(r, "hosts", &hosts, &nh) != 0)
			goto err;
		if (strcmp(kind, "incast") == 0) {
			int dst = -1;	/* set by get_node(), as above */

			if (get_node(r, "dst", true, &dst) != 0)
				goto err;
			for (int h = 0; h < nh; h++) {
				if (hosts[h] == dst)
					continue;
				f.src = hosts[h];
				f.dst = dst;
				fab_name(f.name, sizeof(f.name), "%.20s.%s", names[i] + 8,
					 r->sc->host[hosts[h]].name);
				if (add_flow(r, &f) == NULL)
					goto err;
			}
		} else if (strcmp(kind, "alltoall") == 0) {
			for (int a = 0; a < nh; a++)
				for (int b = 0; b < nh; b++) {
					if (a == b)
						continue;
					f.src = hosts[a];
					f.dst = hosts[b];
					snprintf(f.name, sizeof(f.name), "%.14s.%d-%d", names[i] + 8,
						 hosts[a], hosts[b]);
					if (add_flow(r, &f) == NULL)
						goto err;
				}
		} else if (strcmp(kind, "permutation") == 0) {
			if (permutation(r, &f, names[i] + 8, hosts, nh) != 0)
				goto err;
		} else {
			/*
			 * kind = allreduce: a ring all-reduce of f.size bytes over N hosts,
			 * 2(N-1) steps; in each, host i sends a size/N chunk to i+1, and may
			 * send step s+1 only once it has received step s from i-1.
			 */
			uint64_t chunk = (f.size + (uint64_t)nh - 1) / (uint64_t)nh;
			int first = r->sc->nflows;
			struct roce_sc_collective *c;

			if (nh < 2) {
				fail_at(r, "hosts", "an all-reduce needs at least 2 hosts");
				goto err;
			}
			f.size = chunk;
			f.count = 1;
			for (int s = 0; s < 2 * (nh - 1); s++)
				for (int h = 0; h < nh; h++) {
					f.src = hosts[h];
					f.dst = hosts[(h + 1) % nh];
					f.after = s == 0 ? -1 : first + (s - 1) * nh + (h + nh - 1) % nh;
					if (s > 0)
						f.start = 0;
					fab_name(f.name, sizeof(f.name), "%.16s.s%d.%d", names[i] + 8, s, h);
					if (add_flow(r, &f) == NULL)
						goto err;
				}
			c = fab_grow(r->sc->coll, &r->sc->ncoll, sizeof(*c));
			if (c == NULL)
				goto err;
			r->sc->coll = c;
			c += r->sc->ncoll - 1;
			fab_name(c->name, sizeof(c->name), "%s", names[i] + 8);
			c->first_flow = first;
			c->nflows = r->sc->nflows - first;
			c->nhosts = nh;
			c->size = chunk * (uint64_t)nh;
		}
		free(hosts);
		hosts = NULL;
	}
	free(names);
	return 0;
err:
	free(hosts);
	free(names);
	return -EINVAL;
}

static int read_events(struct reader *r)
{
	static const char *const keys[] = { "at", "link", "rate", "state", "loss", NULL };
	char (*names)[CFG_NAME_LEN];
	int n = sections_with(r, "event.", &names);

	for (int i = 0; i < n; i++) {
		struct roce_sc_event *e = fab_grow(r->sc->event, &r->sc->nevents, sizeof(*e));
		const char *v;
		int what = 0;

		if (e == NULL)
			goto err;
		r->sc->event = e;
		e += r->sc->nevents - 1;
		snprintf(e->name, sizeof(e->name), "%s", names[i] + 6);
		if (enter(r, names[i]) != 0 || check_keys(r, keys, NULL) != 0)
			goto err;
		if (get(r, "at") == NULL) {
			fail_at(r, NULL, "'at' is missing");
			goto err;
		}
		if (get_time(r, "at", &e->at) != 0)
			goto err;
		if (e->at >= r->sc->duration) {
			char a[32], b[32];

			fail_at(r, "at", "%s is not within the run (scenario.duration = %s)",
				time_str(e->at, a, sizeof(a)), time_str(r->sc->duration, b, sizeof(b)));
			goto err;
		}
		v = get(r, "link");
		if (v == NULL || (e->link = fab_link_find(r->sc, v)) < 0) {
			fail_at(r, v ? "link" : NULL, "'link' must name a link (like 'sw0-h1'), got '%s'",
				v ? v : "nothing");
			goto err;
		}
		if (get(r, "rate") != NULL) {
			e->kind = ROCE_SC_EV_RATE;
			what++;
			if (get_rate(r, "rate", &e->rate_bps) != 0)
				goto err;
		}
		v = get(r, "state");
		if (v != NULL) {
			what++;
			if (strcmp(v, "down") == 0)
				e->kind = ROCE_SC_EV_DOWN;
			else if (strcmp(v, "up") == 0)
				e->kind = ROCE_SC_EV_UP;
			else {
				fail_at(r, "state", "expected up or down, got '%s'", v);
				goto err;
			}
		}
		if (get(r, "loss") != NULL) {
			e->kind = ROCE_SC_EV_LOSS;
			what++;
			if (get_prob(r, "loss", &e->loss) != 0)
				goto err;
		}
		if (what != 1) {
			fail_at(r, NULL, "an event sets exactly one of rate, state or loss");
			goto err;
		}
	}
	free(names);
	return 0;
err:
	free(names);
	return -EINVAL;
}

static int read_capture(struct reader *r)
{
	static const char *const keys[] = { "links", "snaplen", NULL };
	char buf[CFG_VALUE_LEN], *tok, *save = NULL;
	const char *v;

	if (enter(r, "capture") != 0 || check_keys(r, keys, NULL) != 0 ||
	    get_u32(r, "snaplen", 65535, &r->sc->snaplen) != 0)
		return -EINVAL;
	if (r->sc->snaplen != 0 && r->sc->snaplen < 14)
		return fail_at(r, "snaplen", "%u bytes do not hold an Ethernet header: give 14 to "
			       "65535 (128 keeps every RoCE header), or 0 for whole frames",
			       r->sc->snaplen);
	v = get(r, "links");
	if (v == NULL)	/* default: what the hosts send and receive, for fabrics small enough */
		v = r->sc->nhosts <= 16 ? "hosts" : "none";
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		int l;

		if (strcmp(tok, "all") == 0 || strcmp(tok, "none") == 0) {
			for (l = 0; l < r->sc->nlinks; l++)
				r->sc->link[l].tap = tok[0] == 'a';
			continue;
		}
		if (strcmp(tok, "hosts") == 0) {
			for (l = 0; l < r->sc->nlinks; l++)
				if (r->sc->link[l].a < r->sc->nhosts || r->sc->link[l].b < r->sc->nhosts)
					r->sc->link[l].tap = true;
			continue;
		}
		l = fab_link_find(r->sc, tok);
		if (l < 0)
			return fail_at(r, "links", "no link called '%s' (or all, hosts, none)", tok);
		r->sc->link[l].tap = true;
	}
	return 0;
}

static const char *const known_sections[] = {
	"scenario", "topology", "switch", "nic", "capture", NULL,
};
static const char *const known_prefixes[] = {
	"host.", "switch.", "link.", "priority.", "flow.", "pattern.", "event.", NULL,
};

static int check_sections(struct reader *r)
{
	for (int i = 0; i < r->nloc; i++) {
		const char *s = r->loc[i].section;
		bool ok = false;

		if (r->loc[i].key[0] != '\0')
			continue;
		for (const char *const *k = known_sections; *k != NULL && !ok; k++)
			ok = strcmp(*k, s) == 0;
		for (const char *const *k = known_prefixes; *k != NULL && !ok; k++)
			ok = strncmp(*k, s, strlen(*k)) == 0 && s[strlen(*k)] != '\0';
		if (strncmp(s, "priority.", 9) == 0)
			ok = s[9] >= '0' && s[9] <= '7' && s[10] == '\0';
		if (!ok) {
			snprintf(r->section, sizeof(r->section), "%s", s);
			return fail_at(r, NULL, "unknown section (expected scenario, topology, switch, "
				       "nic, capture, or host., switch., link., priority.0-7, flow., "
				       "pattern., event. followed by a name)");
		}
	}
	return 0;
}

/* Two hosts with one address would answer each other's ARP and take each other's frames. */
static int check_hosts(struct reader *r)
{
	const struct roce_scenario *sc = r->sc;

	for (int a = 0; a < sc->nhosts; a++)
		for (int b = a + 1; b < sc->nhosts; b++)
			if (sc->host[a].ip_ver == sc->host[b].ip_ver &&
			    memcmp(&sc->host[a].ip, &sc->host[b].ip, sizeof(sc->host[a].ip)) == 0) {
				char ip[64];

				roce_ip_ntop(&sc->host[a].ip, sc->host[a].ip_ver, ip, sizeof(ip));
				snprintf(r->section, sizeof(r->section), "host.%s", sc->host[b].name);
				return fail_at(r, NULL, "hosts '%s' and '%s' both have the address %s",
					       sc->host[a].name, sc->host[b].name, ip);
			}
	return 0;
}

/* Flow names compared, for the sort that finds two flows of one name. */
static int cmp_flow_name(const void *a, const void *b)
{
	return strcmp((*(const struct roce_sc_flow *const *)a)->name,
		      (*(const struct roce_sc_flow *const *)b)->name);
}

/*
 * Which flows lie on a cycle of 'after's: each flow waits for at most one, so a walk from each
 * flow not yet seen meets either a flow seen on an earlier walk (no new cycle), or one of its
 * own (a cycle from there on). Linear: an all-reduce over 500 hosts has 500 000 flows in
 * chains of 1 000. @return a flag a flow, to free; NULL (no memory)
 */
static uint8_t *flows_on_cycles(const struct roce_scenario *sc)
{
	enum { NEW, ON_WALK, DONE };
	uint8_t *state = calloc((size_t)sc->nflows + 1, 1), *cyclic = calloc((size_t)sc->nflows + 1, 1);

	if (state == NULL || cyclic == NULL) {
		free(state);
		free(cyclic);
		return NULL;
	}
	for (int i = 0; i < sc->nflows; i++) {
		int j;

		for (j = i; j >= 0 && state[j] == NEW; j = sc->flow[j].after)
			state[j] = ON_WALK;
		if (j >= 0 && state[j] == ON_WALK)	/* this walk came back: j's cycle */
			for (int k = j; !cyclic[k]; k = sc->flow[k].after)
				cyclic[k] = 1;
		for (j = i; j >= 0 && state[j] == ON_WALK; j = sc->flow[j].after)
			state[j] = DONE;
	}
	free(state);
	return cyclic;
}

/*
 * What a flow needs to run at all: one IP version at both ends, a start within the run, no
 * 'after' chain that comes back to itself, and a name no other flow has.
 */
static int check_flows(struct reader *r)
{
	const struct roce_scenario *sc = r->sc;
	const struct roce_sc_flow **by_name;
	uint8_t *cyclic = flows_on_cycles(sc);
	int rc = 0;

	if (cyclic == NULL)
		return -ENOMEM;
	for (int i = 0; i < sc->nflows && rc == 0; i++) {
		const struct roce_sc_flow *f = &sc->flow[i];

		snprintf(r->section, sizeof(r->section), "flow.%s", f->name);
		if (sc->host[f->src].ip_ver != sc->host[f->dst].ip_ver) {
			rc = fail_at(r, NULL, "'%s' has an IPv%d address and '%s' an IPv%d one: a "
				     "flow joins hosts of one IP version", sc->host[f->src].name,
				     sc->host[f->src].ip_ver, sc->host[f->dst].name,
				     sc->host[f->dst].ip_ver);
		} else if (f->after < 0 && f->start >= sc->duration) {
			char a[32], b[32];

			rc = fail_at(r, "start", "%s is not within the run (scenario.duration = %s)",
				     time_str(f->start, a, sizeof(a)),
				     time_str(sc->duration, b, sizeof(b)));
		} else if (cyclic[i]) {
			rc = fail_at(r, "after", "the flows wait for each other in a cycle ('%s' "
				     "waits for '%s', which waits, in the end, for '%s')", f->name,
				     sc->flow[f->after].name, f->name);
		}
	}
	free(cyclic);
	if (rc != 0)
		return rc;
	by_name = malloc((size_t)sc->nflows * sizeof(*by_name));
	if (by_name == NULL)
		return -ENOMEM;
	for (int i = 0; i < sc->nflows; i++)
		by_name[i] = &sc->flow[i];
	qsort(by_name, (size_t)sc->nflows, sizeof(*by_name), cmp_flow_name);
	for (int i = 1; i < sc->nflows; i++)
		if (strcmp(by_name[i - 1]->name, by_name[i]->name) == 0) {
			char name[ROCE_SC_NAME];

			snprintf(name, sizeof(name), "%s", by_name[i]->name);
			free(by_name);
			snprintf(r->section, sizeof(r->section), "flow.%s", name);
			return fail_at(r, NULL, "two flows are called '%s' (a [flow] and a pattern's, "
				       "or two patterns')", name);
		}
	free(by_name);
	return 0;
}

/*
 * Every link carries the largest RoCE packet a flow will send: its path MTU's payload behind
 * IP, UDP, BTH, RETH and immediate data, and the ICRC (a link drops a larger one, counted as
 * mtu_drops, and the flow would stall).
 */
static int check_mtu(struct reader *r)
{
	const struct roce_scenario *sc = r->sc;
	uint32_t pmtu = roce_mtu_bytes(sc->mtu), ip = 20;

	for (int i = 0; i < sc->nflows; i++)
		if (sc->flow[i].mtu != 0)
			pmtu = ROCE_MAX(pmtu, roce_mtu_bytes(sc->flow[i].mtu));
	for (int h = 0; h < sc->nhosts; h++)
		if (sc->host[h].ip_ver == 6)
			ip = 40;
	for (int l = 0; l < sc->nlinks; l++) {
		const struct roce_sc_link *k = &sc->link[l];
		uint32_t need = pmtu + ip + 8 + 12 + 16 + 4 + 4;

		if (k->conf.mtu != 0 && k->conf.mtu < need) {
			snprintf(r->section, sizeof(r->section), "topology");
			return fail_at(r, "mtu", "link %s's MTU of %u bytes is below the %u-byte IP "
				       "packets a path MTU of %u makes (lower scenario.mtu, or raise "
				       "the link's)", k->name, k->conf.mtu, need, pmtu);
		}
	}
	return 0;
}

/* The component of node @p n (union-find with path halving). */
static int component(int *parent, int n)
{
	while (parent[n] != n)
		n = parent[n] = parent[parent[n]];
	return n;
}

/* Every flow's hosts are joined by links (a custom topology can leave islands). */
static int check_paths(struct reader *r)
{
	const struct roce_scenario *sc = r->sc;
	int n = sc->nhosts + sc->nswitches, *parent = malloc((size_t)n * sizeof(int));

	if (parent == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		parent[i] = i;
	for (int l = 0; l < sc->nlinks; l++)
		parent[component(parent, sc->link[l].a)] = component(parent, sc->link[l].b);
	for (int i = 0; i < sc->nflows; i++) {
		const struct roce_sc_flow *f = &sc->flow[i];

		if (component(parent, f->src) != component(parent, f->dst)) {
			free(parent);
			snprintf(r->section, sizeof(r->section), "flow.%s", f->name);
			return fail_at(r, NULL, "no links lead from '%s' to '%s'",
				       sc->host[f->src].name, sc->host[f->dst].name);
		}
	}
	free(parent);
	return 0;
}

static int check_result(struct reader *r)
{
	struct roce_scenario *sc = r->sc;
	int *deg = calloc((size_t)(sc->nhosts + sc->nswitches), sizeof(int));

	snprintf(r->section, sizeof(r->section), "topology");
	if (deg == NULL)
		return -ENOMEM;
	for (int i = 0; i < sc->nlinks; i++) {
		deg[sc->link[i].a]++;
		deg[sc->link[i].b]++;
	}
	for (int h = 0; h < sc->nhosts; h++) {
		if (deg[h] != 1) {
			int d = deg[h];

			free(deg);
			return fail_at(r, NULL, "host '%s' has %d links: a host has exactly one NIC port",
				       sc->host[h].name, d);
		}
	}
	for (int s = 0; s < sc->nswitches; s++) {
		int d = deg[sc->nhosts + s];

		if (d > ROCE_SWITCH_MAX_PORTS) {
			free(deg);
			return fail_at(r, NULL, "switch '%s' has %d links, more than %d ports",
				       sc->sw[s].name, d, ROCE_SWITCH_MAX_PORTS);
		}
		sc->sw[s].conf.nports = (uint16_t)d;
	}
	free(deg);
	if (sc->nhosts < 2)
		return fail_at(r, NULL, "a scenario needs at least two hosts");
	if (sc->nhosts > FAB_MAX_HOSTS)
		return fail_at(r, NULL, "%d hosts: at most %d (every switch holds a route per host)",
			       sc->nhosts, FAB_MAX_HOSTS);
	if (sc->nflows == 0) {
		snprintf(r->err, r->errlen, "%s: no workload: add a [flow.NAME] or [pattern.NAME] "
			 "(a pattern over fewer than two hosts makes no flow)", r->file);
		return -EINVAL;
	}
	return check_hosts(r) || check_flows(r) || check_mtu(r) || check_paths(r) ? -EINVAL : 0;
}

struct roce_scenario *roce_scenario_parse(const char *name, const char *text,
					  const char *const *set, int nset, char *err, size_t errlen)
{
	struct reader r = { .file = name, .err = err, .errlen = errlen };
	int rc;

	r.sc = roce_scenario_create();
	if (r.sc == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(r.sc->file, sizeof(r.sc->file), "%s", name);
	snprintf(r.topo.kind, sizeof(r.topo.kind), "star");
	r.topo.hosts = 2;
	r.topo.switches = 2;
	r.topo.host_link = (struct roce_link_conf){ .rate_bps = 100000000000ull, .delay = ROCE_US };
	snprintf(err, errlen, "%s: out of memory", name);
	rc = scan(&r, text);
	if (rc == 0) {
		r.cfg = cfg_from_text(text);
		if (r.cfg == NULL) {
			snprintf(err, errlen, "%s: rte_cfgfile could not read it", name);
			rc = -EINVAL;
		}
	}
	if (rc == 0)
		rc = apply_sets(&r, set, nset);
	if (rc == 0)
		rc = check_sections(&r);
	if (rc == 0)
		rc = read_scenario(&r);
	if (rc == 0)
		rc = read_topology(&r);
	if (rc == 0)
		rc = read_custom_nodes(&r);
	if (rc == 0) {
		char why[256];
		const char *key;

		snprintf(r.section, sizeof(r.section), "topology");
		rc = fab_topo_generate(r.sc, &r.topo, &key, why, sizeof(why));
		if (rc == -EINVAL)
			fail_at(&r, key, "%s", why);
		else if (rc != 0)
			snprintf(err, errlen, "%s: %s", name, why);
	}
	if (rc == 0)
		rc = read_links(&r);
	if (rc == 0)
		rc = read_switches(&r);
	if (rc == 0)
		rc = read_host_overrides(&r);
	if (rc == 0)
		rc = read_nic(&r);
	if (rc == 0)
		rc = read_flows(&r);
	if (rc == 0)
		rc = read_patterns(&r);
	if (rc == 0)
		rc = read_events(&r);
	if (rc == 0)
		rc = read_capture(&r);
	if (rc == 0)
		rc = check_result(&r);
	free(r.ent);
	free(r.loc);
	if (r.cfg != NULL)
		rte_cfgfile_close(r.cfg);
	if (rc != 0) {
		roce_scenario_destroy(r.sc);
		return NULL;
	}
	return r.sc;
}

struct roce_scenario *roce_scenario_load(const char *path, const char *const *set, int nset,
					 char *err, size_t errlen)
{
	struct roce_scenario *sc;
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	struct stat st;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	/* a scenario is a small text file: not a device, a pipe that never ends, or a directory */
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > FAB_MAX_FILE) {
		snprintf(err, errlen, "%s: not a regular file of at most %d MiB", path,
			 FAB_MAX_FILE >> 20);
		fclose(f);
		return NULL;
	}
	{
		FILE *mem = open_memstream(&text, &len);
		char buf[4096];
		size_t n;

		if (mem == NULL) {
			fclose(f);
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
		fclose(mem);
	}
	if (ferror(f) || memchr(text, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: %s", path, ferror(f) ? "read error" : "not a text file");
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	sc = roce_scenario_parse(path, text, set, nset, err, errlen);
	free(text);
	return sc;
}

const char *roce_scenario_builtin(const char *name)
{
	size_t len = strlen(name);

	for (const struct roce_embedded *e = roce_scenarios_builtin; e->name != NULL; e++)
		if (strcmp(e->name, name) == 0 ||
		    (strncmp(e->name, name, len) == 0 && strcmp(e->name + len, ".ini") == 0))
			return e->text;
	return NULL;
}
