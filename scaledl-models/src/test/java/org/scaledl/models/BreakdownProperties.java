package org.scaledl.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * The bundled GPU predictor's breakdown of a transformer job, over layouts drawn at random: its entries are finite and
 * sum to the prediction; the pipeline's fill and drain and the GPUs' wait for the host are entries of their own, never
 * negative, the bubble none without a pipeline and a share of the step below the fill's slots.
 */
class BreakdownProperties {
    static final RuntimePredictor GPU = BundledModels.load("gpu");
    static final org.scaledl.workload.Device H100 = org.scaledl.io.DeviceCatalog.bundled().require("H100 SXM");
    /** Eight layers of hidden 1,024 and a 32,000-word vocabulary (the last stage's output layer makes stages uneven). */
    private static final org.scaledl.graph.ModelGraph GRAPH = smallDecoder(32000);

    /** Eight SwiGLU layers of hidden 1,024 (16 heads, 8 key/value heads) and {@code vocab} words, at 2,048 tokens. */
    static org.scaledl.graph.ModelGraph smallDecoder(long vocab) {
        return TransformerSpec.decoder("small", 1024, 16, 8, vocab).kvHeads(8).ffn(4096)
                .ffnKind(TransformerSpec.FfnKind.SWIGLU).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .maxPositions(4096).build().graph(2048);
    }

    @Property(tries = 60)
    void theBreakdownSumsToThePredictionWithTheBubbleAndTheHostApart(
            @ForAll @IntRange(min = 0, max = 3) int tensorLog, @ForAll @IntRange(min = 0, max = 3) int pipelineLog,
            @ForAll @IntRange(min = 1, max = 2) int virtual, @ForAll @IntRange(min = 1, max = 16) int micro,
            @ForAll boolean inference, @ForAll boolean graphs) {
        int t = 1 << tensorLog;
        int p = 1 << pipelineLog;
        int v = p > 1 ? virtual : 1;
        Assume.that(8 % (p * v) == 0);
        Parallelism par = new Parallelism(1, t, p, micro).withVirtualStages(v);
        Workload w = Workload.builder(GRAPH).batch(micro).parallelism(par)
                .phase(inference ? Phase.INFER : Phase.TRAIN).precision(Precision.BF16).device(H100)
                .cudaGraphs(graphs && !inference ? CudaGraphs.ITERATION : CudaGraphs.NONE).build();
        Prediction pr = GPU.predict(w);
        double sum = 0;
        double bubble = 0;
        double host = 0;
        for (Prediction.Contribution c : pr.breakdown()) {
            assertTrue(Double.isFinite(c.millis()), c.toString());
            sum += c.millis();
            bubble += c.name().equals(Prediction.PIPELINE_BUBBLE) ? c.millis() : 0;
            host += c.name().equals(Prediction.HOST_DISPATCH) ? c.millis() : 0;
        }
        assertEquals(pr.millis(), sum, 1e-9 * pr.millis(), w.toString());
        assertTrue(bubble >= 0 && host >= 0, w + ": bubble " + bubble + ", host " + host);
        if (p == 1) {
            assertEquals(0, bubble, 0.0, w.toString());
        } else {
            // the other stages' part: at most their (p - 1)·f slots of m + (p - 1)·f, of a step that holds more (f the
            // fill share: 1 / v with m >= p micro-batches, more with fewer: interleaving does not hide a short pipeline)
            double fill = (p - 1.0) * (1 + (v - 1.0) * Math.max(0, p - micro) / (p - 1)) / v;
            assertTrue(bubble > 0 && bubble / pr.millis() < fill / (micro + fill) + 1e-9, w + ": bubble "
                    + bubble / pr.millis() + " of the step");
        }
    }
}
