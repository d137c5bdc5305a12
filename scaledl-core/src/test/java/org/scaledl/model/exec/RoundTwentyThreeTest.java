package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.Device;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/** Round twenty-three: what a GPU trains in, as Transformer Engine decides it. */
class RoundTwentyThreeTest {
    private static final Device H100 = DeviceCatalog.bundled().require("NVIDIA H100 80GB HBM3");
    private static final Device B200 = DeviceCatalog.bundled().require("B200");

    private static Workload job(Device d, Precision p, Phase phase) {
        ModelGraph g = HuggingFaceConfig.read(Path.of("src/test/resources/transformers/llama-3-8b/config.json"))
                .graph(1024);
        return Workload.builder(g).batch(1).phase(phase).device(d).precision(p).build();
    }

    /**
     * A device's figures are one text that every read of its description gives alike and any other figure changes
     * (a calibrated model tells a custom GPU's description by them).
     */
    @Test
    void aDevicesFiguresTellItsDescriptionsApart() {
        Device again = DeviceCatalog.bundled().require("H100 SXM");
        assertEquals(H100.figures(), again.figures());
        Device slower = new Device(H100.name(), H100.memoryGB(), H100.memoryBandwidthGBps() / 2, H100.computeUnits(),
                H100.clockMHz(), H100.peakMatrixGflops(), H100.peakVectorGflops(), H100.l2MB(), H100.linkGBps(),
                H100.kind(), H100.simdBits(), H100.matrixPeaks(), H100.formFactor(), H100.pcieGBps(), H100.platform(),
                H100.sfuPerClock(), H100.boardPowerW(), H100.architecture());
        assertNotEquals(H100.figures(), slower.figures());
        assertNotEquals(H100.figures(), B200.figures());
    }

    /**
     * MXFP8 and NVFP4 on a Hopper GPU: Transformer Engine refuses the recipes in training (they need Blackwell's
     * units), so the job is refused naming the recipe the GPU trains in; in inference the fallback stays (with its
     * note); where the units are, and FP8's own recipes on Hopper, nothing is refused.
     */
    @Test
    void aRecipeWithoutItsUnitsIsRefusedInTrainingOnly() {
        for (Precision p : new Precision[] {Precision.MXFP8, Precision.NVFP4}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ParallelExecution.checkJob(job(H100, p, Phase.TRAIN)), p.label());
            assertTrue(e.getMessage().contains("cannot train " + p.label())
                    && e.getMessage().contains("--precision fp8-block"), e.getMessage());
            ParallelExecution.checkJob(job(H100, p, Phase.INFER));
            ParallelExecution.checkJob(job(B200, p, Phase.TRAIN));
        }
        ParallelExecution.checkJob(job(H100, Precision.FP8, Phase.TRAIN));
        ParallelExecution.checkJob(job(H100, Precision.FP8_BLOCK, Phase.TRAIN));
        // 16-bit and FP32 fallbacks are not recipes: a GPU without their units runs them on others, as before
        ParallelExecution.checkJob(job(H100, Precision.TF32, Phase.TRAIN));
    }
}
