/* Replay into an emulated responder: a capture's requests fed to rocelab, its answers compared. */
#include <errno.h>
#include <stdio.h>

#include "roce_replay.h"

int roce_replay_responder(const struct roce_replay_resp_conf *conf,
			  struct roce_replay_resp_result *res, char *err, size_t errlen)
{
	(void)conf;
	(void)res;
	snprintf(err, errlen, "not yet");
	return -EINVAL;
}
