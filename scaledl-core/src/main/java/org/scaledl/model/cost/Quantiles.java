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
     * The {@code q}-quantile of weighted values (0 for none, or for no weight): the values sorted, value {@code k}
     * placed at {@code (S_k − w_k/2 − w_0/2) / (W − w_0/2 − w_last/2)} ({@code S_k} the weight up to and including
     * it, {@code W} the total; the first at 0, the last at 1, the others at the middle of their weight) and the
     * quantile interpolated linearly between places: equal weights give {@link #of}'s quantile, the result moves
     * continuously with the weights, and a value of weight zero is left out.
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
        int n = 0;
        for (int i = 0; i < values.length; i++) {
            if (!(weights[i] >= 0) || !Double.isFinite(weights[i])) {
                throw new IllegalArgumentException("weight " + i + " must be finite and >= 0: " + weights[i]);
            }
            if (weights[i] > 0) {
                order[n++] = i;
            }
        }
        if (n == 0) {
            return 0;
        }
        Integer[] kept = Arrays.copyOf(order, n);
        Arrays.sort(kept, (x, y) -> Double.compare(values[x], values[y]));
        if (n == 1 || q <= 0) {
            return values[kept[0]];
        }
        if (q >= 1) {
            return values[kept[n - 1]];
        }
        double total = 0;
        for (Integer k : kept) {
            total += weights[k];
        }
        double first = weights[kept[0]] / 2;
        double span = total - first - weights[kept[n - 1]] / 2;
        double before = 0;
        double prevPlace = 0;
        double prevValue = values[kept[0]];
        for (int k = 0; k < n; k++) {
            double w = weights[kept[k]];
            double place = k == 0 ? 0 : k == n - 1 ? 1 : (before + w / 2 - first) / span;
            before += w;
            double v = values[kept[k]];
            if (q <= place) {
                return k == 0 || place <= prevPlace ? v
                        : prevValue + (q - prevPlace) / (place - prevPlace) * (v - prevValue);
            }
            prevPlace = place;
            prevValue = v;
        }
        return values[kept[n - 1]];
    }

    /**
     * The 90 % interval's log-ratio ends from weighted errors ({@link #weighted}; the runs' weights in their fit, or
     * each family's runs weighing one together):
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
