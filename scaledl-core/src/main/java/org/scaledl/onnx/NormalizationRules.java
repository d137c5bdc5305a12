package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.scaledl.graph.DataType;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * Normalizations with statistics outputs: {@code BatchNormalization} (per-channel inputs checked against the
 * channels) and {@code LayerNormalization}. The shape-preserving ones without extra outputs (instance, group, LRN)
 * are element-wise rules.
 */
final class NormalizationRules {
    private NormalizationRules() {
    }

    static void register(ShapeInference.Table t) {
        t.put(NormalizationRules::batchNorm, "BatchNormalization");
        t.put(NormalizationRules::layerNorm, "LayerNormalization");
    }

    private static List<Val> batchNorm(OpContext c) throws Unknown {
        Val x = c.input(0);
        if (x.shape().length < 2) {
            throw c.bad("input rank must be >= 2");
        }
        long ch = x.shape()[1];
        // BatchNormalization before opset 9 with spatial = 0 keeps statistics per activation, [C, D1, ...]
        boolean perActivation = c.opset() < 9 && c.node().longAttribute("spatial", 1) == 0;
        long stats = perActivation ? ShapeInference.count(Arrays.copyOfRange(x.shape(), 1, x.shape().length)) : ch;
        for (int i = 1; i <= 4; i++) {
            if (c.has(i) && c.raw(i) != null && ShapeInference.count(c.raw(i).shape()) != stats) {
                throw c.bad("input " + i + " has " + ShapeInference.count(c.raw(i).shape()) + " elements for " + ch
                        + " channels" + (perActivation ? " (" + stats + " activations, spatial = 0)" : ""));
            }
        }
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), x.shape(), null));
        long[] stat = perActivation ? Arrays.copyOfRange(x.shape(), 1, x.shape().length) : new long[] {ch};
        for (int i = 1; i < c.node().outputs().size(); i++) {
            out.add(new Val(x.type(), stat, null));
        }
        return out;
    }

    private static List<Val> layerNorm(OpContext c) throws Unknown {
        Val x = c.input(0);
        int r = x.shape().length;
        int axis = c.axis(c.node().longAttribute("axis", -1), r);
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), x.shape(), null));
        long[] stat = x.shape().clone();
        for (int d = axis; d < r; d++) {
            stat[d] = 1;
        }
        for (int i = 1; i < c.node().outputs().size(); i++) {
            out.add(new Val(DataType.FLOAT, stat, null));
        }
        return out;
    }
}
