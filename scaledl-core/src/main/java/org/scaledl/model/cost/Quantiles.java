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
     * The {@code q}-quantile of weighted values (0 for none, or for no weight): {@link #of}'s interpolation between
     * order statistics, each value standing for as many of them as its share of the weight (the weights scaled to
     * sum to the number of weighted values), so equal weights give {@link #of}'s quantile, a value of twice the weight
     * counts about as two, and a value of weight zero not at all.
     *
     * @param values  values in any order (not modified)
     * @param weights non-negative finite weights, one per value
     * @param q       in [0, 1]
     */
    public static double weighted(double[] values, double[] weights, double q) {
        if (values.length != weights.length) {
            throw new IllegalArgumentException(values.length + " values but " + weights.length + " weights");
        }
        Integer[] order = new Integer[values.length];
        double total = 0;
        int n = 0;
        for (int i = 0; i < values.length; i++) {
            if (!(weights[i] >= 0) || !Double.isFinite(weights[i])) {
                throw new IllegalArgumentException("weight " + i + " must be finite and >= 0: " + weights[i]);
            }
            if (weights[i] > 0) {
                order[n++] = i;
                total += weights[i];
            }
        }
        if (n == 0) {
            return 0;
        }
        Integer[] kept = Arrays.copyOf(order, n);
        Arrays.sort(kept, (x, y) -> Double.compare(values[x], values[y]));
        // cumulative weights scaled to sum to n: the j-th order statistic (from 0) is the value whose share covers j
        double[] upTo = new double[n];
        double c = 0;
        for (int k = 0; k < n; k++) {
            c += weights[kept[k]] * n / total;
            upTo[k] = c;
        }
        double h = q * (n - 1);
        int j = (int) Math.floor(h);
        double a = statistic(values, kept, upTo, j);
        return j + 1 > n - 1 ? a : a + (h - j) * (statistic(values, kept, upTo, j + 1) - a);
    }

    /** The {@code j}-th weighted order statistic: the first value whose cumulative share exceeds {@code j}. */
    private static double statistic(double[] values, Integer[] kept, double[] upTo, int j) {
        for (int k = 0; k < kept.length; k++) {
            if (upTo[k] > j + 1e-12) {
                return values[kept[k]];
            }
        }
        return values[kept[kept.length - 1]];
    }

    /**
     * The 90 % interval's log-ratio ends from errors weighted as the runs were in their fit ({@link #weighted}):
     * as {@link #interval(java.util.List)} with equal weights; {@code [0, 0]} without errors.
     */
    public static double[] interval(double[] logErrors, double[] weights) {
        if (logErrors.length == 0) {
            return new double[2];
        }
        return new double[] {Math.min(0, -weighted(logErrors, weights, 0.95)),
            Math.max(0, -weighted(logErrors, weights, 0.05))};
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
