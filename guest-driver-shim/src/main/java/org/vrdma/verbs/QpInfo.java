package org.vrdma.verbs;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What two sides of a connection tell each other out of band before they can talk (what perftest
 * and rdma_cm exchange): the QP number, the first PSN, the port GID, and the rkey, address and
 * length of a memory region the peer may access, plus the underlay address of the host, so that a
 * peer without a control plane can route to it.
 *
 * <p>On the wire it is one text line, for example {@code VRDMA-QP qpn=0x000011 psn=0x3a2b1c
 * gid=::ffff:10.0.0.1 rkey=0x00000101 vaddr=0x00007f3a5c000000 len=65536 underlay=127.0.0.1:40123}.
 *
 * @param qpn queue pair number
 * @param psn first packet sequence number (24 bits)
 * @param gid port GID (IPv4-mapped)
 * @param rkey remote key of the advertised region, 0 if none
 * @param vaddr first address of the advertised region
 * @param length length of the advertised region
 * @param underlay the host's underlay address {@code a.b.c.d:port}, or null
 */
public record QpInfo(int qpn, int psn, IbvGid gid, int rkey, long vaddr, long length, String underlay) {
    static final String MAGIC = "VRDMA-QP";
    static final int MAX_LINE_BYTES = 512;

    /**
     * This side's information: {@code qp} with a random PSN, {@code mr} (or null), the embedded
     * host's underlay address (none for an attached device: the vNIC process routes by itself).
     */
    public static QpInfo of(IbvQp qp, IbvMr mr) {
        IbvDevice d = qp.context().device();
        int psn = ThreadLocalRandom.current().nextInt(1 << 24);
        return new QpInfo(
                qp.qpNum(),
                psn,
                d.gid(),
                mr == null ? 0 : mr.rkey(),
                mr == null ? 0 : mr.addr(),
                mr == null ? 0 : mr.length(),
                d.host() == null ? null : d.host().underlayAddress());
    }

    /** The line sent on the wire, without the newline. */
    public String toLine() {
        return String.format(
                Locale.ROOT,
                "%s qpn=0x%06x psn=0x%06x gid=%s rkey=0x%08x vaddr=0x%016x len=%d underlay=%s",
                MAGIC,
                qpn,
                psn,
                gid,
                rkey,
                vaddr,
                length,
                underlay == null ? "-" : underlay);
    }

    /**
     * Parses a line written by {@link #toLine()}.
     *
     * @throws IbvInvalidArgumentException if the line is malformed
     */
    public static QpInfo parse(String line) {
        String[] parts = line.trim().split(" ");
        if (parts.length == 0 || !parts[0].equals(MAGIC)) {
            throw new IbvInvalidArgumentException("not a QP information line: " + abbreviate(line));
        }
        Map<String, String> f = new HashMap<>();
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            if (eq <= 0) {
                throw new IbvInvalidArgumentException("malformed field '" + abbreviate(parts[i]) + "'");
            }
            f.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
        }
        try {
            int qpn = (int) hex(f, "qpn");
            int psn = (int) hex(f, "psn");
            if ((qpn & ~0xFFFFFF) != 0 || (psn & ~0xFFFFFF) != 0) {
                throw new IbvInvalidArgumentException("qpn or psn beyond 24 bits");
            }
            String underlay = require(f, "underlay");
            return new QpInfo(
                    qpn,
                    psn,
                    IbvGid.parse(require(f, "gid")),
                    (int) hex(f, "rkey"),
                    hex(f, "vaddr"),
                    Long.parseLong(require(f, "len")),
                    underlay.equals("-") ? null : underlay);
        } catch (NumberFormatException e) {
            throw new IbvInvalidArgumentException("malformed number in " + abbreviate(line));
        }
    }

    private static long hex(Map<String, String> f, String key) {
        String v = require(f, key);
        if (!v.startsWith("0x")) {
            throw new IbvInvalidArgumentException(key + " is not hexadecimal");
        }
        return Long.parseUnsignedLong(v.substring(2), 16);
    }

    private static String require(Map<String, String> f, String key) {
        String v = f.get(key);
        if (v == null) {
            throw new IbvInvalidArgumentException("field " + key + " missing");
        }
        return v;
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }
}
