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
import org.scaledl.workload.Phase;

/**
 * When Megatron's fused scale-mask-softmax kernel takes an unfused core's scores
 * ({@link MegatronExecution#scaleMaskSoftmaxFused}), read from the softmax layer's features, against the kernel's
 * conditions written out from the job's settings.
 */
class SoftmaxFallbackTest {
    private static final int[] HEADS = {8, 12, 16, 24, 32, 40, 48};
    private static final int[] SEQS = {16, 64, 96, 100, 128, 512, 1001, 1024, 2048, 2052, 4096, 4100, 8192, 16384};

    /**
     * The softmax layer of a two-layer transformer's first block (an unfused core: the model's setting, or heads of
     * 64 channels wider than a fused model's limit of 32 here).
     */
    private static int softmax(ModelGraph g) {
        for (int i = 0; i < g.layers().size(); i++) {
            if (g.role(i).kind() == LayerRole.Kind.ATTENTION_CORE && g.layer(i).opType().equals("Softmax")) {
                return i;
            }
        }
        throw new AssertionError("no softmax");
    }

    /**
     * Megatron's conditions written out from the job's settings: a decoder's scores masked causally, an encoder's by
     * padding; a model of fused cores whose heads are too wide runs Transformer Engine's unfused attention, whose
     * kernel takes fewer than 16,384 keys in a multiple of 8.
     */
    @Property(tries = 80)
    void theKernelTakesTheScoresAsMegatronsConditionsSay(@ForAll @IntRange(min = 1, max = 8) int b,
            @ForAll @IntRange(min = 0, max = 3) int log2t, @ForAll @IntRange(min = 0, max = 6) int h,
            @ForAll @IntRange(min = 0, max = 13) int s, @ForAll boolean fusedModel, @ForAll boolean encoder) {
        int t = 1 << log2t;
        int heads = HEADS[h];
        int seq = SEQS[s];
        if (heads % t != 0) {
            return;
        }
        TransformerSpec.Builder spec = encoder ? TransformerSpec.encoder("bert", 64 * heads, heads, 2, 1000)
                : TransformerSpec.decoder("gpt", 64 * heads, heads, 2, 1000);
        ModelGraph g = spec.maxPositions(seq).fusedAttention(fusedModel).fusedHeadLimit(32).build().graph(seq);
        int i = softmax(g);
        LayerFeatures f = FeatureExtractor.of(g).extract(b, Phase.TRAIN).stream().filter(x -> x.layer() == i)
                .findFirst().orElseThrow();
        long batches = (long) b * heads / t;
        int perBlock = seq <= 128 ? 8 : 4;
        boolean keysTaken = fusedModel ? seq < 16_384 && seq % 8 == 0 : seq <= 4_096 && seq % 4 == 0;
        boolean expected = seq > 16 && keysTaken && seq % 4 == 0 && batches % 4 == 0
                && (encoder ? seq % perBlock == 0 : batches % perBlock == 0);
        assertEquals(encoder, g.layer(i).paddingMask());
        var shape = g.transformer().orElseThrow();
        assertEquals(expected, MegatronExecution.scaleMaskSoftmaxFused(f, g.layer(i).paddingMask(), b, shape, t, 1,
                2), (encoder ? "encoder" : "decoder") + " b " + b + " heads " + heads + " t " + t + " seq " + seq
                + (fusedModel ? ", heads too wide" : ""));
        // 32-bit scores never: the kernel takes 16-bit ones only
        assertFalse(MegatronExecution.scaleMaskSoftmaxFused(f, g.layer(i).paddingMask(), b, shape, t, 1, 4));
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
