/*
 * Control protocol between the guest library (libibverbs.so.1 replacement) and the vNIC's
 * control server, over a Unix-domain stream socket. Every integer is little-endian; structs are
 * packed and laid out exactly as on the wire. See guest-driver-shim/README.md.
 */
#ifndef VRDMA_PROTO_H
#define VRDMA_PROTO_H

#include <stdint.h>

#define VRDMA_PROTO_MAGIC 0x30445256u /* "VRD0" */
#define VRDMA_PROTO_VERSION 1
#define VRDMA_MAX_BODY 65536

/* Header of every request and response. */
struct vr_hdr {
	uint32_t len;    /* body bytes after the header */
	uint16_t op;     /* request opcode; echoed in the response */
	uint16_t flags;  /* 0 */
	uint32_t seq;    /* chosen by the client, echoed in the response */
	int32_t status;  /* requests: 0; responses: 0 or a positive errno */
} __attribute__((packed));

enum vr_op {
	VR_HELLO = 1,
	VR_QUERY_DEVICE = 2,
	VR_QUERY_PORT = 3,
	VR_QUERY_GID = 4,
	VR_ALLOC_PD = 5,
	VR_DEALLOC_PD = 6,
	VR_REG_MR = 7,
	VR_DEREG_MR = 8,
	VR_CREATE_CHANNEL = 9,
	VR_DESTROY_CHANNEL = 10,
	VR_CREATE_CQ = 11,
	VR_DESTROY_CQ = 12,
	VR_REQ_NOTIFY_CQ = 13,
	VR_ACK_CQ_EVENTS = 14,
	VR_POLL_CQ = 15,
	VR_BIND_CHANNEL = 16,
	VR_CREATE_QP = 17,
	VR_MODIFY_QP = 18,
	VR_QUERY_QP = 19,
	VR_DESTROY_QP = 20,
	VR_OPEN_DOORBELL = 21,
	VR_BIND_DOORBELL = 22,
	VR_OPEN_ASYNC = 23,
	VR_BIND_ASYNC = 24,
	/* Address handles and shared receive queues (UD and SRQ): ops 40-45. */
	VR_CREATE_AH = 40,
	VR_DESTROY_AH = 41,
	VR_CREATE_SRQ = 42,
	VR_MODIFY_SRQ = 43,
	VR_QUERY_SRQ = 44,
	VR_DESTROY_SRQ = 45,
	/* Memory windows: ops 46-47 (binding and invalidation go through the send ring). */
	VR_ALLOC_MW = 46,
	VR_DEALLOC_MW = 47,
};

struct vr_hello_req {
	uint32_t magic;
	uint16_t version;
	uint16_t reserved;
	uint32_t pid;
	uint32_t reserved2;
} __attribute__((packed));

struct vr_hello_resp {
	uint16_t version;
	uint16_t reserved;
	uint32_t reserved2;
} __attribute__((packed));

struct vr_device_attr {
	char name[64];
	char fw_ver[64];
	uint64_t node_guid; /* as printed: host-order value of the big-endian GUID */
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t device_cap_flags;
	int32_t max_qp;
	int32_t max_qp_wr;
	int32_t max_sge;
	int32_t max_sge_rd;
	int32_t max_cq;
	int32_t max_cqe;
	int32_t max_mr;
	int32_t max_pd;
	int32_t max_qp_rd_atom;
	int32_t max_res_rd_atom;
	int32_t max_qp_init_rd_atom;
	int32_t atomic_cap;
	int32_t max_srq;
	int32_t max_srq_wr;
	int32_t max_srq_sge;
	int32_t max_ah;
	int32_t max_inline_data;
	uint16_t max_pkeys;
	uint8_t phys_port_cnt;
	uint8_t local_ca_ack_delay;
	int32_t max_mw;
	uint32_t reserved;
} __attribute__((packed));

struct vr_port_req {
	uint32_t port;
} __attribute__((packed));

struct vr_port_attr {
	uint32_t state;
	uint32_t max_mtu;
	uint32_t active_mtu;
	int32_t gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint16_t pkey_tbl_len;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint16_t reserved;
} __attribute__((packed));

struct vr_gid_req {
	uint32_t port;
	uint32_t index;
} __attribute__((packed));

struct vr_gid_resp {
	uint8_t gid[16];
	uint32_t gid_type; /* enum ibv_gid_type */
	uint32_t reserved;
} __attribute__((packed));

struct vr_handle {
	uint32_t handle;
	uint32_t arg; /* per request: solicited_only, event count, ... */
} __attribute__((packed));

struct vr_reg_mr_req {
	uint32_t pd;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
} __attribute__((packed));

/*
 * REG_MR of zero-copy memory: the library re-backed the registered pages with a memfd (sealed
 * against resizing) and the request continues with its descriptor number, which the vNIC opens as
 * /proc/<pid>/fd/<n> and maps, and the file offset of byte `addr`. Without these fields the vNIC
 * reaches the memory with process_vm_readv/writev.
 */
struct vr_reg_mr_memfd_req {
	struct vr_reg_mr_req base;
	int32_t memfd;
	uint32_t reserved;
	uint64_t memfd_offset;
} __attribute__((packed));

/* vr_reg_mr_resp.flags */
#define VR_MR_ZERO_COPY 1u /* the vNIC maps the memfd: no system call per access */

struct vr_reg_mr_resp {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t flags; /* VR_MR_ZERO_COPY */
} __attribute__((packed));

struct vr_channel_resp {
	uint32_t handle;
	uint32_t reserved;
	uint64_t token;
} __attribute__((packed));

struct vr_bind_channel_req {
	uint32_t handle;
	uint32_t reserved;
	uint64_t token;
} __attribute__((packed));

/* Sent by the server on a bound channel socket, one per completion event. */
struct vr_event {
	uint64_t cookie; /* the CQ's cookie from VR_CREATE_CQ */
} __attribute__((packed));

struct vr_create_cq_req {
	uint32_t cqe;
	uint32_t channel; /* 0: none */
	uint32_t comp_vector;
	uint32_t reserved;
	uint64_t cookie;
} __attribute__((packed));

/*
 * CREATE_CQ with a completion ring: the request continues with the ring's memfd (a descriptor
 * number in the application, which the vNIC opens as /proc/<pid>/fd/<n>) and its size. The memfd
 * must be sealed against shrinking (F_SEAL_SHRINK) so the vNIC's mapping can never fault.
 */
struct vr_create_cq_ring_req {
	struct vr_create_cq_req base;
	int32_t ring_fd;
	uint32_t ring_bytes;
} __attribute__((packed));

struct vr_create_cq_resp {
	uint32_t handle;
	uint32_t cqe;
} __attribute__((packed));

struct vr_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode; /* enum ibv_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* host order */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint16_t reserved;
} __attribute__((packed));

/* ---------------------------------------------------------------- shared-memory rings
 *
 * Counters are free-running u32s; a slot is counter % entries (entries a power of two). Each
 * counter has one writer and sits on its own 64-byte line. Producers store the counter with
 * release semantics after the slot; consumers load it with acquire.
 *
 * Completion ring (one memfd per CQ):
 *   [0]   u32 prod  written by the vNIC      [64] u32 cons  written by the library
 *   [8]   u32 notified (vNIC): the arm word the vNIC last answered with an event
 *   [72]  u32 arm (library): (sequence << 1) | solicited_only, a new sequence per
 *         ibv_req_notify_cq; armed while arm != notified. The vNIC checks it after each
 *         publish (full fence between), the library arms then polls again, so no completion
 *         is missed and arming costs no system call.
 *   [76]  u32 waiters (library): pollers sleeping on the futex at prod; the vNIC wakes them
 *         (FUTEX_WAKE on the shared mapping) after a publish that finds it non-zero
 *   [80]  u32 wake_batch (library): 0 or 1, wake sleepers on any completion; n > 1, only once
 *         prod - cons >= n or a completion failed (a poller that expects many completions
 *         sleeps until a batch of them is there, bounded by its timeout)
 *   [128] entries x struct vr_wc_slot
 *
 * Work-queue rings (one memfd per QP):
 *   [0]   u32 sq_prod (library)   [64]  u32 sq_cons (vNIC)
 *   [128] u32 rq_prod (library)   [192] u32 rq_cons (vNIC)
 *   [256] u32 doorbell_armed: the vNIC sets 1 before it sleeps; a producer that exchanges it
 *         from 1 to 0 after publishing writes one doorbell (notification suppression, as virtio)
 *   [512] sq_entries x sq_stride bytes, then rq_entries x rq_stride bytes
 * sq_stride = align64(sizeof(vr_sq_wqe) + 16 * max_send_sge + max_inline_data)
 * rq_stride = align64(sizeof(vr_rq_wqe) + 16 * max_recv_sge)
 * entries = the smallest power of two >= max_*_wr (at least 1)
 */
#define VR_CQ_RING_HDR 128
#define VR_CQ_PROD 0
#define VR_CQ_CONS 64
#define VR_CQ_NOTIFIED 8
#define VR_CQ_ARM 72
#define VR_CQ_WAITERS 76
#define VR_CQ_WAKE_BATCH 80
#define VR_QP_RING_HDR 512
#define VR_SQ_PROD 0
#define VR_SQ_CONS 64
#define VR_RQ_PROD 128
#define VR_RQ_CONS 192
#define VR_DB_ARMED 256

struct vr_wc_slot {
	struct vr_wc wc;
	uint32_t src_ipv4;   /* the sender's IPv4 address, big-endian as an integer (receives) */
	uint32_t slot_flags; /* VR_WC_SLOT_SOLICITED: the message asked for a solicited event */
	uint8_t pad[8];
} __attribute__((packed));

#define VR_WC_SLOT_SOLICITED 1u

struct vr_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
} __attribute__((packed));

struct vr_sq_wqe {
	uint64_t wr_id;
	uint32_t opcode; /* enum ibv_wr_opcode */
	uint32_t send_flags;
	uint32_t num_sge;
	uint32_t imm_data; /* host order */
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t inline_len; /* with IBV_SEND_INLINE: bytes after the SGE area */
	uint64_t compare_add;
	uint64_t swap;
	uint32_t ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t reserved;
	/* struct vr_sge sge[max_send_sge]; uint8_t inline_data[max_inline_data]; */
} __attribute__((packed));

/*
 * Memory window operations in the send ring: IBV_WR_LOCAL_INV and IBV_WR_SEND_WITH_INV carry
 * invalidate_rkey in imm_data (host order, unconverted). IBV_WR_BIND_MW (and ibv_bind_mw, for type 1
 * windows) uses remote_addr = bind addr, compare_add = bind length, rkey = the window's new rkey,
 * ah = the window's handle, remote_qpn = the region's handle (0: none), remote_qkey = access flags.
 */

struct vr_rq_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t reserved;
	/* struct vr_sge sge[max_recv_sge]; */
} __attribute__((packed));

struct vr_create_qp_req {
	uint32_t pd;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t srq; /* 0: none */
	uint32_t qp_type; /* enum ibv_qp_type */
	uint32_t sq_sig_all;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	int32_t ring_fd;
	uint32_t ring_bytes;
	uint32_t reserved;
} __attribute__((packed));

struct vr_create_qp_resp {
	uint32_t handle;
	uint32_t qp_num;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t reserved;
} __attribute__((packed));

struct vr_qp_attr {
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint32_t pkey_index;
	uint32_t port_num;
	uint32_t max_rd_atomic;
	uint32_t max_dest_rd_atomic;
	uint32_t min_rnr_timer;
	uint32_t timeout;
	uint32_t retry_cnt;
	uint32_t rnr_retry;
	uint32_t en_sqd_async_notify;
	uint32_t sq_draining;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint8_t dgid[16];
	uint32_t ah_is_global;
	uint32_t ah_sgid_index;
	uint32_t ah_hop_limit;
	uint32_t ah_traffic_class;
	uint32_t ah_flow_label;
	uint32_t ah_dlid;
	uint32_t ah_sl;
	uint32_t ah_port_num;
	uint32_t reserved;
} __attribute__((packed));

struct vr_modify_qp_req {
	uint32_t handle;
	uint32_t mask; /* enum ibv_qp_attr_mask */
	struct vr_qp_attr attr;
} __attribute__((packed));

struct vr_doorbell_resp {
	uint64_t token;
} __attribute__((packed));

struct vr_bind_doorbell_req {
	uint64_t token;
} __attribute__((packed));

/*
 * Asynchronous events: OPEN_ASYNC returns a token (struct vr_doorbell_resp) that a second
 * connection presents with BIND_ASYNC (struct vr_bind_doorbell_req); that connection becomes the
 * context's async_fd and carries one struct vr_async_event per event.
 */
#define VR_ASYNC_QP 1
#define VR_ASYNC_CQ 2
#define VR_ASYNC_SRQ 3
#define VR_ASYNC_PORT 4
#define VR_ASYNC_DEVICE 5

struct vr_async_event {
	uint32_t event_type; /* enum ibv_event_type */
	uint32_t kind;       /* VR_ASYNC_* */
	uint32_t handle;     /* the object's handle; for port events the port number */
	uint32_t reserved;
} __attribute__((packed));

_Static_assert(sizeof(struct vr_async_event) == 16, "vr_async_event");
/* ---------------------------------------------------------------- address handles (UD) */

/* struct ibv_ah_attr on the wire. RoCE v2: is_global = 1 and dgid ::ffff:a.b.c.d, sgid_index 0. */
struct vr_create_ah_req {
	uint32_t pd;
	uint32_t is_global;
	uint8_t dgid[16];
	uint32_t sgid_index;
	uint32_t hop_limit;
	uint32_t traffic_class;
	uint32_t flow_label;
	uint32_t dlid;
	uint32_t sl;
	uint32_t port_num;
	uint32_t reserved;
} __attribute__((packed));

/* ---------------------------------------------------------------- memory windows */

struct vr_alloc_mw_req {
	uint32_t pd;
	uint32_t type; /* IBV_MW_TYPE_1 or IBV_MW_TYPE_2 */
} __attribute__((packed));

struct vr_alloc_mw_resp {
	uint32_t handle;
	uint32_t rkey;
} __attribute__((packed));

/* ---------------------------------------------------------------- shared receive queues
 *
 * SRQ ring (one memfd per SRQ):
 *   [0]   u32 prod (library)    [64] u32 cons (vNIC): receives the vNIC has CONSUMED (handed to a
 *         message), not merely read, so prod - cons is exactly the receives outstanding and the
 *         library refuses a post beyond max_wr with ENOMEM
 *   [256] u32 doorbell_armed (as in the work-queue rings)
 *   [512] entries x stride: struct vr_rq_wqe + max_sge x struct vr_sge
 * stride = align64(sizeof(vr_rq_wqe) + 16 * max_sge), entries = the smallest power of two >= max_wr
 */
#define VR_SRQ_RING_HDR 512
#define VR_SRQ_PROD 0
#define VR_SRQ_CONS 64

struct vr_create_srq_req {
	uint32_t pd;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	int32_t ring_fd;
	uint32_t ring_bytes;
} __attribute__((packed));

struct vr_create_srq_resp {
	uint32_t handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t reserved;
} __attribute__((packed));

/* MODIFY_SRQ request (mask: IBV_SRQ_MAX_WR 1, IBV_SRQ_LIMIT 2); QUERY_SRQ response (mask 0). */
struct vr_srq_attr {
	uint32_t handle;
	uint32_t mask;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t reserved;
} __attribute__((packed));

_Static_assert(sizeof(struct vr_hdr) == 16, "vr_hdr");
_Static_assert(sizeof(struct vr_create_ah_req) == 56, "vr_create_ah_req");
_Static_assert(sizeof(struct vr_create_srq_req) == 24, "vr_create_srq_req");
_Static_assert(sizeof(struct vr_srq_attr) == 24, "vr_srq_attr");
_Static_assert(sizeof(struct vr_wc_slot) == 64, "vr_wc_slot");
_Static_assert(sizeof(struct vr_sq_wqe) == 72, "vr_sq_wqe");
_Static_assert(sizeof(struct vr_rq_wqe) == 16, "vr_rq_wqe");
_Static_assert(sizeof(struct vr_create_qp_req) == 56, "vr_create_qp_req");
_Static_assert(sizeof(struct vr_qp_attr) == 144, "vr_qp_attr");
_Static_assert(sizeof(struct vr_device_attr) == 256, "vr_device_attr");
_Static_assert(sizeof(struct vr_alloc_mw_req) == 8, "vr_alloc_mw_req");
_Static_assert(sizeof(struct vr_port_attr) == 32, "vr_port_attr");
_Static_assert(sizeof(struct vr_wc) == 48, "vr_wc");
_Static_assert(sizeof(struct vr_reg_mr_memfd_req) == 48, "vr_reg_mr_memfd_req");

#endif
