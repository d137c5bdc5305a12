package org.scaledl.gnn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.scaledl.InvalidInputException;
import org.scaledl.model.file.Fields;
import org.scaledl.workload.Workload;

/**
 * A trained network with its standardisation: the shared core of the interaction stage ({@link GnnCorrection})
 * and of the graph-only baseline ({@link GnnBaseline}). A graph's pooled embedding does not depend on the workload;
 * the readout combines it with the workload's context ({@link GnnTrainer#context}) into one value, the standardised
 * log-ratio (or log time).
 *
 * <p>Inference runs in plain Java ({@link #embedding}): message passing over a new graph of a few thousand nodes
 * costs well under a millisecond, where the ND4J forward pass the training uses costs tens of milliseconds in call
 * overhead. The two agree to rounding (tested); a saved and loaded model predicts bit-identically because both use
 * this path.
 */
final class GnnModel {
    private static final com.fasterxml.jackson.databind.node.JsonNodeFactory JSON =
            com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
    final MessagePassingNetwork net;
    private final double[] mean;
    private final double[] std;
    final int contextWidth;
    private final double yMean;
    private final double yScale;
    final double shrink;
    private final double[][] wRead;
    private final double[] bRead;
    private final double[] wOut;
    private final double bOut;
    /** Parameters as row-major double arrays, for the plain-Java forward pass. */
    private final Map<String, double[]> p;
    /** Pooled embeddings of the graphs the network was trained on (empty: no novelty measure). */
    private final double[][] reference;
    /** The median distance from a training graph's embedding to its nearest other one. */
    private final double referenceScale;

    GnnModel(MessagePassingNetwork net, double[] mean, double[] std, int contextWidth, double yMean, double yScale,
            double shrink) {
        this(net, mean, std, contextWidth, yMean, yScale, shrink, new double[0][], 1);
    }

    GnnModel(MessagePassingNetwork net, double[] mean, double[] std, int contextWidth, double yMean, double yScale,
            double shrink, double[][] reference, double referenceScale) {
        this.reference = reference;
        this.referenceScale = referenceScale;
        this.net = net;
        this.mean = mean;
        this.std = std;
        this.contextWidth = contextWidth;
        this.yMean = yMean;
        this.yScale = yScale;
        this.shrink = shrink;
        this.wRead = net.params.get("W_read").toDoubleMatrix();
        this.bRead = net.params.get("b_read").toDoubleVector();
        this.wOut = net.params.get("w_out").toDoubleVector();
        this.bOut = net.params.get("b_out").getDouble(0);
        Map<String, double[]> flat = new java.util.HashMap<>();
        net.params.forEach((k, v) -> flat.put(k, v.dup('c').data().asDouble()));
        this.p = Map.copyOf(flat);
    }

    /**
     * The pooled embedding of one graph's batch (one graph), in plain Java: {@code H₀ = relu(X·W_in + b_in)}, then per
     * round {@code Hₖ = relu(Hₖ₋₁·W_self + agg_fwd·W_fwd + agg_bwd·W_bwd + b) + Hₖ₋₁} with mean or attention
     * aggregation along the edges in both directions, then the mean over nodes.
     */
    double[] embedding(GraphBatch b) {
        int n = b.nodes;
        int f = net.features;
        int h = net.hidden;
        double[] x = b.xData;
        double[] cur = affine(x, n, f, p.get("W_in"), h, p.get("b_in"));
        relu(cur);
        double[] inInv = b.inInvData;
        double[] outInv = b.outInvData;
        for (int k = 1; k <= net.rounds; k++) {
            double[] fwd;
            double[] bwd;
            if (net.attention) {
                fwd = attention(cur, n, h, b.src, b.dst, p.get("q_fwd" + k), p.get("r_fwd" + k));
                bwd = attention(cur, n, h, b.dst, b.src, p.get("q_bwd" + k), p.get("r_bwd" + k));
            } else {
                fwd = meanAggregate(cur, n, h, b.src, b.dst, inInv);
                bwd = meanAggregate(cur, n, h, b.dst, b.src, outInv);
            }
            double[] z = affine(cur, n, h, p.get("W_self" + k), h, p.get("b_round" + k));
            addProduct(z, fwd, n, h, p.get("W_fwd" + k), h);
            addProduct(z, bwd, n, h, p.get("W_bwd" + k), h);
            relu(z);
            for (int i = 0; i < z.length; i++) {
                z[i] += cur[i];
            }
            cur = z;
        }
        double[] pooled = new double[h];
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < h; c++) {
                pooled[c] += cur[i * h + c];
            }
        }
        for (int c = 0; c < h; c++) {
            pooled[c] /= Math.max(1, n);
        }
        return pooled;
    }

    /** De-standardised outputs for every sample of a training set, from the ND4J forward pass. */
    double[] rawOutputs(GnnTrainer.Prepared prep) {
        INDArray out = net.forward(prep.batch(), prep.sampleGraph(), prep.ctx()).out;
        double[] r = new double[prep.y().length];
        for (int i = 0; i < r.length; i++) {
            r[i] = yMean + yScale * out.getDouble(i);
        }
        return r;
    }

    /**
     * How far a graph's embedding lies from the graphs the network was trained on: the distance to the nearest
     * training graph's embedding over the median such distance among training graphs (about 1 for a graph like the
     * training ones; 0 when the model keeps no reference, e.g. files written before it did).
     */
    double novelty(double[] pooled) {
        if (reference.length == 0) {
            return 0;
        }
        double best = Double.POSITIVE_INFINITY;
        for (double[] r : reference) {
            best = Math.min(best, squaredDistance(r, pooled));
        }
        return Math.sqrt(best) / referenceScale;
    }

    private static double squaredDistance(double[] a, double[] b) {
        double d = 0;
        for (int i = 0; i < a.length; i++) {
            d += (a[i] - b[i]) * (a[i] - b[i]);
        }
        return d;
    }

    /** A copy that measures novelty against these training graph embeddings. */
    GnnModel withReference(double[][] embeddings) {
        double scale = 1;
        if (embeddings.length >= 2) {
            double[] nn = new double[embeddings.length];
            for (int a = 0; a < embeddings.length; a++) {
                double best = Double.POSITIVE_INFINITY;
                for (int b = 0; b < embeddings.length; b++) {
                    if (a != b) {
                        best = Math.min(best, squaredDistance(embeddings[a], embeddings[b]));
                    }
                }
                nn[a] = Math.sqrt(best);
            }
            java.util.Arrays.sort(nn);
            scale = Math.max(nn[nn.length / 2], 1e-9);
        }
        return new GnnModel(net, mean, std, contextWidth, yMean, yScale, shrink, embeddings, scale);
    }

    /** The pooled embeddings of every graph of a training batch, from the ND4J forward pass. */
    double[][] pooledAll(GnnTrainer.Prepared prep) {
        return net.forward(prep.batch(), prep.sampleGraph(), prep.ctx()).pooled.toDoubleMatrix();
    }

    /** The same embedding from the ND4J forward pass (the training path), for tests. */
    double[] embeddingNd4j(GraphBatch b) {
        synchronized (net) {
            INDArray ctx = Nd4j.zeros(DataType.DOUBLE, 1, contextWidth);
            return net.forward(b, new int[] {0}, ctx).pooled.toDoubleVector();
        }
    }

    private static double[] affine(double[] x, int n, int in, double[] w, int out, double[] bias) {
        double[] y = new double[n * out];
        for (int i = 0; i < n; i++) {
            System.arraycopy(bias, 0, y, i * out, out);
        }
        addProduct(y, x, n, in, w, out);
        return y;
    }

    /** {@code y += x · w} for row-major {@code x (n × in)}, {@code w (in × out)}. */
    private static void addProduct(double[] y, double[] x, int n, int in, double[] w, int out) {
        for (int i = 0; i < n; i++) {
            int yi = i * out;
            for (int k = 0; k < in; k++) {
                double a = x[i * in + k];
                if (a == 0) {
                    continue;
                }
                int wk = k * out;
                for (int j = 0; j < out; j++) {
                    y[yi + j] += a * w[wk + j];
                }
            }
        }
    }

    private static void relu(double[] v) {
        for (int i = 0; i < v.length; i++) {
            if (!(v[i] > 0)) {
                v[i] = 0;
            }
        }
    }

    private static double[] meanAggregate(double[] hv, int n, int h, int[] from, int[] to, double[] inv) {
        double[] out = new double[n * h];
        for (int e = 0; e < from.length; e++) {
            int s = from[e] * h;
            int d = to[e] * h;
            for (int c = 0; c < h; c++) {
                out[d + c] += hv[s + c];
            }
        }
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < h; c++) {
                out[i * h + c] *= inv[i];
            }
        }
        return out;
    }

    /** GAT-style attention (see {@link EdgeAttention}), forward only. */
    private static double[] attention(double[] hv, int n, int h, int[] from, int[] to, double[] q, double[] r) {
        double[] aSrc = new double[n];
        double[] aDst = new double[n];
        for (int i = 0; i < n; i++) {
            double s1 = 0;
            double s2 = 0;
            for (int c = 0; c < h; c++) {
                s1 += hv[i * h + c] * q[c];
                s2 += hv[i * h + c] * r[c];
            }
            aSrc[i] = s1;
            aDst[i] = s2;
        }
        int m = from.length;
        double[] s = new double[m];
        double[] max = new double[n];
        java.util.Arrays.fill(max, Double.NEGATIVE_INFINITY);
        for (int e = 0; e < m; e++) {
            double t = aSrc[from[e]] + aDst[to[e]];
            s[e] = t > 0 ? t : EdgeAttention.SLOPE * t;
            max[to[e]] = Math.max(max[to[e]], s[e]);
        }
        double[] sum = new double[n];
        for (int e = 0; e < m; e++) {
            s[e] = Math.exp(s[e] - max[to[e]]);
            sum[to[e]] += s[e];
        }
        double[] out = new double[n * h];
        for (int e = 0; e < m; e++) {
            double a = s[e] / sum[to[e]];
            int src = from[e] * h;
            int dst = to[e] * h;
            for (int c = 0; c < h; c++) {
                out[dst + c] += a * hv[src + c];
            }
        }
        return out;
    }

    /** The readout for a pooled embedding and a workload: the de-standardised network output. */
    double output(double[] pooled, Workload w, double layerwiseMillis) {
        double[] c = GnnTrainer.context(w, layerwiseMillis, contextWidth);
        int h = pooled.length;
        double out = bOut;
        for (int j = 0; j < bRead.length; j++) {
            double u = bRead[j];
            for (int i = 0; i < h; i++) {
                u += pooled[i] * wRead[i][j];
            }
            for (int i = 0; i < contextWidth; i++) {
                u += (c[i] - mean[i]) / std[i] * wRead[h + i][j];
            }
            if (u > 0) {
                out += u * wOut[j];
            }
        }
        return yMean + yScale * out;
    }

    /** The network and its standardisation as JSON. */
    ObjectNode body() {
        ObjectNode body = JSON.objectNode();
        body.put("attention", net.attention);
        body.put("features", net.features);
        body.put("hidden", net.hidden);
        body.put("rounds", net.rounds);
        body.put("context", contextWidth);
        array(body.putArray("context_mean"), mean);
        array(body.putArray("context_std"), std);
        body.put("y_mean", yMean);
        body.put("y_scale", yScale);
        body.put("shrink", shrink);
        if (reference.length > 0) {
            com.fasterxml.jackson.databind.node.ArrayNode ref = body.putArray("reference");
            for (double[] r : reference) {
                array(ref.addArray(), r);
            }
            body.put("reference_scale", referenceScale);
        }
        ObjectNode params = body.putObject("params");
        net.params.forEach((k, v) -> {
            ObjectNode o = params.putObject(k);
            o.putArray("shape").add(v.rows()).add(v.columns());
            array(o.putArray("data"), v.dup('c').data().asDouble());
        });
        return body;
    }

    /**
     * Reads {@link #body()} (also the network part of a version-1 {@code scaledl-gnn-model} body).
     *
     * @throws InvalidInputException for a malformed body
     */
    static GnnModel read(JsonNode body) {
        int features = Fields.intInRange(body.get("features"), "features", GnnTrainer.NODE_FEATURES,
                GnnTrainer.NODE_FEATURES);
        int hidden = Fields.intInRange(body.get("hidden"), "hidden", 1, MAX_HIDDEN);
        int rounds = Fields.intInRange(body.get("rounds"), "rounds", 0, MAX_ROUNDS);
        int context = Fields.intInRange(body.get("context"), "context", 0, MAX_CONTEXT);
        JsonNode attention = body.path("attention");
        if (!attention.isMissingNode() && !attention.isBoolean()) {
            throw InvalidInputException.of("attention must be true or false, got " + attention);
        }
        JsonNode params = body.path("params");
        // Every parameter's shape and values are checked against the sizes before the network is built: the sizes
        // alone decide how much it allocates.
        Map<String, long[]> shapes = MessagePassingNetwork.shapes(features, hidden, rounds, context,
                attention.asBoolean(false));
        if (!params.isObject() || params.size() != shapes.size()) {
            throw InvalidInputException.of("the file has " + params.size() + " parameters, the network "
                    + shapes.size());
        }
        Map<String, double[]> values = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, long[]> e : shapes.entrySet()) {
            JsonNode o = params.path(e.getKey());
            long[] expected = e.getValue();
            if (o.path("shape").size() != 2 || o.path("shape").get(0).asLong() != expected[0]
                    || o.path("shape").get(1).asLong() != expected[1]) {
                throw InvalidInputException.of("parameter " + e.getKey() + " is missing or has the wrong shape");
            }
            if (o.path("data").size() != expected[0] * expected[1]) {
                throw InvalidInputException.of("parameter " + e.getKey() + " has " + o.path("data").size()
                        + " values");
            }
            values.put(e.getKey(), doubles(o.path("data"), "parameter " + e.getKey(), MAX_WEIGHT));
        }
        double[] mean = doubles(body.path("context_mean"), "context_mean", MAX_STANDARDISATION);
        double[] std = doubles(body.path("context_std"), "context_std", MAX_STANDARDISATION);
        if (mean.length != context || std.length != context) {
            throw InvalidInputException.of("context standardisation has the wrong width");
        }
        for (int i = 0; i < context; i++) {
            Fields.inRange(body.path("context_std").get(i), "context_std[" + i + "]", 1 / MAX_STANDARDISATION,
                    MAX_STANDARDISATION);
        }
        double shrink = Fields.inRange(body.path("shrink"), "shrink", 0, 1);
        double[][] reference = new double[body.path("reference").size()][];
        for (int i = 0; i < reference.length; i++) {
            reference[i] = doubles(body.path("reference").get(i), "reference[" + i + "]", MAX_STANDARDISATION);
            if (reference[i].length != hidden) {
                throw InvalidInputException.of("reference embeddings must have " + hidden + " values");
            }
        }
        double scale = reference.length == 0 ? 1 : Fields.inRange(body.path("reference_scale"), "reference_scale",
                Double.MIN_NORMAL, Double.MAX_VALUE);
        MessagePassingNetwork net = new MessagePassingNetwork(features, hidden, rounds, context,
                attention.asBoolean(false), 0);
        for (Map.Entry<String, INDArray> e : net.params.entrySet()) {
            long[] shape = shapes.get(e.getKey());
            e.setValue(Nd4j.create(values.get(e.getKey()), shape, DataType.DOUBLE));
        }
        return new GnnModel(net, mean, std, context, Fields.inRange(body.path("y_mean"), "y_mean", -MAX_Y, MAX_Y),
                Fields.inRange(body.path("y_scale"), "y_scale", 0, MAX_Y), shrink, reference, scale);
    }

    /** The widest hidden layer a file may hold (the trainer's is 16). */
    static final int MAX_HIDDEN = 1024;
    /** The most message-passing rounds a file may hold (the trainer's are 2). */
    static final int MAX_ROUNDS = 8;
    /** The widest workload context a file may hold (the trainer's is 4 or 5). */
    static final int MAX_CONTEXT = 16;
    /**
     * The largest weight a file may hold (trained ones stay below 2): with the sizes bounded too, no embedding or
     * output can overflow.
     */
    static final double MAX_WEIGHT = 1e3;
    /** The bound of the context standardisation (|mean|, std and 1/std) and of the reference embeddings. */
    static final double MAX_STANDARDISATION = 1e6;
    /** The bound of the output's de-standardisation (|y_mean|, y_scale): outputs are logs of times or ratios. */
    static final double MAX_Y = 1e3;

    private static void array(ArrayNode out, double[] values) {
        for (double v : values) {
            out.add(v);
        }
    }

    /** An array of numbers of at most {@code max} in magnitude. */
    private static double[] doubles(JsonNode n, String what, double max) {
        if (!n.isArray()) {
            throw InvalidInputException.of(what + " is missing");
        }
        double[] out = new double[n.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Fields.inRange(n.get(i), what + "[" + i + "]", -max, max);
        }
        return out;
    }
}
