package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import org.junit.jupiter.api.Test;

/**
 * How the GPU's time and the host's dispatch combine ({@link MegatronModel#compute}): a near-hard max in a dense job,
 * and in a job with routed experts (whose dispatcher waits for the GPU every such layer) the expectation of
 * {@code max(h₁, g₁) + max(h₂, g₂)} over the two halves of every stretch between two waits.
 */
class HostOverlapTest {
    /** GPU time {@code g} (one 16-bit contraction at its floor 0), host time {@code h}, a share {@code f} with experts. */
    private static MegatronTerms terms(double g, double h, double f) {
        return MegatronTerms.builder().contraction(ExecutionTerm.DENSE, g, 0).add(ExecutionTerm.LAYER_STEP, h)
                .add(ExecutionTerm.EXPERT_LAYER_STEP, f * h).build();
    }

    /** Host time {@code h} from one ms a layer step, nothing per expert layer: the host part is the steps alone. */
    private static final MegatronModel MODEL = MegatronModel.uncalibrated().with(ExecutionTerm.LAYER_STEP, 1)
            .with(ExecutionTerm.EXPERT_LAYER_STEP, 0);

    @Test
    void denseLayersTakeTheSlowerSideAndExpertLayersFourThirdsWhereBothAreEqual() {
        assertEquals(Math.pow(2, 1 / 8.0) * 10, MODEL.compute(terms(10, 10, 0)), 1e-9);
        assertEquals(4.0 / 3 * 10, MODEL.compute(terms(10, 10, 1)), 1e-9);
        // a hybrid with experts in a quarter of its layers: the host cannot run ahead past any of them
        assertEquals(4.0 / 3 * 10, MODEL.compute(terms(10, 10, 0.25)), 1e-9);
        // no host time: the GPU's alone, with or without experts
        assertEquals(7, MegatronModel.uncalibrated().compute(terms(7, 3, 1)), 1e-12);
    }

    /**
     * The exponent's derivation, checked against a slow reference: the two halves' maxes averaged over uniform
     * divisions of the host's and the GPU's work (Monte Carlo), within 1 % at every ratio of host to GPU time.
     */
    @Test
    void theSyncedExponentIsTheExpectedSumOfTheTwoHalvesMaxes() {
        Random r = new Random(7);
        int n = 200_000;
        double[][] split = new double[n][2];
        for (double[] s : split) {
            s[0] = r.nextDouble();
            s[1] = r.nextDouble();
        }
        for (double ratio : new double[] {0.1, 0.25, 0.5, 1, 2, 4, 10}) {
            double sum = 0;
            for (double[] s : split) {
                sum += Math.max(s[0], ratio * s[1]) + Math.max(1 - s[0], ratio * (1 - s[1]));
            }
            double expected = sum / n;
            double pnorm = MegatronModel.smoothMax(1, ratio, MegatronModel.SMOOTH_SYNCED);
            assertEquals(1, pnorm / expected, 0.01, "host/GPU " + ratio);
        }
    }

    @Property
    void theComputeLiesBetweenTheSlowerSideAndTheSum(@ForAll @DoubleRange(min = 0.01, max = 1e4) double g,
            @ForAll @DoubleRange(min = 0, max = 1e4) double h, @ForAll @DoubleRange(min = 0, max = 1) double f) {
        double c = MODEL.compute(terms(g, h, f));
        assertTrue(c >= Math.max(g, h) * (1 - 1e-12) && c <= (g + h) * (1 + 1e-12), c + " for " + g + ", " + h);
    }

    @Property
    void theHostsWaitNeverMakesAnIterationFaster(@ForAll @DoubleRange(min = 0.01, max = 1e4) double g,
            @ForAll @DoubleRange(min = 0.01, max = 1e4) double h, @ForAll @DoubleRange(min = 0.01, max = 1) double f) {
        assertTrue(MODEL.compute(terms(g, h, f)) >= MODEL.compute(terms(g, h, 0)) * (1 - 1e-12));
    }
}
