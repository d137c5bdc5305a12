package org.scaledl.gnn;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.scaledl.Checks;

/**
 * Several graphs concatenated for one pass of the network: node features stacked into one matrix, edges as index
 * arrays into it, and a graph id per node. Aggregations are segment sums over these indices; no dense adjacency
 * matrix is ever built, so memory is linear in nodes + edges.
 */
final class GraphBatch {
    final int nodes;
    final int graphs;
    final INDArray x;
    final int[] src;
    final int[] dst;
    final int[] nodeGraph;
    /** 1 / max(in-degree, 1) and 1 / max(out-degree, 1) per node, N × 1. */
    final INDArray inInv;
    final INDArray outInv;
    /** 1 / nodes per graph, G × 1. */
    final INDArray countInv;

    /**
     * @param x         N × F node features (double)
     * @param src       edge sources (node indices)
     * @param dst       edge targets
     * @param nodeGraph graph index of every node, 0 ≤ g < graphs
     * @param graphs    number of graphs
     */
    GraphBatch(INDArray x, int[] src, int[] dst, int[] nodeGraph, int graphs) {
        Checks.argument(src.length == dst.length, "edge arrays differ in length");
        Checks.argument(nodeGraph.length == x.rows(), "one graph id per node");
        this.nodes = (int) x.rows();
        this.graphs = graphs;
        this.x = x;
        this.src = src;
        this.dst = dst;
        this.nodeGraph = nodeGraph;
        double[] in = new double[nodes];
        double[] out = new double[nodes];
        for (int e = 0; e < src.length; e++) {
            out[src[e]]++;
            in[dst[e]]++;
        }
        double[] count = new double[graphs];
        for (int g : nodeGraph) {
            count[g]++;
        }
        for (int i = 0; i < nodes; i++) {
            in[i] = 1 / Math.max(1, in[i]);
            out[i] = 1 / Math.max(1, out[i]);
        }
        for (int g = 0; g < graphs; g++) {
            count[g] = 1 / Math.max(1, count[g]);
        }
        this.inInv = Nd4j.create(in, new long[] {nodes, 1}, DataType.DOUBLE);
        this.outInv = Nd4j.create(out, new long[] {nodes, 1}, DataType.DOUBLE);
        this.countInv = Nd4j.create(count, new long[] {graphs, 1}, DataType.DOUBLE);
    }
}
