package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.JobRuns;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;

class RunsCommandTest {
    @TempDir
    Path dir;

    private static Path repo() {
        return MainTest.graph("resnet18_r64").getParent().getParent().getParent().getParent();
    }

    private static Path log(String name) {
        return repo().resolve("scaledl-core/src/test/resources/logs/" + name);
    }

    private static Path llama3() {
        return repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
    }

    private static List<Sample> read(Path csv) {
        return JobRuns.read(csv, OnnxImporter::read, PlanCommand.gpuNames(Catalogs.of(null)), Map.of());
    }

    private static void oneLine(MainTest.Run r, int code, String... parts) {
        assertEquals(code, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("scaledl: error: "), r.err());
        for (String p : parts) {
            assertTrue(r.err().contains(p), "missing '" + p + "' in: " + r.err());
        }
    }

    /**
     * A NeMo log's trainer states its GPUs per node ({@code devices}, beside {@code num_nodes}): the table says so,
     * and a job on nodes of 4 is read back on nodes of 4, not on the device's standard server of 8; a log whose
     * {@code devices} is no count ({@code auto}) leaves the column empty.
     */
    @Test
    void aNemoLogsDevicesAreTheNodesGpus() throws IOException {
        String text = Files.readString(log("nemo-llama3-8b.log"));
        Path four = dir.resolve("nemo-four.log");
        Files.writeString(four, text.replace("devices: 8", "devices: 4").replace("num_nodes: 2", "num_nodes: 4"));
        Path auto = dir.resolve("nemo-auto.log");
        Files.writeString(auto, text.replace("devices: 8", "devices: auto"));
        Path out = dir.resolve("four.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", four.toString(), auto.toString(), "--out",
                out.toString(), "-q");
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out);
        int col = RunsCommand.COLUMNS.indexOf("gpus_per_node");
        assertEquals("4", lines.get(1).split(",", -1)[col], lines.get(1));
        assertEquals("", lines.get(2).split(",", -1)[col], lines.get(2));
        List<Sample> runs = read(out);
        assertEquals(4, runs.get(0).workload().topology().orElseThrow().gpusPerNode());
        assertTrue(runs.get(1).workload().topology().isEmpty() || runs.get(1).workload().topology().get()
                .gpusPerNode() == 8);
    }

    @Test
    void logsBecomeAJobRunsTableThatPredictReads() throws IOException {
        Path out = dir.resolve("runs.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(),
                log("nemo-llama3-8b.log").toString(), "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("median of 30 iterations (the first 10 dropped as warm-up): 5050.5 ms"), r.err());
        assertTrue(r.err().contains("median of 8 iterations (the first 4 dropped as warm-up): 2415.0 ms"), r.err());
        assertTrue(r.err().contains("model from its arguments: runs-configs/megatron-llama3-8b.json (llama, 8.030 B "
                + "parameters)"), r.err());
        List<String> lines = Files.readAllLines(out);
        assertEquals(3, lines.size(), String.join("\n", lines));
        assertEquals(String.join(",", RunsCommand.COLUMNS), lines.get(0));
        assertTrue(lines.get(1).startsWith("megatron-llama3-8b.log,runs-configs/megatron-llama3-8b.json,8192,1,16,8,4,"
                + "2,1,1,false,1,1,1,NVIDIA H100 80GB HBM3,,,,bf16,none,,,true,overlapped,fp32,false,false,,none,5050.5000,"),
                lines.get(1));
        assertTrue(lines.get(2).startsWith("nemo-llama3-8b.log,runs-configs/nemo-llama3-8b.json,8192,2,8,4,2,1,2,1,"
                + "false,1,1,0,NVIDIA H100 80GB HBM3,8,,,fp8,selective,,core_attn,true,overlapped,,false,false,,none,"
                + "2415.0000,"),
                lines.get(2));
        assertTrue(Files.isRegularFile(dir.resolve("runs-configs/nemo-llama3-8b.json")));

        List<Sample> runs = read(out);
        assertEquals(2, runs.size());
        Sample first = runs.get(0);
        assertEquals(5050.5, first.millis(), 1e-9);
        Parallelism p = first.workload().parallelism();
        assertEquals(8, p.data());
        assertEquals(4, p.tensor());
        assertEquals(2, p.pipeline());
        assertEquals(16, p.microBatches());
        assertEquals(1, p.zeroStage());
        assertEquals(64, p.ranks());
        assertEquals(16, first.workload().batch(), "a replica's batch: micro-batch 1 x 16");
        assertEquals(Precision.BF16, first.workload().precision());
        assertEquals("megatron-llama3-8b.log", first.workload().tag("id").orElseThrow());
        assertEquals(Precision.FP8, runs.get(1).workload().precision());
        assertEquals(2, runs.get(1).workload().parallelism().context());

        RuntimePredictor gpu = ModelArgument.load("gpu");
        for (Sample s : runs) {
            double ms = gpu.predict(s.workload()).millis();
            assertTrue(ms > 0 && Double.isFinite(ms), "prediction " + ms);
        }
        Path scored = dir.resolve("scored.csv");
        MainTest.Run predict = MainTest.run("predict", "--model", "gpu", "--candidates", out.toString(), "--out",
                scored.toString(), "-q");
        assertEquals(0, predict.code(), predict.err());
        assertEquals(3, Files.readAllLines(scored).size());
    }

    /**
     * A runs table measured in tokens a second keeps its measurements when scored: carried through as
     * measured_tokens_per_s_per_gpu beside the prediction of that name, said on stderr; scoring the scored table
     * again replaces the predictions and keeps the measurements.
     */
    @Test
    void scoringARunsTableKeepsItsMeasuredThroughput() throws IOException {
        Path runs = dir.resolve("runs.csv");
        assertEquals(0, MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--out",
                runs.toString(), "-q").code());
        List<String> lines = Files.readAllLines(runs);
        // measured in tokens a second only (the step time kept under a name nothing reads)
        Files.write(runs, List.of(lines.get(0).replace("measured_ms", "logged_ms") + ",tokens_per_s_per_gpu",
                lines.get(1) + ",1234.5"));
        Path scored = dir.resolve("scored.csv");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                scored.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("measured tokens_per_s_per_gpu are carried through as "
                + "measured_tokens_per_s_per_gpu"), r.err());
        List<String> header = List.of(Files.readAllLines(scored).get(0).split(","));
        List<String> row = List.of(Files.readAllLines(scored).get(1).split(",", -1));
        assertEquals("1234.5", row.get(header.indexOf("measured_tokens_per_s_per_gpu")));
        double predicted = Double.parseDouble(row.get(header.indexOf("tokens_per_s_per_gpu")));
        assertTrue(predicted > 0 && predicted != 1234.5, "the prediction: " + predicted);
        Path again = dir.resolve("again.csv");
        MainTest.Run r2 = MainTest.run("predict", "--model", "gpu", "--candidates", scored.toString(), "--out",
                again.toString());
        assertEquals(0, r2.code(), r2.err());
        assertTrue(!r2.err().contains("carried through as"), r2.err());
        assertEquals(Files.readAllLines(scored), Files.readAllLines(again), "scored again: the same table");
        // fitted on, the scored table is its measurements, not its predictions
        assertEquals(read(runs).get(0).millis(), read(scored).get(0).millis(), 1e-9);
        Path predictionsOnly = dir.resolve("predictions-only.csv");
        List<String> scoredLines = Files.readAllLines(scored);
        Files.write(predictionsOnly, List.of(scoredLines.get(0).replace("measured_tokens_per_s_per_gpu", "x"),
                scoredLines.get(1)));
        org.scaledl.InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> read(predictionsOnly));
        assertTrue(e.getMessage().contains("a scored table"), e.getMessage());
    }

    /** A run named twice (a row copied) is refused naming both lines, not counted as two measurements. */
    @Test
    void aRunNamedTwiceIsRefused() throws IOException {
        Path out = dir.resolve("runs.csv");
        assertEquals(0, MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--out",
                out.toString(), "-q").code());
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(out));
        lines.add(lines.get(1));
        Files.write(out, lines);
        org.scaledl.InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> read(out));
        assertTrue(e.getMessage().contains("runs.csv:3") && e.getMessage().contains("'megatron-llama3-8b.log'")
                && e.getMessage().contains("line 2"), e.getMessage());
        oneLine(MainTest.run("fit", "--calibrate", "gpu", "--runs", out.toString(), "--out",
                dir.resolve("c.sdl").toString()), Main.BAD_INPUT, "runs.csv:3", "line 2");

        // across tables: a table given twice (by another spelling of its path), or a run copied into another table,
        // would count twice
        Files.write(out, lines.subList(0, 2));
        Path copy = dir.resolve("more.csv");
        Files.write(copy, lines.subList(0, 2));
        String again = dir.resolve(".").resolve("runs.csv").toString();
        oneLine(MainTest.run("fit", "--calibrate", "gpu", "--runs", out.toString(), "--runs", again, "--out",
                dir.resolve("c.sdl").toString()), Main.BAD_INPUT, "this runs table is given twice (also as " + out);
        oneLine(MainTest.run("fit", "--calibrate", "gpu", "--runs", out.toString(), "--runs", copy.toString(),
                "--out", dir.resolve("c.sdl").toString()), Main.BAD_INPUT, "more.csv:2: id 'megatron-llama3-8b.log'",
                "names the run of " + out + ":2 too");
        assertFalse(Files.exists(dir.resolve("c.sdl")), "nothing written");
    }

    /**
     * A run whose iteration times after warm-up take two levels (a run that changed speed, or two runs in one log with
     * nothing between) is read, its median said to be maybe no iteration's time; a steady one is not.
     */
    @Test
    void iterationTimesOfTwoLevelsAreSaid() throws IOException {
        java.util.regex.Pattern time = java.util.regex.Pattern.compile("elapsed time per iteration \\(ms\\): [0-9.]+");
        int[] seen = {0};
        List<String> stepped = Files.readAllLines(log("megatron-llama3-8b.log")).stream().map(l -> {
            java.util.regex.Matcher m = time.matcher(l);
            return m.find() ? m.replaceFirst("elapsed time per iteration (ms): " + (seen[0]++ < 25 ? "1000.0"
                    : "1600.0")) : l;
        }).toList();
        assertTrue(seen[0] > 30, "iteration lines: " + seen[0]);
        Path log = dir.resolve("two.log");
        Files.write(log, stepped);
        MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve("two.csv")
                .toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("spread widely (quartiles 1000 and 1600 ms around the median")
                && r.err().contains("the first half's median 1000 ms, the second half's 1600 ms"), r.err());
        // said at the first iteration line far from the median (iteration 11, the first after warm-up), naming the
        // first few, not at the log's first line
        int eleventh = Files.readAllLines(log).stream().map(l -> l.contains("iteration       11/")).toList()
                .indexOf(true) + 1;
        assertTrue(r.err().contains("two.log:" + eleventh + ": its 30 iteration times after warm-up spread widely")
                && r.err().contains("more than 10 % from the median: lines " + eleventh + " (1000 ms), "
                + (eleventh + 1) + " (1000 ms), " + (eleventh + 2) + " (1000 ms) and 27 more"), r.err());
        MainTest.Run steady = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--out",
                dir.resolve("steady.csv").toString());
        assertEquals(0, steady.code(), steady.err());
        assertFalse(steady.err().contains("spread widely"), steady.err());
    }

    /**
     * A batch-size ramp-up's lines, and the first line after them, are left out of the median, and the warning counts
     * every line it left out.
     */
    @Test
    void aRampUpsLinesAreLeftOutAndCounted() throws IOException {
        List<String> ramp = new java.util.ArrayList<>();
        java.util.regex.Pattern it = java.util.regex.Pattern.compile("iteration\\s+(\\d+)/");
        for (String l : Files.readAllLines(log("megatron-llama3-8b.log"))) {
            java.util.regex.Matcher m = it.matcher(l);
            ramp.add(m.find() && Integer.parseInt(m.group(1)) <= 20
                    ? l.replace("global batch size:   128", "global batch size:    64") : l);
        }
        Path log = dir.resolve("ramp.log");
        Files.write(log, ramp);
        MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--warmup", "0", "--out",
                dir.resolve("ramp.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("21 of 40 iteration lines after warm-up left out of the median, which takes the 19 "
                + "that ran global_batch_size 128: 20 ran a global batch of 64 (a batch-size ramp-up), and 1 followed "
                + "a line of another batch"), r.err());
    }

    /**
     * A calibration on one GPU's runs says that the execution model's coefficients, one set for every GPU, move for
     * the others too.
     */
    @Test
    void aCalibrationOnOneGpusRunsSaysTheOthersMoveToo() throws IOException {
        Path out = dir.resolve("runs.csv");
        assertEquals(0, MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--out",
                out.toString(), "-q").code());
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", out.toString(), "--out",
                dir.resolve("c.sdl").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("coefficients are shared by every GPU") && r.err().contains("c.sdl"), r.err());
        // how far the one run moved the level, in the words of the predictions it changes
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("scaledl: note: the 1 run moved the model's level "
                + "\\(x([0-9.]+) on every coefficient: predictions ([0-9.]+) % (faster|slower)\\); fewer than 8 jobs "
                + "move the level only").matcher(r.err());
        assertTrue(m.find(), r.err());
        double factor = Double.parseDouble(m.group(1));
        assertEquals(100 * Math.abs(factor - 1), Double.parseDouble(m.group(2)), 0.051);
        assertEquals(factor < 1 ? "faster" : "slower", m.group(3));
        org.scaledl.model.exec.MegatronModel before = ModelArgument.load("gpu").executionModel()
                .orElseThrow();
        org.scaledl.model.exec.MegatronModel after = org.scaledl.model.RuntimePredictor.load(dir.resolve("c.sdl"))
                .executionModel().orElseThrow();
        assertEquals(factor, after.coefficient(org.scaledl.model.exec.ExecutionTerm.DENSE)
                / before.coefficient(org.scaledl.model.exec.ExecutionTerm.DENSE), 0.0005);
        // the calibrated copy says so where the bundled model says nothing (inspect's first line and its JSON)
        MainTest.Run shown = MainTest.run("inspect", "--model", dir.resolve("c.sdl").toString());
        assertTrue(shown.out().lines().findFirst().orElse("").contains("calibrated on 1 run of NVIDIA H100 80GB HBM3 since it was "
                + "fitted"),
                shown.out());
        assertFalse(MainTest.run("inspect", "--model", "gpu").out().contains("calibrated on"));
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                MainTest.run("inspect", "--model", dir.resolve("c.sdl").toString(), "--json").out());
        assertEquals(1, json.get("calibration_runs").asInt());
    }

    /**
     * A calibration on a few runs that disagree about the cluster's speed by more than the model's interval spans says
     * so, naming the two runs furthest apart and the level it moved; runs that agree are calibrated on silently.
     */
    @Test
    void aCalibrationOnRunsThatDisagreeSaysSo() throws IOException {
        Path out = dir.resolve("runs.csv");
        assertEquals(0, MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--from-log",
                log("nemo-llama3-8b.log").toString(), "--out", out.toString(), "-q").code());
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", out.toString(), "--out",
                dir.resolve("c.sdl").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("the runs disagree about the cluster's speed") && r.err().contains("runs.csv:2")
                && r.err().contains("runs.csv:3") && r.err().contains("moves one level for all of them (here x"),
                r.err());
        // the Megatron run twice, the copy 5 % slower under another id: they agree
        List<String> lines = Files.readAllLines(out);
        List<String> header = List.of(lines.get(0).split(","));
        String[] copy = lines.get(1).split(",", -1);
        int ms = header.indexOf("measured_ms");
        copy[header.indexOf("id")] = "copy";
        copy[ms] = String.valueOf(Double.parseDouble(copy[ms]) * 1.05);
        Path agree = dir.resolve("agree.csv");
        Files.write(agree, List.of(lines.get(0), lines.get(1), String.join(",", copy)));
        MainTest.Run quiet = MainTest.run("fit", "--calibrate", "gpu", "--runs", agree.toString(), "--out",
                dir.resolve("d.sdl").toString());
        assertEquals(0, quiet.code(), quiet.err());
        assertFalse(quiet.err().contains("disagree"), quiet.err());
    }

    /** The predicted times of a runs table's rows under a saved model, in row order. */
    private static List<Double> predictions(Path model, Path runs) throws IOException {
        Path preds = runs.resolveSibling(model.getFileName() + ".preds.csv");
        assertEquals(0, MainTest.run("predict", "--model", model.toString(), "--candidates", runs.toString(),
                "--out", preds.toString()).code());
        List<String> scored = Files.readAllLines(preds);
        int col = List.of(scored.get(0).split(",")).indexOf("predicted_ms");
        List<Double> out = new java.util.ArrayList<>();
        for (String line : scored.subList(1, scored.size())) {
            out.add(Double.parseDouble(line.split(",", -1)[col]));
        }
        return out;
    }

    /**
     * A calibration on enough runs to refit the terms names the runs it leaves more than 10 % beyond their 90 %
     * interval, furthest first: the nine published Llama 3 70B runs on H100s, one of them measured 1.8 times slower
     * than published, calibrate with that run named first (its line, x1.6–1.99 of its prediction) and the eight others
     * predicted within 2 % of what the nine as published calibrate them to (the wild run pulls them little). The nine
     * as published name none; being fewer than eight distinct jobs, they refit no term.
     */
    @Test
    void aCalibrationNamesTheRunsItLeavesOutsideTheirInterval() throws IOException {
        Path published = MainTest.graph("x").getParent().getParent().getParent().resolve("gpu/llm-public");
        Path config = dir.resolve("configs/llama3-70b/config.json");
        Files.createDirectories(config.getParent());
        Files.copy(published.resolve("configs/llama3-70b/config.json"), config);
        List<String> lines = Files.readAllLines(published.resolve("runs.csv"));
        List<String> header = List.of(lines.get(0).split(","));
        int ms = header.indexOf("measured_ms");
        List<String> clean = new java.util.ArrayList<>(List.of(lines.get(0)));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            if (f[header.indexOf("transformer")].equals("configs/llama3-70b/config.json")
                    && f[header.indexOf("device")].startsWith("H100")) {
                clean.add(line);
            }
        }
        assertEquals(9, clean.size() - 1, "the published Llama 3 70B runs on H100s");
        List<String> wild = new java.util.ArrayList<>(clean);
        String[] f = wild.get(5).split(",", -1);
        f[ms] = String.valueOf(Double.parseDouble(f[ms]) * 1.8);
        wild.set(5, String.join(",", f));
        Path runs = dir.resolve("runs.csv");
        Files.write(runs, wild);
        Path out = dir.resolve("c.sdl");
        MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertFalse(r.err().contains("is not one scaledl reads"), r.err());
        // the wild run first, the furthest beyond its interval
        assertTrue(r.err().matches("(?s).*\\d+ of 9 runs lies? more than 10% beyond (its|their) 90% interval after the "
                + "calibration: [^;]*runs\\.csv:6 measured x1\\.[6-9]\\d of its prediction.*"), r.err());
        List<Double> wildPredictions = predictions(out, runs);
        Files.write(runs, clean);
        Path cleanOut = dir.resolve("clean.sdl");
        MainTest.Run quiet = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                cleanOut.toString());
        assertEquals(0, quiet.code(), quiet.err());
        assertFalse(quiet.err().contains("beyond"), quiet.err());
        // nine runs of fewer jobs (one layout published by four releases is one job): too few jobs to refit the
        // terms, so no refit is weighed against the level
        assertFalse(quiet.err().contains("refitted with each job held out"), quiet.err());
        // the wild run pulls the calibration little: the eight others are predicted as the clean nine calibrate them
        List<Double> cleanPredictions = predictions(cleanOut, runs);
        for (int i = 0; i < cleanPredictions.size(); i++) {
            if (i != 4) {
                double ratio = wildPredictions.get(i) / cleanPredictions.get(i);
                assertTrue(Math.abs(ratio - 1) < 0.02, "line " + (i + 2) + ": x" + ratio);
            }
        }
        // the same runs with Megatron's name for the tensor-parallel degree, which the reader does not read: refused
        // (a runs table's rows are jobs that ran; read without it, each would be fitted as a job of tensor 1), naming
        // the column meant, once, before any row is read
        clean.set(0, clean.get(0).replace(",tensor,", ",tp,"));
        Files.write(runs, clean);
        MainTest.Run renamed = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        String said = "runs.csv: column 'tp' is not one scaledl reads (did you mean 'tensor'?)";
        assertEquals(1, renamed.err().split(java.util.regex.Pattern.quote(said), -1).length - 1, renamed.err());
        assertEquals(1, renamed.code(), renamed.err());
        assertTrue(renamed.err().contains("scaledl: error:") && !renamed.err().contains("sequence parallelism "
                + "needs tensor parallelism"), renamed.err());
    }

    /**
     * A runs table's {@code gpus} column gives the GPUs a published throughput is per: the iteration of 64 GPUs at
     * tensor 2 that processes 32 replicas x 4 sequences x 2,048 tokens at 1,000 tokens/s per GPU takes 4,096 ms, as
     * the same row with {@code world_size} 32 says; read with the GPUs of one replica it would take 32 times as long.
     */
    @Test
    void aRunsTablesGpusColumnSetsTheGpusAThroughputIsPer() throws IOException {
        Path config = dir.resolve("configs/llama3-8b/config.json");
        Files.createDirectories(config.getParent());
        Files.copy(MainTest.graph("x").getParent().getParent().getParent().resolve(
                "gpu/llm-public/configs/llama3-8b/config.json"), config);
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "transformer,seq,batch,micro_batches,gpus,world_size,tensor,device,precision,"
                + "tokens_per_s_per_gpu\n"
                + "configs/llama3-8b/config.json,2048,1,4,64,,2,H100 SXM,bf16,1000\n"
                + "configs/llama3-8b/config.json,2048,1,4,,32,2,H100 SXM,bf16,1000\n");
        List<Sample> s = read(runs);
        assertEquals(64, s.get(0).workload().parallelism().ranks());
        assertEquals(4096, s.get(0).millis(), 1e-6);
        assertEquals(s.get(1).millis(), s.get(0).millis(), 0);
        // a runs table's own columns misspelt: the measurement refused naming the look-alike, and a weight, a
        // cluster or the family the fit holds runs out by refused too (read as absent, every row would take its
        // default: weight 1, no cluster, no family)
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,Measured_ms\n"
                + "configs/llama3-8b/config.json,2048,1,8,H100 SXM,bf16,1000\n");
        MainTest.Run measured = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("m.sdl").toString());
        assertEquals(1, measured.code(), measured.err());
        assertTrue(measured.err().contains("its column 'Measured_ms' looks like measured_ms misspelt"),
                measured.err());
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms,fit-weight\n"
                + "configs/llama3-8b/config.json,2048,1,8,H100 SXM,bf16,1000,0.5\n");
        MainTest.Run weight = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("m.sdl").toString());
        assertEquals(1, weight.code(), weight.err());
        assertTrue(weight.err().contains("column 'fit-weight' is not one scaledl reads (did you mean "
                + "'fit_weight'?)") && weight.err().contains("rename it"), weight.err());
        assertFalse(Files.exists(dir.resolve("m.sdl")), "nothing written");
        for (String[] c : new String[][] {{"Family", "family"}, {"sytem", "system"}, {"relase", "release"}}) {
            Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms," + c[0] + "\n"
                    + "configs/llama3-8b/config.json,2048,1,8,H100 SXM,bf16,1000,x\n");
            MainTest.Run r = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                    dir.resolve("m.sdl").toString());
            assertEquals(1, r.code(), c[0] + ": " + r.err());
            assertTrue(r.err().contains("column '" + c[0] + "' is not one scaledl reads (did you mean '" + c[1]
                    + "'?)"), r.err());
        }
        // a label's look-alike (model_key) is warned of, the table read
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms,model-key\n"
                + "configs/llama3-8b/config.json,2048,1,8,H100 SXM,bf16,1000,pretrain\n");
        MainTest.Run label = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("m.sdl").toString());
        assertEquals(0, label.code(), label.err());
        assertTrue(label.err().contains("column 'model-key' is not one scaledl reads (did you mean 'model_key'?)"),
                label.err());
        Files.deleteIfExists(dir.resolve("m.sdl"));
        // spelt right, each is read
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms,family,system,release\n"
                + "configs/llama3-8b/config.json,2048,1,8,H100 SXM,bf16,1000,Llama 3,mine,1\n");
        MainTest.Run ok = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("m.sdl").toString());
        assertEquals(0, ok.code(), ok.err());
        // a table to predict keeps its labels' look-alikes a warning
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,Family\n"
                + "configs/llama3-8b/config.json,2048,1,8,H100 SXM,bf16,x\n");
        MainTest.Run predicted = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                dir.resolve("p.csv").toString(), "-q");
        assertEquals(0, predicted.code(), predicted.err());
        assertTrue(predicted.err().contains("column 'Family' is not one scaledl reads"), predicted.err());
    }

    /**
     * A log whose arguments say the gradients are reduced after the backward pass ({@code overlap_grad_reduce}
     * False) becomes a row with {@code grad_reduce} after-backward, which the table's reader gives its workload.
     */
    @Test
    void aLogThatReducesAfterTheBackwardPassSaysSo() throws IOException {
        Path log = dir.resolve("no-overlap.log");
        Files.writeString(log, Files.readString(log("megatron-llama3-8b.log")).replaceFirst(
                "(?m)^(  micro_batch_size .*)$", "$1\n  overlap_grad_reduce ............................. False"));
        Path out = dir.resolve("runs.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out);
        assertTrue(lines.get(1).contains(",bf16,none,,,true,after-backward,fp32,false,false,,none,5050.5000,"),
                lines.get(1));
        assertEquals(org.scaledl.workload.GradReduce.AFTER_BACKWARD, read(out).get(0).workload().gradReduce());
    }

    /**
     * {@code --transformer} takes a model's folder (as Hugging Face saves one) as the config.json it holds, as predict
     * and inspect do; a folder without one is refused saying so.
     */
    @Test
    void aModelsFolderIsTheConfigItHolds() throws IOException {
        Path out = dir.resolve("runs.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--transformer",
                llama3().getParent().toString(), "--out", out.toString(), "-q");
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out);
        assertTrue(lines.get(1).startsWith("megatron-llama3-8b.log,runs-configs/llama-3-8b.json,8192,1,16,8,4,2,"),
                lines.get(1));
        assertEquals(Files.readString(llama3()), Files.readString(dir.resolve("runs-configs/llama-3-8b.json")));
        assertEquals(1, read(out).size());
        Files.createDirectories(dir.resolve("empty"));
        oneLine(MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--transformer",
                dir.resolve("empty").toString(), "--out", dir.resolve("none.csv").toString()), Main.BAD_INPUT,
                "a folder without a config.json");
        assertFalse(Files.exists(dir.resolve("none.csv")));
    }

    @Test
    void aGivenConfigOutsideTheFolderIsCopiedAndTheOptionsFillTheirColumns() throws IOException {
        Path out = dir.resolve("tables/jobs.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--transformer",
                llama3().toString(), "--device", "H200", "--gpus-per-node", "8", "--nvlink-domain", "8", "--warmup",
                "1", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("median of 39 iterations (the first 1 dropped as warm-up)"), r.err());
        assertTrue(r.err().contains("the log ran on NVIDIA H100 80GB HBM3; its sample is taken as NVIDIA H200's"), r.err());
        List<String> lines = Files.readAllLines(out);
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).startsWith("megatron-llama3-8b.log,jobs-configs/llama-3-8b.json,8192,1,16,8,4,2,1,1,"
                + "false,1,1,1,NVIDIA H200,8,8,,bf16,"), lines.get(1));
        assertEquals(Files.readString(llama3()), Files.readString(dir.resolve("tables/jobs-configs/llama-3-8b.json")));
        List<Sample> runs = read(out);
        assertEquals(1, runs.size());
        assertEquals("NVIDIA H200", runs.get(0).workload().device().orElseThrow().name());

        // a config inside the table's folder is named where it is
        Files.createDirectories(dir.resolve("tables/models"));
        Files.copy(llama3(), dir.resolve("tables/models/config.json"));
        MainTest.Run inside = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(),
                "--transformer", dir.resolve("tables/models/config.json").toString(), "--out", out.toString(), "-q");
        assertEquals(0, inside.code(), inside.err());
        assertEquals("", inside.err());
        assertTrue(Files.readAllLines(out).get(1).startsWith("megatron-llama3-8b.log,models/config.json,"));
        assertEquals(1, read(out).size());
    }

    /**
     * A log given twice is refused before anything is written; logs of one name in different folders are told apart
     * by their folder in the id.
     */
    @Test
    void aRunsIdIsItsOwn() throws IOException {
        Path out = dir.resolve("twice.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--from-log",
                log("megatron-llama3-8b.log").toString(), "--out", out.toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("is given twice"), r.err());
        assertFalse(Files.exists(out));
        // a link to a log given beside it is the same measurement
        Files.copy(log("megatron-llama3-8b.log"), dir.resolve("train.log"));
        Path link;
        try {
            link = Files.createSymbolicLink(dir.resolve("alias.log"), dir.resolve("train.log"));
        } catch (UnsupportedOperationException | IOException e) {
            link = null;
        }
        if (link != null) {
            MainTest.Run linked = MainTest.run("runs", "--from-log", dir.resolve("train.log").toString(),
                    "--from-log", link.toString(), "--out", out.toString());
            assertEquals(2, linked.code(), linked.err());
            assertTrue(linked.err().contains("alias.log is the same file as " + dir.resolve("train.log")),
                    linked.err());
            assertFalse(Files.exists(out));
        }
        for (String job : new String[] {"jobA", "jobB"}) {
            Files.createDirectories(dir.resolve(job));
            Files.copy(log("megatron-llama3-8b.log"), dir.resolve(job + "/train.log"));
        }
        MainTest.Run two = MainTest.run("runs", "--from-log", dir.resolve("jobA/train.log").toString(), "--from-log",
                dir.resolve("jobB/train.log").toString(), "--out", out.toString(), "-q");
        assertEquals(0, two.code(), two.err());
        List<String> lines = Files.readAllLines(out);
        assertTrue(lines.get(1).startsWith("jobA/train.log,") && lines.get(2).startsWith("jobB/train.log,"),
                lines.toString());
    }

    @Test
    void badLogsAndOptionsAreOneLineErrorsAndWriteNothing() throws IOException {
        Path out = dir.resolve("runs.csv");
        oneLine(MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(),
                log("different-hidden.log").toString(), "--transformer", llama3().toString(), "--out",
                out.toString()), Main.BAD_INPUT, "different-hidden.log", "different model",
                "hidden_size is 8192 in the log, 4096 in the configuration");
        oneLine(MainTest.run("runs", "--from-log", log("missing-global-batch.log").toString(), "--out",
                out.toString()), Main.BAD_INPUT, "missing-global-batch.log", "global_batch_size", "ffn_hidden_size");
        oneLine(MainTest.run("runs", "--from-log", log("huge-layers.log").toString(), "--out", out.toString()),
                Main.BAD_INPUT, "huge-layers.log", "num_layers = 4294967328 is out of range");
        Path anonymous = dir.resolve("anonymous.log");
        Files.writeString(anonymous, Files.readString(log("nemo-llama3-8b.log")).replaceFirst("GPU 0: [^\n]*\n", ""));
        oneLine(MainTest.run("runs", "--from-log", anonymous.toString(), "--out", out.toString()), Main.USAGE,
                "anonymous.log does not print its GPU's name", "--device");
        oneLine(MainTest.run("runs", "--from-log", anonymous.toString(), "--device", "Z9000", "--out",
                out.toString()), Main.USAGE, "--device", "unknown device 'Z9000'");
        oneLine(MainTest.run("runs", "--from-log", anonymous.toString(), "--device", "H100", "--warmup", "-1",
                "--out", out.toString()), Main.USAGE, "--warmup");
        oneLine(MainTest.run("runs", "--from-log", anonymous.toString(), "--device", "H100", "--warmup", "12",
                "--out", out.toString()), Main.BAD_INPUT, "anonymous.log", "no iterations after warm-up");
        oneLine(MainTest.run("runs", "--from-log", anonymous.toString(), "--device", "H100", "--out",
                anonymous.toString()), Main.USAGE, "is one of the logs");
        assertFalse(Files.exists(out));
        assertFalse(Files.exists(dir.resolve("runs-configs")));
        MainTest.Run ok = MainTest.run("runs", "--from-log", anonymous.toString(), "--device", "H100", "--out",
                out.toString(), "-q");
        assertEquals(0, ok.code(), ok.err());
        assertTrue(Files.readAllLines(out).get(1).contains(",NVIDIA H100 80GB HBM3,"));
    }

    /**
     * Iterations that skipped their update or diverged (Megatron's counts on their lines, a NaN loss) are said with
     * their lines: the median takes their times as logged (a helper's log of NaN losses was read without a word).
     */
    @Test
    void skippedAndDivergedIterationsAreSaid() throws IOException {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(log("megatron-llama3-8b.log")));
        int marked = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("iteration       2") && lines.get(i).contains("elapsed time per iteration")) {
                lines.set(i, lines.get(i).replace("lm loss: 1.076383E+01", "lm loss: nan")
                        .replace("number of nan iterations:   0", "number of nan iterations:   1"));
                marked++;
            }
        }
        assertTrue(marked >= 5, "iterations 20..29 marked: " + marked);
        Path bad = dir.resolve("nan.log");
        Files.write(bad, lines);
        MainTest.Run r = MainTest.run("runs", "--from-log", bad.toString(), "--out", dir.resolve("o.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains(marked + " of the 30 iterations the median takes diverged"), r.err());
        // skipped updates beyond a twentieth of them are said apart (a loss scaler's)
        List<String> skips = new java.util.ArrayList<>(Files.readAllLines(log("megatron-llama3-8b.log")));
        skips.replaceAll(l -> l.contains("iteration       2") && l.contains("elapsed time per iteration")
                ? l.replace("number of skipped iterations:   0", "number of skipped iterations:   1") : l);
        Path skipping = dir.resolve("skips.log");
        Files.write(skipping, skips);
        MainTest.Run s = MainTest.run("runs", "--from-log", skipping.toString(), "--out",
                dir.resolve("s.csv").toString());
        assertTrue(s.err().contains(marked + " of the 30 iterations the median takes skipped their update"), s.err());
        // NeMo's reduced_train_loss as NaN (a reviewer's case: the pattern missed it after an underscore)
        List<String> nemo = new java.util.ArrayList<>(Files.readAllLines(log("nemo-llama3-8b.log")));
        int last = nemo.size() - 1;
        while (!nemo.get(last).startsWith("Training epoch")) {
            last--;
        }
        nemo.set(last, nemo.get(last).replace("reduced_train_loss: 11.03", "reduced_train_loss: nan"));
        Path nan = dir.resolve("nemo-nan.log");
        Files.write(nan, nemo);
        MainTest.Run n = MainTest.run("runs", "--from-log", nan.toString(), "--out", dir.resolve("n.csv").toString());
        assertTrue(n.err().contains("nemo-nan.log:" + (last + 1) + ": 1 of the ") && n.err().contains("diverged"),
                n.err());
        MainTest.Run clean = MainTest.run("runs", "--from-log", log("megatron-llama3-8b.log").toString(), "--out",
                dir.resolve("c.csv").toString());
        assertFalse(clean.err().contains("NaN loss"), clean.err());
        // a loss scaler's first overflows, in the warm-up the median drops, are no warning (a reviewer's fp16 log)
        List<String> early = new java.util.ArrayList<>(Files.readAllLines(log("megatron-llama3-8b.log")));
        early.replaceAll(l -> l.contains("iteration        1/") || l.contains("iteration        2/")
                ? l.replace("number of skipped iterations:   0", "number of skipped iterations:   1") : l);
        Path scaler = dir.resolve("scaler.log");
        Files.write(scaler, early);
        MainTest.Run warm = MainTest.run("runs", "--from-log", scaler.toString(), "--out",
                dir.resolve("w.csv").toString());
        assertEquals(0, warm.code(), warm.err());
        assertTrue(early.stream().filter(l -> l.contains("skipped iterations:   1")).count() == 2);
        assertFalse(warm.err().contains("skipped update"), warm.err());
    }
}
