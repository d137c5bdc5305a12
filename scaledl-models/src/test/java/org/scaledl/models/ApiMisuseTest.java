package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DatasetReader;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;

/**
 * The public API used as a JVM developer uses it, wrongly: each case was found by a walk-through of the API (round
 * eight of hostile input) silently wrong or failing without saying why, and is now refused or said.
 */
class ApiMisuseTest {
    private static final Path DATASETS = Path.of("..", "datasets");
    private static List<Sample> ddp;
    private static ModelGraph resnet18;

    @BeforeAll
    static void read() {
        ddp = DatasetReader.read(DATASETS.resolve("cpu-ddp")).samples();
        resnet18 = OnnxImporter.read(DATASETS.resolve("cpu-ddp/graphs/resnet18_r64.onnx"));
    }

    /** A calibration run 1,000 times off (seconds typed as milliseconds) is refused, naming it; 2 times is taken. */
    @Test
    void aCalibrationRunInAnotherUnitIsRefused() {
        RuntimePredictor gpu = BundledModels.load("gpu");
        Workload w = Workload.builder(resnet18).batch(64).device(DeviceCatalog.bundled()
                .require("NVIDIA A100-SXM4-80GB")).precision(Precision.TF32).build();
        double predicted = gpu.predictMillis(w);
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> gpu.calibrate(List.of(Sample.of(w, predicted * 2), Sample.of(w, predicted * 1000))));
        assertTrue(e.getMessage().startsWith("calibration run 2 (") && e.getMessage().contains("times slower")
                && e.getMessage().contains("not in milliseconds"), e.getMessage());
        assertThrows(InvalidInputException.class, () -> gpu.calibrate(List.of(Sample.of(w, predicted / 200))));
        RuntimePredictor twice = gpu.calibrate(List.of(Sample.of(w, predicted * 2)));
        assertEquals(2, twice.predictMillis(w) / predicted, 0.05);
        RuntimePredictor amd = BundledModels.load("cpu-ddp");
        Workload host = ddp.get(0).workload();
        InvalidInputException named = assertThrows(InvalidInputException.class, () -> amd.calibrate(List.of(
                Sample.of(host, amd.predictMillis(host) * 1000))));
        assertTrue(named.getMessage().contains("runs.csv:2"), "the run's source: " + named.getMessage());
        // a machine the predictor has not seen is compared with the fitted machine closest to it
        Device other = Device.cpu("another VM", 2, 256, 1, 2000, 10);
        Workload elsewhere = host.toBuilder().device(other).build();
        assertThrows(InvalidInputException.class, () -> amd.calibrate(List.of(Sample.of(elsewhere,
                amd.predictMillis(host) * 1000))));
        // and a calibration is checked against the fitted prediction it replaces, not the calibrated one
        RuntimePredictor slow = amd.calibrate(List.of(Sample.of(elsewhere, amd.predictMillis(host) * 50)));
        RuntimePredictor fixed = slow.calibrate(List.of(Sample.of(elsewhere, amd.predictMillis(host) * 1.2)));
        assertEquals(1.2, fixed.predictMillis(elsewhere) / amd.predictMillis(host), 0.3);
    }

    /** A device predictor refuses a CPU run, or one without a device, with an IllegalArgumentException naming it. */
    @Test
    void aDevicePredictorRefusesACpuRunAsAnArgument() {
        RuntimePredictor gpu = BundledModels.load("gpu");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> gpu.calibrate(List.of(ddp.get(0))));
        assertTrue(e.getMessage().startsWith("calibration run 1 (") && e.getMessage().contains("is on CPU machine")
                && e.getMessage().contains("runs of GPUs"), e.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> gpu.calibrate(List.of(
                Sample.of(Workload.builder(resnet18).batch(8).build(), 10))));
        assertTrue(none.getMessage().contains("names no device"), none.getMessage());
    }

    /** Fitting on runs of one workload, or runs that all measure one time, is refused rather than fitted. */
    @Test
    void aDegenerateFitIsRefused() {
        IllegalArgumentException one = assertThrows(IllegalArgumentException.class,
                () -> RuntimePredictor.fit(Collections.nCopies(5, ddp.get(0))));
        assertTrue(one.getMessage().contains("are of one workload"), one.getMessage());
        // copies of one workload, built apart (as a table's repeated rows are), are one workload too
        Workload w = ddp.get(0).workload();
        List<Sample> copies = List.of(Sample.of(w.toBuilder().build(), 100), Sample.of(w.toBuilder().build(), 110),
                Sample.of(w.toBuilder().build(), 120));
        assertThrows(IllegalArgumentException.class, () -> RuntimePredictor.fit(copies));
        List<Sample> flat = ddp.subList(0, 10).stream().map(s -> Sample.of(s.workload(), 100)).toList();
        IllegalArgumentException same = assertThrows(IllegalArgumentException.class,
                () -> RuntimePredictor.fit(flat));
        assertTrue(same.getMessage().contains("all measure 100 ms"), same.getMessage());
    }

    /**
     * A one-machine host predictor takes a calibration run without a machine as one of its own, as it predicts one,
     * and still predicts a workload without a machine after the calibration.
     */
    @Test
    void aOneMachinePredictorCalibratesOnRunsNamingNoMachine() {
        RuntimePredictor zoo = BundledModels.load("cpu-zoo");
        Workload plain = Workload.builder(resnet18).batch(8).build();
        double before = zoo.predictMillis(plain);
        RuntimePredictor calibrated = zoo.calibrate(List.of(Sample.of(plain, before * 1.5),
                Sample.of(Workload.builder(resnet18).batch(16).build(), zoo.predictMillis(Workload.builder(resnet18)
                        .batch(16).build()) * 1.5)));
        double after = calibrated.predictMillis(plain);
        assertTrue(after > before * 1.1, before + " -> " + after);
        assertEquals(zoo.machines(), calibrated.machines());
        // a predictor of two machines still asks which one
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BundledModels.load("cpu-machines").calibrate(List.of(Sample.of(plain, 100))));
        assertTrue(e.getMessage().contains("must name its machine"), e.getMessage());
        // a predictor of one unnamed machine (its dataset without a machine.json) calibrates it on runs of none
        List<Sample> unnamed = java.util.stream.IntStream.range(0, ddp.size()).filter(i -> i % 6 == 0)
                .mapToObj(ddp::get).map(s -> Sample.of(Workload.builder(s.workload().graph())
                        .batch(s.workload().batch()).phase(s.workload().phase()).worldSize(s.workload().worldSize())
                        .threads(s.workload().threads()).tag("model", s.workload().tag("model").orElse("m"))
                        .tag("family", s.workload().tag("family").orElse("f")).build(), s.millis())).toList();
        RuntimePredictor own = RuntimePredictor.fit(unnamed);
        assertEquals(List.of(), own.machines());
        Workload run = unnamed.get(0).workload();
        RuntimePredictor self = own.calibrate(List.of(Sample.of(run, own.predictMillis(run) * 1.5)));
        assertTrue(self.predictMillis(run) > own.predictMillis(run) * 1.1, own.predictMillis(run) + " -> "
                + self.predictMillis(run));
    }

    /**
     * The host model says what it does not model: another precision is predicted as its runs ran (said so, not as
     * "from the peak"), micro-batches as one pass (said), and a GPU cluster's topology is refused.
     */
    @Test
    void theHostModelSaysWhatItDoesNotModel() {
        RuntimePredictor zoo = BundledModels.load("cpu-zoo");
        Workload fp32 = Workload.builder(resnet18).batch(8).build();
        Prediction bf16 = zoo.predict(Workload.builder(resnet18).batch(8).precision(Precision.BF16).build());
        assertEquals(zoo.predict(fp32).millis(), bf16.millis(), 0);
        String said = bf16.warnings().toString();
        assertTrue(said.contains("does not tell precisions apart") && !said.contains("from the peak"), said);
        Prediction accumulated = zoo.predict(Workload.builder(resnet18).batch(32).parallelism(Parallelism.of(1, 1, 1,
                4)).build());
        assertTrue(accumulated.warnings().toString().contains("4 micro-batches: predicted as one forward and "
                + "backward pass of the batch of 32"), accumulated.warnings().toString());
        assertFalse(zoo.predict(fp32).warnings().toString().contains("micro-batches"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> zoo.predict(
                Workload.builder(resnet18).batch(8).topology(Topology.of(8, Topology.Link.NVSWITCH, 300, 400))
                        .build()));
        assertTrue(e.getMessage().contains("a topology describes a GPU cluster"), e.getMessage());
    }

    /** A world size after a parallelism would drop its micro-batches and degrees: refused, saying so. */
    @Test
    void aWorldSizeAfterAParallelismIsRefused() {
        Workload.Builder b = Workload.builder(resnet18).batch(8).parallelism(Parallelism.of(1, 1, 1, 4));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.worldSize(2));
        assertTrue(e.getMessage().contains("would replace the parallelism"), e.getMessage());
        assertEquals(2, Workload.builder(resnet18).batch(8).parallelism(Parallelism.data(4)).worldSize(2).build()
                .worldSize(), "a plain data-parallel degree is replaced");
        assertEquals(Parallelism.of(2, 1, 1, 4), Workload.builder(resnet18).batch(8).worldSize(3)
                .parallelism(Parallelism.of(2, 1, 1, 4)).build().parallelism());
    }

    /** A null argument is named. */
    @Test
    void aNullArgumentIsNamed() {
        assertEquals("path", assertThrows(NullPointerException.class, () -> OnnxImporter.read((Path) null))
                .getMessage());
        assertEquals("dir", assertThrows(NullPointerException.class, () -> DatasetReader.read(null)).getMessage());
        assertEquals("warnings", assertThrows(NullPointerException.class, () -> new Prediction(1, 1, 2, List.of(),
                null)).getMessage());
        assertEquals("more", assertThrows(NullPointerException.class, () -> Prediction.point(1).withWarnings(null))
                .getMessage());
    }

    /**
     * Round fourteen (a helper used the API as a scheduler would): a calibration run the predictor does not predict at
     * all (a CPU model given a configuration-built transformer) was taken and moved every prediction; it is refused as
     * predict refuses it. A run of a subnormal time (its ratio to the prediction underflows to 0) was taken too; it
     * is refused as a time in another unit.
     */
    @Test
    void aCalibrationRunThePredictorDoesNotPredictIsRefused() {
        RuntimePredictor zoo = BundledModels.load("cpu-ddp");
        Workload llm = Workload.builder(org.scaledl.transformer.TransformerSpec.decoder("llm", 512, 8, 2, 1000)
                .build().graph(128)).build();
        assertThrows(IllegalArgumentException.class, () -> zoo.predict(llm));
        for (double ms : new double[] {3000, 200_000}) {
            // (a time far from what the host basis would say of it is no "other unit": the job is not its to predict)
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> zoo.calibrate(List.of(Sample.of(llm, ms))));
            assertTrue(e.getMessage().startsWith("calibration run 1: ") && e.getMessage().contains("configuration"),
                    e.getMessage());
        }
        RuntimePredictor gpu = BundledModels.load("gpu");
        Workload w = Workload.builder(resnet18).batch(64).device(DeviceCatalog.bundled()
                .require("NVIDIA A100-SXM4-80GB")).precision(Precision.TF32).build();
        InvalidInputException tiny = assertThrows(InvalidInputException.class,
                () -> gpu.calibrate(List.of(Sample.of(w, Double.MIN_VALUE))));
        assertTrue(tiny.getMessage().contains("more than 1e308 times faster") && tiny.getMessage().contains(
                "4.900e-324 ms"),
                tiny.getMessage());
    }
}
