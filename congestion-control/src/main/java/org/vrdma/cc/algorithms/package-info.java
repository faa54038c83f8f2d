/** Reference congestion-control algorithms, one class each, registered through ServiceLoader. */
package org.vrdma.cc.algorithms;
