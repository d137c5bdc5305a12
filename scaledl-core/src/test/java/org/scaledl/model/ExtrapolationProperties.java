package org.scaledl.model;

import org.scaledl.model.host.HostLayerModel;
import org.scaledl.model.host.LayerBasis;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.TestData;
import org.scaledl.graph.ModelGraph;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * Beyond the fitted range every host term keeps its physical asymptotics, whatever the (non-negative) coefficients
 * of every family: predictions are finite and positive, never decrease as the batch or the world size grows (on one
 * thread: within each side of the batch at which 1×1 convolutions leave PyTorch's native path, see
 * {@link LayerBasis}), and more threads cost at most twice what two threads cost (an Amdahl-type bound on threading
 * overhead).
 */
class ExtrapolationProperties {
    private static final List<ModelGraph> GRAPHS = List.of(OnnxImporter.read(TestData.graph("resnet18_r64")),
            OnnxImporter.read(TestData.graph("mobilenet_v2_r64")), OnnxImporter.read(TestData.graph("tinybert_r64")),
            OnnxImporter.read(TestData.graph("vit_b_16_r64")));
    private static final int[] BATCHES = {1, 2, 3, 8, 31, 64, 256, 1024, 4096};
    private static final int[] WORLDS = {1, 2, 3, 8, 64, 256, 1024};
    private static final int[] THREADS = {1, 2, 3, 8, 32, 256};

    private static HostLayerModel randomModel(long seed) {
        Random r = new Random(seed);
        LayerBasis b = LayerBasis.standard();
        double[] theta = new double[b.width()];
        for (int j = 0; j < theta.length; j++) {
            // sparse, spanning orders of magnitude, like fitted coefficients
            theta[j] = r.nextDouble() < 0.4 ? 0 : Math.pow(10, -12 + 10 * r.nextDouble());
        }
        theta[b.globalColumn(0)] += 1;
        theta[b.globalColumn(1)] += 1;
        return new HostLayerModel(b, theta, 0.01);
    }

    @Property(tries = 60)
    void monotoneInBatchAndWorldSizeAndBoundedInThreads(@ForAll long seed, @ForAll @IntRange(min = 0, max = 3) int g,
            @ForAll boolean train) {
        HostLayerModel m = randomModel(seed);
        ModelGraph graph = GRAPHS.get(g);
        Phase phase = train ? Phase.TRAIN : Phase.INFER;
        for (int threads : new int[] {1, 2, 32}) {
            for (int world : new int[] {1, 4}) {
                double prev = 0;
                for (int batch : BATCHES) {
                    double t = m.predictMillis(Workload.builder(graph).batch(batch).phase(phase).worldSize(world)
                            .threads(threads).build());
                    assertTrue(Double.isFinite(t) && t > 0, "batch " + batch + ": " + t);
                    if (threads == 1 && batch >= LayerBasis.NATIVE_BATCH_LIMIT && prev > 0
                            && batch / 2 < LayerBasis.NATIVE_BATCH_LIMIT) {
                        // On one thread 1x1 convolutions leave the native path at this batch: time may drop here
                        // (as PyTorch's does), and is monotone again from here on.
                        prev = 0;
                    }
                    assertTrue(t >= prev * (1 - 1e-12), "batch " + batch + ": " + t + " < " + prev);
                    prev = t;
                }
            }
        }
        for (int batch : new int[] {1, 32, 4096}) {
            double prev = 0;
            for (int world : WORLDS) {
                double t = m.predictMillis(Workload.builder(graph).batch(batch).phase(phase).worldSize(world).build());
                assertTrue(Double.isFinite(t) && t > 0 && t >= prev * (1 - 1e-12), "world " + world + ": " + t);
                prev = t;
            }
            double two = m.predictMillis(Workload.builder(graph).batch(batch).phase(phase).threads(2).build());
            for (int threads : THREADS) {
                double t = m.predictMillis(Workload.builder(graph).batch(batch).phase(phase).threads(threads).build());
                assertTrue(Double.isFinite(t) && t > 0, "threads " + threads + ": " + t);
                if (threads >= 2) {
                    assertTrue(t <= 2 * two * (1 + 1e-12), "threads " + threads + ": " + t + " vs two threads "
                            + two);
                }
            }
        }
    }
}
