/*
 * What the test programs that talk to themselves share: one vNIC whose wire loops back, so their
 * QPs connect to QPs of the same device, addressed by its own GID. The device, its protection
 * domain and that GID, and the steps every program repeats: open the device, map a buffer, bring
 * an RC or UC QP to INIT and connect it, wait for a completion.
 *
 * Header-only (static inline: a program uses what it needs), so each program still compiles from
 * its one source file: gcc -Wall -Werror prog.c -libverbs.
 */
#ifndef VRDMA_TEST_LOOPBACK_H
#define VRDMA_TEST_LOOPBACK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

/* The PSN both directions of a connected pair start from. */
#define LOOPBACK_PSN 100

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;

/* A call failed: prints what and errno's text, exits 2. */
static inline void die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(2);
}

/* A result is not what it must be: prints what, exits 3. */
static inline void fail(const char *what)
{
	printf("FAIL %s\n", what);
	fflush(stdout);
	exit(3);
}

static inline void check(int ok, const char *what)
{
	if (!ok)
		fail(what);
}

/* Opens the first device (after ibv_fork_init if fork_safe), port 1's GID 0 and a PD. */
static inline void open_loopback(int fork_safe)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (!list || n < 1)
		die("no device");
	if (fork_safe && ibv_fork_init())
		die("ibv_fork_init");
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		die("ibv_open_device");
	ibv_free_device_list(list);
	if (ibv_query_gid(ctx, 1, 0, &gid))
		die("ibv_query_gid");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
}

/* bytes of private anonymous memory, zeroed. */
static inline unsigned char *map_buffer(size_t bytes)
{
	unsigned char *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED)
		die("mmap");
	return b;
}

/* RESET -> INIT on port 1 of an RC or UC QP with the access flags access. */
static inline void init_qp(struct ibv_qp *q, unsigned access)
{
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access };

	if (ibv_modify_qp(q, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify INIT");
}

/*
 * INIT -> RTR towards QP dest of this device, expecting PSN psn, at a 1024-byte MTU; an RC QP also
 * takes 4 incoming reads or atomics and an RNR timer of 12 (UC has neither).
 */
static inline void to_rtr(struct ibv_qp *q, uint32_t dest, uint32_t psn)
{
	int rc = q->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = psn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1, .grh = { .dgid = gid, .hop_limit = 64 } },
	};

	if (ibv_modify_qp(q, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN |
					   (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		die("modify RTR");
}

/*
 * RTR -> RTS sending from PSN psn; an RC QP with ACK timeout 14, 7 retries, infinite RNR retry and
 * 4 reads or atomics outstanding (UC takes none of these).
 */
static inline void to_rts(struct ibv_qp *q, uint32_t psn)
{
	int rc = q->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				   .rnr_retry = 7, .sq_psn = psn, .max_rd_atomic = 4 };

	if (ibv_modify_qp(q, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN |
					   (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
							 IBV_QP_MAX_QP_RD_ATOMIC
					       : 0)))
		die("modify RTS");
}

/* An RC or UC QP in INIT -> RTS towards QP dest of this device, PSN LOOPBACK_PSN each way. */
static inline void connect_qp(struct ibv_qp *q, uint32_t dest)
{
	to_rtr(q, dest, LOOPBACK_PSN);
	to_rts(q, LOOPBACK_PSN);
}

/* Polls cq until one completion arrives (bounded: fails naming name). */
static inline struct ibv_wc wait_wc(struct ibv_cq *cq, const char *name)
{
	struct ibv_wc wc;

	for (long i = 0; i < 400000000L; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1)
			return wc;
	}
	fail(name);
	return wc;
}

#endif
