package org.vrdma.vnic.verbs;

/** Atomic capability of a device ({@code enum ibv_atomic_cap}). */
public enum AtomicCap {
    /** No atomics. */
    NONE,
    /** Atomic among operations of this device only. */
    HCA,
    /** Atomic with respect to the CPU as well. */
    GLOB
}
