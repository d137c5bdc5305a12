package org.scaledl.model.host;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.LinearSolverFactory_DDRM;
import org.ejml.interfaces.linsol.LinearSolverDense;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.model.cost.LayerStage;
import org.scaledl.model.cost.Quantiles;
import org.scaledl.model.cost.StageCost;
import org.scaledl.model.file.Envelope;
import org.scaledl.model.file.Fields;
import org.scaledl.workload.Device;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The host stage: one {@link HostLayerModel} per CPU machine the training runs measured (machines are devices: a
 * basis fitted on one machine does not predict another), and, for machines known only from a few measured runs, a
 * <b>few-shot calibration</b> of the known machine that predicts those runs best.
 *
 * <p>Machines differ by operator family (one runs attention's contractions three times faster, another convolutions),
 * so a calibration scales each cost group of the base machine's prediction on its own: the time becomes
 * {@code c₀ · Σ_g e^{δ_g} t_g}, where {@code t_g} is the base prediction's share of group {@code g} (each operator
 * family and extra group of {@link LayerBasis}, and the workload-level terms together). {@code log c₀} is the median
 * log-ratio of measured to predicted time over the target's runs, damped by {@code n / (n + 2)}; the {@code δ_g}
 * minimise {@code Σ_i (r_i − log(Σ_g e^{δ_g} s_ig))² + μ Σ_g δ_g²} (Gauss–Newton, {@code r_i} the log-ratio after
 * {@code c₀}, {@code s_ig} the group shares), a ridge toward no correction with {@code μ = }{@value #RIDGE} (one run
 * moves a group's factor by at most about a third of its log-ratio). Groups the runs do not exercise keep
 * {@code δ = 0}. Beside the groups, factors {@code e^{γ_s}} for settings ({@link #settingsOf}: several threads,
 * several workers) are fitted the same way, since machines differ in how they scale across cores. This is the CPU
 * counterpart of the device layer model's calibration.
 *
 * <p>A workload without a device is the only machine's when there is exactly one; otherwise it must name one.
 */
public final class HostStage implements LayerStage {
    /** The {@code kind} of its saved form. */
    public static final String KIND = "host";
    /** Keyed by device name; {@code ""} for measurements without a machine description. */
    private final Map<String, HostLayerModel> machines;
    private final Map<String, Calibration> calibrations;
    private final Map<String, Device> descriptions;

    /** The ridge weight of the per-group corrections. */
    static final double RIDGE = 2.0;

    /**
     * A machine known from a few runs.
     *
     * @param base  the fitted machine whose model it scales
     * @param all   {@code log c₀}
     * @param delta {@code δ_g} per group (the base model's groups, then the workload terms)
     * @param settings {@code γ_s} per setting of {@link #settingsOf}: more than one thread, more than one worker
     *                 (empty in files written before they existed: no correction)
     * @param runs  runs it was calibrated on
     */
    public record Calibration(String base, double all, double[] delta, double[] settings, int runs) {
        public Calibration {
            delta = delta.clone();
            settings = settings.clone();
        }

        /** A calibration without setting factors (the form of earlier files). */
        Calibration(String base, double all, double[] delta, int runs) {
            this(base, all, delta, new double[0], runs);
        }

        @Override
        public double[] delta() {
            return delta.clone();
        }

        @Override
        public double[] settings() {
            return settings.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Calibration c && c.base.equals(base) && Double.compare(c.all, all) == 0
                    && java.util.Arrays.equals(c.delta, delta) && java.util.Arrays.equals(c.settings, settings)
                    && c.runs == runs;
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(base, all, java.util.Arrays.hashCode(delta),
                    java.util.Arrays.hashCode(settings), runs);
        }

        double factor(double[] groups, Workload w) {
            double total = 0;
            double scaled = 0;
            for (int g = 0; g < groups.length; g++) {
                total += groups[g];
                scaled += groups[g] * Math.exp(g < delta.length ? delta[g] : 0);
            }
            double c = Math.exp(all + settingLog(w));
            return total > 0 ? c * scaled / total : c;
        }

        double groupFactor(int g, Workload w) {
            return Math.exp(all + settingLog(w) + (g < delta.length ? delta[g] : 0));
        }

        private double settingLog(Workload w) {
            double[] z = settingsOf(w);
            double s = 0;
            for (int k = 0; k < Math.min(z.length, settings.length); k++) {
                s += settings[k] * z[k];
            }
            return s;
        }
    }

    /**
     * The settings a calibration corrects beside the cost groups, as indicators: more than one thread per worker,
     * more than one worker. Machines differ in how they scale across cores as much as in how fast each operator is
     * (on the two bundled VMs, the one-thread and two-thread runs of one model's predictions for the other machine are
     * off by 0.27 in log-ratio from each other), and no group share tells the two apart.
     */
    static double[] settingsOf(Workload w) {
        return new double[] {w.threads() > 1 ? 1 : 0, w.worldSize() > 1 ? 1 : 0};
    }

    public HostStage(Map<String, HostLayerModel> machines, Map<String, Calibration> calibrations) {
        this(machines, calibrations, Map.of());
    }

    /**
     * A stage with the descriptions of its machines (cores, vector width, caches, clock, bandwidth: what the runs'
     * {@code machine.json} said), by machine name; a machine without one is known by its name only.
     */
    public HostStage(Map<String, HostLayerModel> machines, Map<String, Calibration> calibrations,
            Map<String, Device> descriptions) {
        Checks.argument(!machines.isEmpty(), "a host stage needs a fitted machine");
        this.machines = Collections.unmodifiableMap(new LinkedHashMap<>(machines));
        this.calibrations = Collections.unmodifiableMap(new TreeMap<>(calibrations));
        Map<String, Device> known = new TreeMap<>();
        descriptions.forEach((name, d) -> {
            if (machines.containsKey(name) || calibrations.containsKey(name)) {
                Checks.argument(!d.isGpu(), "machine '%s' is described as a GPU", name);
                known.put(name, d);
            }
        });
        this.descriptions = Collections.unmodifiableMap(known);
    }

    /** What is known of a machine it predicts (from its runs' {@code machine.json}), if anything. */
    @Override
    public java.util.Optional<Device> description(String machine) {
        return java.util.Optional.ofNullable(descriptions.get(machine));
    }

    /** One machine. */
    public static HostStage of(String device, HostLayerModel model) {
        return new HostStage(Map.of(device, model), Map.of());
    }

    public Map<String, HostLayerModel> machines() {
        return machines;
    }

    public Map<String, Calibration> calibrations() {
        return calibrations;
    }

    /** The names of every machine it predicts (fitted and calibrated), sorted. */
    @Override
    public List<String> devices() {
        // a fitted machine calibrated again is one machine
        java.util.SortedSet<String> out = new java.util.TreeSet<>(machines.keySet());
        out.addAll(calibrations.keySet());
        out.remove("");
        return new ArrayList<>(out);
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public void check(Workload w) {
        // a configuration-built graph is said first: it is no machine's question
        if (w.graph().blocks().map(org.scaledl.graph.Blocks::compact).orElse(false)) {
            checkJob(w);
        }
        machineOf(w);
        checkJob(w);
    }

    /**
     * What the host layer model predicts of a job whatever its machine (a calibration run may be of a machine it
     * has not seen): an imported graph, data-parallel, without a GPU cluster's settings.
     */
    private static void checkJob(Workload w) {
        if (w.graph().blocks().map(org.scaledl.graph.Blocks::compact).orElse(false)) {
            throw new IllegalArgumentException("graph " + w.graph().name() + " was built from a configuration, "
                    + "which the host (CPU) basis does not predict: predict it with a device (GPU) predictor");
        }
        if (!w.parallelism().isDataOnly()) {
            throw new IllegalArgumentException("the host layer model predicts data-parallel jobs only; the "
                    + "workload is " + w.parallelism());
        }
        if (w.topology().isPresent()) {
            throw new IllegalArgumentException("a topology (Workload.Builder.topology: GPUs a node, their links): the "
                    + "host (CPU) layer model predicts the processes of one machine, and a topology describes a GPU "
                    + "cluster's nodes");
        }
        if (!w.transformerOnlySettings().isEmpty()) {
            throw new IllegalArgumentException(String.join(", ", w.transformerOnlySettings()) + ": the host (CPU) "
                    + "layer model predicts imported graphs, and only a device model's transformer built from its "
                    + "configuration carries " + (w.transformerOnlySettings().size() == 1 ? "it" : "them"));
        }
        if (w.memoryFormat() != org.scaledl.workload.MemoryFormat.NCHW) {
            throw new IllegalArgumentException("memory format " + w.memoryFormat().label() + ": the host (CPU) layer "
                    + "model predicts convolutions as its measurements ran them (PyTorch's default, nchw); a memory "
                    + "format is a GPU setting");
        }
    }

    @Override
    public double[] designRow(Workload w) {
        return LayerBasis.standard().row(w);
    }

    /** The machine name a workload runs on, or an explanation of why it cannot be predicted. */
    public String machineOf(Workload w) {
        Optional<Device> d = w.device();
        if (d.isPresent()) {
            if (d.get().isGpu()) {
                throw new IllegalArgumentException("this predictor was fitted on CPU machines " + machineList()
                        + "; the workload is for GPU '" + d.get().name() + "' (GPUs are predicted by a device "
                        + "predictor: LayerCost.device)");
            }
            String name = d.get().name();
            if (machines.containsKey(name) || calibrations.containsKey(name)) {
                return name;
            }
            throw new IllegalArgumentException("this predictor was fitted on " + machineList() + "; the workload is "
                    + "for machine '" + name + "', which it has not seen: give it a few measured runs of that "
                    + "machine (predictor.calibrate(runs))");
        }
        if (machines.size() == 1 && machines.keySet().containsAll(calibrations.keySet())) {
            // the one machine, fitted (and calibrated again, or not)
            return machines.keySet().iterator().next();
        }
        throw new IllegalArgumentException("this predictor knows several machines " + machineList()
                + "; say which one the workload runs on (Workload.Builder.device)");
    }

    private String machineList() {
        List<String> d = new ArrayList<>(devices());
        if (machines.containsKey("")) {
            d.add(0, "the unnamed machine of its dataset");
        }
        return d.toString();
    }


    @Override
    public double millis(Workload w) {
        String m = machineOf(w);
        Calibration c = calibrations.get(m);
        if (c == null) {
            return machines.get(m).predictMillis(w);
        }
        double[] groups = machines.get(c.base()).groupMillis(w);
        double total = 0;
        for (double g : groups) {
            total += g;
        }
        return total * c.factor(groups, w);
    }

    @Override
    public StageCost cost(Workload w) {
        String m = machineOf(w);
        return accumulated(w, sharedCores(w, m, calibratedCost(w, m)));
    }

    /**
     * The cost with a note ({@link StageCost.NoteKind#UNUSUAL}, warned) where the batch is split into
     * micro-batches: the host model predicts one pass of the whole batch, as its runs took a step, so each
     * micro-batch's own overhead is left out.
     */
    private static StageCost accumulated(Workload w, StageCost cost) {
        int m = w.parallelism().microBatches();
        if (m <= 1) {
            return cost;
        }
        List<StageCost.Note> notes = new ArrayList<>(cost.notes());
        String passes = w.phase() == org.scaledl.workload.Phase.TRAIN ? "forward and backward pass" : "forward pass";
        notes.add(new StageCost.Note(StageCost.NoteKind.UNUSUAL, m + " micro-batches: predicted as one " + passes
                + " of the batch of " + w.batch() + ", as the host (CPU) model's runs took a step; each micro-batch's "
                + "own overhead is left out"));
        return cost.withNotes(notes);
    }

    /**
     * The cost with a note ({@link StageCost.NoteKind#UNUSUAL}, warned) where the job's processes times their threads
     * exceed the described machine's cores: they then share cores, which no run of the training data did (every
     * bundled run keeps within them), so the layer model's time, which assumes each thread a core, is too short.
     */
    private StageCost sharedCores(Workload w, String machine, StageCost cost) {
        Device d = descriptions.get(machine);
        long threads = (long) w.worldSize() * w.threads();
        if (d == null || d.computeUnits() <= 0 || threads <= d.computeUnits()) {
            return cost;
        }
        List<StageCost.Note> notes = new ArrayList<>(cost.notes());
        notes.add(new StageCost.Note(StageCost.NoteKind.UNUSUAL, String.format(java.util.Locale.ROOT, "%d "
                + "process%s x %d thread%s = %d threads on the %d cores of %s: they share cores, and the prediction, "
                + "which gives each thread a core, is too short (run at most %d threads in all)", w.worldSize(),
                w.worldSize() == 1 ? "" : "es", w.threads(), w.threads() == 1 ? "" : "s", threads,
                d.computeUnits(), InvalidInputException.printable(machine, 80), d.computeUnits())));
        return cost.withNotes(notes);
    }

    private StageCost calibratedCost(Workload w, String m) {
        Calibration c = calibrations.get(m);
        if (c == null) {
            return machines.get(m).cost(w);
        }
        HostLayerModel model = machines.get(c.base());
        StageCost base = model.cost(w);
        List<org.scaledl.workload.LayerFeatures> features = model.basis().features(w);
        double[] layers = base.layerMillis();
        org.scaledl.workload.OpFamily[] families = new org.scaledl.workload.OpFamily[layers.length];
        for (org.scaledl.workload.LayerFeatures lf : features) {
            int i = lf.layer();
            if (layers[i] > 0) {
                layers[i] *= c.groupFactor(model.basis().groupOf(w, lf), w);
                families[i] = base.family(i);
            }
        }
        double workload = c.groupFactor(model.basis().groupCount(), w);
        List<StageCost.Term> terms = new ArrayList<>();
        for (StageCost.Term t : base.terms()) {
            terms.add(new StageCost.Term(t.name(), t.kind(), t.millis() * workload));
        }
        return StageCost.withTotal(layers, families, terms, largestFirst(base, layers, terms));
    }

    /**
     * The sum of the calibrated parts taken in the order of the uncalibrated ones, largest first (ties in layer
     * order, terms last): the order in which earlier releases added them, so saved predictors predict bit-identically.
     */
    private static double largestFirst(StageCost base, double[] layers, List<StageCost.Term> terms) {
        int n = 0;
        for (int i = 0; i < base.layers(); i++) {
            if (base.layerMillis(i) > 0) {
                n++;
            }
        }
        double[][] parts = new double[n + terms.size()][];
        int k = 0;
        for (int i = 0; i < base.layers(); i++) {
            if (base.layerMillis(i) > 0) {
                parts[k++] = new double[] {base.layerMillis(i), layers[i]};
            }
        }
        for (int j = 0; j < terms.size(); j++) {
            parts[k++] = new double[] {base.terms().get(j).millis(), terms.get(j).millis()};
        }
        java.util.Arrays.sort(parts, java.util.Comparator.comparingDouble((double[] p) -> p[0]).reversed());
        double total = 0;
        for (double[] p : parts) {
            total += p[1];
        }
        return total;
    }

    /**
     * A copy calibrated to the machines of some runs (each run's workload names its machine): every machine the runs
     * measure gets a calibration of the fitted machine that predicts them best (by median absolute log-ratio), or of
     * itself when it is a fitted one; earlier calibrations of those machines are replaced. A run that names no
     * machine is one of the predictor's only machine, as in {@link #millis}.
     *
     * @throws IllegalArgumentException for a run on a GPU, or one without a machine where the predictor knows several
     */
    @Override
    public HostStage calibrate(List<Sample> runs) {
        for (int i = 0; i < runs.size(); i++) {
            // a run the model does not predict at all moves no calibration: refused as its prediction is
            try {
                checkJob(runs.get(i).workload());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("calibration run " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        Map<String, List<Sample>> byMachine = new TreeMap<>();
        Map<String, Device> described = new TreeMap<>(descriptions);
        for (Sample s : runs) {
            Optional<Device> d = s.workload().device();
            if (d.isEmpty()) {
                // a run without a machine is one of the predictor's only machine, as a prediction without one is
                String only;
                try {
                    only = machineOf(s.workload());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("a calibration run must name its machine "
                            + "(Workload.Builder.device) where the predictor knows several " + machineList() + ": "
                            + s.workload(), e);
                }
                byMachine.computeIfAbsent(only, k -> new ArrayList<>()).add(s);
                continue;
            }
            Checks.argument(!d.get().isGpu(), "calibration run on GPU %s: host predictors calibrate to CPU "
                    + "machines", d.get().name());
            byMachine.computeIfAbsent(d.get().name(), k -> new ArrayList<>()).add(s);
            described.put(d.get().name(), d.get());
        }
        Map<String, Calibration> out = new TreeMap<>(calibrations);
        byMachine.forEach((device, own) -> {
            String base = machines.containsKey(device) ? device : best(own);
            HostLayerModel model = machines.get(base);
            double[][] shares = new double[own.size()][];
            double[][] settings = new double[own.size()][];
            double[] r = new double[own.size()];
            for (int i = 0; i < r.length; i++) {
                settings[i] = settingsOf(own.get(i).workload());
                double[] g = model.groupMillis(own.get(i).workload());
                double total = java.util.Arrays.stream(g).sum();
                for (int k = 0; k < g.length; k++) {
                    g[k] /= Math.max(1e-12, total);
                }
                shares[i] = g;
                r[i] = Math.log(own.get(i).millis() / Math.max(1e-9, total));
            }
            double all = damped(r);
            double[] f = groupCorrections(shares, settings, r, all);
            int groups = shares[0].length;
            out.put(device, new Calibration(base, all, java.util.Arrays.copyOf(f, groups),
                    java.util.Arrays.copyOfRange(f, groups, f.length), own.size()));
        });
        return new HostStage(machines, out, described);
    }

    /**
     * A calibration run over the fitted machine's uncalibrated prediction: its own machine where it was fitted (a
     * calibration of it replaces the earlier one), else the fitted machine that predicts it closest (a machine not
     * seen, which the calibration adapts one of them to); NaN for a run on a GPU.
     */
    @Override
    public double calibrationRatio(Sample run) {
        Workload w = run.workload();
        if (w.device().map(Device::isGpu).orElse(false)) {
            return Double.NaN;
        }
        try {
            // a job the model does not predict has no ratio: calibrate refuses it saying why
            checkJob(w);
        } catch (IllegalArgumentException e) {
            return Double.NaN;
        }
        String name = w.device().map(Device::name).orElse(machines.size() == 1 ? machines.keySet().iterator().next()
                : null);
        List<HostLayerModel> bases = name != null && machines.containsKey(name) ? List.of(machines.get(name))
                : new ArrayList<>(machines.values());
        double closest = Double.NaN;
        for (HostLayerModel base : bases) {
            double r;
            try {
                r = run.millis() / base.predictMillis(w);
            } catch (IllegalArgumentException | InvalidInputException e) {
                continue;
            }
            if (Double.isNaN(closest) || Math.abs(Math.log(r)) < Math.abs(Math.log(closest))) {
                closest = r;
            }
        }
        return closest;
    }

    private String best(List<Sample> own) {
        String best = null;
        double bestErr = Double.POSITIVE_INFINITY;
        for (Map.Entry<String, HostLayerModel> e : machines.entrySet()) {
            double[] a = new double[own.size()];
            for (int i = 0; i < a.length; i++) {
                a[i] = Math.abs(Math.log(own.get(i).millis() / Math.max(1e-9,
                        e.getValue().predictMillis(own.get(i).workload()))));
            }
            double err = Quantiles.median(a);
            if (err < bestErr) {
                bestErr = err;
                best = e.getKey();
            }
        }
        return best;
    }

    /**
     * The per-group and per-setting log-factors: Gauss–Newton on {@code Σ_i (r_i − all − log Σ_g e^{δ_g} s_ig −
     * Σ_s γ_s z_is)² + μ (|δ|² + |γ|²)}, {@code z} the indicators of {@link #settingsOf}; groups no run has a share
     * of, and settings no run differs in, stay at 0. Returns {@code δ} followed by {@code γ}.
     */
    static double[] groupCorrections(double[][] shares, double[][] settings, double[] r, double all) {
        int groups = shares[0].length;
        int n = groups + settings[0].length;
        double[] delta = new double[n];
        for (int iter = 0; iter < 8; iter++) {
            double[][] h = new double[n][n];
            double[] b = new double[n];
            for (int i = 0; i < shares.length; i++) {
                double denom = 0;
                for (int g = 0; g < groups; g++) {
                    denom += shares[i][g] * Math.exp(delta[g]);
                }
                double resid = r[i] - all - Math.log(Math.max(1e-300, denom));
                double[] jac = new double[n];
                for (int g = 0; g < groups; g++) {
                    jac[g] = shares[i][g] * Math.exp(delta[g]) / denom;
                }
                for (int k = groups; k < n; k++) {
                    jac[k] = settings[i][k - groups];
                    resid -= delta[k] * jac[k];
                }
                for (int g = 0; g < n; g++) {
                    b[g] += jac[g] * resid;
                    for (int k = 0; k < n; k++) {
                        h[g][k] += jac[g] * jac[k];
                    }
                }
            }
            for (int g = 0; g < n; g++) {
                b[g] -= RIDGE * delta[g];
                h[g][g] += RIDGE;
            }
            double[] step = solve(h, b);
            double max = 0;
            for (int g = 0; g < n; g++) {
                delta[g] += step[g];
                max = Math.max(max, Math.abs(step[g]));
            }
            if (max < 1e-10) {
                break;
            }
        }
        return delta;
    }

    /** Solves the small symmetric positive definite system {@code a x = b} (the ridge makes it so) by Cholesky. */
    private static double[] solve(double[][] a, double[] b) {
        DMatrixRMaj m = new DMatrixRMaj(a);
        LinearSolverDense<DMatrixRMaj> chol = LinearSolverFactory_DDRM.chol(b.length);
        if (!chol.setA(m)) {
            throw new IllegalStateException("calibration system is not positive definite");
        }
        DMatrixRMaj x = new DMatrixRMaj(b.length, 1);
        chol.solve(new DMatrixRMaj(b.length, 1, true, b), x);
        return x.getData();
    }

    /** {@code n / (n + 2) · median}: a correction that trusts few measurements less. */
    private static double damped(double[] r) {
        return r.length / (r.length + 2.0) * Quantiles.median(r);
    }

    /**
     * What a host fit learnt.
     *
     * @param stage          the fitted stage, one basis per machine
     * @param logErrors      {@code log(predicted / measured)} per sample: out-of-group where cross-validated
     * @param cvMre          the out-of-group MRE (NaN when some machine could not cross-validate)
     * @param machineOrder   the machines in first-seen order ({@code ""} for runs without one)
     * @param outliers       the samples left out as ones no model explains ({@link HostLayerModel#fit})
     */
    public record Fit(HostStage stage, List<Double> logErrors, double cvMre, List<String> machineOrder,
            List<Sample> outliers) {
        /** Copies. */
        public Fit {
            logErrors = List.copyOf(logErrors);
            machineOrder = List.copyOf(machineOrder);
            outliers = List.copyOf(outliers);
        }

        /** Whether every machine's errors are out-of-group. */
        public boolean crossValidated() {
            return !Double.isNaN(cvMre);
        }
    }

    /**
     * Fits one basis per machine (runs grouped by their device, {@code ""} without one, in first-seen order).
     *
     * @param shrinkage  the shrinkage, or empty to choose it by cross-validation over {@code groupTag}
     * @param layerShare the weight of measured per-module forward times beside whole-iteration times
     * @throws IllegalArgumentException with fewer than 2 samples of a machine, samples of one workload or of one
     *                                  time, or a sample on a GPU
     */
    public static Fit fit(List<Sample> samples, Optional<Double> shrinkage, String groupTag, double layerShare) {
        Checks.argument(samples.size() >= 2, "need at least 2 samples to fit a runtime model, got %s",
                samples.size());
        Map<String, List<Sample>> byMachine = new LinkedHashMap<>();
        Map<String, Device> described = new TreeMap<>();
        for (Sample sm : samples) {
            Optional<Device> d = sm.workload().device();
            Checks.argument(d.isEmpty() || !d.get().isGpu(), "sample on GPU %s: fit a device "
                    + "predictor (LayerCost.device) for GPUs", d.map(Device::name).orElse(""));
            byMachine.computeIfAbsent(d.map(Device::name).orElse(""), k -> new ArrayList<>()).add(sm);
            d.ifPresent(x -> described.putIfAbsent(x.name(), x));
        }
        Map<String, HostLayerModel> machines = new LinkedHashMap<>();
        List<Double> errors = new ArrayList<>();
        List<Sample> outliers = new ArrayList<>();
        double absSum = 0;
        int count = 0;
        boolean crossValidated = true;
        for (Map.Entry<String, List<Sample>> e : byMachine.entrySet()) {
            Checks.argument(e.getValue().size() >= 2, "need at least 2 samples of machine '%s' to fit it, got %s",
                    e.getKey(), e.getValue().size());
            // workloads told apart as the model tells them: by their design rows (copies of one are one)
            Checks.argument(e.getValue().stream().map(x -> java.util.Arrays.toString(LayerBasis.standard().row(
                    x.workload()))).distinct().count() >= 2, "the %s samples of machine '%s' are of one workload: "
                    + "a runtime model is fitted on runs of at least 2", e.getValue().size(), e.getKey());
            double first = e.getValue().get(0).millis();
            Checks.argument(e.getValue().stream().anyMatch(x -> x.millis() != first), "the %s samples of machine "
                    + "'%s' all measure %s ms: a runtime model is fitted on runs whose times differ",
                    e.getValue().size(), e.getKey(), org.scaledl.io.CsvTable.plain(first));
            HostLayerModel.Fit f = HostLayerModel.fit(e.getValue(), shrinkage, groupTag, layerShare);
            machines.put(e.getKey(), f.model());
            outliers.addAll(f.outliers());
            for (double x : f.logErrors()) {
                errors.add(x);
                absSum += Math.abs(Math.expm1(x));
            }
            count += f.logErrors().length;
            crossValidated &= !Double.isNaN(f.cvMre());
        }
        return new Fit(new HostStage(machines, Map.of(), described), errors,
                crossValidated ? absSum / count : Double.NaN,
                new ArrayList<>(byMachine.keySet()), outliers);
    }

    /** The shrinkage the fit chose: with several machines the median of theirs. */
    public double chosenShrinkage() {
        double[] s = machines.values().stream().mapToDouble(HostLayerModel::shrinkage).sorted().toArray();
        return Quantiles.median(s);
    }

    @Override
    public ObjectNode toJson() {
        ObjectNode layer = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        layer.put("kind", KIND);
        ArrayNode ms = layer.putArray("machines");
        machines.forEach((device, h) -> {
            ObjectNode m = ms.addObject();
            m.put("device", device);
            describe(m, device);
            m.put("shrinkage", h.shrinkage());
            ArrayNode cols = m.putArray("columns");
            h.basis().columnNames().forEach(cols::add);
            ArrayNode coef = m.putArray("coefficients");
            for (double c : h.coefficients()) {
                coef.add(c);
            }
        });
        ArrayNode cal = layer.putArray("calibrations");
        calibrations.forEach((device, c) -> {
            ObjectNode o = cal.addObject();
            o.put("device", device);
            describe(o, device);
            o.put("base", c.base());
            o.put("all", c.all());
            o.put("runs", c.runs());
            ArrayNode delta = o.putArray("group_log_factors");
            for (double d : c.delta()) {
                delta.add(d);
            }
            ArrayNode settings = o.putArray("setting_log_factors");
            for (double d : c.settings()) {
                settings.add(d);
            }
        });
        return layer;
    }

    /** A machine's description as its entry's {@code "machine"} object, when known. */
    private void describe(ObjectNode entry, String device) {
        Device d = descriptions.get(device);
        if (d == null) {
            return;
        }
        ObjectNode m = entry.putObject("machine");
        m.put("cores", d.computeUnits());
        m.put("simd_bits", d.simdBits());
        m.put("l2_mb", d.l2MB());
        m.put("clock_mhz", d.clockMHz());
        m.put("memory_bandwidth_gbps", d.memoryBandwidthGBps());
    }

    /** Reads {@link #describe}'s object (absent in files written before machine descriptions). */
    private static void described(JsonNode entry, String device, String where, Map<String, Device> out) {
        JsonNode m = entry.get("machine");
        if (m == null || m.isNull()) {
            return;
        }
        if (!m.isObject()) {
            throw InvalidInputException.of(where + ".machine: expected an object");
        }
        int cores = Fields.intInRange(m.path("cores"), where + ".machine.cores", 1, 1 << 16);
        int simd = Fields.intInRange(m.path("simd_bits"), where + ".machine.simd_bits", 0, 4096);
        double l2 = Fields.inRange(m.path("l2_mb"), where + ".machine.l2_mb", 0, 1e6);
        double clock = Fields.inRange(m.path("clock_mhz"), where + ".machine.clock_mhz", 0, 1e6);
        double bw = Fields.inRange(m.path("memory_bandwidth_gbps"), where + ".machine.memory_bandwidth_gbps", 0, 1e6);
        out.put(device, Device.cpu(device, cores, simd, l2, clock, bw));
    }

    /**
     * The largest basis coefficient a file may hold: a billion ms per unit of a basis term is no model (fitted ones
     * stay below 10), and larger ones would overflow a prediction.
     */
    private static final double MAX_COEFFICIENT = 1e9;

    /** The largest calibration log-factor a file may hold: a factor of e^20 is no calibration. */
    private static final double MAX_LOG_FACTOR = 20;

    /**
     * Reads {@link #toJson()} (or, as written before machines, one basis at the top level, for the machine
     * {@code onlyDevice}), validating every field's range.
     *
     * @throws InvalidInputException naming the field that is missing or out of range
     */
    public static HostStage read(JsonNode layer, String onlyDevice) {
        if (!layer.has("machines")) {
            return of(onlyDevice, model(layer, "layer_cost"));
        }
        Map<String, HostLayerModel> machines = new LinkedHashMap<>();
        Map<String, Device> descriptions = new TreeMap<>();
        int k = 0;
        for (JsonNode m : layer.path("machines")) {
            String where = "machines[" + k++ + "]";
            machines.put(m.path("device").asText(""), model(m, where));
            described(m, m.path("device").asText(""), where, descriptions);
        }
        if (machines.isEmpty()) {
            throw InvalidInputException.of("a host predictor needs at least one machine");
        }
        Map<String, Calibration> cal = new TreeMap<>();
        for (JsonNode c : layer.path("calibrations")) {
            String device = c.path("device").asText();
            String base = c.path("base").asText();
            if (!machines.containsKey(base)) {
                throw InvalidInputException.of("calibration of '" + device + "' names unknown base machine '" + base
                        + "'");
            }
            String at = "calibration of '" + device + "': ";
            described(c, device, "calibration of '" + device + "'", descriptions);
            double[] delta = factors(c.path("group_log_factors"), at + "group_log_factors");
            // absent in files written before setting factors
            double[] settings = factors(c.path("setting_log_factors"), at + "setting_log_factors");
            cal.put(device, new Calibration(base, Fields.inRange(c.path("all"), at + "all", -MAX_LOG_FACTOR,
                    MAX_LOG_FACTOR), delta, settings, Fields.intInRange(c.path("runs"), at + "runs", 0,
                    Integer.MAX_VALUE)));
        }
        return new HostStage(machines, cal, descriptions);
    }

    private static double[] factors(JsonNode d, String what) {
        double[] out = new double[d.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Fields.inRange(d.get(i), what + "[" + i + "]", -MAX_LOG_FACTOR, MAX_LOG_FACTOR);
        }
        return out;
    }

    private static HostLayerModel model(JsonNode model, String where) {
        List<String> columns = new ArrayList<>();
        model.path("columns").forEach(c -> columns.add(c.asText()));
        LayerBasis basis = columns.equals(LayerBasis.standard().columnNames()) ? LayerBasis.standard()
                : columns.equals(LayerBasis.v1().columnNames()) ? LayerBasis.v1() : null;
        if (basis == null) {
            throw InvalidInputException.of(where + ": the model's basis columns differ from this library's; refit "
                    + "the model");
        }
        JsonNode coef = model.path("coefficients");
        double[] theta = new double[columns.size()];
        if (coef.size() != theta.length) {
            throw InvalidInputException.of(where + ": " + coef.size() + " coefficients for " + theta.length
                    + " columns");
        }
        for (int k = 0; k < theta.length; k++) {
            // the fit is non-negative least squares: a negative coefficient is no model this library wrote
            theta[k] = Fields.inRange(coef.get(k), where + ": coefficient " + k + " (" + columns.get(k) + ")", 0,
                    MAX_COEFFICIENT);
        }
        return new HostLayerModel(basis, theta, Fields.inRange(model.get("shrinkage"), where + ": shrinkage", 0,
                Double.MAX_VALUE));
    }
}
