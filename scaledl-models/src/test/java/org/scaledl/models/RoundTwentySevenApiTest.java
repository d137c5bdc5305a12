package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.LayoutSearch;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.cost.MemoryUse;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * Round twenty-seven, a capacity planner embedding the library: the memory's parts come from the API (adding up to
 * its total), the search names the best layout that leaves the memory's margin free and says why it found none,
 * {@code predictAll} names the workload it refuses, and a rack-scale GPU's assumed NVLink domain is said.
 */
class RoundTwentySevenApiTest {
    private static final Path CONFIGS = Path.of("..", "scaledl-core", "src", "test", "resources", "transformers");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");

    private static TransformerSpec llama() {
        return HuggingFaceConfig.read(CONFIGS.resolve("llama-3-8b/config.json"));
    }

    private static Workload job(Device d, Parallelism par) {
        return Workload.builder(llama().graph(4096)).batch(8).device(d).precision(Precision.BF16).parallelism(par)
                .build();
    }

    @Test
    void theMemorysPartsAddUpToItsTotal() {
        Device h100 = DeviceCatalog.bundled().require("H100");
        for (Parallelism par : List.of(Parallelism.of(4, 2, 1, 8), Parallelism.of(2, 2, 2, 8).withZeroStage(1))) {
            Prediction p = GPU.predict(job(h100, par));
            MemoryUse m = p.memoryParts().orElseThrow();
            assertEquals(p.memoryGb().orElseThrow(), m.totalGb(), 1e-9 * m.totalGb());
            assertTrue(m.stage() >= 1 && m.stage() <= par.pipeline() && m.stages() == par.pipeline(), m.toString());
            assertTrue(m.training() && m.statesGb() > 0 && m.activationsGb() > 0 && m.runtimeGb() == 1.0, m.toString());
            // the scorer keeps them too
            assertEquals(p.memoryParts(), GPU.predictScored(job(h100, par)).memoryParts());
        }
        // ZeRO 1 shards the optimizer states over the replicas: fewer states a GPU than without it
        double plain = GPU.predict(job(h100, Parallelism.of(4, 2, 1, 8))).memoryParts().orElseThrow().statesGb();
        double sharded = GPU.predict(job(h100, Parallelism.of(4, 2, 1, 8).withZeroStage(1))).memoryParts()
                .orElseThrow().statesGb();
        assertTrue(sharded < plain, sharded + " vs " + plain);
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> new MemoryUse(2, 1, true, 1, 0, 1, 1, 0, 1, 0));
        assertTrue(bad.getMessage().contains("stage 2 of 1"), bad.getMessage());
    }

    @Test
    void theSearchNamesTheBestWithMemoryFreeAndWhyItFoundNone() {
        Device h100 = DeviceCatalog.bundled().require("H100");
        TransformerSpec spec = llama();
        List<LayoutSearch.Layout> all = new LayoutSearch(GPU, spec.graph(4096), h100, 8, 64)
                .precision(Precision.BF16).search();
        Optional<LayoutSearch.Layout> free = LayoutSearch.bestWithMemoryFree(all);
        assertTrue(free.isPresent());
        assertTrue(free.get().fits() && !free.get().nearMemoryLimit());
        // every layout ranked before it fills the memory to its edge
        for (LayoutSearch.Layout l : all.subList(0, all.indexOf(free.get()))) {
            assertTrue(l.nearMemoryLimit() || !l.fits(), l.toString());
        }
        assertEquals(Optional.empty(), LayoutSearch.bestWithMemoryFree(List.of()));
        // a ranked list whose first fills the H100's 80 GiB to its edge, whose second does not fit: the third
        Workload w = free.get().workload();
        LayoutSearch.Layout edge = new LayoutSearch.Layout(w, 100, 79.5, true);
        LayoutSearch.Layout over = new LayoutSearch.Layout(w, 90, 95, false);
        LayoutSearch.Layout room = new LayoutSearch.Layout(w, 110, 60, true);
        LayoutSearch.Layout unknown = new LayoutSearch.Layout(w, 105, Double.NaN, true);
        assertTrue(edge.nearMemoryLimit() && !room.nearMemoryLimit());
        assertEquals(Optional.of(room), LayoutSearch.bestWithMemoryFree(List.of(edge, over, unknown, room)));
        assertEquals(Optional.empty(), LayoutSearch.bestWithMemoryFree(List.of(edge, over)));
        LayoutSearch odd = new LayoutSearch(GPU, spec.graph(4096), h100, 7, 64).precision(Precision.BF16);
        assertEquals(List.of(), odd.search());
        assertTrue(odd.whyNoLayout().startsWith("no layout of 7 GPUs runs a global batch of 64"), odd.whyNoLayout());
    }

    @Test
    void predictAllNamesTheWorkloadItRefuses() {
        Device h100 = DeviceCatalog.bundled().require("H100");
        Workload ok = job(h100, Parallelism.of(4, 2, 1, 8));
        Workload bad = Workload.builder(llama().graph(4096)).batch(8).device(h100).precision(Precision.BF16)
                .parallelism(Parallelism.of(1, 3, 1, 8)).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GPU.predictAll(List.of(ok, bad, ok)));
        assertTrue(e.getMessage().startsWith("workload 1 (") && e.getMessage().contains("tp3"), e.getMessage());
    }

    @Test
    void aRackScaleGpusAssumedNvlinkDomainIsSaid() {
        Device gb200 = DeviceCatalog.bundled().require("GB200");
        java.util.function.Predicate<Prediction> said = p -> p.warnings().stream().anyMatch(w -> w.kind()
                == PredictionWarning.Kind.ASSUMED && w.message().contains("--nvlink-domain"));
        // 16 GPUs: four trays joined by the rack's NVLink, which a machine of smaller domains would not have
        assertTrue(said.test(GPU.predict(job(gb200, Parallelism.of(8, 2, 1, 8)))));
        // one tray: nothing leaves it
        assertFalse(said.test(GPU.predict(job(gb200, Parallelism.of(2, 2, 1, 8)))));
        // the domain given: nothing assumed
        Workload given = job(gb200, Parallelism.of(8, 2, 1, 8)).toBuilder()
                .topology(org.scaledl.workload.Topology.of(4, org.scaledl.workload.Topology.Link.NVSWITCH, 900, 1600,
                        72)).build();
        assertFalse(said.test(GPU.predict(given)));
    }
}
