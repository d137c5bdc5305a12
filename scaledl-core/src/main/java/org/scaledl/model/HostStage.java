package org.scaledl.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.workload.Device;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The host stage: one {@link HostLayerModel} per CPU machine the training runs measured (machines are devices: a
 * basis fitted on one machine does not predict another), and, for machines known only from a few measured runs, a
 * <b>few-shot calibration</b> of the known machine that predicts those runs best.
 *
 * <p>A calibration multiplies the base machine's prediction by {@code exp(F_all + F_cell)}: {@code F_all} is the
 * median log-ratio of measured to predicted time over the target's runs, damped by {@code n / (n + 2)} (a few runs say
 * less); {@code F_cell} is the same for the runs of the workload's cell (phase × one or several threads × one or
 * several workers) after {@code F_all}, damped by its own count. With no runs of a cell the whole-machine factor
 * applies. This is the CPU counterpart of {@link DeviceLayerModel#calibrate}.
 *
 * <p>A workload without a device is the only machine's when there is exactly one; otherwise it must name one.
 */
final class HostStage implements LayerStage {
    /** Keyed by device name; {@code ""} for measurements without a machine description. */
    private final Map<String, HostLayerModel> machines;
    private final Map<String, Calibration> calibrations;

    /**
     * A machine known from a few runs.
     *
     * @param base  the fitted machine whose model it scales
     * @param all   {@code F_all}
     * @param cells {@code F_cell} by cell key ({@link #cell})
     * @param runs  runs it was calibrated on
     */
    record Calibration(String base, double all, Map<String, Double> cells, int runs) {
        Calibration {
            cells = Map.copyOf(cells);
        }
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

    /** {@code phase/threads/workers}: the cell of a calibration. */
    static String cell(Workload w) {
        return w.phase().label() + "/" + (w.threads() > 1 ? "mt" : "st") + "/" + (w.worldSize() > 1 ? "dp" : "single");
    }

    private double factor(Calibration c, Workload w) {
        return Math.exp(c.all() + c.cells().getOrDefault(cell(w), 0.0));
    }

    @Override
    public double predictMillis(Workload w) {
        String m = machineOf(w);
        Calibration c = calibrations.get(m);
        if (c == null) {
            return machines.get(m).predictMillis(w);
        }
        return machines.get(c.base()).predictMillis(w) * factor(c, w);
    }

    @Override
    public Prediction predict(Workload w) {
        String m = machineOf(w);
        Calibration c = calibrations.get(m);
        if (c == null) {
            return machines.get(m).predict(w);
        }
        Prediction base = machines.get(c.base()).predict(w);
        double f = factor(c, w);
        List<Prediction.Contribution> parts = new ArrayList<>();
        base.breakdown().forEach(x -> parts.add(x.scaled(f)));
        double ms = base.millis() * f;
        return new Prediction(ms, ms, ms, parts);
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
            double[] r = new double[own.size()];
            for (int i = 0; i < r.length; i++) {
                r[i] = Math.log(own.get(i).millis() / Math.max(1e-9, model.predictMillis(own.get(i).workload())));
            }
            double all = damped(r);
            Map<String, List<Double>> cells = new TreeMap<>();
            for (int i = 0; i < r.length; i++) {
                cells.computeIfAbsent(cell(own.get(i).workload()), k -> new ArrayList<>()).add(r[i] - all);
            }
            Map<String, Double> f = new TreeMap<>();
            cells.forEach((k, v) -> f.put(k, damped(v.stream().mapToDouble(Double::doubleValue).toArray())));
            out.put(device, new Calibration(base, all, f, own.size()));
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

    /** {@code n / (n + 2) · median}: a correction that trusts few measurements less. */
    private static double damped(double[] r) {
        return r.length / (r.length + 2.0) * Quantiles.median(r);
    }
}
