package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Round eighteen at the command line: what a reviewer of the round's physics found a user could not tell. */
class RoundEighteenCliTest {
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    /**
     * A model file fitted to the execution model's earlier formulas (before a pipeline's sends were timed hop by hop
     * and overlapped under interleaving: its `pipeline_comm` was fitted to every send exposed) loads with a warning
     * naming the revisions; it applied the old coefficients to the new formulas without a word.
     */
    @Test
    void aModelFileOfAnEarlierExecutionRevisionSaysSo(@TempDir Path dir) throws Exception {
        Path cal = RoundSeventeenCliTest.calibratedOnH100(dir);
        Path old = RoundSeventeenCliTest.editedExecution(cal, dir.resolve("old.sdl"), megatron -> {
            assertEquals(2, megatron.path("execution_revision").asInt(), megatron.toString());
            megatron.remove("execution_revision");
        });
        String[] job = {"predict", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--batch", "1", "--gpus",
            "8", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--model"};
        MainTest.Run r = MainTest.run(HostileCliTest.concat(job, old.toString()));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("execution revision 1, this library's are revision 2"), r.err());
        // a calibration keeps the revision it starts from: its coefficients are the old ones moved
        Path recalibrated = dir.resolve("recalibrated.sdl");
        MainTest.Run fit = MainTest.run("fit", "--calibrate", old.toString(), "--runs", dir.resolve("runs.csv")
                .toString(), "--out", recalibrated.toString());
        assertEquals(0, fit.code(), fit.err());
        MainTest.Run again = MainTest.run(HostileCliTest.concat(job, recalibrated.toString()));
        assertTrue(again.err().contains("execution revision 1, this library's are revision 2"), again.err());
        MainTest.Run current = MainTest.run(HostileCliTest.concat(job, cal.toString()));
        assertFalse(current.err().contains("execution revision"), current.err());
        MainTest.Run bundled = MainTest.run(HostileCliTest.concat(job, "gpu"));
        assertFalse(bundled.err().contains("execution revision"), bundled.err());
    }
}
