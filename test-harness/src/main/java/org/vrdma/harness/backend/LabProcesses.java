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

    /** Process ids and command lines of live processes whose lab id starts with {@code prefix}. */
    public static List<String> withLabPrefix(String prefix) {
        String marker = "-D" + VrdmaJava.LAB_PROPERTY + "=" + prefix;
        List<String> found = new ArrayList<>();
        try (var dirs = Files.list(Path.of("/proc"))) {
            for (Path d : dirs.toList()) {
                String pid = d.getFileName().toString();
                if (!pid.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                String cmdline;
                try {
                    cmdline = new String(Files.readAllBytes(d.resolve("cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ');
                } catch (IOException e) {
                    continue; // ended meanwhile
                }
                if (cmdline.contains(marker)) {
                    found.add("process " + pid + ": " + abbreviate(cmdline));
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc", e);
        }
        return found;
    }

    private static String abbreviate(String cmdline) {
        int main = cmdline.indexOf(VrdmaJava.MAIN_CLASS);
        return main < 0 ? cmdline : cmdline.substring(main);
    }
}
