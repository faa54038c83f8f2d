package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * A lab: hosts joined by a topology of links and switches, VPCs and ENIs on the hosts, the
 * congestion control and transport of each ENI, the workloads to run, for how long, and the seed.
 * Loaded from JSON or YAML by {@link LabLoader}, which also {@linkplain LabValidator validates} it;
 * every backend ({@link LabBackends}) takes the same lab.
 *
 * <p>Every field but {@code topology} may be left out; {@link #withDefaults()} fills the defaults
 * (one VPC {@code vpc0} on 10.0.0.0/16 with VNI 100, one ENI per host in it, the default transport,
 * no congestion control, seed 1, 1 ms).
 *
 * @param name short name, used in result file names
 * @param description one line saying what the lab shows
 * @param seed seed of every random stream of the run (workload arrivals, faults, ECN marking)
 * @param durationUs how long workloads start new traffic (virtual time on the virtual backend, wall
 *     clock elsewhere); traffic already started may finish within {@code drainUs} after it
 * @param drainUs extra time after {@code durationUs} for flows in flight to complete
 * @param vpcs the VPCs; ENIs name one
 * @param topology hosts, switches and links (generated from a few parameters)
 * @param hosts per-host overrides: the ENIs of a host named by the topology
 * @param transport reliable transport settings of every ENI
 * @param cc congestion control of every ENI unless the ENI or a workload sets its own
 * @param workloads what traffic to run
 * @param sampleIntervalUs period of the throughput and queue-depth time series
 * @param sweep optional: run the lab once per combination of these values (see {@link SweepSpec})
 * @param pfc priority flow control in the fabric (virtual backend), or null for none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({
    "name",
    "description",
    "seed",
    "durationUs",
    "drainUs",
    "sampleIntervalUs",
    "vpcs",
    "topology",
    "hosts",
    "transport",
    "cc",
    "pfc",
    "workloads",
    "sweep"
})
public record Lab(
        String name,
        String description,
        Long seed,
        Long durationUs,
        Long drainUs,
        List<VpcSpec> vpcs,
        TopologySpec topology,
        List<HostSpec> hosts,
        TransportSpec transport,
        CcSpec cc,
        List<WorkloadSpec> workloads,
        Long sampleIntervalUs,
        SweepSpec sweep,
        PfcSpec pfc) {

    public static final long DEFAULT_SEED = 1;

    /** A lab without priority flow control. */
    public Lab(
            String name,
            String description,
            Long seed,
            Long durationUs,
            Long drainUs,
            List<VpcSpec> vpcs,
            TopologySpec topology,
            List<HostSpec> hosts,
            TransportSpec transport,
            CcSpec cc,
            List<WorkloadSpec> workloads,
            Long sampleIntervalUs,
            SweepSpec sweep) {
        this(
                name,
                description,
                seed,
                durationUs,
                drainUs,
                vpcs,
                topology,
                hosts,
                transport,
                cc,
                workloads,
                sampleIntervalUs,
                sweep,
                null);
    }

    public static final long DEFAULT_DURATION_US = 1_000;

    /** A copy with every omitted field set to its default (topology and workloads are kept as given). */
    public Lab withDefaults() {
        long duration = durationUs == null ? DEFAULT_DURATION_US : durationUs;
        return with(c -> {
            c.name = name == null ? "lab" : name;
            c.seed = seed == null ? DEFAULT_SEED : seed;
            c.durationUs = duration;
            c.drainUs = drainUs == null ? 10 * duration : drainUs;
            c.vpcs = vpcs == null || vpcs.isEmpty() ? List.of(VpcSpec.DEFAULT) : vpcs;
            c.hosts = hosts == null ? List.of() : hosts;
            c.transport = (transport == null ? TransportSpec.DEFAULT : transport).withDefaults();
            c.cc = cc == null ? CcSpec.NONE : cc;
            c.workloads = workloads == null ? List.of() : workloads;
            c.sampleIntervalUs = sampleIntervalUs == null ? 10 : sampleIntervalUs;
        });
    }

    /** A copy with another seed (to replay or vary a run). */
    public Lab withSeed(long newSeed) {
        return with(c -> c.seed = newSeed);
    }

    /** A copy with another duration and drain time. */
    public Lab withDurationUs(long newDurationUs, long newDrainUs) {
        return with(c -> {
            c.durationUs = newDurationUs;
            c.drainUs = newDrainUs;
        });
    }

    /** A copy with another lab-wide congestion control. */
    public Lab withCc(CcSpec newCc) {
        return with(c -> c.cc = newCc);
    }

    /** A copy without the sweep (one variant of it). */
    public Lab withSweep(SweepSpec newSweep) {
        return with(c -> c.sweep = newSweep);
    }

    /** A copy with other transport settings. */
    public Lab withTransport(TransportSpec newTransport) {
        return with(c -> c.transport = newTransport);
    }

    /** A copy with another topology. */
    public Lab withTopology(TopologySpec newTopology) {
        return with(c -> c.topology = newTopology);
    }

    /** A copy with a new name. */
    public Lab withName(String newName) {
        return with(c -> c.name = newName);
    }

    /** A copy with other workloads. */
    public Lab withWorkloads(List<WorkloadSpec> newWorkloads) {
        return with(c -> c.workloads = newWorkloads);
    }

    /** A copy with other priority flow control settings (null: none). */
    public Lab withPfc(PfcSpec newPfc) {
        return with(c -> c.pfc = newPfc);
    }

    /** A copy of this lab with {@code change} applied to its fields. */
    private Lab with(java.util.function.Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.lab();
    }

    /** The fields of a lab being copied, for the withers to change before it is built. */
    private static final class Copy {
        String name;
        String description;
        Long seed;
        Long durationUs;
        Long drainUs;
        List<VpcSpec> vpcs;
        TopologySpec topology;
        List<HostSpec> hosts;
        TransportSpec transport;
        CcSpec cc;
        List<WorkloadSpec> workloads;
        Long sampleIntervalUs;
        SweepSpec sweep;
        PfcSpec pfc;

        Copy(Lab l) {
            name = l.name;
            description = l.description;
            seed = l.seed;
            durationUs = l.durationUs;
            drainUs = l.drainUs;
            vpcs = l.vpcs;
            topology = l.topology;
            hosts = l.hosts;
            transport = l.transport;
            cc = l.cc;
            workloads = l.workloads;
            sampleIntervalUs = l.sampleIntervalUs;
            sweep = l.sweep;
            pfc = l.pfc;
        }

        Lab lab() {
            return new Lab(
                    name,
                    description,
                    seed,
                    durationUs,
                    drainUs,
                    vpcs,
                    topology,
                    hosts,
                    transport,
                    cc,
                    workloads,
                    sampleIntervalUs,
                    sweep,
                    pfc);
        }
    }
}
