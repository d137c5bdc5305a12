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
    /** Host time {@code h} from one ms a layer step, nothing per expert layer: the host part is the steps alone. */
    private static final MegatronModel MODEL = MegatronModel.uncalibrated().with(ExecutionTerm.LAYER_STEP, 1)
            .with(ExecutionTerm.EXPERT_LAYER_STEP, 0);

    /**
     * GPU time {@code g} (one 16-bit contraction, floor 0), host time {@code h}, a share {@code f} of the layer
     * executions with routed experts.
     */
    private static MegatronTerms terms(double g, double h, double f) {
        return MegatronTerms.builder().contraction(ExecutionTerm.DENSE, g, 0).add(ExecutionTerm.LAYER_STEP, h)
                .add(ExecutionTerm.EXPERT_LAYER_STEP, f * h).build();
    }

    /** {@code E[max(a, r·b) + max(1 − a, r·(1 − b))]} for independent uniform {@code a, b}: the slow reference. */
    private static double twoHalves(double r) {
        double hi = Math.max(1, r);
        double lo = Math.min(1, r);
        return hi + lo * lo / (3 * hi);
    }

    /** Exact values: the 8-norm without experts, 4/3 of the GPU's time with them where host and GPU are equal. */
    @Test
    void denseJobsTakeTheSlowerSideAndExpertJobsFourThirdsWhereBothAreEqual() {
        assertEquals(Math.pow(2, 1 / 8.0) * 10, MODEL.compute(terms(10, 10, 0)), 1e-9);
        assertEquals(4.0 / 3 * 10, MODEL.compute(terms(10, 10, 1)), 1e-9);
        // a hybrid with experts in a quarter of its layers: the host cannot run ahead past any of them
        assertEquals(4.0 / 3 * 10, MODEL.compute(terms(10, 10, 0.25)), 1e-9);
        // no host time: the GPU's alone, with or without experts
        assertEquals(7, MegatronModel.uncalibrated().compute(terms(7, 3, 1)), 1e-12);
        assertEquals(0, MegatronModel.smoothMax(0, 0, MegatronModel.SMOOTH_SYNCED));
    }

    /**
     * The exponent's derivation: the closed form of the two halves' expected maxes checked by Monte Carlo, and the
     * p-norm within 0.9 % of it at every ratio of host to GPU time (its worst near 0.44 and 2.29).
     */
    @Test
    void theSyncedExponentIsTheExpectedSumOfTheTwoHalvesMaxes() {
        Random random = new Random(7);
        int n = 200_000;
        double[][] split = new double[n][2];
        for (double[] s : split) {
            s[0] = random.nextDouble();
            s[1] = random.nextDouble();
        }
        for (double r : new double[] {0.1, 0.44, 1, 2.29, 10}) {
            double sum = 0;
            for (double[] s : split) {
                sum += Math.max(s[0], r * s[1]) + Math.max(1 - s[0], r * (1 - s[1]));
            }
            assertEquals(twoHalves(r), sum / n, 0.005 * twoHalves(r), "Monte Carlo at host/GPU " + r);
        }
        for (double log = -4; log <= 4; log += 0.01) {
            double r = Math.exp(log);
            double pnorm = MegatronModel.smoothMax(1, r, MegatronModel.SMOOTH_SYNCED);
            assertTrue(pnorm <= twoHalves(r) * (1 + 1e-12) && pnorm >= 0.991 * twoHalves(r), "host/GPU " + r);
        }
    }

    /** Whatever the exponent, the compute part is at least the slower side and at most the two added. */
    @Property
    void theComputeLiesBetweenTheSlowerSideAndTheSum(@ForAll @DoubleRange(min = 0.01, max = 1e4) double g,
            @ForAll @DoubleRange(min = 0, max = 1e4) double h, @ForAll @DoubleRange(min = 0, max = 1) double f) {
        double c = MODEL.compute(terms(g, h, f));
        assertTrue(c >= Math.max(g, h) * (1 - 1e-12) && c <= (g + h) * (1 + 1e-12), c + " for " + g + ", " + h);
    }

    /** The host's wait in a job with experts never makes its iteration faster than the same terms without them. */
    @Property
    void theHostsWaitNeverMakesAnIterationFaster(@ForAll @DoubleRange(min = 0.01, max = 1e4) double g,
            @ForAll @DoubleRange(min = 0.01, max = 1e4) double h, @ForAll @DoubleRange(min = 0.01, max = 1) double f) {
        assertTrue(MODEL.compute(terms(g, h, f)) >= MODEL.compute(terms(g, h, 0)) * (1 - 1e-12));
    }
}
