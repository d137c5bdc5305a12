package org.scaledl.cli;

import org.scaledl.model.plan.ProfilingCost;
import picocli.CommandLine.Option;

/** How a run's profiling time is priced, shared by {@code plan} and {@code learning-curve} ({@link ProfilingCost}). */
final class ProfilingCostOptions {
    @Option(names = "--overhead-s", defaultValue = "1.5", description = "Fixed seconds per run: start-up, model "
            + "build (default: ${DEFAULT-VALUE})")
    double overhead;

    @Option(names = "--warmup", defaultValue = "2", description = "Untimed iterations per run (default: "
            + "${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--reps", defaultValue = "3", description = "Timed iterations per run (default: ${DEFAULT-VALUE})")
    int reps;

    /** The cost model these options describe. */
    ProfilingCost cost() {
        return new ProfilingCost(overhead, warmup, reps);
    }
}
