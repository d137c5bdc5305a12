package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.scaledl.onnx.OnnxBuilder.floatAttr;
import static org.scaledl.onnx.OnnxBuilder.floats;
import static org.scaledl.onnx.OnnxBuilder.int64Tensor;
import static org.scaledl.onnx.OnnxBuilder.intAttr;
import static org.scaledl.onnx.OnnxBuilder.ints;
import static org.scaledl.onnx.OnnxBuilder.stringAttr;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;

/**
 * Operators whose inputs and attributes moved between opsets are read in the form of the model's opset: each case
 * at the opsets where its form changed, with the shape ONNX's own inference gives.
 */
class OnnxOpsetFormsTest {
    private static SymbolicShape shape(ModelGraph g, String tensor) {
        return g.tensor(tensor).orElseThrow().shape().orElseThrow();
    }

    private static ModelGraph read(OnnxBuilder b) {
        return OnnxImporter.read(b.build(), "t", "t.onnx");
    }

    private static SymbolicShape nchw(long c, long h, long w) {
        return SymbolicShape.of(Dim.batch(), Dim.of(c), Dim.of(h), Dim.of(w));
    }

    private static OnnxBuilder image(long opset) {
        return new OnnxBuilder().opset(opset).input("x", -1, 3, 4, 6).output("y");
    }

    @Test
    void resize10TakesScalesAsItsSecondInput() {
        ModelGraph g = read(image(10).floatInitializer("scales", new long[] {4}, 1, 1, 2, 0.5f)
                .node("up", "Resize", List.of("x", "scales"), List.of("y"), stringAttr("mode", "nearest")));
        assertEquals(nchw(3, 8, 3), shape(g, "y"));
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 17, 18, 19})
    void resizeFrom11TakesRoiScalesAndSizes(long opset) {
        ModelGraph scales = read(image(opset).floatInitializer("roi", new long[] {0})
                .floatInitializer("scales", new long[] {4}, 1, 1, 2, 1.5f)
                .node("up", "Resize", List.of("x", "roi", "scales"), List.of("y")));
        assertEquals(nchw(3, 8, 9), shape(scales, "y"));
        ModelGraph sizes = read(image(opset).floatInitializer("roi", new long[] {0})
                .floatInitializer("scales", new long[] {0}).int64Initializer("sizes", 1, 3, 5, 7)
                .node("up", "Resize", List.of("x", "roi", "scales", "sizes"), List.of("y")));
        // sizes fix the batch too, as ONNX says
        assertEquals(SymbolicShape.ofStatic(1, 3, 5, 7), shape(sizes, "y"));
    }

    @ParameterizedTest
    @ValueSource(longs = {13, 18})
    void resizeFrom13OmitsRoiAndScales(long opset) {
        ModelGraph g = read(image(opset).int64Initializer("sizes", 2, 3, 8, 8)
                .node("up", "Resize", List.of("x", "", "", "sizes"), List.of("y")));
        assertEquals(SymbolicShape.ofStatic(2, 3, 8, 8), shape(g, "y"));
    }

    @ParameterizedTest
    @ValueSource(longs = {18, 19})
    void resize18ResizesTheAxesGiven(long opset) {
        ModelGraph sizes = read(image(opset).int64Initializer("sizes", 8, 12)
                .node("up", "Resize", List.of("x", "", "", "sizes"), List.of("y"), ints("axes", 2, 3)));
        assertEquals(nchw(3, 8, 12), shape(sizes, "y"));
        ModelGraph scales = read(image(opset).floatInitializer("scales", new long[] {2}, 0.5f, 3)
                .node("up", "Resize", List.of("x", "", "scales"), List.of("y"), ints("axes", -1, 2),
                        stringAttr("coordinate_transformation_mode", opset >= 19 ? "half_pixel_symmetric"
                                : "half_pixel")));
        assertEquals(nchw(3, 12, 3), shape(scales, "y"));
    }

    /** ONNX's shape-inference test: [3, 5] resized to sizes [6, 6] "not_smaller" gives [6, 10]. */
    @ParameterizedTest
    @ValueSource(longs = {18, 19})
    void resize18KeepsTheAspectRatio(long opset) {
        OnnxBuilder base = new OnnxBuilder().opset(opset).input("x", -1, 3, 5).output("y")
                .int64Initializer("sizes", 6, 6);
        ModelGraph notSmaller = read(base.node("up", "Resize", List.of("x", "", "", "sizes"), List.of("y"),
                ints("axes", 1, 2), stringAttr("keep_aspect_ratio_policy", "not_smaller")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(6), Dim.of(10)), shape(notSmaller, "y"));
        // not_larger: scale min(8/4, 8/6) = 4/3 → [round(5.33), round(8)] = [5, 8]
        ModelGraph notLarger = read(image(opset).int64Initializer("sizes", 8, 8)
                .node("up", "Resize", List.of("x", "", "", "sizes"), List.of("y"), ints("axes", 2, 3),
                        stringAttr("keep_aspect_ratio_policy", "not_larger")));
        assertEquals(nchw(3, 5, 8), shape(notLarger, "y"));
        // halves round up: 3 * 1.5 = 4.5 → 5
        ModelGraph half = read(new OnnxBuilder().opset(opset).input("x", -1, 3, 4).output("y")
                .int64Initializer("sizes", 5, 6)
                .node("up", "Resize", List.of("x", "", "", "sizes"), List.of("y"), ints("axes", 1, 2),
                        stringAttr("keep_aspect_ratio_policy", "not_larger")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(5), Dim.of(6)), shape(half, "y"));
    }

    @Test
    void aspectRatioWithScalesIsRefusedNamingTheNode() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(image(18)
                .floatInitializer("scales", new long[] {2}, 2, 2)
                .node("up7", "Resize", List.of("x", "", "scales"), List.of("y"), ints("axes", 2, 3),
                        stringAttr("keep_aspect_ratio_policy", "not_larger"))));
        assertEquals("up7", e.node().orElseThrow());
        assertTrue(e.getMessage().startsWith("t.onnx: node 'up7': Resize: keep_aspect_ratio_policy"),
                e.getMessage());
    }

    @Test
    void upsampleAtEachOpset() {
        ModelGraph v1 = read(image(1).node("up", "Upsample", List.of("x"), List.of("y"),
                floatAttr("height_scale", 2), floatAttr("width_scale", 3)));
        assertEquals(nchw(3, 8, 18), shape(v1, "y"));
        ModelGraph v7 = read(image(7).node("up", "Upsample", List.of("x"), List.of("y"),
                floats("scales", 1, 1, 2, 2)));
        assertEquals(nchw(3, 8, 12), shape(v7, "y"));
        for (long opset : new long[] {9, 10}) {
            ModelGraph v9 = read(image(opset).floatInitializer("s", new long[] {4}, 1, 1, 1.5f, 2)
                    .node("up", "Upsample", List.of("x", "s"), List.of("y")));
            assertEquals(nchw(3, 6, 12), shape(v9, "y"));
        }
    }

    @Test
    void splitSizesAsAttributeBefore13AsInputAfterAndNumOutputsFrom18() {
        ModelGraph v11 = read(new OnnxBuilder().opset(11).input("x", -1, 10).output("a").output("b")
                .node("s", "Split", List.of("x"), List.of("a", "b"), intAttr("axis", 1), ints("split", 3, 7)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(7)), shape(v11, "b"));
        ModelGraph v13 = read(new OnnxBuilder().opset(13).input("x", -1, 10).output("a").output("b")
                .int64Initializer("sp", 4, 6)
                .node("s", "Split", List.of("x", "sp"), List.of("a", "b"), intAttr("axis", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(6)), shape(v13, "b"));
        ModelGraph v18 = read(new OnnxBuilder().opset(18).input("x", -1, 10).output("a").output("b")
                .output("c").node("s", "Split", List.of("x"), List.of("a", "b", "c"), intAttr("axis", 1),
                        intAttr("num_outputs", 3)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4)), shape(v18, "a"));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2)), shape(v18, "c"));
    }

    @Test
    void squeezeAndUnsqueezeAxesAsAttributeBefore13AsInputAfter() {
        ModelGraph v11 = read(new OnnxBuilder().opset(11).input("x", -1, 1, 5).output("y")
                .node("sq", "Squeeze", List.of("x"), List.of("s"), ints("axes", 1))
                .node("un", "Unsqueeze", List.of("s"), List.of("y"), ints("axes", -1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(5), Dim.of(1)), shape(v11, "y"));
        ModelGraph v13 = read(new OnnxBuilder().opset(13).input("x", -1, 1, 5).output("y")
                .int64Initializer("a1", 1).int64Initializer("a2", -1)
                .node("sq", "Squeeze", List.of("x", "a1"), List.of("s"))
                .node("un", "Unsqueeze", List.of("s", "a2"), List.of("y")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(5), Dim.of(1)), shape(v13, "y"));
    }

    @Test
    void reduceAxesMoveToAnInputAt13ForReduceSumAndAt18ForTheRest() {
        ModelGraph v11 = read(new OnnxBuilder().opset(11).input("x", -1, 3, 5).output("y")
                .node("r", "ReduceSum", List.of("x"), List.of("y"), ints("axes", 2), intAttr("keepdims", 0)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3)), shape(v11, "y"));
        ModelGraph sum13 = read(new OnnxBuilder().opset(13).input("x", -1, 3, 5).output("y")
                .int64Initializer("ax", 2)
                .node("r", "ReduceSum", List.of("x", "ax"), List.of("y"), intAttr("keepdims", 0)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3)), shape(sum13, "y"));
        ModelGraph mean13 = read(new OnnxBuilder().opset(13).input("x", -1, 3, 5).output("y")
                .node("r", "ReduceMean", List.of("x"), List.of("y"), ints("axes", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(1), Dim.of(5)), shape(mean13, "y"));
        ModelGraph mean18 = read(new OnnxBuilder().opset(18).input("x", -1, 3, 5).output("y")
                .int64Initializer("ax", 1)
                .node("r", "ReduceMean", List.of("x", "ax"), List.of("y")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(1), Dim.of(5)), shape(mean18, "y"));
    }

    @Test
    void padAtEachOpset() {
        SymbolicShape padded = SymbolicShape.of(Dim.batch(), Dim.of(3 + 3), Dim.of(5));
        ModelGraph v1 = read(new OnnxBuilder().opset(1).input("x", -1, 3, 5).output("y")
                .node("p", "Pad", List.of("x"), List.of("y"), ints("paddings", 0, 1, 0, 0, 2, 0)));
        assertEquals(padded, shape(v1, "y"));
        ModelGraph v2 = read(new OnnxBuilder().opset(2).input("x", -1, 3, 5).output("y")
                .node("p", "Pad", List.of("x"), List.of("y"), ints("pads", 0, 1, 0, 0, 2, 0),
                        floatAttr("value", 1)));
        assertEquals(padded, shape(v2, "y"));
        ModelGraph v11 = read(new OnnxBuilder().opset(11).input("x", -1, 3, 5).output("y")
                .int64Initializer("pads", 0, 1, 0, 0, 2, 0)
                .node("p", "Pad", List.of("x", "pads"), List.of("y")));
        assertEquals(padded, shape(v11, "y"));
        ModelGraph v18 = read(new OnnxBuilder().opset(18).input("x", -1, 3, 5).output("y")
                .int64Initializer("pads", 1, 2).int64Initializer("axes", 1)
                .node("p", "Pad", List.of("x", "pads", "", "axes"), List.of("y")));
        assertEquals(padded, shape(v18, "y"));
    }

    /** A reshape target clipped to [-1, 15]: by attributes before opset 11, by inputs from 11. */
    @Test
    void clipBoundsAsAttributesBefore11AsInputsAfter() {
        OnnxBuilder v6 = new OnnxBuilder().opset(6).input("x", -1, 30).output("y")
                .node("c", "Constant", List.of(), List.of("t"), int64Tensor("value", new long[] {2}, -1, 40))
                .node("clip", "Clip", List.of("t"), List.of("t2"), floatAttr("min", -1), floatAttr("max", 15))
                .node("r", "Reshape", List.of("x", "t2"), List.of("y"));
        assertEquals(SymbolicShape.of(new Dim(2, 0), Dim.of(15)), shape(read(v6), "y"));
        OnnxBuilder v11 = new OnnxBuilder().opset(11).input("x", -1, 30).output("y")
                .node("c", "Constant", List.of(), List.of("t"), int64Tensor("value", new long[] {2}, -1, 40))
                .node("lo", "Constant", List.of(), List.of("lo"), int64Tensor("value", new long[0], -1))
                .node("hi", "Constant", List.of(), List.of("hi"), int64Tensor("value", new long[0], 15))
                .node("clip", "Clip", List.of("t", "lo", "hi"), List.of("t2"))
                .node("r", "Reshape", List.of("x", "t2"), List.of("y"));
        assertEquals(SymbolicShape.of(new Dim(2, 0), Dim.of(15)), shape(read(v11), "y"));
    }

    @Test
    void sliceAttributesBefore10InputsAfter() {
        ModelGraph v9 = read(new OnnxBuilder().opset(9).input("x", -1, 10, 6).output("y")
                .node("s", "Slice", List.of("x"), List.of("y"), ints("starts", 2), ints("ends", -1),
                        ints("axes", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(7), Dim.of(6)), shape(v9, "y"));
        ModelGraph v10 = read(new OnnxBuilder().opset(10).input("x", -1, 10, 6).output("y")
                .int64Initializer("st", 2).int64Initializer("en", -1).int64Initializer("ax", 1)
                .int64Initializer("step", 2)
                .node("s", "Slice", List.of("x", "st", "en", "ax", "step"), List.of("y")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4), Dim.of(6)), shape(v10, "y"));
    }

    @Test
    void topKAttributeBefore10InputAfter() {
        ModelGraph v9 = read(new OnnxBuilder().opset(9).input("x", -1, 10).output("v").output("i")
                .node("k", "TopK", List.of("x"), List.of("v", "i"), intAttr("k", 3)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(3)), shape(v9, "i"));
        ModelGraph v10 = read(new OnnxBuilder().opset(10).input("x", -1, 10).output("v").output("i")
                .int64Initializer("k", 4).node("k", "TopK", List.of("x", "k"), List.of("v", "i")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(4)), shape(v10, "i"));
    }

    @Test
    void oldFormsOfConcatCastTileAndBroadcast() {
        // Concat-1: axis defaults to 1
        ModelGraph concat = read(new OnnxBuilder().opset(3).input("a", -1, 2).input("b", -1, 5).output("y")
                .node("c", "Concat", List.of("a", "b"), List.of("y")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(7)), shape(concat, "y"));
        // Cast-1: the type by name
        ModelGraph cast = read(new OnnxBuilder().opset(5).input("x", -1, 2).output("y")
                .node("c", "Cast", List.of("x"), List.of("y"), stringAttr("to", "FLOAT16")));
        assertEquals(DataType.FLOAT16, cast.tensor("y").orElseThrow().type());
        // Tile-1: scalar tiles along a scalar axis
        ModelGraph tile = read(new OnnxBuilder().opset(5).input("x", -1, 2, 3).output("y")
                .int64Initializer("tiles", 4).int64Initializer("axis", 2)
                .node("t", "Tile", List.of("x", "tiles", "axis"), List.of("y")));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2), Dim.of(12)), shape(tile, "y"));
        // Add-6 with broadcast = 1 and axis = 1: a per-channel bias
        ModelGraph add = read(new OnnxBuilder().opset(6).input("x", -1, 3, 4, 4).input("b", 3).output("y")
                .node("add", "Add", List.of("x", "b"), List.of("y"), intAttr("broadcast", 1), intAttr("axis", 1)));
        assertEquals(nchw(3, 4, 4), shape(add, "y"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder().opset(6)
                .input("x", -1, 3, 4, 4).input("b", 5).output("y")
                .node("add2", "Add", List.of("x", "b"), List.of("y"), intAttr("broadcast", 1),
                        intAttr("axis", 1))));
        assertEquals("add2", e.node().orElseThrow());
    }

    @Test
    void batchNormalizationPerActivationBefore9() {
        ModelGraph g = read(new OnnxBuilder().opset(7).input("x", -1, 2, 3).input("s", 2, 3).input("b", 2, 3)
                .input("m", 2, 3).input("v", 2, 3).output("y")
                .node("bn", "BatchNormalization", List.of("x", "s", "b", "m", "v"), List.of("y"),
                        intAttr("spatial", 0)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(2), Dim.of(3)), shape(g, "y"));
    }

    @Test
    void quantizeLinear21TakesItsTypeFromOutputDtype() {
        ModelGraph g = read(new OnnxBuilder().opset(21).input("x", -1, 4).floatInitializer("s", new long[0], 0.5f)
                .output("y").node("q", "QuantizeLinear", List.of("x", "s"), List.of("y"), intAttr("output_dtype", 3)));
        assertEquals(DataType.INT8, g.tensor("y").orElseThrow().type());
        ModelGraph old = read(new OnnxBuilder().opset(13).input("x", -1, 4).floatInitializer("s", new long[0], 0.5f)
                .output("y").node("q", "QuantizeLinear", List.of("x", "s"), List.of("y")));
        assertEquals(DataType.UINT8, old.tensor("y").orElseThrow().type());
    }

    /** Both forms in one file (an exporter that mixes them) read the other form when the opset's is absent. */
    @Test
    void theOtherFormIsReadWhenTheOpsetsIsAbsent() {
        ModelGraph g = read(new OnnxBuilder().opset(13).input("x", -1, 1, 5).output("y")
                .node("sq", "Squeeze", List.of("x"), List.of("y"), ints("axes", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(5)), shape(g, "y"));
    }
}
