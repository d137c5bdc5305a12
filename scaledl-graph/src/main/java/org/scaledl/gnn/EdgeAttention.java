package org.scaledl.gnn;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * GAT-style attention over a node's incoming messages: edge {@code e = (u → v)} scores
 * {@code t_e = h_u·q + h_v·r}, {@code s_e = leaky_relu(t_e, 0.2)}, weights {@code α_e = softmax_v(s_e)} over the
 * edges into {@code v}, and {@code m_v = Σ α_e h_u} (zero for a node without incoming edges). The leaky ReLU keeps
 * the target's term from cancelling in the softmax. Written as loops over edges on row-major copies, like
 * {@link Tensors}, with its exact gradient in {@link #backward}.
 */
final class EdgeAttention {
    static final double SLOPE = 0.2;

    private EdgeAttention() {
    }

    /** What the backward pass needs from one aggregation. */
    static final class Cache {
        final double[] alpha;
        final double[] t;

        Cache(double[] alpha, double[] t) {
            this.alpha = alpha;
            this.t = t;
        }
    }

    /**
     * Aggregates messages along edges {@code from[e] → to[e]}.
     *
     * @param h     N × H node states
     * @param q     H × 1 source scoring vector
     * @param r     H × 1 target scoring vector
     * @param cache receives the attention weights and pre-activations (length-1 array)
     * @return N × H aggregated messages
     */
    static INDArray forward(INDArray h, int[] from, int[] to, INDArray q, INDArray r, Cache[] cache) {
        int n = (int) h.rows();
        int hd = (int) h.columns();
        double[] hv = h.dup('c').data().asDouble();
        double[] qv = q.dup('c').data().asDouble();
        double[] rv = r.dup('c').data().asDouble();
        double[] aSrc = new double[n];
        double[] aDst = new double[n];
        for (int i = 0; i < n; i++) {
            double s1 = 0;
            double s2 = 0;
            for (int c = 0; c < hd; c++) {
                s1 += hv[i * hd + c] * qv[c];
                s2 += hv[i * hd + c] * rv[c];
            }
            aSrc[i] = s1;
            aDst[i] = s2;
        }
        int m = from.length;
        double[] t = new double[m];
        double[] s = new double[m];
        double[] max = new double[n];
        java.util.Arrays.fill(max, Double.NEGATIVE_INFINITY);
        for (int e = 0; e < m; e++) {
            t[e] = aSrc[from[e]] + aDst[to[e]];
            s[e] = t[e] > 0 ? t[e] : SLOPE * t[e];
            max[to[e]] = Math.max(max[to[e]], s[e]);
        }
        double[] sum = new double[n];
        double[] alpha = new double[m];
        for (int e = 0; e < m; e++) {
            alpha[e] = Math.exp(s[e] - max[to[e]]);
            sum[to[e]] += alpha[e];
        }
        double[] out = new double[n * hd];
        for (int e = 0; e < m; e++) {
            alpha[e] /= sum[to[e]];
            int o = to[e] * hd;
            int f = from[e] * hd;
            for (int c = 0; c < hd; c++) {
                out[o + c] += alpha[e] * hv[f + c];
            }
        }
        cache[0] = new Cache(alpha, t);
        return Nd4j.create(out, new long[] {n, hd}, DataType.DOUBLE);
    }

    /**
     * Backward pass of {@link #forward}.
     *
     * @param dM    N × H gradient of the loss with respect to the aggregated messages
     * @param grads receives {@code dq, dr} (H × 1 each) at index 0 and 1
     * @return N × H gradient with respect to {@code h}
     */
    static INDArray backward(INDArray h, int[] from, int[] to, INDArray q, INDArray r, Cache cache, INDArray dM,
            INDArray[] grads) {
        int n = (int) h.rows();
        int hd = (int) h.columns();
        double[] hv = h.dup('c').data().asDouble();
        double[] dm = dM.dup('c').data().asDouble();
        double[] qv = q.dup('c').data().asDouble();
        double[] rv = r.dup('c').data().asDouble();
        int m = from.length;
        double[] g = new double[m];
        double[] gBar = new double[n];
        for (int e = 0; e < m; e++) {
            double d = 0;
            int o = to[e] * hd;
            int f = from[e] * hd;
            for (int c = 0; c < hd; c++) {
                d += dm[o + c] * hv[f + c];
            }
            g[e] = d;
            gBar[to[e]] += cache.alpha[e] * d;
        }
        double[] dh = new double[n * hd];
        double[] dq = new double[hd];
        double[] dr = new double[hd];
        for (int e = 0; e < m; e++) {
            double a = cache.alpha[e];
            double ds = a * (g[e] - gBar[to[e]]);
            double dt = ds * (cache.t[e] > 0 ? 1 : SLOPE);
            int o = to[e] * hd;
            int f = from[e] * hd;
            for (int c = 0; c < hd; c++) {
                dh[f + c] += a * dm[o + c] + dt * qv[c];
                dh[o + c] += dt * rv[c];
                dq[c] += dt * hv[f + c];
                dr[c] += dt * hv[o + c];
            }
        }
        grads[0] = Nd4j.create(dq, new long[] {hd, 1}, DataType.DOUBLE);
        grads[1] = Nd4j.create(dr, new long[] {hd, 1}, DataType.DOUBLE);
        return Nd4j.create(dh, new long[] {n, hd}, DataType.DOUBLE);
    }
}
