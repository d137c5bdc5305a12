package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.model.file.Envelope;

/**
 * Round seventeen of hostile input and the person at the keyboard: what the stop before left open and what this
 * stop's probes found. Each case here fails on the code before.
 */
class RoundSeventeenCliTest {
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    /**
     * A copy of a model file at {@code to} with its execution model's coefficients ({@code megatron}) edited, the
     * checksum recomputed (a file written by an older release, or edited by hand).
     */
    static Path editedExecution(Path model, Path to, java.util.function.Consumer<ObjectNode> edit) throws Exception {
        Envelope e = Envelope.read(Files.readAllBytes(model), model.toString());
        ObjectNode body = e.body().deepCopy();
        edit.accept((ObjectNode) body.path("layer_cost").path("megatron"));
        Envelope.write(e.format(), e.version(), body, to);
        return to;
    }

    /** {@code runs --from-log} on a log of {@code text} written as {@code dir/name.log}, its table {@code name.csv}. */
    static MainTest.Run fromLog(Path dir, String name, String text) throws Exception {
        Path log = dir.resolve(name + ".log");
        Files.writeString(log, text);
        return MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve(name + ".csv").toString());
    }

    /**
     * A model calibrated on H100 runs of Llama 3 8B (three of them), saved in {@code dir} beside their table and the
     * model's configuration ({@code m/config.json}).
     */
    static Path calibratedOnH100(Path dir) throws Exception {
        Path to = dir.resolve("m/config.json");
        Files.createDirectories(to.getParent());
        Files.copy(LLAMA_8B, to);
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "transformer,seq,batch,gpus,device,precision,measured_ms\n"
                + "m/config.json,4096,1,8,H100,bf16,1000\nm/config.json,4096,2,8,H100,bf16,1900\n"
                + "m/config.json,4096,4,8,H100,bf16,3700\n");
        Path cal = dir.resolve("mine.sdl");
        MainTest.Run fit = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                cal.toString());
        assertEquals(0, fit.code(), fit.err());
        return cal;
    }

    /**
     * {@code layouts --json} and {@code scaling --json} say what every layout's or point's prediction says alike in a
     * {@code warnings} array (kind and message), as stderr does: a model calibrated on other GPUs' runs said so on
     * stderr only, and a program reading the JSON never learnt its predictions had moved.
     */
    @Test
    void searchesAndSweepsSayInTheirJsonWhatEveryPredictionSays(@TempDir Path dir) throws Exception {
        Path cal = calibratedOnH100(dir);
        ObjectMapper om = new ObjectMapper();
        for (String device : new String[] {"B200", "H100"}) {
            MainTest.Run layouts = MainTest.run("layouts", "--model", cal.toString(), "--transformer",
                    LLAMA_8B.toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "16", "--device", device,
                    "--precision", "bf16", "--top", "3", "--json");
            assertEquals(0, layouts.code(), layouts.err());
            JsonNode l = om.readTree(layouts.out());
            assertTrue(l.path("warnings").isArray(), layouts.out());
            MainTest.Run scaling = MainTest.run("scaling", "--model", cal.toString(), "--transformer",
                    LLAMA_8B.toString(), "--seq", "4096", "--batch", "1", "--device", device, "--precision", "bf16",
                    "--gpus", "8,16", "--out", dir.resolve("s.svg").toString(), "--json");
            assertEquals(0, scaling.code(), scaling.err());
            JsonNode s = om.readTree(scaling.out());
            assertTrue(s.path("warnings").isArray(), scaling.out());
            for (JsonNode root : new JsonNode[] {l, s}) {
                boolean elsewhere = false;
                for (JsonNode w : root.path("warnings")) {
                    assertTrue(w.path("kind").isTextual() && w.path("message").isTextual(), w.toString());
                    elsewhere |= w.path("kind").asText().equals("calibrated_elsewhere")
                            && w.path("message").asText().contains("calibrated on runs of NVIDIA H100 80GB HBM3 only");
                }
                assertEquals(device.equals("B200"), elsewhere, root.path("warnings").toString());
            }
            // and stderr says it once, as before
            assertEquals(device.equals("B200") ? 1 : 0, layouts.err().lines()
                    .filter(x -> x.contains("was calibrated on runs of")).count(), layouts.err());
        }
    }

    /**
     * A model file whose execution terms lack some (a file written before they existed, or edited, its checksum
     * recomputed) loads with each one's prior, as before, but now says which: it predicted with priors where the
     * file's fit had learnt something else, without a word.
     */
    @Test
    void aModelFileLackingExecutionTermsSaysWhich(@TempDir Path dir) throws Exception {
        Path cal = calibratedOnH100(dir);
        Path edited = editedExecution(cal, dir.resolve("edited.sdl"), megatron -> {
            assertTrue(megatron.has("tensor_comm") && megatron.has("dense"), megatron.toString());
            megatron.remove("tensor_comm");
            megatron.remove("dense");
        });
        String[] job = {"predict", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--batch", "1", "--gpus",
            "8", "--tensor", "2", "--device", "H100", "--precision", "bf16", "--model"};
        MainTest.Run r = MainTest.run(HostileCliTest.concat(job, edited.toString()));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("the model's execution terms lack dense, tensor_comm"), r.err());
        MainTest.Run whole = MainTest.run(HostileCliTest.concat(job, cal.toString()));
        assertEquals(0, whole.code(), whole.err());
        assertFalse(whole.err().contains("execution terms lack"), whole.err());
        MainTest.Run bundled = MainTest.run(HostileCliTest.concat(job, "gpu"));
        assertFalse(bundled.err().contains("execution terms lack"), bundled.err());
    }

    /**
     * A training log's job maps to a runs table's cells one way ({@code TrainingLogs.Job.cells()}): the cells
     * {@code runs --from-log} writes, in its columns' order, and what {@code Run.sample} reads back as a table's row
     * is read (it built the workload a second way, beside the table's, held equal only by a test).
     */
    @Test
    void aLogsJobIsItsRunsTableCells(@TempDir Path dir) throws Exception {
        Path log = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs/nemo-llama3-8b.log");
        org.scaledl.io.TrainingLogs.Run run = org.scaledl.io.TrainingLogs.read(log, 0).get(0);
        java.util.Map<String, String> cells = run.job().cells();
        assertEquals(java.util.List.of("seq", "batch", "micro_batches", "world_size", "tensor", "pipeline", "context",
                "virtual_stages", "uneven_pipeline", "expert", "expert_tensor", "zero_stage", "gpus_per_node",
                "precision", "recompute", "recompute_layers", "recompute_modules", "sequence_parallel", "grad_reduce", "grad_dtype",
                "fp8_param_gather", "moe_a2a_overlap", "moe_dispatcher", "cuda_graphs"),
                java.util.List.copyOf(cells.keySet()));
        Path table = dir.resolve("runs.csv");
        MainTest.Run r = MainTest.run("-q", "runs", "--from-log", log.toString(), "--out", table.toString());
        assertEquals(0, r.code(), r.err());
        org.scaledl.io.CsvTable t = org.scaledl.io.CsvTable.read(table);
        cells.forEach((column, cell) -> assertEquals(cell, t.opt(0, column).orElse(""), column));
        assertEquals("fp8", cells.get("precision"));
        assertEquals("core_attn", cells.get("recompute_modules"));
        assertEquals("8", cells.get("gpus_per_node"));
        org.scaledl.workload.Workload w = run.sample(org.scaledl.io.DeviceCatalog.bundled().require("H100"))
                .workload();
        assertEquals(run.job().context(), w.parallelism().context());
        assertEquals(8, w.topology().orElseThrow().gpusPerNode());
        assertEquals(run.id(), w.tag("id").orElseThrow());
    }

    /**
     * A log's arguments that describe a model its built configuration would not hold are refused (a sliding window,
     * attention sinks), and what a job holds but the runs table's row would not (activation offloading, packed
     * sequences) is warned of: GPT-OSS's log was built as a full-attention Mixtral and predicted a quarter faster, an
     * offloading or packed run predicted as another, without a word.
     */
    @Test
    void aLogsArgumentsItsJobWouldNotHoldAreSaid(@TempDir Path dir) throws Exception {
        Path logs = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs");
        String megatron = Files.readString(logs.resolve("megatron-llama3-8b.log"));
        String hidden = "  hidden_size ..................................... 4096\n";
        assertTrue(megatron.contains(hidden));
        String[][] refused = {
            {"window_size ..................................... (128, 0)", "sliding-window attention (window_size"},
            {"softmax_type .................................... learnable", "attention softmax is learnable"},
        };
        for (String[] c : refused) {
            Path log = dir.resolve("refused.log");
            Files.writeString(log, megatron.replace(hidden, hidden + "  " + c[0] + "\n"));
            MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve("r.csv")
                    .toString());
            assertEquals(Main.BAD_INPUT, r.code(), r.err());
            assertTrue(r.err().contains(c[1]) && r.err().contains("give its config.json (--transformer)")
                    && r.err().contains("refused.log:"), r.err());
            // the model given, the run is read; a sliding window stated against a configuration with none is
            // another model (refused, as another size is), one with windowed layers is taken as stating them
            MainTest.Run given = MainTest.run("-q", "runs", "--from-log", log.toString(), "--transformer",
                    LLAMA_8B.toString(), "--out", dir.resolve("given.csv").toString());
            boolean window = c[0].startsWith("window_size");
            assertEquals(window ? Main.BAD_INPUT : 0, given.code(), given.err());
            assertEquals(window, given.err().contains("a log with a different model than the one given is refused: "
                    + "window_size is (128, 0) in the log (sliding-window attention), none in the configuration"),
                    given.err());
        }
        Path windowed = dir.resolve("mistral/config.json");
        Files.createDirectories(windowed.getParent());
        Files.writeString(windowed, Files.readString(LLAMA_8B).replace("\"tie_word_embeddings\": false",
                "\"tie_word_embeddings\": false, \"sliding_window\": 4096").replace("\"model_type\": \"llama\"",
                "\"model_type\": \"mistral\""));
        Path windowLog = dir.resolve("window.log");
        Files.writeString(windowLog, megatron.replace(hidden, hidden
                + "  window_size ..................................... (4096, 0)\n"));
        MainTest.Run mistral = MainTest.run("-q", "runs", "--from-log", windowLog.toString(), "--transformer",
                windowed.toString(), "--out", dir.resolve("mistral.csv").toString());
        assertEquals(0, mistral.code(), mistral.err());
        MainTest.Run plain = fromLog(dir, "none", megatron.replace(hidden, hidden
                + "  window_size ..................................... None\n"
                + "  softmax_type .................................... vanilla\n"
                + "  cpu_offloading .................................. False\n"));
        assertEquals(0, plain.code(), plain.err());
        assertFalse(plain.err().contains("warning"), plain.err());
        MainTest.Run off = fromLog(dir, "offload", megatron.replace(hidden, hidden
                + "  cpu_offloading .................................. True\n"
                + "  cpu_offloading_num_layers ....................... 12\n"));
        assertEquals(0, off.code(), off.err());
        assertTrue(off.err().contains("activation offloading (cpu_offloading, 12 layers) is not read from a log"),
                off.err());
        String nemo = Files.readString(logs.resolve("nemo-llama3-8b.log"));
        assertTrue(nemo.contains("seq_length=8192, "));
        MainTest.Run p = fromLog(dir, "packed", nemo.replace("seq_length=8192, ", "seq_length=8192, "
                + "packed_sequence_specs=PackedSequenceSpecs(packed_sequence_size=8192, pad_cu_seqlens=False), "));
        assertEquals(0, p.code(), p.err());
        assertTrue(p.err().contains("packed sequences (packed_sequence_size 8192) are not read from a log"), p.err());
        // NeMo's default specs (-1) pack nothing; weights offloaded alone are said as such
        MainTest.Run unpacked = fromLog(dir, "unpacked", nemo.replace("seq_length=8192, ", "seq_length=8192, "
                + "packed_sequence_specs=PackedSequenceSpecs(packed_sequence_size=-1, pad_cu_seqlens=False), "));
        assertEquals(0, unpacked.code(), unpacked.err());
        assertFalse(unpacked.err().contains("packed sequences"), unpacked.err());
        MainTest.Run weights = fromLog(dir, "weights", megatron.replace(hidden, hidden
                + "  cpu_offloading .................................. True\n"
                + "  cpu_offloading_activations ...................... False\n"));
        assertTrue(weights.err().contains("weight offloading (cpu_offloading) is not read from a log"), weights.err());
    }

    /**
     * NeMo's dataclass dump prints a window as a tuple, {@code window_size=(128, 0)}: refused as the argument block's
     * form is (its value was dropped, a full-attention model written); Megatron's {@code (-1, -1)} is its unlimited
     * window, full attention, and is read.
     */
    @Test
    void aWindowIsReadInEachFormAndAnUnlimitedOneIsNone(@TempDir Path dir) throws Exception {
        Path logs = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs");
        String nemo = Files.readString(logs.resolve("nemo-llama3-8b.log"));
        Path tuple = dir.resolve("tuple.log");
        Files.writeString(tuple, nemo.replace("seq_length=8192, ", "seq_length=8192, window_size=(128, 0), "));
        MainTest.Run r = MainTest.run("runs", "--from-log", tuple.toString(), "--out", dir.resolve("t.csv").toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("sliding-window attention (window_size (128, 0))"), r.err());
        String megatron = Files.readString(logs.resolve("megatron-llama3-8b.log"));
        String hidden = "  hidden_size ..................................... 4096\n";
        Path unlimited = dir.resolve("unlimited.log");
        Files.writeString(unlimited, megatron.replace(hidden, hidden
                + "  window_size ..................................... (-1, -1)\n"));
        MainTest.Run u = MainTest.run("-q", "runs", "--from-log", unlimited.toString(), "--out", dir.resolve("u.csv")
                .toString());
        assertEquals(0, u.code(), u.err());
    }

    /**
     * {@code scaling --json}'s warnings hold what every point says whatever share of each it concerns (an unseen
     * precision was said of no point where its share differed between them) and what the sweep says of some points
     * (beyond the fitted GPU counts, out of memory), which were on stderr only.
     */
    @Test
    void aSweepsJsonSaysWhatItsPointsShare(@TempDir Path dir) throws Exception {
        MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--device", "H100", "--precision", "fp8-block", "--gpus", "2,4,8,16,4096",
                "--batches", "1,2", "--out", dir.resolve("s.svg").toString(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        java.util.Set<String> kinds = new java.util.HashSet<>();
        root.path("warnings").forEach(w -> kinds.add(w.path("kind").asText()));
        assertTrue(kinds.contains("unseen_precision") && kinds.contains("outside_world_size_range"), r.out());
        assertTrue(r.err().contains("(unseen_precision)"), r.err());
    }
}
