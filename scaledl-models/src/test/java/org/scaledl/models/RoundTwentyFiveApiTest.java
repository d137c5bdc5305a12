package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.LayoutSearch;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.RecomputeModule;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Round twenty-five, a Java user's walk of the API: a caller's key cannot replace the library's own cache of a graph;
 * a copy of a workload asks again for the overlap its original asked for where it runs; an absurd layer count is an
 * argument error before any list is built; a GPU job's host threads widen nothing; null arguments are named; returned
 * lists are read-only.
 */
class RoundTwentyFiveApiTest {
    private static final Path CONFIGS = Path.of("..", "scaledl-core", "src", "test", "resources", "transformers");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");

    private static Workload llama(int threads) throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("llama-3-8b/config.json"));
        return Workload.builder(spec.graph(4096)).batch(8).device(DeviceCatalog.bundled().require("H100"))
                .precision(Precision.BF16).parallelism(Parallelism.of(4, 2, 1, 8)).threads(threads).build();
    }

    @Test
    void aCallersKeyCannotReplaceTheLibrarysCacheOfAGraph() throws Exception {
        Workload w = llama(1);
        double before = GPU.predictMillis(w);
        ModelGraph g = w.graph();
        // the class a caller would take for a key, as the cache's Javadoc once advised: its own value, not the library's
        assertEquals("mine", g.memo(FeatureExtractor.class, x -> "mine"));
        assertTrue(FeatureExtractor.of(g) != null);
        assertEquals(before, GPU.predictMillis(w), 0.0);
        NullPointerException npe = assertThrows(NullPointerException.class, () -> g.memo(new Object(), x -> null));
        assertTrue(npe.getMessage().contains("compute gave null"), npe.getMessage());
    }

    @Test
    void aWorkloadsCopyAsksAgainForTheOverlapWhereItRuns() throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("mixtral-8x7b/config.json"));
        Workload w = Workload.builder(spec.graph(4096)).batch(4).device(DeviceCatalog.bundled().require("H100"))
                .precision(Precision.BF16).parallelism(Parallelism.of(8, 1, 1, 4).withExpert(8, 1))
                .expertCommOverlapWhereRun(true).build();
        assertTrue(w.expertCommOverlap(), "no pipeline: run");
        // before, the copy asked for the overlap outright and a pipeline without virtual stages was refused
        Workload piped = w.toBuilder().parallelism(Parallelism.of(8, 1, 2, 4).withExpert(8, 1)).build();
        assertFalse(piped.expertCommOverlap());
        Workload fresh = Workload.builder(spec.graph(4096)).batch(4).device(DeviceCatalog.bundled().require("H100"))
                .precision(Precision.BF16).parallelism(Parallelism.of(8, 1, 2, 4).withExpert(8, 1))
                .expertCommOverlapWhereRun(true).build();
        assertEquals(fresh.expertCommOverlap(), piped.expertCommOverlap());
    }

    @Test
    void anAbsurdLayerCountIsAnArgumentError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TransformerSpec.decoder("x", 64, 1, Integer.MAX_VALUE, 100).build());
        assertTrue(e.getMessage().contains("beyond any model"), e.getMessage());
    }

    @Test
    void aGpuJobsHostThreadsWidenNothing() throws Exception {
        Prediction one = GPU.predict(llama(1));
        Prediction many = GPU.predict(llama(16));
        assertEquals(one.millis(), many.millis(), 0.0);
        assertEquals(one.lowMillis(), many.lowMillis(), 0.0);
        assertEquals(one.highMillis(), many.highMillis(), 0.0);
        assertTrue(many.warnings().stream().noneMatch(x -> x.kind() == PredictionWarning.Kind.OUTSIDE_THREADS_RANGE));
    }

    @Test
    void nullArgumentsAreNamedAndListsAreReadOnly() {
        Device h100 = DeviceCatalog.bundled().require("H100");
        assertNamed("generation", () -> h100.architectureIs(null));
        assertNamed("byColumn", () -> new Device.MatrixPeaks(null));
        assertNamed("prefixAndGflops", () -> Device.MatrixPeaks.of((Object[]) null));
        assertNamed("gpus", () -> Topology.assumedFor(h100).with(null, Optional.empty(), Optional.empty()));
        assertNamed("layouts", () -> LayoutSearch.ranked(null));
        assertNamed("modules", () -> RecomputeModule.label(null));
        assertThrows(UnsupportedOperationException.class, () -> GPU.machines().add("x"));
        assertThrows(UnsupportedOperationException.class, () -> Precision.labels().add("x"));
        assertThrows(UnsupportedOperationException.class, () -> List.copyOf(Precision.labels()).add("x"));
    }

    @Test
    void aDevicesFigureBeyondAnyDeviceIsRefusedWhereItIsGiven() {
        for (double x : new double[] {1e-300, Double.MIN_VALUE, 1e300}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new Device("D", 80, x, 1, 1000, 1000, 1000, 50, 0));
            assertTrue(e.getMessage().contains("beyond any device"), e.getMessage());
        }
        // the bundled catalog's devices all lie within the bounds
        assertTrue(DeviceCatalog.bundled().devices().size() > 40);
    }

    private static void assertNamed(String name, Runnable call) {
        NullPointerException e = assertThrows(NullPointerException.class, call::run);
        assertEquals(name, e.getMessage());
    }
}
