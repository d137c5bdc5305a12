package org.scaledl.graph;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;

/**
 * An immutable DNN workload graph: layers (operator nodes) in topological order, the named tensors between them with
 * shapes in terms of the batch size, and the data edges. Built by {@link org.scaledl.onnx.OnnxImporter} or by hand:
 *
 * <pre>{@code
 * ModelGraph g = ModelGraph.builder("tiny")
 *         .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(16)), TensorRole.INPUT))
 *         .tensor(TensorInfo.of("w", DataType.FLOAT, SymbolicShape.ofStatic(4, 16), TensorRole.PARAMETER))
 *         .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(4)), TensorRole.ACTIVATION))
 *         .layer(Layer.builder("fc", "Gemm").inputs("x", "w").outputs("y")
 *                 .attribute("transB", Attribute.ofInt(1)).build())
 *         .output("y")
 *         .build();
 * }</pre>
 *
 * <p>Graphs compare by identity (a graph is a large value, built once and shared; two built alike are two objects).
 *
 * <p>{@link Builder#build()} validates: unique layer names and tensor producers, every consumed tensor declared or
 * produced (no dangling inputs), no cycles. Failures are {@link InvalidInputException}s naming the node. Traversals
 * are iterative, so graphs of any depth are safe.
 *
 * <p>Parameters ({@link TensorRole#PARAMETER}) are attributed to the first layer (in topological order) that reads
 * them, so per-layer counts add up to {@link #parameterCount()} even when a weight is shared.
 */
public final class ModelGraph {
    private final String name;
    private final List<Layer> layers;
    private final Map<String, TensorInfo> tensors;
    private final List<String> outputs;
    private final List<Edge> edges;
    private final Map<String, Integer> layerIndex;
    private final Map<String, Integer> producer;
    private final long[] layerParams;
    private final long[] weightsRead;
    private final long parameterCount;
    private final Coverage coverage;
    private final Blocks blocks;
    private final TransformerShape transformer;
    /** How many times each layer runs (1 except in compact graphs). */
    private final int[] repeats;
    /** Each layer's role, by index. */
    private final LayerRole[] roles;
    /** Analyses derived from this graph by other classes, by owner ({@link #memo}). */
    private final java.util.concurrent.ConcurrentHashMap<Object, Object> memo =
            new java.util.concurrent.ConcurrentHashMap<>();

    private ModelGraph(String name, List<Layer> sorted, Map<String, TensorInfo> tensors, List<String> outputs,
            Coverage coverage, Blocks blocks, TransformerShape transformer, Map<String, LayerRole> rolesByName) {
        this.name = name;
        this.blocks = blocks;
        this.transformer = transformer;
        this.repeats = new int[sorted.size()];
        this.roles = new LayerRole[sorted.size()];
        for (int i = 0; i < repeats.length; i++) {
            LayerRole r = rolesByName.getOrDefault(sorted.get(i).name(), LayerRole.UNKNOWN);
            roles[i] = r;
            repeats[i] = blocks != null && blocks.compact() && r.block() >= 0 ? blocks.count(r.block()) : 1;
        }
        this.coverage = coverage == null ? Coverage.complete(sorted.size()) : coverage;
        this.layers = List.copyOf(sorted);
        this.tensors = Collections.unmodifiableMap(new LinkedHashMap<>(tensors));
        this.outputs = List.copyOf(outputs);
        Map<String, Integer> li = new HashMap<>();
        Map<String, Integer> prod = new HashMap<>();
        for (int i = 0; i < layers.size(); i++) {
            li.put(layers.get(i).name(), i);
            for (String o : layers.get(i).outputs()) {
                prod.put(o, i);
            }
        }
        this.layerIndex = Collections.unmodifiableMap(li);
        this.producer = Collections.unmodifiableMap(new LinkedHashMap<>(prod));
        List<Edge> eb = new ArrayList<>();
        long[] lp = new long[layers.size()];
        long[] read = new long[layers.size()];
        Map<String, Boolean> attributed = new HashMap<>();
        for (int i = 0; i < layers.size(); i++) {
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (String in : layers.get(i).inputs()) {
                if (in.isEmpty() || !seen.add(in)) {
                    continue;
                }
                Integer p = producer.get(in);
                if (p != null) {
                    eb.add(new Edge(p, i, in));
                }
                TensorInfo t = this.tensors.get(in);
                if (t != null && t.role() == TensorRole.PARAMETER) {
                    long elements = t.shape().map(s -> s.elements(1)).orElse(0L);
                    read[i] += elements;
                    if (attributed.putIfAbsent(in, true) == null) {
                        lp[i] += elements;
                    }
                }
            }
        }
        this.edges = List.copyOf(eb);
        this.layerParams = lp;
        this.weightsRead = read;
        long total = 0;
        for (TensorInfo t : this.tensors.values()) {
            if (t.role() == TensorRole.PARAMETER) {
                total += t.shape().map(s -> s.elements(1)).orElse(0L);
            }
        }
        if (blocks != null && blocks.compact()) {
            // a compact graph's block parameters stand for every copy of the block
            total = 0;
            for (int i = 0; i < lp.length; i++) {
                total = Math.addExact(total, Math.multiplyExact(lp[i], (long) repeats[i]));
            }
        }
        this.parameterCount = total;
    }

    /** Starts a graph. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The graph's name (for imported files, the file name without extension). */
    public String name() {
        return name;
    }

    /** Layers in topological order (producers before consumers; ties keep declaration order). */
    public List<Layer> layers() {
        return layers;
    }

    /** Number of layers. */
    public int size() {
        return layers.size();
    }

    /** The layer at a topological position. */
    public Layer layer(int index) {
        return layers.get(index);
    }

    /** The position of a layer by node name. */
    public Optional<Integer> indexOf(String layerName) {
        return Optional.ofNullable(layerIndex.get(layerName));
    }

    /** All named tensors. */
    public Map<String, TensorInfo> tensors() {
        return tensors;
    }

    /** One tensor by name. */
    public Optional<TensorInfo> tensor(String tensorName) {
        return Optional.ofNullable(tensors.get(tensorName));
    }

    /** The index of the layer that produces a tensor; empty for graph inputs, weights and constants. */
    public Optional<Integer> producerOf(String tensorName) {
        return Optional.ofNullable(producer.get(tensorName));
    }

    /** Graph output names. */
    public List<String> outputs() {
        return outputs;
    }

    /** Data inputs (tensors with role {@link TensorRole#INPUT}), in declaration order. */
    public List<TensorInfo> inputs() {
        return tensors.values().stream().filter(t -> t.role() == TensorRole.INPUT).toList();
    }

    /** Data edges, ordered by consumer then input position. */
    public List<Edge> edges() {
        return edges;
    }

    /** How many times a layer runs in one pass: 1, except for the block layers of a compact graph. */
    public int repeats(int layer) {
        return repeats[layer];
    }

    /**
     * A layer's role: region, kind and block kind ({@link LayerRole#UNKNOWN} for layers no builder described, such
     * as those of an imported graph).
     */
    public LayerRole role(int layer) {
        return roles[layer];
    }

    /** The transformer this graph was built from, when it was built from a configuration. */
    public Optional<TransformerShape> transformer() {
        return Optional.ofNullable(transformer);
    }

    /** Trainable parameters first read by a layer. */
    public long parameterCount(int layer) {
        return layerParams[layer];
    }

    /**
     * Trainable parameters a layer reads, every weight it reads counted: a weight tied to another layer's (a
     * language model's output projection reading the input embedding) by each layer that reads it, where
     * {@link #parameterCount(int)} counts it once, at the first. What the layer's kernel reads is the same whether
     * or not its weight is shared.
     */
    public long weightsRead(int layer) {
        return weightsRead[layer];
    }

    /**
     * What the importer understood of this graph ({@link Coverage#complete} for graphs built by hand without a
     * coverage).
     */
    public Coverage coverage() {
        return coverage;
    }

    /**
     * A per-graph cache for what other classes derive from the graph (feature analysis, per-batch sums, checks): the
     * value {@code compute} gives for {@code owner}, computed once and kept as long as the graph. Thread-safe and
     * lock-free on a hit; two threads that miss at once may both compute (the first value stays). Owners are held as
     * long as the graph: use a key of the owner's own (a private static object; the library's own caches use keys no
     * caller holds, so a caller's key cannot replace their values); a cache owned by a shorter-lived object is a
     * {@link GraphCache}.
     *
     * @throws NullPointerException naming the argument, for a null owner or compute, or a compute that gives null
     */
    @SuppressWarnings("unchecked")
    public <T> T memo(Object owner, java.util.function.Function<ModelGraph, T> compute) {
        java.util.Objects.requireNonNull(owner, "owner");
        java.util.Objects.requireNonNull(compute, "compute");
        Object v = memo.get(owner);
        if (v == null) {
            // computed outside the map: an analysis may itself need another one of the same graph
            Object computed = java.util.Objects.requireNonNull(compute.apply(this), "compute gave null for a graph's "
                    + "cache");
            Object previous = memo.putIfAbsent(owner, computed);
            v = previous != null ? previous : computed;
        }
        return (T) v;
    }

    /** The key of {@link #structure()}'s memo (no caller holds it). */
    private static final Object STRUCTURE = new Object();

    /**
     * A digest of the graph as a prediction reads it, everything but its name and source: every layer (operator,
     * name, attributes as printed, a constant tensor's values abbreviated, inputs, outputs, repeats, role), every
     * tensor (type, shape, role), the outputs, the block structure and the transformer's shape. Two graphs of one
     * structure are one model to time: the same
     * configuration read from two files, or under two names (computed once a graph).
     */
    public String structure() {
        return memo(STRUCTURE, g -> {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < layers.size(); i++) {
                Layer l = layers.get(i);
                b.append(l.opType()).append('\u0000').append(l.domain()).append('\u0000').append(l.name())
                        .append('\u0000').append(l.attributes()).append('\u0000').append(l.inputs()).append('\u0000')
                        .append(l.outputs()).append('\u0000').append(repeats[i]).append('\u0000').append(roles[i])
                        .append('\n');
            }
            new java.util.TreeMap<>(tensors).forEach((k, t) -> b.append(k).append('\u0000').append(t.type())
                    .append('\u0000').append(t.shape()).append('\u0000').append(t.role()).append('\n'));
            b.append(outputs).append('\n').append(blocks).append('\n').append(transformer);
            return org.scaledl.Digests.sha256(b.toString());
        });
    }

    /** The repeated-block structure, when the graph's builder knew it (traces laid out block by block). */
    public Optional<Blocks> blocks() {
        return Optional.ofNullable(blocks);
    }

    /** Total trainable parameters: the elements of all {@link TensorRole#PARAMETER} tensors. */
    public long parameterCount() {
        return parameterCount;
    }

    @Override
    public String toString() {
        return "ModelGraph[" + name + ", " + layers.size() + " layers, " + edges.size() + " edges, " + parameterCount
                + " params]";
    }

    /** Builds and validates a {@link ModelGraph}. */
    public static final class Builder {
        private final String name;
        private final Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        private final List<Layer> layers = new ArrayList<>();
        private final List<String> outputs = new ArrayList<>();
        private String source;
        private Coverage coverage;
        private Blocks blocks;
        private TransformerShape transformer;
        private final Map<String, LayerRole> roles = new HashMap<>();

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** Names the file the graph came from, for error messages. */
        public Builder source(String value) {
            this.source = value;
            return this;
        }

        /** Records what the importer understood of the graph (default: complete). */
        public Builder coverage(Coverage value) {
            this.coverage = Objects.requireNonNull(value, "coverage");
            return this;
        }

        /**
         * Gives a layer (by its node name, as the builder knows it) its role; the graph keeps it by index. A role
         * in a block needs the graph's {@link #blocks}.
         */
        public Builder role(String layerName, LayerRole value) {
            roles.put(Objects.requireNonNull(layerName, "layerName"), Objects.requireNonNull(value, "role"));
            return this;
        }

        /** Records the transformer the graph is built from (a configuration, not an export). */
        public Builder transformer(TransformerShape value) {
            this.transformer = Objects.requireNonNull(value, "transformer");
            return this;
        }

        /** The repeated-block structure. */
        public Builder blocks(Blocks value) {
            this.blocks = Objects.requireNonNull(value, "blocks");
            return this;
        }

        /** Declares (or replaces) a tensor. Every tensor a layer consumes or produces must be declared. */
        public Builder tensor(TensorInfo t) {
            tensors.put(t.name(), t);
            return this;
        }

        /** Adds a layer (any order: {@link #build()} sorts topologically). */
        public Builder layer(Layer l) {
            layers.add(Objects.requireNonNull(l, "l"));
            return this;
        }

        /** Marks a tensor as a graph output. */
        public Builder output(String tensorName) {
            outputs.add(Objects.requireNonNull(tensorName, "tensorName"));
            return this;
        }

        /**
         * Validates and sorts.
         *
         * @throws InvalidInputException for duplicate names, a tensor produced twice, an undeclared or unproduced
         *         input (dangling), an output nobody produces, or a cycle; the message names the node
         */
        public ModelGraph build() {
            int n = layers.size();
            Map<String, Integer> byName = new HashMap<>();
            Map<String, Integer> producer = new HashMap<>();
            for (int i = 0; i < n; i++) {
                Layer l = layers.get(i);
                if (byName.put(l.name(), i) != null) {
                    throw InvalidInputException.atNode(source, l.name(), "duplicate node name");
                }
                for (String o : l.outputs()) {
                    if (o.isEmpty()) {
                        continue;
                    }
                    Integer prev = producer.put(o, i);
                    if (prev != null) {
                        throw InvalidInputException.atNode(source, l.name(),
                                "output '" + o + "' is also produced by node '" + layers.get(prev).name() + "'");
                    }
                    TensorInfo t = tensors.get(o);
                    if (t == null) {
                        throw InvalidInputException.atNode(source, l.name(), "output '" + o + "' is not declared");
                    }
                    if (t.role() == TensorRole.INPUT || t.role() == TensorRole.PARAMETER
                            || t.role() == TensorRole.BUFFER) {
                        throw InvalidInputException.atNode(source, l.name(),
                                "output '" + o + "' is declared as a graph " + t.role().name().toLowerCase());
                    }
                }
            }
            int[] indegree = new int[n];
            List<List<Integer>> consumers = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                consumers.add(new ArrayList<>());
            }
            for (int i = 0; i < n; i++) {
                Layer l = layers.get(i);
                for (String in : l.inputs()) {
                    if (in.isEmpty()) {
                        continue;
                    }
                    Integer p = producer.get(in);
                    if (p == null) {
                        TensorInfo t = tensors.get(in);
                        if (t == null || t.role() == TensorRole.ACTIVATION) {
                            throw InvalidInputException.atNode(source, l.name(), "input '" + in
                                    + "' is dangling: no node produces it and it is not a graph input or weight");
                        }
                        continue;
                    }
                    consumers.get(p).add(i);
                    indegree[i]++;
                }
            }
            for (String o : outputs) {
                if (!producer.containsKey(o) && !tensors.containsKey(o)) {
                    throw InvalidInputException.inSource(source == null ? name : source,
                            "graph output '" + o + "' is produced by no node");
                }
            }
            PriorityQueue<Integer> ready = new PriorityQueue<>();
            for (int i = 0; i < n; i++) {
                if (indegree[i] == 0) {
                    ready.add(i);
                }
            }
            List<Layer> sorted = new ArrayList<>(n);
            while (!ready.isEmpty()) {
                int i = ready.poll();
                sorted.add(layers.get(i));
                for (int c : consumers.get(i)) {
                    if (--indegree[c] == 0) {
                        ready.add(c);
                    }
                }
            }
            if (sorted.size() != n) {
                int stuck = 0;
                while (indegree[stuck] == 0) {
                    stuck++;
                }
                long inCycle = Arrays.stream(indegree).filter(d -> d > 0).count();
                throw InvalidInputException.atNode(source, layers.get(stuck).name(),
                        "graph has a cycle through this node (" + inCycle + " nodes cannot be ordered)");
            }
            Checks.state(sorted.size() == n, "topological order lost nodes: %s of %s", sorted.size(), n);
            for (Map.Entry<String, LayerRole> e : roles.entrySet()) {
                if (!byName.containsKey(e.getKey())) {
                    throw InvalidInputException.inSource(source == null ? name : source, "a role is given to '"
                            + e.getKey() + "', which is no node of the graph");
                }
                if (e.getValue().block() >= 0 && (blocks == null || e.getValue().block() >= blocks.kinds())) {
                    throw InvalidInputException.atNode(source, e.getKey(), "its role names block kind "
                            + e.getValue().block() + ", which the graph's blocks do not have");
                }
            }
            return new ModelGraph(name, sorted, tensors, outputs, coverage, blocks, transformer, roles);
        }
    }
}
