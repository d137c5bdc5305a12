package org.scaledl.model;

import com.google.common.base.Preconditions;
import com.google.common.collect.ImmutableList;
import java.util.List;
import java.util.Objects;

/**
 * A predicted iteration time with an interval and, where the method has one, an explanation.
 *
 * <p>The interval {@code [lowMillis, highMillis]} is an empirical 90 % prediction interval: quantiles of the
 * method's out-of-sample relative errors (for ScaleDL, from cross-validation over model families inside the training
 * data). The breakdown lists each layer's predicted contribution and the workload-level terms; its entries add up to
 * {@link #millis()}.
 *
 * @param millis     predicted time of one iteration, ms
 * @param lowMillis  lower end of the prediction interval
 * @param highMillis upper end of the prediction interval
 * @param breakdown  contributions, largest first (may be empty)
 */
public record Prediction(double millis, double lowMillis, double highMillis, List<Contribution> breakdown) {

    /** Validates and copies. */
    public Prediction {
        Preconditions.checkArgument(Double.isFinite(millis) && millis >= 0, "prediction must be finite: %s", millis);
        Preconditions.checkArgument(lowMillis <= millis && millis <= highMillis,
                "interval [%s, %s] does not contain %s", lowMillis, highMillis, millis);
        breakdown = ImmutableList.copyOf(breakdown);
    }

    /** A point prediction with no interval and no explanation. */
    public static Prediction point(double millis) {
        return new Prediction(millis, millis, millis, List.of());
    }

    /**
     * One term of a prediction.
     *
     * @param name   a layer's node name, or a workload-level term such as {@code allreduce} or {@code overhead}
     * @param kind   {@code layer:<FAMILY>}, {@code communication} or {@code overhead}
     * @param millis its predicted share, ms
     */
    public record Contribution(String name, String kind, double millis) {
        /** Validates. */
        public Contribution {
            Objects.requireNonNull(name);
            Objects.requireNonNull(kind);
        }
    }
}
