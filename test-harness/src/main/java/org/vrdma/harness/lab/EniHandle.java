package org.vrdma.harness.lab;

import java.util.function.Function;
import org.vrdma.vnic.verbs.Device;

/**
 * An ENI of a running lab with its vNIC: the verbs device a test opens contexts, PDs, CQs, MRs and
 * QPs on. The device is confined to its thread; {@link #call} runs code there.
 */
public interface EniHandle {
    /** Name, VPC, VNI, address, MAC and congestion control. */
    LabNetwork.LabEni spec();

    /** The verbs device; only touch it inside {@link #call} (or on the virtual backend's thread). */
    Device device();

    /** Runs {@code action} on the device's thread and returns its result (exceptions are rethrown). */
    <T> T call(Function<Device, T> action);
}
