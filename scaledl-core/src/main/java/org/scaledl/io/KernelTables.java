package org.scaledl.io;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.scaledl.InvalidInputException;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Phase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads per-operator measurements into {@link OpMeasurement}s. Every row becomes a one-layer graph with the
 * operator's ONNX semantics (NeuSight {@code bmm} {@code A[B,M,N]·X[B,N,K]} and DeepBench GEMM {@code A[M,K]·B[K,N]}
 * are {@code MatMul}s, {@code linear} a {@code MatMul} with weight {@code [N,K]} and bias, element-wise ops their ONNX
 * counterparts over {@code [B,H]}, {@code ln} a {@code LayerNormalization}, {@code softmax} a {@code Softmax},
 * convolutions a {@code Conv} with their padding and stride), so features are computed exactly as for a model's
 * layers. Rows whose device is not in the catalog are an error, except in DeepBench, where only FP32 training rows of
 * catalogued GPUs are used and the rest are counted in the log. A row with a non-positive time is an error naming
 * file and line.
 *
 * <pre>{@code
 * List<OpMeasurement> rows = KernelTables.neusight(Path.of("../shared/data/neusight/kernels"), devices);
 * }</pre>
 */
public final class KernelTables {
    private static final Logger LOG = LoggerFactory.getLogger(KernelTables.class);
    private static final List<String> NEUSIGHT = List.of("bmm", "linear", "elem", "ln", "softmax", "conv");

    private KernelTables() {
    }

    /** Reads whichever of {@code bmm, linear, elem, ln, softmax, conv}{@code .csv} exist in a directory. */
    public static List<OpMeasurement> neusight(Path kernelsDir, DeviceCatalog devices) {
        List<OpMeasurement> out = new ArrayList<>();
        Map<String, LayerFeatures> cache = new HashMap<>();
        boolean any = false;
        for (String op : NEUSIGHT) {
            Path f = kernelsDir.resolve(op + ".csv");
            if (!present(f)) {
                continue;
            }
            any = true;
            CsvTable t = CsvTable.read(f, "gpu", "op", "latency_ms");
            noRows(t);
            int from = out.size();
            for (int r = 0; r < t.size(); r++) {
                Device d = device(devices, t, r, t.get(r, "gpu"));
                double ms = kernelMillis(t, r, "latency_ms");
                String key;
                LayerFeatures lf;
                switch (op) {
                    case "bmm", "linear" -> {
                        long b = t.positiveInt(r, "B");
                        long m = t.positiveInt(r, "M");
                        long n = t.positiveInt(r, "N");
                        long k = t.positiveInt(r, "K");
                        key = op + ":" + b + "x" + m + "x" + n + "x" + k;
                        lf = cache.computeIfAbsent(key, x -> op.equals("bmm") ? matmul(b, m, n, k, false)
                                : matmul(b, m, n, k, true));
                    }
                    case "elem", "ln", "softmax" -> {
                        long b = t.positiveInt(r, "B");
                        long h = t.positiveInt(r, "H");
                        String kind = t.get(r, "op");
                        int row = r;
                        key = kind + ":" + b + "x" + h;
                        lf = cache.computeIfAbsent(key, x -> vector(kind, b, h, t, row));
                    }
                    case "conv" -> {
                        long n = t.positiveInt(r, "batch");
                        long c = t.positiveInt(r, "Cin");
                        long k = t.positiveInt(r, "Cout");
                        long ks = t.positiveInt(r, "kernel");
                        long s = t.positiveInt(r, "stride");
                        long p = t.nonNegativeLong(r, "padding");
                        long h = t.positiveInt(r, "H");
                        long w = t.positiveInt(r, "W");
                        key = "conv:" + n + "x" + c + "x" + k + "x" + ks + "x" + s + "x" + p + "x" + h + "x" + w;
                        lf = cache.computeIfAbsent(key, x -> conv(n, c, k, ks, ks, s, s, p, p, h, w));
                    }
                    default -> throw new IllegalStateException(op);
                }
                org.scaledl.workload.Precision precision = t.has("precision") && t.opt(r, "precision").isPresent()
                        ? parsePrecision(t, r) : org.scaledl.workload.Precision.FP32;
                out.add(new OpMeasurement(lf, d, false, ms, op, key + (precision == org.scaledl.workload.Precision.FP32
                        ? "" : ":" + precision.label()), OpMeasurement.Origin.BENCHMARK, precision));
            }
            refuseOtherUnits(f.toString(), out.subList(from, out.size()));
        }
        Path attention = kernelsDir.resolve("attention.csv");
        if (Files.isRegularFile(attention)) {
            // the companion measures the fused attention core too; the layer model has no family for it yet
            LOG.warn("{}: not read (the layer model learns bmm, linear, elem, ln, softmax and conv kernels; a fused "
                    + "attention core is timed from the runs): its kernels adapt nothing", attention);
        }
        if (!any) {
            throw InvalidInputException.inSource(kernelsDir.toString(), "no kernel table (" + String.join(", ",
                    NEUSIGHT) + ".csv) in this directory" + (Files.isRegularFile(attention) ? " (attention.csv is "
                    + "not one the layer model reads)" : ""));
        }
        return out;
    }

    private static org.scaledl.workload.Precision parsePrecision(CsvTable t, int r) {
        try {
            return org.scaledl.workload.Precision.parse(t.get(r, "precision"));
        } catch (InvalidInputException e) {
            throw InvalidInputException.atLine(t.source(), t.line(r), e.detail());
        }
    }

    /**
     * Reads DeepBench {@code gemm.csv} and {@code conv.csv} (forward, backward-data and backward-filter times are
     * three measurements of one layer: the forward one and, summed, the backward one): FP32 training rows of GPUs in
     * the catalog. Ops are labelled {@code gemm}, {@code conv}, {@code conv_bwd}.
     */
    public static List<OpMeasurement> deepbench(Path dir, DeviceCatalog devices) {
        List<OpMeasurement> out = new ArrayList<>();
        Map<String, LayerFeatures> cache = new HashMap<>();
        int skipped = 0;
        java.util.Set<String> unknown = new java.util.TreeSet<>();
        if (present(dir.resolve("gemm.csv"))) {
            CsvTable g = CsvTable.read(dir.resolve("gemm.csv"), "benchmark", "gpu", "precision", "M", "N", "K",
                    "time_ms");
            noRows(g);
            for (int r = 0; r < g.size(); r++) {
                Optional<Device> d = trainRow(g, r, devices);
                if (d.isEmpty()) {
                    if (unknownGpu(g, r)) {
                        unknown.add(g.get(r, "gpu"));
                    }
                    skipped++;
                    continue;
                }
                org.scaledl.workload.Precision precision = precisionOf(g, r);
                long m = g.positiveInt(r, "M");
                long n = g.positiveInt(r, "N");
                long k = g.positiveInt(r, "K");
                String key = "gemm:" + m + "x" + n + "x" + k + ":" + g.get(r, "transA") + g.get(r, "transB");
                // C[M,N] = A[M,K]·B[K,N]: in NeuSight's convention that is B=1, M, N (contraction) = K, K (out) = N.
                LayerFeatures lf = cache.computeIfAbsent(key, x -> matmul(1, m, k, n, false));
                out.add(new OpMeasurement(lf, d.get(), false, kernelMillis(g, r, "time_ms"), "gemm", key,
                        OpMeasurement.Origin.BENCHMARK, precision));
            }
        }
        refuseOtherUnits(dir.resolve("gemm.csv").toString(), out);
        if (present(dir.resolve("conv.csv"))) {
            CsvTable c = CsvTable.read(dir.resolve("conv.csv"), "benchmark", "gpu", "precision", "W", "H", "C", "N",
                    "K", "S", "R", "pad_w", "pad_h", "stride_w", "stride_h", "fwd_ms");
            noRows(c);
            for (int r = 0; r < c.size(); r++) {
                Optional<Device> d = trainRow(c, r, devices);
                if (d.isEmpty()) {
                    if (unknownGpu(c, r)) {
                        unknown.add(c.get(r, "gpu"));
                    }
                    skipped++;
                    continue;
                }
                org.scaledl.workload.Precision precision = precisionOf(c, r);
                long w = c.positiveInt(r, "W");
                long h = c.positiveInt(r, "H");
                long ch = c.positiveInt(r, "C");
                long n = c.positiveInt(r, "N");
                long k = c.positiveInt(r, "K");
                long s = c.positiveInt(r, "S");
                long rr = c.positiveInt(r, "R");
                long pw = c.nonNegativeLong(r, "pad_w");
                long ph = c.nonNegativeLong(r, "pad_h");
                long sw = c.positiveInt(r, "stride_w");
                long sh = c.positiveInt(r, "stride_h");
                String key = "conv:" + n + "x" + ch + "x" + k + "x" + rr + "x" + s + "x" + sh + "x" + sw + "x" + ph
                        + "x" + pw + "x" + h + "x" + w;
                LayerFeatures fwd = cache.computeIfAbsent(key, x -> conv(n, ch, k, rr, s, sh, sw, ph, pw, h, w));
                out.add(new OpMeasurement(fwd, d.get(), false, kernelMillis(c, r, "fwd_ms"), "conv", key,
                        OpMeasurement.Origin.BENCHMARK, precision));
                Optional<String> bd = c.opt(r, "bwd_data_ms");
                Optional<String> bf = c.opt(r, "bwd_filter_ms");
                if (bd.isPresent() && bf.isPresent()) {
                    double ms = kernelMillis(c, r, "bwd_data_ms") + kernelMillis(c, r, "bwd_filter_ms");
                    out.add(new OpMeasurement(trainFeatures(key, cache, n, ch, k, rr, s, sh, sw, ph, pw, h, w), d.get(),
                            true, ms, "conv_bwd", key, OpMeasurement.Origin.BENCHMARK, precision));
                }
            }
        }
        LOG.info("DeepBench: {} rows used, {} skipped (neither FP32 nor tensor-core FP16 training, or a device "
                + "without a description)", out.size(), skipped);
        if (!unknown.isEmpty()) {
            // DeepBench's sheets name GPUs by their short names; one the catalog does not know loses its rows
            LOG.warn("{}: rows of GPUs the device catalog does not know are left out: {} (scaledl devices lists the "
                    + "catalog; --devices FILE adds a GPU)", dir, String.join(", ", unknown));
        }
        return out;
    }

    /**
     * The most times its roofline (the least time its FLOPs and bytes take at the GPU's peaks) a table's products of
     * one GPU may measure at the median: the bundled tables' medians lie between 1.1 and 3.6 (no single product
     * beyond 28), a table in microseconds is a thousand times more.
     */
    static final double MAX_MEDIAN_OVER_ROOFLINE = 100;

    /**
     * Refuses a table whose matrix products of one GPU (three or more) run a median more than
     * {@link #MAX_MEDIAN_OVER_ROOFLINE} times their roofline: its times are in another unit.
     */
    private static void refuseOtherUnits(String source, List<OpMeasurement> rows) {
        Map<String, List<Double>> byGpu = new java.util.TreeMap<>();
        for (OpMeasurement m : rows) {
            LayerFeatures f = m.features();
            if (f.family() != OpFamily.DENSE) {
                continue;
            }
            Device d = m.device();
            org.scaledl.workload.Precision runs = d.runs(m.precision()).orElse(m.precision());
            double roofline = 1e3 * Math.max(f.flopsFwd() / d.peakFlopsPerSecond(runs, true),
                    f.bytesFwd() / d.bytesPerSecond());
            if (roofline > 0 && Double.isFinite(roofline)) {
                byGpu.computeIfAbsent(d.name(), k -> new ArrayList<>()).add(m.millis() / roofline);
            }
        }
        byGpu.forEach((gpu, ratios) -> {
            if (ratios.size() < 3) {
                return;
            }
            double median = Medians.of(ratios.stream().mapToDouble(Double::doubleValue).toArray());
            if (median > MAX_MEDIAN_OVER_ROOFLINE) {
                throw InvalidInputException.inSource(source, String.format(java.util.Locale.ROOT, "its %d matrix "
                        + "products on %s take a median %.0f times their roofline (the least time their FLOPs and "
                        + "bytes take at its peaks; measured products take 1 to 4): their times are likely in "
                        + "microseconds, not milliseconds (or the GPU's catalog row overstates its peaks a thousand "
                        + "times)", ratios.size(), gpu, median));
            }
        });
    }

    /** The longest time a kernel table's row may give, ms (a kernel of hours is no measurement: a unit slip). */
    static final double MAX_KERNEL_MILLIS = 1e7;

    /** A kernel's time, ms: finite, positive, at most {@link #MAX_KERNEL_MILLIS}. */
    private static double kernelMillis(CsvTable t, int r, String column) {
        double ms = t.positiveFinite(r, column);
        if (ms > MAX_KERNEL_MILLIS) {
            throw InvalidInputException.atLine(t.source(), t.line(r), column + " " + t.get(r, column) + " is no "
                    + "kernel's time (at most " + CsvTable.plain(MAX_KERNEL_MILLIS) + " ms, some three hours): a "
                    + "unit slip?");
        }
        return ms;
    }

    /**
     * Whether a table the data root's layout names is there: a regular file; nothing there is no table; anything else
     * (a folder, a device) is refused, naming it.
     *
     * @throws InvalidInputException for a path that is there but no regular file
     */
    static boolean present(Path table) {
        if (Files.isRegularFile(table)) {
            return true;
        }
        if (Files.exists(table, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw InvalidInputException.inSource(table.toString(), "is not a file: the data root's layout names a "
                    + "table here");
        }
        return false;
    }

    /** Says a table that holds a header and no rows (its measurements are none: a file cut short?). */
    static void noRows(CsvTable t) {
        if (t.size() == 0 && !t.columns().isEmpty()) {
            LOG.warn("{}: a header and no rows: no measurements read from it", t.source());
        }
    }

    /**
     * Whether a DeepBench row {@link #trainRow} found no device for is a GPU's training row (DeepBench's sheets time
     * CPUs too, Xeon Phi's KNL7250: their device_class says so): a GPU the catalog does not know.
     */
    private static boolean unknownGpu(CsvTable t, int r) {
        return training(t, r) && (!t.has("device_class") || t.get(r, "device_class").equalsIgnoreCase("gpu"));
    }

    /** The forward (and, in training traces, backward) time of every measured tensor node of a trace. */
    public static List<OpMeasurement> traceNodes(FxTrace trace, Device device) {
        List<OpMeasurement> out = new ArrayList<>();
        ModelGraph graph = trace.graph();
        List<LayerFeatures> features = FeatureExtractor.of(graph).extract(trace.batch(), trace.phase());
        for (int i = 0; i < graph.size(); i++) {
            Layer l = graph.layer(i);
            LayerFeatures f = features.get(i);
            Optional<double[]> ms = trace.measuredMillis(l.name());
            if (ms.isEmpty() || f.family() == OpFamily.SHAPE) {
                continue;
            }
            String key = graph.name() + ":" + l.name();
            String op = "node:" + f.family().name().toLowerCase(java.util.Locale.ROOT);
            if (ms.get()[0] > 0) {
                out.add(new OpMeasurement(f, device, false, ms.get()[0], op, key, OpMeasurement.Origin.MODEL_NODE));
            }
            if (trace.phase() == Phase.TRAIN && ms.get()[1] > 0 && (f.flopsBwd() > 0 || f.bytesBwd() > 0)) {
                out.add(new OpMeasurement(f, device, true, ms.get()[1], op, key, OpMeasurement.Origin.MODEL_NODE));
            }
        }
        return out;
    }

    /**
     * The device of a training row in FP32 or in tensor-core FP16 ({@code fp16_in_fp16_mul_fp32_acc}: half-precision
     * operands, FP32 accumulation, as mixed precision runs them); other precisions (P100's FP16 storage with FP32
     * math, INT8 inference) are skipped.
     */
    private static Optional<Device> trainRow(CsvTable t, int r, DeviceCatalog devices) {
        return training(t, r) ? devices.find(t.get(r, "gpu")) : Optional.empty();
    }

    /** Whether a DeepBench row is one of the training precisions read (FP32, tensor-core FP16). */
    private static boolean training(CsvTable t, int r) {
        String p = t.get(r, "precision");
        return t.get(r, "benchmark").equals("train") && (p.equals("fp32") || p.equals(TENSOR_FP16));
    }

    /** DeepBench's label of half-precision operands multiplied on tensor cores with FP32 accumulation. */
    private static final String TENSOR_FP16 = "fp16_in_fp16_mul_fp32_acc";

    private static org.scaledl.workload.Precision precisionOf(CsvTable t, int r) {
        return t.get(r, "precision").equals(TENSOR_FP16) ? org.scaledl.workload.Precision.FP16
                : org.scaledl.workload.Precision.FP32;
    }

    private static Device device(DeviceCatalog devices, CsvTable t, int r, String name) {
        return devices.find(name).orElseThrow(() -> InvalidInputException.atLine(t.source(), t.line(r),
                "device '" + name + "' is not in the device catalog"));
    }

    private static TensorInfo input(String name, long... dims) {
        return TensorInfo.of(name, DataType.FLOAT, SymbolicShape.ofStatic(dims), TensorRole.INPUT);
    }

    private static TensorInfo param(String name, long... dims) {
        return TensorInfo.of(name, DataType.FLOAT, SymbolicShape.ofStatic(dims), TensorRole.PARAMETER);
    }

    private static TensorInfo activation(String name, long... dims) {
        return TensorInfo.of(name, DataType.FLOAT, SymbolicShape.ofStatic(dims), TensorRole.ACTIVATION);
    }

    private static LayerFeatures single(ModelGraph.Builder g, Phase phase) {
        return FeatureExtractor.of(g.output("y").build()).extract(1, phase).get(0);
    }

    /** {@code [B,M,N]·[B,N,K]}; with {@code linear} the second operand is a weight {@code [N,K]} plus bias. */
    static LayerFeatures matmul(long b, long m, long n, long k, boolean linear) {
        ModelGraph.Builder g = ModelGraph.builder(linear ? "linear" : "matmul").tensor(input("a", b, m, n))
                .tensor(activation("y", b, m, k));
        if (linear) {
            g.tensor(param("w", n, k)).tensor(param("bias", k))
                    .layer(Layer.builder("op", "MatMul").inputs("a", "w", "bias").outputs("y").build());
        } else {
            g.tensor(input("x", b, n, k)).layer(Layer.builder("op", "MatMul").inputs("a", "x").outputs("y").build());
        }
        return single(g, Phase.INFER);
    }

    private static LayerFeatures vector(String kind, long b, long h, CsvTable t, int r) {
        ModelGraph.Builder g = ModelGraph.builder(kind).tensor(input("x", b, h)).tensor(activation("y", b, h));
        String op;
        List<String> ins = new ArrayList<>(List.of("x"));
        switch (kind) {
            case "add", "mul", "pow", "div" -> {
                op = onnx(kind);
                g.tensor(input("x2", b, h));
                ins.add("x2");
            }
            case "addu", "mulu", "powu", "divu" -> {
                op = onnx(kind.substring(0, kind.length() - 1));
                g.tensor(TensorInfo.of("s", DataType.FLOAT, SymbolicShape.ofStatic(1), TensorRole.CONSTANT));
                ins.add("s");
            }
            case "relu" -> op = "Relu";
            case "gelu" -> op = "Gelu";
            case "tanh" -> op = "Tanh";
            case "ln" -> {
                op = "LayerNormalization";
                g.tensor(param("gamma", h)).tensor(param("beta", h));
                ins.add("gamma");
                ins.add("beta");
            }
            case "softmax" -> op = "Softmax";
            default -> throw InvalidInputException.atLine(t.source(), t.line(r), "unknown element-wise op '" + kind
                    + "'");
        }
        g.layer(Layer.builder("op", op).inputs(ins).outputs("y").attribute("axis", Attribute.ofInt(-1)).build());
        return single(g, Phase.INFER);
    }

    private static String onnx(String kind) {
        return switch (kind) {
            case "add" -> "Add";
            case "mul" -> "Mul";
            case "pow" -> "Pow";
            default -> "Div";
        };
    }

    /**
     * A one-convolution graph; with {@code inputNeedsGradient} the input is declared a weight, so that training
     * features count the data gradient too (DeepBench times both data and filter gradients).
     */
    private static ModelGraph.Builder convGraph(long n, long c, long k, long kh, long kw, long sh, long sw, long ph,
            long pw, long h, long w, boolean inputNeedsGradient) {
        long oh = (h + 2 * ph - kh) / sh + 1;
        long ow = (w + 2 * pw - kw) / sw + 1;
        if (oh <= 0 || ow <= 0) {
            throw InvalidInputException.of("convolution " + kh + "x" + kw + " does not fit a " + h + "x" + w
                    + " input with padding " + ph + "x" + pw);
        }
        return ModelGraph.builder("conv").tensor(inputNeedsGradient ? param("x", n, c, h, w) : input("x", n, c, h, w))
                .tensor(param("w", k, c, kh, kw)).tensor(activation("y", n, k, oh, ow))
                .layer(Layer.builder("op", "Conv").inputs("x", "w").outputs("y")
                        .attribute("kernel_shape", Attribute.ofInts(kh, kw))
                        .attribute("strides", Attribute.ofInts(sh, sw))
                        .attribute("pads", Attribute.ofInts(ph, pw, ph, pw)).build());
    }

    static LayerFeatures conv(long n, long c, long k, long kh, long kw, long sh, long sw, long ph, long pw, long h,
            long w) {
        return single(convGraph(n, c, k, kh, kw, sh, sw, ph, pw, h, w, false), Phase.INFER);
    }

    /** Training features of a convolution whose data and filter gradients are both computed. */
    private static LayerFeatures trainFeatures(String key, Map<String, LayerFeatures> cache, long n, long c, long k,
            long kh, long kw, long sh, long sw, long ph, long pw, long h, long w) {
        return cache.computeIfAbsent(key + ":train", x -> single(convGraph(n, c, k, kh, kw, sh, sw, ph, pw, h, w,
                true), Phase.TRAIN));
    }
}
