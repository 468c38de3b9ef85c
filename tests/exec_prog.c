/*
 * A verbs program for tests/exec_verbs.py, built against rdma-core's headers and run under
 * `rocelab exec`: what perftest and the pingpongs do not do.
 *
 *   exec_prog threads DIR a|b   two processes connect an RC QP through files in DIR; a's two
 *                               threads post RDMA WRITEs on it at once, b checks every byte
 *   exec_prog fork              a child of fork() is refused (EIO), the parent goes on
 *   exec_prog attr              a QP attribute rocelab does not model: EOPNOTSUPP
 *   exec_prog leak              objects left undestroyed at exit
 *
 * Exit 0 when what was checked held; 1 with a line on stderr otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF_SIZE (1 << 20)
#define WRITES 2000		/* per thread: WRITES * CHUNK <= BUF_SIZE / 2 */
#define CHUNK 256		/* bytes per WRITE: thread t writes [t * BUF_SIZE / 2, ...) */

struct peer_info {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static struct peer_info me, peer;
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;

#define FAIL(...) do { fprintf(stderr, "exec_prog: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (l == NULL || l[0] == NULL)
		FAIL("no device");
	if (strcmp(ibv_get_device_name(l[0]), "rocelab0") != 0)
		FAIL("the device is %s, not rocelab0", ibv_get_device_name(l[0]));
	ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (ctx == NULL)
		FAIL("open_device: %s", strerror(errno));
}

static void make_objects(int cqe)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, BUF_SIZE);
	if (pd == NULL || buf == NULL)
		FAIL("alloc_pd: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (mr == NULL || cq == NULL)
		FAIL("reg_mr/create_cq: %s", strerror(errno));
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL)
		FAIL("create_qp: %s", strerror(errno));
}

static void write_file(const char *path, const void *p, size_t n)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0 || rename(tmp, path) != 0)
		FAIL("cannot write %s", path);
}

static void wait_file(const char *path, void *p, size_t n)
{
	for (int i = 0; i < 3000; i++) {
		FILE *f = fopen(path, "r");

		if (f != NULL) {
			size_t got = fread(p, 1, n, f);

			fclose(f);
			if (got == n)
				return;
		}
		usleep(10000);
	}
	FAIL("%s did not appear in 30 s", path);
}

static void connect_qp(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		FAIL("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = peer.psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		FAIL("modify_qp RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me.psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		FAIL("modify_qp RTS");
}

static uint8_t pattern(int t, uint32_t off)
{
	return (uint8_t)(t * 101 + off * 7 + (off >> 8));
}

static int completed, comp[2];	/* under poll_lock: in all, per thread (by wr_id) */

/* Thread t: WRITEs of its half of the buffer, as fast as the send queue takes them. */
static void *writer(void *arg)
{
	int t = (int)(intptr_t)arg, posted = 0, done = 0;
	uint32_t base = (uint32_t)t * (BUF_SIZE / 2);

	for (uint32_t off = 0; off < BUF_SIZE / 2; off++)
		buf[base + off] = pattern(t, off);
	while (done < WRITES) {
		while (posted < WRITES && posted - done < 64) {
			uint32_t off = (uint32_t)(posted % ((BUF_SIZE / 2) / CHUNK)) * CHUNK;
			struct ibv_sge sge = { (uintptr_t)buf + base + off, CHUNK, mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = (uint64_t)t << 32 | (uint32_t)posted, .sg_list = &sge,
				.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr = { .rdma = { peer.addr + base + off, peer.rkey } },
			}, *bad;
			int rc = ibv_post_send(qp, &wr, &bad);

			if (rc == ENOMEM)
				break;
			if (rc != 0)
				FAIL("post_send: %s", strerror(rc));
			posted++;
		}
		pthread_mutex_lock(&poll_lock);
		{
			struct ibv_wc wc[16];
			int n = ibv_poll_cq(cq, 16, wc);

			for (int i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS)
					FAIL("completion %s", ibv_wc_status_str(wc[i].status));
				completed++;
				comp[wc[i].wr_id >> 32]++;	/* either thread's */
			}
		}
		done = comp[t];
		pthread_mutex_unlock(&poll_lock);
	}
	return NULL;
}

static int threads(const char *dir, const char *role)
{
	char mine[4096], theirs[4096], done[4096];
	bool a = strcmp(role, "a") == 0;

	open_dev();
	make_objects(1024);
	me.qpn = qp->qp_num;
	me.psn = a ? 0x1000 : 0x2000;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;
	if (ibv_query_gid(ctx, 1, 0, &me.gid))
		FAIL("query_gid");
	snprintf(mine, sizeof(mine), "%s/%s.info", dir, role);
	snprintf(theirs, sizeof(theirs), "%s/%s.info", dir, a ? "b" : "a");
	snprintf(done, sizeof(done), "%s/a.done", dir);
	write_file(mine, &me, sizeof(me));
	wait_file(theirs, &peer, sizeof(peer));
	connect_qp();
	if (a) {
		pthread_t th[2];

		for (int t = 0; t < 2; t++)
			pthread_create(&th[t], NULL, writer, (void *)(intptr_t)t);
		for (int t = 0; t < 2; t++)
			pthread_join(th[t], NULL);
		if (completed != 2 * WRITES)
			FAIL("%d completions for %d WRITEs", completed, 2 * WRITES);
		write_file(done, "1", 1);
		printf("threads: %d WRITEs from 2 threads completed\n", completed);
	} else {
		char c;

		wait_file(done, &c, 1);
		for (int t = 0; t < 2; t++)
			for (uint32_t off = 0; off < WRITES * CHUNK; off++)
				if (buf[(uint32_t)t * (BUF_SIZE / 2) + off] != pattern(t, off))
					FAIL("byte %u of thread %d's half differs", off, t);
		printf("threads: both halves arrived intact\n");
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

static int do_fork(void)
{
	pid_t pid;
	int st;

	open_dev();
	pid = fork();
	if (pid == 0) {
		struct ibv_pd *p = ibv_alloc_pd(ctx);

		if (p != NULL || errno != EIO)
			FAIL("the child's alloc_pd: %p, %s (wanted NULL, EIO)", (void *)p,
			     strerror(errno));
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("the child did not see EIO");
	pd = ibv_alloc_pd(ctx);
	if (pd == NULL)
		FAIL("the parent's alloc_pd after fork: %s", strerror(errno));
	printf("fork: the child was refused with EIO, the parent goes on\n");
	return 0;
}

static int attr(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int rc;

	open_dev();
	make_objects(16);
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH);
	if (rc != EOPNOTSUPP)
		FAIL("modify_qp with an alternate path: %d, wanted EOPNOTSUPP", rc);
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS);
	if (rc != 0)
		FAIL("modify_qp INIT: %s", strerror(rc));
	printf("attr: EOPNOTSUPP for the alternate path, INIT without it\n");
	return 0;
}

static int leak(void)
{
	open_dev();
	make_objects(16);
	printf("leak: exiting with every object alive\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "threads") == 0)
		return threads(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "fork") == 0)
		return do_fork();
	if (argc == 2 && strcmp(argv[1], "attr") == 0)
		return attr();
	if (argc == 2 && strcmp(argv[1], "leak") == 0)
		return leak();
	fprintf(stderr, "usage: exec_prog threads DIR a|b | fork | attr | leak\n");
	return 2;
}
