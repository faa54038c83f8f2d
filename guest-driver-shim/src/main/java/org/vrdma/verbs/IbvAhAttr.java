package org.vrdma.verbs;

import org.vrdma.vnic.verbs.AhAttr;

/**
 * Address vector ({@code struct ibv_ah_attr}) of RoCE v2: the peer is named by its GID in the global
 * route header ({@code is_global = 1}, {@code grh.dgid}); LIDs do not exist on Ethernet. Used by
 * {@link IbvPd#createAh} (UD) and by {@link IbvQpAttr#ahAttr} (RC, when moving to RTR).
 */
public final class IbvAhAttr {
    /** Destination GID ({@code grh.dgid}), IPv4-mapped. */
    public IbvGid dgid;
    /** Must be true for RoCE ({@code is_global}). */
    public boolean isGlobal = true;
    /** Local GID index ({@code grh.sgid_index}); the port has GID 0 only. */
    public int sgidIndex;
    /** Hop limit ({@code grh.hop_limit}). */
    public int hopLimit = 64;
    /** Traffic class ({@code grh.traffic_class}): DSCP in the upper six bits. */
    public int trafficClass;
    /** Service level ({@code sl}); kept, not used on Ethernet. */
    public int sl;
    /** Port number, always 1. */
    public int portNum = 1;

    /** An address vector to {@code dgid} on port 1. */
    public static IbvAhAttr of(IbvGid dgid) {
        IbvAhAttr a = new IbvAhAttr();
        a.dgid = dgid;
        return a;
    }

    /**
     * The address of the sender of a received UD datagram ({@code ibv_init_ah_from_wc}): RoCE v2
     * over IPv4 puts 20 unused bytes and then the sender's IPv4 header in the receive's 40-byte GRH
     * area; its source address becomes the destination GID, its TOS byte the traffic class.
     *
     * @param grh the first 40 bytes of the receive buffer
     * @throws IbvInvalidArgumentException port other than 1, a completion without {@code GRH}, a GRH
     *     area shorter than 40 bytes or without an IPv4 header
     */
    public static IbvAhAttr fromWc(int portNum, IbvWc wc, java.lang.foreign.MemorySegment grh) {
        if (wc == null || grh == null || portNum != 1) {
            throw new IbvInvalidArgumentException("ibv_init_ah_from_wc needs a completion, its GRH and port 1");
        }
        if ((wc.wcFlags & org.vrdma.vnic.verbs.WcFlags.GRH) == 0 || grh.byteSize() < 40) {
            throw new IbvInvalidArgumentException("the completion carries no GRH");
        }
        int version = grh.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 20) >>> 4 & 0xF;
        if (version != 4) {
            throw new IbvInvalidArgumentException("no IPv4 header in the GRH area (RoCE v2 over IPv4)");
        }
        int src =
                grh.get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 32);
        IbvAhAttr a = of(IbvGid.ofIpv4(src));
        a.trafficClass = grh.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 21) & 0xFF;
        a.hopLimit = 0xFF;
        a.portNum = portNum;
        return a;
    }

    AhAttr toModel() {
        if (!isGlobal || dgid == null) {
            throw new IbvInvalidArgumentException("RoCE address vectors need is_global and a destination GID");
        }
        if (sgidIndex != 0) {
            throw new IbvInvalidArgumentException("sgid_index " + sgidIndex + " (the port has one GID)");
        }
        if (trafficClass < 0 || trafficClass > 255) {
            throw new IbvInvalidArgumentException("traffic_class " + trafficClass);
        }
        int ip = dgid.ipv4();
        return new AhAttr(ip, VerbsHost.derivedMac(ip), trafficClass, portNum);
    }

    static IbvAhAttr fromModel(AhAttr a) {
        if (a == null) {
            return null;
        }
        IbvAhAttr r = of(IbvGid.ofIpv4(a.destIpv4()));
        r.trafficClass = a.trafficClass();
        r.portNum = a.portNum();
        return r;
    }
}
