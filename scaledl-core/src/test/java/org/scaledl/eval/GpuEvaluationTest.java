package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.io.KernelTables;
import org.scaledl.workload.Parallelism;

class GpuEvaluationTest {
    private static final DeviceCatalog DEVICES = DeviceCatalog.bundled();

    @Test
    void leaveOneGpuOutScoresEveryRow() {
        GpuEvaluation.Report r = GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.empty(), 7);
        int kernels = KernelTables.neusight(TestData.gpu().resolve("neusight/kernels"), DEVICES).size()
                + KernelTables.deepbench(TestData.gpu().resolve("deepbench"), DEVICES).size();
        assertEquals(kernels, r.leaveOneGpuOut().stream().mapToInt(GpuEvaluation.Cell::n).sum(),
                "every kernel row is scored once with its GPU held out");
        int seen = r.seenGpu().stream().mapToInt(GpuEvaluation.Cell::n).sum();
        assertTrue(seen > 0.1 * kernels && seen < 0.3 * kernels, "about 20% of shapes held out: " + seen);
        Set<String> gpus = r.leaveOneGpuOut().stream().map(GpuEvaluation.Cell::gpu).collect(Collectors.toSet());
        assertEquals(8, gpus.size(), gpus.toString());
        // Eager single-GPU runs: L4 x3, T4 x2, H100 x4; all have a trace or a rescalable one.
        assertEquals(9, r.models().size());
        assertEquals(6, r.parallel().size());
        assertTrue(r.modelMre() < 0.5, "model MRE " + r.modelMre());
        long covered = 0;
        for (GpuEvaluation.ModelCase c : r.models()) {
            assertTrue(c.lowMs() < c.predictedMs() && c.predictedMs() < c.highMs(), c.toString());
            covered += c.covered() ? 1 : 0;
        }
        assertEquals((double) covered / r.models().size(), r.modelCoverage(), 1e-12);
        Parallelism pp4 = Parallelism.of(1, 1, 4, 1);
        assertTrue(r.parallelisms().contains(pp4), r.parallelisms().toString());
        assertTrue(r.parallelMre(pp4) < 0.5, "pp4 MRE " + r.parallelMre(pp4));
        for (GpuEvaluation.ModelCase c : r.parallel()) {
            assertEquals("NVIDIA H100 80GB HBM3", c.gpu());
        }
        // held-out GPUs' large products: the predicted efficiencies track the measured ones and spread more than
        // they do (the fixtures' slope; the bundled data's, 0.84, is the cluster model's shrinkage)
        double slope = r.largeProductSlope().orElseThrow();
        assertTrue(slope > 0.3 && slope < 1, "slope " + slope);
    }

    @Test
    void oneHeldOutGpuIsDeterministic() {
        GpuEvaluation.Report a = GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.of("NVIDIA_L4"), 7);
        GpuEvaluation.Report b = GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.of("NVIDIA L4"), 7);
        assertEquals(a, b);
        assertTrue(a.seenGpu().isEmpty());
        assertTrue(a.leaveOneGpuOut().stream().allMatch(c -> c.gpu().equals("NVIDIA L4")));
        assertEquals(3, a.models().size());
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.of("AMD Instinct MI100"), 7));
        assertTrue(e.getMessage().contains("MI100"), e.getMessage());
    }

    @Test
    void unknownGpuInTheModelRunsNamesFileAndLine(@TempDir Path dir) throws Exception {
        Path models = Files.createDirectories(dir.resolve("neusight/models"));
        List<String> lines = Files.readAllLines(TestData.gpu().resolve("neusight/models/e2e.csv"));
        lines.set(2, lines.get(2).replaceFirst("^[^,]*,[^,]*,", "Voodoo2,Voodoo2,"));
        Files.write(models.resolve("e2e.csv"), lines);
        Path kernels = Files.createDirectories(dir.resolve("neusight/kernels"));
        Files.copy(TestData.gpu().resolve("neusight/kernels/ln.csv"), kernels.resolve("ln.csv"));
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> GpuEvaluation.run(dir, DEVICES, Optional.empty(), 7));
        assertTrue(e.getMessage().contains("e2e.csv:3") && e.getMessage().contains("Voodoo2"), e.getMessage());
    }

    /** A GPU the bundled catalog lacks is described by the data's own {@code neusight/device_configs.csv}. */
    @Test
    void aGpuDescribedByTheDataIsEvaluatedHeldOut(@TempDir Path dir) throws Exception {
        Path kernels = Files.createDirectories(dir.resolve("neusight/kernels"));
        for (String op : List.of("elem", "ln", "softmax")) {
            List<String> lines = Files.readAllLines(TestData.gpu().resolve("neusight/kernels/" + op + ".csv"));
            Files.write(kernels.resolve(op + ".csv"), lines.stream()
                    .map(l -> l.replace(",Tesla T4,", ",Imaginary T4X,")).toList());
        }
        Files.writeString(dir.resolve("neusight/device_configs.csv"), String.join("\n",
                "gpu,label_dir_name,dev_mem_GB,mem_bw_GBps,num_sm_or_cu,cores_per_sm,freq_MHz,fp32_peak_GFLOPS,"
                        + "fp32_peak_matrix_GFLOPS,fp32_peak_vector_GFLOPS,l2_cache_MB,source_file",
                "Imaginary T4X,Imaginary_T4X,16,320,40,64,1590,8141,,,4,test",
                "Tesla T4,Tesla_T4,1,1,1,1,1000,1,,,1,must not replace the bundled description") + "\n");
        assertThrows(InvalidInputException.class, () -> GpuEvaluation.run(dir, DEVICES, Optional.empty(), 7),
                "the bundled catalog alone does not know the GPU");
        DeviceCatalog catalog = GpuData.catalogFor(dir, DEVICES);
        assertEquals(DEVICES.require("Tesla T4"), catalog.require("Tesla T4"), "the base catalog wins");
        GpuEvaluation.Report r = GpuEvaluation.run(dir, catalog, Optional.of("Imaginary T4X"), 7);
        assertTrue(r.leaveOneGpuOut().stream().anyMatch(c -> c.gpu().equals("Imaginary T4X")), r.toString());
        assertTrue(r.kernelLeaveOneGpuOutMre() > 0 && r.kernelLeaveOneGpuOutMre() < 1);
    }

    @Test
    void adaptedFoldsScoreOnlyWhatWasNotMeasured() {
        GpuEvaluation.Report plain = GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.of("NVIDIA L4"), 7);
        GpuEvaluation.Report r = GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.of("NVIDIA L4"), 7, 8, 1);
        assertEquals(plain.leaveOneGpuOut(), r.leaveOneGpuOut(), "adapting does not change the plain figures");
        assertEquals(plain.models(), r.models());
        GpuEvaluation.Adapted a = r.adapted().orElseThrow();
        int ops = plain.leaveOneGpuOut().size();
        int all = plain.leaveOneGpuOut().stream().mapToInt(GpuEvaluation.Cell::n).sum();
        int scored = a.kernels().stream().mapToInt(GpuEvaluation.Cell::n).sum();
        assertEquals(all - 8 * ops, scored, "8 kernels per op are profiled, the rest scored");
        assertEquals(scored, a.kernelsBefore().stream().mapToInt(GpuEvaluation.Cell::n).sum());
        assertEquals(plain.models().size() - 1, a.models().size(), "one run measured, the others scored");
        for (int i = 0; i < a.models().size(); i++) {
            GpuEvaluation.ModelCase before = a.modelsBefore().get(i);
            assertEquals(a.models().get(i).measuredMs(), before.measuredMs(), 0.0);
            assertTrue(plain.models().contains(before), "before = the plain fold's prediction of that run");
        }
        assertTrue(a.kernelMre() > 0 && a.modelMre() > 0);
        assertTrue(plain.adapted().isEmpty());
        assertThrows(IllegalArgumentException.class,
                () -> GpuEvaluation.run(TestData.gpu(), DEVICES, Optional.of("NVIDIA L4"), 7, -1, 0));
    }
}
