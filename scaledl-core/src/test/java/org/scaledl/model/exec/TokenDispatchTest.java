package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.TransformerShape;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.MoeDispatcher;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Expert parallelism's token dispatch per dispatcher: the all-to-all a token's copy per chosen expert, the all-gather
 * every token to every other rank; DeepEP and HybridEP a token's copy per rank holding its experts, their saving
 * across nodes said where their experts span nodes.
 */
class TokenDispatchTest {
    /** Qwen3 30B-A3B: 128 experts, 8 a token, hidden 2,048. */
    private static final TransformerShape QWEN = HuggingFaceConfig.read(Path.of(
            "src/test/resources/transformers/qwen3-30b-a3b/config.json")).graph(1024).transformer().orElseThrow();
    /** Nodes of 8 GPUs, NVSwitch at 900 GB/s, 8 × 400 Gb/s a node. */
    private static final Topology NODES = Topology.of(8, Topology.Link.NVSWITCH, 900, 3200);

    /**
     * DeepEP and HybridEP move the all-to-all's bytes scaled by the ranks a token's experts lie on against its
     * {@code k} copies (their saving across nodes is not described), inside a node and across nodes; the all-gather
     * moves every other rank's tokens whole, {@code e/k} times the all-to-all's copies inside a domain, in 16 bits,
     * over the experts' tensor- and expert-parallel group.
     */
    @Test
    void flexDispatchersMoveTheAllToAllsBytesAndTheAllGatherEveryToken() {
        double tokens = 8192;
        for (int e : new int[] {8, 64}) {
            double a2a = MegatronExecution.allToAllMillis(NODES, e, 1, tokens, QWEN, Precision.BF16,
                    MoeDispatcher.ALLTOALL);
            double share = MegatronExecution.ranksTouched(QWEN.experts(), QWEN.topK(), e) / QWEN.topK();
            double latency = (e > 8 ? NODES.interNodeLatencyUs() : 2) * 1e-3 * Math.log(e) / Math.log(2);
            for (MoeDispatcher d : new MoeDispatcher[] {MoeDispatcher.DEEPEP, MoeDispatcher.HYBRIDEP}) {
                assertEquals(share, (MegatronExecution.allToAllMillis(NODES, e, 1, tokens, QWEN, Precision.BF16, d)
                        - latency) / (a2a - latency), 1e-9, d + " on " + e);
            }
        }
        // (64 ranks in one NVLink domain of 64: link-bound both; 64 / k = 8 times the all-to-all's copies)
        Topology domain = new Topology(64, Topology.Link.NVSWITCH, 900, 3200, Topology.DEFAULT_LATENCY_US, false, 64);
        double gather = MegatronExecution.allToAllMillis(domain, 64, 1, tokens, QWEN, Precision.BF16,
                MoeDispatcher.ALLGATHER);
        double inDomain = MegatronExecution.allToAllMillis(domain, 64, 1, tokens, QWEN, Precision.BF16,
                MoeDispatcher.ALLTOALL);
        double latency = 2e-3 * 6;
        assertEquals(64.0 / QWEN.topK(), (gather - latency) / (inDomain - latency), 1e-9);
        // in FP8 the all-to-all moves 1.03 bytes an element, the all-gather 16 bits still; with 2-way expert tensor
        // parallelism it gathers over the group of 2·e ranks
        assertEquals(gather, MegatronExecution.allToAllMillis(domain, 64, 1, tokens, QWEN, Precision.FP8,
                MoeDispatcher.ALLGATHER), 1e-12);
        double twoWay = MegatronExecution.allToAllMillis(new Topology(128, Topology.Link.NVSWITCH, 900, 3200,
                Topology.DEFAULT_LATENCY_US, false, 128), 64, 2, tokens, QWEN, Precision.BF16,
                MoeDispatcher.ALLGATHER);
        assertEquals(127.0 / 63, (twoWay - latency) / (gather - latency), 1e-9);
    }

    /** Where a flex dispatcher's experts' ranks span nodes, the prediction says what of its saving it leaves out. */
    @Test
    void aFlexDispatchersSavingAcrossNodesIsSaid() {
        var g = HuggingFaceConfig.read(Path.of("src/test/resources/transformers/qwen3-30b-a3b/config.json"))
                .graph(1024);
        java.util.function.BiFunction<Integer, MoeDispatcher, Workload> job = (e, d) -> Workload.builder(g)
                .batch(1).parallelism(Parallelism.of(e, 1, 1, 1).withExpert(e, 1)).precision(Precision.BF16)
                .moeDispatcher(d).build();
        String said = MegatronExecution.dispatcherNote(job.apply(64, MoeDispatcher.HYBRIDEP), NODES).orElseThrow();
        assertTrue(said.contains("hybridep") && said.contains("64 experts' ranks") && said.contains("per rank")
                && said.contains("once per node holding them is not described"), said);
        assertTrue(MegatronExecution.dispatcherNote(job.apply(8, MoeDispatcher.DEEPEP), NODES).isEmpty());
        assertTrue(MegatronExecution.dispatcherNote(job.apply(64, MoeDispatcher.ALLTOALL), NODES).isEmpty());
        Topology nvl72 = new Topology(4, Topology.Link.NVSWITCH, 900, 1600, Topology.DEFAULT_LATENCY_US, false, 72);
        assertTrue(MegatronExecution.dispatcherNote(job.apply(64, MoeDispatcher.DEEPEP), nvl72).isEmpty(),
                "inside one NVLink domain");
        IllegalArgumentException dense = assertThrows(IllegalArgumentException.class,
                () -> job.apply(1, MoeDispatcher.DEEPEP));
        assertTrue(dense.getMessage().contains("expert-parallel degree above 1"), dense.getMessage());
        IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class, () -> Workload.builder(g)
                .batch(2).parallelism(Parallelism.of(8, 1, 1, 2).withExpert(8, 1)).precision(Precision.BF16)
                .moeDispatcher(MoeDispatcher.ALLGATHER).expertCommOverlap(true).build());
        assertTrue(overlap.getMessage().contains("not allgather"), overlap.getMessage());
    }

    @Test
    void parsesMegatronCoresDispatchersAndNamesWhatItRefuses() {
        assertEquals(MoeDispatcher.ALLTOALL, MoeDispatcher.parse("alltoall"));
        assertEquals(MoeDispatcher.ALLGATHER, MoeDispatcher.parse("AllGather"));
        assertEquals(MoeDispatcher.DEEPEP, MoeDispatcher.parse("flex"));
        assertEquals(MoeDispatcher.DEEPEP, MoeDispatcher.parse(" DeepEP "));
        assertEquals(MoeDispatcher.HYBRIDEP, MoeDispatcher.parse("hybrid-ep"));
        for (MoeDispatcher d : MoeDispatcher.values()) {
            assertEquals(d, MoeDispatcher.parse(d.label()));
        }
        InvalidInputException nccl = assertThrows(InvalidInputException.class, () -> MoeDispatcher.parse("ncclep"));
        assertTrue(nccl.getMessage().contains("not described"), nccl.getMessage());
        InvalidInputException unknown = assertThrows(InvalidInputException.class, () -> MoeDispatcher.parse("a2av"));
        assertTrue(unknown.getMessage().contains("'a2av'") && unknown.getMessage().contains("hybridep"),
                unknown.getMessage());
    }
}
