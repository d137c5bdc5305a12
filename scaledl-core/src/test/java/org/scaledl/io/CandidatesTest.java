package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Workload;
import java.util.Map;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

class CandidatesTest {
    @TempDir
    Path dir;

    @BeforeEach
    void graphs() throws IOException {
        Files.createDirectories(dir.resolve("graphs"));
        Files.copy(TestData.graph("resnet18_r64"), dir.resolve("graphs/resnet18_r64.onnx"));
        Files.copy(TestData.graph("squeezenet1_1_r64"), dir.resolve("graphs/squeezenet1_1_r64.onnx"));
    }

    /** Copies a bundled test configuration to {@code folder/config.json} under the test's directory. */
    private void copyConfig(String resource, String folder) throws IOException {
        Path cfg = dir.resolve(folder).resolve("config.json");
        Files.createDirectories(cfg.getParent());
        Files.copy(Path.of("src/test/resources/transformers", resource, "config.json"), cfg);
    }

    private Path spec(String text) throws IOException {
        Path p = dir.resolve("grid.txt");
        Files.writeString(p, text);
        return p;
    }

    @Test
    void gridIsTheCartesianProductInDocumentedOrder() throws IOException {
        AtomicInteger imports = new AtomicInteger();
        Candidates c = Candidates.grid(spec("""
                # two models
                model = resnet18, squeezenet1_1
                resolution = 64
                batch = 2, 8   # comment after values
                threads = 1, 2
                world_size = 1, 2
                phase = train, infer
                cores = 2
                """), f -> {
                    imports.incrementAndGet();
                    return OnnxImporter.read(f);
                });
        // 2 models x 2 batches x (threads, world) in {(1,1), (1,2), (2,1)} x 2 phases; (2,2) needs 4 cores.
        assertEquals(2 * 2 * 3 * 2, c.workloads().size());
        assertEquals(2, imports.get(), "each graph imported once");
        Workload first = c.workloads().get(0);
        assertEquals("resnet18", first.tag("model").orElseThrow());
        assertEquals("resnet", first.tag("family").orElseThrow());
        assertEquals("64", first.tag("resolution").orElseThrow());
        assertEquals(2, first.batch());
        assertEquals(Phase.TRAIN, first.phase());
        assertEquals(Phase.INFER, c.workloads().get(1).phase());
        assertTrue(c.workloads().stream().noneMatch(w -> w.threads() * w.worldSize() > 2));
        assertEquals("graphs/squeezenet1_1_r64.onnx", c.table().get(c.workloads().size() - 1, "graph"));
    }

    @Test
    void defaultsAreOneThreadOneWorkerTraining() throws IOException {
        Candidates c = Candidates.grid(spec("model = resnet18\nresolution = 64\nbatch = 4\n"), OnnxImporter::read);
        assertEquals(1, c.workloads().size());
        Workload w = c.workloads().get(0);
        assertEquals(1, w.threads());
        assertEquals(1, w.worldSize());
        assertEquals(Phase.TRAIN, w.phase());
    }

    @Test
    void gridErrorsNameTheLine() throws IOException {
        InvalidInputException unknown = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                spec("model = resnet18\nresolution = 64\nbatchs = 2\n"), OnnxImporter::read));
        assertEquals(3, unknown.line());
        assertTrue(unknown.getMessage().contains("did you mean 'batch'"), unknown.getMessage());
        InvalidInputException bad = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                spec("model = resnet18\nresolution = 64\nbatch = 2, -1\n"), OnnxImporter::read));
        assertEquals(3, bad.line());
        // the bound is the expanded table's, said at the grid's line
        for (String[] big : new String[][] {{"batch = 2, 1048577", "batch must be an integer in 1..1048576"},
            {"batch = 2\nworld_size = 1048577", "world_size must be an integer in 1..1048576"},
            {"batch = 2\nthreads = 65537", "threads must be an integer in 1..65536"}}) {
            InvalidInputException b = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                    spec("model = resnet18\nresolution = 64\n" + big[0] + "\n"), OnnxImporter::read), big[0]);
            assertTrue(b.getMessage().contains("grid.txt:") && b.getMessage().contains(big[1]), b.getMessage());
        }
        InvalidInputException missing = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                spec("model = resnet18, vgg11\nresolution = 64\nbatch = 2\n"), OnnxImporter::read));
        assertTrue(missing.getMessage().contains("vgg11_r64.onnx") && missing.getMessage().contains(
                "scaledl_profiler export vgg11"), missing.getMessage());
        InvalidInputException twice = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                spec("model = resnet18\nbatch = 2\nbatch = 4\n"), OnnxImporter::read));
        assertEquals(3, twice.line());
        InvalidInputException empty = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                spec("model = resnet18\nresolution = 64\nbatch = 2\nthreads = 2\nworld_size = 2\ncores = 2\n"),
                OnnxImporter::read));
        assertTrue(empty.getMessage().contains("empty"), empty.getMessage());
        // a value twice (as written, or as read: 01 is 1) would make its candidates twice
        for (String dup : new String[] {"batch = 2, 2, 8", "batch = 2\nthreads = 1, 01"}) {
            InvalidInputException d = assertThrows(InvalidInputException.class, () -> Candidates.grid(
                    spec("model = resnet18\nresolution = 64\n" + dup + "\n"), OnnxImporter::read), dup);
            assertTrue(d.getMessage().contains("twice"), d.getMessage());
        }
    }

    /** A grid's phase is written as the companion reads it (train or infer), whatever alias it was given as. */
    @Test
    void gridPhasesAreWrittenAsTheCompanionReadsThem() throws IOException {
        Candidates c = Candidates.grid(spec("model = resnet18\nresolution = 64\nbatch = 4\nphase = TRAIN, eval\n"),
                OnnxImporter::read);
        assertEquals(List.of("train", "infer"), List.of(c.table().get(0, "phase"), c.table().get(1, "phase")));
    }

    @Test
    void tableCarriesTagsAndResolvesDevicesOnce() throws IOException {
        Path csv = dir.resolve("cands.csv");
        Files.writeString(csv, "graph,batch,world_size,threads,phase,model,device,note\n"
                + "graphs/resnet18_r64.onnx,4,1,2,infer,resnet18,box,a\n"
                + "graphs/resnet18_r64.onnx,8,2,1,train,resnet18,box,b\n");
        AtomicInteger lookups = new AtomicInteger();
        Candidates c = Candidates.read(csv, OnnxImporter::read, name -> {
            lookups.incrementAndGet();
            return Optional.of(Device.cpu(name, 2, 0, 0, 0, 0));
        });
        assertEquals(2, c.workloads().size());
        assertEquals(1, lookups.get());
        assertEquals("box", c.workloads().get(1).device().orElseThrow().name());
        assertEquals(List.of("graph", "batch", "world_size", "threads", "phase", "model", "device", "note"),
                c.table().columns());
        assertEquals("b", c.table().get(1, "note"));

        Files.writeString(csv, "graph,batch,world_size,threads,phase\ngraphs/resnet18_r64.onnx,4,1,1,walk\n");
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(2, e.line());
        Files.writeString(csv, "graph,batch,world_size,threads,phase,device\ngraphs/resnet18_r64.onnx,4,1,1,infer,x\n");
        InvalidInputException dev = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> {
                    throw new IllegalArgumentException("no machine " + n);
                }));
        assertEquals(2, dev.line());
        assertTrue(dev.getMessage().contains("no machine x"), dev.getMessage());
    }

    /** A GPT-2-style configuration of hidden 1,024, 16 heads and {@code layers} layers, as gpt/config.json. */
    private void gptConfig(int layers) throws IOException {
        Path cfg = dir.resolve("gpt/config.json");
        Files.createDirectories(cfg.getParent());
        Files.writeString(cfg, "{\"model_type\": \"gpt2\", \"n_embd\": 1024, \"n_head\": 16, \"n_layer\": " + layers
                + ", \"n_positions\": 2048, \"vocab_size\": 50257}");
    }

    /** A row's mistake said as it is: a folder is not "not found", a batch has a bound, a flag lists what it reads. */
    @Test
    void aRowsMistakesAreSaidAsTheyAre() throws IOException {
        gptConfig(24);
        Files.createDirectories(dir.resolve("folder/config.json"));
        Device gpu = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
        Path csv = dir.resolve("jobs.csv");
        String header = "transformer,seq,batch,device,tensor,sequence_parallel\n";
        String[][] rows = {
            {"folder/config.json,1024,2,g,1,false", "jobs.csv:2: transformer is a directory, not a file: "},
            {"gpt/nope.json,1024,2,g,1,false", "jobs.csv:2: transformer file not found: "},
            {"gpt/config.json,1024,1048577,g,1,false", "jobs.csv:2: batch must be an integer in 1..1048576, got "
                + "'1048577'"},
            {"gpt/config.json,1024,2,g,2,on", "jobs.csv:2: sequence_parallel must be true or false (1/0 and yes/no "
                + "are read as those), got 'on'"}};
        for (String[] row : rows) {
            Files.writeString(csv, header + row[0] + "\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> {
                try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu),
                        Map.of())) {
                    in.next(10);
                }
            });
            assertTrue(e.getMessage().contains(row[1]), row[0] + ": " + e.getMessage());
        }
        // the largest batch is read, and 1/0, yes/no are the flag's true and false
        Files.writeString(csv, header + "gpt/config.json,1024,1048576,g,2,yes\ngpt/config.json,1024,2,g,2,0\n");
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu), Map.of())) {
            List<Workload> ws = in.next(10).workloads();
            assertEquals(1 << 20, ws.get(0).batch());
            assertTrue(ws.get(0).parallelism().sequenceParallel());
            assertFalse(ws.get(1).parallelism().sequenceParallel());
        }
    }

    /**
     * A transformer row may name a model's folder, read as its {@code config.json} (one configuration with the row
     * naming the file); a folder without one is refused at its line.
     */
    @Test
    void aTransformerRowMayNameTheModelsFolder() throws IOException {
        gptConfig(24);
        Path csv = dir.resolve("jobs.csv");
        Files.createDirectories(dir.resolve("empty"));
        Files.writeString(csv, "transformer,seq,batch,device\ngpt,1024,2,g\ngpt/config.json,1024,2,g\n");
        Device gpu = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu), Map.of())) {
            List<Workload> ws = in.next(10).workloads();
            assertEquals(ws.get(1).graph().transformer(), ws.get(0).graph().transformer());
            assertEquals(ws.get(1).graph().size(), ws.get(0).graph().size());
        }
        // a folder whose configuration links out of the table's folder is refused, as a linked cell is
        Path outside = Files.createTempDirectory("outside");
        Files.copy(dir.resolve("gpt/config.json"), outside.resolve("config.json"));
        Files.createDirectories(dir.resolve("linked"));
        Files.createSymbolicLink(dir.resolve("linked/config.json"), outside.resolve("config.json"));
        Files.writeString(csv, "transformer,seq,batch,device\nlinked,1024,2,g\n");
        InvalidInputException linked = assertThrows(InvalidInputException.class, () -> {
            try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu), Map.of())) {
                in.next(10);
            }
        });
        assertTrue(linked.getMessage().contains("symbolic link out of"), linked.getMessage());
        Files.delete(dir.resolve("linked/config.json"));
        Files.delete(outside.resolve("config.json"));
        Files.delete(outside);
        Files.writeString(csv, "transformer,seq,batch,device\nempty,1024,2,g\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> {
            try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu), Map.of())) {
                in.next(10);
            }
        });
        assertTrue(e.getMessage().contains("jobs.csv") && e.getMessage().contains("transformer"), e.getMessage());
    }

    @Test
    void transformerRowsBuildMegatronJobsWithDefaultsForWhatTheyLack() throws IOException {
        gptConfig(24);
        Path csv = dir.resolve("jobs.csv");
        Files.writeString(csv, "transformer,seq,batch,micro_batches,world_size,tensor,pipeline,device,gpus_per_node,"
                + "inter_node_gbps,precision,recompute,sequence_parallel,cuda_graphs\n"
                + "gpt/config.json,1024,2,8,4,2,2,g,4,400,bf16,selective,true,iteration\n"
                + "gpt/config.json,2048,1,,,,,g,,,,,,\n");
        Device gpu = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
        Map<String, String> defaults = Map.of("precision", "fp16", "recompute", "full", "tensor", "4",
                "micro_batches", "3", "cuda_graphs", "layers");
        List<Workload> ws = new java.util.ArrayList<>();
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu), defaults)) {
            ws.addAll(in.next(10).workloads());
            assertEquals(2, in.graphs(), "one graph per configuration and sequence length");
        }
        Workload a = ws.get(0);
        assertEquals(16, a.batch(), "a replica's batch: 2 sequences per micro-batch x 8 micro-batches");
        assertEquals(new Parallelism(4, 2, 2, 8).withSequenceParallel(true), a.parallelism());
        assertEquals(Precision.BF16, a.precision());
        assertEquals(Recompute.SELECTIVE, a.recompute());
        assertEquals(4, a.topology().orElseThrow().gpusPerNode());
        assertEquals(400, a.topology().orElseThrow().interNodeGbps());
        assertEquals(1024, a.graph().transformer().orElseThrow().seq());
        assertEquals(org.scaledl.workload.CudaGraphs.ITERATION, a.cudaGraphs());
        Workload b = ws.get(1);
        assertEquals(3, b.batch());
        assertEquals(new Parallelism(1, 4, 1, 3), b.parallelism());
        assertEquals(Precision.FP16, b.precision());
        assertEquals(Recompute.FULL, b.recompute());
        assertTrue(b.topology().isEmpty(), "no topology given: the device's standard server, assumed");
        assertEquals(2048, b.graph().transformer().orElseThrow().seq());
        assertEquals(org.scaledl.workload.CudaGraphs.LAYERS, b.cudaGraphs(), "the caller's default");

        // the caller's CUDA graphs are the default of the transformer rows only: an imported graph refuses them
        Files.writeString(csv, "graph,transformer,seq,batch,device\ngraphs/resnet18_r64.onnx,,,2,g\n"
                + ",gpt/config.json,1024,2,g\n");
        List<Workload> mixed = new java.util.ArrayList<>();
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu),
                Map.of("cuda_graphs", "iteration"))) {
            mixed.addAll(in.next(10).workloads());
        }
        assertEquals(org.scaledl.workload.CudaGraphs.NONE, mixed.get(0).cudaGraphs());
        assertEquals(org.scaledl.workload.CudaGraphs.ITERATION, mixed.get(1).cudaGraphs());
        Files.writeString(csv, "transformer,seq,batch,device,cuda_graphs\ngpt/config.json,1024,2,g,all\n");
        InvalidInputException badGraphs = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.of(gpu)));
        assertEquals(2, badGraphs.line());
        assertTrue(badGraphs.getMessage().contains("cuda_graphs") && badGraphs.getMessage().contains("'all'"),
                badGraphs.getMessage());
        Files.writeString(csv, "transformer,seq,batch,gpus_per_node\ngpt/config.json,1024,2,8\n");
        InvalidInputException noDevice = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(2, noDevice.line());
        assertTrue(noDevice.getMessage().contains("give the device"), noDevice.getMessage());
        Files.writeString(csv, "graph,transformer,seq,batch\ngraphs/resnet18_r64.onnx,gpt/config.json,1024,2\n");
        assertTrue(assertThrows(InvalidInputException.class, () -> Candidates.read(csv, OnnxImporter::read,
                n -> Optional.empty())).getMessage().contains("not both"));
    }

    /**
     * {@code recompute_modules} names what selective recomputation recomputes (Megatron core's names, joined by
     * {@code +}): with an empty {@code recompute} it means selective; with none or full it is refused, naming the
     * line, the column and the recomputation; an unknown module is refused naming the column and the module.
     */
    @Test
    void recomputeModulesSayWhatSelectiveRecomputationRecomputes() throws IOException {
        gptConfig(4);
        Path csv = dir.resolve("modules.csv");
        Files.writeString(csv, "transformer,seq,batch,recompute,recompute_modules\n"
                + "gpt/config.json,1024,2,,layernorm+moe_act\n"
                + "gpt/config.json,1024,2,selective,MLP core_attn\n"
                + "gpt/config.json,1024,2,selective,\n"
                + "gpt/config.json,1024,2,none,\n");
        List<Workload> ws = Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()).workloads();
        assertEquals(Recompute.SELECTIVE, ws.get(0).recompute());
        assertEquals(java.util.EnumSet.of(org.scaledl.workload.RecomputeModule.LAYERNORM,
                org.scaledl.workload.RecomputeModule.MOE_ACT), ws.get(0).recomputeModules());
        assertEquals("selective:moe_act+layernorm", ws.get(0).recomputeLabel());
        assertEquals(java.util.EnumSet.of(org.scaledl.workload.RecomputeModule.MLP,
                org.scaledl.workload.RecomputeModule.CORE_ATTN), ws.get(1).recomputeModules());
        assertEquals(org.scaledl.workload.RecomputeModule.DEFAULT, ws.get(2).recomputeModules());
        assertEquals("selective", ws.get(2).recomputeLabel());
        assertEquals(Recompute.NONE, ws.get(3).recompute());
        Files.writeString(csv, "transformer,seq,batch,recompute,recompute_modules\n"
                + "gpt/config.json,1024,2,selective,mlp\ngpt/config.json,1024,2,full,moe_act\n");
        InvalidInputException full = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(3, full.line());
        assertTrue(full.getMessage().contains("recompute_modules moe_act needs recompute selective")
                && full.getMessage().contains("not full"), full.getMessage());
        Files.writeString(csv, "transformer,seq,batch,recompute_layers,recompute_modules\n"
                + "gpt/config.json,1024,2,2,mlp\n");
        InvalidInputException both = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertTrue(both.getMessage().contains("recompute_layers 2") && both.getMessage().contains("cannot both"),
                both.getMessage());
        Files.writeString(csv, "transformer,seq,batch,recompute_modules\ngpt/config.json,1024,2,moe_act+attn\n");
        InvalidInputException unknown = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(2, unknown.line());
        assertTrue(unknown.getMessage().contains("recompute_modules") && unknown.getMessage().contains("'attn'")
                && unknown.getMessage().contains("core_attn, moe_act"), unknown.getMessage());
    }

    /**
     * {@code gpus}: every GPU of the job, the replicas {@code gpus / (tensor × pipeline × context)}; beside a
     * {@code world_size} that agrees, read the same; refused naming the line where it does not divide or disagrees. A
     * caller's default of either column fills a row that has neither, never one that has the other.
     */
    @Test
    void aGpusColumnCountsEveryGpuOfTheJob() throws IOException {
        gptConfig(24);
        Path csv = dir.resolve("gpus.csv");
        Files.writeString(csv, "transformer,seq,batch,gpus,world_size,tensor,pipeline,context\n"
                + "gpt/config.json,1024,1,64,,2,2,2\ngpt/config.json,1024,1,64,8,2,2,2\n"
                + "gpt/config.json,1024,1,,4,2,2,2\ngpt/config.json,1024,1,,,2,2,2\n");
        List<Workload> ws;
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.empty(),
                Map.of("gpus", "16"))) {
            ws = in.next(10).workloads();
        }
        assertEquals(List.of(8, 8, 4, 2), ws.stream().map(w -> w.parallelism().data()).toList());
        assertEquals(64, ws.get(0).parallelism().ranks());
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.empty(),
                Map.of("world_size", "3"))) {
            List<Workload> byReplicas = in.next(10).workloads();
            assertEquals(3, byReplicas.get(3).parallelism().data(), "the caller's world_size");
            assertEquals(8, byReplicas.get(0).parallelism().data(), "a row's gpus, not the caller's world_size");
        }
        // the caller's gpus that a row's degrees do not divide: said to be the caller's
        InvalidInputException given = assertThrows(InvalidInputException.class, () -> {
            try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.empty(),
                    Map.of("gpus", "12"))) {
                in.next(10);
            }
        });
        assertTrue(given.getMessage().contains("gpus 12 (the caller's default) is not a multiple of tensor 2 x "
                + "pipeline 2 x context 2 = 8"), given.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Candidates.open(csv, OnnxImporter::read,
                n -> Optional.empty(), Map.of("gpus", "8", "world_size", "1")), "defaults of both");
        Files.writeString(csv, "transformer,seq,batch,gpus,world_size,tensor\ngpt/config.json,1024,1,64,,2\n"
                + "gpt/config.json,1024,1,60,,8\n");
        InvalidInputException odd = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(3, odd.line());
        assertTrue(odd.getMessage().contains("gpus 60 is not a multiple of tensor 8 x pipeline 1 x context 1 = 8"),
                odd.getMessage());
        Files.writeString(csv, "transformer,seq,batch,gpus,world_size,tensor\ngpt/config.json,1024,1,64,64,2\n");
        InvalidInputException disagree = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(2, disagree.line());
        assertTrue(disagree.getMessage().contains("gpus 64 and world_size 64 disagree") && disagree.getMessage()
                .contains("gpus 64 is world_size 32"), disagree.getMessage());
    }

    /**
     * A caller's default device applies to the rows without one (as every column's default does), and a resolver's
     * refusal of a row's device is said at the row's line; a resolver that answers null knows no such device.
     */
    @Test
    void aDefaultDeviceAppliesAndARefusedOneIsNamedAtItsLine() throws IOException {
        copyConfig("llama-3-8b", "dev");
        Path csv = dir.resolve("devices.csv");
        Files.writeString(csv, "transformer,seq,batch,device\ndev/config.json,1024,1,\ndev/config.json,1024,1,A100\n");
        DeviceCatalog catalog = DeviceCatalog.bundled();
        java.util.function.Function<String, Optional<org.scaledl.workload.Device>> resolve =
                n -> n.isEmpty() ? Optional.empty() : Optional.of(catalog.require(n));
        List<Workload> ws;
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, resolve, Map.of("device", "H100"))) {
            ws = in.next(10).workloads();
        }
        assertEquals("NVIDIA H100 80GB HBM3", ws.get(0).device().orElseThrow().name(), "the caller's default");
        assertTrue(ws.get(1).device().orElseThrow().name().startsWith("NVIDIA A100"), "the row's own");
        Files.writeString(csv, "transformer,seq,batch,device\ndev/config.json,1024,1,Acme Z9\n");
        InvalidInputException unknown = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, resolve));
        assertEquals(2, unknown.line(), unknown.getMessage());
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> null, Map.of())) {
            assertTrue(in.next(10).workloads().get(0).device().isEmpty());
        }
    }

    /**
     * {@code moe_dispatcher}: a row's own value as given, the caller's default only for rows with expert parallelism;
     * a dispatcher on a row without it is refused naming the line, as an unknown one naming the column.
     */
    @Test
    void theMoeDispatcherIsExpertParallelisms() throws IOException {
        copyConfig("qwen3-30b-a3b", "moe");
        Path csv = dir.resolve("dispatch.csv");
        Files.writeString(csv, "transformer,seq,batch,world_size,expert,moe_dispatcher\n"
                + "moe/config.json,1024,1,8,8,deepep\nmoe/config.json,1024,1,8,8,\nmoe/config.json,1024,1,8,1,\n");
        List<Workload> ws;
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.empty(),
                Map.of("moe_dispatcher", "hybridep"))) {
            ws = in.next(10).workloads();
        }
        assertEquals(org.scaledl.workload.MoeDispatcher.DEEPEP, ws.get(0).moeDispatcher());
        assertEquals(org.scaledl.workload.MoeDispatcher.HYBRIDEP, ws.get(1).moeDispatcher(), "the caller's default");
        assertEquals(org.scaledl.workload.MoeDispatcher.ALLTOALL, ws.get(2).moeDispatcher(), "no experts' ranks");
        Files.writeString(csv, "transformer,seq,batch,expert,moe_dispatcher\nmoe/config.json,1024,1,1,deepep\n");
        InvalidInputException dense = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertEquals(2, dense.line());
        assertTrue(dense.getMessage().contains("expert-parallel degree above 1"), dense.getMessage());
        Files.writeString(csv, "transformer,seq,batch,world_size,expert,moe_dispatcher\nmoe/config.json,1024,1,8,8,"
                + "nccl\n");
        InvalidInputException unknown = assertThrows(InvalidInputException.class,
                () -> Candidates.read(csv, OnnxImporter::read, n -> Optional.empty()));
        assertTrue(unknown.getMessage().contains("moe_dispatcher") && unknown.getMessage().contains("'nccl'"),
                unknown.getMessage());
    }

    @Test
    void chunksGiveTheWorkloadsOfAWholeRead() throws IOException {
        Path csv = dir.resolve("many.csv");
        StringBuilder sb = new StringBuilder("graph,batch,world_size,threads,phase,model,note\n");
        for (int i = 0; i < 300; i++) {
            sb.append("graphs/resnet18_r64.onnx,").append(1 + i % 9).append(',').append(1 + i % 2).append(",1,")
                    .append(i % 3 == 0 ? "infer" : "train").append(",resnet18,n").append(i).append('\n');
        }
        Files.writeString(csv, sb.toString());
        AtomicInteger imports = new AtomicInteger();
        java.util.function.Function<Path, org.scaledl.graph.ModelGraph> importer = f -> {
            imports.incrementAndGet();
            return OnnxImporter.read(f);
        };
        Candidates whole = Candidates.read(csv, OnnxImporter::read, n -> Optional.empty());
        List<org.scaledl.workload.Workload> chunked = new java.util.ArrayList<>();
        List<Integer> lines = new java.util.ArrayList<>();
        try (Candidates.Chunks in = Candidates.open(csv, importer, n -> Optional.empty(), java.util.Map.of())) {
            assertEquals(whole.table().columns(), in.columns());
            for (Candidates c = in.next(64); !c.workloads().isEmpty(); c = in.next(64)) {
                chunked.addAll(c.workloads());
                for (int r = 0; r < c.table().size(); r++) {
                    lines.add(c.table().line(r));
                    assertEquals(whole.table().get(lines.size() - 1, "note"), c.table().get(r, "note"));
                }
            }
            assertEquals(1, in.graphs());
        }
        assertEquals(1, imports.get(), "one import per graph file, across chunks");
        assertEquals(whole.workloads().size(), chunked.size());
        for (int i = 0; i < chunked.size(); i++) {
            org.scaledl.workload.Workload a = whole.workloads().get(i);
            org.scaledl.workload.Workload b = chunked.get(i);
            assertEquals(a.toString(), b.toString());
            assertEquals(a.tags(), b.tags(), "tags, the row among them, count from the table's first row");
            assertEquals(whole.table().line(i), lines.get(i));
        }
    }

    /**
     * Rows read each on their own: a bad row (a missing graph, a bad cell) keeps its place with its line and reason,
     * every other row is the workload {@link Candidates.Chunks#next} reads for it, tags and all.
     */
    @Test
    void eachRowKeepsABadRowsPlaceAndReadsTheOthersAsAWholeTable() throws Exception {
        Path csv = dir.resolve("mixed.csv");
        String good = "graphs/resnet18_r64.onnx,4,1\n";
        Files.writeString(csv, "graph,batch,world_size\n" + good + "graphs/missing.onnx,4,1\n" + good
                + "graphs/resnet18_r64.onnx,-2,1\n" + good);
        Path clean = dir.resolve("clean.csv");
        Files.writeString(clean, "graph,batch,world_size\n" + good + good + good);
        Candidates whole = Candidates.read(clean, OnnxImporter::read, n -> Optional.empty());
        try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.empty(),
                java.util.Map.of())) {
            Candidates.EachRow each = in.nextEach(10);
            assertEquals(5, each.table().size());
            int g = 0;
            for (int r = 0; r < 5; r++) {
                boolean bad = r == 1 || r == 3;
                assertEquals(bad, each.errors().get(r).isPresent(), "row " + r);
                if (!bad) {
                    assertEquals(whole.workloads().get(g).toString(), each.workloads().get(r).orElseThrow()
                            .toString());
                    g++;
                }
            }
            assertTrue(each.errors().get(1).orElseThrow().contains("mixed.csv:3"), each.errors().get(1).get());
            assertTrue(each.errors().get(3).orElseThrow().contains("mixed.csv:5")
                    && each.errors().get(3).get().contains("batch"), each.errors().get(3).get());
            assertEquals(0, in.nextEach(10).table().size());
        }
        // strict reading stops at the first bad row
        assertThrows(InvalidInputException.class, () -> Candidates.read(csv, OnnxImporter::read,
                n -> Optional.empty()));
    }

    /**
     * Another framework's name for a column (Megatron's {@code tp}, {@code num_gpus}, {@code gbs}) is a near miss
     * as a misspelling is, unless the table has the column it stands for; a name no candidate column has is not.
     */
    @Test
    void otherFrameworksNamesForAColumnAreNearMisses() {
        assertEquals(java.util.Map.of("tp", "tensor", "PP", "pipeline", "num_gpus", "gpus", "gbs", "global_batch",
                "ep", "expert", "micro_batch", "micro_batches"), Candidates.nearMisses(List.of("batch", "tp", "PP",
                "num_gpus", "gbs", "ep", "note", "cost_usd", "sp", "micro_batch")));
        assertEquals(java.util.Map.of(), Candidates.nearMisses(List.of("batch", "tp", "tensor", "dp", "world_size")),
                "the columns they stand for are there: columns of their own");
        assertTrue(Candidates.nearMissWarning("t.csv", "gbs", "global_batch").startsWith("t.csv: column 'gbs' is "
                + "not one scaledl reads (did you mean 'global_batch'?)"));
        assertTrue(Candidates.nearMissWarning("t.csv", "tp", "tensor").startsWith("t.csv: column 'tp' is not one "
                + "scaledl reads (did you mean 'tensor'?)"));
        String escaped = Candidates.nearMissWarning("t.csv", "t\u001bp", "tensor");
        assertTrue(escaped.contains("'t\\u001bp'") && escaped.indexOf('\u001b') < 0,
                "a terminal escape in a header never reaches the terminal, shown as its escape: " + escaped);
    }

    /**
     * {@link Candidates#COLUMNS} is every column the reader reads: a table of every candidate column, read as a
     * transformer row and as a graph row, asks for no other (a column read but missing from it could never be warned
     * of as misspelt, and one of its look-alikes would be).
     */
    @Test
    void everyColumnTheReaderReadsIsACandidateColumn() throws IOException {
        gptConfig(24);
        Path csv = dir.resolve("all.csv");
        List<String> all = new java.util.ArrayList<>(new java.util.TreeSet<>(Candidates.COLUMNS));
        java.util.Map<String, String> cells = new java.util.HashMap<>();
        cells.put("transformer", "gpt/config.json");
        cells.put("seq", "1024");
        cells.put("batch", "2");
        StringBuilder rows = new StringBuilder(String.join(",", all)).append('\n');
        rows.append(String.join(",", all.stream().map(c -> cells.getOrDefault(c, "")).toList())).append('\n');
        cells.remove("transformer");
        cells.remove("seq");
        cells.put("graph", "graphs/resnet18_r64.onnx");
        rows.append(String.join(",", all.stream().map(c -> cells.getOrDefault(c, "")).toList())).append('\n');
        Files.writeString(csv, rows.toString());
        Candidates c = Candidates.read(csv, OnnxImporter::read, n -> Optional.empty());
        assertEquals(2, c.workloads().size());
        assertTrue(Candidates.COLUMNS.containsAll(c.table().asked()), c.table().asked().toString());
    }

    /**
     * {@link Candidates#kind} is how the reader reads a column: every column it reads has a kind, and a number or
     * boolean column's cell that is neither is refused naming the column (so a table written from the kinds, a JSON
     * line of {@code predict}, types a cell as the reader took it). {@code resolution} is the one number read as a
     * label (a graph's input size, told by its file).
     */
    @Test
    void aColumnsKindIsHowTheReaderReadsIt() throws IOException {
        gptConfig(24);
        assertEquals(List.of(Optional.of(Candidates.ColumnKind.NUMBER), Optional.of(Candidates.ColumnKind.BOOLEAN),
                Optional.of(Candidates.ColumnKind.TEXT)), List.of(Candidates.kind("inter_node_gbps"),
                Candidates.kind("moe_a2a_overlap"), Candidates.kind("cuda_graphs")));
        assertEquals(Optional.empty(), Candidates.kind("notes"));
        assertEquals(Optional.empty(), Candidates.kind("tp"), "an alias is read as its column");
        Device gpu = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
        Path csv = dir.resolve("kinds.csv");
        for (String column : Candidates.COLUMNS) {
            Candidates.ColumnKind kind = Candidates.kind(column).orElseThrow();
            if (kind == Candidates.ColumnKind.TEXT || column.equals("resolution")) {
                continue;
            }
            java.util.Map<String, String> cells = new java.util.LinkedHashMap<>(java.util.Map.of("transformer",
                    "gpt/config.json", "seq", "1024", "batch", "2", "device", "g"));
            cells.put(column, "many");
            Files.writeString(csv, String.join(",", cells.keySet()) + "\n" + String.join(",", cells.values()) + "\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> {
                try (Candidates.Chunks in = Candidates.open(csv, OnnxImporter::read, n -> Optional.of(gpu),
                        Map.of())) {
                    in.next(10);
                }
            }, column);
            assertTrue(e.getMessage().contains(column) && e.getMessage().contains("'many'"), column + ": "
                    + e.getMessage());
        }
    }

    /** A look-alike of a column the table also has is a column of its own, not a misspelling. */
    @Test
    void nearMissesSkipLookAlikesOfPresentColumns() {
        assertEquals(java.util.Map.of(), Candidates.nearMisses(List.of("batch", "bench")));
        assertEquals(java.util.Map.of("bench", "batch", "micro_batch", "micro_batches"),
                Candidates.nearMisses(List.of("bench", "micro_batch")));
    }
}
