/*
 * A verbs application (gcc ... -libverbs -lpthread) for the extended verbs and the waiting paths
 * of the native library: two RC QPs of its own, connected through the vNIC. First argument:
 *   events     a completion channel: 50 SENDs, each awaited with ibv_req_notify_cq +
 *              ibv_get_cq_event (blocking read of the channel fd) + ibv_ack_cq_events; a
 *              solicited-only arm that an unsolicited SEND leaves asleep (checked with poll(2) on
 *              the channel fd) and a solicited one wakes; prints "EVENTS OK ..."
 *   sleeppoll  a thread polls an empty receive CQ with ibv_poll_cq for ~400 ms before a SEND
 *              arrives; prints "SLEEPPOLL cpu_us=<thread CPU> wall_us=<wall time> calls=<polls>
 *              asleep=<of 400 samples, 1 ms apart, how many found a sleeper announced in a CQ ring>"
 *   batchpoll  256 signaled WRITEs of 64 KiB, 16 in flight, each completion refilled at once (as
 *              ib_write_bw): prints "BATCHPOLL cpu_us=<CPU> wall_us=<wall> calls=<polls> max=<most
 *              completions one ibv_poll_cq returned> wake=<largest wake batch the library asked of
 *              the vNIC in the CQ ring>"
 *   batchwake  the vNIC's side of batched wake-ups, one completion at a time: the program marks a
 *              sleeper with a wake batch of 4 in the CQ ring by hand and WRITEs one by one, stopping
 *              ("BATCHWAKE published=<n>", then a line on stdin) after the 3rd and the 4th, and after a
 *              5th once the batch is 0 (wake on any completion), and after a 6th that a thread of the
 *              program blocked in FUTEX_WAIT on the ring was woken by, so that the test reads the
 *              vNIC's futex wake-ups at each step; prints "BATCHWAKE OK"
 *   async      a WRITE with a bad rkey: the responder QP goes to error and its application gets
 *              IBV_EVENT_QP_ACCESS_ERR on the async fd (poll(2) first, O_NONBLOCK); then a QP moved
 *              to SQD with en_sqd_async_notify gets IBV_EVENT_SQ_DRAINED; prints "ASYNC OK"
 *   cqerr      eight WRITEs into a one-entry CQ nobody polls: IBV_EVENT_CQ_ERR names that CQ;
 *              prints "CQERR OK"
 *   srqlimit   an SRQ armed with a limit of 4 falls to 3 receives: IBV_EVENT_SRQ_LIMIT_REACHED
 *              names it; prints "SRQLIMIT OK"
 *   wr         ibv_create_cq_ex + ibv_create_qp_ex(send_ops_flags): one ibv_wr_* batch of WRITE
 *              (two SGEs), SEND with immediate and inline data, READ, FETCH_ADD and CMP_SWP, read
 *              back with ibv_start_poll/next_poll/end_poll and the read_* accessors; an aborted
 *              batch never reaches the peer; an unsupported op fails the batch; prints "WR OK"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>

#include "loopback.h"

#define BUF_SIZE (1 << 16)

static unsigned char *buf;
static struct ibv_mr *mr;

static long now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* The completion ring's counters (vrdma_proto.h): the vNIC's producer, the library's consumer,
 * sleepers announced on the producer's futex, and the batch they asked to be woken for. */
#define RING_PROD 0
#define RING_CONS 64
#define RING_WAITERS 76
#define RING_WAKE_BATCH 80

/* The completion rings mapped in this process (the memfds so named in /proc/self/maps). */
static int cq_rings(unsigned char **rings, int most)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long s, end;
	int found = 0;

	if (!f)
		die("/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "memfd:vrdma-cq") && sscanf(line, "%lx-%lx", &s, &end) == 2) {
			if (found == most)
				fail("more completion rings than CQs");
			rings[found++] = (unsigned char *)s;
		}
	}
	fclose(f);
	return found;
}

/* The completion ring of the program's only CQ. */
static unsigned char *only_cq_ring(void)
{
	unsigned char *ring;

	if (cq_rings(&ring, 1) != 1)
		fail("exactly one completion ring mapped");
	return ring;
}

static void to_init(struct ibv_qp *q)
{
	init_qp(q, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
}

/* A QP of type type with 16 WRs and 2 SGEs each way, 64 bytes inline, still in RESET. */
static struct ibv_qp *create_qp(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
				const char *what)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.qp_type = type,
	};
	struct ibv_qp *q = ibv_create_qp(pd, &a);

	if (!q)
		die(what);
	return q;
}

static struct ibv_qp *make_qp(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp *q = create_qp(IBV_QPT_RC, scq, rcq, "ibv_create_qp");

	to_init(q);
	return q;
}

/* Connects two RC QPs in INIT to each other. */
static void connect_pair(struct ibv_qp *a, struct ibv_qp *b)
{
	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
}

static void post_send(struct ibv_qp *q, enum ibv_wr_opcode op, void *addr, uint32_t len,
		      uint64_t raddr, uint32_t rkey, unsigned flags, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED | flags,
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(q, &wr, &bad))
		die("ibv_post_send");
}

static void post_recv(struct ibv_qp *q, void *addr, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(q, &wr, &bad))
		die("ibv_post_recv");
}

/* ---------------------------------------------------------------- events */

static int channel_readable(struct ibv_comp_channel *ch, int timeout_ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms);
}

static void events_scenario(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *rcq, *ev_cq;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	void *ev_ctx;
	int events = 0;

	if (!ch || !scq)
		die("channel/cq");
	rcq = ibv_create_cq(ctx, 64, (void *)0x1234, ch, 0);
	if (!rcq)
		die("cq with channel");
	a = make_qp(scq, scq);
	b = make_qp(scq, rcq);
	connect_pair(a, b);
	for (int i = 0; i < 50; i++) {
		post_recv(b, buf + 4096, 256, 500 + i);
		if (ibv_req_notify_cq(rcq, 0))
			die("ibv_req_notify_cq");
		post_send(a, IBV_WR_SEND, buf, 64, 0, 0, 0, i);
		/* Blocks in read(2) on the channel fd until the vNIC answers the arm. */
		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
			die("ibv_get_cq_event");
		if (ev_cq != rcq || ev_ctx != (void *)0x1234)
			fail("event names another CQ");
		ibv_ack_cq_events(ev_cq, 1);
		events++;
		if (ibv_poll_cq(rcq, 1, &wc) != 1 || wc.status || wc.wr_id != 500u + i)
			fail("the event's completion is not in the ring");
		wait_wc(scq, "send completion");
	}
	/* Solicited-only: an unsolicited SEND completes without an event, a solicited one wakes. */
	post_recv(b, buf + 4096, 256, 900);
	post_recv(b, buf + 4096, 256, 901);
	if (ibv_req_notify_cq(rcq, 1))
		die("arm solicited");
	post_send(a, IBV_WR_SEND, buf, 64, 0, 0, 0, 900);
	wait_wc(scq, "unsolicited send");
	if (wait_wc(rcq, "unsolicited recv").wr_id != 900)
		fail("unsolicited recv");
	if (channel_readable(ch, 300) != 0)
		fail("an unsolicited completion woke a solicited-only arm");
	post_send(a, IBV_WR_SEND, buf, 64, 0, 0, IBV_SEND_SOLICITED, 901);
	if (channel_readable(ch, 10000) != 1)
		fail("no event for a solicited completion");
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) || ev_cq != rcq)
		die("solicited event");
	ibv_ack_cq_events(ev_cq, 1);
	events++;
	if (wait_wc(rcq, "solicited recv").wr_id != 901)
		fail("solicited recv");
	wait_wc(scq, "solicited send");
	if (rcq->comp_events_completed != (unsigned)events)
		fail("acknowledged events not counted");
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(rcq) || ibv_destroy_cq(scq) ||
	    ibv_destroy_comp_channel(ch))
		die("teardown");
	printf("EVENTS OK events=%d\n", events);
}

/* ---------------------------------------------------------------- sleeping poll */

/* A bandwidth loop: the CQ sees only the sends' completions, 16 of them outstanding. */
static void batchpoll_scenario(void)
{
	/* One CQ (the only completion ring to find): b posts nothing, it sees only a's WRITEs. */
	struct ibv_cq *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_wc wc[16];
	struct ibv_qp *a, *b;
	long posted = 0, done = 0, calls = 0, most = 0, cpu0, wall0;
	uint32_t wake = 0, *wake_word;

	if (!scq)
		die("cq");
	a = make_qp(scq, scq);
	b = make_qp(scq, scq);
	connect_pair(a, b);
	wake_word = (uint32_t *)(only_cq_ring() + RING_WAKE_BATCH);
	cpu0 = now_us(CLOCK_THREAD_CPUTIME_ID);
	wall0 = now_us(CLOCK_MONOTONIC);
	while (done < 256) {
		int n;

		while (posted < 256 && posted - done < 16) {
			post_send(a, IBV_WR_RDMA_WRITE, buf, BUF_SIZE, (uintptr_t)buf, mr->rkey, 0, posted);
			posted++;
		}
		n = ibv_poll_cq(scq, 16, wc);
		calls++;
		if (n < 0)
			die("poll");
		for (int i = 0; i < n; i++, done++)
			if (wc[i].status || wc[i].wr_id != (uint64_t)done)
				fail("batchpoll completion");
		if (n > most)
			most = n;
		/* What the library's last sleep asked the vNIC for (it writes the word before sleeping). */
		if (__atomic_load_n(wake_word, __ATOMIC_RELAXED) > wake)
			wake = __atomic_load_n(wake_word, __ATOMIC_RELAXED);
		if (now_us(CLOCK_MONOTONIC) - wall0 > 60000000L)
			fail("256 WRITEs within 60 s");
	}
	printf("BATCHPOLL cpu_us=%ld wall_us=%ld calls=%ld max=%ld wake=%u\n", now_us(CLOCK_THREAD_CPUTIME_ID) - cpu0,
	       now_us(CLOCK_MONOTONIC) - wall0, calls, most, wake);
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(scq))
		die("teardown");
}

/* Stops until the test, having read the vNIC's counters, writes a line on stdin. */
static void step(const char *what, uint32_t published)
{
	char line[64];

	printf("BATCHWAKE %s published=%u\n", what, published);
	if (!fgets(line, sizeof(line), stdin))
		fail("stdin closed");
}

/* Posts one signaled WRITE and waits (bounded) until the vNIC published its completion. */
static uint32_t write_one(struct ibv_qp *q, unsigned char *ring, uint32_t prod0, uint32_t n)
{
	const uint32_t *prod = (const uint32_t *)(ring + RING_PROD);
	long until = now_us(CLOCK_MONOTONIC) + 20000000L;

	post_send(q, IBV_WR_RDMA_WRITE, buf, 4096, (uintptr_t)buf + 8192, mr->rkey, 0, n);
	while (__atomic_load_n(prod, __ATOMIC_ACQUIRE) - prod0 < n) {
		if (now_us(CLOCK_MONOTONIC) > until)
			fail("a WRITE's completion within 20 s");
		usleep(100);
	}
	if (__atomic_load_n(prod, __ATOMIC_ACQUIRE) - prod0 != n)
		fail("one completion per WRITE");
	return n;
}

struct sleeper {
	uint32_t *prod;
	uint32_t seen;
	pid_t tid;
	int rc;
};

/* Sleeps on the ring's producer counter as the library does, bounded by 20 s instead of 1 ms. */
static void *sleeper_thread(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ts = { .tv_sec = 20 };

	__atomic_store_n(&s->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	s->rc = syscall(SYS_futex, s->prod, FUTEX_WAIT, s->seen, &ts, NULL, 0) ? errno : 0;
	return NULL;
}

/* Whether thread tid is blocked in the futex system call (/proc/self/task/<tid>/syscall). */
static int in_futex(pid_t tid)
{
	char path[64], line[64];
	FILE *f;
	int nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		die(path);
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%d", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == SYS_futex;
}

/*
 * A thread really asleep on the futex (seen blocked in it before the WRITE is posted, so the
 * kernel compared the counter before the publish) is woken by the vNIC's FUTEX_WAKE on its own
 * mapping of the ring, not by its timeout.
 */
static uint32_t real_sleeper(struct ibv_qp *q, unsigned char *ring, uint32_t prod0, uint32_t n)
{
	struct sleeper s = { .prod = (uint32_t *)(ring + RING_PROD) };
	long until = now_us(CLOCK_MONOTONIC) + 20000000L;
	pthread_t t;

	s.seen = __atomic_load_n(s.prod, __ATOMIC_ACQUIRE);
	if (pthread_create(&t, NULL, sleeper_thread, &s))
		die("pthread_create");
	while (!__atomic_load_n(&s.tid, __ATOMIC_ACQUIRE) || !in_futex(s.tid)) {
		if (now_us(CLOCK_MONOTONIC) > until)
			fail("the sleeper in FUTEX_WAIT within 20 s");
		usleep(1000);
	}
	n = write_one(q, ring, prod0, n + 1);
	pthread_join(t, NULL);
	if (s.rc != 0)
		fail(s.rc == ETIMEDOUT ? "the sleeper was not woken" : "FUTEX_WAIT");
	return n;
}

/*
 * The vNIC's rule for a sleeper that asked for a batch, without the library's timing: the program
 * announces a sleeper in the CQ ring itself (waiters 1, wake batch 4) and never consumes, so each
 * WRITE's completion is one publish the vNIC checks against prod - cons. The vNIC never reads
 * whether anybody really waits on the futex; the test counts its FUTEX_WAKE calls between steps.
 */
static void batchwake_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_wc wc[8];
	struct ibv_qp *a, *b;
	unsigned char *ring;
	uint32_t prod0, n = 0;
	int got = 0;

	if (!cq)
		die("cq");
	a = make_qp(cq, cq);
	b = make_qp(cq, cq);
	connect_pair(a, b);
	ring = only_cq_ring();
	prod0 = __atomic_load_n((uint32_t *)(ring + RING_PROD), __ATOMIC_ACQUIRE);
	if (__atomic_load_n((uint32_t *)(ring + RING_CONS), __ATOMIC_ACQUIRE) != prod0)
		fail("a CQ with nothing to poll");
	__atomic_store_n((uint32_t *)(ring + RING_WAKE_BATCH), 4u, __ATOMIC_RELAXED);
	__atomic_add_fetch((uint32_t *)(ring + RING_WAITERS), 1u, __ATOMIC_SEQ_CST);
	step("sleeper", n);
	while (n < 3)
		n = write_one(a, ring, prod0, n + 1);
	step("below-batch", n);
	n = write_one(a, ring, prod0, n + 1);
	step("batch", n);
	__atomic_store_n((uint32_t *)(ring + RING_WAKE_BATCH), 0u, __ATOMIC_RELAXED);
	n = write_one(a, ring, prod0, n + 1);
	step("any", n);
	n = real_sleeper(a, ring, prod0, n);
	step("slept", n);
	__atomic_sub_fetch((uint32_t *)(ring + RING_WAITERS), 1u, __ATOMIC_SEQ_CST);
	while (got < 6) {
		int k = ibv_poll_cq(cq, 8, wc);

		if (k < 0)
			die("poll");
		for (int i = 0; i < k; i++, got++)
			if (wc[i].status || wc[i].wr_id != (uint64_t)got + 1)
				fail("batchwake completion");
	}
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(cq))
		die("teardown");
	printf("BATCHWAKE OK\n");
}

struct poller {
	struct ibv_cq *cq;
	long cpu_us, wall_us, calls;
	int ready;
};

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	long cpu0 = now_us(CLOCK_THREAD_CPUTIME_ID), wall0 = now_us(CLOCK_MONOTONIC);
	struct ibv_wc wc;

	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		int n = ibv_poll_cq(p->cq, 1, &wc);

		p->calls++;
		if (n < 0)
			die("poll");
		if (n == 1)
			break;
		if (now_us(CLOCK_MONOTONIC) - wall0 > 20000000L)
			fail("no completion within 20 s");
	}
	p->cpu_us = now_us(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	p->wall_us = now_us(CLOCK_MONOTONIC) - wall0;
	if (wc.status || wc.wr_id != 42)
		fail("sleeppoll completion");
	return NULL;
}

static void sleeppoll_scenario(void)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct poller p = { 0 };
	struct ibv_qp *a, *b;
	unsigned char *rings[4];
	int nrings, asleep = 0;
	pthread_t t;

	if (!scq || !rcq)
		die("cq");
	a = make_qp(scq, scq);
	b = make_qp(scq, rcq);
	connect_pair(a, b);
	post_recv(b, buf + 4096, 256, 42);
	p.cq = rcq;
	if (pthread_create(&t, NULL, poll_thread, &p))
		die("pthread_create");
	while (!__atomic_load_n(&p.ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* ~400 ms of an empty CQ, sampling the rings' sleeper counts: the poller announces its sleeps. */
	nrings = cq_rings(rings, 4);
	for (int i = 0; i < 400; i++) {
		for (int r = 0; r < nrings; r++)
			if (__atomic_load_n((uint32_t *)(rings[r] + RING_WAITERS), __ATOMIC_ACQUIRE))
				asleep++;
		usleep(1000);
	}
	post_send(a, IBV_WR_SEND, buf, 64, 0, 0, 0, 1);
	pthread_join(t, NULL);
	wait_wc(scq, "send");
	printf("SLEEPPOLL cpu_us=%ld wall_us=%ld calls=%ld asleep=%d\n", p.cpu_us, p.wall_us, p.calls, asleep);
}

/* ---------------------------------------------------------------- async events */

/* The next async event, waited for with poll(2) on the async fd (bounded: fails naming name). */
static struct ibv_async_event next_async(const char *name)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&p, 1, 20000) != 1)
		fail(name);
	if (ibv_get_async_event(ctx, &ev))
		die("ibv_get_async_event");
	return ev;
}

static void await_async(enum ibv_event_type type, struct ibv_qp *qp, const char *name)
{
	struct ibv_async_event ev = next_async(name);

	printf("ASYNC %s type=%d same_qp=%d\n", name, ev.event_type, ev.element.qp == qp);
	if (ev.event_type != type || ev.element.qp != qp)
		fail(name);
	ibv_ack_async_event(&ev);
	if (qp->events_completed != 1)
		fail("async event not acknowledged");
}

static void async_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *a, *b, *c, *d;
	struct ibv_async_event ev;
	struct ibv_qp_attr sqd = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_wc wc;

	if (!cq)
		die("cq");
	/* The async fd is a real, pollable descriptor; non-blocking reads say EAGAIN when quiet. */
	if (fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK");
	if (ibv_get_async_event(ctx, &ev) == 0 || errno != EAGAIN)
		fail("a quiet async fd must say EAGAIN");
	a = make_qp(cq, cq);
	b = make_qp(cq, cq);
	connect_pair(a, b);
	post_send(a, IBV_WR_RDMA_WRITE, buf, 64, (uintptr_t)(buf + 8192), mr->rkey ^ 0x5a5a00, 0, 7);
	wc = wait_wc(cq, "bad rkey write");
	printf("WC bad-rkey status=%d\n", wc.status);
	if (wc.status != IBV_WC_REM_ACCESS_ERR)
		fail("bad rkey completion");
	await_async(IBV_EVENT_QP_ACCESS_ERR, b, "responder-error");

	c = make_qp(cq, cq);
	d = make_qp(cq, cq);
	connect_pair(c, d);
	if (ibv_modify_qp(c, &sqd, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY))
		die("modify SQD");
	await_async(IBV_EVENT_SQ_DRAINED, c, "sq-drained");
	printf("ASYNC OK\n");
}

/* A CQ of one entry that nobody polls overruns: IBV_EVENT_CQ_ERR names it. */
static void cqerr_scenario(void)
{
	struct ibv_cq *small = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_cq *other = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_async_event ev;
	struct ibv_qp *a, *b;

	if (!small || !other)
		die("cq");
	a = make_qp(small, small);
	b = make_qp(other, other);
	connect_pair(a, b);
	for (int i = 0; i < 8; i++)
		post_send(a, IBV_WR_RDMA_WRITE, buf, 64, (uintptr_t)(buf + 8192), mr->rkey, 0, i);
	ev = next_async("no CQ_ERR");
	printf("ASYNC cq-overrun type=%d same_cq=%d\n", ev.event_type, ev.element.cq == small);
	if (ev.event_type != IBV_EVENT_CQ_ERR || ev.element.cq != small)
		fail("cq-overrun");
	ibv_ack_async_event(&ev);
	if (small->async_events_completed != 1)
		fail("CQ event not acknowledged");
	printf("CQERR OK\n");
}

/* An SRQ armed with a limit of 4 that falls to 3 receives: IBV_EVENT_SRQ_LIMIT_REACHED names it. */
static void srqlimit_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr limit = { .srq_limit = 4 };
	struct ibv_async_event ev;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;

	if (!cq)
		die("cq");
	srq = ibv_create_srq(pd, &sattr);
	if (!srq)
		die("ibv_create_srq");
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_send_sge = 1, .max_inline_data = 64 },
		};

		b = ibv_create_qp(pd, &qa);
		if (!b)
			die("ibv_create_qp on an SRQ");
		to_init(b);
	}
	a = make_qp(cq, cq);
	connect_pair(a, b);
	for (int i = 0; i < 5; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(buf + 4096 + 256 * i), .length = 256,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 600 + i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("ibv_post_srq_recv");
	}
	if (ibv_modify_srq(srq, &limit, IBV_SRQ_LIMIT))
		die("arm the SRQ limit");
	post_send(a, IBV_WR_SEND, buf, 64, 0, 0, 0, 1);
	post_send(a, IBV_WR_SEND, buf, 64, 0, 0, 0, 2);
	for (int i = 0; i < 4; i++)
		if (wait_wc(cq, "srq traffic").status)
			fail("srq traffic status");
	ev = next_async("no SRQ_LIMIT_REACHED");
	printf("ASYNC srq-limit type=%d same_srq=%d\n", ev.event_type, ev.element.srq == srq);
	if (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED || ev.element.srq != srq)
		fail("srq-limit");
	ibv_ack_async_event(&ev);
	if (srq->events_completed != 1)
		fail("SRQ event not acknowledged");
	printf("SRQLIMIT OK\n");
}

/* ---------------------------------------------------------------- ibv_wr_* and cq_ex */

struct exwc {
	uint64_t wr_id;
	int status, opcode;
	uint32_t len, imm, qpn;
	unsigned flags;
};

/* Reads up to `max` completions with start_poll/next_poll/end_poll (bounded wait for the first). */
static int poll_ex(struct ibv_cq_ex *cq, struct exwc *out, int max)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int n = 0, ret;

	for (long i = 0; (ret = ibv_start_poll(cq, &attr)) == ENOENT; i++)
		if (i > 100000000L)
			fail("no completion (cq_ex)");
	if (ret)
		die("ibv_start_poll");
	do {
		out[n].wr_id = cq->wr_id;
		out[n].status = cq->status;
		out[n].opcode = ibv_wc_read_opcode(cq);
		out[n].len = ibv_wc_read_byte_len(cq);
		out[n].qpn = ibv_wc_read_qp_num(cq);
		out[n].flags = ibv_wc_read_wc_flags(cq);
		out[n].imm = (out[n].flags & IBV_WC_WITH_IMM) ? be32toh(ibv_wc_read_imm_data(cq)) : 0;
		n++;
	} while (n < max && ibv_next_poll(cq) == 0);
	ibv_end_poll(cq);
	return n;
}

static void wr_scenario(void)
{
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &cattr);
	struct ibv_qp_init_attr_ex qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_SEND,
	};
	unsigned char *w1 = buf, *w2 = buf + 1000, *wdst = buf + 8192, *rcv = buf + 16384;
	unsigned char *rsrc = buf + 20000, *rdst = buf + 24576, *adst = buf + 12288;
	uint64_t *counter = (uint64_t *)(buf + 32768), *old = (uint64_t *)(buf + 32776);
	uint64_t *word = (uint64_t *)(buf + 32784), *old2 = (uint64_t *)(buf + 32792);
	char inline_msg[48] = "inline through ibv_wr_set_inline_data";
	struct ibv_sge sges[2] = {
		{ .addr = (uintptr_t)w1, .length = 700, .lkey = 0 },
		{ .addr = (uintptr_t)w2, .length = 300, .lkey = 0 },
	};
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *ax;
	struct exwc wcs[16];
	int got = 0, recv_seen = 0;

	if (!cq)
		die("ibv_create_cq_ex");
	qattr.pd = pd;
	qattr.send_cq = ibv_cq_ex_to_cq(cq);
	qattr.recv_cq = ibv_cq_ex_to_cq(cq);
	a = ibv_create_qp_ex(ctx, &qattr);
	qattr.comp_mask = IBV_QP_INIT_ATTR_PD;
	b = ibv_create_qp_ex(ctx, &qattr);
	if (!a || !b)
		die("ibv_create_qp_ex");
	ax = ibv_qp_to_qp_ex(a);
	if (!ax || ibv_qp_to_qp_ex(b) != NULL)
		fail("ibv_qp_to_qp_ex");
	to_init(a);
	to_init(b);
	connect_pair(a, b);
	sges[0].lkey = sges[1].lkey = mr->lkey;
	for (int i = 0; i < 1000; i++)
		(i < 700 ? w1 : w2 - 700)[i] = (unsigned char)(i * 3 + 1);
	for (int i = 0; i < 500; i++)
		rsrc[i] = (unsigned char)(i ^ 0x5c);
	memset(wdst, 0, 1000);
	memset(rdst, 0, 500);
	memset(adst, 0xee, 8);
	*counter = 40;
	*word = 7;
	post_recv(b, rcv, 256, 77);

	/* An aborted batch: never published, the vNIC never sees it. */
	ibv_wr_start(ax);
	ax->wr_id = 99;
	ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(ax, mr->rkey, (uintptr_t)adst);
	ibv_wr_set_sge(ax, mr->lkey, (uintptr_t)w1, 8);
	ibv_wr_abort(ax);

	/* An unsupported operation fails the whole batch at wr_complete. */
	ibv_wr_start(ax);
	ax->wr_id = 98;
	ibv_wr_rdma_write(ax, mr->rkey, (uintptr_t)adst);
	ibv_wr_set_sge(ax, mr->lkey, (uintptr_t)w1, 8);
	ibv_wr_local_inv(ax, 1);
	if (ibv_wr_complete(ax) != EOPNOTSUPP)
		fail("unsupported op in a batch");

	ibv_wr_start(ax);
	ax->wr_id = 1;
	ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(ax, mr->rkey, (uintptr_t)wdst);
	ibv_wr_set_sge_list(ax, 2, sges);
	ax->wr_id = 2;
	ibv_wr_send_imm(ax, htobe32(0xabcd));
	ibv_wr_set_inline_data(ax, inline_msg, sizeof(inline_msg));
	ax->wr_id = 3;
	ibv_wr_rdma_read(ax, mr->rkey, (uintptr_t)rsrc);
	ibv_wr_set_sge(ax, mr->lkey, (uintptr_t)rdst, 500);
	ax->wr_id = 4;
	ibv_wr_atomic_fetch_add(ax, mr->rkey, (uintptr_t)counter, 5);
	ibv_wr_set_sge(ax, mr->lkey, (uintptr_t)old, 8);
	ax->wr_id = 5;
	ibv_wr_atomic_cmp_swp(ax, mr->rkey, (uintptr_t)word, 7, 1234);
	ibv_wr_set_sge(ax, mr->lkey, (uintptr_t)old2, 8);
	/* Overwritten after the call: the inline bytes were copied at post time. */
	if (ibv_wr_complete(ax))
		die("ibv_wr_complete");
	memset(inline_msg, 0, sizeof(inline_msg));

	while (got < 6) {
		int n = poll_ex(cq, wcs + got, 16 - got);

		for (int i = got; i < got + n; i++) {
			printf("WCX wr_id=%llu status=%d opcode=%d len=%u imm=0x%x qp=%s\n",
			       (unsigned long long)wcs[i].wr_id, wcs[i].status, wcs[i].opcode,
			       wcs[i].len, wcs[i].imm, wcs[i].qpn == a->qp_num ? "a" : "b");
			if (wcs[i].status)
				fail("completion status");
			if (wcs[i].wr_id == 77)
				recv_seen = 1;
			if (wcs[i].wr_id == 99 || wcs[i].wr_id == 98)
				fail("an aborted or failed batch was executed");
		}
		got += n;
	}
	if (!recv_seen || memcmp(rcv, "inline through ibv_wr_set_inline_data", 38))
		fail("inline send");
	for (int i = 0; i < 1000; i++)
		if (wdst[i] != (unsigned char)(i * 3 + 1))
			fail("write with two sges");
	if (memcmp(rsrc, rdst, 500))
		fail("read");
	if (*counter != 45 || *old != 40 || *word != 1234 || *old2 != 7)
		fail("atomics");
	for (int i = 0; i < 8; i++)
		if (adst[i] != 0xee)
			fail("aborted write landed");
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(ibv_cq_ex_to_cq(cq)))
		die("teardown");
	printf("WR OK faa=40->45 cas=7->1234\n");
}

/* ---------------------------------------------------------------- COMM_EST, port, device, UC */

/* The next async event (bounded wait), whatever it names. */
/* A peer sends while the receiving QP is still in RTR: IBV_EVENT_COMM_EST names that QP, once. */
static void commest_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *a, *b;
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int flags;

	if (!cq)
		die("cq");
	a = make_qp(cq, cq);
	b = make_qp(cq, cq);
	connect_qp(a, b->qp_num);
	to_rtr(b, a->qp_num, LOOPBACK_PSN);
	post_recv(b, buf + 4096, 256, 21);
	post_recv(b, buf + 8192, 256, 22);
	memcpy(buf, "first", 6);
	post_send(a, IBV_WR_SEND, buf, 6, 0, 0, 0, 11);
	ev = next_async("comm-est");
	printf("ASYNC comm-est type=%d same_qp=%d\n", ev.event_type, ev.element.qp == b);
	if (ev.event_type != IBV_EVENT_COMM_EST || ev.element.qp != b)
		fail("comm-est");
	ibv_ack_async_event(&ev);
	for (int i = 0; i < 2; i++) {
		wc = wait_wc(cq, "comm-est completions");
		if (wc.status != IBV_WC_SUCCESS)
			fail("comm-est completion status");
	}
	/* The application answers COMM_EST by moving to RTS; later messages raise nothing. */
	to_rts(b, LOOPBACK_PSN);
	post_send(a, IBV_WR_SEND, buf, 6, 0, 0, 0, 12);
	for (int i = 0; i < 2; i++) {
		wc = wait_wc(cq, "second message");
		if (wc.status != IBV_WC_SUCCESS)
			fail("second message status");
	}
	flags = fcntl(ctx->async_fd, F_GETFL);
	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	if (ibv_get_async_event(ctx, &ev) == 0 || errno != EAGAIN)
		fail("COMM_EST must come once");
	printf("COMMEST OK recv=%s\n", buf + 4096);
}

static int port_state(void)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port");
	return pa.state;
}

/* The vNIC's link goes down and up again (the ENI's vRDMA switched off and on): PORT_ERR, PORT_ACTIVE. */
static void port_scenario(void)
{
	struct ibv_async_event ev;

	printf("PORT READY state=%d\n", port_state());
	ev = next_async("port-err");
	printf("ASYNC port-err type=%d port=%d state=%d\n", ev.event_type, ev.element.port_num,
	       port_state());
	if (ev.event_type != IBV_EVENT_PORT_ERR || ev.element.port_num != 1 ||
	    port_state() != IBV_PORT_DOWN)
		fail("port-err");
	ibv_ack_async_event(&ev);
	printf("PORT DOWN SEEN\n");
	ev = next_async("port-active");
	printf("ASYNC port-active type=%d port=%d state=%d\n", ev.event_type, ev.element.port_num,
	       port_state());
	if (ev.event_type != IBV_EVENT_PORT_ACTIVE || ev.element.port_num != 1 ||
	    port_state() != IBV_PORT_ACTIVE)
		fail("port-active");
	ibv_ack_async_event(&ev);
	printf("PORT OK\n");
}

/* The host process stops: PORT_ERR, then DEVICE_FATAL, then the vNIC is gone (EIO). */
static void shutdown_scenario(void)
{
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	char line[64];
	int after;

	printf("SHUTDOWN READY\n");
	ev = next_async("shutdown port-err");
	printf("ASYNC shutdown-port type=%d\n", ev.event_type);
	ibv_ack_async_event(&ev);
	ev = next_async("device-fatal");
	printf("ASYNC device-fatal type=%d\n", ev.event_type);
	ibv_ack_async_event(&ev);
	if (ibv_get_async_event(ctx, &ev) == 0)
		fail("an event after DEVICE_FATAL");
	after = errno;
	/* The vNIC closes its connections one by one: query once the test saw the close return. */
	printf("SHUTDOWN GONE\n");
	if (!fgets(line, sizeof(line), stdin))
		fail("stdin closed");
	printf("SHUTDOWN OK after=%s query=%s\n", strerror(after),
	       ibv_query_port(ctx, 1, &pa) ? "failed" : "answered");
}

static struct ibv_qp *make_uc_qp(struct ibv_cq *cq)
{
	struct ibv_qp *q = create_qp(IBV_QPT_UC, cq, cq, "ibv_create_qp UC");

	init_qp(q, IBV_ACCESS_REMOTE_WRITE);
	return q;
}

/* What perftest's -c UC sets: no ACK timeout, retries, reads or RNR timer. */
static void connect_uc(struct ibv_qp *q, uint32_t dest)
{
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 300 };

	to_rtr(q, dest, 300);
	if (ibv_modify_qp(q, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT) == 0)
		fail("UC RTS took a timeout");
	to_rts(q, 300);
}

/* UC: RDMA WRITE with immediate and a multi-packet SEND arrive byte for byte; reads are refused. */
static void uc_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *a, *b;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_init_attr_ex xa;
	struct ibv_wc wc;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	int got = 0, ret;

	if (!cq)
		die("cq");
	a = make_uc_qp(cq);
	b = make_uc_qp(cq);
	connect_uc(a, b->qp_num);
	connect_uc(b, a->qp_num);
	if (ibv_query_qp(a, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_RTS ||
	    qi.qp_type != IBV_QPT_UC)
		fail("query UC");
	for (int i = 0; i < 3000; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	post_recv(b, buf + 32768, 4096, 31); /* for the WRITE's immediate */
	post_recv(b, buf + 40960, 4096, 32); /* for the SEND */
	post_send(a, IBV_WR_RDMA_WRITE_WITH_IMM, buf, 3000, (uintptr_t)(buf + 16384), mr->rkey, 0, 1);
	post_send(a, IBV_WR_SEND, buf, 2500, 0, 0, 0, 2);
	while (got < 4) {
		wc = wait_wc(cq, "uc completion");
		printf("UCWC wr_id=%llu status=%d opcode=%d len=%u\n", (unsigned long long)wc.wr_id,
		       wc.status, wc.opcode, wc.byte_len);
		if (wc.status != IBV_WC_SUCCESS)
			fail("uc completion status");
		got++;
	}
	if (memcmp(buf, buf + 16384, 3000) || memcmp(buf, buf + 40960, 2500))
		fail("uc bytes");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				   .send_flags = IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)(buf + 16384);
	wr.wr.rdma.rkey = mr->rkey;
	ret = ibv_post_send(a, &wr, &bad);
	printf("UC READ post=%s\n", ret == EINVAL && bad == &wr ? "EINVAL" : "accepted");
	if (ret != EINVAL)
		fail("UC READ must be refused");
	memset(&xa, 0, sizeof(xa));
	xa.qp_type = IBV_QPT_UC;
	xa.send_cq = xa.recv_cq = cq;
	xa.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 };
	xa.pd = pd;
	xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	if (ibv_create_qp_ex(ctx, &xa) || errno != EOPNOTSUPP)
		fail("a UC QP with reads in send_ops_flags");
	xa.qp_type = IBV_QPT_XRC_SEND;
	xa.send_ops_flags = IBV_QP_EX_WITH_SEND;
	if (ibv_create_qp_ex(ctx, &xa) || errno != EOPNOTSUPP)
		fail("an XRC QP");
	printf("UC OK\n");
}

/* The start of the last mapping of memfd `name` in /proc/self/maps (one of the rings so named). */
static unsigned char *last_memfd_mapping(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long start = 0, end;

	if (!f)
		die("/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long s;

		if (strstr(line, name) && sscanf(line, "%lx-%lx", &s, &end) == 2)
			start = s;
	}
	fclose(f);
	return (unsigned char *)start;
}

/*
 * A work-queue ring the vNIC can no longer trust (its receive producer counter claims more than
 * the ring holds): the QP enters ERR and IBV_EVENT_QP_FATAL names it.
 */
static void qpfatal_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *a, *b, *named;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_async_event ev;
	unsigned char *ring;

	if (!cq)
		die("cq");
	a = make_qp(cq, cq);
	b = make_qp(cq, cq);
	ring = last_memfd_mapping("memfd:vrdma-qp");
	if (!ring)
		fail("no QP ring mapped");
	connect_pair(a, b);
	/* One of the two rings: a receive producer 1000 ahead of a 16-entry queue. */
	__atomic_store_n((uint32_t *)(ring + 128), 1000u, __ATOMIC_RELEASE);
	post_send(b, IBV_WR_SEND, buf, 8, 0, 0, 0, 1); /* the doorbell makes the vNIC read the rings */
	ev = next_async("qp-fatal");
	named = ev.element.qp;
	printf("ASYNC qp-fatal type=%d ours=%d\n", ev.event_type, named == a || named == b);
	if (ev.event_type != IBV_EVENT_QP_FATAL || (named != a && named != b))
		fail("qp-fatal");
	ibv_ack_async_event(&ev);
	if (ibv_query_qp(named, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_ERR)
		fail("QP not in ERR after QP_FATAL");
	printf("QPFATAL OK state=%d\n", qa.qp_state);
}

/* XRC: domains, XRC SRQs and XRC QPs are refused with EOPNOTSUPP, nothing half-created. */
static void xrc_scenario(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex qa;

	if (!cq)
		die("cq");
	errno = 0;
	if (ibv_open_xrcd(ctx, &xa) || errno != EOPNOTSUPP)
		fail("ibv_open_xrcd");
	memset(&sa, 0, sizeof(sa));
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
		       IBV_SRQ_INIT_ATTR_XRCD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = pd;
	sa.cq = cq;
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	errno = 0;
	if (ibv_create_srq_ex(ctx, &sa) || errno != EOPNOTSUPP)
		fail("ibv_create_srq_ex XRC");
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	errno = 0;
	if (ibv_create_qp_ex(ctx, &qa) || errno != EOPNOTSUPP)
		fail("XRC_RECV QP");
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	qa.send_cq = qa.recv_cq = cq;
	qa.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_send_sge = 1 };
	errno = 0;
	if (ibv_create_qp_ex(ctx, &qa) || errno != EOPNOTSUPP)
		fail("XRC_SEND QP");
	if (ibv_destroy_cq(cq))
		fail("the CQ is still free to destroy");
	printf("XRC EOPNOTSUPP\n");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "events";

	setvbuf(stdout, NULL, _IOLBF, 0);
	open_loopback(0);
	buf = map_buffer(BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		die("ibv_reg_mr");
	if (!strcmp(mode, "events"))
		events_scenario();
	else if (!strcmp(mode, "sleeppoll"))
		sleeppoll_scenario();
	else if (!strcmp(mode, "batchpoll"))
		batchpoll_scenario();
	else if (!strcmp(mode, "batchwake"))
		batchwake_scenario();
	else if (!strcmp(mode, "async"))
		async_scenario();
	else if (!strcmp(mode, "srqlimit"))
		srqlimit_scenario();
	else if (!strcmp(mode, "cqerr"))
		cqerr_scenario();
	else if (!strcmp(mode, "wr"))
		wr_scenario();
	else if (!strcmp(mode, "commest"))
		commest_scenario();
	else if (!strcmp(mode, "port"))
		port_scenario();
	else if (!strcmp(mode, "shutdown"))
		shutdown_scenario();
	else if (!strcmp(mode, "uc"))
		uc_scenario();
	else if (!strcmp(mode, "qpfatal"))
		qpfatal_scenario();
	else if (!strcmp(mode, "xrc"))
		xrc_scenario();
	else
		fail("unknown mode");
	printf("DONE\n");
	return 0;
}
