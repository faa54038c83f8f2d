package org.vrdma.verbs;

import java.nio.file.Path;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;

/**
 * A vRDMA device ({@code struct ibv_device}): the vNIC of an embedded {@link VerbsHost}, or the vNIC
 * of a host in another process ({@code ./vrdma host --verbs-socket PATH}) reached through its
 * control socket ({@link IbvDeviceList#attach}). Find it with {@link IbvDeviceList} or {@link
 * VerbsHost#device()}; {@link #open()} gives a context, and both kinds offer the same verbs.
 */
public final class IbvDevice {
    private final VerbsHost host;
    private final Device device;
    private final HostLoop loop;
    private final Path socket;
    private final String name;
    private final long guid;
    private final IbvGid gid;

    IbvDevice(VerbsHost host, Device device, HostLoop loop) {
        this.host = host;
        this.device = device;
        this.loop = loop;
        this.socket = null;
        this.name = device.name();
        long mac = device.mac();
        long oui = (mac >>> 24) & 0xFFFFFF;
        long nic = mac & 0xFFFFFF;
        this.guid = ((oui ^ 0x020000L) << 40) | (0xFFFEL << 24) | nic;
        this.gid = IbvGid.ofIpv4(device.ipv4());
    }

    /** A device served by a vNIC process on {@code socket}. */
    IbvDevice(Path socket, String name, long guid, IbvGid gid) {
        this.host = null;
        this.device = null;
        this.loop = null;
        this.socket = socket;
        this.name = name;
        this.guid = guid;
        this.gid = gid;
    }

    /** The device name ({@code ibv_get_device_name}). */
    public String name() {
        return name;
    }

    /** The node GUID: the EUI-64 of the ENI's MAC ({@code ibv_get_device_guid}). */
    public long guid() {
        return guid;
    }

    /** The embedded host this device belongs to, or null for a device of a vNIC process. */
    public VerbsHost host() {
        return host;
    }

    /** The control socket of a vNIC process, or null for an embedded host's device. */
    public Path socket() {
        return socket;
    }

    /** True for the device of a vNIC in another process, reached through its control socket. */
    public boolean isAttached() {
        return socket != null;
    }

    /** The port's GID: the IPv4-mapped address of the ENI. */
    public IbvGid gid() {
        return gid;
    }

    /**
     * Opens a context ({@code ibv_open_device}); close it when done. On a vNIC process each context
     * is one connection to its control socket: closing it, or the end of this process, releases
     * everything the context still holds in the vNIC.
     *
     * @throws IbvException ENOENT when no vNIC serves the socket any more, EPERM when it refuses this
     *     process's user
     */
    public IbvContext open() {
        if (socket != null) {
            return new IbvContext(this, AttachedContext.open(socket));
        }
        return loop.call(() -> {
            Context c = device.open();
            IbvContext ctx = new IbvContext(this, c, loop);
            host.onContextOpened(ctx);
            return ctx;
        });
    }

    /** Runs {@code action} on an embedded device's loop (tests, port changes). */
    <T> T loopCall(java.util.function.Supplier<T> action) {
        return loop.call(action);
    }

    Device model() {
        return device;
    }

    @Override
    public String toString() {
        return name() + " (" + gid() + (socket != null ? ", " + socket : "") + ")";
    }
}
