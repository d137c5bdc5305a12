package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.scaledl.TestData;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;

class OnnxImporterTest {

    static Stream<Path> graphs() throws IOException {
        return Files.list(TestData.cpuDdp().resolve("graphs")).filter(p -> p.toString().endsWith(".onnx")).sorted();
    }

    /** PyTorch's parameter count per graph file, from runs.csv. */
    static Map<String, Long> pytorchParams() throws IOException {
        List<String> lines = Files.readAllLines(TestData.cpuDdp().resolve("runs.csv"));
        Map<String, Long> out = new HashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            out.put(Path.of(f[11]).getFileName().toString(), Long.parseLong(f[10]));
        }
        return out;
    }

    @ParameterizedTest
    @MethodSource("graphs")
    void parameterCountEqualsPytorch(Path file) throws IOException {
        ModelGraph g = OnnxImporter.read(file);
        assertEquals(pytorchParams().get(file.getFileName().toString()), g.parameterCount(), file.toString());
    }

    @ParameterizedTest
    @MethodSource("graphs")
    void everyShapeInferredAndAgreesWithValueInfo(Path file) {
        ModelGraph g = OnnxImporter.read(file);
        Map<String, SymbolicShape> declared = OnnxImporter.declaredShapes(file);
        int compared = 0;
        for (TensorInfo t : g.tensors().values()) {
            assertTrue(t.shape().isPresent(), () -> "no shape for " + t.name());
            SymbolicShape d = declared.get(t.name());
            if (d != null) {
                assertEquals(d, t.shape().get(), t.name());
                compared++;
            }
        }
        assertTrue(compared > g.size() / 2, "too few value_info shapes compared: " + compared);
        assertFalse(g.layers().isEmpty());
    }
}
