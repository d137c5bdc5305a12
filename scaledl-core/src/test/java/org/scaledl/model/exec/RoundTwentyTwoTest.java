package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.MoeDispatcher;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/** Round twenty-two's physics: the experts' dispatchers' own passes over the routed tokens, read in Megatron core. */
class RoundTwentyTwoTest {
    private static final Device H100 = DeviceCatalog.bundled().require("NVIDIA H100 80GB HBM3");
    private static final Device A100 = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");

    private static ModelGraph graph(String config) {
        return HuggingFaceConfig.read(Path.of("src/test/resources/transformers/" + config + "/config.json"))
                .graph(1024);
    }

    private static int passes(ModelGraph g, int e, Precision p, Device d, MoeDispatcher dispatcher) {
        Workload w = Workload.builder(g).batch(1).phase(Phase.TRAIN).device(d).precision(p)
                .parallelism(Parallelism.of(e, 1, 1, 1).withExpert(e, 1)).moeDispatcher(dispatcher).build();
        return MegatronExecution.dispatcherPasses(w, d);
    }

    /**
     * The all-to-all dispatcher sorts the copies a rank receives by local expert and back where it holds more than one
     * ({@code sort_chunks_by_idxs}, with expert parallelism), and under FP8 the grouped products pad each
     * expert's rows and unpad them ({@code TEGroupedMLP}, the all-gather dispatcher's too); DeepEP's and HybridEP's
     * permutation writes them sorted and padded.
     */
    @Test
    void theAllToAllDispatcherSortsAndPadsWhatTheOthersPermute() {
        ModelGraph gptOss = graph("gpt-oss-20b"); // 32 experts
        assertEquals(2, passes(gptOss, 8, Precision.BF16, H100, MoeDispatcher.ALLTOALL));
        assertEquals(4, passes(gptOss, 8, Precision.FP8, H100, MoeDispatcher.ALLTOALL));
        assertEquals(2, passes(gptOss, 32, Precision.FP8, H100, MoeDispatcher.ALLTOALL), "one expert a rank");
        assertEquals(0, passes(gptOss, 32, Precision.BF16, H100, MoeDispatcher.ALLTOALL));
        assertEquals(2, passes(gptOss, 8, Precision.FP8, A100, MoeDispatcher.ALLTOALL),
                "an A100 runs an FP8 recipe's products in 16 bits: nothing to pad");
        for (MoeDispatcher d : new MoeDispatcher[] {MoeDispatcher.DEEPEP, MoeDispatcher.HYBRIDEP}) {
            assertEquals(0, passes(gptOss, 8, Precision.FP8, H100, d), d.label());
        }
        assertEquals(2, passes(gptOss, 8, Precision.FP8, H100, MoeDispatcher.ALLGATHER), "padded, not sorted");
        assertEquals(0, passes(gptOss, 8, Precision.BF16, H100, MoeDispatcher.ALLGATHER));
        assertEquals(2, passes(gptOss, 1, Precision.FP8, H100, MoeDispatcher.ALLTOALL),
                "without expert parallelism padded too (the all-gather dispatcher's default there does not sort)");
        assertEquals(0, passes(gptOss, 1, Precision.BF16, H100, MoeDispatcher.ALLTOALL));
        assertEquals(0, passes(graph("llama-3-8b"), 1, Precision.FP8, H100, MoeDispatcher.ALLTOALL), "dense");
    }

    /** A copy of a permutation's output reads and writes what it wrote; its backward pass scales with those bytes. */
    @Test
    void aCopyPassMovesThePermutationsOutputBothWays() {
        // a permutation of 1,000 rows of 64 into 4,000 copies (4 bytes an element, as features count)
        LayerFeatures tile = new LayerFeatures(3, OpFamily.MOVEMENT, 0, 0, 4 * 64_000, 4 * 256_000, 4 * 320_000, 0,
                256_000, 1, 1, 1, 64, 64);
        LayerFeatures pass = MegatronExecution.copyPass(tile);
        assertEquals(4 * 256_000, pass.bytesRead(), 0);
        assertEquals(4 * 256_000, pass.bytesWritten(), 0);
        assertEquals(4 * 512_000, pass.bytesBwd(), 1e-6);
        assertEquals(0, pass.flopsFwd() + pass.flopsBwd() + pass.params(), 0);
        assertEquals(tile.outputElements(), pass.outputElements(), 0);
    }

    /**
     * DeepEP and HybridEP send a token once per rank holding any of its experts: its k copies where each rank holds
     * one expert, fewer as ranks hold more (never fewer than k over the experts a rank holds, nor more than the
     * ranks), one on one rank; the all-to-all sends k whatever the layout, so they never move more.
     */
    @Test
    void deepEpSendsATokenOncePerRankItsExpertsLieOn() {
        assertEquals(8, MegatronExecution.ranksTouched(64, 8, 64), 1e-9, "one expert a rank");
        assertEquals(1, MegatronExecution.ranksTouched(64, 8, 1), 0, "every expert on one rank");
        // 256 experts over 64 ranks of 4, top-8: 64 (1 - C(252, 8) / C(256, 8))
        double expected = 64 * (1 - java.util.stream.IntStream.range(0, 8).mapToDouble(i -> (252.0 - i) / (256 - i))
                .reduce(1, (a, b) -> a * b));
        assertEquals(expected, MegatronExecution.ranksTouched(256, 8, 64), 1e-9);
        for (int e : new int[] {2, 4, 8, 16, 32, 64, 128, 256}) {
            double d = MegatronExecution.ranksTouched(256, 8, e);
            assertTrue(d <= Math.min(8, e) + 1e-9 && d >= 8.0 / (256 / e) - 1e-9, e + ": " + d);
            if (e > 2) {
                assertTrue(d > MegatronExecution.ranksTouched(256, 8, e / 2), "more ranks, more of them touched: " + e);
            }
        }
        org.scaledl.graph.TransformerShape ds = graph("deepseek-v3").transformer().orElseThrow();
        org.scaledl.workload.Topology node = org.scaledl.workload.Topology.of(8, org.scaledl.workload.Topology.Link
                .NVSWITCH, 900, 3200);
        double a2a = MegatronExecution.allToAllMillis(node, 8, 1, 4096, ds, Precision.BF16, MoeDispatcher.ALLTOALL);
        double deep = MegatronExecution.allToAllMillis(node, 8, 1, 4096, ds, Precision.BF16, MoeDispatcher.DEEPEP);
        assertTrue(deep < a2a, deep + " ms against " + a2a);
        assertEquals(MegatronExecution.allToAllMillis(node, 8, 1, 4096, ds, Precision.BF16, MoeDispatcher.HYBRIDEP),
                deep, 0);
    }

    /**
     * With DeepSeek's group-limited routing (8 groups of 32 experts, a token's 8 within 4 of them) a token's experts lie
     * on at most 4 of 8 ranks of one group each: 4·(1 − C(96, 8)/C(128, 8)), not the 5.3 uniform routing touches;
     * over 64 ranks fewer than uniform routing's; over 4 ranks of two groups each, the ranks holding a picked group.
     */
    @Test
    void groupLimitedRoutingTouchesFewerRanks() {
        org.scaledl.graph.TransformerShape ds = graph("deepseek-v3").transformer().orElseThrow();
        assertEquals(8, ds.routingGroups());
        assertEquals(4, ds.groupsPicked());
        double expected = 4 * (1 - java.util.stream.IntStream.range(0, 8).mapToDouble(i -> (96.0 - i) / (128 - i))
                .reduce(1, (a, b) -> a * b));
        assertEquals(expected, MegatronExecution.ranksTouched(256, 8, 8, 8, 4), 1e-9);
        assertTrue(MegatronExecution.ranksTouched(256, 8, 64, 8, 4) < MegatronExecution.ranksTouched(256, 8, 64));
        assertEquals(4 * (1 - 15.0 / 70), MegatronExecution.ranksTouched(256, 8, 4, 8, 4), 1e-9);
        assertEquals(MegatronExecution.ranksTouched(256, 8, 8), MegatronExecution.ranksTouched(256, 8, 8, 0, 0), 0);
        assertEquals(MegatronExecution.ranksTouched(256, 8, 8), MegatronExecution.ranksTouched(256, 8, 8, 8, 8), 0,
                "every group picked: no limit");
        assertEquals(0, graph("qwen3-30b-a3b").transformer().orElseThrow().routingGroups());
    }
}
