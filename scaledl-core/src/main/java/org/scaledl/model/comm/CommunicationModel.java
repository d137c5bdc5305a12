package org.scaledl.model.comm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.Device;
import org.scaledl.workload.Topology;

/**
 * A fitted model of collective communication between devices: how long one all-reduce takes. The device
 * predictor uses it for data-parallel gradient reduction, tensor-parallel activation reduction and
 * pipeline hand-offs; its forms are those of {@link Collectives}.
 *
 * <pre>{@code
 * double ms = comm.allReduceMillis(h100, topology, 16, 8, 4.0 * params);   // 16 ranks, 8 per node
 * }</pre>
 */
public interface CommunicationModel {
    /**
     * One all-reduce.
     *
     * @param device       the devices taking part
     * @param topology     the links inside and between their nodes
     * @param ranks        ranks in total (at least 2)
     * @param ranksPerNode ranks on each node (at least 1, at most {@code ranks})
     * @param bytes        bytes reduced (positive)
     * @return time in ms
     */
    double allReduceMillis(Device device, Topology topology, int ranks, int ranksPerNode, double bytes);

    /**
     * One reduce-scatter (or all-gather) of {@code bytes} in total: half an all-reduce's traffic in half its steps.
     *
     * @return time in ms
     */
    default double reduceScatterMillis(Device device, Topology topology, int ranks, int ranksPerNode, double bytes) {
        return 0.5 * allReduceMillis(device, topology, ranks, ranksPerNode, bytes);
    }

    /**
     * Moving {@code bytes} from one device to the next (a pipeline hand-off), ms: over the intra-node link, or across
     * nodes over the sender's share of its node's network.
     */
    double sendMillis(Device device, Topology topology, boolean acrossNodes, double bytes);

    /** The saved form, with {@code kind} naming the implementation ({@link #fromJson} reads it). */
    ObjectNode toJson();

    /**
     * Reads a saved communication model.
     *
     * @throws InvalidInputException for an unknown {@code kind} (naming it) or a malformed body
     */
    static CommunicationModel fromJson(JsonNode o) {
        String kind = o.path("kind").asText("");
        return switch (kind) {
            case AllReduceModel.KIND -> AllReduceModel.fromJson(o);
            default -> throw InvalidInputException.of("unknown communication model kind '" + kind
                    + "' (this library reads '" + AllReduceModel.KIND + "')");
        };
    }
}
