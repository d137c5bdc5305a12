package org.scaledl.io;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.Phase;

/**
 * A torch.fx trace turned into a whole-model graph.
 *
 * @param graph        the model: prologue, the traced block repeated {@code blockCopies} times, epilogue
 * @param phase        inference or training, from the file name
 * @param batch        batch size (leading dimension of the first input)
 * @param blockCopies  how many times the traced block was laid out (1 when the trace is the whole model)
 * @param hiddenSize   last dimension of the block's output (the residual stream), 0 when there is no block
 * @param regions      region of every layer of {@link #graph}: {@code prologue}, {@code layer}, {@code epilogue} or
 *                     {@code whole_model}
 * @param measured     measured latencies of the traced nodes, ms: {@code {forward, backward + gradient
 *                     accumulation}}, keyed by layer name in {@link #graph} (block nodes under their first copy's name)
 * @param source       the file it came from
 */
public record FxTrace(ModelGraph graph, Phase phase, int batch, int blockCopies, long hiddenSize,
        Map<String, String> regions, Map<String, double[]> measured, String source) {

    /** Validates and copies. */
    public FxTrace {
        Objects.requireNonNull(graph, "graph");
        Objects.requireNonNull(phase, "phase");
        regions = Collections.unmodifiableMap(new LinkedHashMap<>(regions));
        measured = Collections.unmodifiableMap(new LinkedHashMap<>(measured));
    }

    /** Whether the graph's shapes scale with the batch (the trace was taken at batch 2 or more). */
    public boolean rescalable() {
        return batch >= 2;
    }

    /** The region of a layer ({@code layer} for every copy of the repeated block). */
    public String region(String layerName) {
        return regions.getOrDefault(layerName, "");
    }

    /** Measured {@code {forward, backward}} ms of a traced node, by its name in the graph. */
    public Optional<double[]> measuredMillis(String layerName) {
        double[] v = measured.get(layerName);
        return v == null ? Optional.empty() : Optional.of(v.clone());
    }
}
