package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.CsvTable;
import org.scaledl.model.CalibrationScreen;

/**
 * Round twenty-four at the keyboard: a calibration keeps a job's run near its prediction beside a copy of it written
 * in seconds, and says which unit; a runs table's row repeated cell for cell without an id is refused, not counted
 * twice; {@code runs --from-log} counts a log's lines as lines where each is the mean of {@code log_interval}
 * iterations.
 */
class RoundTwentyFourCliTest {
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");

    @Test
    void aRunNearItsPredictionStaysBesideACopyInSeconds() {
        // one job measured twice, once in seconds: the median of the two was 31 times off and took both out
        assertArrayEquals(new boolean[] {false, true}, CalibrationScreen.mismatched(new double[] {0.97, 967},
                List.of("a", "a")));
        // a run beyond the limit on its own goes with its far job, even nearer its prediction than the job's median
        assertArrayEquals(new boolean[] {true, true, true}, CalibrationScreen.mismatched(new double[] {40, 40, 6},
                List.of("a", "a", "a")));
        assertArrayEquals(new boolean[] {false, true}, CalibrationScreen.mismatched(new double[] {1.02, 30},
                List.of("a", "a")));
        // three runs of a job alike beyond the limit still go together
        assertArrayEquals(new boolean[] {true, true, true}, CalibrationScreen.mismatched(new double[] {5.2, 4.9, 5.4},
                List.of("a", "a", "a")));
    }

    private static double predicted() throws Exception {
        return RoundEightCliTest.predicted("--transformer", LLAMA.toString(), "--seq", "2048", "--batch", "1",
                "--data-parallel", "8", "--device", "H100", "--precision", "bf16");
    }

    @Test
    void aCalibrationSaysTheRunInSecondsAndKeepsTheOther(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        double ms = predicted();
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "id,transformer,seq,batch,world_size,device,precision,measured_ms\n"
                + "a,llama/config.json,2048,1,8,H100,bf16," + CsvTable.plain(ms * 1.03) + "\n"
                + "b,llama/config.json,2048,1,8,H100,bf16," + CsvTable.plain(ms * 1.03 / 1000) + "\n");
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("c.sdl").toString());
        assertEquals(0, cal.code(), cal.err());
        assertTrue(cal.out().contains("on 1 run"), cal.out() + cal.err());
        assertTrue(cal.err().contains("runs.csv:3") && cal.err().contains("seconds, not milliseconds?")
                && !cal.err().contains("runs.csv:2 "), cal.err());
    }

    @Test
    void aRowRepeatedCellForCellWithoutAnIdIsRefused(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        double ms = predicted();
        String row = "llama/config.json,2048,1,8,H100,bf16," + CsvTable.plain(ms) + "\n";
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "transformer,seq,batch,world_size,device,precision,measured_ms\n" + row
                + "llama/config.json,2048,1,8,H100,bf16," + CsvTable.plain(ms * 1.01) + "\n" + row);
        Path out = dir.resolve("c.sdl");
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(Main.BAD_INPUT, cal.code(), cal.err());
        assertTrue(cal.err().contains("runs.csv:4") && cal.err().contains("repeats line 2 cell for cell"), cal.err());
        assertFalse(Files.exists(out));
        // the same job measured again (another time) is two runs
        Files.writeString(runs, "transformer,seq,batch,world_size,device,precision,measured_ms\n" + row
                + "llama/config.json,2048,1,8,H100,bf16," + CsvTable.plain(ms * 1.01) + "\n");
        MainTest.Run two = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(0, two.code(), two.err());
        assertTrue(two.out().contains("on 2 runs"), two.out());
    }

    @Test
    void aLogOfIntervalsCountsItsLines(@TempDir Path dir) throws Exception {
        Path logs = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs/megatron-llama3-8b.log");
        List<String> lines = Files.readAllLines(logs);
        lines.replaceAll(l -> l.startsWith("  log_interval ...") ? "  log_interval ............ 10" : l);
        // the lines of an interval of 10 are numbered 10, 20, ... (and consume ten batches a line)
        java.util.regex.Pattern it = java.util.regex.Pattern.compile("iteration\\s+(\\d+)/\\s*(\\d+) \\| consumed "
                + "samples:\\s+(\\d+)");
        lines.replaceAll(l -> {
            java.util.regex.Matcher m = it.matcher(l);
            return m.find() ? m.replaceFirst("iteration " + 10 * Long.parseLong(m.group(1)) + "/ "
                    + 10 * Long.parseLong(m.group(2)) + " | consumed samples: " + 10 * Long.parseLong(m.group(3)))
                    : l;
        });
        Path log = dir.resolve("ten.log");
        Files.write(log, lines);
        MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve("r.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("median of 30 logged lines, each the mean of 10 iterations (log_interval)"),
                r.err());
        assertFalse(r.err().contains("in the arguments, but"), r.err());
    }

    /** With no layout that fits, the table ranks the nearest to fitting first, and says so. */
    @Test
    void layoutsOfWhichNoneFitsRankTheLeastMemoryFirst(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("l.csv");
        MainTest.Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", HostileCliTest.repo()
                .resolve("scaledl-core/src/test/resources/transformers/llama-3.1-405b/config.json").toString(),
                "--seq", "8192", "--gpus", "16", "--global-batch", "16", "--device", "H100", "--out",
                out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("ranked by memory, the least first"), r.err());
        CsvTable t = CsvTable.read(out);
        double first = Double.parseDouble(t.get(0, "layout_memory_gb"));
        for (int i = 1; i < t.size(); i++) {
            assertTrue(first <= Double.parseDouble(t.get(i, "layout_memory_gb")), "row " + i);
        }
    }

    /** DeepSeek-V3 on 16 stages is split as its recipes lay it out, and the note says how the units were counted. */
    @Test
    void deepSeekV3sSplitIsSaidAsItsRecipesLayItOut() {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", HostileCliTest.repo()
                .resolve("scaledl-core/src/test/resources/transformers/deepseek-v3/config.json").toString(), "--seq",
                "4096", "--batch", "1", "--micro-batches", "64", "--gpus", "256", "--pipeline", "16", "--expert", "8",
                "--device", "B200", "--precision", "mxfp8");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("61 layers split into 16 pipeline stages with the embedding not counted, the loss "
                + "counted as a layer and the multi-token prediction as 2") && r.err().contains("the first 4, the "
                + "last 1"), r.err());
    }

    /**
     * {@code --moe-a2a-overlap} with {@code --moe-dispatcher allgather} as a table's defaults is refused, as one job
     * given both is (the overlap was dropped from every row without a word).
     */
    @Test
    void anOverlapDefaultWithTheAllgatherDispatcherIsRefused(@TempDir Path dir) throws Exception {
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "transformer,seq,batch,micro_batches,world_size,expert,device,precision\n"
                + HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers/mixtral-8x7b/config.json")
                + ",4096,1,8,8,8,H100,bf16\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(),
                "--moe-a2a-overlap", "--moe-dispatcher", "allgather");
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("--moe-a2a-overlap with --moe-dispatcher allgather"), r.err());
    }
}
