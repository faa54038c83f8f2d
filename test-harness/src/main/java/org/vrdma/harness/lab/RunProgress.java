package org.vrdma.harness.lab;

/** Told how far a lab run is. Called on the lab's thread; keep it cheap. */
@FunctionalInterface
public interface RunProgress {
    RunProgress NONE = (doneNs, totalNs, flowsDone, flowsStarted) -> {};

    /**
     * @param doneNs lab time run so far
     * @param totalNs lab time the run lasts at most (duration plus drain)
     * @param flowsDone flows completed
     * @param flowsStarted flows started
     */
    void onProgress(long doneNs, long totalNs, long flowsDone, long flowsStarted);
}
