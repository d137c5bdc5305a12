package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.scaledl.onnx.OnnxBuilder.int64Tensor;
import static org.scaledl.onnx.OnnxBuilder.intAttr;
import static org.scaledl.onnx.OnnxBuilder.ints;
import static org.scaledl.onnx.OnnxBuilder.stringAttr;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TensorInfo;

/**
 * The cases of the security review: each ends in a right answer or one clean {@link InvalidInputException} whose
 * one-line message names the file and, where there is one, the node and tensor.
 */
class HostileInputCasesTest {
    private static final long HUGE = 1L << 40;

    private static ModelGraph read(OnnxBuilder b) {
        return OnnxImporter.read(b.build(), "t", "t.onnx");
    }

    private static InvalidInputException refused(OnnxBuilder b) {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> read(b));
        assertTrue(e.getMessage().startsWith("t.onnx: "), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        return e;
    }

    private static long[] ones(int rank) {
        long[] d = new long[rank];
        Arrays.fill(d, 1);
        return d;
    }

    /** Bytes this thread allocated (HotSpot), or -1 where the JVM does not count them. */
    private static long allocated() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled()) {
            return t.getCurrentThreadAllocatedBytes();
        }
        return -1;
    }

    // ---------------------------------------------------------------- 1. rank and linear work

    @Test
    void aTensorOfAHundredThousandDimensionsIsRefusedNamingTheCap() {
        InvalidInputException input = refused(new OnnxBuilder().input("x", ones(100_000)).output("y")
                .node("r", "Relu", List.of("x"), List.of("y")));
        assertTrue(input.getMessage().contains("tensor 'x' has 100000 dimensions, more than the 64"),
                input.getMessage());
        InvalidInputException constant = refused(new OnnxBuilder().input("x", -1, 4).output("y")
                .node("c", "Constant", List.of(), List.of("k"), int64Tensor("value", ones(100_000), 3))
                .node("r", "Relu", List.of("k"), List.of("y")));
        assertEquals("c", constant.node().orElseThrow());
        assertTrue(constant.getMessage().contains("more than the 64"), constant.getMessage());
        InvalidInputException grown = refused(new OnnxBuilder().input("x", -1, 4).output("y")
                .node("grow", "Unsqueeze", List.of("x"), List.of("y"), ints("axes", 2, 3, 4, 5, 6, 7, 8, 9, 10,
                        11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33,
                        34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
                        57, 58, 59, 60, 61, 62, 63, 64)));
        assertEquals("grow", grown.node().orElseThrow());
        assertTrue(grown.getMessage().contains("output 'y' would have 65 dimensions"), grown.getMessage());
    }

    /**
     * The 100 KB file of the review (a tensor of 100,000 dimensions) is refused after work linear in its size:
     * counted by the bytes the refusal allocates, which the quadratic dims-to-string check made gigabytes.
     */
    @Test
    void refusingAHugeRankAllocatesLinearlyInTheFileSize() {
        for (OnnxBuilder b : List.of(new OnnxBuilder().input("x", ones(100_000)).output("x"),
                new OnnxBuilder().input("x", -1, 4).output("y")
                        .node("c", "Constant", List.of(), List.of("y"), int64Tensor("value", ones(100_000), 3)))) {
            byte[] bytes = b.build();
            assumeTrue(allocated() >= 0);
            assertThrows(InvalidInputException.class, () -> OnnxImporter.read(bytes, "t", "t.onnx"));
            long before = allocated();
            assertThrows(InvalidInputException.class, () -> OnnxImporter.read(bytes, "t", "t.onnx"));
            long used = allocated() - before;
            assertTrue(used < 64L * bytes.length + (1 << 20), used + " bytes allocated for a file of "
                    + bytes.length);
        }
    }

    @Test
    void manyNodesOfOneNameGetDistinctNames() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 4).output("t2999");
        String prev = "x";
        for (int i = 0; i < 3000; i++) {
            b.node("same", "Relu", List.of(prev), List.of("t" + i));
            prev = "t" + i;
        }
        ModelGraph g = read(b);
        assertEquals(3000, g.size());
        assertTrue(g.indexOf("same").isPresent() && g.indexOf("same#3000").isPresent());
    }

    // ---------------------------------------------------------------- 5. overflow

    @Test
    void aWeightWhoseSizeOverflowsNamesItsNodeAndTensor() {
        InvalidInputException e = refused(new OnnxBuilder().input("x", -1, HUGE).input("w", HUGE, HUGE)
                .output("y").node("mm", "MatMul", List.of("x", "w"), List.of("y")));
        assertEquals("mm", e.node().orElseThrow());
        assertTrue(e.getMessage().contains("'w'") && e.getMessage().contains("2^63"), e.getMessage());
        assertFalse(e.getMessage().contains("long overflow"), e.getMessage());
    }

    @Test
    void anInputWhoseSizeOverflowsNamesItsReaderAndItself() {
        InvalidInputException e = refused(new OnnxBuilder().input("x", -1, HUGE, HUGE).output("y")
                .node("relu", "Relu", List.of("x"), List.of("y")));
        assertEquals("relu", e.node().orElseThrow());
        assertTrue(e.getMessage().contains("input 'x'"), e.getMessage());
    }

    @Test
    void anOutputWhoseSizeOverflowsNamesTheNodeAndOutput() {
        InvalidInputException expand = refused(new OnnxBuilder().input("x", -1, 1).output("y")
                .node("c", "Constant", List.of(), List.of("t"), int64Tensor("value", new long[] {3}, HUGE, 1, HUGE))
                .node("big", "Expand", List.of("x", "t"), List.of("y")));
        assertEquals("big", expand.node().orElseThrow());
        assertTrue(expand.getMessage().contains("'y'"), expand.getMessage());
        List<String> parts = java.util.Collections.nCopies(40, "x");
        InvalidInputException concat = refused(new OnnxBuilder().typedInput("x", 3, -1, Long.MAX_VALUE / 32)
                .output("y").node("cat", "Concat", parts, List.of("y"), intAttr("axis", 1)));
        assertEquals("cat", concat.node().orElseThrow());
        assertTrue(concat.getMessage().contains("'y'"), concat.getMessage());
    }

    /** Four half-precision weights of 2^61 elements (external data): each fits, their parameter count does not. */
    @Test
    void aParameterCountPast2To63NamesTheWeightThatOverflowsIt() {
        OnnxBuilder b = new OnnxBuilder().input("x", -1, 4).output("y")
                .node("r", "Relu", List.of("x"), List.of("y"));
        for (int i = 0; i < 4; i++) {
            b.externalInitializer("w" + i, 10, new long[] {1L << 31, 1L << 30}, true, "location", "w.bin");
            b.node("use" + i, "Identity", List.of("w" + i), List.of("o" + i));
        }
        InvalidInputException e = refused(b);
        assertEquals("use3", e.node().orElseThrow());
        assertTrue(e.getMessage().contains("'w3'") && e.getMessage().contains("parameter count"), e.getMessage());
    }

    // ---------------------------------------------------------------- 6. names

    private static boolean printable(String s) {
        return s.chars().noneMatch(c -> org.scaledl.InvalidInputException.unsafe((char) c));
    }

    @Test
    void controlCharactersInNamesBecomeVisibleEscapesAndLookupsAgree() {
        String evil = "conv\u001b[2J\nINFO all layers resolved\u202e";
        String tensor = "feat\r\u0085\u2066";
        ModelGraph g = read(new OnnxBuilder().input("x\u0000", -1, 4).output(tensor)
                .node(evil, "Relu", List.of("x\u0000"), List.of("mid\u007f"))
                .node("odd", "Weird\u001bOp", List.of("mid\u007f"), List.of(tensor)));
        String cleanNode = "conv\\u001b[2J\\u000aINFO all layers resolved\\u202e";
        String cleanTensor = "feat\\u000d\\u0085\\u2066";
        assertEquals(0, g.indexOf(cleanNode).orElseThrow());
        assertTrue(g.tensor("x\\u0000").isPresent() && g.tensor("mid\\u007f").isPresent());
        assertTrue(g.tensor(cleanTensor).isPresent());
        assertEquals(List.of(cleanTensor), g.outputs());
        assertEquals(0, g.producerOf("mid\\u007f").orElseThrow());
        assertEquals(1, g.edges().size());
        for (Layer l : g.layers()) {
            assertTrue(printable(l.name()) && printable(l.opType()) && l.inputs().stream().allMatch(
                    HostileInputCasesTest::printable), l.toString());
        }
        for (TensorInfo t : g.tensors().values()) {
            assertTrue(printable(t.name()), t.name());
        }
        assertEquals(List.of("Weird\\u001bOp"), g.coverage().unsupportedOperators());
        assertTrue(printable(g.coverage().summary()), g.coverage().summary());
    }

    @Test
    void errorsNameTheEscapedNodeOnOneLine() {
        InvalidInputException e = refused(new OnnxBuilder().input("x", -1, 4).input("w", 5, 3).output("y")
                .node("mm\nERROR forged", "MatMul", List.of("x", "w"), List.of("y")));
        assertEquals("mm\\u000aERROR forged", e.node().orElseThrow());
        InvalidInputException attr = refused(new OnnxBuilder().input("x", 7, -1, 8).input("w", 1, 32, 8)
                .input("r", 1, 32, 8).output("y").node("rnn", "LSTM", List.of("x", "w", "r"), List.of("y"),
                        stringAttr("direction", "sideways\u001b[31m")));
        assertTrue(attr.getMessage().contains("sideways\\u001b[31m"), attr.getMessage());
        InvalidInputException source = assertThrows(InvalidInputException.class,
                () -> OnnxImporter.read(new byte[] {8, 1, 9}, "g", "evil\n.onnx"));
        assertTrue(source.getMessage().startsWith("evil\\u000a.onnx: "), source.getMessage());
    }

    @Test
    void twoNamesThatEscapeAlikeAreRefused() {
        InvalidInputException e = refused(new OnnxBuilder().input("a\u001b", -1, 4).input("a\\u001b", -1, 4)
                .output("y").node("add", "Add", List.of("a\u001b", "a\\u001b"), List.of("y")));
        assertTrue(e.getMessage().contains("'a\\u001b'"), e.getMessage());
    }

    @Test
    void escapingIsTheIdentityOnPrintableTextAndOtherwiseVisible() {
        assertEquals("/blocks.0/attn/MatMul_1 ∑ é 中", Names.escape("/blocks.0/attn/MatMul_1 ∑ é 中"));
        assertEquals("\\u0000\\u001f\\u007f\\u009f\\u202a\\u2069\\u2028", Names.escape(
                "\u0000\u001f\u007f\u009f\u202a\u2069\u2028"));
    }

    // ---------------------------------------------------------------- 7. devices and pipes

    private static OnnxImporter.Options cap(long bytes) {
        return OnnxImporter.Options.builder().maxFileBytes(bytes).build();
    }

    @Test
    void devZeroIsReadUpToTheCapAndRefusedNamingIt() {
        Path zero = Path.of("/dev/zero");
        assumeTrue(Files.exists(zero));
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> OnnxImporter.read(zero, cap(1 << 20)));
        assertTrue(e.getMessage().startsWith("/dev/zero: ") && e.getMessage().contains("cap of 1048576 bytes"),
                e.getMessage());
    }

    @Test
    void aPipeThatNeverEndsIsRefusedAtTheCap(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("model.onnx");
        Process mk;
        try {
            mk = new ProcessBuilder("mkfifo", fifo.toString()).start();
        } catch (IOException noMkfifo) {
            assumeTrue(false, "no mkfifo");
            return;
        }
        assumeTrue(mk.waitFor() == 0 && Files.exists(fifo));
        Thread writer = new Thread(() -> {
            try (OutputStream out = Files.newOutputStream(fifo)) {
                byte[] chunk = new byte[1 << 16];
                for (int i = 0; i < 1 << 14; i++) {
                    out.write(chunk);
                }
            } catch (IOException closedByTheReader) {
                // expected: the importer stops reading at the cap
            }
        });
        writer.setDaemon(true);
        writer.start();
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> OnnxImporter.read(fifo, cap(256 << 10)));
        assertTrue(e.getMessage().contains("model.onnx") && e.getMessage().contains("cap of 262144 bytes"),
                e.getMessage());
    }

    @Test
    void aRegularFileOverTheCapIsRefusedBeforeReading(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("m.onnx");
        byte[] model = new OnnxBuilder().input("x", -1, 4).output("y").node("r", "Relu", List.of("x"),
                List.of("y")).build();
        Files.write(file, model);
        assertEquals(1, OnnxImporter.read(file, cap(model.length)).size());
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> OnnxImporter.read(file, cap(model.length - 1)));
        assertTrue(e.getMessage().contains("file of " + model.length + " bytes is larger than the cap"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> cap(0));
        assertThrows(IllegalArgumentException.class, () -> cap(OnnxImporter.DEFAULT_MAX_FILE_BYTES + 1));
    }
}
