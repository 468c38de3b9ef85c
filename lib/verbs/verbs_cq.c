/* Completion queues, receive queues and shared receive queues. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "verbs_private.h"

struct roce_cq *roce_create_cq(struct roce_device *dev, int cqe)
{
	struct roce_cq *cq;
	uint32_t size;

	if (cqe < 1 || (uint32_t)cqe > dev->attr.max_cqe || dev->ncq >= dev->attr.max_cq) {
		errno = EINVAL;
		return NULL;
	}
	size = rte_align32pow2((uint32_t)cqe);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (cq->ring == NULL) {
		free(cq);
		return NULL;
	}
	cq->dev = dev;
	cq->mask = size - 1;
	cq->depth = (uint32_t)cqe;
	dev->ncq++;
	return cq;
}

int roce_destroy_cq(struct roce_cq *cq)
{
	if (cq == NULL)
		return 0;
	if (cq->refs != 0)
		return -EBUSY;
	cq->dev->ncq--;
	free(cq->ring);
	free(cq);
	return 0;
}

bool verbs_cq_push(struct roce_cq *cq, const struct roce_wc *wc)
{
	struct roce_wc *slot = verbs_cq_reserve(cq);

	if (slot == NULL)
		return false;
	*slot = *wc;
	verbs_cq_commit(cq);
	return true;
}

void roce_cq_set_notify(struct roce_cq *cq, roce_cq_notify_fn fn, void *arg)
{
	cq->notify = fn;
	cq->notify_arg = arg;
}

int roce_poll_cq(struct roce_cq *cq, int num, struct roce_wc *wc)
{
	int n = 0;

	while (n < num && cq->head != cq->tail)
		wc[n++] = cq->ring[cq->head++ & cq->mask];
	if (n == 0 && cq->overflow)
		return -EOVERFLOW;
	return n;
}

int verbs_rq_init(struct verbs_rq *rq, uint32_t max_wr, uint32_t max_sge)
{
	memset(rq, 0, sizeof(*rq));
	rq->size = rte_align32pow2(max_wr < 1 ? 1 : max_wr);
	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->stride = (uint32_t)(sizeof(struct verbs_recv_wqe) + max_sge * sizeof(struct roce_sge));
	rq->ring = calloc(rq->size, rq->stride);
	return rq->ring == NULL ? -ENOMEM : 0;
}

void verbs_rq_free(struct verbs_rq *rq)
{
	free(rq->ring);
	rq->ring = NULL;
}

struct roce_srq *roce_create_srq(struct roce_pd *pd, uint32_t max_wr, uint32_t max_sge)
{
	struct roce_device *dev = pd->dev;
	struct roce_srq *srq;

	if (max_wr == 0 || max_wr > dev->attr.max_srq_wr || max_sge > dev->attr.max_sge ||
	    dev->nsrq >= dev->attr.max_srq) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return NULL;
	if (verbs_rq_init(&srq->rq, max_wr, max_sge) != 0) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->pd = pd;
	pd->refs++;
	dev->nsrq++;
	return srq;
}

int roce_destroy_srq(struct roce_srq *srq)
{
	if (srq == NULL)
		return 0;
	if (srq->refs != 0)
		return -EBUSY;
	srq->pd->refs--;
	srq->pd->dev->nsrq--;
	verbs_rq_free(&srq->rq);
	free(srq);
	return 0;
}

int roce_post_srq_recv(struct roce_srq *srq, const struct roce_recv_wr *wr,
		       const struct roce_recv_wr **bad_wr)
{
	const struct roce_recv_wr *bad;
	int rc = verbs_rq_post(&srq->rq, wr, &bad);

	if (rc != 0 && bad_wr != NULL)
		*bad_wr = bad;
	return rc;
}
