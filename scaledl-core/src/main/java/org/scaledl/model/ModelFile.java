package org.scaledl.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import org.scaledl.InvalidInputException;
import org.scaledl.model.cost.LayerStage;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.device.DeviceStage;
import org.scaledl.model.file.Envelope;
import org.scaledl.model.file.Fields;
import org.scaledl.model.host.HostStage;

/**
 * The saved-predictor format, inside the checksummed {@link Envelope}:
 *
 * <pre>
 * {"format": "scaledl-predictor", "format_version": 3, "body": {...}, "sha256": "..."}
 * </pre>
 *
 * whose {@code body} holds the provenance (library version, creation time, seed, configuration, training-data
 * fingerprint, cross-validated MRE), the interval quantiles, the training {@link Domain}, the layer cost stage as it
 * writes itself ({@code {"kind": "host", "machines", "calibrations"}} or {@code {"kind": "device", ...,
 * "communication"}} with the tree ensembles packed little-endian in base64), and the interaction stage
 * ({@code {"format": "gnn", "body": {...}}}, read by the {@link InteractionCodec} of that format). Every field is
 * range-checked where it is read: the checksum protects against truncation and accidents, not against a crafted file.
 *
 * <p>Version 2 (the communication model beside the layer cost) and version 1 ({@code scaledl-model},
 * {@code scaledl-device-model} and, with {@code scaledl-graph} on the class path, {@code scaledl-gnn-model}) files
 * still load and predict bit-identically; version-1 predictors have no saved domain, so they warn only about what a
 * version-1 file knew (the devices).
 */
public final class ModelFile {
    /** The format name of predictor files. */
    public static final String FORMAT = "scaledl-predictor";
    /** The version this library writes. */
    static final int FORMAT_VERSION = 3;
    /** Version-1 host predictor files. */
    static final String V1_HOST = "scaledl-model";
    /** The widest interval a file may hold, in log-ratio: e^±10 is no interval. */
    private static final double MAX_LOG_INTERVAL = 10;

    private ModelFile() {
    }

    static void write(RuntimePredictor p, Path file) {
        Envelope.write(FORMAT, FORMAT_VERSION, body(p), file);
    }

    static byte[] bytes(RuntimePredictor p) {
        return Envelope.bytes(FORMAT, FORMAT_VERSION, body(p));
    }

    private static void provenance(ObjectNode body, Provenance prov) {
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

    private static Provenance provenance(JsonNode body) {
        Map<String, String> config = new TreeMap<>();
        body.path("config").fields().forEachRemaining(e -> config.put(plain(e.getKey(), "config key"),
                plain(e.getValue().asText(), "config." + e.getKey())));
        JsonNode training = body.path("training");
        JsonNode cv = training.path("cv_mre");
        List<String> devices = new ArrayList<>();
        training.path("devices").forEach(d -> devices.add(plain(d.asText(), "training.devices")));
        return new Provenance(plain(body.path("library_version").asText(), "library_version"),
                training.path("fingerprint").asText(),
                training.has("samples") ? Fields.intInRange(training.get("samples"), "training.samples", 0,
                        Integer.MAX_VALUE) : 0, body.path("seed").asLong(), config,
                cv.isNumber() ? Fields.inRange(cv, "cv_mre", 0, Double.MAX_VALUE) : Double.NaN,
                plain(body.path("created_at").asText(), "created_at"), devices);
    }

    /**
     * A provenance text as read, refused where it holds a character that can forge or hide output (a terminal escape
     * in a device's name): {@code inspect} and the warnings print these texts.
     */
    private static String plain(String text, String where) {
        if (!InvalidInputException.escaped(text).equals(text)) {
            throw InvalidInputException.of(where + " holds a control character ('"
                    + InvalidInputException.escaped(text.length() > 60 ? text.substring(0, 60) + "..." : text) + "')");
        }
        return text;
    }

    /** A predictor as a body of the current version. */
    static ObjectNode body(RuntimePredictor p) {
        ObjectNode body = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        provenance(body, p.provenance());
        body.put("name", p.name());
        double[] interval = p.intervalLogRatios();
        body.putArray("interval_log_ratios").add(interval[0]).add(interval[1]);
        body.set("domain", p.domain().toJson());
        body.set("layer_cost", p.stage().toJson());
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
        return read(Envelope.readFile(file), file.toString());
    }

    static RuntimePredictor read(InputStream in, String source) {
        return read(Envelope.readStream(in, source), source);
    }

    static RuntimePredictor read(byte[] bytes, String source) {
        return read(bytes, source, true);
    }

    static RuntimePredictor read(byte[] bytes, String source, boolean verify) {
        Envelope e = Envelope.read(bytes, source, verify);
        try {
            return switch (e.format()) {
                case FORMAT -> {
                    e.requireVersion(FORMAT_VERSION, source);
                    yield decode(e.body(), e.version());
                }
                case V1_HOST -> {
                    e.requireVersion(1, source);
                    yield predictor(e.body());
                }
                case DeviceLayerModel.FORMAT -> {
                    e.requireVersion(1, source);
                    yield deviceV1(e.body());
                }
                default -> {
                    for (InteractionCodec c : ServiceLoader.load(InteractionCodec.class)) {
                        InteractionCodec.V1 v1 = c.readV1(e.format(), e.body());
                        if (v1 != null) {
                            e.requireVersion(1, source);
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

    private static RuntimePredictor decode(JsonNode body, int version) {
        Provenance prov = provenance(body);
        JsonNode interval = body.path("interval_log_ratios");
        double lo = Fields.inRange(interval.get(0), "interval_log_ratios[0]", -MAX_LOG_INTERVAL, 0);
        double hi = Fields.inRange(interval.get(1), "interval_log_ratios[1]", 0, MAX_LOG_INTERVAL);
        Domain domain = Domain.fromJson(body.path("domain"));
        JsonNode layer = body.path("layer_cost");
        String kind = layer.path("kind").asText();
        LayerStage stage = switch (kind) {
            case HostStage.KIND -> HostStage.read(layer, onlyDevice(prov));
            case DeviceStage.KIND -> DeviceStage.read(layer, version < 3 ? body.path("communication") : null);
            default -> throw InvalidInputException.of("unknown layer cost kind '" + kind + "'");
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

    private static String onlyDevice(Provenance prov) {
        return prov.devices().size() == 1 ? prov.devices().get(0) : "";
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
            double lo = Fields.inRange(interval.get(0), "interval_log_ratios[0]", -MAX_LOG_INTERVAL, 0);
            double hi = Fields.inRange(interval.get(1), "interval_log_ratios[1]", 0, MAX_LOG_INTERVAL);
            Provenance prov = provenance(body);
            return new RuntimePredictor(model.path("name").asText("scaledl"), HostStage.read(model, onlyDevice(prov)),
                    null, lo, hi, Domain.unknown(prov.devices(), !Double.isNaN(prov.cvMre())), prov, false);
        } catch (InvalidInputException e) {
            throw e;
        } catch (RuntimeException e) {
            throw InvalidInputException.of("invalid model body: " + e.getMessage());
        }
    }

    private static RuntimePredictor deviceV1(JsonNode body) {
        DeviceStage stage = DeviceStage.read(body, null);
        List<String> devices = stage.devices();
        Map<String, String> config = Map.of("name", "scaledl-device", "layer_cost", "device");
        Provenance prov = new Provenance(plain(body.path("library_version").asText(), "library_version"), "", 0, 0,
                config, Double.NaN, plain(body.path("created_at").asText(), "created_at"), devices);
        return new RuntimePredictor("scaledl-device", stage, null, 0, 0, Domain.unknown(devices, false), prov, false);
    }
}
