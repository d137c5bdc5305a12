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
        Device again = copy(H100, H100.memoryBandwidthGBps());
        assertEquals(H100.figures(), again.figures());
        assertNotEquals(H100.figures(), copy(H100, H100.memoryBandwidthGBps() / 2).figures());
        assertNotEquals(H100.figures(), B200.figures());
        // a rate not described is the default it is taken as: a row giving 16 is the same description
        Device blank = new Device("X", 96, 4000, 140, 2000, 1e6, 7e4, 60, 450, Device.Kind.GPU, 0,
                Device.MatrixPeaks.NONE, "SXM", 63, Device.Platform.NONE, 0, 700, "");
        Device sixteen = new Device("X", 96, 4000, 140, 2000, 1e6, 7e4, 60, 450, Device.Kind.GPU, 0,
                Device.MatrixPeaks.NONE, "SXM", 63, Device.Platform.NONE, Device.DEFAULT_SFU_PER_CLOCK, 700, "");
        assertEquals(blank.figures(), sixteen.figures());
        // the text a calibrated model's digest is of, pinned: a change of it is a new digest version
        Device acme = new Device("ACME X1", 96, 4000, 140, 2000, 1e6, 7e4, 60, 450, Device.Kind.GPU, 0,
                Device.MatrixPeaks.of("bf16", 1e6), "SXM", 63, new Device.Platform("NVLink4", 8, 8, 400), 16, 700,
                "Acme");
        assertEquals("96.0|4000.0|140.0|2000.0|1000000.0|70000.0|60.0|450.0|0.0|63.0|16.0|700.0|8.0|8.0|400.0|"
                + "bf16=1000000.0|GPU|SXM|NVLink4|Acme", acme.figures());
    }

    /** A node of one GPU has no link inside it to describe, and counts in the singular. */
    @Test
    void aOneGpuNodeIsDescribedAsOne() {
        String one = org.scaledl.workload.Topology.of(1, org.scaledl.workload.Topology.Link.NVSWITCH, 450, 400)
                .describe();
        assertEquals("1 GPU per node, 400 Gb/s between nodes", one);
        assertTrue(org.scaledl.workload.Topology.of(8, org.scaledl.workload.Topology.Link.NVSWITCH, 450, 3200)
                .describe().startsWith("8 GPUs per node, nvswitch 450 GB/s, 3200 Gb/s between nodes (a node's, 400 a "
                        + "GPU)"));
    }

    /** A provenance whose count of calibration runs is none is refused (a later calibration adds to it). */
    @Test
    void aProvenanceCountThatIsNoneIsRefused() {
        for (String bad : new String[] {"-5", "lots", "99999999999"}) {
            assertThrows(IllegalArgumentException.class, () -> new org.scaledl.model.Provenance("v", "", 0, 0,
                    java.util.Map.of(org.scaledl.model.Provenance.CALIBRATION_RUNS, bad), Double.NaN, "", java.util
                            .List.of()), bad);
        }
        new org.scaledl.model.Provenance("v", "", 0, 0, java.util.Map.of(org.scaledl.model.Provenance.CALIBRATION_RUNS,
                "3"), Double.NaN, "", java.util.List.of());
    }

    /** A device of the same figures but its memory bandwidth, built anew. */
    private static Device copy(Device d, double bandwidth) {
        return new Device(d.name(), d.memoryGB(), bandwidth, d.computeUnits(), d.clockMHz(), d.peakMatrixGflops(),
                d.peakVectorGflops(), d.l2MB(), d.linkGBps(), d.kind(), d.simdBits(), d.matrixPeaks(), d.formFactor(),
                d.pcieGBps(), d.platform(), d.sfuPerClock(), d.boardPowerW(), d.architecture());
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
                    && e.getMessage().contains("(the recipes it trains: fp8-block, or fp8"), e.getMessage());
            ParallelExecution.checkJob(job(H100, p, Phase.INFER));
            ParallelExecution.checkJob(job(B200, p, Phase.TRAIN));
        }
        ParallelExecution.checkJob(job(H100, Precision.FP8, Phase.TRAIN));
        ParallelExecution.checkJob(job(H100, Precision.FP8_BLOCK, Phase.TRAIN));
        // 16-bit and FP32 fallbacks are not recipes: a GPU without their units runs them on others, as before
        ParallelExecution.checkJob(job(H100, Precision.TF32, Phase.TRAIN));
    }
}
