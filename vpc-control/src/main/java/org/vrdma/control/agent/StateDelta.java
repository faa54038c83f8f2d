package org.vrdma.control.agent;

import java.util.List;

/** The changes that turn a host's state at {@code fromVersion} into its state at {@code version}. */
public record StateDelta(long fromVersion, long version, List<Change> changes) {}
