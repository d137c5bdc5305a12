package org.scaledl.doe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What no determinant can be taken of is refused where it is given, by every design (Fedorov exchange, budgeted,
 * sequential, representative), naming the row: non-finite or overflowing values, fixed and measured rows included; a candidate set
 * changed after it was given does not change the design; indices outside the candidates are named.
 */
class DesignMisuseTest {
    /** The 3 × 3 full factorial in {-1, 0, 1} with an intercept. */
    private static double[][] grid() {
        double[][] g = new double[9][];
        int i = 0;
        for (int a = -1; a <= 1; a++) {
            for (int b = -1; b <= 1; b++) {
                g[i++] = new double[] {1, a, b};
            }
        }
        return g;
    }

    @Test
    void nonFiniteOrOverflowingRowsAreRefusedNamingTheRow() {
        double[][] huge = grid();
        huge[4][2] = 1e200;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new FedorovExchange(huge, 3));
        assertTrue(e.getMessage().contains("row 4") && e.getMessage().contains("rescale"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new FedorovExchange(grid(), 3)
                .fixed(new double[][] {{1, Double.NaN, 0}}));
        assertTrue(e.getMessage().contains("fixed row 0 has a non-finite value"), e.getMessage());
        double[] costs = new double[9];
        java.util.Arrays.fill(costs, 1);
        e = assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(grid(), costs, 3)
                .fixed(new double[][] {{1, Double.POSITIVE_INFINITY, 0}}));
        assertTrue(e.getMessage().contains("fixed row 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(huge, costs, 3));
        assertTrue(e.getMessage().contains("row 4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new BudgetedDesign(new double[][] {{}, {}}, new double[]
            {1, 1}, 3));
        assertTrue(e.getMessage().contains("no columns"), e.getMessage());
        double[][] nan = grid();
        nan[1][1] = Double.NaN;
        e = assertThrows(IllegalArgumentException.class, () -> SequentialDesign.next(nan, new double[0][], 1));
        assertTrue(e.getMessage().contains("row 1 has a non-finite value"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> SequentialDesign.next(grid(), new double[][] {{1, 2}},
                1));
        assertTrue(e.getMessage().contains("measured row 0 has 2 values, expected 3"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(huge, 3));
        assertTrue(e.getMessage().contains("row 4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new RepresentativeDesign(grid(), 3)
                .fixed(new double[][] {{1, Double.NaN, 0}}));
        assertTrue(e.getMessage().contains("fixed row 0 has a non-finite value"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SequentialDesign.next(grid(), new double[0][], 1, -1));
        assertThrows(IllegalArgumentException.class, () -> SequentialDesign.next(grid(), new double[0][], 1,
                Double.NaN));
    }

    @Test
    void aSingularSequentialStartIsAClearError() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SequentialDesign.next(grid(), new double[0][], 2, 0));
        assertTrue(e.getMessage().contains("ridge"), e.getMessage());
        assertEquals(2, SequentialDesign.next(grid(), new double[0][], 2).size(), "with the default ridge");
    }

    @Test
    void theCandidatesAreCopiedAndIndicesChecked() {
        double[][] g = grid();
        FedorovExchange f = new FedorovExchange(g, 4).seed(3);
        Design before = f.design();
        g[0][1] = Double.NaN;
        g[3] = new double[] {1};
        assertEquals(before, f.design(), "changing the caller's arrays afterwards changes nothing");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.logDet(new int[] {0, 99}));
        assertTrue(e.getMessage().contains("row 99 is not a candidate (0..8)"), e.getMessage());
        double[] costs = new double[9];
        java.util.Arrays.fill(costs, 1);
        BudgetedDesign b = new BudgetedDesign(grid(), costs, 3);
        e = assertThrows(IllegalArgumentException.class, () -> b.cost(List.of(-1)));
        assertTrue(e.getMessage().contains("row -1 is not a candidate"), e.getMessage());
        double[][] h = grid();
        RepresentativeDesign r = new RepresentativeDesign(h, 2);
        Design medoids = r.design();
        h[0][1] = Double.NaN;
        assertEquals(medoids, r.design(), "changing the caller's arrays afterwards changes nothing");
        e = assertThrows(IllegalArgumentException.class, () -> r.distance(new int[] {9}));
        assertTrue(e.getMessage().contains("row 9 is not a candidate (0..8)"), e.getMessage());
    }
}
