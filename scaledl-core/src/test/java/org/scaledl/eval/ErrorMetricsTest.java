package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
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

    @Property(tries = 200)
    void spearmanIsInvariantToMonotoneTransforms(@ForAll @Size(min = 3, max = 20)
            double[] raw, @ForAll @DoubleRange(min = 0.1, max = 5) double power) {
        double[] a = raw.clone();
        double[] b = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = (Double.isFinite(a[i]) ? Math.abs(a[i]) % 1000 : 0) + i * 1e-3;
            b[i] = Math.pow(a[i] + 1, power);
        }
        assertEquals(1.0, ErrorMetrics.spearman(a, b), 1e-9);
    }
}
