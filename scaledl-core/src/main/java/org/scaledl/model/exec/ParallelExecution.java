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
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.TensorCoreAlignment;
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
 * <p><b>Megatron</b> (a transformer built from its configuration, {@link TransformerShape}): the schedule of
 * Megatron-LM with tensor, pipeline, data, context and expert parallelism, in {@link MegatronExecution}; each part of
 * its iteration is a named term ({@link ExecutionTerm}) that the device stage scales by a coefficient fitted on
 * measured iterations (ScaleDL's way: the layer costs' scale learnt from whole-iteration times).
 */
public final class ParallelExecution {
    /** Bytes of a parameter (and of its gradient) in eager PyTorch: FP32, whatever autocast computes in. */
    static final double EAGER_PARAMETER_BYTES = 4;

    /**
     * The bytes a parameter counts in a layer's features (the graphs' FP32 tensors, as {@code FeatureExtractor}
     * counts them): what splitting a layer's weights from its activations takes them to be.
     */
    static final double FEATURE_WEIGHT_BYTES = 4.0;
    /** Memory every process holds besides its tensors (CUDA context, library workspaces, NCCL buffers), bytes. */
    public static final double RUNTIME_BYTES = 1.0 * (1L << 30);

    private ParallelExecution() {
    }

    /**
     * Refuses a parallel job this execution model cannot cost: what {@link #checkJob} refuses, and several ranks
     * without a communication model.
     *
     * @throws IllegalArgumentException naming what is missing
     */
    public static void check(Workload w, Optional<CommunicationModel> communication) {
        checkJob(w);
        Parallelism par = w.parallelism();
        if (par.ranks() > 1 && communication.isEmpty()) {
            throw new IllegalArgumentException("this device predictor has no communication model (fit it with "
                    + "collective measurements: LayerCost.device(...).withCollectives) to predict " + par);
        }
    }

    /**
     * Refuses a job whose settings do not fit its model and device, whatever predicts it: a precision the GPU has no
     * matrix units for, tensor parallelism without the graph's block structure, a layout that does not divide a
     * transformer ({@link MegatronExecution#check}), context or expert parallelism, an expert imbalance or LoRA on an
     * imported graph.
     *
     * @throws IllegalArgumentException naming what does not fit and what would
     */
    public static void checkJob(Workload w) {
        Parallelism par = w.parallelism();
        w.device().ifPresent(d -> checkPrecision(d, w.precision(), w.phase()));
        if (par.tensor() > 1 && w.graph().blocks().isEmpty()) {
            throw new IllegalArgumentException("tensor parallelism needs the graph's block structure (which layers "
                    + "are the repeated blocks and the residual stream's width), which " + w.graph().name()
                    + " does not carry; graphs of torch.fx traces (FxTraceReader) and of transformer "
                    + "configurations (TransformerSpec) do");
        }
        if (w.graph().transformer().isPresent()) {
            MegatronExecution.check(w);
        } else if (!w.transformerOnlySettings().isEmpty()) {
            throw new IllegalArgumentException(String.join(", ", w.transformerOnlySettings()) + ": only a "
                    + "transformer built from its configuration (--transformer config.json) carries "
                    + (w.transformerOnlySettings().size() == 1 ? "it" : "them") + "; " + w.graph().name()
                    + " is an imported graph");
        }
    }

    /**
     * Refuses a precision a device cannot run (BF16 without BF16 units, FP8 and FP4 without FP8 units), naming what it
     * runs.
     *
     * @throws IllegalArgumentException for such a precision
     */
    public static void checkPrecision(Device d, Precision precision) {
        if (d.runs(precision).isEmpty()) {
            throw new IllegalArgumentException(d.name() + " cannot run " + precision.label() + ": it has no "
                    + precision.peakColumn().toUpperCase(java.util.Locale.ROOT) + " matrix units (it runs "
                    + runnable(d) + ")");
        }
    }

    /**
     * {@link #checkPrecision(Device, Precision)}, and in training a low-precision recipe the GPU has no matrix units
     * of its own for (MXFP8 or NVFP4 on a Hopper GPU): Transformer Engine trains those recipes only where their
     * units are (it refuses them elsewhere), so the job is refused naming the recipe the GPU runs; inference keeps
     * the fallback, with its note, as serving engines run such weights on older units.
     *
     * @throws IllegalArgumentException for such a precision
     */
    public static void checkPrecision(Device d, Precision precision, org.scaledl.workload.Phase phase) {
        checkPrecision(d, precision);
        Precision runs = d.runs(precision).orElseThrow();
        if (phase == org.scaledl.workload.Phase.TRAIN && runs != precision && precision.lowPrecisionLinear()) {
            throw new IllegalArgumentException(d.name() + " cannot train " + precision.label() + ": it has no "
                    + precision.peakColumn().toUpperCase(java.util.Locale.ROOT) + " matrix units, and Transformer "
                    + "Engine trains that recipe only on GPUs that have them (the recipes it trains: " + runs.label()
                    + (runs == Precision.FP8_BLOCK ? ", or fp8, per-tensor scaling, which every GPU with FP8 units "
                    + "trains" : "") + ")");
        }
    }

    /**
     * The precisions a device runs on their own units, then those it runs in another: {@code fp32, fp16; tf32 as
     * fp32}.
     */
    static String runnable(Device d) {
        List<String> own = new ArrayList<>();
        List<String> other = new ArrayList<>();
        for (Precision p : Precision.values()) {
            Optional<Precision> r = d.runs(p);
            if (r.isPresent() && r.get() == p) {
                own.add(p.label());
            } else if (r.isPresent()) {
                other.add(p.label() + " as " + r.get().label());
            }
        }
        return String.join(", ", own) + (other.isEmpty() ? "" : "; " + String.join(", ", other));
    }

    /**
     * Whether a job of {@code ranks} GPUs reaches beyond one node or NVLink domain, where the network between nodes
     * (the part of a topology a job may leave to the device's standard system) carries its collectives; inside one,
     * an assumed network changes nothing and is not noted.
     */
    static boolean crossesNodes(Topology t, int ranks) {
        return ranks > Math.max(t.gpusPerNode(), t.nvlinkDomain());
    }

    /**
     * Which of a pipeline's hops between neighbouring model chunks leave a node (its NVLink domain where that is
     * larger: a rack-scale system's GPUs send to each other over NVLink across trays), in Megatron's rank order (a
     * stage's {@code stageRanks} ranks adjacent, the pipeline slowest): {@code stages × chunks − 1} hops, chunk {@code k} on
     * stage {@code k mod stages} (interleaving wraps from the last stage to the first). A hop pairs each rank of one
     * stage with the rank {@code stageRanks} further; it leaves the node where any pair does. Where a stage fills a
     * node or more every hop leaves it; inside one node none does; where several stages share a node, the hops at its
     * edges do.
     *
     * @return {@code {hops, hops that leave a node}}
     */
    static int[] pipelineHops(Topology t, long stageRanks, int stages, int chunks) {
        int hops = stages * chunks - 1;
        int leaving = 0;
        long node = Math.max(t.gpusPerNode(), t.nvlinkDomain());
        for (int k = 0; k < hops; k++) {
            long from = (long) (k % stages) * stageRanks;
            long to = (long) ((k + 1) % stages) * stageRanks;
            boolean leaves = stageRanks >= node;
            for (long r = 0; r < stageRanks && !leaves; r++) {
                leaves = (from + r) / node != (to + r) / node;
            }
            leaving += leaves ? 1 : 0;
        }
        return new int[] {hops, leaving};
    }

    /** The topology a workload runs on: its own, or the standard server of its device (noted where it matters). */
    static Topology topology(Workload w, Device d, List<StageCost.Note> notes) {
        if (w.topology().isPresent()) {
            Topology t = w.topology().get();
            int ranks = w.parallelism().ranks();
            boolean beyond = crossesNodes(t, ranks);
            if (t.assumed() && beyond) {
                notes.add(StageCost.Note.assumed("topology partly assumed from the device: " + t.describe()
                        + " (give --gpus-per-node and --inter-node-gbps both)"));
            }
            // the device's standard system, what the given one is compared with
            Topology std = Topology.assumedFor(d);
            int standard = std.nvlinkDomain();
            if (beyond && standard > std.gpusPerNode() && standard > t.nvlinkDomain()
                    && t.link() != Topology.Link.PCIE) {
                // a rack-scale device (an NVL72) given a topology whose domain is a node: its collectives beyond the
                // node are predicted over the network, which a rack would carry over NVLink
                notes.add(StageCost.Note.unusual(String.format(Locale.ROOT, "an NVLink domain of %d GPUs on %s, "
                        + "whose standard system joins %d: the collectives beyond %d GPUs are predicted over the "
                        + "network (give --nvlink-domain %d, in Java Topology.of(..., %d), where the GPUs sit in "
                        + "such a rack)", t.nvlinkDomain(), d.name(), standard, t.nvlinkDomain(), standard,
                        standard)));
            }
            if (t.nvlinkDomain() > t.gpusPerNode() && t.nvlinkDomain() > standard) {
                // a rack-scale domain the device's standard system does not have (an NVLink Switch system) is taken
                // as given, but said: its collectives run at NVLink's bandwidth across it
                notes.add(StageCost.Note.unusual(String.format(Locale.ROOT, "an NVLink domain of %d GPUs, larger "
                        + "than the %d of %s's standard system: the collectives inside it are predicted at NVLink "
                        + "bandwidth (give --nvlink-domain only where the machine has NVLink switches across its "
                        + "nodes)", t.nvlinkDomain(), standard, d.name())));
            }
            if (ranks > 1 && t.link() != Topology.Link.PCIE && std.link() == Topology.Link.PCIE) {
                // NVLink given to a GPU that has none (a PCIe card's own topology is PCIe): predicted as given
                notes.add(StageCost.Note.unusual(String.format(Locale.ROOT, "an NVLink topology (%.0f GB/s between "
                        + "the GPUs of a node) for %s, which has no NVLink (PCIe, %.0f GB/s, in its standard system): "
                        + "predicted as given; is the topology another GPU's? (Topology.assumedFor(device) is the "
                        + "device's own)", t.intraNodeGBps(), d.name(), std.intraNodeGBps())));
            } else if (ranks > 1 && t.link() != Topology.Link.PCIE && t.intraNodeGBps() > 1.01 * std.intraNodeGBps()) {
                // a topology faster between GPUs than the device's NVLink: another GPU's (a template's device changed
                // and its topology kept), predicted as given
                notes.add(StageCost.Note.unusual(String.format(Locale.ROOT, "%.0f GB/s between the GPUs of a node, "
                        + "more than %s's NVLink has (%.0f GB/s a GPU, one direction, in its standard system): "
                        + "predicted as given; is it both directions' figure (twice one's), or another GPU's topology? "
                        + "(Topology.assumedFor(device) is the device's own, which Topology.with(...) adjusts)",
                        t.intraNodeGBps(), d.name(), std.intraNodeGBps())));
            }
            double standardPerGpu = std.interNodeGbps() / std.gpusPerNode();
            if (beyond && t.gpusPerNode() > 1 && std.link() != Topology.Link.PCIE
                    && t.interNodeGbps() <= standardPerGpu * 1.01) {
                // a node's network no faster than one of the standard system's adapters: one GPU's figure given for
                // the node's (the network is the node's, all adapters together), or a slow fabric; predicted as given
                notes.add(StageCost.Note.noted(String.format(Locale.ROOT, "the network is %.0f Gb/s a node of %d "
                        + "GPUs, %.0f a GPU, where %s's standard system has %.0f a GPU: predicted as given; if %.0f is "
                        + "each GPU's adapter, the node's is %.0f (--inter-node-gbps and inter_node_gbps are the "
                        + "node's, all adapters together)", t.interNodeGbps(), t.gpusPerNode(),
                        t.interNodeGbps() / t.gpusPerNode(), d.name(),
                        standardPerGpu, t.interNodeGbps(), t.interNodeGbps() * t.gpusPerNode())));
            }
            if (ranks > t.gpusPerNode() && ranks % t.gpusPerNode() != 0) {
                notes.add(StageCost.Note.noted(String.format(Locale.ROOT, "%d GPUs on nodes of %d: the last node "
                        + "holds %d of them", ranks, t.gpusPerNode(), ranks % t.gpusPerNode())));
            } else if (t.nvlinkDomain() > t.gpusPerNode() && ranks > t.nvlinkDomain()
                    && ranks % t.nvlinkDomain() != 0) {
                // (ranks in order fill one domain after another: groups that straddle two cross the network)
                notes.add(StageCost.Note.noted(String.format(Locale.ROOT, "%d GPUs in NVLink domains of %d: the last "
                        + "domain holds %d of them", ranks, t.nvlinkDomain(), ranks % t.nvlinkDomain())));
            }
            return t;
        }
        Topology t = Topology.assumedFor(d);
        boolean rack = t.nvlinkDomain() > t.gpusPerNode();
        // said where the job leaves a node: beyond the NVLink domain the network carries it, inside a rack-scale
        // domain (an NVL72) NVLink across the trays does, which a machine of smaller domains would not have
        if (rack ? w.parallelism().ranks() > t.gpusPerNode() : crossesNodes(t, w.parallelism().ranks())) {
            notes.add(StageCost.Note.assumed("topology assumed from the device's form factor: " + t.describe()
                    + (rack ? " (give --gpus-per-node, --nvlink-domain and --inter-node-gbps; in Java, "
                    + "Workload.Builder.topology)" : " (give --gpus-per-node and --inter-node-gbps)")));
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
        List<StageCost.Note> notes = new ArrayList<>();
        Precision runs = device.runs(w.precision()).orElseThrow();
        if (runs != w.precision()) {
            notes.add(StageCost.Note.noted(device.name() + " has no " + w.precision().label() + " matrix units: its "
                    + "matrix work runs in " + runs.label() + (w.precision().lowPrecisionLinear()
                    ? " (as serving engines fall back; training is refused)" : " (as frameworks fall back)")));
        }
        Topology topo = topology(w, device, notes);
        if (w.graph().transformer().isPresent()) {
            return MegatronExecution.cost(w, layers, communication, device, topo, megatron == null
                    ? MegatronModel.uncalibrated() : megatron, notes);
        }
        return eager(w, layers, communication, device, topo, singleTotal, eager, notes);
    }

    /**
     * The note naming an imported graph's products that take {@link TensorCoreAlignment}'s factor on a GPU with a
     * tensor memory accelerator (the first three, with K, N and the factor, and how many more), with the widths that
     * avoid it; empty where none does. {@code priced}: the features the layer model prices (one GPU's share of each
     * layer), so the note names what is charged.
     */
    static Optional<String> alignmentNote(ModelGraph g, List<LayerFeatures> priced, Device device, Precision runs) {
        if (!device.tensorMemoryAccelerator() || !device.matrixUnits(runs)) {
            return Optional.empty();
        }
        List<String> named = new ArrayList<>();
        int count = 0;
        for (LayerFeatures f : priced) {
            double s = TensorCoreAlignment.slowdown(f, runs, device);
            if (s > 1) {
                if (named.size() < 3) {
                    named.add(String.format(Locale.ROOT, "%s (K %d, N %d: %.2f×)", g.layer(f.layer()).name(),
                            f.inChannels(), f.outChannels(), s));
                }
                count++;
            }
        }
        if (count == 0) {
            return Optional.empty();
        }
        int multiple = TensorCoreAlignment.BYTES / runs.activationBytes();
        return Optional.of(String.format(Locale.ROOT, "%d %s product%s (%s%s) ha%s a reduction length or output width "
                + "that is not a multiple of %d elements (%d bytes), which %s's tensor memory accelerator needs: "
                + "modelled at the time it took on an H200, %.2f× (rows of 4 or 8 bytes) or %.1f× (2 bytes) an "
                + "aligned product's; widths that are multiples of %d (a vocabulary padded to a multiple of 64: "
                + "50,304 for GPT-2's 50,257) avoid this", count, runs.label().toUpperCase(Locale.ROOT),
                count > 1 ? "s" : "", String.join(", ", named), count > named.size()
                        ? String.format(Locale.ROOT, " and %d more", count - named.size()) : "",
                count > 1 ? "ve" : "s", multiple, TensorCoreAlignment.BYTES, device.name(),
                TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN, TensorCoreAlignment.ELEMENT_ALIGNED_SLOWDOWN, multiple));
    }

    /**
     * The note saying how many of an imported graph's convolutions take {@link MemoryFormat}'s factor in a
     * channels-first layout on a GPU whose fast kernels want the channels last, and that channels-last avoids it;
     * empty where none does.
     */
    static Optional<String> memoryFormatNote(ModelGraph g, List<LayerFeatures> priced, Device device, Precision runs,
            MemoryFormat format, boolean train) {
        int count = 0;
        LayerFeatures charged = null;
        for (LayerFeatures f : priced) {
            if (format.slowdown(f, runs, device, false) > 1) {
                count += g.repeats(f.layer());
                charged = f;
            }
        }
        if (charged == null) {
            return Optional.empty();
        }
        String passes = String.format(Locale.ROOT, "%.2f× the forward pass", format.slowdown(charged, runs, device,
                false)) + (train ? String.format(Locale.ROOT, " and %.2f× the backward pass", format.slowdown(charged,
                        runs, device, true)) : "");
        return Optional.of(String.format(Locale.ROOT, "%d %s convolution%s laid out %s (channels first, PyTorch's "
                + "default) on %s: modelled at what that layout took on an H200, %s of the same convolution "
                + "channels-last; --memory-format channels_last (model.to(memory_format=torch.channels_last)) avoids "
                + "this", count, runs.label().toUpperCase(Locale.ROOT), count > 1 ? "s" : "",
                format.label().toUpperCase(Locale.ROOT), device.name(), passes));
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
            Device device, Topology given, double singleTotal, EagerModel eagerModel, List<StageCost.Note> notes) {
        Topology topo = given.scaleUp();
        Parallelism par = w.parallelism();
        boolean train = w.phase() == Phase.TRAIN;
        Precision prec = w.precision();
        Precision runs = device.runs(prec).orElse(prec);
        MemoryFormat format = w.memoryFormat();
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
        List<LayerFeatures> priced = new ArrayList<>(fs.size());
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
            priced.add(f);
            int r = g.repeats(lf.layer());
            double lfwd = layers.layerMillis(f, device, prec, false, format) * k * r;
            double lbwd = train ? layers.layerMillis(f, device, prec, true, format) * k * r : 0;
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
        alignmentNote(g, priced, device, prec).map(StageCost.Note::noted).ifPresent(notes::add);
        memoryFormatNote(g, priced, device, runs, format, train).map(StageCost.Note::noted).ifPresent(notes::add);
        double comm = 0;
        List<StageCost.Term> terms = new ArrayList<>();
        double actScale = prec.activationBytes() / 4.0;
        if (par.tensor() > 1) {
            int passes = train ? 4 : 2;
            double act = (residualBytes > 0 ? residualBytes : 4.0 * perMicro.batch() * blocks.get().hiddenSize())
                    * actScale;
            // ranks in order: a group that straddles nodes has gcd(t, node) of its ranks on a side (as Megatron's)
            double one = communication.get().allReduceMillis(device, topo, par.tensor(),
                    MegatronExecution.ranksPerNode(par.tensor(), topo.gpusPerNode(), par.ranks()), act);
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
            // each micro-batch crosses every hop: those at a node's edge over the network, the others over NVLink
            int[] hops = pipelineHops(topo, (long) par.tensor() * par.data(), par.pipeline(), 1);
            int handOffs = (train ? 2 : 1) * par.microBatches();
            CommunicationModel cm = communication.get();
            double pp = handOffs * (hops[1] * cm.sendMillis(device, topo, true, act * actScale)
                    + (hops[0] - hops[1]) * cm.sendMillis(device, topo, false, act * actScale));
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
        if (par.data() > 1 && par.isDataOnly() && par.microBatches() == 1
                && (long) w.batch() * par.data() <= Integer.MAX_VALUE) {
            // a replica's share of a global batch is never done faster than one GPU doing all of it, divided: the
            // per-sample cost does not fall with a smaller batch (no speed-up beyond the GPUs)
            Workload all = w.toBuilder().batch(w.batch() * par.data()).parallelism(Parallelism.none()).build();
            gpu = Math.max(gpu, layers.predictMillis(all) / par.data());
        }
        double paced = eagerModel.millis(gpu, operators(w));
        // the smooth max's excess over the GPU's time (rounding residue below a billionth is no dispatch cost)
        if (paced - gpu > 1e-9 * paced) {
            terms.add(new StageCost.Term(StageCost.HOST_DISPATCH, StageCost.TermKind.OVERHEAD, paced - gpu));
        }
        double total = paced + (par.ranks() == 1 && par.microBatches() == 1 ? 0 : comm);
        return StageCost.withTotal(layerMillis, families, terms, total)
                .withMemory(eagerMemory(w, fs, perMicro.batch()), notes);
    }

    /**
     * An eager job's memory per device: FP32 weights, and in training their gradients and two optimizer moments
     * (Adam's; SGD with momentum holds one), divided over tensor and pipeline ranks; activations: in training the
     * tensors autograd keeps for the backward pass, each once however many layers keep it (of one micro-batch, times
     * the stages in flight; {@link #savedForBackward}), in inference the largest layer's inputs and outputs; plus the
     * runtime's own.
     */
    private static double eagerMemory(Workload w, List<LayerFeatures> fs, long microBatch) {
        Parallelism par = w.parallelism();
        double scale = w.precision().activationBytes() / 4.0;
        double weights = EAGER_PARAMETER_BYTES * w.graph().parameterCount() / (par.tensor() * par.pipeline());
        double states = w.phase() == Phase.TRAIN ? 3 * weights : 0;
        double act = 0;
        if (w.phase() == Phase.TRAIN) {
            act = savedForBackward(w.graph(), fs, microBatch) * scale / (par.tensor() * par.pipeline())
                    * Math.min(par.microBatches(), par.pipeline());
        } else {
            for (LayerFeatures f : fs) {
                if (f.executes() && f.family() != OpFamily.VIEW) {
                    act = Math.max(act, f.bytesRead() + f.bytesWritten());
                }
            }
            act *= scale;
        }
        return weights + states + act + RUNTIME_BYTES;
    }

    /**
     * The activation bytes autograd keeps for the backward pass of one micro-batch, as PyTorch's operators save them:
     * a contraction (convolution, GEMM, product) its activation inputs, a normalisation or GELU its input, ReLU,
     * sigmoid, tanh and softmax their output (which the next layer often keeps as its input, and torchvision's ReLUs
     * run in place on the normalisation's output), max pooling its input and the indices, a product of two
     * activations both, dropout its mask; sums, average pooling, views and copies nothing. A tensor kept by several
     * layers counts once. Shapes the graph does not know count as nothing.
     */
    static double savedForBackward(ModelGraph g, List<LayerFeatures> fs, long batch) {
        java.util.Map<String, Double> kept = new java.util.HashMap<>();
        double extra = 0;   // bytes kept beside the tensors: max pooling's indices, dropout's masks
        for (LayerFeatures f : fs) {
            if (!f.executes() || f.family() == OpFamily.VIEW || f.family() == OpFamily.SHAPE) {
                continue;
            }
            org.scaledl.graph.Layer l = g.layer(f.layer());
            double r = g.repeats(f.layer());
            List<String> saved;
            switch (l.opType()) {
                case "Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum", "Mul", "Div" -> saved = l.inputs();
                case "BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                        "Gelu", "Erf", "SimplifiedLayerNormalization", "RMSNormalization" ->
                        saved = l.inputs().isEmpty() ? List.of() : List.of(l.inputs().get(0));
                case "Relu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Elu", "HardSigmoid" -> saved = l.outputs();
                case "MaxPool" -> {
                    saved = l.inputs().isEmpty() ? List.of() : List.of(l.inputs().get(0));
                    extra += 8.0 * f.outputElements() * r;   // int64 indices
                }
                case "Dropout" -> {
                    saved = List.of();
                    extra += f.outputElements() * r;   // a byte mask
                }
                case "Add", "Sub", "Sum", "AveragePool", "GlobalAveragePool", "ReduceMean", "Concat", "Split",
                        "Slice", "Gather", "Transpose", "Cast", "Identity", "Pad" -> saved = List.of();
                default -> saved = l.inputs();
            }
            for (String x : saved) {
                org.scaledl.graph.TensorInfo t = g.tensor(x).orElse(null);
                if (t != null && (t.role() == org.scaledl.graph.TensorRole.ACTIVATION
                        || t.role() == org.scaledl.graph.TensorRole.INPUT)) {
                    kept.merge(x, (double) t.bytes(batch) * r, Math::max);
                }
            }
        }
        double sum = extra;
        for (double b : kept.values()) {
            sum += b;
        }
        return sum;
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
        return share(f, k, k, k);
    }

    /**
     * One GPU's share of a layer: its tokens' work divided {@code tokens} ways (FLOPs, activations' bytes, outputs),
     * its weights {@code weights} ways (the weights' bytes read forward, read and written as gradients backward, its
     * parameters), its output columns {@code columns} ways. Tensor parallelism splits all three; context parallelism
     * only the tokens; expert parallelism the experts' weights without their work (balanced routing moves tokens,
     * not work).
     */
    public static LayerFeatures share(LayerFeatures f, int tokens, int weights, int columns) {
        if (tokens == 1 && weights == 1 && columns == 1) {
            return f;
        }
        double paramBytes = FEATURE_WEIGHT_BYTES * f.params();
        double read = Math.max(0, f.bytesRead() - paramBytes) / tokens + paramBytes / weights;
        double bwdWeights = Math.min(f.bytesBwd(), 2 * paramBytes);
        double bwd = (f.bytesBwd() - bwdWeights) / tokens + bwdWeights / weights;
        return new LayerFeatures(f.layer(), f.family(), f.flopsFwd() / tokens, f.flopsBwd() / tokens, read,
                f.bytesWritten() / tokens, bwd, f.params() / weights, f.outputElements() / tokens, f.kernel(),
                f.stride(), f.groups(), f.inChannels(), f.family() == OpFamily.DENSE ? Math.max(1,
                        f.outChannels() / columns) : f.outChannels(), f.steps());
    }

    /**
     * The share of a row-parallel product on one of {@code split} ranks that split its reduction (Megatron's output
     * projections under tensor parallelism), with {@code rows} more ways its rows are split (context parallelism):
     * each rank multiplies its slice of the input's columns by its rows of the weights, {@code K/split}, into the
     * whole output width, a partial sum the all-reduce adds up; so its work, input and weights divide by the split, its
     * output and the output's gradient only by {@code rows}. The backward pass's activation traffic is shared
     * between the input's side and the output's in proportion to their widths {@code K} and {@code N} (exact for a
     * linear layer, whose backward pass moves {@code M·K} and {@code M·N} elements besides the weights).
     */
    public static LayerFeatures shareReduction(LayerFeatures f, int split, int rows) {
        if (split == 1 && rows == 1) {
            return f;
        }
        int work = split * rows;
        double paramBytes = FEATURE_WEIGHT_BYTES * f.params();
        double input = Math.max(0, f.bytesRead() - paramBytes);
        double read = input / work + paramBytes / split;
        double bwdWeights = Math.min(f.bytesBwd(), 2 * paramBytes);
        double activations = f.bytesBwd() - bwdWeights;
        double widths = (double) f.inChannels() + f.outChannels();
        double inputSide = widths > 0 ? activations * f.inChannels() / widths : activations;
        double bwd = inputSide / work + (activations - inputSide) / rows + bwdWeights / split;
        return new LayerFeatures(f.layer(), f.family(), f.flopsFwd() / work, f.flopsBwd() / work, read,
                f.bytesWritten() / rows, bwd, f.params() / split, f.outputElements() / rows, f.kernel(), f.stride(),
                f.groups(), Math.max(1, f.inChannels() / split), f.outChannels(), f.steps());
    }

}
