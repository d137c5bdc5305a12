package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Layer;
import org.scaledl.graph.TensorValue;

/**
 * ONNX shape (and small-value) inference for one concrete batch size. Shapes follow each operator's ONNX definition
 * at the model's opset (opset 7 to 21, and the older forms of operators whose inputs and attributes moved: an
 * attribute that became an input is read in the form of the opset, the other form when that one is absent). Integer
 * tensors of up to {@link #MAX_TRACKED} elements also carry their values, so that {@code Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape} chains resolve. The importer runs this at several batch sizes and derives affine
 * {@code Dim}s.
 *
 * <p>The rules live in one class per operator family ({@link ElementwiseRules}, {@link ShapeArithmeticRules},
 * {@link MovementRules}, {@link IndexingRules}, {@link ResizeRules}, {@link ConvRules}, {@link ContractionRules},
 * {@link NormalizationRules}, {@link ReductionRules}), each registering its operators in one table; the supported
 * operators are that table's keys.
 */
final class ShapeInference {
    /** Largest tensor whose values are propagated. */
    static final int MAX_TRACKED = 4096;
    /** The newest default-domain opset whose operator forms the rules know; assumed for a model that declares none. */
    static final long LATEST_OPSET = 21;

    /** A tensor during inference: type, concrete shape, and its values when small and known. */
    record Val(DataType type, long[] shape, TensorValue value) {
        long elements() {
            long n = 1;
            for (long d : shape) {
                n = Math.multiplyExact(n, d);
            }
            return n;
        }
    }

    /** Signals that an output shape cannot be known (upstream unknown, or data-dependent). */
    static final class Unknown extends Exception {
        private static final long serialVersionUID = 1L;

        Unknown(String why) {
            super(why, null, false, false);
        }
    }

    /** The shape rule of one or more operators. */
    @FunctionalInterface
    interface Rule {
        List<Val> infer(OpContext c) throws Unknown;
    }

    /** A rule with a single output. */
    @FunctionalInterface
    interface SingleRule {
        Val infer(OpContext c) throws Unknown;
    }

    /** The operator table as the rule classes fill it: an operator may be registered once. */
    static final class Table {
        private final Map<String, Rule> rules = new HashMap<>();

        void put(Rule rule, String... ops) {
            for (String op : ops) {
                if (rules.putIfAbsent(op, rule) != null) {
                    throw new IllegalStateException("operator " + op + " registered twice");
                }
            }
        }

        void one(SingleRule rule, String... ops) {
            put(c -> List.of(rule.infer(c)), ops);
        }
    }

    private static final Map<String, Rule> RULES = table();

    /** The operator types this class implements, in case-insensitive order: the keys of the one table. */
    static final List<String> SUPPORTED = RULES.keySet().stream().sorted(String.CASE_INSENSITIVE_ORDER).toList();

    private static Map<String, Rule> table() {
        Table t = new Table();
        ElementwiseRules.register(t);
        ShapeArithmeticRules.register(t);
        MovementRules.register(t);
        IndexingRules.register(t);
        ResizeRules.register(t);
        ConvRules.register(t);
        ContractionRules.register(t);
        NormalizationRules.register(t);
        ReductionRules.register(t);
        return Collections.unmodifiableMap(t.rules);
    }

    private ShapeInference() {
    }

    /** {@link #infer(String, Layer, List, long, ImportWork)} at {@link #LATEST_OPSET}, without a work budget. */
    static Optional<List<Val>> infer(String source, Layer node, List<Val> inputs) throws Unknown {
        return infer(source, node, inputs, LATEST_OPSET, null);
    }

    /**
     * Infers the outputs of one node.
     *
     * @param inputs input values in operator order ({@code null} for omitted or unknown inputs)
     * @param opset  the model's default-domain opset
     * @param work   the import's work counter and value budget (modified), or {@code null} for no budget: when the
     *               budget cannot pay for the input values, the node is inferred from their shapes alone
     * @return output values in operator order, or empty when the operator is not supported
     * @throws Unknown when an input needed for the output shape is unknown
     * @throws InvalidInputException when the inputs contradict the operator's definition, or an output would have
     *         more than {@link OnnxWire#MAX_RANK} dimensions or more than 2<sup>63</sup> bytes; names the node and
     *         tensor
     */
    static Optional<List<Val>> infer(String source, Layer node, List<Val> inputs, long opset, ImportWork work)
            throws Unknown {
        boolean onnxDomain = node.domain().isEmpty() || node.domain().equals("ai.onnx");
        Rule rule = onnxDomain ? RULES.get(node.opType()) : null;
        if (rule == null) {
            return Optional.empty();
        }
        List<Val> in = inputs;
        boolean withheld = false;
        if (work != null) {
            long shapeSteps = 1;
            long valueSteps = 0;
            for (Val v : inputs) {
                if (v != null) {
                    shapeSteps += v.shape().length;
                    valueSteps += valueSteps(v);
                }
            }
            work.step(shapeSteps);
            if (valueSteps > 0 && !work.chargeValues(valueSteps)) {
                in = new ArrayList<>(inputs.size());
                for (Val v : inputs) {
                    in.add(v == null || v.value() == null ? v : new Val(v.type(), v.shape(), null));
                }
                withheld = true;
            }
        }
        OpContext c = new OpContext(source, node, in, opset, withheld);
        List<Val> out;
        try {
            out = rule.infer(c);
        } catch (ArithmeticException e) {
            throw c.bad("size overflow (" + e.getMessage() + ") computing " + outputNames(node) + " from inputs "
                    + inputShapes(node, in));
        } catch (IllegalArgumentException e) {
            throw c.bad(e.getMessage());
        }
        for (int k = 0; k < out.size(); k++) {
            Val v = out.get(k);
            String name = k < node.outputs().size() ? node.outputs().get(k) : "#" + k;
            if (v.shape().length > OnnxWire.MAX_RANK) {
                throw c.bad("output '" + name + "' would have " + v.shape().length + " dimensions, more than the "
                        + OnnxWire.MAX_RANK + " the importer accepts");
            }
            for (long d : v.shape()) {
                if (d < 0) {
                    throw c.bad("output '" + name + "' would have the negative dimension " + d + " in "
                            + Arrays.toString(v.shape()));
                }
            }
            if (bytes(v.type(), v.shape()) < 0) {
                throw c.bad("output '" + name + "' of shape " + Arrays.toString(v.shape()) + " would hold more than "
                        + "2^63 bytes");
            }
            if (work != null) {
                work.step(v.shape().length);
                work.spentValues(valueSteps(v));
            }
        }
        return Optional.of(out);
    }

    /** The steps of propagating a tensor's values: its elements times one more than its rank. */
    private static long valueSteps(Val v) {
        return v.value() == null ? 0 : (long) v.value().size() * (v.shape().length + 1);
    }

    /** Bytes of a tensor of this type and (non-negative) shape, or -1 when that overflows a {@code long}. */
    static long bytes(DataType type, long[] shape) {
        long n = Math.max(1, type.byteSize());
        for (long d : shape) {
            if (d == 0) {
                return 0;
            }
            if (n > Long.MAX_VALUE / d) {
                return -1;
            }
            n *= d;
        }
        return n;
    }

    private static String outputNames(Layer node) {
        return node.outputs().stream().filter(o -> !o.isEmpty()).map(o -> "'" + o + "'")
                .collect(Collectors.joining(", "));
    }

    /** The shapes of the first few inputs, for a message. */
    private static String inputShapes(Layer node, List<Val> in) {
        StringBuilder b = new StringBuilder();
        int shown = 0;
        int n = Math.min(in.size(), node.inputs().size());
        for (int i = 0; i < n; i++) {
            Val v = in.get(i);
            if (v == null) {
                continue;
            }
            if (shown == 4) {
                b.append(", ... (").append(n).append(" inputs)");
                break;
            }
            b.append(shown++ == 0 ? "" : ", ").append('\'').append(node.inputs().get(i)).append("' ")
                    .append(Arrays.toString(v.shape()));
        }
        return b.toString();
    }

    /** Elements of a shape. @throws ArithmeticException on overflow */
    static long count(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }
}
