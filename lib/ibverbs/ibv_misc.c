/*
 * The rest of libibverbs' public API: strings, rate conversions, fork, address handles from a
 * received completion, and a clear refusal (EOPNOTSUPP) for what the emulated NIC does not
 * model: multicast, memory re-registration, dma-buf, shared objects, ECE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ibv_private.h"
#include "roce_common.h"

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return (unsigned int)status < ROCE_WC_NUM ?
	       roce_wc_status_str((enum roce_wc_status)status) : "unknown";
}

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return node_type >= 0 && (size_t)node_type < ROCE_DIM(s) && s[node_type] != NULL ?
	       s[node_type] : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const s[] = { "no state change (NOP)", "down", "init", "armed",
					 "active", "active deferred" };

	return (size_t)port_state < ROCE_DIM(s) ? s[port_state] : "unknown";
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const s[] = {
		"CQ error", "local work queue catastrophic error", "invalid request local work "
		"queue error", "local access violation work queue error", "communication "
		"established event", "send queue drained event", "path migrated",
		"path migration request error", "local catastrophic error", "port active",
		"port error", "LID change", "P_Key change", "SM change", "SRQ catastrophic error",
		"SRQ limit reached", "last WQE reached", "client reregistration", "GID table change",
		"WQ fatal",
	};

	return (size_t)event < ROCE_DIM(s) ? s[event] : "unknown";
}

/* IBV_RATE_* codes, their multiples of 2.5 Gb/s and their Mb/s. */
static const struct {
	enum ibv_rate rate;
	int mult, mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 }, { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 }, { IBV_RATE_14_GBPS, 0, 14062 },
	{ IBV_RATE_56_GBPS, 22, 56250 }, { IBV_RATE_112_GBPS, 45, 112500 },
	{ IBV_RATE_168_GBPS, 67, 168750 }, { IBV_RATE_25_GBPS, 10, 25781 },
	{ IBV_RATE_100_GBPS, 40, 103125 }, { IBV_RATE_200_GBPS, 80, 206250 },
	{ IBV_RATE_300_GBPS, 120, 309375 }, { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 }, { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
};

int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < ROCE_DIM(rates); i++)
		if (rates[i].rate == rate && rates[i].mult != 0)
			return rates[i].mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < ROCE_DIM(rates); i++)
		if (rates[i].mult == mult && mult != 0)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < ROCE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < ROCE_DIM(rates); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* No memory is pinned by the kernel: fork() needs nothing of the library (a child still
 * cannot use the parent's objects, see ibvr_usable()). */
static bool fork_init;

int ibv_fork_init(void)
{
	fork_init = true;
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return fork_init ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* No asynchronous event is ever raised: a wait for one blocks, as on a quiet device. */
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	uint64_t n;

	(void)event;
	if (read(context->async_fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	errno = EIO;
	return -1;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}

/*
 * The address back to a UD sender, from the 40 bytes in front of the received data: a GRH
 * (IPv6), or the sender's IPv4 header in its last 20, as RoCEv2 NICs leave it.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const uint8_t *g = (const uint8_t *)grh;

	(void)context;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->is_global = 1;
	ah_attr->grh.hop_limit = 0xff;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return -1;
	if ((g[20] >> 4) == 4) {
		ah_attr->grh.dgid.raw[10] = 0xff;
		ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], g + 20 + 12, 4);	/* its source address */
		ah_attr->grh.traffic_class = g[20 + 1];
	} else {
		memcpy(ah_attr->grh.dgid.raw, grh->sgid.raw, 16);
		ah_attr->grh.flow_label = ntohl(grh->version_tclass_flow) & 0xfffff;
		ah_attr->grh.traffic_class = (ntohl(grh->version_tclass_flow) >> 20) & 0xff;
	}
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a) != 0) {
		errno = EINVAL;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	ibvr_say("multicast is not modelled");
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)mr;
	(void)flags;
	(void)pd;
	(void)addr;
	(void)length;
	(void)access;
	ibvr_say("rereg_mr is not modelled: deregister and register anew");
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	ibvr_say("dma-buf memory is not modelled");
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* Enhanced connection establishment: none to offer (perftest goes on without it). */
int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;	/* no promise that data lands in order */
}

const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir;
	(void)file;
	(void)buf;
	(void)size;
	errno = ENOENT;
	return -1;
}
