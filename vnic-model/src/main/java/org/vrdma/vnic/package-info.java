/**
 * The virtual NIC model: verbs objects ({@link org.vrdma.vnic.verbs}), the memory they register
 * ({@link org.vrdma.vnic.memory}) and the transport building blocks ({@link
 * org.vrdma.vnic.transport}). Everything here is sans-IO and single-threaded: inputs are verbs
 * calls, received frames and timer expiries; outputs are frames, completions and timer requests.
 */
package org.vrdma.vnic;
