package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * What a lab run produced. Written as JSON (and CSV) by {@code org.vrdma.harness.lab.report}; the
 * lab (with defaults) and the seed are embedded so {@code ./vrdma lab run} of the embedded lab
 * replays the run exactly on the virtual backend. Holds no wall-clock figures, so two virtual runs
 * with the same lab and seed serialise to identical bytes.
 *
 * @param format version of this layout
 * @param backend where it ran
 * @param seed the seed (also in {@code lab})
 * @param lab the lab, defaults applied
 * @param endNs lab time at the end of the run
 * @param flows every flow started, in start order
 * @param fctBuckets FCT slowdown percentiles by flow size
 * @param perftests perftest-style results
 * @param counters totals over every ENI and port
 * @param throughput delivered goodput per host over time
 * @param queues queue depth of the busiest ports over time
 * @param notes how the backend measured what it could not model (real-time backends: the measured
 *     empty network behind the ideal FCT), or null
 * @param pfc priority flow control's counters when the lab has it on, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({
    "format",
    "backend",
    "seed",
    "endNs",
    "counters",
    "pfc",
    "fctBuckets",
    "perftests",
    "flows",
    "throughput",
    "queues",
    "notes",
    "lab"
})
public record LabResults(
        int format,
        String backend,
        long seed,
        Lab lab,
        long endNs,
        List<FlowResult> flows,
        List<SizeBucket> fctBuckets,
        List<PerftestResult> perftests,
        Counters counters,
        TimeSeries throughput,
        TimeSeries queues,
        List<String> notes,
        Pfc pfc) {

    public static final int FORMAT = 1;

    /** Results without PFC counters. */
    public LabResults(
            int format,
            String backend,
            long seed,
            Lab lab,
            long endNs,
            List<FlowResult> flows,
            List<SizeBucket> fctBuckets,
            List<PerftestResult> perftests,
            Counters counters,
            TimeSeries throughput,
            TimeSeries queues,
            List<String> notes) {
        this(
                format,
                backend,
                seed,
                lab,
                endNs,
                flows,
                fctBuckets,
                perftests,
                counters,
                throughput,
                queues,
                notes,
                null);
    }

    /** Results without notes (the virtual backend's). */
    public LabResults(
            int format,
            String backend,
            long seed,
            Lab lab,
            long endNs,
            List<FlowResult> flows,
            List<SizeBucket> fctBuckets,
            List<PerftestResult> perftests,
            Counters counters,
            TimeSeries throughput,
            TimeSeries queues) {
        this(format, backend, seed, lab, endNs, flows, fctBuckets, perftests, counters, throughput, queues, null, null);
    }

    /**
     * One flow.
     *
     * @param endNs completion at the sender, or -1 when it had not finished when the run ended
     * @param fctNs endNs - startNs, or -1
     * @param idealFctNs FCT of the flow alone on the empty network (see {@code FctMath})
     * @param slowdown fctNs / idealFctNs, or -1
     * @param unfinished null for a finished flow; otherwise why it did not finish (still sending
     *     when the run ended, with how much was acknowledged, or the error completion it got)
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FlowResult(
            int id,
            String workload,
            String src,
            String dst,
            long bytes,
            long startNs,
            long endNs,
            long fctNs,
            long idealFctNs,
            double slowdown,
            String cc,
            String unfinished) {
        /** A flow without a reason: finished, or unfinished for no known reason. */
        public FlowResult(
                int id,
                String workload,
                String src,
                String dst,
                long bytes,
                long startNs,
                long endNs,
                long fctNs,
                long idealFctNs,
                double slowdown,
                String cc) {
            this(id, workload, src, dst, bytes, startNs, endNs, fctNs, idealFctNs, slowdown, cc, null);
        }
    }

    /**
     * FCT slowdown percentiles ({@code p50}, {@code p95}, {@code p99}) and FCT mean and percentiles in
     * µs of finished flows with {@code minBytes < size <= maxBytes}.
     */
    public record SizeBucket(
            long minBytes,
            long maxBytes,
            int flows,
            double p50,
            double p95,
            double p99,
            double meanFctUs,
            double p50FctUs,
            double p95FctUs,
            double p99FctUs) {

        /** A bucket without FCT percentiles. */
        public SizeBucket(
                long minBytes, long maxBytes, int flows, double p50, double p95, double p99, double meanFctUs) {
            this(minBytes, maxBytes, flows, p50, p95, p99, meanFctUs, 0, 0, 0);
        }
    }

    /** A perftest-style result; fields that do not apply to the test are 0. */
    public record PerftestResult(
            String test,
            String client,
            String server,
            int sizeBytes,
            long iterations,
            double gbps,
            double messagesPerSecond,
            double latencyP50Us,
            double latencyP99Us,
            long verifiedBytes,
            long mismatchedBytes) {}

    /**
     * Totals.
     *
     * @param linkTransmissions packets sent on every link (host uplinks and switch ports), ACKs and
     *     CNPs included
     * @param bufferDrops tail drops in every port
     * @param timeouts retransmission timer expiries of every vNIC
     * @param spuriousTimeouts of those, the ones found spurious: the packet resent had arrived (the
     *     responder's duplicate ACK for the copy showed it), so a delay, not a loss, outran the timer
     * @param injectedLosses packets dropped by configured faults
     * @param ecnMarks CE marks applied by ports
     */
    public record Counters(
            long flowsStarted,
            long flowsFinished,
            long bytesDelivered,
            long txPackets,
            long retransmittedPackets,
            long timeouts,
            long spuriousTimeouts,
            long seqNaks,
            long cnpsSent,
            long cnpsReceived,
            long ecnMarks,
            long bufferDrops,
            long injectedLosses,
            long linkTransmissions) {}

    /**
     * Priority flow control over the run. A PAUSE is counted where it is sent (a switch's ingress
     * port, toward the link's other end) and where it arrives (that sender's port); refreshes of a
     * pause in force count as PAUSE frames too.
     *
     * @param pauseFramesSent PAUSE frames with quanta sent by switch ingress ports
     * @param resumeFramesSent resumes (PAUSE frames of zero quanta) sent
     * @param pausedNs time link directions spent paused, summed over all of them
     * @param hostNicPausedNs of that, the hosts' NICs (their links to the ToR)
     * @param linksPaused link directions paused at least once (hosts' NICs included)
     * @param hostNicsPaused hosts' NICs paused at least once
     * @param pauseDelayedPackets packets that waited in a paused port, counted when the pause ended:
     *     head-of-line blocking, whatever the packets' destinations
     * @param maxIngressBytes the most bytes one ingress port had charged at once
     * @param losslessDrops packets of the lossless class dropped because an ingress port's headroom
     *     was full (0 when the headroom covers the link's round trip)
     * @param links per link direction that was paused or sent a PAUSE: the sender's side ({@code
     *     from->to}) and the receiving switch's ingress accounting of that link
     */
    public record Pfc(
            long pauseFramesSent,
            long resumeFramesSent,
            long pausedNs,
            long hostNicPausedNs,
            int linksPaused,
            int hostNicsPaused,
            long pauseDelayedPackets,
            long maxIngressBytes,
            long losslessDrops,
            List<PfcLink> links) {}

    /**
     * One link direction under PFC.
     *
     * @param link {@code from->to}
     * @param pausesReceived PAUSE frames with quanta that reached the sender ({@code from})
     * @param pausedNs time the sender's port was paused
     * @param pauseDelayedPackets packets that waited in the sender's port behind a pause
     * @param xoffSent PAUSE frames the receiving switch ({@code to}) sent for this link
     * @param xonSent resumes it sent
     * @param maxIngressBytes most bytes charged at once to this link's ingress port at {@code to}
     * @param headroomDrops packets dropped at {@code to} for lack of headroom
     */
    public record PfcLink(
            String link,
            long pausesReceived,
            long pausedNs,
            long pauseDelayedPackets,
            long xoffSent,
            long xonSent,
            long maxIngressBytes,
            long headroomDrops) {}

    /** Named series sampled every {@code intervalNs}; value i is for [i·interval, (i+1)·interval). */
    public record TimeSeries(String unit, long intervalNs, List<Series> series) {}

    public record Series(String name, double[] values) {}
}
