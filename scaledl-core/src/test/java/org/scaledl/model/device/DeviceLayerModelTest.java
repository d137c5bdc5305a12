package org.scaledl.model.device;

import org.scaledl.model.ModelFile;
import org.scaledl.model.RuntimePredictor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.FxTrace;
import org.scaledl.io.FxTraceReader;
import org.scaledl.io.KernelTables;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.TensorCoreAlignment;
import org.scaledl.workload.Workload;

class DeviceLayerModelTest {
    private static final DeviceCatalog DEVICES = DeviceCatalog.bundled();
    private static List<OpMeasurement> rows;

    @BeforeAll
    static void read() {
        rows = KernelTables.neusight(TestData.gpu().resolve("neusight/kernels"), DEVICES);
    }

    private static List<OpMeasurement> on(String gpu, boolean keep) {
        List<OpMeasurement> out = new ArrayList<>();
        for (OpMeasurement m : rows) {
            if (m.device().name().equals(gpu) == keep) {
                out.add(m);
            }
        }
        return out;
    }

    /** Mean relative error of the model on rows, and of the best single-efficiency roofline for comparison. */
    private static double mre(DeviceLayerModel m, List<OpMeasurement> test) {
        double s = 0;
        for (OpMeasurement r : test) {
            s += Math.abs(m.predictMillis(r.features(), r.device(), r.backward()) - r.millis()) / r.millis();
        }
        return s / test.size();
    }

    @Test
    void predictsAnUnseenGpuFromItsDescription() {
        String held = "Tesla T4";
        DeviceLayerModel m = DeviceLayerModel.fit(on(held, false));
        List<OpMeasurement> test = on(held, true);
        double model = mre(m, test);
        // Baseline: max(FLOPs/peak, bytes/bandwidth) times one efficiency, the median measured/roofline ratio of
        // the training GPUs' rows.
        List<Double> ratios = new ArrayList<>();
        for (OpMeasurement r : on(held, false)) {
            ratios.add(r.millis() / roofMillis(r));
        }
        ratios.sort(Double::compare);
        double eff = ratios.get(ratios.size() / 2);
        double roof = 0;
        for (OpMeasurement r : test) {
            roof += Math.abs(eff * roofMillis(r) - r.millis()) / r.millis();
        }
        roof /= test.size();
        assertTrue(model < 0.30, "held-out T4 MRE " + model);
        assertTrue(model < 0.85 * roof, "model " + model + " vs roofline with the training GPUs' efficiency " + roof);
    }

    /** GPT-2 large (36 blocks) from its inference trace on the L4, batch 4. */
    private static FxTrace gpt2Large() {
        return FxTraceReader.read(TestData.gpu().resolve("neusight/models/nodes/NVIDIA_L4/gpt2_large-inf-1024-4.csv"),
                36);
    }

    private static double roofMillis(OpMeasurement r) {
        return DeviceLayerModel.rooflineMillis(r.features(), r.device(), r.backward());
    }

    @Test
    void fitIsDeterministic() {
        DeviceLayerModel a = DeviceLayerModel.fit(rows);
        DeviceLayerModel b = DeviceLayerModel.fit(new ArrayList<>(rows));
        for (OpMeasurement r : rows.subList(0, 50)) {
            assertEquals(a.predictMillis(r.features(), r.device(), false), b.predictMillis(r.features(), r.device(),
                    false), 0.0);
        }
    }

    @Test
    void wholeModelIsCalibratedLayerSum() {
        DeviceLayerModel m = DeviceLayerModel.fit(rows);
        FxTrace t = gpt2Large();
        Device l4 = DEVICES.require("NVIDIA L4");
        Workload w = Workload.builder(t.graph()).batch(4).phase(Phase.INFER).device(l4).build();
        double sum = m.layerSum(w);
        assertEquals(sum, m.predictMillis(w), 1e-9 * sum, "factor 1 before calibration");
        DeviceLayerModel c = m.calibrate(List.of(Sample.of(w, 2 * sum)));
        assertEquals(2 * sum, c.predictMillis(w), 1e-6 * sum);
        assertEquals(1.0, c.factor(Phase.TRAIN), 0.0, "no training samples: training factor unchanged");
        Workload at8 = w.toBuilder().batch(8).build();
        assertTrue(c.predictMillis(at8) > 1.5 * c.predictMillis(w), "twice the batch costs more");
        Workload cpu = Workload.builder(t.graph()).batch(4).build();
        assertThrows(IllegalArgumentException.class, () -> m.predictMillis(cpu));
        // a whole model's run a thousand times off its layers' time (a unit typed wrong) is no calibration: refused,
        // naming the run, both ways (one such run moved the shared factor for every GPU)
        for (double off : new double[] {1000, 1e-3}) {
            Workload tagged = w.toBuilder().tag("source", "e2e.csv:7").build();
            org.scaledl.InvalidInputException e = assertThrows(org.scaledl.InvalidInputException.class,
                    () -> m.calibrate(List.of(Sample.of(tagged, off * sum))));
            assertTrue(e.getMessage().startsWith("e2e.csv:7: measured") && e.getMessage().contains("times "
                    + (off > 1 ? "slower" : "faster") + " than its layers' predicted time"), e.getMessage());
        }
    }

    @Test
    void saveLoadRoundTripIsBitIdentical(@TempDir Path dir) throws IOException {
        List<OpMeasurement> all = new ArrayList<>(rows);
        all.addAll(KernelTables.deepbench(TestData.gpu().resolve("deepbench"), DEVICES));
        assertTrue(all.stream().anyMatch(OpMeasurement::backward), "the round trip covers backward regressors");
        FxTrace t = gpt2Large();
        Workload w = Workload.builder(t.graph()).batch(4).phase(Phase.INFER).device(DEVICES.require("NVIDIA L4"))
                .build();
        DeviceLayerModel m = DeviceLayerModel.fit(all);
        m = m.calibrate(List.of(Sample.of(w, 1.7 * m.layerSum(w))));
        Path file = dir.resolve("gpu.sdl");
        org.scaledl.model.file.Envelope.write("scaledl-device-model", 1, m.body(), file);
        DeviceLayerModel back = RuntimePredictor.load(file).deviceLayerModel().orElseThrow();
        for (OpMeasurement r : all) {
            assertEquals(m.predictMillis(r.features(), r.device(), r.backward()),
                    back.predictMillis(r.features(), r.device(), r.backward()), 0.0);
        }
        assertEquals(m.predictMillis(w), back.predictMillis(w), 0.0);
        assertEquals(m.factor(Phase.INFER), back.factor(Phase.INFER), 0.0);
        assertEquals(m.devices(), back.devices());
        assertTrue(m.devices().contains("NVIDIA L4"), m.devices().toString());

        String text = Files.readString(file, StandardCharsets.UTF_8);
        Path edited = dir.resolve("edited.sdl");
        String changed = text.replaceFirst("(\"infer_factor\"\\s*:\\s*)", "$12");
        assertTrue(!changed.equals(text));
        Files.writeString(edited, changed, StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(edited));
        assertTrue(e.getMessage().contains("edited.sdl"), e.getMessage());
        Path truncated = dir.resolve("truncated.sdl");
        Files.writeString(truncated, text.substring(0, text.length() / 2), StandardCharsets.UTF_8);
        assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(truncated));
        Path foreign = dir.resolve("foreign.sdl");
        org.scaledl.model.file.Envelope.write("someone-elses-model", 1, new ObjectMapper().createObjectNode(), foreign);
        e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(foreign));
        assertTrue(e.getMessage().contains("someone-elses-model"), e.getMessage());
    }

    @Test
    void adaptingToAFewProfiledKernelsCorrectsThatDeviceOnly(@TempDir Path dir) {
        String gpu = "Tesla T4";
        DeviceLayerModel m = DeviceLayerModel.fit(on(gpu, false));
        List<OpMeasurement> t4 = on(gpu, true);
        // Pretend the T4 runs 1.5x slower than the model thinks on every profiled element-wise kernel.
        List<OpMeasurement> profiled = new ArrayList<>();
        for (OpMeasurement r : t4) {
            if (r.op().equals("elem") && profiled.size() < 8) {
                profiled.add(new OpMeasurement(r.features(), r.device(), false,
                        1.5 * m.predictMillis(r.features(), r.device(), false), r.op(), r.shapeKey(), r.origin()));
            }
        }
        DeviceLayerModel a = m.adapt(profiled);
        double expected = Math.exp(8.0 / 10 * Math.log(1.5));
        assertEquals(expected, a.corrections().get(gpu).layers().get(new DeviceLayerModel.FamilyPass(
                OpFamily.ELEMENTWISE, false, Optional.of(Precision.FP32))), 1e-12);
        for (OpMeasurement r : t4) {
            double before = m.predictMillis(r.features(), r.device(), r.backward());
            double after = a.predictMillis(r.features(), r.device(), r.backward());
            boolean elementwise = r.features().family() == OpFamily.ELEMENTWISE;
            assertEquals(elementwise ? expected * before : before, after, 1e-9 * before, r.shapeKey());
            if (elementwise) {
                assertEquals(expected * m.predictMillis(r.features(), r.device(), true),
                        a.predictMillis(r.features(), r.device(), true), 1e-9 * after,
                        "backward falls back to the forward correction");
            }
        }
        OpMeasurement other = on(gpu, false).get(0);
        assertEquals(m.predictMillis(other.features(), other.device(), false),
                a.predictMillis(other.features(), other.device(), false), 0.0, "other devices are untouched");

        DeviceLayerModel back = DeviceLayerModel.read(a.body());
        assertEquals(a.corrections(), back.corrections());
        for (OpMeasurement r : t4) {
            assertEquals(a.predictMillis(r.features(), r.device(), false),
                    back.predictMillis(r.features(), r.device(), false), 0.0);
        }
    }

    /**
     * Kernels profiled in two precisions that the trees mispredict differently (BF16 twice as slow as predicted, FP32
     * as predicted) get a correction each: BF16 predictions double, FP32 ones stay, and FP16, not profiled, keeps the
     * device-agnostic prediction. One pooled correction would have slowed FP32 by the pooled median. A file written
     * before corrections were kept per precision (its key without one) still corrects every precision.
     */
    @Test
    void profiledPrecisionsAreCorrectedApart() {
        String gpu = "Tesla T4";
        DeviceLayerModel m = DeviceLayerModel.fit(on(gpu, false));
        List<OpMeasurement> t4 = on(gpu, true).stream().filter(r -> r.features().family() == OpFamily.DENSE
                && !r.backward()).limit(12).toList();
        assertEquals(12, t4.size());
        List<OpMeasurement> profiled = new ArrayList<>();
        for (OpMeasurement r : t4) {
            profiled.add(new OpMeasurement(r.features(), r.device(), false, 2 * m.predictMillis(r.features(),
                    r.device(), Precision.BF16, false), r.op(), r.shapeKey(), r.origin(), Precision.BF16));
            profiled.add(new OpMeasurement(r.features(), r.device(), false, m.predictMillis(r.features(), r.device(),
                    Precision.FP32, false), r.op(), r.shapeKey(), r.origin(), Precision.FP32));
        }
        DeviceLayerModel a = m.adapt(profiled);
        double doubled = Math.exp(12.0 / 14 * Math.log(2));
        for (OpMeasurement r : t4) {
            LayerFeatures f = r.features();
            Device d = r.device();
            assertEquals(doubled * m.predictMillis(f, d, Precision.BF16, false), a.predictMillis(f, d, Precision.BF16,
                    false), 1e-9, r.shapeKey());
            assertEquals(m.predictMillis(f, d, Precision.FP32, false), a.predictMillis(f, d, Precision.FP32, false),
                    1e-9, r.shapeKey());
            assertEquals(m.predictMillis(f, d, Precision.FP16, false), a.predictMillis(f, d, Precision.FP16, false),
                    0.0, r.shapeKey());
        }
        DeviceLayerModel back = DeviceLayerModel.read(a.body());
        assertEquals(a.corrections(), back.corrections());

        // an older file: DENSE/fwd without a precision corrects every precision
        com.fasterxml.jackson.databind.node.ObjectNode old = a.body().deepCopy();
        com.fasterxml.jackson.databind.node.ObjectNode corr = old.putObject("corrections").putObject(gpu);
        corr.put("DENSE/fwd", 1.5);
        DeviceLayerModel legacy = DeviceLayerModel.read(old);
        LayerFeatures f = t4.get(0).features();
        Device d = t4.get(0).device();
        for (Precision p : List.of(Precision.FP32, Precision.FP16, Precision.BF16)) {
            assertEquals(1.5 * m.predictMillis(f, d, p, false), legacy.predictMillis(f, d, p, false), 1e-9, p.label());
        }
        corr.put("DENSE/fwd/fp99", 1.5);
        assertThrows(InvalidInputException.class, () -> DeviceLayerModel.read(old));

        // every precision's key reads back as that precision, and writes as it was read
        com.fasterxml.jackson.databind.node.ObjectNode all = a.body().deepCopy();
        com.fasterxml.jackson.databind.node.ObjectNode keys = all.putObject("corrections").putObject(gpu);
        for (Precision p : Precision.values()) {
            keys.put("DENSE/bwd/" + p.label(), 1.25);
        }
        DeviceLayerModel read = DeviceLayerModel.read(all);
        for (Precision p : Precision.values()) {
            assertEquals(1.25, read.corrections().get(gpu).layers().get(new DeviceLayerModel.FamilyPass(
                    OpFamily.DENSE, true, Optional.of(p))), 0.0, p.label());
        }
        assertEquals(read.corrections(), DeviceLayerModel.read(read.body()).corrections());
    }

    /**
     * Kernels timed alone carry their launch: measured as 1.3 × the prediction plus an offset (half the median
     * kernel's prediction), the correction is the scale,
     * 1.3 (damped by n/(n+2)), not the median ratio, which the offset inflates on small kernels. The same with more
     * kernels than the slope takes pairs of (600: evenly spaced ones stand in for them).
     */
    @Test
    void theCorrectionIsTheScaleBesideALaunchOffset() {
        String gpu = "Tesla T4";
        DeviceLayerModel m = DeviceLayerModel.fit(on(gpu, false));
        List<OpMeasurement> dense = on(gpu, true).stream().filter(r -> r.features().family() == OpFamily.DENSE
                && !r.backward()).toList();
        assertTrue(dense.size() >= 100, "T4 dense kernels: " + dense.size());
        for (int n : new int[] {12, 600}) {
            // 600: the kernels repeated (a repeated shape's pairs have no slope and are skipped)
            List<OpMeasurement> chosen = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                chosen.add(dense.get(i % dense.size()));
            }
            List<OpMeasurement> profiled = new ArrayList<>();
            double[] predictions = chosen.stream().mapToDouble(r -> m.predictMillis(r.features(), r.device(), false))
                    .sorted().toArray();
            double launch = 0.5 * predictions[n / 2];
            double ratioSum = 0;
            for (OpMeasurement r : chosen) {
                double predicted = m.predictMillis(r.features(), r.device(), false);
                profiled.add(new OpMeasurement(r.features(), r.device(), false, 1.3 * predicted + launch, r.op(),
                        r.shapeKey(), r.origin()));
                ratioSum += (1.3 * predicted + launch) / predicted;
            }
            double k = m.adapt(profiled).corrections().get(gpu).layers().get(new DeviceLayerModel.FamilyPass(
                    OpFamily.DENSE, false, Optional.of(Precision.FP32)));
            assertEquals(Math.exp(n / (n + 2.0) * Math.log(1.3)), k, 1e-9, n + " kernels");
            assertTrue(ratioSum / n > 1.3 * 1.01, "the offset inflates the mean ratio: " + ratioSum / n);
        }
    }

    /** A language-model head of {@code tokens × k → n} (one weight: groups 0) or a batched product of as many rows. */
    private static LayerFeatures product(long tokens, long k, long n, long groups) {
        double flops = 2.0 * tokens * k * n;
        double read = 4.0 * (tokens * k + k * n);
        double written = 4.0 * tokens * n;
        return new LayerFeatures(0, OpFamily.DENSE, flops, 2 * flops, read, written, 2 * (read + written),
                groups > 1 ? 0 : k * n, (double) tokens * n, 0, 0, groups, k, n);
    }

    /**
     * A compute-bound product whose rows the H200's tensor memory accelerator cannot copy takes the measured factor
     * longer than on the same H200 described without its architecture (GPT-2's 50,257 words in BF16: 5.8×; BERT's
     * 30,522 in FP16: 2.65×), forward and backward; an aligned product, one in FP32 (no matrix units) and a batched
     * one (an attention core's, run fused) cost the same on both descriptions.
     */
    @Test
    void misalignedProductsPayTheMeasuredFactorOnlyWhereItWasMeasured() {
        DeviceLayerModel m = DeviceLayerModel.fit(rows);
        Device h200 = DEVICES.require("NVIDIA H200");
        Device unnamed = new Device(h200.name(), h200.memoryGB(), h200.memoryBandwidthGBps(), h200.computeUnits(),
                h200.clockMHz(), h200.peakMatrixGflops(), h200.peakVectorGflops(), h200.l2MB(), h200.linkGBps(),
                h200.kind(), h200.simdBits(), h200.matrixPeaks(), h200.formFactor(), h200.pcieGBps(),
                h200.platform(), h200.sfuPerClock(), h200.boardPowerW(), "");
        java.util.function.BiFunction<LayerFeatures, Precision, double[]> ratios = (f, p) -> new double[] {
            m.predictMillis(f, h200, p, false) / m.predictMillis(f, unnamed, p, false),
            m.predictMillis(f, h200, p, true) / m.predictMillis(f, unnamed, p, true)};
        for (double r : ratios.apply(product(8192, 1024, 50257, 0), Precision.BF16)) {
            assertEquals(TensorCoreAlignment.ELEMENT_ALIGNED_SLOWDOWN, r, 0.03 * r);
        }
        for (double r : ratios.apply(product(8192, 1024, 30522, 0), Precision.FP16)) {
            assertEquals(TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN, r, 0.03 * r);
        }
        for (LayerFeatures f : List.of(product(8192, 1024, 50264, 0), product(8192, 1024, 50257, 16))) {
            for (double r : ratios.apply(f, Precision.BF16)) {
                assertEquals(1, r, 1e-12);
            }
        }
        for (double r : ratios.apply(product(8192, 1024, 50257, 0), Precision.FP32)) {
            assertEquals(1, r, 1e-12);
        }
    }

    /**
     * A run whose layers have no finite predicted time on its device (a CPU machine given to a device model) is
     * refused naming the run, never turned into a NaN factor that the saved model cannot be read back with.
     */
    @Test
    void calibrationRefusesRunsItCannotPredict() {
        DeviceLayerModel m = DeviceLayerModel.fit(on("Tesla T4", false));
        Workload onCpu = Workload.builder(org.scaledl.onnx.OnnxImporter.read(TestData.graph("resnet18_r64")))
                .batch(2).phase(Phase.TRAIN)
                .device(Device.cpu("my-cpu-box", 8, 0, 0, 0, 0)).tag("source", "runs.csv:7").build();
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> m.calibrate(List.of(Sample.of(onCpu, 10))));
        assertTrue(e.getMessage().contains("runs.csv:7") && e.getMessage().contains("my-cpu-box"), e.getMessage());
    }

    @Test
    void calibrationGivesMeasuredDevicesTheirOwnFactor() {
        DeviceLayerModel m = DeviceLayerModel.fit(rows);
        FxTrace t = gpt2Large();
        Device l4 = DEVICES.require("NVIDIA L4");
        Device t4 = DEVICES.require("Tesla T4");
        Device h100 = DEVICES.require("NVIDIA H100 80GB HBM3");
        Workload onL4 = Workload.builder(t.graph()).batch(4).phase(Phase.INFER).device(l4).build();
        Workload onT4 = onL4.toBuilder().device(t4).build();
        // L4 runs 3x the layer sum, T4 1x: the shared factor is their median, and each device gets its own on top.
        DeviceLayerModel c = m.calibrate(List.of(Sample.of(onL4, 3 * m.layerSum(onL4)),
                Sample.of(onT4, m.layerSum(onT4))));
        double shared = c.factor(Phase.INFER);
        double damp = 1.0 / 3; // one sample: n / (n + 2)
        assertEquals(shared * Math.exp(damp * Math.log(3 / shared)), c.factor(Phase.INFER, l4), 1e-9);
        assertEquals(shared * Math.exp(damp * Math.log(1 / shared)), c.factor(Phase.INFER, t4), 1e-9);
        assertEquals(shared, c.factor(Phase.INFER, h100), 0.0, "an unmeasured device gets the shared factor");
        assertEquals(c.factor(Phase.TRAIN) / c.factor(Phase.INFER) * c.factor(Phase.INFER, l4),
                c.factor(Phase.TRAIN, l4), 1e-12, "no training runs on the L4: its inference factor carries over");
        assertEquals(c.layerSum(onL4) * c.factor(Phase.INFER, l4), c.predictMillis(onL4), 1e-9);
    }

    /**
     * Whatever the trees say, no layer beats the hardware (its FLOPs at the peak, its bytes beyond L2 at the
     * bandwidth), and a vector kernel on half-precision tensors is never slower than on FP32 ones: it moves half the
     * bytes at the same efficiency.
     */
    @Test
    void noLayerBeatsTheHardwareAndHalfPrecisionVectorKernelsAreNotSlower() {
        DeviceLayerModel m = DeviceLayerModel.fit(rows);
        org.scaledl.graph.ModelGraph g = org.scaledl.onnx.OnnxImporter.read(TestData.graph("resnet50_r112"));
        for (String gpu : List.of("NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB", "Tesla T4",
                "NVIDIA H100 80GB HBM3")) {
            Device d = DEVICES.require(gpu);
            for (int batch : new int[] {1, 64}) {
                for (org.scaledl.workload.LayerFeatures f : org.scaledl.features.FeatureExtractor.of(g)
                        .extract(batch, Phase.TRAIN)) {
                    for (boolean bwd : new boolean[] {false, true}) {
                        for (org.scaledl.workload.Precision p : org.scaledl.workload.Precision.values()) {
                            double t = m.predictMillis(f, d, p, bwd);
                            assertTrue(t == 0 || t >= 1e3 * DeviceLayerModel.hardwareFloorSeconds(f, d, p, bwd)
                                    * (1 - 1e-12), f + " on " + gpu + " " + p);
                        }
                        if (f.family() != OpFamily.DENSE && f.family() != OpFamily.CONV) {
                            double fp32 = m.predictMillis(f, d, org.scaledl.workload.Precision.FP32, bwd);
                            double fp16 = m.predictMillis(f, d, org.scaledl.workload.Precision.FP16, bwd);
                            assertTrue(fp16 <= fp32 * (1 + 1e-12), f + " on " + gpu + ": " + fp16 + " > " + fp32);
                        }
                    }
                }
            }
        }
    }

    /**
     * Past the roofline's saturation the bound side alone describes a kernel: a large FP16 GEMM (compute time far
     * above its memory time on both parts) takes the same time on the A100 40 GB and 80 GB descriptions, which differ
     * only in memory and its bandwidth, while an element-wise kernel (memory-bound, not saturated) is faster on the
     * 80 GB part; a model file without the saturation (written before it) reads none and keeps its features.
     */
    @Test
    void computeBoundKernelsIgnoreTheMemoryBandwidth() throws Exception {
        DeviceLayerModel m = DeviceLayerModel.fit(rows);
        Device a40 = DEVICES.require("NVIDIA A100-SXM4-40GB");
        Device a80 = DEVICES.require("NVIDIA A100-SXM4-80GB");
        // 8192 x 8192 x 8192: 1.1 TFLOP over 400 MB
        LayerFeatures gemm = new LayerFeatures(0, OpFamily.DENSE, 2.0 * 8192 * 8192 * 8192, 0, 2.0 * 8192 * 8192 * 4,
                4.0 * 8192 * 8192, 0, 8192L * 8192, 8192.0 * 8192, 0, 0, 0, 8192, 8192);
        double t40 = m.layerMillis(gemm, a40, org.scaledl.workload.Precision.FP16, false);
        double t80 = m.layerMillis(gemm, a80, org.scaledl.workload.Precision.FP16, false);
        assertEquals(t40, t80, 1e-12 * t40, "a compute-bound GEMM");
        LayerFeatures add = new LayerFeatures(0, OpFamily.ELEMENTWISE, 64e6, 0, 2 * 256e6, 256e6, 0, 0, 64e6, 0, 0,
                0, 0, 0);
        double e40 = m.layerMillis(add, a40, org.scaledl.workload.Precision.FP16, false);
        double e80 = m.layerMillis(add, a80, org.scaledl.workload.Precision.FP16, false);
        assertTrue(e80 < 0.9 * e40, "a memory-bound kernel: " + e80 + " vs " + e40);
        com.fasterxml.jackson.databind.node.ObjectNode body = m.body();
        assertEquals(DeviceLayerModel.RATIO_SATURATION, body.get("ratio_saturation").asDouble());
        body.remove("ratio_saturation");
        DeviceLayerModel old = DeviceLayerModel.read(body);
        assertTrue(old.body().get("ratio_saturation") == null, "a file without it reads none");
        double[] x = DeviceLayerModel.features(gemm, a80, org.scaledl.workload.Precision.FP16, false,
                new double[OpFamily.values().length], Double.POSITIVE_INFINITY);
        assertTrue(x[2] > DeviceLayerModel.RATIO_SATURATION, "unsaturated ratio " + x[2]);
    }

    /**
     * The speed cap: a model describes a kernel on a device faster than any it was fitted on as on the fastest one
     * (per width of the matrix operands, and for vector work and memory bandwidth), so its fitted kernels keep their
     * features while a faster device's kernel takes the fastest fitted one's compute and memory times among its
     * features (its time then scales with the device's own roofline); runs extend the cap to their GPUs at their
     * precisions (FP16 and BF16 one width); the file keeps it, and a file without it reads none.
     */
    @Test
    void aDeviceBeyondTheFittedSpeedsIsDescribedAtTheFastestFittedOne() {
        DeviceLayerModel m = DeviceLayerModel.fit(rows);
        DeviceLayerModel.SpeedCap cap = m.speedCap();
        double fastest = rows.stream().filter(r -> r.precision() == Precision.FP32)
                .mapToDouble(r -> r.device().peakFlopsPerSecond(Precision.FP32, true)).max().orElseThrow();
        double bandwidth = rows.stream().mapToDouble(r -> r.device().bytesPerSecond()).max().orElseThrow();
        assertEquals(fastest, cap.matrixFlops().get("fp32"), 0);
        assertEquals(bandwidth, cap.bytesPerSecond(), 0);
        double[] codes = new double[OpFamily.values().length];
        for (int i = 0; i < rows.size(); i += 97) {
            OpMeasurement r = rows.get(i);
            assertArrayEquals(DeviceLayerModel.features(r.features(), r.device(), r.precision(), r.backward(), codes,
                    DeviceLayerModel.RATIO_SATURATION), DeviceLayerModel.features(r.features(), r.device(),
                    r.precision(), r.backward(), codes, DeviceLayerModel.RATIO_SATURATION, cap), 0, r.toString());
        }
        Device gb200 = DEVICES.require("GB200");
        assertTrue(gb200.peakFlopsPerSecond(Precision.FP32, true) > fastest && gb200.bytesPerSecond() > bandwidth);
        double flops = 2.0 * 4096 * 4096 * 4096;
        LayerFeatures gemm = new LayerFeatures(0, OpFamily.DENSE, flops, 0, 3.0 * 4096 * 4096 * 4, 4.0 * 4096 * 4096,
                0, 4096L * 4096, 4096.0 * 4096, 0, 0, 0, 4096, 4096);
        double[] x = DeviceLayerModel.features(gemm, gb200, Precision.FP32, false, codes,
                DeviceLayerModel.RATIO_SATURATION, cap);
        assertEquals(Math.log10(flops / fastest + 1e-9), x[0], 1e-12);
        assertEquals(Math.log10(flops / gb200.peakFlopsPerSecond(Precision.FP32, true) + 1e-9),
                DeviceLayerModel.features(gemm, gb200, Precision.FP32, false, codes,
                        DeviceLayerModel.RATIO_SATURATION)[0], 1e-12, "without the cap: its own peak");
        // runs extend it: a BF16 job on a GB200 sets the 16-bit width (FP16 the same units)
        org.scaledl.graph.ModelGraph g = org.scaledl.transformer.TransformerSpec.decoder("g", 256, 4, 2, 1000).build()
                .graph(128);
        Workload job = Workload.builder(g).batch(1).phase(Phase.TRAIN).device(gb200).precision(Precision.BF16).build();
        DeviceLayerModel.SpeedCap covered = m.coveringRuns(List.of(Sample.of(job, 10))).speedCap();
        assertEquals(2.5e15, covered.matrixFlops().get("16-bit"), 1e6);
        assertEquals(gb200.bytesPerSecond(), covered.bytesPerSecond(), 0);
        assertEquals(covered, DeviceLayerModel.read(m.coveringRuns(List.of(Sample.of(job, 10))).body()).speedCap());
        // a width of matrix units it was not fitted at (TF32 here) is no faster than its 16-bit work
        Device rubin = DEVICES.require("VR200");
        assertEquals(Math.log10(flops / 2.5e15 + 1e-9), DeviceLayerModel.features(gemm, rubin, Precision.TF32, false,
                codes, DeviceLayerModel.RATIO_SATURATION, covered)[0], 1e-12);
        com.fasterxml.jackson.databind.node.ObjectNode bad = m.body();
        ((com.fasterxml.jackson.databind.node.ObjectNode) bad.get("speed_cap").get("matrix_flops_per_s"))
                .put("fp6", 1e15);
        org.scaledl.InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> DeviceLayerModel.read(bad));
        assertTrue(e.getMessage().contains("'fp6' is not a width"), e.getMessage());
        com.fasterxml.jackson.databind.node.ObjectNode body = m.body();
        body.remove("speed_cap");
        assertEquals(DeviceLayerModel.SpeedCap.NONE, DeviceLayerModel.read(body).speedCap(), "a file without it");
        assertEquals(DeviceLayerModel.SpeedCap.NONE, DeviceLayerModel.read(body).coveringRuns(
                List.of(Sample.of(job, 10))).speedCap(), "and runs do not give it one");
    }

    /**
     * Reductions and a data movement's backward pass are described as the element-wise kernels of their shapes: with
     * the only reductions in the data tiny launch-bound nodes (as in NeuSight's traces: 154 of at most 5 µs of
     * roofline), a large one (a mixture of experts' combination of each token's top-8 outputs) is predicted as the
     * element-wise kernel of its shape, a few times its roofline at most, not at the launch-bound rows' ratio.
     */
    @Test
    void largeReductionsAndBackwardMovesAreTimedAsStreamingKernels() {
        Device h100 = DEVICES.require("NVIDIA H100 80GB HBM3");
        List<OpMeasurement> withNodes = new ArrayList<>(rows);
        for (int i = 0; i < 150; i++) {
            double out = 256 + 16 * i;
            LayerFeatures tiny = new LayerFeatures(0, OpFamily.REDUCE, 768 * out, 0, 4 * 768 * out, 4 * out, 0, 0,
                    out, 0, 0, 0, 768, 0);
            withNodes.add(new OpMeasurement(tiny, h100, false, 0.03, "sum", "r" + i,
                    OpMeasurement.Origin.MODEL_NODE));
        }
        DeviceLayerModel m = DeviceLayerModel.fit(withNodes);
        double in = 8.0 * 16384 * 7168;
        double out = 16384.0 * 7168;
        LayerFeatures combine = new LayerFeatures(0, OpFamily.REDUCE, in, in, 4 * in, 4 * out, 4 * (out + 2 * in), 0,
                out, 0, 0, 0, 8, 0);
        LayerFeatures dispatchBack = new LayerFeatures(0, OpFamily.MOVEMENT, 0, in, 4 * out, 4 * in, 4 * (in + 2 * out),
                0, in, 0, 0, 0, 0, 0);
        for (org.scaledl.workload.Precision p : List.of(org.scaledl.workload.Precision.BF16,
                org.scaledl.workload.Precision.FP32)) {
            for (boolean bwd : new boolean[] {false, true}) {
                double t = m.predictMillis(combine, h100, p, bwd);
                double roof = DeviceLayerModel.rooflineMillis(combine, h100, p, bwd);
                assertTrue(t <= 3 * roof, "combine " + p + (bwd ? " bwd " : " fwd ") + t + " ms, roofline " + roof);
                LayerFeatures asElementwise = new LayerFeatures(0, OpFamily.ELEMENTWISE, combine.flopsFwd(),
                        combine.flopsBwd(), combine.bytesRead(), combine.bytesWritten(), combine.bytesBwd(), 0, out,
                        0, 0, 0, 8, 0);
                assertEquals(m.predictMillis(asElementwise, h100, p, bwd), t, 1e-12 * t);
            }
            double back = m.predictMillis(dispatchBack, h100, p, true);
            double roof = DeviceLayerModel.rooflineMillis(dispatchBack, h100, p, true);
            assertTrue(back <= 3 * roof, "dispatch bwd " + p + " " + back + " ms, roofline " + roof);
        }
    }
}
