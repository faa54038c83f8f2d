package org.vrdma.verbs;

import java.util.concurrent.atomic.AtomicBoolean;
import org.vrdma.vnic.verbs.AsyncEventType;

/**
 * An asynchronous event ({@code struct ibv_async_event}) taken with {@link
 * IbvContext#getAsyncEvent}: what happened and the object it is about. QP events ({@code COMM_EST},
 * {@code QP_FATAL}, {@code QP_REQ_ERR}, {@code QP_ACCESS_ERR}, {@code SQ_DRAINED}, {@code
 * QP_LAST_WQE_REACHED}) name a {@link #qp()}, {@code CQ_ERR} a {@link #cq()}, SRQ events a {@link
 * #srq()}, port events ({@code PORT_ACTIVE}, {@code PORT_ERR}) a {@link #portNum()};
 * {@code DEVICE_FATAL} names nothing. Every event must be acknowledged ({@link #ack()}, {@code
 * ibv_ack_async_event}): the object it names cannot be destroyed before (EBUSY).
 */
public final class IbvAsyncEvent {
    private final AsyncEventType type;
    private final IbvQp qp;
    private final IbvCq cq;
    private final IbvSrq srq;
    private final int portNum;
    private final AtomicBoolean acked = new AtomicBoolean();

    private IbvAsyncEvent(AsyncEventType type, IbvQp qp, IbvCq cq, IbvSrq srq, int portNum) {
        this.type = type;
        this.qp = qp;
        this.cq = cq;
        this.srq = srq;
        this.portNum = portNum;
    }

    static IbvAsyncEvent ofQp(AsyncEventType type, IbvQp qp) {
        qp.unackedAsyncEvents.incrementAndGet();
        return new IbvAsyncEvent(type, qp, null, null, 0);
    }

    static IbvAsyncEvent ofCq(AsyncEventType type, IbvCq cq) {
        cq.unackedAsyncEvents.incrementAndGet();
        return new IbvAsyncEvent(type, null, cq, null, 0);
    }

    static IbvAsyncEvent ofSrq(AsyncEventType type, IbvSrq srq) {
        srq.unackedAsyncEvents.incrementAndGet();
        return new IbvAsyncEvent(type, null, null, srq, 0);
    }

    static IbvAsyncEvent ofPort(AsyncEventType type, int portNum) {
        return new IbvAsyncEvent(type, null, null, null, portNum);
    }

    static IbvAsyncEvent ofDevice(AsyncEventType type) {
        return new IbvAsyncEvent(type, null, null, null, 0);
    }

    /** The type of {@code enum ibv_event_type} value {@code v}, or null for one this device never raises. */
    static AsyncEventType typeOf(int v) {
        return switch (v) {
            case 0 -> AsyncEventType.CQ_ERR;
            case 1 -> AsyncEventType.QP_FATAL;
            case 2 -> AsyncEventType.QP_REQ_ERR;
            case 3 -> AsyncEventType.QP_ACCESS_ERR;
            case 4 -> AsyncEventType.COMM_EST;
            case 5 -> AsyncEventType.SQ_DRAINED;
            case 8 -> AsyncEventType.DEVICE_FATAL;
            case 9 -> AsyncEventType.PORT_ACTIVE;
            case 10 -> AsyncEventType.PORT_ERR;
            case 14 -> AsyncEventType.SRQ_ERR;
            case 15 -> AsyncEventType.SRQ_LIMIT_REACHED;
            case 16 -> AsyncEventType.QP_LAST_WQE_REACHED;
            default -> null;
        };
    }

    /** The event ({@code event_type}). */
    public AsyncEventType type() {
        return type;
    }

    /** The queue pair a QP event is about, else null. */
    public IbvQp qp() {
        return qp;
    }

    /** The completion queue of {@code CQ_ERR}, else null. */
    public IbvCq cq() {
        return cq;
    }

    /** The shared receive queue of an SRQ event, else null. */
    public IbvSrq srq() {
        return srq;
    }

    /** The port of a port event (1), else 0. */
    public int portNum() {
        return portNum;
    }

    /**
     * Acknowledges the event ({@code ibv_ack_async_event}); the object it names may then be
     * destroyed. Acknowledging twice is EINVAL.
     */
    public void ack() {
        if (!acked.compareAndSet(false, true)) {
            throw new IbvInvalidArgumentException("event acknowledged already");
        }
        if (qp != null) {
            qp.unackedAsyncEvents.decrementAndGet();
        } else if (cq != null) {
            cq.unackedAsyncEvents.decrementAndGet();
        } else if (srq != null) {
            srq.unackedAsyncEvents.decrementAndGet();
        }
    }

    @Override
    public String toString() {
        Object about =
                qp != null ? qp : cq != null ? cq : srq != null ? srq : portNum != 0 ? "port " + portNum : "device";
        return "IbvAsyncEvent{" + type + ", " + about + '}';
    }
}
