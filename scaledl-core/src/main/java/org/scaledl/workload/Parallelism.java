package org.scaledl.workload;


/**
 * How a workload is spread over devices, the way Megatron-LM does it: data-parallel replicas, tensor-parallel shards
 * of each layer (optionally with sequence parallelism), pipeline stages (optionally interleaved: several model chunks
 * per stage), context-parallel ranks (each a share of every sequence, exchanging keys and values in a ring), expert
 * parallelism (the routed experts spread over the data- and context-parallel ranks) with expert tensor parallelism,
 * the micro-batches each replica's batch is split into (through the pipeline, or accumulated one after another
 * without one), and the ZeRO stage of the data-parallel optimizer (3: FSDP). The workload's batch is per data-parallel
 * replica; the job uses {@code data · tensor · pipeline · context} devices ({@link #ranks()}).
 *
 * <pre>{@code
 * Parallelism.data(8);                                  // DDP over 8 workers
 * Parallelism.of(2, 4, 1, 1);                          // 2 replicas of a model split 4 ways
 * Parallelism.of(1, 1, 4, 8);                          // 4 pipeline stages, 8 micro-batches (1F1B)
 * Parallelism.of(8, 8, 8, 64).withSequenceParallel(true).withVirtualStages(2).withZeroStage(1);
 * Parallelism.of(64, 1, 4, 16).withExpert(64, 1).withContext(2);    // DeepSeek-V3 style
 * }</pre>
 *
 * @param data             data-parallel replicas (each computes the full model on its own batch)
 * @param tensor           tensor-parallel shards (each layer's work split this many ways)
 * @param pipeline         pipeline stages (consecutive layers on different devices)
 * @param microBatches     micro-batches per replica batch (through the pipeline, or accumulated without one)
 * @param sequenceParallel Megatron's sequence parallelism: the layers off the tensor-parallel region (norms,
 *                         dropout) split along the sequence, the all-reduces become reduce-scatter plus all-gather
 * @param zeroStage        ZeRO stage of the data-parallel optimizer: 0 none, 1 optimizer states sharded (Megatron's
 *                         distributed optimizer), 2 and gradients, 3 and weights (gathered before use: FSDP)
 * @param virtualStages    model chunks per pipeline stage (1: the 1F1B schedule; more: the interleaved one)
 * @param context          context-parallel ranks: each holds {@code 1/context} of every sequence
 * @param expert           expert-parallel ranks: the routed experts split this many ways within
 *                         {@code data · context} (with Megatron's MoE parallel folding, within
 *                         {@code data · context · tensor / expertTensor})
 * @param expertTensor     expert tensor parallelism: each expert's projections split this many ways
 */
public record Parallelism(int data, int tensor, int pipeline, int microBatches, boolean sequenceParallel,
        int zeroStage, int virtualStages, int context, int expert, int expertTensor) {
    private static final Parallelism NONE = new Parallelism(1, 1, 1, 1);

    /** The most devices a job may use. */
    public static final int MAX_RANKS = 1 << 24;

    /**
     * The most pipeline steps (micro-batches × pipeline stages × model chunks) an iteration may take: far beyond
     * any job (a million micro-batches through 256 stages), and small enough that counting hand-offs and host steps
     * stays exact.
     */
    public static final long MAX_PIPELINE_STEPS = 1L << 28;

    /** Validates. */
    public Parallelism {
        String problem = problem(data, tensor, pipeline, microBatches, sequenceParallel, zeroStage, virtualStages,
                context, expert, expertTensor);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /**
     * What is wrong with the degrees, or null: each message is built only when its check fails (layout searches
     * build millions of these, and building the messages' arguments on every one showed in their profiles).
     */
    private static String problem(int data, int tensor, int pipeline, int microBatches, boolean sequenceParallel,
            int zeroStage, int virtualStages, int context, int expert, int expertTensor) {
        if (!(data > 0 && tensor > 0 && pipeline > 0 && microBatches > 0 && context > 0 && expert > 0
                && expertTensor > 0)) {
            return "parallel degrees must be positive: data " + data + ", tensor " + tensor + ", pipeline " + pipeline
                    + ", micro-batches " + microBatches + ", context " + context + ", expert " + expert
                    + ", expert tensor " + expertTensor;
        }
        if (!((long) data * tensor * pipeline * context <= MAX_RANKS)) {
            return "too many GPUs: " + data + " x " + tensor + " x " + pipeline + " x " + context + " (at most "
                    + MAX_RANKS + ")";
        }
        if (!((double) microBatches * pipeline * virtualStages <= MAX_PIPELINE_STEPS)) {
            return "micro-batches x pipeline x virtual stages is too large: " + microBatches + " x " + pipeline + " x "
                    + virtualStages + " (at most " + MAX_PIPELINE_STEPS + " pipeline steps an iteration)";
        }
        if (!(zeroStage >= 0 && zeroStage <= 3)) {
            return "ZeRO stage must be 0..3: " + zeroStage;
        }
        if (!(virtualStages >= 1 && virtualStages <= 1 << 12)) {
            return "virtual pipeline stages must be in 1..4096: " + virtualStages;
        }
        if (!(virtualStages == 1 || pipeline > 1)) {
            return "an interleaved schedule (" + virtualStages + " virtual stages) needs a pipeline (pipeline "
                    + "parallelism above 1)";
        }
        if (!(!sequenceParallel || tensor > 1)) {
            return "sequence parallelism needs tensor parallelism";
        }
        if (!(((long) data * context * tensor) % ((long) expert * expertTensor) == 0)) {
            return "expert x expert tensor parallelism (" + expert + " x " + expertTensor + ") must divide data x "
                    + "context x tensor parallelism (" + data + " x " + context + " x " + tensor + "): the experts are "
                    + "spread over those ranks (Megatron's MoE parallel folding); give a multiple of "
                    + (long) expert * expertTensor + " of them (more data-parallel replicas, as serving engines run "
                    + "expert parallelism beside data-parallel attention), or fewer expert ranks";
        }
        return null;
    }

    /**
     * The expert tensor parallelism of a job that does not state one: with expert parallelism, 1, as the published
     * recipes that spread experts set it (their experts whole on their ranks); without it, for a graph with routed
     * experts, the tensor degree, as Megatron core takes it ({@code expert_tensor_parallel_size} defaults to the
     * tensor-parallel size) and serving engines shard experts (each expert split as the other layers are, not
     * copied whole onto every tensor rank); 1 for a graph without experts. The record's own constructors state every
     * degree; the command line and candidate tables leave this one to this default where it is absent.
     */
    public static int defaultExpertTensor(int tensor, int expert, org.scaledl.graph.ModelGraph graph) {
        return expert == 1 && graph.transformer().map(ts -> ts.experts() > 1).orElse(false) ? tensor : 1;
    }

    /** Four degrees with the other parallelisms at 1. */
    public Parallelism(int data, int tensor, int pipeline, int microBatches) {
        this(data, tensor, pipeline, microBatches, false, 0, 1, 1, 1, 1);
    }

    /** A copy with or without sequence parallelism. */
    public Parallelism withSequenceParallel(boolean value) {
        return new Parallelism(data, tensor, pipeline, microBatches, value, zeroStage, virtualStages, context, expert,
                expertTensor);
    }

    /** A copy with another ZeRO stage (0..3). */
    public Parallelism withZeroStage(int value) {
        return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, value, virtualStages, context,
                expert, expertTensor);
    }

    /** A copy with model chunks per stage (the interleaved schedule when more than 1). */
    public Parallelism withVirtualStages(int value) {
        return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, zeroStage, value, context,
                expert, expertTensor);
    }

    /** A copy with context parallelism. */
    public Parallelism withContext(int value) {
        return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, zeroStage, virtualStages, value,
                expert, expertTensor);
    }

    /** A copy with expert and expert tensor parallelism. */
    public Parallelism withExpert(int value, int tensorOfExperts) {
        return new Parallelism(data, tensor, pipeline, microBatches, sequenceParallel, zeroStage, virtualStages,
                context, value, tensorOfExperts);
    }

    /** One device, no parallelism. */
    public static Parallelism none() {
        return NONE;
    }

    /** {@code n} data-parallel replicas. */
    public static Parallelism data(int n) {
        return new Parallelism(n, 1, 1, 1);
    }

    /** Data, tensor, pipeline degrees and micro-batches. */
    public static Parallelism of(int data, int tensor, int pipeline, int microBatches) {
        return new Parallelism(data, tensor, pipeline, microBatches);
    }

    /** Devices the job uses: {@code data · tensor · pipeline · context}. */
    public int ranks() {
        return data * tensor * pipeline * context;
    }

    /**
     * The data-parallel replicas of a job of {@code gpus} GPUs in all, each replica {@code tensor × pipeline ×
     * context} of them: empty where those do not divide the GPUs (or a count is not positive). The one rule by which
     * a job given by its GPUs ({@code predict --gpus}, a table's {@code gpus} column, a log's world size) becomes one
     * given by its replicas.
     */
    public static java.util.OptionalInt replicas(long gpus, long tensor, long pipeline, long context) {
        if (gpus <= 0 || tensor <= 0 || pipeline <= 0 || context <= 0) {
            return java.util.OptionalInt.empty();
        }
        // a replica of more GPUs than the job has (or than a long holds) divides none
        if (tensor > gpus || pipeline > gpus / tensor || context > gpus / (tensor * pipeline)) {
            return java.util.OptionalInt.empty();
        }
        long perReplica = tensor * pipeline * context;
        return gpus % perReplica != 0 || gpus / perReplica > Integer.MAX_VALUE ? java.util.OptionalInt.empty()
                : java.util.OptionalInt.of((int) (gpus / perReplica));
    }

    /**
     * The micro-batches each replica runs for a global batch of {@code global} sequences, {@code batch} a
     * micro-batch over {@code replicas} replicas: empty where those do not divide it (or a count is not positive).
     * The one rule by which a job given by its global batch ({@code predict --global-batch}, a table's
     * {@code global_batch}) becomes one given by its micro-batches.
     */
    public static java.util.OptionalInt microBatches(long global, long batch, long replicas) {
        if (global <= 0 || batch <= 0 || replicas <= 0 || batch > global || replicas > global / batch) {
            return java.util.OptionalInt.empty();
        }
        long perStep = batch * replicas;
        return global % perStep != 0 || global / perStep > Integer.MAX_VALUE ? java.util.OptionalInt.empty()
                : java.util.OptionalInt.of((int) (global / perStep));
    }

    /** True when only data parallelism (or none) is used. */
    public boolean isDataOnly() {
        return tensor == 1 && pipeline == 1 && context == 1;
    }

    /**
     * A compact label: {@code none}, or the degrees above 1 joined by {@code -}: {@code dp8}, {@code tp4},
     * {@code pp4_8} (4 stages, 8 micro-batches), {@code dp2-tp4}, {@code mb8} (8 accumulated micro-batches),
     * {@code tp8sp}, {@code pp8_64v2}, {@code cp2}, {@code ep64}, {@code etp2}, {@code zero1}.
     */
    public String label() {
        java.util.List<String> parts = new java.util.ArrayList<>();
        if (data > 1) {
            parts.add("dp" + data);
        }
        if (tensor > 1) {
            parts.add("tp" + tensor + (sequenceParallel ? "sp" : ""));
        }
        if (pipeline > 1) {
            parts.add("pp" + pipeline + "_" + microBatches + (virtualStages > 1 ? "v" + virtualStages : ""));
        } else if (microBatches > 1) {
            parts.add("mb" + microBatches);
        }
        if (context > 1) {
            parts.add("cp" + context);
        }
        if (expert > 1) {
            parts.add("ep" + expert);
        }
        if (expertTensor > 1) {
            parts.add("etp" + expertTensor);
        }
        if (zeroStage > 0) {
            parts.add("zero" + zeroStage);
        }
        return parts.isEmpty() ? "none" : String.join("-", parts);
    }

    @Override
    public String toString() {
        return label();
    }
}
