/*
 * Internal interface between the library's source files: vrdma.c (objects, control calls, rings),
 * vrdma_events.c (completion-ring arming and sleeping, asynchronous events) and vrdma_ex.c
 * (extended CQs and the ibv_wr_* send API). Nothing here is exported.
 */
#ifndef VRDMA_INT_H
#define VRDMA_INT_H

#include <pthread.h>
#include <stdint.h>

#include <infiniband/verbs.h>

void vr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vr_connect(void);
int vr_connect_bound(uint16_t op, const void *req, uint32_t req_len);
/* One control call on the context's connection; resp_size 0: no response body kept. */
int vr_ctx_call(struct ibv_context *ctx, uint16_t op, const void *req, uint32_t req_len, void *resp,
		uint32_t resp_size);

/*
 * The completions a CQ can expect, as far as the library knows (a hint for poll_cq's sleep, never
 * exact: an unsignaled request that fails completes too). Updated with atomics: posting threads
 * add, the polling thread subtracts.
 */
struct vr_cq_expect {
	int32_t sends;   /* signaled send requests posted on QPs with this send CQ, not yet polled */
	int32_t recvs;   /* receives posted on QPs with this receive CQ (not on an SRQ), not polled */
	int32_t srq_qps; /* QPs on an SRQ with this receive CQ: a receive may complete at any time */
};

static inline void vr_expect_add(int32_t *counter, int32_t n)
{
	__atomic_add_fetch(counter, n, __ATOMIC_RELAXED);
}

/* One completion polled: the counter its opcode belongs to goes down, never below 0. */
static inline void vr_expect_polled(struct vr_cq_expect *e, int opcode)
{
	int32_t *counter = (opcode & IBV_WC_RECV) ? &e->recvs : &e->sends;

	if (__atomic_sub_fetch(counter, 1, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(counter, 0, __ATOMIC_RELAXED);
}

/* What vrdma_ex.c needs of a CQ and a QP created by vrdma.c. */
struct vr_cq_view {
	uint8_t *ring;
	uint32_t entries;
	uint32_t *cons;
	pthread_spinlock_t *lock;
	struct vr_cq_expect *expect;
	void **ex;
};

struct vr_qp_view {
	uint8_t *ring;
	uint32_t sq_entries, sq_stride, max_send_sge, max_inline;
	int sq_sig_all;
	uint32_t *sq_prod;
	pthread_spinlock_t *sq_lock;
	void **ex;
};

void vr_cq_view(struct ibv_cq *cq, struct vr_cq_view *v);
void vr_qp_view(struct ibv_qp *qp, struct vr_qp_view *v);
void vr_qp_doorbell(struct ibv_qp *qp);
/* Send slots [from, to) were published: their signaled requests are expected on the send CQ. */
void vr_qp_sends_posted(struct ibv_qp *qp, uint32_t from, uint32_t to);

/* vrdma_events.c */
int vr_cq_arm(uint8_t *ring, int solicited_only);
void vr_poll_idle(struct ibv_cq *cq, uint8_t *ring, uint32_t cons, struct vr_cq_expect *expect);
void vr_poll_busy(void);
int vr_async_open(struct ibv_context *ctx);
void vr_async_close(struct ibv_context *ctx);
void vr_async_track(struct ibv_context *ctx, uint32_t kind, uint32_t handle, void *obj);
void vr_async_untrack(struct ibv_context *ctx, uint32_t kind, uint32_t handle);

/* vrdma_ex.c */
#define VR_SEND_OPS_SUPPORTED                                                                      \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |     \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |                                  \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |                  \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV)

/* What a UC QP can send: SEND and RDMA WRITE, with or without immediate; memory window operations. */
#define VR_SEND_OPS_UC                                                                             \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |     \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)

struct ibv_cq_ex *vr_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
void vr_qp_ex_init(struct ibv_qp *qp, uint64_t send_ops_flags);

/* A 32-bit counter or word at byte offset off of a shared ring. */
static inline uint32_t *ring_u32(uint8_t *ring, size_t off)
{
	return (uint32_t *)(ring + off);
}

#endif
