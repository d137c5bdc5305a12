package org.scaledl.model.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * The fast paths of the basis against their slow references, on every bundled graph: the per-family sums (their
 * affine form in the batch) against the walk over every layer's features, with the fallback where a layer is not
 * affine in the batch; and the prediction's dot product against the design row times the coefficients.
 */
class LayerBasisProperties {
    private static final List<ModelGraph> GRAPHS = bundledGraphs();

    private static List<ModelGraph> bundledGraphs() {
        try (Stream<Path> s = Files.list(TestData.cpuDdp().resolve("graphs"))) {
            return s.filter(p -> p.toString().endsWith(".onnx")).sorted().map(OnnxImporter::read).toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Property(tries = 200)
    void affineSumsEqualTheLayerWalk(@ForAll @IntRange(min = 0, max = 1000) int g,
            @ForAll @IntRange(min = 1, max = 5000) int small, @ForAll boolean huge, @ForAll boolean train,
            @ForAll boolean oneThread) {
        ModelGraph graph = GRAPHS.get(g % GRAPHS.size());
        int batch = huge ? small * 3000 : small;
        Workload w = Workload.builder(graph).batch(batch).phase(train ? Phase.TRAIN : Phase.INFER)
                .threads(oneThread ? 1 : 2).build();
        LayerBasis b = LayerBasis.standard();
        double[] fast = b.familySumsForTest(w);
        double[] exact = b.exactFamilySums(w);
        assertEquals(exact.length, fast.length);
        for (int k = 0; k < exact.length; k++) {
            assertEquals(exact[k], fast[k], 1e-9 * Math.max(1, Math.abs(exact[k])),
                    graph.name() + " batch " + batch + " sum " + k);
        }
    }

    @Property(tries = 100)
    void dotEqualsTheRowTimesTheCoefficientsToTheLastBit(@ForAll @IntRange(min = 0, max = 1000) int g,
            @ForAll @IntRange(min = 1, max = 64) int batch, @ForAll @IntRange(min = 1, max = 8) int threads,
            @ForAll @IntRange(min = 1, max = 16) int world, @ForAll boolean train, @ForAll long seed) {
        ModelGraph graph = GRAPHS.get(g % GRAPHS.size());
        Workload w = Workload.builder(graph).batch(batch).phase(train ? Phase.TRAIN : Phase.INFER).threads(threads)
                .worldSize(world).build();
        LayerBasis b = LayerBasis.standard();
        java.util.Random r = new java.util.Random(seed);
        double[] theta = new double[b.width()];
        for (int j = 0; j < theta.length; j++) {
            theta[j] = r.nextDouble() < 0.3 ? 0 : Math.pow(10, -12 + 10 * r.nextDouble());
        }
        double[] row = b.row(w);
        double slow = 0;
        for (int j = 0; j < row.length; j++) {
            slow += row[j] * theta[j];
        }
        assertEquals(slow, b.dot(w, theta), 0.0);
    }

    @Test
    void everyBundledGraphHasTheAffineForm() {
        for (ModelGraph g : GRAPHS) {
            for (Phase p : Phase.values()) {
                assertTrue(LayerBasis.standard().hasAffineForm(g, p), g.name() + " " + p);
            }
        }
    }

    /** {@code x·xᵀ} over the batch: a [batch, batch] output, FLOPs quadratic in the batch. */
    @Test
    void aQuadraticLayerKeepsTheLayerWalk() {
        ModelGraph g = ModelGraph.builder("gram")
                .tensor(TensorInfo.of("x", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.of(64)),
                        TensorRole.INPUT))
                .tensor(TensorInfo.of("xt", DataType.FLOAT, SymbolicShape.of(Dim.of(64), Dim.batch()),
                        TensorRole.ACTIVATION))
                .tensor(TensorInfo.of("y", DataType.FLOAT, SymbolicShape.of(Dim.batch(), Dim.batch()),
                        TensorRole.ACTIVATION))
                .layer(Layer.builder("t", "Transpose").inputs("x").outputs("xt").build())
                .layer(Layer.builder("mm", "MatMul").inputs("x", "xt").outputs("y").build())
                .output("y").build();
        LayerBasis b = LayerBasis.standard();
        assertFalse(b.hasAffineForm(g, Phase.INFER));
        for (int batch : new int[] {1, 7, 100}) {
            Workload w = Workload.builder(g).batch(batch).phase(Phase.INFER).build();
            double[] fast = b.familySumsForTest(w);
            double[] exact = b.exactFamilySums(w);
            for (int k = 0; k < exact.length; k++) {
                assertEquals(exact[k], fast[k], 1e-12 * Math.max(1, Math.abs(exact[k])));
            }
            double dense = exact[org.scaledl.workload.OpFamily.DENSE.ordinal() * 4 + 1]
                    + exact[(org.scaledl.workload.OpFamily.values().length + 1) * 4 + 1];
            assertEquals(2.0 * batch * 64 * batch, dense, 1e-6 * batch * batch);
        }
    }
}
