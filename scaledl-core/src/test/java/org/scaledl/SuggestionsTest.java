package org.scaledl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SuggestionsTest {
    private static final List<String> COLUMNS = List.of("batch", "micro_batches", "seq", "world_size", "tensor",
            "model", "recompute_layers");

    /** Misspellings of a known column are caught; other names (a table's extra columns) are left alone. */
    @Test
    void misspeltCatchesNearNamesOnly() {
        assertEquals(Optional.of("micro_batches"), Suggestions.misspelt("micro_batch", COLUMNS));
        assertEquals(Optional.of("micro_batches"), Suggestions.misspelt("Micro-Batches", COLUMNS));
        assertEquals(Optional.of("seq"), Suggestions.misspelt("SEQ", COLUMNS));
        assertEquals(Optional.of("world_size"), Suggestions.misspelt("worldsize", COLUMNS));
        assertEquals(Optional.of("recompute_layers"), Suggestions.misspelt("recompute_layer", COLUMNS));
        assertEquals(Optional.empty(), Suggestions.misspelt("batch", COLUMNS), "a known name");
        for (String other : List.of("id", "notes", "model_key", "measured_ms", "source", "system", "sequence",
                "task")) {
            assertEquals(Optional.empty(), Suggestions.misspelt(other, COLUMNS), other);
        }
    }
}
