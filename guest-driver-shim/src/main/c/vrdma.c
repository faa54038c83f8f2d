/*
 * vRDMA guest library: a drop-in libibverbs.so.1 that presents the vNIC of this host as one RDMA
 * device and forwards verbs to the vNIC's control server over a Unix-domain socket.
 *
 * Functions not implemented here are generated into stubs.c (see gen-symbols.sh): they fail
 * with EOPNOTSUPP and never crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>

#include <infiniband/verbs.h>

#include "vrdma_proto.h"
#include "vrdma_int.h"

#define EXPORT __attribute__((visibility("default")))

/* The header turns these into macros or inlines; the library exports the functions. */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* ---------------------------------------------------------------- transport to the server */

struct vr_conn {
	int fd;
	uint32_t seq;
	pthread_mutex_t lock;
	bool broken;
};

void vr_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vrdma: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static const char *vr_socket_path(char *buf, size_t len)
{
	const char *env = getenv("VRDMA_SOCKET");

	if (env && *env)
		return env;
	snprintf(buf, len, "/tmp/vrdma-%u/vnic.sock", (unsigned)getuid());
	return buf;
}

int vr_connect(void)
{
	char buf[128];
	const char *path = vr_socket_path(buf, sizeof(buf));
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One request/response exchange. Returns 0 or a positive errno; *resp_len gets the body length
 * (at most resp_max bytes are kept, the rest is read and dropped).
 */
static int vr_call(struct vr_conn *c, uint16_t op, const void *req, uint32_t req_len, void *resp,
		   uint32_t resp_max, uint32_t *resp_len)
{
	struct vr_hdr h = { .len = req_len, .op = op, .flags = 0, .status = 0 };
	struct vr_hdr r;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	if (c->broken) {
		pthread_mutex_unlock(&c->lock);
		return EIO;
	}
	h.seq = ++c->seq;
	if (write_all(c->fd, &h, sizeof(h)) || (req_len && write_all(c->fd, req, req_len)) ||
	    read_all(c->fd, &r, sizeof(r))) {
		c->broken = true;
		pthread_mutex_unlock(&c->lock);
		return EIO;
	}
	if (r.seq != h.seq || r.op != op || r.len > VRDMA_MAX_BODY) {
		c->broken = true;
		pthread_mutex_unlock(&c->lock);
		return EIO;
	}
	{
		uint32_t keep = r.len < resp_max ? r.len : resp_max;
		uint32_t rest = r.len - keep;
		char sink[256];

		if (keep && read_all(c->fd, resp, keep)) {
			c->broken = true;
			pthread_mutex_unlock(&c->lock);
			return EIO;
		}
		while (rest) {
			uint32_t n = rest < sizeof(sink) ? rest : sizeof(sink);

			if (read_all(c->fd, sink, n)) {
				c->broken = true;
				pthread_mutex_unlock(&c->lock);
				return EIO;
			}
			rest -= n;
		}
		if (resp_len)
			*resp_len = keep;
	}
	ret = r.status;
	if (ret < 0)
		ret = EIO;
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int vr_hello(struct vr_conn *c)
{
	struct vr_hello_req req = {
		.magic = VRDMA_PROTO_MAGIC,
		.version = VRDMA_PROTO_VERSION,
		.pid = (uint32_t)getpid(),
	};
	struct vr_hello_resp resp;
	uint32_t len = 0;
	int ret = vr_call(c, VR_HELLO, &req, sizeof(req), &resp, sizeof(resp), &len);

	if (!ret && (len < sizeof(resp) || resp.version != VRDMA_PROTO_VERSION))
		ret = EPROTO;
	return ret;
}

static int vr_open_conn(struct vr_conn *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->fd = vr_connect();
	if (c->fd < 0)
		return errno ? errno : EIO;
	ret = vr_hello(c);
	if (ret) {
		close(c->fd);
		c->fd = -1;
	}
	return ret;
}

static void vr_close_conn(struct vr_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	pthread_mutex_destroy(&c->lock);
}

/* Calls that return a fixed-size body: fails with EPROTO on a short one. */
static int vr_call_fixed(struct vr_conn *c, uint16_t op, const void *req, uint32_t req_len,
			 void *resp, uint32_t resp_size)
{
	uint32_t len = 0;
	int ret = vr_call(c, op, req, req_len, resp, resp_size, &len);

	if (!ret && len < resp_size)
		ret = EPROTO;
	return ret;
}

/* A new connection whose first request is `op` (a BIND_* with a token): its fd, or -1 and errno. */
int vr_connect_bound(uint16_t op, const void *req, uint32_t req_len)
{
	struct vr_conn c;
	int ret;

	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.lock, NULL);
	c.fd = vr_connect();
	ret = c.fd < 0 ? (errno ? errno : EIO) : vr_call(&c, op, req, req_len, NULL, 0, NULL);
	pthread_mutex_destroy(&c.lock);
	if (ret) {
		if (c.fd >= 0)
			close(c.fd);
		errno = ret;
		return -1;
	}
	return c.fd;
}

/* ---------------------------------------------------------------- objects */

#define VR_IBDEV_PREFIX "/sys/class/infiniband/"

struct vr_device {
	struct ibv_device dev;
	struct vr_device_attr attr;
};

struct vr_context {
	struct verbs_context vctx; /* ends with struct ibv_context */
	struct vr_conn conn;
	struct vr_device_attr attr;
	int db_fd; /* doorbell connection (non-blocking), -1 until the first QP */
	pthread_mutex_t db_lock;
};

struct vr_pd {
	struct ibv_pd pd;
};

struct vr_zc_range;

struct vr_mr {
	struct ibv_mr mr;
	struct vr_zc_range *zc; /* the memfd the vNIC maps, or NULL (process_vm_readv/writev) */
};

struct vr_channel {
	struct ibv_comp_channel ch;
	uint32_t handle;
};

struct vr_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex; /* ibv_create_cq_ex: the same object, extended */
	};
	uint32_t acked; /* events acknowledged and not yet reported to the server */
	uint8_t *ring; /* completion ring shared with the vNIC */
	size_t ring_bytes;
	uint32_t entries;
	uint32_t cons;
	pthread_spinlock_t lock;
	struct vr_cq_expect expect; /* what poll_cq may still see: sizes its sleeps */
	void *ex; /* vrdma_ex.c: state of ibv_start_poll ... ibv_end_poll */
};

struct vr_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qpx; /* created with send_ops_flags: the ibv_wr_* API */
	};
	uint8_t *ring; /* send and receive rings shared with the vNIC */
	size_t ring_bytes;
	uint32_t sq_entries, rq_entries, sq_stride, rq_stride;
	uint32_t max_send_sge, max_recv_sge, max_inline, max_send_wr, max_recv_wr;
	uint32_t sq_prod, rq_prod;
	int sq_sig_all;
	pthread_spinlock_t sq_lock, rq_lock;
	void *ex; /* vrdma_ex.c: state of ibv_wr_start ... ibv_wr_complete */
};

static struct vr_device *g_device;
static pthread_mutex_t g_device_lock = PTHREAD_MUTEX_INITIALIZER;

static inline struct vr_context *to_vctx(struct ibv_context *ctx)
{
	return (struct vr_context *)((char *)ctx - offsetof(struct vr_context, vctx.context));
}

/* ---------------------------------------------------------------- for vrdma_events.c, vrdma_ex.c */

int vr_ctx_call(struct ibv_context *ctx, uint16_t op, const void *req, uint32_t req_len, void *resp,
		uint32_t resp_size)
{
	if (!resp_size)
		return vr_call(&to_vctx(ctx)->conn, op, req, req_len, NULL, 0, NULL);
	return vr_call_fixed(&to_vctx(ctx)->conn, op, req, req_len, resp, resp_size);
}

void vr_cq_view(struct ibv_cq *ibcq, struct vr_cq_view *v)
{
	struct vr_cq *cq = (struct vr_cq *)ibcq;

	v->ring = cq->ring;
	v->entries = cq->entries;
	v->cons = &cq->cons;
	v->lock = &cq->lock;
	v->expect = &cq->expect;
	v->ex = &cq->ex;
}

static void doorbell_ring(struct vr_qp *qp);

void vr_qp_view(struct ibv_qp *ibqp, struct vr_qp_view *v)
{
	struct vr_qp *qp = (struct vr_qp *)ibqp;

	v->ring = qp->ring;
	v->sq_entries = qp->sq_entries;
	v->sq_stride = qp->sq_stride;
	v->max_send_sge = qp->max_send_sge;
	v->max_inline = qp->max_inline;
	v->sq_sig_all = qp->sq_sig_all;
	v->sq_prod = &qp->sq_prod;
	v->sq_lock = &qp->sq_lock;
	v->ex = &qp->ex;
}

void vr_qp_doorbell(struct ibv_qp *qp)
{
	doorbell_ring((struct vr_qp *)qp);
}

void vr_qp_sends_posted(struct ibv_qp *ibqp, uint32_t from, uint32_t to)
{
	struct vr_qp *qp = (struct vr_qp *)ibqp;
	const uint8_t *sq = qp->ring + VR_QP_RING_HDR;
	int32_t signaled = 0;

	for (uint32_t i = from; i != to; i++) {
		const struct vr_sq_wqe *w = (const struct vr_sq_wqe *)(sq + (size_t)(i & (qp->sq_entries - 1)) *
										  qp->sq_stride);

		signaled += (w->send_flags & IBV_SEND_SIGNALED) != 0;
	}
	if (signaled)
		vr_expect_add(&((struct vr_cq *)ibqp->send_cq)->expect.sends, signaled);
}

static int set_errno(int e)
{
	errno = e;
	return e;
}

/* ---------------------------------------------------------------- device list */

EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = calloc(2, sizeof(*list));
	struct vr_conn c;
	struct vr_device_attr attr;
	int n = 0;

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	if (vr_open_conn(&c) == 0) {
		if (vr_call_fixed(&c, VR_QUERY_DEVICE, NULL, 0, &attr, sizeof(attr)) == 0) {
			pthread_mutex_lock(&g_device_lock);
			if (!g_device)
				g_device = calloc(1, sizeof(*g_device));
			if (g_device) {
				struct ibv_device *d = &g_device->dev;

				attr.name[sizeof(attr.name) - 1] = 0;
				attr.fw_ver[sizeof(attr.fw_ver) - 1] = 0;
				g_device->attr = attr;
				d->node_type = IBV_NODE_CA;
				d->transport_type = IBV_TRANSPORT_IB;
				snprintf(d->name, sizeof(d->name), "%s", attr.name);
				snprintf(d->dev_name, sizeof(d->dev_name), "uverbs0");
				snprintf(d->dev_path, sizeof(d->dev_path),
					 "/sys/class/infiniband_verbs/uverbs0");
				snprintf(d->ibdev_path, sizeof(d->ibdev_path), VR_IBDEV_PREFIX "%s",
					 attr.name);
				list[n++] = d;
			}
			pthread_mutex_unlock(&g_device_lock);
		}
		vr_close_conn(&c);
	}
	if (num_devices)
		*num_devices = n;
	return list;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device ? device->name : NULL;
}

EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct vr_device *d = (struct vr_device *)device;

	return d ? htobe64(d->attr.node_guid) : 0;
}

EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return device ? 0 : -1;
}

/* ---------------------------------------------------------------- context */

static int vr_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
			 size_t len);
static int vr_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t len);
static int vr_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int vr_req_notify_cq(struct ibv_cq *cq, int solicited_only);
static int vr_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int vr_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int vr_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static struct ibv_mw *vr_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
static int vr_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
static int vr_dealloc_mw(struct ibv_mw *mw);
static struct ibv_qp *vr_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a);

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct vr_context *c;
	struct ibv_context *ctx;
	int ret;

	if (!device || (g_device && device != &g_device->dev)) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	ret = vr_open_conn(&c->conn);
	if (!ret)
		ret = vr_call_fixed(&c->conn, VR_QUERY_DEVICE, NULL, 0, &c->attr, sizeof(c->attr));
	if (ret) {
		if (c->conn.fd >= 0)
			vr_close_conn(&c->conn);
		free(c);
		errno = ret;
		return NULL;
	}
	c->db_fd = -1;
	pthread_mutex_init(&c->db_lock, NULL);
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = c->conn.fd;
	ctx->async_fd = vr_async_open(ctx);
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = vr_poll_cq;
	ctx->ops.req_notify_cq = vr_req_notify_cq;
	ctx->ops.post_send = vr_post_send;
	ctx->ops.post_recv = vr_post_recv;
	ctx->ops.post_srq_recv = vr_post_srq_recv;
	ctx->ops.alloc_mw = vr_alloc_mw;
	ctx->ops.bind_mw = vr_bind_mw;
	ctx->ops.dealloc_mw = vr_dealloc_mw;
	c->vctx.sz = sizeof(struct verbs_context);
	c->vctx.query_port = vr_query_port;
	c->vctx.query_device_ex = vr_query_device_ex;
	c->vctx.create_cq_ex = vr_create_cq_ex;
	c->vctx.create_qp_ex = vr_create_qp_ex;
	return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	struct vr_context *c;

	if (!ctx)
		return set_errno(EINVAL);
	c = to_vctx(ctx);
	vr_async_close(ctx);
	/* Closing the socket releases everything the context still holds in the vNIC. */
	vr_close_conn(&c->conn);
	if (c->db_fd >= 0)
		close(c->db_fd);
	pthread_mutex_destroy(&c->db_lock);
	pthread_mutex_destroy(&ctx->mutex);
	free(c);
	return 0;
}

/* ---------------------------------------------------------------- queries */

static void fill_device_attr(const struct vr_device_attr *a, struct ibv_device_attr *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->fw_ver, sizeof(d->fw_ver), "%s", a->fw_ver);
	d->node_guid = htobe64(a->node_guid);
	d->sys_image_guid = htobe64(a->sys_image_guid);
	d->max_mr_size = a->max_mr_size;
	d->page_size_cap = a->page_size_cap;
	d->vendor_id = a->vendor_id;
	d->vendor_part_id = a->vendor_part_id;
	d->hw_ver = a->hw_ver;
	d->max_qp = a->max_qp;
	d->max_qp_wr = a->max_qp_wr;
	d->device_cap_flags = a->device_cap_flags;
	d->max_sge = a->max_sge;
	d->max_sge_rd = a->max_sge_rd;
	d->max_cq = a->max_cq;
	d->max_cqe = a->max_cqe;
	d->max_mr = a->max_mr;
	d->max_pd = a->max_pd;
	d->max_qp_rd_atom = a->max_qp_rd_atom;
	d->max_res_rd_atom = a->max_res_rd_atom;
	d->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	d->atomic_cap = (enum ibv_atomic_cap)a->atomic_cap;
	d->max_srq = a->max_srq;
	d->max_srq_wr = a->max_srq_wr;
	d->max_srq_sge = a->max_srq_sge;
	d->max_ah = a->max_ah;
	d->max_pkeys = a->max_pkeys;
	d->phys_port_cnt = a->phys_port_cnt;
	d->local_ca_ack_delay = a->local_ca_ack_delay;
	d->max_mw = a->max_mw;
}

EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	struct vr_context *c;
	struct vr_device_attr a;
	int ret;

	if (!ctx || !attr)
		return set_errno(EINVAL);
	c = to_vctx(ctx);
	ret = vr_call_fixed(&c->conn, VR_QUERY_DEVICE, NULL, 0, &a, sizeof(a));
	if (ret)
		return set_errno(ret);
	fill_device_attr(&a, attr);
	return 0;
}

static int vr_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t len)
{
	struct ibv_device_attr_ex full;
	struct vr_device_attr a;
	int ret;

	if (in && in->comp_mask)
		return EINVAL;
	if (!attr || len < sizeof(struct ibv_device_attr))
		return EINVAL;
	ret = vr_call_fixed(&to_vctx(ctx)->conn, VR_QUERY_DEVICE, NULL, 0, &a, sizeof(a));
	if (ret)
		return ret;
	memset(&full, 0, sizeof(full));
	fill_device_attr(&a, &full.orig_attr);
	full.max_dm_size = 0;
	full.phys_port_cnt_ex = a.phys_port_cnt;
	/* The caller's struct may be older (smaller) or newer (larger) than ours. */
	memcpy(attr, &full, len < sizeof(full) ? len : sizeof(full));
	if (len > sizeof(full))
		memset((char *)attr + sizeof(full), 0, len - sizeof(full));
	return 0;
}

static int query_port_raw(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *out)
{
	struct vr_port_req req = { .port = port };
	struct vr_port_attr p;
	int ret = vr_call_fixed(&to_vctx(ctx)->conn, VR_QUERY_PORT, &req, sizeof(req), &p, sizeof(p));

	if (ret)
		return ret;
	memset(out, 0, sizeof(*out));
	out->state = (enum ibv_port_state)p.state;
	out->max_mtu = (enum ibv_mtu)p.max_mtu;
	out->active_mtu = (enum ibv_mtu)p.active_mtu;
	out->gid_tbl_len = p.gid_tbl_len;
	out->port_cap_flags = p.port_cap_flags;
	out->max_msg_sz = p.max_msg_sz;
	out->pkey_tbl_len = p.pkey_tbl_len;
	out->lid = 0;
	out->sm_lid = 0;
	out->lmc = 0;
	out->max_vl_num = 1;
	out->active_width = p.active_width;
	out->active_speed = p.active_speed;
	out->phys_state = p.phys_state;
	out->link_layer = p.link_layer;
	return 0;
}

static int vr_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
			 size_t len)
{
	struct ibv_port_attr full;
	int ret;

	if (!attr)
		return EINVAL;
	ret = query_port_raw(ctx, port, &full);
	if (ret)
		return ret;
	memcpy(attr, &full, len < sizeof(full) ? len : sizeof(full));
	if (len > sizeof(full))
		memset((char *)attr + sizeof(full), 0, len - sizeof(full));
	return 0;
}

/* ibv_query_port@IBVERBS_1.1 takes the old struct that ends before 'flags'. */
EXPORT int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	struct ibv_port_attr full;
	int ret;

	if (!ctx || !attr)
		return set_errno(EINVAL);
	ret = query_port_raw(ctx, port, &full);
	if (ret)
		return set_errno(ret);
	memcpy(attr, &full, offsetof(struct ibv_port_attr, flags));
	return 0;
}

static int query_gid_raw(struct ibv_context *ctx, uint32_t port, uint32_t index,
			 struct vr_gid_resp *out)
{
	struct vr_gid_req req = { .port = port, .index = index };

	return vr_call_fixed(&to_vctx(ctx)->conn, VR_QUERY_GID, &req, sizeof(req), out, sizeof(*out));
}

EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	struct vr_gid_resp g;
	int ret;

	if (!ctx || !gid || index < 0)
		return set_errno(EINVAL), -1;
	ret = query_gid_raw(ctx, port, (uint32_t)index, &g);
	if (ret) {
		errno = ret;
		return -1;
	}
	memcpy(gid->raw, g.gid, 16);
	return 0;
}

EXPORT int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
			     struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	struct vr_gid_resp g;
	int ret;

	if (!ctx || !entry || flags)
		return EINVAL;
	ret = query_gid_raw(ctx, port, index, &g);
	if (ret)
		return ret;
	memset(&e, 0, sizeof(e));
	memcpy(e.gid.raw, g.gid, 16);
	e.gid_index = index;
	e.port_num = port;
	e.gid_type = g.gid_type;
	e.ndev_ifindex = 0;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
				    size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_port_attr p;
	size_t n = 0;
	int ret;

	if (!ctx || flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	ret = query_port_raw(ctx, 1, &p);
	if (ret)
		return -ret;
	for (int i = 0; i < p.gid_tbl_len; i++) {
		if (n >= max_entries)
			return -EINVAL;
		ret = _ibv_query_gid_ex(ctx, 1, (uint32_t)i,
					(struct ibv_gid_entry *)((char *)entries + n * entry_size), 0,
					entry_size);
		if (ret)
			return -ret;
		n++;
	}
	return (ssize_t)n;
}

/* rdma-core's private ibv_query_gid_type: 0 = IB/RoCE v1, 1 = RoCE v2 (enum ibv_gid_type_sysfs). */
EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index, int *type)
{
	struct vr_gid_resp g;
	int ret;

	if (!ctx || !type)
		return set_errno(EINVAL), -1;
	ret = query_gid_raw(ctx, port, index, &g);
	if (ret) {
		errno = ret;
		return -1;
	}
	*type = g.gid_type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

EXPORT int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	struct ibv_port_attr p;
	int ret;

	if (!ctx || !pkey)
		return set_errno(EINVAL), -1;
	ret = query_port_raw(ctx, port, &p);
	if (ret) {
		errno = ret;
		return -1;
	}
	if (index < 0 || index >= p.pkey_tbl_len) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htons(0xffff);
	return 0;
}

EXPORT int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	(void)ctx;
	(void)port;
	return (ntohs(pkey) & 0x7fff) == 0x7fff ? 0 : -ENOENT;
}

/* ---------------------------------------------------------------- PD and MR */

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct vr_handle resp;
	struct vr_pd *pd;
	int ret;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	ret = vr_call_fixed(&to_vctx(ctx)->conn, VR_ALLOC_PD, NULL, 0, &resp, sizeof(resp));
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		struct vr_handle req = { .handle = resp.handle };

		vr_call(&to_vctx(ctx)->conn, VR_DEALLOC_PD, &req, sizeof(req), NULL, 0, NULL);
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = ctx;
	pd->pd.handle = resp.handle;
	return &pd->pd;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct vr_handle req;
	int ret;

	if (!pd)
		return EINVAL;
	req = (struct vr_handle){ .handle = pd->handle };
	ret = vr_call(&to_vctx(pd->context)->conn, VR_DEALLOC_PD, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

/* ---------------------------------------------------------------- zero-copy registered memory */

/*
 * At registration the library re-backs the registered pages with a memfd that the vNIC maps as
 * well, so the vNIC reads and writes them without a system call (README, "Memory access"): the
 * page-rounded range is copied into a fresh memfd, which then replaces the private anonymous pages
 * at the same addresses (mremap onto them: one atomic swap). One entry per re-backed range; a
 * later MR inside a live range shares its memfd. Anything else (file-backed, hugetlb, stack,
 * read-only memory, a range straddling a live one, VRDMA_ZERO_COPY=0) falls back to the vNIC's
 * process_vm_readv/writev.
 */
#define VR_MR_MEMFD_NAME "vrdma-mr"

struct vr_zc_range {
	uintptr_t start, end; /* page-aligned; file offset 0 is at start */
	int fd;               /* kept open while MRs use it: a later MR inside shares it */
	ino_t ino;
	unsigned int refs;
	struct vr_zc_range *next;
};

static pthread_mutex_t zc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vr_zc_range *zc_ranges;

/* Set by ibv_fork_init (compat.c) or RDMAV_FORK_SAFE: re-backed ranges get MADV_DONTFORK. */
bool vr_fork_safe;

static bool zc_enabled(void)
{
	const char *e = getenv("VRDMA_ZERO_COPY");

	return !e || strcmp(e, "0") != 0;
}

static bool zc_debug(void)
{
	return getenv("VRDMA_DEBUG") != NULL;
}

/*
 * Checks [start, end) against /proc/self/maps. With ino == 0: true when every page lies in a
 * private anonymous read-write mapping (or in a memfd of this library no live MR uses any more).
 * With ino != 0: true when every page lies in a shared mapping of memfd `ino` placed so that file
 * offset 0 is at `base`. Holes, file mappings, hugetlb, the stack and read-only pages: false.
 */
static bool zc_maps_match(uintptr_t start, uintptr_t end, unsigned long ino, uintptr_t base)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4352];
	uintptr_t covered = start;
	bool ok = true;

	if (!f)
		return false;
	while (ok && covered < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, inode;
		char perms[5];
		int n = 0;
		char *name;
		bool ours, plain;

		if (sscanf(line, "%lx-%lx %4s %lx %*x:%*x %lu %n", &lo, &hi, perms, &off, &inode, &n) < 5)
			continue;
		if (hi <= covered)
			continue;
		if (lo > covered)
			break; /* a hole */
		name = line + n;
		name[strcspn(name, "\n")] = 0;
		ours = !strncmp(name, "/memfd:" VR_MR_MEMFD_NAME " ", sizeof("/memfd:" VR_MR_MEMFD_NAME));
		plain = inode == 0 && perms[3] == 'p' &&
			(!name[0] || !strcmp(name, "[heap]") || !strncmp(name, "[anon:", 6));
		if (perms[0] != 'r' || perms[1] != 'w')
			ok = false;
		else if (ino == 0)
			ok = plain || (ours && perms[3] == 's');
		else
			ok = ours && perms[3] == 's' && inode == ino && lo - off == base;
		covered = hi;
	}
	fclose(f);
	return ok && covered >= end;
}

/* Copies [start, end) into a new sealed memfd and swaps it in at the same addresses. */
static struct vr_zc_range *zc_reback(uintptr_t start, uintptr_t end)
{
	size_t len = end - start;
	int fd = memfd_create(VR_MR_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct vr_zc_range *r = NULL;
	void *tmp = MAP_FAILED;
	struct stat st;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 || fstat(fd, &st) < 0)
		goto fail;
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	r = tmp == MAP_FAILED ? NULL : calloc(1, sizeof(*r));
	if (!r)
		goto fail;
	memcpy(tmp, (void *)start, len);
	/* Stores of other threads between this copy and the swap are lost (documented limit). */
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED)
		goto fail;
	if (vr_fork_safe || getenv("RDMAV_FORK_SAFE") || getenv("IBV_FORK_SAFE"))
		madvise((void *)start, len, MADV_DONTFORK);
	r->start = start;
	r->end = end;
	r->fd = fd;
	r->ino = st.st_ino;
	return r;
fail:
	if (zc_debug())
		vr_log("zero-copy re-backing of %#lx+%zu failed: %s", (unsigned long)start, len,
		       strerror(errno));
	if (tmp != MAP_FAILED)
		munmap(tmp, len);
	close(fd);
	free(r);
	return NULL;
}

/* The memfd range serving [addr, addr + length), with *offset the file offset of addr; or NULL. */
static struct vr_zc_range *zc_acquire(void *addr, size_t length, uint64_t *offset)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr, start, end;
	struct vr_zc_range *r;

	if (!zc_enabled() || !length || a + length < a || a + length > UINTPTR_MAX - page)
		return NULL;
	start = a & ~(page - 1);
	end = (a + length + page - 1) & ~(page - 1);
	pthread_mutex_lock(&zc_lock);
	for (r = zc_ranges; r; r = r->next) {
		if (r->end <= start || r->start >= end)
			continue;
		/* Inside a live range whose memfd is still mapped there: share it; else fall back. */
		if (start < r->start || end > r->end ||
		    !zc_maps_match(start, end, (unsigned long)r->ino, r->start))
			r = NULL;
		else
			r->refs++;
		goto out;
	}
	if (!zc_maps_match(start, end, 0, 0)) {
		if (zc_debug())
			vr_log("zero-copy: %p+%zu is not private anonymous read-write memory", addr,
			       length);
		goto out;
	}
	r = zc_reback(start, end);
	if (r) {
		r->refs = 1;
		r->next = zc_ranges;
		zc_ranges = r;
	}
out:
	if (r)
		*offset = a - r->start;
	pthread_mutex_unlock(&zc_lock);
	return r;
}

/*
 * The last MR of a range is gone: the library closes its descriptor. The pages stay mapped from
 * the memfd (their content is the application's), and the vNIC unmapped its view at DEREG_MR.
 */
static void zc_release(struct vr_zc_range *r)
{
	struct vr_zc_range **p;

	if (!r)
		return;
	pthread_mutex_lock(&zc_lock);
	if (--r->refs == 0) {
		for (p = &zc_ranges; *p; p = &(*p)->next) {
			if (*p == r) {
				*p = r->next;
				break;
			}
		}
		close(r->fd);
		free(r);
	}
	pthread_mutex_unlock(&zc_lock);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				       unsigned int access)
{
	struct vr_reg_mr_memfd_req req;
	struct vr_reg_mr_resp resp;
	struct vr_zc_range *zc;
	struct vr_mr *mr;
	uint64_t offset = 0;
	int ret;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	req.base = (struct vr_reg_mr_req){
		.pd = pd->handle,
		.access = access,
		.addr = (uint64_t)(uintptr_t)addr,
		.length = length,
		.iova = iova,
	};
	zc = addr ? zc_acquire(addr, length, &offset) : NULL;
	req.memfd = zc ? zc->fd : -1;
	req.reserved = 0;
	req.memfd_offset = offset;
	ret = vr_call_fixed(&to_vctx(pd->context)->conn, VR_REG_MR, &req,
			    zc ? sizeof(req) : sizeof(req.base), &resp, sizeof(resp));
	if (!ret && zc && !(resp.flags & VR_MR_ZERO_COPY) && zc_debug())
		vr_log("zero-copy: the vNIC reaches %p+%zu with process_vm_readv/writev", addr, length);
	mr = ret ? NULL : calloc(1, sizeof(*mr));
	if (!mr) {
		if (!ret) {
			struct vr_handle d = { .handle = resp.handle };

			vr_call(&to_vctx(pd->context)->conn, VR_DEREG_MR, &d, sizeof(d), NULL, 0, NULL);
		}
		zc_release(zc);
		errno = ret ? ret : ENOMEM;
		return NULL;
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = resp.handle;
	mr->mr.lkey = resp.lkey;
	mr->mr.rkey = resp.rkey;
	mr->zc = zc;
	return &mr->mr;
}

EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uint64_t)(uintptr_t)addr, (unsigned int)access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				      int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct vr_handle req;
	int ret;

	if (!mr)
		return EINVAL;
	req = (struct vr_handle){ .handle = mr->handle };
	ret = vr_call(&to_vctx(mr->context)->conn, VR_DEREG_MR, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	zc_release(((struct vr_mr *)mr)->zc);
	free(mr);
	return 0;
}

/* ---------------------------------------------------------------- completion channels and CQs */

/*
 * A completion channel's fd is its own Unix-domain connection to the server, bound to the channel
 * with a secret token: the server writes one struct vr_event per completion event, so the fd
 * works with read, poll, epoll and O_NONBLOCK like the kernel's channel fd.
 */
EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct vr_channel_resp resp;
	struct vr_bind_channel_req bind;
	struct vr_channel *ch;
	struct vr_conn ev;
	int ret;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	ret = vr_call_fixed(&to_vctx(ctx)->conn, VR_CREATE_CHANNEL, NULL, 0, &resp, sizeof(resp));
	if (ret) {
		errno = ret;
		return NULL;
	}
	memset(&ev, 0, sizeof(ev));
	pthread_mutex_init(&ev.lock, NULL);
	ev.fd = vr_connect();
	ret = ev.fd < 0 ? (errno ? errno : EIO) : 0;
	bind = (struct vr_bind_channel_req){ .handle = resp.handle, .token = resp.token };
	if (!ret)
		ret = vr_call(&ev, VR_BIND_CHANNEL, &bind, sizeof(bind), NULL, 0, NULL);
	ch = ret ? NULL : calloc(1, sizeof(*ch));
	if (!ch) {
		struct vr_handle d = { .handle = resp.handle };

		if (ev.fd >= 0)
			close(ev.fd);
		pthread_mutex_destroy(&ev.lock);
		vr_call(&to_vctx(ctx)->conn, VR_DESTROY_CHANNEL, &d, sizeof(d), NULL, 0, NULL);
		errno = ret ? ret : ENOMEM;
		return NULL;
	}
	pthread_mutex_destroy(&ev.lock);
	ch->ch.context = ctx;
	ch->ch.fd = ev.fd;
	ch->ch.refcnt = 0;
	ch->handle = resp.handle;
	return &ch->ch;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct vr_channel *ch = (struct vr_channel *)channel;
	struct vr_handle req;
	int ret;

	if (!channel)
		return EINVAL;
	req = (struct vr_handle){ .handle = ch->handle };
	ret = vr_call(&to_vctx(channel->context)->conn, VR_DESTROY_CHANNEL, &req, sizeof(req), NULL, 0,
		      NULL);
	if (ret)
		return ret;
	close(channel->fd);
	free(ch);
	return 0;
}

EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct vr_event ev;
	char *p = (char *)&ev;
	size_t got = 0;

	if (!channel || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	while (got < sizeof(ev)) {
		ssize_t n = read(channel->fd, p + got, sizeof(ev) - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && got)
				continue; /* never return half an event */
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		got += (size_t)n;
	}
	*cq = (struct ibv_cq *)(uintptr_t)ev.cookie;
	*cq_context = (*cq)->cq_context;
	return 0;
}

/* Events come from the completion ring's arm word (vrdma_events.c): acknowledging is local. */
EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!cq || !nevents)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---------------------------------------------------------------- shared memory */

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n && p < (1u << 30))
		p <<= 1;
	return p;
}

static uint32_t align64(uint32_t n)
{
	return (n + 63u) & ~63u;
}

/*
 * A sealed memfd of `bytes`, mapped shared at *map. The vNIC opens it as /proc/<pid>/fd/<fd> and
 * maps it too; the seals guarantee neither mapping can ever fault on a shrunk file. Returns the
 * fd (the caller closes it once the vNIC has mapped it) or -1 with errno set.
 */
static int ring_create(const char *name, size_t bytes, uint8_t **map)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)bytes) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	*map = p;
	return fd;
}

/* ---------------------------------------------------------------- CQs */

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector)
{
	struct vr_create_cq_ring_req req;
	struct vr_create_cq_resp resp;
	struct vr_cq *cq;
	int fd, ret;

	if (!ctx || cqe < 1 || cqe > (1 << 24) || comp_vector < 0 ||
	    comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->entries = pow2_at_least((uint32_t)cqe + 1);
	cq->ring_bytes = VR_CQ_RING_HDR + (size_t)cq->entries * sizeof(struct vr_wc_slot);
	fd = ring_create("vrdma-cq", cq->ring_bytes, &cq->ring);
	if (fd < 0) {
		free(cq);
		return NULL;
	}
	req = (struct vr_create_cq_ring_req){
		.base = {
			.cqe = (uint32_t)cqe,
			.channel = channel ? ((struct vr_channel *)channel)->handle : 0,
			.comp_vector = (uint32_t)comp_vector,
			.cookie = (uint64_t)(uintptr_t)&cq->cq,
		},
		.ring_fd = fd,
		.ring_bytes = (uint32_t)cq->ring_bytes,
	};
	ret = vr_call_fixed(&to_vctx(ctx)->conn, VR_CREATE_CQ, &req, sizeof(req), &resp, sizeof(resp));
	close(fd);
	if (ret) {
		munmap(cq->ring, cq->ring_bytes);
		free(cq);
		errno = ret;
		return NULL;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = resp.handle;
	cq->cq.cqe = (int)resp.cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel)
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_SEQ_CST);
	vr_async_track(ctx, VR_ASYNC_CQ, resp.handle, &cq->cq);
	return &cq->cq;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct vr_cq *c = (struct vr_cq *)cq;
	struct vr_handle req;
	int ret;

	if (!cq)
		return EINVAL;
	req = (struct vr_handle){ .handle = cq->handle };
	ret = vr_call(&to_vctx(cq->context)->conn, VR_DESTROY_CQ, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	vr_async_untrack(cq->context, VR_ASYNC_CQ, cq->handle);
	if (cq->channel)
		__atomic_sub_fetch(&cq->channel->refcnt, 1, __ATOMIC_SEQ_CST);
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	pthread_spin_destroy(&c->lock);
	munmap(c->ring, c->ring_bytes);
	free(c->ex);
	free(c);
	return 0;
}

EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}

/*
 * poll_cq reads the completion ring the vNIC fills: no system call. Returns the number of
 * completions (0 if none).
 */
static int vr_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct vr_cq *cq = (struct vr_cq *)ibcq;
	uint32_t prod, mask = cq->entries - 1;
	int got = 0;

	if (n <= 0)
		return 0;
	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(ring_u32(cq->ring, VR_CQ_PROD), __ATOMIC_ACQUIRE);
	while (got < n && cq->cons != prod) {
		const struct vr_wc *w =
			&((const struct vr_wc_slot *)(cq->ring + VR_CQ_RING_HDR))[cq->cons & mask].wc;
		struct ibv_wc *o = &wc[got];

		memset(o, 0, sizeof(*o));
		o->wr_id = w->wr_id;
		o->status = (enum ibv_wc_status)w->status;
		o->opcode = (enum ibv_wc_opcode)w->opcode;
		o->vendor_err = w->vendor_err;
		o->byte_len = w->byte_len;
		/* imm_data is big-endian; invalidated_rkey (the same union) is host order. */
		o->imm_data = (w->wc_flags & IBV_WC_WITH_INV) ? w->imm_data : htonl(w->imm_data);
		o->qp_num = w->qp_num;
		o->src_qp = w->src_qp;
		o->wc_flags = w->wc_flags;
		o->pkey_index = w->pkey_index;
		o->slid = w->slid;
		o->sl = w->sl;
		o->dlid_path_bits = w->dlid_path_bits;
		vr_expect_polled(&cq->expect, o->opcode);
		cq->cons++;
		got++;
	}
	if (got)
		__atomic_store_n(ring_u32(cq->ring, VR_CQ_CONS), cq->cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	/*
	 * The vNIC runs on this host's CPUs, unlike a hardware NIC: an application spinning on an
	 * empty CQ would take the CPU the vNIC needs to produce the completion. After a run of empty
	 * polls, vr_poll_idle yields or sleeps on the ring's futex; while completions flow, poll_cq
	 * makes no system call.
	 */
	if (!got)
		vr_poll_idle(ibcq, cq->ring, cq->cons, &cq->expect);
	else
		vr_poll_busy();
	return got;
}

static int vr_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return vr_cq_arm(((struct vr_cq *)cq)->ring, solicited_only);
}

/* ---------------------------------------------------------------- doorbells */

/*
 * The doorbell is a second connection of the context, bound with a token: one byte written to it
 * wakes the vNIC, which then drains every work-queue ring of the context. It is non-blocking: a
 * full socket buffer already holds wake-ups enough.
 */
static int doorbell_open(struct vr_context *c)
{
	struct vr_doorbell_resp resp;
	struct vr_bind_doorbell_req bind;
	struct vr_conn db;
	int ret = 0;

	pthread_mutex_lock(&c->db_lock);
	if (c->db_fd >= 0)
		goto out;
	ret = vr_call_fixed(&c->conn, VR_OPEN_DOORBELL, NULL, 0, &resp, sizeof(resp));
	if (ret)
		goto out;
	memset(&db, 0, sizeof(db));
	pthread_mutex_init(&db.lock, NULL);
	db.fd = vr_connect();
	ret = db.fd < 0 ? (errno ? errno : EIO) : 0;
	bind = (struct vr_bind_doorbell_req){ .token = resp.token };
	if (!ret)
		ret = vr_call(&db, VR_BIND_DOORBELL, &bind, sizeof(bind), NULL, 0, NULL);
	pthread_mutex_destroy(&db.lock);
	if (ret) {
		if (db.fd >= 0)
			close(db.fd);
		goto out;
	}
	fcntl(db.fd, F_SETFL, fcntl(db.fd, F_GETFL) | O_NONBLOCK);
	c->db_fd = db.fd;
out:
	pthread_mutex_unlock(&c->db_lock);
	return ret;
}

/* After publishing: ring the doorbell only if the vNIC said it is going to sleep. */
static void doorbell_ring_at(struct vr_context *c, uint8_t *ring)
{
	uint32_t *armed = ring_u32(ring, VR_DB_ARMED);
	char one = 1;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(armed, __ATOMIC_RELAXED) == 0)
		return;
	if (__atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST) == 0)
		return;
	if (send(c->db_fd, &one, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
		vr_log("doorbell: %s", strerror(errno));
}

static void doorbell_ring(struct vr_qp *qp)
{
	doorbell_ring_at(to_vctx(qp->qp.context), qp->ring);
}

/* ---------------------------------------------------------------- QPs */

static int wr_opcode_ok(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
	case IBV_WR_SEND_WITH_INV:
		return 1;
	default:
		return 0;
	}
}

/* A UD send names a SEND opcode and an address handle of the QP's context (the vNIC checks the rest). */
static int ud_wr_ok(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	return (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM) && wr->wr.ud.ah &&
	       wr->wr.ud.ah->context == qp->context;
}

/*
 * UC carries SEND and RDMA WRITE (with or without immediate) only: no reads, no atomics, no SEND
 * with Invalidate (an RC opcode); memory window binds and local invalidation work on it.
 */
static int uc_wr_ok(struct ibv_send_wr *wr)
{
	return wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM ||
	       wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
	       wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW;
}

/*
 * A BIND_MW request the library can check itself: a window of this context, type 2 through
 * ibv_post_send (type 1 only through ibv_bind_mw, bind_type1), a region of the window's domain.
 */
static int bind_wr_ok(struct ibv_qp *qp, struct ibv_send_wr *wr, int bind_type1)
{
	struct ibv_mw *mw = wr->bind_mw.mw;
	struct ibv_mr *mr = wr->bind_mw.bind_info.mr;

	if (!mw || mw->context != qp->context)
		return 0;
	if (mw->type != (bind_type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
		return 0;
	if (mr ? mr->context != qp->context : wr->bind_mw.bind_info.length != 0)
		return 0;
	return 1;
}

static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
		     int bind_type1);

static int vr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return post_send(ibqp, wr, bad, 0);
}

static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
		     int bind_type1)
{
	struct vr_qp *qp = (struct vr_qp *)ibqp;
	uint8_t *sq = qp->ring + VR_QP_RING_HDR;
	uint32_t mask = qp->sq_entries - 1, start;
	int ret = 0;

	if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_INIT ||
	    ibqp->state == IBV_QPS_RTR) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	start = qp->sq_prod;
	for (; wr; wr = wr->next) {
		uint32_t cons = __atomic_load_n(ring_u32(qp->ring, VR_SQ_CONS), __ATOMIC_ACQUIRE);
		struct vr_sq_wqe *w;
		struct vr_sge *sge;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge ||
		    !wr_opcode_ok(wr->opcode) ||
		    (ibqp->qp_type == IBV_QPT_UD && !ud_wr_ok(ibqp, wr)) ||
		    (ibqp->qp_type == IBV_QPT_UC && !uc_wr_ok(wr)) ||
		    (wr->opcode == IBV_WR_BIND_MW && !bind_wr_ok(ibqp, wr, bind_type1))) {
			ret = EINVAL;
			break;
		}
		if (qp->sq_prod - cons >= qp->sq_entries) {
			ret = ENOMEM;
			break;
		}
		w = (struct vr_sq_wqe *)(sq + (size_t)(qp->sq_prod & mask) * qp->sq_stride);
		sge = (struct vr_sge *)(w + 1);
		memset(w, 0, sizeof(*w));
		w->wr_id = wr->wr_id;
		w->opcode = wr->opcode;
		w->send_flags = wr->send_flags | (qp->sq_sig_all ? IBV_SEND_SIGNALED : 0);
		w->imm_data = ntohl(wr->imm_data);
		if (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW) {
			/* No data: the vNIC executes them on its keys when the queue reaches them. */
			w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
			if (wr->opcode == IBV_WR_LOCAL_INV) {
				w->imm_data = wr->invalidate_rkey;
			} else {
				const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

				w->remote_addr = b->addr;
				w->compare_add = b->length;
				w->rkey = wr->bind_mw.rkey;
				w->ah = wr->bind_mw.mw->handle;
				w->remote_qpn = b->mr ? b->mr->handle : 0;
				w->remote_qkey = b->mw_access_flags;
			}
			qp->sq_prod++;
			continue;
		}
		if (wr->opcode == IBV_WR_SEND_WITH_INV)
			w->imm_data = wr->invalidate_rkey;
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w->remote_addr = wr->wr.atomic.remote_addr;
			w->rkey = wr->wr.atomic.rkey;
			w->compare_add = wr->wr.atomic.compare_add;
			w->swap = wr->wr.atomic.swap;
		} else if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM &&
			   wr->opcode != IBV_WR_SEND_WITH_INV) {
			w->remote_addr = wr->wr.rdma.remote_addr;
			w->rkey = wr->wr.rdma.rkey;
		} else if (ibqp->qp_type == IBV_QPT_UD) {
			w->ah = wr->wr.ud.ah->handle;
			w->remote_qpn = wr->wr.ud.remote_qpn;
			w->remote_qkey = wr->wr.ud.remote_qkey;
		}
		if (wr->send_flags & IBV_SEND_INLINE) {
			/* Inline: the bytes are copied now, as a hardware library does. */
			uint8_t *dst = (uint8_t *)(sge + qp->max_send_sge);
			uint32_t total = 0;

			for (int i = 0; i < wr->num_sge; i++)
				total += wr->sg_list[i].length;
			if (total > qp->max_inline) {
				ret = EINVAL;
				break;
			}
			for (int i = 0; i < wr->num_sge; i++) {
				memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				dst += wr->sg_list[i].length;
			}
			w->inline_len = total;
			w->num_sge = 0;
		} else {
			w->num_sge = (uint32_t)wr->num_sge;
			for (int i = 0; i < wr->num_sge; i++) {
				sge[i].addr = wr->sg_list[i].addr;
				sge[i].length = wr->sg_list[i].length;
				sge[i].lkey = wr->sg_list[i].lkey;
			}
		}
		qp->sq_prod++;
	}
	if (qp->sq_prod != start) {
		vr_qp_sends_posted(ibqp, start, qp->sq_prod);
		__atomic_store_n(ring_u32(qp->ring, VR_SQ_PROD), qp->sq_prod, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&qp->sq_lock);
	if (qp->sq_prod != start)
		doorbell_ring(qp);
	if (ret && bad)
		*bad = wr;
	return ret;
}

/* One receive work request into its ring slot (a QP's receive ring or an SRQ's). */
static void write_rq_wqe(uint8_t *slot, const struct ibv_recv_wr *wr)
{
	struct vr_rq_wqe *w = (struct vr_rq_wqe *)slot;
	struct vr_sge *sge = (struct vr_sge *)(w + 1);

	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	w->reserved = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/*
 * Writes the chain *wrp into a receive ring (a QP's or an SRQ's) while it has room, advancing
 * *prod; stops at the first request it refuses (EINVAL: too many SGEs, ENOMEM: ring full), left
 * in *wrp for the caller's bad_wr. The caller holds the ring's lock and publishes *prod.
 */
static int write_rq_wqes(struct ibv_recv_wr **wrp, uint8_t *slots, uint8_t *ring, size_t cons_off,
			 uint32_t *prod, uint32_t capacity, uint32_t mask, uint32_t stride,
			 uint32_t max_sge)
{
	struct ibv_recv_wr *wr;

	for (wr = *wrp; wr; wr = wr->next) {
		uint32_t cons = __atomic_load_n(ring_u32(ring, cons_off), __ATOMIC_ACQUIRE);

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			*wrp = wr;
			return EINVAL;
		}
		if (*prod - cons >= capacity) {
			*wrp = wr;
			return ENOMEM;
		}
		write_rq_wqe(slots + (size_t)(*prod & mask) * stride, wr);
		(*prod)++;
	}
	*wrp = NULL;
	return 0;
}

static int vr_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct vr_qp *qp = (struct vr_qp *)ibqp;
	uint8_t *rq = qp->ring + VR_QP_RING_HDR + (size_t)qp->sq_entries * qp->sq_stride;
	uint32_t mask = qp->rq_entries - 1, start;
	int ret = 0;

	if (ibqp->srq || ibqp->state == IBV_QPS_RESET) {
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq_lock);
	start = qp->rq_prod;
	ret = write_rq_wqes(&wr, rq, qp->ring, VR_RQ_CONS, &qp->rq_prod, qp->rq_entries, mask,
			    qp->rq_stride, qp->max_recv_sge);
	if (qp->rq_prod != start) {
		vr_expect_add(&((struct vr_cq *)ibqp->recv_cq)->expect.recvs, (int32_t)(qp->rq_prod - start));
		__atomic_store_n(ring_u32(qp->ring, VR_RQ_PROD), qp->rq_prod, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&qp->rq_lock);
	if (qp->rq_prod != start)
		doorbell_ring(qp);
	if (ret && bad)
		*bad = wr;
	return ret;
}

/*
 * Memory windows: the vNIC allocates the window and its rkey; binds and invalidations are work
 * requests on a send ring, executed by the vNIC in queue order.
 */
static struct ibv_mw *vr_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct vr_alloc_mw_req req;
	struct vr_alloc_mw_resp resp;
	struct ibv_mw *mw;
	int ret;

	if (!pd || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	req = (struct vr_alloc_mw_req){ .pd = pd->handle, .type = (uint32_t)type };
	ret = vr_ctx_call(pd->context, VR_ALLOC_MW, &req, sizeof(req), &resp, sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = resp.rkey;
	mw->handle = resp.handle;
	mw->type = type;
	return mw;
}

/*
 * ibv_bind_mw (type 1; the inline wrapper checked the type and the region's domain): posts the bind
 * on the QP's send ring with the next rkey (ibv_inc_rkey) and, once posted, gives the window that
 * rkey, as a hardware library does. The bind completes as IBV_WC_BIND_MW, or IBV_WC_MW_BIND_ERR.
 */
static int vr_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	if (!qp || !mw || !bind || qp->context != mw->context || qp->pd != mw->pd ||
	    qp->qp_type == IBV_QPT_UD)
		return EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = bind->send_flags & (IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = bind->bind_info;
	ret = post_send(qp, &wr, &bad, 1);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

static int vr_dealloc_mw(struct ibv_mw *mw)
{
	struct vr_handle req;
	int ret;

	if (!mw)
		return EINVAL;
	req = (struct vr_handle){ .handle = mw->handle };
	ret = vr_ctx_call(mw->context, VR_DEALLOC_MW, &req, sizeof(req), NULL, 0);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

static uint32_t at_least_one(uint32_t v)
{
	return v ? v : 1;
}

static struct ibv_qp *create_qp(struct ibv_context *ctx, struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr)
{
	struct vr_context *c = to_vctx(ctx);
	struct vr_create_qp_req req;
	struct vr_create_qp_resp resp;
	struct vr_qp *qp;
	int fd, ret;

	if (!pd || !attr || !attr->send_cq || !attr->recv_cq || pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC && attr->qp_type != IBV_QPT_UD) {
		/* XRC, driver and raw packet QPs are not served by this vNIC library. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->srq && attr->srq->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->cap.max_send_wr > (uint32_t)c->attr.max_qp_wr ||
	    attr->cap.max_recv_wr > (uint32_t)c->attr.max_qp_wr ||
	    attr->cap.max_send_sge > (uint32_t)c->attr.max_sge ||
	    attr->cap.max_recv_sge > (uint32_t)c->attr.max_sge ||
	    attr->cap.max_inline_data > (uint32_t)c->attr.max_inline_data) {
		errno = EINVAL;
		return NULL;
	}
	ret = doorbell_open(c);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->max_send_wr = at_least_one(attr->cap.max_send_wr);
	/* A QP on an SRQ has no receive queue of its own: no receive slots in its ring. */
	qp->max_recv_wr = attr->srq ? 0 : at_least_one(attr->cap.max_recv_wr);
	qp->max_send_sge = at_least_one(attr->cap.max_send_sge);
	qp->max_recv_sge = attr->srq ? 0 : at_least_one(attr->cap.max_recv_sge);
	qp->max_inline = attr->cap.max_inline_data;
	qp->sq_entries = pow2_at_least(qp->max_send_wr);
	qp->rq_entries = attr->srq ? 0 : pow2_at_least(qp->max_recv_wr);
	qp->sq_stride = align64(sizeof(struct vr_sq_wqe) + 16 * qp->max_send_sge + qp->max_inline);
	qp->rq_stride = align64(sizeof(struct vr_rq_wqe) + 16 * qp->max_recv_sge);
	qp->ring_bytes = VR_QP_RING_HDR + (size_t)qp->sq_entries * qp->sq_stride +
			 (size_t)qp->rq_entries * qp->rq_stride;
	fd = ring_create("vrdma-qp", qp->ring_bytes, &qp->ring);
	if (fd < 0) {
		free(qp);
		return NULL;
	}
	req = (struct vr_create_qp_req){
		.pd = pd->handle,
		.send_cq = attr->send_cq->handle,
		.recv_cq = attr->recv_cq->handle,
		.srq = attr->srq ? attr->srq->handle : 0,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all ? 1 : 0,
		.max_send_wr = qp->max_send_wr,
		.max_recv_wr = qp->max_recv_wr,
		.max_send_sge = qp->max_send_sge,
		.max_recv_sge = qp->max_recv_sge,
		.max_inline_data = qp->max_inline,
		.ring_fd = fd,
		.ring_bytes = (uint32_t)qp->ring_bytes,
	};
	ret = vr_call_fixed(&c->conn, VR_CREATE_QP, &req, sizeof(req), &resp, sizeof(resp));
	close(fd);
	if (ret) {
		munmap(qp->ring, qp->ring_bytes);
		free(qp);
		errno = ret;
		return NULL;
	}
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	qp->sq_sig_all = attr->sq_sig_all;
	qp->qp.context = ctx;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	if (attr->srq)
		vr_expect_add(&((struct vr_cq *)attr->recv_cq)->expect.srq_qps, 1);
	qp->qp.handle = resp.handle;
	qp->qp.qp_num = resp.qp_num;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = attr->qp_type;
	qp->qp.events_completed = 0;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	attr->cap.max_send_wr = resp.max_send_wr;
	attr->cap.max_recv_wr = resp.max_recv_wr;
	attr->cap.max_send_sge = resp.max_send_sge;
	attr->cap.max_recv_sge = resp.max_recv_sge;
	attr->cap.max_inline_data = resp.max_inline_data;
	vr_async_track(ctx, VR_ASYNC_QP, resp.handle, &qp->qp);
	return &qp->qp;
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	return create_qp(pd->context, pd, attr);
}

static struct ibv_qp *vr_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp_init_attr attr;

	if (!a || !(a->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    (a->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))) {
		/* XRC, RSS, create flags, ... are not served. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    ((a->send_ops_flags & ~VR_SEND_OPS_SUPPORTED) ||
	     (a->qp_type == IBV_QPT_UC && (a->send_ops_flags & ~VR_SEND_OPS_UC)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = a->qp_context;
	attr.send_cq = a->send_cq;
	attr.recv_cq = a->recv_cq;
	attr.srq = a->srq;
	attr.cap = a->cap;
	attr.qp_type = a->qp_type;
	attr.sq_sig_all = a->sq_sig_all;
	{
		struct ibv_qp *qp = create_qp(ctx, a->pd, &attr);

		if (qp && (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
			vr_qp_ex_init(qp, a->send_ops_flags);
		if (qp)
			a->cap = attr.cap;
		return qp;
	}
}

static void attr_to_wire(const struct ibv_qp_attr *a, int mask, struct vr_qp_attr *w)
{
	memset(w, 0, sizeof(*w));
	w->qp_state = a->qp_state;
	w->cur_qp_state = a->cur_qp_state;
	w->path_mtu = a->path_mtu;
	w->qkey = a->qkey;
	w->rq_psn = a->rq_psn;
	w->sq_psn = a->sq_psn;
	w->dest_qp_num = a->dest_qp_num;
	w->qp_access_flags = (uint32_t)a->qp_access_flags;
	w->pkey_index = a->pkey_index;
	w->port_num = a->port_num;
	w->max_rd_atomic = a->max_rd_atomic;
	w->max_dest_rd_atomic = a->max_dest_rd_atomic;
	w->min_rnr_timer = a->min_rnr_timer;
	w->timeout = a->timeout;
	w->retry_cnt = a->retry_cnt;
	w->rnr_retry = a->rnr_retry;
	w->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & IBV_QP_CAP) {
		w->max_send_wr = a->cap.max_send_wr;
		w->max_recv_wr = a->cap.max_recv_wr;
		w->max_send_sge = a->cap.max_send_sge;
		w->max_recv_sge = a->cap.max_recv_sge;
		w->max_inline_data = a->cap.max_inline_data;
	}
	if (mask & IBV_QP_AV) {
		memcpy(w->dgid, a->ah_attr.grh.dgid.raw, 16);
		w->ah_is_global = a->ah_attr.is_global;
		w->ah_sgid_index = a->ah_attr.grh.sgid_index;
		w->ah_hop_limit = a->ah_attr.grh.hop_limit;
		w->ah_traffic_class = a->ah_attr.grh.traffic_class;
		w->ah_flow_label = a->ah_attr.grh.flow_label;
		w->ah_dlid = a->ah_attr.dlid;
		w->ah_sl = a->ah_attr.sl;
		w->ah_port_num = a->ah_attr.port_num;
	}
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct vr_modify_qp_req req;
	int ret;

	if (!qp || !attr)
		return EINVAL;
	req.handle = qp->handle;
	req.mask = (uint32_t)mask;
	attr_to_wire(attr, mask, &req.attr);
	ret = vr_call(&to_vctx(qp->context)->conn, VR_MODIFY_QP, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	if (mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init_attr)
{
	struct vr_handle req;
	struct vr_qp_attr w;
	struct vr_qp *q = (struct vr_qp *)qp;
	int ret;

	if (!qp || !attr)
		return EINVAL;
	req = (struct vr_handle){ .handle = qp->handle, .arg = (uint32_t)mask };
	ret = vr_call_fixed(&to_vctx(qp->context)->conn, VR_QUERY_QP, &req, sizeof(req), &w,
			    sizeof(w));
	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)w.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)w.cur_qp_state;
	attr->path_mtu = (enum ibv_mtu)w.path_mtu;
	attr->qkey = w.qkey;
	attr->rq_psn = w.rq_psn;
	attr->sq_psn = w.sq_psn;
	attr->dest_qp_num = w.dest_qp_num;
	attr->qp_access_flags = (int)w.qp_access_flags;
	attr->pkey_index = (uint16_t)w.pkey_index;
	attr->port_num = (uint8_t)w.port_num;
	attr->max_rd_atomic = (uint8_t)w.max_rd_atomic;
	attr->max_dest_rd_atomic = (uint8_t)w.max_dest_rd_atomic;
	attr->min_rnr_timer = (uint8_t)w.min_rnr_timer;
	attr->timeout = (uint8_t)w.timeout;
	attr->retry_cnt = (uint8_t)w.retry_cnt;
	attr->rnr_retry = (uint8_t)w.rnr_retry;
	attr->en_sqd_async_notify = (uint8_t)w.en_sqd_async_notify;
	attr->sq_draining = (uint8_t)w.sq_draining;
	attr->cap.max_send_wr = w.max_send_wr;
	attr->cap.max_recv_wr = w.max_recv_wr;
	attr->cap.max_send_sge = w.max_send_sge;
	attr->cap.max_recv_sge = w.max_recv_sge;
	attr->cap.max_inline_data = w.max_inline_data;
	memcpy(attr->ah_attr.grh.dgid.raw, w.dgid, 16);
	attr->ah_attr.is_global = (uint8_t)w.ah_is_global;
	attr->ah_attr.grh.sgid_index = (uint8_t)w.ah_sgid_index;
	attr->ah_attr.grh.hop_limit = (uint8_t)w.ah_hop_limit;
	attr->ah_attr.grh.traffic_class = (uint8_t)w.ah_traffic_class;
	attr->ah_attr.grh.flow_label = w.ah_flow_label;
	attr->ah_attr.dlid = (uint16_t)w.ah_dlid;
	attr->ah_attr.sl = (uint8_t)w.ah_sl;
	attr->ah_attr.port_num = (uint8_t)w.ah_port_num;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = attr->cap;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = q->sq_sig_all;
	}
	qp->state = attr->qp_state;
	return 0;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct vr_qp *q = (struct vr_qp *)qp;
	struct vr_handle req;
	int ret;

	if (!qp)
		return EINVAL;
	req = (struct vr_handle){ .handle = qp->handle };
	ret = vr_call(&to_vctx(qp->context)->conn, VR_DESTROY_QP, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	vr_async_untrack(qp->context, VR_ASYNC_QP, qp->handle);
	if (qp->srq)
		vr_expect_add(&((struct vr_cq *)qp->recv_cq)->expect.srq_qps, -1);
	/* Its outstanding requests never complete now: expect nothing of the CQs until new posts. */
	__atomic_store_n(&((struct vr_cq *)qp->send_cq)->expect.sends, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&((struct vr_cq *)qp->recv_cq)->expect.recvs, 0, __ATOMIC_RELAXED);
	pthread_spin_destroy(&q->sq_lock);
	pthread_spin_destroy(&q->rq_lock);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	munmap(q->ring, q->ring_bytes);
	free(q->ex);
	free(q);
	return 0;
}

/* ---------------------------------------------------------------- address handles (UD) */

/*
 * An address handle lives in the vNIC (RoCE v2: the destination GID names the peer ENI's IPv4
 * address); a UD send carries its handle number, which the vNIC resolves in this context only.
 */
EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct vr_create_ah_req req;
	struct vr_handle resp;
	struct ibv_ah *ah;
	int ret;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	memset(&req, 0, sizeof(req));
	req.pd = pd->handle;
	req.is_global = attr->is_global;
	memcpy(req.dgid, attr->grh.dgid.raw, 16);
	req.sgid_index = attr->grh.sgid_index;
	req.hop_limit = attr->grh.hop_limit;
	req.traffic_class = attr->grh.traffic_class;
	req.flow_label = attr->grh.flow_label;
	req.dlid = attr->dlid;
	req.sl = attr->sl;
	req.port_num = attr->port_num;
	ret = vr_call_fixed(&to_vctx(pd->context)->conn, VR_CREATE_AH, &req, sizeof(req), &resp,
			    sizeof(resp));
	if (ret) {
		errno = ret;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		struct vr_handle d = { .handle = resp.handle };

		vr_call(&to_vctx(pd->context)->conn, VR_DESTROY_AH, &d, sizeof(d), NULL, 0, NULL);
		errno = ENOMEM;
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = resp.handle;
	return ah;
}

EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct vr_handle req;
	int ret;

	if (!ah)
		return EINVAL;
	req = (struct vr_handle){ .handle = ah->handle };
	ret = vr_call(&to_vctx(ah->context)->conn, VR_DESTROY_AH, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	free(ah);
	return 0;
}

/*
 * The reply address of a UD receive. RoCE v2 over IPv4: the 40-byte GRH area holds 20 unused bytes
 * and then the IPv4 header, whose source address becomes the GID ::ffff:a.b.c.d.
 */
EXPORT int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num, struct ibv_wc *wc,
			       struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const uint8_t *ip = (const uint8_t *)grh + 20;

	if (!ctx || !wc || !grh || !ah_attr || port_num != 1)
		return set_errno(EINVAL), -1;
	if (!(wc->wc_flags & IBV_WC_GRH) || (ip[0] >> 4) != 4)
		return set_errno(EINVAL), -1; /* RoCE v2 always carries the IPv4 header */
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->is_global = 1;
	ah_attr->grh.dgid.raw[10] = 0xff;
	ah_attr->grh.dgid.raw[11] = 0xff;
	memcpy(&ah_attr->grh.dgid.raw[12], ip + 12, 4);
	ah_attr->grh.sgid_index = 0;
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->grh.traffic_class = ip[1];
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->port_num = port_num;
	return 0;
}

EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					    struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

/* ---------------------------------------------------------------- shared receive queues */

/*
 * The SRQ's receives go through a ring like a QP's receive queue (vrdma_proto.h); the vNIC
 * publishes as its consumer counter the receives it has consumed, so prod - cons is the exact
 * number outstanding and a post beyond max_wr fails with ENOMEM here.
 */
struct vr_srq {
	struct ibv_srq srq;
	uint8_t *ring;
	size_t ring_bytes;
	uint32_t entries, stride, max_wr, max_sge, prod;
	pthread_spinlock_t lock;
};

EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct vr_context *c;
	struct vr_create_srq_req req;
	struct vr_create_srq_resp resp;
	struct vr_srq *srq;
	int fd, ret;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	c = to_vctx(pd->context);
	if (attr->attr.max_wr < 1 || attr->attr.max_wr > (uint32_t)c->attr.max_srq_wr ||
	    attr->attr.max_sge < 1 || attr->attr.max_sge > (uint32_t)c->attr.max_srq_sge ||
	    attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	ret = doorbell_open(c);
	if (ret) {
		errno = ret;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->max_wr = attr->attr.max_wr;
	srq->max_sge = attr->attr.max_sge;
	srq->entries = pow2_at_least(srq->max_wr);
	srq->stride = align64(sizeof(struct vr_rq_wqe) + sizeof(struct vr_sge) * srq->max_sge);
	srq->ring_bytes = VR_SRQ_RING_HDR + (size_t)srq->entries * srq->stride;
	fd = ring_create("vrdma-srq", srq->ring_bytes, &srq->ring);
	if (fd < 0) {
		free(srq);
		return NULL;
	}
	req = (struct vr_create_srq_req){
		.pd = pd->handle,
		.max_wr = srq->max_wr,
		.max_sge = srq->max_sge,
		.srq_limit = attr->attr.srq_limit,
		.ring_fd = fd,
		.ring_bytes = (uint32_t)srq->ring_bytes,
	};
	ret = vr_call_fixed(&c->conn, VR_CREATE_SRQ, &req, sizeof(req), &resp, sizeof(resp));
	close(fd);
	if (ret) {
		munmap(srq->ring, srq->ring_bytes);
		free(srq);
		errno = ret;
		return NULL;
	}
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->srq.context = pd->context;
	srq->srq.srq_context = attr->srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = resp.handle;
	srq->srq.events_completed = 0;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	attr->attr.max_wr = resp.max_wr;
	attr->attr.max_sge = resp.max_sge;
	vr_async_track(pd->context, VR_ASYNC_SRQ, resp.handle, &srq->srq);
	return &srq->srq;
}

/* MODIFY_SRQ carrying a new, larger ring for a queue that grows beyond its ring's slots. */
struct vr_modify_srq_ring_req {
	struct vr_srq_attr base;
	int32_t ring_fd;
	uint32_t ring_bytes;
} __attribute__((packed));

/*
 * IBV_SRQ_MAX_WR resizes the queue (the device sets IBV_DEVICE_SRQ_RESIZE): within the ring's slots
 * the vNIC just changes its limit; beyond them the library makes a new ring, starts its producer
 * counter where the old one stands, and the vNIC moves over to it (posts wait on the lock meanwhile).
 */
EXPORT int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct vr_srq *srq = (struct vr_srq *)ibsrq;
	struct vr_context *c;
	struct vr_modify_srq_ring_req req;
	uint32_t entries = 0;
	uint8_t *ring = NULL;
	size_t ring_bytes = 0;
	int fd = -1, ret;

	if (!ibsrq || !attr)
		return EINVAL;
	c = to_vctx(ibsrq->context);
	req.base = (struct vr_srq_attr){
		.handle = ibsrq->handle,
		.mask = (uint32_t)mask,
		.max_wr = attr->max_wr,
		.srq_limit = attr->srq_limit,
	};
	pthread_spin_lock(&srq->lock);
	if ((mask & IBV_SRQ_MAX_WR) && attr->max_wr >= 1 &&
	    attr->max_wr <= (uint32_t)c->attr.max_srq_wr &&
	    pow2_at_least(attr->max_wr) > srq->entries) {
		entries = pow2_at_least(attr->max_wr);
		ring_bytes = VR_SRQ_RING_HDR + (size_t)entries * srq->stride;
		fd = ring_create("vrdma-srq", ring_bytes, &ring);
		if (fd < 0) {
			pthread_spin_unlock(&srq->lock);
			return errno;
		}
		*ring_u32(ring, VR_SRQ_PROD) = srq->prod;
		*ring_u32(ring, VR_SRQ_CONS) = __atomic_load_n(ring_u32(srq->ring, VR_SRQ_CONS),
								__ATOMIC_ACQUIRE);
		req.ring_fd = fd;
		req.ring_bytes = (uint32_t)ring_bytes;
	}
	ret = vr_call(&c->conn, VR_MODIFY_SRQ, &req, fd >= 0 ? sizeof(req) : sizeof(req.base), NULL,
		      0, NULL);
	if (fd >= 0) {
		close(fd);
		if (ret) {
			munmap(ring, ring_bytes);
		} else {
			munmap(srq->ring, srq->ring_bytes);
			srq->ring = ring;
			srq->ring_bytes = ring_bytes;
			srq->entries = entries;
		}
	}
	if (!ret && (mask & IBV_SRQ_MAX_WR))
		srq->max_wr = attr->max_wr;
	pthread_spin_unlock(&srq->lock);
	return ret;
}

EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct vr_handle req;
	struct vr_srq_attr resp;
	int ret;

	if (!srq || !attr)
		return EINVAL;
	req = (struct vr_handle){ .handle = srq->handle };
	ret = vr_call_fixed(&to_vctx(srq->context)->conn, VR_QUERY_SRQ, &req, sizeof(req), &resp,
			    sizeof(resp));
	if (ret)
		return ret;
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	attr->srq_limit = resp.srq_limit;
	return 0;
}

EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct vr_srq *s = (struct vr_srq *)srq;
	struct vr_handle req;
	int ret;

	if (!srq)
		return EINVAL;
	req = (struct vr_handle){ .handle = srq->handle };
	ret = vr_call(&to_vctx(srq->context)->conn, VR_DESTROY_SRQ, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret; /* EBUSY while QPs use it */
	vr_async_untrack(srq->context, VR_ASYNC_SRQ, srq->handle);
	pthread_spin_destroy(&s->lock);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	munmap(s->ring, s->ring_bytes);
	free(s);
	return 0;
}

static int vr_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct vr_srq *srq = (struct vr_srq *)ibsrq;
	uint8_t *slots = srq->ring + VR_SRQ_RING_HDR;
	uint32_t mask = srq->entries - 1, start;
	int ret = 0;

	pthread_spin_lock(&srq->lock);
	start = srq->prod;
	ret = write_rq_wqes(&wr, slots, srq->ring, VR_SRQ_CONS, &srq->prod, srq->max_wr, mask,
			    srq->stride, srq->max_sge);
	if (srq->prod != start)
		__atomic_store_n(ring_u32(srq->ring, VR_SRQ_PROD), srq->prod, __ATOMIC_RELEASE);
	pthread_spin_unlock(&srq->lock);
	if (srq->prod != start)
		doorbell_ring_at(to_vctx(ibsrq->context), srq->ring);
	if (ret && bad)
		*bad = wr;
	return ret;
}

/* Called by the generated stubs of functions this library does not implement. */
void vrdma_unsupported(const char *name)
{
	if (getenv("VRDMA_DEBUG"))
		vr_log("%s: not supported (EOPNOTSUPP)", name);
}
