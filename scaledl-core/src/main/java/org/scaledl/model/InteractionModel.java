package org.scaledl.model;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.Workload;

/**
 * A fitted interaction stage: a multiplicative correction of the layer-wise prediction, learnt from the layer graph.
 * The predictor prepares it once per graph and machine ({@link #prepare}, from the per-layer times the layer stage
 * predicts for that graph in a reference workload) and keeps the result in a bounded cache keyed by both; the
 * prepared correction then gives each workload's factor. The stage never sees a predictor, only numbers.
 * Implementations are immutable and thread-safe, and are saved inside the predictor's file; an
 * {@link InteractionCodec} registered with {@link java.util.ServiceLoader} reads them back.
 *
 * <pre>{@code
 * InteractionModel.Prepared p = model.prepare(graph, referenceLayerMillis);   // once per graph and machine
 * double corrected = layerwise * p.factor(workload, layerwise);
 * }</pre>
 */
public interface InteractionModel {
    /** The format name its codec reads ({@code gnn}). */
    String format();

    /** A short description for provenance ({@code gnn mean shrink=0.3}). */
    String describe();

    /**
     * What the correction of one graph on one machine needs (for the GNN: the graph's embedding).
     *
     * @param graph                the graph
     * @param referenceLayerMillis each layer's predicted time by index in the reference workload ({@link #REFERENCE}:
     *                             batch 1, inference, one worker, one thread, on the machine), not modified
     */
    Prepared prepare(ModelGraph graph, double[] referenceLayerMillis);

    /** The model's parameters as a JSON body for its codec. */
    ObjectNode body();

    /** The reference workload's description, for documentation: batch 1, inference, one worker, one thread. */
    String REFERENCE = "batch 1, inference, one worker, one thread";

    /** A correction prepared for one graph on one machine. Immutable and thread-safe. */
    @FunctionalInterface
    interface Prepared {
        /**
         * The factor by which the layer-wise prediction of a workload on this graph and machine is multiplied (1 for
         * no correction).
         *
         * @param w              the workload
         * @param layerwiseMillis its layer-wise prediction
         */
        double factor(Workload w, double layerwiseMillis);
    }
}
