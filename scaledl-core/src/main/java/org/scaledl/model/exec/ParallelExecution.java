package org.scaledl.model.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.comm.Collectives;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.cost.StageCost;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * How the cost of each layer on one device combines into an iteration of a job spread over devices, kept apart from
 * how a layer's cost is predicted ({@link DeviceLayerCost}; NeuSight keeps its per-operator predictor and its
 * DP/TP/PP aggregator apart the same way). With {@link Parallelism} {@code (d, t, p, m)}:
 *
 * <ul>
 *   <li><b>Tensor parallel</b> ({@code t > 1}, Megatron-style): the repeated block's layers off the residual stream
 *       and the epilogue's contractions are split {@code t} ways (their work, and a contraction's output width);
 *       each block all-reduces its output activations twice in the forward pass and twice more in the backward
 *       pass. Needs the graph's {@link Blocks} (traces laid out block by block carry them).</li>
 *   <li><b>Pipeline</b> ({@code p > 1}, {@code m} micro-batches, GPipe schedule): the layers run in {@code p}
 *       stages; an iteration takes {@code (m + p − 1)} stage times of one micro-batch, {@code (m + p − 1)/p} times
 *       the whole model's time at the micro-batch, plus the activation hand-offs between stages ({@code p − 1} per
 *       micro-batch and pass). With one micro-batch this is the whole model in sequence plus the hand-offs.</li>
 *   <li><b>Data parallel</b> ({@code d > 1}): in training, each replica all-reduces its share of the gradients
 *       ({@code 4 · params / (t · p)} bytes) over {@code d} ranks; the reduction overlaps the backward pass, so
 *       what is left exposed is {@code max(all-reduce − backward, one bucket)}.</li>
 * </ul>
 *
 * Ranks are packed {@value #RANKS_PER_NODE} to a node. Each term keeps its physical asymptotics: more ranks never
 * make the layers faster than their share, and the ring all-reduce tends to {@code 2 · bytes / bandwidth} plus a
 * latency linear in the ranks ({@link Collectives}).
 */
public final class ParallelExecution {
    /** Ranks per node when a job spans several: 8, as on DGX-class servers. */
    public static final int RANKS_PER_NODE = 8;

    private ParallelExecution() {
    }

    /**
     * Refuses a parallel job this execution model cannot cost: tensor parallelism without the graph's block
     * structure, several ranks without a communication model.
     *
     * @throws IllegalArgumentException naming what is missing
     */
    public static void check(Workload w, Optional<CommunicationModel> communication) {
        Parallelism par = w.parallelism();
        if (par.tensor() > 1 && w.graph().blocks().isEmpty()) {
            throw new IllegalArgumentException("tensor parallelism needs the graph's block structure (which layers "
                    + "are the repeated blocks and the residual stream's width), which " + w.graph().name()
                    + " does not carry; graphs of torch.fx traces (FxTraceReader) do");
        }
        if (par.ranks() > 1 && communication.isEmpty()) {
            throw new IllegalArgumentException("this device predictor has no communication model (fit it with "
                    + "collective measurements: LayerCost.device(...).withCollectives) to predict " + par);
        }
    }

    /**
     * The iteration's cost: each layer's time on its device (in the schedule's units: the pipeline scale applied),
     * and the communication terms.
     *
     * @param w             the workload (its device is the one every rank has)
     * @param layers        the per-layer cost on one device
     * @param communication the collectives' cost (needed when the job has several ranks)
     * @param device        the workload's device
     * @param singleTotal   the whole iteration on one device, as the caller caches it (used as the total when the job
     *                      has one rank: the same sum in another order)
     */
    public static StageCost cost(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, double singleTotal) {
        check(w, communication);
        Parallelism par = w.parallelism();
        boolean train = w.phase() == Phase.TRAIN;
        Optional<Blocks> blocks = w.graph().blocks();
        int micro = Math.max(1, (int) Math.ceil((double) w.batch() / par.microBatches()));
        Workload perMicro = par.microBatches() == 1 ? w : w.toBuilder().batch(micro).build();
        double k = layers.factor(w.phase(), device);
        double fwd = 0;
        double bwd = 0;
        double stageScale = par.pipeline() == 1 ? 1 : (par.microBatches() + par.pipeline() - 1.0) / par.pipeline();
        ModelGraph g = w.graph();
        double[] layerMillis = new double[g.size()];
        OpFamily[] families = new OpFamily[g.size()];
        List<LayerFeatures> fs = FeatureExtractor.of(g).extract(perMicro.batch(), w.phase());
        double residualBytes = 0;
        for (LayerFeatures lf : fs) {
            if (lf.family() == OpFamily.SHAPE) {
                continue;
            }
            LayerFeatures f = lf;
            if (blocks.isPresent()) {
                Blocks b = blocks.get();
                Blocks.Region region = b.region(g.layer(lf.layer()).name());
                boolean residual = lf.outputElements() > 0 && outputLastDim(g, lf.layer()) == b.hiddenSize()
                        && lf.family() != OpFamily.DENSE;
                if (region == Blocks.Region.BLOCK && residual) {
                    residualBytes = Math.max(residualBytes, outputBytes(g, lf.layer(), perMicro.batch()));
                }
                boolean sharded = (region == Blocks.Region.BLOCK && !residual)
                        || (region == Blocks.Region.EPILOGUE && lf.family() == OpFamily.DENSE);
                if (sharded && par.tensor() > 1) {
                    f = scaled(lf, par.tensor());
                }
            }
            double lfwd = layers.layerMillis(f, device, false) * k;
            double lbwd = train ? layers.layerMillis(f, device, true) * k : 0;
            fwd += lfwd;
            bwd += lbwd;
            double t = (lfwd + lbwd) * stageScale;
            if (t > 0) {
                layerMillis[lf.layer()] = t;
                families[lf.layer()] = lf.family();
            }
        }
        fwd *= stageScale;
        bwd *= stageScale;
        double comm = 0;
        List<StageCost.Term> terms = new ArrayList<>();
        if (par.tensor() > 1) {
            int passes = train ? 4 : 2;
            double act = residualBytes > 0 ? residualBytes : 4.0 * perMicro.batch() * blocks.get().hiddenSize();
            double one = communication.get().allReduceMillis(device, par.tensor(),
                    Math.min(par.tensor(), RANKS_PER_NODE), act);
            double tp = blocks.get().copies() * passes * one * stageScale;
            comm += tp;
            terms.add(new StageCost.Term("tensor-parallel all-reduce", StageCost.TermKind.COMMUNICATION, tp));
        }
        if (par.pipeline() > 1) {
            double act = blocks.map(b -> 4.0 * perMicro.batch() * b.hiddenSize()).orElse(0.0);
            if (residualBytes > 0) {
                act = residualBytes;
            }
            if (act == 0) {
                act = largestActivationBytes(g, perMicro.batch());
            }
            int handOffs = (par.pipeline() - 1) * (train ? 2 : 1) * par.microBatches();
            double pp = handOffs * communication.get().sendMillis(device, act);
            comm += pp;
            terms.add(new StageCost.Term("pipeline hand-offs", StageCost.TermKind.COMMUNICATION, pp));
        }
        if (par.data() > 1 && train) {
            double bytes = 4.0 * g.parameterCount() / (par.tensor() * par.pipeline());
            int perNode = Math.max(1, RANKS_PER_NODE / (par.tensor() * par.pipeline()));
            int ranksPerNode = Math.min(par.data(), perNode);
            double allReduce = communication.get().allReduceMillis(device, par.data(), ranksPerNode, bytes);
            double bucket = communication.get().allReduceMillis(device, par.data(), ranksPerNode,
                    Math.min(bytes, Collectives.BUCKET_BYTES));
            double exposed = Math.max(allReduce - bwd, bucket);
            comm += exposed;
            terms.add(new StageCost.Term("allreduce", StageCost.TermKind.COMMUNICATION, exposed));
        }
        double total = par.ranks() == 1 ? singleTotal : fwd + bwd + comm;
        return StageCost.withTotal(layerMillis, families, terms, total);
    }

    private static long outputLastDim(ModelGraph g, int layer) {
        return g.layer(layer).outputs().stream().findFirst().flatMap(g::tensor).flatMap(t -> t.shape())
                .map(s -> s.rank() == 0 ? 0L : s.dims().get(s.rank() - 1).constant()).orElse(0L);
    }

    private static double outputBytes(ModelGraph g, int layer, long batch) {
        return g.layer(layer).outputs().stream().findFirst().flatMap(g::tensor).map(t -> (double) t.bytes(batch))
                .orElse(0.0);
    }

    private static double largestActivationBytes(ModelGraph g, long batch) {
        double best = 0;
        for (int i = 0; i < g.size(); i++) {
            best = Math.max(best, outputBytes(g, i, batch));
        }
        return best;
    }

    /** A layer's work divided {@code k} ways (its output width too, for contractions). */
    public static LayerFeatures scaled(LayerFeatures f, int k) {
        return new LayerFeatures(f.layer(), f.family(), f.flopsFwd() / k, f.flopsBwd() / k, f.bytesRead() / k,
                f.bytesWritten() / k, f.bytesBwd() / k, f.params() / k, f.outputElements() / k, f.kernel(),
                f.stride(), f.groups(), f.inChannels(), f.family() == OpFamily.DENSE ? Math.max(1,
                        f.outChannels() / k) : f.outChannels(), f.steps());
    }
}
