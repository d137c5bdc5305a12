package org.scaledl.model.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.comm.Collectives;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.cost.StageCost;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * How the cost of each layer on one device combines into an iteration of a job spread over devices, kept apart from
 * how a layer's cost is predicted ({@link DeviceLayerCost}; NeuSight keeps its per-operator predictor and its
 * DP/TP/PP aggregator apart the same way). Two execution models:
 *
 * <p><b>Eager</b> (an imported graph, as PyTorch runs it). With {@link Parallelism} {@code (d, t, p, m)}:
 * <ul>
 *   <li><b>Tensor parallel</b> ({@code t > 1}, Megatron-style): the repeated block's layers off the residual stream
 *       and the epilogue's contractions are split {@code t} ways; each block all-reduces its output activations
 *       twice in the forward pass and twice more in the backward pass. Needs the graph's {@link Blocks}.</li>
 *   <li><b>Micro-batches</b> ({@code m}): through a pipeline of {@code p} stages (GPipe) an iteration takes
 *       {@code (m + p − 1)/p} times the whole model's time at the micro-batch, plus the activation hand-offs
 *       ({@code p − 1} per micro-batch and pass); without a pipeline they are accumulated, {@code m} times one.</li>
 *   <li><b>Data parallel</b> ({@code d > 1}): each replica all-reduces its share of the gradients
 *       ({@code 4 · params / (t · p)} bytes) over {@code d} ranks, overlapped with the backward pass (PyTorch DDP's
 *       buckets): what stays exposed is {@code max(all-reduce − backward, one bucket)}.</li>
 * </ul>
 *
 * <p><b>Megatron</b> (a transformer built from its configuration, {@link TransformerShape}), the schedule of
 * Megatron-LM (Narayanan et al., SC '21) in closed form:
 * <ul>
 *   <li>per micro-batch of {@code b} sequences, each layer's forward and backward time with its tensor-parallel
 *       shard (attention heads and MLP columns split {@code t} ways; with sequence parallelism the norms and
 *       dropouts too), plus the recomputed forward (full: every block layer; selective: the attention core) and
 *       {@code 4} all-reduces of {@code b·s·h} activations per layer ({@code 6} with full recomputation; with
 *       sequence parallelism each a reduce-scatter and an all-gather of the same volume) over the tensor group;</li>
 *   <li>{@code L/p} layers per stage, the embedding on the first and the output projection and loss on the last;
 *       the 1F1B schedule over {@code m} micro-batches takes {@code (m − 1)·T_max + Σ_s T_s} (the bubble), the
 *       interleaved one with {@code v} chunks per stage shrinks the fill and drain {@code v} times; point-to-point
 *       hand-offs of {@code b·s·h/t} activations between stages, across nodes when a stage's ranks fill them;</li>
 *   <li>the data-parallel gradient reduction of the largest stage's parameters ({@code /t}) after the backward pass
 *       (ZeRO stage 1–2: reduce-scatter plus all-gather, the same volume; stage 3 twice it), and the mixed-precision
 *       Adam step over the local parameters, bound by memory bandwidth.</li>
 * </ul>
 * Ranks are placed as Megatron places them: tensor-parallel ranks adjacent (inside a node), then data-parallel, then
 * pipeline stages. Each part of the Megatron iteration is a cost group ({@link Group}); the device stage scales each
 * by a coefficient fitted on measured iterations (ScaleDL's way: the layer costs' scale learnt from whole-iteration
 * times), and a job's memory per device follows Korthikanti et al. (2022).
 */
public final class ParallelExecution {
    /** Ranks per node when a job spans several and its topology says nothing else: 8, as on DGX-class servers. */
    public static final int RANKS_PER_NODE = 8;
    /** Memory every process holds besides its tensors (CUDA context, library workspaces, NCCL buffers), bytes. */
    public static final double RUNTIME_BYTES = 1.0 * (1L << 30);

    /** The cost groups of an iteration: what a fitted coefficient scales. */
    public enum Group {
        /** Contractions: GEMMs, batched matrix products, convolutions (with their recomputation and bubble). */
        DENSE,
        /** Every other layer: norms, softmax, element-wise, embedding look-ups, copies. */
        OTHER,
        /** Tensor-parallel all-reduces (or reduce-scatters and all-gathers). */
        TENSOR_COMM,
        /** Pipeline hand-offs. */
        PIPELINE_COMM,
        /** Data-parallel gradient reduction (and ZeRO's gathers). */
        DATA_COMM,
        /** The optimizer step. */
        OPTIMIZER,
        /** A fixed cost per iteration, ms. */
        OVERHEAD;

        /** The label of its term in a breakdown. */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Cost groups. */
    public static final int GROUPS = Group.values().length;

    private ParallelExecution() {
    }

    /**
     * An iteration's cost and its uncalibrated cost groups.
     *
     * @param cost   the calibrated cost, with its breakdown, memory and notes
     * @param groups per {@link Group}, the uncalibrated time (ms; overhead: 1 per iteration)
     */
    public record Result(StageCost cost, double[] groups) {
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
                    + " does not carry; graphs of torch.fx traces (FxTraceReader) and of transformer "
                    + "configurations (TransformerSpec) do");
        }
        if (par.ranks() > 1 && communication.isEmpty()) {
            throw new IllegalArgumentException("this device predictor has no communication model (fit it with "
                    + "collective measurements: LayerCost.device(...).withCollectives) to predict " + par);
        }
        if (w.graph().transformer().isPresent()) {
            TransformerShape t = w.graph().transformer().get();
            if (par.tensor() > 1 && (t.heads() % par.tensor() != 0 || t.kvHeads() % Math.min(par.tensor(),
                    t.kvHeads()) != 0)) {
                throw new IllegalArgumentException("tensor parallelism " + par.tensor() + " does not divide the "
                        + t.heads() + " attention heads (and " + t.kvHeads() + " key/value heads)");
            }
            if (par.pipeline() > t.layers()) {
                throw new IllegalArgumentException(par.pipeline() + " pipeline stages for " + t.layers() + " layers");
            }
            if (par.virtualStages() > 1 && t.layers() % (par.pipeline() * par.virtualStages()) != 0) {
                throw new IllegalArgumentException("the interleaved schedule needs layers (" + t.layers()
                        + ") divisible by stages x chunks (" + par.pipeline() + " x " + par.virtualStages() + ")");
            }
        }
    }

    /** The topology a workload runs on: its own, or the standard server of its device (noted). */
    static Topology topology(Workload w, Device d, List<String> notes) {
        if (w.topology().isPresent()) {
            Topology t = w.topology().get();
            if (t.assumed() && w.parallelism().ranks() > 1) {
                notes.add("topology partly assumed from the device: " + t.describe());
            }
            return t;
        }
        Topology t = Topology.assumedFor(d);
        if (w.parallelism().ranks() > 1) {
            notes.add("topology assumed from the device's form factor: " + t.describe() + " (give --gpus-per-node "
                    + "and --inter-node-gbps)");
        }
        return t;
    }

    /**
     * The iteration's cost.
     *
     * @param w             the workload (its device is the one every rank has)
     * @param layers        the per-layer cost on one device
     * @param communication the collectives' cost (needed when the job has several ranks)
     * @param device        the workload's device
     * @param singleTotal   the whole iteration on one device without micro-batches, as the caller caches it (used as
     *                      the eager total then: the same sum in another order)
     * @param coefficients  per {@link Group}, the fitted coefficients of the Megatron model (null: all 1)
     */
    public static Result run(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, double singleTotal, double[] coefficients) {
        check(w, communication);
        List<String> notes = new ArrayList<>();
        Topology topo = topology(w, device, notes);
        if (w.graph().transformer().isPresent()) {
            return megatron(w, layers, communication, device, topo, coefficients == null ? ones() : coefficients,
                    notes);
        }
        return eager(w, layers, communication, device, topo, singleTotal, notes);
    }

    private static double[] ones() {
        double[] c = new double[GROUPS];
        java.util.Arrays.fill(c, 1);
        c[Group.OVERHEAD.ordinal()] = 0;
        return c;
    }

    // ---------------------------------------------------------------------------------------------------- eager

    private static Result eager(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, Topology topo, double singleTotal, List<String> notes) {
        Parallelism par = w.parallelism();
        boolean train = w.phase() == Phase.TRAIN;
        Precision prec = w.precision();
        Optional<Blocks> blocks = w.graph().blocks();
        int micro = Math.max(1, (int) Math.ceil((double) w.batch() / par.microBatches()));
        Workload perMicro = par.microBatches() == 1 ? w : w.toBuilder().batch(micro).build();
        double k = layers.factor(w.phase(), device);
        double fwd = 0;
        double bwd = 0;
        double stageScale = par.pipeline() == 1 && par.microBatches() == 1 ? 1
                : (par.microBatches() + par.pipeline() - 1.0) / par.pipeline();
        ModelGraph g = w.graph();
        double[] layerMillis = new double[g.size()];
        OpFamily[] families = new OpFamily[g.size()];
        double[] groups = new double[GROUPS];
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
            int r = g.repeats(lf.layer());
            double lfwd = layers.layerMillis(f, device, prec, false) * k * r;
            double lbwd = train ? layers.layerMillis(f, device, prec, true) * k * r : 0;
            fwd += lfwd;
            bwd += lbwd;
            double t = (lfwd + lbwd) * stageScale;
            if (t > 0) {
                layerMillis[lf.layer()] = t;
                families[lf.layer()] = lf.family();
                groups[(dense(lf.family()) ? Group.DENSE : Group.OTHER).ordinal()] += t;
            }
        }
        fwd *= stageScale;
        bwd *= stageScale;
        double comm = 0;
        List<StageCost.Term> terms = new ArrayList<>();
        double actScale = prec.activationBytes() / 4.0;
        if (par.tensor() > 1) {
            int passes = train ? 4 : 2;
            double act = (residualBytes > 0 ? residualBytes : 4.0 * perMicro.batch() * blocks.get().hiddenSize())
                    * actScale;
            double one = communication.get().allReduceMillis(device, topo, par.tensor(),
                    Math.min(par.tensor(), topo.gpusPerNode()), act);
            double tp = blocks.get().copies() * passes * one * stageScale;
            comm += tp;
            groups[Group.TENSOR_COMM.ordinal()] += tp;
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
            boolean across = (long) par.tensor() * par.data() >= topo.gpusPerNode()
                    && (long) par.ranks() > topo.gpusPerNode();
            int handOffs = (par.pipeline() - 1) * (train ? 2 : 1) * par.microBatches();
            double pp = handOffs * communication.get().sendMillis(device, topo, across, act * actScale);
            comm += pp;
            groups[Group.PIPELINE_COMM.ordinal()] += pp;
            terms.add(new StageCost.Term("pipeline hand-offs", StageCost.TermKind.COMMUNICATION, pp));
        }
        if (par.data() > 1 && train) {
            // PyTorch keeps FP32 parameters and gradients under autocast: 4 bytes each
            double bytes = 4.0 * g.parameterCount() / (par.tensor() * par.pipeline());
            int ranksPerNode = dataRanksPerNode(par, topo);
            double allReduce = communication.get().allReduceMillis(device, topo, par.data(), ranksPerNode, bytes);
            double bucket = communication.get().allReduceMillis(device, topo, par.data(), ranksPerNode,
                    Math.min(bytes, Collectives.BUCKET_BYTES));
            double exposed = Math.max(allReduce - bwd, bucket);
            comm += exposed;
            groups[Group.DATA_COMM.ordinal()] += exposed;
            terms.add(new StageCost.Term("allreduce", StageCost.TermKind.COMMUNICATION, exposed));
        }
        double total = par.ranks() == 1 && par.microBatches() == 1 ? singleTotal : fwd + bwd + comm;
        StageCost cost = StageCost.withTotal(layerMillis, families, terms, total)
                .withMemory(eagerMemory(w, fs, perMicro.batch()), notes);
        return new Result(cost, groups);
    }

    /**
     * An eager job's memory per device: FP32 weights, and in training their gradients and two optimizer moments
     * (Adam's; SGD with momentum holds one), divided over tensor and pipeline ranks; activations: in training every
     * layer output kept for the backward pass (of one micro-batch, times the stages in flight), in inference the
     * largest layer's inputs and outputs; plus the runtime's own.
     */
    private static double eagerMemory(Workload w, List<LayerFeatures> fs, long microBatch) {
        Parallelism par = w.parallelism();
        double scale = w.precision().activationBytes() / 4.0;
        double weights = 4.0 * w.graph().parameterCount() / (par.tensor() * par.pipeline());
        double states = w.phase() == Phase.TRAIN ? 3 * weights : 0;
        double act = 0;
        for (LayerFeatures f : fs) {
            int r = w.graph().repeats(f.layer());
            if (w.phase() == Phase.TRAIN) {
                act += f.bytesWritten() * r;
            } else {
                act = Math.max(act, f.bytesRead() + f.bytesWritten());
            }
        }
        act *= scale;
        if (w.phase() == Phase.TRAIN) {
            act = act / (par.tensor() * par.pipeline()) * Math.min(par.microBatches(), par.pipeline());
        }
        return weights + states + act + RUNTIME_BYTES;
    }

    /** Data-parallel ranks sharing a node when ranks are placed tensor-first, then data, then pipeline. */
    static int dataRanksPerNode(Parallelism par, Topology topo) {
        return Math.max(1, Math.min(par.data(), topo.gpusPerNode() / par.tensor()));
    }

    // ------------------------------------------------------------------------------------------------- megatron

    private static Result megatron(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, Topology topo, double[] coef, List<String> notes) {
        TransformerShape ts = w.graph().transformer().get();
        Parallelism par = w.parallelism();
        ModelGraph g = w.graph();
        Blocks blocks = g.blocks().orElseThrow();
        boolean train = w.phase() == Phase.TRAIN;
        Precision prec = w.precision();
        Recompute rc = train ? w.recompute() : Recompute.NONE;
        int t = par.tensor();
        int p = par.pipeline();
        int m = par.microBatches();
        int v = par.virtualStages();
        int d = par.data();
        int b = Math.max(1, (int) Math.ceil((double) w.batch() / m));
        boolean sp = par.sequenceParallel();
        double actBytes = prec.activationBytes();
        List<LayerFeatures> fs = FeatureExtractor.of(g).extract(b, w.phase());
        // Per micro-batch: [stage part][group] with part 0 the block (all layers), 1 the prologue, 2 the epilogue.
        double[][] part = new double[3][GROUPS];
        double[] perLayer = new double[g.size()];
        OpFamily[] families = new OpFamily[g.size()];
        double blockParams = 0;
        double prologueParams = 0;
        double epilogueParams = 0;
        for (LayerFeatures lf : fs) {
            if (lf.family() == OpFamily.SHAPE) {
                continue;
            }
            String name = g.layer(lf.layer()).name();
            Blocks.Region region = blocks.region(name);
            int at = region == Blocks.Region.BLOCK ? 0 : region == Blocks.Region.PROLOGUE ? 1 : 2;
            boolean residual = region == Blocks.Region.BLOCK && residualStream(name);
            boolean sharded = t > 1 && (region == Blocks.Region.BLOCK ? !residual || sp
                    : dense(lf.family()) || lf.family() == OpFamily.EMBEDDING || name.startsWith("head/loss"));
            LayerFeatures f = sharded ? scaled(lf, t) : lf;
            double fwd = layers.layerMillis(f, device, prec, false);
            double bwd = train ? layers.layerMillis(f, device, prec, true) : 0;
            if (region == Blocks.Region.BLOCK && (rc == Recompute.FULL || rc == Recompute.SELECTIVE
                    && name.contains("/core/"))) {
                bwd += fwd;
            }
            int r = g.repeats(lf.layer());
            double time = (fwd + bwd) * r;
            part[at][(dense(lf.family()) ? Group.DENSE : Group.OTHER).ordinal()] += time;
            perLayer[lf.layer()] = time;
            families[lf.layer()] = lf.family();
            double params = (double) g.parameterCount(lf.layer()) * r / (sharded ? t : 1);
            if (at == 0) {
                blockParams += params;
            } else if (at == 1) {
                prologueParams += params;
            } else {
                epilogueParams += params;
            }
        }
        // tensor-parallel collectives per micro-batch: 2 per layer and pass, 2 more for a recomputed forward
        double tpOne = 0;
        if (t > 1) {
            double bytes = (double) b * ts.seq() * ts.hidden() * actBytes;
            int perNode = Math.min(t, topo.gpusPerNode());
            tpOne = sp ? 2 * communication.get().reduceScatterMillis(device, topo, t, perNode, bytes)
                    : communication.get().allReduceMillis(device, topo, t, perNode, bytes);
            int perLayerCount = (train ? 4 : 2) + (rc == Recompute.FULL ? 2 : 0);
            part[0][Group.TENSOR_COMM.ordinal()] += perLayerCount * tpOne * ts.layers();
            part[1][Group.TENSOR_COMM.ordinal()] += (train ? 2 : 1) * tpOne;
        }
        // stages: L/p block layers each (the most loaded has the ceiling), the prologue on the first, the epilogue
        // on the last
        double share = Math.ceil((double) ts.layers() / p) / ts.layers();
        double[] first = add(scale(part[0], share), part[1]);
        double[] last = add(scale(part[0], share), part[2]);
        double[] stageMax;
        double[] sumStages = add(add(part[0], part[1]), part[2]);
        if (p == 1) {
            stageMax = sumStages;
        } else {
            stageMax = total(first) >= total(last) ? first : last;
            double[] middle = scale(part[0], share);
            if (p > 2 && total(middle) > total(stageMax)) {
                stageMax = middle;
            }
        }
        double[] groups = new double[GROUPS];
        // 1F1B: (m − 1)·T_max + Σ_s T_s; interleaved (v chunks): the fill and drain shrink v-fold
        for (int k = 0; k < GROUPS; k++) {
            groups[k] = (m - 1) * stageMax[k] + sumStages[k] / v + stageMax[k] * (1 - 1.0 / v);
        }
        double iterFactor = total(sumStages) > 0 ? total(groups) / total(sumStages) : 0;
        // pipeline hand-offs: forward activations and backward gradients, each of b·s·h/t per rank
        if (p > 1) {
            boolean across = (long) t * d >= topo.gpusPerNode() && (long) par.ranks() > topo.gpusPerNode();
            double bytes = (double) b * ts.seq() * ts.hidden() * actBytes / t;
            double one = communication.get().sendMillis(device, topo, across, bytes);
            groups[Group.PIPELINE_COMM.ordinal()] = (train ? 2 : 1) * (m + p - 1) * v * one;
        }
        // data-parallel gradients of the largest stage, after the backward pass
        double stageParams = Math.max(blockParams * share + prologueParams, blockParams * share + epilogueParams);
        if (p == 1) {
            stageParams = blockParams + prologueParams + epilogueParams;
        }
        if (train && d > 1) {
            double gradBytes = prec.isMixed() ? 2 : 4;
            int perNode = dataRanksPerNode(par, topo);
            double reduce = communication.get().allReduceMillis(device, topo, d, perNode, stageParams * gradBytes);
            if (par.zeroStage() == 3) {
                reduce *= 2;
            }
            groups[Group.DATA_COMM.ordinal()] = reduce;
        }
        // the optimizer step: Adam over the local parameters, bound by memory (mixed precision also writes the
        // half-precision copy)
        if (train) {
            double local = stageParams / (par.zeroStage() >= 1 ? d : 1);
            double bytesPerParam = prec.isMixed() ? 30 : 28;
            groups[Group.OPTIMIZER.ordinal()] = 1e3 * local * bytesPerParam / device.bytesPerSecond();
        }
        groups[Group.OVERHEAD.ordinal()] = 1;
        // calibrated: each group times its coefficient
        double[] calibrated = new double[GROUPS];
        double total = 0;
        for (int k = 0; k < GROUPS; k++) {
            calibrated[k] = groups[k] * coef[k];
            total += calibrated[k];
        }
        double denseScale = coef[Group.DENSE.ordinal()] * iterFactor;
        double otherScale = coef[Group.OTHER.ordinal()] * iterFactor;
        double layerSum = 0;
        for (int i = 0; i < perLayer.length; i++) {
            if (perLayer[i] > 0) {
                perLayer[i] *= dense(families[i]) ? denseScale : otherScale;
                layerSum += perLayer[i];
            }
        }
        List<StageCost.Term> terms = new ArrayList<>();
        for (Group k : new Group[] {Group.TENSOR_COMM, Group.PIPELINE_COMM, Group.DATA_COMM}) {
            if (calibrated[k.ordinal()] > 0) {
                terms.add(new StageCost.Term(k.label(), StageCost.TermKind.COMMUNICATION, calibrated[k.ordinal()]));
            }
        }
        for (Group k : new Group[] {Group.OPTIMIZER, Group.OVERHEAD}) {
            if (calibrated[k.ordinal()] > 0) {
                terms.add(new StageCost.Term(k.label(), StageCost.TermKind.OVERHEAD, calibrated[k.ordinal()]));
            }
        }
        // the layer shares absorb the rounding between the per-layer scaling and the groups' sum
        double layersTotal = calibrated[Group.DENSE.ordinal()] + calibrated[Group.OTHER.ordinal()];
        if (layerSum > 0 && layersTotal > 0) {
            double fix = layersTotal / layerSum;
            for (int i = 0; i < perLayer.length; i++) {
                perLayer[i] *= fix;
            }
        }
        double memory = megatronMemory(w, ts, stageParams, b);
        StageCost cost = StageCost.withTotal(perLayer, families, terms, total).withMemory(memory, notes);
        return new Result(cost, groups);
    }

    /**
     * A Megatron job's memory on its most loaded device (the first pipeline stage): weights, gradients and Adam's
     * states of the stage's parameters (mixed precision: 2 + 4 + 12 bytes a parameter, Narayanan et al.; FP32:
     * 4 + 4 + 8; ZeRO shards the states over the data-parallel group from stage 1, the gradients from stage 2, the
     * weights at stage 3), and the activations of the micro-batches in flight (Korthikanti et al., 2022:
     * {@code s·b·h·(34 + 5·a·s/h)} bytes a layer in half precision; {@code s·b·h·(10 + 24/t + 5·a·s/(h·t))} with
     * tensor parallelism, divided by {@code t} with sequence parallelism; selective recomputation drops the
     * {@code 5·a·s/h} term, full keeps each layer's input, {@code 2·s·b·h}), times the {@code min(m, p)} micro-batches
     * the 1F1B schedule holds ({@code 1 + (p − 1)/(p·v)} more with interleaving), plus the runtime's own.
     */
    private static double megatronMemory(Workload w, TransformerShape ts, double stageParams, int b) {
        Parallelism par = w.parallelism();
        int t = par.tensor();
        int p = par.pipeline();
        int d = par.data();
        Precision prec = w.precision();
        boolean mixed = prec.isMixed();
        double weightBytes = mixed ? 2 : 4;
        double gradBytes = 4;
        double stateBytes = mixed ? 12 : 8;
        int zero = par.zeroStage();
        double perParam = weightBytes / (zero >= 3 ? d : 1) + gradBytes / (zero >= 2 ? d : 1)
                + stateBytes / (zero >= 1 ? d : 1);
        if (w.phase() == Phase.INFER) {
            perParam = weightBytes;
        }
        double states = stageParams * perParam;
        double sbh = (double) ts.seq() * b * ts.hidden();
        double attn = 5.0 * ts.heads() * ts.seq() / ts.hidden();
        double layer;
        Recompute rc = w.phase() == Phase.TRAIN ? w.recompute() : Recompute.NONE;
        boolean sp = par.sequenceParallel();
        if (rc == Recompute.FULL) {
            layer = 2 * sbh / (sp ? t : 1);
        } else {
            double core = rc == Recompute.SELECTIVE ? 0 : attn / t;
            layer = sbh * (sp ? 34.0 / t : 10 + 24.0 / t) + sbh * core;
        }
        layer *= prec.activationBytes() / 2.0;
        double layersPerStage = Math.ceil((double) ts.layers() / p);
        double inFlight = w.phase() == Phase.TRAIN ? Math.min(par.microBatches(), p)
                * (1 + (p - 1.0) / (p * par.virtualStages()) * (par.virtualStages() > 1 ? 1 : 0)) : 1;
        double activations = w.phase() == Phase.TRAIN ? layer * layersPerStage * inFlight
                : sbh * prec.activationBytes() * 4;
        // the first stage also keeps its embedding output; the last the logits of one micro-batch in FP32
        double logits = (p == 1 ? 1 : 0) * 4.0 * ts.seq() * b * ts.vocab() / t;
        return states + activations + logits + RUNTIME_BYTES;
    }

    // -------------------------------------------------------------------------------------------------- helpers

    /**
     * Whether a block layer of a configuration-built transformer works on the residual stream (norms, the dropouts
     * after the projections, the residual adds): replicated over the tensor-parallel ranks, unless sequence
     * parallelism splits it.
     */
    private static boolean residualStream(String name) {
        return !name.contains("/core/") && (name.endsWith("/norm") || name.endsWith("/post_norm")
                || name.endsWith("/dropout") || name.endsWith("/residual"));
    }

    private static boolean dense(OpFamily f) {
        return f == OpFamily.DENSE || f == OpFamily.CONV;
    }

    private static double[] scale(double[] v, double k) {
        double[] out = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[i] * k;
        }
        return out;
    }

    private static double[] add(double[] a, double[] b) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[i] + b[i];
        }
        return out;
    }

    private static double total(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s;
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
