package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.vswitch.wire.GeneveCodec;
import org.vrdma.vswitch.wire.GeneveHeader;
import org.vrdma.wire.Opcode;

/**
 * Two VPCs with the same CIDR (10.0.0.0/24) on the same two hosts: traffic stays in its VNI, and
 * every way of stepping outside (spoofed source, wrong VNI, unknown host, a host speaking for an
 * address it does not hold, security groups, vRDMA off) is dropped and counted under its reason.
 */
class IsolationTest {
    static final int VPC_RED = 100;
    static final int VPC_BLUE = 200;
    static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    static final long HOST_C = UnderlayAddress.parse("10.1.0.3:6081");

    // Same addresses in both VPCs; only MACs differ.
    static final Endpoint RED_A = Endpoint.of(0x02_00_00_00_01_01L, "10.0.0.1");
    static final Endpoint RED_B = Endpoint.of(0x02_00_00_00_02_01L, "10.0.0.2");
    static final Endpoint BLUE_A = Endpoint.of(0x02_00_00_00_01_02L, "10.0.0.1");
    static final Endpoint BLUE_B = Endpoint.of(0x02_00_00_00_02_02L, "10.0.0.2");

    Lab lab;
    VSwitch a;
    VSwitch b;
    Collector redA = new Collector();
    Collector redB = new Collector();
    Collector blueA = new Collector();
    Collector blueB = new Collector();

    @BeforeEach
    void setUp() {
        lab = new Lab(7);
        a = lab.add(VSwitchConfig.of("a", HOST_A));
        b = lab.add(VSwitchConfig.of("b", HOST_B));
        a.addEni(EniConfig.of(1, RED_A.mac(), "10.0.0.1", VPC_RED), redA);
        a.addEni(EniConfig.of(2, BLUE_A.mac(), "10.0.0.1", VPC_BLUE), blueA);
        b.addEni(EniConfig.of(1, RED_B.mac(), "10.0.0.2", VPC_RED), redB);
        b.addEni(EniConfig.of(2, BLUE_B.mac(), "10.0.0.2", VPC_BLUE), blueB);
        a.addRemoteRoute(VPC_RED, "10.0.0.2", HOST_B);
        a.addRemoteRoute(VPC_BLUE, "10.0.0.2", HOST_B);
        b.addRemoteRoute(VPC_RED, "10.0.0.1", HOST_A);
        b.addRemoteRoute(VPC_BLUE, "10.0.0.1", HOST_A);
    }

    @AfterEach
    void tearDown() {
        lab.close();
    }

    @Test
    void overlappingVpcsOnTheSameHostsNeverSeeEachOthersPackets() {
        List<byte[]> sentRed = new ArrayList<>();
        List<byte[]> sentBlue = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            ByteBuf red = Frames.roce(lab.alloc, RED_A, RED_B, Opcode.RC_SEND_ONLY, 100 + i, i);
            ByteBuf blue = Frames.roce(lab.alloc, BLUE_A, BLUE_B, Opcode.RC_SEND_ONLY, 100 + i, 1000 + i);
            sentRed.add(Frames.bytes(red));
            sentBlue.add(Frames.bytes(blue));
            a.onEniFrame(1, red);
            a.onEniFrame(2, blue);
        }
        ByteBuf back = Frames.tcp(lab.alloc, BLUE_B, BLUE_A, 80, 10, 5);
        byte[] sentBack = Frames.bytes(back);
        b.onEniFrame(2, back);
        lab.scheduler.runUntilIdle(10_000);

        assertThat(redB.frames).containsExactlyElementsOf(sentRed);
        assertThat(blueB.frames).containsExactlyElementsOf(sentBlue);
        assertThat(blueA.frames).containsExactly(sentBack);
        assertThat(redA.frames).isEmpty();
        assertThat(b.vpcCounters(VPC_RED).rxPackets()).isEqualTo(50);
        assertThat(b.vpcCounters(VPC_BLUE).rxPackets()).isEqualTo(50);
        assertThat(a.vpcCounters(VPC_RED).txPackets()).isEqualTo(50);
        assertThat(a.counters().dropsTotal() + b.counters().dropsTotal()).isZero();
        // Frames had headroom: encapsulation wrote the outer headers in place.
        assertThat(a.encapsulationCopies()).isZero();
    }

    @Test
    void spoofedSourceAddressesAreDroppedAtTheSendingSwitch() {
        Endpoint wrongIp = new Endpoint(RED_A.mac(), UnderlayAddress.parseIpv4("10.0.0.9"));
        Endpoint wrongMac = new Endpoint(0x02_66_66_66_66_66L, RED_A.ip());
        a.onEniFrame(1, Frames.roce(lab.alloc, wrongIp, RED_B, Opcode.RC_SEND_ONLY, 8, 1));
        a.onEniFrame(1, Frames.tcp(lab.alloc, wrongMac, RED_B, 80, 8, 2));
        // ENI 1 (red) pretending to be ENI 2 (blue): same IP, blue's MAC.
        a.onEniFrame(1, Frames.tcp(lab.alloc, BLUE_A, BLUE_B, 80, 8, 3));
        lab.scheduler.runUntilIdle(1000);

        assertThat(a.eni(1).counters().drops(DropReason.SPOOFED_SOURCE)).isEqualTo(3);
        assertThat(a.counters().drops(DropReason.SPOOFED_SOURCE)).isEqualTo(3);
        assertThat(a.vpcCounters(VPC_RED).drops(DropReason.SPOOFED_SOURCE)).isEqualTo(3);
        assertThat(redB.count() + blueB.count()).isZero();
        assertThat(a.underlayTxPackets()).isZero();
    }

    @Test
    void foreignUnderlayDatagramsAreDroppedWithTheirReason() {
        b.addRemoteRoute(VPC_BLUE, "10.0.0.3", HOST_C); // host C is known, for blue only
        Endpoint redC = Endpoint.of(0x02_00_00_00_03_01L, "10.0.0.3");
        Endpoint redStranger = Endpoint.of(0x02_00_00_00_01_09L, "10.0.0.7");

        b.onUnderlayDatagram(geneve(VPC_RED, RED_A, RED_B, false), UnderlayAddress.parse("10.1.0.9:6081"));
        b.onUnderlayDatagram(geneve(300, RED_A, RED_B, false), HOST_A);
        b.onUnderlayDatagram(geneve(VPC_RED, redStranger, RED_B, false), HOST_A);
        // C may speak for 10.0.0.3 in blue, not in red.
        b.onUnderlayDatagram(geneve(VPC_RED, redC, RED_B, false), HOST_C);
        b.onUnderlayDatagram(geneve(VPC_RED, RED_A, RED_B, true), HOST_A);
        b.onUnderlayDatagram(geneve(VPC_RED, RED_A, Endpoint.of(2, "10.0.0.99"), false), HOST_A);
        // A's blue source, but sent in the red VNI to red's B: allowed only because 10.0.0.1 is at A in red too.
        b.onUnderlayDatagram(geneve(VPC_RED, RED_A, RED_B, false), HOST_A);
        lab.scheduler.runUntilIdle(1000);

        TrafficCounters c = b.counters();
        assertThat(c.drops(DropReason.UNKNOWN_SOURCE_HOST)).isEqualTo(1);
        assertThat(c.drops(DropReason.UNKNOWN_VNI)).isEqualTo(1);
        assertThat(c.drops(DropReason.SOURCE_HOST_MISMATCH)).isEqualTo(2);
        assertThat(c.drops(DropReason.UNKNOWN_CRITICAL_OPTION)).isEqualTo(1);
        assertThat(c.drops(DropReason.NO_ROUTE)).isEqualTo(1);
        assertThat(c.dropsTotal()).isEqualTo(6);
        assertThat(b.vpcCounters(VPC_RED).drops(DropReason.SOURCE_HOST_MISMATCH))
                .isEqualTo(2);
        assertThat(redB.count()).isEqualTo(1);
        assertThat(blueB.count()).isZero();
    }

    @Test
    void securityGroupsAllowAndDenyInOrderAndChangeAtRunTime() {
        SecurityGroup web = new SecurityGroup(
                "web",
                List.of(
                        SecurityRule.deny(InnerFrame.PROTOCOL_TCP, 22, 22, "0.0.0.0/0"),
                        SecurityRule.allow(InnerFrame.PROTOCOL_TCP, 80, 90, "10.0.0.0/24"),
                        SecurityRule.allow(InnerFrame.PROTOCOL_UDP, 4791, 4791, "10.0.0.1/32")),
                List.of(),
                false);
        SecurityGroup client = new SecurityGroup(
                "client",
                List.of(),
                List.of(SecurityRule.deny(InnerFrame.PROTOCOL_TCP, 8080, 8080, "10.0.0.2/32")),
                true);
        b.setSecurityGroup(1, web);
        a.setSecurityGroup(1, client);

        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, RED_B, 22, 8, 1)); // ingress deny at B
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, RED_B, 85, 8, 2)); // allowed
        a.onEniFrame(1, Frames.roce(lab.alloc, RED_A, RED_B, Opcode.RC_SEND_ONLY, 8, 3)); // allowed
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, RED_B, 443, 8, 4)); // default deny at B
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, RED_B, 8080, 8, 5)); // egress deny at A
        lab.scheduler.runUntilIdle(1000);
        assertThat(redB.count()).isEqualTo(2);
        assertThat(b.eni(1).counters().drops(DropReason.SECURITY_GROUP_DENY)).isEqualTo(2);
        assertThat(a.eni(1).counters().drops(DropReason.SECURITY_GROUP_DENY)).isEqualTo(1);

        b.setSecurityGroup(1, SecurityGroup.ALLOW_ALL);
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, RED_B, 22, 8, 6));
        lab.scheduler.runUntilIdle(1000);
        assertThat(redB.count()).isEqualTo(3);
    }

    @Test
    void rdmaOffDropsRoceButNotTcp() {
        b.setRdmaEnabled(1, false);
        a.onEniFrame(1, Frames.roce(lab.alloc, RED_A, RED_B, Opcode.RC_RDMA_WRITE_ONLY, 64, 1));
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, RED_B, 80, 64, 2));
        a.setRdmaEnabled(1, false);
        a.onEniFrame(1, Frames.roce(lab.alloc, RED_A, RED_B, Opcode.RC_RDMA_WRITE_ONLY, 64, 3));
        lab.scheduler.runUntilIdle(1000);
        assertThat(redB.count()).isEqualTo(1);
        assertThat(b.eni(1).counters().drops(DropReason.RDMA_DISABLED)).isEqualTo(1);
        assertThat(a.eni(1).counters().drops(DropReason.RDMA_DISABLED)).isEqualTo(1);
    }

    /** A sink that also follows its link, as a vNIC's port does. */
    private static final class LinkedSink implements org.vrdma.runtime.FrameSink, org.vrdma.runtime.LinkStateListener {
        final java.util.List<Boolean> states = new java.util.ArrayList<>();

        @Override
        public void onFrame(final io.netty.buffer.ByteBuf frame, final long nowNs) {
            frame.release();
        }

        @Override
        public void onLinkState(final boolean up) {
            states.add(up);
        }
    }

    @Test
    void switchingVrdmaOffAndOnTellsTheVnicsLink() {
        LinkedSink vnic = new LinkedSink();
        a.addEni(EniConfig.of(5, 0x02_00_00_00_01_05L, "10.0.0.5", VPC_RED), vnic);
        LinkedSink off = new LinkedSink();
        a.addEni(EniConfig.of(6, 0x02_00_00_00_01_06L, "10.0.0.6", VPC_RED).withRdmaEnabled(false), off);
        assertThat(vnic.states).isEmpty();
        assertThat(off.states).as("attached with vRDMA off").containsExactly(false);
        a.setRdmaEnabled(5, false);
        a.setRdmaEnabled(5, true);
        assertThat(vnic.states).containsExactly(false, true);
    }

    @Test
    void localDeliveryStaysInsideTheVpc() {
        Endpoint red3 = Endpoint.of(0x02_00_00_00_01_03L, "10.0.0.3");
        Collector red3Sink = new Collector();
        a.addEni(EniConfig.of(3, red3.mac(), "10.0.0.3", VPC_RED), red3Sink);
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, red3, 80, 8, 1));
        a.onEniFrame(2, Frames.tcp(lab.alloc, BLUE_A, red3, 80, 8, 2)); // blue has no 10.0.0.3
        a.onEniFrame(9, Frames.tcp(lab.alloc, BLUE_A, red3, 80, 8, 3)); // no such ENI
        lab.scheduler.runUntilIdle(1000);
        assertThat(red3Sink.count()).isEqualTo(1);
        assertThat(a.localDeliveries()).isEqualTo(1);
        assertThat(a.eni(2).counters().drops(DropReason.NO_ROUTE)).isEqualTo(1);
        assertThat(a.counters().drops(DropReason.UNKNOWN_ENI)).isEqualTo(1);
        assertThat(a.underlayTxPackets()).isZero();

        assertThat(a.removeEni(3)).isTrue();
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, red3, 80, 8, 4));
        lab.scheduler.runUntilIdle(1000);
        assertThat(a.eni(1).counters().drops(DropReason.NO_ROUTE)).isEqualTo(1);
    }

    @Test
    void nonIpv4AndMalformedInnerFramesAreCounted() {
        ByteBuf ipv6 = lab.alloc.directBuffer(64);
        ipv6.writeMedium(0x333300).writeMedium(0x000002).writeMedium(0x020000).writeMedium(0x000101);
        ipv6.writeShort(0x86DD).writeZero(40);
        a.onEniFrame(1, ipv6);
        // ARP goes to proxy ARP, which finds this one malformed (no hardware or protocol type).
        ByteBuf arp = lab.alloc.directBuffer(64);
        arp.writeMedium(0xFFFFFF).writeMedium(0xFFFFFF).writeMedium(0x020000).writeMedium(0x000101);
        arp.writeShort(0x0806).writeZero(28);
        a.onEniFrame(1, arp);
        ByteBuf bad = Frames.tcp(lab.alloc, RED_A, RED_B, 80, 8, 1);
        bad.setByte(bad.readerIndex() + 24, 0x99); // corrupt the IPv4 header checksum
        a.onEniFrame(1, bad);
        assertThat(a.eni(1).counters().drops(DropReason.NOT_IPV4)).isEqualTo(1);
        assertThat(a.eni(1).counters().drops(DropReason.MALFORMED_INNER)).isEqualTo(2);
        assertThat(Set.of(a.vnis()[0], a.vnis()[1])).containsExactlyInAnyOrder(VPC_RED, VPC_BLUE);
    }

    /** A Geneve datagram as host A would send it, optionally with an unknown critical option. */
    private ByteBuf geneve(int vni, Endpoint src, Endpoint dst, boolean unknownCriticalOption) {
        ByteBuf inner = Frames.roce(lab.alloc, src, dst, Opcode.RC_SEND_ONLY, 16, 1);
        GeneveHeader h = new GeneveHeader();
        h.vni = vni;
        if (unknownCriticalOption) {
            h.addOption(0x0101, 0x80 | 0x05, new byte[4], 0, 4);
        }
        ByteBuf out = lab.alloc.directBuffer();
        GeneveCodec.encode(h, out);
        out.writeBytes(inner);
        inner.release();
        return out;
    }
}
