package org.scaledl.gnn;

import java.util.List;
import org.scaledl.Checks;
import org.scaledl.model.InteractionModel;
import org.scaledl.model.InteractionTrainer;
import org.scaledl.workload.Sample;

/**
 * ScaleDL's interaction stage: a message-passing GNN over the layer DAG that learns the log-ratio
 * {@code log(measured / layer-wise)} from the graph and the workload settings, i.e. what a sum of independent layers
 * misses. The training targets use <em>out-of-group</em> layer-wise predictions (each group's runs predicted by the
 * predictor's layer-wise stage fitted without that group), and so do the layer times among each training graph's
 * node features, so the network learns the layer-wise model's error on unseen models, not its training residuals. The correction is shrunk by the factor in {@code {0, 0.1, ..., 1}}
 * that fits held-out training groups best, so a correction that does not transfer is switched off.
 *
 * <pre>{@code
 * RuntimePredictor p = RuntimePredictor.builder().interactions(new GnnInteractions()).build().fit(samples);
 * RuntimePredictor q = RuntimePredictor.builder().interactions(new GnnInteractions().withAttention(true)).build()
 *         .fit(samples);
 * }</pre>
 *
 * <p>Network: node features per layer (log FLOPs forward and backward, bytes, parameters, output elements, whether
 * it executes, the layer-wise predicted time, the operator family one-hot), K rounds of message passing in both edge
 * directions (mean or GAT-style attention), mean pooling, and a readout MLP over the pooled embedding and the
 * workload settings. Hand-written forward and backward on ND4J, full-batch Adam with decoupled weight decay, early
 * stopping on held-out groups; a fixed seed gives an identical model. Defaults: hidden 16, 2 rounds, 150 epochs,
 * seed 7, mean aggregation.
 */
public final class GnnInteractions implements InteractionTrainer {
    private final GnnTrainer trainer;

    /** The defaults above. */
    public GnnInteractions() {
        this(GnnTrainer.interactions());
    }

    private GnnInteractions(GnnTrainer trainer) {
        this.trainer = trainer;
    }

    /** A copy with another seed. */
    public GnnInteractions withSeed(long value) {
        return new GnnInteractions(trainer.withSeed(value));
    }

    /** A copy whose message passing uses GAT-style attention over each node's neighbours instead of their mean. */
    public GnnInteractions withAttention(boolean value) {
        return new GnnInteractions(trainer.withAttention(value));
    }

    /** A copy with another size: hidden width, message-passing rounds and epochs. */
    public GnnInteractions withSize(int hiddenUnits, int messageRounds, int trainingEpochs) {
        return new GnnInteractions(trainer.withSize(hiddenUnits, messageRounds, trainingEpochs));
    }

    @Override
    public String name() {
        return trainer.attention() ? "gnn-attention" : "gnn";
    }

    @Override
    public String toString() {
        return name() + " (" + trainer.describe() + ")";
    }

    @Override
    public InteractionModel fit(List<Sample> samples, Targets targets) {
        Checks.argument(samples.size() >= 4, "need at least 4 samples to fit the GNN, got %s", samples.size());
        return new GnnCorrection(trainer.withGroupTag(targets.groupTag()).fit(samples, targets.layerwiseMillis(),
                targets.referenceLayerMillis()));
    }
}
