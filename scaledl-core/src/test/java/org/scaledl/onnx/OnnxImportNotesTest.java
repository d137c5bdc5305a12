package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.graph.Coverage;
import org.scaledl.graph.ModelGraph;

/**
 * What the importer notices without refusing: an opset newer than it knows, and half-precision exports (whose
 * precision the prediction does not take). Both are logged (SLF4J warnings) and kept in {@link Coverage#notes()}.
 */
class OnnxImportNotesTest {
    private static OnnxBuilder relu() {
        return new OnnxBuilder().input("x", -1, 4).output("y").node("r", "Relu", List.of("x"), List.of("y"));
    }

    private static Coverage coverage(OnnxBuilder b) {
        return OnnxImporter.read(b.build(), "t", "t.onnx").coverage();
    }

    @Test
    void anOpsetNewerThanTheImporterKnowsIsNoted() {
        Coverage c = coverage(relu().opset(99));
        assertTrue(c.isComplete(), c.summary());
        assertEquals(1, c.notes().size());
        assertTrue(c.notes().get(0).startsWith("opset 99 is newer than the importer knows (21)"), c.notes().get(0));
        assertEquals(List.of(), coverage(relu().opset(ShapeInference.LATEST_OPSET)).notes());
        assertEquals(List.of(), coverage(relu().noOpset()).notes());
    }

    @Test
    void halfPrecisionExportsAreNotedAsNotSettingThePredictionsPrecision() {
        for (int type : new int[] {10, 16}) {
            ModelGraph g = OnnxImporter.read(new OnnxBuilder().typedInput("x", type, -1, 4).output("y")
                    .rawInitializer("w", type, new long[] {4, 4}, new byte[32])
                    .node("mm", "MatMul", List.of("x", "w"), List.of("y")).build(), "t", "t.onnx");
            String note = g.coverage().notes().get(0);
            assertTrue(note.startsWith("2 " + (type == 10 ? "FLOAT16" : "BFLOAT16") + " of the 2 floating-point"),
                    note);
            assertTrue(note.contains("does not make a half-precision prediction") && note.contains("workload"),
                    note);
            assertTrue(g.coverage().isComplete());
            assertEquals(16, g.parameterCount());
        }
        assertEquals(List.of(), coverage(relu()).notes());
    }

    @Test
    void aGraphBuiltByHandHasNoNotes() {
        assertEquals(List.of(), Coverage.complete(3).notes());
    }
}
