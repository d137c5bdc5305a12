package org.scaledl.model;

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
 * counterpart of {@link DeviceLayerModel#calibrate}.
 *
 * <p>A workload without a device is the only machine's when there is exactly one; otherwise it must name one.
 */
final class HostStage implements LayerStage {
    /** Keyed by device name; {@code ""} for measurements without a machine description. */
    private final Map<String, HostLayerModel> machines;
    private final Map<String, Calibration> calibrations;

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
    record Calibration(String base, double all, double[] delta, double[] settings, int runs) {
        Calibration {
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

    HostStage(Map<String, HostLayerModel> machines, Map<String, Calibration> calibrations) {
        Checks.argument(!machines.isEmpty(), "a host stage needs a fitted machine");
        this.machines = Collections.unmodifiableMap(new LinkedHashMap<>(machines));
        this.calibrations = Collections.unmodifiableMap(new TreeMap<>(calibrations));
    }

    /** One machine. */
    static HostStage of(String device, HostLayerModel model) {
        return new HostStage(Map.of(device, model), Map.of());
    }

    Map<String, HostLayerModel> machines() {
        return machines;
    }

    Map<String, Calibration> calibrations() {
        return calibrations;
    }

    /** The names of every machine it predicts (fitted and calibrated), sorted. */
    List<String> devices() {
        List<String> out = new ArrayList<>(machines.keySet());
        out.addAll(calibrations.keySet());
        out.removeIf(String::isEmpty);
        Collections.sort(out);
        return out;
    }

    @Override
    public String kind() {
        return "host";
    }

    /** The machine name a workload runs on, or an explanation of why it cannot be predicted. */
    String machineOf(Workload w) {
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
        if (machines.size() == 1 && calibrations.isEmpty()) {
            return machines.keySet().iterator().next();
        }
        throw new IllegalArgumentException("this predictor knows several machines " + machineList()
                + "; say which one the workload runs on (Workload.Builder.device)");
    }

    private String machineList() {
        List<String> d = devices();
        return d.isEmpty() ? "[the host of its dataset]" : d.toString();
    }


    @Override
    public double predictMillis(Workload w) {
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
    public Prediction predict(Workload w) {
        String m = machineOf(w);
        Calibration c = calibrations.get(m);
        if (c == null) {
            return machines.get(m).predict(w);
        }
        HostLayerModel model = machines.get(c.base());
        Prediction base = model.predict(w);
        int workloadGroup = model.basis().groupCount();
        List<Prediction.Contribution> parts = new ArrayList<>();
        double ms = 0;
        for (Prediction.Contribution x : base.breakdown()) {
            int g = x.kind() == Prediction.Kind.LAYER ? model.basis().groupOf(w, layerFeatures(model, w, x))
                    : workloadGroup;
            Prediction.Contribution y = x.scaled(c.groupFactor(g, w));
            parts.add(y);
            ms += y.millis();
        }
        parts.sort(java.util.Comparator.comparingDouble(Prediction.Contribution::millis).reversed());
        return new Prediction(ms, ms, ms, parts);
    }

    private static org.scaledl.workload.LayerFeatures layerFeatures(HostLayerModel m, Workload w,
            Prediction.Contribution c) {
        int index = w.graph().indexOf(c.name()).orElseThrow();
        return m.basis().features(w).get(index);
    }

    /**
     * A copy calibrated to the machines of some runs (each run's workload names its machine): every machine the runs
     * measure gets a calibration of the fitted machine that predicts them best (by median absolute log-ratio), or of
     * itself when it is a fitted one; earlier calibrations of those machines are replaced.
     *
     * @throws IllegalArgumentException for a run without a CPU machine
     */
    HostStage calibrate(List<Sample> runs) {
        Map<String, List<Sample>> byMachine = new TreeMap<>();
        for (Sample s : runs) {
            Device d = s.workload().device().orElseThrow(() -> new IllegalArgumentException(
                    "a calibration run must name its machine (Workload.Builder.device): " + s.workload()));
            Checks.argument(!d.isGpu(), "calibration run on GPU %s: host predictors calibrate to CPU "
                    + "machines", d.name());
            byMachine.computeIfAbsent(d.name(), k -> new ArrayList<>()).add(s);
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
        return new HostStage(machines, out);
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
}
