/* rocelab devices: the real RDMA devices rdma-core sees, their ports and GIDs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocelab.h"
#include "roce_ibdev.h"

static const char usage[] =
	"usage: rocelab devices [-v] [DEV ...]\n"
	"\n"
	"List the RDMA devices rdma-core's libibverbs sees (a ConnectX, an E810, the kernel's\n"
	"soft-RoCE rxe0), or only DEV: each port's state, link layer, active MTU, speed x width,\n"
	"and its RoCE v2 GIDs with their index (perftest's and rocelab perf's -x) and interface.\n"
	"The GID `rocelab perf --ibdev DEV` takes without -x is marked: the first RoCE v2 GID with\n"
	"an IPv4 address (with --ipv6, the first with an IPv6 one).\n"
	"\n"
	"  -v   also the device's limits (max_qp_wr, max_sge, max_qp_rd_atom, atomics), its\n"
	"       firmware, and every GID, RoCE v1 and InfiniBand ones included\n"
	"\n"
	"libibverbs is loaded when this runs (libibverbs.so.1, or the file $ROCELAB_LIBIBVERBS\n"
	"names): rocelab itself does not need rdma-core.\n"
	"\n"
	"Exit status: 0 listed; 1 no rdma-core, no RDMA in the kernel, no device, or no DEV (the\n"
	"line lists those there are); 2 bad arguments.\n";

static void print_port(const struct roce_ibdev_port *p, bool verbose)
{
	const struct roce_ibdev_gid *pick4, *pick6;
	char err[256], rate[48];

	if (p->lanes != 0 && p->lane_gbps > 0)
		snprintf(rate, sizeof(rate), "%ux %g Gb/s = %g Gb/s", p->lanes, p->lane_gbps,
			 p->lanes * p->lane_gbps);
	else
		snprintf(rate, sizeof(rate), "speed unknown");
	printf("  port %u: %s, %s, MTU %u (max %u), %s\n", p->num,
	       roce_ibdev_port_state_name(p->state), p->ethernet ? "Ethernet" : "InfiniBand",
	       p->active_mtu, p->max_mtu, rate);
	pick4 = roce_ibdev_gid_pick(p, -1, false, err, sizeof(err));
	pick6 = roce_ibdev_gid_pick(p, -1, true, err, sizeof(err));
	for (uint32_t i = 0; i < p->n_gids; i++) {
		const struct roce_ibdev_gid *g = &p->gids[i];
		char text[64];

		if (!verbose && g->type != ROCE_GID_ROCE_V2)
			continue;
		printf("    GID %-4u %-8s %-40s %-10s%s\n", g->index, roce_gid_type_name(g->type),
		       roce_gid_text(g->gid, text, sizeof(text)), g->netdev[0] ? g->netdev : "-",
		       g == pick4 ? "  (default -x)" : g == pick6 ? "  (default -x with --ipv6)" : "");
	}
	if (p->ethernet && pick4 == NULL && pick6 == NULL)
		printf("    no RoCE v2 GID (%u slots): give the interface an IP address\n",
		       p->gid_tbl_len);
}

static int show(const char *name, bool verbose)
{
	const struct roce_ibdev_info *info;
	struct roce_ibdev *dev;
	char err[512];

	dev = roce_ibdev_open(name, err, sizeof(err));
	if (dev == NULL) {
		fprintf(stderr, "rocelab devices: %s\n", err);
		return EXIT_FAILURE;
	}
	info = roce_ibdev_info(dev);
	printf("%s: node GUID %04x:%04x:%04x:%04x, vendor 0x%x part %u, %u port%s\n", info->name,
	       (unsigned)(info->node_guid >> 48), (unsigned)(info->node_guid >> 32) & 0xffff,
	       (unsigned)(info->node_guid >> 16) & 0xffff, (unsigned)info->node_guid & 0xffff,
	       info->vendor_id, info->vendor_part_id, info->n_ports, info->n_ports == 1 ? "" : "s");
	if (verbose)
		printf("  firmware %s; max_qp_wr %u, max_sge %u, max_qp_rd_atom %u, "
		       "max_qp_init_rd_atom %u, atomics %s\n", info->fw_ver[0] ? info->fw_ver : "-",
		       info->max_qp_wr, info->max_sge, info->max_qp_rd_atom,
		       info->max_qp_init_rd_atom, info->atomics ? "yes" : "no");
	for (uint8_t p = 0; p < info->n_ports; p++)
		print_port(&info->ports[p], verbose);
	roce_ibdev_close(dev);
	return EXIT_SUCCESS;
}

static int run(int argc, char **argv)
{
	char names[1024], err[512];
	bool verbose = false;
	int n, ndev = 0, ret = EXIT_SUCCESS;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return EXIT_SUCCESS;
		}
		if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			verbose = true;
		else if (argv[i][0] == '-')
			return rocelab_usage_error(argv[0], "unknown option '%s'", argv[i]);
		else
			ndev++;
	}
	if (ndev > 0) {
		for (int i = 1; i < argc; i++)
			if (argv[i][0] != '-' && show(argv[i], verbose) != EXIT_SUCCESS)
				ret = EXIT_FAILURE;
		return ret;
	}
	n = roce_ibdev_names(names, sizeof(names), err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "rocelab devices: %s\n", err);
		return EXIT_FAILURE;
	}
	if (n == 0) {
		fprintf(stderr, "rocelab devices: no RDMA devices (the kernel's soft-RoCE: rdma link "
			"add rxe0 type rxe netdev IFACE)\n");
		return EXIT_FAILURE;
	}
	for (char *save = NULL, *tok = strtok_r(names, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save))
		if (show(tok, verbose) != EXIT_SUCCESS)
			ret = EXIT_FAILURE;
	return ret;
}

const struct rocelab_cmd cmd_devices = {
	.name = "devices",
	.summary = "list the real RDMA devices (rdma-core): ports, MTU, speed, RoCE v2 GIDs",
	.usage = usage,
	.run = run,
	.needs_eal = false,
};
