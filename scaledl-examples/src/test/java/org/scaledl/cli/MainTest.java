package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.OpFamily;

class MainTest {

    record Run(int code, String out, String err) {
    }

    static Path graph(String name) {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(dir.resolve("datasets/cpu-ddp"))) {
            dir = dir.getParent();
        }
        return dir.resolve("datasets/cpu-ddp/graphs/" + name + ".onnx");
    }

    static Run run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    /**
     * A {@code --dim} that binds the graph's batch dimension is a usage error naming the option to use (it was the
     * import's bad-input error, exit 1).
     */
    @Test
    void aDimBindingTheBatchPointsAtTheBatchOption() {
        for (String command : List.of("inspect", "predict")) {
            List<String> args = new ArrayList<>(List.of(command));
            if (command.equals("predict")) {
                args.addAll(List.of("--model", "cpu-ddp", "--batch", "4", "--graph"));
            }
            args.addAll(List.of(graph("resnet18_r64").toString(), "--dim", "batch=4"));
            Run r = run(args.toArray(new String[0]));
            assertEquals(2, r.code(), command + ": " + r.err());
            assertTrue(r.err().contains("--dim batch=4: 'batch' is ") && r.err().contains("give --batch 4"), r.err());
        }
    }

    @Test
    void inspectJsonHasLayersAndTotals() throws Exception {
        Run r = run("inspect", graph("resnet18_r64").toString(), "--batch", "8", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertEquals(11689512, root.get("totals").get("params").asLong());
        assertEquals(69, root.get("layers").size());
        JsonNode conv1 = root.get("layers").get(0);
        assertEquals("Conv", conv1.get("op").asText());
        assertEquals("[8,64,32,32]", conv1.get("output_shape").toString());
        // 2 * 8 * 64 * 32 * 32 * 3 * 7 * 7 multiply-accumulates, no bias
        assertEquals(2.0 * 8 * 64 * 32 * 32 * 3 * 49, conv1.get("flops_fwd").asDouble());
        double sum = 0;
        for (JsonNode l : root.get("layers")) {
            sum += l.get("flops_fwd").asDouble();
        }
        assertEquals(sum, root.get("totals").get("flops_fwd").asDouble(), 1e-6 * sum);
    }

    /**
     * {@code devices --json} gives each GPU's exponential rate (Blackwell Ultra's twice Blackwell's), its board power
     * and the share of its peaks that power sustains (a GB200's 1,200 W: 1.45·10¹⁵ FLOP/s times the cube root of
     * 1.2 of its 2.5 PFLOP/s at 16 bits; an H100 SXM's 700 W all of its peak).
     */
    /** A user catalog's misspelt peak column is said (did you mean), not left to look like a GPU without that unit. */
    @Test
    void aMisspeltCatalogColumnIsSaid(@TempDir Path dir) throws Exception {
        List<String> bundled = new java.util.ArrayList<>(List.of(new String(MainTest.class.getResourceAsStream(
                "/org/scaledl/io/gpu_catalog.csv").readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                .split("\n")));
        String h100 = bundled.stream().filter(l -> l.startsWith("NVIDIA H100 80GB HBM3,")).findFirst().orElseThrow();
        // a GPU of its own name (no alias of a bundled one) and bf16_TFLOPS misspelt
        String row = "My GPU,,NVIDIA" + h100.substring(h100.indexOf(",NVIDIA,") + ",NVIDIA".length());
        Path catalog = dir.resolve("mine.csv");
        Files.write(catalog, List.of(bundled.get(0).replace("bf16_TFLOPS", "bf16_TFLOP"), row));
        Run r = run("devices", "--devices", catalog.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("mine.csv:1: column 'bf16_TFLOP' is not one the catalog reads (did you mean "
                + "'bf16_TFLOPS'?)"), r.err());
        Files.write(catalog, List.of(bundled.get(0), row));
        assertTrue(!run("devices", "--devices", catalog.toString()).err().contains("did you mean"));
    }

    @Test
    void devicesJsonGivesTheExponentialRate() throws Exception {
        Run r = run("devices", "--json");
        assertEquals(0, r.code(), r.err());
        java.util.Map<String, Double> rate = new java.util.HashMap<>();
        for (JsonNode d : new ObjectMapper().readTree(r.out())) {
            rate.put(d.get("name").asText(), d.get("exponentials_per_second").asDouble());
        }
        assertEquals(2 * rate.get("NVIDIA GB200"), rate.get("NVIDIA GB300"), 1);
        assertTrue(rate.get("NVIDIA H100 80GB HBM3") > 1e12, rate.toString());
        for (JsonNode d : new ObjectMapper().readTree(r.out())) {
            if (d.get("name").asText().equals("NVIDIA GB200")) {
                assertEquals(1200, d.get("board_power_w").asDouble(), 1e-9);
                assertEquals(Math.cbrt(1.2) * 1.45e15 / 2.5e15, d.get("power_sustained_share").asDouble(), 1e-9);
                assertTrue(d.get("superchip").asBoolean(), "a Grace Blackwell superchip");
                assertTrue(d.get("fp8_either_layout").asBoolean(), "Blackwell takes FP8 operands in either layout");
            }
            if (d.get("name").asText().equals("NVIDIA Rubin")) {
                // beyond Blackwell's work per watt: the B200's share, as the predictions take it (not the law's 0.20)
                assertEquals(1.45 / 2.25, d.get("power_sustained_share").asDouble(), 1e-9);
            }
            if (d.get("name").asText().equals("NVIDIA H100 80GB HBM3")) {
                // 700 W sustains more than its peak (the share is at most 1): no cap binds
                assertEquals(1, d.get("power_sustained_share").asDouble(), 1e-9);
                assertEquals("Hopper", d.get("architecture").asText());
                assertTrue(d.get("tensor_memory_accelerator").asBoolean());
                assertTrue(!d.get("superchip").asBoolean());
                assertTrue(!d.get("fp8_either_layout").asBoolean(), "Hopper's FP8 products are TN only");
            }
            if (d.get("name").asText().equals("NVIDIA A100-SXM4-80GB")) {
                assertEquals("Ampere", d.get("architecture").asText());
                assertTrue(!d.get("tensor_memory_accelerator").asBoolean());
            }
        }
    }

    /**
     * A file or folder typed without its option (a positional argument the command does not take) is named with the
     * option its kind belongs to, in the one-line error; a word that is no file's kind gets no guess.
     */
    @Test
    void aFileTypedWithoutItsOptionIsNamedWithIt(@TempDir Path dir) {
        String out = dir.resolve("m.sdl").toString();
        String[][] cases = {
            {"--transformer config.json", "predict", "--model", "gpu", "config.json"},
            {"--graph net.onnx", "predict", "--model", "gpu", "net.onnx"},
            {"--candidates jobs.csv", "predict", "--model", "gpu", "jobs.csv"},
            {"--runs runs.csv", "fit", "--calibrate", "gpu", "runs.csv", "--out", out},
            // plan's --runs counts runs: a table is its candidates
            {"--candidates jobs.csv", "plan", "--model", "gpu", "jobs.csv", "--runs", "3"},
            // a required option missing besides: the same guess
            {"--from-log train.log", "runs", "train.log", "--out", dir.resolve("r.csv").toString()},
            {"--model mine.sdl", "predict", "mine.sdl", "--transformer", "config.json"},
            {"--data " + dir, "fit", dir.toString(), "--out", out},
        };
        for (String[] c : cases) {
            Run r = run(java.util.Arrays.copyOfRange(c, 1, c.length));
            assertEquals(Main.USAGE, r.code(), r.err());
            assertTrue(r.err().contains("did you mean " + c[0] + "?") && r.err().strip().lines().count() == 1,
                    String.join(" ", c) + ": " + r.err());
        }
        Run word = run("predict", "--model", "gpu", "llama");
        assertEquals(Main.USAGE, word.code());
        assertFalse(word.err().contains("did you mean"), word.err());
        // a terminal escape in what was typed reaches the screen escaped, in picocli's words and in the guess
        Run escaped = run("predict", "--model", "gpu", "x\u001b[31m.csv");
        assertFalse(escaped.err().chars().anyMatch(ch -> Character.isISOControl(ch) && ch != '\n'), escaped.err());
        assertTrue(escaped.err().contains("'x\\u001b[31m.csv' (did you mean --candidates x\\u001b[31m.csv?"),
                escaped.err());
        // an option already given is not guessed again, a missing required one is, and a blank argument gets none
        assertTrue(run("predict", "--model", "gpu", "--candidates", "jobs.csv", "preds.csv").err()
                .contains("did you mean --out preds.csv?"));
        assertTrue(run("fit", "--data", dir.toString(), "model.sdl").err().contains("did you mean --out model.sdl?"));
        assertFalse(run("predict", "--model", "gpu", " ").err().contains("did you mean"));
    }

    @Test
    void noCommandPrintsUsageOnStderrAndExitsTwoAndInspectNeedsNoBatch() {
        Run none = run();
        assertEquals(Main.USAGE, none.code());
        assertTrue(none.err().contains("Usage: scaledl"), none.err());
        assertTrue(none.err().contains("Commands:") && none.err().contains("layouts"), "the commands listed: "
                + none.err());
        assertEquals("", none.out());
        // a misspelt command or option: one line, exit 2, naming what was meant
        Run command = run("predikt", "--model", "gpu");
        assertEquals(Main.USAGE, command.code());
        assertTrue(command.err().contains("did you mean predict?") && command.err().strip().lines().count() == 1,
                command.err());
        Run option = run("predict", "--model", "gpu", "--tensr", "2");
        assertEquals(Main.USAGE, option.code());
        assertTrue(option.err().contains("did you mean --tensor?") && option.err().contains("scaledl predict --help"),
                option.err());
        // the unknown options alone, not their values as if they were options too
        assertTrue(option.err().startsWith("scaledl: error: unknown option '--tensr' ("), option.err());
        Run two = run("predict", "--model", "gpu", "--tensr", "2", "--pipe=3", "--seq", "-1");
        assertEquals(Main.USAGE, two.code());
        assertTrue(two.err().startsWith("scaledl: error: unknown options '--tensr', '--pipe=3' ("), two.err());
        Run nothingLike = run("predict", "--model", "gpu", "--zzzzqq");
        assertEquals(Main.USAGE, nothingLike.code());
        assertFalse(nothingLike.err().contains("did you mean"), nothingLike.err());
        Run inspect = run("inspect", graph("resnet18_r64").toString());
        assertEquals(0, inspect.code(), inspect.err());
        assertTrue(inspect.out().contains("batch 1"), inspect.out());
        Run bundled = run("inspect", "--model", "cpu-zoo");
        assertEquals(0, bundled.code(), bundled.err());
        assertTrue(bundled.out().contains("Intel(R) Xeon(R) Processor"), bundled.out());
    }

    @Test
    void everyCommandsHelpRendersWithoutAFormatWarning() {
        // picocli formats option descriptions: a bare percent sign ("90% interval") is a format error it warns about
        for (Class<?> c : Main.commands()) {
            String name = c.getAnnotation(picocli.CommandLine.Command.class).name();
            if (name.equals("help")) {
                continue;
            }
            Run help = run(name, "--help");
            assertEquals(0, help.code(), name + ": " + help.err());
            assertTrue(help.out().contains("Usage: scaledl " + name), name + ": " + help.out());
            assertFalse(help.err().contains("WARN") || help.out().contains("WARN"), name + ": " + help.err());
        }
    }

    @Test
    void errorsAreOneLineOnStderrWithNonZeroExit(@TempDir Path dir) throws Exception {
        Path junk = dir.resolve("junk.onnx");
        Files.write(junk, new byte[] {0x0a, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f, 1, 2});
        Run r = run("inspect", junk.toString(), "--batch", "2");
        assertNotEquals(0, r.code());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("junk.onnx"), r.err());

        Run missing = run("inspect", dir.resolve("nope.onnx").toString(), "--batch", "2");
        assertNotEquals(0, missing.code());
        assertEquals(1, missing.err().strip().lines().count(), missing.err());

        Run badBatch = run("inspect", graph("resnet18_r64").toString(), "--batch", "0");
        assertNotEquals(0, badBatch.code());
        assertTrue(badBatch.err().contains("batch"), badBatch.err());

        Run verbose = run("inspect", junk.toString(), "--batch", "2", "--verbose");
        assertTrue(verbose.err().lines().count() > 1, "--verbose adds the stack trace");
    }

    @Test
    void evaluateCommPredictsTheLargerRunsOfTheBundledDeepBenchData() throws Exception {
        Path csv = graph("resnet18_r64").getParent().getParent().getParent().resolve("deepbench/allreduce.csv");
        Run r = run("evaluate-comm", "--data", csv.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertEquals(126, root.get("train_rows").asInt());
        assertEquals(77, root.get("test_rows").asInt());
        double mre = root.get("mre").asDouble();
        assertTrue(mre > 0 && mre < 1, "MRE " + mre);
        assertEquals(6, root.get("per_device").size());
        JsonNode impl = root.get("per_implementation");
        assertTrue(impl.get("NCCL 2.0 MPI").get("in_training").asBoolean());
        assertFalse(impl.get("Baidu RingAllReduce").get("in_training").asBoolean());
        int n = 0;
        for (JsonNode x : impl) {
            n += x.get("n").asInt();
        }
        assertEquals(77, n);
    }

    @Test
    void evaluateGpuOnTheTestExcerptsPrintsTheDocumentedJson() throws Exception {
        Path gpu = graph("resnet18_r64").getParent().getParent().getParent().getParent()
                .resolve("scaledl-core/src/test/resources/gpu");
        Run r = run("evaluate-gpu", "--data", gpu.toString(), "--holdout-gpu", "NVIDIA H100 80GB HBM3", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        JsonNode models = root.get("models");
        double mre = models.get("leave_one_gpu_out_mre").asDouble();
        assertTrue(mre > 0 && mre < 1, "model MRE " + mre);
        for (String kind : new String[] {"dp4", "tp4", "pp4_1"}) {
            double e = models.get("parallel").get(kind).asDouble();
            assertTrue(e >= 0 && e < 1, kind + " " + e);
        }
        assertEquals(4 + 6, models.get("runs").size(), "H100: 4 single-GPU runs and 6 parallel ones");
        assertTrue(root.get("kernels").has("per_op"));
        assertTrue(root.get("adapted") == null, "no adapted figures unless asked");
        Run a = run("evaluate-gpu", "--data", gpu.toString(), "--holdout-gpu", "NVIDIA L4", "--json", "--adapt", "4");
        assertEquals(0, a.code(), a.err());
        JsonNode adapted = new ObjectMapper().readTree(a.out()).get("adapted");
        assertEquals(4, adapted.get("kernels_profiled_per_op").asInt());
        assertTrue(adapted.get("kernels_profiled").asInt() > 0, adapted.toString());
        // asked for far more runs than the GPU has: what was measured is said (at most half of its runs)
        Run many = run("evaluate-gpu", "--data", gpu.toString(), "--holdout-gpu", "NVIDIA H100 80GB HBM3", "--json",
                "--adapt-runs", "10000");
        assertEquals(0, many.code(), many.err());
        JsonNode m2 = new ObjectMapper().readTree(many.out()).get("adapted");
        assertEquals(10000, m2.get("runs_per_gpu").asInt());
        assertEquals(2, m2.get("runs_measured").asInt(), m2.toString());
        assertTrue(adapted.get("models_mre").asDouble() > 0 && adapted.get("kernels_mre").asDouble() > 0);
        assertTrue(adapted.get("per_op").get("bmm").has("mre_before_adapting"), adapted.toString());
        // the table prints no NaN: a figure with nothing to score (a held-out GPU's seen-GPU MRE) reads n/a
        Run table = run("evaluate-gpu", "--data", gpu.toString(), "--holdout-gpu", "NVIDIA H100 80GB HBM3");
        assertEquals(0, table.code(), table.err());
        assertFalse(table.out().contains("NaN"), table.out());
        Run bad = run("evaluate-gpu", "--data", gpu.toString(), "--holdout-gpu", "Voodoo2");
        assertNotEquals(0, bad.code());
        assertTrue(bad.err().contains("Voodoo2"), bad.err());
    }

    /** log det(XᵀX) by Gaussian elimination, independent of the library's EJML path. */
    static double logDet(double[][] rows, int p) {
        double[][] m = new double[p][p];
        for (double[] r : rows) {
            for (int a = 0; a < p; a++) {
                for (int b = 0; b < p; b++) {
                    m[a][b] += r[a] * r[b];
                }
            }
        }
        double s = 0;
        for (int c = 0; c < p; c++) {
            int piv = c;
            for (int r = c + 1; r < p; r++) {
                if (Math.abs(m[r][c]) > Math.abs(m[piv][c])) {
                    piv = r;
                }
            }
            double[] t = m[c];
            m[c] = m[piv];
            m[piv] = t;
            s += Math.log(Math.abs(m[c][c]));
            for (int r = c + 1; r < p; r++) {
                double f = m[r][c] / m[c][c];
                for (int k = c; k < p; k++) {
                    m[r][k] -= f * m[c][k];
                }
            }
        }
        return s;
    }

    @Test
    void planOnARawMatrixChoosesRowsWhoseLogDetChecksOut(@TempDir Path dir) throws Exception {
        java.util.Random r = new java.util.Random(5);
        double[][] x = new double[60][4];
        StringBuilder csv = new StringBuilder();
        for (double[] row : x) {
            for (int j = 0; j < 4; j++) {
                row[j] = r.nextGaussian();
            }
            csv.append(row[0]).append(',').append(row[1]).append(',').append(row[2]).append(',').append(row[3])
                    .append('\n');
        }
        Path file = dir.resolve("x.csv");
        Files.writeString(file, csv.toString());
        Run run = run("plan", "--matrix", file.toString(), "--runs", "8", "--seed", "3", "--json");
        assertEquals(0, run.code(), run.err());
        JsonNode root = new ObjectMapper().readTree(run.out());
        double[][] chosen = new double[8][];
        for (int i = 0; i < 8; i++) {
            chosen[i] = x[root.get("chosen").get(i).asInt()];
        }
        assertEquals(logDet(chosen, 4), root.get("logdet").asDouble(), 1e-6);
        assertTrue(root.get("d_efficiency").asDouble() > 1);
        // fewer runs than the 4 columns: no figure, said in the text and null in the JSON
        Run few = run("plan", "--matrix", file.toString(), "--runs", "3", "--seed", "3");
        assertEquals(0, few.code(), few.err());
        assertTrue(few.out().contains("D-efficiency: none (3 runs for 4 design columns"), few.out());
        JsonNode fewJson = new ObjectMapper().readTree(run("plan", "--matrix", file.toString(), "--runs", "3",
                "--seed", "3", "--json").out());
        assertTrue(fewJson.get("d_efficiency").isNull(), fewJson.toString());

        Files.writeString(dir.resolve("bad.csv"), "1,2\n3\n");
        Run bad = run("plan", "--matrix", dir.resolve("bad.csv").toString(), "--runs", "1");
        assertNotEquals(0, bad.code());
        assertTrue(bad.err().contains("bad.csv:2"), bad.err());
        // values at the edge of the double range overflow XᵀX: refused, not a plan with a log det of NaN
        Files.writeString(dir.resolve("huge.csv"), "1,2,1e308\n1,4,5\n1,6,-1e308\n1,3,1\n");
        Run huge = run("plan", "--matrix", dir.resolve("huge.csv").toString(), "--runs", "3");
        assertEquals(1, huge.code(), huge.err());
        assertTrue(huge.err().contains("huge.csv:1: column 3 holds 1.0E308") && huge.err().contains("rescale the "
                + "columns"), huge.err());
        // rows of empty fields are no matrix: said at the line, as bad input
        Files.writeString(dir.resolve("empty.csv"), ",\n,\n,\n");
        Run empty = run("plan", "--matrix", dir.resolve("empty.csv").toString(), "--runs", "2");
        assertEquals(1, empty.code(), empty.err());
        assertTrue(empty.err().contains("empty.csv:1: not a number: ''"), empty.err());
        // a matrix of zeros has nothing to estimate: its D-efficiency says that, not that the runs were too few
        Files.writeString(dir.resolve("zero.csv"), "0,0\n0,0\n0,0\n");
        Run zero = run("plan", "--matrix", dir.resolve("zero.csv").toString(), "--runs", "2");
        assertEquals(0, zero.code(), zero.err());
        assertTrue(zero.out().contains("D-efficiency: none (every design column of the candidates is zero")
                && !zero.out().contains("fewer runs than columns"), zero.out());
    }

    @Test
    void planOnTheBundledDatasetReturnsDistinctRows() throws Exception {
        Path data = graph("resnet18_r64").getParent().getParent();
        Run run = run("plan", "--data", data.toString(), "--runs", "12", "--json");
        assertEquals(0, run.code(), run.err());
        JsonNode chosen = new ObjectMapper().readTree(run.out()).get("chosen");
        java.util.Set<Integer> rows = new java.util.HashSet<>();
        chosen.forEach(n -> rows.add(n.asInt()));
        assertEquals(12, rows.size());
        assertTrue(rows.stream().allMatch(i -> i >= 0 && i < 462));
    }

    /** A candidate repeated row for row, or a table without rows, is refused naming the lines, not planned twice. */
    @Test
    void planRefusesARepeatedCandidateAndAnEmptyTable(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        List<String> rows = new java.util.ArrayList<>(Files.readAllLines(dir.resolve("runs.csv")));
        rows.add(rows.get(1));
        Files.write(dir.resolve("runs.csv"), rows);
        Run twice = run("plan", "--data", dir.toString(), "--runs", "2");
        assertEquals(1, twice.code(), twice.err());
        assertTrue(twice.err().contains("runs.csv:" + rows.size() + ": the same candidate as line 2"), twice.err());
        Files.write(dir.resolve("runs.csv"), rows.subList(0, 1));
        Run none = run("plan", "--data", dir.toString(), "--runs", "2");
        assertEquals(1, none.code(), none.err());
        assertTrue(none.err().contains("no candidate rows"), none.err());
    }

    /** Three families' r64 runs and graphs copied into {@code dir}. */
    static void smallDataset(Path dir) throws Exception {
        Path src = graph("resnet18_r64").getParent().getParent();
        Files.createDirectories(dir.resolve("graphs"));
        StringBuilder runs = new StringBuilder();
        for (String line : Files.readAllLines(src.resolve("runs.csv"))) {
            if (line.startsWith("model,")) {
                runs.append(line).append('\n');
            } else if (line.contains("_r64.onnx") && (line.startsWith("resnet18,") || line.startsWith("squeezenet")
                    || line.startsWith("mobilenet_v2,"))) {
                runs.append(line).append('\n');
            }
        }
        Files.writeString(dir.resolve("runs.csv"), runs.toString());
        for (String g : new String[] {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64"}) {
            Files.copy(graph(g), dir.resolve("graphs/" + g + ".onnx"));
        }
    }

    @Test
    void learningCurveOnASmallDataset(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        Run r = run("learning-curve", "--data", dir.toString(), "--random-seeds", "2", "--folds", "0",
                "--out-dir", dir.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        double full = root.get("full_mre").asDouble();
        assertTrue(root.get("grid_seconds").asDouble() > 0);
        for (String m : new String[] {"d-optimal", "d-optimal-cost", "random"}) {
            JsonNode pts = root.get(m).get("points");
            assertEquals(9, pts.size(), m);
            JsonNode last = pts.get(8);
            assertEquals(1.0, last.get("fraction").asDouble());
            assertEquals(full, last.get("mre").asDouble(), 1e-6, m);
            for (String k : new String[] {"seconds", "runs", "mre", "rmse_ms"}) {
                assertTrue(last.has(k), m + " point lacks " + k);
            }
            JsonNode to = root.get(m).get("seconds_to_1_2x");
            assertTrue(to.isNull() || to.asDouble() <= last.get("seconds").asDouble() + 1e-9, m);
        }
        assertTrue(root.get("random").get("points").get(0).has("mre_low"));
        String svg = Files.readString(dir.resolve("learning-curve.svg"));
        assertTrue(svg.contains("<polygon") && svg.contains("d-optimal-cost"), "random range shaded, legend");
    }

    /** One family cannot be cross-validated: fit and inspect say so instead of printing NaN. */
    @Test
    void fitOnOneFamilySaysThereIsNoCrossValidatedError(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        List<String> lines = Files.readAllLines(dir.resolve("runs.csv"));
        Files.write(dir.resolve("runs.csv"), lines.stream().filter(l -> l.startsWith("model,")
                || l.startsWith("resnet18,")).toList());
        Path model = dir.resolve("m.sdl");
        Run fit = run("fit", "--data", dir.toString(), "--out", model.toString());
        assertEquals(0, fit.code(), fit.err());
        assertTrue(fit.out().contains("no cross-validated MRE"), fit.out());
        assertFalse(fit.out().contains("NaN"), fit.out());
        Run inspect = run("inspect", "--model", model.toString());
        assertTrue(inspect.out().contains("no cross-validated MRE"), inspect.out());
    }

    @Test
    void inspectModelPrintsTheTrainingDomain(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        Path model = dir.resolve("m.sdl");
        assertEquals(0, run("fit", "--data", dir.toString(), "--out", model.toString()).code());
        Run r = run("inspect", "--model", model.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertEquals("host", root.get("layer_cost").asText());
        JsonNode ranges = root.get("domain").get("devices").elements().next();
        assertEquals(2, ranges.get("batch").get(0).asInt());
        assertEquals(32, ranges.get("batch").get(1).asInt());
        assertTrue(root.get("domain").get("families").toString().contains("CONV"));
        Run both = run("inspect", graph("resnet18_r64").toString(), "--model", model.toString());
        assertEquals(2, both.code());
    }

    @Test
    void planWithinABudgetWritesAPlanTheCompanionReads(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        Files.writeString(dir.resolve("grid.txt"), "model = resnet18, mobilenet_v2\nresolution = 64\n"
                + "batch = 2, 8, 32\nthreads = 1, 2\nworld_size = 1, 2\nphase = train, infer\ncores = 2\n");
        Run all = run("plan", "--grid", dir.resolve("grid.txt").toString(), "--runs", "36", "--json");
        assertEquals(0, all.code(), all.err());
        double grid = new ObjectMapper().readTree(all.out()).get("grid_seconds").asDouble();
        Path plan = dir.resolve("out/plan.csv");
        Run r = run("plan", "--grid", dir.resolve("grid.txt").toString(), "--budget-s", String.valueOf(grid / 4),
                "--out", plan.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertEquals(36, root.get("candidates").asInt());
        assertTrue(root.get("seconds").asDouble() <= grid / 4 + 1e-6);
        assertEquals("roofline", root.get("prior").asText());
        List<String> lines = Files.readAllLines(plan);
        assertEquals("model,resolution,batch,world_size,threads,phase,graph,predicted_ms,cost_s", lines.get(0));
        assertEquals(root.get("runs").asInt() + 1, lines.size());
        double cost = 0;
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            assertTrue(f[6].equals("../graphs/resnet18_r64.onnx") || f[6].equals("../graphs/mobilenet_v2_r64.onnx"),
                    "graph paths relative to the plan's folder: " + f[6]);
            cost += Double.parseDouble(f[8]);
        }
        assertEquals(root.get("seconds").asDouble(), cost, 1e-2 * lines.size());
        // What next, given what is measured: the runs of the small dataset count as fixed.
        Run next = run("plan", "--grid", dir.resolve("grid.txt").toString(), "--runs", "4", "--fixed",
                dir.resolve("runs.csv").toString(), "--json");
        assertEquals(0, next.code(), next.err());
        assertEquals(4, new ObjectMapper().readTree(next.out()).get("chosen").size());
        Run bad = run("plan", "--matrix", dir.resolve("grid.txt").toString(), "--budget-s", "10");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("--budget-s needs workloads"), bad.err());
        // a budget below the cheapest run names its option and unit
        Run small = run("plan", "--grid", dir.resolve("grid.txt").toString(), "--budget-s", "0.001");
        assertEquals(2, small.code(), small.err());
        assertTrue(small.err().contains("--budget-s 0.001 s of profiling is below the cheapest candidate's cost "),
                small.err());
    }

    @Test
    void predictCandidatesWritesOneRowPerCandidateWithColumnsCarried(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        Path model = dir.resolve("m.sdl");
        assertEquals(0, run("fit", "--data", dir.toString(), "--out", model.toString()).code());
        Files.writeString(dir.resolve("c.csv"), "graph,batch,world_size,threads,phase,note\n"
                + "graphs/resnet18_r64.onnx,4,1,1,infer,x\ngraphs/resnet18_r64.onnx,4,1,1,train,y\n"
                + "graphs/resnet18_r64.onnx,64,1,1,train,z\n");
        Path csvOut = dir.resolve("p.csv");
        Run r = run("predict", "--model", model.toString(), "--candidates", dir.resolve("c.csv").toString(), "--out",
                csvOut.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(csvOut);
        assertEquals("graph,batch,world_size,threads,phase,note,predicted_ms,low_ms,high_ms,memory_gb,"
                + "tokens_per_s_per_gpu,model_tflops_per_gpu,warnings", lines.get(0));
        assertEquals(4, lines.size());
        double infer = Double.parseDouble(lines.get(1).split(",")[6]);
        double train = Double.parseDouble(lines.get(2).split(",")[6]);
        assertTrue(train > infer, "a training iteration costs more than inference");
        assertTrue(lines.get(3).contains("outside_batch_range"), "batch 64 is outside 2..32: " + lines.get(3));
        Path jsonl = dir.resolve("p.jsonl");
        assertEquals(0, run("predict", "--model", model.toString(), "--candidates", dir.resolve("c.csv").toString(),
                "--out", jsonl.toString()).code());
        List<String> js = Files.readAllLines(jsonl);
        assertEquals(3, js.size());
        JsonNode o = new ObjectMapper().readTree(js.get(1));
        assertEquals("y", o.get("note").asText());
        // the columns read as numbers are numbers on a JSON line; the others stay text
        assertTrue(o.get("batch").isNumber() && o.get("world_size").isNumber(), o.toString());
        assertEquals(o.get("batch").asInt(), Integer.parseInt(org.scaledl.io.CsvTable.read(dir.resolve("c.csv")).get(1,
                "batch")));
        assertTrue(o.get("graph").isTextual() && o.get("phase").isTextual(), o.toString());
        assertEquals(train, o.get("predicted_ms").asDouble(), 1e-3);
        Files.writeString(dir.resolve("bad.csv"), "graph,batch,world_size,threads,phase\n"
                + "graphs/resnet18_r64.onnx,4,1,1,infer\ngraphs/nope.onnx,4,1,1,infer\n");
        Run bad = run("predict", "--model", model.toString(), "--candidates", dir.resolve("bad.csv").toString());
        assertEquals(1, bad.code());
        assertTrue(bad.err().contains("bad.csv:3") && bad.err().contains("nope.onnx"), bad.err());
    }

    @Test
    void fitWithTheGnnStageThenPredict(@TempDir Path dir) throws Exception {
        smallDataset(dir);
        Path model = dir.resolve("gnn.sdl");
        Run fit = run("fit", "--data", dir.toString(), "--out", model.toString(), "--gnn");
        assertEquals(0, fit.code(), fit.err());
        assertTrue(fit.out().contains("scaledl"), fit.out());
        Run p = run("predict", "--model", model.toString(), "--graph", graph("resnet18_r64").toString(), "--batch",
                "4", "--json");
        assertEquals(0, p.code(), p.err());
        double ms = new ObjectMapper().readTree(p.out()).get("ms").asDouble();
        assertTrue(ms > 0 && Double.isFinite(ms), "ms " + ms);
        Run bad = run("fit", "--data", dir.toString(), "--out", model.toString(), "--attention");
        assertNotEquals(0, bad.code());
        assertTrue(bad.err().contains("--gnn"), bad.err());
    }

    @Test
    void fitThenPredictWithJson(@TempDir Path dir) throws Exception {
        Path data = graph("resnet18_r64").getParent().getParent();
        Path model = dir.resolve("model.sdl");
        Run fit = run("fit", "--data", data.toString(), "--out", model.toString());
        assertEquals(0, fit.code(), fit.err());
        Run p = run("predict", "--model", model.toString(), "--graph", graph("resnet50_r64").toString(), "--batch",
                "8", "--world-size", "2", "--threads", "1", "--phase", "train", "--json");
        assertEquals(0, p.code(), p.err());
        JsonNode root = new ObjectMapper().readTree(p.out());
        double ms = root.get("ms").asDouble();
        assertTrue(root.get("low_ms").asDouble() <= ms && ms <= root.get("high_ms").asDouble());
        double sum = 0;
        for (JsonNode c : root.get("breakdown")) {
            sum += c.get("ms").asDouble();
        }
        assertEquals(ms, sum, 1e-6 * ms);

        Files.writeString(dir.resolve("junk.sdl"), "{\"format\": \"scaledl-model\", \"format_version\": 1}");
        Run bad = run("predict", "--model", dir.resolve("junk.sdl").toString(), "--graph",
                graph("resnet50_r64").toString(), "--batch", "8");
        assertNotEquals(0, bad.code());
        assertEquals(1, bad.err().strip().lines().count(), bad.err());
        Run phase = run("predict", "--model", model.toString(), "--graph", graph("resnet50_r64").toString(),
                "--batch", "8", "--phase", "sideways");
        assertNotEquals(0, phase.code());
        assertTrue(phase.err().contains("sideways"), phase.err());
    }

    @Test
    void fitTheDeviceModelThenPredictOnTwoGpus(@TempDir Path dir) throws Exception {
        Path gpu = graph("resnet18_r64").getParent().getParent().getParent().getParent()
                .resolve("scaledl-core/src/test/resources/gpu");
        Path model = dir.resolve("gpu.sdl");
        Run fit = run("fit", "--gpu", "--data", gpu.toString(), "--out", model.toString());
        assertEquals(0, fit.code(), fit.err());
        double[] ms = new double[3];
        String[][] cases = {{"NVIDIA H100 80GB HBM3", "infer"}, {"Tesla T4", "infer"}, {"Tesla T4", "train"}};
        for (int i = 0; i < cases.length; i++) {
            Run p = run("predict", "--model", model.toString(), "--graph", graph("resnet50_r64").toString(),
                    "--batch", "16", "--device", cases[i][0], "--phase", cases[i][1], "--json");
            assertEquals(0, p.code(), p.err());
            ms[i] = new ObjectMapper().readTree(p.out()).get("ms").asDouble();
        }
        assertTrue(ms[0] > 0 && ms[1] > 2 * ms[0], "T4 (8 TFLOP/s) is slower than H100 (67): " + ms[1] + " vs "
                + ms[0]);
        assertTrue(ms[2] > 2 * ms[1], "training adds the backward pass: " + ms[2] + " vs " + ms[1]);

        Run noDevice = run("predict", "--model", model.toString(), "--graph", graph("resnet50_r64").toString(),
                "--batch", "16");
        assertNotEquals(0, noDevice.code());
        assertTrue(noDevice.err().contains("--device"), noDevice.err());
        Run unknown = run("predict", "--model", model.toString(), "--graph", graph("resnet50_r64").toString(),
                "--batch", "16", "--device", "Voodoo2");
        assertNotEquals(0, unknown.code());
        assertTrue(unknown.err().contains("Voodoo2"), unknown.err());
        Run mixed = run("fit", "--gpu", "--gnn", "--data", gpu.toString(), "--out", model.toString());
        assertNotEquals(0, mixed.code());

        Path mine = Files.createDirectories(dir.resolve("my_kernels"));
        List<String> ln = Files.readAllLines(gpu.resolve("neusight/kernels/ln.csv"));
        List<String> l4 = new ArrayList<>(List.of(ln.get(0)));
        ln.stream().filter(l -> l.contains(",NVIDIA L4,")).limit(6).forEach(l4::add);
        Files.write(mine.resolve("ln.csv"), l4);
        Path adapted = dir.resolve("adapted.sdl");
        Run fitAdapted = run("fit", "--gpu", "--data", gpu.toString(), "--out", adapted.toString(), "--profiled",
                mine.toString());
        assertEquals(0, fitAdapted.code(), fitAdapted.err());
        assertTrue(RuntimePredictor.load(adapted).deviceLayerModel().orElseThrow().corrections().get("NVIDIA L4")
                .layers().containsKey(new DeviceLayerModel.FamilyPass(OpFamily.NORM, false,
                        java.util.Optional.of(org.scaledl.workload.Precision.FP32))), fitAdapted.out());
        Run noGpu = run("fit", "--data", gpu.toString(), "--out", adapted.toString(), "--profiled", mine.toString());
        assertNotEquals(0, noGpu.code());
    }
}
