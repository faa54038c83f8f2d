package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** EBUSY: the object is still in use (a PD with MRs, a CQ with QPs or unacknowledged events, a context with objects). */
public final class IbvBusyException extends IbvException {
    /** Creates the exception. */
    public IbvBusyException(String message) {
        super(Errno.EBUSY, message);
    }
}
