package org.vrdma.harness.lab.virtual;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EgressPort;
import org.vrdma.vswitch.pipeline.InnerFrame;
import org.vrdma.vswitch.pipeline.IntOption;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.vswitch.wire.GeneveCodec;
import org.vrdma.vswitch.wire.GeneveHeader;

/**
 * A fabric port on tagged frames behaves exactly as the vswitch egress port it models: the same
 * frames offered at the same times leave at the same times, in the same order, with the same
 * bytes (CE marks), and the same ones are dropped, marked, lost and duplicated.
 */
class FabricPortTest {
    private static final int HOST_BASE = 0x0A80_0001;

    @Test
    void departsAsTheEgressPortDoesUnderCongestionEcnAndFaults() {
        EgressConfig config = EgressConfig.of(40_000_000_000L, 60_000)
                .withEcn(new RedEcnMarker(10_000, 40_000, 0.5))
                .withDataFaults(FaultConfig.randomLoss(0.02)
                        .withDuplicates(0.02)
                        .withReordering(0.05, 3_000)
                        .withDelay(0, 200))
                .withControlFaults(FaultConfig.randomLoss(0.05));
        List<String> viaEgress = new ArrayList<>();
        List<String> viaFabric = new ArrayList<>();

        VirtualTimeScheduler a = new VirtualTimeScheduler(9);
        EgressPort egress =
                new EgressPort("s:p0", a, config, a.randoms(), UnderlayPort.OUTER_HEADERS_BYTES, (frame, nowNs) -> {
                    viaEgress.add(describe(frame, nowNs));
                    frame.release();
                });
        offerAll(a, egress::offer);

        VirtualTimeScheduler b = new VirtualTimeScheduler(9);
        InnerFrame peek = new InnerFrame();
        FabricPort fabric = new FabricPort("s:p0", b, config, b.randoms(), 0);
        fabric.connect((frame, tag, nowNs) -> {
            assertThat(tag).isEqualTo(FrameTag.read(frame, HOST_BASE, peek));
            viaFabric.add(describe(frame, nowNs));
            frame.release();
        });
        offerAll(b, frame -> fabric.offer(frame, FrameTag.read(frame, HOST_BASE, peek)));

        assertThat(viaEgress).hasSizeGreaterThan(1500);
        assertThat(viaFabric).containsExactlyElementsOf(viaEgress);
        assertThat(fabric.bufferDrops()).isEqualTo(egress.bufferDrops()).isPositive();
        assertThat(fabric.ecnMarked()).isEqualTo(egress.ecnMarked()).isPositive();
        assertThat(fabric.dataLost()).isEqualTo(egress.dataLost()).isPositive();
        assertThat(fabric.controlLost()).isEqualTo(egress.controlLost()).isPositive();
        assertThat(fabric.txPackets()).isEqualTo(egress.txPackets());
    }

    /**
     * Without faults a fabric port accounts departures lazily and schedules only the arrivals at
     * the far end: an egress port followed by a wire of the same propagation delay gives the same
     * arrivals, marks, INT records (departure time, queue left behind, bytes sent), drops and
     * counts.
     */
    @Test
    void withoutFaultsArrivesAsAnEgressPortAndAWire() {
        for (long delayNs : new long[] {0, 30_000}) {
            EgressConfig config =
                    EgressConfig.of(40_000_000_000L, 60_000).withEcn(new RedEcnMarker(10_000, 40_000, 0.5));
            List<String> viaEgress = new ArrayList<>();
            List<String> viaFabric = new ArrayList<>();

            VirtualTimeScheduler a = new VirtualTimeScheduler(9);
            Wire wire = new Wire(a, delayNs);
            wire.connect((frame, tag, nowNs) -> {
                viaEgress.add(describe(frame, nowNs));
                frame.release();
            });
            EgressPort egress = new EgressPort("s:p0", a, config, a.randoms(), UnderlayPort.OUTER_HEADERS_BYTES, wire);
            offerAll(a, egress::offer, true);

            VirtualTimeScheduler b = new VirtualTimeScheduler(9);
            InnerFrame peek = new InnerFrame();
            FabricPort fabric = new FabricPort("s:p0", b, config, b.randoms(), delayNs);
            fabric.connect((frame, tag, nowNs) -> {
                assertThat(tag).isEqualTo(FrameTag.read(frame, HOST_BASE, peek));
                viaFabric.add(describe(frame, nowNs));
                frame.release();
            });
            offerAll(b, frame -> fabric.offer(frame, FrameTag.read(frame, HOST_BASE, peek)), true);

            assertThat(viaEgress).as("delay %d ns", delayNs).hasSizeGreaterThan(1500);
            assertThat(viaFabric).as("delay %d ns", delayNs).containsExactlyElementsOf(viaEgress);
            assertThat(fabric.bufferDrops()).isEqualTo(egress.bufferDrops()).isPositive();
            assertThat(fabric.ecnMarked()).isEqualTo(egress.ecnMarked()).isPositive();
            assertThat(fabric.txPackets()).isEqualTo(egress.txPackets());
            assertThat(fabric.queuedBytes()).isZero();
            assertThat(egress.intStamped()).as("INT records compared").isGreaterThan(500);
            if (delayNs > 0) {
                assertThat(b.eventsFired())
                        .as("one event per packet (and per offer), not two")
                        .isLessThan(a.eventsFired() - 1000);
            }
        }
    }

    @Test
    void tagsCarryWhatTheHeadersSay() {
        ByteBuf frame = frame(7, 0xC123, 2, 0x0A, 1200);
        long tag = FrameTag.read(frame, HOST_BASE, new InnerFrame());
        assertThat(FrameTag.bytes(tag)).isEqualTo(frame.readableBytes());
        assertThat(FrameTag.host(tag)).isEqualTo(7);
        assertThat(FrameTag.sourcePort(tag)).isEqualTo(0xC123);
        assertThat(FrameTag.ecn(tag)).isEqualTo(2);
        assertThat(FrameTag.control(tag)).isFalse();
        assertThat(FrameTag.ipOffset(tag)).isEqualTo(UnderlayPort.OUTER_HEADERS_BYTES + 8 + 14);
        assertThat(FrameTag.ipHeaderBytes(tag)).isEqualTo(20);
        assertThat(FrameTag.mayCarryOptions(tag)).as("no Geneve options").isFalse();
        ByteBuf ack = frame(1, 1, 2, 0x11, 0);
        assertThat(FrameTag.control(FrameTag.read(ack, HOST_BASE, new InnerFrame())))
                .as("an ACK")
                .isTrue();
        ack.release();
        ByteBuf notIpv4 = frame(1, 1, 2, 0x0A, 0);
        notIpv4.setShort(12, 0x86DD);
        assertThat(FrameTag.read(notIpv4, HOST_BASE, new InnerFrame())).isEqualTo(FrameTag.MALFORMED);
        VirtualTimeScheduler s = new VirtualTimeScheduler(1);
        FabricPort port = new FabricPort("s:p0", s, EgressConfig.of(1_000_000_000L, 10_000), s.randoms(), 1_000);
        List<ByteBuf> arrived = new ArrayList<>();
        port.connect((f, t, nowNs) -> arrived.add(f));
        ByteBuf bad = notIpv4.retain();
        port.offer(bad, FrameTag.MALFORMED);
        s.runUntilIdle(100);
        assertThat(port.malformedDrops()).isEqualTo(1);
        assertThat(port.txPackets()).isZero();
        assertThat(arrived).isEmpty();
        assertThat(bad.refCnt()).as("released once").isEqualTo(1);
        frame.release();
        notIpv4.release();
    }

    /** Arrival time, length and headers (where CE marks and INT records are). */
    private static String describe(ByteBuf frame, long nowNs) {
        return nowNs + " " + frame.readableBytes() + " "
                + ByteBufUtil.hexDump(frame, frame.readerIndex(), Math.min(160, frame.readableBytes()));
    }

    /** 2000 frames from 8 flows (data and ACKs, ECT and not), offered in bursts faster than the link. */
    private static void offerAll(VirtualTimeScheduler s, java.util.function.Consumer<ByteBuf> port) {
        offerAll(s, port, false);
    }

    /** As above; with {@code intEvery}, every other frame carries an INT option with room for two hops. */
    private static void offerAll(VirtualTimeScheduler s, java.util.function.Consumer<ByteBuf> port, boolean intEvery) {
        SplittableRandom r = new SplittableRandom(5);
        long t = 0;
        for (int i = 0; i < 2000; i++) {
            t += r.nextInt(4) == 0 ? r.nextInt(2_000) : 0;
            boolean ack = r.nextInt(5) == 0;
            ByteBuf f = frame(
                    r.nextInt(8),
                    0xC000 + r.nextInt(8),
                    r.nextInt(6) == 0 ? 0 : 2,
                    ack ? 0x11 : 0x0A,
                    ack ? 0 : 1 + r.nextInt(4096),
                    intEvery && i % 2 == 0);
            s.scheduleAt(t, (now, id) -> port.accept(f));
        }
        s.runUntilIdle(1_000_000);
    }

    /** An underlay frame: outer Ethernet/IPv4/UDP to host {@code host}, Geneve, inner RoCEv2 with {@code payload} bytes. */
    private static ByteBuf frame(int host, int sourcePort, int ecn, int opcode, int payload) {
        return frame(host, sourcePort, ecn, opcode, payload, false);
    }

    private static ByteBuf frame(int host, int sourcePort, int ecn, int opcode, int payload, boolean withInt) {
        ByteBuf b = Unpooled.directBuffer();
        b.writeZero(12).writeShort(0x0800); // outer Ethernet
        b.writeByte(0x45)
                .writeByte(0)
                .writeShort(0)
                .writeZero(4)
                .writeByte(64)
                .writeByte(17)
                .writeShort(0);
        b.writeInt(HOST_BASE - 1).writeInt(HOST_BASE + host); // outer IPv4
        b.writeShort(sourcePort).writeShort(6081).writeShort(0).writeShort(0); // outer UDP
        if (withInt) {
            GeneveHeader g = new GeneveHeader();
            g.protocolType = GeneveHeader.PROTOCOL_ETHERNET;
            g.vni = 100;
            IntOption.reserve(g, 2);
            GeneveCodec.encode(g, b);
        } else {
            b.writeByte(0).writeByte(0).writeShort(0x6558).writeInt(100 << 8); // Geneve, no options
        }
        b.writeZero(12).writeShort(0x0800); // inner Ethernet
        int ip = b.writerIndex();
        b.writeByte(0x45).writeByte(ecn).writeShort(20 + 8 + 12 + payload + 4).writeZero(4);
        b.writeByte(64).writeByte(17).writeShort(0).writeInt(0x0A000001).writeInt(0x0A000002);
        b.writeShort(0xC000).writeShort(4791).writeShort(8 + 12 + payload + 4).writeShort(0); // inner UDP
        b.writeByte(opcode).writeZero(11); // BTH
        b.writeZero(payload + 4);
        b.setShort(ip + 10, org.vrdma.wire.Ipv4UdpCodec.ipv4Checksum(b, ip, 20));
        return b;
    }
}
