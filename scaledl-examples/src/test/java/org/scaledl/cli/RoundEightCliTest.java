package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.CsvTable;

/**
 * Round eight of hostile input: calibrating the GPU model to one's own cluster from planned runs, as a probe of the
 * workflow found it silently wrong, each case now refused or said.
 */
class RoundEightCliTest {
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");

    /** A job's predicted step (ms) by the bundled {@code gpu} model: {@code job} its options. */
    static double predicted(String... job) throws Exception {
        return predictedBy("gpu", job);
    }

    /** A job's predicted step (ms) by {@code model} (a bundled name or a model file): {@code job} its options. */
    static double predictedBy(String model, String... job) throws Exception {
        String[] args = new String[job.length + 5];
        args[0] = "predict";
        args[1] = "--model";
        args[2] = model;
        System.arraycopy(job, 0, args, 3, job.length);
        args[job.length + 3] = "--json";
        args[job.length + 4] = "-q";
        MainTest.Run r = MainTest.run(args);
        assertEquals(0, r.code(), r.err());
        return new ObjectMapper().readTree(r.out()).get("ms").asDouble();
    }

    /**
     * A table whose times are in seconds leaves every run out: nothing calibrated is no calibration, so nothing is
     * written and the exit status says so (a script carried on with the model unchanged), with the unit named.
     */
    @Test
    void aTableInSecondsCalibratesNothingAndSaysWhy(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        StringBuilder sb = new StringBuilder("id,transformer,seq,batch,world_size,device,precision,measured_ms\n");
        for (int b : new int[] {1, 2, 4}) {
            double ms = predicted("--transformer", LLAMA.toString(), "--seq", "2048", "--batch", Integer.toString(b),
                    "--data-parallel", "8", "--device", "H100", "--precision", "bf16");
            sb.append("b").append(b).append(",llama/config.json,2048,").append(b).append(",8,H100,bf16,")
                    .append(CsvTable.plain(ms * 1.1 / 1000)).append('\n');
        }
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, sb.toString());
        Path out = dir.resolve("mine.sdl");
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("no run left to calibrate on, nothing written")
                && r.err().contains("about 1,000 times shorter than predicted: seconds, not milliseconds?"), r.err());
        assertFalse(Files.exists(out));
    }

    /**
     * A GPU plan's JSON prices its runs in GPU-time as its text does: {@code seconds} held GPU-hours (a script reading
     * it was off 3,600 times); now GPU-seconds, with {@code gpu_hours} beside.
     */
    @Test
    void aGpuPlansJsonSaysItsUnits(@TempDir Path dir) throws Exception {
        Path jobs = RoundSevenCliTest.planCandidates(dir);
        MainTest.Run r = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3",
                "--json");
        assertEquals(0, r.code(), r.err());
        com.fasterxml.jackson.databind.JsonNode j = new ObjectMapper().readTree(r.out());
        assertTrue(j.get("gpu_hours").asDouble() > 0, j.toString());
        assertEquals(j.get("gpu_hours").asDouble() * 3600, j.get("seconds").asDouble(), 1e-6);
        assertEquals(j.get("grid_gpu_hours").asDouble() * 3600, j.get("grid_seconds").asDouble(), 1e-6);
        MainTest.Run text = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3");
        assertTrue(text.out().contains(String.format(java.util.Locale.ROOT, "about %.1f GPU-hours",
                j.get("gpu_hours").asDouble())), text.out());
    }

    /** Calibrating a calibrated model again says that runs it was calibrated on count again. */
    @Test
    void aCalibratedModelCalibratedAgainIsSaid(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        StringBuilder sb = new StringBuilder("id,transformer,seq,batch,tensor,world_size,device,precision,"
                + "measured_ms\n");
        for (int b : new int[] {1, 2, 4}) {
            double ms = predicted("--transformer", LLAMA.toString(), "--seq", "2048", "--batch", Integer.toString(b),
                    "--tensor", "8", "--data-parallel", "1", "--device", "H100", "--precision", "bf16");
            sb.append("b").append(b).append(",llama/config.json,2048,").append(b).append(",8,1,H100,bf16,")
                    .append(CsvTable.plain(ms * 1.3)).append('\n');
        }
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, sb.toString());
        Path mine = dir.resolve("mine.sdl");
        MainTest.Run first = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                mine.toString());
        assertEquals(0, first.code(), first.err());
        assertFalse(first.err().contains("is calibrated already"), first.err());
        MainTest.Run again = MainTest.run("fit", "--calibrate", mine.toString(), "--runs", runs.toString(), "--out",
                dir.resolve("again.sdl").toString());
        assertEquals(0, again.code(), again.err());
        assertTrue(again.err().contains("is calibrated already (on 3 runs): runs it was calibrated on count again"),
                again.err());
    }

    /**
     * {@code plan --fixed} knows a job measured through {@code runs} (its own copy of the configuration, a gradient
     * type stated where the candidate leaves the default) as the candidate it is, by its execution terms: it was
     * planned again.
     */
    @Test
    void aJobMeasuredFromItsLogIsNotPlannedAgain(@TempDir Path dir) throws Exception {
        Path jobs = RoundSevenCliTest.planCandidates(dir);
        Files.createDirectory(dir.resolve("runs-configs"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("runs-configs/train.json"));
        Path measured = dir.resolve("measured.csv");
        Files.writeString(measured, "id,transformer,seq,batch,world_size,tensor,device,precision,grad_dtype,"
                + "measured_ms\ntrain.log,runs-configs/train.json,2048,1,8,1,H100,bf16,fp32,1234\n");
        MainTest.Run r = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--fixed",
                measured.toString(), "--runs", "2", "--json");
        assertEquals(0, r.code(), r.err());
        assertEquals(1, new ObjectMapper().readTree(r.out()).get("already_measured").asInt(), r.out());
    }

    /**
     * {@code runs} keeps a log's name as it is in the table's id and log columns: two logs of non-ASCII names became
     * one id of question marks, which {@code fit} then refused as given twice.
     */
    @Test
    void aLogsNameIsKeptWhole(@TempDir Path dir) throws Exception {
        Path megatron = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs/megatron-llama3-8b.log");
        Path a;
        Path b;
        try {
            a = dir.resolve("日本.log");
            b = dir.resolve("中国.log");
        } catch (java.nio.file.InvalidPathException e) {
            // a JVM whose locale cannot name such files (LANG=C on Java 17) has no such logs either
            org.junit.jupiter.api.Assumptions.assumeTrue(false, "file names cannot hold non-ASCII here");
            return;
        }
        Files.copy(megatron, a);
        Files.copy(megatron, b);
        Path out = dir.resolve("runs.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", a.toString(), b.toString(), "--device", "H100", "--out",
                out.toString());
        assertEquals(0, r.code(), r.err());
        CsvTable t = CsvTable.read(out);
        assertEquals(java.util.List.of("日本.log", "中国.log"), java.util.List.of(t.get(0, "id"), t.get(1, "id")));
        assertEquals(a.toString(), t.get(0, "log"));
    }

    /** A run the model predicts does not fit in its GPUs' memory is calibrated on, but said: the row may be wrong. */
    @Test
    void aRunThatCannotFitIsSaid(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        String[] big = {"--transformer", LLAMA.toString(), "--seq", "4096", "--batch", "64", "--tensor", "8",
            "--data-parallel", "1", "--device", "H100", "--precision", "bf16"};
        String[] small = {"--transformer", LLAMA.toString(), "--seq", "4096", "--batch", "1", "--tensor", "8",
            "--data-parallel", "1", "--device", "H100", "--precision", "bf16"};
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "id,transformer,seq,batch,tensor,world_size,device,precision,measured_ms\n"
                + "big,llama/config.json,4096,64,8,1,H100,bf16," + CsvTable.plain(predicted(big) * 1.2) + "\n"
                + "small,llama/config.json,4096,1,8,1,H100,bf16," + CsvTable.plain(predicted(small) * 1.2) + "\n");
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("mine.sdl").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("calibrating on run " + runs + ":2, which the model predicts does not fit"),
                r.err());
        assertFalse(r.err().contains(runs + ":3, which"), r.err());
    }
}
