package org.scaledl.model.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.Arrays;
import java.util.List;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;

/**
 * The calibrated cost of a Megatron iteration from its {@link MegatronTerms}:
 *
 * <pre>
 *   gpu     = Σ_contractions max(c_dense · t_i, floor_i) + c_other · other + c_tensor · tensor-parallel collectives
 *   host    = c_step · layer executions
 *   compute = (gpu⁸ + host⁸)^⅛                       (a smooth max: the slower of the GPU and the host's dispatch)
 *   time    = compute + c_send · hand-offs + c_pipe · hand-off transfers + c_data · data-parallel reduction
 *             + c_opt · optimizer step + c_fixed
 * </pre>
 *
 * The GPU works while the host dispatches the next layer's kernels, so whichever is slower sets the pace: small
 * micro-batches on many tensor-parallel ranks are bound by the framework's time per layer, large ones by the GPU.
 * The coefficients are fitted on measured iterations ({@code MegatronFit}); without a fit every scale is 1 and the
 * host and fixed costs 0.
 *
 * @param coefficients {@code c_dense, c_other, c_tensor, c_step (ms), c_send (ms), c_pipe, c_data, c_opt,
 *                     c_fixed (ms)}, each finite and non-negative
 * @param interval     the 90 % interval's log-ratio ends of its predictions ({@code [low ≤ 0, high ≥ 0]}), from the
 *                     runs each predicted by the model fitted without its group
 */
public record MegatronModel(double[] coefficients, double[] interval) {
    /** The names of the coefficients, in order (their saved form). */
    public static final List<String> NAMES = List.of("dense", "other", "tensor_comm", "ms_per_layer_step",
            "ms_per_send", "pipeline_comm", "data_comm", "optimizer", "fixed_ms");
    /** The exponent of the smooth max of GPU and host time. */
    static final double SMOOTH = 8;

    /** Validates and copies. */
    public MegatronModel {
        Checks.argument(coefficients.length == NAMES.size(), "%s coefficients for %s", coefficients.length,
                NAMES.size());
        for (double c : coefficients) {
            Checks.argument(Double.isFinite(c) && c >= 0, "coefficients must be finite and >= 0: %s",
                    Arrays.toString(coefficients));
        }
        coefficients = coefficients.clone();
        Checks.argument(interval.length == 2 && interval[0] <= 0 && interval[1] >= 0, "interval [%s] must hold "
                + "a non-positive and a non-negative log-ratio", Arrays.toString(interval));
        interval = interval.clone();
    }

    /** A model without an interval of its own. */
    public MegatronModel(double[] coefficients) {
        this(coefficients, new double[2]);
    }

    /** Every scale 1, no host or fixed cost: the physics alone. */
    public static MegatronModel uncalibrated() {
        return new MegatronModel(new double[] {1, 1, 1, 0, 0, 1, 1, 1, 0});
    }

    /** A copy with an interval. */
    public MegatronModel withInterval(double low, double high) {
        return new MegatronModel(coefficients, new double[] {low, high});
    }

    @Override
    public double[] coefficients() {
        return coefficients.clone();
    }

    @Override
    public double[] interval() {
        return interval.clone();
    }

    /** The contractions' calibrated time (each at least its floor), ms. */
    double dense(MegatronTerms t) {
        double s = 0;
        double c = coefficients[0];
        for (int i = 0; i < t.denseTree().length; i++) {
            s += Math.max(c * t.denseTree()[i], t.denseFloor()[i]);
        }
        return s;
    }

    /** The GPU's calibrated time on the critical path, ms. */
    double gpu(MegatronTerms t) {
        return dense(t) + coefficients[1] * t.other() + coefficients[2] * t.tensorComm();
    }

    /** The compute part: the smooth max of the GPU's and the host's time, ms. */
    double compute(MegatronTerms t) {
        double g = gpu(t);
        double h = coefficients[3] * t.layerSteps();
        if (h == 0) {
            return g;
        }
        double m = Math.max(g, h);
        return m * Math.pow(Math.pow(g / m, SMOOTH) + Math.pow(h / m, SMOOTH), 1 / SMOOTH);
    }

    /** The iteration's time, ms. */
    public double millis(MegatronTerms t) {
        return compute(t) + coefficients[4] * t.sends() + coefficients[5] * t.pipelineComm()
                + coefficients[6] * t.dataComm() + coefficients[7] * t.optimizer() + coefficients[8];
    }

    /** The saved form: the coefficients by name. */
    public JsonNode toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode o = JsonNodeFactory.instance.objectNode();
        for (int i = 0; i < coefficients.length; i++) {
            o.put(NAMES.get(i), coefficients[i]);
        }
        o.putArray("interval_log_ratios").add(interval[0]).add(interval[1]);
        return o;
    }

    /**
     * Reads {@link #toJson()}, each coefficient in {@code [0, 10⁶]}.
     *
     * @throws InvalidInputException naming a missing or out-of-range coefficient
     */
    public static MegatronModel fromJson(JsonNode o) {
        double[] c = new double[NAMES.size()];
        for (int i = 0; i < c.length; i++) {
            c[i] = org.scaledl.model.file.Fields.inRange(o.get(NAMES.get(i)), "megatron." + NAMES.get(i), 0, 1e6);
        }
        JsonNode iv = o.path("interval_log_ratios");
        return new MegatronModel(c, new double[] {org.scaledl.model.file.Fields.inRange(iv.get(0),
                "megatron.interval_log_ratios[0]", -10, 0), org.scaledl.model.file.Fields.inRange(iv.get(1),
                        "megatron.interval_log_ratios[1]", 0, 10)});
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MegatronModel m && Arrays.equals(m.coefficients, coefficients)
                && Arrays.equals(m.interval, interval);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(coefficients) * 31 + Arrays.hashCode(interval);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("MegatronModel[");
        for (int i = 0; i < coefficients.length; i++) {
            b.append(i == 0 ? "" : ", ").append(NAMES.get(i)).append('=').append(String.format(java.util.Locale.ROOT,
                    "%.4g", coefficients[i]));
        }
        return b.append(']').toString();
    }
}
