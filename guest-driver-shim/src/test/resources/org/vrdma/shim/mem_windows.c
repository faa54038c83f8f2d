/*
 * Memory windows and SRQ resizing through the vNIC's libibverbs.so.1, on one vNIC whose wire loops
 * back: pairs of RC QPs of this program talk to each other, B binds windows over its buffer and A
 * uses their rkeys.
 *
 *   caps     ibv_query_device: MEM_WINDOW, MEM_WINDOW_TYPE_2B, SRQ_RESIZE, max_mw
 *   type2    IBV_WR_BIND_MW; WRITE and READ through the window byte for byte, one byte beyond it
 *            REM_ACCESS_ERR with memory untouched; a second bind of a bound window MW_BIND_ERR
 *   inv      IBV_WR_SEND_WITH_INV (IBV_WC_WITH_INV and invalidated_rkey at B, then the key is
 *            dead), IBV_WR_LOCAL_INV (IBV_WC_LOCAL_INV, the key dead), the ibv_wr_* forms
 *   type1    ibv_bind_mw: new rkey, IBV_WC_BIND_MW after the SEND posted before it, the old key
 *            dead after a rebind; ibv_dereg_mr EBUSY while bound; ibv_dealloc_mw
 *   errors   EINVAL for a bad type, a type 1 window through post_send, a type 2 window through
 *            ibv_bind_mw, a UD QP, SEND_WITH_INV on UC; MW_BIND_ERR for a region without MW_BIND
 *   srq      ibv_modify_srq resizes (grow past the ring, shrink to what is posted, EINVAL below
 *            it), ibv_query_srq reports it, receives posted before the resize are used in order
 * Each prints one line starting with its name and "OK"; then "DONE".
 */
#include "loopback.h"

#define BUF_SIZE (1 << 16)
/* B's window: [WIN_OFF, WIN_OFF + WIN_LEN) of the buffer. */
#define WIN_OFF 16384
#define WIN_LEN 8192

static unsigned char *buf;
static struct ibv_mr *mr;
static struct ibv_cq *cqa, *cqb;

static struct ibv_qp *make_qp(struct ibv_cq *cq, enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16, .max_send_sge = 1,
			 .max_recv_sge = srq ? 0 : 1 },
		.qp_type = type,
	};
	struct ibv_qp_attr ud_init = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11 };
	struct ibv_qp *q = ibv_create_qp(pd, &a);

	if (!q)
		die("ibv_create_qp");
	if (type != IBV_QPT_UD)
		init_qp(q, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	else if (ibv_modify_qp(q, &ud_init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("modify INIT");
	return q;
}

/* A connected pair: a on cqa, b on cqb. */
static void pair(enum ibv_qp_type type, struct ibv_qp **a, struct ibv_qp **b)
{
	*a = make_qp(cqa, type, NULL);
	*b = make_qp(cqb, type, NULL);
	connect_qp(*a, (*b)->qp_num);
	connect_qp(*b, (*a)->qp_num);
}

/* A's RDMA op of len bytes at buf + loff against B's address raddr with rkey; its status. */
static int rdma(struct ibv_qp *a, enum ibv_wr_opcode op, uint32_t loff, uint32_t len,
		uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(buf + loff), .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(a, &wr, &bad))
		die("ibv_post_send rdma");
	wc = wait_wc(cqa, "rdma completion");
	return wc.status;
}

static int post_bind2(struct ibv_qp *b, struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *region,
		      unsigned access)
{
	struct ibv_send_wr wr = { .wr_id = 50, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = region;
	wr.bind_mw.bind_info.addr = (uintptr_t)(buf + WIN_OFF);
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return ibv_post_send(b, &wr, &bad);
}

static uint64_t win(uint32_t off)
{
	return (uintptr_t)(buf + WIN_OFF + off);
}

static void caps_scenario(void)
{
	struct ibv_device_attr attr;

	if (ibv_query_device(ctx, &attr))
		die("ibv_query_device");
	check(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW, "MEM_WINDOW");
	check(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B, "MEM_WINDOW_TYPE_2B");
	check(!(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A), "no type 2A");
	check(attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE, "SRQ_RESIZE");
	check(attr.max_mw > 0 && attr.max_mw == attr.max_mr, "max_mw");
	printf("CAPS OK max_mw=%d flags=0x%x\n", attr.max_mw, attr.device_cap_flags);
}

static void type2_scenario(void)
{
	struct ibv_qp *a, *b, *a2, *b2;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;
	uint32_t rkey;

	if (!mw)
		die("ibv_alloc_mw type 2");
	check(mw->type == IBV_MW_TYPE_2 && mw->pd == pd && mw->context == ctx, "mw fields");
	pair(IBV_QPT_RC, &a, &b);
	rkey = ibv_inc_rkey(mw->rkey);
	if (post_bind2(b, mw, rkey, mr, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ))
		die("post BIND_MW");
	wc = wait_wc(cqb, "bind completion");
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 50,
	      "bind completed");
	memset(buf + WIN_OFF, 0, WIN_LEN + 64);
	for (int i = 0; i < 64; i++)
		buf[i] = (unsigned char)(i + 1);
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 64, win(100), rkey) == IBV_WC_SUCCESS, "write");
	check(!memcmp(buf + WIN_OFF + 100, buf, 64), "write landed");
	check(rdma(a, IBV_WR_RDMA_READ, 1024, 64, win(100), rkey) == IBV_WC_SUCCESS, "read");
	check(!memcmp(buf + 1024, buf, 64), "read back");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 64, win(WIN_LEN - 63), rkey) == IBV_WC_REM_ACCESS_ERR,
	      "one byte beyond the window");
	check(buf[WIN_OFF + WIN_LEN] == 0, "nothing beyond the window");
	/* Bound type 2: a second bind (through another QP) fails until it is invalidated. */
	pair(IBV_QPT_RC, &a2, &b2);
	if (post_bind2(b2, mw, ibv_inc_rkey(rkey), mr, IBV_ACCESS_REMOTE_READ))
		die("post second BIND_MW");
	wc = wait_wc(cqb, "second bind");
	check(wc.status == IBV_WC_MW_BIND_ERR && wc.opcode == IBV_WC_BIND_MW, "second bind refused");
	check(ibv_dereg_mr(mr) == EBUSY, "dereg EBUSY while bound");
	check(ibv_dealloc_mw(mw) == 0, "dealloc");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(a2);
	ibv_destroy_qp(b2);
	while (ibv_poll_cq(cqa, 1, &wc) > 0 || ibv_poll_cq(cqb, 1, &wc) > 0)
		;
	printf("TYPE2 OK rkey=0x%x\n", rkey);
}

static void inv_scenario(void)
{
	struct ibv_qp *a, *b;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_sge rsge = { .addr = (uintptr_t)(buf + 2048), .length = 1024, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 60, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_sge ssge = { .addr = (uintptr_t)buf, .length = 100, .lkey = mr->lkey };
	struct ibv_send_wr swr = { .wr_id = 61, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr inv = { .wr_id = 62, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	struct ibv_qp_ex *qx;
	struct ibv_mw_bind_info info;
	uint32_t rkey, rkey2, rkey3;

	if (!mw)
		die("ibv_alloc_mw");
	pair(IBV_QPT_RC, &a, &b);
	rkey = ibv_inc_rkey(mw->rkey);
	if (post_bind2(b, mw, rkey, mr, IBV_ACCESS_REMOTE_WRITE))
		die("bind");
	check(wait_wc(cqb, "bind").status == IBV_WC_SUCCESS, "bind ok");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(0), rkey) == IBV_WC_SUCCESS, "write before");
	if (ibv_post_recv(b, &rwr, &rbad))
		die("post_recv");
	swr.invalidate_rkey = rkey;
	if (ibv_post_send(a, &swr, &bad))
		die("post SEND_WITH_INV");
	check(wait_wc(cqa, "send").status == IBV_WC_SUCCESS, "send with invalidate");
	wc = wait_wc(cqb, "recv");
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == 100,
	      "received");
	check(wc.wc_flags & IBV_WC_WITH_INV, "IBV_WC_WITH_INV");
	check(!(wc.wc_flags & IBV_WC_WITH_IMM), "no immediate");
	check(wc.invalidated_rkey == rkey, "invalidated_rkey");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(0), rkey) == IBV_WC_REM_ACCESS_ERR,
	      "write after remote invalidation");

	/* Bound again on a fresh pair, then invalidated locally. */
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	pair(IBV_QPT_RC, &a, &b);
	rkey2 = ibv_inc_rkey(rkey);
	if (post_bind2(b, mw, rkey2, mr, IBV_ACCESS_REMOTE_WRITE))
		die("rebind");
	check(wait_wc(cqb, "rebind").status == IBV_WC_SUCCESS, "rebind ok");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(0), rkey2) == IBV_WC_SUCCESS, "write rebound");
	inv.invalidate_rkey = rkey2;
	if (ibv_post_send(b, &inv, &bad))
		die("post LOCAL_INV");
	wc = wait_wc(cqb, "local inv");
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV, "local invalidate");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(0), rkey2) == IBV_WC_REM_ACCESS_ERR,
	      "write after local invalidation");

	/* The same through the ibv_wr_* API of a QP created with the window operations. */
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	{
		struct ibv_qp_init_attr_ex xa = {
			.send_cq = cqb, .recv_cq = cqb, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = pd,
			.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
					  IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_SEND,
		};

		b = ibv_create_qp_ex(ctx, &xa);
		if (!b)
			die("ibv_create_qp_ex");
		init_qp(b, IBV_ACCESS_REMOTE_WRITE);
		a = make_qp(cqa, IBV_QPT_RC, NULL);
		connect_qp(a, b->qp_num);
		connect_qp(b, a->qp_num);
	}
	qx = ibv_qp_to_qp_ex(b);
	rkey3 = ibv_inc_rkey(rkey2);
	info = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)(buf + WIN_OFF),
					  .length = WIN_LEN,
					  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	ibv_wr_start(qx);
	qx->wr_id = 70;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qx, mw, rkey3, &info);
	if (ibv_wr_complete(qx))
		die("wr bind");
	wc = wait_wc(cqb, "wr bind");
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 70, "wr bind ok");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(0), rkey3) == IBV_WC_SUCCESS, "write wr-bound");
	ibv_wr_start(qx);
	qx->wr_id = 71;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qx, rkey3);
	if (ibv_wr_complete(qx))
		die("wr local inv");
	wc = wait_wc(cqb, "wr local inv");
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV && wc.wr_id == 71,
	      "wr local inv ok");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(0), rkey3) == IBV_WC_REM_ACCESS_ERR,
	      "write after wr local invalidation");
	check(ibv_dealloc_mw(mw) == 0, "dealloc");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	while (ibv_poll_cq(cqa, 1, &wc) > 0 || ibv_poll_cq(cqb, 1, &wc) > 0)
		;
	printf("INV OK remote=0x%x local=0x%x wr=0x%x\n", rkey, rkey2, rkey3);
}

static void type1_scenario(void)
{
	struct ibv_qp *a, *b;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = { .wr_id = 81, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge rsge = { .addr = (uintptr_t)(buf + 2048), .length = 2048, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 79, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_sge ssge = { .addr = (uintptr_t)(buf + 4096), .length = 2000, .lkey = mr->lkey };
	struct ibv_send_wr swr = { .wr_id = 80, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	uint32_t before, first, second;

	if (!mw)
		die("ibv_alloc_mw type 1");
	pair(IBV_QPT_RC, &a, &b);
	before = mw->rkey;
	/* B's SEND to A first, then the bind behind it: completions in send-queue order. */
	if (ibv_post_recv(a, &rwr, &rbad))
		die("post_recv");
	if (ibv_post_send(b, &swr, &bad))
		die("post send");
	bind.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)(buf + WIN_OFF),
						    .length = WIN_LEN,
						    .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	if (ibv_bind_mw(b, mw, &bind))
		die("ibv_bind_mw");
	first = mw->rkey;
	check(first == ibv_inc_rkey(before), "rkey advanced");
	wc = wait_wc(cqb, "send");
	check(wc.wr_id == 80 && wc.opcode == IBV_WC_SEND && wc.status == IBV_WC_SUCCESS, "send first");
	wc = wait_wc(cqb, "bind");
	check(wc.wr_id == 81 && wc.opcode == IBV_WC_BIND_MW && wc.status == IBV_WC_SUCCESS,
	      "bind second");
	check(wait_wc(cqa, "recv").status == IBV_WC_SUCCESS, "received");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(8), first) == IBV_WC_SUCCESS, "write type 1");
	/* A type 1 window belongs to its PD: bind it again through A's own QP (unbound: no region). */
	bind.wr_id = 82;
	bind.bind_info = (struct ibv_mw_bind_info){ 0 };
	check(ibv_dereg_mr(mr) == EBUSY, "dereg EBUSY while bound");
	if (ibv_bind_mw(a, mw, &bind))
		die("ibv_bind_mw unbind");
	second = mw->rkey;
	check(second == ibv_inc_rkey(first), "rkey advanced again");
	wc = wait_wc(cqa, "unbind");
	check(wc.wr_id == 82 && wc.opcode == IBV_WC_BIND_MW && wc.status == IBV_WC_SUCCESS, "unbound");
	check(rdma(a, IBV_WR_RDMA_WRITE, 0, 8, win(8), first) == IBV_WC_REM_ACCESS_ERR,
	      "old key dead");
	check(ibv_dealloc_mw(mw) == 0, "dealloc");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	while (ibv_poll_cq(cqa, 1, &wc) > 0 || ibv_poll_cq(cqb, 1, &wc) > 0)
		;
	printf("TYPE1 OK 0x%x->0x%x->0x%x\n", before, first, second);
}

static void errors_scenario(void)
{
	struct ibv_qp *a, *b, *ua, *ub, *ud;
	struct ibv_mw *t1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *t2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind bind = { .wr_id = 90 };
	struct ibv_mr *plain = ibv_reg_mr(pd, buf + 32768, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr inv = { .wr_id = 91, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND_WITH_INV };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	if (!t1 || !t2 || !plain)
		die("setup");
	errno = 0;
	check(!ibv_alloc_mw(pd, (enum ibv_mw_type)3) && errno == EINVAL, "bad type EINVAL");
	pair(IBV_QPT_RC, &a, &b);
	check(post_bind2(b, t1, ibv_inc_rkey(t1->rkey), mr, IBV_ACCESS_REMOTE_READ) == EINVAL,
	      "type 1 through post_send EINVAL");
	check(post_bind2(b, t2, ibv_inc_rkey(t2->rkey), NULL, IBV_ACCESS_REMOTE_READ) == EINVAL,
	      "no region EINVAL");
	bind.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)buf, .length = 8,
						    .mw_access_flags = IBV_ACCESS_REMOTE_READ };
	check(ibv_bind_mw(b, t2, &bind) == EINVAL, "type 2 through ibv_bind_mw EINVAL");
	ud = make_qp(cqb, IBV_QPT_UD, NULL);
	{
		struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR };
		struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 1 };

		if (ibv_modify_qp(ud, &rtr, IBV_QP_STATE) ||
		    ibv_modify_qp(ud, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN))
			die("ud rts");
	}
	check(post_bind2(ud, t2, ibv_inc_rkey(t2->rkey), mr, IBV_ACCESS_REMOTE_READ) == EINVAL,
	      "UD BIND_MW EINVAL");
	check(ibv_bind_mw(ud, t1, &bind) == EINVAL, "UD ibv_bind_mw EINVAL");
	pair(IBV_QPT_UC, &ua, &ub);
	inv.invalidate_rkey = t2->rkey;
	check(ibv_post_send(ua, &inv, &bad) == EINVAL && bad == &inv, "UC SEND_WITH_INV EINVAL");
	/* A region registered without IBV_ACCESS_MW_BIND: the bind fails when it executes. */
	bind.wr_id = 92;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info = (struct ibv_mw_bind_info){ .mr = plain, .addr = (uintptr_t)(buf + 32768),
						    .length = 64,
						    .mw_access_flags = IBV_ACCESS_REMOTE_READ };
	check(ibv_bind_mw(b, t1, &bind) == 0, "bind posted");
	wc = wait_wc(cqb, "bind error");
	check(wc.wr_id == 92 && wc.status == IBV_WC_MW_BIND_ERR, "MW_BIND_ERR");
	check(ibv_dealloc_mw(t1) == 0 && ibv_dealloc_mw(t2) == 0, "dealloc");
	check(ibv_dereg_mr(plain) == 0, "dereg plain");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(ua);
	ibv_destroy_qp(ub);
	ibv_destroy_qp(ud);
	while (ibv_poll_cq(cqa, 1, &wc) > 0 || ibv_poll_cq(cqb, 1, &wc) > 0)
		;
	printf("ERRORS OK\n");
}

static void srq_scenario(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	struct ibv_srq_attr sa;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	int posted = 0;

	if (!srq)
		die("ibv_create_srq");
	for (;; posted++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(buf + 40000 + 256 * posted), .length = 256,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + posted, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (posted == 4) {
			check(ibv_post_srq_recv(srq, &wr, &bad) == ENOMEM, "fifth post ENOMEM");
			break;
		}
		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("post_srq_recv");
	}
	sa.max_wr = 3;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == EINVAL, "shrink below posted EINVAL");
	sa.max_wr = 40;
	sa.srq_limit = 5;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) == 0, "grow to 40");
	check(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == 40 && sa.srq_limit == 5, "queried 40");
	for (; posted < 40; posted++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(buf + 40000 + 256 * (posted % 64)),
				       .length = 256, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + posted, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("post_srq_recv after growing");
	}
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 256, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 999, .sg_list = &sge, .num_sge = 1 }, *bad;

		check(ibv_post_srq_recv(srq, &wr, &bad) == ENOMEM, "41st post ENOMEM");
	}
	/* Messages take the receives in posting order, across the resize. */
	a = make_qp(cqa, IBV_QPT_RC, NULL);
	b = make_qp(cqb, IBV_QPT_RC, srq);
	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
	for (int i = 0; i < 6; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 10, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		if (ibv_post_send(a, &wr, &bad))
			die("send");
		check(wait_wc(cqa, "send").status == IBV_WC_SUCCESS, "sent");
		wc = wait_wc(cqb, "srq recv");
		check(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)(100 + i), "in order");
	}
	sa.max_wr = 34;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == 0, "shrink to what is posted");
	check(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == 34, "queried 34");
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 256, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 998, .sg_list = &sge, .num_sge = 1 }, *bad;

		check(ibv_post_srq_recv(srq, &wr, &bad) == ENOMEM, "full after shrinking");
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	check(ibv_destroy_srq(srq) == 0, "destroy srq");
	printf("SRQ OK\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	open_loopback(0);
	cqa = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!cqa || !cqb)
		die("cq");
	buf = map_buffer(BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_MW_BIND);
	if (!mr)
		die("ibv_reg_mr");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "caps"))
			caps_scenario();
		else if (!strcmp(argv[i], "type2"))
			type2_scenario();
		else if (!strcmp(argv[i], "inv"))
			inv_scenario();
		else if (!strcmp(argv[i], "type1"))
			type1_scenario();
		else if (!strcmp(argv[i], "errors"))
			errors_scenario();
		else if (!strcmp(argv[i], "srq"))
			srq_scenario();
		else
			fail("unknown scenario");
	}
	if (ibv_dereg_mr(mr))
		die("dereg");
	printf("DONE\n");
	return 0;
}
