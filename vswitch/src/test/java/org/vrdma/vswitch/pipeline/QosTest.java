package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.vswitch.qos.EniShaper;
import org.vrdma.vswitch.qos.QosConfig;
import org.vrdma.wire.Opcode;

/**
 * Per-ENI QoS in virtual time: an RDMA flood and a TCP flood on one ENI share its rate by weight,
 * either alone may use all of it, a class ceiling caps it, policing drops, and the rates hold at the
 * receiving ENI.
 */
class QosTest {
    static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    static final Endpoint A = Endpoint.of(0x02_00_00_00_00_01L, "10.0.0.1");
    static final Endpoint B = Endpoint.of(0x02_00_00_00_00_02L, "10.0.0.2");
    static final long ENI_RATE = 10_000_000_000L;
    static final long WARMUP_NS = 500_000;
    static final long END_NS = 3_000_000;
    static final int FRAME_PAYLOAD = 8000;

    final Lab lab = new Lab(21);
    final VSwitch a = lab.add(VSwitchConfig.of("a", HOST_A));
    final VSwitch b = lab.add(VSwitchConfig.of("b", HOST_B));
    final ClassMeter atB = new ClassMeter();

    /** Bytes per traffic class delivered after the warm-up. */
    static final class ClassMeter implements FrameSink {
        final long[] bytes = new long[2];
        final InnerFrame f = new InnerFrame();

        @Override
        public void onFrame(ByteBuf frame, long nowNs) {
            if (nowNs >= WARMUP_NS && nowNs < END_NS) {
                f.peek(frame, frame.readerIndex(), frame.writerIndex());
                bytes[f.trafficClass()] += frame.readableBytes();
            }
            frame.release();
        }

        double gbps(int trafficClass) {
            return bytes[trafficClass] * 8.0 / (END_NS - WARMUP_NS);
        }
    }

    /** Offers one frame per class every {@code periodNs} (8000-byte payloads: ~8.6 Gbit/s per class every 7.5 µs). */
    final class Flood implements TimerHandler {
        final boolean rdma;
        final boolean tcp;
        final long periodNs;
        int seq;

        Flood(boolean rdma, boolean tcp, long periodNs) {
            this.rdma = rdma;
            this.tcp = tcp;
            this.periodNs = periodNs;
        }

        @Override
        public void onTimer(long nowNs, long timerId) {
            if (rdma) {
                a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_RDMA_WRITE_ONLY, FRAME_PAYLOAD, seq));
            }
            if (tcp) {
                a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 5201, FRAME_PAYLOAD, seq));
            }
            seq++;
            if (nowNs + periodNs < END_NS) {
                lab.scheduler.scheduleAt(nowNs + periodNs, this);
            }
        }
    }

    void setUp(QosConfig egress) {
        a.addEni(EniConfig.of(1, A.mac(), "10.0.0.1", 5).withQos(egress, QosConfig.UNLIMITED), new Collector(false));
        b.addEni(EniConfig.of(1, B.mac(), "10.0.0.2", 5), atB);
        a.addRemoteRoute(5, "10.0.0.2", HOST_B);
        b.addRemoteRoute(5, "10.0.0.1", HOST_A);
    }

    void run(Flood flood) {
        lab.scheduler.scheduleAt(0, flood);
        lab.scheduler.runUntil(END_NS);
    }

    @AfterEach
    void tearDown() {
        lab.close();
    }

    @Test
    void rdmaAndTcpFloodsShareTheEniByWeight() {
        setUp(QosConfig.shaped(ENI_RATE, 3, 1).withClassQueueBytes(256 * 1024));
        run(new Flood(true, true, 7500));
        double rdma = atB.gbps(InnerFrame.CLASS_RDMA);
        double tcp = atB.gbps(InnerFrame.CLASS_TCP);
        System.out.printf("QoS 3:1 at 10 Gbit/s: RDMA %.3f Gbit/s, TCP %.3f Gbit/s%n", rdma, tcp);
        assertThat(rdma).isCloseTo(7.5, org.assertj.core.data.Offset.offset(0.3));
        assertThat(tcp).isCloseTo(2.5, org.assertj.core.data.Offset.offset(0.15));
        EniShaper shaper = a.eni(1).egressShaper();
        assertThat(shaper.droppedPackets(InnerFrame.CLASS_RDMA)).isPositive();
        assertThat(shaper.droppedPackets(InnerFrame.CLASS_TCP)).isPositive();
        assertThat(a.eni(1).counters().drops(DropReason.QOS_QUEUE_FULL))
                .isEqualTo(shaper.droppedPackets(0) + shaper.droppedPackets(1));
        assertThat(shaper.queueHighWaterBytes(InnerFrame.CLASS_TCP)).isLessThanOrEqualTo(256 * 1024);
    }

    @Test
    void oneClassAloneMayUseTheWholeEni() {
        setUp(QosConfig.shaped(ENI_RATE, 3, 1).withClassQueueBytes(256 * 1024));
        run(new Flood(false, true, 3750));
        assertThat(atB.gbps(InnerFrame.CLASS_TCP)).isCloseTo(10.0, org.assertj.core.data.Offset.offset(0.2));
        assertThat(atB.bytes[InnerFrame.CLASS_RDMA]).isZero();
    }

    @Test
    void aClassCeilingCapsItEvenWhenAlone() {
        setUp(QosConfig.shaped(ENI_RATE, 1, 1).withCeilings(0, 2_000_000_000L).withClassQueueBytes(128 * 1024));
        run(new Flood(true, true, 7500));
        assertThat(atB.gbps(InnerFrame.CLASS_TCP)).isCloseTo(2.0, org.assertj.core.data.Offset.offset(0.1));
        // RDMA takes what TCP's ceiling leaves of the ENI.
        assertThat(atB.gbps(InnerFrame.CLASS_RDMA)).isCloseTo(8.0, org.assertj.core.data.Offset.offset(0.2));
    }

    @Test
    void policingDropsWhatDoesNotConformAndChangesAtRunTime() {
        setUp(new QosConfig(ENI_RATE / 2, 16 * 1024, 0, 0, 1, 1, 0));
        run(new Flood(true, false, 7500));
        double rdma = atB.gbps(InnerFrame.CLASS_RDMA);
        assertThat(rdma).isLessThanOrEqualTo(5.0 + 0.1).isGreaterThan(4.0);
        assertThat(a.eni(1).egressShaper().queuedPackets(InnerFrame.CLASS_RDMA)).isZero();
        assertThat(a.eni(1).counters().drops(DropReason.QOS_QUEUE_FULL)).isPositive();

        a.setQos(1, QosConfig.UNLIMITED, QosConfig.UNLIMITED);
        long drops = a.eni(1).counters().drops(DropReason.QOS_QUEUE_FULL);
        for (int i = 0; i < 100; i++) {
            a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_RDMA_WRITE_ONLY, FRAME_PAYLOAD, i));
        }
        assertThat(a.eni(1).counters().drops(DropReason.QOS_QUEUE_FULL)).isEqualTo(drops);
    }

    @Test
    void ingressMeterLimitsWhatTheEniReceives() {
        a.addEni(EniConfig.of(1, A.mac(), "10.0.0.1", 5), new Collector(false));
        b.addEni(
                EniConfig.of(1, B.mac(), "10.0.0.2", 5)
                        .withQos(QosConfig.UNLIMITED, QosConfig.shaped(ENI_RATE / 4, 1, 1)),
                atB);
        a.addRemoteRoute(5, "10.0.0.2", HOST_B);
        b.addRemoteRoute(5, "10.0.0.1", HOST_A);
        run(new Flood(true, false, 7500));
        assertThat(atB.gbps(InnerFrame.CLASS_RDMA)).isCloseTo(2.5, org.assertj.core.data.Offset.offset(0.1));
        assertThat(b.eni(1).counters().drops(DropReason.QOS_QUEUE_FULL)).isPositive();
    }
}
