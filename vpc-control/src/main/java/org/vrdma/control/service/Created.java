package org.vrdma.control.service;

/** The result of a create: the resource, and whether it is the replay of an earlier request with the same client token. */
public record Created<T>(T resource, boolean replayed) {}
