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
