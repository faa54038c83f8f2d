package org.vrdma.control.model;

/**
 * A request the control plane refuses, with the HTTP status, a stable machine-readable code, the
 * request field at fault (or {@code null}) and a sentence for people. The REST layer turns it into
 * {@code {"error": {"code": ..., "field": ..., "message": ...}}}.
 */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final String field;

    public ApiException(int status, String code, String field, String message) {
        super(message);
        this.status = status;
        this.code = code;
        this.field = field;
    }

    public static ApiException invalid(String field, String message) {
        return new ApiException(400, "invalid_argument", field, message);
    }

    public static ApiException notFound(String kind, String id) {
        return new ApiException(404, "not_found", "id", kind + " " + id + " does not exist");
    }

    public static ApiException conflict(String code, String field, String message) {
        return new ApiException(409, code, field, message);
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public String field() {
        return field;
    }
}
