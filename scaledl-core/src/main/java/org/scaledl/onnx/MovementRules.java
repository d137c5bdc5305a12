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
 * Operators that rearrange, cut, join or pad a tensor without computing on its elements: views ({@code Reshape},
 * {@code Squeeze}, {@code Flatten}), copies ({@code Transpose}, {@code Concat}, {@code Slice}, {@code Tile}) and
 * padding. Values are carried through for small known tensors.
 */
final class MovementRules {
    private MovementRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(MovementRules::unsqueeze, "Unsqueeze");
        t.one(MovementRules::squeeze, "Squeeze");
        t.one(MovementRules::concat, "Concat");
        t.one(MovementRules::reshape, "Reshape");
        t.one(MovementRules::flatten, "Flatten");
        t.one(MovementRules::transpose, "Transpose");
        t.one(MovementRules::expand, "Expand");
        t.one(MovementRules::tile, "Tile");
        t.one(MovementRules::slice, "Slice");
        t.put(MovementRules::split, "Split");
        t.one(MovementRules::pad, "Pad");
        t.one(MovementRules::depthSpace, "DepthToSpace", "SpaceToDepth");
        t.one(MovementRules::centerCropPad, "CenterCropPad");
    }

    /** Unsqueeze: {@code axes} an attribute before opset 13, input 1 from 13. */
    private static Val unsqueeze(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] axes = c.intsSince(13, "axes", 1);
        if (axes == null) {
            throw c.bad("no axes");
        }
        int r = x.shape().length + axes.length;
        boolean[] inserted = new boolean[r];
        for (long a : axes) {
            int ax = c.axis(a, r);
            if (inserted[ax]) {
                throw c.bad("duplicate axis " + a);
            }
            inserted[ax] = true;
        }
        long[] out = new long[r];
        int k = 0;
        for (int d = 0; d < r; d++) {
            out[d] = inserted[d] ? 1 : x.shape()[k++];
        }
        return OpContext.reshaped(x, out);
    }

    /** Squeeze: {@code axes} an attribute before opset 13, input 1 from 13; all 1-sized axes when absent. */
    private static Val squeeze(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] axes = c.intsSince(13, "axes", 1);
        int r = x.shape().length;
        boolean[] drop = new boolean[r];
        if (axes == null) {
            for (int d = 0; d < r; d++) {
                drop[d] = x.shape()[d] == 1;
            }
        } else {
            for (long a : axes) {
                int ax = c.axis(a, r);
                if (x.shape()[ax] != 1) {
                    throw c.bad("cannot squeeze axis " + a + " of size " + x.shape()[ax]);
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
        return OpContext.reshaped(x, out);
    }

    private static int count(boolean[] b) {
        int n = 0;
        for (boolean x : b) {
            n += x ? 1 : 0;
        }
        return n;
    }

    private static Val concat(OpContext c) throws Unknown {
        List<Val> parts = new ArrayList<>();
        for (int i = 0; i < c.node().inputs().size(); i++) {
            if (c.has(i)) {
                parts.add(c.input(i));
            }
        }
        if (parts.isEmpty()) {
            throw c.bad("no inputs");
        }
        int r = parts.get(0).shape().length;
        // Concat-1's axis was optional with default 1; required from opset 4
        int axis = c.axis(c.node().longAttribute("axis", c.opset() < 4 ? 1 : 0), r);
        long[] out = parts.get(0).shape().clone();
        out[axis] = 0;
        boolean known = true;
        for (Val p : parts) {
            if (p.shape().length != r) {
                throw c.bad("inputs have different ranks");
            }
            for (int d = 0; d < r; d++) {
                if (d != axis && p.shape()[d] != out[d]) {
                    throw c.bad("inputs differ in dimension " + d + ": " + p.shape()[d] + " vs " + out[d]);
                }
            }
            out[axis] = Math.addExact(out[axis], p.shape()[axis]);
            known &= p.value() != null;
        }
        DataType type = parts.get(0).type();
        if (!known || !OpContext.small(out)) {
            return new Val(type, out, null);
        }
        long outer = 1;
        for (int d = 0; d < axis; d++) {
            outer *= out[d];
        }
        int size = (int) ShapeInference.count(out);
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

    /** Reshape: the target shape an attribute before opset 5, input 1 from 5. */
    private static Val reshape(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] target = c.intsSince(5, "shape", 1);
        if (target == null) {
            throw c.bad("no target shape");
        }
        boolean allowZero = c.node().longAttribute("allowzero", 0) == 1;
        long[] out = new long[target.length];
        int infer = -1;
        long known = 1;
        for (int d = 0; d < target.length; d++) {
            long t = target[d];
            if (t == -1) {
                if (infer >= 0) {
                    throw c.bad("more than one -1 in target shape " + Arrays.toString(target));
                }
                infer = d;
                continue;
            }
            if (t == 0 && !allowZero) {
                if (d >= x.shape().length) {
                    throw c.bad("0 in target shape at " + d + " but input has rank " + x.shape().length);
                }
                t = x.shape()[d];
            }
            if (t < 0) {
                throw c.bad("negative dimension " + t + " in target shape " + Arrays.toString(target));
            }
            out[d] = t;
            known = Math.multiplyExact(known, t);
        }
        long total = ShapeInference.count(x.shape());
        if (infer >= 0) {
            if (known == 0 || total % known != 0) {
                throw c.bad("cannot reshape " + Arrays.toString(x.shape()) + " to " + Arrays.toString(target));
            }
            out[infer] = total / known;
        } else if (known != total) {
            throw c.bad("cannot reshape " + Arrays.toString(x.shape()) + " (" + total + " elements) to "
                    + Arrays.toString(out));
        }
        return OpContext.reshaped(x, out);
    }

    private static Val flatten(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        long a = c.node().longAttribute("axis", 1);
        int axis = (int) (a < 0 ? a + r : a);
        if (axis < 0 || axis > r) {
            throw c.bad("axis " + a + " out of range for rank " + r);
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
        return OpContext.reshaped(x, new long[] {outer, inner});
    }

    private static Val transpose(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        long[] perm = c.longsAttr("perm", null);
        if (perm == null) {
            perm = new long[r];
            for (int d = 0; d < r; d++) {
                perm[d] = r - 1 - d;
            }
        }
        if (perm.length != r) {
            throw c.bad("perm " + Arrays.toString(perm) + " does not match rank " + r);
        }
        long[] out = new long[r];
        boolean[] used = new boolean[r];
        for (int d = 0; d < r; d++) {
            int p = c.axis(perm[d], r);
            if (used[p]) {
                throw c.bad("perm " + Arrays.toString(perm) + " is not a permutation");
            }
            used[p] = true;
            out[d] = x.shape()[p];
        }
        if (x.value() == null) {
            return new Val(x.type(), out, null);
        }
        return new Val(x.type(), out, Values.transpose(x.value(), perm, out));
    }

    private static Val expand(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] target = c.value(1).longs();
        long[] out = c.broadcast(x.shape(), target);
        if (x.value() == null || !OpContext.small(out)) {
            return new Val(x.type(), out, null);
        }
        int size = (int) ShapeInference.count(out);
        if (x.type().isFloating()) {
            double[] v = new double[size];
            for (int k = 0; k < size; k++) {
                v[k] = x.value().doubleAt(OpContext.bindex(out, x.shape(), k));
            }
            return new Val(x.type(), out, TensorValue.ofDoubles(x.type(), out, v));
        }
        long[] v = new long[size];
        for (int k = 0; k < size; k++) {
            v[k] = x.value().longAt(OpContext.bindex(out, x.shape(), k));
        }
        return new Val(x.type(), out, TensorValue.ofLongs(x.type(), out, v));
    }

    /** Tile: {@code repeats} per axis (input 1); Tile-1 (before opset 6) had scalar {@code tiles} and {@code axis}. */
    private static Val tile(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] reps;
        if (c.opset() < 6 && c.has(2)) {
            long tiles = c.value(1).longAt(0);
            int axis = c.axis(c.value(2).longAt(0), x.shape().length);
            reps = new long[x.shape().length];
            Arrays.fill(reps, 1);
            reps[axis] = tiles;
        } else {
            reps = c.value(1).longs();
        }
        if (reps.length != x.shape().length) {
            throw c.bad("repeats length " + reps.length + " differs from rank " + x.shape().length);
        }
        long[] out = new long[reps.length];
        for (int d = 0; d < out.length; d++) {
            out[d] = Math.multiplyExact(x.shape()[d], reps[d]);
        }
        c.checkDims(out);
        if (x.value() == null || !OpContext.small(out) || ShapeInference.count(x.shape()) == 0) {
            return new Val(x.type(), out, null);
        }
        return new Val(x.type(), out, Values.tile(x.value(), out));
    }

    /** Slice: {@code starts}, {@code ends}, {@code axes} attributes before opset 10; inputs 1 to 4 (steps) from 10. */
    private static Val slice(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        long[] starts = c.intsSince(10, "starts", 1);
        long[] ends = c.intsSince(10, "ends", 2);
        if (starts == null || ends == null || starts.length != ends.length) {
            throw c.bad("starts and ends must be given with equal lengths");
        }
        long[] axes = c.intsSince(10, "axes", 3);
        long[] steps = c.has(4) ? c.value(4).longs() : null;
        if (axes != null && axes.length != starts.length || steps != null && steps.length != starts.length) {
            throw c.bad("axes and steps must have as many values as starts (" + starts.length + ")");
        }
        long[] out = x.shape().clone();
        long[] first = new long[r];
        long[] step = new long[r];
        Arrays.fill(step, 1);
        for (int i = 0; i < starts.length; i++) {
            int ax = axes == null ? i : c.axis(axes[i], r);
            long st = steps == null ? 1 : steps[i];
            if (st == 0) {
                throw c.bad("step is zero");
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

    /**
     * Split: {@code split} sizes an attribute before opset 13 (Split-1 also took them as input 1), input 1 from 13;
     * equal parts otherwise, of {@code ceil(dim / num_outputs)} from opset 18 (the last one smaller).
     */
    private static List<Val> split(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        int axis = c.axis(c.node().longAttribute("axis", 0), r);
        int n = c.node().outputs().size();
        long[] sizes = c.intsSince(13, "split", 1);
        long dim = x.shape()[axis];
        if (sizes == null) {
            long numOutputs = c.node().longAttribute("num_outputs", n);
            if (numOutputs <= 0) {
                throw c.bad("num_outputs must be positive: " + numOutputs);
            }
            long chunk = (dim + numOutputs - 1) / numOutputs;
            sizes = new long[n];
            for (int i = 0; i < n; i++) {
                sizes[i] = Math.max(0, Math.min(chunk, dim - i * chunk));
            }
        }
        long sum = 0;
        for (long s : sizes) {
            if (s < 0) {
                throw c.bad("negative split size in " + Arrays.toString(sizes));
            }
            sum = Math.addExact(sum, s);
        }
        if (sizes.length != n || sum != dim) {
            throw c.bad("split sizes " + Arrays.toString(sizes) + " do not cover dimension " + dim + " in " + n
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

    /**
     * Pad: {@code pads} (Pad-1: {@code paddings}) and {@code value} attributes before opset 11; {@code pads} and
     * {@code constant_value} inputs 1 and 2 from 11, and {@code axes} input 3 from 18.
     */
    private static Val pad(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        long[] pads = c.intsSince(11, "pads", 1);
        if (pads == null) {
            pads = c.longsAttr("paddings", null);
        }
        if (pads == null) {
            throw c.bad("no pads");
        }
        long[] axes = c.has(3) ? c.value(3).longs() : null;
        int k = axes == null ? r : axes.length;
        if (pads.length != 2 * k) {
            throw c.bad("pads has " + pads.length + " values, expected " + 2 * k);
        }
        long[] out = x.shape().clone();
        for (int i = 0; i < k; i++) {
            int ax = axes == null ? i : c.axis(axes[i], r);
            out[ax] = Math.addExact(out[ax], Math.addExact(pads[i], pads[i + k]));
        }
        c.checkDims(out);
        String mode = c.node().attribute("mode").map(Attribute::asString).orElse("constant");
        if (x.value() == null || axes != null || !mode.equals("constant") || !OpContext.small(out)) {
            return new Val(x.type(), out, null);
        }
        double fill = c.node().attribute("value").map(Attribute::asDouble).orElse(0.0);
        if (c.opset() >= 11 && c.has(2) && c.input(2).value() != null && c.input(2).value().size() > 0) {
            fill = c.input(2).value().doubleAt(0);
        }
        return new Val(x.type(), out, Values.pad(x.value(), pads, fill, out));
    }

    /** DepthToSpace / SpaceToDepth on {@code [N, C, H, W]} with {@code blocksize}. */
    private static Val depthSpace(OpContext c) throws Unknown {
        boolean toSpace = c.node().opType().equals("DepthToSpace");
        Val x = c.input(0);
        long[] xs = x.shape();
        long b = c.node().longAttribute("blocksize", 0);
        if (xs.length != 4 || b <= 0) {
            throw c.bad("needs a rank-4 input and a positive blocksize, got " + Arrays.toString(xs) + " and " + b);
        }
        long[] out = xs.clone();
        if (toSpace) {
            if (xs[1] % (b * b) != 0) {
                throw c.bad("channels " + xs[1] + " are not divisible by blocksize² " + b * b);
            }
            out[1] = xs[1] / (b * b);
            out[2] = xs[2] * b;
            out[3] = xs[3] * b;
        } else {
            if (xs[2] % b != 0 || xs[3] % b != 0) {
                throw c.bad("spatial size " + xs[2] + "x" + xs[3] + " is not divisible by blocksize " + b);
            }
            out[1] = xs[1] * b * b;
            out[2] = xs[2] / b;
            out[3] = xs[3] / b;
        }
        c.checkDims(out);
        return new Val(x.type(), out, null);
    }

    /** CenterCropPad: the given sizes on the given (or all) axes. */
    private static Val centerCropPad(OpContext c) throws Unknown {
        Val x = c.input(0);
        long[] sizes = c.value(1).longs();
        long[] axes = c.longsAttr("axes", null);
        long[] out = x.shape().clone();
        for (int i = 0; i < sizes.length; i++) {
            out[axes == null ? i : c.axis(axes[i], out.length)] = sizes[i];
        }
        c.checkDims(out);
        return new Val(x.type(), out, null);
    }
}
