package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-two: a hostile walk's findings at the keyboard (inputs taken silently, or refused unhelpfully). Each
 * case fails on the code before.
 */
class RoundTwentyTwoCliTest {
    private static final Path TRANSFORMERS = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers");
    private static final String LLAMA = TRANSFORMERS.resolve("llama-3-8b/config.json").toString();

    @TempDir
    Path dir;

    /** A candidate table written as {@code name} in the test's folder, scored with the bundled GPU model. */
    private MainTest.Run scored(String name, String table) throws Exception {
        Path t = dir.resolve(name);
        Files.writeString(t, table);
        return MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve(name + ".out.csv").toString(), "-q");
    }

    /** Llama 3 8B's configuration copied beside a table, named relative to it as tables name their files. */
    private String beside() throws Exception {
        Files.createDirectories(dir.resolve("llama"));
        Files.copy(Path.of(LLAMA), dir.resolve("llama/config.json"));
        return "llama/config.json";
    }

    private static String[] job(String... more) {
        return HostileCliTest.concat(new String[] {"predict", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096",
            "--batch", "1", "--device", "H100", "--precision", "bf16", "-q"}, more);
    }

    /**
     * {@code scaling --measured} points are the sweep's own job: a column that describes another (tensor 8 under a
     * tensor-2 sweep) is refused, naming it; it was read as the sweep's job and calibrated its curve.
     */
    @Test
    void measuredPointsOfAnotherJobAreRefused() throws Exception {
        Path m = dir.resolve("m.csv");
        java.util.function.Function<String, MainTest.Run> sweep = table -> {
            try {
                Files.writeString(m, table);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--batch", "1",
                    "--device", "H100", "--precision", "bf16", "--tensor", "2", "--gpus", "8,16", "--measured",
                    m.toString(), "--out", dir.resolve("s.svg").toString(), "-q");
        };
        MainTest.Run r = sweep.apply("gpus,batch,measured_ms,tensor\n8,1,260,2\n16,1,255,8\n");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("m.csv:3: tensor 8 is not the sweep's job's (tensor 2)"), r.err());
        // Megatron's name for it, any case
        MainTest.Run alias = sweep.apply("gpus,batch,measured_ms,TP\n8,1,260,8\n");
        assertTrue(alias.code() == 1 && alias.err().contains("TP 8 is not the sweep's job's (tensor 2)"), alias.err());
        // the sweep's own values, written as a runs table writes them, and labels are taken
        MainTest.Run same = sweep.apply("gpus,batch,measured_ms,tensor,seq,precision,device,id\n"
                + "8,1,260,2,4096,bfloat16,NVIDIA H100 80GB HBM3,a\n16,1,255,02,4096,bf16,H100,b\n");
        assertEquals(0, same.code(), same.err());
    }

    /** {@code --threads} is a CPU worker's: with a GPU model it is refused (it only widened the interval). */
    @Test
    void threadsWithAGpuModelAreRefused() throws Exception {
        MainTest.Run r = MainTest.run(job("--threads", "1000"));
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--threads 1000: threads per worker are a CPU host model's"), r.err());
        assertEquals(0, MainTest.run(job("--threads", "1")).code());
        MainTest.Run table = scored("t.csv", "transformer,seq,batch,gpus,device,precision,threads\n" + beside()
                + ",4096,1,8,H100,bf16,1000\n");
        assertEquals(1, table.code(), table.err());
        assertTrue(table.err().contains("t.csv:2: threads 1000: threads per worker are a CPU host model's"),
                table.err());
    }

    /** A column of another framework's name beside the column it names must say the same (tp 8 beside tensor 1). */
    @Test
    void anAliasColumnThatContradictsItsColumnIsRefusedAtItsLine() throws Exception {
        String cfg = beside();
        MainTest.Run r = scored("c.csv", "transformer,seq,batch,gpus,device,precision,tensor,tp\n" + cfg
                + ",4096,1,8,H100,bf16,2,2\n" + cfg + ",4096,1,8,H100,bf16,1,8\n");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("c.csv:3: column 'tp' (another name for tensor) says '8' where tensor says '1'"),
                r.err());
        // the same value written another way, a degree's default beside a blank, another tool's None, and a GPU's
        // index or a dtype beside the recipe (not the job's value) are no contradiction (the reviewers' cases)
        MainTest.Run ok = scored("same.csv", "transformer,seq,batch,gpus,device,gpu,precision,dtype,tensor,tp,"
                + "context,cp,virtual_stages,vpp\n" + cfg + ",4096,1,8,H100,0,bf16,bfloat16,02,2,,1,,None\n");
        assertEquals(0, ok.code(), ok.err());
    }

    /**
     * Numbers are ASCII digits, on the command line and in tables: a fullwidth {@code ８} (Java's parsers take it, and
     * the output tables echoed it) is refused, naming the value.
     */
    @Test
    void numbersInOtherScriptsDigitsAreRefused() throws Exception {
        MainTest.Run r = MainTest.run(job("--gpus", "\uFF18"));
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("is not a whole number in ASCII digits"), r.err());
        MainTest.Run table = scored("c.csv", "transformer,seq,batch,gpus,device,precision\n" + beside()
                + ",\uFF14\uFF10\uFF19\uFF16,1,8,H100,bf16\n");
        assertEquals(1, table.code(), table.err());
        assertTrue(table.err().contains("c.csv:2: seq must be a positive integer"), table.err());
        assertEquals(0, MainTest.run(job("--gpus", "8")).code());
    }

    /** {@code layouts --pipeline 0} is refused as no degree (it said no layout had that depth). */
    @Test
    void aLayoutsDegreeBelowOneIsRefused() {
        MainTest.Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--gpus",
                "8", "--global-batch", "64", "--device", "H100", "--precision", "bf16", "--pipeline", "0", "-q");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--pipeline 0: a degree is a positive whole number"), r.err());
    }

    /** The published runs table's row of {@code id}, its header, and its config copied beside a table in the folder. */
    private String[] publishedRow(String id) throws Exception {
        Path published = MainTest.graph("x").getParent().getParent().getParent().resolve("gpu/llm-public");
        List<String> lines = Files.readAllLines(published.resolve("runs.csv"));
        String row = lines.stream().filter(l -> l.startsWith(id + ",")).findFirst().orElseThrow();
        Path cfg = dir.resolve("configs/llama2-7b");
        if (!Files.exists(cfg)) {
            Files.createDirectories(cfg);
            Files.copy(published.resolve("configs/llama2-7b/config.json"), cfg.resolve("config.json"));
        }
        return new String[] {lines.get(0), row};
    }

    /** The calibrated model's 90 % interval as {@code inspect} prints it. */
    private static String interval(Path model) {
        MainTest.Run r = MainTest.run("inspect", "--model", model.toString());
        assertEquals(0, r.code(), r.err());
        return r.out().lines().filter(l -> l.trim().startsWith("90% interval")).findFirst().orElse("");
    }

    /**
     * One job measured 8 times under 8 ids is one job: the calibration keeps the model's interval (it refitted the
     * terms on the copies and shrank the interval to x1.00..x1.00 for every job on every GPU).
     */
    @Test
    void repeatsOfOneJobMoveTheLevelOnly() throws Exception {
        String[] p = publishedRow("nemo-24.07-h100-8-llama2-7b-fp8-1");
        StringBuilder t = new StringBuilder(p[0]).append('\n');
        for (int i = 1; i <= 8; i++) {
            t.append(p[1].replaceFirst("^nemo-24.07-h100-8-llama2-7b-fp8-1,", "copy-" + i + ",")).append('\n');
        }
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, t.toString());
        Path out = dir.resolve("same.sdl");
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals(interval(Path.of("gpu")).trim().replaceAll("\\(.*", ""), interval(out).trim()
                .replaceAll("\\(.*", ""), "the interval is the bundled model's");
    }

    /**
     * Two runs' level is their weighted mean (a median of two is their midpoint whatever the weights: a million times
     * the weight on the run the model predicts moved the level toward the other); and runs that agree on a level far
     * beyond what the calibration moved are said.
     */
    @Test
    void twoRunsWeighAndAHeldBackLevelIsSaid() throws Exception {
        String[] p = publishedRow("nemo-24.07-h100-8-llama2-7b-fp8-1");
        String measured = ",3870.1,16934,780,1,";
        assertTrue(p[1].contains(measured), p[1]);
        java.util.function.BiFunction<String, String, String> row = (id, cells) -> p[1].replaceFirst(
                "^nemo-24.07-h100-8-llama2-7b-fp8-1,", id + ",").replace(measured, cells);
        Path runs = dir.resolve("two.csv");
        // (the rates dropped: the step time alone is measured)
        Files.writeString(runs, p[0] + "\n" + row.apply("a", ",3870.1,,,1000000,") + "\n"
                + row.apply("b", ",15480.4,,,1,") + "\n");
        Path out = dir.resolve("two.sdl");
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("level \\(x([0-9.]+)").matcher(r.err());
        assertTrue(m.find(), r.err());
        double level = Double.parseDouble(m.group(1));
        MainTest.Run plain = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                dir.resolve("plain.csv").toString(), "-q");
        assertEquals(0, plain.code(), plain.err());
        List<String> scored = Files.readAllLines(dir.resolve("plain.csv"));
        int col = java.util.Arrays.asList(scored.get(0).split(",")).indexOf("predicted_ms");
        double first = 3870.1 / Double.parseDouble(scored.get(1).split(",")[col]);
        assertEquals(first, level, 0.02, "the heavy run's ratio sets the level: " + r.err());
        // four runs four times slower than the model: the level moves about twice, and that is said
        StringBuilder slow = new StringBuilder(p[0]).append('\n');
        for (int i = 1; i <= 4; i++) {
            slow.append(row.apply("slow-" + i, "," + (15480.4 + i) + ",,,1,")).append('\n');
        }
        Files.writeString(runs, slow.toString());
        MainTest.Run held = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("slow.sdl").toString());
        assertEquals(0, held.code(), held.err());
        assertTrue(held.err().contains("none of the 4 runs falls inside its 90% interval after the calibration"),
                held.err());
    }

    /** A catalog row's memory in MiB written as GB (81,920) is refused: every layout fitted. */
    @Test
    void aCatalogsMemoryInMibIsRefused() throws Exception {
        Path bundled = HostileCliTest.repo().resolve("scaledl-core/src/main/resources/org/scaledl/io/gpu_catalog.csv");
        List<String> lines = Files.readAllLines(bundled);
        String h100 = lines.stream().filter(l -> l.startsWith("NVIDIA H100 80GB HBM3,")).findFirst().orElseThrow();
        String[] cells = h100.split(",", -1);
        cells[0] = "My H100";
        cells[1] = "";
        cells[5] = "81920";
        Path catalog = dir.resolve("mine.csv");
        Files.writeString(catalog, lines.get(0) + "\n" + String.join(",", cells) + "\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--devices", catalog.toString(), "--transformer",
                LLAMA, "--seq", "4096", "--batch", "1", "--device", "My H100", "--precision", "bf16", "-q");
        assertTrue(r.code() != 0 && r.err().contains("memory_GB"), r.err());
    }
}
