package org.scaledl.model;

import java.util.List;
import org.scaledl.Checks;
import org.scaledl.workload.Sample;

/**
 * Fits the interaction stage of a {@link RuntimePredictor}: a model of what a sum of independent layers misses
 * (fusion, cache reuse between neighbours, overlap, framework overhead), learnt as a correction of the layer-wise
 * prediction from the layer graph. {@code scaledl-graph} implements it with a message-passing GNN
 * ({@code org.scaledl.gnn.GnnInteractions}).
 *
 * <p>The predictor's trainer computes what the interaction trainer learns from ({@link Targets}): every sample's
 * layer-wise prediction <em>out of its group</em> (the layer stage fitted without the sample's group, {@code Folds}),
 * so that the correction learns the layer-wise model's error on unseen models rather than its training residuals, and
 * the per-layer times that fit predicts for the sample's graph in the reference workload. The interaction trainer
 * never calls back into the predictor.
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
     * @param samples the training samples
     * @param targets what the layer-wise stage says of them, out of group
     * @return the fitted stage
     * @throws IllegalArgumentException when there are too few samples
     */
    InteractionModel fit(List<Sample> samples, Targets targets);

    /**
     * The layer-wise stage's view of the training samples, computed by the predictor's trainer.
     *
     * @param layerwiseMillis       per sample, its layer-wise prediction by a fit without its group (positive)
     * @param referenceLayerMillis  per sample, the per-layer times (by layer index) of its graph in the reference
     *                              workload ({@link InteractionModel#REFERENCE}) on its machine, by the same fit
     * @param groupTag              the workload tag whose values were held out together
     */
    record Targets(double[] layerwiseMillis, List<double[]> referenceLayerMillis, String groupTag) {
        /** Validates. */
        public Targets {
            Checks.argument(layerwiseMillis.length == referenceLayerMillis.size(),
                    "%s predictions for %s reference layer vectors", layerwiseMillis.length,
                    referenceLayerMillis.size());
            layerwiseMillis = layerwiseMillis.clone();
            referenceLayerMillis = List.copyOf(referenceLayerMillis);
        }

        @Override
        public double[] layerwiseMillis() {
            return layerwiseMillis.clone();
        }
    }
}
