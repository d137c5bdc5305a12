package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;
import org.scaledl.doe.FedorovExchange;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.io.DatasetReader;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.host.LayerBasis;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Device;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl bench}: the headline speed figures, measured in this run. */
@Command(name = "bench", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Measure predict latency and throughput, fit time, ONNX import, Fedorov "
        + "exchange and predict-time scaling on this machine.")
final class BenchCommand implements Callable<Integer> {
    private static final String[] GRAPHS = {"squeezenet1_1_r112", "resnet50_r112", "vit_b_16_r112"};

    @Option(names = "--data", defaultValue = "datasets/cpu-ddp", description = "Dataset (default: ${DEFAULT-VALUE})")
    Path data;

    @Option(names = "--quick", description = "Fewer repetitions (about half a minute on 2 cores)")
    boolean quick;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Option(names = "--gnn", description = "Fit the GNN stage at its full size for its first-query timings "
            + "(without: a small one) and time its steady-state predictions and allocation too (~30 s more)")
    boolean gnn;

    @Option(names = "--gpu-model", description = "Also time a saved device model (scaledl fit --gpu) on H100")
    Path gpuModel;

    @Override
    public Integer call() throws Exception {
        if (!Files.isDirectory(data)) {
            throw org.scaledl.InvalidInputException.of("dataset folder " + data + " not found: run from the repository root "
                    + "or pass --data");
        }
        // what the benchmark reads beside the runs, checked before a minute of timing: its query graphs, and a
        // --gpu-model loaded (and timed) first
        List<String> queries = concat(GRAPHS, GPU_GRAPHS);
        for (String name : queries) {
            Path file = data.resolve("graphs/" + name + ".onnx");
            if (!Files.isRegularFile(file)) {
                throw org.scaledl.InvalidInputException.of(data + ": bench times the query graphs "
                        + String.join(", ", queries) + " (as the bundled datasets/cpu-ddp has them, "
                        + "graphs/NAME.onnx), and " + file + " is missing");
            }
        }
        long loadStart = System.nanoTime();
        RuntimePredictor gpu = gpuModel == null ? null : ModelArgument.load("--gpu-model", gpuModel.toString());
        if (gpu != null && !gpu.layerCostKind().equals("device")) {
            throw new IllegalArgumentException("--gpu-model " + org.scaledl.InvalidInputException.escaped(
                    gpuModel.toString()) + ": a model of CPU machines (" + gpu.layerCostKind() + "); bench times a "
                    + "device model on an H100 (scaledl fit --gpu, or the bundled gpu)");
        }
        double gpuLoadMs = (System.nanoTime() - loadStart) / 1e6;
        int reps = quick ? 2_000 : 20_000;
        Map<String, Object> out = new LinkedHashMap<>();

        long t0 = System.nanoTime();
        Dataset d = DatasetReader.read(data);
        double loadS = (System.nanoTime() - t0) / 1e9;
        t0 = System.nanoTime();
        RuntimePredictor p = RuntimePredictor.fit(d.samples());
        double fitS = (System.nanoTime() - t0) / 1e9;

        Map<String, Double> fitBySamples = new LinkedHashMap<>();
        List<org.scaledl.workload.Sample> replicas = new ArrayList<>();
        for (int k = 0; k < (quick ? 3 : 10); k++) {
            replicas.addAll(d.samples());
        }
        // fit time against the number of runs: the first 100 (of a larger dataset), all, and copies of all
        List<List<org.scaledl.workload.Sample>> sets = d.samples().size() > 100
                ? List.of(d.samples().subList(0, 100), d.samples(), replicas) : List.of(d.samples(), replicas);
        for (List<org.scaledl.workload.Sample> set : sets) {
            long s = System.nanoTime();
            RuntimePredictor.fit(set);
            fitBySamples.put(Integer.toString(set.size()), (System.nanoTime() - s) / 1e9);
        }

        Map<String, Double> fitByGraphSize = new LinkedHashMap<>();
        for (int size : new int[] {100, 1_000, 10_000}) {
            ModelGraph g = synthetic(size, false, size);
            List<org.scaledl.workload.Sample> set = new ArrayList<>();
            for (int b = 1; b <= 48; b++) {
                Workload w = Workload.builder(g).batch(b).phase(b % 2 == 0 ? Phase.TRAIN : Phase.INFER)
                        .threads(1 + b % 2).tag("family", "f" + b % 4).build();
                set.add(org.scaledl.workload.Sample.of(w, 0.01 * size + 0.5 * b));
            }
            long s = System.nanoTime();
            RuntimePredictor.fit(set);
            fitByGraphSize.put(Integer.toString(size), (System.nanoTime() - s) / 1e9);
        }

        double[] imports = new double[quick ? 3 : 7];
        Path vit = data.resolve("graphs/vit_b_16_r112.onnx");
        for (int i = 0; i < imports.length; i++) {
            long s = System.nanoTime();
            OnnxImporter.read(vit);
            imports[i] = (System.nanoTime() - s) / 1e6;
        }
        double rate = matmulFlopsPerSecond();

        Map<String, Double> p50 = new LinkedHashMap<>();
        Map<String, Double> p99 = new LinkedHashMap<>();
        Map<String, Double> floor = new LinkedHashMap<>();
        Map<String, Double> warmP50 = new LinkedHashMap<>();
        List<Workload> mix = new ArrayList<>();
        for (String name : GRAPHS) {
            ModelGraph g = OnnxImporter.read(data.resolve("graphs/" + name + ".onnx"));
            Workload w = Workload.builder(g).batch(8).phase(Phase.TRAIN).build();
            mix.add(w);
            double[] lat = latencies(p, w, reps, true);
            p50.put(name, lat[lat.length / 2]);
            p99.put(name, lat[(int) (lat.length * 0.99)]);
            double[] warm = latencies(p, w, reps, false);
            warmP50.put(name, warm[warm.length / 2]);
            // The model's own arithmetic: each layer's basis terms times coefficients, plus the workload terms.
            double modelFlops = 2.0 * (g.size() * LayerBasis.LAYER_TERMS.size() + LayerBasis.GLOBAL_TERMS.size());
            floor.put(name, modelFlops / rate * 1e6);
        }
        double perSecond = throughput(p, mix, quick ? 1.0 : 3.0, true);
        double perSecondWarm = throughput(p, mix, quick ? 1.0 : 3.0, false);

        double[][] x = gaussian(10_000, 30, 5);
        t0 = System.nanoTime();
        new FedorovExchange(x, 60).design();
        double fedorovMs = (System.nanoTime() - t0) / 1e6;

        double exponent = scalingExponent(p, quick);

        out.put("predict_gnn_us_p50", gnnFirstQueries(d, data, gnn, quick ? 30 : 150));
        Path zoo = data.toAbsolutePath().resolveSibling("cpu-zoo").resolve("graphs");
        if (Files.isDirectory(zoo)) {
            out.putAll(calibratedFigures(zoo, quick ? 5 : 21));
        }
        if (gnn) {
            out.putAll(gnnFigures(d, p, data, reps));
        }
        if (gpu != null) {
            out.put("gpu_model_load_ms", gpuLoadMs);
            out.putAll(gpuFigures(gpu, data, quick ? 100 : 1_000));
        }
        out.putAll(clusterFigures(quick ? 200 : 2_000));

        Arrays.sort(imports);
        out.put("predict_us_p50", p50);
        out.put("predict_us_p99", p99);
        out.put("predict_floor_us", floor);
        out.put("predict_warm_us_p50", warmP50);
        out.put("predict_per_s", perSecond);
        out.put("predict_warm_per_s", perSecondWarm);
        out.put("fit_s", fitS);
        out.put("fit_s_by_samples", fitBySamples);
        out.put("fit_s_by_graph_nodes", fitByGraphSize);
        out.put("dataset_load_s", loadS);
        out.put("fedorov_ms", fedorovMs);
        out.put("import_ms", imports[imports.length / 2]);
        out.put("scaling_exponent", exponent);
        out.put("matmul_gflops", rate / 1e9);
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.valueToTree(out);
            Reports.printJson(root);
        } else {
            System.out.printf(Locale.ROOT, "machine: %d cores; single-thread matmul %.2f GFLOP/s%n",
                    Runtime.getRuntime().availableProcessors(), rate / 1e9);
            System.out.println("predict, first query of a (graph, batch, phase) / repeated query:");
            for (String name : GRAPHS) {
                System.out.printf(Locale.ROOT, "  %-20s p50 %8.1f µs  p99 %8.1f µs  floor %6.2f µs  repeated p50 %6.2f µs%n",
                        name, p50.get(name), p99.get(name), floor.get(name), warmP50.get(name));
            }
            System.out.printf(Locale.ROOT, "predict throughput, %d threads: %.0f /s first queries, %.0f /s repeated%n",
                    Runtime.getRuntime().availableProcessors(), perSecond, perSecondWarm);
            ((Map<?, ?>) out.get("predict_gnn_us_p50")).forEach((k, v) -> System.out.printf(Locale.ROOT,
                    "  %-20s first query with the GNN stage p50 %8.1f µs%n", k, v));
            System.out.printf(Locale.ROOT, "fit on %d samples: %.2f s (dataset load %.2f s)%n", d.size(), fitS, loadS);
            fitBySamples.forEach((k, v) -> System.out.printf(Locale.ROOT, "  fit on %5s samples: %.2f s%n", k, v));
            fitByGraphSize.forEach((k, v) -> System.out.printf(Locale.ROOT,
                    "  fit on 48 samples of a %6s-node chain: %.2f s%n", k, v));
            System.out.printf(Locale.ROOT, "ONNX import vit_b_16_r112 (1,772 nodes): %.1f ms%n",
                    imports[imports.length / 2]);
            System.out.printf(Locale.ROOT, "Fedorov N=10,000 p=30 n=60 (5 starts): %.0f ms%n", fedorovMs);
            System.out.printf(Locale.ROOT, "predict time ~ (nodes+edges)^%.3f on synthetic graphs%n", exponent);
            if (gpuModel != null) {
                System.out.printf(Locale.ROOT, "device model: load %.0f ms; predict on H100 (training), first query "
                        + "of a (graph, batch, phase, device) / repeated:%n", out.get("gpu_model_load_ms"));
                for (String name : GPU_GRAPHS) {
                    System.out.printf(Locale.ROOT, "  %-20s p50 %8.1f µs  repeated p50 %6.2f µs%n", name,
                            ((Map<?, ?>) out.get("gpu_predict_us_p50")).get(name),
                            ((Map<?, ?>) out.get("gpu_predict_warm_us_p50")).get(name));
                }
            }
            System.out.printf(Locale.ROOT, "bundled gpu model: a 1T-parameter GPT on 3,072 A100s (t8 p64 d6, 512 "
                    + "micro-batches): first prediction %.2f ms (configuration and graph included), then p50 %.1f µs; "
                    + "layout search, GPT-3 175B on 512 GPUs: %.0f layouts in %.3f s, %.0f layouts/s on one thread%n",
                    out.get("predict_1t_3072_first_ms"), out.get("predict_1t_3072_us_p50"), out.get("layouts"),
                    out.get("layout_search_s"), out.get("layouts_per_s"));
            if (out.containsKey("layouts_deepseek_v3_1024")) {
                System.out.printf(Locale.ROOT, "DeepSeek-V3 on 1,024 H100s (t2 p8 d64 EP64): first prediction %.2f ms, "
                        + "then p50 %.1f µs, p99 %.1f µs; layout search with expert and context parallelism: %.0f "
                        + "layouts in %.3f s, %.0f layouts/s on one thread%n",
                        out.get("predict_deepseek_v3_1024_first_ms"), out.get("predict_deepseek_v3_1024_us_p50"),
                        out.get("predict_deepseek_v3_1024_us_p99"), out.get("layouts_deepseek_v3_1024"),
                        out.get("layout_search_deepseek_v3_1024_s"), out.get("layouts_deepseek_v3_1024_per_s"));
            }
            if (gnn) {
                System.out.printf(Locale.ROOT, "scaledl with GNN: fit %.1f s; resnet50_r112 predict: first query of a "
                        + "graph %.1f ms, then p50 %.1f µs (layer-wise alone %.1f µs); allocated per call %.0f B "
                        + "(layer-wise alone %.0f B)%n", out.get("gnn_fit_s"), out.get("gnn_first_graph_ms"),
                        out.get("gnn_predict_us_p50"), out.get("layerwise_breakdown_predict_us_p50"),
                        out.get("gnn_predict_alloc_bytes"), out.get("layerwise_breakdown_predict_alloc_bytes"));
            }
        }
        return 0;
    }

    private static final String[] GPU_GRAPHS = {"resnet50_r112", "vit_b_16_r112"};

    /** The names of both lists, each once, in order. */
    private static List<String> concat(String[] a, String[] b) {
        java.util.LinkedHashSet<String> all = new java.util.LinkedHashSet<>(List.of(a));
        all.addAll(List.of(b));
        return List.copyOf(all);
    }

    /**
     * Large-model figures with the bundled gpu predictor: a 1T-parameter GPT (Narayanan et al.'s largest: hidden
     * 25,600, 160 heads, 128 layers) on 3,072 A100-80GB with Megatron's layout, first prediction (specification,
     * graph and prediction) and repeated ones (micro-batch counts varied so no two ask the same); and the layout
     * search's rate for GPT-3 175B on 512 GPUs, on this thread alone.
     */
    private static Map<String, Object> clusterFigures(int reps) {
        Map<String, Object> out = new LinkedHashMap<>();
        RuntimePredictor gpu = org.scaledl.models.BundledModels.load("gpu");
        Device a100 = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
        java.util.function.IntFunction<Workload> job = m -> {
            ModelGraph g = org.scaledl.transformer.TransformerSpec.decoder("gpt-1t", 25_600, 160, 128, 51_200)
                    .maxPositions(2048).build().graph(2048);
            return Workload.builder(g).batch(m).device(a100).precision(org.scaledl.workload.Precision.FP16)
                    .recompute(org.scaledl.workload.Recompute.FULL)
                    .parallelism(new org.scaledl.workload.Parallelism(6, 8, 64, m)).build();
        };
        long t0 = System.nanoTime();
        gpu.predict(job.apply(512));
        out.put("predict_1t_3072_first_ms", (System.nanoTime() - t0) / 1e6);
        Workload base = job.apply(512);
        double[] lat = latencyMicros(gpu, i -> base.toBuilder().batch(256 + i % 512)
                .parallelism(new org.scaledl.workload.Parallelism(6, 8, 64, 256 + i % 512)).build(), reps);
        out.put("predict_1t_3072_us_p50", lat[reps / 2]);
        out.put("predict_1t_3072_us_p99", lat[(int) (reps * 0.99)]);
        ModelGraph gpt3 = org.scaledl.transformer.TransformerSpec.decoder("gpt3-175b", 12_288, 96, 96, 51_200)
                .maxPositions(2048).build().graph(2048);
        new org.scaledl.model.LayoutSearch(gpu, gpt3, a100, 64, 512).search();   // warm-up
        t0 = System.nanoTime();
        int n = new org.scaledl.model.LayoutSearch(gpu, gpt3, a100, 512, 1536)
                .precision(org.scaledl.workload.Precision.FP16).search().size();
        double s = (System.nanoTime() - t0) / 1e9;
        out.put("layouts", (double) n);
        out.put("layout_search_s", s);
        out.put("layouts_per_s", n / s);
        Path deepseek = Path.of("datasets/gpu/llm-public/configs/deepseek-v3/config.json");
        if (java.nio.file.Files.isRegularFile(deepseek)) {
            // DeepSeek-V3 (671B, MoE with MLA) on 1,024 H100s: one job (t2 p8 d64 EP64, interleaved) and a layout
            // search with expert and context parallelism
            Device h100 = DeviceCatalog.bundled().require("H100 SXM");
            ModelGraph ds = org.scaledl.transformer.HuggingFaceConfig.read(deepseek).graph(4096);
            java.util.function.IntFunction<Workload> dsJob = m -> Workload.builder(ds).batch(m).device(h100)
                    .precision(org.scaledl.workload.Precision.FP8).parallelism(new org.scaledl.workload.Parallelism(
                            64, 2, 8, m, true, 1, 4, 1, 64, 1)).build();
            t0 = System.nanoTime();
            gpu.predict(dsJob.apply(128));
            out.put("predict_deepseek_v3_1024_first_ms", (System.nanoTime() - t0) / 1e6);
            double[] dsLat = latencyMicros(gpu, i -> dsJob.apply(64 + 8 * (i % 64)), reps);
            out.put("predict_deepseek_v3_1024_us_p50", dsLat[reps / 2]);
            out.put("predict_deepseek_v3_1024_us_p99", dsLat[(int) (reps * 0.99)]);
            new org.scaledl.model.LayoutSearch(gpu, ds, h100, 64, 512).search();   // warm-up
            t0 = System.nanoTime();
            int dn = new org.scaledl.model.LayoutSearch(gpu, ds, h100, 1024, 8192)
                    .precision(org.scaledl.workload.Precision.FP8).search().size();
            double ds2 = (System.nanoTime() - t0) / 1e9;
            out.put("layouts_deepseek_v3_1024", (double) dn);
            out.put("layout_search_deepseek_v3_1024_s", ds2);
            out.put("layouts_deepseek_v3_1024_per_s", dn / ds2);
        }
        return out;
    }

    /**
     * Each of {@code reps} predictions' latency, µs, sorted: the {@code i}-th of {@code job(i)} (jobs that differ, so
     * that no two ask the same).
     */
    private static double[] latencyMicros(RuntimePredictor p, java.util.function.IntFunction<Workload> job,
            int reps) {
        double[] lat = new double[reps];
        double sink = 0;
        for (int i = 0; i < reps; i++) {
            Workload w = job.apply(i);
            long s = System.nanoTime();
            sink += p.predict(w).millis();
            lat[i] = (System.nanoTime() - s) / 1e3;
        }
        if (sink < 0) {
            throw new IllegalStateException("a negative prediction");
        }
        Arrays.sort(lat);
        return lat;
    }

    /** A saved device model: load time, and first and repeated prediction latency on an H100. */
    private static Map<String, Object> gpuFigures(RuntimePredictor m, Path data, int reps) {
        Map<String, Object> out = new LinkedHashMap<>();
        Device h100 = DeviceCatalog.bundled().require("NVIDIA H100 80GB HBM3");
        Map<String, Double> first = new LinkedHashMap<>();
        Map<String, Double> warm = new LinkedHashMap<>();
        for (String name : GPU_GRAPHS) {
            Workload w = Workload.builder(OnnxImporter.read(data.resolve("graphs/" + name + ".onnx"))).batch(8)
                    .phase(Phase.TRAIN).device(h100).build();
            double[] cold = latencies(x -> m.predict(x).millis(), w, reps, true);
            double[] hot = latencies(x -> m.predict(x).millis(), w, 20 * reps, false);
            first.put(name, cold[cold.length / 2]);
            warm.put(name, hot[hot.length / 2]);
        }
        out.put("gpu_predict_us_p50", first);
        out.put("gpu_predict_warm_us_p50", warm);
        return out;
    }

    /**
     * The GNN stage's costs: fit on the dataset, the first prediction for a graph (message passing, then cached),
     * and repeated predictions of new batch sizes with their allocation per call, next to the layer-wise model's
     * {@code predict} (both build the per-layer breakdown).
     */
    private static Map<String, Object> gnnFigures(Dataset d, RuntimePredictor layerwise, Path data, int reps) {
        Map<String, Object> out = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        org.scaledl.model.RuntimeModel m = RuntimePredictor.builder()
                .interactions(new org.scaledl.gnn.GnnInteractions()).build().fit(d.samples());
        out.put("gnn_fit_s", (System.nanoTime() - t0) / 1e9);
        ModelGraph g = OnnxImporter.read(data.resolve("graphs/resnet50_r112.onnx"));
        Workload w = Workload.builder(g).batch(8).phase(Phase.TRAIN).build();
        t0 = System.nanoTime();
        m.predict(w);
        out.put("gnn_first_graph_ms", (System.nanoTime() - t0) / 1e6);
        double[] gnnLat = new double[reps];
        double[] lwLat = new double[reps];
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean)
                java.lang.management.ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        double sink = 0;
        for (int i = 0; i < 2 * reps; i++) {
            sink += m.predict(w.toBuilder().batch(1 + i % 64).build()).millis()
                    + layerwise.predict(w.toBuilder().batch(1 + i % 64).build()).millis();
        }
        long gnnBytes = 0;
        long lwBytes = 0;
        for (int i = 0; i < reps; i++) {
            Workload x = w.toBuilder().batch(100 + i).build();
            long a0 = mx.getThreadAllocatedBytes(self);
            long s0 = System.nanoTime();
            sink += m.predict(x).millis();
            gnnLat[i] = (System.nanoTime() - s0) / 1e3;
            long a1 = mx.getThreadAllocatedBytes(self);
            Workload y = w.toBuilder().batch(100 + i).build();
            long s1 = System.nanoTime();
            sink += layerwise.predict(y).millis();
            lwLat[i] = (System.nanoTime() - s1) / 1e3;
            long a2 = mx.getThreadAllocatedBytes(self);
            gnnBytes += a1 - a0;
            lwBytes += a2 - a1;
        }
        if (sink == 42) {
            System.out.print("");
        }
        Arrays.sort(gnnLat);
        Arrays.sort(lwLat);
        out.put("gnn_predict_us_p50", gnnLat[reps / 2]);
        out.put("layerwise_breakdown_predict_us_p50", lwLat[reps / 2]);
        out.put("gnn_predict_alloc_bytes", (double) gnnBytes / reps);
        out.put("layerwise_breakdown_predict_alloc_bytes", (double) lwBytes / reps);
        return out;
    }

    /** The large graphs of the calibrated-machine figures (193, 1,232 and 3,299 layers). */
    private static final String[] LARGE_GRAPHS = {"cspresnet50_r112", "vit_small_patch16_224_r112",
        "davit_tiny_r112"};

    /**
     * A prediction with its breakdown and warnings (p50 ms) on the machine the bundled {@code cpu-zoo} predictor was
     * fitted on, and on a machine it knows only from three calibration runs: calibrated predictions scale each
     * layer's time by its group's factor, which is linear in the layers.
     */
    private static Map<String, Object> calibratedFigures(Path graphs, int reps) {
        RuntimePredictor base = org.scaledl.models.BundledModels.load("cpu-zoo");
        Device other = Device.cpu("bench machine", 2, 256, 1, 2000, 20);
        List<org.scaledl.workload.Sample> runs = new ArrayList<>();
        for (String name : new String[] {"cspresnet50_r64", "vit_small_patch16_224_r112", "cspresnet50_r112"}) {
            Workload w = Workload.builder(OnnxImporter.read(graphs.resolve(name + ".onnx"))).batch(4)
                    .phase(Phase.TRAIN).build();
            runs.add(org.scaledl.workload.Sample.of(w.toBuilder().device(other).build(), 1.3 * base.predictMillis(w)));
        }
        RuntimePredictor calibrated = base.calibrate(runs);
        Map<String, Double> fitted = new LinkedHashMap<>();
        Map<String, Double> onCalibrated = new LinkedHashMap<>();
        double sink = 0;
        for (String name : LARGE_GRAPHS) {
            ModelGraph g = OnnxImporter.read(graphs.resolve(name + ".onnx"));
            Workload w = Workload.builder(g).batch(8).phase(Phase.TRAIN).build();
            Workload wc = w.toBuilder().device(other).build();
            double[] a = new double[reps];
            double[] b = new double[reps];
            for (int i = 0; i < reps; i++) {
                long s = System.nanoTime();
                sink += base.predict(w).millis();
                a[i] = (System.nanoTime() - s) / 1e6;
                s = System.nanoTime();
                sink += calibrated.predict(wc).millis();
                b[i] = (System.nanoTime() - s) / 1e6;
            }
            Arrays.sort(a);
            Arrays.sort(b);
            fitted.put(name, a[reps / 2]);
            onCalibrated.put(name, b[reps / 2]);
        }
        if (sink == 42) {
            System.out.print("");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("predict_breakdown_fitted_ms_p50", fitted);
        out.put("predict_breakdown_calibrated_ms_p50", onCalibrated);
        return out;
    }

    /**
     * The first query of a graph with the interaction stage, per graph (p50 µs): each rep reads the graph anew, so
     * the GNN embeds it (message passing in plain Java over its layers, with the layer-wise reference predictions
     * the node features need) before it predicts. The network is the default one; with {@code --gnn} it is trained as
     * usual, otherwise for 5 epochs (its inference cost does not depend on how well it was trained).
     */
    private static Map<String, Double> gnnFirstQueries(Dataset d, Path data, boolean full, int reps) {
        org.scaledl.gnn.GnnInteractions stage = full ? new org.scaledl.gnn.GnnInteractions()
                : new org.scaledl.gnn.GnnInteractions().withSize(16, 2, 5);
        RuntimePredictor m = RuntimePredictor.builder().interactions(stage).build().fit(d.samples());
        Map<String, Double> out = new LinkedHashMap<>();
        double sink = 0;
        for (String name : GRAPHS) {
            Path file = data.resolve("graphs/" + name + ".onnx");
            double[] lat = new double[reps];
            // as many new graphs again to warm up: each is embedded once, so the JIT needs many to compile the
            // message passing (p50 of resnet50 here: 3.3 ms after 3 graphs, 1.2 ms after 300)
            for (int i = -reps; i < reps; i++) {
                Workload w = Workload.builder(OnnxImporter.read(file)).batch(8).phase(Phase.TRAIN).build();
                long s0 = System.nanoTime();
                sink += m.predictMillis(w);
                if (i >= 0) {
                    lat[i] = (System.nanoTime() - s0) / 1e3;
                }
            }
            Arrays.sort(lat);
            out.put(name, lat[reps / 2]);
        }
        if (sink == 42) {
            System.out.print("");
        }
        return out;
    }

    /**
     * Sorted single-call latencies in µs after a warm-up of the JIT. {@code cold}: every call uses a batch size not
     * seen before, so the per-(graph, batch, phase) family sums are recomputed from the layers each time (the cost
     * of a first query); otherwise the same workload is asked again (a scheduler's repeated query).
     */
    private static double[] latencies(RuntimePredictor p, Workload w, int reps, boolean cold) {
        return latencies(p::predictMillis, w, reps, cold);
    }

    /**
     * Sorted latencies (µs) of {@code reps} predictions, after a warm-up of as many and at least half a second (so
     * that the JIT has compiled the path however fast it is); cold: a new batch size each.
     */
    private static double[] latencies(ToDoubleFunction<Workload> p, Workload w, int reps, boolean cold) {
        double sink = 0;
        Workload.Builder b = w.toBuilder();
        int next = 1_000_000;
        long warmEnd = System.nanoTime() + 500_000_000L;
        for (int i = 0; i < reps || System.nanoTime() < warmEnd; i++) {
            sink += p.applyAsDouble(cold ? b.batch(next++).build() : w);
        }
        double[] lat = new double[reps];
        for (int i = 0; i < reps; i++) {
            Workload x = cold ? b.batch(next++).build() : w;
            long s = System.nanoTime();
            sink += p.applyAsDouble(x);
            lat[i] = (System.nanoTime() - s) / 1e3;
        }
        Arrays.sort(lat);
        if (sink == 42) {
            System.out.print("");
        }
        return lat;
    }

    private static double throughput(RuntimePredictor p, List<Workload> mix, double seconds, boolean cold)
            throws Exception {
        int threads = Runtime.getRuntime().availableProcessors();
        AtomicLong count = new AtomicLong();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = 2_000_000 + t * 10_000_000;
            Thread th = new Thread(() -> {
                long n = 0;
                int i = 0;
                while (System.nanoTime() < end) {
                    Workload w = mix.get(i++ % mix.size());
                    p.predictMillis(cold ? w.toBuilder().batch(first + i).build() : w);
                    n++;
                }
                count.addAndGet(n);
            });
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join();
        }
        return count.get() / seconds;
    }

    /** Single-thread dense matmul rate (FLOP/s) of a plain blocked Java kernel, 256 × 256. */
    static double matmulFlopsPerSecond() {
        int n = 256;
        double[] a = new double[n * n];
        double[] b = new double[n * n];
        double[] c = new double[n * n];
        Random r = new Random(1);
        for (int i = 0; i < a.length; i++) {
            a[i] = r.nextDouble();
            b[i] = r.nextDouble();
        }
        double best = Double.MAX_VALUE;
        for (int rep = 0; rep < 30; rep++) {
            Arrays.fill(c, 0);
            long s = System.nanoTime();
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < n; k++) {
                    double aik = a[i * n + k];
                    for (int j = 0; j < n; j++) {
                        c[i * n + j] += aik * b[k * n + j];
                    }
                }
            }
            best = Math.min(best, (System.nanoTime() - s) / 1e9);
        }
        return 2.0 * n * n * n / best;
    }

    /** Slope of log(predict time) against log(nodes + edges) over chains and random DAGs of 10 to 10,000 nodes. */
    private static double scalingExponent(RuntimePredictor p, boolean quick) {
        int[] sizes = {10, 100, 1_000, 10_000};
        List<double[]> pts = new ArrayList<>();
        for (int n : sizes) {
            for (boolean dag : new boolean[] {false, true}) {
                ModelGraph g = synthetic(n, dag, n);
                Workload w = Workload.builder(g).batch(8).phase(Phase.TRAIN).build();
                int reps = Math.max(quick ? 20 : 100, (quick ? 20_000 : 200_000) / n);
                double[] lat = latencies(p, w, reps, true);
                pts.add(new double[] {Math.log(g.size() + g.edges().size()), Math.log(lat[lat.length / 2])});
            }
        }
        double mx = pts.stream().mapToDouble(v -> v[0]).average().orElse(0);
        double my = pts.stream().mapToDouble(v -> v[1]).average().orElse(0);
        double sxy = 0;
        double sxx = 0;
        for (double[] v : pts) {
            sxy += (v[0] - mx) * (v[1] - my);
            sxx += (v[0] - mx) * (v[0] - mx);
        }
        return sxy / sxx;
    }

    /** A chain of Gemm+Relu pairs, or a random DAG of Adds over earlier tensors, of about {@code n} layers. */
    static ModelGraph synthetic(int n, boolean dag, long seed) {
        Random r = new Random(seed);
        SymbolicShape act = SymbolicShape.of(Dim.batch(), Dim.of(64));
        ModelGraph.Builder b = ModelGraph.builder((dag ? "dag" : "chain") + n)
                .tensor(TensorInfo.of("t0", DataType.FLOAT, act, TensorRole.INPUT));
        for (int i = 1; i <= n; i++) {
            b.tensor(TensorInfo.of("t" + i, DataType.FLOAT, act, TensorRole.ACTIVATION));
            if (!dag && i % 2 == 1) {
                String w = "w" + i;
                b.tensor(TensorInfo.of(w, DataType.FLOAT, SymbolicShape.ofStatic(64, 64), TensorRole.PARAMETER));
                b.layer(Layer.builder("gemm" + i, "Gemm").inputs("t" + (i - 1), w).outputs("t" + i).build());
            } else if (!dag) {
                b.layer(Layer.builder("relu" + i, "Relu").inputs("t" + (i - 1)).outputs("t" + i).build());
            } else {
                String other = "t" + r.nextInt(i);
                b.layer(Layer.builder("add" + i, "Add").inputs("t" + (i - 1), other).outputs("t" + i).build());
            }
        }
        return b.output("t" + n).build();
    }

    /** A rows × p matrix of standard normal values. */
    static double[][] gaussian(int rows, int p, long seed) {
        Random r = new Random(seed);
        double[][] x = new double[rows][p];
        for (double[] row : x) {
            for (int j = 0; j < p; j++) {
                row[j] = r.nextGaussian();
            }
        }
        return x;
    }
}
