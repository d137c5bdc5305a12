package org.scaledl.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import org.scaledl.InvalidInputException;

/**
 * The saved-predictor format: one JSON document
 *
 * <pre>
 * {"format": "scaledl-predictor", "format_version": 2, "body": {...}, "sha256": "&lt;hex SHA-256 of body&gt;"}
 * </pre>
 *
 * whose {@code body} holds the provenance (library version, creation time, seed, configuration, training-data
 * fingerprint, cross-validated MRE), the interval quantiles, the training {@link Domain}, and each stage: the layer
 * cost model ({@code {"kind": "host", "columns", "coefficients", "shrinkage"}} or {@code {"kind": "device", ...}}
 * with the tree ensembles packed little-endian in base64), the communication model, and the interaction stage
 * ({@code {"format": "gnn", "body": {...}}}, read by the {@link InteractionCodec} of that format). Doubles are
 * written in their shortest exact decimal form, so a round trip is bit-identical; the checksum covers the body's
 * compact serialisation, so a truncated or edited file is rejected rather than half loaded. A file from a newer
 * format version is rejected naming both versions. No Java serialisation is involved.
 *
 * <p>Version-1 files ({@code scaledl-model}, {@code scaledl-device-model} and, with {@code scaledl-graph} on the
 * class path, {@code scaledl-gnn-model}) still load; their predictors have no saved domain, so they warn only about
 * what a version-1 file knew (the devices).
 */
public final class ModelFile {
    static final String LIBRARY_VERSION = Version.get();
    /** The format name of predictor files. */
    public static final String FORMAT = "scaledl-predictor";
    static final int FORMAT_VERSION = 2;
    /** Version-1 host predictor files. */
    static final String V1_HOST = "scaledl-model";
    private static final long MAX_BYTES = 64L << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ModelFile() {
    }

    static void write(RuntimePredictor p, Path file) {
        writeEnvelope(FORMAT, FORMAT_VERSION, body(p), file);
    }

    static byte[] bytes(RuntimePredictor p) {
        try {
            return envelope(FORMAT, FORMAT_VERSION, body(p));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise a predictor", e);
        }
    }

    /**
     * Writes {@code {"format", "format_version", "body", "sha256"}} atomically (a temporary file, then a move); the
     * file is readable by the group and others as the umask allows (0644 under the usual 022), like any file the
     * user writes.
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void writeEnvelope(String format, int version, ObjectNode body, Path file) {
        try {
            byte[] bytes = envelope(format, version, body);
            Path parent = file.toAbsolutePath().getParent();
            Path tmp = Files.createTempFile(parent, ".scaledl-", ".tmp");
            Files.write(tmp, bytes);
            try {
                Set<PosixFilePermission> perms = PosixFilePermissions.fromString("rw-r--r--");
                Path probe = parent.resolve(".scaledl-umask-" + ProcessHandle.current().pid());
                Files.deleteIfExists(probe);
                Files.createFile(probe);
                perms.retainAll(Files.getPosixFilePermissions(probe));
                perms.add(PosixFilePermission.OWNER_READ);
                perms.add(PosixFilePermission.OWNER_WRITE);
                Files.delete(probe);
                Files.setPosixFilePermissions(tmp, perms);
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: the platform's defaults apply
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write model to " + file + ": " + e.getMessage(), e);
        }
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

    private static void provenance(ObjectNode body, RuntimePredictor.Provenance prov) {
        body.put("library_version", prov.libraryVersion());
        body.put("created_at", prov.createdAt());
        body.put("seed", prov.seed());
        ObjectNode config = body.putObject("config");
        new TreeMap<>(prov.config()).forEach(config::put);
        ObjectNode training = body.putObject("training");
        training.put("samples", prov.trainingSamples());
        training.put("fingerprint", prov.dataFingerprint());
        prov.devices().forEach(training.putArray("devices")::add);
        if (prov.devices().isEmpty()) {
            training.putArray("devices");
        }
        if (Double.isNaN(prov.cvMre())) {
            training.putNull("cv_mre");
        } else {
            training.put("cv_mre", prov.cvMre());
        }
    }

    private static RuntimePredictor.Provenance provenance(JsonNode body) {
        Map<String, String> config = new TreeMap<>();
        body.path("config").fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        JsonNode training = body.path("training");
        JsonNode cv = training.path("cv_mre");
        List<String> devices = new ArrayList<>();
        training.path("devices").forEach(d -> devices.add(d.asText()));
        return new RuntimePredictor.Provenance(body.path("library_version").asText(),
                training.path("fingerprint").asText(), training.path("samples").asInt(), body.path("seed").asLong(),
                config, cv.isNumber() ? cv.asDouble() : Double.NaN, body.path("created_at").asText(), devices);
    }

    /** A predictor as a version-2 body. */
    static ObjectNode body(RuntimePredictor p) {
        ObjectNode body = JSON.createObjectNode();
        provenance(body, p.provenance());
        body.put("name", p.name());
        double[] interval = p.intervalLogRatios();
        body.putArray("interval_log_ratios").add(interval[0]).add(interval[1]);
        body.set("domain", p.domain().toJson());
        ObjectNode layer = body.putObject("layer_cost");
        if (p.stage() instanceof HostStage hs) {
            layer.put("kind", "host");
            ArrayNode machines = layer.putArray("machines");
            hs.machines().forEach((device, h) -> {
                ObjectNode m = machines.addObject();
                m.put("device", device);
                m.put("shrinkage", h.shrinkage());
                ArrayNode cols = m.putArray("columns");
                h.basis().columnNames().forEach(cols::add);
                ArrayNode coef = m.putArray("coefficients");
                for (double c : h.coefficients()) {
                    coef.add(c);
                }
            });
            ArrayNode cal = layer.putArray("calibrations");
            hs.calibrations().forEach((device, c) -> {
                ObjectNode o = cal.addObject();
                o.put("device", device);
                o.put("base", c.base());
                o.put("all", c.all());
                o.put("runs", c.runs());
                ArrayNode delta = o.putArray("group_log_factors");
                for (double d : c.delta()) {
                    delta.add(d);
                }
                ArrayNode settings = o.putArray("setting_log_factors");
                for (double d : c.settings()) {
                    settings.add(d);
                }
            });
            body.putNull("communication");
        } else {
            DeviceStage d = (DeviceStage) p.stage();
            layer.put("kind", "device");
            layer.setAll(d.layers().body());
            if (d.communication().isPresent() && d.communication().get() instanceof AllReduceModel a) {
                body.set("communication", a.toJson());
            } else {
                body.putNull("communication");
            }
        }
        if (p.interactions().isPresent()) {
            ObjectNode i = body.putObject("interactions");
            i.put("format", p.interactions().get().format());
            i.set("body", p.interactions().get().body());
        } else {
            body.putNull("interactions");
        }
        return body;
    }

    static RuntimePredictor read(Path file) {
        byte[] bytes;
        try {
            long size = Files.size(file);
            if (size > MAX_BYTES) {
                throw InvalidInputException.inSource(file.toString(), "model file of " + size + " bytes is too large");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw InvalidInputException.unreadable(file, "cannot read model", e);
        }
        return read(bytes, file.toString());
    }

    static RuntimePredictor read(InputStream in, String source) {
        try {
            byte[] bytes = in.readNBytes((int) MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw InvalidInputException.inSource(source, "model of more than " + MAX_BYTES + " bytes");
            }
            return read(bytes, source);
        } catch (IOException e) {
            throw InvalidInputException.wrap(source, "cannot read model: " + e.getMessage(), e);
        }
    }

    static RuntimePredictor read(byte[] bytes, String source) {
        Envelope e = envelope(bytes, source);
        try {
            return switch (e.format()) {
                case FORMAT -> {
                    check(e, FORMAT_VERSION, source);
                    yield decodeV2(e.body());
                }
                case V1_HOST -> {
                    check(e, 1, source);
                    yield predictor(e.body());
                }
                case DeviceLayerModel.FORMAT -> {
                    check(e, 1, source);
                    yield deviceV1(e.body());
                }
                default -> {
                    for (InteractionCodec c : ServiceLoader.load(InteractionCodec.class)) {
                        InteractionCodec.V1 v1 = c.readV1(e.format(), e.body());
                        if (v1 != null) {
                            check(e, 1, source);
                            RuntimePredictor l = v1.layerwise();
                            yield new RuntimePredictor(v1.name(), l.stage(), v1.model(), l.intervalLogRatios()[0],
                                    l.intervalLogRatios()[1], l.domain(), l.provenance(), false);
                        }
                    }
                    throw InvalidInputException.of("not a scaledl model file (format \"" + e.format() + "\""
                            + (e.format().equals("scaledl-gnn-model") ? ", which needs scaledl-graph on the class "
                                    + "path" : "") + ")");
                }
            };
        } catch (InvalidInputException x) {
            throw x.source().isPresent() ? x : x.withSource(source);
        } catch (RuntimeException x) {
            throw InvalidInputException.wrap(source, "invalid model body: " + x.getMessage(), x);
        }
    }

    private static void check(Envelope e, int maxVersion, String source) {
        if (e.version() > maxVersion) {
            throw InvalidInputException.inSource(source, "model format version " + e.version()
                    + " is newer than this library reads (" + maxVersion + "); upgrade scaledl");
        }
        if (e.version() < 1) {
            throw InvalidInputException.inSource(source, "invalid model format version " + e.version());
        }
    }

    private record Envelope(String format, int version, JsonNode body) {
    }

    private static Envelope envelope(byte[] bytes, String source) {
        JsonNode root;
        try {
            root = JSON.readTree(bytes);
        } catch (IOException e) {
            throw InvalidInputException.wrap(source, "not a scaledl model file (invalid JSON: "
                    + e.getMessage() + ")", e);
        }
        if (root == null || !root.isObject() || !root.path("format").isTextual()) {
            throw InvalidInputException.inSource(source, "not a scaledl model file (no \"format\")");
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
        return new Envelope(root.path("format").asText(), root.path("format_version").asInt(-1), body);
    }

    /**
     * Reads an envelope of a given format and returns its verified body (for companion modules' own files).
     *
     * @throws InvalidInputException naming the file for unreadable, foreign ({@code format} differs), newer
     *         ({@code format_version > maxVersion}), truncated or modified (checksum) files
     */
    public static JsonNode readBody(Path file, String format, int maxVersion) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw InvalidInputException.unreadable(file, "cannot read model", e);
        }
        Envelope e = envelope(bytes, file.toString());
        if (!e.format().equals(format)) {
            throw InvalidInputException.inSource(file.toString(), "not a scaledl model file of format \"" + format
                    + "\"; it is \"" + e.format() + "\"");
        }
        check(e, maxVersion, file.toString());
        return e.body();
    }

    private static RuntimePredictor decodeV2(JsonNode body) {
        RuntimePredictor.Provenance prov = provenance(body);
        JsonNode interval = body.path("interval_log_ratios");
        double lo = finite(interval.get(0), "interval");
        double hi = finite(interval.get(1), "interval");
        Domain domain = Domain.fromJson(body.path("domain"));
        JsonNode layer = body.path("layer_cost");
        LayerStage stage = switch (layer.path("kind").asText()) {
            case "host" -> hostStage(layer, prov);
            case "device" -> new DeviceStage(DeviceLayerModel.read(layer),
                    body.path("communication").isObject() ? java.util.Optional.of(AllReduceModel.fromJson(
                            body.path("communication"))) : java.util.Optional.empty());
            default -> throw InvalidInputException.of("unknown layer cost kind '" + layer.path("kind").asText()
                    + "'");
        };
        InteractionModel im = null;
        JsonNode i = body.path("interactions");
        if (i.isObject()) {
            String format = i.path("format").asText();
            for (InteractionCodec c : ServiceLoader.load(InteractionCodec.class)) {
                if (c.format().equals(format)) {
                    im = c.read(i.path("body"));
                }
            }
            if (im == null) {
                throw InvalidInputException.of("the interaction stage has format '" + format + "', and no "
                        + "InteractionCodec for it is on the class path (scaledl-graph reads 'gnn')");
            }
        }
        return new RuntimePredictor(body.path("name").asText("scaledl"), stage, im, lo, hi, domain, prov, false);
    }

    /** A host stage: its machines and calibrations (or, as written before machines, one basis at the top level). */
    private static HostStage hostStage(JsonNode layer, RuntimePredictor.Provenance prov) {
        if (!layer.has("machines")) {
            return HostStage.of(prov.devices().size() == 1 ? prov.devices().get(0) : "", host(layer));
        }
        Map<String, HostLayerModel> machines = new java.util.LinkedHashMap<>();
        for (JsonNode m : layer.path("machines")) {
            machines.put(m.path("device").asText(""), host(m));
        }
        if (machines.isEmpty()) {
            throw InvalidInputException.of("a host predictor needs at least one machine");
        }
        Map<String, HostStage.Calibration> cal = new TreeMap<>();
        for (JsonNode c : layer.path("calibrations")) {
            String base = c.path("base").asText();
            if (!machines.containsKey(base)) {
                throw InvalidInputException.of("calibration of '" + c.path("device").asText() + "' names unknown "
                        + "base machine '" + base + "'");
            }
            JsonNode d = c.path("group_log_factors");
            double[] delta = new double[d.size()];
            for (int i = 0; i < delta.length; i++) {
                delta[i] = finite(d.get(i), "group_log_factors[" + i + "]");
            }
            JsonNode st = c.path("setting_log_factors");   // absent in files written before setting factors
            double[] settings = new double[st.size()];
            for (int i = 0; i < settings.length; i++) {
                settings[i] = finite(st.get(i), "setting_log_factors[" + i + "]");
            }
            cal.put(c.path("device").asText(), new HostStage.Calibration(base, finite(c.path("all"), "all"), delta,
                    settings, c.path("runs").asInt()));
        }
        return new HostStage(machines, cal);
    }

    private static HostLayerModel host(JsonNode model) {
        List<String> columns = new ArrayList<>();
        model.path("columns").forEach(c -> columns.add(c.asText()));
        LayerBasis basis = columns.equals(LayerBasis.standard().columnNames()) ? LayerBasis.standard()
                : columns.equals(LayerBasis.v1().columnNames()) ? LayerBasis.v1() : null;
        if (basis == null) {
            throw InvalidInputException.of("the model's basis columns differ from this library's; refit the model");
        }
        JsonNode coef = model.path("coefficients");
        double[] theta = new double[columns.size()];
        if (coef.size() != theta.length) {
            throw InvalidInputException.of(coef.size() + " coefficients for " + theta.length + " columns");
        }
        for (int k = 0; k < theta.length; k++) {
            theta[k] = finite(coef.get(k), "coefficient " + k);
        }
        return new HostLayerModel(basis, theta, finite(model.get("shrinkage"), "shrinkage"));
    }

    /**
     * A layer-wise host predictor from a version-1 body (format {@code scaledl-model}), as embedded in version-1
     * GNN files.
     *
     * @throws InvalidInputException for a malformed body
     */
    public static RuntimePredictor predictor(JsonNode body) {
        try {
            JsonNode model = body.path("model");
            JsonNode interval = model.path("interval_log_ratios");
            double lo = finite(interval.get(0), "interval");
            double hi = finite(interval.get(1), "interval");
            RuntimePredictor.Provenance prov = provenance(body);
            return new RuntimePredictor(model.path("name").asText("scaledl"), HostStage.of(prov.devices().size() == 1
                    ? prov.devices().get(0) : "", host(model)), null, lo, hi,
                    Domain.unknown(prov.devices(), !Double.isNaN(prov.cvMre())), prov, false);
        } catch (InvalidInputException e) {
            throw e;
        } catch (RuntimeException e) {
            throw InvalidInputException.of("invalid model body: " + e.getMessage());
        }
    }

    private static RuntimePredictor deviceV1(JsonNode body) {
        DeviceLayerModel m = DeviceLayerModel.read(body);
        Map<String, String> config = Map.of("name", "scaledl-device", "layer_cost", "device");
        RuntimePredictor.Provenance prov = new RuntimePredictor.Provenance(body.path("library_version").asText(), "",
                0, 0, config, Double.NaN, body.path("created_at").asText(), m.devices());
        return new RuntimePredictor("scaledl-device", new DeviceStage(m, java.util.Optional.empty()), null, 0, 0,
                Domain.unknown(m.devices(), false), prov, false);
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
