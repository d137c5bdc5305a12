package org.scaledl.model.comm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.Device;

/**
 * A fitted model of collective communication between devices: how long one all-reduce takes. The device
 * predictor uses it for data-parallel gradient reduction, tensor-parallel activation reduction and
 * pipeline hand-offs; its forms are those of {@link Collectives}.
 *
 * <pre>{@code
 * double ms = comm.allReduceMillis(h100, 16, 8, 4.0 * params);   // 16 ranks, 8 per node
 * }</pre>
 */
public interface CommunicationModel {
    /**
     * One all-reduce.
     *
     * @param device       the devices taking part (their links, from the catalog)
     * @param ranks        ranks in total (at least 2)
     * @param ranksPerNode ranks on each node (at least 1, at most {@code ranks})
     * @param bytes        bytes reduced (positive)
     * @return time in ms
     */
    double allReduceMillis(Device device, int ranks, int ranksPerNode, double bytes);

    /**
     * Moving {@code bytes} from one device to the next (a pipeline hand-off), ms.
     *
     * @param device the devices
     * @param bytes  bytes moved
     */
    double sendMillis(Device device, double bytes);

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
