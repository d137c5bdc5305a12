package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * A calibration on enough runs to refit the terms keeps the refit only where it predicts its runs, each held out,
 * better than the level alone: runs that differ from the model by one factor move the level only; runs that show a
 * term off its coefficient refit the terms.
 */
class CalibrationSelectionTest {
    private static final TransformerSpec GPT = TransformerSpec.decoder("gpt-tiny", 256, 4, 2, 1000)
            .maxPositions(128).build();
    private static final MegatronModel CENTRE = MegatronModel.uncalibrated();

    private final Map<Integer, MegatronTerms> terms = new HashMap<>();

    /**
     * Runs whose gradients' reduction is 0 to 55 % of the step, measured as {@code truth} says times a seeded log-normal
     * noise of {@code noise}.
     */
    private List<Sample> runs(int n, MegatronModel truth, double noise, long seed) {
        java.util.Random r = new java.util.Random(seed);
        List<Sample> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = terms.size() + 1;
            double share = n > 1 ? 0.55 * i / (n - 1) : 0.3;
            MegatronTerms t = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, 100 * (1 - share), 0)
                    .add(ExecutionTerm.OTHER, 10).add(ExecutionTerm.DATA_COMM, 100 * share).build();
            terms.put(id, t);
            out.add(Sample.of(Workload.builder(GPT.graph(128)).batch(id).tag("id", "run" + id).build(),
                    truth.millis(t) * Math.exp(noise * r.nextGaussian())));
        }
        return out;
    }

    private MegatronModel calibrate(List<Sample> runs) {
        return MegatronFit.fit(w -> terms.get(w.batch()), runs, "id", CENTRE, true).model();
    }

    /** Whether a calibration moved the model's level only (every coefficient its centre's times one factor). */
    private static boolean levelOnly(MegatronModel m) {
        double factor = m.coefficient(ExecutionTerm.DENSE) / CENTRE.coefficient(ExecutionTerm.DENSE);
        for (ExecutionTerm k : ExecutionTerm.values()) {
            if (Math.abs(m.coefficient(k) - factor * CENTRE.coefficient(k)) > 1e-9 * (1 + CENTRE.coefficient(k))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Eight runs of a cluster 10 % slower than the model, each with 10 % noise (fifty seeds): the terms refitted on
     * seven runs predict the eighth worse than the level does in most draws (about two in three over 200 seeds), so
     * most calibrations move the level only; without the choice none would.
     */
    @Test
    void noisyRunsOffByOneFactorMostlyMoveTheLevelOnly() {
        java.util.Map<ExecutionTerm, Double> c = new java.util.EnumMap<>(ExecutionTerm.class);
        CENTRE.coefficients().forEach((k, v) -> c.put(k, 1.1 * v));
        int level = 0;
        for (long seed = 1; seed <= 50; seed++) {
            level += levelOnly(calibrate(runs(8, MegatronModel.of(c), 0.10, seed))) ? 1 : 0;
        }
        assertTrue(level >= 28, level + " of 50 moved the level only");
    }

    /**
     * Where the terms are refitted, a run measured 1.8 times slower than the others says pulls them little (the
     * refit weighs its error by its size): the twelve others are predicted within 2 % of the clean twelve's
     * calibration.
     */
    @Test
    void aRunFarOffPullsARefitOfTheTermsLittle() {
        MegatronModel truth = CENTRE.with(ExecutionTerm.DATA_COMM, 3);
        List<Sample> clean = runs(12, truth, 0.01, 7);
        List<Sample> wild = new ArrayList<>(clean);
        Sample extra = runs(1, truth, 0, 8).get(0);
        wild.add(Sample.of(extra.workload(), extra.millis() * 1.8));
        MegatronModel a = calibrate(clean);
        MegatronModel b = calibrate(wild);
        assertTrue(!levelOnly(a) && !levelOnly(b), "the terms refitted: " + a + " / " + b);
        for (Sample s : clean) {
            MegatronTerms t = terms.get(s.workload().batch());
            assertEquals(1, b.millis(t) / a.millis(t), 0.02, "run " + s.workload().batch());
        }
    }

    /** Twelve runs whose reduction takes three times the model's (1 % noise, ten seeds) refit the terms every time. */
    @Test
    void runsShowingATermOffItsCoefficientRefitTheTerms() {
        for (long seed = 1; seed <= 10; seed++) {
            MegatronModel m = calibrate(runs(12, CENTRE.with(ExecutionTerm.DATA_COMM, 3), 0.01, seed));
            double dense = m.coefficient(ExecutionTerm.DENSE) / CENTRE.coefficient(ExecutionTerm.DENSE);
            double data = m.coefficient(ExecutionTerm.DATA_COMM) / CENTRE.coefficient(ExecutionTerm.DATA_COMM);
            assertTrue(data > 1.5 * dense, "seed " + seed + ": the reduction's coefficient refitted apart: " + m);
        }
    }
}
