package org.scaledl.workload;

import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * Activation recomputation in training (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
 * Models", 2022): what the forward pass keeps for the backward pass, and what the backward pass computes again.
 */
public enum Recompute {
    /** Every activation kept; no forward work repeated. */
    NONE,
    /**
     * Selective: the attention core (scores, softmax, dropout, the context product) is recomputed, everything else
     * kept: most of the memory saved for a few per cent of the work.
     */
    SELECTIVE,
    /**
     * Full: only each layer's input kept; the whole forward pass of every layer runs again in the backward pass
     * (with {@link Workload#recomputeLayers()} only the first layers of each pipeline stage's model chunk, Megatron's
     * block method).
     */
    FULL,
    /**
     * Not stated: none where the job fits in its device's memory, else the least recomputation that makes it fit
     * (selective, then full recomputation of the first layers of each model chunk, then of every layer), the way
     * published training recipes are tuned. Transformer jobs only; any other job recomputes nothing.
     */
    AUTO;

    /** Lower-case name as used in CSV files and on the command line. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses {@code none}, {@code selective}, {@code full} or {@code auto} (any case; {@code false}/{@code off}
     * mean none, {@code true}/{@code on} full, an empty text auto).
     *
     * @throws InvalidInputException naming the text and the accepted values
     */
    public static Recompute parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "none", "no", "off", "false", "0" -> NONE;
            case "selective", "sel" -> SELECTIVE;
            case "full", "on", "true", "1" -> FULL;
            case "auto", "" -> AUTO;
            default -> throw InvalidInputException.of("unknown recompute '" + InvalidInputException.printable(text, 80)
                    + "' (expected none, selective, full or auto)");
        };
    }
}
