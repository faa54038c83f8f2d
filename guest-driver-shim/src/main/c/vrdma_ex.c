/*
 * Extended verbs over the same rings as the classic ones.
 *
 * - ibv_create_cq_ex: an ordinary CQ (ibv_create_cq) whose ibv_cq_ex part gets the
 *   ibv_start_poll / ibv_next_poll / ibv_end_poll functions and the wc read_* accessors; they read
 *   the completion ring in place. The CQ's lock is held from a successful start_poll to end_poll.
 * - ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS: the ibv_wr_* API. ibv_wr_start takes the
 *   send queue's lock; each ibv_wr_<op> starts a slot of the shared send ring and the setters fill
 *   it; ibv_wr_complete publishes them all at once (and rings the doorbell if the vNIC sleeps),
 *   ibv_wr_abort drops them: the vNIC never sees an unfinished slot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <infiniband/verbs.h>

#include "vrdma_proto.h"
#include "vrdma_int.h"

#define EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- extended CQs */

struct vr_cq_ex_state {
	struct vr_cq_view v;
	int reading; /* a completion is current: end_poll consumes it */
};

static inline struct vr_cq_ex_state *cq_state(struct ibv_cq_ex *cq)
{
	struct vr_cq_view v;

	vr_cq_view(ibv_cq_ex_to_cq(cq), &v);
	return *v.ex;
}

static inline const struct vr_wc *cur_wc(struct ibv_cq_ex *cq)
{
	struct vr_cq_ex_state *s = cq_state(cq);
	uint32_t i = *s->v.cons & (s->v.entries - 1);

	return &((const struct vr_wc_slot *)(s->v.ring + VR_CQ_RING_HDR))[i].wc;
}

/* Loads the slot at the consumer counter into status and wr_id, or ENOENT if the ring is empty. */
static int load_current(struct ibv_cq_ex *cq, struct vr_cq_ex_state *s)
{
	uint32_t prod = __atomic_load_n(ring_u32(s->v.ring, VR_CQ_PROD), __ATOMIC_ACQUIRE);
	const struct vr_wc *w;

	if (prod == *s->v.cons) {
		s->reading = 0;
		return ENOENT;
	}
	w = cur_wc(cq);
	cq->status = (enum ibv_wc_status)w->status;
	cq->wr_id = w->wr_id;
	s->reading = 1;
	return 0;
}

static void consume(struct vr_cq_ex_state *s)
{
	if (!s->reading)
		return;
	vr_expect_polled(s->v.expect,
			 (int)((const struct vr_wc_slot *)(s->v.ring + VR_CQ_RING_HDR))[*s->v.cons & (s->v.entries - 1)]
				 .wc.opcode);
	(*s->v.cons)++;
	__atomic_store_n(ring_u32(s->v.ring, VR_CQ_CONS), *s->v.cons, __ATOMIC_RELEASE);
	s->reading = 0;
}

static int cqx_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct vr_cq_ex_state *s = cq_state(cq);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(s->v.lock);
	ret = load_current(cq, s);
	if (ret) {
		/* The caller does not call end_poll after ENOENT. */
		pthread_spin_unlock(s->v.lock);
		vr_poll_idle(ibv_cq_ex_to_cq(cq), s->v.ring, *s->v.cons, s->v.expect);
		return ret;
	}
	vr_poll_busy();
	return 0;
}

static int cqx_next_poll(struct ibv_cq_ex *cq)
{
	struct vr_cq_ex_state *s = cq_state(cq);

	consume(s);
	return load_current(cq, s);
}

static void cqx_end_poll(struct ibv_cq_ex *cq)
{
	struct vr_cq_ex_state *s = cq_state(cq);

	consume(s);
	pthread_spin_unlock(s->v.lock);
}

static enum ibv_wc_opcode cqx_read_opcode(struct ibv_cq_ex *cq)
{
	return (enum ibv_wc_opcode)cur_wc(cq)->opcode;
}

static uint32_t cqx_read_vendor_err(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->vendor_err;
}

static uint32_t cqx_read_byte_len(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->byte_len;
}

static __be32 cqx_read_imm_data(struct ibv_cq_ex *cq)
{
	/* ibv_wc_read_invalidated_rkey reads the same field, raw (host order). */
	if (cur_wc(cq)->wc_flags & IBV_WC_WITH_INV)
		return cur_wc(cq)->imm_data;
	return htonl(cur_wc(cq)->imm_data);
}

static uint32_t cqx_read_qp_num(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->qp_num;
}

static uint32_t cqx_read_src_qp(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->src_qp;
}

static unsigned int cqx_read_wc_flags(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->wc_flags;
}

static uint32_t cqx_read_slid(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->slid;
}

static uint8_t cqx_read_sl(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->sl;
}

static uint8_t cqx_read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return cur_wc(cq)->dlid_path_bits;
}

/* Fields a completion of this vNIC carries; timestamps, VLANs, flow tags and TM are not served. */
#define VR_WC_EX_SUPPORTED                                                                        \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |                     \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |                           \
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

struct ibv_cq_ex *vr_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	struct vr_cq_ex_state *s;
	struct ibv_cq_ex *cq;
	struct ibv_cq *base;

	if (!ctx || !a) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (a->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
	    (a->wc_flags & ~(uint64_t)VR_WC_EX_SUPPORTED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	base = ibv_create_cq(ctx, (int)a->cqe, a->cq_context, a->channel, (int)a->comp_vector);
	if (!base) {
		free(s);
		return NULL;
	}
	vr_cq_view(base, &s->v);
	*s->v.ex = s;
	cq = (struct ibv_cq_ex *)base; /* the CQ object is an ibv_cq_ex (a union in vrdma.c) */
	cq->comp_mask = 0;
	cq->start_poll = cqx_start_poll;
	cq->next_poll = cqx_next_poll;
	cq->end_poll = cqx_end_poll;
	cq->read_opcode = cqx_read_opcode;
	cq->read_vendor_err = cqx_read_vendor_err;
	cq->read_wc_flags = cqx_read_wc_flags;
	cq->read_byte_len = cqx_read_byte_len;
	cq->read_imm_data = cqx_read_imm_data;
	cq->read_qp_num = cqx_read_qp_num;
	cq->read_src_qp = cqx_read_src_qp;
	cq->read_slid = cqx_read_slid;
	cq->read_sl = cqx_read_sl;
	cq->read_dlid_path_bits = cqx_read_dlid_path_bits;
	return cq;
}

/* ---------------------------------------------------------------- ibv_wr_* */

struct vr_wr_state {
	struct vr_qp_view v;
	uint64_t ops; /* send_ops_flags the QP was created with */
	uint32_t pos; /* next slot; slots from *v.sq_prod to pos are not yet published */
	int err;      /* the first error of this batch: wr_complete drops the batch and returns it */
	struct vr_sq_wqe *cur;
};

static inline struct vr_wr_state *wr_state(struct ibv_qp_ex *qp)
{
	struct vr_qp_view v;

	vr_qp_view(&qp->qp_base, &v);
	return *v.ex;
}

static inline struct vr_sge *wqe_sges(struct vr_sq_wqe *w)
{
	return (struct vr_sge *)(w + 1);
}

static void wr_start(struct ibv_qp_ex *qp)
{
	struct vr_wr_state *s = wr_state(qp);

	pthread_spin_lock(s->v.sq_lock);
	s->pos = *s->v.sq_prod;
	s->err = 0;
	s->cur = NULL;
}

/* Starts the next slot for `opcode` (needs `op_flag` among the QP's send_ops_flags). */
static struct vr_sq_wqe *begin(struct ibv_qp_ex *qp, enum ibv_wr_opcode opcode, uint64_t op_flag)
{
	struct vr_wr_state *s = wr_state(qp);
	uint32_t cons = __atomic_load_n(ring_u32(s->v.ring, VR_SQ_CONS), __ATOMIC_ACQUIRE);
	struct vr_sq_wqe *w;

	s->cur = NULL;
	if (s->err)
		return NULL;
	if (!(s->ops & op_flag)) {
		s->err = EOPNOTSUPP;
		return NULL;
	}
	if (s->pos - cons >= s->v.sq_entries) {
		s->err = ENOMEM;
		return NULL;
	}
	w = (struct vr_sq_wqe *)(s->v.ring + VR_QP_RING_HDR +
				 (size_t)(s->pos & (s->v.sq_entries - 1)) * s->v.sq_stride);
	memset(w, 0, sizeof(*w));
	w->wr_id = qp->wr_id;
	w->opcode = opcode;
	w->send_flags = (qp->wr_flags & ~(unsigned)IBV_SEND_INLINE) |
			(s->v.sq_sig_all ? IBV_SEND_SIGNALED : 0);
	s->pos++;
	s->cur = w;
	return w;
}

static void wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)
{
	struct vr_sq_wqe *w = begin(qp, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = remote_addr;
	}
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct vr_sq_wqe *w =
		begin(qp, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = remote_addr;
		w->imm_data = ntohl(imm);
	}
}

static void wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)
{
	struct vr_sq_wqe *w = begin(qp, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = remote_addr;
	}
}

static void wr_send(struct ibv_qp_ex *qp)
{
	begin(qp, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qp, __be32 imm)
{
	struct vr_sq_wqe *w = begin(qp, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);

	if (w)
		w->imm_data = ntohl(imm);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	struct vr_sq_wqe *w =
		begin(qp, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = remote_addr;
		w->compare_add = compare;
		w->swap = swap;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	struct vr_sq_wqe *w =
		begin(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);

	if (w) {
		w->rkey = rkey;
		w->remote_addr = remote_addr;
		w->compare_add = add;
	}
}

/* Operations this vNIC does not serve: the batch fails with EOPNOTSUPP at wr_complete. */
static void wr_unsupported(struct ibv_qp_ex *qp)
{
	struct vr_wr_state *s = wr_state(qp);

	s->cur = NULL;
	if (!s->err)
		s->err = EOPNOTSUPP;
}

/* A type 2 window's bind, carried in the slot as ibv_post_send carries IBV_WR_BIND_MW. */
static void wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct vr_wr_state *s = wr_state(qp);
	struct vr_sq_wqe *w;

	if (!s->err && (!mw || !info || mw->type != IBV_MW_TYPE_2 || mw->context != qp->qp_base.context ||
			(info->mr ? info->mr->context != qp->qp_base.context : info->length != 0))) {
		s->cur = NULL;
		s->err = EINVAL;
		return;
	}
	w = begin(qp, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW);
	if (w) {
		w->remote_addr = info->addr;
		w->compare_add = info->length;
		w->rkey = rkey;
		w->ah = mw->handle;
		w->remote_qpn = info->mr ? info->mr->handle : 0;
		w->remote_qkey = info->mw_access_flags;
		s->cur = NULL; /* no SGEs or inline data follow */
	}
}

static void wr_local_inv(struct ibv_qp_ex *qp, uint32_t rkey)
{
	struct vr_sq_wqe *w = begin(qp, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);

	if (w) {
		w->imm_data = rkey; /* invalidate_rkey, host order */
		wr_state(qp)->cur = NULL;
	}
}

static void wr_send_inv(struct ibv_qp_ex *qp, uint32_t rkey)
{
	struct vr_sq_wqe *w = begin(qp, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV);

	if (w)
		w->imm_data = rkey;
}

static void wr_send_tso(struct ibv_qp_ex *qp, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	wr_unsupported(qp);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qp, uint32_t srqn)
{
	wr_unsupported(qp);
}

static void wr_atomic_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			    const void *atomic_wr)
{
	wr_unsupported(qp);
}

/* UD addressing, carried in the slot as ibv_post_send carries it (AH handle, QPN, Q_Key). */
static void wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct vr_wr_state *s = wr_state(qp);

	if (!s->cur)
		return;
	if (!ah) {
		s->err = s->err ? s->err : EINVAL;
		return;
	}
	s->cur->ah = ah->handle;
	s->cur->remote_qpn = remote_qpn;
	s->cur->remote_qkey = remote_qkey;
}

static void wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg)
{
	struct vr_wr_state *s = wr_state(qp);
	struct vr_sge *out;

	if (!s->cur)
		return;
	if (num_sge > s->v.max_send_sge) {
		s->err = s->err ? s->err : EINVAL;
		return;
	}
	out = wqe_sges(s->cur);
	for (size_t i = 0; i < num_sge; i++) {
		out[i].addr = sg[i].addr;
		out[i].length = sg[i].length;
		out[i].lkey = sg[i].lkey;
	}
	s->cur->num_sge = (uint32_t)num_sge;
	s->cur->inline_len = 0;
	s->cur->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qp, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t num_buf,
				    const struct ibv_data_buf *bufs)
{
	struct vr_wr_state *s = wr_state(qp);
	uint8_t *dst;
	size_t total = 0;

	if (!s->cur)
		return;
	for (size_t i = 0; i < num_buf; i++)
		total += bufs[i].length;
	if (total > s->v.max_inline) {
		s->err = s->err ? s->err : EINVAL;
		return;
	}
	/* Copied now, as a hardware library does: the buffers may be reused after this call. */
	dst = (uint8_t *)(wqe_sges(s->cur) + s->v.max_send_sge);
	for (size_t i = 0; i < num_buf; i++) {
		memcpy(dst, bufs[i].addr, bufs[i].length);
		dst += bufs[i].length;
	}
	s->cur->inline_len = (uint32_t)total;
	s->cur->num_sge = 0;
	s->cur->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wr_set_inline_data_list(qp, 1, &b);
}

static int wr_complete(struct ibv_qp_ex *qp)
{
	struct vr_wr_state *s = wr_state(qp);
	enum ibv_qp_state st = qp->qp_base.state;
	int ret = s->err;

	if (!ret && s->pos != *s->v.sq_prod &&
	    (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR))
		ret = EINVAL; /* as ibv_post_send: nothing is sent before RTS */
	if (ret || s->pos == *s->v.sq_prod) {
		pthread_spin_unlock(s->v.sq_lock);
		return ret;
	}
	vr_qp_sends_posted(&qp->qp_base, *s->v.sq_prod, s->pos);
	*s->v.sq_prod = s->pos;
	__atomic_store_n(ring_u32(s->v.ring, VR_SQ_PROD), s->pos, __ATOMIC_RELEASE);
	pthread_spin_unlock(s->v.sq_lock);
	vr_qp_doorbell(&qp->qp_base);
	return 0;
}

static void wr_abort(struct ibv_qp_ex *qp)
{
	struct vr_wr_state *s = wr_state(qp);

	/* Nothing was published: the producer counter never moved. */
	s->pos = *s->v.sq_prod;
	pthread_spin_unlock(s->v.sq_lock);
}

void vr_qp_ex_init(struct ibv_qp *ibqp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *qp = (struct ibv_qp_ex *)ibqp; /* a union in vrdma.c */
	struct vr_wr_state *s = calloc(1, sizeof(*s));

	if (!s)
		return; /* ibv_qp_to_qp_ex then returns NULL */
	vr_qp_view(ibqp, &s->v);
	s->ops = send_ops_flags;
	*s->v.ex = s;
	qp->comp_mask = 0;
	qp->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qp->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qp->wr_bind_mw = wr_bind_mw;
	qp->wr_local_inv = wr_local_inv;
	qp->wr_rdma_read = wr_rdma_read;
	qp->wr_rdma_write = wr_rdma_write;
	qp->wr_rdma_write_imm = wr_rdma_write_imm;
	qp->wr_send = wr_send;
	qp->wr_send_imm = wr_send_imm;
	qp->wr_send_inv = wr_send_inv;
	qp->wr_send_tso = wr_send_tso;
	qp->wr_set_ud_addr = wr_set_ud_addr;
	qp->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qp->wr_set_inline_data = wr_set_inline_data;
	qp->wr_set_inline_data_list = wr_set_inline_data_list;
	qp->wr_set_sge = wr_set_sge;
	qp->wr_set_sge_list = wr_set_sge_list;
	qp->wr_start = wr_start;
	qp->wr_complete = wr_complete;
	qp->wr_abort = wr_abort;
	qp->wr_atomic_write = wr_atomic_write;
}

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct vr_qp_view v;

	if (!qp)
		return NULL;
	vr_qp_view(qp, &v);
	return *v.ex ? (struct ibv_qp_ex *)qp : NULL;
}
