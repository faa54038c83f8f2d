package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** EOPNOTSUPP: the device does not support the operation. */
public final class IbvNotSupportedException extends IbvException {
    /** Creates the exception. */
    public IbvNotSupportedException(String message) {
        super(Errno.EOPNOTSUPP, message);
    }
}
