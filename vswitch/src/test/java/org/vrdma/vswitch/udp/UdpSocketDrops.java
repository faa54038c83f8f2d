package org.vrdma.vswitch.udp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Datagrams the kernel dropped on this network namespace's UDP sockets (IPv4 and IPv6) bound to a local port (the
 * last column of {@code /proc/net/udp}, counted per socket: a full receive buffer, a failed
 * checksum), so a test on plain UDP can tell loss it caused from loss it must not have.
 */
final class UdpSocketDrops {
    private UdpSocketDrops() {}

    /**
     * The drops of the UDP sockets bound to {@code port}, summed; 0 if there are none. Both tables are
     * read: Java and Netty open dual-stack IPv6 sockets, which carry IPv4 as mapped addresses.
     */
    static long of(int port) {
        try {
            return of(Files.readAllLines(Path.of("/proc/net/udp")), port)
                    + of(Files.readAllLines(Path.of("/proc/net/udp6")), port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** As {@link #of(int)}, from the lines of a {@code /proc/net/udp} table. */
    static long of(List<String> table, int port) {
        String portHex = String.format(":%04X", port);
        long drops = 0;
        for (int i = 1; i < table.size(); i++) {
            String[] f = table.get(i).trim().split("\\s+");
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ref pointer
            // drops
            if (f.length >= 13 && f[1].endsWith(portHex)) {
                drops += Long.parseLong(f[f.length - 1]);
            }
        }
        return drops;
    }
}
