package org.scaledl.model.host;

import org.scaledl.model.cost.StageCost;
import org.scaledl.model.cost.Nnls;
import org.scaledl.model.cost.Quantiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.scaledl.io.DatasetReader;
import org.scaledl.workload.Folds;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host layer cost model: each layer's time is a non-negative combination of the nonlinear basis of
 * {@link LayerBasis} (one coefficient block per {@link OpFamily}), plus the workload-level terms (overhead,
 * optimizer, ring all-reduce, contention), fitted from whole-iteration times.
 *
 * <p><b>Fit.</b> Every training workload becomes its design row {@code x}; the coefficients {@code θ ≥ 0} minimise
 * the squared <em>relative</em> error {@code Σ ((x·θ − y)/y)²} (iteratively reweighted toward the mean absolute
 * relative error) plus a hierarchical shrinkage penalty {@code λ Σ_f ||θ_f − θ_0||²} that pulls each family's
 * coefficients toward a shared centre {@code θ_0} (columns scaled to unit size first). Families with little data
 * borrow strength from the others, and a family never seen in training is predicted with {@code θ_0}. The problem
 * is a non-negative least-squares problem, solved exactly (Lawson–Hanson). {@code λ} is chosen by
 * leave-one-group-out cross-validation inside the training data ({@link Folds}), whose out-of-group errors also
 * calibrate the prediction interval (with more than {@value #INNER_FOLDS} groups, {@value #INNER_FOLDS} folds of
 * whole groups). Nothing is random.
 *
 * <p><b>Runs no model explains.</b> A measured time off by a factor of a thousand (milliseconds written as
 * microseconds, a run that failed) would pull every coefficient toward it. After the fit, each run's in-sample
 * log-ratio is compared with the others': a run more than {@code max(}{@value #OUTLIER_MADS}{@code  · MAD, log 5)}
 * from their median (MAD: the median absolute deviation; at least a factor of 5 off) is left out, logged with where it
 * was read, and the fit repeated without it ({@link Fit#outliers()}). A run whose time is too <em>small</em> also
 * distorts the fit toward itself (a relative error divides by it), so the log-ratios compared are those of a screening
 * fit in which every run weighs at most as much as one of ordinary size (its relative design row at most
 * {@value #LEVERAGE_CAP} times the median row's length); on data without such runs that is the fit itself. On the
 * bundled datasets no run is left out, in the full fits or in any fit that leaves one family out (the largest
 * deviations there: 7.5 MADs and a factor of 3.2). A fit of three to nine runs, whose spread says little, leaves out
 * only a run its screening fit leaves more than a factor of 100 from the median (a fit of as many terms as runs
 * absorbs a slip whole, and leaves nothing out).
 */
public final class HostLayerModel {
    private static final Logger LOG = LoggerFactory.getLogger(HostLayerModel.class);
    static final double[] LAMBDA_GRID = {1e-4, 1e-3, 1e-2, 1e-1, 1};
    /** The shrinkage used when it cannot be cross-validated (fewer than three groups). */
    public static final double DEFAULT_SHRINKAGE = 1e-2;
    /**
     * Folds of the inner cross-validation: leave one group out up to this many groups, then this many folds of
     * whole groups (the cost of choosing the shrinkage stays bounded with sixty families).
     */
    static final int INNER_FOLDS = 10;
    private static final double RIDGE = 1e-9;
    private static final int IRLS_STEPS = 4;
    private static final double IRLS_FLOOR = 0.03;

    /** The breakdown entries the workload-level terms are reported under. */
    private enum TermGroup {
        OVERHEAD("overhead", StageCost.TermKind.OVERHEAD),
        OPTIMIZER("optimizer", StageCost.TermKind.OVERHEAD),
        ALLREDUCE("allreduce", StageCost.TermKind.COMMUNICATION),
        CONTENTION("contention", StageCost.TermKind.OVERHEAD);

        final String label;
        final StageCost.TermKind kind;

        TermGroup(String label, StageCost.TermKind kind) {
            this.label = label;
            this.kind = kind;
        }
    }

    /** The group of each of {@link LayerBasis#GLOBAL_TERMS}, in order. */
    private static final TermGroup[] GLOBAL_GROUP = {TermGroup.OVERHEAD, TermGroup.OVERHEAD, TermGroup.OPTIMIZER,
        TermGroup.OPTIMIZER, TermGroup.ALLREDUCE, TermGroup.ALLREDUCE, TermGroup.CONTENTION, TermGroup.CONTENTION,
        TermGroup.ALLREDUCE};

    private final LayerBasis basis;
    private final double[] theta;
    private final double lambda;

    public HostLayerModel(LayerBasis basis, double[] theta, double lambda) {
        this.basis = basis;
        this.theta = theta;
        this.lambda = lambda;
    }

    /**
     * A fitted stage with what its fit learnt about its own error.
     *
     * @param model     the stage
     * @param logErrors log(prediction / measurement) per sample kept: out-of-group when cross-validated, else
     *                  in-sample
     * @param cvMre     the out-of-group MRE of the chosen shrinkage (NaN when not cross-validated)
     * @param outliers  the samples left out as ones no model explains (see {@link HostLayerModel}), in sample order
     */
    public record Fit(HostLayerModel model, double[] logErrors, double cvMre, List<Sample> outliers) {
        /** Copies. */
        public Fit {
            outliers = List.copyOf(outliers);
        }
    }

    /**
     * Fits; the shrinkage is the given one, or chosen by leave-one-group-out cross-validation when there are at
     * least three groups. Samples no model explains are left out and the fit repeated without them (see the class
     * documentation).
     *
     * @throws IllegalArgumentException for a sample whose measured time is too small or too large to fit (its
     *         relative design row is not finite)
     */
    public static Fit fit(List<Sample> samples, Optional<Double> shrinkage, String groupTag, double layerShare) {
        // a run a hundred times off its graph's runs (a unit typed wrong) is screened out before the screening
        // fit: on few runs, one run a thousand times too fast pulls that fit to itself, which then leaves out the
        // runs that are right
        double[] peers = peerRatios(samples);
        List<Sample> screened = new ArrayList<>();
        int[] at = new int[samples.size()];
        for (int i = 0; i < samples.size(); i++) {
            at[i] = Math.abs(peers[i]) > FEW_RUNS_FLOOR ? -1 : screened.size();
            if (at[i] >= 0) {
                screened.add(samples.get(i));
            }
        }
        if (screened.size() < 2) {
            // (too few runs left to fit: the screen says nothing)
            screened = samples;
            for (int i = 0; i < at.length; i++) {
                at[i] = i;
            }
        }
        Once first = fitOnce(screened, shrinkage, groupTag, layerShare);
        boolean[] screenedOut = outliers(first.screening());
        List<Sample> kept = new ArrayList<>();
        List<Sample> left = new ArrayList<>();
        for (int i = 0; i < samples.size(); i++) {
            (at[i] < 0 || screenedOut[at[i]] ? left : kept).add(samples.get(i));
        }
        if (left.isEmpty() || kept.size() < 2) {
            return new Fit(first.model(), first.logErrors(), first.cvMre(), List.of());
        }
        for (int i = 0; i < samples.size(); i++) {
            Workload w = samples.get(i).workload();
            String where = w.tag(DatasetReader.SOURCE_TAG).orElse("run " + w.tag("row").orElse(Integer.toString(i)));
            if (at[i] < 0) {
                LOG.warn("{}: left out of the fit: measured {} ms, {} times {} a sample than the median of its "
                        + "graph's runs in that phase (a mistyped unit, a failed run?): {}", where,
                        samples.get(i).millis(), String.format(java.util.Locale.ROOT, "%.3g",
                        Math.exp(Math.abs(peers[i]))), peers[i] < 0 ? "faster" : "slower", w);
            } else if (screenedOut[at[i]]) {
                double r = first.screening()[at[i]];
                LOG.warn("{}: left out of the fit: measured {} ms, where a fit of the runs predicts {} ms (a factor "
                        + "of {} off; a mistyped unit, a failed run?): {}", where, samples.get(i).millis(),
                        samples.get(i).millis() * Math.exp(r), String.format(java.util.Locale.ROOT, "%.3g",
                        Math.exp(Math.abs(r))), w);
            }
        }
        Once second = fitOnce(kept, shrinkage, groupTag, layerShare);
        return new Fit(second.model(), second.logErrors(), second.cvMre(), left);
    }

    /**
     * Each run's log ratio of its time a sample (measured over its batch) to the median of its graph's runs in its
     * phase, 0 where the graph has fewer than three: batch, threads and workers move a CPU run's time a sample a few
     * times at most, a unit typed wrong a thousand.
     */
    static double[] peerRatios(List<Sample> samples) {
        java.util.Map<String, List<Integer>> byGraph = new java.util.HashMap<>();
        for (int i = 0; i < samples.size(); i++) {
            Workload w = samples.get(i).workload();
            byGraph.computeIfAbsent(w.graph().name() + "|" + w.phase(), k -> new ArrayList<>()).add(i);
        }
        double[] out = new double[samples.size()];
        for (List<Integer> runs : byGraph.values()) {
            if (runs.size() < 3) {
                continue;
            }
            // the median of all of them, the run's own included: of three, the middle one (the median of the two
            // others of a right run would sit halfway to a wrong third)
            double median = Quantiles.median(runs.stream().mapToDouble(j -> perSample(samples.get(j))).toArray());
            for (int i : runs) {
                out[i] = Math.log(perSample(samples.get(i)) / median);
            }
        }
        return out;
    }

    private static double perSample(Sample s) {
        return s.millis() / Math.max(1, s.workload().batch());
    }

    /** A run's relative design row may be this many times the median row's length before it is capped. */
    static final double LEVERAGE_CAP = 10;
    /** How far out of the other runs' spread a run must lie to be left out, in median absolute deviations. */
    static final double OUTLIER_MADS = 10;
    /** ... and at least this far, in log-ratio (a factor of 5): spread that small is noise, not a wrong run. */
    static final double OUTLIER_FLOOR = Math.log(5);

    /** Beyond this, in log-ratio from the runs' median (a factor of 100), a run is left out of a fit of fewer. */
    static final double FEW_RUNS_FLOOR = Math.log(100);

    /**
     * Which runs no model explains: those whose in-sample log-ratio lies more than {@code max(OUTLIER_MADS · MAD,
     * OUTLIER_FLOOR)} from the median log-ratio (MAD: the median absolute deviation from it). With three to nine
     * runs, where a spread is no spread, only those more than a factor of 100 from it ({@link #FEW_RUNS_FLOOR}: a
     * unit slip, not noise; one run of six measured 10,000 times too slow made every interval 2,000 times wide),
     * where the screening fit leaves a run that far off (a fit of three runs may absorb a slip whole, and nothing is
     * left out); none with fewer.
     */
    static boolean[] outliers(double[] logRatios) {
        boolean[] out = new boolean[logRatios.length];
        if (logRatios.length < 3) {
            return out;
        }
        double median = Quantiles.median(logRatios);
        double[] dev = new double[logRatios.length];
        for (int i = 0; i < dev.length; i++) {
            dev[i] = Math.abs(logRatios[i] - median);
        }
        double limit = logRatios.length < 10 ? FEW_RUNS_FLOOR
                : Math.max(OUTLIER_MADS * Quantiles.median(dev), OUTLIER_FLOOR);
        for (int i = 0; i < out.length; i++) {
            out[i] = dev[i] > limit;
        }
        return out;
    }

    /** One fit: the stage, its errors, and the in-sample log-ratios that screen for outliers. */
    private record Once(HostLayerModel model, double[] logErrors, double cvMre, double[] screening) {
    }

    private static Once fitOnce(List<Sample> samples, Optional<Double> shrinkage, String groupTag,
            double layerShare) {
        LayerBasis basis = LayerBasis.standard();
        Problem p = new Problem(basis, samples, layerShare);
        List<String> groups = Folds.groups(samples, Folds.byTag(groupTag));
        double lambda;
        double[] logErrors;
        double cvMre = Double.NaN;
        if (shrinkage.isPresent() || Folds.count(groups) < 3) {
            lambda = shrinkage.orElse(DEFAULT_SHRINKAGE);
            double[] th = p.solve(lambda, null);
            logErrors = p.logRatios(th, null);
        } else {
            lambda = Double.NaN;
            double bestScore = Double.POSITIVE_INFINITY;
            logErrors = null;
            List<Folds.Fold> folds = Folds.groupFolds(groups, INNER_FOLDS);
            for (double l : LAMBDA_GRID) {
                double[] oof = new double[samples.size()];
                double[] all = p.solve(l, null);
                for (Folds.Fold f : folds) {
                    boolean[] held = new boolean[groups.size()];
                    f.test().forEach(i -> held[i] = true);
                    double[] th = p.solve(l, held, all);
                    double[] lr = p.logRatios(th, held);
                    f.test().forEach(i -> oof[i] = lr[i]);
                }
                double score = Arrays.stream(oof).map(r -> Math.abs(Math.expm1(r))).average().orElse(0);
                LOG.debug("shrinkage {}: out-of-group MRE {}", l, score);
                if (score < bestScore) {
                    bestScore = score;
                    lambda = l;
                    logErrors = oof;
                    cvMre = score;
                }
            }
        }
        double[] theta = p.solve(lambda, null);
        return new Once(new HostLayerModel(basis, p.unscale(theta), lambda), logErrors, cvMre,
                p.screening(lambda, theta));
    }

    /** The fitted coefficients, one per {@link LayerBasis#columnNames()} entry (a copy). */
    public double[] coefficients() {
        return theta.clone();
    }

    /** The shrinkage strength. */
    public double shrinkage() {
        return lambda;
    }

    public LayerBasis basis() {
        return basis;
    }

    /** The predicted time in ms, without breakdown (the fast path). */
    public double predictMillis(Workload w) {
        return basis.dot(w, theta);
    }

    /**
     * The predicted time split by cost group: one entry per {@link LayerBasis#groupCount()} group (the operator
     * families and the basis's extra groups), then one for all workload-level terms; they add up to
     * {@link #predictMillis}.
     */
    public double[] groupMillis(Workload w) {
        double[] x = basis.row(w);
        int groups = basis.groupCount();
        int terms = LayerBasis.LAYER_TERMS.size();
        double[] out = new double[groups + 1];
        for (int j = 0; j < x.length; j++) {
            int g = j / terms;
            out[Math.min(g, groups)] += x[j] * theta[j];
        }
        return out;
    }

    /** The predicted time with its per-layer (by index) and per-term breakdown. */
    public StageCost cost(Workload w) {
        List<LayerFeatures> layers = basis.features(w);
        double[] terms = new double[LayerBasis.LAYER_TERMS.size()];
        double[] layerMillis = new double[w.graph().size()];
        OpFamily[] families = new OpFamily[w.graph().size()];
        double flops = 0;
        double bytes = 0;
        for (LayerFeatures lf : layers) {
            basis.layerTerms(lf, w, terms);
            flops += terms[2];
            bytes += terms[4];
            int base = basis.groupColumn(basis.groupOf(w, lf), 0);
            double t = 0;
            for (int k = 0; k < terms.length; k++) {
                t += terms[k] * theta[base + k];
            }
            if (t > 0) {
                layerMillis[lf.layer()] = t;
                families[lf.layer()] = lf.family();
            }
        }
        double[] row = new double[basis.width()];
        basis.globalTerms(w, flops, bytes, row);
        double[] groups = new double[TermGroup.values().length];
        for (int k = 0; k < LayerBasis.GLOBAL_TERMS.size(); k++) {
            int c = basis.globalColumn(k);
            groups[GLOBAL_GROUP[k].ordinal()] += row[c] * theta[c];
        }
        List<StageCost.Term> out = new ArrayList<>();
        for (TermGroup g : TermGroup.values()) {
            double t = groups[g.ordinal()];
            if (t > 0) {
                out.add(new StageCost.Term(g.label, g.kind, t));
            }
        }
        return StageCost.of(layerMillis, families, out);
    }

    /**
     * The module path of an exported node name: scope segments joined with dots, where a segment that already
     * repeats its parent's path ({@code layer1.0} under {@code layer1}) replaces it. The last segment (the
     * operator) is dropped.
     */
    public static String modulePath(String nodeName) {
        String[] seg = nodeName.split("/");
        String path = "";
        for (int i = 0; i < seg.length - 1; i++) {
            if (seg[i].isEmpty()) {
                continue;
            }
            path = path.isEmpty() || seg[i].startsWith(path + ".") ? seg[i] : path + "." + seg[i];
        }
        return path;
    }

    /**
     * The scaled relative least-squares problem. Variables: the basis columns, then a shared centre {@code θ_0} of
     * the per-family layer terms.
     */
    private static final class Problem {
        private final int width;
        private final int terms = LayerBasis.LAYER_TERMS.size();
        private final int families;
        private final double[][] rows;
        /** The non-zero columns of each row, ascending. */
        private final int[][] nonZero;
        private final double[] scale;
        /** Per-module forward-time rows (relative), their owning sample, and the weight of each. */
        private final List<double[]> layerRows = new ArrayList<>();
        private final List<Integer> layerOwner = new ArrayList<>();
        private final double layerWeight;

        Problem(LayerBasis basis, List<Sample> samples, double layerShare) {
            width = basis.width();
            families = basis.groupCount();
            rows = new double[samples.size()][];
            nonZero = new int[samples.size()][];
            for (int i = 0; i < samples.size(); i++) {
                double[] x = basis.row(samples.get(i).workload());
                double y = samples.get(i).millis();
                for (int j = 0; j < x.length; j++) {
                    x[j] /= y;
                    if (!Double.isFinite(x[j])) {
                        throw new IllegalArgumentException("cannot fit a measured time of " + y + " ms for "
                                + samples.get(i).workload() + ": too small or too large for its features");
                    }
                }
                rows[i] = x;
                int count = 0;
                for (double v : x) {
                    count += v != 0 ? 1 : 0;
                }
                nonZero[i] = new int[count];
                for (int j = 0, c = 0; j < x.length; j++) {
                    if (x[j] != 0) {
                        nonZero[i][c++] = j;
                    }
                }
                if (layerShare > 0) {
                    addLayerRows(basis, samples.get(i), i);
                }
            }
            layerWeight = layerRows.isEmpty() ? 0 : layerShare * rows.length / layerRows.size();
            scale = new double[width + terms];
            for (int k = 0; k < terms; k++) {
                double s = 0;
                for (double[] r : rows) {
                    double sum = 0;
                    for (int f = 0; f < families; f++) {
                        sum += r[f * terms + k];
                    }
                    s += sum * sum;
                }
                double c = Math.sqrt(s / rows.length);
                c = c > 0 ? c : 1;
                for (int f = 0; f < families; f++) {
                    scale[f * terms + k] = c;
                }
                scale[width + k] = c;
            }
            for (int j = families * terms; j < width; j++) {
                double s = 0;
                for (double[] r : rows) {
                    s += r[j] * r[j];
                }
                double c = Math.sqrt(s / rows.length);
                scale[j] = c > 0 ? c : 1;
            }
        }

        /**
         * Solves in scaled variables, leaving out rows marked in {@code held}: iteratively reweighted least squares
         * toward the mean absolute relative error (weights {@code 1/max(|r|, δ)}), which the evaluation reports and
         * which is robust to the measurement outliers of a drifting machine.
         */
        double[] solve(double lambda, boolean[] held) {
            return solve(lambda, held, null);
        }

        /** As {@link #solve(double, boolean[])}, the active-set search starting from {@code start}. */
        double[] solve(double lambda, boolean[] held, double[] start) {
            double[] ones = new double[rows.length];
            Arrays.fill(ones, 1);
            return solve(lambda, held, start, ones);
        }

        /** As {@link #solve(double, boolean[], double[])}, each row's weight multiplied by {@code cap[i]}. */
        private double[] solve(double lambda, boolean[] held, double[] start, double[] cap) {
            double[] weights = cap.clone();
            double[] theta = solveWeighted(lambda, held, weights, start);
            for (int iter = 0; iter < IRLS_STEPS; iter++) {
                double[] lr = logRatios(theta, null);
                for (int i = 0; i < rows.length; i++) {
                    weights[i] = cap[i] / Math.max(Math.abs(Math.expm1(lr[i])), IRLS_FLOOR);
                }
                theta = solveWeighted(lambda, held, weights, theta);
            }
            return theta;
        }

        private double[] solveWeighted(double lambda, boolean[] held, double[] weights, double[] start) {
            int d = width + terms;
            double[][] h = new double[d][d];
            double[] b = new double[d];
            double n = 0;
            for (int i = 0; i < rows.length; i++) {
                if (held != null && held[i]) {
                    continue;
                }
                n += weights[i];
                double[] r = rows[i];
                double wi = weights[i];
                // Only the row's non-zero columns contribute (terms that are zero add nothing, exactly).
                int[] nz = nonZero[i];
                for (int jj = 0; jj < nz.length; jj++) {
                    int j = nz[jj];
                    double a = r[j] / scale[j];
                    b[j] += wi * a;
                    double[] hj = h[j];
                    for (int kk = jj; kk < nz.length; kk++) {
                        int k = nz[kk];
                        hj[k] += wi * a * r[k] / scale[k];
                    }
                }
            }
            for (int r = 0; r < layerRows.size(); r++) {
                if (held != null && held[layerOwner.get(r)]) {
                    continue;
                }
                double[] row = layerRows.get(r);
                for (int j = 0; j < width; j++) {
                    double a = row[j] / scale[j];
                    if (a == 0) {
                        continue;
                    }
                    b[j] += layerWeight * a;
                    for (int k = j; k < width; k++) {
                        h[j][k] += layerWeight * a * row[k] / scale[k];
                    }
                }
            }
            for (int j = 0; j < d; j++) {
                for (int k = 0; k < j; k++) {
                    h[j][k] = h[k][j];
                }
            }
            double l = lambda * n;
            for (int f = 0; f < families; f++) {
                for (int k = 0; k < terms; k++) {
                    int a = f * terms + k;
                    int c = width + k;
                    h[a][a] += l;
                    h[c][c] += l;
                    h[a][c] -= l;
                    h[c][a] -= l;
                }
            }
            for (int j = 0; j < d; j++) {
                h[j][j] += RIDGE * n + 1e-12;
            }
            return Nnls.solve(h, b, start);
        }

        /**
         * Rows for measured per-module forward times: the module's layers are the nodes whose export scope
         * ({@code /layer1/layer1.0/conv1/Conv} is module {@code layer1.0.conv1}) is the module or inside it.
         */
        private void addLayerRows(LayerBasis basis, Sample s, int owner) {
            if (s.layerMillis().isEmpty()) {
                return;
            }
            Workload w = s.workload();
            List<LayerFeatures> fs = basis.features(w);
            Map<String, double[]> byModule = new LinkedHashMap<>();
            double[] t = new double[terms];
            for (LayerFeatures lf : fs) {
                String path = modulePath(w.graph().layer(lf.layer()).name());
                while (!path.isEmpty()) {
                    if (s.layerMillis().containsKey(path)) {
                        basis.layerTerms(lf, w, t);
                        double[] row = byModule.computeIfAbsent(path, k -> new double[width]);
                        for (int k = 0; k < terms; k++) {
                            row[basis.groupOf(w, lf) * terms + k] += t[k];
                        }
                        break;
                    }
                    int dot = path.lastIndexOf('.');
                    path = dot < 0 ? "" : path.substring(0, dot);
                }
            }
            for (Map.Entry<String, double[]> e : byModule.entrySet()) {
                double y = s.layerMillis().get(e.getKey());
                double[] row = e.getValue();
                boolean any = false;
                for (int j = 0; j < width; j++) {
                    row[j] /= y;
                    any |= row[j] != 0;
                }
                if (any) {
                    layerRows.add(row);
                    layerOwner.add(owner);
                }
            }
        }

        /**
         * The in-sample log-ratios that screen for runs no model explains: those of the fit {@code scaledTheta}
         * itself, or where some run's relative design row is longer than {@link #LEVERAGE_CAP} times the median
         * row's, those of a refit (at the same shrinkage) in which such runs weigh as one of that length.
         */
        double[] screening(double lambda, double[] scaledTheta) {
            double[] norm = new double[rows.length];
            for (int i = 0; i < rows.length; i++) {
                double q = 0;
                for (int j : nonZero[i]) {
                    q += rows[i][j] / scale[j] * (rows[i][j] / scale[j]);
                }
                norm[i] = Math.sqrt(q);
            }
            double limit = LEVERAGE_CAP * Quantiles.median(norm);
            double[] cap = new double[rows.length];
            boolean capped = false;
            for (int i = 0; i < rows.length; i++) {
                cap[i] = norm[i] > limit ? limit / norm[i] * (limit / norm[i]) : 1;
                capped |= cap[i] < 1;
            }
            return logRatios(capped ? solve(lambda, null, null, cap) : scaledTheta, null);
        }

        /** log(prediction / measurement) per row (only held rows when {@code held} is given). */
        double[] logRatios(double[] scaledTheta, boolean[] held) {
            double[] out = new double[rows.length];
            for (int i = 0; i < rows.length; i++) {
                if (held != null && !held[i]) {
                    continue;
                }
                double t = 0;
                for (int j = 0; j < width; j++) {
                    t += rows[i][j] / scale[j] * scaledTheta[j];
                }
                out[i] = Math.log(Math.max(t, 1e-9));
            }
            return out;
        }

        double[] unscale(double[] scaledTheta) {
            double[] out = new double[width];
            for (int j = 0; j < width; j++) {
                out[j] = scaledTheta[j] / scale[j];
            }
            return out;
        }
    }
}
