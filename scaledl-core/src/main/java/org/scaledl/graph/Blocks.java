package org.scaledl.graph;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.scaledl.Checks;

/**
 * The repeated-block structure of a transformer-like graph: the width of its residual stream, how many copies of
 * the block it lays out, and which region each layer belongs to. Tensor parallelism shards the block's layers off
 * the residual stream and the epilogue's contractions (Megatron-style); a graph without blocks cannot be predicted
 * tensor-parallel. {@link org.scaledl.io.FxTraceReader} records it for the traces it lays out.
 *
 * @param hiddenSize last dimension of the block's output, the residual stream (positive)
 * @param copies     copies of the block in the graph (positive)
 * @param regions    region of every layer by name; layers not listed are {@link Region#PROLOGUE}
 */
public record Blocks(long hiddenSize, int copies, Map<String, Region> regions) {
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
    }

    /** The region of a layer. */
    public Region region(String layerName) {
        return regions.getOrDefault(layerName, Region.PROLOGUE);
    }
}
