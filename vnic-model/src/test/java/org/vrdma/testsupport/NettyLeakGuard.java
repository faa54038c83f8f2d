package org.vrdma.testsupport;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Turns Netty's leak reports into test failures. Netty's detector (at {@code paranoid} in our
 * builds) only logs a leak when a leaked buffer is garbage-collected; this guard records every
 * report and, after each test class, collects garbage and fails the class if anything leaked.
 *
 * <p>Registered twice through {@code META-INF/services}: as a launcher session listener, so the
 * recording detector is installed before any buffer class initialises (whatever the test engine),
 * and as an auto-detected Jupiter extension that checks after every test class.
 */
public final class NettyLeakGuard implements AfterAllCallback, LauncherSessionListener {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        install();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        install();
        List<String> leaks = collect();
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty buffers leaked (found after " + context.getDisplayName() + "):\n"
                    + String.join("\n", leaks));
        }
    }

    /** Installs the recording detector factory once per JVM. */
    public static synchronized void install() {
        if (!installed) {
            ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
            installed = true;
        }
    }

    /** Forces pending leak reports out and returns (and forgets) every leak recorded so far. */
    public static List<String> collect() {
        for (int round = 0; round < 2; round++) {
            awaitReferenceProcessing();
            // Netty reports leaks of collected buffers when it tracks a new allocation.
            PooledByteBufAllocator.DEFAULT.heapBuffer(1).release();
            UnpooledByteBufAllocator.DEFAULT.heapBuffer(1).release();
        }
        List<String> leaks = new ArrayList<>(LEAKS);
        LEAKS.clear();
        return leaks;
    }

    /**
     * Collects garbage and waits until the reference handler has enqueued what that collection
     * cleared: a sentinel cleared by the same collection tells when that has happened.
     */
    private static void awaitReferenceProcessing() {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        for (int attempt = 0; attempt < 10; attempt++) {
            System.gc();
            try {
                if (queue.remove(100) != null) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        Reference.reachabilityFence(sentinel);
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(
                Class<T> resource, int samplingInterval, long maxActive) {
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            LEAKS.add("LEAK: " + resourceType + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            LEAKS.add("LEAK: " + resourceType + " (no access records)");
            super.reportUntracedLeak(resourceType);
        }
    }
}
