/* Protection domains, memory regions (keys, bounds, rights) and address handles. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_private.h"

void *verbs_table_fit(void *tab, uint32_t *cap, uint32_t idx)
{
	uint32_t n = *cap != 0 ? *cap : 16;
	void **t;

	if (idx < *cap)
		return tab;
	while (n <= idx)
		n *= 2;
	t = realloc(tab, n * sizeof(*t));
	if (t == NULL)
		return NULL;
	memset(t + *cap, 0, (n - *cap) * sizeof(*t));
	*cap = n;
	return t;
}

struct roce_pd *roce_alloc_pd(struct roce_device *dev)
{
	struct roce_pd *pd;

	if (dev->npd >= dev->attr.max_pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return NULL;
	pd->dev = dev;
	dev->npd++;
	return pd;
}

int roce_dealloc_pd(struct roce_pd *pd)
{
	if (pd == NULL)
		return 0;
	if (pd->refs != 0)
		return -EBUSY;
	pd->dev->npd--;
	free(pd);
	return 0;
}

struct roce_mr *roce_reg_mr(struct roce_pd *pd, void *addr, uint64_t length, unsigned int access)
{
	const unsigned int all = ROCE_ACCESS_LOCAL_WRITE | ROCE_ACCESS_REMOTE_WRITE |
				 ROCE_ACCESS_REMOTE_READ | ROCE_ACCESS_REMOTE_ATOMIC |
				 ROCE_ACCESS_ZERO_COPY | ROCE_ACCESS_DISCARD;
	struct roce_device *dev = pd->dev;
	struct roce_mr *mr;
	uint32_t idx;
	void *tab;

	/* IBA 10.6.3.1: remote write or atomic rights need local write */
	if ((access & ~all) != 0 || (addr == NULL && length != 0) ||
	    ((access & (ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & ROCE_ACCESS_LOCAL_WRITE)) || length > dev->attr.max_mr_size) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & ROCE_ACCESS_ZERO_COPY) && !roce_engine_zc_prepare(dev->eng))
		access &= ~(unsigned int)ROCE_ACCESS_ZERO_COPY;	/* its frames are copied */
	idx = 0;
	for (uint32_t n = 0; n < VERBS_MAX_MR - 1 && idx == 0; n++) {
		uint32_t i = 1 + (dev->mr_next + n) % (VERBS_MAX_MR - 1); /* no key index 0 */

		if (i >= dev->mr_cap || dev->mr[i] == NULL)
			idx = i;
	}
	if (idx == 0) {
		errno = ENOMEM;
		return NULL;
	}
	tab = verbs_table_fit(dev->mr, &dev->mr_cap, idx);
	if (tab == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	dev->mr = tab;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->lkey = idx << 8 | dev->key_seq++;
	mr->rkey = mr->lkey;
	dev->mr[idx] = mr;
	dev->mr_next = idx;
	dev->nmr++;
	pd->refs++;
	return mr;
}

int roce_dereg_mr(struct roce_mr *mr)
{
	if (mr == NULL)
		return 0;
	mr->pd->dev->mr[mr->lkey >> 8] = NULL;
	mr->pd->dev->nmr--;
	mr->pd->refs--;
	free(mr);
	return 0;
}

uint32_t roce_mr_lkey(const struct roce_mr *mr)
{
	return mr->lkey;
}

uint32_t roce_mr_rkey(const struct roce_mr *mr)
{
	return mr->rkey;
}

void verbs_sge_copy_list(const struct roce_sge *sge, uint32_t num_sge, uint32_t offset,
			 uint8_t *buf, uint32_t len, bool to_sge, uint32_t skip)
{
	uint32_t i = 0;

	while (i < num_sge && offset >= sge[i].length)
		offset -= sge[i++].length;
	while (len > 0 && i < num_sge) {
		uint32_t n = ROCE_MIN(len, sge[i].length - offset);
		uint8_t *p = (uint8_t *)(uintptr_t)sge[i].addr + offset;

		if (to_sge) {
			if (!((skip >> i) & 1))
				memcpy(p, buf, n);
		} else {
			memcpy(buf, p, n);
		}
		buf += n;
		len -= n;
		offset = 0;
		i++;
	}
}

struct roce_ah *roce_create_ah(struct roce_pd *pd, const struct roce_ah_attr *attr)
{
	struct roce_ah *ah;

	if (attr->ip_ver != 4 && attr->ip_ver != 6) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return NULL;
	ah->pd = pd;
	ah->attr = *attr;
	pd->refs++;
	pd->dev->nah++;
	return ah;
}

int roce_destroy_ah(struct roce_ah *ah)
{
	if (ah == NULL)
		return 0;
	ah->pd->refs--;
	ah->pd->dev->nah--;
	free(ah);
	return 0;
}
