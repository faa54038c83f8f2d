package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** EINVAL: an argument is invalid (a bad size, key, handle or a QP state transition that does not exist). */
public final class IbvInvalidArgumentException extends IbvException {
    /** Creates the exception. */
    public IbvInvalidArgumentException(String message) {
        super(Errno.EINVAL, message);
    }
}
