package org.vrdma.control.agent;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One incremental change: {@code op} is {@code upsert} (with the new {@code value}) or {@code
 * remove}; {@code kind} is {@code vpc}, {@code eni}, {@code route}, {@code securityGroup} or {@code
 * qosPolicy}.
 */
public record Change(String op, String kind, String id, JsonNode value) {
    public static final String UPSERT = "upsert";
    public static final String REMOVE = "remove";
}
