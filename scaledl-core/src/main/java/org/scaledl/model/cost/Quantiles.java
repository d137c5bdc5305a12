package org.scaledl.model.cost;

import java.util.Arrays;

/**
 * Sample quantiles with linear interpolation between order statistics (R's type 7, NumPy's default): the median
 * and interval quantiles every model and evaluation in this library use.
 *
 * <pre>{@code
 * double m = Quantiles.median(values);
 * double q95 = Quantiles.of(sortedValues, 0.95);
 * }</pre>
 */
public final class Quantiles {
    private Quantiles() {
    }

    /**
     * The {@code q}-quantile of sorted values (0 for none).
     *
     * @param sorted values in ascending order (not modified)
     * @param q      in [0, 1]
     */
    public static double of(double[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        double pos = q * (sorted.length - 1);
        int i = (int) Math.floor(pos);
        int j = Math.min(sorted.length - 1, i + 1);
        return sorted[i] + (pos - i) * (sorted[j] - sorted[i]);
    }

    /** The median of values in any order (not modified; 0 for none). */
    public static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return of(s, 0.5);
    }

    /**
     * The 90 % interval's log-ratio ends from errors {@code log(predicted / measured)}: a measurement is the prediction
     * divided by the error, so the low end comes from the errors' upper quantile and vice versa; {@code [0, 0]}
     * without errors.
     */
    public static double[] interval(java.util.List<Double> logErrors) {
        if (logErrors.isEmpty()) {
            return new double[2];
        }
        double[] sorted = logErrors.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return new double[] {Math.min(0, -of(sorted, 0.95)), Math.max(0, -of(sorted, 0.05))};
    }
}
