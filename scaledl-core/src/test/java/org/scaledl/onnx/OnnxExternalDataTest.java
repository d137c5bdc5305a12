package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.scaledl.onnx.OnnxBuilder.externalTensor;
import static org.scaledl.onnx.OnnxBuilder.intAttr;
import static org.scaledl.onnx.OnnxBuilder.tensorAttr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;

/**
 * Weights stored as external data ({@code onnx.save(..., save_as_external_data=True)}, every export over 2 GB):
 * {@code TensorProto.external_data} is field 13 (key/value entries), {@code data_location} field 14. Shapes do not
 * need the values: the external file is never opened, and only a declared {@code length} is checked.
 */
class OnnxExternalDataTest {
    private static final int FLOAT = 1;
    private static final int FLOAT16 = 10;
    private static final int INT4 = 22;

    private static OnnxBuilder linear(boolean dataLocation, String... entries) {
        return new OnnxBuilder().input("x", -1, 16).output("y")
                .externalInitializer("w", FLOAT, new long[] {16, 32}, dataLocation, entries)
                .node("mm", "MatMul", List.of("x", "w"), List.of("y"));
    }

    private static ModelGraph read(OnnxBuilder b) {
        return OnnxImporter.read(b.build(), "t", "t.onnx");
    }

    @Test
    void externalWeightsAreAcceptedAsOnnxWritesThem() {
        ModelGraph g = read(linear(true, "location", "model.onnx.data", "offset", "4096", "length", "2048"));
        assertEquals(16 * 32, g.parameterCount());
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(32)), g.tensor("y").orElseThrow().shape().orElseThrow());
    }

    @Test
    void eitherFieldAloneMarksExternalData() {
        assertEquals(512, read(linear(true)).parameterCount());
        assertEquals(512, read(linear(false, "location", "w.bin")).parameterCount());
    }

    @Test
    void aLengthThatContradictsTheDimsNamesTheFileAndTensor() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> read(linear(true, "location", "w.bin", "length", "2047")));
        assertTrue(e.getMessage().startsWith("t.onnx"), e.getMessage());
        assertEquals("mm", e.node().orElseThrow());
        assertTrue(e.getMessage().contains("initializer 'w'") && e.getMessage().contains("length 2047")
                && e.getMessage().contains("need 2048"), e.getMessage());
        InvalidInputException notANumber = assertThrows(InvalidInputException.class,
                () -> read(linear(true, "location", "w.bin", "length", "lots")));
        assertTrue(notANumber.getMessage().contains("'lots' is not a number"), notANumber.getMessage());
    }

    @Test
    void lengthsFollowTheElementType() {
        ModelGraph half = read(new OnnxBuilder().input("x", -1, 8).output("y")
                .externalInitializer("w", FLOAT16, new long[] {8, 4}, true, "location", "w.bin", "length", "64")
                .node("mm", "MatMul", List.of("x", "w"), List.of("y")));
        assertEquals(DataType.FLOAT16, half.tensor("w").orElseThrow().type());
        // two 4-bit values a byte, rounded up
        ModelGraph nibbles = read(new OnnxBuilder().input("x", -1, 8).output("x")
                .externalInitializer("q", INT4, new long[] {3, 3}, true, "location", "q.bin", "length", "5"));
        assertEquals(SymbolicShape.ofStatic(3, 3), nibbles.tensor("q").orElseThrow().shape().orElseThrow());
    }

    /** The external file would be a device that never ends, or does not exist: it is never opened. */
    @Test
    void theExternalFileIsNeverOpened(@TempDir Path dir) throws IOException {
        for (String location : List.of("/dev/zero", "missing.bin", "../../../../etc/shadow")) {
            Path file = dir.resolve("m.onnx");
            Files.write(file, linear(true, "location", location, "length", "2048").build());
            assertEquals(512, OnnxImporter.read(file).parameterCount(), location);
        }
    }

    @Test
    void aConstantStoredExternallyHasItsShapeAndANodeNamedOnError() {
        ModelGraph g = read(new OnnxBuilder().input("x", -1, 16).output("y")
                .node("table", "Constant", List.of(), List.of("idx"), tensorAttr("value",
                        externalTensor("t", 7, new long[] {40}, true, "location", "c.bin", "length", "320")))
                .node("g", "Gather", List.of("x", "idx"), List.of("y"), intAttr("axis", 1)));
        assertEquals(SymbolicShape.of(Dim.batch(), Dim.of(40)), g.tensor("y").orElseThrow().shape().orElseThrow());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(new OnnxBuilder()
                .input("x", -1, 16).output("y")
                .node("table9", "Constant", List.of(), List.of("idx"), tensorAttr("value",
                        externalTensor("t", 7, new long[] {40}, true, "location", "c.bin", "length", "32")))
                .node("g", "Gather", List.of("x", "idx"), List.of("y"), intAttr("axis", 1))));
        assertEquals("table9", e.node().orElseThrow());
        assertTrue(e.getMessage().startsWith("t.onnx: node 'table9': tensor attribute 'value'"), e.getMessage());
    }
}
