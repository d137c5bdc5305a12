package org.scaledl.model;

import org.scaledl.model.device.DeviceLayerModel;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.workload.Device;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/** What a device predictor knows of its GPUs: the interval from runs with their GPU held out, unseen GPUs warned. */
class DevicePredictorDomainTest {
    private static final DeviceCatalog DEVICES = GpuData.catalogFor(TestData.gpu(), DeviceCatalog.bundled());
    private static GpuData data;
    private static List<Sample> runs;
    private static RuntimePredictor predictor;

    @BeforeAll
    static void fit() {
        data = GpuData.read(TestData.gpu(), DEVICES);
        runs = data.samples(r -> r.parallelism().ranks() == 1 && !r.fusion());
        predictor = RuntimePredictor.builder().layerCost(LayerCost.device(data.operators())).build().fit(runs);
    }

    private static boolean warns(Prediction p, PredictionWarning.Kind kind) {
        return p.warnings().stream().anyMatch(w -> w.kind() == kind);
    }

    private static double logWidth(Prediction p) {
        return Math.log(p.highMillis() / p.lowMillis());
    }

    /**
     * A configuration's compact graph (one block of each kind) is not checked by its size: its size is not the
     * model's, and this layer-wise predictor predicts each layer alone. A transformer of 64 layers (a compact graph
     * of about twenty) is predicted without the warning, though {@link Domain#check} of its graph finds the size
     * outside the training graphs'; the same graph laid out flat would be checked.
     */
    @Test
    void aConfigurationsCompactGraphIsNotCheckedBySize() {
        org.scaledl.graph.ModelGraph compact = org.scaledl.transformer.TransformerSpec.decoder("deep", 1024, 16, 64,
                32000).fusedAttention(true).build().graph(1024);
        assertTrue(compact.blocks().isPresent());
        assertTrue(compact.size() < predictor.domain().minLayers() || compact.size() > predictor.domain().maxLayers(),
                compact.size() + " layers; training " + predictor.domain().minLayers() + ".."
                        + predictor.domain().maxLayers());
        Workload w = Workload.builder(compact).batch(1).phase(org.scaledl.workload.Phase.TRAIN)
                .device(DEVICES.require("NVIDIA H100 80GB HBM3")).build();
        Prediction p = predictor.predict(w);
        assertFalse(warns(p, PredictionWarning.Kind.GRAPH_SIZE_OUTSIDE_RANGE), p.warnings().toString());
        assertTrue(predictor.domain().check(w, p).warnings().stream()
                .anyMatch(x -> x.kind() == PredictionWarning.Kind.GRAPH_SIZE_OUTSIDE_RANGE));
    }

    @Test
    void aGpuWithoutTrainingDataIsWarnedAndItsIntervalWidened() {
        Workload onH100 = runs.stream().map(Sample::workload)
                .filter(w -> w.device().orElseThrow().name().equals("NVIDIA H100 80GB HBM3")).findFirst().orElseThrow();
        Device mi100 = DEVICES.require("AMD Instinct MI100");
        assertTrue(data.operators().stream().noneMatch(m -> m.device().equals(mi100))
                && runs.stream().noneMatch(s -> s.workload().device().orElseThrow().equals(mi100)));
        Prediction seen = predictor.predict(onH100);
        Prediction unseen = predictor.predict(onH100.toBuilder().device(mi100).build());
        assertFalse(warns(seen, PredictionWarning.Kind.UNSEEN_DEVICE), seen.warnings().toString());
        assertTrue(warns(unseen, PredictionWarning.Kind.UNSEEN_DEVICE), unseen.warnings().toString());
        assertTrue(unseen.warnings().stream().filter(w -> w.kind() == PredictionWarning.Kind.UNSEEN_DEVICE)
                .allMatch(w -> w.message().contains("AMD Instinct MI100") && w.share() == 1));
        // the workload is inside H100's measured batches and phases, so the device is the only difference
        assertEquals(logWidth(seen) + 2 * RuntimePredictor.WIDEN * Domain.UNSEEN_DEVICE_DISTANCE, logWidth(unseen),
                1e-9);

        // a GPU with kernels but no whole runs is known
        Device a100 = DEVICES.require("NVIDIA A100 80GB PCIe");
        assertTrue(data.operators().stream().anyMatch(m -> m.device().equals(a100)));
        assertFalse(warns(predictor.predict(onH100.toBuilder().device(a100).build()),
                PredictionWarning.Kind.UNSEEN_DEVICE));

        // one measured run of the new GPU makes it known
        Workload w = onH100.toBuilder().device(mi100).build();
        RuntimePredictor calibrated = predictor.calibrate(List.of(Sample.of(w, unseen.millis() * 1.3)));
        assertFalse(warns(calibrated.predict(w), PredictionWarning.Kind.UNSEEN_DEVICE));
    }

    /**
     * A GPU without runs of its own (no data at all, or kernels only) is still checked against the GPU counts any GPU
     * of the training data ran, and its interval widened by the doublings beyond them, as a GPU with runs is.
     */
    @Test
    void aGpuWithoutRunsIsStillCheckedAgainstTheGpuCountsAnyGpuRan() {
        assertTrue(runs.stream().allMatch(s -> s.workload().worldSize() == 1), "single-GPU runs only");
        RuntimePredictor withCollectives = RuntimePredictor.builder()
                .layerCost(LayerCost.device(data.operators()).withCollectives(data.collectives())).build().fit(runs);
        Workload onH100 = runs.stream().map(Sample::workload)
                .filter(w -> w.device().orElseThrow().name().equals("NVIDIA H100 80GB HBM3")).findFirst().orElseThrow();
        Device a100 = DEVICES.require("NVIDIA A100 80GB PCIe");
        assertTrue(data.operators().stream().anyMatch(m -> m.device().equals(a100)), "kernels of it");
        for (Device d : List.of(DEVICES.require("AMD Instinct MI100"), a100)) {
            Workload one = onH100.toBuilder().device(d).build();
            Prediction inside = withCollectives.predict(one);
            Prediction outside = withCollectives.predict(one.toBuilder().worldSize(64).build());
            assertFalse(warns(inside, PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE), inside.warnings().toString());
            List<PredictionWarning> w = outside.warnings().stream()
                    .filter(x -> x.kind() == PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE).toList();
            assertEquals(1, w.size(), outside.warnings().toString());
            assertEquals("1..1", w.get(0).range());
            assertEquals(64.0, w.get(0).value().orElseThrow());
            assertTrue(w.get(0).message().contains(d.name() + " has no runs of its own"), w.get(0).message());
            // six doublings beyond the one GPU any run had, each side
            assertEquals(2 * RuntimePredictor.WIDEN * 6, logWidth(outside) - logWidth(inside), 1e-9, d.name());
        }
    }

    @Test
    void runsOfThreeGpusCrossValidateTheInterval() {
        assertTrue(runs.stream().map(s -> s.workload().device().orElseThrow().name()).distinct().count() >= 3);
        assertTrue(Double.isFinite(predictor.provenance().cvMre()), "cross-validated over GPUs");
        assertTrue(predictor.domain().crossValidated());
        for (Sample s : runs) {
            Prediction p = predictor.predict(s.workload());
            assertFalse(warns(p, PredictionWarning.Kind.NO_CROSS_VALIDATION));
            assertTrue(p.lowMillis() <= p.millis() && p.millis() <= p.highMillis());
        }
        assertTrue(runs.stream().anyMatch(s -> {
            Prediction p = predictor.predict(s.workload());
            return p.lowMillis() < p.millis() && p.millis() < p.highMillis();
        }), "an interval of nonzero width");

        String one = runs.get(0).workload().device().orElseThrow().name();
        List<Sample> oneGpu = runs.stream().filter(s -> s.workload().device().orElseThrow().name().equals(one))
                .toList();
        RuntimePredictor single = RuntimePredictor.builder().layerCost(LayerCost.device(data.operators())).build()
                .fit(oneGpu);
        assertTrue(Double.isNaN(single.provenance().cvMre()));
        assertTrue(warns(single.predict(oneGpu.get(0).workload()), PredictionWarning.Kind.NO_CROSS_VALIDATION));
    }

    @Test
    void heldOutDeviceErrorsAreTheOtherDevicesMedianFactorOverTheDevicesOwn() {
        DeviceLayerModel layers = predictor.deviceLayerModel().orElseThrow();
        // runs measured at exactly factor c_d times their layer sum on each device d
        Map<String, Double> factor = new TreeMap<>(Map.of("NVIDIA H100 80GB HBM3", 1.0, "NVIDIA L4", 2.0,
                "Tesla T4", 4.0));
        List<Sample> synthetic = new ArrayList<>();
        for (Sample s : runs) {
            double c = factor.get(s.workload().device().orElseThrow().name());
            synthetic.add(Sample.of(s.workload(), c * layers.layerSum(s.workload())));
        }
        List<Double> errors = layers.heldOutDeviceLogErrors(synthetic);
        assertEquals(synthetic.size(), errors.size() + countOnOneDevicePhases(synthetic));
        // slow reference: per phase, the median over the other devices' runs of log c, less the device's own log c
        List<Double> expected = new ArrayList<>();
        for (var phase : org.scaledl.workload.Phase.values()) {
            Map<String, List<Double>> byDevice = new TreeMap<>();
            for (Sample s : synthetic) {
                if (s.workload().phase() == phase) {
                    String d = s.workload().device().orElseThrow().name();
                    byDevice.computeIfAbsent(d, k -> new ArrayList<>()).add(Math.log(factor.get(d)));
                }
            }
            if (byDevice.size() < 2) {
                continue;
            }
            byDevice.forEach((d, own) -> {
                double[] others = byDevice.entrySet().stream().filter(e -> !e.getKey().equals(d))
                        .flatMap(e -> e.getValue().stream()).mapToDouble(Double::doubleValue).sorted().toArray();
                double median = others.length % 2 == 1 ? others[others.length / 2]
                        : (others[others.length / 2 - 1] + others[others.length / 2]) / 2;
                own.forEach(x -> expected.add(median - x));
            });
        }
        assertEquals(expected.size(), errors.size());
        for (int i = 0; i < errors.size(); i++) {
            assertEquals(expected.get(i), errors.get(i), 1e-9, "error " + i);
        }
    }

    private static int countOnOneDevicePhases(List<Sample> samples) {
        int n = 0;
        for (var phase : org.scaledl.workload.Phase.values()) {
            List<Sample> in = samples.stream().filter(s -> s.workload().phase() == phase).toList();
            if (in.stream().map(s -> s.workload().device().orElseThrow().name()).distinct().count() == 1) {
                n += in.size();
            }
        }
        return n;
    }

    @Test
    void operatorTypesOfMeasuredFamiliesAreNotWarnedOf() {
        // the training runs are transformers; convolutions were measured as kernels only
        assertFalse(predictor.domain().operators().contains("Conv"));
        assertTrue(predictor.domain().measuredFamilies().contains(org.scaledl.workload.OpFamily.CONV));
        Workload resnet = Workload.builder(org.scaledl.onnx.OnnxImporter.read(TestData.graph("resnet18_r64")))
                .batch(2).device(DEVICES.require("NVIDIA H100 80GB HBM3")).build();
        Prediction p = predictor.predict(resnet);
        List<String> unseen = p.warnings().stream().filter(w -> w.kind() == PredictionWarning.Kind.UNSEEN_OPERATOR
                || w.kind() == PredictionWarning.Kind.UNSEEN_FAMILY).map(PredictionWarning::message).toList();
        assertTrue(unseen.stream().noneMatch(m -> m.contains("Conv")), unseen.toString());
        assertTrue(unseen.stream().anyMatch(m -> m.contains("MaxPool")), "no pooling was measured: " + unseen);
        // pooling's operators are the unseen family's layers: said once, with the family
        assertEquals(1, unseen.stream().filter(m -> m.contains("MaxPool")).count(), unseen.toString());

        Domain back = Domain.fromJson(predictor.domain().toJson());
        assertEquals(predictor.domain(), back);
        com.fasterxml.jackson.databind.node.ObjectNode old = predictor.domain().toJson();
        old.remove("measured_families");
        assertTrue(Domain.fromJson(old).measuredFamilies().isEmpty(), "a file from before still loads");
    }

    @Test
    void kernelMeasurementsAloneMakeAGpuKnown() {
        List<OpMeasurement> ops = data.operators();
        assertTrue(predictor.domain().devices().keySet().containsAll(
                ops.stream().map(m -> m.device().name()).distinct().toList()));
    }
}
