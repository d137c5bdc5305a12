package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DatasetReader;
import org.scaledl.workload.Phase;

/**
 * Hostile inputs (10,500 generated cases in all): the only exception that may escape is
 * {@link InvalidInputException}, and it names its source. No OOM, no stack overflow, no hang.
 */
class HostileInputProperties {
    private static final byte[] ALEXNET = read(TestData.graph("alexnet_r224"));

    private static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void importOrReject(byte[] bytes) {
        try {
            ModelGraph g = OnnxImporter.read(bytes, "hostile", "hostile.onnx");
            // What imports is consistent: its coverage describes its own layers, and its features can be taken.
            assertEquals(g.size(), g.coverage().layers());
            for (String name : g.coverage().unresolvedLayers()) {
                assertTrue(g.indexOf(name).isPresent(), name);
            }
            assertEquals(g.size(), FeatureExtractor.of(g).extract(1, Phase.TRAIN).size());
        } catch (InvalidInputException e) {
            assertTrue(e.getMessage().startsWith("hostile.onnx"), e.getMessage());
        }
    }

    @Property(tries = 4000)
    void randomBytes(@ForAll @Size(max = 600) byte[] bytes) {
        importOrReject(bytes);
    }

    @Property(tries = 2000)
    void bitFlippedRealModel(@ForAll long seed, @ForAll @IntRange(min = 1, max = 8) int flips) {
        byte[] b = ALEXNET.clone();
        Random r = new Random(seed);
        for (int i = 0; i < flips; i++) {
            int pos = r.nextInt(b.length);
            b[pos] ^= (byte) (1 << r.nextInt(8));
        }
        importOrReject(b);
    }

    @Property(tries = 1500)
    void truncatedRealModel(@ForAll @IntRange(min = 0, max = 6793) int length) {
        importOrReject(Arrays.copyOf(ALEXNET, Math.min(length, ALEXNET.length)));
    }

    @Property(tries = 500)
    void hugeDeclaredLengths(@ForAll @IntRange(min = 1, max = 30) int field, @ForAll long length) {
        // tag (field, length-delimited), then a varint length far beyond the data
        byte[] prefix = {(byte) (field << 3 | 2)};
        long v = length & Long.MAX_VALUE | 1L << 40;
        List<Byte> out = new ArrayList<>();
        out.add(prefix[0]);
        while ((v & ~0x7FL) != 0) {
            out.add((byte) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.add((byte) v);
        out.add((byte) 1);
        byte[] b = new byte[out.size()];
        for (int i = 0; i < b.length; i++) {
            b[i] = out.get(i);
        }
        importOrReject(b);
    }

    @Property(tries = 1500)
    void randomGraphsWithOddDimsAndCycles(@ForAll long seed) {
        Random r = new Random(seed);
        long[] dims = {-1, r.nextInt(5) - 1, r.nextBoolean() ? Long.MAX_VALUE / (1 + r.nextInt(3)) : r.nextInt(9)};
        OnnxBuilder b = new OnnxBuilder().input("t0", dims).input("w", r.nextInt(4), r.nextInt(4) - 1);
        String[] ops = {"Relu", "Add", "MatMul", "Concat", "Reshape", "Conv", "Transpose", "Gemm", "Softmax"};
        int nodes = 1 + r.nextInt(6);
        for (int i = 1; i <= nodes; i++) {
            String op = ops[r.nextInt(ops.length)];
            String a = "t" + r.nextInt(nodes + 1);
            String c = r.nextBoolean() ? "w" : "t" + r.nextInt(nodes + 1);
            b.node("n" + i, op, List.of(a, c), List.of("t" + i), OnnxBuilder.intAttr("axis", r.nextInt(5) - 2));
        }
        importOrReject(b.output("t" + nodes).build());
    }

    /**
     * Transposed convolutions, recurrent cells and block rearrangements with random shapes and attributes (some
     * invalid): import succeeds or names the file, and an imported graph's features never fail but for a documented
     * size overflow.
     */
    @Property(tries = 1500)
    void randomConvTransposeRecurrentAndBlockOperators(@ForAll long seed) {
        Random r = new Random(seed);
        String[] ops = {"ConvTranspose", "LSTM", "GRU", "RNN", "DepthToSpace", "SpaceToDepth", "LRN",
            "GroupNormalization", "ReduceLogSumExp"};
        String op = ops[r.nextInt(ops.length)];
        int rank = 2 + r.nextInt(3);
        long[] x = new long[rank];
        x[0] = -1;
        for (int d = 1; d < rank; d++) {
            x[d] = r.nextInt(7) - 1;
        }
        long[] w = new long[r.nextBoolean() ? rank : 3];
        for (int d = 0; d < w.length; d++) {
            w[d] = r.nextInt(9) - 1;
        }
        long[] rw = {r.nextInt(3), r.nextInt(9), r.nextInt(5)};
        List<byte[]> attrs = new ArrayList<>();
        attrs.add(OnnxBuilder.intAttr("group", r.nextInt(4) - 1));
        attrs.add(OnnxBuilder.ints("strides", r.nextInt(4) - 1, r.nextInt(3)));
        attrs.add(OnnxBuilder.ints("output_padding", r.nextInt(3) - 1, r.nextInt(2)));
        attrs.add(OnnxBuilder.intAttr("hidden_size", r.nextInt(5) - 1));
        attrs.add(OnnxBuilder.intAttr("blocksize", r.nextInt(4) - 1));
        attrs.add(OnnxBuilder.intAttr("layout", r.nextInt(3)));
        attrs.add(OnnxBuilder.stringAttr("direction", new String[] {"forward", "bidirectional", "sideways"}[
                r.nextInt(3)]));
        if (r.nextBoolean()) {
            attrs.add(OnnxBuilder.ints("output_shape", r.nextInt(12) - 1, r.nextInt(12)));
        }
        List<byte[]> chosen = new ArrayList<>();
        for (byte[] a : attrs) {
            if (r.nextInt(3) > 0) {
                chosen.add(a);
            }
        }
        List<String> inputs = switch (op) {
            case "LSTM", "GRU", "RNN" -> List.of("x", "w", "r");
            case "ConvTranspose", "GroupNormalization" -> List.of("x", "w");
            default -> List.of("x");
        };
        byte[] model = new OnnxBuilder().input("x", x).input("w", w).input("r", rw).output("y")
                .node("n", op, inputs, List.of("y"), chosen.toArray(new byte[0][])).build();
        ModelGraph g;
        try {
            g = OnnxImporter.read(model, "hostile", "hostile.onnx");
        } catch (InvalidInputException e) {
            assertTrue(e.getMessage().startsWith("hostile.onnx"), e.getMessage());
            return;
        }
        for (Phase phase : Phase.values()) {
            try {
                FeatureExtractor.of(g).extract(1 + r.nextInt(3), phase);
            } catch (ArithmeticException overflow) {
                // documented: a tensor size that overflows
            }
        }
    }

    @Property(tries = 1000)
    void mangledRunsCsv(@ForAll long seed) throws IOException {
        Random r = new Random(seed);
        Path dir = Files.createTempDirectory("hostile");
        try {
            Files.createDirectories(dir.resolve("graphs"));
            Files.write(dir.resolve("graphs/g.onnx"), new OnnxBuilder().input("x", -1, 4).output("y")
                    .node("relu", "Relu", List.of("x"), List.of("y")).build());
            String[] cols = {"model", "batch", "world_size", "threads", "phase", "iter_ms_p50", "graph"};
            String[] values = {"m", "2", "1", "1", "train", "10.5", "graphs/g.onnx"};
            String[] bad = {"", "NaN", "Infinity", "-1", "0", "1e400", "trainz", "x,y", "\"", "graphs/none.onnx",
                "99999999999"};
            List<String> header = new ArrayList<>(List.of(cols));
            if (r.nextInt(4) == 0) {
                header.remove(r.nextInt(header.size()));
            }
            StringBuilder sb = new StringBuilder(String.join(",", header)).append('\n');
            for (int row = 0; row < 1 + r.nextInt(3); row++) {
                List<String> v = new ArrayList<>();
                for (String h : header) {
                    int i = List.of(cols).indexOf(h);
                    v.add(r.nextInt(5) == 0 ? bad[r.nextInt(bad.length)] : values[i]);
                }
                sb.append(String.join(",", v)).append('\n');
            }
            Files.writeString(dir.resolve("runs.csv"), sb.toString());
            try {
                DatasetReader.read(dir);
            } catch (InvalidInputException e) {
                assertTrue(e.source().isPresent(), e.getMessage());
            }
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
