package org.scaledl.model.cost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

/** Weighted quantiles agree with the unweighted reference and treat weights as repetitions would. */
class QuantilesProperties {

    /** Equal weights (of any size) give the interpolated order-statistic quantile of {@link Quantiles#of}. */
    @Property(tries = 300)
    void equalWeightsGiveTheUnweightedQuantile(@ForAll @IntRange(min = 1, max = 2000) int n, @ForAll long seed,
            @ForAll @DoubleRange(min = 0, max = 1) double q, @ForAll @DoubleRange(min = 0.01, max = 100) double w) {
        Random r = new Random(seed);
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = r.nextGaussian();
        }
        double[] weights = new double[n];
        Arrays.fill(weights, w);
        double[] sorted = v.clone();
        Arrays.sort(sorted);
        assertEquals(Quantiles.of(sorted, q), Quantiles.weighted(v, weights, q), 1e-9);
        assertEquals(sorted[n - 1], Quantiles.weighted(v, weights, 1), 0);
        assertEquals(sorted[0], Quantiles.weighted(v, weights, 0), 0);
    }

    /** A value of weight zero is left out; the quantile lies within the values of positive weight and rises with q. */
    @Property(tries = 300)
    void zeroWeightsAreLeftOutAndQuantilesAreMonotone(@ForAll @IntRange(min = 2, max = 30) int n,
            @ForAll long seed) {
        Random r = new Random(seed);
        double[] v = new double[n + 1];
        double[] w = new double[n + 1];
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            v[i] = r.nextGaussian();
            w[i] = 0.01 + r.nextDouble();
            lo = Math.min(lo, v[i]);
            hi = Math.max(hi, v[i]);
        }
        v[n] = 1e6;
        double[] without = Arrays.copyOf(v, n);
        double[] wWithout = Arrays.copyOf(w, n);
        double previous = Double.NEGATIVE_INFINITY;
        for (double q = 0; q <= 1.0001; q += 0.05) {
            double x = Quantiles.weighted(v, w, Math.min(1, q));
            assertEquals(Quantiles.weighted(without, wWithout, Math.min(1, q)), x, 1e-12);
            assertTrue(x >= lo - 1e-12 && x <= hi + 1e-12 && x >= previous - 1e-12, q + ": " + x);
            previous = x;
        }
    }

    /**
     * A heavier value counts as more of them: weight 6 of 8 on the middle of three values makes it the median; the
     * quantile moves continuously with the weights (a weight changed by 10⁻⁴ moves the 95 % quantile by less than 10⁻³)
     * and weights given in either order give mirrored quantiles.
     */
    @Property(tries = 1)
    void weightPullsTheMedianContinuously() {
        double[] v = {0, 1, 2};
        assertEquals(1, Quantiles.weighted(v, new double[] {1, 6, 1}, 0.5), 1e-12);
        assertEquals(1, Quantiles.weighted(v, new double[] {0.1, 0.6, 0.1}, 0.5), 1e-12);
        assertTrue(Quantiles.weighted(v, new double[] {6, 1, 1}, 0.5) < 1);
        assertTrue(Quantiles.weighted(v, new double[] {1, 1, 6}, 0.5) > 1);
        assertEquals(Quantiles.weighted(v, new double[] {1, 1, 1}, 0.95),
                Quantiles.weighted(v, new double[] {1, 1.0001, 0.9999}, 0.95), 1e-3);
        assertEquals(Quantiles.weighted(v, new double[] {3, 1, 2}, 0.2),
                2 - Quantiles.weighted(new double[] {0, 1, 2}, new double[] {2, 1, 3}, 0.8), 1e-12);
    }
}
