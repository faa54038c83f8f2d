package org.vrdma.vswitch.pipeline;

/**
 * Packet and byte counters with drops by {@link DropReason}, as plain long fields (written by the
 * switch's thread only; readers on other threads see eventually consistent values).
 */
public final class TrafficCounters {
    long txPackets;
    long txBytes;
    long rxPackets;
    long rxBytes;
    final long[] drops = new long[DropReason.COUNT];

    void onTx(int bytes) {
        txPackets++;
        txBytes += bytes;
    }

    void onRx(int bytes) {
        rxPackets++;
        rxBytes += bytes;
    }

    void onDrop(DropReason reason) {
        drops[reason.ordinal()]++;
    }

    public long txPackets() {
        return txPackets;
    }

    public long txBytes() {
        return txBytes;
    }

    public long rxPackets() {
        return rxPackets;
    }

    public long rxBytes() {
        return rxBytes;
    }

    public long drops(DropReason reason) {
        return drops[reason.ordinal()];
    }

    public long dropsTotal() {
        long sum = 0;
        for (long d : drops) {
            sum += d;
        }
        return sum;
    }
}
