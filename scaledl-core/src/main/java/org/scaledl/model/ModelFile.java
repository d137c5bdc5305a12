package org.scaledl.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.scaledl.InvalidInputException;

/**
 * The saved-model format: one JSON document
 *
 * <pre>
 * {"format": "scaledl-model", "format_version": 1, "body": {...}, "sha256": "&lt;hex SHA-256 of body&gt;"}
 * </pre>
 *
 * where {@code body} holds the provenance (library version, creation time, seed, configuration, training-data
 * fingerprint, cross-validated MRE) and the model (basis column names, coefficients, shrinkage, interval
 * quantiles). Doubles are written in their shortest exact decimal form, so a round trip is bit-identical; the
 * checksum covers the body's compact serialisation, so a truncated or edited file is rejected rather than half
 * loaded. A file from a newer format version is rejected naming both versions. No Java serialisation is involved.
 *
 * <p>Companion modules store their own models in the same envelope under their own {@code format} name
 * ({@link #writeEnvelope}, {@link #readBody}) and embed a layer-wise predictor as its body ({@link #body},
 * {@link #predictor}).
 */
public final class ModelFile {
    static final String LIBRARY_VERSION = "0.1.0";
    static final String FORMAT = "scaledl-model";
    static final int FORMAT_VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ModelFile() {
    }

    static void write(RuntimePredictor p, Path file) {
        writeEnvelope(FORMAT, FORMAT_VERSION, body(p), file);
    }

    /**
     * Writes {@code {"format", "format_version", "body", "sha256"}} atomically (a temporary file, then a move).
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void writeEnvelope(String format, int version, ObjectNode body, Path file) {
        try {
            byte[] bytes = envelope(format, version, body);
            Path parent = file.toAbsolutePath().getParent();
            Path tmp = Files.createTempFile(parent, ".scaledl-", ".tmp");
            Files.write(tmp, bytes);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write model to " + file + ": " + e.getMessage(), e);
        }
    }

    static byte[] serialize(RuntimePredictor p) throws JsonProcessingException {
        return envelope(FORMAT, FORMAT_VERSION, body(p));
    }

    /** The checksummed envelope of a body, as pretty-printed UTF-8 JSON. */
    public static byte[] envelope(String format, int version, ObjectNode body) throws JsonProcessingException {
        String bodyText = JSON.writeValueAsString(body);
        ObjectNode root = JSON.createObjectNode();
        root.put("format", format);
        root.put("format_version", version);
        root.set("body", body);
        root.put("sha256", sha256(bodyText));
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root);
    }

    /** A layer-wise predictor as a JSON body (provenance and model), for embedding in another model file. */
    public static ObjectNode body(RuntimePredictor p) {
        RuntimePredictor.Provenance prov = p.provenance();
        ObjectNode body = JSON.createObjectNode();
        body.put("library_version", prov.libraryVersion());
        body.put("created_at", prov.createdAt());
        body.put("seed", prov.seed());
        ObjectNode config = body.putObject("config");
        new TreeMap<>(prov.config()).forEach(config::put);
        ObjectNode training = body.putObject("training");
        training.put("samples", prov.trainingSamples());
        training.put("fingerprint", prov.dataFingerprint());
        prov.devices().forEach(training.putArray("devices")::add);
        if (Double.isNaN(prov.cvMre())) {
            training.putNull("cv_mre");
        } else {
            training.put("cv_mre", prov.cvMre());
        }
        ObjectNode model = body.putObject("model");
        model.put("name", p.name());
        model.put("shrinkage", p.shrinkage());
        double[] interval = p.intervalLogRatios();
        model.putArray("interval_log_ratios").add(interval[0]).add(interval[1]);
        ArrayNode cols = model.putArray("columns");
        LayerBasis.standard().columnNames().forEach(cols::add);
        ArrayNode coef = model.putArray("coefficients");
        for (double c : p.coefficients()) {
            coef.add(c);
        }
        return body;
    }

    static RuntimePredictor read(Path file) {
        JsonNode body = readBody(file, FORMAT, FORMAT_VERSION);
        try {
            return predictor(body);
        } catch (InvalidInputException e) {
            throw e.withSource(file.toString());
        }
    }

    /**
     * Reads an envelope and returns its verified body.
     *
     * @throws InvalidInputException naming the file for unreadable, foreign ({@code format} differs), newer
     *         ({@code format_version > maxVersion}), truncated or modified (checksum) files
     */
    public static JsonNode readBody(Path file, String format, int maxVersion) {
        String source = file.toString();
        byte[] bytes;
        try {
            long size = Files.size(file);
            if (size > 64L << 20) {
                throw InvalidInputException.inSource(source, "model file of " + size + " bytes is too large");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw InvalidInputException.unreadable(file, "cannot read model", e);
        }
        JsonNode root;
        try {
            root = JSON.readTree(bytes);
        } catch (IOException e) {
            throw InvalidInputException.wrap(source, "not a scaledl model file (invalid JSON: "
                    + e.getMessage() + ")", e);
        }
        if (root == null || !root.isObject() || !format.equals(root.path("format").asText())) {
            throw InvalidInputException.inSource(source, "not a scaledl model file (no \"format\": \"" + format
                    + "\"" + (root != null && root.isObject() && root.has("format") ? "; it is \""
                    + root.path("format").asText() + "\"" : "") + ")");
        }
        int version = root.path("format_version").asInt(-1);
        if (version > maxVersion) {
            throw InvalidInputException.inSource(source, "model format version " + version
                    + " is newer than this library reads (" + maxVersion + "); upgrade scaledl");
        }
        if (version < 1) {
            throw InvalidInputException.inSource(source, "invalid model format version " + version);
        }
        JsonNode body = root.path("body");
        String expected = root.path("sha256").asText("");
        try {
            if (!body.isObject() || !sha256(JSON.writeValueAsString(body)).equals(expected)) {
                throw InvalidInputException.inSource(source, "checksum mismatch: the model file was truncated or "
                        + "modified after it was saved");
            }
        } catch (JsonProcessingException e) {
            throw InvalidInputException.wrap(source, "cannot check model: " + e.getOriginalMessage(), e);
        }
        return body;
    }

    /**
     * A layer-wise predictor from a body written by {@link #body}.
     *
     * @throws InvalidInputException for a malformed body
     */
    public static RuntimePredictor predictor(JsonNode body) {
        try {
            return decode(body);
        } catch (InvalidInputException e) {
            throw e;
        } catch (RuntimeException e) {
            throw InvalidInputException.of("invalid model body: " + e.getMessage());
        }
    }

    private static RuntimePredictor decode(JsonNode body) {
        JsonNode model = body.path("model");
        List<String> columns = new ArrayList<>();
        model.path("columns").forEach(c -> columns.add(c.asText()));
        if (!columns.equals(LayerBasis.standard().columnNames())) {
            throw InvalidInputException.of("the model's basis columns differ from this library's; refit the model");
        }
        JsonNode coef = model.path("coefficients");
        double[] theta = new double[columns.size()];
        if (coef.size() != theta.length) {
            throw InvalidInputException.of(coef.size() + " coefficients for " + theta.length + " columns");
        }
        for (int i = 0; i < theta.length; i++) {
            theta[i] = finite(coef.get(i), "coefficient " + i);
        }
        JsonNode interval = model.path("interval_log_ratios");
        double lo = finite(interval.get(0), "interval");
        double hi = finite(interval.get(1), "interval");
        Map<String, String> config = new TreeMap<>();
        body.path("config").fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        JsonNode training = body.path("training");
        JsonNode cv = training.path("cv_mre");
        List<String> devices = new ArrayList<>();
        training.path("devices").forEach(d -> devices.add(d.asText()));
        RuntimePredictor.Provenance prov = new RuntimePredictor.Provenance(body.path("library_version").asText(),
                training.path("fingerprint").asText(), training.path("samples").asInt(), body.path("seed").asLong(),
                config, cv.isNumber() ? cv.asDouble() : Double.NaN, body.path("created_at").asText(), devices);
        return new RuntimePredictor(model.path("name").asText("scaledl"), LayerBasis.standard(), theta,
                finite(model.get("shrinkage"), "shrinkage"), lo, hi, prov);
    }

    /**
     * A finite number from a model body.
     *
     * @throws InvalidInputException naming {@code what} when it is missing or not finite
     */
    public static double finite(JsonNode n, String what) {
        if (n == null || !n.isNumber() || !Double.isFinite(n.asDouble())) {
            throw InvalidInputException.of(what + " is missing or not a finite number");
        }
        return n.asDouble();
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
