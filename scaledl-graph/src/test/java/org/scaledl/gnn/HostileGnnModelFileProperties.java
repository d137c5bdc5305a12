package org.scaledl.gnn;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.model.HostileModelFiles;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.file.Envelope;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Workload;

/**
 * A predictor file with the GNN interaction stage (three members, their reference embeddings, the host layer cost
 * and its domain), field by field (see {@link HostileModelFiles}).
 */
class HostileGnnModelFileProperties extends HostileModelFiles {
    @Override
    protected Path file() {
        return Path.of("src/test/resources/saved-v2/gnn-v2.sdl");
    }

    @Override
    protected Workload workload() {
        return Workload.builder(OnnxImporter.read(GnnTrainerTest.graph("resnet18_r64"))).batch(8).worldSize(2).build();
    }

    /**
     * The sizes of a network are refused before anything is allocated for them (a file with {@code rounds: 1e7} took
     * 83 s and 2.6 GB before it was refused), each naming its field.
     */
    @Test
    void networkSizesOutOfRangeAreRefusedNamingTheField() throws Exception {
        Object[][] cases = {{"rounds", DoubleNode.valueOf(1e7)}, {"rounds", IntNode.valueOf(9)},
            {"hidden", IntNode.valueOf(Integer.MAX_VALUE)}, {"hidden", IntNode.valueOf(0)},
            {"features", IntNode.valueOf(21)}, {"context", IntNode.valueOf(-1)}, {"y_scale", TextNode.valueOf("NaN")},
            {"shrink", DoubleNode.valueOf(1.5)}, {"context_std", null}, {"attention", TextNode.valueOf("yes")}};
        JsonNode root = org.scaledl.JsonTrees.read(Files.readAllBytes(file()));
        for (Object[] c : cases) {
            ObjectNode body = root.path("body").deepCopy();
            ObjectNode member = (ObjectNode) body.path("interactions").path("body").path("members").get(0);
            if (c[1] == null) {
                member.withArray((String) c[0]).set(0, DoubleNode.valueOf(0));
            } else {
                member.set((String) c[0], (JsonNode) c[1]);
            }
            byte[] bytes = Envelope.bytes(root.path("format").asText(), root.path("format_version").asInt(), body);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(bytes),
                    c[0] + " = " + c[1]);
            assertTrue(e.getMessage().contains((String) c[0]), e.getMessage());
        }
    }
}
