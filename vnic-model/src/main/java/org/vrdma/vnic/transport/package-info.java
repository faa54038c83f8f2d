/**
 * Building blocks of the reliable transport that know nothing about verbs objects: PSN arithmetic,
 * the RTO estimator, the TX window and its rate/window source, the packet description and codec
 * seam, and counters.
 */
package org.vrdma.vnic.transport;
