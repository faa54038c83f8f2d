package org.vrdma.harness.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds lab host processes by their marker property ({@link VrdmaJava#LAB_PROPERTY}) in
 * {@code /proc}, whichever namespace or container they run in: the processes of a lab that has
 * closed must be none.
 */
public final class LabProcesses {
    private LabProcesses() {}

    /** A live process that carries a lab id: its pid, that lab id, and its command line. */
    record Marked(long pid, String labId, String cmdline) {}

    /** Process ids and command lines of live processes whose lab id starts with {@code prefix}. */
    public static List<String> withLabPrefix(String prefix) {
        List<String> found = new ArrayList<>();
        try {
            for (Marked m : marked(prefix)) {
                found.add("process " + m.pid() + ": " + abbreviate(m.cmdline()));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc", e);
        }
        return found;
    }

    /** Live processes whose lab id (the marker property's value) starts with {@code prefix}. */
    static List<Marked> marked(String prefix) throws IOException {
        String marker = "-D" + VrdmaJava.LAB_PROPERTY + "=";
        List<Marked> found = new ArrayList<>();
        try (var dirs = Files.list(Path.of("/proc"))) {
            for (Path d : dirs.toList()) {
                String pid = d.getFileName().toString();
                if (!pid.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                String[] args;
                try {
                    args = new String(Files.readAllBytes(d.resolve("cmdline")), StandardCharsets.UTF_8).split("\0");
                } catch (IOException e) {
                    continue; // ended meanwhile
                }
                for (String arg : args) {
                    if (arg.startsWith(marker + prefix)) {
                        found.add(new Marked(
                                Long.parseLong(pid), arg.substring(marker.length()), String.join(" ", args)));
                        break;
                    }
                }
            }
        }
        return found;
    }

    private static String abbreviate(String cmdline) {
        int main = cmdline.indexOf(VrdmaJava.MAIN_CLASS);
        return main < 0 ? cmdline : cmdline.substring(main);
    }
}
