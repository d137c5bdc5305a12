package org.scaledl.graph;

import java.util.Arrays;
import java.util.Objects;
import org.scaledl.Checks;

/**
 * A small constant tensor with known values: a {@code Constant} node's value, a tensor attribute, or a shape computed
 * while importing. Integral values are held as {@code long}s, floating values as {@code double}s; exactly one of
 * {@link #longs()} and {@link #doubles()} is non-empty unless the tensor has no elements.
 */
public final class TensorValue {
    private final DataType type;
    private final long[] dims;
    private final long[] longs;
    private final double[] doubles;

    private TensorValue(DataType type, long[] dims, long[] longs, double[] doubles) {
        this.type = Objects.requireNonNull(type, "type");
        this.dims = dims.clone();
        this.longs = longs;
        this.doubles = doubles;
    }

    /** An integral tensor. */
    public static TensorValue ofLongs(DataType type, long[] dims, long[] values) {
        Checks.argument(!type.isFloating(), "not an integral type: %s", type);
        checkCount(dims, values.length);
        return new TensorValue(type, dims, values.clone(), new double[0]);
    }

    /** A floating tensor. */
    public static TensorValue ofDoubles(DataType type, long[] dims, double[] values) {
        checkCount(dims, values.length);
        return new TensorValue(type, dims, new long[0], values.clone());
    }

    /** An INT64 vector. */
    public static TensorValue int64Vector(long... values) {
        return ofLongs(DataType.INT64, new long[] {values.length}, values);
    }

    /** An INT64 scalar. */
    public static TensorValue int64Scalar(long value) {
        return ofLongs(DataType.INT64, new long[0], new long[] {value});
    }

    private static void checkCount(long[] dims, int count) {
        long n = 1;
        for (long d : dims) {
            if (d < 0) {
                // the message is built only on failure: building it at every step would be quadratic in the rank
                throw new IllegalArgumentException("negative dimension in " + Arrays.toString(dims));
            }
            n = Math.multiplyExact(n, d);
        }
        Checks.argument(n == count, "dims %s hold %s elements, got %s values", Arrays.toString(dims), n,
                count);
    }

    /** Element type. */
    public DataType type() {
        return type;
    }

    /** Dimensions (a copy). */
    public long[] dims() {
        return dims.clone();
    }

    /** Rank. */
    public int rank() {
        return dims.length;
    }

    /** Number of elements. */
    public int size() {
        return type.isFloating() ? doubles.length : longs.length;
    }

    /** True for a floating tensor. */
    public boolean isFloating() {
        return type.isFloating();
    }

    /** Integral values (a copy); floating values are truncated toward zero. */
    public long[] longs() {
        if (!type.isFloating()) {
            return longs.clone();
        }
        long[] out = new long[doubles.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = (long) doubles[i];
        }
        return out;
    }

    /** Values as doubles (a copy). */
    public double[] doubles() {
        if (type.isFloating()) {
            return doubles.clone();
        }
        double[] out = new double[longs.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = longs[i];
        }
        return out;
    }

    /** The i-th value as a long. */
    public long longAt(int i) {
        return type.isFloating() ? (long) doubles[i] : longs[i];
    }

    /** The i-th value as a double. */
    public double doubleAt(int i) {
        return type.isFloating() ? doubles[i] : longs[i];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorValue t && t.type == type && Arrays.equals(t.dims, dims)
                && Arrays.equals(t.longs, longs) && Arrays.equals(t.doubles, doubles);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, Arrays.hashCode(dims), Arrays.hashCode(longs), Arrays.hashCode(doubles));
    }

    @Override
    public String toString() {
        String v = type.isFloating() ? Arrays.toString(doubles) : Arrays.toString(longs);
        if (v.length() > 80) {
            v = v.substring(0, 77) + "...";
        }
        return type + Arrays.toString(dims) + v;
    }
}
