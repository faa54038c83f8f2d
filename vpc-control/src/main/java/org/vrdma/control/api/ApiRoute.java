package org.vrdma.control.api;

import io.javalin.http.Handler;
import java.util.List;

/**
 * One route of the REST API: what Javalin serves and what {@link OpenApiDocument} describes come
 * from the same table, so the document cannot miss a route.
 *
 * @param requestBody a record class, or null
 * @param response a record class, {@link String} for text, or null for an empty body
 * @param listOf whether the response is {@code {"items": [response...]}}
 * @param errors the error statuses the route may answer with, besides 401 and 500
 */
public record ApiRoute(
        String method,
        String path,
        String operationId,
        String tag,
        String summary,
        boolean authenticated,
        Class<?> requestBody,
        Class<?> response,
        boolean listOf,
        int status,
        List<Param> params,
        List<Integer> errors,
        Handler handler) {

    /** A query or header parameter (path parameters are read from the path). */
    public record Param(String in, String name, String type, String description) {}
}
