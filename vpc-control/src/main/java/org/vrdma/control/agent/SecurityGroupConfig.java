package org.vrdma.control.agent;

import java.util.List;
import org.vrdma.control.model.SecurityGroupRule;

/** The allow rules of a security group an ENI of this host uses. */
public record SecurityGroupConfig(String id, String vpcId, List<SecurityGroupRule> rules) {}
