/* The engine: its mbuf pool, its one RNG, and the run loop under either clock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "eng_private.h"
#include "roce_wire.h"

#define ENG_DEF_MBUFS 16384	/* conf.nb_mbufs == 0 */
#define ENG_DEF_DATA 9216	/* conf.mbuf_data == 0: a jumbo frame, plus the headroom */
#define ENG_POOL_CACHE 256	/* per-lcore mempool cache */
#define ENG_HUGE_SHIFT 21	/* 2 MiB: the transparent huge page of x86-64 and arm64 */

/* Pool names must be unique in the process: tests and scale-out runs create several engines. */
static uint32_t eng_instances;

/* splitmix64: expands one 64-bit seed into the xoshiro state (Vigna's recommendation). */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t roce_engine_rand(struct roce_engine *eng)
{
	uint64_t *s = eng->rng;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double roce_engine_rand01(struct roce_engine *eng)
{
	return (double)(roce_engine_rand(eng) >> 11) * 0x1.0p-53;
}

/* The wall clock in ps: a multiply by the 32.32 ps a cycle, no division (called every turn). */
static roce_time_t wall_now(const struct roce_engine *eng)
{
	unsigned __int128 cyc = rte_rdtsc() - eng->tsc_start;

	return (roce_time_t)((cyc * eng->tsc_ps_q32) >> 32);
}

roce_time_t roce_engine_now(const struct roce_engine *eng)
{
	if (eng->clock == ROCE_CLOCK_WALL)
		return wall_now(eng);
	return eng->now;
}

static void private_pool_unmap(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	(void)munmap(memhdr->addr, (size_t)opaque);
}

/*
 * A LIFO pool whose frames live in private memory on transparent huge pages. Without
 * hugetlbfs (the default, --no-huge) DPDK's memory is a memfd in 4 KiB pages (shmem, which
 * transparent huge pages do not cover): a fabric that queues 40 MB of frames then takes a TLB
 * miss on nearly every frame it touches, and its page tables crowd the L2. A virtual-clock
 * engine hands its frames to no device, so they need no DMA-able memory. NULL (rte_errno
 * set) when any step fails; the caller then takes DPDK's memory.
 */
static struct rte_mempool *private_pool_create(const char *name, unsigned int nb,
					       unsigned int cache, uint16_t data)
{
	struct rte_pktmbuf_pool_private priv = { .mbuf_data_room_size = data };
	size_t huge = (size_t)1 << ENG_HUGE_SHIFT, per_page, len;
	struct rte_mempool *mp;
	uint8_t *p;
	int rc;

	/*
	 * No IOVA-contiguous objects: without that flag DPDK keeps each object inside one 4 KiB
	 * page (the page size it assumes without hugetlbfs), so objects under 4 KiB (a 1 KiB MTU's
	 * mbufs) packed two to a page, the chunks held fewer than @per_page, and every such pool
	 * fell back to DPDK's memory. These frames go to no device.
	 */
	mp = rte_mempool_create_empty(name, nb, sizeof(struct rte_mbuf) + data, cache,
				      sizeof(struct rte_pktmbuf_pool_private), SOCKET_ID_ANY,
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return NULL;
	rc = rte_mempool_set_ops_byname(mp, "stack", NULL);
	if (rc != 0)
		goto err_free;
	rte_pktmbuf_pool_init(mp, &priv);
	/* objects do not straddle the pages they are populated on */
	per_page = huge / (mp->header_size + mp->elt_size + mp->trailer_size);
	if (per_page == 0) {
		rc = -EINVAL;
		goto err_free;
	}
	len = (nb + per_page - 1) / per_page * huge;
	/* over-map by a huge page to start on a huge-page boundary, then trim */
	p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		rc = -ENOMEM;
		goto err_free;
	}
	{
		uint8_t *start = RTE_PTR_ALIGN_CEIL(p, huge);

		if (start > p)
			munmap(p, (size_t)(start - p));
		munmap(start + len, (size_t)(p + huge - start));
		p = start;
	}
	(void)madvise(p, len, MADV_HUGEPAGE);
	/* every chunk unmaps its own range: the pool's memory goes with the pool */
	for (size_t off = 0; off < len; off += huge) {
		rc = rte_mempool_populate_virt(mp, (char *)p + off, huge, huge, private_pool_unmap,
					       (void *)huge);
		if (rc < 0) {
			munmap(p + off, len - off);	/* not the pool's yet */
			goto err_free;
		}
	}
	if (mp->populated_size != mp->size) {
		rc = -ENOMEM;
		goto err_free;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;

err_free:
	rte_mempool_free(mp);
	rte_errno = rc < 0 ? -rc : ENOMEM;
	return NULL;
}

/*
 * A pool of @p nb mbufs of @p data bytes for @p eng's frames: a LIFO pool, so that a freed frame
 * is the next one handed out and a run touches only as many mbufs as it ever holds at once, in
 * cache, instead of cycling through the whole pool (the default ring is FIFO: every mbuf, every
 * page, every cache line, in turn). NULL with rte_errno set.
 */
static struct rte_mempool *pool_create(const struct roce_engine *eng, const char *name,
				       unsigned int nb, uint16_t data)
{
	/* the cache may hold at most n / 1.5 objects (rte_mempool_create's rule) */
	unsigned int cache = ROCE_MIN(ROCE_MIN(ENG_POOL_CACHE, nb * 2 / 3),
				      RTE_MEMPOOL_CACHE_MAX_SIZE);
	struct rte_mempool *mp = NULL;

	if (eng->clock == ROCE_CLOCK_VIRTUAL && !rte_eal_has_hugepages()) {
		mp = private_pool_create(name, nb, cache, data);
		if (mp == NULL)	/* slower, and bounded by the EAL's -m: say so */
			ROCE_LOG(INFO, "%s: no private pool of %u mbufs of %u bytes (%s): DPDK's "
				 "memory instead", eng->name, nb, data, rte_strerror(rte_errno));
	}
	if (mp == NULL)
		mp = rte_pktmbuf_pool_create_by_ops(name, nb, cache, 0, data, SOCKET_ID_ANY,
						    "stack");
	if (mp == NULL)	/* the stack driver is a plugin: it may be missing */
		mp = rte_pktmbuf_pool_create(name, nb, cache, 0, data, SOCKET_ID_ANY);
	return mp;
}

struct roce_engine *roce_engine_create(const struct roce_engine_conf *conf)
{
	static const struct roce_engine_conf defaults = { .clock = ROCE_CLOCK_VIRTUAL };
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	struct roce_engine *eng;
	unsigned int nb;
	uint64_t x;
	uint16_t data;
	int i;

	if (conf == NULL)
		conf = &defaults;
	if (conf->clock != ROCE_CLOCK_VIRTUAL && conf->clock != ROCE_CLOCK_WALL) {
		errno = EINVAL;
		return NULL;
	}
	nb = conf->nb_mbufs ? conf->nb_mbufs : ENG_DEF_MBUFS;
	data = conf->mbuf_data ? conf->mbuf_data : ENG_DEF_DATA + RTE_PKTMBUF_HEADROOM;
	if (nb < 2 || data <= RTE_PKTMBUF_HEADROOM) {
		errno = EINVAL;
		return NULL;
	}
	eng = calloc(1, sizeof(*eng));
	if (eng == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	eng->clock = conf->clock;
	snprintf(eng->name, sizeof(eng->name), "%s", conf->name ? conf->name : "rocelab");
	if (eng_timer_init(eng, 1024) != 0) {
		errno = ENOMEM;
		goto err_free_eng;
	}

	x = conf->seed;
	for (i = 0; i < 4; i++)
		eng->rng[i] = splitmix64(&x);

	snprintf(pool_name, sizeof(pool_name), "%.16s_%u", eng->name,
		 __atomic_fetch_add(&eng_instances, 1, __ATOMIC_RELAXED));
	eng->pool = pool_create(eng, pool_name, nb, data);
	if (eng->pool == NULL) {
		/* the caller reports the failure (errno): one line for the user, not two */
		ROCE_LOG(INFO, "%s: cannot create a pool of %u mbufs of %u bytes: %s", eng->name,
			 nb, data, rte_strerror(rte_errno));
		errno = rte_errno == EINVAL ? EINVAL : ENOMEM;
		goto err_free_timers;
	}

	/* the NICs' ICRC offload flags; without them each ICRC is computed and checked: slower */
	if (roce_wire_icrc_flags_register() != 0)
		ROCE_LOG(INFO, "%s: no mbuf flag for ICRC offload: %s", eng->name,
			 rte_strerror(rte_errno));

	eng->tsc_ps_q32 = (uint64_t)(((unsigned __int128)ROCE_SEC << 32) / rte_get_tsc_hz());
	eng->tsc_start = rte_rdtsc();
	return eng;

err_free_timers:
	eng_timer_fini(eng);
err_free_eng:
	free(eng);
	return NULL;
}

void roce_engine_destroy(struct roce_engine *eng)
{
	unsigned int out;

	if (eng == NULL)
		return;
	eng_timer_fini(eng);
	for (int i = 0; i < 4; i++)
		rte_pktmbuf_free(eng->zc_trailer[i]);
	/* every frame made here has come back by now (links, ports, NICs and switches are gone):
	 * one still out is a leak, said whenever it happens, not only in a soak */
	out = rte_mempool_in_use_count(eng->pool) +
	      (eng->seg_pool != NULL ? rte_mempool_in_use_count(eng->seg_pool) : 0);
	if (out != 0)
		ROCE_LOG(ERR, "engine: %u mbuf(s) never came back to their pool", out);
	rte_mempool_free(eng->pool);
	rte_mempool_free(eng->seg_pool);
	free(eng);
}

static inline void fire(struct roce_engine *eng, struct roce_timer *t)
{
	eng->stats.timers_fired++;
	t->fn(eng, t, t->arg);
}

static uint64_t run_virtual(struct roce_engine *eng, roce_time_t until)
{
	uint64_t fired = eng->stats.timers_fired;

	eng_timer_run(eng, until);
	/* A finite run leaves the clock at @until, so successive runs tile time. */
	if (!eng->stop && until != ROCE_TIME_NEVER && until > eng->now)
		eng->now = until;
	return eng->stats.timers_fired - fired;
}

static uint64_t run_wall(struct roce_engine *eng, roce_time_t until)
{
	uint64_t fired = eng->stats.timers_fired;
	struct roce_timer *t;
	roce_time_t now;
	unsigned int i;

	for (;;) {
		now = wall_now(eng);
		while (!eng->stop && (t = eng_timer_pop_due(eng, now)) != NULL)
			fire(eng, t);
		for (i = 0; i < eng->nb_pollers && !eng->stop; i++)
			eng->pollers[i].fn(eng, eng->pollers[i].arg);
		if (eng->stop || now >= until)
			break;
		/* Nothing can ever happen again: no timer and nobody polling for input. */
		if (eng->wheel.count == 0 && eng->nb_pollers == 0)
			break;
	}
	return eng->stats.timers_fired - fired;
}

uint64_t roce_engine_run(struct roce_engine *eng, roce_time_t until)
{
	eng->stop = false;
	if (eng->clock == ROCE_CLOCK_WALL)
		return run_wall(eng, until);
	return run_virtual(eng, until);
}

roce_time_t roce_engine_next(struct roce_engine *eng)
{
	struct roce_timer *t = eng_timer_peek(eng);

	return t != NULL ? t->when : ROCE_TIME_NEVER;
}

void roce_engine_stop(struct roce_engine *eng)
{
	eng->stop = true;
}

int roce_engine_add_poller(struct roce_engine *eng, roce_poll_fn fn, void *arg)
{
	if (fn == NULL)
		return -EINVAL;
	if (eng->nb_pollers == ENG_MAX_POLLERS)
		return -ENOSPC;
	eng->pollers[eng->nb_pollers++] = (struct eng_poller){ .fn = fn, .arg = arg };
	return 0;
}

int roce_engine_remove_poller(struct roce_engine *eng, roce_poll_fn fn, void *arg)
{
	for (unsigned int i = 0; i < eng->nb_pollers; i++) {
		if (eng->pollers[i].fn == fn && eng->pollers[i].arg == arg) {
			memmove(&eng->pollers[i], &eng->pollers[i + 1],
				(eng->nb_pollers - i - 1) * sizeof(eng->pollers[0]));
			eng->nb_pollers--;
			return 0;
		}
	}
	return -ENOENT;
}

struct rte_mempool *roce_engine_pool(struct roce_engine *eng)
{
	return eng->pool;
}

struct rte_mbuf *roce_engine_mbuf(struct roce_engine *eng)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(eng->pool);

	if (roce_unlikely(m == NULL))
		eng->stats.mbuf_alloc_fail++;
	return m;
}

/*
 * The segments of frames that carry their payload by reference come from a pool of their own,
 * so that the frames' pool is drawn on as it would be if every frame were copied: twice the
 * frame pool's count, a segment for each frame's payload and one for its own trailer once its
 * ICRC is written (a capture), up to 16 384 frames at once; beyond that a frame is copied.
 * Until then the frames share four trailers (by pad), whose lines stay in the cache.
 * The cap is for the set-up: making a pool touches every mbuf, and 96 K segments (the 16-host
 * leaf-spine scenario's share) took 38 ms, an eighth of its whole run; 32 K take 3-6 ms, and
 * no scenario in scenarios/, nor 20 ms of the 128-host leaf-spine, needs more.
 */
#define ENG_SEG_DATA 64		/* data room: a tail's pad and ICRC, or, with no dynfield, shinfo */
#define ENG_SEG_MAX (1u << 15)

bool roce_engine_zc_prepare(struct roce_engine *eng)
{
	char name[RTE_MEMPOOL_NAMESIZE];

	if (eng->seg_pool != NULL)
		return true;
	if (eng->clock != ROCE_CLOCK_VIRTUAL || eng->seg_pool_failed)
		return false;
	snprintf(name, sizeof(name), "%.16s_%u_seg", eng->name,
		 __atomic_fetch_add(&eng_instances, 1, __ATOMIC_RELAXED));
	eng->seg_pool = pool_create(eng, name, ROCE_MIN(2 * eng->pool->size, ENG_SEG_MAX),
				    ENG_SEG_DATA);
	for (uint32_t pad = 0; pad < 4 && eng->seg_pool != NULL; pad++) {
		eng->zc_trailer[pad] = roce_wire_zc_trailer(eng->seg_pool, pad);
		if (eng->zc_trailer[pad] == NULL) {
			while (pad-- > 0)
				rte_pktmbuf_free(eng->zc_trailer[pad]);
			rte_mempool_free(eng->seg_pool);
			eng->seg_pool = NULL;
		}
	}
	if (eng->seg_pool == NULL) {
		ROCE_LOG(INFO, "%s: no pool for zero-copy frames (%s): they are copied", eng->name,
			 rte_strerror(rte_errno));
		eng->seg_pool_failed = true;
	}
	return eng->seg_pool != NULL;
}

struct rte_mbuf *roce_engine_zc_seg(struct roce_engine *eng, struct rte_mbuf *const **trailer)
{
	struct rte_mbuf *seg;

	if (roce_unlikely(eng->seg_pool == NULL) && !roce_engine_zc_prepare(eng))
		return NULL;
	seg = rte_pktmbuf_alloc(eng->seg_pool);
	if (seg == NULL)
		return NULL;
	*trailer = eng->zc_trailer;
	eng->stats.zc_frames++;
	return seg;
}

void roce_engine_stats(const struct roce_engine *eng, struct roce_engine_stats *st)
{
	*st = eng->stats;
}
