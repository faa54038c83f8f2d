package org.vrdma.vswitch.runtime;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;

/**
 * An event loop's idle strategy that polls before it sleeps, as Aeron's busy-spin/back-off agents
 * do: while the loop has been idle for less than {@code spinNs}, each turn polls the sockets
 * without blocking ({@code epoll_wait} with timeout 0) and runs due tasks and timers; after that it
 * blocks in {@code epoll_wait} as usual until the next event. A packet that arrives while the loop
 * spins is handled without a wake-up (no sleeping thread for the sender's system call to wake),
 * which saves the scheduler round trip per packet at the price of burning a core while traffic
 * flows. {@code spinNs = 0} is Netty's default strategy.
 *
 * <p>One instance per event loop (Netty asks the factory once per loop); not thread-safe.
 */
final class SpinThenBlockStrategy implements SelectStrategy {
    private final long spinNs;
    private long idleSinceNs;
    private boolean idle;

    SpinThenBlockStrategy(long spinNs) {
        this.spinNs = spinNs;
    }

    @Override
    public int calculateStrategy(IntSupplier selectSupplier, boolean hasTasks) throws Exception {
        int ready = selectSupplier.get();
        if (ready > 0 || hasTasks) {
            idle = false;
            return ready;
        }
        long nowNs = System.nanoTime();
        if (!idle) {
            idle = true;
            idleSinceNs = nowNs;
        }
        if (nowNs - idleSinceNs < spinNs) {
            return SelectStrategy.CONTINUE;
        }
        idle = false;
        return SelectStrategy.SELECT;
    }
}
