/** Memory that memory regions register: the pluggable backing and its ByteBuf default. */
package org.vrdma.vnic.memory;
