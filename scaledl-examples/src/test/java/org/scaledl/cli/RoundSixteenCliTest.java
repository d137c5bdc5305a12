package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round sixteen of hostile input and the person at the keyboard: what the stop before left open and what this
 * stop's probes found. Each case here fails on the code before.
 */
class RoundSixteenCliTest {
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    /**
     * A list option with an empty value (a trailing, leading or doubled comma) is refused naming the option and what
     * was given; it was read as the list without it ({@code --gpus 8,16,} swept 8 and 16 without a word).
     */
    @Test
    void listsWithAnEmptyValueAreRefused() {
        MainTest.Run trailing = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(),
                "--seq", "4096", "--batch", "1", "--device", "H100", "--gpus", "8,16,");
        assertTrue(trailing.err().contains("(given '8,16,')"), trailing.err());
        for (String gpus : new String[] {"8,16,", ",8,16", "8,,16", "8, ,16"}) {
            MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                    "4096", "--batch", "1", "--device", "H100", "--gpus", gpus);
            assertEquals(Main.USAGE, r.code(), gpus + ": " + r.err());
            assertTrue(r.err().contains("'--gpus' has an empty value in its list") && !r.err().contains("<"), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
        MainTest.Run methods = MainTest.run("evaluate", "--data", "unread", "--cv", "family", "--methods",
                "scaledl,");
        assertEquals(Main.USAGE, methods.code(), methods.err());
        assertTrue(methods.err().contains("'--methods' has an empty value"), methods.err());
        MainTest.Run fine = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--device", "H100", "--gpus", "8,16");
        assertEquals(0, fine.code(), fine.err());
    }

    /**
     * {@code evaluate --folds} beyond the data's groups holds each group out alone, as "at most this many folds"
     * says, and now says so (it ran leave-one-group-out without a word).
     */
    @Test
    void foldsBeyondTheGroupsAreSaid(@TempDir Path dir) throws Exception {
        Path ds = dir.resolve("ds");
        MainTest.smallDataset(ds);
        MainTest.Run many = MainTest.run("evaluate", "--data", ds.toString(), "--cv", "model", "--folds", "5",
                "--methods", "scaledl");
        assertEquals(0, many.code(), many.err());
        assertTrue(many.err().contains("note: --folds 5, but the data has 3 models: each held out alone (leave one "
                + "model out)"), many.err());
        MainTest.Run few = MainTest.run("evaluate", "--data", ds.toString(), "--cv", "model", "--folds", "3",
                "--methods", "scaledl");
        assertEquals(0, few.code(), few.err());
        assertFalse(few.err().contains("--folds"), few.err());
    }
}
