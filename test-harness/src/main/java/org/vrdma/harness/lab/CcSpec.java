package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Congestion control of a QP: an algorithm of the congestion-control module by name ({@code dcqcn},
 * {@code timely}, {@code swift}, {@code hpcc}, {@code dctcp}, {@code static}, or a plug-in) with its
 * JSON configuration (fields left out take the algorithm's defaults), or {@code none}: no congestion
 * control, the transport's static window at line rate.
 *
 * @param algorithm the algorithm's name
 * @param config the algorithm's configuration, or null for its defaults
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CcSpec(String algorithm, JsonNode config) {
    public static final CcSpec NONE = new CcSpec("none", null);

    public static CcSpec of(String algorithm) {
        return new CcSpec(algorithm, null);
    }

    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean isNone() {
        return algorithm == null || algorithm.equals("none");
    }
}
