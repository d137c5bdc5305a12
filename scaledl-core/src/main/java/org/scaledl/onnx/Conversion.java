package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Coverage;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.onnx.OnnxImporter.Options;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One import: classification of the inputs ({@link DataInputs}), ordering, inference at several batch sizes, size
 * checks, assembly. Every step is linear in the size of the parsed model ({@link ImportWork} counts them).
 */
final class Conversion {
    private static final Logger LOG = LoggerFactory.getLogger(Conversion.class);
    /** Batch sizes inferred: dims are fitted as affine in the batch at the first two and checked at the third. */
    static final long[] BATCHES = {2, 3, 7};

    private final OnnxWire.Graph g;
    private final long opset;
    private final String name;
    private final String source;
    private final Options options;
    private final ImportWork work;
    private final Map<String, OnnxWire.Tensor> initializers = new LinkedHashMap<>();
    private final Map<String, OnnxWire.ValueInfo> valueInfo = new HashMap<>();
    private final Map<String, TensorRole> roles = new LinkedHashMap<>();
    /** The first node that reads each tensor, to locate problems with graph inputs and initializers. */
    private final Map<String, String> firstConsumer = new HashMap<>();
    private DataInputs inputs;
    /** Per layer name: why its outputs are unknown (first batch size's run). */
    private final Map<String, String> problems = new LinkedHashMap<>();
    private final Set<String> unsupported = new TreeSet<>();
    private final Set<String> fromValueInfo = new LinkedHashSet<>();
    private final List<String> notes = new ArrayList<>();

    Conversion(OnnxWire.Model model, String name, String source, Options options, ImportWork work) {
        this.g = model.graph();
        this.opset = model.opset() < 0 ? ShapeInference.LATEST_OPSET : model.opset();
        this.name = name;
        this.source = source;
        this.options = options;
        this.work = work;
        if (model.opset() > ShapeInference.LATEST_OPSET) {
            String note = "opset " + model.opset() + " is newer than the importer knows ("
                    + ShapeInference.LATEST_OPSET + "): operators whose inputs or attributes changed after opset "
                    + ShapeInference.LATEST_OPSET + " are read in their opset-" + ShapeInference.LATEST_OPSET
                    + " form";
            LOG.warn("{}: {}", source, note);
            notes.add(note);
        }
    }

    ModelGraph run() {
        List<Layer> layers = layers();
        for (Layer l : layers) {
            for (String i : l.inputs()) {
                if (!i.isEmpty()) {
                    firstConsumer.putIfAbsent(i, l.name());
                }
            }
        }
        for (OnnxWire.Tensor t : g.initializers()) {
            if (t.problem().isPresent()) {
                throw InvalidInputException.atNode(source, nodeOf(t.name()), "initializer '" + t.name() + "': "
                        + t.problem().get());
            }
            initializers.put(t.name(), t);
        }
        for (OnnxWire.ValueInfo v : g.valueInfo()) {
            valueInfo.put(v.name(), v);
        }
        for (OnnxWire.ValueInfo v : g.outputs()) {
            valueInfo.putIfAbsent(v.name(), v);
        }
        classify(layers);
        checkWeights();
        noteHalfPrecision();
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
                if (b == null || c == null) {
                    continue;
                }
                shapes.put(t, affine(skeleton, t, a, b.shape(), c.shape()));
            }
        } catch (InvalidInputException e) {
            throw fixedBatchAdvice(skeleton, e);
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

    /**
     * A failure at the inference batch sizes of an export with a fixed batch: when the graph works at its own
     * batch size, the batch is baked into it (a reshape, say) and the advice is to re-export; otherwise the graph
     * is broken whatever the batch, and the failure stands.
     */
    private InvalidInputException fixedBatchAdvice(ModelGraph skeleton, InvalidInputException e) {
        long exported = inputs.exportedBatch();
        if (exported <= 0) {
            return e;
        }
        try {
            infer(skeleton, exported, false);
        } catch (InvalidInputException atExported) {
            return e;
        }
        return InvalidInputException.atNode(source, e.node().orElse(null), "the data input has the fixed batch "
                + "size " + exported + " (exported without dynamic_axes), and the graph does not work at other "
                + "batch sizes (" + e.detail() + "); re-export with torch.onnx.export(..., "
                + "dynamic_axes={'<input name>': {0: 'batch'}}) so that the batch is symbolic");
    }

    /** The node to name for a problem with a graph input or initializer: its first reader, else the tensor. */
    private String nodeOf(String tensor) {
        return firstConsumer.getOrDefault(tensor, tensor);
    }

    /**
     * Weights whose sizes overflow: each initializer's bytes, and the parameter count summed as {@link ModelGraph}
     * does (initializers and weight inputs), must fit a {@code long}.
     */
    private void checkWeights() {
        long params = 0;
        Map<String, long[]> weights = new LinkedHashMap<>();
        for (OnnxWire.Tensor t : initializers.values()) {
            work.step(t.dims().length);
            DataType type = DataType.fromOnnx(t.dataType()).orElse(DataType.UNDEFINED);
            if (ShapeInference.bytes(type, t.dims()) < 0) {
                throw InvalidInputException.atNode(source, nodeOf(t.name()), "initializer '" + t.name()
                        + "' of dims " + Arrays.toString(t.dims()) + " would hold more than 2^63 bytes");
            }
            weights.put(t.name(), t.dims());
        }
        for (OnnxWire.ValueInfo v : g.inputs()) {
            if (roles.get(v.name()) == TensorRole.PARAMETER && !weights.containsKey(v.name())) {
                weights.put(v.name(), v.dims().stream().mapToLong(OnnxWire.Dimension::value).toArray());
            }
        }
        for (Map.Entry<String, long[]> w : weights.entrySet()) {
            if (roles.get(w.getKey()) != TensorRole.PARAMETER) {
                continue;
            }
            long n = ShapeInference.bytes(DataType.UINT8, w.getValue());
            if (n < 0) {
                throw InvalidInputException.atNode(source, nodeOf(w.getKey()), "weight '" + w.getKey()
                        + "' of dims " + Arrays.toString(w.getValue()) + " has more than 2^63 elements");
            }
            if (n > Long.MAX_VALUE - params) {
                throw InvalidInputException.atNode(source, nodeOf(w.getKey()), "parameter '" + w.getKey()
                        + "' of dims " + Arrays.toString(w.getValue()) + " takes the parameter count past 2^63");
            }
            params += n;
        }
    }

    /**
     * A note (and a warning) for exports whose floating-point tensors are half precision: the importer keeps their
     * types, so byte counts use two bytes an element, but nothing in a workload says that it runs in half
     * precision: the predictors were fitted on measured runs, whose precision the export does not change.
     */
    private void noteHalfPrecision() {
        Map<DataType, Integer> half = new LinkedHashMap<>();
        int floating = 0;
        List<DataType> types = new ArrayList<>();
        initializers.values().forEach(t -> types.add(DataType.fromOnnx(t.dataType()).orElse(DataType.UNDEFINED)));
        for (OnnxWire.ValueInfo v : g.inputs()) {
            if (!initializers.containsKey(v.name())) {
                types.add(DataType.fromOnnx(v.elemType()).orElse(DataType.UNDEFINED));
            }
        }
        for (DataType t : types) {
            if (t.isFloating()) {
                floating++;
            }
            if (t == DataType.FLOAT16 || t == DataType.BFLOAT16) {
                half.merge(t, 1, Integer::sum);
            }
        }
        if (half.isEmpty()) {
            return;
        }
        StringBuilder b = new StringBuilder();
        half.forEach((t, n) -> b.append(b.length() == 0 ? "" : " and ").append(n).append(' ').append(t));
        String note = b + " of the " + floating + " floating-point inputs and weights: a half-precision export "
                + "does not make a half-precision prediction; the predicted time comes from the predictor's measured "
                + "runs and the workload (batch, phase, device), not from the export's element types, which only "
                + "set the byte counts (2 bytes an element)";
        LOG.warn("{}: {}", source, note);
        notes.add(note);
    }

    private Coverage coverage(ModelGraph graph) {
        List<String> unresolved = new ArrayList<>();
        double unresolvedBytes = 0;
        double allBytes = 0;
        for (Layer l : graph.layers()) {
            boolean unknown = false;
            double bytes = 0;
            Set<String> outputs = l.outputs().size() > 4 ? new HashSet<>(l.outputs()) : null;
            List<String> tensors = new ArrayList<>(l.inputs());
            tensors.addAll(l.outputs());
            for (String t : tensors) {
                if (t.isEmpty()) {
                    continue;
                }
                Optional<TensorInfo> info = graph.tensor(t);
                if (info.isPresent() && info.get().shape().isPresent()) {
                    bytes += info.get().bytes(1);
                } else if (outputs != null ? outputs.contains(t) : l.outputs().contains(t)) {
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
        long exported = inputs.exportedBatch();
        return new Coverage(graph.size(), unresolved, List.copyOf(unsupported), List.copyOf(fromValueInfo),
                graph.size() == 0 ? 0 : (double) unresolved.size() / graph.size(),
                allBytes == 0 ? 0 : Math.min(1, unresolvedBytes / allBytes),
                exported >= 0 ? OptionalLong.of(exported) : OptionalLong.empty(), bound, first, notes);
    }

    /**
     * The dims of a tensor as affine functions of the batch, fitted at {@link #BATCHES}[0..1] and checked at
     * {@link #BATCHES}[2]. Its bytes must fit a {@code long} at batch 1 too.
     */
    private SymbolicShape affine(ModelGraph skeleton, String tensor, Val v2, long[] s3, long[] s7) {
        long[] s2 = v2.shape();
        String node = skeleton.producerOf(tensor).map(i -> skeleton.layer(i).name()).orElse(nodeOf(tensor));
        if (s2.length != s3.length || s2.length != s7.length) {
            throw InvalidInputException.atNode(source, node, "rank of '" + tensor + "' depends on the batch size");
        }
        List<Dim> dims = new ArrayList<>(s2.length);
        long[] s1 = new long[s2.length];
        try {
            for (int d = 0; d < s2.length; d++) {
                long per = Math.subtractExact(s3[d], s2[d]);
                long c = Math.subtractExact(s2[d], Math.multiplyExact(BATCHES[0], per));
                if (Math.addExact(Math.multiplyExact(per, BATCHES[2]), c) != s7[d]) {
                    throw InvalidInputException.atNode(source, node, "dimension " + d + " of '" + tensor
                            + "' is not affine in the batch size: " + s2[d] + ", " + s3[d] + ", " + s7[d]
                            + " at batch " + Arrays.toString(BATCHES));
                }
                dims.add(new Dim(per, c));
                s1[d] = Math.addExact(per, c);
            }
        } catch (ArithmeticException e) {
            throw InvalidInputException.atNode(source, node, "dimensions of '" + tensor + "' overflow: "
                    + Arrays.toString(s2) + ", " + Arrays.toString(s3) + ", " + Arrays.toString(s7) + " at batch "
                    + Arrays.toString(BATCHES));
        }
        for (long d : s1) {
            if (d < 0) {
                throw InvalidInputException.atNode(source, node, "'" + tensor + "' would have the negative dimension "
                        + d + " at batch 1: " + dims);
            }
        }
        if (ShapeInference.bytes(v2.type(), s1) < 0) {
            throw InvalidInputException.atNode(source, node, "'" + tensor + "' of shape " + Arrays.toString(s1)
                    + " at batch 1 would hold more than 2^63 bytes");
        }
        return SymbolicShape.of(dims);
    }

    /** Layers from nodes: unnamed nodes are named {@code Op_i}, repeated names get {@code #2}, {@code #3}... */
    private List<Layer> layers() {
        List<Layer> out = new ArrayList<>(g.nodes().size());
        Set<String> names = new HashSet<>();
        Map<String, Integer> nextSuffix = new HashMap<>();
        int i = 0;
        for (OnnxWire.Node n : g.nodes()) {
            String base = n.name().isEmpty() ? (n.opType().isEmpty() ? "node" : n.opType()) + "_" + i : n.name();
            String unique = base;
            if (!names.add(unique)) {
                int k = nextSuffix.getOrDefault(base, 2);
                do {
                    unique = base + "#" + k++;
                } while (!names.add(unique));
                nextSuffix.put(base, k);
            }
            if (n.opType().isEmpty()) {
                throw InvalidInputException.atNode(source, unique, "node has no op_type");
            }
            work.step(1 + n.inputs().size() + n.outputs().size());
            Layer.Builder b = Layer.builder(unique, n.opType()).domain(n.domain()).inputs(n.inputs())
                    .outputs(n.outputs());
            n.attributes().forEach(b::attribute);
            out.add(b.build());
            i++;
        }
        return out;
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
        inputs = DataInputs.classify(source, graphInputs, options);
        for (OnnxWire.ValueInfo v : graphInputs) {
            if (inputs.data().contains(v.name())) {
                roles.put(v.name(), TensorRole.INPUT);
            } else {
                DataType type = DataType.fromOnnx(v.elemType()).orElse(DataType.UNDEFINED);
                roles.put(v.name(), weightRole(type, v.dims().size(), bnStats.contains(v.name())));
            }
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

    private Map<String, Val> infer(ModelGraph skeleton, long batch, boolean record) {
        work.newRun();
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
            Integer axis = inputs.batchAxis().get(v.name());
            for (int d = 0; d < shape.length; d++) {
                shape[d] = axis != null && axis == d ? batch : inputs.size(v.dims().get(d), batch, options);
                if (shape[d] < 0) {
                    throw InvalidInputException.atNode(source, v.name(), "dimension " + d + " ('"
                            + v.dims().get(d).param() + "') is symbolic and not bound");
                }
            }
            if (ShapeInference.bytes(type, shape) < 0) {
                throw InvalidInputException.atNode(source, nodeOf(v.name()), "input '" + v.name() + "' of shape "
                        + Arrays.toString(shape) + " at batch " + batch + " would hold more than 2^63 bytes");
            }
            work.step(shape.length);
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
                outs = ShapeInference.infer(source, l, ins, opset, work).orElse(null);
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
     * The output shapes the file declares for a layer the importer cannot infer: used only when every dimension is
     * a number, the batch symbol or a bound name (so, consistent with this import's sizes).
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
                    s[d] = inputs.size(v.dims().get(d), batch, options);
                    ok = s[d] >= 0;
                }
                DataType type = DataType.fromOnnx(v.elemType()).orElse(DataType.FLOAT);
                if (ok && ShapeInference.bytes(type, s) < 0) {
                    throw InvalidInputException.atNode(source, l.name(), "value_info of output '" + o
                            + "' declares the shape " + Arrays.toString(s) + ", more than 2^63 bytes");
                }
                if (ok) {
                    work.step(s.length);
                    val = new Val(type, s, null);
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

    private ModelGraph assemble(List<Layer> layers, Map<String, SymbolicShape> shapes, Map<String, DataType> types,
            Coverage coverage) {
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
