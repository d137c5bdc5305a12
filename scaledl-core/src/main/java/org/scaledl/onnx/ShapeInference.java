package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Layer;
import org.scaledl.graph.TensorValue;

/**
 * ONNX shape (and small-value) inference for one concrete batch size. Shapes follow each operator's ONNX definition
 * (opset 7 to 21: attributes and their later input forms are both read). Integer tensors of up to
 * {@link #MAX_TRACKED} elements also carry their values, so that {@code Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape} chains resolve. The importer runs this at several batch sizes and derives affine {@code Dim}s.
 */
final class ShapeInference {
    /** Largest tensor whose values are propagated. */
    static final int MAX_TRACKED = 4096;

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

    private final String source;
    private final Layer node;
    private final List<Val> in;

    private ShapeInference(String source, Layer node, List<Val> in) {
        this.source = source;
        this.node = node;
        this.in = in;
    }

    /**
     * Infers the outputs of one node.
     *
     * @param inputs input values in operator order ({@code null} for omitted or unknown inputs)
     * @return output values in operator order, or empty when the operator is not supported
     * @throws Unknown when an input needed for the output shape is unknown
     * @throws InvalidInputException when the inputs contradict the operator's definition
     */
    static Optional<List<Val>> infer(String source, Layer node, List<Val> inputs) throws Unknown {
        ShapeInference s = new ShapeInference(source, node, inputs);
        try {
            return s.run();
        } catch (ArithmeticException e) {
            throw s.bad("dimension overflow (" + e.getMessage() + ")");
        } catch (IllegalArgumentException e) {
            throw s.bad(e.getMessage());
        }
    }

    /** The operator types this class implements. */
    static final List<String> SUPPORTED = List.of("Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin",
            "Asinh", "Atan", "Atanh", "AveragePool", "BatchNormalization", "Bernoulli", "BitShift", "BitwiseAnd",
            "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "CastLike", "Ceil", "Celu", "CenterCropPad", "Clip",
            "Compress", "Concat", "Constant", "ConstantOfShape", "Conv", "ConvTranspose", "Cos", "Cosh", "CumSum",
            "DepthToSpace", "DequantizeLinear", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand",
            "EyeLike", "Flatten", "Floor", "Gather", "GatherElements", "Gelu", "Gemm", "GlobalAveragePool",
            "GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample", "GroupNormalization", "GRU",
            "Hardmax", "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization", "IsInf", "IsNaN",
            "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "LpNormalization",
            "LpPool", "LRN", "LSTM", "MatMul", "Max", "MaxPool", "Mean", "MeanVarianceNormalization", "Min", "Mish",
            "Mod", "Mul", "Neg", "NonZero", "Not", "OneHot", "Or", "Pad", "Pow", "PRelu", "QuantizeLinear",
            "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Range", "Reciprocal",
            "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
            "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "ReverseSequence", "RNN",
            "Round", "Scatter", "ScatterElements", "ScatterND", "Selu", "Shape", "Shrink", "Sigmoid", "Sign", "Sin",
            "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign", "SpaceToDepth", "Split", "Sqrt", "Squeeze",
            "Sub", "Sum", "Swish", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu",
            "Unsqueeze", "Upsample", "Where", "Xor");

    private Optional<List<Val>> run() throws Unknown {
        String op = node.domain().isEmpty() || node.domain().equals("ai.onnx") ? node.opType() : "";
        return switch (op) {
            case "Constant" -> one(constant());
            case "Identity", "Relu", "Sigmoid", "Erf", "Sqrt", "Tanh", "Neg", "Exp", "Log", "Abs", "Reciprocal",
                    "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
                    "Asinh", "Acosh", "Atanh", "Clip", "BitwiseNot" -> one(valued(op));
            case "HardSigmoid", "HardSwish", "Gelu", "Softmax", "LogSoftmax", "LeakyRelu", "Elu", "Selu", "Softplus",
                    "Softsign", "Mish", "InstanceNormalization", "LRN", "GroupNormalization", "Celu",
                    "ThresholdedRelu", "Shrink", "Hardmax", "LpNormalization", "MeanVarianceNormalization",
                    "ReverseSequence", "Bernoulli", "RandomNormalLike", "RandomUniformLike", "Swish" -> one(unary());
            case "Trilu" -> one(trilu());
            case "CumSum" -> one(cumSum());
            case "QuantizeLinear" -> one(new Val(has(2) ? input(2).type() : DataType.UINT8, shape(0), null));
            case "DequantizeLinear" -> one(new Val(has(1) ? input(1).type() : DataType.FLOAT, shape(0), null));
            case "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift" -> one(arith(op));
            case "EyeLike" -> one(new Val(DataType.fromOnnx((int) node.longAttribute("dtype", 1))
                    .orElse(input(0).type()), shape(0), null));
            case "RandomNormal", "RandomUniform" -> one(new Val(DataType.fromOnnx((int) node.longAttribute("dtype", 1))
                    .orElse(DataType.FLOAT), longsAttr("shape", new long[0]), null));
            case "OneHot" -> one(oneHot());
            case "TopK" -> topK();
            case "NonZero" -> one(nonZero());
            case "Compress" -> one(compress());
            case "GridSample" -> one(gridSample());
            case "CenterCropPad" -> one(centerCropPad());
            case "IsNaN", "IsInf" -> one(new Val(DataType.BOOL, shape(0), null));
            case "Not" -> one(not());
            case "Cast" -> one(cast(DataType.fromOnnx((int) node.longAttribute("to", 1)).orElse(DataType.FLOAT)));
            case "CastLike" -> one(cast(input(1).type()));
            case "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "PRelu" -> one(arith(op));
            case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor" -> one(compare(op));
            case "Where" -> one(where());
            case "Dropout" -> dropout();
            case "Shape" -> one(shapeOp());
            case "Size" -> one(new Val(DataType.INT64, new long[0], TensorValue.int64Scalar(input(0).elements())));
            case "Gather" -> one(gather());
            case "GatherElements" -> one(gatherElements());
            case "ScatterND" -> one(scatterND());
            case "ScatterElements", "Scatter" -> one(scatterElements());
            case "Unsqueeze" -> one(unsqueeze());
            case "Squeeze" -> one(squeeze());
            case "Concat" -> one(concat());
            case "Reshape" -> one(reshape());
            case "Flatten" -> one(flatten());
            case "Transpose" -> one(transpose());
            case "ConstantOfShape" -> one(constantOfShape());
            case "Expand" -> one(expand());
            case "Tile" -> one(tile());
            case "Range" -> one(range());
            case "Slice" -> one(slice());
            case "Split" -> Optional.of(split());
            case "Pad" -> one(pad());
            case "Resize", "Upsample" -> one(resize());
            case "Conv" -> one(conv());
            case "ConvTranspose" -> one(convTranspose());
            case "LSTM", "GRU", "RNN" -> recurrent(op);
            case "DepthToSpace", "SpaceToDepth" -> one(depthSpace(op.equals("DepthToSpace")));
            case "MaxPool", "AveragePool", "LpPool" -> pool();
            case "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool" -> one(globalPool());
            case "BatchNormalization" -> batchNorm();
            case "LayerNormalization" -> layerNorm();
            case "Gemm" -> one(gemm());
            case "MatMul" -> one(matmul());
            case "Einsum" -> one(einsum());
            case "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                    "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp" -> one(reduce());
            case "ArgMax", "ArgMin" -> one(argReduce());
            default -> Optional.empty();
        };
    }

    // ---------------------------------------------------------------- helpers

    private static Optional<List<Val>> one(Val v) {
        return Optional.of(List.of(v));
    }

    InvalidInputException bad(String message) {
        return InvalidInputException.atNode(source, node.name(), node.opType() + ": " + message);
    }

    private boolean has(int i) {
        return i < in.size() && i < node.inputs().size() && !node.inputs().get(i).isEmpty();
    }

    private Val input(int i) throws Unknown {
        if (!has(i)) {
            throw bad("required input " + i + " is missing");
        }
        Val v = in.get(i);
        if (v == null) {
            throw new Unknown("shape of input '" + node.inputs().get(i) + "' is unknown");
        }
        return v;
    }

    private long[] shape(int i) throws Unknown {
        return input(i).shape();
    }

    private TensorValue value(int i) throws Unknown {
        TensorValue v = input(i).value();
        if (v == null) {
            throw new Unknown("value of input '" + node.inputs().get(i) + "' is not known while importing");
        }
        return v;
    }

    private long[] ints(String attr, int inputIndex) throws Unknown {
        Optional<Attribute> a = node.attribute(attr);
        if (a.isPresent()) {
            return a.get().asLongs();
        }
        if (inputIndex >= 0 && has(inputIndex)) {
            return value(inputIndex).longs();
        }
        return null;
    }

    private long[] longsAttr(String attr, long[] def) {
        return node.attribute(attr).map(Attribute::asLongs).orElse(def);
    }

    private int axis(long a, int rank) {
        long r = a < 0 ? a + rank : a;
        if (r < 0 || r >= rank) {
            throw bad("axis " + a + " out of range for rank " + rank);
        }
        return (int) r;
    }

    private static boolean small(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
            if (n > MAX_TRACKED || n < 0) {
                return false;
            }
        }
        return true;
    }

    private long[] broadcast(long[] a, long[] b) {
        int r = Math.max(a.length, b.length);
        long[] out = new long[r];
        for (int i = 0; i < r; i++) {
            long x = i - (r - a.length) >= 0 ? a[i - (r - a.length)] : 1;
            long y = i - (r - b.length) >= 0 ? b[i - (r - b.length)] : 1;
            if (x != y && x != 1 && y != 1) {
                throw bad("cannot broadcast " + Arrays.toString(a) + " with " + Arrays.toString(b));
            }
            out[i] = x == 1 ? y : x;
        }
        return out;
    }

    /** Index into a broadcast operand for a flat output position. */
    private static int bindex(long[] outShape, long[] shape, int flat) {
        int idx = 0;
        int stride = 1;
        int off = outShape.length - shape.length;
        int rem = flat;
        long[] coord = new long[outShape.length];
        for (int d = outShape.length - 1; d >= 0; d--) {
            coord[d] = rem % outShape[d];
            rem /= (int) outShape[d];
        }
        for (int d = shape.length - 1; d >= 0; d--) {
            long c = shape[d] == 1 ? 0 : coord[d + off];
            idx += (int) c * stride;
            stride *= (int) shape[d];
        }
        return idx;
    }

    static long count(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    private void checkDims(long[] shape) {
        for (long d : shape) {
            if (d < 0) {
                throw bad("negative dimension in output shape " + Arrays.toString(shape));
            }
        }
    }

    // ---------------------------------------------------------------- element-wise

    private Val constant() {
        for (Map.Entry<String, Attribute> e : node.attributes().entrySet()) {
            Attribute a = e.getValue();
            switch (e.getKey()) {
                case "value" -> {
                    Optional<TensorValue> t = a.tensorValue();
                    return new Val(a.tensorType(), a.tensorDims(), t.orElse(null));
                }
                case "value_float" -> {
                    return new Val(DataType.FLOAT, new long[0],
                            TensorValue.ofDoubles(DataType.FLOAT, new long[0], new double[] {a.asDouble()}));
                }
                case "value_floats" -> {
                    double[] v = a.asDoubles();
                    return new Val(DataType.FLOAT, new long[] {v.length},
                            TensorValue.ofDoubles(DataType.FLOAT, new long[] {v.length}, v));
                }
                case "value_int" -> {
                    return new Val(DataType.INT64, new long[0], TensorValue.int64Scalar(a.asLong()));
                }
                case "value_ints" -> {
                    long[] v = a.asLongs();
                    return new Val(DataType.INT64, new long[] {v.length}, TensorValue.int64Vector(v));
                }
                default -> {
                }
            }
        }
        throw bad("no value attribute (or a sparse or string value, which is not supported)");
    }

    private Val unary() throws Unknown {
        Val x = input(0);
        return new Val(x.type(), x.shape(), null);
    }

    /**
     * Element-wise operators that shape arithmetic uses ({@code Floor(Div(Cast(Shape)))}, {@code Sqrt} of a head
     * size, {@code Clip} of a window): the output carries values when the input does.
     */
    private Val valued(String op) throws Unknown {
        Val x = input(0);
        if (x.value() == null) {
            return new Val(x.type(), x.shape(), null);
        }
        TensorValue v = x.value();
        TensorValue out = switch (op) {
            case "Identity" -> v;
            case "Relu" -> Values.map(v, a -> Math.max(a, 0), a -> Math.max(a, 0));
            case "Neg" -> Values.map(v, a -> -a, a -> -a);
            case "Abs" -> Values.map(v, Math::abs, Math::abs);
            case "Sign" -> Values.map(v, Math::signum, Long::signum);
            case "Floor" -> Values.map(v, Math::floor, a -> a);
            case "Ceil" -> Values.map(v, Math::ceil, a -> a);
            case "Round" -> Values.map(v, Math::rint, a -> a);
            case "BitwiseNot" -> Values.map(v, a -> a, a -> ~a);
            case "Clip" -> clipValues(v);
            default -> Values.map(v, switch (op) {
                case "Sigmoid" -> a -> 1 / (1 + Math.exp(-a));
                case "Sqrt" -> Math::sqrt;
                case "Tanh" -> Math::tanh;
                case "Exp" -> Math::exp;
                case "Log" -> Math::log;
                case "Reciprocal" -> a -> 1 / a;
                case "Sin" -> Math::sin;
                case "Cos" -> Math::cos;
                case "Tan" -> Math::tan;
                case "Asin" -> Math::asin;
                case "Acos" -> Math::acos;
                case "Atan" -> Math::atan;
                case "Sinh" -> Math::sinh;
                case "Cosh" -> Math::cosh;
                case "Asinh" -> a -> Math.log(a + Math.sqrt(a * a + 1));
                case "Acosh" -> a -> Math.log(a + Math.sqrt(a * a - 1));
                case "Atanh" -> a -> 0.5 * Math.log((1 + a) / (1 - a));
                default -> ShapeInference::erf;
            }, null);
        };
        return new Val(x.type(), x.shape(), out);
    }

    private TensorValue clipValues(TensorValue v) throws Unknown {
        double lo = node.attribute("min").map(Attribute::asDouble).orElse(Double.NEGATIVE_INFINITY);
        double hi = node.attribute("max").map(Attribute::asDouble).orElse(Double.POSITIVE_INFINITY);
        if (has(1)) {
            lo = value(1).doubleAt(0);
        }
        if (has(2)) {
            hi = value(2).doubleAt(0);
        }
        double l = lo;
        double h = hi;
        return Values.map(v, a -> Math.min(Math.max(a, l), h), a -> (long) Math.min(Math.max(a, l), h));
    }

    /** Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7): only for values, never for shapes. */
    private static double erf(double x) {
        double t = 1 / (1 + 0.3275911 * Math.abs(x));
        double y = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                + t * 1.061405429)))) * Math.exp(-x * x);
        return x >= 0 ? y : -y;
    }

    private Val trilu() throws Unknown {
        Val x = input(0);
        if (x.value() == null || x.shape().length < 2) {
            return new Val(x.type(), x.shape(), null);
        }
        long k = has(1) ? value(1).longAt(0) : 0;
        return new Val(x.type(), x.shape(), Values.trilu(x.value(), node.longAttribute("upper", 1) != 0, k));
    }

    private Val cumSum() throws Unknown {
        Val x = input(0);
        if (x.value() == null || x.shape().length == 0 || !has(1) || input(1).value() == null) {
            return new Val(x.type(), x.shape(), null);
        }
        int axis = axis(value(1).longAt(0), x.shape().length);
        return new Val(x.type(), x.shape(), Values.cumSum(x.value(), axis, node.longAttribute("exclusive", 0) != 0,
                node.longAttribute("reverse", 0) != 0));
    }

    /** OneHot: indices' shape with {@code depth} inserted at {@code axis}. */
    private Val oneHot() throws Unknown {
        long[] idx = shape(0);
        long depth = value(1).longAt(0);
        if (depth <= 0) {
            throw bad("depth must be positive: " + depth);
        }
        int r = idx.length + 1;
        int axis = axis(node.longAttribute("axis", -1), r);
        long[] out = new long[r];
        for (int d = 0, k = 0; d < r; d++) {
            out[d] = d == axis ? depth : idx[k++];
        }
        return new Val(input(2).type(), out, null);
    }

    /** TopK: the input shape with {@code k} along the axis, values and int64 indices. */
    private Optional<List<Val>> topK() throws Unknown {
        Val x = input(0);
        long k = has(1) ? value(1).longAt(0) : node.longAttribute("k", -1);
        int axis = axis(node.longAttribute("axis", -1), x.shape().length);
        if (k < 0 || k > x.shape()[axis]) {
            throw bad("k = " + k + " for an axis of length " + x.shape()[axis]);
        }
        long[] out = x.shape().clone();
        out[axis] = k;
        return Optional.of(List.of(new Val(x.type(), out, null), new Val(DataType.INT64, out, null)));
    }

    /** NonZero: data-dependent, known only when the input's values are. */
    private Val nonZero() throws Unknown {
        Val x = input(0);
        TensorValue v = x.value();
        if (v == null) {
            throw new Unknown("NonZero of '" + node.inputs().get(0) + "', whose values are not known while importing");
        }
        int r = x.shape().length;
        List<long[]> hits = new ArrayList<>();
        long[] c = new long[r];
        for (int i = 0; i < v.size(); i++) {
            if (v.doubleAt(i) != 0) {
                Values.coords(i, x.shape(), c);
                hits.add(c.clone());
            }
        }
        long[] out = {r, hits.size()};
        long[] vals = new long[r * hits.size()];
        for (int d = 0; d < r; d++) {
            for (int h = 0; h < hits.size(); h++) {
                vals[d * hits.size() + h] = hits.get(h)[d];
            }
        }
        return new Val(DataType.INT64, out, small(out) ? TensorValue.ofLongs(DataType.INT64, out, vals) : null);
    }

    /** Compress: data-dependent, known when the condition's values are. */
    private Val compress() throws Unknown {
        Val x = input(0);
        TensorValue cond = value(1);
        long kept = 0;
        for (int i = 0; i < cond.size(); i++) {
            kept += cond.longAt(i) != 0 ? 1 : 0;
        }
        Optional<Attribute> a = node.attribute("axis");
        if (a.isEmpty()) {
            return new Val(x.type(), new long[] {kept}, null);
        }
        long[] out = x.shape().clone();
        out[axis(a.get().asLong(), out.length)] = kept;
        return new Val(x.type(), out, null);
    }

    /** GridSample: {@code [N, C]} of the input, the grid's spatial sizes. */
    private Val gridSample() throws Unknown {
        long[] x = shape(0);
        long[] grid = shape(1);
        if (x.length < 3 || grid.length != x.length) {
            throw bad("input " + Arrays.toString(x) + " and grid " + Arrays.toString(grid) + " do not fit");
        }
        long[] out = new long[x.length];
        out[0] = x[0];
        out[1] = x[1];
        System.arraycopy(grid, 1, out, 2, x.length - 2);
        return new Val(input(0).type(), out, null);
    }

    /** CenterCropPad: the given sizes on the given (or all) axes. */
    private Val centerCropPad() throws Unknown {
        Val x = input(0);
        long[] sizes = value(1).longs();
        long[] axes = longsAttr("axes", null);
        long[] out = x.shape().clone();
        for (int i = 0; i < sizes.length; i++) {
            out[axes == null ? i : axis(axes[i], out.length)] = sizes[i];
        }
        checkDims(out);
        return new Val(x.type(), out, null);
    }

    private Val gatherElements() throws Unknown {
        Val data = input(0);
        Val idx = input(1);
        if (idx.shape().length != data.shape().length) {
            throw bad("indices rank " + idx.shape().length + " differs from data rank " + data.shape().length);
        }
        int axis = axis(node.longAttribute("axis", 0), data.shape().length);
        if (data.value() == null || idx.value() == null || !small(idx.shape())) {
            return new Val(data.type(), idx.shape(), null);
        }
        return new Val(data.type(), idx.shape(), Values.gatherElements(data.value(), idx.value(), axis));
    }

    private Val scatterND() throws Unknown {
        Val data = input(0);
        Val idx = input(1);
        Val up = input(2);
        if (idx.shape().length == 0) {
            throw bad("indices must have rank >= 1");
        }
        if (data.value() == null || idx.value() == null || up.value() == null || !small(data.shape())
                || !node.attribute("reduction").map(Attribute::asString).orElse("none").equals("none")) {
            return new Val(data.type(), data.shape(), null);
        }
        return new Val(data.type(), data.shape(), Values.scatterND(data.value(), idx.value(), up.value()));
    }

    private Val scatterElements() throws Unknown {
        Val data = input(0);
        Val idx = input(1);
        Val up = input(2);
        int axis = axis(node.longAttribute("axis", 0), Math.max(1, data.shape().length));
        if (data.value() == null || idx.value() == null || up.value() == null || !small(data.shape())
                || idx.shape().length != data.shape().length
                || !node.attribute("reduction").map(Attribute::asString).orElse("none").equals("none")) {
            return new Val(data.type(), data.shape(), null);
        }
        return new Val(data.type(), data.shape(), Values.scatterElements(data.value(), idx.value(), up.value(),
                axis));
    }

    private Val not() throws Unknown {
        Val x = input(0);
        TensorValue v = null;
        if (x.value() != null) {
            long[] a = x.value().longs();
            long[] o = new long[a.length];
            for (int i = 0; i < a.length; i++) {
                o[i] = a[i] == 0 ? 1 : 0;
            }
            v = TensorValue.ofLongs(DataType.BOOL, x.shape(), o);
        }
        return new Val(DataType.BOOL, x.shape(), v);
    }

    private Val cast(DataType to) throws Unknown {
        Val x = input(0);
        TensorValue v = null;
        if (x.value() != null) {
            v = to.isFloating() ? TensorValue.ofDoubles(to, x.shape(), x.value().doubles())
                    : to.isIntegral() ? TensorValue.ofLongs(to, x.shape(), x.value().longs()) : null;
        }
        return new Val(to, x.shape(), v);
    }

    private Val arith(String op) throws Unknown {
        int n = op.equals("Sum") || op.equals("Mean") || op.equals("Max") || op.equals("Min")
                ? node.inputs().size() : 2;
        Val first = input(0);
        long[] shape = first.shape();
        boolean known = first.value() != null;
        for (int i = 1; i < n; i++) {
            Val v = input(i);
            shape = broadcast(shape, v.shape());
            known &= v.value() != null;
        }
        DataType type = first.type();
        if (!known || !small(shape)) {
            return new Val(type, shape, null);
        }
        if (n != 2) {
            return new Val(type, shape, nary(op, n, shape, type));
        }
        int size = (int) count(shape);
        Val b = input(1);
        if (type.isFloating()) {
            double[] x = first.value().doubles();
            double[] y = b.value().doubles();
            double[] o = new double[size];
            for (int k = 0; k < size; k++) {
                double p = x[bindex(shape, first.shape(), k)];
                double q = y[bindex(shape, b.shape(), k)];
                o[k] = switch (op) {
                    case "Add" -> p + q;
                    case "Sub" -> p - q;
                    case "Mul" -> p * q;
                    case "Div" -> p / q;
                    case "Pow" -> Math.pow(p, q);
                    case "Mod" -> node.longAttribute("fmod", 0) == 1 ? p % q : p - Math.floor(p / q) * q;
                    case "Max" -> Math.max(p, q);
                    case "Min" -> Math.min(p, q);
                    case "Sum" -> p + q;
                    case "Mean" -> (p + q) / 2;
                    default -> p > 0 ? p : p * q; // PRelu
                };
            }
            return new Val(type, shape, TensorValue.ofDoubles(type, shape, o));
        }
        long[] x = first.value().longs();
        long[] y = b.value().longs();
        long[] o = new long[size];
        for (int k = 0; k < size; k++) {
            long p = x[bindex(shape, first.shape(), k)];
            long q = y[bindex(shape, b.shape(), k)];
            if ((op.equals("Div") || op.equals("Mod")) && q == 0) {
                throw bad("integer division by zero in shape arithmetic");
            }
            o[k] = switch (op) {
                case "Add" -> Math.addExact(p, q);
                case "Sub" -> Math.subtractExact(p, q);
                case "Mul" -> Math.multiplyExact(p, q);
                case "Div" -> p / q;
                case "Pow" -> (long) Math.pow(p, q);
                case "Mod" -> node.longAttribute("fmod", 0) == 1 ? p % q : Math.floorMod(p, q);
                case "Max" -> Math.max(p, q);
                case "Min" -> Math.min(p, q);
                case "Sum" -> Math.addExact(p, q);
                case "Mean" -> (p + q) / 2;
                case "BitwiseAnd" -> p & q;
                case "BitwiseOr" -> p | q;
                case "BitwiseXor" -> p ^ q;
                case "BitShift" -> node.attribute("direction").map(Attribute::asString).orElse("LEFT")
                        .equals("RIGHT") ? p >>> q : p << q;
                default -> p > 0 ? p : p * q;
            };
        }
        return new Val(type, shape, TensorValue.ofLongs(type, shape, o));
    }

    /** Sum, Mean, Max, Min of one or more than two known inputs (element-wise, broadcast). */
    private TensorValue nary(String op, int n, long[] shape, DataType type) throws Unknown {
        int size = (int) count(shape);
        double[] o = new double[size];
        for (int k = 0; k < size; k++) {
            double acc = 0;
            for (int i = 0; i < n; i++) {
                Val v = input(i);
                double x = v.value().doubleAt(bindex(shape, v.shape(), k));
                acc = i == 0 ? x : switch (op) {
                    case "Max" -> Math.max(acc, x);
                    case "Min" -> Math.min(acc, x);
                    default -> acc + x;
                };
            }
            o[k] = op.equals("Mean") ? acc / n : acc;
        }
        return Values.of(type, shape, o);
    }

    private Val compare(String op) throws Unknown {
        Val a = input(0);
        Val b = input(1);
        long[] shape = broadcast(a.shape(), b.shape());
        if (a.value() == null || b.value() == null || !small(shape)) {
            return new Val(DataType.BOOL, shape, null);
        }
        int size = (int) count(shape);
        long[] o = new long[size];
        for (int k = 0; k < size; k++) {
            double p = a.value().doubleAt(bindex(shape, a.shape(), k));
            double q = b.value().doubleAt(bindex(shape, b.shape(), k));
            boolean r = switch (op) {
                case "Equal" -> p == q;
                case "Less" -> p < q;
                case "Greater" -> p > q;
                case "LessOrEqual" -> p <= q;
                case "GreaterOrEqual" -> p >= q;
                case "And" -> p != 0 && q != 0;
                case "Or" -> p != 0 || q != 0;
                default -> (p != 0) ^ (q != 0);
            };
            o[k] = r ? 1 : 0;
        }
        return new Val(DataType.BOOL, shape, TensorValue.ofLongs(DataType.BOOL, shape, o));
    }

    private Val where() throws Unknown {
        Val c = input(0);
        Val x = input(1);
        Val y = input(2);
        long[] shape = broadcast(broadcast(c.shape(), x.shape()), y.shape());
        if (c.value() == null || x.value() == null || y.value() == null || !small(shape)) {
            return new Val(x.type(), shape, null);
        }
        int size = (int) count(shape);
        if (x.type().isFloating()) {
            double[] o = new double[size];
            for (int k = 0; k < size; k++) {
                o[k] = c.value().longAt(bindex(shape, c.shape(), k)) != 0
                        ? x.value().doubleAt(bindex(shape, x.shape(), k))
                        : y.value().doubleAt(bindex(shape, y.shape(), k));
            }
            return new Val(x.type(), shape, TensorValue.ofDoubles(x.type(), shape, o));
        }
        long[] o = new long[size];
        for (int k = 0; k < size; k++) {
            o[k] = c.value().longAt(bindex(shape, c.shape(), k)) != 0 ? x.value().longAt(bindex(shape, x.shape(), k))
                    : y.value().longAt(bindex(shape, y.shape(), k));
        }
        return new Val(x.type(), shape, TensorValue.ofLongs(x.type(), shape, o));
    }

    private Optional<List<Val>> dropout() throws Unknown {
        Val x = input(0);
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), x.shape(), x.value()));
        if (node.outputs().size() > 1) {
            out.add(new Val(DataType.BOOL, x.shape(), null));
        }
        return Optional.of(out);
    }

    // ---------------------------------------------------------------- shape manipulation

    private Val shapeOp() throws Unknown {
        long[] s = shape(0);
        int r = s.length;
        long start = node.longAttribute("start", 0);
        long end = node.longAttribute("end", r);
        start = Math.max(0, Math.min(r, start < 0 ? start + r : start));
        end = Math.max(0, Math.min(r, end < 0 ? end + r : end));
        long[] v = end > start ? Arrays.copyOfRange(s, (int) start, (int) end) : new long[0];
        return new Val(DataType.INT64, new long[] {v.length}, TensorValue.int64Vector(v));
    }

    private Val gather() throws Unknown {
        Val data = input(0);
        Val idx = input(1);
        int r = data.shape().length;
        if (r == 0) {
            throw bad("data must have rank >= 1");
        }
        int axis = axis(node.longAttribute("axis", 0), r);
        long[] out = new long[r - 1 + idx.shape().length];
        int k = 0;
        for (int d = 0; d < axis; d++) {
            out[k++] = data.shape()[d];
        }
        for (long d : idx.shape()) {
            out[k++] = d;
        }
        for (int d = axis + 1; d < r; d++) {
            out[k++] = data.shape()[d];
        }
        if (data.value() == null || idx.value() == null || !small(out)) {
            return new Val(data.type(), out, null);
        }
        long axisLen = data.shape()[axis];
        long inner = 1;
        for (int d = axis + 1; d < r; d++) {
            inner *= data.shape()[d];
        }
        long outer = 1;
        for (int d = 0; d < axis; d++) {
            outer *= data.shape()[d];
        }
        long[] ix = idx.value().longs();
        int size = (int) count(out);
        long[] lv = new long[size];
        double[] dv = new double[size];
        int p = 0;
        for (long o = 0; o < outer; o++) {
            for (long i : ix) {
                long j = i < 0 ? i + axisLen : i;
                if (j < 0 || j >= axisLen) {
                    throw bad("index " + i + " out of range for axis of length " + axisLen);
                }
                for (long q = 0; q < inner; q++) {
                    int src = (int) ((o * axisLen + j) * inner + q);
                    lv[p] = data.value().longAt(src);
                    dv[p] = data.value().doubleAt(src);
                    p++;
                }
            }
        }
        TensorValue v = data.type().isFloating() ? TensorValue.ofDoubles(data.type(), out, dv)
                : TensorValue.ofLongs(data.type(), out, lv);
        return new Val(data.type(), out, v);
    }

    private Val unsqueeze() throws Unknown {
        Val x = input(0);
        long[] axes = ints("axes", 1);
        if (axes == null) {
            throw bad("no axes");
        }
        int r = x.shape().length + axes.length;
        boolean[] inserted = new boolean[r];
        for (long a : axes) {
            int ax = axis(a, r);
            if (inserted[ax]) {
                throw bad("duplicate axis " + a);
            }
            inserted[ax] = true;
        }
        long[] out = new long[r];
        int k = 0;
        for (int d = 0; d < r; d++) {
            out[d] = inserted[d] ? 1 : x.shape()[k++];
        }
        return reshaped(x, out);
    }

    private Val reshaped(Val x, long[] out) {
        TensorValue v = null;
        if (x.value() != null) {
            v = x.type().isFloating() ? TensorValue.ofDoubles(x.type(), out, x.value().doubles())
                    : TensorValue.ofLongs(x.type(), out, x.value().longs());
        }
        return new Val(x.type(), out, v);
    }

    private Val squeeze() throws Unknown {
        Val x = input(0);
        long[] axes = ints("axes", 1);
        int r = x.shape().length;
        boolean[] drop = new boolean[r];
        if (axes == null) {
            for (int d = 0; d < r; d++) {
                drop[d] = x.shape()[d] == 1;
            }
        } else {
            for (long a : axes) {
                int ax = axis(a, r);
                if (x.shape()[ax] != 1) {
                    throw bad("cannot squeeze axis " + a + " of size " + x.shape()[ax]);
                }
                drop[ax] = true;
            }
        }
        long[] out = new long[r - count(drop)];
        int k = 0;
        for (int d = 0; d < r; d++) {
            if (!drop[d]) {
                out[k++] = x.shape()[d];
            }
        }
        return reshaped(x, out);
    }

    private static int count(boolean[] b) {
        int n = 0;
        for (boolean x : b) {
            n += x ? 1 : 0;
        }
        return n;
    }

    private Val concat() throws Unknown {
        List<Val> parts = new ArrayList<>();
        for (int i = 0; i < node.inputs().size(); i++) {
            if (has(i)) {
                parts.add(input(i));
            }
        }
        if (parts.isEmpty()) {
            throw bad("no inputs");
        }
        int r = parts.get(0).shape().length;
        int axis = axis(node.longAttribute("axis", 0), r);
        long[] out = parts.get(0).shape().clone();
        out[axis] = 0;
        boolean known = true;
        for (Val p : parts) {
            if (p.shape().length != r) {
                throw bad("inputs have different ranks");
            }
            for (int d = 0; d < r; d++) {
                if (d != axis && p.shape()[d] != out[d]) {
                    throw bad("inputs differ in dimension " + d + ": " + p.shape()[d] + " vs " + out[d]);
                }
            }
            out[axis] = Math.addExact(out[axis], p.shape()[axis]);
            known &= p.value() != null;
        }
        DataType type = parts.get(0).type();
        if (!known || !small(out)) {
            return new Val(type, out, null);
        }
        long outer = 1;
        for (int d = 0; d < axis; d++) {
            outer *= out[d];
        }
        int size = (int) count(out);
        long[] lv = new long[size];
        double[] dv = new double[size];
        int p = 0;
        for (long o = 0; o < outer; o++) {
            for (Val part : parts) {
                long chunk = 1;
                for (int d = axis; d < r; d++) {
                    chunk *= part.shape()[d];
                }
                for (long q = 0; q < chunk; q++) {
                    int src = (int) (o * chunk + q);
                    lv[p] = part.value().longAt(src);
                    dv[p] = part.value().doubleAt(src);
                    p++;
                }
            }
        }
        TensorValue v = type.isFloating() ? TensorValue.ofDoubles(type, out, dv) : TensorValue.ofLongs(type, out, lv);
        return new Val(type, out, v);
    }

    private Val reshape() throws Unknown {
        Val x = input(0);
        long[] target = ints("shape", 1);
        if (target == null) {
            throw bad("no target shape");
        }
        boolean allowZero = node.longAttribute("allowzero", 0) == 1;
        long[] out = new long[target.length];
        int infer = -1;
        long known = 1;
        for (int d = 0; d < target.length; d++) {
            long t = target[d];
            if (t == -1) {
                if (infer >= 0) {
                    throw bad("more than one -1 in target shape " + Arrays.toString(target));
                }
                infer = d;
                continue;
            }
            if (t == 0 && !allowZero) {
                if (d >= x.shape().length) {
                    throw bad("0 in target shape at " + d + " but input has rank " + x.shape().length);
                }
                t = x.shape()[d];
            }
            if (t < 0) {
                throw bad("negative dimension " + t + " in target shape " + Arrays.toString(target));
            }
            out[d] = t;
            known = Math.multiplyExact(known, t);
        }
        long total = count(x.shape());
        if (infer >= 0) {
            if (known == 0 || total % known != 0) {
                throw bad("cannot reshape " + Arrays.toString(x.shape()) + " to " + Arrays.toString(target));
            }
            out[infer] = total / known;
        } else if (known != total) {
            throw bad("cannot reshape " + Arrays.toString(x.shape()) + " (" + total + " elements) to "
                    + Arrays.toString(out));
        }
        return reshaped(x, out);
    }

    private Val flatten() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        long a = node.longAttribute("axis", 1);
        int axis = (int) (a < 0 ? a + r : a);
        if (axis < 0 || axis > r) {
            throw bad("axis " + a + " out of range for rank " + r);
        }
        long outer = 1;
        long inner = 1;
        for (int d = 0; d < r; d++) {
            if (d < axis) {
                outer = Math.multiplyExact(outer, x.shape()[d]);
            } else {
                inner = Math.multiplyExact(inner, x.shape()[d]);
            }
        }
        return reshaped(x, new long[] {outer, inner});
    }

    private Val transpose() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        long[] perm = longsAttr("perm", null);
        if (perm == null) {
            perm = new long[r];
            for (int d = 0; d < r; d++) {
                perm[d] = r - 1 - d;
            }
        }
        if (perm.length != r) {
            throw bad("perm " + Arrays.toString(perm) + " does not match rank " + r);
        }
        long[] out = new long[r];
        boolean[] used = new boolean[r];
        for (int d = 0; d < r; d++) {
            int p = axis(perm[d], r);
            if (used[p]) {
                throw bad("perm " + Arrays.toString(perm) + " is not a permutation");
            }
            used[p] = true;
            out[d] = x.shape()[p];
        }
        if (x.value() == null) {
            return new Val(x.type(), out, null);
        }
        return new Val(x.type(), out, Values.transpose(x.value(), perm, out));
    }

    private Val constantOfShape() throws Unknown {
        long[] out = value(0).longs();
        checkDims(out);
        TensorValue fill = node.attribute("value").flatMap(Attribute::tensorValue)
                .orElse(TensorValue.ofDoubles(DataType.FLOAT, new long[] {1}, new double[] {0}));
        DataType type = fill.type();
        if (!small(out)) {
            return new Val(type, out, null);
        }
        int size = (int) count(out);
        if (type.isFloating()) {
            double[] v = new double[size];
            Arrays.fill(v, fill.doubleAt(0));
            return new Val(type, out, TensorValue.ofDoubles(type, out, v));
        }
        long[] v = new long[size];
        Arrays.fill(v, fill.longAt(0));
        return new Val(type, out, TensorValue.ofLongs(type, out, v));
    }

    private Val expand() throws Unknown {
        Val x = input(0);
        long[] target = value(1).longs();
        long[] out = broadcast(x.shape(), target);
        if (x.value() == null || !small(out)) {
            return new Val(x.type(), out, null);
        }
        int size = (int) count(out);
        if (x.type().isFloating()) {
            double[] v = new double[size];
            for (int k = 0; k < size; k++) {
                v[k] = x.value().doubleAt(bindex(out, x.shape(), k));
            }
            return new Val(x.type(), out, TensorValue.ofDoubles(x.type(), out, v));
        }
        long[] v = new long[size];
        for (int k = 0; k < size; k++) {
            v[k] = x.value().longAt(bindex(out, x.shape(), k));
        }
        return new Val(x.type(), out, TensorValue.ofLongs(x.type(), out, v));
    }

    private Val tile() throws Unknown {
        Val x = input(0);
        long[] reps = value(1).longs();
        if (reps.length != x.shape().length) {
            throw bad("repeats length " + reps.length + " differs from rank " + x.shape().length);
        }
        long[] out = new long[reps.length];
        for (int d = 0; d < out.length; d++) {
            out[d] = Math.multiplyExact(x.shape()[d], reps[d]);
        }
        checkDims(out);
        if (x.value() == null || !small(out) || count(x.shape()) == 0) {
            return new Val(x.type(), out, null);
        }
        return new Val(x.type(), out, Values.tile(x.value(), out));
    }

    private Val range() throws Unknown {
        Val s = input(0);
        TensorValue start = value(0);
        TensorValue limit = value(1);
        TensorValue delta = value(2);
        if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) {
            throw bad("start, limit and delta must be scalars");
        }
        double d = delta.doubleAt(0);
        if (d == 0) {
            throw bad("delta is zero");
        }
        double len = Math.ceil((limit.doubleAt(0) - start.doubleAt(0)) / d);
        if (!(len < 1L << 40)) {
            throw bad("range of " + len + " elements");
        }
        long n = Math.max(0, (long) len);
        long[] out = {n};
        if (n > MAX_TRACKED) {
            return new Val(s.type(), out, null);
        }
        if (s.type().isFloating()) {
            double[] v = new double[(int) n];
            for (int k = 0; k < n; k++) {
                v[k] = start.doubleAt(0) + k * d;
            }
            return new Val(s.type(), out, TensorValue.ofDoubles(s.type(), out, v));
        }
        long[] v = new long[(int) n];
        for (int k = 0; k < n; k++) {
            v[k] = start.longAt(0) + k * delta.longAt(0);
        }
        return new Val(s.type(), out, TensorValue.ofLongs(s.type(), out, v));
    }

    private Val slice() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        long[] starts = ints("starts", 1);
        long[] ends = ints("ends", 2);
        if (starts == null || ends == null || starts.length != ends.length) {
            throw bad("starts and ends must be given with equal lengths");
        }
        long[] axes = ints("axes", 3);
        long[] steps = has(4) ? value(4).longs() : null;
        long[] out = x.shape().clone();
        long[] first = new long[r];
        long[] step = new long[r];
        Arrays.fill(step, 1);
        for (int i = 0; i < starts.length; i++) {
            int ax = axes == null ? i : axis(axes[i], r);
            long st = steps == null ? 1 : steps[i];
            if (st == 0) {
                throw bad("step is zero");
            }
            long dim = x.shape()[ax];
            long s = starts[i];
            long e = ends[i];
            s = s < 0 ? s + dim : s;
            e = e < 0 ? e + dim : e;
            long len;
            if (st > 0) {
                s = Math.max(0, Math.min(dim, s));
                e = Math.max(0, Math.min(dim, e));
                len = e > s ? (e - s + st - 1) / st : 0;
            } else {
                s = Math.max(-1, Math.min(dim - 1, s));
                e = Math.max(-1, Math.min(dim - 1, e));
                len = s > e ? (s - e - st - 1) / -st : 0;
            }
            out[ax] = len;
            first[ax] = s;
            step[ax] = st;
        }
        if (x.value() == null) {
            return new Val(x.type(), out, null);
        }
        return new Val(x.type(), out, Values.slice(x.value(), first, step, out));
    }

    private List<Val> split() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        int axis = axis(node.longAttribute("axis", 0), r);
        int n = node.outputs().size();
        long[] sizes = ints("split", 1);
        long dim = x.shape()[axis];
        if (sizes == null) {
            long numOutputs = node.longAttribute("num_outputs", n);
            long chunk = (dim + numOutputs - 1) / numOutputs;
            sizes = new long[n];
            for (int i = 0; i < n; i++) {
                sizes[i] = Math.max(0, Math.min(chunk, dim - i * chunk));
            }
        }
        if (sizes.length != n || Arrays.stream(sizes).sum() != dim) {
            throw bad("split sizes " + Arrays.toString(sizes) + " do not cover dimension " + dim + " in " + n
                    + " outputs");
        }
        List<Val> out = new ArrayList<>();
        long offset = 0;
        for (long s : sizes) {
            long[] sh = x.shape().clone();
            sh[axis] = s;
            out.add(new Val(x.type(), sh, x.value() == null ? null : Values.splitPart(x.value(), axis, offset, sh)));
            offset += s;
        }
        return out;
    }

    private Val pad() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        long[] pads = ints("pads", 1);
        if (pads == null) {
            throw bad("no pads");
        }
        long[] axes = has(3) ? value(3).longs() : null;
        int k = axes == null ? r : axes.length;
        if (pads.length != 2 * k) {
            throw bad("pads has " + pads.length + " values, expected " + 2 * k);
        }
        long[] out = x.shape().clone();
        for (int i = 0; i < k; i++) {
            int ax = axes == null ? i : axis(axes[i], r);
            out[ax] = Math.addExact(out[ax], Math.addExact(pads[i], pads[i + k]));
        }
        checkDims(out);
        String mode = node.attribute("mode").map(Attribute::asString).orElse("constant");
        if (x.value() == null || axes != null || !mode.equals("constant") || !small(out)) {
            return new Val(x.type(), out, null);
        }
        double fill = node.attribute("value").map(Attribute::asDouble).orElse(0.0);
        if (has(2) && input(2).value() != null && input(2).value().size() > 0) {
            fill = input(2).value().doubleAt(0);
        }
        return new Val(x.type(), out, Values.pad(x.value(), pads, fill, out));
    }

    private Val resize() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        long[] out = x.shape().clone();
        boolean upsample = node.opType().equals("Upsample");
        int scalesIndex = upsample ? 1 : 2;
        if (!upsample && has(3)) {
            long[] sizes = value(3).longs();
            if (sizes.length != r) {
                throw bad("sizes has " + sizes.length + " values for rank " + r);
            }
            out = sizes;
        } else if (has(scalesIndex) && input(scalesIndex).elements() > 0 || node.attribute("scales").isPresent()) {
            double[] scales = node.attribute("scales").map(Attribute::asDoubles).orElse(null);
            if (scales == null) {
                scales = value(scalesIndex).doubles();
            }
            if (scales.length != r) {
                throw bad("scales has " + scales.length + " values for rank " + r);
            }
            for (int d = 0; d < r; d++) {
                out[d] = (long) Math.floor(x.shape()[d] * scales[d]);
            }
        } else {
            throw bad("neither scales nor sizes given");
        }
        checkDims(out);
        return new Val(x.type(), out, null);
    }

    // ---------------------------------------------------------------- compute-heavy ops

    /** Output spatial sizes of a convolution or pooling window, following ONNX's pads/auto_pad/ceil_mode rules. */
    private long[] windowOutput(long[] inSpatial, long[] kernel, long[] strides, long[] dilations, long[] pads,
            boolean ceil) {
        int n = inSpatial.length;
        long[] out = new long[n];
        String autoPad = node.attribute("auto_pad").map(Attribute::asString).orElse("NOTSET");
        for (int i = 0; i < n; i++) {
            long eff = (kernel[i] - 1) * dilations[i] + 1;
            if (autoPad.equals("SAME_UPPER") || autoPad.equals("SAME_LOWER")) {
                out[i] = (inSpatial[i] + strides[i] - 1) / strides[i];
            } else if (autoPad.equals("VALID")) {
                out[i] = (inSpatial[i] - eff) / strides[i] + 1;
            } else {
                long span = inSpatial[i] + pads[i] + pads[i + n] - eff;
                out[i] = (ceil ? Math.floorDiv(span + strides[i] - 1, strides[i]) : Math.floorDiv(span, strides[i]))
                        + 1;
                if (ceil && (out[i] - 1) * strides[i] >= inSpatial[i] + pads[i]) {
                    out[i]--;
                }
            }
            if (out[i] <= 0) {
                throw bad("window larger than its padded input: input " + Arrays.toString(inSpatial) + ", kernel "
                        + Arrays.toString(kernel));
            }
        }
        return out;
    }

    private long[] spatialAttr(String name, int n, long def) {
        long[] v = longsAttr(name, null);
        if (v == null) {
            v = new long[name.equals("pads") ? 2 * n : n];
            Arrays.fill(v, def);
        }
        if (v.length != (name.equals("pads") ? 2 * n : n)) {
            throw bad(name + " " + Arrays.toString(v) + " does not fit " + n + " spatial dimensions");
        }
        for (long x : v) {
            if (name.equals("pads") ? x < 0 : x <= 0) {
                throw bad("invalid " + name + " " + Arrays.toString(v));
            }
        }
        return v;
    }

    /** Input and weight of a (transposed) convolution, with ranks checked, and its {@code group} attribute. */
    private record ConvOperands(Val x, long[] xs, long[] ws, int n, long group) {
    }

    /** Checks ranks and channels: {@code C_in = w[1]·group} (Conv) or {@code C_in = w[0]} (ConvTranspose). */
    private ConvOperands convOperands(boolean transposed) throws Unknown {
        Val x = input(0);
        long[] xs = x.shape();
        long[] ws = shape(1);
        if (xs.length < 3 || ws.length != xs.length) {
            throw bad("input rank " + xs.length + " and weight rank " + ws.length + " must match and be >= 3");
        }
        long group = node.longAttribute("group", 1);
        if (group <= 0 || xs[1] != (transposed ? ws[0] : ws[1] * group) || ws[0] % group != 0) {
            throw bad("channels " + xs[1] + " do not match weight " + Arrays.toString(ws) + " with group " + group);
        }
        return new ConvOperands(x, xs, ws, xs.length - 2, group);
    }

    private Val conv() throws Unknown {
        ConvOperands c = convOperands(false);
        long[] xs = c.xs();
        long[] ws = c.ws();
        int n = c.n();
        long[] kernel = longsAttr("kernel_shape", Arrays.copyOfRange(ws, 2, ws.length));
        long[] sp = windowOutput(Arrays.copyOfRange(xs, 2, xs.length), kernel, spatialAttr("strides", n, 1),
                spatialAttr("dilations", n, 1), spatialAttr("pads", n, 0), false);
        long[] out = new long[xs.length];
        out[0] = xs[0];
        out[1] = ws[0];
        System.arraycopy(sp, 0, out, 2, n);
        return new Val(c.x().type(), out, null);
    }

    /**
     * ConvTranspose: weight {@code [C, M/group, k...]}; spatial output {@code stride·(in − 1) + output_padding +
     * (k − 1)·dilation + 1 − pads}, or {@code output_shape} when given, or {@code in·stride} under SAME auto-padding.
     */
    private Val convTranspose() throws Unknown {
        ConvOperands c = convOperands(true);
        long[] xs = c.xs();
        long[] ws = c.ws();
        int n = c.n();
        long[] kernel = longsAttr("kernel_shape", Arrays.copyOfRange(ws, 2, ws.length));
        if (kernel.length != n) {
            throw bad("kernel_shape must have " + n + " values");
        }
        long[] strides = spatialAttr("strides", n, 1);
        long[] dilations = spatialAttr("dilations", n, 1);
        long[] pads = spatialAttr("pads", n, 0);
        long[] outputPadding = longsAttr("output_padding", new long[n]);
        long[] outputShape = longsAttr("output_shape", null);
        if (outputPadding.length != n) {
            throw bad("output_padding must have " + n + " values");
        }
        if (outputShape != null && outputShape.length != n && outputShape.length != n + 2) {
            throw bad("output_shape must have " + n + " (or " + (n + 2) + ") values");
        }
        String autoPad = node.attribute("auto_pad").map(Attribute::asString).orElse("NOTSET");
        long[] out = new long[xs.length];
        out[0] = xs[0];
        out[1] = ws[1] * c.group();
        for (int i = 0; i < n; i++) {
            if (outputShape != null) {
                out[i + 2] = outputShape[outputShape.length - n + i];
            } else if (autoPad.equals("SAME_UPPER") || autoPad.equals("SAME_LOWER")) {
                out[i + 2] = xs[i + 2] * strides[i];
            } else {
                long padding = autoPad.equals("VALID") ? 0 : pads[i] + pads[i + n];
                out[i + 2] = strides[i] * (xs[i + 2] - 1) + outputPadding[i] + (kernel[i] - 1) * dilations[i] + 1
                        - padding;
            }
            if (out[i + 2] <= 0) {
                throw bad("output size " + out[i + 2] + " is not positive: input " + Arrays.toString(xs)
                        + ", kernel " + Arrays.toString(kernel));
            }
        }
        checkDims(out);
        return new Val(c.x().type(), out, null);
    }

    /**
     * LSTM, GRU, RNN: {@code X [seq, batch, input]} ({@code layout} 0) or {@code [batch, seq, input]} (1); outputs
     * {@code Y [seq, dirs, batch, hidden]} (or {@code [batch, seq, dirs, hidden]}), {@code Y_h} and (LSTM)
     * {@code Y_c [dirs, batch, hidden]} (or {@code [batch, dirs, hidden]}).
     */
    private Optional<List<Val>> recurrent(String op) throws Unknown {
        Val x = input(0);
        long[] xs = x.shape();
        long[] ws = shape(1);
        if (xs.length != 3 || ws.length != 3) {
            throw bad("input rank " + xs.length + " and weight rank " + ws.length + " must both be 3");
        }
        String direction = node.attribute("direction").map(Attribute::asString).orElse("forward");
        long dirs = switch (direction) {
            case "forward", "reverse" -> 1;
            case "bidirectional" -> 2;
            default -> throw bad("unknown direction '" + direction + "'");
        };
        long gates = op.equals("LSTM") ? 4 : op.equals("GRU") ? 3 : 1;
        long hidden = node.longAttribute("hidden_size", ws[1] / gates);
        if (ws[0] != dirs || ws[1] != gates * hidden) {
            throw bad("weight " + Arrays.toString(ws) + " does not fit " + dirs + " direction(s) of " + gates
                    + " gates x hidden " + hidden);
        }
        boolean batchFirst = node.longAttribute("layout", 0) == 1;
        long seq = batchFirst ? xs[1] : xs[0];
        long batch = batchFirst ? xs[0] : xs[1];
        long[] y = batchFirst ? new long[] {batch, seq, dirs, hidden} : new long[] {seq, dirs, batch, hidden};
        long[] state = batchFirst ? new long[] {batch, dirs, hidden} : new long[] {dirs, batch, hidden};
        checkDims(y);
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), y, null));
        for (int k = 1; k < node.outputs().size(); k++) {
            out.add(new Val(x.type(), state, null));
        }
        return Optional.of(out);
    }

    /** DepthToSpace / SpaceToDepth on {@code [N, C, H, W]} with {@code blocksize}. */
    private Val depthSpace(boolean toSpace) throws Unknown {
        Val x = input(0);
        long[] xs = x.shape();
        long b = node.longAttribute("blocksize", 0);
        if (xs.length != 4 || b <= 0) {
            throw bad("needs a rank-4 input and a positive blocksize, got " + Arrays.toString(xs) + " and " + b);
        }
        long[] out = xs.clone();
        if (toSpace) {
            if (xs[1] % (b * b) != 0) {
                throw bad("channels " + xs[1] + " are not divisible by blocksize² " + b * b);
            }
            out[1] = xs[1] / (b * b);
            out[2] = xs[2] * b;
            out[3] = xs[3] * b;
        } else {
            if (xs[2] % b != 0 || xs[3] % b != 0) {
                throw bad("spatial size " + xs[2] + "x" + xs[3] + " is not divisible by blocksize " + b);
            }
            out[1] = xs[1] * b * b;
            out[2] = xs[2] / b;
            out[3] = xs[3] / b;
        }
        checkDims(out);
        return new Val(x.type(), out, null);
    }

    private Optional<List<Val>> pool() throws Unknown {
        Val x = input(0);
        long[] xs = x.shape();
        if (xs.length < 3) {
            throw bad("input rank " + xs.length + " must be >= 3");
        }
        int n = xs.length - 2;
        long[] kernel = longsAttr("kernel_shape", null);
        if (kernel == null || kernel.length != n) {
            throw bad("kernel_shape must have " + n + " values");
        }
        long[] sp = windowOutput(Arrays.copyOfRange(xs, 2, xs.length), kernel, spatialAttr("strides", n, 1),
                spatialAttr("dilations", n, 1), spatialAttr("pads", n, 0), node.longAttribute("ceil_mode", 0) == 1);
        long[] out = xs.clone();
        System.arraycopy(sp, 0, out, 2, n);
        List<Val> res = new ArrayList<>();
        res.add(new Val(x.type(), out, null));
        if (node.outputs().size() > 1) {
            res.add(new Val(DataType.INT64, out, null));
        }
        return Optional.of(res);
    }

    private Val globalPool() throws Unknown {
        Val x = input(0);
        long[] out = x.shape().clone();
        if (out.length < 3) {
            throw bad("input rank " + out.length + " must be >= 3");
        }
        for (int d = 2; d < out.length; d++) {
            out[d] = 1;
        }
        return new Val(x.type(), out, null);
    }

    private Optional<List<Val>> batchNorm() throws Unknown {
        Val x = input(0);
        if (x.shape().length < 2) {
            throw bad("input rank must be >= 2");
        }
        long c = x.shape()[1];
        for (int i = 1; i <= 4; i++) {
            if (has(i) && in.get(i) != null && count(in.get(i).shape()) != c) {
                throw bad("input " + i + " has " + count(in.get(i).shape()) + " elements for " + c + " channels");
            }
        }
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), x.shape(), null));
        for (int i = 1; i < node.outputs().size(); i++) {
            out.add(new Val(x.type(), new long[] {c}, null));
        }
        return Optional.of(out);
    }

    private Optional<List<Val>> layerNorm() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        int axis = axis(node.longAttribute("axis", -1), r);
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), x.shape(), null));
        long[] stat = x.shape().clone();
        for (int d = axis; d < r; d++) {
            stat[d] = 1;
        }
        for (int i = 1; i < node.outputs().size(); i++) {
            out.add(new Val(DataType.FLOAT, stat, null));
        }
        return Optional.of(out);
    }

    private Val gemm() throws Unknown {
        long[] a = shape(0);
        long[] b = shape(1);
        if (a.length != 2 || b.length != 2) {
            throw bad("A and B must be matrices, got " + Arrays.toString(a) + " and " + Arrays.toString(b));
        }
        boolean ta = node.longAttribute("transA", 0) != 0;
        boolean tb = node.longAttribute("transB", 0) != 0;
        long m = ta ? a[1] : a[0];
        long k = ta ? a[0] : a[1];
        long k2 = tb ? b[1] : b[0];
        long n = tb ? b[0] : b[1];
        if (k != k2) {
            throw bad("inner dimensions differ: " + k + " vs " + k2);
        }
        long[] out = {m, n};
        if (has(2)) {
            broadcast(out, shape(2));
        }
        return new Val(input(0).type(), out, null);
    }

    private Val matmul() throws Unknown {
        long[] a = shape(0);
        long[] b = shape(1);
        if (a.length == 0 || b.length == 0) {
            throw bad("operands must not be scalars");
        }
        long[] a2 = a.length == 1 ? new long[] {1, a[0]} : a;
        long[] b2 = b.length == 1 ? new long[] {b[0], 1} : b;
        long k = a2[a2.length - 1];
        if (k != b2[b2.length - 2]) {
            throw bad("inner dimensions differ: " + Arrays.toString(a) + " x " + Arrays.toString(b));
        }
        long[] batch = broadcast(Arrays.copyOf(a2, a2.length - 2), Arrays.copyOf(b2, b2.length - 2));
        List<Long> out = new ArrayList<>();
        for (long d : batch) {
            out.add(d);
        }
        if (a.length > 1) {
            out.add(a2[a2.length - 2]);
        }
        if (b.length > 1) {
            out.add(b2[b2.length - 1]);
        }
        return new Val(input(0).type(), out.stream().mapToLong(Long::longValue).toArray(), null);
    }

    private Val einsum() throws Unknown {
        String eq = node.attribute("equation").map(Attribute::asString).orElseThrow(() -> bad("no equation"))
                .replace(" ", "");
        int arrow = eq.indexOf("->");
        if (arrow < 0 || eq.contains("...")) {
            throw new Unknown("Einsum without explicit output or with ellipsis is not inferred");
        }
        String[] terms = eq.substring(0, arrow).split(",", -1);
        long[] sizes = new long[128];
        for (int t = 0; t < terms.length; t++) {
            long[] s = shape(t);
            if (s.length != terms[t].length()) {
                throw bad("term '" + terms[t] + "' does not match input rank " + s.length);
            }
            for (int i = 0; i < s.length; i++) {
                char c = terms[t].charAt(i);
                if (c >= 128) {
                    throw bad("unsupported subscript " + c);
                }
                sizes[c] = Math.max(sizes[c], s[i]);
            }
        }
        String outTerm = eq.substring(arrow + 2);
        long[] out = new long[outTerm.length()];
        for (int i = 0; i < out.length; i++) {
            char c = outTerm.charAt(i);
            if (c >= 128 || sizes[c] == 0) {
                throw bad("output subscript " + c + " not in inputs");
            }
            out[i] = sizes[c];
        }
        return new Val(input(0).type(), out, null);
    }

    private Val reduce() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        long[] axes = ints("axes", 1);
        boolean keep = node.longAttribute("keepdims", 1) != 0;
        boolean[] reduced = new boolean[r];
        if (axes == null || axes.length == 0) {
            if (node.longAttribute("noop_with_empty_axes", 0) != 0) {
                return new Val(x.type(), x.shape(), null);
            }
            Arrays.fill(reduced, true);
        } else {
            for (long a : axes) {
                reduced[axis(a, r)] = true;
            }
        }
        long[] out = reducedShape(x.shape(), reduced, keep);
        if (x.value() == null || !small(out)) {
            return new Val(x.type(), out, null);
        }
        Values.Reduction op = switch (node.opType()) {
            case "ReduceSum" -> Values.Reduction.SUM;
            case "ReduceMean" -> Values.Reduction.MEAN;
            case "ReduceMax" -> Values.Reduction.MAX;
            case "ReduceMin" -> Values.Reduction.MIN;
            case "ReduceProd" -> Values.Reduction.PROD;
            case "ReduceL1" -> Values.Reduction.L1;
            case "ReduceL2" -> Values.Reduction.L2;
            case "ReduceSumSquare" -> Values.Reduction.SUM_SQUARE;
            case "ReduceLogSum" -> Values.Reduction.LOG_SUM;
            default -> Values.Reduction.LOG_SUM_EXP;
        };
        return new Val(x.type(), out, Values.reduce(x.value(), reduced, op, out));
    }

    private static long[] reducedShape(long[] shape, boolean[] reduced, boolean keep) {
        List<Long> out = new ArrayList<>();
        for (int d = 0; d < shape.length; d++) {
            if (!reduced[d]) {
                out.add(shape[d]);
            } else if (keep) {
                out.add(1L);
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    private Val argReduce() throws Unknown {
        Val x = input(0);
        int r = x.shape().length;
        boolean[] reduced = new boolean[r];
        reduced[axis(node.longAttribute("axis", 0), r)] = true;
        return new Val(DataType.INT64, reducedShape(x.shape(), reduced, node.longAttribute("keepdims", 1) != 0),
                null);
    }
}
