package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import org.junit.jupiter.api.Test;

/**
 * A contraction's predicted time is shrunk toward its floor by {@link MegatronModel#EFFICIENCY_SHRINKAGE} before its
 * class's coefficient scales it ({@link MegatronModel#dense}).
 */
class ContractionShrinkageTest {
    private static final double A = MegatronModel.EFFICIENCY_SHRINKAGE;

    private static MegatronTerms one(double tree, double floor) {
        return MegatronTerms.builder().contraction(ExecutionTerm.DENSE, tree, floor).build();
    }

    @Test
    void exactValues() {
        // four times its floor predicted: 4^0.84 times the floor, then the coefficient
        assertEquals(Math.pow(4, A), MegatronModel.uncalibrated().dense(one(4, 1)), 1e-12);
        assertEquals(2 * 10 * Math.pow(4, A), MegatronModel.uncalibrated().with(ExecutionTerm.DENSE, 2)
                .dense(one(40, 10)), 1e-9);
        // at its floor nothing moves; below it the floor holds
        assertEquals(3, MegatronModel.uncalibrated().dense(one(3, 3)), 1e-12);
        assertEquals(1, MegatronModel.uncalibrated().dense(one(0.5, 1)), 1e-12);
        // without a floor the prediction stands
        assertEquals(5, MegatronModel.uncalibrated().dense(one(5, 0)), 1e-12);
        assertEquals(0, MegatronModel.shrunk(0, 2));
    }

    /** The sum over contractions: each shrunk on its own, a class's coefficient on its own. */
    @Test
    void everyContractionIsShrunkOnItsOwn() {
        MegatronTerms t = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, 8, 1)
                .contraction(ExecutionTerm.DENSE_FP8, 2, 1).build();
        MegatronModel m = MegatronModel.uncalibrated().with(ExecutionTerm.DENSE_FP8, 3);
        assertEquals(Math.pow(8, A) + 3 * Math.pow(2, A), m.dense(t), 1e-12);
    }

    /**
     * Repeating a contraction k times costs k times (the units' contractions are weighted by their counts), a slower
     * prediction is never faster, and a prediction above its floor moves toward it without crossing it.
     */
    @Property(tries = 300)
    void shrinkageIsScaleFreeMonotoneAndStaysBetweenFloorAndPrediction(
            @ForAll @DoubleRange(min = 0.01, max = 1e4) double floor,
            @ForAll @DoubleRange(min = 0.1, max = 50) double ratio,
            @ForAll @DoubleRange(min = 0.01, max = 1000) double k) {
        double tree = ratio * floor;
        double s = MegatronModel.shrunk(tree, floor);
        assertEquals(k * s, MegatronModel.shrunk(k * tree, k * floor), 1e-9 * k * s);
        assertTrue(MegatronModel.shrunk(tree * 1.01, floor) > s);
        assertTrue(s >= Math.min(tree, floor) * (1 - 1e-12) && s <= Math.max(tree, floor) * (1 + 1e-12),
                tree + " " + floor + " -> " + s);
    }
    /**
     * The terms keep each contraction's shrunk time (computed once, as a fit evaluates them thousands of times): the
     * calibrated sum equals, to the last bit, the slow reference that shrinks each contraction when asked,
     * {@code Σ max(c_class · shrunk(tree, floor), floor)} in the contractions' order, for any contractions, classes
     * and coefficients.
     */
    @Property(tries = 300)
    void theKeptShrunkTimesGiveTheSlowReferenceExactly(@ForAll("contractions") double[][] rows,
            @ForAll @DoubleRange(min = 0.05, max = 5) double dense,
            @ForAll @DoubleRange(min = 0.05, max = 5) double fp8) {
        ExecutionTerm[] classes = {ExecutionTerm.DENSE, ExecutionTerm.DENSE_FP8, ExecutionTerm.DENSE_ATTENTION};
        MegatronTerms.Builder b = MegatronTerms.builder();
        for (double[] r : rows) {
            b.contraction(classes[(int) r[2]], r[0], r[1]);
        }
        MegatronTerms t = b.build();
        MegatronModel m = MegatronModel.uncalibrated().with(ExecutionTerm.DENSE, dense)
                .with(ExecutionTerm.DENSE_FP8, fp8);
        double reference = 0;
        for (double[] r : rows) {
            double c = m.coefficient(classes[(int) r[2]]);
            reference += Math.max(c * MegatronModel.shrunk(r[0], r[1]), r[1]);
        }
        assertEquals(reference, m.dense(t), 0.0);
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<double[][]> contractions() {
        net.jqwik.api.Arbitrary<double[]> row = net.jqwik.api.Combinators.combine(
                net.jqwik.api.Arbitraries.doubles().between(0, 1e4),
                net.jqwik.api.Arbitraries.doubles().between(0, 1e4),
                net.jqwik.api.Arbitraries.integers().between(0, 2))
                .as((tree, floor, cls) -> new double[] {tree, floor, cls});
        return row.array(double[][].class).ofMinSize(0).ofMaxSize(40);
    }
}
