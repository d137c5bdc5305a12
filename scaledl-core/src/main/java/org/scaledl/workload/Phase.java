package org.scaledl.workload;

import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * What one iteration of a workload does.
 */
public enum Phase {
    /** Forward, loss, backward (with data-parallel gradient all-reduce) and optimizer step. */
    TRAIN,
    /** Forward only, evaluation mode (BatchNorm uses running statistics, Dropout is the identity). */
    INFER;

    /**
     * Parses {@code train}/{@code training} or {@code infer}/{@code inf}/{@code inference}/{@code eval}/{@code prefill}
     * (any case: a transformer's inference is its prefill).
     *
     * @throws InvalidInputException for anything else, saying for {@code decode} that decoding is not predicted
     */
    public static Phase parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "train", "training" -> TRAIN;
            // a serving engine's two phases: the prefill is what infer predicts, token-by-token decoding is not
            case "infer", "inf", "inference", "eval", "prefill" -> INFER;
            case "decode", "decoding", "generate", "generation" -> throw InvalidInputException.of("unknown phase '"
                    + InvalidInputException.printable(text, 80) + "': token-by-token decoding (each step reading the "
                    + "key/value cache) is not predicted; infer predicts a prefill (expected train or infer)");
            default -> throw InvalidInputException.of("unknown phase '" + InvalidInputException.printable(text, 80)
                    + "' (expected train or infer)");
        };
    }

    /** Lower-case name as used in CSV files. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
