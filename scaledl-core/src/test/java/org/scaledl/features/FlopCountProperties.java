package org.scaledl.features;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;

/** FLOP and parameter formulas against brute-force loops on small shapes. */
class FlopCountProperties {

    /** Output size of a window by stepping the window over the padded input. */
    private static int windows(int in, int k, int stride, int padBegin, int padEnd, int dilation) {
        int count = 0;
        int span = (k - 1) * dilation + 1;
        for (int start = -padBegin; start + span <= in + padEnd; start += stride) {
            count++;
        }
        return count;
    }

    @Property(tries = 150)
    void convFlopsAndParamsMatchLoops(@ForAll @IntRange(min = 1, max = 3) int batch,
            @ForAll @IntRange(min = 1, max = 3) int groups, @ForAll @IntRange(min = 1, max = 3) int cinPerGroup,
            @ForAll @IntRange(min = 1, max = 3) int coutPerGroup, @ForAll @IntRange(min = 3, max = 12) int h,
            @ForAll @IntRange(min = 3, max = 12) int w, @ForAll @IntRange(min = 1, max = 3) int k,
            @ForAll @IntRange(min = 1, max = 3) int stride, @ForAll @IntRange(min = 0, max = 2) int pad,
            @ForAll boolean bias) {
        int cin = groups * cinPerGroup;
        int cout = groups * coutPerGroup;
        int oh = windows(h, k, stride, pad, pad, 1);
        int ow = windows(w, k, stride, pad, pad, 1);
        ModelGraph.Builder b = ModelGraph.builder("conv")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(cin), Dim.of(h),
                        Dim.of(w)), TensorRole.INPUT))
                .tensor(TensorInfo.of("w", DataType.FLOAT, SymbolicShape.ofStatic(cout, cinPerGroup, k, k),
                        TensorRole.PARAMETER))
                .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(cout), Dim.of(oh),
                        Dim.of(ow)), TensorRole.ACTIVATION));
        Layer.Builder conv = Layer.builder("conv", "Conv").outputs("y").attribute("group", Attribute.ofInt(groups))
                .attribute("strides", Attribute.ofInts(stride, stride))
                .attribute("pads", Attribute.ofInts(pad, pad, pad, pad));
        if (bias) {
            b.tensor(TensorInfo.of("b", DataType.FLOAT, SymbolicShape.ofStatic(cout), TensorRole.PARAMETER));
            conv.inputs("x", "w", "b");
        } else {
            conv.inputs("x", "w");
        }
        ModelGraph g = b.layer(conv.build()).output("y").build();

        long macs = 0;
        long biasAdds = 0;
        for (int n = 0; n < batch; n++) {
            for (int m = 0; m < cout; m++) {
                for (int y = 0; y < oh; y++) {
                    for (int x = 0; x < ow; x++) {
                        for (int c = 0; c < cinPerGroup; c++) {
                            for (int i = 0; i < k; i++) {
                                for (int j = 0; j < k; j++) {
                                    macs++;
                                }
                            }
                        }
                        if (bias) {
                            biasAdds++;
                        }
                    }
                }
            }
        }
        List<LayerFeatures> f = FeatureExtractor.of(g).extract(batch, Phase.TRAIN);
        assertEquals(2.0 * macs + biasAdds, f.get(0).flopsFwd());
        // The data input needs no gradient, so backward is the weight gradient only: one more pass of MACs.
        assertEquals(2.0 * macs + biasAdds, f.get(0).flopsBwd());
        assertEquals((long) cout * cinPerGroup * k * k + (bias ? cout : 0), g.parameterCount());
        assertEquals(4.0 * batch * cout * oh * ow, f.get(0).bytesWritten());
    }

    @Property(tries = 100)
    void matmulFlopsMatchLoops(@ForAll @IntRange(min = 1, max = 3) int batch,
            @ForAll @IntRange(min = 1, max = 4) int heads, @ForAll @IntRange(min = 1, max = 6) int m,
            @ForAll @IntRange(min = 1, max = 6) int kk, @ForAll @IntRange(min = 1, max = 6) int n) {
        ModelGraph g = ModelGraph.builder("mm")
                .tensor(TensorInfo.of("a", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(heads), Dim.of(m),
                        Dim.of(kk)), TensorRole.INPUT))
                .tensor(TensorInfo.of("w", DataType.FLOAT, SymbolicShape.ofStatic(kk, n), TensorRole.PARAMETER))
                .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(heads), Dim.of(m),
                        Dim.of(n)), TensorRole.ACTIVATION))
                .layer(Layer.builder("mm", "MatMul").inputs("a", "w").outputs("y").build()).output("y").build();
        long macs = 0;
        for (int b = 0; b < batch * heads; b++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    for (int p = 0; p < kk; p++) {
                        macs++;
                    }
                }
            }
        }
        LayerFeatures f = FeatureExtractor.of(g).extract(batch, Phase.INFER).get(0);
        assertEquals(2.0 * macs, f.flopsFwd());
        assertEquals(0, f.flopsBwd());
        assertEquals((long) kk * n, g.parameterCount());
    }

    @Property(tries = 100)
    void poolFlopsMatchLoops(@ForAll @IntRange(min = 1, max = 3) int batch, @ForAll @IntRange(min = 1, max = 4) int c,
            @ForAll @IntRange(min = 3, max = 10) int h, @ForAll @IntRange(min = 1, max = 3) int k,
            @ForAll @IntRange(min = 1, max = 3) int stride) {
        int o = windows(h, k, stride, 0, 0, 1);
        ModelGraph g = ModelGraph.builder("pool")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(c), Dim.of(h),
                        Dim.of(h)), TensorRole.INPUT))
                .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(c), Dim.of(o),
                        Dim.of(o)), TensorRole.ACTIVATION))
                .layer(Layer.builder("p", "MaxPool").inputs("x").outputs("y")
                        .attribute("kernel_shape", Attribute.ofInts(k, k))
                        .attribute("strides", Attribute.ofInts(stride, stride)).build())
                .output("y").build();
        long compares = 0;
        for (int n = 0; n < batch * c; n++) {
            for (int y = 0; y < o; y++) {
                for (int x = 0; x < o; x++) {
                    compares += (long) k * k;
                }
            }
        }
        assertEquals((double) compares, FeatureExtractor.of(g).extract(batch, Phase.INFER).get(0).flopsFwd());
    }

    /**
     * ConvTranspose: every input element is multiplied into {@code C_out/group · k²} outputs (the scatter form that
     * implementations compute before cropping the padding).
     */
    @Property(tries = 100)
    void convTransposeFlopsMatchLoops(@ForAll @IntRange(min = 1, max = 3) int batch,
            @ForAll @IntRange(min = 1, max = 3) int groups, @ForAll @IntRange(min = 1, max = 3) int cinPerGroup,
            @ForAll @IntRange(min = 1, max = 3) int coutPerGroup, @ForAll @IntRange(min = 1, max = 6) int h,
            @ForAll @IntRange(min = 1, max = 3) int k, @ForAll @IntRange(min = 1, max = 3) int stride,
            @ForAll boolean bias) {
        int cin = groups * cinPerGroup;
        int cout = groups * coutPerGroup;
        int o = stride * (h - 1) + k;
        ModelGraph.Builder b = ModelGraph.builder("convT")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(cin), Dim.of(h),
                        Dim.of(h)), TensorRole.INPUT))
                .tensor(TensorInfo.of("w", DataType.FLOAT, SymbolicShape.ofStatic(cin, coutPerGroup, k, k),
                        TensorRole.PARAMETER))
                .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(cout), Dim.of(o),
                        Dim.of(o)), TensorRole.ACTIVATION));
        Layer.Builder ct = Layer.builder("ct", "ConvTranspose").outputs("y")
                .attribute("group", Attribute.ofInt(groups)).attribute("strides", Attribute.ofInts(stride, stride));
        if (bias) {
            b.tensor(TensorInfo.of("b", DataType.FLOAT, SymbolicShape.ofStatic(cout), TensorRole.PARAMETER));
            ct.inputs("x", "w", "b");
        } else {
            ct.inputs("x", "w");
        }
        ModelGraph g = b.layer(ct.build()).output("y").build();
        long macs = 0;
        for (int n = 0; n < batch; n++) {
            for (int c = 0; c < cin; c++) {
                for (int y = 0; y < h; y++) {
                    for (int x = 0; x < h; x++) {
                        for (int m = 0; m < coutPerGroup; m++) {
                            for (int i = 0; i < k * k; i++) {
                                macs++;
                            }
                        }
                    }
                }
            }
        }
        long biasAdds = bias ? (long) batch * cout * o * o : 0;
        LayerFeatures f = FeatureExtractor.of(g).extract(batch, Phase.TRAIN).get(0);
        assertEquals(groups > 1 && cinPerGroup == 1 ? OpFamily.DEPTHWISE_CONV : OpFamily.CONV, f.family());
        assertEquals(2.0 * macs + biasAdds, f.flopsFwd());
        assertEquals(2.0 * macs + biasAdds, f.flopsBwd()); // weight gradient only: the input needs none
        assertEquals(cin, f.inChannels());
        assertEquals(cout, f.outChannels());
        assertEquals((long) cin * coutPerGroup * k * k + (bias ? cout : 0), g.parameterCount());
    }

    /**
     * LSTM / GRU / RNN: the gate pre-activations of every step and direction against loops over {@code [x, h] ·
     * [W; R]ᵀ}; biases and the cell's element-wise work on top.
     */
    @Property(tries = 100)
    void recurrentFlopsMatchLoops(@ForAll @IntRange(min = 0, max = 2) int kind,
            @ForAll @IntRange(min = 1, max = 3) int batch, @ForAll @IntRange(min = 1, max = 4) int steps,
            @ForAll @IntRange(min = 1, max = 5) int input, @ForAll @IntRange(min = 1, max = 5) int hidden,
            @ForAll boolean bidirectional, @ForAll boolean bias) {
        String op = new String[] {"LSTM", "GRU", "RNN"}[kind];
        int gates = new int[] {4, 3, 1}[kind];
        double perUnit = new double[] {9, 8, 1}[kind];
        int dirs = bidirectional ? 2 : 1;
        ModelGraph.Builder b = ModelGraph.builder("rnn")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.of(steps), Dim.batch(),
                        Dim.of(input)), TensorRole.INPUT))
                .tensor(TensorInfo.of("w", DataType.FLOAT, SymbolicShape.ofStatic(dirs, gates * hidden, input),
                        TensorRole.PARAMETER))
                .tensor(TensorInfo.of("r", DataType.FLOAT, SymbolicShape.ofStatic(dirs, gates * hidden, hidden),
                        TensorRole.PARAMETER))
                .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.of(steps), Dim.of(dirs),
                        Dim.batch(), Dim.of(hidden)), TensorRole.ACTIVATION));
        Layer.Builder cell = Layer.builder("cell", op).outputs("y")
                .attribute("direction", Attribute.ofString(bidirectional ? "bidirectional" : "forward"));
        if (bias) {
            b.tensor(TensorInfo.of("b", DataType.FLOAT, SymbolicShape.ofStatic(dirs, 2 * gates * hidden),
                    TensorRole.PARAMETER));
            cell.inputs("x", "w", "r", "b");
        } else {
            cell.inputs("x", "w", "r");
        }
        ModelGraph g = b.layer(cell.build()).output("y").build();
        long macs = 0;
        long inputMacs = 0;
        for (int d = 0; d < dirs; d++) {
            for (int t = 0; t < steps; t++) {
                for (int n = 0; n < batch; n++) {
                    for (int j = 0; j < gates * hidden; j++) {
                        for (int p = 0; p < input; p++) {
                            macs++;
                            inputMacs++;
                        }
                        for (int q = 0; q < hidden; q++) {
                            macs++;
                        }
                    }
                }
            }
        }
        double biasAdds = bias ? 2.0 * dirs * steps * batch * gates * hidden : 0;
        double cellWork = perUnit * dirs * steps * batch * hidden;
        LayerFeatures f = FeatureExtractor.of(g).extract(batch, Phase.TRAIN).get(0);
        assertEquals(OpFamily.DENSE, f.family());
        double fwd = 2.0 * macs + biasAdds + cellWork;
        assertEquals(fwd, f.flopsFwd(), 1e-9 * fwd);
        // weight gradients (one forward) + the gradient through the recurrence (its share of the contraction);
        // the data input needs no gradient
        double recurrenceShare = (double) (macs - inputMacs) / macs;
        assertEquals(fwd * (1 + recurrenceShare), f.flopsBwd(), 1e-9 * fwd);
    }
}
