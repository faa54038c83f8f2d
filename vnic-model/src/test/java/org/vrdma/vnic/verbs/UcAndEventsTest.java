package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vnic.verbs.Fabric.drain;
import static org.vrdma.vnic.verbs.Fabric.errnoOf;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.transport.TransportConfig;

/** UC queue pairs (no ACKs, a lost packet drops its message) and the transport's async events. */
class UcAndEventsTest {
    private static final int MTU = 1024;

    private static Fabric fabric() {
        return new Fabric(7, Fabric.fastLink(), TransportConfig.defaults());
    }

    /** The BTH opcode of a frame A sent (Ethernet 14 + IPv4 20 + UDP 8 bytes before the BTH). */
    private static int opcode(final ByteBuf frame) {
        return frame.getUnsignedByte(frame.readerIndex() + 42);
    }

    private static int psn(final ByteBuf frame) {
        return frame.getInt(frame.readerIndex() + 42 + 8) & 0xFFFFFF;
    }

    private static SendWorkRequest wr(
            final Fabric f, final WrOpcode op, final long wrId, final int offset, final int len) {
        final SendWorkRequest w = new SendWorkRequest();
        w.opcode = op;
        w.wrId = wrId;
        w.sendFlags = SendFlags.SIGNALED;
        w.addSge(Fabric.BASE + offset, len, f.a.mr.lkey());
        return w;
    }

    private static void recv(final Fabric f, final QueuePair qp, final long wrId, final int offset, final int len) {
        final RecvWorkRequest r = new RecvWorkRequest();
        r.wrId = wrId;
        r.addSge(Fabric.BASE + offset, len, f.b.mr.lkey());
        qp.postRecv(r);
    }

    private static void fill(final Fabric f, final int offset, final int len, final int seed) {
        for (int i = 0; i < len; i++) {
            f.a.memory.buffer().setByte(offset + i, (byte) (i * 31 + seed));
        }
    }

    private static boolean same(final Fabric f, final int aOffset, final int bOffset, final int len) {
        return f.a.memory
                .buffer()
                .slice(aOffset, len)
                .equals(f.b.memory.buffer().slice(bOffset, len));
    }

    @Test
    void ucStateMachineTakesTheConnectedAttributesWithoutAckOnes() {
        try (Fabric f = fabric()) {
            final QueuePair qp = f.a.ctx.createQueuePair(f.a.pd, QpInitAttr.of(QpType.UC, f.a.cq));
            final QpAttr a = new QpAttr();
            a.qpState = QpState.INIT;
            a.portNum = 1;
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT)))
                    .as("INIT needs the access flags, as RC")
                    .isEqualTo(Errno.EINVAL);
            qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
            a.qpState = QpState.RTR;
            a.ahAttr = AhAttr.of(Fabric.IP_B, 0xB);
            a.pathMtu = Mtu.MTU_1024;
            final int rtr =
                    QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN;
            assertThat(errnoOf(() -> qp.modify(a, rtr | QpAttrMask.MAX_DEST_RD_ATOMIC)))
                    .as("UC has no reads to take")
                    .isEqualTo(Errno.EINVAL);
            qp.modify(a, rtr);
            a.qpState = QpState.RTS;
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.RETRY_CNT)))
                    .as("UC has no retries")
                    .isEqualTo(Errno.EINVAL);
            qp.modify(a, QpAttrMask.STATE | QpAttrMask.SQ_PSN);
            assertThat(qp.state()).isEqualTo(QpState.RTS);
            for (final WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD}) {
                final SendWorkRequest w = wr(f, op, 1, 0, 8);
                assertThat(errnoOf(() -> qp.postSend(w))).as(op + " on UC").isEqualTo(Errno.EINVAL);
            }
            Fabric.destroy(qp);
        }
    }

    @Test
    void ucWritesAndSendsArriveByteForByteWithoutAnyAck() {
        try (Fabric f = fabric()) {
            final QueuePair[] p = f.connectUc(null);
            final QueuePair qa = p[0];
            final QueuePair qb = p[1];
            final List<Integer> opcodes = new ArrayList<>();
            f.tapAtoB(frame -> opcodes.add(opcode(frame)));
            fill(f, 0, 64 << 10, 1);
            recv(f, qb, 100, 1 << 20, 8192);
            recv(f, qb, 101, 2 << 20, 8192);
            recv(f, qb, 102, 3 << 20, 16);
            // no rkey: the responder drops it, counts it and never NAKs
            qa.postSend(wr(f, WrOpcode.RDMA_WRITE, 1, 0, 3000)); // first, middle, last
            final SendWorkRequest w1 = wr(f, WrOpcode.RDMA_WRITE, 1, 0, 3000);
            w1.remoteAddr = Fabric.BASE;
            w1.rkey = f.b.mr.rkey();
            qa.postSend(w1);
            final SendWorkRequest wi = wr(f, WrOpcode.RDMA_WRITE_WITH_IMM, 2, 4096, 500);
            wi.remoteAddr = Fabric.BASE + 3 * 4096;
            wi.rkey = f.b.mr.rkey();
            wi.immData = 0x1234;
            qa.postSend(wi);
            final SendWorkRequest s = wr(f, WrOpcode.SEND_WITH_IMM, 3, 8192, 5000);
            s.immData = 77;
            s.sendFlags |= SendFlags.SOLICITED;
            qa.postSend(s);
            qa.postSend(wr(f, WrOpcode.SEND, 4, 0, 100));
            final List<WorkCompletion> sent = drain(f.a.cq);
            assertThat(sent)
                    .as("sender completions at post time, before anything arrived")
                    .hasSize(5)
                    .allMatch(c -> c.status == WcStatus.SUCCESS);
            f.settle();
            assertThat(same(f, 0, 0, 3000)).isTrue();
            assertThat(same(f, 4096, 3 * 4096, 500)).isTrue();
            assertThat(same(f, 8192, 2 << 20, 5000)).isTrue();
            final List<WorkCompletion> got = drain(f.b.cq);
            assertThat(got).hasSize(3);
            assertThat(got.get(0).opcode).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
            assertThat(got.get(0).wrId).isEqualTo(100);
            assertThat(got.get(0).byteLen).isEqualTo(500);
            assertThat(got.get(0).immData).isEqualTo(0x1234);
            assertThat(got.get(1).opcode).isEqualTo(WcOpcode.RECV);
            assertThat(got.get(1).wrId).isEqualTo(101);
            assertThat(got.get(1).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(got.get(1).byteLen).isEqualTo(5000);
            assertThat(got.get(1).immData).isEqualTo(77);
            assertThat(got.get(2).wrId).isEqualTo(102);
            assertThat(got.get(2).status).as("100 bytes into a 16-byte receive").isEqualTo(WcStatus.LOC_LEN_ERR);
            assertThat(qb.counters().txPackets).as("UC never answers").isZero();
            assertThat(qb.counters().ucDroppedMessages)
                    .as("the WRITE without rkey, the SEND too long")
                    .isEqualTo(2);
            assertThat(opcodes)
                    .startsWith(0x26, 0x27, 0x28) // UC RDMA WRITE first, middle, last (the one without rkey)
                    .contains(0x2B) // UC RDMA WRITE only with immediate
                    .contains(0x20, 0x21, 0x21, 0x21, 0x23); // UC SEND first, 3 middle, last with immediate
            assertThat(qa.state()).isEqualTo(QpState.RTS);
            assertThat(qb.state()).isEqualTo(QpState.RTS);
        }
    }

    @Test
    void aLostPacketDropsItsMessageAndTheReceiveServesTheNextOne() {
        try (Fabric f = fabric()) {
            final QueuePair[] p = f.connectUc(null);
            final QueuePair qa = p[0];
            final QueuePair qb = p[1];
            final int dropPsn = 0x300 + 1; // the middle packet of the first SEND
            f.dropAtoB(frame -> psn(frame) == dropPsn);
            fill(f, 0, 16384, 5);
            recv(f, qb, 200, 1 << 20, 4096);
            recv(f, qb, 201, 2 << 20, 4096);
            qa.postSend(wr(f, WrOpcode.SEND, 1, 0, 3000)); // PSN 0x300..0x302, 0x301 lost
            qa.postSend(wr(f, WrOpcode.SEND, 2, 4096, 2500)); // PSN 0x303..0x305
            final SendWorkRequest w = wr(f, WrOpcode.RDMA_WRITE, 3, 8192, 4000);
            w.remoteAddr = Fabric.BASE + 3 * 4096;
            w.rkey = f.b.mr.rkey();
            qa.postSend(w);
            assertThat(drain(f.a.cq)).hasSize(3).allMatch(c -> c.status == WcStatus.SUCCESS);
            f.settle();
            final List<WorkCompletion> got = drain(f.b.cq);
            assertThat(got)
                    .as("the first SEND is gone; its receive took the second")
                    .hasSize(1);
            assertThat(got.get(0).wrId).isEqualTo(200);
            assertThat(got.get(0).byteLen).isEqualTo(2500);
            assertThat(got.get(0).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(same(f, 4096, 1 << 20, 2500)).isTrue();
            assertThat(same(f, 8192, 3 * 4096, 4000))
                    .as("the WRITE after the loss")
                    .isTrue();
            assertThat(qb.counters().ucDroppedMessages).isEqualTo(1);
            assertThat(qa.counters().retransmittedPackets).isZero();
            assertThat(qb.counters().txPackets).isZero();
            assertThat(qb.state()).isEqualTo(QpState.RTS);
        }
    }

    @Test
    void commEstIsRaisedOnceWhenTheFirstPacketReachesAnRtrQp() {
        try (Fabric f = fabric()) {
            final List<AsyncEventType> events = new ArrayList<>();
            final List<Object> sources = new ArrayList<>();
            f.b.device.asyncEventHandler((type, source) -> {
                events.add(type);
                sources.add(source);
            });
            // UC: B stays in RTR, A sends two messages
            final QueuePair qa = f.a.ctx.createQueuePair(f.a.pd, QpInitAttr.of(QpType.UC, f.a.cq));
            final QueuePair qb = f.b.ctx.createQueuePair(f.b.pd, QpInitAttr.of(QpType.UC, f.b.cq));
            Fabric.ucToRts(qa, qb.qpNum(), Fabric.IP_B, 0xB);
            Fabric.ucToRtr(qb, qa.qpNum(), Fabric.IP_A, 0xA, 0x300);
            recv(f, qb, 1, 0, 4096);
            recv(f, qb, 2, 4096, 4096);
            qa.postSend(wr(f, WrOpcode.SEND, 1, 0, 100));
            qa.postSend(wr(f, WrOpcode.SEND, 2, 0, 100));
            f.settle();
            assertThat(events).containsExactly(AsyncEventType.COMM_EST);
            assertThat(sources).containsExactly(qb);
            assertThat(drain(f.b.cq)).hasSize(2).allMatch(c -> c.status == WcStatus.SUCCESS);
            // RC: the responder in RTR while the requester already sends; RTS afterwards raises nothing
            events.clear();
            sources.clear();
            final QpInitAttr ia = QpInitAttr.of(QpType.RC, f.a.cq);
            final QpInitAttr ib = QpInitAttr.of(QpType.RC, f.b.cq);
            final QueuePair ra = f.a.ctx.createQueuePair(f.a.pd, ia);
            final QueuePair rb = f.b.ctx.createQueuePair(f.b.pd, ib);
            RcConnector.connect(ra, rb.qpNum(), Fabric.IP_B, 0xB, Mtu.MTU_1024, 0x100, 0x200, 14);
            RcConnector.toRtr(rb, ra.qpNum(), Fabric.IP_A, 0xA, Mtu.MTU_1024, 0x100);
            recv(f, rb, 3, 0, 4096);
            recv(f, rb, 4, 4096, 4096);
            ra.postSend(wr(f, WrOpcode.SEND, 3, 0, 100));
            f.settle();
            assertThat(events).containsExactly(AsyncEventType.COMM_EST);
            assertThat(sources).containsExactly(rb);
            RcConnector.toRts(rb, 0x200, 14);
            ra.postSend(wr(f, WrOpcode.SEND, 4, 0, 100));
            f.settle();
            assertThat(events).as("nothing more in RTS").hasSize(1);
            assertThat(drain(f.b.cq)).hasSize(2).allMatch(c -> c.status == WcStatus.SUCCESS);
            Fabric.destroy(qa, qb, ra, rb);
        }
    }

    @Test
    void portDownRaisesPortErrStopsTheLinkAndUpRaisesPortActive() {
        try (Fabric f = fabric()) {
            final List<AsyncEventType> events = new ArrayList<>();
            final List<Object> sources = new ArrayList<>();
            f.a.device.asyncEventHandler((type, source) -> {
                events.add(type);
                sources.add(source);
            });
            final QueuePair[] p = f.connectUc(null);
            recv(f, p[1], 1, 0, 4096);
            f.a.device.portActive(false);
            f.a.device.portActive(false); // no change, no event
            assertThat(f.a.device.portActive()).isFalse();
            p[0].postSend(wr(f, WrOpcode.SEND, 1, 0, 100));
            f.settle();
            assertThat(drain(f.b.cq)).as("nothing left a port that is down").isEmpty();
            assertThat(f.a.device.counters().droppedPackets)
                    .as("the SEND, dropped at the port")
                    .isEqualTo(1);
            f.a.device.portActive(true);
            p[0].postSend(wr(f, WrOpcode.SEND, 2, 0, 100));
            f.settle();
            assertThat(drain(f.b.cq)).hasSize(1);
            assertThat(events).containsExactly(AsyncEventType.PORT_ERR, AsyncEventType.PORT_ACTIVE);
            assertThat(sources).containsExactly(Device.PORT_NUM, Device.PORT_NUM);
        }
    }
}
