package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.ContainerNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.InvalidInputException;
import org.scaledl.model.file.Envelope;
import org.scaledl.workload.Workload;

/**
 * A model file's checksum is no signature, so a crafted file is only as harmless as the range checks at load: a real
 * saved predictor (re-saved in the current format) with one numeric field of its body set to a hostile value
 * (negative, zero, huge, subnormal, a number's name as a string, an integer past any range, null), and its checksum
 * recomputed the way {@link Envelope} does, either loads and predicts finite, non-negative times (interval included)
 * or is refused with an {@link InvalidInputException}: never another exception. Loading and predicting never hang,
 * because every size a file states is range-checked before anything is allocated for it. One subclass per kind of
 * predictor file.
 */
public abstract class HostileModelFiles {
    /** A saved predictor. */
    protected abstract Path file();

    /** A workload the predictor in {@link #file()} predicts. */
    protected abstract Workload workload();

    private ObjectNode body;
    private String format;
    private int version;
    private List<JsonNode[]> numbers;

    private void load() throws Exception {
        if (body == null) {
            byte[] current = RuntimePredictor.load(file()).toBytes();
            JsonNode root = org.scaledl.JsonTrees.read(current);
            format = root.path("format").asText();
            version = root.path("format_version").asInt();
            body = (ObjectNode) root.path("body");
            numbers = new ArrayList<>();
            collect(body, numbers);
            assertTrue(numbers.size() > 10, "numeric fields of " + file());
        }
    }

    /** Every numeric field, as {container, field name or index}. */
    private static void collect(JsonNode node, List<JsonNode[]> out) {
        if (node instanceof ObjectNode o) {
            o.fields().forEachRemaining(e -> {
                if (e.getValue().isNumber()) {
                    out.add(new JsonNode[] {o, TextNode.valueOf(e.getKey())});
                }
                collect(e.getValue(), out);
            });
        } else if (node instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i).isNumber()) {
                    out.add(new JsonNode[] {a, IntNode.valueOf(i)});
                }
                collect(a.get(i), out);
            }
        }
    }

    /** The values a field is set to. */
    private static final List<JsonNode> HOSTILE = List.of(IntNode.valueOf(-1), IntNode.valueOf(0),
            DoubleNode.valueOf(1e308), DoubleNode.valueOf(-1e308), DoubleNode.valueOf(4.9e-324),
            DoubleNode.valueOf(-0.0), DoubleNode.valueOf(0.5), DoubleNode.valueOf(1e7),
            IntNode.valueOf(Integer.MAX_VALUE), IntNode.valueOf(Integer.MIN_VALUE), LongNode.valueOf(Long.MAX_VALUE),
            BigIntegerNode.valueOf(BigInteger.TEN.pow(40)), TextNode.valueOf("NaN"), TextNode.valueOf("Infinity"),
            TextNode.valueOf("-Infinity"), TextNode.valueOf("1e7"), NullNode.getInstance());

    @Provide
    Arbitrary<JsonNode> hostile() {
        return Arbitraries.of(HOSTILE);
    }

    @Property(tries = 250)
    void aFieldSetToAHostileValueLoadsAndPredictsOrIsRefused(@ForAll @IntRange(min = 0, max = 1 << 30) int which,
            @ForAll("hostile") JsonNode value) throws Exception {
        load();
        ObjectNode mutated = body.deepCopy();
        JsonNode[] at = numbers.get(which % numbers.size());
        String path = set(mutated, body, at, value);
        byte[] bytes = Envelope.bytes(format, version, mutated);
        RuntimePredictor p;
        try {
            p = RuntimePredictor.load(bytes);
        } catch (InvalidInputException refused) {
            return;
        }
        Prediction pr = assertDoesNotThrow(() -> p.predict(workload()), path + " = " + value + " loads");
        assertTrue(Double.isFinite(pr.millis()) && pr.millis() >= 0 && Double.isFinite(pr.lowMillis())
                && pr.lowMillis() >= 0 && Double.isFinite(pr.highMillis()) && pr.highMillis() >= pr.lowMillis(),
                path + " = " + value + " loads and predicts " + pr.millis() + " [" + pr.lowMillis() + ", "
                        + pr.highMillis() + "]");
    }

    /** Sets the field in the copy that is at {@code at} in the original; returns its path, for the message. */
    private static String set(JsonNode copy, JsonNode original, JsonNode[] at, JsonNode value) {
        if (original == at[0]) {
            if (copy instanceof ObjectNode o) {
                o.set(at[1].asText(), value);
                return at[1].asText();
            }
            ((ArrayNode) copy).set(at[1].asInt(), value);
            return "[" + at[1].asInt() + "]";
        }
        if (original instanceof ObjectNode o) {
            for (var it = o.fields(); it.hasNext();) {
                var e = it.next();
                if (e.getValue() instanceof ContainerNode<?>) {
                    String p = set(copy.get(e.getKey()), e.getValue(), at, value);
                    if (p != null) {
                        return e.getKey() + "." + p;
                    }
                }
            }
        } else if (original instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i) instanceof ContainerNode<?>) {
                    String p = set(copy.get(i), a.get(i), at, value);
                    if (p != null) {
                        return "[" + i + "]." + p;
                    }
                }
            }
        }
        return null;
    }
}
