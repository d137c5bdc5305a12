package org.scaledl.onnx;

import java.util.Arrays;
import org.scaledl.graph.Attribute;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * Resampling, in the form of the model's opset:
 * <ul>
 * <li>{@code Resize}-10: inputs {@code X, scales}; output {@code floor(X.shape · scales)};</li>
 * <li>{@code Resize}-11, -13: inputs {@code X, roi, scales, sizes} ({@code roi} and {@code scales} optional from
 * 13): {@code sizes} when given (and not empty), else {@code floor(X.shape · scales)};</li>
 * <li>{@code Resize}-18, -19: as 13, on the subset of {@code axes} (an attribute) when given, and with
 * {@code keep_aspect_ratio_policy}: for {@code not_larger} ({@code not_smaller}) the smallest (largest) ratio
 * {@code s = sizes[i] / X.shape[axes[i]]} over the axes scales all of them, {@code round(s · X.shape[axes[i]])},
 * halves rounded up, in single precision as ONNX's reference;</li>
 * <li>{@code Upsample}-1: attributes {@code height_scale}, {@code width_scale} on {@code [N, C, H, W]};
 * {@code Upsample}-7: attribute {@code scales}; {@code Upsample}-9, -10: input {@code scales};</li>
 * <li>{@code GridSample}: {@code [N, C]} of the input, the grid's spatial sizes.</li>
 * </ul>
 */
final class ResizeRules {
    private ResizeRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ResizeRules::resize, "Resize");
        t.one(ResizeRules::upsample, "Upsample");
        t.one(ResizeRules::gridSample, "GridSample");
    }

    private static Val resize(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] in = x.shape();
        int r = in.length;
        // Resize-10 has two inputs; a later form with more inputs under an old opset is read as the later form.
        boolean form10 = c.opset() <= 10 && c.node().inputs().size() <= 2;
        int scalesIndex = form10 ? 1 : 2;
        int[] axes = axes(c, r);
        int k = axes.length;
        String policy = c.stringAttr("keep_aspect_ratio_policy", "stretch");
        if (!policy.equals("stretch") && !policy.equals("not_larger") && !policy.equals("not_smaller")) {
            throw c.bad("unknown keep_aspect_ratio_policy '" + policy + "'");
        }
        long[] sizes = !form10 && c.has(3) && c.input(3).elements() > 0 ? c.value(3).longs() : null;
        long[] out = in.clone();
        if (sizes != null) {
            if (sizes.length != k) {
                throw c.bad("sizes has " + sizes.length + " values for " + k + " axes (rank " + r + ")");
            }
            if (!policy.equals("stretch")) {
                sizes = keepAspectRatio(c, policy.equals("not_larger"), in, axes, sizes);
            }
            for (int i = 0; i < k; i++) {
                out[axes[i]] = sizes[i];
            }
        } else if (c.has(scalesIndex) && c.input(scalesIndex).elements() > 0) {
            if (!policy.equals("stretch")) {
                throw c.bad("keep_aspect_ratio_policy '" + policy + "' needs sizes, not scales");
            }
            double[] scales = c.value(scalesIndex).doubles();
            if (scales.length != k) {
                throw c.bad("scales has " + scales.length + " values for " + k + " axes (rank " + r + ")");
            }
            for (int i = 0; i < k; i++) {
                out[axes[i]] = scaled(c, in[axes[i]], scales[i]);
            }
        } else {
            throw c.bad("neither scales nor sizes given" + (form10 ? " (Resize-10 takes scales as input 1)" : ""));
        }
        c.checkDims(out);
        return new Val(x.type(), out, null);
    }

    /** The {@code axes} attribute (Resize-18) normalized, or all axes. */
    private static int[] axes(OpContext c, int rank) {
        long[] a = c.longsAttr("axes", null);
        if (a == null) {
            int[] all = new int[rank];
            Arrays.setAll(all, i -> i);
            return all;
        }
        int[] out = new int[a.length];
        boolean[] seen = new boolean[rank];
        for (int i = 0; i < a.length; i++) {
            out[i] = c.axis(a[i], rank);
            if (seen[out[i]]) {
                throw c.bad("repeated axis " + a[i]);
            }
            seen[out[i]] = true;
        }
        return out;
    }

    /** Sizes adjusted to keep the input's aspect ratio over the resized axes (ONNX's single-precision rule). */
    private static long[] keepAspectRatio(OpContext c, boolean notLarger, long[] in, int[] axes, long[] sizes) {
        float scale = notLarger ? Float.MAX_VALUE : Float.MIN_VALUE;
        for (int i = 0; i < sizes.length; i++) {
            if (in[axes[i]] == 0) {
                throw c.bad("cannot keep the aspect ratio of an empty axis " + axes[i]);
            }
            float s = sizes[i] / (float) in[axes[i]];
            scale = notLarger ? Math.min(scale, s) : Math.max(scale, s);
        }
        long[] out = new long[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            float v = scale * in[axes[i]];
            if (!(v < 0x1p62f)) {
                throw c.bad("size " + v + " of axis " + axes[i] + " is out of range");
            }
            out[i] = (long) Math.floor(v + 0.5);
        }
        return out;
    }

    /** {@code floor(dim · scale)}, refusing a scale that is negative, not finite or overflows. */
    private static long scaled(OpContext c, long dim, double scale) {
        double v = Math.floor(dim * scale);
        if (!(v >= 0 && v < 0x1p62)) {
            throw c.bad("scale " + scale + " of a dimension of " + dim + " gives " + v);
        }
        return (long) v;
    }

    private static Val upsample(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] in = x.shape();
        double[] scales = c.node().attribute("scales").map(Attribute::asDoubles).orElse(null);
        if (scales == null && c.has(1)) {
            scales = c.value(1).doubles();
        }
        if (scales == null && c.node().attribute("height_scale").isPresent() && in.length == 4) {
            // Upsample-1
            scales = new double[] {1, 1, c.node().attribute("height_scale").get().asDouble(),
                c.node().attribute("width_scale").map(Attribute::asDouble).orElse(1.0)};
        }
        if (scales == null) {
            throw c.bad("no scales");
        }
        if (scales.length != in.length) {
            throw c.bad("scales has " + scales.length + " values for rank " + in.length);
        }
        long[] out = new long[in.length];
        for (int d = 0; d < in.length; d++) {
            out[d] = scaled(c, in[d], scales[d]);
        }
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
