package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cluster evaluation's rows by a flag ({@link ClusterEvaluation#byFlag}): two rows that partition the split's
 * runs, those with the flag first, where both kinds hold runs; none where one kind holds them all (a row of the other
 * would repeat the split's figures under a name that says otherwise).
 */
class ClusterEvaluationRowsTest {
    /** A run's error as the evaluation keeps it: relative error, inside, mixture of experts, at the memory edge. */
    private static double[] run(double error, boolean experts) {
        return new double[] {error, 1, experts ? 1 : 0, 0, 100 * (1 + error), 90, 110};
    }

    @Test
    void bothKindsMakeTwoRowsThatPartitionTheRuns() {
        List<double[]> errors = List.of(run(0.10, true), run(-0.30, true), run(0.02, false), run(-0.04, false),
                run(0.06, false));
        List<ClusterEvaluation.Split> out = new ArrayList<>();
        ClusterEvaluation.byFlag(out, "  family held out, ", 10, errors, ClusterEvaluation.KIND, "mixtures of experts",
                "dense");
        assertEquals(2, out.size());
        assertEquals("  family held out, mixtures of experts", out.get(0).name());
        assertEquals(2, out.get(0).testRuns());
        assertEquals(0.20, out.get(0).mre(), 1e-12);
        assertEquals(-0.10, out.get(0).bias(), 1e-12);
        assertEquals("  family held out, dense", out.get(1).name());
        assertEquals(3, out.get(1).testRuns());
        assertEquals(0.04, out.get(1).mre(), 1e-12);
        assertEquals(0.04 / 3, out.get(1).bias(), 1e-12);
    }

    @Test
    void oneKindAloneMakesNoRow() {
        List<ClusterEvaluation.Split> out = new ArrayList<>();
        ClusterEvaluation.byFlag(out, "  family held out, ", 10, List.of(run(0.1, false), run(0.2, false)),
                ClusterEvaluation.KIND, "mixtures of experts", "dense");
        assertTrue(out.isEmpty(), out.toString());
    }
}
