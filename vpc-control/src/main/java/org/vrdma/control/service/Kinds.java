package org.vrdma.control.service;

/** The resource kinds as the store names them. */
public final class Kinds {
    public static final String VPC = "vpc";
    public static final String SUBNET = "subnet";
    public static final String HOST = "host";
    public static final String ENI = "eni";
    public static final String SECURITY_GROUP = "security_group";
    public static final String QOS_POLICY = "qos_policy";

    private Kinds() {}
}
