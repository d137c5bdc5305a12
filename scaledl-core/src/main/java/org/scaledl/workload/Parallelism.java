package org.scaledl.workload;

import java.util.List;
import org.scaledl.Checks;


/**
 * How a workload is spread over devices, the way Megatron-LM does it: data-parallel replicas, tensor-parallel shards
 * of each layer (optionally with sequence parallelism), pipeline stages (optionally interleaved: several model chunks
 * per stage), the micro-batches each replica's batch is split into (through the pipeline, or accumulated one after
 * another without one), and the ZeRO stage of the data-parallel optimizer. The workload's batch is per data-parallel
 * replica; the job uses {@code data · tensor · pipeline} devices ({@link #ranks()}).
 *
 * <pre>{@code
 * Parallelism.data(8);                                  // DDP over 8 workers
 * Parallelism.of(2, 4, 1, 1);                          // 2 replicas of a model split 4 ways
 * Parallelism.of(1, 1, 4, 8);                          // 4 pipeline stages, 8 micro-batches (1F1B)
 * Parallelism.of(8, 8, 8, 64).withSequenceParallel(true).withVirtualStages(2).withZeroStage(1);
 * }</pre>
 *
 * @param data             data-parallel replicas (each computes the full model on its own batch)
 * @param tensor           tensor-parallel shards (each layer's work split this many ways)
 * @param pipeline         pipeline stages (consecutive layers on different devices)
 * @param microBatches     micro-batches per replica batch (through the pipeline, or accumulated without one)
 * @param sequenceParallel Megatron's sequence parallelism: the layers off the tensor-parallel region (norms,
 *                         dropout) split along the sequence, the all-reduces become reduce-scatter plus all-gather
 * @param zeroStage        ZeRO stage of the data-parallel optimizer: 0 none, 1 optimizer states sharded, 2 and
 *                         gradients, 3 and weights (gathered before use)
 * @param virtualStages    model chunks per pipeline stage (1: the 1F1B schedule; more: the interleaved one)
 */
public record Parallelism(int data, int tensor, int pipeline, int microBatches, boolean sequenceParallel,
        int zeroStage, int virtualStages) {
    private static final Parallelism NONE = new Parallelism(1, 1, 1, 1);

    /** Validates. */
    public Parallelism {
        Checks.argument(data > 0 && tensor > 0 && pipeline > 0 && microBatches > 0,
                "parallel degrees must be positive: data %s, tensor %s, pipeline %s, micro-batches %s", data, tensor,
                pipeline, microBatches);
        Checks.argument((long) data * tensor * pipeline <= Integer.MAX_VALUE, "too many ranks");
        Checks.argument(zeroStage >= 0 && zeroStage <= 3, "ZeRO stage must be 0..3: %s", zeroStage);
        Checks.argument(virtualStages >= 1, "virtual pipeline stages must be positive: %s", virtualStages);
        Checks.argument(virtualStages == 1 || pipeline > 1, "an interleaved schedule needs a pipeline");
        Checks.argument(!sequenceParallel || tensor > 1, "sequence parallelism needs tensor parallelism");
    }

    /** The four degrees with no sequence parallelism, no ZeRO and the 1F1B schedule. */
    public Parallelism(int data, int tensor, int pipeline, int microBatches) {
        this(data, tensor, pipeline, microBatches, false, 0, 1);
    }

    /** A copy with or without sequence parallelism. */
    public Parallelism withSequenceParallel(boolean value) {
        return new Parallelism(data, tensor, pipeline, microBatches, value, zeroStage, virtualStages);
    }

    /** A copy with another ZeRO stage (0..3). */
    public Parallelism withZeroStage(int value) {
        return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, value, virtualStages);
    }

    /** A copy with model chunks per stage (the interleaved schedule when more than 1). */
    public Parallelism withVirtualStages(int value) {
        return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, zeroStage, value);
    }

    /** One device, no parallelism. */
    public static Parallelism none() {
        return NONE;
    }

    /** {@code n} data-parallel replicas. */
    public static Parallelism data(int n) {
        return new Parallelism(n, 1, 1, 1);
    }

    /** All four degrees. */
    public static Parallelism of(int data, int tensor, int pipeline, int microBatches) {
        return new Parallelism(data, tensor, pipeline, microBatches);
    }

    /** Devices the job uses: {@code data · tensor · pipeline}. */
    public int ranks() {
        return data * tensor * pipeline;
    }

    /** True when only data parallelism (or none) is used. */
    public boolean isDataOnly() {
        return tensor == 1 && pipeline == 1;
    }

    /**
     * A compact label: {@code none}, or the degrees above 1 joined by {@code -}: {@code dp8}, {@code tp4},
     * {@code pp4_8} (4 stages, 8 micro-batches), {@code dp2-tp4}, {@code mb8} (8 accumulated micro-batches),
     * {@code tp8sp}, {@code pp8_64v2}, {@code zero1}.
     */
    public String label() {
        java.util.List<String> parts = new java.util.ArrayList<>();
        if (data > 1) {
            parts.add("dp" + data);
        }
        if (tensor > 1) {
            parts.add("tp" + tensor + (sequenceParallel ? "sp" : ""));
        }
        if (pipeline > 1) {
            parts.add("pp" + pipeline + "_" + microBatches + (virtualStages > 1 ? "v" + virtualStages : ""));
        } else if (microBatches > 1) {
            parts.add("mb" + microBatches);
        }
        if (zeroStage > 0) {
            parts.add("zero" + zeroStage);
        }
        return parts.isEmpty() ? "none" : String.join("-", parts);
    }

    @Override
    public String toString() {
        return label();
    }
}
