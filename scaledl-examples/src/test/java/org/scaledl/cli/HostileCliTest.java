package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.CsvTable;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * The command line on hostile input and a hostile environment: every case ends in a right answer or one line on
 * stderr naming the file, line, node or option, with the documented exit code; nothing is replaced that is not a
 * regular file, nothing half-written is left, and no output is lost with exit 0.
 */
class HostileCliTest {
    @TempDir
    static Path data;
    static Path model;

    /** A small dataset and the model fitted on it. */
    @BeforeAll
    static void fit() throws Exception {
        MainTest.smallDataset(data);
        model = data.resolve("m.sdl");
        MainTest.Run r = MainTest.run("fit", "--data", data.toString(), "--out", model.toString());
        assertEquals(0, r.code(), r.err());
    }

    static Path repo() {
        return MainTest.graph("resnet18_r64").getParent().getParent().getParent().getParent();
    }

    private static void oneLine(MainTest.Run r, int code, String... parts) {
        assertEquals(code, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("scaledl: error: "), r.err());
        for (String p : parts) {
            assertTrue(r.err().contains(p), "'" + p + "' in " + r.err());
        }
    }

    private static List<String> tmpFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".scaledl-")).toList();
        }
    }

    private static Path candidates(Path dir, int rows, String last) throws IOException {
        StringBuilder sb = new StringBuilder("note,graph,batch,world_size,threads,phase,model\n");
        String[] graphs = {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64"};
        for (int i = 0; i < rows; i++) {
            sb.append("\"n,").append(i).append("\",").append(data.relativize(data.resolve("graphs/" + graphs[i % 3]
                    + ".onnx"))).append(',').append(1 + i % 40).append(',').append(1 + i % 2).append(',')
                    .append(1 + i / 2 % 2).append(',').append(i % 5 == 0 ? "infer" : "train").append(",m")
                    .append(i % 3).append('\n');
        }
        if (last != null) {
            sb.append(last).append('\n');
        }
        Path f = data.resolve("cands-" + rows + (last == null ? "" : "-bad") + ".csv");
        Files.writeString(f, sb.toString());
        return f;
    }

    /**
     * Item 4: a table longer than a chunk is streamed, and every row is what {@code predict} gives it, carried
     * columns and all, in row order.
     */
    @Test
    void aLongCandidateTableIsScoredRowByRowAsPredictWould() throws Exception {
        int rows = PredictCommand.CHUNK_ROWS + 37;
        Path table = candidates(data, rows, null);
        Path out = data.resolve("scored.csv");
        MainTest.Run r = MainTest.run("predict", "--model", model.toString(), "--candidates", table.toString(),
                "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out);
        assertEquals(rows + 1, lines.size());
        assertEquals("note,graph,batch,world_size,threads,phase,model,predicted_ms,low_ms,high_ms,memory_gb,"
                + "tokens_per_s_per_gpu,model_tflops_per_gpu,warnings",
                lines.get(0));
        RuntimePredictor p = RuntimePredictor.load(model);
        CsvTable t = CsvTable.read(table, "graph");
        java.util.Map<String, org.scaledl.graph.ModelGraph> graphs = new java.util.HashMap<>();
        for (int i = 0; i < rows; i += 97) {
            Workload w = Workload.builder(graphs.computeIfAbsent(t.get(i, "graph"), g -> OnnxImporter.read(data
                    .resolve(g)))).batch(t.positiveInt(i, "batch")).worldSize(t.positiveInt(i, "world_size"))
                    .threads(t.positiveInt(i, "threads")).phase(Phase.parse(t.get(i, "phase"))).build();
            Prediction pr = p.predict(w);
            String expected = CsvTable.quote(t.get(i, "note")) + "," + String.join(",", t.get(i, "graph"),
                    t.get(i, "batch"), t.get(i, "world_size"), t.get(i, "threads"), t.get(i, "phase"),
                    t.get(i, "model")) + String.format(Locale.ROOT, ",%.4f,%.4f,%.4f,%s,,,", pr.millis(), pr.lowMillis(),
                    pr.highMillis(), pr.memoryGb().isPresent() ? String.format(Locale.ROOT, "%.3f",
                    pr.memoryGb().getAsDouble()) : "") + String.join(";", pr.warnings().stream().map(x -> x.kind().name()
                            .toLowerCase(Locale.ROOT)).distinct().toList());
            assertEquals(expected, lines.get(i + 1), "row " + i);
        }
        assertEquals(List.of(), tmpFiles(data));

        // a table with its header alone is predicted (nothing) and said to be empty, even with -q
        Path empty = data.resolve("empty.csv");
        Files.writeString(empty, Files.readAllLines(table).get(0) + "\n");
        MainTest.Run none = MainTest.run("predict", "--model", model.toString(), "--candidates", empty.toString(),
                "-q");
        assertEquals(0, none.code(), none.err());
        assertTrue(none.err().contains("empty.csv has no rows under its header: nothing was predicted"), none.err());
        assertFalse(r.err().contains("no rows"), r.err());
    }

    /** Item 1: the files the command line writes never replace a device, a pipe, a link or a folder. */
    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void whatIsNotARegularFileIsNeverReplaced(@TempDir Path dir) throws Exception {
        Path table = candidates(data, 3, null);
        MainTest.Run devNull = MainTest.run("predict", "--model", model.toString(), "--candidates", table.toString(),
                "--out", "/dev/null");
        oneLine(devNull, Main.IO, "refusing to replace /dev/null");
        Path target = Files.writeString(dir.resolve("precious.csv"), "precious");
        Path link = Files.createSymbolicLink(dir.resolve("link.csv"), target);
        oneLine(MainTest.run("predict", "--model", model.toString(), "--candidates", table.toString(), "--out",
                link.toString()), Main.IO, "link.csv", "symbolic link");
        Path fifo = dir.resolve("plan.csv");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        oneLine(MainTest.run("plan", "--data", data.toString(), "--runs", "4", "--out", fifo.toString()), Main.IO,
                "plan.csv");
        Path folder = Files.createDirectory(dir.resolve("svg"));
        for (Path p : List.of(link, fifo, folder)) {
            UncheckedIOException e = org.junit.jupiter.api.Assertions.assertThrows(UncheckedIOException.class,
                    () -> Reports.write(p, "<svg/>"), p.toString());
            assertTrue(e.getMessage().contains("refusing to replace"), e.getMessage());
        }
        assertEquals("precious", Files.readString(target));
        assertTrue(Files.isSymbolicLink(link) && Files.isDirectory(folder) && !Files.isRegularFile(fifo));
        assertEquals(List.of(), tmpFiles(dir));
    }

    /** A folder no file can be created in is named, not the temporary file scaledl tried to create there. */
    @Test
    @EnabledOnOs(OS.LINUX)
    void aFolderThatTakesNoFileIsNamedNotTheTemporaryFile() throws Exception {
        MainTest.Run r = MainTest.run("predict", "--model", model.toString(), "--candidates",
                candidates(data, 2, null).toString(), "--out", "/proc/x.csv");
        oneLine(r, Main.IO, "cannot write /proc/x.csv", "cannot create a file in /proc");
        assertFalse(r.err().contains(".scaledl-"), r.err());
    }

    /**
     * Item 1: a write that fails is exit status 4, and one that stops at a bad row leaves the old file as it was;
     * neither leaves a temporary file.
     */
    @Test
    void aFailedWriteChangesNothingAndLeavesNothing(@TempDir Path dir) throws Exception {
        Path table = candidates(data, 3, null);
        // (a missing folder is made: round seven; a file where the folder should be is a failed write)
        Path file = Files.writeString(dir.resolve("file"), "x");
        oneLine(MainTest.run("predict", "--model", model.toString(), "--candidates", table.toString(), "--out",
                file.resolve("out.csv").toString()), Main.IO, "cannot write", "out.csv");
        Files.delete(file);
        Path bad = candidates(data, PredictCommand.CHUNK_ROWS + 5, "\"late\",graphs/resnet18_r64.onnx,0,1,1,train,m");
        Path out = Files.writeString(dir.resolve("out.csv"), "old");
        MainTest.Run r = MainTest.run("predict", "--model", model.toString(), "--candidates", bad.toString(), "--out",
                out.toString());
        oneLine(r, Main.BAD_INPUT, bad.getFileName() + ":" + (PredictCommand.CHUNK_ROWS + 7), "batch");
        assertEquals("old", Files.readString(out));
        assertEquals(List.of("out.csv"), Files.list(dir).map(p -> p.getFileName().toString()).toList());
    }

    /** A stream that fails every write, as a full disk does. */
    private static final class Full extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            throw new IOException("No space left on device");
        }
    }

    /** Item 2: output standard output could not take is exit status 4, whichever command printed it. */
    @Test
    void outputLostToAFullDeviceIsExitFour() throws Exception {
        Path table = candidates(data, 3, null);
        String g = MainTest.graph("resnet18_r64").toString();
        List<String[]> commands = List.of(new String[] {"inspect", g, "--batch", "2"},
                new String[] {"inspect", "--model", model.toString(), "--json"},
                new String[] {"predict", "--model", model.toString(), "--graph", g, "--batch", "2", "--json"},
                new String[] {"predict", "--model", model.toString(), "--candidates", table.toString()});
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        for (String[] args : commands) {
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
            int code;
            try {
                System.setOut(new PrintStream(new Full(), true, StandardCharsets.UTF_8));
                System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
                code = Main.execute(args);
            } finally {
                System.setOut(oldOut);
                System.setErr(oldErr);
            }
            String e = err.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("scaledl: error"))
                    .reduce("", String::concat);
            assertEquals(Main.IO, code, String.join(" ", args) + ": " + e);
            assertTrue(e.contains("cannot write to standard output"), e);
        }
    }

    /** Item 2, for real: {@code > /dev/full}. */
    @Test
    @EnabledOnOs(OS.LINUX)
    void redirectedToDevFullTheJsonOfPredictIsExitFour() throws Exception {
        Process p = java(List.of(), "predict", "--model", model.toString(), "--graph",
                MainTest.graph("resnet18_r64").toString(), "--batch", "2", "--json")
                .redirectOutput(new java.io.File("/dev/full")).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(Main.IO, p.exitValue(), err);
        assertTrue(err.contains("cannot write to standard output"), err);
    }

    /**
     * A reader that leaves early ({@code scaledl predict --candidates big.csv | head -1}) closes the pipe: that is
     * what was asked for, not lost output, so nothing is said and the status is the command's (a full disk, above,
     * is exit status 4).
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void aReaderThatLeavesEarlyIsNoError() throws Exception {
        // (scored rows far beyond a pipe's buffer, so the writer meets the closed end)
        Path table = candidates(data, 4000, null);
        Process p = java(List.of(), "predict", "--model", model.toString(), "--candidates", table.toString(), "-q")
                .start();
        try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            assertTrue(out.readLine().startsWith("note,graph,"));
        }
        assertTrue(p.waitFor(300, TimeUnit.SECONDS));
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), err);
        assertFalse(err.contains("cannot write"), err);
    }

    private static ProcessBuilder java(List<String> jvm, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvm);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Main.class.getName());
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.PIPE);
    }

    /** Item 3: out of memory anywhere is one line naming -Xmx, exit status 5. */
    @Test
    void outOfMemoryIsOneLineNamingXmxWithItsOwnExitCode(@TempDir Path dir) throws Exception {
        Path matrix = dir.resolve("x.csv");
        try (var w = Files.newBufferedWriter(matrix)) {
            for (int i = 0; i < 600_000; i++) {
                w.write(i + ".5,0.25,-3.75," + (i % 7) + ".125\n");
            }
        }
        Process p = java(List.of("-Xmx24m", "-XX:TieredStopAtLevel=1"), "plan", "--matrix", matrix.toString(),
                "--runs", "3").redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertTrue(p.waitFor(300, TimeUnit.SECONDS));
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(Main.OUT_OF_MEMORY, p.exitValue(), err);
        assertEquals(1, err.strip().lines().count(), err);
        assertTrue(err.startsWith("scaledl: error: out of memory") && err.contains("-Xmx"), err);
    }

    /** Items 6, 7, 8, 9, 11: hostile data files, each one line naming where. */
    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void hostileDataFilesAreOneLineErrorsNamingWhere(@TempDir Path dir) throws Exception {
        oneLine(MainTest.run("predict", "--model", model.toString(), "--candidates", "/dev/zero"), Main.BAD_INPUT,
                "/dev/zero:1", "longer than");
        oneLine(MainTest.run("plan", "--matrix", "/dev/zero", "--runs", "2"), Main.BAD_INPUT, "/dev/zero:1");
        Path gpu = repo().resolve("scaledl-core/src/test/resources/gpu");
        Path device = dir.resolve("gpu.sdl");
        assertEquals(0, MainTest.run("fit", "--gpu", "--data", gpu.toString(), "--out", device.toString()).code());
        oneLine(MainTest.run("predict", "--model", device.toString(), "--graph", MainTest.graph("resnet18_r64")
                .toString(), "--batch", "2", "--device", "NVIDIA L4", "--devices", "/dev/zero"), Main.BAD_INPUT,
                "/dev/zero:1");

        Path ds = dir.resolve("ds");
        MainTest.smallDataset(ds);
        List<String> rows = Files.readAllLines(ds.resolve("runs.csv"));
        String[][] cases = {{"../../etc/shadow", "leaves the dataset folder"}, {"/etc/passwd", "leaves the dataset"},
            {"4.9e-324", "iter_ms_p50"}, {"1e308", "iter_ms_p50"}, {"2147483647", "batch"}};
        for (String[] c : cases) {
            List<String> edited = new ArrayList<>(rows);
            String[] f = edited.get(3).split(",", -1);
            List<String> header = List.of(edited.get(0).split(","));
            int col = c[0].contains("/") ? header.indexOf("graph") : c[1].equals("batch") ? header.indexOf("batch")
                    : header.indexOf("iter_ms_p50");
            f[col] = c[0];
            edited.set(3, String.join(",", f));
            Files.write(ds.resolve("runs.csv"), edited);
            oneLine(MainTest.run("fit", "--data", ds.toString(), "--out", dir.resolve("x.sdl").toString()),
                    Main.BAD_INPUT, "runs.csv:4", c[1]);
        }
        Files.write(ds.resolve("runs.csv"), rows);
        Files.writeString(ds.resolve("machine.json"), "{\"name\": \"m\", \"cpus\": 2, \"l2\": \". MiB\"}");
        oneLine(MainTest.run("fit", "--data", ds.toString(), "--out", dir.resolve("x.sdl").toString()),
                Main.BAD_INPUT, "machine.json", "\"l2\"");
        Files.delete(ds.resolve("machine.json"));
        byte[] latin1 = (String.join("\n", rows.subList(0, 3)) + "\ncaf\u00e9" + rows.get(3) + "\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        Files.write(ds.resolve("runs.csv"), latin1);
        oneLine(MainTest.run("fit", "--data", ds.toString(), "--out", dir.resolve("x.sdl").toString()),
                Main.BAD_INPUT, "runs.csv:4", "UTF-8");
        assertFalse(Files.exists(dir.resolve("x.sdl")));

        byte[] saved = Files.readAllBytes(model);
        Path truncated = Files.write(dir.resolve("cut.sdl"), java.util.Arrays.copyOf(saved, 3000));
        MainTest.Run cut = MainTest.run("inspect", "--model", truncated.toString());
        oneLine(cut, Main.BAD_INPUT, "cut.sdl", "invalid JSON at line");
        assertFalse(cut.err().contains("REDACTED") || cut.err().contains("Source:"), cut.err());
    }

    /** Item 11: advice names the options, not the Java calls. */
    @Test
    void refusalsNameTheOptionsNotTheJavaCalls() {
        Path machines = repo().resolve("scaledl-models/src/main/resources/org/scaledl/models/cpu-machines.sdl");
        String g = MainTest.graph("resnet18_r64").toString();
        MainTest.Run which = MainTest.run("predict", "--model", machines.toString(), "--graph", g, "--batch", "2");
        oneLine(which, Main.USAGE, "--device");
        assertFalse(which.err().contains("Workload.Builder"), which.err());
        assertEquals("", Main.forCli(null));
        assertEquals("predict it anyway with --allow-partial", Main.forCli("predict it anyway with "
                + "allowingPartialGraphs() (CLI --allow-partial)"));
        assertTrue(Main.forCli("machine 'x', which it has not seen: give it a few measured runs of that machine "
                + "(predictor.calibrate(runs))").contains("scaledl fit --calibrate"));
        assertEquals("bind each with --dim NAME=SIZE, e.g. --dim seq=224 with its real size", Main.forCli("bind "
                + "each with --dim NAME=SIZE, e.g. --dim seq=224 with its real size (API: "
                + "OnnxImporter.Options.builder().dim(\"seq\", 224); CLI: --dim name=size)"));
    }

    /**
     * evaluate-clusters refuses an --out it cannot honour before reading any data (a minute of fitting would otherwise
     * end in the refusal): with --calibration, and a folder for a file.
     */
    @Test
    void evaluateClustersRefusesItsOutFirst(@TempDir Path dir) {
        MainTest.Run both = MainTest.run("evaluate-clusters", "--data", dir.resolve("none").toString(), "--out",
                dir.resolve("p.csv").toString(), "--calibration");
        oneLine(both, Main.USAGE, "--out", "--calibration");
        MainTest.Run folder = MainTest.run("evaluate-clusters", "--data", dir.resolve("none").toString(), "--out",
                dir.toString());
        assertEquals(1, folder.err().strip().lines().count(), folder.err());
        assertTrue(folder.err().contains(dir.toString()) && folder.err().contains("directory"), folder.err());
        assertFalse(folder.err().contains("none"), "refused before the data were read: " + folder.err());
        MainTest.Run cluster = MainTest.run("evaluate-clusters", "--data", dir.resolve("none").toString(),
                "--each-cluster", "--learning-curve");
        oneLine(cluster, Main.USAGE, "--each-cluster", "--learning-curve");
        assertFalse(cluster.err().contains("none"), "refused before the data were read: " + cluster.err());
    }

    /** predict writes its scored table as .csv or .jsonl (either case), and refuses another name before scoring. */
    @Test
    void predictOutIsCsvOrJsonl(@TempDir Path dir) {
        MainTest.Run txt = MainTest.run("predict", "--model", model.toString(), "--candidates",
                dir.resolve("none.csv").toString(), "--out", dir.resolve("scored.txt").toString());
        oneLine(txt, Main.USAGE, "--out", ".jsonl");
    }

    /** Item 8: fit names the runs it leaves out. */
    @Test
    void fitNamesTheRunsItLeavesOut(@TempDir Path dir) throws Exception {
        MainTest.smallDataset(dir);
        List<String> rows = new ArrayList<>(Files.readAllLines(dir.resolve("runs.csv")));
        List<String> header = List.of(rows.get(0).split(","));
        int ms = header.indexOf("iter_ms_p50");
        String[] f = rows.get(5).split(",", -1);
        f[ms] = Double.toString(Double.parseDouble(f[ms]) * 1000);
        rows.set(5, String.join(",", f));
        Files.write(dir.resolve("runs.csv"), rows);
        MainTest.Run r = MainTest.run("fit", "--data", dir.toString(), "--out", dir.resolve("m.sdl").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("left out of the fit") && r.out().contains(dir.resolve("runs.csv") + ":6"),
                r.out());
        MainTest.Run clean = MainTest.run("fit", "--data", data.toString(), "--out", dir.resolve("c.sdl").toString());
        assertFalse(clean.out().contains("left out"), clean.out());
    }

    /**
     * Round five of the probe: settings an imported graph's execution does not model (recomputation, ZeRO) are
     * refused as its other transformer-only settings are, on the CPU model and a GPU one, not reported as applied.
     */
    @Test
    void settingsAnImportedGraphDoesNotModelAreRefused() {
        String g = MainTest.graph("resnet18_r64").toString();
        String[][] settings = {{"--zero-stage", "1"}, {"--recompute", "full"}, {"--recompute", "selective"},
            {"--recompute-layers", "3"}};
        for (String[] set : settings) {
            oneLine(MainTest.run("predict", "--model", model.toString(), "--graph", g, "--batch", "2", set[0],
                    set[1]), Main.USAGE, "imported graphs", set[0].equals("--zero-stage") ? "ZeRO stage 1"
                    : "recomputation");
            // the GPU model refuses it as it refuses LoRA on an imported graph (bad input: exit 1)
            oneLine(MainTest.run("predict", "--model", "gpu", "--graph", g, "--batch", "2", "--device", "H100",
                    "--precision", "bf16", "--world-size", "4", set[0], set[1]), Main.BAD_INPUT, "imported graph",
                    set[0].equals("--zero-stage") ? "ZeRO stage 1" : "recomputation");
        }
        // recomputing nothing, ZeRO 0: what the imported graph's execution does, so accepted
        assertEquals(0, MainTest.run("predict", "--model", model.toString(), "--graph", g, "--batch", "2",
                "--recompute", "none", "--zero-stage", "0").code());
    }

    /**
     * Round five: a candidate table that mixes a transformer and an imported graph takes the command line's
     * recomputation and ZeRO stage as defaults for its transformer rows only (the graph row is predicted as without
     * them, as the same graph alone is), while a graph row's own cell asking for them is refused naming its line.
     */
    @Test
    void aMixedTablesDefaultsApplyToItsTransformerRowsOnly(@TempDir Path dir) throws Exception {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(config, dir.resolve("llama/config.json"));
        Files.copy(MainTest.graph("resnet18_r64"), dir.resolve("r.onnx"));
        Path mix = dir.resolve("mix.csv");
        Files.writeString(mix, "transformer,graph,seq,batch,device,precision\nllama/config.json,,512,1,H100,bf16\n"
                + ",r.onnx,,2,H100,bf16\n");
        Path out = dir.resolve("scored.csv");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", mix.toString(), "--recompute",
                "full", "--zero-stage", "1", "--world-size", "2", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        CsvTable scored = CsvTable.read(out);
        MainTest.Run alone = MainTest.run("predict", "--model", "gpu", "--graph", dir.resolve("r.onnx").toString(),
                "--batch", "2", "--device", "H100", "--precision", "bf16", "--world-size", "2", "--json");
        assertEquals(0, alone.code(), alone.err());
        double graphMs = new com.fasterxml.jackson.databind.ObjectMapper().readTree(alone.out()).get("ms").asDouble();
        assertEquals(graphMs, Double.parseDouble(scored.get(1, "predicted_ms")), 1e-3 * graphMs);
        Path own = dir.resolve("own.csv");
        Files.writeString(own, "graph,batch,device,precision,recompute\nr.onnx,2,H100,bf16,full\n");
        oneLine(MainTest.run("predict", "--model", "gpu", "--candidates", own.toString()), Main.BAD_INPUT,
                "own.csv:2", "full recomputation");
    }

    /**
     * Round five: a table of GPU jobs planned without a GPU model is refused naming its first such row (it was read
     * as CPU runs, every job priced alike and the plan written without its transformers and devices).
     */
    @Test
    void aPlanOfGpuJobsNeedsAGpuModel(@TempDir Path dir) throws Exception {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(config, dir.resolve("llama/config.json"));
        Path table = dir.resolve("jobs.csv");
        Files.writeString(table, "id,transformer,seq,batch,micro_batches,world_size,tensor,pipeline,device,"
                + "precision\na,llama/config.json,2048,1,1,8,1,1,H100,bf16\nb,llama/config.json,2048,1,1,4,2,1,H100,"
                + "bf16\n");
        oneLine(MainTest.run("plan", "--candidates", table.toString(), "--runs", "1"), Main.BAD_INPUT, "jobs.csv:2",
                "a GPU job", "--model gpu");
        Path devices = dir.resolve("devices.csv");
        Files.copy(MainTest.graph("resnet18_r64"), dir.resolve("r.onnx"));
        Files.writeString(devices, "batch,world_size,threads,phase,device,graph\n2,1,1,train,H100,r.onnx\n");
        oneLine(MainTest.run("plan", "--candidates", devices.toString(), "--runs", "1"), Main.BAD_INPUT,
                "devices.csv:2", "names the GPU H100");
        // a GPU table with its nodes described, read for the roofline prior: said so, not "give the device"
        Path nodes = dir.resolve("nodes.csv");
        Files.writeString(nodes, "id,transformer,seq,batch,world_size,device,gpus_per_node\n"
                + "a,llama/config.json,2048,1,8,H100,4\n");
        oneLine(MainTest.run("plan", "--candidates", nodes.toString(), "--runs", "1"), Main.BAD_INPUT, "nodes.csv:2",
                "'H100' is read as a CPU machine here", "--model gpu");
        // a CPU table's device is its machine: planned as before
        Path machines = dir.resolve("machines.csv");
        Files.writeString(machines, "batch,world_size,threads,phase,device,graph\n2,1,1,train,Xeon-8480,r.onnx\n"
                + "4,1,1,train,Xeon-8480,r.onnx\n");
        MainTest.Run cpu = MainTest.run("plan", "--candidates", machines.toString(), "--runs", "1");
        assertEquals(0, cpu.code(), cpu.err());
        MainTest.Run gpu = MainTest.run("plan", "--model", "gpu", "--candidates", table.toString(), "--runs", "1");
        assertEquals(0, gpu.code(), gpu.err());
    }

    /**
     * Round five: what was typed reaches the message escaped whichever option named it (a newline in a model's or a
     * configuration's path forged a second line), an empty path names no file (it read the working directory), and
     * a configuration given as a graph is said to be one.
     */
    @Test
    void pathsAreOneEscapedLineAndAnEmptyOneIsNoFile() throws Exception {
        String g = MainTest.graph("resnet18_r64").toString();
        oneLine(MainTest.run("predict", "--model", "/tmp/a\nscaledl: note: fine", "--graph", g, "--batch", "1"),
                Main.USAGE, "\\u000a");
        oneLine(MainTest.run("predict", "--model", "gpu", "--transformer", "/tmp/a\nb.json", "--seq", "2",
                "--batch", "1"), Main.BAD_INPUT, "/tmp/a\\u000ab.json");
        oneLine(MainTest.run("predict", "--model", "gpu", "--transformer", "", "--seq", "2", "--batch", "1"),
                Main.USAGE, "an empty path");
        oneLine(MainTest.run("predict", "--model", "", "--graph", g, "--batch", "1"), Main.USAGE,
                "an empty value");
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        oneLine(MainTest.run("predict", "--model", "gpu", "--graph", config.toString(), "--batch", "1", "--device",
                "H100"), Main.BAD_INPUT, "not an ONNX model but JSON", "--transformer");
    }

    /** Round five: an output named for another format than the command writes is refused before any work. */
    @Test
    void anOutputNamedForAnotherFormatIsRefused(@TempDir Path dir) throws Exception {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        oneLine(MainTest.run("layouts", "--model", "gpu", "--transformer", config.toString(), "--seq", "2048",
                "--gpus", "8", "--global-batch", "8", "--device", "H100", "--precision", "bf16", "--out",
                dir.resolve("l.jsonl").toString()), Main.USAGE, "l.jsonl", ".csv");
        oneLine(MainTest.run("plan", "--data", data.toString(), "--runs", "2", "--out", dir.resolve("p.svg")
                .toString()), Main.USAGE, "p.svg", "the plan");
        oneLine(MainTest.run("scaling", "--model", "gpu", "--transformer", config.toString(), "--seq", "2048",
                "--batch", "1", "--device", "H100", "--precision", "bf16", "--out", dir.resolve("s.csv").toString()),
                Main.USAGE, "s.csv", ".svg");
        assertEquals(List.of(), Files.list(dir).toList());
    }

    /**
     * Round six: an output that would overwrite what the command reads is refused, the inputs left as they were: the
     * table or catalog an option names, a file inside a dataset folder; a model is written as {@code .sdl}; a dataset
     * given twice, and an empty or repeated sweep, are refused where they were counted twice, ignored or crashed.
     */
    @Test
    void outputsThatWouldOverwriteInputsAreRefused(@TempDir Path dir) throws Exception {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        Path ds = dir.resolve("ds");
        MainTest.smallDataset(ds);
        Path runs = ds.resolve("runs.csv");
        byte[] before = Files.readAllBytes(runs);
        oneLine(MainTest.run("plan", "--data", ds.toString(), "--runs", "2", "--out", runs.toString()), Main.USAGE,
                "inside the folder --data names");
        oneLine(MainTest.run("evaluate", "--data", ds.toString(), "--cv", "family", "--methods", "scaledl", "--out",
                runs.toString()), Main.USAGE, "inside the folder --data names");
        Path table = candidates(dir, 3, null);
        byte[] tableBefore = Files.readAllBytes(table);
        oneLine(MainTest.run("plan", "--candidates", table.toString(), "--runs", "2", "--out", table.toString()),
                Main.USAGE, "the file --candidates names");
        oneLine(MainTest.run("fit", "--data", ds.toString(), "--out", runs.toString()), Main.USAGE, ".sdl");
        Path link = Files.createSymbolicLink(dir.resolve("ds-link"), ds);
        oneLine(MainTest.run("fit", "--data", ds.toString(), "--data", link.toString(), "--out",
                dir.resolve("twice.sdl").toString()), Main.USAGE, "given twice");
        oneLine(MainTest.run("plan", "--data", ds.toString(), "--runs", "2", "--out", link.resolve("runs.csv")
                .toString()), Main.USAGE, "inside the folder --data names");
        // an earlier output beside the data is no input: written again
        for (int k = 0; k < 2; k++) {
            MainTest.Run again = MainTest.run("plan", "--data", ds.toString(), "--runs", "2", "--out",
                    ds.resolve("plan.csv").toString());
            assertEquals(0, again.code(), again.err());
        }
        Path catalog = dir.resolve("gpus.csv");
        Files.writeString(catalog, "gpu,memory_gb\n");
        oneLine(MainTest.run("layouts", "--model", "gpu", "--transformer", config.toString(), "--seq", "2048",
                "--gpus", "8", "--global-batch", "8", "--device", "H100", "--precision", "bf16", "--devices",
                catalog.toString(), "--out", catalog.toString()), Main.USAGE, "the file --devices names");
        assertEquals("gpu,memory_gb\n", Files.readString(catalog));
        assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(runs)), "the dataset's runs.csv");
        assertTrue(java.util.Arrays.equals(tableBefore, Files.readAllBytes(table)), "the candidate table");
        assertFalse(Files.exists(dir.resolve("twice.sdl")));
        String svg = dir.resolve("s.svg").toString();
        String[] job = {"scaling", "--model", "gpu", "--transformer", config.toString(), "--seq", "2048", "--batch",
            "1", "--device", "H100", "--precision", "bf16", "--out", svg};
        oneLine(MainTest.run(concat(job, "--gpus", ",")), Main.USAGE, "'--gpus' has an empty value in its list");
        oneLine(MainTest.run(concat(job, "--gpus", "8,8")), Main.USAGE, "--gpus names 8 twice");
        oneLine(MainTest.run(concat(job, "--batches", "2147483647")), Main.USAGE, "--batches must be in 1..");
        assertFalse(Files.exists(dir.resolve("s.svg")));
        // layouts dropped the all-to-all overlap from every layout where predict refuses the pair
        Path mixtral = dir.resolve("mixtral");
        Files.createDirectories(mixtral);
        Files.writeString(mixtral.resolve("config.json"), "{\"model_type\": \"mixtral\", \"hidden_size\": 1024, "
                + "\"num_attention_heads\": 16, \"num_key_value_heads\": 4, \"num_hidden_layers\": 4, "
                + "\"intermediate_size\": 2048, \"vocab_size\": 32000, \"num_local_experts\": 8, "
                + "\"num_experts_per_tok\": 2}");
        oneLine(MainTest.run("layouts", "--model", "gpu", "--transformer", mixtral.resolve("config.json").toString(),
                "--seq", "2048", "--gpus", "16", "--global-batch", "64", "--device", "H100", "--precision", "bf16",
                "--moe-a2a-overlap", "--moe-dispatcher", "allgather"), Main.BAD_INPUT, "not allgather");
    }

    /**
     * Round six, continued: a table's column the output would drop is refused (a measured rate beside its
     * {@code measured_} column; with {@code --keep-going}, a column {@code error}); a hold-out of a folder against
     * itself is refused; the messages of a pipeline of more stages than layers and of too many key/value heads name
     * the rule that is broken.
     */
    @Test
    void roundSixColumnsAndMessages(@TempDir Path dir) throws Exception {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        Files.copy(config, dir.resolve("config.json"));
        Path both = dir.resolve("both.csv");
        Files.writeString(both, "transformer,seq,batch,device,precision,tokens_per_s_per_gpu,"
                + "measured_tokens_per_s_per_gpu\nconfig.json,2048,1,H100,bf16,9000,8000\n");
        oneLine(MainTest.run("predict", "--model", "gpu", "--candidates", both.toString()), Main.BAD_INPUT,
                "both.csv", "measured_tokens_per_s_per_gpu", "keep one");
        Path error = dir.resolve("error.csv");
        Files.writeString(error, "transformer,seq,batch,device,precision,error\nconfig.json,2048,1,H100,bf16,mine\n");
        oneLine(MainTest.run("predict", "--model", "gpu", "--candidates", error.toString(), "--keep-going"),
                Main.BAD_INPUT, "error.csv", "column 'error'", "rename it");
        MainTest.Run kept = MainTest.run("predict", "--model", "gpu", "--candidates", error.toString());
        assertEquals(0, kept.code(), kept.err());
        assertTrue(kept.out().contains("mine"), "without --keep-going the column is carried through: " + kept.out());
        Path ds = dir.resolve("ds");
        MainTest.smallDataset(ds);
        oneLine(MainTest.run("evaluate", "--train", ds.toString(), "--test", ds.toString() + "/"), Main.USAGE,
                "is the --train folder");
        oneLine(MainTest.run("predict", "--model", "gpu", "--transformer", config.toString(), "--seq", "2048",
                "--batch", "1", "--pipeline", "33", "--gpus", "33", "--device", "H100", "--uneven-pipeline"),
                Main.BAD_INPUT, "33 pipeline stages for 32 layers", "at least one layer");
        Path kv = dir.resolve("kv.json");
        Files.writeString(kv, "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_attention_heads\": 32, "
                + "\"num_key_value_heads\": 64, \"num_hidden_layers\": 4, \"intermediate_size\": 11008, "
                + "\"vocab_size\": 32000}");
        MainTest.Run heads = MainTest.run("predict", "--model", "gpu", "--transformer", kv.toString(), "--seq",
                "2048", "--batch", "1", "--device", "H100");
        oneLine(heads, Main.BAD_INPUT, "key/value heads 64 are more than the 32 attention heads");
        assertFalse(heads.err().contains("head size 0"), heads.err());
        // a CPU model's table row in a GPU precision is refused as --precision is (it was its FP32 time)
        Files.copy(MainTest.graph("resnet18_r64"), dir.resolve("r.onnx"));
        Path cpu = dir.resolve("cpu.csv");
        Files.writeString(cpu, "graph,batch,precision\nr.onnx,8,bf16\n");
        oneLine(MainTest.run("predict", "--model", model.toString(), "--candidates", cpu.toString()), Main.BAD_INPUT,
                "cpu.csv:2", "precision bf16 applies to GPU models");
        Path unstated = dir.resolve("unstated.csv");
        Files.writeString(unstated, "graph,batch\nr.onnx,8\n");
        oneLine(MainTest.run("predict", "--model", model.toString(), "--candidates", unstated.toString(),
                "--precision", "bf16"), Main.USAGE, "--precision bf16 applies to GPU models");
        // a runs row whose rate and time disagree 20-fold is said (2,048 tokens on each of 8 GPUs in 1 s: 2,048 a
        // GPU a second, not 100); within rounding it is not
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "id,transformer,seq,batch,world_size,device,precision,measured_ms,"
                + "tokens_per_s_per_gpu\na,config.json,2048,1,8,H100,bf16,1000,100\nb,config.json,2048,1,8,H100,bf16,"
                + "1000,2050\n");
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("c.sdl").toString());
        assertEquals(0, cal.code(), cal.err());
        assertTrue(cal.err().contains("runs.csv:2: measured_ms 1000 and tokens_per_s_per_gpu 100 disagree")
                && cal.err().contains("(20.48x)") && !cal.err().contains("runs.csv:3: measured_ms"), cal.err());
    }

    /** The arguments {@code a} followed by {@code b}. */
    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /**
     * Round five: an option a command would ignore where its sibling is refused is refused too: a fit anew's options
     * with a calibration, a graph's options with a predictor to inspect, an ONNX graph's dimensions with a
     * configuration.
     */
    @Test
    void optionsACommandWouldIgnoreAreRefused(@TempDir Path dir) throws Exception {
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "id,transformer,seq,batch,micro_batches,world_size,tensor,pipeline,device,precision,"
                + "measured_ms\n");
        String out = dir.resolve("x.sdl").toString();
        oneLine(MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out", out, "--attention"),
                Main.USAGE, "--attention");
        oneLine(MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out", out, "--profiled",
                dir.toString()), Main.USAGE, "--profiled");
        oneLine(MainTest.run("fit", "--calibrate", model.toString(), "--data", data.toString(), "--out", out,
                "--attention"), Main.USAGE, "--attention");
        for (String[] opt : new String[][] {{"--batch", "4"}, {"--phase", "infer"}, {"--dim", "x=1"}}) {
            oneLine(MainTest.run("inspect", "--model", "gpu", opt[0], opt[1]), Main.USAGE, opt[0], "--model");
        }
        assertEquals(0, MainTest.run("inspect", "--model", model.toString()).code());
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        oneLine(MainTest.run("predict", "--model", "gpu", "--transformer", config.toString(), "--seq", "128",
                "--batch", "1", "--device", "H100", "--dim", "seq=5"), Main.USAGE, "--dim", "--seq");
        oneLine(MainTest.run("inspect", "--transformer", config.toString(), "--seq", "128", "--dim", "seq=5"),
                Main.USAGE, "--dim", "--seq");
        Path other = dir.resolve("other");
        MainTest.smallDataset(other);
        oneLine(MainTest.run("evaluate", "--train", data.toString(), "--test", other.toString(), "--methods",
                "roofline", "--gnn"), Main.USAGE, "--gnn", "--methods names none of them");
        Path matrix = dir.resolve("m.csv");
        Files.writeString(matrix, "1,0\n0,1\n1,1\n");
        assertEquals(0, MainTest.run("plan", "--matrix", matrix.toString(), "--runs", "2").code());
        oneLine(MainTest.run("plan", "--matrix", matrix.toString(), "--runs", "2", "--warmup", "5"), Main.USAGE,
                "--warmup", "--matrix");
        oneLine(MainTest.run("plan", "--matrix", matrix.toString(), "--runs", "2", "--devices", matrix.toString()),
                Main.USAGE, "--devices", "--matrix");
        assertFalse(Files.exists(Path.of(out)));
    }

    /**
     * Round five: {@code plan --fixed} reads what a GPU model's plan is given as measured as a job runs table (it read
     * CPU runs tables only, and refused one: "missing column 'model'"), and no plan offers a run already measured again
     * (a CPU plan chose runs of its --fixed): they are left out, said on stderr, and a table measured whole has
     * nothing to plan.
     */
    @Test
    void aPlanLeavesOutWhatIsAlreadyMeasured(@TempDir Path dir) throws Exception {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(config, dir.resolve("llama/config.json"));
        String header = "id,transformer,seq,batch,micro_batches,world_size,tensor,pipeline,device,precision";
        String[] jobs = {"a,llama/config.json,2048,1,1,8,1,1,H100,bf16", "b,llama/config.json,2048,1,1,4,2,1,H100,bf16",
            "c,llama/config.json,2048,1,1,2,4,1,H100,bf16", "d,llama/config.json,2048,1,1,1,8,1,H100,bf16"};
        Path table = dir.resolve("jobs.csv");
        Files.writeString(table, header + "\n" + String.join("\n", jobs) + "\n");
        Path measured = dir.resolve("measured.csv");
        Files.writeString(measured, header + ",measured_ms\n" + jobs[0] + ",300\n" + jobs[2] + ",200\n");
        Path out = dir.resolve("plan.csv");
        MainTest.Run gpu = MainTest.run("plan", "--model", "gpu", "--candidates", table.toString(), "--runs", "2",
                "--fixed", measured.toString(), "--out", out.toString());
        assertEquals(0, gpu.code(), gpu.err());
        assertTrue(gpu.err().contains("2 of 4 candidates left out of the plan: already measured"), gpu.err());
        CsvTable plan = CsvTable.read(out);
        assertEquals(2, plan.size());
        assertEquals(java.util.Set.of("b", "d"), java.util.Set.of(plan.get(0, "id"), plan.get(1, "id")));
        oneLine(MainTest.run("plan", "--model", "gpu", "--candidates", measured.toString(), "--runs", "1", "--fixed",
                measured.toString()), Main.BAD_INPUT, "every candidate is already measured");
        // a CPU plan with its own runs as measured: nothing left
        oneLine(MainTest.run("plan", "--data", data.toString(), "--runs", "2", "--fixed", data.resolve("runs.csv")
                .toString()), Main.BAD_INPUT, "every candidate is already measured");
    }

    /**
     * The walkthrough's loop: the companion measures a plan's candidates into a data folder holding its own copy of
     * each graph and a {@code machine.json} naming the machine (a CPU plan's candidates name none); {@code plan --fixed}
     * of that folder's {@code runs.csv} knows the measured candidates by their layer features (it knew none: another
     * graph path, a named machine).
     */
    @Test
    void aCandidateMeasuredIntoACompanionFolderIsKnown(@TempDir Path dir) throws Exception {
        Path graph = MainTest.graph("squeezenet1_1_r64");
        for (String sub : new String[] {"plan/graphs", "data/graphs"}) {
            Files.createDirectories(dir.resolve(sub));
            Files.copy(graph, dir.resolve(sub).resolve("squeezenet1_1_r64.onnx"));
        }
        String header = "model,resolution,batch,world_size,threads,phase";
        String[] jobs = {"squeezenet1_1,64,2,1,1,train", "squeezenet1_1,64,4,1,1,train", "squeezenet1_1,64,8,1,1,train",
            "squeezenet1_1,64,2,1,1,infer", "squeezenet1_1,64,4,1,1,infer", "squeezenet1_1,64,8,1,1,infer"};
        StringBuilder table = new StringBuilder(header + ",graph\n");
        for (String j : jobs) {
            table.append(j).append(",graphs/squeezenet1_1_r64.onnx\n");
        }
        Files.writeString(dir.resolve("plan/candidates.csv"), table.toString());
        Files.writeString(dir.resolve("data/machine.json"), "{\"name\": \"lab VM\", \"cpus\": 2}\n");
        Files.writeString(dir.resolve("data/runs.csv"), header + ",iter_ms_p50,graph\n"
                + jobs[0] + ",30,graphs/squeezenet1_1_r64.onnx\n" + jobs[3] + ",10,graphs/squeezenet1_1_r64.onnx\n");
        MainTest.Run r = MainTest.run("plan", "--candidates", dir.resolve("plan/candidates.csv").toString(), "--runs",
                "2", "--fixed", dir.resolve("data/runs.csv").toString(), "--json");
        assertEquals(0, r.code(), r.err());
        assertEquals(2, new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out()).get("already_measured")
                .asInt(), r.out());
        assertTrue(r.err().contains("2 of 6 candidates left out of the plan: already measured"), r.err());
    }

    /**
     * Round five: a CPU job of more processes times threads than its machine's cores (64 workers on the bundled 2-core
     * VM) is warned as unusual, its time unchanged; one within them is not.
     */
    @Test
    void aCpuJobOfMoreThreadsThanCoresIsWarned() throws Exception {
        String g = MainTest.graph("resnet18_r64").toString();
        MainTest.Run over = MainTest.run("predict", "--model", "cpu-ddp", "--graph", g, "--batch", "2",
                "--world-size", "4", "--threads", "2", "--json");
        assertEquals(0, over.code(), over.err());
        assertTrue(over.err().contains("4 processes x 2 threads = 8 threads on the 2 cores of"), over.err());
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(over.out());
        assertTrue(json.get("warnings").toString().contains("unusual_job"), json.get("warnings").toString());
        MainTest.Run within = MainTest.run("predict", "--model", "cpu-ddp", "--graph", g, "--batch", "2",
                "--world-size", "2");
        assertEquals(0, within.code(), within.err());
        assertFalse(within.err().contains("share cores"), within.err());
    }

    /**
     * Round five: the experts' all-to-all overlap asked of one micro-batch (nothing to hide it behind) is said, not
     * silently without effect; with two micro-batches it is not.
     */
    @Test
    void anAllToAllOverlapOfOneMicroBatchIsSaid() {
        Path config = repo().resolve("scaledl-core/src/test/resources/transformers/mixtral-8x7b/config.json");
        for (int m : new int[] {1, 2}) {
            MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", config.toString(), "--seq",
                    "1024", "--batch", Integer.toString(m), "--micro-batches", Integer.toString(m), "--world-size",
                    "8", "--expert", "8", "--device", "H100", "--precision", "bf16", "--moe-a2a-overlap");
            assertEquals(0, r.code(), r.err());
            assertEquals(m == 1, r.err().contains("with one micro-batch nothing hides it"), r.err());
        }
    }

    /** Round five: {@code scaling} with a CPU model counts workers, not GPUs, in its table and its chart. */
    @Test
    void aCpuScalingCountsWorkers(@TempDir Path dir) throws Exception {
        Path svg = dir.resolve("s.svg");
        MainTest.Run r = MainTest.run("scaling", "--model", model.toString(), "--graph", MainTest.graph("resnet18_r64")
                .toString(), "--batch", "2", "--out", svg.toString());
        assertEquals(0, r.code(), r.err());
        String header = r.out().lines().skip(1).findFirst().orElse("");
        assertTrue(header.contains("workers") && header.contains("tok/s/wkr") && !header.contains("GPU"), header);
        String chart = Files.readString(svg);
        assertTrue(chart.contains("workers") && !chart.contains("GPUs"), "the chart's axes count workers");
    }
}
