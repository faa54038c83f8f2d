package org.vrdma.wire;

/**
 * BTH opcodes of the InfiniBand transport (RC, UC, UD) plus the RoCEv2 congestion notification
 * packet, and which extension headers each one carries.
 *
 * <p>The top three bits of an opcode select the transport (000 RC, 001 UC, 011 UD, 100 CNP), the
 * low five the operation. Extension headers follow the BTH in the order the spec fixes: DETH,
 * RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH. Lookups are table-driven and allocation-free.
 */
public final class Opcode {
    public static final int RC_SEND_FIRST = 0x00;
    public static final int RC_SEND_MIDDLE = 0x01;
    public static final int RC_SEND_LAST = 0x02;
    public static final int RC_SEND_LAST_WITH_IMMEDIATE = 0x03;
    public static final int RC_SEND_ONLY = 0x04;
    public static final int RC_SEND_ONLY_WITH_IMMEDIATE = 0x05;
    public static final int RC_RDMA_WRITE_FIRST = 0x06;
    public static final int RC_RDMA_WRITE_MIDDLE = 0x07;
    public static final int RC_RDMA_WRITE_LAST = 0x08;
    public static final int RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09;
    public static final int RC_RDMA_WRITE_ONLY = 0x0A;
    public static final int RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B;
    public static final int RC_RDMA_READ_REQUEST = 0x0C;
    public static final int RC_RDMA_READ_RESPONSE_FIRST = 0x0D;
    public static final int RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    public static final int RC_RDMA_READ_RESPONSE_LAST = 0x0F;
    public static final int RC_RDMA_READ_RESPONSE_ONLY = 0x10;
    public static final int RC_ACKNOWLEDGE = 0x11;
    public static final int RC_ATOMIC_ACKNOWLEDGE = 0x12;
    public static final int RC_COMPARE_SWAP = 0x13;
    public static final int RC_FETCH_ADD = 0x14;
    public static final int RC_SEND_LAST_WITH_INVALIDATE = 0x16;
    public static final int RC_SEND_ONLY_WITH_INVALIDATE = 0x17;

    public static final int UC_SEND_FIRST = 0x20;
    public static final int UC_SEND_MIDDLE = 0x21;
    public static final int UC_SEND_LAST = 0x22;
    public static final int UC_SEND_LAST_WITH_IMMEDIATE = 0x23;
    public static final int UC_SEND_ONLY = 0x24;
    public static final int UC_SEND_ONLY_WITH_IMMEDIATE = 0x25;
    public static final int UC_RDMA_WRITE_FIRST = 0x26;
    public static final int UC_RDMA_WRITE_MIDDLE = 0x27;
    public static final int UC_RDMA_WRITE_LAST = 0x28;
    public static final int UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29;
    public static final int UC_RDMA_WRITE_ONLY = 0x2A;
    public static final int UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2B;

    public static final int UD_SEND_ONLY = 0x64;
    public static final int UD_SEND_ONLY_WITH_IMMEDIATE = 0x65;

    /** RoCEv2 congestion notification packet (annex A17): BTH, 16 reserved bytes, ICRC. */
    public static final int CNP = 0x81;

    public static final int RETH_BYTES = 16;
    public static final int AETH_BYTES = 4;
    public static final int ATOMIC_ETH_BYTES = 28;
    public static final int ATOMIC_ACK_ETH_BYTES = 8;
    public static final int IMM_DT_BYTES = 4;
    public static final int IETH_BYTES = 4;
    public static final int DETH_BYTES = 8;
    /** The reserved block a CNP carries after its BTH. */
    public static final int CNP_RESERVED_BYTES = 16;

    private static final int VALID = 1;
    private static final int RETH = 1 << 1;
    private static final int AETH = 1 << 2;
    private static final int ATOMIC_ETH = 1 << 3;
    private static final int ATOMIC_ACK_ETH = 1 << 4;
    private static final int IMM_DT = 1 << 5;
    private static final int IETH = 1 << 6;
    private static final int DETH = 1 << 7;
    private static final int PAYLOAD = 1 << 8;
    private static final int CNP_RESERVED = 1 << 9;

    private static final short[] FLAGS = new short[256];
    private static final byte[] EXT_HEADER_BYTES = new byte[256];
    private static final String[] NAMES = new String[256];

    static {
        // RC and UC share the SEND and RDMA WRITE layouts; RC adds reads, acks, atomics, invalidate.
        for (int base : new int[] {0x00, 0x20}) {
            String t = base == 0 ? "RC " : "UC ";
            define(base + 0x00, t + "Send First", PAYLOAD);
            define(base + 0x01, t + "Send Middle", PAYLOAD);
            define(base + 0x02, t + "Send Last", PAYLOAD);
            define(base + 0x03, t + "Send Last Immediate", IMM_DT | PAYLOAD);
            define(base + 0x04, t + "Send Only", PAYLOAD);
            define(base + 0x05, t + "Send Only Immediate", IMM_DT | PAYLOAD);
            define(base + 0x06, t + "RDMA Write First", RETH | PAYLOAD);
            define(base + 0x07, t + "RDMA Write Middle", PAYLOAD);
            define(base + 0x08, t + "RDMA Write Last", PAYLOAD);
            define(base + 0x09, t + "RDMA Write Last Immediate", IMM_DT | PAYLOAD);
            define(base + 0x0A, t + "RDMA Write Only", RETH | PAYLOAD);
            define(base + 0x0B, t + "RDMA Write Only Immediate", RETH | IMM_DT | PAYLOAD);
        }
        define(RC_RDMA_READ_REQUEST, "RC RDMA Read Request", RETH);
        define(RC_RDMA_READ_RESPONSE_FIRST, "RC RDMA Read Response First", AETH | PAYLOAD);
        define(RC_RDMA_READ_RESPONSE_MIDDLE, "RC RDMA Read Response Middle", PAYLOAD);
        define(RC_RDMA_READ_RESPONSE_LAST, "RC RDMA Read Response Last", AETH | PAYLOAD);
        define(RC_RDMA_READ_RESPONSE_ONLY, "RC RDMA Read Response Only", AETH | PAYLOAD);
        define(RC_ACKNOWLEDGE, "RC Acknowledge", AETH);
        define(RC_ATOMIC_ACKNOWLEDGE, "RC Atomic Acknowledge", AETH | ATOMIC_ACK_ETH);
        define(RC_COMPARE_SWAP, "RC Compare Swap", ATOMIC_ETH);
        define(RC_FETCH_ADD, "RC Fetch Add", ATOMIC_ETH);
        define(RC_SEND_LAST_WITH_INVALIDATE, "RC Send Last Invalidate", IETH | PAYLOAD);
        define(RC_SEND_ONLY_WITH_INVALIDATE, "RC Send Only Invalidate", IETH | PAYLOAD);
        define(UD_SEND_ONLY, "UD Send Only", DETH | PAYLOAD);
        define(UD_SEND_ONLY_WITH_IMMEDIATE, "UD Send Only Immediate", DETH | IMM_DT | PAYLOAD);
        define(CNP, "CNP", CNP_RESERVED);
    }

    private static void define(int op, String name, int flags) {
        FLAGS[op] = (short) (flags | VALID);
        NAMES[op] = name;
        int bytes = 0;
        bytes += (flags & RETH) != 0 ? RETH_BYTES : 0;
        bytes += (flags & AETH) != 0 ? AETH_BYTES : 0;
        bytes += (flags & ATOMIC_ETH) != 0 ? ATOMIC_ETH_BYTES : 0;
        bytes += (flags & ATOMIC_ACK_ETH) != 0 ? ATOMIC_ACK_ETH_BYTES : 0;
        bytes += (flags & IMM_DT) != 0 ? IMM_DT_BYTES : 0;
        bytes += (flags & IETH) != 0 ? IETH_BYTES : 0;
        bytes += (flags & DETH) != 0 ? DETH_BYTES : 0;
        bytes += (flags & CNP_RESERVED) != 0 ? CNP_RESERVED_BYTES : 0;
        EXT_HEADER_BYTES[op] = (byte) bytes;
    }

    private Opcode() {}

    private static int flags(int op) {
        return (op & ~0xFF) == 0 ? FLAGS[op] : 0;
    }

    /** True for the opcodes this codec knows: RC, UC, UD as listed here, and CNP. */
    public static boolean isValid(int op) {
        return (flags(op) & VALID) != 0;
    }

    public static boolean hasReth(int op) {
        return (flags(op) & RETH) != 0;
    }

    public static boolean hasAeth(int op) {
        return (flags(op) & AETH) != 0;
    }

    public static boolean hasAtomicEth(int op) {
        return (flags(op) & ATOMIC_ETH) != 0;
    }

    public static boolean hasAtomicAckEth(int op) {
        return (flags(op) & ATOMIC_ACK_ETH) != 0;
    }

    public static boolean hasImmDt(int op) {
        return (flags(op) & IMM_DT) != 0;
    }

    public static boolean hasIeth(int op) {
        return (flags(op) & IETH) != 0;
    }

    /** True for UD opcodes, which carry a datagram extended transport header. */
    public static boolean hasDeth(int op) {
        return (flags(op) & DETH) != 0;
    }

    /** True if the opcode may carry a data payload (possibly empty). */
    public static boolean hasPayload(int op) {
        return (flags(op) & PAYLOAD) != 0;
    }

    /** True for the RoCEv2 CNP, whose BTH is followed by 16 reserved bytes. */
    public static boolean isCnp(int op) {
        return (flags(op) & CNP_RESERVED) != 0;
    }

    /** Bytes of extension headers between the BTH and the payload; 0 for an unknown opcode. */
    public static int extensionHeaderBytes(int op) {
        return (op & ~0xFF) == 0 ? EXT_HEADER_BYTES[op] : 0;
    }

    /**
     * The name Wireshark shows for the opcode, e.g. {@code "RC RDMA Write Only Immediate"}, or
     * {@code "Unknown (0x15)"} for an opcode this codec does not know.
     */
    public static String name(int op) {
        if (isValid(op)) {
            return NAMES[op];
        }
        return "Unknown (0x" + Integer.toHexString(op) + ")";
    }
}
