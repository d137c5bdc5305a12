package org.scaledl.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import org.scaledl.Checks;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.exec.MegatronExecution;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Every valid way to train a transformer on a number of GPUs, ranked by predicted iteration time: tensor-parallel
 * degrees that divide the heads and the key/value heads (every layer's: Megatron core gives each rank whole query
 * groups) and stay inside an NVLink domain, context-parallel degrees that split the sequence
 * (where every attention core is fused: Megatron's unfused attention refuses context parallelism),
 * pipeline degrees that divide the rest and the layers, expert-parallel degrees (mixtures of experts) folded into
 * data x context x tensor parallelism as Megatron does (experts whole on their ranks, and without expert parallelism
 * split over the tensor ranks too), the data-parallel degree that remains, micro-batch sizes
 * that divide the global batch over the replicas, sequence parallelism, ZeRO stages 0, 1 and (without a pipeline) 3
 * (or the one {@link #zeroStage} names; stage 1 alone with {@link #fp8ParamGather} or the weights' gather after the
 * optimizer step, {@link #gradReduce}),
 * and the interleaved schedule (every count of chunks per stage up to {@value #MAX_VIRTUAL_STAGES} that the layers
 * divide into, where the micro-batches allow). Each layout takes the least recomputation that makes it fit
 * ({@link Recompute#AUTO}); layouts that do not fit even so are kept but marked and ranked after those that fit.
 *
 * <pre>{@code
 * List<LayoutSearch.Layout> best = new LayoutSearch(gpuPredictor, spec.graph(2048), a100, 512, 1536)
 *         .topology(Topology.of(8, Topology.Link.NVSWITCH, 300, 1600)).precision(Precision.FP16).search();
 * Prediction again = gpuPredictor.predict(best.get(0).workload());   // the same time and memory
 * }</pre>
 *
 * <p>A layout costs the predictor's fast path (the per-layer costs of a configuration are computed once and shared
 * by the layouts that differ only in pipeline, data parallelism and schedule).
 */
public final class LayoutSearch {
    /** The largest micro-batch searched. */
    static final int MAX_MICRO_BATCH = 64;
    /** The largest context-parallel degree searched. */
    public static final int MAX_CONTEXT = 64;
    /** The most interleaved chunks a pipeline stage searched (every count the layers divide into, up to this). */
    static final int MAX_VIRTUAL_STAGES = 16;

    private final RuntimePredictor predictor;
    private final ModelGraph graph;
    private final Device device;
    private final int gpus;
    private final int globalBatch;
    private Topology topology;
    private Precision precision = Precision.FP16;
    private int loraRank;
    private boolean fp8ParamGather;
    private int documentTokens;
    /** The gradient buffers as given (16 bits or FP32), or null: the precision's default. */
    private Boolean sixteenBitGradients;
    private org.scaledl.workload.GradReduce gradReduce = org.scaledl.workload.GradReduce.OVERLAPPED;
    private boolean expertCommOverlap;
    private org.scaledl.workload.MoeDispatcher moeDispatcher = org.scaledl.workload.MoeDispatcher.ALLTOALL;
    private CudaGraphs cudaGraphs = CudaGraphs.NONE;
    /** The schedule choices given (each layout states them: {@link Workload#states}). */
    private final java.util.EnumSet<Workload.ScheduleChoice> stated = java.util.EnumSet.noneOf(
            Workload.ScheduleChoice.class);
    private double expertImbalance = 1;
    /** The one ZeRO stage searched, or -1: stages 0, 1 and (without a pipeline) 3. */
    private int zeroStage = -1;

    /**
     * A search.
     *
     * @param predictor   a device predictor
     * @param graph       a transformer's graph ({@code TransformerSpec.graph(seq)})
     * @param device      the GPU
     * @param gpus        GPUs in all (positive)
     * @param globalBatch sequences per iteration over all replicas (positive)
     * @throws IllegalArgumentException for a graph not built from a configuration or non-positive counts
     */
    public LayoutSearch(RuntimePredictor predictor, ModelGraph graph, Device device, int gpus, int globalBatch) {
        this.predictor = Objects.requireNonNull(predictor, "predictor");
        this.graph = Objects.requireNonNull(graph, "graph");
        this.device = Objects.requireNonNull(device, "device");
        Checks.argument(graph.transformer().isPresent(), "layout search needs a transformer built from its "
                + "configuration; %s is not one", graph.name());
        Checks.argument(gpus > 0 && globalBatch > 0, "GPUs and global batch must be positive: %s, %s", gpus,
                globalBatch);
        this.gpus = gpus;
        this.globalBatch = globalBatch;
        this.topology = Topology.assumedFor(device);
    }

    /**
     * Searches one ZeRO stage only, the one the caller's software runs (default: stages 0, 1 and, without a
     * pipeline, 3): a layout of one data-parallel replica keeps stage 0 (it shards nothing), and stage 3 has no
     * layout with a pipeline.
     *
     * @throws IllegalArgumentException for a stage other than 0 to 3
     */
    public LayoutSearch zeroStage(int value) {
        Checks.argument(value >= 0 && value <= 3, "ZeRO stage must be 0, 1, 2 or 3: %s", value);
        this.zeroStage = value;
        return this;
    }

    /** The machines (default: the device's standard server). */
    public LayoutSearch topology(Topology value) {
        this.topology = Objects.requireNonNull(value, "topology");
        return this;
    }

    /** The precision (default FP16 mixed precision). */
    public LayoutSearch precision(Precision value) {
        this.precision = Objects.requireNonNull(value, "precision");
        return this;
    }

    /**
     * LoRA fine-tuning with adapters of this rank, the weights frozen (default 0: every weight trains).
     *
     * @throws IllegalArgumentException where {@link Workload.Builder#lora} refuses it
     */
    public LayoutSearch lora(int rank) {
        Workload.builder(graph).lora(rank);
        this.loraRank = rank;
        return this;
    }

    /**
     * Packed sequences of documents of this many tokens (default 0: one document a sequence).
     *
     * @throws IllegalArgumentException where {@link Workload.Builder#documentTokens} refuses it
     */
    public LayoutSearch documentTokens(int value) {
        Workload.builder(graph).documentTokens(value);
        this.documentTokens = value;
        return this;
    }

    /**
     * Gradient buffers in 16 bits (true) or FP32 (false) ({@link Workload#sixteenBitGradients()}; by default the
     * precision's).
     */
    public LayoutSearch sixteenBitGradients(boolean value) {
        this.sixteenBitGradients = value;
        return this;
    }

    /**
     * When the data-parallel collectives run in every layout ({@link Workload#gradReduce()}; default overlapped);
     * with {@link org.scaledl.workload.GradReduce#GATHER_AFTER_STEP} the layouts are searched with the distributed
     * optimizer (ZeRO 1, or the stage {@link #zeroStage} names, 1 or 2). Called, every layout states the choice
     * ({@link Workload#states}).
     */
    public LayoutSearch gradReduce(org.scaledl.workload.GradReduce value) {
        this.gradReduce = java.util.Objects.requireNonNull(value, "gradReduce");
        stated.add(Workload.ScheduleChoice.GRAD_REDUCE);
        return this;
    }

    /**
     * FP8 weights as the parameters in every layout ({@link Workload#fp8ParamGather()}; default false): the layouts
     * are then searched with the distributed optimizer (ZeRO 1, or the stage {@link #zeroStage} names, 1 or 2), as
     * Megatron core runs them.
     */
    public LayoutSearch fp8ParamGather(boolean value) {
        this.fp8ParamGather = value;
        return this;
    }

    /**
     * Expert parallelism's all-to-all behind another micro-batch's compute ({@link Workload#expertCommOverlap()}), in
     * every layout Megatron core runs it with and where it hides something: expert parallelism, more than one
     * micro-batch, and virtual stages where there is a pipeline (default false: on the critical path). Called, every
     * layout states the choice ({@link Workload#states}).
     */
    public LayoutSearch expertCommOverlap(boolean value) {
        this.expertCommOverlap = value;
        stated.add(Workload.ScheduleChoice.EXPERT_COMM_OVERLAP);
        return this;
    }

    /**
     * How expert parallelism moves the tokens in every layout with expert parallelism ({@link Workload#moeDispatcher()};
     * default all-to-all).
     */
    public LayoutSearch moeDispatcher(org.scaledl.workload.MoeDispatcher value) {
        this.moeDispatcher = Objects.requireNonNull(value, "moeDispatcher");
        return this;
    }

    /**
     * What of each layout's iteration runs as CUDA graphs ({@link Workload#cudaGraphs()}; default none). Called,
     * every layout states the choice ({@link Workload#states}).
     */
    public LayoutSearch cudaGraphs(CudaGraphs value) {
        this.cudaGraphs = java.util.Objects.requireNonNull(value, "cudaGraphs");
        stated.add(Workload.ScheduleChoice.CUDA_GRAPHS);
        return this;
    }

    /**
     * The busiest expert-parallel rank's routed tokens over its share (default 1: balanced); each layout takes at
     * most what its expert ranks can receive ({@link org.scaledl.model.exec.MegatronExecution#mostExpertImbalance}:
     * 1 on one expert rank).
     *
     * @throws IllegalArgumentException where {@link Workload.Builder#expertImbalance} refuses it
     */
    public LayoutSearch expertImbalance(double value) {
        Workload.builder(graph).expertImbalance(value);
        this.expertImbalance = value;
        return this;
    }

    /**
     * One way to run the job.
     *
     * @param workload    the job in this layout, with the recomputation it takes (what {@code predict} is given to
     *                    reproduce it)
     * @param millis      predicted iteration time, ms
     * @param memoryGb    predicted memory per GPU, GiB
     * @param fits        whether that memory fits the device
     */
    public record Layout(Workload workload, double millis, double memoryGb, boolean fits) {
        /** Validates: a workload, a finite step of at least 0 (the memory may be NaN: not known). */
        public Layout {
            java.util.Objects.requireNonNull(workload, "workload");
            // (plain checks: a search builds thousands, and varargs would box each figure)
            if (!(Double.isFinite(millis) && millis >= 0)) {
                throw new IllegalArgumentException("a layout's step must be finite and >= 0: " + millis);
            }
            if (!(Double.isNaN(memoryGb) || Double.isFinite(memoryGb) && memoryGb >= 0)) {
                throw new IllegalArgumentException("a layout's memory must be finite and >= 0 (NaN: not known): "
                        + memoryGb);
            }
        }

        /** The degrees, micro-batches, sequence parallelism, ZeRO stage and chunks. */
        public Parallelism parallelism() {
            return workload.parallelism();
        }

        /** Sequences per micro-batch. */
        public int microBatch() {
            return workload.batch() / workload.parallelism().microBatches();
        }

        /** The activation recomputation the layout takes. */
        public Recompute recompute() {
            return workload.recompute();
        }

        /** With full recomputation, the layers of each model chunk recomputed (0: every layer). */
        public int recomputeLayers() {
            return workload.recomputeLayers();
        }

        /**
         * Whether the layout fits, but within {@link RuntimePredictor#MEMORY_EDGE} of its GPU's memory: a memory
         * estimate a few percent off may not fit (the search ranks such layouts with the others; a scheduler may
         * prefer the best that leaves more).
         */
        public boolean nearMemoryLimit() {
            return fits && workload.device().map(d -> RuntimePredictor.nearMemoryEdge(memoryGb, d.memoryGB()))
                    .orElse(false);
        }

        /** Sequences per second over all GPUs at the layout's global batch. */
        public double sequencesPerSecond(int globalBatch) {
            return globalBatch / (millis / 1000);
        }
    }

    /**
     * The fastest layout of a ranked list ({@link #search}'s) that fits with memory to spare: known memory, not within
     * {@link RuntimePredictor#MEMORY_EDGE} of its GPU's ({@link Layout#nearMemoryLimit()}). The search ranks layouts
     * at the edge with the others, so its first may be one whose memory estimate a few percent off would not fit; a
     * scheduler that cannot retry takes this one (as {@code layouts --json}'s {@code best_with_memory_free}). Empty
     * where no layout leaves the margin.
     */
    public static Optional<Layout> bestWithMemoryFree(List<Layout> ranked) {
        for (Layout l : java.util.Objects.requireNonNull(ranked, "ranked")) {
            java.util.Objects.requireNonNull(l, "a layout of ranked");
            if (l.fits() && !Double.isNaN(l.memoryGb()) && !l.nearMemoryLimit()) {
                return Optional.of(l);
            }
        }
        return Optional.empty();
    }

    /**
     * Refuses settings that do not go together whatever the layout: 16-bit gradients in FP32, a precision the GPU has
     * no matrix units for, the experts' settings (all-to-all overlap, dispatcher, imbalance) on a model without.
     * {@link #search} checks them first; a caller may check them before starting it.
     *
     * @throws IllegalArgumentException naming the conflict
     */
    public LayoutSearch check() {
        Workload.Builder b = Workload.builder(graph).precision(precision);
        (sixteenBitGradients == null ? b : b.sixteenBitGradients(sixteenBitGradients)).build();
        if (fp8ParamGather) {
            // searched over the distributed optimizer's stages alone (1, or the one named)
            Workload.fp8ParamGatherRefusal(Phase.TRAIN, precision, zeroStage >= 0 ? zeroStage : 1, loraRank)
                    .ifPresent(why -> {
                        throw new IllegalArgumentException(why);
                    });
        }
        // (a stage not named is searched at 1 with the gather after the step, which the refusal takes)
        Workload.gradReduceRefusal(Phase.TRAIN, zeroStage, gradReduce).ifPresent(why -> {
            throw new IllegalArgumentException(why);
        });
        boolean experts = graph.transformer().map(t -> t.mixtureOfExperts()).orElse(false);
        if (expertCommOverlap && !experts) {
            throw new IllegalArgumentException("overlapping the experts' all-to-all (overlap_moe_expert_parallel_comm) "
                    + "needs a model with routed experts, not " + graph.name());
        }
        if (expertImbalance != 1 && !experts) {
            // (as a predicted job refuses it)
            throw new IllegalArgumentException("expert imbalance " + org.scaledl.io.CsvTable.plain(expertImbalance)
                    + " needs a model with routed experts, not " + graph.name());
        }
        if (moeDispatcher != org.scaledl.workload.MoeDispatcher.ALLTOALL && !experts) {
            throw new IllegalArgumentException("MoE dispatcher " + moeDispatcher.label() + " needs a model with routed "
                    + "experts, not " + graph.name());
        }
        if (expertCommOverlap) {
            Workload.expertCommOverlapRefusal(precision).or(() -> Workload.expertCommOverlapRefusal(moeDispatcher))
                    // (as a workload refuses the dispatcher: every layout with experts would drop the overlap)
                    .ifPresent(why -> {
                        throw new IllegalArgumentException(why);
                    });
        }
        org.scaledl.model.exec.ParallelExecution.checkPrecision(device, precision, Phase.TRAIN);
        return this;
    }

    /**
     * Why a search finds no layout, in words (what the degrees must divide), for a caller whose {@link #search} came
     * back empty.
     */
    public String whyNoLayout() {
        TransformerShape ts = graph.transformer().orElseThrow();
        return "no layout of " + gpus + " GPUs runs a global batch of " + globalBatch + ": tensor x context x "
                + "pipeline x data must make the GPUs, with the data-parallel degree dividing the global batch, tensor "
                + "parallelism a power of two dividing " + MegatronExecution.headsDivisor(graph) + " (the "
                + ts.heads() + " heads' and every layer's key/value heads' common divisor) inside the NVLink domain "
                + "of " + topology.scaleUp().gpusPerNode() + " GPUs and the pipeline dividing the " + ts.layers()
                + " layers (try a multiple of the node's GPUs, or another global batch)";
    }

    /**
     * What a global batch that shares few factors with the GPUs does to the search ({@link #batchLimit()}).
     *
     * @param replicas       the most data-parallel replicas a layout can have: {@code gcd(gpus, globalBatch)}
     * @param gpusPerReplica the fewest GPUs a replica takes: {@code gpus / replicas}
     * @param oddFactor      that count's odd factor, which only a pipeline takes (tensor and context degrees are
     *                       powers of two)
     * @param suggested      the multiple of the GPUs nearest the global batch, which lifts the limit
     */
    public record BatchLimit(int replicas, int gpusPerReplica, int oddFactor, int suggested) {
        /** In words, as {@code layouts} says it. */
        public String describe(int gpus, int globalBatch) {
            return String.format(java.util.Locale.ROOT, "a global batch of %d over %d GPUs: a layout's data-parallel "
                    + "replicas divide both, so there are at most %d, each of %d GPUs or more, and tensor and context "
                    + "degrees being powers of two, the pipeline alone takes the factor %d (a global batch that is a "
                    + "multiple of the GPUs, such as %d, lifts this)", globalBatch, gpus, replicas, gpusPerReplica,
                    oddFactor, suggested);
        }
    }

    /**
     * Where the global batch and the GPUs share so few factors that every replica needs more GPUs than a node holds,
     * with an odd factor only a pipeline can take (2,048 sequences over 1,008 GPUs: at most 16 replicas of 63 GPUs
     * or more, at pipeline depths that are multiples of 63), what that does to the search; empty otherwise (a
     * replica's GPUs within a node, or a power of two, which tensor and context parallelism take).
     */
    public java.util.Optional<BatchLimit> batchLimit() {
        long common = java.math.BigInteger.valueOf(gpus).gcd(java.math.BigInteger.valueOf(globalBatch)).longValue();
        long least = gpus / common;
        long odd = least >> Long.numberOfTrailingZeros(least);
        if (odd == 1 || least <= topology.gpusPerNode()) {
            return java.util.Optional.empty();
        }
        long below = (long) globalBatch / gpus * gpus;
        long nearest = below > 0 && globalBatch - below <= below + gpus - globalBatch ? below : below + gpus;
        return java.util.Optional.of(new BatchLimit((int) common, (int) least, (int) odd,
                (int) Math.min(Integer.MAX_VALUE, nearest)));
    }

    /**
     * Every valid layout, those that fit first, fastest first (ties in a fixed order of the degrees), unmodifiable;
     * where none fits, the least memory first; empty where the GPUs and the global batch allow none
     * ({@link #whyNoLayout} says why).
     *
     * @throws IllegalArgumentException for settings {@link #check} refuses
     */
    public List<Layout> search() {
        check();
        TransformerShape ts = graph.transformer().get();
        int domain = topology.scaleUp().gpusPerNode();
        List<Layout> out = new ArrayList<>();
        // the per-layer costs depend on the micro-batch, tensor, sequence, context and expert parallelism (and the
        // recomputation): the pipeline, data parallelism, schedule and ZeRO stage vary innermost, where they are
        // shared
        // the degrees the heads, the key/value heads and every layer's own allow: the divisors of their common one
        long heads = MegatronExecution.headsDivisor(graph);
        for (int t = 1; t <= Math.min(gpus, domain); t *= 2) {
            if (gpus % t != 0 || heads % t != 0) {
                continue;
            }
            // context parallelism runs inside a fused attention core only
            int mostContext = MegatronExecution.hasUnfusedCore(graph) ? 1 : MAX_CONTEXT;
            for (int c = 1; c <= mostContext && (long) t * c <= gpus; c *= 2) {
                if (gpus % (t * c) != 0 || c > 1 && ts.seq() % (2L * c) != 0) {
                    continue;
                }
                for (int e = 1; e <= ts.experts() && e <= gpus; e *= 2) {
                    if (ts.experts() % e != 0) {
                        continue;
                    }
                    for (int b = 1; b <= MAX_MICRO_BATCH && b <= globalBatch; b *= 2) {
                        for (boolean sp : t > 1 ? new boolean[] {false, true} : new boolean[] {false}) {
                            if (!sp && MegatronExecution.needsSequenceParallelism(e, t)) {
                                continue;
                            }
                            pipelines(out, ts, t, c, e, b, sp);
                        }
                    }
                }
            }
        }
        return ranked(out);
    }

    /**
     * Layouts in the order {@link #search} gives them: those that fit first, then the fastest (a stable sort: ties keep
     * their order); where none fits, the nearest to fitting first, then the fastest (ranked by time, a first place of
     * 2,592 GiB on an 80 GiB GPU led a table whose least layout needs 383). A caller's subset of a search, ranked
     * again, keeps its order where some of it fits.
     *
     * @return the layouts ranked, unmodifiable
     */
    public static List<Layout> ranked(java.util.Collection<Layout> layouts) {
        List<Layout> out = new ArrayList<>(java.util.Objects.requireNonNull(layouts, "layouts"));
        out.forEach(l -> java.util.Objects.requireNonNull(l, "a layout of layouts"));
        if (out.stream().noneMatch(Layout::fits)) {
            out.sort((x, y) -> Double.compare(x.memoryGb(), y.memoryGb()) != 0
                    ? Double.compare(x.memoryGb(), y.memoryGb()) : Double.compare(x.millis(), y.millis()));
        } else {
            out.sort((x, y) -> x.fits() != y.fits() ? (x.fits() ? -1 : 1) : Double.compare(x.millis(), y.millis()));
        }
        return List.copyOf(out);
    }

    private void pipelines(List<Layout> out, TransformerShape ts, int t, int c, int e, int b, boolean sp) {
        int rest = gpus / (t * c);
        for (int p = 1; p <= rest && p <= ts.layers(); p++) {
            if (rest % p != 0 || MegatronExecution.chunkSizes(ts.layers(), p, ts.mtpLayers()) == null) {
                continue;
            }
            int d = rest / p;
            if (globalBatch % d != 0 || ((long) d * c * t) % e != 0 || (globalBatch / d) % b != 0) {
                continue;
            }
            int m = globalBatch / d / b;
            // every interleaving the layers split into (with the embedding and the loss counted where that divides,
            // as a prediction takes them), up to MAX_VIRTUAL_STAGES chunks a stage (recipes run 5 and 8 as well as 2
            // and 4); interleaving needs stages, and micro-batches in a multiple of them
            int mostChunks = p == 1 || m % p != 0 ? 1 : MAX_VIRTUAL_STAGES;
            for (int v = 1; v <= mostChunks && (v == 1 || (long) p * v <= ts.layers() + 2L + ts.mtpLayers()); v++) {
                if (v > 1 && MegatronExecution.chunkSizes(ts.layers(), p * v, ts.mtpLayers()) == null) {
                    continue;
                }
                if ((double) m * p * v > org.scaledl.workload.Parallelism.MAX_PIPELINE_STEPS) {
                    // a schedule of more steps than any iteration runs: not a layout (the others are still ranked)
                    continue;
                }
                // one replica shards nothing (stage 0 it is); ZeRO 3 runs without a pipeline only
                int[] zeros = fp8ParamGather || gradReduce == org.scaledl.workload.GradReduce.GATHER_AFTER_STEP
                        ? new int[] {zeroStage >= 0 ? zeroStage : 1}
                        : d * c == 1 ? new int[] {0} : zeroStage >= 0 ? (zeroStage == 3 && p > 1 ? new int[0]
                        : new int[] {zeroStage}) : p == 1 ? new int[] {0, 1, 3} : new int[] {0, 1};
                // a mixture's experts whole on their ranks (as the recipes that spread them set it), and without
                // expert parallelism split over the tensor ranks too (Megatron core's default)
                int split = Parallelism.defaultExpertTensor(t, e, graph);
                for (int zero : zeros) {
                    out.add(evaluate(new Parallelism(d, t, p, m, sp, zero, v, c, e, 1), b));
                    if (split > 1) {
                        out.add(evaluate(new Parallelism(d, t, p, m, sp, zero, v, c, e, split), b));
                    }
                }
            }
        }
    }

    /** The builder with the gradient buffers' type and the schedule choices where they were given. */
    private Workload.Builder given(Workload.Builder b, Parallelism par) {
        if (stated.contains(Workload.ScheduleChoice.GRAD_REDUCE)) {
            b.gradReduce(gradReduce);
        }
        if (stated.contains(Workload.ScheduleChoice.EXPERT_COMM_OVERLAP)) {
            b.expertCommOverlapWhereRun(expertCommOverlap);
        }
        if (par.expert() > 1) {
            b.moeDispatcher(moeDispatcher);
        }
        if (stated.contains(Workload.ScheduleChoice.CUDA_GRAPHS)) {
            b.cudaGraphs(cudaGraphs);
        }
        b.fp8ParamGather(fp8ParamGather);
        return sixteenBitGradients == null ? b : b.sixteenBitGradients(sixteenBitGradients);
    }

    private Layout evaluate(Parallelism par, int b) {
        Workload w = predictor.stage().resolve(given(Workload.builder(graph).batch(b * par.microBatches())
                .phase(Phase.TRAIN).device(device).parallelism(par).precision(precision).recompute(Recompute.AUTO)
                .topology(topology).lora(loraRank).expertImbalance(graph.transformer().map(ts -> Math.min(
                        expertImbalance, org.scaledl.model.exec.MegatronExecution.mostExpertImbalance(ts,
                                par.expert()))).orElse(expertImbalance))
                .documentTokens(documentTokens), par).build());
        double ms = predictor.predictMillis(w);
        OptionalDouble mem = predictor.stage().memoryBytes(w);
        double gib = mem.isPresent() ? mem.getAsDouble() / (1L << 30) : Double.NaN;
        return new Layout(w, ms, gib, !(gib > device.memoryGB()));
    }
}
