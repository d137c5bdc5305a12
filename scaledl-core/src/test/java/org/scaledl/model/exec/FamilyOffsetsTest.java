package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
 * The fit's family offsets: a family of many runs, all slower by one factor than the terms say, does not tilt the
 * shared coefficients toward itself (where the plain fit lets it), and families that differ no more than their runs
 * do get no offsets at all.
 */
class FamilyOffsetsTest {
    private static final TransformerSpec GPT = TransformerSpec.decoder("gpt-tiny", 256, 4, 2, 1000)
            .maxPositions(128).build();
    /** The execution the synthetic runs are measured from: the physical scales (where the fit's pulls are). */
    private static final MegatronModel TRUTH = MegatronModel.uncalibrated();

    private final Map<Integer, MegatronTerms> terms = new HashMap<>();

    /**
     * A run of {@code family} (tagged, or not) whose contractions take {@code dense} ms and other layers
     * {@code other}, measured at the truth's time times {@code factor}.
     */
    private Sample run(String family, boolean tagged, double dense, double other, double factor) {
        return run(family, tagged, dense, other, factor, 1);
    }

    /** {@link #run(String, boolean, double, double, double)} weighing {@code weight} runs in the fit. */
    private Sample run(String family, boolean tagged, double dense, double other, double factor, double weight) {
        int id = terms.size() + 1;
        MegatronTerms t = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, dense, 0)
                .add(ExecutionTerm.OTHER, other).build();
        terms.put(id, t);
        Workload.Builder w = Workload.builder(GPT.graph(128)).batch(id).tag("id", "run" + id);
        if (tagged) {
            w.tag("family", family);
        }
        if (weight != 1) {
            w.tag(MegatronFit.WEIGHT_TAG, Double.toString(weight));
        }
        return Sample.of(w.build(), TRUTH.millis(t) * factor);
    }

    /**
     * Four families of ten runs with other layers from 5 to 50 % of the time, measured as the truth says within ±2 %,
     * and a fifth of 40 runs of the same jobs measured 40 % slower. The plain fit weighs the fifth as its 40 runs: it
     * predicts the four others over 8 % too slow (9.4 %; over 12 % by least squares, without the fit's Huber
     * loss). With the families' offsets each family weighs as one: the common level is the five families' mean,
     * 1.4^(1/5) (+7 %), within 1.5 points.
     */
    @Test
    void aFamilyOffByOneFactorDoesNotPullTheSharedCoefficients() {
        double[] level = new double[2];
        for (int k = 0; k < 2; k++) {
            boolean tagged = k == 1;
            terms.clear();
            List<Sample> runs = new ArrayList<>();
            List<Sample> normal = new ArrayList<>();
            for (int f = 0; f < 5; f++) {
                for (int i = 0; i < (f < 4 ? 10 : 40); i++) {
                    double share = 0.05 + 0.05 * (i % 10);
                    double factor = f < 4 ? 1 + 0.02 * ((i + f) % 3 - 1) : 1.4;
                    Sample s = run(f < 4 ? "f" + f : "slow", tagged, 100 * (1 - share), 100 * share, factor);
                    runs.add(s);
                    if (f < 4) {
                        normal.add(s);
                    }
                }
            }
            MegatronModel m = MegatronFit.fit(w -> terms.get(w.batch()), runs, "id").model();
            double sum = 0;
            for (Sample s : normal) {
                sum += Math.log(m.millis(terms.get(s.workload().batch())) / s.millis());
            }
            level[k] = Math.exp(sum / normal.size()) - 1;
        }
        assertTrue(level[0] > 0.08, "the plain fit predicts the other families " + level[0] + " too slow");
        assertEquals(Math.pow(1.4, 0.2) - 1, level[1], 0.015, "with the families' offsets");
    }

    /** Families measured alike (their runs' scatter explains their means' spread): the fit is the plain fit's. */
    @Test
    void familiesThatDifferNoMoreThanTheirRunsGetNoOffsets() {
        assertFamiliesChangeNothing(tagged -> {
            List<Sample> runs = new ArrayList<>();
            for (int f = 0; f < 4; f++) {
                for (int i = 0; i < 6; i++) {
                    // the same jobs and scatter in every family: their means agree exactly
                    runs.add(run("f" + f, tagged, 50 + 10 * i, 20 + 5 * i, 1 + 0.03 * (i % 3 - 1)));
                }
            }
            return runs;
        });
    }

    /** One run per family: nothing measures the runs' scatter within a family, so no offsets (the plain fit). */
    @Test
    void familiesOfOneRunGetNoOffsets() {
        assertFamiliesChangeNothing(tagged -> {
            List<Sample> runs = new ArrayList<>();
            for (int f = 0; f < 6; f++) {
                runs.add(run("f" + f, tagged, 50 + 10 * f, 20 + 15 * (f % 3), 1 + 0.1 * (f % 2)));
            }
            return runs;
        });
    }

    /**
     * Each family one configuration published twice (two runs of weight ½, 4 % apart): two runs, but one run's worth
     * of weight, so nothing measures a scatter within a family beyond republication, and the fit is the plain one
     * although the families' levels differ by 10 %.
     */
    @Test
    void familiesOfOneRepublishedConfigurationGetNoOffsets() {
        assertFamiliesChangeNothing(tagged -> {
            List<Sample> runs = new ArrayList<>();
            for (int f = 0; f < 6; f++) {
                for (int copy = 0; copy < 2; copy++) {
                    runs.add(run("f" + f, tagged, 50 + 10 * f, 20 + 15 * (f % 3), (1 + 0.1 * (f % 2))
                            * (1 + 0.04 * copy), 0.5));
                }
            }
            return runs;
        });
    }

    /** The runs {@code make} builds fit to the same coefficients with their families tagged as without. */
    private void assertFamiliesChangeNothing(java.util.function.Function<Boolean, List<Sample>> make) {
        MegatronModel[] m = new MegatronModel[2];
        for (int k = 0; k < 2; k++) {
            terms.clear();
            m[k] = MegatronFit.fit(w -> terms.get(w.batch()), make.apply(k == 1), "id").model();
        }
        for (ExecutionTerm t : ExecutionTerm.values()) {
            assertEquals(m[0].coefficient(t), m[1].coefficient(t), 1e-12, t.key());
        }
    }

    /**
     * The variance components: with unit weights the textbook one-way estimator; a value of weight 2 counts as the
     * value twice; and with groups that differ by more than their scatter, a positive between-group part.
     */
    @Test
    void varianceComponentsAreTheOneWayMomentEstimator() {
        List<double[]> values = List.of(new double[] {0.1, 0.3}, new double[] {-0.2, 0.0, 0.2}, new double[] {0.5, 0.7});
        List<double[]> ones = List.of(new double[] {1, 1}, new double[] {1, 1, 1}, new double[] {1, 1});
        double within = (0.02 + 0.08 + 0.02) / (7 - 3);
        double[] means = {0.2, 0.0, 0.6};
        double between = ((0.2 - 0.8 / 3) * (0.2 - 0.8 / 3) + (0.8 / 3) * (0.8 / 3) + (0.6 - 0.8 / 3)
                * (0.6 - 0.8 / 3)) / 2 - within * (0.5 + 1.0 / 3 + 0.5) / 3;
        assertArrayEquals(new double[] {within, between}, MegatronFit.varianceComponents(values, ones), 1e-12);
        assertTrue(means[2] > means[0]);
        double[] doubled = MegatronFit.varianceComponents(List.of(new double[] {0.1, 0.3, 0.3},
                new double[] {-0.2, 0.0, 0.2}, new double[] {0.5, 0.7}), List.of(new double[] {1, 1, 1},
                new double[] {1, 1, 1}, new double[] {1, 1}));
        double[] weighted = MegatronFit.varianceComponents(List.of(new double[] {0.1, 0.3},
                new double[] {-0.2, 0.0, 0.2}, new double[] {0.5, 0.7}), List.of(new double[] {1, 2},
                new double[] {1, 1, 1}, new double[] {1, 1}));
        assertArrayEquals(doubled, weighted, 1e-12);
        assertTrue(between > 0);
        // groups of one run's worth each (two values of weight ½): no degree of freedom within them
        double[] none = MegatronFit.varianceComponents(List.of(new double[] {0.1, 0.3}, new double[] {0.5, 0.6}),
                List.of(new double[] {0.5, 0.5}, new double[] {0.5, 0.5}));
        assertTrue(Double.isNaN(none[0]) && Double.isNaN(none[1]), java.util.Arrays.toString(none));
    }

    /**
     * The 90 % interval is for a job of a family the fit has not seen, so where the errors are each family's held out
     * each family's errors weigh one together: five families of 40 runs measured as the truth says (within ±2 %) and a
     * sixth of two runs measured 30 % slower. The interval is exactly the errors' quantiles with each family's runs
     * weighing a share of one; its high end reaches the sixth family's 30 %, where the same errors weighed by run (its
     * 2 of 202 runs beyond the 95th percentile) give a high end within 5 %.
     */
    @Test
    void theIntervalWeighsEachFamilyAsOne() {
        terms.clear();
        List<Sample> runs = new ArrayList<>();
        int[] sizes = {40, 40, 40, 40, 40, 2};
        List<Double> familyWeights = new ArrayList<>();
        for (int f = 0; f < sizes.length; f++) {
            for (int i = 0; i < sizes[f]; i++) {
                double share = 0.05 + 0.05 * (i % 10);
                double factor = f < 5 ? 1 + 0.02 * ((i + f) % 3 - 1) : 1.3;
                runs.add(run("f" + f, true, 100 * (1 - share), 100 * share, factor));
                familyWeights.add(1.0 / sizes[f]);
            }
        }
        MegatronFit fit = MegatronFit.fit(w -> terms.get(w.batch()), runs, "family");
        assertTrue(fit.crossValidated());
        double[] errors = fit.logErrors().stream().mapToDouble(Double::doubleValue).toArray();
        double[] byFamily = org.scaledl.model.cost.Quantiles.interval(errors,
                familyWeights.stream().mapToDouble(Double::doubleValue).toArray());
        double[] ones = new double[errors.length];
        java.util.Arrays.fill(ones, 1);
        double[] byRun = org.scaledl.model.cost.Quantiles.interval(errors, ones);
        assertArrayEquals(byFamily, fit.model().interval(), 1e-12);
        double high = Math.exp(byFamily[1]);
        assertTrue(high > 1.2 && high < 1.35, "by family: " + high);
        assertTrue(Math.exp(byRun[1]) < 1.05, "by run: " + Math.exp(byRun[1]));
    }
}
