package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The expected maximum of {@code n} standard normal deviates ({@link MegatronExecution#expectedMaxOfNormals}), which
 * scales a tensor-parallel group's wait for its slowest rank: the closed forms for two to five, and a slow reference
 * by another integral for any {@code n}.
 */
class ExpectedMaxTest {
    /** Closed forms: 0, 1/√π, 3/(2√π), 6·atan(√2)/π^(3/2), 5/(4√π)·(1 + 6·asin(1/3)/π). */
    @Test
    void theClosedFormsOfFewRanksAreMet() {
        double sqrtPi = Math.sqrt(Math.PI);
        assertEquals(0, MegatronExecution.expectedMaxOfNormals(1));
        assertEquals(1 / sqrtPi, MegatronExecution.expectedMaxOfNormals(2), 1e-6);
        assertEquals(3 / (2 * sqrtPi), MegatronExecution.expectedMaxOfNormals(3), 1e-6);
        assertEquals(6 * Math.atan(Math.sqrt(2)) / Math.pow(Math.PI, 1.5), MegatronExecution.expectedMaxOfNormals(4),
                1e-6);
        assertEquals(5 / (4 * sqrtPi) * (1 + 6 * Math.asin(1.0 / 3) / Math.PI),
                MegatronExecution.expectedMaxOfNormals(5), 1e-6);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MegatronExecution.expectedMaxOfNormals(0));
        assertTrue(e.getMessage().contains("ranks"), e.getMessage());
    }

    /**
     * Against a slow reference, {@code ∫₀^∞ (1 − Φ^n) dx − ∫_{−∞}^0 Φ^n dx} with Φ by Simpson's rule from 0 at each
     * point: equal to 1e-5; it grows with {@code n} and stays below {@code √(2 ln n)}.
     */
    @Property(tries = 40)
    void theGridIntegralMatchesASlowReference(@ForAll @IntRange(min = 1, max = 300) int n) {
        double fast = MegatronExecution.expectedMaxOfNormals(n);
        assertEquals(reference(n), fast, 1e-5, "n = " + n);
        assertTrue(MegatronExecution.expectedMaxOfNormals(n + 1) > fast, "grows with the ranks at " + n);
        assertTrue(fast <= Math.sqrt(2 * Math.log(n)) + 1e-12, "below sqrt(2 ln n) at " + n);
    }

    private static double reference(int n) {
        double h = 0.005;
        double sum = 0;
        for (double x = -9; x < 9; x += h) {
            double mid = x + h / 2;
            double p = Math.pow(cdf(mid), n);
            sum += mid >= 0 ? 1 - p : -p;
        }
        return sum * h;
    }

    /** Φ(x) = ½ + ∫₀^x φ, by Simpson's rule on 400 intervals. */
    private static double cdf(double x) {
        int k = 400;
        double h = x / k;
        double s = pdf(0) + pdf(x);
        for (int i = 1; i < k; i++) {
            s += (i % 2 == 1 ? 4 : 2) * pdf(i * h);
        }
        return 0.5 + s * h / 3;
    }

    private static double pdf(double x) {
        return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
    }
}
