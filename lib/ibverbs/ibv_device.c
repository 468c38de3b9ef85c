/*
 * The process's one device and its NIC: the device list, contexts, queries, the library's
 * one-line complaints, fork() and exit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ibv_private.h"
#include "roce_common.h"
#include "roce_transport.h"

/* ---- the process: one device, one NIC ---- */

static struct {
	pthread_mutex_t lock;		/* the NIC's start */
	pthread_mutex_t say_lock;	/* @said */
	struct roce_nic *nic;
	pid_t pid;			/* the process the NIC runs in */
	bool forked;
	bool names_asked, guid_asked, opened;	/* opened: ibv_open_device() was called */
	char said[16][96];		/* complaints made once */
	int nsaid;
} ibvr = { .lock = PTHREAD_MUTEX_INITIALIZER, .say_lock = PTHREAD_MUTEX_INITIALIZER };

static struct ibv_device ibvr_device = {
	.node_type = IBV_NODE_CA,
	.transport_type = IBV_TRANSPORT_IB,
	.name = IBVR_DEV_NAME,
	.dev_name = "uverbs_rocelab0",
	.dev_path = "/sys/class/infiniband_verbs/uverbs_rocelab0",
	.ibdev_path = "/sys/class/infiniband/" IBVR_DEV_NAME,
};

void ibvr_say(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ibvr.say_lock);
	for (int i = 0; i < ibvr.nsaid; i++)
		if (strncmp(ibvr.said[i], line, sizeof(ibvr.said[i]) - 1) == 0) {
			pthread_mutex_unlock(&ibvr.say_lock);
			return;
		}
	if (ibvr.nsaid < (int)ROCE_DIM(ibvr.said))
		memcpy(ibvr.said[ibvr.nsaid++], line, sizeof(ibvr.said[0]) - 1);	/* a prefix */
	pthread_mutex_unlock(&ibvr.say_lock);
	fprintf(stderr, IBVR_DEV_NAME ": %s\n", line);
}

static void forked_child(void)
{
	ibvr.forked = true;
	/* the child's copies of the locks may have been held by another thread at fork() */
	pthread_mutex_init(&ibvr.lock, NULL);
	pthread_mutex_init(&ibvr.say_lock, NULL);
}

bool ibvr_usable(void)
{
	if (!ibvr.forked)
		return true;
	ibvr_say("this process is a fork() of pid %d: the NIC and its objects stayed with the "
		 "parent; open the device anew after exec()", (int)ibvr.pid);
	errno = EIO;
	return false;
}

__attribute__((constructor)) static void ibvr_init(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

/* At exit: a program that did not destroy its objects leaves no port or socket behind. */
__attribute__((destructor)) static void ibvr_fini(void)
{
	if (ibvr.forked)
		return;
	if (ibvr.names_asked && !ibvr.guid_asked && !ibvr.opened)
		ibvr_say("the program looked for a device by name and opened none: under rocelab "
			 "exec the only device is " IBVR_DEV_NAME);
	roce_nic_stop(ibvr.nic);
	ibvr.nic = NULL;
}

/* The NIC, started at the first open from what `rocelab exec` put in the environment. */
static struct roce_nic *nic_get(void)
{
	struct roce_nic_conf conf = { 0 };
	const char *ip = getenv("ROCELAB_IP"), *rate = getenv("ROCELAB_RATE");
	char err[256];

	if (ibvr.nic != NULL)
		return ibvr.nic;
	conf.devargs = getenv("ROCELAB_DEV");
	conf.capture = getenv("ROCELAB_CAPTURE");
	conf.eal_args = getenv("ROCELAB_EAL");
	if (conf.devargs == NULL) {
		ibvr_say("no port: run the program under `rocelab exec --dev DEVARGS --ip ADDR -- "
			 "PROGRAM`");
		errno = ENODEV;
		return NULL;
	}
	if (ip != NULL && inet_pton(AF_INET, ip, conf.ip.b) == 1)
		conf.ip_ver = 4;
	else if (ip != NULL && inet_pton(AF_INET6, ip, conf.ip.b) == 1)
		conf.ip_ver = 6;
	if (rate != NULL)
		conf.rate_bps = strtoull(rate, NULL, 10);
	ibvr.nic = roce_nic_start(&conf, err, sizeof(err));
	if (ibvr.nic == NULL) {
		int e = errno;

		ibvr_say("cannot start the NIC on port %s: %s", conf.devargs, err);
		errno = e != 0 ? e : ENODEV;
		return NULL;
	}
	ibvr.pid = getpid();
	return ibvr.nic;
}

/* ---- device list ---- */

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l = calloc(2, sizeof(*l));

	if (l == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = &ibvr_device;
	if (num_devices != NULL)
		*num_devices = 1;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	ibvr.names_asked = true;
	return device->name;
}

int ibv_get_device_index(struct ibv_device *device)
{
	return device == &ibvr_device ? 0 : -1;
}

/* The node GUID: EUI-64 from the port's MAC, as rxe makes it; before the NIC runs, none. */
static uint64_t node_guid(void)
{
	struct roce_device_attr a;

	if (ibvr.nic == NULL || roce_query_device(roce_nic_device(ibvr.nic), &a) != 0)
		return 0;
	return a.node_guid;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	(void)device;
	ibvr.guid_asked = true;
	return htobe64(node_guid());
}

static void context_ops(struct ibvr_context *c);

/* ---- context ---- */

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct ibvr_context *c;
	struct roce_nic *nic;

	ibvr.opened = true;
	if (!ibvr_usable())
		return NULL;
	if (device != &ibvr_device) {
		ibvr_say("only " IBVR_DEV_NAME " is here: the device asked for is not one of ours");
		errno = ENODEV;
		return NULL;
	}
	pthread_mutex_lock(&ibvr.lock);
	nic = nic_get();
	pthread_mutex_unlock(&ibvr.lock);
	if (nic == NULL)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->nic = nic;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.context.device = device;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.context.cmd_fd = -1;
	/* no asynchronous event is raised: a thread waiting for one waits, as on a quiet device */
	c->vctx.context.async_fd = eventfd(0, EFD_CLOEXEC);
	c->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	context_ops(c);
	return &c->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct ibvr_context *c = to_ictx(context);

	if (c->vctx.context.async_fd >= 0)
		close(c->vctx.context.async_fd);
	pthread_mutex_destroy(&c->vctx.context.mutex);
	free(c);
	/* the NIC stays up until exit: the peer may still need its last ACKs */
	return 0;
}

/* ---- queries ---- */

static void fill_device_attr(struct ibv_context *ctx, struct ibv_device_attr *o)
{
	struct roce_device_attr a;

	roce_query_device(roce_nic_device(to_ictx(ctx)->nic), &a);
	memset(o, 0, sizeof(*o));
	snprintf(o->fw_ver, sizeof(o->fw_ver), "%s", a.fw_ver);
	o->node_guid = htobe64(a.node_guid);
	o->sys_image_guid = o->node_guid;
	o->max_mr_size = a.max_mr_size;
	o->page_size_cap = 0xfffff000;
	/* no vendor's part: perftest then posts with ibv_post_send, not its mlx5/efa paths */
	o->vendor_id = 0;
	o->vendor_part_id = 0;
	o->hw_ver = 0;
	o->max_qp = (int)a.max_qp;
	o->max_qp_wr = (int)a.max_qp_wr;
	o->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_PORT_ACTIVE_EVENT;
	o->max_sge = (int)ROCE_MIN(a.max_sge, (uint32_t)ROCE_NIC_MAX_SGE);
	o->max_sge_rd = o->max_sge;
	o->max_cq = (int)a.max_cq;
	o->max_cqe = (int)a.max_cqe;
	o->max_mr = (int)a.max_mr;
	o->max_pd = (int)a.max_pd;
	o->max_qp_rd_atom = a.max_qp_rd_atom;
	o->max_res_rd_atom = a.max_qp_rd_atom * a.max_qp;
	o->max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	o->atomic_cap = IBV_ATOMIC_HCA;
	o->max_srq = (int)a.max_srq;
	o->max_srq_wr = (int)a.max_srq_wr;
	o->max_srq_sge = o->max_sge;
	o->max_pkeys = 1;
	o->local_ca_ack_delay = 15;
	o->phys_port_cnt = a.phys_port_cnt;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	fill_device_attr(context, device_attr);
	return 0;
}

static int ibvr_query_device_ex(struct ibv_context *context,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	fill_device_attr(context, &a.orig_attr);
	a.max_dm_size = 0;
	memcpy(attr, &a, ROCE_MIN(attr_size, sizeof(a)));
	return 0;
}

/* IB's speed and width codes for a link rate. */
static void port_speed(uint64_t bps, uint8_t *speed, uint8_t *width)
{
	static const struct { uint64_t bps; uint8_t speed, width; } t[] = {
		{ 400000000000ull, 64, 2 },	/* HDR 4x */
		{ 200000000000ull, 32, 2 },	/* HDR ... as EDR 4x at 50G per lane */
		{ 100000000000ull, 32, 2 },	/* EDR 4x */
		{ 56000000000ull, 16, 2 },	/* FDR 4x */
		{ 40000000000ull, 8, 2 },	/* QDR 4x */
		{ 25000000000ull, 32, 1 },	/* EDR 1x */
		{ 10000000000ull, 8, 1 },	/* QDR 1x */
	};

	for (size_t i = 0; i < ROCE_DIM(t); i++)
		if (bps >= t[i].bps) {
			*speed = t[i].speed;
			*width = t[i].width;
			return;
		}
	*speed = 1;
	*width = 1;
}

static int ibvr_query_port(struct ibv_context *context, uint8_t port_num,
			   struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct roce_port_attr a;
	struct ibv_port_attr o;

	if (roce_query_port(roce_nic_device(to_ictx(context)->nic), port_num, &a) != 0)
		return EINVAL;
	memset(&o, 0, sizeof(o));
	o.state = a.state == ROCE_PORT_ACTIVE ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	o.max_mtu = (enum ibv_mtu)a.max_mtu;
	o.active_mtu = (enum ibv_mtu)a.active_mtu;
	o.gid_tbl_len = IBVR_GIDS;
	o.port_cap_flags = IBV_PORT_CM_SUP;
	o.max_msg_sz = 0x80000000u;
	o.pkey_tbl_len = 1;
	o.phys_state = a.state == ROCE_PORT_ACTIVE ? 5 : 3;	/* LinkUp, Disabled */
	o.link_layer = IBV_LINK_LAYER_ETHERNET;
	port_speed(a.speed_bps, &o.active_speed, &o.active_width);
	memcpy(port_attr, &o, ROCE_MIN(port_attr_len, sizeof(o)));
	return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr);
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	/* the layout of old programs' struct: up to and with link_layer */
	return ibvr_query_port(context, port_num, (struct ibv_port_attr *)(void *)port_attr,
			       offsetof(struct ibv_port_attr, flags));
}

/*
 * rocelab0's GID table: its addresses' RoCEv2 GIDs (IPv6, or IPv4 mapped into it as
 * ::ffff:a.b.c.d), from index 0. The device's own table starts with the MAC's link-local GID,
 * as rxe's does; a program here is given the address that --ip set at the index it most
 * likely asks for (ibv_*_pingpong -g 0, perftest -x 0), and perftest's choice of a RoCEv2
 * GID finds it first.
 */
static int gid_of(struct ibv_context *context, uint8_t port, int index, union ibv_gid *gid)
{
	struct roce_ip_addr ip;

	if (index < 0 || index >= IBVR_GIDS ||
	    roce_query_gid(roce_nic_device(to_ictx(context)->nic), port, index + 1, &ip) != 0)
		return EINVAL;
	memcpy(gid->raw, ip.b, 16);
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	return gid_of(context, port_num, index, gid) == 0 ? 0 : -1;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = { 0 };

	if (flags != 0 || port_num > 255 || gid_index > INT32_MAX)
		return EINVAL;
	if (gid_of(context, (uint8_t)port_num, (int)gid_index, &e.gid) != 0)
		return ENODATA;
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	e.ndev_ifindex = 0;
	memcpy(entry, &e, ROCE_MIN(entry_size, sizeof(e)));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	size_t n = 0;

	if (flags != 0)
		return -EINVAL;
	while (n < max_entries &&
	       _ibv_query_gid_ex(context, 1, (uint32_t)n,
				 (struct ibv_gid_entry *)((char *)entries + n * entry_size), 0,
				 entry_size) == 0)
		n++;
	return (ssize_t)n;
}

/* rdma-core's private query, which perftest calls to choose a RoCEv2 GID: ours all are. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type)
{
	union ibv_gid gid;

	if (index > INT32_MAX || gid_of(context, port_num, (int)index, &gid) != 0) {
		errno = EINVAL;
		return -1;
	}
	*type = 1;	/* IBV_GID_TYPE_SYSFS_ROCE_V2 */
	return 0;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	(void)context;
	if (port_num != 1 || index != 0)
		return -1;
	*pkey = htons(0xffff);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	(void)context;
	return port_num == 1 && (ntohs(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

/* ---- the op table the data path's inline wrappers reach ---- */

static void context_ops(struct ibvr_context *c)
{
	struct ibv_context_ops *ops = &c->vctx.context.ops;

	ops->poll_cq = ibvr_poll_cq;
	ops->req_notify_cq = ibvr_req_notify_cq;
	ops->post_send = ibvr_post_send;
	ops->post_recv = ibvr_post_recv;
	ops->post_srq_recv = ibvr_post_srq_recv;
	c->vctx.query_port = ibvr_query_port;
	c->vctx.query_device_ex = ibvr_query_device_ex;
	c->vctx.create_qp_ex = ibvr_create_qp_ex;
}
