package org.scaledl.gnn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.scaledl.InvalidInputException;
import org.scaledl.data.Workload;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.ModelFile;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimeModel;
import org.scaledl.model.RuntimePredictor;

/**
 * A fitted ScaleDL predictor with the GNN stage (or the GNN alone), from {@link GnnTrainer#fit}. A graph's embedding (message passing and pooling) does not depend on the workload, so it is
 * computed once per graph instance (weakly cached); a prediction then costs the layer-wise prediction plus a
 * readout of {@code (hidden + context) × hidden} multiply-adds in plain Java, with no ND4J call and no
 * allocation proportional to the graph or the training data. Thread-safe.
 *
 * <p>{@link #save} writes the network, its standardisation, the shrink factor and the embedded layer-wise model in
 * the checksummed envelope of {@link ModelFile} (format {@value #FORMAT}); {@link #load} gives a model whose
 * predictions are bit-identical.
 */
public final class GnnModel implements RuntimeModel {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final String name;
    private final MessagePassingNetwork net;
    private final RuntimePredictor layerwise;
    private final double[] mean;
    private final double[] std;
    private final int contextWidth;
    private final double yMean;
    private final double yScale;
    private final double shrink;
    private final double[][] wRead;
    private final double[] bRead;
    private final double[] wOut;
    private final double bOut;
    /** The envelope's format name. */
    public static final String FORMAT = "scaledl-gnn-model";
    private static final int FORMAT_VERSION = 1;
    private final Map<ModelGraph, double[]> embeddings = Collections.synchronizedMap(
            new java.util.WeakHashMap<>());

    GnnModel(String name, MessagePassingNetwork net, RuntimePredictor layerwise, double[] mean, double[] std,
            int contextWidth, double yMean, double yScale, double shrink) {
        this.name = name;
        this.net = net;
        this.layerwise = layerwise;
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
    }

    @Override
    public String name() {
        return name;
    }

    private double[] embedding(ModelGraph g) {
        double[] e = embeddings.get(g);
        if (e == null) {
            synchronized (net) {
                e = embeddings.get(g);
                if (e == null) {
                    GraphBatch b = GnnTrainer.batchOf(List.of(g), layerwise);
                    INDArray ctx = Nd4j.zeros(DataType.DOUBLE, 1, contextWidth);
                    e = net.forward(b, new int[] {0}, ctx).pooled.toDoubleVector();
                    embeddings.put(g, e);
                }
            }
        }
        return e;
    }

    @Override
    public Prediction predict(Workload w) {
        double[] pooled = embedding(w.graph());
        Prediction base = layerwise == null ? null : layerwise.predict(w);
        double[] c = GnnTrainer.context(w, base == null ? 0 : base.millis(), contextWidth);
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
        out = yMean + yScale * out;
        if (base == null) {
            return Prediction.point(Math.exp(out));
        }
        double f = Math.exp(shrink * out);
        List<Prediction.Contribution> parts = new ArrayList<>();
        for (Prediction.Contribution p : base.breakdown()) {
            parts.add(new Prediction.Contribution(p.name(), p.kind(), p.millis() * f));
        }
        return new Prediction(base.millis() * f, base.lowMillis() * f, base.highMillis() * f, parts);
    }

    /** The factor (0 to 1) applied to the correction, chosen on held-out training groups (1 for the GNN alone). */
    public double shrink() {
        return shrink;
    }

    /** Whether message passing uses attention. */
    public boolean attention() {
        return net.attention;
    }

    /**
     * Saves the model.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public void save(Path file) {
        ObjectNode body = JSON.createObjectNode();
        body.put("name", name);
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
        ObjectNode params = body.putObject("params");
        net.params.forEach((k, v) -> {
            ObjectNode p = params.putObject(k);
            p.putArray("shape").add(v.rows()).add(v.columns());
            array(p.putArray("data"), v.dup('c').data().asDouble());
        });
        if (layerwise == null) {
            body.putNull("layerwise");
        } else {
            body.set("layerwise", ModelFile.body(layerwise));
        }
        ModelFile.writeEnvelope(FORMAT, FORMAT_VERSION, body, file);
    }

    /**
     * Loads a saved model.
     *
     * @throws InvalidInputException naming the file for a truncated, tampered, foreign or newer-format file
     */
    public static GnnModel load(Path file) {
        JsonNode body = ModelFile.readBody(file, FORMAT, FORMAT_VERSION);
        try {
            int features = positive(body, "features");
            int hidden = positive(body, "hidden");
            int rounds = body.path("rounds").asInt(-1);
            int context = body.path("context").asInt(-1);
            if (rounds < 0 || context < 0) {
                throw InvalidInputException.of("rounds and context must be >= 0");
            }
            MessagePassingNetwork net = new MessagePassingNetwork(features, hidden, rounds, context,
                    body.path("attention").asBoolean(false), 0);
            JsonNode params = body.path("params");
            for (Map.Entry<String, INDArray> e : net.params.entrySet()) {
                JsonNode p = params.path(e.getKey());
                INDArray expected = e.getValue();
                if (p.path("shape").size() != 2 || p.path("shape").get(0).asLong() != expected.rows()
                        || p.path("shape").get(1).asLong() != expected.columns()) {
                    throw InvalidInputException.of("parameter " + e.getKey() + " is missing or has the wrong shape");
                }
                double[] data = doubles(p.path("data"), "parameter " + e.getKey());
                if (data.length != expected.length()) {
                    throw InvalidInputException.of("parameter " + e.getKey() + " has " + data.length + " values");
                }
                e.setValue(Nd4j.create(data, new long[] {expected.rows(), expected.columns()}, DataType.DOUBLE));
            }
            if (params.size() != net.params.size()) {
                throw InvalidInputException.of("the file has " + params.size() + " parameters, the network "
                        + net.params.size());
            }
            double[] mean = doubles(body.path("context_mean"), "context_mean");
            double[] std = doubles(body.path("context_std"), "context_std");
            if (mean.length != context || std.length != context) {
                throw InvalidInputException.of("context standardisation has the wrong width");
            }
            JsonNode lw = body.path("layerwise");
            RuntimePredictor layerwise = lw.isObject() ? ModelFile.predictor(lw) : null;
            return new GnnModel(body.path("name").asText("scaledl"), net, layerwise, mean, std, context,
                    ModelFile.finite(body.path("y_mean"), "y_mean"),
                    ModelFile.finite(body.path("y_scale"), "y_scale"), ModelFile.finite(body.path("shrink"), "shrink"));
        } catch (InvalidInputException e) {
            throw e.withSource(file.toString());
        }
    }

    private static void array(ArrayNode out, double[] values) {
        for (double v : values) {
            out.add(v);
        }
    }

    private static int positive(JsonNode body, String key) {
        int v = body.path(key).asInt(-1);
        if (v <= 0) {
            throw InvalidInputException.of(key + " must be a positive integer");
        }
        return v;
    }

    private static double[] doubles(JsonNode n, String what) {
        if (!n.isArray()) {
            throw InvalidInputException.of(what + " is missing");
        }
        double[] out = new double[n.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ModelFile.finite(n.get(i), what + "[" + i + "]");
        }
        return out;
    }

    @Override
    public String toString() {
        return name + " shrink=" + shrink;
    }
}
