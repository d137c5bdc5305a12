package org.scaledl.onnx;

import java.util.function.DoubleUnaryOperator;
import java.util.function.LongUnaryOperator;
import org.scaledl.graph.DataType;
import org.scaledl.graph.TensorValue;

/**
 * The small-tensor interpreter behind {@link ShapeInference}: operators evaluated on known values, so that shapes
 * computed at run time from other shapes ({@code Shape → Cast → Div → Pad}, reversed pad vectors sliced with a
 * negative step, index tables built with {@code Range}, {@code Tile} and {@code ScatterND}) resolve while importing.
 * Every method takes and returns row-major tensors; callers check that the output is small
 * ({@link ShapeInference#MAX_TRACKED}) before calling. Integral tensors are computed in {@code long}, floating ones in
 * {@code double}, as ONNX Runtime would up to rounding.
 */
final class Values {
    private Values() {
    }

    /** A tensor of the given type from doubles (converted to longs, truncating, for an integral type). */
    static TensorValue of(DataType type, long[] dims, double[] d) {
        if (type.isFloating()) {
            return TensorValue.ofDoubles(type, dims, d);
        }
        long[] l = new long[d.length];
        for (int i = 0; i < d.length; i++) {
            l[i] = (long) d[i];
        }
        return TensorValue.ofLongs(integral(type), dims, l);
    }

    /** A tensor of the given type from longs. */
    static TensorValue ofLongs(DataType type, long[] dims, long[] l) {
        if (type.isFloating()) {
            double[] d = new double[l.length];
            for (int i = 0; i < l.length; i++) {
                d[i] = l[i];
            }
            return TensorValue.ofDoubles(type, dims, d);
        }
        return TensorValue.ofLongs(integral(type), dims, l);
    }

    /** Types that are neither floating nor integral (strings) carry no values; treat them as INT64. */
    private static DataType integral(DataType type) {
        return type.isIntegral() ? type : DataType.INT64;
    }

    /** Row-major strides of a shape. */
    static long[] strides(long[] shape) {
        long[] s = new long[shape.length];
        long acc = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            s[d] = acc;
            acc *= shape[d];
        }
        return s;
    }

    /** The coordinates of a flat row-major index into {@code coord} (modified). */
    static void coords(long flat, long[] shape, long[] coord) {
        for (int d = shape.length - 1; d >= 0; d--) {
            long n = shape[d];
            coord[d] = n == 0 ? 0 : flat % n;
            flat = n == 0 ? 0 : flat / n;
        }
    }

    /** An element-wise function: floating types through {@code f}, integral ones through {@code g}. */
    static TensorValue map(TensorValue x, DoubleUnaryOperator f, LongUnaryOperator g) {
        if (x.isFloating() || g == null) {
            double[] v = x.doubles();
            for (int i = 0; i < v.length; i++) {
                v[i] = f.applyAsDouble(v[i]);
            }
            return of(x.type(), x.dims(), v);
        }
        long[] v = x.longs();
        for (int i = 0; i < v.length; i++) {
            v[i] = g.applyAsLong(v[i]);
        }
        return TensorValue.ofLongs(x.type(), x.dims(), v);
    }

    /** {@code out[i] = x[source(i)]}: the common form of every data-movement operator. */
    private interface Source {
        long at(long[] outCoord);
    }

    private static TensorValue gatherBy(TensorValue x, long[] outShape, Source source) {
        int n = (int) ShapeInference.count(outShape);
        long[] coord = new long[outShape.length];
        if (x.isFloating()) {
            double[] in = x.doubles();
            double[] out = new double[n];
            for (int i = 0; i < n; i++) {
                coords(i, outShape, coord);
                out[i] = in[(int) source.at(coord)];
            }
            return TensorValue.ofDoubles(x.type(), outShape, out);
        }
        long[] in = x.longs();
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            coords(i, outShape, coord);
            out[i] = in[(int) source.at(coord)];
        }
        return TensorValue.ofLongs(x.type(), outShape, out);
    }

    /** Transpose by {@code perm} (output axis d is input axis perm[d]). */
    static TensorValue transpose(TensorValue x, long[] perm, long[] outShape) {
        long[] st = strides(x.dims());
        return gatherBy(x, outShape, c -> {
            long idx = 0;
            for (int d = 0; d < c.length; d++) {
                idx += c[d] * st[(int) perm[d]];
            }
            return idx;
        });
    }

    /** Slice with a first index and step per axis (already clamped by the caller). */
    static TensorValue slice(TensorValue x, long[] first, long[] step, long[] outShape) {
        long[] st = strides(x.dims());
        return gatherBy(x, outShape, c -> {
            long idx = 0;
            for (int d = 0; d < c.length; d++) {
                idx += (first[d] + c[d] * step[d]) * st[d];
            }
            return idx;
        });
    }

    /** Tile: output coordinate modulo the input size. */
    static TensorValue tile(TensorValue x, long[] outShape) {
        long[] in = x.dims();
        long[] st = strides(in);
        return gatherBy(x, outShape, c -> {
            long idx = 0;
            for (int d = 0; d < c.length; d++) {
                idx += (c[d] % in[d]) * st[d];
            }
            return idx;
        });
    }

    /** One piece of a split along an axis, starting at {@code offset}. */
    static TensorValue splitPart(TensorValue x, int axis, long offset, long[] outShape) {
        long[] st = strides(x.dims());
        return gatherBy(x, outShape, c -> {
            long idx = 0;
            for (int d = 0; d < c.length; d++) {
                idx += (d == axis ? c[d] + offset : c[d]) * st[d];
            }
            return idx;
        });
    }

    /** Constant-mode pad: {@code pads[i]} before and {@code pads[i + r]} after axis i, filled with {@code fill}. */
    static TensorValue pad(TensorValue x, long[] pads, double fill, long[] outShape) {
        int r = outShape.length;
        long[] in = x.dims();
        long[] st = strides(in);
        int n = (int) ShapeInference.count(outShape);
        long[] coord = new long[r];
        double[] src = x.doubles();
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            coords(i, outShape, coord);
            long idx = 0;
            boolean inside = true;
            for (int d = 0; d < r && inside; d++) {
                long c = coord[d] - pads[d];
                inside = c >= 0 && c < in[d];
                idx += c * st[d];
            }
            out[i] = inside ? src[(int) idx] : fill;
        }
        return of(x.type(), outShape, out);
    }

    /** GatherElements: {@code out[c] = data[c with axis replaced by indices[c]]}. */
    static TensorValue gatherElements(TensorValue data, TensorValue indices, int axis) {
        long[] ds = data.dims();
        long[] st = strides(ds);
        long[] ix = indices.longs();
        long[] is = indices.dims();
        long[] ist = strides(is);
        return gatherBy(data, is, c -> {
            long flat = 0;
            for (int d = 0; d < c.length; d++) {
                flat += c[d] * ist[d];
            }
            long j = ix[(int) flat];
            j = j < 0 ? j + ds[axis] : j;
            if (j < 0 || j >= ds[axis]) {
                throw new IllegalArgumentException("index " + ix[(int) flat] + " out of range for axis of length "
                        + ds[axis]);
            }
            long idx = 0;
            for (int d = 0; d < c.length; d++) {
                idx += (d == axis ? j : c[d]) * st[d];
            }
            return idx;
        });
    }

    /** ScatterND ({@code reduction} none): copies {@code data}, then writes each update slice at its index. */
    static TensorValue scatterND(TensorValue data, TensorValue indices, TensorValue updates) {
        long[] ds = data.dims();
        long[] st = strides(ds);
        long[] is = indices.dims();
        int k = (int) is[is.length - 1];
        if (k > ds.length) {
            throw new IllegalArgumentException("index depth " + k + " exceeds data rank " + ds.length);
        }
        long slice = 1;
        for (int d = k; d < ds.length; d++) {
            slice *= ds[d];
        }
        long[] ix = indices.longs();
        int rows = ix.length / Math.max(1, k);
        double[] out = data.doubles();
        double[] up = updates.doubles();
        if ((long) rows * slice != up.length) {
            throw new IllegalArgumentException("updates hold " + up.length + " values for " + rows + " slices of "
                    + slice);
        }
        for (int r = 0; r < rows; r++) {
            long base = 0;
            for (int d = 0; d < k; d++) {
                long j = ix[r * k + d];
                j = j < 0 ? j + ds[d] : j;
                if (j < 0 || j >= ds[d]) {
                    throw new IllegalArgumentException("index " + ix[r * k + d] + " out of range for axis " + d
                            + " of length " + ds[d]);
                }
                base += j * st[d];
            }
            for (long q = 0; q < slice; q++) {
                out[(int) (base + q)] = up[(int) (r * slice + q)];
            }
        }
        return of(data.type(), ds, out);
    }

    /** ScatterElements ({@code reduction} none). */
    static TensorValue scatterElements(TensorValue data, TensorValue indices, TensorValue updates, int axis) {
        long[] ds = data.dims();
        long[] st = strides(ds);
        long[] is = indices.dims();
        long[] ix = indices.longs();
        double[] out = data.doubles();
        double[] up = updates.doubles();
        long[] c = new long[is.length];
        for (int i = 0; i < ix.length; i++) {
            coords(i, is, c);
            long j = ix[i] < 0 ? ix[i] + ds[axis] : ix[i];
            if (j < 0 || j >= ds[axis]) {
                throw new IllegalArgumentException("index " + ix[i] + " out of range for axis of length " + ds[axis]);
            }
            long idx = 0;
            for (int d = 0; d < c.length; d++) {
                idx += (d == axis ? j : c[d]) * st[d];
            }
            out[(int) idx] = up[i];
        }
        return of(data.type(), ds, out);
    }

    /** The reductions ONNX defines, over the axes marked in {@code reduced}. */
    enum Reduction { SUM, MEAN, MAX, MIN, PROD, L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP }

    static TensorValue reduce(TensorValue x, boolean[] reduced, Reduction op, long[] outShape) {
        long[] in = x.dims();
        long[] keptStrides = new long[in.length];
        long acc = 1;
        for (int d = in.length - 1; d >= 0; d--) {
            keptStrides[d] = reduced[d] ? 0 : acc;
            acc *= reduced[d] ? 1 : in[d];
        }
        int n = (int) acc;
        double[] out = new double[n];
        long[] count = new long[n];
        java.util.Arrays.fill(out, switch (op) {
            case MAX -> Double.NEGATIVE_INFINITY;
            case MIN -> Double.POSITIVE_INFINITY;
            case PROD -> 1;
            default -> 0;
        });
        double[] v = x.doubles();
        long[] c = new long[in.length];
        for (int i = 0; i < v.length; i++) {
            coords(i, in, c);
            int o = 0;
            for (int d = 0; d < c.length; d++) {
                o += (int) (c[d] * keptStrides[d]);
            }
            double e = v[i];
            out[o] = switch (op) {
                case SUM, MEAN -> out[o] + e;
                case MAX -> Math.max(out[o], e);
                case MIN -> Math.min(out[o], e);
                case PROD -> out[o] * e;
                case L1 -> out[o] + Math.abs(e);
                case L2, SUM_SQUARE -> out[o] + e * e;
                case LOG_SUM -> out[o] + e;
                case LOG_SUM_EXP -> out[o] + Math.exp(e);
            };
            count[o]++;
        }
        for (int o = 0; o < n; o++) {
            out[o] = switch (op) {
                case MEAN -> count[o] == 0 ? Double.NaN : out[o] / count[o];
                case L2 -> Math.sqrt(out[o]);
                case LOG_SUM, LOG_SUM_EXP -> Math.log(out[o]);
                default -> out[o];
            };
        }
        return of(x.type(), outShape, out);
    }

    /** CumSum along an axis. */
    static TensorValue cumSum(TensorValue x, int axis, boolean exclusive, boolean reverse) {
        long[] s = x.dims();
        long[] st = strides(s);
        double[] v = x.doubles();
        double[] out = new double[v.length];
        long len = s[axis];
        long[] c = new long[s.length];
        for (int i = 0; i < v.length; i++) {
            coords(i, s, c);
            if (c[axis] != 0) {
                continue;
            }
            double run = 0;
            for (long k = 0; k < len; k++) {
                long pos = reverse ? len - 1 - k : k;
                int idx = (int) (i + pos * st[axis]);
                if (exclusive) {
                    out[idx] = run;
                    run += v[idx];
                } else {
                    run += v[idx];
                    out[idx] = run;
                }
            }
        }
        return of(x.type(), s, out);
    }

    /** Trilu: keeps the lower ({@code upper == false}) or upper triangle of the last two axes, offset {@code k}. */
    static TensorValue trilu(TensorValue x, boolean upper, long k) {
        long[] s = x.dims();
        if (s.length < 2) {
            throw new IllegalArgumentException("Trilu needs rank >= 2");
        }
        double[] v = x.doubles();
        long[] c = new long[s.length];
        for (int i = 0; i < v.length; i++) {
            coords(i, s, c);
            long row = c[s.length - 2];
            long col = c[s.length - 1];
            boolean keep = upper ? col - row >= k : col - row <= k;
            if (!keep) {
                v[i] = 0;
            }
        }
        return of(x.type(), s, v);
    }
}
