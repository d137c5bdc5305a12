package org.scaledl.model;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.scaledl.Checks;
import org.scaledl.workload.OpFamily;

/**
 * A predicted iteration time with an interval, an explanation and what the prediction should not be trusted for.
 *
 * <p>The interval {@code [lowMillis, highMillis]} is an empirical 90 % prediction interval: quantiles of the
 * method's out-of-sample relative errors (for ScaleDL, from cross-validation over model families inside the training
 * data), widened where the workload lies outside what the model was fitted on. The breakdown lists each layer's
 * predicted contribution and the workload-level terms; its entries add up to {@link #millis()}. The warnings say
 * where the workload leaves the model's training domain ({@link Domain}) and how much of the prediction that
 * concerns; an empty list means none of the checks fired, not that the prediction is exact.
 *
 * @param millis     predicted time of one iteration, ms
 * @param lowMillis  lower end of the prediction interval
 * @param highMillis upper end of the prediction interval
 * @param breakdown  contributions, largest first (may be empty)
 * @param warnings   what the prediction should not be trusted for (may be empty)
 * @param samples    samples one iteration processes across all data-parallel replicas (0 when not known)
 * @param memoryGb   the peak memory one device needs (weights, gradients, optimizer state, activations), GiB, when
 *                   the predictor estimates it
 * @param job        what one iteration does across the job (GPUs, tokens, model FLOPs; {@link Job#UNKNOWN} when not
 *                   known)
 * @param memoryParts what {@code memoryGb} is made of, for a transformer job on a GPU: its most loaded pipeline
 *                   stage's weights, gradients and optimizer states, low-precision copies, activations, logits and
 *                   runtime, and what it offloads to the host; empty where the predictor does not part it
 */
public record Prediction(double millis, double lowMillis, double highMillis, List<Contribution> breakdown,
        List<PredictionWarning> warnings, double samples, java.util.OptionalDouble memoryGb, Job job,
        Optional<org.scaledl.model.cost.MemoryUse> memoryParts) {

    /**
     * What one iteration does across the whole job, as NeMo and Megatron publish their throughput: the GPUs it uses,
     * the tokens it processes (sequences times their length; 0 for models without sequences) and its model FLOPs
     * (three times the forward pass's contraction FLOPs in training, once in inference; a fused causal attention
     * counted at its half; recomputation not counted).
     *
     * @param gpus       devices the job uses (0: not known)
     * @param tokens     tokens per iteration (0: not a sequence model)
     * @param modelFlops model FLOPs per iteration (0: not known)
     */
    public record Job(int gpus, double tokens, double modelFlops) {
        /** Nothing known. */
        public static final Job UNKNOWN = new Job(0, 0, 0);

        /** Validates. */
        public Job {
            Checks.argument(gpus >= 0 && tokens >= 0 && modelFlops >= 0 && Double.isFinite(tokens)
                    && Double.isFinite(modelFlops), "job figures must be finite and >= 0");
        }
    }

    /** Validates and copies. */
    public Prediction {
        Checks.argument(Double.isFinite(millis) && millis >= 0, "prediction must be finite: %s", millis);
        Checks.argument(lowMillis >= 0 && lowMillis <= millis && millis <= highMillis && Double.isFinite(highMillis),
                "interval [%s, %s] must be finite, from 0 up, and contain %s", lowMillis, highMillis, millis);
        Checks.argument(samples >= 0 && Double.isFinite(samples), "samples must be finite and >= 0: %s", samples);
        breakdown = copyWithoutNulls(breakdown, "breakdown");
        warnings = copyWithoutNulls(warnings, "warnings");
        double parts = 0;
        for (Contribution c : breakdown) {
            parts += c.millis();
        }
        Checks.argument(breakdown.isEmpty() || Math.abs(parts - millis) <= 1e-6 * (1 + millis),
                "the breakdown's contributions add up to %s ms, not the prediction's %s", parts, millis);
        Objects.requireNonNull(memoryGb, "memoryGb");
        Checks.argument(memoryGb.isEmpty() || Double.isFinite(memoryGb.getAsDouble()) && memoryGb.getAsDouble() >= 0,
                "memory must be finite and >= 0: %s", memoryGb);
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(memoryParts, "memoryParts");
        Checks.argument(memoryParts.isEmpty() || memoryGb.isPresent() && Math.abs(memoryParts.get().totalGb()
                - memoryGb.getAsDouble()) <= 1e-9 * (1 + memoryGb.getAsDouble()), "memory parts %s are not the "
                + "memory %s", memoryParts, memoryGb);
    }

    /** An unmodifiable copy of {@code list}, refused naming it and the place of a null element. */
    private static <T> List<T> copyWithoutNulls(List<T> list, String name) {
        Objects.requireNonNull(list, name);
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == null) {
                throw new NullPointerException(name + " " + i + " is null");
            }
        }
        return List.copyOf(list);
    }

    /** A prediction whose memory is not parted. */
    public Prediction(double millis, double lowMillis, double highMillis, List<Contribution> breakdown,
            List<PredictionWarning> warnings, double samples, java.util.OptionalDouble memoryGb, Job job) {
        this(millis, lowMillis, highMillis, breakdown, warnings, samples, memoryGb, job, Optional.empty());
    }

    /** A prediction without job figures. */
    public Prediction(double millis, double lowMillis, double highMillis, List<Contribution> breakdown,
            List<PredictionWarning> warnings, double samples, java.util.OptionalDouble memoryGb) {
        this(millis, lowMillis, highMillis, breakdown, warnings, samples, memoryGb, Job.UNKNOWN);
    }

    /** A prediction without samples or memory. */
    public Prediction(double millis, double lowMillis, double highMillis, List<Contribution> breakdown,
            List<PredictionWarning> warnings) {
        this(millis, lowMillis, highMillis, breakdown, warnings, 0, java.util.OptionalDouble.empty());
    }

    /** Tokens per second per GPU, as NeMo and Megatron publish them, for sequence models on known GPUs. */
    public java.util.OptionalDouble tokensPerSecondPerGpu() {
        return job.tokens() > 0 && job.gpus() > 0 && millis > 0
                ? java.util.OptionalDouble.of(job.tokens() / (millis / 1000) / job.gpus())
                : java.util.OptionalDouble.empty();
    }

    /** Model TFLOP/s per GPU ({@link Job#modelFlops()} per second per GPU), when known. */
    public java.util.OptionalDouble modelTflopsPerGpu() {
        return job.modelFlops() > 0 && job.gpus() > 0 && millis > 0
                ? java.util.OptionalDouble.of(job.modelFlops() / (millis / 1000) / job.gpus() / 1e12)
                : java.util.OptionalDouble.empty();
    }

    /** A prediction without warnings. */
    public Prediction(double millis, double lowMillis, double highMillis, List<Contribution> breakdown) {
        this(millis, lowMillis, highMillis, breakdown, List.of());
    }

    /**
     * Samples per second across all workers ({@link #samples()} per predicted iteration), when the samples are
     * known.
     */
    public java.util.OptionalDouble throughputPerSecond() {
        return samples > 0 && millis > 0 ? java.util.OptionalDouble.of(samples / (millis / 1000))
                : java.util.OptionalDouble.empty();
    }

    /**
     * The name of the breakdown's entry of the pipeline's fill and drain: the busiest stage's GPUs idle while the
     * other stages run the first and last micro-batches ({@link Kind#OVERHEAD}).
     */
    public static final String PIPELINE_BUBBLE = org.scaledl.model.cost.StageCost.PIPELINE_BUBBLE;

    /**
     * The name of the breakdown's entry of the time the GPUs wait for the host to dispatch their kernels
     * ({@link Kind#OVERHEAD}).
     */
    public static final String HOST_DISPATCH = org.scaledl.model.cost.StageCost.HOST_DISPATCH;

    /** Whether the job needs more memory per device than the device has (a {@code OUT_OF_MEMORY} warning). */
    public boolean outOfMemory() {
        return warnings().stream().anyMatch(x -> x.kind() == PredictionWarning.Kind.OUT_OF_MEMORY);
    }

    /** A point prediction with no interval and no explanation. */
    public static Prediction point(double millis) {
        return new Prediction(millis, millis, millis, List.of(), List.of());
    }

    /** A copy with more warnings. */
    public Prediction withWarnings(List<PredictionWarning> more) {
        if (Objects.requireNonNull(more, "more").isEmpty()) {
            return this;
        }
        return new Prediction(millis, lowMillis, highMillis, breakdown,
                java.util.stream.Stream.concat(warnings.stream(), more.stream()).toList(), samples, memoryGb, job,
                memoryParts);
    }

    /** A copy whose interval is {@code [low, high]} (containing the point prediction). */
    Prediction withInterval(double low, double high) {
        return new Prediction(millis, Math.min(low, millis), Math.max(high, millis), breakdown, warnings, samples,
                memoryGb, job, memoryParts);
    }

    /** What a contribution is. */
    public enum Kind {
        /** One layer's forward (and backward) time. */
        LAYER,
        /** Collective communication (gradient all-reduce, tensor-parallel activations, pipeline hand-offs). */
        COMMUNICATION,
        /** Per-iteration overhead, optimizer step, worker contention. */
        OVERHEAD,
        /**
         * Computation that belongs to no layer of the graph: LoRA adapters' products ({@code lora-adapters}), a
         * low-precision recipe's quantisation of its operands ({@code quantisation}).
         */
        COMPUTE
    }

    /**
     * One term of a prediction.
     *
     * @param name   a layer's node name (for people), or a workload-level term such as {@code allreduce}
     * @param kind   what it is
     * @param family the layer's operator family ({@link Kind#LAYER} only)
     * @param layer  the layer's index in the workload's graph ({@link Kind#LAYER} only): the layer's identity
     * @param millis its predicted share, ms
     */
    public record Contribution(String name, Kind kind, Optional<OpFamily> family, OptionalInt layer, double millis) {
        /** Validates. */
        public Contribution {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(family, "family");
            Objects.requireNonNull(layer, "layer");
            Checks.argument(family.isPresent() == (kind == Kind.LAYER) && layer.isPresent() == (kind == Kind.LAYER),
                    "only layers have a family and an index");
            // (a correction may take time off: negative is a contribution, a NaN none)
            if (!Double.isFinite(millis)) {
                throw new IllegalArgumentException("contribution " + name + " must be a finite time: " + millis);
            }
        }

        /** A layer's contribution. */
        public static Contribution layer(int index, String name, OpFamily family, double millis) {
            return new Contribution(name, Kind.LAYER, Optional.of(family), OptionalInt.of(index), millis);
        }

        /** A workload-level term. */
        public static Contribution term(String name, Kind kind, double millis) {
            return new Contribution(name, kind, Optional.empty(), OptionalInt.empty(), millis);
        }

        /** {@code layer:CONV}, {@code communication} or {@code overhead}: a label for tables. */
        public String label() {
            return kind == Kind.LAYER ? "layer:" + family.orElseThrow() : kind.name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The same term scaled by a factor. */
        public Contribution scaled(double factor) {
            return new Contribution(name, kind, family, layer, millis * factor);
        }
    }
}
