package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;

/**
 * A vRDMA device ({@code struct ibv_device}): the vNIC of one {@link VerbsHost}. Find it with {@link
 * IbvDeviceList} or {@link VerbsHost#device()}; {@link #open()} gives a context.
 */
public final class IbvDevice {
    private final VerbsHost host;
    private final Device device;
    private final HostLoop loop;

    IbvDevice(VerbsHost host, Device device, HostLoop loop) {
        this.host = host;
        this.device = device;
        this.loop = loop;
    }

    /** The device name ({@code ibv_get_device_name}). */
    public String name() {
        return device.name();
    }

    /** The node GUID: the EUI-64 of the ENI's MAC ({@code ibv_get_device_guid}). */
    public long guid() {
        long mac = device.mac();
        long oui = (mac >>> 24) & 0xFFFFFF;
        long nic = mac & 0xFFFFFF;
        return ((oui ^ 0x020000L) << 40) | (0xFFFEL << 24) | nic;
    }

    /** The host this device belongs to. */
    public VerbsHost host() {
        return host;
    }

    /** The port's GID: the IPv4-mapped address of the ENI. */
    public IbvGid gid() {
        return IbvGid.ofIpv4(device.ipv4());
    }

    /** Opens a context ({@code ibv_open_device}); close it when done. */
    public IbvContext open() {
        return loop.call(() -> {
            Context c = device.open();
            IbvContext ctx = new IbvContext(this, c, loop);
            host.onContextOpened(ctx);
            return ctx;
        });
    }

    Device model() {
        return device;
    }

    @Override
    public String toString() {
        return name() + " (" + gid() + ")";
    }
}
