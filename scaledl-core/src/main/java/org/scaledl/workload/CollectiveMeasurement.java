package org.scaledl.workload;

import java.util.Objects;
import org.scaledl.Checks;

/**
 * One measured all-reduce: a collective benchmark row (DeepBench, nccl-tests) as training data for a
 * communication model.
 *
 * @param device  device name (e.g. GPU model)
 * @param links   the interconnect
 * @param nodes   nodes taking part
 * @param ranks   ranks (devices) in total
 * @param bytes   message size in bytes
 * @param millis  measured time, ms
 */
public record CollectiveMeasurement(String device, Interconnect links, int nodes, int ranks, double bytes,
        double millis) {
    /** Validates. */
    public CollectiveMeasurement {
        Objects.requireNonNull(device);
        Objects.requireNonNull(links);
        Checks.argument(nodes > 0 && ranks >= 2 && ranks >= nodes, "need 2+ ranks on 1+ nodes");
        Checks.argument(bytes > 0 && millis > 0 && Double.isFinite(millis), "bad bytes or time");
    }
}
