package org.scaledl.model.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.GraphCache;
import org.scaledl.graph.LayerRole;
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
 * pipeline stages. Each part of the Megatron iteration is a named term ({@link ExecutionTerm}); the device stage scales each
 * by a coefficient fitted on measured iterations (ScaleDL's way: the layer costs' scale learnt from whole-iteration
 * times), and a job's memory per device follows Korthikanti et al. (2022).
 */
public final class ParallelExecution {
    /** Ranks per node when a job spans several and its topology says nothing else: 8, as on DGX-class servers. */
    public static final int RANKS_PER_NODE = 8;
    /** Bytes of a parameter (and of its gradient) in eager PyTorch: FP32, whatever autocast computes in. */
    static final double EAGER_PARAMETER_BYTES = 4;
    /** Memory every process holds besides its tensors (CUDA context, library workspaces, NCCL buffers), bytes. */
    public static final double RUNTIME_BYTES = 1.0 * (1L << 30);

    /**
     * Refuses a parallel job this execution model cannot cost: tensor parallelism without the graph's block
     * structure, several ranks without a communication model.
     *
     * @throws IllegalArgumentException naming what is missing
     */
    public static void check(Workload w, Optional<CommunicationModel> communication) {
        Parallelism par = w.parallelism();
        w.device().ifPresent(d -> {
            if (d.runs(w.precision()).isEmpty()) {
                throw new IllegalArgumentException(d.name() + " cannot run " + w.precision().label() + ": it has no "
                        + w.precision().peakColumn().toUpperCase(java.util.Locale.ROOT) + " matrix units (it runs "
                        + String.join(", ", runnable(d)) + ")");
            }
        });
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

    /** The precisions a device runs (with or without a fallback), by label. */
    static List<String> runnable(Device d) {
        List<String> out = new ArrayList<>();
        for (Precision p : Precision.values()) {
            if (d.runs(p).isPresent()) {
                out.add(p.label());
            }
        }
        return out;
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
     * @param megatron      the fitted Megatron model (null: {@link MegatronModel#uncalibrated()})
     * @param eager         the host's dispatch floor of eager execution
     */
    public static StageCost run(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, double singleTotal, MegatronModel megatron, EagerModel eager) {
        check(w, communication);
        List<String> notes = new ArrayList<>();
        Precision runs = device.runs(w.precision()).orElseThrow();
        if (runs != w.precision()) {
            notes.add(device.name() + " has no " + w.precision().label() + " matrix units: its matrix work runs in "
                    + runs.label() + " (as frameworks fall back)");
        }
        Topology topo = topology(w, device, notes);
        if (w.graph().transformer().isPresent()) {
            return megatron(w, layers, communication, device, topo, megatron == null ? MegatronModel.uncalibrated()
                    : megatron, notes);
        }
        return eager(w, layers, communication, device, topo, singleTotal, eager, notes);
    }

    /** Operators a pass dispatches: every executed layer forward, and backward where it has work. */
    private record OperatorCount(double forward, double backward) {
    }

    private static final GraphCache<Phase, OperatorCount> OPERATORS = new GraphCache<>(2);

    /**
     * Operators one iteration of an imported graph dispatches from the host (forward, and backward in training),
     * times the micro-batches: what the {@link EagerModel}'s floor counts.
     */
    public static double operators(Workload w) {
        OperatorCount c = OPERATORS.get(w.graph(), w.phase(), () -> {
            double f = 0;
            double b = 0;
            for (LayerFeatures lf : FeatureExtractor.of(w.graph()).extract(1, w.phase())) {
                if (lf.executes()) {
                    int r = w.graph().repeats(lf.layer());
                    f += r;
                    b += lf.flopsBwd() > 0 || lf.bytesBwd() > 0 ? r : 0;
                }
            }
            return new OperatorCount(f, b);
        });
        return (c.forward() + (w.phase() == Phase.TRAIN ? c.backward() : 0)) * w.parallelism().microBatches();
    }


    // ---------------------------------------------------------------------------------------------------- eager

    private static StageCost eager(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, Topology given, double singleTotal, EagerModel eagerModel, List<String> notes) {
        Topology topo = given.scaleUp();
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
        List<LayerFeatures> fs = FeatureExtractor.of(g).extract(perMicro.batch(), w.phase());
        double residualBytes = 0;
        for (LayerFeatures lf : fs) {
            if (lf.family() == OpFamily.SHAPE) {
                continue;
            }
            LayerFeatures f = lf;
            if (blocks.isPresent()) {
                Blocks b = blocks.get();
                LayerRole.Region region = g.role(lf.layer()).region();
                // a traced graph's roles say where a layer sits, its output's width whether it is on the stream
                boolean residual = lf.outputElements() > 0 && outputLastDim(g, lf.layer()) == b.hiddenSize()
                        && lf.family() != OpFamily.DENSE;
                if (region == LayerRole.Region.BLOCK && residual) {
                    residualBytes = Math.max(residualBytes, outputBytes(g, lf.layer(), perMicro.batch()));
                }
                boolean sharded = (region == LayerRole.Region.BLOCK && !residual)
                        || (region == LayerRole.Region.EPILOGUE && lf.family() == OpFamily.DENSE);
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
            terms.add(new StageCost.Term("pipeline hand-offs", StageCost.TermKind.COMMUNICATION, pp));
        }
        if (par.data() > 1 && train) {
            // PyTorch keeps FP32 parameters and gradients under autocast
            double bytes = EAGER_PARAMETER_BYTES * g.parameterCount() / (par.tensor() * par.pipeline());
            int ranksPerNode = dataRanksPerNode(par, topo);
            double allReduce = communication.get().allReduceMillis(device, topo, par.data(), ranksPerNode, bytes);
            double bucket = communication.get().allReduceMillis(device, topo, par.data(), ranksPerNode,
                    Math.min(bytes, Collectives.BUCKET_BYTES));
            double exposed = Math.max(allReduce - bwd, bucket);
            comm += exposed;
            terms.add(new StageCost.Term("allreduce", StageCost.TermKind.COMMUNICATION, exposed));
        }
        double gpu = par.ranks() == 1 && par.microBatches() == 1 ? singleTotal : fwd + bwd;
        double paced = eagerModel.millis(gpu, operators(w));
        if (paced > gpu) {
            terms.add(new StageCost.Term("host dispatch", StageCost.TermKind.OVERHEAD, paced - gpu));
        }
        double total = paced + (par.ranks() == 1 && par.microBatches() == 1 ? 0 : comm);
        return StageCost.withTotal(layerMillis, families, terms, total)
                .withMemory(eagerMemory(w, fs, perMicro.batch()), notes);
    }

    /**
     * An eager job's memory per device: FP32 weights, and in training their gradients and two optimizer moments
     * (Adam's; SGD with momentum holds one), divided over tensor and pipeline ranks; activations: in training every
     * executed layer's output (views allocate nothing) kept for the backward pass, an upper bound (PyTorch frees what
     * no gradient needs) (of one micro-batch, times the stages in flight), in inference the
     * largest layer's inputs and outputs; plus the runtime's own.
     */
    private static double eagerMemory(Workload w, List<LayerFeatures> fs, long microBatch) {
        Parallelism par = w.parallelism();
        double scale = w.precision().activationBytes() / 4.0;
        double weights = EAGER_PARAMETER_BYTES * w.graph().parameterCount() / (par.tensor() * par.pipeline());
        double states = w.phase() == Phase.TRAIN ? 3 * weights : 0;
        double act = 0;
        for (LayerFeatures f : fs) {
            if (!f.executes() || f.family() == OpFamily.VIEW) {
                continue;   // views and shape arithmetic allocate nothing
            }
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

    /**
     * The topology one of several concurrent groups sees: a group with {@code ranksPerNode} ranks on each node shares
     * the node's network with the {@code gpusPerNode / ranksPerNode} other groups that run the same collective at
     * once (one per tensor-parallel rank), so it gets their share of the adapters.
     */
    static Topology sharedNetwork(Topology topo, int ranksPerNode) {
        int groups = Math.max(1, topo.gpusPerNode() / Math.max(1, ranksPerNode));
        if (groups == 1) {
            return topo;
        }
        return new Topology(topo.gpusPerNode(), topo.link(), topo.intraNodeGBps(), topo.interNodeGbps() / groups,
                topo.interNodeLatencyUs(), topo.assumed());
    }

    /** Data-parallel ranks sharing a node when ranks are placed tensor-first, then data, then pipeline. */
    static int dataRanksPerNode(Parallelism par, Topology topo) {
        return Math.max(1, Math.min(par.data(), topo.gpusPerNode() / par.tensor()));
    }

    // ------------------------------------------------------------------------------------------------- megatron

    /**
     * The uncalibrated terms of a Megatron iteration and its memory per device (see the class comment): per
     * micro-batch, each layer's forward and backward time with its tensor-parallel shard and recomputation; per stage
     * {@code L/p} layers, the embedding on the first, the head on the last; the 1F1B schedule's {@code (m − 1)·T_max +
     * Σ_s T_s} (fill and drain {@code v}-fold shorter when interleaved); hand-offs, data-parallel reduction and the
     * optimizer step.
     */
    public static MegatronTerms megatronTerms(Workload w, DeviceLayerCost layers,
            Optional<CommunicationModel> communication, Device device, Topology given) {
        // an NVLink domain larger than a node (NVL72) is one node to the collectives
        Topology topo = given.scaleUp();
        TransformerShape ts = w.graph().transformer().orElseThrow();
        Parallelism par = w.parallelism();
        ModelGraph g = w.graph();
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
        LayerParts lp = LAYER_PARTS.get(g, new PartsKey(layers, device, prec, w.phase(), rc, b, t, sp),
                () -> layerParts(g, layers, device, prec, w.phase(), rc, b, t, sp));
        double[][] part = new double[3][];
        for (int k = 0; k < 3; k++) {
            part[k] = lp.part()[k].clone();
        }
        List<double[]> dense = lp.dense();
        if (t > 1) {
            double bytes = (double) b * ts.seq() * ts.hidden() * actBytes;
            int perNode = Math.min(t, topo.gpusPerNode());
            double one = sp ? 2 * communication.get().reduceScatterMillis(device, topo, t, perNode, bytes)
                    : communication.get().allReduceMillis(device, topo, t, perNode, bytes);
            int perLayer = (train ? 4 : 2) + (rc == Recompute.FULL ? 2 : 0);
            part[0][2] += perLayer * one * ts.layers();
            part[1][2] += (train ? 2 : 1) * one;
        }
        // the stages: the most loaded has ceil(L/p) layers; the first holds the prologue, the last the epilogue
        double share = Math.ceil((double) ts.layers() / p) / ts.layers();
        double[] first = add(scale(part[0], share), part[1]);
        double[] last = add(scale(part[0], share), part[2]);
        boolean maxIsFirst = total(first) >= total(last);
        // how much of each part's per-micro-batch time lies on the critical path
        double[] weight = new double[3];
        for (int k = 0; k < 3; k++) {
            double inMax = p == 1 ? 1 : k == 0 ? share : (k == 1) == maxIsFirst ? 1 : 0;
            weight[k] = (m - 1) * inMax + 1.0 / v + inMax * (1 - 1.0 / v);
        }
        MegatronTerms.Builder out = MegatronTerms.builder();
        for (double[] x : dense) {
            double wgt = weight[(int) x[0]];
            out.contraction(ExecutionTerm.DENSE, x[1] * wgt, x[2] * wgt);
        }
        double other = 0;
        double tensor = 0;
        for (int k = 0; k < 3; k++) {
            other += part[k][1] * weight[k];
            tensor += part[k][2] * weight[k];
        }
        double steps = Math.ceil((double) ts.layers() / p) * (m - 1 + p);
        double sends = 0;
        double pipeline = 0;
        if (p > 1) {
            boolean across = (long) t * d >= topo.gpusPerNode() && (long) par.ranks() > topo.gpusPerNode();
            double bytes = (double) b * ts.seq() * ts.hidden() * actBytes / t;
            sends = (train ? 2 : 1) * (m + p - 1) * v;
            pipeline = sends * communication.get().sendMillis(device, topo, across, bytes);
        }
        double stageParams = stageParameters(g, ts, t, p);
        double data = 0;
        if (train && d > 1) {
            double gradBytes = prec.gradientReduceBytes();
            int perNode = dataRanksPerNode(par, topo);
            data = communication.get().allReduceMillis(device, sharedNetwork(topo, perNode), d, perNode,
                    stageParams * gradBytes) * (par.zeroStage() == 3 ? 2 : 1);
        }
        double optimizer = train ? 1e3 * stageParams / (par.zeroStage() >= 1 ? d : 1) * prec.optimizerTrafficBytes()
                / device.bytesPerSecond() : 0;
        return out.add(ExecutionTerm.OTHER, other).add(ExecutionTerm.TENSOR_COMM, tensor)
                .add(ExecutionTerm.LAYER_STEP, steps).add(ExecutionTerm.SEND, sends)
                .add(ExecutionTerm.PIPELINE_COMM, pipeline).add(ExecutionTerm.DATA_COMM, data)
                .add(ExecutionTerm.OPTIMIZER, optimizer).build();
    }

    /** Per micro-batch, the layers' parts and contractions of one configuration (what layouts of it share). */
    private record LayerParts(double[][] part, List<double[]> dense) {
    }

    /** Everything a {@link LayerParts} depends on besides the graph (the layer model by identity). */
    private record PartsKey(DeviceLayerCost layers, Device device, Precision precision, Phase phase,
            Recompute recompute, int microBatch, int tensor, boolean sequenceParallel) {
        @Override
        public boolean equals(Object o) {
            return o instanceof PartsKey k && k.layers == layers && k.device.equals(device) && k.precision == precision
                    && k.phase == phase && k.recompute == recompute && k.microBatch == microBatch
                    && k.tensor == tensor && k.sequenceParallel == sequenceParallel;
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(System.identityHashCode(layers), device, precision, phase, recompute,
                    microBatch, tensor, sequenceParallel);
        }
    }

    /** Layer parts per graph and configuration: a layout search asks for the same ones again and again. */
    private static final GraphCache<PartsKey, LayerParts> LAYER_PARTS = new GraphCache<>(256);

    /**
     * Per micro-batch of {@code b} sequences: by part (0 the blocks, all their repeats; 1 the prologue; 2 the
     * epilogue) the contractions', the other layers' and (later) the collectives' time, and per contraction its part,
     * its predicted time and its floor at the sustained ceiling of the peak.
     */
    private static LayerParts layerParts(ModelGraph g, DeviceLayerCost layers, Device device, Precision prec,
            Phase phase, Recompute rc, int b, int t, boolean sp) {
        boolean train = phase == Phase.TRAIN;
        double peak = device.peakFlopsPerSecond(prec, true);
        double ceiling = layers.sustainedPeakFraction(device, prec);
        double[][] part = new double[3][3];
        List<double[]> dense = new ArrayList<>();
        for (LayerFeatures lf : FeatureExtractor.of(g).extract(b, phase)) {
            if (lf.family() == OpFamily.SHAPE) {
                continue;
            }
            LayerRole role = g.role(lf.layer());
            int at = part(role.region());
            boolean sharded = t > 1 && (role.region() == LayerRole.Region.BLOCK ? !role.kind().residualStream() || sp
                    : dense(lf.family()) || lf.family() == OpFamily.EMBEDDING || role.kind() == LayerRole.Kind.LOSS);
            LayerFeatures f = sharded ? scaled(lf, t) : lf;
            boolean again = role.region() == LayerRole.Region.BLOCK && (rc == Recompute.FULL
                    || rc == Recompute.SELECTIVE && role.kind().attentionCore());
            double fwd = layers.layerMillis(f, device, prec, false);
            double bwd = train ? layers.layerMillis(f, device, prec, true) : 0;
            int r = g.repeats(lf.layer());
            double time = (fwd * (again ? 2 : 1) + bwd) * r;
            if (dense(lf.family())) {
                double flops = (f.flopsFwd() * (again ? 2 : 1) + (train ? f.flopsBwd() : 0)) * r;
                dense.add(new double[] {at, time, 1e3 * flops / (ceiling * peak)});
                part[at][0] += time;
            } else {
                part[at][1] += time;
            }
        }
        return new LayerParts(part, List.copyOf(dense));
    }

    /** The parameters of the most loaded stage, divided over the tensor-parallel ranks where they are sharded. */
    private static double stageParameters(ModelGraph g, TransformerShape ts, int t, int p) {
        double[] params = new double[3];
        for (int i = 0; i < g.size(); i++) {
            LayerRole role = g.role(i);
            int at = part(role.region());
            boolean replicated = role.region() == LayerRole.Region.BLOCK ? role.kind().residualStream()
                    : role.kind() == LayerRole.Kind.NORM || role.kind() == LayerRole.Kind.POSITION;
            params[at] += (double) g.parameterCount(i) * g.repeats(i) / (replicated ? 1 : t);
        }
        if (p == 1) {
            return params[0] + params[1] + params[2];
        }
        double share = Math.ceil((double) ts.layers() / p) / ts.layers();
        return params[0] * share + Math.max(params[1], params[2]);
    }

    private static StageCost megatron(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, Topology topo, MegatronModel model, List<String> notes) {
        MegatronTerms terms = megatronTerms(w, layers, communication, device, topo);
        double total = model.millis(terms);
        // the layers' breakdown: the compute part, shared in proportion to each layer's calibrated GPU time
        ModelGraph g = w.graph();
        double gpu = model.gpu(terms);
        double computeScale = gpu > 0 ? model.compute(terms) / gpu : 0;
        double[] perLayer = new double[g.size()];
        OpFamily[] families = new OpFamily[g.size()];
        List<LayerFeatures> fs = FeatureExtractor.of(g).extract(Math.max(1, (int) Math.ceil((double) w.batch()
                / w.parallelism().microBatches())), w.phase());
        double denseCal = model.dense(terms);
        double otherCal = model.coefficient(ExecutionTerm.OTHER) * terms.value(ExecutionTerm.OTHER);
        double denseRaw = 0;
        double otherRaw = 0;
        for (LayerFeatures lf : fs) {
            if (lf.family() == OpFamily.SHAPE || !lf.executes()) {
                continue;
            }
            double work = (dense(lf.family()) ? lf.flopsFwd() + lf.flopsBwd() : lf.bytesFwd() + lf.bytesBwd())
                    * g.repeats(lf.layer());
            perLayer[lf.layer()] = work;
            families[lf.layer()] = lf.family();
            if (dense(lf.family())) {
                denseRaw += work;
            } else {
                otherRaw += work;
            }
        }
        for (int i = 0; i < perLayer.length; i++) {
            if (families[i] != null) {
                perLayer[i] *= computeScale * (dense(families[i]) ? (denseRaw > 0 ? denseCal / denseRaw : 0)
                        : (otherRaw > 0 ? otherCal / otherRaw : 0));
            }
        }
        List<StageCost.Term> terms2 = new ArrayList<>();
        addTerm(terms2, "tensor-parallel", StageCost.TermKind.COMMUNICATION, computeScale * calibrated(model, terms,
                ExecutionTerm.TENSOR_COMM));
        addTerm(terms2, "expert-parallel", StageCost.TermKind.COMMUNICATION, computeScale * calibrated(model, terms,
                ExecutionTerm.EXPERT_COMM));
        addTerm(terms2, "context-parallel", StageCost.TermKind.COMMUNICATION, computeScale * calibrated(model,
                terms, ExecutionTerm.CONTEXT_COMM));
        addTerm(terms2, "host dispatch", StageCost.TermKind.OVERHEAD, 0);
        addTerm(terms2, "pipeline", StageCost.TermKind.COMMUNICATION, calibrated(model, terms, ExecutionTerm.SEND)
                + calibrated(model, terms, ExecutionTerm.PIPELINE_COMM));
        addTerm(terms2, "data-parallel", StageCost.TermKind.COMMUNICATION, calibrated(model, terms,
                ExecutionTerm.DATA_COMM));
        addTerm(terms2, "optimizer", StageCost.TermKind.OVERHEAD, calibrated(model, terms, ExecutionTerm.OPTIMIZER));
        addTerm(terms2, "fixed", StageCost.TermKind.OVERHEAD, calibrated(model, terms, ExecutionTerm.FIXED));
        double parts = 0;
        for (double x : perLayer) {
            parts += x;
        }
        for (StageCost.Term x : terms2) {
            parts += x.millis();
        }
        // what the smooth max adds beyond the GPU's parts: the host's dispatch
        double host = total - parts;
        if (host > 1e-9 * total) {
            terms2.removeIf(x -> x.name().equals("host dispatch"));
            terms2.add(new StageCost.Term("host dispatch", StageCost.TermKind.OVERHEAD, host));
        }
        double memory = megatronMemory(w);
        return StageCost.withTotal(perLayer, families, terms2, total).withMemory(memory, notes);
    }

    /** A term's calibrated time: its coefficient times its value. */
    private static double calibrated(MegatronModel model, MegatronTerms terms, ExecutionTerm term) {
        return model.coefficient(term) * terms.value(term);
    }

    private static void addTerm(List<StageCost.Term> out, String name, StageCost.TermKind kind, double ms) {
        if (ms > 0) {
            out.add(new StageCost.Term(name, kind, ms));
        }
    }

    /** A Megatron job's memory per device, bytes (see below). */
    public static double megatronMemory(Workload w) {
        ModelGraph g = w.graph();
        TransformerShape ts = g.transformer().orElseThrow();
        return megatronMemory(w, ts, stageParameters(g, ts, w.parallelism().tensor(), w.parallelism().pipeline()), Math.max(1, (int) Math.ceil((double) w.batch()
                        / w.parallelism().microBatches())));
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
        double weightBytes = prec.weightBytes();
        double gradBytes = prec.gradientBytes();
        double stateBytes = prec.stateBytes();
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

    /** The part of the per-micro-batch costs a region adds to: 0 the blocks, 1 the prologue, 2 the epilogue. */
    private static int part(LayerRole.Region region) {
        return switch (region) {
            case BLOCK -> 0;
            case PROLOGUE -> 1;
            case EPILOGUE -> 2;
        };
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
