package org.scaledl.model.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.scaledl.Checks;
import org.scaledl.doe.BudgetedDesign;
import org.scaledl.doe.Design;
import org.scaledl.doe.FedorovExchange;
import org.scaledl.doe.RepresentativeDesign;
import org.scaledl.workload.Workload;

/**
 * Which workloads to profile: a D-optimal subset of candidates for a predictor's layer stage.
 *
 * <pre>{@code
 * ProfilingPlan plan = ProfilingPlan.choose(candidates, List.of(), 20, 1, LayerCost.host()::designRow);
 * ProfilingPlan gpu = ProfilingPlan.choose(candidates, List.of(), 8, 1, gpuPredictor::designRow);
 * plan.chosen();        // the workloads to measure
 * }</pre>
 *
 * <p>Each candidate becomes its design row: the columns the predictor's stage estimates (the host basis, or a
 * device predictor's per-family layer times on the candidate's GPU). Columns that are zero for every candidate are
 * dropped, the rest scaled to unit RMS, and each row divided by its L1 norm: the model is fitted on relative errors
 * ({@code x/y}), and before anything is measured the L1 norm of a scaled row stands in for its time. Fedorov's
 * exchange ({@link FedorovExchange}) then maximises {@code log det} of the chosen rows (with a small ridge, so plans
 * with fewer runs than columns are Bayesian D-optimal); {@link #representative} instead takes the rows' medoids, as
 * {@link #forCalibration} does for a calibration that moves one level. Measured times are never used.
 *
 * @param indices     chosen candidate indices, ascending
 * @param chosen      the chosen workloads, in index order
 * @param logDet      log det of the chosen (and fixed) rows' information matrix
 * @param dEfficiency D-efficiency against the whole candidate set
 */
public record ProfilingPlan(List<Integer> indices, List<Workload> chosen, double logDet, double dEfficiency) {
    private static final double RIDGE = 1e-6;

    /** Copies. */
    public ProfilingPlan {
        indices = List.copyOf(indices);
        chosen = List.copyOf(chosen);
    }

    /**
     * Chooses {@code runs} of the candidates given workloads already measured.
     *
     * @param candidates workloads that could be profiled
     * @param measured   workloads already profiled (they count, but are not chosen)
     * @param runs       how many to choose, 1 ≤ runs ≤ candidates
     * @param seed       seed of the exchange's random starts
     * @param designRow  a workload's design row (the predictor's {@code designRow}, or {@code LayerCost.host()}'s)
     */
    public static ProfilingPlan choose(List<Workload> candidates, List<Workload> measured, int runs, long seed,
            Function<Workload, double[]> designRow) {
        double[][][] x = rows(candidates, measured, runs, designRow);
        double[][] cand = x[0];
        double[][] fixed = x[1];
        Design d = new FedorovExchange(cand, runs).fixed(fixed).ridge(RIDGE).seed(seed).design();
        return of(d, candidates);
    }

    /**
     * Chooses, among the candidates, the D-optimal set whose measurement fits a budget of profiling time
     * ({@link BudgetedDesign}): as many runs as the budget buys, cheap ones preferred when they carry as much
     * information.
     *
     * @param candidates    workloads that could be profiled
     * @param measured      workloads already profiled (they count, cost nothing and are not chosen)
     * @param costSeconds   what measuring each candidate costs ({@link ProfilingCost#seconds})
     * @param budgetSeconds the most the chosen runs may cost together
     * @param seed          seed of the exchange's random starts
     * @param designRow     a workload's design row
     * @throws IllegalArgumentException if no candidate fits the budget
     */
    public static ProfilingPlan withinBudget(List<Workload> candidates, List<Workload> measured, double[] costSeconds,
            double budgetSeconds, long seed, Function<Workload, double[]> designRow) {
        Checks.argument(!java.util.Objects.requireNonNull(candidates, "candidates").isEmpty(), "no candidates");
        Checks.argument(java.util.Objects.requireNonNull(costSeconds, "costSeconds").length == candidates.size(),
                "%s costs for %s candidates", costSeconds.length,
                candidates.size());
        double[][][] x = split(designMatrix(candidates, measured, designRow), candidates.size());
        double[][] cand = x[0];
        double[][] fixed = x[1];
        Design d = new BudgetedDesign(cand, costSeconds, budgetSeconds).fixed(fixed).ridge(RIDGE).seed(seed).design();
        return of(d, candidates);
    }

    /**
     * Chooses the {@code runs} candidates that best represent all of them, given workloads already measured
     * ({@link RepresentativeDesign}, k-medoids over the normalised design rows, {@link #designMatrix}: the runs whose
     * share of time in each part of the iteration is nearest the other candidates'). Deterministic.
     *
     * @param candidates workloads that could be profiled
     * @param measured   workloads already profiled (a candidate near one is represented already; not chosen)
     * @param runs       how many to choose, 1 ≤ runs ≤ candidates
     * @param designRow  a workload's design row
     */
    public static ProfilingPlan representative(List<Workload> candidates, List<Workload> measured, int runs,
            Function<Workload, double[]> designRow) {
        double[][][] x = rows(candidates, measured, runs, designRow);
        double[][] cand = x[0];
        double[][] fixed = x[1];
        Design d = new RepresentativeDesign(cand, runs).fixed(fixed).ridge(RIDGE).design();
        return of(d, candidates);
    }

    /**
     * The runs to calibrate a cluster's model on: where they and the runs already measured are fewer than
     * {@link org.scaledl.model.exec.MegatronFit#TERM_RUNS}, the calibration moves one level (the cluster's speed over
     * every term), and the runs that tell it best are those most like the candidates ({@link #representative}: on
     * the published clusters, one and three such runs predicted the rest better than a D-optimal plan's, whose
     * extremes carry what the terms would estimate); from {@code TERM_RUNS} on, the terms are refitted too, and the
     * plan is D-optimal ({@link #choose}). Measured jobs count once each, however often measured.
     *
     * @param candidates workloads that could be profiled
     * @param measured   workloads already profiled (they count, but are not chosen)
     * @param runs       how many to choose, 1 ≤ runs ≤ candidates
     * @param seed       seed of a D-optimal plan's random starts
     * @param designRow  a workload's design row
     */
    public static ProfilingPlan forCalibration(List<Workload> candidates, List<Workload> measured, int runs, long seed,
            Function<Workload, double[]> designRow) {
        return calibrationJobs(runs, measured) < org.scaledl.model.exec.MegatronFit.TERM_RUNS
                ? representative(candidates, measured, runs, designRow)
                : choose(candidates, measured, runs, seed, designRow);
    }

    /**
     * The jobs a calibration on {@code runs} planned runs and the {@code measured} ones will have: the planned
     * runs, and the jobs measured, each once ({@link Workload#identity()}: a job measured twice tells the
     * calibration one level).
     */
    public static long calibrationJobs(int runs, List<Workload> measured) {
        return runs + java.util.Objects.requireNonNull(measured, "measured").stream().map(Workload::identity)
                .distinct().count();
    }

    /**
     * The candidates' and the measured workloads' design rows, for a plan of {@code runs} runs (refused outside
     * 1..candidates, or without candidates).
     */
    private static double[][][] rows(List<Workload> candidates, List<Workload> measured, int runs,
            Function<Workload, double[]> designRow) {
        Checks.argument(!java.util.Objects.requireNonNull(candidates, "candidates").isEmpty(), "no candidates");
        Checks.argument(runs >= 1 && runs <= candidates.size(), "runs must be in 1..%s, got %s",
                candidates.size(), runs);
        return split(designMatrix(candidates, measured, designRow), candidates.size());
    }

    /** The design rows split into the candidates' (the first {@code candidates}) and the measured workloads'. */
    private static double[][][] split(double[][] x, int candidates) {
        double[][] cand = new double[candidates][];
        double[][] fixed = new double[x.length - candidates][];
        System.arraycopy(x, 0, cand, 0, cand.length);
        System.arraycopy(x, cand.length, fixed, 0, fixed.length);
        return new double[][][] {cand, fixed};
    }

    /** A design's plan: its rows' workloads. */
    private static ProfilingPlan of(Design d, List<Workload> candidates) {
        List<Workload> chosen = new ArrayList<>();
        for (int i : d.chosen()) {
            chosen.add(candidates.get(i));
        }
        return new ProfilingPlan(d.chosen(), chosen, d.logDet(), d.dEfficiency());
    }

    /** The normalised design rows: candidates first, then measured workloads. */
    static double[][] designMatrix(List<Workload> candidates, List<Workload> measured,
            Function<Workload, double[]> designRow) {
        java.util.Objects.requireNonNull(candidates, "candidates");
        java.util.Objects.requireNonNull(measured, "measured");
        java.util.Objects.requireNonNull(designRow, "designRow");
        List<double[]> raw = new ArrayList<>();
        for (Workload w : candidates) {
            raw.add(designRow.apply(w));
        }
        for (Workload w : measured) {
            raw.add(designRow.apply(w));
        }
        for (int i = 0; i < raw.size(); i++) {
            for (double v : raw.get(i)) {
                // a NaN would drop its column for every row (its RMS is no number), silently
                Checks.argument(Double.isFinite(v), "the design row of %s %s has a non-finite value: %s",
                        i < candidates.size() ? "candidate" : "measured run", i < candidates.size() ? i
                                : i - candidates.size(), v);
            }
        }
        int width = raw.get(0).length;
        for (double[] r : raw) {
            Checks.argument(r.length == width, "design rows differ in width: %s and %s", width, r.length);
        }
        double[] rms = new double[width];
        for (double[] r : raw) {
            for (int j = 0; j < width; j++) {
                rms[j] += r[j] * r[j];
            }
        }
        List<Integer> keep = new ArrayList<>();
        for (int j = 0; j < width; j++) {
            if (rms[j] > 0) {
                rms[j] = Math.sqrt(rms[j] / raw.size());
                keep.add(j);
            }
        }
        double[][] out = new double[raw.size()][keep.size()];
        for (int i = 0; i < raw.size(); i++) {
            double l1 = 0;
            for (int k = 0; k < keep.size(); k++) {
                out[i][k] = raw.get(i)[keep.get(k)] / rms[keep.get(k)];
                l1 += Math.abs(out[i][k]);
            }
            for (int k = 0; k < keep.size() && l1 > 0; k++) {
                out[i][k] /= l1;
            }
        }
        return out;
    }
}
