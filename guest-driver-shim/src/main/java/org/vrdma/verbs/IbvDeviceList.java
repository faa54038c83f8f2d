package org.vrdma.verbs;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The vRDMA devices of this JVM ({@code ibv_get_device_list}): one per running {@link VerbsHost},
 * in the order the hosts started. A device leaves the list when its host closes.
 */
public final class IbvDeviceList {
    private static final List<IbvDevice> DEVICES = new CopyOnWriteArrayList<>();

    private IbvDeviceList() {}

    /** A snapshot of the devices present now. */
    public static List<IbvDevice> devices() {
        return List.copyOf(DEVICES);
    }

    /** The device named {@code name} ({@code ibv_get_device_name}), or null. */
    public static IbvDevice byName(String name) {
        for (IbvDevice d : DEVICES) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }

    static void add(IbvDevice d) {
        DEVICES.add(d);
    }

    static void remove(IbvDevice d) {
        DEVICES.remove(d);
    }
}
