package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;

/**
 * An imported graph's products whose rows break 16 bytes are named on a GPU with a tensor memory accelerator, with
 * their K, N and factor and the widths that avoid it; nothing is said on an A100, in FP32, for an aligned head, or for
 * a batched product (an attention core's: its features count its right-hand operands as groups).
 */
class AlignmentNoteTest {
    private static final DeviceCatalog CATALOG = DeviceCatalog.bundled();

    private static TensorInfo tensor(String name, TensorRole role, long... dims) {
        return TensorInfo.of(name, DataType.FLOAT, SymbolicShape.ofStatic(dims), role);
    }

    /** A language-model head: 128 tokens of 768 onto {@code vocab} words. */
    private static ModelGraph head(long vocab) {
        return ModelGraph.builder("head" + vocab).tensor(tensor("x", TensorRole.INPUT, 128, 768))
                .tensor(tensor("w", TensorRole.PARAMETER, 768, vocab))
                .tensor(tensor("y", TensorRole.ACTIVATION, 128, vocab))
                .layer(Layer.builder("lm_head", "MatMul").inputs("x", "w").outputs("y").build()).output("y").build();
    }

    /** Attention scores over 197 tokens: {@code [12, 197, 64] · [12, 64, 197]}. */
    private static ModelGraph scores() {
        return ModelGraph.builder("scores").tensor(tensor("q", TensorRole.INPUT, 12, 197, 64))
                .tensor(tensor("k", TensorRole.INPUT, 12, 64, 197))
                .tensor(tensor("s", TensorRole.ACTIVATION, 12, 197, 197))
                .layer(Layer.builder("scores", "MatMul").inputs("q", "k").outputs("s").build()).output("s").build();
    }

    private static Optional<String> note(ModelGraph g, Device d, Precision p) {
        return ParallelExecution.alignmentNote(g, FeatureExtractor.of(g).extract(1, Phase.TRAIN), d, p);
    }

    @Test
    void misalignedProductsAreNamedWhereTheyPay() {
        Device h200 = CATALOG.require("NVIDIA H200");
        String n = note(head(50257), h200, Precision.BF16).orElseThrow();
        assertTrue(n.contains("lm_head (K 768, N 50257: 5.80×)") && n.contains("multiple of 8 elements")
                && n.contains("50,304"), n);
        String tf32 = note(head(30522), h200, Precision.TF32).orElseThrow();
        assertTrue(tf32.contains("N 30522: 2.65×") && tf32.contains("multiple of 4 elements"), tf32);
        assertEquals(Optional.empty(), note(head(50304), h200, Precision.BF16));
        assertEquals(Optional.empty(), note(head(50257), h200, Precision.FP32));
        assertEquals(Optional.empty(), note(head(50257), CATALOG.require("NVIDIA A100-SXM4-80GB"), Precision.BF16));
        assertEquals(Optional.empty(), note(scores(), h200, Precision.BF16));
    }

    @Test
    void aBatchedProductCountsItsRightHandOperands() {
        LayerFeatures s = FeatureExtractor.of(scores()).extract(1, Phase.INFER).get(0);
        LayerFeatures h = FeatureExtractor.of(head(50257)).extract(1, Phase.INFER).get(0);
        assertEquals(12, s.groups());
        assertEquals(0, h.groups());
    }
}
