package org.vrdma.harness.lab;

/**
 * A lab that cannot be loaded, is invalid, or cannot run on a backend. {@link #path()} names the
 * offending field as a JSON path ({@code topology.hostLink.rateGbps}, {@code workloads[2].load}),
 * or is empty when the problem is not one field's.
 */
public final class LabException extends RuntimeException {
    private final String path;

    public LabException(String path, String message) {
        super(path.isEmpty() ? message : path + ": " + message);
        this.path = path;
    }

    public LabException(String path, String message, Throwable cause) {
        super(path.isEmpty() ? message : path + ": " + message, cause);
        this.path = path;
    }

    /** JSON path of the offending field, or "" */
    public String path() {
        return path;
    }
}
