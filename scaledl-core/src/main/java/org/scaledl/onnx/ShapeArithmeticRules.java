package org.scaledl.onnx;

import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.TensorValue;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * The sources of shape arithmetic: constants, a tensor's shape and size, filled tensors of a computed shape and
 * ranges. Their outputs carry values, which the other rules propagate.
 */
final class ShapeArithmeticRules {
    private ShapeArithmeticRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ShapeArithmeticRules::constant, "Constant");
        t.one(ShapeArithmeticRules::shapeOp, "Shape");
        t.one(c -> new Val(DataType.INT64, new long[0], TensorValue.int64Scalar(c.input(0).elements())), "Size");
        t.one(ShapeArithmeticRules::constantOfShape, "ConstantOfShape");
        t.one(ShapeArithmeticRules::range, "Range");
    }

    private static Val constant(OpContext c) {
        for (Map.Entry<String, Attribute> e : c.node().attributes().entrySet()) {
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
        throw c.bad("no value attribute (or a sparse or string value, which is not supported)");
    }

    private static Val shapeOp(OpContext c) throws Unknown {
        long[] s = c.shape(0);
        int r = s.length;
        long start = c.node().longAttribute("start", 0);
        long end = c.node().longAttribute("end", r);
        start = Math.max(0, Math.min(r, start < 0 ? start + r : start));
        end = Math.max(0, Math.min(r, end < 0 ? end + r : end));
        long[] v = end > start ? Arrays.copyOfRange(s, (int) start, (int) end) : new long[0];
        return new Val(DataType.INT64, new long[] {v.length}, TensorValue.int64Vector(v));
    }

    private static Val constantOfShape(OpContext c) throws Unknown {
        long[] out = c.value(0).longs();
        c.checkDims(out);
        TensorValue fill = c.node().attribute("value").flatMap(Attribute::tensorValue)
                .orElse(TensorValue.ofDoubles(DataType.FLOAT, new long[] {1}, new double[] {0}));
        DataType type = fill.type();
        if (!OpContext.small(out)) {
            return new Val(type, out, null);
        }
        int size = (int) ShapeInference.count(out);
        if (type.isFloating()) {
            double[] v = new double[size];
            Arrays.fill(v, fill.doubleAt(0));
            return new Val(type, out, TensorValue.ofDoubles(type, out, v));
        }
        long[] v = new long[size];
        Arrays.fill(v, fill.longAt(0));
        return new Val(type, out, TensorValue.ofLongs(type, out, v));
    }

    private static Val range(OpContext c) throws Unknown {
        Val s = c.input(0);
        TensorValue start = c.value(0);
        TensorValue limit = c.value(1);
        TensorValue delta = c.value(2);
        if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) {
            throw c.bad("start, limit and delta must be scalars");
        }
        double d = delta.doubleAt(0);
        if (d == 0) {
            throw c.bad("delta is zero");
        }
        double len = Math.ceil((limit.doubleAt(0) - start.doubleAt(0)) / d);
        if (!(len < 1L << 40)) {
            throw c.bad("range of " + len + " elements");
        }
        long n = Math.max(0, (long) len);
        long[] out = {n};
        if (n > ShapeInference.MAX_TRACKED) {
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
}
