package org.vrdma.harness.lab;

/**
 * Told how far a lab run is. Called on the lab's thread; keep it cheap. A run reports either lab
 * time ({@link #onTime}: the workload's run time, then a drain that ends early once the network is
 * idle) or counted steps ({@link #onSteps}: tests run one after the other).
 */
public interface RunProgress {
    RunProgress NONE = new RunProgress() {
        @Override
        public void onTime(long doneNs, long runNs, long drainNs, long flowsDone, long flowsStarted) {}

        @Override
        public void onSteps(String unit, long done, long total) {}
    };

    /**
     * @param doneNs lab time run so far; past {@code runNs} the run is draining
     * @param runNs the workload's run time (flows start within it)
     * @param drainNs the most lab time the drain after it may take; it ends as soon as nothing is
     *     in flight, usually long before
     * @param flowsDone flows completed
     * @param flowsStarted flows started, or planned when {@code flowsDone} is negative (not known
     *     until the run ends)
     */
    void onTime(long doneNs, long runNs, long drainNs, long flowsDone, long flowsStarted);

    /**
     * @param unit what a step is, singular ("test")
     * @param done steps finished
     * @param total steps in the run
     */
    void onSteps(String unit, long done, long total);
}
