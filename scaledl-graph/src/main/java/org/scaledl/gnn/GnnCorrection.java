package org.scaledl.gnn;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.InteractionModel;

/**
 * The fitted GNN interaction stage ({@link GnnInteractions}): multiplies the layer-wise prediction by
 * {@code exp(s · g(graph, workload))} (the exponent bounded by ±{@value #MAX_LOG_CORRECTION}), where {@code g} is
 * the network's predicted log-ratio of measured to layer-wise time and {@code s ∈ [0, 1]} the shrink factor chosen on
 * held-out training groups. A graph's embedding
 * depends on the graph and on its layers' times on the machine; it is computed in plain Java by {@link #prepare},
 * which the predictor caches per graph and machine; a prediction then costs a readout of
 * {@code (hidden + context) × hidden} multiply-adds. Immutable and thread-safe.
 */
final class GnnCorrection implements InteractionModel {
    /** The format name in predictor files. */
    static final String FORMAT = "gnn";
    /**
     * The largest correction, in log-ratio (a factor of e^10 either way, where trained corrections are a few tenths):
     * a network from a crafted file cannot push a prediction to infinity or zero.
     */
    static final double MAX_LOG_CORRECTION = 10;
    private final List<GnnModel> members;
    private final double shrink;
    private final double tau;

    GnnCorrection(GnnTrainer.Ensemble ensemble) {
        this.members = ensemble.members();
        this.shrink = ensemble.shrink();
        this.tau = ensemble.tau();
    }

    /** The first member (for tests of the network itself). */
    GnnModel model() {
        return members.get(0);
    }

    /** The members whose mean correction is applied. */
    List<GnnModel> members() {
        return members;
    }

    @Override
    public String format() {
        return FORMAT;
    }

    @Override
    public String describe() {
        return "gnn " + (members.get(0).net.attention ? "attention" : "mean")
                + (members.size() > 1 ? " x" + members.size() : "") + " shrink=" + shrink
                + (Double.isInfinite(tau) ? "" : " novelty-width=" + tau);
    }

    /** The shrink factor applied to the correction. */
    double shrink() {
        return shrink;
    }

    @Override
    public Prepared prepare(ModelGraph graph, double[] referenceLayerMillis) {
        GraphBatch b = GnnTrainer.batchOf(List.of(graph), java.util.Collections.singletonList(referenceLayerMillis));
        double[][] e = new double[members.size()][];
        double[] gates = new double[members.size()];
        for (int m = 0; m < e.length; m++) {
            e[m] = members.get(m).embedding(b);
            gates[m] = GnnTrainer.gate(members.get(m).novelty(e[m]), tau);
        }
        return (w, baseMillis) -> {
            double out = 0;
            for (int m = 0; m < e.length; m++) {
                out += gates[m] * members.get(m).output(e[m], w, baseMillis);
            }
            return Math.exp(Math.max(-MAX_LOG_CORRECTION, Math.min(MAX_LOG_CORRECTION, shrink * out / e.length)));
        };
    }

    /**
     * One member: its network body with the shrink (the version-1 layout); several: {@code members} (each a network
     * body) and {@code shrink}.
     */
    @Override
    public ObjectNode body() {
        if (members.size() == 1 && Double.isInfinite(tau)) {
            return members.get(0).body().put("shrink", shrink);
        }
        ObjectNode body = members.get(0).body().objectNode();
        body.put("shrink", shrink);
        if (!Double.isInfinite(tau)) {
            body.put("novelty_width", tau);
        }
        com.fasterxml.jackson.databind.node.ArrayNode arr = body.putArray("members");
        members.forEach(m -> arr.add(m.body()));
        return body;
    }

    /**
     * Reads {@link #body()}.
     *
     * @throws org.scaledl.InvalidInputException for a malformed body
     */
    static GnnCorrection read(com.fasterxml.jackson.databind.JsonNode body) {
        double shrink = org.scaledl.model.file.Fields.finite(body.path("shrink"), "shrink");
        if (shrink < 0 || shrink > 1) {
            throw org.scaledl.InvalidInputException.of("shrink must be in [0, 1]: " + shrink);
        }
        List<GnnModel> ms = new java.util.ArrayList<>();
        if (body.has("members")) {
            if (!body.path("members").isArray() || body.path("members").isEmpty()) {
                throw org.scaledl.InvalidInputException.of("members must be a non-empty array");
            }
            body.path("members").forEach(m -> ms.add(GnnModel.read(m)));
        } else {
            ms.add(GnnModel.read(body));
        }
        double tau = body.has("novelty_width") ? org.scaledl.model.file.Fields.finite(body.path("novelty_width"),
                "novelty_width") : Double.POSITIVE_INFINITY;
        if (!(tau > 0)) {
            throw org.scaledl.InvalidInputException.of("novelty_width must be > 0: " + tau);
        }
        return new GnnCorrection(new GnnTrainer.Ensemble(ms, shrink, tau));
    }
}
