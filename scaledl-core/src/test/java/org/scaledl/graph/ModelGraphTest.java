package org.scaledl.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;

class ModelGraphTest {

    private static TensorInfo act(String name) {
        return TensorInfo.of(name, DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(4)), TensorRole.ACTIVATION);
    }

    /** A chain of n ReLUs, declared in reverse order so the builder must sort it. */
    static ModelGraph chain(int n) {
        ModelGraph.Builder b = ModelGraph.builder("chain")
                .tensor(TensorInfo.of("t0", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(4)),
                        TensorRole.INPUT));
        for (int i = n; i >= 1; i--) {
            b.tensor(act("t" + i)).layer(Layer.builder("relu" + i, "Relu").inputs("t" + (i - 1)).outputs("t" + i)
                    .build());
        }
        return b.output("t" + n).build();
    }

    @Test
    void sortsTopologicallyAndListsEdges() {
        ModelGraph g = chain(5);
        for (int i = 0; i < 5; i++) {
            assertEquals("relu" + (i + 1), g.layer(i).name());
        }
        assertEquals(4, g.edges().size());
        for (Edge e : g.edges()) {
            assertEquals(e.from() + 1, e.to());
        }
    }

    @Test
    void deepGraphsNeedNoRecursion() {
        ModelGraph g = chain(200_000);
        assertEquals(200_000, g.size());
        assertEquals("relu200000", g.layer(199_999).name());
    }

    @Test
    void duplicateProducerIsRejectedNamingTheNode() {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> ModelGraph.builder("g")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.ofStatic(1), TensorRole.INPUT))
                .tensor(act("y"))
                .layer(Layer.builder("a", "Relu").inputs("x").outputs("y").build())
                .layer(Layer.builder("b", "Relu").inputs("x").outputs("y").build()).build());
        assertEquals("b", e.node().orElseThrow());
    }

    @Test
    void sharedWeightsAreCountedOnceAndAttributedToTheFirstReader() {
        ModelGraph g = ModelGraph.builder("tied")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(4)),
                        TensorRole.INPUT))
                .tensor(TensorInfo.of("w", DataType.FLOAT, SymbolicShape.ofStatic(4, 4), TensorRole.PARAMETER))
                .tensor(act("y")).tensor(act("z"))
                .layer(Layer.builder("second", "MatMul").inputs("y", "w").outputs("z").build())
                .layer(Layer.builder("first", "MatMul").inputs("x", "w").outputs("y").build())
                .output("z").build();
        assertEquals(16, g.parameterCount());
        assertEquals(16, g.parameterCount(g.indexOf("first").orElseThrow()));
        assertEquals(0, g.parameterCount(g.indexOf("second").orElseThrow()));
    }

    @Test
    void dimArithmetic() {
        Dim d = new Dim(3, 2);
        assertEquals(14, d.at(4));
        assertEquals("3*batch+2", d.toString());
        assertThrows(IllegalArgumentException.class, () -> d.at(0));
        assertThrows(ArithmeticException.class, () -> new Dim(Long.MAX_VALUE / 2, 0).at(3));
    }
}
