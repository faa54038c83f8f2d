package org.vrdma.verbs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * Connects two queue pairs the way perftest does: a TCP connection carries each side's {@link
 * QpInfo} (one line each way), both sides move their QP to RTS, and a final {@link #barrier()}
 * makes sure neither sends before the other is ready. Works between two JVMs and between two hosts
 * of one JVM.
 *
 * <pre>{@code
 * // server                                         // client
 * try (QpConnector c = QpConnector.accept(ss, t)) { try (QpConnector c = QpConnector.connect("h", port, t)) {
 *     QpInfo me = QpInfo.of(qp, mr);                    QpInfo me = QpInfo.of(qp, mr);
 *     QpInfo peer = c.exchange(me);                     QpInfo peer = c.exchange(me);
 *     QpConnector.rcToRts(qp, me, peer);                QpConnector.rcToRts(qp, me, peer);
 *     c.barrier();                                      c.barrier();
 * }                                                 }
 * }</pre>
 */
public final class QpConnector implements AutoCloseable {
    /**
     * The local ACK timeout code (4.096 µs · 2^16 ≈ 268 ms, the ceiling of the adaptive timeout):
     * two steps above perftest's 14, since a JVM on shared cores can stall longer than 67 ms.
     */
    public static final int DEFAULT_TIMEOUT = 16;

    private static final String READY = "VRDMA-READY";

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private QpConnector(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /** Accepts one peer on {@code server}, waiting at most {@code timeout}; reads time out likewise. */
    public static QpConnector accept(ServerSocket server, Duration timeout) throws IOException {
        server.setSoTimeout(millis(timeout));
        Socket s = server.accept();
        return configured(s, timeout);
    }

    /**
     * Connects to a peer's {@link #accept}, retrying refused connections until {@code timeout} (the
     * peer may not listen yet); reads time out likewise.
     */
    public static QpConnector connect(String host, int port, Duration timeout) throws IOException {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(host, port), millis(timeout));
                return configured(s, timeout);
            } catch (ConnectException e) {
                s.close();
                if (System.nanoTime() - deadlineNs > 0) {
                    throw e;
                }
                LockSupport.parkNanos(20_000_000L);
            }
        }
    }

    private static QpConnector configured(Socket s, Duration timeout) throws IOException {
        try {
            s.setSoTimeout(millis(timeout));
            s.setTcpNoDelay(true);
            return new QpConnector(s);
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /**
     * Sends {@code local} and returns the peer's information.
     *
     * @throws IOException the connection failed or timed out
     * @throws IbvInvalidArgumentException the peer sent something else
     */
    public QpInfo exchange(QpInfo local) throws IOException {
        writeLine(local.toLine());
        return QpInfo.parse(readLine());
    }

    /** Waits until the peer calls {@code barrier()} too (perftest's final handshake). */
    public void barrier() throws IOException {
        writeLine(READY);
        String line = readLine();
        if (!line.equals(READY)) {
            throw new IOException("unexpected barrier line from the peer: " + line);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /**
     * Makes the peer of {@code remote} reachable from the host of {@code ctx}: routes its GID's
     * address to its underlay address (what a control plane would program). A no-op without an
     * underlay address, and on an attached device, whose vNIC process has its own routes.
     */
    public static void addRoute(IbvContext ctx, QpInfo remote) {
        if (remote.underlay() != null && ctx.device().host() != null) {
            ctx.device()
                    .host()
                    .addPeer(UnderlayAddress.ipv4ToString(remote.gid().ipv4()), remote.underlay());
        }
    }

    /**
     * RESET → INIT → RTR → RTS of an RC QP towards {@code remote}, with remote write, read and
     * atomic access, the port's MTU, 7 retries, infinite RNR retry, 16 outstanding reads and atomics
     * each way and perftest's ACK timeout; adds the route to the peer first.
     */
    public static void rcToRts(IbvQp qp, QpInfo local, QpInfo remote) {
        rcToRts(qp, local, remote, DEFAULT_TIMEOUT);
    }

    /**
     * Like {@link #rcToRts(IbvQp, QpInfo, QpInfo)} with the local ACK timeout code {@code timeout}
     * (4.096 µs · 2^timeout, the ceiling of the adaptive retransmission timeout).
     */
    public static void rcToRts(IbvQp qp, QpInfo local, QpInfo remote, int timeout) {
        addRoute(qp.context(), remote);
        IbvQpAttr a = new IbvQpAttr();
        a.qpState = QpState.INIT;
        a.pkeyIndex = 0;
        a.portNum = 1;
        a.qpAccessFlags = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        a.qpState = QpState.RTR;
        a.ahAttr = IbvAhAttr.of(remote.gid());
        a.pathMtu = qp.context().queryPort(1).activeMtu();
        a.destQpNum = remote.qpn();
        a.rqPsn = remote.psn();
        a.maxDestRdAtomic = 16;
        a.minRnrTimer = 1;
        qp.modify(
                a,
                QpAttrMask.STATE
                        | QpAttrMask.AV
                        | QpAttrMask.PATH_MTU
                        | QpAttrMask.DEST_QPN
                        | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC
                        | QpAttrMask.MIN_RNR_TIMER);
        a.qpState = QpState.RTS;
        a.timeout = timeout;
        a.retryCnt = 7;
        a.rnrRetry = 7;
        a.sqPsn = local.psn();
        a.maxRdAtomic = 16;
        qp.modify(
                a,
                QpAttrMask.STATE
                        | QpAttrMask.TIMEOUT
                        | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY
                        | QpAttrMask.SQ_PSN
                        | QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    /**
     * RESET → INIT → RTR → RTS of a UC QP towards {@code remote}: remote write access, and only the
     * attributes UC takes (no ACK timeout, retries, reads or RNR timer).
     */
    public static void ucToRts(IbvQp qp, QpInfo local, QpInfo remote) {
        addRoute(qp.context(), remote);
        IbvQpAttr a = new IbvQpAttr();
        a.qpState = QpState.INIT;
        a.pkeyIndex = 0;
        a.portNum = 1;
        a.qpAccessFlags = AccessFlags.REMOTE_WRITE;
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        a.qpState = QpState.RTR;
        a.ahAttr = IbvAhAttr.of(remote.gid());
        a.pathMtu = qp.context().queryPort(1).activeMtu();
        a.destQpNum = remote.qpn();
        a.rqPsn = remote.psn();
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN);
        a.qpState = QpState.RTS;
        a.sqPsn = local.psn();
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.SQ_PSN);
    }

    /** RESET → INIT → RTR → RTS of a UD QP with Q_Key {@code qkey} and the PSN of {@code local}. */
    public static void udToRts(IbvQp qp, int qkey, QpInfo local) {
        IbvQpAttr a = new IbvQpAttr();
        a.qpState = QpState.INIT;
        a.pkeyIndex = 0;
        a.portNum = 1;
        a.qkey = qkey;
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
        a.qpState = QpState.RTR;
        qp.modify(a, QpAttrMask.STATE);
        a.qpState = QpState.RTS;
        a.sqPsn = local.psn();
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.SQ_PSN);
    }

    private void writeLine(String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (true) {
            int c;
            try {
                c = in.read();
            } catch (SocketTimeoutException e) {
                throw new IOException("the peer did not answer in time", e);
            }
            if (c < 0) {
                throw new IOException("the peer closed the connection");
            }
            if (c == '\n') {
                return b.toString(StandardCharsets.US_ASCII);
            }
            if (b.size() >= QpInfo.MAX_LINE_BYTES) {
                throw new IOException("line from the peer longer than " + QpInfo.MAX_LINE_BYTES + " bytes");
            }
            b.write(c);
        }
    }

    private static int millis(Duration d) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.toMillis()));
    }
}
