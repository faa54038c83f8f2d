package org.vrdma.cc.switching;

import java.util.random.RandomGenerator;

/**
 * What an egress queue does with an arriving packet: tail drop when the buffer is full, otherwise
 * enqueue, with the CE mark if the packet is ECN-capable and {@link RedEcnMarker} says so.
 */
public final class EgressAdmission {
    /** The packet is dropped. */
    public static final int DROP = 0;

    /** The packet is queued unchanged. */
    public static final int ENQUEUE = 1;

    /** The packet is queued with its ECN field set to CE. */
    public static final int ENQUEUE_CE = 2;

    private final TailDrop tailDrop;
    private final RedEcnMarker marker;

    /**
     * @param tailDrop the buffer limit
     * @param marker ECN marking, or null for a queue that never marks
     */
    public EgressAdmission(final TailDrop tailDrop, final RedEcnMarker marker) {
        this.tailDrop = tailDrop;
        this.marker = marker;
    }

    /**
     * Decides the fate of a packet that finds {@code queueBytes} queued.
     *
     * @param ecnCapable whether the packet is ECT(0)/ECT(1) (or already CE)
     * @return {@link #DROP}, {@link #ENQUEUE} or {@link #ENQUEUE_CE}
     */
    public int onArrival(
            final long queueBytes, final int packetBytes, final boolean ecnCapable, final RandomGenerator random) {
        return decide(tailDrop.bufferBytes(), marker, queueBytes, packetBytes, ecnCapable, random);
    }

    /**
     * {@link #onArrival} of an admission with a buffer of {@code bufferBytes} and {@code marker}
     * (or null), for a caller that keeps the two itself: an egress queue on a per-packet path then
     * reads its own fields instead of two more objects.
     */
    public static int decide(
            final long bufferBytes,
            final RedEcnMarker marker,
            final long queueBytes,
            final int packetBytes,
            final boolean ecnCapable,
            final RandomGenerator random) {
        if (!TailDrop.admits(bufferBytes, queueBytes, packetBytes)) {
            return DROP;
        }
        if (ecnCapable && marker != null && marker.shouldMark(queueBytes, random)) {
            return ENQUEUE_CE;
        }
        return ENQUEUE;
    }

    /** The buffer limit. */
    public TailDrop tailDrop() {
        return tailDrop;
    }

    /** The ECN marker, or null. */
    public RedEcnMarker marker() {
        return marker;
    }
}
