package org.scaledl.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.model.plan.ProfilingPlan;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Device;
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Workload;

/**
 * The library used carelessly, as a caller might: each slip is refused where it is made, naming what was wrong, or
 * taken as the last call said; none comes back as a number or as an exception from inside the library.
 */
class CarelessUseTest {
    private static TransformerSpec.Builder small() {
        return TransformerSpec.decoder("small", 256, 4, 2, 1000);
    }

    /** Two specifications that predict differently are not equal: multi-token prediction layers count. */
    @Test
    void specificationsThatPredictDifferentlyAreNotEqual() {
        TransformerSpec none = small().build();
        TransformerSpec three = small().mtpLayers(3).build();
        assertNotEquals(none, three);
        assertEquals(none, small().build());
        assertEquals(none.hashCode(), small().build().hashCode());
    }

    /** A negative or huge size is refused naming the model; 0 takes the default. */
    @Test
    void sizesOutOfRangeAreRefusedNotDefaulted() {
        for (TransformerSpec.Builder b : List.of(small().kvHeads(-2), small().headDim(-1), small().ffn(-7),
                small().kvHeads(8), small().mtpLayers(-1), TransformerSpec.decoder("big", 1L << 62, 1, 2, 1000),
                TransformerSpec.decoder("novocab", 256, 4, 2, 0))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
            assertTrue(e.getMessage().startsWith("small: ") || e.getMessage().startsWith("big: ")
                    || e.getMessage().startsWith("novocab: "), e.getMessage());
        }
        TransformerSpec defaults = small().kvHeads(0).headDim(0).ffn(0).build();
        assertEquals(small().build(), defaults);
    }

    /** The last of {@code experts} and {@code moe} is the model's. */
    @Test
    void theLastMixtureOfExpertsCallWins() {
        TransformerSpec.Moe sixteen = new TransformerSpec.Moe(16, 4, 512, 0, false, false, false);
        assertEquals(16, small().experts(8, 2).moe(sixteen).build().moe().orElseThrow().experts());
        assertEquals(8, small().moe(sixteen).experts(8, 2).build().moe().orElseThrow().experts());
    }

    /** A null says which argument it was, in the library's words. */
    @Test
    void aNullIsNamed() {
        NullPointerException name = assertThrows(NullPointerException.class, () -> TransformerSpec.decoder(null, 256,
                4, 2, 1000));
        assertEquals("name", name.getMessage());
        NullPointerException kind = assertThrows(NullPointerException.class, () -> small().ffnKind(null));
        assertEquals("ffnKind", kind.getMessage());
        NullPointerException trainer = assertThrows(NullPointerException.class,
                () -> org.scaledl.model.RuntimePredictor.builder().name(null));
        assertEquals("name", trainer.getMessage());
        NullPointerException plan = assertThrows(NullPointerException.class, () -> ProfilingPlan.choose(null,
                List.of(), 1, 1, w -> new double[] {1}));
        assertEquals("candidates", plan.getMessage());
        NullPointerException column = assertThrows(NullPointerException.class,
                () -> org.scaledl.io.DeviceCatalog.bundled().require("H100 SXM").matrixPeak(null));
        assertEquals("column", column.getMessage());
    }

    /** Degrees whose product overflows divide no number of GPUs: none, not an arithmetic exception. */
    @Test
    void replicasOfDegreesBeyondTheGpusAreNone() {
        assertTrue(Parallelism.replicas(16, 1L << 62, 4, 1).isEmpty());
        assertTrue(Parallelism.replicas(16, 1L << 32, 1L << 32, 1L << 32).isEmpty());
        assertTrue(Parallelism.replicas(16, 32, 1, 1).isEmpty());
        assertEquals(2, Parallelism.replicas(16, 2, 2, 2).getAsInt());
    }

    /** A design row with a NaN is refused, as one with an infinity is, naming the candidate. */
    @Test
    void aDesignRowWithANaNIsRefused() {
        org.scaledl.graph.ModelGraph g = small().build().graph(128);
        List<Workload> c = java.util.stream.IntStream.rangeClosed(1, 5).mapToObj(b -> Workload.builder(g).batch(b)
                .build()).toList();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProfilingPlan.choose(c,
                List.of(), 2, 1, w -> new double[] {w.batch() == 3 ? Double.NaN : w.batch(), 1.0 / w.batch()}));
        assertTrue(e.getMessage().contains("candidate 2 has a non-finite value: NaN"), e.getMessage());
    }

    /** A breakdown's entry is a time: a NaN or an infinity is none. */
    @Test
    void aContributionIsAFiniteTime() {
        for (double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> org.scaledl.model.Prediction.Contribution.term("x", org.scaledl.model.Prediction.Kind.OVERHEAD,
                            bad));
            assertTrue(e.getMessage().contains("contribution x must be a finite time"), e.getMessage());
        }
    }

    /** Matrix peaks are pairs of a prefix and a number: another type is refused in those words. */
    @Test
    void matrixPeaksOfTheWrongTypesAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Device.MatrixPeaks.of(1, "fp16"));
        assertTrue(e.getMessage().contains("pairs of a column prefix"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Device.MatrixPeaks.of(null, 1.0));
    }

    /**
     * Settings a transformer job cannot have are refused as the command line refuses them: a LoRA rank wider than the
     * hidden size, a convolutions' memory format.
     */
    @Test
    void settingsAJobCannotHaveAreRefused() {
        org.scaledl.graph.ModelGraph g = small().build().graph(128);
        IllegalArgumentException lora = assertThrows(IllegalArgumentException.class, () -> Workload.builder(g)
                .batch(1).lora(512).build());
        assertTrue(lora.getMessage().contains("LoRA rank 512 is larger than the hidden size 256"), lora.getMessage());
        assertEquals(256, Workload.builder(g).batch(1).lora(256).build().loraRank());
        IllegalArgumentException format = assertThrows(IllegalArgumentException.class, () -> Workload.builder(g)
                .batch(1).memoryFormat(MemoryFormat.CHANNELS_LAST).build());
        assertTrue(format.getMessage().contains("a transformer built from its configuration has none"),
                format.getMessage());
    }

    /**
     * Round fourteen (a helper used the API as a scheduler would): an NVLink domain smaller than its node, or a node of no GPUs,
     * is refused where it is made, not taken or divided by; a layout search's result cannot be changed; nulls are
     * refused naming the argument.
     */
    @Test
    void round14SlipsAreRefusedWhereTheyAreMade() {
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class, () -> new org.scaledl.workload
                .Topology(8, org.scaledl.workload.Topology.Link.NVSWITCH, 450, 3200, 5, false, 3));
        assertTrue(small.getMessage().contains("an NVLink domain of 3 GPUs is smaller than a node of 8"),
                small.getMessage());
        assertTrue(org.scaledl.workload.Topology.domainProblem(8, 0).orElseThrow().contains("GPUs per node"));
        assertThrows(IllegalArgumentException.class, () -> org.scaledl.workload.Topology.of(8,
                org.scaledl.workload.Topology.Link.NVSWITCH, 300, 1600).with(java.util.Optional.of(0),
                java.util.Optional.empty()));
        for (Runnable r : List.<Runnable>of(() -> Workload.parseGradDtype(null), () -> org.scaledl.workload.GradReduce.parse(null),
                () -> Device.key(null), () -> org.scaledl.workload.Topology.assumedFor(null),
                () -> org.scaledl.io.DeviceCatalog.bundled().plusUser(null),
                () -> small().blocks(java.util.Arrays.asList(null, null)))) {
            NullPointerException npe = assertThrows(NullPointerException.class, r::run);
            assertTrue(npe.getMessage() != null && !npe.getMessage().isBlank(), "a null named");
        }
    }
}
