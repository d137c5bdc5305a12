package org.scaledl.graph;

import java.util.List;
import org.scaledl.Checks;

/**
 * The repeated-block structure of a transformer-like graph: the width of its residual stream, its transformer layers
 * in order ({@link #pattern()}: the kind of block each one is; a hybrid model mixes several kinds), and whether the
 * graph holds each kind of block once ({@link #compact()}) or lays every copy out. Which region and role each layer
 * has is kept per layer index by the graph ({@link ModelGraph#role(int)}). Tensor parallelism shards the block's
 * layers off the residual stream and the epilogue's contractions (Megatron-style); a graph without blocks cannot be
 * predicted tensor-parallel. {@link org.scaledl.io.FxTraceReader} records it for the traces it lays out (every copy
 * present in the graph); a graph built from a configuration ({@code org.scaledl.transformer.TransformerSpec}) holds
 * each distinct block once, and each of its layers runs as many times as its kind appears in the pattern
 * ({@link ModelGraph#repeats(int)}), so a 96-layer model costs one layer's analysis.
 *
 * <pre>{@code
 * Blocks b = new Blocks(4096, List.of(0, 0, 0, 1, 1, 1), true);  // 3 dense blocks, then 3 of another kind
 * b.copies();      // 6
 * b.count(1);      // 3
 * }</pre>
 *
 * @param hiddenSize last dimension of the block's output, the residual stream (positive)
 * @param pattern    the block kind of each transformer layer, in order (kinds numbered from 0, each used)
 * @param compact    whether the graph holds each kind of block once, standing for every layer of that kind
 */
public record Blocks(long hiddenSize, List<Integer> pattern, boolean compact) {
    /** Validates and copies. */
    public Blocks {
        pattern = List.copyOf(pattern);
        Checks.argument(hiddenSize > 0 && !pattern.isEmpty(), "hidden size and layers must be positive: %s, %s",
                hiddenSize, pattern.size());
        int kinds = 0;
        for (int k : pattern) {
            Checks.argument(k >= 0, "block kinds must be >= 0: %s", k);
            kinds = Math.max(kinds, k + 1);
        }
        for (int k = 0; k < kinds; k++) {
            Checks.argument(pattern.contains(k), "block kind %s is never used", k);
        }
    }

    /** Blocks of one kind laid out copy by copy (every layer of the graph runs once). */
    public static Blocks laidOut(long hiddenSize, int copies) {
        Checks.argument(copies > 0, "copies must be positive: %s", copies);
        return new Blocks(hiddenSize, java.util.Collections.nCopies(copies, 0), false);
    }

    /** Transformer layers the model has. */
    public int copies() {
        return pattern.size();
    }

    /** Kinds of block. */
    public int kinds() {
        int kinds = 0;
        for (int k : pattern) {
            kinds = Math.max(kinds, k + 1);
        }
        return kinds;
    }

    /** Transformer layers of a kind. */
    public int count(int kind) {
        int n = 0;
        for (int k : pattern) {
            n += k == kind ? 1 : 0;
        }
        return n;
    }

    /** Transformer layers of a kind among layers {@code [from, to)}. */
    public int count(int kind, int from, int to) {
        int n = 0;
        for (int i = Math.max(0, from); i < Math.min(to, pattern.size()); i++) {
            n += pattern.get(i) == kind ? 1 : 0;
        }
        return n;
    }
}
