package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Each other stage's share of a micro-batch in the pipeline's fill and drain ({@link MegatronExecution#fillShare}). */
class PipelineFillTest {

    /**
     * With enough micro-batches the interleaved schedule's {@code 1 / v}; without interleaving 1; one micro-batch
     * passes every chunk in turn (1: the whole model's time, whatever {@code v}); never more for more micro-batches,
     * never less than {@code 1 / v}; the slots a step takes, {@code m + (p − 1)·share}, grow with {@code m}.
     */
    @Property(tries = 300)
    void theFillIsTheSchedulesAndOneMicroBatchPassesEveryChunk(@ForAll @IntRange(min = 2, max = 64) int p,
            @ForAll @IntRange(min = 1, max = 8) int v, @ForAll @IntRange(min = 1, max = 128) int m) {
        double share = MegatronExecution.fillShare(p, v, m);
        assertEquals(1.0, MegatronExecution.fillShare(p, 1, m), 1e-12);
        assertEquals(1.0, MegatronExecution.fillShare(p, v, 1), 1e-12);
        if (m >= p) {
            assertEquals(1.0 / v, share, 1e-12);
        }
        assertTrue(share >= 1.0 / v - 1e-12 && share <= 1 + 1e-12);
        assertTrue(MegatronExecution.fillShare(p, v, m + 1) <= share + 1e-12);
        assertTrue(m + 1 + (p - 1) * MegatronExecution.fillShare(p, v, m + 1) >= m + (p - 1) * share - 1e-9);
        assertEquals(0, MegatronExecution.fillShare(1, v, m));
    }
}
