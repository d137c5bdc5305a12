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
     * @param mre     mean over the repeats of the MRE on the unmeasured families
     * @param mreSd   its standard deviation over the repeats
     * @param scored  target runs scored per repeat (mean)
     * @param mreBefore the same runs predicted by the source machine's model as it is (k = 0), mean over repeats
     * @param referenceMre the same runs predicted by the reference (fitted on the target's other families)
     */
    public record Point(int k, double mre, double mreSd, double scored, double mreBefore, double referenceMre) {
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
        Checks.argument(!source.isEmpty() && !target.isEmpty(), "need runs of both machines");
        Checks.argument(repeats > 0, "repeats must be positive: %s", repeats);
        // checked before the first fit, not after the minutes it takes
        for (int i = 0; i < ks.length; i++) {
            int k = ks[i];
            Checks.argument(k >= 0 && k < target.size(), "k must be in 0..%s: %s", target.size() - 1, k);
            for (int j = 0; j < i; j++) {
                Checks.argument(ks[j] != k, "k %s is given twice", k);
            }
        }
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
            Checks.argument(k >= 0 && k < target.size(), "k must be in 0..%s: %s", target.size() - 1, k);
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
                double[] measuredMs = pairs.stream().mapToDouble(x -> x[1]).toArray();
                mres[rep] = ErrorMetrics.of(pairs.stream().mapToDouble(x -> x[0]).toArray(), measuredMs).mre();
                before[rep] = ErrorMetrics.of(pairs.stream().mapToDouble(x -> x[2]).toArray(), measuredMs).mre();
                ref[rep] = ErrorMetrics.of(pairs.stream().mapToDouble(x -> x[3]).toArray(), measuredMs).mre();
                scored += pairs.size();
                if (k > 0) {
                    listener.fitted("k=" + k, "repeat " + rep, ++done, total);
                }
            }
            double mean = java.util.Arrays.stream(mres).average().orElse(Double.NaN);
            double sd = Math.sqrt(java.util.Arrays.stream(mres).map(m -> (m - mean) * (m - mean)).average()
                    .orElse(0));
            points.add(new Point(k, mean, sd, scored / mres.length, java.util.Arrays.stream(before).average()
                    .orElse(Double.NaN), java.util.Arrays.stream(ref).average().orElse(Double.NaN)));
            if (k == 0) {
                done += repeats - 1;
                listener.fitted("k=0", "", ++done, total);
            }
        }
        return new Report(src.name(), dst.name(), points, reference.metrics().values().iterator().next().mre());
    }

    private static Device machine(Sample s) {
        return s.workload().device().orElseThrow(() -> new IllegalArgumentException("the runs must name their "
                + "machine (a dataset with machine.json): " + s.workload()));
    }
}
