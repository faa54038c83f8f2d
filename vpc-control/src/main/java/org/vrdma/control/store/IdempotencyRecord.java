package org.vrdma.control.store;

/**
 * The outcome of a create made with a client token: a retry with the same token and the same
 * request gets {@code response} again; the same token with another request is refused.
 */
public record IdempotencyRecord(String token, String kind, String requestHash, String resourceId, String response) {}
