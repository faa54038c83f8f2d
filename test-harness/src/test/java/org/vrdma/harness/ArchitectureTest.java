package org.vrdma.harness;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules of DESIGN.md, checked on the compiled classes of every module. Maven's
 * enforcer bans the wrong artifacts; this bans the wrong classes (threads, sockets, the wall
 * clock) inside artifacts that are allowed, such as the JDK itself.
 */
class ArchitectureTest {
    /** Packages of the protocol engines: sans-IO and clock-agnostic. */
    private static final String[] SANS_IO = {
        "org.vrdma.cc..",
        "org.vrdma.runtime..",
        "org.vrdma.vnic..",
        "org.vrdma.wire..",
        "org.vrdma.vswitch.pipeline..",
        "org.vrdma.vswitch.qos..",
        "org.vrdma.vswitch.fabric.."
    };

    private static final java.util.regex.Pattern TEST_JAR = java.util.regex.Pattern.compile(".*-tests\\.jar.*");

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                // Under `verify` a module's test classes arrive packaged, as its -tests.jar.
                .withImportOption(location -> !location.matches(TEST_JAR))
                .importPackages("org.vrdma");
    }

    @Test
    void importsEveryModule() {
        // Guards against a rule that passes because it saw no classes.
        org.assertj.core.api.Assertions.assertThat(classes.containPackage("org.vrdma.runtime"))
                .isTrue();
        org.assertj.core.api.Assertions.assertThat(classes.containPackage("org.vrdma.vswitch.runtime"))
                .isTrue();
    }

    @Test
    void modulesDependOneWay() {
        ArchRule rule = layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .withOptionalLayers(true)
                .layer("congestion-control")
                .definedBy("org.vrdma.cc..")
                .layer("vnic-model")
                .definedBy("org.vrdma.runtime..", "org.vrdma.vnic..", "org.vrdma.wire..")
                .layer("vswitch")
                .definedBy("org.vrdma.vswitch..")
                .layer("guest-driver-shim")
                .definedBy("org.vrdma.shim..", "org.vrdma.verbs..")
                .layer("vpc-control")
                .definedBy("org.vrdma.control..")
                .layer("test-harness")
                .definedBy("org.vrdma.harness..")
                .whereLayer("test-harness")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("vpc-control")
                .mayOnlyBeAccessedByLayers("test-harness")
                .whereLayer("guest-driver-shim")
                .mayOnlyBeAccessedByLayers("test-harness")
                .whereLayer("vswitch")
                .mayOnlyBeAccessedByLayers("guest-driver-shim", "vpc-control", "test-harness")
                .whereLayer("vnic-model")
                .mayOnlyBeAccessedByLayers("vswitch", "guest-driver-shim", "vpc-control", "test-harness");
        rule.check(classes);
    }

    @Test
    void protocolEnginesDoNoIo() {
        noClasses()
                .that()
                .resideInAnyPackage(SANS_IO)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.netty.channel..",
                        "io.netty.bootstrap..",
                        "io.netty.handler..",
                        "io.netty.resolver..",
                        "java.net..",
                        "java.nio.channels..",
                        "java.nio.file..")
                .orShould()
                .dependOnClassesThat()
                .haveNameMatching("java\\.io\\.(File|RandomAccessFile|Console).*")
                .because("protocol engines are sans-IO: drivers feed them packets and timer expiries (DESIGN.md)")
                .check(classes);
    }

    @Test
    void protocolEnginesStartNoThreadsAndReadNoClock() {
        noClasses()
                .that()
                .resideInAnyPackage(SANS_IO)
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName(Thread.class.getName())
                .orShould()
                .dependOnClassesThat()
                .haveNameMatching(
                        "java\\.util\\.(Timer|concurrent\\.(Executor.*|ScheduledExecutorService|ForkJoin.*|CompletableFuture|ThreadFactory))")
                .orShould()
                .callMethod(System.class, "nanoTime")
                .orShould()
                .callMethod(System.class, "currentTimeMillis")
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName("java.time.Instant")
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName("java.time.Clock")
                .because("time comes from the injected Clock so the same code runs in real and virtual time")
                .check(classes);
    }

    @Test
    void congestionControlKnowsNoPacketBytes() {
        noClasses()
                .that()
                .resideInAPackage("org.vrdma.cc..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.netty..", "java.nio..")
                .check(classes);
    }
}
