package org.scaledl.gnn;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Analytic gradients of every parameter against central finite differences on random small graphs. */
class GradientCheckProperties {

    static GraphBatch randomBatch(Random r, int graphs, int features) {
        int nodes = 0;
        int[] sizes = new int[graphs];
        for (int g = 0; g < graphs; g++) {
            sizes[g] = 1 + r.nextInt(6);
            nodes += sizes[g];
        }
        int[] nodeGraph = new int[nodes];
        java.util.List<int[]> edges = new java.util.ArrayList<>();
        int base = 0;
        for (int g = 0; g < graphs; g++) {
            for (int i = 0; i < sizes[g]; i++) {
                nodeGraph[base + i] = g;
                for (int j = i + 1; j < sizes[g]; j++) {
                    if (r.nextInt(3) == 0) {
                        edges.add(new int[] {base + i, base + j});
                    }
                }
            }
            base += sizes[g];
        }
        double[] x = new double[nodes * features];
        for (int i = 0; i < x.length; i++) {
            x[i] = r.nextGaussian();
        }
        return new GraphBatch(Nd4j.create(x, new long[] {nodes, features}, DataType.DOUBLE),
                edges.stream().mapToInt(e -> e[0]).toArray(), edges.stream().mapToInt(e -> e[1]).toArray(),
                nodeGraph, graphs);
    }

    @Property(tries = 20)
    void gradientsMatchFiniteDifferences(@ForAll long seed, @ForAll @IntRange(min = 0, max = 3) int rounds,
            @ForAll @IntRange(min = 0, max = 2) int context, @ForAll boolean attention) {
        Random r = new Random(seed);
        int graphs = 1 + r.nextInt(3);
        GraphBatch b = randomBatch(r, graphs, 3);
        int samples = 1 + r.nextInt(5);
        int[] sampleGraph = new int[samples];
        double[] ctx = new double[Math.max(1, samples * context)];
        double[] y = new double[samples];
        for (int s = 0; s < samples; s++) {
            sampleGraph[s] = r.nextInt(graphs);
            y[s] = r.nextGaussian();
        }
        for (int i = 0; i < ctx.length; i++) {
            ctx[i] = r.nextGaussian();
        }
        INDArray c = context == 0 ? null : Nd4j.create(ctx, new long[] {samples, context}, DataType.DOUBLE);
        INDArray target = Nd4j.create(y, new long[] {samples, 1}, DataType.DOUBLE);
        MessagePassingNetwork net = new MessagePassingNetwork(3, 4, rounds, context, attention, seed);
        MessagePassingNetwork.Pass pass = net.forward(b, sampleGraph, c);
        Map<String, INDArray> grads = net.backward(b, sampleGraph, pass, target);
        for (Map.Entry<String, INDArray> e : net.params.entrySet()) {
            INDArray w = e.getValue();
            INDArray g = grads.get(e.getKey());
            for (long i = 0; i < w.length(); i++) {
                double fine = numeric(net, b, sampleGraph, c, target, w, i, 1e-6);
                double analytic = g.getDouble(i);
                double err = Math.abs(fine - analytic) / Math.max(1e-6, Math.abs(fine) + Math.abs(analytic));
                if (err <= 1e-4 || Math.abs(fine - analytic) < 1e-9) {
                    continue;
                }
                // A ReLU kink within the step makes finite differences meaningless: two steps then disagree.
                double coarse = numeric(net, b, sampleGraph, c, target, w, i, 1e-5);
                boolean smooth = Math.abs(coarse - fine) <= 1e-6 * Math.max(1e-3, Math.abs(fine));
                assertTrue(!smooth, e.getKey() + "[" + i + "]: analytic " + analytic + " vs numeric " + fine);
            }
        }
    }

    private static double numeric(MessagePassingNetwork net, GraphBatch b, int[] sampleGraph, INDArray c,
            INDArray target, INDArray w, long i, double h) {
        double old = w.getDouble(i);
        w.putScalar(i, old + h);
        double up = MessagePassingNetwork.loss(net.forward(b, sampleGraph, c), target);
        w.putScalar(i, old - h);
        double down = MessagePassingNetwork.loss(net.forward(b, sampleGraph, c), target);
        w.putScalar(i, old);
        return (up - down) / (2 * h);
    }
}
