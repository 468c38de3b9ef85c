/*
 * libFuzzer target: any bytes as a scenario (INI text) through roce_scenario_parse, with and
 * without --set overrides. A scenario is refused with a message or accepted whole; either way
 * nothing crashes, leaks or hangs, and what is accepted is consistent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_fabric.h"

static void check(const struct roce_scenario *sc)
{
	for (int i = 0; i < sc->nlinks; i++)
		if (sc->link[i].a < 0 || sc->link[i].b < 0 ||
		    sc->link[i].a >= sc->nhosts + sc->nswitches ||
		    sc->link[i].b >= sc->nhosts + sc->nswitches || sc->link[i].a == sc->link[i].b)
			abort();
	for (int i = 0; i < sc->nflows; i++)
		if (sc->flow[i].src < 0 || sc->flow[i].src >= sc->nhosts || sc->flow[i].dst < 0 ||
		    sc->flow[i].dst >= sc->nhosts || sc->flow[i].size == 0 ||
		    sc->flow[i].after >= sc->nflows)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const set[] = { "scenario.seed=3", "flow.a.size=1K", "nic.cc.rpg_ai_rate=1Mbps" };
	char err[512];
	char *text;
	struct roce_scenario *sc;

	if (size > 65536)
		return 0;
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (int k = 0; k < 2; k++) {
		err[0] = '\0';
		sc = roce_scenario_parse("fuzz.ini", text, set, k ? 3 : 0, err, sizeof(err));
		if (sc == NULL) {
			if (err[0] == '\0' || strchr(err, '\n') != NULL)
				abort();	/* a refusal is one line that says why */
		} else {
			check(sc);
			roce_scenario_destroy(sc);
		}
	}
	free(text);
	return 0;
}
