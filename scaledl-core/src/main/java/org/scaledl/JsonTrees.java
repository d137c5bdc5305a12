package org.scaledl;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.StringWriter;
import java.util.Iterator;
import java.util.Map;

/**
 * JSON trees read and written with Jackson's streaming parser and generator, without an {@code ObjectMapper}: the
 * same trees {@code ObjectMapper.readTree} builds (objects, arrays, text, int/long/big-integer and double numbers,
 * booleans, null; a repeated key keeps its last value) and the same compact text {@code writeValueAsString} writes,
 * at a fraction of a cold JVM's start-up cost (a mapper's serializers and deserializers are built on first use: about
 * 0.3 s before the first model file or configuration is read).
 *
 * <p>Nesting is limited to 64 levels, numbers to 64 characters and strings to 32 MiB.
 */
public final class JsonTrees {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).maxNumberLength(64)
                    .maxStringLength(32 << 20).build())
            .build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonTrees() {
    }

    /**
     * The tree of the first JSON value in the bytes ({@link MissingNode} when there is none).
     *
     * @throws IOException (a {@code JsonProcessingException}, with its location) for text that is not JSON
     */
    public static JsonNode read(byte[] bytes) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            JsonToken t = p.nextToken();
            return t == null ? MissingNode.getInstance() : value(p, t);
        }
    }

    /**
     * The tree of a JSON document, strictly: the bytes hold one JSON value and nothing after it but whitespace, and no
     * object names a key twice (where {@link #read(byte[])} would keep the last value). For the files a user writes
     * (model configurations, dataset metadata), where either is a mistake that would otherwise pass unnoticed.
     *
     * @throws IOException (a {@code JsonProcessingException}, with its location) for text that is not such a document
     */
    public static JsonNode readDocument(byte[] bytes) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            return document(p);
        }
    }

    /** {@link #readDocument(byte[])} of text. */
    public static JsonNode readDocument(String text) throws IOException {
        try (JsonParser p = FACTORY.createParser(text)) {
            return document(p);
        }
    }

    private static JsonNode document(JsonParser p) throws IOException {
        p.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        JsonToken t = p.nextToken();
        JsonNode tree = t == null ? MissingNode.getInstance() : value(p, t);
        if (t != null) {
            requireEnd(p);
        }
        return tree;
    }

    /** Refuses text after a document's value (the parser stands on its last token). */
    private static void requireEnd(JsonParser p) throws IOException {
        if (p.nextToken() != null) {
            throw new com.fasterxml.jackson.core.JsonParseException(p, "more text after the JSON value ("
                    + p.currentToken() + ")");
        }
    }

    /** {@link #read(byte[])} of text. */
    public static JsonNode read(String text) throws IOException {
        try (JsonParser p = FACTORY.createParser(text)) {
            JsonToken t = p.nextToken();
            return t == null ? MissingNode.getInstance() : value(p, t);
        }
    }

    /**
     * A JSON object's tree with where one of its top-level members' value lies in the bytes.
     *
     * @param tree  the tree ({@link MissingNode} for empty input)
     * @param start the member's value's first byte, or -1 when the tree is no object or has no such member
     * @param end   one past its last byte
     */
    public record Located(JsonNode tree, int start, int end) {
    }

    /**
     * {@link #read(byte[])}, noting where the top-level member {@code member}'s value lies, strictly as
     * {@link #readDocument(byte[])} reads (no key twice, nothing after the object).
     *
     * @throws IOException for text that is not such a JSON document
     */
    public static Located read(byte[] bytes, String member) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            // strictly, as a document (readDocument): a member named twice, or text after the object, is no model
            // file a library wrote, and the first of two would otherwise pass unverified
            p.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
            JsonToken t = p.nextToken();
            if (t != JsonToken.START_OBJECT) {
                return new Located(t == null ? MissingNode.getInstance() : value(p, t), -1, -1);
            }
            ObjectNode o = NODES.objectNode();
            int start = -1;
            int end = -1;
            for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                long from = p.currentTokenLocation().getByteOffset();
                o.set(name, value(p, v));
                if (name.equals(member)) {
                    // the value was read to its end: the parser stands just past it
                    start = (int) from;
                    end = (int) p.currentLocation().getByteOffset();
                }
            }
            requireEnd(p);
            return new Located(o, start, end);
        }
    }

    /**
     * The bytes of a JSON text without the whitespace between its tokens: the compact form of a text whose strings
     * and numbers are already written as {@link #write} writes them.
     */
    public static byte[] compact(byte[] bytes, int start, int end) {
        byte[] out = new byte[end - start];
        int n = 0;
        boolean inString = false;
        for (int i = start; i < end; i++) {
            byte c = bytes[i];
            if (inString) {
                out[n++] = c;
                if (c == '\\' && i + 1 < end) {
                    out[n++] = bytes[++i];
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
                out[n++] = c;
            } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                out[n++] = c;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    private static JsonNode value(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case START_OBJECT -> {
                ObjectNode o = NODES.objectNode();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String name = p.currentName();
                    o.set(name, value(p, p.nextToken()));
                }
                return o;
            }
            case START_ARRAY -> {
                ArrayNode a = NODES.arrayNode();
                for (JsonToken x = p.nextToken(); x != JsonToken.END_ARRAY; x = p.nextToken()) {
                    a.add(value(p, x));
                }
                return a;
            }
            case VALUE_STRING -> {
                return NODES.textNode(p.getText());
            }
            case VALUE_NUMBER_INT -> {
                return switch (p.getNumberType()) {
                    case INT -> NODES.numberNode(p.getIntValue());
                    case LONG -> NODES.numberNode(p.getLongValue());
                    default -> NODES.numberNode(p.getBigIntegerValue());
                };
            }
            case VALUE_NUMBER_FLOAT -> {
                return NODES.numberNode(p.getDoubleValue());
            }
            case VALUE_TRUE -> {
                return NODES.booleanNode(true);
            }
            case VALUE_FALSE -> {
                return NODES.booleanNode(false);
            }
            case VALUE_NULL -> {
                return NODES.nullNode();
            }
            default -> throw new com.fasterxml.jackson.core.JsonParseException(p, "unexpected token " + t);
        }
    }

    /** The compact text of a tree, as {@code ObjectMapper.writeValueAsString} writes it. */
    public static String write(JsonNode node) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            write(g, node);
        } catch (IOException e) {
            throw new IllegalStateException("writing JSON to a string failed", e);
        }
        return out.toString();
    }

    private static void write(JsonGenerator g, JsonNode n) throws IOException {
        switch (n.getNodeType()) {
            case OBJECT -> {
                g.writeStartObject();
                for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> e = it.next();
                    g.writeFieldName(e.getKey());
                    write(g, e.getValue());
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (JsonNode x : n) {
                    write(g, x);
                }
                g.writeEndArray();
            }
            case STRING -> g.writeString(n.textValue());
            case NUMBER -> {
                switch (n.numberType()) {
                    case INT -> g.writeNumber(n.intValue());
                    case LONG -> g.writeNumber(n.longValue());
                    case BIG_INTEGER -> g.writeNumber(n.bigIntegerValue());
                    case FLOAT -> g.writeNumber(n.floatValue());
                    case BIG_DECIMAL -> g.writeNumber(n.decimalValue());
                    default -> g.writeNumber(n.doubleValue());
                }
            }
            case BOOLEAN -> g.writeBoolean(n.booleanValue());
            case NULL -> g.writeNull();
            default -> throw new IllegalArgumentException("not a JSON value: " + n.getNodeType());
        }
    }
}
