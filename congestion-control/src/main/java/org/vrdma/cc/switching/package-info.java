/**
 * The switch side of congestion control, for egress queues of the vSwitch and of virtual-time
 * fabrics: RED/ECN marking, tail drop and INT stamping. Pure objects without clocks or I/O: the
 * caller passes time and randomness in.
 */
package org.vrdma.cc.switching;
