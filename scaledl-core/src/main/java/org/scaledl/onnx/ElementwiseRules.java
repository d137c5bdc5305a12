package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.TensorValue;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * Element-wise operators: the output has the (broadcast) shape of the inputs. Those that shape arithmetic uses
 * ({@code Floor(Div(Cast(Shape)))}, {@code Sqrt} of a head size, {@code Clip} of a window, comparisons and
 * {@code Where} on index tables) also compute their values when the inputs' values are known.
 */
final class ElementwiseRules {
    private ElementwiseRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ElementwiseRules::valued, "Identity", "Relu", "Sigmoid", "Erf", "Sqrt", "Tanh", "Neg", "Exp", "Log",
                "Abs", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Clip", "BitwiseNot");
        t.one(ElementwiseRules::unary, "HardSigmoid", "HardSwish", "Gelu", "Softmax", "LogSoftmax", "LeakyRelu",
                "Elu", "Selu", "Softplus", "Softsign", "Mish", "InstanceNormalization", "LRN", "GroupNormalization",
                "Celu", "ThresholdedRelu", "Shrink", "Hardmax", "LpNormalization", "MeanVarianceNormalization",
                "ReverseSequence", "Bernoulli", "RandomNormalLike", "RandomUniformLike", "Swish");
        t.one(ElementwiseRules::trilu, "Trilu");
        t.one(ElementwiseRules::cumSum, "CumSum");
        t.one(ElementwiseRules::quantize, "QuantizeLinear");
        t.one(c -> new Val(c.has(1) ? c.input(1).type() : DataType.FLOAT, c.shape(0), null), "DequantizeLinear");
        t.one(ElementwiseRules::arith, "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift");
        t.one(c -> new Val(DataType.fromOnnx((int) c.node().longAttribute("dtype", 1)).orElse(c.input(0).type()),
                c.shape(0), null), "EyeLike");
        t.one(c -> new Val(DataType.fromOnnx((int) c.node().longAttribute("dtype", 1)).orElse(DataType.FLOAT),
                c.longsAttr("shape", new long[0]), null), "RandomNormal", "RandomUniform");
        t.one(c -> new Val(DataType.BOOL, c.shape(0), null), "IsNaN", "IsInf");
        t.one(ElementwiseRules::not, "Not");
        t.one(c -> cast(c, castTarget(c)), "Cast");
        t.one(c -> cast(c, c.input(1).type()), "CastLike");
        t.one(ElementwiseRules::arith, "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                "PRelu");
        t.one(ElementwiseRules::compare, "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
                "Xor");
        t.one(ElementwiseRules::where, "Where");
        t.put(ElementwiseRules::dropout, "Dropout");
    }

    /** QuantizeLinear: the zero point's type, else (opset 21) {@code output_dtype}, else UINT8. */
    private static Val quantize(OpContext c) throws Unknown {
        DataType type = c.has(2) ? c.input(2).type()
                : DataType.fromOnnx((int) c.node().longAttribute("output_dtype", 0))
                        .filter(t -> t != DataType.UNDEFINED).orElse(DataType.UINT8);
        return new Val(type, c.shape(0), null);
    }

    static Val unary(OpContext c) throws Unknown {
        Val x = c.input(0);
        return new Val(x.type(), x.shape(), null);
    }

    /** Element-wise operators that shape arithmetic uses: the output carries values when the input does. */
    private static Val valued(OpContext c) throws Unknown {
        String op = c.node().opType();
        Val x = c.input(0);
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
            case "Clip" -> clipValues(c, v);
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
                default -> ElementwiseRules::erf;
            }, null);
        };
        return new Val(x.type(), x.shape(), out);
    }

    /** Clip: {@code min} and {@code max} attributes before opset 11, optional inputs 1 and 2 from 11. */
    private static TensorValue clipValues(OpContext c, TensorValue v) throws Unknown {
        double lo = c.node().attribute("min").map(Attribute::asDouble).orElse(Double.NEGATIVE_INFINITY);
        double hi = c.node().attribute("max").map(Attribute::asDouble).orElse(Double.POSITIVE_INFINITY);
        if (c.opset() >= 11 || c.node().attribute("min").isEmpty() && c.node().attribute("max").isEmpty()) {
            if (c.has(1)) {
                lo = c.value(1).doubleAt(0);
            }
            if (c.has(2)) {
                hi = c.value(2).doubleAt(0);
            }
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

    private static Val trilu(OpContext c) throws Unknown {
        Val x = c.input(0);
        if (x.value() == null || x.shape().length < 2) {
            return new Val(x.type(), x.shape(), null);
        }
        long k = c.has(1) ? c.value(1).longAt(0) : 0;
        return new Val(x.type(), x.shape(), Values.trilu(x.value(), c.node().longAttribute("upper", 1) != 0, k));
    }

    private static Val cumSum(OpContext c) throws Unknown {
        Val x = c.input(0);
        if (x.value() == null || x.shape().length == 0 || !c.has(1) || c.input(1).value() == null) {
            return new Val(x.type(), x.shape(), null);
        }
        int axis = c.axis(c.value(1).longAt(0), x.shape().length);
        return new Val(x.type(), x.shape(), Values.cumSum(x.value(), axis,
                c.node().longAttribute("exclusive", 0) != 0, c.node().longAttribute("reverse", 0) != 0));
    }

    private static Val not(OpContext c) throws Unknown {
        Val x = c.input(0);
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

    /** Cast's {@code to}: a type number, or (Cast-1, before opset 6) a type name such as {@code "FLOAT"}. */
    private static DataType castTarget(OpContext c) {
        Attribute to = c.node().attribute("to").orElse(null);
        if (to == null) {
            return DataType.FLOAT;
        }
        if (to.kind() == Attribute.Kind.STRING) {
            String name = to.asString().toUpperCase(java.util.Locale.ROOT);
            for (DataType t : DataType.values()) {
                if (t.name().equals(name)) {
                    return t;
                }
            }
            throw c.bad("unknown type '" + to.asString() + "'");
        }
        return DataType.fromOnnx((int) to.asLong()).orElse(DataType.FLOAT);
    }

    /**
     * Binary element-wise operators before opset 7 broadcast only with {@code broadcast = 1}, aligning B with A
     * from {@code axis} (trailing when absent, which numpy's rule then gives too); the output has A's shape. PRelu
     * before opset 7 takes a per-channel slope. Null when numpy's rule applies.
     */
    private static Val legacyBroadcast(OpContext c, DataType outType) throws Unknown {
        String op = c.node().opType();
        if (c.opset() >= 7) {
            return null;
        }
        if (op.equals("PRelu")) {
            return new Val(outType, c.shape(0), null);
        }
        if (c.node().longAttribute("broadcast", 0) == 0 || c.node().attribute("axis").isEmpty()) {
            return null;
        }
        long[] a = c.shape(0);
        long[] b = c.shape(1);
        int axis = b.length == 0 ? a.length : c.axis(c.node().longAttribute("axis", 0), Math.max(1, a.length));
        boolean fits = axis + b.length <= a.length;
        for (int i = 0; fits && i < b.length; i++) {
            fits = b[i] == 1 || b[i] == a[axis + i];
        }
        if (!fits) {
            throw c.bad("B " + Arrays.toString(b) + " does not fit A " + Arrays.toString(a) + " from axis " + axis
                    + " (broadcast before opset 7)");
        }
        return new Val(outType, a.clone(), null);
    }

    private static Val cast(OpContext c, DataType to) throws Unknown {
        Val x = c.input(0);
        TensorValue v = null;
        if (x.value() != null) {
            v = to.isFloating() ? TensorValue.ofDoubles(to, x.shape(), x.value().doubles())
                    : to.isIntegral() ? TensorValue.ofLongs(to, x.shape(), x.value().longs()) : null;
        }
        return new Val(to, x.shape(), v);
    }

    private static Val arith(OpContext c) throws Unknown {
        String op = c.node().opType();
        int n = op.equals("Sum") || op.equals("Mean") || op.equals("Max") || op.equals("Min")
                ? c.node().inputs().size() : 2;
        if (n == 2) {
            Val legacy = legacyBroadcast(c, c.input(0).type());
            if (legacy != null) {
                return legacy;
            }
        }
        Val first = c.input(0);
        long[] shape = first.shape();
        boolean known = first.value() != null;
        for (int i = 1; i < n; i++) {
            Val v = c.input(i);
            shape = c.broadcast(shape, v.shape());
            known &= v.value() != null;
        }
        DataType type = first.type();
        if (!known || !OpContext.small(shape)) {
            return new Val(type, shape, null);
        }
        if (n != 2) {
            return new Val(type, shape, nary(c, op, n, shape, type));
        }
        int size = (int) ShapeInference.count(shape);
        Val b = c.input(1);
        if (type.isFloating()) {
            double[] x = first.value().doubles();
            double[] y = b.value().doubles();
            double[] o = new double[size];
            for (int k = 0; k < size; k++) {
                double p = x[OpContext.bindex(shape, first.shape(), k)];
                double q = y[OpContext.bindex(shape, b.shape(), k)];
                o[k] = switch (op) {
                    case "Add" -> p + q;
                    case "Sub" -> p - q;
                    case "Mul" -> p * q;
                    case "Div" -> p / q;
                    case "Pow" -> Math.pow(p, q);
                    case "Mod" -> c.node().longAttribute("fmod", 0) == 1 ? p % q : p - Math.floor(p / q) * q;
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
            long p = x[OpContext.bindex(shape, first.shape(), k)];
            long q = y[OpContext.bindex(shape, b.shape(), k)];
            if ((op.equals("Div") || op.equals("Mod")) && q == 0) {
                throw c.bad("integer division by zero in shape arithmetic");
            }
            o[k] = switch (op) {
                case "Add" -> Math.addExact(p, q);
                case "Sub" -> Math.subtractExact(p, q);
                case "Mul" -> Math.multiplyExact(p, q);
                case "Div" -> p / q;
                case "Pow" -> (long) Math.pow(p, q);
                case "Mod" -> c.node().longAttribute("fmod", 0) == 1 ? p % q : Math.floorMod(p, q);
                case "Max" -> Math.max(p, q);
                case "Min" -> Math.min(p, q);
                case "Sum" -> Math.addExact(p, q);
                case "Mean" -> (p + q) / 2;
                case "BitwiseAnd" -> p & q;
                case "BitwiseOr" -> p | q;
                case "BitwiseXor" -> p ^ q;
                case "BitShift" -> c.node().attribute("direction").map(Attribute::asString).orElse("LEFT")
                        .equals("RIGHT") ? p >>> q : p << q;
                default -> p > 0 ? p : p * q;
            };
        }
        return new Val(type, shape, TensorValue.ofLongs(type, shape, o));
    }

    /** Sum, Mean, Max, Min of one or more than two known inputs (element-wise, broadcast). */
    private static TensorValue nary(OpContext c, String op, int n, long[] shape, DataType type) throws Unknown {
        int size = (int) ShapeInference.count(shape);
        double[] o = new double[size];
        for (int k = 0; k < size; k++) {
            double acc = 0;
            for (int i = 0; i < n; i++) {
                Val v = c.input(i);
                double x = v.value().doubleAt(OpContext.bindex(shape, v.shape(), k));
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

    private static Val compare(OpContext c) throws Unknown {
        String op = c.node().opType();
        Val legacy = legacyBroadcast(c, DataType.BOOL);
        if (legacy != null) {
            return legacy;
        }
        Val a = c.input(0);
        Val b = c.input(1);
        long[] shape = c.broadcast(a.shape(), b.shape());
        if (a.value() == null || b.value() == null || !OpContext.small(shape)) {
            return new Val(DataType.BOOL, shape, null);
        }
        int size = (int) ShapeInference.count(shape);
        long[] o = new long[size];
        for (int k = 0; k < size; k++) {
            double p = a.value().doubleAt(OpContext.bindex(shape, a.shape(), k));
            double q = b.value().doubleAt(OpContext.bindex(shape, b.shape(), k));
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

    private static Val where(OpContext c) throws Unknown {
        Val cond = c.input(0);
        Val x = c.input(1);
        Val y = c.input(2);
        long[] shape = c.broadcast(c.broadcast(cond.shape(), x.shape()), y.shape());
        if (cond.value() == null || x.value() == null || y.value() == null || !OpContext.small(shape)) {
            return new Val(x.type(), shape, null);
        }
        int size = (int) ShapeInference.count(shape);
        if (x.type().isFloating()) {
            double[] o = new double[size];
            for (int k = 0; k < size; k++) {
                o[k] = cond.value().longAt(OpContext.bindex(shape, cond.shape(), k)) != 0
                        ? x.value().doubleAt(OpContext.bindex(shape, x.shape(), k))
                        : y.value().doubleAt(OpContext.bindex(shape, y.shape(), k));
            }
            return new Val(x.type(), shape, TensorValue.ofDoubles(x.type(), shape, o));
        }
        long[] o = new long[size];
        for (int k = 0; k < size; k++) {
            o[k] = cond.value().longAt(OpContext.bindex(shape, cond.shape(), k)) != 0
                    ? x.value().longAt(OpContext.bindex(shape, x.shape(), k))
                    : y.value().longAt(OpContext.bindex(shape, y.shape(), k));
        }
        return new Val(x.type(), shape, TensorValue.ofLongs(x.type(), shape, o));
    }

    private static List<Val> dropout(OpContext c) throws Unknown {
        Val x = c.input(0);
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), x.shape(), x.value()));
        if (c.node().outputs().size() > 1) {
            out.add(new Val(DataType.BOOL, x.shape(), null));
        }
        return out;
    }
}
