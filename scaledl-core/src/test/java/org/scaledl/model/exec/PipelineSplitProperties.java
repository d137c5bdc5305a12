package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Example;
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
            // Megatron's even splits keep every layer once, none negative, the middle chunks alike
            assertEquals(chunks, even.length);
            assertEquals(layers, java.util.Arrays.stream(even).sum(), layers + " layers, " + chunks + " chunks");
            for (int j = 0; j < chunks; j++) {
                assertTrue(even[j] >= 0 && (j == 0 || j == chunks - 1 || even[j] == even[Math.min(1, chunks - 1)]),
                        "chunk " + j + ": " + java.util.Arrays.toString(even));
            }
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

    /**
     * DeepSeek-V3 (61 layers, one MTP layer) splits as Megatron-Bridge's recipes lay it out
     * ({@code set_deepseek_v3_pipeline_model_parallel_layout}): the embedding uncounted, the loss one unit and the MTP
     * layer two, on 4, 8 and 16 chunks; on 32 chunks, where that leaves the last chunk short, as the H100 recipe's
     * {@code Et|(tt|)*30mL}: a layer with the embedding, two a chunk, the MTP layer and the loss alone.
     */
    @Example
    void deepSeekV3SplitsAsItsRecipesLayItOut() {
        assertArrayEquals(new int[] {16, 16, 16, 13}, MegatronExecution.split(61, 4, 1));
        int[] eight = MegatronExecution.split(61, 8, 1);
        assertArrayEquals(new int[] {8, 8, 8, 8, 8, 8, 8, 5}, eight);
        int[] sixteen = MegatronExecution.split(61, 16, 1);
        assertEquals(4, sixteen[0]);
        assertEquals(1, sixteen[15]);
        for (int j = 1; j < 15; j++) {
            assertEquals(4, sixteen[j], "chunk " + j);
        }
        int[] thirtyTwo = MegatronExecution.split(61, 32, 1);
        assertEquals(1, thirtyTwo[0]);
        assertEquals(0, thirtyTwo[31]);
        for (int j = 1; j < 31; j++) {
            assertEquals(2, thirtyTwo[j], "chunk " + j);
        }
        // without the MTP layer: the embedding and the loss counted one each where 61 + 2 does not divide either
        assertArrayEquals(null, MegatronExecution.chunkSizes(61, 16, 0));
    }
}
