package org.scaledl.graph;

import org.scaledl.Checks;

/**
 * The shape of a transformer built from a configuration ({@code org.scaledl.transformer.TransformerSpec}), as the
 * parallel execution and memory models need it: the closed forms of Megatron-LM (Narayanan et al., SC '21) and of
 * activation memory (Korthikanti et al., 2022) are stated in these terms. A graph carries it when it was built from a
 * configuration, not imported.
 *
 * @param hidden         hidden size {@code h}
 * @param heads          attention heads {@code a}
 * @param kvHeads        key/value heads (equal to {@code a} without grouped-query attention)
 * @param ffn            feed-forward inner size
 * @param layers         transformer layers in all stacks {@code L}
 * @param vocab          vocabulary size {@code V}
 * @param seq            sequence length {@code s} the graph was built for
 * @param experts        experts of a mixture-of-experts feed-forward (1: dense)
 * @param topK           experts each token is routed to (1 when dense)
 */
public record TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
        int experts, int topK) {
    /** Validates. */
    public TransformerShape {
        Checks.argument(hidden > 0 && heads > 0 && kvHeads > 0 && ffn > 0 && layers > 0 && vocab > 0 && seq > 0,
                "transformer sizes must be positive");
        Checks.argument(heads % kvHeads == 0, "heads (%s) must be a multiple of key/value heads (%s)", heads, kvHeads);
        Checks.argument(experts >= 1 && topK >= 1 && topK <= experts, "top-%s of %s experts", topK, experts);
    }
}
