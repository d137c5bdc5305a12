package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.TestData;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Device;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

class RuntimePredictorTest {
    private static final String[] GRAPHS = {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64", "tinybert_r64"};
    private static List<Workload> workloads;
    private static double[] truth;

    @BeforeAll
    static void syntheticData() {
        workloads = new ArrayList<>();
        int family = 0;
        for (String name : GRAPHS) {
            ModelGraph g = OnnxImporter.read(TestData.graph(name));
            for (int batch : new int[] {1, 4, 16}) {
                for (Phase phase : Phase.values()) {
                    for (int threads = 1; threads <= 2; threads++) {
                        workloads.add(Workload.builder(g).batch(batch).phase(phase).threads(threads)
                                .tag("family", "f" + family).tag("model", name).build());
                    }
                }
                workloads.add(Workload.builder(g).batch(batch).phase(Phase.TRAIN).worldSize(2)
                        .tag("family", "f" + family).tag("model", name).build());
            }
            family++;
        }
        LayerBasis basis = LayerBasis.standard();
        truth = new double[basis.width()];
        for (OpFamily f : OpFamily.values()) {
            truth[LayerBasis.column(f, 0)] = 0.01;   // 10 µs per dispatch
            truth[LayerBasis.column(f, 1)] = 2e-8;   // 50 GFLOP/s
            truth[LayerBasis.column(f, 4)] = 1e-7;   // 10 GB/s
        }
        truth[LayerBasis.globalColumn(0)] = 5;
        truth[LayerBasis.globalColumn(4)] = 2e-7;
    }

    private static List<Sample> samples() {
        List<Sample> out = new ArrayList<>();
        for (Workload w : workloads) {
            double y = 0;
            double[] x = LayerBasis.standard().row(w);
            for (int j = 0; j < x.length; j++) {
                y += x[j] * truth[j];
            }
            out.add(Sample.of(w, y));
        }
        return out;
    }

    @Test
    void reproducesDataGeneratedByItsOwnModel() {
        List<Sample> s = samples();
        RuntimePredictor p = RuntimePredictor.builder().shrinkage(0).build().fit(s);
        for (Sample x : s) {
            assertEquals(x.millis(), p.predictMillis(x.workload()), 1e-4 * x.millis(), x.workload().toString());
        }
    }

    @Test
    void breakdownAddsUpAndIntervalContainsThePoint() {
        RuntimePredictor p = RuntimePredictor.fit(samples());
        for (Workload w : workloads) {
            Prediction pr = p.predict(w);
            double sum = pr.breakdown().stream().mapToDouble(Prediction.Contribution::millis).sum();
            assertEquals(pr.millis(), sum, 1e-9 * pr.millis());
            assertEquals(p.predictMillis(w), pr.millis(), 1e-9 * pr.millis());
            assertTrue(pr.lowMillis() <= pr.millis() && pr.millis() <= pr.highMillis());
            boolean dp = w.worldSize() > 1 && w.phase() == Phase.TRAIN;
            assertEquals(dp, pr.breakdown().stream().anyMatch(c -> c.kind() == Prediction.Kind.COMMUNICATION), w.toString());
            for (Prediction.Contribution c : pr.breakdown()) {
                if (c.kind() == Prediction.Kind.LAYER) {
                    assertTrue(w.graph().indexOf(c.name()).isPresent(), c.name());
                }
            }
        }
    }

    @Test
    void fittingIsDeterministic() {
        RuntimePredictor a = RuntimePredictor.fit(samples());
        RuntimePredictor b = RuntimePredictor.fit(samples());
        assertArrayEquals(a.coefficients(), b.coefficients());
        assertEquals(a.shrinkage(), b.shrinkage());
    }

    @Test
    void unseenFamilyUsesTheSharedCentreNotZero() {
        List<Sample> train = samples().stream().filter(x -> !x.workload().tag("model").orElseThrow()
                .equals("tinybert_r64")).toList();
        RuntimePredictor p = RuntimePredictor.builder().shrinkage(1).build().fit(train);
        double[] c = p.coefficients();
        // tinybert is the only graph with EMBEDDING layers: their coefficients come from the centre.
        double embedding = 0;
        for (int k = 0; k < LayerBasis.LAYER_TERMS.size(); k++) {
            embedding += c[LayerBasis.column(OpFamily.EMBEDDING, k)];
        }
        assertTrue(embedding > 0);
    }

    @Test
    void tooFewSamplesIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RuntimePredictor.fit(samples().subList(0, 1)));
        assertTrue(e.getMessage().contains("at least 2"));
        assertThrows(IllegalArgumentException.class, () -> RuntimePredictor.fit(List.of()));
    }

    @Test
    void modulePathFollowsPytorchExportScopes() {
        assertEquals("layer1.0.conv1", RuntimePredictor.modulePath("/layer1/layer1.0/conv1/Conv"));
        assertEquals("encoder.layers.encoder_layer_0.ln_1",
                RuntimePredictor.modulePath("/encoder/layers/encoder_layer_0/ln_1/ReduceMean"));
        assertEquals("", RuntimePredictor.modulePath("/Shape"));
    }

    @Test
    void layerTimesEnterTheFitWhenWeighted() {
        List<Sample> plain = samples();
        List<Sample> withLayers = new ArrayList<>();
        for (Sample x : plain) {
            withLayers.add(new Sample(x.workload(), x.millis(), java.util.Map.of("conv1", 1000.0)));
        }
        double[] a = RuntimePredictor.builder().shrinkage(0.01).build().fit(withLayers).coefficients();
        double[] b = RuntimePredictor.builder().shrinkage(0.01).layerTimeWeight(1).build().fit(withLayers)
                .coefficients();
        assertTrue(!java.util.Arrays.equals(a, b), "an absurd conv1 time must move the coefficients");
    }

    @Test
    void aWorkloadOnAnotherDeviceIsRefusedNotSilentlyPredicted(@TempDir Path dir) {
        RuntimePredictor host = RuntimePredictor.fit(samples());
        assertTrue(host.provenance().devices().isEmpty());
        Device t4 = DeviceCatalog.bundled().require("Tesla T4");
        Workload onT4 = workloads.get(0).toBuilder().device(t4).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> host.predict(onT4));
        assertTrue(e.getMessage().contains("Tesla T4") && e.getMessage().contains("LayerCost.device"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> host.predictMillis(onT4));

        List<Sample> onDevice = samples().stream().map(x -> Sample.of(x.workload().toBuilder().device(t4).build(),
                x.millis())).toList();
        RuntimePredictor t4Model = RuntimePredictor.builder().shrinkage(0).build().fit(onDevice);
        assertEquals(List.of("Tesla T4"), t4Model.provenance().devices());
        assertEquals(RuntimePredictor.builder().shrinkage(0).build().fit(samples()).predictMillis(workloads.get(0)),
                t4Model.predictMillis(onT4), 1e-9, "the device is a label here, not a feature");
        assertThrows(IllegalArgumentException.class, () -> t4Model.predict(workloads.get(0)));
        Workload onL4 = workloads.get(0).toBuilder().device(DeviceCatalog.bundled().require("NVIDIA L4")).build();
        e = assertThrows(IllegalArgumentException.class, () -> t4Model.predict(onL4));
        assertTrue(e.getMessage().contains("[Tesla T4]"), e.getMessage());
        t4Model.save(dir.resolve("t4.sdl"));
        RuntimePredictor back = RuntimePredictor.load(dir.resolve("t4.sdl"));
        assertEquals(List.of("Tesla T4"), back.provenance().devices());
        assertEquals(t4Model.predictMillis(onT4), back.predictMillis(onT4), 0.0);
        assertThrows(IllegalArgumentException.class, () -> back.predict(onL4));
    }
}
