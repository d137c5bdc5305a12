package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty: a capacity planner's walk through next year's jobs (Qwen3 on Blackwell Ultra, long-context inference,
 * calibrating to an own cluster). Each case fails on the code before.
 */
class RoundTwentyCliTest {
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("datasets/gpu/llm-public/configs/llama3-8b/config.json");

    /** Llama 3 8B's configuration copied to {@code dir/m/config.json}, where a table in {@code dir} names it. */
    private static void withConfig(Path dir) throws Exception {
        Path to = dir.resolve("m/config.json");
        Files.createDirectories(to.getParent());
        Files.copy(LLAMA_8B, to);
    }

    /**
     * A runs table whose candidate column is misspelt ({@code experts} for {@code expert}) was warned of and then
     * calibrated on, every row read as a job of expert parallelism 1 that never ran (exit 0): refused, naming the
     * column and the one meant, before any row is read. {@code predict} still only warns (its rows are questions).
     */
    @Test
    void aRunsTablesMisspeltColumnIsRefused(@TempDir Path dir) throws Exception {
        withConfig(dir);
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "transformer,seq,batch,gpus,tensr,device,precision,measured_ms\n"
                + "m/config.json,4096,1,8,2,H100,bf16,1000\nm/config.json,4096,2,8,2,H100,bf16,1900\n");
        MainTest.Run fit = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("mine.sdl").toString());
        assertEquals(Main.BAD_INPUT, fit.code(), fit.err());
        assertTrue(fit.err().contains("column 'tensr' is not one scaledl reads (did you mean 'tensor'?): a runs "
                + "table's rows are jobs that ran"), fit.err());
        assertFalse(fit.err().contains("it is carried through as it is"), fit.err());
        assertFalse(Files.exists(dir.resolve("mine.sdl")));
        MainTest.Run predict = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                dir.resolve("p.csv").toString(), "-q");
        assertEquals(0, predict.code(), predict.err());
        assertTrue(predict.err().contains("column 'tensr' is not one scaledl reads (did you mean 'tensor'?)"),
                predict.err());
    }

    /**
     * A model calibrated on H100 runs predicts a B200 job with the H100 cluster's coefficients: its JSON said so as a
     * warning ({@code calibrated_elsewhere}), its text as a note. Both say it as a warning now; a calibration's summary
     * says how many runs its 90 % interval holds before and after.
     */
    @Test
    void aPredictionMovedByAnotherClustersRunsIsAWarning(@TempDir Path dir) throws Exception {
        Path cal = RoundSeventeenCliTest.calibratedOnH100(dir);
        MainTest.Run b200 = MainTest.run("predict", "--model", cal.toString(), "--transformer", LLAMA_8B.toString(),
                "--seq", "4096", "--batch", "1", "--gpus", "8", "--device", "B200", "--precision", "bf16");
        assertEquals(0, b200.code(), b200.err());
        assertTrue(b200.err().contains("scaledl: warning: this model was calibrated on runs of NVIDIA H100 80GB HBM3 "
                + "only") && b200.err().contains("(calibrated_elsewhere)"), b200.err());
        // recalibrating the calibrated model: the model for the other GPUs is the one it came from, not itself
        Path runs = dir.resolve("runs.csv");
        MainTest.Run again = MainTest.run("fit", "--calibrate", cal.toString(), "--runs", runs.toString(), "--out",
                dir.resolve("again.sdl").toString());
        assertEquals(0, again.code(), again.err());
        assertTrue(again.err().contains("and for the others the model " + cal + " was calibrated from (gpu where "
                + "that was the bundled one; " + cal + " itself is calibrated on runs of NVIDIA H100 80GB HBM3)"),
                again.err());
        assertTrue(again.out().matches("(?s).*after \\(in sample\\); inside the 90% interval [0-3] of 3 before, [0-3] "
                + "of 3 after; wrote .*"), again.out());
    }

    /**
     * A sweep's points the recomputation chosen for them brings near the memory's limit were said of by nothing (each
     * prediction's own warning is per point and left out of what every point shares), and a point that offloads
     * activations to the host showed only its recomputation ({@code none}, where {@code layouts} writes
     * {@code none+off:11}).
     */
    @Test
    void aSweepSaysItsPointsNearTheMemorysLimitAndWhatTheyOffload(@TempDir Path dir) throws Exception {
        MainTest.Run s = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq", "8192",
                "--batch", "4", "--zero-stage", "1", "--device", "GB200", "--precision", "bf16", "--gpus", "4,8",
                "--batches", "4,8", "--out", dir.resolve("s.svg").toString(), "--json");
        assertEquals(0, s.code(), s.err());
        JsonNode j = new ObjectMapper().readTree(s.out());
        boolean offloads = false;
        for (JsonNode x : j.path("by_workers")) {
            offloads |= x.path("recompute").asText().matches("none\\+off:\\d+");
        }
        assertTrue(offloads, s.out());
        assertTrue(s.err().contains("fill the GPUs' memory to near its capacity") || s.err().contains(
                "fills the GPUs' memory to near its capacity"), s.err());
        boolean said = false;
        for (JsonNode w : j.path("warnings")) {
            said |= w.path("kind").asText().equals("near_memory_limit");
        }
        assertTrue(said, s.out());
    }

    /**
     * Long-context inference waiting on the host's dispatch (a hybrid mixture of experts on one rank of eight): in
     * training the assumption of no CUDA graphs was a warning with the time graphs would give; in inference a note
     * without it, though half the step rests on it.
     */
    @Test
    void inferenceSaysWhatCudaGraphsWouldSaveWhereTheHostSetsThePace() throws Exception {
        Path next = HostileCliTest.repo().resolve("datasets/gpu/llm-public/configs/qwen3-next-80b-a3b/config.json");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", next.toString(), "--seq", "32768",
                "--batch", "1", "--phase", "infer", "--context", "8", "--device", "B300", "--precision", "bf16",
                "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        double ms = j.path("ms").asDouble();
        JsonNode assumed = null;
        for (JsonNode w : j.path("warnings")) {
            if (w.path("kind").asText().equals("assumed") && w.path("message").asText().contains("as inference "
                    + "engines replay it")) {
                assumed = w;
            }
        }
        assertTrue(assumed != null, r.out());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("the step takes ([0-9.]+) ms").matcher(
                assumed.path("message").asText());
        assertTrue(m.find(), assumed.toString());
        MainTest.Run graphed = MainTest.run("predict", "--model", "gpu", "--transformer", next.toString(), "--seq",
                "32768", "--batch", "1", "--phase", "infer", "--context", "8", "--device", "B300", "--precision",
                "bf16", "--cuda-graphs", "iteration", "--json");
        assertEquals(0, graphed.code(), graphed.err());
        double with = new ObjectMapper().readTree(graphed.out()).path("ms").asDouble();
        assertEquals(with, Double.parseDouble(m.group(1)), 0.01);
        assertTrue(with < 0.9 * ms, with + " vs " + ms);
    }

    /**
     * Help cut short by a pipe ({@code scaledl predict --help | head}) is what was asked for: it ended with "cannot
     * write to standard output" and exit 4. Lost output of a real command still is an error.
     */
    @Test
    void helpCutShortByAPipeIsNoError() {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        OutputStream closed = new OutputStream() {
            @Override
            public void write(int b) throws java.io.IOException {
                throw new java.io.IOException("Broken pipe");
            }
        };
        try {
            System.setOut(new PrintStream(closed, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            assertEquals(0, Main.execute("predict", "--help"));
            assertEquals(Main.IO, Main.execute("devices"));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
        String said = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, said.split("cannot write to standard output", -1).length - 1, said);
    }

    /** An output file's missing folder is made, and said: a mistyped folder was made without a word. */
    @Test
    void aMissingOutputFolderIsMadeAndSaid(@TempDir Path dir) throws Exception {
        withConfig(dir);
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "transformer,seq,batch,gpus,device,precision\nm/config.json,4096,1,8,H100,bf16\n");
        Path out = dir.resolve("typo/p.csv");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(Files.exists(out));
        assertTrue(r.err().contains("created the folder " + out.getParent().toAbsolutePath()), r.err());
    }

    /**
     * An inference job's memory counts the weights and a forward pass's activations; the keys and values a serving
     * engine keeps of the prefill went unsaid (Llama 3 70B at 131,072 tokens on 8 GPUs: 80 layers x 2 x 8 heads x 128
     * x 131,072 tokens x 2 bytes / 8 ranks, 5.0 GiB a GPU). Said with their size; multi-latent attention's latent,
     * whole on every tensor-parallel rank.
     */
    @Test
    void inferenceSaysTheKeyValueCacheItsMemoryLeavesOut() throws Exception {
        Path seventy = HostileCliTest.repo().resolve("datasets/gpu/llm-public/configs/llama3-70b/config.json");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", seventy.toString(), "--seq",
                "131072", "--batch", "1", "--phase", "infer", "--gpus", "8", "--tensor", "8", "--device", "GB200",
                "--precision", "bf16");
        assertEquals(0, r.code(), r.err());
        double expected = 80.0 * 2 * 8 * 128 * 131072 * 2 / 8 / (1L << 30);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("keys and values a serving engine keeps of this "
                + "prefill for decoding add about ([0-9.]+) GiB a GPU").matcher(r.err());
        assertTrue(m.find(), r.err());
        assertEquals(expected, Double.parseDouble(m.group(1)), 0.05);
        MainTest.Run train = MainTest.run("predict", "--model", "gpu", "--transformer", seventy.toString(), "--seq",
                "4096", "--batch", "1", "--gpus", "8", "--tensor", "8", "--device", "GB200", "--precision", "bf16");
        assertFalse(train.err().contains("serving engine keeps"), train.err());
    }
}
