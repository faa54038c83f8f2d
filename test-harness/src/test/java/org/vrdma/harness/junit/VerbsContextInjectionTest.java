package org.vrdma.harness.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.vrdma.verbs.IbvCompChannel;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/** Verbs contexts injected by {@link VrdmaLab}: the README's sample, and what other backends say. */
class VerbsContextInjectionTest {
    private static final int BYTES = 1 << 20;

    /** The README's sample: two hosts' contexts, one RDMA WRITE of 1 MiB, compared byte for byte. */
    @Test
    @VrdmaLab(hosts = 2)
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void anRdmaWriteBetweenInjectedContextsArrivesByteExact(IbvContext a, IbvContext b) throws Exception {
        assertThat(a.queryGid(1, 0).toString()).endsWith("10.100.0.1");
        assertThat(b.queryGid(1, 0).toString()).endsWith("10.100.0.2");
        try (Arena arena = Arena.ofShared();
                IbvPd pdA = a.allocPd();
                IbvPd pdB = b.allocPd();
                IbvCompChannel channel = a.createCompChannel();
                IbvCq cqA = a.createCq(16, channel);
                IbvCq cqB = b.createCq(16, null);
                IbvMr src = pdA.regMr(arena.allocate(BYTES, 4096), AccessFlags.LOCAL_WRITE);
                IbvMr dst = pdB.regMr(arena.allocate(BYTES, 4096), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                IbvQp qpA = a.createQp(pdA, IbvQpInitAttr.rc(cqA, 16));
                IbvQp qpB = b.createQp(pdB, IbvQpInitAttr.rc(cqB, 16))) {
            MemorySegment data = src.segment();
            SplittableRandom random = new SplittableRandom(42);
            for (long i = 0; i < BYTES; i += 8) {
                data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
            }
            // Both QPs are in this JVM: exchange what perftest exchanges over TCP, then RESET -> RTS.
            QpInfo infoA = QpInfo.of(qpA, src);
            QpInfo infoB = QpInfo.of(qpB, dst);
            QpConnector.rcToRts(qpA, infoA, infoB);
            QpConnector.rcToRts(qpB, infoB, infoA);

            IbvSendWr write = new IbvSendWr(1);
            write.wrId = 7;
            write.opcode = WrOpcode.RDMA_WRITE;
            write.sendFlags = SendFlags.SIGNALED;
            write.remoteAddr = infoB.vaddr();
            write.rkey = infoB.rkey();
            write.addSge(src, 0, BYTES);
            qpA.postSend(write);

            IbvWc[] wc = IbvWc.array(1);
            while (cqA.poll(wc) == 0) {
                cqA.reqNotify(false);
                if (cqA.size() == 0) {
                    IbvCq ev = channel.getCqEvent(Duration.ofSeconds(30));
                    assertThat(ev).as("a completion within 30 s").isNotNull();
                    ev.ackEvents(1);
                }
            }
            assertThat(wc[0].status).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc[0].wrId).isEqualTo(7);
            assertThat(dst.segment().mismatch(data)).isEqualTo(-1); // every byte arrived
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void onNetnsAContextParameterIsAClearErrorAndTheLabIsTornDown() {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(LabFixtures.ContextOnNetns.class))
                .execute();
        results.testEvents().assertStatistics(s -> s.started(1).failed(1));
        Throwable failure = LabFixtures.firstFailure(results);
        assertThat(failure)
                .isInstanceOf(org.junit.jupiter.api.extension.ParameterResolutionException.class)
                .hasMessageContaining("embedded backend only")
                .hasMessageContaining("network namespace");
        assertThat(failure.getSuppressed()).isEmpty(); // teardown found nothing left
    }
}
