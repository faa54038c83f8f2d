package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class UdpSocketDropsTest {
    private static final List<String> TABLE = List.of(
            "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            ",
            "  101: 0100007F:A8F2 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 81920 2 0000000000000000 0          ",
            "  530: 0100007F:B1D6 0100007F:A8F2 01 00000000:00040000 00:00000000 00000000     0        0 81921 2 0000000000000000 1223       ");

    @Test
    void theDropsOfTheSocketOnThePort() {
        assertThat(UdpSocketDrops.of(TABLE, 0xB1D6)).isEqualTo(1223);
        assertThat(UdpSocketDrops.of(TABLE, 0xA8F2)).isZero();
        // A remote port equal to the one asked for is not a match.
        assertThat(UdpSocketDrops.of(TABLE, 0x1234)).isZero();
    }

    @Test
    void theKernelsDropsOnAFullReceiveBufferAreRead() throws Exception {
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        try (DatagramSocket receiver = new DatagramSocket(loopback);
                DatagramSocket sender = new DatagramSocket(loopback)) {
            receiver.setReceiveBufferSize(1); // the kernel's minimum: a few datagrams fit
            assertThat(UdpSocketDrops.of(receiver.getLocalPort())).isZero();
            byte[] payload = new byte[1000];
            for (int i = 0; i < 100; i++) {
                sender.send(new DatagramPacket(payload, payload.length, receiver.getLocalSocketAddress()));
            }
            // Loopback delivers within the send: what did not fit was dropped and counted already.
            assertThat(UdpSocketDrops.of(receiver.getLocalPort())).isBetween(50L, 100L);
        }
    }
}
