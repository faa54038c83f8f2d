package org.vrdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/** Two hosts connect over a TCP exchange of {@link QpInfo}, each side in its own thread. */
class QpConnectorTest {
    @Test
    void qpInfoLineRoundTripsAndRejectsGarbage() {
        QpInfo i = new QpInfo(
                0x11, 0xABCDEF, IbvGid.parse("::ffff:10.1.2.3"), 0x1234, 0x7f00_0000_1000L, 65536, "127.0.0.1:4000");
        assertThat(QpInfo.parse(i.toLine())).isEqualTo(i);
        QpInfo noRoute = new QpInfo(0x12, 1, IbvGid.ofIpv4(0x0A000001), 0, 0, 0, null);
        assertThat(QpInfo.parse(noRoute.toLine())).isEqualTo(noRoute);
        assertThatThrownBy(() -> QpInfo.parse("hello")).isInstanceOf(IbvInvalidArgumentException.class);
        assertThatThrownBy(() -> QpInfo.parse(i.toLine().replace("psn=0xabcdef", "psn=0x1abcdef")))
                .isInstanceOf(IbvInvalidArgumentException.class);
        assertThatThrownBy(() -> QpInfo.parse(i.toLine().replace(" rkey=0x00001234", "")))
                .isInstanceOf(IbvInvalidArgumentException.class);
    }

    @Test
    void serverAndClientConnectAndPingPong() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(1);
        try (VerbsHost hs = VerbsHost.start(Peer.hostOptions("cx-s", "10.9.0.1"));
                VerbsHost hc = VerbsHost.start(Peer.hostOptions("cx-c", "10.9.0.2"));
                ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Future<String> server = pool.submit(() -> {
                try (Peer p = new Peer(hs, 4096)) {
                    IbvQp qp = p.rcQp(8);
                    QpInfo me = QpInfo.of(qp, p.mr);
                    try (QpConnector c = QpConnector.accept(listener, Peer.TIMEOUT)) {
                        QpInfo them = c.exchange(me);
                        QpConnector.rcToRts(qp, me, them, Peer.QP_TIMEOUT);
                        qp.postRecv(new IbvRecvWr(1).addSge(p.mr, 0, 64));
                        c.barrier();
                        IbvWc got = p.next();
                        String text = p.buf.getString(0);
                        IbvSendWr reply = new IbvSendWr(1).addSge(p.mr, 0, 64);
                        p.buf.setString(0, "pong " + text);
                        reply.opcode = WrOpcode.SEND;
                        reply.sendFlags = SendFlags.SIGNALED;
                        qp.postSend(reply);
                        assertThat(p.next().status).isEqualTo(WcStatus.SUCCESS);
                        c.barrier();
                        return got.status + " " + text + " from QPN " + them.qpn();
                    }
                }
            });
            try (Peer p = new Peer(hc, 4096)) {
                IbvQp qp = p.rcQp(8);
                QpInfo me = QpInfo.of(qp, p.mr);
                try (QpConnector c = QpConnector.connect("127.0.0.1", listener.getLocalPort(), Peer.TIMEOUT)) {
                    QpInfo them = c.exchange(me);
                    assertThat(them.gid()).isEqualTo(hs.device().gid());
                    assertThat(them.underlay()).isEqualTo(hs.underlayAddress());
                    QpConnector.rcToRts(qp, me, them, Peer.QP_TIMEOUT);
                    assertThat(qp.state()).isEqualTo(QpState.RTS);
                    qp.postRecv(new IbvRecvWr(1).addSge(p.mr, 1024, 64));
                    c.barrier();
                    p.buf.setString(0, "ping");
                    IbvSendWr s = new IbvSendWr(1).addSge(p.mr, 0, 64);
                    s.opcode = WrOpcode.SEND;
                    s.sendFlags = SendFlags.SIGNALED;
                    qp.postSend(s);
                    IbvWc a = p.next();
                    IbvWc b = p.next();
                    assertThat(a.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(b.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(p.buf.getString(1024)).isEqualTo("pong ping");
                    c.barrier();
                    assertThat(server.get(30, TimeUnit.SECONDS)).isEqualTo("SUCCESS ping from QPN " + qp.qpNum());
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
