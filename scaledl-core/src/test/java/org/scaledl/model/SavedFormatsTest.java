package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * Files saved by earlier versions of the library keep loading and predict what they predicted then
 * ({@code src/test/resources/saved-v1/expected.json}), whichever way they are loaded.
 */
class SavedFormatsTest {
    private static final Path DIR = Path.of("src/test/resources/saved-v1");

    static void check(RuntimePredictor p, JsonNode cases, String file) {
        for (JsonNode c : cases) {
            Workload.Builder b = Workload.builder(OnnxImporter.read(TestData.graph(c.path("graph").asText())))
                    .batch(c.path("batch").asInt()).worldSize(c.path("world_size").asInt())
                    .threads(c.path("threads").asInt()).phase(Phase.parse(c.path("phase").asText()));
            if (c.has("device")) {
                b.device(DeviceCatalog.bundled().require(c.path("device").asText()));
            }
            Prediction pr = p.predict(b.build());
            assertEquals(c.path("ms").asDouble(), pr.millis(), 0.0, file + " " + c);
            if (c.has("low_ms")) {
                assertEquals(c.path("low_ms").asDouble(), pr.lowMillis(), 1e-9 * pr.millis(), file);
                assertEquals(c.path("high_ms").asDouble(), pr.highMillis(), 1e-9 * pr.millis(), file);
            }
        }
    }

    @Test
    void versionOneHostAndDeviceFilesLoadAndPredictAsBefore() throws IOException {
        JsonNode expected = new ObjectMapper().readTree(DIR.resolve("expected.json").toFile());
        for (String file : new String[] {"host-v1.sdl", "device-v1.sdl"}) {
            RuntimePredictor fromPath = RuntimePredictor.load(DIR.resolve(file));
            check(fromPath, expected.path(file), file);
            RuntimePredictor fromBytes = RuntimePredictor.load(Files.readAllBytes(DIR.resolve(file)));
            check(fromBytes, expected.path(file), file);
            try (InputStream in = Files.newInputStream(DIR.resolve(file))) {
                check(RuntimePredictor.load(in, file), expected.path(file), file);
            }
        }
        assertEquals("host", RuntimePredictor.load(DIR.resolve("host-v1.sdl")).layerCostKind());
        assertEquals("device", RuntimePredictor.load(DIR.resolve("device-v1.sdl")).layerCostKind());
    }

    @Test
    void aVersionOneFileSavedAgainIsVersionTwoAndPredictsTheSame() throws IOException {
        JsonNode expected = new ObjectMapper().readTree(DIR.resolve("expected.json").toFile());
        for (String file : new String[] {"host-v1.sdl", "device-v1.sdl"}) {
            RuntimePredictor again = RuntimePredictor.load(RuntimePredictor.load(DIR.resolve(file)).toBytes());
            check(again, expected.path(file), file);
            String text = new String(RuntimePredictor.load(DIR.resolve(file)).toBytes(),
                    java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(text.contains("\"format\" : \"scaledl-predictor\"") && text.contains("\"format_version\" : 2"),
                    text.substring(0, 100));
        }
    }
}
