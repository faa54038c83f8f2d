package org.vrdma.shim;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import org.vrdma.vnic.memory.MemoryRegionBacking;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * The memory of a registered region in another process, reached like a DMA engine with Linux's
 * {@code process_vm_readv}/{@code process_vm_writev} through the FFM API: no copy into shared memory,
 * no change to the application's mappings.
 *
 * <p>Limits: the vNIC process must be allowed to access the application (same uid, or root); a page
 * the application unmapped after registering fails with {@link VerbsException} EFAULT (there is no
 * pinning); 8-byte atomics are a read followed by a write, so they are atomic against other vNIC
 * operations on the region but not against the application's own CPU stores to the same word; the
 * process is named by pid, so a pid reused after the application died could be reached until the
 * control connection's cleanup ran (which happens as soon as the socket closes).
 *
 * <p>Confined to the device's thread, like every backing: the call's iovecs are allocated once.
 */
public final class ProcessMemory implements MemoryRegionBacking {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle READV = transfer("process_vm_readv");
    private static final MethodHandle WRITEV = transfer("process_vm_writev");

    private final int pid;
    /** Where this backing counts its system calls (the device's, shared by its regions). */
    private final MemoryStats.Counters counters;

    private final long address;
    private final long length;
    /**
     * The two iovecs and the errno capture of one call, allocated once: the backing is used by one
     * device thread, and a packet's transfer then allocates nothing.
     */
    private final MemorySegment localIov;

    private final MemorySegment remoteIov;
    private final MemorySegment callState;

    /**
     * The {@code length} bytes at virtual address {@code address} of process {@code pid}.
     *
     * @throws IllegalArgumentException for a negative length or an address range that overflows
     */
    public ProcessMemory(final int pid, final long address, final long length) {
        this(pid, address, length, new MemoryStats.Counters());
    }

    ProcessMemory(final int pid, final long address, final long length, final MemoryStats.Counters counters) {
        if (length < 0 || address + length < address && address + length != 0) {
            throw new IllegalArgumentException("bad range " + Long.toHexString(address) + "+" + length);
        }
        this.pid = pid;
        this.counters = counters;
        this.address = address;
        this.length = length;
        final Arena arena = Arena.ofAuto();
        this.localIov = arena.allocate(16, 8);
        this.remoteIov = arena.allocate(16, 8);
        this.callState = arena.allocate(CALL_STATE);
    }

    private static MethodHandle transfer(final String name) {
        return LINKER.downcallHandle(
                LINKER.defaultLookup().find(name).orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG),
                Linker.Option.captureCallState("errno"));
    }

    /** The process whose memory this is. */
    public int pid() {
        return pid;
    }

    /** The first virtual address in the process. */
    public long address() {
        return address;
    }

    /**
     * Checks that the first and the last byte of the range are readable now, as a registration would
     * find out when pinning pages.
     *
     * @throws VerbsException EFAULT if not
     */
    public void probe() {
        if (length == 0) {
            return;
        }
        final byte[] one = new byte[1];
        read(0, one, 0, 1);
        read(length - 1, one, 0, 1);
    }

    @Override
    public long capacity() {
        return length;
    }

    @Override
    public void read(final long offset, final ByteBuf dst, final int len) {
        check(offset, len);
        dst.ensureWritable(len);
        if (dst.hasMemoryAddress()) {
            move(READV, dst.memoryAddress() + dst.writerIndex(), offset, len);
            dst.writerIndex(dst.writerIndex() + len);
        } else {
            final byte[] tmp = new byte[len];
            read(offset, tmp, 0, len);
            dst.writeBytes(tmp);
        }
    }

    @Override
    public void write(final long offset, final ByteBuf src, final int srcIndex, final int len) {
        check(offset, len);
        if (src.hasMemoryAddress()) {
            move(WRITEV, src.memoryAddress() + srcIndex, offset, len);
        } else {
            final byte[] tmp = new byte[len];
            src.getBytes(srcIndex, tmp);
            write(offset, tmp, 0, len);
        }
    }

    @Override
    public void read(final long offset, final byte[] dst, final int dstIndex, final int len) {
        check(offset, len);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment local = arena.allocate(Math.max(1, len));
            move(READV, local.address(), offset, len);
            MemorySegment.copy(local, 0, MemorySegment.ofArray(dst), dstIndex, len);
        }
    }

    @Override
    public void write(final long offset, final byte[] src, final int srcIndex, final int len) {
        check(offset, len);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment local = arena.allocate(Math.max(1, len));
            MemorySegment.copy(MemorySegment.ofArray(src), srcIndex, local, 0, len);
            move(WRITEV, local.address(), offset, len);
        }
    }

    @Override
    public long readLong(final long offset) {
        final byte[] b = new byte[8];
        read(offset, b, 0, 8);
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }

    @Override
    public void writeLong(final long offset, final long value) {
        final byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (value >>> (8 * i));
        }
        write(offset, b, 0, 8);
    }

    private void check(final long offset, final long len) {
        if (offset < 0 || len < 0 || offset > length - len) {
            throw new VerbsException(
                    Errno.EFAULT, "access [" + offset + ", +" + len + ") outside a region of " + length + " bytes");
        }
    }

    /** One transfer of {@code len} bytes between local memory and the region at {@code offset}. */
    private void move(final MethodHandle op, final long localAddress, final long offset, final int len) {
        if (len == 0) {
            return;
        }
        try {
            final MemorySegment local = localIov;
            local.set(JAVA_LONG, 0, localAddress);
            local.set(JAVA_LONG, 8, len);
            final MemorySegment remote = remoteIov;
            remote.set(JAVA_LONG, 0, address + offset);
            remote.set(JAVA_LONG, 8, len);
            final MemorySegment state = callState;
            final long n = (long) op.invokeExact(state, pid, local, 1L, remote, 1L, 0L);
            counters.copyCalls++;
            counters.copyBytes += Math.max(0, n);
            if (n != len) {
                final int errno = n < 0 ? (int) ERRNO.get(state, 0L) : 0;
                throw new VerbsException(
                        Errno.EFAULT,
                        "pid " + pid + ": " + (op == READV ? "read" : "write") + " of " + len + " bytes at 0x"
                                + Long.toHexString(address + offset) + " failed"
                                + (n < 0 ? " (errno " + errno + ")" : " after " + n + " bytes"));
            }
        } catch (final VerbsException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("process_vm call failed", t);
        }
    }
}
