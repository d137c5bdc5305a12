package org.scaledl.eval;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.scaledl.Checks;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Device;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * Few-shot machine adaptation, measured: a host predictor fitted on one machine's runs is calibrated with
 * {@code k} runs of another machine ({@link RuntimePredictor#calibrate}) and scored on the target's runs of the
 * families those {@code k} runs do not include. {@code k = 0} predicts the target with the source machine's model as
 * it is. The reference is a predictor fitted on the target machine's own data, scored leave-one-family-out (every
 * family predicted by a fit without it): what full profiling of the target buys.
 *
 * <pre>{@code
 * MachineTransfer.Report r = MachineTransfer.run(ddp.samples(), zoo.samples(), new int[] {0, 3, 10, 30}, 5, 7);
 * r.points().get(2).mre();     // k = 10
 * }</pre>
 */
public final class MachineTransfer {
    private MachineTransfer() {
    }

    /**
     * One number of runs.
     *
     * @param k       target runs measured
     * @param mre     mean over the repeats of the MRE on the unmeasured families (the repeats that left a family
     *                unmeasured; NaN, like the other figures, where every choice measured them all)
     * @param mreSd   its standard deviation over the repeats
     * @param scored  target runs scored per repeat (mean over the repeats that scored any; NaN where none did)
     * @param mreBefore the same runs predicted by the source machine's model as it is (k = 0), mean over repeats
     * @param referenceMre the same runs predicted by the reference (fitted on the target's other families)
     * @param choices the repeats (random choices of the {@code k} runs) that left a family to score, of which the
     *                figures are the mean
     */
    public record Point(int k, double mre, double mreSd, double scored, double mreBefore, double referenceMre,
            int choices) {
    }

    /**
     * The measurements of one direction.
     *
     * @param source       the source machine
     * @param target       the target machine
     * @param points       one per {@code k}
     * @param referenceMre leave-one-family-out MRE of a predictor fitted on the target's own data
     */
    public record Report(String source, String target, List<Point> points, double referenceMre) {
        /** Copies. */
        public Report {
            points = List.copyOf(points);
        }
    }

    /**
     * Measures one direction.
     *
     * @param source  runs of the source machine (their workloads name it)
     * @param target  runs of the target machine (their workloads name it)
     * @param ks      the numbers of target runs to calibrate on
     * @param repeats random choices of the {@code k} runs per {@code k} (seeded)
     * @param seed    seeds the choices
     * @throws IllegalArgumentException for empty data or a sample without a machine
     */
    public static Report run(List<Sample> source, List<Sample> target, int[] ks, int repeats, long seed) {
        return run(source, target, ks, repeats, seed, Evaluation.Listener.none());
    }

    /** As {@link #run(List, List, int[], int, long)}, reporting each fit. */
    public static Report run(List<Sample> source, List<Sample> target, int[] ks, int repeats, long seed,
            Evaluation.Listener listener) {
        Checks.argument(!source.isEmpty(), "need runs of both machines");
        Checks.argument(repeats > 0 && repeats <= MAX_REPEATS, "repeats must be in 1..%s: %s", MAX_REPEATS, repeats);
        // checked before the first fit, not after the minutes it takes
        checkKs(target, ks);
        Device src = machine(source.get(0));
        Device dst = machine(target.get(0));
        int total = 2 + ks.length * repeats;
        int done = 0;
        RuntimePredictor fitted = RuntimePredictor.fit(source);
        listener.fitted("source", src.name(), ++done, total);
        Evaluation reference = Evaluation.crossValidate(List.of(RuntimePredictor.builder().build()), target,
                "family");
        listener.fitted("reference", dst.name(), ++done, total);
        // the reference's prediction of every target run, in target order
        java.util.Map<Sample, Evaluation.Row> byTarget = new java.util.IdentityHashMap<>();
        reference.predictions().forEach(row -> byTarget.put(row.sample(), row));
        List<Evaluation.Row> referenceRows = target.stream().map(byTarget::get).toList();
        List<Point> points = new ArrayList<>();
        for (int k : ks) {
            double[] mres = new double[k == 0 ? 1 : repeats];
            double[] before = new double[mres.length];
            double[] ref = new double[mres.length];
            double scored = 0;
            for (int rep = 0; rep < mres.length; rep++) {
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < target.size(); i++) {
                    order.add(i);
                }
                Collections.shuffle(order, new Random(seed * 1000003L + 31L * k + rep));
                List<Sample> measured = new ArrayList<>();
                Set<String> families = new HashSet<>();
                for (int i : order.subList(0, k)) {
                    measured.add(target.get(i));
                    families.add(target.get(i).workload().tag("family").orElse(""));
                }
                RuntimePredictor p = k == 0 ? fitted : fitted.calibrate(measured);
                List<double[]> pairs = new ArrayList<>();
                for (int i = 0; i < target.size(); i++) {
                    Sample s = target.get(i);
                    if (families.contains(s.workload().tag("family").orElse(""))) {
                        continue;
                    }
                    Workload w = k == 0 ? s.workload().toBuilder().device(src).build() : s.workload();
                    pairs.add(new double[] {p.predictMillis(w), s.millis(),
                        fitted.predictMillis(s.workload().toBuilder().device(src).build()),
                        referenceRows.get(i).prediction().millis()});
                }
                if (pairs.isEmpty()) {
                    // this choice measured a run of every family: nothing unmeasured to score (left out of the mean)
                    mres[rep] = before[rep] = ref[rep] = Double.NaN;
                } else {
                    double[] measuredMs = pairs.stream().mapToDouble(x -> x[1]).toArray();
                    mres[rep] = ErrorMetrics.of(pairs.stream().mapToDouble(x -> x[0]).toArray(), measuredMs).mre();
                    before[rep] = ErrorMetrics.of(pairs.stream().mapToDouble(x -> x[2]).toArray(), measuredMs).mre();
                    ref[rep] = ErrorMetrics.of(pairs.stream().mapToDouble(x -> x[3]).toArray(), measuredMs).mre();
                }
                scored += pairs.size();
                if (k > 0) {
                    listener.fitted("k=" + k, "repeat " + rep, ++done, total);
                }
            }
            // the choices that left a family to score; none (NaN figures) where every choice measured them all
            double mean = meanOfScored(mres);
            double sd = Math.sqrt(meanOfScored(java.util.Arrays.stream(mres).map(m -> (m - mean) * (m - mean))
                    .toArray()));
            int kept = (int) java.util.Arrays.stream(mres).filter(m -> !Double.isNaN(m)).count();
            points.add(new Point(k, mean, sd, kept == 0 ? Double.NaN : scored / kept, meanOfScored(before),
                    meanOfScored(ref),
                    kept));
            if (k == 0) {
                done += repeats - 1;
                listener.fitted("k=0", "", ++done, total);
            }
        }
        return new Report(src.name(), dst.name(), points, reference.metrics().values().iterator().next().mre());
    }

    /** The mean of the figures of the choices that scored (NaN: a choice that left no family to score). */
    private static double meanOfScored(double[] figures) {
        return java.util.Arrays.stream(figures).filter(m -> !Double.isNaN(m)).average().orElse(Double.NaN);
    }

    /** The most random choices of the {@code k} runs per {@code k}. */
    public static final int MAX_REPEATS = 1000;

    /**
     * Refuses numbers of target runs to calibrate on that no choice can score: below 0, given twice, or so many that
     * every choice measures a run of every family (more than the target's runs less its smallest family's).
     *
     * @throws IllegalArgumentException naming the target's machine and the largest {@code k} it takes
     */
    public static void checkKs(List<Sample> target, int[] ks) {
        Checks.argument(!target.isEmpty(), "need runs of both machines");
        java.util.Map<String, Integer> families = new java.util.HashMap<>();
        target.forEach(s -> families.merge(s.workload().tag("family").orElse(""), 1, Integer::sum));
        int most = target.size() - java.util.Collections.min(families.values());
        String name = target.get(0).workload().device().map(Device::name).orElse("the target");
        for (int i = 0; i < ks.length; i++) {
            int k = ks[i];
            Checks.argument(k >= 0 && k <= most, "k must be in 0..%s for %s (%s runs, its smallest family %s: a "
                    + "larger k measures every family, leaving none to score): %s", most, name, target.size(),
                    target.size() - most, k);
            for (int j = 0; j < i; j++) {
                Checks.argument(ks[j] != k, "k %s is given twice", k);
            }
        }
    }

    private static Device machine(Sample s) {
        return s.workload().device().orElseThrow(() -> new IllegalArgumentException("the runs must name their "
                + "machine (a dataset with machine.json): " + s.workload()));
    }
}
