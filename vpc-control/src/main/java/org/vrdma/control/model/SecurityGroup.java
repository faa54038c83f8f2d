package org.vrdma.control.model;

import java.util.List;

/** A set of allow and deny rules in one VPC; traffic an ENI's groups do not allow, or deny, is dropped. */
public record SecurityGroup(String id, String name, String vpcId, List<SecurityGroupRule> rules, long version) {}
