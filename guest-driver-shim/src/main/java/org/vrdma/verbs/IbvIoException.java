package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** EIO: the object is in an error state, e.g. a completion queue that overran. */
public final class IbvIoException extends IbvException {
    /** Creates the exception. */
    public IbvIoException(String message) {
        super(Errno.EIO, message);
    }
}
