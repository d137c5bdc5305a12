package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * A calibration's level prior: estimated from the published clusters' held-out errors as a one-way random-effects
 * model would, kept in the saved model, and what a calibration on a few runs of one cluster shrinks toward.
 */
class LevelPriorTest {
    private static final TransformerSpec GPT = TransformerSpec.decoder("gpt-tiny", 256, 4, 2, 1000)
            .maxPositions(128).build();

    private static int jobs;

    /** A run of a job of its own (a distinct batch): jobs published twice in one cluster count once. */
    private static Sample run(String system, String release, double ms) {
        return Sample.of(Workload.builder(GPT.graph(128)).batch(++jobs).tag("system", system).tag("release", release)
                .build(), ms);
    }

    /**
     * Four clusters of two runs, their means −0.2, 0, 0, 0.2 and their runs ±d around them: the runs' variance
     * 2d², the means' 0.08 / 3 of which 2d² / 2 is the runs' scatter; the prior is their ratio, floored at the
     * default half run, and the most runs where the means differ no more than the scatter explains.
     */
    @Test
    void theLevelPriorIsTheRunsScatterOverTheClustersSpread() {
        double[] means = {-0.2, 0, 0, 0.2};
        for (double d : new double[] {0.15, 0.05, 0.3}) {
            List<Sample> runs = new ArrayList<>();
            double[] errors = new double[8];
            for (int g = 0; g < 4; g++) {
                for (int k = 0; k < 2; k++) {
                    runs.add(run("system " + g, "r1", 100));
                    errors[2 * g + k] = means[g] + (k == 0 ? -d : d);
                }
            }
            double within = 2 * d * d;
            double levels = 0.08 / 3 - within / 2;
            double most = MegatronFit.MAX_ESTIMATED_LEVEL_PRIOR_RUNS;
            double expected = levels <= within / most ? most
                    : Math.max(MegatronModel.DEFAULT_LEVEL_PRIOR_RUNS, Math.min(most, within / levels));
            assertEquals(expected, MegatronFit.levelPriorRuns(runs, errors).orElseThrow(), 1e-9 * expected, "d " + d);
        }
        // the runs' scatter over the clusters' spread is 10.8 here: capped at the runs that refit every term, as
        // a few clusters' alike levels do not prove a new cluster's known (a prior of 100 left it uncalibrated)
        assertEquals(8, MegatronFit.levelPriorRuns(List.of(run("a", "1", 1), run("a", "1", 1), run("b", "1", 1),
                run("b", "1", 1), run("c", "1", 1), run("c", "1", 1), run("d", "1", 1), run("d", "1", 1)),
                new double[] {-0.35, -0.05, -0.15, 0.15, -0.15, 0.15, 0.05, 0.35}).orElseThrow(), 1e-9);
        // one job published twice in each of four clusters is one run a cluster: nothing to estimate from
        Sample a = run("a", "1", 1);
        Sample b = run("b", "1", 1);
        Sample c = run("c", "1", 1);
        Sample d = run("d", "1", 1);
        assertTrue(MegatronFit.levelPriorRuns(List.of(a, a, b, b, c, c, d, d),
                new double[] {-0.35, -0.05, -0.15, 0.15, -0.15, 0.15, 0.05, 0.35}).isEmpty());
        // two clusters, or runs without a system: nothing to estimate from
        assertTrue(MegatronFit.levelPriorRuns(List.of(run("a", "1", 1), run("a", "1", 1), run("b", "1", 1),
                run("b", "1", 1)), new double[] {0, 0.1, 0.2, 0.3}).isEmpty());
    }

    /** Saved and read back, the prior stays; a file without it (an older one) has the default half run. */
    @Test
    void theLevelPriorSurvivesTheSavedForm() {
        MegatronModel m = MegatronModel.uncalibrated().withLevelPriorRuns(2.5);
        assertEquals(2.5, MegatronModel.fromJson(m.toJson()).levelPriorRuns());
        ObjectNode old = MegatronModel.uncalibrated().toJson();
        assertTrue(!old.has("level_prior_runs"), old.toString());
        assertEquals(MegatronModel.DEFAULT_LEVEL_PRIOR_RUNS, MegatronModel.fromJson(old).levelPriorRuns());
    }

    /**
     * One run of a new cluster, measured twice as slow as the model says, moves the level by 1 / (1 + k) of its log
     * ratio, k the model's level prior: a model whose clusters' levels scatter little (large k) barely moves.
     */
    @Test
    void aCalibrationOnOneRunMovesTheLevelByItsShareOfThePrior() {
        MegatronTerms terms = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, 100, 0).build();
        MegatronFit.TermSource source = w -> terms;
        for (double k : new double[] {0.5, 3}) {
            MegatronModel centre = MegatronModel.uncalibrated().withLevelPriorRuns(k);
            MegatronModel calibrated = MegatronFit.fit(source, List.of(run("mine", "1", 200)), "id", centre, true)
                    .model();
            assertEquals(Math.exp(Math.log(2) / (1 + k)), calibrated.millis(terms) / 100, 1e-9, "k " + k);
            assertEquals(k, calibrated.levelPriorRuns());
        }
    }

    /**
     * Three runs of a new cluster, two measured 10 % slower than the model says and one (a job of a family the model
     * misses) twice as slow: the level moves by the runs' median log ratio, log 1.1, shrunk by 3 / (3 + k); the mean
     * (log 2.2 / 3) would have moved it by more than twice as much. With the outlier dropped, the same level.
     */
    @Test
    void aCalibrationsLevelIsTheRunsMedianNotTheirMean() {
        MegatronTerms terms = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, 100, 0).build();
        MegatronFit.TermSource source = w -> terms;
        double k = 2;
        MegatronModel centre = MegatronModel.uncalibrated().withLevelPriorRuns(k);
        List<Sample> runs = List.of(run("mine", "1", 110), run("mine", "1", 200), run("mine", "1", 110));
        double level = MegatronFit.fit(source, runs, "id", centre, true).model().millis(terms) / 100;
        assertEquals(Math.exp(3 * Math.log(1.1) / (3 + k)), level, 1e-9);
        double mean = Math.exp((2 * Math.log(1.1) + Math.log(2)) / (3 + k));
        assertTrue(mean - 1 > 2 * (level - 1), "the mean would move it " + mean + ", the median " + level);
        List<Sample> two = List.of(run("mine", "1", 110), run("mine", "1", 110));
        assertEquals(Math.exp(2 * Math.log(1.1) / (2 + k)), MegatronFit.fit(source, two, "id", centre, true).model()
                .millis(terms) / 100, 1e-9, "two agreeing runs: their shared ratio, shrunk by 2 / (2 + k)");
    }
}
