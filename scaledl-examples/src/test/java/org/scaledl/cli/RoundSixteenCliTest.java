package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.JobRuns;
import org.scaledl.io.TrainingLogs;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * Round sixteen of hostile input and the person at the keyboard: what the stop before left open and what this
 * stop's probes found. Each case here fails on the code before.
 */
class RoundSixteenCliTest {
    private static final Path LLAMA_8B = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    /**
     * A list option with an empty value (a trailing, leading or doubled comma) is refused naming the option and what
     * was given; it was read as the list without it ({@code --gpus 8,16,} swept 8 and 16 without a word).
     */
    @Test
    void listsWithAnEmptyValueAreRefused(@TempDir Path dir) {
        MainTest.Run trailing = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(),
                "--seq", "4096", "--batch", "1", "--device", "H100", "--gpus", "8,16,");
        assertTrue(trailing.err().contains("(given '8,16,')"), trailing.err());
        for (String gpus : new String[] {"8,16,", ",8,16", "8,,16", "8, ,16"}) {
            MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                    "4096", "--batch", "1", "--device", "H100", "--gpus", gpus);
            assertEquals(Main.USAGE, r.code(), gpus + ": " + r.err());
            assertTrue(r.err().contains("'--gpus' has an empty value in its list") && !r.err().contains("<"), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
        MainTest.Run methods = MainTest.run("evaluate", "--data", "unread", "--cv", "family", "--methods",
                "scaledl,");
        assertEquals(Main.USAGE, methods.code(), methods.err());
        assertTrue(methods.err().contains("'--methods' has an empty value"), methods.err());
        MainTest.Run fine = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--device", "H100", "--gpus", "8,16", "--out", dir.resolve("scaling.svg")
                .toString());
        assertEquals(0, fine.code(), fine.err());
    }

    /**
     * {@code evaluate --folds} beyond the data's groups holds each group out alone, as "at most this many folds"
     * says, and now says so (it ran leave-one-group-out without a word).
     */
    @Test
    void foldsBeyondTheGroupsAreSaid(@TempDir Path dir) throws Exception {
        Path ds = dir.resolve("ds");
        MainTest.smallDataset(ds);
        MainTest.Run many = MainTest.run("evaluate", "--data", ds.toString(), "--cv", "model", "--folds", "5",
                "--methods", "scaledl");
        assertEquals(0, many.code(), many.err());
        assertTrue(many.err().contains("note: --folds 5, but the data has 3 models: each held out alone (leave one "
                + "model out)"), many.err());
        MainTest.Run few = MainTest.run("evaluate", "--data", ds.toString(), "--cv", "model", "--folds", "3",
                "--methods", "scaledl");
        assertEquals(0, few.code(), few.err());
        assertFalse(few.err().contains("--folds"), few.err());
    }

    /**
     * A training log's run as a Java sample ({@code TrainingLogs.Run.sample}) is the row {@code runs --from-log} writes
     * and {@code fit --calibrate --runs} reads: the same job, predicted alike, measured alike (the table rounds to
     * 0.1 µs), for Megatron's and NeMo's logs, a mixture of experts, FP8 with selective recomputation. A Java user had
     * to map the log's 21 settings by hand to calibrate on it.
     */
    @Test
    void aLogsRunsAsJavaSamplesAreTheRunsTablesRows(@TempDir Path dir) throws Exception {
        Path logs = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs");
        String megatron = Files.readString(logs.resolve("megatron-llama3-8b.log"));
        Path moe = dir.resolve("moe.log");
        Files.writeString(moe, megatron.replace("num_experts ..................................... None",
                "num_experts ..................................... 8").replace(
                "expert_model_parallel_size ...................... 1", "expert_model_parallel_size ...................... 4")
                .replace("expert_tensor_parallel_size ..................... 4",
                        "expert_tensor_parallel_size ..................... 1"));
        Path fp8 = dir.resolve("fp8.log");
        Files.writeString(fp8, megatron.replace("fp8 ............................................. None",
                "fp8 ............................................. hybrid").replace(
                "recompute_granularity ........................... None",
                "recompute_granularity ........................... selective"));
        RuntimePredictor gpu = org.scaledl.models.BundledModels.load("gpu");
        DeviceCatalog catalog = DeviceCatalog.bundled();
        for (Path log : List.of(logs.resolve("megatron-llama3-8b.log"), logs.resolve("nemo-llama3-8b.log"), moe, fp8)) {
            Path table = dir.resolve(log.getFileName() + ".csv");
            MainTest.Run r = MainTest.run("-q", "runs", "--from-log", log.toString(), "--out", table.toString());
            assertEquals(0, r.code(), r.err());
            List<Sample> rows = JobRuns.read(table, OnnxImporter::read, PlanCommand.gpuNames(Catalogs.of(null)),
                    Map.of());
            List<TrainingLogs.Run> runs = TrainingLogs.read(log, TrainingLogs.DEFAULT_WARMUP);
            assertEquals(rows.size(), runs.size(), log.toString());
            for (int i = 0; i < runs.size(); i++) {
                TrainingLogs.Run run = runs.get(i);
                Sample java = run.sample(catalog.require(run.device().orElseThrow()));
                Workload a = java.workload();
                Workload b = rows.get(i).workload();
                String what = log + " run " + (i + 1);
                assertEquals(rows.get(i).millis(), java.millis(), 1e-4, what);
                assertEquals(b.parallelism(), a.parallelism(), what);
                assertEquals(b.batch(), a.batch(), what);
                assertEquals(b.precision(), a.precision(), what);
                assertEquals(b.recomputeLabel(), a.recomputeLabel(), what);
                assertEquals(b.topology(), a.topology(), what);
                assertEquals(b.toString().replaceAll("[^ ]*\\.(json|csv|log)[^ ]*", ""),
                        a.toString().replaceAll("[^ ]*\\.(json|csv|log)[^ ]*", ""), what);
                assertEquals(gpu.predictMillis(b), gpu.predictMillis(a), 1e-9 * gpu.predictMillis(b), what);
                assertEquals(run.id(), a.tag("id").orElseThrow());
            }
        }
        assertTrue(TrainingLogs.read(moe, 0).get(0).job().expert() == 4);
    }

    private static final Path CONFIGS = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers");

    private static JsonNode json(MainTest.Run r) throws Exception {
        assertEquals(0, r.code(), r.err());
        return new ObjectMapper().readTree(r.out());
    }

    /**
     * ZeRO on a single data-parallel replica shards nothing and is predicted as without it, as its note says: stage 3
     * had cut the memory (the 16-bit weights left out as if gathered) and moved the time, turning an
     * out-of-memory job into one that fits.
     */
    @Test
    void zeroOnOneReplicaIsPredictedAsWithoutIt() throws Exception {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq", "4096", "--batch",
            "1", "--micro-batches", "8", "--gpus", "8", "--tensor", "8", "--device", "H200", "--precision", "bf16",
            "--recompute", "none", "--json"};
        JsonNode none = json(MainTest.run(job));
        for (String zero : new String[] {"1", "2", "3"}) {
            MainTest.Run r = MainTest.run(HostileCliTest.concat(job, "--zero-stage", zero));
            JsonNode z = json(r);
            assertEquals(none.path("ms").asDouble(), z.path("ms").asDouble(), 1e-9, zero);
            assertEquals(none.path("memory_gb").asDouble(), z.path("memory_gb").asDouble(), 1e-9, zero);
            assertTrue(r.err().contains("shards nothing"), r.err());
        }
    }

    /**
     * "Routed experts" means one thing to the checks and the model built: a configuration whose every layer is dense
     * (Qwen's mlp_only_layers) is a dense model (its expert parallelism refused, as a dense model's), and one routed
     * expert is refused as the dense feed-forward it is (it was built as a mixture of experts whose expert tensor
     * parallelism was refused as a dense model's).
     */
    @Test
    void routedExpertsMeanOneThing(@TempDir Path dir) throws Exception {
        String qwen = Files.readString(CONFIGS.resolve("qwen3-30b-a3b/config.json"));
        Path dense = dir.resolve("qwen-dense.json");
        Files.writeString(dense, qwen.replace("\"mlp_only_layers\": []", "\"mlp_only_layers\": " + java.util.stream
                .IntStream.range(0, 48).boxed().toList()));
        String[] job = {"predict", "--model", "gpu", "--transformer", dense.toString(), "--seq", "4096", "--batch", "1",
            "--gpus", "8", "--device", "H100", "--precision", "bf16"};
        MainTest.Run ep = MainTest.run(HostileCliTest.concat(job, "--expert", "8"));
        assertEquals(Main.BAD_INPUT, ep.code(), ep.err());
        assertTrue(ep.err().contains("without routed experts"), ep.err());
        assertEquals(0, MainTest.run(job).code());
        Path one = dir.resolve("mixtral-one.json");
        Files.writeString(one, Files.readString(CONFIGS.resolve("mixtral-8x7b/config.json"))
                .replace("\"num_local_experts\": 8", "\"num_local_experts\": 1")
                .replace("\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 1"));
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", one.toString(), "--seq", "4096",
                "--batch", "1", "--gpus", "8", "--device", "H100", "--precision", "bf16");
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("one routed expert is a dense feed-forward") && r.err().contains("mixtral-one.json"),
                r.err());
    }

    /**
     * A GPT-2 configuration's untied output layer is one of its own (tie_word_embeddings false was ignored: the same
     * parameters and memory as tied), and Hugging Face's other names for its sizes (GPT2Config's attribute map:
     * hidden_size, num_attention_heads, num_hidden_layers, max_position_embeddings) are read as its own.
     */
    @Test
    void gpt2ReadsItsTyingAndItsOtherNames(@TempDir Path dir) throws Exception {
        String gpt2 = Files.readString(CONFIGS.resolve("gpt2/config.json"));
        Path untied = dir.resolve("untied.json");
        Files.writeString(untied, gpt2.replace("\"vocab_size\": 50257", "\"vocab_size\": 50257, "
                + "\"tie_word_embeddings\": false"));
        long tiedParams = org.scaledl.transformer.HuggingFaceConfig.read(CONFIGS.resolve("gpt2/config.json"))
                .parameterCount();
        assertEquals(tiedParams + 50257L * 768, org.scaledl.transformer.HuggingFaceConfig.read(untied)
                .parameterCount());
        Path renamed = dir.resolve("renamed.json");
        Files.writeString(renamed, gpt2.replace("\"n_embd\"", "\"hidden_size\"").replace("\"n_head\"",
                "\"num_attention_heads\"").replace("\"n_layer\"", "\"num_hidden_layers\"").replace("\"n_positions\"",
                "\"max_position_embeddings\""));
        String[] job = {"predict", "--model", "gpu", "--seq", "1024", "--batch", "8", "--device", "A100",
            "--precision", "fp16", "--json", "--transformer"};
        assertEquals(json(MainTest.run(HostileCliTest.concat(job, CONFIGS.resolve("gpt2/config.json").toString())))
                .path("ms").asDouble(), json(MainTest.run(HostileCliTest.concat(job, renamed.toString()))).path("ms")
                .asDouble(), 1e-9);
    }

    /**
     * {@code --uneven-pipeline} on layers that divide evenly is said to change nothing (it splits only what does not
     * divide), and {@code --world-size}'s note on a job of several GPUs a replica is in the JSON's warnings as on
     * stderr.
     */
    @Test
    void notesAboutWhatWasGivenAreSaid() throws Exception {
        MainTest.Run uneven = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--micro-batches", "8", "--gpus", "8", "--pipeline", "4", "--device", "H100",
                "--precision", "bf16", "--uneven-pipeline");
        assertEquals(0, uneven.code(), uneven.err());
        assertTrue(uneven.err().contains("uneven pipeline given, but the 32 layers divide into 4 model chunks"),
                uneven.err());
        MainTest.Run ws = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--world-size", "2", "--tensor", "4", "--device", "H100", "--precision",
                "bf16", "--json");
        JsonNode root = json(ws);
        assertTrue(ws.err().contains("--world-size 2 counts data-parallel replicas"), ws.err());
        assertTrue(root.path("warnings").toString().contains("--world-size 2 counts data-parallel replicas"),
                root.path("warnings").toString());
    }

    /**
     * Packed documents leave a sliding window's layers the keys it reads within a document: a window longer than the
     * documents never binds, so Mistral's 4,096-token window at 8,192 tokens packed with documents of 2,048 is
     * predicted as without a window, within 0.5 % (a window shorter than the sequence took the causal documents'
     * share of its own count, a quarter of the core's work too little here: 1.5 % of the step); and a window shorter
     * than the documents saves work.
     */
    @Test
    void packedDocumentsLeaveAWindowItsKeysWithinThem(@TempDir Path dir) throws Exception {
        String mistral = Files.readString(CONFIGS.resolve("mistral-7b/config.json"));
        Path none = dir.resolve("none.json");
        Files.writeString(none, mistral.replace("\"sliding_window\": 4096", "\"sliding_window\": null"));
        Path short1k = dir.resolve("short.json");
        Files.writeString(short1k, mistral.replace("\"sliding_window\": 4096", "\"sliding_window\": 1024"));
        String[] job = {"predict", "--model", "gpu", "--seq", "8192", "--batch", "1", "--gpus", "8", "--tensor", "2",
            "--device", "H100", "--precision", "bf16", "--recompute", "full", "--document-tokens", "2048", "--json",
            "--transformer"};
        double windowed = json(MainTest.run(HostileCliTest.concat(job, CONFIGS.resolve("mistral-7b/config.json")
                .toString()))).path("ms").asDouble();
        double unwindowed = json(MainTest.run(HostileCliTest.concat(job, none.toString()))).path("ms").asDouble();
        double shorter = json(MainTest.run(HostileCliTest.concat(job, short1k.toString()))).path("ms").asDouble();
        // (the core's key and value tensors are sized by its keys a query, so the traffic differs a little: 0.13 %)
        assertEquals(unwindowed, windowed, 5e-3 * unwindowed);
        assertTrue(shorter < windowed, shorter + " vs " + windowed);
    }

    /**
     * The last probe of this stop's own features: a mixture of experts on one dense replica whose experts have a group
     * of their own (Mixtral, tensor 4, expert 2: two ranks hold each expert) keeps its ZeRO and is advised it when out
     * of memory; GPT-2's two names for one size refused where they disagree; a PCIe GPU's NVLink domain beyond its
     * node refused (it was dropped without a word); --uneven-pipeline on one stage said.
     */
    @Test
    void theStopsOwnFeaturesProbed(@TempDir Path dir) throws Exception {
        String[] moe = {"predict", "--model", "gpu", "--transformer", CONFIGS.resolve("mixtral-8x7b/config.json")
            .toString(), "--device", "H100", "--seq", "4096", "--batch", "1", "--micro-batches", "8", "--tensor", "4",
            "--expert", "2", "--sequence-parallel", "--gpus", "4", "--precision", "bf16", "--recompute", "full",
            "--json"};
        MainTest.Run without = MainTest.run(moe);
        JsonNode none = json(without);
        assertTrue(without.err().contains("ZeRO"), without.err());
        JsonNode one = json(MainTest.run(HostileCliTest.concat(moe, "--zero-stage", "1")));
        assertTrue(one.path("memory_gb").asDouble() < none.path("memory_gb").asDouble() - 1, one.toString());
        Path both = dir.resolve("both.json");
        Files.writeString(both, Files.readString(CONFIGS.resolve("gpt2/config.json")).replace("\"n_embd\": 768",
                "\"n_embd\": 768, \"hidden_size\": 1024"));
        MainTest.Run conflict = MainTest.run("predict", "--model", "gpu", "--transformer", both.toString(), "--seq",
                "1024", "--batch", "1", "--device", "A100", "--precision", "fp16");
        assertEquals(Main.BAD_INPUT, conflict.code(), conflict.err());
        assertTrue(conflict.err().contains("n_embd and hidden_size") && conflict.err().contains("disagree"),
                conflict.err());
        MainTest.Run pcie = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--device", "L40S", "--gpus", "16", "--gpus-per-node", "8", "--nvlink-domain",
                "16", "--precision", "bf16");
        assertTrue(pcie.code() != 0 && pcie.err().contains("PCIe"), pcie.err());
        MainTest.Run uneven = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA_8B.toString(), "--seq",
                "4096", "--batch", "1", "--gpus", "1", "--device", "H100", "--precision", "bf16", "--uneven-pipeline");
        assertTrue(uneven.err().contains("uneven pipeline given, but the job has one pipeline stage"), uneven.err());
    }
}
