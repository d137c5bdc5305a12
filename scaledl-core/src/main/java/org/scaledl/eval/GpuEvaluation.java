package org.scaledl.eval;

import com.google.common.base.Preconditions;
import com.google.common.collect.ImmutableList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.scaledl.InvalidInputException;
import org.scaledl.data.CsvTable;
import org.scaledl.data.Phase;
import org.scaledl.data.Sample;
import org.scaledl.data.Workload;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.features.LayerFeatures;
import org.scaledl.features.OpFamily;
import org.scaledl.graph.ModelGraph;
import org.scaledl.hardware.Device;
import org.scaledl.hardware.DeviceCatalog;
import org.scaledl.kernels.KernelTables;
import org.scaledl.model.AllReduceModel;
import org.scaledl.model.DeviceLayerModel;
import org.scaledl.model.Interconnect;
import org.scaledl.model.OpMeasurement;
import org.scaledl.trace.FxTrace;
import org.scaledl.trace.FxTraceReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates the {@link DeviceLayerModel} on real GPU measurements laid out as in {@code shared/data}:
 * {@code neusight/kernels/*.csv}, {@code neusight/models/e2e.csv} with {@code nodes/}, and {@code deepbench/}
 * ({@code gemm.csv}, {@code conv.csv}, {@code allreduce.csv}); any part that is missing is skipped.
 *
 * <ul>
 *   <li><b>Seen GPU, held-out shapes</b>: a fraction of the operator shapes (all GPUs' rows of a shape together) is
 *       held out, the model is fitted on the rest and scored on them, per operator and GPU.</li>
 *   <li><b>Leave one GPU out</b>: for each GPU, the model is fitted on every other GPU's kernel rows and model-trace
 *       nodes (the same chip measured by the other dataset under another name is held out too), calibrated on the other GPUs' whole-model runs, and scored on that GPU's kernels and single-GPU
 *       model runs (eager; the {@code torch.compile} rows and models without a trace are counted, not scored).</li>
 *   <li><b>4-GPU parallel runs</b> (scored in their GPU's fold): data parallel = the per-GPU batch's iteration plus
 *       the gradient ring all-reduce left exposed after overlapping with backward ({@code max(comm − backward,
 *       one 25 MB bucket)}); tensor parallel = the repeated block's layers (except the residual stream) and the
 *       LM head split four ways, plus two all-reduces of the block's activations per block in forward and two in
 *       backward; pipeline with one micro-batch = the stages run one after another (the whole model's time) plus
 *       the activation hand-offs between stages. All-reduce efficiency and latency are fitted on DeepBench's
 *       single-node measurements; the link is the device's {@link Device#link()} (NVLink data-sheet figures per
 *       direction in the bundled catalog).</li>
 * </ul>
 *
 * <pre>{@code
 * GpuEvaluation.Report r = GpuEvaluation.run(Path.of("../shared/data"), devices, Optional.empty(), 7);
 * double mre = r.kernelLeaveOneGpuOutMre();
 * }</pre>
 */
public final class GpuEvaluation {
    private static final Logger LOG = LoggerFactory.getLogger(GpuEvaluation.class);

    /** Fraction of operator shapes held out in the seen-GPU split. */
    public static final double SEEN_HOLDOUT = 0.2;

    /** The baseline's per-operator floor, ms (the same 2 µs as the model's). */
    private static final double LAUNCH_FLOOR_MS = 0.002;

    private static final double BUCKET_BYTES = 25 * 1024 * 1024;

    private GpuEvaluation() {
    }

    /**
     * Error of one operator on one GPU.
     *
     * @param op       operator label ({@code bmm}, {@code linear}, {@code conv}, {@code gemm}, ...)
     * @param gpu      device name
     * @param n        rows scored
     * @param mre      mean relative error
     * @param within10 fraction of rows within ±10 %
     */
    public record Cell(String op, String gpu, int n, double mre, double within10) {
    }

    /**
     * One whole-model run.
     *
     * @param gpu         device name
     * @param model       model name
     * @param phase       phase
     * @param seqLen      sequence length
     * @param batch       global batch
     * @param parallel    {@code none}, {@code dp4}, {@code tp4} or {@code pp4_1}
     * @param measuredMs  measured time
     * @param predictedMs predicted time
     */
    public record ModelCase(String gpu, String model, Phase phase, int seqLen, int batch, String parallel,
            double measuredMs, double predictedMs) {
        /** |predicted − measured| / measured. */
        public double relativeError() {
            return Math.abs(predictedMs - measuredMs) / measuredMs;
        }
    }

    /**
     * The evaluation's results.
     *
     * @param seenGpu        per (op, GPU) errors on held-out shapes of GPUs seen in training
     * @param leaveOneGpuOut per (op, GPU) errors with the GPU held out
     * @param rooflineLeaveOneGpuOut the same for the baseline: roofline time times the median measured/roofline
     *                       ratio of the training rows of the same family and pass
     * @param models         single-GPU whole-model runs, each predicted with its GPU held out
     * @param parallel       4-GPU runs, each predicted with its GPU held out
     * @param adapted        the few-shot variant of the leave-one-GPU-out folds, when asked for
     * @param notes          what was skipped and why
     */
    public record Report(List<Cell> seenGpu, List<Cell> leaveOneGpuOut, List<Cell> rooflineLeaveOneGpuOut,
            List<ModelCase> models, List<ModelCase> parallel, Optional<Adapted> adapted, List<String> notes) {
        /** Copies. */
        public Report {
            seenGpu = ImmutableList.copyOf(seenGpu);
            leaveOneGpuOut = ImmutableList.copyOf(leaveOneGpuOut);
            rooflineLeaveOneGpuOut = ImmutableList.copyOf(rooflineLeaveOneGpuOut);
            models = ImmutableList.copyOf(models);
            parallel = ImmutableList.copyOf(parallel);
            notes = ImmutableList.copyOf(notes);
        }

        /** Mean over GPUs of each held-out GPU's kernel MRE (rows pooled over ops within a GPU). */
        public double kernelLeaveOneGpuOutMre() {
            return meanOverGpus(leaveOneGpuOut);
        }

        /** The same for the roofline baseline. */
        public double rooflineLeaveOneGpuOutMre() {
            return meanOverGpus(rooflineLeaveOneGpuOut);
        }

        /** Mean over GPUs of the seen-GPU held-out-shape MRE. */
        public double kernelSeenGpuMre() {
            return meanOverGpus(seenGpu);
        }

        /** Mean relative error of the single-GPU model runs (NaN when none). */
        public double modelMre() {
            return models.stream().mapToDouble(ModelCase::relativeError).average().orElse(Double.NaN);
        }

        /** Mean relative error of the parallel runs of one kind (NaN when none). */
        public double parallelMre(String kind) {
            return parallel.stream().filter(c -> c.parallel().equals(kind)).mapToDouble(ModelCase::relativeError)
                    .average().orElse(Double.NaN);
        }

        /** Per op: mean over GPUs of the MRE of that op in the given cells. */
        public static Map<String, Double> perOp(List<Cell> cells) {
            Map<String, double[]> acc = new TreeMap<>();
            for (Cell c : cells) {
                double[] a = acc.computeIfAbsent(c.op(), k -> new double[2]);
                a[0] += c.mre();
                a[1]++;
            }
            Map<String, Double> out = new TreeMap<>();
            acc.forEach((k, v) -> out.put(k, v[0] / v[1]));
            return out;
        }

        static double meanOverGpus(List<Cell> cells) {
            Map<String, double[]> byGpu = new TreeMap<>();
            for (Cell c : cells) {
                double[] a = byGpu.computeIfAbsent(c.gpu(), k -> new double[2]);
                a[0] += c.mre() * c.n();
                a[1] += c.n();
            }
            return byGpu.values().stream().mapToDouble(a -> a[0] / a[1]).average().orElse(Double.NaN);
        }
    }

    /**
     * Leave-one-GPU-out with a little of the held-out GPU measured: {@code kernelsPerOp} of its kernels per op
     * ({@link DeviceLayerModel#adapt}) and {@code runs} of its single-GPU model runs ({@link DeviceLayerModel#calibrate}
     * with them added), both a seeded random choice; scored on what was not measured, before and after.
     *
     * @param kernelsPerOp  kernels profiled per op (at most half of an op's rows)
     * @param runs          whole-model runs measured per GPU
     * @param kernels       per (op, GPU) errors on the unprofiled kernels, adapted model
     * @param kernelsBefore the same rows, fold model before adapting
     * @param models        the unmeasured single-GPU runs, adapted model
     * @param modelsBefore  the same runs, fold model before adapting
     */
    public record Adapted(int kernelsPerOp, int runs, List<Cell> kernels, List<Cell> kernelsBefore,
            List<ModelCase> models, List<ModelCase> modelsBefore) {
        /** Copies. */
        public Adapted {
            kernels = ImmutableList.copyOf(kernels);
            kernelsBefore = ImmutableList.copyOf(kernelsBefore);
            models = ImmutableList.copyOf(models);
            modelsBefore = ImmutableList.copyOf(modelsBefore);
        }

        /** Kernel MRE after adapting (mean over GPUs; NaN without kernels). */
        public double kernelMre() {
            return Report.meanOverGpus(kernels);
        }

        /** Kernel MRE of the same rows before adapting. */
        public double kernelMreBefore() {
            return Report.meanOverGpus(kernelsBefore);
        }

        /** Whole-model MRE after adapting (NaN without runs). */
        public double modelMre() {
            return models.stream().mapToDouble(ModelCase::relativeError).average().orElse(Double.NaN);
        }

        /** Whole-model MRE of the same runs before adapting. */
        public double modelMreBefore() {
            return modelsBefore.stream().mapToDouble(ModelCase::relativeError).average().orElse(Double.NaN);
        }
    }

    /** A NeuSight whole-model label row ({@code layers} is 1 where the trace is the whole model). */
    private record Run(String gpu, String model, Phase phase, int seq, int batch, String parallel, boolean fusion,
            int layers, double ms, String nodeCsv) {
    }

    /**
     * Runs the evaluation.
     *
     * @param dataRoot   folder holding {@code neusight/} and/or {@code deepbench/}
     * @param devices    device descriptions for every GPU in the data
     * @param holdoutGpu evaluate only this GPU's fold (leave-one-GPU-out) instead of every GPU's
     * @param seed       seeds the seen-GPU shape split
     * @throws InvalidInputException for unreadable or malformed data, or an unknown {@code holdoutGpu}
     */
    public static Report run(Path dataRoot, DeviceCatalog devices, Optional<String> holdoutGpu, long seed) {
        return run(dataRoot, devices, holdoutGpu, seed, 0, 0);
    }

    /**
     * Runs the evaluation and, when {@code adaptKernels} or {@code adaptRuns} is positive, also the few-shot variant
     * of each leave-one-GPU-out fold ({@link Adapted}).
     *
     * @param adaptKernels kernels per op of the held-out GPU to profile and adapt to
     * @param adaptRuns    single-GPU whole-model runs of the held-out GPU to calibrate on
     * @throws IllegalArgumentException for a negative count
     */
    public static Report run(Path dataRoot, DeviceCatalog devices, Optional<String> holdoutGpu, long seed,
            int adaptKernels, int adaptRuns) {
        Preconditions.checkArgument(adaptKernels >= 0 && adaptRuns >= 0, "adapt counts must be >= 0: %s, %s",
                adaptKernels, adaptRuns);
        boolean adapting = adaptKernels > 0 || adaptRuns > 0;
        Data data = Data.read(dataRoot, devices);
        List<OpMeasurement> kernelRows = data.kernelRows();
        List<OpMeasurement> nodeRows = data.nodeRows();
        List<Run> runs = data.runs();
        Map<String, FxTrace> graphs = data.graphs();
        List<String> notes = new ArrayList<>();
        Path allreduce = dataRoot.resolve("deepbench/allreduce.csv");
        Optional<AllReduceModel> comm = Files.isRegularFile(allreduce)
                ? Optional.of(AllReduceModel.fit(AllReduceModel.readDeepBench(allreduce))) : Optional.empty();

        // Seen GPUs, held-out shapes: one fit.
        List<Cell> seen = new ArrayList<>();
        if (holdoutGpu.isEmpty() && !kernelRows.isEmpty()) {
            List<OpMeasurement> train = new ArrayList<>(nodeRows);
            List<OpMeasurement> test = new ArrayList<>();
            for (OpMeasurement m : kernelRows) {
                (heldOut(m.shapeKey(), seed) ? test : train).add(m);
            }
            DeviceLayerModel model = DeviceLayerModel.fit(train);
            seen.addAll(cells(model::predictMillis, test));
        }

        // Leave one GPU out.
        Set<String> gpus = new LinkedHashSet<>();
        kernelRows.forEach(m -> gpus.add(m.device().name()));
        runs.forEach(r -> gpus.add(devices.require(r.gpu).name()));
        if (holdoutGpu.isPresent()) {
            Device h = devices.require(holdoutGpu.get());
            if (!gpus.contains(h.name())) {
                throw InvalidInputException.of("no measurements of GPU '" + holdoutGpu.get() + "' to hold out");
            }
            gpus.retainAll(Set.of(h.name()));
        }
        List<Cell> logo = new ArrayList<>();
        List<Cell> roofline = new ArrayList<>();
        List<ModelCase> single = new ArrayList<>();
        List<ModelCase> parallel = new ArrayList<>();
        List<Cell> adaptedKernels = new ArrayList<>();
        List<Cell> kernelsBefore = new ArrayList<>();
        List<ModelCase> adaptedRuns = new ArrayList<>();
        List<ModelCase> runsBefore = new ArrayList<>();
        int fusion = 0;
        int untraced = 0;
        for (String gpu : gpus) {
            List<OpMeasurement> train = new ArrayList<>();
            List<OpMeasurement> test = new ArrayList<>();
            for (List<OpMeasurement> rows : List.of(kernelRows, nodeRows)) {
                for (OpMeasurement m : rows) {
                    if (m.device().name().equals(gpu)) {
                        if (rows == kernelRows) {
                            test.add(m);
                        }
                    } else if (!sameSilicon(m.device().name(), gpu)) {
                        train.add(m);
                    }
                }
            }
            DeviceLayerModel model = DeviceLayerModel.fit(train);
            List<Sample> calibration = samples(eagerSamples(runs, graphs, devices,
                    name -> !name.equals(gpu) && !sameSilicon(name, gpu)));
            model = model.calibrate(calibration);
            logo.addAll(cells(model::predictMillis, test));
            roofline.addAll(cells(rooflineBaseline(train), test));
            if (adapting) {
                adaptFold(gpu, model, test, calibration, runs, graphs, devices, adaptKernels, adaptRuns, seed,
                        adaptedKernels, kernelsBefore, adaptedRuns, runsBefore);
            }
            for (Run r : runs) {
                Device d = devices.require(r.gpu);
                if (!d.name().equals(gpu)) {
                    continue;
                }
                if (r.fusion) {
                    fusion++;
                    continue;
                }
                if (r.parallel.equals("none")) {
                    Optional<FxTrace> t = traceFor(graphs, r, r.batch);
                    if (t.isEmpty()) {
                        untraced++;
                        continue;
                    }
                    single.add(new ModelCase(d.name(), r.model, r.phase, r.seq, r.batch, r.parallel, r.ms,
                            model.predict(workload(t.get(), r, d, r.batch)).millis()));
                } else {
                    Optional<Double> p = predictParallel(model, comm, graphs, r, d);
                    if (p.isEmpty()) {
                        untraced++;
                        continue;
                    }
                    parallel.add(new ModelCase(d.name(), r.model, r.phase, r.seq, r.batch, r.parallel, r.ms, p.get()));
                }
            }
            LOG.info("GPU {} held out: {} training rows", gpu, train.size());
        }
        if (fusion > 0) {
            notes.add(fusion + " torch.compile (fusion) runs not scored: the model predicts eager execution");
        }
        if (untraced > 0) {
            notes.add(untraced + " runs not scored: no node trace of that model with a usable batch size");
        }
        if (comm.isEmpty()) {
            notes.add("no deepbench/allreduce.csv: parallel runs not scored");
        }
        Optional<Adapted> adapted = adapting ? Optional.of(new Adapted(adaptKernels, adaptRuns, adaptedKernels,
                kernelsBefore, adaptedRuns, runsBefore)) : Optional.empty();
        return new Report(seen, logo, roofline, single, parallel, adapted, notes);
    }

    /**
     * One fold's few-shot variant: adapt to some of the held-out GPU's kernels, calibrate with some of its runs
     * added, and score the rest before and after.
     */
    private static void adaptFold(String gpu, DeviceLayerModel model, List<OpMeasurement> kernels,
            List<Sample> calibration, List<Run> runs, Map<String, FxTrace> graphs, DeviceCatalog devices,
            int adaptKernels, int adaptRuns, long seed, List<Cell> kernelsAfter, List<Cell> kernelsBefore,
            List<ModelCase> runsAfter, List<ModelCase> runsBefore) {
        DeviceLayerModel adapted = model;
        if (adaptKernels > 0) {
            List<OpMeasurement> profiled = new ArrayList<>();
            List<OpMeasurement> rest = new ArrayList<>();
            profile(kernels, adaptKernels, seed, profiled, rest);
            adapted = adapted.adapt(profiled);
            kernelsAfter.addAll(cells(adapted::predictMillis, rest));
            kernelsBefore.addAll(cells(model::predictMillis, rest));
        }
        List<RunSample> own = eagerSamples(runs, graphs, devices, gpu::equals);
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < own.size(); i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(seed * 31 + gpu.hashCode()));
        Set<Integer> measured = new HashSet<>(order.subList(0, Math.min(adaptRuns, own.size() / 2)));
        if (!measured.isEmpty()) {
            List<Sample> more = new ArrayList<>(calibration);
            measured.forEach(i -> more.add(own.get(i).sample()));
            adapted = adapted.calibrate(more);
        }
        for (int i = 0; i < own.size(); i++) {
            if (!measured.contains(i)) {
                runsAfter.add(predicted(own.get(i), adapted));
                runsBefore.add(predicted(own.get(i), model));
            }
        }
    }

    private static ModelCase predicted(RunSample rs, DeviceLayerModel model) {
        Run r = rs.run();
        Workload w = rs.sample().workload();
        return new ModelCase(w.device().orElseThrow().name(), r.model, r.phase, r.seq, r.batch, r.parallel, r.ms,
                model.predict(w).millis());
    }

    /** A single-GPU eager run with a trace, as a sample (its workload on the run's device and batch). */
    private record RunSample(Run run, Sample sample) {
    }

    /** The single-GPU eager runs with a trace whose device passes {@code keep}, as samples. */
    private static List<RunSample> eagerSamples(List<Run> runs, Map<String, FxTrace> graphs, DeviceCatalog devices,
            Predicate<String> keep) {
        List<RunSample> out = new ArrayList<>();
        for (Run r : runs) {
            Device d = devices.require(r.gpu);
            if (keep.test(d.name()) && r.parallel.equals("none") && !r.fusion) {
                traceFor(graphs, r, r.batch).ifPresent(t -> out.add(new RunSample(r,
                        Sample.of(workload(t, r, d, r.batch), r.ms))));
            }
        }
        return out;
    }

    private static List<Sample> samples(List<RunSample> runs) {
        return runs.stream().map(RunSample::sample).toList();
    }

    /**
     * Splits a GPU's kernel rows into {@code perOp} profiled ones per op (at most half of an op's rows; a seeded
     * shuffle of the op's rows in their input order) and the rest.
     */
    private static void profile(List<OpMeasurement> rows, int perOp, long seed, List<OpMeasurement> profiled,
            List<OpMeasurement> rest) {
        Map<String, List<OpMeasurement>> byOp = new TreeMap<>();
        rows.forEach(m -> byOp.computeIfAbsent(m.op(), k -> new ArrayList<>()).add(m));
        byOp.forEach((op, v) -> {
            List<OpMeasurement> shuffled = new ArrayList<>(v);
            Collections.shuffle(shuffled, new Random(seed * 31 + op.hashCode()));
            int k = Math.min(perOp, shuffled.size() / 2);
            profiled.addAll(shuffled.subList(0, k));
            rest.addAll(shuffled.subList(k, shuffled.size()));
        });
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

    /**
     * Fits a device layer model on every measurement under {@code dataRoot} (the layout of {@link #run}: kernel
     * tables and model-trace nodes of every GPU) and calibrates it on every single-GPU eager whole-model run: the model
     * to save and ship, after {@link #run} has measured how well this recipe transfers to unseen GPUs.
     *
     * @throws IllegalArgumentException when there are no GPU measurements under {@code dataRoot}
     * @throws InvalidInputException naming the file for malformed data
     */
    public static DeviceLayerModel fitAll(Path dataRoot, DeviceCatalog devices) {
        Data data = Data.read(dataRoot, devices);
        List<OpMeasurement> rows = new ArrayList<>(data.kernelRows());
        rows.addAll(data.nodeRows());
        DeviceLayerModel model = DeviceLayerModel.fit(rows);
        List<Sample> calibration = samples(eagerSamples(data.runs(), data.graphs(), devices, name -> true));
        LOG.info("fitted on {} operator rows of {} devices, calibrated on {} whole-model runs", rows.size(),
                model.devices().size(), calibration.size());
        return model.calibrate(calibration);
    }

    /** The measurements under a data root: kernel rows, trace-node rows, whole-model runs and their graphs. */
    private record Data(List<OpMeasurement> kernelRows, List<OpMeasurement> nodeRows, List<Run> runs,
            Map<String, FxTrace> graphs) {

        static Data read(Path dataRoot, DeviceCatalog devices) {
            Path kernels = dataRoot.resolve("neusight/kernels");
            Path deepbench = dataRoot.resolve("deepbench");
            Path models = dataRoot.resolve("neusight/models");
            List<OpMeasurement> kernelRows = new ArrayList<>();
            if (Files.isDirectory(kernels)) {
                kernelRows.addAll(KernelTables.neusight(kernels, devices));
            }
            if (Files.isRegularFile(deepbench.resolve("gemm.csv"))
                    && Files.isRegularFile(deepbench.resolve("conv.csv"))) {
                kernelRows.addAll(KernelTables.deepbench(deepbench, devices));
            }
            List<Run> runs = Files.isRegularFile(models.resolve("e2e.csv")) ? readRuns(models.resolve("e2e.csv"),
                    devices) : List.of();
            // Node measurements of every trace (its own GPU), and one whole-model graph per (model, phase, seq,
            // batch).
            List<OpMeasurement> nodeRows = new ArrayList<>();
            Map<String, FxTrace> graphs = new HashMap<>();
            for (Run r : runs) {
                if (r.nodeCsv.isEmpty()) {
                    continue;
                }
                Path file = models.resolve(r.nodeCsv);
                Device d = devices.require(r.gpu);
                nodeRows.addAll(KernelTables.traceNodes(FxTraceReader.read(file, 1), d));
                graphs.computeIfAbsent(graphKey(r.model, r.phase, r.seq, r.batch), k -> FxTraceReader.read(file,
                        r.layers));
            }
            Preconditions.checkArgument(!kernelRows.isEmpty() || !nodeRows.isEmpty(),
                    "no GPU measurements under %s", dataRoot);
            return new Data(kernelRows, nodeRows, runs, graphs);
        }
    }

    /**
     * GPUs that DeepBench and NeuSight both measured under different names (and software): holding out one holds out
     * the other too, so a held-out GPU's silicon is never in training. DeepBench's P100 variant is not stated; its
     * V100 is the SXM2 board of the same chip as NeuSight's PCIe card.
     */
    private static final List<Set<String>> SAME_SILICON = List.of(
            Set.of(Device.key("T4"), Device.key("Tesla T4")),
            Set.of(Device.key("P100"), Device.key("Tesla P100-PCIE-16GB")),
            Set.of(Device.key("V100"), Device.key("Tesla V100-PCIE-32GB")));

    private static boolean sameSilicon(String a, String b) {
        String ka = Device.key(a);
        String kb = Device.key(b);
        return SAME_SILICON.stream().anyMatch(g -> g.contains(ka) && g.contains(kb));
    }

    private static boolean heldOut(String shapeKey, long seed) {
        long h = shapeKey.hashCode() * 0x9E3779B97F4A7C15L + seed;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        return Math.floorMod(h, 1000) < SEEN_HOLDOUT * 1000;
    }

    /** Predicts one operator's time on a device, forward or backward. */
    private interface OpPredictor {
        double predictMillis(LayerFeatures f, Device d, boolean backward);
    }

    /**
     * Roofline time (plus a 2 µs floor) times the median measured/roofline ratio of the training rows of the same
     * family and pass.
     */
    private static OpPredictor rooflineBaseline(List<OpMeasurement> train) {
        Map<String, List<Double>> ratios = new HashMap<>();
        for (OpMeasurement m : train) {
            ratios.computeIfAbsent(m.features().family() + "/" + m.backward(), k -> new ArrayList<>())
                    .add(m.millis() / (DeviceLayerModel.rooflineMillis(m.features(), m.device(), m.backward())
                            + LAUNCH_FLOOR_MS));
        }
        Map<String, Double> median = new HashMap<>();
        ratios.forEach((k, v) -> {
            v.sort(Double::compare);
            median.put(k, v.get(v.size() / 2));
        });
        return (f, d, bwd) -> median.getOrDefault(f.family() + "/" + bwd, 1.0)
                * (DeviceLayerModel.rooflineMillis(f, d, bwd) + LAUNCH_FLOOR_MS);
    }

    private static List<Cell> cells(OpPredictor model, List<OpMeasurement> test) {
        Map<String, List<double[]>> groups = new TreeMap<>();
        for (OpMeasurement m : test) {
            double p = model.predictMillis(m.features(), m.device(), m.backward());
            groups.computeIfAbsent(m.op() + "\u0000" + m.device().name(), k -> new ArrayList<>())
                    .add(new double[] {p, m.millis()});
        }
        List<Cell> out = new ArrayList<>();
        groups.forEach((k, v) -> {
            String[] parts = k.split("\u0000");
            ErrorMetrics e = ErrorMetrics.of(v.stream().mapToDouble(x -> x[0]).toArray(),
                    v.stream().mapToDouble(x -> x[1]).toArray());
            out.add(new Cell(parts[0], parts[1], e.n(), e.mre(), e.within10()));
        });
        return out;
    }

    private static String graphKey(String model, Phase phase, int seq, int batch) {
        return model + "/" + phase.label() + "/" + seq + "/" + batch;
    }

    /**
     * The trace for a run at a batch: the trace of exactly that (model, phase, seq, batch) if there is one, else the
     * first (by key) rescalable trace of the model at that sequence length, same phase first (shapes do not depend on
     * the phase).
     */
    private static Optional<FxTrace> traceFor(Map<String, FxTrace> graphs, Run r, int batch) {
        FxTrace exact = graphs.get(graphKey(r.model, r.phase, r.seq, batch));
        if (exact != null) {
            return Optional.of(exact);
        }
        Map<String, FxTrace> sorted = new TreeMap<>(graphs);
        for (Phase p : List.of(r.phase, r.phase == Phase.TRAIN ? Phase.INFER : Phase.TRAIN)) {
            for (Map.Entry<String, FxTrace> e : sorted.entrySet()) {
                if (e.getKey().startsWith(r.model + "/" + p.label() + "/" + r.seq + "/") && e.getValue().rescalable()) {
                    return Optional.of(e.getValue());
                }
            }
        }
        return Optional.empty();
    }

    private static Workload workload(FxTrace t, Run r, Device d, int batch) {
        return Workload.builder(t.graph()).batch(batch).phase(r.phase).device(d).tag("model", r.model).build();
    }

    private static Optional<Double> predictParallel(DeviceLayerModel model, Optional<AllReduceModel> comm,
            Map<String, FxTrace> graphs, Run r, Device d) {
        if (comm.isEmpty()) {
            return Optional.empty();
        }
        if (d.link().isEmpty()) {
            throw InvalidInputException.of("device " + d.name() + " has no link bandwidth (link_GBps) for its "
                    + r.parallel + " run");
        }
        double link = d.link().getAsDouble();
        int n = 4;
        Interconnect nvlink = new Interconnect(n, link, link);
        AllReduceModel ar = comm.get();
        switch (r.parallel) {
            case "dp4" -> {
                Optional<FxTrace> t = traceFor(graphs, r, r.batch / n);
                if (t.isEmpty() || r.batch % n != 0) {
                    return Optional.empty();
                }
                double[] fb = forwardBackward(model, workload(t.get(), r, d, r.batch / n), null, 1);
                double bytes = 4.0 * t.get().graph().parameterCount();
                double allReduce = ar.predictMillis(d.name(), nvlink, 1, n, bytes);
                double bucket = ar.predictMillis(d.name(), nvlink, 1, n, Math.min(bytes, BUCKET_BYTES));
                return Optional.of(fb[0] + fb[1] + Math.max(allReduce - fb[1], bucket));
            }
            case "tp4" -> {
                Optional<FxTrace> trace = traceFor(graphs, r, r.batch);
                if (trace.isEmpty()) {
                    return Optional.empty();
                }
                FxTrace t = trace.get();
                double[] fb = forwardBackward(model, workload(t, r, d, r.batch), t, n);
                double act = 4.0 * r.batch * r.seq * t.hiddenSize();
                int passes = r.phase == Phase.TRAIN ? 4 : 2;
                double c = t.blockCopies() * passes * ar.predictMillis(d.name(), nvlink, 1, n, act);
                return Optional.of(fb[0] + fb[1] + c);
            }
            case "pp4_1" -> {
                Optional<FxTrace> trace = traceFor(graphs, r, r.batch);
                if (trace.isEmpty()) {
                    return Optional.empty();
                }
                FxTrace t = trace.get();
                double[] fb = forwardBackward(model, workload(t, r, d, r.batch), null, 1);
                double act = 4.0 * r.batch * r.seq * t.hiddenSize();
                int handOffs = (n - 1) * (r.phase == Phase.TRAIN ? 2 : 1);
                return Optional.of(fb[0] + fb[1] + handOffs * act / (link * 1e6));
            }
            default -> throw InvalidInputException.of("unknown parallelism '" + r.parallel + "'");
        }
    }

    /**
     * Calibrated forward and backward time of a workload; with a trace and {@code split > 1}, the repeated block's
     * layers that do not produce the residual stream, and the epilogue's contractions, are split that many ways.
     */
    private static double[] forwardBackward(DeviceLayerModel model, Workload w, FxTrace trace, int split) {
        Device d = w.device().orElseThrow();
        List<LayerFeatures> fs = FeatureExtractor.of(w.graph()).extract(w.batch(), w.phase());
        double f = 0;
        double b = 0;
        for (LayerFeatures lf : fs) {
            double fwd = model.predictMillis(lf, d, false);
            double bwd = w.phase() == Phase.TRAIN ? model.predictMillis(lf, d, true) : 0;
            if (trace != null && split > 1) {
                String name = w.graph().layer(lf.layer()).name();
                String region = trace.region(name);
                boolean residual = lf.outputElements() > 0 && outputLastDim(w.graph(), lf.layer()) == trace
                        .hiddenSize() && lf.family() != OpFamily.DENSE;
                boolean sharded = (region.equals("layer") && !residual)
                        || (region.equals("epilogue") && lf.family() == OpFamily.DENSE);
                if (sharded) {
                    fwd = model.predictMillis(scaled(lf, split), d, false);
                    bwd = w.phase() == Phase.TRAIN ? model.predictMillis(scaled(lf, split), d, true) : 0;
                }
            }
            f += fwd;
            b += bwd;
        }
        double k = model.factor(w.phase(), w.device().orElseThrow());
        return new double[] {f * k, b * k};
    }

    private static long outputLastDim(ModelGraph g, int layer) {
        return g.layer(layer).outputs().stream().findFirst().flatMap(g::tensor).flatMap(t -> t.shape())
                .map(s -> s.rank() == 0 ? 0L : s.dims().get(s.rank() - 1).constant()).orElse(0L);
    }

    /** A layer's work divided {@code k} ways (its output width too, for contractions). */
    static LayerFeatures scaled(LayerFeatures f, int k) {
        return new LayerFeatures(f.layer(), f.family(), f.flopsFwd() / k, f.flopsBwd() / k, f.bytesRead() / k,
                f.bytesWritten() / k, f.bytesBwd() / k, f.params() / k, f.outputElements() / k, f.kernel(),
                f.stride(), f.groups(), f.inChannels(), f.family() == OpFamily.DENSE ? Math.max(1,
                        f.outChannels() / k) : f.outChannels());
    }

    private static List<Run> readRuns(Path file, DeviceCatalog devices) {
        CsvTable t = CsvTable.read(file, "gpu", "model", "phase", "seq_len", "batch", "parallel", "n_gpus", "fusion",
                "model_n_layer", "e2e_ms", "node_csv", "node_csv_status");
        List<Run> out = new ArrayList<>();
        for (int r = 0; r < t.size(); r++) {
            String status = t.get(r, "node_csv_status");
            String csv = status.equals("ok") ? t.get(r, "node_csv") : "";
            String parallel = t.get(r, "parallel");
            if (devices.find(t.get(r, "gpu")).isEmpty()) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "device '" + t.get(r, "gpu")
                        + "' is not in the device catalog");
            }
            if (!Set.of("none", "dp4", "tp4", "pp4_1").contains(parallel)) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "unknown parallel '" + parallel + "'");
            }
            Phase phase;
            try {
                phase = Phase.parse(t.get(r, "phase"));
            } catch (InvalidInputException e) {
                throw InvalidInputException.atLine(t.source(), t.line(r), e.detail());
            }
            out.add(new Run(t.get(r, "gpu"), t.get(r, "model"), phase, t.positiveInt(r, "seq_len"),
                    t.positiveInt(r, "batch"), parallel, Boolean.parseBoolean(t.get(r, "fusion")),
                    t.opt(r, "model_n_layer").isPresent() ? t.positiveInt(r, "model_n_layer") : 1,
                    t.positiveFinite(r, "e2e_ms"), csv));
        }
        return out;
    }
}
