package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;

/** A saved domain's ranges are finite, non-negative and ordered, or the file is refused naming the field. */
class DomainJsonTest {
    private static final Domain SAVED = RuntimePredictor.load(Path.of(
            "src/test/resources/saved-v2/host-v2-calibrated.sdl")).domain();

    private static InvalidInputException refused(Consumer<ObjectNode> edit) {
        ObjectNode o = SAVED.toJson();
        edit.accept(o);
        return assertThrows(InvalidInputException.class, () -> Domain.fromJson(o));
    }

    private static ObjectNode device(ObjectNode o) {
        return (ObjectNode) o.path("devices").elements().next();
    }

    @Test
    void aRoundTripKeepsTheDomain() {
        assertEquals(SAVED, Domain.fromJson(SAVED.toJson()));
    }

    /** The LoRA ranks trained on travel with the domain; a file without them (written before) records none. */
    @Test
    void loraRanksRoundTripAndAreChecked() {
        ObjectNode o = SAVED.toJson();
        assertTrue(Domain.fromJson(o).loraRanks().isEmpty(), "a file written before they were recorded");
        o.putArray("lora_ranks").add(0).add(16);
        Domain d = Domain.fromJson(o);
        assertEquals(java.util.List.of(0, 16), java.util.List.copyOf(d.loraRanks()));
        assertEquals(d, Domain.fromJson(d.toJson()));
        InvalidInputException negative = refused(x -> x.putArray("lora_ranks").add(-1));
        assertTrue(negative.getMessage().contains("domain.lora_ranks[0]"), negative.getMessage());
    }

    @Test
    void rangesOutOfOrderOrOutOfRangeAreNamed() {
        String name = SAVED.toJson().path("devices").fieldNames().next();
        String at = "domain.devices['" + name + "'].";
        InvalidInputException order = refused(o -> ((ArrayNode) device(o).path("batch")).set(0, 4096));
        assertTrue(order.getMessage().contains(at + "batch") && order.getMessage().contains("not ordered"),
                order.getMessage());
        InvalidInputException negative = refused(o -> ((ArrayNode) device(o).path("threads")).set(0, -1));
        assertTrue(negative.getMessage().contains(at + "threads[0]"), negative.getMessage());
        InvalidInputException zero = refused(o -> {
            ((ArrayNode) device(o).path("world_size")).set(0, 0);
            ((ArrayNode) device(o).path("world_size")).set(1, 0);
        });
        assertTrue(zero.getMessage().contains(at + "world_size[0]"), zero.getMessage());
        String family = SAVED.toJson().path("layers").fieldNames().next();
        InvalidInputException nan = refused(o -> ((ArrayNode) o.path("layers").path(family).path("flops")).set(1,
                "NaN"));
        assertTrue(nan.getMessage().contains("domain.layers." + family + ".flops[1]"), nan.getMessage());
        InvalidInputException flops = refused(o -> ((ArrayNode) o.path("layers").path(family).path("bytes")).set(0,
                1e308));
        assertTrue(flops.getMessage().contains("domain.layers." + family + ".bytes"), flops.getMessage());
        InvalidInputException degree = refused(o -> o.putArray("tensor_degrees").add(0));
        assertTrue(degree.getMessage().contains("domain.tensor_degrees[0]"), degree.getMessage());
        InvalidInputException layers = refused(o -> o.putArray("graph_layers").add(9).add(3));
        assertTrue(layers.getMessage().contains("domain.graph_layers"), layers.getMessage());
        InvalidInputException phase = refused(o -> device(o).putArray("phases").add("fly"));
        assertTrue(phase.getMessage().contains(at + "phases"), phase.getMessage());
    }
}
