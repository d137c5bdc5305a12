package org.scaledl.model;

import com.google.common.base.Preconditions;
import java.util.Arrays;

/**
 * Gradient-boosted regression trees for squared loss (the nonlinear per-family regressor of the device layer model).
 * Splits are searched on per-feature quantile bins (at most {@code bins} candidate thresholds), leaves are shrunk
 * by an L2 penalty {@code lambda} and the learning rate. No row or column sampling, so a fit is a deterministic
 * function of its inputs. Immutable once fitted.
 */
final class BoostedTrees {
    /** Hyper-parameters. */
    record Config(int trees, int depth, double learningRate, int minLeaf, int bins, double lambda) {
        Config {
            Preconditions.checkArgument(trees > 0 && depth > 0 && learningRate > 0 && minLeaf > 0 && bins > 1
                    && lambda >= 0, "bad boosted-trees configuration");
        }
    }

    private final double base;
    private final int[][] feature;
    private final double[][] threshold;
    private final int[][] left;
    private final int[][] right;
    private final double[][] value;

    private BoostedTrees(double base, int[][] feature, double[][] threshold, int[][] left, int[][] right,
            double[][] value) {
        this.base = base;
        this.feature = feature;
        this.threshold = threshold;
        this.left = left;
        this.right = right;
        this.value = value;
    }

    /** Fits {@code y ≈ f(x)}; rows of {@code x} must have equal length and finite values. */
    static BoostedTrees fit(double[][] x, double[] y, Config c) {
        int n = y.length;
        Preconditions.checkArgument(n > 0 && x.length == n, "need matching, non-empty x and y");
        int d = x[0].length;
        double[][] edges = new double[d][];
        byte[][] binned = new byte[d][n];
        for (int f = 0; f < d; f++) {
            double[] col = new double[n];
            for (int i = 0; i < n; i++) {
                col[i] = x[i][f];
                Preconditions.checkArgument(Double.isFinite(col[i]), "feature %s of row %s is not finite", f, i);
            }
            double[] sorted = col.clone();
            Arrays.sort(sorted);
            double[] cand = new double[c.bins() - 1];
            int k = 0;
            for (int b = 1; b < c.bins(); b++) {
                double q = sorted[(int) ((long) b * (n - 1) / c.bins())];
                if (k == 0 || q > cand[k - 1]) {
                    cand[k++] = q;
                }
            }
            edges[f] = Arrays.copyOf(cand, k);
            for (int i = 0; i < n; i++) {
                int bin = Arrays.binarySearch(edges[f], col[i]);
                binned[f][i] = (byte) (bin >= 0 ? bin : -bin - 1);
            }
        }
        double base = 0;
        for (double v : y) {
            base += v;
        }
        base /= n;
        double[] residual = new double[n];
        for (int i = 0; i < n; i++) {
            residual[i] = y[i] - base;
        }
        int[][] feat = new int[c.trees()][];
        double[][] thr = new double[c.trees()][];
        int[][] lft = new int[c.trees()][];
        int[][] rgt = new int[c.trees()][];
        double[][] val = new double[c.trees()][];
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        for (int t = 0; t < c.trees(); t++) {
            Tree tree = new Tree(1 << (c.depth() + 1));
            tree.grow(all, 0, c, binned, edges, residual);
            feat[t] = Arrays.copyOf(tree.feature, tree.size);
            thr[t] = Arrays.copyOf(tree.threshold, tree.size);
            lft[t] = Arrays.copyOf(tree.left, tree.size);
            rgt[t] = Arrays.copyOf(tree.right, tree.size);
            val[t] = Arrays.copyOf(tree.value, tree.size);
            for (int i = 0; i < n; i++) {
                residual[i] -= eval(feat[t], thr[t], lft[t], rgt[t], val[t], x[i]);
            }
        }
        return new BoostedTrees(base, feat, thr, lft, rgt, val);
    }

    /** The prediction for one row. */
    double predict(double[] x) {
        double s = base;
        for (int t = 0; t < feature.length; t++) {
            s += eval(feature[t], threshold[t], left[t], right[t], value[t], x);
        }
        return s;
    }

    private static double eval(int[] feature, double[] threshold, int[] left, int[] right, double[] value,
            double[] x) {
        int node = 0;
        while (feature[node] >= 0) {
            node = x[feature[node]] <= threshold[node] ? left[node] : right[node];
        }
        return value[node];
    }

    /** A tree under construction; node 0 is the root, leaves have feature -1. */
    private static final class Tree {
        final int[] feature;
        final double[] threshold;
        final int[] left;
        final int[] right;
        final double[] value;
        int size;

        Tree(int capacity) {
            feature = new int[capacity];
            threshold = new double[capacity];
            left = new int[capacity];
            right = new int[capacity];
            value = new double[capacity];
        }

        int grow(int[] rows, int depth, Config c, byte[][] binned, double[][] edges, double[] residual) {
            int node = size++;
            double sum = 0;
            for (int i : rows) {
                sum += residual[i];
            }
            feature[node] = -1;
            value[node] = c.learningRate() * sum / (rows.length + c.lambda());
            if (depth >= c.depth() || rows.length < 2 * c.minLeaf()) {
                return node;
            }
            double parent = sum * sum / (rows.length + c.lambda());
            double bestGain = 1e-12;
            int bestFeature = -1;
            int bestBin = -1;
            double[] g = new double[c.bins() + 1];
            int[] cnt = new int[c.bins() + 1];
            for (int f = 0; f < binned.length; f++) {
                int nb = edges[f].length + 1;
                Arrays.fill(g, 0, nb, 0);
                Arrays.fill(cnt, 0, nb, 0);
                byte[] col = binned[f];
                for (int i : rows) {
                    int b = col[i] & 0xff;
                    g[b] += residual[i];
                    cnt[b]++;
                }
                double gl = 0;
                int nl = 0;
                for (int b = 0; b < nb - 1; b++) {
                    gl += g[b];
                    nl += cnt[b];
                    int nr = rows.length - nl;
                    if (nl < c.minLeaf()) {
                        continue;
                    }
                    if (nr < c.minLeaf()) {
                        break;
                    }
                    double gr = sum - gl;
                    double gain = gl * gl / (nl + c.lambda()) + gr * gr / (nr + c.lambda()) - parent;
                    if (gain > bestGain) {
                        bestGain = gain;
                        bestFeature = f;
                        bestBin = b;
                    }
                }
            }
            if (bestFeature < 0) {
                return node;
            }
            byte[] col = binned[bestFeature];
            int nl = 0;
            for (int i : rows) {
                if ((col[i] & 0xff) <= bestBin) {
                    nl++;
                }
            }
            int[] l = new int[nl];
            int[] r = new int[rows.length - nl];
            int a = 0;
            int b = 0;
            for (int i : rows) {
                if ((col[i] & 0xff) <= bestBin) {
                    l[a++] = i;
                } else {
                    r[b++] = i;
                }
            }
            feature[node] = bestFeature;
            threshold[node] = edges[bestFeature][bestBin];
            left[node] = grow(l, depth + 1, c, binned, edges, residual);
            right[node] = grow(r, depth + 1, c, binned, edges, residual);
            return node;
        }
    }
}
