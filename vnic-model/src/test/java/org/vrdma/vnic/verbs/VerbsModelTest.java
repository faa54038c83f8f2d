package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vnic.verbs.Fabric.errnoOf;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.memory.ByteBufMemory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/** The verbs object model: state machine, validation, errno codes, CQ events, SRQ, UD. */
class VerbsModelTest {
    private static Fabric fabric() {
        return new Fabric(1, Fabric.fastLink(), TransportConfig.defaults());
    }

    private static QueuePair rcQp(final Fabric f) {
        return f.a.ctx.createQueuePair(f.a.pd, QpInitAttr.of(QpType.RC, f.a.cq));
    }

    @Test
    void stateMachineFollowsTheSpecTable() {
        try (Fabric f = fabric()) {
            final QueuePair qp = rcQp(f);
            final QpAttr a = new QpAttr();
            // RESET -> RTR does not exist
            a.qpState = QpState.RTR;
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE))).isEqualTo(Errno.EINVAL);
            // RESET -> INIT needs PKEY_INDEX | PORT | ACCESS_FLAGS for RC
            a.qpState = QpState.INIT;
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE | QpAttrMask.PORT)))
                    .isEqualTo(Errno.EINVAL);
            // ... and allows nothing else (QKEY is UD's)
            assertThat(errnoOf(() -> qp.modify(
                            a,
                            QpAttrMask.STATE
                                    | QpAttrMask.PKEY_INDEX
                                    | QpAttrMask.PORT
                                    | QpAttrMask.ACCESS_FLAGS
                                    | QpAttrMask.QKEY)))
                    .isEqualTo(Errno.EINVAL);
            // CUR_STATE is not allowed from RESET
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE | QpAttrMask.CUR_STATE)))
                    .isEqualTo(Errno.EINVAL);
            a.portNum = 2;
            assertThat(errnoOf(() -> qp.modify(
                            a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS)))
                    .isEqualTo(Errno.EINVAL);
            assertThat(qp.state()).isEqualTo(QpState.RESET);
            a.portNum = 1;
            qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
            assertThat(qp.state()).isEqualTo(QpState.INIT);
            // INIT -> RTR without MIN_RNR_TIMER
            a.qpState = QpState.RTR;
            a.ahAttr = AhAttr.of(Fabric.IP_B, 0xB);
            a.pathMtu = Mtu.MTU_4096;
            final int rtrMask = QpAttrMask.STATE
                    | QpAttrMask.AV
                    | QpAttrMask.PATH_MTU
                    | QpAttrMask.DEST_QPN
                    | QpAttrMask.RQ_PSN
                    | QpAttrMask.MAX_DEST_RD_ATOMIC;
            assertThat(errnoOf(() -> qp.modify(a, rtrMask))).isEqualTo(Errno.EINVAL);
            a.maxDestRdAtomic = 99;
            assertThat(errnoOf(() -> qp.modify(a, rtrMask | QpAttrMask.MIN_RNR_TIMER)))
                    .isEqualTo(Errno.EINVAL);
            a.maxDestRdAtomic = 4;
            qp.modify(a, rtrMask | QpAttrMask.MIN_RNR_TIMER);
            // RTR -> RTS: retry_cnt is 3 bits
            a.qpState = QpState.RTS;
            a.retryCnt = 8;
            final int rtsMask = QpAttrMask.STATE
                    | QpAttrMask.TIMEOUT
                    | QpAttrMask.RETRY_CNT
                    | QpAttrMask.RNR_RETRY
                    | QpAttrMask.SQ_PSN
                    | QpAttrMask.MAX_QP_RD_ATOMIC;
            assertThat(errnoOf(() -> qp.modify(a, rtsMask))).isEqualTo(Errno.EINVAL);
            a.retryCnt = 7;
            qp.modify(a, rtsMask);
            assertThat(qp.query().qpState).isEqualTo(QpState.RTS);
            // RTS -> SQD -> RTS, SQD -> SQD may change the timeout; RTS -> INIT does not exist
            a.qpState = QpState.INIT;
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE))).isEqualTo(Errno.EINVAL);
            final List<AsyncEventType> events = new ArrayList<>();
            f.a.device.asyncEventHandler((type, source) -> events.add(type));
            a.qpState = QpState.SQD;
            a.enSqdAsyncNotify = true;
            qp.modify(a, QpAttrMask.STATE | QpAttrMask.EN_SQD_ASYNC_NOTIFY);
            assertThat(events).containsExactly(AsyncEventType.SQ_DRAINED);
            a.timeout = 12;
            qp.modify(a, QpAttrMask.TIMEOUT);
            assertThat(qp.query().timeout).isEqualTo(12);
            a.qpState = QpState.RTS;
            a.curQpState = QpState.SQD;
            qp.modify(a, QpAttrMask.STATE | QpAttrMask.CUR_STATE);
            // anything -> ERR -> RESET
            a.qpState = QpState.ERR;
            qp.modify(a, QpAttrMask.STATE);
            a.qpState = QpState.RTS;
            assertThat(errnoOf(() -> qp.modify(a, QpAttrMask.STATE))).isEqualTo(Errno.EINVAL);
            a.qpState = QpState.RESET;
            qp.modify(a, QpAttrMask.STATE);
            assertThat(qp.query().timeout).isZero();
            qp.destroy();
        }
    }

    @Test
    void postingIsValidated() {
        try (Fabric f = fabric()) {
            final QueuePair fresh = rcQp(f);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.addSge(Fabric.BASE, 8, f.a.mr.lkey());
            assertThat(errnoOf(() -> fresh.postSend(wr))).isEqualTo(Errno.EINVAL); // RESET
            assertThat(errnoOf(() -> fresh.postRecv(new RecvWorkRequest()))).isEqualTo(Errno.EINVAL);
            fresh.destroy();

            final QueuePair qp = f.connectRc(RecoveryMode.GO_BACK_N, new QpCap(2, 2, 2, 2, 16), Mtu.MTU_1024)[0];
            wr.reset().addSge(Fabric.BASE, 8, f.a.mr.lkey()).addSge(Fabric.BASE, 8, f.a.mr.lkey());
            wr.addSge(Fabric.BASE, 8, f.a.mr.lkey());
            assertThat(errnoOf(() -> qp.postSend(wr))).isEqualTo(Errno.EINVAL); // num_sge > max_send_sge
            wr.reset();
            wr.sendFlags = SendFlags.INLINE;
            wr.inlineData = Unpooled.wrappedBuffer(new byte[17]);
            assertThat(errnoOf(() -> qp.postSend(wr))).isEqualTo(Errno.EINVAL); // inline > max_inline_data
            wr.reset();
            wr.opcode = WrOpcode.ATOMIC_FETCH_AND_ADD;
            wr.addSge(Fabric.BASE, 4, f.a.mr.lkey());
            assertThat(errnoOf(() -> qp.postSend(wr))).isEqualTo(Errno.EINVAL); // atomics are 8 bytes
            // Queue full: the link is cut so nothing completes.
            f.ab.faults(org.vrdma.runtime.FaultConfig.randomLoss(1.0));
            wr.reset();
            wr.opcode = WrOpcode.SEND;
            qp.postSend(wr);
            qp.postSend(wr);
            assertThat(errnoOf(() -> qp.postSend(wr))).isEqualTo(Errno.ENOMEM);
        }
    }

    @Test
    void memoryRegionsAndTeardownCheckEverything() {
        try (Fabric f = fabric()) {
            final ByteBufMemory mem = ByteBufMemory.allocate(PooledByteBufAllocator.DEFAULT, 4096);
            try {
                assertThat(errnoOf(() -> f.a.pd.registerMemoryRegion(mem, 0, AccessFlags.REMOTE_WRITE)))
                        .isEqualTo(Errno.EINVAL);
                assertThat(errnoOf(() -> f.a.pd.registerMemoryRegion(mem, 0, 1 << 7)))
                        .isEqualTo(Errno.EINVAL);
                final MemoryRegion mr = f.a.pd.registerMemoryRegion(mem, 0x4000, AccessFlags.LOCAL_WRITE);
                assertThat(mr.lkey()).isEqualTo(mr.rkey());
                final ProtectionDomain pd = f.a.ctx.allocatePd();
                final MemoryRegion other = pd.registerMemoryRegion(mem, 0, 0);
                assertThat(errnoOf(pd::deallocate)).isEqualTo(Errno.EBUSY);
                assertThat(errnoOf(f.a.ctx::close)).isEqualTo(Errno.EBUSY);
                other.deregister();
                assertThat(errnoOf(other::deregister)).isEqualTo(Errno.EINVAL);
                pd.deallocate();
                mr.deregister();
                final QueuePair qp = rcQp(f);
                assertThat(errnoOf(f.a.cq::destroy)).as("a QP uses it").isEqualTo(Errno.EBUSY);
                qp.destroy();
            } finally {
                mem.release();
            }
        }
    }

    @Test
    void deviceLimitsAreEnforced() {
        final DeviceAttributes attrs = DeviceAttributes.defaults().withMaxMr(2);
        try (Fabric f = new Fabric(1, Fabric.fastLink(), TransportConfig.defaults(), attrs)) {
            final ByteBufMemory mem = ByteBufMemory.allocate(PooledByteBufAllocator.DEFAULT, 64);
            try {
                final MemoryRegion second = f.a.pd.registerMemoryRegion(mem, 0, 0);
                assertThat(errnoOf(() -> f.a.pd.registerMemoryRegion(mem, 0, 0)))
                        .isEqualTo(Errno.ENOMEM);
                second.deregister();
            } finally {
                mem.release();
            }
            assertThat(errnoOf(() -> f.a.ctx.createCompletionQueue(0, null))).isEqualTo(Errno.EINVAL);
            final QpInitAttr tooBig = QpInitAttr.of(QpType.RC, f.a.cq);
            tooBig.cap = new QpCap(1 << 20, 1, 1, 1, 0);
            assertThat(errnoOf(() -> f.a.ctx.createQueuePair(f.a.pd, tooBig))).isEqualTo(Errno.EINVAL);
        }
    }

    @Test
    void completionChannelHonoursSolicitedOnlyAndOverrunIsAnError() {
        try (Fabric f = fabric()) {
            final CompletionChannel ch = f.b.ctx.createCompletionChannel();
            final CompletionQueue cq = f.b.ctx.createCompletionQueue(2, ch);
            final QpInitAttr ia = QpInitAttr.of(QpType.RC, f.a.cq);
            final QueuePair qa = f.a.ctx.createQueuePair(f.a.pd, ia);
            final QpInitAttr ib = QpInitAttr.of(QpType.RC, cq);
            final QueuePair qb = f.b.ctx.createQueuePair(f.b.pd, ib);
            Fabric.toRts(qa, qb.qpNum(), Fabric.IP_B, 0xB, Mtu.MTU_1024, 1, 2);
            Fabric.toRts(qb, qa.qpNum(), Fabric.IP_A, 0xA, Mtu.MTU_1024, 2, 1);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.addSge(Fabric.BASE, 64, f.b.mr.lkey());
            for (int i = 0; i < 4; i++) {
                r.wrId = i;
                qb.postRecv(r);
            }
            final List<AsyncEventType> events = new ArrayList<>();
            f.b.device.asyncEventHandler((type, source) -> events.add(type));
            cq.requestNotify(true);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.addSge(Fabric.BASE, 16, f.a.mr.lkey());
            qa.postSend(wr);
            f.settle();
            assertThat(ch.getEvent()).as("unsolicited completion does not wake").isNull();
            wr.sendFlags = SendFlags.SOLICITED;
            qa.postSend(wr);
            f.settle();
            assertThat(ch.getEvent()).isSameAs(cq);
            assertThat(errnoOf(cq::destroy)).isEqualTo(Errno.EBUSY);
            cq.ackEvents(1);
            qa.postSend(wr); // third completion overruns the 2-entry CQ
            f.settle();
            assertThat(events).contains(AsyncEventType.CQ_ERR);
            assertThat(errnoOf(() -> cq.poll(new WorkCompletion[] {new WorkCompletion()})))
                    .isEqualTo(Errno.EIO);
            Fabric.destroy(qa, qb);
            cq.destroy();
            ch.destroy();
        }
    }

    @Test
    void sharedReceiveQueueServesTwoQpsAndRaisesItsLimit() {
        try (Fabric f = fabric()) {
            final SharedReceiveQueue srq = f.srq(f.b, 16, 0);
            final List<AsyncEventType> events = new ArrayList<>();
            f.b.device.asyncEventHandler((type, source) -> events.add(type));
            final RecvWorkRequest r = new RecvWorkRequest();
            for (int i = 0; i < 4; i++) {
                r.reset().addSge(Fabric.BASE + 128L * i, 128, f.b.mr.lkey());
                r.wrId = i;
                srq.postRecv(r);
            }
            srq.modify(0, 3, SharedReceiveQueue.ATTR_LIMIT);
            final QueuePair[] pairs = new QueuePair[4];
            for (int k = 0; k < 2; k++) {
                final QueuePair[] rc = f.connectRc(srq);
                assertThat(errnoOf(() -> rc[1].postRecv(r))).isEqualTo(Errno.EINVAL);
                pairs[2 * k] = rc[0];
                pairs[2 * k + 1] = rc[1];
            }
            final SendWorkRequest wr = new SendWorkRequest();
            wr.addSge(Fabric.BASE, 100, f.a.mr.lkey());
            pairs[0].postSend(wr);
            f.settle();
            pairs[2].postSend(wr);
            f.settle();
            final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            assertThat(f.b.cq.poll(wcs)).isEqualTo(2);
            assertThat(wcs[0].wrId).isZero();
            assertThat(wcs[1].wrId).isEqualTo(1);
            assertThat(wcs[0].qpNum).isEqualTo(pairs[1].qpNum());
            assertThat(wcs[1].qpNum).isEqualTo(pairs[3].qpNum());
            assertThat(events).containsExactly(AsyncEventType.SRQ_LIMIT_REACHED);
            assertThat(errnoOf(srq::destroy)).isEqualTo(Errno.EBUSY);
        }
    }

    @Test
    void sharedReceiveQueueResizesKeepingItsReceivesInOrder() {
        try (Fabric f = fabric()) {
            final SharedReceiveQueue srq = f.srq(f.b, 4, 0);
            final RecvWorkRequest r = new RecvWorkRequest();
            for (int i = 0; i < 4; i++) {
                r.reset().addSge(Fabric.BASE + 128L * i, 128, f.b.mr.lkey());
                r.wrId = i;
                srq.postRecv(r);
            }
            assertThat(errnoOf(() -> srq.postRecv(r))).isEqualTo(Errno.ENOMEM);
            // Below the receives posted, zero, beyond the device, or a limit beyond the new size: EINVAL, unchanged.
            assertThat(errnoOf(() -> srq.modify(3, 0, SharedReceiveQueue.ATTR_MAX_WR)))
                    .isEqualTo(Errno.EINVAL);
            assertThat(errnoOf(() -> srq.modify(0, 0, SharedReceiveQueue.ATTR_MAX_WR)))
                    .isEqualTo(Errno.EINVAL);
            final int deviceMax = f.b.device.attributes().maxSrqWr();
            assertThat(errnoOf(() -> srq.modify(deviceMax + 1, 0, SharedReceiveQueue.ATTR_MAX_WR)))
                    .isEqualTo(Errno.EINVAL);
            assertThat(errnoOf(() -> srq.modify(4, 5, SharedReceiveQueue.ATTR_MAX_WR | SharedReceiveQueue.ATTR_LIMIT)))
                    .isEqualTo(Errno.EINVAL);
            assertThat(srq.maxWr()).isEqualTo(4);
            // Grow to 10 with a limit of 6 in one call: four more receives fit, the fifth is ENOMEM.
            srq.modify(10, 6, SharedReceiveQueue.ATTR_MAX_WR | SharedReceiveQueue.ATTR_LIMIT);
            assertThat(srq.maxWr()).isEqualTo(10);
            assertThat(srq.limit()).isEqualTo(6);
            for (int i = 4; i < 10; i++) {
                r.reset().addSge(Fabric.BASE + 128L * i, 128, f.b.mr.lkey());
                r.wrId = i;
                srq.postRecv(r);
            }
            assertThat(errnoOf(() -> srq.postRecv(r))).isEqualTo(Errno.ENOMEM);
            // Messages take the receives in the order they were posted, across the resize.
            final QueuePair qa = f.connectRc(srq)[0];
            final SendWorkRequest wr = new SendWorkRequest();
            wr.addSge(Fabric.BASE, 100, f.a.mr.lkey());
            for (int i = 0; i < 5; i++) {
                qa.postSend(wr);
            }
            f.settle();
            final WorkCompletion[] wcs = new WorkCompletion[8];
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            assertThat(f.b.cq.poll(wcs)).isEqualTo(5);
            for (int i = 0; i < 5; i++) {
                assertThat(wcs[i].wrId).isEqualTo(i);
            }
            assertThat(srq.size()).isEqualTo(5);
            // Shrink to exactly what is posted.
            srq.modify(5, 0, SharedReceiveQueue.ATTR_MAX_WR);
            assertThat(srq.maxWr()).isEqualTo(5);
            assertThat(errnoOf(() -> srq.postRecv(r))).isEqualTo(Errno.ENOMEM);
        }
    }

    @Test
    void udDeliversWithGrhAndChecksTheQkey() {
        try (Fabric f = fabric()) {
            final QueuePair[] ud = f.connectUd(0x1234, null);
            final QueuePair ua = ud[0];
            final QueuePair ub = ud[1];
            final RecvWorkRequest r = new RecvWorkRequest();
            r.addSge(Fabric.BASE, 40 + 1024, f.b.mr.lkey());
            r.wrId = 1;
            ub.postRecv(r);
            r.wrId = 2;
            ub.postRecv(r);
            final AddressHandle ah = f.a.pd.createAddressHandle(AhAttr.of(Fabric.IP_B, 0xB));
            f.a.memory.buffer().setBytes(0, "hello, datagram".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            final SendWorkRequest wr = new SendWorkRequest();
            wr.opcode = WrOpcode.SEND_WITH_IMM;
            wr.immData = 77;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.ah = ah;
            wr.remoteQpn = ub.qpNum();
            wr.remoteQkey = 0x1234;
            wr.addSge(Fabric.BASE, 15, f.a.mr.lkey());
            ua.postSend(wr);
            wr.remoteQkey = 0x9999; // wrong key: dropped
            ua.postSend(wr);
            wr.reset().addSge(Fabric.BASE, 4097, f.a.mr.lkey());
            wr.ah = ah;
            assertThat(errnoOf(() -> ua.postSend(wr))).isEqualTo(Errno.EINVAL); // larger than the port's MTU
            f.settle();
            final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            assertThat(f.a.cq.poll(wcs)).isEqualTo(2);
            assertThat(f.b.cq.poll(wcs)).isEqualTo(1);
            assertThat(wcs[0].status).isEqualTo(WcStatus.SUCCESS);
            assertThat(wcs[0].byteLen).isEqualTo(40 + 15);
            assertThat(wcs[0].wcFlags).isEqualTo(WcFlags.GRH | WcFlags.WITH_IMM);
            assertThat(wcs[0].immData).isEqualTo(77);
            assertThat(wcs[0].srcQp).isEqualTo(ua.qpNum());
            final byte[] got = new byte[15];
            f.b.memory.buffer().getBytes(40, got);
            assertThat(new String(got, java.nio.charset.StandardCharsets.US_ASCII))
                    .isEqualTo("hello, datagram");
            assertThat(f.b.memory.buffer().getInt(20 + 12))
                    .as("GRH holds the IPv4 source")
                    .isEqualTo(Fabric.IP_A);
            assertThat(ub.counters().droppedPackets).isEqualTo(1);
            ah.destroy();
        }
    }

    @Test
    void srqLimitCountsTheReceivesTheDriverHasNotHandedOverYet() {
        try (Fabric f = fabric()) {
            final java.util.List<AsyncEventType> events = new java.util.ArrayList<>();
            f.b.device.asyncEventHandler((type, source) -> events.add(type));
            final SharedReceiveQueue srq = f.srq(f.b, 8, 2);
            final QueuePair[] ud = f.connectUd(0x11111111, srq);
            final QueuePair ua = ud[0];
            final QueuePair ub = ud[1];
            final int[] posted = {0};
            final Runnable post = () -> {
                final RecvWorkRequest r = new RecvWorkRequest();
                r.addSge(Fabric.BASE, 40 + 64, f.b.mr.lkey());
                r.wrId = 100 + posted[0]++;
                srq.postRecv(r);
            };
            post.run();
            post.run();
            // Two more are posted by the application but still on their way to the queue.
            final int[] pending = {2};
            srq.receiveRefill(() -> {
                while (pending[0] > 0) {
                    pending[0]--;
                    post.run();
                }
            });
            final AddressHandle ah = f.a.pd.createAddressHandle(AhAttr.of(Fabric.IP_B, 0xB));
            final SendWorkRequest wr = new SendWorkRequest();
            wr.ah = ah;
            wr.remoteQpn = ub.qpNum();
            wr.remoteQkey = 0x11111111;
            wr.addSge(Fabric.BASE, 64, f.a.mr.lkey());
            ua.postSend(wr);
            f.settle();
            assertThat(srq.size()).as("the pending receives joined the queue").isEqualTo(3);
            assertThat(events).as("three receives outstanding, limit 2").isEmpty();
            assertThat(srq.limit()).isEqualTo(2);
            ua.postSend(wr);
            ua.postSend(wr);
            f.settle();
            assertThat(srq.size()).isEqualTo(1);
            assertThat(events).containsExactly(AsyncEventType.SRQ_LIMIT_REACHED);
            assertThat(srq.limit()).isZero();
            ah.destroy();
        }
    }

    @Test
    void udReceivesFromASharedReceiveQueueThatIsRefilledWhenAMessageFindsItEmpty() {
        try (Fabric f = fabric()) {
            final SharedReceiveQueue srq = f.srq(f.b, 4, 0);
            final QueuePair[] ud = f.connectUd(0x11111111, srq);
            final QueuePair ua = ud[0];
            final QueuePair ub = ud[1];
            // The driver keeps its receives elsewhere and hands one over only when a message needs it.
            final int[] refills = {0};
            srq.receiveRefill(() -> {
                refills[0]++;
                final RecvWorkRequest r = new RecvWorkRequest();
                r.addSge(Fabric.BASE, 40 + 4096, f.b.mr.lkey());
                r.wrId = 100 + refills[0];
                srq.postRecv(r);
            });
            final AddressHandle ah = f.a.pd.createAddressHandle(AhAttr.of(Fabric.IP_B, 0xB));
            final SendWorkRequest wr = new SendWorkRequest();
            wr.sendFlags = SendFlags.SIGNALED;
            wr.ah = ah;
            wr.remoteQpn = ub.qpNum();
            wr.remoteQkey = 0x11111111;
            wr.addSge(Fabric.BASE, 4096, f.a.mr.lkey()); // a full port MTU
            ua.postSend(wr);
            f.settle();
            final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};
            assertThat(f.b.cq.poll(wcs)).isEqualTo(1);
            assertThat(wcs[0].status).isEqualTo(WcStatus.SUCCESS);
            assertThat(wcs[0].wrId).isEqualTo(101);
            assertThat(wcs[0].byteLen).isEqualTo(40 + 4096);
            assertThat(wcs[0].qpNum).isEqualTo(ub.qpNum());
            assertThat(refills[0]).isEqualTo(1);
            assertThat(srq.size()).isZero();
            assertThat(errnoOf(srq::destroy)).isEqualTo(Errno.EBUSY);
            ah.destroy();
        }
    }
}
