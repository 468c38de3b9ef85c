/*
 * Linked only into a rocelab that links DPDK statically (apps/rocelab/meson.build).
 *
 * A DPDK secondary process such as dpdk-dumpcap attaches to rocelab (--eal --pdump) only if
 * every tail queue it registers is already in the primary's shared configuration. Debian's
 * dpdk-dumpcap links the shared DPDK and loads every installed driver, and with them libraries
 * a static rocelab leaves out (reorder, lpm, fib, ...): their queues would be missing and the
 * secondary's EAL init fails ("Cannot initialize tailq: RTE_REORDER"). Registering the names
 * costs a list entry each; a queue nobody fills stays empty.
 */
#include <rte_log.h>
#include <rte_tailq.h>

#include "rocelab.h"

/*
 * The tail queues of DPDK 22.11's libraries, buses and drivers (EAL_REGISTER_TAILQ in its
 * sources); tests/pdump.py fails with the name when one is missing.
 */
static struct rte_tailq_elem tailqs[] = {
	{ .name = "RTE_ACL" },
	{ .name = "RTE_DISTRIBUTOR" },
	{ .name = "RTE_EFD" },
	{ .name = "RTE_EVENT_RING" },
	{ .name = "RTE_FBK_HASH" },
	{ .name = "RTE_FIB" },
	{ .name = "RTE_FIB6" },
	{ .name = "RTE_HASH" },
	{ .name = "RTE_LPM" },
	{ .name = "RTE_LPM6" },
	{ .name = "RTE_MBUF_DYNFIELD" },
	{ .name = "RTE_MBUF_DYNFLAG" },
	{ .name = "RTE_MEMBER" },
	{ .name = "RTE_MEMPOOL" },
	{ .name = "RTE_REORDER" },
	{ .name = "RTE_RIB" },
	{ .name = "RTE_RIB6" },
	{ .name = "RTE_RING" },
	{ .name = "RTE_STACK" },
	{ .name = "RTE_SWX_CTL_PIPELINE" },
	{ .name = "RTE_SWX_PIPELINE" },
	{ .name = "RTE_THASH" },
	{ .name = "VMBUS_RESOURCE_LIST" },
};

void rocelab_register_tailqs(void)
{
	int level = rte_log_get_level(RTE_LOGTYPE_EAL);

	/* the queues of the libraries linked in are registered already: that is no error here */
	rte_log_set_level(RTE_LOGTYPE_EAL, RTE_LOG_EMERG);
	for (size_t i = 0; i < sizeof(tailqs) / sizeof(tailqs[0]); i++)
		(void)rte_eal_tailq_register(&tailqs[i]);
	rte_log_set_level(RTE_LOGTYPE_EAL, (uint32_t)level);
}
