package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.TensorValue;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * Operators driven by indices: gathers and scatters, one-hot encodings, top-k selection, and the data-dependent
 * {@code NonZero} and {@code Compress} (known only when the values they depend on are).
 */
final class IndexingRules {
    private IndexingRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(IndexingRules::gather, "Gather");
        t.one(IndexingRules::gatherElements, "GatherElements");
        t.one(IndexingRules::scatterND, "ScatterND");
        t.one(IndexingRules::scatterElements, "ScatterElements", "Scatter");
        t.one(IndexingRules::oneHot, "OneHot");
        t.put(IndexingRules::topK, "TopK");
        t.one(IndexingRules::nonZero, "NonZero");
        t.one(IndexingRules::compress, "Compress");
    }

    private static Val gather(OpContext c) throws Unknown {
        Val data = c.input(0);
        Val idx = c.input(1);
        int r = data.shape().length;
        if (r == 0) {
            throw c.bad("data must have rank >= 1");
        }
        int axis = c.axis(c.node().longAttribute("axis", 0), r);
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
        if (data.value() == null || idx.value() == null || !OpContext.small(out)) {
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
        int size = (int) ShapeInference.count(out);
        long[] lv = new long[size];
        double[] dv = new double[size];
        int p = 0;
        for (long o = 0; o < outer; o++) {
            for (long i : ix) {
                long j = i < 0 ? i + axisLen : i;
                if (j < 0 || j >= axisLen) {
                    throw c.bad("index " + i + " out of range for axis of length " + axisLen);
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

    private static Val gatherElements(OpContext c) throws Unknown {
        Val data = c.input(0);
        Val idx = c.input(1);
        if (idx.shape().length != data.shape().length) {
            throw c.bad("indices rank " + idx.shape().length + " differs from data rank " + data.shape().length);
        }
        int axis = c.axis(c.node().longAttribute("axis", 0), data.shape().length);
        if (data.value() == null || idx.value() == null || !OpContext.small(idx.shape())) {
            return new Val(data.type(), idx.shape(), null);
        }
        return new Val(data.type(), idx.shape(), Values.gatherElements(data.value(), idx.value(), axis));
    }

    private static Val scatterND(OpContext c) throws Unknown {
        Val data = c.input(0);
        Val idx = c.input(1);
        Val up = c.input(2);
        if (idx.shape().length == 0) {
            throw c.bad("indices must have rank >= 1");
        }
        if (data.value() == null || idx.value() == null || up.value() == null || !OpContext.small(data.shape())
                || !c.node().attribute("reduction").map(Attribute::asString).orElse("none").equals("none")) {
            return new Val(data.type(), data.shape(), null);
        }
        return new Val(data.type(), data.shape(), Values.scatterND(data.value(), idx.value(), up.value()));
    }

    private static Val scatterElements(OpContext c) throws Unknown {
        Val data = c.input(0);
        Val idx = c.input(1);
        Val up = c.input(2);
        int axis = c.axis(c.node().longAttribute("axis", 0), Math.max(1, data.shape().length));
        if (data.value() == null || idx.value() == null || up.value() == null || !OpContext.small(data.shape())
                || idx.shape().length != data.shape().length
                || !c.node().attribute("reduction").map(Attribute::asString).orElse("none").equals("none")) {
            return new Val(data.type(), data.shape(), null);
        }
        return new Val(data.type(), data.shape(), Values.scatterElements(data.value(), idx.value(), up.value(),
                axis));
    }

    /** OneHot: indices' shape with {@code depth} inserted at {@code axis}. */
    private static Val oneHot(OpContext c) throws Unknown {
        long[] idx = c.shape(0);
        long depth = c.value(1).longAt(0);
        if (depth <= 0) {
            throw c.bad("depth must be positive: " + depth);
        }
        int r = idx.length + 1;
        int axis = c.axis(c.node().longAttribute("axis", -1), r);
        long[] out = new long[r];
        for (int d = 0, k = 0; d < r; d++) {
            out[d] = d == axis ? depth : idx[k++];
        }
        return new Val(c.input(2).type(), out, null);
    }

    /**
     * TopK: the input shape with {@code k} along the axis, values and int64 indices; {@code k} an attribute before
     * opset 10, input 1 from 10.
     */
    private static List<Val> topK(OpContext c) throws Unknown {
        Val x = c.input(0);
        boolean asInput = c.has(1) && (c.opset() >= 10 || c.node().attribute("k").isEmpty());
        long k = asInput ? c.value(1).longAt(0) : c.node().longAttribute("k", -1);
        int axis = c.axis(c.node().longAttribute("axis", -1), x.shape().length);
        if (k < 0 || k > x.shape()[axis]) {
            throw c.bad("k = " + k + " for an axis of length " + x.shape()[axis]);
        }
        long[] out = x.shape().clone();
        out[axis] = k;
        return List.of(new Val(x.type(), out, null), new Val(DataType.INT64, out, null));
    }

    /** NonZero: data-dependent, known only when the input's values are. */
    private static Val nonZero(OpContext c) throws Unknown {
        Val x = c.input(0);
        TensorValue v = x.value();
        if (v == null) {
            throw new Unknown("NonZero of '" + c.node().inputs().get(0)
                    + "', whose values are not known while importing");
        }
        int r = x.shape().length;
        List<long[]> hits = new ArrayList<>();
        long[] coord = new long[r];
        for (int i = 0; i < v.size(); i++) {
            if (v.doubleAt(i) != 0) {
                Values.coords(i, x.shape(), coord);
                hits.add(coord.clone());
            }
        }
        long[] out = {r, hits.size()};
        long[] vals = new long[r * hits.size()];
        for (int d = 0; d < r; d++) {
            for (int h = 0; h < hits.size(); h++) {
                vals[d * hits.size() + h] = hits.get(h)[d];
            }
        }
        return new Val(DataType.INT64, out, OpContext.small(out) ? TensorValue.ofLongs(DataType.INT64, out, vals)
                : null);
    }

    /** Compress: data-dependent, known when the condition's values are. */
    private static Val compress(OpContext c) throws Unknown {
        Val x = c.input(0);
        TensorValue cond = c.value(1);
        long kept = 0;
        for (int i = 0; i < cond.size(); i++) {
            kept += cond.longAt(i) != 0 ? 1 : 0;
        }
        Optional<Attribute> a = c.node().attribute("axis");
        if (a.isEmpty()) {
            return new Val(x.type(), new long[] {kept}, null);
        }
        long[] out = x.shape().clone();
        out[c.axis(a.get().asLong(), out.length)] = kept;
        return new Val(x.type(), out, null);
    }
}
