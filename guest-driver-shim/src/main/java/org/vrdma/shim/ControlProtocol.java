package org.vrdma.shim;

import org.vrdma.vnic.verbs.WcOpcode;

/**
 * Constants of the control protocol between the native guest library and {@link VnicControlServer}
 * (mirrors {@code src/main/c/vrdma_proto.h}; the README describes every message). All integers are
 * little-endian.
 */
public final class ControlProtocol {
    /** {@code "VRD0"} read as a little-endian int: the first field of HELLO. */
    public static final int MAGIC = 0x30445256;

    public static final int VERSION = 1;
    /** Bytes of the header of every request and response. */
    public static final int HEADER_BYTES = 16;
    /** Largest body either side accepts; a larger request closes the connection. */
    public static final int MAX_BODY = 65536;

    public static final int HELLO = 1;
    public static final int QUERY_DEVICE = 2;
    public static final int QUERY_PORT = 3;
    public static final int QUERY_GID = 4;
    public static final int ALLOC_PD = 5;
    public static final int DEALLOC_PD = 6;
    public static final int REG_MR = 7;
    public static final int DEREG_MR = 8;
    public static final int CREATE_CHANNEL = 9;
    public static final int DESTROY_CHANNEL = 10;
    public static final int CREATE_CQ = 11;
    public static final int DESTROY_CQ = 12;
    public static final int REQ_NOTIFY_CQ = 13;
    public static final int ACK_CQ_EVENTS = 14;
    public static final int POLL_CQ = 15;
    public static final int BIND_CHANNEL = 16;
    public static final int CREATE_QP = 17;
    public static final int MODIFY_QP = 18;
    public static final int QUERY_QP = 19;
    public static final int DESTROY_QP = 20;
    public static final int OPEN_DOORBELL = 21;
    public static final int BIND_DOORBELL = 22;
    public static final int OPEN_ASYNC = 23;
    public static final int BIND_ASYNC = 24;
    /** Address handles and shared receive queues (UD and SRQ). */
    public static final int CREATE_AH = 40;

    public static final int DESTROY_AH = 41;
    public static final int CREATE_SRQ = 42;
    public static final int MODIFY_SRQ = 43;
    public static final int QUERY_SRQ = 44;
    public static final int DESTROY_SRQ = 45;
    /** Memory windows: ALLOC_MW (u32 pd, u32 type → u32 handle, u32 rkey), DEALLOC_MW (u32 handle, u32 0). */
    public static final int ALLOC_MW = 46;

    public static final int DEALLOC_MW = 47;

    /** Completion ring: header bytes, producer (vNIC) and consumer (library) counter offsets. */
    public static final int CQ_RING_HDR = 128;

    public static final int CQ_PROD = 0;
    public static final int CQ_CONS = 64;
    /** The arm word the vNIC last answered with an event (vNIC). */
    public static final int CQ_NOTIFIED = 8;
    /** {@code (sequence << 1) | solicitedOnly}, a new sequence per ibv_req_notify_cq (library). */
    public static final int CQ_ARM = 72;
    /** Pollers sleeping on the futex at {@link #CQ_PROD} (library). */
    public static final int CQ_WAITERS = 76;
    /**
     * Completions the sleepers want before a wake-up (library): 0 or 1 any, n only once {@code prod -
     * cons >= n} or a completion failed.
     */
    public static final int CQ_WAKE_BATCH = 80;
    /** Bytes of one completion slot ({@code struct vr_wc_slot}). */
    public static final int CQ_SLOT_BYTES = 64;
    /** Completion slot [52], bit 0: the message carried the solicited-event bit; [48] holds the sender's IPv4. */
    public static final int WC_SLOT_SOLICITED = 1;

    /** Work-queue rings: header bytes and counter offsets (see vrdma_proto.h). */
    public static final int QP_RING_HDR = 512;

    public static final int SQ_PROD = 0;
    public static final int SQ_CONS = 64;
    public static final int RQ_PROD = 128;
    public static final int RQ_CONS = 192;
    public static final int DB_ARMED = 256;
    /** Bytes of {@code struct vr_sq_wqe} and {@code struct vr_rq_wqe} before their SGEs. */
    public static final int SQ_WQE_BYTES = 72;

    public static final int RQ_WQE_BYTES = 16;
    public static final int SGE_BYTES = 16;
    /** Bytes of {@code struct vr_qp_attr}. */
    public static final int QP_ATTR_BYTES = 144;
    /** {@code IBV_QPT_RC}. */
    public static final int QPT_RC = 2;
    /** {@code struct vr_async_event.kind}: the object an asynchronous event names. */
    public static final int ASYNC_KIND_QP = 1;

    public static final int ASYNC_KIND_CQ = 2;
    public static final int ASYNC_KIND_SRQ = 3;
    public static final int ASYNC_KIND_PORT = 4;
    public static final int ASYNC_KIND_DEVICE = 5;

    /** {@code IBV_QPT_UC}. */
    public static final int QPT_UC = 3;
    /** {@code IBV_QPT_UD}. */
    public static final int QPT_UD = 4;
    /** SRQ ring: header bytes, producer (library) and consumer (vNIC: receives consumed) counters. */
    public static final int SRQ_RING_HDR = 512;

    public static final int SRQ_PROD = 0;
    public static final int SRQ_CONS = 64;
    /** {@code ibv_modify_srq} mask bits: {@code IBV_SRQ_MAX_WR}, {@code IBV_SRQ_LIMIT}. */
    public static final int SRQ_ATTR_MAX_WR = 1;

    public static final int SRQ_ATTR_LIMIT = 2;

    /** Bytes of {@code struct vr_device_attr}. */
    public static final int DEVICE_ATTR_BYTES = 256;
    /** Bytes of {@code struct vr_port_attr}. */
    public static final int PORT_ATTR_BYTES = 32;
    /** Bytes of {@code struct vr_wc}. */
    public static final int WC_BYTES = 48;
    /** Most completions one POLL_CQ returns. */
    public static final int MAX_POLL = 64;

    /** Error numbers of responses (Linux values). */
    public static final int EPERM = 1;

    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int ENOMEM = 12;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EINVAL = 22;
    public static final int EPROTO = 71;
    public static final int EMSGSIZE = 90;
    public static final int EOPNOTSUPP = 95;
    public static final int ETIMEDOUT = 110;

    /** REG_MR response flag: the vNIC maps the region's memfd (zero-copy). */
    public static final int MR_ZERO_COPY = 1;

    /** Access flags libibverbs may add that a device is free to ignore (relaxed ordering, ...). */
    public static final int ACCESS_OPTIONAL_RANGE = 0x3ff00000;

    /** Entries of the completion ring of a CQ of {@code cqe} entries, as the vNIC computes them. */
    public static int cqRingEntries(final int cqe) {
        return Session.pow2AtLeast(Math.max(1, cqe) + 1);
    }

    /** Bytes of the completion ring of a CQ of {@code cqe} entries. */
    public static long cqRingBytes(final int cqe) {
        return CQ_RING_HDR + (long) cqRingEntries(cqe) * CQ_SLOT_BYTES;
    }

    /**
     * Geometry of a QP's work-queue ring, computed as the vNIC does (see vrdma_proto.h).
     *
     * @param sqEntries send slots (a power of two)
     * @param rqEntries receive slots (a power of two)
     * @param sqStride bytes per send slot
     * @param rqStride bytes per receive slot
     * @param bytes bytes of the whole ring, header included
     */
    public record QpRing(int sqEntries, int rqEntries, int sqStride, int rqStride, long bytes) {
        /** The ring of a QP with these capabilities. */
        public static QpRing of(
                final int maxSendWr,
                final int maxRecvWr,
                final int maxSendSge,
                final int maxRecvSge,
                final int maxInline) {
            final Session.QpLayout l = Session.QpLayout.of(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline);
            return new QpRing(l.sqEntries(), l.rqEntries(), l.sqStride(), l.rqStride(), l.bytes());
        }
    }

    /**
     * Geometry of an SRQ's ring, computed as the vNIC does (see vrdma_proto.h).
     *
     * @param entries slots (a power of two)
     * @param stride bytes per slot
     * @param bytes bytes of the whole ring, header included
     */
    public record SrqRingLayout(int entries, int stride, long bytes) {
        /** The ring of an SRQ of {@code maxWr} receives of {@code maxSge} elements. */
        public static SrqRingLayout of(final int maxWr, final int maxSge) {
            return new SrqRingLayout(Session.pow2AtLeast(maxWr), SrqRing.stride(maxSge), SrqRing.bytes(maxWr, maxSge));
        }
    }

    /** The completion opcode of an {@code enum ibv_wc_opcode} value, or null for another value. */
    public static WcOpcode wcOpcodeOf(final int ibvValue) {
        for (final WcOpcode op : WcOpcode.values()) {
            if (Session.wcOpcode(op) == ibvValue) {
                return op;
            }
        }
        return null;
    }

    private ControlProtocol() {}
}
