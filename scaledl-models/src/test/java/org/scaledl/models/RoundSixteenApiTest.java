package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Round sixteen: a JVM platform engineer embedding the bundled {@code gpu} predictor in a scheduler found a GB200 job's
 * prediction 6–58 % slower through the Java topology api.md pointed to than through the command line (the
 * four-argument {@code Topology.of} made the node the NVLink domain, without a word), a predictor calibrated on one
 * cluster moving other GPUs' jobs silently (the command line's note was its own).
 */
class RoundSixteenApiTest {
    private static final Path CONFIGS = Path.of("..", "scaledl-core", "src", "test", "resources", "transformers");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");

    private static Workload.Builder llama70b(Device d, int data) {
        ModelGraph g = HuggingFaceConfig.read(CONFIGS.resolve("llama-3-70b/config.json")).graph(8192);
        return Workload.builder(g).batch(8).device(d).precision(Precision.BF16)
                .parallelism(Parallelism.of(data, 4, 4, 8).withSequenceParallel(true));
    }

    private static boolean says(Prediction p, PredictionWarning.Kind kind, String text) {
        return p.warnings().stream().anyMatch(x -> x.kind() == kind && x.message().contains(text));
    }

    /**
     * A GB200 NVL72's domain given to {@code Topology.of} predicts what the device's own topology with the same node
     * and network predicts; the four-argument form's node-sized domain is said where the job leaves it.
     */
    @Test
    void anNvl72DomainIsGivenInJavaAsOnTheCommandLine() {
        Device gb200 = DeviceCatalog.bundled().require("GB200");
        Topology rack = Topology.of(4, Topology.Link.NVSWITCH, gb200.linkGBps(), 1600, 72);
        Topology own = Topology.assumedFor(gb200).with(Optional.of(4), Optional.of(1600.0));
        assertEquals(own.nvlinkDomain(), rack.nvlinkDomain());
        Prediction given = GPU.predict(llama70b(gb200, 16).topology(rack).build());
        Prediction standard = GPU.predict(llama70b(gb200, 16).topology(own).build());
        assertEquals(standard.millis(), given.millis(), 1e-9 * standard.millis());
        assertFalse(says(given, PredictionWarning.Kind.UNUSUAL_JOB, "whose standard system joins"));
        Prediction node = GPU.predict(llama70b(gb200, 16).topology(Topology.of(4, Topology.Link.NVSWITCH,
                gb200.linkGBps(), 1600)).build());
        assertTrue(node.millis() > given.millis(), node.millis() + " vs " + given.millis());
        assertTrue(says(node, PredictionWarning.Kind.UNUSUAL_JOB, "an NVLink domain of 4 GPUs on NVIDIA GB200, whose "
                + "standard system joins 72"), node.warnings().toString());
        // an HGX server's node-sized domain is its standard system's: nothing said
        Device h100 = DeviceCatalog.bundled().require("H100");
        Prediction hgx = GPU.predict(llama70b(h100, 16).topology(Topology.of(8, Topology.Link.NVSWITCH, 450, 3200))
                .build());
        assertFalse(says(hgx, PredictionWarning.Kind.UNUSUAL_JOB, "whose standard system joins"));
        // nor an A100 or H100 cluster's nodes of 4 (Perlmutter's): their standard system is a server, no rack
        for (String gpu : new String[] {"A100", "H100"}) {
            Device d = DeviceCatalog.bundled().require(gpu);
            Prediction four = GPU.predict(llama70b(d, 16).precision(Precision.BF16).topology(Topology.of(4,
                    Topology.Link.NVSWITCH, d.linkGBps(), 800)).build());
            assertFalse(says(four, PredictionWarning.Kind.UNUSUAL_JOB, "whose standard system joins"), gpu + ": "
                    + four.warnings());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Topology.of(4, Topology.Link.NVSWITCH, 900, 1600, 70));
        assertTrue(e.getMessage().contains("no whole number of nodes"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Topology.of(8, Topology.Link.PCIE, 32, 100, 64));
    }

    /**
     * A predictor calibrated on H100 runs warns of a transformer job on another GPU (its prediction moved with the
     * H100 cluster's coefficients) and not of one on an H100; the bundled model warns of neither.
     */
    @Test
    void aCalibrationOnOtherGpusIsWarnedOf() {
        Device h100 = DeviceCatalog.bundled().require("H100");
        Device b200 = DeviceCatalog.bundled().require("B200");
        Workload run = llama70b(h100, 2).build();
        RuntimePredictor mine = GPU.calibrate(List.of(Sample.of(run, GPU.predictMillis(run) * 1.1)));
        Workload other = llama70b(b200, 2).build();
        assertTrue(mine.predict(other).warnings().stream().anyMatch(x -> x.kind()
                == PredictionWarning.Kind.CALIBRATED_ELSEWHERE && x.message().contains("NVIDIA H100 80GB HBM3 only")),
                mine.predict(other).warnings().toString());
        assertTrue(mine.predictAll(List.of(other)).get(0).warnings().stream().anyMatch(x -> x.kind()
                == PredictionWarning.Kind.CALIBRATED_ELSEWHERE));
        assertFalse(mine.predict(run).warnings().stream().anyMatch(x -> x.kind()
                == PredictionWarning.Kind.CALIBRATED_ELSEWHERE));
        assertFalse(GPU.predict(other).warnings().stream().anyMatch(x -> x.kind()
                == PredictionWarning.Kind.CALIBRATED_ELSEWHERE));
    }
}
