package org.scaledl.features;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;

/**
 * Computes {@link LayerFeatures} for every layer of a graph. Graph-level facts that do not depend on the batch size
 * (which layers carry data, which tensors need gradients, each layer's family) are analysed once in {@link #of}; then
 * {@link #extract} is cheap and may be called concurrently.
 *
 * <pre>{@code
 * FeatureExtractor fx = FeatureExtractor.of(graph);
 * List<LayerFeatures> layers = fx.extract(32, Phase.TRAIN);
 * double gflops = layers.stream().mapToDouble(LayerFeatures::flopsFwd).sum() / 1e9;
 * }</pre>
 *
 * <p>Conventions: a multiply-accumulate is 2 FLOPs. Backward FLOPs of a contraction (Conv, Gemm, MatMul, Einsum) are
 * its forward FLOPs once per operand that needs a gradient (the data input needs none, so the first convolution
 * only computes its weight gradient); other differentiable layers cost their forward FLOPs once. A tensor needs a
 * gradient when it is a parameter or a floating-point result of one. In inference Dropout is the identity and
 * BatchNormalization applies its running statistics (2 FLOPs per element instead of 7).
 */
public final class FeatureExtractor {
    private static final Set<String> RECURRENT = Set.of("LSTM", "GRU", "RNN");
    private final ModelGraph graph;
    private final OpFamily[] family;
    private final boolean[] carriesData;
    private final Set<String> needsGrad;
    /** Per layer, precomputed so that {@link #extract} allocates nothing per tensor: distinct present inputs. */
    private final TensorInfo[][] inputs;
    /** Per layer and distinct input: does it need a gradient. */
    private final boolean[][] inputGrad;
    /** Per layer: outputs by position ({@code null} when absent or unknown). */
    private final TensorInfo[][] outputs;
    /** Per layer: does any output need a gradient. */
    private final boolean[] outputGrad;
    /** Per layer: how many of the first two operands need a gradient (contractions). */
    private final int[] gradOperands;

    private FeatureExtractor(ModelGraph graph) {
        this.graph = graph;
        int n = graph.size();
        this.family = new OpFamily[n];
        this.carriesData = new boolean[n];
        Set<String> data = new HashSet<>();
        Set<String> grad = new HashSet<>();
        for (TensorInfo t : graph.tensors().values()) {
            TensorRole r = t.role();
            if (r == TensorRole.INPUT || r == TensorRole.PARAMETER || r == TensorRole.BUFFER) {
                data.add(t.name());
            }
            if (r == TensorRole.PARAMETER) {
                grad.add(t.name());
            }
        }
        for (int i = 0; i < n; i++) {
            Layer l = graph.layer(i);
            boolean anyData = false;
            boolean anyGrad = false;
            for (String in : l.inputs()) {
                anyData |= data.contains(in);
                anyGrad |= grad.contains(in);
            }
            String op = l.opType();
            boolean metadata = op.equals("Shape") || op.equals("Size");
            carriesData[i] = anyData && !metadata;
            OpFamily f = OpFamily.ofOperator(op);
            if (!carriesData[i]) {
                f = OpFamily.SHAPE;
            } else if (op.equals("Gather") && l.input(0).flatMap(graph::tensor).map(TensorInfo::role)
                    .filter(r -> r == TensorRole.PARAMETER || r == TensorRole.BUFFER).isPresent()) {
                f = OpFamily.EMBEDDING;
            } else if (f == OpFamily.CONV && isDepthwise(graph, l)) {
                f = OpFamily.DEPTHWISE_CONV;
            } else if (!l.domain().isEmpty() && !l.domain().equals("ai.onnx")) {
                f = OpFamily.OTHER;
            }
            family[i] = f;
            if (carriesData[i]) {
                for (String o : l.outputs()) {
                    data.add(o);
                    Optional<TensorInfo> t = graph.tensor(o);
                    if (anyGrad && t.isPresent() && t.get().type().isFloating()) {
                        grad.add(o);
                    }
                }
            }
        }
        this.needsGrad = Set.copyOf(grad);
        this.inputs = new TensorInfo[n][];
        this.inputGrad = new boolean[n][];
        this.outputs = new TensorInfo[n][];
        this.outputGrad = new boolean[n];
        this.gradOperands = new int[n];
        for (int i = 0; i < n; i++) {
            Layer l = graph.layer(i);
            List<TensorInfo> ins = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (String in : l.inputs()) {
                if (!in.isEmpty() && seen.add(in)) {
                    graph.tensor(in).ifPresent(ins::add);
                }
            }
            inputs[i] = ins.toArray(new TensorInfo[0]);
            inputGrad[i] = new boolean[inputs[i].length];
            for (int k = 0; k < inputs[i].length; k++) {
                inputGrad[i][k] = needsGrad.contains(inputs[i][k].name());
            }
            outputs[i] = new TensorInfo[l.outputs().size()];
            for (int k = 0; k < outputs[i].length; k++) {
                String o = l.outputs().get(k);
                outputs[i][k] = o.isEmpty() ? null : graph.tensor(o).orElse(null);
                outputGrad[i] |= needsGrad.contains(o);
            }
            for (int k = 0; k < Math.min(2, l.inputs().size()); k++) {
                gradOperands[i] += l.input(k).filter(needsGrad::contains).isPresent() ? 1 : 0;
            }
        }
    }

    /**
     * One input channel per group: weight {@code [C_out, 1, k...]} (Conv) or {@code [group, C_out/group, k...]}
     * (ConvTranspose).
     */
    private static boolean isDepthwise(ModelGraph graph, Layer l) {
        long groups = l.longAttribute("group", 1);
        long[] w = l.input(1).flatMap(graph::tensor).flatMap(TensorInfo::shape).map(s -> s.at(1)).orElse(null);
        if (groups <= 1 || w == null || w.length < 2) {
            return false;
        }
        return l.opType().equals("ConvTranspose") ? w[0] == groups : w[1] == 1;
    }

    /** Analyses a graph (once per graph: the analysis is kept with it, {@link ModelGraph#memo}). */
    public static FeatureExtractor of(ModelGraph graph) {
        return Objects.requireNonNull(graph, "graph").memo(MEMO, FeatureExtractor::new);
    }

    /** This class's key in a graph's cache: its own (a caller's key, its class for one, cannot replace the value). */
    private static final Object MEMO = new Object();

    /** The analysed graph. */
    public ModelGraph graph() {
        return graph;
    }

    /** The family of a layer (context-aware: shape arithmetic is {@link OpFamily#SHAPE} whatever its operator). */
    public OpFamily family(int layer) {
        return family[layer];
    }

    /** True when a tensor needs a gradient in training. */
    public boolean needsGradient(String tensor) {
        return needsGrad.contains(tensor);
    }

    /**
     * Features of every layer, in topological order.
     *
     * @param batch samples per worker (positive)
     * @param phase training or inference
     * @throws ArithmeticException if a tensor size overflows
     */
    public List<LayerFeatures> extract(long batch, Phase phase) {
        if (batch <= 0) {
            throw new IllegalArgumentException("batch must be positive: " + batch);
        }
        List<LayerFeatures> out = new ArrayList<>(graph.size());
        for (int i = 0; i < graph.size(); i++) {
            try {
                out.add(layer(i, batch, phase));
            } catch (ArithmeticException e) {
                if (e.getMessage() == null || !e.getMessage().contains("overflow")) {
                    throw e;
                }
                // a tensor of more than 2^63 elements: a workload no machine holds, refused as bad input
                throw new IllegalArgumentException("the tensors of " + graph.name() + " at " + batch + " samples a "
                        + "(micro-)batch are too large (layer " + graph.layer(i).name() + " has more than 2^63 "
                        + "elements): give a smaller batch or sequence", e);
            }
        }
        return out;
    }

    private LayerFeatures layer(int i, long batch, Phase phase) {
        Layer l = graph.layer(i);
        OpFamily f = family[i];
        long params = graph.parameterCount(i);
        if (f == OpFamily.SHAPE || (phase == Phase.INFER && l.opType().equals("Dropout"))) {
            return new LayerFeatures(i, f, 0, 0, 0, 0, 0, params, 0, 0, 0, 0, 0, 0);
        }
        double read = 0;
        for (TensorInfo t : inputs[i]) {
            read += moved(l, t, batch);
        }
        double written = 0;
        double outElems = 0;
        for (int k = 0; k < outputs[i].length; k++) {
            TensorInfo t = outputs[i][k];
            if (t != null) {
                written += moved(l, t, batch);
                if (k == 0) {
                    outElems = t.elements(batch);
                }
            }
        }
        if (f == OpFamily.VIEW) {
            // A view moves no data in an eager framework; only its bookkeeping costs.
            read = 0;
            written = 0;
        }
        Geometry geo = new Geometry();
        double fwd = forwardFlops(l, f, batch, phase, outElems, geo);
        boolean train = phase == Phase.TRAIN;
        double bwd = 0;
        double bytesBwd = 0;
        if (train && f != OpFamily.VIEW) {
            int gradInputs = 0;
            double gradInputBytes = 0;
            for (int k = 0; k < inputs[i].length; k++) {
                if (inputGrad[i][k]) {
                    gradInputs++;
                    gradInputBytes += moved(l, inputs[i][k], batch);
                }
            }
            if (outputGrad[i] && gradInputs > 0) {
                if (RECURRENT.contains(l.opType())) {
                    // the weight gradients of W and R (one forward's worth), the gradient back through the
                    // recurrence (the R share, always) and the input gradient (the W share, when the input needs it)
                    boolean inputNeedsGrad = inputs[i].length > 0 && inputGrad[i][0];
                    bwd = fwd * (1 + geo.recurrenceShare + (inputNeedsGrad ? 1 - geo.recurrenceShare : 0));
                } else if (f == OpFamily.CONV || f == OpFamily.DEPTHWISE_CONV || f == OpFamily.DENSE) {
                    // a layer the backward pass recomputes first (FlashAttention's scores) does its forward again
                    bwd = fwd * (gradOperands[i] + (l.recomputedInBackward() ? 1 : 0));
                } else {
                    bwd = Math.max(fwd, outElems);
                }
                double outBytes = outputs[i].length == 0 || outputs[i][0] == null ? 0 : moved(l, outputs[i][0], batch);
                bytesBwd = outBytes + 2 * gradInputBytes;
            }
        }
        return new LayerFeatures(i, f, fwd, bwd, read, written, bytesBwd, params, outElems, geo.kernel, geo.stride,
                geo.groups, geo.in, geo.out, Math.max(1, geo.steps));
    }

    /** The bytes of a layer's tensor that move through memory: none for a tile kept on chip ({@link Layer#ON_CHIP}). */
    private static double moved(Layer l, TensorInfo t, long batch) {
        return l.onChip(t.name()) ? 0 : t.bytes(batch);
    }

    private static final class Geometry {
        long kernel;
        long stride;
        long groups;
        long in;
        long out;
        /** Recurrent cells: the share of the gate contraction that multiplies the hidden state. */
        double recurrenceShare;
        /** Recurrent cells: time steps times directions. */
        long steps;
    }

    private double forwardFlops(Layer l, OpFamily f, long batch, Phase phase, double outElems, Geometry geo) {
        String op = l.opType();
        switch (f) {
            case CONV, DEPTHWISE_CONV -> {
                long[] w = shape(l, 1, batch);
                if (w == null || w.length < 3) {
                    return 0;
                }
                long k = 1;
                for (int d = 2; d < w.length; d++) {
                    k *= w[d];
                }
                geo.kernel = k;
                geo.groups = l.longAttribute("group", 1);
                geo.stride = maxOf(l.attribute("strides").map(Attribute::asLongs).orElse(new long[] {1}));
                double flops;
                if (op.equals("ConvTranspose")) {
                    // weight [C_in, C_out/group, k...]: every input element is scattered onto C_out/group · k outputs
                    geo.in = w[0];
                    geo.out = w[1] * geo.groups;
                    flops = 2.0 * elements(l, 0, batch) * w[1] * k;
                } else {
                    geo.in = w[1] * geo.groups;
                    geo.out = w[0];
                    flops = 2.0 * outElems * w[1] * k;
                }
                if (l.input(2).isPresent()) {
                    flops += outElems;
                }
                return flops;
            }
            case DENSE -> {
                return denseFlops(l, batch, outElems, geo);
            }
            case POOL -> {
                if (op.startsWith("Global")) {
                    return elements(l, 0, batch);
                }
                long[] k = l.attribute("kernel_shape").map(Attribute::asLongs).orElse(new long[] {1});
                long ke = 1;
                for (long x : k) {
                    ke *= x;
                }
                geo.kernel = ke;
                geo.stride = maxOf(l.attribute("strides").map(Attribute::asLongs).orElse(new long[] {1}));
                return outElems * ke;
            }
            case NORM -> {
                geo.in = normalisedLength(l, batch);
                double perElem = switch (op) {
                    case "BatchNormalization" -> phase == Phase.TRAIN ? 7 : 2;
                    case "LayerNormalization" -> 8;
                    case "LRN" -> 2 * l.longAttribute("size", 1) + 3; // sum of squares over the window, scale, power
                    default -> 7;
                };
                return perElem * outElems;
            }
            case REDUCE -> {
                double in = elements(l, 0, batch);
                geo.in = outElems > 0 ? Math.round(in / outElems) : 0;
                return in;
            }
            case SOFTMAX -> {
                long[] x = shape(l, 0, batch);
                if (x != null && x.length > 0) {
                    geo.in = x[axisOf(l, x.length)];
                }
                return 5 * outElems;
            }
            case ELEMENTWISE -> {
                return op.equals("Dropout") ? 2 * outElems : outElems;
            }
            case MOVEMENT -> {
                return op.equals("Resize") || op.equals("Upsample") ? 4 * outElems : 0;
            }
            default -> {
                return 0;
            }
        }
    }

    /**
     * The length each normalisation statistic is taken over: the dimensions from {@code axis} on (LayerNormalization),
     * the spatial size (InstanceNormalization), a group's channels times the spatial size (GroupNormalization), the
     * window (LRN); 0 for BatchNormalization, whose statistics span the batch.
     */
    private long normalisedLength(Layer l, long batch) {
        long[] x = shape(l, 0, batch);
        if (x == null || x.length == 0) {
            return 0;
        }
        long n = 1;
        switch (l.opType()) {
            case "LayerNormalization" -> {
                for (int d = axisOf(l, x.length); d < x.length; d++) {
                    n *= x[d];
                }
            }
            case "InstanceNormalization", "GroupNormalization" -> {
                for (int d = 2; d < x.length; d++) {
                    n *= x[d];
                }
                long groups = l.longAttribute("num_groups", 0);
                if (l.opType().equals("GroupNormalization") && groups > 0 && x.length > 1) {
                    n *= Math.max(1, x[1] / groups);
                }
            }
            case "LRN" -> n = l.longAttribute("size", 1);
            default -> n = 0;
        }
        return n;
    }

    /** The {@code axis} attribute (default -1, the last dimension) as an index into a rank. */
    private static int axisOf(Layer l, int rank) {
        long a = l.longAttribute("axis", -1);
        long r = a < 0 ? a + rank : a;
        return (int) Math.max(0, Math.min(rank - 1, r));
    }

    private double denseFlops(Layer l, long batch, double outElems, Geometry geo) {
        long[] a = shape(l, 0, batch);
        long[] b = shape(l, 1, batch);
        if (a == null || b == null) {
            return 0;
        }
        if (l.opType().equals("Einsum")) {
            return einsumFlops(l, batch);
        }
        if (RECURRENT.contains(l.opType())) {
            return recurrentFlops(l, batch, geo);
        }
        long k;
        if (l.opType().equals("Gemm")) {
            k = l.longAttribute("transA", 0) != 0 ? a[0] : a[a.length - 1];
            geo.out = l.longAttribute("transB", 0) != 0 ? b[0] : b[b.length - 1];
        } else {
            k = a[a.length - 1];
            geo.out = b.length == 1 ? 1 : b[b.length - 1];
            // a batched product (an attention core's): one right-hand operand per batch entry
            long rights = 1;
            for (int d = 0; d < b.length - 2; d++) {
                rights *= Math.max(1, b[d]);
            }
            geo.groups = rights > 1 ? rights : 0;
        }
        geo.in = k;
        double flops = 2.0 * outElems * k;
        if (l.opType().equals("Gemm") && l.input(2).isPresent()) {
            flops += outElems;
        }
        return flops;
    }

    /**
     * LSTM, GRU, RNN: per step and direction, the gate pre-activations {@code [x, h] · [W; R]ᵀ} (2 FLOPs per
     * multiply-accumulate), their biases and the cell's element-wise work; the gate count is read off the recurrence
     * weight {@code R [dirs, gates·hidden, hidden]}.
     */
    private double recurrentFlops(Layer l, long batch, Geometry geo) {
        long[] x = shape(l, 0, batch);
        long[] r = shape(l, 2, batch);
        if (x == null || r == null || x.length != 3 || r.length != 3 || r[2] <= 0) {
            return 0;
        }
        boolean batchFirst = l.longAttribute("layout", 0) == 1;
        double steps = batchFirst ? x[1] : x[0];
        double rows = batchFirst ? x[0] : x[1];
        double gateWidth = r[1];
        double hidden = r[2];
        double perElement = switch (l.opType()) {
            case "LSTM" -> 9; // 3 sigmoids, 2 tanh, 3 products, 1 sum per hidden unit
            case "GRU" -> 8;
            default -> 1;
        };
        geo.in = x[2] + r[2];
        geo.out = r[1];
        geo.recurrenceShare = hidden / (x[2] + hidden);
        geo.steps = (long) (r[0] * steps);
        double biases = l.input(3).isPresent() ? 2 * rows * gateWidth : 0; // input and recurrence biases
        double perStep = 2.0 * rows * (x[2] + hidden) * gateWidth + biases + perElement * rows * hidden;
        return r[0] * steps * perStep;
    }

    private double einsumFlops(Layer l, long batch) {
        String eq = l.attribute("equation").map(Attribute::asString).orElse("").replace(" ", "");
        int arrow = eq.indexOf("->");
        if (arrow < 0) {
            return 0;
        }
        String[] terms = eq.substring(0, arrow).split(",", -1);
        long[] sizes = new long[128];
        for (int t = 0; t < terms.length; t++) {
            long[] s = shape(l, t, batch);
            if (s == null || s.length != terms[t].length()) {
                return 0;
            }
            for (int i = 0; i < s.length; i++) {
                char c = terms[t].charAt(i);
                if (c < 128) {
                    sizes[c] = Math.max(sizes[c], s[i]);
                }
            }
        }
        double prod = 1;
        for (long s : sizes) {
            if (s > 0) {
                prod *= s;
            }
        }
        return 2 * prod;
    }

    private long[] shape(Layer l, int input, long batch) {
        return l.input(input).flatMap(graph::tensor).flatMap(TensorInfo::shape).map(s -> s.at(batch)).orElse(null);
    }

    private double elements(Layer l, int input, long batch) {
        return l.input(input).flatMap(graph::tensor).map(t -> (double) t.elements(batch)).orElse(0.0);
    }

    private static long maxOf(long[] v) {
        long m = 0;
        for (long x : v) {
            m = Math.max(m, x);
        }
        return m;
    }
}
