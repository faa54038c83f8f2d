package org.vrdma.vswitch.qos;

/**
 * A token bucket with exact integer accounting: tokens are kept in bit-nanoseconds (one byte is
 * {@code 8e9} units, and {@code rateBps} units accrue per nanosecond), so refilling over any
 * interval loses nothing to rounding. A packet larger than the burst conforms when the bucket is
 * full and leaves it in debt, so oversized packets are slowed, never stuck.
 *
 * <p>Rate 0 means unlimited. Confined to one thread; time is passed in.
 */
public final class TokenBucket {
    private static final long UNITS_PER_BYTE = 8L * 1_000_000_000L;

    private long rateBps;
    private long capacityUnits;
    private long tokensUnits;
    private long lastNs;

    /** A full bucket of {@code burstBytes} refilling at {@code rateBps} (0 = unlimited). */
    public TokenBucket(long rateBps, long burstBytes, long nowNs) {
        config(rateBps, burstBytes, nowNs);
        tokensUnits = capacityUnits;
    }

    /** Changes rate and burst; the tokens held are kept (capped to the new burst). */
    public void config(long rateBps, long burstBytes, long nowNs) {
        if (rateBps < 0 || burstBytes <= 0 || burstBytes > Long.MAX_VALUE / UNITS_PER_BYTE) {
            throw new IllegalArgumentException("rateBps " + rateBps + ", burstBytes " + burstBytes);
        }
        refill(nowNs);
        this.rateBps = rateBps;
        this.capacityUnits = burstBytes * UNITS_PER_BYTE;
        this.tokensUnits = Math.min(tokensUnits, capacityUnits);
        this.lastNs = nowNs;
    }

    public boolean unlimited() {
        return rateBps == 0;
    }

    public long rateBps() {
        return rateBps;
    }

    public long burstBytes() {
        return capacityUnits / UNITS_PER_BYTE;
    }

    /** Adds the tokens accrued since the last refill. */
    public void refill(long nowNs) {
        long dt = nowNs - lastNs;
        if (dt <= 0) {
            return;
        }
        lastNs = nowNs;
        if (rateBps == 0) {
            return;
        }
        long missing = capacityUnits - tokensUnits;
        // Compare before multiplying: rate * dt overflows after a few seconds at 100 Gbit/s.
        tokensUnits = dt >= missing / rateBps + 1 ? capacityUnits : tokensUnits + rateBps * dt;
    }

    /** Whether a packet of {@code bytes} may leave now (call {@link #refill} first). */
    public boolean conforms(int bytes) {
        return rateBps == 0 || tokensUnits >= Math.min(bytes * UNITS_PER_BYTE, capacityUnits);
    }

    /** Takes the tokens of a packet that conformed. */
    public void consume(int bytes) {
        if (rateBps != 0) {
            tokensUnits -= bytes * UNITS_PER_BYTE;
        }
    }

    /** Nanoseconds from the last refill until a packet of {@code bytes} conforms; 0 if it does. */
    public long nanosUntilConforming(int bytes) {
        if (rateBps == 0) {
            return 0;
        }
        long need = Math.min(bytes * UNITS_PER_BYTE, capacityUnits) - tokensUnits;
        return need <= 0 ? 0 : (need + rateBps - 1) / rateBps;
    }
}
