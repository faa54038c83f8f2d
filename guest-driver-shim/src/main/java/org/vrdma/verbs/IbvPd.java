package org.vrdma.verbs;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.vnic.verbs.AddressHandle;
import org.vrdma.vnic.verbs.MemoryRegion;
import org.vrdma.vnic.verbs.ProtectionDomain;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions, queue pairs, shared receive queues
 * and address handles of one domain work only together.
 */
public final class IbvPd implements AutoCloseable {
    private final IbvContext context;
    private final ProtectionDomain pd;
    /** The vNIC process's handle of an attached context's domain; 0 on an embedded host. */
    final int handle;
    // Confined to the loop (embedded) or guarded by the context (attached).
    final List<IbvMr> mrs = new ArrayList<>();
    final List<IbvAh> ahs = new ArrayList<>();
    final List<IbvMw> mws = new java.util.concurrent.CopyOnWriteArrayList<>();
    private boolean live = true;

    IbvPd(IbvContext context, ProtectionDomain pd) {
        this.context = context;
        this.pd = pd;
        this.handle = 0;
    }

    /** A domain in a vNIC process, named by {@code handle} on the context's connection. */
    IbvPd(IbvContext context, int handle) {
        this.context = context;
        this.pd = null;
        this.handle = handle;
    }

    /** The context. */
    public IbvContext context() {
        return context;
    }

    /**
     * Registers an off-heap segment ({@code ibv_reg_mr}). The segment must be native and accessible
     * from other threads (a global, automatic or shared arena; not a confined one). On an attached
     * device, memory from {@link IbvContext#allocBuffer} is registered zero-copy ({@link
     * IbvMr#isZeroCopy()}); the vNIC process reaches any other segment with {@code
     * process_vm_readv/writev}.
     *
     * @param access {@link org.vrdma.vnic.verbs.AccessFlags} bits; remote write and atomics need
     *     LOCAL_WRITE too
     * @throws IbvInvalidArgumentException for a heap or confined segment, a length of 0 or above
     *     {@code max_mr_size}, unknown or inconsistent flags
     * @throws IbvNoMemoryException when the device has no free memory region
     */
    public IbvMr regMr(MemorySegment segment, int access) {
        if (segment == null || !segment.isNative()) {
            throw new IbvInvalidArgumentException("only off-heap (native) memory can be registered");
        }
        if (segment.byteSize() == 0 || segment.byteSize() > Integer.MAX_VALUE) {
            throw new IbvInvalidArgumentException("invalid memory region length " + segment.byteSize());
        }
        if (segment.isReadOnly()) {
            throw new IbvInvalidArgumentException("read-only segments cannot be registered");
        }
        if (context.attached != null) {
            return AttachedMemory.register(this, segment, access);
        }
        return context.loop.call(() -> {
            checkLive();
            if (!segment.isAccessibleBy(Thread.currentThread())) {
                throw new IbvInvalidArgumentException("segment of a confined arena: the device cannot reach it");
            }
            if (!segment.scope().isAlive()) {
                throw new IbvFaultException("segment's arena is closed");
            }
            SegmentMemory memory = new SegmentMemory(segment);
            MemoryRegion mr = pd.registerMemoryRegion(memory, segment.address(), access);
            IbvMr m = new IbvMr(this, mr, memory);
            context.mrByIndex.set(m.lkey() >>> 8, m);
            mrs.add(m);
            return m;
        });
    }

    /** Registers a direct buffer's whole capacity, like {@link #regMr(MemorySegment, int)}. */
    public IbvMr regMr(ByteBuffer directBuffer, int access) {
        if (directBuffer == null || !directBuffer.isDirect()) {
            throw new IbvInvalidArgumentException("only direct buffers can be registered");
        }
        return regMr(MemorySegment.ofBuffer(directBuffer.duplicate().clear()), access);
    }

    /** Creates an address handle for UD sends ({@code ibv_create_ah}). */
    public IbvAh createAh(IbvAhAttr attr) {
        if (attr == null) {
            throw new IbvInvalidArgumentException("ah_attr missing");
        }
        // The same checks in both modes (RoCE: global, IPv4-mapped GID, GID index 0).
        org.vrdma.vnic.verbs.AhAttr a = attr.toModel();
        if (context.attached != null) {
            synchronized (context) {
                checkLive();
                ByteBuffer req = org.vrdma.shim.VnicClient.body(56);
                req.putInt(handle).putInt(1).put(attr.dgid.raw());
                req.putInt(attr.sgidIndex).putInt(attr.hopLimit).putInt(attr.trafficClass);
                req.putInt(0).putInt(0).putInt(attr.sl).putInt(attr.portNum).putInt(0);
                int h = context.attached
                        .call(org.vrdma.shim.ControlProtocol.CREATE_AH, req)
                        .getInt();
                IbvAh ah = new IbvAh(this, h, attr.dgid);
                ahs.add(ah);
                return ah;
            }
        }
        return context.loop.call(() -> {
            checkLive();
            AddressHandle ah = pd.createAddressHandle(a);
            IbvAh h = new IbvAh(this, ah, attr.dgid);
            ahs.add(h);
            return h;
        });
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}), unbound.
     *
     * @param type {@link IbvMw#TYPE_1} or {@link IbvMw#TYPE_2}
     * @throws IbvInvalidArgumentException another type
     * @throws IbvNoMemoryException the device has no free window ({@code max_mw})
     */
    public IbvMw allocMw(int type) {
        if (type != IbvMw.TYPE_1 && type != IbvMw.TYPE_2) {
            throw new IbvInvalidArgumentException("memory window type " + type);
        }
        if (context.attached != null) {
            synchronized (context) {
                checkLive();
                ByteBuffer req = org.vrdma.shim.VnicClient.body(8);
                req.putInt(handle).putInt(type);
                ByteBuffer r = context.attached.call(org.vrdma.shim.ControlProtocol.ALLOC_MW, req);
                IbvMw mw = new IbvMw(this, type, r.getInt(), r.getInt());
                mws.add(mw);
                return mw;
            }
        }
        return context.loop.call(() -> {
            checkLive();
            IbvMw mw = new IbvMw(this, model().allocMemoryWindow(type));
            mws.add(mw);
            return mw;
        });
    }

    /**
     * An address handle to the sender of a received UD datagram ({@code ibv_create_ah_from_wc}): see
     * {@link IbvAhAttr#fromWc}; the reply then goes to {@code wc.srcQp}.
     */
    public IbvAh createAhFromWc(IbvWc wc, MemorySegment grh, int portNum) {
        return createAh(IbvAhAttr.fromWc(portNum, wc, grh));
    }

    /** Frees the domain ({@code ibv_dealloc_pd}); EBUSY while anything still uses it. */
    public void dealloc() {
        if (context.attached != null) {
            deallocAttached();
            return;
        }
        context.loop.run(this::destroyOnLoop);
    }

    /** Frees the domain unless that was already done. */
    @Override
    public void close() {
        if (context.attached != null) {
            synchronized (context) {
                if (live) {
                    deallocAttached();
                }
            }
            return;
        }
        context.loop.call(() -> {
            if (live) {
                destroyOnLoop();
            }
            return null;
        });
    }

    private void deallocAttached() {
        synchronized (context) {
            checkLive();
            if (!mrs.isEmpty() || !ahs.isEmpty() || !mws.isEmpty()) {
                throw new IbvBusyException(mrs.size() + " memory regions, " + ahs.size() + " address handles and "
                        + mws.size() + " memory windows still alive");
            }
            AttachedMemory.call(context, org.vrdma.shim.ControlProtocol.DEALLOC_PD, handle);
            live = false;
            context.forget(this);
        }
    }

    ProtectionDomain model() {
        return pd;
    }

    void checkLive() {
        if (!live) {
            throw new IbvInvalidArgumentException("protection domain was deallocated");
        }
    }

    void destroyChildrenOnLoop() {
        for (IbvMw w : List.copyOf(mws)) {
            if (w.isAllocated()) {
                w.mw.deallocate();
                w.onDeallocated();
            }
        }
        mws.clear();
        for (IbvAh h : List.copyOf(ahs)) {
            h.destroyOnLoop();
        }
        for (IbvMr m : List.copyOf(mrs)) {
            m.deregOnLoop();
        }
    }

    void destroyOnLoop() {
        checkLive();
        pd.deallocate();
        live = false;
        context.pds.remove(this);
    }
}
