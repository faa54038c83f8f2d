package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.shim.ControlProtocol.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.Random;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The control server answers bad requests with errors, never crashes, and keeps clients apart. */
class ControlProtocolTest {
    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    ControlProtocolTest() throws Exception {
        fx = new ShimFixture();
    }

    /** A minimal client speaking the protocol from Java. */
    private final class Client implements AutoCloseable {
        final SocketChannel ch;
        int seq;

        Client() throws IOException {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(fx.server.socketPath()));
        }

        Client hello() throws IOException {
            final ByteBuffer b = body(16);
            b.putInt(MAGIC).putShort((short) VERSION).putShort((short) 0);
            b.putInt((int) ProcessHandle.current().pid()).putInt(0);
            assertThat(call(HELLO, b).status).isZero();
            return this;
        }

        record Reply(int status, ByteBuffer body) {
            int handle() {
                return body.getInt(0);
            }
        }

        Reply call(final int op, final ByteBuffer body) throws IOException {
            final int len = body == null ? 0 : body.flip().remaining();
            final ByteBuffer h = body(HEADER_BYTES);
            h.putInt(len)
                    .putShort((short) op)
                    .putShort((short) 0)
                    .putInt(++seq)
                    .putInt(0)
                    .flip();
            write(h);
            if (body != null) {
                write(body);
            }
            final ByteBuffer rh = read(HEADER_BYTES);
            final int rlen = rh.getInt();
            assertThat(rh.getShort() & 0xFFFF).isEqualTo(op);
            rh.getShort();
            assertThat(rh.getInt()).isEqualTo(seq);
            final int status = rh.getInt();
            return new Reply(status, read(rlen));
        }

        void write(final ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }

        ByteBuffer read(final int n) throws IOException {
            final ByteBuffer b = body(n);
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    throw new IOException("closed");
                }
            }
            return b.flip();
        }

        Reply allocPd() throws IOException {
            return call(ALLOC_PD, null);
        }

        Reply regMr(final int pd, final long addr, final long len) throws IOException {
            final ByteBuffer b = body(32);
            b.putInt(pd).putInt(1).putLong(addr).putLong(len).putLong(addr);
            return call(REG_MR, b);
        }

        Reply handleOp(final int op, final int handle, final int arg) throws IOException {
            return call(op, body(8).putInt(handle).putInt(arg));
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    private static ByteBuffer body(final int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void requestsBeforeHelloOrWithABadHelloAreRefused() throws Exception {
        try (Client c = new Client()) {
            assertThat(c.call(QUERY_DEVICE, null).status).isEqualTo(EPROTO);
            final ByteBuffer bad = body(16).putInt(0x12345678).putShort((short) VERSION);
            assertThat(c.call(HELLO, bad).status).isEqualTo(EPROTO);
            final ByteBuffer future = body(16).putInt(MAGIC).putShort((short) 99);
            assertThat(c.call(HELLO, future).status).isEqualTo(EPROTO);
            final ByteBuffer pid0 = body(16).putInt(MAGIC).putShort((short) VERSION);
            pid0.putShort((short) 0).putInt(0).putInt(0);
            assertThat(c.call(HELLO, pid0).status).as("pid 0").isEqualTo(EPERM);
            final ByteBuffer notMine = body(16).putInt(MAGIC).putShort((short) VERSION);
            notMine.putShort((short) 0).putInt(Integer.MAX_VALUE).putInt(0);
            assertThat(c.call(HELLO, notMine).status).as("no such process").isEqualTo(EPERM);
            c.hello();
            assertThat(c.call(QUERY_DEVICE, null).status).isZero();
        }
    }

    @Test
    void badRequestsGetErrorsAndTheConnectionKeepsWorking() throws Exception {
        try (Client c = new Client().hello()) {
            assertThat(c.call(999, null).status).isEqualTo(EOPNOTSUPP);
            assertThat(c.call(QUERY_PORT, body(4).putInt(2)).status).isEqualTo(EINVAL);
            assertThat(c.call(QUERY_PORT, body(2).putShort((short) 1)).status)
                    .as("short body")
                    .isEqualTo(EINVAL);
            assertThat(c.call(QUERY_GID, body(8).putInt(1).putInt(7)).status).isEqualTo(EINVAL);
            assertThat(c.handleOp(DEALLOC_PD, 42, 0).status).isEqualTo(EINVAL);
            final int pd = c.allocPd().handle();
            assertThat(c.regMr(pd, 0x1000, 4096).status).as("unmapped memory").isEqualTo(EFAULT);
            assertThat(c.regMr(pd, 0, 4096).status).isEqualTo(EINVAL);
            assertThat(c.regMr(pd + 1, 0x1000, 4096).status).isEqualTo(EINVAL);
            final ByteBuffer cq0 =
                    body(24).putInt(0).putInt(0).putInt(0).putInt(0).putLong(1);
            assertThat(c.call(CREATE_CQ, cq0).status).isEqualTo(EINVAL);
            final ByteBuffer cq =
                    body(24).putInt(16).putInt(0).putInt(0).putInt(0).putLong(1);
            final Client.Reply cqReply = c.call(CREATE_CQ, cq);
            assertThat(cqReply.status).isZero();
            assertThat(c.handleOp(DEALLOC_PD, cqReply.handle(), 0).status)
                    .as("a CQ is no PD")
                    .isEqualTo(EINVAL);
            assertThat(c.handleOp(REQ_NOTIFY_CQ, cqReply.handle(), 0).status)
                    .as("no channel")
                    .isEqualTo(EINVAL);
            assertThat(c.handleOp(ACK_CQ_EVENTS, cqReply.handle(), 1).status).isEqualTo(EINVAL);
            final Client.Reply polled = c.handleOp(POLL_CQ, cqReply.handle(), 16);
            assertThat(polled.status).isZero();
            assertThat(polled.body.getInt(0)).isZero();

            try (Arena arena = Arena.ofConfined()) {
                final MemorySegment mem = arena.allocate(8192, 4096);
                mem.fill((byte) 0x5A);
                final Client.Reply mr = c.regMr(pd, mem.address(), mem.byteSize());
                assertThat(mr.status).isZero();
                assertThat(c.handleOp(DEALLOC_PD, pd, 0).status)
                        .as("MR still uses it")
                        .isEqualTo(EBUSY);
                assertThat(c.handleOp(DEREG_MR, mr.handle(), 0).status).isZero();
                assertThat(c.handleOp(DEREG_MR, mr.handle(), 0).status)
                        .as("twice")
                        .isEqualTo(EINVAL);
            }
            assertThat(c.handleOp(DESTROY_CQ, cqReply.handle(), 0).status).isZero();
            assertThat(c.handleOp(DEALLOC_PD, pd, 0).status).isZero();
            assertThat(c.call(QUERY_DEVICE, null).status).isZero();
        }
    }

    @Test
    void oneConnectionCannotReachAnothersObjects() throws Exception {
        try (Client a = new Client().hello();
                Client b = new Client().hello()) {
            final int pdA = a.allocPd().handle();
            final ByteBuffer cq =
                    body(24).putInt(16).putInt(0).putInt(0).putInt(0).putLong(1);
            final int cqA = a.call(CREATE_CQ, cq).handle();
            assertThat(b.handleOp(DEALLOC_PD, pdA, 0).status).isEqualTo(EINVAL);
            assertThat(b.handleOp(POLL_CQ, cqA, 4).status).isEqualTo(EINVAL);
            assertThat(b.handleOp(DESTROY_CQ, cqA, 0).status).isEqualTo(EINVAL);
            // b's own handles are its own, even when the numbers coincide.
            final int pdB = b.allocPd().handle();
            assertThat(b.handleOp(DEALLOC_PD, pdB, 0).status).isZero();
            assertThat(fx.server.sessions())
                    .anySatisfy(s -> assertThat(s.protectionDomains()).isEqualTo(1))
                    .anySatisfy(s -> assertThat(s.protectionDomains()).isZero());
            // A channel token is a secret: guessing one fails.
            final ByteBuffer ch = a.call(CREATE_CHANNEL, null).body;
            final int chHandle = ch.getInt(0);
            final long token = ch.getLong(8);
            try (Client thief = new Client()) {
                final ByteBuffer guess = body(16).putInt(chHandle).putInt(0).putLong(token + 1);
                assertThat(thief.call(BIND_CHANNEL, guess).status).isEqualTo(EINVAL);
            }
        }
    }

    /** CREATE_AH of {@code gid} on {@code port} ({@code struct vr_create_ah_req}). */
    private static ByteBuffer createAh(
            final int pd, final boolean global, final byte[] gid, final int sgidIndex, final int port) {
        final ByteBuffer b = body(56);
        b.putInt(pd).putInt(global ? 1 : 0).put(gid).putInt(sgidIndex).putInt(64);
        return b.putInt(0).putInt(0).putInt(0).putInt(0).putInt(port).putInt(0);
    }

    private static byte[] roceGid(final int a, final int b, final int c, final int d) {
        return new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, (byte) a, (byte) b, (byte) c, (byte) d};
    }

    private static ByteBuffer srqAttr(final int handle, final int mask, final int maxWr, final int limit) {
        return body(24).putInt(handle)
                .putInt(mask)
                .putInt(maxWr)
                .putInt(0)
                .putInt(limit)
                .putInt(0);
    }

    @Test
    void addressHandlesAndSharedReceiveQueuesFollowTheRulesAndStayWithTheirConnection() throws Throwable {
        final int ringFd = memfd(4096, true);
        try (Client a = new Client().hello();
                Client b = new Client().hello()) {
            final int pdA = a.allocPd().handle();
            // Address handles: RoCE v2 only (a global route to an IPv4-mapped GID of port 1, GID 0).
            final Client.Reply ah = a.call(CREATE_AH, createAh(pdA, true, roceGid(10, 0, 0, 9), 0, 1));
            assertThat(ah.status).isZero();
            assertThat(a.call(CREATE_AH, createAh(pdA, false, roceGid(10, 0, 0, 9), 0, 1)).status)
                    .as("LID-only")
                    .isEqualTo(EINVAL);
            final byte[] linkLocal = new byte[16];
            linkLocal[0] = (byte) 0xfe;
            linkLocal[1] = (byte) 0x80;
            linkLocal[15] = 1;
            assertThat(a.call(CREATE_AH, createAh(pdA, true, linkLocal, 0, 1)).status)
                    .as("not IPv4-mapped")
                    .isEqualTo(EINVAL);
            assertThat(a.call(CREATE_AH, createAh(pdA, true, roceGid(10, 0, 0, 9), 1, 1)).status)
                    .as("sgid_index 1")
                    .isEqualTo(EINVAL);
            assertThat(a.call(CREATE_AH, createAh(pdA, true, roceGid(10, 0, 0, 9), 0, 2)).status)
                    .as("port 2")
                    .isEqualTo(EINVAL);
            assertThat(a.call(CREATE_AH, createAh(pdA + 100, true, roceGid(10, 0, 0, 9), 0, 1)).status)
                    .as("no such PD")
                    .isEqualTo(EINVAL);
            // A shared receive queue of 16 with its ring (the memfd of this process).
            final ByteBuffer srq = body(24).putInt(pdA).putInt(16).putInt(1).putInt(0);
            final Client.Reply created = a.call(CREATE_SRQ, srq.putInt(ringFd).putInt(4096));
            assertThat(created.status).isZero();
            final int srqA = created.handle();
            assertThat(created.body.getInt(4)).as("max_wr").isEqualTo(16);
            final ByteBuffer tooBig =
                    body(24).putInt(pdA).putInt(1 << 30).putInt(1).putInt(0);
            assertThat(a.call(CREATE_SRQ, tooBig.putInt(ringFd).putInt(4096)).status)
                    .isEqualTo(EINVAL);
            final ByteBuffer smallRing =
                    body(24).putInt(pdA).putInt(64).putInt(1).putInt(0);
            assertThat(a.call(CREATE_SRQ, smallRing.putInt(ringFd).putInt(4096)).status)
                    .as("ring too small for 64 entries")
                    .isEqualTo(EINVAL);
            assertThat(a.call(MODIFY_SRQ, srqAttr(srqA, SRQ_ATTR_MAX_WR, 32, 0)).status)
                    .as("growing beyond the ring's 16 slots needs a new ring")
                    .isEqualTo(EINVAL);
            assertThat(a.call(MODIFY_SRQ, srqAttr(srqA, SRQ_ATTR_MAX_WR, 12, 0)).status)
                    .as("resizing within the ring")
                    .isZero();
            assertThat(a.handleOp(QUERY_SRQ, srqA, 0).body.getInt(8))
                    .as("max_wr")
                    .isEqualTo(12);
            assertThat(a.call(MODIFY_SRQ, srqAttr(srqA, SRQ_ATTR_LIMIT, 0, 13)).status)
                    .as("limit above max_wr")
                    .isEqualTo(EINVAL);
            assertThat(a.call(MODIFY_SRQ, srqAttr(srqA, 1 << 5, 0, 0)).status).isEqualTo(EINVAL);
            assertThat(a.call(MODIFY_SRQ, srqAttr(srqA, SRQ_ATTR_LIMIT, 0, 4)).status)
                    .isZero();
            final Client.Reply q = a.handleOp(QUERY_SRQ, srqA, 0);
            assertThat(q.status).isZero();
            assertThat(q.body.getInt(8)).as("max_wr").isEqualTo(12);
            assertThat(q.body.getInt(16)).as("srq_limit").isEqualTo(4);

            // Another connection can name neither: not in a QP, not to query, modify or destroy.
            final int pdB = b.allocPd().handle();
            final ByteBuffer cq =
                    body(24).putInt(16).putInt(0).putInt(0).putInt(0).putLong(1);
            final int cqB = b.call(CREATE_CQ, cq).handle();
            final ByteBuffer qp = body(56);
            qp.putInt(pdB).putInt(cqB).putInt(cqB).putInt(srqA).putInt(QPT_RC).putInt(0);
            qp.putInt(16)
                    .putInt(0)
                    .putInt(1)
                    .putInt(0)
                    .putInt(0)
                    .putInt(-1)
                    .putInt(1 << 20)
                    .putInt(0);
            assertThat(b.call(CREATE_QP, qp).status).isEqualTo(EINVAL);
            assertThat(b.handleOp(QUERY_SRQ, srqA, 0).status).isEqualTo(EINVAL);
            assertThat(b.call(MODIFY_SRQ, srqAttr(srqA, SRQ_ATTR_LIMIT, 0, 1)).status)
                    .isEqualTo(EINVAL);
            assertThat(b.handleOp(DESTROY_SRQ, srqA, 0).status).isEqualTo(EINVAL);
            assertThat(b.handleOp(DESTROY_AH, ah.handle(), 0).status).isEqualTo(EINVAL);
            // Nor are handles of other kinds taken for them.
            assertThat(a.handleOp(DESTROY_SRQ, ah.handle(), 0).status).isEqualTo(EINVAL);
            assertThat(a.handleOp(DESTROY_AH, srqA, 0).status).isEqualTo(EINVAL);
            // Still a's, and intact.
            assertThat(a.handleOp(QUERY_SRQ, srqA, 0).body.getInt(16)).isEqualTo(4);
            assertThat(a.handleOp(DEALLOC_PD, pdA, 0).status).as("PD in use").isEqualTo(EBUSY);
            assertThat(a.handleOp(DESTROY_SRQ, srqA, 0).status).isZero();
            assertThat(a.handleOp(DESTROY_AH, ah.handle(), 0).status).isZero();
            assertThat(a.handleOp(DEALLOC_PD, pdA, 0).status).isZero();
        } finally {
            closeFd(ringFd);
        }
    }

    /** The descriptor number this JVM holds for {@code file}, read from /proc/self/fd. */
    private static int fdOf(final java.nio.file.Path file) throws IOException {
        try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            for (final java.nio.file.Path fd : fds.toList()) {
                try {
                    if (java.nio.file.Files.readSymbolicLink(fd).equals(file)) {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                } catch (final IOException e) {
                    // closed meanwhile (the listing's own descriptor)
                }
            }
        }
        throw new AssertionError("no descriptor for " + file);
    }

    private static ByteBuffer createCqWithRing(final int fd, final int bytes) {
        final ByteBuffer b = body(32);
        b.putInt(16).putInt(0).putInt(0).putInt(0).putLong(0x1234);
        return b.putInt(fd).putInt(bytes);
    }

    @Test
    void ringsMustBeSealedMemfdsOfTheCaller() throws Exception {
        final java.nio.file.Path file = java.nio.file.Files.write(fx.dir.resolve("not-a-ring"), new byte[8192])
                .toRealPath();
        try (Client c = new Client().hello();
                java.nio.channels.FileChannel open = java.nio.channels.FileChannel.open(
                        file, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            // A regular file (the vNIC would reopen it with its own rights): refused.
            assertThat(c.call(CREATE_CQ, createCqWithRing(fdOf(file), 8192)).status)
                    .isEqualTo(EINVAL);
            // A descriptor the caller does not have.
            assertThat(c.call(CREATE_CQ, createCqWithRing(1_000_000, 8192)).status)
                    .isIn(EINVAL, EPERM);
            // A ring too small for the queue.
            assertThat(c.call(CREATE_CQ, createCqWithRing(fdOf(file), 64)).status)
                    .isEqualTo(EINVAL);
            // A QP needs CQs with rings; an unknown QP type is not served.
            final int pd = c.allocPd().handle();
            final ByteBuffer cq =
                    body(24).putInt(16).putInt(0).putInt(0).putInt(0).putLong(1);
            final int plainCq = c.call(CREATE_CQ, cq).handle();
            final ByteBuffer qp = body(56);
            qp.putInt(pd)
                    .putInt(plainCq)
                    .putInt(plainCq)
                    .putInt(0)
                    .putInt(QPT_RC)
                    .putInt(0);
            qp.putInt(16)
                    .putInt(16)
                    .putInt(1)
                    .putInt(1)
                    .putInt(0)
                    .putInt(-1)
                    .putInt(1 << 20)
                    .putInt(0);
            assertThat(c.call(CREATE_QP, qp).status).isEqualTo(EINVAL);
            final ByteBuffer ud = body(56);
            ud.putInt(pd)
                    .putInt(plainCq)
                    .putInt(plainCq)
                    .putInt(0)
                    .putInt(QPT_UD)
                    .putInt(0);
            ud.putInt(16)
                    .putInt(16)
                    .putInt(1)
                    .putInt(1)
                    .putInt(0)
                    .putInt(-1)
                    .putInt(1 << 20)
                    .putInt(0);
            assertThat(c.call(CREATE_QP, ud).status).isEqualTo(EINVAL);
            final ByteBuffer xrc = body(56);
            xrc.putInt(pd).putInt(plainCq).putInt(plainCq).putInt(0).putInt(9).putInt(0); // IBV_QPT_XRC_SEND
            xrc.putInt(16)
                    .putInt(16)
                    .putInt(1)
                    .putInt(1)
                    .putInt(0)
                    .putInt(-1)
                    .putInt(1 << 20)
                    .putInt(0);
            assertThat(c.call(CREATE_QP, xrc).status).isEqualTo(EOPNOTSUPP);
            // Nothing was created by the refused requests; the connection keeps working.
            assertThat(fx.server.sessions()).singleElement().satisfies(v -> {
                assertThat(v.completionQueues()).isEqualTo(1);
                assertThat(v.queuePairs()).isZero();
            });
            assertThat(c.call(QUERY_DEVICE, null).status).isZero();
        }
    }

    /** REG_MR of {@code len} bytes at {@code addr} naming {@code memfd} at {@code offset}. */
    private static ByteBuffer regMrWithMemfd(final int pd, final long addr, final long len, final int memfd) {
        final ByteBuffer b = body(48);
        b.putInt(pd).putInt(1).putLong(addr).putLong(len).putLong(addr);
        b.putInt(memfd).putInt(0).putLong(addr & 4095);
        return b;
    }

    /** A memfd of this process, {@code bytes} long, optionally sealed against resizing. */
    private static int memfd(final long bytes, final boolean sealed) throws Throwable {
        final java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
        final var lookup = linker.defaultLookup();
        final var create = linker.downcallHandle(
                lookup.find("memfd_create").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.ADDRESS,
                        java.lang.foreign.ValueLayout.JAVA_INT));
        final var truncate = linker.downcallHandle(
                lookup.find("ftruncate").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_LONG));
        final var fcntl = linker.downcallHandle(
                lookup.find("fcntl").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT),
                java.lang.foreign.Linker.Option.firstVariadicArg(2));
        try (Arena a = Arena.ofConfined()) {
            final int fd = (int) create.invoke(a.allocateFrom("vrdma-mr"), 0x1 | 0x2); // CLOEXEC, ALLOW_SEALING
            assertThat(fd).isNotNegative();
            assertThat((int) truncate.invoke(fd, bytes)).isZero();
            if (sealed) {
                assertThat((int) fcntl.invoke(fd, 1033, 2 | 4)).isZero(); // F_ADD_SEALS: SHRINK, GROW
            }
            return fd;
        }
    }

    @Test
    void aMemfdTheVnicCannotTrustFallsBackToProcessMemoryAndIsCounted() throws Throwable {
        final java.nio.file.Path file = java.nio.file.Files.write(fx.dir.resolve("not-a-memfd"), new byte[8192])
                .toRealPath();
        try (Arena arena = Arena.ofShared();
                Client c = new Client().hello();
                java.nio.channels.FileChannel open = java.nio.channels.FileChannel.open(
                        file, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            final MemorySegment mem = arena.allocate(8192, 4096);
            final int pd = c.allocPd().handle();
            final int unsealed = memfd(8192, false);
            final int small = memfd(4096, true);
            final int good = memfd(8192, true);
            // A regular file, an unsealed memfd, a memfd smaller than the region: the region is
            // registered all the same, reached with process_vm (flags 0), and each refusal counted.
            for (final int fd : new int[] {fdOf(file), unsealed, small}) {
                final Client.Reply r = c.call(REG_MR, regMrWithMemfd(pd, mem.address(), 8192, fd));
                assertThat(r.status).isZero();
                assertThat(r.body.getInt(12)).isZero();
            }
            // A sealed memfd large enough: mapped (flags 1).
            final Client.Reply r = c.call(REG_MR, regMrWithMemfd(pd, mem.address(), 8192, good));
            assertThat(r.status).isZero();
            assertThat(r.body.getInt(12)).isEqualTo(MR_ZERO_COPY);
            assertThat(fx.server.memoryStats()).satisfies(m -> {
                assertThat(m.refusedMemfds()).isEqualTo(3);
                assertThat(m.copyRegions()).isEqualTo(3);
                assertThat(m.zeroCopyRegions()).isEqualTo(1);
            });
            assertThat(ShimFixture.mappedZeroCopyRegions()).isEqualTo(1);
            assertThat(c.handleOp(DEREG_MR, r.handle(), 0).status).isZero();
            assertThat(ShimFixture.mappedZeroCopyRegions()).isZero();
            for (final int fd : new int[] {unsealed, small, good}) {
                closeFd(fd);
            }
        }
    }

    private static void closeFd(final int fd) throws Throwable {
        final java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
        final var close = linker.downcallHandle(
                linker.defaultLookup().find("close").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(
                        java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT));
        final int ignored = (int) close.invoke(fd);
    }

    @Test
    void anOversizedRequestClosesOnlyThatConnection() throws Exception {
        try (Client c = new Client().hello()) {
            final ByteBuffer h = body(HEADER_BYTES);
            h.putInt(MAX_BODY + 1)
                    .putShort((short) QUERY_DEVICE)
                    .putShort((short) 0)
                    .putInt(1)
                    .putInt(0)
                    .flip();
            c.write(h);
            final ByteBuffer r = c.read(HEADER_BYTES);
            assertThat(r.getInt(12)).isEqualTo(EMSGSIZE);
            assertThat(c.ch.read(body(1))).isEqualTo(-1);
        }
        ShimFixture.eventually(
                java.time.Duration.ofSeconds(10), () -> fx.server.sessions().isEmpty(), "cleanup");
        try (Client d = new Client().hello()) {
            assertThat(d.call(QUERY_DEVICE, null).status).isZero();
        }
    }

    @Test
    void randomBytesNeverHurtTheServer() throws Exception {
        final Random random = new Random(7);
        for (int i = 0; i < 50; i++) {
            try (Client c = new Client()) {
                if (random.nextBoolean()) {
                    c.hello();
                }
                final byte[] junk = new byte[random.nextInt(200)];
                random.nextBytes(junk);
                c.write(ByteBuffer.wrap(junk));
            }
        }
        ShimFixture.eventually(
                java.time.Duration.ofSeconds(10), () -> fx.server.sessions().isEmpty(), "cleanup");
        try (Client d = new Client().hello()) {
            assertThat(d.call(QUERY_DEVICE, null).status).isZero();
            assertThat(d.allocPd().status).isZero();
        }
    }
}
