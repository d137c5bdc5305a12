package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The split of a transformer's layers over pipeline chunks: even where Megatron's is, balanced otherwise. */
class PipelineSplitProperties {

    /**
     * Every split keeps every layer once, every chunk but the first and the last holds a layer, and with the embedding
     * and the loss counted on the end chunks no chunk carries more than one unit above another; where Megatron's even
     * split exists it is the one taken.
     */
    @Property
    void splitsKeepEveryLayerAndBalanceTheChunks(@ForAll @IntRange(min = 1, max = 200) int layers,
            @ForAll @IntRange(min = 1, max = 128) int chunks, @ForAll @IntRange(min = 0, max = 2) int mtp) {
        int[] sizes = MegatronExecution.split(layers, chunks, mtp);
        if (chunks > layers + 2) {
            assertEquals(null, sizes, "more chunks than layers and end units");
            return;
        }
        int[] even = MegatronExecution.chunkSizes(layers, chunks, mtp);
        if (even != null) {
            assertArrayEquals(even, sizes);
            return;
        }
        assertNotNull(sizes, layers + " layers, " + chunks + " chunks, mtp " + mtp);
        int sum = 0;
        int lo = Integer.MAX_VALUE;
        int hi = 0;
        for (int j = 0; j < chunks; j++) {
            sum += sizes[j];
            assertTrue(sizes[j] >= (j == 0 || j == chunks - 1 ? 0 : 1), "chunk " + j + ": " + sizes[j]);
            int units = sizes[j] + (j == 0 ? 1 : 0) + (j == chunks - 1 ? 1 : 0);
            lo = Math.min(lo, units);
            hi = Math.max(hi, units);
        }
        assertEquals(layers, sum);
        assertTrue(hi - lo <= 1, "balanced: " + lo + " to " + hi);
    }
}
