package org.scaledl.gnn;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.scaledl.Checks;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Edge;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.Prediction;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fits the GNN stage. Two uses:
 *
 * <ul>
 *   <li>{@link #interactions()} ({@code scaledl}): ScaleDL's full predictor. The layer-wise model
 *       ({@link RuntimePredictor}) predicts; the network learns the log-ratio {@code log(measured / layer-wise)}
 *       from the layer DAG and the workload settings, i.e. what a sum of independent layers misses. Final prediction:
 *       layer-wise × exp(correction). The training targets use <em>out-of-group</em> layer-wise predictions (each
 *       group's runs predicted by a layer-wise model fitted without that group), so the network learns the
 *       layer-wise model's error on unseen models, not its training residuals.</li>
 *   <li>{@link #graphOnly()} ({@code gnn-only}): the same network predicting log time directly (an NNLQP-style
 *       graph baseline, no layer model).</li>
 * </ul>
 *
 * <p>Node features (per layer, at batch 1, independent of the workload): log FLOPs forward and backward, log bytes,
 * log parameters, log output elements, whether it executes, and the operator family one-hot. Workload settings
 * (phase, log batch, log world size, log threads, and for {@code scaledl} the log layer-wise prediction) enter at
 * the readout, so one embedding per graph serves all its workloads. Training: full-batch Adam with decoupled weight
 * decay, early stopping on the loss of held-out groups (≈ 20 % of the training groups), fixed seed → identical model.
 */
final class GnnTrainer {
    private static final Logger LOG = LoggerFactory.getLogger(GnnTrainer.class);
    static final int NODE_FEATURES = 7 + OpFamily.values().length;
    /** Epochs without a better validation loss after which a member stops. */
    private static final int PATIENCE = 30;
    /** Members of the interaction stage's ensemble (the graph-only baseline trains one). */
    private static final int MEMBERS = 3;

    private final boolean withLayerModel;
    private final int hidden;
    private final int rounds;
    private final int epochs;
    private final double learningRate;
    private final double weightDecay;
    private final long seed;
    private final String groupTag;
    private final boolean attention;

    private GnnTrainer(boolean withLayerModel, int hidden, int rounds, int epochs, double learningRate,
            double weightDecay, long seed, String groupTag, boolean attention) {
        this.attention = attention;
        this.withLayerModel = withLayerModel;
        this.hidden = hidden;
        this.rounds = rounds;
        this.epochs = epochs;
        this.learningRate = learningRate;
        this.weightDecay = weightDecay;
        this.seed = seed;
        this.groupTag = groupTag;
    }

    /** ScaleDL: layer-wise model corrected by the GNN (hidden 16, 2 rounds, 150 epochs, seed 7). */
    static GnnTrainer interactions() {
        return new GnnTrainer(true, 16, 2, 150, 0.01, 1e-4, 7, "family", false);
    }

    /** The GNN alone, predicting log time from the graph (same network and training). */
    static GnnTrainer graphOnly() {
        return new GnnTrainer(false, 16, 2, 150, 0.01, 1e-4, 7, "family", false);
    }

    /** A copy with another seed. */
    GnnTrainer withSeed(long value) {
        return new GnnTrainer(withLayerModel, hidden, rounds, epochs, learningRate, weightDecay, value, groupTag,
                attention);
    }

    /** A copy holding out groups of another tag for early stopping. */
    GnnTrainer withGroupTag(String value) {
        return new GnnTrainer(withLayerModel, hidden, rounds, epochs, learningRate, weightDecay, seed, value,
                attention);
    }

    boolean attention() {
        return attention;
    }

    long seed() {
        return seed;
    }

    String describe() {
        return "hidden " + hidden + ", " + rounds + " rounds, " + epochs + " epochs, lr " + learningRate + ", decay "
                + weightDecay + ", seed " + seed + (attention ? ", attention" : ", mean");
    }

    /**
     * A copy whose message passing uses GAT-style attention over each node's neighbours instead of their mean
     * (named {@code scaledl-attention} / {@code gnn-only-attention}).
     */
    GnnTrainer withAttention(boolean value) {
        return new GnnTrainer(withLayerModel, hidden, rounds, epochs, learningRate, weightDecay, seed, groupTag,
                value);
    }

    /** A copy with another size: hidden width, message-passing rounds and epochs. */
    GnnTrainer withSize(int hiddenUnits, int messageRounds, int trainingEpochs) {
        Checks.argument(hiddenUnits > 0 && messageRounds >= 0 && trainingEpochs > 0,
                "hidden units and epochs must be positive and rounds >= 0: %s, %s, %s", hiddenUnits, messageRounds,
                trainingEpochs);
        return new GnnTrainer(withLayerModel, hiddenUnits, messageRounds, trainingEpochs, learningRate, weightDecay,
                seed, groupTag, attention);
    }

    /**
     * Trains the network.
     *
     * @param samples              training samples
     * @param base                 out-of-group layer-wise prediction of each sample (null for the GNN alone)
     * @param referenceLayerMillis per sample, the per-layer times of its graph in the reference workload by the
     *                             layer-wise fit without its group (null for the GNN alone): a graph's node features
     *                             are those of its first sample, so the features of a held-out group carry nothing of
     *                             its measurements
     */
    Ensemble fit(List<Sample> samples, double[] base, List<double[]> referenceLayerMillis) {
        Checks.argument(samples.size() >= 4, "need at least 4 samples to fit the GNN, got %s",
                samples.size());
        if (!withLayerModel) {
            base = new double[samples.size()];
        }
        Map<ModelGraph, Integer> graphIndex = new IdentityHashMap<>();
        List<ModelGraph> graphs = new ArrayList<>();
        List<double[]> graphLayers = new ArrayList<>();
        int[] sampleGraph = new int[samples.size()];
        for (int i = 0; i < samples.size(); i++) {
            ModelGraph g = samples.get(i).workload().graph();
            Integer gi = graphIndex.get(g);
            if (gi == null) {
                gi = graphs.size();
                graphIndex.put(g, gi);
                graphs.add(g);
                graphLayers.add(referenceLayerMillis == null ? null : referenceLayerMillis.get(i));
            }
            sampleGraph[i] = gi;
        }
        GraphBatch batch = batchOf(graphs, graphLayers);
        int contextWidth = withLayerModel ? 5 : 4;
        double[][] rawCtx = new double[samples.size()][];
        double[] y = new double[samples.size()];
        for (int i = 0; i < samples.size(); i++) {
            Workload w = samples.get(i).workload();
            rawCtx[i] = context(w, withLayerModel ? base[i] : 0, contextWidth);
            y[i] = Math.log(samples.get(i).millis()) - (withLayerModel ? Math.log(base[i]) : 0);
        }
        double[] mean = new double[contextWidth];
        double[] std = new double[contextWidth];
        standardisation(rawCtx, mean, std);
        INDArray ctx = matrix(rawCtx, mean, std);
        // Targets are standardised (log times span orders of magnitude); predictions undo it.
        double yMean = Arrays.stream(y).average().orElse(0);
        double yStd = Math.sqrt(Arrays.stream(y).map(v -> (v - yMean) * (v - yMean)).average().orElse(1));
        double yScale = yStd > 1e-9 ? yStd : 1;
        double[] yz = Arrays.stream(y).map(v -> (v - yMean) / yScale).toArray();
        INDArray target = Nd4j.create(yz, new long[] {y.length, 1}, DataType.DOUBLE);

        List<String> groups = new ArrayList<>(new LinkedHashSet<>(samples.stream()
                .map(s -> s.workload().tag(groupTag).orElse("")).toList()));
        Collections.shuffle(groups, new Random(seed));
        Prepared prep = new Prepared(batch, sampleGraph, ctx, target, mean, std, contextWidth, yMean, yScale, y);
        int k = withLayerModel && groups.size() >= 2 * MEMBERS ? MEMBERS : 1;
        List<GnnModel> nets = new ArrayList<>();
        double[] oof = new double[samples.size()];
        double[] novelty = new double[samples.size()];
        boolean[] hasOof = new boolean[samples.size()];
        for (int m = 0; m < k; m++) {
            // Held out from member m: fold m of the groups (so every group is held out by exactly one member); alone,
            // about a fifth of the groups. With several members, half of the held-out groups stop the training
            // early and the other half score it: scoring on the groups that chose the stopping epoch would flatter
            // the correction and let the shrink below keep one that does not transfer.
            List<String> stop = new ArrayList<>();
            List<String> score = new ArrayList<>();
            for (int g = 0; g < groups.size(); g++) {
                if (k > 1 ? g % k == m : g < (groups.size() >= 5 ? Math.max(1, groups.size() / 5) : 0)) {
                    (k > 1 && (g / k) % 2 == 1 ? score : stop).add(groups.get(g));
                }
            }
            List<String> held = new ArrayList<>(stop);
            held.addAll(score);
            int[] stopIdx = indices(samples, stop, true);
            int[] scoreIdx = k > 1 ? indices(samples, score, true) : stopIdx;
            int[] trainIdx = indices(samples, held, false);
            GnnModel net = train(prep, trainIdx, stopIdx, seed + m);
            // The member remembers the embeddings of the graphs it was trained on, to tell how novel a graph is.
            double[][] pooled = net.pooledAll(prep);
            java.util.Set<Integer> seen = new java.util.TreeSet<>();
            for (int i : trainIdx) {
                seen.add(sampleGraph[i]);
            }
            double[][] reference = seen.stream().map(gi -> pooled[gi]).toArray(double[][]::new);
            net = net.withReference(reference);
            nets.add(net);
            if (scoreIdx.length > 0) {
                double[] out = net.rawOutputs(prep);
                for (int i : scoreIdx) {
                    oof[i] = out[i];
                    novelty[i] = net.novelty(pooled[sampleGraph[i]]);
                    hasOof[i] = true;
                }
            }
        }
        // Shrink the correction toward none by the factor s in (0, 0.1, ..., 1), and gate it by novelty with the width
        // tau (1 / (1 + (novelty / tau)^2); tau = infinity: no gate), both chosen for the lowest mean relative error on
        // the scoring groups (half of all training groups, with several members): a correction that does not transfer to
        // unseen groups, or to graphs unlike the training ones, is scaled down instead of hurting.
        double shrink = 1;
        double tau = Double.POSITIVE_INFINITY;
        double bestErr = Double.POSITIVE_INFINITY;
        double noCorrection = 0;
        int held = 0;
        for (int i = 0; i < y.length; i++) {
            if (hasOof[i]) {
                noCorrection += Math.abs(Math.exp(-y[i]) - 1);
                held++;
            }
        }
        if (withLayerModel) {
            for (double t : TAUS) {
                for (int a10 = 0; a10 <= 10; a10++) {
                    double a = a10 / 10.0;
                    double err = 0;
                    for (int i = 0; i < y.length; i++) {
                        if (hasOof[i]) {
                            err += Math.abs(Math.exp(a * gate(novelty[i], t) * oof[i] - y[i]) - 1);
                        }
                    }
                    if (held > 0 && err < bestErr - 1e-12) {
                        bestErr = err;
                        shrink = a;
                        tau = t;
                    }
                }
            }
        }
        LOG.debug("GNN: {} member(s), shrink {}, novelty width {}; out-of-fold MRE {} (without correction {})", k,
                shrink, tau, bestErr / Math.max(held, 1), noCorrection / Math.max(held, 1));
        return new Ensemble(nets, shrink, tau);
    }

    /** Novelty widths tried, narrowest first (infinity last: no gate). */
    private static final double[] TAUS = {0.5, 1, 2, 4, Double.POSITIVE_INFINITY};

    /** How much of the correction a graph of this novelty keeps: {@code 1 / (1 + (novelty / tau)²)}. */
    static double gate(double novelty, double tau) {
        return Double.isInfinite(tau) ? 1 : 1 / (1 + (novelty / tau) * (novelty / tau));
    }

    /** The trained members, the shrink factor of their mean correction and the novelty gate's width. */
    record Ensemble(List<GnnModel> members, double shrink, double tau) {
        Ensemble {
            members = List.copyOf(members);
        }
    }

    /** The inputs every member trains on. */
    record Prepared(GraphBatch batch, int[] sampleGraph, INDArray ctx, INDArray target, double[] mean, double[] std,
            int contextWidth, double yMean, double yScale, double[] y) {
    }

    /** Trains one network, stopping early on the validation samples' loss (patience {@value #PATIENCE} epochs). */
    private GnnModel train(Prepared prep, int[] trainIdx, int[] valIdx, long memberSeed) {
        int n = prep.y().length;
        MessagePassingNetwork net = new MessagePassingNetwork(NODE_FEATURES, hidden, rounds, prep.contextWidth(),
                attention, memberSeed);
        Map<String, INDArray> best = copy(net.params);
        double bestVal = Double.POSITIVE_INFINITY;
        Adam adam = new Adam(net.params, learningRate, weightDecay);
        double[] trainW = new double[n];
        double[] valW = new double[n];
        for (int i : trainIdx) {
            trainW[i] = 1;
        }
        for (int i : valIdx) {
            valW[i] = 1;
        }
        INDArray trainWeights = Nd4j.create(trainW, new long[] {n, 1}, DataType.DOUBLE);
        INDArray valWeights = valIdx.length == 0 ? trainWeights : Nd4j.create(valW, new long[] {n, 1}, DataType.DOUBLE);
        int bestEpoch = 0;
        for (int epoch = 1; epoch <= epochs; epoch++) {
            // One pass serves both: training samples drive the gradient, held-out groups the stopping rule.
            MessagePassingNetwork.Pass pass = net.forward(prep.batch(), prep.sampleGraph(), prep.ctx());
            double val = MessagePassingNetwork.loss(pass, prep.target(), valWeights);
            if (val < bestVal) {
                bestVal = val;
                best = copy(net.params);
                bestEpoch = epoch - 1;
            } else if (epoch - 1 - bestEpoch > PATIENCE) {
                break;
            }
            adam.step(net.backward(prep.batch(), prep.sampleGraph(), pass, prep.target(), trainWeights));
        }
        net.params.clear();
        net.params.putAll(best);
        LOG.debug("GNN member: best epoch {} of {}, validation loss {}", bestEpoch, epochs, bestVal);
        return new GnnModel(net, prep.mean(), prep.std(), prep.contextWidth(), prep.yMean(), prep.yScale(), 1);
    }

    private int[] indices(List<Sample> samples, List<String> groups, boolean inGroups) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < samples.size(); i++) {
            boolean in = groups.contains(samples.get(i).workload().tag(groupTag).orElse(""));
            if (in == inGroups) {
                out.add(i);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    static Map<String, INDArray> copy(Map<String, INDArray> params) {
        Map<String, INDArray> out = new LinkedHashMap<>();
        params.forEach((k, v) -> out.put(k, v.dup('c')));
        return out;
    }

    /** Workload settings: phase, log batch, log world size, log threads (and log layer-wise ms). */
    static double[] context(Workload w, double layerwise, int width) {
        double[] c = new double[width];
        c[0] = w.phase() == Phase.TRAIN ? 1 : 0;
        c[1] = Math.log(w.batch());
        c[2] = Math.log(w.worldSize());
        c[3] = Math.log(w.threads());
        if (width > 4) {
            c[4] = Math.log(Math.max(layerwise, 1e-6));
        }
        return c;
    }

    private static void standardisation(double[][] rows, double[] mean, double[] std) {
        int w = mean.length;
        for (double[] r : rows) {
            for (int j = 0; j < w; j++) {
                mean[j] += r[j] / rows.length;
            }
        }
        for (double[] r : rows) {
            for (int j = 0; j < w; j++) {
                std[j] += (r[j] - mean[j]) * (r[j] - mean[j]) / rows.length;
            }
        }
        for (int j = 0; j < w; j++) {
            std[j] = std[j] > 1e-12 ? Math.sqrt(std[j]) : 1;
        }
    }

    static INDArray matrix(double[][] rows, double[] mean, double[] std) {
        int w = mean.length;
        double[] flat = new double[rows.length * w];
        for (int i = 0; i < rows.length; i++) {
            for (int j = 0; j < w; j++) {
                flat[i * w + j] = (rows[i][j] - mean[j]) / std[j];
            }
        }
        return Nd4j.create(flat, new long[] {rows.length, w}, DataType.DOUBLE);
    }

    /**
     * Concatenates graphs into one batch of node features and edges; with per-layer times (by layer index, in the
     * reference workload: batch 1, inference, one worker, one thread), each node also gets its log predicted time.
     *
     * @param graphs      the graphs
     * @param layerMillis per graph, its layers' reference times (null entries, or a null list: no layer-time feature)
     */
    static GraphBatch batchOf(List<ModelGraph> graphs, List<double[]> layerMillis) {
        List<double[]> rows = new ArrayList<>();
        List<Integer> owner = new ArrayList<>();
        List<int[]> edges = new ArrayList<>();
        for (int gi = 0; gi < graphs.size(); gi++) {
            ModelGraph g = graphs.get(gi);
            FeatureExtractor fx = FeatureExtractor.of(g);
            List<LayerFeatures> fwd = fx.extract(1, Phase.INFER);
            List<LayerFeatures> train = fx.extract(1, Phase.TRAIN);
            double[] layerMs = layerMillis == null ? null : layerMillis.get(gi);
            // Shape arithmetic carries no data (it is not executed by eager frameworks): not a node of the network.
            int[] index = new int[g.size()];
            for (int i = 0; i < g.size(); i++) {
                LayerFeatures f = fwd.get(i);
                if (f.family() == OpFamily.SHAPE) {
                    index[i] = -1;
                    continue;
                }
                double[] x = new double[NODE_FEATURES];
                x[0] = Math.log1p(f.flopsFwd()) / 10;
                x[1] = Math.log1p(train.get(i).flopsBwd()) / 10;
                x[2] = Math.log1p(f.bytesFwd()) / 10;
                x[3] = Math.log1p(f.params()) / 10;
                x[4] = Math.log1p(f.outputElements()) / 10;
                x[5] = f.executes() ? 1 : 0;
                x[6] = Math.log1p(1e3 * (layerMs == null ? 0.0 : layerMs[i])) / 5;
                x[7 + f.family().ordinal()] = 1;
                index[i] = rows.size();
                rows.add(x);
                owner.add(gi);
            }
            for (Edge edge : g.edges()) {
                if (index[edge.from()] >= 0 && index[edge.to()] >= 0) {
                    edges.add(new int[] {index[edge.from()], index[edge.to()]});
                }
            }
        }
        double[] flat = new double[rows.size() * NODE_FEATURES];
        for (int i = 0; i < rows.size(); i++) {
            System.arraycopy(rows.get(i), 0, flat, i * NODE_FEATURES, NODE_FEATURES);
        }
        return new GraphBatch(flat, NODE_FEATURES,
                edges.stream().mapToInt(e -> e[0]).toArray(), edges.stream().mapToInt(e -> e[1]).toArray(),
                owner.stream().mapToInt(Integer::intValue).toArray(), graphs.size());
    }

    /** Adam with decoupled weight decay, updating the parameters in place. */
    static final class Adam {
        private final Map<String, INDArray> params;
        private final Map<String, INDArray> m = new LinkedHashMap<>();
        private final Map<String, INDArray> v = new LinkedHashMap<>();
        private final double lr;
        private final double decay;
        private int t;

        Adam(Map<String, INDArray> params, double lr, double decay) {
            this.params = params;
            this.lr = lr;
            this.decay = decay;
            params.forEach((k, p) -> {
                m.put(k, Nd4j.zerosLike(p));
                v.put(k, Nd4j.zerosLike(p));
            });
        }

        void step(Map<String, INDArray> grads) {
            t++;
            double b1 = 0.9;
            double b2 = 0.999;
            double c1 = 1 - Math.pow(b1, t);
            double c2 = 1 - Math.pow(b2, t);
            for (Map.Entry<String, INDArray> e : params.entrySet()) {
                INDArray g = grads.get(e.getKey());
                INDArray mk = m.get(e.getKey()).muli(b1).addi(g.mul(1 - b1));
                INDArray vk = v.get(e.getKey()).muli(b2).addi(g.mul(g).muli(1 - b2));
                INDArray step = mk.div(c1).divi(org.nd4j.linalg.ops.transforms.Transforms.sqrt(vk.div(c2), false)
                        .addi(1e-8));
                e.getValue().muli(1 - lr * decay).subi(step.muli(lr));
            }
        }
    }
}
