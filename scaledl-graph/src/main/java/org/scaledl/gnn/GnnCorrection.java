package org.scaledl.gnn;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.InteractionModel;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Workload;

/**
 * The fitted GNN interaction stage ({@link GnnInteractions}): multiplies the layer-wise prediction by
 * {@code exp(s · g(graph, workload))}, where {@code g} is the network's predicted log-ratio of measured to
 * layer-wise time and {@code s ∈ [0, 1]} the shrink factor chosen on held-out training groups. A graph's embedding
 * is computed once per graph instance (held weakly) in plain Java; a prediction then costs a readout of
 * {@code (hidden + context) × hidden} multiply-adds. Thread-safe.
 */
final class GnnCorrection implements InteractionModel {
    /** The format name in predictor files. */
    static final String FORMAT = "gnn";
    private final GnnModel model;
    private final Map<ModelGraph, double[]> embeddings = Collections.synchronizedMap(new WeakHashMap<>());

    GnnCorrection(GnnModel model) {
        this.model = model;
    }

    GnnModel model() {
        return model;
    }

    @Override
    public String format() {
        return FORMAT;
    }

    @Override
    public String describe() {
        return "gnn " + (model.net.attention ? "attention" : "mean") + " shrink=" + model.shrink;
    }

    /** The shrink factor applied to the correction. */
    double shrink() {
        return model.shrink;
    }

    double[] embedding(Workload w, RuntimePredictor layerwise) {
        ModelGraph g = w.graph();
        double[] e = embeddings.get(g);
        if (e == null) {
            e = model.embedding(GnnTrainer.batchOf(List.of(g), layerwise, List.of(w.device())));
            embeddings.put(g, e);
        }
        return e;
    }

    @Override
    public double factor(Workload w, RuntimePredictor layerwise, double baseMillis) {
        double out = model.output(embedding(w, layerwise), w, baseMillis);
        return Math.exp(model.shrink * out);
    }

    @Override
    public ObjectNode body() {
        return model.body();
    }
}
