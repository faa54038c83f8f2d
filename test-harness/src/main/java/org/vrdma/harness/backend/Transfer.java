package org.vrdma.harness.backend;

import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The outcome of one transfer: both hosts' exit statuses and output ({@code ./vrdma host}'s exit
 * codes: 0 success, 3 peer unreachable, 4 test failed, 5 data not intact; {@link
 * HostRun#TIMED_OUT} when a side did not finish in time).
 */
public record Transfer(
        LabHost from,
        LabHost to,
        TransferOptions options,
        int clientExit,
        int serverExit,
        String clientOutput,
        String serverOutput) {
    private static final Pattern SERVER_VERIFIED =
            Pattern.compile("verify: (\\d+) bytes written by the client, byte-exact");
    private static final Pattern CLIENT_VERIFIED = Pattern.compile("verify: (\\d+) bytes byte-exact");

    /**
     * Bytes the receiving side compared and found exact, when it checked: the server for
     * {@code write_bw} (it received the writes), the client for {@code read_bw} (it read them).
     */
    public OptionalLong verifiedBytes() {
        Matcher m = options.test().equals("read_bw")
                ? CLIENT_VERIFIED.matcher(clientOutput)
                : SERVER_VERIFIED.matcher(serverOutput);
        return m.find() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
    }

    /** Both sides succeeded, and the receiver checked every byte of the transfer and found it exact. */
    public boolean byteExact() {
        Matcher client = CLIENT_VERIFIED.matcher(clientOutput);
        long expected = options.totalBytes();
        return clientExit == 0
                && serverExit == 0
                && client.find()
                && Long.parseLong(client.group(1)) == expected
                && verifiedBytes().orElse(-1) == expected;
    }

    /** Throws, with both hosts' output, unless {@link #byteExact()}. */
    public Transfer assertByteExact() {
        if (!byteExact()) {
            throw new AssertionError(this);
        }
        return this;
    }

    @Override
    public String toString() {
        return "transfer " + from.name() + " -> " + to.name() + " (" + options.test() + ", " + options.totalBytes()
                + " bytes): client exit " + clientExit + ", server exit " + serverExit + "\n--- client on "
                + from.name() + ":\n" + clientOutput + "\n--- server on " + to.name() + ":\n" + serverOutput;
    }
}
