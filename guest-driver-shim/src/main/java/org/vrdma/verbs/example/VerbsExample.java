package org.vrdma.verbs.example;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.vrdma.verbs.IbvCompChannel;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvDevice;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvRecvWr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.verbs.VerbsHost;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * The Java verbs API in one page: two vRDMA hosts in this JVM (each a vSwitch on a real UDP socket
 * on 127.0.0.1 with one vNIC), a server and a client that connect one RC queue pair each over a
 * perftest-style TCP exchange, an RDMA WRITE with immediate from the client into the server's
 * memory, and an RDMA READ back. With {@code server PORT} or {@code client HOST PORT} it runs one
 * side in this JVM on the vNIC process that {@code VRDMA_SOCKET} (or {@code -Dvrdma.socket}) names,
 * a {@code ./vrdma host --verbs-socket}.
 */
public final class VerbsExample {
    private static final int BYTES = 64 * 1024;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Duration ACCEPT_TIMEOUT = Duration.ofSeconds(60);

    private VerbsExample() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0) {
            List<IbvDevice> devices = IbvDeviceList.devices();
            if (devices.isEmpty()) {
                throw new IllegalStateException("no vRDMA device: set VRDMA_SOCKET to a vNIC's control socket");
            }
            if (args[0].equals("server")) {
                try (ServerSocket listener = new ServerSocket(Integer.parseInt(args[1]))) {
                    System.out.println("server: " + server(devices.get(0), listener));
                }
            } else {
                System.out.println("client: " + client(devices.get(0), args[1], Integer.parseInt(args[2])));
            }
            return;
        }
        try (VerbsHost serverHost = VerbsHost.start(VerbsHost.Options.loopback("vrdma0", "10.0.0.1"));
                VerbsHost clientHost = VerbsHost.start(VerbsHost.Options.loopback("vrdma1", "10.0.0.2"));
                ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ExecutorService serverThread = Executors.newSingleThreadExecutor()) {
            Future<String> server = serverThread.submit(() -> server(serverHost.device(), listener));
            System.out.println("client: " + client(clientHost.device(), "127.0.0.1", listener.getLocalPort()));
            System.out.println("server: " + server.get());
        }
    }

    /** Waits for a WRITE with immediate into its memory and reports what arrived. */
    static String server(IbvDevice device, ServerSocket listener) throws Exception {
        try (Arena arena = Arena.ofShared();
                IbvContext ctx = device.open();
                IbvPd pd = ctx.allocPd();
                IbvCompChannel channel = ctx.createCompChannel();
                IbvCq cq = ctx.createCq(64, channel);
                IbvMr mr = pd.regMr(
                        ctx.allocBuffer(BYTES, arena),
                        AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
                IbvQp qp = ctx.createQp(pd, IbvQpInitAttr.rc(cq, 16))) {
            mr.segment().setString(0, "server memory before the write", StandardCharsets.UTF_8);
            QpInfo me = QpInfo.of(qp, mr);
            System.out.println("server: waiting for a client on port " + listener.getLocalPort());
            try (QpConnector peer = QpConnector.accept(listener, ACCEPT_TIMEOUT)) {
                QpInfo them = peer.exchange(me);
                QpConnector.rcToRts(qp, me, them);
                IbvRecvWr recv = new IbvRecvWr(1);
                recv.wrId = 1;
                qp.postRecv(recv); // a WRITE with immediate consumes a receive
                peer.barrier();
                IbvWc wc = awaitCompletion(cq, channel);
                String text = mr.segment().getString(0, StandardCharsets.UTF_8);
                peer.barrier(); // the client may read now
                peer.barrier(); // the client is done
                return wc.opcode + " " + wc.status + ", imm 0x" + Integer.toHexString(wc.immData) + ", " + wc.byteLen
                        + " bytes: \"" + text + "\"";
            }
        }
    }

    /** Writes a greeting into the server's memory, then reads the first bytes back. */
    static String client(IbvDevice device, String host, int port) throws Exception {
        try (Arena arena = Arena.ofShared();
                IbvContext ctx = device.open();
                IbvPd pd = ctx.allocPd();
                IbvCompChannel channel = ctx.createCompChannel();
                IbvCq cq = ctx.createCq(64, channel);
                IbvMr mr = pd.regMr(ctx.allocBuffer(BYTES, arena), AccessFlags.LOCAL_WRITE);
                IbvQp qp = ctx.createQp(pd, IbvQpInitAttr.rc(cq, 16))) {
            MemorySegment buf = mr.segment();
            QpInfo me = QpInfo.of(qp, mr);
            try (QpConnector peer = QpConnector.connect(host, port, TIMEOUT)) {
                QpInfo them = peer.exchange(me);
                QpConnector.rcToRts(qp, me, them);
                peer.barrier();

                buf.fill((byte) 0);
                buf.setString(0, "hello over vRDMA", StandardCharsets.UTF_8);
                IbvSendWr write = new IbvSendWr(1);
                write.wrId = 10;
                write.opcode = WrOpcode.RDMA_WRITE_WITH_IMM;
                write.sendFlags = SendFlags.SIGNALED;
                write.immData = 0xC0FFEE;
                write.remoteAddr = them.vaddr();
                write.rkey = them.rkey();
                write.addSge(mr, 0, BYTES);
                qp.postSend(write);
                IbvWc wc = awaitCompletion(cq, channel);
                peer.barrier();

                IbvSendWr read = new IbvSendWr(1);
                read.wrId = 11;
                read.opcode = WrOpcode.RDMA_READ;
                read.sendFlags = SendFlags.SIGNALED;
                read.remoteAddr = them.vaddr();
                read.rkey = them.rkey();
                read.addSge(mr, BYTES / 2, 16);
                qp.postSend(read);
                IbvWc rc = awaitCompletion(cq, channel);
                peer.barrier();
                String back =
                        new String(buf.asSlice(BYTES / 2, 16).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
                return wc.opcode + " " + wc.status + ", then " + rc.opcode + " " + rc.status + ": \"" + back + "\"";
            }
        }
    }

    /** The next completion: poll, arm, poll again, then sleep on the channel until an event. */
    static IbvWc awaitCompletion(IbvCq cq, IbvCompChannel channel) {
        IbvWc[] wcs = IbvWc.array(1);
        while (true) {
            if (cq.poll(wcs) == 1 || (reArm(cq) && cq.poll(wcs) == 1)) {
                if (wcs[0].status != WcStatus.SUCCESS) {
                    throw new IllegalStateException("work request failed: " + wcs[0]);
                }
                return wcs[0];
            }
            IbvCq event = channel.getCqEvent(TIMEOUT);
            if (event == null) {
                throw new IllegalStateException("no completion within " + TIMEOUT);
            }
            event.ackEvents(1);
        }
    }

    private static boolean reArm(IbvCq cq) {
        cq.reqNotify(false);
        return true;
    }
}
