package org.vrdma.vnic.transport;

/**
 * Counters of a queue pair or a device, like {@code ibv_devinfo} port counters and the hw_counters
 * of RDMA NICs. Plain long fields, incremented by the engine's thread without allocation; read them
 * from other threads only through {@link #snapshot()} taken on the engine's thread.
 */
public final class TransportCounters {
    public long txPackets;
    public long txBytes;
    public long rxPackets;
    public long rxBytes;
    /** ACK/NAK packets sent and received (included in the packet counts). */
    public long txAcks;

    public long rxAcks;
    /** Packets sent again: go-back-N resends, selective resends, READ re-requests. */
    public long retransmittedPackets;
    /** Retransmission timer expiries. */
    public long timeouts;
    /**
     * Timeouts found spurious: the one packet resent had arrived (its ACK came first, then the
     * duplicate ACK for the resent copy); their back-off and congestion reaction were undone.
     */
    public long spuriousTimeouts;
    /** Tail-loss probes: resends after two round trips without progress, before the RTO. */
    public long tailProbes;

    public long seqNaksSent;
    public long seqNaksReceived;
    public long rnrNaksSent;
    public long rnrNaksReceived;
    public long accessNaksSent;
    public long accessNaksReceived;
    public long invalidRequestNaksSent;
    public long invalidRequestNaksReceived;
    public long remoteOpNaksSent;
    public long remoteOpNaksReceived;
    /** Requests the responder had already executed (re-ACKed, READ re-executed, atomic replayed). */
    public long duplicateRequests;
    /** Requests that arrived beyond the expected PSN. */
    public long outOfSequence;
    /** Selective repeat: WRITE packets placed out of order. */
    public long outOfOrderPlaced;

    public long cnpsSent;
    public long cnpsReceived;
    /** Packets that arrived with the CE mark. */
    public long ecnMarked;
    /** Packets dropped: malformed, unknown QP, foreign source, wrong state, Q_Key mismatch, stale. */
    public long droppedPackets;
    /** UD datagrams dropped because no receive was posted. */
    public long udNoReceiveDrops;
    /** Accesses to registered memory that failed (EFAULT), answered with an error completion or NAK. */
    public long localMemoryFaults;
    /**
     * UC messages the responder dropped: a lost packet (PSN gap), no receive posted, a bad rkey or
     * length; UC has no ACKs, so the sender never learns.
     */
    public long ucDroppedMessages;

    /** A copy of the current values. */
    public TransportCounters snapshot() {
        final TransportCounters c = new TransportCounters();
        addTo(c);
        return c;
    }

    /** Adds every counter of this to {@code sum}. */
    public void addTo(final TransportCounters sum) {
        accumulate(sum, 1);
    }

    /** What was counted since {@code earlier}, a snapshot of the same counters. */
    public TransportCounters since(final TransportCounters earlier) {
        final TransportCounters delta = snapshot();
        earlier.accumulate(delta, -1);
        return delta;
    }

    private void accumulate(final TransportCounters sum, final int sign) {
        sum.txPackets += sign * txPackets;
        sum.txBytes += sign * txBytes;
        sum.rxPackets += sign * rxPackets;
        sum.rxBytes += sign * rxBytes;
        sum.txAcks += sign * txAcks;
        sum.rxAcks += sign * rxAcks;
        sum.retransmittedPackets += sign * retransmittedPackets;
        sum.timeouts += sign * timeouts;
        sum.spuriousTimeouts += sign * spuriousTimeouts;
        sum.tailProbes += sign * tailProbes;
        sum.seqNaksSent += sign * seqNaksSent;
        sum.seqNaksReceived += sign * seqNaksReceived;
        sum.rnrNaksSent += sign * rnrNaksSent;
        sum.rnrNaksReceived += sign * rnrNaksReceived;
        sum.accessNaksSent += sign * accessNaksSent;
        sum.accessNaksReceived += sign * accessNaksReceived;
        sum.invalidRequestNaksSent += sign * invalidRequestNaksSent;
        sum.invalidRequestNaksReceived += sign * invalidRequestNaksReceived;
        sum.remoteOpNaksSent += sign * remoteOpNaksSent;
        sum.remoteOpNaksReceived += sign * remoteOpNaksReceived;
        sum.duplicateRequests += sign * duplicateRequests;
        sum.outOfSequence += sign * outOfSequence;
        sum.outOfOrderPlaced += sign * outOfOrderPlaced;
        sum.cnpsSent += sign * cnpsSent;
        sum.cnpsReceived += sign * cnpsReceived;
        sum.ecnMarked += sign * ecnMarked;
        sum.droppedPackets += sign * droppedPackets;
        sum.udNoReceiveDrops += sign * udNoReceiveDrops;
        sum.localMemoryFaults += sign * localMemoryFaults;
        sum.ucDroppedMessages += sign * ucDroppedMessages;
    }

    @Override
    public String toString() {
        return "TransportCounters{tx=" + txPackets + "/" + txBytes + "B, rx=" + rxPackets + "/" + rxBytes
                + "B, acks=" + txAcks + "/" + rxAcks + ", retx=" + retransmittedPackets + ", timeouts=" + timeouts
                + ", spuriousTimeouts=" + spuriousTimeouts
                + ", tailProbes=" + tailProbes
                + ", seqNak=" + seqNaksSent + "/" + seqNaksReceived + ", rnrNak=" + rnrNaksSent + "/" + rnrNaksReceived
                + ", accessNak=" + accessNaksSent + "/" + accessNaksReceived + ", invReqNak=" + invalidRequestNaksSent
                + "/" + invalidRequestNaksReceived + ", dup=" + duplicateRequests + ", oos=" + outOfSequence
                + ", oooPlaced=" + outOfOrderPlaced + ", cnp=" + cnpsSent + "/" + cnpsReceived + ", ce=" + ecnMarked
                + ", dropped=" + droppedPackets + ", ucDropped=" + ucDroppedMessages + '}';
    }
}
