package org.vrdma.control.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** Renders JSON objects as an aligned text table, one column per field named. */
final class Table {
    private Table() {}

    static String render(List<String> columns, List<JsonNode> rows) {
        List<String[]> cells = new ArrayList<>();
        cells.add(columns.stream().map(c -> c.toUpperCase()).toArray(String[]::new));
        for (JsonNode row : rows) {
            cells.add(columns.stream().map(c -> text(row.path(c))).toArray(String[]::new));
        }
        int[] width = new int[columns.size()];
        for (String[] r : cells) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] r : cells) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(r[i]);
                if (i < r.length - 1) {
                    line.append(" ".repeat(width[i] - r[i].length() + 2));
                }
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    private static String text(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) {
            return "-";
        }
        if (n.isArray()) {
            List<String> parts = new ArrayList<>();
            n.forEach(e -> parts.add(e.isObject() ? e.path("id").asText() : e.asText()));
            return parts.isEmpty() ? "-" : String.join(",", parts);
        }
        return n.asText();
    }
}
