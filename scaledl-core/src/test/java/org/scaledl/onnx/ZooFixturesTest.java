package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;

/**
 * Real exports that the importer used to resolve only partly (most shapes unknown downstream of computed pads, or a
 * symbolic sequence length refused), checked against ONNX Runtime's run of the same file: every node's output shape,
 * PyTorch's parameter count and the contraction FLOPs. The fixtures and their references were written by
 * {@code tools/zoo/zoo.py export} (see {@code src/test/resources/zoo/PROVENANCE.md}).
 */
class ZooFixturesTest {
    private static final Path DIR = Path.of("src/test/resources/zoo");
    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<String> fixtures() throws IOException {
        try (Stream<Path> s = Files.list(DIR)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".onnx"))
                    .map(n -> n.substring(0, n.length() - 5)).sorted().toList().stream();
        }
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    void importsWholeAndAgreesWithOnnxRuntime(String id) throws IOException {
        JsonNode ref = JSON.readTree(DIR.resolve(id + ".json").toFile());
        OnnxImporter.Options.Builder o = OnnxImporter.Options.builder();
        if (ref.path("seq").isNumber()) {
            o.dim("seq", ref.path("seq").asLong());
        }
        ModelGraph g = OnnxImporter.read(DIR.resolve(id + ".onnx"), o.build());
        assertTrue(g.coverage().isComplete(), id + ": " + g.coverage().summary());
        assertEquals(ref.path("params_torch").asLong(), g.parameterCount(), id + " parameters");
        long batch = ref.path("batch").asLong();
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = ref.path("node_output_shapes").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            Layer l = g.layer(g.indexOf(e.getKey()).orElseThrow(() -> new AssertionError("no node " + e.getKey())));
            long[] want = new long[e.getValue().size()];
            for (int i = 0; i < want.length; i++) {
                want[i] = e.getValue().get(i).asLong();
            }
            long[] got = g.tensor(l.outputs().get(0)).flatMap(t -> t.shape()).map(s -> s.at(batch)).orElse(null);
            if (!Arrays.equals(want, got)) {
                wrong.add(e.getKey() + ": " + Arrays.toString(got) + " vs " + Arrays.toString(want));
            }
            checked++;
        }
        assertTrue(wrong.isEmpty(), id + ": " + wrong.size() + " of " + checked + " shapes differ, e.g. "
                + wrong.stream().limit(3).toList());
        double[] flops = new double[4];
        List<String> ops = List.of("Conv", "ConvTranspose", "Gemm", "MatMul");
        for (LayerFeatures lf : FeatureExtractor.of(g).extract(batch, Phase.INFER)) {
            int k = ops.indexOf(g.layer(lf.layer()).opType());
            if (k >= 0) {
                flops[k] += lf.flopsFwd();
            }
        }
        for (int k = 0; k < ops.size(); k++) {
            double want = ref.path("flops_fwd").path(ops.get(k)).asDouble();
            assertEquals(want, flops[k], 1e-9 * Math.max(1, want), id + " " + ops.get(k) + " FLOPs");
        }
    }
}
