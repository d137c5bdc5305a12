package org.scaledl.model.device;

import org.scaledl.model.file.Fields;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Base64;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;

/**
 * Gradient-boosted regression trees for squared loss (the nonlinear per-family regressor of the device layer model).
 * Splits are searched on per-feature quantile bins (at most {@code bins} candidate thresholds), leaves are shrunk
 * by an L2 penalty {@code lambda} and the learning rate. No row or column sampling, so a fit is a deterministic
 * function of its inputs. Immutable once fitted.
 *
 * <p>{@link #write} stores an ensemble as JSON with its nodes packed (little-endian, base64; a fitted device model has
 * some 10⁵ nodes, which as decimal JSON would be ten times the size) in the {@value #PREORDER} encoding: nodes in
 * preorder, so a split's left child is the next node; per node a 16-bit feature (-1 for a leaf); per split its right
 * child and the index of its threshold in a table of the ensemble's distinct thresholds (32-bit each); per leaf its
 * value. That is 10 bytes a node where the earlier encoding (no {@code encoding} member: five full arrays, 28 bytes a
 * node, still read) stored what no prediction reads: a third of the text to scan and decode when a model loads.
 * {@link #read} checks every node (features in range, finite numbers, children after their parent), so a tree read
 * from a file always terminates.
 */
final class BoostedTrees {
    /** Hyper-parameters. */
    record Config(int trees, int depth, double learningRate, int minLeaf, int bins, double lambda) {
        Config {
            Checks.argument(trees > 0 && depth > 0 && learningRate > 0 && minLeaf > 0 && bins > 1
                    && lambda >= 0, "bad boosted-trees configuration");
        }
    }

    /**
     * The widest output (base plus the extreme leaves of every tree) a file's ensemble may reach: the outputs are
     * log-ratios, and e^100 is no ratio (a larger one would overflow a prediction).
     */
    static final double MAX_OUTPUT = 100;

    /** The value of the {@code encoding} member {@link #write} writes. */
    static final String PREORDER = "preorder";
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
        Checks.argument(n > 0 && x.length == n, "need matching, non-empty x and y");
        int d = x[0].length;
        double[][] edges = new double[d][];
        byte[][] binned = new byte[d][n];
        for (int f = 0; f < d; f++) {
            double[] col = new double[n];
            for (int i = 0; i < n; i++) {
                col[i] = x[i][f];
                Checks.argument(Double.isFinite(col[i]), "feature %s of row %s is not finite", f, i);
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

    /**
     * Tree {@code t}'s nodes in preorder (a split's left child the next node), as fitted trees are; a tree read from
     * an earlier file whose children merely follow their parent is renumbered (its predictions unchanged). The nodes
     * a tree cannot reach from its root are dropped.
     *
     * @return its nodes in preorder
     */
    private Preorder inPreorder(int t) {
        int[] f = feature[t];
        int[] order = new int[f.length];
        int n = 0;
        int[] stack = new int[f.length + 1];
        int top = 0;
        stack[top++] = 0;
        while (top > 0) {
            int node = stack[--top];
            order[n++] = node;
            if (f[node] >= 0) {
                stack[top++] = right[t][node];
                stack[top++] = left[t][node];
            }
        }
        int[] at = new int[f.length];
        for (int i = 0; i < n; i++) {
            at[order[i]] = i;
        }
        int[] pf = new int[n];
        double[] pt = new double[n];
        int[] pr = new int[n];
        double[] pv = new double[n];
        for (int i = 0; i < n; i++) {
            int node = order[i];
            pf[i] = f[node];
            pt[i] = threshold[t][node];
            pr[i] = f[node] >= 0 ? at[right[t][node]] : 0;
            pv[i] = value[t][node];
        }
        return new Preorder(pf, pt, pr, pv);
    }

    /** One tree's nodes in preorder: features (-1 for a leaf), thresholds, right children, values. */
    private record Preorder(int[] feature, double[] threshold, int[] right, double[] value) {
    }

    /** Writes the ensemble into {@code out} (see the class comment). */
    void write(ObjectNode out) {
        out.put("encoding", PREORDER);
        out.put("base", base);
        ArrayNode sizes = out.putArray("sizes");
        Preorder[] trees = new Preorder[feature.length];
        int total = 0;
        int splits = 0;
        java.util.TreeSet<Double> distinct = new java.util.TreeSet<>();
        for (int t = 0; t < trees.length; t++) {
            Preorder p = inPreorder(t);
            trees[t] = p;
            sizes.add(p.feature().length);
            total += p.feature().length;
            for (int i = 0; i < p.feature().length; i++) {
                if (p.feature()[i] >= 0) {
                    Checks.state(p.feature()[i] <= Short.MAX_VALUE, "tree %s splits on a feature beyond 16 bits", t);
                    splits++;
                    distinct.add(p.threshold()[i]);
                }
            }
        }
        double[] table = distinct.stream().mapToDouble(Double::doubleValue).toArray();
        ByteBuffer feat = buffer(2 * total);
        ByteBuffer rgt = buffer(4 * splits);
        ByteBuffer split = buffer(4 * splits);
        ByteBuffer val = buffer(8 * (total - splits));
        ByteBuffer thr = buffer(8 * table.length);
        for (double d : table) {
            thr.putDouble(d);
        }
        for (Preorder p : trees) {
            for (int i = 0; i < p.feature().length; i++) {
                feat.putShort((short) p.feature()[i]);
                if (p.feature()[i] >= 0) {
                    rgt.putInt(p.right()[i]);
                    split.putInt(Arrays.binarySearch(table, p.threshold()[i]));
                } else {
                    val.putDouble(p.value()[i]);
                }
            }
        }
        Base64.Encoder b64 = Base64.getEncoder();
        out.put("thresholds", b64.encodeToString(thr.array()));
        out.put("feature", b64.encodeToString(feat.array()));
        out.put("right", b64.encodeToString(rgt.array()));
        out.put("split", b64.encodeToString(split.array()));
        out.put("value", b64.encodeToString(val.array()));
    }

    /**
     * Reads an ensemble written by {@link #write}, or by the earlier encoding (five full node arrays).
     *
     * @param features the row width the trees may split on
     * @throws InvalidInputException for a malformed or inconsistent ensemble
     */
    static BoostedTrees read(JsonNode in, int features) {
        JsonNode sizes = in.path("sizes");
        if (!sizes.isArray() || sizes.isEmpty()) {
            throw InvalidInputException.of("trees: no sizes");
        }
        int trees = sizes.size();
        int[] size = new int[trees];
        long total = 0;
        for (int t = 0; t < trees; t++) {
            size[t] = sizes.get(t).asInt(-1);
            if (!sizes.get(t).isInt() || size[t] <= 0) {
                throw InvalidInputException.of("trees: size of tree " + t + " is not a positive integer");
            }
            total += size[t];
        }
        if (total > 1 << 24) {
            throw InvalidInputException.of("trees: " + total + " nodes is too many");
        }
        // bulk copies out of the decoded bytes (one buffer access per node and array costs a cold JVM about 0.1 s
        // for the bundled model)
        int[] feat = new int[(int) total];
        double[] thr = new double[(int) total];
        int[] lft = new int[(int) total];
        int[] rgt = new int[(int) total];
        double[] val = new double[(int) total];
        JsonNode encoding = in.get("encoding");
        if (encoding == null) {
            decode(in, "feature", 4 * total).asIntBuffer().get(feat);
            decode(in, "threshold", 8 * total).asDoubleBuffer().get(thr);
            decode(in, "left", 4 * total).asIntBuffer().get(lft);
            decode(in, "right", 4 * total).asIntBuffer().get(rgt);
            decode(in, "value", 8 * total).asDoubleBuffer().get(val);
        } else if (encoding.asText().equals(PREORDER)) {
            preorder(in, size, feat, thr, lft, rgt, val);
        } else {
            throw InvalidInputException.of("trees: unknown encoding '" + encoding.asText() + "' (this version reads '"
                    + PREORDER + "')");
        }
        int[][] feature = new int[trees][];
        double[][] threshold = new double[trees][];
        int[][] left = new int[trees][];
        int[][] right = new int[trees][];
        double[][] value = new double[trees][];
        int from = 0;
        for (int t = 0; t < trees; t++) {
            int n = size[t];
            int to = from + n;
            feature[t] = Arrays.copyOfRange(feat, from, to);
            threshold[t] = Arrays.copyOfRange(thr, from, to);
            left[t] = Arrays.copyOfRange(lft, from, to);
            right[t] = Arrays.copyOfRange(rgt, from, to);
            value[t] = Arrays.copyOfRange(val, from, to);
            from = to;
            for (int i = 0; i < n; i++) {
                int f = feature[t][i];
                int l = left[t][i];
                int r = right[t][i];
                double v = value[t][i];
                boolean ok = f < 0 ? Double.isFinite(v)
                        : f < features && Double.isFinite(threshold[t][i]) && l > i && l < n && r > i && r < n;
                if (!ok) {
                    throw InvalidInputException.of("trees: node " + i + " of tree " + t + " is malformed");
                }
            }
        }
        double base = Fields.inRange(in.get("base"), "trees: base", -MAX_OUTPUT, MAX_OUTPUT);
        double lo = base;
        double hi = base;
        for (int t = 0; t < value.length; t++) {
            double tLo = Double.POSITIVE_INFINITY;
            double tHi = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < value[t].length; i++) {
                if (feature[t][i] < 0) {
                    tLo = Math.min(tLo, value[t][i]);
                    tHi = Math.max(tHi, value[t][i]);
                }
            }
            lo += tLo;
            hi += tHi;
        }
        if (!(lo >= -MAX_OUTPUT && hi <= MAX_OUTPUT)) {
            throw InvalidInputException.of("trees: their outputs reach [" + lo + ", " + hi + "], outside the log-ratio "
                    + "range [" + -MAX_OUTPUT + ", " + MAX_OUTPUT + "] of a model this library fits");
        }
        return new BoostedTrees(base, feature, threshold, left, right, value);
    }

    /**
     * Unpacks the {@value #PREORDER} encoding into full node arrays ({@link #read} then checks every node as it does
     * an earlier file's).
     */
    private static void preorder(JsonNode in, int[] size, int[] feat, double[] thr, int[] lft, int[] rgt,
            double[] val) {
        int total = feat.length;
        short[] f16 = new short[total];
        decode(in, "feature", 2L * total).asShortBuffer().get(f16);
        int splits = 0;
        for (short f : f16) {
            if (f >= 0) {
                splits++;
            } else if (f != -1) {
                throw InvalidInputException.of("trees: feature " + f + " is neither a split's nor a leaf's (-1)");
            }
        }
        ByteBuffer tableBytes = decode(in, "thresholds", -1);
        if (tableBytes.remaining() % 8 != 0) {
            throw InvalidInputException.of("trees: thresholds has " + tableBytes.remaining() + " bytes, not a multiple "
                    + "of 8");
        }
        double[] table = new double[tableBytes.remaining() / 8];
        tableBytes.asDoubleBuffer().get(table);
        int[] right = new int[splits];
        int[] split = new int[splits];
        double[] leaf = new double[total - splits];
        decode(in, "right", 4L * splits).asIntBuffer().get(right);
        decode(in, "split", 4L * splits).asIntBuffer().get(split);
        decode(in, "value", 8L * (total - splits)).asDoubleBuffer().get(leaf);
        int s = 0;
        int l = 0;
        for (int i = 0; i < total; i++) {
            feat[i] = f16[i];
            if (f16[i] >= 0) {
                int k = split[s];
                if (k < 0 || k >= table.length) {
                    throw InvalidInputException.of("trees: split " + s + " names threshold " + k + " of "
                            + table.length);
                }
                thr[i] = table[k];
                rgt[i] = right[s];
                s++;
            } else {
                val[i] = leaf[l++];
            }
        }
        // children are indices within the node's tree; a split's left child is the next node
        int from = 0;
        for (int n : size) {
            for (int i = from; i < from + n; i++) {
                if (feat[i] >= 0) {
                    lft[i] = i - from + 1;
                }
            }
            from += n;
        }
    }

    private static ByteBuffer buffer(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The bytes of member {@code key}, which must number {@code bytes} (any number for -1). */
    private static ByteBuffer decode(JsonNode in, String key, long bytes) {
        byte[] b;
        try {
            b = Base64.getDecoder().decode(in.path(key).asText(""));
        } catch (IllegalArgumentException e) {
            throw InvalidInputException.of("trees: " + key + " is not base64");
        }
        if (bytes >= 0 && b.length != bytes) {
            throw InvalidInputException.of("trees: " + key + " has " + b.length + " bytes, expected " + bytes);
        }
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
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
