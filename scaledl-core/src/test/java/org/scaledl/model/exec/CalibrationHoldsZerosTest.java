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
 * A calibration of a fitted model refits its terms from {@link MegatronFit#TERM_RUNS} runs on, each pulled toward
 * the model's coefficient relative to its size; a term the model holds at 0 has no size to be pulled by, and stays
 * at 0 rather than take up what a few runs leave over.
 */
class CalibrationHoldsZerosTest {
    private static final TransformerSpec GPT = TransformerSpec.decoder("gpt-tiny", 256, 4, 2, 1000)
            .maxPositions(128).build();

    private final Map<Integer, MegatronTerms> terms = new HashMap<>();

    /** A run of {@code dense} ms of contractions and {@code sends} pipeline hand-offs, measured at {@code ms}. */
    private Sample run(double dense, double sends, double ms) {
        int id = terms.size() + 1;
        terms.put(id, MegatronTerms.builder().contraction(ExecutionTerm.DENSE, dense, 0).add(ExecutionTerm.OTHER, 10)
                .add(ExecutionTerm.SEND, sends).build());
        return Sample.of(Workload.builder(GPT.graph(128)).batch(id).tag("id", "run" + id).build(), ms);
    }

    /**
     * Ten runs measured 0.5 ms a hand-off slower than a model without a per-hand-off cost says. The plain fit (no
     * centre) takes the cost up (the test's check that the runs can show it); a calibration of the model that holds
     * it at 0 keeps it at 0, the other terms moving instead.
     */
    @Test
    void aTermTheModelHoldsAtZeroStaysThereInACalibration() {
        MegatronModel centre = MegatronModel.uncalibrated().with(ExecutionTerm.SEND, 0);
        List<Sample> runs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            double sends = 20.0 * i;
            MegatronTerms t = MegatronTerms.builder().contraction(ExecutionTerm.DENSE, 100 + 10 * i, 0)
                    .add(ExecutionTerm.OTHER, 10).add(ExecutionTerm.SEND, sends).build();
            runs.add(run(100 + 10 * i, sends, centre.millis(t) + 0.5 * sends));
        }
        MegatronFit.TermSource source = w -> terms.get(w.batch());
        MegatronModel plain = MegatronFit.fit(source, runs, "id").model();
        assertTrue(plain.coefficient(ExecutionTerm.SEND) > 0.3, "the runs show the cost: " + plain);
        MegatronModel calibrated = MegatronFit.fit(source, runs, "id", centre, true).model();
        assertEquals(0, calibrated.coefficient(ExecutionTerm.SEND), "held at the model's 0: " + calibrated);
        assertTrue(calibrated.coefficient(ExecutionTerm.DENSE) > centre.coefficient(ExecutionTerm.DENSE),
                "the runs' extra time goes to the other terms: " + calibrated);
    }
}
