package org.scaledl.workload;

import java.util.Objects;
import org.scaledl.Checks;

/**
 * One measured operator on one device: a kernel benchmark row or a node of a profiled model. The features are the
 * layer's, computed by {@link org.scaledl.features.FeatureExtractor} like any other layer's.
 *
 * @param features  the layer's features (its forward and backward work)
 * @param device    where it ran
 * @param backward  {@code true} for the backward pass time, {@code false} for forward
 * @param millis    measured time, ms
 * @param op        a label for reports (e.g. {@code bmm}, {@code linear}, {@code conv})
 * @param shapeKey  identifies the shape across devices, for splits that hold whole shapes out
 * @param origin    an isolated operator benchmark or a node of a profiled model
 * @param precision the arithmetic it ran in (its features' bytes are FP32 tensors; the precision scales them)
 */
public record OpMeasurement(LayerFeatures features, Device device, boolean backward, double millis, String op,
        String shapeKey, Origin origin, Precision precision) {

    /** Where a measurement comes from. */
    public enum Origin {
        /** A kernel benchmark: one operator timed alone over a range of shapes (NeuSight kernels, DeepBench). */
        BENCHMARK,
        /** A node of a profiled model, timed alone with the model's shapes (a torch.fx trace). */
        MODEL_NODE
    }

    /** Validates. */
    public OpMeasurement {
        Objects.requireNonNull(features, "features");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(shapeKey, "shapeKey");
        Objects.requireNonNull(origin, "origin");
        Objects.requireNonNull(precision, "precision");
        Checks.argument(Double.isFinite(millis) && millis > 0, "time must be finite and positive: %s",
                millis);
    }

    /** An FP32 measurement. */
    public OpMeasurement(LayerFeatures features, Device device, boolean backward, double millis, String op,
            String shapeKey, Origin origin) {
        this(features, device, backward, millis, op, shapeKey, origin, Precision.FP32);
    }
}
