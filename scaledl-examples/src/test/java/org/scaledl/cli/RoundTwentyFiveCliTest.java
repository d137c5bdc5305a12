package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-five, hostile input and the person at the keyboard: a log cut or wrapped at a fixed width, or timed in
 * another unit, is refused where it read a wrong time or dropped steps; a LoRA fine-tuning's log says that its
 * adapters are not read; a given configuration's head size and norm are compared with the log's; a trainer's 16-bit
 * precision without master weights, or one that contradicts the model's flag, is refused; another framework's name
 * for a count in a candidate table is refused, not read as absent; {@code --gpus-per-node} against the log's trainer
 * is said; a ZeRO-3 job paced by its collectives says so.
 */
class RoundTwentyFiveCliTest {
    private static final Path LOGS = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs");
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");

    /** Llama 3 8B's configuration copied to {@code dir/m/config.json}, the cell a table beside it names. */
    static void llamaBeside(Path dir) throws java.io.IOException {
        Files.createDirectory(dir.resolve("m"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("m/config.json"));
    }

    private static MainTest.Run runs(Path log, Path dir, String... more) {
        List<String> args = new ArrayList<>(List.of("runs", "--from-log", log.toString(), "--out",
                dir.resolve("o.csv").toString()));
        args.addAll(List.of(more));
        return MainTest.run(args.toArray(String[]::new));
    }

    /** The lines of a test log, each cut into pieces of {@code width} characters ({@code fold -w}), or cut there. */
    private static Path atWidth(Path dir, String log, int width, boolean wrap) throws Exception {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(LOGS.resolve(log), StandardCharsets.UTF_8)) {
            if (line.length() <= width) {
                out.add(line);
                continue;
            }
            for (int i = 0; i < line.length() && (wrap || i == 0); i += width) {
                out.add(line.substring(i, Math.min(line.length(), i + width)));
            }
        }
        Path p = dir.resolve((wrap ? "folded-" : "cut-") + log);
        Files.write(p, out, StandardCharsets.UTF_8);
        return p;
    }

    @Test
    void aLogCutOrWrappedAtAFixedWidthIsRefused(@TempDir Path dir) throws Exception {
        // at 122 characters every iteration line ends inside its time: 5050.5 ms was read as 505.0
        for (boolean wrap : new boolean[] {true, false}) {
            MainTest.Run r = runs(atWidth(dir, "megatron-llama3-8b.log", 122, wrap), dir);
            assertEquals(Main.BAD_INPUT, r.code(), r.err());
            assertTrue(r.err().contains("at the log's widest, 122 characters") && r.err().contains("cut or wrapped"),
                    r.err());
        }
        // the whole log is read as before
        MainTest.Run whole = runs(LOGS.resolve("megatron-llama3-8b.log"), dir);
        assertEquals(0, whole.code(), whole.err());
    }

    @Test
    void aStepLineCutInsideOrBeforeItsTimeIsRefused(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        int at = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("iteration 6/11")) {
                at = i;
            }
        }
        String six = lines.get(at);
        // cut before its value: the step was dropped without a word
        lines.set(at, six.substring(0, six.indexOf("train_step_timing in s:") + "train_step_timing in s:".length()));
        Path before = dir.resolve("before.log");
        Files.write(before, lines);
        MainTest.Run r = runs(before, dir);
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("before.log:" + (at + 1) + ": an iteration line cut before its time"), r.err());
        // cut inside it, at its point
        lines.set(at, six.replace("train_step_timing in s: 2.420", "train_step_timing in s: 2."));
        Files.write(before, lines);
        r = runs(before, dir);
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("cut inside its time '2.'"), r.err());
    }

    @Test
    void aStepLineInAnotherUnitIsRefusedAtItsLine(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        int at = -1;
        for (int i = 0; i < lines.size() && at < 0; i++) {
            if (lines.get(i).contains("iteration 9/11")) {
                at = i;
            }
        }
        // the later half timed in ms: read as the s half alone, it gave a median of half the steps
        for (int i = at; i < lines.size(); i++) {
            lines.set(i, lines.get(i).replace("train_step_timing in s: 2.4", "train_step_timing in ms: 24"));
        }
        Path log = dir.resolve("ms.log");
        Files.write(log, lines);
        MainTest.Run r = runs(log, dir);
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("ms.log:" + (at + 1) + ": a step line timed in 'ms'"), r.err());
    }

    @Test
    void aLoraLogSaysItsAdaptersAreNotRead(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        lines.add(4, "[NeMo I 2025-03-02 09:00:07 nemo_logging:393] PEFT: LoRA(target_modules=['linear_qkv', "
                + "'linear_proj'], dim=32, alpha=32, dropout=0.0)");
        Path log = dir.resolve("lora.log");
        Files.write(log, lines);
        MainTest.Run r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("lora.log:5: LoRA fine-tuning (rank 32) is not read from a log")
                && r.err().contains("give the runs table's lora_rank 32"), r.err());
        // NeMo 1's scheme, without its rank
        lines.set(4, "  peft_scheme: lora");
        Files.write(log, lines);
        r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("LoRA fine-tuning is not read from a log"), r.err());
        // the plain log says nothing of it
        assertFalse(runs(LOGS.resolve("nemo-llama3-8b.log"), dir).err().contains("LoRA"));
    }

    @Test
    void aGivenConfigurationsHeadSizeAndNormAreCompared(@TempDir Path dir) throws Exception {
        String config = Files.readString(LLAMA.resolve("config.json"));
        Path heads = dir.resolve("heads");
        Files.createDirectory(heads);
        Files.writeString(heads.resolve("config.json"), config.replaceFirst("\\{", "{\"head_dim\": 64, "));
        MainTest.Run r = runs(LOGS.resolve("megatron-llama3-8b.log"), dir, "--transformer", heads.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("kv_channels is 128 in the log, 64 in the configuration (head_dim)"), r.err());
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        lines.replaceAll(l -> l.replaceAll("(normalization \\.+ )RMSNorm", "$1LayerNorm"));
        Path log = dir.resolve("ln.log");
        Files.write(log, lines);
        assertTrue(lines.stream().anyMatch(l -> l.contains("LayerNorm")), "the fixture states its norm");
        r = runs(log, dir, "--transformer", LLAMA.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("normalization is LayerNorm in the log, RMSNorm in the configuration"), r.err());
        // the configuration the log ran is accepted
        assertEquals(0, runs(LOGS.resolve("megatron-llama3-8b.log"), dir, "--transformer", LLAMA.toString()).code());
    }

    @Test
    void aTrainersSixteenBitPrecisionIsReadOrRefused(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        int trainer = lines.indexOf("trainer:");
        lines.add(trainer + 1, "  precision: bf16-true");
        Path log = dir.resolve("p.log");
        Files.write(log, lines);
        MainTest.Run r = runs(log, dir);
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("precision 'bf16-true'") && r.err().contains("is not modelled"), r.err());
        // the model's bf16 True beside a trainer's 16-mixed: one of the two is wrong
        lines.set(trainer + 1, "  precision: 16-mixed");
        Files.write(log, lines);
        r = runs(log, dir);
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("the trainer's precision '16-mixed' (line " + (trainer + 2) + ") is not the "
                + "model's bf16 True"), r.err());
        lines.set(trainer + 1, "  precision: bf16-mixed");
        Files.write(log, lines);
        assertEquals(0, runs(log, dir).code());
    }

    @Test
    void theWorldSizeSummarysDegreesAreRead(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        assertTrue(lines.get(1).contains("tensor-model-parallel size: 4"), "the fixture's summary");
        // a summary that says another degree than the argument block: the block is read, and the summary said
        lines.set(1, lines.get(1).replace("tensor-model-parallel size: 4", "tensor-model-parallel size: 2"));
        Path log = dir.resolve("tp.log");
        Files.write(log, lines);
        MainTest.Run r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("tp.log:2: tensor_model_parallel_size=2 in a message is not read: the run's "
                + "arguments at line 47 say 4"), r.err());
        // a start that failed after its summary, relaunched with tensor and pipeline swapped: the later summary
        List<String> relaunched = new ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        relaunched.add(1, relaunched.get(1).replace("tensor-model-parallel size: 4", "tensor-model-parallel size: 2")
                .replace("pipeline-model-parallel size: 2", "pipeline-model-parallel size: 4"));
        relaunched.add(2, "AssertionError: a check after the summary failed");
        Files.write(log, relaunched);
        r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        assertFalse(r.err().contains("is not read"), r.err());
        // an argument block without the degrees takes the summary's
        List<String> without = new ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        without.removeIf(l -> l.matches("\\s*(tensor|pipeline)_model_parallel_size \\.+ \\d+"));
        Files.write(log, without);
        r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        List<String> row = Files.readAllLines(dir.resolve("o.csv"));
        List<String> header = List.of(row.get(0).split(",", -1));
        String[] cells = row.get(1).split(",", -1);
        assertEquals(List.of("4", "2"), List.of(cells[header.indexOf("tensor")], cells[header.indexOf("pipeline")]));
    }

    @Test
    void linesThatNameTheKeysAreNoIterationLines(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        lines.add("[NeMo I 2025-03-02 09:01:00 nemo_logging:393] final metrics: {'reduced_train_loss': 11.03, "
                + "'train_step_timing in s': 2.43, 'lr': 1.5e-06}");
        lines.add("[NeMo I 2025-03-02 09:01:00 nemo_logging:393] metrics logged to wandb: reduced_train_loss, lr, "
                + "train_step_timing");
        Path log = dir.resolve("mention.log");
        Files.write(log, lines);
        MainTest.Run r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        List<String> row = Files.readAllLines(dir.resolve("o.csv"));
        int col = List.of(row.get(0).split(",", -1)).indexOf("measured_ms");
        assertEquals(2415.0, Double.parseDouble(row.get(1).split(",", -1)[col]), 1e-9, "the eight steps' median");
    }

    @Test
    void aLoraLineAmongTheIterationsOrTwiceStartsNoRunOfItsOwn(@TempDir Path dir) throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        lines.add(4, "peft:");
        lines.add(5, "  _target_: megatron.bridge.peft.canonical_lora.CanonicalLoRA");
        lines.add(6, "[NeMo I 2025-03-02 09:00:07 nemo_logging:393] PEFT: LoRA(dim=16, alpha=32)");
        int mid = lines.indexOf(lines.stream().filter(l -> l.contains("iteration 6/11")).findFirst().orElseThrow());
        lines.add(mid, "[NeMo I 2025-03-02 09:00:30 nemo_logging:393] PEFT: LoRA(dim=16, alpha=32)");
        Path log = dir.resolve("lora.log");
        Files.write(log, lines);
        MainTest.Run r = runs(log, dir);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("LoRA fine-tuning (rank 16)") && !r.err().contains("lora_adapters")
                && !r.err().contains("lora_dim") && !r.err().contains("ran no iteration"), r.err());
        assertEquals(2, Files.readAllLines(dir.resolve("o.csv")).size(), "one run, not split");
    }

    @Test
    void gpusPerNodeAgainstTheLogsTrainerIsSaid(@TempDir Path dir) {
        MainTest.Run r = runs(LOGS.resolve("nemo-llama3-8b.log"), dir, "--gpus-per-node", "4");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("ran 8 GPUs a node (its trainer's devices); its row takes --gpus-per-node 4"),
                r.err());
        assertFalse(runs(LOGS.resolve("nemo-llama3-8b.log"), dir, "--gpus-per-node", "8").err()
                .contains("GPUs a node"));
    }

    @Test
    void anotherFrameworksNameForACountIsRefusedInACandidateTable(@TempDir Path dir) throws Exception {
        llamaBeside(dir);
        Path table = dir.resolve("dp.csv");
        // read as absent, data_parallel 8 was 1 replica: the step about 9 times too slow, exit 0
        Files.writeString(table, "transformer,device,precision,seq,batch,data_parallel,tensor,global_batch\n"
                + "m/config.json,H100,bf16,4096,1,8,2,64\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("column 'data_parallel' is another framework's name for 'world_size'")
                && r.err().contains("rename it world_size"), r.err());
        // beside a column that fixes the same quantity it is warned of: the replicas are the GPUs' share
        Files.writeString(table, "transformer,device,precision,seq,batch,dp,gpus,tensor,global_batch\n"
                + "m/config.json,H100,bf16,4096,1,8,16,2,64\n");
        r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("column 'dp' is not one scaledl reads"), r.err());
        // a look-alike, which may be a label of the table's own, is still only warned of
        Files.writeString(table, "transformer,device,precision,seq,batch,world_size,tensor,micro_batch\n"
                + "m/config.json,H100,bf16,4096,1,8,2,4\n");
        r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("column 'micro_batch' is not one scaledl reads"), r.err());
    }

    @Test
    void aStrayQuoteAndAOneRunFitAreNamed(@TempDir Path dir) throws Exception {
        Path table = dir.resolve("q.csv");
        Files.writeString(table, "transformer,batch\nab\"c,1\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("q.csv:2: field 1 holds a quote it does not start with"), r.err());
        // a quote that closes inside a field blames no field: the one left open is the third, which starts with it
        Files.writeString(table, "transformer,batch,x\nm/config.json,a\"b\"c,\"1\n");
        r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("a quoted field does not end on its line"), r.err());
        Path data = dir.resolve("one");
        Files.createDirectory(data);
        List<String> runs = Files.readAllLines(HostileCliTest.repo().resolve("datasets/cpu-ddp/runs.csv"));
        Files.write(data.resolve("runs.csv"), runs.subList(0, 2));
        Files.createDirectory(data.resolve("graphs"));
        Files.copy(HostileCliTest.repo().resolve("datasets/cpu-ddp/graphs/alexnet_r224.onnx"),
                data.resolve("graphs/alexnet_r224.onnx"));
        r = MainTest.run("fit", "--data", data.toString(), "--out", dir.resolve("f.sdl").toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("one: 1 run in its tables: a fit needs 2 or more"), r.err());
    }

    @Test
    void aCalibrationOnInferenceRunsAloneSaysItMovedTraining(@TempDir Path dir) throws Exception {
        llamaBeside(dir);
        StringBuilder table = new StringBuilder("id,transformer,seq,batch,gpus,tensor,device,precision,phase,"
                + "measured_ms\n");
        int[][] jobs = {{8, 2}, {8, 1}, {4, 8}};
        for (int i = 0; i < jobs.length; i++) {
            double ms = RoundEightCliTest.predicted("--transformer", LLAMA.toString(), "--seq", "4096", "--batch",
                    Integer.toString(jobs[i][0]), "--gpus", "8", "--tensor", Integer.toString(jobs[i][1]), "--device",
                    "H100", "--precision", "bf16", "--phase", "infer");
            table.append("i").append(i).append(",m/config.json,4096,").append(jobs[i][0]).append(",8,")
                    .append(jobs[i][1]).append(",H100,bf16,infer,").append(ms * 1.2).append('\n');
        }
        Path runs = dir.resolve("inf.csv");
        Files.writeString(runs, table);
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("c.sdl").toString());
        assertEquals(0, cal.code(), cal.err());
        assertTrue(cal.err().contains("every transformer run calibrated on is an inference"), cal.err());
    }

    /**
     * A job measured again (every iteration logged as a run) moves a calibration as one run of it does: twenty copies
     * moved every other job's prediction as twenty jobs would.
     */
    @Test
    void aJobsRepeatsCalibrateAsOneRun(@TempDir Path dir) throws Exception {
        llamaBeside(dir);
        double ms = 1.3 * RoundEightCliTest.predicted("--transformer", LLAMA.toString(), "--seq", "4096", "--batch",
                "1", "--gpus", "8", "--tensor", "2", "--device", "H100", "--precision", "bf16");
        double[] other = new double[2];
        for (int copies : new int[] {1, 6}) {
            StringBuilder table = new StringBuilder("id,transformer,seq,batch,gpus,tensor,device,precision,"
                    + "measured_ms\n");
            for (int i = 0; i < copies; i++) {
                table.append("r").append(i).append(",m/config.json,4096,1,8,2,H100,bf16,").append(ms).append('\n');
            }
            Path runs = dir.resolve("runs" + copies + ".csv");
            Files.writeString(runs, table);
            Path model = dir.resolve("c" + copies + ".sdl");
            MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                    model.toString());
            assertEquals(0, cal.code(), cal.err());
            other[copies == 1 ? 0 : 1] = RoundEightCliTest.predictedBy(model.toString(), "--transformer",
                    LLAMA.toString(), "--seq", "8192", "--batch", "2", "--gpus", "64", "--tensor", "4", "--device",
                    "B200", "--precision", "bf16");
        }
        assertEquals(other[0], other[1], 1e-9 * other[0], "six copies of one job calibrate as one");
    }

    @Test
    void theJsonListsTheAssumedPrecision() throws Exception {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "4096",
                "--batch", "1", "--gpus", "8", "--tensor", "2", "--device", "H100", "--json");
        assertEquals(0, r.code(), r.err());
        com.fasterxml.jackson.databind.JsonNode ws = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.out()).get("warnings");
        boolean said = false;
        for (com.fasterxml.jackson.databind.JsonNode w : ws) {
            said |= w.get("kind").asText().equals("assumed") && w.get("message").asText()
                    .startsWith("--precision not given: fp32 assumed");
        }
        assertTrue(said, ws.toString());
    }

    @Test
    void aJobPacedByItsCollectivesSaysSo() {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "8192", "--batch",
            "1", "--global-batch", "512", "--gpus", "256", "--device", "H100", "--precision", "fp8",
            "--recompute", "none", "--zero-stage", "3", "--inter-node-gbps", "400"};
        MainTest.Run r = MainTest.run(job);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("the data-parallel traffic sets the step (ZeRO-3's parameter gathers and "
                + "gradient reduce-scatters)"), r.err());
        // with its ZeRO stage 1 the compute paces it
        job[job.length - 3] = "1";
        r = MainTest.run(job);
        assertEquals(0, r.code(), r.err());
        assertFalse(r.err().contains("the data-parallel traffic sets the step"), r.err());
    }
}
