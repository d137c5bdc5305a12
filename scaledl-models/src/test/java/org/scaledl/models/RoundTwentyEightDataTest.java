package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;

/**
 * Round twenty-eight, hostile input to the dataset readers: on a small CPU dataset, one run a thousand times too
 * fast (a unit typed wrong) is left out of the fit and named, and the runs that are right are kept; it pulled the
 * screening fit to itself, which then left out nine right runs and predicted 0.1 ms where the runs say 200.
 */
class RoundTwentyEightDataTest {
    private static final Path CPU_DDP = Path.of("..", "datasets", "cpu-ddp");

    @Test
    void aRunAThousandTimesTooFastIsLeftOutOfASmallFitNotTheRightOnes() {
        // forty runs: eight of each of five models at resolution 64
        Map<String, List<Sample>> byModel = new LinkedHashMap<>();
        for (Sample s : DatasetReader.read(CPU_DDP).samples()) {
            if (s.workload().graph().name().endsWith("_r64")) {
                List<Sample> runs = byModel.computeIfAbsent(s.workload().graph().name(), k -> new ArrayList<>());
                if (byModel.size() <= 5 && runs.size() < 8) {
                    runs.add(s);
                }
            }
        }
        List<Sample> clean = byModel.values().stream().flatMap(List::stream).toList();
        assertEquals(40, clean.size());
        int wrong = -1;
        for (int i = 0; i < clean.size() && wrong < 0; i++) {
            wrong = clean.get(i).workload().phase() == Phase.TRAIN ? i : -1;
        }
        List<Sample> slipped = new ArrayList<>(clean);
        Sample bad = clean.get(wrong);
        slipped.set(wrong, Sample.of(bad.workload(), bad.millis() / 1000));
        RuntimePredictor right = RuntimePredictor.builder().build().fit(clean);
        RuntimePredictor fitted = RuntimePredictor.builder().build().fit(slipped);
        // the run's job is predicted as the right runs say, not as the slip
        double ratio = fitted.predict(bad.workload()).millis() / right.predict(bad.workload()).millis();
        assertTrue(ratio > 0.5 && ratio < 2, "x" + ratio);
        // and every other run as the right runs say
        for (Sample s : clean) {
            double r = fitted.predict(s.workload()).millis() / right.predict(s.workload()).millis();
            assertTrue(r > 0.5 && r < 2, s.workload() + ": x" + r);
        }
    }

    /** A small copy of cpu-ddp: its machine, and the rows of two graphs at resolution 64, the graphs beside. */
    private static Path copy(Path dir, String machine, java.util.function.UnaryOperator<String> rows)
            throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("graphs"));
        java.nio.file.Files.writeString(dir.resolve("machine.json"), machine);
        List<String> lines = java.nio.file.Files.readAllLines(CPU_DDP.resolve("runs.csv"));
        StringBuilder b = new StringBuilder(lines.get(0)).append('\n');
        for (String l : lines.subList(1, lines.size())) {
            if (l.startsWith("mobilenet_v2,64,") || l.startsWith("convnext_tiny,64,")) {
                b.append(l).append('\n');
            }
        }
        for (String g : new String[] {"mobilenet_v2_r64.onnx", "convnext_tiny_r64.onnx"}) {
            java.nio.file.Files.copy(CPU_DDP.resolve("graphs").resolve(g), dir.resolve("graphs").resolve(g));
        }
        java.nio.file.Files.writeString(dir.resolve("runs.csv"), rows.apply(b.toString()));
        return dir;
    }

    @Test
    void aMachinesNameWithAControlCharacterIsRefusedAndItsByteOrderMarkRead(
            @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path escaped = copy(dir.resolve("esc"), "{\"name\":\"x\\u001b[31mred\",\"cpus\":2}", r -> r);
        org.scaledl.InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> DatasetReader.read(escaped));
        assertTrue(e.getMessage().contains("machine.json") && e.getMessage().contains("the machine's name holds a "
                + "control character"), e.getMessage());
        Path bom = copy(dir.resolve("bom"), "\uFEFF{\"name\":\"vm\",\"cpus\":2}", r -> r);
        assertEquals("vm", DatasetReader.read(bom).samples().get(0).workload().device().orElseThrow().name());
    }

    @Test
    void familyLabelsThatDifferOnlyInCaseOrBlanksAreOneFamily(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        // a family column: mobilenet_v2's rows "resnet", convnext_tiny's "ResNet " (one family, typed two ways)
        Path d = copy(dir.resolve("fam"), java.nio.file.Files.readString(CPU_DDP.resolve("machine.json")), rows -> {
            StringBuilder b = new StringBuilder();
            String[] lines = rows.split("\n");
            b.append(lines[0]).append(",family\n");
            for (int i = 1; i < lines.length; i++) {
                b.append(lines[i]).append(lines[i].startsWith("mobilenet") ? ",resnet\n" : ",ResNet \n");
            }
            return b.toString();
        });
        java.util.Set<String> families = new java.util.TreeSet<>();
        for (Sample s : DatasetReader.read(d).samples()) {
            families.add(s.workload().tag("family").orElseThrow());
        }
        // one family, spelt as the table first spelt it (convnext_tiny's rows come first)
        assertEquals(java.util.Set.of("ResNet"), families);
    }
}
