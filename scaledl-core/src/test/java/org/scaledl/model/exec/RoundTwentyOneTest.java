package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TransformerShape;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.MoeDispatcher;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Round twenty-one's physics and inference: what a reviewer of the distributed formulas read in Megatron core, and
 * what a serving planner found the prefill could not say.
 */
class RoundTwentyOneTest {
    private static ModelGraph graph(String config, long seq) {
        return HuggingFaceConfig.read(Path.of("src/test/resources/transformers/" + config + "/config.json"))
                .graph(seq);
    }

    /**
     * Megatron core's dispatchers send the hidden states unquantised under FP8 and FP4 recipes (the all-to-all as they
     * are, DeepEP given them in 16 bits, HybridEP's FP8 dispatch off): the all-to-all moves what BF16's moves; it
     * moved 1.03 bytes an element, half of it.
     */
    @Test
    void anFp8RecipesAllToAllMovesSixteenBitHiddenStates() {
        TransformerShape qwen = graph("qwen3-30b-a3b", 1024).transformer().orElseThrow();
        Topology nodes = Topology.of(8, Topology.Link.NVSWITCH, 900, 3200);
        for (int e : new int[] {8, 64}) {
            for (MoeDispatcher d : new MoeDispatcher[] {MoeDispatcher.ALLTOALL, MoeDispatcher.DEEPEP,
                MoeDispatcher.HYBRIDEP}) {
                double bf16 = MegatronExecution.allToAllMillis(nodes, e, 1, 8192, qwen, Precision.BF16, d);
                for (Precision p : new Precision[] {Precision.FP8, Precision.MXFP8, Precision.NVFP4}) {
                    assertEquals(bf16, MegatronExecution.allToAllMillis(nodes, e, 1, 8192, qwen, p, d), 1e-12,
                            p + " " + d + " on " + e);
                }
            }
        }
    }

    /** A cost that droops past 2^20 rows: its efficiency halves with every doubling beyond. */
    private static final ToDoubleFunction<LayerFeatures> DROOP = f -> f.flopsFwd() * 1e-12
            * Math.max(1, f.outputElements() / f.outChannels() / (1 << 20));

    /**
     * An attention core's product (no weights) is cut in pieces of its rows as a weighted product is, down to
     * {@link MegatronExecution#MIN_ATTENTION_PIECE_ROWS}: a drooping efficiency past them (the trees' over 128k tokens
     * on one GPU) costs the pieces; within them, and as a product of another layer, it stands.
     */
    @Test
    void anAttentionCoresProductCostsNoMoreThanItsPieces() {
        double rows = 8 * MegatronExecution.MIN_ATTENTION_PIECE_ROWS;
        long keys = 131072;
        LayerFeatures scores = new LayerFeatures(0, OpFamily.DENSE, 256 * rows * keys, 512 * rows * keys,
                4 * rows * 128, 4 * rows * keys, 8 * rows * keys, 0, rows * keys, 1, 1, 1, 128, keys);
        double piece = DROOP.applyAsDouble(ParallelExecution.share(scores, 8, 1, 1));
        assertEquals(8 * piece, MegatronExecution.pieceMillis(scores, DROOP, true), 1e-9 * piece);
        assertTrue(MegatronExecution.pieceMillis(scores, DROOP, true) < DROOP.applyAsDouble(scores) / 2);
        assertEquals(DROOP.applyAsDouble(scores), MegatronExecution.pieceMillis(scores, DROOP, false), 0,
                "a weightless product of no attention core is not cut");
        LayerFeatures within = ParallelExecution.share(scores, 8, 1, 1);
        assertEquals(DROOP.applyAsDouble(within), MegatronExecution.pieceMillis(within, DROOP, true), 0);
    }

    /**
     * Past the published cores an attention core costs at most their size's time per row, however many rows: the time
     * never steps down as rows grow across the published size (a whole number of pieces alone let 32,769 tokens run
     * faster than 32,768), and per row never exceeds the published size's.
     */
    @Test
    void aCoresTimeIsContinuousAcrossThePublishedSize() {
        double published = MegatronExecution.MIN_ATTENTION_PIECE_ROWS;
        long keys = 32768;
        java.util.function.DoubleFunction<LayerFeatures> core = rows -> new LayerFeatures(0, OpFamily.DENSE,
                256 * rows * keys, 0, 4 * rows * 128, 4 * rows * keys, 0, 0, rows * keys, 1, 1, 1, 128, keys);
        double previous = 0;
        for (double rows = published * 0.9; rows <= published * 3.2; rows += published * 0.05) {
            double t = MegatronExecution.pieceMillis(core.apply(rows), DROOP, true);
            assertTrue(t >= previous * (1 - 1e-12), rows + " rows: " + t + " after " + previous);
            double atPublished = DROOP.applyAsDouble(core.apply(published));
            assertTrue(t <= Math.max(1, rows / published) * atPublished * (1 + 1e-9), rows + " rows");
            previous = t;
        }
    }

    /**
     * Without expert parallelism a mixture of experts' experts are split over the tensor ranks (Megatron core's
     * default expert tensor degree, and what serving engines do); with it, whole on their ranks, as the recipes set
     * it; a dense model has no experts to split.
     */
    @Test
    void anExpertTensorDegreeNotGivenIsTheTensorDegreeWithoutExpertParallelism() {
        ModelGraph mixtral = graph("mixtral-8x7b", 1024);
        assertEquals(2, Parallelism.defaultExpertTensor(2, 1, mixtral));
        assertEquals(1, Parallelism.defaultExpertTensor(2, 8, mixtral));
        assertEquals(1, Parallelism.defaultExpertTensor(4, 1, graph("llama-3-8b", 1024)));
    }

    /**
     * What tells a model that generates (whose prefill computes its last tokens' logits and no loss) from an encoder
     * alone, which scores every token: its self-attention masked causally, fused or not (BERT with a fused core was
     * taken for a decoder: its head cut to one token, its loss dropped).
     */
    @Test
    void generatesTellsDecodersFromEncodersFusedOrNot(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        assertTrue(MegatronExecution.generates(graph("llama-3-8b", 1024)));
        assertTrue(MegatronExecution.generates(graph("t5-small", 512)));
        assertTrue(MegatronExecution.generates(graph("nemotron-h-8b-base-8k", 1024)));
        assertFalse(MegatronExecution.generates(graph("bert-large-uncased", 128)));
        Path bert = Path.of("src/test/resources/transformers/bert-large-uncased/config.json");
        com.fasterxml.jackson.databind.node.ObjectNode c = (com.fasterxml.jackson.databind.node.ObjectNode)
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(bert.toFile());
        c.put("_attn_implementation", "sdpa");
        Path fused = dir.resolve("config.json");
        java.nio.file.Files.writeString(fused, c.toString());
        ModelGraph g = HuggingFaceConfig.read(fused).graph(128);
        assertTrue(g.transformer().orElseThrow().fusedAttention(), "a fused core");
        assertFalse(MegatronExecution.generates(g));
        Workload w = Workload.builder(g).batch(32).phase(Phase.INFER).precision(Precision.BF16).build();
        assertTrue(MegatronExecution.keyValueCacheNote(w).isEmpty(), "an encoder keeps no keys and values");
    }

    /**
     * The key/value cache note counts a chunked attention layer's chunk (Llama 4 Scout: 8,192 tokens in 36 of its 48
     * layers), as it counts a sliding window's: at 131,072 tokens over 8 tensor ranks about 0.9 GiB, where every
     * layer's whole sequence made 3.0.
     */
    @Test
    void theCacheNoteCountsAChunkedLayersChunk() {
        ModelGraph scout = graph("llama-4-scout-17b-16e", 131072);
        Workload w = Workload.builder(scout).batch(1).phase(Phase.INFER).precision(Precision.BF16)
                .parallelism(Parallelism.of(1, 8, 1, 1)).build();
        String note = MegatronExecution.keyValueCacheNote(w).orElseThrow();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("about ([0-9.]+) GiB").matcher(note);
        assertTrue(m.find(), note);
        // 12 global layers of 131,072 tokens and 36 chunked of 8,192, 2 x 8 x 128 elements a token, 2 bytes, 8 ranks
        double gib = (12.0 * 131072 + 36.0 * 8192) * 2048 * 2 / 8 / (1L << 30);
        assertEquals(gib, Double.parseDouble(m.group(1)), 0.051, note);
    }

    /** Token-by-token decoding is said not to be predicted; a prefill is what inference predicts. */
    @Test
    void decodingIsSaidNotToBePredicted() {
        assertEquals(Phase.INFER, Phase.parse("prefill"));
        InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(InvalidInputException.class,
                () -> Phase.parse("decode"));
        assertTrue(e.getMessage().contains("decoding") && e.getMessage().contains("prefill"), e.getMessage());
    }

    /** Experts that do not divide the ranks are refused saying what to give. */
    @Test
    void expertsNotDividingTheRanksSayWhatToGive() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Parallelism.of(1, 1, 1, 1).withExpert(8, 1));
        assertTrue(e.getMessage().contains("give a multiple of 8"), e.getMessage());
    }
}
