package org.vrdma.verbs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The vRDMA devices this JVM can open ({@code ibv_get_device_list}): one per running embedded
 * {@link VerbsHost}, in the order the hosts started, then the device of the vNIC process whose
 * control socket the system property {@code vrdma.socket} or the environment variable {@code
 * VRDMA_SOCKET} names (as for the native library), if one serves it. {@link #attach} reaches any
 * other vNIC process by its socket.
 */
public final class IbvDeviceList {
    /** The system property naming a vNIC process's control socket; overrides {@link #SOCKET_ENV}. */
    public static final String SOCKET_PROPERTY = "vrdma.socket";
    /** The environment variable the native library reads too. */
    public static final String SOCKET_ENV = "VRDMA_SOCKET";

    private static final List<IbvDevice> DEVICES = new CopyOnWriteArrayList<>();

    private IbvDeviceList() {}

    /**
     * A snapshot of the devices present now. The configured vNIC process is asked each time; without
     * a server on its socket it is simply absent, like a host without RDMA hardware.
     */
    public static List<IbvDevice> devices() {
        List<IbvDevice> all = new ArrayList<>(DEVICES);
        Path socket = configuredSocket();
        if (socket != null && Files.exists(socket)) {
            try {
                all.add(AttachedContext.probe(socket));
            } catch (IbvException e) {
                // nothing serves the socket (any more): no device there
            }
        }
        return List.copyOf(all);
    }

    /** The device named {@code name} ({@code ibv_get_device_name}), or null. */
    public static IbvDevice byName(String name) {
        for (IbvDevice d : devices()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }

    /**
     * The device of the vNIC process ({@code ./vrdma host --verbs-socket PATH}) serving {@code
     * socket}: its contexts, PDs, MRs, CQs and QPs live in that process, which reaches registered
     * memory like a DMA engine and moves work requests and completions through shared rings.
     *
     * @throws IbvException ENOENT if nothing serves the socket, EPERM if the vNIC refuses this
     *     process's user
     */
    public static IbvDevice attach(Path socket) {
        if (socket == null) {
            throw new IbvInvalidArgumentException("socket path missing");
        }
        return AttachedContext.probe(socket.toAbsolutePath());
    }

    /** The socket named by {@link #SOCKET_PROPERTY} or {@link #SOCKET_ENV}, or null. */
    static Path configuredSocket() {
        String s = System.getProperty(SOCKET_PROPERTY);
        if (s == null || s.isBlank()) {
            s = System.getenv(SOCKET_ENV);
        }
        return s == null || s.isBlank() ? null : Path.of(s).toAbsolutePath();
    }

    static void add(IbvDevice d) {
        DEVICES.add(d);
    }

    static void remove(IbvDevice d) {
        DEVICES.remove(d);
    }
}
