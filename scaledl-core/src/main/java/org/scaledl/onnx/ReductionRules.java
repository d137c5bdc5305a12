package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.scaledl.graph.DataType;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/** Reductions over axes ({@code Reduce*}, with values for small known inputs) and {@code ArgMax}/{@code ArgMin}. */
final class ReductionRules {
    private ReductionRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ReductionRules::reduce, "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp");
        t.one(ReductionRules::argReduce, "ArgMax", "ArgMin");
    }

    private static Val reduce(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        // axes: an attribute until ReduceSum-13 and the other reductions' version 18, then input 1
        long[] axes = c.intsSince(c.node().opType().equals("ReduceSum") ? 13 : 18, "axes", 1);
        boolean keep = c.node().longAttribute("keepdims", 1) != 0;
        boolean[] reduced = new boolean[r];
        if (axes == null || axes.length == 0) {
            if (c.node().longAttribute("noop_with_empty_axes", 0) != 0) {
                return new Val(x.type(), x.shape(), null);
            }
            Arrays.fill(reduced, true);
        } else {
            for (long a : axes) {
                reduced[c.axis(a, r)] = true;
            }
        }
        long[] out = reducedShape(x.shape(), reduced, keep);
        if (x.value() == null || !OpContext.small(out)) {
            return new Val(x.type(), out, null);
        }
        Values.Reduction op = switch (c.node().opType()) {
            case "ReduceSum" -> Values.Reduction.SUM;
            case "ReduceMean" -> Values.Reduction.MEAN;
            case "ReduceMax" -> Values.Reduction.MAX;
            case "ReduceMin" -> Values.Reduction.MIN;
            case "ReduceProd" -> Values.Reduction.PROD;
            case "ReduceL1" -> Values.Reduction.L1;
            case "ReduceL2" -> Values.Reduction.L2;
            case "ReduceSumSquare" -> Values.Reduction.SUM_SQUARE;
            case "ReduceLogSum" -> Values.Reduction.LOG_SUM;
            default -> Values.Reduction.LOG_SUM_EXP;
        };
        return new Val(x.type(), out, Values.reduce(x.value(), reduced, op, out));
    }

    private static long[] reducedShape(long[] shape, boolean[] reduced, boolean keep) {
        List<Long> out = new ArrayList<>();
        for (int d = 0; d < shape.length; d++) {
            if (!reduced[d]) {
                out.add(shape[d]);
            } else if (keep) {
                out.add(1L);
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    private static Val argReduce(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        boolean[] reduced = new boolean[r];
        reduced[c.axis(c.node().longAttribute("axis", 0), r)] = true;
        return new Val(DataType.INT64, reducedShape(x.shape(), reduced, c.node().longAttribute("keepdims", 1) != 0),
                null);
    }
}
