package org.scaledl.features;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;

/** The length a normalisation, softmax or reduction runs over is reported as {@code inChannels}. */
class ReductionLengthTest {

    private static TensorInfo act(String name, Dim... dims) {
        return TensorInfo.of(name, DataType.FLOAT, SymbolicShape.of(dims), TensorRole.ACTIVATION);
    }

    @Test
    void normalisationsSoftmaxAndReductionsReportTheirLength() {
        ModelGraph g = ModelGraph.builder("r")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(6), Dim.of(8),
                        Dim.of(10)), TensorRole.INPUT))
                .tensor(act("ln", Dim.batch(), Dim.of(6), Dim.of(8), Dim.of(10)))
                .tensor(act("sm", Dim.batch(), Dim.of(6), Dim.of(8), Dim.of(10)))
                .tensor(act("in", Dim.batch(), Dim.of(6), Dim.of(8), Dim.of(10)))
                .tensor(act("red", Dim.batch(), Dim.of(6)))
                .layer(Layer.builder("ln", "LayerNormalization").inputs("x").outputs("ln")
                        .attribute("axis", Attribute.ofInt(-2)).build())
                .layer(Layer.builder("sm", "Softmax").inputs("ln").outputs("sm")
                        .attribute("axis", Attribute.ofInt(1)).build())
                .layer(Layer.builder("in", "InstanceNormalization").inputs("sm").outputs("in").build())
                .layer(Layer.builder("red", "ReduceMean").inputs("in").outputs("red")
                        .attribute("axes", Attribute.ofInts(2, 3)).attribute("keepdims", Attribute.ofInt(0)).build())
                .output("red").build();
        List<LayerFeatures> f = FeatureExtractor.of(g).extract(3, Phase.INFER);
        assertEquals(8 * 10, f.get(0).inChannels(), "layer norm over the last two dimensions");
        assertEquals(6, f.get(1).inChannels(), "softmax over axis 1");
        assertEquals(8 * 10, f.get(2).inChannels(), "instance norm over the spatial dimensions");
        assertEquals(8 * 10, f.get(3).inChannels(), "mean over the spatial dimensions");
    }
}
