package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimeModel;
import org.scaledl.model.RuntimeTrainer;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

class EvaluationTest {

    /** Records which families each fit saw and predicts a constant. */
    static final class Spy implements RuntimeTrainer {
        final List<Set<String>> seen = new ArrayList<>();

        @Override
        public String name() {
            return "spy";
        }

        @Override
        public RuntimeModel fit(List<Sample> samples) {
            Set<String> families = new HashSet<>();
            samples.forEach(s -> families.add(s.workload().tag("family").orElseThrow()));
            seen.add(families);
            return new RuntimeModel() {
                @Override
                public String name() {
                    return "spy";
                }

                @Override
                public Prediction predict(Workload w) {
                    assertFalse(families.contains(w.tag("family").orElseThrow()), "trained on the test family");
                    return Prediction.point(10);
                }
            };
        }
    }

    @Test
    void crossValidationNeverTrainsOnTheHeldOutGroup() {
        ModelGraph g = OnnxImporter.read(TestData.graph("squeezenet1_1_r64"));
        List<Sample> samples = new ArrayList<>();
        for (String fam : List.of("a", "b", "c")) {
            for (int b = 1; b <= 4; b++) {
                samples.add(Sample.of(Workload.builder(g).batch(b).tag("family", fam).tag("model", fam + "1")
                        .build(), 10 * b));
            }
        }
        Spy spy = new Spy();
        Evaluation e = Evaluation.crossValidate(List.of(spy), samples, "family");
        assertEquals(3, spy.seen.size());
        assertEquals(12, e.predictions().size());
        assertEquals(3, e.perModel().get("spy").size());
        double expectedMre = (0 + 0.5 + 2.0 / 3 + 0.75) / 4;
        assertEquals(expectedMre, e.metrics().get("spy").mre(), 1e-12);
    }
}
