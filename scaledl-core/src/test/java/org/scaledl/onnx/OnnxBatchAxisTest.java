package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.scaledl.onnx.OnnxBuilder.intAttr;
import static org.scaledl.onnx.OnnxBuilder.ints;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Dim;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;

/**
 * Only the leading axis of a data input is the batch (or a dimension named as the batch, for time-major
 * sequences): a symbolic spatial {@code H} of an {@code [1, 3, H, W]} image must be bound with {@code --dim H=...},
 * and is never the batch, so batch 8 does not predict an image 8 pixels high.
 */
class OnnxBatchAxisTest {
    private static OnnxBuilder image(String... dims) {
        return new OnnxBuilder().namedInput("x", dims).input("w", 8, 3, 3, 3).output("y")
                .node("conv", "Conv", List.of("x", "w"), List.of("y"), ints("pads", 1, 1, 1, 1));
    }

    private static ModelGraph read(OnnxBuilder b, OnnxImporter.Options o) {
        return OnnxImporter.read(b.build(), "t", "t.onnx", o);
    }

    private static SymbolicShape shape(ModelGraph g, String tensor) {
        return g.tensor(tensor).orElseThrow().shape().orElseThrow();
    }

    @Test
    void aSymbolicSpatialDimensionIsNotTheBatchAndMustBeBound() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> read(image("1", "3", "H", "W"), OnnxImporter.Options.defaults()));
        String m = e.getMessage();
        assertTrue(m.startsWith("t.onnx: "), m);
        assertTrue(m.contains("'H' (input 'x', axis 2)") && m.contains("'W' (input 'x', axis 3)"), m);
        assertTrue(m.contains("--dim H=224"), m);
        assertFalse(m.contains("\n"), m);
    }

    @Test
    void bindingTheSpatialSymbolsWorksAndTheFixedLeadingAxisIsTheBatch() {
        ModelGraph g = read(image("1", "3", "H", "W"), OnnxImporter.Options.builder().dim("H", 32).dim("W", 48)
                .build());
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8), Dim.of(32), Dim.of(48)), shape(g, "y"));
        // batch 8: eight images of 32 x 48, not one image 8 pixels high
        assertArrayEquals(new long[] {8, 3, 32, 48}, shape(g, "x").at(8));
        assertEquals(1, g.coverage().exportedBatch().orElseThrow());
        assertEquals(32L, g.coverage().boundDimensions().get("H"));
    }

    @Test
    void theFixedBatchPolicyStillHolds() {
        OnnxImporter.Options refuse = OnnxImporter.Options.builder().dim("H", 32).dim("W", 32)
                .fixedBatch(OnnxImporter.FixedBatch.REFUSE).build();
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> read(image("1", "3", "H", "W"), refuse));
        assertTrue(e.getMessage().contains("dynamic_axes"), e.getMessage());
    }

    @Test
    void aSymbolicLeadingAxisIsTheBatchWhateverItsName() {
        ModelGraph g = read(image("N", "3", "H", "W"), OnnxImporter.Options.builder().dim("H", 16).dim("W", 16)
                .build());
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8), Dim.of(16), Dim.of(16)), shape(g, "y"));
        assertTrue(g.coverage().exportedBatch().isEmpty());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(image("N", "3", "H", "W"),
                OnnxImporter.Options.builder().dim("N", 4).dim("H", 16).dim("W", 16).build()));
        assertTrue(e.getMessage().contains("'N' is the batch dimension"), e.getMessage());
    }

    @Test
    void anUnnamedLeadingAxisIsTheBatchAndAnUnnamedSpatialOneCannotBeBound() {
        ModelGraph g = read(image("?", "3", "8", "8"), OnnxImporter.Options.defaults());
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(8), Dim.of(8), Dim.of(8)), shape(g, "y"));
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> read(image("1", "3", "?", "8"), OnnxImporter.Options.defaults()));
        assertTrue(e.getMessage().contains("dimension 2 of input 'x' (unnamed)"), e.getMessage());
        assertTrue(e.getMessage().contains("re-export"), e.getMessage());
    }

    /** A time-major sequence, [seq, batch, features]: the dimension named as the batch is the batch. */
    @Test
    void aDimensionNamedAsTheBatchIsTheBatchAtAnyAxis() {
        OnnxBuilder lstm = new OnnxBuilder().namedInput("x", "seq", "batch_size", "8").input("w", 1, 64, 8)
                .input("r", 1, 64, 16).output("y")
                .node("lstm", "LSTM", List.of("x", "w", "r"), List.of("y"), intAttr("hidden_size", 16));
        ModelGraph g = read(lstm, OnnxImporter.Options.builder().dim("seq", 5).build());
        assertEquals(SymbolicShape.of(Dim.of(5), Dim.of(1), Dim.batch(), Dim.of(16)), shape(g, "y"));
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> read(lstm, OnnxImporter.Options.defaults()));
        assertTrue(e.getMessage().contains("'seq' (input 'x', axis 0)") && e.getMessage().contains("--dim seq="),
                e.getMessage());
    }

    @Test
    void theBatchOfSeveralImageInputsIsTheirFixedLeadingAxis() {
        OnnxBuilder b = new OnnxBuilder().namedInput("a", "1", "3", "H", "W").namedInput("b", "1", "3", "H", "W")
                .output("y").node("cat", "Concat", List.of("a", "b"), List.of("y"), intAttr("axis", 1));
        ModelGraph g = read(b, OnnxImporter.Options.builder().dim("H", 4).dim("W", 4).build());
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(6), Dim.of(4), Dim.of(4)), shape(g, "y"));
    }
}
