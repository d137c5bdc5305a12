package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.io.DatasetReader;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Sample;

class ModelFileTest {
    private static List<Sample> samples;

    @BeforeAll
    static void data() {
        Dataset d = DatasetReader.read(TestData.cpuDdp());
        samples = d.samples().stream().filter(s -> s.workload().graph().size() < 200).toList();
    }

    @TempDir
    Path dir;

    @Test
    void roundTripGivesBitIdenticalPredictions() {
        RuntimePredictor p = RuntimePredictor.builder().seed(7).build().fit(samples);
        Path file = dir.resolve("m.sdl");
        p.save(file);
        RuntimePredictor q = RuntimePredictor.load(file);
        for (Sample s : samples) {
            Prediction a = p.predict(s.workload());
            Prediction b = q.predict(s.workload());
            assertEquals(Double.doubleToLongBits(a.millis()), Double.doubleToLongBits(b.millis()));
            assertEquals(Double.doubleToLongBits(a.lowMillis()), Double.doubleToLongBits(b.lowMillis()));
            assertEquals(Double.doubleToLongBits(a.highMillis()), Double.doubleToLongBits(b.highMillis()));
        }
        assertEquals(p.provenance(), q.provenance());
        assertEquals(7, q.provenance().seed());
        assertEquals(samples.size(), q.provenance().trainingSamples());
    }

    /**
     * A host model keeps what its runs' machine.json said of the machine (cores, vector width, ...) through a save and
     * a load, and so does a calibration's machine.
     */
    @Test
    void machineDescriptionsSurviveSaveAndLoad() {
        RuntimePredictor p = RuntimePredictor.fit(samples);
        String name = samples.get(0).workload().device().orElseThrow().name();
        org.scaledl.workload.Device described = p.machine(name).orElseThrow();
        assertEquals(2, described.computeUnits());
        assertEquals(256, described.simdBits());
        org.scaledl.workload.Device other = org.scaledl.workload.Device.cpu("lab box", 16, 512, 32, 3000, 200);
        List<Sample> runs = new ArrayList<>();
        for (Sample s : samples.subList(0, 6)) {
            runs.add(Sample.of(s.workload().toBuilder().device(other).build(), 2 * s.millis()));
        }
        RuntimePredictor calibrated = p.calibrate(runs);
        Path file = dir.resolve("described.sdl");
        calibrated.save(file);
        RuntimePredictor back = RuntimePredictor.load(file);
        assertEquals(described, back.machine(name).orElseThrow());
        assertEquals(other, back.machine("lab box").orElseThrow());
        assertTrue(back.machine("no such machine").isEmpty());
    }

    @Test
    void sameDataAndSeedGiveTheSameBytesExceptTheCreationTime() throws Exception {
        Path a = dir.resolve("a.sdl");
        Path b = dir.resolve("b.sdl");
        RuntimePredictor.builder().seed(3).build().fit(samples).save(a);
        RuntimePredictor.builder().seed(3).build().fit(samples).save(b);
        List<String> la = new ArrayList<>(Files.readAllLines(a));
        List<String> lb = new ArrayList<>(Files.readAllLines(b));
        la.removeIf(l -> l.contains("created_at") || l.contains("sha256"));
        lb.removeIf(l -> l.contains("created_at") || l.contains("sha256"));
        assertEquals(la, lb);
    }

    @Test
    void tamperedTruncatedForeignAndNewerFilesAreRejected() throws Exception {
        Path file = dir.resolve("m.sdl");
        RuntimePredictor.fit(samples).save(file);
        String text = Files.readString(file);

        Path tampered = dir.resolve("t.sdl");
        int at = text.indexOf("\"coefficients\"");
        int digit = at;
        while (!Character.isDigit(text.charAt(digit)) || text.charAt(digit) == '0') {
            digit++;
        }
        char replacement = text.charAt(digit) == '9' ? '8' : (char) (text.charAt(digit) + 1);
        Files.writeString(tampered, text.substring(0, digit) + replacement + text.substring(digit + 1));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(tampered));
        assertTrue(e.getMessage().contains("checksum"), e.getMessage());

        Path truncated = dir.resolve("cut.sdl");
        Files.writeString(truncated, text.substring(0, text.length() / 2));
        assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(truncated));

        Path newer = dir.resolve("newer.sdl");
        Files.writeString(newer, text.replace("\"format_version\" : " + ModelFile.FORMAT_VERSION,
                "\"format_version\" : 7"));
        InvalidInputException n = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(newer));
        assertTrue(n.getMessage().contains("7") && n.getMessage().contains("(" + ModelFile.FORMAT_VERSION + ")"),
                n.getMessage());
        // a version that is no whole number an int holds is refused, not read as the number it starts with
        for (String v : new String[] {"\"" + ModelFile.FORMAT_VERSION + "\"", ModelFile.FORMAT_VERSION + ".9",
            Long.toString((1L << 32) + ModelFile.FORMAT_VERSION)}) {
            Path odd = dir.resolve("odd.sdl");
            Files.writeString(odd, text.replace("\"format_version\" : " + ModelFile.FORMAT_VERSION,
                    "\"format_version\" : " + v));
            InvalidInputException x = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(odd), v);
            assertTrue(x.getMessage().contains("not a whole number"), x.getMessage());
        }

        // text after the file's object, and a second "body" before the signed one, are refused, not skipped
        Path garbage = dir.resolve("g.sdl");
        Files.writeString(garbage, text + "garbage{\n");
        e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(garbage));
        assertTrue(e.getMessage().contains("g.sdl") && e.getMessage().contains("invalid JSON"), e.getMessage());
        Path twoBodies = dir.resolve("b.sdl");
        Files.writeString(twoBodies, text.replaceFirst("\\{", "{\"body\": {\"name\": \"unsigned\"},"));
        e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(twoBodies));
        assertTrue(e.getMessage().contains("Duplicate field 'body'"), e.getMessage());
        // a signed body (written by another tool) with a training count that cannot be is refused naming it
        com.fasterxml.jackson.databind.node.ObjectNode body = (com.fasterxml.jackson.databind.node.ObjectNode)
                org.scaledl.JsonTrees.read(text.getBytes(StandardCharsets.UTF_8)).get("body").deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) body.get("training")).put("samples", -5);
        Path negative = dir.resolve("n.sdl");
        Files.write(negative, org.scaledl.model.file.Envelope.bytes(ModelFile.FORMAT, ModelFile.FORMAT_VERSION, body));
        e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(negative));
        assertTrue(e.getMessage().contains("training.samples = -5"), e.getMessage());
        // a provenance text with a terminal escape (inspect and warnings print it) and a count that is none (a
        // later calibration adds to it; predict took it where inspect refused it) are refused naming them
        for (String[] edit : new String[][] {{"calibration_devices", "ACME\u001b[2J X1", "calibration_devices holds a "
                + "control character ('ACME\\u001b[2J X1')"}, {"calibration_runs", "-5", "calibration_runs is no count"}}) {
            com.fasterxml.jackson.databind.node.ObjectNode edited = body.deepCopy();
            ((com.fasterxml.jackson.databind.node.ObjectNode) edited.get("training")).put("samples", 5);
            ((com.fasterxml.jackson.databind.node.ObjectNode) edited.get("config")).put(edit[0], edit[1]);
            Path f = dir.resolve(edit[0] + ".sdl");
            Files.write(f, org.scaledl.model.file.Envelope.bytes(ModelFile.FORMAT, ModelFile.FORMAT_VERSION, edited));
            e = assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(f), edit[0]);
            assertTrue(e.getMessage().contains(edit[2]), e.getMessage());
        }

        Path foreign = dir.resolve("f.sdl");
        Files.write(foreign, "{\"hello\": 1}".getBytes(StandardCharsets.UTF_8));
        assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(foreign));
        assertThrows(InvalidInputException.class, () -> RuntimePredictor.load(dir.resolve("missing.sdl")));
    }

    @Test
    void concurrentPredictionsEqualSequentialOnes() throws Exception {
        RuntimePredictor p = RuntimePredictor.fit(samples);
        int per = 10_000;
        double[] expected = new double[per];
        for (int i = 0; i < per; i++) {
            expected[i] = p.predictMillis(samples.get(i % samples.size()).workload());
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int offset = t;
                results.add(pool.submit(() -> {
                    for (int k = 0; k < per; k++) {
                        int i = (k + offset * 997) % per;
                        if (p.predictMillis(samples.get(i % samples.size()).workload()) != expected[i]) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (Future<Boolean> f : results) {
                assertTrue(f.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
