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
    /** Node features per row. */
    final int features;
    /** N × F node features, row-major (what plain-Java inference reads). */
    final double[] xData;
    final int[] src;
    final int[] dst;
    final int[] nodeGraph;
    /** 1 / max(in-degree, 1) and 1 / max(out-degree, 1) per node. */
    final double[] inInvData;
    final double[] outInvData;
    /** 1 / nodes per graph. */
    final double[] countInvData;
    /** The ND4J forms, made on first use (training); inference never needs them. */
    private volatile INDArray[] arrays;

    /**
     * @param x         N × F node features (double)
     * @param src       edge sources (node indices)
     * @param dst       edge targets
     * @param nodeGraph graph index of every node, 0 ≤ g < graphs
     * @param graphs    number of graphs
     */
    GraphBatch(INDArray x, int[] src, int[] dst, int[] nodeGraph, int graphs) {
        this(x.dup('c').data().asDouble(), (int) x.columns(), src, dst, nodeGraph, graphs);
    }

    /**
     * @param x         N × F node features, row-major
     * @param features  F
     * @param src       edge sources (node indices)
     * @param dst       edge targets
     * @param nodeGraph graph index of every node, 0 ≤ g < graphs
     * @param graphs    number of graphs
     */
    GraphBatch(double[] x, int features, int[] src, int[] dst, int[] nodeGraph, int graphs) {
        Checks.argument(src.length == dst.length, "edge arrays differ in length");
        Checks.argument(features > 0 && x.length % features == 0, "node features are not N x F");
        Checks.argument(nodeGraph.length == x.length / features, "one graph id per node");
        this.nodes = x.length / features;
        this.features = features;
        this.graphs = graphs;
        this.xData = x;
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
        this.inInvData = in;
        this.outInvData = out;
        this.countInvData = count;
    }

    private INDArray[] arrays() {
        INDArray[] a = arrays;
        if (a == null) {
            a = new INDArray[] {Nd4j.create(xData, new long[] {nodes, features}, DataType.DOUBLE),
                Nd4j.create(inInvData, new long[] {nodes, 1}, DataType.DOUBLE),
                Nd4j.create(outInvData, new long[] {nodes, 1}, DataType.DOUBLE),
                Nd4j.create(countInvData, new long[] {graphs, 1}, DataType.DOUBLE)};
            arrays = a;
        }
        return a;
    }

    /** N × F node features. */
    INDArray x() {
        return arrays()[0];
    }

    /** N × 1: 1 / max(in-degree, 1). */
    INDArray inInv() {
        return arrays()[1];
    }

    /** N × 1: 1 / max(out-degree, 1). */
    INDArray outInv() {
        return arrays()[2];
    }

    /** G × 1: 1 / nodes per graph. */
    INDArray countInv() {
        return arrays()[3];
    }
}
