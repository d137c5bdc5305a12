package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;

/** A grouped product's features with a share of its experts' weights ({@link MegatronExecution#fewerWeights}). */
class GroupedProductTest {

    /**
     * The work, the activations and the outputs stay; the weights' bytes read forward, their gradients' backward and
     * the parameters scale by the share; the whole share is the product itself.
     */
    @Property(tries = 200)
    void aShareOfTheWeightsKeepsTheWork(@ForAll @IntRange(min = 1, max = 4096) int rows,
            @ForAll @IntRange(min = 64, max = 8192) int k, @ForAll @IntRange(min = 64, max = 8192) int n,
            @ForAll @IntRange(min = 1, max = 64) int experts, @ForAll @DoubleRange(min = 0.01, max = 1) double share) {
        long params = (long) experts * k * n;
        double activations = 4.0 * rows * k;
        LayerFeatures f = new LayerFeatures(3, OpFamily.DENSE, 2.0 * rows * k * n, 4.0 * rows * k * n,
                activations + 4.0 * params, 4.0 * rows * n, 8.0 * params + 2 * activations, params, (double) rows * n,
                0, 0, experts, k, n);
        LayerFeatures s = MegatronExecution.fewerWeights(f, share);
        assertEquals(f.flopsFwd(), s.flopsFwd());
        assertEquals(f.flopsBwd(), s.flopsBwd());
        assertEquals(f.bytesWritten(), s.bytesWritten());
        assertEquals(f.outputElements(), s.outputElements());
        assertEquals(activations + 4.0 * params * share, s.bytesRead(), 1e-9 * f.bytesRead());
        assertEquals(2 * activations + 8.0 * params * share, s.bytesBwd(), 1e-9 * f.bytesBwd());
        assertEquals(Math.round(params * share), s.params());
        assertEquals(f, MegatronExecution.fewerWeights(f, 1.0));
    }

    /**
     * A rank holds its share of a grouped product's experts (the right-hand operands, {@code groups}) over the expert
     * ranks, whatever splits each expert's columns; a product that is not grouped is one.
     */
    @org.junit.jupiter.api.Test
    void aRankHoldsItsShareOfTheExperts() {
        LayerFeatures grouped = new LayerFeatures(0, OpFamily.DENSE, 1e12, 0, 1e9, 1e8, 0, 64L * 4096 * 1024, 1e7, 0, 0,
                64, 4096, 1024);
        assertEquals(8, MegatronExecution.expertsHeld(grouped, 8));
        assertEquals(64, MegatronExecution.expertsHeld(grouped, 1));
        assertEquals(1, MegatronExecution.expertsHeld(grouped, 64));
        LayerFeatures plain = new LayerFeatures(0, OpFamily.DENSE, 1e12, 0, 1e9, 1e8, 0, 4096L * 1024, 1e7, 0, 0, 0,
                4096, 1024);
        assertEquals(1, MegatronExecution.expertsHeld(plain, 8));
    }
}
