package org.vrdma.shim;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * Maps an application's memfd into the vNIC through the FFM API: the descriptor is opened as {@code
 * /proc/<pid>/fd/<n>} (Java's Unix-domain sockets cannot receive descriptors with {@code
 * SCM_RIGHTS}) and mapped {@code MAP_SHARED}. Shared by the rings and zero-copy memory regions.
 *
 * <p>Only a memfd sealed against shrinking and growing is accepted: a file the application could
 * truncate would make the vNIC's accesses fault ({@code SIGBUS}), and any other file (reopened with
 * the vNIC's rights) is refused. Opening another process's descriptor needs the same permission as
 * {@code process_vm_readv} (same user, or root).
 */
final class Memfd {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle OPEN = function(
            "open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
    private static final MethodHandle FCNTL =
            function("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle LSEEK =
            function("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle MMAP = function(
            "mmap", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = function("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle MEMFD_CREATE = function(
            "memfd_create",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT),
            Linker.Option.captureCallState("errno"));
    private static final MethodHandle FTRUNCATE = function(
            "ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), Linker.Option.captureCallState("errno"));
    private static final MethodHandle FCNTL_ARG = function(
            "fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));

    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int F_GET_SEALS = 1034;
    private static final int F_ADD_SEALS = 1033;
    private static final int F_SEAL_SEAL = 1;
    private static final int MFD_CLOEXEC = 1;
    private static final int MFD_ALLOW_SEALING = 2;
    private static final int F_SEAL_SHRINK = 2;
    private static final int F_SEAL_GROW = 4;
    private static final int SEEK_END = 2;
    private static final int PROT_READ_WRITE = 3;
    private static final int MAP_SHARED = 1;
    /** mmap offsets must be multiples of the page size (4 KiB on the x86-64 hosts served). */
    static final long PAGE_BYTES = 4096;

    private Memfd() {}

    private static MethodHandle function(
            final String name, final FunctionDescriptor descriptor, final Linker.Option... options) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor, options);
    }

    /**
     * Maps {@code bytes} bytes at page-aligned {@code fileOffset} of descriptor {@code fd} of process
     * {@code pid}, which must be a sealed memfd holding at least {@code fileOffset + bytes} bytes. The
     * segment belongs to {@code arena}: closing it unmaps.
     *
     * @throws VerbsException EINVAL (not a sealed memfd, too small), EPERM (cannot be opened), ENOMEM
     */
    static MemorySegment map(final int pid, final int fd, final long fileOffset, final long bytes, final Arena arena) {
        if (fd < 0 || bytes <= 0 || fileOffset < 0 || fileOffset % PAGE_BYTES != 0) {
            throw new VerbsException(Errno.EINVAL, "no memfd, or a bad range");
        }
        final Path link = Path.of("/proc", Integer.toString(pid), "fd", Integer.toString(fd));
        try {
            final String target = Files.readSymbolicLink(link).toString();
            if (!target.startsWith("/memfd:")) {
                throw new VerbsException(Errno.EINVAL, "descriptor " + fd + " is not a memfd: " + target);
            }
        } catch (final java.io.IOException e) {
            throw new VerbsException(Errno.EPERM, "cannot inspect " + link + ": " + e.getMessage());
        }
        try (Arena tmp = Arena.ofConfined()) {
            final MemorySegment state = tmp.allocate(CALL_STATE);
            final int local = (int) OPEN.invokeExact(state, tmp.allocateFrom(link.toString()), O_RDWR | O_CLOEXEC);
            if (local < 0) {
                final int errno = (int) ERRNO.get(state, 0L);
                throw new VerbsException(
                        errno == 1 || errno == 13 ? Errno.EPERM : Errno.EINVAL,
                        "cannot open " + link + " (errno " + errno + ")");
            }
            try {
                final int seals = (int) FCNTL.invokeExact(local, F_GET_SEALS);
                if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
                    throw new VerbsException(Errno.EINVAL, "memfd is not sealed against resizing");
                }
                final long size = (long) LSEEK.invokeExact(local, 0L, SEEK_END);
                if (size < fileOffset + bytes) {
                    throw new VerbsException(
                            Errno.EINVAL, "memfd of " + size + " bytes, " + (fileOffset + bytes) + " needed");
                }
                final MemorySegment addr = (MemorySegment)
                        MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE, MAP_SHARED, local, fileOffset);
                if (addr.address() == -1L) {
                    throw new VerbsException(Errno.ENOMEM, "cannot map the memfd");
                }
                return addr.reinterpret(bytes, arena, s -> unmap(s, bytes));
            } finally {
                final int ignored = (int) CLOSE.invokeExact(local);
            }
        } catch (final VerbsException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("mapping a memfd failed", t);
        }
    }

    /**
     * A memfd of this process, sealed against resizing: its descriptor number (what the vNIC opens
     * as {@code /proc/<pid>/fd/<n>}) and its shared mapping.
     *
     * @param fd the descriptor; {@link #closeDescriptor(int)} it once the vNIC has mapped the file
     * @param segment the whole file, mapped shared; closing its arena unmaps it
     */
    record Created(int fd, MemorySegment segment) {}

    /**
     * Creates a memfd named {@code name} of {@code bytes} bytes (a multiple of the page size),
     * seals it against shrinking, growing and further seals, and maps it shared into {@code arena}:
     * the application side of a ring or of zero-copy memory.
     *
     * @throws VerbsException EINVAL (bad size), ENOMEM (no memory or descriptors)
     */
    static Created create(final String name, final long bytes, final Arena arena) {
        if (bytes <= 0 || bytes % PAGE_BYTES != 0) {
            throw new VerbsException(Errno.EINVAL, "memfd size " + bytes + " is not a positive number of pages");
        }
        try (Arena tmp = Arena.ofConfined()) {
            final MemorySegment state = tmp.allocate(CALL_STATE);
            final int fd =
                    (int) MEMFD_CREATE.invokeExact(state, tmp.allocateFrom(name), MFD_CLOEXEC | MFD_ALLOW_SEALING);
            if (fd < 0) {
                throw new VerbsException(
                        Errno.ENOMEM, "memfd_create failed (errno " + (int) ERRNO.get(state, 0L) + ")");
            }
            try {
                if ((int) FTRUNCATE.invokeExact(state, fd, bytes) < 0) {
                    throw new VerbsException(
                            Errno.ENOMEM, "cannot size the memfd (errno " + (int) ERRNO.get(state, 0L) + ")");
                }
                final int sealed =
                        (int) FCNTL_ARG.invokeExact(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
                if (sealed < 0) {
                    throw new VerbsException(Errno.EINVAL, "cannot seal the memfd");
                }
                final MemorySegment addr = (MemorySegment)
                        MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE, MAP_SHARED, fd, 0L);
                if (addr.address() == -1L) {
                    throw new VerbsException(Errno.ENOMEM, "cannot map the memfd");
                }
                return new Created(fd, addr.reinterpret(bytes, arena, s -> unmap(s, bytes)));
            } catch (final RuntimeException e) {
                closeDescriptor(fd);
                throw e;
            }
        } catch (final VerbsException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("creating a memfd failed", t);
        }
    }

    /** Closes a descriptor of this process (a memfd the vNIC has mapped; the mappings stay). */
    static void closeDescriptor(final int fd) {
        try {
            final int ignored = (int) CLOSE.invokeExact(fd);
        } catch (final Throwable t) {
            throw new IllegalStateException("close failed", t);
        }
    }

    private static void unmap(final MemorySegment s, final long bytes) {
        try {
            final int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(s.address()), bytes);
        } catch (final Throwable t) {
            throw new IllegalStateException("munmap failed", t);
        }
    }
}
