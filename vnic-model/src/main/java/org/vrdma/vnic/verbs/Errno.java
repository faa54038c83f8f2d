package org.vrdma.vnic.verbs;

/** POSIX error numbers, as libibverbs returns them (same names and Linux values). */
public enum Errno {
    EPERM(1),
    ENOENT(2),
    EIO(5),
    EAGAIN(11),
    ENOMEM(12),
    EACCES(13),
    EFAULT(14),
    EBUSY(16),
    EEXIST(17),
    EINVAL(22),
    ENOSPC(28),
    EOVERFLOW(75),
    EOPNOTSUPP(95),
    ETIMEDOUT(110);

    private final int code;

    Errno(final int code) {
        this.code = code;
    }

    /** The Linux errno value. */
    public int code() {
        return code;
    }
}
