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
    private static final Path V2 = Path.of("src/test/resources/saved-v2");

    static void check(RuntimePredictor p, JsonNode cases, String file) {
        for (JsonNode c : cases) {
            Workload.Builder b = Workload.builder(OnnxImporter.read(TestData.graph(c.path("graph").asText())))
                    .batch(c.path("batch").asInt()).worldSize(c.path("world_size").asInt())
                    .threads(c.path("threads").asInt()).phase(Phase.parse(c.path("phase").asText()));
            if (c.has("device")) {
                b.device(DeviceCatalog.bundled().require(c.path("device").asText()));
            }
            if (c.has("device_cpu")) {
                b.device(org.scaledl.workload.Device.cpu(c.path("device_cpu").asText(), 1, 0, 0, 0, 0));
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

    /**
     * Version-2 files (the communication model beside the layer cost; a host predictor calibrated to a machine it was
     * not fitted on; a device predictor with its all-reduce model) load and predict bit-identically, intervals
     * included (except where a release changed an interval on purpose: the device file's 4-GPU job on a GPU it has no
     * data of is now checked against the GPU counts any of its runs had: CHANGELOG, Unreleased, Fixed).
     */
    @Test
    void versionTwoFilesLoadAndPredictAsBefore() throws IOException {
        JsonNode expected = new ObjectMapper().readTree(V2.resolve("expected.json").toFile());
        for (String file : new String[] {"host-v2-calibrated.sdl", "device-v2.sdl"}) {
            check(RuntimePredictor.load(V2.resolve(file)), expected.path(file), file);
        }
    }

    @Test
    void anOlderFileSavedAgainIsTheCurrentVersionAndPredictsTheSame() throws IOException {
        for (Path dir : new Path[] {DIR, V2}) {
            JsonNode expected = new ObjectMapper().readTree(dir.resolve("expected.json").toFile());
            for (java.util.Iterator<String> it = expected.fieldNames(); it.hasNext();) {
                String file = it.next();
                if (!file.endsWith(".sdl")) {
                    continue;
                }
                RuntimePredictor again = RuntimePredictor.load(RuntimePredictor.load(dir.resolve(file)).toBytes());
                check(again, expected.path(file), file);
                String text = new String(again.toBytes(), java.nio.charset.StandardCharsets.UTF_8);
                assertTrue(text.contains("\"format\" : \"scaledl-predictor\"")
                        && text.contains("\"format_version\" : " + ModelFile.FORMAT_VERSION), text.substring(0, 100));
            }
        }
    }
}
