/* The device object: attributes, GID table, status names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_private.h"

/* rdma-core's ibv_wc_status_str() texts, so logs read the same as on a real RNIC. */
static const char *const wc_status_str[] = {
	[ROCE_WC_SUCCESS] = "success",
	[ROCE_WC_LOC_LEN_ERR] = "local length error",
	[ROCE_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[ROCE_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[ROCE_WC_LOC_PROT_ERR] = "local protection error",
	[ROCE_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
	[ROCE_WC_MW_BIND_ERR] = "memory management operation error",
	[ROCE_WC_BAD_RESP_ERR] = "bad response error",
	[ROCE_WC_LOC_ACCESS_ERR] = "local access error",
	[ROCE_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[ROCE_WC_REM_ACCESS_ERR] = "remote access error",
	[ROCE_WC_REM_OP_ERR] = "remote operation error",
	[ROCE_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[ROCE_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[ROCE_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[ROCE_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[ROCE_WC_REM_ABORT_ERR] = "aborted error",
	[ROCE_WC_INV_EECN_ERR] = "invalid EE context number",
	[ROCE_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[ROCE_WC_FATAL_ERR] = "fatal error",
	[ROCE_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[ROCE_WC_GENERAL_ERR] = "general error",
};
ROCE_STATIC_ASSERT(ROCE_DIM(wc_status_str) == ROCE_WC_NUM);

static const char *const wc_status_name[] = {
	[ROCE_WC_SUCCESS] = "SUCCESS",
	[ROCE_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
	[ROCE_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
	[ROCE_WC_LOC_EEC_OP_ERR] = "LOC_EEC_OP_ERR",
	[ROCE_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
	[ROCE_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
	[ROCE_WC_MW_BIND_ERR] = "MW_BIND_ERR",
	[ROCE_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
	[ROCE_WC_LOC_ACCESS_ERR] = "LOC_ACCESS_ERR",
	[ROCE_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
	[ROCE_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	[ROCE_WC_REM_OP_ERR] = "REM_OP_ERR",
	[ROCE_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
	[ROCE_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
	[ROCE_WC_LOC_RDD_VIOL_ERR] = "LOC_RDD_VIOL_ERR",
	[ROCE_WC_REM_INV_RD_REQ_ERR] = "REM_INV_RD_REQ_ERR",
	[ROCE_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
	[ROCE_WC_INV_EECN_ERR] = "INV_EECN_ERR",
	[ROCE_WC_INV_EEC_STATE_ERR] = "INV_EEC_STATE_ERR",
	[ROCE_WC_FATAL_ERR] = "FATAL_ERR",
	[ROCE_WC_RESP_TIMEOUT_ERR] = "RESP_TIMEOUT_ERR",
	[ROCE_WC_GENERAL_ERR] = "GENERAL_ERR",
};
ROCE_STATIC_ASSERT(ROCE_DIM(wc_status_name) == ROCE_WC_NUM);

const char *roce_wc_status_str(enum roce_wc_status status)
{
	return (unsigned int)status < ROCE_WC_NUM ? wc_status_str[status] : "unknown";
}

const char *roce_wc_status_name(enum roce_wc_status status)
{
	return (unsigned int)status < ROCE_WC_NUM ? wc_status_name[status] : "?";
}

enum roce_mtu roce_mtu_from_bytes(uint32_t bytes)
{
	for (enum roce_mtu m = ROCE_MTU_256; m <= ROCE_MTU_4096; m++)
		if (roce_mtu_bytes(m) == bytes)
			return m;
	return 0;
}

const char *roce_device_name(const struct roce_device *dev)
{
	return dev->name;
}

int roce_query_device(const struct roce_device *dev, struct roce_device_attr *attr)
{
	*attr = dev->attr;
	return 0;
}

int roce_query_port(const struct roce_device *dev, uint8_t port, struct roce_port_attr *attr)
{
	if (port != 1)
		return -EINVAL;
	*attr = dev->port;
	return 0;
}

int roce_query_gid(const struct roce_device *dev, uint8_t port, int index, struct roce_ip_addr *gid)
{
	const uint8_t *mac = dev->conf.mac;

	if (port != 1 || index < 0 || index > 4)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	if (index == 0) {
		/* fe80::/64 with the modified EUI-64 of the MAC (RFC 4291 appendix A) */
		gid->b[0] = 0xfe;
		gid->b[1] = 0x80;
		gid->b[8] = mac[0] ^ 2;
		gid->b[9] = mac[1];
		gid->b[10] = mac[2];
		gid->b[11] = 0xff;
		gid->b[12] = 0xfe;
		gid->b[13] = mac[3];
		gid->b[14] = mac[4];
		gid->b[15] = mac[5];
		return 0;
	}
	if (dev->conf.ip_ver[index - 1] == 4) {
		gid->b[10] = gid->b[11] = 0xff;
		memcpy(gid->b + 12, dev->conf.ip[index - 1].b, 4);
		return 0;
	}
	if (dev->conf.ip_ver[index - 1] == 6) {
		*gid = dev->conf.ip[index - 1];
		return 0;
	}
	return -EINVAL;
}
