package org.vrdma.vnic.verbs;

/** Path MTU ({@code enum ibv_mtu}); the value is the payload bytes per packet. */
public enum Mtu {
    MTU_256(1, 256),
    MTU_512(2, 512),
    MTU_1024(3, 1024),
    MTU_2048(4, 2048),
    MTU_4096(5, 4096);

    private final int code;
    private final int bytes;

    Mtu(final int code, final int bytes) {
        this.code = code;
        this.bytes = bytes;
    }

    /** The {@code IBV_MTU_*} value (1..5). */
    public int code() {
        return code;
    }

    /** Payload bytes per packet. */
    public int bytes() {
        return bytes;
    }
}
