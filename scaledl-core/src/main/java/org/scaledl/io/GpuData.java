package org.scaledl.io;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Device;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The GPU measurements under a data root laid out as {@code shared/data}: kernel tables
 * ({@code neusight/kernels/*.csv}, {@code deepbench/gemm.csv} and {@code conv.csv}), whole-model runs with their
 * torch.fx node traces ({@code neusight/models/e2e.csv}, {@code nodes/}) and collectives
 * ({@code deepbench/allreduce.csv}); any part may be missing.
 *
 * <pre>{@code
 * GpuData d = GpuData.read(Path.of("../shared/data"), GpuData.catalogFor(root, DeviceCatalog.bundled()));
 * RuntimePredictor gpu = RuntimePredictor.builder().layerCost(LayerCost.device(d.operators()))
 *         .collectives(d.collectives()).build().fit(d.samples(r -> r.parallelism().ranks() == 1));
 * }</pre>
 *
 * @param kernelRows  operator benchmark rows (NeuSight kernels, DeepBench GEMM and convolutions)
 * @param nodeRows    nodes of the profiled model traces, on their own GPU
 * @param runs        whole-model runs
 * @param traces      one whole-model trace per (model, phase, sequence length, batch), by {@link #traceKey}
 * @param collectives measured all-reduces (DeepBench's, and vTrain's nccl-tests tables)
 * @param megatronRuns measured training iterations of configuration-built transformers on several GPUs (vTrain's
 *                     Megatron-DeepSpeed runs: {@link #readVTrain}; published cluster runs: {@link #LLM_PUBLIC})
 */
public record GpuData(List<OpMeasurement> kernelRows, List<OpMeasurement> nodeRows, List<Run> runs,
        Map<String, FxTrace> traces, List<CollectiveMeasurement> collectives, List<Sample> megatronRuns) {
    private static final Pattern PARALLEL = Pattern.compile("(none)|(dp|tp|pp)(\\d+)(?:_(\\d+))?");

    /** Copies. */
    public GpuData {
        kernelRows = List.copyOf(kernelRows);
        nodeRows = List.copyOf(nodeRows);
        runs = List.copyOf(runs);
        traces = Collections.unmodifiableMap(new LinkedHashMap<>(traces));
        collectives = List.copyOf(collectives);
        megatronRuns = List.copyOf(megatronRuns);
    }

    /**
     * A whole-model run ({@code e2e.csv}).
     *
     * @param device      the GPU
     * @param model       model name
     * @param phase       phase
     * @param seq         sequence length
     * @param batch       global batch
     * @param parallel    the file's parallelism label ({@code none}, {@code dp4}, {@code tp4}, {@code pp4_1})
     * @param parallelism the parallelism it denotes
     * @param fusion      a {@code torch.compile} run (the model predicts eager execution)
     * @param layers      block copies of the model (its layer count; 1 where the trace is the whole model)
     * @param millis      measured iteration time
     * @param nodeCsv     the node trace, relative to {@code neusight/models}, empty when there is none
     */
    public record Run(Device device, String model, Phase phase, int seq, int batch, String parallel,
            Parallelism parallelism, boolean fusion, int layers, double millis, String nodeCsv) {
    }

    /** The published cluster runs among the Megatron runs (those read from {@link #LLM_PUBLIC}). */
    public List<Sample> publishedRuns() {
        return megatronRuns.stream().filter(s -> s.workload().tag(JobRuns.PUBLICATION_TAG).isPresent()).toList();
    }

    /** vTrain's single-node runs among the Megatron runs. */
    public List<Sample> vtrainRuns() {
        return megatronRuns.stream().filter(s -> s.workload().tag(JobRuns.PUBLICATION_TAG).isEmpty()).toList();
    }

    /** Operator measurements: kernel rows, then trace nodes. */
    public List<OpMeasurement> operators() {
        List<OpMeasurement> all = new ArrayList<>(kernelRows);
        all.addAll(nodeRows);
        return all;
    }

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GpuData.class);

    /**
     * Reads everything under a data root.
     *
     * @throws InvalidInputException naming the file and line for malformed data or a GPU missing from the catalog,
     *         and the folder when it holds no GPU measurements
     */
    public static GpuData read(Path dataRoot, DeviceCatalog devices) {
        Path kernels = dataRoot.resolve("neusight/kernels");
        Path deepbench = dataRoot.resolve("deepbench");
        Path models = dataRoot.resolve("neusight/models");
        List<OpMeasurement> kernelRows = new ArrayList<>();
        if (Files.isDirectory(kernels)) {
            kernelRows.addAll(KernelTables.neusight(kernels, devices));
        }
        if (KernelTables.present(deepbench.resolve("gemm.csv"))
                || KernelTables.present(deepbench.resolve("conv.csv"))) {
            // each of DeepBench's sheets is read where it is there (one of them was read only with the other)
            kernelRows.addAll(KernelTables.deepbench(deepbench, devices));
        }
        List<Run> runs = KernelTables.present(models.resolve("e2e.csv")) ? readRuns(models.resolve("e2e.csv"),
                devices) : List.of();
        List<OpMeasurement> nodeRows = new ArrayList<>();
        Map<String, FxTrace> traces = new HashMap<>();
        for (Run r : runs) {
            if (r.nodeCsv().isEmpty()) {
                continue;
            }
            Path file = models.resolve(r.nodeCsv());
            nodeRows.addAll(KernelTables.traceNodes(FxTraceReader.read(file, 1), r.device()));
            traces.computeIfAbsent(traceKey(r.model(), r.phase(), r.seq(), r.batch()), k -> FxTraceReader.read(file,
                    r.layers()));
        }
        if (kernelRows.isEmpty() && nodeRows.isEmpty()) {
            // bad input, as any folder without the data it should hold
            throw InvalidInputException.inSource(dataRoot.toString(), "no GPU measurements under it (kernel tables "
                    + "under neusight/, whole-model traces): give the folder laid out as the bundled datasets/gpu");
        }
        Path allreduce = deepbench.resolve("allreduce.csv");
        List<CollectiveMeasurement> comm = new ArrayList<>(KernelTables.present(allreduce)
                ? CollectiveTables.readDeepBench(allreduce) : List.of());
        if (comm.isEmpty() && Files.isRegularFile(allreduce)) {
            LOG.warn("{}: no all-reduce measurements read from it", allreduce);
        }
        Path vtrain = dataRoot.resolve("vtrain");
        List<Sample> megatron = new ArrayList<>();
        if (KernelTables.present(vtrain.resolve("ground_truth_single.csv"))) {
            megatron.addAll(readVTrain(vtrain.resolve("ground_truth_single.csv"), devices.require(VTRAIN_GPU)));
        }
        Path published = dataRoot.resolve(LLM_PUBLIC);
        if (KernelTables.present(published)) {
            int before = megatron.size();
            megatron.addAll(JobRuns.read(published, p -> {
                throw new IllegalArgumentException("the published runs name transformers, not graphs");
            }, name -> {
                try {
                    return Optional.of(devices.require(name));
                } catch (InvalidInputException e) {
                    // said at the row's line, as a candidate table's unknown device is
                    throw new IllegalArgumentException(e.detail(), e);
                }
            }, Map.of()));
            if (megatron.size() == before) {
                LOG.warn("{}: no runs (a header and no rows): the execution model is fitted without published "
                        + "cluster runs", published);
            }
        }
        for (String[] server : VTRAIN_NCCL) {
            Path dir = vtrain.resolve("nccl").resolve(server[0]);
            if (Files.isDirectory(dir)) {
                Device d = devices.require(server[1]);
                comm.addAll(CollectiveTables.readNcclTests(dir, d.name(), org.scaledl.workload.Topology.assumedFor(d)
                        .with(Optional.empty(), Optional.empty()), NCCL_EVERY));
            }
        }
        return new GpuData(kernelRows, nodeRows, runs, traces, comm, megatron);
    }

    /**
     * The GPU of vTrain's single-node runs: one node of eight A100s, whose variant the repository does not state. The
     * SXM4 80 GB part is assumed: the same work's multi-node GPT runs were measured on A100-80GB nodes, and with each
     * model family of the published cluster runs held out, the 80 GB description predicts the one A100-80GB cluster of
     * the data (BLOOM's) with less bias than the 40 GB one ({@code evaluate-clusters}; docs/results.md). The two parts
     * share tensor peaks and NVSwitch; the 80 GB part has a third more memory bandwidth and twice the memory (which
     * only the memory checks see: vTrain's jobs fit either).
     */
    public static final String VTRAIN_GPU = "NVIDIA A100-SXM4-80GB";

    /** vTrain's nccl-tests tables: folder and the GPU of the server they were measured in. */
    private static final String[][] VTRAIN_NCCL = {{"a100", VTRAIN_GPU}, {"v100", "Tesla V100-SXM2-16GB"}};

    /** Every how many rows of an nccl-tests table a measurement is kept (1,024 sizes per table). */
    private static final int NCCL_EVERY = 32;

    /**
     * Reads vTrain's measured GPT training iterations ({@code ground_truth_single.csv}: {@code # GPUs, global batch,
     * micro batch, hidden size, attention heads, # layers, sequence length, tensor parallelism, data parallelism,
     * pipeline parallelism, iteration time (ms)}), as Megatron-DeepSpeed ran them: GPT with a 50,257-token vocabulary
     * and learned positions, FP16 mixed precision, full activation recomputation, the 1F1B schedule, on one node of
     * eight GPUs, the gradients reduced after the backward pass (the repository's configurations turn gradient
     * bucketing off: {@link Workload#gradReduce()}), in FP16 as DeepSpeed keeps and reduces FP16
     * training's gradients ({@link Workload#sixteenBitGradients()}). Each row becomes a workload of
     * {@link org.scaledl.transformer.TransformerSpec}'s graph with the per-replica batch {@code global / data} in
     * {@code global / (data · micro)} micro-batches, tagged with its
     * model ({@code gpt-h<hidden>-l<layers>}) and {@code hidden}, {@code layers} and {@code gpus} for splits, and
     * {@value DatasetReader#SOURCE_TAG} ({@code FILE:LINE}: what a refusal of the run names).
     *
     * @param device the GPU the runs were measured on
     * @throws InvalidInputException naming file and line for an inconsistent row, or one repeating an earlier row in
     *                               every column (a copied run, which would weigh twice)
     */
    public static List<Sample> readVTrain(Path file, Device device) {
        CsvTable t = CsvTable.read(file, "# GPUs", "global batch", "micro batch", "hidden size", "attention heads",
                "# layers", "sequence length", "tensor parallelism", "data parallelism", "pipeline parallelism",
                "iteration time (ms)");
        KernelTables.noRows(t);
        // a run measured again differs in its time; a row equal in every column is a copy
        t.refuseCopiedRows(t.columns());
        org.scaledl.workload.Topology node = org.scaledl.workload.Topology.of(8,
                org.scaledl.workload.Topology.Link.NVSWITCH, device.linkGBps() > 0 ? device.linkGBps() : 300, 800);
        Map<String, org.scaledl.graph.ModelGraph> graphs = new HashMap<>();
        List<Sample> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            int gpus = t.positiveInt(r, "# GPUs");
            int global = t.positiveInt(r, "global batch");
            int micro = t.positiveInt(r, "micro batch");
            int hidden = t.positiveInt(r, "hidden size");
            int heads = t.positiveInt(r, "attention heads");
            int layers = t.positiveInt(r, "# layers");
            int seq = t.positiveInt(r, "sequence length");
            int tp = t.positiveInt(r, "tensor parallelism");
            int dp = t.positiveInt(r, "data parallelism");
            int pp = t.positiveInt(r, "pipeline parallelism");
            if (tp * dp * pp != gpus || global % (dp * micro) != 0) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "inconsistent row: " + gpus + " GPUs for tp "
                        + tp + " x dp " + dp + " x pp " + pp + ", global batch " + global + " for dp " + dp
                        + " x micro batch " + micro);
            }
            String model = "gpt-h" + hidden + "-l" + layers;
            org.scaledl.graph.ModelGraph g = graphs.computeIfAbsent(model + "/" + heads + "/" + seq,
                    k -> org.scaledl.transformer.TransformerSpec.decoder(model, hidden, heads, layers, VTRAIN_VOCAB)
                            .maxPositions(seq).fusedAttention(VTRAIN_FUSED).build().graph(seq));
            int m = global / (dp * micro);
            try {
                Workload w = Workload.builder(g).batch(global / dp).phase(Phase.TRAIN).device(device)
                        .parallelism(Parallelism.of(dp, tp, pp, m)).precision(org.scaledl.workload.Precision.FP16)
                        .recompute(org.scaledl.workload.Recompute.FULL).topology(node).tag("model", model)
                        .gradReduce(org.scaledl.workload.GradReduce.AFTER_BACKWARD).sixteenBitGradients(true)
                        .tag(VTRAIN_WEIGHT_TAG, Double.toString(VTRAIN_WEIGHT))
                        .tag("family", model).tag(VTRAIN_GROUP_TAG, "vtrain")
                        .tag("hidden", Integer.toString(hidden))
                        .tag("layers", Integer.toString(layers)).tag("gpus", Integer.toString(gpus))
                        .tag(DatasetReader.SOURCE_TAG, t.source() + ":" + t.line(r)).build();
                out.add(Sample.of(w, t.positiveFinite(r, "iteration time (ms)")));
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
            }
        }
        return out;
    }

    /**
     * Published training runs of large models on clusters, as a job runs table ({@link JobRuns}), under a data root:
     * {@code llm-public/runs.csv}.
     */
    public static final String LLM_PUBLIC = "llm-public/runs.csv";

    /**
     * The weight of each of vTrain's 1,440 single-node runs in the cluster fit: their 144 together weigh about as much
     * as the published cluster runs (each configuration one), so one node of small models does not outvote the
     * clusters, and still pins the host-bound regime they alone measure.
     */
    static final double VTRAIN_WEIGHT = 0.02;
    /** The tag a run's fit weight is read from (see {@code MegatronFit}). */
    private static final String VTRAIN_WEIGHT_TAG = "fit_weight";
    /**
     * The tag grouping runs for the interval's weights (see {@code MegatronFit}): vTrain's GPT sizes are one group,
     * their held-out errors those of a size between others, not of a new family.
     */
    private static final String VTRAIN_GROUP_TAG = "interval_group";

    /** Whether vTrain's GPT runs are read with a fused attention core (experiment switch). */
    static final boolean VTRAIN_FUSED = true;

    /** GPT-2's vocabulary, which vTrain's GPT models use. */
    private static final int VTRAIN_VOCAB = 50257;

    /**
     * The catalog for a data root: {@code base} plus the GPUs described in the root's own
     * {@code neusight/device_configs.csv}, if there is one (so data that measured a GPU the bundled catalog lacks
     * brings its description along); on a name in both, {@code base} wins.
     *
     * @throws InvalidInputException naming the file and line for a malformed description
     */
    public static DeviceCatalog catalogFor(Path dataRoot, DeviceCatalog base) {
        Path configs = dataRoot.resolve("neusight/device_configs.csv");
        return Files.isRegularFile(configs) ? base.with(DeviceCatalog.read(configs)) : base;
    }

    /** The key of a trace: model, phase, sequence length and batch. */
    public static String traceKey(String model, Phase phase, int seq, int batch) {
        return model + "/" + phase.label() + "/" + seq + "/" + batch;
    }

    /**
     * The workload of a run: its trace at the per-replica batch (the trace of exactly that batch if there is one,
     * else the first, by key, rescalable trace of the model at that sequence length, same phase first), on its
     * device with its parallelism. Empty for {@code torch.compile} runs, runs without a usable trace, and runs whose
     * batch does not divide over the data-parallel replicas.
     */
    public Optional<Workload> workload(Run r) {
        if (r.fusion() || r.batch() % r.parallelism().data() != 0) {
            return Optional.empty();
        }
        int batch = r.batch() / r.parallelism().data();
        return traceFor(r, batch).map(t -> Workload.builder(t.graph()).batch(batch).phase(r.phase())
                .device(r.device()).parallelism(r.parallelism()).tag("model", r.model()).build());
    }

    /** The runs that pass {@code keep} and have a workload, as samples, in file order. */
    public List<Sample> samples(Predicate<Run> keep) {
        List<Sample> out = new ArrayList<>();
        for (Run r : runs) {
            if (keep.test(r)) {
                workload(r).ifPresent(w -> out.add(Sample.of(w, r.millis())));
            }
        }
        return out;
    }

    private Optional<FxTrace> traceFor(Run r, int batch) {
        FxTrace exact = traces.get(traceKey(r.model(), r.phase(), r.seq(), batch));
        if (exact != null) {
            return Optional.of(exact);
        }
        Map<String, FxTrace> sorted = new TreeMap<>(traces);
        for (Phase p : List.of(r.phase(), r.phase() == Phase.TRAIN ? Phase.INFER : Phase.TRAIN)) {
            for (Map.Entry<String, FxTrace> e : sorted.entrySet()) {
                if (e.getKey().startsWith(r.model() + "/" + p.label() + "/" + r.seq() + "/")
                        && e.getValue().rescalable()) {
                    return Optional.of(e.getValue());
                }
            }
        }
        return Optional.empty();
    }

    /** {@code none}, {@code dpN}, {@code tpN}, {@code ppN_M} (M micro-batches). */
    static Parallelism parallelism(String label, int ranks) {
        Matcher m = PARALLEL.matcher(label);
        if (!m.matches()) {
            throw new IllegalArgumentException("unknown parallel '" + label + "' (expected none, dpN, tpN or ppN_M)");
        }
        if (m.group(1) != null) {
            return Parallelism.none();
        }
        int n = Integer.parseInt(m.group(3));
        if (ranks > 0 && ranks != n) {
            throw new IllegalArgumentException("parallel '" + label + "' but n_gpus " + ranks);
        }
        return switch (m.group(2)) {
            case "dp" -> Parallelism.data(n);
            case "tp" -> Parallelism.of(1, n, 1, 1);
            default -> Parallelism.of(1, 1, n, m.group(4) == null ? 1 : Integer.parseInt(m.group(4)));
        };
    }

    private static List<Run> readRuns(Path file, DeviceCatalog devices) {
        CsvTable t = CsvTable.read(file, "gpu", "model", "phase", "seq_len", "batch", "parallel", "n_gpus", "fusion",
                "model_n_layer", "e2e_ms", "node_csv", "node_csv_status");
        KernelTables.noRows(t);
        List<Run> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            String status = t.get(r, "node_csv_status");
            String csv = status.equals("ok") ? t.get(r, "node_csv") : "";
            if (!csv.isEmpty()) {
                // a trace's path stays inside the models' folder, as every table's paths do
                DatasetReader.confined(file.toAbsolutePath().getParent(), csv, "node_csv", "models", t.source(),
                        t.line(r));
            }
            String parallel = t.get(r, "parallel");
            Optional<Device> device = devices.find(t.get(r, "gpu"));
            if (device.isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "device '" + t.get(r, "gpu")
                        + "' is not in the device catalog");
            }
            Parallelism par;
            Phase phase;
            try {
                par = parallelism(parallel, t.opt(r, "n_gpus").map(Integer::parseInt).orElse(0));
                phase = Phase.parse(t.get(r, "phase"));
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.detail());
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.getMessage());
            }
            out.add(new Run(device.get(), t.get(r, "model"), phase, t.positiveInt(r, "seq_len"),
                    t.positiveInt(r, "batch"), parallel, par, Boolean.parseBoolean(t.get(r, "fusion")),
                    t.opt(r, "model_n_layer").isPresent() ? t.positiveInt(r, "model_n_layer") : 1,
                    t.positiveFinite(r, "e2e_ms"), csv));
        }
        return out;
    }
}
