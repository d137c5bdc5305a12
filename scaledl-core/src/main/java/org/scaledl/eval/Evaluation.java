package org.scaledl.eval;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.scaledl.Checks;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimeModel;
import org.scaledl.model.RuntimeTrainer;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Sample;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Held-out evaluation of several methods on the same split, through the same code path.
 *
 * <pre>{@code
 * Evaluation e = Evaluation.crossValidate(methods, dataset.samples(), "family");
 * e.metrics().get("scaledl").mre();
 * }</pre>
 *
 * <p>{@link #holdout} fits every method on the training samples and predicts the test samples;
 * {@link #crossValidate} leaves each group (value of a workload tag, e.g. {@code family}) out in turn, so every
 * prediction comes from a model that never saw that group. Nothing about test samples reaches any fit.
 *
 * @param methods     method names, in the order given
 * @param predictions every prediction, method by method, in test-sample order
 * @param metrics     per method, over all predictions
 * @param perModel    per method, then per value of the {@code model} tag
 */
public record Evaluation(List<String> methods, List<Row> predictions, Map<String, ErrorMetrics> metrics,
        Map<String, Map<String, ErrorMetrics>> perModel) {
    private static final Logger LOG = LoggerFactory.getLogger(Evaluation.class);

    /**
     * One prediction of one method for one test sample.
     *
     * @param method     method name
     * @param sample     the test sample (with its measured time)
     * @param fold       the held-out group or {@code holdout}
     * @param prediction the prediction
     */
    public record Row(String method, Sample sample, String fold, Prediction prediction) {
    }

    /** Copies. */
    public Evaluation {
        methods = List.copyOf(methods);
        predictions = List.copyOf(predictions);
        metrics = Collections.unmodifiableMap(new LinkedHashMap<>(metrics));
        perModel = Collections.unmodifiableMap(new LinkedHashMap<>(perModel));
    }

    /** Fits every method on {@code train} and predicts {@code test}. */
    public static Evaluation holdout(List<RuntimeTrainer> methods, List<Sample> train, List<Sample> test) {
        Checks.argument(!test.isEmpty(), "no test samples");
        List<Row> rows = new ArrayList<>();
        for (RuntimeTrainer m : methods) {
            RuntimeModel fitted = m.fit(train);
            for (Sample s : test) {
                rows.add(new Row(m.name(), s, "holdout", fitted.predict(s.workload())));
            }
        }
        return summarise(methods, rows);
    }

    /** Called after each fit of an evaluation, so a caller can show progress (fits done of the total). */
    @FunctionalInterface
    public interface Listener {
        /**
         * One fit and its predictions are done.
         *
         * @param method the method
         * @param fold   the held-out group
         * @param done   fits done so far
         * @param total  fits in all
         */
        void fitted(String method, String fold, int done, int total);

        /** A listener that does nothing. */
        static Listener none() {
            return (m, f, d, t) -> { };
        }
    }

    /** Leave-one-group-out cross-validation over the values of {@code groupTag} ({@link Folds}). */
    public static Evaluation crossValidate(List<RuntimeTrainer> methods, List<Sample> samples, String groupTag) {
        return crossValidate(methods, samples, groupTag, Listener.none());
    }

    /** Leave-one-group-out cross-validation, reporting each fit to {@code listener}. */
    public static Evaluation crossValidate(List<RuntimeTrainer> methods, List<Sample> samples, String groupTag,
            Listener listener) {
        return crossValidate(methods, samples, groupTag, 0, listener);
    }

    /**
     * Cross-validation over whole groups of {@code groupTag} in at most {@code maxFolds} folds
     * ({@link Folds#groupFolds}: every fold holds several whole groups out), or leave-one-group-out when
     * {@code maxFolds} is 0. Fewer folds are for slow methods; the figures are then of a model fitted on fewer groups.
     */
    public static Evaluation crossValidate(List<RuntimeTrainer> methods, List<Sample> samples, String groupTag,
            int maxFolds, Listener listener) {
        Checks.argument(maxFolds == 0 || maxFolds >= 2, "folds must be 0 (leave one group out) or >= 2: %s",
                maxFolds);
        List<Folds.Fold> folds = maxFolds == 0 ? Folds.leaveOneGroupOut(samples, Folds.byTagStrict(groupTag))
                : Folds.groupFolds(Folds.groups(samples, Folds.byTagStrict(groupTag)), maxFolds);
        Checks.argument(folds.size() >= 2, "need at least 2 groups of '%s' to cross-validate, got %s",
                groupTag, folds.size());
        List<Row> rows = new ArrayList<>();
        int total = methods.size() * folds.size();
        int done = 0;
        for (RuntimeTrainer m : methods) {
            for (Folds.Fold f : folds) {
                List<Sample> train = f.train(samples);
                List<Sample> test = f.test(samples);
                LOG.debug("{}: fold {} ({} train, {} test)", m.name(), f.group(), train.size(), test.size());
                RuntimeModel fitted = m.fit(train);
                for (Sample s : test) {
                    rows.add(new Row(m.name(), s, f.group(), fitted.predict(s.workload())));
                }
                listener.fitted(m.name(), f.group(), ++done, total);
            }
        }
        return summarise(methods, rows);
    }

    private static Evaluation summarise(List<RuntimeTrainer> methods, List<Row> rows) {
        List<String> names = methods.stream().map(RuntimeTrainer::name).toList();
        Map<String, ErrorMetrics> metrics = new LinkedHashMap<>();
        Map<String, Map<String, ErrorMetrics>> perModel = new LinkedHashMap<>();
        for (String m : names) {
            List<Row> mine = rows.stream().filter(r -> r.method().equals(m)).toList();
            metrics.put(m, of(mine));
            Map<String, List<Row>> byModel = new LinkedHashMap<>();
            for (Row r : mine) {
                byModel.computeIfAbsent(r.sample().workload().tag("model").orElse(r.sample().workload().graph()
                        .name()), k -> new ArrayList<>()).add(r);
            }
            Map<String, ErrorMetrics> pm = new LinkedHashMap<>();
            byModel.forEach((k, v) -> pm.put(k, of(v)));
            perModel.put(m, pm);
        }
        return new Evaluation(names, rows, metrics, perModel);
    }

    private static ErrorMetrics of(List<Row> rows) {
        double[] p = rows.stream().mapToDouble(r -> r.prediction().millis()).toArray();
        double[] a = rows.stream().mapToDouble(r -> r.sample().millis()).toArray();
        return ErrorMetrics.of(p, a);
    }
}
