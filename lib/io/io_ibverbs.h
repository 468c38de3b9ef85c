/*
 * lib/io internals for the libibverbs provider (lib/front/front_ibv.c): the libibverbs functions
 * io_ibdev.c resolved, and the context of an open device. Only with rdma-core's headers.
 */
#ifndef IO_IBVERBS_H
#define IO_IBVERBS_H

#ifdef ROCELAB_HAVE_IBVERBS

#include <sys/types.h>

#include <infiniband/verbs.h>

#include "roce_ibdev.h"

/*
 * The functions rocelab calls, resolved by roce_ibdev_load() at the version node of the ABI they
 * were built against. Members are named apart from verbs.h's macros (ibv_query_port and
 * ibv_reg_mr are ones) and typed from its prototypes, which is no reference to them.
 */
struct roce_ibverbs {
	__typeof__(&ibv_get_device_list) get_device_list;
	__typeof__(&ibv_free_device_list) free_device_list;
	__typeof__(&ibv_get_device_name) get_device_name;
	__typeof__(&ibv_open_device) open_device;
	__typeof__(&ibv_close_device) close_device;
	__typeof__(&ibv_query_device) query_device;
	int (*query_port_compat)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
	ssize_t (*query_gid_table)(struct ibv_context *, struct ibv_gid_entry *, size_t, uint32_t,
				   size_t);
	__typeof__(&ibv_alloc_pd) alloc_pd;
	__typeof__(&ibv_dealloc_pd) dealloc_pd;
	__typeof__(&ibv_reg_mr_iova2) reg_mr_iova2;
	__typeof__(&ibv_dereg_mr) dereg_mr;
	__typeof__(&ibv_create_cq) create_cq;
	__typeof__(&ibv_destroy_cq) destroy_cq;
	__typeof__(&ibv_create_qp) create_qp;
	__typeof__(&ibv_modify_qp) modify_qp;
	__typeof__(&ibv_destroy_qp) destroy_qp;
	__typeof__(&ibv_create_ah) create_ah;
	__typeof__(&ibv_destroy_ah) destroy_ah;
};

/** The resolved functions: valid once roce_ibdev_load() returned 0. */
extern struct roce_ibverbs roce_ibv;

/** The verbs context of an open device. */
struct ibv_context *roce_ibdev_context(const struct roce_ibdev *dev);

#endif /* ROCELAB_HAVE_IBVERBS */

#endif /* IO_IBVERBS_H */
