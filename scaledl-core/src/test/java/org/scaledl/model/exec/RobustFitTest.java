package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import org.junit.jupiter.api.Test;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The fit's Huber loss on the runs' log errors: errors within {@link MegatronFit#ROBUST} are fitted by least squares,
 * and a run far off the rest (a software path of its own, a setting described wrongly) pulls the coefficients as its
 * error does, not as its error's square.
 */
class RobustFitTest {
    private static final TransformerSpec GPT = TransformerSpec.decoder("gpt-tiny", 256, 4, 2, 1000)
            .maxPositions(128).build();
    private static final MegatronModel TRUTH = MegatronModel.uncalibrated();

    private final Map<Integer, MegatronTerms> terms = new HashMap<>();

    /** A run whose contractions take {@code dense} ms and other layers {@code other}, measured at truth × factor. */
    private Sample run(double dense, double other, double factor) {
        int id = terms.size() + 1;
        MegatronTerms t = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, dense, 0)
                .add(ExecutionTerm.OTHER, other).add(ExecutionTerm.OPTIMIZER, 5).build();
        terms.put(id, t);
        return Sample.of(Workload.builder(GPT.graph(128)).batch(id).tag("id", "run" + id).build(),
                TRUTH.millis(t) * factor);
    }

    /** The model's mean log error over the runs. */
    private double level(MegatronModel m, List<Sample> runs) {
        double sum = 0;
        for (Sample s : runs) {
            sum += Math.log(m.millis(terms.get(s.workload().batch())) / s.millis());
        }
        return sum / runs.size();
    }

    /**
     * Thirty runs with other layers from 5 to 50 % of the time, measured as the truth says within ±2 %, and one more
     * measured 2.5 times slower. With the fit's Huber loss the thirty's level moves by 0.05 % (asserted within
     * 0.2 %); the same test with the threshold at 10⁹ (least squares) moved it by 0.75 %, and fails. The wild run is
     * left off by almost all of its factor.
     */
    @Test
    void aRunFarOffDoesNotMoveTheOthers() {
        List<Sample> normal = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            double share = 0.05 + 0.05 * (i % 10);
            normal.add(run(100 * (1 - share), 100 * share, 1 + 0.02 * (i % 3 - 1)));
        }
        MegatronModel clean = MegatronFit.fit(w -> terms.get(w.batch()), normal, "id").model();
        List<Sample> all = new ArrayList<>(normal);
        Sample wild = run(70, 30, 2.5);
        all.add(wild);
        MegatronModel m = MegatronFit.fit(w -> terms.get(w.batch()), all, "id").model();
        double moved = level(m, normal) - level(clean, normal);
        assertTrue(Math.abs(moved) < 0.002, "the thirty moved by " + moved);
        double wildError = Math.log(m.millis(terms.get(wild.workload().batch())) / wild.millis());
        assertTrue(wildError < Math.log(1 / 2.4), "the wild run's error " + wildError);
    }

    /**
     * Runs whose errors all lie within {@link MegatronFit#ROBUST} are fitted by least squares: five of twenty runs
     * measured 9 % slower than the truth (log), fifteen 1 % faster, their other layers' shares mixed among them.
     * Least squares puts the runs' mean log error at 0; a median fit would leave it near +1.5 % (the fifteen on the
     * mark, the five 9 % off).
     */
    @Test
    void errorsWithinTheThresholdAreLeastSquares() {
        List<Sample> runs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            double share = 0.05 + 0.05 * (i % 10);
            double e = i % 4 == 0 ? 0.09 : -0.01;
            runs.add(run(100 * (1 - share), 100 * share, Math.exp(e)));
        }
        MegatronModel m = MegatronFit.fit(w -> terms.get(w.batch()), runs, "id").model();
        assertEquals(0, level(m, runs), 0.004);
    }

    /**
     * A run 1,000 times faster than its work can run at the physics' priors (seconds typed as milliseconds) is refused,
     * naming it; 1,000 times slower is taken (a small job waits for its host, which the priors leave at nothing),
     * and so is a run the table weighs 0.
     */
    @Test
    void aRunFasterThanItsWorkIsRefusedASlowerOneTaken() {
        List<Sample> runs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            runs.add(run(80, 20, 1));
        }
        List<Sample> slow = new ArrayList<>(runs);
        slow.add(run(80, 20, 1000));
        MegatronFit.fit(w -> terms.get(w.batch()), slow, "id");
        List<Sample> fast = new ArrayList<>(runs);
        fast.add(run(80, 20, 0.001));
        org.scaledl.InvalidInputException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.scaledl.InvalidInputException.class, () -> MegatronFit.fit(w -> terms.get(w.batch()), fast, "id"));
        assertTrue(e.getMessage().contains("1000 times faster than the execution model's physics")
                && e.getMessage().contains("not in milliseconds"), e.getMessage());
        Sample weighed = fast.get(fast.size() - 1);
        List<Sample> ignored = new ArrayList<>(runs);
        ignored.add(Sample.of(weighed.workload().toBuilder().tag(MegatronFit.WEIGHT_TAG, "0").build(),
                weighed.millis()));
        MegatronFit.fit(w -> terms.get(w.batch()), ignored, "id");
    }

    /** The residual's square is Huber's loss: the square within the threshold, linear beyond, continuous, odd. */
    @Property(tries = 300)
    void theResidualSquaredIsHubersLoss(@ForAll @DoubleRange(min = -5, max = 5) double e) {
        double c = MegatronFit.ROBUST;
        double r = MegatronFit.huberRoot(e);
        double huber = Math.abs(e) <= c ? e * e : 2 * c * Math.abs(e) - c * c;
        assertEquals(huber, r * r, 1e-12);
        assertEquals(Math.signum(e), Math.signum(r));
        assertEquals(-r, MegatronFit.huberRoot(-e), 1e-15);
        assertTrue(Math.abs(r) <= Math.abs(e) + 1e-15, "never more than the error itself");
    }
}
