package org.vrdma.vnic.verbs;

/** A work completion ({@code struct ibv_wc}); mutable so that polling allocates nothing. */
public final class WorkCompletion {
    public long wrId;
    public WcStatus status = WcStatus.SUCCESS;
    public WcOpcode opcode = WcOpcode.SEND;
    public int vendorErr;
    /** Bytes transferred: received (RECV, including a UD GRH), read (READ) or sent. */
    public int byteLen;
    /** Immediate data, valid with {@link WcFlags#WITH_IMM}. */
    public int immData;

    public int qpNum;
    /** Source QP of a UD receive. */
    public int srcQp;
    /** {@link WcFlags} bits. */
    public int wcFlags;

    public int pkeyIndex;
    /** Source IPv4 of a UD receive (RoCEv2 has no LID; this replaces slid). */
    public int srcIpv4;
    /** The message carried the solicited-event bit (what a solicited-only notification waits for). */
    public boolean solicited;

    /** Copies every field from {@code o}. */
    public void copyFrom(final WorkCompletion o) {
        wrId = o.wrId;
        status = o.status;
        opcode = o.opcode;
        vendorErr = o.vendorErr;
        byteLen = o.byteLen;
        immData = o.immData;
        qpNum = o.qpNum;
        srcQp = o.srcQp;
        wcFlags = o.wcFlags;
        pkeyIndex = o.pkeyIndex;
        srcIpv4 = o.srcIpv4;
        solicited = o.solicited;
    }

    void clear() {
        wrId = 0;
        status = WcStatus.SUCCESS;
        opcode = WcOpcode.SEND;
        vendorErr = 0;
        byteLen = 0;
        immData = 0;
        qpNum = 0;
        srcQp = 0;
        wcFlags = 0;
        pkeyIndex = 0;
        srcIpv4 = 0;
        solicited = false;
    }

    @Override
    public String toString() {
        return "WorkCompletion{wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byteLen="
                + byteLen + ", immData=" + immData + ", qpNum=" + qpNum + ", srcQp=" + srcQp + ", wcFlags="
                + wcFlags + '}';
    }
}
