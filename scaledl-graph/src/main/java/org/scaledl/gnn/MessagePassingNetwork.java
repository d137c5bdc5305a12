package org.scaledl.gnn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.scaledl.Checks;

/**
 * A message-passing graph network over layer DAGs, with hand-written forward and backward passes on ND4J (no
 * SameDiff). For node features {@code X} (N × F):
 *
 * <pre>
 *   H₀ = relu(X·W_in + b_in)
 *   Hₖ = relu(Hₖ₋₁·W_self + mean_{u→v} Hₖ₋₁[u]·W_fwd + mean_{v→w} Hₖ₋₁[w]·W_bwd + b) + Hₖ₋₁     k = 1..K
 *   P  = mean over each graph's nodes of H_K                                  (one row per graph)
 *   out = relu([P[g(s)], Cₛ]·W₁ + b₁)·w₂ + b₂                                  (one value per sample s)
 * </pre>
 *
 * Messages flow along data edges in both directions with separate weights (GraphSAGE-style mean aggregation with a
 * residual). In the attention variant ({@code attention = true}) each mean is replaced by GAT-style attention over the
 * node's neighbours in that direction ({@link EdgeAttention}, scoring vectors {@code q, r} per round and direction); each sample reads out its graph's pooled embedding together with its own context {@code Cₛ}
 * (workload settings), so one graph embedding serves every workload of that graph. Loss: mean squared error.
 * Parameters are double precision and held in insertion order; the network is not thread-safe.
 */
final class MessagePassingNetwork {
    final int features;
    final int hidden;
    final int rounds;
    final int context;
    final boolean attention;
    final Map<String, INDArray> params = new LinkedHashMap<>();

    MessagePassingNetwork(int features, int hidden, int rounds, int context, long seed) {
        this(features, hidden, rounds, context, false, seed);
    }

    MessagePassingNetwork(int features, int hidden, int rounds, int context, boolean attention, long seed) {
        Checks.argument(features > 0 && hidden > 0 && rounds >= 0 && context >= 0, "bad sizes");
        this.features = features;
        this.hidden = hidden;
        this.rounds = rounds;
        this.context = context;
        this.attention = attention;
        Random r = new Random(seed);
        for (Map.Entry<String, long[]> e : shapes(features, hidden, rounds, context, attention).entrySet()) {
            String name = e.getKey();
            int in = (int) e.getValue()[0];
            int out = (int) e.getValue()[1];
            INDArray value;
            if (name.equals("b_out")) {
                value = Nd4j.zeros(DataType.DOUBLE, 1, 1);
            } else if (name.startsWith("b_")) {
                // Small positive biases keep ReLU units off their kink at exactly zero (an all-zero pooled row
                // otherwise puts every readout unit there).
                value = bias(out);
            } else {
                value = glorot(r, in, out);
                if (name.startsWith("W_self") || name.startsWith("W_fwd") || name.startsWith("W_bwd")) {
                    value.muli(0.5);
                } else if (name.equals("w_out")) {
                    value.muli(0.1);
                }
            }
            params.put(name, value);
        }
    }

    /**
     * The parameters of a network of these sizes, in order, with their shapes {@code {rows, columns}}: the one
     * definition of the network's layout (its initialisation and a saved file's check both read it).
     */
    static Map<String, long[]> shapes(int features, int hidden, int rounds, int context, boolean attention) {
        Map<String, long[]> out = new LinkedHashMap<>();
        out.put("W_in", new long[] {features, hidden});
        out.put("b_in", new long[] {1, hidden});
        for (int k = 1; k <= rounds; k++) {
            out.put("W_self" + k, new long[] {hidden, hidden});
            out.put("W_fwd" + k, new long[] {hidden, hidden});
            out.put("W_bwd" + k, new long[] {hidden, hidden});
            out.put("b_round" + k, new long[] {1, hidden});
            if (attention) {
                for (String v : new String[] {"q_fwd", "r_fwd", "q_bwd", "r_bwd"}) {
                    out.put(v + k, new long[] {hidden, 1});
                }
            }
        }
        out.put("W_read", new long[] {hidden + context, hidden});
        out.put("b_read", new long[] {1, hidden});
        out.put("w_out", new long[] {hidden, 1});
        out.put("b_out", new long[] {1, 1});
        return out;
    }

    /** A fresh 1 × n row of 0.01 (its own buffer: parameters must never share storage). */
    private static INDArray bias(int n) {
        double[] v = new double[n];
        java.util.Arrays.fill(v, 0.01);
        return Nd4j.create(v, new long[] {1, n}, DataType.DOUBLE);
    }

    private static INDArray glorot(Random r, int in, int out) {
        double scale = Math.sqrt(6.0 / (in + out));
        double[] v = new double[in * out];
        for (int i = 0; i < v.length; i++) {
            v[i] = (2 * r.nextDouble() - 1) * scale;
        }
        return Nd4j.create(v, new long[] {in, out}, DataType.DOUBLE);
    }

    /** Intermediate values of one forward pass, kept for the backward pass. */
    static final class Pass {
        INDArray a0;
        final List<INDArray> h = new ArrayList<>();
        final List<INDArray> fwd = new ArrayList<>();
        final List<INDArray> bwd = new ArrayList<>();
        final List<INDArray> z = new ArrayList<>();
        final List<EdgeAttention.Cache> attFwd = new ArrayList<>();
        final List<EdgeAttention.Cache> attBwd = new ArrayList<>();
        INDArray pooled;
        INDArray readIn;
        INDArray u;
        INDArray v;
        INDArray out;
    }

    /**
     * Forward pass.
     *
     * @param b           the graphs
     * @param sampleGraph graph index of each sample
     * @param ctx         S × context sample settings
     */
    Pass forward(GraphBatch b, int[] sampleGraph, INDArray ctx) {
        Pass p = new Pass();
        p.a0 = b.x().mmul(params.get("W_in")).addiRowVector(params.get("b_in"));
        INDArray h = relu(p.a0);
        p.h.add(h);
        for (int k = 1; k <= rounds; k++) {
            INDArray f;
            INDArray bw;
            if (attention) {
                EdgeAttention.Cache[] c = new EdgeAttention.Cache[1];
                f = EdgeAttention.forward(h, b.src, b.dst, params.get("q_fwd" + k), params.get("r_fwd" + k), c);
                p.attFwd.add(c[0]);
                bw = EdgeAttention.forward(h, b.dst, b.src, params.get("q_bwd" + k), params.get("r_bwd" + k), c);
                p.attBwd.add(c[0]);
            } else {
                f = Tensors.segmentSum(Tensors.gather(h, b.src), b.dst, b.nodes).muliColumnVector(b.inInv());
                bw = Tensors.segmentSum(Tensors.gather(h, b.dst), b.src, b.nodes).muliColumnVector(b.outInv());
            }
            INDArray z = h.mmul(params.get("W_self" + k)).addi(f.mmul(params.get("W_fwd" + k)))
                    .addi(bw.mmul(params.get("W_bwd" + k))).addiRowVector(params.get("b_round" + k));
            p.fwd.add(f);
            p.bwd.add(bw);
            p.z.add(z);
            h = relu(z).addi(h);
            p.h.add(h);
        }
        p.pooled = Tensors.segmentSum(h, b.nodeGraph, b.graphs).muliColumnVector(b.countInv());
        INDArray perSample = Tensors.gather(p.pooled, sampleGraph);
        p.readIn = context > 0 ? Nd4j.hstack(perSample, ctx) : perSample;
        p.u = p.readIn.mmul(params.get("W_read")).addiRowVector(params.get("b_read"));
        p.v = relu(p.u);
        p.out = p.v.mmul(params.get("w_out")).addiRowVector(params.get("b_out"));
        return p;
    }

    private static INDArray relu(INDArray z) {
        return z.mul(Tensors.reluMask(z));
    }

    /** Mean squared error of a pass against targets (S × 1). */
    static double loss(Pass p, INDArray y) {
        INDArray d = p.out.sub(y);
        return d.mul(d).meanNumber().doubleValue();
    }

    /** Weighted mean squared error: {@code Σ w (out − y)² / Σ w} (weights S × 1, not all zero). */
    static double loss(Pass p, INDArray y, INDArray weights) {
        INDArray d = p.out.sub(y);
        return d.mul(d).muli(weights).sumNumber().doubleValue() / weights.sumNumber().doubleValue();
    }

    /**
     * Gradients of {@link #loss} with respect to every parameter.
     *
     * @return gradients by parameter name, same shapes as {@link #params}
     */
    Map<String, INDArray> backward(GraphBatch b, int[] sampleGraph, Pass p, INDArray y) {
        return backward(b, sampleGraph, p, y, Nd4j.onesLike(y));
    }

    /** Gradients of the weighted loss {@link #loss(Pass, INDArray, INDArray)}. */
    Map<String, INDArray> backward(GraphBatch b, int[] sampleGraph, Pass p, INDArray y, INDArray weights) {
        Map<String, INDArray> g = new LinkedHashMap<>();
        INDArray dOut = p.out.sub(y).muli(weights).muli(2.0 / weights.sumNumber().doubleValue());
        g.put("w_out", p.v.transpose().mmul(dOut));
        g.put("b_out", dOut.sum(true, 0));
        INDArray dU = dOut.mmul(params.get("w_out").transpose()).muli(Tensors.reluMask(p.u));
        g.put("W_read", p.readIn.transpose().mmul(dU));
        g.put("b_read", dU.sum(true, 0));
        INDArray dRead = dU.mmul(params.get("W_read").transpose());
        INDArray dPerSample = dRead.get(org.nd4j.linalg.indexing.NDArrayIndex.all(),
                org.nd4j.linalg.indexing.NDArrayIndex.interval(0, hidden)).dup();
        INDArray dPooled = Tensors.segmentSum(dPerSample, sampleGraph, b.graphs);
        INDArray dH = Tensors.gather(dPooled.muliColumnVector(b.countInv()), b.nodeGraph);
        for (int k = rounds; k >= 1; k--) {
            INDArray hPrev = p.h.get(k - 1);
            INDArray dZ = dH.mul(Tensors.reluMask(p.z.get(k - 1)));
            g.put("W_self" + k, hPrev.transpose().mmul(dZ));
            g.put("W_fwd" + k, p.fwd.get(k - 1).transpose().mmul(dZ));
            g.put("W_bwd" + k, p.bwd.get(k - 1).transpose().mmul(dZ));
            g.put("b_round" + k, dZ.sum(true, 0));
            INDArray dPrev = dH.add(dZ.mmul(params.get("W_self" + k).transpose()));
            if (attention) {
                INDArray dF = dZ.mmul(params.get("W_fwd" + k).transpose());
                INDArray dB = dZ.mmul(params.get("W_bwd" + k).transpose());
                INDArray[] qr = new INDArray[2];
                dPrev.addi(EdgeAttention.backward(hPrev, b.src, b.dst, params.get("q_fwd" + k),
                        params.get("r_fwd" + k), p.attFwd.get(k - 1), dF, qr));
                g.put("q_fwd" + k, qr[0]);
                g.put("r_fwd" + k, qr[1]);
                dPrev.addi(EdgeAttention.backward(hPrev, b.dst, b.src, params.get("q_bwd" + k),
                        params.get("r_bwd" + k), p.attBwd.get(k - 1), dB, qr));
                g.put("q_bwd" + k, qr[0]);
                g.put("r_bwd" + k, qr[1]);
            } else {
                INDArray dF = dZ.mmul(params.get("W_fwd" + k).transpose()).muliColumnVector(b.inInv());
                INDArray dB = dZ.mmul(params.get("W_bwd" + k).transpose()).muliColumnVector(b.outInv());
                dPrev.addi(Tensors.segmentSum(Tensors.gather(dF, b.dst), b.src, b.nodes));
                dPrev.addi(Tensors.segmentSum(Tensors.gather(dB, b.src), b.dst, b.nodes));
            }
            dH = dPrev;
        }
        INDArray dA0 = dH.mul(Tensors.reluMask(p.a0));
        g.put("W_in", b.x().transpose().mmul(dA0));
        g.put("b_in", dA0.sum(true, 0));
        Map<String, INDArray> ordered = new LinkedHashMap<>();
        for (String name : params.keySet()) {
            // Transposed products come back column-major; hand out row-major like the parameters.
            ordered.put(name, g.get(name).dup('c'));
        }
        return ordered;
    }
}
