package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;

/** EFAULT: memory the call names is not accessible (a closed arena, an unmapped buffer). */
public final class IbvFaultException extends IbvException {
    /** Creates the exception. */
    public IbvFaultException(String message) {
        super(Errno.EFAULT, message);
    }
}
