package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.vswitch.qos.EniShaper;
import org.vrdma.vswitch.qos.QosConfig;
import org.vrdma.wire.Ipv4UdpCodec;
import org.vrdma.wire.Opcode;

/**
 * An ENI shared by a vNIC and a TAP device, in virtual time: RoCEv2 goes to the vNIC's sink and
 * TCP/IP (TCP, ICMP, ARP answers) to the TAP's, each metered in its QoS class; the delivery port
 * toward them emulates a lossy link whose statistics match its configuration.
 */
class EniDeliveryTest {
    static final int VPC = 100;
    static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    static final Endpoint A = Endpoint.of(0x02_00_00_00_01_01L, "10.0.0.1");
    static final Endpoint B = Endpoint.of(0x02_00_00_00_02_01L, "10.0.0.2");

    Lab lab;
    VSwitch a;
    VSwitch b;
    final Collector sinkA = new Collector();
    final Collector vnicB = new Collector(false);
    final Collector tapB = new Collector(false);

    @BeforeEach
    void setUp() {
        lab = new Lab(11);
        a = lab.add(VSwitchConfig.of("a", HOST_A));
        b = lab.add(VSwitchConfig.of("b", HOST_B));
        a.addEni(EniConfig.of(1, A.mac(), "10.0.0.1", VPC), sinkA);
        b.addEni(EniConfig.of(1, B.mac(), "10.0.0.2", VPC), vnicB, tapB);
        a.addRemoteRoute(VPC, "10.0.0.2", HOST_B);
        b.addRemoteRoute(VPC, "10.0.0.1", HOST_A);
    }

    @AfterEach
    void tearDown() {
        lab.close();
    }

    /** An ICMP echo request from {@code src} to {@code dst}. */
    static ByteBuf icmp(Lab lab, Endpoint src, Endpoint dst, int seq) {
        ByteBuf f = lab.alloc.directBuffer(Frames.HEADROOM + 14 + 20 + 16);
        f.writerIndex(Frames.HEADROOM).readerIndex(Frames.HEADROOM);
        ArpPacket.writeMac(f, dst.mac());
        ArpPacket.writeMac(f, src.mac());
        f.writeShort(0x0800);
        int ip = f.writerIndex();
        f.writeByte(0x45).writeByte(0).writeShort(36).writeShort(seq).writeShort(0x4000);
        f.writeByte(64)
                .writeByte(InnerFrame.PROTOCOL_ICMP)
                .writeShort(0)
                .writeInt(src.ip())
                .writeInt(dst.ip());
        f.setShort(ip + 10, Ipv4UdpCodec.ipv4Checksum(f, ip, 20));
        f.writeByte(8).writeByte(0).writeShort(0).writeShort(1).writeShort(seq).writeLong(seq);
        return f;
    }

    @Test
    void classifiesRdmaToTheVnicAndTcpIpToTheTapInTheirQosClasses() {
        b.setQos(1, QosConfig.UNLIMITED, QosConfig.shaped(10_000_000_000L, 1, 1));
        for (int i = 0; i < 30; i++) {
            a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_RDMA_WRITE_ONLY, 1024, i));
            a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_ACKNOWLEDGE, 0, i));
            a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 5201, 1000, i));
            a.onEniFrame(1, icmp(lab, A, B, i));
        }
        // A UDP datagram to a port other than 4791 is TCP/IP-class traffic too.
        ByteBuf notRoce = Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, 64, 99);
        notRoce.setShort(notRoce.readerIndex() + 14 + 20 + 2, 4792);
        notRoce.setShort(notRoce.readerIndex() + 14 + 20 + 6, 0); // no UDP checksum over the changed port
        a.onEniFrame(1, notRoce);
        // B's TAP resolves A through proxy ARP: the answer goes to the TAP, not the vNIC.
        ByteBuf arp = lab.alloc.directBuffer(64);
        ArpPacket.writeRequest(arp, B.mac(), B.ip(), A.ip());
        b.onEniFrame(1, arp);
        lab.scheduler.runUntilIdle(100_000);

        assertThat(vnicB.count()).isEqualTo(60);
        assertThat(tapB.count()).isEqualTo(30 + 30 + 1 + 1);
        EniShaper in = b.eni(1).ingressShaper();
        assertThat(in.passedPackets(InnerFrame.CLASS_RDMA)).isEqualTo(60);
        assertThat(in.passedPackets(InnerFrame.CLASS_TCP)).isEqualTo(61);
        assertThat(b.eni(1).hasIpSink()).isTrue();
    }

    @Test
    void withoutATapEverythingGoesToTheVnicSink() {
        b.setIpSink(1, null);
        a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 80, 10, 1));
        a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, 10, 2));
        lab.scheduler.runUntilIdle(1000);
        assertThat(vnicB.count()).isEqualTo(2);
        assertThat(tapB.count()).isZero();
    }

    @Test
    void deliveryPortLossMatchesItsConfigurationForDataAndControl() {
        double dataLoss = 0.05;
        double controlLoss = 0.2;
        EgressPort port = b.setDeliveryPort(
                1,
                EgressConfig.DEFAULT
                        .withDataFaults(FaultConfig.randomLoss(dataLoss))
                        .withControlFaults(FaultConfig.randomLoss(controlLoss)));
        int data = 20_000;
        int control = 5_000;
        for (int i = 0; i < data; i++) {
            a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 5201, 64, i));
            if (i < control) {
                a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_ACKNOWLEDGE, 0, i));
            }
        }
        lab.scheduler.runUntilIdle(1_000_000);

        assertThat(port.dataLost() + tapB.count()).isEqualTo(data);
        assertThat(port.controlLost() + vnicB.count()).isEqualTo(control);
        assertWithinFourSigma(port.dataLost(), data, dataLoss);
        assertWithinFourSigma(port.controlLost(), control, controlLoss);
        assertThat(b.eni(1).counters().rxPackets()).isEqualTo(data + control);
        var json = VSwitchStats.snapshot(b, lab.scheduler.nowNs());
        assertThat(json.at("/enis/0/deliveryPort/drops/INJECTED_LOSS").asLong())
                .isEqualTo(port.dataLost() + port.controlLost());

        // Changed at run time: no more loss.
        b.setDeliveryPort(1, EgressConfig.DEFAULT);
        long before = tapB.count();
        for (int i = 0; i < 1000; i++) {
            a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 5201, 64, i));
        }
        lab.scheduler.runUntilIdle(100_000);
        assertThat(tapB.count() - before).isEqualTo(1000);
    }

    @Test
    void deliveryPortSerialisesAtItsRateAndRemovingTheEniReleasesWhatItHolds() {
        long rateBps = 1_000_000_000L;
        Collector timed = new Collector();
        b.setIpSink(1, timed);
        EgressPort port = b.setDeliveryPort(1, EgressConfig.of(rateBps, 1 << 20));
        for (int i = 0; i < 10; i++) {
            a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 5201, 946, i)); // 1000-byte frames
        }
        lab.scheduler.runUntilIdle(10_000);
        assertThat(timed.count()).isEqualTo(10);
        long serialisationNs = 1000 * 8 * 1_000_000_000L / rateBps;
        for (int i = 1; i < 10; i++) {
            assertThat(timed.timesNs.get(i) - timed.timesNs.get(i - 1)).isEqualTo(serialisationNs);
        }
        assertThat(port.txPackets()).isEqualTo(10);

        for (int i = 0; i < 5; i++) {
            a.onEniFrame(1, Frames.tcp(lab.alloc, A, B, 5201, 946, i));
        }
        assertThat(port.queuedPackets()).isPositive();
        int queued = port.queuedPackets();
        b.removeEni(1);
        lab.scheduler.runUntilIdle(10_000);
        assertThat(timed.count()).isEqualTo(10);
        assertThat(b.counters().drops(DropReason.PORT_REMOVED)).isEqualTo(queued);
    }

    private static void assertWithinFourSigma(long lost, int n, double p) {
        double sigma = Math.sqrt(n * p * (1 - p));
        assertThat((double) lost).isCloseTo(n * p, within(4 * sigma));
    }
}
