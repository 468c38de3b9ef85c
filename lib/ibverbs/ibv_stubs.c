/*
 * libibverbs' private interface (IBVERBS_PRIVATE_34), for rdma-core's providers and librdmacm:
 * programs such as perftest link libmlx5, libefa and librdmacm, which bind these symbols when
 * they load. rocelab0 is not theirs, so none of them is called on its objects; if one is, it
 * refuses with EOPNOTSUPP (or does nothing, for those that return nothing) and never crashes.
 * The prototypes are deliberately loose: no caller of ours sees them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define STUB_INT(name) \
	int name(void); \
	int name(void) { errno = EOPNOTSUPP; return EOPNOTSUPP; }
#define STUB_PTR(name) \
	void *name(void); \
	void *name(void) { errno = EOPNOTSUPP; return NULL; }
#define STUB_VOID(name) \
	void name(void); \
	void name(void) { }

bool verbs_allow_disassociate_destroy;

STUB_VOID(__verbs_log)
STUB_VOID(verbs_register_driver_34)	/* a provider's constructor: nothing to register */
STUB_VOID(verbs_set_ops)
STUB_VOID(verbs_uninit_context)
STUB_VOID(verbs_init_cq)
STUB_VOID(ibv_copy_path_rec_from_kern)
STUB_VOID(ibv_copy_path_rec_to_kern)
STUB_VOID(ibv_copy_qp_attr_from_kern)
STUB_VOID(ibv_copy_ah_attr_from_kern)
STUB_PTR(_verbs_init_and_alloc_context)
STUB_PTR(verbs_open_device)
STUB_INT(__ioctl_final_num_attrs)
STUB_INT(execute_ioctl)
STUB_INT(ibv_read_ibdev_sysfs_file)
STUB_INT(ibv_resolve_eth_l2_from_gid)
STUB_INT(ibv_cmd_advise_mr)
STUB_INT(ibv_cmd_alloc_dm)
STUB_INT(ibv_cmd_alloc_mw)
STUB_INT(ibv_cmd_alloc_pd)
STUB_INT(ibv_cmd_attach_mcast)
STUB_INT(ibv_cmd_close_xrcd)
STUB_INT(ibv_cmd_create_ah)
STUB_INT(ibv_cmd_create_counters)
STUB_INT(ibv_cmd_create_cq)
STUB_INT(ibv_cmd_create_cq_ex)
STUB_INT(ibv_cmd_create_flow)
STUB_INT(ibv_cmd_create_flow_action_esp)
STUB_INT(ibv_cmd_create_qp)
STUB_INT(ibv_cmd_create_qp_ex)
STUB_INT(ibv_cmd_create_qp_ex2)
STUB_INT(ibv_cmd_create_rwq_ind_table)
STUB_INT(ibv_cmd_create_srq)
STUB_INT(ibv_cmd_create_srq_ex)
STUB_INT(ibv_cmd_create_wq)
STUB_INT(ibv_cmd_dealloc_mw)
STUB_INT(ibv_cmd_dealloc_pd)
STUB_INT(ibv_cmd_dereg_mr)
STUB_INT(ibv_cmd_destroy_ah)
STUB_INT(ibv_cmd_destroy_counters)
STUB_INT(ibv_cmd_destroy_cq)
STUB_INT(ibv_cmd_destroy_flow)
STUB_INT(ibv_cmd_destroy_flow_action)
STUB_INT(ibv_cmd_destroy_qp)
STUB_INT(ibv_cmd_destroy_rwq_ind_table)
STUB_INT(ibv_cmd_destroy_srq)
STUB_INT(ibv_cmd_destroy_wq)
STUB_INT(ibv_cmd_detach_mcast)
STUB_INT(ibv_cmd_free_dm)
STUB_INT(ibv_cmd_get_context)
STUB_INT(ibv_cmd_modify_cq)
STUB_INT(ibv_cmd_modify_flow_action_esp)
STUB_INT(ibv_cmd_modify_qp)
STUB_INT(ibv_cmd_modify_qp_ex)
STUB_INT(ibv_cmd_modify_srq)
STUB_INT(ibv_cmd_modify_wq)
STUB_INT(ibv_cmd_open_qp)
STUB_INT(ibv_cmd_open_xrcd)
STUB_INT(ibv_cmd_poll_cq)
STUB_INT(ibv_cmd_post_recv)
STUB_INT(ibv_cmd_post_send)
STUB_INT(ibv_cmd_post_srq_recv)
STUB_INT(ibv_cmd_query_context)
STUB_INT(ibv_cmd_query_device_any)
STUB_INT(ibv_cmd_query_mr)
STUB_INT(ibv_cmd_query_port)
STUB_INT(ibv_cmd_query_qp)
STUB_INT(ibv_cmd_query_srq)
STUB_INT(ibv_cmd_read_counters)
STUB_INT(ibv_cmd_reg_dm_mr)
STUB_INT(ibv_cmd_reg_dmabuf_mr)
STUB_INT(ibv_cmd_reg_mr)
STUB_INT(ibv_cmd_req_notify_cq)
STUB_INT(ibv_cmd_rereg_mr)
STUB_INT(ibv_cmd_resize_cq)
