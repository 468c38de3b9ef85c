/* rocelab demo: the embedded tour. Until the fabric lands it tours the wire codec. */
#include <stdio.h>
#include <stdlib.h>

#include "rocelab.h"
#include "roce_wire.h"

static int run(int argc, char **argv)
{
	static const uint8_t ops[] = {
		ROCE_OP_RC_SEND_ONLY, ROCE_OP_RC_RDMA_WRITE_FIRST, ROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		ROCE_OP_RC_RDMA_READ_REQUEST, ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, ROCE_OP_RC_ACKNOWLEDGE,
		ROCE_OP_RC_FETCH_ADD, ROCE_OP_RC_ATOMIC_ACKNOWLEDGE, ROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE,
		ROCE_OP_UD_SEND_ONLY, ROCE_OP_CNP,
	};
	uint8_t frame[2048];
	struct roce_pkt in, out;
	char line[512];

	if (argc > 1)
		return rocelab_usage_error(argv[0], "takes no arguments, got '%s'", argv[1]);
	printf("rocelab demo: one frame of each kind, built, parsed back and ICRC-checked\n\n");
	printf("%-5s %-4s %s\n", "bytes", "icrc", "frame");
	for (size_t i = 0; i < ROCE_DIM(ops) + 2; i++) {
		int len;

		if (i < ROCE_DIM(ops)) {
			roce_pkt_init(&in, ROCE_KIND_ROCEV2, ops[i]);
			in.dqpn = 0x11;
			in.psn = (uint32_t)(1000 + i);
			in.ackreq = true;
			if (roce_opcode[ops[i]].mask & ROCE_F_PAYLOAD)
				in.payload_len = 37;
			in.reth.dmalen = 4096;
			in.ecn = ops[i] == ROCE_OP_CNP ? 0 : 2;
		} else {
			roce_pkt_init(&in, i == ROCE_DIM(ops) ? ROCE_KIND_PFC : ROCE_KIND_PAUSE, 0);
			in.pfc_cev = 1u << 3;
			in.quanta[i == ROCE_DIM(ops) ? 3 : 0] = 0xffff;
		}
		len = roce_wire_build(&in, 0, frame, sizeof(frame));
		if (len < 0) {
			fprintf(stderr, "rocelab demo: building frame %zu failed\n", i);
			return EXIT_FAILURE;
		}
		roce_wire_parse(frame, (uint32_t)len, 0, &out);
		roce_pkt_snprint(line, sizeof(line), &out);
		if (out.kind == ROCE_KIND_ROCEV2)
			printf("%5d %08x %s\n", len, out.icrc, line);
		else
			printf("%5d %-8s %s\n", len, "-", line);
	}
	return 0;
}

const struct rocelab_cmd cmd_demo = {
	.name = "demo",
	.summary = "the embedded tour: frames of every kind, built and checked",
	.usage = "usage: rocelab demo\n\n"
		 "Build a frame of each kind (RC, UD, CNP, PFC, PAUSE), parse it back and show\n"
		 "its ICRC. Needs no files and no privileges.\n",
	.run = run,
	.needs_eal = false,
};
