package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Sample;

/**
 * The bundled predictors are exactly what fitting the bundled datasets gives today: a stale resource (fitted by an
 * older library or on older data) fails here, and the regeneration command is in the resources' PROVENANCE.md.
 */
class BundledModelsTest {
    private static final Path DATASETS = Path.of("..", "datasets");
    private static final Map<String, List<String>> SOURCES = Map.of("cpu-ddp", List.of("cpu-ddp"), "cpu-zoo",
            List.of("cpu-zoo"), "cpu-machines", List.of("cpu-ddp", "cpu-zoo"));

    @ParameterizedTest
    @ValueSource(strings = {"cpu-ddp", "cpu-zoo", "cpu-machines"})
    void bundledPredictorIsTheFitOfTheBundledData(String name) {
        Dataset data = null;
        for (String dir : SOURCES.get(name)) {
            Dataset d = DatasetReader.read(DATASETS.resolve(dir));
            data = data == null ? d : data.plus(d);
        }
        RuntimePredictor bundled = BundledModels.load(name);
        RuntimePredictor refit = RuntimePredictor.builder().build().fit(data.samples());
        assertEquals(refit.provenance().dataFingerprint(), bundled.provenance().dataFingerprint(),
                name + ": bundled model was fitted on other data; regenerate it (see PROVENANCE.md)");
        assertEquals(data.size(), bundled.provenance().trainingSamples());
        for (Sample s : data.samples()) {
            double want = refit.predictMillis(s.workload());
            double got = bundled.predictMillis(s.workload());
            assertEquals(want, got, 1e-9 * want, () -> name + ": " + s.workload());
        }
    }

    /**
     * The bundled models load without recomputing their checksums (the jar vouches for them), so their checksums are
     * checked here, when the jar is built: each resource passes the verifying load and predicts as the trusted one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"cpu-ddp", "cpu-zoo", "cpu-machines", "gpu"})
    void bundledResourcesPassTheirChecksums(String name) throws Exception {
        byte[] bytes;
        try (java.io.InputStream in = BundledModels.class.getResourceAsStream(name + ".sdl")) {
            bytes = in.readAllBytes();
        }
        RuntimePredictor verified = RuntimePredictor.load(bytes);
        assertEquals(verified.provenance().dataFingerprint(), BundledModels.load(name).provenance().dataFingerprint());
        byte[] tampered = new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
                .replaceFirst("\"seed\" : (\\d)", "\"seed\" : 1$1").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThrows(org.scaledl.InvalidInputException.class, () -> RuntimePredictor.load(tampered));
    }

    @Test
    void aNullNameIsAnUnknownModel() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> BundledModels.load(null));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("no bundled model 'null'")
                && e.getMessage().contains("known: "), e.getMessage());
    }

    @Test
    void namesAreLoadable() {
        assertEquals(List.of("cpu-ddp", "cpu-zoo", "cpu-machines", "gpu"), BundledModels.names());
        assertEquals(2, BundledModels.load("cpu-machines").machines().size());
        assertEquals(1, BundledModels.load("cpu-zoo").machines().size());
    }

    @Test
    void unknownNameSuggestsTheClosest() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BundledModels.load("cpu-zo"));
        assertTrue(e.getMessage().contains("did you mean 'cpu-zoo'"), e.getMessage());
        assertTrue(e.getMessage().contains("cpu-machines"), e.getMessage());
    }

    /**
     * The bundled GPU predictor is the fit of {@code datasets/gpu} (the {@code fit --gpu} pipeline): same training
     * runs, same predictions of its runs (imported graphs and Megatron jobs alike).
     */
    @Test
    void bundledGpuPredictorIsTheFitOfTheBundledGpuData() {
        org.scaledl.io.DeviceCatalog catalog = org.scaledl.io.GpuData.catalogFor(DATASETS.resolve("gpu"),
                org.scaledl.io.DeviceCatalog.bundled());
        org.scaledl.io.GpuData d = org.scaledl.io.GpuData.read(DATASETS.resolve("gpu"), catalog);
        List<Sample> runs = new java.util.ArrayList<>(d.samples(r -> r.parallelism().ranks() == 1 && !r.fusion()));
        runs.addAll(d.megatronRuns());
        RuntimePredictor refit = RuntimePredictor.builder().name("scaledl-device")
                .layerCost(org.scaledl.model.LayerCost.device(d.operators()).withCollectives(d.collectives()))
                .build().fit(runs);
        RuntimePredictor bundled = BundledModels.load("gpu");
        assertEquals(refit.provenance().dataFingerprint(), bundled.provenance().dataFingerprint(),
                "gpu: bundled model was fitted on other data; regenerate it (see PROVENANCE.md)");
        for (int i = 0; i < runs.size(); i += 37) {
            org.scaledl.workload.Workload w = runs.get(i).workload();
            assertEquals(refit.predictMillis(w), bundled.predictMillis(w), 1e-9 * refit.predictMillis(w),
                    () -> "gpu: " + w);
        }
        assertEquals("device", bundled.layerCostKind());
    }
}
