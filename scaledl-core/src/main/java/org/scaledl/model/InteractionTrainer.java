package org.scaledl.model;

import java.util.List;
import org.scaledl.workload.Sample;

/**
 * Fits the interaction stage of a {@link RuntimePredictor}: a model of what a sum of independent layers misses
 * (fusion, cache reuse between neighbours, overlap, framework overhead), learnt as a correction of the layer-wise
 * prediction from the layer graph. {@code scaledl-graph} implements it with a message-passing GNN
 * ({@code org.scaledl.gnn.GnnInteractions}).
 *
 * <pre>{@code
 * RuntimePredictor p = RuntimePredictor.builder().interactions(new GnnInteractions()).build().fit(samples);
 * }</pre>
 */
public interface InteractionTrainer {
    /** A short name for provenance and method tables ({@code gnn}, {@code gnn-attention}). */
    String name();

    /**
     * Fits the correction.
     *
     * @param samples   the training samples
     * @param layerwise the layer-wise predictor fitted on all of them (no interaction stage)
     * @param fitter    fits the same layer-wise configuration on a subset of the samples, for out-of-group targets
     * @param groupTag  the tag whose values are held out together
     * @return the fitted stage
     * @throws IllegalArgumentException when there are too few samples
     */
    InteractionModel fit(List<Sample> samples, RuntimePredictor layerwise, LayerwiseFitter fitter, String groupTag);

    /** Fits the layer-wise stage of the predictor being trained on a subset of its samples. */
    @FunctionalInterface
    interface LayerwiseFitter {
        /** A layer-wise predictor (no interaction stage) fitted on {@code samples}. */
        RuntimePredictor fit(List<Sample> samples);
    }
}
