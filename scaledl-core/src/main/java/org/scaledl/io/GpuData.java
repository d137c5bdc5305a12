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
import org.scaledl.Checks;
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
 * @param collectives measured all-reduces
 */
public record GpuData(List<OpMeasurement> kernelRows, List<OpMeasurement> nodeRows, List<Run> runs,
        Map<String, FxTrace> traces, List<CollectiveMeasurement> collectives) {
    private static final Pattern PARALLEL = Pattern.compile("(none)|(dp|tp|pp)(\\d+)(?:_(\\d+))?");

    /** Copies. */
    public GpuData {
        kernelRows = List.copyOf(kernelRows);
        nodeRows = List.copyOf(nodeRows);
        runs = List.copyOf(runs);
        traces = Collections.unmodifiableMap(new LinkedHashMap<>(traces));
        collectives = List.copyOf(collectives);
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

    /** Operator measurements: kernel rows, then trace nodes. */
    public List<OpMeasurement> operators() {
        List<OpMeasurement> all = new ArrayList<>(kernelRows);
        all.addAll(nodeRows);
        return all;
    }

    /**
     * Reads everything under a data root.
     *
     * @throws IllegalArgumentException when there are no GPU measurements
     * @throws InvalidInputException naming the file and line for malformed data or a GPU missing from the catalog
     */
    public static GpuData read(Path dataRoot, DeviceCatalog devices) {
        Path kernels = dataRoot.resolve("neusight/kernels");
        Path deepbench = dataRoot.resolve("deepbench");
        Path models = dataRoot.resolve("neusight/models");
        List<OpMeasurement> kernelRows = new ArrayList<>();
        if (Files.isDirectory(kernels)) {
            kernelRows.addAll(KernelTables.neusight(kernels, devices));
        }
        if (Files.isRegularFile(deepbench.resolve("gemm.csv")) && Files.isRegularFile(deepbench.resolve("conv.csv"))) {
            kernelRows.addAll(KernelTables.deepbench(deepbench, devices));
        }
        List<Run> runs = Files.isRegularFile(models.resolve("e2e.csv")) ? readRuns(models.resolve("e2e.csv"),
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
        Checks.argument(!kernelRows.isEmpty() || !nodeRows.isEmpty(), "no GPU measurements under %s",
                dataRoot);
        Path allreduce = deepbench.resolve("allreduce.csv");
        List<CollectiveMeasurement> comm = Files.isRegularFile(allreduce)
                ? CollectiveTables.readDeepBench(allreduce) : List.of();
        return new GpuData(kernelRows, nodeRows, runs, traces, comm);
    }

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
        List<Run> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            String status = t.get(r, "node_csv_status");
            String csv = status.equals("ok") ? t.get(r, "node_csv") : "";
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
