/*
 * lib/io: real RDMA devices through rdma-core's libibverbs, loaded at run time (dlopen), so that
 * rocelab builds, runs and tests on a machine without rdma-core or without RDMA in its kernel.
 * What a device reports: its ports, their state, MTU, speed and width, and their GID tables.
 */
#ifndef ROCE_IBDEV_H
#define ROCE_IBDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a GID table entry is for (rdma-core's enum ibv_gid_type). */
enum roce_gid_type {
	ROCE_GID_IB,			/* InfiniBand */
	ROCE_GID_ROCE_V1,		/* RoCE v1: Ethernet, EtherType 0x8915 */
	ROCE_GID_ROCE_V2,		/* RoCE v2: UDP port 4791 */
};

/* One valid entry of a port's GID table. */
struct roce_ibdev_gid {
	uint32_t index;			/* the GID index (perftest's -x) */
	uint8_t gid[16];		/* the GID; ::ffff:a.b.c.d for an IPv4 address */
	enum roce_gid_type type;
	char netdev[16];		/* the network interface it belongs to; "" for none */
};

/* One port, as ibv_query_port() and the GID table describe it. */
struct roce_ibdev_port {
	uint8_t num;			/* port number, from 1 */
	uint8_t state;			/* enum ibv_port_state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE */
	bool ethernet;			/* link layer Ethernet (RoCE); otherwise InfiniBand */
	uint32_t active_mtu;		/* path MTU in use, bytes (256-4096) */
	uint32_t max_mtu;		/* largest it supports, bytes */
	uint8_t lanes;			/* active width: 1, 2, 4, 8 or 12; 0 if unknown */
	double lane_gbps;		/* active speed of one lane, Gb/s; 0 if unknown */
	uint32_t gid_tbl_len;		/* slots in the GID table */
	uint32_t n_gids;		/* valid entries in @gids, by index */
	struct roce_ibdev_gid *gids;
};

/* One device, as ibv_query_device() and its ports describe it. */
struct roce_ibdev_info {
	char name[64];			/* "rxe0", "mlx5_0" */
	char fw_ver[64];		/* "" when the device has none */
	uint64_t node_guid;		/* host order */
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t max_qp_wr;		/* work requests a queue may hold */
	uint32_t max_sge;		/* scatter/gather elements a work request may have */
	uint32_t max_qp_rd_atom;	/* READs and atomics a QP may answer at once */
	uint32_t max_qp_init_rd_atom;	/* ... and have outstanding */
	bool atomics;			/* atomic operations supported */
	uint8_t n_ports;
	struct roce_ibdev_port *ports;	/* n_ports, port i + 1 at [i] */
};

struct roce_ibdev;

/**
 * Load libibverbs (once for the process; later calls return the first result). The library is
 * libibverbs.so.1, or the file named by $ROCELAB_LIBIBVERBS (an rdma-core build not installed).
 * @return 0; -ENOENT (not installed: @p err names the package), -ENOSYS (a libibverbs older than
 *         rdma-core v32: @p err names the symbol), -ENOTSUP (rocelab built without its headers)
 */
int roce_ibdev_load(char *err, size_t errlen);

/**
 * The names of the RDMA devices, comma-separated, in @p out (loads libibverbs).
 * @return how many; -ENOSYS (no RDMA support in this kernel), or roce_ibdev_load()'s errors,
 *         with @p err set
 */
int roce_ibdev_names(char *out, size_t outlen, char *err, size_t errlen);

/**
 * Open device @p name (loads libibverbs) and query it, its ports and their GID tables.
 * @return the device, or NULL with errno set and @p err one line: ENODEV (no such device: the
 *         line lists those there are), ENOSYS (no RDMA in the kernel), an errno of the device's
 */
struct roce_ibdev *roce_ibdev_open(const char *name, char *err, size_t errlen);

/** Close a device (NULL: nothing). */
void roce_ibdev_close(struct roce_ibdev *dev);

/** What the device reported when it was opened; valid until roce_ibdev_close(). */
const struct roce_ibdev_info *roce_ibdev_info(const struct roce_ibdev *dev);

/* ---- the device's numbers, decoded (no libibverbs needed) ---- */

/** Lanes of an ibv_port_attr active_width (1, 2, 4, 8, 16 -> 1, 4, 8, 12, 2). 0: unknown. */
uint8_t roce_ibdev_lanes(uint8_t active_width);

/** Gb/s of one lane at an ibv_port_attr active_speed (1 -> 2.5 ... 128 -> 100). 0: unknown. */
double roce_ibdev_lane_gbps(uint8_t active_speed);

/** Bytes of an enum ibv_mtu (1-5 -> 256-4096). 0: not one. */
uint32_t roce_ibdev_mtu_bytes(int ibv_mtu);

/** Name of an enum ibv_port_state, as `ibv_devinfo` prints it ("PORT_ACTIVE"). */
const char *roce_ibdev_port_state_name(uint8_t state);

/** Name of a GID type, as the kernel's sysfs gid_attrs/types prints it ("RoCE v2"). */
const char *roce_gid_type_name(enum roce_gid_type type);

/** Whether @p gid is an IPv4-mapped address (::ffff:a.b.c.d). */
bool roce_gid_is_ipv4(const uint8_t gid[16]);

/** @p gid as text: a dotted IPv4 address when mapped, else IPv6 notation. @return @p out */
const char *roce_gid_text(const uint8_t gid[16], char *out, size_t outlen);

/**
 * The GID a RoCE v2 workload uses on @p port, as perftest chooses it: @p want (-x) when >= 0,
 * which must be a RoCE v2 entry; otherwise the first RoCE v2 entry of the wanted family (IPv4
 * unless @p ipv6), preferring it over RoCE v1, as perftest's get_best_gid_index().
 * @return the entry; NULL with @p err naming what is wrong (no such index, not RoCE v2, none of
 *         that family) and listing the entries that would do
 */
const struct roce_ibdev_gid *roce_ibdev_gid_pick(const struct roce_ibdev_port *port, int want,
						 bool ipv6, char *err, size_t errlen);

#endif /* ROCE_IBDEV_H */
