package org.scaledl.model;

import org.scaledl.workload.Workload;

/**
 * The layer cost stage of a {@link RuntimePredictor}: the host basis ({@link HostStage}: a {@link HostLayerModel} per machine) or the device trees
 * with their communication ({@link DeviceStage}). Implementations are immutable and thread-safe.
 */
sealed interface LayerStage permits HostStage, DeviceStage {
    /** {@code host} or {@code device}. */
    String kind();

    /** The predicted time in ms (the fast path, no breakdown). */
    double predictMillis(Workload w);

    /** The prediction with its breakdown (a point: the predictor adds the interval). */
    Prediction predict(Workload w);
}
