package org.scaledl.graph;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.scaledl.Checks;

/**
 * The repeated-block structure of a transformer-like graph: the width of its residual stream, how many copies of
 * the block it lays out, and which region each layer belongs to. Tensor parallelism shards the block's layers off
 * the residual stream and the epilogue's contractions (Megatron-style); a graph without blocks cannot be predicted
 * tensor-parallel. {@link org.scaledl.io.FxTraceReader} records it for the traces it lays out (every copy present in the
 * graph); a graph built from a configuration ({@code org.scaledl.transformer.TransformerSpec}) holds each distinct
 * block once, and {@link #repeats} says how many times each of its layers runs, so a 96-layer model costs one layer's
 * analysis.
 *
 * @param hiddenSize last dimension of the block's output, the residual stream (positive)
 * @param copies     transformer layers the model has (positive)
 * @param regions    region of every layer by name; layers not listed are {@link Region#PROLOGUE}
 * @param repeats    for a compact graph, how many times a layer runs (by name); layers not listed run once
 */
public record Blocks(long hiddenSize, int copies, Map<String, Region> regions, Map<String, Integer> repeats) {
    /** Where a layer sits. */
    public enum Region {
        /** Before the first block (embeddings). */
        PROLOGUE,
        /** One of the repeated blocks. */
        BLOCK,
        /** After the last block (final norm, head, loss). */
        EPILOGUE
    }

    /** Validates and copies. */
    public Blocks {
        Checks.argument(hiddenSize > 0 && copies > 0, "hidden size and copies must be positive: %s, %s",
                hiddenSize, copies);
        regions = Collections.unmodifiableMap(new LinkedHashMap<>(regions));
        repeats = Collections.unmodifiableMap(new LinkedHashMap<>(repeats));
        for (Map.Entry<String, Integer> e : repeats.entrySet()) {
            Checks.argument(e.getValue() > 0, "layer %s repeats %s times", e.getKey(), e.getValue());
        }
    }

    /** Blocks laid out copy by copy (every layer runs once). */
    public Blocks(long hiddenSize, int copies, Map<String, Region> regions) {
        this(hiddenSize, copies, regions, Map.of());
    }

    /** How many times a layer runs in one pass (1 unless the graph is compact). */
    public int repeats(String layerName) {
        return repeats.getOrDefault(layerName, 1);
    }

    /** Whether the graph holds its blocks once, each layer standing for {@link #repeats} of it. */
    public boolean compact() {
        return !repeats.isEmpty();
    }

    /** The region of a layer. */
    public Region region(String layerName) {
        return regions.getOrDefault(layerName, Region.PROLOGUE);
    }
}
