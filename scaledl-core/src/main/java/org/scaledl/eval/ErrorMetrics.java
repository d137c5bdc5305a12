package org.scaledl.eval;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;
import org.scaledl.Checks;

/**
 * Accuracy of predictions against measurements.
 *
 * <ul>
 *   <li>{@code mre}: mean relative error, mean of |pred − true| / true (a fraction, 0.05 = 5 %)</li>
 *   <li>{@code rmseMs}: root mean squared error in milliseconds</li>
 *   <li>{@code mape}: the MRE in percent</li>
 *   <li>{@code within10}: share of predictions within ±10 % of the truth</li>
 *   <li>{@code spearman}: Spearman rank correlation (average ranks for ties; NaN for fewer than 2 points or
 *       constant input)</li>
 * </ul>
 *
 * <pre>{@code
 * ErrorMetrics m = ErrorMetrics.of(predicted, measured);
 * System.out.printf("MRE %.1f %%%n", 100 * m.mre());
 * }</pre>
 *
 * @param n        number of points
 * @param mre      mean relative error (fraction)
 * @param rmseMs   root mean squared error (ms)
 * @param mape     mean absolute percentage error (percent)
 * @param within10 share within ±10 %
 * @param spearman Spearman's rank correlation
 */
public record ErrorMetrics(int n, double mre, double rmseMs, double mape, double within10, double spearman) {

    /**
     * Computes the metrics.
     *
     * @param predicted predictions in ms
     * @param actual    measurements in ms (positive)
     * @throws IllegalArgumentException for different lengths, no points or non-positive measurements
     */
    public static ErrorMetrics of(double[] predicted, double[] actual) {
        Checks.argument(predicted.length == actual.length, "lengths differ: %s vs %s", predicted.length,
                actual.length);
        Checks.argument(actual.length > 0, "no points");
        int n = actual.length;
        double rel = 0;
        double sq = 0;
        int within = 0;
        for (int i = 0; i < n; i++) {
            Checks.argument(actual[i] > 0, "measurement %s is not positive: %s", (Integer) i, (Double) actual[i]);
            double r = Math.abs(predicted[i] - actual[i]) / actual[i];
            rel += r;
            sq += (predicted[i] - actual[i]) * (predicted[i] - actual[i]);
            if (r <= 0.10) {
                within++;
            }
        }
        double mre = rel / n;
        return new ErrorMetrics(n, mre, Math.sqrt(sq / n), 100 * mre, (double) within / n,
                spearman(predicted, actual));
    }

    /**
     * The least-squares slope of {@code y} on {@code x} (NaN with fewer than two points or no spread in {@code x}):
     * below 1 where {@code x}, a prediction, spreads more than what it predicts.
     *
     * @throws IllegalArgumentException for arrays of different lengths
     */
    public static double slope(double[] x, double[] y) {
        Checks.argument(x.length == y.length, "lengths differ");
        int n = x.length;
        if (n < 2) {
            return Double.NaN;
        }
        double mx = Arrays.stream(x).average().orElseThrow();
        double my = Arrays.stream(y).average().orElseThrow();
        double sxy = 0;
        double sxx = 0;
        for (int i = 0; i < n; i++) {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
        }
        return sxx > 0 ? sxy / sxx : Double.NaN;
    }

    /** Spearman's ρ: Pearson correlation of the average ranks. */
    public static double spearman(double[] a, double[] b) {
        Checks.argument(a.length == b.length, "lengths differ");
        if (a.length < 2) {
            return Double.NaN;
        }
        return pearson(ranks(a), ranks(b));
    }

    static double[] ranks(double[] v) {
        Integer[] idx = IntStream.range(0, v.length).boxed().toArray(Integer[]::new);
        Arrays.sort(idx, Comparator.comparingDouble(i -> v[i]));
        double[] r = new double[v.length];
        int i = 0;
        while (i < idx.length) {
            int j = i;
            while (j + 1 < idx.length && v[idx[j + 1]] == v[idx[i]]) {
                j++;
            }
            double avg = (i + j) / 2.0 + 1;
            for (int k = i; k <= j; k++) {
                r[idx[k]] = avg;
            }
            i = j + 1;
        }
        return r;
    }

    private static double pearson(double[] x, double[] y) {
        double mx = Arrays.stream(x).average().orElse(0);
        double my = Arrays.stream(y).average().orElse(0);
        double sxy = 0;
        double sxx = 0;
        double syy = 0;
        for (int i = 0; i < x.length; i++) {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
            syy += (y[i] - my) * (y[i] - my);
        }
        return sxx == 0 || syy == 0 ? Double.NaN : sxy / Math.sqrt(sxx * syy);
    }
}
