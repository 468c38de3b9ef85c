/* lib/transport: the emulated NIC: device creation, its port, counters and event trace. */
#ifndef ROCE_TRANSPORT_H
#define ROCE_TRANSPORT_H

#include <stdint.h>
#include <stdio.h>

#include "roce_engine.h"
#include "roce_verbs.h"

/**
 * Create an emulated RoCE device (a NIC with one port) whose transport runs on @p eng.
 * @return the device, or NULL with errno set
 */
struct roce_device *roce_device_create(struct roce_engine *eng, const struct roce_device_conf *conf);

/** Destroy: -EBUSY while PDs, CQs, QPs, SRQs or AHs exist; NULL: 0. */
int roce_device_destroy(struct roce_device *dev);

/** The endpoint to give roce_link_create() for this device's port. */
struct roce_link_end roce_device_link_end(struct roce_device *dev);

/** Send through direction @p dir of @p link (the direction whose sender is this device). */
void roce_device_attach(struct roce_device *dev, struct roce_link *link, int dir);

/** Number of device counters; their names and values, in a fixed order (ethtool -S style). */
int roce_device_ncounters(void);
const char *roce_device_counter_name(int i);
uint64_t roce_device_counter(const struct roce_device *dev, int i);

/** Value of the counter called @p name, or UINT64_MAX if there is none. */
uint64_t roce_device_counter_by_name(const struct roce_device *dev, const char *name);

void roce_qp_stats(const struct roce_qp *qp, struct roce_qp_stats *st);

/**
 * Write one line per transport decision (retry, NAK, RNR wait, timeout, error, flush) to @p f,
 * with the engine time: "   12.345678 us rocelab0 qp 0x11 timeout psn 42 retry 6 left".
 * NULL turns the trace off.
 */
void roce_device_set_trace(struct roce_device *dev, FILE *f);

#endif /* ROCE_TRANSPORT_H */
