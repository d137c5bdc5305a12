package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.transformer.TransformerSpec.Block;

/**
 * Which attention cores a graph fuses, over decoders of random head sizes (up to 640), layers of their own attention
 * geometry, fused or not, and fused kernels of random widest heads ({@link TransformerSpec#fusedHeadLimit()}): a
 * layer's core is fused exactly where the model's is and its heads are no wider than the limit; the fusion never
 * changes the parameters; and a layer's split names its own keys and values exactly where its geometry is its own.
 */
class AttentionCoreProperties {

    @Property(tries = 200)
    void aCoreIsFusedWhereItsHeadsFitTheKernel(@ForAll @IntRange(min = 1, max = 6) int headsLog,
            @ForAll @IntRange(min = 0, max = 2) int kvShift, @ForAll @IntRange(min = 1, max = 20) int headDim32,
            @ForAll @IntRange(min = 1, max = 20) int ownDim32, @ForAll @IntRange(min = 0, max = 2) int ownKvShift,
            @ForAll @IntRange(min = 1, max = 6) int layers, @ForAll @IntRange(min = 0, max = 63) int ownLayers,
            @ForAll @IntRange(min = 0, max = 3) int limitChoice, @ForAll @IntRange(min = 2, max = 20) int limit32,
            @ForAll boolean fused, @ForAll boolean keysAsValues) {
        long heads = 1L << (headsLog - 1);
        long kv = Math.max(1, heads >> kvShift);
        long hd = 32L * headDim32;
        long limit = switch (limitChoice) {
            case 0 -> TransformerSpec.MAX_FUSED_HEAD_SIZE;
            case 1 -> TransformerSpec.MAX_SIZE;
            default -> 32L * limit32;
        };
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            Block b = Block.dense(512);
            blocks.add(((ownLayers >> i) & 1) == 1 ? b.withAttention(32L * ownDim32, Math.max(1, heads >> ownKvShift),
                    keysAsValues) : b);
        }
        TransformerSpec.Builder builder = TransformerSpec.decoder("c", 256, heads, layers, 1000).kvHeads(kv)
                .headDim(hd).ffn(512).blocks(blocks).attentionDropout(false).hiddenDropout(false);
        TransformerSpec spec = builder.fusedAttention(fused).fusedHeadLimit(limit).build();
        assertEquals(builder.fusedAttention(!fused).build().parameterCount(), spec.parameterCount(), "fusion");

        ModelGraph g = spec.graph(256);
        Map<String, Layer> byName = new HashMap<>();
        g.layers().forEach(l -> byName.put(l.name(), l));
        Blocks kinds = g.blocks().orElseThrow();
        for (int k = 0; k < kinds.kinds(); k++) {
            Block b = blocks.get(kinds.pattern().indexOf(k));
            long d = b.headDim() > 0 ? b.headDim() : hd;
            // one kind of block is named without its index
            String c = "layers/block" + (kinds.kinds() == 1 ? "" : Integer.toString(k)) + "/attn/core";
            boolean expected = fused && d <= limit;
            assertEquals(expected, byName.get(c + "/scores").keepsTilesOnChip(), c + " of heads of " + d);
            assertEquals(expected, byName.get(c + "/context").keepsTilesOnChip(), c);
            boolean own = b.headDim() > 0 || b.kvHeads() > 0 || b.keysAsValues();
            java.util.Optional<long[]> named = byName.get(c + "/split").keyValueHeads();
            assertEquals(own, named.isPresent(), c);
            named.ifPresent(h -> assertTrue(h[0] == (b.kvHeads() > 0 ? b.kvHeads() : kv) && h[1] == d, c));
        }
    }
}
