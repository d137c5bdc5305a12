package org.scaledl.workload;

import java.util.Objects;
import org.scaledl.Checks;

/**
 * One measured all-reduce: a collective benchmark row (DeepBench, nccl-tests) as training data for a
 * communication model.
 *
 * @param device  device name (e.g. GPU model)
 * @param topology the links inside and between the nodes
 * @param nodes   nodes taking part
 * @param ranks   ranks (devices) in total
 * @param bytes   message size in bytes
 * @param millis  measured time, ms
 * @param implementation the library or algorithm that ran it (DeepBench's {@code algorithm}, e.g. "NCCL 2.0 MPI");
 *                empty when unknown. The model does not use it (what it fits on rarely names every library it
 *                will be asked about); evaluations report errors by it.
 */
public record CollectiveMeasurement(String device, Topology topology, int nodes, int ranks, double bytes,
        double millis, String implementation) {
    /** Validates. */
    public CollectiveMeasurement {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(topology, "topology");
        Objects.requireNonNull(implementation, "implementation");
        Checks.argument(nodes > 0 && ranks >= 2 && ranks >= nodes, "need 2+ ranks on 1+ nodes");
        Checks.argument(bytes > 0 && millis > 0 && Double.isFinite(millis), "bad bytes or time");
    }

    /** A measurement whose implementation is not known. */
    public CollectiveMeasurement(String device, Topology topology, int nodes, int ranks, double bytes,
            double millis) {
        this(device, topology, nodes, ranks, bytes, millis, "");
    }
}
