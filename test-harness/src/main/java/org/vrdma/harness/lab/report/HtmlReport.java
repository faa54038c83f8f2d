package org.vrdma.harness.lab.report;

import java.util.Base64;
import java.util.List;
import java.util.Locale;
import org.vrdma.harness.lab.LabResults;

/** A single-file HTML report: tables and PNG charts inlined as data URIs, no external resources. */
public final class HtmlReport {
    private final StringBuilder body = new StringBuilder();
    private final String title;

    public HtmlReport(String title) {
        this.title = title;
    }

    public HtmlReport heading(String text) {
        body.append("<h2>").append(esc(text)).append("</h2>\n");
        return this;
    }

    public HtmlReport paragraph(String text) {
        body.append("<p>").append(esc(text)).append("</p>\n");
        return this;
    }

    public HtmlReport code(String text) {
        body.append("<pre>").append(esc(text)).append("</pre>\n");
        return this;
    }

    public HtmlReport image(String alt, byte[] png) {
        body.append("<img alt=\"")
                .append(esc(alt))
                .append("\" src=\"data:image/png;base64,")
                .append(Base64.getEncoder().encodeToString(png))
                .append("\">\n");
        return this;
    }

    public HtmlReport table(List<String> header, List<List<String>> rows) {
        body.append("<table><tr>");
        for (String h : header) {
            body.append("<th>").append(esc(h)).append("</th>");
        }
        body.append("</tr>\n");
        for (List<String> row : rows) {
            body.append("<tr>");
            for (String c : row) {
                body.append("<td>").append(esc(c)).append("</td>");
            }
            body.append("</tr>\n");
        }
        body.append("</table>\n");
        return this;
    }

    /** The counters of a run as a two-column table. */
    public HtmlReport counters(LabResults.Counters c) {
        return counters(c, true);
    }

    /**
     * The counters of a run as a two-column table; without {@code linksModelled} (real-time backends,
     * the machine's own links) link transmissions, ECN marks and drops say so instead of showing 0.
     */
    public HtmlReport counters(LabResults.Counters c, boolean linksModelled) {
        String none = "not observable (real links)";
        return table(
                List.of("counter", "value"),
                List.of(
                        List.of("flows started / finished", c.flowsStarted() + " / " + c.flowsFinished()),
                        List.of("bytes delivered (finished flows)", Long.toString(c.bytesDelivered())),
                        List.of("packets sent by vNICs", Long.toString(c.txPackets())),
                        List.of(
                                "link transmissions (every link, ACK/CNP included)",
                                linksModelled ? Long.toString(c.linkTransmissions()) : none),
                        List.of("retransmitted packets", Long.toString(c.retransmittedPackets())),
                        List.of("retransmission timeouts", Long.toString(c.timeouts())),
                        List.of(
                                "of which spurious (the resent packet had arrived)",
                                Long.toString(c.spuriousTimeouts())),
                        List.of("sequence NAKs", Long.toString(c.seqNaks())),
                        List.of("CNPs sent / received", c.cnpsSent() + " / " + c.cnpsReceived()),
                        List.of("ECN marks", linksModelled ? Long.toString(c.ecnMarks()) : none),
                        List.of("buffer drops", linksModelled ? Long.toString(c.bufferDrops()) : none),
                        List.of("injected losses", linksModelled ? Long.toString(c.injectedLosses()) : none)));
    }

    /** FCT slowdown buckets as a table. */
    public HtmlReport buckets(List<LabResults.SizeBucket> buckets) {
        return table(
                List.of(
                        "flow size",
                        "flows",
                        "p50 slowdown",
                        "p95 slowdown",
                        "p99 slowdown",
                        "mean FCT [us]",
                        "p50 FCT [us]",
                        "p99 FCT [us]"),
                buckets.stream()
                        .map(b -> List.of(
                                size(b.minBytes()) + " .. "
                                        + (b.maxBytes() == Long.MAX_VALUE ? "" : size(b.maxBytes())),
                                Integer.toString(b.flows()),
                                fmt(b.p50()),
                                fmt(b.p95()),
                                fmt(b.p99()),
                                fmt(b.meanFctUs()),
                                fmt(b.p50FctUs()),
                                fmt(b.p99FctUs())))
                        .toList());
    }

    public String render() {
        return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + esc(title) + "</title>\n<style>"
                + "body{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}"
                + "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
                + "td{white-space:nowrap}"
                + "th{background:#f4f4f4}img{max-width:100%;border:1px solid #eee;margin:0.5em 0}"
                + "pre{background:#f8f8f8;padding:0.5em;overflow-x:auto}"
                + "</style></head><body>\n<h1>" + esc(title) + "</h1>\n" + body + "</body></html>\n";
    }

    static String size(long bytes) {
        if (bytes >= 1_000_000) {
            return fmt(bytes / 1e6) + " MB";
        }
        if (bytes >= 1_000) {
            return fmt(bytes / 1e3) + " kB";
        }
        return bytes + " B";
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.2f", v);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
