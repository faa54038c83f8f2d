package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.vswitch.wire.GeneveCodec;
import org.vrdma.vswitch.wire.GeneveHeader;
import org.vrdma.wire.Opcode;

/**
 * Random and mutated bytes into every input of the switch: nothing throws, every input is either
 * delivered or dropped and counted, and every buffer is released (the leak detector runs paranoid).
 */
class FuzzTest {
    static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    static final Endpoint A = Endpoint.of(0x02_00_00_00_00_01L, "10.0.0.1");
    static final Endpoint B = Endpoint.of(0x02_00_00_00_00_02L, "10.0.0.2");

    @Test
    void randomAndMutatedInputsAreCountedNeverThrownAndNeverLeaked() {
        Lab lab = new Lab(99);
        VSwitch a = lab.add(VSwitchConfig.of("a", HOST_A).withIntMaxHops(2));
        VSwitch b = lab.add(VSwitchConfig.of("b", HOST_B));
        Collector atA = new Collector(false);
        Collector atB = new Collector(false);
        a.addEni(EniConfig.of(1, A.mac(), "10.0.0.1", 7), atA);
        b.addEni(EniConfig.of(1, B.mac(), "10.0.0.2", 7), atB);
        a.addRemoteRoute(7, "10.0.0.2", HOST_B);
        b.addRemoteRoute(7, "10.0.0.1", HOST_A);

        SplittableRandom r = new SplittableRandom(1234);
        List<ByteBuf> inputs = new ArrayList<>();
        int n = 600;
        for (int i = 0; i < n; i++) {
            ByteBuf datagram = mutate(validDatagram(lab, i), r);
            inputs.add(datagram);
            b.onUnderlayDatagram(datagram, r.nextInt(4) == 0 ? UnderlayAddress.parse("10.9.9.9:1") : HOST_A);

            ByteBuf noise = random(lab, r);
            inputs.add(noise);
            b.onUnderlayDatagram(noise, HOST_A);

            ByteBuf frame = mutate(Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, r.nextInt(200), i), r);
            inputs.add(frame);
            a.onEniFrame(1, frame);

            ByteBuf noiseFrame = random(lab, r);
            inputs.add(noiseFrame);
            a.onEniFrame(r.nextInt(3), noiseFrame);

            ByteBuf underlayFrame = random(lab, r);
            inputs.add(underlayFrame);
            b.onUnderlayFrame(underlayFrame);
        }
        lab.scheduler.runUntilIdle(1_000_000);

        long accountedAtB = b.counters().dropsTotal() + atB.count();
        long encapsulated = a.vpcCounters(7).txPackets();
        long accountedAtA = a.counters().dropsTotal() + encapsulated + atA.count();
        // B got n mutated + n noise datagrams + n noise frames from us, plus A's encapsulated frames.
        assertThat(accountedAtB).isEqualTo(3L * n + encapsulated);
        assertThat(accountedAtA).isEqualTo(2L * n);
        assertThat(atB.count()).isPositive();
        assertThat(b.counters().drops(DropReason.MALFORMED_GENEVE)).isPositive();
        assertThat(b.counters().drops(DropReason.UNKNOWN_SOURCE_HOST)).isPositive();
        for (ByteBuf in : inputs) {
            assertThat(in.refCnt()).isZero();
        }
        lab.close();
    }

    private static ByteBuf validDatagram(Lab lab, int seq) {
        ByteBuf inner = Frames.roce(lab.alloc, A, B, Opcode.RC_RDMA_WRITE_ONLY, seq % 300, seq);
        GeneveHeader h = new GeneveHeader();
        h.vni = 7;
        if (seq % 3 == 0) {
            IntOption.reserve(h, 3);
        }
        ByteBuf out = lab.alloc.directBuffer();
        GeneveCodec.encode(h, out);
        out.writeBytes(inner);
        inner.release();
        return out;
    }

    private static ByteBuf mutate(ByteBuf buf, SplittableRandom r) {
        int kind = r.nextInt(4);
        if (kind == 0) {
            return buf; // unchanged: must be delivered
        }
        if (kind == 1 && buf.readableBytes() > 0) {
            buf.writerIndex(buf.readerIndex() + r.nextInt(buf.readableBytes()));
            return buf;
        }
        int flips = 1 + r.nextInt(3);
        for (int i = 0; i < flips && buf.readableBytes() > 0; i++) {
            int at = buf.readerIndex() + r.nextInt(Math.min(buf.readableBytes(), 120));
            buf.setByte(at, buf.getByte(at) ^ (1 << r.nextInt(8)));
        }
        return buf;
    }

    private static ByteBuf random(Lab lab, SplittableRandom r) {
        int len = r.nextInt(r.nextBoolean() ? 64 : 1600);
        byte[] bytes = new byte[len];
        r.nextBytes(bytes);
        ByteBuf b = lab.alloc.directBuffer(len + 1);
        b.writeBytes(bytes);
        return b;
    }
}
