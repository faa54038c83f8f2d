/*
 * A verbs application (gcc ... -libverbs) that uses UD queue pairs, address handles and a shared
 * receive queue of its own through the vNIC (whose wire loops back). The first argument picks a
 * scenario:
 *   ud    two UD QPs: a SEND with immediate through an address handle (payload after the 40-byte
 *         GRH, the GRH's IPv4 source, src_qp, wc_flags), the reply through ibv_create_ah_from_wc;
 *         then what must fail cleanly: address handles without a RoCE v2 GID, a wrong Q_Key
 *         (dropped at the receiver), a message larger than the MTU (LOC_LEN_ERR), a send without
 *         an address handle or with an RDMA opcode (EINVAL), handle numbers that are not this
 *         program's address handles (LOC_QP_OP_ERR); prints "UD OK"
 *   srq   two RC QPs on one SRQ of 8: exactly 8 receives fit, sends on both QPs consume them with
 *         the right qp_num, the limit and resizing rules of ibv_modify_srq, ibv_query_srq, EBUSY
 *         while QPs use the SRQ; prints "SRQ OK"
 * A failed call prints "FAIL <what>: <errno text>" and exits 2, a failed check "FAIL <what>" and
 * exits 3.
 */
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

#define BUF_SIZE (1 << 16)
#define QKEY 0x11111111u

static struct ibv_cq *cq;
static struct ibv_mr *mr;
static unsigned char *buf;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Polls for one completion for at most `seconds`; returns 1 if one arrived. */
static int poll_one(struct ibv_wc *wc, double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1)
			return 1;
	}
	return 0;
}

static struct ibv_wc print_wc(const char *name)
{
	struct ibv_wc wc;

	if (!poll_one(&wc, 20))
		die(name);
	printf("WC %s status=%d opcode=%d len=%u qp=%u src_qp=%u flags=%d\n", name, wc.status, wc.opcode,
	       wc.byte_len, wc.qp_num, wc.src_qp, wc.wc_flags);
	return wc;
}

static void setup(void)
{
	open_loopback(0);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!cq || !buf)
		die("setup");
	memset(buf, 0, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
}

static struct ibv_qp *ud_qp(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *q = ibv_create_qp(pd, &a);

	if (!q)
		die("create UD QP");
	if (ibv_modify_qp(q, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(q, &attr, IBV_QP_STATE))
		die("UD RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 7;
	if (ibv_modify_qp(q, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
	return q;
}

static int post_recv(struct ibv_qp *q, struct ibv_srq *srq, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(q, &wr, &bad);
}

static int ud_send(struct ibv_qp *q, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, uint64_t id,
		   size_t off, uint32_t len, enum ibv_wr_opcode op)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xabcd),
	}, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(q, &wr, &bad);
}

static void scenario_ud(void)
{
	struct ibv_qp *a = ud_qp(), *b = ud_qp();
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1,
				       .grh = { .dgid = gid, .sgid_index = 0, .hop_limit = 64 } };
	struct ibv_ah *ah, *reply = NULL;
	struct ibv_wc wc;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	uint32_t src = 0;

	if (ibv_query_qp(a, &qa, IBV_QP_STATE | IBV_QP_QKEY, &qi) || qa.qp_state != IBV_QPS_RTS ||
	    qa.qkey != QKEY || qi.qp_type != IBV_QPT_UD)
		die("query UD QP");
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah");

	/* A SEND with immediate: GRH (40 bytes, IPv4 header at 20) then the payload. */
	strcpy((char *)buf + 8192, "datagram over the vNIC");
	check(post_recv(b, NULL, 1, 0, 40 + 2048) == 0, "post_recv");
	check(ud_send(a, ah, b->qp_num, QKEY, 10, 8192, 23, IBV_WR_SEND_WITH_IMM) == 0, "post_send");
	for (int i = 0; i < 2; i++) {
		wc = print_wc("ud");
		check(wc.status == IBV_WC_SUCCESS, "UD completion status");
		if (wc.opcode == IBV_WC_RECV) {
			check(wc.byte_len == 40 + 23 && wc.qp_num == b->qp_num && wc.src_qp == a->qp_num,
			      "UD receive fields");
			check(wc.wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0xabcd,
			      "UD receive flags");
			check(!strcmp((char *)buf + 40, "datagram over the vNIC"), "UD payload");
			check(!memcmp(buf + 20 + 12, &gid.raw[12], 4), "GRH IPv4 source");
			/* The reply address comes from the completion and its GRH. */
			reply = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)buf, 1);
			if (!reply)
				die("ibv_create_ah_from_wc");
			src = wc.src_qp;
		}
	}
	check(post_recv(a, NULL, 2, 4096, 40 + 100) == 0, "post_recv a");
	strcpy((char *)buf + 12288, "reply");
	check(ud_send(b, reply, src, QKEY, 11, 12288, 6, IBV_WR_SEND) == 0, "reply send");
	for (int i = 0; i < 2; i++) {
		wc = print_wc("reply");
		check(wc.status == IBV_WC_SUCCESS, "reply status");
		if (wc.opcode == IBV_WC_RECV)
			check(wc.qp_num == a->qp_num && !strcmp((char *)buf + 4096 + 40, "reply"),
			      "reply payload");
	}
	check(ibv_destroy_ah(reply) == 0, "destroy reply AH");

	/* Address handles need a RoCE v2 GID of this port. */
	{
		struct ibv_ah_attr bad = ah_attr;

		bad.is_global = 0;
		bad.dlid = 1;
		errno = 0;
		check(!ibv_create_ah(pd, &bad) && errno == EINVAL, "LID-only AH refused");
		bad = ah_attr;
		memset(bad.grh.dgid.raw, 0, 16);
		bad.grh.dgid.raw[0] = 0xfe;
		bad.grh.dgid.raw[1] = 0x80;
		bad.grh.dgid.raw[15] = 1;
		errno = 0;
		check(!ibv_create_ah(pd, &bad) && errno == EINVAL, "non-IPv4 GID refused");
		bad = ah_attr;
		bad.grh.sgid_index = 3;
		errno = 0;
		check(!ibv_create_ah(pd, &bad) && errno == EINVAL, "unknown sgid_index refused");
		bad = ah_attr;
		bad.port_num = 2;
		errno = 0;
		check(!ibv_create_ah(pd, &bad) && errno == EINVAL, "port 2 refused");
	}
	/* A wrong Q_Key: the sender completes, the receiver drops the datagram. */
	check(post_recv(b, NULL, 3, 0, 40 + 2048) == 0, "post_recv 3");
	check(ud_send(a, ah, b->qp_num, 0x2222, 12, 8192, 23, IBV_WR_SEND) == 0, "bad qkey send");
	wc = print_wc("badqkey");
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 12, "bad qkey send completes");
	check(!poll_one(&wc, 0.5), "nothing received with a wrong Q_Key");
	/* Larger than the MTU: an error completion, the QP keeps working. */
	check(ud_send(a, ah, b->qp_num, QKEY, 13, 0, 4097, IBV_WR_SEND) == 0, "long send posted");
	wc = print_wc("toolong");
	check(wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 13, "message beyond the MTU");
	/* No address handle, or an RDMA opcode: refused at post time. */
	check(ud_send(a, NULL, b->qp_num, QKEY, 14, 0, 8, IBV_WR_SEND) == EINVAL, "send without AH");
	check(ud_send(a, ah, b->qp_num, QKEY, 15, 0, 8, IBV_WR_RDMA_WRITE) == EINVAL, "RDMA on UD");
	/*
	 * Handle numbers the vNIC does not know as this program's address handles: one never created,
	 * the PD's (another kind of object), a destroyed handle's. Each completes with LOC_QP_OP_ERR.
	 */
	{
		struct ibv_ah fake = { .context = ctx, .pd = pd, .handle = 999999 };
		struct ibv_ah pd_as_ah = { .context = ctx, .pd = pd, .handle = pd->handle };
		struct ibv_ah *gone = ibv_create_ah(pd, &ah_attr);
		struct ibv_ah stale;

		if (!gone)
			die("ibv_create_ah gone");
		stale = *gone;
		check(ibv_destroy_ah(gone) == 0, "destroy AH");
		check(ud_send(a, &fake, b->qp_num, QKEY, 17, 8192, 23, IBV_WR_SEND) == 0, "unknown AH posted");
		check(ud_send(a, &pd_as_ah, b->qp_num, QKEY, 18, 8192, 23, IBV_WR_SEND) == 0, "PD as AH posted");
		check(ud_send(a, &stale, b->qp_num, QKEY, 19, 8192, 23, IBV_WR_SEND) == 0, "stale AH posted");
		for (int i = 17; i <= 19; i++) {
			wc = print_wc("badah");
			check(wc.status == IBV_WC_LOC_QP_OP_ERR && wc.wr_id == (uint64_t)i, "foreign AH number");
		}
	}
	/* The receive posted above still serves a good datagram. */
	check(ud_send(a, ah, b->qp_num, QKEY, 16, 8192, 23, IBV_WR_SEND) == 0, "good send again");
	for (int i = 0; i < 2; i++) {
		wc = print_wc("again");
		check(wc.status == IBV_WC_SUCCESS, "good send after errors");
		if (wc.opcode == IBV_WC_RECV)
			check(wc.wr_id == 3, "the receive left by the dropped datagram");
	}
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_ah(ah))
		die("UD teardown");
	printf("UD OK\n");
}

static struct ibv_qp *rc_qp(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8, .max_send_sge = 1,
			 .max_recv_sge = srq ? 0 : 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *q = ibv_create_qp(pd, &a);

	if (!q)
		die("create RC QP");
	init_qp(q, IBV_ACCESS_LOCAL_WRITE);
	return q;
}

static int rc_send(struct ibv_qp *q, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(q, &wr, &bad);
}

static void scenario_srq(void)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr sa;
	struct ibv_srq *srq;
	struct ibv_qp *a[2], *b[2];
	struct ibv_wc wc;
	int seen[2] = { 0, 0 };

	{
		struct ibv_srq_init_attr bad = { .attr = { .max_wr = 0, .max_sge = 1 } };

		errno = 0;
		check(!ibv_create_srq(pd, &bad) && errno == EINVAL, "SRQ of 0 entries refused");
		bad.attr.max_wr = 8;
		bad.attr.max_sge = 1000;
		errno = 0;
		check(!ibv_create_srq(pd, &bad) && errno == EINVAL, "SRQ with too many SGEs refused");
	}
	srq = ibv_create_srq(pd, &init);
	if (!srq)
		die("ibv_create_srq");
	check(init.attr.max_wr == 8 && init.attr.max_sge == 1, "granted SRQ size");
	for (int i = 0; i < 2; i++) {
		a[i] = rc_qp(NULL);
		b[i] = rc_qp(srq);
		check(b[i]->srq == srq, "QP names its SRQ");
	}
	for (int i = 0; i < 2; i++) {
		connect_qp(a[i], b[i]->qp_num);
		connect_qp(b[i], a[i]->qp_num);
	}
	/* Exactly max_wr receives fit; the QPs on the SRQ have no receive queue of their own. */
	for (int i = 0; i < 8; i++)
		check(post_recv(NULL, srq, 100 + i, 16384 + 1024 * i, 1024) == 0, "post_srq_recv");
	check(post_recv(NULL, srq, 200, 0, 64) == ENOMEM, "ninth receive: ENOMEM");
	check(post_recv(b[0], NULL, 201, 0, 64) == EINVAL, "ibv_post_recv on an SRQ QP: EINVAL");
	/* Shrinking below the receives posted is refused, a limit above max_wr too. */
	check(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == 8 && sa.max_sge == 1 && sa.srq_limit == 0,
	      "query SRQ");
	sa.max_wr = 7;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == EINVAL, "shrink below the posted refused");
	sa.srq_limit = 9;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == EINVAL, "limit above max_wr refused");
	sa.srq_limit = 4;
	check(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0, "arm limit");
	check(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 4, "armed limit queried");
	/* One SEND on each connection: both consume from the SRQ, in posting order. */
	strcpy((char *)buf + 8192, "to the first QP");
	strcpy((char *)buf + 9216, "to the second QP");
	check(rc_send(a[0], 1, 8192, 16) == 0, "send 0");
	check(rc_send(a[1], 2, 9216, 17) == 0, "send 1");
	for (int n = 0; n < 4; n++) {
		wc = print_wc("srq");
		check(wc.status == IBV_WC_SUCCESS, "SRQ completion status");
		if (wc.opcode == IBV_WC_RECV) {
			int which = wc.qp_num == b[0]->qp_num ? 0 : wc.qp_num == b[1]->qp_num ? 1 : -1;
			const char *want = which == 0 ? "to the first QP" : "to the second QP";

			check(which >= 0, "receive on an SRQ QP");
			check(!strcmp((char *)buf + 16384 + 1024 * (wc.wr_id - 100), want), "SRQ payload");
			seen[which]++;
		}
	}
	check(seen[0] == 1 && seen[1] == 1, "one receive per QP");
	/* The two consumed receives are free again, exactly. */
	check(post_recv(NULL, srq, 300, 0, 64) == 0 && post_recv(NULL, srq, 301, 64, 64) == 0,
	      "two more receives");
	check(post_recv(NULL, srq, 302, 128, 64) == ENOMEM, "then full again");
	check(ibv_destroy_srq(srq) == EBUSY, "SRQ in use: EBUSY");
	for (int i = 0; i < 2; i++)
		if (ibv_destroy_qp(a[i]) || ibv_destroy_qp(b[i]))
			die("destroy QPs");
	if (ibv_destroy_srq(srq))
		die("ibv_destroy_srq");
	printf("SRQ OK\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 1;
	setup();
	if (!strcmp(argv[1], "ud"))
		scenario_ud();
	else if (!strcmp(argv[1], "srq"))
		scenario_srq();
	else
		return 1;
	if (ibv_dereg_mr(mr) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("teardown");
	printf("DONE\n");
	return 0;
}
