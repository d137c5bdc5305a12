package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * {@link Parallelism#microBatches}: a global batch becomes micro-batches exactly where batch × replicas divide it,
 * checked against the product it inverts (the slow reference), over counts up to where a long overflows.
 */
class GlobalBatchProperties {
    @Property(tries = 500)
    void microBatchesInvertTheGlobalBatch(@ForAll @IntRange(min = 1, max = 1 << 20) int micro,
            @ForAll @IntRange(min = 1, max = 4096) int batch, @ForAll @IntRange(min = 1, max = 1 << 16) int replicas) {
        long global = (long) micro * batch * replicas;
        assertEquals(micro, Parallelism.microBatches(global, batch, replicas).orElseThrow());
    }

    @Property(tries = 500)
    void anyGlobalBatchIsWholeMicroBatchesOrNone(@ForAll @LongRange(min = -5, max = Long.MAX_VALUE) long global,
            @ForAll @LongRange(min = -5, max = Long.MAX_VALUE) long batch,
            @ForAll @LongRange(min = -5, max = Long.MAX_VALUE) long replicas) {
        java.util.OptionalInt m = Parallelism.microBatches(global, batch, replicas);
        if (m.isPresent()) {
            // the product, in exact arithmetic, is the global batch
            assertTrue(m.getAsInt() > 0);
            assertEquals(java.math.BigInteger.valueOf(global), java.math.BigInteger.valueOf(m.getAsInt())
                    .multiply(java.math.BigInteger.valueOf(batch)).multiply(java.math.BigInteger.valueOf(replicas)));
        } else {
            assertTrue(global <= 0 || batch <= 0 || replicas <= 0 || java.math.BigInteger.valueOf(global)
                    .mod(java.math.BigInteger.valueOf(batch).multiply(java.math.BigInteger.valueOf(replicas)))
                    .signum() != 0 || global / batch / replicas > Integer.MAX_VALUE);
        }
    }
}
