package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Mtu;

/**
 * Port attributes ({@code struct ibv_port_attr}) of the vNIC's single port: Ethernet link layer,
 * RoCE v2, one GID and one P_Key.
 *
 * @param state the port state; a running host's port is {@link State#ACTIVE}
 * @param maxMtu the largest path MTU
 * @param activeMtu the MTU in use
 * @param gidTableLength GIDs on the port (1)
 * @param pkeyTableLength P_Keys on the port (1)
 * @param linkLayer {@code "Ethernet"}, as {@code IBV_LINK_LAYER_ETHERNET}
 */
public record IbvPortAttr(
        State state, Mtu maxMtu, Mtu activeMtu, int gidTableLength, int pkeyTableLength, String linkLayer) {
    /** Port states ({@code enum ibv_port_state}); the ordinal is the libibverbs value. */
    public enum State {
        NOP,
        DOWN,
        INIT,
        ARMED,
        ACTIVE,
        ACTIVE_DEFER
    }
}
