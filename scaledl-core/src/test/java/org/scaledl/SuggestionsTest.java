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

    /** A name containing what was typed is offered for three letters or more, not for one that every name holds. */
    @Test
    void closestOffersAContainingNameOnlyForMoreThanALetterOrTwo() {
        List<String> gpus = List.of("Tesla T4", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA L4");
        assertEquals(Optional.of("NVIDIA H100 80GB HBM3"), Suggestions.closest("h100", gpus));
        assertEquals(Optional.empty(), Suggestions.closest("a", gpus));
        assertEquals(Optional.of("NVIDIA L4"), Suggestions.closest("nvidial5", gpus), "one edit away");
    }
}
