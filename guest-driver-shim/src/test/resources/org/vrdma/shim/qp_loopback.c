/*
 * A verbs application (gcc ... -libverbs) that connects two RC queue pairs of its own through the
 * vNIC and checks what arrives. The first argument picks a scenario:
 *   data                 WRITE, SEND with immediate, READ and FETCH_AND_ADD between the QPs; every
 *                        byte checked; prints "DATA OK ..."
 *   badlkey              a SEND whose lkey is not a registered region's: prints the completion
 *   unmapped             a WRITE from a registered page the program unmapped afterwards
 *   remote-unmapped      a WRITE into the peer QP's registered page, unmapped afterwards
 *   forksafe             ibv_fork_init before registering: a forked child has no mapping of the
 *                        registered pages (it dies of SIGSEGV touching them), the parent keeps
 *                        moving data; prints "FORK OK"
 *   hold                 prints "READY qpn=.. lkey=.. rkey=.. addr=.." and waits for stdin to close
 *   foreign LKEY RKEY ADDR  uses another program's keys: a SEND from its lkey, a WRITE to its rkey
 *   zc                   what zero-copy registration must keep: data written after registering
 *                        moves, a region inside another shares it, a heap region that is not
 *                        page-aligned keeps its neighbours, a file mapping and a region straddling
 *                        a registered one still work (through the fallback), one byte past a
 *                        region is refused; prints "ZC OK"
 *   dereg                registers a second region, prints "REGISTERED", waits for a line,
 *                        deregisters it, prints "DEREGISTERED", waits for a line, then writes
 *                        with the stale rkey; prints "DEREG OK"
 * Completions are printed as "WC <name> status=<n> opcode=<n> len=<n>".
 */
#include <sys/wait.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>

#include "loopback.h"

#define BUF_SIZE (1 << 16)

static struct ibv_cq *cq;
static struct ibv_qp *qp[2];
static unsigned char *buf;

static struct ibv_qp *make_qp(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *q = ibv_create_qp(pd, &a);

	if (!q)
		die("ibv_create_qp");
	init_qp(q, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	return q;
}

/* Connects q to dest and checks what ibv_query_qp says of it. */
static void connect_queried(struct ibv_qp *q, uint32_t dest)
{
	struct ibv_qp_attr got;
	struct ibv_qp_init_attr init;

	connect_qp(q, dest);
	if (ibv_query_qp(q, &got, IBV_QP_STATE | IBV_QP_CAP, &init) || got.qp_state != IBV_QPS_RTS ||
	    got.dest_qp_num != dest || init.cap.max_inline_data != 64)
		die("query_qp");
}

/* Polls until one completion arrives (bounded) and prints it. */
static struct ibv_wc print_wc(const char *name)
{
	struct ibv_wc wc;

	for (long i = 0; i < 2000000000L; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1) {
			printf("WC %s status=%d opcode=%d len=%u\n", name, wc.status, wc.opcode,
			       wc.byte_len);
			fflush(stdout);
			return wc;
		}
		if ((i & 1023) == 1023)
			usleep(100);
	}
	die("no completion");
	return wc;
}

static void post(struct ibv_qp *q, enum ibv_wr_opcode op, void *addr, uint32_t len, uint32_t lkey,
		 uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htobe32(0x1234);
	if (ibv_post_send(q, &wr, &bad))
		die("ibv_post_send");
}

static void post_recv(struct ibv_qp *q, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(q, &wr, &bad))
		die("ibv_post_recv");
}

static void check_write(const char *name, void *src, uint32_t len, uint32_t lkey, void *dst,
			uint32_t rkey)
{
	struct ibv_wc wc;

	post(qp[0], IBV_WR_RDMA_WRITE, src, len, lkey, (uintptr_t)dst, rkey, 1);
	wc = print_wc(name);
	if (wc.status || memcmp(src, dst, len))
		die(name);
}

static void await_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		die("stdin closed");
}

static void zero_copy_scenario(struct ibv_mr *mr)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	unsigned char *src = buf + 4096, *dst = buf + 16384, *heap, *unaligned, *file_map;
	struct ibv_mr *sub, *heap_mr, *file_mr, *straddle;
	char path[] = "/tmp/vrdma-zc-XXXXXX";
	int fd;

	/* Written after registration: the vNIC sees the application's stores, no copy was taken. */
	for (int i = 0; i < 4096; i++)
		src[i] = (unsigned char)(i * 13 + 1);
	memset(dst, 0, 4096);
	check_write("zc-after-reg", src, 4096, mr->lkey, dst, mr->rkey);

	/* A region inside a registered one shares its memfd. */
	sub = ibv_reg_mr(pd, buf + 100, 1000, rw);
	if (!sub)
		die("reg sub");
	check_write("zc-sub", src + 1, 900, mr->lkey, buf + 150, sub->rkey);

	/* Heap memory, not page-aligned; the program's own stores around it after registering. */
	heap = malloc(20000);
	if (!heap)
		die("malloc");
	memset(heap, 0x5a, 20000);
	unaligned = heap + 4099;
	heap_mr = ibv_reg_mr(pd, unaligned, 5000, rw);
	if (!heap_mr)
		die("reg heap");
	unaligned[-1] = 0x11;
	unaligned[5000] = 0x22;
	check_write("zc-unaligned", src, 4096, mr->lkey, unaligned + 904, heap_mr->rkey);
	if (unaligned[-1] != 0x11 || unaligned[5000] != 0x22 || heap[0] != 0x5a || heap[19999] != 0x5a ||
	    unaligned[903] != 0x5a)
		die("zc neighbours");

	/* A file mapping is not re-backed: the vNIC reaches it through the process. */
	fd = mkstemp(path);
	if (fd < 0 || unlink(path) || ftruncate(fd, 8192))
		die("tmpfile");
	file_map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (file_map == MAP_FAILED)
		die("mmap file");
	file_mr = ibv_reg_mr(pd, file_map, 8192, rw);
	if (!file_mr)
		die("reg file");
	check_write("zc-file", src, 3000, mr->lkey, file_map + 10, file_mr->rkey);

	/* Straddling the end of a registered range: the fallback, both halves reachable. */
	straddle = ibv_reg_mr(pd, buf + BUF_SIZE - 4096, 8192, rw);
	if (!straddle)
		die("reg straddle");
	check_write("zc-straddle", src, 4096, mr->lkey, buf + BUF_SIZE - 2048, straddle->rkey);

	/* One byte past the heap region: refused by the responder (the QP is in error afterwards). */
	post(qp[0], IBV_WR_RDMA_WRITE, src, 2, mr->lkey, (uintptr_t)(unaligned + 4999),
	     heap_mr->rkey, 1);
	print_wc("zc-past-end");
	if (unaligned[5000] != 0x22)
		die("zc past end");
	if (ibv_dereg_mr(sub) || ibv_dereg_mr(heap_mr) || ibv_dereg_mr(file_mr) ||
	    ibv_dereg_mr(straddle))
		die("dereg");
	/* The pages stay the program's after deregistration. */
	unaligned[0] = 0x33;
	free(heap);
	munmap(file_map, 8192);
	close(fd);
	printf("ZC OK\n");
}

static void dereg_scenario(struct ibv_mr *mr)
{
	unsigned char *region = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *second;
	uint32_t rkey;

	if (region == MAP_FAILED)
		die("mmap");
	second = ibv_reg_mr(pd, region, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!second)
		die("reg second");
	rkey = second->rkey;
	check_write("dereg-write", buf, 4096, mr->lkey, region + 4096, rkey);
	printf("REGISTERED\n");
	fflush(stdout);
	await_line();
	if (ibv_dereg_mr(second))
		die("dereg second");
	printf("DEREGISTERED\n");
	fflush(stdout);
	await_line();
	memset(region, 9, 8192);
	post(qp[0], IBV_WR_RDMA_WRITE, buf, 100, mr->lkey, (uintptr_t)region, rkey, 1);
	print_wc("dereg-stale");
	if (region[0] != 9)
		die("stale rkey wrote");
	printf("DEREG OK\n");
}

static void fork_scenario(struct ibv_mr *mr)
{
	int status;
	pid_t child;

	buf[0] = 42;
	buf[BUF_SIZE] = 43; /* past the registered range: an ordinary private page */
	fflush(stdout);
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		volatile unsigned char *p = buf;

		if (buf[BUF_SIZE] != 43)
			_exit(3);
		p[0] = 1; /* no mapping here in the child */
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV || buf[0] != 42) {
		printf("FAIL fork: child status %#x, buf[0]=%d\n", status, buf[0]);
		exit(2);
	}
	memset(buf + 16384, 0, 4096);
	check_write("fork-write", buf + 4096, 4096, mr->lkey, buf + 16384, mr->rkey);
	printf("FORK OK\n");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "data";
	struct ibv_mr *mr;

	open_loopback(!strcmp(mode, "forksafe"));
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!cq)
		die("cq");
	/* Twice the registered size: the "zc" scenario registers across the end of the region. */
	buf = map_buffer(2 * BUF_SIZE);
	for (int i = 0; i < BUF_SIZE; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		die("ibv_reg_mr");
	qp[0] = make_qp();
	qp[1] = make_qp();
	connect_queried(qp[0], qp[1]->qp_num);
	connect_queried(qp[1], qp[0]->qp_num);

	if (!strcmp(mode, "data")) {
		unsigned char *src = buf, *dst = buf + 8192, *rcv = buf + 16384, *rd = buf + 24576;
		uint64_t *counter = (uint64_t *)(buf + 32768), *old = (uint64_t *)(buf + 32776);
		struct ibv_wc wc;

		memset(dst, 0, 4096);
		post(qp[0], IBV_WR_RDMA_WRITE, src, 4096, mr->lkey, (uintptr_t)dst, mr->rkey, 1);
		wc = print_wc("write");
		if (wc.status || memcmp(src, dst, 4096))
			die("write data");
		post_recv(qp[1], rcv, 1024, mr->lkey);
		post(qp[0], IBV_WR_SEND_WITH_IMM, src + 100, 300, mr->lkey, 0, 0, 2);
		/* The receive may complete before the sender's ACK arrives: take both, by opcode. */
		wc = print_wc("send-or-recv");
		if (wc.opcode != IBV_WC_RECV)
			wc = print_wc("send-or-recv");
		else
			print_wc("send-or-recv");
		if (wc.status || wc.byte_len != 300 || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    be32toh(wc.imm_data) != 0x1234 || wc.opcode != IBV_WC_RECV || memcmp(src + 100, rcv, 300))
			die("send data");
		memset(rd, 0, 2000);
		post(qp[0], IBV_WR_RDMA_READ, rd, 2000, mr->lkey, (uintptr_t)(src + 5000), mr->rkey, 3);
		wc = print_wc("read");
		if (wc.status || memcmp(rd, src + 5000, 2000))
			die("read data");
		*counter = 40;
		post(qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, old, 8, mr->lkey, (uintptr_t)counter, mr->rkey, 4);
		wc = print_wc("faa");
		if (wc.status || *old != 40 || *counter != 45)
			die("atomic");
		printf("DATA OK write=4096 send=300 read=2000 faa=%llu->%llu\n", (unsigned long long)*old,
		       (unsigned long long)*counter);
	} else if (!strcmp(mode, "badlkey")) {
		post(qp[0], IBV_WR_SEND, buf, 64, mr->lkey + 0x1000, 0, 0, 1);
		print_wc("badlkey");
	} else if (!strcmp(mode, "unmapped") || !strcmp(mode, "remote-unmapped")) {
		unsigned char *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ibv_mr *gone;

		memset(pages, 1, 8192);
		gone = ibv_reg_mr(pd, pages, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!gone)
			die("reg pages");
		munmap(pages + 4096, 4096); /* registered, then unmapped: no pinning here */
		if (!strcmp(mode, "unmapped"))
			post(qp[0], IBV_WR_RDMA_WRITE, pages + 4096, 1000, gone->lkey, (uintptr_t)buf,
			     mr->rkey, 1);
		else
			post(qp[0], IBV_WR_RDMA_WRITE, buf, 1000, mr->lkey, (uintptr_t)(pages + 4096),
			     gone->rkey, 1);
		print_wc(mode);
	} else if (!strcmp(mode, "zc")) {
		zero_copy_scenario(mr);
	} else if (!strcmp(mode, "dereg")) {
		dereg_scenario(mr);
	} else if (!strcmp(mode, "forksafe")) {
		fork_scenario(mr);
	} else if (!strcmp(mode, "hold")) {
		char line[64];

		printf("READY qpn=%u qpn=%u lkey=%u rkey=%u addr=%llu\n", qp[0]->qp_num, qp[1]->qp_num,
		       mr->lkey, mr->rkey, (unsigned long long)(uintptr_t)buf);
		fflush(stdout);
		while (fgets(line, sizeof(line), stdin))
			;
	} else if (!strcmp(mode, "foreign") && argc == 5) {
		uint32_t lkey = (uint32_t)strtoul(argv[2], NULL, 10);
		uint32_t rkey = (uint32_t)strtoul(argv[3], NULL, 10);
		uint64_t addr = strtoull(argv[4], NULL, 10);

		/* Another program's lkey names memory of another PD: a local protection error. */
		post(qp[0], IBV_WR_RDMA_WRITE, (void *)(uintptr_t)addr, 64, lkey, (uintptr_t)buf,
		     mr->rkey, 1);
		print_wc("foreign-lkey");
		/* Its rkey, through a QP of this program's PD: a remote access error. */
		ibv_destroy_qp(qp[0]);
		ibv_destroy_qp(qp[1]);
		qp[0] = make_qp();
		qp[1] = make_qp();
		connect_qp(qp[0], qp[1]->qp_num);
		connect_qp(qp[1], qp[0]->qp_num);
		post(qp[0], IBV_WR_RDMA_WRITE, buf, 64, mr->lkey, addr, rkey, 2);
		print_wc("foreign-rkey");
	} else {
		die("usage");
	}
	fflush(stdout);
	if (ibv_destroy_qp(qp[0]) || ibv_destroy_qp(qp[1]) || ibv_destroy_cq(cq))
		die("destroy");
	printf("DONE\n");
	return 0;
}
