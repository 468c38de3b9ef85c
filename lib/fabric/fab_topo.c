/* Topology generators: star, dumbbell, line, ring, leaf-spine and k-ary fat-tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_private.h"

void *fab_grow(void *base, int *n, size_t elem)
{
	uint8_t *p = base;

	/* capacity doubles at each power of two, so adding n elements costs O(n), not O(n^2) */
	if (*n == 0 || (*n & (*n - 1)) == 0) {
		p = realloc(base, (size_t)(*n == 0 ? 1 : 2 * *n) * elem);
		if (p == NULL)
			return NULL;
	}
	memset(p + (size_t)*n * elem, 0, elem);
	(*n)++;
	return p;
}

int fab_add_host(struct roce_scenario *sc, const char *name)
{
	struct roce_sc_host *h = fab_grow(sc->host, &sc->nhosts, sizeof(*h));
	uint32_t id;

	if (h == NULL)
		return -ENOMEM;
	sc->host = h;
	h += sc->nhosts - 1;
	id = (uint32_t)sc->nhosts;
	snprintf(h->name, sizeof(h->name), "%s", name);
	/* 10.0.0.1, 10.0.0.2, ...; MACs 02:00:00:00:00:01, ... */
	h->ip_ver = 4;
	h->ip.b[0] = 10;
	h->ip.b[1] = (uint8_t)(id >> 16);
	h->ip.b[2] = (uint8_t)(id >> 8);
	h->ip.b[3] = (uint8_t)id;
	h->mac[0] = 0x02;
	h->mac[3] = (uint8_t)(id >> 16);
	h->mac[4] = (uint8_t)(id >> 8);
	h->mac[5] = (uint8_t)id;
	/* links name nodes by index: switches are numbered after hosts, so renumber theirs */
	for (int i = 0; i < sc->nlinks; i++) {
		if (sc->link[i].a >= sc->nhosts - 1)
			sc->link[i].a++;
		if (sc->link[i].b >= sc->nhosts - 1)
			sc->link[i].b++;
	}
	return sc->nhosts - 1;
}

int fab_add_switch(struct roce_scenario *sc, const char *name)
{
	struct roce_sc_switch *s = fab_grow(sc->sw, &sc->nswitches, sizeof(*s));
	uint32_t id;

	if (s == NULL)
		return -ENOMEM;
	sc->sw = s;
	s += sc->nswitches - 1;
	id = (uint32_t)sc->nswitches;
	snprintf(s->name, sizeof(s->name), "%s", name);
	roce_switch_defaults(&s->conf);
	s->conf.name = s->name;
	s->conf.mac[0] = 0x02;
	s->conf.mac[1] = 0x5e;
	s->conf.mac[2] = (uint8_t)(id >> 8);
	s->conf.mac[3] = (uint8_t)id;
	return sc->nhosts + sc->nswitches - 1;
}

int fab_add_link(struct roce_scenario *sc, int a, int b, const struct roce_link_conf *conf)
{
	struct roce_sc_link *l = fab_grow(sc->link, &sc->nlinks, sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	sc->link = l;
	l += sc->nlinks - 1;
	l->a = a;
	l->b = b;
	l->conf = *conf;
	snprintf(l->name, sizeof(l->name), "%s-%s", roce_scenario_node_name(sc, a),
		 roce_scenario_node_name(sc, b));
	return sc->nlinks - 1;
}

/* Add @p n hosts named h<first>.. and link each to node @p sw. */
static int hosts_on(struct roce_scenario *sc, const struct fab_topo *t, uint32_t first,
		    uint32_t n, int sw)
{
	char name[ROCE_SC_NAME];

	for (uint32_t i = 0; i < n; i++) {
		int h;

		snprintf(name, sizeof(name), "h%u", first + i);
		h = fab_add_host(sc, name);
		if (h < 0)
			return h;
		sw++;			/* the host was numbered before it */
		if (fab_add_link(sc, h, sw, &t->host_link) < 0)
			return -ENOMEM;
	}
	return sw;
}

static int switch_named(struct roce_scenario *sc, const char *fmt, uint32_t i, uint32_t j)
{
	char name[ROCE_SC_NAME];

	snprintf(name, sizeof(name), fmt, i, j);
	return fab_add_switch(sc, name);
}

static int gen_star(struct roce_scenario *sc, const struct fab_topo *t)
{
	int sw = fab_add_switch(sc, "sw0");

	return sw < 0 ? sw : hosts_on(sc, t, 0, t->hosts, sw);
}

/* Two switches joined by the bottleneck; the first half of the hosts on the left. */
static int gen_dumbbell(struct roce_scenario *sc, const struct fab_topo *t)
{
	uint32_t left = (t->hosts + 1) / 2;
	int s0, s1;

	s0 = fab_add_switch(sc, "sw0");
	s1 = fab_add_switch(sc, "sw1");
	if (s1 < 0 || fab_add_link(sc, s0, s1, &t->fabric_link) < 0)
		return -ENOMEM;
	if (hosts_on(sc, t, 0, left, s0) < 0 || hosts_on(sc, t, left, t->hosts - left, s0 + (int)left + 1) < 0)
		return -ENOMEM;
	return 0;
}

/* sw0 - sw1 - ... - swN-1 (- sw0 for a ring), hosts dealt round robin... in blocks. */
static int gen_chain(struct roce_scenario *sc, const struct fab_topo *t, bool ring)
{
	uint32_t n = t->switches, per = t->hosts / n, extra = t->hosts % n, next = 0;

	for (uint32_t i = 0; i < n; i++)
		if (switch_named(sc, "sw%u", i, 0) < 0)
			return -ENOMEM;
	for (uint32_t i = 0; i + 1 < n || (ring && n > 2 && i < n); i++) {
		int a = sc->nhosts + (int)i, b = sc->nhosts + (int)((i + 1) % n);

		if (fab_add_link(sc, a, b, &t->fabric_link) < 0)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = per + (i < extra);

		if (hosts_on(sc, t, next, k, sc->nhosts + (int)i) < 0)
			return -ENOMEM;
		next += k;
	}
	return 0;
}

static int gen_leafspine(struct roce_scenario *sc, const struct fab_topo *t)
{
	uint32_t L = t->leaves, S = t->spines, H = t->hosts_per_leaf;

	for (uint32_t i = 0; i < L; i++)
		if (switch_named(sc, "leaf%u", i, 0) < 0)
			return -ENOMEM;
	for (uint32_t i = 0; i < S; i++)
		if (switch_named(sc, "spine%u", i, 0) < 0)
			return -ENOMEM;
	for (uint32_t l = 0; l < L; l++)
		for (uint32_t s = 0; s < S; s++)
			if (fab_add_link(sc, sc->nhosts + (int)l, sc->nhosts + (int)(L + s),
					 &t->fabric_link) < 0)
				return -ENOMEM;
	for (uint32_t l = 0; l < L; l++)
		if (hosts_on(sc, t, l * H, H, sc->nhosts + (int)l) < 0)
			return -ENOMEM;
	return 0;
}

/*
 * k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
 * cores, k^3/4 hosts. Edge e of pod p: edge<p>_<e>; aggregation agg<p>_<a>; core<c>.
 */
static int gen_fattree(struct roce_scenario *sc, const struct fab_topo *t)
{
	uint32_t k = t->k, h = k / 2;
	int edge0, agg0, core0;

	edge0 = sc->nswitches;
	for (uint32_t p = 0; p < k; p++)
		for (uint32_t e = 0; e < h; e++)
			if (switch_named(sc, "edge%u_%u", p, e) < 0)
				return -ENOMEM;
	agg0 = sc->nswitches;
	for (uint32_t p = 0; p < k; p++)
		for (uint32_t a = 0; a < h; a++)
			if (switch_named(sc, "agg%u_%u", p, a) < 0)
				return -ENOMEM;
	core0 = sc->nswitches;
	for (uint32_t c = 0; c < h * h; c++)
		if (switch_named(sc, "core%u", c, 0) < 0)
			return -ENOMEM;
	for (uint32_t p = 0; p < k; p++) {
		for (uint32_t a = 0; a < h; a++) {
			int agg = sc->nhosts + agg0 + (int)(p * h + a);

			for (uint32_t e = 0; e < h; e++)
				if (fab_add_link(sc, sc->nhosts + edge0 + (int)(p * h + e), agg,
						 &t->fabric_link) < 0)
					return -ENOMEM;
			for (uint32_t c = 0; c < h; c++)
				if (fab_add_link(sc, agg, sc->nhosts + core0 + (int)(a * h + c),
						 &t->fabric_link) < 0)
					return -ENOMEM;
		}
	}
	for (uint32_t e = 0; e < k * h; e++)
		if (hosts_on(sc, t, e * h, h, sc->nhosts + edge0 + (int)e) < 0)
			return -ENOMEM;
	return 0;
}

int fab_topo_generate(struct roce_scenario *sc, const struct fab_topo *t, const char **key,
		      char *err, size_t len)
{
	int rc;

	*key = NULL;
	if (strcmp(t->kind, "custom") == 0)
		return 0;
	if (sc->nhosts != 0 || sc->nswitches != 0) {
		snprintf(err, len, "[host.*]/[switch.*] sections need 'kind = custom' in [topology]");
		return -EINVAL;
	}
	if (strcmp(t->kind, "star") == 0) {
		rc = gen_star(sc, t);
	} else if (strcmp(t->kind, "dumbbell") == 0) {
		rc = gen_dumbbell(sc, t);
	} else if (strcmp(t->kind, "line") == 0 || strcmp(t->kind, "ring") == 0) {
		if (t->switches < 1 || (strcmp(t->kind, "ring") == 0 && t->switches < 3)) {
			snprintf(err, len, "a %s needs 'switches' (a ring at least 3)", t->kind);
			*key = "switches";
			return -EINVAL;
		}
		rc = gen_chain(sc, t, strcmp(t->kind, "ring") == 0);
	} else if (strcmp(t->kind, "leafspine") == 0) {
		if (t->leaves < 1 || t->spines < 1 || t->hosts_per_leaf < 1) {
			snprintf(err, len, "leafspine needs 'leaves', 'spines' and 'hosts_per_leaf'");
			return -EINVAL;
		}
		rc = gen_leafspine(sc, t);
	} else if (strcmp(t->kind, "fattree") == 0) {
		if (t->k < 2 || t->k % 2 != 0 || t->k > 16) {
			snprintf(err, len, "fattree needs an even 'k' from 2 to 16, got %u", t->k);
			*key = "k";
			return -EINVAL;
		}
		rc = gen_fattree(sc, t);
	} else {
		snprintf(err, len, "unknown topology kind '%s' (star, dumbbell, line, ring, "
			 "leafspine, fattree or custom)", t->kind);
		*key = "kind";
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(err, len, "out of memory building the topology");
		return rc;
	}
	for (int i = 0; i < sc->nlinks; i++)
		for (int d = 0; d < 2; d++)
			sc->link[i].impair[d].loss = t->loss;
	return 0;
}
