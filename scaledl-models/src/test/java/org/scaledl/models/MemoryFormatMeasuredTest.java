package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * {@link MemoryFormat}'s factors are what the repository's H200 measurement of ResNet-50 gives with the bundled layer
 * model's convolution shares, and a prediction charges them layer by layer, nowhere else.
 */
class MemoryFormatMeasuredTest {
    private static final Path DATASETS = Path.of("..", "datasets");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");
    private static final DeviceLayerModel LAYERS = GPU.deviceLayerModel().orElseThrow();
    private static final Device H200 = DeviceCatalog.bundled().require("NVIDIA H200");
    private static final ModelGraph RESNET50 = OnnxImporter.read(DATASETS.resolve(
            "h200/campaign/graphs/resnet50_r224.onnx"));

    /** Predicted forward and backward time of the dense convolutions and of everything else, ms (uncalibrated). */
    private static double[] shares(int batch, Precision p) {
        double[] s = new double[4];
        for (LayerFeatures f : FeatureExtractor.of(RESNET50).extract(batch, Phase.TRAIN)) {
            int at = f.family() == OpFamily.CONV && f.groups() <= 1 ? 0 : 2;
            s[at] += LAYERS.predictMillis(f, H200, p, false) * RESNET50.repeats(f.layer());
            s[at + 1] += LAYERS.predictMillis(f, H200, p, true) * RESNET50.repeats(f.layer());
        }
        return s;
    }

    /**
     * Per precision and phase, the mean measured time of ResNet-50 at batch 256 in each layout; the factors follow as
     * the forward's from inference, {@code 1 + (nchw - last) / (share · last)}, and the backward's from training
     * given the forward's.
     */
    @Test
    void theFactorsAreWhatTheH200MeasurementGivesWithTheLayerModelsShares() throws IOException {
        JsonNode root = new ObjectMapper().readTree(DATASETS.resolve("h200/large_batch/large_batch.json").toFile());
        Map<String, List<Double>> ms = new HashMap<>();
        for (JsonNode r : root.get("runs")) {
            if (r.get("model").asText().equals("resnet50") && r.get("batch").asInt() == 256) {
                ms.computeIfAbsent(r.get("phase").asText() + " " + r.get("precision").asText() + " "
                        + r.get("layout").asText(), k -> new ArrayList<>()).add(r.get("ms").asDouble());
            }
        }
        double[] forward = new double[3];
        double[] backward = new double[3];
        String[] precisions = {"bf16", "fp16", "tf32"};
        for (int i = 0; i < 3; i++) {
            double[] s = shares(256, Precision.parse(precisions[i]));
            double fwdShare = s[0] / (s[0] + s[2]);
            double infLast = mean(ms.get("infer " + precisions[i] + " nhwc"));
            double infFirst = mean(ms.get("infer " + precisions[i] + " nchw"));
            forward[i] = 1 + (infFirst - infLast) / (fwdShare * infLast);
            double total = s[0] + s[1] + s[2] + s[3];
            double trainLast = mean(ms.get("train " + precisions[i] + " nhwc"));
            double trainFirst = mean(ms.get("train " + precisions[i] + " nchw"));
            double extra = (trainFirst - trainLast) / trainLast - s[0] / total * (forward[i] - 1);
            backward[i] = 1 + extra / (s[1] / total);
        }
        assertEquals(MemoryFormat.HALF_FORWARD, (forward[0] + forward[1]) / 2, 0.01);
        assertEquals(MemoryFormat.HALF_BACKWARD, (backward[0] + backward[1]) / 2, 0.06);
        assertEquals(MemoryFormat.TF32_FORWARD, forward[2], 0.01);
        assertEquals(MemoryFormat.TF32_BACKWARD, backward[2], 0.01);
    }

    private static double mean(List<Double> v) {
        assertTrue(v != null && !v.isEmpty(), "measured");
        return v.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    /**
     * A one-GPU prediction (the cached layer sum) and a data-parallel one (layer by layer) charge the factors on the
     * dense convolutions only, as a slow sum over the layers says; an A100 and FP32 are not charged.
     */
    @Test
    void predictionsChargeTheDenseConvolutionsOnly() {
        for (Precision p : new Precision[] {Precision.BF16, Precision.TF32}) {
            Workload last = Workload.builder(RESNET50).batch(64).phase(Phase.TRAIN).device(H200).precision(p)
                    .memoryFormat(MemoryFormat.CHANNELS_LAST).build();
            Workload first = last.toBuilder().memoryFormat(MemoryFormat.NCHW).build();
            double[] s = shares(64, p);
            double fwd = p == Precision.BF16 ? MemoryFormat.HALF_FORWARD : MemoryFormat.TF32_FORWARD;
            double bwd = p == Precision.BF16 ? MemoryFormat.HALF_BACKWARD : MemoryFormat.TF32_BACKWARD;
            double want = (s[0] * fwd + s[1] * bwd + s[2] + s[3]) / (s[0] + s[1] + s[2] + s[3]);
            double layerSum = LAYERS.layerSum(first) / LAYERS.layerSum(last);
            assertEquals(want, layerSum, 1e-9 * want, p.label());
            Prediction one = GPU.predict(first);
            assertTrue(one.millis() > GPU.predict(last).millis(), p.label());
            assertTrue(one.warnings().stream().anyMatch(w -> w.message().contains("--memory-format channels_last")),
                    one.warnings().toString());
            // two GPUs: the iteration priced layer by layer, each dense convolution with its factor
            Workload twoFirst = first.toBuilder().worldSize(2).build();
            Workload twoLast = last.toBuilder().worldSize(2).build();
            assertTrue(GPU.predictMillis(twoFirst) > GPU.predictMillis(twoLast), p.label());
            Map<String, Double> byLayer = new HashMap<>();
            for (Prediction.Contribution c : GPU.predict(twoLast).breakdown()) {
                byLayer.put(c.name(), c.millis());
            }
            int checked = 0;
            for (Prediction.Contribution c : GPU.predict(twoFirst).breakdown()) {
                if (c.layer().isEmpty() || !byLayer.containsKey(c.name())) {
                    continue;
                }
                LayerFeatures f = FeatureExtractor.of(RESNET50).extract(64, Phase.TRAIN).stream()
                        .filter(x -> x.layer() == c.layer().getAsInt()).findFirst().orElseThrow();
                double tf = LAYERS.predictMillis(f, H200, p, false);
                double tb = LAYERS.predictMillis(f, H200, p, true);
                boolean dense = f.family() == OpFamily.CONV && f.groups() <= 1;
                double ratio = dense ? (tf * fwd + tb * bwd) / (tf + tb) : 1;
                assertEquals(ratio, c.millis() / byLayer.get(c.name()), 1e-9 * ratio, c.name());
                checked += dense ? 1 : 0;
            }
            assertEquals(53, checked, "ResNet-50's convolutions, each charged");
        }
        Workload a100 = Workload.builder(RESNET50).batch(64).device(DeviceCatalog.bundled().require("A100"))
                .precision(Precision.BF16).build();
        assertEquals(GPU.predictMillis(a100), GPU.predictMillis(a100.toBuilder()
                .memoryFormat(MemoryFormat.CHANNELS_LAST).build()));
        Workload fp32 = Workload.builder(RESNET50).batch(64).device(H200).precision(Precision.FP32).build();
        assertEquals(GPU.predictMillis(fp32), GPU.predictMillis(fp32.toBuilder()
                .memoryFormat(MemoryFormat.CHANNELS_LAST).build()));
    }

    /**
     * Profiled convolutions ran in NCHW (the companion's {@code torch.nn.Conv2d} on a default tensor): kernels that
     * take exactly the layout's factor over the trees' channels-last time leave no correction, so a workload's NCHW
     * convolutions are not charged the layout twice.
     */
    @Test
    void adaptingToNchwKernelsDoesNotCountTheLayoutTwice() {
        List<org.scaledl.workload.OpMeasurement> kernels = new ArrayList<>();
        for (LayerFeatures f : FeatureExtractor.of(RESNET50).extract(8, Phase.TRAIN)) {
            if (f.family() == OpFamily.CONV && f.groups() <= 1) {
                for (boolean bwd : new boolean[] {false, true}) {
                    double ms = LAYERS.predictMillis(f, H200, Precision.BF16, bwd)
                            * MemoryFormat.NCHW.slowdown(f, Precision.BF16, H200, bwd);
                    kernels.add(new org.scaledl.workload.OpMeasurement(f, H200, bwd, ms, "conv", f.layer() + "/" + bwd,
                            org.scaledl.workload.OpMeasurement.Origin.BENCHMARK, Precision.BF16));
                }
            }
        }
        DeviceLayerModel adapted = LAYERS.adapt(kernels);
        Workload w = Workload.builder(RESNET50).batch(8).phase(Phase.TRAIN).device(H200).precision(Precision.BF16)
                .build();
        assertEquals(LAYERS.layerSum(w), adapted.layerSum(w), 1e-6 * LAYERS.layerSum(w));
    }

    @Test
    void aCpuPredictionRefusesChannelsLast() {
        RuntimePredictor cpu = BundledModels.load("cpu-ddp");
        Workload w = Workload.builder(OnnxImporter.read(DATASETS.resolve("cpu-ddp/graphs/resnet18_r64.onnx")))
                .batch(4).memoryFormat(MemoryFormat.CHANNELS_LAST).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cpu.predict(w));
        assertTrue(e.getMessage().contains("channels_last"), e.getMessage());
    }
}
