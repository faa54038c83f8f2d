package org.vrdma.harness.lab;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Sampled buffer-leak detection for the test classes that run labs: paranoid leak tracking records
 * a stack per buffer access, too slow for a simulation of millions of packets. The level the class
 * found is restored after it.
 */
public final class SampledLeakDetection implements BeforeAllCallback, AfterAllCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SampledLeakDetection.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NS).put("level", ResourceLeakDetector.getLevel());
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        ResourceLeakDetector.setLevel(context.getStore(NS).get("level", ResourceLeakDetector.Level.class));
    }
}
