package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.LayerRole;
import org.scaledl.graph.ModelGraph;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;

/**
 * When Megatron's fused scale-mask-softmax kernel takes an unfused core's scores
 * ({@link MegatronExecution#scaleMaskSoftmaxFused}), read from the softmax layer's features, against the kernel's
 * conditions written out from the job's settings.
 */
class SoftmaxFallbackTest {
    private static final int[] HEADS = {8, 12, 16, 24, 32, 40, 48};
    private static final int[] SEQS = {16, 64, 96, 128, 512, 1000, 1024, 2048, 2052, 4096};

    /**
     * The softmax layer of a two-layer GPT's first block (an unfused core: the model's setting, or heads of 64
     * channels wider than a fused model's limit of 32 here).
     */
    private static LayerFeatures softmax(ModelGraph g, int b) {
        for (LayerFeatures f : FeatureExtractor.of(g).extract(b, Phase.TRAIN)) {
            if (g.role(f.layer()).kind() == LayerRole.Kind.ATTENTION_CORE && f.family() == OpFamily.SOFTMAX) {
                return f;
            }
        }
        throw new AssertionError("no softmax");
    }

    @Property(tries = 60)
    void theKernelTakesTheScoresAsMegatronsConditionsSay(@ForAll @IntRange(min = 1, max = 8) int b,
            @ForAll @IntRange(min = 0, max = 3) int log2t, @ForAll @IntRange(min = 0, max = 6) int h,
            @ForAll @IntRange(min = 0, max = 9) int s, @ForAll boolean fusedModel) {
        int t = 1 << log2t;
        int heads = HEADS[h];
        int seq = SEQS[s];
        if (heads % t != 0) {
            return;
        }
        ModelGraph g = TransformerSpec.decoder("gpt", 64 * heads, heads, 2, 1000).maxPositions(seq)
                .fusedAttention(fusedModel).fusedHeadLimit(32).build().graph(seq);
        LayerFeatures f = softmax(g, b);
        long batches = (long) b * heads / t;
        boolean expected = seq > 16 && seq <= (fusedModel ? 16_384 : 2_048) && seq % 4 == 0 && batches % 4 == 0
                && batches % (seq <= 128 ? 8 : 4) == 0;
        var shape = g.transformer().orElseThrow();
        assertEquals(expected, MegatronExecution.scaleMaskSoftmaxFused(f, b, shape, t, 1, 2),
                "b " + b + " heads " + heads + " t " + t + " seq " + seq + (fusedModel ? ", heads too wide" : ""));
        // 32-bit scores never: the kernel takes 16-bit ones only
        assertFalse(MegatronExecution.scaleMaskSoftmaxFused(f, b, shape, t, 1, 4));
    }

    /** The fallback moves more bytes than the fused kernel in each pass and keeps its probabilities in FP32. */
    @Property(tries = 10)
    void theFallbackCostsMoreThanTheKernel(@ForAll boolean sixteenBits) {
        double a = sixteenBits ? 2 : 4;
        MegatronExecution.SoftmaxFallback fb = MegatronExecution.SoftmaxFallback.of(a);
        assertTrue(fb.forward() > 1 && fb.backward() > 1 && fb.kernels() > 0);
        assertEquals(sixteenBits ? 2.0 : 1.0, fb.kept(a), 0);
    }
}
