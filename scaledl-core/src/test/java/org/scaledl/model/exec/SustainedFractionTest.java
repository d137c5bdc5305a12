package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * The fraction of its peak a long product sustains: the board's power law, learned on Blackwell, holds Blackwell's
 * parts as fitted (a GB200 at 0.62 of its 16-bit peak), and another architecture that promises more work per cube
 * root of a watt (a Rubin description) is taken to sustain what the B200 does of its own peak, 0.64, not the 0.20 the
 * Blackwell law would leave it; parts the power sustains, and parts without a described architecture, are as before.
 */
class SustainedFractionTest {
    /** A layer cost whose own ceiling is 0.87, the bundled model's. */
    private static final DeviceLayerCost CEILING = new DeviceLayerCost() {
        @Override
        public double layerMillis(LayerFeatures f, Device device, Precision precision, boolean backward) {
            return 0;
        }

        @Override
        public double predictMillis(Workload w) {
            return 0;
        }

        @Override
        public double factor(Phase phase, Device device) {
            return 1;
        }

        @Override
        public double sustainedPeakFraction(Device device, Precision precision) {
            return 0.87;
        }
    };

    @Test
    void blackwellKeepsItsPowerLawAndANewerArchitectureReachesBlackwellsShare() {
        DeviceCatalog c = DeviceCatalog.bundled();
        double eta = MegatronExecution.SUSTAINED_FLOPS_AT_ONE_KILOWATT;
        Device gb200 = c.require("GB200");
        assertEquals(Math.cbrt(1.2) * eta / 2.5e15, MegatronExecution.sustainedFraction(CEILING, gb200,
                Precision.BF16), 1e-12, "Blackwell as fitted");
        Device rubin = c.require("VR200");
        double share = eta / MegatronExecution.BLACKWELL_PEAK_AT_ONE_KILOWATT;
        assertEquals(0.644, share, 0.001);
        for (Precision p : new Precision[] {Precision.BF16, Precision.MXFP8, Precision.NVFP4}) {
            double law = rubin.powerSustainedFlopsPerSecond(p, eta).orElseThrow() / rubin.peakFlopsPerSecond(p, true);
            assertEquals(0.20, law, 0.01, "what Blackwell's law would leave it");
            assertEquals(share, MegatronExecution.sustainedFraction(CEILING, rubin, p), 1e-12, p.label());
        }
        // the power sustains an H100's peak: its ceiling binds, as before
        assertEquals(0.87, MegatronExecution.sustainedFraction(CEILING, c.require("H100"), Precision.BF16), 0);
        // a part without a described architecture keeps the law as fitted
        Device anonymous = new Device(rubin.name(), rubin.memoryGB(), rubin.memoryBandwidthGBps(),
                rubin.computeUnits(), rubin.clockMHz(), rubin.peakMatrixGflops(), rubin.peakVectorGflops(), rubin.l2MB(),
                rubin.linkGBps(), rubin.kind(), rubin.simdBits(), rubin.matrixPeaks(), rubin.formFactor(),
                rubin.pcieGBps(), rubin.platform(), rubin.sfuPerClock(), rubin.boardPowerW());
        assertEquals(rubin.powerSustainedFlopsPerSecond(Precision.BF16, eta).orElseThrow()
                / rubin.peakFlopsPerSecond(Precision.BF16, true),
                MegatronExecution.sustainedFraction(CEILING, anonymous, Precision.BF16), 1e-12);
    }
}
