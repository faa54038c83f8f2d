package org.vrdma.harness.perf;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The out-of-band channel two hosts use to set up a connection, as perftest uses a TCP socket:
 * one line of US-ASCII text per message, a verb followed by {@code key=value} fields separated by
 * single spaces, ended by {@code \n}. Numbers are decimal, or hexadecimal with a {@code 0x}
 * prefix. A message is at most 1024 bytes.
 */
public final class OobLine {
    private static final int MAX_LINE = 1024;

    private final String verb;
    private final Map<String, String> fields;

    private OobLine(String verb, Map<String, String> fields) {
        this.verb = verb;
        this.fields = fields;
    }

    public static OobLine of(String verb) {
        return new OobLine(verb, new LinkedHashMap<>());
    }

    public OobLine with(String key, Object value) {
        fields.put(key, String.valueOf(value));
        return this;
    }

    public OobLine withHex(String key, long value) {
        fields.put(key, "0x" + Long.toHexString(value));
        return this;
    }

    public String verb() {
        return verb;
    }

    public String text(String key) {
        String v = fields.get(key);
        if (v == null) {
            throw new OobException("message " + verb + " has no field " + key + ": " + this);
        }
        return v;
    }

    public long number(String key) {
        String v = text(key);
        try {
            return v.startsWith("0x") ? Long.parseUnsignedLong(v.substring(2), 16) : Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new OobException("field " + key + " of " + verb + " is not a number: " + v);
        }
    }

    /** Parses one line; throws {@link OobException} if it is not a message. */
    public static OobLine parse(String line) {
        String[] tokens = line.strip().split(" ");
        if (tokens.length == 0 || tokens[0].isEmpty() || tokens[0].contains("=")) {
            throw new OobException("not an out-of-band message: " + line);
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 1; i < tokens.length; i++) {
            int eq = tokens[i].indexOf('=');
            if (eq <= 0) {
                throw new OobException("bad field '" + tokens[i] + "' in: " + line);
            }
            fields.put(tokens[i].substring(0, eq), tokens[i].substring(eq + 1));
        }
        return new OobLine(tokens[0], fields);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(verb);
        fields.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
        return sb.toString();
    }

    /** Failure of the out-of-band exchange: the peer is unreachable, silent, gone or speaks nonsense. */
    public static final class OobException extends RuntimeException {
        public OobException(String message) {
            super(message);
        }

        public OobException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** One connected socket carrying messages both ways. */
    public static final class Channel implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final OutputStream out;

        public Channel(Socket socket) throws IOException {
            this.socket = socket;
            socket.setTcpNoDelay(true);
            this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            this.out = socket.getOutputStream();
        }

        public void send(OobLine message) {
            String line = message + "\n";
            if (line.length() > MAX_LINE) {
                throw new OobException("message too long: " + message);
            }
            try {
                out.write(line.getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException e) {
                throw new OobException("peer went away: " + e.getMessage(), e);
            }
        }

        /** Waits up to {@code timeoutMs} (0: forever) for the next message. */
        public OobLine receive(long timeoutMs) {
            try {
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(0, timeoutMs)));
                String line = in.readLine();
                if (line == null) {
                    throw new OobException("peer closed the out-of-band connection");
                }
                if (line.length() > MAX_LINE) {
                    throw new OobException("message too long from peer");
                }
                return parse(line);
            } catch (SocketTimeoutException e) {
                throw new OobException("no message from the peer in " + timeoutMs + " ms", e);
            } catch (IOException e) {
                throw new OobException("out-of-band connection failed: " + e.getMessage(), e);
            }
        }

        /** Receives a message and checks its verb; an {@code ERROR} from the peer becomes an exception. */
        public OobLine expect(String verb, long timeoutMs) {
            OobLine m = receive(timeoutMs);
            if (m.verb().equals("ERROR")) {
                throw new OobException(
                        "peer reported: " + m.fields.getOrDefault("reason", "?").replace('_', ' '));
            }
            if (!m.verb().equals(verb)) {
                throw new OobException("expected " + verb + " from the peer, got: " + m);
            }
            return m;
        }

        public String remote() {
            return String.valueOf(socket.getRemoteSocketAddress());
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
