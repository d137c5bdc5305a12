package org.scaledl.gnn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.scaledl.data.Phase;
import org.scaledl.data.Sample;
import org.scaledl.data.Workload;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimeModel;
import org.scaledl.onnx.OnnxImporter;

class GnnTrainerTest {
    private static final String[] GRAPHS = {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64", "alexnet_r224",
        "vgg11_r224"};
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
                    double flops = org.scaledl.model.LayerBasis.standard().row(w)[
                            org.scaledl.model.LayerBasis.column(org.scaledl.features.OpFamily.CONV, 2)];
                    samples.add(Sample.of(w, factor * (5 + flops * 1e-8)));
                }
            }
            family++;
        }
    }

    @Test
    void fittingIsDeterministicAndPredictionsAreConsistent() {
        GnnTrainer t = GnnTrainer.interactions().withSize(8, 2, 30);
        RuntimeModel a = t.fit(samples);
        RuntimeModel b = t.fit(samples);
        for (Sample s : samples) {
            Prediction pa = a.predict(s.workload());
            assertEquals(pa.millis(), b.predict(s.workload()).millis());
            assertTrue(pa.millis() > 0 && Double.isFinite(pa.millis()));
            assertTrue(pa.lowMillis() <= pa.millis() && pa.millis() <= pa.highMillis());
            double sum = pa.breakdown().stream().mapToDouble(Prediction.Contribution::millis).sum();
            assertEquals(pa.millis(), sum, 1e-9 * pa.millis());
        }
        assertEquals("scaledl", t.name());
        assertEquals("gnn-only", GnnTrainer.graphOnly().name());
    }

    @Test
    void attentionVariantIsDeterministicAndNamed() {
        GnnTrainer t = GnnTrainer.interactions().withAttention(true).withSize(8, 2, 20);
        RuntimeModel a = t.fit(samples);
        RuntimeModel b = t.fit(samples);
        for (Sample s : samples) {
            assertEquals(a.predict(s.workload()).millis(), b.predict(s.workload()).millis());
        }
        assertEquals("scaledl-attention", t.name());
        assertEquals("gnn-only-attention", GnnTrainer.graphOnly().withAttention(true).name());
        double shrink = ((GnnModel) a).shrink();
        assertTrue(shrink >= 0 && shrink <= 1, "shrink " + shrink);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void graphOnlyLearnsTheTrainingData(boolean attention) {
        RuntimeModel m = GnnTrainer.graphOnly().withAttention(attention).withSize(16, 2, 200).fit(samples);
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
    void saveAndLoadGiveBitIdenticalPredictions(boolean attention, @TempDir Path dir) throws Exception {
        GnnModel m = GnnTrainer.interactions().withAttention(attention).withSize(8, 2, 20).fit(samples);
        Path file = dir.resolve("gnn.sdl");
        m.save(file);
        GnnModel back = GnnModel.load(file);
        assertEquals(m.name(), back.name());
        assertEquals(m.shrink(), back.shrink());
        for (Sample s : samples) {
            Prediction a = m.predict(s.workload());
            Prediction b = back.predict(s.workload());
            assertEquals(a.millis(), b.millis(), 0.0);
            assertEquals(a.lowMillis(), b.lowMillis(), 0.0);
            assertEquals(a.highMillis(), b.highMillis(), 0.0);
        }
        GnnModel only = GnnTrainer.graphOnly().withSize(8, 1, 10).fit(samples);
        only.save(file);
        for (Sample s : samples.subList(0, 5)) {
            assertEquals(only.predict(s.workload()).millis(), GnnModel.load(file).predict(s.workload()).millis(), 0.0);
        }
    }

    @Test
    void damagedOrForeignFilesAreRejected(@TempDir Path dir) throws Exception {
        GnnModel m = GnnTrainer.interactions().withSize(4, 1, 5).fit(samples);
        Path file = dir.resolve("gnn.sdl");
        m.save(file);
        String text = Files.readString(file);
        Path tampered = dir.resolve("tampered.sdl");
        Files.writeString(tampered, text.replaceFirst("\"shrink\" : [0-9.E-]+", "\"shrink\" : 0.123"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> GnnModel.load(tampered));
        assertTrue(e.getMessage().contains("tampered.sdl") && e.getMessage().contains("checksum"), e.getMessage());
        Path truncated = dir.resolve("truncated.sdl");
        Files.writeString(truncated, text.substring(0, text.length() / 2));
        assertThrows(InvalidInputException.class, () -> GnnModel.load(truncated));
        Path layerwise = dir.resolve("layerwise.sdl");
        org.scaledl.model.RuntimePredictor.fit(samples).save(layerwise);
        e = assertThrows(InvalidInputException.class, () -> GnnModel.load(layerwise));
        assertTrue(e.getMessage().contains("scaledl-model"), e.getMessage());
    }

    @Test
    void tooFewSamples() {
        assertThrows(IllegalArgumentException.class, () -> GnnTrainer.graphOnly().fit(samples.subList(0, 2)));
    }
}
