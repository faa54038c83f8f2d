package org.vrdma.cc;

/**
 * A congestion-control configuration is invalid. The message starts with the path of the offending
 * field, for example {@code "dcqcn.g: must be in (0,1]"}.
 */
public final class CcConfigException extends IllegalArgumentException {
    private final String fieldPath;

    /**
     * @param fieldPath dotted path of the field, for example {@code "dcqcn.g"}
     * @param problem what is wrong with it
     */
    public CcConfigException(final String fieldPath, final String problem) {
        super(fieldPath + ": " + problem);
        this.fieldPath = fieldPath;
    }

    /** Same, keeping the parser's exception as the cause. */
    public CcConfigException(final String fieldPath, final String problem, final Throwable cause) {
        super(fieldPath + ": " + problem, cause);
        this.fieldPath = fieldPath;
    }

    /** Dotted path of the offending field, for example {@code "dcqcn.g"}. */
    public String fieldPath() {
        return fieldPath;
    }

    /** The same problem with {@code prefix} put in front of the path. */
    public CcConfigException under(final String prefix) {
        final String problem = getMessage().substring(fieldPath.length() + 2);
        return new CcConfigException(prefix + "." + fieldPath, problem, getCause());
    }
}
