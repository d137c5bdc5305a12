package org.scaledl.model.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.scaledl.Checks;

/**
 * The host side of eager execution: PyTorch dispatches every operator from the CPU (Python, the dispatcher, the
 * kernel launch) while the GPU runs the ones before it, so an iteration takes the slower of the GPU's work and the
 * host's dispatch, {@code (gpu⁸ + host⁸)^⅛}, with {@code host = dispatch · (operators forward + operators backward)}.
 * Large batches are bound by the GPU and do not see it; at batch 1 a network of small layers runs at the host's pace.
 *
 * @param dispatchMs the host's time per operator, ms (0: no floor, as files written before it)
 */
public record EagerModel(double dispatchMs) {
    /**
     * The host's time per operator when nothing measured says otherwise: 10 µs, the order of PyTorch's eager
     * overhead per operator (the Python call, the dispatcher and the CUDA launch) on a server CPU.
     */
    public static final double DEFAULT_DISPATCH_MS = 0.010;

    /** No floor: the GPU's work alone. */
    public static final EagerModel NONE = new EagerModel(0);

    /** Validates. */
    public EagerModel {
        Checks.argument(Double.isFinite(dispatchMs) && dispatchMs >= 0 && dispatchMs <= 10,
                "dispatch time must be in [0, 10] ms: %s", dispatchMs);
    }

    /** The iteration time from the GPU's work and the operators dispatched, ms. */
    public double millis(double gpuMillis, double operators) {
        double host = dispatchMs * operators;
        if (host == 0) {
            return gpuMillis;
        }
        return MegatronModel.smoothMax(gpuMillis, host, MegatronModel.SMOOTH);
    }

    /** The saved form. */
    public ObjectNode toJson() {
        return JsonNodeFactory.instance.objectNode().put("dispatch_ms_per_operator", dispatchMs);
    }

    /**
     * Reads {@link #toJson()}.
     *
     * @throws org.scaledl.InvalidInputException for a missing or out-of-range value
     */
    public static EagerModel fromJson(JsonNode o) {
        return new EagerModel(org.scaledl.model.file.Fields.inRange(o.get("dispatch_ms_per_operator"),
                "eager.dispatch_ms_per_operator", 0, 10));
    }
}
