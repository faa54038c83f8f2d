package org.vrdma.harness.backend;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Image;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testcontainers.DockerClientFactory;

/**
 * Removes what labs left behind when the process that ran them died without closing them ({@code
 * kill -9}, a CI job's timeout, a crashed test JVM): shutdown hooks do not run then, so host
 * processes, network namespaces, containers, Docker networks and images, and temporary directories
 * stay. A lab id is {@code <prefix>-<pid>-<n>}, so a lab is stale exactly when process {@code pid}
 * no longer runs; labs of live processes are never touched.
 */
public final class StaleLabs {
    private StaleLabs() {}

    /** What was removed (or, dry, would be), and what could not be. */
    public record Report(List<String> removed, List<String> failures) {}

    /** Labs whose owner is gone. */
    static final LongPredicate OWNER_GONE = pid -> ProcessHandle.of(pid).isEmpty();

    /**
     * Removes every stale lab whose id starts with {@code prefix}: host processes (found in {@code
     * /proc} by their lab marker, in any namespace or container), network namespaces (when {@code ip}
     * is there and we are root), containers, networks and images (when a Docker engine answers), and
     * temporary directories.
     *
     * @param dryRun only list what would be removed
     */
    public static Report remove(String prefix, boolean dryRun) {
        return remove(prefix, dryRun, OWNER_GONE, true);
    }

    /** As {@link #remove(String, boolean)}; without {@code docker} no Docker engine is asked. */
    public static Report remove(String prefix, boolean dryRun, boolean docker) {
        return remove(prefix, dryRun, OWNER_GONE, docker);
    }

    static Report remove(String prefix, boolean dryRun, LongPredicate stale, boolean docker) {
        Pattern id = Pattern.compile("^/?(" + Pattern.quote(prefix) + "-(\\d+)-\\d+)");
        List<String> removed = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        processes(prefix, id, stale, dryRun, removed, failures);
        namespaces(id, stale, dryRun, removed, failures);
        if (docker) {
            docker(id, stale, dryRun, removed, failures);
        }
        tempDirs(id, stale, dryRun, removed, failures);
        return new Report(removed, failures);
    }

    /** The lab id {@code name} belongs to when that lab is stale, else null. */
    private static String staleLab(Pattern id, LongPredicate stale, String name) {
        Matcher m = id.matcher(name);
        if (!m.find()) {
            return null;
        }
        long pid;
        try {
            pid = Long.parseLong(m.group(2));
        } catch (NumberFormatException e) {
            return null;
        }
        return stale.test(pid) ? m.group(1) : null;
    }

    private static void processes(
            String prefix,
            Pattern id,
            LongPredicate stale,
            boolean dryRun,
            List<String> removed,
            List<String> failures) {
        try {
            for (LabProcesses.Marked m : LabProcesses.marked(prefix)) {
                String lab = staleLab(id, stale, m.labId());
                if (lab != null) {
                    if (!dryRun) {
                        ProcessHandle.of(m.pid()).ifPresent(ProcessHandle::destroyForcibly);
                    }
                    removed.add("process " + m.pid() + " of lab " + lab);
                }
            }
        } catch (IOException e) {
            failures.add("cannot list /proc: " + e.getMessage());
        }
    }

    private static void namespaces(
            Pattern id, LongPredicate stale, boolean dryRun, List<String> removed, List<String> failures) {
        List<String> names = new ArrayList<>();
        try {
            for (String line : Commands.run("ip", "netns", "list").split("\n")) {
                if (!line.isBlank()) {
                    names.add(line.strip().split(" ")[0]);
                }
            }
        } catch (IOException e) {
            return; // no iproute2 here: no namespaces of ours either
        }
        // Host namespaces (<lab id>-<host>) before the lab's bridge namespace (<lab id>).
        names.sort(Comparator.comparingInt(String::length).reversed());
        for (String ns : names) {
            if (staleLab(id, stale, ns) == null) {
                continue;
            }
            try {
                if (!dryRun) {
                    for (String pid : Commands.run("ip", "netns", "pids", ns).split("\\s+")) {
                        if (!pid.isBlank()) {
                            ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                        }
                    }
                    Commands.run("ip", "netns", "delete", ns);
                }
                removed.add("network namespace " + ns);
            } catch (IOException | RuntimeException e) {
                failures.add("network namespace " + ns + ": " + e.getMessage());
            }
        }
    }

    private static void docker(
            Pattern id, LongPredicate stale, boolean dryRun, List<String> removed, List<String> failures) {
        DockerClient docker;
        try {
            if (!DockerClientFactory.instance().isDockerAvailable()) {
                return;
            }
            docker = DockerClientFactory.instance().client();
        } catch (RuntimeException e) {
            return; // no engine: nothing of ours in it to remove
        }
        try {
            for (Container c : docker.listContainersCmd().withShowAll(true).exec()) {
                for (String n : c.getNames()) {
                    if (staleLab(id, stale, n) != null) {
                        if (!dryRun) {
                            docker.removeContainerCmd(c.getId()).withForce(true).exec();
                        }
                        removed.add("container " + n.replaceFirst("^/", ""));
                        break;
                    }
                }
            }
            for (var n : docker.listNetworksCmd().exec()) {
                if (staleLab(id, stale, n.getName()) != null) {
                    if (!dryRun) {
                        docker.removeNetworkCmd(n.getId()).exec();
                    }
                    removed.add("Docker network " + n.getName());
                }
            }
            for (Image i : docker.listImagesCmd().exec()) {
                for (String tag : i.getRepoTags() == null ? new String[0] : i.getRepoTags()) {
                    if (staleLab(id, stale, tag) != null) {
                        if (!dryRun) {
                            docker.removeImageCmd(tag).withForce(true).exec();
                        }
                        removed.add("image " + tag);
                    }
                }
            }
        } catch (RuntimeException e) {
            failures.add("Docker: " + e.getMessage());
        }
    }

    private static void tempDirs(
            Pattern id, LongPredicate stale, boolean dryRun, List<String> removed, List<String> failures) {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (var entries = Files.list(tmp)) {
            for (Path d : entries.toList()) {
                if (!Files.isDirectory(d) || staleLab(id, stale, d.getFileName().toString()) == null) {
                    continue;
                }
                try {
                    if (!dryRun) {
                        try (var walk = Files.walk(d)) {
                            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                                Files.deleteIfExists(p);
                            }
                        }
                    }
                    removed.add("directory " + d);
                } catch (IOException e) {
                    failures.add("directory " + d + ": " + e.getMessage());
                }
            }
        } catch (IOException e) {
            failures.add("cannot list " + tmp + ": " + e.getMessage());
        }
    }
}
