package org.scaledl.model;

import java.util.List;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.workload.OpMeasurement;

/**
 * Which layer cost model a {@link RuntimePredictor} fits: the host basis (a CPU machine, fitted from
 * whole-iteration times only) or the device model (boosted trees per operator family over device-relative
 * features, fitted on operator measurements of several GPUs, predicting any GPU its catalog describes).
 *
 * <pre>{@code
 * RuntimePredictor.builder().layerCost(LayerCost.host());                       // the default
 * RuntimePredictor.builder().layerCost(LayerCost.device(KernelTables.neusight(dir, catalog)));
 * }</pre>
 */
public final class LayerCost {
    private static final LayerCost HOST = new LayerCost(null);
    private final List<OpMeasurement> measurements;

    private LayerCost(List<OpMeasurement> measurements) {
        this.measurements = measurements == null ? null : List.copyOf(measurements);
    }

    /** The host basis of {@link LayerBasis}, fitted from the whole-iteration samples. */
    public static LayerCost host() {
        return HOST;
    }

    /**
     * The device model ({@link DeviceLayerModel}), fitted on operator measurements; the samples given to
     * {@code fit} then calibrate it (and may be empty).
     *
     * @throws IllegalArgumentException without measurements
     */
    public static LayerCost device(List<OpMeasurement> measurements) {
        Checks.argument(!measurements.isEmpty(), "the device layer model needs operator measurements");
        return new LayerCost(measurements);
    }

    /** The operator measurements of a device model; empty for the host basis. */
    public Optional<List<OpMeasurement>> measurements() {
        return Optional.ofNullable(measurements);
    }

    /** {@code host} or {@code device}. */
    public String kind() {
        return measurements == null ? "host" : "device";
    }

    @Override
    public String toString() {
        return measurements == null ? "host" : "device(" + measurements.size() + " operator measurements)";
    }
}
