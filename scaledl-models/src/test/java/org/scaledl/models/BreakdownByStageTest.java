package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * The bundled GPU predictor's breakdown shares each calibrated term over the layers as the busiest pipeline stage runs
 * them, and says a low-precision recipe's quantisation apart: a pipeline does not move the output head's time onto
 * the other layers, and FP8 does not move its quantisation onto the norms and adds (a walk found the head 15.7 times
 * dearer in FP8 than in BF16 on a pipelined DeepSeek-V3, and every norm 1.3–1.6 times).
 */
class BreakdownByStageTest {
    private static final RuntimePredictor GPU = BreakdownProperties.GPU;
    private static final org.scaledl.workload.Device H100 = BreakdownProperties.H100;
    /** Eight layers of hidden 1,024, a 128,000-word vocabulary: the last stage's output head is its largest layer. */
    private static final org.scaledl.graph.ModelGraph GRAPH = BreakdownProperties.smallDecoder(128000);

    private static Map<String, Double> breakdown(int pipeline, Precision precision) {
        Workload w = Workload.builder(GRAPH).batch(16).parallelism(new Parallelism(1, 1, pipeline, 16))
                .precision(precision).device(H100).build();
        Map<String, Double> out = new LinkedHashMap<>();
        for (Prediction.Contribution c : GPU.predict(w).breakdown()) {
            out.merge(c.name(), c.millis(), Double::sum);
        }
        return out;
    }

    @Test
    void quantisationIsAnEntryOfItsOwnAndLeavesTheOtherLayersAsInSixteenBits() {
        Map<String, Double> bf16 = breakdown(1, Precision.BF16);
        Map<String, Double> fp8 = breakdown(1, Precision.FP8);
        assertTrue(fp8.getOrDefault("quantisation", 0.0) > 0, fp8.toString());
        assertEquals(0.0, bf16.getOrDefault("quantisation", 0.0), 0.0, bf16.toString());
        for (String name : new String[] {"layers/block/attn/norm", "layers/block/ffn/residual", "head/norm"}) {
            assertTrue(bf16.containsKey(name), name + " in " + bf16.keySet());
            assertEquals(bf16.get(name), fp8.get(name), 1e-9 * bf16.get(name), name);
        }
    }

    @Test
    void aPipelineKeepsTheOutputHeadsTimeOnTheStageThatRunsIt() {
        // the last of four stages runs two layers and the head for each of the 16 micro-batches, as one GPU does:
        // the head's entry stays near its share without a pipeline (shared over the whole model's layers it fell to
        // about a quarter)
        double one = breakdown(1, Precision.BF16).get("head/logits");
        double four = breakdown(4, Precision.BF16).get("head/logits");
        assertTrue(four > 0.7 * one && four < 1.3 * one, "head " + four + " ms on four stages, " + one + " on one");
        // the head runs in BF16 in an FP8 recipe too: its entry moves only as its class's calibration does (it took
        // the FP8 job's 16-bit time of the whole model's layers: 2.4 times the BF16 job's)
        double fp8 = breakdown(4, Precision.FP8).get("head/logits");
        assertTrue(fp8 > 0.5 * four && fp8 < 1.5 * four, "head " + fp8 + " ms in FP8, " + four + " in BF16");
    }
}
