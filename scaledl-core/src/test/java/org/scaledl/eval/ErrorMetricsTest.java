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
}
