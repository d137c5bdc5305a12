package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.graph.DataType;
import org.scaledl.graph.TensorValue;

/** The small-tensor interpreter against slow, obvious references. */
class ValuesProperties {
    private static long[] shape(Random r, int rank) {
        long[] s = new long[rank];
        for (int d = 0; d < rank; d++) {
            s[d] = 1 + r.nextInt(4);
        }
        return s;
    }

    private static TensorValue random(Random r, long[] shape) {
        long[] v = new long[(int) ShapeInference.count(shape)];
        for (int i = 0; i < v.length; i++) {
            v[i] = r.nextInt(1000) - 500;
        }
        return TensorValue.ofLongs(DataType.INT64, shape, v);
    }

    /** Reference: element at a coordinate by explicit strides. */
    private static long at(TensorValue t, long[] coord) {
        long[] dims = t.dims();
        long idx = 0;
        for (int d = 0; d < dims.length; d++) {
            idx = idx * dims[d] + coord[d];
        }
        return t.longAt((int) idx);
    }

    @Property(tries = 200)
    void transposeMovesEveryElementToItsPermutedCoordinate(@ForAll @IntRange(min = 1, max = 4) int rank,
            @ForAll long seed) {
        Random r = new Random(seed);
        long[] s = shape(r, rank);
        TensorValue x = random(r, s);
        long[] perm = new long[rank];
        for (int d = 0; d < rank; d++) {
            perm[d] = d;
        }
        for (int d = rank - 1; d > 0; d--) {
            int j = r.nextInt(d + 1);
            long t = perm[d];
            perm[d] = perm[j];
            perm[j] = t;
        }
        long[] out = new long[rank];
        for (int d = 0; d < rank; d++) {
            out[d] = s[(int) perm[d]];
        }
        TensorValue y = Values.transpose(x, perm, out);
        long[] c = new long[rank];
        long[] src = new long[rank];
        for (int i = 0; i < y.size(); i++) {
            Values.coords(i, out, c);
            for (int d = 0; d < rank; d++) {
                src[(int) perm[d]] = c[d];
            }
            assertEquals(at(x, src), y.longAt(i));
        }
    }

    @Property(tries = 200)
    void sliceWithAnyStepPicksTheReferenceElements(@ForAll @IntRange(min = 1, max = 4) int rank,
            @ForAll long seed) {
        Random r = new Random(seed);
        long[] s = shape(r, rank);
        TensorValue x = random(r, s);
        long[] first = new long[rank];
        long[] step = new long[rank];
        long[] out = new long[rank];
        for (int d = 0; d < rank; d++) {
            boolean reverse = r.nextBoolean();
            step[d] = (reverse ? -1 : 1) * (1 + r.nextInt(2));
            first[d] = reverse ? s[d] - 1 - r.nextInt((int) s[d]) : r.nextInt((int) s[d]);
            long room = reverse ? first[d] + 1 : s[d] - first[d];
            out[d] = (room + Math.abs(step[d]) - 1) / Math.abs(step[d]);
        }
        TensorValue y = Values.slice(x, first, step, out);
        long[] c = new long[rank];
        long[] src = new long[rank];
        for (int i = 0; i < y.size(); i++) {
            Values.coords(i, out, c);
            for (int d = 0; d < rank; d++) {
                src[d] = first[d] + c[d] * step[d];
            }
            assertEquals(at(x, src), y.longAt(i));
        }
    }

    @Property(tries = 100)
    void tileRepeatsAndSplitPartsConcatenateBack(@ForAll @IntRange(min = 1, max = 3) int rank, @ForAll long seed) {
        Random r = new Random(seed);
        long[] s = shape(r, rank);
        TensorValue x = random(r, s);
        int axis = r.nextInt(rank);
        long[] tiled = s.clone();
        tiled[axis] *= 2;
        TensorValue t = Values.tile(x, tiled);
        assertEquals(x, Values.splitPart(t, axis, 0, s));
        assertEquals(x, Values.splitPart(t, axis, s[axis], s));
    }

    @Property(tries = 100)
    void reduceSumEqualsTheSumOverTheReducedAxes(@ForAll @IntRange(min = 1, max = 3) int rank, @ForAll long seed) {
        Random r = new Random(seed);
        long[] s = shape(r, rank);
        TensorValue x = random(r, s);
        boolean[] reduced = new boolean[rank];
        reduced[r.nextInt(rank)] = true;
        long[] out = s.clone();
        for (int d = 0; d < rank; d++) {
            if (reduced[d]) {
                out[d] = 1;
            }
        }
        TensorValue y = Values.reduce(x, reduced, Values.Reduction.SUM, out);
        long[] expected = new long[(int) ShapeInference.count(out)];
        long[] c = new long[rank];
        for (int i = 0; i < x.size(); i++) {
            Values.coords(i, s, c);
            long o = 0;
            for (int d = 0; d < rank; d++) {
                o = o * out[d] + (reduced[d] ? 0 : c[d]);
            }
            expected[(int) o] += x.longAt(i);
        }
        assertEquals(Arrays.toString(expected), Arrays.toString(y.longs()));
    }
}
