package org.vrdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * Large RDMA READs between two hosts in this JVM over real UDP on 127.0.0.1, clean and with 1 %
 * seeded loss injected by both vSwitches: byte-exact, and answered by about as many responses as
 * the READ has packets (a READ is requested a window at a time, so a lost response costs a window,
 * not the whole READ again).
 */
class LargeReadTest {
    private static final int PMTU = 4096;

    private VerbsHost hostA;
    private VerbsHost hostB;
    private Peer a;
    private Peer b;

    @AfterEach
    void stop() {
        try {
            if (a != null) {
                a.close();
            }
            if (b != null) {
                b.close();
            }
        } finally {
            if (hostA != null) {
                hostA.close();
            }
            if (hostB != null) {
                hostB.close();
            }
        }
    }

    /**
     * The last two cases shrink both sockets' receive buffers to what an ordinary user gets from a
     * stock {@code net.core.rmem_max} of 212,992 bytes (the kernel doubles it): READ responses in
     * flight are bounded by the TX window, not by how much the socket holds.
     */
    @ParameterizedTest(name = "{0} bytes, loss {1}, SO_RCVBUF request {2}")
    @CsvSource({
        "1048576, 0, 0",
        "16777216, 0, 0",
        "1048576, 0.01, 0",
        "16777216, 0.01, 0",
        "1048576, 0, 212992",
        "16777216, 0.01, 212992"
    })
    void largeReadIsByteExact(final int bytes, final double loss, final int rcvbufBytes) throws Exception {
        hostA = VerbsHost.start(Peer.hostOptions("lr-a", "10.0.0.1"));
        hostB = VerbsHost.start(Peer.hostOptions("lr-b", "10.0.0.2"));
        a = new Peer(hostA, bytes);
        b = new Peer(hostB, bytes);
        if (rcvbufBytes > 0) {
            assertThat(hostA.underlayReceiveBufferBytes(rcvbufBytes)).isEqualTo(2 * rcvbufBytes);
            assertThat(hostB.underlayReceiveBufferBytes(rcvbufBytes)).isEqualTo(2 * rcvbufBytes);
        }
        IbvQp qa = a.rcQp(16);
        IbvQp qb = b.rcQp(16);
        Peer.connect(a, qa, b, qb);
        if (loss > 0) {
            FaultConfig f = FaultConfig.randomLoss(loss);
            hostA.uplinkFaults(f, f);
            hostB.uplinkFaults(f, f);
        }
        fillRandom(b.buf, bytes, bytes ^ 0x5EED);
        TransportCounters a0 = hostA.transportCounters();
        TransportCounters b0 = hostB.transportCounters();
        long rcvbufErrors0 = udpRcvbufErrors();
        long t0 = System.nanoTime();

        IbvSendWr r = new IbvSendWr(1).addSge(a.mr, 0, bytes);
        r.wrId = 7;
        r.opcode = WrOpcode.RDMA_READ;
        r.sendFlags = SendFlags.SIGNALED;
        r.remoteAddr = b.mr.addr();
        r.rkey = b.mr.rkey();
        qa.postSend(r);
        // The tests' paranoid buffer-leak tracking slows every packet: 16 MiB take seconds.
        IbvWc wc = a.next(java.time.Duration.ofSeconds(120));

        long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
        TransportCounters da = hostA.transportCounters().since(a0);
        TransportCounters db = hostB.transportCounters().since(b0);
        System.out.printf(
                "READ %d B, loss %.2f: %s in %d ms; responses %d for %d packets, READ requests %d (%d repeated),"
                        + " timeouts %d, injected losses %d, UDP RcvbufErrors (whole machine) %d%n  A %s%n  B %s%n  A's switch: %s%n",
                bytes,
                loss,
                wc.status,
                elapsedMs,
                db.txPackets - db.txAcks,
                bytes / PMTU,
                da.txPackets - da.txAcks,
                da.retransmittedPackets,
                da.timeouts,
                hostA.uplinkInjectedLosses() + hostB.uplinkInjectedLosses(),
                udpRcvbufErrors() - rcvbufErrors0,
                da,
                db,
                hostA.switchCounters());
        assertThat(wc.status).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode).isEqualTo(WcOpcode.RDMA_READ);
        assertThat(wc.wrId).isEqualTo(7);
        assertThat(wc.byteLen).isEqualTo(bytes);
        assertThat(a.buf.asSlice(0, bytes).mismatch(b.buf.asSlice(0, bytes)))
                .as("first differing byte")
                .isEqualTo(-1L);
        int packets = bytes / PMTU;
        long responses = db.txPackets - db.txAcks;
        assertThat(responses).isGreaterThanOrEqualTo(packets);
        // Without windowing every retry re-sent the whole READ: 8 tries of 256 responses for 1 MiB.
        assertThat(responses).isLessThan(packets + packets / 2 + 256);
        if (loss > 0) {
            assertThat(hostA.uplinkInjectedLosses() + hostB.uplinkInjectedLosses())
                    .isPositive();
        }
        assertThat(qa.query().qpState).isEqualTo(QpState.RTS);
        assertThat(qb.query().qpState).isEqualTo(QpState.RTS);
        assertThat(hostB.switchCounters()).contains(" pending 0B", " send errors 0");
    }

    private static void fillRandom(final MemorySegment seg, final int bytes, final long seed) {
        byte[] data = new byte[bytes];
        new Random(seed).nextBytes(data);
        MemorySegment.copy(MemorySegment.ofArray(data), 0, seg, 0, bytes);
    }

    /** The kernel's count of UDP datagrams dropped for a full receive buffer (all sockets). */
    static long udpRcvbufErrors() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("/proc/net/snmp"));
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith("Udp:") && lines.get(i + 1).startsWith("Udp:")) {
                String[] h = lines.get(i).split("\\s+");
                String[] v = lines.get(i + 1).split("\\s+");
                for (int k = 0; k < h.length; k++) {
                    if (h[k].equals("RcvbufErrors")) {
                        return Long.parseLong(v[k]);
                    }
                }
            }
        }
        throw new IllegalStateException("no Udp RcvbufErrors in /proc/net/snmp");
    }
}
