package org.vrdma.runtime;

/**
 * Receives timer expiries. Engines implement it once (for example a queue pair) and tell their
 * timers apart by the id {@link TimerService#scheduleAt} returned, so scheduling allocates nothing.
 */
@FunctionalInterface
public interface TimerHandler {
    /**
     * Called when a timer expires.
     *
     * @param nowNs current time; never earlier than the deadline the timer was scheduled for
     * @param timerId the id returned by {@link TimerService#scheduleAt}
     */
    void onTimer(long nowNs, long timerId);
}
