package org.vrdma.control.agent.vswitch;

import org.vrdma.control.agent.EniConfig;

/** Makes the local endpoint of an ENI when a {@link VSwitchProgrammer} creates its vSwitch port. */
@FunctionalInterface
public interface EniAttachmentFactory {
    EniAttachment attach(EniConfig eni);
}
