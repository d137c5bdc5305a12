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
     * What a layer does. Each kind says whether it lies on the <em>residual stream</em> (as wide as the hidden size,
     * replicated over the tensor-parallel ranks unless sequence parallelism splits it along the sequence) and whether
     * it belongs to the <em>attention core</em> (what selective recomputation recomputes).
     */
    public enum Kind {
        /** A token (or token-type) embedding look-up: split over the vocabulary by tensor parallelism. */
        EMBEDDING(false),
        /** Position embeddings and relative-position biases: replicated. */
        POSITION(false),
        /** A norm (LayerNorm, RMSNorm): on the residual stream. */
        NORM(true),
        /** The query, key and value projections (and their rotary embeddings). */
        QKV(false),
        /** The attention core: scores, softmax, its dropout, the context product (per head). */
        ATTENTION_CORE(false),
        /** The heads' merge and the output projection. */
        ATTENTION_OUT(false),
        /** The feed-forward up (and gate) projection. */
        MLP_IN(false),
        /** The feed-forward activation (and gating product). */
        MLP_ACT(false),
        /** The feed-forward down projection. */
        MLP_OUT(false),
        /** A mixture of experts' router (the gate over experts). */
        ROUTER(false),
        /** The tokens' dispatch to their experts. */
        EXPERT_DISPATCH(false),
        /** The experts' up (and gate) projections. */
        EXPERT_IN(false),
        /** The experts' activations. */
        EXPERT_ACT(false),
        /** The experts' down projections. */
        EXPERT_OUT(false),
        /** The weighted combination of the experts' outputs. */
        EXPERT_COMBINE(false),
        /** A state-space (Mamba) mixer's input projection. */
        MIXER_IN(false),
        /** A state-space mixer's convolution and scan. */
        MIXER_CORE(false),
        /** A state-space mixer's output projection. */
        MIXER_OUT(false),
        /** A residual add: on the residual stream. */
        RESIDUAL(true),
        /** A dropout on the residual stream (after a projection, after the embeddings). */
        DROPOUT(true),
        /** The output projection to the vocabulary (the logits): split over the vocabulary. */
        HEAD(false),
        /** The loss over the logits: split over the vocabulary (Megatron's vocabulary-parallel cross entropy). */
        LOSS(false),
        /** Anything else (imported graphs' layers whose role is not known). */
        OTHER(false);

        private final boolean residualStream;

        Kind(boolean residualStream) {
            this.residualStream = residualStream;
        }

        /** Whether the layer works on the residual stream (replicated over tensor-parallel ranks without SP). */
        public boolean residualStream() {
            return residualStream;
        }

        /** Whether it belongs to the attention core (recomputed by selective recomputation). */
        public boolean attentionCore() {
            return this == ATTENTION_CORE;
        }

        /** Whether it is part of a mixture of experts' routed experts (sharded by expert parallelism). */
        public boolean expert() {
            return this == EXPERT_DISPATCH || this == EXPERT_IN || this == EXPERT_ACT || this == EXPERT_OUT
                    || this == EXPERT_COMBINE;
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
