// What the kernel alone gives on this machine for a small-message ping-pong on 127.0.0.1, the floor
// under `./vrdma bench`'s latency row: two threads, one per end, each blocking in its read (or
// spinning on a non-blocking one), over UDP (connected sockets, one datagram per hop) or TCP
// (TCP_NODELAY). Prints the half round trip's p50/p99 in microseconds and the round trips done.
//   gcc -O2 -pthread -o pingpong_probe pingpong_probe.c
//   ./pingpong_probe [udp|tcp] [size=64] [secs=3] [spin=0] [epoll=0] [work_ns=0] [segs=1]
// spin=1 spins on a non-blocking recv; epoll=1 makes each hop what an event loop does: epoll_wait
// for the socket, then recvmmsg, then the reply with sendmmsg (UDP only); epoll=2 waits with a
// 5 ms timeout, as a loop with a retransmission timer pending does. work_ns spins before each send,
// for the user-space work of a hop; segs=2 (epoll modes) sends each hop as one GSO send of two
// datagrams, read with UDP_GRO, as the overlay sends an ACK with the reply.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int udp = 1, size = 64, secs = 3, spin = 0, use_epoll = 0, work_ns = 0, segs = 1;
static int ep_a, ep_b;
static int fd_a, fd_b;
static volatile int stop;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// Reads exactly n bytes (one datagram for UDP); 0 when the peer closed.
static int read_msg(int fd, char *buf, int n) {
    int got = 0;
    if (use_epoll) {
        struct epoll_event ev;
        // An event loop waits with the deadline of its next timer (use_epoll=2: 5 ms, an RTO).
        while (epoll_wait(fd == fd_a ? ep_a : ep_b, &ev, 1, use_epoll == 2 ? 5 : -1) != 1) {
            if (stop || use_epoll != 2) return 0;
        }
        struct iovec iov = {buf, 65536};
        struct mmsghdr m = {.msg_hdr = {.msg_iov = &iov, .msg_iovlen = 1}};
        return recvmmsg(fd, &m, 1, MSG_DONTWAIT, NULL) == 1 && m.msg_len > 0;
    }
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, spin ? MSG_DONTWAIT : 0);
        if (r > 0) {
            if (udp) return 1;
            got += r;
        } else if (r == 0) {
            return 0;
        } else if (!spin) {
            return 0;
        }
        if (stop && spin) return 0;
    }
    return 1;
}

static long long now_ns(void);

// Stands for the user-space work of a hop (decode, transport, encode): spins for work_ns.
static void work(void) {
    if (work_ns <= 0) return;
    long long end = now_ns() + work_ns;
    while (now_ns() < end) {
    }
}

static int send_msg(int fd, char *buf) {
    work();
    if (!use_epoll) return send(fd, buf, size, 0);
    // segs > 1: one GSO send of segs datagrams of `size` bytes, as the overlay sends an ACK and a
    // SEND together; the receiver reads them with UDP_GRO in one read.
    struct iovec iov = {buf, (size_t)size * segs};
    char cbuf[CMSG_SPACE(sizeof(unsigned short))] = {0};
    struct mmsghdr m = {.msg_hdr = {.msg_iov = &iov, .msg_iovlen = 1}};
    if (segs > 1) {
        m.msg_hdr.msg_control = cbuf;
        m.msg_hdr.msg_controllen = sizeof cbuf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg_hdr);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(unsigned short));
        *(unsigned short *)CMSG_DATA(c) = size;
    }
    return sendmmsg(fd, &m, 1, 0) == 1 ? size : -1;
}

static void *echo(void *arg) {
    (void)arg;
    char buf[65536];
    while (read_msg(fd_b, buf, size)) {
        if (send_msg(fd_b, buf) != size) break;
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc > 1) udp = strcmp(argv[1], "tcp") != 0;
    if (argc > 2) size = atoi(argv[2]);
    if (argc > 3) secs = atoi(argv[3]);
    if (argc > 4) spin = atoi(argv[4]);
    if (argc > 5) use_epoll = atoi(argv[5]);
    if (argc > 6) work_ns = atoi(argv[6]);
    if (argc > 7) segs = atoi(argv[7]);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int one = 1;
    if (udp) {
        struct sockaddr_in b = a;
        fd_a = socket(AF_INET, SOCK_DGRAM, 0);
        fd_b = socket(AF_INET, SOCK_DGRAM, 0);
        bind(fd_a, (struct sockaddr *)&a, sizeof a);
        bind(fd_b, (struct sockaddr *)&b, sizeof b);
        getsockname(fd_a, (struct sockaddr *)&a, &len);
        len = sizeof b;
        getsockname(fd_b, (struct sockaddr *)&b, &len);
        connect(fd_a, (struct sockaddr *)&b, sizeof b);
        connect(fd_b, (struct sockaddr *)&a, sizeof a);
    } else {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        bind(l, (struct sockaddr *)&a, sizeof a);
        getsockname(l, (struct sockaddr *)&a, &len);
        listen(l, 1);
        fd_a = socket(AF_INET, SOCK_STREAM, 0);
        connect(fd_a, (struct sockaddr *)&a, sizeof a);
        fd_b = accept(l, NULL, NULL);
        close(l);
        setsockopt(fd_a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd_b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (use_epoll) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
        ep_a = epoll_create1(0);
        ep_b = epoll_create1(0);
        epoll_ctl(ep_a, EPOLL_CTL_ADD, fd_a, &ev);
        epoll_ctl(ep_b, EPOLL_CTL_ADD, fd_b, &ev);
        if (segs > 1) {
            setsockopt(fd_a, SOL_UDP, UDP_GRO, &one, sizeof one);
            setsockopt(fd_b, SOL_UDP, UDP_GRO, &one, sizeof one);
        }
    }
    pthread_t t;
    pthread_create(&t, NULL, echo, NULL);
    char buf[65536];
    memset(buf, 1, sizeof buf);
    long long cap = 20000000, n = 0;
    long long *samples = malloc(cap * sizeof *samples);
    long long warm_end = now_ns() + 1000000000LL, end = warm_end + secs * 1000000000LL;
    for (;;) {
        long long t0 = now_ns();
        if (t0 > end || n == cap) break;
        if (send_msg(fd_a, buf) != size || !read_msg(fd_a, buf, size)) break;
        if (t0 > warm_end) samples[n++] = (now_ns() - t0) / 2;
    }
    stop = 1;
    shutdown(fd_a, SHUT_RDWR);
    close(fd_a);
    if (udp) shutdown(fd_b, SHUT_RDWR);
    pthread_join(t, NULL);
    qsort(samples, n, sizeof *samples, cmp);
    printf("%d segment(s), work %d ns: %s%s%s %d B: half RTT p50 %.2f us, p99 %.2f us, %lld round trips\n", segs, work_ns, udp ? "udp" : "tcp",
           spin ? " spinning" : " blocking", use_epoll == 2 ? " epoll(5 ms)+recvmmsg+sendmmsg" : use_epoll ? " epoll+recvmmsg+sendmmsg" : "", size, n ? samples[n / 2] / 1e3 : 0, n ? samples[n * 99 / 100] / 1e3 : 0, n);
    return 0;
}
