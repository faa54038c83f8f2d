package org.vrdma.verbs;

import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;

/**
 * A work completion ({@code struct ibv_wc}). Mutable and reusable: {@link IbvCq#poll} fills an array
 * of them the application allocated once, so polling allocates nothing.
 */
public final class IbvWc {
    /** The work request's id, as posted. */
    public long wrId;
    /** SUCCESS, or what went wrong ({@code enum ibv_wc_status}, same order as libibverbs). */
    public WcStatus status = WcStatus.SUCCESS;
    /** The operation that completed; for error completions it names the operation posted. */
    public WcOpcode opcode = WcOpcode.SEND;
    /** Vendor error syndrome (0). */
    public int vendorErr;
    /** Bytes received (including a UD receive's 40-byte GRH), read, or sent. */
    public int byteLen;
    /** Immediate data (host order), valid with {@link org.vrdma.vnic.verbs.WcFlags#WITH_IMM}. */
    public int immData;
    /** The local queue pair. */
    public int qpNum;
    /** Source QP of a UD receive. */
    public int srcQp;
    /** {@link org.vrdma.vnic.verbs.WcFlags} bits. */
    public int wcFlags;
    /** P_Key index (0). */
    public int pkeyIndex;
    /** Source IPv4 of a UD receive (RoCE v2 has no LID). */
    public int srcIpv4;
    /** The message carried the solicited-event bit. */
    public boolean solicited;

    /**
     * The rkey a SEND with Invalidate invalidated ({@code invalidated_rkey}, which shares {@code
     * imm_data}'s place), valid with {@link org.vrdma.vnic.verbs.WcFlags#WITH_INV}.
     */
    public int invalidatedRkey() {
        return immData;
    }

    /** Copies every field of {@code o}. */
    public void copyFrom(IbvWc o) {
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

    /** An array of {@code n} completions to poll into. */
    public static IbvWc[] array(int n) {
        IbvWc[] a = new IbvWc[n];
        for (int i = 0; i < n; i++) {
            a[i] = new IbvWc();
        }
        return a;
    }

    @Override
    public String toString() {
        return "IbvWc{wrId=" + wrId + ", " + status + ", " + opcode + ", byteLen=" + byteLen + ", qpNum=" + qpNum
                + (wcFlags != 0 ? ", wcFlags=" + wcFlags + ", immData=0x" + Integer.toHexString(immData) : "") + '}';
    }
}
