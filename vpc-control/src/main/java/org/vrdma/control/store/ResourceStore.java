package org.vrdma.control.store;

import java.util.function.Function;

/**
 * The control plane's durable state behind a small interface, so another backend (etcd, say) can
 * replace the embedded one without touching the API or the validation rules.
 *
 * <p>{@link #write} runs its work in one serializable transaction and returns only once the
 * transaction is durable: a write the API acknowledged survives a crash of the process. A runtime
 * exception thrown by the work rolls everything back and propagates.
 */
public interface ResourceStore extends AutoCloseable {
    <T> T read(Function<StoreView, T> work);

    <T> T write(Function<StoreTransaction, T> work);

    /** The revision of the last committed write (0 for an empty store). */
    long revision();

    /** Observes how long reads and writes take (seconds), for metrics. */
    interface LatencyListener {
        void observe(String operation, double seconds);
    }

    @Override
    void close();
}
