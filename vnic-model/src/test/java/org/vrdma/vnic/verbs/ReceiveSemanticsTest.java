package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vnic.verbs.Fabric.drain;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * What the RC and UC responders do with the receive a message consumes, side by side: the same
 * message must find the same receive semantics on both transports, those of InfiniBand and Linux's rxe:
 * an RDMA WRITE with immediate consumes a receive for its completion only, so that receive's scatter
 * list is neither checked nor written; with no receive posted, RC answers RNR and UC drops the
 * message, and neither writes the data of the packet that found none; a zero-length RDMA operation
 * names no memory, so its rkey and address are not checked.
 */
class ReceiveSemanticsTest {
    /** An lkey no region has: a receive that names it fails its protection checks. */
    private static final int BAD_LKEY = 0x7777_7700;

    private static Fabric fabric() {
        return new Fabric(11, Fabric.fastLink(), TransportConfig.defaults());
    }

    /** The connected transports, whose responders share the receive semantics under test. */
    static List<QpType> connected() {
        return List.of(QpType.RC, QpType.UC);
    }

    private static QueuePair[] connect(final Fabric f, final QpType type, final SharedReceiveQueue srq) {
        return type == QpType.RC ? f.connectRc(srq) : f.connectUc(srq);
    }

    private static void postRecv(final QueuePair qb, final SharedReceiveQueue srq, final RecvWorkRequest r) {
        if (srq != null) {
            srq.postRecv(r);
        } else {
            qb.postRecv(r);
        }
    }

    private static SendWorkRequest writeImm(final Fabric f, final long wrId, final int len, final int imm) {
        final SendWorkRequest w = new SendWorkRequest();
        w.opcode = WrOpcode.RDMA_WRITE_WITH_IMM;
        w.wrId = wrId;
        w.sendFlags = SendFlags.SIGNALED;
        w.immData = imm;
        w.remoteAddr = Fabric.BASE + (1 << 20);
        w.rkey = f.b.mr.rkey();
        if (len > 0) {
            w.addSge(Fabric.BASE, len, f.a.mr.lkey());
        }
        return w;
    }

    private static void fill(final Fabric f, final int len) {
        for (int i = 0; i < len; i++) {
            f.a.memory.buffer().setByte(i, (byte) (i * 13 + 5));
        }
    }

    /** Whether B holds at {@code 1 MiB} the {@code len} bytes A holds at 0. */
    private static boolean written(final Fabric f, final int len) {
        return f.a.memory.buffer().slice(0, len).equals(f.b.memory.buffer().slice(1 << 20, len));
    }

    private static boolean untouched(final Fabric f, final int len) {
        for (int i = 0; i < len; i++) {
            if (f.b.memory.buffer().getByte((1 << 20) + i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Nothing failed either QP and the responder dropped no message. */
    private static void assertStillConnected(final QueuePair[] qp) {
        assertThat(qp[0].state()).isEqualTo(QpState.RTS);
        assertThat(qp[1].state()).isEqualTo(QpState.RTS);
        assertThat(qp[1].counters().ucDroppedMessages).isZero();
    }

    @ParameterizedTest
    @CsvSource({"RC, false", "RC, true", "UC, false", "UC, true"})
    void aWriteWithImmediateUsesItsReceiveForTheCompletionOnly(final QpType type, final boolean shared) {
        try (Fabric f = fabric()) {
            final SharedReceiveQueue srq = shared ? f.srq(f.b, 16, 0) : null;
            final QueuePair[] qp = connect(f, type, srq);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 10;
            r.addSge(Fabric.BASE, 16, BAD_LKEY); // names no region, and holds 16 bytes of the 3000
            postRecv(qp[1], srq, r);
            r.reset().wrId = 11; // no scatter list at all
            postRecv(qp[1], srq, r);
            r.reset().wrId = 12;
            r.addSge(Fabric.BASE + (2 << 20), 4096, f.b.mr.lkey());
            postRecv(qp[1], srq, r);
            fill(f, 3000);
            qp[0].postSend(writeImm(f, 1, 3000, 0xCAFE)); // first, middle, last with immediate
            qp[0].postSend(writeImm(f, 2, 0, 0xBEEF));
            final SendWorkRequest s = new SendWorkRequest();
            s.opcode = WrOpcode.SEND_WITH_IMM;
            s.wrId = 3;
            s.sendFlags = SendFlags.SIGNALED;
            s.immData = 0xF00D;
            s.addSge(Fabric.BASE, 100, f.a.mr.lkey());
            qp[0].postSend(s);
            f.runUntil(() -> f.b.cq.size() == 3, 100_000_000L);
            f.settle();
            assertThat(drain(f.a.cq)).extracting(c -> c.status).containsOnly(WcStatus.SUCCESS);
            final List<WorkCompletion> got = drain(f.b.cq);
            assertThat(got).extracting(c -> c.wrId).containsExactly(10L, 11L, 12L);
            assertThat(got).extracting(c -> c.status).containsOnly(WcStatus.SUCCESS);
            assertThat(got)
                    .extracting(c -> c.opcode)
                    .containsExactly(WcOpcode.RECV_RDMA_WITH_IMM, WcOpcode.RECV_RDMA_WITH_IMM, WcOpcode.RECV);
            assertThat(got)
                    .as("byte_len of a WRITE with immediate is the WRITE's length")
                    .extracting(c -> c.byteLen)
                    .containsExactly(3000, 0, 100);
            assertThat(got).extracting(c -> c.wcFlags).containsOnly(WcFlags.WITH_IMM);
            assertThat(got).extracting(c -> c.immData).containsExactly(0xCAFE, 0xBEEF, 0xF00D);
            assertThat(got).extracting(c -> c.qpNum).containsOnly(qp[1].qpNum());
            assertThat(got).extracting(c -> c.srcQp).containsOnly(qp[0].qpNum());
            assertThat(written(f, 3000)).isTrue();
            assertStillConnected(qp);
        }
    }

    @ParameterizedTest
    @MethodSource("connected")
    void aWriteWithImmediateThatFindsNoReceiveWritesNothing(final QpType type) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, type, null);
            fill(f, 500);
            qp[0].postSend(writeImm(f, 1, 500, 0x51));
            f.scheduler.runFor(2_000_000);
            assertThat(untouched(f, 500))
                    .as("the packet that found no receive placed nothing")
                    .isTrue();
            assertThat(f.b.cq.size()).isZero();
            if (type == QpType.RC) {
                assertThat(qp[1].counters().rnrNaksSent).isPositive();
                assertThat(f.a.cq.size()).as("RNR retry is infinite: it waits").isZero();
            } else {
                assertThat(qp[1].counters().ucDroppedMessages).isEqualTo(1);
                assertThat(qp[1].counters().udNoReceiveDrops).isEqualTo(1);
                assertThat(drain(f.a.cq)).extracting(c -> c.status).containsExactly(WcStatus.SUCCESS);
                qp[0].postSend(writeImm(f, 2, 500, 0x52)); // UC sends again only when asked to
            }
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 7;
            qp[1].postRecv(r);
            f.runUntil(() -> f.b.cq.size() == 1, 100_000_000L);
            final WorkCompletion c = drain(f.b.cq).get(0);
            assertThat(c.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(c.wrId).isEqualTo(7);
            assertThat(c.immData).isEqualTo(type == QpType.RC ? 0x51 : 0x52);
            assertThat(written(f, 500)).isTrue();
            assertThat(qp[1].state()).isEqualTo(QpState.RTS);
        }
    }

    @ParameterizedTest
    @MethodSource("connected")
    void aZeroLengthRdmaOperationNeedsNoRkey(final QpType type) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, type, null);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 5;
            qp[1].postRecv(r);
            final List<WrOpcode> ops = new ArrayList<>(List.of(WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM));
            if (type == QpType.RC) {
                ops.add(WrOpcode.RDMA_READ);
            }
            for (final WrOpcode op : ops) {
                final SendWorkRequest w = new SendWorkRequest();
                w.opcode = op;
                w.wrId = op.ordinal();
                w.sendFlags = SendFlags.SIGNALED;
                w.immData = 0x77;
                qp[0].postSend(w); // remote address 0, rkey 0: no memory is named
            }
            f.runUntil(() -> f.a.cq.size() == ops.size(), 100_000_000L);
            f.settle();
            final List<WorkCompletion> sent = drain(f.a.cq);
            assertThat(sent).extracting(c -> c.status).containsOnly(WcStatus.SUCCESS);
            assertThat(sent).hasSize(ops.size());
            final List<WorkCompletion> got = drain(f.b.cq);
            assertThat(got).hasSize(1);
            assertThat(got.get(0).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(got.get(0).opcode).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
            assertThat(got.get(0).byteLen).isZero();
            assertThat(got.get(0).immData).isEqualTo(0x77);
            assertStillConnected(qp);
        }
    }

    @ParameterizedTest
    @MethodSource("connected")
    void aQueuePairInErrorTakesNoReceiveFromItsSharedQueue(final QpType type) {
        try (Fabric f = fabric()) {
            final SharedReceiveQueue srq = f.srq(f.b, 16, 0);
            final QueuePair[] qp = connect(f, type, srq);
            final List<AsyncEventType> events = new ArrayList<>();
            f.b.device.asyncEventHandler((t, source) -> events.add(t));
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 9;
            srq.postRecv(r);
            final QpAttr err = new QpAttr();
            err.qpState = QpState.ERR;
            qp[1].modify(err, QpAttrMask.STATE);
            fill(f, 200);
            qp[0].postSend(writeImm(f, 1, 200, 0x99));
            f.scheduler.runFor(2_000_000);
            assertThat(events).containsExactly(AsyncEventType.QP_LAST_WQE_REACHED);
            assertThat(srq.size())
                    .as("the receive stays for the queue's other QPs")
                    .isEqualTo(1);
            assertThat(f.b.cq.size()).isZero();
            assertThat(untouched(f, 200)).isTrue();
            assertThat(qp[1].counters().droppedPackets).isPositive();
        }
    }
}
