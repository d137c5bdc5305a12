package org.scaledl.onnx;

import java.util.Arrays;
import org.scaledl.graph.Attribute;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/** Resampling: {@code Resize}, {@code Upsample} and {@code GridSample}. */
final class ResizeRules {
    private ResizeRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ResizeRules::resize, "Resize", "Upsample");
        t.one(ResizeRules::gridSample, "GridSample");
    }

    private static Val resize(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        long[] out = x.shape().clone();
        boolean upsample = c.node().opType().equals("Upsample");
        int scalesIndex = upsample ? 1 : 2;
        if (!upsample && c.has(3)) {
            long[] sizes = c.value(3).longs();
            if (sizes.length != r) {
                throw c.bad("sizes has " + sizes.length + " values for rank " + r);
            }
            out = sizes;
        } else if (c.has(scalesIndex) && c.input(scalesIndex).elements() > 0
                || c.node().attribute("scales").isPresent()) {
            double[] scales = c.node().attribute("scales").map(Attribute::asDoubles).orElse(null);
            if (scales == null) {
                scales = c.value(scalesIndex).doubles();
            }
            if (scales.length != r) {
                throw c.bad("scales has " + scales.length + " values for rank " + r);
            }
            for (int d = 0; d < r; d++) {
                out[d] = (long) Math.floor(x.shape()[d] * scales[d]);
            }
        } else {
            throw c.bad("neither scales nor sizes given");
        }
        c.checkDims(out);
        return new Val(x.type(), out, null);
    }

    /** GridSample: {@code [N, C]} of the input, the grid's spatial sizes. */
    private static Val gridSample(OpContext c) throws Unknown {
        long[] x = c.shape(0);
        long[] grid = c.shape(1);
        if (x.length < 3 || grid.length != x.length) {
            throw c.bad("input " + Arrays.toString(x) + " and grid " + Arrays.toString(grid) + " do not fit");
        }
        long[] out = new long[x.length];
        out[0] = x[0];
        out[1] = x[1];
        System.arraycopy(grid, 1, out, 2, x.length - 2);
        return new Val(c.input(0).type(), out, null);
    }
}
