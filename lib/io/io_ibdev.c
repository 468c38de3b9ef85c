/*
 * Real RDMA devices through rdma-core's libibverbs, loaded with dlopen() when first needed.
 *
 * rocelab takes only verbs.h's types and prototypes from rdma-core at build time. Every
 * libibverbs function it calls is resolved with dlvsym() at the version node of the ABI it was
 * built against (IBVERBS_1.1 for most), never one of the provider-private nodes
 * (IBVERBS_PRIVATE_NN, which change with each release). verbs.h's inline wrappers that call an
 * exported function by name (ibv_query_port(), ibv_reg_mr(), ibv_query_gid_table(), ...) are
 * not used: each would make the executable need libibverbs to start. Calls that go through the
 * device's own ops (ibv_post_send(), ibv_poll_cq()) need nothing resolved.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_ibdev.h"

/* ---- the device's numbers, decoded: no libibverbs needed ---- */

uint8_t roce_ibdev_lanes(uint8_t active_width)
{
	switch (active_width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 0;
	}
}

double roce_ibdev_lane_gbps(uint8_t active_speed)
{
	switch (active_speed) {
	case 1: return 2.5;	/* SDR */
	case 2: return 5.0;	/* DDR */
	case 4: return 10.0;	/* QDR */
	case 8: return 10.0;	/* FDR10 */
	case 16: return 14.0;	/* FDR */
	case 32: return 25.0;	/* EDR */
	case 64: return 50.0;	/* HDR */
	case 128: return 100.0;	/* NDR */
	default: return 0.0;
	}
}

uint32_t roce_ibdev_mtu_bytes(int ibv_mtu)
{
	return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128u << ibv_mtu : 0;
}

const char *roce_ibdev_port_state_name(uint8_t state)
{
	static const char *const names[] = {
		"PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE",
		"PORT_ACTIVE_DEFER",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "invalid state";
}

const char *roce_gid_type_name(enum roce_gid_type type)
{
	switch (type) {
	case ROCE_GID_IB: return "IB";
	case ROCE_GID_ROCE_V1: return "RoCE v1";
	case ROCE_GID_ROCE_V2: return "RoCE v2";
	}
	return "unknown";
}

bool roce_gid_is_ipv4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

const char *roce_gid_text(const uint8_t gid[16], char *out, size_t outlen)
{
	char buf[INET6_ADDRSTRLEN];

	if (roce_gid_is_ipv4(gid))
		inet_ntop(AF_INET, gid + 12, buf, sizeof(buf));
	else
		inet_ntop(AF_INET6, gid, buf, sizeof(buf));
	snprintf(out, outlen, "%s", buf);
	return out;
}

/* The indexes of @p port's RoCE v2 entries, "0, 1" (at most a line of them), for a message. */
static void v2_list(const struct roce_ibdev_port *port, char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < port->n_gids && used + 24 < outlen; i++) {
		const struct roce_ibdev_gid *g = &port->gids[i];
		char text[INET6_ADDRSTRLEN];

		if (g->type != ROCE_GID_ROCE_V2)
			continue;
		used += (size_t)snprintf(out + used, outlen - used, "%s%u (%s)", used ? ", " : "",
					 g->index, roce_gid_text(g->gid, text, sizeof(text)));
	}
	if (used == 0)
		snprintf(out, outlen, "none");
}

const struct roce_ibdev_gid *roce_ibdev_gid_pick(const struct roce_ibdev_port *port, int want,
						 bool ipv6, char *err, size_t errlen)
{
	char list[160];

	if (want >= 0) {
		for (uint32_t i = 0; i < port->n_gids; i++) {
			const struct roce_ibdev_gid *g = &port->gids[i];

			if (g->index != (uint32_t)want)
				continue;
			if (g->type == ROCE_GID_ROCE_V2)
				return g;
			v2_list(port, list, sizeof(list));
			snprintf(err, errlen, "port %u: GID index %d is %s, not RoCE v2 (RoCE v2 "
				 "GIDs: %s)", port->num, want, roce_gid_type_name(g->type), list);
			return NULL;
		}
		v2_list(port, list, sizeof(list));
		snprintf(err, errlen, "port %u: GID index %d is empty (of %u; RoCE v2 GIDs: %s)",
			 port->num, want, port->gid_tbl_len, list);
		return NULL;
	}
	for (uint32_t i = 0; i < port->n_gids; i++) {
		const struct roce_ibdev_gid *g = &port->gids[i];

		if (g->type == ROCE_GID_ROCE_V2 && roce_gid_is_ipv4(g->gid) != ipv6)
			return g;
	}
	v2_list(port, list, sizeof(list));
	snprintf(err, errlen, "port %u has no RoCE v2 GID with an %s address (RoCE v2 GIDs: %s)",
		 port->num, ipv6 ? "IPv6" : "IPv4", list);
	return NULL;
}

static void info_free(struct roce_ibdev_info *info)
{
	for (uint8_t p = 0; info->ports != NULL && p < info->n_ports; p++)
		free(info->ports[p].gids);
	free(info->ports);
	info->ports = NULL;
}

#ifdef ROCELAB_HAVE_IBVERBS

#include "io_ibverbs.h"

#define IBVERBS_SONAME "libibverbs.so.1"
#define IBVERBS_PACKAGES "libibverbs1 ibverbs-providers"

/* The library, once loaded for the process. */
static struct {
	int loaded;				/* 1: ready; < 0: -errno of the try */
	char err[256];				/* why not, when loaded < 0 */
	void *so;				/* never closed: contexts point into providers */
} lib;

struct roce_ibverbs roce_ibv;

/* What each member is, by name and version node: the ABI of rdma-core v32 and later. */
static const struct {
	size_t offset;
	const char *name;
	const char *version;
} ibv_syms[] = {
#define SYM(member, name, version) { offsetof(struct roce_ibverbs, member), name, version }
	SYM(get_device_list, "ibv_get_device_list", "IBVERBS_1.1"),
	SYM(free_device_list, "ibv_free_device_list", "IBVERBS_1.1"),
	SYM(get_device_name, "ibv_get_device_name", "IBVERBS_1.1"),
	SYM(open_device, "ibv_open_device", "IBVERBS_1.1"),
	SYM(close_device, "ibv_close_device", "IBVERBS_1.1"),
	SYM(query_device, "ibv_query_device", "IBVERBS_1.1"),
	SYM(query_port_compat, "ibv_query_port", "IBVERBS_1.1"),
	SYM(query_gid_table, "_ibv_query_gid_table", "IBVERBS_1.11"),
	SYM(alloc_pd, "ibv_alloc_pd", "IBVERBS_1.1"),
	SYM(dealloc_pd, "ibv_dealloc_pd", "IBVERBS_1.1"),
	SYM(reg_mr_iova2, "ibv_reg_mr_iova2", "IBVERBS_1.8"),
	SYM(dereg_mr, "ibv_dereg_mr", "IBVERBS_1.1"),
	SYM(create_cq, "ibv_create_cq", "IBVERBS_1.1"),
	SYM(destroy_cq, "ibv_destroy_cq", "IBVERBS_1.1"),
	SYM(create_qp, "ibv_create_qp", "IBVERBS_1.1"),
	SYM(modify_qp, "ibv_modify_qp", "IBVERBS_1.1"),
	SYM(destroy_qp, "ibv_destroy_qp", "IBVERBS_1.1"),
	SYM(create_ah, "ibv_create_ah", "IBVERBS_1.1"),
	SYM(destroy_ah, "ibv_destroy_ah", "IBVERBS_1.1"),
#undef SYM
};

/* Load the library and resolve every symbol, once for the process (pthread_once). */
static void load_once(void)
{
	const char *path = getenv("ROCELAB_LIBIBVERBS");

	if (path == NULL || path[0] == '\0')
		path = IBVERBS_SONAME;
	lib.so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib.so == NULL) {
		lib.loaded = -ENOENT;
		snprintf(lib.err, sizeof(lib.err), "rdma-core's libibverbs is not installed "
			 "(%s); apt-get install " IBVERBS_PACKAGES, dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(ibv_syms) / sizeof(ibv_syms[0]); i++) {
		void *fn = dlvsym(lib.so, ibv_syms[i].name, ibv_syms[i].version);

		if (fn == NULL) {
			lib.loaded = -ENOSYS;
			snprintf(lib.err, sizeof(lib.err), "%s has no %s@%s: rdma-core v32 or later "
				 "is needed", path, ibv_syms[i].name, ibv_syms[i].version);
			return;
		}
		memcpy((char *)&roce_ibv + ibv_syms[i].offset, &fn, sizeof(fn));
	}
	lib.loaded = 1;
}

int roce_ibdev_load(char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load_once);
	if (lib.loaded < 0) {
		snprintf(err, errlen, "%s", lib.err);
		return lib.loaded;
	}
	return 0;
}

/* The device list, or NULL with @p err set and errno ENOSYS (no RDMA in the kernel) or other. */
static struct ibv_device **device_list(int *n, char *err, size_t errlen)
{
	struct ibv_device **list;
	int rc = roce_ibdev_load(err, errlen);

	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	list = roce_ibv.get_device_list(n);
	if (list != NULL)
		return list;
	if (errno == ENOSYS)
		snprintf(err, errlen, "this kernel has no RDMA support (no /sys/class/infiniband_verbs:"
			 " modprobe ib_uverbs and a driver, e.g. rdma_rxe)");
	else
		snprintf(err, errlen, "cannot list RDMA devices: %s", strerror(errno));
	return NULL;
}

int roce_ibdev_names(char *out, size_t outlen, char *err, size_t errlen)
{
	int n = 0;
	size_t used = 0;
	struct ibv_device **list = device_list(&n, err, errlen);

	if (list == NULL)
		return -errno;
	out[0] = '\0';
	for (int i = 0; i < n && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? ", " : "",
					 roce_ibv.get_device_name(list[i]));
	roce_ibv.free_device_list(list);
	return n;
}

struct roce_ibdev {
	struct ibv_context *ctx;
	struct roce_ibdev_info info;
};

/* ibv_query_port() without verbs.h's inline, which names the exported function. */
static int query_port(struct ibv_context *ctx, uint8_t num, struct ibv_port_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	memset(attr, 0, sizeof(*attr));
	if (vctx != NULL)
		return vctx->query_port(ctx, num, attr, sizeof(*attr));
	return roce_ibv.query_port_compat(ctx, num, (struct _compat_ibv_port_attr *)attr);
}

static enum roce_gid_type gid_type(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_ROCE_V1: return ROCE_GID_ROCE_V1;
	case IBV_GID_TYPE_ROCE_V2: return ROCE_GID_ROCE_V2;
	default: return ROCE_GID_IB;
	}
}

static int by_index(const void *a, const void *b)
{
	const struct roce_ibdev_gid *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* Query the device, its ports and their GID tables into dev->info. @return 0 or -errno */
static int query(struct roce_ibdev *dev, char *err, size_t errlen)
{
	struct roce_ibdev_info *info = &dev->info;
	struct ibv_device_attr da;
	struct ibv_gid_entry *table = NULL;
	size_t slots = 0;
	ssize_t n;
	int rc;

	rc = roce_ibv.query_device(dev->ctx, &da);
	if (rc != 0) {
		snprintf(err, errlen, "%s: ibv_query_device: %s", info->name, strerror(rc));
		return -rc;
	}
	snprintf(info->fw_ver, sizeof(info->fw_ver), "%s", da.fw_ver);
	info->node_guid = be64toh(da.node_guid);
	info->vendor_id = da.vendor_id;
	info->vendor_part_id = da.vendor_part_id;
	info->max_qp_wr = (uint32_t)da.max_qp_wr;
	info->max_sge = (uint32_t)da.max_sge;
	info->max_qp_rd_atom = (uint32_t)da.max_qp_rd_atom;
	info->max_qp_init_rd_atom = (uint32_t)da.max_qp_init_rd_atom;
	info->atomics = da.atomic_cap != IBV_ATOMIC_NONE;
	info->n_ports = da.phys_port_cnt;
	info->ports = calloc(info->n_ports ? info->n_ports : 1, sizeof(*info->ports));
	if (info->ports == NULL)
		goto nomem;
	for (uint8_t p = 0; p < info->n_ports; p++) {
		struct roce_ibdev_port *port = &info->ports[p];
		struct ibv_port_attr pa;

		rc = query_port(dev->ctx, (uint8_t)(p + 1), &pa);
		if (rc != 0) {
			snprintf(err, errlen, "%s: ibv_query_port(%u): %s", info->name, p + 1,
				 strerror(rc));
			free(table);
			return -rc;
		}
		port->num = (uint8_t)(p + 1);
		port->state = (uint8_t)pa.state;
		port->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
		port->active_mtu = roce_ibdev_mtu_bytes(pa.active_mtu);
		port->max_mtu = roce_ibdev_mtu_bytes(pa.max_mtu);
		port->lanes = roce_ibdev_lanes(pa.active_width);
		port->lane_gbps = roce_ibdev_lane_gbps(pa.active_speed);
		port->gid_tbl_len = (uint32_t)(pa.gid_tbl_len > 0 ? pa.gid_tbl_len : 0);
		slots += port->gid_tbl_len;
		port->gids = calloc(port->gid_tbl_len ? port->gid_tbl_len : 1, sizeof(*port->gids));
		if (port->gids == NULL)
			goto nomem;
	}
	/* the valid entries of every port's table, in one call (one ioctl on kernels >= 5.10) */
	table = calloc(slots ? slots : 1, sizeof(*table));
	if (table == NULL)
		goto nomem;
	n = roce_ibv.query_gid_table(dev->ctx, table, slots, 0, sizeof(*table));
	if (n < 0) {
		snprintf(err, errlen, "%s: ibv_query_gid_table: %s", info->name, strerror((int)-n));
		free(table);
		return (int)n;
	}
	for (ssize_t i = 0; i < n; i++) {
		const struct ibv_gid_entry *e = &table[i];
		struct roce_ibdev_port *port;
		struct roce_ibdev_gid *g;

		if (e->port_num < 1 || e->port_num > info->n_ports)
			continue;
		port = &info->ports[e->port_num - 1];
		if (port->n_gids >= port->gid_tbl_len)
			continue;
		g = &port->gids[port->n_gids++];
		g->index = e->gid_index;
		memcpy(g->gid, e->gid.raw, sizeof(g->gid));
		g->type = gid_type(e->gid_type);
		if (e->ndev_ifindex == 0 || if_indextoname(e->ndev_ifindex, g->netdev) == NULL)
			g->netdev[0] = '\0';
	}
	free(table);
	for (uint8_t p = 0; p < info->n_ports; p++)
		qsort(info->ports[p].gids, info->ports[p].n_gids, sizeof(struct roce_ibdev_gid),
		      by_index);
	return 0;
nomem:
	snprintf(err, errlen, "%s: out of memory", info->name);
	return -ENOMEM;
}

struct roce_ibdev *roce_ibdev_open(const char *name, char *err, size_t errlen)
{
	struct ibv_device **list;
	struct ibv_device *found = NULL;
	struct roce_ibdev *dev;
	int n = 0, rc;

	list = device_list(&n, err, errlen);
	if (list == NULL)
		return NULL;
	for (int i = 0; i < n && found == NULL; i++)
		if (strcmp(roce_ibv.get_device_name(list[i]), name) == 0)
			found = list[i];
	if (found == NULL) {
		char names[200];
		size_t used = 0;

		names[0] = '\0';
		for (int i = 0; i < n && used < sizeof(names); i++)
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 i ? ", " : "", roce_ibv.get_device_name(list[i]));
		roce_ibv.free_device_list(list);
		if (n == 0)
			snprintf(err, errlen, "no RDMA device '%s': there are none (the kernel's "
				 "soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)", name);
		else
			snprintf(err, errlen, "no RDMA device '%s' (there %s: %s)", name,
				 n == 1 ? "is" : "are", names);
		errno = ENODEV;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL) {
		roce_ibv.free_device_list(list);
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(dev->info.name, sizeof(dev->info.name), "%s", name);
	dev->ctx = roce_ibv.open_device(found);
	rc = dev->ctx == NULL ? errno : 0;
	roce_ibv.free_device_list(list);
	if (dev->ctx == NULL) {
		snprintf(err, errlen, "%s: ibv_open_device: %s", name, strerror(rc));
		free(dev);
		errno = rc;
		return NULL;
	}
	rc = query(dev, err, errlen);
	if (rc < 0) {
		roce_ibdev_close(dev);
		errno = -rc;
		return NULL;
	}
	return dev;
}

void roce_ibdev_close(struct roce_ibdev *dev)
{
	if (dev == NULL)
		return;
	if (dev->ctx != NULL)
		roce_ibv.close_device(dev->ctx);
	info_free(&dev->info);
	free(dev);
}

const struct roce_ibdev_info *roce_ibdev_info(const struct roce_ibdev *dev)
{
	return &dev->info;
}

struct ibv_context *roce_ibdev_context(const struct roce_ibdev *dev)
{
	return dev->ctx;
}

#else /* !ROCELAB_HAVE_IBVERBS */

#define NO_HEADERS "rocelab was built without rdma-core's headers: apt-get install " \
		   "libibverbs-dev, then rebuild"

struct roce_ibdev {
	struct roce_ibdev_info info;
};

int roce_ibdev_load(char *err, size_t errlen)
{
	snprintf(err, errlen, NO_HEADERS);
	return -ENOTSUP;
}

int roce_ibdev_names(char *out, size_t outlen, char *err, size_t errlen)
{
	if (outlen > 0)
		out[0] = '\0';
	return roce_ibdev_load(err, errlen);
}

struct roce_ibdev *roce_ibdev_open(const char *name, char *err, size_t errlen)
{
	(void)name;
	errno = -roce_ibdev_load(err, errlen);
	return NULL;
}

void roce_ibdev_close(struct roce_ibdev *dev)
{
	if (dev != NULL)
		info_free(&dev->info);
	free(dev);
}

const struct roce_ibdev_info *roce_ibdev_info(const struct roce_ibdev *dev)
{
	return &dev->info;
}

#endif /* ROCELAB_HAVE_IBVERBS */
