package org.scaledl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link JsonTrees}, the fast reader and writer, against Jackson's {@code ObjectMapper} (the slow reference): the same
 * trees, the same compact text, the same refusals.
 */
class JsonTreesProperties {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Property(tries = 300)
    void readsAndWritesAsTheObjectMapperDoes(@ForAll("json") String text) throws Exception {
        JsonNode reference = MAPPER.readTree(text);
        JsonNode fast = JsonTrees.read(text.getBytes(StandardCharsets.UTF_8));
        assertEquals(reference, fast);
        assertEquals(reference, JsonTrees.read(text));
        assertEquals(MAPPER.writeValueAsString(reference), JsonTrees.write(fast));
        String pretty = MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(reference);
        byte[] bytes = pretty.getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(MAPPER.writeValueAsString(reference).getBytes(StandardCharsets.UTF_8),
                JsonTrees.compact(bytes, 0, bytes.length), "pretty-printed text without its whitespace");
        // the strict reader: the same tree, unless an object names a key twice (the mapper keeps the last), which
        // it refuses, as it refuses text after the value
        try {
            assertEquals(reference, JsonTrees.readDocument(text));
        } catch (JsonProcessingException e) {
            org.junit.jupiter.api.Assertions.assertTrue(e.getOriginalMessage().startsWith("Duplicate field 'k"),
                    e.getOriginalMessage());
        }
        assertThrows(JsonProcessingException.class, () -> JsonTrees.readDocument(text + " 1"));
    }

    @Provide
    Arbitrary<String> json() {
        Arbitrary<String> leaf = Arbitraries.oneOf(
                Arbitraries.integers().map(String::valueOf),
                Arbitraries.longs().map(String::valueOf),
                Arbitraries.doubles().between(-1e12, 1e12).map(String::valueOf),
                Arbitraries.of("true", "false", "null", "1e300", "-0.0", "123456789012345678901234567890"),
                Arbitraries.strings().ofMaxLength(12).map(s -> {
                    try {
                        return MAPPER.writeValueAsString(s);
                    } catch (JsonProcessingException e) {
                        throw new AssertionError(e);
                    }
                }));
        return Arbitraries.recursive(() -> leaf, this::container, 4);
    }

    private Arbitrary<String> container(Arbitrary<String> inner) {
        Arbitrary<String> array = inner.list().ofMaxSize(4).map(l -> "[" + String.join(", ", l) + "]");
        Arbitrary<String> object = inner.list().ofMaxSize(4).map(l -> {
            StringBuilder sb = new StringBuilder("{");
            for (int i = 0; i < l.size(); i++) {
                // a repeated key keeps its last value, as the mapper does
                sb.append(i == 0 ? "" : ", ").append("\"k").append(i % 3).append("\": ").append(l.get(i));
            }
            return sb.append('}').toString();
        });
        return Arbitraries.oneOf(array, object);
    }

    /** The member's range is where its value's text lies; bad text is refused with its location. */
    @Test
    void locatesAMemberAndRefusesWhatIsNotJson() throws Exception {
        byte[] bytes = "{\"a\": 1, \"body\" : {\"x\": [1, 2]} , \"z\": \"s\"}".getBytes(StandardCharsets.UTF_8);
        JsonTrees.Located l = JsonTrees.read(bytes, "body");
        assertEquals("{\"x\": [1, 2]}", new String(bytes, l.start(), l.end() - l.start(), StandardCharsets.UTF_8));
        assertEquals(MAPPER.readTree(bytes), l.tree());
        assertEquals(-1, JsonTrees.read(bytes, "none").start());
        // located strictly: a member named twice (an unverified first "body") or text after the object is refused
        for (String bad : new String[] {"{\"body\": {\"x\": 1}, \"body\": {\"x\": 2}}", "{\"body\": {}} x",
            "{\"body\": {\"x\": 1, \"x\": 2}}", "{\"body\": {}} {}"}) {
            assertThrows(JsonProcessingException.class, () -> JsonTrees.read(bad.getBytes(StandardCharsets.UTF_8),
                    "body"), bad);
        }
        assertThrows(JsonProcessingException.class, () -> JsonTrees.read("{\"a\": NaN}".getBytes(StandardCharsets.UTF_8)));
        assertThrows(JsonProcessingException.class, () -> JsonTrees.read("[".repeat(100)));
        assertEquals(true, JsonTrees.read("").isMissingNode());
    }

    /** Every bundled model file reads as the mapper reads it. */
    @Test
    void readsTheBundledModelsAsTheMapperDoes() throws Exception {
        Path dir = TestData.cpuDdp().getParent().getParent().resolve("scaledl-models/src/main/resources/org/scaledl/models");
        for (String name : new String[] {"cpu-ddp.sdl", "gpu.sdl"}) {
            byte[] bytes = Files.readAllBytes(dir.resolve(name));
            assertEquals(MAPPER.readTree(bytes), JsonTrees.read(bytes), name);
        }
    }
}
