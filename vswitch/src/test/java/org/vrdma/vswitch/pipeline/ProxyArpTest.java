package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;

/**
 * Proxy ARP in virtual time: the switch answers an ENI's ARP requests for addresses routed in its
 * VPC with the virtual router's MAC, answers nothing across VPCs, drops spoofed and unwanted ARP
 * under their reasons, and never puts ARP on the underlay. Frames sent to the router MAC reach the
 * destination ENI with its own MAC.
 */
class ProxyArpTest {
    static final int RED = 100;
    static final int BLUE = 200;
    static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    static final Endpoint RED_A = Endpoint.of(0x02_00_00_00_01_01L, "10.0.0.1");
    static final Endpoint RED_B = Endpoint.of(0x02_00_00_00_02_01L, "10.0.0.2");
    static final Endpoint RED_A2 = Endpoint.of(0x02_00_00_00_01_03L, "10.0.0.3");
    static final Endpoint BLUE_A = Endpoint.of(0x02_00_00_00_01_02L, "10.0.0.1");
    static final Endpoint BLUE_B = Endpoint.of(0x02_00_00_00_02_02L, "10.0.0.4");

    Lab lab;
    VSwitch a;
    VSwitch b;
    final Collector redA = new Collector();
    final Collector redA2 = new Collector();
    final Collector redB = new Collector();
    final Collector blueA = new Collector();
    final Collector blueB = new Collector();

    @BeforeEach
    void setUp() {
        lab = new Lab(3);
        a = lab.add(VSwitchConfig.of("a", HOST_A));
        b = lab.add(VSwitchConfig.of("b", HOST_B));
        a.addEni(EniConfig.of(1, RED_A.mac(), "10.0.0.1", RED), redA);
        a.addEni(EniConfig.of(2, BLUE_A.mac(), "10.0.0.1", BLUE), blueA);
        a.addEni(EniConfig.of(3, RED_A2.mac(), "10.0.0.3", RED), redA2);
        b.addEni(EniConfig.of(1, RED_B.mac(), "10.0.0.2", RED), redB);
        b.addEni(EniConfig.of(2, BLUE_B.mac(), "10.0.0.4", BLUE), blueB);
        a.addRemoteRoute(RED, "10.0.0.2", HOST_B);
        a.addRemoteRoute(BLUE, "10.0.0.4", HOST_B);
        b.addRemoteRoute(RED, "10.0.0.1", HOST_A);
        b.addRemoteRoute(RED, "10.0.0.3", HOST_A);
        b.addRemoteRoute(BLUE, "10.0.0.1", HOST_A);
    }

    @AfterEach
    void tearDown() {
        lab.close();
    }

    private ByteBuf request(Endpoint from, String target) {
        ByteBuf f = lab.alloc.directBuffer(64);
        ArpPacket.writeRequest(f, from.mac(), from.ip(), UnderlayAddress.parseIpv4(target));
        return f;
    }

    @Test
    void answersRemoteAndLocalAddressesOfTheSameVpcWithTheRouterMac() {
        a.onEniFrame(1, request(RED_A, "10.0.0.2"));
        a.onEniFrame(1, request(RED_A, "10.0.0.3"));
        lab.scheduler.runUntilIdle(1000);

        assertThat(redA.count()).isEqualTo(2);
        for (int i = 0; i < 2; i++) {
            ByteBuf reply = Unpooled.wrappedBuffer(redA.frames.get(i));
            ArpPacket p = new ArpPacket();
            assertThat(p.parse(reply, 0, reply.writerIndex())).isTrue();
            assertThat(reply.writerIndex()).isEqualTo(ArpPacket.MIN_FRAME_BYTES);
            assertThat(ArpPacket.mac(reply, 0)).as("to the requester").isEqualTo(RED_A.mac());
            assertThat(p.operation).isEqualTo(ArpPacket.REPLY);
            assertThat(p.senderMac).isEqualTo(VSwitch.ROUTER_MAC);
            assertThat(p.ethSrcMac).isEqualTo(VSwitch.ROUTER_MAC);
            assertThat(p.senderIp).isEqualTo(UnderlayAddress.parseIpv4(i == 0 ? "10.0.0.2" : "10.0.0.3"));
            assertThat(p.targetMac).isEqualTo(RED_A.mac());
            assertThat(p.targetIp).isEqualTo(RED_A.ip());
        }
        assertThat(a.arpReplies()).isEqualTo(2);
        assertThat(a.underlayTxPackets()).as("ARP never enters the overlay").isZero();
        assertThat(redB.count() + redA2.count() + blueA.count() + blueB.count()).isZero();
    }

    @Test
    void neverAnswersForAnotherVpcsAddresses() {
        // 10.0.0.2 exists only in RED, 10.0.0.4 only in BLUE; both VPCs have 10.0.0.1 on host A.
        a.onEniFrame(2, request(BLUE_A, "10.0.0.2"));
        a.onEniFrame(2, request(BLUE_A, "10.0.0.3"));
        a.onEniFrame(1, request(RED_A, "10.0.0.4"));
        lab.scheduler.runUntilIdle(1000);

        assertThat(blueA.count() + redA.count() + redA2.count()).isZero();
        assertThat(a.counters().drops(DropReason.ARP_NO_ROUTE)).isEqualTo(3);
        assertThat(a.vpcCounters(BLUE).drops(DropReason.ARP_NO_ROUTE)).isEqualTo(2);
        assertThat(a.vpcCounters(RED).drops(DropReason.ARP_NO_ROUTE)).isEqualTo(1);
        assertThat(a.eni(2).counters().drops(DropReason.ARP_NO_ROUTE)).isEqualTo(2);
        assertThat(a.arpReplies()).isZero();
        assertThat(a.underlayTxPackets()).isZero();
    }

    @Test
    void spoofedMalformedAndUnwantedArpIsDroppedAndCounted() {
        // Sender IP of another ENI; sender MAC of another ENI; Ethernet source of another ENI.
        ByteBuf ipSpoof = lab.alloc.directBuffer(64);
        ArpPacket.writeRequest(ipSpoof, RED_A.mac(), RED_A2.ip(), RED_B.ip());
        a.onEniFrame(1, ipSpoof);
        ByteBuf macSpoof = lab.alloc.directBuffer(64);
        ArpPacket.writeRequest(macSpoof, RED_A2.mac(), RED_A.ip(), RED_B.ip());
        a.onEniFrame(1, macSpoof);
        ByteBuf ethSpoof = request(RED_A, "10.0.0.2");
        ethSpoof.setMedium(6, (int) (BLUE_A.mac() >>> 24)).setMedium(9, (int) BLUE_A.mac());
        a.onEniFrame(1, ethSpoof);
        // Gratuitous announcement, a probe for its own address, a reply.
        a.onEniFrame(1, request(RED_A, "10.0.0.1"));
        ByteBuf probe = lab.alloc.directBuffer(64);
        ArpPacket.writeRequest(probe, RED_A.mac(), 0, RED_A.ip());
        a.onEniFrame(1, probe);
        ByteBuf reply = request(RED_A, "10.0.0.2");
        reply.setShort(InnerFrame.ETHERNET_HEADER_BYTES + 6, ArpPacket.REPLY);
        a.onEniFrame(1, reply);
        // Truncated, and ARP for a hardware type other than Ethernet.
        ByteBuf truncated = request(RED_A, "10.0.0.2");
        truncated.writerIndex(30);
        a.onEniFrame(1, truncated);
        ByteBuf otherHw = request(RED_A, "10.0.0.2");
        otherHw.setShort(InnerFrame.ETHERNET_HEADER_BYTES, 6);
        a.onEniFrame(1, otherHw);
        // IPv6 noise (router solicitation ethertype) is not carried.
        ByteBuf ipv6 = lab.alloc.directBuffer(64);
        ArpPacket.writeMac(ipv6, 0x3333_0000_0002L);
        ArpPacket.writeMac(ipv6, RED_A.mac());
        ipv6.writeShort(0x86DD).writeZero(40);
        a.onEniFrame(1, ipv6);
        lab.scheduler.runUntilIdle(1000);

        TrafficCounters c = a.eni(1).counters();
        assertThat(c.drops(DropReason.SPOOFED_SOURCE)).isEqualTo(3);
        assertThat(c.drops(DropReason.ARP_IGNORED)).isEqualTo(3);
        assertThat(c.drops(DropReason.MALFORMED_INNER)).isEqualTo(2);
        assertThat(c.drops(DropReason.NOT_IPV4)).isEqualTo(1);
        assertThat(redA.count()).isZero();
        assertThat(a.arpReplies()).isZero();
        assertThat(a.underlayTxPackets()).isZero();
    }

    @Test
    void framesSentToTheRouterMacArriveWithTheDestinationEnisMac() {
        Endpoint router = new Endpoint(VSwitch.ROUTER_MAC, RED_B.ip());
        ByteBuf tcp = Frames.tcp(lab.alloc, RED_A, router, 5201, 100, 1);
        a.onEniFrame(1, tcp);
        Endpoint localRouter = new Endpoint(VSwitch.ROUTER_MAC, RED_A2.ip());
        a.onEniFrame(1, Frames.tcp(lab.alloc, RED_A, localRouter, 5201, 100, 2));
        lab.scheduler.runUntilIdle(1000);

        assertThat(redB.count()).isEqualTo(1);
        ByteBuf got = Unpooled.wrappedBuffer(redB.frames.get(0));
        assertThat(ArpPacket.mac(got, 0)).isEqualTo(RED_B.mac());
        assertThat(ArpPacket.mac(got, 6)).isEqualTo(RED_A.mac());
        assertThat(redA2.count()).isEqualTo(1);
        assertThat(ArpPacket.mac(Unpooled.wrappedBuffer(redA2.frames.get(0)), 0))
                .isEqualTo(RED_A2.mac());
    }

    @Test
    void statsShowArpRepliesAndDrops() {
        a.onEniFrame(1, request(RED_A, "10.0.0.2"));
        a.onEniFrame(1, request(RED_A, "10.0.0.9"));
        lab.scheduler.runUntilIdle(1000);
        var json = VSwitchStats.snapshot(a, lab.scheduler.nowNs());
        assertThat(json.at("/underlayCounters/arpReplies").asLong()).isEqualTo(1);
        assertThat(json.at("/drops/ARP_NO_ROUTE").asLong()).isEqualTo(1);
    }
}
