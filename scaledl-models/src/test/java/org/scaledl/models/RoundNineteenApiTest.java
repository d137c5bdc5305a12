package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.MoeDispatcher;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.RecomputeModule;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Round nineteen: predictions physics forbids, found by sweeping a mixture of experts' and a precision's knobs one at a
 * time. Each case here fails on the code before.
 */
class RoundNineteenApiTest {
    private static final Path CONFIGS = Path.of("..", "scaledl-core", "src", "test", "resources", "transformers");
    /** Kimi K2's configuration as the bundled published runs carry it (DeepSeek-V3's architecture, 384 experts). */
    private static final Path KIMI = Path.of("..", "datasets", "gpu", "llm-public", "configs", "kimi-k2",
            "config.json");
    private static final RuntimePredictor GPU = BundledModels.load("gpu");

    /** Kimi K2 on 256 GPUs as 32 data × 8 pipeline stages of 4 chunks, 32 expert ranks, its all-to-all overlapped. */
    private static Workload kimi(String device, int seq, int microBatches, int zero, Precision precision,
            Topology topo) throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(KIMI);
        Workload.Builder b = Workload.builder(spec.graph(seq)).batch(microBatches)
                .device(DeviceCatalog.bundled().require(device)).precision(precision)
                .parallelism(Parallelism.of(32, 1, 8, microBatches).withVirtualStages(4).withExpert(32, 1)
                        .withZeroStage(zero))
                .moeDispatcher(MoeDispatcher.DEEPEP).unevenPipeline(true).expertCommOverlap(true);
        if (topo != null) {
            b.topology(topo);
        }
        if (zero == 3) {
            b.recompute(Recompute.SELECTIVE).recomputeModules(Set.of(RecomputeModule.MOE_ACT, RecomputeModule.LAYERNORM,
                    RecomputeModule.MLA_UP_PROJ));
        } else {
            b.recompute(Recompute.NONE);
        }
        return b.build();
    }

    /**
     * The overlapped all-to-all and ZeRO 3's gathers each hid behind the same compute: on a slow network a faster GPU
     * exposed both and was slower (Kimi K2, 1,600 Gb/s a node: H200 12,886 ms, B200 13,146 ms). The network carries
     * both; the compute hides them once.
     */
    @Test
    void aFasterGpuIsNotSlowerWhereTheAllToAllAndTheGathersShareTheNetwork() throws Exception {
        Topology slow = Topology.of(8, Topology.Link.NVSWITCH, 900, 1600);
        double h200 = GPU.predict(kimi("H200", 4096, 32, 3, Precision.BF16, slow)).millis();
        double b200 = GPU.predict(kimi("B200", 4096, 32, 3, Precision.BF16, slow)).millis();
        assertTrue(b200 < h200, "B200 " + b200 + " >= H200 " + h200);
    }

    /**
     * With fewer micro-batches than the interleaved schedule's warm-up takes, nothing pairs with another micro-batch
     * and the all-to-all stays exposed: 5 micro-batches through 8 stages of 4 chunks were predicted faster than 1
     * (2,878.7 against 2,925.9 ms, Kimi K2 on 256 B200s in FP8), each but one taken to hide its all-to-all.
     */
    @Test
    void moreMicroBatchesAreNeverFasterWhereTheWarmUpPairsNothing() throws Exception {
        double previous = 0;
        for (int m = 1; m <= 6; m++) {
            double ms = GPU.predict(kimi("B200", 8192, m, 1, Precision.FP8, null)).millis();
            assertTrue(ms > previous, m + " micro-batches: " + ms + " <= " + previous);
            previous = ms;
        }
    }

    /**
     * The attention core's products run in 16 bits under every low-precision recipe, and the breakdown says the same
     * time for them: the contractions' calibrated time was shared over every product by its work at its units' peak,
     * so under FP8 and NVFP4 (the linear layers' work at twice and four times the peak) the core took a larger share,
     * 30 % more under NVFP4 (Llama 3 70B on 64 GB200s).
     */
    @Test
    void theAttentionCoresTimeInTheBreakdownDoesNotMoveWithTheLinearLayersPrecision() throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("llama-3-70b").resolve("config.json"));
        double[] scores = new double[3];
        Precision[] recipes = {Precision.BF16, Precision.FP8, Precision.NVFP4};
        for (int i = 0; i < recipes.length; i++) {
            Prediction pr = GPU.predict(Workload.builder(spec.graph(8192)).batch(16)
                    .device(DeviceCatalog.bundled().require("GB200")).precision(recipes[i])
                    .parallelism(Parallelism.of(8, 8, 1, 16)).recompute(Recompute.NONE).build());
            scores[i] = pr.breakdown().stream().filter(c -> c.name().endsWith("core/scores"))
                    .mapToDouble(Prediction.Contribution::millis).sum();
            assertEquals(pr.millis(), pr.breakdown().stream().mapToDouble(Prediction.Contribution::millis).sum(),
                    1e-9 * pr.millis(), "the breakdown adds up to the step");
        }
        assertTrue(scores[0] > 0);
        assertEquals(scores[0], scores[1], 1e-9 * scores[0], "FP8");
        assertEquals(scores[0], scores[2], 1e-9 * scores[0], "NVFP4");
    }

    /**
     * What a job holds never rises with a choice that only saves memory: LoRA's adapters are trained parameters that
     * ZeRO shards as any (they were kept whole on every rank: Llama 3 8B at rank 512 on 8 H100s under ZeRO 3 held more
     * than full training), one layer's activations offloaded (two layers' staging was charged) and one layer
     * recomputed (its working set was added to every other layer's activations, though the layers after it have
     * freed theirs when it is recomputed) held more than none.
     */
    @Test
    void savingMemoryNeverCostsMemory() throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("llama-3-8b").resolve("config.json"));
        java.util.function.Function<java.util.function.UnaryOperator<Workload.Builder>, Double> gib = edit -> GPU
                .predict(edit.apply(Workload.builder(spec.graph(8192)).batch(16)
                        .device(DeviceCatalog.bundled().require("H100")).precision(Precision.BF16)
                        .parallelism(Parallelism.of(8, 1, 1, 16).withZeroStage(3)).recompute(Recompute.NONE)).build())
                .memoryGb().orElseThrow();
        double full = gib.apply(b -> b);
        for (int rank : new int[] {8, 128, 512}) {
            double lora = gib.apply(b -> b.lora(rank));
            assertTrue(lora <= full, "LoRA rank " + rank + ": " + lora + " > " + full);
        }
        double one = gib.apply(b -> b.offloadLayers(1));
        assertTrue(one <= full, "one layer offloaded: " + one + " > " + full);
        double recomputed = gib.apply(b -> b.recompute(Recompute.FULL).recomputeLayers(1));
        assertTrue(recomputed <= full, "one layer recomputed: " + recomputed + " > " + full);
        // every layer recomputed holds no more than all but one (the working layer's input was counted twice)
        double every = gib.apply(b -> b.recompute(Recompute.FULL));
        double allButOne = gib.apply(b -> b.recompute(Recompute.FULL).recomputeLayers(31));
        assertTrue(every <= allButOne, "every layer recomputed: " + every + " > " + allButOne);
    }

    /**
     * Megatron core refuses expert parallelism beside tensor parallelism without sequence parallelism (its
     * ModelParallelConfig: "When using expert parallelism and tensor parallelism, sequence parallelism must be used");
     * such a training job was predicted, and ranked by the layout search. Inference (a serving engine's) is not
     * Megatron core's to refuse.
     */
    @Test
    void expertWithTensorParallelismTrainsWithSequenceParallelismOnly() throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("mixtral-8x7b").resolve("config.json"));
        java.util.function.Function<Boolean, Workload> job = sp -> Workload.builder(spec.graph(4096)).batch(4)
                .device(DeviceCatalog.bundled().require("H100")).precision(Precision.BF16)
                .parallelism(Parallelism.of(4, 2, 1, 4).withExpert(4, 1).withSequenceParallel(sp))
                .recompute(Recompute.SELECTIVE).build();
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> GPU.predict(job.apply(false)));
        assertTrue(e.getMessage().contains("needs sequence parallelism"), e.getMessage());
        assertTrue(GPU.predict(job.apply(true)).millis() > 0);
        Workload infer = job.apply(false).toBuilder().phase(org.scaledl.workload.Phase.INFER)
                .recompute(Recompute.NONE).build();
        assertTrue(GPU.predict(infer).millis() > 0);
        for (org.scaledl.model.LayoutSearch.Layout l : new org.scaledl.model.LayoutSearch(GPU, spec.graph(4096),
                DeviceCatalog.bundled().require("H100"), 16, 64).precision(Precision.BF16).search()) {
            org.scaledl.workload.Parallelism par = l.parallelism();
            assertTrue(par.tensor() == 1 || par.expert() == 1 || par.sequenceParallel(), par.toString());
        }
    }

    /**
     * Offloading activations on a superchip takes the GPU's memory bandwidth for its copies, whatever its link to the
     * host hides: Llama 3 8B on 8 GB200s took 4,367 ms with 0, 20 or 32 layers offloaded (a helper's case).
     */
    @Test
    void offloadingOnASuperchipIsNotFree() throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("llama-3-8b").resolve("config.json"));
        double previous = 0;
        for (int layers : new int[] {0, 8, 20, 32}) {
            double ms = GPU.predict(Workload.builder(spec.graph(8192)).batch(16)
                    .device(DeviceCatalog.bundled().require("GB200")).precision(Precision.BF16)
                    .parallelism(Parallelism.of(8, 1, 1, 2)).recompute(Recompute.NONE).offloadLayers(layers).build())
                    .millis();
            assertTrue(ms > previous, layers + " layers offloaded: " + ms + " <= " + previous);
            previous = ms;
        }
    }

    /**
     * A GB200 rack's network is its 18 trays' together: a tray's 51,200 Gb/s (within the 800,000 a node may have) made
     * 921,600 Gb/s for the rack, refused deep inside a prediction with a figure the user never typed. The rack's
     * network is now at most the fastest any topology holds, and a faster tray network is never slower.
     */
    @Test
    void aTrayNetworkAsFastAsANodeMayHaveIsPredictedOnARack() throws Exception {
        TransformerSpec spec = HuggingFaceConfig.read(CONFIGS.resolve("llama-3-70b").resolve("config.json"));
        double previous = Double.MAX_VALUE;
        for (double gbps : new double[] {400, 25_600, 51_200, 800_000}) {
            double ms = GPU.predict(Workload.builder(spec.graph(4096)).batch(8)
                    .device(DeviceCatalog.bundled().require("GB200")).precision(Precision.BF16)
                    .parallelism(Parallelism.of(64, 2, 2, 8)).recompute(Recompute.NONE)
                    .topology(Topology.of(4, Topology.Link.NVSWITCH, 900, gbps, 72)).build()).millis();
            assertTrue(ms <= previous, gbps + " Gb/s: " + ms + " > " + previous);
            previous = ms;
        }
    }
}
