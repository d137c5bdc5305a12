package org.scaledl.model;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.scaledl.workload.Workload;

/**
 * A fitted interaction stage: a multiplicative correction of the layer-wise prediction. The predictor multiplies
 * its layer-wise prediction, its breakdown and its interval by {@link #factor}. Implementations are immutable and
 * thread-safe, and are saved inside the predictor's file; an {@link InteractionCodec} registered with
 * {@link java.util.ServiceLoader} reads them back.
 */
public interface InteractionModel {
    /** The format name its codec reads ({@code gnn}). */
    String format();

    /** A short description for provenance ({@code gnn mean shrink=0.3}). */
    String describe();

    /**
     * The factor by which the layer-wise prediction of a workload is multiplied (1 for no correction).
     *
     * @param w         the workload
     * @param layerwise the predictor's layer-wise stage (no interaction stage), for per-layer inputs
     * @param baseMillis the layer-wise prediction of {@code w}
     */
    double factor(Workload w, RuntimePredictor layerwise, double baseMillis);

    /** The model's parameters as a JSON body for its codec. */
    ObjectNode body();
}
