package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.UniqueElements;
import org.junit.jupiter.api.Test;

class ErrorMetricsTest {

    @Test
    void handComputedValues() {
        ErrorMetrics m = ErrorMetrics.of(new double[] {110, 80, 300}, new double[] {100, 100, 300});
        assertEquals((0.1 + 0.2 + 0) / 3, m.mre(), 1e-12);
        assertEquals(Math.sqrt((100 + 400 + 0) / 3.0), m.rmseMs(), 1e-12);
        assertEquals(100 * m.mre(), m.mape(), 1e-12);
        assertEquals(2.0 / 3, m.within10(), 1e-12);
        assertEquals(3, m.n());
    }

    @Test
    void spearmanWithTiesUsesAverageRanks() {
        // ranks of a: 1, 2.5, 2.5, 4; of b: 1, 2, 3, 4
        double rho = ErrorMetrics.spearman(new double[] {1, 2, 2, 3}, new double[] {10, 20, 30, 40});
        assertEquals(0.9486832980505138, rho, 1e-12);
    }

    @Test
    void rejectsBadInput() {
        assertThrows(IllegalArgumentException.class, () -> ErrorMetrics.of(new double[] {1}, new double[] {0}));
        assertThrows(IllegalArgumentException.class, () -> ErrorMetrics.of(new double[] {1, 2}, new double[] {1}));
        assertThrows(IllegalArgumentException.class, () -> ErrorMetrics.of(new double[0], new double[0]));
    }

    /**
     * Distinct integers stay distinct under {@code (x + 1)^power} in double precision (neighbours differ by at least
     * one, far above an ulp at these magnitudes), so the transform is strictly monotone on the sample and the ranks
     * must agree exactly. Rounding a near-tie into a tie would lower ρ, which is why the inputs are not arbitrary
     * doubles.
     */
    @Property(tries = 200)
    void spearmanIsInvariantToMonotoneTransforms(
            @ForAll @Size(min = 3, max = 20) @UniqueElements List<@IntRange(min = 0, max = 1_000_000) Integer> raw,
            @ForAll @DoubleRange(min = 0.1, max = 5) double power) {
        double[] a = new double[raw.size()];
        double[] b = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = raw.get(i);
            b[i] = Math.pow(a[i] + 1, power);
        }
        assertEquals(1.0, ErrorMetrics.spearman(a, b), 1e-9);
    }

    @Property(tries = 100)
    void spearmanOfAReversedOrderIsMinusOne(
            @ForAll @Size(min = 3, max = 20) @UniqueElements List<@IntRange(min = -1000, max = 1000) Integer> raw) {
        double[] a = raw.stream().mapToDouble(Integer::doubleValue).toArray();
        double[] b = raw.stream().mapToDouble(x -> -3.0 * x).toArray();
        assertEquals(-1.0, ErrorMetrics.spearman(a, b), 1e-9);
    }

    /** The least-squares slope: exact on a line, attenuated where the predictor carries noise of its own. */
    @Test
    void slopeOfALineAndOfANoisyPredictor() {
        assertEquals(2, ErrorMetrics.slope(new double[] {1, 2, 3, 4}, new double[] {3, 5, 7, 9}), 1e-12);
        // truth -1, -1, 1, 1 predicted with ±1 of independent noise: covariance 4 / variance 8
        assertEquals(0.5, ErrorMetrics.slope(new double[] {-2, 0, 0, 2}, new double[] {-1, -1, 1, 1}), 1e-12);
        assertEquals(Double.NaN, ErrorMetrics.slope(new double[] {1}, new double[] {2}));
        assertEquals(Double.NaN, ErrorMetrics.slope(new double[] {1, 1}, new double[] {2, 3}));
        assertThrows(IllegalArgumentException.class, () -> ErrorMetrics.slope(new double[2], new double[3]));
    }

    @Property(tries = 200)
    void slopeRecoversAnyLine(@ForAll @Size(min = 3, max = 20) @UniqueElements List<@IntRange(min = -50, max = 50)
            Integer> xs, @ForAll @DoubleRange(min = -5, max = 5) double a,
            @ForAll @DoubleRange(min = -5, max = 5) double b) {
        double[] x = xs.stream().mapToDouble(Integer::doubleValue).toArray();
        double[] y = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = a + b * x[i];
        }
        assertEquals(b, ErrorMetrics.slope(x, y), 1e-9);
    }
}
