package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FrameSink;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitch;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.runtime.SpinThenBlockStrategy;
import org.vrdma.wire.DecodeStatus;
import org.vrdma.wire.Opcode;
import org.vrdma.wire.RoceCodec;
import org.vrdma.wire.RoceHeaders;

/**
 * Two hosts in one JVM over real UDP on 127.0.0.1: 100 000 RoCEv2 frames of 4 KB payload cross the
 * Geneve overlay, each checked on arrival (ICRC, PSN order, payload bytes). Run once with GSO/GRO
 * where the kernel has them and once with plain datagrams; the path taken and the rate are
 * reported, not asserted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RealTimeOverlayTest {
    static final int FRAMES = 100_000;
    static final int PAYLOAD_BYTES = 4096;
    static final int WINDOW = 256;
    static final int VNI = 42;
    static final long MAC_A = 0x02_00_00_00_00_0AL;
    static final long MAC_B = 0x02_00_00_00_00_0BL;
    static final int IP_A = UnderlayAddress.parseIpv4("10.0.0.1");
    static final int IP_B = UnderlayAddress.parseIpv4("10.0.0.2");

    static EventLoopGroup group;
    static final NettyRuntime RUNTIME = NettyRuntime.best();
    static ResourceLeakDetector.Level leakLevel;

    @BeforeAll
    static void startLoops() {
        // Paranoid leak detection records a stack trace on nearly every buffer access, which turns a
        // throughput run into minutes; sampling still reports leaks here, the other tests stay paranoid.
        leakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
        group = RUNTIME.newEventLoopGroup(2, "overlay-test");
    }

    @AfterAll
    static void stopLoops() throws InterruptedException {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        ResourceLeakDetector.setLevel(leakLevel);
    }

    @Test
    void gsoAndGroWhereAvailable() throws Exception {
        Result r = run(RUNTIME, group, true, FRAMES);
        if (RUNTIME == NettyRuntime.EPOLL) {
            assertThat(r.gso).as("GSO on epoll").isTrue();
            assertThat(r.gsoSegments).as("datagrams sent in GSO batches").isPositive();
            assertThat(r.inPlace).as("frames sent from where they were built").isGreaterThan(FRAMES * 9L / 10);
            assertDirectReads(r);
        }
        report("gso+gro", r, RUNTIME);
    }

    /**
     * Frames built in the send arena that do not leave at once: the uplink drops, duplicates,
     * reorders and delays some of them, so their arena regions are abandoned while later frames are
     * built and sent around them. Every frame that arrives must still be intact.
     */
    @Test
    void framesHeldOrDroppedOnTheUplinkArriveIntact() throws Exception {
        FaultConfig faults = FaultConfig.randomLoss(0.02).withDuplicates(0.05).withReordering(0.05, 30_000);
        EgressConfig uplink = EgressConfig.DEFAULT.withDataFaults(faults);
        Result r = run(RUNTIME, group, true, FRAMES / 5, uplink);
        assertThat(r.delivered).as("delivered of %d", FRAMES / 5).isGreaterThan(FRAMES / 5 * 9L / 10);
        if (RUNTIME == NettyRuntime.EPOLL) {
            assertThat(r.inPlace).as("frames sent from where they were built").isPositive();
            assertThat(r.abandoned)
                    .as("arena regions of held or dropped frames")
                    .isPositive();
        }
        report("gso+gro, lossy uplink", r, RUNTIME);
    }

    @Test
    void plainDatagrams() throws Exception {
        Result r = run(RUNTIME, group, false, FRAMES);
        assertThat(r.gso).isFalse();
        assertThat(r.gro).isFalse();
        if (RUNTIME == NettyRuntime.EPOLL) {
            assertDirectReads(r);
        }
        report("plain", r, RUNTIME);
    }

    /**
     * The receiving ENI keeps every tenth frame while the rest stream in: a receive buffer is read
     * into again only once every datagram sliced from it was released, so the kept frames stay
     * intact (checked after the run), GRO reads or not.
     */
    @Test
    void framesKeptByTheReceiverStayIntactWhileLaterDatagramsAreRead() throws Exception {
        for (boolean offloads : new boolean[] {true, false}) {
            Receiver receiver = new Receiver(true, 10);
            Result r = run(RUNTIME, group, offloads, FRAMES / 5, null, receiver);
            assertThat(receiver.held).hasSizeGreaterThanOrEqualTo(FRAMES / 5 / 10 * 99 / 100);
            // Checked on the test thread: run() closed both hosts, which ordered the loop's writes.
            receiver.checkHeld();
            if (RUNTIME == NettyRuntime.EPOLL) {
                assertDirectReads(r);
            }
            report(offloads ? "gso+gro, every tenth frame kept" : "plain, every tenth frame kept", r, RUNTIME);
        }
    }

    /**
     * Busy-polling loops read the sockets themselves while they spin (no epoll between datagrams):
     * every frame still arrives. How many were read that way depends on whether the loops kept their
     * cores (a loop that loses it sleeps instead), so that is reported, not asserted.
     */
    @Test
    void busyPollingLoopsReadTheirSocketsDirectly() throws Exception {
        List<SpinThenBlockStrategy> strategies = new CopyOnWriteArrayList<>();
        EventLoopGroup spinning = RUNTIME.newEventLoopGroup(2, "overlay-spin", 200_000, strategies::add);
        try {
            Result r = run(RUNTIME, spinning, true, FRAMES / 5);
            if (RUNTIME == NettyRuntime.EPOLL) {
                assertDirectReads(r);
            }
            report("gso+gro, busy polling", r, RUNTIME);
            long direct = 0;
            long hits = 0;
            // run() closed both hosts on their loops, which orders the counters before these reads.
            for (SpinThenBlockStrategy s : strategies) {
                direct += s.directHits();
                hits += s.spinHits();
            }
            System.out.printf("busy polling: %d spins ended by a datagram, %d of them read directly%n", hits, direct);
            assertThat(direct).isLessThanOrEqualTo(hits);
        } finally {
            spinning.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void nioFallback() throws Exception {
        EventLoopGroup nio = NettyRuntime.NIO.newEventLoopGroup(2, "overlay-nio");
        try {
            Result r = run(NettyRuntime.NIO, nio, true, FRAMES / 5);
            assertThat(r.gso).as("no GSO on NIO").isFalse();
            assertThat(r.gro).as("no GRO on NIO").isFalse();
            assertThat(r.directReads).as("the NIO channel reads itself").isFalse();
            report("nio fallback", r, NettyRuntime.NIO);
        } finally {
            nio.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    record Result(
            boolean gso,
            boolean gro,
            long delivered,
            long lost,
            long elapsedNs,
            long innerBytes,
            long gsoSegments,
            long groCoalesced,
            long datagramsReceived,
            long inPlace,
            long abandoned,
            boolean directReads,
            long receiveCalls,
            long receiveErrors) {}

    /** On epoll the socket is read with recvmmsg, several datagrams (or GRO reads) per call. */
    private static void assertDirectReads(Result r) {
        assertThat(r.directReads).as("recvmmsg reads on epoll").isTrue();
        assertThat(r.receiveErrors).as("failed or truncated reads").isZero();
        assertThat(r.receiveCalls).as("recvmmsg calls").isPositive().isLessThan(r.datagramsReceived);
    }

    private static void report(String mode, Result r, NettyRuntime runtime) {
        double seconds = r.elapsedNs / 1e9;
        System.out.printf(
                "real-time overlay [%s, %s]: gso=%s gro=%s delivered=%d lost=%d in %.3f s: %.0f frames/s, %.2f Gbit/s"
                        + " inner; GSO segments %d (sent in place %d, arena regions abandoned %d),"
                        + " GRO-coalesced datagrams received %d of %d; recvmmsg calls %d%n",
                mode,
                runtime,
                r.gso,
                r.gro,
                r.delivered,
                r.lost,
                seconds,
                r.delivered / seconds,
                r.innerBytes * 8 / seconds / 1e9,
                r.gsoSegments,
                r.inPlace,
                r.abandoned,
                r.groCoalesced,
                r.datagramsReceived,
                r.receiveCalls);
    }

    private Result run(NettyRuntime runtime, EventLoopGroup loops, boolean offloads, int frames) throws Exception {
        return run(runtime, loops, offloads, frames, null);
    }

    private Result run(NettyRuntime runtime, EventLoopGroup loops, boolean offloads, int frames, EgressConfig uplink)
            throws Exception {
        return run(runtime, loops, offloads, frames, uplink, new Receiver(uplink == null, 0));
    }

    private Result run(
            NettyRuntime runtime,
            EventLoopGroup loops,
            boolean offloads,
            int frames,
            EgressConfig uplink,
            Receiver receiver)
            throws Exception {
        VSwitchHost a = VSwitchHost.start(
                loops, runtime, VSwitchHost.Options.loopback("a").withOffloads(offloads, offloads));
        VSwitchHost b = VSwitchHost.start(
                loops, runtime, VSwitchHost.Options.loopback("b").withOffloads(offloads, offloads));
        try {
            a.call(vs -> vs.addEni(
                    new EniConfig(1, MAC_A, IP_A, VNI, true, sg(), qos(), qos()),
                    FrameSink.class.cast((FrameSink) (f, t) -> f.release())));
            b.call(vs -> vs.addEni(new EniConfig(1, MAC_B, IP_B, VNI, true, sg(), qos(), qos()), receiver));
            a.call(vs -> {
                vs.addRemoteRoute(VNI, IP_B, b.underlayAddress());
                if (uplink != null) {
                    vs.setUplink(uplink);
                }
                return null;
            });
            b.call(vs -> {
                vs.addRemoteRoute(VNI, IP_A, a.underlayAddress());
                return null;
            });

            Sender sender = new Sender(a, receiver, frames);
            long start = System.nanoTime();
            a.eventLoop().execute(sender);
            assertThat(sender.done.await(90, TimeUnit.SECONDS))
                    .as("sent %d, delivered %d", sender.sent, receiver.delivered.get())
                    .isTrue();
            if (uplink == null) {
                // The sender counts frames as lost after 200 ms without progress (a loop descheduled
                // on a loaded machine); the ones only late arrive now.
                receiver.awaitAll(frames, 5, TimeUnit.SECONDS);
            }
            long elapsed = receiver.lastNs.get() - start;
            assertThat(receiver.error.get()).isNull();
            long delivered = receiver.delivered.get();
            if (uplink == null) {
                // Plain UDP under the overlay: a receiving loop that loses its core for long enough
                // lets the socket's buffer overflow (seen with NIO at load average 25), and the kernel
                // counts those drops on the socket. Every frame must be delivered or counted there.
                long socketDrops = UdpSocketDrops.of(UnderlayAddress.port(b.underlayAddress()));
                assertThat(delivered + socketDrops)
                        .as("delivered %d + dropped by the receiving socket %d, of %d", delivered, socketDrops, frames)
                        .isGreaterThanOrEqualTo(frames * 99L / 100);
                assertThat(delivered).as("delivered of %d", frames).isGreaterThanOrEqualTo(frames / 2);
            }
            long drops = b.call(vs -> vs.counters().dropsTotal());
            assertThat(drops).as("drops at the receiving switch").isZero();
            return new Result(
                    a.gsoActive(),
                    b.groActive(),
                    delivered,
                    frames - delivered,
                    elapsed,
                    receiver.bytes.get(),
                    a.call(vs -> a.underlay().gsoSegments()),
                    b.call(vs -> b.underlay().groCoalescedDatagrams()),
                    b.call(vs -> b.underlay().datagramsReceived()),
                    a.call(vs -> a.underlay().inPlaceDatagrams()),
                    a.call(vs -> a.underlay().abandonedReservations()),
                    b.call(vs -> b.underlay().directReads()),
                    b.call(vs -> b.underlay().receiveCalls()),
                    b.call(vs -> b.underlay().receiveErrors()));
        } finally {
            a.close();
            b.close();
        }
    }

    private static org.vrdma.vswitch.pipeline.SecurityGroup sg() {
        return org.vrdma.vswitch.pipeline.SecurityGroup.ALLOW_ALL;
    }

    private static org.vrdma.vswitch.qos.QosConfig qos() {
        return org.vrdma.vswitch.qos.QosConfig.UNLIMITED;
    }

    /** Builds frames on A's loop, at most WINDOW ahead of what B has received. */
    static final class Sender implements Runnable {
        final CountDownLatch done = new CountDownLatch(1);
        final VSwitchHost host;
        final Receiver receiver;
        final RoceCodec codec = new RoceCodec();
        final RoceHeaders h = new RoceHeaders();
        final ByteBuf payload = Unpooled.directBuffer(PAYLOAD_BYTES);
        final int frames;
        int sent;
        long lost;
        long lastProgressNs = System.nanoTime();
        long lastDelivered;

        Sender(VSwitchHost host, Receiver receiver, int frames) {
            this.host = host;
            this.frames = frames;
            this.receiver = receiver;
            payload.writeZero(PAYLOAD_BYTES);
            for (int i = 4; i < PAYLOAD_BYTES; i++) {
                payload.setByte(i, i * 7);
            }
            h.srcMac = MAC_A;
            h.dstMac = MAC_B;
            h.srcIp = IP_A;
            h.dstIp = IP_B;
            h.udpSrcPort = 50000;
            h.opcode = Opcode.RC_SEND_ONLY;
            h.destQp = 5;
        }

        @Override
        public void run() {
            VSwitch vs = host.vswitch();
            long delivered = receiver.delivered.get();
            long now = System.nanoTime();
            if (delivered != lastDelivered) {
                lastDelivered = delivered;
                lastProgressNs = now;
            } else if (sent - delivered - lost > 0 && now - lastProgressNs > 200_000_000L) {
                // Nothing arrived for 200 ms: what is in flight was lost.
                lost = sent - delivered;
                lastProgressNs = now;
            }
            int budget = 64;
            while (sent < frames && sent - delivered - lost < WINDOW && budget-- > 0) {
                ByteBuf frame = host.underlay()
                        .frameAllocator()
                        .directBuffer(vs.encapsulationHeadroomBytes() + RoceCodec.frameLength(h, PAYLOAD_BYTES));
                frame.writerIndex(vs.encapsulationHeadroomBytes()).readerIndex(vs.encapsulationHeadroomBytes());
                h.psn = sent & 0xFFFFFF;
                payload.setInt(0, sent);
                codec.encode(h, payload, frame);
                vs.onEniFrame(1, frame);
                sent++;
            }
            if (sent == frames && receiver.delivered.get() + lost >= frames) {
                payload.release();
                done.countDown();
                return;
            }
            if (sent == frames && now - lastProgressNs > 1_000_000_000L) {
                payload.release();
                done.countDown();
                return;
            }
            if (sent - receiver.delivered.get() - lost >= WINDOW) {
                // Window full: look again shortly instead of spinning on the loop.
                host.eventLoop().schedule(this, 20, TimeUnit.MICROSECONDS);
            } else {
                host.eventLoop().execute(this);
            }
        }
    }

    /** Checks every frame B delivers: valid RoCE (ICRC), PSNs increasing, payload as sent. */
    static final class Receiver implements FrameSink {
        final AtomicLong delivered = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong lastNs = new AtomicLong();
        final AtomicReference<String> error = new AtomicReference<>();
        final RoceCodec codec = new RoceCodec();
        final RoceHeaders h = new RoceHeaders();
        /** The payload every frame must carry; a wrapped array, so no pooled or tracked memory to release. */
        final ByteBuf expected = Unpooled.wrappedBuffer(new byte[PAYLOAD_BYTES]);

        final boolean inOrder;
        /** Every this many frames is kept, not released, until {@link #checkHeld()}; 0 keeps none. */
        final int holdEvery;

        final List<ByteBuf> held = new java.util.ArrayList<>();
        final List<Integer> heldPsns = new java.util.ArrayList<>();
        final CountDownLatch allDelivered = new CountDownLatch(1);
        volatile long expectedFrames = Long.MAX_VALUE;

        /** Waits at most {@code timeout} for {@code frames} frames to have arrived. */
        void awaitAll(long frames, long timeout, TimeUnit unit) throws InterruptedException {
            expectedFrames = frames;
            if (delivered.get() < frames) {
                allDelivered.await(timeout, unit);
            }
        }

        int lastPsn = -1;

        Receiver(boolean inOrder, int holdEvery) {
            this.inOrder = inOrder;
            this.holdEvery = holdEvery;
            for (int i = 4; i < PAYLOAD_BYTES; i++) {
                expected.setByte(i, i * 7);
            }
        }

        @Override
        public void onFrame(ByteBuf frame, long nowNs) {
            int start = frame.readerIndex();
            try {
                DecodeStatus s = codec.decode(frame, h);
                if (s != DecodeStatus.OK) {
                    error.compareAndSet(null, "decode " + s);
                    return;
                }
                if (frame.readableBytes() != RoceCodec.frameLength(h, PAYLOAD_BYTES)) {
                    // The sender pads datagrams to its GSO segment size; the switch trims RoCE frames.
                    error.compareAndSet(null, "frame of " + frame.readableBytes() + " bytes");
                }
                int seq = frame.getInt(h.payloadOffset);
                if (h.psn != (seq & 0xFFFFFF)
                        || (inOrder && h.psn <= lastPsn)
                        || h.payloadLengthBytes != PAYLOAD_BYTES) {
                    error.compareAndSet(null, "psn " + h.psn + " after " + lastPsn + ", seq " + seq);
                }
                lastPsn = h.psn;
                if (!ByteBufUtil.equals(frame, h.payloadOffset + 4, expected, 4, PAYLOAD_BYTES - 4)) {
                    error.compareAndSet(null, "payload differs at psn " + h.psn);
                }
                bytes.addAndGet(frame.readableBytes());
                lastNs.set(System.nanoTime());
                long n = delivered.incrementAndGet();
                if (holdEvery > 0 && n % holdEvery == 0) {
                    held.add(frame.retainedSlice(start, frame.writerIndex() - start));
                    heldPsns.add(h.psn);
                }
                if (n >= expectedFrames) {
                    allDelivered.countDown();
                }
            } finally {
                frame.release();
            }
        }

        /**
         * The kept frames, read again after all later datagrams: each must still hold its own PSN
         * and payload (its receive buffer was not read into while it was held). Releases them.
         */
        void checkHeld() {
            try {
                for (int i = 0; i < held.size(); i++) {
                    ByteBuf frame = held.get(i);
                    DecodeStatus s = codec.decode(frame, h);
                    assertThat(s).as("held frame decodes").isEqualTo(DecodeStatus.OK);
                    // A later datagram read into the same memory would be a valid frame of another PSN.
                    assertThat(h.psn).as("held frame %d's PSN", i).isEqualTo(heldPsns.get(i));
                    assertThat(frame.getInt(h.payloadOffset) & 0xFFFFFF).isEqualTo(h.psn);
                    assertThat(ByteBufUtil.equals(frame, h.payloadOffset + 4, expected, 4, PAYLOAD_BYTES - 4))
                            .as("held frame's payload, psn %d", h.psn)
                            .isTrue();
                }
            } finally {
                held.forEach(ByteBuf::release);
                held.clear();
                heldPsns.clear();
            }
        }
    }
}
