package org.scaledl.eval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.scaledl.Checks;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Sample;

/**
 * How the Megatron execution model extrapolates, the way a planner needs it to: fitted on some of the runs of
 * configuration-built transformers ({@link RuntimePredictor#calibrate} of a device predictor without Megatron
 * coefficients, which is what {@code fit --gpu} does on all of them) and scored on the others, split by what a
 * cluster job changes: each model held out, few GPUs to more, one hidden size to the other, each depth held out.
 *
 * <p>The runs must carry the tags {@code family} (the model), {@code gpus}, {@code hidden} and {@code layers}, as
 * {@link org.scaledl.io.GpuData#readVTrain} gives them; a split whose tag has fewer than two values is left out.
 *
 * <pre>{@code
 * MegatronEvaluation e = MegatronEvaluation.run(deviceOnly, data.megatronRuns());
 * e.splits().forEach(s -> System.out.println(s.name() + " " + s.mre()));
 * e.predictions().forEach(r -> System.out.println(r.split() + " " + r.error()));
 * }</pre>
 *
 * @param splits      the splits, in the order above, the fit's own errors first
 * @param predictions every scored run's prediction, split by split ({@link Scored#split}: {@code in_sample},
 *                    {@code model}, {@code fewer_gpus}, {@code hidden_H}, {@code layers})
 */
public record MegatronEvaluation(List<Split> splits, List<Scored> predictions) {
    /** Copies. */
    public MegatronEvaluation {
        splits = List.copyOf(splits);
        predictions = List.copyOf(predictions);
    }

    /** The splits without their runs' predictions. */
    public MegatronEvaluation(List<Split> splits) {
        this(splits, List.of());
    }

    /**
     * One scored run.
     *
     * @param split     the split's key
     * @param run       the measured run
     * @param predicted its predicted time, ms, by the fit that did not see it (in sample: that saw every run)
     */
    public record Scored(String split, Sample run, double predicted) {
        /** The relative error, {@code predicted / measured − 1} (positive: predicted too slow). */
        public double error() {
            return predicted / run.millis() - 1;
        }
    }

    /**
     * One split's held-out relative errors.
     *
     * @param name      what was held out
     * @param trainRuns runs fitted on (for pooled leave-one-group-out splits, the mean over folds)
     * @param testRuns  runs scored
     * @param mre       mean |predicted / measured − 1|
     * @param median    its median
     * @param p90       its 90th percentile
     * @param max       its largest
     * @param bias      mean signed relative error (positive: over-predicted)
     */
    public record Split(String name, double trainRuns, int testRuns, double mre, double median, double p90,
            double max, double bias) {
    }

    /**
     * Runs every split.
     *
     * @param base a device predictor whose Megatron coefficients the runs fit ({@code calibrate})
     * @param runs measured runs of configuration-built transformers, tagged as the class says
     */
    public static MegatronEvaluation run(RuntimePredictor base, List<Sample> runs) {
        Checks.argument(!runs.isEmpty(), "no runs to evaluate");
        List<Split> out = new ArrayList<>();
        List<Scored> scored = new ArrayList<>();
        RuntimePredictor all = base.calibrate(runs);
        out.add(score("fitted on all runs (in sample)", "in_sample", runs.size(), runs, all, scored));
        groups(out, scored, "each model held out", "model", base, runs, "family");
        Map<String, List<Sample>> byGpus = by(runs, "gpus");
        if (byGpus.size() >= 2) {
            int most = byGpus.keySet().stream().mapToInt(Integer::parseInt).max().orElseThrow();
            String m = Integer.toString(most);
            out.add(split("fewer GPUs -> " + most + " GPUs", "fewer_gpus", base, runs,
                    s -> !tag(s, "gpus").equals(m), scored));
        }
        Map<String, List<Sample>> byHidden = by(runs, "hidden");
        if (byHidden.size() >= 2) {
            for (String h : byHidden.keySet()) {
                out.add(split("other hidden sizes -> hidden " + h, "hidden_" + h, base, runs,
                        s -> !tag(s, "hidden").equals(h), scored));
            }
        }
        groups(out, scored, "each layer count held out", "layers", base, runs, "layers");
        return new MegatronEvaluation(out, scored);
    }

    private static void groups(List<Split> out, List<Scored> scored, String name, String key, RuntimePredictor base,
            List<Sample> runs, String tag) {
        Map<String, List<Sample>> groups = by(runs, tag);
        if (groups.size() < 2) {
            return;
        }
        List<Double> errors = new ArrayList<>();
        double train = 0;
        for (String g : groups.keySet()) {
            List<Sample> fit = runs.stream().filter(s -> !tag(s, tag).equals(g)).toList();
            RuntimePredictor p = base.calibrate(fit);
            train += (double) fit.size() / groups.size();
            for (Sample s : groups.get(g)) {
                Scored one = new Scored(key, s, p.predictMillis(s.workload()));
                scored.add(one);
                errors.add(one.error());
            }
        }
        out.add(summary(name + " (" + groups.size() + " folds)", train, errors));
    }

    private static Split split(String name, String key, RuntimePredictor base, List<Sample> runs,
            Predicate<Sample> train, List<Scored> scored) {
        List<Sample> fit = runs.stream().filter(train).toList();
        List<Sample> test = runs.stream().filter(train.negate()).toList();
        return score(name, key, fit.size(), test, base.calibrate(fit), scored);
    }

    private static Split score(String name, String key, double train, List<Sample> test, RuntimePredictor p,
            List<Scored> scored) {
        List<Double> errors = new ArrayList<>();
        for (Sample s : test) {
            Scored one = new Scored(key, s, p.predictMillis(s.workload()));
            scored.add(one);
            errors.add(one.error());
        }
        return summary(name, train, errors);
    }

    private static Split summary(String name, double train, List<Double> errors) {
        double[] abs = errors.stream().mapToDouble(Math::abs).sorted().toArray();
        int n = abs.length;
        return new Split(name, train, n, Arrays.stream(abs).average().orElse(Double.NaN), abs[n / 2],
                abs[Math.min(n - 1, (int) (0.9 * n))], abs[n - 1],
                errors.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
    }

    private static Map<String, List<Sample>> by(List<Sample> runs, String tag) {
        Map<String, List<Sample>> out = new TreeMap<>();
        for (Sample s : runs) {
            s.workload().tag(tag).ifPresent(v -> out.computeIfAbsent(v, k -> new ArrayList<>()).add(s));
        }
        return out;
    }

    private static String tag(Sample s, String tag) {
        return s.workload().tag(tag).orElse("");
    }
}
