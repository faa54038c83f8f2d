/*
 * A verbs application built the ordinary way (gcc ... -libverbs) against Debian's headers. It opens
 * the first device, allocates a PD, registers a buffer (with relaxed ordering, as perftest does,
 * so the call goes through ibv_reg_mr_iova2), creates a completion channel and a CQ, and uses the
 * header-inline fast paths (ibv_query_device_ex, ibv_query_port, ibv_req_notify_cq, ibv_poll_cq).
 * Then it follows commands on stdin:
 *   CHECK <text>  prints "CHECK OK" if the buffer starts with <text> (written by the vNIC)
 *   EXIT          releases everything in order and exits 0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define BUF_SIZE (1 << 16)

static int die(const char *what)
{
	printf("FAIL %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(2);
}

int main(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx;
	struct ibv_device_attr_ex dev;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_wc wc[4];
	char line[256];
	char *buf;
	int ret;

	if (!list || n != 1)
		die("ibv_get_device_list");
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		die("ibv_open_device");
	ret = ibv_query_device_ex(ctx, NULL, &dev);
	if (ret)
		errno = ret, die("ibv_query_device_ex");
	ret = ibv_query_port(ctx, 1, &port);
	if (ret)
		errno = ret, die("ibv_query_port");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
	buf = aligned_alloc(4096, BUF_SIZE);
	for (int i = 0; i < BUF_SIZE; i++)
		buf[i] = (char)(i * 7 + 3);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_RELAXED_ORDERING);
	if (!mr)
		die("ibv_reg_mr");
	ch = ibv_create_comp_channel(ctx);
	if (!ch)
		die("ibv_create_comp_channel");
	cq = ibv_create_cq(ctx, 128, NULL, ch, 0);
	if (!cq)
		die("ibv_create_cq");
	ret = ibv_req_notify_cq(cq, 0);
	if (ret)
		errno = ret, die("ibv_req_notify_cq");
	ret = ibv_poll_cq(cq, 4, wc);
	if (ret != 0)
		die("ibv_poll_cq");
	printf("READY name=%s max_cqe=%d mtu=%d link_layer=%d lkey=%u rkey=%u addr=%p len=%d cqe=%d\n",
	       ibv_get_device_name(list[0]), dev.orig_attr.max_cqe, port.active_mtu, port.link_layer,
	       mr->lkey, mr->rkey, buf, BUF_SIZE, cq->cqe);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "CHECK ", 6)) {
			printf(memcmp(buf, line + 6, strlen(line + 6)) ? "CHECK BAD\n" : "CHECK OK\n");
			fflush(stdout);
		} else if (!strcmp(line, "EXIT")) {
			break;
		}
	}
	if ((ret = ibv_destroy_cq(cq)))
		errno = ret, die("ibv_destroy_cq");
	if ((ret = ibv_destroy_comp_channel(ch)))
		errno = ret, die("ibv_destroy_comp_channel");
	if ((ret = ibv_dereg_mr(mr)))
		errno = ret, die("ibv_dereg_mr");
	if ((ret = ibv_dealloc_pd(pd)))
		errno = ret, die("ibv_dealloc_pd");
	if ((ret = ibv_close_device(ctx)))
		errno = ret, die("ibv_close_device");
	ibv_free_device_list(list);
	printf("DONE\n");
	return 0;
}
