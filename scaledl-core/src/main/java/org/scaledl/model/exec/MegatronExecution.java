package org.scaledl.model.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.function.DoubleUnaryOperator;
import org.scaledl.Checks;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.GraphCache;
import org.scaledl.graph.Layer;
import org.scaledl.graph.LayerRole;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.cost.StageCost;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.MoeDispatcher;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.RecomputeModule;
import org.scaledl.workload.TensorCoreAlignment;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * The iteration of a transformer built from its configuration, as Megatron-LM (and NeMo, Megatron-Bridge) runs it, in
 * closed form over the graph's layer roles ({@link LayerRole}) and block kinds ({@link Blocks#pattern()}), with
 * {@link Parallelism} {@code (d, t, p, m, SP, ZeRO, v, c, e, et)}:
 *
 * <ul>
 *   <li><b>Per micro-batch of b sequences</b>, each layer's forward and backward time on one GPU
 *       ({@link DeviceLayerCost}) with its share of the work: tensor parallelism splits the projections, heads and
 *       vocabulary {@code t} ways (a column-parallel projection's output, a row-parallel one's reduction: the output
 *       projections write their whole width, partial sums the all-reduce adds; with SP the residual stream and router
 *       too; latent attention's down projections stay whole), context parallelism every layer's tokens {@code c}
 *       ways, expert tensor parallelism each expert {@code et} ways (expert parallelism moves tokens, not work, when
 *       routing is balanced; an imbalance factor scales the experts, their work and the activations they keep for
 *       the backward pass (the busiest rank's memory), whose layers other than contractions are a
 *       term of their own, {@link ExecutionTerm#EXPERT_OTHER}); recomputation repeats the forward of every
 *       block layer (full) or of the modules selective recomputation names (Megatron core's
 *       {@code recompute_modules}, {@link org.scaledl.workload.RecomputeModule}; the attention core by default),
 *       which keep only their input (output-discarding ones not their output either; a recomputed MLP or mixture of
 *       experts runs its tensor-parallel collective, and the experts' all-to-all, again). With FP8 or FP4 the blocks' linear layers run on the
 *       low-precision units (their own contraction class, {@link ExecutionTerm#DENSE_FP8},
 *       {@link ExecutionTerm#DENSE_FP4}) and quantise their operands (memory traffic,
 *       {@link Precision#scalingBytesPerElement(org.scaledl.workload.Device)}); everything else stays in BF16. A
 *       fused attention core's two products are a class of their own ({@link ExecutionTerm#DENSE_ATTENTION}): their
 *       tiles stay on chip, the
 *       backward pass recomputes the scores, and the softmax between them adds an exponential per
 *       score (forward, and again where the scores are recomputed) at the special-function units' rate
 *       ({@link Device#exponentialsPerSecond()}).</li>
 *   <li><b>Collectives on the critical path</b>: per tensor-parallel sub-layer an all-reduce of {@code b·s·h/c}
 *       activations forward and backward (and again when fully recomputed), a reduce-scatter and all-gather with SP;
 *       per expert layer the token dispatch and combine (all-to-all of {@code b·s·k·h/(c·t)} per GPU, inside the
 *       NVLink domain where the expert group fits, else its share over the network; with
 *       {@link Workload#expertCommOverlap()} only what the layer's compute for another micro-batch does not cover);
 *       per attention layer context
 *       parallelism's ring exchange of keys and values ({@code c − 1} steps forward, twice that backward), hidden
 *       behind the attention core as far as it lasts.</li>
 *   <li><b>Pipeline</b>: Megatron's split of the layers into {@code p·v} chunks (equal, or with the embedding and the
 *       loss counted as layers where that divides: Megatron-Bridge's {@code account_for_embedding/loss}; or, where
 *       the job asks for it ({@link Workload#unevenPipeline()}), a balanced uneven split), stage
 *       {@code j mod p} holding chunk {@code j}; the 1F1B schedule takes {@code m·T_max + (Σ_s T_s − T_max)/v}
 *       (Narayanan et al.: the bubble shrinks {@code v}-fold when interleaved); point-to-point hand-offs.</li>
 *   <li><b>Data parallelism</b>: the gradients of the most loaded stage reduced over {@code d·c} ranks (the experts'
 *       over {@code d·c/e}), ZeRO 1–2 as reduce-scatter and all-gather; ZeRO 3 (FSDP) gathers the stage's weights
 *       twice and reduce-scatters its gradients every micro-batch, what the micro-batch's compute does not hide;
 *       the Adam step over the local states at the memory bandwidth.</li>
 * </ul>
 *
 * Ranks are placed as Megatron places them: tensor-parallel ranks adjacent, then context, expert, data, pipeline.
 * Memory per GPU is the most loaded stage's weights, gradients and optimizer states (the precision's bytes,
 * {@link Precision}; ZeRO shards them) plus the activations its in-flight micro-batches keep, walked layer by layer:
 * a contraction keeps its activation inputs (FP8 linear layers their quantised copy), a norm and an activation
 * function their input, a softmax its output (a fused core only its inputs and row statistics), a dropout its mask;
 * for GPT this is Korthikanti et al.'s {@code s·b·h·(34 + 5·a·s/h)} bytes a layer in half precision.
 */
public final class MegatronExecution {
    private static final int PROLOGUE = 0;
    private static final int EPILOGUE = 1;

    private MegatronExecution() {
    }

    /**
     * Refuses a layout that does not divide the model: heads and key/value heads (every layer's) by tensor
     * parallelism (Megatron core gives each rank whole query groups), layers by pipeline stages times
     * chunks (or with the embedding and loss counted), experts by expert parallelism, the sequence by twice the
     * context-parallel degree; and a training job with expert and tensor parallelism but no sequence parallelism,
     * which Megatron core refuses.
     *
     * @throws IllegalArgumentException naming what does not divide and what would
     */
    public static void check(Workload w) {
        TransformerShape ts = w.graph().transformer().orElseThrow(() -> new IllegalArgumentException(w.graph().name()
                + " is no transformer built from a configuration: the Megatron execution's layout checks need one"));
        Parallelism par = w.parallelism();
        int t = par.tensor();
        if (t > 1 && ts.heads() % t != 0) {
            throw new IllegalArgumentException("tensor parallelism " + t + " does not divide the " + ts.heads()
                    + " attention heads (and " + ts.kvHeads() + " key/value heads); it may be one of "
                    + divisors(headsDivisor(w.graph())));
        }
        if (t > 1 && ts.kvHeads() % t != 0) {
            // Megatron core gives each tensor-parallel rank whole query groups (num_query_groups / tensor, which must
            // divide); a rank's share of a key/value head was predicted as if it could be cut
            throw new IllegalArgumentException("tensor parallelism " + t + " does not divide the " + ts.kvHeads()
                    + " key/value heads (Megatron gives each tensor-parallel rank whole ones, neither cut nor copied); "
                    + "it may be one of " + divisors(headsDivisor(w.graph())));
        }
        long unsplit = unsplitKeyValueHeads(w.graph(), t);
        if (unsplit > 0) {
            throw new IllegalArgumentException("tensor parallelism " + t + " does not divide the " + unsplit
                    + " key/value heads of layers with their own (the model's other layers have " + ts.kvHeads()
                    + "); it may be one of " + divisors(headsDivisor(w.graph())));
        }
        int chunks = par.pipeline() * par.virtualStages();
        boolean even = chunkSizes(ts.layers(), chunks, ts.mtpLayers()) != null;
        boolean uneven = !even && unevenChunkSizes(ts.layers(), chunks, ts.mtpLayers()) != null;
        if (par.pipeline() > ts.layers()) {
            // every stage holds at least one layer, whatever the split
            throw new IllegalArgumentException(par.pipeline() + " pipeline stages for " + ts.layers() + " layers: "
                    + "every stage holds at least one layer; " + validSplits(ts.layers(), ts.mtpLayers(),
                    par.pipeline()));
        }
        if (!even && !(w.unevenPipeline() && uneven)) {
            throw new IllegalArgumentException(ts.layers() + " layers do not split into " + par.pipeline()
                    + " pipeline stages x " + par.virtualStages() + " chunks: the layers (or layers + 1 with the "
                    + "embedding counted as a layer, + 2 with the loss too" + (ts.mtpLayers() > 0 ? ", + "
                    + (2 + ts.mtpLayers()) + " with the multi-token prediction" : "") + ") must divide by stages x "
                    + "chunks; " + validSplits(ts.layers(),
                    ts.mtpLayers(), par.pipeline()) + (uneven && !w.unevenPipeline()
                    ? "; or split them unevenly (uneven_pipeline true, --uneven-pipeline)" : ""));
        }
        if (par.expert() > 1 && ts.experts() == 1) {
            throw new IllegalArgumentException("expert parallelism " + par.expert() + " for a model without routed "
                    + "experts (a dense model: --expert 1)");
        }
        if (par.expertTensor() > 1 && ts.experts() == 1) {
            throw new IllegalArgumentException("expert tensor parallelism " + par.expertTensor() + " for a model "
                    + "without routed experts (a dense model: --expert-tensor 1)");
        }
        if (par.expert() > 1 && ts.experts() % par.expert() != 0) {
            throw new IllegalArgumentException("expert parallelism " + par.expert() + " does not divide the "
                    + ts.experts() + " experts; it may be one of " + divisors(ts.experts()));
        }
        if (w.phase() == Phase.TRAIN && needsSequenceParallelism(par.expert(), t) && !par.sequenceParallel()) {
            throw new IllegalArgumentException("expert parallelism " + par.expert() + " beside tensor parallelism "
                    + t + " needs sequence parallelism, as Megatron core requires (give --sequence-parallel, or a "
                    + "table's sequence_parallel true)");
        }
        if (w.documentTokens() > ts.seq()) {
            throw new IllegalArgumentException("documents of " + w.documentTokens() + " tokens do not pack into "
                    + "sequences of " + ts.seq() + " (document tokens may be 1 to the sequence length)");
        }
        if (w.expertImbalance() != 1 && ts.experts() == 1) {
            throw new IllegalArgumentException("expert imbalance " + org.scaledl.io.CsvTable.plain(w.expertImbalance())
                    + " needs a model with routed experts, not " + w.graph().name());
        }
        if (ts.experts() > 1 && par.expert() > 1) {
            // (on one expert rank the imbalance is 1 whatever is given: a table's default for its other rows)
            int e = par.expert();
            double most = mostExpertImbalance(ts, e);
            if (w.expertImbalance() > most * (1 + 1e-12)) {
                throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "expert imbalance %s is more "
                        + "than a rank can receive: with %d experts over %d expert ranks, each token routed to %d, "
                        + "the busiest rank receives at most %s times its share (every token's routes to its experts)",
                        org.scaledl.io.CsvTable.plain(w.expertImbalance()), ts.experts(), e, ts.topK(),
                        org.scaledl.io.CsvTable.plain(most)));
            }
        }
        if (par.context() > 1 && ts.seq() % (2L * par.context()) != 0) {
            throw new IllegalArgumentException("context parallelism " + par.context() + " needs the sequence ("
                    + ts.seq() + ") divisible by 2 x " + par.context() + " (the load-balanced causal split)");
        }
        if (par.context() > 1 && hasUnfusedCore(w.graph())) {
            throw new IllegalArgumentException("context parallelism " + par.context() + " needs a fused attention "
                    + "core: Megatron splits the sequence inside Transformer Engine's fused attention, and its local "
                    + "(unfused) attention refuses it; " + w.graph().name() + " has an unfused core (eager attention, "
                    + "or heads too wide for a fused one): --context 1");
        }
    }

    /**
     * Whether training with these expert- and tensor-parallel degrees needs sequence parallelism: Megatron core's
     * {@code ModelParallelConfig} refuses expert beside tensor parallelism without it ("When using expert
     * parallelism and tensor parallelism, sequence parallelism must be used"); every published run of the two has it.
     */
    public static boolean needsSequenceParallelism(int expert, int tensor) {
        return expert > 1 && tensor > 1;
    }

    /** Sequences a micro-batch: the job's batch over its micro-batches, rounded up, at least one. */
    static int microBatch(Workload w) {
        return Math.max(1, (int) Math.ceil((double) w.batch() / w.parallelism().microBatches()));
    }

    /**
     * Whether any attention core of the graph is unfused: its products write the score matrix to memory (eager
     * attention, or heads wider than a fused core takes).
     */
    public static boolean hasUnfusedCore(ModelGraph g) {
        for (int i = 0; i < g.layers().size(); i++) {
            if (g.role(i).kind() == LayerRole.Kind.ATTENTION_CORE && g.layer(i).opType().equals("MatMul")
                    && !g.layer(i).keepsTilesOnChip()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The most a workload's {@link Workload#expertImbalance} can be on {@code expertRanks} expert ranks: a rank
     * holds {@code E/e} experts and a token is routed to {@code k} distinct ones, so the busiest rank receives at
     * most {@code min(k, E/e)} of each token's {@code k} routes, {@code e·min(k, E/e)/k} times its share (1 for a
     * dense model, or on one rank).
     */
    public static double mostExpertImbalance(TransformerShape ts, int expertRanks) {
        int e = Math.max(1, expertRanks);
        return ts.experts() <= 1 ? 1 : (double) e * Math.min(ts.topK(), ts.experts() / e) / ts.topK();
    }

    private static String divisors(long n) {
        List<String> out = new ArrayList<>();
        for (long k = 1; k <= n && out.size() < 12; k++) {
            if (n % k == 0) {
                out.add(Long.toString(k));
            }
        }
        return String.join(", ", out);
    }

    /**
     * The splits that work, as a user changes them: with {@code p} stages (where at least one exists), the chunks a
     * stage that split the layers; and the pipeline degrees that split them without interleaving.
     */
    private static String validSplits(int layers, int mtp, int p) {
        List<String> chunks = new ArrayList<>();
        // (more stages than layers split them no way: none named)
        for (int v = 1; p <= layers && (long) p * v <= layers + 2L + mtp && chunks.size() < 12; v++) {
            if (chunkSizes(layers, p * v, mtp) != null) {
                chunks.add(Integer.toString(v));
            }
        }
        List<String> stages = new ArrayList<>();
        for (int q = 1; q <= layers && stages.size() < 12; q++) {
            if (chunkSizes(layers, q, mtp) != null) {
                stages.add(Integer.toString(q));
            }
        }
        return (chunks.isEmpty() ? "" : "with " + p + " pipeline stages the chunks a stage (virtual stages) may be "
                + String.join(", ", chunks) + "; ") + "the pipeline degrees that split them without interleaving "
                + "are " + String.join(", ", stages) + (stages.size() == 12 ? ", ..." : "");
    }

    /**
     * How Megatron splits {@code layers} over {@code chunks} model chunks (in order: chunk {@code j} on stage
     * {@code j mod p}): equally where they divide; else, where {@code layers + 1} or {@code + 2} divides
     * (Megatron-Bridge's {@code account_for_embedding} and {@code account_for_loss_in_pipeline_split}), the embedding
     * counted as a layer of the first chunk and the loss of the last. A model with multi-token-prediction layers,
     * which ride with the loss on the last chunk, is split first as Megatron-Bridge's DeepSeek-V3 recipes lay it
     * out ({@code set_deepseek_v3_pipeline_model_parallel_layout}: 61 layers on 16 chunks as
     * {@code Et*4|(t*4|)*14tmL}, on 8 as 8 a chunk and 5 on the last, on 4 as 16 and 13): where
     * {@code layers + 1 + 2·mtp} divides, the embedding not counted and each MTP layer counted as two (its layer and
     * its own pass through the output head) beside the loss's one; else where {@code layers + mtp + 2} divides, the
     * embedding counted as one and the loss and each MTP layer as one; null when none does.
     *
     * @return the layers of each chunk, or null when Megatron cannot split them so
     */
    public static int[] chunkSizes(int layers, int chunks, int mtp) {
        int[] sizes = new int[chunks];
        if (chunks <= 0) {
            return null;
        }
        if (layers % chunks == 0) {
            java.util.Arrays.fill(sizes, layers / chunks);
            return sizes;
        }
        // {units added, of them on the first chunk, on the last}
        int[][] extras = mtp > 0 ? new int[][] {{1, 1, 0}, {2, 1, 1}, {1 + 2 * mtp, 0, 1 + 2 * mtp},
                {2 + mtp, 1, 1 + mtp}}
                : new int[][] {{1, 1, 0}, {2, 1, 1}};
        for (int[] x : extras) {
            int q = (layers + x[0]) / chunks;
            if ((layers + x[0]) % chunks == 0 && q >= Math.max(x[1], x[2]) && q >= 1) {
                java.util.Arrays.fill(sizes, q);
                sizes[0] -= x[1];
                sizes[chunks - 1] -= x[2];
                return sizes;
            }
        }
        return null;
    }

    /**
     * The split of {@code layers} over {@code chunks} model chunks a job runs with: Megatron's even one
     * ({@link #chunkSizes(int, int, int)}) where it exists, else an uneven one ({@link #unevenChunkSizes}); null when
     * neither exists.
     */
    public static int[] split(int layers, int chunks, int mtp) {
        int[] even = chunkSizes(layers, chunks, mtp);
        return even != null ? even : unevenChunkSizes(layers, chunks, mtp);
    }

    /**
     * A balanced uneven split, for layer counts that do not divide: the layers, with the embedding counted as one on
     * the first chunk and the loss on the last (the multi-token-prediction layers ride on the last chunk uncounted in
     * the split, though computed there in training),
     * dealt so that every chunk gets
     * {@code ⌊n/chunks⌋} or one more, the extra ones to the middle chunks first: what Megatron-DeepSpeed's balanced
     * partition of the transformer layers and Megatron-LM's {@code --decoder-first/last-pipeline-num-layers} and
     * {@code --pipeline-model-parallel-layout} let a recipe choose (BLOOM's 78 layers on 12 stages: 6 or 7 a stage).
     * The most loaded chunk sets the pace, so the prediction does not depend on which of the balanced splits a recipe
     * chose.
     *
     * @return the layers of each chunk, or null when a middle chunk would be empty
     */
    public static int[] unevenChunkSizes(int layers, int chunks, int mtp) {
        if (chunks <= 0) {
            return null;
        }
        if (chunks == 1) {
            return new int[] {layers};
        }
        int units = layers + 2;
        int[] sizes = new int[chunks];
        java.util.Arrays.fill(sizes, units / chunks);
        int extra = units % chunks;
        for (int j = 1; j < chunks - 1 && extra > 0; j++, extra--) {
            sizes[j]++;
        }
        if (extra > 0) {
            sizes[0]++;
            extra--;
        }
        if (extra > 0) {
            sizes[chunks - 1]++;
        }
        sizes[0] -= 1;
        sizes[chunks - 1] -= 1;
        if (sizes[0] < 0 || sizes[chunks - 1] < 0) {
            return null;
        }
        for (int j = 1; j < chunks - 1; j++) {
            if (sizes[j] < 1) {
                return null;
            }
        }
        return sizes;
    }

    /**
     * Why a job's pipeline is split unevenly, when it is (no even split of its layers exists), or that a job given the
     * uneven split divides evenly (and is split so): the note a prediction carries.
     */
    static Optional<String> unevenNote(Workload w) {
        TransformerShape ts = w.graph().transformer().orElseThrow();
        Parallelism par = w.parallelism();
        int chunks = par.pipeline() * par.virtualStages();
        if (chunks <= 1 || ts.layers() % chunks == 0) {
            // the flag splits only what does not divide (formats.md): said, as a user may have meant a balanced split
            return !w.unevenPipeline() ? Optional.empty() : Optional.of(chunks <= 1
                    ? "uneven pipeline given, but the job has one pipeline stage: its layers are not split"
                    : String.format(Locale.ROOT, "uneven pipeline given, but the %d layers divide into %d model "
                    + "chunks: split evenly, %d a chunk, the last stage computing the loss too (the uneven split "
                    + "applies only where no even split exists)", ts.layers(), chunks, ts.layers() / chunks));
        }
        int[] even = chunkSizes(ts.layers(), chunks, ts.mtpLayers());
        if (even != null) {
            // divides once the embedding (and the loss, and multi-token prediction) count as layers: said, as the
            // first and last chunks then hold fewer of the model's layers
            int q = java.util.Arrays.stream(even).max().orElseThrow();
            int extra = chunks * q - ts.layers();
            String counted = even[0] == q ? String.format(Locale.ROOT, "the embedding not counted, the loss "
                    + "counted as a layer and the multi-token prediction as %d (the counting of Megatron-Bridge's "
                    + "DeepSeek-V3 layouts, taken for any model with multi-token prediction)", extra - 1) : extra == 1 ? "the embedding counted as a layer (as "
                    + "Megatron-Bridge's account_for_embedding does)" : (extra == 2 ? "the embedding and the loss each "
                    + "counted as a layer" : "the embedding, the loss and the multi-token prediction counted as "
                    + "layers") + " (as Megatron-Bridge's account_for_embedding and account_for_loss_in_pipeline_split "
                    + "do)";
            String split = par.virtualStages() > 1 ? String.format(Locale.ROOT, "%d pipeline stages x %d chunks",
                    par.pipeline(), par.virtualStages()) : par.pipeline() + " pipeline stages";
            return Optional.of(String.format(Locale.ROOT, "%d layers split into %s with %s: %d layers a %s, the first "
                    + "%d, the last %d%s", ts.layers(), split, counted, q, par.virtualStages() > 1 ? "chunk" : "stage",
                    even[0], even[even.length - 1], w.unevenPipeline() ? " (the uneven split given applies only where "
                    + "no even split exists)" : ""));
        }
        int[] sizes = unevenChunkSizes(ts.layers(), chunks, ts.mtpLayers());
        int lo = Integer.MAX_VALUE;
        int hi = 0;
        for (int x : sizes) {
            lo = Math.min(lo, x);
            hi = Math.max(hi, x);
        }
        return Optional.of(String.format(Locale.ROOT, "%d layers do not divide into %d pipeline stages x %d chunks: "
                + "split unevenly, %d to %d layers a chunk with the embedding and the loss counted as layers (as "
                + "Megatron-DeepSpeed's balanced partition or Megatron-LM's first/last-stage layer counts do); the "
                + "busiest stage sets the pace", ts.layers(), par.pipeline(), par.virtualStages(), lo, hi));
    }

    /**
     * Said where a job's {@code recompute_layers} or {@code offload_layers} reach every layer of each model chunk (a
     * count of the first layers of each chunk, as Megatron's block method takes it): the job is predicted with all of
     * them recomputed or offloaded, which the count alone does not tell; and where a recompute module names no layer
     * of the model ({@code moe_act} of a dense model, or one another module's larger checkpoint takes over); and where
     * the experts' all-to-all overlap is asked of a training step of one micro-batch (nothing to hide it behind).
     */
    static List<String> layerCountNotes(Workload w) {
        TransformerShape ts = w.graph().transformer().orElseThrow();
        Parallelism par = w.parallelism();
        int chunks = par.pipeline() * par.virtualStages();
        int[] sizes = split(ts.layers(), chunks, ts.mtpLayers());
        List<String> notes = new ArrayList<>();
        if (w.recompute() == Recompute.SELECTIVE && w.phase() == Phase.TRAIN) {
            for (RecomputeModule m : w.recomputeModules()) {
                // (a module whose layers another one's larger checkpoint takes, moe's, is recomputed with it)
                RecomputeModule[] alone = RecomputeRegions.of(w.graph(), java.util.EnumSet.of(m));
                if (java.util.Arrays.stream(alone).noneMatch(x -> x == m)) {
                    notes.add("recompute module " + m.label() + " names no layer of " + w.graph().name()
                            + ": nothing of it is recomputed");
                }
            }
        }
        if (w.expertCommOverlap() && w.phase() == Phase.TRAIN && par.microBatches() == 1) {
            // Megatron core's overlap runs one micro-batch's all-to-all behind another's compute (its combined 1F1B)
            notes.add("moe_a2a_overlap hides one micro-batch's all-to-all behind another's compute: with one "
                    + "micro-batch nothing hides it, and it is predicted exposed");
        } else if (w.expertCommOverlap() && w.phase() == Phase.TRAIN && par.pipeline() > 1
                && pairedShare(par.pipeline(), par.virtualStages(), par.microBatches(), 0) == 0) {
            // the first stage's warm-up is the longest, the last stage's the shortest: where the first's takes every
            // pass, a stage pairs nothing from there to where the last's does not
            int p = par.pipeline();
            int v = par.virtualStages();
            int first = overlapWarmup(p, v, 0) / v + 1;
            int last = overlapWarmup(p, v, p - 1) / v + 1;
            notes.add(String.format(Locale.ROOT, "moe_a2a_overlap hides one micro-batch's all-to-all behind "
                    + "another's compute in the schedule's steady state: with %d micro-batches of %d model chunks on "
                    + "%d stages the warm-up takes every pass of %s, whose all-to-all is predicted exposed (the "
                    + "last stage pairs from %d micro-batches, the first from %d)", par.microBatches(), v, p,
                    par.microBatches() < last ? "every stage" : "the first stages", last, first));
        }
        if (sizes == null) {
            return notes;
        }
        int most = java.util.Arrays.stream(sizes).max().orElse(0);
        if (w.recompute() == Recompute.FULL && w.recomputeLayers() > most) {
            notes.add(String.format(Locale.ROOT, "recompute_layers %d is more than the %d layers of any model chunk "
                    + "(%d layers in %d chunks): every layer is recomputed, as recompute full without a count",
                    w.recomputeLayers(), most, ts.layers(), chunks));
        }
        if (w.offloadLayers() > most) {
            notes.add(String.format(Locale.ROOT, "offload_layers %d is more than the %d layers of any model chunk "
                    + "(%d layers in %d chunks): every layer's activations are offloaded", w.offloadLayers(), most,
                    ts.layers(), chunks));
        }
        return notes;
    }

    /**
     * Said where a training job runs fewer micro-batches than pipeline stages: the pipeline's fill and drain then take
     * much of the step ({@code (p - 1)·f} of {@code m + (p - 1)·f} micro-batch slots, {@code f} the
     * {@link #fillShare}), which tuned recipes avoid.
     */
    static Optional<String> bubbleNote(Workload w) {
        Parallelism par = w.parallelism();
        int p = par.pipeline();
        int m = par.microBatches();
        if (w.phase() != Phase.TRAIN || p <= 1 || m >= p) {
            return Optional.empty();
        }
        double fill = (p - 1.0) * fillShare(p, par.virtualStages(), m);
        return Optional.of(String.format(Locale.ROOT, "%d micro-batch%s through %d pipeline stages: each stage idles "
                + "about %.0f %% of the step while the pipeline fills and drains (training recipes run at least as "
                + "many micro-batches as stages, usually several times more: give --micro-batches)", m,
                m == 1 ? "" : "es", p, 100 * fill / (m + fill)));
    }

    /**
     * The ZeRO stage a job runs: its own, or 0 where neither its dense weights nor its experts have a group to shard
     * over: a single data-parallel (and context-parallel) rank, and a routed expert's data-parallel group (the ranks
     * of a stage holding the same experts, {@code d·c·t / (e·et)}) of one ({@link #zeroNote}: its memory and time are
     * those without ZeRO, as that note says).
     */
    static int zeroStage(Workload w) {
        return shardsNothing(w) ? 0 : w.parallelism().zeroStage();
    }

    /**
     * Whether a training job's ZeRO would have no group to shard over ({@link #zeroStage(Workload)}): one dense replica
     * and, with routed experts, one rank of the experts' data-parallel group.
     */
    public static boolean shardsNothing(Workload w) {
        Parallelism par = w.parallelism();
        boolean experts = w.graph().transformer().map(ts -> ts.experts() > 1).orElse(false);
        return (long) par.data() * par.context() <= 1 && (!experts || expertDataParallel(par) <= 1);
    }

    /**
     * The experts' data-parallel group: the ranks of a stage holding the same experts, {@code d·c·t / (e·et)} (MoE
     * parallel folding), at least one.
     */
    private static int expertDataParallel(Parallelism par) {
        return (int) Math.max(1, (long) par.data() * par.context() * par.tensor()
                / ((long) par.expert() * par.expertTensor()));
    }

    /**
     * Said where a training job asks for ZeRO with a single data-parallel (and context-parallel) rank: there is no
     * group to shard the optimizer's state, gradients or weights over, so it changes nothing.
     */
    static Optional<String> zeroNote(Workload w) {
        Parallelism par = w.parallelism();
        if (w.phase() != Phase.TRAIN || par.zeroStage() == 0 || !shardsNothing(w)) {
            return Optional.empty();
        }
        return Optional.of("ZeRO stage " + par.zeroStage() + " with one data-parallel rank shards nothing (ZeRO "
                + "shards the optimizer's state, gradients and weights over the data x context ranks): predicted as "
                + "without it");
    }

    /**
     * Said where a job's sequence is longer than the context its configuration names (a rotary model's
     * {@code max_position_embeddings}): built as given, a context extension the configuration does not state.
     */
    static Optional<String> contextNote(Workload w) {
        TransformerShape ts = w.graph().transformer().orElseThrow();
        if (!ts.beyondContext()) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT, "sequence %d is longer than the %d positions the "
                + "configuration names (max_position_embeddings): built as given, a context extension it does not "
                + "state", ts.seq(), ts.contextPositions()));
    }

    /**
     * How many ways a prefill divides a layer's rows: a model that generates text ({@link #generates}) computes its
     * sequences' last tokens' logits alone (the next token's, as serving engines compute them: the output projection
     * over one token a sequence) and no loss (0: the layer does not run); 1 for any other layer, phase or model.
     */
    public static int prefillRows(ModelGraph g, LayerRole role, Phase phase, boolean generates) {
        if (phase == Phase.TRAIN || !generates || role.region() != LayerRole.Region.EPILOGUE) {
            return 1;
        }
        return switch (role.kind()) {
            case LOSS -> 0;
            case HEAD -> (int) Math.max(1, Math.min(Integer.MAX_VALUE, g.transformer().orElseThrow().seq()));
            default -> 1;
        };
    }

    /**
     * Said where a mixture of experts runs on tensor-parallel ranks with neither expert parallelism nor expert tensor
     * parallelism: every rank holds every expert whole (a Java caller's {@code Parallelism.of(1, t, 1, 1)}, or an
     * explicit expert tensor degree of 1), where Megatron core's default and serving engines split them.
     */
    static Optional<String> wholeExpertsNote(Workload w) {
        Parallelism par = w.parallelism();
        int t = par.tensor();
        if (par.expertTensor() > 1 || Parallelism.defaultExpertTensor(t, par.expert(), w.graph()) == 1) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT, "each of the %d tensor-parallel ranks holds every expert whole "
                + "(expert tensor parallelism 1, no expert parallelism): Megatron core's default and serving engines "
                + "split them over the tensor ranks (expert_tensor %d, --expert-tensor %d, Parallelism.withExpert(1, "
                + "%d)), or spread them with expert parallelism", t, t, t, t));
    }

    /**
     * Whether a transformer generates text, its head predicting each next token (a decoder, or a mixer's stack): not an
     * encoder alone, every self-attention core of which is masked by padding rather than causally (BERT's head
     * scores every token); false for a graph that is no transformer built from a configuration.
     */
    public static boolean generates(ModelGraph g) {
        if (g.transformer().isEmpty()) {
            return false;
        }
        boolean selfAttention = false;
        for (int i = 0; i < g.size(); i++) {
            if (g.role(i).kind() == LayerRole.Kind.ATTENTION_CORE && g.layer(i).opType().equals("Softmax")
                    && !g.layer(i).name().contains("/cross/")) {
                selfAttention = true;
                if (!encoderSelfAttention(g, i)) {
                    return true;
                }
            }
        }
        return !selfAttention;
    }

    /**
     * Whether an attention core's softmax (layer {@code softmax}) is an encoder's self-attention: masked by padding
     * rather than causally, and no cross-attention (whose softmax is masked by the encoder's padding too).
     */
    private static boolean encoderSelfAttention(ModelGraph g, int softmax) {
        return g.layer(softmax).paddingMask() && !g.layer(softmax).name().contains("/cross/");
    }

    /**
     * Said of an inference job: its memory counts the weights and a forward pass's activations, not the keys and values
     * a serving engine keeps of the prefill for decoding, about their size a GPU (every attention layer's keys and
     * values of the batch's tokens, over the pipeline's stages, the tensor- and context-parallel ranks;
     * multi-latent attention's latent, its key/value down projection's output, as serving engines keep it, whole on
     * every tensor-parallel rank; a sliding window's layers their window, a chunked one's its chunk; an encoder's
     * self-attention none).
     */
    static Optional<String> keyValueCacheNote(Workload w) {
        return keyValueCacheNote(w, 0, null);
    }

    /**
     * {@link #keyValueCacheNote(Workload)}, saying too where the prediction's {@code memoryBytes} fit the device's
     * memory and those keys and values would not (a serving engine's prefill writes them).
     */
    static Optional<String> keyValueCacheNote(Workload w, double memoryBytes, Device device) {
        if (w.phase() != Phase.INFER) {
            return Optional.empty();
        }
        long latentWidth = latentWidth(w.graph());
        double gib = keyValueCacheBytes(w, latentWidth) / (1L << 30);
        if (gib < 0.05) {
            return Optional.empty();
        }
        double capacity = device == null ? 0 : device.memoryGB();
        double needs = memoryBytes / (1L << 30) + gib;
        boolean over = capacity > 0 && memoryBytes / (1L << 30) <= capacity && needs > capacity;
        boolean latent = latentWidth > 0;
        return Optional.of(String.format(Locale.ROOT, "the memory counts the weights and a forward pass's "
                + "activations: the %s a serving engine keeps of this prefill for decoding add about %.1f GiB a GPU%s",
                latent ? "key/value latents (whole on every tensor-parallel rank)" : "keys and values", gib, over
                        ? String.format(Locale.ROOT, " (with them %.1f GiB, more than the GPU's %s GiB: a serving "
                        + "engine needs more tensor or pipeline ranks, or a smaller batch)", needs, capacity) : ""));
    }

    /** Multi-latent attention's latent a token (its key/value down projection's output), 0 without one. */
    private static long latentWidth(ModelGraph g) {
        long latent = 0;
        for (LayerFeatures f : FEATURES.get(g, new FeaturesKey(1, Phase.INFER),
                () -> FeatureExtractor.of(g).extract(1, Phase.INFER))) {
            if (g.role(f.layer()).kind() == LayerRole.Kind.LATENT && g.layer(f.layer()).name().endsWith("/kv_a")) {
                latent = f.outChannels();
            }
        }
        return latent;
    }

    /**
     * The bytes a GPU keeps of an inference job's keys and values ({@link #keyValueCacheNote}); multi-latent
     * attention's {@code latent} a token (its key/value down projection's output, {@link #latentWidth}) where it has
     * one, as an engine keeps it.
     */
    private static double keyValueCacheBytes(Workload w, long latent) {
        ModelGraph g = w.graph();
        TransformerShape ts = g.transformer().orElseThrow();
        long[][] kv = g.blocks().isPresent() ? keyValues(g) : null;
        // per core: its keys' and values' elements a token, times the tokens it keeps (a sliding window's at most the
        // window); an encoder's self-attention (its softmax masked by padding, not causally) keeps none
        double elements = 0;
        for (int i = 0; i < g.size(); i++) {
            String name = g.layer(i).name();
            if (g.role(i).kind() != LayerRole.Kind.ATTENTION_CORE || !g.layer(i).opType().equals("Split")
                    || !name.endsWith("/split")) {
                continue;
            }
            String core = name.substring(0, name.length() - "/split".length());
            if (g.indexOf(core + "/softmax").map(x -> encoderSelfAttention(g, x)).orElse(false)) {
                continue;
            }
            long window = g.indexOf(core + "/scores").map(x -> g.layer(x).attentionWindow().orElse(0)).orElse(0L);
            long chunk = g.indexOf(core + "/scores").map(x -> g.layer(x).attentionChunk().orElse(0)).orElse(0L);
            double tokens = window > 0 ? Math.min(window, ts.seq()) : chunk > 0 ? Math.min(chunk, ts.seq())
                    : ts.seq();
            long width = latent > 0 ? latent : kv != null ? kv[unit(g.role(i))][0] : ts.kvWidth();
            elements += (double) g.repeats(i) * width * tokens;
        }
        Parallelism par = w.parallelism();
        // (the latent is no head's: every tensor-parallel rank keeps it whole)
        return elements * w.batch() * w.precision().activationBytes()
                / ((double) par.pipeline() * (latent > 0 ? 1 : par.tensor()) * par.context());
    }

    /**
     * The ranks of the slowest of a job's groups of {@code size} consecutive ranks that share a node of {@code node}
     * GPUs, over the job's {@code ranks}: all of a group where none of the job's groups straddles a node's edge;
     * where one does (a node no whole number of groups, a job beyond the first node), {@code gcd(size, node)} on a
     * side; a node's where groups hold whole nodes.
     */
    static int ranksPerNode(int size, int node, long ranks) {
        int a = (int) gcd(size, node);
        if (size > node || a == size) {
            return a;
        }
        // the groups' places repeat every node / gcd groups: the first of the job's that straddles an edge, if any
        long groups = Math.min(ranks / size, node / a);
        for (long k = 0; k < groups; k++) {
            if (k * size / node != (k * size + size - 1) / node) {
                return a;
            }
        }
        return size;
    }

    /** The greatest common divisor of two non-negative numbers (Euclid's). */
    private static long gcd(long a, long b) {
        while (b != 0) {
            long r = a % b;
            a = b;
            b = r;
        }
        return a;
    }

    /** Fewer tokens a context-parallel rank than this are said ({@link #thinContextNote}). */
    static final int FEW_CONTEXT_TOKENS = 512;

    /**
     * Said where context parallelism leaves a rank fewer than {@link #FEW_CONTEXT_TOKENS} tokens of the sequence: its
     * exchange of keys and values, every layer's, then outweighs the rank's work (long-context recipes keep thousands
     * of tokens a rank).
     */
    static Optional<String> thinContextNote(Workload w) {
        int c = w.parallelism().context();
        long seq = w.graph().transformer().orElseThrow().seq();
        if (c == 1 || seq / c >= FEW_CONTEXT_TOKENS) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT, "context parallelism %d leaves each rank %d tokens of the "
                + "%d-token sequence: every layer's exchange of keys and values outweighs its work (long-context "
                + "recipes keep thousands of tokens a rank)", c, seq / c, seq));
    }

    /** {@link #chunkSizes(int, int, int)} of a model without multi-token prediction. */
    public static int[] chunkSizes(int layers, int chunks) {
        return chunkSizes(layers, chunks, 0);
    }

    // ------------------------------------------------------------------------------------------------- per layer

    /** One contraction of a unit: its class, whether it is an expert's, its time and floor per micro-batch (ms). */
    private record Contraction(ExecutionTerm cls, boolean expert, double millis, double floor) {
    }

    /**
     * The per-micro-batch cost of one unit (the prologue, the epilogue, or one layer of a block kind) on one GPU.
     *
     * @param dense        its contractions
     * @param other        its other layers and the quantisation of low-precision operands, ms (non-expert)
     * @param expertOther  its experts' other layers, ms
     * @param adapters     the part of {@code other} that is LoRA adapters' products, ms
     * @param expertAdapters the part of {@code expertOther} that is LoRA adapters' products, ms
     * @param quantisation the part of {@code other} that quantises low-precision operands, ms
     * @param expertQuantisation the part of {@code expertOther} that quantises the experts' operands, ms
     * @param attentionOther its attention cores' other layers (softmax, masks, dropout), ms
     * @param tpCollectives tensor-parallel collectives on the critical path per micro-batch (forward, backward and
     *                     recomputation)
     * @param attention    attention layers (each a context-parallel exchange)
     * @param coreForward  the attention core's forward time, ms (what hides the exchange)
     * @param coreBackward the attention core's backward time, ms
     * @param expertLayers expert layers (each a token dispatch and combine)
     * @param saved        activation bytes kept for the backward pass per micro-batch
     * @param expertSaved  the part of {@code saved} the routed experts' layers keep (a rank's share of the routed
     *                     tokens: the busiest rank keeps its imbalance times as much)
     * @param params       parameters held per GPU (non-expert: sharded or replicated per tensor parallelism)
     * @param expertParams routed experts' parameters (to be divided by expert parallelism)
     * @param lowPrecisionParams parameters of the low-precision linear layers this GPU holds (their quantised copies)
     * @param adapterParams LoRA adapters' parameters this GPU trains (0 without LoRA: then every weight trains)
     * @param dispatch     the kernels a layer of the unit has the host dispatch over those it would without a
     *                     softmax's fallback to PyTorch's kernels (1 where none falls back; {@link SoftmaxFallback})
     * @param working      the largest working set of one of its layers in a forward pass, bytes per micro-batch: its
     *                     activation input and output (a fused attention core's products hold no scores; a
     *                     column-parallel layer's input whole on every tensor rank); the routed experts' and the
     *                     residual adds' apart
     * @param expertWorking the largest of a routed experts' layer (a rank's share of the routed tokens: the busiest
     *                     rank holds its imbalance times as much)
     * @param residualWorking the largest of a residual add (the residual stream among its inputs)
     */
    private record Unit(List<Contraction> dense, double other, double expertOther, double adapters,
            double expertAdapters, double quantisation, double expertQuantisation, double attentionOther,
            double tpCollectives,
            int attention, double coreForward, double coreBackward, int expertLayers, double saved, double expertSaved,
            double params, double expertParams, double lowPrecisionParams, double adapterParams, double dispatch,
            double working, double expertWorking, double residualWorking) {
        /** What the busiest expert rank keeps, {@code imbalance} times the routed tokens' share (1: balanced). */
        double saved(double imbalance) {
            return saved + (imbalance - 1) * expertSaved;
        }
    }

    /**
     * A unit of which the share {@code f} of the layers is recomputed in full: times and floors between the unit
     * without recomputation ({@code none}) and with it ({@code full}); what it keeps is {@code none}'s. Each
     * contraction enters twice, {@code none}'s weighted {@code 1 − f} and {@code full}'s {@code f} (not one entry
     * between them: the calibrated time of a contraction is not linear in its prediction, see
     * {@link MegatronModel#shrunk}).
     */
    private static Unit mix(Unit none, Unit full, double f) {
        if (f >= 1) {
            return full;
        }
        if (f <= 0) {
            return none;
        }
        List<Contraction> dense = new ArrayList<>(2 * none.dense().size());
        for (int i = 0; i < none.dense().size(); i++) {
            Contraction a = none.dense().get(i);
            Contraction x = full.dense().get(i);
            dense.add(new Contraction(a.cls(), a.expert(), (1 - f) * a.millis(), (1 - f) * a.floor()));
            dense.add(new Contraction(x.cls(), x.expert(), f * x.millis(), f * x.floor()));
        }
        return new Unit(dense, none.other() + f * (full.other() - none.other()),
                none.expertOther() + f * (full.expertOther() - none.expertOther()),
                none.adapters() + f * (full.adapters() - none.adapters()),
                none.expertAdapters() + f * (full.expertAdapters() - none.expertAdapters()),
                none.quantisation() + f * (full.quantisation() - none.quantisation()),
                none.expertQuantisation() + f * (full.expertQuantisation() - none.expertQuantisation()),
                none.attentionOther() + f * (full.attentionOther() - none.attentionOther()),
                none.tpCollectives() + f * (full.tpCollectives() - none.tpCollectives()), none.attention(),
                none.coreForward(), none.coreBackward(), none.expertLayers(), none.saved(), none.expertSaved(),
                none.params(),
                none.expertParams(), none.lowPrecisionParams(), none.adapterParams(),
                none.dispatch() + f * (full.dispatch() - none.dispatch()), none.working(), none.expertWorking(),
                none.residualWorking());
    }

    /** Everything the units depend on besides the graph (the layer model by identity). */
    private record UnitsKey(DeviceLayerCost layers, Device device, Precision precision, Phase phase,
            Recompute recompute, Set<RecomputeModule> modules, int microBatch, int tensor, boolean sequenceParallel,
            int context, int expert, int expertTensor, int lora, int documents, int sortPasses, boolean timed) {
        @Override
        public boolean equals(Object o) {
            return o instanceof UnitsKey k && k.layers == layers && k.device == device
                    && k.precision == precision && k.phase == phase && k.recompute == recompute
                    && k.modules.equals(modules)
                    && k.microBatch == microBatch && k.tensor == tensor && k.sequenceParallel == sequenceParallel
                    && k.context == context && k.expert == expert && k.expertTensor == expertTensor
                    && k.lora == lora && k.documents == documents && k.sortPasses == sortPasses && k.timed == timed;
        }

        @Override
        public int hashCode() {
            // the device by identity (a record of maps: hashing it by value costs more than the lookup saves; an
            // equal copy only hashes elsewhere and misses)
            int h = 31 * System.identityHashCode(layers) + System.identityHashCode(device);
            h = 31 * h + precision.hashCode();
            h = 31 * h + phase.hashCode();
            h = 31 * h + recompute.hashCode();
            h = 31 * h + modules.hashCode();
            h = 31 * h + microBatch;
            h = 31 * h + tensor;
            h = 31 * h + (sequenceParallel ? 1 : 0);
            h = 31 * h + context;
            h = 31 * h + expert;
            h = 31 * h + expertTensor;
            h = 31 * h + lora;
            h = 31 * h + documents;
            h = 31 * h + sortPasses;
            return 31 * h + (timed ? 1 : 0);
        }
    }

    /**
     * One layer's share of work, timed once per layer model, device and precision: configurations that differ in one
     * degree (the experts', the context's) share the other layers' times (the layer model and the device by identity;
     * an equal copy only misses).
     */
    private record LayerKey(DeviceLayerCost layers, Device device, Precision precision, boolean backward,
            LayerFeatures features) {
        @Override
        public boolean equals(Object o) {
            return o instanceof LayerKey k && k.layers == layers && k.device == device && k.precision == precision
                    && k.backward == backward && k.features.equals(features);
        }

        @Override
        public int hashCode() {
            return 31 * (31 * (31 * System.identityHashCode(layers) + System.identityHashCode(device))
                    + precision.hashCode() + (backward ? 1 : 0)) + features.hashCode();
        }
    }

    private static final GraphCache<LayerKey, Double> LAYER_TIMES = new GraphCache<>(1 << 15);

    private static double layerMillis(ModelGraph g, DeviceLayerCost layers, LayerFeatures f, Device device,
            Precision precision, boolean backward) {
        return LAYER_TIMES.get(g, new LayerKey(layers, device, precision, backward, f),
                () -> layers.layerMillis(f, device, precision, backward));
    }

    /**
     * The fewest rows a piece of a weighted product is cut to ({@link #pieceMillis}): 2,048, sixteen 128-row tiles, so
     * that with 2,112 output columns or more a piece still fills the 132 multiprocessors of an H100 in one wave (a
     * cluster job's products have far more columns).
     */
    static final double MIN_PIECE_ROWS = 2048;

    /**
     * The fewest rows a piece of an attention core's product is cut to ({@link #pieceMillis}): 1,048,576, the
     * model's heads times a rank's queries (the share the tensor-parallel ranks split is the keys' side, as the trees
     * are fitted) of the largest cores the published runs train, 32 heads of 32,768 queries (a million tokens over 32
     * context-parallel ranks): within them the fitted efficiency stands, past them it is bounded by theirs.
     */
    static final double MIN_ATTENTION_PIECE_ROWS = 1 << 20;

    /** A weightless product's rows divided {@code factor} ways (any real number): its work, bytes and outputs. */
    private static LayerFeatures rowsShare(LayerFeatures f, double factor) {
        return new LayerFeatures(f.layer(), f.family(), f.flopsFwd() / factor, f.flopsBwd() / factor,
                f.bytesRead() / factor, f.bytesWritten() / factor, f.bytesBwd() / factor, f.params(),
                f.outputElements() / factor, f.kernel(), f.stride(), f.groups(), f.inChannels(), f.outChannels(),
                f.steps());
    }

    /**
     * A layer's time; for a product with weights, at most the time of its rows halved (again, while a piece keeps
     * {@link #MIN_PIECE_ROWS} rows) times the pieces: a library can run a large product as smaller ones, so it is never
     * less efficient than they are; and, of at most {@link #MIN_PIECE_ROWS} rows, at least the time of its rows
     * halved (again, down to one): more rows are never faster. The trees, extrapolating their efficiency past the kernels they learned from
     * (DeepBench's largest tensor-core products are far smaller than a cluster job's), can say it is: without this a
     * micro-batch of 2 was predicted slower per token than one of 1. (A grouped product of routed experts is one
     * product over all its experts, its rows cut so too: {@link #groupedMillis}.)
     */
    private static double pieceMillis(ModelGraph g, DeviceLayerCost layers, LayerFeatures f, Device device,
            Precision precision, boolean backward, boolean attention) {
        return pieceMillis(f, x -> layerMillis(g, layers, x, device, precision, backward), attention);
    }

    /**
     * The routed experts a rank holds of a grouped product ({@link LayerFeatures#groups()}: one right-hand operand an
     * expert) over {@code e} expert-parallel ranks; 1 for a product that is not grouped.
     */
    static int expertsHeld(LayerFeatures f, int e) {
        return f.groups() > 1 ? (int) Math.max(1, f.groups() / Math.max(1, e)) : 1;
    }

    /**
     * A grouped product of the {@code held} routed experts a rank holds ({@code f}, its share): the time of one
     * product of all its rows and every expert's weights, at least that of the same rows over the weights of half as
     * many experts, a quarter... one expert (the same work, fewer bytes to read): a product's time never falls as it
     * reads more weights; and its rows cut as {@link #pieceMillis} cuts any product's (at most its pieces' time, and
     * of few rows at least fewer rows'). (Timed as separate products of each expert's rows it was slower than the published MoE runs say: a
     * grouped kernel fills the GPU with every expert's rows at once.)
     */
    private static double groupedMillis(ModelGraph g, DeviceLayerCost layers, LayerFeatures f, int held,
            Device device, Precision precision, boolean backward) {
        // its rows in pieces as any product with weights (the trees took Mixtral's experts over 4 sequences of 8,192
        // tokens for 2.28 times 2's, and over 4 tokens' copies for less than over 2)
        return pieceMillis(f, x -> overFewerWeights(g, layers, x, held, device, precision, backward));
    }

    /** A grouped product's time, at least that over half its experts' weights, a quarter... one expert's. */
    private static double overFewerWeights(ModelGraph g, DeviceLayerCost layers, LayerFeatures f, int held,
            Device device, Precision precision, boolean backward) {
        double t = layerMillis(g, layers, f, device, precision, backward);
        for (int k = held / 2; k >= 1; k /= 2) {
            t = Math.max(t, layerMillis(g, layers, fewerWeights(f, (double) k / held), device, precision, backward));
        }
        return t;
    }

    /**
     * A copy of a permutation's output ({@code f}'s written bytes read and written again), its backward pass the
     * permutation's scaled to those bytes: a weightless movement.
     */
    static LayerFeatures copyPass(LayerFeatures f) {
        double moved = f.bytesRead() + f.bytesWritten();
        double scale = moved > 0 ? 2 * f.bytesWritten() / moved : 0;
        return new LayerFeatures(f.layer(), f.family(), 0, 0, f.bytesWritten(), f.bytesWritten(),
                f.bytesBwd() * scale, 0, f.outputElements(), f.kernel(), f.stride(), f.groups(), f.inChannels(),
                f.outChannels(), f.steps());
    }

    /**
     * A copy pass's time ({@link #copyPass}, of {@code rows} rows), never faster than fewer of its rows
     * ({@link #noFasterThanFewerRows}).
     */
    private static double copyMillis(ModelGraph g, DeviceLayerCost layers, LayerFeatures f, double rows,
            Device device, Precision precision, boolean backward) {
        java.util.function.ToDoubleFunction<LayerFeatures> time = x -> layerMillis(g, layers, x, device, precision,
                backward);
        return noFasterThanFewerRows(f, rows, time, time.applyAsDouble(f));
    }

    /** A layer's features with a share of its weights: the same work and activations, {@code share} of the weights. */
    static LayerFeatures fewerWeights(LayerFeatures f, double share) {
        if (share == 1) {
            return f;
        }
        double paramBytes = ParallelExecution.FEATURE_WEIGHT_BYTES * f.params();
        double read = Math.max(0, f.bytesRead() - paramBytes) + paramBytes * share;
        double bwdWeights = Math.min(f.bytesBwd(), 2 * paramBytes);
        double bwd = f.bytesBwd() - bwdWeights + bwdWeights * share;
        return new LayerFeatures(f.layer(), f.family(), f.flopsFwd(), f.flopsBwd(), read, f.bytesWritten(), bwd,
                Math.round(f.params() * share), f.outputElements(), f.kernel(), f.stride(), f.groups(), f.inChannels(),
                f.outChannels(), f.steps());
    }

    /**
     * The weights the output head reads that an earlier layer holds (an output projection tied to the input
     * embedding; 0 for an untied head): with a pipeline, the last stage keeps a copy of them.
     */
    private static long tiedHeadWeights(ModelGraph g) {
        long tied = 0;
        for (int i = 0; i < g.size(); i++) {
            if (unit(g.role(i)) == EPILOGUE) {
                tied += g.weightsRead(i) - g.parameterCount(i);
            }
        }
        return tied;
    }

    /** The word embedding's weights: the prologue's embedding layers' (not a learned position table's). */
    private static long wordEmbeddingWeights(ModelGraph g) {
        long n = 0;
        for (int i = 0; i < g.size(); i++) {
            if (unit(g.role(i)) == PROLOGUE && g.role(i).kind() == LayerRole.Kind.EMBEDDING) {
                n += g.parameterCount(i);
            }
        }
        return n;
    }

    /**
     * The share of stage {@code s}'s passes that the all-to-all overlap pairs with another micro-batch's pass (Megatron
     * core's combined 1F1B): those of the schedule's steady state, every micro-batch but one without a pipeline; with
     * one of {@code v} model chunks a stage, the chunk passes after the warm-up's {@link #overlapWarmup} of the
     * {@code m·v}; none where the warm-up takes every pass (with 8 stages of 4 chunks, the first stage pairs nothing
     * below 10 micro-batches, and 5 micro-batches were predicted faster than 1). (Megatron core runs the overlap
     * without a pipeline or with interleaving only.)
     */
    static double pairedShare(int p, int v, int m, int s) {
        double passes = (double) m * v;
        double warmup = p <= 1 ? 0 : overlapWarmup(p, v, s);
        return Math.max(0, Math.min((m - 1.0) / m, (passes - Math.min(passes, warmup)) / passes));
    }

    /**
     * The forward chunk passes stage {@code s} of {@code p} with {@code v} chunks runs before its steady state with the
     * all-to-all overlap on: {@code 2(p − s − 1) + (v − 1)·p + 1} (Megatron core's {@code get_pp_rank_microbatches},
     * one more than without the overlap, so that a forward has a backward to pair with).
     */
    static int overlapWarmup(int p, int v, int s) {
        return 2 * (p - s - 1) + (v - 1) * p + 1;
    }

    /**
     * Each other stage's share of a micro-batch in the pipeline's fill and drain, in the busiest stage's time: with
     * {@code v} model chunks a stage and {@code m ≥ p} micro-batches, {@code 1 / v} (the interleaved schedule's
     * bubble, {@code (p − 1) / v} of a micro-batch); with fewer micro-batches than stages a chunk waits for its
     * micro-batch to come round the {@code p} stages again, {@code (1 + (v − 1)(p − m) / (p − 1)) / v}, so that one
     * micro-batch passes every chunk in turn, the whole model's time whatever {@code v} (interleaving hid it: one
     * inference micro-batch through 8 stages of 2 chunks was predicted 39 % faster than through 8 of 1).
     */
    static double fillShare(int p, int v, int m) {
        if (p <= 1) {
            return 0;
        }
        return (1 + (v - 1.0) * Math.max(0, p - m) / (p - 1)) / v;
    }

    /** A layer's features with every weight it reads as its parameters ({@link ModelGraph#weightsRead}). */
    static LayerFeatures withWeights(ModelGraph g, LayerFeatures f) {
        long weights = g.weightsRead(f.layer());
        return weights == f.params() ? f : new LayerFeatures(f.layer(), f.family(), f.flopsFwd(), f.flopsBwd(),
                f.bytesRead(), f.bytesWritten(), f.bytesBwd(), weights, f.outputElements(), f.kernel(), f.stride(),
                f.groups(), f.inChannels(), f.outChannels(), f.steps());
    }

    /**
     * What no pass of a product takes less than, ms: its weights read whole from memory (no cache keeps them between
     * passes: the whole model streams through it in between), in the width the product reads them (an FP8 or FP4
     * linear layer's quantised copy), and its activations beyond the L2, at the memory bandwidth (its FLOPs bound it
     * too, at the sustained peak, where the contraction is made). The features count bytes in 4-byte elements.
     */
    static double bytesFloorMillis(LayerFeatures f, Device d, Precision lp, boolean bwd) {
        double element = lp.lowPrecisionLinear() ? lp.quantisedElementBytes() : lp.activationBytes();
        double weights = f.params() * element;
        double featureWeights = ParallelExecution.FEATURE_WEIGHT_BYTES * f.params() * (bwd ? 2 : 1);
        double activations = Math.max(0, (bwd ? f.bytesBwd() : f.bytesFwd()) - featureWeights) * element / 4.0;
        return 1e3 * (weights + Math.max(0, activations - d.l2Bytes())) / d.bytesPerSecond();
    }

    /** {@link #pieceMillis} with the layer's time from {@code time}. */
    static double pieceMillis(LayerFeatures f, java.util.function.ToDoubleFunction<LayerFeatures> time) {
        return pieceMillis(f, time, false);
    }

    /**
     * {@link #pieceMillis} with the layer's time from {@code time}; with {@code attention} a product of an attention
     * core's (its scores, its context: no weights) is cut too, its rows (each head's queries) in pieces as context
     * parallelism and a kernel's own tiles cut them: a core over a longer sequence, a larger batch or fewer ranks is
     * then never less efficient than its pieces (the trees, past the kernels' data, said a core over 128k tokens on
     * one GPU took more than eight times its share on each of eight context-parallel ranks).
     */
    static double pieceMillis(LayerFeatures f, java.util.function.ToDoubleFunction<LayerFeatures> time,
            boolean attention) {
        double t = time.applyAsDouble(f);
        if (f.family() != OpFamily.DENSE || f.params() <= 0 && !attention || f.outChannels() <= 0) {
            return t;
        }
        double rows = f.outputElements() / f.outChannels();
        double fewest = f.params() > 0 ? MIN_PIECE_ROWS : MIN_ATTENTION_PIECE_ROWS;
        // (an attention core's in every whole number of pieces up to 16, then doubling: its rows past the published
        // cores' are seldom a power of two of theirs, 114,688 tokens' three and a half times)
        for (int k = 2; rows / k >= fewest; k = f.params() > 0 || k >= 16 ? 2 * k : k + 1) {
            t = Math.min(t, k * time.applyAsDouble(ParallelExecution.share(f, k, 1, 1)));
        }
        if (f.params() <= 0 && rows > fewest) {
            // and past the published cores at most their size's time per row: a piece of exactly their rows, however
            // many, so the bound is continuous as the rows cross their size (cutting the keys as well stepped down
            // there: 32,769 tokens were faster than 32,768)
            double factor = rows / fewest;
            t = Math.min(t, factor * time.applyAsDouble(rowsShare(f, factor)));
        }
        if (f.params() > 0) {
            // and never faster than fewer of its rows: the same weights read for less work (the trees, among small
            // products, said 128 rows of Gemma 3's MLP were faster than 64)
            t = noFasterThanFewerRows(f, rows, time, t);
        }
        return t;
    }

    /**
     * {@code t}, a layer's time over {@code rows} rows, at least the time of its rows halved (again, down to one) where
     * they are at most {@link #MIN_PIECE_ROWS}: the trees, between the kernels they learned, can make a few more rows
     * faster.
     */
    private static double noFasterThanFewerRows(LayerFeatures f, double rows,
            java.util.function.ToDoubleFunction<LayerFeatures> time, double t) {
        for (int k = 2; rows <= MIN_PIECE_ROWS && rows / k >= 1; k *= 2) {
            t = Math.max(t, time.applyAsDouble(ParallelExecution.share(f, k, 1, 1)));
        }
        return t;
    }

    private record FeaturesKey(int microBatch, Phase phase) {
        // written out for start-up (see LayerFeatures)
        @Override
        public boolean equals(Object o) {
            return o instanceof FeaturesKey k && microBatch == k.microBatch && phase == k.phase;
        }

        @Override
        public int hashCode() {
            return 31 * microBatch + phase.hashCode();
        }
    }

    /** The layers' features per micro-batch and phase (every configuration of a search shares them). */
    private static final GraphCache<FeaturesKey, List<LayerFeatures>> FEATURES = new GraphCache<>(64);

    /** Units per graph and configuration: a layout search asks for the same ones again and again. */
    private static final GraphCache<UnitsKey, Unit[]> UNITS = new GraphCache<>(256);

    /** The units of a configuration: index 0 the prologue, 1 the epilogue, 2 + k a layer of block kind k. */
    private static Unit[] units(Workload w, DeviceLayerCost layers, Device device, int b, Recompute rc,
            boolean timed) {
        Parallelism par = w.parallelism();
        Set<RecomputeModule> modules = rc == Recompute.SELECTIVE ? w.recomputeModules() : RecomputeModule.DEFAULT;
        int sortPasses = dispatcherPasses(w, device);
        UnitsKey key = new UnitsKey(layers, device, w.precision(), w.phase(), rc, modules, b, par.tensor(),
                par.sequenceParallel(), par.context(), par.expert(), par.expertTensor(), w.loraRank(),
                w.documentTokens(), sortPasses, timed);
        return UNITS.get(w.graph(), key, () -> computeUnits(w.graph(), layers, device, w.precision(), w.phase(), rc,
                modules, b, par.tensor(), par.sequenceParallel(), par.context(), par.expert(), par.expertTensor(),
                w.loraRank(), w.documentTokens(), sortPasses, timed));
    }

    /**
     * The passes over a rank's routed token copies that the experts' dispatcher and grouped products run beside the
     * graph's permutation and combination, each way (forward; their gradients' again backward): Megatron core's
     * all-to-all dispatcher sorts the copies a rank receives by local expert after the exchange and back before the
     * return ({@code sort_chunks_by_idxs}, where a rank of two or more holds more than one expert; without expert
     * parallelism the default all-gather dispatcher runs, which does not), and under an FP8 or FP4 recipe the grouped
     * products pad each expert's rows to the quantised products' alignment and unpad them after ({@code
     * TEGroupedMLP}'s quantisation padding, at any expert degree); DeepEP's and HybridEP's permutation writes the
     * rows in the experts' order, padded, and the graph's permutation stands for it. (A recipe that pads the routing
     * map instead, Megatron core's {@code moe_router_padding_for_quantization}, skips the padding: not described.)
     */
    static int dispatcherPasses(Workload w, Device device) {
        Parallelism par = w.parallelism();
        TransformerShape ts = w.graph().transformer().orElse(null);
        MoeDispatcher d = w.moeDispatcher();
        if (ts == null || ts.experts() <= 1 || d == MoeDispatcher.DEEPEP || d == MoeDispatcher.HYBRIDEP) {
            return 0;
        }
        // (without expert parallelism Megatron core's default dispatcher is the all-gather, which does not sort)
        boolean sorted = d == MoeDispatcher.ALLTOALL && par.expert() > 1 && ts.experts() / par.expert() > 1;
        boolean padded = w.precision().lowPrecisionLinear()
                && device.runs(w.precision()).map(Precision::lowPrecisionLinear).orElse(false);
        return (sorted ? 2 : 0) + (padded ? 2 : 0);
    }

    /**
     * The units; without {@code timed} only what memory needs (no layer's time predicted: every time 0). With LoRA
     * ({@code lora > 0}) the weights are frozen: a linear layer's backward pass computes the input's gradient only
     * (half its work: no weight gradient), the embedding none; every linear projection of the blocks gains an adapter
     * of {@code lora·(K + N)} trained parameters whose two thin products move their operand and output through memory
     * (forward, again when recomputed, and twice backward), or do their {@code 2·lora} FLOPs per element of them at
     * the sustained 16-bit peak, whichever takes longer (a rank near the hidden size costs what the layer does). With
     * packed sequences ({@code documents > 0} tokens a document) a fused attention core's quadratic layers (scores,
     * softmax, its masks and dropout, the context product) do {@code documents / seq} of their work and keep that
     * share of what they save: causal attention within documents of {@code L} tokens costs {@code S·L/2} pairs
     * against {@code S²/2}. An unfused core computes, masks and keeps the whole score matrix whatever the documents.
     */
    private static Unit[] computeUnits(ModelGraph g, DeviceLayerCost layers, Device device, Precision prec,
            Phase phase, Recompute rc, Set<RecomputeModule> modules, int b, int t, boolean sp, int c, int e, int et,
            int lora, int documents, int sortPasses, boolean timed) {
        boolean train = phase == Phase.TRAIN;
        // per layer the module selective recomputation runs again (null: kept)
        RecomputeModule[] redo = rc == Recompute.SELECTIVE ? RecomputeRegions.of(g, modules) : null;
        Blocks blocks = g.blocks().orElseThrow();
        TransformerShape ts = g.transformer().orElseThrow();
        int kinds = blocks.kinds();
        Precision low = device.runs(prec).orElseThrow();
        Precision high = prec.highPrecision();
        double actBytes = prec.activationBytes();
        double bandwidth = device.bytesPerSecond();
        List<List<Contraction>> dense = new ArrayList<>();
        double[] other = new double[2 + kinds];
        double[] expertOther = new double[2 + kinds];
        double[] adapters = new double[2 + kinds];
        double[] expertAdapters = new double[2 + kinds];
        double[] quantisation = new double[2 + kinds];
        double[] expertQuantisation = new double[2 + kinds];
        double[] attentionOther = new double[2 + kinds];
        double[] saved = new double[2 + kinds];
        double[] expertSaved = new double[2 + kinds];
        double[] params = new double[2 + kinds];
        double[] expertParams = new double[2 + kinds];
        double[] lowParams = new double[2 + kinds];
        double[] adapterParams = new double[2 + kinds];
        double[] coreFwd = new double[2 + kinds];
        double[] coreBwd = new double[2 + kinds];
        // kernels the host dispatches per layer step (a backward pass about twice its forward's), and those the
        // softmax's fallback adds
        double[] kernels = new double[2 + kinds];
        double[] fallbackKernels = new double[2 + kinds];
        boolean[] attention = new boolean[2 + kinds];
        boolean[] experts = new boolean[2 + kinds];
        int[] subLayers = new int[2 + kinds];
        // sub-layers whose MLP or mixture of experts selective recomputation runs again, collectives and all
        int[] redoneSubLayers = new int[2 + kinds];
        for (int u = 0; u < 2 + kinds; u++) {
            dense.add(new ArrayList<>());
        }
        List<LayerFeatures> fs = FEATURES.get(g, new FeaturesKey(b, phase),
                () -> FeatureExtractor.of(g).extract(b, phase));
        boolean[] fusedCore = fusedCores(g);
        // per unit, whether the sub-layer being read holds a contraction tensor parallelism splits (an attention's,
        // an MLP's or a shared expert's, a mixer's): one without (a mixture of experts without a shared one, its
        // experts whole on their ranks) runs no tensor-parallel collective with sequence parallelism, its tokens
        // dispatched from and combined into each rank's slice of the sequence (Megatron core's dispatcher over the
        // experts' own tensor group)
        boolean[] splitWork = new boolean[2 + kinds];
        double[] working = new double[2 + kinds];
        double[] expertWorking = new double[2 + kinds];
        double[] residualWorking = new double[2 + kinds];
        boolean generates = generates(g);
        for (LayerFeatures read : fs) {
            // a kernel reads its weights whether another layer reads them too (a tied output projection): its time
            // and its share under parallelism take them; the memory counts a tied weight once a stage holding it
            // (parameterCount here; the last stage's copy with a pipeline, tiedHead)
            LayerFeatures lf = withWeights(g, read);
            int i = lf.layer();
            LayerRole role = g.role(i);
            int u = unit(role);
            LayerRole.Kind kind = role.kind();
            int prefillRows = prefillRows(g, role, phase, generates);
            if (prefillRows == 0) {
                continue;
            }
            // (the output projection's rows, not its weights)
            lf = ParallelExecution.share(lf, prefillRows, 1, 1);
            splitWork[u] |= kind.split() == LayerRole.Split.TENSOR && lf.family() == OpFamily.DENSE;
            int divisor = divisor(role, lf.family(), t, sp, c);
            boolean lowLinear = lowPrecisionLinear(prec, role);
            long layerParams = g.parameterCount(i);
            double shard = role.region() == LayerRole.Region.BLOCK
                    ? (kind.split() == LayerRole.Split.TENSOR ? t : 1)
                    : (kind == LayerRole.Kind.NORM || kind == LayerRole.Kind.POSITION ? 1 : t);
            if (kind.expert()) {
                expertParams[u] += (double) layerParams / et;
            } else {
                params[u] += layerParams / shard;
            }
            if (lowLinear) {
                // the quantised copies of the weights this GPU holds: an expert's only on its expert-parallel rank, a
                // replicated layer's (a latent attention's down projections) whole on every tensor rank, as its weights
                lowParams[u] += (double) layerParams / (kind.expert() ? (double) e * et : shard);
            }
            attention[u] |= kind.attentionCore();
            experts[u] |= kind == LayerRole.Kind.EXPERT_DISPATCH;
            if (lf.family() == OpFamily.SHAPE || inFusedGroupedMlp(g.layer(i), device, prec)) {
                continue;
            }
            // packed documents: a fused attention core's layers do the share of their work the keys within a
            // document give (the quadratic ones, the sparse-attention indexer's among them, documents / seq); a
            // sliding window's products the keys it reads within a document (its other layers' cost, which the
            // graph does not tie to the window, the causal share as a dense core's); an unfused core masks its
            // whole score matrix
            double packed = documents > 0 && kind.attentionCore() && (fusedCore[u] || kind == LayerRole.Kind.INDEXER)
                    && lf.family() != OpFamily.MOVEMENT && lf.family() != OpFamily.VIEW
                    ? ts.packedShare(documents, kind == LayerRole.Kind.INDEXER, lf.family() == OpFamily.DENSE
                            ? g.layer(i).attentionWindow().orElse(0) : 0) : 1;
            double keeps = packed * savedBytes(g, lf, role, b, ts, fusedCore[u], prec, lowLinear ? low : null, redo,
                    divisor, t, sp, c);
            // a row-parallel product splits its reduction, not its output (the partial sums the all-reduce adds)
            LayerFeatures f = rowParallel(kind) && t > 1 && lf.family() == OpFamily.DENSE
                    ? ParallelExecution.shareReduction(lf, t, divisor / t)
                    : ParallelExecution.share(lf, divisor, weightShards(role, lf.family(), t, e, et),
                    columnShards(role, lf.family(), t, et));
            // the low-precision units, the FP32 ones for a product the tensor cores cannot load, else 16 bits
            Precision lp = productPrecision(prec, device, role, g.layer(i), lf, columnShards(role, lf.family(), t, et));
            // a grouped product of routed experts: one product of all its rows, reading the weights of every expert
            // the rank holds, never faster than with fewer of them (the trees, which learned single products, took
            // more weights read for a larger, more efficient product: 64 experts were faster than 8)
            boolean grouped = kind.expert() && lf.family() == OpFamily.DENSE;
            double fwd = timed ? packed * (grouped ? groupedMillis(g, layers, f, expertsHeld(lf, e), device, lp, false)
                    : pieceMillis(g, layers, f, device, lp, false, kind.attentionCore())) : 0;
            double bwd = timed && train ? packed * (grouped ? groupedMillis(g, layers, f, expertsHeld(lf, e), device,
                    lp, true) : pieceMillis(g, layers, f, device, lp, true, kind.attentionCore())) : 0;
            double bwdShare = frozenBackwardShare(lora, lf);
            bwd *= bwdShare;
            boolean again = role.region() == LayerRole.Region.BLOCK && (rc == Recompute.FULL
                    || redo != null && redo[i] != null);
            kernels[u] += (again ? 2 : 1) + (train ? 2 : 0);
            if (!(kind.attentionCore() && fusedCore[u])) {
                // the layer's activation input and output, alive together while it runs (a fused core's scores
                // never are: its products' outputs stay on chip); a column-parallel layer reads its input whole on
                // every tensor rank (gathered first with sequence parallelism)
                boolean wholeInput = kind == LayerRole.Kind.QKV || kind == LayerRole.Kind.MLP_IN
                        || kind == LayerRole.Kind.MIXER_IN;
                double bytes = (Math.max(0, (wholeInput ? lf.bytesRead() / c : f.bytesRead()) / 4.0
                        - (wholeInput ? lf.params() : f.params())) + f.outputElements()) * actBytes;
                double[] into = kind == LayerRole.Kind.RESIDUAL ? residualWorking
                        : kind.expert() ? expertWorking : working;
                into[u] = Math.max(into[u], bytes);
            }
            SoftmaxFallback fb = SoftmaxFallback.of(g, lf, fusedCore[u], b, t, c, actBytes).orElse(null);
            if (fb != null) {
                // PyTorch's kernels where Megatron's fused one does not take the scores
                fwd *= fb.forward();
                bwd *= fb.backward();
                fallbackKernels[u] += fb.kernels() * ((again ? 1 : 0) + 1 + (train ? 1 : 0));
                keeps *= fb.kept(actBytes);
            }
            saved[u] += keeps;
            expertSaved[u] += kind.expert() ? keeps : 0;
            double time = fwd * (again ? 2 : 1) + bwd;
            if (kind.attentionCore()) {
                coreFwd[u] += fwd;
                coreBwd[u] += bwd;
            }
            if (dense(lf.family())) {
                double peak = device.peakFlopsPerSecond(lp, true);
                // no more than the board's power buys
                double ceiling = sustainedFraction(layers, device, lp);
                double flops = packed * (f.flopsFwd() * (again ? 2 : 1) + (train ? bwdShare * f.flopsBwd() : 0));
                ExecutionTerm cls = contractionClass(g, i, prec, device);
                if (timed && cls == ExecutionTerm.DENSE_ATTENTION && g.layer(i).recomputedInBackward()) {
                    // the softmax between a fused core's products: an exponential per score on the special-function
                    // units, forward (again when recomputed) and once more where the backward pass recomputes them
                    double exps = packed * f.outputElements() * ((again ? 2 : 1) + (train ? 1 : 0));
                    time += 1e3 * exps / device.exponentialsPerSecond();
                }
                // its floor: its FLOPs at the sustained peak, and no less than its bytes beyond the L2 at the memory
                // bandwidth in each pass (a product of few rows, a prefill of a short prompt, reads its weights more
                // than it multiplies: shrunk toward the FLOPs' floor alone it ran faster than the memory allows)
                // (a grouped product of few rows reads the experts its rows are routed to: of held, the share
                // 1 - (1 - 1/held)^rows that balanced routing touches)
                LayerFeatures touched = f;
                if (grouped && f.outChannels() > 0) {
                    int held = expertsHeld(lf, e);
                    touched = fewerWeights(f, 1 - Math.pow(1 - 1.0 / held, f.outputElements() / f.outChannels()));
                }
                double bytesFloor = timed ? packed * (bytesFloorMillis(touched, device, lp, false) * (again ? 2 : 1)
                        + (train ? bwdShare * bytesFloorMillis(touched, device, lp, true) : 0)) : 0;
                dense.get(u).add(new Contraction(cls, kind.expert(), time,
                        Math.max(1e3 * flops / (ceiling * peak), bytesFloor)));
            } else {
                if (kind == LayerRole.Kind.EXPERT_DISPATCH && sortPasses > 0) {
                    // the dispatcher's own passes over the routed copies, each reading and writing them
                    // (dispatcherPasses), timed as the permutation is, a kernel each
                    kernels[u] += sortPasses * ((again ? 2 : 1) + (train ? 1 : 0));
                    if (timed) {
                        LayerFeatures pass = copyPass(f);
                        double rows = pass.outputElements() / ts.dispatchWidth();
                        time += sortPasses * (copyMillis(g, layers, pass, rows, device, lp, false) * (again ? 2 : 1)
                                + (train ? copyMillis(g, layers, pass, rows, device, lp, true) : 0));
                    }
                }
                switch (otherTerm(kind)) {
                    case EXPERT_OTHER -> expertOther[u] += time;
                    case ATTENTION_OTHER -> attentionOther[u] += time;
                    default -> other[u] += time;
                }
            }
            if (lowLinear && low.scalingBytesPerElement(device) > 0) {
                // quantising the activation operand forward (again when recomputed) and the output gradient backward
                double operand = Math.max(0, f.bytesRead() / 4.0 - f.params());
                double elements = operand * (again ? 2 : 1) + (train ? f.outputElements() : 0);
                double ms = 1e3 * low.scalingBytesPerElement(device) * elements / bandwidth;
                if (kind.expert()) {
                    expertOther[u] += ms;
                    expertQuantisation[u] += ms;
                } else {
                    other[u] += ms;
                    quantisation[u] += ms;
                }
            }
            if (lora > 0 && train && kind.lowPrecisionLinear() && dense(lf.family())
                    && role.region() == LayerRole.Region.BLOCK) {
                // the adapter: lora·(K + N) parameters (split as its layer's weights are), its products bound by
                // moving the layer's operand and output
                adapterParams[u] += (double) lora * (lf.inChannels() + lf.outChannels())
                        / weightShards(role, lf.family(), t, e, et) * (kind.expert() ? (double) layerParams
                        / Math.max(1.0, (double) lf.inChannels() * lf.outChannels()) : 1);
                double operand = Math.max(0, f.bytesRead() / 4.0 - f.params());
                double elements = (operand + f.outputElements()) * ((again ? 2 : 1) + 2);
                // its two products do 2·rank FLOPs per element of the operand and output they pass (forward, again,
                // and twice backward): bound by the memory at small ranks, by the matrix units at large ones
                double flops = 2.0 * lora * elements;
                double ms = timed ? 1e3 * Math.max(actBytes * elements / bandwidth, flops
                        / (sustainedFraction(layers, device, high) * device.peakFlopsPerSecond(high, true))) : 0;
                if (kind.expert()) {
                    expertOther[u] += ms;
                    expertAdapters[u] += ms;
                } else {
                    other[u] += ms;
                    adapters[u] += ms;
                }
            }
            if (role.region() == LayerRole.Region.BLOCK && (kind == LayerRole.Kind.RESIDUAL)) {
                if (splitWork[u] || !sp || et > 1) {
                    subLayers[u]++;
                    if (redo != null && RecomputeRegions.closesRecomputedCollective(g, redo, i)) {
                        redoneSubLayers[u]++;
                    }
                }
                splitWork[u] = false;
            }
        }
        int collectivesPerSubLayer = train ? 2 + (rc == Recompute.FULL ? 1 : 0) : 1;
        Unit[] out = new Unit[2 + kinds];
        for (int u = 0; u < out.length; u++) {
            double tp = 0;
            if (t > 1) {
                tp = u >= 2 ? subLayers[u] * collectivesPerSubLayer + (train ? redoneSubLayers[u] : 0)
                        : (u == PROLOGUE ? (train ? 2 : 1) : 0);
            }
            out[u] = new Unit(List.copyOf(dense.get(u)), other[u], expertOther[u], adapters[u], expertAdapters[u],
                    quantisation[u], expertQuantisation[u], attentionOther[u], tp,
                    attention[u] ? 1 : 0, coreFwd[u], coreBwd[u], experts[u] ? 1 : 0, saved[u], expertSaved[u],
                    params[u], expertParams[u], lowParams[u], adapterParams[u],
                    kernels[u] > 0 ? 1 + fallbackKernels[u] / kernels[u] : 1, working[u], expertWorking[u],
                    residualWorking[u]);
        }
        return out;
    }

    /**
     * The share of a layer's backward work left when LoRA freezes the weights ({@code lora > 0}): a weighted
     * contraction computes its input's gradient only (half its backward work, no weight gradient), the embedding
     * nothing; 1 for every other layer, and without LoRA.
     */
    private static double frozenBackwardShare(int lora, LayerFeatures lf) {
        if (lora == 0 || lf.params() == 0) {
            return 1;
        }
        return dense(lf.family()) ? 0.5 : lf.family() == OpFamily.EMBEDDING ? 0 : 1;
    }

    /** How many ways a layer's weights are split per GPU: experts over expert and expert tensor parallelism. */
    private static int weightShards(LayerRole role, OpFamily family, int t, int e, int et) {
        if (role.kind().expert()) {
            return e * et;
        }
        if (role.region() != LayerRole.Region.BLOCK) {
            boolean sharded = dense(family) || family == OpFamily.EMBEDDING || role.kind() == LayerRole.Kind.LOSS;
            return sharded ? t : 1;
        }
        return role.kind().split() == LayerRole.Split.TENSOR ? t : 1;
    }

    /** How many ways a contraction's output columns are split per GPU. */
    private static int columnShards(LayerRole role, OpFamily family, int t, int et) {
        if (role.kind().expert()) {
            return et;
        }
        return weightShards(role, family, t, 1, 1);
    }

    /** How many ways a layer's work is split per GPU. */
    private static int divisor(LayerRole role, OpFamily family, int t, boolean sp, int c) {
        if (role.region() != LayerRole.Region.BLOCK) {
            boolean sharded = dense(family) || family == OpFamily.EMBEDDING || role.kind() == LayerRole.Kind.LOSS;
            return c * (sharded ? t : 1);
        }
        return switch (role.kind().split()) {
            case TENSOR, EXPERT -> t * c;
            case SEQUENCE -> c * (sp ? t : 1);
            case NONE -> c;
        };
    }

    /**
     * Activation bytes a layer keeps for the backward pass per micro-batch and GPU: a contraction its activation
     * inputs (a low-precision linear layer its quantised copy; an input from the residual stream whole on every
     * tensor-parallel rank unless SP splits it, as Megatron keeps it), a norm or activation function its input, an
     * unfused softmax its output, a dropout its mask; a fused attention core (or one selective recomputation redoes)
     * its queries, keys and values (and a fused one its rows' log-sum-exp); moves, adds and views nothing. For GPT
     * without parallelism this is Korthikanti et al.'s {@code s·b·h·(34 + 5·a·s/h)} bytes a layer in half precision,
     * {@code s·b·h·(10 + 24/t + 5·a·s/(h·t))} with tensor parallelism. {@code lowLinear}: the precision a
     * low-precision linear layer runs in (what its quantised copy takes), null for the others.
     */
    private static double savedBytes(ModelGraph g, LayerFeatures f, LayerRole role, int b, TransformerShape ts,
            boolean fused, Precision prec, Precision lowLinear, RecomputeModule[] redo, double divisor, int t,
            boolean sp, int c) {
        int i = f.layer();
        Layer l = g.layer(i);
        double a = prec.activationBytes();
        String op = l.opType();
        boolean core = role.kind().attentionCore();
        if (core && (fused || redo != null && redo[i] == RecomputeModule.CORE_ATTN)) {
            if (!op.equals("Split")) {
                return 0;
            }
            if (role.kind() == LayerRole.Kind.INDEXER) {
                // the indexer's own queries and key (its products are recomputed from them)
                double in = 0;
                for (String x : l.inputs()) {
                    in += elements(g, x, b);
                }
                return in * a / divisor;
            }
            double q = elements(g, l.outputs().get(0), b);
            double kv = (double) b * ts.seq() * l.keyValueHeads().map(h -> 2 * h[0] * h[1]).orElse(ts.kvWidth());
            double stats = fused ? 4.0 * b * ts.heads() * ts.seq() : 0;
            // queries, keys and values an output-discarding module (mla_up_proj) recomputes are not kept: the
            // queries' projection is the split's first input, the keys' and values' its second (one input: both)
            List<String> in = l.inputs();
            boolean qGone = !in.isEmpty() && discarded(g, redo, i, in.get(0));
            boolean kvGone = in.size() > 1 ? discarded(g, redo, i, in.get(1)) : qGone;
            return ((qGone ? 0 : q) + (kvGone ? 0 : kv)) * a / divisor + stats / divisor;
        }
        if (l.recomputedInBackward() && (op.equals("MatMul") || op.equals("Gemm"))) {
            // a product the backward pass recomputes (a chunked scan's: TransformerSpec's mamba) from what the layers
            // before it keep keeps nothing of its own
            return 0;
        }
        if (redo != null && redo[i] != null && (op.equals("Softmax") || op.equals("Dropout"))) {
            // inside a recomputed module: not kept
            return 0;
        }
        switch (op) {
            case "Gemm", "MatMul" -> {
                double bytes = lowLinear != null ? lowLinear.quantisedElementBytes() : a;
                double in = 0;
                for (String x : l.inputs()) {
                    TensorInfo ti = g.tensor(x).orElse(null);
                    if (ti == null || ti.role() != TensorRole.ACTIVATION || discarded(g, redo, i, x)) {
                        continue;
                    }
                    Optional<Integer> producer = g.producerOf(x);
                    boolean stream = producer.isPresent() && fromStream(g.role(producer.get()));
                    double div = stream && role.region() == LayerRole.Region.BLOCK ? (double) c * (sp ? t : 1)
                            : divisor;
                    in += elements(g, x, b) * bytes / div;
                }
                return in;
            }
            case "LayerNormalization", "Gelu", "Relu", "Sigmoid", "Tanh" -> {
                return discarded(g, redo, i, l.inputs().get(0)) ? 0 : elements(g, l.inputs().get(0), b) * a / divisor;
            }
            case "Softmax" -> {
                return f.outputElements() * a / divisor;
            }
            case "Dropout" -> {
                return f.outputElements() / divisor;
            }
            default -> {
                // a recomputed module keeps its input: where the first of its layers to read a tensor from outside
                // it keeps nothing of its own (a clamp, a concatenation, a dispatch), that tensor is kept for it
                return redo == null || redo[i] == null ? 0 : moduleInputs(g, redo, i, b) * a / divisor;
            }
        }
    }

    /**
     * Elements of the activations layer {@code i}, in a recomputed module, reads from outside its module (and not
     * discarded) that no earlier layer of the module reads: what the module's checkpoint keeps for it.
     */
    private static double moduleInputs(ModelGraph g, RecomputeModule[] redo, int i, int b) {
        double in = 0;
        for (String x : g.layer(i).inputs()) {
            TensorInfo ti = g.tensor(x).orElse(null);
            Optional<Integer> producer = g.producerOf(x);
            if (ti == null || ti.role() != TensorRole.ACTIVATION || producer.isEmpty()
                    || redo[producer.get()] == redo[i] || discarded(g, redo, i, x)) {
                continue;
            }
            boolean earlier = false;
            for (org.scaledl.graph.Edge e : g.edges()) {
                if (e.tensor().equals(x) && e.to() < i && redo[e.to()] == redo[i]) {
                    earlier = true;
                    break;
                }
            }
            if (!earlier) {
                in += elements(g, x, b);
            }
        }
        return in;
    }

    /**
     * Whether layer {@code i} does not keep its input {@code tensor} for the backward pass because selective
     * recomputation runs the producer again: the producer is recomputed by the module that recomputes {@code i} (what
     * a checkpoint keeps is its input only), or by a module that discards its output.
     */
    private static boolean discarded(ModelGraph g, RecomputeModule[] redo, int i, String tensor) {
        if (redo == null) {
            return false;
        }
        Optional<Integer> producer = g.producerOf(tensor);
        if (producer.isEmpty()) {
            return false;
        }
        RecomputeModule m = redo[producer.get()];
        return m != null && (m == redo[i] || m.discardsOutput());
    }

    /** Whether a layer's output is on the residual stream (or replicated): what a column-parallel layer reads. */
    private static boolean fromStream(LayerRole producer) {
        LayerRole.Split split = producer.kind().split();
        return producer.region() != LayerRole.Region.BLOCK || split == LayerRole.Split.SEQUENCE
                || split == LayerRole.Split.NONE;
    }

    private static double elements(ModelGraph g, String tensor, int b) {
        return g.tensor(tensor).flatMap(TensorInfo::shape).map(s -> (double) s.elements(b)).orElse(0.0);
    }

    private static boolean dense(OpFamily f) {
        return f == OpFamily.DENSE || f == OpFamily.CONV;
    }

    /**
     * The 16-bit matrix work a board of 1 kW sustains in a long product, FLOP/s: {@value #SUSTAINED_FLOPS_AT_ONE_KILOWATT},
     * scaled by the cube root of a board's power ({@link Device#powerSustainedFlopsPerSecond}: the clock a power
     * sustains; another precision the same fraction of its own peak).
     * Learned on the published cluster runs as the ScaleDL method learns its coefficients: of 1.3, 1.45 and 1.6
     * (·10¹⁵), the one whose refitted model has the least error over the runs it was fitted on (in sample: 8.0, 7.6
     * and 7.7 %; the held-out splits were not used to choose it). It binds where the data sheet's peak is beyond it
     * (below the layer model's own ceiling, 0.87 of the peak in the bundled model): on the data's B200 (1,000 W: 1.45
     * PFLOP/s of its 2.25 at 16 bits, 2.9 of 4.5 in FP8) and GB200 (1,200 W: 1.54 of 2.5, 3.1 of 5.0 in FP8), not on
     * its H100 SXM (700 W: 1.29, beyond its 0.99) or A100; of the catalog's other parts, which no run here measures,
     * on the B300 and GB300 and the MI355X (an extrapolation of a constant learned on Blackwell). It replaced a cap
     * linear in the power (1.3·10¹² FLOP/s a watt), which put the 1,200 W GB200 12–23 % ahead of the 1,000 W B200 on
     * the jobs published on both, where the runs measure 0.93–1.03 (the cube root: 1.06–1.15), and would put a
     * 1,400 W GB300 17 % ahead of a GB200 at the same peaks (the cube root: 5 %).
     */
    public static final double SUSTAINED_FLOPS_AT_ONE_KILOWATT = 1.45e15;

    /**
     * The 16-bit data-sheet peak of the board {@link #SUSTAINED_FLOPS_AT_ONE_KILOWATT} was learned at, FLOP/s: the
     * B200's 2.25·10¹⁵ at its 1 kW (it sustains 0.64 of it).
     */
    static final double BLACKWELL_PEAK_AT_ONE_KILOWATT = 2.25e15;

    /**
     * The fraction of its data-sheet peak a long product in a precision sustains on a device: the layer model's
     * sustained ceiling, and no more than the board's power buys ({@link #SUSTAINED_FLOPS_AT_ONE_KILOWATT}). The power
     * law holds within an architecture, and its constant is Blackwell's: another architecture whose data sheet
     * promises more 16-bit work per cube root of a watt than Blackwell's does more work per joule (a newer process or
     * design: a Rubin description, 8.75·10¹⁵ at 1.8 kW, would be held to 20 % of its peak), so it is taken to sustain
     * the fraction of its peak the B200 sustains at its 1 kW, 0.64, as a new GPU from its data sheet is taken to
     * reach what the last generation reached of its own. Blackwell's own parts, and a part whose architecture is not
     * described, keep the law as fitted; no other part of the catalog reaches that promise (the MI355X's 2.5·10¹⁵ at
     * 1.4 kW is Blackwell's to 0.1 %).
     */
    static double sustainedFraction(DeviceLayerCost layers, Device device, Precision precision) {
        double ceiling = layers.sustainedPeakFraction(device, precision);
        OptionalDouble powered = powerSustainedShare(device, precision);
        return powered.isPresent() ? Math.min(ceiling, powered.getAsDouble()) : ceiling;
    }

    /**
     * The share of its data-sheet peak in a precision a device's board power sustains in a long product (at most 1),
     * as {@link #sustainedFraction} takes it (the law, or for an architecture beyond Blackwell's promise, the B200's
     * share); empty where the board power is not described or the work does not run on matrix units.
     */
    public static OptionalDouble powerSustainedShare(Device device, Precision precision) {
        OptionalDouble powered = device.powerSustainedFlopsPerSecond(precision, SUSTAINED_FLOPS_AT_ONE_KILOWATT);
        if (powered.isEmpty()) {
            return powered;
        }
        double fraction = powered.getAsDouble() / device.peakFlopsPerSecond(precision, true);
        if (!device.architecture().isBlank() && !device.architectureIs("Blackwell")) {
            fraction = Math.max(fraction, SUSTAINED_FLOPS_AT_ONE_KILOWATT / BLACKWELL_PEAK_AT_ONE_KILOWATT);
        }
        return OptionalDouble.of(Math.min(1, fraction));
    }

    /**
     * Whether a product in a precision below 32 bits has a reduction length K or an output width N that is not a
     * multiple of {@value TensorCoreAlignment#BYTES} bytes ({@link TensorCoreAlignment#alignmentBytes}) on a device
     * with the precision's matrix units (on Hopper and Blackwell only an unfused core's products take this rule, see
     * {@link #misalignedBlockProduct}): an unfused attention core's batched products over heads of 108, 150 or 450
     * dimensions (BLOOM's architecture sweep, on A100s). cuBLAS cannot then
     * load its operands as the tensor cores' 16-byte vectors (NVIDIA's GEMM guide: below cuBLAS 11 a requirement for
     * the tensor cores, since then "performance is better" aligned); the product is timed as the FP32 product of its
     * shape, at the FP32 units' throughput, which is what BLOOM's runs measure. The layers of the blocks only
     * (Megatron pads the vocabulary to a multiple of 128), and never a fused core (FlashAttention pads the head to its
     * kernels' size).
     */
    static boolean misaligned(OpFamily family, long k, long n, Precision p, Device device) {
        if (p.activationBytes() >= 4 || family != OpFamily.DENSE || !device.matrixUnits(p)) {
            return false;
        }
        return TensorCoreAlignment.alignmentBytes(k, n, p.activationBytes()) < TensorCoreAlignment.BYTES;
    }

    /**
     * A product's reduction length and output width on one GPU, {@code {K, N}}, as {@link #computeUnits} times it:
     * tensor parallelism over {@code shards} ranks splits a row-parallel layer's reduction ({@link #rowParallel}) and
     * every other one's output (an expert's over its expert-tensor ranks); an attention core's products keep their
     * head's width (the split is over heads).
     */
    private static long[] widths(LayerRole.Kind kind, LayerFeatures lf, int shards) {
        long k = lf.inChannels();
        long n = lf.outChannels();
        if (shards > 1 && !kind.attentionCore()) {
            if (rowParallel(kind)) {
                k = Math.max(1, k / shards);
            } else {
                n = Math.max(1, n / shards);
            }
        }
        return new long[] {k, n};
    }

    /**
     * Whether a layer of the blocks that runs in the job's 16-bit precision (not an FP8 or FP4 linear layer: the
     * callers tell those apart) is a {@link #misaligned} product on one GPU ({@link #widths}; {@code shards} the
     * ranks its weights' columns are split over); a fused attention core never is one, nor a router (a product over
     * the experts, often kept in FP32 by the recipes, and too small to matter).
     */
    private static boolean misalignedBlockProduct(LayerRole role, Layer layer, LayerFeatures lf, int shards,
            Precision high, Device device) {
        // on Hopper and Blackwell the layer model charges a misaligned linear layer what the H200 measured
        // (TensorCoreAlignment: 2.65x or 5.8x, not the 15x of their FP32 units); an unfused core keeps BLOOM's rule
        if (!alignmentMatters(role, layer) || device.tensorMemoryAccelerator() && !role.kind().attentionCore()) {
            return false;
        }
        long[] kn = widths(role.kind(), lf, shards);
        return misaligned(lf.family(), kn[0], kn[1], high, device);
    }

    /** A layer of the blocks, neither a router nor a fused attention core: where a misaligned product is noted. */
    private static boolean alignmentMatters(LayerRole role, Layer layer) {
        LayerRole.Kind kind = role.kind();
        return role.region() == LayerRole.Region.BLOCK && kind != LayerRole.Kind.ROUTER
                && !(kind.attentionCore() && layer.keepsTilesOnChip());
    }

    /** The unit a layer's work is counted in: the prologue, the epilogue or its block's kind. */
    private static int unit(LayerRole role) {
        return role.region() == LayerRole.Region.BLOCK ? 2 + role.block()
                : role.region() == LayerRole.Region.PROLOGUE ? PROLOGUE : EPILOGUE;
    }

    /**
     * Whether a fused scale-mask-softmax kernel takes an unfused attention core's scores (Megatron's
     * {@code FusedScaleMaskSoftmax.is_kernel_available}, Megatron-LM from 2021, Megatron-DeepSpeed, Megatron core):
     * scores in 16 bits, keys more than 16 and at most 4,096 (2,048 before 2022) and a multiple of 4, the local
     * queries a multiple of 4, and the score matrices a rank holds, {@code b·heads/t}, a multiple of 4 and, with a
     * causal mask, of the kernel's batches per block (4 over 128 keys, else 8; with a padding mask the queries must be
     * a multiple of it). Where the model fuses its cores and only heads too wide for them fall back (Transformer
     * Engine's unfused attention), its kernel's key limit: fewer than 16,384, a multiple of 8. Megatron's GPT at 16
     * heads on eight tensor-parallel ranks with micro-batches of one holds 2 matrices: not taken.
     *
     * @param softmax the softmax layer's features at micro-batch {@code b}, unsharded: its output the whole score
     *                matrix, its {@code inChannels} the keys
     * @param padding whether the scores are masked by padding ({@link Layer#paddingMask()}), not causally
     */
    static boolean scaleMaskSoftmaxFused(LayerFeatures softmax, boolean padding, int b, TransformerShape ts, int t,
            int c, double activationBytes) {
        long keys = Math.round(softmax.inChannels());
        return kernelTakes(keys, queries(softmax, b, ts, keys, c), padding, b, ts.heads() / Math.max(1, t),
                ts.fusedAttention(), activationBytes);
    }

    /** {@link #scaleMaskSoftmaxFused} from the scores' keys, a rank's queries and heads, the micro-batch. */
    private static boolean kernelTakes(long keys, long queries, boolean padding, int b, long heads, boolean engine,
            double activationBytes) {
        if (activationBytes != 2 || !keysTaken(keys, engine) || heads < 1) {
            return false;
        }
        long batches = (long) b * heads;
        int perBlock = batchesPerBlock(keys);
        return queries % 4 == 0 && batches % 4 == 0 && (padding ? queries % perBlock == 0 : batches % perBlock == 0);
    }

    /**
     * Whether the fused softmax kernel takes this many keys: Megatron's 17 to 4,096 in a multiple of 4, Transformer
     * Engine's ({@code engine}: a model of fused cores whose heads are too wide for them) 17 to 16,383 in a multiple
     * of 8.
     */
    private static boolean keysTaken(long keys, boolean engine) {
        return keys > 16 && (engine ? keys < 16_384 && keys % 8 == 0 : keys <= 4_096 && keys % 4 == 0);
    }

    /** The kernel's score rows a thread block takes: 8 at 128 keys or fewer, else 4 ({@code get_batch_per_block}). */
    private static int batchesPerBlock(long keys) {
        return keys <= 128 ? 8 : 4;
    }

    /** The queries a rank's softmax takes: its features' whole score matrix over micro-batch, heads and keys, over c. */
    private static long queries(LayerFeatures softmax, int b, TransformerShape ts, long keys, int c) {
        return Math.round(softmax.outputElements() / ((double) b * ts.heads() * keys)) / Math.max(1, c);
    }

    /**
     * What PyTorch's path costs against Megatron's fused scale-mask-softmax kernel where that kernel does not take
     * the scores ({@link #scaleMaskSoftmaxFused}): with 16-bit scores, Megatron's default query-key layer scaling runs
     * the softmax in FP32: a cast up, the scale, the mask (filled in place), the softmax and a cast down, five
     * kernels moving 36 bytes a score forward against the fused kernel's 4 and 40 backward against 6, and the
     * probabilities kept in FP32 for the backward pass; with 32-bit scores the scale, the mask and the softmax, 24
     * bytes against 8 and 28 against 12. The layer model's time of the fused softmax is scaled by those ratios.
     *
     * @param forward  the forward time's factor
     * @param backward the backward time's factor
     * @param kernels  kernels added in each pass, forward and backward alike
     */
    record SoftmaxFallback(double forward, double backward, int kernels) {
        static SoftmaxFallback of(double activationBytes) {
            return activationBytes == 2 ? new SoftmaxFallback(36 / 4.0, 40 / 6.0, 4)
                    : new SoftmaxFallback(24 / 8.0, 28 / 12.0, 2);
        }

        /**
         * The fallback of a layer where it is an unfused core's softmax ({@code fusedCore} false for its unit) whose
         * scores the fused kernel does not take ({@link #scaleMaskSoftmaxFused}), at micro-batch {@code b} on
         * {@code t} tensor-parallel and {@code c} context-parallel ranks; empty for every other layer.
         */
        static Optional<SoftmaxFallback> of(ModelGraph g, LayerFeatures lf, boolean fusedCore, int b, int t, int c,
                double activationBytes) {
            if (!unfusedCoreSoftmax(g, lf, fusedCore) || scaleMaskSoftmaxFused(lf, g.layer(lf.layer()).paddingMask(),
                    b, g.transformer().orElseThrow(), t, c, activationBytes)) {
                return Optional.empty();
            }
            return Optional.of(of(activationBytes));
        }

        /** Whether the layer is the softmax of an unfused attention core ({@code fusedCore}: its unit's setting). */
        static boolean unfusedCoreSoftmax(ModelGraph g, LayerFeatures lf, boolean fusedCore) {
            return !fusedCore && lf.family() == OpFamily.SOFTMAX
                    && g.role(lf.layer()).kind() == LayerRole.Kind.ATTENTION_CORE;
        }

        /** The factor on what the softmax keeps for the backward pass: its probabilities in FP32. */
        double kept(double activationBytes) {
            return 4 / activationBytes;
        }
    }

    /**
     * Per unit ({@link #unit}), whether its attention core is fused: its products keep their tiles on chip (a model
     * may fuse some layers' cores and not others',
     * {@link org.scaledl.transformer.TransformerSpec#fusedHeadLimit()}); a unit without a core product takes the
     * model's setting.
     */
    private static boolean[] fusedCores(ModelGraph g) {
        boolean model = g.transformer().orElseThrow().fusedAttention();
        boolean[] fused = new boolean[2 + g.blocks().orElseThrow().kinds()];
        boolean[] seen = new boolean[fused.length];
        java.util.Arrays.fill(fused, model);
        for (int i = 0; i < g.layers().size(); i++) {
            Layer l = g.layer(i);
            if (g.role(i).kind() == LayerRole.Kind.ATTENTION_CORE && l.opType().equals("MatMul")) {
                int u = unit(g.role(i));
                fused[u] = (seen[u] ? fused[u] : true) && l.keepsTilesOnChip();
                seen[u] = true;
            }
        }
        return fused;
    }

    /**
     * The greatest tensor-parallel degree a transformer's heads allow, whose divisors are every degree they allow: the
     * greatest common divisor of its attention heads, its key/value heads and every layer's own (Megatron core gives
     * each rank whole heads and whole query groups).
     */
    public static long headsDivisor(ModelGraph g) {
        TransformerShape ts = g.transformer().orElseThrow();
        long d = gcd(ts.heads(), ts.kvHeads());
        if (g.blocks().isPresent()) {
            for (long[] kv : keyValues(g)) {
                d = gcd(d, kv[1]);
            }
        }
        return d;
    }

    /**
     * The key/value heads of a layer ({@link #keyValues}: its own, {@link Layer#KEY_VALUE_HEADS}, as Gemma 4's
     * full-attention layers have, else the model's) that tensor parallelism {@code t} does not divide (Megatron core
     * gives each rank whole query groups: fewer heads than ranks do not divide either); 0 where it divides every
     * layer's (or the graph has no blocks).
     */
    public static long unsplitKeyValueHeads(ModelGraph g, int t) {
        if (t > 1 && g.blocks().isPresent()) {
            for (long[] kv : keyValues(g)) {
                if (kv[1] % t != 0) {
                    return kv[1];
                }
            }
        }
        return 0;
    }

    /**
     * Per unit ({@link #unit}), the elements of a token's keys and values its attention keeps and exchanges, and
     * their heads: a layer's own where its core's split names them ({@link Layer#KEY_VALUE_HEADS}, Gemma 4's
     * full-attention layers), else the model's.
     */
    private static long[][] keyValues(ModelGraph g) {
        TransformerShape ts = g.transformer().orElseThrow();
        long[][] kv = new long[2 + g.blocks().orElseThrow().kinds()][];
        java.util.Arrays.fill(kv, new long[] {ts.kvWidth(), ts.kvHeads()});
        for (int i = 0; i < g.layers().size(); i++) {
            Layer l = g.layer(i);
            if (g.role(i).kind() == LayerRole.Kind.ATTENTION_CORE && l.opType().equals("Split")) {
                int u = unit(g.role(i));
                l.keyValueHeads().ifPresent(h -> kv[u] = new long[] {2 * h[0] * h[1], h[0]});
            }
        }
        return kv;
    }

    /** Megatron's row-parallel layers of the blocks: tensor parallelism splits their reduction, not their output. */
    private static boolean rowParallel(LayerRole.Kind kind) {
        return kind == LayerRole.Kind.ATTENTION_OUT || kind == LayerRole.Kind.MLP_OUT
                || kind == LayerRole.Kind.MIXER_OUT;
    }

    /** The ranks a layer's weights' columns are split over in the job ({@link #columnShards}). */
    private static int shards(Workload w, LayerRole role, LayerFeatures lf) {
        return columnShards(role, lf.family(), w.parallelism().tensor(), w.parallelism().expertTensor());
    }

    /** Whether a layer runs on a low-precision recipe's units: a block's linear layer under FP8 or FP4. */
    private static boolean lowPrecisionLinear(Precision prec, LayerRole role) {
        return prec.lowPrecisionLinear() && role.kind().lowPrecisionLinear() && role.region() == LayerRole.Region.BLOCK;
    }

    /**
     * The class a contraction's time is calibrated in ({@link ExecutionTerm#dense()}): a block's linear layer under a
     * low-precision recipe the class of the units it runs on (FP8 or FP4; 16 bits where the GPU falls back to them),
     * a fused attention core's products their own, every other product 16-bit.
     */
    static ExecutionTerm contractionClass(ModelGraph g, int layer, Precision prec, Device device) {
        LayerRole role = g.role(layer);
        if (lowPrecisionLinear(prec, role)) {
            Precision low = device.runs(prec).orElseThrow();
            return low.peakColumn().equals("fp4") ? ExecutionTerm.DENSE_FP4
                    : low.lowPrecisionLinear() ? ExecutionTerm.DENSE_FP8 : ExecutionTerm.DENSE;
        }
        return role.kind().attentionCore() && g.layer(layer).keepsTilesOnChip() ? ExecutionTerm.DENSE_ATTENTION
                : ExecutionTerm.DENSE;
    }

    /**
     * The precision a contraction runs its matrix work in: the low-precision units for the blocks' FP8 or FP4 linear
     * layers, FP32 for a {@link #misalignedBlockProduct} ({@code shards} the ranks its columns are split over), else
     * the job's 16-bit (or 32-bit) precision.
     */
    private static Precision productPrecision(Precision prec, Device device, LayerRole role, Layer layer,
            LayerFeatures lf, int shards) {
        if (lowPrecisionLinear(prec, role)) {
            return device.runs(prec).orElseThrow();
        }
        return misalignedBlockProduct(role, layer, lf, shards, prec.highPrecision(), device) ? Precision.FP32
                : prec.highPrecision();
    }

    /** {@link #productPrecision(Precision, Device, LayerRole, Layer, LayerFeatures, int)} in a job. */
    private static Precision productPrecision(Workload w, Device device, LayerFeatures lf) {
        ModelGraph g = w.graph();
        LayerRole role = g.role(lf.layer());
        return productPrecision(w.precision(), device, role, g.layer(lf.layer()), lf, shards(w, role, lf));
    }

    /**
     * The note saying which attention layers' softmax runs PyTorch's kernels ({@link SoftmaxFallback}) and why: the
     * scores' precision, their keys, a rank's queries, or the score matrices a rank holds at this micro-batch (with
     * the smallest larger micro-batch, up to 64, at which the fused kernel takes every softmax's); empty where every
     * softmax runs the fused kernel.
     */
    static Optional<String> softmaxFallbackNote(Workload w, List<LayerFeatures> fs) {
        ModelGraph g = w.graph();
        boolean[] fused = fusedCores(g);
        int t = w.parallelism().tensor();
        int c = w.parallelism().context();
        int b = microBatch(w);
        double bytes = w.precision().activationBytes();
        boolean train = w.phase() == Phase.TRAIN;
        TransformerShape ts = g.transformer().orElseThrow();
        long heads = ts.heads() / Math.max(1, t);
        boolean engine = ts.fusedAttention();
        String why = null;
        int layers = 0;
        // every unfused core's softmax, by its keys, queries and mask: the micro-batch that takes them all
        List<long[]> cores = new ArrayList<>();
        for (LayerFeatures lf : fs) {
            if (!SoftmaxFallback.unfusedCoreSoftmax(g, lf, fused[unit(g.role(lf.layer()))])) {
                continue;
            }
            long keys = Math.round(lf.inChannels());
            long queries = queries(lf, b, ts, keys, c);
            boolean padding = g.layer(lf.layer()).paddingMask();
            cores.add(new long[] {keys, queries, padding ? 1 : 0});
            if (kernelTakes(keys, queries, padding, b, heads, engine, bytes)) {
                continue;
            }
            layers += g.repeats(lf.layer());
            if (why != null) {
                continue;
            }
            if (bytes != 2) {
                why = "it takes 16-bit scores only";
            } else if (!keysTaken(keys, engine)) {
                why = String.format(Locale.ROOT, "it takes 17 to %s keys, a multiple of %d (here %,d)",
                        engine ? "16,383" : "4,096", engine ? 8 : 4, keys);
            } else if (queries % 4 != 0 || padding && queries % batchesPerBlock(keys) != 0) {
                why = String.format(Locale.ROOT, "it takes a rank's queries in a multiple of %d%s (here %,d)",
                        padding ? batchesPerBlock(keys) : 4, padding ? " where padding masks the scores" : "",
                        queries);
            } else {
                why = String.format(Locale.ROOT, "it takes the score matrices a rank holds, micro-batch x heads / "
                        + "tensor parallelism, in a multiple of %d: here %d x %d / %d = %d", padding ? 4
                        : batchesPerBlock(keys), b, ts.heads(), t, b * heads);
            }
        }
        if (why == null) {
            return Optional.empty();
        }
        int better = 0;
        for (int more = b + 1; more <= 64 && better == 0 && bytes == 2; more++) {
            int m = more;
            if (cores.stream().allMatch(k -> kernelTakes(k[0], k[1], k[2] == 1, m, heads, engine, bytes))) {
                better = more;
            }
        }
        SoftmaxFallback fb = SoftmaxFallback.of(bytes);
        return Optional.of(String.format(Locale.ROOT, "the softmax of %d attention layer%s runs PyTorch's kernels (%s: "
                + "%.0f times the bytes forward%s), not the fused scale-mask-softmax kernel (%s): %s%s", layers,
                layers == 1 ? "" : "s", bytes == 2 ? "a cast to FP32, the scale, the mask, the softmax, a cast back"
                        : "the scale, the mask, the softmax", fb.forward(), train ? String.format(Locale.ROOT,
                        ", %.0f backward%s", fb.backward(), bytes == 2 ? ", FP32 probabilities kept" : "") : "",
                engine ? "Transformer Engine's, for heads too wide for a fused core" : "Megatron's", why,
                better > 0 ? String.format(Locale.ROOT, "; a micro-batch of %d would take them", better) : ""));
    }

    /**
     * The note naming the blocks' products cuBLAS computes on the FP32 units ({@link #misaligned}) or, on Hopper and
     * Blackwell, without the tensor memory accelerator ({@link TensorCoreAlignment#slowdown}), each with its
     * reduction length and output width on one GPU; empty where there is none.
     */
    private static Optional<String> misalignmentNote(Workload w, Device device, List<LayerFeatures> fs) {
        ModelGraph g = w.graph();
        Precision prec = w.precision();
        int bytes = prec.highPrecision().activationBytes();
        int aligned = TensorCoreAlignment.BYTES / Math.max(1, bytes);
        java.util.Set<String> layers = new java.util.LinkedHashSet<>();
        TransformerShape ts = g.transformer().orElseThrow();
        long seq = ts.seq();
        long head = 0;
        boolean split = false;
        boolean sequence = false;
        boolean accelerator = device.tensorMemoryAccelerator();
        boolean toFp32 = false;
        for (LayerFeatures lf : fs) {
            if (lf.family() != OpFamily.DENSE || prec.highPrecision() == Precision.FP32) {
                continue;
            }
            LayerRole role = g.role(lf.layer());
            long[] kn = widths(role.kind(), lf, shards(w, role, lf));
            // a product the job runs in 16 bits moved to the FP32 units, or (Hopper, Blackwell) slowed
            Precision runs = productPrecision(w, device, lf);
            boolean slowed = accelerator && runs == prec.highPrecision() && !role.kind().attentionCore()
                    && alignmentMatters(role, g.layer(lf.layer()))
                    && TensorCoreAlignment.slowdown(kn[0], kn[1], runs, device) > 1;
            toFp32 |= runs == Precision.FP32;
            if (runs == Precision.FP32 || slowed) {
                if (role.kind().attentionCore()) {
                    // the core's products are a head's width by the sequence (the scores) and back (the context)
                    head = kn[0] == seq ? kn[1] : kn[0];
                    sequence |= seq % aligned != 0;
                } else {
                    split |= lf.inChannels() % aligned == 0 && lf.outChannels() % aligned == 0;
                }
                layers.add(String.format(Locale.ROOT, "%s (K %d, N %d)", g.layer(lf.layer()).name(), kn[0], kn[1]));
            }
        }
        if (layers.isEmpty()) {
            return Optional.empty();
        }
        List<String> remedies = new ArrayList<>();
        boolean misalignedHead = head > 0 && head % aligned != 0;
        if (misalignedHead) {
            remedies.add(String.format(Locale.ROOT, "heads of %d or %d dimensions (multiples of %d) or a fused "
                    + "attention core (FlashAttention)", Math.max(aligned, head / aligned * aligned),
                    (head / aligned + 1) * aligned, aligned));
        } else if (sequence) {
            remedies.add(String.format(Locale.ROOT, "a sequence length that is a multiple of %d or a fused attention "
                    + "core (FlashAttention)", aligned));
        }
        if (layers.size() > (head > 0 ? 2 : 0)) {
            remedies.add(split ? String.format(Locale.ROOT, "widths that are multiples of %d on each GPU (of %d × "
                    + "the tensor parallelism before the split, or less tensor parallelism)", aligned, aligned)
                    : String.format(Locale.ROOT, "widths that are multiples of %d", aligned));
        }
        List<String> names = new ArrayList<>(layers);
        String listed = names.size() == 1 ? names.get(0) : String.join(", ", names.subList(0, names.size() - 1))
                + " and " + names.get(names.size() - 1);
        String modelled = !toFp32 ? String.format(Locale.ROOT, "cuBLAS cannot copy %s with the tensor memory "
                + "accelerator: modelled at %.2f× (rows of 4 or 8 bytes) or %.1f× (2 bytes) an aligned product's time, "
                + "as measured on an H200", names.size() > 1 ? "them" : "it", TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN,
                TensorCoreAlignment.ELEMENT_ALIGNED_SLOWDOWN)
                : String.format(Locale.ROOT, "cuBLAS cannot feed %s to the tensor cores at their rate: modelled at the "
                + "FP32 units' throughput%s", names.size() > 1 ? "them" : "it",
                misalignedHead ? ", as BLOOM's runs of such heads measure" : "");
        return Optional.of(String.format(Locale.ROOT, "the %s product%s %s ha%s a reduction length or output width "
                + "that is not a multiple of %d bytes, so %s; %s avoid this",
                prec.highPrecision().label().toUpperCase(Locale.ROOT), names.size() > 1 ? "s" : "", listed,
                names.size() > 1 ? "ve" : "s", TensorCoreAlignment.BYTES, modelled, String.join("; ", remedies)));
    }

    // --------------------------------------------------------------------------------------------------- stages

    /** The layers of each block kind per pipeline stage, per graph and split (callers only read the arrays). */
    private static final GraphCache<Long, int[][]> STAGE_KINDS = new GraphCache<>(256);

    /**
     * How many times stage {@code s} runs unit {@code u} per micro-batch: the prologue on the first stage, the
     * epilogue (output head and loss) on the last, once more per multi-token-prediction module ({@code mtp}, in
     * training), and its layers of each kind, the last stage {@code mtp} more of kind {@code mtpKind}.
     */
    private static int units(int[][] stages, int s, int u, int p, int mtp, int mtpKind) {
        if (u == PROLOGUE) {
            return s == 0 ? 1 : 0;
        }
        if (u == EPILOGUE) {
            return s == p - 1 ? 1 + mtp : 0;
        }
        return stages[s][u - 2] + (s == p - 1 && u - 2 == mtpKind ? mtp : 0);
    }

    /** The layers of each stage: per stage, per block kind, how many. */
    private static int[][] stageKinds(ModelGraph g, int p, int v, int mtp) {
        long key = ((long) p << 40) | ((long) v << 20) | mtp;
        return STAGE_KINDS.get(g, key, () -> stageKinds(g.blocks().orElseThrow(), p, v, mtp));
    }

    private static int[][] stageKinds(Blocks blocks, int p, int v, int mtp) {
        int[] sizes = split(blocks.copies(), p * v, mtp);
        if (sizes == null) {
            sizes = new int[p * v];
            for (int i = 0; i < blocks.copies(); i++) {
                sizes[i % (p * v)]++;
            }
        }
        int[][] out = new int[p][blocks.kinds()];
        int at = 0;
        for (int j = 0; j < sizes.length; j++) {
            for (int l = at; l < at + sizes[j]; l++) {
                out[j % p][blocks.pattern().get(l)]++;
            }
            at += sizes[j];
        }
        return out;
    }

    /**
     * Everything a layout's iteration is made of, before the coefficients: a job's terms and memory, and
     * {@code steady}, the share of the per-layer terms that is the busiest stage's micro-batches, the rest the other
     * stages' part of the pipeline's fill and drain ({@code m·T_max / (m·T_max + Σ_{s≠max} T_s / v)}, as the terms
     * weigh the stages; 1 without a pipeline or without times); {@code adapterShare} and {@code expertAdapterShare}, the
     * shares of the {@link ExecutionTerm#OTHER} and {@link ExecutionTerm#EXPERT_OTHER} terms that are LoRA adapters'
     * products (the breakdown says them apart from the layers); {@code quantisationShare} and
     * {@code expertQuantisationShare}, the shares that quantise low-precision operands (said apart too);
     * {@code busiestUnits}, how many times the busiest stage runs each unit (prologue, epilogue, a layer of each block
     * kind) a micro-batch.
     */
    private record Assembly(MegatronTerms terms, StageMemory memory, double steady, double adapterShare,
            double expertAdapterShare, double quantisationShare, double expertQuantisationShare, double hostBytes,
            double sendsHidden, int[] busiestUnits) {
        double memoryBytes() {
            return memory.total();
        }
    }

    /**
     * The memory of one pipeline stage per GPU, bytes.
     *
     * @param stage       the stage (0-based)
     * @param states      weights, gradients and optimizer states, ZeRO-sharded
     * @param quantised   the low-precision copies of the weights
     * @param activations what the micro-batches in flight keep for the backward pass
     * @param inFlight    how many micro-batches' activations are held at the peak
     * @param logits      the last stage's output logits (FP32, for the loss)
     * @param host        the offloaded activations its micro-batches in flight keep in the host's memory (not in
     *                    {@link #total()}, the GPU's)
     */
    record StageMemory(int stage, double states, double quantised, double activations, double inFlight,
            double logits, double host) {
        double total() {
            return states + quantised + activations + logits + ParallelExecution.RUNTIME_BYTES;
        }

        /** Its parts, GiB, as the prediction gives them ({@code training}: weights with their gradients and states). */
        org.scaledl.model.cost.MemoryUse parts(int stages, boolean training) {
            return new org.scaledl.model.cost.MemoryUse(stage + 1, stages, training, states / GIB, quantised / GIB,
                    activations / GIB, inFlight, logits / GIB, ParallelExecution.RUNTIME_BYTES / GIB, host / GIB);
        }
    }

    /**
     * The uncalibrated terms of an iteration (see the class comment).
     *
     * @param topology the job's topology (an NVLink domain larger than a node is one node to the collectives)
     */
    public static MegatronTerms terms(Workload w, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, Topology topology) {
        return assemble(w, layers, communication, device, topology.scaleUp(), true).terms();
    }

    /** The memory per GPU of a job's most loaded stage, bytes (no communication model needed). */
    public static double memoryBytes(Workload w, DeviceLayerCost layers, Device device) {
        return memory(w, layers, device).total();
    }

    /**
     * The offloaded activations a job keeps in its host's memory per GPU at the peak, bytes (its most loaded
     * stage's; 0 without offloading).
     */
    public static double hostBytes(Workload w, DeviceLayerCost layers, Device device) {
        return footprint(w, layers, device).hostBytes();
    }

    static StageMemory memory(Workload w, DeviceLayerCost layers, Device device) {
        return footprint(w, layers, device).memory();
    }

    /** A job's memory on the GPU and in the host, assembled once without a communication model. */
    private static Assembly footprint(Workload w, DeviceLayerCost layers, Device device) {
        return assemble(w, layers, Optional.empty(), device, MEMORY_ONLY, false);
    }

    /** The topology a memory-only assembly passes: memory depends on none. */
    private static final Topology MEMORY_ONLY = Topology.of(8, Topology.Link.NVSWITCH, 300, 1600);

    /**
     * The job with its recomputation decided: {@link Recompute#AUTO} becomes none where the job fits in the device's
     * memory, else the least recomputation that makes it fit (selective where the attention core is not fused, then
     * full recomputation of the first {@code n} layers of each model chunk for the smallest such {@code n}, then of
     * every layer; on a Grace superchip, offloading the first layers' activations before any recomputation, where the
     * host's memory holds them, {@link #hostMemoryBytes}). Where the experts' all-to-all overlap forbids full recomputation
     * ({@link Workload#expertCommOverlap()}), selective recomputation of more and more modules instead
     * ({@link #OVERLAP_LADDER}: the attention core, then the modules that discard their output, then every module but
     * the whole mixture of experts). Where nothing fits (the weights and states do not), the least memory it reaches:
     * full recomputation, or the most selective one the overlap allows (the prediction then warns of the memory, and
     * {@link #resolution} says that none fits); none in inference, or where offloading is given (full recomputation
     * cannot be combined with it). Any other setting is kept.
     */
    public static Workload resolve(Workload w, DeviceLayerCost layers, Device device) {
        if (w.recompute() != Recompute.AUTO) {
            return w;
        }
        Workload none = w.toBuilder().recompute(Recompute.NONE).recomputeLayers(0).build();
        double capacity = device.memoryGB() * GIB;
        if (w.phase() != Phase.TRAIN || !(capacity > 0) || memoryBytes(none, layers, device) <= capacity) {
            return none;
        }
        boolean[] fused = fusedCores(w.graph());
        boolean unfused = false;
        for (boolean f : fused) {
            unfused |= !f;
        }
        if (unfused) {
            // an unfused core keeps its scores: recomputing it (selective recomputation) frees them
            Workload selective = w.toBuilder().recompute(Recompute.SELECTIVE).recomputeLayers(0).build();
            if (memoryBytes(selective, layers, device) <= capacity) {
                return selective;
            }
        }
        if (w.offloadLayers() > 0) {
            // offloading given: the activations it leaves on the GPU do not fit; full recomputation cannot be combined
            // with it, so the memory warning says the rest
            return none;
        }
        int chunk = layersOfAChunk(w);
        if (coherentHost(device)) {
            // a Grace superchip reaches its CPU's memory over NVLink-C2C: tuned recipes (Megatron-Bridge's on GB200)
            // offload the activations of the first layers there rather than recompute them; the fewest that fit the
            // GPU, where the host's memory holds them
            Assembly all = footprint(none.toBuilder().offloadLayers(chunk).build(), layers, device);
            if (all.memoryBytes() <= capacity) {
                Workload least = leastThatFits(n -> none.toBuilder().offloadLayers(n).build(), chunk, layers, device,
                        capacity);
                // offloading more layers only adds to the host's part: where every layer's fits the host, the
                // fewest's do; where the fewest that fit the GPU overfill the host's memory, recomputation it is
                double hostMemory = hostMemoryBytes(device);
                if (all.hostBytes() <= hostMemory || hostBytes(least, layers, device) <= hostMemory) {
                    return least;
                }
            }
        }
        if (w.expertCommOverlap()) {
            // Megatron core runs the all-to-all overlap without full recomputation only: selective recomputation of
            // more and more modules; where none fits, the most (the least memory, which the memory warning gives)
            Workload selective = none;
            for (Set<RecomputeModule> modules : overlapLadder(w.graph())) {
                selective = w.toBuilder().recompute(Recompute.SELECTIVE).recomputeLayers(0).recomputeModules(modules)
                        .build();
                if (memoryBytes(selective, layers, device) <= capacity) {
                    return selective;
                }
            }
            return selective;
        }
        Workload full = w.toBuilder().recompute(Recompute.FULL).recomputeLayers(0).build();
        if (memoryBytes(full, layers, device) > capacity) {
            // what does not fit is not the activations alone: the least memory the job reaches, which the memory
            // warning then gives (none would predict a job further from running, and faster than it could run)
            return full;
        }
        // the memory falls as more layers are recomputed: the least n that fits
        return leastThatFits(n -> w.toBuilder().recompute(Recompute.FULL).recomputeLayers(n >= chunk ? 0 : n).build(),
                chunk, layers, device, capacity);
    }

    /**
     * What {@link #resolve} recomputes selectively, in turn, where the experts' all-to-all overlap forbids full
     * recomputation: the attention core (Megatron core's default), the modules that discard their output as well
     * ({@code layernorm}, {@code moe_act}, {@code mla_up_proj}: Megatron-Bridge's MoE recipes), those with the
     * attention core, then every module but {@code moe} (which the overlap forbids too).
     */
    static final List<Set<RecomputeModule>> OVERLAP_LADDER = List.of(RecomputeModule.DEFAULT,
            java.util.Collections.unmodifiableSet(java.util.EnumSet.of(RecomputeModule.LAYERNORM,
                    RecomputeModule.MOE_ACT, RecomputeModule.MLA_UP_PROJ)),
            java.util.Collections.unmodifiableSet(java.util.EnumSet.of(RecomputeModule.CORE_ATTN,
                    RecomputeModule.LAYERNORM, RecomputeModule.MOE_ACT, RecomputeModule.MLA_UP_PROJ)),
            java.util.Collections.unmodifiableSet(java.util.EnumSet.complementOf(java.util.EnumSet.of(
                    RecomputeModule.MOE))));

    /**
     * {@link #OVERLAP_LADDER} for a model: each set of modules cut to those that name a layer of it (no
     * {@code mla_up_proj} without latent attention, no {@code mlp} without dense layers), a set left empty or equal to
     * the one before dropped.
     */
    public static List<Set<RecomputeModule>> overlapLadder(ModelGraph g) {
        List<Set<RecomputeModule>> out = new ArrayList<>();
        for (Set<RecomputeModule> rung : OVERLAP_LADDER) {
            java.util.EnumSet<RecomputeModule> kept = java.util.EnumSet.noneOf(RecomputeModule.class);
            for (RecomputeModule m : rung) {
                RecomputeModule[] alone = RecomputeRegions.of(g, java.util.EnumSet.of(m));
                if (java.util.Arrays.stream(alone).anyMatch(x -> x == m)) {
                    kept.add(m);
                }
            }
            Set<RecomputeModule> set = kept.equals(RecomputeModule.DEFAULT) ? RecomputeModule.DEFAULT
                    : java.util.Collections.unmodifiableSet(kept);
            if (!kept.isEmpty() && (out.isEmpty() || !out.get(out.size() - 1).equals(set))) {
                out.add(set);
            }
        }
        return List.copyOf(out);
    }

    /**
     * The job {@code of(n)} for the least {@code n} in {@code [1, hi]} whose memory fits {@code capacity}, by
     * bisection (the memory falls as {@code n} grows; {@code of(hi)} fits).
     */
    private static Workload leastThatFits(java.util.function.IntFunction<Workload> of, int hi, DeviceLayerCost layers,
            Device device, double capacity) {
        int lo = 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (memoryBytes(of.apply(mid), layers, device) <= capacity) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return of.apply(lo);
    }

    /**
     * Host-memory bandwidth a GPU of a Grace superchip has each way over NVLink-C2C, bytes/s: the link's 900 GB/s
     * both ways together, {@value #C2C_GBPS_EACH_WAY} GB/s each (an assumption where two GPUs share one CPU: the data
     * sheets give the link's figure, not a GPU's share).
     */
    static final double C2C_GBPS_EACH_WAY = 450;

    /**
     * The host memory a GPU's offloaded activations may fill, bytes: a Grace superchip's CPU memory (480 GB of
     * LPDDR5X, GB200 and GB300) over its two GPUs, or an 8-GPU server's 2 TB (DGX H100, H200, B200) over its eight, less
     * {@value #HOST_RESERVED_SHARE} of it for the operating system, the framework's own host memory and its pinned
     * staging buffers (an assumption: servers differ, and the data sheets give the memory, not what a job may use).
     */
    static double hostMemoryBytes(Device device) {
        return (1 - HOST_RESERVED_SHARE) * (coherentHost(device) ? GRACE_BYTES / 2 : SERVER_HOST_BYTES / 8);
    }

    /**
     * Said where a job holds its weights as a checkpoint stores them (serving, or a LoRA run's frozen base) and the
     * configuration says they are stored quantised ({@link TransformerShape#storedQuantization()}), which is not
     * read: the weights are predicted in the job's precision.
     */
    static Optional<String> storedQuantizationNote(Workload w) {
        TransformerShape ts = w.graph().transformer().orElseThrow();
        if (ts.storedQuantization().isEmpty() || w.phase() == Phase.TRAIN && w.loraRank() == 0) {
            return Optional.empty();
        }
        return Optional.of("the model's checkpoint is stored quantised (quantization_config: "
                + ts.storedQuantization() + "), which is not read: the " + (w.phase() == Phase.TRAIN ? "frozen base's "
                : "")
                + "weights are predicted in " + w.precision().label() + ", so held as stored they take less memory "
                + "than predicted");
    }

    /** A Grace CPU's memory, bytes. */
    private static final double GRACE_BYTES = 480e9;
    /** An 8-GPU server's host memory, bytes. */
    private static final double SERVER_HOST_BYTES = 2e12;
    /** The share of a GPU's part of its host's memory an offloading job cannot have. */
    static final double HOST_RESERVED_SHARE = 0.25;

    /**
     * What a job's offloaded activations keep in its host's memory, per GPU: said where it offloads; warned where it
     * is more than {@link #hostMemoryBytes} (it cannot run as given).
     */
    static Optional<StageCost.Note> hostMemoryNote(Workload w, Device device, double host) {
        if (!(host > 0)) {
            return Optional.empty();
        }
        double cap = hostMemoryBytes(device);
        // a count beyond a chunk's layers offloads every layer of it (another note says so): the layers offloaded
        int n = Math.min(w.offloadLayers(), layersOfAChunk(w));
        String layers = n == 1 ? "offloaded layer's" : "offloaded layers'";
        String where = coherentHost(device) ? "a Grace CPU's 480 GB over its two GPUs"
                : "assumed: an 8-GPU server's 2 TB over its eight";
        // the stage that offloads most, which need not be the one whose GPU holds most (its parts say their own)
        String stage = w.parallelism().pipeline() > 1 ? " at the pipeline stage that offloads most" : "";
        if (host > cap) {
            return Optional.of(StageCost.Note.unusual(String.format(Locale.ROOT, "the %d %s activations "
                    + "keep %.1f GiB per GPU in the host's memory%s, more than the %.1f GiB a GPU may fill (%s, less "
                    + "%.0f %% for the system and the framework): the job cannot run as given (offload fewer layers, "
                    + "or recompute)", n, layers, host / GIB, stage, cap / GIB, where, 100 * HOST_RESERVED_SHARE)));
        }
        return Optional.of(StageCost.Note.noted(String.format(Locale.ROOT, "the %d %s activations keep "
                + "%.1f GiB per GPU in the host's memory%s (of the %.1f GiB a GPU may fill: %s, less %.0f %%)",
                n, layers, host / GIB, stage, cap / GIB, where, 100 * HOST_RESERVED_SHARE)));
    }

    /** Grid step and half-width of {@link #expectedMaxOfNormals}'s integral. */
    private static final double MAX_STEP = 1e-3;
    private static final double MAX_RANGE = 12;
    /** {@link #expectedMaxOfNormals} by ranks, computed once each. */
    private static final java.util.concurrent.ConcurrentHashMap<Integer, Double> EXPECTED_MAX =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The expected maximum of {@code n} independent standard normal deviates (0 for one, 1/√π for two, 1.03 for
     * four, 1.42 for eight): how far, in standard deviations of a rank's time, the slowest of {@code n} ranks lags
     * their mean. {@code ∫ x · n φ(x) Φ(x)^(n−1) dx} on a grid of step 0.001 over ±12 (Φ accumulated along it by the
     * trapezoid rule), computed once for each {@code n}.
     *
     * @throws IllegalArgumentException if {@code n < 1}
     */
    static double expectedMaxOfNormals(int n) {
        Checks.argument(n >= 1, "ranks must be at least 1: %s", n);
        return n == 1 ? 0 : EXPECTED_MAX.computeIfAbsent(n, k -> {
            int points = (int) Math.round(2 * MAX_RANGE / MAX_STEP) + 1;
            double sum = 0;
            double cdf = 0;
            double previousPdf = 0;
            for (int i = 0; i < points; i++) {
                double x = -MAX_RANGE + i * MAX_STEP;
                double pdf = Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
                cdf += i == 0 ? 0 : 0.5 * MAX_STEP * (previousPdf + pdf);
                previousPdf = pdf;
                sum += x * k * pdf * Math.pow(cdf, k - 1);
            }
            return sum * MAX_STEP;
        });
    }

    /** Whether the GPU reaches its host's memory coherently over NVLink-C2C (a Grace superchip: GB200, GB300). */
    static boolean coherentHost(Device device) {
        return device.superchip();
    }

    /** Bytes a second an offloaded activation moves each way between the GPU and its host's memory. */
    private static double hostBytesPerSecond(Device device) {
        return 1e9 * (coherentHost(device) ? C2C_GBPS_EACH_WAY : Math.max(1, device.pcieGBps()));
    }

    private static final double GIB = org.scaledl.model.cost.MemoryUse.BYTES_PER_GIB;

    /** How {@link #resolution}'s note starts: a job that left its recomputation to the predictor. */
    private static final String RESOLUTION_NOTE = "recompute auto (left to the predictor): ";

    /**
     * What {@link #resolve} decided for a job that left its recomputation to the predictor, when it recomputes;
     * {@code fits}: whether the resolved job fits in the device's memory (where it does not, that no recomputation
     * makes it fit).
     */
    static Optional<String> resolution(Workload given, Workload resolved, Device device, boolean fits) {
        if (given.recompute() != Recompute.AUTO) {
            return Optional.empty();
        }
        if (resolved.offloadLayers() > 0 && given.offloadLayers() == 0) {
            return Optional.of(RESOLUTION_NOTE + "the activations of the first " + resolved.offloadLayers()
                    + " layer" + (resolved.offloadLayers() == 1 ? "" : "s") + " of each pipeline stage's model chunk "
                    + "offloaded to the Grace CPU's memory over NVLink-C2C (offload_layers "
                    + resolved.offloadLayers() + ", no recomputation) to fit the " + device.memoryGB() + " GiB of "
                    + device.name() + ", as Megatron-Bridge's GB200 recipes do (give recompute none to see what it "
                    + "would need)");
        }
        if (resolved.recompute() == Recompute.NONE) {
            return Optional.empty();
        }
        String what = resolved.recompute() == Recompute.SELECTIVE ? "selective recomputation"
                + (resolved.recomputeModules().equals(RecomputeModule.DEFAULT) ? ""
                        : " of " + RecomputeModule.label(resolved.recomputeModules()))
                : resolved.recomputeLayers() > 0 ? "full recomputation of the first " + resolved.recomputeLayers()
                        + " layer" + (resolved.recomputeLayers() == 1 ? "" : "s") + " of each pipeline stage's model "
                        + "chunk (recompute full, recompute_layers " + resolved.recomputeLayers() + ")"
                : "full recomputation of every layer";
        if (!fits) {
            return Optional.of(RESOLUTION_NOTE + "no recomputation" + (given.expertCommOverlap() ? " the experts' "
                    + "all-to-all overlap allows (it forbids full recomputation)" : "") + " fits the job in the "
                    + device.memoryGB() + " GiB of " + device.name() + ": predicted with " + what + ", the "
                    + "least memory it reaches (the memory warning says how much: more parallelism, ZeRO or a smaller "
                    + "micro-batch)");
        }
        return Optional.of(RESOLUTION_NOTE + what + " to fit the " + device.memoryGB() + " GiB of "
                + device.name() + ", as tuned training recipes do (give recompute none to see what it would need)");
    }

    private static Assembly assemble(Workload given, DeviceLayerCost layers,
            Optional<CommunicationModel> communication, Device device, Topology topo, boolean withTime) {
        Workload w = resolve(given, layers, device);
        ModelGraph g = w.graph();
        TransformerShape ts = g.transformer().orElseThrow();
        Blocks blocks = g.blocks().orElseThrow();
        Parallelism par = w.parallelism();
        boolean train = w.phase() == Phase.TRAIN;
        Precision prec = w.precision();
        Precision run = device.runs(prec).orElse(prec);   // a GPU without FP4 units runs NVFP4's fallback
        Recompute rc = train ? w.recompute() : Recompute.NONE;
        int t = par.tensor();
        int p = par.pipeline();
        int m = par.microBatches();
        int v = par.virtualStages();
        int d = par.data();
        int c = par.context();
        int e = par.expert();
        int b = microBatch(w);
        // on one expert rank every rank holds every expert: no rank receives more than its share
        double imbalance = Math.min(w.expertImbalance(), mostExpertImbalance(ts, par.expert()));
        Unit[] units = units(w, layers, device, b, rc, withTime);
        int[][] stages = stageKinds(g, p, v, ts.mtpLayers());
        // the multi-token-prediction modules train on the last stage: each a layer of the last layer's kind and
        // another pass through the (shared) output head and loss, computed there, their weights the layer's only
        int mtp = train ? ts.mtpLayers() : 0;
        int mtpKind = blocks.pattern().get(blocks.copies() - 1);
        // full recomputation of the first layers of each model chunk only: per stage, the share recomputed
        int partial = rc == Recompute.FULL ? w.recomputeLayers() : 0;
        Unit[] plain = partial > 0 ? units(w, layers, device, b, Recompute.NONE, withTime) : units;
        double[] recomputed = new double[p];
        double[] offloaded = new double[p];
        int[] layersOn = new int[p];
        Unit[][] stageUnits = new Unit[p][];
        for (int s = 0; s < p; s++) {
            int n = 0;
            for (int k : stages[s]) {
                n += k;
            }
            layersOn[s] = n + (s == p - 1 ? mtp : 0);
            n = layersOn[s];
            recomputed[s] = rc != Recompute.FULL ? 0 : partial == 0 || n == 0 ? 1
                    : Math.min(1.0, (double) partial * v / n);
            offloaded[s] = !train || w.offloadLayers() == 0 || n == 0 ? 0
                    : Math.min(1.0, (double) w.offloadLayers() * v / n);
            stageUnits[s] = units;
            if (partial > 0 && !withTime) {
                // memory reads what the units keep and hold, which recomputation does not change
                stageUnits[s] = plain;
            } else if (partial > 0) {
                stageUnits[s] = new Unit[units.length];
                for (int u = 0; u < units.length; u++) {
                    stageUnits[s][u] = u >= 2 ? mix(plain[u], units[u], recomputed[s]) : plain[u];
                }
            }
        }
        double actBytes = prec.activationBytes();
        // per stage: compute, and the per-micro-batch collectives
        double[] stageTime = new double[p];
        double[] stageParams = new double[p];
        double[] stageExpertParams = new double[p];
        double[] stageLowParams = new double[p];
        double[] stageAdapters = new double[p];
        double[] stageSaved = new double[p];
        // each stage's unit's compute (ms per pass of a micro-batch), for the tensor-parallel wait below
        double[][] unitCompute = new double[p][units.length];
        double tpOne = 0;
        double cpExposed = 0;
        double a2aOne = 0;
        CommunicationModel comm = communication.orElse(null);
        if (withTime && t > 1 && comm != null) {
            double bytes = (double) b * ts.seq() / c * ts.hidden() * actBytes;
            // ranks are placed in order: where the domain is no whole number of groups (or a group no whole number of
            // domains), a group of the job's straddles two with gcd(t, domain) ranks on a side, and the slowest group
            // sets the pace
            int perNode = ranksPerNode(t, topo.gpusPerNode(), par.ranks());
            tpOne = par.sequenceParallel() ? 2 * comm.reduceScatterMillis(device, topo, t, perNode, bytes)
                    : comm.allReduceMillis(device, topo, t, perNode, bytes);
        }
        if (withTime && e > 1 && comm != null) {
            a2aOne = allToAllMillis(topo, e, par.expertTensor(), (double) b * ts.seq() / c / t, ts, prec,
                    w.moeDispatcher());
        }
        // a tied head's weights (the word embedding's) the last stage holds a copy of with a pipeline; the copy the
        // MTP modules need is the whole prologue's (below)
        long tiedWeights = p > 1 ? tiedHeadWeights(w.graph()) : 0;
        for (int s = 0; s < p; s++) {
            double time = 0;
            for (int u = 0; u < units.length; u++) {
                int n = units(stages, s, u, p, mtp, mtpKind);
                // the weights a stage holds: the MTP's extra passes through the output head and loss share the head's;
                // with a pipeline, the last stage also holds a copy of the input embedding for the modules
                // (Megatron-Core builds it where the MTP is), or else of a tied head's word embedding alone (not a
                // learned position table), whose gradient the first and last stages add up (the pipeline's time)
                int owned = n;
                if (s == p - 1 && u == EPILOGUE) {
                    owned = 1;
                    if (mtp == 0 && tiedWeights > 0) {
                        stageParams[s] += (double) tiedWeights / t;
                    }
                } else if (s == p - 1 && u == PROLOGUE && p > 1 && mtp > 0) {
                    owned = 1;
                }
                if (n == 0 && owned == 0) {
                    continue;
                }
                Unit un = stageUnits[s][u];
                stageParams[s] += owned * un.params();
                stageExpertParams[s] += owned * un.expertParams();
                stageLowParams[s] += owned * un.lowPrecisionParams();
                stageAdapters[s] += owned * un.adapterParams();
                stageSaved[s] += n * un.saved(imbalance);
                if (!withTime) {
                    continue;
                }
                unitCompute[s][u] = unitComputeMillis(un, imbalance);
                time += n * (unitCompute[s][u] + un.tpCollectives() * tpOne);
            }
            stageTime[s] = time;
        }
        int max = 0;
        for (int s = 1; s < p; s++) {
            if (stageTime[s] > stageTime[max]) {
                max = s;
            }
        }
        // the busiest stage's m micro-batches against the others' share of a micro-batch each (1 / v with enough
        // micro-batches to interleave), as the terms below weigh them
        double fill = fillShare(p, v, m);
        double fillTime = 0;
        for (int s = 0; s < p; s++) {
            fillTime += s == max ? 0 : stageTime[s] * fill;
        }
        double steady = withTime && p > 1 && m * stageTime[max] + fillTime > 0
                ? m * stageTime[max] / (m * stageTime[max] + fillTime) : 1;
        MegatronTerms.Builder out = MegatronTerms.builder();
        double other = 0;
        double attentionOther = 0;
        double expertOther = 0;
        double adapters = 0;
        double expertAdapters = 0;
        double quantised = 0;
        double expertQuantised = 0;
        double tensor = 0;
        double expertComm = 0;
        double context = 0;
        double sync = 0;
        // what the busiest stage's all-to-all and context-parallel exchanges add to the window the data-parallel
        // collectives hide behind, a micro-batch (uncalibrated, ms): inside an NVLink domain their exposed time (the
        // micro-batch lasts it, the network idle), over the network less the part the compute hides (the network
        // carries both: the compute hides no more than once)
        double exposedComm = 0;
        // the same for a micro-batch whose passes pair with none (the first's forward, the last's backward: those the
        // gradients' reduction and the weights' gather of ZeRO 1-2 hide behind), its all-to-all exposed whole
        double unpairedComm = 0;
        boolean a2aInside = (long) e * par.expertTensor() <= topo.gpusPerNode();
        // how far the slowest of the t ranks lags their mean, in standard deviations of a rank's time
        double lag = t > 1 ? expectedMaxOfNormals(t) : 0;
        // the all-to-all overlap pairs two micro-batches' passes of the busiest stage's steady state: a training step
        // with more than one micro-batch
        boolean overlapA2a = w.expertCommOverlap() && train && m > 1;
        long[][] keyValues = c > 1 ? keyValues(w.graph()) : null;
        // the whole mixture of experts recomputed (module moe, where it names layers): its all-to-all again
        boolean moeRecomputed = rc == Recompute.SELECTIVE && w.recomputeModules().contains(RecomputeModule.MOE)
                && java.util.Arrays.asList(RecomputeRegions.of(w.graph(), w.recomputeModules()))
                        .contains(RecomputeModule.MOE);
        if (withTime) {
            // a unit's contractions are the same on every stage (unless a part of the layers is recomputed): their
            // weights summed over the stages, one entry each (the floors scale with the weight, so this is exact)
            double[] unitWeight = new double[units.length];
            for (int s = 0; s < p; s++) {
                double weight = s == max ? m : fill;
                for (int u = 0; u < units.length; u++) {
                    int n = units(stages, s, u, p, mtp, mtpKind);
                    if (n == 0) {
                        continue;
                    }
                    Unit un = stageUnits[s][u];
                    double k = n * weight;
                    if (partial == 0) {
                        unitWeight[u] += k;
                    } else {
                        contractions(out, un, k, imbalance);
                    }
                    other += k * un.other();
                    expertOther += k * un.expertOther() * imbalance;
                    adapters += k * un.adapters();
                    expertAdapters += k * un.expertAdapters() * imbalance;
                    quantised += k * un.quantisation();
                    expertQuantised += k * un.expertQuantisation() * imbalance;
                    attentionOther += k * un.attentionOther();
                    tensor += k * un.tpCollectives() * tpOne;
                    if (un.tpCollectives() > 0) {
                        // each collective waits for the slowest of the t ranks' compute before it
                        sync += k * unitCompute[s][u] * lag;
                    }
                    if (e > 1 && un.expertLayers() > 0) {
                        // recomputing the whole mixture of experts (module moe) dispatches and combines again
                        double passes = train ? 4 + 2 * Math.max(recomputed[s], moeRecomputed ? 1 : 0) : 2;
                        double a2a = un.expertLayers() * passes * a2aOne * imbalance;
                        double whole = a2a;
                        if (overlapA2a && s == max) {
                            // Megatron's overlap_moe_expert_parallel_comm: one micro-batch's forward dispatch and
                            // combine behind another's backward compute of the same layers, its backward ones (and a
                            // recomputed forward's) behind the other's forward (a third of a layer's compute, two
                            // thirds backward); the passes of the schedule's steady state have a partner
                            double forward = un.expertLayers() * 2 * a2aOne * imbalance;
                            double compute = unitCompute[s][u];
                            double exposed = Math.max(0, forward - 2.0 / 3 * compute)
                                    + Math.max(0, a2a - forward - compute / 3);
                            double paired = pairedShare(p, v, m, s);
                            a2a = (1 - paired) * a2a + paired * exposed;
                        }
                        expertComm += k * a2a;
                        if (s == max) {
                            exposedComm += n * (a2a - (a2aInside ? 0 : whole));
                            unpairedComm += n * (a2aInside ? whole : 0);
                        }
                    }
                    if (c > 1 && un.attention() > 0 && comm != null) {
                        double[] ring = contextExchange(topo, b, ts, keyValues[u], t, c, par.ranks(), actBytes, train);
                        double cp = contextExposed(un, ring);
                        context += k * cp;
                        double adds = s == max ? n * (cp - (ring[2] > 0 ? 0 : ring[0] + ring[1])) : 0;
                        exposedComm += adds;
                        unpairedComm += adds;
                    }
                }
                other += weight * offloadExposed(device, offloaded[s], stageSaved[s], stageTime[s]);
            }
            for (int u = 0; u < units.length; u++) {
                if (unitWeight[u] > 0) {
                    contractions(out, units[u], unitWeight[u], imbalance);
                }
            }
        }
        cpExposed = context;
        // the host's steps: the layers of the most loaded stage (and of them, those with routed experts), for every
        // micro-batch and the fill
        int layersMax = 0;
        int expertLayersMax = 0;
        // the kernels a layer of that stage dispatches against a layer's usual ones (more where the softmax falls
        // back to PyTorch's kernels: SoftmaxFallback)
        double dispatch = 1;
        for (int s = 0; s < p; s++) {
            int expertLayers = 0;
            double stageLayers = 0;
            double weighted = 0;
            for (int u = 2; u < units.length; u++) {
                int n = units(stages, s, u, p, mtp, mtpKind);
                expertLayers += n * units[u].expertLayers();
                stageLayers += n;
                weighted += n * stageUnits[s][u].dispatch();
            }
            double factor = stageLayers > 0 ? weighted / stageLayers : 1;
            if (layersOn[s] > layersMax || layersOn[s] == layersMax && (expertLayers > expertLayersMax
                    || expertLayers == expertLayersMax && factor > dispatch)) {
                layersMax = layersOn[s];
                expertLayersMax = expertLayers;
                dispatch = factor;
            }
        }
        // a training step dispatches a layer's forward and backward kernels, an inference step its forward ones (a
        // third: the backward pass launches about twice the forward's kernels)
        double perStep = (m - 1 + p) * (w.phase() == Phase.INFER ? 1.0 / 3 : 1);
        double steps = layersMax * perStep * dispatch;
        double expertSteps = expertLayersMax * perStep;
        if (w.cudaGraphs() == CudaGraphs.ITERATION) {
            // the whole iteration replayed as one graph: no layer's kernels dispatched by the host one by one
            steps = 0;
            expertSteps = 0;
        }
        double sends = 0;
        double pipeline = 0;
        // the pipeline's time the interleaved schedule's overlap hides (raw, as the pipeline term)
        double sendsHidden = 0;
        if (withTime && p > 1 && comm != null) {
            double bytes = (double) b * ts.seq() / c * ts.hidden() * actBytes / t;
            sends = (train ? 2 : 1) * (m + p - 1) * v;
            // the steady state paced by the slowest hop (one at a node's edge where any leaves it), the fill and
            // drain through every hop once: where several stages share a node, only the hops at its edges leave it
            int[] hops = ParallelExecution.pipelineHops(topo, (long) t * c * d, p, v);
            double network = comm.sendMillis(device, topo, true, bytes);
            double nvlink = comm.sendMillis(device, topo, false, bytes);
            double slowest = hops[1] > 0 ? network : nvlink;
            double mixed = (hops[1] * network + (hops[0] - hops[1]) * nvlink) / hops[0];
            // the interleaved schedule overlaps its steady state's sends with the next chunk's pass (Megatron's
            // overlap_p2p_comm, on by default there and only there): a send costs what it takes beyond that pass
            double window = v > 1 ? stageTime[max] / ((train ? 2.0 : 1.0) * v) : 0;
            pipeline = (train ? 2 : 1) * v * (m * Math.max(0, slowest - window) + (p - 1) * mixed);
            sendsHidden = (train ? 2 : 1) * v * m * (slowest - Math.max(0, slowest - window));
            long copied = mtp > 0 ? Math.max(tiedWeights, wordEmbeddingWeights(w.graph())) : tiedWeights;
            if (train && copied > 0 && w.loraRank() == 0) {
                // the last stage's copy of the word embedding (a tied head's, the MTP modules'): its gradient and the
                // first stage's added up once a step between the two stages' ranks of each tensor slice (Megatron's
                // embedding group), across nodes unless the whole job sits in one; LoRA freezes it (no gradient)
                // (every pair at once, one a first-stage rank: apart, the first stage's ranks on a node share its
                // network, as many as its GPUs or the stage's tensor x context x data ranks)
                boolean apart = (long) par.ranks() > topo.gpusPerNode();
                int pairs = (int) Math.max(1, Math.min(topo.gpusPerNode(), (long) t * c * d));
                pipeline += comm.allReduceMillis(device, apart ? ParallelExecution.sharedNetwork(topo,
                        Math.max(1, topo.gpusPerNode() / pairs)) : topo, 2, apart ? 1 : 2, (double) copied / t
                        * w.gradientBytes());
            }
        }
        int maxParams = 0;
        for (int s = 1; s < p; s++) {
            if (stageParams[s] + stageExpertParams[s] / e > stageParams[maxParams] + stageExpertParams[maxParams] / e) {
                maxParams = s;
            }
        }
        double dense = stageParams[maxParams];
        double expert = stageExpertParams[maxParams] / e;
        int dp = d * c;
        int edp = expertDataParallel(par);
        DoubleUnaryOperator data = stretch -> 0;
        if (withTime && train && comm != null) {
            // the window the collectives hide behind: the micro-batch's compute with what its exchanges add (each
            // timed against the compute alone, an overlapped all-to-all and the data-parallel collectives both hid
            // behind it, and a faster GPU exposing both was slower)
            data = dataParallel(w, device, topo, comm, dense, expert, stageLowParams[maxParams],
                    stageAdapters[maxParams], dp, edp,
                    Math.max(0, stageTime[max] + unpairedComm), Math.max(0, stageTime[max] + exposedComm), m,
                    layersOn[maxParams]);
        }
        double optimizer = 0;
        if (train) {
            int zero = zeroStage(w);
            double local = w.loraRank() > 0 ? stageAdapters[maxParams] / (zero >= 1 ? dp : 1)
                    : dense / (zero >= 1 ? dp : 1) + expert / (zero >= 1 ? edp : 1);
            // FSDP updates the sharded FP32 parameters themselves: no 16-bit copy is written
            optimizer = 1e3 * local * prec.optimizerTrafficBytes(w.gradientBytes(), zero < 3)
                    / device.bytesPerSecond();
        }
        // Transformer Engine's overlap of the sequence-parallel collectives with their contractions (userbuffers over
        // NVLink, on by default in NeMo and Megatron-Bridge on the FP8 generations)
        boolean overlapped = par.sequenceParallel() && t > 1 && device.matrixUnits(Precision.FP8)
                && topo.link() != Topology.Link.PCIE && topo.gpusPerNode() % t == 0;   // (every group inside one)
        double tensorOverlapped = overlapped ? tensor : 0;
        tensor = overlapped ? 0 : tensor;
        MegatronTerms terms = out.add(ExecutionTerm.OTHER, other).add(ExecutionTerm.TENSOR_COMM, tensor)
                .add(ExecutionTerm.LAYER_STEP, steps).add(device.superchip() ? ExecutionTerm.EXPERT_LAYER_STEP_C2C
                        : ExecutionTerm.EXPERT_LAYER_STEP, expertSteps)
                .add(ExecutionTerm.SEND, sends)
                .add(ExecutionTerm.PIPELINE_COMM, pipeline).dataComm(data)
                .add(ExecutionTerm.OPTIMIZER, optimizer).add(ExecutionTerm.EXPERT_COMM, expertComm)
                .add(ExecutionTerm.CONTEXT_COMM, cpExposed).add(ExecutionTerm.ATTENTION_OTHER, attentionOther)
                .add(ExecutionTerm.EXPERT_OTHER, expertOther)
                .add(ExecutionTerm.TENSOR_COMM_OVERLAPPED, tensorOverlapped).add(ExecutionTerm.TENSOR_SYNC, sync)
                .build();
        StageMemory memory = null;
        double host = 0;
        // training: the most a layer keeps for its backward pass; inference: the forward pass's activations
        double maxLayerBytes = w.phase() == Phase.INFER ? forwardActivations(units, imbalance, w, ts, b)
                : maxLayerSaved(units, imbalance);
        // FSDP's gather unit: the largest layer, embedding or output layer this GPU gathers
        double largestUnit = 0;
        for (Unit un : units) {
            largestUnit = Math.max(largestUnit, un.params() + un.expertParams() / e);
        }
        for (int s = 0; s < p; s++) {
            StageMemory sm = stageMemory(w, ts, maxLayerBytes, largestUnit, stageParams[s], stageExpertParams[s] / e,
                    stageLowParams[s], stageAdapters[s], stageSaved[s], recomputed[s], offloaded[s], layersOn[s], s, dp,
                    edp, b, t, c, run.quantisedWeightBytes(device), run.quantisedElementBytes());
            if (memory == null || sm.total() > memory.total()) {
                memory = sm;
            }
            host = Math.max(host, sm.host());
        }
        // how many times the busiest stage runs each unit a micro-batch (the breakdown shares the terms over these)
        int[] busiestUnits = new int[units.length];
        for (int u = 0; u < units.length; u++) {
            busiestUnits[u] = units(stages, max, u, p, mtp, mtpKind);
        }
        return new Assembly(terms, memory, steady, other > 0 ? adapters / other : 0,
                expertOther > 0 ? expertAdapters / expertOther : 0, other > 0 ? quantised / other : 0,
                expertOther > 0 ? expertQuantised / expertOther : 0, host, sendsHidden, busiestUnits);
    }

    /**
     * Whether Transformer Engine's fused grouped MLP folds this layer into its kernels in this job
     * ({@link Layer#FUSED_GROUPED_MLP}): it has them for compute capability 10 (Blackwell's data-centre parts, its
     * SXM boards and superchips; the PCIe cards are 12) with MX-FP8 or NVFP4 scaling; elsewhere, and on parts it does
     * not name (a Rubin), the layer runs as Megatron core runs it, an operation of its own. A job on those parts and
     * precisions that does not turn the op fuser on is predicted as if it did.
     */
    static boolean inFusedGroupedMlp(Layer l, Device device, Precision prec) {
        if (!l.fusedInGroupedMlp() || !device.architectureIs("Blackwell") || device.pcieCard()) {
            return false;
        }
        Precision runs = device.runs(prec).orElse(prec);
        return runs == Precision.MXFP8 || runs == Precision.NVFP4;
    }

    /**
     * The term a layer other than a contraction counts in: a routed expert's, an attention core's, or the rest (the
     * units' terms and the breakdown's pools both take it from here).
     */
    private static ExecutionTerm otherTerm(LayerRole.Kind kind) {
        return kind.expert() ? ExecutionTerm.EXPERT_OTHER
                : kind.attentionCore() ? ExecutionTerm.ATTENTION_OTHER : ExecutionTerm.OTHER;
    }

    /** A unit's compute for one micro-batch on one GPU, ms: its contractions and other layers. */
    private static double unitComputeMillis(Unit un, double imbalance) {
        double time = 0;
        for (Contraction x : un.dense()) {
            time += x.millis() * (x.expert() ? imbalance : 1);
        }
        return time + un.other() + un.attentionOther() + un.expertOther() * imbalance;
    }

    /** A unit's contractions, {@code k} times (an expert's also the busiest rank's imbalance). */
    private static void contractions(MegatronTerms.Builder out, Unit un, double k, double imbalance) {
        for (Contraction x : un.dense()) {
            double scale = k * (x.expert() ? imbalance : 1);
            out.contraction(x.cls(), x.millis() * scale, x.floor() * scale);
        }
    }

    /**
     * One token dispatch (or combine) of expert parallelism per GPU, ms, for {@code tokens} tokens: with the
     * all-to-all dispatcher {@code tokens · k · w} elements ({@code w} the {@link TransformerShape#dispatchWidth}: the
     * hidden size, or LatentMoE's latent), the {@code (e − 1)/e} share leaving the GPU, over the NVLink domain where
     * the expert group fits in it, else the share of peers beyond it over the network; in 16 bits with FP8 and FP4
     * recipes too (Megatron core quantises the experts' inputs after the dispatch).
     * The group is {@code e·et} adjacent ranks (Megatron-Core orders expert ranks expert-tensor first, then expert),
     * whatever the attention's tensor parallelism: with {@code et = 1} and {@code t = 2}, 64 experts' dispatch stays
     * inside one 72-GPU NVLink domain. The all-gather dispatcher moves {@code tokens · w · (e·et − 1)} elements in
     * 16 bits, every other rank's tokens of the group whole. DeepEP and HybridEP send a token once per rank holding
     * any of its experts ({@link #ranksTouched}), not once per expert; that they cross the network once per node
     * holding a token's experts is not described ({@link #dispatcherNote}).
     */
    static double allToAllMillis(Topology topo, int e, int et, double tokens, TransformerShape ts, Precision prec,
            MoeDispatcher dispatcher) {
        // the hidden states travel unquantised whatever the recipe: Megatron core's all-to-all sends them as they
        // are, its DeepEP dispatch is given them in 16 bits and HybridEP's FP8 dispatch is off
        double perToken = ts.dispatchWidth() * prec.activationBytes();
        long span = (long) et * e;
        // the all-gather dispatcher moves the other ranks' tokens whole (over the experts' tensor- and
        // expert-parallel group), whatever their experts, in 16 bits
        // DeepEP and HybridEP send a token once per rank holding any of its experts, the all-to-all once per expert
        double copies = dispatcher == MoeDispatcher.DEEPEP || dispatcher == MoeDispatcher.HYBRIDEP
                ? ranksTouched(ts.experts(), ts.topK(), e, ts.routingGroups(), ts.groupsPicked()) : ts.topK();
        double bytes = dispatcher == MoeDispatcher.ALLGATHER
                ? tokens * ts.dispatchWidth() * prec.activationBytes() * (span - 1.0)
                : tokens * copies * perToken * (e - 1.0) / e;
        double inside = Math.min(1.0, (double) topo.gpusPerNode() / span);
        double link = bytes * inside / topo.intraNodeBytesPerSecond();
        double network = bytes * (1 - inside) / topo.interNodeBytesPerSecondPerGpu();
        double latency = (inside < 1 ? topo.interNodeLatencyUs() : 2) * 1e-6 * Math.log(e) / Math.log(2);
        return 1e3 * (Math.max(link, network) + latency);
    }

    /**
     * The expected ranks a token's {@code k} experts lie on, with group-limited routing ({@code groups} equal groups
     * of the experts, {@code picked} of them chosen a token: DeepSeek's {@code n_group} and {@code topk_group}; 0 and
     * 0 without): where a rank's experts lie within one group, {@code k} chosen uniformly among the picked groups'
     * experts, on the ranks those hold ({@link #ranksTouched(int, int, int)} over them); where a rank holds whole
     * groups, the ranks holding a picked group, {@code e·(1 − C(groups − groups/e, picked) / C(groups, picked))};
     * else as without groups. DeepSeek-V3 over 8 ranks: 3.6 where uniform routing touches 5.3.
     */
    static double ranksTouched(int experts, int k, int e, int groups, int picked) {
        if (groups <= 1 || picked >= groups || e <= 1) {
            return ranksTouched(experts, k, e);
        }
        int perGroup = experts / groups;
        int local = Math.max(1, experts / e);
        if (local <= perGroup && perGroup % local == 0) {
            return ranksTouched(picked * perGroup, k, picked * perGroup / local);
        }
        if (local % perGroup == 0) {
            int held = local / perGroup;
            double missed = 1;
            for (int i = 0; i < picked; i++) {
                missed *= Math.max(0.0, (double) (groups - held - i) / (groups - i));
            }
            return Math.min(k, e * (1 - missed));
        }
        return ranksTouched(experts, k, e);
    }

    /**
     * The expected ranks a token's {@code k} experts (of {@code experts}, chosen uniformly without repeats) lie on,
     * over {@code e} ranks of {@code experts / e} each: {@code e·(1 − C(experts − experts/e, k) / C(experts, k))};
     * {@code k} where each rank holds one expert, 1 on one rank.
     */
    static double ranksTouched(int experts, int k, int e) {
        if (e <= 1) {
            return 1;
        }
        int local = Math.max(1, experts / e);
        double missed = 1;
        for (int i = 0; i < k; i++) {
            missed *= Math.max(0.0, (double) (experts - local - i) / (experts - i));
        }
        return e * (1 - missed);
    }

    /**
     * Said where a job's experts' ranks span NVLink domains with DeepEP or HybridEP: the prediction moves the
     * all-to-all's bytes, a token's copy per expert beyond the domain, where those dispatchers send it over the network
     * once per domain holding its experts. Described that way (the expected domains a token's {@code k} experts
     * touch), the published runs with HybridEP across nodes came out too fast and every held-out split worse
     * ({@code docs/results.md}), so the saving is not described.
     */
    static Optional<String> dispatcherNote(Workload w, Topology topo) {
        Parallelism par = w.parallelism();
        long span = (long) par.expert() * par.expertTensor();
        if (w.moeDispatcher() != MoeDispatcher.DEEPEP && w.moeDispatcher() != MoeDispatcher.HYBRIDEP
                || span <= Math.max(topo.gpusPerNode(), topo.nvlinkDomain())) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT, "the %s dispatcher across %d experts' ranks beyond an NVLink "
                + "domain of %d is predicted sending a token's copy per rank holding its experts over the network: "
                + "that it crosses the network once per node holding them is not described", w.moeDispatcher()
                .label(), span, Math.max(topo.gpusPerNode(), topo.nvlinkDomain())));
    }

    /**
     * The part of one micro-batch's activation offloading that the stage's compute does not hide, ms: the offloaded
     * layers' saved activations copied to the host after their forward pass (behind the forward compute of the
     * offloaded share of the layers, a third of the stage's time) and back before their backward pass (behind two
     * thirds), each way at {@link #hostBytesPerSecond}; and what the copies take of the GPU's memory bandwidth, which
     * the compute they hide behind shares (the activations read out of memory, and written back: offloading on a
     * superchip, whose link to its host hides any volume behind the compute, was predicted free).
     */
    static double offloadExposed(Device device, double share, double savedBytes, double stageMillis) {
        if (share == 0) {
            return 0;
        }
        double copy = 1e3 * share * savedBytes / hostBytesPerSecond(device);
        double memory = 1e3 * 2 * share * savedBytes / device.bytesPerSecond();
        return Math.max(0, copy - share * stageMillis / 3) + Math.max(0, copy - share * stageMillis * 2 / 3) + memory;
    }

    /**
     * Context parallelism's ring exchange for one attention layer ({@code keyValues}: the elements of a token's keys and
     * values and their heads, {@link #keyValues}): {@code c − 1} steps of the local keys and values forward, twice that
     * backward (their gradients too), ms, and whether the group stays inside a node or NVLink domain ({@code {forward,
     * backward, 1 inside or 0}}).
     */
    private static double[] contextExchange(Topology topo, int b, TransformerShape ts, long[] keyValues, int t,
            int c, long ranks, double actBytes, boolean train) {
        double bytes = (double) b * ts.seq() / c * keyValues[0] / Math.min(t, keyValues[1]) * actBytes;
        // a context group's t·c adjacent ranks inside one node or domain unless one of the job's straddles its edge
        // (a group larger than the node has fewer than its ranks on a side)
        boolean inside = ranksPerNode(t * c, topo.gpusPerNode(), ranks) == t * c;
        double step = 1e3 * (inside ? bytes / topo.intraNodeBytesPerSecond() + 2e-6
                : bytes / topo.interNodeBytesPerSecondPerGpu() + topo.interNodeLatencyUs() * 1e-6);
        return new double[] {(c - 1) * step, train ? 2 * (c - 1) * step : 0, inside ? 1 : 0};
    }

    /** The exposed part of a ring exchange ({@link #contextExchange}): each pass's behind the attention core's own. */
    private static double contextExposed(Unit un, double[] exchange) {
        double fwd = exchange[0];
        double bwd = exchange[1];
        return Math.max(0, fwd - un.coreForward()) + Math.max(0, bwd - un.coreBackward()) + 0.1 * (fwd + bwd);
    }

    /**
     * The data-parallel reduction of a stage's gradients left exposed, ms: the non-expert ones over {@code dp} ranks,
     * the experts' over {@code edp}, overlapped with the last micro-batch's backward pass (and, ZeRO 1–2, the
     * weights' gather with the first one's forward pass) as Megatron's {@code overlap_grad_reduce} and
     * {@code overlap_param_gather} do; ZeRO 3 gathers the weights twice and reduce-scatters the gradients every
     * micro-batch, what the micro-batch's own compute does not hide; ZeRO 2 reduce-scatters every micro-batch's
     * gradients (sharded, they are not accumulated whole). With the weights' gather after the optimizer step
     * ({@link org.scaledl.workload.GradReduce#GATHER_AFTER_STEP}) the gather is exposed whole. With the reduction
     * after the backward pass
     * ({@link Workload#gradReduce()}) nothing of it hides: ZeRO 0–2's whole reduction (and the weights'
     * gather) is exposed, and ZeRO 2's and 3's reduce-scatter every micro-batch. With LoRA only the adapters'
     * gradients are reduced (the frozen weights are still gathered under ZeRO 3). The gradients travel in their
     * buffers' type ({@link Workload#gradientBytes()}: FP32 main gradients 4 bytes each, 16-bit ones 2), the weights
     * the distributed optimizer gathers in theirs ({@link Precision#weightBytes()}: FP32 buffers reduce-scatter 4
     * bytes a parameter and gather 2, three quarters of an FP32 all-reduce's traffic).
     *
     * The overlap is timed against the micro-batch's passes as a model times them: the exposure is returned as a
     * function of their stretch over the micro-batch's uncalibrated GPU time ({@link MegatronTerms#dataComm}), which
     * the model's coefficients set (its compute part, calibrated and paced by the host where the host bounds it, over
     * the GPUs' uncalibrated time).
     *
     * @param adapters      the stage's LoRA adapter parameters per GPU (0 without LoRA)
     * @param perMicroBatch the most loaded stage's uncalibrated GPU time for the first or last micro-batch, whose
     *                      passes pair with none, with what its all-to-all and context-parallel exchanges add to the
     *                      window (their exposed time inside an NVLink domain, less what the compute hides of them
     *                      over the network), ms: the passes ZeRO 0-2's collectives hide behind
     * @param perSteadyMicroBatch the same for a micro-batch of the steady state, its all-to-all overlapped with
     *                      another's compute where the job overlaps it: the passes ZeRO 3's gathers hide behind
     * @return the exposed time, ms, by the stretch of the micro-batch's time (1: its uncalibrated GPU time)
     */
    private static DoubleUnaryOperator dataParallel(Workload w, Device device, Topology topo, CommunicationModel comm,
            double dense, double expert, double low, double adapters, int dp, int edp, double perMicroBatch,
            double perSteadyMicroBatch, int m, int layers) {
        boolean lora = w.loraRank() > 0;
        double denseGrads = lora ? adapters : dense;
        double expertGrads = lora ? 0 : expert;
        Parallelism par = w.parallelism();
        int zero = zeroStage(w);
        Precision prec = w.precision();
        // the reduction moves the gradient buffers in their own type (Megatron core reduces its buffer in place,
        // grad_reduce_in_fp32 or not; DeepSpeed and Apex in the type they accumulate in)
        double reduceBytes = w.gradientBytes();
        int perNode = Math.max(1, Math.min(dp, topo.gpusPerNode() / par.tensor()));
        Topology shared = ParallelExecution.sharedNetwork(topo, perNode);
        // the experts' data-parallel peers: expert (and expert-tensor) ranks are adjacent, so a node holds the stage's
        // ranks divided by e·et of one expert group's peers (one, where the expert group fills the node: then every
        // peer is on another node and the node's network is shared by all its GPUs' groups)
        int stageRanksPerNode = (int) Math.max(1, Math.min(topo.gpusPerNode(), (long) par.tensor() * dp));
        int ePerNode = Math.max(1, Math.min(edp, stageRanksPerNode / (par.expert() * par.expertTensor())));
        Topology expertShared = ParallelExecution.sharedNetwork(topo, ePerNode);
        if (zero < 3) {
            double reduce = 0;
            // the bytes of the updated weights the distributed optimizer gathers: their own type's, and an FP8
            // recipe's low-precision linear weights in FP8 where they are the parameters (--fp8-param-gather: its
            // parameter buffer holds them; MX-FP8's are gathered in 16 bits into the gradient buffer and quantised
            // after, reuse_grad_buf_for_mxfp8_param_ag); the experts' weights are all low-precision linear ones
            double lowExpert = Math.min(low, expert);
            double lowDense = Math.max(0, low - lowExpert);
            Precision runs = device.runs(prec).orElse(prec);
            double gathered = w.fp8ParamGather() && (runs == Precision.FP8 || runs == Precision.FP8_BLOCK) ? 1
                    : prec.weightBytes();
            // (written so that without the setting the bytes are the weights' type's exactly, as before it)
            double denseWeightBytes = lora ? denseGrads * prec.weightBytes()
                    : dense * prec.weightBytes() - lowDense * (prec.weightBytes() - gathered);
            double expertWeightBytes = expert * prec.weightBytes() - lowExpert * (prec.weightBytes() - gathered);
            // an all-reduce of the updated weights (in their own type) over the same groups: twice their gather
            double reduceWeights = 0;
            boolean ownType = zero > 0 && (prec.weightBytes() != reduceBytes || gathered != prec.weightBytes());
            if (dp > 1 && denseGrads > 0) {
                reduce += comm.allReduceMillis(device, shared, dp, perNode, denseGrads * reduceBytes);
                reduceWeights += ownType ? comm.allReduceMillis(device, shared, dp, perNode, denseWeightBytes) : 0;
            }
            if (edp > 1 && expertGrads > 0) {
                reduce += comm.allReduceMillis(device, expertShared, edp, ePerNode,
                        expertGrads * reduceBytes);
                reduceWeights += ownType ? comm.allReduceMillis(device, expertShared, edp, ePerNode,
                        expertWeightBytes) : 0;
            }
            // ZeRO 1-2 (the distributed optimizer) reduce-scatter the gradients in their buffers' type (half an
            // all-reduce's traffic) and all-gather the updated weights in theirs (FP32 buffers: 4 bytes a parameter
            // scattered, the 16-bit weights' 2 gathered); ZeRO 2 shards the gradients: they cannot be accumulated
            // whole, so every micro-batch reduce-scatters its own, the last one's with the weights' gather after the
            // step
            double scatter = reduce / 2;
            double gatherWeights = (ownType ? reduceWeights : reduce) / 2;
            int scatters = zero == 2 ? Math.max(1, m) : 1;
            double whole = zero == 0 ? reduce : scatters * scatter + gatherWeights;
            if (w.gradReduce() == org.scaledl.workload.GradReduce.AFTER_BACKWARD) {
                // Megatron-LM's local DDP, Megatron-DeepSpeed, DeepSpeed's ZeRO 1-2: the reduction (with the
                // distributed optimizer a reduce-scatter and the updated weights' gather) waits for the backward pass
                // (ZeRO 2: each micro-batch's) to end
                return stretch -> whole;
            }
            // Megatron overlaps the gradients' reduction with the last micro-batch's backward pass (about two thirds
            // of its time) and, with the distributed optimizer, the updated weights' gather with the first one's
            // forward pass; what does not fit behind them, and the last bucket, stays exposed (ZeRO 2: each earlier
            // micro-batch's reduce-scatter behind its own backward pass)
            double tail = Math.min(reduce, dp > 1 ? comm.allReduceMillis(device, shared, dp, perNode,
                    Math.min(denseGrads * reduceBytes, org.scaledl.model.comm.Collectives.BUCKET_BYTES))
                    : 0);
            double all = reduce;
            // (the interleaved schedule reduces each model chunk's gradients once its last backward pass ends, Megatron
            // core's per-chunk grad_sync_func: within the same last micro-batch's backward passes that a bucketed
            // reduction hides behind, so no more of it hides; dividing the exposure by the chunks let a slow network's
            // reduction finish in less time than it takes)
            if (zero == 0) {
                return stretch -> Math.max(tail, all - 2.0 / 3 * perMicroBatch * stretch);
            }
            // a reduce-scatter's part a micro-batch's backward pass does not hide, and the weights' gather's part the
            // first micro-batch's forward pass does not (never more than the whole reduction after the backward pass);
            // without overlap_param_gather the distributed optimizer gathers the weights after its step, synchronously:
            // all of it exposed
            boolean gatherAfterStep = w.gradReduce() == org.scaledl.workload.GradReduce.GATHER_AFTER_STEP;
            return stretch -> {
                double behind = Math.max(0, scatter - 2.0 / 3 * perMicroBatch * stretch);
                return Math.min(whole, Math.max(tail, behind) + (scatters - 1) * behind
                        + (gatherAfterStep ? gatherWeights : Math.max(0, gatherWeights - perMicroBatch * stretch / 3)));
            };
        }
        // FSDP: per micro-batch and layer, gather the layer's weights forward and backward and reduce-scatter its
        // gradients: as many collectives as layers, each paying its latency (n collectives of b/n bytes)
        int n = Math.max(1, layers);
        double gather = 0;
        double scatter = 0;
        if (dp > 1 && dense > 0) {
            gather += n * comm.reduceScatterMillis(device, shared, dp, perNode, dense * prec.weightBytes() / n);
            if (denseGrads > 0) {
                scatter += n * comm.reduceScatterMillis(device, shared, dp, perNode,
                        denseGrads * reduceBytes / n);
            }
        }
        if (edp > 1 && expert > 0) {
            gather += n * comm.reduceScatterMillis(device, expertShared, edp, ePerNode, expert * prec.weightBytes() / n);
            if (expertGrads > 0) {
                scatter += n * comm.reduceScatterMillis(device, expertShared, edp, ePerNode,
                        expertGrads * reduceBytes / n);
            }
        }
        double perMb = 2 * gather + scatter;
        double gatherTime = gather;
        double scatterTime = scatter;
        DoubleUnaryOperator overlapped = stretch -> m * Math.max(0, perMb - perSteadyMicroBatch * stretch)
                + scatterTime / Math.max(1, m);
        if (w.gradReduce() == org.scaledl.workload.GradReduce.AFTER_BACKWARD) {
            // the gathers still prefetched behind the compute, each reduce-scatter waited for where it is issued
            // (never less exposed than overlapped, whose last reduce-scatter is exposed too)
            return stretch -> Math.max(overlapped.applyAsDouble(stretch),
                    m * (Math.max(0, 2 * gatherTime - perSteadyMicroBatch * stretch) + scatterTime));
        }
        return overlapped;
    }

    /**
     * A stage's memory per GPU: states (ZeRO-sharded), quantised weights, in-flight activations, logits. With LoRA the
     * frozen weights are held without gradients or optimizer states, and the adapters with theirs.
     * {@code maxLayerSaved} is, in training, the most a layer keeps for its backward pass, in inference the forward
     * pass's activations ({@link #forwardActivations}). {@code quantisedBytes} is what the quantised weights take a
     * parameter in training (their copies for the backward pass too), {@code quantisedElement} one copy's.
     */
    private static StageMemory stageMemory(Workload w, TransformerShape ts, double maxLayerSaved, double largestUnit,
            double dense, double expert, double low, double adapters, double saved, double recomputed, double offloaded,
            int layers, int s, int dp, int edp, int b, int t, int c, double quantisedBytes,
            double quantisedElement) {
        Parallelism par = w.parallelism();
        Precision prec = w.precision();
        int p = par.pipeline();
        int zero = zeroStage(w);
        double states;
        double grad = w.gradientBytes();
        if (w.phase() == Phase.INFER) {
            // a low-precision recipe's linear layers hold their weights quantised alone in inference (Transformer
            // Engine's fp8_model_init, a serving engine's checkpoint): no 16-bit copy beside them, no transpose for a
            // backward pass; the other layers' in 16 bits (FP8 inference predicted twice BF16's memory)
            states = (dense + expert - low) * prec.weightBytes() + low * quantisedElement;
        } else if (w.loraRank() > 0) {
            // the frozen weights sharded with ZeRO 3; the adapters, the trained parameters, as ZeRO shards any
            // (their optimizer states from stage 1, gradients from 2, weights from 3): they were kept whole on
            // every rank, and a large rank's adapters came out above full training's states
            states = (dense / (zero >= 3 ? dp : 1) + expert / (zero >= 3 ? edp : 1)) * prec.weightBytes()
                    + adapters * (prec.weightBytes() / (zero >= 3 ? dp : 1) + grad / (zero >= 2 ? dp : 1)
                    + prec.stateBytes() / (zero >= 1 ? dp : 1))
                    // ZeRO 3 gathers the frozen weights a unit at a time (the one computing and the one prefetched)
                    + (zero >= 3 ? 2 * largestUnit * prec.weightBytes() : 0);
        } else if (zero >= 3 && prec.masterBytes() > 0) {
            // FSDP: the sharded FP32 parameters are the master weights; the 16-bit weights exist only for the units
            // being gathered (the one computing and the one prefetched; at most the largest, twice)
            double sharded = dense / dp + expert / edp;
            states = sharded * (prec.masterBytes() + grad + prec.optimizerStateBytes())
                    + 2 * largestUnit * prec.weightBytes();
        } else {
            states = dense * (prec.weightBytes() / (zero >= 3 ? dp : 1) + grad / (zero >= 2 ? dp : 1)
                    + prec.stateBytes() / (zero >= 1 ? dp : 1))
                    + expert * (prec.weightBytes() / (zero >= 3 ? edp : 1) + grad
                    / (zero >= 2 ? edp : 1) + prec.stateBytes() / (zero >= 1 ? edp : 1));
            if (w.fp8ParamGather()) {
                // the low-precision linear layers' weights are their quantised copies alone (Megatron core's
                // --fp8-param-gather): no 16-bit copy beside them (ZeRO 1-2 only: the workload refuses the others)
                states -= low * prec.weightBytes();
            }
        }
        // the quantised copies: sharded with the weights under ZeRO 3 (gathered a layer at a time)
        double quantised = w.phase() == Phase.INFER ? 0
                : low * quantisedBytes / (zero >= 3 ? dp : 1);
        double activations;
        double inFlight = 1;
        double host = 0;
        Recompute rc = w.phase() == Phase.TRAIN ? w.recompute() : Recompute.NONE;
        if (w.phase() == Phase.INFER) {
            // (forwardActivations: it counted four hidden-wide tensors, where a wide MLP's gated product is several
            // times that)
            activations = maxLayerSaved;
        } else {
            double perMicroBatch = saved;
            // what the micro-batch in its backward pass holds at its peak (the others in flight hold perMicroBatch)
            double peak = saved;
            double offloadedBytes = 0;
            if (rc == Recompute.FULL) {
                // a recomputed layer's input per micro-batch in flight (the others keep what they keep), and one
                // layer's working set while it is recomputed: in the backward pass, when the layers after the
                // recomputed ones (Megatron's block method recomputes a chunk's first) have freed theirs, so a few
                // layers recomputed never hold more than none
                double input = (double) b * ts.seq() / c * ts.hidden() * prec.activationBytes()
                        / (par.sequenceParallel() ? t : 1);
                perMicroBatch = recomputed * input * layers + (1 - recomputed) * saved;
                // (the layer being recomputed keeps its input as part of its working set: counted once)
                peak = Math.max(perMicroBatch, Math.max(input, recomputed * input * layers) - input + maxLayerSaved);
            } else if (offloaded > 0) {
                // the offloaded layers' activations wait in the host's memory; the GPU stages one layer's going out
                // and one's coming back, never more than it offloads (one layer offloaded held no more than none)
                perMicroBatch = (1 - offloaded) * saved;
                offloadedBytes = offloaded * saved;
                peak = perMicroBatch + Math.min(2 * maxLayerSaved, offloadedBytes);
            }
            int v = par.virtualStages();
            // the 1F1B schedule: stage s holds p − s micro-batches; interleaving adds (p − 1)/(p·v) of the first's
            inFlight = Math.max(1, Math.min(par.microBatches(), p - s)
                    * (1 + (v > 1 && s == 0 ? (p - 1.0) / (p * v) : 0)));
            activations = perMicroBatch * (inFlight - 1) + peak;
            host = offloadedBytes * inFlight;
        }
        // the main loss's FP32 logits, and each multi-token-prediction module's own
        double logits = s == p - 1 && w.phase() == Phase.TRAIN
                ? (1 + ts.mtpLayers()) * 4.0 * b * ts.seq() / c * ts.vocab() / t : 0;
        return new StageMemory(s, states, quantised, activations, inFlight, logits, host);
    }

    /** The layers of the most loaded stage's model chunk (its layers over the chunks a stage, rounded up). */
    private static int layersOfAChunk(Workload w) {
        int v = w.parallelism().virtualStages();
        return (mostLayersOnAStage(w) + v - 1) / v;
    }

    private static int mostLayersOnAStage(Workload w) {
        int most = 0;
        for (int[] stage : stageKinds(w.graph(), w.parallelism().pipeline(), w.parallelism().virtualStages(),
                w.graph().transformer().orElseThrow().mtpLayers())) {
            int n = 0;
            for (int k : stage) {
                n += k;
            }
            most = Math.max(most, n);
        }
        return most;
    }

    /**
     * A forward pass's activations per GPU, bytes: the residual stream (whole on every tensor-parallel rank, sequence
     * parallelism aside) beside the widest layer's input and output ({@link Unit#working()}, a routed experts' layer's
     * on the busiest expert rank, {@code imbalance} times its share), or a residual add's, whose inputs hold the stream:
     * a forward pass frees each layer's activations once the next has read them.
     */
    private static double forwardActivations(Unit[] units, double imbalance, Workload w, TransformerShape ts, int b) {
        Parallelism par = w.parallelism();
        double stream = (double) b * ts.seq() / par.context() * ts.hidden() * w.precision().activationBytes()
                / (par.sequenceParallel() ? par.tensor() : 1);
        double widest = 0;
        double residual = 0;
        for (Unit u : units) {
            widest = Math.max(widest, Math.max(u.working(), imbalance * u.expertWorking()));
            residual = Math.max(residual, u.residualWorking());
        }
        return Math.max(stream + widest, residual);
    }

    /** The most a layer keeps for its backward pass on the busiest expert rank ({@link Unit#saved(double)}). */
    private static double maxLayerSaved(Unit[] units, double imbalance) {
        double m = 0;
        for (int u = 2; u < units.length; u++) {
            m = Math.max(m, units[u].saved(imbalance));
        }
        return m;
    }

    // ----------------------------------------------------------------------------------------------- breakdown

    /**
     * How much a step must change under the other choice of a schedule the prediction assumed (its gradients reduced
     * after the backward pass where it assumed them overlapped, the experts' all-to-all overlapped where it assumed
     * it on the critical path, the whole iteration in CUDA graphs where it assumed none or per-layer ones) for the
     * prediction to say so: 2 %.
     */
    static final double SCHEDULE_NOTE_SHARE = 0.02;

    /**
     * The iteration's calibrated cost with its breakdown: the compute part shared over the layers in proportion to
     * their work (a contraction's: its FLOPs at the sustained peak of the units it runs on), each term with its
     * calibrated time, the host's dispatch what the smooth max adds.
     */
    static StageCost cost(Workload given, DeviceLayerCost layers, Optional<CommunicationModel> communication,
            Device device, Topology topo, MegatronModel model, List<StageCost.Note> notes) {
        // the recomputation decided once: the terms and the memory below take the resolved job as it is
        Workload w = resolve(given, layers, device);
        Assembly assembly = assemble(w, layers, communication, device, topo.scaleUp(), true);
        MegatronTerms terms = assembly.terms();
        double total = model.millis(terms);
        ModelGraph g = w.graph();
        double gpu = model.gpu(terms);
        double[] perLayer = new double[g.size()];
        OpFamily[] families = new OpFamily[g.size()];
        int micro = microBatch(w);
        List<LayerFeatures> fs = FeatureExtractor.of(g).extract(micro, w.phase());
        // the contractions by class, each class given its own calibrated time (a class without layers, its time to
        // the other contractions: none in practice)
        ExecutionTerm[] classes = java.util.Arrays.stream(ExecutionTerm.values()).filter(ExecutionTerm::dense)
                .toArray(ExecutionTerm[]::new);
        double[] denseCal = new double[classes.length];
        for (int k = 0; k < classes.length; k++) {
            denseCal[k] = model.dense(terms, classes[k]);
        }
        // the other layers in three pools, each given its own term's calibrated time: the rest, the attention core's,
        // the routed experts' (a pool without layers leaves its time to the rest)
        ExecutionTerm[] pools = {ExecutionTerm.OTHER, ExecutionTerm.ATTENTION_OTHER, ExecutionTerm.EXPERT_OTHER};
        double[] otherCal = new double[pools.length];
        for (int k = 0; k < pools.length; k++) {
            otherCal[k] = calibrated(model, terms, pools[k]);
        }
        // LoRA adapters' products, counted in the rest's and the experts' pools: said apart, not spread over the layers
        double lora = otherCal[0] * assembly.adapterShare() + otherCal[2] * assembly.expertAdapterShare();
        // the low-precision recipes' quantisation of their linear layers' operands: no layer of the graph, said apart
        // rather than spread over the norms and adds
        double quantisation = otherCal[0] * assembly.quantisationShare()
                + otherCal[2] * assembly.expertQuantisationShare();
        otherCal[0] *= 1 - assembly.adapterShare() - assembly.quantisationShare();
        otherCal[2] *= 1 - assembly.expertAdapterShare() - assembly.expertQuantisationShare();
        int[] pool = new int[g.size()];
        double[] denseRaw = new double[classes.length];
        double[] otherRaw = new double[pools.length];
        boolean train = w.phase() == Phase.TRAIN;
        boolean[] fusedCore = fusedCores(g);
        boolean generates = generates(g);
        // the layers as the busiest stage runs them a micro-batch (its block kinds' layers, the head where it is the
        // last, each multi-token-prediction module's pass): the calibrated terms are that stage's, not the model's
        int[] busiest = assembly.busiestUnits();
        for (LayerFeatures read : fs) {
            int rows = prefillRows(g, g.role(read.layer()), w.phase(), generates);
            if (read.family() == OpFamily.SHAPE || !read.executes() || rows == 0
                    || inFusedGroupedMlp(g.layer(read.layer()), device, w.precision())) {
                continue;
            }
            // (a prefill's head: its last tokens' logits, as the units time it)
            LayerFeatures lf = ParallelExecution.share(read, rows, 1, 1);
            double bwdFlops = lf.flopsBwd() * frozenBackwardShare(w.loraRank(), withWeights(g, lf));
            // a contraction's share: its FLOPs at the sustained peak of the units it runs on (FP8, 16-bit, FP32)
            Precision runs = dense(lf.family()) ? productPrecision(w, device, lf) : null;
            // a softmax that falls back to PyTorch's kernels moves their bytes (as the units time it)
            SoftmaxFallback fb = SoftmaxFallback.of(g, lf, fusedCore[unit(g.role(lf.layer()))], micro,
                    w.parallelism().tensor(), w.parallelism().context(), w.precision().activationBytes())
                    .orElse(new SoftmaxFallback(1, 1, 0));
            int count = busiest[unit(g.role(lf.layer()))];
            double work = (runs != null ? (lf.flopsFwd() + bwdFlops) / (sustainedFraction(layers, device, runs)
                    * device.peakFlopsPerSecond(runs, true)) : lf.bytesFwd() * fb.forward()
                    + lf.bytesBwd() * fb.backward()) * count;
            if (runs != null) {
                // a product of few rows (a prefill's head over one token a sequence, a short prompt's) reads its
                // weights more than it multiplies: its share as the units floor it, by its bytes where they bind
                work = Math.max(work, 1e-3 * (bytesFloorMillis(lf, device, runs, false) + (train
                        ? frozenBackwardShare(w.loraRank(), withWeights(g, lf)) * bytesFloorMillis(lf, device, runs,
                        true) : 0)) * count);
            }
            perLayer[lf.layer()] = work;
            families[lf.layer()] = lf.family();
            if (dense(lf.family())) {
                pool[lf.layer()] = java.util.Arrays.asList(classes).indexOf(contractionClass(g, lf.layer(),
                        w.precision(), device));
                denseRaw[pool[lf.layer()]] += work;
            } else {
                pool[lf.layer()] = java.util.Arrays.asList(pools).indexOf(otherTerm(g.role(lf.layer()).kind()));
                otherRaw[pool[lf.layer()]] += work;
            }
        }
        for (int k = 1; k < pools.length; k++) {
            if (otherRaw[k] == 0) {
                otherCal[0] += otherCal[k];
                otherCal[k] = 0;
            }
        }
        double denseAll = 0;
        double unplaced = 0;
        for (int k = 0; k < classes.length; k++) {
            denseAll += denseRaw[k];
            unplaced += denseRaw[k] > 0 ? 0 : denseCal[k];
        }
        // the pipeline's fill and drain: the share of the GPUs' per-layer time the other stages add to the busiest
        // one's micro-batches ((p - 1) / v of m + (p - 1) / v micro-batch slots where the stages are even), said apart
        double busy = assembly.steady();
        double bubble = 0;
        for (int i = 0; i < perLayer.length; i++) {
            if (families[i] != null) {
                int k = pool[i];
                double rate = dense(families[i])
                        ? (denseRaw[k] > 0 ? denseCal[k] / denseRaw[k] : 0) + (denseAll > 0 ? unplaced / denseAll : 0)
                        : (otherRaw[k] > 0 ? otherCal[k] / otherRaw[k] : 0);
                double ms = perLayer[i] * rate;
                perLayer[i] = busy * ms;
                bubble += ms - perLayer[i];
            }
        }
        List<StageCost.Term> out = new ArrayList<>();
        // the collectives of the layers (and of the fill: in the bubble), and their wait for the group's slowest rank
        double[] inLayers = {calibrated(model, terms, ExecutionTerm.TENSOR_COMM) + calibrated(model, terms,
                ExecutionTerm.TENSOR_COMM_OVERLAPPED) + calibrated(model, terms, ExecutionTerm.TENSOR_SYNC),
            calibrated(model, terms, ExecutionTerm.EXPERT_COMM), calibrated(model, terms, ExecutionTerm.CONTEXT_COMM)};
        for (double x : inLayers) {
            bubble += x - busy * x;
        }
        bubble += lora - busy * lora;
        bubble += quantisation - busy * quantisation;
        add(out, "lora-adapters", StageCost.TermKind.COMPUTE, busy * lora);
        add(out, "quantisation", StageCost.TermKind.COMPUTE, busy * quantisation);
        add(out, "tensor-parallel", StageCost.TermKind.COMMUNICATION, busy * inLayers[0]);
        add(out, "expert-parallel", StageCost.TermKind.COMMUNICATION, busy * inLayers[1]);
        add(out, "context-parallel", StageCost.TermKind.COMMUNICATION, busy * inLayers[2]);
        add(out, StageCost.PIPELINE_BUBBLE, StageCost.TermKind.OVERHEAD, bubble);
        add(out, "pipeline", StageCost.TermKind.COMMUNICATION, calibrated(model, terms, ExecutionTerm.SEND)
                + calibrated(model, terms, ExecutionTerm.PIPELINE_COMM));
        add(out, "data-parallel", StageCost.TermKind.COMMUNICATION, model.dataComm(terms));
        add(out, "optimizer", StageCost.TermKind.OVERHEAD, calibrated(model, terms, ExecutionTerm.OPTIMIZER));
        add(out, "fixed", StageCost.TermKind.OVERHEAD, calibrated(model, terms, ExecutionTerm.FIXED));
        double parts = 0;
        for (double x : perLayer) {
            parts += x;
        }
        for (StageCost.Term x : out) {
            parts += x.millis();
        }
        // what the smooth max adds beyond the GPU's parts: the GPUs waiting for the host's dispatch
        double host = total - parts;
        if (host > 1e-9 * total) {
            out.add(new StageCost.Term(StageCost.HOST_DISPATCH, StageCost.TermKind.OVERHEAD, host));
        }
        StageMemory memory = memory(w, layers, device);
        List<StageCost.Note> all = new ArrayList<>(notes);
        if (device.runs(w.precision()).orElse(w.precision()) == Precision.NVFP4 && device.architectureIs("CDNA")) {
            // NVFP4 is NVIDIA's format: AMD's FP4 units run OCP MX-FP4, whose scales take half NVFP4's bytes
            all.add(StageCost.Note.noted("NVFP4 (16-element blocks, E4M3 scales) is NVIDIA's format: "
                    + device.name() + "'s FP4 units run OCP MX-FP4 (32-element blocks, E8M0 scales), predicted here "
                    + "as NVFP4 at the same FP4 peak, with NVFP4's scales in memory"));
        }
        // the step under another choice of the schedule the recipes state, for the notes that say where it moves
        java.util.function.Function<Workload.Builder, Double> stepWith = x -> model.millis(terms(x.build(), layers,
                communication, device, topo));
        double dispatch = model.host(terms);
        if (w.phase() == Phase.TRAIN && w.gradReduce() != org.scaledl.workload.GradReduce.AFTER_BACKWARD
                && !w.states(Workload.ScheduleChoice.GRAD_REDUCE)
                && terms.value(ExecutionTerm.DATA_COMM) > 0) {
            // said where the software's choice moves the step: the stacks of 2021-22 reduce after the backward pass
            double after = stepWith.apply(w.toBuilder().gradReduce(org.scaledl.workload.GradReduce.AFTER_BACKWARD));
            if (after > (1 + SCHEDULE_NOTE_SHARE) * total) {
                all.add(StageCost.Note.assumed(String.format(Locale.ROOT, "the gradients' reduction is assumed "
                        + "overlapped with the backward pass (Megatron core's overlap_grad_reduce); reduced after it, "
                        + "as Megatron-DeepSpeed, Megatron-LM's local DDP and an all-reduce after gradient accumulation "
                        + "run it, the step takes %.2f ms (+%.1f %%: give --grad-reduce after-backward)", after,
                        100 * (after / total - 1))));
            }
        }
        if (assembly.sendsHidden() > 0) {
            // the interleaved schedule's sends behind the next chunk's pass: Megatron core's default there, not every
            // stack's (NeMo 1's default configuration and older Megatron-LM leave overlap_p2p_comm off); the
            // pipeline's term is additive, so exposed they add its coefficient times what the overlap hid
            double exposed = total + model.coefficient(ExecutionTerm.PIPELINE_COMM) * assembly.sendsHidden();
            if (exposed > (1 + SCHEDULE_NOTE_SHARE) * total) {
                all.add(StageCost.Note.assumed(String.format(Locale.ROOT, "the interleaved schedule's pipeline sends "
                        + "are assumed overlapped with the next model chunk's pass (Megatron core's overlap_p2p_comm, "
                        + "its default with virtual stages); exposed, as NeMo 1's default configuration and older "
                        + "Megatron-LM (its flag off by default) run them, the step takes %.2f ms (+%.1f %%: if the "
                        + "sends are exposed)", exposed,
                        100 * (exposed / total - 1))));
            }
        }
        if (!w.expertCommOverlap() && !w.states(Workload.ScheduleChoice.EXPERT_COMM_OVERLAP)
                && terms.value(ExecutionTerm.EXPERT_COMM) > 0 && Workload.expertCommOverlapRuns(w.phase(),
                w.parallelism(), w.precision(), w.recompute(), w.recomputeModules(), w.moeDispatcher())) {
            // the other schedule choice the recipes state: the experts' all-to-all behind another micro-batch, where
            // Megatron core allows it
            double overlapped = stepWith.apply(w.toBuilder().expertCommOverlap(true));
            if (overlapped < (1 - SCHEDULE_NOTE_SHARE) * total) {
                all.add(StageCost.Note.assumed(String.format(Locale.ROOT, "the experts' all-to-all is assumed on the "
                        + "critical path; run behind another micro-batch's compute, as Megatron core's "
                        + "overlap_moe_expert_parallel_comm (Megatron-Bridge's moe_a2a_overlap) runs it, the step takes "
                        + "%.2f ms (%.1f %%: give --moe-a2a-overlap)", overlapped, 100 * (overlapped / total - 1))));
            }
        }
        if (w.cudaGraphs() != CudaGraphs.ITERATION
                && (!w.states(Workload.ScheduleChoice.CUDA_GRAPHS) || w.cudaGraphs() == CudaGraphs.LAYERS)
                && dispatch > 0) {
            // (a job that states none is not told; graphs of layers are predicted as none, which is said)
            // the third schedule choice the recipes state: the host's per-layer dispatch gone under graphs of the
            // whole iteration (Megatron core's training loop; an inference engine's captured forward pass)
            double graphed = stepWith.apply(w.toBuilder().cudaGraphs(CudaGraphs.ITERATION));
            if (graphed < (1 - SCHEDULE_NOTE_SHARE) * total && w.phase() == Phase.INFER) {
                all.add(w.cudaGraphs() == CudaGraphs.LAYERS
                        // stated: how the model reads it, and what graphs of the whole pass save
                        ? StageCost.Note.noted(String.format(Locale.ROOT, "CUDA graphs of layers are predicted as none "
                                + "(the host dispatches every layer's kernels); the whole forward pass captured in "
                                + "CUDA graphs, as inference engines replay it, would take the step to %.2f ms "
                                + "(%.1f %%)", graphed, 100 * (graphed / total - 1)))
                        : StageCost.Note.assumed(String.format(Locale.ROOT, "the host is assumed to dispatch every "
                                + "layer's kernels (CUDA graphs none); with the whole forward pass captured in CUDA "
                                + "graphs, as inference engines replay it, the step takes %.2f ms (%.1f %%: give "
                                + "--cuda-graphs iteration)", graphed, 100 * (graphed / total - 1))));
            } else if (graphed < (1 - SCHEDULE_NOTE_SHARE) * total) {
                String padded = w.parallelism().expert() > 1 ? " (the experts' tokens padded to a capacity, which "
                        + "this time does not add)" : "";
                all.add(w.cudaGraphs() == CudaGraphs.LAYERS
                        // stated: not an assumption, but how the model reads it, and what the other graphs save
                        ? StageCost.Note.noted(String.format(Locale.ROOT, "CUDA graphs of layers are predicted as none "
                                + "(the host dispatches every layer's kernels); graphs of the whole iteration, Megatron "
                                + "core's full_iteration%s, would take the step to %.2f ms (%.1f %%)", padded, graphed,
                                100 * (graphed / total - 1)))
                        : StageCost.Note.assumed(String.format(Locale.ROOT, "the host is assumed to dispatch every "
                                + "layer's kernels (CUDA graphs none); with the whole iteration captured in CUDA "
                                + "graphs, as Megatron core's full_iteration graphs run it%s, the step takes %.2f ms "
                                + "(%.1f %%: give --cuda-graphs iteration)", padded, graphed,
                                100 * (graphed / total - 1))));
            }
        }
        // what the host adds to the GPUs' time (the breakdown's host dispatch)
        double wait = gpu > 0 ? model.compute(terms) - gpu : 0;
        if (dispatch > gpu) {
            // the GPUs wait for the host: the fitted dispatch time of a Megatron layer step sets the pace
            ExecutionTerm expertTerm = MegatronModel.expertLayerStep(terms);
            double expertStep = terms.value(expertTerm) > 0 ? model.coefficient(expertTerm) : 0;
            String fitted = String.format(Locale.ROOT, "%.2f ms a layer step%s, fitted on Megatron training runs%s",
                    model.coefficient(ExecutionTerm.LAYER_STEP), expertStep > 0 ? String.format(Locale.ROOT,
                            " and %.2f ms more with routed experts", expertStep) : "",
                    w.phase() == Phase.INFER ? ", a third of that in inference" : "");
            all.add(StageCost.Note.noted(expertStep > 0 && wait > 0.05 * total
                    // with routed experts the host waits for the GPUs in every expert layer: the two partly add
                    ? String.format(Locale.ROOT, "the host's kernel dispatch (%.2f ms: %s) is longer than the GPUs' "
                            + "work (%.2f ms), and with routed experts the host also waits for the GPUs in every "
                            + "expert layer (the token dispatcher reads the tokens per expert), so the two partly add: "
                            + "%.2f ms more than the GPUs' time (the breakdown's host dispatch); faster where the job "
                            + "captures CUDA graphs (--cuda-graphs iteration)", dispatch, fitted, gpu, wait)
                    : String.format(Locale.ROOT, "the host's kernel dispatch sets the pace (%.2f ms against the GPUs' "
                            + "%.2f ms: %s); with this little GPU work a layer, the job runs at the framework's "
                            + "dispatch rate, faster where it captures CUDA graphs (--cuda-graphs iteration)", dispatch,
                            gpu, fitted)));
        } else if (terms.value(MegatronModel.expertLayerStep(terms)) > 0 && wait > 0.05 * total) {
            all.add(StageCost.Note.noted(String.format(Locale.ROOT, "the host waits for the GPUs in every layer with "
                    + "routed experts (the token dispatcher reads the tokens per expert), so its dispatch (%.2f ms) adds "
                    + "%.2f ms to the GPUs' %.2f ms (the breakdown's host dispatch), where a dense "
                    + "job's host runs ahead", dispatch, wait, gpu)));
        }
        if (w.phase() == Phase.TRAIN && model.dataBound(terms)) {
            // where the breakdown's exposed share undersells it: the compute hides behind the collectives
            all.add(StageCost.Note.noted(String.format(Locale.ROOT, "the data-parallel traffic sets the step (%s): "
                    + "the compute (%.2f ms) runs behind it and %.2f ms of it stays exposed, so more compute "
                    + "(recomputation, a slower precision) barely moves the step; the network between nodes "
                    + "(--inter-node-gbps) and the data-parallel degree do", w.parallelism().zeroStage() == 3
                    ? "ZeRO-3's parameter gathers and gradient reduce-scatters" : "the gradients' reduction",
                    model.compute(terms), model.dataComm(terms))));
        }
        resolution(given, w, device, !(memory.total() > device.memoryGB() * GIB)).map(StageCost.Note::chosen)
                .ifPresent(all::add);
        hostMemoryNote(w, device, assembly.hostBytes()).ifPresent(all::add);
        storedQuantizationNote(w).map(StageCost.Note::noted).ifPresent(all::add);
        model.biasNote(w).map(StageCost.Note::noted).ifPresent(all::add);
        if (!w.precisionGiven()) {
            // a builder left at its default: FP32 is rarely what a transformer on a GPU runs (the command line's
            // options and tables give the precision and say their own default)
            all.add(StageCost.Note.assumed("no precision given: fp32 assumed (Workload.Builder's default, PyTorch's; "
                    + "no tensor cores): " + (w.phase() == Phase.TRAIN ? "mixed-precision training" : "16-bit "
                    + "inference") + " is Precision.BF16 or FP16 (TF32, FP8, MXFP8, NVFP4 where the GPU has them)"));
        }
        unevenNote(w).map(StageCost.Note::noted).ifPresent(all::add);
        layerCountNotes(w).stream().map(StageCost.Note::unusual).forEach(all::add);
        dispatcherNote(w, topo).map(StageCost.Note::noted).ifPresent(all::add);
        contextNote(w).map(StageCost.Note::unusual).ifPresent(all::add);
        keyValueCacheNote(w, memory.total(), device).map(StageCost.Note::noted).ifPresent(all::add);
        wholeExpertsNote(w).map(StageCost.Note::noted).ifPresent(all::add);
        thinContextNote(w).map(StageCost.Note::unusual).ifPresent(all::add);
        bubbleNote(w).map(StageCost.Note::unusual).ifPresent(all::add);
        zeroNote(w).map(StageCost.Note::unusual).ifPresent(all::add);
        misalignmentNote(w, device, fs).map(StageCost.Note::noted).ifPresent(all::add);
        softmaxFallbackNote(w, fs).map(StageCost.Note::noted).ifPresent(all::add);
        if (w.documentTokens() > 0 && hasUnfusedCore(g)) {
            all.add(StageCost.Note.noted("packed documents shorten a fused attention core's work only: an unfused "
                    + "core computes, masks and keeps the whole score matrix, whatever the documents"));
        }
        if (w.expertImbalance() != 1 && w.parallelism().expert() == 1) {
            all.add(StageCost.Note.noted("expert imbalance " + org.scaledl.io.CsvTable.plain(w.expertImbalance())
                    + " not applied: on one expert rank every GPU holds every expert, and none receives more than its "
                    + "share"));
        }
        int t = w.parallelism().tensor();
        int inDomain = Math.max(topo.gpusPerNode(), topo.nvlinkDomain());
        if (t > inDomain) {
            all.add(StageCost.Note.unusual(String.format(Locale.ROOT, "tensor parallelism %d spans %d %s of %d GPUs: "
                    + "its collectives, on the critical path of every layer, cross the network (Megatron keeps a "
                    + "tensor-parallel group inside a node or NVLink domain)", t, (t + inDomain - 1) / inDomain,
                    topo.nvlinkDomain() > topo.gpusPerNode() ? "NVLink domains" : "nodes", inDomain)));
        } else if (ranksPerNode(t, inDomain, w.parallelism().ranks()) < t) {
            all.add(StageCost.Note.unusual(String.format(Locale.ROOT, "tensor-parallel groups of %d do not tile %s of "
                    + "%d GPUs: with the ranks in order, a group straddles two, its collectives, on the critical path "
                    + "of every layer, cross the network, and the slowest group sets the pace (Megatron's tensor "
                    + "parallelism divides the GPUs of a node)", t, topo.nvlinkDomain() > topo.gpusPerNode()
                    ? "NVLink domains" : "nodes", inDomain)));
        }
        int tc = t * w.parallelism().context();
        if (w.parallelism().context() > 1 && tc <= inDomain
                && ranksPerNode(tc, inDomain, w.parallelism().ranks()) < tc) {
            all.add(StageCost.Note.unusual(String.format(Locale.ROOT, "context-parallel groups of %d GPUs (tensor x "
                    + "context) do not tile %s of %d: with the ranks in order, one of the job's straddles two, its "
                    + "exchange of keys and values, every layer's, crosses the network, and the slowest group sets the "
                    + "pace (a job placed in whole groups, e.g. %d GPUs of each %s, keeps them inside)", tc,
                    topo.nvlinkDomain() > topo.gpusPerNode() ? "NVLink domains" : "nodes", inDomain,
                    inDomain / tc * tc, topo.nvlinkDomain() > topo.gpusPerNode() ? "rack" : "node")));
        }
        long experts = (long) w.parallelism().expert() * w.parallelism().expertTensor();
        if (experts > 1 && experts <= inDomain && inDomain % experts != 0 && w.parallelism().ranks() > inDomain) {
            all.add(StageCost.Note.noted(String.format(Locale.ROOT, "expert-parallel groups of %d GPUs do not tile %s "
                    + "of %d: with the ranks in order some group straddles two and its all-to-all crosses the network; "
                    + "predicted as if every group lay inside one, as a job placed in whole groups runs (e.g. %d GPUs "
                    + "of each %s)", experts, topo.nvlinkDomain() > topo.gpusPerNode() ? "NVLink domains" : "nodes",
                    inDomain, inDomain / experts * experts, topo.nvlinkDomain() > topo.gpusPerNode() ? "rack"
                            : "node")));
        }
        return StageCost.withTotal(perLayer, families, out, total).withMemory(memory.total(),
                memory.parts(w.parallelism().pipeline(), w.phase() == Phase.TRAIN), all);
    }

    private static double calibrated(MegatronModel model, MegatronTerms terms, ExecutionTerm term) {
        return model.coefficient(term) * terms.value(term);
    }

    private static void add(List<StageCost.Term> out, String name, StageCost.TermKind kind, double ms) {
        if (ms > 0) {
            out.add(new StageCost.Term(name, kind, ms));
        }
    }
}
