package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link Candidates#nearMisses} over headers of candidate columns, their other frameworks' names, their look-alikes
 * and other text: each near miss is a header column that is no candidate column, stands for a candidate column the
 * header lacks, and comes out the same whatever the order of the other columns.
 */
class NearMissProperties {
    private static final String[] OTHERS = {"tp", "PP", "dp_size", "num_gpus", "gbs", "mbs", "seq_len", "dtype",
        "micro_batch", "Seq", "tensr", "note", "cost_usd", "sp", "gpu", "bench", "id", "notes", "model_key", "",
        "t\u001bp", "world size", "gradient_accumulation_steps"};

    @Property(tries = 300)
    void nearMissesNameAColumnTheHeaderLacks(@ForAll @IntRange(min = 0, max = 1_000_000) int seed) {
        Random r = new Random(seed);
        List<String> candidates = new ArrayList<>(Candidates.COLUMNS);
        List<String> header = new ArrayList<>();
        for (int k = r.nextInt(12); k > 0; k--) {
            String c = r.nextBoolean() ? candidates.get(r.nextInt(candidates.size()))
                    : OTHERS[r.nextInt(OTHERS.length)];
            if (!header.contains(c)) {
                header.add(c);
            }
        }
        Map<String, String> near = Candidates.nearMisses(header);
        near.forEach((column, meant) -> {
            assertTrue(header.contains(column), column);
            assertFalse(Candidates.COLUMNS.contains(column), column);
            assertTrue(Candidates.COLUMNS.contains(meant), meant);
            assertFalse(header.contains(meant), column + " -> " + meant + " in " + header);
        });
        List<String> reversed = new ArrayList<>(header);
        java.util.Collections.reverse(reversed);
        assertEquals(near, Candidates.nearMisses(reversed), "the same near misses in any column order");
    }
}
