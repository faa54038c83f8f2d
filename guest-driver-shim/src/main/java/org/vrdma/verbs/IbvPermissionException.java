package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** EPERM or EACCES: the caller may not do this. */
public final class IbvPermissionException extends IbvException {
    /** Creates the exception. */
    public IbvPermissionException(Errno errno, String message) {
        super(errno, message);
    }
}
