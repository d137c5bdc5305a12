package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.transformer.TransformerSpec.Block;
import org.scaledl.transformer.TransformerSpec.FfnKind;
import org.scaledl.transformer.TransformerSpec.Norm;

/**
 * The graph's parameter count against a closed form written from the architecture alone, over decoders of random
 * sizes and settings: norms before (and with sandwich norms after) each sub-layer, query/key norms per head or over the
 * whole projections, biases, gated or plain MLPs, tied or untied heads, and layers of their own attention geometry
 * whose keys may serve as values.
 */
class ParameterCountProperties {

    @Property(tries = 300)
    void theGraphCountsWhatTheArchitectureHas(@ForAll @IntRange(min = 1, max = 8) int headsLog,
            @ForAll @IntRange(min = 0, max = 3) int kvShift, @ForAll @IntRange(min = 1, max = 4) int headDim32,
            @ForAll @IntRange(min = 1, max = 64) int ffn32, @ForAll @IntRange(min = 1, max = 6) int layers,
            @ForAll @IntRange(min = 1, max = 5000) int vocab, @ForAll @IntRange(min = 0, max = 63) int flags,
            @ForAll @IntRange(min = 0, max = 63) int globalLayers, @ForAll @IntRange(min = 1, max = 4) int globalDim32,
            @ForAll @IntRange(min = 0, max = 3) int globalKvShift, @ForAll @IntRange(min = 1, max = 16) int hidden64,
            @ForAll @IntRange(min = 0, max = 2) int activation) {
        long heads = 1L << (headsLog - 1);
        long kv = Math.max(1, heads >> kvShift);
        long hd = 32L * headDim32;
        long hidden = 64L * hidden64;
        long ffn = 32L * ffn32;
        boolean sandwich = (flags & 1) != 0;
        boolean qkNorm = (flags & 2) != 0;
        boolean whole = qkNorm && (flags & 4) != 0;
        boolean bias = (flags & 8) != 0;
        boolean tied = (flags & 16) != 0;
        boolean layerNorm = (flags & 32) != 0;
        FfnKind kind = List.of(FfnKind.GELU, FfnKind.SWIGLU, FfnKind.GATED_GELU).get(activation);
        long gkv = Math.max(1, heads >> globalKvShift);
        long ghd = 32L * globalDim32;
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            Block b = Block.dense(ffn);
            int g = (globalLayers >> (i % 6)) & 1;
            blocks.add(g == 1 ? b.withAttention(ghd, gkv, (globalLayers & 1) == 0) : b);
        }
        TransformerSpec t = TransformerSpec.decoder("p", hidden, heads, layers, vocab).kvHeads(kv).headDim(hd)
                .ffn(ffn).ffnKind(kind).norm(layerNorm ? Norm.LAYER_NORM : Norm.RMS_NORM).bias(bias)
                .tiedEmbeddings(tied).qkNorm(qkNorm).wholeQkNorm(whole).sandwichNorm(sandwich).blocks(blocks)
                .attentionDropout(false).hiddenDropout(false).fusedAttention(true).build();

        long norm = layerNorm ? 2 * hidden : hidden;
        long expected = vocab * hidden + (tied ? 0 : vocab * hidden) + norm;
        for (Block b : blocks) {
            long d = b.headDim() > 0 ? b.headDim() : hd;
            long k = b.kvHeads() > 0 ? b.kvHeads() : kv;
            long q = heads * d;
            long kvOut = (b.keysAsValues() ? 1 : 2) * k * d;
            long attention = hidden * (q + kvOut) + (bias ? q + kvOut : 0) + q * hidden + (bias ? hidden : 0);
            long qkNorms = !qkNorm ? 0 : whole ? q + k * d : 2 * d;
            long up = kind.gated() ? 2 * ffn : ffn;
            long mlp = hidden * up + (bias ? up : 0) + ffn * hidden + (bias ? hidden : 0);
            long norms = (sandwich ? 4 : 2) * norm;
            expected += attention + qkNorms + mlp + norms;
        }
        assertEquals(expected, t.parameterCount(), t.toString());
    }
}
