package org.scaledl.eval;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.LayerCost;
import org.scaledl.model.cost.Quantiles;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates device predictors ({@link RuntimePredictor} with {@link LayerCost#device}) on real GPU measurements
 * laid out as in {@code shared/data} ({@link GpuData}):
 * {@code neusight/kernels/*.csv}, {@code neusight/models/e2e.csv} with {@code nodes/}, and {@code deepbench/}
 * ({@code gemm.csv}, {@code conv.csv}, {@code allreduce.csv}); any part that is missing is skipped (one that is
 * there but no file, or damaged, is refused: {@link GpuData#read}).
 *
 * <ul>
 *   <li><b>Seen GPU, held-out shapes</b>: a fraction of the operator shapes (all GPUs' rows of a shape together) is
 *       held out, the model is fitted on the rest and scored on them, per operator and GPU.</li>
 *   <li><b>Leave one GPU out</b>: for each GPU, the model is fitted on every other GPU's kernel rows and model-trace
 *       nodes (the same chip measured by the other dataset under another name is held out too), calibrated on the other GPUs' whole-model runs, and scored on that GPU's kernels and single-GPU
 *       model runs (eager; the {@code torch.compile} rows and models without a trace are counted, not scored).</li>
 *   <li><b>Parallel runs</b> (scored in their GPU's fold): the fold's predictor predicts them with their
 *       {@link org.scaledl.workload.Parallelism} (data, tensor and pipeline parallelism as its device stage models
 *       them); its all-reduce model is fitted on DeepBench's measurements; the link is the device's
 *       {@link Device#link()} (NVLink data-sheet figures per direction in the bundled catalog).</li>
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
    /** The size of matrix product {@link Report#largeProductSlope} looks at: a cluster job's, FLOPs. */
    public static final double LARGE_PRODUCT_FLOPS = 1e10;
    /** The fewest such kernels a slope is reported from. */
    public static final int MIN_SLOPE_ROWS = 30;


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
     * @param parallel    the run's parallelism
     * @param measuredMs  measured time
     * @param predictedMs predicted time
     * @param lowMs       the low end of the prediction's 90 % interval
     * @param highMs      its high end
     */
    public record ModelCase(String gpu, String model, Phase phase, int seqLen, int batch, Parallelism parallel,
            double measuredMs, double predictedMs, double lowMs, double highMs) {
        /** A case scored with a prediction. */
        static ModelCase of(String gpu, GpuData.Run r, Prediction p) {
            return new ModelCase(gpu, r.model(), r.phase(), r.seq(), r.batch(), r.parallelism(), r.millis(),
                    p.millis(), p.lowMillis(), p.highMillis());
        }

        /** |predicted − measured| / measured. */
        public double relativeError() {
            return Math.abs(predictedMs - measuredMs) / measuredMs;
        }

        /** Whether the measured time lies in the interval. */
        public boolean covered() {
            return measuredMs >= lowMs && measuredMs <= highMs;
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
     * @param largeProductSlope with each GPU held out, the least-squares slope of its matrix products' measured log
     *                       time over the peak's on the predicted one, products of at least {@value
     *                       #LARGE_PRODUCT_FLOPS} FLOPs (below 1: the predictions spread more than the
     *                       measurements; the shrinkage the cluster model applies to its contractions); empty with
     *                       fewer than {@value #MIN_SLOPE_ROWS} such kernels or no spread in their predictions
     */
    public record Report(List<Cell> seenGpu, List<Cell> leaveOneGpuOut, List<Cell> rooflineLeaveOneGpuOut,
            List<ModelCase> models, List<ModelCase> parallel, Optional<Adapted> adapted, List<String> notes,
            OptionalDouble largeProductSlope) {
        /** Copies. */
        public Report {
            seenGpu = List.copyOf(seenGpu);
            leaveOneGpuOut = List.copyOf(leaveOneGpuOut);
            rooflineLeaveOneGpuOut = List.copyOf(rooflineLeaveOneGpuOut);
            models = List.copyOf(models);
            parallel = List.copyOf(parallel);
            notes = List.copyOf(notes);
            java.util.Objects.requireNonNull(largeProductSlope, "largeProductSlope");
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

        /** The share of the single-GPU model runs whose measured time lies in the prediction's 90 % interval. */
        public double modelCoverage() {
            return models.stream().mapToDouble(c -> c.covered() ? 1 : 0).average().orElse(Double.NaN);
        }

        /** Mean relative error of the parallel runs of one parallelism (NaN when none). */
        public double parallelMre(Parallelism kind) {
            return parallel.stream().filter(c -> c.parallel().equals(kind)).mapToDouble(ModelCase::relativeError)
                    .average().orElse(Double.NaN);
        }

        /** The parallelisms of the parallel runs, in first-seen order. */
        public List<Parallelism> parallelisms() {
            return parallel.stream().map(ModelCase::parallel).distinct().toList();
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
     * @param kernelsPerOp  kernels profiled per op, as asked (each op gives at most half of its rows)
     * @param runs          whole-model runs measured per GPU, as asked (each GPU gives at most half of its runs)
     * @param kernelsProfiled the kernels profiled, every op and held-out GPU together (what was taken)
     * @param runsMeasured  the whole-model runs measured, every held-out GPU together (what was taken)
     * @param kernels       per (op, GPU) errors on the unprofiled kernels, adapted model
     * @param kernelsBefore the same rows, fold model before adapting
     * @param models        the unmeasured single-GPU runs, adapted model
     * @param modelsBefore  the same runs, fold model before adapting
     */
    public record Adapted(int kernelsPerOp, int runs, int kernelsProfiled, int runsMeasured, List<Cell> kernels,
            List<Cell> kernelsBefore, List<ModelCase> models, List<ModelCase> modelsBefore) {
        /** Copies. */
        public Adapted {
            kernels = List.copyOf(kernels);
            kernelsBefore = List.copyOf(kernelsBefore);
            models = List.copyOf(models);
            modelsBefore = List.copyOf(modelsBefore);
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
        Checks.argument(adaptKernels >= 0 && adaptRuns >= 0, "adapt counts must be >= 0: %s, %s",
                adaptKernels, adaptRuns);
        boolean adapting = adaptKernels > 0 || adaptRuns > 0;
        GpuData data = GpuData.read(dataRoot, devices);
        List<OpMeasurement> kernelRows = data.kernelRows();
        List<OpMeasurement> nodeRows = data.nodeRows();
        List<String> notes = new ArrayList<>();

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
        data.runs().forEach(r -> gpus.add(r.device().name()));
        if (holdoutGpu.isPresent()) {
            Device h = devices.require(holdoutGpu.get());
            if (!gpus.contains(h.name())) {
                throw InvalidInputException.of("no measurements of GPU '" + holdoutGpu.get() + "'"
                        + (h.name().equals(holdoutGpu.get()) ? "" : " (read as " + h.name() + ")")
                        + " to hold out; measured: " + String.join(", ", gpus));
            }
            gpus.retainAll(Set.of(h.name()));
        }
        List<Cell> logo = new ArrayList<>();
        List<Double> slopeX = new ArrayList<>();
        List<Double> slopeY = new ArrayList<>();
        List<Cell> roofline = new ArrayList<>();
        List<ModelCase> single = new ArrayList<>();
        List<ModelCase> parallel = new ArrayList<>();
        List<Cell> adaptedKernels = new ArrayList<>();
        int kernelsTaken = 0;
        int runsTaken = 0;
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
            List<Sample> calibration = data.samples(r -> singleEager(r) && !r.device().name().equals(gpu)
                    && !sameSilicon(r.device().name(), gpu));
            RuntimePredictor model = RuntimePredictor.builder().name("scaledl-device")
                    .layerCost(LayerCost.device(train)).collectives(data.collectives()).build().fit(calibration)
                    .allowingPartialGraphs();
            org.scaledl.model.cost.OperatorCost layers = model.operators().orElseThrow();
            logo.addAll(cells(layers::layerMillis, test));
            for (OpMeasurement m : test) {
                LayerFeatures f = m.features();
                double flops = m.backward() ? f.flopsBwd() : f.flopsFwd();
                if (f.family() == OpFamily.DENSE && flops >= LARGE_PRODUCT_FLOPS) {
                    double peakMs = 1e3 * flops / m.device().peakFlopsPerSecond(m.precision(), true);
                    double x = Math.log(layers.layerMillis(f, m.device(), m.precision(), m.backward()) / peakMs);
                    double y = Math.log(m.millis() / peakMs);
                    if (Double.isFinite(x) && Double.isFinite(y)) {
                        slopeX.add(x);
                        slopeY.add(y);
                    }
                }
            }
            roofline.addAll(cells(rooflineBaseline(train), test));
            if (adapting) {
                int[] taken = adaptFold(gpu, model, test, calibration, data, adaptKernels, adaptRuns, seed,
                        adaptedKernels, kernelsBefore, adaptedRuns, runsBefore);
                kernelsTaken += taken[0];
                runsTaken += taken[1];
            }
            for (GpuData.Run r : data.runs()) {
                if (!r.device().name().equals(gpu)) {
                    continue;
                }
                if (r.fusion()) {
                    fusion++;
                    continue;
                }
                Optional<Workload> w = data.workload(r);
                if (w.isEmpty() || r.parallelism().ranks() > 1 && data.collectives().isEmpty()) {
                    untraced += w.isEmpty() ? 1 : 0;
                    continue;
                }
                ModelCase c = ModelCase.of(gpu, r, model.predict(w.get()));
                (r.parallelism().ranks() == 1 ? single : parallel).add(c);
            }
            LOG.info("GPU {} held out: {} training rows", gpu, train.size());
        }
        if (fusion > 0) {
            notes.add(fusion + " torch.compile (fusion) runs not scored: the model predicts eager execution");
        }
        if (untraced > 0) {
            notes.add(untraced + " runs not scored: no node trace of that model with a usable batch size");
        }
        if (data.collectives().isEmpty()) {
            notes.add("no deepbench/allreduce.csv: parallel runs not scored");
        }
        Optional<Adapted> adapted = adapting ? Optional.of(new Adapted(adaptKernels, adaptRuns, kernelsTaken,
                runsTaken, adaptedKernels, kernelsBefore, adaptedRuns, runsBefore)) : Optional.empty();
        double fitted = slopeX.size() < MIN_SLOPE_ROWS ? Double.NaN
                : ErrorMetrics.slope(slopeX.stream().mapToDouble(Double::doubleValue).toArray(),
                        slopeY.stream().mapToDouble(Double::doubleValue).toArray());
        OptionalDouble slope = Double.isFinite(fitted) ? OptionalDouble.of(fitted) : OptionalDouble.empty();
        return new Report(seen, logo, roofline, single, parallel, adapted, notes, slope);
    }

    private static boolean singleEager(GpuData.Run r) {
        return r.parallelism().ranks() == 1 && !r.fusion();
    }

    /**
     * One fold's few-shot variant: adapt to some of the held-out GPU's kernels, calibrate with some of its runs
     * added, and score the rest before and after; the kernels profiled and the runs measured.
     */
    private static int[] adaptFold(String gpu, RuntimePredictor model, List<OpMeasurement> kernels,
            List<Sample> calibration, GpuData data, int adaptKernels, int adaptRuns, long seed,
            List<Cell> kernelsAfter, List<Cell> kernelsBefore, List<ModelCase> runsAfter, List<ModelCase> runsBefore) {
        RuntimePredictor adapted = model;
        int profiledCount = 0;
        if (adaptKernels > 0) {
            List<OpMeasurement> profiled = new ArrayList<>();
            List<OpMeasurement> rest = new ArrayList<>();
            profile(kernels, adaptKernels, seed, profiled, rest);
            profiledCount = profiled.size();
            adapted = adapted.adapt(profiled);
            org.scaledl.model.cost.OperatorCost after = adapted.operators().orElseThrow();
            org.scaledl.model.cost.OperatorCost before = model.operators().orElseThrow();
            kernelsAfter.addAll(cells(after::layerMillis, rest));
            kernelsBefore.addAll(cells(before::layerMillis, rest));
        }
        List<GpuData.Run> ownRuns = data.runs().stream().filter(r -> singleEager(r) && r.device().name().equals(gpu)
                && data.workload(r).isPresent()).toList();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < ownRuns.size(); i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(seed * 31 + gpu.hashCode()));
        Set<Integer> measured = new HashSet<>(order.subList(0, Math.min(adaptRuns, ownRuns.size() / 2)));
        if (!measured.isEmpty()) {
            List<Sample> more = new ArrayList<>(calibration);
            measured.forEach(i -> more.add(Sample.of(data.workload(ownRuns.get(i)).orElseThrow(),
                    ownRuns.get(i).millis())));
            adapted = adapted.calibrate(more);
        }
        for (int i = 0; i < ownRuns.size(); i++) {
            if (!measured.contains(i)) {
                GpuData.Run r = ownRuns.get(i);
                Workload w = data.workload(r).orElseThrow();
                runsAfter.add(ModelCase.of(gpu, r, adapted.predict(w)));
                runsBefore.add(ModelCase.of(gpu, r, model.predict(w)));
            }
        }
        return new int[] {profiledCount, measured.size()};
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
        double predictMillis(LayerFeatures f, Device d, org.scaledl.workload.Precision precision, boolean backward);
    }

    /**
     * Roofline time (plus a 2 µs floor) times the median measured/roofline ratio of the training rows of the same
     * family and pass.
     */
    private static OpPredictor rooflineBaseline(List<OpMeasurement> train) {
        Map<String, List<Double>> ratios = new HashMap<>();
        for (OpMeasurement m : train) {
            ratios.computeIfAbsent(m.features().family() + "/" + m.backward() + "/" + m.device().matrixUnits(
                    m.precision()), k -> new ArrayList<>()).add(m.millis() / (DeviceLayerModel.rooflineMillis(
                            m.features(), m.device(), m.precision(), m.backward()) + LAUNCH_FLOOR_MS));
        }
        Map<String, Double> median = new HashMap<>();
        ratios.forEach((k, v) -> median.put(k, Quantiles.median(v.stream().mapToDouble(Double::doubleValue)
                .toArray())));
        return (f, d, p, bwd) -> median.getOrDefault(f.family() + "/" + bwd + "/" + d.matrixUnits(p), 1.0)
                * (DeviceLayerModel.rooflineMillis(f, d, p, bwd) + LAUNCH_FLOOR_MS);
    }

    private static List<Cell> cells(OpPredictor model, List<OpMeasurement> test) {
        Map<String, List<double[]>> groups = new TreeMap<>();
        for (OpMeasurement m : test) {
            double p = model.predictMillis(m.features(), m.device(), m.precision(), m.backward());
            String op = m.op() + (m.precision() == org.scaledl.workload.Precision.FP32 ? "" : "/" + m.precision()
                    .label());
            groups.computeIfAbsent(op + "\u0000" + m.device().name(), k -> new ArrayList<>())
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

}
