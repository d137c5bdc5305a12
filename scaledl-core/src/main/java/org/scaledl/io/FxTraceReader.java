package org.scaledl.io;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.LayerRole;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.Phase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a torch.fx node trace in NeuSight's reduced layout (columns {@code idx, name, op, target, region,
 * input_shapes, output_shape, dtype, fw_latency, bw_latency, acc_latency, input_nodes}) into an {@link FxTrace}.
 *
 * <p>Each fx node becomes a layer with the ONNX operator of the same semantics, so FLOPs and bytes come from the
 * same {@link org.scaledl.features.FeatureExtractor} as for ONNX graphs: {@code addmm} is a {@code Gemm} (its
 * {@code (bias, x, w)} arguments reordered), {@code matmul}/{@code bmm} a {@code MatMul}, arithmetic, comparisons,
 * activations and casts element-wise operators, {@code softmax} a {@code Softmax}, {@code mean}, {@code sum},
 * {@code argmax} and friends reductions ({@code max}/{@code min} of two tensors are element-wise, as in torch), {@code cat} a {@code Concat}; {@code contiguous} copies (a
 * {@code Transpose}); {@code view}, {@code permute}, {@code transpose}, {@code split}, {@code getitem} and friends
 * are views; {@code size}, {@code dim}, {@code getattr} and tensor factories are shape arithmetic. Modules are
 * recognised by name: {@code *norm*}/{@code ln_*} → {@code LayerNormalization} (weight and bias of the hidden size),
 * {@code *embed*}/{@code wte}/{@code wpe} → {@code Gather} on a weight, {@code *drop*} → {@code Dropout},
 * {@code *act*} → activation, anything else → a linear layer ({@code MatMul} with weight {@code [in, out]}, plus a
 * bias except for {@code lm_head}). Token embeddings get as many rows as the widest linear output (the vocabulary
 * of the LM head), position embeddings as many as the sequence length. Unknown functions are kept as
 * {@code fx.<name>} layers (family {@code OTHER}) with a warning.
 *
 * <p>The trace holds one copy of the repeated block (region {@code layer}); with {@code blockCopies > 1} the block is
 * laid out that many times, each copy reading the previous copy's output where the first copy read the block's
 * carried input (the prologue tensor that has the block output's shape), and the epilogue reading the last copy.
 *
 * <p>In a trace taken at batch {@code b ≥ 2}, every tensor whose leading dimension is a multiple of {@code b} gets a
 * leading dimension proportional to the batch ({@link org.scaledl.graph.Dim}), so the graph can be evaluated at any
 * batch size; a trace taken at batch 1 is evaluated at batch 1 only ({@link FxTrace#rescalable()}).
 *
 * <pre>{@code
 * FxTrace t = FxTraceReader.read(Path.of("nodes/NVIDIA_L4/gpt2_large-inf-1024-4.csv"), 36);
 * ModelGraph whole = t.graph();   // 36 GPT-2 blocks
 * }</pre>
 */
public final class FxTraceReader {
    private static final Logger LOG = LoggerFactory.getLogger(FxTraceReader.class);
    private static final Pattern STEM = Pattern.compile("(.+)-(inf|train)-(\\d+)-(\\d+)(?:-.*)?");
    private static final Pattern INT = Pattern.compile("-?\\d+");

    private FxTraceReader() {
    }

    /**
     * Reads a trace whose file name is {@code <model>-<inf|train>-<seq>-<batch>.csv}.
     *
     * @param file        the node CSV
     * @param blockCopies how many times the model repeats the traced block (its layer count); 1 keeps the trace
     * @throws InvalidInputException naming the file and line (or node) for malformed input
     */
    public static FxTrace read(Path file, int blockCopies) {
        String fileName = file.getFileName().toString().replaceFirst("\\.csv$", "");
        Matcher m = STEM.matcher(fileName);
        if (!m.matches()) {
            throw InvalidInputException.inSource(file.toString(),
                    "file name must look like <model>-<inf|train>-<seq>-<batch>.csv");
        }
        if (blockCopies < 1) {
            throw InvalidInputException.inSource(file.toString(), "block copies must be positive: " + blockCopies);
        }
        CsvTable t = CsvTable.read(file, "idx", "name", "op", "target", "region", "output_shape", "dtype",
                "fw_latency", "input_nodes");
        return new Builder(t, m.group(1), Phase.parse(m.group(2)), Integer.parseInt(m.group(3)),
                Integer.parseInt(m.group(4)), blockCopies).build();
    }

    /** One parsed row. */
    private record Node(int row, String name, String op, String target, String region, long[] shape, DataType type,
            boolean tensor, double fw, double bw, List<String> inputs) {
    }

    private static final class Builder {
        private final CsvTable t;
        private final String model;
        private final Phase phase;
        private final int seq;
        private final int batch;
        private final int copies;
        private final List<Node> nodes = new ArrayList<>();
        private final Map<String, Node> byName = new HashMap<>();
        private final ModelGraph.Builder g;
        private final Map<String, String> regions = new LinkedHashMap<>();
        /** The nodes emitted as layers (the others are tensors: inputs, weights, outputs). */
        private final Set<String> layerNames = new HashSet<>();
        private final Map<String, double[]> measured = new LinkedHashMap<>();
        private long vocab;

        Builder(CsvTable t, String model, Phase phase, int seq, int batch, int copies) {
            this.t = t;
            this.model = model;
            this.phase = phase;
            this.seq = seq;
            this.batch = batch;
            this.copies = copies;
            this.g = ModelGraph.builder(model + "-" + phase.label() + "-" + seq + "-" + batch).source(t.source());
        }

        FxTrace build() {
            for (int r = 0; r < t.size(); r++) {
                Node n = parse(r);
                if (byName.put(n.name, n) != null) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "duplicate node name '" + n.name + "'");
                }
                nodes.add(n);
            }
            for (Node n : nodes) {
                for (String in : n.inputs) {
                    if (!byName.containsKey(in)) {
                        throw InvalidInputException.atLine(t.source(), t.line(n.row), "node '" + n.name
                                + "' reads '" + in + "', which is not a node of the trace");
                    }
                }
                if (n.op.equals("call_module") && n.shape.length > 0 && !isNorm(n.target) && !isEmbedding(n.target)
                        && !isDropout(n.target) && !isActivation(n.target)) {
                    vocab = Math.max(vocab, n.shape[n.shape.length - 1]);
                }
            }
            List<Node> block = nodes.stream().filter(n -> n.region.equals("layer")).toList();
            Set<String> blockNames = new HashSet<>();
            block.forEach(n -> blockNames.add(n.name));
            // The carried tensor: the block output read by the epilogue, and the prologue tensor it replaces.
            String carriedOut = null;
            String carriedIn = null;
            long hidden = 0;
            if (!block.isEmpty()) {
                for (Node n : nodes) {
                    if (!n.region.equals("epilogue")) {
                        continue;
                    }
                    for (String in : n.inputs) {
                        if (blockNames.contains(in) && byName.get(in).tensor && byName.get(in).shape.length == 3) {
                            carriedOut = in;
                        }
                    }
                    if (carriedOut != null) {
                        break;
                    }
                }
                if (carriedOut == null) {
                    throw InvalidInputException.inSource(t.source(), "the epilogue reads no 3-d tensor of the "
                            + "repeated block, so the block cannot be chained");
                }
                long[] outShape = byName.get(carriedOut).shape;
                hidden = outShape[outShape.length - 1];
                for (Node n : block) {
                    for (String in : n.inputs) {
                        Node src = byName.get(in);
                        if (!blockNames.contains(in) && src.tensor && java.util.Arrays.equals(src.shape, outShape)) {
                            carriedIn = in;
                            break;
                        }
                    }
                    if (carriedIn != null) {
                        break;
                    }
                }
                if (carriedIn == null && copies > 1) {
                    throw InvalidInputException.inSource(t.source(), "the repeated block reads no outside tensor "
                            + "shaped like its output " + java.util.Arrays.toString(outShape));
                }
            }
            int blockCopies = block.isEmpty() ? 1 : copies;
            for (Node n : nodes) {
                if (n.region.equals("layer")) {
                    for (int c = 0; c < blockCopies; c++) {
                        String prev = c == 0 ? carriedIn : copyName(carriedOut, c - 1);
                        emit(n, c, blockNames, carriedIn, prev);
                    }
                } else {
                    String last = carriedOut == null ? null : copyName(carriedOut, blockCopies - 1);
                    emit(n, -1, blockNames, carriedOut, last);
                }
            }
            if (hidden > 0) {
                regions.entrySet().stream().filter(e -> layerNames.contains(e.getKey())).forEach(e -> g.role(
                        e.getKey(), switch (e.getValue()) {
                            case "layer" -> LayerRole.inBlock(LayerRole.Kind.OTHER, 0);
                            case "epilogue" -> LayerRole.outside(LayerRole.Region.EPILOGUE, LayerRole.Kind.OTHER);
                            default -> LayerRole.outside(LayerRole.Region.PROLOGUE, LayerRole.Kind.OTHER);
                        }));
                g.blocks(Blocks.laidOut(hidden, blockCopies));
            }
            ModelGraph graph = g.build();
            return new FxTrace(graph, phase, batch, blockCopies, hidden, regions, measured, t.source());
        }

        private static String copyName(String name, int copy) {
            return copy <= 0 ? name : name + "#" + copy;
        }

        private Node parse(int r) {
            String name = t.get(r, "name");
            String op = t.get(r, "op");
            String dtype = t.opt(r, "dtype").orElse("");
            long[] shape = parseShape(t.get(r, "output_shape"), r);
            double fw = t.nonNegativeFinite(r, "fw_latency");
            double bw = t.opt(r, "bw_latency").isPresent() ? t.nonNegativeFinite(r, "bw_latency") : 0;
            double acc = t.opt(r, "acc_latency").isPresent() ? t.nonNegativeFinite(r, "acc_latency") : 0;
            List<String> inputs = t.opt(r, "input_nodes").map(s -> List.of(s.split(";"))).orElse(List.of());
            DataType type = switch (dtype) {
                case "torch.float32" -> DataType.FLOAT;
                case "torch.float16" -> DataType.FLOAT16;
                case "torch.bfloat16" -> DataType.BFLOAT16;
                case "torch.int64" -> DataType.INT64;
                case "torch.int32" -> DataType.INT32;
                case "torch.bool" -> DataType.BOOL;
                case "" -> DataType.INT64;
                default -> throw InvalidInputException.atLine(t.source(), t.line(r), "unknown dtype '" + dtype + "'");
            };
            String region = t.get(r, "region");
            if (!Set.of("prologue", "layer", "epilogue", "whole_model").contains(region)) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "unknown region '" + region + "'");
            }
            return new Node(r, name, op, t.get(r, "target"), region, shape, type, !dtype.isEmpty(), fw, bw + acc,
                    inputs);
        }

        private long[] parseShape(String text, int r) {
            String s = text.trim();
            if (!(s.startsWith("(") && s.endsWith(")"))) {
                throw InvalidInputException.atLine(t.source(), t.line(r), "output_shape must be a tuple like "
                        + "(4, 1024): '" + text + "'");
            }
            Matcher m = INT.matcher(s);
            List<Long> dims = new ArrayList<>();
            while (m.find()) {
                long d;
                try {
                    d = Long.parseLong(m.group());
                } catch (NumberFormatException e) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "dimension out of range in '" + text
                            + "'");
                }
                if (d < 0) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "negative dimension in '" + text + "'");
                }
                dims.add(d);
            }
            return dims.stream().mapToLong(Long::longValue).toArray();
        }

        /**
         * Adds the layer (or tensor) of one node; {@code copy} is the block copy or -1 outside the block.
         * References to {@code replaced} are redirected to {@code replacement}.
         */
        private void emit(Node n, int copy, Set<String> blockNames, String replaced, String replacement) {
            String name = copyName(n.name, copy);
            regions.put(name, n.region);
            if (copy <= 0 && n.tensor && (n.fw > 0 || n.bw > 0)) {
                measured.put(name, new double[] {n.fw, n.bw});
            }
            List<String> ins = new ArrayList<>();
            for (String in : n.inputs) {
                String ref;
                if (copy >= 0 && blockNames.contains(in)) {
                    ref = copyName(in, copy);
                } else if (in.equals(replaced) && replacement != null && (copy > 0 || copy < 0)) {
                    ref = replacement;
                } else {
                    ref = in;
                }
                ins.add(ref);
            }
            SymbolicShape shape = shapeOf(n);
            switch (n.op) {
                case "placeholder" -> {
                    g.tensor(TensorInfo.of(name, n.type, shape, TensorRole.INPUT));
                    return;
                }
                case "get_attr" -> {
                    TensorRole role = n.type.isFloating() ? TensorRole.PARAMETER : TensorRole.BUFFER;
                    g.tensor(TensorInfo.of(name, n.type, shape, role));
                    return;
                }
                case "output" -> {
                    ins.forEach(g::output);
                    return;
                }
                default -> {
                }
            }
            g.tensor(TensorInfo.of(name, n.type, shape, TensorRole.ACTIVATION));
            String target = n.target;
            String opType;
            if (n.op.equals("call_module")) {
                opType = module(n, name, ins, shape);
            } else {
                opType = function(n, ins);
            }
            Layer.Builder lb = Layer.builder(name, opType).inputs(ins).outputs(name);
            if (opType.equals("Softmax") || opType.equals("LayerNormalization")) {
                lb.attribute("axis", Attribute.ofInt(-1));
            }
            if (opType.startsWith("fx.")) {
                LOG.warn("{}: node '{}' calls '{}', which has no operator mapping; kept as {}", t.source(), n.name,
                        target, opType);
            }
            g.layer(lb.build());
            layerNames.add(name);
        }

        /**
         * The node's shape, with a leading dimension that is a multiple of the traced batch made proportional to
         * the batch (so the graph can be evaluated at other batch sizes). Traces at batch 1 stay static.
         */
        private SymbolicShape shapeOf(Node n) {
            if (!n.tensor || batch < 2 || n.shape.length == 0 || n.shape[0] % batch != 0 || n.op.equals("get_attr")) {
                return SymbolicShape.ofStatic(n.shape);
            }
            List<Dim> dims = new ArrayList<>();
            dims.add(new Dim(n.shape[0] / batch, 0));
            for (int i = 1; i < n.shape.length; i++) {
                dims.add(Dim.of(n.shape[i]));
            }
            return SymbolicShape.of(dims);
        }

        private String module(Node n, String name, List<String> ins, SymbolicShape shape) {
            String target = n.target;
            long last = n.shape.length == 0 ? 1 : n.shape[n.shape.length - 1];
            if (isNorm(target)) {
                ins.add(param(name + ".weight", last));
                ins.add(param(name + ".bias", last));
                return "LayerNormalization";
            }
            if (isEmbedding(target)) {
                String low = target.toLowerCase(Locale.ROOT);
                long rows = low.contains("position") || low.endsWith("wpe") ? Math.max(seq, 1)
                        : low.contains("token_type") ? 2 : Math.max(vocab, 1);
                String w = name + ".weight";
                g.tensor(TensorInfo.of(w, DataType.FLOAT, SymbolicShape.ofStatic(rows, last), TensorRole.PARAMETER));
                ins.add(0, w);
                return "Gather";
            }
            if (isDropout(target)) {
                return "Dropout";
            }
            if (isActivation(target)) {
                return target.toLowerCase(Locale.ROOT).contains("pooler") ? "Tanh" : "Gelu";
            }
            if (ins.isEmpty()) {
                throw InvalidInputException.atNode(t.source(), n.name, "module '" + target + "' has no input");
            }
            Node src = byName.get(n.inputs.get(0));
            long in = src.shape.length == 0 ? 1 : src.shape[src.shape.length - 1];
            ins.add(param(name + ".weight", in, last));
            if (!target.equals("lm_head")) {
                ins.add(param(name + ".bias", last));
            }
            return "MatMul";
        }

        private String param(String name, long... dims) {
            g.tensor(TensorInfo.of(name, DataType.FLOAT, SymbolicShape.ofStatic(dims), TensorRole.PARAMETER));
            return name;
        }

        private String function(Node n, List<String> ins) {
            String target = n.target;
            String fn = target.replaceAll("^<built-in (function|method) ", "").replaceAll("^<function ", "")
                    .replaceAll(" of type object>$", "").replaceAll(">$", "");
            if (target.startsWith("<class 'torch.finfo'>")) {
                return "Constant";
            }
            return switch (fn) {
                case "add", "iadd" -> "Add";
                case "sub" -> "Sub";
                case "mul" -> "Mul";
                case "truediv", "div" -> "Div";
                case "pow" -> "Pow";
                case "eq" -> "Equal";
                case "le" -> "LessOrEqual";
                case "abs" -> "Abs";
                case "neg" -> "Neg";
                case "log" -> "Log";
                case "rsqrt" -> "Reciprocal";
                case "one_hot", "full_like", "zeros_like", "clone", "setitem" -> "Cast";
                case "mean" -> "ReduceMean";
                case "sum", "count_nonzero", "logsumexp" -> "ReduceSum";
                // torch.max / torch.min of two tensors is element-wise; of one (with a dim or none) a reduction
                case "min" -> ins.size() == 2 ? "Min" : "ReduceMin";
                case "argmax" -> "ArgMax";
                case "cat" -> "Concat";
                case "repeat" -> "Tile";
                case "ne" -> "Not";
                case "gt" -> "Greater";
                case "lt" -> "Less";
                case "gelu" -> "Gelu";
                case "tanh" -> "Tanh";
                case "relu" -> "Relu";
                case "where", "masked_fill", "masked_fill_" -> "Where";
                case "dropout" -> "Dropout";
                case "softmax" -> "Softmax";
                case "matmul", "bmm" -> "MatMul";
                case "addmm" -> {
                    if (ins.size() == 3) {
                        String bias = ins.remove(0);
                        ins.add(bias);
                    }
                    yield "Gemm";
                }
                case "embedding" -> {
                    if (ins.size() == 2) {
                        ins.add(0, ins.remove(1));
                    }
                    yield "Gather";
                }
                case "cumsum" -> "CumSum";
                case "max" -> ins.size() == 2 ? "Max" : "ReduceMax";
                case "contiguous" -> "Transpose";
                case "to", "type", "type_as", "long", "bool", "float" -> "Cast";
                case "view", "reshape", "permute", "transpose", "expand", "unsqueeze", "squeeze", "split",
                        "getitem" -> "Identity";
                case "size", "dim", "getattr" -> "Shape";
                case "arange" -> "Range";
                case "full", "ones", "zeros", "tensor", "empty" -> "ConstantOfShape";
                default -> "fx." + fn;
            };
        }

        private static boolean isNorm(String target) {
            String low = target.toLowerCase(Locale.ROOT);
            String leaf = low.substring(low.lastIndexOf('.') + 1);
            return low.contains("norm") || leaf.startsWith("ln_") || leaf.equals("ln");
        }

        private static boolean isEmbedding(String target) {
            String low = target.toLowerCase(Locale.ROOT);
            String leaf = low.substring(low.lastIndexOf('.') + 1);
            return low.contains("embed") || leaf.equals("wte") || leaf.equals("wpe");
        }

        private static boolean isDropout(String target) {
            return target.toLowerCase(Locale.ROOT).contains("drop");
        }

        private static boolean isActivation(String target) {
            String low = target.toLowerCase(Locale.ROOT);
            String leaf = low.substring(low.lastIndexOf('.') + 1);
            return leaf.startsWith("act");
        }
    }
}
