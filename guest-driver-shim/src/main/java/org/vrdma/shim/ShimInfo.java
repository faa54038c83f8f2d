package org.vrdma.shim;

/**
 * What the guest library presents besides the verbs model's attributes: identity, port and GID of
 * a RoCE v2 port on Ethernet, with no vendor id that applications would treat specially.
 */
final class ShimInfo {
    static final String FIRMWARE_VERSION = "0.1.0";
    /** No vendor: perftest and others then use only standard verbs. */
    static final int VENDOR_ID = 0;

    static final int VENDOR_PART_ID = 0;
    static final int HW_VERSION = 0;
    static final long PAGE_SIZE_CAP = 0xfffff000L;
    /**
     * PORT_ACTIVE_EVENT | SYS_IMAGE_GUID | RC_RNR_NAK_GEN | SRQ_RESIZE | MEM_WINDOW |
     * MEM_WINDOW_TYPE_2B (type 2 windows are bound to their queue pair).
     */
    static final int DEVICE_CAP_FLAGS = (1 << 10) | (1 << 11) | (1 << 12) | (1 << 13) | (1 << 17) | (1 << 24);

    static final int LOCAL_CA_ACK_DELAY = 15;
    static final int PORT_STATE_ACTIVE = 4;
    /** {@code IBV_PORT_DOWN}: the ENI's vRDMA is off. */
    static final int PORT_STATE_DOWN = 1;

    static final int GID_TABLE_LENGTH = 1;
    /** IBV_PORT_CM_SUP. */
    static final int PORT_CAP_FLAGS = 1 << 16;

    static final int ACTIVE_WIDTH_4X = 2;
    static final int ACTIVE_SPEED_EDR = 32;
    static final int PHYS_STATE_LINK_UP = 5;
    /** Physical state 3, disabled. */
    static final int PHYS_STATE_DISABLED = 3;

    static final int LINK_LAYER_ETHERNET = 2;
    static final int GID_TYPE_ROCE_V2 = 2;

    private ShimInfo() {}

    /** EUI-64 from the MAC (universal/local bit flipped, ff:fe in the middle), as RoCE devices do. */
    static long nodeGuid(final long mac) {
        final long hi = (mac >>> 24) & 0xFFFFFF;
        final long lo = mac & 0xFFFFFF;
        return ((hi ^ 0x020000L) << 40) | (0xFFFEL << 24) | lo;
    }

    /** The IPv4-mapped IPv6 GID {@code ::ffff:a.b.c.d} of a RoCE v2 port. */
    static byte[] roceGid(final int ipv4) {
        final byte[] gid = new byte[16];
        gid[10] = (byte) 0xFF;
        gid[11] = (byte) 0xFF;
        gid[12] = (byte) (ipv4 >>> 24);
        gid[13] = (byte) (ipv4 >>> 16);
        gid[14] = (byte) (ipv4 >>> 8);
        gid[15] = (byte) ipv4;
        return gid;
    }

    /** True for {@code ::ffff:a.b.c.d}. */
    static boolean isIpv4MappedGid(final byte[] gid) {
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return gid[10] == (byte) 0xFF && gid[11] == (byte) 0xFF;
    }

    /** The IPv4 address of an IPv4-mapped GID, as a big-endian int. */
    static int ipv4OfGid(final byte[] gid) {
        return ((gid[12] & 0xFF) << 24) | ((gid[13] & 0xFF) << 16) | ((gid[14] & 0xFF) << 8) | (gid[15] & 0xFF);
    }

    /**
     * The inner destination MAC for a peer ENI: 02:00 followed by its address, the hosts'
     * convention. The vSwitch routes by the inner IPv4 address, so the MAC only fills the frame.
     */
    static long peerMac(final int ipv4) {
        return 0x0200_0000_0000L | (ipv4 & 0xFFFF_FFFFL);
    }
}
