package org.scaledl.model;

import org.scaledl.model.host.LayerBasis;
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
        truth[LayerBasis.standard().globalColumn(0)] = 5;
        truth[LayerBasis.standard().globalColumn(4)] = 2e-7;
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
        assertArrayEquals(host(a).coefficients(), host(b).coefficients());
        assertEquals(host(a).shrinkage(), host(b).shrinkage());
    }

    @Test
    void unseenFamilyUsesTheSharedCentreNotZero() {
        List<Sample> train = samples().stream().filter(x -> !x.workload().tag("model").orElseThrow()
                .equals("tinybert_r64")).toList();
        RuntimePredictor p = RuntimePredictor.builder().shrinkage(1).build().fit(train);
        double[] c = host(p).coefficients();
        // tinybert is the only graph with EMBEDDING layers: their coefficients come from the centre.
        double embedding = 0;
        for (int k = 0; k < LayerBasis.LAYER_TERMS.size(); k++) {
            embedding += c[LayerBasis.column(OpFamily.EMBEDDING, k)];
        }
        assertTrue(embedding > 0);
    }

    /**
     * Misuse fails where it happens, naming the argument: a null at a public entry point, a per-layer time that is not
     * a positive number (one NaN made a fitted predictor answer 0 ms), a batch that is no whole number of its
     * micro-batches (a remainder was timed as a full micro-batch, the throughput counted as given).
     */
    @Test
    void misuseFailsWhereItHappensNamingTheArgument() {
        RuntimePredictor p = RuntimePredictor.fit(samples());
        NullPointerException npe = assertThrows(NullPointerException.class, () -> p.predict(null));
        assertEquals("workload", npe.getMessage());
        assertEquals("workload", assertThrows(NullPointerException.class, () -> p.predictMillis(null)).getMessage());
        assertEquals("runs", assertThrows(NullPointerException.class, () -> p.calibrate(null)).getMessage());
        java.util.List<Sample> withNull = new ArrayList<>(samples());
        withNull.add(null);
        assertEquals("a sample of samples", assertThrows(NullPointerException.class,
                () -> RuntimePredictor.fit(withNull)).getMessage());
        assertEquals("file", assertThrows(NullPointerException.class, () -> p.save(null)).getMessage());
        assertEquals("file", assertThrows(NullPointerException.class,
                () -> RuntimePredictor.load((java.nio.file.Path) null)).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class,
                () -> org.scaledl.io.DeviceCatalog.bundled().require(null)).getMessage());
        Workload w = workloads.get(0);
        for (double bad : new double[] {Double.NaN, 0, -5, Double.POSITIVE_INFINITY}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new Sample(w, 10, java.util.Map.of("conv1", bad)));
            assertTrue(e.getMessage().contains("layer 'conv1'") && e.getMessage().contains(String.valueOf(bad)),
                    e.getMessage());
        }
        assertEquals("layerMillis", assertThrows(NullPointerException.class, () -> new Sample(w, 10, null))
                .getMessage());
        Workload odd = w.toBuilder().batch(10).parallelism(org.scaledl.workload.Parallelism.of(1, 1, 1, 4)).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.predict(odd));
        assertTrue(e.getMessage().contains("batch of 10 is not a whole number of its 4 micro-batches"), e.getMessage());
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
        assertEquals("layer1.0.conv1", org.scaledl.model.host.HostLayerModel.modulePath("/layer1/layer1.0/conv1/Conv"));
        assertEquals("encoder.layers.encoder_layer_0.ln_1",
                org.scaledl.model.host.HostLayerModel.modulePath("/encoder/layers/encoder_layer_0/ln_1/ReduceMean"));
        assertEquals("", org.scaledl.model.host.HostLayerModel.modulePath("/Shape"));
    }

    @Test
    void layerTimesEnterTheFitWhenWeighted() {
        List<Sample> plain = samples();
        List<Sample> withLayers = new ArrayList<>();
        for (Sample x : plain) {
            withLayers.add(new Sample(x.workload(), x.millis(), java.util.Map.of("conv1", 1000.0)));
        }
        double[] a = host(RuntimePredictor.builder().shrinkage(0.01).build().fit(withLayers)).coefficients();
        double[] b = host(RuntimePredictor.builder().shrinkage(0.01).layerTimeWeight(1).build().fit(withLayers))
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

        Device a = Device.cpu("machine A", 2, 512, 4, 0, 0);
        List<Sample> onA = samples().stream().map(x -> Sample.of(x.workload().toBuilder().device(a).build(),
                x.millis())).toList();
        RuntimePredictor aModel = RuntimePredictor.builder().shrinkage(0).build().fit(onA);
        assertEquals(List.of("machine A"), aModel.provenance().devices());
        assertEquals(List.of("machine A"), aModel.machines());
        Workload onAw = workloads.get(0).toBuilder().device(a).build();
        assertEquals(RuntimePredictor.builder().shrinkage(0).build().fit(samples()).predictMillis(workloads.get(0)),
                aModel.predictMillis(onAw), 1e-9, "the machine is a name here, not a feature");
        assertEquals(aModel.predictMillis(onAw), aModel.predictMillis(workloads.get(0)), 0.0,
                "a workload without a device runs on the only machine");
        Workload onB = workloads.get(0).toBuilder().device(Device.cpu("machine B", 2, 256, 1, 0, 0)).build();
        e = assertThrows(IllegalArgumentException.class, () -> aModel.predict(onB));
        assertTrue(e.getMessage().contains("[machine A]") && e.getMessage().contains("calibrate"), e.getMessage());
        aModel.save(dir.resolve("a.sdl"));
        RuntimePredictor back = RuntimePredictor.load(dir.resolve("a.sdl"));
        assertEquals(List.of("machine A"), back.provenance().devices());
        assertEquals(aModel.predictMillis(onAw), back.predictMillis(onAw), 0.0);
        assertThrows(IllegalArgumentException.class, () -> back.predict(onB));
        assertThrows(IllegalArgumentException.class, () -> RuntimePredictor.fit(samples().stream()
                .map(x -> Sample.of(x.workload().toBuilder().device(t4).build(), x.millis())).toList()),
                "GPU samples need a device predictor");
    }

    /** Two machines are kept apart; a third, known from a few runs, is predicted by a calibration of the better one. */
    @Test
    void machinesAreKeptApartAndANewOneIsLearntFromAFewRuns() {
        Device a = Device.cpu("machine A", 2, 512, 4, 0, 0);
        Device b = Device.cpu("machine B", 2, 256, 1, 0, 0);
        List<Sample> both = new ArrayList<>();
        for (Sample x : samples()) {
            both.add(Sample.of(x.workload().toBuilder().device(a).build(), x.millis()));
            both.add(Sample.of(x.workload().toBuilder().device(b).build(), 3 * x.millis()));
        }
        RuntimePredictor p = RuntimePredictor.builder().shrinkage(0).build().fit(both);
        assertEquals(List.of("machine A", "machine B"), p.machines());
        Workload w = workloads.get(3);
        double onA = p.predictMillis(w.toBuilder().device(a).build());
        double onB = p.predictMillis(w.toBuilder().device(b).build());
        assertEquals(3, onB / onA, 1e-3, "each machine has its own basis");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.predict(w));
        assertTrue(e.getMessage().contains("several machines"), e.getMessage());

        Device c = Device.cpu("machine C", 2, 256, 1, 0, 0);
        List<Sample> few = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Sample x = samples().get(i * 7 % samples().size());
            few.add(Sample.of(x.workload().toBuilder().device(c).build(), 2.9 * x.millis()));
        }
        RuntimePredictor q = p.calibrate(few);
        assertEquals(List.of("machine A", "machine B", "machine C"), q.machines());
        double onC = q.predictMillis(w.toBuilder().device(c).build());
        assertEquals(2.9, onC / onA, 0.3, "C is B (the closer machine) scaled by its runs, damped: " + onC / onA);
        assertEquals(onB, q.predictMillis(w.toBuilder().device(b).build()), 0.0, "B is untouched");
        RuntimePredictor back = RuntimePredictor.load(q.toBytes());
        assertEquals(onC, back.predictMillis(w.toBuilder().device(c).build()), 0.0);

        // a machine D that scales worse across threads than B: its calibration learns the setting factor
        Device d = Device.cpu("machine D", 2, 256, 1, 0, 0);
        List<Sample> scaling = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Sample x = samples().get(i * 7 % samples().size());
            double slower = x.workload().threads() > 1 ? 1.6 : 1.0;
            scaling.add(Sample.of(x.workload().toBuilder().device(d).build(), 3 * slower * x.millis()));
        }
        assertTrue(scaling.stream().anyMatch(x -> x.workload().threads() > 1)
                && scaling.stream().anyMatch(x -> x.workload().threads() == 1), "runs at both thread counts");
        RuntimePredictor r = p.calibrate(scaling);
        Workload one = w.toBuilder().threads(1).worldSize(1).build();
        Workload two = w.toBuilder().threads(2).worldSize(1).build();
        double ratioB = r.predictMillis(two.toBuilder().device(b).build())
                / r.predictMillis(one.toBuilder().device(b).build());
        double ratioD = r.predictMillis(two.toBuilder().device(d).build())
                / r.predictMillis(one.toBuilder().device(d).build());
        assertTrue(ratioD / ratioB > 1.3 && ratioD / ratioB < 1.65, "two threads slower on D: " + ratioD / ratioB);
        assertEquals(ratioD, RuntimePredictor.load(r.toBytes()).predictMillis(two.toBuilder().device(d).build())
                / r.predictMillis(one.toBuilder().device(d).build()), 1e-12, "setting factors are saved");
    }

    /**
     * A workload without a machine goes to the one machine a host predictor knows: fitted only, or fitted and
     * calibrated again (one machine, not two); where an unnamed machine (a dataset without machine.json) sits beside a
     * named one, or machines of two names, it is refused, not given to either.
     */
    @Test
    void aWorkloadWithoutAMachineGoesToTheOneItKnows() {
        org.scaledl.model.host.HostLayerModel basis = host(RuntimePredictor.fit(samples()));
        org.scaledl.model.host.HostStage.Calibration cal = new org.scaledl.model.host.HostStage.Calibration("A", 1.1,
                new double[0], new double[0], 3);
        Workload w = workloads.get(0);
        java.util.function.BiFunction<java.util.Map<String, org.scaledl.model.host.HostLayerModel>,
                java.util.Map<String, org.scaledl.model.host.HostStage.Calibration>, org.scaledl.model.host.HostStage>
                stage = org.scaledl.model.host.HostStage::new;
        assertEquals("A", stage.apply(java.util.Map.of("A", basis), java.util.Map.of()).machineOf(w));
        assertEquals("A", stage.apply(java.util.Map.of("A", basis), java.util.Map.of("A", cal)).machineOf(w));
        assertEquals(List.of("A"), stage.apply(java.util.Map.of("A", basis), java.util.Map.of("A", cal)).devices());
        assertEquals("", stage.apply(java.util.Map.of("", basis), java.util.Map.of()).machineOf(w));
        for (org.scaledl.model.host.HostStage ambiguous : List.of(
                stage.apply(java.util.Map.of("A", basis, "", basis), java.util.Map.of()),
                stage.apply(java.util.Map.of("", basis), java.util.Map.of("B", cal)),
                stage.apply(java.util.Map.of("A", basis), java.util.Map.of("B", cal)))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ambiguous.machineOf(w));
            assertTrue(e.getMessage().contains("several machines"), e.getMessage());
        }
    }

    /** The host basis of a one-machine host predictor. */
    static org.scaledl.model.host.HostLayerModel host(RuntimePredictor p) {
        return ((org.scaledl.model.host.HostStage) p.stage()).machines().values().iterator().next();
    }
}
