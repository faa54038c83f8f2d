package org.vrdma.harness.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs each test of the annotated class (or the annotated test) with a vRDMA lab brought up before
 * it and torn down after it, also when the test fails. Test methods take {@link
 * org.vrdma.harness.backend.RunningLab} and {@link org.vrdma.harness.backend.LabHost} parameters
 * (the first {@code LabHost} parameter is the first host, and so on, or {@link Host} names one).
 *
 * <pre>
 * &#64;Test
 * &#64;VrdmaLab(hosts = 2)
 * void writesArriveIntact(RunningLab lab, LabHost a, LabHost b) throws Exception {
 *     lab.transfer(a, b, TransferOptions.verifiedWrite(16 &lt;&lt; 20)).assertByteExact();
 * }
 * </pre>
 *
 * The backend is {@link #backend()}, unless the system property {@code vrdma.lab.backend} names
 * another: the same tests then run on {@code embedded}, {@code netns} or {@code docker} in CI.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@ExtendWith(VrdmaLabExtension.class)
public @interface VrdmaLab {
    /** A lab file (JSON or YAML), on the class path or a file path; empty: {@link #hosts()} hosts. */
    String value() default "";

    /** Hosts {@code h1..hN}, with ENIs 10.100.0.1.. in one VPC, when no lab file is given. */
    int hosts() default 2;

    /**
     * {@code embedded} (default), {@code netns} (root), {@code docker} (a Docker engine), or {@code
     * virtual} (virtual time; tests take a {@link org.vrdma.harness.lab.LabRun}).
     */
    String backend() default "embedded";

    /** Names the host a {@link org.vrdma.harness.backend.LabHost} parameter receives. */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Host {
        String value();
    }
}
