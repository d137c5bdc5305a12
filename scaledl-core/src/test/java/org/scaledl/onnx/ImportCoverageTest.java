package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.scaledl.onnx.OnnxBuilder.int64Tensor;
import static org.scaledl.onnx.OnnxBuilder.intAttr;
import static org.scaledl.onnx.OnnxBuilder.ints;
import static org.scaledl.onnx.OnnxBuilder.rawTensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Coverage;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;

/** Value propagation, named dimensions, fixed-batch exports, large tensors and coverage. */
class ImportCoverageTest {
    private static ModelGraph read(OnnxBuilder b) {
        return OnnxImporter.read(b.build(), "t", "t.onnx");
    }

    private static ModelGraph read(OnnxBuilder b, OnnxImporter.Options o) {
        return OnnxImporter.read(b.build(), "t", "t.onnx", o);
    }

    private static SymbolicShape shape(ModelGraph g, String tensor) {
        return g.tensor(tensor).orElseThrow().shape().orElseThrow();
    }

    private static double forwardFlops(ModelGraph g, long batch, String op) {
        FeatureExtractor fx = FeatureExtractor.of(g);
        double f = 0;
        for (LayerFeatures lf : fx.extract(batch, Phase.INFER)) {
            if (g.layer(lf.layer()).opType().equals(op)) {
                f += lf.flopsFwd();
            }
        }
        return f;
    }

    /**
     * PyTorch's export of {@code F.pad(x, (1, 1, p, p))} with {@code p = (4 - H % 4) % 4} computed from the input's
     * shape: the pad list is extended with zeros, reshaped to pairs, flipped with a negative-step Slice of a rank-2
     * value, transposed and flattened. Before value propagation covered rank-2 slices, the Pad's output (and
     * everything after it) was unknown.
     */
    @Test
    void padsComputedFromShapesResolve() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 4, 5, 6).output("y")
                .node("shape", "Shape", List.of("x"), List.of("s"))
                .node("c2", "Constant", List.of(), List.of("two"), int64Tensor("value", new long[] {1}, 2))
                .node("h", "Gather", List.of("s", "two"), List.of("hv"), intAttr("axis", 0))
                .node("c4", "Constant", List.of(), List.of("four"), int64Tensor("value", new long[] {1}, 4))
                .node("mod", "Mod", List.of("hv", "four"), List.of("r"))
                .node("sub", "Sub", List.of("four", "r"), List.of("p0"))
                .node("mod2", "Mod", List.of("p0", "four"), List.of("p"))
                .node("c1", "Constant", List.of(), List.of("one2"), int64Tensor("value", new long[] {2}, 1, 1))
                .node("cat", "Concat", List.of("one2", "p", "p"), List.of("torchPads"), intAttr("axis", 0))
                .node("c8", "Constant", List.of(), List.of("eight"), int64Tensor("value", new long[] {1}, 8))
                .node("len", "Shape", List.of("torchPads"), List.of("n"))
                .node("rest", "Sub", List.of("eight", "n"), List.of("m"))
                .node("zeros", "ConstantOfShape", List.of("m"), List.of("z"),
                        int64Tensor("value", new long[] {1}, 0))
                .node("ext", "Concat", List.of("torchPads", "z"), List.of("e"), intAttr("axis", 0))
                .node("cpair", "Constant", List.of(), List.of("pair"), int64Tensor("value", new long[] {2}, -1, 2))
                .node("pairs", "Reshape", List.of("e", "pair"), List.of("pr"))
                .node("cs", "Constant", List.of(), List.of("st"), int64Tensor("value", new long[] {1}, -1))
                .node("ce", "Constant", List.of(), List.of("en"), int64Tensor("value", new long[] {1},
                        Long.MIN_VALUE + 1))
                .node("ca", "Constant", List.of(), List.of("ax"), int64Tensor("value", new long[] {1}, 0))
                .node("cst", "Constant", List.of(), List.of("step"), int64Tensor("value", new long[] {1}, -1))
                .node("flip", "Slice", List.of("pr", "st", "en", "ax", "step"), List.of("fl"))
                .node("tr", "Transpose", List.of("fl"), List.of("t"), ints("perm", 1, 0))
                .node("cflat", "Constant", List.of(), List.of("flat"), int64Tensor("value", new long[] {1}, -1))
                .node("onnxPads", "Reshape", List.of("t", "flat"), List.of("pads"))
                .node("pad", "Pad", List.of("x", "pads"), List.of("y"));
        ModelGraph g = read(b);
        // H = 5: p = 3 on both sides of H; W gets 1 + 1
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4), Dim.of(11), Dim.of(8)), shape(g, "y"));
        assertTrue(g.coverage().isComplete(), g.coverage().summary());
    }

    @Test
    void namedDimensionsAreBoundByTheCaller() {
        OnnxBuilder b = new OnnxBuilder().namedInput("x", "batch", "seq", "16").input("w", 16, 8).output("y")
                .node("mm", "MatMul", List.of("x", "w"), List.of("y"));
        ModelGraph g = read(b, OnnxImporter.Options.builder().dim("seq", 10).build());
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(10), Dim.of(8)), shape(g, "y"));
        assertEquals(2.0 * 3 * 10 * 16 * 8, forwardFlops(g, 3, "MatMul"));
        assertEquals(10L, g.coverage().boundDimensions().get("seq"));
    }

    @Test
    void unboundDimensionsAreAnErrorListingTheirNames() {
        OnnxBuilder b = new OnnxBuilder().namedInput("x", "batch", "seq", "?").output("x");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(b));
        assertTrue(e.getMessage().contains("seq"), e.getMessage());
        assertTrue(e.getMessage().contains("dimension 2 of input 'x' (unnamed)"), e.getMessage());
        assertTrue(e.getMessage().contains("--dim"), e.getMessage());
        assertTrue(e.getMessage().contains("t.onnx"), e.getMessage());
    }

    @Test
    void theBatchSymbolCannotBeBound() {
        OnnxBuilder b = new OnnxBuilder().namedInput("x", "batch", "4").output("x");
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> read(b, OnnxImporter.Options.builder().dim("batch", 4).build()));
        assertTrue(e.getMessage().contains("'batch' is the batch dimension"), e.getMessage());
    }

    @Test
    void aFixedBatchDimensionIsTreatedAsTheBatch() {
        OnnxBuilder b = new OnnxBuilder().input("x", 1, 16).input("w", 8, 16).output("y")
                .node("fc", "Gemm", List.of("x", "w"), List.of("y"), intAttr("transB", 1));
        ModelGraph g = read(b);
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8)), shape(g, "y"));
        assertEquals(8 * forwardFlops(g, 1, "Gemm"), forwardFlops(g, 8, "Gemm"));
        assertEquals(1, g.coverage().exportedBatch().orElseThrow());
    }

    @Test
    void aFixedBatchDimensionIsRefusedWhenAsked() {
        OnnxBuilder b = new OnnxBuilder().input("x", 1, 16).output("x");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(b,
                OnnxImporter.Options.builder().fixedBatch(OnnxImporter.FixedBatch.REFUSE).build()));
        assertTrue(e.getMessage().contains("dynamic_axes"), e.getMessage());
    }

    @Test
    void aBatchBakedIntoTheGraphIsRefusedWithReexportAdvice() {
        OnnxBuilder b = new OnnxBuilder().input("x", 2, 4, 4).output("y")
                .node("c", "Constant", List.of(), List.of("t"), int64Tensor("value", new long[] {2}, 2, 16))
                .node("r", "Reshape", List.of("x", "t"), List.of("y"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(b));
        assertTrue(e.getMessage().contains("fixed batch size 2"), e.getMessage());
        assertTrue(e.getMessage().contains("dynamic_axes={'<input name>': {0: 'batch'}}"), e.getMessage());
    }

    private static byte[] int64Bytes(int n) {
        ByteBuffer buf = ByteBuffer.allocate(8 * n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            buf.putLong(i % 7);
        }
        return buf.array();
    }

    /** ConViT's training export holds a relative-position table of more values than are decoded: legal. */
    @Test
    void aLargeWellFormedTensorAttributeIsLegal() {
        int n = 70_000;
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 16).output("y")
                .node("table", "Constant", List.of(), List.of("idx"),
                        rawTensor("value", 7, new long[] {n}, int64Bytes(n)))
                .node("g", "Gather", List.of("x", "idx"), List.of("y"), intAttr("axis", 1));
        ModelGraph g = read(b);
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(n)), shape(g, "y"));
        Layer table = g.layer(g.indexOf("table").orElseThrow());
        assertTrue(table.attribute("value").orElseThrow().tensorValue().isEmpty());
    }

    @Test
    void aTensorWhoseDataContradictsItsDimsIsRefused() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 16).output("y")
                .node("table", "Constant", List.of(), List.of("idx"),
                        rawTensor("value", 7, new long[] {100_000}, int64Bytes(16)))
                .node("g", "Gather", List.of("x", "idx"), List.of("y"), intAttr("axis", 1));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(b));
        assertTrue(e.getMessage().contains("t.onnx"), e.getMessage());
        assertTrue(e.getMessage().contains("[100000]"), e.getMessage());
    }

    @Test
    void unsupportedOperatorsAndWhatTheyHideAreInTheCoverage() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 16).input("w", 16, 16).output("z")
                .node("a", "Relu", List.of("x"), List.of("r"))
                .node("mystery", "FancyOp", List.of("r"), List.of("f"))
                .node("mm", "MatMul", List.of("f", "w"), List.of("z"));
        ModelGraph g = read(b);
        Coverage c = g.coverage();
        assertFalse(c.isComplete());
        assertEquals(List.of("FancyOp"), c.unsupportedOperators());
        assertEquals(List.of("mystery", "mm"), c.unresolvedLayers());
        assertEquals(2.0 / 3, c.unresolvedShareLayers(), 1e-12);
        assertTrue(c.unresolvedShareBytes() > 0 && c.unresolvedShareBytes() < 1);
        assertTrue(c.summary().contains("2 of 3 layers"), c.summary());
        assertTrue(c.summary().contains("FancyOp"), c.summary());
        assertEquals(Optional.empty(), g.tensor("z").orElseThrow().shape());
    }

    @Test
    void valueInfoFillsInWhatTheImporterCannotInferAndIsRecorded() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 16).input("w", 16, 4).output("z")
                .valueInfo("f", -1, 16)
                .node("mystery", "FancyOp", List.of("x"), List.of("f"))
                .node("mm", "MatMul", List.of("f", "w"), List.of("z"));
        ModelGraph g = read(b);
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4)), shape(g, "z"));
        assertEquals(List.of("mystery"), g.coverage().fromValueInfo());
        assertEquals(List.of(), g.coverage().unresolvedLayers());
        assertEquals(List.of("FancyOp"), g.coverage().unsupportedOperators());
    }

    /** Every operator the importer claims to support is dispatched (an unknown one would answer empty). */
    @Test
    void everySupportedOperatorIsImplemented() throws Exception {
        for (String op : OnnxImporter.supportedOperators()) {
            Layer l = Layer.builder("n", op).outputs("o").build();
            try {
                assertTrue(ShapeInference.infer("t.onnx", l, List.of()).isPresent(), op);
            } catch (InvalidInputException | ShapeInference.Unknown expected) {
                // dispatched: it looked for its inputs
            }
        }
    }
}
