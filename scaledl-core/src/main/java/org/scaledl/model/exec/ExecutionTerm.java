package org.scaledl.model.exec;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The named terms of a Megatron iteration ({@link MegatronTerms}) and how a fitted {@link MegatronModel} scales each:
 * its saved name, where it enters the iteration time ({@link Fit}), the coefficient it has before any fit (its prior)
 * and whether a fit pulls its coefficient toward the prior (the physical scales, which physics puts at 1) or leaves it
 * free (the host's and the fixed costs, which only data can tell). A term added in a later release is read from an
 * older file as its prior (a refinement, {@link #parent()}, as its parent's coefficient), so old files load and
 * predict as they did, except where the physics of a term itself changed (the CHANGELOG names each such change:
 * expert groups of {@code e·et} ranks, LatentMoE's dispatch width, the fused attention core).
 *
 * <pre>{@code
 * for (ExecutionTerm t : ExecutionTerm.values()) {
 *     System.out.println(t.key() + " " + t.fit() + " prior " + t.prior());
 * }
 * }</pre>
 */
public enum ExecutionTerm {
    /** Contractions in 16-bit, TF32 or FP32 (GEMMs, batched products): each at least its floor. */
    DENSE("dense", Fit.GPU, 1, true),
    /** Every other layer: norms, softmax, element-wise, embedding look-ups, copies, the quantisation of FP8/FP4. */
    OTHER("other", Fit.GPU, 1, true),
    /** Tensor-parallel all-reduces (or reduce-scatters and all-gathers) on the critical path. */
    TENSOR_COMM("tensor_comm", Fit.GPU, 1, true),
    /**
     * The host's time per layer execution (ms per layer step): the framework's dispatch, a smooth max with the GPU.
     * None where the whole iteration runs as CUDA graphs ({@link org.scaledl.workload.CudaGraphs#ITERATION}), for
     * this term and {@link #EXPERT_LAYER_STEP}.
     */
    LAYER_STEP("ms_per_layer_step", Fit.HOST, 0, false),
    /** A fixed cost per pipeline hand-off (ms per send). */
    SEND("ms_per_send", Fit.ADDITIVE, 0, false),
    /** The hand-offs' transfer time at the link's bandwidth. */
    PIPELINE_COMM("pipeline_comm", Fit.ADDITIVE, 1, true),
    /** The data-parallel gradient reduction (and ZeRO-3's parameter gathers) left exposed. */
    DATA_COMM("data_comm", Fit.OVERLAP, 1, true),
    /** The optimizer step at the memory bandwidth. */
    OPTIMIZER("optimizer", Fit.ADDITIVE, 1, true),
    /** A fixed cost per iteration (ms). */
    FIXED("fixed_ms", Fit.ADDITIVE, 0, false),
    /** Contractions on FP8 matrix units (per-tensor, blockwise or MX scaling). */
    DENSE_FP8("dense_fp8", Fit.GPU, 1, true),
    /** Contractions on FP4 matrix units (NVFP4). */
    DENSE_FP4("dense_fp4", Fit.GPU, 1, true),
    /** Expert parallelism's token dispatch and combine (all-to-all) on the critical path. */
    EXPERT_COMM("expert_comm", Fit.GPU, 1, true),
    /** Context parallelism's key/value exchange left exposed behind the attention. */
    CONTEXT_COMM("context_comm", Fit.GPU, 1, true),
    /**
     * The attention core's layers other than its contractions (softmax, masks, dropout over the score matrix of an
     * unfused core; a fused core's row statistics): memory traffic whose kernels frameworks fuse to different degrees.
     */
    ATTENTION_OTHER("attention_other", Fit.GPU, 1, true),
    /**
     * Tensor-parallel collectives that Transformer Engine overlaps with the contractions they feed (its userbuffer
     * all-gathers and reduce-scatters, which NeMo and Megatron-Bridge enable with sequence parallelism over NVLink on
     * GPUs of the FP8 generations): the raw collective time, of which the fitted share stays exposed (prior 0.3).
     */
    TENSOR_COMM_OVERLAPPED("tensor_comm_overlapped", Fit.GPU, 0.3, true),
    /**
     * The host's extra time per execution of a layer with routed experts (ms per expert layer step, beside
     * {@link #LAYER_STEP}): the router, the permutations, the grouped products and the dispatcher's wait for the
     * token counts (a synchronisation with the GPU) launch many more kernels than a dense layer does, so a mixture
     * of experts whose GPUs finish a layer fast waits for its host. Counted on the stage with the most layers (of
     * stages as loaded, the one with more expert layers), each micro-batch and the pipeline fill; an inference step
     * counts a third, as {@link #LAYER_STEP} does (an assumption: no inference run measures it). The same
     * synchronisation makes a job with such layers combine the host's and the GPU's time more softly than a dense
     * job does ({@link MegatronModel}: the 2.41-norm instead of the 8-norm).
     */
    EXPERT_LAYER_STEP("ms_per_expert_layer_step", Fit.HOST, 0, false),
    /**
     * A fused attention core's two products (FlashAttention: the scores and the context, their tiles kept on chip,
     * the scores recomputed in the backward pass) and the softmax's exponentials between them on the special-function
     * units: one kernel with the causal mask's partial tiles, whose share of the 16-bit peak is not a GEMM's. A
     * refinement of {@link #DENSE}: pulled toward it; a file written before this term reads it as its parent's
     * coefficient.
     */
    DENSE_ATTENTION("dense_attention", Fit.GPU, 1, true),
    /**
     * A tensor-parallel group's wait for its slowest rank: each collective of a layer starts when the last of the
     * {@code t} ranks reaches it, so every stretch of compute between two collectives takes the slowest rank's time.
     * Its value is the compute of the layers with tensor-parallel collectives on the critical path times the expected
     * maximum of {@code t} standard normal deviates ({@link MegatronExecution#expectedMaxOfNormals}: 0 for one rank,
     * 0.56 for two, 1.03 for four, 1.42 for eight); its coefficient, fitted (prior 0), is the relative spread of a
     * rank's time between collectives. nccl-tests, which start every rank together, do not see this wait.
     */
    TENSOR_SYNC("tensor_sync", Fit.ADDITIVE, 0, false),
    /**
     * The routed experts' layers other than their contractions: the permutation of each token's top-k copies into the
     * experts' order and back, the experts' activations and gates, on tensors top-k times a dense layer's. Megatron runs
     * them as permutation kernels over padded groups of uneven sizes (with the routing map, the sort and the routing
     * probabilities between them), where the graph has one pass each. A refinement of {@link #OTHER}: pulled toward
     * it; a file written before this term reads it as its parent's coefficient.
     */
    EXPERT_OTHER("expert_other", Fit.GPU, 1, true),
    /**
     * {@link #EXPERT_LAYER_STEP} on a superchip ({@link org.scaledl.workload.Device#superchip()}: Grace Blackwell),
     * whose host reaches its GPU over NVLink-C2C, not PCIe: the dispatcher's synchronisation with the GPU and the
     * launches after it take the host a different time there. A refinement of {@link #EXPERT_LAYER_STEP}, pulled
     * toward it (its ratio to the parent toward the centre's, 1 from the priors): a few superchip runs whose GPUs
     * hide most of the host's time cannot take it to 0 (fitted on the runs published before Megatron-Bridge 26.04,
     * it went to 0 ms against the parent's 6.4 and the later releases' Nemotron 3 on GB200 came out 17–31 % too
     * fast); a fit without superchip runs with routed experts, or a file written before this term, gives it its
     * parent's coefficient.
     */
    EXPERT_LAYER_STEP_C2C("ms_per_expert_layer_step_c2c", Fit.HOST, 0, true);

    /** Where a term enters an iteration's time. */
    public enum Fit {
        /** Summed into the GPU's time on the critical path (its coefficient fitted on its logarithm). */
        GPU,
        /** The host's dispatch, a smooth max with the GPU's time (fitted on its logarithm). */
        HOST,
        /** Added after the compute part (fitted by non-negative least squares). */
        ADDITIVE,
        /**
         * Added after the compute part, less what hides behind it: a collective overlapped with the backward pass as
         * the compute part times it. Its coefficient scales the collective, not the time it hides behind, so it is
         * fitted with the compute part's (on its logarithm).
         */
        OVERLAP
    }

    private final String key;
    private final Fit fit;
    private final double prior;
    private final boolean pulled;

    ExecutionTerm(String key, Fit fit, double prior, boolean pulled) {
        this.key = key;
        this.fit = fit;
        this.prior = prior;
        this.pulled = pulled;
    }

    /** The saved name of its coefficient. */
    public String key() {
        return key;
    }

    /** Where it enters the iteration's time. */
    public Fit fit() {
        return fit;
    }

    /** Its coefficient before any fit (1 for a physical scale, 0 for a cost only data can tell). */
    public double prior() {
        return prior;
    }

    /** Whether a fit pulls its coefficient toward the prior (or the model being calibrated). */
    public boolean pulled() {
        return pulled;
    }

    /**
     * The term a fit pulls this one toward, where the term refines another: FP4 contractions sustain the share of
     * their peak that FP8's do until the data says otherwise (its ratio to the parent is pulled toward the centre's,
     * 1 from the priors). A refinement that few runs exercise then moves its parent's way, not to the data sheet's.
     */
    public Optional<ExecutionTerm> parent() {
        return switch (this) {
            case DENSE_FP4 -> Optional.of(DENSE_FP8);
            case DENSE_ATTENTION -> Optional.of(DENSE);
            case EXPERT_OTHER -> Optional.of(OTHER);
            case EXPERT_LAYER_STEP_C2C -> Optional.of(EXPERT_LAYER_STEP);
            default -> Optional.empty();
        };
    }

    /** Whether the term is a contraction class (each contraction kept with its floor). */
    public boolean dense() {
        return this == DENSE || this == DENSE_FP8 || this == DENSE_FP4 || this == DENSE_ATTENTION;
    }

    /** The label of the term in a breakdown: {@code tensor-comm}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The terms of a fit kind. */
    public static Set<ExecutionTerm> of(Fit kind) {
        Set<ExecutionTerm> out = EnumSet.noneOf(ExecutionTerm.class);
        for (ExecutionTerm t : values()) {
            if (t.fit == kind) {
                out.add(t);
            }
        }
        return out;
    }

    /** A term by its saved name. */
    public static Optional<ExecutionTerm> byKey(String key) {
        for (ExecutionTerm t : values()) {
            if (t.key.equals(key)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
