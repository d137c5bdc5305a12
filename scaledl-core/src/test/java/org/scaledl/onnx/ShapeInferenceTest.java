package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.scaledl.onnx.OnnxBuilder.floatAttr;
import static org.scaledl.onnx.OnnxBuilder.int64Tensor;
import static org.scaledl.onnx.OnnxBuilder.intAttr;
import static org.scaledl.onnx.OnnxBuilder.ints;
import static org.scaledl.onnx.OnnxBuilder.stringAttr;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Dim;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.OpFamily;

class ShapeInferenceTest {

    private static SymbolicShape shape(ModelGraph g, String tensor) {
        return g.tensor(tensor).orElseThrow().shape().orElseThrow();
    }

    private static ModelGraph read(OnnxBuilder b) {
        return OnnxImporter.read(b.build(), "t", "t.onnx");
    }

    @Test
    void batchDependentReshapeChainResolves() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 8, 16).output("y")
                .node("shape", "Shape", List.of("x"), List.of("s"))
                .node("c0", "Constant", List.of(), List.of("zero"), int64Tensor("value", new long[0], 0))
                .node("gather", "Gather", List.of("s", "zero"), List.of("n"), intAttr("axis", 0))
                .node("c1", "Constant", List.of(), List.of("ax"), int64Tensor("value", new long[] {1}, 0))
                .node("unsq", "Unsqueeze", List.of("n", "ax"), List.of("n1"))
                .node("c2", "Constant", List.of(), List.of("rest"), int64Tensor("value", new long[] {3}, 8, 4, 4))
                .node("cat", "Concat", List.of("n1", "rest"), List.of("target"), intAttr("axis", 0))
                .node("reshape", "Reshape", List.of("x", "target"), List.of("y"));
        ModelGraph g = read(b);
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8), Dim.of(4), Dim.of(4)), shape(g, "y"));
        assertEquals(TensorRole.CONSTANT, g.tensor("rest").orElseThrow().role());
    }

    @Test
    void reshapeThatFoldsTheBatchGivesAnAffineDim() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 8, 16).output("y")
                .node("c", "Constant", List.of(), List.of("t"), int64Tensor("value", new long[] {2}, -1, 16))
                .node("r", "Reshape", List.of("x", "t"), List.of("y")));
        assertEquals(SymbolicShape.of(new Dim(8, 0), Dim.of(16)), shape(g, "y"));
        assertEquals(32, shape(g, "y").at(4)[0]);
    }

    @Test
    void convWithStridePaddingAndGroups() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 8, 33, 32).input("w", 16, 2, 3, 3).output("y")
                .node("conv", "Conv", List.of("x", "w"), List.of("y"), ints("strides", 2, 2), ints("pads", 1, 1, 1, 1),
                        intAttr("group", 4)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(16), Dim.of(17), Dim.of(16)), shape(g, "y"));
        assertEquals(16 * 2 * 9, g.parameterCount());
    }

    @Test
    void maxPoolCeilMode() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 4, 10, 10).output("y")
                .node("p", "MaxPool", List.of("x"), List.of("y"), ints("kernel_shape", 3, 3), ints("strides", 2, 2),
                        intAttr("ceil_mode", 1)));
        // floor((10 - 3) / 2) + 1 = 4; ceil gives 5, and the last window still starts inside the input
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4), Dim.of(5), Dim.of(5)), shape(g, "y"));
    }

    @Test
    void sliceWithNegativeStartAndHugeEnd() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 10, 6).output("y")
                .node("s0", "Constant", List.of(), List.of("st"), int64Tensor("value", new long[] {1}, -3))
                .node("s1", "Constant", List.of(), List.of("en"), int64Tensor("value", new long[] {1},
                        Long.MAX_VALUE))
                .node("s2", "Constant", List.of(), List.of("ax"), int64Tensor("value", new long[] {1}, 1))
                .node("slice", "Slice", List.of("x", "st", "en", "ax"), List.of("y")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3), Dim.of(6)), shape(g, "y"));
    }

    @Test
    void matmulBroadcastsAndGemmTransposes() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 4, 8, 16).input("w", 16, 32).input("a", -1, 16)
                .input("b", 10, 16).output("y").output("z")
                .node("mm", "MatMul", List.of("x", "w"), List.of("y"))
                .node("gemm", "Gemm", List.of("a", "b"), List.of("z"), intAttr("transB", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4), Dim.of(8), Dim.of(32)), shape(g, "y"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(10)), shape(g, "z"));
    }

    @Test
    void reduceFlattenTransposeAndSoftmax() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 3, 5, 7).output("r").output("f").output("t")
                .output("s")
                .node("rm", "ReduceMean", List.of("x"), List.of("r"), ints("axes", -1), intAttr("keepdims", 0))
                .node("fl", "Flatten", List.of("x"), List.of("f"))
                .node("tr", "Transpose", List.of("x"), List.of("t"), ints("perm", 0, 2, 3, 1))
                .node("sm", "Softmax", List.of("x"), List.of("s"), intAttr("axis", -1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3), Dim.of(5)), shape(g, "r"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(105)), shape(g, "f"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(5), Dim.of(7), Dim.of(3)), shape(g, "t"));
        assertEquals(shape(g, "s"), SymbolicShape.of(Dim.batch(), Dim.of(3), Dim.of(5), Dim.of(7)));
    }

    @Test
    void constantOfShapeRangeExpandAndWhere() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 6).output("e").output("w")
                .node("shape", "Shape", List.of("x"), List.of("s"))
                .node("cos", "ConstantOfShape", List.of("s"), List.of("ones"))
                .node("c0", "Constant", List.of(), List.of("zero"), int64Tensor("value", new long[0], 0))
                .node("c1", "Constant", List.of(), List.of("one"), int64Tensor("value", new long[0], 1))
                .node("c5", "Constant", List.of(), List.of("five"), int64Tensor("value", new long[0], 5))
                .node("range", "Range", List.of("zero", "five", "one"), List.of("r"))
                .node("c2", "Constant", List.of(), List.of("tgt"), int64Tensor("value", new long[] {2}, 4, 1))
                .node("expand", "Expand", List.of("r", "tgt"), List.of("e"))
                .node("eq", "Equal", List.of("x", "ones"), List.of("m"))
                .node("where", "Where", List.of("m", "x", "ones"), List.of("w")));
        assertEquals(SymbolicShape.ofStatic(4, 5), shape(g, "e"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(6)), shape(g, "w"));
    }

    @Test
    void unknownOperatorIsKeptAndItsDownstreamShapesAreUnknown() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 6).output("z")
                .node("weird", "FancyOp", List.of("x"), List.of("y"))
                .node("relu", "Relu", List.of("y"), List.of("z")));
        assertEquals(2, g.size());
        assertEquals("FancyOp", g.layer(0).opType());
        assertTrue(g.tensor("z").orElseThrow().shape().isEmpty());
    }

    @Test
    void unknownOperatorUsesValueInfoWhenPresent() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 6).output("z").valueInfo("y", -1, 3)
                .node("weird", "FancyOp", List.of("x"), List.of("y"))
                .node("relu", "Relu", List.of("y"), List.of("z")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3)), shape(g, "z"));
    }

    @Test
    void cycleIsReportedWithANodeName() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder()
                .input("x", -1, 6).output("b")
                .node("A", "Add", List.of("x", "b"), List.of("a"))
                .node("B", "Relu", List.of("a"), List.of("b"))));
        assertTrue(e.node().isPresent(), e.getMessage());
        assertTrue(e.getMessage().contains("cycle"), e.getMessage());
        assertEquals("t.onnx", e.source().orElseThrow());
    }

    @Test
    void danglingInputIsReportedWithTheNode() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder()
                .input("x", -1, 6).output("y").node("add", "Add", List.of("x", "nowhere"), List.of("y"))));
        assertEquals("add", e.node().orElseThrow());
        assertTrue(e.getMessage().contains("nowhere"));
    }

    @Test
    void contradictoryShapesAreReportedWithTheNode() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder()
                .input("x", -1, 6).input("w", 7, 3).output("y").node("mm", "MatMul", List.of("x", "w"),
                        List.of("y"))));
        assertEquals("mm", e.node().orElseThrow());
    }

    @Test
    void truncatedFileIsAnInvalidInput() {
        byte[] good = new OnnxBuilder().input("x", -1, 6).output("y")
                .node("relu", "Relu", List.of("x"), List.of("y")).build();
        for (int cut = 1; cut < good.length; cut++) {
            byte[] bad = Arrays.copyOf(good, cut);
            try {
                OnnxImporter.read(bad, "t", "t.onnx");
            } catch (InvalidInputException expected) {
                assertFalse(expected.getMessage().isEmpty());
            }
        }
    }

    @Test
    void batchNormStatisticsAreBuffersNotParameters() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 4, 5, 5).input("s", 4).input("b", 4).input("m", 4)
                .input("v", 4).output("y")
                .node("bn", "BatchNormalization", List.of("x", "s", "b", "m", "v"), List.of("y"),
                        floatAttr("epsilon", 1e-5f)));
        assertEquals(8, g.parameterCount());
        assertEquals(TensorRole.BUFFER, g.tensor("m").orElseThrow().role());
    }

    /** The shapes of the ConvTranspose examples in the ONNX operator documentation. */
    @Test
    void convTransposeFollowsTheOnnxExamples() {
        ModelGraph pads = read(new OnnxBuilder().input("x", -1, 1, 3, 3).input("w", 1, 2, 3, 3).output("y")
                .node("ct", "ConvTranspose", List.of("x", "w"), List.of("y"), ints("strides", 3, 2),
                        ints("pads", 1, 2, 1, 2)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2), Dim.of(7), Dim.of(3)), shape(pads, "y"));
        ModelGraph outputShape = read(new OnnxBuilder().input("x", -1, 1, 3, 3).input("w", 1, 2, 3, 3).output("y")
                .node("ct", "ConvTranspose", List.of("x", "w"), List.of("y"), ints("strides", 3, 2),
                        ints("output_shape", 10, 8)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2), Dim.of(10), Dim.of(8)), shape(outputShape, "y"));
        ModelGraph padding = read(new OnnxBuilder().input("x", -1, 1, 3, 3).input("w", 1, 2, 3, 3).output("y")
                .node("ct", "ConvTranspose", List.of("x", "w"), List.of("y"), ints("strides", 3, 2),
                        ints("output_padding", 1, 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2), Dim.of(10), Dim.of(8)), shape(padding, "y"));
        ModelGraph dilated = read(new OnnxBuilder().input("x", -1, 1, 3, 3).input("w", 1, 1, 2, 2).output("y")
                .node("ct", "ConvTranspose", List.of("x", "w"), List.of("y"), ints("dilations", 2, 2)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(1), Dim.of(5), Dim.of(5)), shape(dilated, "y"));
        ModelGraph grouped = read(new OnnxBuilder().input("x", -1, 8, 4, 4).input("w", 8, 3, 4, 4).output("y")
                .node("ct", "ConvTranspose", List.of("x", "w"), List.of("y"), ints("strides", 2, 2),
                        ints("pads", 1, 1, 1, 1), intAttr("group", 2)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(6), Dim.of(8), Dim.of(8)), shape(grouped, "y"));
        ModelGraph same = read(new OnnxBuilder().input("x", -1, 1, 3, 3).input("w", 1, 2, 3, 3).output("y")
                .node("ct", "ConvTranspose", List.of("x", "w"), List.of("y"), ints("strides", 2, 2),
                        stringAttr("auto_pad", "SAME_UPPER")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2), Dim.of(6), Dim.of(6)), shape(same, "y"));
    }

    @Test
    void convTransposeWithMismatchedChannelsNamesTheNode() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder()
                .input("x", -1, 3, 4, 4).input("w", 2, 2, 3, 3).output("y")
                .node("up1", "ConvTranspose", List.of("x", "w"), List.of("y"))));
        assertTrue(e.getMessage().contains("up1"), e.getMessage());
    }

    @Test
    void recurrentCellsGiveSequenceAndStateShapes() {
        ModelGraph lstm = read(new OnnxBuilder().input("x", 5, -1, 8).input("w", 2, 64, 8).input("r", 2, 64, 16)
                .input("b", 2, 128).output("y").output("yh").output("yc")
                .node("lstm", "LSTM", List.of("x", "w", "r", "b"), List.of("y", "yh", "yc"),
                        intAttr("hidden_size", 16), stringAttr("direction", "bidirectional")));
        assertEquals(SymbolicShape.of(Dim.of(5), Dim.of(2), Dim.batch(), Dim.of(16)), shape(lstm, "y"));
        assertEquals(SymbolicShape.of(Dim.of(2), Dim.batch(), Dim.of(16)), shape(lstm, "yh"));
        assertEquals(SymbolicShape.of(Dim.of(2), Dim.batch(), Dim.of(16)), shape(lstm, "yc"));
        assertEquals(2 * 64 * 8 + 2 * 64 * 16 + 2 * 128, lstm.parameterCount());

        ModelGraph gru = read(new OnnxBuilder().input("x", -1, 7, 4).input("w", 1, 30, 4).input("r", 1, 30, 10)
                .output("y").output("yh")
                .node("gru", "GRU", List.of("x", "w", "r"), List.of("y", "yh"), intAttr("layout", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(7), Dim.of(1), Dim.of(10)), shape(gru, "y"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(1), Dim.of(10)), shape(gru, "yh"));

        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder()
                .input("x", 5, -1, 8).input("w", 1, 63, 8).input("r", 1, 63, 16).output("y")
                .node("rnn7", "LSTM", List.of("x", "w", "r"), List.of("y"), intAttr("hidden_size", 16))));
        assertTrue(e.getMessage().contains("rnn7"), e.getMessage());
    }

    @Test
    void depthToSpaceAndBack() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 12, 3, 5).output("z")
                .node("d2s", "DepthToSpace", List.of("x"), List.of("y"), intAttr("blocksize", 2))
                .node("s2d", "SpaceToDepth", List.of("y"), List.of("z"), intAttr("blocksize", 2)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3), Dim.of(6), Dim.of(10)), shape(g, "y"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(12), Dim.of(3), Dim.of(5)), shape(g, "z"));
    }

    @Test
    void groupNormLogSumExpAndShrinkKeepTheirFamiliesAndShapes() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 8, 4, 4).input("s", 8).input("b", 8).output("z")
                .node("gn", "GroupNormalization", List.of("x", "s", "b"), List.of("y"), intAttr("num_groups", 2))
                .node("shrink", "Shrink", List.of("y"), List.of("y2"))
                .node("lse", "ReduceLogSumExp", List.of("y2"), List.of("z"), ints("axes", 2, 3),
                        intAttr("keepdims", 0)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8), Dim.of(4), Dim.of(4)), shape(g, "y2"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8)), shape(g, "z"));
        FeatureExtractor f = FeatureExtractor.of(g);
        assertEquals(OpFamily.NORM, f.family(0));
        assertEquals(OpFamily.ELEMENTWISE, f.family(1));
        assertEquals(OpFamily.REDUCE, f.family(2));
    }

    @Test
    void aMissingFileSaysSoAndNamesIt() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> OnnxImporter.read(Path.of("no/such/model.onnx")));
        assertTrue(e.getMessage().contains("no/such/model.onnx") && e.getMessage().contains("no such file"),
                e.getMessage());
    }
}
