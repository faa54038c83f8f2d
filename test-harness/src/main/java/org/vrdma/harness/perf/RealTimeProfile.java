package org.vrdma.harness.perf;

import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;

/** Transport settings for the vNIC over real sockets, where the path is the kernel and two event loops. */
public final class RealTimeProfile {
    /**
     * RTO floor: a 100 µs floor (right for a 10 µs fabric) fires spuriously when the RTT includes
     * two event loops and the kernel, and a loop descheduled on a loaded machine pauses for
     * milliseconds; below 5 ms a clean overlay saw retransmissions of late originals.
     */
    public static final long MIN_RTO_NS = 5_000_000;

    public static final long INITIAL_RTO_NS = 10_000_000;

    /**
     * Floor of the tail-loss probe's wait (RACK-TLP's allowance for the peer's delayed ACK): the
     * peer answers at the end of its event loop's turn, and a loop that loses its core on a loaded
     * machine holds the answer for a while: without a floor the probe (two smoothed round trips,
     * ~40 µs) resent one packet in 25-30 round trips of {@code ./vrdma bench}'s clean ping-pong
     * (3.7 %, load 17-19), with this one and the late answers the requester learns 0.31 %. 2 ms
     * resent 0.4 % against 1.0 % for 1 ms in one batch at load 22-26 (an earlier, per-QP version
     * of the late answers), but a real tail loss would wait twice as long for its probe. {@code -Dvrdma.minProbeUs=N} overrides it.
     */
    public static final long MIN_PROBE_NS = 1_000_000;

    /** The system property that overrides {@link #MIN_PROBE_NS}, in microseconds. */
    public static final String MIN_PROBE_US_PROPERTY = "vrdma.minProbeUs";

    /**
     * ACK at least every 64 packets; a message's last packet asks for an ACK, which the responder
     * sends at the end of its receive burst, so the messages that arrived together share one. Each
     * ACK is a datagram encoded, switched and sent by the responder's loop and read, switched and
     * decoded by the requester's. With 16 packets (one 64 KiB WRITE at MTU 4096) the threshold
     * itself sent an ACK per WRITE and the end-of-burst ACK never came into play; with 64,
     * {@code ./vrdma bench} sends 0.3 ACKs per WRITE instead of 1.0 and the responder's loop spends
     * about 1.3 µs less per WRITE (median 11.8 against 13.1 µs in five alternating pairs of runs).
     */
    public static final int ACK_COALESCE_PACKETS = 64;

    /**
     * Window: 1 MiB (16 WRITEs of 64 KiB in flight, four ACK intervals), so each wake-up of either
     * loop finds several messages' worth of work: with 256 KiB {@code ./vrdma bench} measured 0.6
     * flushes and 0.65 read wake-ups per 64 KiB WRITE, with 1 MiB 0.4 and 0.4, and about a third
     * less event-loop CPU per WRITE; 2 MiB changed nothing measurable. It stays well inside the 4
     * MiB socket buffers (4 MiB windows overflowed them).
     */
    public static final long WINDOW_BYTES = 256L * 4096;

    /**
     * {@code -Dvrdma.icrc.verifyReceived=false}: received frames are not checked against their ICRC
     * (still written on every frame sent), for underlays whose UDP checksum the kernel or the NIC
     * verifies before the socket sees the datagram. On by default, as on RoCE NICs.
     */
    public static final String VERIFY_RECEIVED_ICRC_PROPERTY = "vrdma.icrc.verifyReceived";

    private RealTimeProfile() {}

    /** Whether {@link #codec()} checks the ICRC of received frames. */
    public static boolean verifiesReceivedIcrc() {
        return !"false".equals(System.getProperty(VERIFY_RECEIVED_ICRC_PROPERTY));
    }

    /** A vNIC codec for a real-time host (one per device). */
    public static RocePacketCodec codec() {
        return verifiesReceivedIcrc() ? new RocePacketCodec() : RocePacketCodec.withoutReceiveIcrcCheck();
    }

    /**
     * Initial RTO of a host serving verbs applications ({@code ./vrdma host --verbs-socket}): its
     * first transfers meet a peer that may still be moving its QP to RTR, or a host still compiling
     * its code.
     */
    public static final long VERBS_HOST_INITIAL_RTO_NS = 50_000_000;

    /**
     * The transport of a host serving verbs applications: {@link #transport()} with the initial RTO
     * of {@link #VERBS_HOST_INITIAL_RTO_NS}. The floor stays {@link #MIN_RTO_NS}: with a 4 ms floor
     * the hosts of {@code ./vrdma bench}'s perftest runs had 106 and 129 retransmission timeouts in
     * five rounds at load averages of 4.6-9.0, against 5 and 1 with 5 ms (a loop that loses its core
     * for longer than the floor times out spuriously).
     */
    public static TransportConfig verbsHostTransport() {
        return transport().withRto(MIN_RTO_NS, VERBS_HOST_INITIAL_RTO_NS);
    }

    /** {@link #MIN_PROBE_NS}, or {@link #MIN_PROBE_US_PROPERTY} when set. */
    public static long minProbeNs() {
        return Long.getLong(MIN_PROBE_US_PROPERTY, MIN_PROBE_NS / 1000) * 1000;
    }

    public static TransportConfig transport() {
        return TransportConfig.defaults()
                .withRto(MIN_RTO_NS, INITIAL_RTO_NS)
                .withMinProbeNs(minProbeNs())
                .withAckCoalescePackets(ACK_COALESCE_PACKETS)
                .withWindowBytes(WINDOW_BYTES);
    }
}
