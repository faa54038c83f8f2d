/**
 * The congestion-control SPI ({@link org.vrdma.cc.CongestionControl}, {@link
 * org.vrdma.cc.CongestionControlProvider}), its registry ({@link org.vrdma.cc.CongestionControls}),
 * and the pacer and TX window that apply an algorithm's rate and window to a flow.
 */
package org.vrdma.cc;
