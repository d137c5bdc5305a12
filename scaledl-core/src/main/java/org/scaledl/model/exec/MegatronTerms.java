package org.scaledl.model.exec;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;
import org.scaledl.Checks;

/**
 * The uncalibrated parts of one Megatron training (or inference) iteration, on the critical path of its schedule, by
 * {@link ExecutionTerm}: what {@link MegatronModel}'s coefficients scale. Contractions are kept layer by layer, each
 * with its class (16-bit, FP8 or FP4 matrix units: {@link ExecutionTerm#dense()}) and its floor (its work at the
 * highest fraction of the peak any contraction of that kind sustained in the kernel data), so that a calibration never
 * makes a large one faster than physics allows. Every other term is one number: a time in ms, or for
 * {@link ExecutionTerm#LAYER_STEP}, {@link ExecutionTerm#EXPERT_LAYER_STEP} and {@link ExecutionTerm#SEND} a count
 * (layer executions, those of layers with routed experts, hand-offs);
 * {@link ExecutionTerm#FIXED} is always 1. The data-parallel reduction's exposed time may be a function of how much
 * longer than the micro-batch's uncalibrated GPU time the passes it hides behind last ({@link Builder#dataComm}; a
 * model takes its compute part, calibrated and paced by the host where the host bounds it, over {@link #gpuRaw});
 * its {@link #value} is that function at 1. Immutable.
 *
 * <pre>{@code
 * MegatronTerms t = MegatronTerms.builder()
 *         .contraction(ExecutionTerm.DENSE, 12.0, 8.0)       // predicted ms, floor ms
 *         .add(ExecutionTerm.OTHER, 3.5).add(ExecutionTerm.DATA_COMM, 1.2).build();
 * t.value(ExecutionTerm.DENSE);    // 12.0
 * }</pre>
 */
public final class MegatronTerms {
    private static final ExecutionTerm[] TERMS = ExecutionTerm.values();
    private final double[] tree;
    private final double[] floor;
    private final ExecutionTerm[] classOf;
    /** Per contraction, {@link MegatronModel#shrunk}: the same for every coefficient, so a fit computes it once. */
    private final double[] shrunk;
    /** Per term (by ordinal), its value; contraction classes hold their trees' sum. */
    private final double[] values;
    /** The data-parallel reduction's exposed time by the backward pass's stretch (null: none given). */
    private final DoubleUnaryOperator dataComm;
    /** The function's value at 1 (a part of {@link #value} of {@link ExecutionTerm#DATA_COMM}). */
    private final double dataCommAtOne;
    /** {@link #gpuRaw()}. */
    private final double gpuRaw;

    private MegatronTerms(double[] tree, double[] floor, ExecutionTerm[] classOf, double[] values,
            DoubleUnaryOperator dataComm) {
        this.tree = tree;
        this.floor = floor;
        this.classOf = classOf;
        this.values = values;
        this.dataComm = dataComm;
        this.dataCommAtOne = dataComm == null ? 0 : dataComm.applyAsDouble(1);
        double raw = dense();
        for (ExecutionTerm k : TERMS) {
            if (k.fit() == ExecutionTerm.Fit.GPU && !k.dense()) {
                raw += values[k.ordinal()];
            }
        }
        this.gpuRaw = raw;
        this.shrunk = new double[tree.length];
        for (int i = 0; i < tree.length; i++) {
            shrunk[i] = MegatronModel.shrunk(tree[i], floor[i]);
        }
    }

    /** Starts an empty set of terms. */
    public static Builder builder() {
        return new Builder();
    }

    /** Contraction layers held. */
    public int contractions() {
        return tree.length;
    }

    /** A contraction's predicted time on the critical path (ms: every repeat, every micro-batch, fill and drain). */
    public double tree(int contraction) {
        return tree[contraction];
    }

    /**
     * A contraction's floor (ms): its work at the sustained ceiling of its peak on the same path, and no less than its
     * weights read from memory and its activations beyond the L2 at the bandwidth ({@code bytesFloorMillis}).
     */
    public double floor(int contraction) {
        return floor[contraction];
    }

    /** A contraction's predicted time with its distance from the floor shrunk ({@link MegatronModel#shrunk}), ms. */
    double shrunk(int contraction) {
        return shrunk[contraction];
    }

    /** A contraction's class: {@link ExecutionTerm#DENSE}, {@link ExecutionTerm#DENSE_FP8} or FP4. */
    public ExecutionTerm classOf(int contraction) {
        return classOf[contraction];
    }

    /**
     * A term's uncalibrated value: ms (a contraction class: its contractions' predicted sum), a count for the layer
     * steps and sends, 1 for the fixed cost.
     */
    public double value(ExecutionTerm term) {
        return term == ExecutionTerm.FIXED ? 1 : values[term.ordinal()];
    }

    /**
     * The data-parallel reduction's exposed time (uncalibrated, ms) where the passes it hides behind last
     * {@code stretch} times the micro-batch's uncalibrated GPU time: {@link #value} of {@link ExecutionTerm#DATA_COMM}
     * at 1 (a model stretches it by its compute part over {@link #gpuRaw}, {@link MegatronModel#dataComm}). Without
     * a function given ({@link Builder#dataComm}), the value at every stretch.
     *
     * @throws IllegalArgumentException for a stretch that is not positive and finite, or where the function given
     *         is negative or not finite at it
     */
    public double dataComm(double stretch) {
        Checks.argument(stretch > 0 && Double.isFinite(stretch), "stretch must be finite and > 0: %s", stretch);
        double v = values[ExecutionTerm.DATA_COMM.ordinal()];
        if (dataComm == null || stretch == 1) {
            return v;
        }
        double at = dataComm.applyAsDouble(stretch);
        Checks.argument(at >= 0 && Double.isFinite(at), "the data-parallel exposure at stretch %s must be finite and "
                + ">= 0: %s", stretch, at);
        return v - dataCommAtOne + at;
    }

    /** The GPUs' uncalibrated time: the contractions' predicted times and every other GPU term's value (ms). */
    public double gpuRaw() {
        return gpuRaw;
    }

    /** The contractions' predicted time over every class, uncalibrated (ms). */
    public double dense() {
        double s = 0;
        for (double t : tree) {
            s += t;
        }
        return s;
    }

    /** Every term's value ({@link #value}), for reports. */
    public Map<ExecutionTerm, Double> values() {
        Map<ExecutionTerm, Double> out = new EnumMap<>(ExecutionTerm.class);
        for (ExecutionTerm t : TERMS) {
            out.put(t, value(t));
        }
        return out;
    }

    /** Collects terms; a term added twice adds up. */
    public static final class Builder {
        private final List<double[]> contractions = new ArrayList<>();
        private final List<ExecutionTerm> classes = new ArrayList<>();
        private final double[] values = new double[TERMS.length];
        private DoubleUnaryOperator dataComm;

        private Builder() {
        }

        /**
         * Adds the data-parallel reduction's exposed time (ms) as a function of the stretch of the passes it hides
         * behind (1: the micro-batch's uncalibrated GPU time): its value at 1 joins {@link ExecutionTerm#DATA_COMM}'s
         * value, and {@link MegatronTerms#dataComm} evaluates it at the stretch a model gives. The function must be
         * stateless, finite, non-negative and non-increasing (a longer pass hides no less). Given once.
         *
         * @throws IllegalArgumentException where one was given already, or where its value at 1 is negative or not
         *         finite
         */
        public Builder dataComm(DoubleUnaryOperator exposedByStretch) {
            java.util.Objects.requireNonNull(exposedByStretch, "exposedByStretch");
            Checks.argument(dataComm == null, "the data-parallel exposure is given once");
            add(ExecutionTerm.DATA_COMM, exposedByStretch.applyAsDouble(1));
            dataComm = exposedByStretch;
            return this;
        }

        /**
         * A contraction of a class ({@link ExecutionTerm#dense()}), its predicted time and its floor (ms).
         *
         * @throws IllegalArgumentException for a term that is no contraction class or a negative or non-finite time
         */
        public Builder contraction(ExecutionTerm cls, double predictedMillis, double floorMillis) {
            // checked without building the message's arguments: a layout search adds millions
            if (!cls.dense() || !(predictedMillis >= 0 && floorMillis >= 0 && Double.isFinite(predictedMillis)
                    && Double.isFinite(floorMillis))) {
                Checks.argument(cls.dense(), "%s is no contraction class", cls);
                Checks.argument(false, "contraction times must be finite and >= 0: %s, %s", predictedMillis,
                        floorMillis);
            }
            contractions.add(new double[] {predictedMillis, floorMillis});
            classes.add(cls);
            values[cls.ordinal()] += predictedMillis;
            return this;
        }

        /**
         * Adds to a term's value.
         *
         * @throws IllegalArgumentException for a contraction class (use {@link #contraction}), the fixed cost, or a
         *         negative or non-finite value
         */
        public Builder add(ExecutionTerm term, double value) {
            if (term.dense() || term == ExecutionTerm.FIXED || !(value >= 0 && Double.isFinite(value))) {
                Checks.argument(!term.dense() && term != ExecutionTerm.FIXED, "%s is not added as a value", term);
                Checks.argument(false, "%s must be finite and >= 0: %s", term, value);
            }
            values[term.ordinal()] += value;
            return this;
        }

        /** The terms. */
        public MegatronTerms build() {
            double[] tree = new double[contractions.size()];
            double[] floor = new double[tree.length];
            for (int i = 0; i < tree.length; i++) {
                tree[i] = contractions.get(i)[0];
                floor[i] = contractions.get(i)[1];
            }
            return new MegatronTerms(tree, floor, classes.toArray(new ExecutionTerm[0]), values.clone(),
                    dataComm);
        }
    }
}
