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
     * Parses {@code train}/{@code training} or {@code infer}/{@code inf}/{@code inference}/{@code eval} (any case).
     *
     * @throws InvalidInputException for anything else
     */
    public static Phase parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "train", "training" -> TRAIN;
            case "infer", "inf", "inference", "eval" -> INFER;
            default -> throw InvalidInputException.of("unknown phase '" + InvalidInputException.printable(text, 80)
                    + "' (expected train or infer)");
        };
    }

    /** Lower-case name as used in CSV files. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
