package org.scaledl.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;
import org.scaledl.model.Prediction;
import org.scaledl.model.TrainingTime;
import org.scaledl.workload.Workload;

/**
 * {@code --train-tokens}: a number of tokens to train on ({@code 15e12}, or with a suffix, {@code 15T}), and what
 * it takes at a training job's predicted step ({@link TrainingTime}). {@code predict} and {@code layouts} say it
 * alike.
 */
final class TrainTokens {
    private TrainTokens() {
    }

    /**
     * What {@code tokens} (null: none given) take at {@code pr}, the prediction of {@code w}
     * ({@link TrainingTime#of}).
     */
    static Optional<TrainingTime> of(Double tokens, Workload w, Prediction pr) {
        return tokens == null ? Optional.empty() : TrainingTime.of(tokens, w, pr);
    }

    /** As JSON, into {@code o}. */
    static ObjectNode put(TrainingTime t, ObjectNode o) {
        return o.put("tokens", t.tokens()).put("tokens_per_iteration", t.perIteration())
                .put("iterations", t.iterations()).put("days", t.days()).put("low_days", t.lowDays())
                .put("high_days", t.highDays()).put("gpu_hours", t.gpuHours()).put("low_gpu_hours", t.lowGpuHours())
                .put("high_gpu_hours", t.highGpuHours()).put("fits", t.fits());
    }

    /** A count of tokens as given ({@link TrainingTime#parseTokens}). */
    static final class Converter implements picocli.CommandLine.ITypeConverter<Double> {
        @Override
        public Double convert(String value) {
            try {
                return TrainingTime.parseTokens(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
