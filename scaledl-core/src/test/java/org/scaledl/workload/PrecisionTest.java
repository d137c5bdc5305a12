package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;

/** {@link Precision#parse}: the frameworks' spellings of one precision read as it, and nothing else does. */
class PrecisionTest {
    @Test
    void theFrameworksSpellingsReadAsTheirPrecision() {
        Map<String, Precision> spellings = Map.ofEntries(Map.entry("bf16-mixed", Precision.BF16),
                Map.entry("BF16-Mixed", Precision.BF16), Map.entry("16-mixed", Precision.FP16),
                Map.entry("16", Precision.FP16), Map.entry("32-true", Precision.FP32), Map.entry("32", Precision.FP32),
                Map.entry("fp8_delayed", Precision.FP8), Map.entry(" MXFP8 ", Precision.MXFP8));
        spellings.forEach((text, p) -> assertEquals(p, Precision.parse(text), text));
        for (Precision p : Precision.values()) {
            assertEquals(p, Precision.parse(p.label()), "a label reads as its precision");
        }
    }

    /** Lightning's pure 16-bit flags are refused, naming the mixed precision to give instead. */
    @Test
    void pureSixteenBitTrainingIsRefusedNamingTheMixedPrecision() {
        for (String[] flag : new String[][] {{"bf16-true", "bf16 predicts"}, {"16-true", "fp16 predicts"}}) {
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> Precision.parse(flag[0]));
            assertTrue(e.getMessage().contains("no FP32 master copy") && e.getMessage().contains(flag[1]),
                    e.getMessage());
        }
    }

    @Test
    void anUnknownPrecisionIsRefusedNamingTheAcceptedOnes() {
        for (String text : new String[] {"8", "64", "bf16-mixed-x", "transformer_engine"}) {
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> Precision.parse(text));
            assertTrue(e.getMessage().contains("unknown precision") && e.getMessage().contains("bf16"),
                    e.getMessage());
        }
    }
}
