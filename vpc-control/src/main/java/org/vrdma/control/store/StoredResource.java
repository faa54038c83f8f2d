package org.vrdma.control.store;

/**
 * One resource as the store keeps it: its kind, id, optimistic-concurrency version, the store
 * revision of its last write, and its JSON body.
 */
public record StoredResource(String kind, String id, long version, long revision, String body) {}
