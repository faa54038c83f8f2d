package org.vrdma.control.agent;

import java.util.List;

/**
 * The controller's answer to an agent's poll. {@code full}: {@code state} replaces everything (first
 * contact, or a gap the controller cannot bridge with deltas). {@code delta}: apply {@code deltas}
 * in order, the first starting at the version the agent has. {@code unchanged}: the wait ended with
 * nothing new.
 */
public record SyncResponse(String type, long version, HostDesiredState state, List<StateDelta> deltas) {
    public static final String FULL = "full";
    public static final String DELTA = "delta";
    public static final String UNCHANGED = "unchanged";
}
