package org.vrdma.runtime;

/** Observes every timer expiry of a driver, in order; used to record and compare event traces. */
@FunctionalInterface
public interface EventTracer {
    /** Called just before {@code handler} runs for timer {@code timerId} at {@code nowNs}. */
    void onEvent(long nowNs, long timerId, TimerHandler handler);
}
