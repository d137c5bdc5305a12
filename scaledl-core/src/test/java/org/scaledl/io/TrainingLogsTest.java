package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;

class TrainingLogsTest {
    private static final Path LOGS = Path.of("src/test/resources/logs");
    private static final Path LLAMA3_8B = Path.of("src/test/resources/transformers/llama-3-8b/config.json");

    @TempDir
    Path dir;

    private static TransformerSpec spec(TrainingLogs.Run r) {
        return HuggingFaceConfig.parse(r.config().orElseThrow().getBytes(StandardCharsets.UTF_8), r.id(), r.id());
    }

    @Test
    void megatronArgumentBlockGivesTheJobTheModelAndTheSteadyStateMedian() {
        List<TrainingLogs.Run> runs = TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"),
                TrainingLogs.DEFAULT_WARMUP);
        assertEquals(1, runs.size());
        TrainingLogs.Run r = runs.get(0);
        assertEquals("megatron-llama3-8b.log", r.id());
        TrainingLogs.Job j = r.job();
        assertEquals(8192, j.seq());
        assertEquals(1, j.microBatch());
        assertEquals(16, j.microBatches(), "global 128 / (micro 1 x data-parallel 8)");
        assertEquals(8, j.dataParallel(), "world 64 / (tensor 4 x pipeline 2)");
        assertEquals(4, j.tensor());
        assertEquals(2, j.pipeline());
        assertEquals(1, j.context());
        assertEquals(1, j.virtualStages());
        assertEquals(1, j.expert());
        assertEquals(1, j.expertTensor(), "no experts: expert tensor parallelism does not apply");
        assertEquals(1, j.zeroStage(), "the distributed optimizer");
        assertEquals(Precision.BF16, j.precision());
        assertEquals(Recompute.NONE, j.recompute());
        assertTrue(j.sequenceParallel());
        assertEquals(64, j.gpus());
        // 40 iterations, the first one slow: the first 10 dropped, the median of the other 30
        assertEquals(30, r.iterations());
        assertEquals(10, r.warmup());
        assertEquals(5050.5, r.measuredMs(), 1e-9);
        assertEquals("NVIDIA H100 80GB HBM3", r.device().orElseThrow());
        // the model from the arguments is Llama 3 8B's (padded vocabulary from the tokenizer's line)
        TransformerSpec s = spec(r);
        TransformerSpec llama = HuggingFaceConfig.read(LLAMA3_8B);
        assertEquals(llama.parameterCount(), s.parameterCount());
        assertEquals(8, s.kvHeads());
        assertTrue(r.config().get().contains("\"model_type\" : \"llama\""), r.config().get());
        assertEquals("128256", r.arguments().get("padded_vocab_size"));
    }

    /**
     * By default the first logged iteration is always warm-up (it holds the start-up, here 9x a steady step): a log cut
     * after it is refused, naming the way to time it anyway, and one cut after two iterations times the second.
     */
    @Test
    void theFirstIterationIsWarmUpByDefault(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<String> lines = java.nio.file.Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        int second = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("iteration        2/")) {
                second = i;
                break;
            }
        }
        assertTrue(second > 0);
        Path one = dir.resolve("one.log");
        java.nio.file.Files.write(one, lines.subList(0, second));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(one,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("one.log") && e.getMessage().contains("--warmup 0"), e.getMessage());
        assertEquals(45123.4, TrainingLogs.read(one, 0).get(0).measuredMs(), 1e-9);
        Path two = dir.resolve("two.log");
        java.nio.file.Files.write(two, lines.subList(0, second + 1));
        TrainingLogs.Run r = TrainingLogs.read(two, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(1, r.warmup());
        assertEquals(5030.5, r.measuredMs(), 1e-9);
    }

    /**
     * Megatron's iteration lines say the global batch each ran: under a batch-size ramp-up ({@code
     * rampup_batch_size}) the first steps run smaller batches, so their shorter times are left out of the median (and
     * said), with the first line after them (a line's time is the mean since the line before); a log none of whose
     * steady iterations ran the job's batch is refused at the first.
     */
    @Test
    void iterationsOfAnotherGlobalBatchAreLeftOut(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<String> lines = java.nio.file.Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        TrainingLogs.Run plain = TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"), 0).get(0);
        // iterations 1-20 at a global batch of 64, each twice as fast as logged
        List<String> ramp = new java.util.ArrayList<>();
        java.util.regex.Pattern it = java.util.regex.Pattern.compile("iteration\\s+(\\d+)/.*per iteration \\(ms\\): "
                + "([0-9.]+)");
        List<Double> steady = new java.util.ArrayList<>();
        for (String l : lines) {
            java.util.regex.Matcher m = it.matcher(l);
            if (m.find() && Integer.parseInt(m.group(1)) <= 20) {
                double half = Double.parseDouble(m.group(2)) / 2;
                l = l.replace("global batch size:   128", "global batch size:    64").replace(m.group(2),
                        String.valueOf(half));
            } else if (m.find(0) && Integer.parseInt(m.group(1)) > 21) {
                // (iteration 21, the first after the ramp, may average its steps: it goes too)
                steady.add(Double.parseDouble(m.group(2)));
            }
            ramp.add(l);
        }
        assertEquals(19, steady.size());
        Path log = dir.resolve("ramp.log");
        java.nio.file.Files.write(log, ramp);
        TrainingLogs.Run r = TrainingLogs.read(log, 0).get(0);
        java.util.Collections.sort(steady);
        assertEquals(steady.get(9), r.measuredMs(), 1e-9);
        assertEquals(19, r.iterations());
        assertEquals(plain.job(), r.job());
        // none of the steady iterations at the job's batch: refused at the first of them
        Path all = dir.resolve("all.log");
        java.nio.file.Files.write(all, lines.stream().map(l -> l.replace("global batch size:   128",
                "global batch size:   256")).toList());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(all, 0));
        assertTrue(e.getMessage().contains("all.log:") && e.getMessage().contains("every iteration after warm-up ran "
                + "a global batch of 256, not global_batch_size 128"), e.getMessage());
    }

    /**
     * A log that states its layout twice, differently (a summary line against the arguments), or whose iteration
     * numbers go back (a restart without its arguments) is refused at the line, not read as one run.
     */
    @Test
    void contradictionsInALogAreRefusedAtTheirLine(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        int world = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("  world_size ...")) {
                world = i;
            }
        }
        assertTrue(world > 0);
        List<String> twice = new java.util.ArrayList<>(lines);
        twice.set(world, "  world_size ...................................... 63");
        Path a = dir.resolve("twice.log");
        Files.write(a, twice);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(a, 1));
        assertTrue(e.getMessage().contains("twice.log") && e.getMessage().contains("world_size 63")
                && e.getMessage().contains("at line 2"), e.getMessage());
        // the same value written another way is no contradiction
        twice.set(world, "  world_size ...................................... 64.0");
        Files.write(a, twice);
        assertEquals(8, TrainingLogs.read(a, 1).get(0).job().dataParallel());
        List<String> again = new java.util.ArrayList<>(lines);
        int last = again.size() - 1;
        while (!again.get(last).contains("iteration ")) {
            last--;
        }
        again.add(last + 1, again.stream().filter(l -> l.contains("iteration        2/")).findFirst().orElseThrow());
        Path b = dir.resolve("again.log");
        Files.write(b, again);
        InvalidInputException restart = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(b, 1));
        assertTrue(restart.getMessage().contains("iteration 2 after iteration"), restart.getMessage());
        // NeMo 2 numbers its steps within an epoch: a second epoch starts again at 0, and is read on (Lightning's
        // global_step and the consumed samples go on)
        List<String> nemo = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        long steps = nemo.stream().filter(l -> l.startsWith("Training epoch 0,")).count();
        java.util.function.UnaryOperator<String> onwards = l -> {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("global_step: (\\d+)(.*consumed_samples: )"
                    + "(\\d+)").matcher(l);
            return m.find() ? l.substring(0, m.start()) + "global_step: " + (Long.parseLong(m.group(1)) + steps)
                    + m.group(2) + (Long.parseLong(m.group(3)) + 64 * steps) + l.substring(m.end()) : l;
        };
        List<String> epochOne = nemo.stream().filter(l -> l.startsWith("Training epoch 0,"))
                .map(l -> onwards.apply(l.replace("Training epoch 0,", "Training epoch 1,"))).toList();
        assertTrue(epochOne.get(0).contains("global_step: " + steps + " "), epochOne.get(0));
        int after = nemo.size() - 1;
        while (!nemo.get(after).startsWith("Training epoch 0,")) {
            after--;
        }
        nemo.addAll(after + 1, epochOne);
        Path c = dir.resolve("epochs.log");
        Files.write(c, nemo);
        TrainingLogs.Run two = TrainingLogs.read(c, 1).get(0);
        assertEquals(2 * TrainingLogs.read(LOGS.resolve("nemo-llama3-8b.log"), 1).get(0).iterations() + 1,
                two.iterations(), "both epochs' steps, less the one warm-up");
        // two runs' steps joined in one epoch (a second run appended without its configuration): their numbers go
        // back while the epoch's does not, so the log is refused, not read as one run of both (its median mixed them)
        List<String> joined = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        joined.addAll(after + 1, nemo.stream().filter(l -> l.startsWith("Training epoch 0,")).toList());
        Path d = dir.resolve("joined.log");
        Files.write(d, joined);
        InvalidInputException again0 = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(d, 1));
        assertTrue(again0.getMessage().contains("the run starts again without its arguments"), again0.getMessage());
        // a second job appended under a new epoch's label (a helper's log): its step count and samples start again,
        // so it is refused, not read as a second epoch (its median was the second job's, twice the first's)
        List<String> second = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")));
        second.addAll(after + 1, nemo.stream().filter(l -> l.startsWith("Training epoch 0,"))
                .map(l -> l.replace("Training epoch 0,", "Training epoch 1,")).toList());
        Path f = dir.resolve("second.log");
        Files.write(f, second);
        InvalidInputException appended = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(f, 1));
        assertTrue(appended.getMessage().contains("second.log:" + (after + 2) + ": global_step 0 after " + (steps - 1))
                && appended.getMessage().contains("starts again without its arguments"), appended.getMessage());
    }


    /**
     * A value a setting does not take is refused at its line, not read as the nearest one: an FP8 or FP4 format that
     * is none of Megatron's (any text once made the job FP8), a norm that is neither LayerNorm nor RMSNorm (once read
     * as LayerNorm), a padded vocabulary, world size, data-parallel size or micro-batch count that is not a whole
     * number (2.5 was read as 2, 1e308 as 1; the world size's argument line says the same, so the summary line's own
     * refusal is what is seen). The values Megatron and NeMo print are read.
     */
    @Test
    void valuesASettingDoesNotTakeAreRefusedAtTheirLine(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<String> lines = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        String dots = " ............................................. ";
        String[][] cases = {
            {"  fp8 ...", "  fp8" + dots + "abc", "fp8 must be e4m3, hybrid, True or False"},
            {"  fp8 ...", "  fp8" + dots + "2.5", "fp8 must be e4m3, hybrid, True or False"},
            {"  fp4 ...", "  fp4" + dots + "e4m3", "fp4 must be e2m1, nvfp4, True or False"},
            {"  normalization ...", "  normalization" + dots + "Batch", "LayerNorm or RMSNorm"},
            {" > padded vocab", " > padded vocab (size: 128256) with 0 dummy tokens (new size: 2.5)",
                "padded_vocab_size"},
            {" > padded vocab", " > padded vocab (size: 128256) with 0 dummy tokens (new size: 1e308)",
                "padded_vocab_size"},
            {"using world size", "using world size: 64.5, data-parallel size: 8, context-parallel size: 1",
                "world_size"},
            {"using world size", "using world size: 64, data-parallel size: 8.5, context-parallel size: 1",
                "data_parallel_size"},
            {"setting number of microbatches", "setting number of microbatches to constant 16.5", "micro"},
        };
        for (String[] c : cases) {
            List<String> changed = new java.util.ArrayList<>(lines);
            int at = -1;
            for (int i = 0; i < changed.size(); i++) {
                if (changed.get(i).startsWith(c[0])) {
                    at = i;
                }
            }
            if (at < 0 && c[0].startsWith("  fp4")) {
                // the log prints no fp4: the argument goes after fp8
                for (int i = 0; i < changed.size(); i++) {
                    if (changed.get(i).startsWith("  fp8 ...")) {
                        changed.add(i + 1, c[1]);
                        at = i + 1;
                        break;
                    }
                }
            } else if (at >= 0) {
                changed.set(at, c[1]);
            }
            assertTrue(at >= 0, c[0]);
            // the argument lines say what the summary line says, so only the value under test is refused
            String value = c[1].contains("world size: 64.5") ? "64.5" : c[1].contains("size: 8.5") ? "8.5" : null;
            if (value != null) {
                String key = value.equals("64.5") ? "  world_size ..." : "  data_parallel_size ...";
                String v = value;
                changed.replaceAll(l -> l.startsWith(key) ? l.substring(0, l.lastIndexOf(' ') + 1) + v : l);
            }
            Path log = dir.resolve("changed.log");
            Files.write(log, changed);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log, 1),
                    c[1]);
            assertTrue(e.getMessage().contains("changed.log:" + (at + 1) + ":") && e.getMessage().contains(c[2])
                    && !e.getMessage().contains(" here, but "), c[1] + ": " + e.getMessage());
        }
        // Lightning's member line of a NeMo log likewise; text glued after its number is not part of it
        List<String> nemo = Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log"));
        Path member = dir.resolve("member.log");
        Files.write(member, nemo.stream().map(l -> l.startsWith("Initializing distributed") ? "Initializing "
                + "distributed: GLOBAL_RANK: 0, MEMBER: 1/16.5" : l).toList());
        InvalidInputException m = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(member, 1));
        assertTrue(m.getMessage().contains("member.log:3:") && m.getMessage().contains("16.5"), m.getMessage());
        Files.write(member, nemo.stream().map(l -> l.startsWith("Initializing distributed") ? l + "Initializing "
                + "distributed: GLOBAL_RANK: 5, MEMBER: 6/16" : l).toList());
        assertEquals(16, TrainingLogs.read(member, 1).get(0).job().gpus());
        // the values Megatron and NeMo print
        String[][] read = {
            {"  fp8 ...", "e4m3", "FP8"}, {"  fp8 ...", "hybrid", "FP8"}, {"  fp8 ...", "True", "FP8"},
            {"  fp8 ...", "False", "BF16"}, {"  fp8 ...", "None", "BF16"}, {"  normalization ...", "rmsnorm", "BF16"},
            {"  normalization ...", "layernorm1p", "BF16"}, {"  normalization ...", "low_precision_layernorm", "BF16"},
            {"  normalization ...", "LayerNorm", "BF16"},
        };
        for (String[] r : read) {
            List<String> changed = new java.util.ArrayList<>(lines);
            changed.replaceAll(l -> l.startsWith(r[0]) ? l.substring(0, l.lastIndexOf(' ') + 1) + r[1] : l);
            Path log = dir.resolve("read.log");
            Files.write(log, changed);
            assertEquals(Precision.valueOf(r[2]), TrainingLogs.read(log, 1).get(0).job().precision(), r[1]);
        }
        for (String fp4 : new String[] {"e2m1", "nvfp4", "True"}) {
            List<String> changed = new java.util.ArrayList<>(lines);
            int fp8 = changed.indexOf(changed.stream().filter(l -> l.startsWith("  fp8 ...")).findFirst()
                    .orElseThrow());
            changed.add(fp8 + 1, "  fp4" + dots + fp4);
            Path log = dir.resolve("fp4.log");
            Files.write(log, changed);
            assertEquals(Precision.NVFP4, TrainingLogs.read(log, 1).get(0).job().precision(), fp4);
        }
    }

    @Test
    void warmUpIsTheCallersWhenGivenAndAGivenModelIsCompared() {
        TrainingLogs.Run r = TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"), 1, LLAMA3_8B).get(0);
        assertEquals(39, r.iterations());
        assertEquals(1, r.warmup());
        assertTrue(r.config().isEmpty(), "the model was given");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(
                LOGS.resolve("megatron-llama3-8b.log"), 40));
        assertTrue(e.getMessage().contains("megatron-llama3-8b.log") && e.getMessage().contains("after warm-up"),
                e.getMessage());
    }

    /**
     * Megatron core's {@code recompute_modules}, as its argument block prints the list, says what selective
     * recomputation recomputes; None is the attention core; an empty list is nothing; a name not known is refused,
     * naming the key and the name; without selective granularity the list is not read.
     */
    @Test
    void recomputeModulesAreReadWithSelectiveGranularity(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        List<String> lines = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        java.util.function.BiFunction<String, String, List<String>> with = (granularity, modules) -> {
            List<String> out = new java.util.ArrayList<>();
            for (String l : lines) {
                if (l.startsWith("  recompute_granularity ...")) {
                    out.add("  recompute_granularity ........................... " + granularity);
                    out.add("  recompute_modules ............................... " + modules);
                } else {
                    out.add(l);
                }
            }
            return out;
        };
        Path f = dir.resolve("modules.log");
        Files.write(f, with.apply("selective", "['moe_act', 'layernorm']"));
        TrainingLogs.Job j = TrainingLogs.read(f, 1).get(0).job();
        assertEquals(Recompute.SELECTIVE, j.recompute());
        assertEquals(java.util.EnumSet.of(org.scaledl.workload.RecomputeModule.MOE_ACT,
                org.scaledl.workload.RecomputeModule.LAYERNORM), j.recomputeModules());
        Files.write(f, with.apply("selective", "None"));
        assertEquals(org.scaledl.workload.RecomputeModule.DEFAULT, TrainingLogs.read(f, 1).get(0).job()
                .recomputeModules());
        Files.write(f, with.apply("selective", "[]"));
        assertEquals(Recompute.NONE, TrainingLogs.read(f, 1).get(0).job().recompute());
        Files.write(f, with.apply("full", "['mlp']"));
        TrainingLogs.Job full = TrainingLogs.read(f, 1).get(0).job();
        assertEquals(Recompute.FULL, full.recompute());
        assertEquals(org.scaledl.workload.RecomputeModule.DEFAULT, full.recomputeModules());
        Files.write(f, with.apply("selective", "['core_attn', 'attn_proj']"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(f, 1));
        assertTrue(e.getMessage().contains("modules.log") && e.getMessage().contains("recompute_modules")
                && e.getMessage().contains("'attn_proj'"), e.getMessage());
    }

    @Test
    void nemoLogWithAConfigDumpAndTrainStepTiming() {
        TrainingLogs.Run r = TrainingLogs.read(LOGS.resolve("nemo-llama3-8b.log"), TrainingLogs.DEFAULT_WARMUP)
                .get(0);
        TrainingLogs.Job j = r.job();
        assertEquals(8192, j.seq());
        assertEquals(2, j.microBatch());
        assertEquals(2, j.tensor());
        assertEquals(2, j.context());
        assertEquals(4, j.dataParallel(), "Lightning's 16 processes / (tensor 2 x context 2)");
        assertEquals(8, j.microBatches(), "64 / (2 x 4)");
        assertEquals(Precision.FP8, j.precision(), "fp8 hybrid, tensorwise");
        assertEquals(Recompute.SELECTIVE, j.recompute());
        assertTrue(j.sequenceParallel());
        assertEquals(0, j.zeroStage());
        // 12 logged steps (fewer than 30): a third dropped, the median of 8, seconds as ms
        assertEquals(4, r.warmup());
        assertEquals(8, r.iterations());
        assertEquals(2415.0, r.measuredMs(), 1e-6);
        assertEquals("NVIDIA H100 80GB HBM3", r.device().orElseThrow());
        TransformerSpec s = spec(r);
        assertEquals(HuggingFaceConfig.read(LLAMA3_8B).parameterCount(), s.parameterCount(),
                "untied SwiGLU RMSNorm with 8 groups: Llama 3 8B");
    }

    @Test
    void aLogMissingArgumentsListsEveryOne() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(
                LOGS.resolve("missing-global-batch.log"), TrainingLogs.DEFAULT_WARMUP));
        String m = e.getMessage();
        assertTrue(m.startsWith(LOGS.resolve("missing-global-batch.log").toString()), m);
        assertTrue(m.contains("global_batch_size") && m.contains("ffn_hidden_size"), m);
        // with the model given, only what the job needs
        InvalidInputException given = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(
                LOGS.resolve("missing-global-batch.log"), TrainingLogs.DEFAULT_WARMUP, LLAMA3_8B));
        assertTrue(given.getMessage().contains("global_batch_size"), given.getMessage());
        assertFalse(given.getMessage().contains("ffn_hidden_size"), given.getMessage());
    }

    @Test
    void aLogWithAnotherModelThanTheGivenOneIsRefused() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(
                LOGS.resolve("different-hidden.log"), TrainingLogs.DEFAULT_WARMUP, LLAMA3_8B));
        String m = e.getMessage();
        assertTrue(m.contains("different-hidden.log") && m.contains("different model"), m);
        assertTrue(m.contains("hidden_size is 8192 in the log, 4096 in the configuration"), m);
        assertEquals(1, m.lines().count(), m);
    }

    @Test
    void aLayerCountPastTheIntRangeIsRefusedNotTruncated() {
        for (Path model : new Path[] {null, LLAMA3_8B}) {
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(
                    LOGS.resolve("huge-layers.log"), TrainingLogs.DEFAULT_WARMUP, model));
            String m = e.getMessage();
            assertTrue(m.contains("huge-layers.log") && m.contains("num_layers = 4294967328 is out of range"), m);
        }
    }

    @Test
    void severalRunsInOneLogAreReadInOrder() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        Path log = dir.resolve("two.log");
        Files.writeString(log, one + one.replace("elapsed time per iteration (ms): 5", "elapsed time per iteration "
                + "(ms): 6"));
        List<TrainingLogs.Run> runs = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP);
        assertEquals(2, runs.size());
        assertEquals("two.log#1", runs.get(0).id());
        assertEquals("two.log#2", runs.get(1).id());
        assertEquals(5050.5, runs.get(0).measuredMs(), 1e-9);
        assertEquals(6050.5, runs.get(1).measuredMs(), 1e-9);
        assertTrue(runs.get(1).line() > one.lines().count() - 1, "the second run starts in the second half");
        assertEquals(runs.get(0).job(), runs.get(1).job());
    }

    /**
     * A log cut inside its last iteration line (a job killed while writing it) does not time that iteration by the
     * digits it got to: the line is left out, and the run is what the log holds before it.
     */
    @Test
    void anIterationLineTheLogEndsInsideIsLeftOut() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        String key = "elapsed time per iteration (ms): ";
        int last = one.lastIndexOf(key);
        int lineStart = one.lastIndexOf('\n', last) + 1;
        Path cut = dir.resolve("cut.log");
        Files.writeString(cut, one.substring(0, last + key.length() + 2));
        Path before = dir.resolve("before.log");
        Files.writeString(before, one.substring(0, lineStart));
        TrainingLogs.Run r = TrainingLogs.read(cut, TrainingLogs.DEFAULT_WARMUP).get(0);
        TrainingLogs.Run expected = TrainingLogs.read(before, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(expected.iterations(), r.iterations());
        assertEquals(29, r.iterations(), "39 iterations logged whole, 10 of them warm-up");
        assertEquals(expected.measuredMs(), r.measuredMs(), 0);
    }

    /**
     * A log of another training loop (TorchTitan's step lines, Hugging Face Trainer's) is refused naming the line
     * that shows it and how to give its runs instead; a log of neither says it is no training log.
     */
    @Test
    void anotherTrainingLoopsLogIsRefusedSayingHowToGiveItsRuns() throws IOException {
        Path titan = dir.resolve("titan.log");
        Files.writeString(titan, "[rank0]:[titan] 2026-01-01 12:00:00,000 - root - INFO - Building llama3 8B\n"
                + "[rank0]:[titan] 2026-01-01 12:00:10,000 - root - INFO - step:  1  loss: 12.2520  "
                + "grad_norm:  4.1230  memory: 42.10GiB(44.31%)  tps: 1,036  tflops: 60.00  mfu: 6.07%\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(titan,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("line 2 is a step line of another training loop")
                && e.getMessage().contains("tokens_per_s_per_gpu"), e.getMessage());
        // TorchTitan's default output colours each field
        Files.writeString(titan, "\u001b[31mstep:  1  \u001b[32mloss: 12.2520  \u001b[33mgrad_norm:  4.1230  "
                + "\u001b[34mtps: 1,036  \u001b[36mtflops: 60.00  \u001b[35mmfu: 6.07%\u001b[39m\n");
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(titan, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("line 1 is a step line of another training loop"), e.getMessage());
        Path trainer = dir.resolve("trainer.log");
        Files.writeString(trainer, "{'loss': 2.3012, 'grad_norm': 1.2, 'learning_rate': 1e-05, 'epoch': 0.1}\n");
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(trainer, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("line 1 is a step line of another training loop"), e.getMessage());
        Path plain = dir.resolve("plain.log");
        Files.writeString(plain, "hello\nloss went down\n");
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(plain, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("not a training log"), e.getMessage());
    }

    /**
     * Lightning's progress bar over NeMo draws each step twice, its count first (with the step before's time) and
     * then the step's own time, each drawing after a carriage return: a step is one iteration, its last drawing's
     * time; its count starts again each epoch.
     */
    @Test
    void aProgressBarsRedrawsAreOneIterationEachTheirLastDrawingsTime() throws IOException {
        List<String> nemo = Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log"));
        String header = String.join("\n", nemo.stream().takeWhile(l -> !l.startsWith("Training epoch")).toList());
        int steps = 12;
        double[] t = new double[steps + 1];
        t[1] = 20.0;
        for (int i = 2; i <= steps; i++) {
            t[i] = 2.0 + 0.01 * i;
        }
        for (String form : List.of("| %d/12 [00:10<00:20, 0.41it/s, ", ": %dit [00:10, 0.41it/s, ")) {
            StringBuilder b = new StringBuilder(header).append('\n');
            for (int epoch = 0; epoch < 2; epoch++) {
                // the bar resets for the epoch: drawn at 0 with the last step's time, under the label before
                b.append(String.format(java.util.Locale.ROOT, "Epoch " + Math.max(0, epoch - 1) + ": "
                        + String.format(java.util.Locale.ROOT, form, 0) + "v_num=0, train_step_timing in s=%.3f]\r",
                        t[steps]));
                for (int i = 1; i <= steps; i++) {
                    String bar = "Epoch " + epoch + ": " + String.format(java.util.Locale.ROOT, form, i)
                            + "v_num=0, reduced_train_loss=11.0, global_step=%d.000, train_step_timing in s=%.3f]\r";
                    int global = epoch * steps + i - 1;
                    b.append(String.format(java.util.Locale.ROOT, bar, global, i == 1 ? 0.0 + t[steps] : t[i - 1]));
                    b.append(String.format(java.util.Locale.ROOT, bar, global, t[i]));
                }
            }
            Path log = dir.resolve("bar.log");
            Files.writeString(log, b.append('\n').toString());
            TrainingLogs.Run r = TrainingLogs.read(log, 12).get(0);
            assertEquals(2 * steps - 12, r.iterations(), form + ": each step once, not once a drawing");
            // the second epoch's steps (20 s, then 2.02 .. 2.12 s): its median is (2.07 + 2.08) / 2 s
            assertEquals(2075.0, r.measuredMs(), 1e-6, form + ": each step's own time, not the one before's");
        }
    }

    /** One epoch of a Lightning bar over NeMo: each step drawn with the step before's metrics, then its own. */
    private static String barEpoch(int steps, java.util.function.IntFunction<String> before) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= steps; i++) {
            for (int own = 0; own < 2; own++) {
                int shown = own == 1 ? i : i - 1;   // the step whose metrics the drawing shows (0: none yet)
                b.append(before.apply(i)).append("Epoch 0: ").append(i * 100 / steps).append("%|#  | ").append(i)
                        .append('/').append(steps).append(" [00:10<00:20, 0.41it/s, v_num=0");
                if (shown > 0) {
                    b.append(String.format(java.util.Locale.ROOT, ", global_step=%d.000, train_step_timing in s=%.3f",
                            shown - 1, shown == 1 ? 20.0 : 2.0 + 0.001 * shown));
                }
                b.append("]\r");
            }
        }
        return b.toString();
    }

    /**
     * A training bar's step is its metrics' {@code global_step}, read from the training bar's own drawing: a
     * validation bar drawn on the same line (before or after it) or counted into the main bar (Lightning 1.x, its
     * count going on through validation with the last step's metrics) adds no step; a job killed while drawing
     * (tqdm ends a drawing only with the next one's carriage return) keeps its last step where the drawing closes its
     * metrics, and drops it where it does not; a message names the line as editors count lines (LF), not drawings;
     * NeMo's bar format without the bar ({@code Epoch 0 5/12, ...}) is read as the bar.
     */
    @Test
    void aTrainingBarsStepIsItsOwnWhateverElseIsDrawn() throws IOException {
        String header = String.join("\n", Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log")).stream()
                .takeWhile(l -> !l.startsWith("Training epoch")).toList()) + "\n";
        java.util.function.Function<String, TrainingLogs.Run> read = text -> {
            try {
                Path log = dir.resolve("bars.log");
                Files.writeString(log, text);
                return TrainingLogs.read(log, 1).get(0);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        TrainingLogs.Run plain = read.apply(header + barEpoch(12, i -> "") + "\n");
        assertEquals(11, plain.iterations(), "12 steps, one warm-up");
        assertEquals(2007.0, plain.measuredMs(), 1e-6, "steps 2..12: 2.002 .. 2.012 s");
        String val = "Validation DataLoader 0: : 51it [00:20,  2.53it/s]";
        for (String glued : List.of(header + barEpoch(12, i -> i == 8 ? val : "") + "\n",
                header + barEpoch(12, i -> "").replace("]\r", "]" + val + "\r") + "\n")) {
            TrainingLogs.Run r = read.apply(glued);
            assertEquals(plain.iterations(), r.iterations());
            assertEquals(plain.measuredMs(), r.measuredMs(), 0);
        }
        // Lightning 1.x: the main bar counts 6 validation batches on, showing step 12's metrics
        StringBuilder older = new StringBuilder(header).append(barEpoch(12, i -> ""));
        for (int j = 13; j <= 18; j++) {
            older.append("Epoch 0: 90%|#  | ").append(j).append("/18 [00:10<00:20, 0.41it/s, v_num=0, "
                    + "global_step=11.000, train_step_timing in s=2.012]\r");
        }
        TrainingLogs.Run counted = read.apply(older.append('\n').toString());
        assertEquals(plain.iterations(), counted.iterations());
        assertEquals(plain.measuredMs(), counted.measuredMs(), 0);
        // killed while drawing: no line end after the last drawing
        String killed = header + barEpoch(12, i -> "");
        TrainingLogs.Run whole = read.apply(killed);
        assertEquals(plain.iterations(), whole.iterations(), "the last drawing closes its metrics: whole");
        assertEquals(plain.measuredMs(), whole.measuredMs(), 0);
        TrainingLogs.Run dropped = read.apply(killed.substring(0, killed.length() - 3));
        assertEquals(plain.iterations() - 1, dropped.iterations(), "cut inside the last drawing: step 12 left out");
        assertEquals(2006.5, dropped.measuredMs(), 1e-6);
        // a bar going back within its epoch: refused at the line an editor shows (the header's lines, then the bar's)
        String back = header + barEpoch(12, i -> "").replace("global_step=6.000", "global_step=2.000") + "\n";
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read.apply(back));
        int barLine = (int) header.lines().count() + 1;
        assertTrue(e.getMessage().contains("bars.log:" + barLine + ": iteration 2 after iteration"), e.getMessage());
        // a bar that shows no step time: refused, saying so
        String untimed = header + barEpoch(12, i -> "").replaceAll(", train_step_timing in s=[0-9.]+", "") + "\n";
        InvalidInputException none = assertThrows(InvalidInputException.class, () -> read.apply(untimed));
        assertTrue(none.getMessage().contains("line " + barLine + " is a training progress bar whose metrics show no "
                + "train_step_timing"), none.getMessage());
        // NeMo's bar format without the bar, the count after the epoch ({desc} {n_fmt}/{total_fmt}{postfix}: no
        // brackets around its metrics either)
        String nemo = header + barEpoch(12, i -> "").replaceAll("Epoch 0: [0-9]+%\\|#  \\| ([0-9]+)/12 \\[[^,]*, [^,]*,",
                "Epoch 0 $1/12,").replace("global_step", "step").replace("]", "") + "\n";
        assertTrue(nemo.indexOf('[', header.length()) < 0 && nemo.indexOf(']', header.length()) < 0, nemo);
        TrainingLogs.Run counts = read.apply(nemo);
        assertEquals(plain.iterations(), counts.iterations(), nemo.substring(header.length(), header.length() + 200));
        assertEquals(plain.measuredMs(), counts.measuredMs(), 0);
    }

    /** A gzip'd log is read as the log it holds; another compression or an archive is refused naming it. */
    @Test
    void aGzippedLogIsReadAndOtherCompressionsAreRefusedNamed() throws IOException {
        Path plain = LOGS.resolve("megatron-llama3-8b.log");
        Path gz = dir.resolve("train.log.gz");
        try (java.io.OutputStream out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(gz))) {
            Files.copy(plain, out);
        }
        TrainingLogs.Run expected = TrainingLogs.read(plain, TrainingLogs.DEFAULT_WARMUP).get(0);
        TrainingLogs.Run r = TrainingLogs.read(gz, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(expected.iterations(), r.iterations());
        assertEquals(expected.measuredMs(), r.measuredMs(), 0);
        assertEquals(expected.job(), r.job());
        Path zst = dir.resolve("train.log.zst");
        Files.write(zst, new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, 0, 0, 1, 2});
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(zst,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("train.log.zst") && e.getMessage().contains("a zstd-compressed file")
                && e.getMessage().contains("decompress it first"), e.getMessage());
        Path zip = dir.resolve("logs.zip");
        try (java.util.zip.ZipOutputStream out = new java.util.zip.ZipOutputStream(Files.newOutputStream(zip))) {
            out.putNextEntry(new java.util.zip.ZipEntry("train.log"));
            Files.copy(plain, out);
        }
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(zip, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("a zip archive") && e.getMessage().contains("extract the log"),
                e.getMessage());
        // a gzip'd log cut short is read up to the cut, as a plain log cut short is (and as gunzip -c gives it)
        byte[] whole = Files.readAllBytes(gz);
        Path cut = dir.resolve("cut.log.gz");
        Files.write(cut, java.util.Arrays.copyOf(whole, whole.length * 9 / 10));
        TrainingLogs.Run part = TrainingLogs.read(cut, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertTrue(part.iterations() > 0 && part.iterations() < expected.iterations(), part.iterations() + " of "
                + expected.iterations());
        assertEquals(expected.job(), part.job());
        // one cut before its data, a gzip of a gzip, a UTF-16 log (PowerShell's redirection writes one)
        Path header = dir.resolve("header.log.gz");
        Files.write(header, new byte[] {0x1f, (byte) 0x8b});
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(header, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("a gzip file cut short before its data (2 bytes"), e.getMessage());
        Path twice = dir.resolve("twice.log.gz.gz");
        try (java.io.OutputStream out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(twice))) {
            Files.copy(gz, out);
        }
        assertEquals(expected.measuredMs(), TrainingLogs.read(twice, TrainingLogs.DEFAULT_WARMUP).get(0)
                .measuredMs(), 0);
        Path utf16 = dir.resolve("utf16.log");
        Files.write(utf16, ("\uFEFF" + Files.readString(plain)).getBytes(StandardCharsets.UTF_16LE));
        assertEquals(expected.measuredMs(), TrainingLogs.read(utf16, TrainingLogs.DEFAULT_WARMUP).get(0)
                .measuredMs(), 0);
    }

    /** A DeepSpeed log without Megatron's iteration lines is refused as another loop's, saying how to give its runs. */
    @Test
    void aDeepSpeedOnlyLogIsRefusedAsAnotherLoops() throws IOException {
        Path ds = dir.resolve("deepspeed.log");
        Files.writeString(ds, "[2026-01-01 12:00:00,000] [INFO] [config.py:1000:print] DeepSpeedEngine configuration\n"
                + "[2026-01-01 12:00:10,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
                + "lr=[0.0001], mom=[(0.9, 0.999)]\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(ds,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("line 2 is a step line of another training loop")
                && e.getMessage().contains("DeepSpeed") && e.getMessage().contains("SamplesPerSec"), e.getMessage());
        Files.writeString(ds, "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=12.3, "
                + "CurrSamplesPerSec=12.5, MemAllocated=4.1GB, MaxMemAllocated=9.2GB\n");
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(ds, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("line 1 is a step line of another training loop"), e.getMessage());
        Files.writeString(ds, "[INFO] [engine.py:2100:_report_progress] steps: 10 loss: 2.3456 iter time (s): 1.234 "
                + "samples/sec: 25.9\n");
        e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(ds, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("line 1 is a step line of another training loop"), e.getMessage());
    }

    /** The job of the first run of a log of this text, written under {@code name} in the test's folder. */
    private TrainingLogs.Job firstJob(String name, String text) {
        try {
            Path log = dir.resolve(name);
            Files.writeString(log, text);
            return TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0).job();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * When the gradients are reduced: Megatron's {@code overlap_grad_reduce} (False, its default, is after the
     * backward pass), else older Megatron-LM's {@code DDP_impl} (local after the backward pass, torch overlapped);
     * neither logged is overlapped; an unknown implementation is refused at its line.
     */
    @Test
    void theGradientReductionIsReadFromTheArguments() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        java.util.function.Function<String, TrainingLogs.Job> with = arg -> firstJob("grad.log",
                one.replaceFirst("(?m)^(  micro_batch_size .*)$", "$1\n" + arg));
        org.scaledl.workload.GradReduce after = org.scaledl.workload.GradReduce.AFTER_BACKWARD;
        org.scaledl.workload.GradReduce overlapped = org.scaledl.workload.GradReduce.OVERLAPPED;
        assertEquals(overlapped, TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"), TrainingLogs.DEFAULT_WARMUP)
                .get(0).job().gradReduce(), "nothing logged: overlapped");
        assertEquals(after, with.apply("  overlap_grad_reduce ............................. False").gradReduce());
        assertEquals(overlapped, with.apply("  overlap_grad_reduce ............................. True")
                .gradReduce());
        assertEquals(after, with.apply("  DDP_impl ........................................ local").gradReduce());
        assertEquals(overlapped, with.apply("  DDP_impl ........................................ torch")
                .gradReduce());
        assertEquals(after, with.apply("  DDP_impl ........................................ local\n"
                + "  overlap_grad_reduce ............................. False").gradReduce());
        assertEquals(overlapped, with.apply("  DDP_impl ........................................ local\n"
                + "  overlap_grad_reduce ............................. True").gradReduce(),
                "overlap_grad_reduce decides where both are logged");
        org.scaledl.InvalidInputException bad = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class,
                () -> with.apply("  DDP_impl ........................................ ring"));
        assertTrue(bad.getMessage().contains("grad.log:") && bad.getMessage().contains("DDP_impl 'ring' is not known"),
                bad.getMessage());
    }

    /**
     * The updated weights' gather: Megatron core's {@code overlap_param_gather} False (Megatron-LM's default) with the
     * distributed optimizer and the gradients' reduction overlapped is the gather after the optimizer step; True, or
     * not logged, overlapped; the reduction after the backward pass takes the gather with it; without the distributed
     * optimizer there is no gather to expose; the runs table's cell names it.
     */
    @Test
    void theWeightsGatherIsReadFromTheArguments() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        java.util.function.Function<String, TrainingLogs.Job> with = arg -> firstJob("gather.log",
                one.replaceFirst("(?m)^(  micro_batch_size .*)$", "$1\n" + arg));
        String off = "  overlap_param_gather ............................ False";
        TrainingLogs.Job gather = with.apply(off);
        assertEquals(org.scaledl.workload.GradReduce.GATHER_AFTER_STEP, gather.gradReduce());
        assertEquals("gather-after-step", gather.cells().get("grad_reduce"));
        assertEquals(org.scaledl.workload.GradReduce.OVERLAPPED,
                with.apply("  overlap_param_gather ............................ True").gradReduce());
        assertEquals(org.scaledl.workload.GradReduce.AFTER_BACKWARD,
                with.apply(off + "\n  overlap_grad_reduce ............................. False").gradReduce());
        String noOptimizer = one.replaceFirst("(?m)^(  use_distributed_optimizer \\.+ )True$", "$1False");
        assertTrue(!noOptimizer.equals(one), "the fixture logs the distributed optimizer");
        assertEquals(org.scaledl.workload.GradReduce.OVERLAPPED, firstJob("plain.log",
                noOptimizer.replaceFirst("(?m)^(  micro_batch_size .*)$", "$1\n" + off)).gradReduce(),
                "ZeRO 0 gathers nothing");
    }

    /** A log captured from a terminal with its colours reads as the plain one (its coloured times were refused). */
    @Test
    void aColouredLogReadsAsThePlainOne() throws IOException {
        List<String> plain = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        List<String> coloured = plain.stream().map(l -> l.replaceAll("(elapsed time per iteration \\(ms\\): )"
                + "([0-9.]+)", "$1\u001b[33m$2\u001b[0m").replace("iteration ", "\u001b[1miteration\u001b[0m ")).toList();
        assertTrue(coloured.stream().anyMatch(l -> l.contains("\u001b[33m")));
        Path c = dir.resolve("coloured.log");
        Files.write(c, coloured);
        TrainingLogs.Run a = TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"), TrainingLogs.DEFAULT_WARMUP)
                .get(0);
        TrainingLogs.Run b = TrainingLogs.read(c, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(a.measuredMs(), b.measuredMs(), 0);
        assertEquals(a.iterations(), b.iterations());
    }

    /**
     * Megatron-DeepSpeed's ZeRO: {@code zero_stage} where {@code deepspeed} is True (a stage 3 job was read as stage 0,
     * its memory twice what it holds); without {@code deepspeed}, Megatron's own flags; a stage that is none refused.
     */
    @Test
    void megatronDeepSpeedsZeroStageIsRead() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        java.util.function.Function<String, TrainingLogs.Job> with = arg -> firstJob("ds.log",
                one.replaceFirst("(?m)^(  micro_batch_size .*)$", "$1\n" + arg));
        assertEquals(3, with.apply("  deepspeed ....................................... True\n"
                + "  zero_stage ...................................... 3").zeroStage());
        int own = TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"), TrainingLogs.DEFAULT_WARMUP).get(0).job()
                .zeroStage();
        assertEquals(own, with.apply("  zero_stage ...................................... 3").zeroStage(),
                "without deepspeed, a zero_stage is not Megatron's: its own flags decide");
        String four = "  deepspeed ....................................... True\n"
                + "  zero_stage ...................................... 4";
        org.scaledl.InvalidInputException bad = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> with.apply(four));
        assertTrue(bad.getMessage().contains("ds.log:")
                && bad.getMessage().contains("zero_stage '4' is not a ZeRO stage"), bad.getMessage());
    }

    /**
     * CUDA graphs: cuda_graph_impl none; local with cuda_graph_scope full_iteration the iteration, else layers;
     * transformer_engine layers; else older enable_cuda_graph (local) or external_cuda_graph (Transformer Engine)
     * True; nothing logged is none; an unknown implementation is refused at its line.
     */
    @Test
    void theCudaGraphsAreReadFromTheArguments() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        java.util.function.Function<String, TrainingLogs.Job> with = arg -> firstJob("graphs.log",
                one.replaceFirst("(?m)^(  micro_batch_size .*)$", "$1\n" + arg));
        assertEquals(CudaGraphs.NONE, TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"),
                TrainingLogs.DEFAULT_WARMUP).get(0).job().cudaGraphs(), "nothing logged: none");
        assertEquals(CudaGraphs.NONE, with.apply("  cuda_graph_impl ................................. none\n"
                + "  enable_cuda_graph ............................... True").cudaGraphs(), "the impl decides");
        assertEquals(CudaGraphs.ITERATION, with.apply("  cuda_graph_impl ................................. local\n"
                + "  cuda_graph_scope ................................ ['full_iteration']").cudaGraphs());
        assertEquals(CudaGraphs.LAYERS, with.apply("  cuda_graph_impl ................................. "
                + "transformer_engine\n  cuda_graph_scope ................................ ['attn', 'moe_router']")
                .cudaGraphs());
        assertEquals(CudaGraphs.LAYERS, with.apply("  enable_cuda_graph ............................... True")
                .cudaGraphs());
        assertEquals(CudaGraphs.LAYERS, with.apply("  cuda_graph_impl ................................. "
                + "transformer_engine\n  cuda_graph_scope ................................ full_iteration")
                .cudaGraphs(), "Transformer Engine's graphs capture modules of a layer, never the iteration");
        assertEquals(CudaGraphs.LAYERS, with.apply("  external_cuda_graph ............................. True\n"
                + "  cuda_graph_scope ................................ full_iteration").cudaGraphs());
        assertEquals(CudaGraphs.ITERATION, with.apply("  enable_cuda_graph ............................... True\n"
                + "  cuda_graph_scope ................................ full_iteration").cudaGraphs());
        org.scaledl.InvalidInputException bad = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class,
                () -> with.apply("  cuda_graph_impl ................................. cupti"));
        assertTrue(bad.getMessage().contains("graphs.log:") && bad.getMessage().contains("cuda_graph_impl 'cupti'"),
                bad.getMessage());
    }

    /**
     * The gradient buffers' type: Megatron-LM's accumulate_allreduce_grads_in_fp32 (Megatron core's
     * grad_reduce_in_fp32) True is FP32, False 16 bits; NeMo 1.x's grad_sync_dtype otherwise; neither logged leaves it
     * to the precision's default; an unknown type is refused naming it.
     */
    @Test
    void theGradientBuffersTypeIsReadFromTheArguments() throws IOException {
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        String logged = "  accumulate_allreduce_grads_in_fp32 .............. True";
        assertTrue(one.contains(logged));
        java.util.function.Function<String, TrainingLogs.Job> with = line -> firstJob("dtype.log",
                one.replace(logged, line));
        assertEquals(Optional.of(false), TrainingLogs.read(LOGS.resolve("megatron-llama3-8b.log"),
                TrainingLogs.DEFAULT_WARMUP).get(0).job().sixteenBitGradients(), "logged True: FP32 buffers");
        assertEquals(Optional.of(true), with.apply(logged.replace("True", "False")).sixteenBitGradients());
        assertEquals(Optional.of(true), with.apply("  grad_reduce_in_fp32 ............................. False")
                .sixteenBitGradients());
        assertEquals(Optional.empty(), with.apply("").sixteenBitGradients(), "not logged: the precision's default");
        assertFalse(with.apply("  overlap_moe_expert_parallel_comm ................ True").expertCommOverlap(),
                "logged True without expert parallelism: nothing to overlap");
        assertEquals(Optional.of(true), with.apply("  grad_sync_dtype ................................. bf16")
                .sixteenBitGradients());
        assertEquals(Optional.of(false), with.apply("  grad_sync_dtype ................................. fp32")
                .sixteenBitGradients());
        org.scaledl.InvalidInputException bad = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class,
                () -> with.apply("  grad_sync_dtype ................................. fp8"));
        assertTrue(bad.getMessage().contains("dtype.log:") && bad.getMessage().contains("grad_sync_dtype 'fp8'"),
                bad.getMessage());
    }

    @Test
    void bridgeStyleYamlDumpWithExpertsBecomesAQwen3MoeConfig() throws IOException {
        StringBuilder b = new StringBuilder("""
                INFO:megatron.core.num_microbatches_calculator:setting number of microbatches to constant 4
                INFO:megatron.core.distributed.distributed_data_parallel:Setting up DistributedDataParallel with \
                config DistributedDataParallelConfig(grad_reduce_in_fp32=True, use_distributed_optimizer=True, \
                use_megatron_fsdp=False, data_parallel_sharding_strategy='no_shard')
                ------- Task Configuration -------
                mixed_precision:
                  bf16: true
                  fp8: null
                model:
                  activation_func:
                    _call_: false
                    _target_: torch.nn.functional.silu
                  add_bias_linear: false
                  context_parallel_size: 1
                  expert_model_parallel_size: 2
                  expert_tensor_parallel_size: null
                  ffn_hidden_size: 4096
                  gated_linear_unit: true
                  hidden_size: 1024
                  kv_channels: 64
                  moe_ffn_hidden_size: 512
                  moe_layer_freq:
                  - 0
                  - 1
                  - 1
                  - 1
                  moe_router_topk: 2
                  normalization: RMSNorm
                  num_attention_heads: 16
                  num_layers: 4
                  num_moe_experts: 8
                  num_query_groups: 4
                  pipeline_model_parallel_size: 1
                  position_embedding_type: rope
                  qk_layernorm: true
                  recompute_granularity: full
                  seq_length: 4096
                  share_embeddings_and_output_weights: false
                  tensor_model_parallel_size: 1
                  vocab_size: 32000
                train:
                  global_batch_size: 32
                  micro_batch_size: 2
                ----------------------------------
                """);
        for (int i = 1; i <= 6; i++) {
            b.append(String.format(java.util.Locale.ROOT, " [2025-10-06 03:27:07] iteration %8d/%8d | consumed samples: %d | elapsed time "
                    + "per iteration (ms): %.1f | learning rate: 1.5E-06 |%n", i, 6, 32 * i, i == 1 ? 9000.0 : 400.0
                    + i));
        }
        Path log = dir.resolve("bridge.log");
        Files.writeString(log, b.toString());
        TrainingLogs.Run r = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0);
        TrainingLogs.Job j = r.job();
        assertEquals(4, j.dataParallel(), "32 / (2 x 4 micro-batches)");
        assertEquals(4, j.microBatches());
        assertEquals(2, j.expert());
        assertEquals(1, j.expertTensor(), "None: the tensor-parallel size");
        assertFalse(j.expertCommOverlap(), "not logged: not overlapped");
        assertEquals(1, j.zeroStage());
        assertEquals(Precision.BF16, j.precision());
        assertEquals(Recompute.FULL, j.recompute());
        assertEquals(4, r.iterations());
        assertEquals(404.5, r.measuredMs(), 1e-9);
        assertTrue(r.device().isEmpty());
        String config = r.config().orElseThrow();
        assertTrue(config.contains("\"model_type\" : \"qwen3_moe\""), config);
        TransformerSpec s = spec(r);
        assertEquals(8, s.moe().orElseThrow().experts());
        assertEquals(2, s.moe().get().topK());
        assertEquals(4, s.kvHeads());
        assertEquals(TransformerSpec.Block.Ffn.DENSE, s.blocks().get(0).ffn(), "moe_layer_freq [0, 1, 1, 1]");
        assertEquals(TransformerSpec.Block.Ffn.MOE, s.blocks().get(1).ffn());
        // the experts' all-to-all overlap, as Megatron core runs it (no full recomputation), and as it refuses it
        String overlapped = b.toString().replace("  num_layers: 4\n", "  num_layers: 4\n"
                + "  overlap_moe_expert_parallel_comm: true\n");
        Files.writeString(log, overlapped.replace("recompute_granularity: full", "recompute_granularity: selective"));
        assertTrue(TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0).job().expertCommOverlap());
        Files.writeString(log, overlapped);
        org.scaledl.InvalidInputException full = assertThrows(org.scaledl.InvalidInputException.class,
                () -> TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(full.getMessage().contains("with full recomputation"), full.getMessage());
        // the whole mixture of experts recomputed with the overlap: refused at the key, as Megatron core refuses it
        Files.writeString(log, overlapped.replace("recompute_granularity: full", "recompute_granularity: selective\n"
                + "  recompute_modules:\n  - moe\n  - layernorm"));
        org.scaledl.InvalidInputException moe = assertThrows(org.scaledl.InvalidInputException.class,
                () -> TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(moe.getMessage().contains("overlap_moe_expert_parallel_comm")
                && moe.getMessage().contains("recompute_modules moe"), moe.getMessage());
        // the token dispatcher: not logged all-to-all; flex with its backend (DeepEP by default); refusals named
        assertEquals(org.scaledl.workload.MoeDispatcher.ALLTOALL, j.moeDispatcher());
        java.util.function.Function<String, TrainingLogs.Job> dispatched = lines -> {
            try {
                Files.writeString(log, b.toString().replace("  num_layers: 4\n", "  num_layers: 4\n" + lines));
            } catch (IOException x) {
                throw new java.io.UncheckedIOException(x);
            }
            return TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0).job();
        };
        assertEquals(org.scaledl.workload.MoeDispatcher.HYBRIDEP, dispatched.apply(
                "  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: hybridep\n").moeDispatcher());
        assertEquals(org.scaledl.workload.MoeDispatcher.DEEPEP, dispatched.apply(
                "  moe_token_dispatcher_type: flex\n").moeDispatcher());
        assertEquals(org.scaledl.workload.MoeDispatcher.ALLGATHER, dispatched.apply(
                "  moe_token_dispatcher_type: allgather\n").moeDispatcher());
        assertEquals(org.scaledl.workload.MoeDispatcher.DEEPEP, dispatched.apply(
                "  moe_token_dispatcher_type: alltoall\n  moe_enable_deepep: true\n").moeDispatcher());
        Files.writeString(log, b.toString().replace("recompute_granularity: full", "recompute_granularity: selective")
                .replace("  num_layers: 4\n", "  num_layers: 4\n  moe_token_dispatcher_type: allgather\n"
                        + "  overlap_moe_expert_parallel_comm: true\n"));
        org.scaledl.InvalidInputException gathered = assertThrows(org.scaledl.InvalidInputException.class,
                () -> TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP));
        assertTrue(gathered.getMessage().contains("allgather token dispatcher"), gathered.getMessage());
        org.scaledl.InvalidInputException nccl = assertThrows(org.scaledl.InvalidInputException.class,
                () -> dispatched.apply("  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: ncclep\n"));
        assertTrue(nccl.getMessage().contains("bridge.log") && nccl.getMessage().contains("moe_flex_dispatcher_backend")
                && nccl.getMessage().contains("not described"), nccl.getMessage());
    }

    @Test
    void logsWithoutIterationsAndControlCharactersAreRefusedPrintably() throws IOException {
        Path empty = dir.resolve("no-iterations.log");
        Files.writeString(empty, "hidden_size: 4096\nnothing else\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(empty,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("no-iterations.log") && e.getMessage().contains("no iteration lines"),
                e.getMessage());
        String one = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        Path hostile = dir.resolve("hostile.log");
        Files.writeString(hostile, one.replaceFirst("hidden_size( \\.+) 4096", "hidden_size$1 40\u001b]0;x\u0007"));
        InvalidInputException h = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(hostile,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(h.getMessage().contains("hidden_size must be a positive integer"), h.getMessage());
        assertTrue(h.getMessage().chars().allMatch(c -> c >= 0x20 && c < 0x7f), h.getMessage());
        Path zero = Path.of("/dev/zero");
        if (Files.isReadable(zero)) {
            InvalidInputException z = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(zero,
                    TrainingLogs.DEFAULT_WARMUP));
            assertTrue(z.getMessage().contains("not a text log"), z.getMessage());
        }
    }

    /** The index of the first of these lines that contains {@code text}. */
    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        throw new AssertionError("no line contains '" + text + "'");
    }

    /**
     * A log of a dense model ({@code num_experts None}) given a mixture of experts' configuration is refused, as the
     * reverse is (Mixtral 8x7B has Llama 3 8B's other sizes); and the configuration's vocabulary must lie within a
     * tenth of the log's padded one (each is the tokenizer's, padded its own way: Qwen's configurations pad beyond
     * Megatron's), which another model's does not.
     */
    @Test
    void aDenseLogIsNoMixtureOfExpertsAndTheConfigsVocabularyMustBeTheLogs() throws IOException {
        Path megatron = LOGS.resolve("megatron-llama3-8b.log");
        Path mixtral = Path.of("src/test/resources/transformers/mixtral-8x7b/config.json");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(megatron,
                TrainingLogs.DEFAULT_WARMUP, mixtral));
        assertTrue(e.getMessage().contains("megatron-llama3-8b.log") && e.getMessage().contains("different model")
                && e.getMessage().contains("num_experts is none (a dense model) in the log, 8 in the configuration")
                && e.getMessage().contains("padded_vocab_size is 128256 in the log, vocab_size 32000 in the "
                + "configuration"), e.getMessage());
        String llama = Files.readString(LLAMA3_8B);
        assertTrue(llama.contains("\"vocab_size\": 128256"));
        // Llama 3 8B with a vocabulary 512 smaller, or padded further by its configuration (as Qwen's are): one model
        for (int vocab : new int[] {127744, 128512, 140000}) {
            Path near = dir.resolve("near" + vocab + "/config.json");
            Files.createDirectories(near.getParent());
            Files.writeString(near, llama.replace("\"vocab_size\": 128256", "\"vocab_size\": " + vocab));
            assertEquals(5050.5, TrainingLogs.read(megatron, TrainingLogs.DEFAULT_WARMUP, near).get(0).measuredMs(),
                    1e-9, "vocab_size " + vocab);
        }
        // a tenth off is another model's
        Path far = dir.resolve("far/config.json");
        Files.createDirectories(far.getParent());
        Files.writeString(far, llama.replace("\"vocab_size\": 128256", "\"vocab_size\": 151936"));
        InvalidInputException off = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(megatron,
                TrainingLogs.DEFAULT_WARMUP, far));
        assertTrue(off.getMessage().contains("padded_vocab_size is 128256 in the log, vocab_size 151936"),
                off.getMessage());
    }

    /**
     * NeMo's step lines say the global batch each ran ({@code global_batch_size: N}), as Megatron's iteration lines
     * do: a run none of whose steps after warm-up ran the job's is refused, and a ramp-up's steps are left out (each
     * NeMo line times its own step, so the first after the ramp stays).
     */
    @Test
    void nemoStepLinesGlobalBatchIsCheckedAndARampUpLeftOut() throws IOException {
        String nemo = Files.readString(LOGS.resolve("nemo-llama3-8b.log"));
        Path log = dir.resolve("nemo-batch.log");
        assertTrue(nemo.contains("| global_batch_size: 64 |"));
        Files.writeString(log, nemo.replace("| global_batch_size: 64 |", "| global_batch_size: 128 |"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log, 1));
        assertTrue(e.getMessage().contains("nemo-batch.log:") && e.getMessage().contains("every iteration after "
                + "warm-up ran a global batch of 128, not global_batch_size 64"), e.getMessage());
        // steps 0-5 of 32 sequences, in half the time: left out
        java.util.regex.Pattern step = java.util.regex.Pattern.compile("iteration (\\d+)/11 .*train_step_timing in s: "
                + "([0-9.]+)");
        List<String> ramp = new java.util.ArrayList<>();
        for (String l : nemo.lines().toList()) {
            java.util.regex.Matcher m = step.matcher(l);
            ramp.add(m.find() && Integer.parseInt(m.group(1)) <= 5 ? l.replace("global_batch_size: 64",
                    "global_batch_size: 32").replace("train_step_timing in s: " + m.group(2),
                    "train_step_timing in s: 1.200") : l);
        }
        Files.write(log, ramp);
        TrainingLogs.Run r = TrainingLogs.read(log, 1).get(0);
        assertEquals(6, r.iterations(), "steps 6-11");
        assertEquals(2420.0, r.measuredMs(), 1e-6, "2.400 .. 2.430 s");
    }

    /**
     * A step line (not a progress bar's redrawing) that repeats its step's number with another time is refused naming
     * both lines (two jobs' lines interleaved lost half of them); the same line twice counts once.
     */
    @Test
    void aRepeatedStepWithAnotherTimeIsRefusedAndTheSameLineTwiceCountsOnce() throws IOException {
        List<String> lines = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        int at = indexOf(lines, "iteration       20/");
        List<String> other = new java.util.ArrayList<>(lines);
        other.add(at + 1, lines.get(at).replaceFirst("per iteration \\(ms\\): [0-9.]+", "per iteration (ms): 9020.5"));
        Path log = dir.resolve("mixed.log");
        Files.write(log, other);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("mixed.log:" + (at + 2) + ": iteration 20 again, 9020.5 ms here but ")
                && e.getMessage().contains(" ms at line " + (at + 1))
                && e.getMessage().contains("two runs' lines mixed in one log?"), e.getMessage());
        List<String> same = new java.util.ArrayList<>(lines);
        same.add(at + 1, lines.get(at));
        Files.write(log, same);
        TrainingLogs.Run r = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(30, r.iterations());
        assertEquals(5050.5, r.measuredMs(), 1e-9);
        // NeMo's step lines likewise
        List<String> nemo = new java.util.ArrayList<>();
        for (String l : Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log"))) {
            nemo.add(l);
            if (l.contains("iteration 3/11")) {
                nemo.add(l.replaceFirst("train_step_timing in s: [0-9.]+", "train_step_timing in s: 9.990"));
            }
        }
        Files.write(log, nemo);
        InvalidInputException n = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log, 1));
        assertTrue(n.getMessage().contains("iteration 3 again, 9990 ms here but 2430 ms at line"), n.getMessage());
    }

    /** Megatron's iteration lines and NeMo's step lines in one run (each step counted twice) are refused. */
    @Test
    void megatronAndNemoLinesInOneRunAreRefused() throws IOException {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        int first = indexOf(lines, "iteration        1/");
        lines.add(first + 1, "[NeMo I] Training epoch 0, iteration 1/40 | global_step: 1 | train_step_timing in s: "
                + "9.001");
        Path log = dir.resolve("formats.log");
        Files.write(log, lines);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("formats.log:" + (first + 2) + ": a NeMo step line")
                && e.getMessage().contains("line " + (first + 1) + " is a Megatron iteration line")
                && e.getMessage().contains("count twice"), e.getMessage());
    }

    /**
     * An iteration line cut short inside the log (its time the last thing on it where the lines beside it go on: a
     * job killed while writing it, then restarted with its arguments) is left out, as one the log ends inside is.
     */
    @Test
    void anIterationLineCutShortInsideTheLogIsLeftOut() throws IOException {
        Path megatron = LOGS.resolve("megatron-llama3-8b.log");
        List<String> lines = Files.readAllLines(megatron);
        String key = "elapsed time per iteration (ms): ";
        int at = indexOf(lines, "iteration       20/");
        List<String> cut = new java.util.ArrayList<>(lines);
        cut.set(at, lines.get(at).substring(0, lines.get(at).indexOf(key) + key.length() + 2));
        List<String> without = new java.util.ArrayList<>(lines);
        without.remove(at);
        Path a = dir.resolve("cut.log");
        Files.write(a, cut);
        Path b = dir.resolve("without.log");
        Files.write(b, without);
        TrainingLogs.Run r = TrainingLogs.read(a, 1).get(0);
        TrainingLogs.Run expected = TrainingLogs.read(b, 1).get(0);
        assertEquals(38, expected.iterations());
        assertEquals(expected.iterations(), r.iterations());
        assertEquals(expected.measuredMs(), r.measuredMs(), 0);
        // a crash at iteration 12, then the job restarted: its first run is iterations 1-11
        int twelve = indexOf(lines, "iteration       12/");
        String crash = String.join("\n", lines.subList(0, twelve)) + "\n" + lines.get(twelve).substring(0,
                lines.get(twelve).indexOf(key) + key.length() + 2) + "\n" + Files.readString(megatron);
        Path c = dir.resolve("crash.log");
        Files.writeString(c, crash);
        Path d = dir.resolve("eleven.log");
        Files.write(d, lines.subList(0, twelve));
        List<TrainingLogs.Run> runs = TrainingLogs.read(c, 1);
        assertEquals(2, runs.size());
        TrainingLogs.Run eleven = TrainingLogs.read(d, 1).get(0);
        assertEquals(10, eleven.iterations());
        assertEquals(eleven.iterations(), runs.get(0).iterations());
        assertEquals(eleven.measuredMs(), runs.get(0).measuredMs(), 0);
    }

    /** A model's size stated twice in a run, differently, is refused at the second, as its layout's is. */
    @Test
    void aModelSizeStatedTwiceDifferentlyIsRefused() throws IOException {
        List<String> lines = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        int at = indexOf(lines, "  num_layers ....");
        List<String> twice = new java.util.ArrayList<>(lines);
        twice.add(at + 1, "  num_layers ...................................... 40");
        Path log = dir.resolve("twice.log");
        Files.write(log, twice);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                TrainingLogs.DEFAULT_WARMUP));
        assertTrue(e.getMessage().contains("twice.log:" + (at + 2) + ": num_layers 40 here, but 32 at line "
                + (at + 1) + ": the run states its model twice, differently"), e.getMessage());
        twice.set(at + 1, "  num_layers ...................................... 32");
        Files.write(log, twice);
        assertEquals(5050.5, TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0).measuredMs(), 1e-9);
    }

    /** A time in Java's number syntax ({@code 0x1p1}, {@code 2.41d}, {@code 2.41f}) is refused; a decimal is read. */
    @Test
    void javasNumberSyntaxIsNoIterationTime() throws IOException {
        String nemo = Files.readString(LOGS.resolve("nemo-llama3-8b.log"));
        assertTrue(nemo.contains("train_step_timing in s: 2.410 "));
        Path log = dir.resolve("java.log");
        for (String x : List.of("0x1p1", "2.41d", "2.41f", "Infinity")) {
            Files.writeString(log, nemo.replace("train_step_timing in s: 2.410 ", "train_step_timing in s: " + x
                    + " "));
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                    TrainingLogs.DEFAULT_WARMUP), x);
            assertTrue(e.getMessage().contains("java.log:") && e.getMessage().contains("iteration time '" + x
                    + "' s is not a number"), e.getMessage());
        }
        Files.writeString(log, nemo.replace("train_step_timing in s: 2.410 ", "train_step_timing in s: 2.41e+00 "));
        assertEquals(2415.0, TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0).measuredMs(), 1e-6);
    }

    /** A log in UTF-16 without its byte-order mark, or in UTF-32, is refused saying to convert it to UTF-8. */
    @Test
    void aUtf16LogWithoutItsMarkOrAUtf32LogIsRefusedSayingToConvertIt() throws IOException {
        String text = Files.readString(LOGS.resolve("megatron-llama3-8b.log"));
        Object[][] cases = {
            {StandardCharsets.UTF_16LE, "", "UTF-16LE"}, {StandardCharsets.UTF_16BE, "", "UTF-16BE"},
            {java.nio.charset.Charset.forName("UTF-32LE"), "", "UTF-32LE"},
            {java.nio.charset.Charset.forName("UTF-32LE"), "\uFEFF", "UTF-32LE"},
            {java.nio.charset.Charset.forName("UTF-32BE"), "", "UTF-32BE"},
        };
        for (Object[] c : cases) {
            Path log = dir.resolve("wide.log");
            Files.write(log, (c[1] + text).getBytes((java.nio.charset.Charset) c[0]));
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                    TrainingLogs.DEFAULT_WARMUP), c[2] + " " + c[1].toString().length());
            assertTrue(e.getMessage().contains("wide.log") && e.getMessage().contains("look like " + c[2] + " text")
                    && e.getMessage().contains("convert it to UTF-8"), e.getMessage());
        }
        Path plain = dir.resolve("plain.log");
        Files.writeString(plain, "hello\nloss went down\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(plain,
                TrainingLogs.DEFAULT_WARMUP));
        assertFalse(e.getMessage().contains("UTF-"), e.getMessage());
    }

    /**
     * A short log drops a third of its iterations, rounded up: of 5, the first 2 (a start-up of two iterations, the
     * second 25,000 ms, stayed in the median's iterations when one was dropped).
     */
    @Test
    void aShortLogDropsAThirdRoundedUp() throws IOException {
        List<String> lines = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        List<String> five = new java.util.ArrayList<>(lines.subList(0, indexOf(lines, "iteration        6/")));
        int second = indexOf(five, "iteration        2/");
        five.set(second, five.get(second).replaceFirst("per iteration \\(ms\\): [0-9.]+",
                "per iteration (ms): 25000.0"));
        Path log = dir.resolve("five.log");
        Files.write(log, five);
        TrainingLogs.Run r = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(2, r.warmup());
        assertEquals(3, r.iterations());
        assertEquals(5060.5, r.measuredMs(), 1e-9, "iterations 3-5: 5100.5, 5060.5, 5020.5 ms");
    }

    /**
     * An iteration line timed in another unit than Megatron's milliseconds (a fork's, or an edited log's) was left out
     * in silence, so a log timed half in ms and half in s was read as its ms half: refused at its line.
     */
    @Test
    void anIterationLineInAnotherUnitIsRefusedAtItsLine() throws IOException {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        int at = -1;
        for (int i = lines.size() - 1; i >= 0 && at < 0; i--) {
            if (lines.get(i).contains("elapsed time per iteration (ms): ")) {
                at = i;
            }
        }
        lines.set(at, lines.get(at).replace("elapsed time per iteration (ms): ", "elapsed time per iteration (s): "));
        Path log = dir.resolve("units.log");
        Files.write(log, lines);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                TrainingLogs.DEFAULT_WARMUP));
        assertEquals(at + 1, e.line(), e.getMessage());
        assertTrue(e.getMessage().contains("an iteration line timed in 's'"), e.getMessage());
    }

    /**
     * A start that failed before its first iteration (out of memory), restarted with another micro-batch: what ran is
     * the restart's arguments, not the two blocks merged (the first block's micro-batch was taken, with a warning, and
     * the job predicted at twice the micro-batches it ran), whether or not the failed start's block has its end line.
     */
    @Test
    void aStartThatRanNoIterationGivesWayToTheRestartsArguments() throws Exception {
        List<String> log = Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log"));
        int end = log.indexOf("-------------------- end of arguments ---------------------");
        List<String> failed = log.subList(0, end + 1).stream()
                .map(l -> l.replace("micro_batch_size ................................ 1",
                        "micro_batch_size ................................ 4"))
                .toList();
        List<String> restart = log.stream()
                .map(l -> l.replace("micro_batch_size ................................ 1",
                        "micro_batch_size ................................ 2")
                        .replace("constant 16", "constant 8"))
                .toList();
        for (boolean closed : new boolean[] {true, false}) {
            List<String> lines = new java.util.ArrayList<>(closed ? failed : failed.subList(0, failed.size() - 1));
            lines.add("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB");
            lines.addAll(restart);
            Path p = dir.resolve("restarted-" + closed + ".log");
            Files.write(p, lines);
            List<TrainingLogs.Run> runs = TrainingLogs.read(p, TrainingLogs.DEFAULT_WARMUP);
            assertEquals(1, runs.size(), "closed " + closed);
            TrainingLogs.Job j = runs.get(0).job();
            assertEquals(2, j.microBatch(), "closed " + closed);
            assertEquals(8, j.microBatches(), "closed " + closed);
            assertEquals(8, j.dataParallel(), "the restart's preamble and block: closed " + closed);
            assertEquals(5050.5, runs.get(0).measuredMs(), 1e-9);
        }
        // a launcher that logs every rank writes the block twice, the preamble once: the preamble is still the run's
        int header = log.indexOf("------------------------ arguments ------------------------");
        List<String> twice = new java.util.ArrayList<>(log.subList(0, header));
        twice.addAll(List.of("trainer:", "  devices: 4", "  num_nodes: 16"));
        twice.addAll(log.subList(header, end + 1));
        twice.addAll(log.subList(header, log.size()));
        Path p = dir.resolve("twice.log");
        Files.write(p, twice);
        TrainingLogs.Job j = TrainingLogs.read(p, TrainingLogs.DEFAULT_WARMUP).get(0).job();
        assertEquals(Optional.of(4), j.gpusPerNode());
        assertEquals(16, j.microBatches());
        // a run, then a restart that crashed again before its first iteration: the run is read, the restart left out
        // (the whole log was refused: "run 2: no iteration lines"); a restart's run starts at its own block
        List<String> crashed = new java.util.ArrayList<>(log);
        crashed.addAll(failed);
        Path c = dir.resolve("crashed.log");
        Files.write(c, crashed);
        List<TrainingLogs.Run> read = TrainingLogs.read(c, TrainingLogs.DEFAULT_WARMUP);
        assertEquals(1, read.size());
        assertEquals(5050.5, read.get(0).measuredMs(), 1e-9);
        Path restarted = dir.resolve("restarted-true.log");
        assertEquals(failed.size() + 4, TrainingLogs.read(restarted, TrainingLogs.DEFAULT_WARMUP).get(0).line(),
                "the restart's header: after the failed block, the error and the restart's two preamble lines");
        // NeMo's likewise: a restart that dumped its configuration and crashed before its first step is left out
        // (the whole log was refused: "run 2 (from line 30): no iteration lines")
        List<String> nemo = Files.readAllLines(LOGS.resolve("nemo-llama3-8b.log"));
        int firstStep = 0;
        while (!nemo.get(firstStep).startsWith("Training epoch 0,")) {
            firstStep++;
        }
        List<String> nemoCrashed = new java.util.ArrayList<>(nemo);
        nemoCrashed.addAll(nemo.subList(0, firstStep));
        nemoCrashed.add("torch.OutOfMemoryError: CUDA out of memory.");
        Path n = dir.resolve("nemo-crashed.log");
        Files.write(n, nemoCrashed);
        List<TrainingLogs.Run> nemoRead = TrainingLogs.read(n, TrainingLogs.DEFAULT_WARMUP);
        TrainingLogs.Run whole = TrainingLogs.read(LOGS.resolve("nemo-llama3-8b.log"), TrainingLogs.DEFAULT_WARMUP)
                .get(0);
        assertEquals(1, nemoRead.size());
        assertEquals(whole.measuredMs(), nemoRead.get(0).measuredMs(), 0);
        assertEquals(whole.job(), nemoRead.get(0).job());
        // and two such restarts in a row (the whole log was refused)
        nemoCrashed.addAll(nemo.subList(0, firstStep));
        nemoCrashed.add("torch.OutOfMemoryError: CUDA out of memory.");
        Files.write(n, nemoCrashed);
        List<TrainingLogs.Run> crashedTwice = TrainingLogs.read(n, TrainingLogs.DEFAULT_WARMUP);
        assertEquals(1, crashedTwice.size());
        assertEquals(whole.measuredMs(), crashedTwice.get(0).measuredMs(), 0);
    }

    /** A log whose arguments say fp16 and bf16 both True is refused at the line (it was read as BF16). */
    @Test
    void fp16AndBf16BothTrueAreRefused(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        int fp16 = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).trim().startsWith("fp16 ...")) {
                lines.set(i, lines.get(i).replace("False", "True"));
                fp16 = i + 1;
            }
        }
        assertTrue(fp16 > 0);
        Path both = dir.resolve("both.log");
        Files.write(both, lines);
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> TrainingLogs.read(both, 1).get(0).job());
        assertTrue(e.getMessage().contains("both.log:" + fp16 + ": fp16 and bf16 both True"), e.getMessage());
    }

    /** The Llama 3 8B log with its argument lines {@code key value} set (added after hidden_size where absent). */
    private static Path withArguments(Path dir, String name, String... keyValues) throws Exception {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        for (int k = 0; k < keyValues.length; k += 2) {
            String line = "  " + keyValues[k] + " ............................................. " + keyValues[k + 1];
            int at = -1;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).startsWith("  " + keyValues[k] + " ...")) {
                    at = i;
                }
            }
            if (at >= 0) {
                lines.set(at, line);
            } else {
                lines.add(indexOf(lines, "  hidden_size ...") + 1, line);
            }
        }
        Path out = dir.resolve(name);
        Files.write(out, lines);
        return out;
    }

    /**
     * The attention core as the log says it ran: Megatron's local core without the legacy flash attention unfused,
     * Transformer Engine's fused; the written configuration says it ({@code _attn_implementation}), and a given
     * configuration that says otherwise is refused, naming the key that would say it (a log of an unfused run was
     * predicted with the fused core, and a log of a flash-attention GPT-2 with the unfused one, without a word).
     */
    @Test
    void theAttentionCoreIsReadAsTheLogSaysItRan() throws Exception {
        TrainingLogs.Run local = TrainingLogs.read(withArguments(dir, "local.log", "transformer_impl", "local",
                "use_flash_attn", "False"), TrainingLogs.DEFAULT_WARMUP).get(0);
        assertTrue(local.config().get().contains("\"_attn_implementation\" : \"eager\""), local.config().get());
        assertFalse(spec(local).fusedAttention());
        TrainingLogs.Run te = TrainingLogs.read(withArguments(dir, "te.log", "transformer_impl", "transformer_engine"),
                TrainingLogs.DEFAULT_WARMUP).get(0);
        assertTrue(spec(te).fusedAttention());
        TrainingLogs.Run flash = TrainingLogs.read(withArguments(dir, "flash.log", "transformer_impl", "local",
                "use_flash_attn", "True"), TrainingLogs.DEFAULT_WARMUP).get(0);
        assertTrue(spec(flash).fusedAttention());
        TrainingLogs.Run unfused = TrainingLogs.read(withArguments(dir, "backend.log", "transformer_impl",
                "transformer_engine", "attention_backend", "AttnBackend.unfused"), TrainingLogs.DEFAULT_WARMUP).get(0);
        assertFalse(spec(unfused).fusedAttention());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(
                withArguments(dir, "given.log", "transformer_impl", "local", "use_flash_attn", "False"),
                TrainingLogs.DEFAULT_WARMUP, LLAMA3_8B));
        assertTrue(e.getMessage().contains("unfused") && e.getMessage().contains("_attn_implementation"),
                e.getMessage());
    }

    /**
     * A given configuration is compared with the log's feed-forward (its size, whether it is gated) and whether the
     * output layer is tied to the embedding, as it is with the hidden size and the layers (they were accepted unsaid).
     */
    @Test
    void aGivenConfigurationOfAnotherFeedForwardOrHeadIsRefused() throws Exception {
        String[][] cases = {
            {"ffn_hidden_size", "11008", "ffn_hidden_size is 11008 in the log, 14336"},
            {"swiglu", "False", "the feed-forward is not gated in the log, gated"},
            {"untie_embeddings_and_output_weights", "False", "the output layer is the embedding's in the log"},
        };
        for (String[] c : cases) {
            Path log = withArguments(dir, c[0] + ".log", c[0], c[1]);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> TrainingLogs.read(log,
                    TrainingLogs.DEFAULT_WARMUP, LLAMA3_8B), c[0]);
            assertTrue(e.getMessage().contains(c[2]), e.getMessage());
        }
        // a gated feed-forward of another activation (Megatron core's gated_linear_unit with GELU, as Gemma's and
        // GPT-OSS's recipes run it) is gated: not refused for its gating
        Path geglu = withArguments(dir, "geglu.log", "swiglu", "False", "gated_linear_unit", "True",
                "activation_func", "gelu");
        assertEquals(1, TrainingLogs.read(geglu, TrainingLogs.DEFAULT_WARMUP, LLAMA3_8B).size());
    }

    /**
     * Without the tokenizer's "padded vocab" line, the vocabulary is taken as logged (the frameworks pad it
     * differently: Megatron-LM to a multiple of make_vocab_size_divisible_by times the tensor-parallel degree, NeMo 2
     * and Megatron-Bridge not unless told), and where Megatron-LM would pad it, said.
     */
    @Test
    void aVocabularyWithoutItsPaddedLineIsTakenAsLogged() throws Exception {
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOGS.resolve("megatron-llama3-8b.log")));
        lines.removeIf(l -> l.contains("padded vocab"));
        lines.replaceAll(l -> l.startsWith("  vocab_size ...") ? "  vocab_size ...... 128001" : l);
        Path log = dir.resolve("vocab.log");
        Files.write(log, lines);
        TrainingLogs.Run r = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP).get(0);
        assertEquals(128001, spec(r).vocab());
        assertEquals("128001", r.arguments().get("vocab_size"));
    }
}
