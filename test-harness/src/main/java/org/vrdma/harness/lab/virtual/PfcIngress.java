package org.vrdma.harness.lab.virtual;

import org.vrdma.harness.lab.PfcSpec;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;

/**
 * Priority flow control at one fabric switch: ingress accounting of the lossless class (the only
 * class the labs carry) per ingress port, and the PAUSE frames it sends upstream.
 *
 * <p>A packet that arrives on ingress port {@code i} is charged to {@code i} until it leaves the
 * switch (the end of its serialisation at the egress port). While the port's shared use is below
 * its XOFF threshold (static, or dynamic: {@code alpha} times the shared buffer still free) the
 * packet is charged to it; above, to the port's headroom, and a packet that finds the headroom full
 * is dropped and counted (with enough headroom, never). At or above XOFF (or with anything in the
 * headroom) the port sends a PAUSE with {@link PfcSpec#quanta()} quanta to the link's other end,
 * which receives it after the link's propagation delay (the PAUSE is sent at once, ahead of
 * anything queued on the reverse direction) and stops its port after the frame it is serialising;
 * the PAUSE is sent again at half the pause time while XOFF holds, so the sender stays paused. When
 * the headroom is empty and the shared use has fallen to XON, a resume (a PAUSE of zero quanta)
 * follows the same way. Packets leave in charge order per egress port but not per ingress port, so
 * a departure takes from the headroom first, as in shared-buffer switches.
 *
 * <p>Allocates nothing per packet or per PAUSE once each link's small frame ring has grown.
 */
final class PfcIngress {
    private final TimerService timers;
    private final boolean dynamic;
    private final long xoffBytes;
    private final long xonBytes;
    private final long xonOffsetBytes;
    private final double alpha;
    private final long switchBufferBytes;
    private final int quanta;

    private int ports;
    private long[] sharedBytes = new long[0];
    private long[] headroomUsed = new long[0];
    private long[] headroomBytes = new long[0];
    /** Dynamic thresholds: each port's fraction of the free shared buffer. */
    private double[] alphas = new double[0];

    private boolean[] pausing = new boolean[0];
    private PauseLink[] links = new PauseLink[0];
    private long sharedTotal;
    private long headroomTotal;

    // Per ingress port.
    private long[] xoffSent = new long[0];
    private long[] xonSent = new long[0];
    private long[] maxBytes = new long[0];
    private long[] maxHeadroom = new long[0];
    private long[] headroomDrops = new long[0];

    PfcIngress(TimerService timers, PfcSpec spec) {
        this.timers = timers;
        this.dynamic = spec.isDynamic();
        this.xoffBytes = spec.xoff();
        this.xonBytes = spec.xon();
        this.xonOffsetBytes = spec.xonOffset();
        this.alpha = dynamic ? spec.alpha() : 0;
        this.switchBufferBytes = dynamic ? spec.switchBufferBytes() : 0;
        this.quanta = spec.quanta();
    }

    /** Adds ingress port {@code index} (the switch's port on the same link) with its headroom. */
    void addPort(int index, long headroom) {
        addPort(index, headroom, 1);
    }

    /**
     * Adds ingress port {@code index} with its headroom; with dynamic thresholds its alpha is the
     * lab's times {@code alphaScale} (a port faster than the hosts' links may take more of the buffer).
     */
    void addPort(int index, long headroom, double alphaScale) {
        if (index != ports) {
            throw new IllegalArgumentException("ports in order: " + index + " after " + ports);
        }
        ports++;
        sharedBytes = java.util.Arrays.copyOf(sharedBytes, ports);
        headroomUsed = java.util.Arrays.copyOf(headroomUsed, ports);
        headroomBytes = java.util.Arrays.copyOf(headroomBytes, ports);
        alphas = java.util.Arrays.copyOf(alphas, ports);
        alphas[index] = alpha * alphaScale;
        pausing = java.util.Arrays.copyOf(pausing, ports);
        links = java.util.Arrays.copyOf(links, ports);
        xoffSent = java.util.Arrays.copyOf(xoffSent, ports);
        xonSent = java.util.Arrays.copyOf(xonSent, ports);
        maxBytes = java.util.Arrays.copyOf(maxBytes, ports);
        maxHeadroom = java.util.Arrays.copyOf(maxHeadroom, ports);
        headroomDrops = java.util.Arrays.copyOf(headroomDrops, ports);
        headroomBytes[index] = headroom;
        headroomTotal += headroom;
    }

    /** The sender at the other end of ingress port {@code index}'s link, {@code delayNs} away. */
    void connect(int index, FabricPort upstream, long delayNs) {
        links[index] = new PauseLink(upstream, delayNs, index);
    }

    /** The XOFF threshold of ingress port {@code in} now. */
    private long threshold(int in) {
        if (!dynamic) {
            return xoffBytes;
        }
        long free = switchBufferBytes - headroomTotal - sharedTotal;
        return free <= 0 ? 0 : (long) (alphas[in] * free);
    }

    /**
     * Charges an arriving packet to its ingress port.
     *
     * @return false when the headroom is full: the packet is dropped (counted; the caller releases it)
     */
    boolean onArrival(int in, int bytes, long nowNs) {
        long shared = sharedBytes[in];
        if (shared + bytes <= threshold(in) && headroomUsed[in] == 0) {
            sharedBytes[in] = shared + bytes;
            sharedTotal += bytes;
        } else if (headroomUsed[in] + bytes <= headroomBytes[in]) {
            headroomUsed[in] += bytes;
            if (headroomUsed[in] > maxHeadroom[in]) {
                maxHeadroom[in] = headroomUsed[in];
            }
        } else {
            headroomDrops[in]++;
            return false;
        }
        long total = sharedBytes[in] + headroomUsed[in];
        if (total > maxBytes[in]) {
            maxBytes[in] = total;
        }
        if (!pausing[in] && (headroomUsed[in] > 0 || sharedBytes[in] >= threshold(in))) {
            pausing[in] = true;
            xoffSent[in]++;
            links[in].sendPause(quanta, nowNs);
        }
        return true;
    }

    /** A packet charged to ingress port {@code in} left the switch. */
    void onDeparture(int in, int bytes, long nowNs) {
        long fromHeadroom = Math.min(headroomUsed[in], bytes);
        headroomUsed[in] -= fromHeadroom;
        long fromShared = bytes - fromHeadroom;
        sharedBytes[in] -= fromShared;
        sharedTotal -= fromShared;
        if (pausing[in] && headroomUsed[in] == 0) {
            long shared = sharedBytes[in];
            boolean below = dynamic ? shared == 0 || shared + xonOffsetBytes <= threshold(in) : shared <= xonBytes;
            if (below) {
                pausing[in] = false;
                xonSent[in]++;
                links[in].sendPause(0, nowNs);
            }
        }
    }

    /** The refresh timer of a port's PAUSE fired: sends it again while XOFF holds. */
    private void onRefresh(int in, long nowNs) {
        if (pausing[in]) {
            xoffSent[in]++;
            links[in].sendPause(quanta, nowNs);
        }
    }

    long xoffSent(int in) {
        return xoffSent[in];
    }

    long xonSent(int in) {
        return xonSent[in];
    }

    long maxBytes(int in) {
        return maxBytes[in];
    }

    long maxHeadroom(int in) {
        return maxHeadroom[in];
    }

    long headroomDrops(int in) {
        return headroomDrops[in];
    }

    /** Bytes charged to ingress port {@code in} now (shared and headroom). */
    long bytes(int in) {
        return sharedBytes[in] + headroomUsed[in];
    }

    boolean pausing(int in) {
        return pausing[in];
    }

    int ports() {
        return ports;
    }

    void close() {
        for (PauseLink l : links) {
            if (l != null) {
                l.close();
            }
        }
    }

    /**
     * The PAUSE frames of one ingress port on their way to the sender: a ring of (arrival time,
     * quanta), one delivery timer, and the refresh timer of the XOFF in force.
     */
    private final class PauseLink implements TimerHandler {
        private final FabricPort upstream;
        private final long delayNs;
        private final int in;
        private final long refreshNs;
        private long[] arrivalNs = new long[4];
        private int[] frameQuanta = new int[4];
        private int head;
        private int count;
        private long deliveryTimer = TimerService.NO_TIMER;
        private long refreshTimer = TimerService.NO_TIMER;

        PauseLink(FabricPort upstream, long delayNs, int in) {
            this.upstream = upstream;
            this.delayNs = delayNs;
            this.in = in;
            this.refreshNs = Math.max(1, upstream.pauseNs(quanta) / 2);
        }

        void sendPause(int q, long nowNs) {
            if (count == arrivalNs.length) {
                grow();
            }
            int tail = (head + count) & (arrivalNs.length - 1);
            arrivalNs[tail] = nowNs + delayNs;
            frameQuanta[tail] = q;
            count++;
            if (deliveryTimer == TimerService.NO_TIMER) {
                deliveryTimer = timers.scheduleAt(arrivalNs[head], this);
            }
            timers.cancel(refreshTimer);
            refreshTimer = q == 0 ? TimerService.NO_TIMER : timers.scheduleAt(nowNs + refreshNs, this);
        }

        @Override
        public void onTimer(long nowNs, long timerId) {
            if (timerId == refreshTimer) {
                refreshTimer = TimerService.NO_TIMER;
                onRefresh(in, nowNs);
                return;
            }
            if (timerId != deliveryTimer) {
                return;
            }
            deliveryTimer = TimerService.NO_TIMER;
            while (count > 0 && arrivalNs[head] <= nowNs) {
                int q = frameQuanta[head];
                head = (head + 1) & (arrivalNs.length - 1);
                count--;
                upstream.onPause(q, nowNs);
            }
            if (count > 0) {
                deliveryTimer = timers.scheduleAt(arrivalNs[head], this);
            }
        }

        private void grow() {
            int n = arrivalNs.length;
            long[] a = new long[n * 2];
            int[] q = new int[n * 2];
            for (int i = 0; i < count; i++) {
                a[i] = arrivalNs[(head + i) & (n - 1)];
                q[i] = frameQuanta[(head + i) & (n - 1)];
            }
            arrivalNs = a;
            frameQuanta = q;
            head = 0;
        }

        void close() {
            timers.cancel(deliveryTimer);
            timers.cancel(refreshTimer);
            deliveryTimer = TimerService.NO_TIMER;
            refreshTimer = TimerService.NO_TIMER;
        }
    }
}
