/*
 * lib/perf: a model of the kernel TCP path that really moves the bytes, for comparison with
 * RDMA's zero copy. A transfer goes through the four buffers a byte visits on the socket path:
 *
 *   send():  user buffer --copy 1 (CPU, with the checksum)--> socket buffer
 *   NIC:     socket buffer --copy 2 (DMA)--> TX ring --wire-->
 *   NIC:     --copy 3 (DMA)--> socket buffers of the RX ring
 *   recv():  socket buffer --copy 4 (CPU)--> user buffer
 *
 * The model performs all four with the CPU (memcpy, plus the Internet checksum of each
 * segment on copy 1) and times each stage with the thread's CPU clock, and counts the system
 * calls, segments and interrupts a Linux host would take. RDMA moves the same bytes once: the
 * requester's NIC reads the source memory region and the responder's NIC writes the target.
 */
#ifndef ROCE_TCPMODEL_H
#define ROCE_TCPMODEL_H

#include <stdint.h>

#define ROCE_TCP_COPIES 4

struct roce_tcp_model_conf {
	uint64_t bytes;			/* the transfer */
	uint32_t write_size;		/* bytes per send()/recv() call; 0: 64 KiB */
	uint32_t mss;			/* TCP payload per segment; 0: 1448 (MTU 1500, timestamps) */
	uint32_t gro_segments;		/* segments per receive interrupt (NAPI/GRO batch); 0: 16 */
};

struct roce_tcp_model_result {
	uint64_t bytes;			/* delivered, checked equal to what was sent */
	uint64_t bytes_copied;		/* by all four stages */
	uint64_t syscalls;		/* send() + recv() */
	uint64_t segments;		/* TCP segments on the wire */
	uint64_t interrupts;		/* receive interrupts */
	double stage_sec[ROCE_TCP_COPIES]; /* CPU time of each copy stage */
	double cpu_sec;			/* all of it */
	const char *stage_name[ROCE_TCP_COPIES];
};

/**
 * Run the model once.
 * @return 0; -EINVAL (bytes 0, mss 0 or above 9000), -ENOMEM, -EIO (the received bytes differ)
 */
int roce_tcp_model_run(const struct roce_tcp_model_conf *conf, struct roce_tcp_model_result *res);

#endif /* ROCE_TCPMODEL_H */
