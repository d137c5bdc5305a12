package org.scaledl.gnn;

import java.util.List;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimeModel;
import org.scaledl.model.RuntimeTrainer;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The GNN alone ({@code gnn-only}): the same network as {@link GnnInteractions} predicting log time directly from
 * the graph and the workload settings, with no layer-wise model (an NNLQP-style graph baseline for evaluations).
 *
 * <pre>{@code
 * RuntimeModel m = new GnnBaseline().fit(samples);
 * }</pre>
 */
public final class GnnBaseline implements RuntimeTrainer {
    private final GnnTrainer trainer;

    /** Hidden 16, 2 rounds, 150 epochs, seed 7, mean aggregation. */
    public GnnBaseline() {
        this(GnnTrainer.graphOnly());
    }

    private GnnBaseline(GnnTrainer trainer) {
        this.trainer = trainer;
    }

    /** A copy with GAT-style attention. */
    public GnnBaseline withAttention(boolean value) {
        return new GnnBaseline(trainer.withAttention(value));
    }

    /** A copy with another size: hidden width, message-passing rounds and epochs. */
    public GnnBaseline withSize(int hiddenUnits, int messageRounds, int trainingEpochs) {
        return new GnnBaseline(trainer.withSize(hiddenUnits, messageRounds, trainingEpochs));
    }

    /** A copy with another seed. */
    public GnnBaseline withSeed(long value) {
        return new GnnBaseline(trainer.withSeed(value));
    }

    @Override
    public String name() {
        return trainer.attention() ? "gnn-only-attention" : "gnn-only";
    }

    /**
     * Fits.
     *
     * @throws IllegalArgumentException with fewer than 4 samples
     */
    @Override
    public RuntimeModel fit(List<Sample> samples) {
        GnnModel m = trainer.fit(samples, null, null).members().get(0);
        String name = name();
        org.scaledl.graph.GraphCache<Boolean, double[]> cache = new org.scaledl.graph.GraphCache<>(1);
        return new RuntimeModel() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Prediction predict(Workload w) {
                double[] e = cache.get(w.graph(), Boolean.TRUE, () -> m.embedding(GnnTrainer.batchOf(
                        List.of(w.graph()), null)));
                return Prediction.point(Math.exp(m.output(e, w, 0)));
            }
        };
    }
}
