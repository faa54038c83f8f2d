package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * A verbs call failed; {@link #errno()} is the error number libibverbs would have returned (or set
 * in {@code errno}). Each common error number has its own subclass, so callers catch what they can
 * handle: {@link IbvInvalidArgumentException} (EINVAL), {@link IbvNoMemoryException} (ENOMEM),
 * {@link IbvBusyException} (EBUSY), {@link IbvPermissionException} (EPERM, EACCES), {@link
 * IbvNotSupportedException} (EOPNOTSUPP), {@link IbvIoException} (EIO), {@link IbvFaultException}
 * (EFAULT). Errors of data transfers are not exceptions: they arrive as work completions with an
 * {@link org.vrdma.vnic.verbs.WcStatus} other than SUCCESS.
 */
public class IbvException extends RuntimeException {
    private final Errno errno;

    /** An exception for {@code errno} with a reason. */
    public IbvException(Errno errno, String message) {
        super(errno + ": " + message);
        this.errno = errno;
    }

    /** The error number, with its Linux value in {@link Errno#code()}. */
    public Errno errno() {
        return errno;
    }

    /** The typed exception for {@code errno}. */
    public static IbvException of(Errno errno, String message) {
        return switch (errno) {
            case EINVAL -> new IbvInvalidArgumentException(message);
            case ENOMEM, ENOSPC -> new IbvNoMemoryException(errno, message);
            case EBUSY -> new IbvBusyException(message);
            case EPERM, EACCES -> new IbvPermissionException(errno, message);
            case EOPNOTSUPP -> new IbvNotSupportedException(message);
            case EIO -> new IbvIoException(message);
            case EFAULT -> new IbvFaultException(message);
            default -> new IbvException(errno, message);
        };
    }

    /** Translates an error of the vNIC's object model, keeping its reason. */
    static IbvException of(VerbsException e) {
        String m = e.getMessage();
        String prefix = e.errno() + ": ";
        IbvException x = of(e.errno(), m.startsWith(prefix) ? m.substring(prefix.length()) : m);
        x.initCause(e);
        return x;
    }
}
