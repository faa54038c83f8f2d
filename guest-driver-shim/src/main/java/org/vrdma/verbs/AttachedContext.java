package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.vrdma.shim.SharedMemory;
import org.vrdma.shim.SharedRing;
import org.vrdma.shim.VnicClient;
import org.vrdma.vnic.verbs.AtomicCap;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * The connection of a context attached to a vNIC in another process ({@code ./vrdma host
 * --verbs-socket}): the control connection every control call goes over, the doorbell connection
 * posts ring when the vNIC sleeps, the CQs by the cookie their channel events carry, and the shared
 * memory allocated through the context (for zero-copy registration).
 */
final class AttachedContext {
    private final VnicClient client;
    private final DeviceAttributes attributes;
    /** CQs by the cookie of CREATE_CQ, which channel events name. */
    final ConcurrentHashMap<Long, IbvCq> cqByCookie = new ConcurrentHashMap<>();

    private final AtomicLong nextCookie = new AtomicLong(1);
    /** Memory from {@link IbvContext#allocBuffer}: registered zero-copy. */
    private final List<SharedMemory> buffers = new CopyOnWriteArrayList<>();

    private final ByteBuffer doorbellByte = ByteBuffer.allocateDirect(1);
    private volatile SocketChannel doorbell;

    private AttachedContext(VnicClient client, DeviceAttributes attributes) {
        this.client = client;
        this.attributes = attributes;
    }

    /** Connects to the vNIC on {@code socket} and reads its limits. */
    static AttachedContext open(Path socket) {
        VnicClient c = connect(socket);
        try {
            return new AttachedContext(c, queryAttributes(c));
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** What {@link IbvDeviceList} shows for the vNIC on {@code socket}: name, GUID, GID. */
    static IbvDevice probe(Path socket) {
        try (VnicClient c = connect(socket)) {
            ByteBuffer d = call(c, QUERY_DEVICE, null);
            String name = cString(d, 64);
            d.position(128);
            long guid = d.getLong();
            ByteBuffer gidReq = VnicClient.body(8);
            gidReq.putInt(1).putInt(0);
            ByteBuffer g = call(c, QUERY_GID, gidReq);
            byte[] gid = new byte[16];
            g.get(gid);
            return new IbvDevice(socket, name, guid, IbvGid.of(gid));
        }
    }

    DeviceAttributes attributes() {
        return attributes;
    }

    /** One control request; an error status becomes the typed exception of its errno. */
    ByteBuffer call(int op, ByteBuffer body) {
        return call(client, op, body);
    }

    /** A second connection bound by {@code op}: a channel's event stream or the doorbell. */
    SocketChannel bind(int op, ByteBuffer body) {
        try {
            return client.bind(op, body);
        } catch (VerbsException e) {
            throw IbvException.of(e);
        }
    }

    /**
     * A CREATE request that hands the vNIC a ring: the ring is unmapped again if the request fails,
     * and its descriptor is closed either way (the vNIC keeps its own mapping).
     */
    ByteBuffer callWithRing(int op, ByteBuffer body, SharedRing ring) {
        try {
            return call(op, body);
        } catch (RuntimeException e) {
            ring.close();
            throw e;
        } finally {
            ring.closeDescriptor();
        }
    }

    /** The context's asynchronous events: OPEN_ASYNC, then a second connection bound with its token. */
    SocketChannel openAsync() {
        ByteBuffer token = call(OPEN_ASYNC, null);
        ByteBuffer bind = VnicClient.body(8);
        bind.putLong(token.getLong());
        return bind(BIND_ASYNC, bind);
    }

    /** Whether port 1 is active now ({@code QUERY_PORT}). */
    boolean portActive() {
        ByteBuffer req = VnicClient.body(4);
        req.putInt(1);
        return call(QUERY_PORT, req).getInt() == 4; // IBV_PORT_ACTIVE
    }

    long newCookie() {
        return nextCookie.getAndIncrement();
    }

    /** Opens the doorbell connection once, before the first QP posts. */
    synchronized void openDoorbell() {
        if (doorbell != null) {
            return;
        }
        ByteBuffer token = call(OPEN_DOORBELL, null);
        ByteBuffer bind = VnicClient.body(8);
        bind.putLong(token.getLong());
        SocketChannel s = bind(BIND_DOORBELL, bind);
        try {
            s.configureBlocking(false);
        } catch (IOException e) {
            throw new IbvIoException("doorbell connection: " + e.getMessage());
        }
        doorbell = s;
    }

    /** Wakes the vNIC: one byte on the doorbell. A full socket already holds wake-ups enough. */
    void ringDoorbell() {
        SocketChannel s = doorbell;
        if (s == null) {
            return;
        }
        synchronized (doorbellByte) {
            try {
                s.write(doorbellByte.clear());
            } catch (IOException e) {
                // The vNIC went away: the next control call reports it.
            }
        }
    }

    SharedMemory allocate(long bytes, java.lang.foreign.Arena arena) {
        SharedMemory m;
        try {
            m = SharedMemory.allocate(bytes, arena);
        } catch (VerbsException e) {
            throw IbvException.of(e);
        }
        buffers.removeIf(b -> !b.segment().scope().isAlive());
        buffers.add(m);
        return m;
    }

    /** The shared memory holding {@code segment}, or null (then the vNIC copies with process_vm). */
    SharedMemory sharedMemoryOf(MemorySegment segment) {
        for (SharedMemory m : buffers) {
            if (m.contains(segment.address(), segment.byteSize())) {
                return m;
            }
        }
        return null;
    }

    /** Closes both connections: the vNIC releases whatever the context still holds. */
    void close() {
        SocketChannel s = doorbell;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closed already
            }
        }
        client.close();
    }

    private static VnicClient connect(Path socket) {
        try {
            return VnicClient.connect(socket);
        } catch (VerbsException e) {
            throw IbvException.of(e);
        }
    }

    private static ByteBuffer call(VnicClient c, int op, ByteBuffer body) {
        try {
            return c.call(op, body);
        } catch (VerbsException e) {
            throw IbvException.of(e);
        }
    }

    private static DeviceAttributes queryAttributes(VnicClient c) {
        ByteBuffer d = call(c, QUERY_DEVICE, null);
        d.position(128 + 8 + 8);
        long maxMrSize = d.getLong();
        d.getLong(); // page_size_cap
        d.position(d.position() + 16); // vendor, part, hw version, capability flags
        int maxQp = d.getInt();
        int maxQpWr = d.getInt();
        int maxSge = d.getInt();
        d.getInt(); // max_sge_rd
        int maxCq = d.getInt();
        int maxCqe = d.getInt();
        int maxMr = d.getInt();
        int maxPd = d.getInt();
        int maxQpRdAtom = d.getInt();
        d.getInt(); // max_res_rd_atom
        int maxQpInitRdAtom = d.getInt();
        int atomicCap = d.getInt();
        int maxSrq = d.getInt();
        int maxSrqWr = d.getInt();
        int maxSrqSge = d.getInt();
        int maxAh = d.getInt();
        int maxInline = d.getInt();
        ByteBuffer portReq = VnicClient.body(4);
        portReq.putInt(1);
        ByteBuffer p = call(c, QUERY_PORT, portReq);
        p.getInt(); // state
        int maxMtu = p.getInt();
        AtomicCap[] caps = AtomicCap.values();
        return new DeviceAttributes(
                maxQp,
                maxQpWr,
                maxSge,
                maxInline,
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
                atomicCap >= 0 && atomicCap < caps.length ? caps[atomicCap] : AtomicCap.NONE,
                mtu(maxMtu));
    }

    /** The MTU of an {@code enum ibv_mtu} value (1024 for an unknown one). */
    static Mtu mtu(int code) {
        for (Mtu m : Mtu.values()) {
            if (m.code() == code) {
                return m;
            }
        }
        return Mtu.MTU_1024;
    }

    private static String cString(ByteBuffer b, int width) {
        byte[] raw = new byte[width];
        b.get(raw);
        int n = 0;
        while (n < width && raw[n] != 0) {
            n++;
        }
        return new String(raw, 0, n, StandardCharsets.US_ASCII);
    }
}
