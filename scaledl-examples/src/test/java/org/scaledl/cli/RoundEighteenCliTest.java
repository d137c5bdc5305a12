package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Round eighteen at the command line: what a reviewer of the round's physics found a user could not tell. */
class RoundEighteenCliTest {
    /** The library's execution revision. */
    private static final int REVISION = org.scaledl.model.exec.MegatronModel.EXECUTION_REVISION;

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
            assertEquals(REVISION, megatron.path("execution_revision").asInt(),
                    megatron.toString());
            megatron.remove("execution_revision");
        });
        String[] job = {"predict", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--batch", "1", "--gpus",
            "8", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--model"};
        MainTest.Run r = MainTest.run(HostileCliTest.concat(job, old.toString()));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("execution revision 1, this library's are revision " + REVISION)
                && r.err().contains("since revision 2") && r.err().contains("since revision 3")
                && r.err().contains("since revision 4"), r.err());
        // a calibration keeps the revision it starts from: its coefficients are the old ones moved
        Path recalibrated = dir.resolve("recalibrated.sdl");
        MainTest.Run fit = MainTest.run("fit", "--calibrate", old.toString(), "--runs", dir.resolve("runs.csv")
                .toString(), "--out", recalibrated.toString());
        assertEquals(0, fit.code(), fit.err());
        MainTest.Run again = MainTest.run(HostileCliTest.concat(job, recalibrated.toString()));
        assertTrue(again.err().contains("execution revision 1, this library's are revision " + REVISION),
                again.err());
        MainTest.Run current = MainTest.run(HostileCliTest.concat(job, cal.toString()));
        assertFalse(current.err().contains("execution revision"), current.err());
        MainTest.Run bundled = MainTest.run(HostileCliTest.concat(job, "gpu"));
        assertFalse(bundled.err().contains("execution revision"), bundled.err());
    }

    /**
     * An assumption no option states (the interleaved schedule's overlapped sends) reaches a layout's row as the
     * options' assumptions do, {@code if the sends are exposed: +65.8%}: the row's cell was empty, though exposed
     * sends would reverse the ranking (a reviewer's case).
     */
    @Test
    void anAssumptionNoOptionStatesReachesALayoutsRow() {
        org.scaledl.model.PredictionWarning assumed = new org.scaledl.model.PredictionWarning(
                org.scaledl.model.PredictionWarning.Kind.ASSUMED, "the interleaved schedule's pipeline sends are "
                        + "assumed overlapped ...; exposed, ..., the step takes 28823.00 ms (+65.8 %: if the sends "
                        + "are exposed)", java.util.Optional.empty(), "", 1);
        org.scaledl.model.PredictionWarning option = new org.scaledl.model.PredictionWarning(
                org.scaledl.model.PredictionWarning.Kind.ASSUMED, "... the step takes 2.00 ms (+14.1 %: give "
                        + "--grad-reduce after-backward)", java.util.Optional.empty(), "", 1);
        org.scaledl.model.Prediction pr = new org.scaledl.model.Prediction(1, 1, 1, java.util.List.of())
                .withWarnings(java.util.List.of(assumed, option));
        assertEquals(java.util.List.of("if the sends are exposed: +65.8%", "if --grad-reduce after-backward: +14.1%"),
                LayoutsCommand.sensitivities(pr));
    }

    /**
     * A log whose interleaved schedule does not overlap its sends ({@code overlap_p2p_comm False}, NeMo 1's default)
     * is read, and said: no column states it, and the run is predicted with them overlapped. Without interleaving the
     * flag changes nothing and nothing is said.
     */
    @Test
    void aLogsSendsNotOverlappedAreSaid(@TempDir Path dir) throws Exception {
        Path logs = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs");
        String megatron = java.nio.file.Files.readString(logs.resolve("megatron-llama3-8b.log"));
        String virtual = "  virtual_pipeline_model_parallel_size ............ None\n";
        assertTrue(megatron.contains(virtual) && megatron.contains("pipeline_model_parallel_size .................... 2"));
        String said = "the interleaved schedule's sends are not overlapped (overlap_p2p_comm False)";
        // (a quoted word, as a configuration dump may print it, is the word: it refused the whole log)
        for (String value : new String[] {"False", "'false'"}) {
            for (String chunks : new String[] {"2", "None"}) {
                MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "v" + chunks + value.length(), megatron.replace(
                        virtual, "  virtual_pipeline_model_parallel_size ............ " + chunks
                        + "\n  overlap_p2p_comm ................................ " + value + "\n"));
                assertEquals(0, r.code(), r.err());
                assertEquals(chunks.equals("2"), r.err().contains(said), r.err());
            }
        }
    }
}
