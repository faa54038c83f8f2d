package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** ENOMEM (or ENOSPC): a queue is full or the device has no free object of the kind asked for. */
public final class IbvNoMemoryException extends IbvException {
    /** Creates the exception. */
    public IbvNoMemoryException(Errno errno, String message) {
        super(errno, message);
    }
}
