package org.vrdma.wire;

import java.util.SplittableRandom;

/** Test data: random header values within each field's width, for the headers an opcode has. */
final class RoceFrames {
    /** Every opcode the codec knows. */
    static final int[] VALID_OPCODES = validOpcodes();

    /** Indexes (from the frame start) of the bytes the ICRC masks or the IP checksum alone covers. */
    static final int[] VARIANT_BYTE_INDEXES = {15, 22, 24, 25, 40, 41, 46};

    private RoceFrames() {}

    private static int[] validOpcodes() {
        int n = 0;
        for (int op = 0; op < 256; op++) {
            n += Opcode.isValid(op) ? 1 : 0;
        }
        int[] ops = new int[n];
        n = 0;
        for (int op = 0; op < 256; op++) {
            if (Opcode.isValid(op)) {
                ops[n++] = op;
            }
        }
        return ops;
    }

    static RoceHeaders randomHeaders(int opcode, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        RoceHeaders h = new RoceHeaders();
        h.dstMac = r.nextLong() & 0xFFFF_FFFF_FFFFL;
        h.srcMac = r.nextLong() & 0xFFFF_FFFF_FFFFL;
        h.srcIp = r.nextInt();
        h.dstIp = r.nextInt();
        h.dscp = r.nextInt(64);
        h.ecn = r.nextInt(4);
        h.ttl = r.nextInt(256);
        h.ipId = r.nextInt(1 << 16);
        h.udpSrcPort = r.nextInt(1 << 16);
        h.opcode = opcode;
        h.solicitedEvent = r.nextBoolean();
        h.migReq = r.nextBoolean();
        h.pkey = r.nextInt(1 << 16);
        h.fecn = r.nextBoolean();
        h.becn = r.nextBoolean();
        h.destQp = r.nextInt(1 << 24);
        h.ackRequest = r.nextBoolean();
        h.psn = r.nextInt(1 << 24);
        if (Opcode.hasReth(opcode)) {
            h.rethVa = r.nextLong();
            h.rethRkey = r.nextInt();
            h.rethDmaLengthBytes = r.nextInt();
        }
        if (Opcode.hasAeth(opcode)) {
            h.aethSyndrome = r.nextInt(256);
            h.aethMsn = r.nextInt(1 << 24);
        }
        if (Opcode.hasAtomicEth(opcode)) {
            h.atomicVa = r.nextLong();
            h.atomicRkey = r.nextInt();
            h.atomicSwapOrAdd = r.nextLong();
            h.atomicCompare = r.nextLong();
        }
        if (Opcode.hasAtomicAckEth(opcode)) {
            h.atomicAckOriginalData = r.nextLong();
        }
        if (Opcode.hasImmDt(opcode)) {
            h.immDt = r.nextInt();
        }
        if (Opcode.hasIeth(opcode)) {
            h.iethRkey = r.nextInt();
        }
        if (Opcode.hasDeth(opcode)) {
            h.dethQkey = r.nextInt();
            h.dethSrcQp = r.nextInt(1 << 24);
        }
        return h;
    }
}
