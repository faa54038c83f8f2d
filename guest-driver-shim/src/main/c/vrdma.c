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
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>

#include <infiniband/verbs.h>

#include "vrdma_proto.h"

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

static void vr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vr_log(const char *fmt, ...)
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

static int vr_connect(void)
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
};

struct vr_pd {
	struct ibv_pd pd;
};

struct vr_mr {
	struct ibv_mr mr;
};

struct vr_channel {
	struct ibv_comp_channel ch;
	uint32_t handle;
};

struct vr_cq {
	struct ibv_cq cq;
	uint32_t acked; /* events acknowledged and not yet reported to the server */
};

static struct vr_device *g_device;
static pthread_mutex_t g_device_lock = PTHREAD_MUTEX_INITIALIZER;

static inline struct vr_context *to_vctx(struct ibv_context *ctx)
{
	return (struct vr_context *)((char *)ctx - offsetof(struct vr_context, vctx.context));
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
static struct ibv_cq_ex *vr_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a);
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
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = c->conn.fd;
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);
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
	/* Closing the socket releases everything the context still holds in the vNIC. */
	vr_close_conn(&c->conn);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
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

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				       unsigned int access)
{
	struct vr_reg_mr_req req;
	struct vr_reg_mr_resp resp;
	struct vr_mr *mr;
	int ret;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	req = (struct vr_reg_mr_req){
		.pd = pd->handle,
		.access = access,
		.addr = (uint64_t)(uintptr_t)addr,
		.length = length,
		.iova = iova,
	};
	ret = vr_call_fixed(&to_vctx(pd->context)->conn, VR_REG_MR, &req, sizeof(req), &resp,
			    sizeof(resp));
	if (ret) {
		errno = ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		struct vr_handle d = { .handle = resp.handle };

		vr_call(&to_vctx(pd->context)->conn, VR_DEREG_MR, &d, sizeof(d), NULL, 0, NULL);
		errno = ENOMEM;
		return NULL;
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = resp.handle;
	mr->mr.lkey = resp.lkey;
	mr->mr.rkey = resp.rkey;
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

EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct vr_handle req;

	if (!cq || !nevents)
		return;
	req = (struct vr_handle){ .handle = cq->handle, .arg = nevents };
	vr_call(&to_vctx(cq->context)->conn, VR_ACK_CQ_EVENTS, &req, sizeof(req), NULL, 0, NULL);
}

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector)
{
	struct vr_create_cq_req req;
	struct vr_create_cq_resp resp;
	struct vr_cq *cq;
	int ret;

	if (!ctx || cqe < 1 || comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	req = (struct vr_create_cq_req){
		.cqe = (uint32_t)cqe,
		.channel = channel ? ((struct vr_channel *)channel)->handle : 0,
		.comp_vector = (uint32_t)comp_vector,
		.cookie = (uint64_t)(uintptr_t)&cq->cq,
	};
	ret = vr_call_fixed(&to_vctx(ctx)->conn, VR_CREATE_CQ, &req, sizeof(req), &resp, sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = resp.handle;
	cq->cq.cqe = (int)resp.cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel)
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_SEQ_CST);
	return &cq->cq;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct vr_handle req;
	int ret;

	if (!cq)
		return EINVAL;
	req = (struct vr_handle){ .handle = cq->handle };
	ret = vr_call(&to_vctx(cq->context)->conn, VR_DESTROY_CQ, &req, sizeof(req), NULL, 0, NULL);
	if (ret)
		return ret;
	if (cq->channel)
		__atomic_sub_fetch(&cq->channel->refcnt, 1, __ATOMIC_SEQ_CST);
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(cq);
	return 0;
}

EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}

static struct ibv_cq_ex *vr_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	(void)ctx;
	(void)a;
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * poll_cq: the slow path over the control socket, until completion rings shared with the vNIC
 * exist. Returns the number of completions or -1 (errno set) as the verbs contract asks.
 */
static int vr_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct {
		uint32_t n;
		uint32_t reserved;
		struct vr_wc wc[64];
	} __attribute__((packed)) resp;
	struct vr_handle req;
	uint32_t len = 0;
	int ret;

	if (n <= 0)
		return 0;
	if (n > 64)
		n = 64;
	req = (struct vr_handle){ .handle = cq->handle, .arg = (uint32_t)n };
	ret = vr_call(&to_vctx(cq->context)->conn, VR_POLL_CQ, &req, sizeof(req), &resp, sizeof(resp),
		      &len);
	if (ret) {
		errno = ret;
		return -1;
	}
	if (len < 8 || resp.n > (uint32_t)n || len < 8 + resp.n * sizeof(struct vr_wc)) {
		errno = EPROTO;
		return -1;
	}
	for (uint32_t i = 0; i < resp.n; i++) {
		const struct vr_wc *w = &resp.wc[i];

		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = w->wr_id;
		wc[i].status = (enum ibv_wc_status)w->status;
		wc[i].opcode = (enum ibv_wc_opcode)w->opcode;
		wc[i].vendor_err = w->vendor_err;
		wc[i].byte_len = w->byte_len;
		wc[i].imm_data = htonl(w->imm_data);
		wc[i].qp_num = w->qp_num;
		wc[i].src_qp = w->src_qp;
		wc[i].wc_flags = w->wc_flags;
		wc[i].pkey_index = w->pkey_index;
		wc[i].slid = w->slid;
		wc[i].sl = w->sl;
		wc[i].dlid_path_bits = w->dlid_path_bits;
	}
	return (int)resp.n;
}

static int vr_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct vr_handle req = { .handle = cq->handle, .arg = solicited_only ? 1 : 0 };

	return vr_call(&to_vctx(cq->context)->conn, VR_REQ_NOTIFY_CQ, &req, sizeof(req), NULL, 0, NULL);
}

/* ---------------------------------------------------------------- not yet: QPs, SRQs, AHs, MWs */

static void unsupported_once(const char *what)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_SEQ_CST))
		vr_log("%s: not supported by this vNIC yet (queue pairs arrive with the data path)", what);
}

static int vr_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)qp;
	if (bad)
		*bad = wr;
	return EOPNOTSUPP;
}

static int vr_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	if (bad)
		*bad = wr;
	return EOPNOTSUPP;
}

static int vr_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)srq;
	if (bad)
		*bad = wr;
	return EOPNOTSUPP;
}

static struct ibv_mw *vr_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	(void)pd;
	(void)type;
	errno = EOPNOTSUPP;
	return NULL;
}

static int vr_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	(void)qp;
	(void)mw;
	(void)bind;
	return EOPNOTSUPP;
}

static int vr_dealloc_mw(struct ibv_mw *mw)
{
	(void)mw;
	return EOPNOTSUPP;
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	(void)pd;
	(void)attr;
	unsupported_once("ibv_create_qp");
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_qp *vr_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	(void)ctx;
	(void)a;
	unsupported_once("ibv_create_qp_ex");
	errno = EOPNOTSUPP;
	return NULL;
}

/* Called by the generated stubs of functions this library does not implement. */
void vrdma_unsupported(const char *name)
{
	if (getenv("VRDMA_DEBUG"))
		vr_log("%s: not supported (EOPNOTSUPP)", name);
}
