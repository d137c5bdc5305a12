package org.scaledl.workload;

import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * What of an iteration the framework captures in CUDA graphs and replays with one launch, so that its host no longer
 * dispatches those kernels one by one: the host's per-layer time ({@link org.scaledl.model.exec.ExecutionTerm}'s
 * host terms) is what changes, and in the predictions only a whole iteration captured ({@link #ITERATION}) changes
 * it. Megatron core's {@code cuda_graph_impl} and {@code cuda_graph_scope} (and
 * {@code enable_cuda_graph}, {@code external_cuda_graph} before them) select it.
 */
public enum CudaGraphs {
    /** No graphs (Megatron's default): the host launches every kernel of every layer. */
    NONE,
    /**
     * Each layer, or the parts of it a scope names (attention, the MLP, the router and the experts' preprocessing,
     * Mamba mixers), captured and replayed per layer and micro-batch: Megatron core's {@code local} graphs of
     * {@code transformer_layer} or {@code full_layer} scope, or Transformer Engine's graphs of named scopes. Predicted
     * as {@link #NONE}: the host still launches each layer's graphs and what stays outside them (the experts' token
     * exchange, whose sizes it reads), and the published runs do not show what it saves (a host cost of its own per
     * graphed layer, fitted on the 45 such runs, predicted held-out model families worse: docs/results.md).
     */
    LAYERS,
    /**
     * The whole forward and backward pass of every micro-batch captured as one graph (Megatron core's {@code local}
     * graphs of {@code full_iteration} scope, with the experts' tokens padded to a capacity so that no size is read
     * back): no per-layer host time remains.
     */
    ITERATION;

    /** Lower-case name as used in CSV files and on the command line. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses {@code none}, {@code layers} or {@code iteration} (any case; an empty text, {@code false} or {@code off}
     * none; Megatron's scope names {@code transformer_layer}, {@code full_layer} layers and {@code full_iteration}
     * iteration).
     *
     * @throws InvalidInputException naming the text and the accepted values
     */
    public static CudaGraphs parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "none", "", "false", "off", "no" -> NONE;
            case "layers", "layer", "transformer_layer", "full_layer" -> LAYERS;
            case "iteration", "full_iteration" -> ITERATION;
            default -> throw InvalidInputException.of("unknown CUDA graphs '"
                    + InvalidInputException.printable(text, 80)
                    + "' (expected none, layers or iteration)");
        };
    }
}
