package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape rules are one table, from which the supported operators are derived; no source file of the package grows
 * past 1,000 lines.
 */
class OnnxStructureTest {
    private static final Path SOURCES = Path.of("src/main/java/org/scaledl/onnx");

    @Test
    void theSupportedOperatorsAreTheTablesKeysInCaseInsensitiveOrder() {
        List<String> ops = OnnxImporter.supportedOperators();
        List<String> sorted = new ArrayList<>(ops);
        sorted.sort(String.CASE_INSENSITIVE_ORDER);
        assertEquals(sorted, ops);
        assertEquals(ops.size(), ops.stream().distinct().count());
        assertTrue(ops.containsAll(List.of("Conv", "Resize", "Upsample", "Split", "ReduceMean", "LSTM")),
                ops::toString);
    }

    @Test
    void anOperatorCannotBeRegisteredTwice() {
        ShapeInference.Table t = new ShapeInference.Table();
        t.one(ElementwiseRules::unary, "Relu");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> t.one(ElementwiseRules::unary, "Relu"));
    }

    @Test
    void noSourceFileOfThePackageIsOverAThousandLines() throws IOException {
        try (Stream<Path> files = Files.list(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                long lines = Files.readAllLines(f).size();
                assertTrue(lines <= 1000, f + " has " + lines + " lines");
            }
        }
    }
}
