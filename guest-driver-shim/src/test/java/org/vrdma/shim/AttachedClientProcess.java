package org.vrdma.shim;

import java.lang.foreign.Arena;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.vnic.verbs.AccessFlags;

/**
 * A JVM application for {@link AttachedVerbsTest}: attaches to the vNIC on {@code args[0]}, creates
 * a PD, a zero-copy region, a CQ and an RC QP, prints READY and waits to be killed.
 */
public final class AttachedClientProcess {
    private AttachedClientProcess() {}

    public static void main(final String[] args) throws Exception {
        final Arena arena = Arena.ofShared();
        final IbvContext ctx =
                IbvDeviceList.attach(java.nio.file.Path.of(args[0])).open();
        final IbvPd pd = ctx.allocPd();
        final IbvMr mr = pd.regMr(ctx.allocBuffer(1 << 20, arena), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final IbvCq cq = ctx.createCq(16, null);
        final IbvQp qp = ctx.createQp(pd, IbvQpInitAttr.rc(cq, 16));
        System.out.println("READY qpn=" + qp.qpNum() + " lkey=" + mr.lkey() + " zero-copy=" + mr.isZeroCopy());
        System.out.flush();
        Thread.sleep(60_000); // bounded: the test kills it long before
    }
}
