package org.scaledl.graph;

import java.util.Objects;
import org.scaledl.Checks;

/**
 * What a layer is in a transformer-like graph, as the parallel execution and the memory model need it: where it sits
 * ({@link Region}), what it does ({@link Kind}: which tells whether tensor parallelism shards it, whether it works on
 * the residual stream, whether selective recomputation recomputes it), and which kind of block it belongs to. A graph
 * keeps one role per layer index ({@link ModelGraph#role(int)}); a layer's name is for people only.
 *
 * <pre>{@code
 * LayerRole r = g.role(i);
 * if (r.region() == LayerRole.Region.BLOCK && r.kind().residualStream()) { ... }   // replicated unless SP
 * }</pre>
 *
 * @param region where the layer sits
 * @param kind   what it does
 * @param block  the kind of block it belongs to (an index into {@link Blocks#pattern()}), or {@code -1} outside the
 *               blocks
 */
public record LayerRole(Region region, Kind kind, int block) {
    /** A layer no builder described: before the blocks, of no particular kind. */
    public static final LayerRole UNKNOWN = new LayerRole(Region.PROLOGUE, Kind.OTHER, -1);

    /** Where a layer sits. */
    public enum Region {
        /** Before the first block (embeddings). */
        PROLOGUE,
        /** One of the repeated blocks. */
        BLOCK,
        /** After the last block (final norm, head, loss). */
        EPILOGUE
    }

    /**
     * How tensor parallelism treats a layer of a block: split {@code t} ways ({@link #TENSOR}), replicated unless
     * sequence parallelism splits it along the sequence ({@link #SEQUENCE}: the residual stream, the router),
     * replicated always ({@link #NONE}: multi-head latent attention's down projections), or split by expert tensor
     * parallelism instead ({@link #EXPERT}: the routed experts, which expert parallelism spreads too).
     */
    public enum Split {
        /** Split over the tensor-parallel ranks (heads, MLP columns, vocabulary). */
        TENSOR,
        /** Replicated over the tensor-parallel ranks; split along the sequence with sequence parallelism. */
        SEQUENCE,
        /** Replicated over the tensor-parallel ranks. */
        NONE,
        /** The routed experts: spread by expert parallelism, split by expert tensor parallelism. */
        EXPERT
    }

    /**
     * What a layer does. Each kind says how tensor parallelism splits it ({@link #split()}), whether it lies on the
     * <em>residual stream</em> (as wide as the hidden size) and whether it belongs to the <em>attention core</em>
     * (what selective recomputation recomputes).
     */
    public enum Kind {
        /** A token (or token-type) embedding look-up: split over the vocabulary by tensor parallelism. */
        EMBEDDING(Split.TENSOR),
        /** Position embeddings and relative-position biases: replicated. */
        POSITION(Split.NONE),
        /** A norm (LayerNorm, RMSNorm): on the residual stream. */
        NORM(Split.SEQUENCE),
        /** The query, key and value projections (and their rotary embeddings and norms). */
        QKV(Split.TENSOR),
        /** Multi-head latent attention's down projections and their norms: replicated (Megatron's "duplicated"). */
        LATENT(Split.NONE),
        /** The attention core: scores, softmax, its dropout, the context product (per head). */
        ATTENTION_CORE(Split.TENSOR),
        /**
         * DeepSeek's sparse-attention indexer: its per-head products over every earlier key, their weighted sum and
         * the top-k selection; replicated over tensor-parallel ranks (Megatron's "duplicated" indexer), part of the
         * attention core otherwise (recomputed with it, timed as its fused products).
         */
        INDEXER(Split.NONE),
        /** The heads' merge and the output projection. */
        ATTENTION_OUT(Split.TENSOR),
        /** The feed-forward up (and gate) projection (of a dense MLP or a shared expert). */
        MLP_IN(Split.TENSOR),
        /** The feed-forward activation (and gating product). */
        MLP_ACT(Split.TENSOR),
        /** The feed-forward down projection. */
        MLP_OUT(Split.TENSOR),
        /** A mixture of experts' router (the gate over experts): replicated, split along the sequence with SP. */
        ROUTER(Split.SEQUENCE),
        /** The tokens' dispatch to their experts. */
        EXPERT_DISPATCH(Split.EXPERT),
        /** The experts' up (and gate) projections. */
        EXPERT_IN(Split.EXPERT),
        /** The experts' activations. */
        EXPERT_ACT(Split.EXPERT),
        /** The experts' down projections. */
        EXPERT_OUT(Split.EXPERT),
        /** The weighted combination of the experts' outputs. */
        EXPERT_COMBINE(Split.EXPERT),
        /** A state-space (Mamba) mixer's input projection. */
        MIXER_IN(Split.TENSOR),
        /** A state-space mixer's convolution, scan and gated norm. */
        MIXER_CORE(Split.TENSOR),
        /** A state-space mixer's output projection. */
        MIXER_OUT(Split.TENSOR),
        /** A residual add: on the residual stream. */
        RESIDUAL(Split.SEQUENCE),
        /** A dropout on the residual stream (after a projection, after the embeddings). */
        DROPOUT(Split.SEQUENCE),
        /** The output projection to the vocabulary (the logits): split over the vocabulary. */
        HEAD(Split.TENSOR),
        /** The loss over the logits: split over the vocabulary (Megatron's vocabulary-parallel cross entropy). */
        LOSS(Split.TENSOR),
        /** Anything else (imported graphs' layers whose role is not known). */
        OTHER(Split.TENSOR);

        private final Split split;

        Kind(Split split) {
            this.split = split;
        }

        /** How tensor parallelism treats it. */
        public Split split() {
            return split;
        }

        /** Whether the layer works on the residual stream (replicated over tensor-parallel ranks without SP). */
        public boolean residualStream() {
            return this == NORM || this == RESIDUAL || this == DROPOUT;
        }

        /** Whether it belongs to the attention core (recomputed by selective recomputation). */
        public boolean attentionCore() {
            return this == ATTENTION_CORE || this == INDEXER;
        }

        /** Whether it is part of a mixture of experts' routed experts (sharded by expert parallelism). */
        public boolean expert() {
            return split == Split.EXPERT;
        }

        /**
         * Whether it is a linear layer of a block that the low-precision recipes (FP8, FP4) run on their matrix units:
         * the projections of attention, MLP, experts and mixers (not the attention core, the router or the head).
         */
        public boolean lowPrecisionLinear() {
            return this == QKV || this == LATENT || this == ATTENTION_OUT || this == MLP_IN || this == MLP_OUT
                    || this == EXPERT_IN || this == EXPERT_OUT || this == MIXER_IN || this == MIXER_OUT;
        }
    }

    /** Validates. */
    public LayerRole {
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(kind, "kind");
        Checks.argument(block >= -1, "block kind must be >= -1: %s", block);
        Checks.argument((region == Region.BLOCK) == (block >= 0), "a layer is in a block exactly when it has a "
                + "block kind: %s, %s", region, block);
    }

    /** A layer before or after the blocks. */
    public static LayerRole outside(Region region, Kind kind) {
        return new LayerRole(region, kind, -1);
    }

    /** A layer of a block of kind {@code block}. */
    public static LayerRole inBlock(Kind kind, int block) {
        return new LayerRole(Region.BLOCK, kind, block);
    }

    /** Whether the layer is in a block and on the residual stream. */
    public boolean onResidualStream() {
        return region == Region.BLOCK && kind.residualStream();
    }
}
