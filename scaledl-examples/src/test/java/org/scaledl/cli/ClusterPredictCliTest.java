package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.cli.MainTest.Run;

/**
 * {@code predict} on GPU clusters with the bundled {@code gpu} predictor, through the interfaces the large-model and
 * GPU issues name: the candidate columns of a Megatron job table, one job from a Hugging Face configuration, and the
 * JSON keys of one prediction.
 */
class ClusterPredictCliTest {
    static final String A100 = "NVIDIA A100-SXM4-80GB";
    /** GPT-3 175B (Brown et al. 2020) as a Hugging Face GPT-2 configuration. */
    static final String GPT3 = "{\"model_type\": \"gpt2\", \"n_embd\": 12288, \"n_head\": 96, \"n_layer\": 96, "
            + "\"n_positions\": 2048, \"vocab_size\": 50257, \"activation_function\": \"gelu_new\"}";
    /** A small Mixtral-shaped mixture of experts (8 experts, top 2, 8 layers of hidden 1,024): fast to predict. */
    static final String SMALL_MOE = "{\"model_type\": \"mixtral\", \"hidden_size\": 1024, \"intermediate_size\": "
            + "2048, \"num_attention_heads\": 16, \"num_key_value_heads\": 4, \"num_hidden_layers\": 8, "
            + "\"vocab_size\": 32000, \"num_local_experts\": 8, \"num_experts_per_tok\": 2, "
            + "\"max_position_embeddings\": 4096}";
    static final String HEADER = "name,transformer,seq,batch,micro_batches,world_size,tensor,pipeline,device,"
            + "gpus_per_node,inter_node_gbps,precision,recompute,sequence_parallel,phase";

    static Path config(Path dir) throws Exception {
        Path c = dir.resolve("gpt3/config.json");
        Files.createDirectories(c.getParent());
        Files.writeString(c, GPT3);
        return c;
    }

    /** The repository's converted published runs ({@code datasets/gpu/llm-public}). */
    private static Path published() {
        return MainTest.graph("x").getParent().getParent().getParent().resolve("gpu/llm-public");
    }

    /** A predict command's JSON, the command (with {@code --json}) and more arguments run, exit 0 asserted. */
    private static JsonNode json(List<String> command, String... more) {
        List<String> a = new java.util.ArrayList<>(command);
        a.addAll(List.of(more));
        Run r = MainTest.run(a.toArray(new String[0]));
        assertEquals(0, r.code(), r.err());
        try {
            return new ObjectMapper().readTree(r.out());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The rows of a scored CSV by their {@code name}, as column maps. */
    static Map<String, Map<String, String>> rows(Path csv) throws Exception {
        List<String> lines = Files.readAllLines(csv);
        List<String> header = Arrays.asList(lines.get(0).split(","));
        Map<String, Map<String, String>> out = new HashMap<>();
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split(",", -1);
            Map<String, String> m = new HashMap<>();
            for (int i = 0; i < header.size(); i++) {
                m.put(header.get(i), f[i]);
            }
            out.put(m.get("name"), m);
        }
        return out;
    }

    /**
     * Scores a candidate table, written as {@code dir/jobs.csv}, with the bundled {@code gpu} model into
     * {@code dir/scored.csv} (exit 0 asserted); its rows by name.
     */
    private static Map<String, Map<String, String>> scored(Path dir, String table) throws Exception {
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, table);
        Path scored = dir.resolve("scored.csv");
        Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out", scored.toString());
        assertEquals(0, r.code(), r.err());
        return rows(scored);
    }

    /**
     * Four GPT-3 175B jobs on A100s as {@code dir/jobs.csv} (with the configuration): 3D-parallel with full and with
     * selective recomputation, data-parallel alone, and 3D-parallel on a slow network.
     */
    private static Path gpt3Jobs(Path dir) throws Exception {
        config(dir);
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, String.join("\n", HEADER,
                "t8p8d8,gpt3/config.json,2048,1,64,8,8,8," + A100 + ",8,1600,fp16,full,false,train",
                "t8p8d8-sp,gpt3/config.json,2048,1,64,8,8,8," + A100 + ",8,1600,fp16,selective,true,train",
                "dp8,gpt3/config.json,2048,1,8,8,1,1," + A100 + ",8,1600,fp16,full,false,train",
                "t8p8d8-slow-net,gpt3/config.json,2048,1,64,8,8,8," + A100 + ",8,100,fp16,full,false,train") + "\n");
        return jobs;
    }

    /**
     * {@code inspect --transformer} reads a configuration: its compact graph's layers, each with how many times it
     * repeats, and totals over every copy (the parameters the configuration's count gives); it refuses a second thing
     * to inspect and a sequence length without a configuration.
     */
    @Test
    void inspectReadsATransformersConfiguration() throws Exception {
        Path cfg = published().getParent().getParent().getParent()
                .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");
        Run r = MainTest.run("inspect", "--transformer", cfg.toString(), "--seq", "2048", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());
        assertEquals(org.scaledl.transformer.HuggingFaceConfig.read(cfg).parameterCount(),
                root.get("totals").get("params").asLong());
        double fwd = 0;
        int most = 0;
        for (JsonNode l : root.get("layers")) {
            fwd += l.get("flops_fwd").asDouble() * l.get("repeats").asInt();
            most = Math.max(most, l.get("repeats").asInt());
        }
        assertEquals(32, most, "a block stands for the 32 layers");
        assertEquals(fwd, root.get("totals").get("flops_fwd").asDouble(), 1e-9 * fwd);
        Run text = MainTest.run("inspect", "--transformer", cfg.getParent().toString(), "--seq", "2048");
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().contains("standing for 32 transformer layers") && text.out().contains("repeats"),
                text.out());
        Run both = MainTest.run("inspect", cfg.toString(), "--transformer", cfg.toString(), "--seq", "2048");
        assertNotEquals(0, both.code());
        assertTrue(both.err().contains("give one of an ONNX file, --transformer and --model"), both.err());
        Run seqAlone = MainTest.run("inspect", "--seq", "2048");
        assertNotEquals(0, seqAlone.code());
        assertTrue(seqAlone.err().contains("--seq is the sequence length of --transformer"), seqAlone.err());
    }

    /**
     * Gemma 4's 512-wide full-attention heads are predicted with an unfused core, as Transformer Engine runs them,
     * and stderr says so; a copy of its configuration naming PyTorch's kernels ({@code sdpa}), which take such heads
     * fused, is predicted faster and in less memory and says nothing of it; {@code --json}'s {@code memory} gives the
     * parts that {@code memory_gb} adds up.
     */
    @Test
    void wideHeadsAreUnfusedUnlessTheConfigurationNamesKernelsThatTakeThem(@TempDir Path dir) throws Exception {
        Path gemma = published().getParent().getParent().getParent()
                .resolve("scaledl-core/src/test/resources/transformers/gemma-4-31b/config.json");
        Path sdpa = dir.resolve("gemma-4-31b-sdpa/config.json");
        Files.createDirectories(sdpa.getParent());
        String cfg = Files.readString(gemma);
        Files.writeString(sdpa, cfg.replaceFirst("\\{", "{\n  \"_attn_implementation\": \"sdpa\","));
        List<String> job = List.of("predict", "--model", "gpu", "--seq", "8192", "--batch", "1", "--micro-batches",
                "8", "--gpus", "64", "--tensor", "4", "--device", "H100", "--precision", "bf16", "--recompute", "full",
                "--json", "--transformer");
        String said = "attention heads of 512 are wider than fused attention kernels train (256 at most";
        Run te = MainTest.run(java.util.stream.Stream.concat(job.stream(), java.util.stream.Stream.of(
                gemma.toString())).toArray(String[]::new));
        assertEquals(0, te.code(), te.err());
        assertTrue(te.err().contains(said), te.err());
        Run fused = MainTest.run(java.util.stream.Stream.concat(job.stream(), java.util.stream.Stream.of(
                sdpa.toString())).toArray(String[]::new));
        assertEquals(0, fused.code(), fused.err());
        assertFalse(fused.err().contains("wider than fused"), fused.err());
        JsonNode a = new ObjectMapper().readTree(te.out());
        JsonNode b = new ObjectMapper().readTree(fused.out());
        assertTrue(a.get("ms").asDouble() > b.get("ms").asDouble(), a.get("ms") + " vs " + b.get("ms"));
        assertTrue(a.get("memory_gb").asDouble() > b.get("memory_gb").asDouble(),
                a.get("memory_gb") + " vs " + b.get("memory_gb"));
        // the memory's parts add up to it (the runtime's gigabyte among them), the stage one of the pipeline's
        for (JsonNode n : List.of(a, b)) {
            JsonNode m = n.get("memory");
            double sum = m.get("states_gb").asDouble() + m.get("low_precision_copies_gb").asDouble()
                    + m.get("activations_gb").asDouble() + m.get("logits_gb").asDouble()
                    + m.get("runtime_gb").asDouble();
            assertEquals(n.get("memory_gb").asDouble(), sum, 1e-9 * sum, m.toString());
            assertTrue(m.get("stage").asInt() >= 1 && m.get("stage").asInt() <= m.get("stages").asInt()
                    && m.get("runtime_gb").asDouble() == 1.0 && m.get("activations_gb").asDouble() > 0,
                    m.toString());
        }
    }

    /**
     * A GPU model's plan says what its runs will calibrate: fewer than {@code MegatronFit.TERM_RUNS} (with the runs
     * already measured) move one level, so the plan says so; the chosen rows are candidates of the table.
     */
    @Test
    void aClusterPlanSaysWhatItsRunsCalibrate(@TempDir Path dir) throws Exception {
        Path jobs = gpt3Jobs(dir);
        Run r = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3");
        assertEquals(0, r.code(), r.err());
        // the pure data-parallel GPT-3 175B on 8 GPUs does not fit: no run to plan
        assertTrue(r.err().contains("1 of 4 candidate jobs left out of the plan: predicted not to fit in their GPUs' "
                + "memory"), r.err());
        assertTrue(r.out().contains("chosen rows (0-based): [0, 1, 3]"), r.out());
        assertTrue(r.out().contains("chose 3 of 3 candidate jobs that fit in memory")
                && r.out().contains("3 runs calibrate one level")
                && r.out().contains("8 or more refit the execution terms too, where that predicts them held out "
                + "better"), r.out());
        Run one = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "1");
        assertTrue(one.out().contains("1 run calibrates one level"), one.out());
        Run four = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "4");
        assertEquals(Main.USAGE, four.code());
        assertTrue(four.err().contains("--runs must be in 1..3 (the candidates that fit in memory), got 4"),
                four.err());
        // a table of jobs none of which fits plans nothing, and says why
        Path oom = dir.resolve("oom.csv");
        List<String> rows = Files.readAllLines(jobs);
        Files.write(oom, List.of(rows.get(0), rows.stream().filter(x -> x.startsWith("dp8,")).findFirst()
                .orElseThrow()));
        Run none = MainTest.run("plan", "--model", "gpu", "--candidates", oom.toString(), "--runs", "1");
        assertEquals(Main.BAD_INPUT, none.code());
        assertTrue(none.err().contains("oom.csv: its one candidate job does not fit in its GPUs' memory"), none.err());
    }

    @Test
    void aMegatronJobTableIsScoredWithEveryColumnKeptAndMemoryPerGpu(@TempDir Path dir) throws Exception {
        Path jobs = gpt3Jobs(dir);
        Path scored = dir.resolve("scored.csv");
        Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out", scored.toString());
        assertEquals(0, r.code(), r.err());
        List<String> header = Arrays.asList(Files.readAllLines(scored).get(0).split(","));
        List<String> expected = new java.util.ArrayList<>(Arrays.asList(HEADER.split(",")));
        expected.addAll(List.of("predicted_ms", "low_ms", "high_ms", "memory_gb", "tokens_per_s_per_gpu",
                "model_tflops_per_gpu", "warnings"));
        assertEquals(expected, header);
        Map<String, Map<String, String>> rows = rows(scored);
        assertEquals(4, rows.size());
        for (Map<String, String> row : rows.values()) {
            double ms = Double.parseDouble(row.get("predicted_ms"));
            assertTrue(Double.parseDouble(row.get("low_ms")) <= ms && ms <= Double.parseDouble(row.get("high_ms")),
                    row.toString());
            assertTrue(Double.parseDouble(row.get("memory_gb")) > 0, row.toString());
            assertEquals(A100, row.get("device"));
        }
        // 175B parameters with mixed-precision Adam (16 bytes each) on 8 GPUs without model parallelism
        Map<String, String> dp8 = rows.get("dp8");
        assertTrue(Double.parseDouble(dp8.get("memory_gb")) > 80 * 16 / 8.0 * 0.9, dp8.toString());
        assertTrue(dp8.get("warnings").contains("out_of_memory"), dp8.toString());
        Map<String, String> fits = rows.get("t8p8d8");
        assertTrue(Double.parseDouble(fits.get("memory_gb")) < 80, fits.toString());
        assertFalse(fits.get("warnings").contains("out_of_memory"), fits.toString());
        // a network a sixteenth as fast cannot make the job faster
        assertTrue(Double.parseDouble(rows.get("t8p8d8-slow-net").get("predicted_ms"))
                > Double.parseDouble(fits.get("predicted_ms")));
        // selective recomputation does less work than full
        assertTrue(Double.parseDouble(rows.get("t8p8d8-sp").get("predicted_ms"))
                < Double.parseDouble(fits.get("predicted_ms")));
    }

    @Test
    void oneJobFromItsConfigurationAgreesWithItsTableRowAndHasTheDocumentedJson(@TempDir Path dir) throws Exception {
        Path cfg = config(dir);
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, HEADER + "\nj,gpt3/config.json,2048,2,32,4,8,8," + A100
                + ",8,1600,fp16,full,false,train\n");
        Path scored = dir.resolve("scored.csv");
        assertEquals(0, MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                scored.toString()).code());
        Map<String, String> row = rows(scored).get("j");
        Run r = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "2", "--micro-batches", "32", "--world-size", "4", "--tensor", "8", "--pipeline", "8",
                "--device", A100, "--gpus-per-node", "8", "--inter-node-gbps", "1600", "--precision", "fp16",
                "--recompute", "full", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        for (String key : List.of("ms", "low_ms", "high_ms", "throughput_per_s", "memory_gb", "warnings",
                "breakdown", "workload", "machine")) {
            assertTrue(j.has(key), key + " missing: " + r.out());
        }
        double ms = j.get("ms").asDouble();
        assertEquals(Double.parseDouble(row.get("predicted_ms")), ms, 1e-3);
        assertEquals(Double.parseDouble(row.get("memory_gb")), j.get("memory_gb").asDouble(), 1e-3);
        // 2 sequences x 32 micro-batches x 4 replicas per iteration
        assertEquals(2 * 32 * 4 / (ms / 1000), j.get("throughput_per_s").asDouble(), 1e-6 * j.get(
                "throughput_per_s").asDouble());
        assertEquals(256, j.get("workload").get("samples_per_iteration").asLong());
        assertTrue(j.get("machine").asText().contains("256 GPUs (" + A100 + ")"), j.get("machine").asText());
        assertFalse(j.get("machine").asText().contains("assumed"), j.get("machine").asText());
    }

    /**
     * A mixture of experts whose host dispatch outlasts its GPUs' work does not run at the host's pace: the host waits
     * for the GPUs in every expert layer, so the two partly add, and the note says so with the time it adds (the
     * breakdown's host dispatch), not that the host sets the pace.
     */
    @Test
    void aMixtureOfExpertsWhoseHostOutlastsItsGpusSaysTheyAdd() throws Exception {
        Run r = MainTest.run("predict", "--model", "gpu", "--transformer", published().resolve(
                "configs/qwen3-30b-a3b/config.json").toString(), "--seq", "4096", "--batch", "1", "--global-batch",
                "512", "--gpus", "64", "--expert", "8", "--zero-stage", "1", "--device", "GB200", "--precision",
                "mxfp8", "--json");
        assertEquals(0, r.code(), r.err());
        assertFalse(r.err().contains("sets the pace"), r.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("the host's kernel dispatch \\(([0-9.]+) ms: .*"
                + "is longer than the GPUs' work \\(([0-9.]+) ms\\).*partly add: ([0-9.]+) ms more").matcher(r.err());
        assertTrue(m.find(), r.err());
        double dispatch = Double.parseDouble(m.group(1));
        double gpu = Double.parseDouble(m.group(2));
        double added = Double.parseDouble(m.group(3));
        assertTrue(dispatch > gpu && added > dispatch - gpu, r.err());
        com.fasterxml.jackson.databind.JsonNode j = new ObjectMapper().readTree(r.out());
        double ms = j.get("ms").asDouble();
        // the step is the GPUs' time, what the host adds, and the few additive terms (the optimizer's step)
        assertTrue(ms >= gpu + added - 0.01 && ms < gpu + added + 0.01 * ms, ms + " ms: " + r.err());
    }

    /**
     * Every architecture the published runs' {@code models.csv} describes has its configuration in
     * {@code datasets/gpu/llm-public/configs} (named by a run or not: Qwen3 MoE, Qwen3-Next, Llama 4 Maverick, Nemotron
     * 3/4, the Megatron-LM scaling table's GPTs), and each is predicted on a node of 8 H100s: tables of the same
     * sources can name any of them. The models without a published architecture (blank sizes) and Nemotron 3 Ultra
     * (no layer pattern) are the exceptions the converter documents.
     */
    @Test
    void everyArchitectureOfThePublishedRunsIsPredicted(@TempDir Path dir) throws Exception {
        Path published = published();
        List<String> keys = new java.util.ArrayList<>();
        for (String line : Files.readAllLines(published.resolve("models.csv"))) {
            String[] f = line.split(",", -1);
            if (line.startsWith("#") || f[0].equals("model_key") || f[0].equals("bloom-arch-sweep")
                    || f[0].equals("nemotron-3-ultra-550b-a55b") || f.length < 6 || f[5].isBlank()) {
                continue;
            }
            keys.add(f[0]);
        }
        assertTrue(keys.size() >= 35, keys.toString());
        StringBuilder table = new StringBuilder("name,transformer,seq,batch,micro_batches,world_size,expert,device,"
                + "precision\n");
        for (String k : keys) {
            Path cfg = published.resolve("configs/" + k + "/config.json");
            assertTrue(Files.isRegularFile(cfg), "no configuration for " + k);
            Files.createDirectories(dir.resolve(k));
            Files.copy(cfg, dir.resolve(k + "/config.json"));
            String experts = new ObjectMapper().readTree(cfg.toFile()).findValue("model_type").asText()
                    .matches("gpt2|llama|qwen2|nemotron") ? "1" : "8";
            table.append(k).append(',').append(k).append("/config.json,2048,1,8,8,").append(experts)
                    .append(",H100 SXM,bf16\n");
        }
        Map<String, Map<String, String>> rows = scored(dir, table.toString());
        assertEquals(keys.size(), rows.size());
        for (Map<String, String> row : rows.values()) {
            double ms = Double.parseDouble(row.get("predicted_ms"));
            assertTrue(ms > 0 && Double.isFinite(ms) && Double.parseDouble(row.get("low_ms")) <= ms
                    && ms <= Double.parseDouble(row.get("high_ms")), row.toString());
        }
    }

    /**
     * A mixture of experts carries the wider interval its own held-out errors gave the bundled model (mixtures of
     * experts of a family never fitted were predicted less surely than dense models): the same node, precision and
     * batch, Mixtral's interval reaches further than Llama 3's on both sides.
     */
    @Test
    void mixturesOfExpertsCarryTheirOwnWiderInterval() throws Exception {
        Path configs = published().resolve("configs");
        double[][] ratio = new double[2][];
        String[] models = {"llama3-8b", "mixtral-8x7b"};
        for (int i = 0; i < 2; i++) {
            Run r = MainTest.run("predict", "--model", "gpu", "--transformer", configs.resolve(models[i]
                    + "/config.json").toString(), "--seq", "4096", "--batch", "1", "--micro-batches", "16",
                    "--world-size", "8", "--expert", i == 0 ? "1" : "8", "--device", "H100 SXM", "--precision",
                    "bf16", "--json");
            assertEquals(0, r.code(), r.err());
            JsonNode j = new ObjectMapper().readTree(r.out());
            ratio[i] = new double[] {j.get("low_ms").asDouble() / j.get("ms").asDouble(),
                j.get("high_ms").asDouble() / j.get("ms").asDouble()};
        }
        assertTrue(ratio[1][0] < ratio[0][0] && ratio[1][1] > ratio[0][1], java.util.Arrays.deepToString(ratio));
    }

    /**
     * A mixture of experts, whose host waits for the GPUs every expert layer, says what the host adds (the wait, or,
     * should a refit make the host the slower side, that its dispatch sets the pace); a dense model's job of the same
     * shape says neither.
     */
    @Test
    void aMixtureOfExpertsSaysWhatTheHostsWaitAdds() {
        Path configs = published().resolve("configs");
        String[] models = {"gpt-oss-120b", "llama3-8b"};
        for (int i = 0; i < 2; i++) {
            Run r = MainTest.run("predict", "--model", "gpu", "--transformer", configs.resolve(models[i]
                    + "/config.json").toString(), "--seq", "4096", "--batch", "2", "--micro-batches", "10",
                    "--world-size", "64", "--expert", i == 0 ? "64" : "1", "--device", "GB200", "--precision", "mxfp8");
            assertEquals(0, r.code(), r.err());
            assertEquals(i == 0, r.err().contains("the host waits for the GPUs in every layer with routed experts")
                    || r.err().contains("kernel dispatch sets the pace"), models[i] + ": " + r.err());
        }
    }

    /**
     * Every layout {@code layouts} prints can be given back: its candidate table, scored by {@code predict
     * --candidates}, gives each layout's time and memory again, and the command it prints for the first layout gives
     * the first row's; a mixture of experts is searched over expert and context parallelism too.
     */
    @Test
    void layoutsRoundTripThroughPredict(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("moe/config.json");
        Files.createDirectories(cfg.getParent());
        Files.createDirectories(dir.resolve("dense"));
        Files.writeString(dir.resolve("dense/config.json"), "{\"model_type\": \"llama\", \"hidden_size\": 1024, "
                + "\"intermediate_size\": 2048, \"num_attention_heads\": 16, \"num_key_value_heads\": 4, "
                + "\"num_hidden_layers\": 8, \"vocab_size\": 32000, \"max_position_embeddings\": 4096}");
        Files.writeString(cfg, SMALL_MOE);
        // the table in a folder the configuration is not in: the configuration is copied beside it (a candidate table
        // names files inside its folder only)
        Path table = dir.resolve("out/layouts.csv");
        Files.createDirectories(table.getParent());
        Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "4096", "--gpus",
                "16", "--global-batch", "64", "--device", "H100 SXM", "--precision", "bf16", "--top", "5", "--lora-rank",
                "16", "--grad-reduce", "after-backward", "--moe-a2a-overlap", "--out", table.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("90% interval") && r.out().contains("--lora-rank 16")
                && r.out().contains("--grad-reduce after-backward"), r.out());
        assertEquals(3, r.out().lines().filter(x -> x.strip().startsWith("java -jar ") && x.contains(" predict "))
                .count(), r.out());
        Path copy = dir.resolve("out/layouts.configs/moe/config.json");
        assertEquals(Files.readString(cfg), Files.readString(copy));
        assertTrue(r.out().contains(copy.toString()), r.out());
        List<String> lines = Files.readAllLines(table);
        assertEquals("layouts.configs/moe/config.json", lines.get(1).split(",", -1)[1]);
        List<String> header = Arrays.asList(lines.get(0).split(","));
        assertTrue(header.containsAll(List.of("context", "expert", "zero_stage", "recompute", "recompute_layers",
                "virtual_stages", "lora_rank", "layout_ms", "layout_memory_gb")), header.toString());
        assertEquals("16", lines.get(1).split(",", -1)[header.indexOf("lora_rank")]);
        assertEquals("after-backward", lines.get(1).split(",", -1)[header.indexOf("grad_reduce")]);
        // BF16 without a gradient type: FP32 buffers, the precision's default, written and not echoed
        assertEquals("fp32", lines.get(1).split(",", -1)[header.indexOf("grad_dtype")]);
        assertFalse(r.out().contains("--grad-dtype"), r.out());
        // FP16 with FP32 buffers, not its default: echoed so that the command predicts the same job
        Path fp16Table = dir.resolve("out/fp16.csv");
        Run fp16 = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "4096",
                "--gpus", "16", "--global-batch", "64", "--device", "H100 SXM", "--precision", "fp16", "--top", "1",
                "--grad-dtype", "fp32", "--out", fp16Table.toString());
        assertEquals(0, fp16.code(), fp16.err());
        assertTrue(fp16.out().contains("--grad-dtype fp32"), fp16.out());
        List<String> fp16Lines = Files.readAllLines(fp16Table);
        assertEquals("fp32", fp16Lines.get(1).split(",", -1)[Arrays.asList(fp16Lines.get(0).split(","))
                .indexOf("grad_dtype")]);
        // the precision in the header; a schedule choice not given is left empty (the default, assumed) in the table
        assertTrue(r.out().contains(", in bf16, ") && fp16.out().contains(", in fp16, "), r.out());
        List<String> fp16Header = Arrays.asList(fp16Lines.get(0).split(","));
        for (String column : List.of("grad_reduce", "moe_a2a_overlap", "cuda_graphs")) {
            assertEquals("", fp16Lines.get(1).split(",", -1)[fp16Header.indexOf(column)], column);
        }
        // the warnings column names what the other choice of an assumed schedule is worth: here the host's per-layer
        // dispatch, which graphs of the whole iteration take away (read from the note's own form, so a reworded
        // note fails here)
        assertTrue(java.util.regex.Pattern.compile("if --cuda-graphs iteration: -[0-9]+\\.[0-9]%").matcher(fp16.out()).find(),
                fp16.out());
        // (the printed commands do not state those schedules)
        assertTrue(fp16.out().lines().filter(l -> l.strip().startsWith("java -jar")).noneMatch(l -> l.contains(
                "--grad-reduce") || l.contains("--cuda-graphs")), fp16.out());
        boolean expert = false;
        boolean context = false;
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split(",", -1);
            expert |= !f[header.indexOf("expert")].equals("1");
            context |= !f[header.indexOf("context")].equals("1");
            // the all-to-all overlap where a layout has expert parallelism to overlap and Megatron core runs it
            // (virtual stages with a pipeline)
            assertEquals(Boolean.toString(overlapRuns(f, header)), f[header.indexOf("moe_a2a_overlap")], l);
        }
        assertTrue(expert && context, "expert and context parallelism searched");
        // an imbalance of the experts' load on a model without experts is refused, as predict refuses it
        Run dense = MainTest.run("layouts", "--model", "gpu", "--transformer",
                dir.resolve("dense/config.json").toString(), "--seq", "4096", "--gpus", "16", "--global-batch", "64",
                "--device", "H100 SXM", "--precision", "bf16",
                "--expert-imbalance", "2");
        assertEquals(1, dense.code(), dense.err());
        assertTrue(dense.err().contains("expert imbalance 2 needs a model with routed experts"), dense.err());
        Path scored = dir.resolve("scored.csv");
        Run s = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(), "--out",
                scored.toString());
        assertEquals(0, s.code(), s.err());
        List<String> back = Files.readAllLines(scored);
        List<String> h = Arrays.asList(back.get(0).split(","));
        assertEquals(lines.size(), back.size());
        for (String l : back.subList(1, back.size())) {
            String[] f = l.split(",", -1);
            assertEquals(f[h.indexOf("layout_ms")], String.format(java.util.Locale.ROOT, "%.4f",
                    Double.parseDouble(f[h.indexOf("predicted_ms")])), l);
            assertEquals(f[h.indexOf("layout_memory_gb")], f[h.indexOf("memory_gb")], l);
        }
        // the printed command of the first layout
        String command = r.out().lines().filter(x -> x.strip().startsWith("java -jar ") && x.contains(" predict "))
                .findFirst().orElseThrow().strip();
        List<String> args = new java.util.ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("'([^']*)'|(\\S+)").matcher(command);
        while (m.find()) {
            args.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        args.add("--json");
        Run one = MainTest.run(args.subList(args.indexOf("predict"), args.size()).toArray(new String[0]));
        assertEquals(0, one.code(), one.err());
        JsonNode j = new ObjectMapper().readTree(one.out());
        String[] first = lines.get(1).split(",", -1);
        assertEquals(first[header.indexOf("layout_ms")], String.format(java.util.Locale.ROOT, "%.4f",
                j.get("ms").asDouble()));
        assertEquals(first[header.indexOf("layout_memory_gb")], String.format(java.util.Locale.ROOT, "%.3f",
                j.get("memory_gb").asDouble()));
        assertEquals("after-backward", j.get("workload").get("grad_reduce").asText());
        assertEquals(overlapRuns(first, header), j.get("workload").get("moe_a2a_overlap").asBoolean());
        assertEquals(overlapRuns(first, header), command.contains(" --moe-a2a-overlap"), command);
    }

    /**
     * The experts' all-to-all left on the critical path is assumed and said with what the overlap would save; stated
     * ({@code --moe-a2a-overlap=false}) it is given and not said; {@code --moe-a2a-overlap} alone still turns it on.
     */
    @Test
    void theAllToAllOverlapCanBeStatedOffAsWellAsOn() throws Exception {
        List<String> job = List.of("predict", "--model", "gpu", "--transformer", published().resolve(
                "configs/nemotron-3-nano-30b-a3b/config.json").toString(), "--seq", "8192", "--batch", "2",
                "--micro-batches", "32", "--world-size", "8", "--expert", "8", "--zero-stage", "1", "--device",
                "GB200", "--gpus-per-node", "4", "--nvlink-domain", "72", "--precision", "mxfp8", "--json");
        JsonNode assumed = json(job);
        JsonNode off = json(job, "--moe-a2a-overlap=false");
        JsonNode on = json(job, "--moe-a2a-overlap");
        assertTrue(assumed.get("warnings").toString().contains("all-to-all is assumed on the critical path"),
                assumed.get("warnings").toString());
        assertFalse(off.get("warnings").toString().contains("all-to-all is assumed"), off.get("warnings").toString());
        assertEquals(assumed.get("ms").asDouble(), off.get("ms").asDouble(), 0);
        assertTrue(on.get("workload").get("moe_a2a_overlap").asBoolean() && on.get("ms").asDouble() < assumed.get("ms")
                .asDouble(), on.toString());
    }

    /**
     * {@code --cuda-graphs}: graphs of the whole iteration leave no host time per layer, so a host-bound mixture of
     * experts is predicted faster, and the setting is echoed ({@code cuda_graphs}); graphs of layers predict as none;
     * an unknown value is refused naming the option; {@code layouts} carries it into its table and printed commands.
     */
    @Test
    void cudaGraphsAreGivenEchoedAndCarried(@TempDir Path dir) throws Exception {
        String cfg = published().resolve("configs/gpt-oss-120b/config.json").toString();
        List<String> job = List.of("predict", "--model", "gpu", "--transformer", cfg, "--seq", "4096", "--batch", "4",
                "--micro-batches", "5", "--world-size", "64", "--expert", "64", "--zero-stage", "1", "--device",
                "GB200", "--precision", "mxfp8", "--json");
        java.util.function.Function<String, JsonNode> with = graphs -> graphs == null ? json(job)
                : json(job, "--cuda-graphs", graphs);
        JsonNode none = with.apply(null);
        JsonNode layers = with.apply("layers");
        JsonNode whole = with.apply("iteration");
        assertEquals("none", none.get("workload").get("cuda_graphs").asText());
        assertEquals("layers", layers.get("workload").get("cuda_graphs").asText());
        assertEquals("iteration", whole.get("workload").get("cuda_graphs").asText());
        assertEquals(none.get("ms").asDouble(), layers.get("ms").asDouble(), 1e-9);
        assertTrue(whole.get("ms").asDouble() < none.get("ms").asDouble(), whole.get("ms") + " " + none.get("ms"));
        // the prediction without graphs says what the step takes with them, and the one with them says nothing of it
        java.util.regex.Matcher said = java.util.regex.Pattern.compile("the host is assumed to dispatch every layer's "
                + "kernels \\(CUDA graphs none\\).*?the step takes ([0-9.]+) ms \\((-[0-9.]+) %: give --cuda-graphs "
                + "iteration\\)").matcher(none.get("warnings").toString());
        assertTrue(said.find(), none.get("warnings").toString());
        assertEquals(said.group(1), String.format(java.util.Locale.ROOT, "%.2f", whole.get("ms").asDouble()));
        assertFalse(whole.get("warnings").toString().contains("give --cuda-graphs"), whole.get("warnings").toString());
        // none given is stated, not assumed: the same time, and nothing said of it
        JsonNode statedNone = with.apply("none");
        assertEquals(none.get("ms").asDouble(), statedNone.get("ms").asDouble(), 0);
        assertFalse(statedNone.get("warnings").toString().contains("give --cuda-graphs"),
                statedNone.get("warnings").toString());
        assertTrue(layers.get("warnings").toString().contains("CUDA graphs of layers are predicted as none"),
                layers.get("warnings").toString());
        assertTrue(none.get("warnings").toString().contains("padded to a capacity"), "experts: the padding said");
        List<String> bad = new java.util.ArrayList<>(job);
        bad.addAll(List.of("--cuda-graphs", "all"));
        Run refused = MainTest.run(bad.toArray(new String[0]));
        assertTrue(refused.code() != 0 && refused.err().contains("--cuda-graphs")
                && refused.err().contains("'all'"), refused.err());
        Path table = dir.resolve("graphs/layouts.csv");
        Files.createDirectories(table.getParent());
        Run l = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama3-8b/config.json").toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64",
                "--device", "H100 SXM", "--precision", "bf16", "--top", "1", "--cuda-graphs", "iteration", "--out",
                table.toString());
        assertEquals(0, l.code(), l.err());
        assertTrue(l.out().contains("--cuda-graphs iteration"), l.out());
        List<String> rows = Files.readAllLines(table);
        assertEquals("iteration", rows.get(1).split(",", -1)[Arrays.asList(rows.get(0).split(","))
                .indexOf("cuda_graphs")]);
    }

    /** Whether a layouts table's row runs the experts' all-to-all overlap: experts, and virtual stages with a pipeline. */
    private static boolean overlapRuns(String[] row, List<String> header) {
        // (with one micro-batch there is nothing to hide it behind)
        return !row[header.indexOf("expert")].equals("1") && !row[header.indexOf("micro_batches")].equals("1")
                && (row[header.indexOf("pipeline")].equals("1") || !row[header.indexOf("virtual_stages")].equals("1"));
    }

    /**
     * A job with expert parallelism whose all-to-all would hide behind another micro-batch's compute says so with the
     * step's time under that schedule, and {@code --moe-a2a-overlap} gives that time and echoes it; a job with one
     * micro-batch, which has none to overlap with, says nothing of it; the option without expert parallelism is bad
     * input naming what it needs.
     */
    @Test
    void theExpertsAllToAllOverlapIsSaidAndGiven() throws Exception {
        String cfg = published().resolve("configs/gpt-oss-120b/config.json").toString();
        List<String> job = gptOssOn64B200(cfg);
        Run plain = MainTest.run(job.toArray(new String[0]));
        assertEquals(0, plain.code(), plain.err());
        JsonNode p = new ObjectMapper().readTree(plain.out());
        assertFalse(p.get("workload").get("moe_a2a_overlap").asBoolean());
        java.util.regex.Matcher said = java.util.regex.Pattern.compile("the experts' all-to-all is assumed on the "
                + "critical path.*?the step takes ([0-9.]+) ms \\((-[0-9.]+) %: give --moe-a2a-overlap\\)")
                .matcher(p.get("warnings").toString());
        assertTrue(said.find(), p.get("warnings").toString());
        List<String> overlapped = new java.util.ArrayList<>(job);
        overlapped.add("--moe-a2a-overlap");
        Run o = MainTest.run(overlapped.toArray(new String[0]));
        assertEquals(0, o.code(), o.err());
        JsonNode j = new ObjectMapper().readTree(o.out());
        assertTrue(j.get("workload").get("moe_a2a_overlap").asBoolean());
        assertEquals(said.group(1), String.format(java.util.Locale.ROOT, "%.2f", j.get("ms").asDouble()));
        assertTrue(j.get("ms").asDouble() < p.get("ms").asDouble());
        assertFalse(j.get("warnings").toString().contains("all-to-all is assumed"), j.get("warnings").toString());
        List<String> one = new java.util.ArrayList<>(job);
        one.set(one.indexOf("--micro-batches") + 1, "1");
        Run single = MainTest.run(one.toArray(new String[0]));
        assertEquals(0, single.code(), single.err());
        assertFalse(single.out().contains("all-to-all is assumed"), single.out());
        List<String> dense = new java.util.ArrayList<>(overlapped);
        dense.set(dense.indexOf("--expert") + 1, "1");
        Run bad = MainTest.run(dense.toArray(new String[0]));
        assertEquals(1, bad.code(), bad.err());
        assertTrue(bad.err().contains("needs expert parallelism"), bad.err());
        // a layout search of a model without routed experts has nothing to overlap: bad input, as predict's
        Run none = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama3-8b/config.json").toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64",
                "--device", "H100 SXM", "--precision", "bf16", "--moe-a2a-overlap");
        assertEquals(1, none.code(), none.err());
        assertTrue(none.err().contains("needs a model with routed experts"), none.err());
    }

    /** GPT-OSS 120B on 64 B200, 4 × 5 micro-batches, 64-way expert parallelism, in BF16, as {@code predict --json}. */
    private static List<String> gptOssOn64B200(String cfg) {
        return List.of("predict", "--model", "gpu", "--transformer", cfg, "--seq", "4096", "--batch", "4",
                "--micro-batches", "5", "--world-size", "64", "--expert", "64", "--zero-stage", "1", "--device",
                "B200", "--precision", "bf16", "--json");
    }

    /**
     * {@code --moe-dispatcher} is echoed in {@code --json}; HybridEP across nodes is predicted as the all-to-all and
     * says so, the all-gather moves more; without expert parallelism it is bad input naming what it needs.
     */
    @Test
    void theMoeDispatcherIsEchoedAndSaid() throws Exception {
        String cfg = published().resolve("configs/gpt-oss-120b/config.json").toString();
        List<String> job = gptOssOn64B200(cfg);
        java.util.function.Function<String, JsonNode> with = d -> {
            List<String> args = new java.util.ArrayList<>(job);
            if (d != null) {
                args.addAll(List.of("--moe-dispatcher", d));
            }
            Run r = MainTest.run(args.toArray(new String[0]));
            assertEquals(0, r.code(), r.err());
            try {
                return new ObjectMapper().readTree(r.out());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        JsonNode plain = with.apply(null);
        JsonNode hybrid = with.apply("hybridep");
        JsonNode gather = with.apply("allgather");
        assertEquals("alltoall", plain.get("workload").get("moe_dispatcher").asText());
        assertEquals("hybridep", hybrid.get("workload").get("moe_dispatcher").asText());
        // the same bytes sent; the all-to-all also sorts the copies of a rank's two experts, which HybridEP's
        // permutation writes in order
        assertTrue(hybrid.get("ms").asDouble() < plain.get("ms").asDouble(), plain + " " + hybrid);
        assertTrue(hybrid.get("ms").asDouble() > 0.95 * plain.get("ms").asDouble(), plain + " " + hybrid);
        assertTrue(hybrid.get("warnings").toString().contains("hybridep dispatcher across 64 experts' ranks"),
                hybrid.get("warnings").toString());
        assertFalse(plain.get("warnings").toString().contains("dispatcher across"));
        assertTrue(gather.get("ms").asDouble() > hybrid.get("ms").asDouble(), "every token to every rank");
        Run dense = MainTest.run("predict", "--model", "gpu", "--transformer", cfg, "--seq", "4096", "--batch", "4",
                "--device", "B200", "--precision", "bf16", "--moe-dispatcher", "deepep");
        assertEquals(1, dense.code(), dense.err());
        assertTrue(dense.err().contains("--moe-dispatcher deepep needs --expert > 1"), dense.err());
        Run unknown = MainTest.run("predict", "--model", "gpu", "--transformer", cfg, "--seq", "4096", "--batch", "4",
                "--device", "B200", "--precision", "bf16", "--moe-dispatcher", "nccl");
        assertEquals(2, unknown.code(), unknown.err());
        assertTrue(unknown.err().contains("'nccl'"), unknown.err());
    }

    /**
     * {@code --moe-a2a-overlap} as the default of a candidate table applies to its rows Megatron core runs it with: a
     * dense row beside them is scored as without it, the expert-parallel one as with it, one whose pipeline has no
     * virtual stages as without it; a row that gives the column true without experts is refused at its line.
     */
    @Test
    void theOverlapAsATableDefaultAppliesToRowsWithExperts(@TempDir Path dir) throws Exception {
        for (String model : List.of("llama3-8b", "mixtral-8x7b")) {
            Path cfg = dir.resolve(model + "/config.json");
            Files.createDirectories(cfg.getParent());
            Files.copy(published().resolve("configs/" + model + "/config.json"), cfg);
        }
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "name,transformer,seq,batch,micro_batches,world_size,expert,pipeline,device,precision\n"
                + "dense,llama3-8b/config.json,4096,1,8,8,1,1,H100 SXM,bf16\n"
                + "moe,mixtral-8x7b/config.json,4096,1,8,8,8,1,H100 SXM,bf16\n"
                // a pipeline without virtual stages: Megatron core does not run the overlap, so the default leaves
                // it off there (where the row's own cell would be refused)
                + "moepp,mixtral-8x7b/config.json,4096,1,8,8,8,2,H100 SXM,bf16\n");
        Map<String, Map<String, String>> plain = scored(dir, Files.readString(jobs));
        Path out = dir.resolve("overlapped.csv");
        Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--moe-a2a-overlap",
                "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        Map<String, Map<String, String>> overlapped = rows(out);
        assertEquals(plain.get("dense").get("predicted_ms"), overlapped.get("dense").get("predicted_ms"));
        assertTrue(Double.parseDouble(overlapped.get("moe").get("predicted_ms"))
                < Double.parseDouble(plain.get("moe").get("predicted_ms")), overlapped.get("moe").toString());
        assertEquals(plain.get("moepp").get("predicted_ms"), overlapped.get("moepp").get("predicted_ms"));
        Files.writeString(jobs, "name,transformer,seq,batch,micro_batches,world_size,expert,device,precision,"
                + "moe_a2a_overlap\ndense,llama3-8b/config.json,4096,1,8,8,1,H100 SXM,bf16,true\n");
        Run refused = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                out.toString());
        assertEquals(1, refused.code(), refused.err());
        assertTrue(refused.err().contains("jobs.csv:2") && refused.err().contains("needs expert parallelism"),
                refused.err());
    }

    /**
     * With {@code --keep-going} a row that cannot be read (a configuration of an unknown type, an unknown device) or
     * predicted (a layout the model refuses) keeps its place with its line and reason in the error column and no
     * prediction; the others are scored as without the option, and the count is said; JSON lines carry the same in
     * {@code error} (null where predicted). Without it the first such row stops the command at its line.
     */
    @Test
    void keepGoingScoresTheGoodRowsAndSaysWhyTheOthersHaveNone(@TempDir Path dir) throws Exception {
        config(dir);
        Path bad = Files.createDirectories(dir.resolve("bad")).resolve("config.json");
        Files.writeString(bad, "{\"model_type\": \"gemma9\"}");
        String header = "name,transformer,seq,batch,micro_batches,world_size,tensor,device,precision\n";
        String good = "good,gpt3/config.json,2048,1,8,8,1," + A100 + ",fp16\n";
        Map<String, String> alone = scored(dir, header + good).get("good");
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, header + good + "type,bad/config.json,2048,1,8,8,1," + A100 + ",fp16\n"
                + "device,gpt3/config.json,2048,1,8,8,1,NoSuchGPU,fp16\n"
                + "layout,gpt3/config.json,2048,1,8,8,5," + A100 + ",fp16\n" + good.replace("good", "again"));
        Path out = dir.resolve("kept.csv");
        Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--keep-going", "--out",
                out.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("3 of 5 candidates not predicted"), r.err());
        org.scaledl.io.CsvTable t = org.scaledl.io.CsvTable.read(out);
        assertEquals(5, t.size());
        for (int i = 0; i < t.size(); i++) {
            String name = t.get(i, "name");
            boolean predicted = name.equals("good") || name.equals("again");
            assertEquals(predicted, t.get(i, "error").isEmpty(), name + ": " + t.get(i, "error"));
            assertEquals(predicted, !t.get(i, "predicted_ms").isEmpty(), name);
            if (predicted) {
                assertEquals(alone.get("predicted_ms"), t.get(i, "predicted_ms"), name);
            }
        }
        assertTrue(t.get(1, "error").contains("jobs.csv:3") && t.get(1, "error").contains("gemma9"), t.get(1,
                "error"));
        assertTrue(t.get(2, "error").contains("jobs.csv:4") && t.get(2, "error").contains("NoSuchGPU"), t.get(2,
                "error"));
        assertTrue(t.get(3, "error").contains("jobs.csv:5"), t.get(3, "error"));
        Path jsonl = dir.resolve("kept.jsonl");
        assertEquals(0, MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--keep-going",
                "--out", jsonl.toString()).code());
        List<String> lines = Files.readAllLines(jsonl);
        com.fasterxml.jackson.databind.ObjectMapper om = new com.fasterxml.jackson.databind.ObjectMapper();
        assertTrue(om.readTree(lines.get(0)).get("error").isNull());
        assertTrue(om.readTree(lines.get(1)).get("predicted_ms").isNull());
        assertTrue(om.readTree(lines.get(1)).get("error").asText().contains("gemma9"));
        Run strict = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                out.toString());
        assertEquals(1, strict.code(), strict.err());
        assertTrue(strict.err().contains("jobs.csv:3"), strict.err());
        Run single = MainTest.run("predict", "--model", "gpu", "--transformer", dir.resolve("gpt3/config.json")
                .toString(), "--seq", "2048", "--batch", "1", "--keep-going");
        assertTrue(single.code() != 0, single.err());
        assertTrue(single.err().contains("--keep-going applies to --candidates"), single.err());
        // every row refused: the table is written with the reasons, but the run failed
        Files.writeString(jobs, header + "type,bad/config.json,2048,1,8,8,1," + A100 + ",fp16\n");
        Run none = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--keep-going", "--out",
                out.toString());
        assertEquals(1, none.code(), none.err());
        assertTrue(none.err().contains("none of the 1 candidates could be predicted"), none.err());
        assertTrue(org.scaledl.io.CsvTable.read(out).get(0, "error").contains("gemma9"));
    }

    /**
     * A layout that does not divide the model, given as options or as a row, is bad input: one line naming what would
     * be valid, exit 1; uneven pipeline splits only where asked for.
     */
    @Test
    void layoutsThatDoNotDivideAreBadInput(@TempDir Path dir) throws Exception {
        Path cfg = config(dir);
        String[] base = {"predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048", "--batch", "1",
            "--micro-batches", "8", "--device", A100};
        String[][] cases = {{"--tensor", "5"}, {"--pipeline", "10"}, {"--context", "3"}};
        for (String[] c : cases) {
            String[] args = java.util.stream.Stream.concat(Arrays.stream(base), Arrays.stream(c))
                    .toArray(String[]::new);
            Run r = MainTest.run(args);
            assertEquals(1, r.code(), String.join(" ", c) + ": " + r.err());
            assertTrue(r.err().strip().lines().count() == 1 && (r.err().contains("may be")
                    || r.err().contains("split them without interleaving are")) || r.err().contains("divisible"),
                    r.err());
        }
        // the pipeline degrees that split the layers are named, those counting the embedding and the loss too: 96
        // layers + 2 make 98 = 7 x 14 (no chunk count splits them over 10 stages)
        Run odd = MainTest.run(java.util.stream.Stream.concat(Arrays.stream(base),
                Arrays.stream(new String[] {"--pipeline", "10"})).toArray(String[]::new));
        assertTrue(odd.err().contains("the pipeline degrees that split them without interleaving are 1, 2, 3, 4, 6, "
                + "7, 8, 12, 14, 16, 24, 32, ...") && !odd.err().contains("chunks a stage (virtual stages) may be")
                && odd.err().contains("+ 1 with the embedding"), odd.err());
        // a precision the GPU has no units for: one line naming what it runs (and what it runs in another precision),
        // from layouts as from predict
        Run fp8 = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--gpus", "64", "--global-batch", "64", "--device", A100, "--precision", "fp8");
        assertEquals(1, fp8.code(), fp8.err());
        assertTrue(fp8.err().contains("cannot run fp8") && fp8.err().strip().lines().count() == 1, fp8.err());
        Run bf16 = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--device", "V100", "--precision", "bf16");
        assertEquals(1, bf16.code(), bf16.err());
        assertTrue(bf16.err().contains("it runs fp32, fp16; tf32 as fp32"), bf16.err());
        String[] uneven = java.util.stream.Stream.concat(Arrays.stream(base),
                Arrays.stream(new String[] {"--pipeline", "10", "--uneven-pipeline", "--json"})).toArray(String[]::new);
        Run r = MainTest.run(uneven);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("split unevenly"), r.err());
    }

    /**
     * One vocabulary in the warnings: a GPU job's world-size range is said in GPUs; TF32 on a GPU without TF32 units
     * runs (and is judged) in FP32, which training measured, so no "never measured" warning contradicts the fallback.
     */
    @Test
    void warningsSpeakOfWhatRuns(@TempDir Path dir) throws Exception {
        Path cfg = config(dir);
        Run big = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--micro-batches", "8", "--world-size", "48", "--tensor", "8", "--pipeline", "8",
                "--device", "A100 80GB", "--precision", "fp16");
        assertEquals(0, big.code(), big.err());
        // a context beyond the configuration's positions: a warning of every such prediction, in the JSON too
        Path beyond = Files.createDirectories(dir.resolve("ctx-probe-llama")).resolve("config.json");
        Files.copy(published().resolve("configs/llama3-8b/config.json"), beyond);
        for (int i = 0; i < 2; i++) {
            Run ctx = MainTest.run("predict", "--model", "gpu", "--transformer", beyond.toString(), "--seq", "16384",
                    "--batch", "1", "--device", "H100 SXM", "--precision", "bf16", "--json");
            assertEquals(0, ctx.code(), ctx.err());
            assertTrue(ctx.err().contains("scaledl: warning: sequence 16384 is longer than the 8192 positions the "
                    + "configuration names") && !ctx.err().contains("WARN"), ctx.err());
            assertTrue(new ObjectMapper().readTree(ctx.out()).get("warnings").toString().contains(
                    "sequence 16384 is longer than the 8192 positions"), "in the JSON too, every time");
        }
        // the network between nodes, assumed, is said only where the job leaves one node or NVLink domain
        String[] inNode = {"predict", "--model", "gpu", "--transformer", beyond.toString(), "--seq", "4096", "--batch",
            "1", "--micro-batches", "4", "--world-size", "8", "--device", "H100 SXM", "--precision", "bf16"};
        Run one = MainTest.run(inNode);
        assertEquals(0, one.code(), one.err());
        assertFalse(one.err().contains("topology assumed"), one.err());
        List<String> twoNodes = new java.util.ArrayList<>(List.of(inNode));
        twoNodes.set(twoNodes.indexOf("--world-size") + 1, "16");
        Run two = MainTest.run(twoNodes.toArray(new String[0]));
        assertTrue(two.err().contains("topology assumed from the device's form factor"), two.err());
        twoNodes.addAll(List.of("--gpus-per-node", "8"));
        Run partly = MainTest.run(twoNodes.toArray(new String[0]));
        assertTrue(partly.err().contains("topology partly assumed"), partly.err());
        // a Llama configuration without its feed-forward width or key/value heads takes the class defaults, said
        Path thin = Files.createDirectories(dir.resolve("thin-llama")).resolve("config.json");
        Files.writeString(thin, Files.readString(published().resolve("configs/llama3-8b/config.json"))
                .replaceAll("\"intermediate_size\"\\s*:\\s*\\d+\\s*,", "")
                .replaceAll("\"num_key_value_heads\"\\s*:\\s*\\d+\\s*,", ""));
        Run defaults = MainTest.run("predict", "--model", "gpu", "--transformer", thin.toString(), "--seq", "4096",
                "--batch", "1", "--device", "H100 SXM", "--precision", "bf16");
        assertEquals(0, defaults.code(), defaults.err());
        assertTrue(defaults.err().contains("no intermediate_size; 11008 is taken (Llama's class default")
                && defaults.err().contains("no num_key_value_heads; 32 is taken (as many as the attention heads"),
                defaults.err());
        // what the libraries warn of while reading the inputs is in the JSON too (kind input), said once
        Path thin2 = Files.createDirectories(dir.resolve("thin-llama-2")).resolve("config.json");
        Files.copy(thin, thin2);
        Run defaultsJson = MainTest.run("predict", "--model", "gpu", "--transformer", thin2.toString(), "--seq",
                "4096", "--batch", "1", "--device", "H100 SXM", "--precision", "bf16", "--json");
        assertEquals(0, defaultsJson.code(), defaultsJson.err());
        List<String> input = new java.util.ArrayList<>();
        new ObjectMapper().readTree(defaultsJson.out()).get("warnings").forEach(x -> {
            if (x.get("kind").asText().equals("input")) {
                input.add(x.get("message").asText());
            }
        });
        assertTrue(input.stream().anyMatch(m -> m.startsWith(thin2 + ": no intermediate_size; 11008 is taken")),
                input.toString());
        assertEquals(2, input.size(), input.toString());
        // a note says how the job was read, not a warning; a job that may not be what was meant is warned of as such
        Run uneven = MainTest.run("predict", "--model", "gpu", "--transformer", beyond.toString(), "--seq", "4096",
                "--batch", "1", "--micro-batches", "2", "--world-size", "3", "--pipeline", "4", "--gpus-per-node", "8",
                "--inter-node-gbps", "400", "--device", "H100 SXM", "--precision", "bf16", "--grad-reduce", "overlapped");
        assertEquals(0, uneven.code(), uneven.err());
        assertTrue(uneven.err().contains("scaledl: note: 12 GPUs on nodes of 8: the last node holds 4 of them"
                + System.lineSeparator()), uneven.err());
        assertTrue(uneven.err().contains("scaledl: warning: 2 micro-batches through 4 pipeline stages")
                && uneven.err().contains("(unusual_job, 100% of the prediction)")
                && !uneven.err().contains("(assumed"), uneven.err());
        // with the replicas said: --world-size counts them, not the GPUs
        assertTrue(big.err().contains("3072 GPUs (48 data-parallel replicas of 64 GPUs) are outside the training "
                + "range of"), big.err());
        Run tf32 = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--tensor", "8", "--device", "V100", "--precision", "tf32");
        assertEquals(0, tf32.code(), tf32.err());
        assertTrue(tf32.err().contains("no tf32 matrix units") && !tf32.err().contains("never measured"),
                tf32.err());
    }

    /**
     * {@code --gpus} counts every GPU of the job, as {@code layouts --gpus} does: the same job as the one given by its
     * data-parallel replicas ({@code --world-size}), to the digit; refused where a replica's GPUs do not divide it,
     * and beside {@code --world-size}. A candidate table's {@code gpus} column is read the same way (a column this
     * reader once carried through untouched, so the job ran on one replica's GPUs).
     */
    @Test
    void gpusCountEveryGpuOfTheJob(@TempDir Path dir) throws Exception {
        Path cfg = config(dir);
        List<String> plain = List.of("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--micro-batches", "16", "--tensor", "8", "--pipeline", "4", "--device", A100,
                "--precision", "fp16");
        List<String> job = new java.util.ArrayList<>(plain);
        job.add("--json");
        JsonNode replicas = json(job, "--world-size", "16");
        JsonNode gpus = json(job, "--gpus", "512");
        assertEquals(512, gpus.get("workload").get("gpus").asInt());
        assertEquals(16, gpus.get("workload").get("data_parallel").asInt());
        assertEquals(replicas.get("ms").asDouble(), gpus.get("ms").asDouble(), 0);
        List<String> fiveHundred = new java.util.ArrayList<>(plain);
        fiveHundred.addAll(List.of("--gpus", "500"));
        Run oddRun = MainTest.run(fiveHundred.toArray(new String[0]));
        assertEquals(2, oddRun.code(), oddRun.err());
        assertTrue(oddRun.err().contains("--gpus 500 is not a multiple of --tensor 8 x --pipeline 4 x --context 1 = "
                + "32 GPUs a data-parallel replica"), oddRun.err());
        List<String> both = new java.util.ArrayList<>(plain);
        both.addAll(List.of("--gpus", "512", "--world-size", "16"));
        Run bothRun = MainTest.run(both.toArray(new String[0]));
        assertEquals(2, bothRun.code(), bothRun.err());
        assertTrue(bothRun.err().contains("give --gpus (every GPU of the job) or --data-parallel (--world-size"),
                bothRun.err());
        Run cpu = MainTest.run("predict", "--model", "cpu-zoo", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "2", "--gpus", "2");
        assertEquals(2, cpu.code(), cpu.err());
        assertTrue(cpu.err().contains("--gpus counts a GPU job's GPUs; cpu-zoo predicts CPU machines"), cpu.err());
        // scaling sweeps GPUs too: each a multiple of the replica's (tensor 8 x pipeline 4 here)
        Run sweep = MainTest.run("scaling", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--micro-batches", "16", "--tensor", "8", "--pipeline", "4", "--device", A100,
                "--precision", "fp16", "--gpus", "32,64", "--batches", "1", "--json", "--out",
                dir.resolve("s.svg").toString());
        assertEquals(0, sweep.code(), sweep.err());
        JsonNode points = new ObjectMapper().readTree(sweep.out()).get("by_workers");
        assertEquals(List.of(32, 64), List.of(points.get(0).get("gpus").asInt(), points.get(1).get("gpus").asInt()));
        assertEquals(List.of(1, 2), List.of(points.get(0).get("data_parallel").asInt(),
                points.get(1).get("data_parallel").asInt()));
        // without --world-size, the batch sweep runs on the fewest GPUs asked for, not on one replica's
        Run fewest = MainTest.run("scaling", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--micro-batches", "16", "--tensor", "8", "--pipeline", "4", "--device", A100,
                "--precision", "fp16", "--gpus", "128,64", "--batches", "1", "--json", "--out",
                dir.resolve("f.svg").toString());
        assertEquals(0, fewest.code(), fewest.err());
        assertEquals(64, new ObjectMapper().readTree(fewest.out()).get("by_batch").get(0).get("gpus").asInt());
        Run odd = MainTest.run("scaling", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--tensor", "8", "--device", A100, "--precision", "fp16", "--gpus", "12", "--out",
                dir.resolve("t.svg").toString());
        assertEquals(2, odd.code(), odd.err());
        assertTrue(odd.err().contains("--gpus 12 is not a multiple of --tensor 8"), odd.err());

        Map<String, Map<String, String>> rows = scored(dir, "name,transformer,seq,batch,micro_batches,gpus,"
                + "world_size,tensor,pipeline,device,precision\n"
                + "by-gpus,gpt3/config.json,2048,1,16,512,,8,4," + A100 + ",fp16\n"
                + "by-replicas,gpt3/config.json,2048,1,16,,16,8,4," + A100 + ",fp16\n"
                + "both,gpt3/config.json,2048,1,16,512,16,8,4," + A100 + ",fp16\n");
        assertEquals(rows.get("by-replicas").get("predicted_ms"), rows.get("by-gpus").get("predicted_ms"));
        assertEquals(rows.get("by-replicas").get("predicted_ms"), rows.get("both").get("predicted_ms"));

        // a global batch instead of the micro-batches, as layouts takes it: 256 over 16 replicas of 1 is 16 each
        List<String> global = new java.util.ArrayList<>(job);
        global.removeAll(List.of("--micro-batches", "16"));
        global.addAll(List.of("--gpus", "512", "--global-batch", "256"));
        assertEquals(replicas.get("ms").asDouble(), json(global).get("ms").asDouble(), 0);
        List<String> text = new java.util.ArrayList<>(global);
        text.remove("--json");
        Run said = MainTest.run(text.toArray(new String[0]));
        assertTrue(said.out().lines().findFirst().orElseThrow().endsWith(" global-batch=256"), said.out());
        List<String> uneven = new java.util.ArrayList<>(global);
        uneven.set(uneven.size() - 1, "250");
        Run unevenRun = MainTest.run(uneven.toArray(new String[0]));
        assertEquals(2, unevenRun.code(), unevenRun.err());
        assertTrue(unevenRun.err().contains("--global-batch 250 is not a positive multiple of --batch 1 x 16 "
                + "data-parallel replicas (16)"), unevenRun.err());
        List<String> twice = new java.util.ArrayList<>(global);
        twice.addAll(List.of("--micro-batches", "16"));
        Run twiceRun = MainTest.run(twice.toArray(new String[0]));
        assertEquals(2, twiceRun.code(), twiceRun.err());
        assertTrue(twiceRun.err().contains("give --global-batch or --micro-batches, not both"), twiceRun.err());
    }

    /**
     * The text output's summary of where the time goes adds the breakdown by kind: matrix products (dense and
     * convolution layers), other layers, communication, overhead, each rounded, a share under half a percent as
     * {@code <1}, a kind without time left out; none without a breakdown.
     */
    @Test
    void theTimeIsSplitByKindOfWork() {
        org.scaledl.model.Prediction p = new org.scaledl.model.Prediction(100, 90, 110, List.of(
                org.scaledl.model.Prediction.Contribution.layer(0, "up", org.scaledl.workload.OpFamily.DENSE, 50),
                org.scaledl.model.Prediction.Contribution.layer(1, "conv", org.scaledl.workload.OpFamily.CONV, 20),
                org.scaledl.model.Prediction.Contribution.layer(2, "act", org.scaledl.workload.OpFamily.ELEMENTWISE,
                        19.7),
                org.scaledl.model.Prediction.Contribution.term("tensor-parallel",
                        org.scaledl.model.Prediction.Kind.COMMUNICATION, 10),
                org.scaledl.model.Prediction.Contribution.term("fixed", org.scaledl.model.Prediction.Kind.OVERHEAD,
                        0.3)));
        assertEquals("where the time goes: 70% matrix products, 20% other layers, 10% communication, <1% overhead",
                PredictCommand.shares(p).orElseThrow());
        assertEquals("where the time goes: 100% matrix products", PredictCommand.shares(new org.scaledl.model
                .Prediction(5, 5, 5, List.of(org.scaledl.model.Prediction.Contribution.layer(0, "up",
                org.scaledl.workload.OpFamily.DENSE, 5)))).orElseThrow());
        assertTrue(PredictCommand.shares(org.scaledl.model.Prediction.point(5)).isEmpty());
        // the pipeline's fill and drain and the GPUs' wait for the host are said apart from the other overhead
        assertEquals("where the time goes: 60% matrix products, 25% pipeline bubble, 10% waiting for the host, 5% "
                + "overhead", PredictCommand.shares(new org.scaledl.model.Prediction(100, 90, 110, List.of(
                org.scaledl.model.Prediction.Contribution.layer(0, "up", org.scaledl.workload.OpFamily.DENSE, 60),
                org.scaledl.model.Prediction.Contribution.term(org.scaledl.model.Prediction.PIPELINE_BUBBLE,
                        org.scaledl.model.Prediction.Kind.OVERHEAD, 25),
                org.scaledl.model.Prediction.Contribution.term(org.scaledl.model.Prediction.HOST_DISPATCH,
                        org.scaledl.model.Prediction.Kind.OVERHEAD, 10),
                org.scaledl.model.Prediction.Contribution.term("optimizer", org.scaledl.model.Prediction.Kind.OVERHEAD,
                        5)))).orElseThrow());
    }

    /**
     * Where the best layouts fill the GPU's memory to within its 5 % margin, {@code layouts} names the best that leaves
     * the margin free, with its {@code predict} command: the first fitting layout below the margin, none before it.
     */
    @Test
    void layoutsNameTheBestThatLeavesMemoryFree() throws Exception {
        // the options layouts chooses itself are not in its help's list, and still refused with the reason
        Run help = MainTest.run("layouts", "--help");
        assertEquals(0, help.code(), help.err());
        for (String o : LayoutsCommand.CHOSEN) {
            // an option's own line, or its place in the synopsis (descriptions may name it: "needs --expert > 1")
            assertFalse(java.util.regex.Pattern.compile("(?m)(^\\s+(-\\w, )?|\\[)" + o + "(=|\\]|\\s|$)").matcher(
                    help.out().substring(0, help.out().indexOf("layouts chooses"))).find(), o + "\n" + help.out());
            assertTrue(help.out().contains(o), "the footer names " + o);
        }
        Run context = MainTest.run("layouts", "--transformer", published().resolve("configs/llama3-8b/config.json")
                .toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64", "--device", "B200",
                "--context", "2", "--json");
        // --context and --expert are constraints on the ranking, as --tensor is
        assertEquals(0, context.code(), context.err());
        JsonNode inContext = new ObjectMapper().readTree(context.out()).get("ranked");
        assertTrue(inContext.size() > 0);
        inContext.forEach(l -> assertEquals(2, l.get("context").asInt(), l.toString()));
        assertTrue(help.out().contains("Only layouts of this context-parallel degree"), help.out());
        Run dense = MainTest.run("layouts", "--transformer", published().resolve("configs/llama3-8b/config.json")
                .toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64", "--device", "B200",
                "--expert", "2");
        assertEquals(Main.USAGE, dense.code());
        assertTrue(dense.err().contains("has --expert [2]: the search's expert degrees are [1] (the model has no "
                + "routed experts)"), dense.err());
        // every option it hides is one it refuses, and the other way round
        Run all = MainTest.run("layouts", "--transformer", published().resolve("configs/llama3-8b/config.json")
                .toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64", "--device", "B200",
                "--context", "2", "--expert", "2", "--expert-tensor", "1", "--virtual-stages", "2", "--zero-stage", "1",
                "--recompute", "full", "--recompute-layers", "2", "--recompute-modules", "core_attn",
                "--offload-layers", "1", "--sequence-parallel", "--uneven-pipeline");
        assertEquals(Main.USAGE, all.code());
        assertTrue(all.err().contains(String.join(", ", LayoutsCommand.CHOSEN) + ": layouts chooses them"),
                all.err());
        Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama3-70b/config.json").toString(), "--seq", "8192", "--gpus", "64", "--global-batch",
                "128", "--device", "H100 SXM", "--precision", "bf16", "--top", "20", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        JsonNode free = j.get("best_with_memory_free");
        double margin = (1 - org.scaledl.model.RuntimePredictor.MEMORY_EDGE) * 80;
        JsonNode ranked = j.get("ranked");
        assertTrue(ranked.get(0).get("memory_gb").asDouble() > margin, ranked.get(0).toString());
        assertTrue(free != null && free.get("memory_gb").asDouble() <= margin, String.valueOf(free));
        int rank = free.get("rank").asInt();
        assertTrue(rank > 1 && rank <= ranked.size(), "rank " + rank);
        for (int i = 0; i < rank - 1; i++) {
            JsonNode l = ranked.get(i);
            assertTrue(!l.get("fits").asBoolean() || l.get("memory_gb").asDouble() > margin, l.toString());
        }
        assertEquals(ranked.get(rank - 1).get("predict").asText(), free.get("predict").asText());
        assertTrue(free.get("ms").asDouble() >= ranked.get(0).get("ms").asDouble());
        // what a schedule the layouts assumed is worth to each, where 10 % or more: the first's, as its own
        // prediction under the other choice gives it
        String sensitivity = null;
        for (JsonNode w : ranked.get(0).get("sensitivities")) {
            sensitivity = w.asText().startsWith("if --grad-reduce after-backward: +") ? w.asText() : sensitivity;
        }
        assertTrue(sensitivity != null, ranked.get(0).toString());
        // the warnings array keeps kinds only
        for (JsonNode w : ranked.get(0).get("warnings")) {
            assertTrue(w.asText().matches("[a-z_]+"), ranked.get(0).toString());
        }
        List<String> args = new java.util.ArrayList<>();
        java.util.regex.Matcher tokens = java.util.regex.Pattern.compile("'([^']*)'|(\\S+)").matcher(
                ranked.get(0).get("predict").asText());
        while (tokens.find()) {
            args.add(tokens.group(1) != null ? tokens.group(1) : tokens.group(2));
        }
        List<String> predict = new java.util.ArrayList<>(args.subList(3, args.size()));
        predict.add("--json");
        double first = json(predict).get("ms").asDouble();
        assertEquals(ranked.get(0).get("ms").asDouble(), first, 1e-6 * first);
        double after = json(predict, "--grad-reduce", "after-backward").get("ms").asDouble();
        // the note's figure, to its one decimal
        assertEquals(100 * (after / first - 1), Double.parseDouble(sensitivity.replaceAll(".*\\+|%", "")), 0.051);
        // the caller's constraints on tensor and pipeline parallelism: only those layouts, ranked as before
        Run constrained = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama3-70b/config.json").toString(), "--seq", "8192", "--gpus", "64", "--global-batch",
                "128", "--device", "H100 SXM", "--precision", "bf16", "--top", "20", "--tensor", "4,8", "--pipeline",
                "4", "--json");
        assertEquals(0, constrained.code(), constrained.err());
        JsonNode c = new ObjectMapper().readTree(constrained.out());
        assertEquals(j.get("layouts").asInt(), c.get("layouts_searched").asInt());
        assertTrue(c.get("layouts").asInt() < c.get("layouts_searched").asInt());
        double previous = 0;
        for (JsonNode l : c.get("ranked")) {
            assertTrue(List.of(4, 8).contains(l.get("tensor").asInt()) && l.get("pipeline").asInt() == 4,
                    l.toString());
            assertTrue(l.get("ms").asDouble() >= previous);
            previous = l.get("ms").asDouble();
        }
        Run none = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama3-70b/config.json").toString(), "--seq", "8192", "--gpus", "64", "--global-batch",
                "128", "--device", "H100 SXM", "--precision", "bf16", "--tensor", "3");
        assertEquals(Main.USAGE, none.code());
        assertTrue(none.err().contains("has --tensor [3]: the search's tensor degrees are [1, 2, 4, 8]"), none.err());
        // a job with room to spare says nothing of it
        Run roomy = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama3-8b/config.json").toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64",
                "--device", "B200", "--precision", "bf16", "--json");
        assertEquals(0, roomy.code(), roomy.err());
        JsonNode k = new ObjectMapper().readTree(roomy.out());
        double b200 = org.scaledl.io.DeviceCatalog.bundled().require("B200").memoryGB();
        assertTrue(k.get("ranked").get(0).get("memory_gb").asDouble() < 0.95 * b200, roomy.out());
        assertFalse(k.has("best_with_memory_free"), roomy.out());
    }

    /**
     * A Megatron job's breakdown says the pipeline's fill and drain, {@code (p - 1) / v} of {@code m + (p - 1) / v}
     * micro-batch slots of the layers' time, and the GPUs' wait for a host that sets the pace, as entries of their own:
     * the layers' entries are their GPU time in the steady state, and the entries still sum to the prediction.
     */
    @Test
    void theBubbleAndTheHostAreEntriesOfTheBreakdown(@TempDir Path dir) throws Exception {
        // the fill and drain are what m more micro-batches do not double: with G(m) the layers' entries, their
        // collectives' and the bubble, the bubble is 2·G(m) − G(2m) (Llama 3 8B: its last stage carries a
        // 128,256-word output layer, so the stages are uneven)
        Path cfg = published().resolve("configs/llama3-8b/config.json");
        for (String[] layout : new String[][] {{"8", "1", "train"}, {"4", "2", "train"}, {"8", "1", "infer"}}) {
            double[] g = new double[2];
            double bubble = 0;
            for (int i = 0; i < 2; i++) {
                Run r = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "4096",
                        "--batch", "1", "--micro-batches", String.valueOf(8 << i), "--tensor", "2", "--pipeline",
                        layout[0], "--virtual-stages", layout[1], "--phase", layout[2], "--device", "H100 SXM",
                        "--precision", "bf16", "--json");
                assertEquals(0, r.code(), r.err());
                JsonNode j = new ObjectMapper().readTree(r.out());
                double sum = 0;
                for (JsonNode b : j.get("breakdown")) {
                    double ms = b.get("ms").asDouble();
                    String name = b.get("name").asText();
                    sum += ms;
                    if (b.get("kind").asText().startsWith("layer:") || List.of("tensor-parallel", "expert-parallel",
                            "context-parallel", "pipeline bubble").contains(name)) {
                        g[i] += ms;
                    }
                    bubble += i == 0 && name.equals("pipeline bubble") ? ms : 0;
                }
                assertEquals(j.get("ms").asDouble(), sum, 1e-9 * sum, "the entries sum to the prediction");
            }
            double fill = 2 * g[0] - g[1];
            assertTrue(fill > 0, Arrays.toString(layout));
            assertEquals(fill, bubble, 0.03 * fill, Arrays.toString(layout) + ": bubble " + bubble + ", fill " + fill);
        }
        // a small job on a fast GPU waits for its host: said as the host's entry, not spread over the layers
        Path small = dir.resolve("small/config.json");
        Files.createDirectories(small.getParent());
        Files.writeString(small, "{\"model_type\": \"llama\", \"hidden_size\": 512, \"intermediate_size\": 1024, "
                + "\"num_attention_heads\": 8, \"num_key_value_heads\": 8, \"num_hidden_layers\": 16, "
                + "\"vocab_size\": 32000, \"max_position_embeddings\": 4096}");
        Run r = MainTest.run("predict", "--model", "gpu", "--transformer", small.toString(), "--seq", "512",
                "--batch", "1", "--device", "GB200", "--precision", "bf16");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("the host's kernel dispatch sets the pace"), r.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)% waiting for the host").matcher(r.out());
        assertTrue(m.find() && Integer.parseInt(m.group(1)) >= 30, r.out());
        // and a job that cannot run says so on its line, not in a warning alone
        Run oom = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--world-size", "8", "--device", A100, "--precision", "fp16");
        assertEquals(0, oom.code(), oom.err());
        assertTrue(oom.out().contains(" GiB per GPU (does not fit: the GPU has 80.0 GiB)"), oom.out());
        assertFalse(r.out().contains("does not fit"), r.out());
    }

    /**
     * Issue 32's target that one job on the A100 40 GB and 80 GB descriptions differ by no more than their runs would:
     * the parts share tensor peaks, clock and links, so only the memory-bound layers may run slower on the 40 GB part,
     * and by at most its lower bandwidth; the contractions and the communication not at all.
     */
    @Test
    void theA100FortyAndEightyGigabyteDescriptionsDifferOnlyInTheirMemoryBoundLayers(@TempDir Path dir)
            throws Exception {
        Path cfg = config(dir);
        JsonNode[] j = new JsonNode[2];
        String[] parts = {"NVIDIA A100-SXM4-40GB", A100};
        for (int i = 0; i < 2; i++) {
            Run r = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                    "--batch", "1", "--micro-batches", "64", "--world-size", "8", "--tensor", "8", "--pipeline", "8",
                    "--recompute", "full", "--device", parts[i], "--precision", "fp16", "--json");
            assertEquals(0, r.code(), r.err());
            j[i] = new ObjectMapper().readTree(r.out());
        }
        double memoryBound = 0;
        double perLayer = 0;
        double bubble = 0;
        for (JsonNode b : j[1].get("breakdown")) {
            String kind = b.get("kind").asText();
            String name = b.get("name").asText();
            memoryBound += kind.startsWith("layer:") && !kind.equals("layer:DENSE") ? b.get("ms").asDouble() : 0;
            perLayer += kind.startsWith("layer:") || name.equals("tensor-parallel") ? b.get("ms").asDouble() : 0;
            bubble += name.equals("pipeline bubble") ? b.get("ms").asDouble() : 0;
        }
        // the pipeline's fill and drain is the layers' time too (the breakdown says it apart): their share of it
        assertTrue(bubble > 0, "a pipeline of 8 stages has a bubble");
        memoryBound *= 1 + bubble / perLayer;
        org.scaledl.io.DeviceCatalog catalog = org.scaledl.io.DeviceCatalog.bundled();
        double bandwidth = catalog.require(A100).memoryBandwidthGBps()
                / catalog.require("NVIDIA A100-SXM4-40GB").memoryBandwidthGBps();
        double ratio = j[0].get("ms").asDouble() / j[1].get("ms").asDouble();
        double bound = 1 + (bandwidth - 1) * memoryBound / j[1].get("ms").asDouble();
        assertTrue(memoryBound > 0 && bandwidth > 1.2, memoryBound + " " + bandwidth);
        assertTrue(ratio >= 1 && ratio <= bound, "40/80 GB " + ratio + ", at most " + bound);
    }

    /**
     * Recomputation the predictor chose (recompute auto) that fills the GPU's memory to within 5 % is a choice a tuned
     * recipe may not make: warned, naming the choice, and the interval is wider than the same job's with that choice
     * given, by the memory edge's distance (2 × 0.15 × 0.5 in log-width) and nothing else: the time is the same.
     */
    @Test
    void recomputationChosenAtTheEdgeOfMemoryIsWarnedAndWidensTheInterval() throws Exception {
        Path cfg = published().resolve("configs/llama3.1-405b/config.json");
        JsonNode[] j = new JsonNode[2];
        for (int i = 0; i < 2; i++) {
            // the second time, the choice given: "none", "selective", "full" or "full:N" (the first N layers)
            String[] choice = (i == 0 ? "auto" : j[0].get("workload").get("recompute_used").asText()).split(":");
            Run r = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "8192",
                    "--batch", "1", "--micro-batches", "64", "--world-size", "2", "--tensor", "4", "--pipeline", "8",
                    "--context", "2", "--virtual-stages", "8", "--sequence-parallel", "--zero-stage", "1", "--device",
                    "GB200", "--precision", "mxfp8", "--recompute", choice[0], "--recompute-layers",
                    choice.length > 1 ? choice[1] : "0", "--json");
            assertEquals(0, r.code(), r.err());
            j[i] = new ObjectMapper().readTree(r.out());
        }
        double capacity = 186;
        double memory = j[0].get("memory_gb").asDouble();
        assertTrue(memory >= (1 - org.scaledl.model.RuntimePredictor.MEMORY_EDGE) * capacity && memory <= capacity,
                "auto fills the 186 GB of a GB200: " + memory);
        assertEquals(j[0].get("ms").asDouble(), j[1].get("ms").asDouble(), 0.0);
        JsonNode edge = null;
        for (JsonNode w : j[0].get("warnings")) {
            edge = w.get("kind").asText().equals("near_memory_limit") ? w : edge;
        }
        assertTrue(edge != null && edge.get("message").asText().contains("recompute auto: "
                + j[0].get("workload").get("recompute_used").asText()), j[0].get("warnings").toString());
        assertFalse(j[1].get("warnings").toString().contains("near_memory_limit"), j[1].get("warnings").toString());
        // one warning of the choice: the note that says it alone is left out beside this one
        assertFalse(j[0].get("warnings").toString().contains("left to the predictor"), j[0].get("warnings").toString());
        double[] logWidth = new double[2];
        for (int i = 0; i < 2; i++) {
            logWidth[i] = Math.log(j[i].get("high_ms").asDouble() / j[i].get("low_ms").asDouble());
        }
        assertEquals(2 * 0.15 * 0.5, logWidth[0] - logWidth[1], 1e-9);
        // the choice given: its time no less certain, but whether it fits is, which a note says
        JsonNode fits = null;
        for (JsonNode w : j[1].get("warnings")) {
            fits = w.get("message").asText().contains("so it may not fit") ? w : fits;
        }
        assertTrue(fits != null && fits.get("kind").asText().equals("note") && fits.get("message").asText()
                .contains(String.format(java.util.Locale.ROOT, "fills %.1f GiB of the 186.0 GiB", memory)),
                j[1].get("warnings").toString());
    }

    /**
     * A job too small for its GPUs is paced by the host's dispatch, said in a warning; inference dispatches a third of a
     * training step's kernels (its forward pass), so it is not held at the training floor; inference memory is weights
     * (no gradients or optimizer states) and its advice does not offer ZeRO or recomputation; degrees that do not go
     * together from the options are bad input (exit 1), as in a table's row.
     */
    @Test
    void smallJobsInferenceAndConflictingDegrees(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("llama/config.json");
        Files.createDirectories(cfg.getParent());
        Files.writeString(cfg, "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                + "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"num_hidden_layers\": 32, "
                + "\"vocab_size\": 128256, \"max_position_embeddings\": 8192, \"attention_dropout\": 0.0}");
        String[] job = {"predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "512", "--batch", "1",
            "--device", "H100 SXM", "--precision", "bf16", "--json"};
        Run train = MainTest.run(job);
        Run infer = MainTest.run(java.util.stream.Stream.concat(Arrays.stream(job),
                java.util.stream.Stream.of("--phase", "infer")).toArray(String[]::new));
        assertEquals(0, train.code(), train.err());
        assertEquals(0, infer.code(), infer.err());
        double t = new ObjectMapper().readTree(train.out()).get("ms").asDouble();
        double i = new ObjectMapper().readTree(infer.out()).get("ms").asDouble();
        assertTrue(i < 0.5 * t, i + " ms inference vs " + t + " ms training");
        // 8B parameters' weights and optimizer states do not fit one H100 whatever is recomputed: auto predicts the
        // least memory it reaches, and says that nothing fits
        assertEquals("full", new ObjectMapper().readTree(train.out()).get("workload").get("recompute_used").asText());
        assertTrue(train.err().contains("no recomputation fits the job"), train.err());
        assertTrue(infer.err().contains("kernel dispatch sets the pace")
                && infer.err().contains("a third of that in inference"), infer.err());
        assertFalse(train.err().contains("in inference"), train.err());
        Run big = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "4096",
                "--batch", "64", "--device", "T4", "--precision", "fp16", "--phase", "infer");
        assertTrue(big.err().contains("stage 1 of 1: weights ") && !big.err().contains("gradients")
                && big.err().contains("a smaller batch") && !big.err().contains("ZeRO"), big.err());
        String[][] conflicts = {{"--sequence-parallel"}, {"--virtual-stages", "2"}, {"--world-size", "2", "--expert",
            "4"}};
        for (String[] c : conflicts) {
            Run r = MainTest.run(java.util.stream.Stream.concat(Arrays.stream(job), Arrays.stream(c))
                    .toArray(String[]::new));
            assertEquals(1, r.code(), String.join(" ", c) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }

    /**
     * LoRA: a candidate row's {@code lora_rank} and {@code --lora-rank} give the same job (faster and smaller than
     * training every weight); a bad rank names its line; {@code layouts} refuses the options it chooses itself.
     */
    @Test
    void loraJobsAndLayoutChoices(@TempDir Path dir) throws Exception {
        Path cfg = config(dir);
        Map<String, Map<String, String>> rows = scored(dir, HEADER + ",lora_rank\nfull,gpt3/config.json,2048,1,32,4,"
                + "8,8," + A100 + ",8,1600,fp16,full,true,train,0\nlora,gpt3/config.json,2048,1,32,4,8,8," + A100
                + ",8,1600,fp16,full,true,train,32\n");
        Path jobs = dir.resolve("jobs.csv");
        Path scored = dir.resolve("scored.csv");
        double full = Double.parseDouble(rows.get("full").get("predicted_ms"));
        double lora = Double.parseDouble(rows.get("lora").get("predicted_ms"));
        assertTrue(lora < 0.9 * full, lora + " vs " + full);
        assertTrue(Double.parseDouble(rows.get("lora").get("memory_gb"))
                < Double.parseDouble(rows.get("full").get("memory_gb")));
        Run one = MainTest.run("predict", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--batch", "1", "--micro-batches", "32", "--world-size", "4", "--tensor", "8", "--pipeline", "8",
                "--device", A100, "--gpus-per-node", "8", "--inter-node-gbps", "1600", "--precision", "fp16",
                "--recompute", "full", "--sequence-parallel", "--lora-rank", "32", "--json");
        assertEquals(0, one.code(), one.err());
        assertEquals(rows.get("lora").get("predicted_ms"), String.format(java.util.Locale.ROOT, "%.4f",
                new ObjectMapper().readTree(one.out()).get("ms").asDouble()));
        Files.writeString(jobs, HEADER + ",lora_rank\nbad,gpt3/config.json,2048,1,32,4,8,8," + A100
                + ",8,1600,fp16,full,true,train,-4\n");
        Run bad = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                scored.toString());
        assertEquals(1, bad.code(), bad.err());
        assertTrue(bad.err().contains("jobs.csv:2:") && bad.err().contains("lora_rank"),
                bad.err());
        Run chosen = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--gpus", "64", "--global-batch", "64", "--device", "H100 SXM", "--context", "2", "--virtual-stages", "2");
        assertEquals(2, chosen.code(), chosen.err());
        assertTrue(chosen.err().contains("--virtual-stages: layouts chooses it")
                && chosen.err().strip().lines().count() == 1, chosen.err());
    }

    /**
     * 16-bit gradients: a row's {@code grad_dtype} and {@code --grad-dtype} give the same job, 2 bytes a parameter
     * smaller than FP32 gradients; an unknown type is a usage error (exit 2, as an unknown precision), 16-bit
     * gradients with FP32 bad input (exit 1), from the options as from a row, each one line naming the option or
     * the row.
     */
    @Test
    void sixteenBitGradientsFromTheTableAndTheOption(@TempDir Path dir) throws Exception {
        config(dir);
        Map<String, Map<String, String>> rows = scored(dir, HEADER + ",grad_dtype\nfp32,gpt3/config.json,2048,1,32,4,"
                + "8,8," + A100 + ",8,1600,bf16,full,true,train,fp32\nbf16,gpt3/config.json,2048,1,32,4,8,8," + A100
                + ",8,1600,bf16,full,true,train,bf16\n");
        Path jobs = dir.resolve("jobs.csv");
        double full = Double.parseDouble(rows.get("fp32").get("memory_gb"));
        double half = Double.parseDouble(rows.get("bf16").get("memory_gb"));
        // GPT-3 175B over t8 p8: the busiest stage's ~2.8e9 parameters, 2 bytes each
        assertTrue(full - half > 4.5 && full - half < 6, full + " vs " + half);
        Run one = MainTest.run("predict", "--model", "gpu", "--transformer", dir.resolve("gpt3/config.json")
                .toString(), "--seq", "2048", "--batch", "1", "--micro-batches", "32", "--world-size", "4",
                "--tensor", "8", "--pipeline", "8", "--device", A100, "--gpus-per-node", "8", "--inter-node-gbps",
                "1600", "--precision", "bf16", "--recompute", "full", "--sequence-parallel", "--grad-dtype", "bf16",
                "--json");
        assertEquals(0, one.code(), one.err());
        JsonNode j = new ObjectMapper().readTree(one.out());
        assertEquals(rows.get("bf16").get("predicted_ms"), String.format(java.util.Locale.ROOT, "%.4f",
                j.get("ms").asDouble()));
        Run bad = MainTest.run("predict", "--model", "gpu", "--transformer", dir.resolve("gpt3/config.json")
                .toString(), "--seq", "2048", "--batch", "1", "--device", A100, "--precision", "bf16",
                "--grad-dtype", "fp8");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("--grad-dtype") && bad.err().contains("expected fp32, bf16 or fp16")
                && bad.err().strip().lines().count() == 1, bad.err());
        Run conflict = MainTest.run("predict", "--model", "gpu", "--transformer", dir.resolve("gpt3/config.json")
                .toString(), "--seq", "2048", "--batch", "1", "--device", A100, "--precision", "fp32",
                "--grad-dtype", "bf16");
        assertEquals(1, conflict.code(), conflict.err());
        assertTrue(conflict.err().contains("16-bit gradients") && conflict.err().strip().lines().count() == 1,
                conflict.err());
        Files.writeString(jobs, HEADER + ",grad_dtype\nbad,gpt3/config.json,2048,1,32,4,8,8," + A100
                + ",8,1600,fp32,full,true,train,bf16\n");
        // a misspelt column would leave every row at its default: said, naming the column meant
        Path typo = dir.resolve("typo.csv");
        Files.writeString(typo, HEADER.replace("micro_batches", "micro_batch") + "\nx,gpt3/config.json,2048,1,32,4,8,8,"
                + A100 + ",8,1600,bf16,full,true,train\n");
        Run misspelt = MainTest.run("predict", "--model", "gpu", "--candidates", typo.toString(), "--out",
                dir.resolve("typo-scored.csv").toString());
        assertEquals(0, misspelt.code(), misspelt.err());
        assertTrue(misspelt.err().contains("column 'micro_batch' is not one scaledl reads (did you mean "
                + "'micro_batches'?)"), misspelt.err());
        Run fp32 = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                dir.resolve("x.csv").toString());
        assertEquals(1, fp32.code(), fp32.err());
        assertTrue(fp32.err().contains("jobs.csv:2:") && fp32.err().contains("16-bit gradients"), fp32.err());
        assertFalse(Files.exists(dir.resolve("x.csv")));
    }

    /**
     * The gradients' reduction after the backward pass: a row's {@code grad_reduce} and {@code --grad-reduce} give
     * the same job, slower than overlapped where the data-parallel reduction crosses nodes; an unknown value is a
     * usage error naming the option (exit 2), and bad input naming the file and row in a table (exit 1).
     */
    @Test
    void gradientReductionFromTheTableAndTheOption(@TempDir Path dir) throws Exception {
        config(dir);
        String job = "gpt3/config.json,2048,1,8,32,8,4," + A100 + ",8,200,fp16,full,true,train,";
        Map<String, Map<String, String>> rows = scored(dir, HEADER + ",grad_reduce\noverlapped," + job
                + "overlapped\nafter," + job + "after-backward\ndefault," + job + "\n");
        Path jobs = dir.resolve("jobs.csv");
        double overlapped = Double.parseDouble(rows.get("overlapped").get("predicted_ms"));
        double after = Double.parseDouble(rows.get("after").get("predicted_ms"));
        assertEquals(overlapped, Double.parseDouble(rows.get("default").get("predicted_ms")), 1e-9,
                "overlapped by default");
        // 32 replicas of t8 p4 over 200 Gb/s nodes: ~11 GB of 16-bit gradients a GPU, reduced across nodes
        assertTrue(after > overlapped * 1.01, after + " vs " + overlapped);

        List<String> same = List.of("predict", "--model", "gpu", "--transformer", dir.resolve("gpt3/config.json")
                .toString(), "--seq", "2048", "--batch", "1", "--micro-batches", "8", "--world-size", "32",
                "--tensor", "8", "--pipeline", "4", "--device", A100, "--gpus-per-node", "8", "--inter-node-gbps",
                "200", "--precision", "fp16", "--recompute", "full", "--sequence-parallel", "--json");
        List<String> afterArgs = new java.util.ArrayList<>(same);
        afterArgs.addAll(List.of("--grad-reduce", "after-backward"));
        Run one = MainTest.run(afterArgs.toArray(new String[0]));
        assertEquals(0, one.code(), one.err());
        JsonNode j = new ObjectMapper().readTree(one.out());
        assertEquals(rows.get("after").get("predicted_ms"), String.format(java.util.Locale.ROOT, "%.4f",
                j.get("ms").asDouble()));
        assertEquals("after-backward", j.get("workload").get("grad_reduce").asText());
        // not given: FP16 training's own 16-bit gradient buffers (Megatron-LM, DeepSpeed), echoed as such
        assertEquals("fp16", j.get("workload").get("grad_dtype").asText());
        assertFalse(j.get("warnings").toString().contains("assumed overlapped"), j.get("warnings").toString());
        // described overlapped, where reducing after the backward pass moves the step by more than 2 %, the
        // assumption is said with that step's time
        JsonNode o = new ObjectMapper().readTree(MainTest.run(same.toArray(new String[0])).out());
        assertEquals("overlapped", o.get("workload").get("grad_reduce").asText());
        String said = o.get("warnings").toString();
        assertTrue(after > 1.02 * overlapped, "a job the reduction moves by more than 2 %: " + after);
        assertTrue(said.contains("assumed overlapped") && said.contains(String.format(java.util.Locale.ROOT,
                "the step takes %.2f ms", after)), said);
        // stated overlapped (the option, or a row's cell), it is given, not assumed: the same step, nothing said
        List<String> statedArgs = new java.util.ArrayList<>(same);
        statedArgs.addAll(List.of("--grad-reduce", "overlapped"));
        JsonNode stated = new ObjectMapper().readTree(MainTest.run(statedArgs.toArray(new String[0])).out());
        assertEquals(o.get("ms").asDouble(), stated.get("ms").asDouble(), 0);
        assertFalse(stated.get("warnings").toString().contains("assumed overlapped"), stated.get("warnings")
                .toString());
        // the table's rows: the empty cell is assumed and said, the stated one not (the messages, in JSON lines)
        Path lines = dir.resolve("scored.jsonl");
        assertEquals(0, MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                lines.toString()).code());
        Map<String, String> warned = new java.util.HashMap<>();
        for (String line : Files.readAllLines(lines)) {
            JsonNode n = new ObjectMapper().readTree(line);
            warned.put(n.get("name").asText(), n.get("warnings").toString());
        }
        assertTrue(warned.get("default").contains("assumed overlapped"), warned.get("default"));
        assertFalse(warned.get("overlapped").contains("assumed overlapped"), warned.get("overlapped"));
        // the option fills the column for rows that lack it
        Path filled = dir.resolve("filled.csv");
        Run option = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--grad-reduce",
                "after-backward", "--out", filled.toString());
        assertEquals(0, option.code(), option.err());
        Map<String, Map<String, String>> optionRows = rows(filled);
        assertEquals(rows.get("after").get("predicted_ms"), optionRows.get("default").get("predicted_ms"));
        assertEquals(rows.get("overlapped").get("predicted_ms"), optionRows.get("overlapped").get("predicted_ms"),
                "a row's own value wins");
        Run bad = MainTest.run("predict", "--model", "gpu", "--transformer", dir.resolve("gpt3/config.json")
                .toString(), "--seq", "2048", "--batch", "1", "--device", A100, "--precision", "bf16",
                "--grad-reduce", "later");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("--grad-reduce")
                && bad.err().contains("expected overlapped, gather-after-step or after-backward")
                && bad.err().strip().lines().count() == 1, bad.err());
        Files.writeString(jobs, HEADER + ",grad_reduce\nx," + job + "later\n");
        Run row = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString(), "--out",
                dir.resolve("x.csv").toString());
        assertEquals(1, row.code(), row.err());
        assertTrue(row.err().contains("jobs.csv:2: grad_reduce: ")
                && row.err().contains("expected overlapped, gather-after-step or after-backward"), row.err());
    }

    /**
     * A layout search that cannot succeed says why in one line, and absurd machines are refused naming the option
     * (exit 2: a request refused).
     */
    @Test
    void impossibleLayoutSearchesExplainThemselves(@TempDir Path dir) throws Exception {
        Path cfg = config(dir);
        Run none = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--gpus", "2147483647", "--global-batch", "64", "--device", "H100 SXM");
        assertEquals(2, none.code(), none.err());
        assertTrue(none.err().contains("no layout of 2147483647 GPUs") && none.err().strip().lines().count() == 1,
                none.err());
        Run huge = MainTest.run("layouts", "--model", "gpu", "--transformer", cfg.toString(), "--seq", "2048",
                "--gpus", "1073741824", "--gpus-per-node", "1073741824", "--global-batch", "64", "--device",
                "H100 SXM");
        assertEquals(2, huge.code(), huge.err());
        assertTrue(huge.err().contains("--gpus-per-node") && huge.err().strip().lines().count() == 1, huge.err());
        // a search where no layout fits still ranks them, and says on stderr that the first cannot run either
        Run tight = MainTest.run("layouts", "--model", "gpu", "--transformer", published().resolve(
                "configs/llama2-70b/config.json").toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "64",
                "--device", "H100 SXM", "--precision", "bf16", "-q");
        assertEquals(0, tight.code(), tight.err());
        assertTrue(tight.out().contains("(0 fit)"), tight.out());
        assertTrue(tight.err().contains("none of the") && tight.err().contains("fits the 80.0 GiB of NVIDIA H100"),
                tight.err());
    }

    @Test
    void optionsFillTheColumnsARowLacks(@TempDir Path dir) throws Exception {
        config(dir);
        Path explicit = dir.resolve("explicit.csv");
        Files.writeString(explicit, "transformer,seq,batch,micro_batches,tensor,pipeline,device,precision\n"
                + "gpt3/config.json,2048,1,16,8,4," + A100 + ",bf16\n");
        Path lacking = dir.resolve("lacking.csv");
        Files.writeString(lacking, "transformer,seq,batch,micro_batches,tensor,pipeline,device,precision\n"
                + "gpt3/config.json,2048,1,16,8,4," + A100 + ",\n");
        Run a = MainTest.run("predict", "--model", "gpu", "--candidates", explicit.toString());
        Run b = MainTest.run("predict", "--model", "gpu", "--candidates", lacking.toString(), "--precision", "bf16");
        Run c = MainTest.run("predict", "--model", "gpu", "--candidates", lacking.toString());
        assertEquals(0, a.code(), a.err());
        assertEquals(0, b.code(), b.err());
        assertEquals(0, c.code(), c.err());
        String predicted = a.out().lines().skip(1).findFirst().orElseThrow().split(",")[8];
        assertEquals(predicted, b.out().lines().skip(1).findFirst().orElseThrow().split(",")[8]);
        // FP32 (no option, no cell) runs the contractions without tensor cores' half-precision peak
        assertNotEquals(predicted, c.out().lines().skip(1).findFirst().orElseThrow().split(",")[8]);
    }

    @Test
    void badJobRowsAreNamedByFileAndLine(@TempDir Path dir) throws Exception {
        config(dir);
        String[][] cases = {
            {"gpt3/config.json,,1," + A100 + ",fp16,false", "needs seq"},
            {"gpt3/config.json,2048,1," + A100 + ",fp9,false", "unknown precision 'fp9'"},
            {"gpt3/config.json,2048,1," + A100 + ",fp8,false", "cannot run fp8: it has no FP8 matrix units"},
            {"gpt3/config.json,2048,1," + A100 + ",fp16,maybe", "sequence_parallel must be true or false"},
            {"gpt3/config.json,2048,1," + A100 + ",fp16,true", "sequence parallelism needs tensor parallelism"},
            {"gpt3/nope.json,2048,1," + A100 + ",fp16,false", "transformer file not found"},
            {"gpt3/config.json,4096,1," + A100 + ",fp16,false", "longer than its 2048 learned positions"},
            {"gpt3/config.json,2048,0," + A100 + ",fp16,false", "batch must be an integer in 1..1048576"},
        };
        for (String[] c : cases) {
            Path jobs = dir.resolve("bad.csv");
            Files.writeString(jobs, "transformer,seq,batch,device,precision,sequence_parallel\n\n" + c[0] + "\n");
            Run r = MainTest.run("predict", "--model", "gpu", "--candidates", jobs.toString());
            assertEquals(Main.BAD_INPUT, r.code(), c[0] + ": " + r.err());
            assertTrue(r.err().contains("bad.csv:3:") && r.err().contains(c[1]), c[0] + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }

    /**
     * Inputs that were accepted and ignored, or taken twice, are refused or said: measured points with both a
     * world_size and a gpus column, a point copied, a point on neither sweep (said), a --dim given twice or without a
     * size, an experiment's option without its experiment.
     */
    @Test
    void ignoredOrRepeatedInputsAreRefusedOrSaid(@TempDir Path dir) throws Exception {
        String graph = MainTest.graph("resnet18_r64").toString();
        Path measured = dir.resolve("measured.csv");
        String[] common = {"scaling", "--model", "gpu", "--graph", graph, "--batch", "16", "--device", "Tesla T4",
            "--precision", "fp16", "--gpus", "1,2", "--batches", "4,16", "--out", dir.resolve("s.svg").toString(),
            "--measured", measured.toString()};
        Files.writeString(measured, "world_size,gpus,batch,measured_ms\n1,1,16,30\n1,2,16,30\n");
        Run both = MainTest.run(common);
        assertEquals(1, both.code(), both.err());
        assertTrue(both.err().contains("measured.csv:3: gpus 2 and world_size 1 disagree"), both.err());
        Files.writeString(measured, "world_size,batch,measured_ms\n1,16,30\n2,16,33\n1,16,30\n");
        Run copied = MainTest.run(common);
        assertEquals(1, copied.code(), copied.err());
        assertTrue(copied.err().contains("measured.csv:4: the same point as line 2"), copied.err());
        Files.writeString(measured, "world_size,batch,measured_ms\n1,16,30\n2,4,20\n");
        Run off = MainTest.run(common);
        assertEquals(0, off.code(), off.err());
        assertTrue(off.err().contains("1 measured point lies on neither sweep"), off.err());
        for (String[] dim : new String[][] {{"seq=16", "seq=32"}, {"seq", "seq=1"}, {"=3", "seq=1"}}) {
            Run r = MainTest.run("predict", "--model", "gpu", "--graph", graph, "--batch", "2", "--device",
                    "Tesla T4", "--dim", dim[0], "--dim", dim[1]);
            assertEquals(2, r.code(), r.err());
            assertTrue(r.err().contains("--dim"), r.err());
        }
        Run draws = MainTest.run("evaluate-clusters", "--draws", "5");
        assertEquals(2, draws.code(), draws.err());
        assertTrue(draws.err().contains("--draws is an option of --calibration"), draws.err());
        // a --data folder without GPU measurements is bad input, named
        Run wrongData = MainTest.run("evaluate-megatron", "--data", dir.toString());
        assertEquals(Main.BAD_INPUT, wrongData.code(), wrongData.err());
        assertTrue(wrongData.err().contains(dir + ": no GPU measurements under it"), wrongData.err());
        Run newest = MainTest.run("evaluate-clusters", "--newest", "NVIDIA Voodoo");
        assertEquals(2, newest.code(), newest.err());
        assertTrue(newest.err().contains("--newest: unknown device 'NVIDIA Voodoo'"), newest.err());
    }

    /**
     * {@code evaluate-megatron --out} writes each scored run of each split (every tenth of vTrain's runs beside the
     * core module's excerpts of the kernel tables): as many rows as the splits scored, the in-sample split every run once, each split's mean
     * absolute error its printed MRE, each row's error its predicted over measured time less one, the run named by
     * its source line; an output that is not a CSV is refused before the fits.
     */
    @Test
    void evaluateMegatronWritesEveryScoredRun(@TempDir Path dir) throws Exception {
        Path gpu = published().getParent();
        Path excerpts = gpu.getParent().getParent().resolve("scaledl-core/src/test/resources/gpu");
        Path root = dir.resolve("gpu");
        for (Path from : List.of(excerpts.resolve("neusight"), excerpts.resolve("deepbench"),
                gpu.resolve("vtrain/nccl"))) {
            try (var files = Files.walk(from)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    Path to = root.resolve(from.getParent().getFileName().toString().equals("vtrain")
                            ? "vtrain/" + gpu.resolve("vtrain").relativize(f) : excerpts.relativize(f).toString());
                    Files.createDirectories(to.getParent());
                    Files.copy(f, to);
                }
            }
        }
        List<String> lines = Files.readAllLines(gpu.resolve("vtrain/ground_truth_single.csv"));
        StringBuilder every10th = new StringBuilder(lines.get(0)).append('\n');
        for (int i = 1; i < lines.size(); i += 10) {
            every10th.append(lines.get(i)).append('\n');
        }
        Files.writeString(root.resolve("vtrain/ground_truth_single.csv"), every10th);
        Run refused = MainTest.run("evaluate-megatron", "--data", root.toString(), "--out",
                dir.resolve("runs.txt").toString());
        assertEquals(2, refused.code(), refused.err());
        Path out = dir.resolve("runs.csv");
        JsonNode j = json(List.of("evaluate-megatron", "--data", root.toString(), "--out", out.toString(), "--json",
                "-q"));
        int runs = j.get("runs").asInt();
        assertEquals(144, runs);
        List<String> rows = Files.readAllLines(out);
        assertEquals("split,source,model,gpus,tensor,pipeline,data,micro_batch,global_batch,measured_ms,"
                + "predicted_ms,error", rows.get(0));
        Map<String, double[]> bySplit = new HashMap<>();
        for (String row : rows.subList(1, rows.size())) {
            String[] c = row.split(",");
            assertEquals(12, c.length, row);
            assertTrue(c[1].matches(".*ground_truth_single\\.csv:\\d+"), row);
            assertEquals(Integer.parseInt(c[3]), Integer.parseInt(c[4]) * Integer.parseInt(c[5])
                    * Integer.parseInt(c[6]), row);
            double measured = Double.parseDouble(c[9]);
            double predicted = Double.parseDouble(c[10]);
            double error = Double.parseDouble(c[11]);
            assertEquals(predicted / measured - 1, error, 1e-5, row);
            double[] sum = bySplit.computeIfAbsent(c[0], k -> new double[2]);
            sum[0] += Math.abs(error);
            sum[1]++;
        }
        int scored = 0;
        for (JsonNode split : j.get("splits")) {
            scored += split.get("test_runs").asInt();
        }
        assertEquals(scored, rows.size() - 1);
        assertEquals(runs, (int) bySplit.get("in_sample")[1]);
        assertEquals(runs, (int) bySplit.get("model")[1]);
        assertEquals(j.get("splits").get(0).get("mre").asDouble(), bySplit.get("in_sample")[0] / runs, 1e-5);
        assertEquals(j.get("splits").get(1).get("mre").asDouble(), bySplit.get("model")[0] / runs, 1e-5);
    }

    /**
     * A CPU model's scaling calibrates on measured points of the one machine it knows (they had no machine, and the
     * calibration failed with a message naming a Java method), and says workers, not GPUs.
     */
    @Test
    void aCpuModelsScalingCalibratesOnItsMachinesPoints(@TempDir Path dir) throws Exception {
        Path measured = dir.resolve("measured.csv");
        Files.writeString(measured, "world_size,batch,measured_ms\n1,8,100\n2,8,120\n");
        Run r = MainTest.run("scaling", "--model", "cpu-ddp", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "8", "--gpus", "1,2,4", "--batches", "8", "--measured", measured.toString(), "--out",
                dir.resolve("s.svg").toString(), "--json");
        assertEquals(0, r.code(), r.err());
        assertFalse(r.err().contains("cannot be calibrated") || r.err().contains("Workload.Builder"), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        JsonNode cal = j.get("calibrated_by_workers");
        assertTrue(cal != null && cal.size() == 3, r.out());
        // the calibration moved the curve toward the points (both far slower than the model's 2-core VM fit)
        assertTrue(cal.get(0).get("ms").asDouble() != j.get("by_workers").get(0).get("ms").asDouble(), r.out());
        assertTrue(r.err().contains("1 point lies beyond the worker counts the model was fitted on (1..2): 4 workers"),
                r.err());
    }

    @Test
    void scalingWritesFourPanelsWithTheMeasuredPointsOnTop(@TempDir Path dir) throws Exception {
        Path measured = dir.resolve("measured.csv");
        Files.writeString(measured, "world_size,batch,measured_ms\n1,16,30\n4,16,33\n1,4,12\n");
        Path svg = dir.resolve("s.svg");
        Run r = MainTest.run("scaling", "--model", "gpu", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "16", "--device", "Tesla T4", "--precision", "fp16", "--gpus", "1,2,4,8",
                "--batches", "1,4,16,64", "--measured", measured.toString(), "--out", svg.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        // the T4 is known from single-GPU data: the sweep's larger points are said once, with their GPU counts
        assertTrue(r.err().contains("3 points lie beyond the GPU counts the model was fitted on (1..1): 2, 4, 8 GPUs"),
                r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(4, j.get("by_workers").size());
        assertEquals(4, j.get("by_batch").size());
        for (JsonNode x : j.get("by_batch")) {
            // an imported graph runs as given: the recomputation each point runs with is said, here none
            assertEquals("none", x.get("recompute").asText(), x.toString());
            assertTrue(x.get("memory_gb").asDouble() > 0, x.toString());
        }
        double previous = 0;
        for (JsonNode x : j.get("by_workers")) {
            assertTrue(x.get("low_ms").asDouble() <= x.get("ms").asDouble()
                    && x.get("ms").asDouble() <= x.get("high_ms").asDouble(), x.toString());
            assertTrue(x.get("throughput_per_s").asDouble() > previous, "more workers, more samples per second");
            previous = x.get("throughput_per_s").asDouble();
        }
        org.w3c.dom.Document doc = javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(svg.toFile());
        String text = doc.getDocumentElement().getTextContent();
        for (String title : List.of("time vs GPUs", "throughput vs GPUs", "time vs batch",
                "throughput vs batch")) {
            assertTrue(text.contains(title), title);
        }
        // two measured points at batch 16 (two panels each), two at one worker (two panels each)
        org.w3c.dom.NodeList circles = doc.getElementsByTagName("circle");
        int measuredMarks = 0;
        for (int i = 0; i < circles.getLength(); i++) {
            if (circles.item(i).getAttributes().getNamedItem("stroke") != null) {
                measuredMarks++;
            }
        }
        assertEquals(8, measuredMarks);
    }

    /**
     * {@code inspect --model gpu} shows the fitted execution model: every named term with its coefficient (the host's
     * time per layer with routed experts among them) and the level a calibration weighs, in text and under
     * {@code execution} in JSON, which a saved model reads back the same.
     */
    @Test
    void inspectShowsTheExecutionModelsTerms() throws Exception {
        Run text = MainTest.run("inspect", "--model", "gpu");
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().contains("ms_per_expert_layer_step") && text.out().contains("dense_fp8")
                && text.out().contains("weighs the model's level as"), text.out());
        Run json = MainTest.run("inspect", "--model", "gpu", "--json");
        assertEquals(0, json.code(), json.err());
        JsonNode execution = new ObjectMapper().readTree(json.out()).get("execution");
        assertTrue(execution.get("ms_per_expert_layer_step").asDouble() > 0, execution.toString());
        assertTrue(execution.get("level_prior_runs").asDouble() > 0.5, execution.toString());
        assertEquals(execution, org.scaledl.model.exec.MegatronModel.fromJson(execution).toJson());
        Run host = MainTest.run("inspect", "--model", "cpu-zoo", "--json");
        assertFalse(new ObjectMapper().readTree(host.out()).has("execution"), host.out());
    }
}
