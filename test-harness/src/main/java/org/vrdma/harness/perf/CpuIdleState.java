package org.vrdma.harness.perf;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How this machine's idle CPUs wait, read from sysfs ({@code devices/system/cpu/cpuidle}, cpu0's
 * idle states, and the haltpoll governor's {@code guest_halt_poll_ns}): what a thread blocked in a
 * read pays to be woken. A ping-pong whose ends block (the kernel TCP and UDP baselines) pays that
 * wake-up on every hop, one that polls (the event loops) does not, so the comparison depends on it:
 * in a KVM guest with the haltpoll driver and {@code guest_halt_poll_ns = 0}, an idle vCPU halts at
 * once and each wake-up is a VM exit and entry (tens of microseconds per blocking hop); with halt
 * polling on it polls first and wakes in a few microseconds. Read only: nothing is changed.
 *
 * @param driver the cpuidle driver ({@code current_driver}), "" when there is none
 * @param governor the cpuidle governor ({@code current_governor_ro} or {@code current_governor}), ""
 *     when unknown
 * @param haltPollNs the haltpoll governor's {@code guest_halt_poll_ns}, -1 when absent
 * @param states cpu0's idle states as "name (exit latency us)", shallowest first; empty when unknown
 */
public record CpuIdleState(String driver, String governor, long haltPollNs, List<String> states) {
    /** Idle states listed at most: each is a directory of cpu0's. */
    private static final int MAX_STATES = 16;

    /** Reads this machine's state from {@code /sys}. */
    public static CpuIdleState current() {
        return read(Path.of("/sys"));
    }

    /** Reads the state from a sysfs tree rooted at {@code sys} (a stand-in directory in tests). */
    public static CpuIdleState read(Path sys) {
        Path cpuidle = sys.resolve("devices/system/cpu/cpuidle");
        String driver = firstLine(cpuidle.resolve("current_driver"));
        String governor = firstLine(cpuidle.resolve("current_governor_ro"));
        if (governor.isEmpty()) {
            governor = firstLine(cpuidle.resolve("current_governor"));
        }
        long haltPollNs = -1;
        String poll = firstLine(sys.resolve("module/haltpoll/parameters/guest_halt_poll_ns"));
        if (!poll.isEmpty()) {
            try {
                haltPollNs = Long.parseLong(poll);
            } catch (NumberFormatException e) {
                haltPollNs = -1;
            }
        }
        return new CpuIdleState(driver, governor, haltPollNs, states(sys.resolve("devices/system/cpu/cpu0/cpuidle")));
    }

    private static List<String> states(Path dir) {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "state*")) {
            for (Path p : ds) {
                if (found.size() == MAX_STATES) {
                    break;
                }
                found.add(p);
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        // state0, state1, ... state10: by number, not by name.
        found.sort((x, y) -> Integer.compare(stateNumber(x), stateNumber(y)));
        List<String> out = new ArrayList<>();
        for (Path p : found) {
            String name = firstLine(p.resolve("name"));
            if (name.isEmpty()) {
                continue;
            }
            String latency = firstLine(p.resolve("latency"));
            String disabled = firstLine(p.resolve("disable"));
            out.add(name + (latency.isEmpty() ? "" : " (" + latency + " us)") + ("1".equals(disabled) ? " off" : ""));
        }
        return List.copyOf(out);
    }

    private static int stateNumber(Path p) {
        try {
            return Integer.parseInt(p.getFileName().toString().substring("state".length()));
        } catch (RuntimeException e) {
            return Integer.MAX_VALUE;
        }
    }

    private static String firstLine(Path file) {
        try {
            String s = Files.readString(file).strip();
            int nl = s.indexOf('\n');
            return nl < 0 ? s : s.substring(0, nl).strip();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** Whether the haltpoll driver runs with halt polling off: every idle wait halts the vCPU. */
    public boolean haltsWithoutPolling() {
        return "haltpoll".equals(driver) && haltPollNs == 0;
    }

    /** One line: driver, governor, halt polling, states. */
    public String describe() {
        StringBuilder s = new StringBuilder("cpuidle driver ").append(driver.isEmpty() ? "none" : driver);
        s.append(", governor ").append(governor.isEmpty() ? "none" : governor);
        if (haltPollNs >= 0) {
            s.append(", guest_halt_poll_ns ").append(haltPollNs);
        }
        if (!states.isEmpty()) {
            s.append("; cpu0 idle states (exit latency): ").append(String.join(", ", states));
        }
        return s.toString();
    }

    /** One line on what the state means for the blocking baselines against the polling loops. */
    public String meaning() {
        if (haltsWithoutPolling()) {
            return "halt polling is off: a thread blocked in a read leaves its vCPU halted, and each wake-up"
                    + " pays a VM exit and entry (tens of us per hop); the blocking TCP and UDP ping-pongs pay it"
                    + " on every hop, the busy-polling loops and the polling TCP ping-pong do not";
        }
        if ("haltpoll".equals(driver) && haltPollNs > 0) {
            return String.format(
                    "halt polling is on: an idle vCPU polls for up to %.0f us before it halts, so a blocking read"
                            + " woken within that time pays no VM exit (a few us per hop)",
                    haltPollNs / 1e3);
        }
        if (driver.isEmpty()) {
            return "no cpuidle driver: an idle CPU runs the kernel's default idle (halt); a blocking read pays its"
                    + " wake-up, which a polling one does not";
        }
        return "a blocking read's CPU may enter the idle states above and pays their exit latency and the"
                + " scheduler's wake-up on every hop; a polling one does not";
    }
}
