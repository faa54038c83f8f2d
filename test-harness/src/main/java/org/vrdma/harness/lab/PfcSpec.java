package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Priority flow control (IEEE 802.1Qbb) in the fabric, lab-wide: every switch accounts, per ingress
 * port, the bytes of the lossless class (RoCEv2: all the labs carry) that came in on that port and
 * are still queued in the switch; above the XOFF threshold it sends the link's other end (a switch
 * port or a host NIC) a PAUSE, which stops that sender's port after the frame it is serialising,
 * and below the XON threshold a resume. Headroom per ingress port takes what is still on the wire
 * meanwhile, so nothing of the lossless class is dropped; egress buffers no longer tail-drop it.
 * Off ({@code null} or {@code enabled: false}) the fabric is lossy as before.
 *
 * <p>Thresholds are static ({@code xoffBytes}, {@code xonBytes} per ingress port) or, with {@code
 * alpha} and {@code switchBufferBytes}, dynamic as in shared-buffer switches: XOFF when a port's
 * shared use reaches {@code alpha × (switchBufferBytes - headroom of all ports - shared use of
 * all ports)}, XON when it is {@code xonOffsetBytes} below that.
 *
 * @param enabled PFC on
 * @param xoffBytes static XOFF threshold per ingress port (default 256 KiB)
 * @param xonBytes static XON threshold, below {@code xoffBytes} (default {@code xoffBytes} - 18432)
 * @param headroomBytes headroom per ingress port above the threshold; default per port: twice the
 *     link's bandwidth-delay product plus two largest frames
 * @param pauseQuanta pause time a PAUSE asks for, in quanta of 512 bit times at the paused link's
 *     rate (1..65535, default 65535); refreshed at half of it while XOFF holds
 * @param switchBufferBytes dynamic thresholds: each switch's shared buffer
 * @param alpha dynamic thresholds: fraction of the free shared buffer one ingress port on a link
 *     at the hosts' rate may use; a port on a faster link gets it times the ratio of the rates
 * @param xonOffsetBytes dynamic thresholds: resume this far below the threshold (default 18432)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PfcSpec(
        Boolean enabled,
        Long xoffBytes,
        Long xonBytes,
        Long headroomBytes,
        Integer pauseQuanta,
        Long switchBufferBytes,
        Double alpha,
        Long xonOffsetBytes) {

    public static final long DEFAULT_XOFF_BYTES = 256 * 1024;
    /** Two jumbo frames: the default gap between XOFF and XON. */
    public static final long DEFAULT_XON_GAP_BYTES = 2 * 9216;

    public static final int MAX_QUANTA = 0xFFFF;

    /** PFC on with static thresholds. */
    public static PfcSpec staticThresholds(long xoffBytes, long xonBytes, Long headroomBytes) {
        return new PfcSpec(true, xoffBytes, xonBytes, headroomBytes, null, null, null, null);
    }

    /** PFC on with dynamic thresholds over a shared buffer per switch. */
    public static PfcSpec dynamic(long switchBufferBytes, double alpha) {
        return new PfcSpec(true, null, null, null, null, switchBufferBytes, alpha, null);
    }

    @JsonIgnore
    public boolean on() {
        return Boolean.TRUE.equals(enabled);
    }

    @JsonIgnore
    public boolean isDynamic() {
        return alpha != null;
    }

    /** XOFF threshold of static mode. */
    @JsonIgnore
    public long xoff() {
        return xoffBytes == null ? DEFAULT_XOFF_BYTES : xoffBytes;
    }

    /** XON threshold of static mode. */
    @JsonIgnore
    public long xon() {
        return xonBytes == null ? Math.max(0, xoff() - DEFAULT_XON_GAP_BYTES) : xonBytes;
    }

    @JsonIgnore
    public int quanta() {
        return pauseQuanta == null ? MAX_QUANTA : pauseQuanta;
    }

    @JsonIgnore
    public long xonOffset() {
        return xonOffsetBytes == null ? DEFAULT_XON_GAP_BYTES : xonOffsetBytes;
    }

    /** A label for sweeps and tables: {@code off}, {@code on}. */
    @JsonIgnore
    public String label() {
        return on() ? "on" : "off";
    }
}
