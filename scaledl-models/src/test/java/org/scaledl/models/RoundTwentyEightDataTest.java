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
}
