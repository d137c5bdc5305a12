package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * Sliding windows: convolutions, transposed convolutions and pooling, with ONNX's {@code pads}, {@code auto_pad},
 * {@code dilations} and {@code ceil_mode} rules.
 */
final class ConvRules {
    private ConvRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ConvRules::conv, "Conv");
        t.one(ConvRules::convTranspose, "ConvTranspose");
        t.put(ConvRules::pool, "MaxPool", "AveragePool", "LpPool");
        t.one(ConvRules::globalPool, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool");
    }

    /** Output spatial sizes of a convolution or pooling window, following ONNX's pads/auto_pad/ceil_mode rules. */
    private static long[] windowOutput(OpContext c, long[] inSpatial, long[] kernel, long[] strides,
            long[] dilations, long[] pads, boolean ceil) {
        int n = inSpatial.length;
        long[] out = new long[n];
        String autoPad = c.node().attribute("auto_pad").map(Attribute::asString).orElse("NOTSET");
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
                throw c.bad("window larger than its padded input: input " + Arrays.toString(inSpatial)
                        + ", kernel " + Arrays.toString(kernel));
            }
        }
        return out;
    }

    private static long[] spatialAttr(OpContext c, String name, int n, long def) {
        long[] v = c.longsAttr(name, null);
        if (v == null) {
            v = new long[name.equals("pads") ? 2 * n : n];
            Arrays.fill(v, def);
        }
        if (v.length != (name.equals("pads") ? 2 * n : n)) {
            throw c.bad(name + " " + Arrays.toString(v) + " does not fit " + n + " spatial dimensions");
        }
        for (long x : v) {
            if (name.equals("pads") ? x < 0 : x <= 0) {
                throw c.bad("invalid " + name + " " + Arrays.toString(v));
            }
        }
        return v;
    }

    /** Input and weight of a (transposed) convolution, with ranks checked, and its {@code group} attribute. */
    private record ConvOperands(Val x, long[] xs, long[] ws, int n, long group) {
    }

    /** Checks ranks and channels: {@code C_in = w[1]·group} (Conv) or {@code C_in = w[0]} (ConvTranspose). */
    private static ConvOperands convOperands(OpContext c, boolean transposed) throws Unknown {
        Val x = c.input(0);
        long[] xs = x.shape();
        long[] ws = c.shape(1);
        if (xs.length < 3 || ws.length != xs.length) {
            throw c.bad("input rank " + xs.length + " and weight rank " + ws.length + " must match and be >= 3");
        }
        long group = c.node().longAttribute("group", 1);
        if (group <= 0 || xs[1] != (transposed ? ws[0] : ws[1] * group) || ws[0] % group != 0) {
            throw c.bad("channels " + xs[1] + " do not match weight " + Arrays.toString(ws) + " with group "
                    + group);
        }
        return new ConvOperands(x, xs, ws, xs.length - 2, group);
    }

    private static Val conv(OpContext c) throws Unknown {
        ConvOperands o = convOperands(c, false);
        long[] xs = o.xs();
        long[] ws = o.ws();
        int n = o.n();
        long[] kernel = c.longsAttr("kernel_shape", Arrays.copyOfRange(ws, 2, ws.length));
        long[] sp = windowOutput(c, Arrays.copyOfRange(xs, 2, xs.length), kernel, spatialAttr(c, "strides", n, 1),
                spatialAttr(c, "dilations", n, 1), spatialAttr(c, "pads", n, 0), false);
        long[] out = new long[xs.length];
        out[0] = xs[0];
        out[1] = ws[0];
        System.arraycopy(sp, 0, out, 2, n);
        return new Val(o.x().type(), out, null);
    }

    /**
     * ConvTranspose: weight {@code [C, M/group, k...]}; spatial output {@code stride·(in − 1) + output_padding +
     * (k − 1)·dilation + 1 − pads}, or {@code output_shape} when given, or {@code in·stride} under SAME auto-padding.
     */
    private static Val convTranspose(OpContext c) throws Unknown {
        ConvOperands o = convOperands(c, true);
        long[] xs = o.xs();
        long[] ws = o.ws();
        int n = o.n();
        long[] kernel = c.longsAttr("kernel_shape", Arrays.copyOfRange(ws, 2, ws.length));
        if (kernel.length != n) {
            throw c.bad("kernel_shape must have " + n + " values");
        }
        long[] strides = spatialAttr(c, "strides", n, 1);
        long[] dilations = spatialAttr(c, "dilations", n, 1);
        long[] pads = spatialAttr(c, "pads", n, 0);
        long[] outputPadding = c.longsAttr("output_padding", new long[n]);
        long[] outputShape = c.longsAttr("output_shape", null);
        if (outputPadding.length != n) {
            throw c.bad("output_padding must have " + n + " values");
        }
        if (outputShape != null && outputShape.length != n && outputShape.length != n + 2) {
            throw c.bad("output_shape must have " + n + " (or " + (n + 2) + ") values");
        }
        String autoPad = c.node().attribute("auto_pad").map(Attribute::asString).orElse("NOTSET");
        long[] out = new long[xs.length];
        out[0] = xs[0];
        out[1] = ws[1] * o.group();
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
                throw c.bad("output size " + out[i + 2] + " is not positive: input " + Arrays.toString(xs)
                        + ", kernel " + Arrays.toString(kernel));
            }
        }
        c.checkDims(out);
        return new Val(o.x().type(), out, null);
    }

    private static List<Val> pool(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] xs = x.shape();
        if (xs.length < 3) {
            throw c.bad("input rank " + xs.length + " must be >= 3");
        }
        int n = xs.length - 2;
        long[] kernel = c.longsAttr("kernel_shape", null);
        if (kernel == null || kernel.length != n) {
            throw c.bad("kernel_shape must have " + n + " values");
        }
        long[] sp = windowOutput(c, Arrays.copyOfRange(xs, 2, xs.length), kernel, spatialAttr(c, "strides", n, 1),
                spatialAttr(c, "dilations", n, 1), spatialAttr(c, "pads", n, 0),
                c.node().longAttribute("ceil_mode", 0) == 1);
        long[] out = xs.clone();
        System.arraycopy(sp, 0, out, 2, n);
        List<Val> res = new ArrayList<>();
        res.add(new Val(x.type(), out, null));
        if (c.node().outputs().size() > 1) {
            res.add(new Val(DataType.INT64, out, null));
        }
        return res;
    }

    private static Val globalPool(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] out = x.shape().clone();
        if (out.length < 3) {
            throw c.bad("input rank " + out.length + " must be >= 3");
        }
        for (int d = 2; d < out.length; d++) {
            out[d] = 1;
        }
        return new Val(x.type(), out, null);
    }
}
