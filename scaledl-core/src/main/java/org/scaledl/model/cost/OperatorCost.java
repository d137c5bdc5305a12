package org.scaledl.model.cost;

import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.Precision;

/**
 * The cost of one operator (a layer's forward or backward pass) on one device, predicted alone: what a stage that
 * predicts layer by layer from operator measurements offers for scoring single operators (kernel evaluations, the
 * execution models).
 *
 * <pre>{@code
 * OperatorCost ops = predictor.operators().orElseThrow();
 * double ms = ops.layerMillis(features, h100, Precision.BF16, false);
 * }</pre>
 */
public interface OperatorCost {
    /**
     * One layer's forward or backward time on a device in a precision, ms (0 for shape arithmetic and absent backward
     * work).
     */
    double layerMillis(LayerFeatures f, Device device, Precision precision, boolean backward);

    /**
     * {@link #layerMillis} of a layer whose feature maps are laid out in a memory format: a convolution's time times
     * its {@link MemoryFormat#slowdown} in the precision the device runs (the one place that factor is applied).
     */
    default double layerMillis(LayerFeatures f, Device device, Precision precision, boolean backward,
            MemoryFormat format) {
        Precision runs = device.runs(precision).orElse(precision);
        return layerMillis(f, device, precision, backward) * format.slowdown(f, runs, device, backward);
    }
}
