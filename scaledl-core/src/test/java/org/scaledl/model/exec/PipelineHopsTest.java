package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.scaledl.workload.Topology;

/** Which of a job's hops and groups leave a node ({@link ParallelExecution#pipelineHops}, {@link MegatronExecution#ranksPerNode}). */
class PipelineHopsTest {

    /** The hops at a node's edge, in Megatron's rank order: a slow reference over every rank pair. */
    @Test
    void theHopsLeavingANodeAreThoseAtItsEdges() {
        Topology eight = Topology.of(8, Topology.Link.NVSWITCH, 450, 400);
        // stages of 4 ranks, two a node: of 0-1-2-3 only 1-2 leaves; interleaved twice 1-2, 3-0 and 1-2 again
        assertArrayEquals(new int[] {3, 1}, ParallelExecution.pipelineHops(eight, 4, 4, 1));
        assertArrayEquals(new int[] {7, 3}, ParallelExecution.pipelineHops(eight, 4, 4, 2));
        assertArrayEquals(new int[] {3, 3}, ParallelExecution.pipelineHops(eight, 8, 4, 1));
        assertArrayEquals(new int[] {7, 0}, ParallelExecution.pipelineHops(eight, 1, 8, 1));
        // stages of 3 straddle nodes of 8: 0-1 (ranks 0-2 to 3-5) stays, 1-2 (3-5 to 6-8) and 2-3 (6-8 to 9-11) leave
        assertArrayEquals(new int[] {3, 2}, ParallelExecution.pipelineHops(eight, 3, 4, 1));
        // a rack of 72 GPUs in trays of 4: its hops leave the rack, not a tray
        Topology rack = Topology.of(4, Topology.Link.NVSWITCH, 900, 1600, 72);
        for (Topology topo : new Topology[] {eight, rack}) {
            int size = Math.max(topo.gpusPerNode(), topo.nvlinkDomain());
            reference(topo, size);
        }
    }

    /** Every stage size, depth and chunk count against the ranks placed {@code size} a node (or domain) in turn. */
    private static void reference(Topology topo, int size) {
        for (int s = 1; s <= 20; s++) {
            for (int p = 2; p <= 12; p++) {
                for (int v = 1; v <= 3; v++) {
                    int[] h = ParallelExecution.pipelineHops(topo, s, p, v);
                    // the ranks placed node by node, size at a time, each stage's s of them in turn
                    int[] node = new int[p * s];
                    int filled = 0;
                    int current = 0;
                    for (int r = 0; r < node.length; r++) {
                        if (filled == size) {
                            current++;
                            filled = 0;
                        }
                        node[r] = current;
                        filled++;
                    }
                    int leaving = 0;
                    for (int k = 0; k < p * v - 1; k++) {
                        boolean any = false;
                        for (int r = 0; r < s; r++) {
                            any |= node[(k % p) * s + r] != node[((k + 1) % p) * s + r];
                        }
                        leaving += any ? 1 : 0;
                    }
                    assertEquals(p * v - 1, h[0]);
                    assertEquals(leaving, h[1], s + " " + p + " " + v);
                }
            }
        }
    }

    /**
     * The ranks on a side of the slowest tensor-parallel group ({@link MegatronExecution#ranksPerNode}) against every
     * group of the job's: the whole group where none of them straddles a node's edge, else gcd(group, node).
     */
    @Test
    void theSlowestGroupStraddlesOnlyWhereOneOfTheJobsDoes() {
        for (int size = 1; size <= 24; size++) {
            for (int node = 1; node <= 80; node++) {
                for (int ranks = size; ranks <= 400; ranks += size) {
                    int gcd = java.math.BigInteger.valueOf(size).gcd(java.math.BigInteger.valueOf(node)).intValue();
                    boolean straddles = false;
                    for (int k = 0; k < ranks / size; k++) {
                        straddles |= k * size / node != (k * size + size - 1) / node;
                    }
                    int expected = size > node || straddles ? gcd : size;
                    assertEquals(expected, MegatronExecution.ranksPerNode(size, node, ranks),
                            size + " " + node + " " + ranks);
                }
            }
        }
        // GB200's domain of 72: a job of 32 holds two whole groups of 16; one of 256 has ranks 64-79 straddle it
        assertEquals(16, MegatronExecution.ranksPerNode(16, 72, 32));
        assertEquals(8, MegatronExecution.ranksPerNode(16, 72, 256));
    }
}
