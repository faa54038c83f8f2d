package org.vrdma.shim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * Memory of a JVM application that a vNIC in another process reaches without copies: a sealed
 * memfd mapped shared into the application, whose descriptor stays open while the memory lives, so
 * that REG_MR can name it and the vNIC maps the same pages ({@link MemfdMemory}), as it does for the
 * native library's re-backed regions.
 */
public final class SharedMemory {
    /** The name the memfd carries in {@code /proc/<pid>/maps}: {@code /memfd:vrdma-buf}. */
    public static final String NAME = "vrdma-buf";

    private final int fd;
    private final MemorySegment segment;

    private SharedMemory(final int fd, final MemorySegment segment) {
        this.fd = fd;
        this.segment = segment;
    }

    /**
     * Allocates {@code bytes} bytes (page-aligned, zero-filled) that live as long as {@code arena}:
     * closing the arena unmaps them and closes the descriptor.
     *
     * @throws VerbsException EINVAL (not a positive size), ENOMEM
     */
    public static SharedMemory allocate(final long bytes, final Arena arena) {
        if (bytes <= 0) {
            throw new VerbsException(org.vrdma.vnic.verbs.Errno.EINVAL, "size " + bytes);
        }
        final long pages = (bytes + Memfd.PAGE_BYTES - 1) / Memfd.PAGE_BYTES * Memfd.PAGE_BYTES;
        final Memfd.Created c = Memfd.create(NAME, pages, arena);
        // Closing the arena closes the descriptor too; the pages are unmapped by the mapping's own cleanup.
        MemorySegment.NULL.reinterpret(arena, s -> Memfd.closeDescriptor(c.fd()));
        return new SharedMemory(c.fd(), c.segment().asSlice(0, bytes));
    }

    /** The memory. */
    public MemorySegment segment() {
        return segment;
    }

    /** The memfd's descriptor number in this process. */
    public int fd() {
        return fd;
    }

    /** True if {@code [address, address + length)} lies inside this memory, which is still alive. */
    public boolean contains(final long address, final long length) {
        final long off = address - segment.address();
        return segment.scope().isAlive()
                && length >= 0
                && off >= 0
                && off <= segment.byteSize()
                && length <= segment.byteSize() - off;
    }

    /** The file offset of {@code address}, which lies inside this memory. */
    public long fileOffset(final long address) {
        return address - segment.address();
    }
}
