package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.plan.ProfilingCost;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Sample;

class LearningCurveTest {
    private static List<Sample> samples;
    private static LearningCurve curve;
    private static final ProfilingCost COST = new ProfilingCost(2, 1, 3);

    @BeforeAll
    static void run() {
        Set<String> families = Set.of("resnet", "squeezenet", "mobilenet");
        samples = DatasetReader.read(TestData.cpuDdp()).samples().stream()
                .filter(s -> families.contains(s.workload().tag("family").orElseThrow()))
                .filter(s -> s.workload().graph().name().contains("r64") || s.workload().tag("resolution")
                        .orElse("").equals("64"))
                .toList();
        curve = LearningCurve.builder().folds(0).fractions(List.of(0.25, 0.5, 1.0)).randomSubsets(2).cost(COST)
                .run(samples, "family");
    }

    @Test
    void everyMethodEndsWithTheFullDataFit() {
        assertEquals(List.of(LearningCurve.D_OPTIMAL, LearningCurve.D_OPTIMAL_COST, LearningCurve.RANDOM),
                List.copyOf(curve.methods().keySet()));
        for (List<LearningCurve.Point> pts : curve.methods().values()) {
            assertEquals(3, pts.size());
            LearningCurve.Point last = pts.get(2);
            assertEquals(curve.fullMre(), last.mre(), 1e-6);
        }
        // Slow reference: fit each fold's whole training set with the same fixed-shrinkage trainer and pool.
        org.scaledl.model.PredictorTrainer t = RuntimePredictor.builder().shrinkage(1e-2).build();
        double rel = 0;
        int n = 0;
        for (Folds.Fold f : Folds.leaveOneGroupOut(samples, Folds.byTagStrict("family"))) {
            RuntimePredictor p = t.fit(f.train(samples));
            for (Sample s : f.test(samples)) {
                rel += Math.abs(p.predictMillis(s.workload()) - s.millis()) / s.millis();
                n++;
            }
        }
        assertEquals(rel / n, curve.fullMre(), 1e-9);
    }

    @Test
    void secondsAreWhatTheChosenRunsCost() {
        double grid = samples.stream().mapToDouble(s -> COST.seconds(s.millis())).sum();
        assertEquals(grid, curve.gridSeconds(), 1e-9 * grid);
        // Three folds, each training on two families: at full size the mean training grid is two thirds of all.
        LearningCurve.Point full = curve.methods().get(LearningCurve.D_OPTIMAL).get(2);
        assertEquals(2.0 / 3 * grid, full.seconds(), 1e-9 * grid);
        List<LearningCurve.Point> opt = curve.methods().get(LearningCurve.D_OPTIMAL);
        List<LearningCurve.Point> rnd = curve.methods().get(LearningCurve.RANDOM);
        for (int i = 0; i < 3; i++) {
            assertEquals(opt.get(i).runs(), rnd.get(i).runs(), 1e-9, "same run counts by runs");
            assertTrue(rnd.get(i).mreLow() <= rnd.get(i).mre() && rnd.get(i).mre() <= rnd.get(i).mreHigh());
        }
        List<LearningCurve.Point> cost = curve.methods().get(LearningCurve.D_OPTIMAL_COST);
        assertTrue(cost.get(0).seconds() < cost.get(2).seconds());
    }

    @Test
    void secondsToFindsTheFirstPointWithinTheFactor() {
        LearningCurve.Point first = curve.methods().get(LearningCurve.RANDOM).stream()
                .min((a, b) -> Double.compare(a.seconds(), b.seconds())).orElseThrow();
        assertEquals(first.seconds(), curve.secondsTo(1e9, LearningCurve.RANDOM).orElseThrow());
        assertTrue(curve.secondsTo(0.5, LearningCurve.D_OPTIMAL).isEmpty(), "nothing beats half the full MRE");
    }
}
