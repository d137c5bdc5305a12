package org.scaledl.workload;

import java.util.List;
import org.scaledl.Checks;


/**
 * How a workload is spread over devices: data-parallel replicas, tensor-parallel shards of each layer, pipeline
 * stages, and the micro-batches a pipeline splits each replica's batch into. The workload's batch is per
 * data-parallel replica; the job uses {@code data · tensor · pipeline} devices ({@link #ranks()}).
 *
 * <pre>{@code
 * Parallelism.data(8);                      // DDP over 8 workers
 * Parallelism.of(2, 4, 1, 1);              // 2 replicas of a model split 4 ways
 * Parallelism.of(1, 1, 4, 8);              // 4 pipeline stages, 8 micro-batches
 * }</pre>
 *
 * @param data         data-parallel replicas (each computes the full model on its own batch)
 * @param tensor       tensor-parallel shards (each layer's work split this many ways)
 * @param pipeline     pipeline stages (consecutive layers on different devices)
 * @param microBatches micro-batches per replica batch in a pipeline (1 without a pipeline)
 */
public record Parallelism(int data, int tensor, int pipeline, int microBatches) {
    private static final Parallelism NONE = new Parallelism(1, 1, 1, 1);

    /** Validates. */
    public Parallelism {
        Checks.argument(data > 0 && tensor > 0 && pipeline > 0 && microBatches > 0,
                "parallel degrees must be positive: data %s, tensor %s, pipeline %s, micro-batches %s", data, tensor,
                pipeline, microBatches);
        Checks.argument(pipeline > 1 || microBatches == 1,
                "micro-batches (%s) need a pipeline of more than one stage", microBatches);
        Checks.argument((long) data * tensor * pipeline <= Integer.MAX_VALUE, "too many ranks");
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
     * {@code pp4_8} (4 stages, 8 micro-batches), {@code dp2-tp4}.
     */
    public String label() {
        if (ranks() == 1) {
            return "none";
        }
        java.util.List<String> parts = new java.util.ArrayList<>();
        if (data > 1) {
            parts.add("dp" + data);
        }
        if (tensor > 1) {
            parts.add("tp" + tensor);
        }
        if (pipeline > 1) {
            parts.add("pp" + pipeline + "_" + microBatches);
        }
        return String.join("-", parts);
    }

    @Override
    public String toString() {
        return label();
    }
}
