package org.scaledl.onnx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Coverage;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads an ONNX model file into a {@link ModelGraph}, inferring every tensor's shape itself.
 *
 * <pre>{@code
 * ModelGraph g = OnnxImporter.read(Path.of("resnet50_r112.onnx"));
 * long params = g.parameterCount();   // equals PyTorch's sum(p.numel())
 * }</pre>
 *
 * <p><b>Inputs and weights.</b> A graph input with a symbolic (or unknown) dimension is a data input
 * ({@link TensorRole#INPUT}); its first symbolic dimension is the batch. If no input is symbolic, the first
 * non-initializer input is the data input. All other inputs and all initializers are weights: floating-point ones
 * are {@link TensorRole#PARAMETER}s except BatchNormalization running statistics and rank-0 initializers; integral
 * ones are {@link TensorRole#BUFFER}s. So graph-only exports ({@code export_params=False}) and exports with
 * initializers give the same parameter count.
 *
 * <p><b>Shapes.</b> {@code value_info} is not trusted: shapes (and the values of small integer tensors, so that
 * {@code Shape -> Gather -> Concat -> Reshape} chains resolve) are inferred per operator at batch sizes 2 and 3 and
 * checked at 7, giving dimensions affine in the batch. The supported operators are listed in
 * {@link #supportedOperators()}. A node of any other operator is kept (never dropped) with a logged warning; its
 * output shapes come from {@code value_info} when present and are otherwise unknown, as are the shapes downstream.
 *
 * <p><b>Hostile input.</b> Truncated files, absurd lengths, cycles and dangling tensors raise
 * {@link InvalidInputException} naming the file (and node); the parser never allocates more than the file's size.
 */
public final class OnnxImporter {
    private static final Logger LOG = LoggerFactory.getLogger(OnnxImporter.class);
    private static final long[] BATCHES = {2, 3, 7};
    private static final long MAX_FILE_BYTES = Integer.MAX_VALUE - 16;

    private OnnxImporter() {
    }

    /**
     * Reads an ONNX file; the graph is named after the file (without {@code .onnx}).
     *
     * @throws InvalidInputException if the file cannot be read or is not a valid model
     */
    public static ModelGraph read(Path path) {
        return read(path, Options.defaults());
    }

    /**
     * Reads an ONNX file with options (named dimensions, the fixed-batch policy).
     *
     * @throws InvalidInputException if the file cannot be read or is not a valid model, or a symbolic dimension
     *         other than the batch is not bound (the message lists the names to bind)
     */
    public static ModelGraph read(Path path, Options options) {
        byte[] bytes = readBytes(path);
        String name = path.getFileName().toString().replaceFirst("\\.onnx$", "");
        return read(bytes, name, path.toString(), options);
    }

    /**
     * Reads an ONNX model from memory.
     *
     * @param bytes  the serialized {@code ModelProto}
     * @param name   the graph's name
     * @param source what to call the bytes in error messages (a file name)
     * @throws InvalidInputException if the bytes are not a valid model
     */
    public static ModelGraph read(byte[] bytes, String name, String source) {
        return read(bytes, name, source, Options.defaults());
    }

    /**
     * Reads an ONNX model from memory with options.
     *
     * @throws InvalidInputException if the bytes are not a valid model or a named dimension is not bound
     */
    public static ModelGraph read(byte[] bytes, String name, String source, Options options) {
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(options, "options");
        OnnxWire.Model model = parse(bytes, source);
        try {
            return new Conversion(model.graph(), name, source, options).run();
        } catch (InvalidInputException e) {
            throw e;
        } catch (RuntimeException e) {
            // A structurally valid protobuf whose content contradicts ONNX (an attribute of the wrong kind, an
            // impossible tensor): report it as bad input, never as an internal failure.
            throw InvalidInputException.wrap(source, "invalid ONNX content: " + e, e);
        }
    }

    /**
     * The shapes the file itself declares in {@code value_info}, graph inputs and outputs, with dimensions named like
     * the batch symbol mapped to {@link Dim#batch()}. Tensors with any other symbolic dimension are left out. Meant
     * for cross-checking the importer's own inference.
     */
    public static Map<String, SymbolicShape> declaredShapes(Path path) {
        OnnxWire.Model model = parse(readBytes(path), path.toString());
        OnnxWire.Graph g = model.graph();
        String batch = batchSymbol(g).orElse("batch");
        Map<String, SymbolicShape> out = new LinkedHashMap<>();
        List<OnnxWire.ValueInfo> all = new ArrayList<>(g.inputs());
        all.addAll(g.valueInfo());
        all.addAll(g.outputs());
        outer:
        for (OnnxWire.ValueInfo v : all) {
            if (!v.hasShape()) {
                continue;
            }
            List<Dim> dims = new ArrayList<>();
            for (OnnxWire.Dimension d : v.dims()) {
                if (d.isKnown()) {
                    dims.add(Dim.of(d.value()));
                } else if (batch.equals(d.param())) {
                    dims.add(Dim.batch());
                } else {
                    continue outer;
                }
            }
            out.put(v.name(), SymbolicShape.of(dims));
        }
        return out;
    }

    /** Operator types whose shapes (and FLOPs) the importer infers. */
    public static List<String> supportedOperators() {
        return ShapeInference.SUPPORTED;
    }

    private static byte[] readBytes(Path path) {
        try {
            long size = Files.size(path);
            if (size > MAX_FILE_BYTES) {
                throw InvalidInputException.inSource(path.toString(), "file of " + size + " bytes is too large");
            }
            return Files.readAllBytes(path);
        } catch (IOException e) {
            throw InvalidInputException.unreadable(path, "cannot read", e);
        }
    }

    private static OnnxWire.Model parse(byte[] bytes, String source) {
        try {
            return OnnxWire.parseModel(bytes);
        } catch (IOException | RuntimeException e) {
            throw InvalidInputException.wrap(source, "not a valid ONNX model: " + e.getMessage(), e);
        }
    }

    private static Optional<String> batchSymbol(OnnxWire.Graph g) {
        for (OnnxWire.ValueInfo v : g.inputs()) {
            for (OnnxWire.Dimension d : v.dims()) {
                if (d.param() != null && !d.param().isEmpty()) {
                    return Optional.of(d.param());
                }
            }
        }
        return Optional.empty();
    }

    /** What to do with an export whose data input has a fixed first dimension (no {@code dynamic_axes}). */
    public enum FixedBatch {
        /**
         * Treat the fixed first dimension as the batch (logged once, and recorded in {@link Coverage#exportedBatch});
         * refuse, saying how to re-export, when the graph does not work at other batch sizes (a batch baked into a
         * reshape, say).
         */
        AS_BATCH,
        /** Refuse the file, saying how to re-export it with a symbolic batch. */
        REFUSE
    }

    /**
     * Import options: values for named symbolic dimensions other than the batch, and the fixed-batch policy.
     *
     * <pre>{@code
     * ModelGraph g = OnnxImporter.read(path, OnnxImporter.Options.builder().dim("seq", 128).build());
     * }</pre>
     *
     * @param dimensions values of named dimensions ({@code seq=128}); the batch symbol cannot be bound
     * @param fixedBatch what to do with a fixed batch dimension
     */
    public record Options(Map<String, Long> dimensions, FixedBatch fixedBatch) {
        private static final Options DEFAULTS = new Options(Map.of(), FixedBatch.AS_BATCH);

        /** Validates and copies. */
        public Options {
            dimensions = Map.copyOf(dimensions);
            dimensions.forEach((k, v) -> Checks.argument(!k.isEmpty() && v != null && v > 0,
                    "dimension '%s' must be bound to a positive size, got %s", k, v));
            Objects.requireNonNull(fixedBatch, "fixedBatch");
        }

        /** No bound dimensions; a fixed batch dimension is treated as the batch. */
        public static Options defaults() {
            return DEFAULTS;
        }

        /** Starts options. */
        public static Builder builder() {
            return new Builder();
        }

        /** Builds {@link Options}. */
        public static final class Builder {
            private final Map<String, Long> dims = new LinkedHashMap<>();
            private FixedBatch fixed = FixedBatch.AS_BATCH;

            private Builder() {
            }

            /** Binds a named dimension ({@code dim("seq", 128)}). */
            public Builder dim(String name, long size) {
                Checks.argument(size > 0, "dimension '%s' must be positive: %s", name, size);
                dims.put(Objects.requireNonNull(name), size);
                return this;
            }

            /** Binds several named dimensions. */
            public Builder dims(Map<String, Long> values) {
                values.forEach(this::dim);
                return this;
            }

            /** The fixed-batch policy (default {@link FixedBatch#AS_BATCH}). */
            public Builder fixedBatch(FixedBatch value) {
                this.fixed = Objects.requireNonNull(value);
                return this;
            }

            /** The options. */
            public Options build() {
                return new Options(dims, fixed);
            }
        }
    }

    /** One import: classification, ordering, inference at several batch sizes, assembly. */
    private static final class Conversion {
        private final OnnxWire.Graph g;
        private final String name;
        private final String source;
        private final Options options;
        private final Map<String, OnnxWire.Tensor> initializers = new LinkedHashMap<>();
        private final Map<String, OnnxWire.ValueInfo> valueInfo = new HashMap<>();
        private final Map<String, TensorRole> roles = new LinkedHashMap<>();
        private final Map<String, Integer> batchAxis = new HashMap<>();
        /** The symbol of the batch dimension, when the data input has a symbolic one. */
        private String batchSymbol;
        /** The fixed first dimension of the data input treated as the batch, or -1. */
        private long exportedBatch = -1;
        /** Per layer name: why its outputs are unknown (first batch size's run). */
        private final Map<String, String> problems = new LinkedHashMap<>();
        private final Set<String> unsupported = new java.util.TreeSet<>();
        private final Set<String> fromValueInfo = new LinkedHashSet<>();

        Conversion(OnnxWire.Graph g, String name, String source, Options options) {
            this.g = g;
            this.name = name;
            this.source = source;
            this.options = options;
        }

        ModelGraph run() {
            for (OnnxWire.Tensor t : g.initializers()) {
                if (!t.wellFormed()) {
                    throw InvalidInputException.atNode(source, t.name(), "initializer holds no data, or less or more "
                            + "than its dims " + Arrays.toString(t.dims()) + " say");
                }
                initializers.put(t.name(), t);
            }
            for (OnnxWire.ValueInfo v : g.valueInfo()) {
                valueInfo.put(v.name(), v);
            }
            for (OnnxWire.ValueInfo v : g.outputs()) {
                valueInfo.putIfAbsent(v.name(), v);
            }
            List<Layer> layers = layers();
            classify(layers);
            // Validate and order once with shape-less tensors.
            ModelGraph skeleton = assemble(layers, Map.of(), Map.of(), null);
            List<Map<String, Val>> runs = new ArrayList<>();
            Map<String, SymbolicShape> shapes = new HashMap<>();
            Map<String, DataType> types = new HashMap<>();
            try {
                for (long b : BATCHES) {
                    runs.add(infer(skeleton, b, runs.isEmpty()));
                }
                for (Map.Entry<String, Val> e : runs.get(0).entrySet()) {
                    String t = e.getKey();
                    Val a = e.getValue();
                    types.put(t, a.type());
                    Val b = runs.get(1).get(t);
                    Val c = runs.get(2).get(t);
                    if (a == null || b == null || c == null) {
                        continue;
                    }
                    shapes.put(t, affine(skeleton, t, a.shape(), b.shape(), c.shape()));
                }
            } catch (InvalidInputException e) {
                if (exportedBatch < 0) {
                    throw e;
                }
                throw InvalidInputException.inSource(source, "the data input has the fixed batch size "
                        + exportedBatch + " (exported without dynamic_axes), and the graph does not work at other "
                        + "batch sizes (" + e.detail() + "); re-export with torch.onnx.export(..., "
                        + "dynamic_axes={'<input name>': {0: 'batch'}}) so that the batch is symbolic");
            }
            ModelGraph graph = assemble(layers, shapes, types, null);
            Coverage coverage = coverage(graph);
            if (!coverage.isComplete()) {
                LOG.warn("{}: {}", source, coverage.summary());
            } else if (!coverage.fromValueInfo().isEmpty()) {
                LOG.info("{}: {} layers' shapes taken from value_info", source, coverage.fromValueInfo().size());
            }
            return assemble(layers, shapes, types, coverage);
        }

        private Coverage coverage(ModelGraph graph) {
            List<String> unresolved = new ArrayList<>();
            double unresolvedBytes = 0;
            double allBytes = 0;
            for (Layer l : graph.layers()) {
                boolean unknown = false;
                double bytes = 0;
                List<String> tensors = new ArrayList<>(l.inputs());
                tensors.addAll(l.outputs());
                for (String t : tensors) {
                    if (t.isEmpty()) {
                        continue;
                    }
                    Optional<TensorInfo> info = graph.tensor(t);
                    if (info.isPresent() && info.get().shape().isPresent()) {
                        bytes += info.get().bytes(1);
                    } else if (l.outputs().contains(t)) {
                        unknown = true;
                    }
                }
                allBytes += bytes;
                if (unknown) {
                    unresolved.add(l.name());
                    unresolvedBytes += bytes;
                }
            }
            String first = unresolved.isEmpty() ? "" : problems.getOrDefault(unresolved.get(0),
                    "an input's shape is unknown");
            Map<String, Long> bound = new LinkedHashMap<>(options.dimensions());
            return new Coverage(graph.size(), unresolved, List.copyOf(unsupported), List.copyOf(fromValueInfo),
                    graph.size() == 0 ? 0 : (double) unresolved.size() / graph.size(),
                    allBytes == 0 ? 0 : Math.min(1, unresolvedBytes / allBytes),
                    exportedBatch >= 0 ? java.util.OptionalLong.of(exportedBatch) : java.util.OptionalLong.empty(),
                    bound, first);
        }

        private SymbolicShape affine(ModelGraph skeleton, String tensor, long[] s2, long[] s3, long[] s7) {
            String node = skeleton.producerOf(tensor).map(i -> skeleton.layer(i).name()).orElse(tensor);
            if (s2.length != s3.length || s2.length != s7.length) {
                throw InvalidInputException.atNode(source, node,
                        "rank of '" + tensor + "' depends on the batch size");
            }
            List<Dim> dims = new ArrayList<>(s2.length);
            for (int d = 0; d < s2.length; d++) {
                long per = s3[d] - s2[d];
                long c = s2[d] - BATCHES[0] * per;
                if (per * BATCHES[2] + c != s7[d]) {
                    throw InvalidInputException.atNode(source, node, "dimension " + d + " of '" + tensor
                            + "' is not affine in the batch size: " + s2[d] + ", " + s3[d] + ", " + s7[d]
                            + " at batch " + Arrays.toString(BATCHES));
                }
                dims.add(new Dim(per, c));
            }
            return SymbolicShape.of(dims);
        }

        private List<Layer> layers() {
            List<Layer> out = new ArrayList<>(g.nodes().size());
            Set<String> names = new HashSet<>();
            int i = 0;
            for (OnnxWire.Node n : g.nodes()) {
                String base = n.name().isEmpty() ? (n.opType().isEmpty() ? "node" : n.opType()) + "_" + i : n.name();
                String unique = base;
                for (int k = 2; !names.add(unique); k++) {
                    unique = base + "#" + k;
                }
                if (n.opType().isEmpty()) {
                    throw InvalidInputException.atNode(source, unique, "node has no op_type");
                }
                Layer.Builder b = Layer.builder(unique, n.opType()).domain(n.domain()).inputs(n.inputs())
                        .outputs(n.outputs());
                n.attributes().forEach(b::attribute);
                out.add(b.build());
                i++;
            }
            return out;
        }

        private static boolean symbolic(OnnxWire.Dimension d) {
            return !d.isKnown();
        }

        private void classify(List<Layer> layers) {
            Set<String> bnStats = new HashSet<>();
            for (Layer l : layers) {
                if (l.opType().equals("BatchNormalization")) {
                    l.input(3).ifPresent(bnStats::add);
                    l.input(4).ifPresent(bnStats::add);
                }
            }
            List<OnnxWire.ValueInfo> graphInputs = new ArrayList<>();
            for (OnnxWire.ValueInfo v : g.inputs()) {
                if (!initializers.containsKey(v.name())) {
                    graphInputs.add(v);
                }
            }
            Set<String> data = new LinkedHashSet<>();
            for (OnnxWire.ValueInfo v : graphInputs) {
                if (!v.hasShape() || v.dims().stream().anyMatch(Conversion::symbolic)) {
                    data.add(v.name());
                }
            }
            // The batch: the first symbolic dimension of the first data input that has one.
            for (OnnxWire.ValueInfo v : graphInputs) {
                if (data.contains(v.name())) {
                    for (OnnxWire.Dimension d : v.dims()) {
                        if (symbolic(d)) {
                            batchSymbol = d.param() == null ? "" : d.param();
                            break;
                        }
                    }
                    if (batchSymbol != null) {
                        break;
                    }
                }
            }
            if (batchSymbol != null && !batchSymbol.isEmpty() && options.dimensions().containsKey(batchSymbol)) {
                throw InvalidInputException.inSource(source, "'" + batchSymbol + "' is the batch dimension, which "
                        + "is a setting of each workload, not of the import; bind only the other dimensions");
            }
            if (data.isEmpty() && !graphInputs.isEmpty()) {
                OnnxWire.ValueInfo first = graphInputs.get(0);
                data.add(first.name());
                if (first.hasShape() && !first.dims().isEmpty()) {
                    exportedBatch = first.dims().get(0).value();
                    if (options.fixedBatch() == FixedBatch.REFUSE) {
                        throw InvalidInputException.inSource(source, "input '" + first.name() + "' has the fixed "
                                + "batch size " + exportedBatch + " (exported without dynamic_axes); re-export with "
                                + "torch.onnx.export(..., dynamic_axes={'" + first.name() + "': {0: 'batch'}})");
                    }
                    LOG.warn("{}: input '{}' has a fixed first dimension ({}, an export without dynamic_axes); it is "
                            + "treated as the batch", source, first.name(), exportedBatch);
                    batchAxis.put(first.name(), 0);
                }
            }
            List<String> unbound = new ArrayList<>();
            for (OnnxWire.ValueInfo v : graphInputs) {
                if (data.contains(v.name())) {
                    roles.put(v.name(), TensorRole.INPUT);
                    for (int d = 0; d < v.dims().size(); d++) {
                        OnnxWire.Dimension dim = v.dims().get(d);
                        if (!symbolic(dim)) {
                            continue;
                        }
                        String p = dim.param() == null ? "" : dim.param();
                        if (p.equals(batchSymbol) && !batchAxis.containsKey(v.name())) {
                            batchAxis.put(v.name(), d);
                        } else if (p.isEmpty() || !p.equals(batchSymbol) && !options.dimensions().containsKey(p)) {
                            String label = p.isEmpty() ? "dimension " + d + " of input '" + v.name() + "' (unnamed)"
                                    : p;
                            if (!unbound.contains(label)) {
                                unbound.add(label);
                            }
                        }
                    }
                    continue;
                }
                DataType type = DataType.fromOnnx(v.elemType()).orElse(DataType.UNDEFINED);
                roles.put(v.name(), weightRole(type, v.dims().size(), bnStats.contains(v.name())));
            }
            if (!unbound.isEmpty()) {
                throw InvalidInputException.inSource(source, "symbolic dimensions other than the batch"
                        + (batchSymbol == null || batchSymbol.isEmpty() ? "" : " ('" + batchSymbol + "')")
                        + " must be bound: " + String.join(", ", unbound) + " (API: OnnxImporter.Options.builder()"
                        + ".dim(name, size); CLI: --dim name=size)");
            }
            for (OnnxWire.Tensor t : initializers.values()) {
                DataType type = DataType.fromOnnx(t.dataType()).orElse(DataType.UNDEFINED);
                roles.put(t.name(), weightRole(type, t.dims().length, bnStats.contains(t.name())));
            }
        }

        private static TensorRole weightRole(DataType type, int rank, boolean bnStat) {
            if (!type.isFloating() || bnStat) {
                return TensorRole.BUFFER;
            }
            return rank == 0 ? TensorRole.CONSTANT : TensorRole.PARAMETER;
        }

        /** The concrete size of a declared dimension at a batch size, or -1 when it is not determined. */
        private long size(OnnxWire.Dimension dim, long batch) {
            if (dim.isKnown()) {
                return dim.value();
            }
            String p = dim.param() == null ? "" : dim.param();
            if (!p.isEmpty() && p.equals(batchSymbol)) {
                return batch;
            }
            Long bound = options.dimensions().get(p);
            return bound == null ? -1 : bound;
        }

        private Map<String, Val> infer(ModelGraph skeleton, long batch, boolean record) {
            Map<String, Val> vals = new HashMap<>();
            for (OnnxWire.ValueInfo v : g.inputs()) {
                if (initializers.containsKey(v.name())) {
                    continue;
                }
                DataType type = DataType.fromOnnx(v.elemType()).orElse(DataType.FLOAT);
                if (!v.hasShape()) {
                    throw InvalidInputException.atNode(source, v.name(), "graph input has no shape");
                }
                long[] shape = new long[v.dims().size()];
                Integer axis = batchAxis.get(v.name());
                for (int d = 0; d < shape.length; d++) {
                    shape[d] = axis != null && axis == d ? batch : size(v.dims().get(d), batch);
                    if (shape[d] < 0) {
                        throw InvalidInputException.atNode(source, v.name(), "dimension " + d + " ('"
                                + v.dims().get(d).param() + "') is symbolic and not bound");
                    }
                }
                vals.put(v.name(), new Val(type, shape, null));
            }
            for (OnnxWire.Tensor t : initializers.values()) {
                DataType type = DataType.fromOnnx(t.dataType()).orElse(DataType.FLOAT);
                vals.put(t.name(), new Val(type, t.dims(), t.value().orElse(null)));
            }
            for (Layer l : skeleton.layers()) {
                List<Val> ins = new ArrayList<>(l.inputs().size());
                for (String i : l.inputs()) {
                    ins.add(i.isEmpty() ? null : vals.get(i));
                }
                List<Val> outs;
                try {
                    outs = ShapeInference.infer(source, l, ins).orElse(null);
                    if (outs == null) {
                        if (record) {
                            unsupported.add(l.opType() + (l.domain().isEmpty() || l.domain().equals("ai.onnx") ? ""
                                    : " (" + l.domain() + ")"));
                            problems.putIfAbsent(l.name(), "operator " + l.opType() + " is not supported");
                            LOG.debug("{}: node '{}': operator {} is not supported: kept as a generic node", source,
                                    l.name(), l.opType());
                        }
                        outs = fromValueInfo(l, batch, record);
                    }
                } catch (Unknown e) {
                    if (record) {
                        problems.putIfAbsent(l.name(), e.getMessage());
                        LOG.debug("{}: node '{}': output shape unknown: {}", source, l.name(), e.getMessage());
                    }
                    outs = fromValueInfo(l, batch, record);
                }
                for (int k = 0; k < l.outputs().size() && k < outs.size(); k++) {
                    if (!l.outputs().get(k).isEmpty() && outs.get(k) != null) {
                        vals.put(l.outputs().get(k), outs.get(k));
                    }
                }
            }
            return vals;
        }

        /**
         * The output shapes the file declares for a layer the importer cannot infer: used only when every
         * dimension is a number, the batch symbol or a bound name (so, consistent with this import's sizes).
         */
        private List<Val> fromValueInfo(Layer l, long batch, boolean record) {
            List<Val> out = new ArrayList<>();
            boolean any = false;
            for (String o : l.outputs()) {
                OnnxWire.ValueInfo v = valueInfo.get(o);
                Val val = null;
                if (v != null && v.hasShape()) {
                    long[] s = new long[v.dims().size()];
                    boolean ok = true;
                    for (int d = 0; d < s.length && ok; d++) {
                        s[d] = size(v.dims().get(d), batch);
                        ok = s[d] >= 0;
                    }
                    if (ok) {
                        val = new Val(DataType.fromOnnx(v.elemType()).orElse(DataType.FLOAT), s, null);
                        any = true;
                    }
                }
                out.add(val);
            }
            if (any && record) {
                fromValueInfo.add(l.name());
            }
            return out;
        }

        private ModelGraph assemble(List<Layer> layers, Map<String, SymbolicShape> shapes,
                Map<String, DataType> types, Coverage coverage) {
            ModelGraph.Builder b = ModelGraph.builder(name).source(source);
            if (coverage != null) {
                b.coverage(coverage);
            }
            for (OnnxWire.ValueInfo v : g.inputs()) {
                if (!initializers.containsKey(v.name())) {
                    DataType type = DataType.fromOnnx(v.elemType()).orElse(DataType.FLOAT);
                    b.tensor(new TensorInfo(v.name(), type, Optional.ofNullable(shapes.get(v.name())),
                            roles.get(v.name())));
                }
            }
            for (OnnxWire.Tensor t : initializers.values()) {
                DataType type = DataType.fromOnnx(t.dataType()).orElse(DataType.FLOAT);
                b.tensor(TensorInfo.of(t.name(), type, SymbolicShape.ofStatic(t.dims()), roles.get(t.name())));
            }
            for (Layer l : layers) {
                boolean constant = l.opType().equals("Constant");
                for (String o : l.outputs()) {
                    if (o.isEmpty()) {
                        continue;
                    }
                    if (roles.containsKey(o)) {
                        throw InvalidInputException.atNode(source, l.name(),
                                "output '" + o + "' is also a graph input or initializer");
                    }
                    DataType type = types.getOrDefault(o, declaredType(o));
                    b.tensor(new TensorInfo(o, type, Optional.ofNullable(shapes.get(o)),
                            constant ? TensorRole.CONSTANT : TensorRole.ACTIVATION));
                }
                b.layer(l);
            }
            for (OnnxWire.ValueInfo v : g.outputs()) {
                b.output(v.name());
            }
            return b.build();
        }

        private DataType declaredType(String tensor) {
            OnnxWire.ValueInfo v = valueInfo.get(tensor);
            return v == null ? DataType.FLOAT : DataType.fromOnnx(v.elemType()).orElse(DataType.FLOAT);
        }
    }
}
