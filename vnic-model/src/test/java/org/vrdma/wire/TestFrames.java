package org.vrdma.wire;

/** Headers the codec tests share: one host pair on 10.0.0.0/24, QP 0x11. */
final class TestFrames {
    private TestFrames() {}

    /** Ethernet, IPv4 and UDP of a RoCEv2 frame from 10.0.0.1 to 10.0.0.2, with {@code opcode} to QP 0x11. */
    static RoceHeaders toQp11(int opcode, int psn) {
        RoceHeaders h = new RoceHeaders();
        h.dstMac = 0x020000000002L;
        h.srcMac = 0x020000000001L;
        h.srcIp = 0x0A000001;
        h.dstIp = 0x0A000002;
        h.udpSrcPort = 49152;
        h.opcode = opcode;
        h.destQp = 0x11;
        h.psn = psn;
        return h;
    }

    /** An RDMA WRITE only of {@code lengthBytes} to {@code va}, rkey 0x42. */
    static RoceHeaders rdmaWriteOnly(int psn, long va, int lengthBytes) {
        RoceHeaders h = toQp11(Opcode.RC_RDMA_WRITE_ONLY, psn);
        h.rethVa = va;
        h.rethRkey = 0x42;
        h.rethDmaLengthBytes = lengthBytes;
        return h;
    }
}
