package org.scaledl.cli;

import org.scaledl.model.plan.ProfilingCost;
import picocli.CommandLine.Option;

/** How a run's profiling time is priced, shared by {@code plan} and {@code learning-curve} ({@link ProfilingCost}). */
final class ProfilingCostOptions {
    @Option(names = {"--overhead-s", "--startup-s"}, description = "Fixed seconds per run: start-up, model build "
            + "(default: 1.5 on a CPU, 300 for a GPU cluster job)")
    Double overhead;

    @Option(names = "--warmup", description = "Untimed iterations per run (default: 2 on a CPU, 10 on GPUs)")
    Integer warmup;

    @Option(names = {"--reps", "--iterations"}, description = "Timed iterations per run (default: 3 on a CPU, 20 on "
            + "GPUs)")
    Integer reps;

    /** The cost model these options describe, with a CPU run's or a GPU cluster job's defaults. */
    ProfilingCost cost(boolean cluster) {
        if (overhead != null && !(overhead >= 0 && Double.isFinite(overhead))) {
            throw new IllegalArgumentException("--overhead-s (--startup-s) must be finite and >= 0, got " + overhead);
        }
        if (warmup != null && warmup < 0) {
            throw new IllegalArgumentException("--warmup must be >= 0, got " + warmup);
        }
        if (reps != null && reps < 1) {
            throw new IllegalArgumentException("--reps (--iterations) must be >= 1, got " + reps);
        }
        return new ProfilingCost(overhead != null ? overhead : cluster ? 300 : 1.5,
                warmup != null ? warmup : cluster ? 10 : 2, reps != null ? reps : cluster ? 20 : 3);
    }
}
