package org.scaledl.workload;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.graph.ModelGraph;

/**
 * One thing to predict: a model graph run at a batch size, in a phase, on some resources.
 *
 * <pre>{@code
 * Workload w = Workload.builder(graph).batch(32).phase(Phase.TRAIN).worldSize(2).threads(1)
 *         .tag("model", "resnet50").build();
 * }</pre>
 *
 * <p>{@link #batch()} is per data-parallel worker: with {@code worldSize} data-parallel workers an iteration
 * processes {@code batch * worldSize} samples; with tensor or pipeline parallelism ({@link #parallelism()}) the batch
 * is per replica. {@link #threads()} is the intra-op thread count of each worker (CPU), and {@link #device()}
 * describes the device (a GPU, or a CPU machine) when the model that predicts it distinguishes devices.
 *
 * <p>A replica's batch is the micro-batch's size times the micro-batches; a predictor refuses one that is no whole
 * number of its micro-batches. Workloads compare by identity, as their graphs do ({@link ModelGraph}): two built alike are two objects; a
 * prediction depends only on their content, and {@link #toString()} describes it.
 */
public final class Workload {
    private final ModelGraph graph;
    private final int batch;
    private final Phase phase;
    private final Parallelism parallelism;
    private final int threads;
    private final Device device;
    private final Precision precision;
    private final Topology topology;
    private final Recompute recompute;
    private final int recomputeLayers;
    private final Set<RecomputeModule> recomputeModules;
    private final int offloadLayers;
    private final double expertImbalance;
    private final int loraRank;
    private final boolean unevenPipeline;
    private final int documentTokens;
    /** The gradient buffers' type as given: 16 bits (true), FP32 (false), or the precision's default (null). */
    private final Boolean sixteenBitGradients;
    private final GradReduce gradReduce;
    private final boolean fp8ParamGather;
    private final boolean expertCommOverlap;
    /** What the builder asked of the overlap, and whether only where Megatron core runs it (kept for toBuilder). */
    private final boolean overlapAsked;
    private final boolean overlapWhereRun;
    /** FP8 weights as the parameters as asked, and whether where the job can run them (a copy asks so again). */
    private final boolean fp8Asked;
    private final boolean fp8WhereRun;
    private final MoeDispatcher moeDispatcher;
    private final CudaGraphs cudaGraphs;
    private final java.util.EnumSet<ScheduleChoice> stated;
    /** Whether its builder was given the precision (else the default, FP32). */
    private final boolean precisionGiven;
    private final MemoryFormat memoryFormat;
    private final java.util.SortedMap<String, String> tags;

    private Workload(Builder b) {
        this.graph = b.graph;
        this.batch = b.batch;
        this.phase = b.phase;
        this.parallelism = b.parallelism;
        this.threads = b.threads;
        this.device = b.device;
        this.precision = b.precision;
        this.topology = b.topology;
        Recompute rc = b.recompute;
        if (!b.recomputeModules.equals(RecomputeModule.DEFAULT)) {
            // modules named: selective recomputation (Megatron core reads them with that granularity only)
            if (rc == Recompute.AUTO) {
                rc = Recompute.SELECTIVE;
            } else if (rc != Recompute.SELECTIVE) {
                throw new IllegalArgumentException("recompute modules " + RecomputeModule.label(b.recomputeModules)
                        + " say what selective recomputation recomputes, not " + rc.label() + " recomputation");
            }
        }
        this.recompute = rc;
        this.recomputeLayers = b.recomputeLayers;
        if (recomputeLayers != 0 && recompute != Recompute.FULL) {
            // (not Checks.argument: its arguments would be boxed on every build, and layout searches build millions)
            throw new IllegalArgumentException("recomputing the first " + recomputeLayers + " layers of each chunk "
                    + "needs full recomputation, not " + recompute.label());
        }
        this.recomputeModules = b.recomputeModules;
        this.offloadLayers = b.offloadLayers;
        if (offloadLayers != 0 && recompute == Recompute.FULL) {
            throw new IllegalArgumentException("offloading the activations of " + offloadLayers + " layers of each "
                    + "chunk with full recomputation: a recomputed layer keeps only its input, give recompute none or "
                    + "selective");
        }
        if (offloadLayers != 0 && phase != Phase.TRAIN) {
            throw new IllegalArgumentException("offloading activations until the backward pass is a training setting,"
                    + " not one of " + phase.label());
        }
        this.expertImbalance = b.expertImbalance;
        this.loraRank = b.loraRank;
        if (loraRank > 0 && graph.transformer().isPresent() && loraRank > graph.transformer().get().hidden()) {
            // an adapter of a rank beyond the hidden size is wider than the projection it adapts
            throw new IllegalArgumentException("LoRA rank " + loraRank + " is larger than the hidden size "
                    + graph.transformer().get().hidden() + ": an adapter's rank is at most its projection's width");
        }
        this.unevenPipeline = b.unevenPipeline;
        this.documentTokens = b.documentTokens;
        this.sixteenBitGradients = b.sixteenBitGradients;
        this.gradReduce = b.gradReduce;
        if (phase == Phase.TRAIN) {
            // (inference's refusal is said among its other training settings, below)
            gradReduceRefusal(phase, parallelism.zeroStage(), gradReduce).ifPresent(why -> {
                throw new IllegalArgumentException(why);
            });
        }
        // asked for where the job can run it (a table's default): off elsewhere; asked for outright, refused there
        Optional<String> fp8Refusal = b.fp8ParamGather ? fp8ParamGatherRefusal(phase, precision,
                parallelism.zeroStage(), loraRank) : Optional.empty();
        if (fp8Refusal.isPresent() && !b.fp8WhereRun) {
            throw new IllegalArgumentException(fp8Refusal.get());
        }
        this.fp8ParamGather = b.fp8ParamGather && fp8Refusal.isEmpty();
        this.fp8Asked = b.fp8ParamGather;
        this.fp8WhereRun = b.fp8WhereRun;
        // asked for where Megatron core runs it and it hides something (a table's default, a layout search): off
        // elsewhere, where asked for outright it is refused below
        this.expertCommOverlap = b.expertCommOverlap && (!b.overlapWhereRun || expertCommOverlapRuns(phase,
                parallelism, precision, recompute, recomputeModules, b.moeDispatcher));
        this.overlapAsked = b.expertCommOverlap;
        this.overlapWhereRun = b.overlapWhereRun;
        this.moeDispatcher = b.moeDispatcher;
        if (moeDispatcher != MoeDispatcher.ALLTOALL && parallelism.expert() == 1) {
            throw new IllegalArgumentException("MoE dispatcher " + moeDispatcher.label() + ": the tokens' dispatch is "
                    + "expert parallelism's (an expert-parallel degree above 1)");
        }
        this.cudaGraphs = b.cudaGraphs;
        this.stated = java.util.EnumSet.copyOf(b.stated);
        this.precisionGiven = b.precisionGiven;
        this.memoryFormat = b.memoryFormat;
        if (memoryFormat != MemoryFormat.NCHW && graph.transformer().isPresent()) {
            // as a candidate table's row and the command line refuse it: a transformer built from its configuration
            // has no convolutions to lay out
            throw new IllegalArgumentException("memory format " + memoryFormat.label() + " lays out an imported "
                    + "graph's convolutions; a transformer built from its configuration has none");
        }
        if (expertCommOverlap) {
            expertCommOverlapRefusal(parallelism, precision, recompute).ifPresent(why -> {
                throw new IllegalArgumentException(why);
            });
            if (recomputeModules.contains(RecomputeModule.MOE)) {
                throw new IllegalArgumentException(OVERLAP_NEEDS + "the mixture of experts not recomputed as a whole "
                        + "(recompute module moe; Megatron core refuses both together)");
            }
            expertCommOverlapRefusal(moeDispatcher).ifPresent(why -> {
                throw new IllegalArgumentException(why);
            });
        }
        if (Boolean.TRUE.equals(sixteenBitGradients) && precision.masterBytes() == 0) {
            throw new IllegalArgumentException("16-bit gradients are a mixed-precision setting (bf16, fp16, fp8, "
                    + "mxfp8, nvfp4), not one of " + precision.label());
        }
        if (loraRank != 0 && phase != Phase.TRAIN) {
            throw new IllegalArgumentException("LoRA rank " + loraRank + ": adapters are a training setting, not one "
                    + "of " + phase.label());
        }
        if (phase != Phase.TRAIN) {
            // training settings an inference step has no use for: refused rather than echoed and ignored
            if (recompute != Recompute.NONE && recompute != Recompute.AUTO) {
                throw new IllegalArgumentException(recompute.label() + " recomputation is a training setting (the "
                        + "backward pass recomputes), not one of " + phase.label());
            }
            if (Boolean.TRUE.equals(sixteenBitGradients)) {
                throw new IllegalArgumentException("16-bit gradients are a training setting, not one of "
                        + phase.label());
            }
            gradReduceRefusal(phase, parallelism.zeroStage(), gradReduce).ifPresent(why -> {
                throw new IllegalArgumentException(why);
            });
            if (expertCommOverlap) {
                throw new IllegalArgumentException("overlapping the experts' all-to-all with another micro-batch's "
                        + "compute is a training schedule, not one of " + phase.label());
            }
            if (parallelism.zeroStage() > 0) {
                throw new IllegalArgumentException("ZeRO stage " + parallelism.zeroStage() + " shards training states "
                        + "(gradients, optimizer states), which " + phase.label()
                        + " does not hold: give ZeRO stage 0");
            }
        }
        this.tags = Collections.unmodifiableSortedMap(new TreeMap<>(b.tags));
    }

    /** Starts a workload on a graph; defaults: batch 1, {@link Phase#TRAIN}, one worker, one thread. */
    public static Builder builder(ModelGraph graph) {
        return new Builder(graph);
    }

    /** The model graph. */
    public ModelGraph graph() {
        return graph;
    }

    /** Samples per worker per iteration. */
    public int batch() {
        return batch;
    }

    /** Training or inference. */
    public Phase phase() {
        return phase;
    }

    /**
     * Devices (processes) the job uses: {@code parallelism().ranks()}, which for data-parallel jobs is the number of
     * data-parallel workers.
     */
    public int worldSize() {
        return parallelism.ranks();
    }

    /** How the job is spread over devices (default {@link Parallelism#none()}). */
    public Parallelism parallelism() {
        return parallelism;
    }

    /** Intra-op threads per worker. */
    public int threads() {
        return threads;
    }

    /** The accelerator, if one was given (models that use hardware data need it; CPU models ignore it). */
    public Optional<Device> device() {
        return Optional.ofNullable(device);
    }

    /**
     * Whether its builder was given the precision, any value (else it is the default, FP32, which a prediction of a
     * transformer on a GPU says as assumed: mixed precision is what such jobs run).
     */
    public boolean precisionGiven() {
        return precisionGiven;
    }

    /** The arithmetic it runs in (default {@link Precision#FP32}). */
    public Precision precision() {
        return precision;
    }

    /**
     * The machines its devices sit in (GPUs per node, links, network), if given; without one, a job on several GPUs
     * is predicted on the standard server of the device's form factor ({@link Topology#assumedFor}) and says so.
     */
    public Optional<Topology> topology() {
        return Optional.ofNullable(topology);
    }

    /** Activation recomputation in training (default {@link Recompute#AUTO}: what the job needs to fit). */
    public Recompute recompute() {
        return recompute;
    }

    /**
     * With {@link Recompute#FULL}: how many layers of each pipeline stage's model chunk are recomputed, the first ones
     * (Megatron's {@code --recompute-method block --recompute-num-layers}); 0 (the default) every layer.
     */
    public int recomputeLayers() {
        return recomputeLayers;
    }

    /**
     * With {@link Recompute#SELECTIVE}: what it recomputes (Megatron core's {@code recompute_modules}); default, and
     * always with any other recomputation, {@link RecomputeModule#DEFAULT} (the attention core).
     */
    public Set<RecomputeModule> recomputeModules() {
        return recomputeModules;
    }

    /**
     * How many layers of each pipeline stage's model chunk keep the activations they save for the backward pass in
     * the host's memory instead of the GPU's, the first ones (Megatron's activation offloading,
     * {@code cpu_offloading_num_layers}; Megatron-Bridge's GB200 recipes offload where others recompute): each is
     * copied out after its forward pass and back before its backward pass, behind the neighbouring layers' compute
     * where the host link is fast enough; 0 (the default) none. Not with {@link Recompute#FULL}. With
     * {@link Recompute#AUTO} on a GPU whose host memory is coherent over NVLink-C2C (a Grace superchip) the predictor
     * offloads the fewest layers that make the job fit before it recomputes any.
     */
    public int offloadLayers() {
        return offloadLayers;
    }

    /**
     * A recomputation as a candidate or job runs table's cells: {@code recompute}, {@code recompute_layers} (full
     * recomputation of the first layers of each chunk; empty for every layer), {@code recompute_modules} (selective
     * recomputation's modules) and {@code offload_layers} (empty for none), in that order.
     */
    public static Map<String, String> recomputeCells(Recompute recompute, int layers, Set<RecomputeModule> modules,
            int offloadLayers) {
        Map<String, String> m = new java.util.LinkedHashMap<>();
        m.put("recompute", recompute.label());
        m.put("recompute_layers", recompute == Recompute.FULL && layers > 0 ? Integer.toString(layers) : "");
        m.put("recompute_modules", recompute == Recompute.SELECTIVE ? RecomputeModule.label(modules) : "");
        m.put("offload_layers", offloadLayers > 0 ? Integer.toString(offloadLayers) : "");
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * The recomputation as a short label, as {@code --json}'s {@code recompute_used} and {@code layouts} print it:
     * {@code none}, {@code selective}, {@code full}, {@code auto}, {@code full:21} for the first 21 layers of each
     * chunk, or {@code selective:moe_act+layernorm} for modules other than the attention core.
     */
    public String recomputeLabel() {
        return recompute.label() + (recomputeLayers > 0 ? ":" + recomputeLayers : "")
                + (recomputeModules.equals(RecomputeModule.DEFAULT) ? "" : ":"
                        + RecomputeModule.label(recomputeModules));
    }

    /**
     * How much more than its share of the routed tokens the busiest expert-parallel rank gets (1: balanced, as
     * force-balanced or aux-loss-free routing keeps it; the default): the experts' compute and the token exchange on
     * the critical path scale by it.
     */
    public double expertImbalance() {
        return expertImbalance;
    }

    /**
     * LoRA fine-tuning: the rank of the low-rank adapters trained beside every linear projection of the blocks while
     * the model's own weights stay frozen (no weight gradients, no gradient reduction, no optimizer states for them);
     * 0 (the default) trains every weight (pre-training, full fine-tuning).
     */
    public int loraRank() {
        return loraRank;
    }

    /**
     * Whether a transformer's layers may be split unevenly over the pipeline's chunks where no even split exists (a
     * balanced split, as Megatron-DeepSpeed's partition or Megatron-LM's first/last-stage layer counts and pipeline
     * layouts give); false (the default): such a layout is refused, as Megatron's default split refuses it.
     */
    public boolean unevenPipeline() {
        return unevenPipeline;
    }

    /**
     * Packed sequences: the tokens of the documents packed into each sequence (attention runs within a document, as
     * FlashAttention's variable-length kernels and Megatron's packed-sequence fine-tuning run it), an effective
     * length ({@code E[L²]/E[L]} over the documents); 0 (the default): one document a sequence.
     */
    public int documentTokens() {
        return documentTokens;
    }

    /**
     * Whether the gradient buffers are 16-bit (BF16 or FP16 main gradients: NeMo 1.x's distributed Adam with
     * {@code grad_sync_dtype} bf16, Megatron core's {@code grad_reduce_in_fp32} off as NeMo's and Megatron-Bridge's
     * performance recipes set it) rather than FP32 ({@link Precision#gradientBytes()}): 2 bytes a parameter instead of
     * 4 in memory, in the optimizer's traffic and in the data-parallel reduction, which moves the buffers in their
     * own type (Megatron core reduces its gradient buffer in place; DeepSpeed reduces in the type it keeps). As given
     * ({@link Builder#sixteenBitGradients(boolean)}), else the frameworks' default for the precision: 16 bits in FP16
     * training (Megatron-LM without {@code --accumulate-allreduce-grads-in-fp32}, DeepSpeed), FP32 in every other
     * (Megatron-LM accumulates and reduces BF16 training's gradients in FP32, Megatron core's recipes default to
     * {@code grad_reduce_in_fp32}).
     */
    public boolean sixteenBitGradients() {
        return sixteenBitGradients != null ? sixteenBitGradients : precision.sixteenBitGradientsByDefault();
    }

    /**
     * The gradient buffers' type in the words tables and command lines use ({@code grad_dtype}, {@code --grad-dtype}):
     * {@code fp32}, or for 16-bit buffers {@code fp16} in FP16 training and {@code bf16} otherwise.
     */
    public String gradDtypeLabel() {
        return gradDtypeLabel(sixteenBitGradients(), precision);
    }

    /** {@link #gradDtypeLabel()} of gradient buffers of 16 bits or not in a precision. */
    public static String gradDtypeLabel(boolean sixteenBit, Precision precision) {
        return !sixteenBit ? "fp32" : precision == Precision.FP16 ? "fp16" : "bf16";
    }

    /**
     * Parses a gradient type as tables and command lines give it: {@code fp32} (false), {@code bf16} or {@code fp16}
     * (true: {@link #sixteenBitGradients()}), any case.
     *
     * @throws org.scaledl.InvalidInputException naming the text and the accepted values
     */
    public static boolean parseGradDtype(String text) {
        java.util.Objects.requireNonNull(text, "text");
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "fp32", "float32" -> false;
            case "bf16", "fp16", "bfloat16", "float16" -> true;
            default -> throw org.scaledl.InvalidInputException.of("unknown gradient type '"
                    + org.scaledl.InvalidInputException.printable(text, 80)
                    + "' (expected fp32, bf16 or fp16)");
        };
    }

    /**
     * When the data-parallel collectives run ({@link GradReduce}): {@link GradReduce#OVERLAPPED} by default, the
     * gradients' reduction with the last micro-batch's backward pass (Megatron core's {@code overlap_grad_reduce},
     * PyTorch DDP's buckets) and the distributed optimizer's gather of the updated weights with the first one's forward
     * pass; {@link GradReduce#GATHER_AFTER_STEP} exposes the gather after the optimizer step;
     * {@link GradReduce#AFTER_BACKWARD} both, after the backward pass (Megatron-LM's local DDP, Megatron-DeepSpeed,
     * DeepSpeed's ZeRO 1–2 without {@code overlap_comm}), and with ZeRO 2 and 3 each micro-batch's reduce-scatter.
     */
    public GradReduce gradReduce() {
        return gradReduce;
    }

    /**
     * Why a schedule of the data-parallel collectives ({@link #gradReduce()}) cannot go with a job of this phase and
     * ZeRO stage: any but the default in inference (a training setting), and the weights' gather after the optimizer
     * step outside the distributed optimizer (ZeRO 1 or 2: Megatron core asserts it); empty where it can.
     */
    public static Optional<String> gradReduceRefusal(Phase phase, int zeroStage, GradReduce gradReduce) {
        Objects.requireNonNull(gradReduce, "gradReduce");
        if (phase != Phase.TRAIN && gradReduce != GradReduce.OVERLAPPED) {
            return Optional.of("grad-reduce " + gradReduce.label() + " (when the data-parallel collectives of "
                    + "training run) is a training setting, not one of " + phase.label());
        }
        if (gradReduce == GradReduce.GATHER_AFTER_STEP && (zeroStage == 0 || zeroStage == 3)) {
            return Optional.of("the updated weights' gather after the optimizer step (gather-after-step) is the "
                    + "distributed optimizer's: ZeRO 1 or 2, not ZeRO " + zeroStage + (zeroStage == 0
                    ? " (no weights are gathered)" : " (FSDP gathers every layer's weights as it computes)"));
        }
        return Optional.empty();
    }

    /**
     * Whether the blocks' low-precision linear layers keep their weights in the recipe's format alone, as Megatron
     * core's {@code --fp8-param-gather} (Megatron-Bridge's {@code fp8_param_gather}, NeMo's {@code fp8_params}) runs
     * them: no 16-bit copy beside the quantised one (2 bytes a weight less memory; MX-FP8's with Megatron-Bridge's
     * {@code reuse_grad_buf_for_mxfp8_param_ag}, its 16-bit weights gathered into the gradient buffer), and the
     * distributed optimizer gathers the updated weights of a per-tensor or blockwise FP8 recipe in FP8 (1 byte a
     * weight; MX-FP8's in 16 bits, quantised after). False by default, as Megatron-LM's. A training setting, with an
     * FP8 recipe (NVFP4's {@code fp4_param_gather} is not modelled) and the distributed optimizer (ZeRO 1 or 2),
     * without LoRA ({@link #fp8ParamGatherRefusal}).
     */
    public boolean fp8ParamGather() {
        return fp8ParamGather;
    }

    /**
     * Why FP8 weights as the parameters ({@link #fp8ParamGather()}) cannot go with a job of this phase, precision,
     * ZeRO stage and LoRA rank; empty where they can.
     */
    public static Optional<String> fp8ParamGatherRefusal(Phase phase, Precision precision, int zeroStage,
            int loraRank) {
        String what = "FP8 weights as the parameters (fp8_param_gather)";
        if (phase != Phase.TRAIN) {
            return Optional.of(what + " are a training setting (inference holds its weights quantised already), not "
                    + "one of " + phase.label());
        }
        if (!precision.lowPrecisionLinear() || precision == Precision.NVFP4) {
            return Optional.of(what + " need an FP8 recipe (fp8, fp8-block, mxfp8), not " + precision.label()
                    + (precision == Precision.NVFP4 ? " (Megatron core's fp4_param_gather is not modelled)" : ""));
        }
        if (zeroStage == 0 || zeroStage == 3) {
            return Optional.of(what + " are gathered by the distributed optimizer: ZeRO 1 or 2 (Megatron core's "
                    + "--use-distributed-optimizer), not ZeRO " + zeroStage + (zeroStage == 3 ? " (not modelled)"
                    : ""));
        }
        if (loraRank > 0) {
            return Optional.of(what + " with LoRA are not modelled (the frozen weights are not gathered)");
        }
        return Optional.empty();
    }

    /**
     * Whether expert parallelism's token dispatch and combine run behind another micro-batch's compute (Megatron
     * core's {@code overlap_moe_expert_parallel_comm}, Megatron-Bridge's {@code moe_a2a_overlap}: the forward pass
     * of one micro-batch beside the backward pass of another, layer by layer), so only what a layer's compute does
     * not cover stays exposed. False by default: each all-to-all on the critical path. As Megatron core, refused
     * without expert parallelism, in FP32 or TF32, with pipeline parallelism but no virtual stages, with full
     * recomputation, and in inference ({@link Recompute#AUTO} then recomputes selectively at most).
     */
    public boolean expertCommOverlap() {
        return expertCommOverlap;
    }

    /**
     * How expert parallelism moves the tokens to their experts (Megatron core's {@code moe_token_dispatcher_type}
     * and flex backend): {@link MoeDispatcher#ALLTOALL} by default; the all-gather moves every other rank's tokens;
     * DeepEP and HybridEP are predicted as the all-to-all. Refused without expert parallelism.
     */
    public MoeDispatcher moeDispatcher() {
        return moeDispatcher;
    }

    /**
     * A choice of the training schedule that a job's software makes and its description may leave out: where a job
     * does not state it, a prediction takes the default and says what the other choice would cost.
     */
    public enum ScheduleChoice {
        /** When the data-parallel collectives run ({@link #gradReduce()}). */
        GRAD_REDUCE,
        /** Whether the experts' all-to-all runs behind another micro-batch ({@link #expertCommOverlap()}). */
        EXPERT_COMM_OVERLAP,
        /** What of the iteration runs as CUDA graphs ({@link #cudaGraphs()}). */
        CUDA_GRAPHS
    }

    /**
     * Whether the job states a schedule choice (its builder's setter was called, with any value, default or not): a
     * prediction then takes it as given and does not note it as assumed.
     */
    public boolean states(ScheduleChoice choice) {
        return stated.contains(Objects.requireNonNull(choice, "choice"));
    }

    /**
     * Why Megatron core would not run the experts' all-to-all overlap ({@link #expertCommOverlap()}) with this
     * layout, precision and recomputation (its {@code TransformerConfig} conditions), in words; empty where it would.
     */
    public static Optional<String> expertCommOverlapRefusal(Parallelism par, Precision precision, Recompute recompute) {
        String why = par.expert() == 1 ? "expert parallelism (an expert-parallel degree above 1)"
                : par.pipeline() > 1 && par.virtualStages() == 1 ? "virtual pipeline stages (an interleaved "
                        + "schedule) with pipeline parallelism " + par.pipeline()
                : recompute == Recompute.FULL ? "no full recomputation (Megatron core refuses both together)"
                : null;
        return why == null ? expertCommOverlapRefusal(precision) : Optional.of(OVERLAP_NEEDS + why);
    }

    /**
     * Whether Megatron core runs the experts' all-to-all overlap ({@link #expertCommOverlap()}) for a job of these
     * settings and it hides something: training, more than one micro-batch, and none of the refusals
     * ({@link #expertCommOverlapRefusal(Parallelism, Precision, Recompute)}, the dispatcher's, recompute module
     * {@code moe}).
     */
    public static boolean expertCommOverlapRuns(Phase phase, Parallelism par, Precision precision, Recompute recompute,
            Set<RecomputeModule> modules, MoeDispatcher dispatcher) {
        return phase == Phase.TRAIN && par.microBatches() > 1
                && expertCommOverlapRefusal(par, precision, recompute).isEmpty()
                && !modules.contains(RecomputeModule.MOE) && expertCommOverlapRefusal(dispatcher).isEmpty();
    }

    /** Why Megatron core would not run the experts' all-to-all overlap with this dispatcher; empty where it would. */
    public static Optional<String> expertCommOverlapRefusal(MoeDispatcher dispatcher) {
        return dispatcher == MoeDispatcher.ALLGATHER ? Optional.of(OVERLAP_NEEDS + "the alltoall or a flex "
                + "dispatcher, not allgather (Megatron core refuses both together)") : Optional.empty();
    }

    /** Why Megatron core would not run the experts' all-to-all overlap in this precision; empty where it would. */
    public static Optional<String> expertCommOverlapRefusal(Precision precision) {
        return precision.isMixed() ? Optional.empty() : Optional.of(OVERLAP_NEEDS + "a 16-bit model (bf16, fp16, or "
                + "an fp8/fp4 recipe), not " + precision.label());
    }

    private static final String OVERLAP_NEEDS = "overlapping the experts' all-to-all with another micro-batch "
            + "(overlap_moe_expert_parallel_comm) needs ";

    /**
     * What of the iteration runs as CUDA graphs ({@link CudaGraphs}): the host's per-layer dispatch time it saves;
     * {@link CudaGraphs#NONE} (Megatron's default) by default.
     */
    public CudaGraphs cudaGraphs() {
        return cudaGraphs;
    }

    /**
     * How the framework lays out an imported graph's feature maps ({@link MemoryFormat}): {@link MemoryFormat#NCHW},
     * ONNX's layout and PyTorch's default, by default. Charged on the convolutions of GPUs whose fast kernels want
     * the channels last.
     */
    public MemoryFormat memoryFormat() {
        return memoryFormat;
    }

    /** Bytes of a parameter's gradient buffer: 2 with {@link #sixteenBitGradients()}, else the precision's. */
    public double gradientBytes() {
        return sixteenBitGradients() ? 2 : precision.gradientBytes();
    }

    /**
     * The settings given that only a transformer built from its configuration carries (its layer roles tell which
     * layers they change): LoRA, offloaded activations, packed documents, context, expert and expert-tensor
     * parallelism, an expert imbalance, 16-bit gradients, the gradients' reduction after the backward pass, FP8
     * weights as the parameters, the experts' all-to-all overlap, recompute modules other than the attention core,
     * CUDA graphs, full or selective recomputation and a ZeRO stage above 0 (an imported graph's execution recomputes nothing and keeps every
     * optimizer state on each rank), in words; empty when none is given. Predictors of imported graphs refuse a
     * workload that gives any.
     */
    public java.util.List<String> transformerOnlySettings() {
        java.util.List<String> out = new java.util.ArrayList<>();
        if (recompute == Recompute.FULL || recompute == Recompute.SELECTIVE) {
            out.add(recompute.label() + " recomputation" + (recomputeLayers > 0 ? " of the first " + recomputeLayers
                    + " layers" : ""));
        }
        if (parallelism.zeroStage() > 0) {
            out.add("ZeRO stage " + parallelism.zeroStage());
        }
        if (loraRank > 0) {
            out.add("LoRA (rank " + loraRank + ")");
        }
        if (offloadLayers > 0) {
            out.add("activations of " + offloadLayers + " layers offloaded");
        }
        if (documentTokens > 0) {
            out.add("packed documents (" + documentTokens + " tokens)");
        }
        if (parallelism.context() > 1) {
            out.add("context parallelism " + parallelism.context());
        }
        if (parallelism.expert() > 1) {
            out.add("expert parallelism " + parallelism.expert());
        }
        if (parallelism.expertTensor() > 1) {
            out.add("expert tensor parallelism " + parallelism.expertTensor());
        }
        if (expertImbalance != 1) {
            out.add("expert imbalance " + expertImbalance);
        }
        if (Boolean.TRUE.equals(sixteenBitGradients)) {
            out.add("16-bit gradients");
        }
        if (gradReduce == GradReduce.AFTER_BACKWARD) {
            out.add("gradient reduction after the backward pass");
        } else if (gradReduce == GradReduce.GATHER_AFTER_STEP) {
            out.add("the updated weights' gather after the optimizer step");
        }
        if (fp8ParamGather) {
            out.add("FP8 weights as the parameters");
        }
        if (expertCommOverlap) {
            out.add("the experts' all-to-all overlapped");
        }
        if (!recomputeModules.equals(RecomputeModule.DEFAULT)) {
            out.add("recompute modules " + RecomputeModule.label(recomputeModules));
        }
        if (cudaGraphs != CudaGraphs.NONE) {
            out.add("CUDA graphs (" + cudaGraphs.label() + ")");
        }
        return java.util.List.copyOf(out);
    }

    /** Free-form tags (e.g. {@code model}, {@code family}, {@code resolution}). */
    public Map<String, String> tags() {
        return tags;
    }

    /** One tag. */
    public Optional<String> tag(String key) {
        return Optional.ofNullable(tags.get(Objects.requireNonNull(key, "key")));
    }

    /**
     * A builder initialised from this workload (an overlap asked for where Megatron core runs it,
     * {@link Builder#expertCommOverlapWhereRun}, and FP8 weights asked for where the job can run them,
     * {@link Builder#fp8ParamGatherWhereRun}, are asked so again, for the copy's own settings).
     */
    public Builder toBuilder() {
        Builder b = new Builder(graph).batch(batch).phase(phase).parallelism(parallelism).threads(threads)
                .precision(precision).recompute(recompute).recomputeLayers(recomputeLayers)
                .recomputeModules(recomputeModules).offloadLayers(offloadLayers)
                .expertImbalance(expertImbalance).lora(loraRank).unevenPipeline(unevenPipeline)
                .documentTokens(documentTokens).gradReduce(gradReduce)
                .fp8ParamGather(fp8ParamGather)
                .expertCommOverlap(expertCommOverlap).cudaGraphs(cudaGraphs).memoryFormat(memoryFormat)
                .moeDispatcher(moeDispatcher);
        if (overlapWhereRun) {
            // asked for where it runs (a table's default, a layout search's): asked so again, for the copy's layout
            b.expertCommOverlapWhereRun(overlapAsked);
        }
        if (fp8WhereRun) {
            // so too FP8 weights asked for where the job can run them: the copy's precision or stage may take them
            b.fp8ParamGatherWhereRun(fp8Asked);
        }
        b.sixteenBitGradients = sixteenBitGradients;
        b.stated = java.util.EnumSet.copyOf(stated);
        b.precisionGiven = precisionGiven;
        b.device = device;
        b.topology = topology;
        b.tags.putAll(tags);
        return b;
    }

    @Override
    public String toString() {
        int m = parallelism.microBatches();
        // (the batch is a replica's iteration's: a caller's --batch is the micro-batch, said beside it)
        return graph.name() + " batch=" + batch + (m > 1 ? " (a replica's iteration: " + batch / m
                + " a micro-batch x " + m + " micro-batches)" : "") + " "
                + phase.label() + " data-parallel=" + parallelism.data()
                + (parallelism.isDataOnly() && parallelism.expert() == 1 && parallelism.zeroStage() == 0 ? ""
                        : " gpus=" + worldSize() + " (" + parallelism + ")")
                // a GPU job's host threads are no setting of it (a CPU worker's are)
                + (device != null && device.isGpu() ? "" : " threads=" + threads)
                + (device == null ? "" : " device=" + device.name())
                + " precision=" + precision.label()
                + (recompute == Recompute.NONE || recompute == Recompute.AUTO ? "" : " recompute=" + recomputeLabel())
                + (offloadLayers > 0 ? " offload-layers=" + offloadLayers : "")
                + (loraRank > 0 ? " lora=" + loraRank : "") + (unevenPipeline ? " uneven-pipeline" : "")
                + (documentTokens > 0 ? " documents=" + documentTokens : "")
                + (sixteenBitGradients == null ? "" : " grad-dtype="
                        + gradDtypeLabel(sixteenBitGradients, precision))
                + (gradReduce != GradReduce.OVERLAPPED ? " grad-reduce=" + gradReduce.label() : "")
                + (fp8ParamGather ? " fp8-param-gather" : "")
                + (expertCommOverlap ? " moe-a2a-overlap" : "")
                + (moeDispatcher != MoeDispatcher.ALLTOALL ? " moe-dispatcher=" + moeDispatcher.label() : "")
                + (cudaGraphs != CudaGraphs.NONE ? " cuda-graphs=" + cudaGraphs.label() : "")
                + (memoryFormat != MemoryFormat.NCHW ? " memory-format=" + memoryFormat.label() : "");
    }

    /**
     * The job in one line, with every setting that changes its prediction, each as the prediction takes it: the graph
     * (its {@link ModelGraph#structure()}, not its name: one configuration read from two files or logs is one model,
     * two configurations of one folder's name are two), the
     * batch, phase and layout, the host threads of a CPU worker, the device, precision, topology (the device's
     * standard system where none is given, as predicted), the recomputation as asked (with its layers and modules),
     * offloading, the experts' imbalance, LoRA, the pipeline's split, documents, the gradients' type, the collectives'
     * schedules, FP8 weights, the dispatcher, CUDA graphs and the memory format. Two workloads of one identity are one
     * job: a calibration weighs its repeats as one run, and a plan counts them once (tags, such as a run's id or
     * source, are no part of it). The form is for comparing, not reading ({@link #toString()} is).
     */
    public String identity() {
        Topology t = topology != null ? topology : device != null && device.isGpu() ? Topology.assumedFor(device)
                : null;
        String machine = t == null ? "none" : t.gpusPerNode() + "/" + t.link() + "/" + t.intraNodeGBps() + "/"
                + t.interNodeGbps() + "/" + t.interNodeLatencyUs() + "/" + t.nvlinkDomain();
        return graph.structure() + "|" + graph.size() + "|" + graph.parameterCount() + "|"
                + graph.transformer().map(Object::toString).orElse("") + "|batch=" + batch + "|" + phase
                + "|" + parallelism.label() + "|threads=" + (device != null && device.isGpu() ? "" : threads)
                + "|device=" + (device == null ? "" : device.name()) + "|" + precision.label() + "|topology="
                + machine + "|recompute=" + recompute.label() + ":" + recomputeLayers + ":"
                + RecomputeModule.label(recomputeModules) + "|offload=" + offloadLayers + "|imbalance="
                + expertImbalance + "|lora=" + loraRank + "|uneven=" + unevenPipeline + "|documents="
                + documentTokens + "|grad16=" + sixteenBitGradients() + "|" + gradReduce + "|fp8gather="
                + fp8ParamGather + "|a2a=" + expertCommOverlap + "|" + moeDispatcher + "|" + cudaGraphs + "|"
                + memoryFormat;
    }

    /** Builds a {@link Workload}. */
    public static final class Builder {
        private final ModelGraph graph;
        private int batch = 1;
        private Phase phase = Phase.TRAIN;
        private Parallelism parallelism = Parallelism.none();
        private int threads = 1;
        private Device device;
        private Precision precision = Precision.FP32;
        private Topology topology;
        private Recompute recompute = Recompute.AUTO;
        private int recomputeLayers;
        private Set<RecomputeModule> recomputeModules = RecomputeModule.DEFAULT;
        private int offloadLayers;
        private double expertImbalance = 1;
        private int loraRank;
        private boolean unevenPipeline;
        private int documentTokens;
        private Boolean sixteenBitGradients;
        private GradReduce gradReduce = GradReduce.OVERLAPPED;
        private boolean fp8ParamGather;
        private boolean fp8WhereRun;
        private boolean expertCommOverlap;
        private boolean overlapWhereRun;
        private MoeDispatcher moeDispatcher = MoeDispatcher.ALLTOALL;
        private CudaGraphs cudaGraphs = CudaGraphs.NONE;
        private java.util.EnumSet<ScheduleChoice> stated = java.util.EnumSet.noneOf(ScheduleChoice.class);
        private boolean precisionGiven;
        private MemoryFormat memoryFormat = MemoryFormat.NCHW;
        private final Map<String, String> tags = new TreeMap<>();

        private Builder(ModelGraph graph) {
            this.graph = Objects.requireNonNull(graph, "graph");
        }

        /** Samples per worker (positive). */
        public Builder batch(int value) {
            Checks.argument(value > 0, "batch must be positive: %s", value);
            this.batch = value;
            return this;
        }

        /** Phase. */
        public Builder phase(Phase value) {
            this.phase = Objects.requireNonNull(value, "phase");
            return this;
        }

        /**
         * Data-parallel workers (positive): {@code parallelism(Parallelism.data(value))}.
         *
         * @throws IllegalArgumentException after a {@link #parallelism} of more than data parallelism, which this
         *                                  would replace (give the data degree in it instead)
         */
        public Builder worldSize(int value) {
            Checks.argument(value > 0, "world size must be positive: %s", value);
            Checks.argument(parallelism.equals(Parallelism.data(parallelism.data())), "worldSize(%s) would replace "
                    + "the parallelism %s set before it: give the data-parallel degree in the Parallelism itself "
                    + "(Parallelism.of(data, tensor, pipeline, micro-batches) and its with... settings)", value,
                    parallelism);
            this.parallelism = Parallelism.data(value);
            return this;
        }

        /** Data, tensor and pipeline parallelism (replacing a {@link #worldSize} set before: it is the data degree). */
        public Builder parallelism(Parallelism value) {
            this.parallelism = Objects.requireNonNull(value, "parallelism");
            return this;
        }

        /** Intra-op threads per worker (positive). */
        public Builder threads(int value) {
            Checks.argument(value > 0, "threads must be positive: %s", value);
            this.threads = value;
            return this;
        }

        /** Sets the accelerator the workload runs on. */
        public Builder device(Device value) {
            this.device = Objects.requireNonNull(value, "device");
            return this;
        }

        /** The arithmetic it runs in (default FP32: a GPU job left at it is said, {@link Workload#precisionGiven}). */
        public Builder precision(Precision value) {
            this.precision = Objects.requireNonNull(value, "precision");
            this.precisionGiven = true;
            return this;
        }

        /** The machines its devices sit in (default: the standard server of the device's form factor). */
        public Builder topology(Topology value) {
            this.topology = Objects.requireNonNull(value, "topology");
            return this;
        }

        /** Activation recomputation in training (default auto: what the job needs to fit in memory). */
        public Builder recompute(Recompute value) {
            this.recompute = Objects.requireNonNull(value, "recompute");
            return this;
        }

        /**
         * With full recomputation, only the first {@code value} layers of each pipeline stage's model chunk (0, the
         * default: every layer).
         *
         * @throws IllegalArgumentException when negative ({@link #build} refuses a positive value without
         *         {@link Recompute#FULL})
         */
        public Builder recomputeLayers(int value) {
            Checks.argument(value >= 0, "recompute layers must be >= 0: %s", value);
            this.recomputeLayers = value;
            return this;
        }

        /**
         * What selective recomputation recomputes (Megatron core's {@code recompute_modules}; default
         * {@link RecomputeModule#DEFAULT}, the attention core). Other modules make {@link Recompute#AUTO} (the
         * default) selective; {@link #build} refuses them with {@link Recompute#NONE} or {@link Recompute#FULL}.
         *
         * @throws IllegalArgumentException when empty
         */
        public Builder recomputeModules(Set<RecomputeModule> value) {
            Checks.argument(!Objects.requireNonNull(value, "recompute modules").isEmpty(),
                    "recompute modules must name at least one module");
            value.forEach(m -> Objects.requireNonNull(m, "a module of the recompute modules"));
            this.recomputeModules = value.equals(RecomputeModule.DEFAULT) ? RecomputeModule.DEFAULT
                    : Collections.unmodifiableSet(java.util.EnumSet.copyOf(value));
            return this;
        }

        /**
         * The first {@code value} layers of each pipeline stage's model chunk keep their saved activations in host
         * memory ({@link Workload#offloadLayers()}; 0, the default: none).
         *
         * @throws IllegalArgumentException when negative ({@link #build} refuses a positive value with
         *         {@link Recompute#FULL} or outside training)
         */
        public Builder offloadLayers(int value) {
            Checks.argument(value >= 0, "offload layers must be >= 0: %s", value);
            this.offloadLayers = value;
            return this;
        }

        /**
         * The busiest expert-parallel rank's routed tokens over its share (1 balanced, the default; at most 64).
         *
         * @throws IllegalArgumentException outside [1, 64]
         */
        public Builder expertImbalance(double value) {
            Checks.argument(Double.isFinite(value) && value >= 1 && value <= 64, "expert imbalance must be in [1, 64]: "
                    + "%s", value);
            this.expertImbalance = value;
            return this;
        }

        /**
         * LoRA fine-tuning with adapters of this rank on every linear projection of the blocks, the model's weights
         * frozen (0, the default: every weight trains). NeMo and Megatron-Bridge default to rank 32.
         *
         * @throws IllegalArgumentException outside [0, 4096] ({@link #build} refuses a positive rank outside training)
         */
        public Builder lora(int rank) {
            Checks.argument(rank >= 0 && rank <= 4096, "LoRA rank must be in [0, 4096]: %s", rank);
            this.loraRank = rank;
            return this;
        }

        /**
         * Lets a transformer's layers be split unevenly over the pipeline's chunks where no even split exists (default
         * false: refused).
         */
        public Builder unevenPipeline(boolean value) {
            this.unevenPipeline = value;
            return this;
        }

        /**
         * Packed sequences of documents of this many tokens (effective length; 0, the default: one document a
         * sequence).
         *
         * @throws IllegalArgumentException when negative
         */
        public Builder documentTokens(int value) {
            Checks.argument(value >= 0, "document tokens must be >= 0: %s", value);
            this.documentTokens = value;
            return this;
        }

        /**
         * Gradient buffers in 16 bits (true) or FP32 (false) ({@link Workload#sixteenBitGradients()}); by default the
         * precision's (16 bits in FP16 training, FP32 otherwise).
         */
        public Builder sixteenBitGradients(boolean value) {
            this.sixteenBitGradients = value;
            return this;
        }


        /**
         * When the data-parallel collectives run ({@link Workload#gradReduce()}); {@link GradReduce#OVERLAPPED} by
         * default. {@link GradReduce#GATHER_AFTER_STEP} is refused at {@link #build()} outside ZeRO 1 and 2, any
         * choice but the default in inference. Called, the job states the choice ({@link Workload#states}).
         */
        public Builder gradReduce(GradReduce value) {
            this.gradReduce = Objects.requireNonNull(value, "gradReduce");
            this.stated.add(ScheduleChoice.GRAD_REDUCE);
            return this;
        }

        /**
         * FP8 weights as the parameters ({@link Workload#fp8ParamGather()}); false by default. Refused at
         * {@link #build()} where the job cannot run them ({@link Workload#fp8ParamGatherRefusal}).
         */
        public Builder fp8ParamGather(boolean value) {
            this.fp8ParamGather = value;
            this.fp8WhereRun = false;
            return this;
        }

        /**
         * FP8 weights as the parameters where the job can run them ({@link Workload#fp8ParamGatherRefusal} empty),
         * off elsewhere: a default over jobs of many precisions and stages, as a candidate table's.
         */
        public Builder fp8ParamGatherWhereRun(boolean value) {
            this.fp8ParamGather = value;
            this.fp8WhereRun = true;
            return this;
        }

        /**
         * The experts' all-to-all run behind another micro-batch's compute ({@link Workload#expertCommOverlap()});
         * false by default. Called, with either value, the job states the choice ({@link Workload#states}).
         */
        public Builder expertCommOverlap(boolean value) {
            this.expertCommOverlap = value;
            this.overlapWhereRun = false;
            this.stated.add(ScheduleChoice.EXPERT_COMM_OVERLAP);
            return this;
        }

        /**
         * The experts' all-to-all behind another micro-batch's compute where Megatron core runs it and it hides
         * something, off elsewhere (where {@link #expertCommOverlap} would be refused, or the job has one micro-batch):
         * a default over jobs of many layouts, as a candidate table's or a layout search's. Called, the job states the
         * choice ({@link Workload#states}).
         */
        public Builder expertCommOverlapWhereRun(boolean value) {
            expertCommOverlap(value);
            this.overlapWhereRun = value;
            return this;
        }

        /**
         * How expert parallelism moves the tokens ({@link Workload#moeDispatcher()}); all-to-all by default
         * ({@link #build} refuses another without expert parallelism).
         */
        public Builder moeDispatcher(MoeDispatcher value) {
            this.moeDispatcher = Objects.requireNonNull(value, "moeDispatcher");
            return this;
        }

        /**
         * What of the iteration runs as CUDA graphs ({@link Workload#cudaGraphs()}); none by default. Called, the job
         * states the choice ({@link Workload#states}).
         */
        public Builder cudaGraphs(CudaGraphs value) {
            this.cudaGraphs = Objects.requireNonNull(value, "cudaGraphs");
            this.stated.add(ScheduleChoice.CUDA_GRAPHS);
            return this;
        }

        /** How the feature maps are laid out ({@link Workload#memoryFormat()}); NCHW by default. */
        public Builder memoryFormat(MemoryFormat value) {
            this.memoryFormat = Objects.requireNonNull(value, "memoryFormat");
            return this;
        }

        /** Adds a tag. */
        public Builder tag(String key, String value) {
            tags.put(Objects.requireNonNull(key, "tag key"), Objects.requireNonNull(value, "tag value"));
            return this;
        }

        /** The workload. */
        public Workload build() {
            return new Workload(this);
        }
    }
}
