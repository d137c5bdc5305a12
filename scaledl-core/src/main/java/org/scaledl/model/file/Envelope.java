package org.scaledl.model.file;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.scaledl.Digests;
import org.scaledl.InvalidInputException;
import org.scaledl.JsonTrees;

/**
 * The checksummed envelope every scaledl model file shares:
 *
 * <pre>
 * {"format": "scaledl-predictor", "format_version": 2, "body": {...}, "sha256": "&lt;hex SHA-256 of body&gt;"}
 * </pre>
 *
 * <p>The checksum covers the body's compact serialisation, so a truncated or accidentally edited file is rejected
 * rather than half loaded. It is <b>not</b> a signature: anyone can recompute it, so a file from an untrusted source
 * is only as safe as the range checks each codec applies to every field it reads ({@link Fields}). Doubles are written
 * in their shortest exact decimal form, so a round trip is bit-identical. No Java serialisation is involved.
 *
 * <pre>{@code
 * Envelope.write("my-format", 1, body, Path.of("model.json"));
 * Envelope e = Envelope.read(bytes, "model.json");
 * }</pre>
 *
 * @param format  the envelope's {@code format}
 * @param version its {@code format_version}
 * @param body    the verified body
 */
public record Envelope(String format, int version, JsonNode body) {
    /** The largest model file read, bytes. */
    public static final long MAX_BYTES = 64L << 20;
    /** The pretty printer of saved files, built on the first save (reading needs none: {@link JsonTrees}). */
    private static final class Writer {
        static final ObjectMapper JSON = JsonMapper.builder().build();
    }

    /** The checksummed envelope of a body, as pretty-printed UTF-8 JSON. */
    public static byte[] bytes(String format, int version, ObjectNode body) {
        try {
            String bodyText = JsonTrees.write(body);
            ObjectNode root = JsonNodeFactory.instance.objectNode();
            root.put("format", format);
            root.put("format_version", version);
            root.set("body", body);
            root.put("sha256", sha256(bodyText));
            return Writer.JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise a model body", e);
        }
    }

    /**
     * Writes the envelope of a body to a file, safely ({@link SafeFiles#write}).
     *
     * @throws UncheckedIOException if the file cannot be written, or the path names something other than a regular
     *         file (a device, a pipe, a directory, a symbolic link): nothing there is replaced
     */
    public static void write(String format, int version, ObjectNode body, Path file) {
        SafeFiles.write(file, bytes(format, version, body));
    }

    /**
     * Reads and verifies an envelope.
     *
     * @param source what to call the bytes in error messages
     * @throws InvalidInputException for invalid JSON, a missing format, or a checksum that does not match
     */
    public static Envelope read(byte[] bytes, String source) {
        return read(bytes, source, true);
    }

    /**
     * Reads an envelope, verifying its checksum or not: bytes whose integrity their origin vouches for (a resource of
     * the library's own jar, verified when the jar was built) skip the SHA-256 of the body, a tenth of a second of a
     * cold start for a 5 MB model; every field is still range-checked where it is read.
     *
     * @throws InvalidInputException for invalid JSON, a missing format, or (verifying) a checksum that does not match
     */
    public static Envelope read(byte[] bytes, String source, boolean verify) {
        JsonNode root;
        JsonTrees.Located located;
        try {
            // nesting and number lengths bounded: a hostile file cannot exhaust the stack or the CPU
            located = JsonTrees.read(bytes, "body");
            root = located.tree();
        } catch (IOException e) {
            throw InvalidInputException.invalidJson(source, "not a scaledl model file", e);
        }
        if (root == null || !root.isObject() || !root.path("format").isTextual()) {
            throw InvalidInputException.inSource(source, "not a scaledl model file (no \"format\")");
        }
        JsonNode body = root.path("body");
        String expected = root.path("sha256").asText("");
        // the file's own text of the body without whitespace is the text the checksum was taken of, unless the file
        // was re-formatted (other escapes or number forms): then the body written again, as it was when saved
        if (!body.isObject() || verify && !(located.start() >= 0 && sha256(JsonTrees.compact(bytes, located.start(),
                located.end())).equals(expected) || sha256(JsonTrees.write(body)).equals(expected))) {
            throw InvalidInputException.inSource(source, "checksum mismatch: the model file was truncated or "
                    + "modified after it was saved");
        }
        JsonNode version = root.path("format_version");
        // a whole number that an int holds: "3", 3.9 or 2^32 + 3 are no version (asInt would read them all as 3)
        if (!version.isIntegralNumber() || !version.canConvertToInt()) {
            throw InvalidInputException.inSource(source, "format_version " + (version.isMissingNode() ? "missing"
                    : InvalidInputException.escaped(version.toString()) + " is not a whole number")
                    + ": not a model file this release wrote");
        }
        return new Envelope(root.path("format").asText(), version.intValue(), body);
    }

    /**
     * Reads at most {@link #MAX_BYTES} of a file (a regular file, or anything that ends: a pipe that never does is
     * cut off at the limit).
     *
     * @throws InvalidInputException naming the file when it cannot be read or is larger than the limit
     */
    public static byte[] readFile(Path file) {
        return SafeFiles.readBounded(file, MAX_BYTES, "model file");
    }

    /** Reads at most {@link #MAX_BYTES} of a stream (read to its end or the limit, not closed). */
    public static byte[] readStream(InputStream in, String source) {
        try {
            byte[] bytes = in.readNBytes((int) MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw InvalidInputException.inSource(source, "model of more than " + MAX_BYTES + " bytes");
            }
            return bytes;
        } catch (IOException e) {
            throw InvalidInputException.inSource(source, "cannot read model: " + e.getMessage());
        }
    }

    /**
     * Refuses an envelope of a newer format version than {@code maxVersion} (naming both) or an invalid one.
     *
     * @throws InvalidInputException naming the source
     */
    public void requireVersion(int maxVersion, String source) {
        if (version > maxVersion) {
            throw InvalidInputException.inSource(source, "model format version " + version
                    + " is newer than this library reads (" + maxVersion + "); upgrade scaledl");
        }
        if (version < 1) {
            throw InvalidInputException.inSource(source, "invalid model format version " + version);
        }
    }

    /**
     * Reads an envelope of a given format from a file and returns its verified body (for companion modules' own
     * files).
     *
     * @throws InvalidInputException naming the file for unreadable, foreign ({@code format} differs), newer
     *         ({@code format_version > maxVersion}), truncated or modified (checksum) files
     */
    public static JsonNode readBody(Path file, String format, int maxVersion) {
        Envelope e = read(readFile(file), file.toString());
        if (!e.format().equals(format)) {
            throw InvalidInputException.inSource(file.toString(), "not a scaledl model file of format \"" + format
                    + "\"; it is \"" + e.format() + "\"");
        }
        e.requireVersion(maxVersion, file.toString());
        return e.body();
    }

    /** The hex SHA-256 of a text's UTF-8 bytes ({@link Digests#sha256(String)}). */
    public static String sha256(String text) {
        return Digests.sha256(text);
    }

    /** The hex SHA-256 of bytes ({@link Digests#sha256(byte[])}). */
    public static String sha256(byte[] bytes) {
        return Digests.sha256(bytes);
    }
}
