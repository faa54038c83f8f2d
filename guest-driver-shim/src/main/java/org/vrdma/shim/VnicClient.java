package org.vrdma.shim;

import static org.vrdma.shim.ControlProtocol.*;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * The application side of the control protocol ({@link ControlProtocol}): one connection to a
 * {@link VnicControlServer}, i.e. one device context, as the native library's {@code
 * ibv_open_device} makes. One request is in flight at a time (calls are serialised); a response
 * with an error status becomes a {@link VerbsException} with that errno, so callers handle errors
 * of a vNIC in another process exactly as errors of the object model.
 */
public final class VnicClient implements AutoCloseable {
    private final Path socket;
    private final SocketChannel ch;
    private final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private int seq;

    private VnicClient(final Path socket, final SocketChannel ch) {
        this.socket = socket;
        this.ch = ch;
    }

    /**
     * Connects to the server on {@code socket} and says HELLO with this process's pid.
     *
     * @throws VerbsException ENOENT (nothing listens there), EPERM (the server refuses this user),
     *     EIO (the connection failed)
     */
    public static VnicClient connect(final Path socket) {
        final VnicClient c = new VnicClient(socket, open(socket));
        try {
            final ByteBuffer hello = body(16);
            hello.putInt(MAGIC).putShort((short) VERSION).putShort((short) 0);
            hello.putInt((int) ProcessHandle.current().pid()).putInt(0);
            final ByteBuffer r = c.call(HELLO, hello);
            final int version = r.getShort() & 0xFFFF;
            if (version != VERSION) {
                throw new VerbsException(Errno.EIO, "the vNIC speaks protocol version " + version);
            }
            return c;
        } catch (final RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** The socket this client is connected to. */
    public Path socket() {
        return socket;
    }

    /** A little-endian request body of {@code bytes} bytes, to fill and pass to {@link #call}. */
    public static ByteBuffer body(final int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Sends request {@code op} with {@code body} (filled up to its position; null for none) and
     * returns the response body, little-endian, positioned at its start.
     *
     * @throws VerbsException the response's errno, or EIO when the connection fails
     */
    public synchronized ByteBuffer call(final int op, final ByteBuffer body) {
        return exchange(ch, op, ++seq, body);
    }

    /**
     * Opens a second connection bound by {@code op} (BIND_CHANNEL or BIND_DOORBELL) with {@code
     * body}: afterwards the server streams completion events on it, or reads doorbell bytes from it.
     */
    public SocketChannel bind(final int op, final ByteBuffer body) {
        final SocketChannel s = open(socket);
        try {
            exchange(s, op, 1, body);
            return s;
        } catch (final RuntimeException e) {
            closeQuietly(s);
            throw e;
        }
    }

    /** Closes the connection: the server then releases everything this context still holds. */
    @Override
    public void close() {
        closeQuietly(ch);
    }

    private static SocketChannel open(final Path socket) {
        SocketChannel s = null;
        try {
            s = SocketChannel.open(StandardProtocolFamily.UNIX);
            s.connect(UnixDomainSocketAddress.of(socket));
            return s;
        } catch (final IOException e) {
            closeQuietly(s);
            throw new VerbsException(Errno.ENOENT, "no vNIC serves " + socket + ": " + e.getMessage());
        }
    }

    private ByteBuffer exchange(final SocketChannel s, final int op, final int seqNo, final ByteBuffer body) {
        final int len = body == null ? 0 : body.position();
        final ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + len).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(len).putShort((short) op).putShort((short) 0).putInt(seqNo).putInt(0);
        if (body != null) {
            out.put(body.flip());
        }
        out.flip();
        try {
            while (out.hasRemaining()) {
                s.write(out);
            }
            final ByteBuffer h = s == ch ? header.clear() : body(HEADER_BYTES);
            readFully(s, h);
            h.flip();
            final int rlen = h.getInt();
            final int rop = h.getShort() & 0xFFFF;
            h.getShort();
            final int rseq = h.getInt();
            final int status = h.getInt();
            if (rlen < 0 || rlen > MAX_BODY || rop != op || rseq != seqNo) {
                throw new VerbsException(Errno.EIO, "malformed response to request " + op + " from " + socket);
            }
            final ByteBuffer r = body(rlen);
            readFully(s, r);
            r.flip();
            if (status != 0) {
                throw new VerbsException(errno(status), "the vNIC refused request " + op + " (errno " + status + ")");
            }
            return r;
        } catch (final IOException e) {
            throw new VerbsException(Errno.EIO, "connection to the vNIC at " + socket + " failed: " + e.getMessage());
        }
    }

    private static void readFully(final SocketChannel s, final ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (s.read(b) < 0) {
                throw new IOException("the vNIC closed the connection");
            }
        }
    }

    /** The {@link Errno} of a Linux error number; EIO for one the model has no name for. */
    static Errno errno(final int code) {
        for (final Errno e : Errno.values()) {
            if (e.code() == code) {
                return e;
            }
        }
        return Errno.EIO;
    }

    private static void closeQuietly(final SocketChannel s) {
        if (s != null) {
            try {
                s.close();
            } catch (final IOException e) {
                // nothing left to release
            }
        }
    }
}
