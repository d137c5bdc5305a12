package org.scaledl.model.device;

import org.scaledl.model.file.Fields;
import org.scaledl.model.cost.Quantiles;
import org.scaledl.model.cost.Roofline;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.WeakHashMap;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.TensorCoreAlignment;
import org.scaledl.workload.Workload;

/**
 * The layer-wise model with hardware as data: every layer's time on a {@link Device} is its roofline time scaled by
 * a learned efficiency,
 *
 * <pre>
 *   t = (max(FLOPs / peak · ⌈w⌉ / w, bytes / bandwidth) + 2 µs) · exp(g_family(x))
 * </pre>
 *
 * with {@code w} the waves of thread blocks over the compute units (so a partly filled last wave costs a whole one)
 * and, for a product whose rows a Hopper or Blackwell GPU's tensor memory accelerator cannot copy, the compute time
 * times the slowdown measured for it ({@link TensorCoreAlignment#slowdown(LayerFeatures, Precision, Device)}),
 * where {@code g} is a per-family (and per pass: forward, backward) gradient-boosted tree ensemble over
 * device-relative features {@code x}: log compute time, log memory time, their ratio, log output elements, log
 * waves and the tail-wave efficiency, log bytes over L2, log reduction length (the contraction's K, or the row a norm
 * or softmax runs over: seen-GPU softmax MRE 17.5 → 4.1 %), output width and output rows, kernel window and stride
 * (the last three: held-out-GPU kernel MRE 27.1 → 26.1 %, seen-GPU 22.8 → 21.7 %), and for contractions the
 * tiles a GEMM library would launch for the problem (sides the power of two at or above each output side, within
 * 16..128): the share of the tiles' work that is useful and the fill of their last wave over the compute units
 * (held-out-GPU kernel MRE 26.1 → 24.8 %, convolutions 25.9 → 23.6 %, DeepBench GEMM 36.3 → 33.8 %; whole models
 * 14.2 → 14.6 %; files with the first 13 features still load and predict as before). The compute/memory time
 * ratio saturates at 4× on the compute-bound side ({@link #RATIO_SATURATION}: a compute-bound kernel is not sped up
 * by memory bandwidth): the same GPT-3 job on the A100 40 GB and 80 GB descriptions 7 → 4 % apart, published cluster
 * runs with each family held out 18.3 → 14.2 % MRE (bias −7.7 → −3.1 %), ≤ 64 GPUs → larger 17.8 → 10.7 %
 * (−15.0 → −6.3 %), 4-GPU DP/TP/PP runs 6.7/10.6/5.2 → 4.1/4.9/2.6 %, at a cost on single-GPU whole models with the
 * GPU held out (14.5 → 16.0 %) and on kernels (seen GPUs 20.7 → 21.6 %, held out 23.4 → 23.8 %). Every feature is a
 * ratio of work to a device figure or a shape, and none describes the device alone, so a device that was never
 * measured is predicted from its description. (Features that identify a device, such as its ridge point, compute
 * units or clock, let the trees memorise per-GPU efficiencies: with the ridge point, leave-one-GPU-out kernel MRE
 * was 29.4 % and whole-model MRE 20.6 %, without it 27.3 % and 16.3 %, in the evaluation of
 * {@link org.scaledl.eval.GpuEvaluation} before benchmark rows were preferred per family. Board power over peak,
 * which tracks how far power-limited parts such as the L4 and T4 fall below their peak, did the same: seen-GPU 21.7 →
 * 18.5 %, held-out 26.1 → 25.7 %, and 4-GPU data-parallel runs 2.6 → 7.7 %.)
 * Families with fewer than {@value #MIN_FAMILY_ROWS} measurements for a pass share one pooled ensemble that also sees
 * the family. Where a family has that many {@linkplain OpMeasurement.Origin#BENCHMARK benchmark} rows, they alone fit
 * its regressor: nodes of profiled models are many small operators, each timed with its launch floor, and mixing them
 * in raised the held-out-GPU error of element-wise kernels from 8.6 % to 28.6 %; they still fit the families and
 * passes benchmarks do not cover, through the pooled ensemble (a family gets its own ensemble from 100 rows; at 200,
 * whole-model held-out MRE was 14.8 % instead of 14.3 %). Shape arithmetic costs nothing.
 *
 * <p>A whole workload is the sum of its layers (forward, plus backward in training) times a per-phase calibration
 * factor fitted on whole-model measurements ({@link #calibrate}), which absorbs what isolated measurements miss
 * (launch gaps, caching between neighbours). The workload must carry a device. Immutable and thread-safe; fits
 * are deterministic (no sampling in the trees).
 *
 * <p>This is the layer cost stage of a device predictor ({@code LayerCost.device}), which saves it
 * with the predictor; it is public for scoring single operators ({@link #predictMillis}) and for its
 * documentation of the method.
 *
 * <pre>{@code
 * RuntimePredictor gpu = RuntimePredictor.builder().layerCost(LayerCost.device(kernelRows)).build().fit(modelRuns);
 * DeviceLayerModel layers = gpu.deviceLayerModel().orElseThrow();
 * double ms = layers.predictMillis(features, h100, false);
 * }</pre>
 */
public final class DeviceLayerModel implements org.scaledl.model.exec.DeviceLayerCost {
    /** The {@code format} of version-1 device model files (read by {@code RuntimePredictor.load}). */
    public static final String FORMAT = "scaledl-device-model";
    static final int MIN_FAMILY_ROWS = 100;
    private static final com.fasterxml.jackson.databind.node.JsonNodeFactory JSON =
            com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
    private static final double FLOOR_S = 2e-6;
    private static final int FEATURES = 16;
    /** Features per layer of the files written before precisions (their trees read the first 15). */
    private static final int V2_FEATURES = 15;
    /** Features per layer of the files written before the adaptive-tile features (their trees read the first 13). */
    private static final int V1_FEATURES = 13;
    private static final BoostedTrees.Config CONFIG = new BoostedTrees.Config(200, 6, 0.1, 10, 64, 1.0);
    /**
     * Where the roofline saturates, log10 of compute time over memory time: a kernel whose compute time is more than
     * 4× its memory time is described as one at 4×, since a faster memory cannot speed up a compute-bound kernel.
     * Without it the trees credited the A100 80 GB's bandwidth on large GEMMs (the same GPT-3 job 7 % faster than on
     * the 40 GB part). Saturating the memory-bound side as well (at a quarter) was tried and fitted worse: ResNet-50 on
     * 8 A100s 28 % too fast, held-out cluster families 15.2 % instead of 14.2 %. Files written before it read none
     * ({@link Double#POSITIVE_INFINITY}).
     */
    static final double RATIO_SATURATION = Math.log10(4);

    private final Map<OpFamily, BoostedTrees> forward;
    private final Map<OpFamily, BoostedTrees> backward;
    private final BoostedTrees pooledForward;
    private final BoostedTrees pooledBackward;
    private final double trainFactor;
    /** {@link #RATIO_SATURATION} for models fitted with it, infinity for older files. */
    private final double saturation;
    /** The fastest rates the features describe a kernel at ({@link SpeedCap}); none for older files. */
    private final SpeedCap speedCap;
    private final double inferFactor;
    private final List<String> devices;
    /** Per device name: the multiplicative corrections fitted by {@link #adapt} and {@link #calibrate}. */
    private final Map<String, Corrections> corrections;
    /** The code each family has as a tree feature, by ordinal (the order of the file that fitted the trees). */
    private final double[] familyCode;
    /**
     * The highest fraction of the peak a contraction of the kernel data sustained: on matrix units (tensor cores),
     * and on the FP32 units (99th percentile of the benchmark rows: a ceiling, not an outlier).
     */
    private final double[] ceilings;
    /**
     * Uncalibrated layer sums per graph (held weakly) and (batch, phase, device): the trees are the cost of a
     * prediction, and a scheduler asks about the same workloads again and again. Shared by calibrated copies.
     */
    private final org.scaledl.graph.GraphCache<SumKey, Double> sums;

    private record SumKey(long batch, Phase phase, Device device, Precision precision, MemoryFormat format) {
    }

    /** Cached (batch, phase, device) entries per graph before that graph's entries are cleared. */
    private static final int MAX_CACHED_SUMS = 1024;

    /**
     * Which layers a kernel correction applies to: one operator family in one pass, in one precision or in every one.
     *
     * @param family    the family
     * @param backward  the backward pass (else forward)
     * @param precision the precision it was measured in; empty: every precision (files written before corrections
     *                  were kept per precision)
     */
    public record FamilyPass(OpFamily family, boolean backward, Optional<Precision> precision) {
        /** Copies. */
        public FamilyPass {
            Objects.requireNonNull(family, "family");
            Objects.requireNonNull(precision, "precision");
        }

        /** A correction of every precision. */
        public FamilyPass(OpFamily family, boolean backward) {
            this(family, backward, Optional.empty());
        }

        /** The file form, {@code CONV/fwd} or {@code CONV/fwd/bf16}. */
        String key() {
            return family.name() + (backward ? "/bwd" : "/fwd") + precision.map(p -> "/" + p.label()).orElse("");
        }
    }

    /**
     * One device's multiplicative corrections.
     *
     * @param layers per family, pass and precision, from profiled kernels ({@link #adapt})
     * @param whole  per phase, from whole-model runs ({@link #calibrate}), on top of the shared factor
     */
    public record Corrections(Map<FamilyPass, Double> layers, Map<Phase, Double> whole) {
        /** Copies. */
        public Corrections {
            layers = Map.copyOf(layers);
            whole = Map.copyOf(whole);
        }

        static final Corrections NONE = new Corrections(Map.of(), Map.of());
    }

    private DeviceLayerModel(Map<OpFamily, BoostedTrees> forward, Map<OpFamily, BoostedTrees> backward,
            BoostedTrees pooledForward, BoostedTrees pooledBackward, double trainFactor, double inferFactor,
            List<String> devices, Map<String, Corrections> corrections, double[] familyCode, double[] ceilings,
            double saturation, SpeedCap speedCap) {
        this(forward, backward, pooledForward, pooledBackward, trainFactor, inferFactor, devices, corrections,
                familyCode, ceilings, saturation, speedCap, new org.scaledl.graph.GraphCache<>(MAX_CACHED_SUMS));
    }

    private DeviceLayerModel(Map<OpFamily, BoostedTrees> forward, Map<OpFamily, BoostedTrees> backward,
            BoostedTrees pooledForward, BoostedTrees pooledBackward, double trainFactor, double inferFactor,
            List<String> devices, Map<String, Corrections> corrections, double[] familyCode, double[] ceilings,
            double saturation, SpeedCap speedCap, org.scaledl.graph.GraphCache<SumKey, Double> sums) {
        this.sums = sums;
        this.saturation = saturation;
        this.speedCap = java.util.Objects.requireNonNull(speedCap, "speedCap");
        this.ceilings = ceilings.clone();
        this.familyCode = familyCode;
        this.corrections = Collections.unmodifiableMap(new TreeMap<>(corrections));
        this.forward = forward;
        this.backward = backward;
        this.pooledForward = pooledForward;
        this.pooledBackward = pooledBackward;
        this.trainFactor = trainFactor;
        this.inferFactor = inferFactor;
        this.devices = List.copyOf(devices);
    }

    /**
     * Fits the per-family regressors (calibration factors start at 1).
     *
     * @throws IllegalArgumentException without forward measurements
     */
    public static DeviceLayerModel fit(List<OpMeasurement> measurements) {
        List<OpMeasurement> fwd = new ArrayList<>();
        List<OpMeasurement> bwd = new ArrayList<>();
        for (OpMeasurement m : measurements) {
            if (m.features().family() != OpFamily.SHAPE) {
                (m.backward() ? bwd : fwd).add(m);
            }
        }
        Checks.argument(!fwd.isEmpty(), "need forward operator measurements to fit");
        Map<OpFamily, BoostedTrees> f = new EnumMap<>(OpFamily.class);
        Map<OpFamily, BoostedTrees> b = new EnumMap<>(OpFamily.class);
        double[] codes = ordinalCodes();
        BoostedTrees pf = fitPass(fwd, f, codes, RATIO_SATURATION);
        BoostedTrees pb = bwd.isEmpty() ? pf : fitPass(bwd, b, codes, RATIO_SATURATION);
        TreeSet<String> names = new TreeSet<>();
        measurements.forEach(m -> names.add(m.device().name()));
        return new DeviceLayerModel(f, b, pf, pb, 1, 1, List.copyOf(names), Map.of(), codes, ceilings(fwd),
                RATIO_SATURATION, SpeedCap.of(measurements, List.of()));
    }

    /**
     * The fastest rates the model's features describe a kernel at: for each width of the matrix units' operands
     * ({@link #widthOf}: {@code fp32}, {@code tf32}, {@code 16-bit}, {@code 8-bit}, {@code 4-bit}, the classes the
     * execution model's contraction coefficients are fitted by), the largest peak of the devices whose kernels or
     * runs the model was fitted on at that width, and their largest vector peak and memory bandwidth. A
     * kernel's compute and memory times at the peak are among the trees' features, so on a faster device the same
     * large product takes a time the trees only saw for small ones, and they gave it a small one's efficiency (Llama 3
     * 70B's up-projection in BF16 on a Rubin description, 3.5 times a GB200's 16-bit peak: 1.27 times the GB200's speed
     * where the peak is 3.5 times). Capped, the kernel is described as on the fastest fitted device of its precision
     * and sustains that device's fraction of its own roofline, which scales with the new device's figures: the
     * efficiency learned (trees and execution coefficients together) is not extrapolated past the speeds it was fitted
     * at. Every fitted kernel and run lies within the cap, so a refit predicts them as before; recalibrating a fitted
     * model on a faster GPU's runs keeps it (the runs learn on top of the description the model was fitted with).
     * Files written before it have none ({@link #NONE}).
     *
     * @param matrixFlops    per width of the precision the matrix units run, the largest peak, FLOP/s (a width of
     *                       matrix units not in it, TF32 where no kernel or run was TF32, takes the 16-bit cap)
     * @param vectorFlops    vector (FP32 unit) peak, FLOP/s
     * @param bytesPerSecond memory bandwidth, bytes/s
     */
    public record SpeedCap(Map<String, Double> matrixFlops, double vectorFlops, double bytesPerSecond) {
        /** No cap (the files written before it). */
        public static final SpeedCap NONE = new SpeedCap(Map.of(), Double.POSITIVE_INFINITY,
                Double.POSITIVE_INFINITY);

        /** Validates and copies (sorted by column). */
        public SpeedCap {
            matrixFlops = Collections.unmodifiableMap(new TreeMap<>(matrixFlops));
            Checks.argument(vectorFlops > 0 && bytesPerSecond > 0
                    && matrixFlops.values().stream().allMatch(x -> x > 0), "speed caps must be positive");
        }

        /** Whether this is no cap at all ({@link #NONE}, what an older file reads). */
        public boolean isNone() {
            return matrixFlops.isEmpty() && Double.isInfinite(vectorFlops) && Double.isInfinite(bytesPerSecond);
        }

        /** The matrix peak a precision's kernels are described at on a device. */
        double matrix(Device d, Precision p) {
            double peak = d.peakFlopsPerSecond(p, true);
            String width = widthOn(d, p);
            Double cap = matrixFlops.get(width);
            if (cap == null && !width.equals(widthOf(Precision.FP32))) {
                // a width of the matrix units the model was not fitted at is no faster than its 16-bit work
                cap = matrixFlops.get(widthOf(Precision.BF16));
            }
            return cap == null ? peak : Math.min(peak, cap);
        }

        /**
         * The fastest rates of the kernels' devices (at each kernel's precision) and the runs' devices (at the
         * precision each runs in).
         */
        static SpeedCap of(List<OpMeasurement> kernels, List<Sample> runs) {
            Map<String, Double> matrix = new TreeMap<>();
            double[] max = new double[2];
            for (OpMeasurement m : kernels) {
                // a kernel tells the speeds of its own units: a product the matrix units', another the vector units'
                boolean mx = DeviceLayerModel.matrix(m.features().family());
                seen(matrix, max, m.device(), m.precision(), mx, !mx);
            }
            for (Sample x : runs) {
                x.workload().device().ifPresent(d -> seen(matrix, max, d, x.workload().precision(), true, true));
            }
            return max[0] > 0 && max[1] > 0 && !matrix.isEmpty() ? new SpeedCap(matrix, max[0], max[1]) : NONE;
        }

        private static void seen(Map<String, Double> matrix, double[] max, Device d, Precision p, boolean mx,
                boolean vector) {
            if (mx) {
                matrix.merge(widthOn(d, p), d.peakFlopsPerSecond(p, true), Math::max);
            }
            if (vector) {
                max[0] = Math.max(max[0], d.peakFlopsPerSecond(p, false));
            }
            max[1] = Math.max(max[1], d.bytesPerSecond());
        }

        /**
         * The width of a precision's matrix operands, what its kernels are capped by: FP16 and BF16 run on the same
         * units at the same peak, so do per-tensor, blockwise and MX-scaled FP8.
         */
        static String widthOf(Precision p) {
            return switch (p) {
                case FP16, BF16 -> "16-bit";
                case FP8, FP8_BLOCK, MXFP8 -> "8-bit";
                case NVFP4 -> "4-bit";
                default -> p.label();
            };
        }

        /** The width of the matrix units a precision's work runs on on a device (FP32 where it has none). */
        private static String widthOn(Device d, Precision p) {
            return widthOf(d.runs(p).orElse(Precision.FP32));
        }

        /** The larger rate of each (a width in either). */
        SpeedCap max(SpeedCap o) {
            Map<String, Double> m = new TreeMap<>(matrixFlops);
            o.matrixFlops.forEach((k, v) -> m.merge(k, v, Math::max));
            return new SpeedCap(m, Math.max(vectorFlops, o.vectorFlops), Math.max(bytesPerSecond, o.bytesPerSecond));
        }

        /** As the model file keeps it. */
        void write(ObjectNode node) {
            ObjectNode m = node.putObject("matrix_flops_per_s");
            matrixFlops.forEach(m::put);
            node.put("vector_flops_per_s", vectorFlops).put("bytes_per_s", bytesPerSecond);
        }

        /** As {@link #write} kept it. */
        static SpeedCap read(JsonNode node) {
            if (!node.isObject()) {
                throw InvalidInputException.of("speed_cap must be an object (matrix_flops_per_s, vector_flops_per_s, "
                        + "bytes_per_s)");
            }
            Map<String, Double> m = new TreeMap<>();
            JsonNode mx = node.path("matrix_flops_per_s");
            if (!mx.isObject()) {
                throw InvalidInputException.of("speed_cap.matrix_flops_per_s must be an object of peaks by width");
            }
            java.util.Set<String> widths = new java.util.TreeSet<>();
            for (Precision p : Precision.values()) {
                widths.add(widthOf(p));
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = mx.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!widths.contains(e.getKey())) {
                    throw InvalidInputException.of("speed_cap.matrix_flops_per_s: '" + e.getKey() + "' is not a "
                            + "width (" + String.join(", ", widths) + ")");
                }
                m.put(e.getKey(), Fields.inRange(e.getValue(), "speed_cap.matrix_flops_per_s." + e.getKey(), 1e9,
                        1e20));
            }
            return new SpeedCap(m, Fields.inRange(node.get("vector_flops_per_s"), "speed_cap.vector_flops_per_s",
                    1e9, 1e20), Fields.inRange(node.get("bytes_per_s"), "speed_cap.bytes_per_s", 1e9, 1e16));
        }
    }

    /** The fastest rates its features describe a kernel at ({@link SpeedCap}). */
    public SpeedCap speedCap() {
        return speedCap;
    }

    /**
     * A copy whose {@link SpeedCap} also covers these runs' devices (a model's runs, fitted after its kernels: the
     * coefficients they set were learned at those rates; a recalibration of a fitted execution model keeps its cap,
     * {@link DeviceStage#calibrate}); a model without a cap keeps none.
     */
    public DeviceLayerModel coveringRuns(List<Sample> runs) {
        if (speedCap.isNone()) {
            return this;
        }
        SpeedCap ran = SpeedCap.of(List.of(), runs);
        SpeedCap cap = ran.isNone() ? speedCap : speedCap.max(ran);
        return cap.equals(speedCap) ? this : new DeviceLayerModel(forward, backward, pooledForward, pooledBackward,
                trainFactor, inferFactor, devices, corrections, familyCode, ceilings, saturation, cap);
    }

    /** Ceilings of files written before they were kept: tensor cores 0.9, FP32 units 0.95. */
    private static final double[] DEFAULT_CEILINGS = {0.9, 0.95};

    /**
     * The 99th percentile of the fraction of the peak the forward contraction benchmarks sustained, on matrix units
     * and on FP32 units (the defaults where a kind has fewer than 20 rows).
     */
    private static double[] ceilings(List<OpMeasurement> fwd) {
        List<Double> units = new ArrayList<>();
        List<Double> simt = new ArrayList<>();
        for (OpMeasurement m : fwd) {
            if (m.origin() != OpMeasurement.Origin.BENCHMARK || m.features().family() != OpFamily.DENSE
                    || m.features().flopsFwd() <= 0) {
                continue;
            }
            double eff = m.features().flopsFwd() / (m.millis() / 1e3) / m.device().peakFlopsPerSecond(m.precision(),
                    true);
            (m.device().matrixUnits(m.precision()) ? units : simt).add(eff);
        }
        double[] out = DEFAULT_CEILINGS.clone();
        List<List<Double>> kinds = List.of(units, simt);
        for (int k = 0; k < 2; k++) {
            if (kinds.get(k).size() >= 20) {
                double[] v = kinds.get(k).stream().mapToDouble(Double::doubleValue).sorted().toArray();
                out[k] = Quantiles.of(v, 0.99);
            }
        }
        return out;
    }

    @Override
    public double sustainedPeakFraction(Device device, Precision precision) {
        return device.matrixUnits(precision) ? ceilings[0] : ceilings[1];
    }

    /** Families coded by their ordinal, as every model fitted by this library does. */
    private static double[] ordinalCodes() {
        double[] c = new double[OpFamily.values().length];
        for (OpFamily f : OpFamily.values()) {
            c[f.ordinal()] = f.ordinal();
        }
        return c;
    }

    private static BoostedTrees fitPass(List<OpMeasurement> rows, Map<OpFamily, BoostedTrees> out, double[] codes,
            double saturation) {
        Map<OpFamily, List<OpMeasurement>> byFamily = new EnumMap<>(OpFamily.class);
        for (OpMeasurement m : rows) {
            byFamily.computeIfAbsent(regressorFamily(m.features().family(), m.backward()), k -> new ArrayList<>())
                    .add(m);
        }
        for (Map.Entry<OpFamily, List<OpMeasurement>> e : byFamily.entrySet()) {
            List<OpMeasurement> v = e.getValue();
            List<OpMeasurement> bench = v.stream().filter(m -> m.origin() == OpMeasurement.Origin.BENCHMARK)
                    .toList();
            if (bench.size() >= MIN_FAMILY_ROWS) {
                v = bench;
            }
            if (v.size() >= MIN_FAMILY_ROWS) {
                out.put(e.getKey(), fitRows(v, codes, saturation));
            }
        }
        return fitRows(rows, codes, saturation);
    }

    private static BoostedTrees fitRows(List<OpMeasurement> rows, double[] codes, double saturation) {
        double[][] x = new double[rows.size()][];
        double[] y = new double[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            OpMeasurement m = rows.get(i);
            x[i] = features(m.features(), m.device(), m.precision(), m.backward(), codes, saturation);
            y[i] = Math.log(m.millis() / 1e3 / roofSeconds(m.features(), m.device(), m.precision(), m.backward()));
        }
        return BoostedTrees.fit(x, y, CONFIG);
    }

    /**
     * Returns a copy whose per-phase factors make the median ratio of measured to predicted whole-workload time 1 on
     * the given samples (phases without samples keep their factor), and that gives each device with samples its own
     * factor on top, {@code exp(s · median log(measured / predicted))} with {@code s = n / (n + 2)} (replacing an
     * earlier one; a phase without samples on that device uses the other phase's): devices never measured whole get
     * the shared factor, a device measured on a few whole runs gets what they say about it. (With one run of the
     * held-out GPU, leave-one-GPU-out model MRE on its other runs went 13.8 → 13.4 %; undamped, 20.1 %: one run's
     * error is mostly that model's, not the GPU's.) Every sample's workload needs a device.
     */
    public DeviceLayerModel calibrate(List<Sample> samples) {
        double[] factor = {trainFactor, inferFactor};
        Map<String, Map<Phase, Double>> whole = new TreeMap<>();
        corrections.forEach((d, c) -> {
            Map<Phase, Double> m = new java.util.EnumMap<>(Phase.class);
            m.putAll(c.whole());
            whole.put(d, m);
        });
        Map<Phase, Map<String, List<Double>>> ratios = logRatios(samples);
        for (Phase p : Phase.values()) {
            Map<String, List<Double>> byDevice = ratios.get(p);
            if (byDevice == null) {
                continue;
            }
            double shared = medianOf(byDevice, null);
            factor[p.ordinal()] = Math.exp(shared);
            byDevice.forEach((device, v) -> whole.computeIfAbsent(device, k -> new java.util.EnumMap<>(Phase.class))
                    .put(p, dampedMedianFactor(v.stream().map(x -> x - shared).toList())));
        }
        Map<String, Corrections> out = new TreeMap<>();
        corrections.forEach((d, c) -> out.put(d, new Corrections(c.layers(), Map.of())));
        whole.forEach((d, w) -> out.merge(d, new Corrections(Map.of(), w),
                (a, b) -> new Corrections(a.layers(), b.whole())));
        return new DeviceLayerModel(forward, backward, pooledForward, pooledBackward, factor[0], factor[1], devices,
                out, familyCode, ceilings, saturation, speedCap, sums);
    }

    /** Per phase and device name: {@code log(measured / layer sum)} of each sample (phases without samples absent). */
    private Map<Phase, Map<String, List<Double>>> logRatios(List<Sample> samples) {
        Map<Phase, Map<String, List<Double>>> out = new EnumMap<>(Phase.class);
        for (Sample s : samples) {
            double ratio = s.millis() / layerSum(s.workload());
            if (!(ratio > 0) || !Double.isFinite(ratio)) {
                // never a NaN factor in a saved model: name the run instead
                throw InvalidInputException.of(s.workload().tag("source").map(x -> x + ": ").orElse("")
                        + "cannot calibrate on " + s.workload() + ": its layers have no finite predicted time on "
                        + deviceOf(s.workload()).name() + " (a device model calibrates on runs of GPUs in its "
                        + "catalog)");
            }
            if (org.scaledl.model.cost.LayerStage.beyondMeasuredRatio(ratio)) {
                // a whole model's run that far off its layers' time is no calibration (a unit typed wrong, another
                // batch): one such run moved the shared factor for every GPU
                throw InvalidInputException.of(s.workload().tag("source").map(x -> x + ": ").orElse("")
                        + String.format(java.util.Locale.ROOT, "measured %s ms, %.3g times %s than its layers' "
                        + "predicted time on %s (%s ms): no whole model's run is that far off (a unit typed wrong, "
                        + "another batch?): %s", org.scaledl.io.CsvTable.plain(s.millis()), ratio >= 1 ? ratio
                        : 1 / ratio, ratio >= 1 ? "slower" : "faster", deviceOf(s.workload()).name(),
                        org.scaledl.io.CsvTable.plain(layerSum(s.workload())), s.workload()));
            }
            out.computeIfAbsent(s.workload().phase(), k -> new TreeMap<>())
                    .computeIfAbsent(deviceOf(s.workload()).name(), k -> new ArrayList<>())
                    .add(Math.log(ratio));
        }
        return out;
    }

    /** The median of every device's log ratios but those of {@code without} (null: all devices). */
    private static double medianOf(Map<String, List<Double>> byDevice, String without) {
        double[] logs = byDevice.entrySet().stream().filter(e -> !e.getKey().equals(without))
                .flatMap(e -> e.getValue().stream()).mapToDouble(Double::doubleValue).sorted().toArray();
        return Quantiles.of(logs, 0.5);
    }

    /**
     * The errors {@code log(predicted / measured)} of whole-model samples, each predicted with its device left out of
     * the calibration: the layer sum times the per-phase factor of the other devices' samples, and no factor of its
     * own. This is what a device never measured whole gets from the calibration; the kernel regressors keep the
     * device's own kernels, if it had any, so the spread understates that of a device never measured at all.
     * Phases measured on one device only contribute nothing.
     */
    public List<Double> heldOutDeviceLogErrors(List<Sample> samples) {
        List<Double> out = new ArrayList<>();
        logRatios(samples).values().forEach(byDevice -> {
            if (byDevice.size() > 1) {
                byDevice.forEach((device, v) -> {
                    double shared = medianOf(byDevice, device);
                    v.forEach(x -> out.add(shared - x));
                });
            }
        });
        return out;
    }

    /**
     * The scale of measured over predicted times with an offset beside it (the Theil–Sen slope of measured on
     * predicted ms: the median of the pairs' slopes), damped as {@link #dampedMedianFactor}: kernels timed alone
     * carry their launch, which a workload's queued kernels hide, so the offset is estimated and left out. The
     * median ratio where fewer than three kernels or no positive slope.
     */
    private static double dampedSlopeFactor(List<double[]> predictedMeasured) {
        int n = predictedMeasured.size();
        List<Double> logRatios = predictedMeasured.stream().map(x -> Math.log(x[1] / x[0])).toList();
        if (n < 3) {
            return dampedMedianFactor(logRatios);
        }
        // the slope over at most MAX_SLOPE_KERNELS kernels, evenly spaced in predicted time (pairs grow as n²)
        List<double[]> sorted = predictedMeasured.stream().sorted(java.util.Comparator.comparingDouble(x -> x[0]))
                .toList();
        int m = Math.min(n, MAX_SLOPE_KERNELS);
        double[][] p = new double[m][];
        for (int i = 0; i < m; i++) {
            p[i] = sorted.get((int) ((long) i * (n - 1) / Math.max(1, m - 1)));
        }
        double[] slopes = new double[m * (m - 1) / 2];
        int k = 0;
        for (int i = 0; i < m; i++) {
            for (int j = i + 1; j < m; j++) {
                double dp = p[j][0] - p[i][0];
                if (dp != 0) {
                    slopes[k++] = (p[j][1] - p[i][1]) / dp;
                }
            }
        }
        double slope = k == 0 ? Double.NaN : Quantiles.of(java.util.Arrays.stream(slopes, 0, k).sorted().toArray(),
                0.5);
        if (!(slope > 0) || !Double.isFinite(slope)) {
            return dampedMedianFactor(logRatios);
        }
        return Math.exp(n / (n + 2.0) * Math.log(slope));
    }

    /** The most kernels of one group whose pairs a slope takes (80,000 pairs). */
    private static final int MAX_SLOPE_KERNELS = 400;

    /** {@code exp(n / (n + 2) · median)} of log ratios: a correction that trusts few measurements less. */
    private static double dampedMedianFactor(List<Double> logRatios) {
        double[] sorted = logRatios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return Math.exp(sorted.length / (sorted.length + 2.0) * Quantiles.of(sorted, 0.5));
    }

    /**
     * Returns a copy adapted to the devices of a few profiled operators: per device, family, pass and precision,
     * every prediction is multiplied by {@code exp(s · log k)}, {@code k} the Theil–Sen slope of the group's measured
     * on predicted times (the median of the slopes between pairs of kernels; the median measured/predicted ratio
     * where fewer than three kernels or no positive slope), with {@code s = n / (n + 2)} damping small groups. A
     * family profiled only forward also corrects its backward pass (the same units do the work); families and
     * precisions not profiled on a device keep the device-agnostic prediction. Precisions are kept apart because a
     * GPU the trees mispredict in one precision need not be mispredicted in another: on an H200 the half-precision
     * products were predicted about half as long as measured and the FP32 ones about right, and one correction of
     * all four precisions moved the device campaign's FP32 and TF32 runs from +1 % to +70 % (docs/results.md). A
     * slope rather than the median ratio because a kernel timed alone carries its launch, which a workload's queued
     * kernels hide: on that H200 kernels under 20 µs took 3–4× the prediction and those over 100 µs 0.9–1.1× in
     * FP32, so the median kernel's ratio (a small one's) overcorrected every pass; the slope leaves that offset out.
     * The device campaign's 192 runs after adapting: 51.1 % MRE with one pooled median, 43.5 % per precision, 30.1 %
     * with the slope (36.4 % without adapting); the leave-one-GPU-out adaptation of the older GPUs' whole models
     * 11.8 / 11.7 / 11.5 %. (Weighing each kernel's ratio by its time instead: 32.9 % there but 18.5 % here.)
     * Adapting again replaces the corrections of the groups it measures. This is how to use a small profiling budget
     * on a new GPU: the trees carry what transfers across GPUs, the correction what the data sheet does not say
     * (sustained clocks under power limits, library efficiency).
     */
    public DeviceLayerModel adapt(List<OpMeasurement> profiled) {
        Map<String, Map<FamilyPass, List<double[]>>> pairs = new TreeMap<>();
        for (OpMeasurement m : profiled) {
            if (m.features().family() == OpFamily.SHAPE) {
                continue;
            }
            // a profiled convolution ran as PyTorch lays it out by default (the companion's kernels, DeepBench's):
            // its prediction in that layout, so that the correction is not the layout's factor a second time
            double base = uncorrectedMillis(m.features(), m.device(), m.precision(), m.backward())
                    * MemoryFormat.NCHW.slowdown(m.features(), m.device().runs(m.precision()).orElse(m.precision()),
                            m.device(), m.backward());
            if (base > 0) {
                pairs.computeIfAbsent(m.device().name(), k -> new java.util.LinkedHashMap<>())
                        .computeIfAbsent(new FamilyPass(m.features().family(), m.backward(),
                                Optional.of(m.precision())), k -> new ArrayList<>())
                        .add(new double[] {base, m.millis()});
            }
        }
        pairs.forEach((device, groups) -> groups.forEach((key, v) -> {
            // a group of a GPU's kernels a hundred times off the trees is in another unit (µs), not a GPU the data
            // sheet misdescribes: a correction of x1000 would make every job on it that much slower, without a word
            double median = Quantiles.of(v.stream().mapToDouble(x -> x[1] / x[0]).sorted().toArray(), 0.5);
            double most = org.scaledl.model.cost.LayerStage.MAX_MEASURED_RATIO;
            if (org.scaledl.model.cost.LayerStage.beyondMeasuredRatio(median)) {
                throw org.scaledl.InvalidInputException.of(String.format(java.util.Locale.ROOT, "the %d profiled "
                        + "%s kernels of %s measure a median %.0f times %s than the layer model predicts them: their "
                        + "latency_ms is likely in another unit (microseconds, seconds), or they ran on another GPU "
                        + "than the one named; at most %.0f times either way adapts the model", v.size(), key.key(),
                        device, median > 1 ? median : 1 / median, median > 1 ? "slower" : "faster", most));
            }
        }));
        Map<String, Corrections> out = new TreeMap<>(corrections);
        pairs.forEach((device, groups) -> {
            Corrections old = out.getOrDefault(device, Corrections.NONE);
            Map<FamilyPass, Double> layers = new java.util.HashMap<>(old.layers());
            groups.forEach((key, v) -> layers.put(key, dampedSlopeFactor(v)));
            out.put(device, new Corrections(layers, old.whole()));
        });
        return new DeviceLayerModel(forward, backward, pooledForward, pooledBackward, trainFactor, inferFactor,
                devices, out, familyCode, ceilings, saturation, speedCap);
    }

    /** The per-device corrections from {@link #adapt} and {@link #calibrate}, by device name. */
    public Map<String, Corrections> corrections() {
        return corrections;
    }

    /** The names of the devices whose measurements fitted the model, sorted. */
    public List<String> devices() {
        return devices;
    }

    /** The model as a JSON body (the ensembles packed, corrections with their keys in file form). */
    public ObjectNode body() {
        ObjectNode body = JSON.objectNode();
        body.put("features", FEATURES);
        body.put("train_factor", trainFactor);
        body.put("infer_factor", inferFactor);
        devices.forEach(body.putArray("devices")::add);
        ObjectNode codes = body.putObject("family_codes");
        for (OpFamily f : OpFamily.values()) {
            codes.put(f.name(), familyCode[f.ordinal()]);
        }
        ObjectNode f = body.putObject("forward");
        forward.forEach((k, v) -> v.write(f.putObject(k.name())));
        ObjectNode b = body.putObject("backward");
        backward.forEach((k, v) -> v.write(b.putObject(k.name())));
        ObjectNode corr = body.putObject("corrections");
        corrections.forEach((device, c) -> {
            ObjectNode g = corr.putObject(device);
            new TreeMap<String, Double>(c.layers().entrySet().stream().collect(java.util.stream.Collectors.toMap(
                    e -> e.getKey().key(), Map.Entry::getValue))).forEach(g::put);
            for (Phase p : Phase.values()) {
                Double w = c.whole().get(p);
                if (w != null) {
                    g.put("WHOLE/" + p.label(), w);
                }
            }
        });
        body.putArray("ceilings").add(ceilings[0]).add(ceilings[1]);
        if (Double.isFinite(saturation)) {
            body.put("ratio_saturation", saturation);
        }
        if (!speedCap.isNone()) {
            speedCap.write(body.putObject("speed_cap"));
        }
        pooledForward.write(body.putObject("pooled_forward"));
        if (pooledBackward == pooledForward) {
            body.putNull("pooled_backward");
        } else {
            pooledBackward.write(body.putObject("pooled_backward"));
        }
        return body;
    }

    /**
     * A model from a body written by {@link #body} (or by a version-1 device model file, whose families are coded by
     * the ordinals of that version's {@link OpFamily}, the same as today's).
     *
     * @throws InvalidInputException for a malformed body
     */
    public static DeviceLayerModel read(JsonNode body) {
        int features = body.path("features").asInt(-1);
        if (features != FEATURES && features != V2_FEATURES && features != V1_FEATURES) {
            // (a body without the field, another kind's, says so: its count was printed blank)
            throw InvalidInputException.of(body.has("features") ? "the model has " + InvalidInputException.printable(
                    body.get("features").toString(), 40) + " features per layer, this library " + FEATURES
                    + "; refit the model" : "the model's layer costs give no \"features\" (a device model's "
                    + "layer_cost has them: is the file another kind of model, edited?); refit the model");
        }
        double[] codes = ordinalCodes();
        JsonNode fc = body.path("family_codes");
        if (fc.isObject()) {
            double unknown = -1;
            java.util.Arrays.fill(codes, unknown);
            for (Iterator<Map.Entry<String, JsonNode>> it = fc.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                double code = Fields.finite(e.getValue(), "family code of " + e.getKey());
                try {
                    codes[OpFamily.valueOf(e.getKey()).ordinal()] = code;
                } catch (IllegalArgumentException ex) {
                    // a family this library no longer has: its code is simply never produced
                }
            }
        }
        Map<OpFamily, BoostedTrees> f = families(body.path("forward"), features);
        Map<OpFamily, BoostedTrees> b = families(body.path("backward"), features);
        BoostedTrees pf = BoostedTrees.read(body.path("pooled_forward"), features);
        BoostedTrees pb = body.path("pooled_backward").isObject()
                ? BoostedTrees.read(body.path("pooled_backward"), features) : pf;
        double train = positiveFactor(body, "train_factor");
        double infer = positiveFactor(body, "infer_factor");
        List<String> names = new ArrayList<>();
        body.path("devices").forEach(n -> names.add(n.asText()));
        Map<String, Corrections> corr = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = body.path("corrections").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> d = it.next();
            Map<FamilyPass, Double> layers = new java.util.HashMap<>();
            Map<Phase, Double> whole = new java.util.EnumMap<>(Phase.class);
            for (Iterator<Map.Entry<String, JsonNode>> g = d.getValue().fields(); g.hasNext();) {
                Map.Entry<String, JsonNode> e = g.next();
                double v = positiveFactor(d.getValue(), e.getKey());
                String[] parts = e.getKey().split("/", -1);
                if (parts.length != 2 && !(parts.length == 3 && !parts[0].equals("WHOLE"))) {
                    throw InvalidInputException.of("correction key '" + e.getKey() + "' is not FAMILY/pass or "
                            + "FAMILY/pass/precision");
                }
                if (parts[0].equals("WHOLE")) {
                    whole.put(Phase.parse(parts[1]), v);
                } else if (parts[1].equals("fwd") || parts[1].equals("bwd")) {
                    OpFamily family;
                    try {
                        family = OpFamily.valueOf(parts[0]);
                    } catch (IllegalArgumentException ex) {
                        throw InvalidInputException.of("unknown operator family '" + parts[0] + "'");
                    }
                    Optional<Precision> precision = parts.length == 3 ? Optional.of(Precision.parse(parts[2]))
                            : Optional.empty();
                    layers.put(new FamilyPass(family, parts[1].equals("bwd"), precision), v);
                } else {
                    throw InvalidInputException.of("correction key '" + e.getKey() + "' has no pass fwd or bwd");
                }
            }
            corr.put(d.getKey(), new Corrections(layers, whole));
        }
        double[] ceil = DEFAULT_CEILINGS.clone();
        JsonNode cn = body.path("ceilings");
        if (cn.isArray()) {
            if (cn.size() != 2) {
                throw InvalidInputException.of("ceilings must hold two fractions");
            }
            for (int i = 0; i < 2; i++) {
                ceil[i] = Fields.inRange(cn.get(i), "ceilings[" + i + "]", 0.05, 1.5);
            }
        }
        double saturation = body.has("ratio_saturation")
                ? Fields.inRange(body.get("ratio_saturation"), "ratio_saturation", 0.01, 6) : Double.POSITIVE_INFINITY;
        SpeedCap cap = body.has("speed_cap") ? SpeedCap.read(body.get("speed_cap")) : SpeedCap.NONE;
        return new DeviceLayerModel(f, b, pf, pb, train, infer, names, corr, codes, ceil, saturation, cap);
    }

    private static Map<OpFamily, BoostedTrees> families(JsonNode node, int features) {
        if (!node.isObject()) {
            throw InvalidInputException.of("per-family regressors are missing");
        }
        Map<OpFamily, BoostedTrees> out = new EnumMap<>(OpFamily.class);
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            OpFamily family;
            try {
                family = OpFamily.valueOf(e.getKey());
            } catch (IllegalArgumentException ex) {
                throw InvalidInputException.of("unknown operator family '" + e.getKey() + "'");
            }
            out.put(family, BoostedTrees.read(e.getValue(), features));
        }
        return out;
    }

    /** A calibration factor: positive, and within a million either way of no correction (fitted ones are near 1). */
    private static double positiveFactor(JsonNode body, String key) {
        return Fields.inRange(body.get(key), key, 1e-6, 1e6);
    }

    /** The shared calibration factor of a phase (for devices without whole-workload measurements). */
    public double factor(Phase phase) {
        return phase == Phase.TRAIN ? trainFactor : inferFactor;
    }

    /** The calibration factor of a phase on a device: the shared one times the device's own, if it has one. */
    @Override
    public double factor(Phase phase, Device device) {
        Corrections c = corrections.get(device.name());
        Double own = c == null ? null : c.whole().get(phase);
        if (own == null && c != null) {
            own = c.whole().get(phase == Phase.TRAIN ? Phase.INFER : Phase.TRAIN);
        }
        return factor(phase) * (own == null ? 1 : own);
    }

    /** The calibrated time of a workload on its device (one device, no parallelism), ms. */
    public double predictMillis(Workload workload) {
        return layerSum(workload) * factor(workload.phase(), deviceOf(workload));
    }

    /**
     * The device a workload runs on.
     *
     * @throws IllegalArgumentException for a workload without one
     */
    public static Device deviceOf(Workload workload) {
        return workload.device().orElseThrow(() -> new IllegalArgumentException(
                "the device layer model needs a workload with a device: " + workload));
    }

    /**
     * The design row of a workload for choosing what to profile: per operator family and pass (forward families
     * first, then backward), the sum of its layers' predicted times on the workload's device, ms: the groups whose
     * factors profiled kernels ({@link #adapt}) and whole runs ({@link #calibrate}) estimate.
     */
    public double[] designRow(Workload workload) {
        Device d = deviceOf(workload);
        int n = OpFamily.values().length;
        double[] row = new double[2 * n];
        for (LayerFeatures f : FeatureExtractor.of(workload.graph()).extract(workload.batch(), workload.phase())) {
            row[f.family().ordinal()] += predictMillis(f, d, workload.precision(), false);
            if (workload.phase() == Phase.TRAIN) {
                row[n + f.family().ordinal()] += predictMillis(f, d, workload.precision(), true);
            }
        }
        return row;
    }

    /**
     * Uncalibrated sum over the workload's layers of forward (and, in training, backward) predictions, ms, each
     * convolution's with its {@link MemoryFormat#slowdown} in the workload's memory format.
     */
    public double layerSum(Workload workload) {
        Device d = deviceOf(workload);
        SumKey key = new SumKey(workload.batch(), workload.phase(), d, workload.precision(), workload.memoryFormat());
        return sums.get(workload.graph(), key, () -> computeLayerSum(workload, d));
    }

    private double computeLayerSum(Workload workload, Device d) {
        double sum = 0;
        Precision p = workload.precision();
        MemoryFormat format = workload.memoryFormat();
        ModelGraph g = workload.graph();
        for (LayerFeatures f : FeatureExtractor.of(g).extract(workload.batch(), workload.phase())) {
            int r = g.repeats(f.layer());
            if (r == 1) {
                sum += layerMillis(f, d, p, false, format);
                if (workload.phase() == Phase.TRAIN) {
                    sum += layerMillis(f, d, p, true, format);
                }
            } else {
                double t = layerMillis(f, d, p, false, format);
                if (workload.phase() == Phase.TRAIN) {
                    t += layerMillis(f, d, p, true, format);
                }
                sum += t * r;
            }
        }
        return sum;
    }

    @Override
    public double layerMillis(LayerFeatures f, Device device, Precision precision, boolean backward) {
        return predictMillis(f, device, precision, backward);
    }

    /** One layer's FP32 forward or backward time on a device, ms (0 for shape arithmetic and absent backward work). */
    public double predictMillis(LayerFeatures f, Device device, boolean backwardPass) {
        return predictMillis(f, device, Precision.FP32, backwardPass);
    }

    /**
     * One layer's forward or backward time on a device in a precision, ms (0 for shape arithmetic and absent backward
     * work).
     */
    public double predictMillis(LayerFeatures f, Device device, Precision precision, boolean backwardPass) {
        double t = uncorrectedMillis(f, device, precision, backwardPass);
        Corrections c = corrections.get(device.name());
        if (c == null || t == 0 || c.layers().isEmpty()) {
            return t;
        }
        // the precision's own correction, else one of every precision (files written before precisions were kept)
        Double k = layerCorrection(c, f.family(), backwardPass, Optional.of(precision));
        if (k == null) {
            k = layerCorrection(c, f.family(), backwardPass, Optional.empty());
        }
        return k == null ? t : t * k;
    }

    /** A family's correction in a pass, else (backward) its forward one; null where there is none. */
    private static Double layerCorrection(Corrections c, OpFamily family, boolean backward,
            Optional<Precision> precision) {
        Double k = c.layers().get(new FamilyPass(family, backward, precision));
        return k == null && backward ? c.layers().get(new FamilyPass(family, false, precision)) : k;
    }

    private double uncorrectedMillis(LayerFeatures f, Device device, Precision precision, boolean backwardPass) {
        if (f.family() == OpFamily.SHAPE || (backwardPass && f.flopsBwd() == 0 && f.bytesBwd() == 0)) {
            return 0;
        }
        BoostedTrees t = (backwardPass ? backward : forward).get(regressorFamily(f.family(), backwardPass));
        if (t == null) {
            t = backwardPass ? pooledBackward : pooledForward;
        }
        double g = t.predict(features(f, device, precision, backwardPass, familyCode, saturation, speedCap));
        return Math.max(roofSeconds(f, device, precision, backwardPass) * Math.exp(g),
                hardwareFloorSeconds(f, device, precision, backwardPass)) * 1e3;
    }

    /**
     * What no kernel beats ({@link Roofline#hardwareFloorSeconds}). The learned efficiency may fall below the roofline
     * where caches serve small tensors, never below this (a tree extrapolating past its data otherwise can).
     */
    static double hardwareFloorSeconds(LayerFeatures f, Device d, Precision p, boolean bwd) {
        return Roofline.hardwareFloorSeconds(f, d, p, bwd);
    }

    /**
     * The plain roofline time of a layer, {@code max(FLOPs / peak, bytes / bandwidth)} in ms, without wave
     * quantisation or launch floor (the baseline the learned efficiency is compared with).
     */
    public static double rooflineMillis(LayerFeatures f, Device d, boolean backwardPass) {
        return rooflineMillis(f, d, Precision.FP32, backwardPass);
    }

    /** The plain roofline time of a layer in a precision (its peak, its activations' element size), ms. */
    public static double rooflineMillis(LayerFeatures f, Device d, Precision p, boolean backwardPass) {
        double flops = backwardPass ? f.flopsBwd() : f.flopsFwd();
        double bytes = (backwardPass ? f.bytesBwd() : f.bytesFwd()) * p.activationBytes() / 4.0;
        return 1e3 * Roofline.time(flops, bytes, d.peakFlopsPerSecond(p, matrix(f.family())), d.bytesPerSecond());
    }

    /**
     * The family whose regressor describes a layer's pass: a reduction's (both passes) and a data movement's backward
     * pass are described as the element-wise kernel of their shape. Each streams its input once and writes its output;
     * the kernel data has no rows of either beyond 154 profiled reductions of at most 5 µs of roofline (launch-bound)
     * and no backward data movement at all, so their trees extrapolated: a mixture of experts' combination of each
     * token's top-k outputs and an attention core's row maxima at about 30 times their roofline on every GPU, the
     * backward passes of a token dispatch or a split 3–4 times. The element-wise benchmarks span up to 57 ms of
     * roofline. Data movement forward keeps its own trees (216 profiled nodes, large copies among them).
     */
    static OpFamily regressorFamily(OpFamily f, boolean bwd) {
        return f == OpFamily.REDUCE || f == OpFamily.MOVEMENT && bwd ? OpFamily.ELEMENTWISE : f;
    }

    private static boolean matrix(OpFamily f) {
        return f == OpFamily.DENSE || f == OpFamily.CONV;
    }

    private static double roofSeconds(LayerFeatures f, Device d, Precision p, boolean bwd) {
        double flops = bwd ? f.flopsBwd() : f.flopsFwd();
        double bytes = (bwd ? f.bytesBwd() : f.bytesFwd()) * p.activationBytes() / 4.0;
        // a product whose rows a Hopper or Blackwell GPU's tensor memory accelerator cannot copy computes slower
        // (TensorCoreAlignment: its compute time only, so a kernel bound by its launch or memory pays little). Not a
        // feature of the trees: their kernel data holds no such product on such a GPU (DeepBench's V100 and T4 rows,
        // the only misaligned half-precision ones, run at full speed), so it scales the roofline they multiply
        // (figures on the H200 in docs/results.md, "Tensor-core alignment on Hopper").
        double tc = flops / d.peakFlopsPerSecond(p, matrix(f.family())) * TensorCoreAlignment.slowdown(f, p, d);
        double waves = waves(f, d);
        if (waves > 0) {
            tc *= Math.ceil(waves) / waves;
        }
        return Math.max(tc, bytes / d.bytesPerSecond()) + FLOOR_S;
    }

    /**
     * Thread-block waves: output tiles (128×128 for contractions, 1,024 elements otherwise) per compute unit.
     */
    private static double waves(LayerFeatures f, Device d) {
        return f.outputElements() / (matrix(f.family()) ? 128.0 * 128.0 : 1024.0) / d.computeUnits();
    }

    static double[] features(LayerFeatures f, Device d, Precision p, boolean bwd, double[] familyCode,
            double saturation) {
        return features(f, d, p, bwd, familyCode, saturation, SpeedCap.NONE);
    }

    /**
     * The features of a kernel on a device, its peak and memory bandwidth taken no faster than {@code cap}: a device
     * beyond the fastest the model was fitted on is described by the fastest one (its kernels then sustain that
     * device's fraction of their roofline, which scales with the device's own figures).
     */
    static double[] features(LayerFeatures f, Device d, Precision p, boolean bwd, double[] familyCode,
            double saturation, SpeedCap cap) {
        boolean mx = matrix(f.family());
        // a vector kernel on half-precision tensors is described as the FP32 kernel of its shape (the data has
        // vector kernels in FP32 only): its efficiency is that kernel's, its roofline moves half the bytes
        double elements = f.outputElements();
        double flops = bwd ? f.flopsBwd() : f.flopsFwd();
        double bytes = (bwd ? f.bytesBwd() : f.bytesFwd()) * (mx ? p.activationBytes() / 4.0 : 1);
        double tc = flops / (mx ? cap.matrix(d, p) : Math.min(d.peakFlopsPerSecond(p, false), cap.vectorFlops()))
                + 1e-9;
        double tm = bytes / Math.min(d.bytesPerSecond(), cap.bytesPerSecond()) + 1e-9;
        double waves = elements / (mx ? 128.0 * 128.0 : 1024.0) / d.computeUnits();
        double tail = waves <= 0 ? 0 : waves < 1 ? waves : waves / Math.ceil(waves);
        double[] x = new double[FEATURES];
        x[0] = Math.log10(tc);
        x[1] = Math.log10(tm);
        // past the saturation the bound side alone describes the kernel (RATIO_SATURATION)
        if (x[0] - x[1] > saturation) {
            x[1] = x[0] - saturation;
        }
        x[2] = x[0] - x[1];
        x[3] = Math.log10(elements + 1);
        x[4] = Math.log10(waves + 1e-6);
        x[5] = tail;
        x[6] = Math.log10(bytes / d.l2Bytes() + 1e-9);
        x[7] = Math.log10(f.inChannels() + 1);
        x[8] = Math.log10(f.outChannels() + 1);
        x[9] = familyCode[regressorFamily(f.family(), bwd).ordinal()];
        x[10] = Math.log10(f.kernel() + 1);
        x[11] = f.stride();
        x[12] = Math.log10(elements / Math.max(1, f.outChannels()) + 1);
        if (mx && f.outChannels() > 0) {
            // output tiles of the size a GEMM library launches for the problem: powers of two from 16 to 128 per
            // side, no larger than the output (rows = everything but the output channels)
            double cols = f.outChannels();
            double rows = f.outputElements() / cols;
            double tileCols = tileSide(cols);
            double tileRows = tileSide(rows);
            double tiles = Math.ceil(rows / tileRows) * Math.ceil(cols / tileCols);
            x[13] = rows * cols / (tiles * tileRows * tileCols);
            double w = tiles / d.computeUnits();
            x[14] = w < 1 ? w : w / Math.ceil(w);
        }
        // matrix work on tensor (matrix) cores sustains another fraction of its peak than on the FP32 units
        x[15] = mx && d.matrixUnits(p) ? 1 : 0;
        return x;
    }

    /** A tile side for an output side of {@code n}: the power of two at or above it, within [16, 128]. */
    private static double tileSide(double n) {
        double p = 16;
        while (p < n && p < 128) {
            p *= 2;
        }
        return p;
    }
}
