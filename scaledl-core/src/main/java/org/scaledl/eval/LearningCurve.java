package org.scaledl.eval;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.function.IntBinaryOperator;
import java.util.function.ToDoubleFunction;
import org.scaledl.Checks;
import org.scaledl.model.plan.ProfilingCost;
import org.scaledl.model.plan.ProfilingPlan;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * Held-out accuracy against the <b>profiling seconds</b> spent on training data, for three ways of choosing what to
 * measure: D-optimal by runs ({@link ProfilingPlan#choose}), cost-aware D-optimal within a budget of seconds
 * ({@link ProfilingPlan#withinBudget}, candidates priced by a prior), and uniformly random runs (several subsets, with
 * their spread). Whole groups (families) are held out in each fold, so every point is on architectures that were
 * not profiled.
 *
 * <p>At fraction {@code f} of a fold's training grid: D-optimal by runs and random choose {@code f·N} runs; cost-aware
 * D-optimal chooses within {@code f} of the grid's <em>predicted</em> seconds. A point's seconds are what its chosen
 * runs actually cost ({@link ProfilingCost#seconds} of their measured times), averaged over folds; its MRE and RMSE
 * pool every held-out prediction. Models are fitted with a fixed shrinkage, so that small subsets are not
 * cross-validated on themselves.
 *
 * <pre>{@code
 * LearningCurve c = LearningCurve.builder().folds(10).randomSubsets(5).run(data.samples(), "family");
 * c.secondsTo(1.2, "d-optimal-cost");    // profiling seconds to reach 1.2x the full-data MRE
 * }</pre>
 *
 * @param methods     method name to its points, by increasing fraction
 * @param fullMre     MRE of the model fitted on every training run (the last point of every method)
 * @param gridSeconds what measuring every run costs (all samples, at their measured times)
 */
public record LearningCurve(Map<String, List<Point>> methods, double fullMre, double gridSeconds) {
    /** The host basis's design rows: the learning curve is that of the host predictor. */
    private static final java.util.function.Function<Workload, double[]> HOST_ROWS =
            org.scaledl.model.LayerCost.host()::designRow;

    /** D-optimal by runs. */
    public static final String D_OPTIMAL = "d-optimal";
    /** D-optimal within a budget of predicted seconds. */
    public static final String D_OPTIMAL_COST = "d-optimal-cost";
    /** Uniformly random runs. */
    public static final String RANDOM = "random";

    /** Copies. */
    public LearningCurve {
        Map<String, List<Point>> copy = new LinkedHashMap<>();
        methods.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        methods = Collections.unmodifiableMap(copy);
    }

    /**
     * One point of a curve.
     *
     * @param fraction share of the training grid (runs, or predicted seconds for the cost-aware method)
     * @param seconds  profiling seconds of the chosen runs, mean over folds
     * @param runs     chosen runs, mean over folds
     * @param mre      held-out mean relative error (for random: the mean over subsets)
     * @param rmseMs   held-out RMSE in ms (for random: the mean over subsets)
     * @param mreLow   lowest MRE over random subsets (equal to {@code mre} for the D-optimal methods)
     * @param mreHigh  highest MRE over random subsets (equal to {@code mre} for the D-optimal methods)
     */
    public record Point(double fraction, double seconds, double runs, double mre, double rmseMs, double mreLow,
            double mreHigh) {
    }

    /**
     * The seconds of the first point (by increasing seconds) whose MRE is at most {@code factor} times the full-data
     * MRE; empty if none is.
     */
    public Optional<Double> secondsTo(double factor, String method) {
        Checks.argument(methods.containsKey(method), "no method '%s'; known: %s", method, methods.keySet());
        List<Point> pts = new ArrayList<>(methods.get(method));
        pts.sort((a, b) -> Double.compare(a.seconds(), b.seconds()));
        for (Point p : pts) {
            if (p.mre() <= factor * fullMre) {
                return Optional.of(p.seconds());
            }
        }
        return Optional.empty();
    }

    /** A configuration with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a learning curve. */
    public static final class Builder {
        private List<Double> fractions = List.of(0.02, 0.03, 0.05, 0.07, 0.10, 0.15, 0.25, 0.50, 1.00);
        private int folds = 10;
        private int randomSubsets = 5;
        private ProfilingCost cost = ProfilingCost.standard();
        private ToDoubleFunction<Workload> priorMillis = ProfilingCost::rooflineMillis;
        private java.util.function.Function<List<Sample>, RuntimePredictor> trainer =
                RuntimePredictor.builder().shrinkage(1e-2).build()::fit;
        private java.util.function.Function<Workload, double[]> rows = HOST_ROWS;
        private boolean perDevice;

        private Builder() {
        }

        /** Shares of the training grid, increasing, the last 1 (default 2, 3, 5, 7, 10, 15, 25, 50, 100 %). */
        public Builder fractions(List<Double> value) {
            Checks.argument(!value.isEmpty() && value.get(value.size() - 1) == 1.0, "fractions must end with 1.0");
            for (int i = 0; i < value.size(); i++) {
                Checks.argument(value.get(i) > 0 && (i == 0 || value.get(i) > value.get(i - 1)),
                        "fractions must be positive and increasing: %s", value);
            }
            this.fractions = List.copyOf(value);
            return this;
        }

        /** At most this many folds of whole groups (default 10; 0 = leave one group out). */
        public Builder folds(int value) {
            Checks.argument(value == 0 || value >= 2, "folds must be 0 or >= 2: %s", value);
            this.folds = value;
            return this;
        }

        /** Random subsets per size (default 5). */
        public Builder randomSubsets(int value) {
            Checks.argument(value >= 1, "random subsets must be >= 1: %s", value);
            this.randomSubsets = value;
            return this;
        }

        /**
         * How a subset of runs becomes a predictor (default: the host predictor fitted on them with a fixed
         * shrinkage); for a device predictor, say, {@code runs -> base.calibrate(runs)}.
         */
        public Builder trainer(java.util.function.Function<List<Sample>, RuntimePredictor> value) {
            this.trainer = Objects.requireNonNull(value, "trainer");
            return this;
        }

        /** The design rows D-optimality is computed on (default the host basis's; a predictor's {@code designRow}). */
        public Builder rows(java.util.function.Function<Workload, double[]> value) {
            this.rows = Objects.requireNonNull(value, "rows");
            return this;
        }

        /**
         * Whether a run's cost counts every device it occupies (GPU-seconds: seconds times the job's ranks; default
         * false, machine seconds).
         */
        public Builder perDevice(boolean value) {
            this.perDevice = value;
            return this;
        }

        /** The cost of running a workload whose iteration takes {@code millis}, in (device-)seconds. */
        double seconds(Workload w, double millis) {
            return cost.seconds(millis) * (perDevice ? w.parallelism().ranks() : 1);
        }

        /** What a run costs (default {@link ProfilingCost#standard()}). */
        public Builder cost(ProfilingCost value) {
            this.cost = Objects.requireNonNull(value, "cost");
            return this;
        }

        /** The prior iteration time that prices candidates for the cost-aware plan (default the roofline prior). */
        public Builder prior(ToDoubleFunction<Workload> value) {
            this.priorMillis = Objects.requireNonNull(value, "prior");
            return this;
        }

        /** Runs every fold, silently. */
        public LearningCurve run(List<Sample> samples, String groupTag) {
            return run(samples, groupTag, (done, total) -> 0);
        }

        /**
         * Runs every fold.
         *
         * @param samples  measured samples
         * @param groupTag the tag whose groups are held out (e.g. {@code family})
         * @param listener told after each fold (done, total)
         */
        public LearningCurve run(List<Sample> samples, String groupTag, IntBinaryOperator listener) {
            Builder b = this;
            List<String> groups = Folds.groups(samples, Folds.byTagStrict(groupTag));
            List<Folds.Fold> folds = b.folds == 0 ? Folds.leaveOneGroupOut(groups) : Folds.groupFolds(groups, b.folds);
            Checks.argument(folds.size() >= 2, "need at least 2 groups of '%s', got %s", groupTag, folds.size());
            int k = b.fractions.size();
            Acc[] opt = new Acc[k];
            Acc[] cost = new Acc[k];
            Acc[][] rnd = new Acc[k][b.randomSubsets];
            for (int f = 0; f < k; f++) {
                opt[f] = new Acc();
                cost[f] = new Acc();
                for (int s = 0; s < b.randomSubsets; s++) {
                    rnd[f][s] = new Acc();
                }
            }
            double grid = 0;
            for (Sample s : samples) {
                grid += b.seconds(s.workload(), s.millis());
            }
            int done = 0;
            for (Folds.Fold fold : folds) {
                List<Sample> train = fold.train(samples);
                List<Sample> test = fold.test(samples);
                List<Workload> candidates = train.stream().map(Sample::workload).toList();
                double[] priced = new double[train.size()];
                double pricedGrid = 0;
                for (int i = 0; i < priced.length; i++) {
                    priced[i] = b.seconds(candidates.get(i), b.priorMillis.applyAsDouble(candidates.get(i)));
                    pricedGrid += priced[i];
                }
                double[] sorted = priced.clone();
                java.util.Arrays.sort(sorted);
                // As the by-runs arms choose at least two runs, the budget buys at least the two cheapest.
                double twoCheapest = sorted[0] + (sorted.length > 1 ? sorted[1] : 0);
                for (int f = 0; f < k; f++) {
                    double frac = b.fractions.get(f);
                    int n = Math.max(2, (int) Math.round(frac * train.size()));
                    List<Integer> byRuns = n >= train.size() ? all(train.size())
                            : ProfilingPlan.choose(candidates, List.of(), n, 1, b.rows).indices();
                    opt[f].add(train, byRuns, test, b, folds.size());
                    List<Integer> byCost = frac >= 1 ? all(train.size())
                            : ProfilingPlan.withinBudget(candidates, List.of(), priced,
                                    Math.max(frac * pricedGrid, twoCheapest), 1, b.rows).indices();
                    cost[f].add(train, byCost, test, b, folds.size());
                    for (int s = 0; s < b.randomSubsets; s++) {
                        List<Integer> order = all(train.size());
                        Collections.shuffle(order, new Random(1000L * s + fold.group().hashCode()));
                        rnd[f][s].add(train, order.subList(0, Math.min(n, train.size())), test, b, folds.size());
                    }
                }
                listener.applyAsInt(++done, folds.size());
            }
            Map<String, List<Point>> out = new LinkedHashMap<>();
            List<Point> a = new ArrayList<>();
            List<Point> c = new ArrayList<>();
            List<Point> r = new ArrayList<>();
            for (int f = 0; f < k; f++) {
                double frac = b.fractions.get(f);
                a.add(opt[f].point(frac));
                c.add(cost[f].point(frac));
                double mre = 0;
                double rmse = 0;
                double lo = Double.POSITIVE_INFINITY;
                double hi = 0;
                double sec = 0;
                double runs = 0;
                for (Acc acc : rnd[f]) {
                    Point p = acc.point(frac);
                    mre += p.mre() / b.randomSubsets;
                    rmse += p.rmseMs() / b.randomSubsets;
                    sec += p.seconds() / b.randomSubsets;
                    runs += p.runs() / b.randomSubsets;
                    lo = Math.min(lo, p.mre());
                    hi = Math.max(hi, p.mre());
                }
                r.add(new Point(frac, sec, runs, mre, rmse, lo, hi));
            }
            out.put(D_OPTIMAL, a);
            out.put(D_OPTIMAL_COST, c);
            out.put(RANDOM, r);
            return new LearningCurve(out, a.get(k - 1).mre(), grid);
        }
    }

    private static List<Integer> all(int n) {
        List<Integer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }

    /** Pooled held-out errors and mean chosen cost of one method at one fraction. */
    private static final class Acc {
        private double rel;
        private double sq;
        private int n;
        private double seconds;
        private double runs;

        void add(List<Sample> train, List<Integer> chosen, List<Sample> test, Builder b, int folds) {
            List<Sample> picked = new ArrayList<>(chosen.size());
            for (int i : chosen) {
                picked.add(train.get(i));
                seconds += b.seconds(train.get(i).workload(), train.get(i).millis()) / folds;
            }
            runs += (double) chosen.size() / folds;
            RuntimePredictor p = b.trainer.apply(picked);
            for (Sample s : test) {
                double pred = p.predictMillis(s.workload());
                rel += Math.abs(pred - s.millis()) / s.millis();
                sq += (pred - s.millis()) * (pred - s.millis());
                n++;
            }
        }

        Point point(double fraction) {
            double mre = rel / n;
            return new Point(fraction, seconds, runs, mre, Math.sqrt(sq / n), mre, mre);
        }
    }
}
