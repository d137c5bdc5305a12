package org.scaledl.model.plan;

import org.scaledl.model.cost.Roofline;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.Checks;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * What measuring one workload costs, in seconds of the machine: a fixed overhead per run (starting the workers,
 * building the model, setting up DDP) plus its untimed warm-up and timed iterations. Plans within a budget
 * ({@link ProfilingPlan#withinBudget}) add these up.
 *
 * <pre>{@code
 * ProfilingCost cost = ProfilingCost.standard();                 // 1.5 s + (2 + 3) iterations
 * double s = cost.seconds(predictor.predictMillis(w));           // or ProfilingCost.rooflineMillis(w) before any data
 * }</pre>
 *
 * <p>The standard overhead is what the {@code cpu-zoo} campaign shows: measured in jobs of about five configurations,
 * a job took a median 6 s more than its iterations (so about 1.5 s a run including the untimed first iteration). The
 * standard iterations are those of the Python companion's {@code measure} (one untimed, one warm-up, three timed).
 *
 * @param overheadSeconds  fixed seconds per run (≥ 0)
 * @param warmupIterations iterations run but not timed (≥ 0)
 * @param timedIterations  iterations timed (≥ 1)
 */
public record ProfilingCost(double overheadSeconds, int warmupIterations, int timedIterations) {
    /** Rough host throughput for the prior: FP32 FLOP/s of one thread. */
    private static final double PRIOR_FLOPS_PER_THREAD = 25e9;
    /** Rough host memory bandwidth for the prior, bytes/s. */
    private static final double PRIOR_BYTES_PER_SECOND = 8e9;
    /** Framework dispatch per executed layer and pass, seconds. */
    private static final double PRIOR_DISPATCH_SECONDS = 10e-6;
    /** Gradient all-reduce throughput between workers of one host, bytes/s. */
    private static final double PRIOR_ALLREDUCE_BYTES_PER_SECOND = 1e9;

    /** Validates. */
    public ProfilingCost {
        Checks.argument(overheadSeconds >= 0 && Double.isFinite(overheadSeconds),
                "overhead must be finite and >= 0: %s", overheadSeconds);
        Checks.argument(warmupIterations >= 0, "warm-up iterations must be >= 0: %s", warmupIterations);
        Checks.argument(timedIterations >= 1, "timed iterations must be >= 1: %s", timedIterations);
    }

    /** 1.5 s per run, 2 untimed and 3 timed iterations. */
    public static ProfilingCost standard() {
        return new ProfilingCost(1.5, 2, 3);
    }

    /** Seconds to measure a workload whose iteration takes {@code iterationMillis}. */
    public double seconds(double iterationMillis) {
        Checks.argument(iterationMillis >= 0 && Double.isFinite(iterationMillis),
                "iteration time must be finite and >= 0: %s", iterationMillis);
        return overheadSeconds + ((double) warmupIterations + timedIterations) * iterationMillis / 1000;
    }

    /**
     * A prior for the iteration time of a workload before anything is measured: per executed layer the roofline
     * bound at a rough 25 GFLOP/s per thread and 8 GB/s, plus 10 µs of dispatch per pass, plus a ring all-reduce
     * of the parameters at 1 GB/s when training with several workers. Only good to a factor of a few — enough to
     * tell a 5 ms run from a 5 s one, which is what a budget needs; once some runs are measured, a fitted predictor
     * is the better prior.
     */
    public static double rooflineMillis(Workload w) {
        double seconds = 0;
        int passes = w.phase() == Phase.TRAIN ? 3 : 1;
        for (LayerFeatures lf : FeatureExtractor.of(w.graph()).extract(w.batch(), w.phase())) {
            if (lf.executes()) {
                seconds += Roofline.time(lf.flopsFwd() + lf.flopsBwd(), lf.bytesFwd() + lf.bytesBwd(),
                        PRIOR_FLOPS_PER_THREAD * w.threads(), PRIOR_BYTES_PER_SECOND)
                        + passes * PRIOR_DISPATCH_SECONDS * Math.max(1, lf.steps());
            }
        }
        if (w.phase() == Phase.TRAIN && w.worldSize() > 1) {
            double bytes = 4.0 * w.graph().parameterCount();
            seconds += 2.0 * (w.worldSize() - 1) / w.worldSize() * bytes / PRIOR_ALLREDUCE_BYTES_PER_SECOND;
        }
        return 1000 * seconds;
    }
}
