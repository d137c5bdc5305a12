package org.scaledl.model;

import java.util.Locale;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * What a number of tokens takes to train on at a training job's predicted step: the whole iterations, each the
 * sequences of every replica, and the days (with the 90 % interval) and GPU-hours of uninterrupted training (no
 * restarts, checkpoints or failures). The command line's {@code --train-tokens} says it.
 *
 * <pre>{@code
 * Prediction pr = gpu.predict(job);
 * TrainingTime.of(TrainingTime.parseTokens("15T"), job, pr).ifPresent(t -> log.info(t.describe()));
 * }</pre>
 *
 * @param tokens       the tokens to train on
 * @param perIteration tokens an iteration: the sequences of every replica
 * @param iterations   whole iterations
 * @param days         days at the predicted step
 * @param lowDays      days at the interval's low end
 * @param highDays     days at the interval's high end
 * @param gpuHours     GPU-hours at the predicted step
 * @param lowGpuHours  GPU-hours at the interval's low end
 * @param highGpuHours GPU-hours at the interval's high end
 * @param fits         whether the job fits its GPUs' memory (a time of one that does not is said so)
 */
public record TrainingTime(double tokens, double perIteration, double iterations, double days, double lowDays,
        double highDays, double gpuHours, double lowGpuHours, double highGpuHours, boolean fits) {
    /** The most tokens taken (a quintillion: beyond any run). */
    public static final double MAX_TOKENS = 1e18;

    /** The suffixes a count may end in: thousand, million, billion (B or G), trillion. */
    private static final String SUFFIXES = "KMBGT";

    /**
     * What {@code tokens} take at {@code pr}, the prediction of {@code w}; empty for a job that is no transformer's
     * training.
     *
     * @throws IllegalArgumentException for tokens outside 1 to {@link #MAX_TOKENS}
     */
    public static Optional<TrainingTime> of(double tokens, Workload w, Prediction pr) {
        Checks.argument(tokens >= 1 && tokens <= MAX_TOKENS, "tokens must be from 1 to %s: %s", MAX_TOKENS, tokens);
        if (w.phase() == Phase.INFER || w.graph().transformer().isEmpty()) {
            return Optional.empty();
        }
        double perIteration = (double) w.batch() * w.parallelism().data() * w.graph().transformer().get().seq();
        double iterations = Math.ceil(tokens / perIteration);
        double day = 86_400e3;
        double hour = 3_600e3 / w.parallelism().ranks();
        return Optional.of(new TrainingTime(tokens, perIteration, iterations, iterations * pr.millis() / day,
                iterations * pr.lowMillis() / day, iterations * pr.highMillis() / day, iterations * pr.millis() / hour,
                iterations * pr.lowMillis() / hour, iterations * pr.highMillis() / hour, !pr.outOfMemory()));
    }

    /** As a line of text: {@code 15,000,000,000,000 tokens: ... days (90 % interval ...), ... GPU-hours}. */
    public String describe() {
        return String.format(Locale.ROOT, "%,.0f tokens: %,.0f iterations of %,.0f tokens, %.1f days (90%% "
                + "interval %.1f–%.1f), %,.0f GPU-hours (%,.0f–%,.0f), uninterrupted%s", tokens, iterations,
                perIteration, days, lowDays, highDays, gpuHours, lowGpuHours, highGpuHours, fits ? ""
                        : " (a job that does not fit its GPUs' memory)");
    }

    /**
     * A count of tokens as written: a decimal number ({@code 15e12}, {@code 1000000}, underscores allowed) or one with
     * a suffix of {@value #SUFFIXES} ({@code 15T}, {@code 1.5B}, {@code 300M}); a whole number from 1 to
     * {@link #MAX_TOKENS}.
     *
     * @throws IllegalArgumentException naming the text for anything else
     */
    public static double parseTokens(String value) {
        String v = value.strip().replace("_", "");
        double scale = 1;
        int s = v.isEmpty() ? -1 : SUFFIXES.indexOf(Character.toUpperCase(v.charAt(v.length() - 1)));
        if (s >= 0) {
            scale = switch (SUFFIXES.charAt(s)) {
                case 'K' -> 1e3;
                case 'M' -> 1e6;
                case 'T' -> 1e12;
                default -> 1e9;
            };
            v = v.substring(0, v.length() - 1);
        }
        double x;
        try {
            x = Double.parseDouble(v) * scale;
        } catch (NumberFormatException e) {
            x = Double.NaN;
        }
        // Double.parseDouble takes hexadecimal and "Infinity" too: a token count is a plain decimal
        if (!v.matches("[0-9]+(\\.[0-9]*)?([eE][+-]?[0-9]+)?|\\.[0-9]+([eE][+-]?[0-9]+)?")) {
            x = Double.NaN;
        }
        if (Double.isNaN(x)) {
            throw new IllegalArgumentException("'" + org.scaledl.InvalidInputException.printable(value, 40)
                    + "' is not a number of tokens (15e12, or with a suffix K, M, B or T: 15T, 1.5B)");
        }
        // (a suffix's product may miss a whole number by a rounding)
        double whole = Math.rint(x);
        if (!(x >= 1 && x <= MAX_TOKENS) || Math.abs(x - whole) > 1e-9 * Math.max(1, x)) {
            throw new IllegalArgumentException("must be a whole number of tokens from 1 to 1e18, got "
                    + org.scaledl.InvalidInputException.printable(value, 40));
        }
        return whole;
    }
}
