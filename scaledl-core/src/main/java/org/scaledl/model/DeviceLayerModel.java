package org.scaledl.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.base.Preconditions;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.WeakHashMap;
import org.scaledl.InvalidInputException;
import org.scaledl.data.Phase;
import org.scaledl.data.Sample;
import org.scaledl.data.Workload;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.features.LayerFeatures;
import org.scaledl.features.OpFamily;
import org.scaledl.graph.ModelGraph;
import org.scaledl.hardware.Device;

/**
 * The layer-wise model with hardware as data: every layer's time on a {@link Device} is its roofline time scaled by
 * a learned efficiency,
 *
 * <pre>
 *   t = (max(FLOPs / peak · ⌈w⌉ / w, bytes / bandwidth) + 2 µs) · exp(g_family(x))
 * </pre>
 *
 * with {@code w} the waves of thread blocks over the compute units (so a partly filled last wave costs a whole one),
 * where {@code g} is a per-family (and per pass: forward, backward) gradient-boosted tree ensemble over
 * device-relative features {@code x}: log compute time, log memory time, their ratio, log output elements, log
 * waves and the tail-wave efficiency, log bytes over L2, log reduction length (the contraction's K, or the row a norm
 * or softmax runs over: seen-GPU softmax MRE 17.5 → 4.1 %), output width and output rows, kernel window and stride
 * (the last three: held-out-GPU kernel MRE 27.1 → 26.1 %, seen-GPU 22.8 → 21.7 %). Every feature is a
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
 * <p>{@link #save} writes the ensembles, the calibration factors and the names of the training devices in the
 * checksummed envelope of {@link ModelFile} (format {@value #FORMAT}); {@link #load} gives a model whose predictions
 * are bit-identical.
 *
 * <pre>{@code
 * DeviceLayerModel m = DeviceLayerModel.fit(kernelRows).calibrate(modelSamples);
 * double ms = m.predict(Workload.builder(graph).batch(8).phase(Phase.INFER).device(h100).build()).millis();
 * m.save(Path.of("gpu.sdl"));
 * }</pre>
 */
public final class DeviceLayerModel implements RuntimeModel {
    /** The {@code format} of saved device models. */
    public static final String FORMAT = "scaledl-device-model";
    static final int FORMAT_VERSION = 1;
    static final int MIN_FAMILY_ROWS = 100;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double FLOOR_S = 2e-6;
    private static final int FEATURES = 13;
    private static final BoostedTrees.Config CONFIG = new BoostedTrees.Config(200, 6, 0.1, 10, 64, 1.0);

    private final Map<OpFamily, BoostedTrees> forward;
    private final Map<OpFamily, BoostedTrees> backward;
    private final BoostedTrees pooledForward;
    private final BoostedTrees pooledBackward;
    private final double trainFactor;
    private final double inferFactor;
    private final List<String> devices;
    /** Per device name, per "FAMILY/fwd|bwd": the multiplicative correction fitted by {@link #adapt}. */
    private final Map<String, Map<String, Double>> corrections;
    /**
     * Uncalibrated layer sums per graph (held weakly) and (batch, phase, device): the trees are the cost of a
     * prediction, and a scheduler asks about the same workloads again and again. Shared by calibrated copies.
     */
    private final Map<ModelGraph, Map<SumKey, Double>> sums;

    private record SumKey(long batch, Phase phase, Device device) {
    }

    /** Cached (batch, phase, device) entries per graph before that graph's entries are cleared. */
    private static final int MAX_CACHED_SUMS = 1024;

    private DeviceLayerModel(Map<OpFamily, BoostedTrees> forward, Map<OpFamily, BoostedTrees> backward,
            BoostedTrees pooledForward, BoostedTrees pooledBackward, double trainFactor, double inferFactor,
            List<String> devices, Map<String, Map<String, Double>> corrections) {
        this(forward, backward, pooledForward, pooledBackward, trainFactor, inferFactor, devices, corrections,
                Collections.synchronizedMap(new WeakHashMap<>()));
    }

    private DeviceLayerModel(Map<OpFamily, BoostedTrees> forward, Map<OpFamily, BoostedTrees> backward,
            BoostedTrees pooledForward, BoostedTrees pooledBackward, double trainFactor, double inferFactor,
            List<String> devices, Map<String, Map<String, Double>> corrections,
            Map<ModelGraph, Map<SumKey, Double>> sums) {
        this.sums = sums;
        Map<String, Map<String, Double>> c = new TreeMap<>();
        corrections.forEach((k, v) -> c.put(k, Map.copyOf(v)));
        this.corrections = Collections.unmodifiableMap(c);
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
        Preconditions.checkArgument(!fwd.isEmpty(), "need forward operator measurements to fit");
        Map<OpFamily, BoostedTrees> f = new EnumMap<>(OpFamily.class);
        Map<OpFamily, BoostedTrees> b = new EnumMap<>(OpFamily.class);
        BoostedTrees pf = fitPass(fwd, f);
        BoostedTrees pb = bwd.isEmpty() ? pf : fitPass(bwd, b);
        TreeSet<String> names = new TreeSet<>();
        measurements.forEach(m -> names.add(m.device().name()));
        return new DeviceLayerModel(f, b, pf, pb, 1, 1, List.copyOf(names), Map.of());
    }

    private static BoostedTrees fitPass(List<OpMeasurement> rows, Map<OpFamily, BoostedTrees> out) {
        Map<OpFamily, List<OpMeasurement>> byFamily = new EnumMap<>(OpFamily.class);
        for (OpMeasurement m : rows) {
            byFamily.computeIfAbsent(m.features().family(), k -> new ArrayList<>()).add(m);
        }
        for (Map.Entry<OpFamily, List<OpMeasurement>> e : byFamily.entrySet()) {
            List<OpMeasurement> v = e.getValue();
            List<OpMeasurement> bench = v.stream().filter(m -> m.origin() == OpMeasurement.Origin.BENCHMARK)
                    .toList();
            if (bench.size() >= MIN_FAMILY_ROWS) {
                v = bench;
            }
            if (v.size() >= MIN_FAMILY_ROWS) {
                out.put(e.getKey(), fitRows(v));
            }
        }
        return fitRows(rows);
    }

    private static BoostedTrees fitRows(List<OpMeasurement> rows) {
        double[][] x = new double[rows.size()][];
        double[] y = new double[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            OpMeasurement m = rows.get(i);
            x[i] = features(m.features(), m.device(), m.backward());
            y[i] = Math.log(m.millis() / 1e3 / roofSeconds(m.features(), m.device(), m.backward()));
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
        Map<String, Map<String, Double>> out = mutableCorrections();
        for (Phase p : Phase.values()) {
            // log(measured / layer sum) per sample, grouped by device
            Map<String, List<Double>> byDevice = new TreeMap<>();
            for (Sample s : samples) {
                if (s.workload().phase() == p) {
                    byDevice.computeIfAbsent(deviceOf(s.workload()).name(), k -> new ArrayList<>())
                            .add(Math.log(s.millis() / layerSum(s.workload())));
                }
            }
            if (byDevice.isEmpty()) {
                continue;
            }
            double[] logs = byDevice.values().stream().flatMap(List::stream).mapToDouble(Double::doubleValue).sorted()
                    .toArray();
            double shared = RuntimePredictor.quantile(logs, 0.5);
            factor[p.ordinal()] = Math.exp(shared);
            byDevice.forEach((device, v) -> out.computeIfAbsent(device, k -> new TreeMap<>())
                    .put(wholeKey(p), dampedMedianFactor(v.stream().map(x -> x - shared).toList())));
        }
        return new DeviceLayerModel(forward, backward, pooledForward, pooledBackward, factor[0], factor[1], devices,
                out, sums);
    }

    /** {@code exp(n / (n + 2) · median)} of log ratios: a correction that trusts few measurements less. */
    private static double dampedMedianFactor(List<Double> logRatios) {
        double[] sorted = logRatios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return Math.exp(sorted.length / (sorted.length + 2.0) * RuntimePredictor.quantile(sorted, 0.5));
    }

    private static String wholeKey(Phase phase) {
        return "WHOLE/" + phase.label();
    }

    /**
     * Returns a copy adapted to the devices of a few profiled operators: per device, family and pass, every
     * prediction is multiplied by {@code exp(s · median log(measured / predicted))} over that group's measurements,
     * with {@code s = n / (n + 2)} damping small groups. A family profiled only forward also corrects its backward
     * pass (the same units do the work); families not profiled on a device keep the device-agnostic prediction.
     * Adapting again replaces the corrections of the groups it measures. This is how to use a small profiling budget
     * on a new GPU: the trees carry what transfers across GPUs, the correction what the data sheet does not say
     * (sustained clocks under power limits, library efficiency).
     */
    public DeviceLayerModel adapt(List<OpMeasurement> profiled) {
        Map<String, Map<String, List<Double>>> logs = new TreeMap<>();
        for (OpMeasurement m : profiled) {
            if (m.features().family() == OpFamily.SHAPE) {
                continue;
            }
            double base = uncorrectedMillis(m.features(), m.device(), m.backward());
            if (base > 0) {
                logs.computeIfAbsent(m.device().name(), k -> new TreeMap<>())
                        .computeIfAbsent(correctionKey(m.features().family(), m.backward()), k -> new ArrayList<>())
                        .add(Math.log(m.millis() / base));
            }
        }
        Map<String, Map<String, Double>> out = mutableCorrections();
        logs.forEach((device, groups) -> groups.forEach((key, v) -> out.computeIfAbsent(device,
                k -> new TreeMap<>()).put(key, dampedMedianFactor(v))));
        return new DeviceLayerModel(forward, backward, pooledForward, pooledBackward, trainFactor, inferFactor,
                devices, out);
    }

    /**
     * The per-device corrections: per device name, {@code FAMILY/fwd} and {@code FAMILY/bwd} from {@link #adapt},
     * {@code WHOLE/train} and {@code WHOLE/infer} from {@link #calibrate}.
     */
    public Map<String, Map<String, Double>> corrections() {
        return corrections;
    }

    /** A deep, mutable copy of {@link #corrections}, for {@link #calibrate} and {@link #adapt} to update. */
    private Map<String, Map<String, Double>> mutableCorrections() {
        Map<String, Map<String, Double>> out = new TreeMap<>();
        corrections.forEach((k, v) -> out.put(k, new TreeMap<>(v)));
        return out;
    }

    private static String correctionKey(OpFamily family, boolean backwardPass) {
        return family.name() + (backwardPass ? "/bwd" : "/fwd");
    }

    /** The names of the devices whose measurements fitted the model, sorted. */
    public List<String> devices() {
        return devices;
    }

    /**
     * Saves the model.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public void save(Path file) {
        ObjectNode body = JSON.createObjectNode();
        body.put("library_version", ModelFile.LIBRARY_VERSION);
        body.put("created_at", Instant.now().toString());
        body.put("features", FEATURES);
        body.put("train_factor", trainFactor);
        body.put("infer_factor", inferFactor);
        devices.forEach(body.putArray("devices")::add);
        ObjectNode f = body.putObject("forward");
        forward.forEach((k, v) -> v.write(f.putObject(k.name())));
        ObjectNode b = body.putObject("backward");
        backward.forEach((k, v) -> v.write(b.putObject(k.name())));
        ObjectNode corr = body.putObject("corrections");
        corrections.forEach((device, groups) -> {
            ObjectNode g = corr.putObject(device);
            groups.forEach(g::put);
        });
        pooledForward.write(body.putObject("pooled_forward"));
        if (pooledBackward == pooledForward) {
            body.putNull("pooled_backward");
        } else {
            pooledBackward.write(body.putObject("pooled_backward"));
        }
        ModelFile.writeEnvelope(FORMAT, FORMAT_VERSION, body, file);
    }

    /**
     * Loads a saved model.
     *
     * @throws InvalidInputException naming the file for a truncated, tampered, foreign or newer-format file, or one
     *         written with another feature layout
     */
    public static DeviceLayerModel load(Path file) {
        JsonNode body = ModelFile.readBody(file, FORMAT, FORMAT_VERSION);
        try {
            if (body.path("features").asInt(-1) != FEATURES) {
                throw InvalidInputException.of("the model has " + body.path("features") + " features per layer, this "
                        + "library " + FEATURES + "; refit the model");
            }
            Map<OpFamily, BoostedTrees> f = families(body.path("forward"));
            Map<OpFamily, BoostedTrees> b = families(body.path("backward"));
            BoostedTrees pf = BoostedTrees.read(body.path("pooled_forward"), FEATURES);
            BoostedTrees pb = body.path("pooled_backward").isObject()
                    ? BoostedTrees.read(body.path("pooled_backward"), FEATURES) : pf;
            double train = positiveFactor(body, "train_factor");
            double infer = positiveFactor(body, "infer_factor");
            List<String> names = new ArrayList<>();
            body.path("devices").forEach(n -> names.add(n.asText()));
            Map<String, Map<String, Double>> corr = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = body.path("corrections").fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> d = it.next();
                Map<String, Double> groups = new TreeMap<>();
                d.getValue().fields().forEachRemaining(g -> groups.put(g.getKey(),
                        positiveFactor(d.getValue(), g.getKey())));
                corr.put(d.getKey(), groups);
            }
            return new DeviceLayerModel(f, b, pf, pb, train, infer, names, corr);
        } catch (InvalidInputException e) {
            throw e.withSource(file.toString());
        }
    }

    private static Map<OpFamily, BoostedTrees> families(JsonNode node) {
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
            out.put(family, BoostedTrees.read(e.getValue(), FEATURES));
        }
        return out;
    }

    private static double positiveFactor(JsonNode body, String key) {
        double v = ModelFile.finite(body.get(key), key);
        if (v <= 0) {
            throw InvalidInputException.of(key + " must be positive");
        }
        return v;
    }

    /** The shared calibration factor of a phase (for devices without whole-workload measurements). */
    public double factor(Phase phase) {
        return phase == Phase.TRAIN ? trainFactor : inferFactor;
    }

    /** The calibration factor of a phase on a device: the shared one times the device's own, if it has one. */
    public double factor(Phase phase, Device device) {
        Map<String, Double> c = corrections.get(device.name());
        Double own = c == null ? null : c.get(wholeKey(phase));
        if (own == null && c != null) {
            own = c.get(wholeKey(phase == Phase.TRAIN ? Phase.INFER : Phase.TRAIN));
        }
        return factor(phase) * (own == null ? 1 : own);
    }

    @Override
    public String name() {
        return "scaledl-device";
    }

    @Override
    public Prediction predict(Workload workload) {
        return Prediction.point(layerSum(workload) * factor(workload.phase(), deviceOf(workload)));
    }

    private static Device deviceOf(Workload workload) {
        return workload.device().orElseThrow(() -> new IllegalArgumentException(
                "the device layer model needs a workload with a device: " + workload));
    }

    /** Uncalibrated sum over the workload's layers of forward (and, in training, backward) predictions, ms. */
    public double layerSum(Workload workload) {
        Device d = deviceOf(workload);
        SumKey key = new SumKey(workload.batch(), workload.phase(), d);
        Map<SumKey, Double> perGraph = sums.computeIfAbsent(workload.graph(),
                g -> Collections.synchronizedMap(new HashMap<>()));
        Double cached = perGraph.get(key);
        if (cached != null) {
            return cached;
        }
        double sum = computeLayerSum(workload, d);
        if (perGraph.size() >= MAX_CACHED_SUMS) {
            perGraph.clear();
        }
        perGraph.put(key, sum);
        return sum;
    }

    private double computeLayerSum(Workload workload, Device d) {
        double sum = 0;
        for (LayerFeatures f : FeatureExtractor.of(workload.graph()).extract(workload.batch(), workload.phase())) {
            sum += predictMillis(f, d, false);
            if (workload.phase() == Phase.TRAIN) {
                sum += predictMillis(f, d, true);
            }
        }
        return sum;
    }

    /** One layer's forward or backward time on a device, ms (0 for shape arithmetic and absent backward work). */
    public double predictMillis(LayerFeatures f, Device device, boolean backwardPass) {
        double t = uncorrectedMillis(f, device, backwardPass);
        Map<String, Double> c = corrections.get(device.name());
        if (c == null || t == 0) {
            return t;
        }
        Double k = c.get(correctionKey(f.family(), backwardPass));
        if (k == null && backwardPass) {
            k = c.get(correctionKey(f.family(), false));
        }
        return k == null ? t : t * k;
    }

    private double uncorrectedMillis(LayerFeatures f, Device device, boolean backwardPass) {
        if (f.family() == OpFamily.SHAPE || (backwardPass && f.flopsBwd() == 0 && f.bytesBwd() == 0)) {
            return 0;
        }
        BoostedTrees t = (backwardPass ? backward : forward).get(f.family());
        if (t == null) {
            t = backwardPass ? pooledBackward : pooledForward;
        }
        double g = t.predict(features(f, device, backwardPass));
        return roofSeconds(f, device, backwardPass) * Math.exp(g) * 1e3;
    }

    /**
     * The plain roofline time of a layer, {@code max(FLOPs / peak, bytes / bandwidth)} in ms, without wave
     * quantisation or launch floor (the baseline the learned efficiency is compared with).
     */
    public static double rooflineMillis(LayerFeatures f, Device d, boolean backwardPass) {
        double flops = backwardPass ? f.flopsBwd() : f.flopsFwd();
        double bytes = backwardPass ? f.bytesBwd() : f.bytesFwd();
        return 1e3 * Math.max(flops / d.peakFlopsPerSecond(matrix(f.family())), bytes / d.bytesPerSecond());
    }

    private static boolean matrix(OpFamily f) {
        return f == OpFamily.DENSE || f == OpFamily.CONV;
    }

    private static double roofSeconds(LayerFeatures f, Device d, boolean bwd) {
        double flops = bwd ? f.flopsBwd() : f.flopsFwd();
        double bytes = bwd ? f.bytesBwd() : f.bytesFwd();
        double tc = flops / d.peakFlopsPerSecond(matrix(f.family()));
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

    static double[] features(LayerFeatures f, Device d, boolean bwd) {
        boolean mx = matrix(f.family());
        double flops = bwd ? f.flopsBwd() : f.flopsFwd();
        double bytes = bwd ? f.bytesBwd() : f.bytesFwd();
        double tc = flops / d.peakFlopsPerSecond(mx) + 1e-9;
        double tm = bytes / d.bytesPerSecond() + 1e-9;
        double waves = waves(f, d);
        double tail = waves <= 0 ? 0 : waves < 1 ? waves : waves / Math.ceil(waves);
        double[] x = new double[FEATURES];
        x[0] = Math.log10(tc);
        x[1] = Math.log10(tm);
        x[2] = x[0] - x[1];
        x[3] = Math.log10(f.outputElements() + 1);
        x[4] = Math.log10(waves + 1e-6);
        x[5] = tail;
        x[6] = Math.log10(bytes / d.l2Bytes() + 1e-9);
        x[7] = Math.log10(f.inChannels() + 1);
        x[8] = Math.log10(f.outChannels() + 1);
        x[9] = f.family().ordinal();
        x[10] = Math.log10(f.kernel() + 1);
        x[11] = f.stride();
        x[12] = Math.log10(f.outputElements() / Math.max(1, f.outChannels()) + 1);
        return x;
    }
}
