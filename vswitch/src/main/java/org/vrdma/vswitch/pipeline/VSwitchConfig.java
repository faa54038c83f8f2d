package org.vrdma.vswitch.pipeline;

/**
 * Per-host switch parameters.
 *
 * @param name used in counters and random stream names
 * @param underlayAddress this host's underlay IPv4 and UDP port
 * @param underlayMac this host's underlay MAC (outer source MAC)
 * @param gatewayMac outer destination MAC (the underlay's next hop)
 * @param uplink the underlay egress port
 * @param intMaxHops INT hop records reserved in every encapsulated packet (0 = no INT option)
 * @param seed seed of the switch's random streams (RED, faults)
 */
public record VSwitchConfig(
        String name,
        long underlayAddress,
        long underlayMac,
        long gatewayMac,
        EgressConfig uplink,
        int intMaxHops,
        long seed) {
    public VSwitchConfig {
        if (intMaxHops < 0 || intMaxHops > IntOption.MAX_HOPS) {
            throw new IllegalArgumentException("intMaxHops must be 0.." + IntOption.MAX_HOPS + ": " + intMaxHops);
        }
    }

    /** Default MACs, unlimited uplink, no INT, seed 1. */
    public static VSwitchConfig of(String name, long underlayAddress) {
        long mac = 0x02_00_00_00_00_00L | (UnderlayAddress.ipv4(underlayAddress) & 0xFFFF_FFFFL);
        return new VSwitchConfig(name, underlayAddress, mac, 0x02_FF_FF_FF_FF_FEL, EgressConfig.DEFAULT, 0, 1);
    }

    public VSwitchConfig withUplink(EgressConfig egress) {
        return new VSwitchConfig(name, underlayAddress, underlayMac, gatewayMac, egress, intMaxHops, seed);
    }

    public VSwitchConfig withIntMaxHops(int hops) {
        return new VSwitchConfig(name, underlayAddress, underlayMac, gatewayMac, uplink, hops, seed);
    }

    public VSwitchConfig withUnderlayAddress(long address) {
        return new VSwitchConfig(name, address, underlayMac, gatewayMac, uplink, intMaxHops, seed);
    }

    public VSwitchConfig withSeed(long s) {
        return new VSwitchConfig(name, underlayAddress, underlayMac, gatewayMac, uplink, intMaxHops, s);
    }
}
