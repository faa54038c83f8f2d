package org.vrdma.vswitch.tap;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * How a TAP device backing an ENI is set up in the kernel: its name, the ENI's MAC and IPv4
 * address with the VPC subnet's prefix length, the MTU, and optionally a network namespace to move
 * it into (a guest's), where the address is then configured.
 *
 * @param name interface name, at most 15 characters
 * @param mac the ENI's MAC (low 48 bits)
 * @param ipv4 the ENI's address
 * @param prefixLength the subnet's prefix length, 1..32 (the connected route goes through the TAP)
 * @param mtu interface MTU; the underlay must carry it plus the Geneve overhead
 * @param netns network namespace to move the device into, or null to keep it in the opener's
 */
public record TapConfig(String name, long mac, int ipv4, int prefixLength, int mtu, String netns) {
    public TapConfig {
        if (name == null || name.isEmpty() || name.length() > 15 || !name.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("TAP name must be 1..15 of [A-Za-z0-9_.-]: " + name);
        }
        if (prefixLength < 1 || prefixLength > 32) {
            throw new IllegalArgumentException("prefix length must be 1..32: " + prefixLength);
        }
        if (mtu < 576 || mtu > 65_000) {
            throw new IllegalArgumentException("MTU must be 576..65000: " + mtu);
        }
        if (netns != null && !netns.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("bad network namespace name: " + netns);
        }
    }

    /** MAC as aa:bb:cc:dd:ee:ff. */
    public String macText() {
        StringBuilder b = new StringBuilder();
        for (int i = 5; i >= 0; i--) {
            b.append(String.format(Locale.ROOT, "%02x", (mac >>> (8 * i)) & 0xFF));
            if (i > 0) {
                b.append(':');
            }
        }
        return b.toString();
    }

    /**
     * The iproute2 commands that configure the device after it is opened: move it (when a namespace
     * is given), switch IPv6 off on it (no router solicitations, MLD or DAD noise into the VPC),
     * set MAC and MTU, add the address, bring it up.
     */
    public List<List<String>> commands() {
        List<List<String>> out = new ArrayList<>();
        List<String> ip = netns == null ? List.of("ip") : List.of("ip", "-n", netns);
        if (netns != null) {
            out.add(List.of("ip", "link", "set", "dev", name, "netns", netns));
        }
        List<String> sysctl = new ArrayList<>();
        if (netns != null) {
            sysctl.addAll(List.of("ip", "netns", "exec", netns));
        }
        sysctl.addAll(List.of("sysctl", "-q", "-w", "net.ipv6.conf." + name + ".disable_ipv6=1"));
        out.add(sysctl);
        out.add(concat(ip, "link", "set", "dev", name, "address", macText(), "mtu", String.valueOf(mtu)));
        out.add(concat(ip, "addr", "add", UnderlayAddress.ipv4ToString(ipv4) + "/" + prefixLength, "dev", name));
        out.add(concat(ip, "link", "set", "dev", name, "up"));
        return out;
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> l = new ArrayList<>(head);
        l.addAll(List.of(tail));
        return l;
    }
}
