package org.scaledl.model.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.scaledl.model.exec.MegatronFit;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Workload;

/**
 * A cluster's calibration runs: fewer than {@link MegatronFit#TERM_RUNS} (with those measured) move one level, and
 * are chosen as the candidates' most representative; from {@code TERM_RUNS} on, D-optimally.
 */
class ProfilingPlanForCalibrationTest {
    private static final TransformerSpec GPT = TransformerSpec.decoder("gpt-tiny", 128, 8, 4, 1024).maxPositions(2048)
            .build();
    /** A design row of three columns that the batch moves apart. */
    private static final Function<Workload, double[]> ROW = w -> new double[] {w.batch(), 1.0 / w.batch(),
        Math.sqrt(w.batch())};

    private static List<Workload> jobs(int n) {
        List<Workload> out = new ArrayList<>();
        for (int b = 1; b <= n; b++) {
            out.add(Workload.builder(GPT.graph(256)).batch(b).build());
        }
        return out;
    }

    @Test
    void fewRunsAreTheMostRepresentativeAndManyDOptimal() {
        List<Workload> candidates = jobs(20);
        for (int runs : new int[] {1, 3, MegatronFit.TERM_RUNS - 1}) {
            assertEquals(ProfilingPlan.representative(candidates, List.of(), runs, ROW).indices(),
                    ProfilingPlan.forCalibration(candidates, List.of(), runs, 7, ROW).indices(), "runs " + runs);
        }
        assertEquals(ProfilingPlan.choose(candidates, List.of(), MegatronFit.TERM_RUNS, 7, ROW).indices(),
                ProfilingPlan.forCalibration(candidates, List.of(), MegatronFit.TERM_RUNS, 7, ROW).indices());
        // runs measured already count: with TERM_RUNS - 2 of them, two more refit the terms, D-optimally
        List<Workload> measured = jobs(MegatronFit.TERM_RUNS - 2);
        assertEquals(ProfilingPlan.choose(candidates, measured, 2, 7, ROW).indices(),
                ProfilingPlan.forCalibration(candidates, measured, 2, 7, ROW).indices());
        // the extremes a D-optimal plan of one run takes are not the representative one's middle
        int middle = ProfilingPlan.representative(candidates, List.of(), 1, ROW).indices().get(0);
        assertEquals(true, middle > 0 && middle < candidates.size() - 1, "representative run " + middle);
    }
}
