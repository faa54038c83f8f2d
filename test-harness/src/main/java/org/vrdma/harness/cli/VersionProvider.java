package org.vrdma.harness.cli;

import picocli.CommandLine.IVersionProvider;

/** Reports the project version from the jar manifest, and the JVM it runs on. */
final class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = VrdmaCli.class.getPackage().getImplementationVersion();
        return new String[] {
            "vrdma " + (version == null ? "(development build)" : version),
            "JVM: " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")"
        };
    }
}
