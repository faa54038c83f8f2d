package org.vrdma.harness.cli;

import java.util.Locale;

/** Parses human-written quantities on the command line. */
final class Units {
    private Units() {}

    /** "100G", "25g", "400M", "10k", "1000000" (bits per second) → bits per second. */
    static long parseRateBps(String text) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        if (s.endsWith("BPS")) {
            s = s.substring(0, s.length() - 3);
        }
        long multiplier = 1;
        char last = s.isEmpty() ? ' ' : s.charAt(s.length() - 1);
        switch (last) {
            case 'K' -> multiplier = 1_000L;
            case 'M' -> multiplier = 1_000_000L;
            case 'G' -> multiplier = 1_000_000_000L;
            case 'T' -> multiplier = 1_000_000_000_000L;
            default -> {}
        }
        if (multiplier != 1) {
            s = s.substring(0, s.length() - 1);
        }
        try {
            double value = Double.parseDouble(s);
            if (!(value > 0) || Double.isInfinite(value)) {
                throw new IllegalArgumentException("rate must be positive: " + text);
            }
            return Math.round(value * multiplier);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a rate (try 100G, 25G, 400M): " + text, e);
        }
    }
}
