package org.scaledl.cli;

import java.util.List;
import java.util.Optional;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Device;
import org.scaledl.workload.MemoryFormat;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import picocli.CommandLine.Option;

/**
 * The options of a job on GPUs that {@code predict}, {@code scaling} and {@code layouts} share: precision, the
 * machines (GPUs per node, the NVLink domain and the network between nodes; the link comes from the device's
 * description) and, for transformers, recomputation, sequence, context, expert and interleaved pipeline parallelism,
 * ZeRO, and the experts' load imbalance.
 */
final class ClusterOptions {
    @Option(names = "--precision", description = "fp32, tf32, fp16, bf16, fp8, fp8-block, mxfp8 or nvfp4 (fp16 and "
            + "bf16: mixed precision; fp8 and fp4: Transformer Engine recipes; default fp32, warned of; in layouts, "
            + "fp16)",
            converter = PrecisionConverter.class)
    Precision precision;

    @Option(names = "--gpus-per-node", description = "GPUs in one node or tray (default: the device's standard "
            + "system, 8; 4 for GB200/GB300)")
    Integer gpusPerNode;

    @Option(names = "--nvlink-domain", description = "GPUs one NVLink domain joins (default: the device's standard "
            + "system: the node; 72 for GB200/GB300 NVL72)")
    Integer nvlinkDomain;

    @Option(names = "--inter-node-gbps", description = "Network bandwidth of one node, all adapters together, "
            + "Gb/s (default: the device's standard system, e.g. 400 per GPU for H100 and B200, 200 for A100; 100 "
            + "per node for PCIe cards)")
    Double interNodeGbps;

    @Option(names = "--context", description = "Context-parallel degree: each sequence split this many ways "
            + "(transformers; default 1)")
    Integer context;

    @Option(names = "--virtual-stages", description = "Interleaved model chunks per pipeline stage (default 1)")
    Integer virtualStages;

    @Option(names = "--expert", description = "Expert-parallel degree over data x context x tensor ranks (with "
            + "--expert-tensor; Megatron's MoE parallel folding; mixtures of experts; default 1)")
    Integer expert;

    @Option(names = "--expert-tensor", description = "Expert tensor parallelism: each expert split this many ways, "
            + "its expert group spanning expert x this many adjacent ranks (default 1 with --expert above 1, as the "
            + "published recipes set it; without it, the tensor parallelism, as Megatron-Core and serving "
            + "engines shard experts)")
    Integer expertTensor;

    @Option(names = "--zero-stage", description = "ZeRO stage of the data-parallel optimizer, 0 to 3 (1: Megatron's "
            + "distributed optimizer, 3: FSDP; default 0; layouts searches stages 0, 1 and 3, 3 only without a "
            + "pipeline, and only this one where given)")
    Integer zeroStage;

    @Option(names = "--expert-imbalance", description = "The busiest expert rank's tokens over its share (default 1: "
            + "balanced; at most expert ranks x min(top-k, experts a rank) / top-k, what a rank can receive; layouts "
            + "takes each layout's most where this is more)")
    Double expertImbalance;

    @Option(names = "--recompute", description = "Activation recomputation of transformer training: none, "
            + "selective, full or auto (default auto: none where the job fits in memory, else the least that makes "
            + "it fit, and a note says which)", converter = RecomputeConverter.class)
    Recompute recompute;

    @Option(names = "--recompute-modules", description = "What selective recomputation recomputes: Megatron core's "
            + "recompute_modules, separated by commas or +: core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, "
            + "shared_experts (default core_attn; implies --recompute selective)",
            converter = RecomputeModulesConverter.class)
    java.util.Set<org.scaledl.workload.RecomputeModule> recomputeModules;

    @Option(names = "--recompute-layers", description = "With --recompute full, only the first N layers of each "
            + "pipeline stage's model chunk (Megatron's block method; default every layer)")
    Integer recomputeLayers;

    @Option(names = "--offload-layers", description = "Training: the first N layers of each pipeline stage's model "
            + "chunk keep their saved activations in the host's memory (Megatron's activation offloading; not with "
            + "--recompute full; default 0, or with recompute auto on a Grace superchip the fewest that fit)")
    Integer offloadLayers;

    @Option(names = "--lora-rank", description = "LoRA fine-tuning: adapters of this rank on every linear "
            + "projection, the model's weights frozen (NeMo and Megatron-Bridge use 32; default 0: every weight "
            + "trains)")
    Integer loraRank;

    @Option(names = "--document-tokens", description = "Packed sequences: tokens of the documents packed into each "
            + "sequence (attention runs within a document); default (or 0): one document a sequence")
    Integer documentTokens;

    @Option(names = "--grad-dtype", description = "Gradient buffers, reduced across data-parallel ranks in their "
            + "own type: fp32, or 16 bits: bf16 or fp16 (2 bytes a parameter less memory, optimizer traffic and "
            + "reduction: Megatron-Bridge's and NeMo's performance recipes, grad_reduce_in_fp32 false). Default: "
            + "fp16 in fp16 training (Megatron-LM, DeepSpeed), fp32 otherwise (Megatron-LM's bf16 default)",
            converter = GradDtypeConverter.class)
    String gradDtype;

    @Option(names = "--grad-reduce", description = "When the data-parallel gradient reduction runs: overlapped "
            + "(default) with the last micro-batch's backward pass, as Megatron-core's overlap_grad_reduce (NeMo's and "
            + "Megatron-Bridge's recipes), PyTorch DDP with its buckets and FSDP run it, the distributed optimizer's "
            + "gather of the updated weights with the first one's forward pass (overlap_param_gather); "
            + "gather-after-step, the reduction overlapped and the gather exposed after the optimizer step (Megatron "
            + "core without overlap_param_gather, Megatron-LM's default for it; ZeRO 1 or 2 only); or after-backward, "
            + "both exposed whole, as Megatron-LM's local DDP (before 2023, and its default without "
            + "--overlap-grad-reduce), Megatron-DeepSpeed, DeepSpeed's ZeRO 1-2 without overlap_comm and PyTorch DDP "
            + "with its buckets off run it",
            converter = GradReduceConverter.class)
    String gradReduce;

    @Option(names = "--fp8-param-gather", description = "The low-precision linear layers keep their weights in the "
            + "recipe's format alone, as Megatron core's --fp8-param-gather (Megatron-Bridge's fp8_param_gather, "
            + "NeMo's fp8_params; on in Megatron-Bridge's FP8 recipes) runs them: no 16-bit copy beside the quantised "
            + "one (2 bytes a weight less memory), and a per-tensor or blockwise FP8 recipe's updated weights "
            + "gathered in FP8 (MX-FP8's in 16 bits). Needs --precision fp8, fp8-block or mxfp8, training and the distributed optimizer (--zero-stage 1 "
            + "or 2; layouts then searches stage 1). Default: off, Megatron-LM's")
    boolean fp8ParamGather;

    @Option(names = "--moe-a2a-overlap", description = "Expert parallelism's token dispatch and combine run behind "
            + "another micro-batch's compute, layer by layer (Megatron core's overlap_moe_expert_parallel_comm, "
            + "Megatron-Bridge's moe_a2a_overlap): only what a layer's compute does not cover stays exposed (needs "
            + "--expert > 1, a 16-bit model, with a pipeline virtual stages, and no full recomputation, as Megatron "
            + "core; with --candidates, a default for the table's rows with expert parallelism; default: each "
            + "all-to-all on the critical path, assumed and said; --moe-a2a-overlap=false states it)",
            arity = "0..1")
    Boolean moeA2aOverlap;

    @Option(names = "--moe-dispatcher", description = "How expert parallelism moves the tokens (Megatron core's "
            + "moe_token_dispatcher_type and flex backend): alltoall (default), allgather (every other rank's tokens), "
            + "deepep or hybridep (flex: a token sent once to each rank holding any of its experts, and permuted into "
            + "the experts' order without a sort; DeepEP's sending it once a node over the network is not described, "
            + "said where the experts' ranks span nodes); needs --expert > 1; with --candidates, a default for the "
            + "table's rows with expert parallelism",
            converter = MoeDispatcherConverter.class)
    org.scaledl.workload.MoeDispatcher moeDispatcher;


    @Option(names = "--cuda-graphs", description = "What of the iteration runs as CUDA graphs: none (default), "
            + "layers (per-layer or per-scope graphs, Megatron core's transformer_layer or Transformer Engine's "
            + "scopes: predicted as none) or iteration (Megatron core's full_iteration graphs: no per-layer host time)",
            converter = CudaGraphsConverter.class)
    CudaGraphs cudaGraphs;


    @Option(names = "--memory-format", description = "How an imported graph's feature maps are laid out: nchw "
            + "(default: ONNX's layout, PyTorch's default) or channels_last (model.to(memory_format="
            + "torch.channels_last)); an NCHW convolution in BF16, FP16 or TF32 on a Hopper or Blackwell GPU takes "
            + "longer, as measured on an H200", converter = MemoryFormatConverter.class)
    MemoryFormat memoryFormat;

    /** The layout of an imported graph's feature maps ({@code --memory-format}), NCHW when not given. */
    MemoryFormat memoryFormat() {
        return memoryFormat == null ? MemoryFormat.NCHW : memoryFormat;
    }

    @Option(names = "--uneven-pipeline", description = "Split a transformer's layers unevenly (balanced) over the "
            + "pipeline's chunks where no even split exists (refused otherwise)")
    boolean unevenPipeline;

    @Option(names = "--sequence-parallel", description = "Megatron's sequence parallelism (with --tensor > 1)")
    boolean sequenceParallel;

    /** The precision, FP32 when not given. */
    Precision precision() {
        return precision == null ? Precision.FP32 : precision;
    }

    /** The recomputation, auto when not given (full when only --recompute-layers N, N at least 1, is). */
    Recompute recompute() {
        boolean layers = recomputeLayers() > 0;
        if (layers && recomputeModules != null) {
            throw org.scaledl.InvalidInputException.of("--recompute-layers (full recomputation of the first layers) "
                    + "and --recompute-modules (what selective recomputation recomputes) cannot both be given");
        }
        if (layers) {
            if (recompute != null && recompute != Recompute.FULL && recompute != Recompute.AUTO) {
                throw org.scaledl.InvalidInputException.of("--recompute-layers needs --recompute full, not "
                        + recompute.label());
            }
            sayAutoGiven("--recompute-layers", "full recomputation of the first layers");
            return Recompute.FULL;
        }
        if (recomputeModules != null) {
            if (recompute != null && recompute != Recompute.SELECTIVE && recompute != Recompute.AUTO) {
                throw org.scaledl.InvalidInputException.of("--recompute-modules needs --recompute selective, not "
                        + recompute.label());
            }
            sayAutoGiven("--recompute-modules", "selective recomputation of those modules");
            return Recompute.SELECTIVE;
        }
        return recompute == null ? Recompute.AUTO : recompute;
    }

    /** Says that a {@code --recompute auto} typed beside an option that fixes the recomputation is not the choice. */
    private void sayAutoGiven(String option, String what) {
        if (recompute == Recompute.AUTO) {
            Main.sayOnSuccess("scaledl: note: --recompute auto beside " + option + " is read as " + what + " (the "
                    + "predictor chooses only where neither is given)");
        }
    }

    /** What selective recomputation recomputes (the attention core when not given). */
    java.util.Set<org.scaledl.workload.RecomputeModule> recomputeModules() {
        return recomputeModules == null ? org.scaledl.workload.RecomputeModule.DEFAULT : recomputeModules;
    }

    /** The layers recomputed per model chunk with full recomputation (0: every layer). */
    int recomputeLayers() {
        return nonNegative(recomputeLayers, "--recompute-layers");
    }

    /** The layers per model chunk whose activations are offloaded to the host (0: none). */
    int offloadLayers() {
        return nonNegative(offloadLayers, "--offload-layers");
    }

    /** A layer count an option gives: 0 when not given; a negative one refused, naming the option. */
    private static int nonNegative(Integer value, String option) {
        if (value == null) {
            return 0;
        }
        if (value < 0) {
            throw new IllegalArgumentException(option + " must be >= 0, got " + value);
        }
        return value;
    }

    /**
     * The topology on a device: the device's standard system with what the options give, or empty when they give
     * nothing (the prediction then says it assumed the standard system).
     */
    Optional<Topology> topology(Device d) {
        if (gpusPerNode == null && interNodeGbps == null && nvlinkDomain == null) {
            return Optional.empty();
        }
        if (gpusPerNode != null && (gpusPerNode <= 0 || gpusPerNode > Topology.MAX_GPUS_PER_NODE)) {
            throw new IllegalArgumentException("--gpus-per-node must be in 1.." + Topology.MAX_GPUS_PER_NODE + ", got "
                    + gpusPerNode);
        }
        if (nvlinkDomain != null && (nvlinkDomain <= 0 || nvlinkDomain > Topology.MAX_DOMAIN)) {
            throw new IllegalArgumentException("--nvlink-domain must be in 1.." + Topology.MAX_DOMAIN + ", got "
                    + nvlinkDomain);
        }
        if (interNodeGbps != null && !(interNodeGbps >= Topology.MIN_GBPS && interNodeGbps <= Topology.MAX_GBPS * 8)) {
            throw new IllegalArgumentException("--inter-node-gbps must be a number in [" + Topology.MIN_GBPS + ", "
                    + Topology.MAX_GBPS * 8 + "] (Gb/s per node), got " + interNodeGbps);
        }
        return Optional.of(Topology.assumedFor(d).with(Optional.ofNullable(gpusPerNode),
                Optional.ofNullable(interNodeGbps), Optional.ofNullable(nvlinkDomain)));
    }

    /**
     * {@code --zero-stage}, 0 where not given.
     *
     * @throws IllegalArgumentException for a stage other than 0 to 3
     */
    int zeroStage() {
        int z = zeroStage == null ? 0 : zeroStage;
        if (z < 0 || z > 3) {
            throw new IllegalArgumentException("--zero-stage must be 0, 1, 2 or 3, got " + z);
        }
        return z;
    }

    /**
     * The parallelism of the given data, tensor and pipeline degrees and micro-batches with these options' sequence,
     * context, expert and interleaved pipeline parallelism and ZeRO stage.
     *
     * @throws IllegalArgumentException naming the option out of range or the degrees that do not go together
     */
    Parallelism parallelism(int data, int tensor, int pipeline, int microBatches,
            org.scaledl.graph.ModelGraph graph) {
        int z = zeroStage();
        int v = positive(virtualStages, "--virtual-stages");
        int c = positive(context, "--context");
        int e = positive(expert, "--expert");
        int et = expertTensor(tensor, e, graph);
        try {
            return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, z, v, c, e, et);
        } catch (IllegalArgumentException x) {
            // degrees that do not go together (sequence parallelism without tensor parallelism, an interleaved
            // schedule without a pipeline, experts not dividing the ranks): bad input, as in a candidate table's row
            throw org.scaledl.InvalidInputException.of(x.getMessage());
        }
    }

    /**
     * {@code --expert-tensor}, or where not given its default for the graph ({@link Parallelism#defaultExpertTensor}:
     * 1 with {@code --expert} above 1, the tensor degree for a mixture of experts without it).
     */
    int expertTensor(int tensor, org.scaledl.graph.ModelGraph graph) {
        return expertTensor(tensor, positive(expert, "--expert"), graph);
    }

    private int expertTensor(int tensor, int e, org.scaledl.graph.ModelGraph graph) {
        return expertTensor == null ? Parallelism.defaultExpertTensor(tensor, e, graph)
                : positive(expertTensor, "--expert-tensor");
    }

    /** When the data-parallel collectives run ({@code --grad-reduce}; empty when not given: overlapped). */
    java.util.Optional<org.scaledl.workload.GradReduce> gradReduce() {
        return java.util.Optional.ofNullable(gradReduce).map(org.scaledl.workload.GradReduce::parse);
    }

    /** Whether gradients are kept in 16 bits ({@code --grad-dtype}; empty when not given: the precision's default). */
    java.util.Optional<Boolean> sixteenBitGradients() {
        return java.util.Optional.ofNullable(gradDtype).map(org.scaledl.workload.Workload::parseGradDtype);
    }

    /**
     * The schedule choices given ({@code --grad-reduce}, {@code --moe-a2a-overlap}, {@code --cuda-graphs}), stated
     * on a job: one not given is left to the job's default, which its prediction notes as assumed; and the token
     * dispatcher ({@code --moe-dispatcher}) where given.
     */
    void stateSchedule(org.scaledl.workload.Workload.Builder b) {
        stateSchedule(b::gradReduce, b::expertCommOverlap, b::cudaGraphs);
        if (fp8ParamGather) {
            b.fp8ParamGather(true);
        }
        if (moeDispatcher != null) {
            b.moeDispatcher(moeDispatcher);
        }
    }

    /**
     * Refuses {@code --moe-a2a-overlap} with {@code --moe-dispatcher allgather}, which Megatron core refuses together:
     * a candidate table's defaults that no row could take (one without a {@code moe_dispatcher} or
     * {@code moe_a2a_overlap} column of its own), where one job given both is refused by its own checks (and a layout
     * search by its own).
     */
    void refuseOverlapWithoutItsDispatcher() {
        if (Boolean.TRUE.equals(moeA2aOverlap) && moeDispatcher != null) {
            org.scaledl.workload.Workload.expertCommOverlapRefusal(moeDispatcher).ifPresent(why -> {
                throw org.scaledl.InvalidInputException.of("--moe-a2a-overlap with --moe-dispatcher "
                        + moeDispatcher.label() + ": " + why);
            });
        }
    }

    /** {@link #stateSchedule(org.scaledl.workload.Workload.Builder)} for every layout of a search. */
    void stateSchedule(org.scaledl.model.LayoutSearch s) {
        stateSchedule(s::gradReduce, s::expertCommOverlap, s::cudaGraphs);
        s.fp8ParamGather(fp8ParamGather);
        if (moeDispatcher != null) {
            s.moeDispatcher(moeDispatcher);
        }
    }

    /** The given schedule choices, each to its setter (a job's builder's, or a layout search's). */
    private void stateSchedule(java.util.function.Consumer<org.scaledl.workload.GradReduce> reduce,
            java.util.function.Consumer<Boolean> expertCommOverlap, java.util.function.Consumer<CudaGraphs> graphs) {
        gradReduce().ifPresent(reduce);
        if (moeA2aOverlap != null) {
            expertCommOverlap.accept(moeA2aOverlap);
        }
        if (cudaGraphs != null) {
            graphs.accept(cudaGraphs);
        }
    }

    /** The packed documents' tokens (0 when not given: one document a sequence). */
    int documentTokens() {
        if (documentTokens == null) {
            return 0;
        }
        if (documentTokens < 0) {
            throw new IllegalArgumentException("--document-tokens must be 0 (one document a sequence) or more, got "
                    + documentTokens);
        }
        return documentTokens;
    }

    /** The LoRA rank (0 when not given: every weight trains). */
    int loraRank() {
        if (loraRank == null) {
            return 0;
        }
        if (loraRank < 0 || loraRank > 4096) {
            throw new IllegalArgumentException("--lora-rank must be in 0..4096, got " + loraRank);
        }
        return loraRank;
    }

    /** The experts' load imbalance (1 when not given). */
    double expertImbalance() {
        if (expertImbalance == null) {
            return 1;
        }
        if (!(expertImbalance >= 1 && expertImbalance <= 64)) {
            throw new IllegalArgumentException("--expert-imbalance must be in [1, 64], got " + expertImbalance);
        }
        return expertImbalance;
    }

    /** A positive option's value (1 when not given). */
    static int positive(Integer value, String option) {
        if (value == null) {
            return 1;
        }
        if (value <= 0) {
            throw new IllegalArgumentException(option + " must be positive, got " + value);
        }
        return value;
    }

    /** The options given that choose a layout (what {@code layouts} searches itself), by name. */
    List<String> layoutChoices() {
        List<String> out = new java.util.ArrayList<>();
        java.util.function.BiConsumer<String, Object> given = (k, v) -> {
            if (v != null) {
                out.add(k);
            }
        };
        // (--context and --expert are layouts' constraints on its ranking: LayoutsCommand.FILTERS)
        given.accept("--expert-tensor", expertTensor);
        given.accept("--virtual-stages", virtualStages);
        given.accept("--recompute", recompute);
        given.accept("--recompute-layers", recomputeLayers);
        given.accept("--recompute-modules", recomputeModules);
        given.accept("--offload-layers", offloadLayers);
        given.accept("--sequence-parallel", sequenceParallel ? Boolean.TRUE : null);
        given.accept("--uneven-pipeline", unevenPipeline ? Boolean.TRUE : null);
        return out;
    }

    /** The options given, as the values of the candidate-table columns a row lacks. */
    void columnDefaults(java.util.Map<String, String> d) {
        java.util.function.BiConsumer<String, Object> put = (k, v) -> {
            if (v != null) {
                d.put(k, v.toString());
            }
        };
        put.accept("precision", precision == null ? null : precision.label());
        put.accept("recompute", recompute == null ? null : recompute.label());
        put.accept("recompute_layers", recomputeLayers);
        put.accept("recompute_modules", recomputeModules == null ? null
                : org.scaledl.workload.RecomputeModule.label(recomputeModules));
        put.accept("offload_layers", offloadLayers);
        put.accept("sequence_parallel", sequenceParallel ? "true" : null);
        put.accept("uneven_pipeline", unevenPipeline ? "true" : null);
        put.accept("document_tokens", documentTokens);
        put.accept("grad_dtype", gradDtype);
        put.accept("grad_reduce", gradReduce);
        put.accept("fp8_param_gather", fp8ParamGather ? "true" : null);
        put.accept("moe_a2a_overlap", moeA2aOverlap == null ? null : moeA2aOverlap.toString());
        put.accept("moe_dispatcher", moeDispatcher == null ? null : moeDispatcher.label());
        put.accept("cuda_graphs", cudaGraphs == null ? null : cudaGraphs.label());
        put.accept("memory_format", memoryFormat == null ? null : memoryFormat.label());
        put.accept("gpus_per_node", gpusPerNode);
        put.accept("nvlink_domain", nvlinkDomain);
        put.accept("inter_node_gbps", interNodeGbps);
        put.accept("context", context);
        put.accept("virtual_stages", virtualStages);
        put.accept("expert", expert);
        put.accept("expert_tensor", expertTensor);
        put.accept("zero_stage", zeroStage);
        put.accept("expert_imbalance", expertImbalance);
    }

    /**
     * Parses an option with a parser of its values; the parser's error, naming the accepted values, is the usage
     * error.
     */
    abstract static class Parsed<T> implements picocli.CommandLine.ITypeConverter<T> {
        private final java.util.function.Function<String, T> parser;

        Parsed(java.util.function.Function<String, T> parser) {
            this.parser = parser;
        }

        @Override
        public T convert(String value) {
            if (value == null || value.isBlank()) {
                // a table's empty cell is its column's default; an option given empty is a slip (a variable unset)
                throw new picocli.CommandLine.TypeConversionException("an empty value (leave the option out for its "
                        + "default)");
            }
            try {
                return parser.apply(value);
            } catch (org.scaledl.InvalidInputException e) {
                throw new picocli.CommandLine.TypeConversionException(e.detail());
            }
        }
    }

    /** Parses {@code --moe-dispatcher}. */
    static final class MoeDispatcherConverter extends Parsed<org.scaledl.workload.MoeDispatcher> {
        MoeDispatcherConverter() {
            super(org.scaledl.workload.MoeDispatcher::parse);
        }
    }

    /** Parses {@code --cuda-graphs}. */
    static final class CudaGraphsConverter extends Parsed<CudaGraphs> {
        CudaGraphsConverter() {
            super(CudaGraphs::parse);
        }
    }

    /** Parses {@code --memory-format}. */
    static final class MemoryFormatConverter extends Parsed<MemoryFormat> {
        MemoryFormatConverter() {
            super(MemoryFormat::parse);
        }
    }

    /** Parses {@code --precision}. */
    static final class PrecisionConverter extends Parsed<Precision> {
        PrecisionConverter() {
            super(Precision::parse);
        }
    }

    /** Parses {@code --recompute}. */
    static final class RecomputeConverter extends Parsed<Recompute> {
        RecomputeConverter() {
            super(Recompute::parse);
        }
    }

    /** Parses {@code --recompute-modules}. */
    static final class RecomputeModulesConverter extends Parsed<java.util.Set<org.scaledl.workload.RecomputeModule>> {
        RecomputeModulesConverter() {
            super(org.scaledl.workload.RecomputeModule::parseList);
        }
    }

    /**
     * Checks a text option with a parser of its values, keeping it as given (for the candidate column it fills).
     */
    abstract static class CheckedText extends Parsed<String> {
        CheckedText(java.util.function.Consumer<String> parser) {
            super(v -> {
                parser.accept(v);
                return v;
            });
        }
    }

    /** Checks {@code --grad-dtype}. */
    static final class GradDtypeConverter extends CheckedText {
        GradDtypeConverter() {
            super(org.scaledl.workload.Workload::parseGradDtype);
        }
    }

    /** Checks {@code --grad-reduce}. */
    static final class GradReduceConverter extends CheckedText {
        GradReduceConverter() {
            super(org.scaledl.workload.GradReduce::parse);
        }
    }
}
