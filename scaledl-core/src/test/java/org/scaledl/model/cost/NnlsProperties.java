package org.scaledl.model.cost;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The NNLS solver satisfies the Karush–Kuhn–Tucker conditions of its problem. */
class NnlsProperties {

    @Property(tries = 200)
    void solutionSatisfiesKkt(@ForAll @IntRange(min = 1, max = 12) int d, @ForAll @IntRange(min = 1, max = 40) int m,
            @ForAll long seed) {
        Random r = new Random(seed);
        double[][] a = new double[m + d][d];
        double[] y = new double[m + d];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < d; j++) {
                a[i][j] = r.nextGaussian();
            }
            y[i] = r.nextGaussian() * 3;
        }
        for (int j = 0; j < d; j++) {
            a[m + j][j] = 0.1; // keeps AᵀA positive definite
        }
        double[][] h = new double[d][d];
        double[] b = new double[d];
        for (double[] row : a) {
            for (int j = 0; j < d; j++) {
                for (int k = 0; k < d; k++) {
                    h[j][k] += row[j] * row[k];
                }
            }
        }
        for (int i = 0; i < a.length; i++) {
            for (int j = 0; j < d; j++) {
                b[j] += a[i][j] * y[i];
            }
        }
        double[] theta = Nnls.solve(h, b);
        double scale = 1;
        for (double v : b) {
            scale = Math.max(scale, Math.abs(v));
        }
        for (int j = 0; j < d; j++) {
            double g = -b[j];
            for (int k = 0; k < d; k++) {
                g += h[j][k] * theta[k];
            }
            assertTrue(theta[j] >= 0, "negative coefficient");
            assertTrue(g >= -1e-8 * scale, "gradient " + g + " negative at " + j);
            if (theta[j] > 1e-9) {
                assertTrue(Math.abs(g) <= 1e-8 * scale, "gradient " + g + " nonzero at free coordinate " + j);
            }
        }
    }
}
