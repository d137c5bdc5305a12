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
 * @param experts        routed experts of a mixture-of-experts feed-forward (1: dense)
 * @param topK           experts each token is routed to (1 when dense)
 * @param kvWidth        elements of one token's keys and values together, what context parallelism exchanges per
 *                       attention layer ({@code 2·kvHeads·headDim}; for latent attention the decompressed keys and
 *                       values of every head); a layer of its own geometry names its own
 *                       ({@link Layer#KEY_VALUE_HEADS})
 * @param fusedAttention whether the attention core is fused (FlashAttention: keeps its inputs and row statistics,
 *                       never the score matrix): the model's setting; a layer whose heads its fused kernel does not
 *                       take keeps an unfused core (its products keep no tiles on chip, {@link Layer#keepsTilesOnChip})
 * @param mtpLayers      multi-token-prediction layers the configuration describes (DeepSeek-V3's 1): counted as
 *                       layers of the last pipeline stage when Megatron splits the layers, and in training computed
 *                       there (a layer and another pass through the output head and loss each)
 * @param dispatchWidth  elements of one token that a mixture of experts sends to each of its experts (the hidden size;
 *                       the latent size where the experts work in a latent space, as Nemotron-3's LatentMoE does:
 *                       the tokens are projected down before their dispatch)
 * @param sparseTopK     the keys a query reads in DeepSeek's sparse attention (its indexer's top-k); 0 for dense
 *                       attention
 * @param contextPositions the positions a rotary model's configuration names ({@code max_position_embeddings}); 0
 *                       where it names none or the positions are learned (a longer sequence is then refused)
 * @param routingGroups  the groups of equal size group-limited routing splits the routed experts into (DeepSeek's
 *                       {@code n_group}); 0 where the routing is not group-limited
 * @param groupsPicked   the groups a token's experts are chosen within ({@code topk_group}); 0 without groups
 * @param storedQuantization the format a checkpoint stores its weights in where its configuration says one
 *                       ({@code quantization_config}'s method: {@code fp8}, {@code mxfp4}), which the prediction does
 *                       not read (the weights take the job's precision; said where it matters: serving, a frozen
 *                       LoRA base); empty for none
 */
public record TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
        int experts, int topK, long kvWidth, boolean fusedAttention, int mtpLayers, long dispatchWidth,
        int sparseTopK, long contextPositions, int routingGroups, int groupsPicked, String storedQuantization) {
    /** Validates. */
    public TransformerShape {
        Checks.argument(hidden > 0 && heads > 0 && kvHeads > 0 && ffn > 0 && layers > 0 && vocab > 0 && seq > 0
                && kvWidth > 0, "transformer sizes must be positive");
        Checks.argument(heads % kvHeads == 0, "heads (%s) must be a multiple of key/value heads (%s)", heads, kvHeads);
        Checks.argument(experts >= 1 && topK >= 1 && topK <= experts, "top-%s of %s experts", topK, experts);
        Checks.argument(mtpLayers >= 0, "multi-token-prediction layers must be >= 0: %s", mtpLayers);
        Checks.argument(dispatchWidth > 0, "dispatch width must be positive: %s", dispatchWidth);
        Checks.argument(sparseTopK >= 0, "sparse attention's keys must be >= 0: %s", sparseTopK);
        Checks.argument(contextPositions >= 0, "context positions must be >= 0: %s", contextPositions);
        java.util.Objects.requireNonNull(storedQuantization, "storedQuantization");
        Checks.argument(routingGroups == 0 && groupsPicked == 0 || routingGroups > 0 && experts % routingGroups == 0
                && groupsPicked >= 1 && groupsPicked <= routingGroups, "routing groups %s (%s picked) must divide the "
                + "%s experts", routingGroups, groupsPicked, experts);
    }

    /** A shape whose routing is not group-limited. */
    public TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
            int experts, int topK, long kvWidth, boolean fusedAttention, int mtpLayers, long dispatchWidth,
            int sparseTopK, long contextPositions) {
        this(hidden, heads, kvHeads, ffn, layers, vocab, seq, experts, topK, kvWidth, fusedAttention, mtpLayers,
                dispatchWidth, sparseTopK, contextPositions, 0, 0, "");
    }

    /** A shape of a checkpoint stored in the job's precision (no {@code quantization_config}). */
    public TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
            int experts, int topK, long kvWidth, boolean fusedAttention, int mtpLayers, long dispatchWidth,
            int sparseTopK, long contextPositions, int routingGroups, int groupsPicked) {
        this(hidden, heads, kvHeads, ffn, layers, vocab, seq, experts, topK, kvWidth, fusedAttention, mtpLayers,
                dispatchWidth, sparseTopK, contextPositions, routingGroups, groupsPicked, "");
    }

    /** A shape whose configuration names no context length. */
    public TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
            int experts, int topK, long kvWidth, boolean fusedAttention, int mtpLayers, long dispatchWidth,
            int sparseTopK) {
        this(hidden, heads, kvHeads, ffn, layers, vocab, seq, experts, topK, kvWidth, fusedAttention, mtpLayers,
                dispatchWidth, sparseTopK, 0);
    }

    /** Whether the sequence is longer than the context its configuration names (a context extension not stated). */
    public boolean beyondContext() {
        return contextPositions > 0 && seq > contextPositions;
    }

    /** A shape of dense attention (no sparse-attention indexer). */
    public TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
            int experts, int topK, long kvWidth, boolean fusedAttention, int mtpLayers, long dispatchWidth) {
        this(hidden, heads, kvHeads, ffn, layers, vocab, seq, experts, topK, kvWidth, fusedAttention, mtpLayers,
                dispatchWidth, 0);
    }

    /**
     * The keys a query attends to on average over a causal sequence of {@code s} when it reads at most {@code k}
     * (DeepSeek's sparse attention, or a sliding window of {@code k}): every earlier key up to the {@code k}-th query,
     * {@code k} after,
     * {@code (k(k+1)/2 + (s-k)·k)/s} for {@code s > k}; dense causal attention's {@code (s+1)/2} for {@code s <= k}.
     */
    public static long sparseCausalKeys(long s, long k) {
        if (s <= k) {
            return Math.max(1, (s + 1) / 2);
        }
        double kk = k;
        return Math.max(1, Math.round((kk * (kk + 1) / 2 + (s - kk) * kk) / s));
    }

    /**
     * The share of its work an attention-core layer does when the sequence packs documents of {@code documents}
     * tokens, attention running within each: the quadratic layers (dense attention, the sparse-attention indexer)
     * {@code documents / seq}; with sparse attention ({@code sparseTopK > 0}) the core's layers the keys a query
     * reads within a document over those within the sequence.
     *
     * @param indexer whether the layer is the indexer's (quadratic even in a sparse model)
     */
    public double packedShare(long documents, boolean indexer) {
        return packedShare(documents, indexer, 0);
    }

    /**
     * {@link #packedShare(long, boolean)} of a layer whose queries attend causally within a sliding window of
     * {@code window} tokens shorter than the sequence (0: none): the keys the window reads within a document over
     * those it reads within the sequence ({@link #sparseCausalKeys}; a window longer than the documents is their
     * causal half).
     */
    public double packedShare(long documents, boolean indexer, long window) {
        if (documents <= 0 || documents >= seq) {
            return 1;
        }
        if (window > 0 && window < seq && !indexer) {
            return (double) sparseCausalKeys(documents, window) / sparseCausalKeys(seq, window);
        }
        if (sparseTopK > 0 && !indexer) {
            return (double) sparseCausalKeys(documents, sparseTopK) / sparseCausalKeys(seq, sparseTopK);
        }
        return (double) documents / seq;
    }

    /** A shape whose experts (if any) work in the hidden size: tokens dispatched {@code hidden} wide. */
    public TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
            int experts, int topK, long kvWidth, boolean fusedAttention, int mtpLayers) {
        this(hidden, heads, kvHeads, ffn, layers, vocab, seq, experts, topK, kvWidth, fusedAttention, mtpLayers,
                hidden);
    }

    /**
     * A shape whose keys and values are {@code 2·kvHeads·hidden/heads} wide (multi-head or grouped-query), with an
     * unfused attention core.
     */
    public TransformerShape(long hidden, long heads, long kvHeads, long ffn, int layers, long vocab, long seq,
            int experts, int topK) {
        this(hidden, heads, kvHeads, ffn, layers, vocab, seq, experts, topK, Math.max(1, 2 * kvHeads * hidden / heads),
                false, 0);
    }

    /** Whether the model routes tokens to experts (more than one): a mixture of experts has its own interval. */
    public boolean mixtureOfExperts() {
        return experts > 1;
    }
}
