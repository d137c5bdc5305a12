package org.scaledl.graph;

import java.util.List;
import java.util.stream.Collectors;
import org.scaledl.Checks;

/**
 * A tensor shape whose dimensions may depend on the batch size (see {@link Dim}). A rank-0 shape is a scalar.
 *
 * <pre>{@code
 * SymbolicShape s = SymbolicShape.of(Dim.batch(), Dim.of(3), Dim.of(224), Dim.of(224));
 * long[] concrete = s.at(32);          // [32, 3, 224, 224]
 * long elements = s.elements(32);      // 4,816,896
 * }</pre>
 */
public final class SymbolicShape {
    private final List<Dim> dims;

    private SymbolicShape(List<Dim> dims) {
        this.dims = dims;
    }

    /** A shape from its dimensions, outermost first. */
    public static SymbolicShape of(Dim... dims) {
        return new SymbolicShape(List.of(dims));
    }

    /** A shape from its dimensions, outermost first. */
    public static SymbolicShape of(List<Dim> dims) {
        return new SymbolicShape(List.copyOf(dims));
    }

    /** A shape with only static dimensions. */
    public static SymbolicShape ofStatic(long... dims) {
        java.util.ArrayList<Dim> b = new java.util.ArrayList<>(dims.length);
        for (long d : dims) {
            b.add(Dim.of(d));
        }
        return new SymbolicShape(List.copyOf(b));
    }

    /** The dimensions, outermost first. */
    public List<Dim> dims() {
        return dims;
    }

    /** Number of dimensions. */
    public int rank() {
        return dims.size();
    }

    /** True when no dimension depends on the batch size. */
    public boolean isStatic() {
        return dims.stream().allMatch(Dim::isStatic);
    }

    /** The concrete dimensions for a batch size. */
    public long[] at(long batch) {
        long[] out = new long[dims.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = dims.get(i).at(batch);
        }
        return out;
    }

    /**
     * Number of elements for a batch size (1 for a scalar).
     *
     * @throws ArithmeticException on overflow
     */
    public long elements(long batch) {
        Checks.argument(batch > 0, "batch must be positive: %s", batch);
        long n = 1;
        for (Dim d : dims) {
            n = Math.multiplyExact(n, d.at(batch));
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SymbolicShape s && s.dims.equals(dims);
    }

    @Override
    public int hashCode() {
        return dims.hashCode();
    }

    @Override
    public String toString() {
        return dims.stream().map(Dim::toString).collect(Collectors.joining(",", "[", "]"));
    }
}
