package org.vrdma.vnic.verbs;

/**
 * Device limits and capabilities ({@code struct ibv_device_attr} plus the port's MTU).
 *
 * @param maxQp queue pairs per device
 * @param maxQpWr work requests per send or receive queue
 * @param maxSge scatter/gather elements per work request
 * @param maxInlineData inline bytes per send work request
 * @param maxCq completion queues
 * @param maxCqe entries per completion queue
 * @param maxMr memory regions
 * @param maxMrSize bytes per memory region
 * @param maxPd protection domains
 * @param maxQpRdAtom outstanding READ/atomic requests a QP accepts as responder
 * @param maxQpInitRdAtom outstanding READ/atomic requests a QP initiates
 * @param maxSrq shared receive queues
 * @param maxSrqWr work requests per shared receive queue
 * @param maxSrqSge scatter elements per shared receive work request
 * @param maxAh address handles
 * @param atomicCap atomic support
 * @param maxMtu largest path MTU of the port
 */
public record DeviceAttributes(
        int maxQp,
        int maxQpWr,
        int maxSge,
        int maxInlineData,
        int maxCq,
        int maxCqe,
        int maxMr,
        long maxMrSize,
        int maxPd,
        int maxQpRdAtom,
        int maxQpInitRdAtom,
        int maxSrq,
        int maxSrqWr,
        int maxSrqSge,
        int maxAh,
        AtomicCap atomicCap,
        Mtu maxMtu) {

    /** Limits of a ConnectX-like device, scaled to what an emulator sensibly holds. */
    public static DeviceAttributes defaults() {
        return new DeviceAttributes(
                1024,
                8192,
                16,
                256,
                1024,
                65536,
                4096,
                1L << 31,
                256,
                16,
                16,
                256,
                8192,
                16,
                4096,
                AtomicCap.HCA,
                Mtu.MTU_4096);
    }

    /** Memory windows ({@code max_mw}): the device has as many window slots as region slots. */
    public int maxMw() {
        return maxMr;
    }

    /** Copy with another {@code maxQp}. */
    public DeviceAttributes withMaxQp(final int v) {
        return new DeviceAttributes(
                v,
                maxQpWr,
                maxSge,
                maxInlineData,
                maxCq,
                maxCqe,
                maxMr,
                maxMrSize,
                maxPd,
                maxQpRdAtom,
                maxQpInitRdAtom,
                maxSrq,
                maxSrqWr,
                maxSrqSge,
                maxAh,
                atomicCap,
                maxMtu);
    }

    /** Copy with another {@code maxMr}. */
    public DeviceAttributes withMaxMr(final int v) {
        return new DeviceAttributes(
                maxQp,
                maxQpWr,
                maxSge,
                maxInlineData,
                maxCq,
                maxCqe,
                v,
                maxMrSize,
                maxPd,
                maxQpRdAtom,
                maxQpInitRdAtom,
                maxSrq,
                maxSrqWr,
                maxSrqSge,
                maxAh,
                atomicCap,
                maxMtu);
    }

    /** Copy with another {@code atomicCap}. */
    public DeviceAttributes withAtomicCap(final AtomicCap v) {
        return new DeviceAttributes(
                maxQp,
                maxQpWr,
                maxSge,
                maxInlineData,
                maxCq,
                maxCqe,
                maxMr,
                maxMrSize,
                maxPd,
                maxQpRdAtom,
                maxQpInitRdAtom,
                maxSrq,
                maxSrqWr,
                maxSrqSge,
                maxAh,
                v,
                maxMtu);
    }

    /** Copy with another {@code maxMtu}. */
    public DeviceAttributes withMaxMtu(final Mtu v) {
        return new DeviceAttributes(
                maxQp,
                maxQpWr,
                maxSge,
                maxInlineData,
                maxCq,
                maxCqe,
                maxMr,
                maxMrSize,
                maxPd,
                maxQpRdAtom,
                maxQpInitRdAtom,
                maxSrq,
                maxSrqWr,
                maxSrqSge,
                maxAh,
                atomicCap,
                v);
    }
}
