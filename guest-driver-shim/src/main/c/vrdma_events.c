/*
 * Waiting without burning a core, and asynchronous events.
 *
 * - ibv_req_notify_cq arms the completion ring's arm word; the vNIC checks it after every publish
 *   and sends the event on the channel's connection. No system call, no control round trip.
 * - poll_cq on an empty CQ: a thread that keeps finding the same CQ empty spins for a while
 *   (VRDMA_POLL_SPIN_US, default 200 us, a sched_yield per 64 empty polls: a ping-pong whose
 *   completions come that often keeps the latency of spinning), then sleeps on a futex at the
 *   ring's producer counter (announced in the ring's waiter count, so the vNIC wakes it only then),
 *   for a bounded time: poll_cq still returns, 0 if nothing came. While completions flow it makes
 *   no system call. VRDMA_POLL_SLEEP=0 turns sleeping off.
 * - The context's async_fd is a connection on which the vNIC writes struct vr_async_event records;
 *   ibv_get_async_event reads one and names the QP, CQ or SRQ by the handle the library tracks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vrdma_proto.h"
#include "vrdma_int.h"

#define EXPORT __attribute__((visibility("default")))

/* Empty polls of one CQ before the poller sleeps or yields (a power of two). */
#define VR_POLL_SPIN 64
/* Spinning before the first sleep, unless VRDMA_POLL_SPIN_US says otherwise. */
#define VR_SPIN_DEFAULT_NS 200000L
/* The first sleep of a run of empty polls, and the longest (the bound on a poll_cq call). */
#define VR_SLEEP_FIRST_NS 100000L
#define VR_SLEEP_MAX_NS 1000000L
/* Wake-up batches: no fewer completions than this (else one at a time), no more than this. */
#define VR_BATCH_MIN 2
#define VR_BATCH_MAX 32

/* ---------------------------------------------------------------- arming */

int vr_cq_arm(uint8_t *ring, int solicited_only)
{
	uint32_t *arm = ring_u32(ring, VR_CQ_ARM);
	uint32_t old = __atomic_load_n(arm, __ATOMIC_RELAXED);
	uint32_t served = __atomic_load_n(ring_u32(ring, VR_CQ_NOTIFIED), __ATOMIC_ACQUIRE);
	uint32_t sol = solicited_only ? 1 : 0;

	/* Arming for every completion widens a pending solicited-only request, never narrows it. */
	if (old != served && !(old & 1))
		sol = 0;
	__atomic_store_n(arm, (((old >> 1) + 1) << 1) | sol, __ATOMIC_RELEASE);
	/* Pairs with the vNIC's fence between publishing and reading the arm word. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* ---------------------------------------------------------------- sleeping in poll_cq */

static __thread const struct ibv_cq *tl_cq; /* the CQ this thread polled last */
static __thread uint32_t tl_empty;          /* empty polls in a row, any CQ */
static __thread uint32_t tl_same;           /* ... of tl_cq only */
static __thread long tl_sleep_ns;           /* next sleep */
static __thread long tl_run_start_ns;       /* when this run of empty polls of tl_cq began */
static int g_sleep = -1;                    /* VRDMA_POLL_SLEEP, read once */
static int g_batch = -1;                    /* VRDMA_POLL_BATCH, read once */
static long g_spin_ns = -1;                 /* VRDMA_POLL_SPIN_US, read once */

static int sleep_enabled(void)
{
	int s = __atomic_load_n(&g_sleep, __ATOMIC_RELAXED);

	if (s < 0) {
		const char *e = getenv("VRDMA_POLL_SLEEP");

		s = !(e && e[0] == '0');
		__atomic_store_n(&g_sleep, s, __ATOMIC_RELAXED);
	}
	return s;
}

static int batch_enabled(void)
{
	int b = __atomic_load_n(&g_batch, __ATOMIC_RELAXED);

	if (b < 0) {
		const char *e = getenv("VRDMA_POLL_BATCH");

		b = !(e && e[0] == '0');
		__atomic_store_n(&g_batch, b, __ATOMIC_RELAXED);
	}
	return b;
}

static long spin_ns(void)
{
	long ns = __atomic_load_n(&g_spin_ns, __ATOMIC_RELAXED);

	if (ns < 0) {
		const char *e = getenv("VRDMA_POLL_SPIN_US");
		char *end;
		long us = e && *e ? strtol(e, &end, 10) : -1;

		ns = us >= 0 && us <= 1000000 && *end == 0 ? us * 1000 : VR_SPIN_DEFAULT_NS;
		__atomic_store_n(&g_spin_ns, ns, __ATOMIC_RELAXED);
	}
	return ns;
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no system call */
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

void vr_poll_busy(void)
{
	tl_empty = 0;
	tl_same = 0;
	tl_sleep_ns = 0;
}

/*
 * How many completions a sleeper on this CQ asks the vNIC to wait for: a quarter of the signaled
 * sends outstanding when nothing else can complete (no receives posted, no SRQ), else 1. A
 * bandwidth program with 128 WRITEs in flight then wakes once per 32 completions and refills the
 * queue in one go, instead of spinning between completions on a core the vNIC needs (or being
 * woken for each, which costs as much): 96 requests stay queued meanwhile.
 */
static uint32_t wake_batch(const struct vr_cq_expect *e)
{
	int32_t sends = __atomic_load_n(&e->sends, __ATOMIC_RELAXED);

	if (!batch_enabled() || __atomic_load_n(&e->recvs, __ATOMIC_RELAXED) > 0 ||
	    __atomic_load_n(&e->srq_qps, __ATOMIC_RELAXED) > 0 || sends / 4 < VR_BATCH_MIN)
		return 1;
	return sends / 4 > VR_BATCH_MAX ? VR_BATCH_MAX : (uint32_t)sends / 4;
}

void vr_poll_idle(struct ibv_cq *cq, uint8_t *ring, uint32_t cons, struct vr_cq_expect *expect)
{
	uint32_t *prod = ring_u32(ring, VR_CQ_PROD);
	uint32_t *waiters = ring_u32(ring, VR_CQ_WAITERS);
	uint32_t *wake = ring_u32(ring, VR_CQ_WAKE_BATCH);
	uint32_t batch;
	struct timespec ts;

	tl_empty++;
	if (tl_cq == cq) {
		tl_same++;
	} else {
		tl_cq = cq;
		tl_same = 1;
	}
	if (tl_same == 1)
		tl_run_start_ns = now_ns();
	if (tl_empty & (VR_POLL_SPIN - 1))
		return;
	batch = wake_batch(expect);
	if (!sleep_enabled() || tl_same < VR_POLL_SPIN ||
	    (batch == 1 && now_ns() - tl_run_start_ns < spin_ns())) {
		/* Spinning still, or several CQs polled in turn (a sleep on one could miss another's). */
		sched_yield();
		return;
	}
	if (!tl_sleep_ns)
		tl_sleep_ns = VR_SLEEP_FIRST_NS;
	/* Another thread's batch may be overwritten: a hint, each sleep is bounded anyway. */
	if (__atomic_load_n(wake, __ATOMIC_RELAXED) != (batch > 1 ? batch : 0))
		__atomic_store_n(wake, batch > 1 ? batch : 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(waiters, 1, __ATOMIC_SEQ_CST);
	/* Pairs with the vNIC's fence between publishing and reading the waiter count. */
	if (__atomic_load_n(prod, __ATOMIC_SEQ_CST) == cons) {
		ts.tv_sec = 0;
		ts.tv_nsec = batch > 1 ? VR_SLEEP_MAX_NS : tl_sleep_ns;
		/* A shared futex: the key is the memfd page, which the vNIC maps too. */
		if (syscall(SYS_futex, prod, FUTEX_WAIT, cons, &ts, NULL, 0) < 0 && errno == ETIMEDOUT &&
		    tl_sleep_ns < VR_SLEEP_MAX_NS)
			tl_sleep_ns *= 2;
	}
	__atomic_sub_fetch(waiters, 1, __ATOMIC_SEQ_CST);
}

/* ---------------------------------------------------------------- asynchronous events */

/* The library's objects the vNIC may name in an event: (context, kind, handle) -> object. */
struct vr_tracked {
	struct vr_tracked *next;
	struct ibv_context *ctx;
	uint32_t kind, handle;
	void *obj;
};

static struct vr_tracked *g_tracked;
static pthread_mutex_t g_tracked_lock = PTHREAD_MUTEX_INITIALIZER;

void vr_async_track(struct ibv_context *ctx, uint32_t kind, uint32_t handle, void *obj)
{
	struct vr_tracked *t = calloc(1, sizeof(*t));

	if (!t)
		return; /* events of this object are then dropped */
	t->ctx = ctx;
	t->kind = kind;
	t->handle = handle;
	t->obj = obj;
	pthread_mutex_lock(&g_tracked_lock);
	t->next = g_tracked;
	g_tracked = t;
	pthread_mutex_unlock(&g_tracked_lock);
}

static void untrack_where(struct ibv_context *ctx, int all, uint32_t kind, uint32_t handle)
{
	struct vr_tracked **p;

	pthread_mutex_lock(&g_tracked_lock);
	for (p = &g_tracked; *p;) {
		struct vr_tracked *t = *p;

		if (t->ctx == ctx && (all || (t->kind == kind && t->handle == handle))) {
			*p = t->next;
			free(t);
		} else {
			p = &t->next;
		}
	}
	pthread_mutex_unlock(&g_tracked_lock);
}

void vr_async_untrack(struct ibv_context *ctx, uint32_t kind, uint32_t handle)
{
	untrack_where(ctx, 0, kind, handle);
}

static void *tracked(struct ibv_context *ctx, uint32_t kind, uint32_t handle)
{
	void *obj = NULL;

	pthread_mutex_lock(&g_tracked_lock);
	for (struct vr_tracked *t = g_tracked; t; t = t->next) {
		if (t->ctx == ctx && t->kind == kind && t->handle == handle) {
			obj = t->obj;
			break;
		}
	}
	pthread_mutex_unlock(&g_tracked_lock);
	return obj;
}

int vr_async_open(struct ibv_context *ctx)
{
	struct vr_doorbell_resp resp;
	struct vr_bind_doorbell_req bind;
	int fd;

	if (vr_ctx_call(ctx, VR_OPEN_ASYNC, NULL, 0, &resp, sizeof(resp)) == 0) {
		bind = (struct vr_bind_doorbell_req){ .token = resp.token };
		fd = vr_connect_bound(VR_BIND_ASYNC, &bind, sizeof(bind));
		if (fd >= 0)
			return fd;
		vr_log("async events: %s", strerror(errno));
	}
	/* A vNIC without asynchronous events: an fd that never becomes readable. */
	return eventfd(0, EFD_CLOEXEC);
}

void vr_async_close(struct ibv_context *ctx)
{
	untrack_where(ctx, 1, 0, 0);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	ctx->async_fd = -1;
}

EXPORT int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct vr_async_event ev;

	if (!ctx || !event) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		char *p = (char *)&ev;
		size_t got = 0;

		while (got < sizeof(ev)) {
			ssize_t n = read(ctx->async_fd, p + got, sizeof(ev) - got);

			if (n < 0) {
				if (errno == EINTR || (errno == EAGAIN && got))
					continue; /* never return half an event */
				return -1;
			}
			if (n == 0) {
				errno = EIO; /* the vNIC went away */
				return -1;
			}
			got += (size_t)n;
		}
		memset(event, 0, sizeof(*event));
		event->event_type = (enum ibv_event_type)ev.event_type;
		switch (ev.kind) {
		case VR_ASYNC_QP:
			event->element.qp = tracked(ctx, ev.kind, ev.handle);
			if (!event->element.qp)
				continue; /* destroyed meanwhile: the event has no object left */
			return 0;
		case VR_ASYNC_CQ:
			event->element.cq = tracked(ctx, ev.kind, ev.handle);
			if (!event->element.cq)
				continue;
			return 0;
		case VR_ASYNC_SRQ:
			event->element.srq = tracked(ctx, ev.kind, ev.handle);
			if (!event->element.srq)
				continue;
			return 0;
		case VR_ASYNC_PORT:
			event->element.port_num = (int)ev.handle;
			return 0;
		default:
			return 0; /* device events name nothing */
		}
	}
}

EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (!event)
		return;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_broadcast(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		return;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_broadcast(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		return;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_broadcast(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		return;
	}
	default:
		return;
	}
}
