package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;

/**
 * Traffic to run. Every workload sends RDMA over RC QPs between ENIs, named {@code host} (its first
 * ENI) or {@code host/eni}; {@code cc}, where a workload has it, sets the congestion control of that
 * workload's QPs (per-QP), else the ENI's applies. A flow is a number of bytes sent as RDMA WRITEs
 * of at most {@link TransportSpec#messageBytes} on its own QP; its completion time (FCT) runs from
 * its start to the completion of its last WRITE at the sender.
 *
 * <p>In JSON the {@code type} field selects the kind: {@code perftest}, {@code incast}, {@code
 * allToAll}, {@code poisson}, {@code flows}.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = WorkloadSpec.Perftest.class, name = "perftest"),
    @JsonSubTypes.Type(value = WorkloadSpec.Incast.class, name = "incast"),
    @JsonSubTypes.Type(value = WorkloadSpec.AllToAll.class, name = "allToAll"),
    @JsonSubTypes.Type(value = WorkloadSpec.Poisson.class, name = "poisson"),
    @JsonSubTypes.Type(value = WorkloadSpec.Flows.class, name = "flows")
})
public sealed interface WorkloadSpec {

    /** Congestion control of this workload's QPs, or null for the ENI's. */
    CcSpec cc();

    /**
     * A perftest-style test between two ENIs: {@code writeBw}, {@code readBw} (bandwidth of {@code
     * iterations} messages of {@code sizeBytes} on {@code qps} QPs), {@code sendLat} (ping-pong
     * latency percentiles) or {@code msgRate} (WRITEs per second of small messages), every transfer
     * checked byte for byte when {@code verify} is set.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Perftest(
            String test,
            String client,
            String server,
            Integer sizeBytes,
            Integer iterations,
            Integer qps,
            Boolean verify,
            Long startUs,
            CcSpec cc)
            implements WorkloadSpec {}

    /**
     * N:1 incast: each sender starts one flow of {@code flowBytes} to {@code receiver} at the same
     * time, {@code rounds} times, {@code intervalUs} apart. Senders: the list, or the first {@code
     * senderCount} hosts other than the receiver.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Incast(
            String receiver,
            List<String> senders,
            Integer senderCount,
            Long flowBytes,
            Integer rounds,
            Long intervalUs,
            Long startUs,
            CcSpec cc)
            implements WorkloadSpec {}

    /** Every host (or every listed one) sends one flow of {@code flowBytes} to every other at once. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record AllToAll(List<String> hosts, Long flowBytes, Long startUs, CcSpec cc) implements WorkloadSpec {}

    /**
     * Flows with Poisson arrivals between random pairs of distinct hosts (of {@code hosts}, default
     * all), sizes drawn from a flow-size CDF, at a mean offered load of {@code load} × the host
     * link rate per sending host, from {@code startUs} until {@code stopUs} (default the lab's
     * duration).
     *
     * @param cdf {@code websearch} (Alizadeh et al., DCTCP, SIGCOMM 2010), {@code fbHadoop} (Roy et al.,
     *     SIGCOMM 2015), or the path of a CDF file (lines {@code bytes cumulative-percent}), relative to
     *     the lab file's directory when the lab is loaded from a file
     * @param cdfPoints the CDF's points {@code [bytes, percent]}, or null to read {@code cdf}; {@link
     *     LabLoader#load} fills them from a CDF file, so results (which embed the lab) replay without it
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Poisson(
            String cdf,
            Double load,
            List<String> hosts,
            Long startUs,
            Long stopUs,
            CcSpec cc,
            List<List<Double>> cdfPoints)
            implements WorkloadSpec {

        /** Without the CDF's points: {@code cdf} names a built-in distribution or a file. */
        public Poisson(String cdf, Double load, List<String> hosts, Long startUs, Long stopUs, CcSpec cc) {
            this(cdf, load, hosts, startUs, stopUs, cc, null);
        }

        /** The distribution: {@code cdfPoints} when given (then {@code cdf} only names it), else {@code cdf}. */
        public FlowSizeCdf flowSizeCdf() {
            if (cdfPoints == null) {
                return FlowSizeCdf.named(cdf);
            }
            String name = cdf == null ? "cdfPoints" : cdf;
            List<double[]> points = new java.util.ArrayList<>();
            for (int i = 0; i < cdfPoints.size(); i++) {
                List<Double> p = cdfPoints.get(i);
                if (p == null || p.size() != 2 || p.get(0) == null || p.get(1) == null) {
                    throw new IllegalArgumentException(name + ": point " + (i + 1) + " is not [bytes, percent]");
                }
                points.add(new double[] {p.get(0), p.get(1)});
            }
            return FlowSizeCdf.of(name, points);
        }

        /** A copy at another load. */
        public Poisson withLoad(double newLoad) {
            return new Poisson(cdf, newLoad, hosts, startUs, stopUs, cc, cdfPoints);
        }

        /** A copy carrying the points of {@code distribution}. */
        public Poisson withCdfPoints(FlowSizeCdf distribution) {
            List<List<Double>> points =
                    distribution.points().stream().map(p -> List.of(p[0], p[1])).toList();
            return new Poisson(cdf, load, hosts, startUs, stopUs, cc, points);
        }
    }

    /** Explicit flows, e.g. long flows starting one after another for a fairness/convergence run. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Flows(List<Flow> flows, CcSpec cc) implements WorkloadSpec {}

    /** One explicit flow; {@code bytes} may be large (a long-lived flow), {@code cc} overrides per flow. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Flow(String src, String dst, Long bytes, Long startUs, CcSpec cc) {}
}
