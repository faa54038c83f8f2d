package org.vrdma.vnic.transport;

/** AETH syndrome encoding (IBA 9.3.5): ACK, RNR NAK with timer code, NAK with a reason code. */
public final class Aeth {
    /** ACK with the "invalid credit count" value: this transport uses no end-to-end credits. */
    public static final int ACK = 0x1F;

    public static final int NAK_PSN_SEQUENCE_ERROR = 0;
    public static final int NAK_INVALID_REQUEST = 1;
    public static final int NAK_REMOTE_ACCESS_ERROR = 2;
    public static final int NAK_REMOTE_OPERATIONAL_ERROR = 3;

    private Aeth() {}

    /** Syndrome of an RNR NAK carrying {@code timerCode}. */
    public static int rnrNak(final int timerCode) {
        return 0x20 | (timerCode & 0x1F);
    }

    /** Syndrome of a NAK with {@code code}. */
    public static int nak(final int code) {
        return 0x60 | (code & 0x1F);
    }

    public static boolean isAck(final int syndrome) {
        return (syndrome & 0xE0) == 0;
    }

    public static boolean isRnrNak(final int syndrome) {
        return (syndrome & 0xE0) == 0x20;
    }

    public static boolean isNak(final int syndrome) {
        return (syndrome & 0xE0) == 0x60;
    }

    /** The low five bits: credit count, RNR timer code or NAK code. */
    public static int value(final int syndrome) {
        return syndrome & 0x1F;
    }
}
