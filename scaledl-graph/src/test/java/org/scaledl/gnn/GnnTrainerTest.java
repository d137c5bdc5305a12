package org.scaledl.gnn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.host.LayerBasis;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictorTrainer;
import org.scaledl.model.RuntimeModel;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

class GnnTrainerTest {
    /** Six families: enough for the interaction stage's three-member ensemble (two groups per member). */
    private static final String[] GRAPHS = {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64", "alexnet_r224",
        "vgg11_r224", "shufflenet_v2_x1_0_r64"};
    private static List<Sample> samples;

    static Path graph(String name) {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(dir.resolve("datasets/cpu-ddp"))) {
            dir = dir.getParent();
        }
        return dir.resolve("datasets/cpu-ddp/graphs/" + name + ".onnx");
    }

    /** Times that grow with FLOPs, with a per-graph factor a sum of layers cannot explain. */
    @BeforeAll
    static void data() {
        samples = new ArrayList<>();
        int family = 0;
        for (String name : GRAPHS) {
            ModelGraph g = OnnxImporter.read(graph(name));
            double factor = 1 + 0.3 * family;
            for (int batch : new int[] {1, 2, 4, 8, 16}) {
                for (Phase phase : Phase.values()) {
                    Workload w = Workload.builder(g).batch(batch).phase(phase).tag("family", "f" + family)
                            .tag("model", name).build();
                    double flops = LayerBasis.standard().row(w)[LayerBasis.column(OpFamily.CONV, 2)];
                    samples.add(Sample.of(w, factor * (5 + flops * 1e-8)));
                }
            }
            family++;
        }
    }

    private static RuntimePredictor fit(GnnInteractions gnn) {
        return RuntimePredictor.builder().interactions(gnn).build().fit(samples);
    }

    @Test
    void fittingIsDeterministicAndPredictionsAreConsistent() {
        GnnInteractions t = new GnnInteractions().withSize(8, 2, 30);
        RuntimePredictor a = fit(t);
        RuntimePredictor b = fit(t);
        for (Sample s : samples) {
            Prediction pa = a.predict(s.workload());
            assertEquals(pa.millis(), b.predict(s.workload()).millis());
            assertTrue(pa.millis() > 0 && Double.isFinite(pa.millis()));
            assertTrue(pa.lowMillis() <= pa.millis() && pa.millis() <= pa.highMillis());
            double sum = pa.breakdown().stream().mapToDouble(Prediction.Contribution::millis).sum();
            assertEquals(pa.millis(), sum, 1e-9 * pa.millis());
            assertEquals(pa.millis(), a.predictMillis(s.workload()), 1e-12 * pa.millis());
        }
        assertEquals("gnn", t.name());
        assertEquals("gnn", a.provenance().config().get("interactions"));
        assertEquals("gnn-only", new GnnBaseline().name());
    }

    /** Runs of two machines: one basis each, and the stage's out-of-group fits hold the median shrinkage fixed. */
    @Test
    void fitsOnRunsOfTwoMachines() {
        List<Sample> two = new ArrayList<>();
        for (Sample s : samples) {
            for (int m = 0; m < 2; m++) {
                Workload w = s.workload().toBuilder().device(org.scaledl.workload.Device.cpu("machine " + m, 2, 512, 1, 2000, 20))
                        .build();
                two.add(Sample.of(w, s.millis() * (1 + m)));
            }
        }
        RuntimePredictor p = RuntimePredictor.builder().interactions(new GnnInteractions().withSize(8, 2, 10))
                .build().fit(two);
        assertEquals(List.of("machine 0", "machine 1"), p.machines());
        for (Sample s : two.subList(0, 8)) {
            double ms = p.predictMillis(s.workload());
            assertTrue(ms > 0 && Double.isFinite(ms), s.workload() + ": " + ms);
        }
    }

    /**
     * A prediction of the GNN stage is the same whatever was asked before: the graph's embedding depends on the
     * machine (its layers' times there), so it is prepared per graph and machine (it was cached per graph, and a
     * machine-1 prediction asked after a machine-0 one reused machine 0's embedding).
     */
    @Test
    void aPredictionDoesNotDependOnWhatWasAskedBefore() {
        List<Sample> two = new ArrayList<>();
        for (Sample s : samples) {
            for (int m = 0; m < 2; m++) {
                Workload w = s.workload().toBuilder().device(org.scaledl.workload.Device.cpu("machine " + m, 2, 512,
                        1, 2000, 20)).build();
                two.add(Sample.of(w, s.millis() * (1 + 2 * m) * (1 + 0.1 * (s.workload().batch() % 3))));
            }
        }
        PredictorTrainer t = RuntimePredictor.builder().interactions(new GnnInteractions().withSize(8, 2, 20))
                .build();
        Workload first = two.get(0).workload();
        Workload second = two.get(1).workload();
        assertEquals(first.graph(), second.graph());
        RuntimePredictor fresh = t.fit(two);
        double alone = fresh.predictMillis(second);
        Prediction aloneFull = t.fit(two).predict(second);
        RuntimePredictor p = t.fit(two);
        p.predictMillis(first);
        p.predict(first);
        assertEquals(alone, p.predictMillis(second), 0.0, "machine 1 asked after machine 0 on the same graph");
        Prediction after = p.predict(second);
        assertEquals(aloneFull.millis(), after.millis(), 0.0);
        assertEquals(aloneFull.lowMillis(), after.lowMillis(), 0.0);
        Prediction scored = p.predictAll(List.of(first, second)).get(1);
        assertEquals(aloneFull.millis(), scored.millis(), 0.0);
        assertEquals(aloneFull.highMillis(), scored.highMillis(), 0.0);
        assertTrue(Math.abs(p.predictMillis(first) / alone - 1) > 1e-6, "the two machines differ");
    }

    /** The per-layer times of a graph in the reference workload (batch 1, inference), by layer index. */
    static List<double[]> reference(RuntimePredictor p, ModelGraph g) {
        double[] out = new double[g.size()];
        for (Prediction.Contribution c : p.layerwise().predict(Workload.builder(g).phase(
                org.scaledl.workload.Phase.INFER).build()).breakdown()) {
            c.layer().ifPresent(i -> out[i] += c.millis());
        }
        return java.util.Collections.singletonList(out);
    }

    @Test
    void attentionVariantIsDeterministicAndNamed() {
        GnnInteractions t = new GnnInteractions().withAttention(true).withSize(8, 2, 20);
        RuntimePredictor a = fit(t);
        RuntimePredictor b = fit(t);
        for (Sample s : samples) {
            assertEquals(a.predict(s.workload()).millis(), b.predict(s.workload()).millis());
        }
        assertEquals("gnn-attention", t.name());
        assertEquals("gnn-only-attention", new GnnBaseline().withAttention(true).name());
        double shrink = ((GnnCorrection) a.interactions().orElseThrow()).shrink();
        assertTrue(shrink >= 0 && shrink <= 1, "shrink " + shrink);
    }

    /** The plain-Java message passing of predictions is the ND4J forward pass of training, up to rounding. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void plainJavaForwardEqualsTheNd4jForward(boolean attention) {
        RuntimePredictor p = fit(new GnnInteractions().withAttention(attention).withSize(8, 2, 10));
        GnnModel m = ((GnnCorrection) p.interactions().orElseThrow()).model();
        for (String name : GRAPHS) {
            GraphBatch b = GnnTrainer.batchOf(List.of(OnnxImporter.read(graph(name))), reference(p, OnnxImporter.read(graph(name))));
            double[] fast = m.embedding(b);
            double[] slow = m.embeddingNd4j(b);
            assertEquals(slow.length, fast.length);
            for (int i = 0; i < fast.length; i++) {
                assertEquals(slow[i], fast[i], 1e-9 * (1 + Math.abs(slow[i])), name + " [" + i + "]");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void graphOnlyLearnsTheTrainingData(boolean attention) {
        RuntimeModel m = new GnnBaseline().withAttention(attention).withSize(16, 2, 200).fit(samples);
        double meanLog = samples.stream().mapToDouble(s -> Math.log(s.millis())).average().orElse(0);
        double err = 0;
        double constant = 0;
        for (Sample s : samples) {
            err += Math.abs(Math.log(m.predict(s.workload()).millis() / s.millis()));
            constant += Math.abs(meanLog - Math.log(s.millis()));
        }
        // Far better than the best constant (in log space), although early stopping watches held-out graphs.
        assertTrue(err < 0.5 * constant, "mean |log ratio| " + err / samples.size() + " vs constant "
                + constant / samples.size());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void saveAndLoadGiveBitIdenticalPredictions(boolean attention, @TempDir Path dir) {
        RuntimePredictor m = fit(new GnnInteractions().withAttention(attention).withSize(8, 2, 20));
        Path file = dir.resolve("gnn.sdl");
        m.save(file);
        RuntimePredictor back = RuntimePredictor.load(file);
        assertEquals(m.name(), back.name());
        assertEquals(m.interactions().orElseThrow().describe(), back.interactions().orElseThrow().describe());
        GnnCorrection c = (GnnCorrection) back.interactions().orElseThrow();
        assertEquals(3, c.members().size(), "an ensemble of three members survives the round trip");
        for (GnnModel member : c.members()) {
            ModelGraph g0 = samples.get(0).workload().graph();
            assertTrue(member.novelty(member.embedding(GnnTrainer.batchOf(List.of(g0), reference(back, g0)))) >= 0);
        }
        for (Sample s : samples) {
            Prediction a = m.predict(s.workload());
            Prediction b = back.predict(s.workload());
            assertEquals(a.millis(), b.millis(), 0.0);
            assertEquals(a.lowMillis(), b.lowMillis(), 0.0);
            assertEquals(a.highMillis(), b.highMillis(), 0.0);
        }
        assertArrayEquals(m.toBytes(), RuntimePredictor.load(m.toBytes()).toBytes(), "bytes survive a round trip");
    }

    @Test
    void damagedFilesAreRejected(@TempDir Path dir) throws Exception {
        RuntimePredictor m = fit(new GnnInteractions().withSize(4, 1, 5));
        Path file = dir.resolve("gnn.sdl");
        m.save(file);
        String text = Files.readString(file);
        Path tampered = dir.resolve("tampered.sdl");
        Files.writeString(tampered, text.replaceFirst("\"shrink\" : [0-9.E-]+", "\"shrink\" : 0.123"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(tampered));
        assertTrue(e.getMessage().contains("tampered.sdl") && e.getMessage().contains("checksum"), e.getMessage());
        Path truncated = dir.resolve("truncated.sdl");
        Files.writeString(truncated, text.substring(0, text.length() / 2));
        assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(truncated));
    }

    /** A GNN predictor saved in the version-1 format still loads and predicts what it predicted then. */
    @Test
    void versionOneGnnFileLoadsAndPredictsAsBefore() throws Exception {
        Path dir = Path.of("src/test/resources/saved-v1");
        JsonNode expected = new ObjectMapper().readTree(dir.resolve("expected.json").toFile()).path("gnn-v1.sdl");
        RuntimePredictor p = RuntimePredictor.load(dir.resolve("gnn-v1.sdl"));
        assertTrue(p.interactions().isPresent());
        for (JsonNode c : expected) {
            Workload w = Workload.builder(OnnxImporter.read(graph(c.path("graph").asText())))
                    .batch(c.path("batch").asInt()).worldSize(c.path("world_size").asInt())
                    .threads(c.path("threads").asInt()).phase(Phase.parse(c.path("phase").asText())).build();
            assertEquals(c.path("ms").asDouble(), p.predict(w).millis(), 1e-9 * c.path("ms").asDouble(),
                    c.toString());
        }
    }

    /**
     * A GNN predictor saved in the version-2 format (with an active correction: shrink 1) loads and predicts
     * bit-identically, intervals included, and again after a save in the current format.
     */
    @Test
    void versionTwoGnnFileLoadsAndPredictsBitIdentically() throws Exception {
        Path dir = Path.of("src/test/resources/saved-v2");
        JsonNode expected = new ObjectMapper().readTree(dir.resolve("expected.json").toFile()).path("gnn-v2.sdl");
        RuntimePredictor p = RuntimePredictor.load(dir.resolve("gnn-v2.sdl"));
        assertTrue(((GnnCorrection) p.interactions().orElseThrow()).shrink() > 0);
        for (RuntimePredictor q : List.of(p, RuntimePredictor.load(p.toBytes()))) {
            for (JsonNode c : expected) {
                Workload w = Workload.builder(OnnxImporter.read(graph(c.path("graph").asText())))
                        .batch(c.path("batch").asInt()).worldSize(c.path("world_size").asInt())
                        .threads(c.path("threads").asInt()).phase(Phase.parse(c.path("phase").asText())).build();
                Prediction pr = q.predict(w);
                assertEquals(c.path("ms").asDouble(), pr.millis(), 0.0, c.toString());
                assertEquals(c.path("low_ms").asDouble(), pr.lowMillis(), 0.0, c.toString());
                assertEquals(c.path("high_ms").asDouble(), pr.highMillis(), 0.0, c.toString());
            }
        }
    }

    /**
     * A graph laid out flat with more layers than any training graph is outside the domain of a predictor that reads
     * the whole graph (its interaction model), which says so, and of a layer-wise one of the same runs too (a
     * configuration's compact graph is another matter: {@code DevicePredictorDomainTest}).
     */
    @Test
    void aFlatGraphLargerThanAnyTrainingGraphIsWarned() {
        ModelGraph large = OnnxImporter.read(graph("vit_b_16_r64"));
        Workload w = Workload.builder(large).batch(1).phase(Phase.INFER).build();
        RuntimePredictor gnn = fit(new GnnInteractions().withSize(4, 1, 5));
        RuntimePredictor layerwise = RuntimePredictor.builder().build().fit(samples);
        assertTrue(large.size() > gnn.domain().maxLayers() && gnn.domain().maxLayers()
                == layerwise.domain().maxLayers(), large.size() + " layers; training " + gnn.domain().maxLayers());
        for (RuntimePredictor p : List.of(gnn, layerwise)) {
            Prediction pr = p.predict(w);
            assertTrue(pr.warnings().stream().anyMatch(x -> x.kind()
                    == org.scaledl.model.PredictionWarning.Kind.GRAPH_SIZE_OUTSIDE_RANGE), pr.warnings().toString());
        }
    }

    @Test
    void tooFewSamples() {
        assertThrows(IllegalArgumentException.class, () -> new GnnBaseline().fit(samples.subList(0, 2)));
    }
}
