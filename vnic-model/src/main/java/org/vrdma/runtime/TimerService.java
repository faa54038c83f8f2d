package org.vrdma.runtime;

/**
 * Schedules timers for sans-IO engines. Implementations are confined to one thread (an event loop
 * or the virtual-time scheduler): engines call it only from their own callbacks.
 *
 * <p>Timers with the same deadline expire in the order they were scheduled.
 */
public interface TimerService extends Clock {
    /** Id that no timer ever has; engines use it for "no timer armed". */
    long NO_TIMER = 0L;

    /**
     * Schedules {@code handler.onTimer} at {@code deadlineNs}. A deadline in the past expires at the
     * next opportunity, after the event that is running now.
     *
     * @return a positive id, unique among live timers, for {@link #cancel}
     */
    long scheduleAt(long deadlineNs, TimerHandler handler);

    /** Convenience for {@code scheduleAt(nowNs() + delayNs, handler)}. */
    default long scheduleAfter(long delayNs, TimerHandler handler) {
        return scheduleAt(nowNs() + delayNs, handler);
    }

    /**
     * Cancels a timer that has not expired yet.
     *
     * @return true if the timer was pending and will now never fire; false for an expired, cancelled
     *     or unknown id (including {@link #NO_TIMER})
     */
    boolean cancel(long timerId);
}
