package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.TrainingLogs;
import org.scaledl.model.LayoutSearch;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Round twenty-eight, hostile input to the Java API: a calibration counts a job measured again once whatever the
 * copies (one job is every setting that changes its prediction, {@link Workload#identity()}); a log's run refuses
 * another model's sample; a copy keeps FP8 weights asked for where the job runs them; a bad weight tag, network or
 * null element is named; a prediction's parts and interval are checked.
 */
class RoundTwentyEightApiTest {
    private static final Path CONFIGS = Path.of("..", "scaledl-core", "src", "test", "resources", "transformers");
    private static final Path LOG = Path.of("..", "scaledl-core", "src", "test", "resources", "logs",
            "megatron-llama3-8b.log");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");
    private static final Device H100 = DeviceCatalog.bundled().require("H100 SXM");
    private static final Device A100 = DeviceCatalog.bundled().require("A100-SXM4-80GB");

    private static TransformerSpec spec(String name) {
        return HuggingFaceConfig.read(CONFIGS.resolve(name + "/config.json"));
    }

    @Test
    void aCalibrationWeighsAJobMeasuredAgainAsOneWhateverTheCopies() {
        Sample s = TrainingLogs.read(LOG, TrainingLogs.DEFAULT_WARMUP).get(0).sample(H100);
        double one = GPU.calibrate(List.of(s)).predict(s.workload()).millis();
        for (int copies : new int[] {7, 8, 20}) {
            double many = GPU.calibrate(Collections.nCopies(copies, s)).predict(s.workload()).millis();
            assertEquals(one, many, 1e-9 * one, copies + " copies");
        }
    }

    @Test
    void aJobsIdentityHoldsEverySettingThatChangesItsPrediction() {
        Workload w1 = Workload.builder(spec("llama-3-8b").graph(4096)).batch(64).device(H100)
                .precision(Precision.BF16).parallelism(Parallelism.of(32, 1, 1, 1).withZeroStage(1))
                .topology(Topology.of(8, Topology.Link.NVSWITCH, 450, 3200)).build();
        Workload w2 = w1.toBuilder().topology(Topology.of(8, Topology.Link.NVSWITCH, 450, 10)).build();
        assertNotEquals(GPU.predict(w1).millis(), GPU.predict(w2).millis());
        assertNotEquals(w1.identity(), w2.identity());
        assertNotEquals(Sample.of(w1, 100).key(), Sample.of(w2, 100).key());
        // two jobs calibrate as two, not as one job measured twice
        double p1 = GPU.predict(w1).millis();
        double p2 = GPU.predict(w2).millis();
        RuntimePredictor two = GPU.calibrate(List.of(Sample.of(w1, 2 * p1), Sample.of(w2, 2 * p2)));
        RuntimePredictor once = GPU.calibrate(List.of(Sample.of(w1, 2 * p1)));
        assertNotEquals(once.predict(w1).millis(), two.predict(w1).millis());
        // tags are no part of a job
        assertEquals(w1.identity(), w1.toBuilder().tag("id", "x").build().identity());
        Workload mixtral = Workload.builder(spec("mixtral-8x7b").graph(4096)).batch(8).device(H100)
                .precision(Precision.BF16).parallelism(Parallelism.of(1, 8, 1, 1).withExpert(8, 1)).build();
        assertNotEquals(mixtral.identity(), mixtral.toBuilder().expertImbalance(3).build().identity());
    }

    @Test
    void aLogsRunRefusesAnotherModelsSample() {
        TrainingLogs.Run run = TrainingLogs.read(LOG, TrainingLogs.DEFAULT_WARMUP).get(0);
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> run.sample(H100, spec("llama-2-70b")));
        assertTrue(e.getMessage().contains("a log with a different model than the one given is refused: "
                + "hidden_size is 4096 in the log, 8192 in the configuration"), e.getMessage());
        // its own model is taken, and another GPU, as asked (said on the log)
        assertEquals(run.measuredMs(), run.sample(H100, spec("llama-3-8b")).millis());
        assertEquals(A100.name(), run.sample(A100).workload().device().orElseThrow().name());
    }

    @Test
    void aCopyKeepsFp8WeightsAskedForWhereTheJobRunsThem() {
        Workload w = Workload.builder(spec("llama-3-8b").graph(4096)).batch(8).device(H100).precision(Precision.FP8)
                .parallelism(Parallelism.of(2, 8, 1, 1).withZeroStage(1)).fp8ParamGatherWhereRun(true).build();
        assertTrue(w.fp8ParamGather());
        Workload bf16 = w.toBuilder().precision(Precision.BF16).build();
        assertTrue(!bf16.fp8ParamGather());
        // and back: asked for where it runs, so taken again
        assertTrue(bf16.toBuilder().precision(Precision.FP8).build().fp8ParamGather());
    }

    @Test
    void badWeightsNetworksAndNullsAreNamed() {
        Sample s = TrainingLogs.read(LOG, TrainingLogs.DEFAULT_WARMUP).get(0).sample(H100);
        for (String bad : new String[] {"abc", "NaN", "-1", "Infinity"}) {
            Sample tagged = Sample.of(s.workload().toBuilder().tag("fit_weight", bad).build(), s.millis());
            InvalidInputException e = assertThrows(InvalidInputException.class,
                    () -> GPU.calibrate(List.of(tagged)));
            assertTrue(e.getMessage().contains("the fit_weight tag of the run") && e.getMessage().contains("'" + bad
                    + "'"), e.getMessage());
        }
        Topology t = Topology.of(8, Topology.Link.NVSWITCH, 450, 3200);
        IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
                () -> t.with(Optional.empty(), Optional.of(Double.NaN)));
        assertTrue(nan.getMessage().contains("a node's network bandwidth must be in"), nan.getMessage());
        IllegalArgumentException nodes = assertThrows(IllegalArgumentException.class,
                () -> t.with(Optional.of(Integer.MAX_VALUE), Optional.empty()));
        assertTrue(nodes.getMessage().contains("GPUs a node must be in"), nodes.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Topology.of(8, Topology.Link.NVSWITCH, 450, 0.0001));
        NullPointerException place = assertThrows(NullPointerException.class,
                () -> GPU.predictAll(Arrays.asList(s.workload(), null)));
        assertEquals("workload 1 is null", place.getMessage());
        NullPointerException part = assertThrows(NullPointerException.class, () -> new Prediction(1, 1, 1,
                Arrays.asList((Prediction.Contribution) null)));
        assertEquals("breakdown 0 is null", part.getMessage());
        assertThrows(NullPointerException.class,
                () -> LayoutSearch.bestWithMemoryFree(Arrays.asList((LayoutSearch.Layout) null)));
    }

    @Test
    void aPredictionsPartsAndIntervalAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new Prediction(1, -5, 2, List.of()));
        assertThrows(IllegalArgumentException.class, () -> new Prediction(1, 1, Double.POSITIVE_INFINITY,
                List.of()));
        assertThrows(IllegalArgumentException.class, () -> new Prediction(1, 1, 1, List.of(
                Prediction.Contribution.term("x", Prediction.Kind.OVERHEAD, 100))));
        assertThrows(IllegalArgumentException.class, () -> new Prediction(1, 1, 1, List.of(), List.of(), 0,
                java.util.OptionalDouble.of(-5)));
        Workload w = TrainingLogs.read(LOG, TrainingLogs.DEFAULT_WARMUP).get(0).sample(H100).workload();
        assertThrows(IllegalArgumentException.class, () -> new LayoutSearch.Layout(w, Double.NaN, 1, true));
        // an imported graph on a GPU, whose stage total holds a whole model's calibration (one GPU) or a replica's
        // floor (data-parallel) beyond its layers' times: predicted, its layers' shares taking it (the constructor
        // refused the prediction before they did)
        org.scaledl.graph.ModelGraph resnet = org.scaledl.onnx.OnnxImporter.read(Path.of("..", "datasets", "graphs",
                "resnet50_r224.onnx"));
        Device t4 = DeviceCatalog.bundled().require("Tesla T4");
        for (int replicas : new int[] {1, 4}) {
            Prediction p = GPU.predict(Workload.builder(resnet).batch(64).device(t4).precision(Precision.FP16)
                    .worldSize(replicas).build());
            double layers = p.breakdown().stream().filter(c -> c.kind() == Prediction.Kind.LAYER)
                    .mapToDouble(Prediction.Contribution::millis).sum();
            assertTrue(layers > 0.5 * p.millis(), replicas + ": " + layers + " of " + p.millis());
            assertTrue(p.breakdown().stream().noneMatch(c -> c.name().equals("unattributed")), p.breakdown()
                    .toString());
        }
    }

    @Test
    void aLogsRunRefusesAModelOfItsSizesButAnotherStructure() {
        // Llama 2 7B: Llama 3 8B's hidden size, layers and heads, but no grouped queries and another feed-forward
        TrainingLogs.Run run = TrainingLogs.read(LOG, TrainingLogs.DEFAULT_WARMUP).get(0);
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> run.sample(H100, spec("llama-2-7b")));
        assertTrue(e.getMessage().contains("a log with a different model than the one given is refused")
                && e.getMessage().contains("the model given"), e.getMessage());
    }
}
