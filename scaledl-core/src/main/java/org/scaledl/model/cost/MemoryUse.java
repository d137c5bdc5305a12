package org.scaledl.model.cost;

import java.util.Locale;
import org.scaledl.Checks;

/**
 * What one GPU of a transformer job's most loaded pipeline stage holds at its peak, GiB: the parts whose sum is the
 * prediction's memory ({@link org.scaledl.model.Prediction#memoryGb()}), as a capacity planner reads them.
 *
 * @param stage                the most loaded pipeline stage (1-based)
 * @param stages               the pipeline's stages
 * @param training             whether the job trains (its states are then weights, gradients and optimizer states)
 * @param statesGb             weights, and in training their gradients and optimizer states, as ZeRO shards them
 * @param lowPrecisionCopiesGb the low-precision recipe's quantised copies of the weights (0 without one)
 * @param activationsGb        what the micro-batches in flight keep for the backward pass (in inference the forward
 *                             pass's activations, with the key/value cache where it is held)
 * @param microBatchesInFlight how many micro-batches' activations are held at the peak
 * @param logitsGb             the last stage's output logits kept for the loss (0 elsewhere)
 * @param runtimeGb            what every process holds besides its tensors (CUDA context, library workspaces,
 *                             communication buffers)
 * @param hostGb               offloaded activations kept in the host's memory (not the GPU's: not in
 *                             {@link #totalGb()})
 */
public record MemoryUse(int stage, int stages, boolean training, double statesGb, double lowPrecisionCopiesGb,
        double activationsGb, double microBatchesInFlight, double logitsGb, double runtimeGb, double hostGb) {
    /** Bytes in a GiB (2³⁰), the unit of every memory figure the library gives. */
    public static final double BYTES_PER_GIB = 1L << 30;

    /** Validates: a stage of the pipeline, every part finite and at least 0. */
    public MemoryUse {
        Checks.argument(stages >= 1 && stage >= 1 && stage <= stages, "stage %s of %s", stage, stages);
        for (double v : new double[] {statesGb, lowPrecisionCopiesGb, activationsGb, microBatchesInFlight, logitsGb,
            runtimeGb, hostGb}) {
            Checks.argument(Double.isFinite(v) && v >= 0, "memory parts must be finite and >= 0: %s", v);
        }
    }

    /** The GPU's memory: every part but what is offloaded to the host, GiB. */
    public double totalGb() {
        return statesGb + lowPrecisionCopiesGb + activationsGb + logitsGb + runtimeGb;
    }

    /** The parts in words, one line (as an out-of-memory warning gives them). */
    public String describe() {
        return String.format(Locale.ROOT, "stage %d of %d: %s %.1f GiB%s, activations %.1f GiB (%s micro-batch%s in "
                + "flight)%s, runtime %.1f GiB", stage, stages, training ? "weights, gradients and optimizer states"
                : "weights", statesGb, lowPrecisionCopiesGb > 0 ? String.format(Locale.ROOT,
                ", low-precision weight copies %.1f GiB", lowPrecisionCopiesGb) : "", activationsGb,
                microBatchesInFlight == Math.rint(microBatchesInFlight) ? String.valueOf((long) microBatchesInFlight)
                        : String.format(Locale.ROOT, "%.2f", microBatchesInFlight),
                microBatchesInFlight == 1 ? "" : "es", logitsGb > 0 ? String.format(Locale.ROOT, ", logits %.1f GiB",
                logitsGb) : "", runtimeGb) + (hostGb > 0 ? String.format(Locale.ROOT,
                "; this stage's offloaded activations in the host's memory %.1f GiB", hostGb) : "");
    }
}
