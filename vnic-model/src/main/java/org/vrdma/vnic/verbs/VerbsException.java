package org.vrdma.vnic.verbs;

/** A verbs call failed; {@link #errno()} is what libibverbs would have returned. */
public final class VerbsException extends RuntimeException {
    private final Errno errno;

    /** Creates an exception for {@code errno} with a human-readable reason. */
    public VerbsException(final Errno errno, final String message) {
        super(errno + ": " + message);
        this.errno = errno;
    }

    /** The error number. */
    public Errno errno() {
        return errno;
    }
}
