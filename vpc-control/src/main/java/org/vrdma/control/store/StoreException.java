package org.vrdma.control.store;

/** The store could not do what was asked (I/O, a corrupt file, a constraint the caller did not check). */
public final class StoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
