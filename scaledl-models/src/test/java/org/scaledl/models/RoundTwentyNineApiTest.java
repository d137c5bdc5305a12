package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.TrainingLogs;
import org.scaledl.model.CalibrationScreen;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.TrainingTime;
import org.scaledl.model.exec.FittedBias;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Round twenty-nine, the keyboard of a scheduler's developer who embeds the library: one job read from several logs
 * is one job; the library screens calibration runs as the command line does and names a run it cannot predict; a
 * builder left at FP32, or a topology faster than its GPU's NVLink, is said; the training time of a token budget is
 * the library's; the bundled model says the biases its fit left on its own runs of a model on a GPU.
 */
class RoundTwentyNineApiTest {
    private static final Path CONFIGS = Path.of("..", "scaledl-core", "src", "test", "resources", "transformers");
    private static final Path LOG = Path.of("..", "scaledl-core", "src", "test", "resources", "logs",
            "megatron-llama3-8b.log");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");
    private static final Device H100 = DeviceCatalog.bundled().require("H100 SXM");
    private static final Device A100 = DeviceCatalog.bundled().require("A100-SXM4-80GB");
    private static final Device B200 = DeviceCatalog.bundled().require("B200");

    private static TransformerSpec spec(String name) {
        return HuggingFaceConfig.read(CONFIGS.resolve(name + "/config.json"));
    }

    private static Workload llama8b(Device d) {
        return Workload.builder(spec("llama-3-8b").graph(4096)).batch(64).device(d).precision(Precision.BF16)
                .parallelism(Parallelism.of(8, 1, 1, 64).withZeroStage(1)).build();
    }

    @Test
    void oneJobReadFromSeveralLogsIsOneJob(@TempDir Path dir) throws Exception {
        List<Sample> copies = new ArrayList<>();
        for (int i = 1; i <= 8; i++) {
            Path copy = dir.resolve("node" + i + ".log");
            Files.copy(LOG, copy);
            copies.add(TrainingLogs.read(copy, TrainingLogs.DEFAULT_WARMUP).get(0).sample(H100));
        }
        // each log names its model after its file: the job is the same graph, whatever its name
        assertNotEquals(copies.get(0).workload().graph().name(), copies.get(1).workload().graph().name());
        assertEquals(copies.get(0).workload().graph().structure(), copies.get(1).workload().graph().structure());
        assertEquals(copies.get(0).workload().identity(), copies.get(7).workload().identity());
        Workload w = copies.get(0).workload();
        double one = GPU.calibrate(copies.subList(0, 1)).predict(w).millis();
        assertEquals(one, GPU.calibrate(copies).predict(w).millis(), 1e-9 * one);
        // (another job of the same model is another identity)
        Workload other = w.toBuilder().batch(w.batch() * 2).build();
        assertNotEquals(w.identity(), other.identity());
    }

    @Test
    void aScreenLeavesOutWhatTheCommandLineLeavesOutAndCalibrateNamesARunItCannotPredict() {
        Workload ok = llama8b(H100);
        Workload big = Workload.builder(spec("llama-3-70b").graph(4096)).batch(8).device(H100)
                .precision(Precision.BF16).parallelism(Parallelism.of(8, 1, 1, 1)).build();
        double p = GPU.predict(ok).millis();
        Sample far = Sample.of(ok.toBuilder().batch(128).build(), GPU.predict(ok.toBuilder().batch(128).build())
                .millis() * 20);
        List<Sample> runs = List.of(Sample.of(ok, 1.1 * p), far, Sample.of(big, GPU.predict(big).millis()));
        CalibrationScreen screen = GPU.screen(runs);
        assertEquals(List.of(runs.get(0), runs.get(2)), screen.kept());
        assertEquals(1, screen.leftOut().size());
        assertEquals(2, screen.leftOut().get(0).index());
        assertTrue(screen.leftOut().get(0).describe().contains("run 2 (predicted"), screen.leftOut().get(0)
                .describe());
        // the 70B model on 8 GPUs without sharding does not fit: named, kept
        assertTrue(GPU.predict(big).outOfMemory());
        assertEquals(List.of(runs.get(2)), screen.predictedNotToFit());
        assertTrue(screen.calibratedOn().isEmpty());
        RuntimePredictor mine = GPU.calibrate(screen.kept());
        assertEquals(2, mine.screen(List.of(runs.get(0))).calibratedOn().orElseThrow());
        assertFalse(screen.mostLeftOut());
        // a time in seconds for milliseconds, every run: the unit is named
        CalibrationScreen seconds = GPU.screen(List.of(Sample.of(ok, p / 1000), Sample.of(ok.toBuilder()
                .batch(128).build(), GPU.predict(ok.toBuilder().batch(128).build()).millis() / 1000)));
        assertTrue(seconds.kept().isEmpty() && seconds.mostLeftOut());
        assertTrue(seconds.unitHint().contains("seconds, not milliseconds?"), seconds.unitHint());
        // a run the execution model refuses is named by its place, not as the batch's error
        Workload tp3 = Workload.builder(spec("llama-3-8b").graph(4096)).batch(8).device(H100)
                .precision(Precision.BF16).parallelism(Parallelism.of(1, 3, 1, 1)).tag("source", "tp3.log:1")
                .build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GPU.calibrate(List.of(
                Sample.of(ok, p), Sample.of(tp3, p))));
        assertTrue(e.getMessage().startsWith("calibration run 2 (tp3.log:1): "), e.getMessage());
        // (the same kind of error from both: a job the predictor does not take)
        IllegalArgumentException s = assertThrows(IllegalArgumentException.class, () -> GPU.screen(List.of(
                Sample.of(tp3, p))));
        assertTrue(s.getMessage().contains("calibration run 1 (tp3.log:1): "), s.getMessage());
    }

    @Test
    void aBuilderLeftAtFp32AndATopologyFasterThanItsGpuAreSaid() {
        Workload given = llama8b(A100);
        Workload fp32 = Workload.builder(spec("llama-3-8b").graph(4096)).batch(64).device(A100)
                .parallelism(Parallelism.of(8, 1, 1, 64).withZeroStage(1)).build();
        assertFalse(fp32.precisionGiven());
        assertTrue(given.precisionGiven());
        assertTrue(fp32.toBuilder().build().precisionGiven() == fp32.precisionGiven());
        assertTrue(has(GPU.predict(fp32), PredictionWarning.Kind.ASSUMED, "no precision given: fp32 assumed"));
        assertFalse(has(GPU.predict(given), PredictionWarning.Kind.ASSUMED, "no precision given"));
        // stated FP32 is FP32 on purpose: not said
        assertFalse(has(GPU.predict(fp32.toBuilder().precision(Precision.FP32).build()),
                PredictionWarning.Kind.ASSUMED, "no precision given"));
        // an H100's topology kept when the template moves to an A100 (its NVLink is 300 GB/s)
        Workload h100 = given.toBuilder().device(H100).topology(Topology.assumedFor(H100)).build();
        Workload moved = h100.toBuilder().device(A100).build();
        assertTrue(has(GPU.predict(moved), PredictionWarning.Kind.UNUSUAL_JOB, "more than " + A100.name()
                + "'s NVLink has"), GPU.predict(moved).warnings().toString());
        assertFalse(has(GPU.predict(given.toBuilder().topology(Topology.assumedFor(A100)).build()),
                PredictionWarning.Kind.UNUSUAL_JOB, "NVLink has"));
        // an NVLink topology for a PCIe card, which has none
        Device l40s = DeviceCatalog.bundled().require("L40S");
        Workload card = given.toBuilder().device(l40s).topology(Topology.of(8, Topology.Link.NVSWITCH, 900, 3200))
                .build();
        assertTrue(has(GPU.predict(card), PredictionWarning.Kind.UNUSUAL_JOB, "which has no NVLink"),
                GPU.predict(card).warnings().toString());
        assertFalse(has(GPU.predict(given.toBuilder().device(l40s).build()), PredictionWarning.Kind.UNUSUAL_JOB,
                "which has no NVLink"));
    }

    @Test
    void aTokenBudgetsTrainingTimeIsTheLibrarys() {
        Workload w = llama8b(H100);
        Prediction pr = GPU.predict(w);
        double tokens = TrainingTime.parseTokens("15T");
        assertEquals(15e12, tokens);
        assertEquals(1.5e9, TrainingTime.parseTokens("1.5B"));
        assertEquals(3e8, TrainingTime.parseTokens("300_000_000"));
        for (String bad : new String[] {"0x10", "Infinity", "0", "1.5", "15X", "", "2e18"}) {
            assertThrows(IllegalArgumentException.class, () -> TrainingTime.parseTokens(bad), bad);
        }
        TrainingTime t = TrainingTime.of(tokens, w, pr).orElseThrow();
        double perIteration = 64.0 * 8 * 4096;
        assertEquals(perIteration, t.perIteration());
        assertEquals(Math.ceil(tokens / perIteration), t.iterations());
        assertEquals(t.iterations() * pr.millis() / 86_400e3, t.days(), 1e-9 * t.days());
        assertEquals(t.days() * 24 * 8, t.gpuHours(), 1e-9 * t.gpuHours());
        assertTrue(t.lowDays() <= t.days() && t.days() <= t.highDays());
        assertTrue(t.describe().contains("15,000,000,000,000 tokens"), t.describe());
        Workload serving = Workload.builder(spec("llama-3-8b").graph(4096)).batch(8).device(H100)
                .precision(Precision.BF16).phase(org.scaledl.workload.Phase.INFER).build();
        assertTrue(TrainingTime.of(tokens, serving, GPU.predict(serving)).isEmpty());
    }

    @Test
    void theBundledModelSaysTheBiasItsFitLeftOnAModelsRunsOnAGpu() {
        List<FittedBias> biases = GPU.executionModel().orElseThrow().biases();
        assertFalse(biases.isEmpty());
        for (FittedBias b : biases) {
            assertTrue(b.runs() >= FittedBias.MIN_RUNS && b.jobs() >= FittedBias.MIN_JOBS
                    && Math.abs(b.meanError()) >= FittedBias.MIN_ERROR && b.erring() >= (b.runs() + 1) / 2,
                    b.toString());
        }
        FittedBias first = biases.get(0);
        TransformerSpec ds = spec("deepseek-v3");
        Workload job = Workload.builder(ds.graph(4096)).batch(128).device(B200).precision(Precision.MXFP8)
                .parallelism(Parallelism.of(16, 1, 16, 128).withZeroStage(1).withExpert(8, 1)).build();
        // DeepSeek-V3 on B200 is one of them: its prediction says it, on H100 it does not
        assertTrue(biases.stream().anyMatch(b -> b.concerns(job)), biases.toString());
        Prediction pr = GPU.predict(job);
        assertTrue(has(pr, PredictionWarning.Kind.NOTE, "of DeepSeek-V3 on NVIDIA B200 this model was fitted on"),
                pr.warnings().toString());
        Workload serving = Workload.builder(ds.graph(4096)).batch(8).device(B200).precision(Precision.MXFP8)
                .phase(org.scaledl.workload.Phase.INFER).parallelism(Parallelism.of(1, 1, 1, 1).withExpert(1, 1))
                .build();
        assertFalse(biases.stream().anyMatch(b -> b.concerns(serving)));
        // a LoRA job's frozen base runs other work than the pretraining runs the biases are of
        assertFalse(has(GPU.predict(job.toBuilder().lora(16).build()), PredictionWarning.Kind.NOTE,
                "this model was fitted on"));
        Workload onH100 = job.toBuilder().device(H100).build();
        assertFalse(biases.stream().anyMatch(b -> b.concerns(onH100) && b.label().equals("DeepSeek-V3")));
        // a calibration's biases are its runs' own: the bundled model's are not carried
        RuntimePredictor mine = GPU.calibrate(List.of(Sample.of(llama8b(H100), GPU.predict(llama8b(H100))
                .millis())));
        assertTrue(mine.executionModel().orElseThrow().biases().isEmpty());
        assertFalse(has(mine.predict(job), PredictionWarning.Kind.NOTE, "this model was fitted on"));
        assertTrue(first.note().contains(first.meanError() < 0 ? "too fast" : "too slow"), first.note());
    }

    private static boolean has(Prediction p, PredictionWarning.Kind kind, String text) {
        return p.warnings().stream().anyMatch(w -> w.kind() == kind && w.message().contains(text));
    }
}
