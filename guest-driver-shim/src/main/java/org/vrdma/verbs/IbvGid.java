package org.vrdma.verbs;

import java.util.Arrays;

/**
 * A 16-byte global identifier ({@code union ibv_gid}). A RoCE v2 port on IPv4 has one GID, the
 * IPv4-mapped IPv6 address of its ENI ({@code ::ffff:a.b.c.d}); queue pairs and address handles
 * name their peer by it.
 */
public final class IbvGid {
    private final byte[] raw;

    private IbvGid(byte[] raw) {
        this.raw = raw;
    }

    /** The GID of the 16 bytes {@code raw} (copied). */
    public static IbvGid of(byte[] raw) {
        if (raw == null || raw.length != 16) {
            throw new IbvInvalidArgumentException("a GID has 16 bytes");
        }
        return new IbvGid(raw.clone());
    }

    /** The IPv4-mapped GID of {@code ipv4} (big-endian int). */
    public static IbvGid ofIpv4(int ipv4) {
        byte[] b = new byte[16];
        b[10] = (byte) 0xFF;
        b[11] = (byte) 0xFF;
        b[12] = (byte) (ipv4 >>> 24);
        b[13] = (byte) (ipv4 >>> 16);
        b[14] = (byte) (ipv4 >>> 8);
        b[15] = (byte) ipv4;
        return new IbvGid(b);
    }

    /** Parses {@code ::ffff:a.b.c.d}, a dotted quad, or 32 hex digits (with or without colons). */
    public static IbvGid parse(String text) {
        String t = text.trim();
        String lower = t.toLowerCase(java.util.Locale.ROOT);
        String quad = lower.startsWith("::ffff:") ? t.substring(7) : t;
        if (quad.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            int ip = 0;
            for (String part : quad.split("\\.")) {
                int v = Integer.parseInt(part);
                if (v > 255) {
                    throw new IbvInvalidArgumentException("bad GID " + text);
                }
                ip = (ip << 8) | v;
            }
            return ofIpv4(ip);
        }
        String hex = lower.replace(":", "");
        if (hex.length() != 32 || !hex.matches("[0-9a-f]+")) {
            throw new IbvInvalidArgumentException("bad GID " + text);
        }
        byte[] b = new byte[16];
        for (int i = 0; i < 16; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new IbvGid(b);
    }

    /** The 16 bytes (a copy). */
    public byte[] raw() {
        return raw.clone();
    }

    /** True for an IPv4-mapped GID, the only kind a RoCE v2 port on IPv4 reaches. */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xFF && raw[11] == (byte) 0xFF;
    }

    /** The IPv4 address of a mapped GID (big-endian int); EINVAL for any other GID. */
    public int ipv4() {
        if (!isIpv4Mapped()) {
            throw new IbvInvalidArgumentException("GID " + this + " is not an IPv4-mapped RoCE v2 GID");
        }
        return (raw[12] & 0xFF) << 24 | (raw[13] & 0xFF) << 16 | (raw[14] & 0xFF) << 8 | (raw[15] & 0xFF);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IbvGid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    /** {@code ::ffff:a.b.c.d} for mapped GIDs, eight colon-separated hex groups otherwise. */
    @Override
    public String toString() {
        if (isIpv4Mapped()) {
            return "::ffff:" + (raw[12] & 0xFF) + "." + (raw[13] & 0xFF) + "." + (raw[14] & 0xFF) + "."
                    + (raw[15] & 0xFF);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 16; i += 2) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(String.format("%02x%02x", raw[i], raw[i + 1]));
        }
        return sb.toString();
    }
}
