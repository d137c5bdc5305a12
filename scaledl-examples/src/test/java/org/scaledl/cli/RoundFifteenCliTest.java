package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round fifteen of hostile input and the person at the keyboard: a capacity planner's walk found activation
 * offloading filling more host memory than a GPU's host has (a GB200 layout "fitting" with 428 GiB a GPU in a Grace
 * CPU's 480 GB shared by two GPUs), no way to search the one ZeRO stage a cluster's software runs, {@code scaling}
 * refusing {@code --global-batch} as an unknown option where the documentation said it takes every option of
 * {@code predict}, a network's bandwidth said per node only (a planner typed a GPU's), and nothing saying how expert
 * groups of 64 sit in racks of 72; a hostile-input probe found {@code evaluate-megatron --out} writing over a GPU data
 * root's vTrain table and {@code fit --calibrate m.sdl --out m.sdl} over the model it reads, and a folder named
 * {@code gpu} in the working directory hiding the bundled model. Each case here fails on the code before.
 */
class RoundFifteenCliTest {
    private static final Path LLAMA_70B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-70b/config.json");

    /** Llama 3 70B at 8k on 64 GB200s under ZeRO 3, {@code batch} sequences a micro-batch. */
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    private static String[] gb200Llama70b(int batch, String... more) {
        return HostileCliTest.concat(new String[] {"predict", "--model", "gpu", "--transformer", LLAMA_70B.toString(),
            "--seq", "8192", "--batch", Integer.toString(batch), "--micro-batches", "2", "--gpus", "64", "--zero-stage",
            "3", "--device", "GB200", "--precision", "fp8"}, more);
    }

    /**
     * Left to the predictor, a Grace superchip offloads activations only as far as its host's memory holds them (the
     * fewest layers that fit this job's GPU would keep about 270 GiB a GPU there): it recomputes instead; offloading
     * given beyond the host is warned of, and offloading within it says what the host keeps.
     */
    @Test
    void offloadingIsBoundedByTheHostsMemory() {
        MainTest.Run auto = MainTest.run(gb200Llama70b(4));
        assertEquals(0, auto.code(), auto.err());
        assertFalse(auto.err().contains("offload_layers"), auto.err());
        assertTrue(auto.err().contains("recompute auto: full"), auto.err());
        MainTest.Run all = MainTest.run(gb200Llama70b(4, "--recompute", "none", "--offload-layers",
                "1000"));
        assertEquals(0, all.code(), all.err());
        assertTrue(all.err().contains("the 80 offloaded layers' activations keep") && all.err().contains("more than the 167.6 "
                + "GiB a GPU may fill") && all.err().contains("cannot run as given"), all.err());
        MainTest.Run some = MainTest.run(gb200Llama70b(2, "--recompute", "none", "--offload-layers",
                "20"));
        assertEquals(0, some.code(), some.err());
        assertTrue(some.err().contains("the 20 offloaded layers' activations keep") && !some.err().contains(
                "cannot run as given"), some.err());
    }

    /**
     * layouts --zero-stage N searches that stage only (a layout of one replica keeps stage 0; stage 3 none with a
     * pipeline), the header and JSON say it, and the topology says its network's bandwidth a GPU as well as a node.
     */
    @Test
    void layoutsSearchTheZeroStageGiven() throws Exception {
        String[] job = {"layouts", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--gpus",
            "16", "--global-batch", "64", "--device", "H100", "--precision", "bf16", "--top", "1000"};
        for (int zero : new int[] {1, 3}) {
            MainTest.Run r = MainTest.run(HostileCliTest.concat(job, "--zero-stage", Integer.toString(zero), "--json"));
            assertEquals(0, r.code(), r.err());
            JsonNode root = new ObjectMapper().readTree(r.out());
            assertEquals(zero, root.path("zero_stage").asInt());
            assertTrue(root.path("topology").asText().contains("3200 Gb/s between nodes (a node's, 400 a GPU)"),
                    root.path("topology").asText());
            assertTrue(root.path("ranked").size() > 0);
            for (JsonNode l : root.path("ranked")) {
                int replicas = l.path("data_parallel").asInt() * l.path("context").asInt();
                assertEquals(replicas == 1 ? 0 : zero, l.path("zero_stage").asInt(), l.toString());
                assertTrue(zero < 3 || l.path("pipeline").asInt() == 1 || replicas == 1, l.toString());
            }
        }
        MainTest.Run any = MainTest.run(HostileCliTest.concat(job, "--json"));
        assertTrue(new ObjectMapper().readTree(any.out()).path("zero_stage").isMissingNode());
        MainTest.Run text = MainTest.run(HostileCliTest.concat(job, "--zero-stage", "1"));
        assertTrue(text.out().contains("in bf16, ZeRO stage 1 only (one replica's layouts at 0),"), text.out());
        MainTest.Run none = MainTest.run(HostileCliTest.concat(job, "--zero-stage", "3", "--tensor", "1,2",
                "--pipeline", "2"));
        assertTrue(none.code() != 0 && none.err().contains("ZeRO stage 3, which has no layout with a pipeline"),
                none.err());
        MainTest.Run onlyOne = MainTest.run(HostileCliTest.concat(job, "--zero-stage", "3", "--pipeline", "2"));
        assertEquals(0, onlyOne.code(), onlyOne.err());
        assertTrue(onlyOne.err().contains("no layout of ZeRO stage 3 is left"), onlyOne.err());
        MainTest.Run bad = MainTest.run(HostileCliTest.concat(job, "--zero-stage", "4"));
        assertTrue(bad.code() != 0 && bad.err().contains("--zero-stage must be 0, 1, 2 or 3, got 4"), bad.err());
    }

    /** scaling refuses --global-batch saying why (it sweeps weak scaling) and what to run instead. */
    @Test
    void scalingSaysWhyItTakesNoGlobalBatch() {
        MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--global-batch", "64", "--device", "H100", "--gpus", "8,16");
        assertEquals(Main.USAGE, r.code(), r.err());
        assertTrue(r.err().contains("weak scaling") && r.err().contains("run layouts at each GPU count"), r.err());
    }

    /**
     * Expert-parallel groups that do not tile the NVLink domains of a job larger than one are said to be predicted
     * as if placed whole in a domain; a job inside one domain is not.
     */
    @Test
    void expertGroupsStraddlingRacksAreSaid() {
        Path moe = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers/qwen3-30b-a3b");
        java.util.function.IntFunction<MainTest.Run> on = gpus -> MainTest.run("predict", "--model", "gpu",
                "--transformer", moe.toString(), "--seq", "4096", "--batch", "1", "--gpus", Integer.toString(gpus),
                "--expert", "64", "--device", "GB200", "--precision", "bf16", "--gpus-per-node", "4",
                "--nvlink-domain", "72");
        MainTest.Run racks = on.apply(128);
        assertEquals(0, racks.code(), racks.err());
        assertTrue(racks.err().contains("expert-parallel groups of 64 GPUs do not tile NVLink domains of 72")
                && racks.err().contains("64 GPUs of each rack"), racks.err());
        MainTest.Run one = on.apply(64);
        assertEquals(0, one.code(), one.err());
        assertFalse(one.err().contains("do not tile"), one.err());
    }

    /**
     * An output inside a GPU data root's folders, or the model a calibration reads, is refused before anything is
     * read or written.
     */
    @Test
    void outputsDoNotOverwriteTheirInputs(@TempDir Path dir) throws Exception {
        Path table = dir.resolve("data/vtrain/ground_truth_single.csv");
        Files.createDirectories(table.getParent());
        Files.writeString(table, "a,b\n1,2\n");
        MainTest.Run r = MainTest.run("evaluate-megatron", "--data", dir.resolve("data").toString(), "--out",
                table.toString());
        assertTrue(r.code() != 0 && r.err().contains("would overwrite a file inside the folder --data names"),
                r.err());
        assertEquals("a,b\n1,2\n", Files.readString(table));
        Path model = dir.resolve("m.sdl");
        Files.writeString(model, "not read");
        MainTest.Run cal = MainTest.run("fit", "--calibrate", model.toString(), "--runs", table.toString(), "--out",
                model.toString());
        assertTrue(cal.code() != 0 && cal.err().contains("is the file --calibrate names"), cal.err());
        assertEquals("not read", Files.readString(model));
    }

    /** A model file name no file system takes is said to be too long, not missing. */
    @Test
    void aModelNameTooLongForAFileIsSaidSo() {
        MainTest.Run r = MainTest.run("inspect", "--model", "x".repeat(300) + ".sdl");
        assertEquals(Main.USAGE, r.code(), r.err());
        assertTrue(r.err().contains("its file name is 304 bytes, longer than a file system's 255"), r.err());
    }

    /** A folder named as a bundled model in the working directory does not hide it (a file of that name would). */
    @Test
    void aFolderNamedGpuDoesNotHideTheBundledModel() throws Exception {
        Path folder = Path.of("gpu");
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.exists(folder), "a gpu in the working directory");
        Files.createDirectory(folder);
        try {
            MainTest.Run r = MainTest.run("inspect", "--model", "gpu");
            assertEquals(0, r.code(), r.err());
            assertTrue(r.out().contains("gpu"), r.out());
        } finally {
            Files.delete(folder);
        }
    }

    /**
     * A named pipe no writer opens, given as a file a command reads (a model, a table), is refused naming it after
     * {@link org.scaledl.InputFiles#WRITER_WAIT_MS} instead of waiting forever (a pipe with a writer is read, through
     * the reader's cap, as before).
     */
    @Test
    void aPipeWithNoWriterIsRefused(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("f.fifo");
        org.junit.jupiter.api.Assumptions.assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0
                && Files.exists(fifo), "mkfifo");
        String f = fifo.toString();
        String[][] commands = {
            {"inspect", "--model", f},
            {"predict", "--model", "gpu", "--candidates", f},
        };
        for (String[] c : commands) {
            MainTest.Run r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                    java.time.Duration.ofSeconds(30), () -> MainTest.run(c), String.join(" ", c));
            assertTrue(r.code() != 0 && r.err().contains("a pipe no writer opened") && r.err().contains("f.fifo"),
                    String.join(" ", c) + ": " + r.err());
        }
    }

    /**
     * An all-reduce row faster than its links move the message even at twice their nominal bandwidth (a time in
     * seconds) is refused at its line; it fitted a network efficiency of Infinity without a word.
     */
    @Test
    void anAllReduceFasterThanItsLinksIsRefused(@TempDir Path dir) throws Exception {
        java.util.List<String> lines = new java.util.ArrayList<>(Files.readAllLines(HostileCliTest.repo().resolve(
                "datasets/deepbench/allreduce.csv")));
        assertTrue(lines.get(6).contains(",1.33,"), lines.get(6));
        lines.set(6, lines.get(6).replace(",1.33,", ",0.00133,"));
        Path slip = dir.resolve("slip.csv");
        Files.write(slip, lines);
        MainTest.Run r = MainTest.run("evaluate-comm", "--data", slip.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("slip.csv:7:") && r.err().contains("a time in seconds?"), r.err());
    }

    /** A vTrain table with a copied row is refused at its line (evaluate-megatron counted it twice, silently). */
    @Test
    void aCopiedVTrainRowIsRefused(@TempDir Path dir) throws Exception {
        Path table = dir.resolve("data/vtrain/ground_truth_single.csv");
        Files.createDirectories(table.getParent());
        java.util.List<String> lines = new java.util.ArrayList<>(Files.readAllLines(HostileCliTest.repo().resolve(
                "datasets/gpu/vtrain/ground_truth_single.csv")).subList(0, 6));
        lines.add(lines.get(2));
        Files.write(table, lines);
        org.scaledl.InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> org.scaledl.io.GpuData.readVTrain(table,
                        org.scaledl.io.DeviceCatalog.bundled().require("A100 80GB")));
        assertEquals(7, e.line(), e.getMessage());
        assertTrue(e.getMessage().contains("repeats line 3"), e.getMessage());
    }

    /**
     * evaluate --test naming a copy of --train's runs in another folder is refused: nothing in it is held out; so is
     * evaluate-machines --b naming a copy of --a's machine.
     */
    @Test
    void aCopiedTestSetIsNotHeldOut(@TempDir Path dir) throws Exception {
        Path from = HostileCliTest.repo().resolve("datasets/cpu-ddp");
        Path copy = dir.resolve("copy");
        try (java.util.stream.Stream<Path> files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path to = copy.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(f, to);
                }
            }
        }
        MainTest.Run r = MainTest.run("evaluate", "--train", from.toString(), "--test", copy.toString());
        assertTrue(r.code() != 0 && r.err().contains("is a run of --train") && r.err().contains("held out they are "
                + "not"), r.err());
        MainTest.Run m = MainTest.run("evaluate-machines", "--a", from.toString(), "--b", copy.toString(), "--k", "0",
                "--repeats", "1");
        assertTrue(m.code() != 0 && m.err().contains("is a run of --a") && m.err().contains("adapted to itself"),
                m.err());
    }

    /**
     * A name from a file (a model file's path, a configuration's folder) reaches standard output with its control
     * characters escaped, as errors give them: a newline cannot forge a line, an escape sequence cannot colour the
     * terminal.
     */
    @Test
    void namesFromFilesAreEscapedOnStandardOutput(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("cfg\u001b[31mred/config.json");
        Files.createDirectories(cfg.getParent());
        Files.copy(LLAMA_8B, cfg);
        MainTest.Run p = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.getParent().toString(),
                "--seq", "128", "--batch", "1", "--device", "H100");
        assertEquals(0, p.code(), p.err());
        assertFalse(p.out().contains("\u001b"), p.out());
        assertTrue(p.out().contains("cfg\\u001b[31mred"), p.out());
        MainTest.Run l = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.getParent().toString(),
                "--seq", "128", "--gpus", "8", "--global-batch", "8", "--device", "H100", "--top", "1");
        assertEquals(0, l.code(), l.err());
        assertFalse(l.out().contains("\u001b"), l.out());
        MainTest.Run sc = MainTest.run("scaling", "--model", "gpu", "--transformer", cfg.getParent().toString(),
                "--seq", "128", "--batch", "1", "--device", "H100", "--gpus", "1,2", "--out",
                dir.resolve("s.svg").toString());
        assertEquals(0, sc.code(), sc.err());
        assertFalse(sc.out().contains("\u001b"), sc.out());
        // a bidirectional override in a folder's name: the printed command spells it, as bash reads $'...'
        Path rlo = dir.resolve("a\u202eb/config.json");
        Files.createDirectories(rlo.getParent());
        Files.copy(LLAMA_8B, rlo);
        MainTest.Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", rlo.getParent().toString(),
                "--seq", "128", "--gpus", "8", "--global-batch", "8", "--device", "H100", "--top", "1");
        assertEquals(0, r.code(), r.err());
        assertFalse(r.out().contains("\u202e"), r.out());
        assertTrue(r.out().contains("a\\u202eb"), r.out());
        Path model = dir.resolve("nl\nscaledl: note: forged.sdl");
        try (java.io.InputStream in = org.scaledl.models.BundledModels.class.getResourceAsStream(
                "/org/scaledl/models/cpu-zoo.sdl")) {
            Files.copy(in, model);
        }
        MainTest.Run i = MainTest.run("inspect", "--model", model.toString());
        assertEquals(0, i.code(), i.err());
        assertFalse(i.out().lines().anyMatch(x -> x.startsWith("scaledl: note: forged")), i.out());
    }

    /**
     * Every command's JSON writes an undefined figure as null, as the documentation says (evaluate-clusters wrote an
     * empty split's MRE as the string "NaN", evaluate-comm an efficiency as "Infinity").
     */
    @Test
    void jsonWritesUndefinedFiguresAsNull() throws Exception {
        ObjectMapper om = new ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode root = om.createObjectNode();
        root.put("mre", Double.NaN).put("efficiency", Double.POSITIVE_INFINITY).put("runs", 3).put("ms", 1.5);
        root.putArray("splits").add(Double.NaN).addObject().put("bias", Double.NEGATIVE_INFINITY).put("p90", 0.2);
        JsonNode back = om.readTree(Reports.pretty(root));
        assertTrue(back.path("mre").isNull() && back.path("efficiency").isNull(), back.toString());
        assertEquals(3, back.path("runs").asInt());
        assertEquals(1.5, back.path("ms").asDouble());
        assertTrue(back.path("splits").get(0).isNull() && back.path("splits").get(1).path("bias").isNull());
        assertEquals(0.2, back.path("splits").get(1).path("p90").asDouble());
    }

    /** A comma-separated list option given twice is refused as any option given twice is (scaling merged them). */
    @Test
    void aListOptionGivenTwiceIsRefused() {
        MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--device", "H100", "--gpus", "2,4", "--gpus", "8");
        assertEquals(Main.USAGE, r.code(), r.err());
        assertTrue(r.err().contains("'--gpus' should be specified only once") && r.err().contains("2,4 and 8"),
                r.err());
    }

    /**
     * evaluate's two ways of splitting are named in words where one is missing, half given, or given twice (picocli's
     * group syntax was printed, twice over).
     */
    @Test
    void evaluatesSplitsAreNamedInWords() {
        String data = HostileCliTest.repo().resolve("datasets/cpu-ddp").toString();
        MainTest.Run twice = MainTest.run("evaluate", "--data", data, "--cv", "family", "--folds", "2", "--folds",
                "3");
        MainTest.Run half = MainTest.run("evaluate", "--train", data);
        MainTest.Run none = MainTest.run("evaluate");
        for (MainTest.Run r : java.util.List.of(twice, half, none)) {
            assertEquals(Main.USAGE, r.code(), r.err());
            assertTrue(r.err().contains("--train and --test, or --data and --cv (optional --folds)")
                    && !r.err().contains("<") && !r.err().contains("Error:"), r.err());
        }
        assertTrue(half.err().contains("missing --test"), half.err());
        MainTest.Run both = MainTest.run("evaluate", "--train", data, "--test", data, "--data", data, "--cv",
                "family");
        assertEquals(Main.USAGE, both.code(), both.err());
        assertTrue(both.err().contains("options that exclude each other") && !both.err().contains("<"), both.err());
        // plan's groups hold options, not groups: named as one of them
        for (MainTest.Run r : java.util.List.of(MainTest.run("plan"), MainTest.run("plan", "--data", data, "--runs",
                "3", "--runs", "4"))) {
            assertEquals(Main.USAGE, r.code(), r.err());
            assertTrue(r.err().contains("one of --data") && !r.err().contains("split") && !r.err().contains("<"),
                    r.err());
        }
    }

    /**
     * A LoRA job on a model whose fit had no LoRA run is warned of (unseen_lora) and its interval widened as an unseen
     * precision's is; a model calibrated on a LoRA run knows LoRA, and warns of it no more.
     */
    @Test
    void loraIsOutsideTheBundledModelsRuns(@TempDir Path dir) throws Exception {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--batch",
            "1", "--gpus", "8", "--device", "H100", "--precision", "bf16", "--json"};
        JsonNode full = new ObjectMapper().readTree(MainTest.run(job).out());
        MainTest.Run lora = MainTest.run(HostileCliTest.concat(job, "--lora-rank", "16"));
        assertEquals(0, lora.code(), lora.err());
        JsonNode l = new ObjectMapper().readTree(lora.out());
        assertTrue(l.path("warnings").toString().contains("unseen_lora"), l.path("warnings").toString());
        assertFalse(full.path("warnings").toString().contains("unseen_lora"));
        double wideFull = full.path("high_ms").asDouble() / full.path("low_ms").asDouble();
        double wideLora = l.path("high_ms").asDouble() / l.path("low_ms").asDouble();
        assertEquals(Math.exp(2 * 0.15 * 0.5), wideLora / wideFull, 1e-6, "half a unit of distance each side");
        Path cfg = dir.resolve("m/config.json");
        Files.createDirectories(cfg.getParent());
        Files.copy(LLAMA_8B, cfg);
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,lora_rank,measured_ms\n"
                + "m/config.json,4096,1,8,H100,bf16,16," + l.path("ms").asDouble() * 1.05 + "\n");
        Path model = dir.resolve("cal.sdl");
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                model.toString());
        assertEquals(0, cal.code(), cal.err());
        job[2] = model.toString();
        MainTest.Run after = MainTest.run(HostileCliTest.concat(job, "--lora-rank", "16"));
        assertEquals(0, after.code(), after.err());
        assertFalse(after.out().contains("unseen_lora"), after.out());
    }

    /**
     * predict --train-tokens gives the iterations, days (with the interval) and GPU-hours a number of tokens takes at
     * the predicted step, by the arithmetic written out here; refused outside one transformer's training job.
     */
    @Test
    void trainTokensGiveTheDaysAndGpuHours() throws Exception {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--batch",
            "2", "--micro-batches", "4", "--gpus", "16", "--tensor", "2", "--device", "H100", "--precision", "bf16"};
        MainTest.Run r = MainTest.run(HostileCliTest.concat(job, "--train-tokens", "1e12", "--json"));
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        JsonNode t = root.path("train");
        double perIteration = 2.0 * 4 * 8 * 4096;   // sequences a micro-batch x micro-batches x replicas x tokens
        assertEquals(perIteration, t.path("tokens_per_iteration").asDouble());
        double iterations = Math.ceil(1e12 / perIteration);
        assertEquals(iterations, t.path("iterations").asDouble());
        assertEquals(iterations * root.path("ms").asDouble() / 86_400e3, t.path("days").asDouble(), 1e-9);
        assertEquals(iterations * root.path("high_ms").asDouble() / 86_400e3, t.path("high_days").asDouble(), 1e-9);
        assertEquals(t.path("days").asDouble() * 24 * 16, t.path("gpu_hours").asDouble(), 1e-6);
        MainTest.Run text = MainTest.run(HostileCliTest.concat(job, "--train-tokens", "1e12"));
        assertTrue(text.out().contains("1,000,000,000,000 tokens: " + String.format(java.util.Locale.ROOT, "%,.0f",
                iterations) + " iterations of 262,144 tokens"), text.out());
        assertTrue(MainTest.run(HostileCliTest.concat(job, "--phase", "infer", "--train-tokens", "1e9")).code() != 0);
        assertTrue(MainTest.run(HostileCliTest.concat(job, "--train-tokens", "0")).err().contains("from 1 to 1e18"));
        assertTrue(MainTest.run(HostileCliTest.concat(job, "--train-tokens", "1.5")).err().contains("whole number"));
    }
}
