package org.scaledl.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;
import java.util.Optional;
import org.scaledl.model.Prediction;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * {@code --train-tokens}: a number of tokens to train on ({@code 15e12}, or with a suffix, {@code 15T}), and what
 * it takes at a training job's predicted step: the whole iterations, each the sequences of every replica, and the
 * days (with the 90 % interval) and GPU-hours, of uninterrupted training (no restarts, checkpoints or failures).
 * {@code predict} and {@code layouts} say it alike.
 */
final class TrainTokens {
    private TrainTokens() {
    }

    /** The most tokens {@code --train-tokens} takes (a quintillion: beyond any run). */
    static final double MAX = 1e18;

    /** The suffixes a count may end in: thousand, million, billion (B or G), trillion. */
    private static final String SUFFIXES = "KMBGT";

    /**
     * What a number of tokens takes at a predicted step.
     *
     * @param tokens       the tokens to train on
     * @param perIteration tokens an iteration: the sequences of every replica
     * @param iterations   whole iterations
     * @param days         days at the predicted step, and at the interval's low and high ends
     * @param gpuHours     GPU-hours at the predicted step, and at the interval's low and high ends
     * @param fits         whether the job fits its GPUs' memory (a time of one that does not is said so)
     */
    record Training(double tokens, double perIteration, double iterations, double days, double lowDays,
            double highDays, double gpuHours, double lowGpuHours, double highGpuHours, boolean fits) {

        /** As a line of text: {@code 15,000,000,000,000 tokens: ... days (90 % interval ...), ... GPU-hours}. */
        String describe() {
            return String.format(Locale.ROOT, "%,.0f tokens: %,.0f iterations of %,.0f tokens, %.1f days (90%% "
                    + "interval %.1f–%.1f), %,.0f GPU-hours (%,.0f–%,.0f), uninterrupted%s", tokens, iterations,
                    perIteration, days, lowDays, highDays, gpuHours, lowGpuHours, highGpuHours, fits ? ""
                            : " (a job that does not fit its GPUs' memory)");
        }

        /** As JSON, into {@code o}. */
        ObjectNode put(ObjectNode o) {
            return o.put("tokens", tokens).put("tokens_per_iteration", perIteration).put("iterations", iterations)
                    .put("days", days).put("low_days", lowDays).put("high_days", highDays).put("gpu_hours", gpuHours)
                    .put("low_gpu_hours", lowGpuHours).put("high_gpu_hours", highGpuHours).put("fits", fits);
        }
    }

    /**
     * What {@code tokens} take at {@code pr}, the prediction of {@code w}; empty without tokens or for a job that is
     * no transformer's training.
     */
    static Optional<Training> of(Double tokens, Workload w, Prediction pr) {
        if (tokens == null || w.phase() == Phase.INFER || w.graph().transformer().isEmpty()) {
            return Optional.empty();
        }
        double perIteration = (double) w.batch() * w.parallelism().data() * w.graph().transformer().get().seq();
        double iterations = Math.ceil(tokens / perIteration);
        double day = 86_400e3;
        double hour = 3_600e3 / w.parallelism().ranks();
        return Optional.of(new Training(tokens, perIteration, iterations, iterations * pr.millis() / day,
                iterations * pr.lowMillis() / day, iterations * pr.highMillis() / day, iterations * pr.millis() / hour,
                iterations * pr.lowMillis() / hour, iterations * pr.highMillis() / hour, !pr.outOfMemory()));
    }

    /**
     * A count of tokens as given: a decimal number ({@code 15e12}, {@code 1000000}) or one with a suffix of
     * {@value #SUFFIXES} ({@code 15T}, {@code 1.5B}, {@code 300M}); a whole number from 1 to {@link #MAX}.
     */
    static final class Converter implements picocli.CommandLine.ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
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
                throw new picocli.CommandLine.TypeConversionException("'" + org.scaledl.InvalidInputException
                        .printable(value, 40) + "' is not a number of tokens (15e12, or with a suffix K, M, B or T: "
                        + "15T, 1.5B)");
            }
            // (a suffix's product may miss a whole number by a rounding)
            double whole = Math.rint(x);
            if (!(x >= 1 && x <= MAX) || Math.abs(x - whole) > 1e-9 * Math.max(1, x)) {
                throw new picocli.CommandLine.TypeConversionException("must be a whole number of tokens from 1 to "
                        + "1e18, got " + org.scaledl.InvalidInputException.printable(value, 40));
            }
            return whole;
        }
    }
}
