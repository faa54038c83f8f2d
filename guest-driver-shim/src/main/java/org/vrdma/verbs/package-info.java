/**
 * The Java verbs API: RDMA verbs for JVM applications, with the names libibverbs users know.
 *
 * <p>{@link org.vrdma.verbs.VerbsHost} starts a vRDMA host in this JVM (a vSwitch on a real UDP
 * socket and a vNIC); {@link org.vrdma.verbs.IbvDeviceList} lists the devices, {@link
 * org.vrdma.verbs.IbvDevice#open()} gives an {@link org.vrdma.verbs.IbvContext}, and from there:
 * protection domains ({@link org.vrdma.verbs.IbvPd}), memory regions over off-heap {@link
 * java.lang.foreign.MemorySegment}s ({@link org.vrdma.verbs.IbvMr}), completion queues ({@link
 * org.vrdma.verbs.IbvCq}) and channels ({@link org.vrdma.verbs.IbvCompChannel}), queue pairs
 * ({@link org.vrdma.verbs.IbvQp}, RC and UD), shared receive queues ({@link
 * org.vrdma.verbs.IbvSrq}) and address handles ({@link org.vrdma.verbs.IbvAh}). {@link
 * org.vrdma.verbs.QpConnector} exchanges {@link org.vrdma.verbs.QpInfo} over TCP like perftest.
 *
 * <p>{@link org.vrdma.verbs.IbvDeviceList#attach} (or {@code -Dvrdma.socket} / {@code VRDMA_SOCKET})
 * reaches instead a vNIC in another process, {@code ./vrdma host --verbs-socket PATH}: the same
 * calls then go over the native library's control protocol ({@code org.vrdma.shim}), CQ and QP
 * rings are memfds shared with that process, and memory from {@link
 * org.vrdma.verbs.IbvContext#allocBuffer} is registered without copies.
 *
 * <p>Value types that mirror libibverbs bit for bit come from the vNIC's object model, {@code
 * org.vrdma.vnic.verbs}: {@code AccessFlags}, {@code SendFlags}, {@code QpAttrMask}, {@code
 * WcFlags}, {@code WrOpcode}, {@code WcOpcode}, {@code WcStatus}, {@code QpState}, {@code QpType},
 * {@code Mtu}, {@code DeviceAttributes} and {@code Errno}.
 *
 * <p><b>Threads.</b> Every object of a device lives on its host's event loop. Control calls are
 * handed to the loop and the caller waits for the result. Posting copies the request into a
 * single-producer/single-consumer ring and wakes the loop without waiting; completions come back
 * through a single-producer/single-consumer ring per CQ that {@link org.vrdma.verbs.IbvCq#poll}
 * reads without blocking or allocating. One thread at a time posts to a queue and polls a CQ.
 *
 * <p><b>Errors</b> follow libibverbs: a bad argument is an {@link
 * org.vrdma.verbs.IbvException} subclass named after its errno (EINVAL, ENOMEM, EBUSY, ...); a
 * failed transfer is a work completion with a status such as LOC_PROT_ERR, REM_ACCESS_ERR,
 * RETRY_EXC_ERR or WR_FLUSH_ERR.
 */
package org.vrdma.verbs;
